//! Prometheus text exposition for node_exporter's textfile collector
//! (`gpufix audit --format prometheus --output /var/lib/node_exporter/textfile/gpufix.prom`).
//!
//! Lean by design (a fleet scrapes this from every node, next to dcgm-exporter's ~240 series for
//! 8 GPUs): per rule, one `gpufix_rule_info{rule,layer,severity} 1` carries the rule's fixed
//! attributes and one `gpufix_rule_verdict{rule,verdict} 1` its current verdict, so a node with
//! 42 rules exports 84 rule series, not 6 per rule with the attributes repeated. Alerts join the
//! two on `rule`:
//!
//! ```text
//! gpufix_rule_verdict{verdict="fail"}
//!   * on (instance, rule) group_left (layer, severity) gpufix_rule_info{severity="critical"}
//! ```
//!
//! When a verdict changes the old `verdict` label is no longer written and Prometheus marks that
//! series stale at the next scrape; `gpufix_rule_info` never vanishes, so `absent()` is not
//! needed to tell a missing rule from a passing one.
//!
//! Opt-in (`--per-gpu`), for joining with dcgm-exporter on its `gpu` and `UUID` labels:
//! `gpufix_gpu_rule_failing{rule,gpu,UUID} 1` for each GPU a per-GPU rule fails on.
//!
//! Journal state, where the audit was given the state directory: the number of apply runs by
//! status (an `interrupted` run left changes half-made: `gpufix rollback` it), and the last run's
//! start time and status.
//!
//! No sample carries a timestamp: node_exporter rejects textfiles that do. The file is written
//! with [`write_textfile_atomic`] so the collector never reads half of it.

use crate::journal::{RunInfo, RunStatus};
use crate::report::{Report, Verdict};
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write as _};
use std::path::Path;
use std::time::Duration;

/// What the textfile holds besides the report.
#[derive(Debug, Default, Clone, Copy)]
pub struct Extras<'a> {
    /// How long the audit took, when the caller timed it.
    pub duration: Option<Duration>,
    /// Also export `gpufix_gpu_rule_failing{rule,gpu,UUID}`.
    pub per_gpu: bool,
    /// Apply runs from the journal (oldest first), when the state directory was read.
    pub runs: Option<&'a [RunInfo]>,
}

/// Statuses an apply run can end in (`gpufix history`), each always exported.
pub const RUN_STATUSES: [RunStatus; 4] = [
    RunStatus::Applied,
    RunStatus::RolledBack,
    RunStatus::Failed,
    RunStatus::Interrupted,
];

