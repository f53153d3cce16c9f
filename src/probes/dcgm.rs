//! `dcgm.diag` and `dcgm.health`: what DCGM's own checks said, from pasted `dcgmi diag -r
//! 1|2|3` and `dcgmi health -c` output (`--evidence`). gpufix never runs them: a level 2 or 3
//! diag takes the GPUs for minutes and a health check needs watches set beforehand, so both
//! are the person's to run; the probe reads what they pasted, wherever it sits in the file.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::dcgmi;
use crate::vocab::io::read_shared;
use serde_json::{Value, json};

/// The first evidence file where `found` recognises a part, with its text.
fn first_with(
    ctx: &ProbeCtx,
    found: fn(&str) -> bool,
) -> Option<(std::path::PathBuf, std::sync::Arc<String>)> {
    ctx.inputs.evidence.iter().find_map(|p| {
        let t = read_shared(p).ok()?;
        found(&t).then(|| (p.clone(), t))
    })
}

fn with_file<T: serde::Serialize>(v: &T, file: &std::path::Path) -> ProbeOutcome {
    match serde_json::to_value(v) {
        Ok(Value::Object(mut m)) => {
            m.insert("file".into(), json!(file.display().to_string()));
            ProbeOutcome::Value(Value::Object(m))
        }
        Ok(v) => ProbeOutcome::Value(v),
        Err(e) => ProbeOutcome::Unknown(e.to_string()),
    }
}

pub struct DcgmDiag;

impl Probe for DcgmDiag {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "dcgm.diag"
    }
    fn doc(&self) -> &'static str {
        "the tests of a pasted `dcgmi diag -r 1|2|3` run (--evidence): each test's result by GPU, its warnings, and what failed"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "not_run",
                "why the diagnostic did not run, as dcgmi or NVVS printed it (no test result then)",
            ),
            ("dcgm_version", "DCGM version (Metadata rows, DCGM 3.3+)"),
            ("driver_version", "driver version DCGM detected"),
            ("device_ids", "PCI device ids of the GPUs tested"),
            (
                "tests",
                "[{name, stage, result (pass/fail/warn/skip/not-run), gpus {result: [ids]}, all, warnings, info}]",
            ),
            (
                "failed",
                "tests that failed or warned, with their GPUs: `GPU Memory (GPU 0): fail`",
            ),
            ("failed_gpus", "GPUs a failed or warned test names"),
            (
                "failure_messages",
                "the warnings of failed tests and Error rows of the run, unwrapped",
            ),
            ("file", "the evidence file"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let Some((p, t)) = first_with(ctx, dcgmi::looks_like_diag_any) else {
            return ProbeOutcome::NotApplicable(
                "needs --evidence with `dcgmi diag -r 2` output (gpufix does not run the diagnostic: it takes the GPUs for minutes)".into(),
            );
        };
        match dcgmi::parse_diag_any(&t) {
            // a refusal with no table: no test ran, so none passed either
            Ok(d) if d.tests.is_empty() && !d.not_run.is_empty() => ProbeOutcome::Unknown(format!(
                "{}: the diagnostic did not run: {}",
                p.display(),
                d.not_run[..d.not_run.len().min(2)].join("; ")
            )),
            Ok(d) => with_file(&d, &p),
            Err(e) => ProbeOutcome::Unknown(format!("{}: {e}", p.display())),
        }
    }
}

pub struct DcgmHealth;

impl Probe for DcgmHealth {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "dcgm.health"
    }
    fn doc(&self) -> &'static str {
        "a pasted `dcgmi health -c` report (--evidence): overall health, and each entity's subsystems with their messages"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("overall", "`Healthy`, `Warning` or `Failure`"),
            ("entities", "entity (`GPU 0`) -> its health"),
            (
                "incidents",
                "[{entity, system (`PCIe system`, `Memory system`, ...), health, message}]",
            ),
            (
                "not_healthy",
                "incidents as `GPU 0 PCIe system: Warning (message)`, less `power_capped`",
            ),
            (
                "power_capped",
                "Power-system warnings that only say the GPU was held at its power limit (DCGM_FR_CLOCKS_EVENT_POWER: \"This GPU can still perform workload\"), as `GPU 0 Power system`",
            ),
            ("file", "the evidence file"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let Some((p, t)) = first_with(ctx, dcgmi::looks_like_health) else {
            return ProbeOutcome::NotApplicable(
                "needs --evidence with `dcgmi health -c` output (after `dcgmi health -s a` set the watches)".into(),
            );
        };
        let h = match dcgmi::parse_health(&t) {
            Ok(h) => h,
            Err(e) => return ProbeOutcome::Unknown(format!("{}: {e}", p.display())),
        };
        // an incident DCGM could not judge (an IMEX status it could not read, see `dcgmi`) is
        // neither healthy nor not: with nothing else in the paste the verdict is unknown
        if h.overall.is_none()
            && !h.incidents.is_empty()
            && h.incidents.iter().all(|i| i.health == "Unknown")
        {
            return ProbeOutcome::Unknown(format!(
                "{}: the only health incidents are ones DCGM could not judge ({})",
                p.display(),
                crate::evidence::clip(&h.incidents[0].message, 160)
            ));
        }
        // DCGM's own next step for a power-cap clocks event is to monitor: the GPU still
        // performs (see `dcgmi::power_cap_event`), so it is kept apart from the faults
        let power_capped: Vec<String> = h
            .incidents
            .iter()
            .filter(|i| dcgmi::power_cap_event(i))
            .map(|i| format!("{} {}", i.entity, i.system).trim().to_string())
            .collect();
        let not_healthy: Vec<String> = h
            .incidents
            .iter()
            .filter(|i| i.health != "Healthy" && i.health != "Unknown")
            .filter(|i| !dcgmi::power_cap_event(i))
            .map(|i| {
                let msg = if i.message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", crate::evidence::clip(&i.message, 160))
                };
                format!("{} {}: {}{msg}", i.entity, i.system, i.health)
                    .trim()
                    .to_string()
            })
            .collect();
        match with_file(&h, &p) {
            ProbeOutcome::Value(Value::Object(mut m)) => {
                m.insert("not_healthy".into(), json!(not_healthy));
                m.insert("power_capped".into(), json!(power_capped));
                ProbeOutcome::Value(Value::Object(m))
            }
            other => other,
        }
    }
}
