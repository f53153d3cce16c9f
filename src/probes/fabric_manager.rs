//! `fabric.state`: whether the NVLink fabric of an NVSwitch system is ready for CUDA, from every
//! `--evidence` file (and `--nccl-log`): the GPUs' `Fabric` sections and the Fabric Manager's
//! messages ([`crate::evidence::fabric_manager`]), and CUDA's error 802 wherever a log reports
//! it ([`crate::evidence::cuda_errors`]: `cudaErrorSystemNotReady` = 802, `cudaGetErrorString`
//! "system not yet initialized", the driver API's `CUDA_ERROR_SYSTEM_NOT_READY`). The CUDA
//! runtime documents 802 as "the system is not yet ready to start any CUDA work … verify the
//! system configuration is in a valid state and all required driver daemons are actively
//! running" (driver_types.h, CUDA 10.1 onwards); on an NVSwitch system that daemon is the Fabric
//! Manager (its user guide: CUDA initialisation fails with `cudaErrorSystemNotReady` until the
//! GPUs are registered with the fabric).
//!
//! Only what a text shows is judged: a GPU whose `State` is not `Completed` (or `Completed` with
//! a `Status` other than `Success`), the Fabric Manager refusing the driver's version or an item
//! of its configuration file (it exits either way, so the NVSwitches are never set up), error
//! 802, the Fabric Manager's unit failing to start on a machine whose NVSwitches it had
//! configured. `Not Supported`/`N/A` states and a Fabric Manager that found no NVSwitch
//! (`NV_WARN_NOTHING_TO_DO`, normal on a machine without one) are not judged.

use super::{NoParams, Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::{cuda_errors, fabric_manager};
use crate::vocab::io::read_shared;
use serde_json::{Value, json};

pub struct FabricState;

/// Error 802 under any of its names.
fn system_not_ready(e: &cuda_errors::CudaErrorSeen) -> bool {
    e.code == Some(802)
        || e.name == "cudaErrorSystemNotReady"
        || e.name == "CUDA_ERROR_SYSTEM_NOT_READY"
}

impl Probe for FabricState {
    type Params = NoParams;
    fn name(&self) -> &'static str {
        "fabric.state"
    }
    fn doc(&self) -> &'static str {
        "the NVLink fabric of an NVSwitch system in pasted text (--evidence, --nccl-log): nvidia-smi -q Fabric State/Status per GPU, the Fabric Manager's version mismatch, CUDA error 802 (system not yet initialized)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "judgeable",
                "the text shows a fabric state, the Fabric Manager running or refusing the driver, or error 802",
            ),
            (
                "not_ready",
                "one sentence per thing that says the fabric is not ready",
            ),
            ("gpus", "gpu, state, status, verdict per Fabric section"),
            (
                "version_mismatch",
                "fabric_manager, driver, line: the Fabric Manager refusing another driver version",
            ),
            (
                "config_rejected",
                "item, line: the Fabric Manager rejecting an item of its fabricmanager.cfg",
            ),
            ("system_not_ready", "the lines that report CUDA error 802"),
            ("nothing_to_do", "the Fabric Manager found no NVSwitch"),
            (
                "running",
                "the Fabric Manager configured the NVSwitches or its unit runs",
            ),
            ("files", "the evidence files read"),
        ]
    }
    fn run(&self, _params: &NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut files = Vec::new();
        let mut all = fabric_manager::FabricReport::default();
        let mut not_ready_errors: Vec<String> = Vec::new();
        let paths = ctx.inputs.evidence.iter().chain(ctx.inputs.nccl_log.iter());
        for p in paths {
            let Ok(t) = read_shared(p) else { continue };
            // (the text's searches for a line anywhere in it, made once for every probe)
            crate::evidence::scan::keep(&t);
            let mut used = false;
            let r = fabric_manager::read(&t);
            if !r.is_empty() {
                used = true;
                all.gpus.extend(r.gpus);
                all.version_mismatch.extend(r.version_mismatch);
                all.config_rejected.extend(r.config_rejected);
                all.nothing_to_do |= r.nothing_to_do;
                all.running |= r.running;
                all.configured |= r.configured;
                if r.start_failed.is_some() {
                    all.start_failed = r.start_failed;
                }
            }
            if cuda_errors::looks_like(&t) {
                let log = crate::evidence::memo::parsed(&t, cuda_errors::parse_cuda_runtime_log);
                for e in log.errors.iter().filter(|e| system_not_ready(e)) {
                    used = true;
                    if not_ready_errors.len() < crate::evidence::MAX_ITEMS {
                        not_ready_errors.push(e.line.clone());
                    }
                }
            }
            if used {
                files.push(p.display().to_string());
            }
        }
        if files.is_empty() {
            return ProbeOutcome::NotApplicable(
                "needs --evidence with nvidia-smi -q's Fabric section, the Fabric Manager's journal, or a log reporting CUDA error 802".into(),
            );
        }
        let mut not_ready = Vec::new();
        if let Some(line) = not_ready_errors.first() {
            not_ready.push(format!(
                "CUDA error 802 (cudaErrorSystemNotReady, \"system not yet initialized\"): `{}`",
                crate::evidence::clip(line, 200)
            ));
        }
        let stuck: Vec<String> = all
            .gpus
            .iter()
            .filter(|g| g.verdict == "not-ready")
            .map(|g| {
                let who = g
                    .gpu
                    .as_deref()
                    .map(|x| format!("GPU {x}: "))
                    .unwrap_or_default();
                match &g.status {
                    Some(s) => format!("{who}fabric State {} (Status {s})", g.state),
                    None => format!("{who}fabric State {}", g.state),
                }
            })
            .collect();
        not_ready.extend(stuck);
        for m in &all.version_mismatch {
            not_ready.push(format!(
                "the Fabric Manager ({}) refuses to run on driver {}",
                m.fabric_manager, m.driver
            ));
        }
        let mut rejected: Vec<&str> = Vec::new();
        for c in &all.config_rejected {
            if !rejected.contains(&c.item.as_str()) {
                rejected.push(&c.item);
            }
        }
        if !rejected.is_empty() {
            not_ready.push(format!(
                "the Fabric Manager rejects its configuration ({} has an invalid value) and exits before it sets up the NVSwitches",
                rejected.join(", ")
            ));
        }
        // a failed start judged only where the Fabric Manager had configured NVSwitches here
        // (see `evidence::fabric_manager`): a machine without them needs no Fabric Manager
        if let Some(why) = &all.start_failed
            && all.configured
            && !all.nothing_to_do
        {
            not_ready.push(format!(
                "the Fabric Manager, which had configured this machine's NVSwitches, does not run: its unit failed to start (systemd: {why})"
            ));
        }
        let judgeable = !not_ready.is_empty()
            || all.running
            || all.gpus.iter().any(|g| g.verdict != "not-judged");
        ProbeOutcome::Value(json!({
            "judgeable": judgeable,
            "not_ready": not_ready,
            "gpus": serde_json::to_value(&all.gpus).unwrap_or(Value::Null),
            "version_mismatch": serde_json::to_value(&all.version_mismatch).unwrap_or(Value::Null),
            "config_rejected": serde_json::to_value(&all.config_rejected).unwrap_or(Value::Null),
            "system_not_ready": not_ready_errors,
            "nothing_to_do": all.nothing_to_do,
            "running": all.running,
            "files": files,
        }))
    }
}