/// Renders the report's metrics.
pub fn render(report: &Report, extras: &Extras) -> String {
    let mut out = String::new();

    metric(
        &mut out,
        "gpufix_info",
        "Version of gpufix that wrote this file.",
    );
    let _ = writeln!(
        out,
        "gpufix_info{{version=\"{}\"}} 1",
        label(&report.gpufix_version)
    );

    metric(
        &mut out,
        "gpufix_rule_info",
        "Each rule evaluated, with its layer and severity; always 1. Join on `rule`.",
    );
    for r in &report.results {
        let _ = writeln!(
            out,
            "gpufix_rule_info{{rule=\"{}\",layer=\"{}\",severity=\"{}\"}} 1",
            label(&r.id),
            label(&r.layer),
            r.severity.as_str(),
        );
    }

    metric(
        &mut out,
        "gpufix_rule_verdict",
        "Current verdict of each rule (pass, fail, unknown, blocked, not-applicable, waived); always 1.",
    );
    for r in &report.results {
        let _ = writeln!(
            out,
            "gpufix_rule_verdict{{rule=\"{}\",verdict=\"{}\"}} 1",
            label(&r.id),
            r.verdict.as_str(),
        );
    }

    if extras.per_gpu {
        metric(
            &mut out,
            "gpufix_gpu_rule_failing",
            "A per-GPU rule failing on this GPU; `gpu` and `UUID` as dcgm-exporter labels them.",
        );
        for r in report.results.iter().filter(|r| r.verdict == Verdict::Fail) {
            for g in &r.gpus {
                let _ = writeln!(
                    out,
                    "gpufix_gpu_rule_failing{{rule=\"{}\",gpu=\"{}\",UUID=\"{}\"}} 1",
                    label(&r.id),
                    g.index,
                    label(g.uuid.as_deref().unwrap_or("")),
                );
            }
        }
    }

    metric(&mut out, "gpufix_rules", "Number of rules per verdict.");
    for v in Verdict::ALL {
        let _ = writeln!(
            out,
            "gpufix_rules{{verdict=\"{}\"}} {}",
            v.as_str(),
            report.count(v)
        );
    }

    metric(
        &mut out,
        "gpufix_planned_changes",
        "Number of changes `gpufix apply` would make.",
    );
    let _ = writeln!(out, "gpufix_planned_changes {}", report.changes.len());

    if let Some(runs) = extras.runs {
        metric(
            &mut out,
            "gpufix_apply_runs",
            "Apply runs in the journal by status; an interrupted run left changes half-made (`gpufix rollback RUN`).",
        );
        for st in RUN_STATUSES {
            let n = runs.iter().filter(|r| r.status == st).count();
            let _ = writeln!(out, "gpufix_apply_runs{{status=\"{}\"}} {n}", st.as_str());
        }
        if let Some(last) = runs.last() {
            if let Some(ts) = unix_seconds(&last.started_at) {
                metric(
                    &mut out,
                    "gpufix_last_apply_timestamp_seconds",
                    "Unix time the last apply run started.",
                );
                let _ = writeln!(out, "gpufix_last_apply_timestamp_seconds {}", float(ts));
            }
            metric(
                &mut out,
                "gpufix_last_apply_status",
                "Status of the last apply run: 1 for its status, 0 for the others.",
            );
            for st in RUN_STATUSES {
                let _ = writeln!(
                    out,
                    "gpufix_last_apply_status{{status=\"{}\"}} {}",
                    st.as_str(),
                    u8::from(last.status == st)
                );
            }
        }
    }

    // The report's own clock, so a stale file is visible: `time() - gpufix_audit_timestamp_seconds`.
    if let Some(ts) = unix_seconds(&report.generated_at) {
        metric(
            &mut out,
            "gpufix_audit_timestamp_seconds",
            "Unix time the audit was made.",
        );
        let _ = writeln!(out, "gpufix_audit_timestamp_seconds {}", float(ts));
    }
    if let Some(d) = extras.duration {
        metric(
            &mut out,
            "gpufix_audit_duration_seconds",
            "Seconds the audit took.",
        );
        let _ = writeln!(
            out,
            "gpufix_audit_duration_seconds {}",
            float(d.as_secs_f64())
        );
    }
    out
}

fn unix_seconds(rfc3339: &str) -> Option<f64> {
    rfc3339
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|ts| ts.as_millisecond() as f64 / 1000.0)
}

/// Every metric here is a gauge: each file is a fresh snapshot, nothing accumulates.
fn metric(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {}", help_text(help));
    let _ = writeln!(out, "# TYPE {name} gauge");
}

/// Label values escape backslash, double quote and line feed (exposition format 0.0.4).
pub fn label(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// HELP text escapes only backslash and line feed.
fn help_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

fn float(x: f64) -> String {
    // `{}` prints the shortest form that round-trips, never exponent notation Go cannot parse.
    format!("{x}")
}

/// Writes `content` to `path` so that a reader sees either the old file or the new one, never a
/// mix: a temporary file in the same directory (hidden and not ending in `.prom`, so the
/// collector skips it), fsync, rename over `path`, fsync of the directory. Mode 0644, since
/// node_exporter usually runs as another user.
pub fn write_textfile_atomic(path: &Path, content: &str) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` does not name a file", path.display()),
        )
    })?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    // A leftover from a crashed run with the same pid would make `create_new` fail forever.
    let _ = fs::remove_file(&tmp);
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(content.as_bytes())?;
        f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
