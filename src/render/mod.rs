//! Renderers that turn a finished [`Report`] into what fleet tools read:
//! JUnit XML for CI dashboards, a node_exporter textfile for Prometheus, a Nagios plugin line with
//! its exit code, and a Slurm drain reason. Each is a pure function of the report; the one side
//! effect here, writing the Prometheus textfile atomically, is a separate function.

pub mod html;
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

/// Layers whose rules say "this node is unfit" (its GPUs, driver and CUDA stack) rather than
/// "this job is slow" (data loading, launch, memory use, communication settings of one job).
pub const HEALTH_LAYERS: [&str; 2] = ["driver", "cuda"];

/// Which rules count as failing the host: for the exit status of `audit`, and for the drain
/// reason of `--format slurm` (which the Slurm health check and the NHC check drain on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailPolicy {
    /// The least severity a finding must have.
    pub fail_on: crate::report::Severity,
    /// Unknown and blocked rules count too (a check that could not be made).
    pub undetermined: bool,
    /// Only rules of the [`HEALTH_LAYERS`].
    pub health_only: bool,
}

impl FailPolicy {
    /// Every finding, of any severity and layer, unknown and blocked included: what `plan` and
    /// `audit` exit 2 on by default.
    pub const ANY_FINDING: FailPolicy = FailPolicy {
        fail_on: crate::report::Severity::Info,
        undetermined: true,
        health_only: false,
    };
    /// What drains a node by default: a failed critical rule of the health layers. A node whose
    /// checks could not be made (unknown, blocked) or whose job settings are slow stays in
    /// service.
    pub const DRAIN: FailPolicy = FailPolicy {
        fail_on: crate::report::Severity::Critical,
        undetermined: false,
        health_only: true,
    };

    pub fn counts(&self, r: &RuleResult) -> bool {
        if self.health_only && !HEALTH_LAYERS.contains(&r.layer.as_str()) {
            return false;
        }
        let verdict_counts = match r.verdict {
            Verdict::Fail => true,
            Verdict::Unknown | Verdict::Blocked => self.undetermined,
            _ => false,
        };
        verdict_counts && r.severity >= self.fail_on
    }

    /// The findings this policy counts, most urgent first.
    pub fn findings<'a>(&self, report: &'a Report) -> Vec<&'a RuleResult> {
        findings_by_urgency(report)
            .into_iter()
            .filter(|r| self.counts(r))
            .collect()
    }
}
