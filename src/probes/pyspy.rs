//! Where a training process's main thread spends its time, from `py-spy dump` taken every
//! quarter second over the sampling window (py-spy is a pip package: `pip install py-spy`).
//! It reads the target's memory with ptrace, so it needs root or CAP_SYS_PTRACE (in a
//! container: `--cap-add SYS_PTRACE`) and a `kernel.yama.ptrace_scope` that allows it.
//! Without it the fields say so and how to get it; nothing else changes.
//!
//! A sample of the main thread is classed by its frames: in DataLoader `__next__` (waiting
//! for a batch), in a host sync (its innermost Python frame is a line of the training script
//! that calls `.item()`, `.cpu()`, `.tolist()`, `.numpy()` or `synchronize`), in backward or
//! the optimizer, or in a host-to-device copy. A `_pin_memory_loop` thread shows
//! `pin_memory=True` at work.

use crate::host::Host;
use serde_json::{Value, json};
use std::time::Duration;

const PERIOD: Duration = Duration::from_millis(250);
const HINT: &str = "py-spy is not installed: `pip install py-spy` (needs root or CAP_SYS_PTRACE) would add where the main thread spends its time (DataLoader wait, host syncs, backward)";

/// py-spy runs as root (it reads the job's memory with ptrace), so it is taken only from a
/// place the trust check of playbooks accepts ([`crate::trust::check`]: owned by root or the
/// invoking user, nothing above it writable by others): `GPUFIX_PYSPY`, else the first trusted
/// `py-spy` on gpufix's own PATH (never the job's) or in the usual directories. `Err` says why
/// a py-spy that exists was refused.
fn find_pyspy(host: &dyn Host) -> Result<Option<String>, String> {
    if !host.is_live() {
        // a recorded host answers the commands it recorded
        return Ok(Some("py-spy".into()));
    }
    if let Ok(p) = std::env::var("GPUFIX_PYSPY")
        && !p.is_empty()
    {
        if !p.starts_with('/') {
            return Err(format!(
                "refusing GPUFIX_PYSPY `{p}`: give an absolute path (py-spy runs as root)"
            ));
        }
        return crate::trust::check(std::path::Path::new(&p), "py-spy (GPUFIX_PYSPY)")
            .map(|()| Some(p))
            .map_err(|e| e.lines().next().unwrap_or("").to_string());
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let mut refused = None;
    for p in path
        .split(':')
        .filter(|d| d.starts_with('/'))
        .chain(["/usr/local/bin", "/usr/bin", "/opt/conda/bin"])
        .map(|d| format!("{}/py-spy", d.trim_end_matches('/')))
        .filter(|p| std::path::Path::new(p).is_file())
    {
        match crate::trust::check(std::path::Path::new(&p), "py-spy") {
            Ok(()) => return Ok(Some(p)),
            Err(e) => {
                refused.get_or_insert(e.lines().next().unwrap_or("").to_string());
            }
        }
    }
    match refused {
        Some(e) => Err(e),
        None => Ok(None),
    }
}

/// One dump's main thread, innermost frame first: (function, file, line).
pub fn main_thread(dump: &str, pid: u32) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    let mut in_main = false;
    for l in dump.lines() {
        if l.starts_with("Thread ") {
            in_main = l.contains("\"MainThread\"")
                || l.starts_with(&format!("Thread {pid} "))
                || l.starts_with(&format!("Thread 0x{pid:x} "));
            if !out.is_empty() {
                break;
            }
            continue;
        }
        if !in_main {
            continue;
        }
        let t = l.trim();
        // `func (file.py:123)`
        if let Some((func, rest)) = t.rsplit_once(" (")
            && let Some((file, line)) = rest.trim_end_matches(')').rsplit_once(':')
        {
            out.push((
                func.to_string(),
                file.to_string(),
                line.parse().unwrap_or(0),
            ));
        }
    }
    out
}

/// The class of one main-thread sample.
pub fn classify(
    frames: &[(String, String, u32)],
    script_line: &dyn Fn(&str, u32) -> Option<String>,
) -> &'static str {
    if frames
        .iter()
        .any(|(f, file, _)| f.contains("__next__") && file.contains("dataloader"))
    {
        return "dataloader";
    }
    if let Some((_, file, line)) = frames.first()
        && let Some(src) = script_line(file, *line)
    {
        let s = src.replace(' ', "");
        if [".item()", ".cpu()", ".tolist()", ".numpy()", "synchronize("]
            .iter()
            .any(|k| s.contains(k))
        {
            return "host_sync";
        }
        if s.contains(".to(") || s.contains(".cuda(") {
            return "copy";
        }
    }
    if frames.iter().any(|(f, file, _)| {
        f.contains("backward") || file.contains("torch/optim") || f.contains("zero_grad")
    }) {
        return "backward_optimizer";
    }
    "other"
}

