//! Where a run's time goes (`plan --timings`, and `timings` in the JSON report): the phases of
//! the run, each probe's wall time, and what each probe waited on (commands, NVML, the CUDA
//! check, file reads). The engine measures them by wrapping the host a probe sees in a
//! `TimedHost` (engine/timing.rs); the report carries them, so they sit below both.
//!
//! Probes run concurrently, so the run waits on the slowest one: `waited_on` names it.

use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Timings {
    /// Wall time of the whole run so far, in milliseconds.
    pub total_ms: f64,
    /// The run's phases in order (`host and inputs`, `load playbooks`, `observe`, ...).
    pub phases: Vec<Phase>,
    /// Every probe instance, slowest first.
    pub probes: Vec<ProbeTiming>,
    /// The probe the observe phase waited on (the last to finish), with its time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_on: Option<String>,
    /// Peak resident memory of the process so far (VmHWM), in KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
}

impl Timings {
    /// Put the whole run around the engine's phases: opening the session before, planning the
    /// fixes after, all measured from the start of the command.
    pub fn add_run_phases(&mut self, opened: Duration, evaluated: Duration, total: Duration) {
        let engine: f64 = self.phases.iter().map(|p| p.ms).sum();
        let mut phases = vec![Phase {
            name: "open the session (host, inputs, playbooks)".into(),
            ms: ms(opened),
        }];
        phases.append(&mut self.phases);
        let other = ms(evaluated.saturating_sub(opened)) - engine;
        if other >= 0.1 {
            phases.push(Phase {
                name: "engine set-up (ordering, parameters)".into(),
                ms: (other * 10.0).round() / 10.0,
            });
        }
        phases.push(Phase {
            name: "plan the fixes".into(),
            ms: ms(total.saturating_sub(evaluated)),
        });
        self.phases = phases;
        self.total_ms = ms(total);
        self.peak_rss_kib = peak_rss_kib();
    }
}

/// VmHWM of this process, from /proc/self/status.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phase {
    pub name: String,
    pub ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeTiming {
    /// The probe kind and its parameters, as rules share it.
    pub probe: String,
    /// Start, relative to the start of the observe phase, in milliseconds.
    pub start_ms: f64,
    /// Wall time until it answered (or the deadline passed), in milliseconds.
    pub ms: f64,
    /// It did not answer within its deadline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// What it waited on, longest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Wait>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Wait {
    /// `command nvcc --version`, `NVML reading`, `CUDA check`, `file reads`, `sleep`, ...
    pub what: String,
    pub calls: u32,
    pub ms: f64,
}

pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The timings as text: phases, then probes slowest first with what each waited on.
pub fn render(t: &Timings) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = write!(s, "timings ({:.1} ms in all", t.total_ms);
    if let Some(k) = t.peak_rss_kib {
        let _ = write!(s, ", peak memory {:.1} MiB", k as f64 / 1024.0);
    }
    let _ = writeln!(s, ")");
    for p in &t.phases {
        let _ = writeln!(s, "  {:>9.1} ms  {}", p.ms, p.name);
    }
    if let Some(w) = &t.waited_on {
        let _ = writeln!(s, "  observe waited on {w}");
    }
    let _ = writeln!(s, "probes (concurrent; slowest first)");
    for p in &t.probes {
        let _ = writeln!(
            s,
            "  {:>9.1} ms  {}{}",
            p.ms,
            p.probe,
            if p.timed_out { "  (timed out)" } else { "" }
        );
        for w in p.waits.iter().filter(|w| w.ms >= 0.1) {
            let _ = writeln!(
                s,
                "  {:>9}     {:>7.1} ms  {} ({} call{})",
                "",
                w.ms,
                w.what,
                w.calls,
                if w.calls == 1 { "" } else { "s" }
            );
        }
    }
    s
}
