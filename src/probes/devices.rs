//! `devices`: the NVIDIA device nodes under /dev (listed, never opened: opening a GPU node
//! would initialise the device).

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::json;

pub struct Devices;

impl Probe for Devices {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "devices"
    }
    fn doc(&self) -> &'static str {
        "NVIDIA device nodes present under /dev"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("nodes", "names under /dev starting with `nvidia`"),
            ("nvidiactl", "true when /dev/nvidiactl exists"),
            ("nvidia_uvm", "true when /dev/nvidia-uvm exists"),
            ("gpu_nodes", "minor numbers N of /dev/nvidiaN, sorted"),
            (
                "missing",
                "expected nodes that are absent (nvidiactl, nvidia-uvm, nvidia0 when no GPU node)",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let names = match ctx.host.read_dir("/dev") {
            Ok(n) => n,
            Err(e) => return ProbeOutcome::Unknown(format!("cannot list /dev: {e}")),
        };
        let nodes: Vec<&String> = names.iter().filter(|n| n.starts_with("nvidia")).collect();
        let mut gpu_nodes: Vec<u32> = nodes
            .iter()
            .filter_map(|n| n.strip_prefix("nvidia")?.parse().ok())
            .collect();
        gpu_nodes.sort_unstable();
        let ctl = names.iter().any(|n| n == "nvidiactl");
        let uvm = names.iter().any(|n| n == "nvidia-uvm");
        let mut missing = Vec::new();
        if !ctl {
            missing.push("/dev/nvidiactl");
        }
        if !uvm {
            missing.push("/dev/nvidia-uvm");
        }
        if gpu_nodes.is_empty() {
            missing.push("/dev/nvidia0");
        }
        ProbeOutcome::Value(json!({
            "nodes": nodes, "nvidiactl": ctl, "nvidia_uvm": uvm, "gpu_nodes": gpu_nodes, "missing": missing,
        }))
    }
}
