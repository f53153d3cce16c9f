//! The Slurm node reason for `gpufix audit --format slurm`, read by
//! `contrib/slurm/gpufix-healthcheck` (a HealthCheckProgram): `gpufix: RULE_ID[, +N more]`
//! naming the most urgent finding that the [`FailPolicy`] counts: by default
//! ([`FailPolicy::DRAIN`]) only a failed critical rule of the health layers, never an unknown or
//! blocked one, never a job setting. The `gpufix:` prefix is how the health check later knows a
//! drain is its own and may be lifted; drains set by anyone else are never touched.

use crate::render::FailPolicy;
use crate::report::Report;

/// What every reason gpufix sets starts with.
pub const REASON_PREFIX: &str = "gpufix: ";

/// `sinfo -R` and `scontrol show node` print the reason in full, but it is typed and read by
/// people in a terminal: keep it to one short line.
pub const MAX_REASON: usize = 80;

/// The drain reason, or `None` when the policy counts no finding.
pub fn slurm_reason(report: &Report, policy: &FailPolicy) -> Option<String> {
    let findings = policy.findings(report);
    let first = findings.first()?;
    let more = match findings.len() - 1 {
        0 => String::new(),
        n => format!(", +{n} more"),
    };
    // Rule ids are kebab-case with dots; anything else (a site playbook's odd id) is replaced so
    // the reason survives shell quoting in scripts that log it.
    let id: String = first
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._:/-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let room = MAX_REASON - REASON_PREFIX.len() - more.len();
    let id = if id.len() > room {
        format!("{}...", &id[..room - 3])
    } else {
        id
    };
    Some(format!("{REASON_PREFIX}{id}{more}"))
}

/// `--format slurm` output: the reason and a newline, or nothing when the node stays in service.
pub fn render(report: &Report, policy: &FailPolicy) -> String {
    slurm_reason(report, policy)
        .map(|r| r + "\n")
        .unwrap_or_default()
}
