//! Nagios plugin output (`gpufix audit --format nagios`), also read by Icinga, Naemon, Sensu and
//! Zabbix's Nagios compatibility: one status line with performance data, then one line per
//! finding as long output, and the plugin exit code.
//!
//! States, first match wins:
//! - UNKNOWN (3): the report could not be made ([`render_error`]), it holds no rules, or no rule
//!   could be evaluated (every rule that was not skipped is unknown or blocked).
//! - CRITICAL (2): a rule of severity `critical` fails.
//! - WARNING (1): any other finding: a failing warning or info rule, an unknown or blocked rule.
//! - OK (0): no findings (passing, not-applicable and waived rules only).

use crate::render::findings_by_urgency;
use crate::report::{Report, RuleResult, Severity, Verdict};
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Ok,
    Warning,
    Critical,
    Unknown,
}

impl State {
    /// The plugin exit code.
    pub fn code(self) -> i32 {
        match self {
            State::Ok => 0,
            State::Warning => 1,
            State::Critical => 2,
            State::Unknown => 3,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            State::Ok => "OK",
            State::Warning => "WARNING",
            State::Critical => "CRITICAL",
            State::Unknown => "UNKNOWN",
        }
    }
}

/// The Nagios state a report maps to (see the module doc).
pub fn state(report: &Report) -> State {
    let results = &report.results;
    if results.is_empty() {
        return State::Unknown;
    }
    let critical_fail = results
        .iter()
        .any(|r| r.verdict == Verdict::Fail && r.severity == Severity::Critical);
    if critical_fail {
        return State::Critical;
    }
    let evaluated = report.count(Verdict::Pass) + report.count(Verdict::Fail);
    let undetermined = report.count(Verdict::Unknown) + report.count(Verdict::Blocked);
    if evaluated == 0 && undetermined > 0 {
        return State::Unknown;
    }
    if report.has_findings() {
        State::Warning
    } else {
        State::Ok
    }
}

/// How many rule ids the status line names per verdict before `+N more`.
const NAMED: usize = 3;

/// The plugin output (status line, long output, trailing newline) and its exit code.
pub fn render(report: &Report) -> (String, i32) {
    let st = state(report);
    let findings = findings_by_urgency(report);
    let text = if report.results.is_empty() {
        "no rules were evaluated".to_string()
    } else if findings.is_empty() {
        format!("no findings in {} rules", report.results.len())
    } else {
        let mut parts = Vec::new();
        for (v, word) in [
            (Verdict::Fail, "failing"),
            (Verdict::Unknown, "unknown"),
            (Verdict::Blocked, "blocked"),
        ] {
            let ids: Vec<&str> = findings
                .iter()
                .filter(|r| r.verdict == v)
                .map(|r| r.id.as_str())
                .collect();
            if ids.is_empty() {
                continue;
            }
            let mut part = format!(
                "{} {word}: {}",
                ids.len(),
                ids[..ids.len().min(NAMED)].join(", ")
            );
            if ids.len() > NAMED {
                let _ = write!(part, ", +{} more", ids.len() - NAMED);
            }
            parts.push(part);
        }
        let joined = parts.join("; ");
        if st == State::Unknown {
            format!("no rule could be evaluated; {joined}")
        } else {
            joined
        }
    };
    let mut out = format!(
        "GPUFIX {} - {} | {}\n",
        st.as_str(),
        plain(&text),
        perfdata(report)
    );
    for r in &findings {
        let _ = writeln!(out, "{}", plain(&long_line(r)));
    }
    (out, st.code())
}

/// For when there is no report: bad playbooks, an unreadable snapshot, an internal error.
pub fn render_error(message: &str) -> (String, i32) {
    (
        format!("GPUFIX UNKNOWN - {}\n", plain(message)),
        State::Unknown.code(),
    )
}

/// `pass=40;;;0 fail=2;;;0 …`: every verdict, always, so graphs have no gaps.
fn perfdata(report: &Report) -> String {
    Verdict::ALL
        .iter()
        .map(|v| format!("{}={};;;0", v.as_str(), report.count(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn long_line(r: &RuleResult) -> String {
    let detail = if r.verdict == Verdict::Fail && !r.messages.is_empty() {
        r.messages.join("; ")
    } else if let Some(reason) = &r.reason {
        reason.clone()
    } else if !r.blocked_by.is_empty() {
        format!("blocked by {}", r.blocked_by.join(", "))
    } else {
        r.title.clone()
    };
    format!(
        "[{} {}] {}: {}",
        r.verdict.as_str(),
        r.severity.as_str(),
        r.id,
        detail
    )
}

/// `|` starts performance data and a line break starts long output, so neither may appear
/// inside one line of text.
fn plain(s: &str) -> String {
    s.replace('|', "/")
        .split(['\n', '\r'])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
