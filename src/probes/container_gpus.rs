//! `container.gpus`: containers of a pasted spec that run CUDA work but ask the container
//! runtime for no GPU ([`crate::evidence::container_spec`], whose module doc cites the
//! producers' definitions).
//!
//! How a container gets an NVIDIA GPU, per producer:
//!
//! - `docker run`: `--gpus` (docker CLI `cli/command/container/opts.go`, "GPU devices to add to
//!   the container ('all' to pass all GPUs)"), `--runtime=nvidia` with `NVIDIA_VISIBLE_DEVICES`
//!   (NVIDIA's CUDA images set it to `all`), `--device /dev/nvidiaN`, or a CDI device
//!   (`--device nvidia.com/gpu=all`, nvidia-container-toolkit's "Support for Container Device
//!   Interface");
//! - compose: `deploy.resources.reservations.devices` with `capabilities: [gpu]`
//!   (compose-spec `deploy.md`, "devices": "Devices of this type … `capabilities` … must be
//!   set"), the service's `gpus` (compose-spec `05-services.md`), `runtime: nvidia`, or
//!   `devices` naming the GPU's nodes or its CDI name;
//! - Kubernetes: a container's `resources.limits["nvidia.com/gpu"]` (the NVIDIA device plugin's
//!   extended resource; Kubernetes "Schedule GPUs": "GPUs are only supposed to be specified in
//!   the limits section"), another `nvidia.com/` resource (a MIG profile), or the NVIDIA runtime
//!   class with `NVIDIA_VISIBLE_DEVICES`.
//!
//! Without one of these the container has no GPU unless `nvidia` is the daemon's default
//! runtime (`"default-runtime": "nvidia"` in daemon.json); `privileged` exposes the host's
//! device nodes but not the driver's user-space libraries (libcuda, libnvidia-ml), which the
//! NVIDIA container runtime mounts in, so CUDA still finds no device. Only containers whose spec
//! shows CUDA work are judged ([`crate::evidence::container_spec::cuda_hint`]); a service that
//! `extends` another, or sits in a file that completes a base compose file, may get its GPUs
//! there and is not judged; nor is a container whose spec sets no GPU on purpose
//! (`nvidia.com/gpu: 0`, `NVIDIA_VISIBLE_DEVICES=none`), or one that runs an MPI launcher
//! (`mpirun`, `mpiexec`, `horovodrun`: the Kubeflow MPI Operator's `Launcher` replica starts
//! the ranks on the GPU workers over ssh and needs no GPU itself).

use super::inputs::evidence_of;
use super::{NoParams, Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::container_spec::{ContainerSpecKind, parse_container_specs};
use serde_json::json;

pub struct ContainerGpus;

/// Programs that start a job's ranks on other hosts (Open MPI's and MPICH's launchers, PRRTE's,
/// Horovod's).
const MPI_LAUNCHERS: [&str; 5] = [
    "mpirun",
    "mpiexec",
    "prterun",
    "horovodrun",
    "mpiexec.hydra",
];

/// The field that asks each producer for GPUs.
fn field(source: &str) -> &'static str {
    match source {
        "docker-run" => {
            "`--gpus all` (or `--gpus '\"device=0,1\"'`; `--device nvidia.com/gpu=all` with CDI)"
        }
        "compose" => {
            "`deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}` (or `gpus: all`)"
        }
        _ => "`resources: {limits: {nvidia.com/gpu: 1}}` on the container",
    }
}

impl Probe for ContainerGpus {
    type Params = NoParams;
    fn name(&self) -> &'static str {
        "container.gpus"
    }
    fn doc(&self) -> &'static str {
        "whether the containers of a pasted spec (docker run, compose, Kubernetes) that run CUDA work (a CUDA image or build target, a command using cuda) ask the runtime for GPUs (--gpus, a compose device reservation, gpus/runtime, nvidia.com/gpu)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "judgeable",
                "the spec has a container that runs CUDA work and whose GPUs it decides",
            ),
            (
                "not_requested",
                "source, name, hint, privileged, field per CUDA container that asks for no GPU",
            ),
            ("requested", "the CUDA containers that ask for GPUs"),
            ("file", "the spec read"),
        ]
    }
    fn run(&self, _params: &NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut not_requested = Vec::new();
        let mut requested = Vec::new();
        let mut file = None;
        for (p, t) in evidence_of(&ctx.inputs.evidence, &ContainerSpecKind) {
            for spec in parse_container_specs(&t) {
                if !["docker-run", "compose", "kubernetes"].contains(&spec.source) {
                    continue;
                }
                for c in &spec.containers {
                    let Some(hint) = c.cuda_hint.as_deref() else {
                        continue;
                    };
                    // a spec that leaves the GPUs to another file or object is judged only
                    // when it asks for them itself
                    if c.gpus_elsewhere && c.gpus.is_none() {
                        continue;
                    }
                    // an MPI launcher starts the ranks on the workers over ssh (the MPI
                    // Operator's `Launcher` replica): its own container needs no GPU
                    if c.gpus.is_none()
                        && c.command.as_deref().is_some_and(|cmd| {
                            cmd.split(|ch: char| ch.is_whitespace() || ch == '"' || ch == '\'')
                                .map(|w| w.rsplit('/').next().unwrap_or(w))
                                .any(|w| MPI_LAUNCHERS.contains(&w))
                        })
                    {
                        continue;
                    }
                    file.get_or_insert_with(|| p.display().to_string());
                    match c.gpus.as_deref().map(str::trim) {
                        // no GPU on purpose (`nvidia.com/gpu: 0`, `NVIDIA_VISIBLE_DEVICES=none`):
                        // a CUDA image run on the CPU (Triton serving CPU models) is the spec's
                        // own choice
                        Some("none" | "void" | "0" | "\"0\"") => {}
                        Some(_) => {
                            requested.push(c.name.clone());
                        }
                        None => {
                            if not_requested.len() < crate::evidence::MAX_ITEMS {
                                not_requested.push(json!({
                                    "source": spec.source,
                                    "name": c.name,
                                    "hint": hint,
                                    "privileged": c.privileged,
                                    "field": field(spec.source),
                                }));
                            }
                        }
                    }
                }
            }
        }
        let Some(file) = file else {
            return ProbeOutcome::NotApplicable(
                "needs --evidence with a container spec (docker run, compose file, Kubernetes manifest) whose container runs CUDA work (a CUDA image or build target, a command using cuda)".into(),
            );
        };
        ProbeOutcome::Value(json!({
            "judgeable": true,
            "not_requested": not_requested,
            "requested": requested,
            "file": file,
        }))
    }
}
