//! `open_files`: PyTorch's DataLoader or its tensor sharing reaching the process's open-files
//! limit, as a pasted log or traceback shows it ([`crate::evidence::tensor_sharing`], written from
//! PyTorch's `dataloader.py` and `MapAllocator.cpp`). Every evidence text is searched for its
//! lines, whatever kind the text was detected as: the message sits in a training log, a bare
//! traceback or a launcher's rank-prefixed output alike.

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::json;

pub struct OpenFiles;

impl Probe for OpenFiles {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "open_files"
    }
    fn doc(&self) -> &'static str {
        "PyTorch's DataLoader or tensor sharing out of file descriptors (the open-files limit), from a pasted log or traceback"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the evidence file read"),
            (
                "limit_reached",
                "true where the text shows PyTorch's DataLoader or tensor sharing at the process's open-files limit; false where MapAllocator's shm_open failure names another errno (its own cause)",
            ),
            ("error", "the line that shows it"),
            (
                "how",
                "`dataloader` (torch's own \"Too many open files. Communication with the workers is no longer possible\"), `shm-open` (shm_open failing with Too many open files (24)), `errno-24` (OSError [Errno 24] beside torch's sharing or loader frames), `ancdata` (multiprocessing's \"received 0 items of ancdata\" beside them) or `shm-open-other-errno` (shm_open failing with another errno: not the limit)",
            ),
            (
                "frame",
                "for errno-24 and ancdata: the torch traceback frame (torch/multiprocessing/, torch/utils/data/) that shows the DataLoader or its tensor sharing",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        for p in &ctx.inputs.evidence {
            let Ok(t) = crate::vocab::io::read_shared(p) else {
                continue;
            };
            if let Some(f) = crate::evidence::tensor_sharing::fd_limit(&t) {
                let mut v = json!({
                    "limit_reached": true,
                    "error": f.error,
                    "how": f.how,
                    "file": p.display().to_string(),
                });
                if let Some(fr) = f.frame {
                    v["frame"] = json!(fr);
                }
                return ProbeOutcome::Value(v);
            }
        }
        // MapAllocator named another errno: the producer says why, and it is not the limit
        for p in &ctx.inputs.evidence {
            let Ok(t) = crate::vocab::io::read_shared(p) else {
                continue;
            };
            if let Some(l) = crate::evidence::tensor_sharing::other_shm_open_errno(&t) {
                return ProbeOutcome::Value(json!({
                    "limit_reached": false,
                    "error": crate::evidence::clip(l.trim(), 300),
                    "how": "shm-open-other-errno",
                    "file": p.display().to_string(),
                }));
            }
        }
        ProbeOutcome::NotApplicable(
            "no text shows PyTorch's DataLoader or tensor sharing out of file descriptors".into(),
        )
    }
}
