//! A passed native CUDA check, remembered for a while.
//!
//! Creating a CUDA context costs ~0.3 s on an H200 (`cuInit` and the primary context; the
//! driver's teardown at exit comes on top), while everything else a whole-host plan reads costs
//! ~50 ms. A node checked every few minutes from cron, Slurm or a DaemonSet need not pay for a
//! context each time: a **passed** check is written to `STATE_DIR/cache/cuda-check.json` and
//! reused while it is younger than `--cuda-check-max-age` (default 10 minutes) *and* the machine
//! is the same as when it ran: the same boot (`/proc/sys/kernel/random/boot_id`), the same driver
//! (`/proc/driver/nvidia/version`), the same `/dev/nvidia*` nodes and the same
//! `CUDA_VISIBLE_DEVICES`. A failed, timed-out or partial check is never remembered, so a
//! broken node is re-checked on every run and a repaired one is seen at once. The output says
//! when a verdict comes from the cache (`cached_age_s`).
//!
//! The file is read only when it and every directory above it are trusted (owned by root or
//! the invoking user, not group- or world-writable: [`crate::trust::check`]) and under 64 KiB;
//! anything else is ignored and the check runs. Writing it is best-effort: a read-only or missing
//! state directory (a laptop, a read-only hostPath) just means no cache.

use super::Host;
use super::cuda_check::CudaCheck;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The default for `--cuda-check-max-age`.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(600);
const MAX_FILE_BYTES: u64 = 64 * 1024;
const VERSION: u32 = 1;

/// Where a passed check is remembered, and for how long.
#[derive(Debug, Clone)]
pub struct CudaCache {
    pub path: PathBuf,
    pub max_age: Duration,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    version: u32,
    /// What the machine looked like when the check ran ([`machine_key`]).
    key: String,
    /// Seconds since the epoch when the check ran.
    checked_at: f64,
    check: CudaCheck,
}

/// What must be unchanged for a remembered check to stand: boot, driver, device nodes and the
/// GPUs this process may see. `None` when the boot id cannot be read (no cache then).
pub fn machine_key(host: &dyn Host) -> Option<String> {
    let boot = host.read_file("/proc/sys/kernel/random/boot_id").ok()?;
    let boot = String::from_utf8_lossy(&boot).trim().to_string();
    if boot.is_empty() {
        return None;
    }
    let driver = host
        .read_file("/proc/driver/nvidia/version")
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let mut nodes: Vec<String> = host
        .read_dir("/dev")
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with("nvidia"))
        .collect();
    nodes.sort();
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "<unset>".into());
    Some(format!(
        "boot={boot}\ndriver={driver}\nnodes={}\nCUDA_VISIBLE_DEVICES={visible}",
        nodes.join(",")
    ))
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl CudaCache {
    /// The cache file in a state directory.
    pub fn in_state_dir(state_dir: &Path, max_age: Duration) -> CudaCache {
        CudaCache {
            path: state_dir.join("cache").join("cuda-check.json"),
            max_age,
        }
    }

    /// A remembered passed check for this `key`, younger than `max_age`, with `cached_age_s` set.
    pub fn load(&self, key: &str) -> Option<CudaCheck> {
        self.load_at(key, now_s())
    }

    fn load_at(&self, key: &str, now: f64) -> Option<CudaCheck> {
        if self.max_age.is_zero() {
            return None;
        }
        let meta = std::fs::symlink_metadata(&self.path).ok()?;
        if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
            return None;
        }
        let f = crate::trust::open_trusted(&self.path, "CUDA check cache").ok()?;
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_FILE_BYTES + 1), &mut raw)
            .ok()?;
        if raw.len() as u64 > MAX_FILE_BYTES {
            return None;
        }
        let e: Entry = serde_json::from_slice(&raw).ok()?;
        let age = now - e.checked_at;
        let fresh = age.is_finite() && age >= 0.0 && age <= self.max_age.as_secs_f64();
        if e.version != VERSION || e.key != key || !fresh || !e.check.ok || e.check.timed_out {
            return None;
        }
        let mut c = e.check;
        c.cached_age_s = Some((age * 10.0).round() / 10.0);
        Some(c)
    }

    /// Remember `check` if it passed (best-effort: errors are ignored).
    pub fn store(&self, key: &str, check: &CudaCheck) {
        if self.max_age.is_zero() || !check.ok || check.timed_out || check.cached_age_s.is_some() {
            return;
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let e = Entry {
            version: VERSION,
            key: key.to_string(),
            checked_at: now_s(),
            check: check.clone(),
        };
        if let Ok(body) = serde_json::to_vec_pretty(&e) {
            let _ = crate::safe_write::write_atomic(&self.path, &body, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn passed() -> CudaCheck {
        CudaCheck {
            ok: true,
            driver_api_version: Some(13000),
            device_count: Some(1),
            devices: Vec::new(),
            error: None,
            error_name: None,
            init_ms: Some(250.0),
            timed_out: false,
            ms: 300.0,
            cached_age_s: None,
        }
    }

    fn cache(d: &Path) -> CudaCache {
        CudaCache::in_state_dir(d, Duration::from_secs(600))
    }

    #[test]
    fn a_passed_check_is_reused_for_the_same_machine_only_and_only_while_young() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        assert!(c.load("k1").is_none(), "nothing remembered yet");
        c.store("k1", &passed());
        let hit = c.load("k1").expect("remembered");
        assert!(hit.ok);
        assert!(hit.cached_age_s.unwrap() < 5.0);
        assert!(c.load("k2").is_none(), "another boot or driver");
        assert!(c.load_at("k1", now_s() + 601.0).is_none(), "too old");
        assert!(c.load_at("k1", now_s() - 60.0).is_none(), "from the future");
        let off = CudaCache::in_state_dir(d.path(), Duration::ZERO);
        assert!(
            off.load("k1").is_none(),
            "--cuda-check-max-age 0 turns it off"
        );
    }

    #[test]
    fn a_failed_or_timed_out_check_is_never_remembered() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        let mut f = passed();
        f.ok = false;
        f.error = Some("cuInit failed: CUDA_ERROR_NO_DEVICE".into());
        c.store("k", &f);
        assert!(!c.path.exists());
        let mut t = passed();
        t.timed_out = true;
        c.store("k", &t);
        assert!(!c.path.exists());
    }

    #[test]
    fn a_cache_file_anybody_could_write_or_that_is_not_ours_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        c.store("k", &passed());
        assert!(c.load("k").is_some());
        std::fs::set_permissions(&c.path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(c.load("k").is_none(), "world-writable: ignored");
        std::fs::set_permissions(&c.path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // garbage, a foreign field, a failed check written by hand: all ignored
        for body in [
            "not json".to_string(),
            r#"{"version":1,"key":"k","checked_at":1e18,"check":{"ok":true,"ms":1},"extra":1}"#
                .to_string(),
            format!(
                r#"{{"version":1,"key":"k","checked_at":{},"check":{{"ok":false,"ms":1}}}}"#,
                now_s()
            ),
        ] {
            std::fs::write(&c.path, body).unwrap();
            assert!(c.load("k").is_none());
        }
        std::fs::write(&c.path, vec![b' '; 70 * 1024]).unwrap();
        assert!(c.load("k").is_none(), "oversized: ignored");
    }
}