/// Sample over `window` (at least one dump); returns the `pyspy` field of the process probe.
pub fn sample(
    host: &dyn Host,
    pid: u32,
    window: Duration,
    argv: &[String],
    tick: &mut dyn FnMut(),
) -> Value {
    let found = find_pyspy(host);
    let Ok(Some(bin)) = found else {
        // still tick over the window (GPU readings)
        let n = ((window.as_secs_f64() / PERIOD.as_secs_f64()).floor() as usize).max(1);
        for _ in 0..n {
            tick();
            host.sleep(window / n as u32);
        }
        tick();
        return match found {
            Err(why) => json!({"available": false, "error": why}),
            _ => json!({"available": false, "hint": HINT}),
        };
    };
    let cwd = host
        .read_link(&format!("/proc/{pid}/cwd"))
        .unwrap_or_else(|_| "/".into());
    let script = crate::formats::launcher::parse(argv)
        .and_then(|l| l.script)
        .map(|s| {
            if s.starts_with('/') {
                s
            } else {
                format!("{}/{}", cwd.trim_end_matches('/'), s)
            }
        });
    // the job's own script: read with its owner's authority, like every file a job names
    let script_text = script
        .as_ref()
        .and_then(|p| {
            host.read_job_file(pid, p, crate::probes::config_sources::MAX_TEXT)
                .ok()
        })
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let script_base = script
        .as_ref()
        .and_then(|p| p.rsplit('/').next().map(str::to_string));
    let script_line = |file: &str, line: u32| -> Option<String> {
        let base = file.rsplit('/').next()?;
        if Some(base) != script_base.as_deref() {
            return None;
        }
        script_text
            .as_ref()?
            .lines()
            .nth(line.checked_sub(1)? as usize)
            .map(str::to_string)
    };
    let argv_run = vec![bin.clone(), "dump".into(), "--pid".into(), pid.to_string()];
    let n = ((window.as_secs_f64() / PERIOD.as_secs_f64()).floor() as usize).clamp(1, 40);
    let start = host.now();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    let mut samples = 0;
    let mut pin_thread = false;
    let mut error = None;
    for i in 0..n {
        tick();
        if error.is_some() {
            // py-spy failed: keep the window's GPU readings going
            host.sleep(window / n as u32);
            continue;
        }
        match host.run(&argv_run, Duration::from_secs(5)) {
            Ok(o) if o.status == Some(0) => {
                pin_thread |= o.stdout.contains("_pin_memory_loop");
                let frames = main_thread(&o.stdout, pid);
                if !frames.is_empty() {
                    samples += 1;
                    *counts.entry(classify(&frames, &script_line)).or_default() += 1;
                }
            }
            Ok(o) => {
                error = Some(format!(
                    "py-spy exit {:?}: {}",
                    o.status,
                    o.stderr.lines().last().unwrap_or("").trim()
                ));
            }
            Err(e) => {
                error = Some(format!("cannot run {bin}: {e}"));
            }
        }
        // spread the dumps over the window
        if host.is_live() {
            let due = start + PERIOD.as_secs_f64() * (i + 1) as f64;
            let now = host.now();
            if due > now {
                host.sleep(Duration::from_secs_f64(due - now));
            }
        }
    }
    tick();
    if host.is_live() {
        let left = window.as_secs_f64() - (host.now() - start);
        if left > 0.0 {
            host.sleep(Duration::from_secs_f64(left));
        }
    }
    if samples == 0 {
        return json!({"available": false, "hint": error.map_or(HINT.to_string(), |e| format!("{e} (py-spy needs root or CAP_SYS_PTRACE)"))});
    }
    let share = |k: &str| {
        (counts.get(k).copied().unwrap_or(0) as f64 / samples as f64 * 1000.0).round() / 1000.0
    };
    json!({
        "available": true,
        "samples": samples,
        "dataloader_share": share("dataloader"),
        "host_sync_share": share("host_sync"),
        "backward_optimizer_share": share("backward_optimizer"),
        "copy_share": share("copy"),
        "other_share": share("other"),
        "pin_memory_thread": pin_thread,
    })
}
