//! `cluster.gpus`: what a cluster scheduler says about the GPUs it can give — a Kubernetes
//! node's GPU capacity and allocatable, the kubelet's admission errors, the scheduler's
//! `Insufficient nvidia.com/gpu`, Slurm's node records and gres errors — read by
//! [`crate::evidence::gpu_scheduling`] from every `--evidence` file that holds one, whatever
//! else the paste holds.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::gpu_scheduling;
use crate::vocab::io::read_shared;
use serde_json::{Value, json};

pub struct ClusterGpus;

/// No parameters.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterGpusParams {}

impl Probe for ClusterGpus {
    type Params = ClusterGpusParams;
    fn name(&self) -> &'static str {
        "cluster.gpus"
    }
    fn doc(&self) -> &'static str {
        "what a cluster scheduler says about the GPUs it can give (--evidence): a Kubernetes node's nvidia.com/gpu capacity and allocatable, UnexpectedAdmissionError, Insufficient nvidia.com/gpu, the kubelet refusing a GPU plugin's device list over its gRPC limit; Slurm's scontrol show node, gres count reported lower than configured, Invalid generic resource (gres) specification, Requested node configuration is not available for a GPU request"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "k8s_resources",
                "GPU resources of a node: resource, capacity, allocatable",
            ),
            (
                "admission_errors",
                "the kubelet's UnexpectedAdmissionError: cause, resource, requested, available",
            ),
            (
                "insufficient",
                "GPU resources the scheduler found too few of: resource, nodes",
            ),
            ("gfd_labels", "gpu-feature-discovery labels: key, value"),
            (
                "slurm_nodes",
                "scontrol show node: name, gres, cfg_gpus, alloc_gpus, state, reason",
            ),
            (
                "gres_count_lower",
                "slurmctld's gres count reported lower than configured: gres, reported, configured, node",
            ),
            (
                "invalid_gres",
                "submit errors ending in Invalid generic resource (gres) specification",
            ),
            (
                "node_config_unavailable",
                "submit errors ending in Requested node configuration is not available, where the paste also shows the GPU request, with that request",
            ),
            (
                "device_lists_too_large",
                "the kubelet's ListAndWatch ended for a GPU resource whose device list is over its gRPC receive limit: resource, size, limit",
            ),
            (
                "findings",
                "one sentence per GPU the text shows the scheduler cannot give",
            ),
            ("file", "the file read"),
        ]
    }
    fn run(&self, _params: &ClusterGpusParams, ctx: &ProbeCtx) -> ProbeOutcome {
        for p in ctx.inputs.evidence.iter() {
            let Ok(t) = read_shared(p) else { continue };
            if !gpu_scheduling::looks_like(&t) {
                continue;
            }
            return match serde_json::to_value(gpu_scheduling::parse_gpu_scheduling(&t)) {
                Ok(Value::Object(mut m)) => {
                    m.insert("file".into(), json!(p.display().to_string()));
                    ProbeOutcome::Value(Value::Object(m))
                }
                Ok(v) => ProbeOutcome::Value(v),
                Err(e) => ProbeOutcome::Unknown(e.to_string()),
            };
        }
        ProbeOutcome::NotApplicable(
            "needs --evidence with a node's GPU resources, a pod's GPU admission or scheduling error, or Slurm's node record or gres error".into(),
        )
    }
}
