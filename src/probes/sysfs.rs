//! `sysfs`: one value under `/sys` or `/proc/sys` (CPU governor, THP mode, block scheduler,
//! read-ahead, sysctls). Other paths are refused: use the `file` probe for them.

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::{Map, Value, json};

pub struct Sysfs;

/// Why a path is not one this probe reads, if it is not.
pub fn sysfs_path_problem(path: &str) -> Option<String> {
    if path.contains("{{") {
        return None; // a template; checked again after rendering
    }
    if !(path.starts_with("/sys/") || path.starts_with("/proc/sys/")) {
        return Some(format!(
            "probe parameter `path` of `sysfs` must be under /sys or /proc/sys, found `{path}`"
        ));
    }
    if path.split('/').any(|c| c == "..") {
        return Some(format!(
            "probe parameter `path` of `sysfs` must not contain `..`, found `{path}`"
        ));
    }
    if path.contains(['*', '?', '[']) {
        return Some(format!(
            "probe parameter `path` of `sysfs` takes no glob patterns, found `{path}`"
        ));
    }
    None
}

/// The bracketed choice in `always [madvise] never` style files.
pub fn selected_word(value: &str) -> Option<String> {
    let start = value.find('[')?;
    let end = value[start..].find(']')? + start;
    Some(value[start + 1..end].to_string())
}

/// Parameters of the `sysfs` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SysfsParams {
    /// Absolute path under /sys or /proc/sys, no globs.
    pub path: String,
}

impl Probe for Sysfs {
    type Params = SysfsParams;
    fn name(&self) -> &'static str {
        "sysfs"
    }
    fn doc(&self) -> &'static str {
        "One value from a file under /sys or /proc/sys."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("path", "the path read"),
            ("value", "its content, trimmed"),
            ("number", "the value as a number, when it is one"),
            (
                "selected",
                "for `a [b] c` choice files (scheduler, THP): the bracketed word",
            ),
        ]
    }
    fn check(&self, params: &SysfsParams) -> Vec<String> {
        sysfs_path_problem(&params.path).into_iter().collect()
    }
    fn run(&self, params: &SysfsParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let path = params.path.as_str();
        if let Some(p) = sysfs_path_problem(path) {
            return ProbeOutcome::Unknown(p);
        }
        let raw = match ctx.host.read_file(path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => return ProbeOutcome::Unknown(format!("cannot read `{path}`: {e}")),
        };
        let value = raw.trim().to_string();
        let mut out = Map::new();
        out.insert("path".into(), json!(path));
        if let Ok(i) = value.parse::<i64>() {
            out.insert("number".into(), json!(i));
        } else if let Ok(f) = value.parse::<f64>() {
            if f.is_finite() {
                out.insert("number".into(), json!(f));
            }
        }
        if let Some(s) = selected_word(&value) {
            out.insert("selected".into(), json!(s));
        }
        out.insert("value".into(), json!(value));
        ProbeOutcome::Value(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, check_params, run_with, value_of};
    use std::time::Duration;

    fn run(h: &SnapshotHost, path: &str) -> ProbeOutcome {
        run_with(
            &Sysfs,
            h,
            json!({ "path": path }),
            &Inputs::default(),
            Duration::ZERO,
        )
    }

    #[test]
    fn reads_numbers_and_bracketed_choices() {
        let mut h = SnapshotHost::empty();
        h.set_file(
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "always [madvise] never\n",
        );
        h.set_file("/sys/block/vda/queue/read_ahead_kb", "8192\n");
        let v = value_of(run(&h, "/sys/kernel/mm/transparent_hugepage/enabled"));
        assert_eq!(v["selected"], json!("madvise"));
        assert_eq!(v["value"], json!("always [madvise] never"));
        assert!(v.get("number").is_none());
        let v = value_of(run(&h, "/sys/block/vda/queue/read_ahead_kb"));
        assert_eq!(v["number"], json!(8192));
    }

    #[test]
    fn missing_file_is_unknown_naming_the_path() {
        let out = run(
            &SnapshotHost::empty(),
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        );
        assert_eq!(
            out,
            ProbeOutcome::Unknown(
                "cannot read `/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor`: not in the snapshot".into()
            )
        );
    }

    #[test]
    fn paths_outside_sys_are_refused() {
        for (p, want) in [
            ("/etc/passwd", "must be under /sys or /proc/sys"),
            ("/sys/../etc/passwd", "must not contain `..`"),
            ("/sys/block/*/queue/scheduler", "no glob"),
        ] {
            let params = json!({ "path": p });
            let errs = check_params(&Sysfs, params.as_object().unwrap());
            assert_eq!(errs.len(), 1, "{p}");
            assert!(errs[0].contains(want), "{}", errs[0]);
        }
    }
}
