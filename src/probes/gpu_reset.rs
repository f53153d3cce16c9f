//! `gpu.reset`: GPU resets that the driver refused, from `nvidia-smi -r` / `--gpu-reset` output
//! in any `--evidence` text ([`crate::evidence::smi_reset`], whose module doc cites the
//! messages). A GPU refused because a client holds it (persistence mode, nvidia-persistenced,
//! DCGM, the Fabric Manager, a process with /dev/nvidia* open) and not reset later in the same
//! text is blocked; a reset refused for another reason (`Not Supported`) is listed apart.

use super::{NoParams, Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::smi_reset;
use crate::vocab::io::read_shared;
use serde_json::json;

pub struct GpuReset;

impl Probe for GpuReset {
    type Params = NoParams;
    fn name(&self) -> &'static str {
        "gpu.reset"
    }
    fn doc(&self) -> &'static str {
        "GPU resets the driver refused in pasted `nvidia-smi -r`/`--gpu-reset` output (--evidence): `The following GPUs could not be reset:` and its `GPU <bus id>: <reason>` lines, `is currently in use by another process`, `Unable to reset this GPU because it's being used by some other process`, `was successfully reset`"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("judgeable", "the text shows the result of a GPU reset"),
            (
                "blocked",
                "gpu, reason, line per GPU whose reset was refused because a client holds it and that the text does not show reset later",
            ),
            (
                "refused_other",
                "gpu, reason, line per GPU whose reset was refused for another reason (Not Supported, Insufficient Permissions)",
            ),
            ("reset", "the GPUs the text shows reset"),
            ("files", "the texts read"),
        ]
    }
    fn run(&self, _params: &NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut files = Vec::new();
        let mut all = smi_reset::ResetReport::default();
        for p in &ctx.inputs.evidence {
            let Ok(t) = read_shared(p) else { continue };
            let r = smi_reset::read(&t);
            if r.is_empty() {
                continue;
            }
            files.push(p.display().to_string());
            all.refused.extend(r.refused);
            all.reset.extend(r.reset);
        }
        if files.is_empty() {
            return ProbeOutcome::NotApplicable(
                "needs --evidence with the output of `nvidia-smi -r` / `--gpu-reset`".into(),
            );
        }
        let (blocked, other): (Vec<_>, Vec<_>) = all
            .refused
            .into_iter()
            .filter(|g| !all.reset.contains(&g.gpu))
            .partition(|g| g.in_use);
        let listed = |gs: &[smi_reset::Refused]| -> Vec<serde_json::Value> {
            gs.iter()
                .map(|g| json!({"gpu": g.gpu, "reason": g.reason, "line": g.line}))
                .collect()
        };
        ProbeOutcome::Value(json!({
            "judgeable": true,
            "blocked": listed(&blocked),
            "refused_other": listed(&other),
            "reset": all.reset,
            "files": files,
        }))
    }
}
