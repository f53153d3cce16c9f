//! The evaluated plan as data: what every renderer (text, json, junit, prometheus, nagios,
//! slurm) and the apply step read. `--format json` prints this, versioned by [`REPORT_VERSION`]
//! and described by `schemas/report.schema.json`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const REPORT_VERSION: u32 = 1;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    Unknown,
    Blocked,
    NotApplicable,
    Waived,
}

impl Verdict {
    pub const ALL: [Verdict; 6] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Unknown,
        Verdict::Blocked,
        Verdict::NotApplicable,
        Verdict::Waived,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Unknown => "unknown",
            Verdict::Blocked => "blocked",
            Verdict::NotApplicable => "not-applicable",
            Verdict::Waived => "waived",
        }
    }
    /// Fail, unknown and blocked are findings: they make `plan` and `audit` exit 2.
    pub fn is_finding(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Unknown | Verdict::Blocked)
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// Ordered `manual < disruptive < safe`: a site playbook may lower a fix's class, never raise it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Safety {
    Manual,
    Disruptive,
    Safe,
}

impl Safety {
    pub fn as_str(self) -> &'static str {
        match self {
            Safety::Manual => "manual",
            Safety::Disruptive => "disruptive",
            Safety::Safe => "safe",
        }
    }
}

/// The fix a failing rule proposes, with its actions rendered to concrete values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FixProposal {
    pub safety: Safety,
    /// What must restart for the fix to take effect: nothing, the training job, a service, a reboot.
    pub restart: String,
    /// Rendered actions: `{kind: env.unset, file: ..., name: ...}`.
    pub actions: Vec<Value>,
    /// For manual fixes (and as a note on others): what a person should do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleResult {
    pub id: String,
    pub title: String,
    pub layer: String,
    pub severity: Severity,
    pub verdict: Verdict,
    /// Why the verdict is unknown, blocked, not-applicable or waived; for a rule read a second
    /// time (`recheck_after`), what the second reading showed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// One rendered message per failing item (one per GPU for per-GPU rules).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    /// The values the threshold read, by dotted path (`gpu.persistence`: false).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub evidence: BTreeMap<String, Value>,
    /// The rules this one waits on that failed or are unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
    pub why: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixProposal>,
    /// Playbook file the rule came from.
    pub source: String,
    /// For a rule judged per GPU (`for_each` over `nvml.gpus`): the GPUs it fails on, so that
    /// fleet metrics can be joined with dcgm-exporter's by `gpu` and `UUID`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuRef>,
}

/// One GPU a finding is about, named the way NVML and dcgm-exporter name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuRef {
    /// NVML index (dcgm-exporter's `gpu` label).
    pub index: u32,
    /// `GPU-…` (dcgm-exporter's `UUID` label), where NVML gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

/// One change a fix action would make to one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedChange {
    /// The rule whose fix this is.
    pub rule: String,
    /// The fix kind: `env.unset`, `config.set`, `fstab.options`, ...
    pub kind: String,
    /// What is changed: a file path, `sysctl vm.swappiness`, `gpu 0 persistence`.
    pub target: String,
    pub safety: Safety,
    /// One line: `unset CUDA_LAUNCH_BLOCKING in /job/env`.
    pub summary: String,
    /// Unified diff for file targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Before and after for runtime state (and whole-file content is left to `diff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// Whole file text before and after, for file targets (what `apply` writes, exactly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_text: Option<String>,
    /// Which part of the action this change is: `file`, `runtime`, `persist`, `remount`.
    pub part: String,
    /// The rendered action, with concrete values.
    pub action: Value,
    /// The target's state when the plan was made (`sha256:…` of a file, `absent`, or a value);
    /// `apply` refuses when it no longer matches.
    pub fingerprint: String,
    /// What must restart for the change to take effect.
    pub restart: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub version: u32,
    pub gpufix_version: String,
    /// The judged machine's hostname (what fleet reports key on), or, where it has none on
    /// record, what was judged (`snapshot FILE`, `evidence FILE…`).
    pub host: String,
    /// The judged machine's `/etc/machine-id`, where it has one: tells apart hosts that share a
    /// name (re-imaged nodes, clones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// What was judged: `this host`, `snapshot FILE`, `root DIR`, `evidence FILE…`.
    #[serde(default)]
    pub judged: String,
    /// Every job input given, as its flag and path (`--config train.yaml`), in the order the
    /// flags are documented: the report's header names them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// RFC 3339, UTC.
    pub generated_at: String,
    /// Rules in evaluation order (bottom-up by layer, then dependencies).
    pub results: Vec<RuleResult>,
    /// Count of rules per verdict; every verdict is present.
    pub summary: BTreeMap<String, usize>,
    /// Every change `apply` would make, in order, rendered to concrete values (empty until the
    /// fixes of failing rules are planned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<PlannedChange>,
    /// Non-fatal notes gathered while evaluating (an expired waiver, a probe that timed out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// With `--timings`: the run's phases, each probe's wall time and what it waited on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<crate::vocab::timing::Timings>,
}

impl Report {
    pub fn has_findings(&self) -> bool {
        self.results.iter().any(|r| r.verdict.is_finding())
    }
    pub fn count(&self, v: Verdict) -> usize {
        self.results.iter().filter(|r| r.verdict == v).count()
    }
    pub fn summarize(results: &[RuleResult]) -> BTreeMap<String, usize> {
        Verdict::ALL
            .iter()
            .map(|v| {
                (
                    v.as_str().to_string(),
                    results.iter().filter(|r| r.verdict == *v).count(),
                )
            })
            .collect()
    }
}
