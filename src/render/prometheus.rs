//! Prometheus text exposition for node_exporter's textfile collector
//! (`gpufix audit --format prometheus --output /var/lib/node_exporter/textfile/gpufix.prom`).
//!
//! A rule's verdict is an enum, exported the way Prometheus client libraries export enums: one
//! series per possible state with the state as a label, 1 for the current state and 0 for the
//! others (`gpufix_rule_verdict{rule,layer,severity,verdict}`). Every state is always present,
//! so a series never vanishes when a verdict changes and `== 1` selects the current one; alerts
//! read `gpufix_rule_verdict{verdict="fail",severity="critical"} == 1`. No sample carries a
//! timestamp: node_exporter rejects textfiles that do.
//!
//! The file is written with [`write_textfile_atomic`] so the collector never reads half of it.

use crate::report::{Report, Verdict};
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write as _};
use std::path::Path;
use std::time::Duration;

/// Renders the report's metrics. `duration` is how long the audit took, when the caller timed it.
pub fn render(report: &Report, duration: Option<Duration>) -> String {
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
        "gpufix_rule_verdict",
        "Verdict of each rule: 1 for the current verdict, 0 for the other five.",
    );
    for r in &report.results {
        for v in Verdict::ALL {
            let _ = writeln!(
                out,
                "gpufix_rule_verdict{{rule=\"{}\",layer=\"{}\",severity=\"{}\",verdict=\"{}\"}} {}",
                label(&r.id),
                label(&r.layer),
                r.severity.as_str(),
                v.as_str(),
                u8::from(r.verdict == v),
            );
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

    // The report's own clock, so a stale file is visible: `time() - gpufix_audit_timestamp_seconds`.
    if let Ok(ts) = report.generated_at.parse::<jiff::Timestamp>() {
        metric(
            &mut out,
            "gpufix_audit_timestamp_seconds",
            "Unix time the audit was made.",
        );
        let _ = writeln!(
            out,
            "gpufix_audit_timestamp_seconds {}",
            float(ts.as_millisecond() as f64 / 1000.0)
        );
    }
    if let Some(d) = duration {
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
