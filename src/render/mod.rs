//! Renderers that turn a finished [`Report`](crate::report::Report) into what fleet tools read:
//! JUnit XML for CI dashboards, a node_exporter textfile for Prometheus, a Nagios plugin line with
//! its exit code, and a Slurm drain reason. Each is a pure function of the report; the one side
//! effect here, writing the Prometheus textfile atomically, is a separate function.

pub mod junit;
pub mod nagios;
pub mod prometheus;
pub mod slurm;
pub mod text;

use crate::report::{Report, RuleResult, Verdict};
use std::cmp::Reverse;

/// The report's findings, most urgent first: failures before unknowns before blocked rules (a
/// blocked rule is a consequence; what blocks it is listed earlier), then by severity, then in
/// evaluation order. Summaries that can name only a few rules (Nagios, Slurm) name these first.
pub fn findings_by_urgency(report: &Report) -> Vec<&RuleResult> {
    let mut f: Vec<&RuleResult> = report
        .results
        .iter()
        .filter(|r| r.verdict.is_finding())
        .collect();
    let rank = |v: Verdict| match v {
        Verdict::Fail => 0,
        Verdict::Unknown => 1,
        _ => 2,
    };
    // A stable sort keeps evaluation order among equals.
    f.sort_by_key(|r| (rank(r.verdict), Reverse(r.severity)));
    f
}
