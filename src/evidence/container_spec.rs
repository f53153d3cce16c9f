//! How a container spec sizes `/dev/shm`, read from each producer's own definition:
//!
//! - `docker run`: the docker CLI's flags (github.com/docker/cli `cli/command/container/opts.go`,
//!   commit 006ec01b): `--shm-size` ("Size of /dev/shm", a `MemBytes`: `units.RAMInBytes`,
//!   binary units `b k m g t p`), `--ipc` ("IPC mode to use": `host`, `private`, `shareable`,
//!   `container:NAME`, `none`), `-v/--volume`, `--mount`, `--tmpfs`, `--gpus`; the daemon's
//!   default size is `DefaultShmSize = int64(67108864)` (64 MiB, moby `daemon/config/config.go`).
//! - docker compose: the Compose Specification (github.com/compose-spec/compose-spec
//!   `schema/compose-spec.json`, 170098ba): `services.*.shm_size` (a byte value, `11-extension.md`:
//!   `b`, `k`/`kb`, `m`/`mb`, `g`/`gb`), `ipc`, `volumes` (short `SRC:DST[:MODE]` or long
//!   `{type, source, target, tmpfs.size}`), `tmpfs`, `image`, `command`, `entrypoint`.
//!   `build.shm_size` sizes the build, not the running service, and is not read as such; a
//!   service whose only size is there is judged on the runtime's default (`build_shm_size`).
//!   A service's keys may come from an anchored block through a `<<: *name` merge key
//!   ("Compose follows the rule outlined by YAML merge type", compose-spec `10-fragments.md`;
//!   yaml.org/type/merge.html: the mapping's own keys win), typically an `x-` extension
//!   (`11-extension.md`) holding `ipc`/`shm_size` for every service: the merge is applied
//!   before a service is read, for Kubernetes manifests too.
//! - Kubernetes: the PodSpec (`hostIPC`, `volumes[].emptyDir.{medium, sizeLimit}`,
//!   `volumes[].hostPath.path`, `containers[].{image, command, args, volumeMounts[].mountPath}`)
//!   wherever a pod template sits (Pod, Job, CronJob, Deployment, StatefulSet, DaemonSet, a
//!   Kubeflow PyTorchJob's replica specs). Without a mount at `/dev/shm`, the runtime gives the
//!   pod 64 MiB (containerd CRI `defaultShmSize = int64(1024 * 1024 * 64)`, as dockershim did);
//!   `hostIPC: true` mounts the node's `/dev/shm` instead. KubeRay's operator adds a memory
//!   emptyDir at `/dev/shm` to each Ray node's Ray container that lacks one (see
//!   `kuberay_shared_mem`), so a `RayCluster`/`RayJob`/`RayService` spec without it is not
//!   on 64 MiB. A pasted fragment of a PodSpec (the
//!   `volumeMounts` and `volumes` lists alone, as people quote them) is read for the same two
//!   fields: the mount at `/dev/shm` and the volume it names.
//! - Argo Workflows: a template that runs a pod (argoproj/argo-workflows
//!   `pkg/apis/workflow/v1alpha1/workflow_types.go`, `Template`: `container` (a core Container),
//!   `script` (`ScriptTemplate`: a Container plus `source`), `volumes` (the template's, added to
//!   `WorkflowSpec.volumes`), `podSpecPatch` ("strategic merge patch to apply against the pod
//!   spec. Allows parameterization of container fields which are not strings (e.g. resource
//!   limits)")), in a Workflow, WorkflowTemplate, CronWorkflow (`spec.workflowSpec`) or a quoted
//!   `templates` list. The template's container runs as `main` (`workflow/common/common.go`,
//!   `MainContainerName`); the patch's `containers` entry of that name overrides its resources
//!   and adds its mounts, and the patch's `volumes` and `hostIPC` join the pod's. A value left
//!   to a parameter (`"{{workflow.parameters.gpus}}"`) is a number the spec does not fix.
//! - Which GPUs a container sees: docker's `--gpus` (`all`, `N`, `device=0,1`), the NVIDIA
//!   container runtime (`--runtime=nvidia`, compose's `runtime: nvidia`, the `nvidia-docker`
//!   wrapper) exposing what
//!   `NVIDIA_VISIBLE_DEVICES` names (`all` in NVIDIA's CUDA images; github.com/NVIDIA/nvidia-container-toolkit
//!   `internal/config/image/cuda_image.go`), `--device /dev/nvidiaN`, compose's device
//!   reservation `count`, Kubernetes' `nvidia.com/gpu` limit. NCCL keeps its intra-node buffers
//!   in `/dev/shm` whenever ranks share a node, and its troubleshooting guide asks containers for
//!   `--shm-size=1g` or `--ipc=host` (docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html,
//!   "Docker"): so a container with several GPUs is judged on its size even when the spec does
//!   not show a DataLoader; one with a single GPU is not (no local peer).
//!
//! - A wrapper script around `docker run` (`docker run ${RUNTIME} ${NAME} --rm -it … ${IMAGE}
//!   "${CMD[@]}"`) is read as bash runs it: the variables it assigns above the command are
//!   expanded, and an unquoted expansion standing alone is split into fields or vanishes when
//!   empty (GNU Bash manual 5.2, §3.5.3 "Shell Parameter Expansion", §3.5.7 "Word Splitting";
//!   [`crate::formats::launcher::expanded_commands`]), so `${RUNTIME}` is not taken for the
//!   image; the docker CLI takes the first word after its options as the image
//!   (`flags.SetInterspersed(false)`, docker/cli `cli/command/container/run.go`).
//!
//! What a spec cannot show is how much the job needs: the number of DataLoader workers and the
//! batch size live in the training code; so a spec is read for its size and whether it runs a
//! PyTorch job, and the rule says what is unknown.

use serde::Serialize;
use serde_yaml::Value as Yaml;

/// Docker's (and the CRI runtimes') default `/dev/shm` in MiB.
pub const DEFAULT_SHM_MIB: f64 = 64.0;

/// How many GPUs a container's GPU setting names: `Some(n)` for a count or a device list
/// (`2`, `device=0,1`, `"device=0"`, an `NVIDIA_VISIBLE_DEVICES` list), `None` for all of the
/// host's (`all`, a reservation without `count`), whose number the spec does not show.
pub fn gpu_count(gpus: &str) -> Option<u32> {
    let g = gpus.trim().trim_matches(['"', '\'']).trim();
    if is_templated(g) {
        return None;
    }
    let g = g.strip_prefix("device=").unwrap_or(g);
    match g {
        "all" | "gpu" | "" => None,
        "none" | "void" => Some(0),
        _ => match g.parse::<u32>() {
            Ok(n) if !gpus.contains("device=") => Some(n),
            _ => Some(g.split(',').filter(|x| !x.trim().is_empty()).count() as u32),
        },
    }
}

/// A value a workflow engine or shell fills in when the job starts (Argo's
/// `{{workflow.parameters.x}}`, Helm's `{{ .Values.x }}`, `${VAR}`, `$(VAR)`): the spec does not
/// fix it.
pub fn is_templated(v: &str) -> bool {
    v.contains("{{") || v.contains("${") || v.contains("$(")
}

const SHELLS: [&str; 6] = ["bash", "sh", "zsh", "ash", "dash", "fish"];

impl Container {
    /// The command runs one named program that is neither a shell nor a PyTorch job (an
    /// `nvidia-smi` check, a web server): the container's `/dev/shm` does not serve training.
    ///
    /// A command whose first word is an option (`--model-id $model --num-shard 2`) names no
    /// program: `docker run [OPTIONS] IMAGE [COMMAND] [ARG...]` hands it to the image's
    /// ENTRYPOINT ("Command line arguments to `docker run <image>` will be appended after all
    /// elements in an exec form ENTRYPOINT, and will override all elements specified using
    /// CMD", Dockerfile reference, docs.docker.com/reference/dockerfile/#entrypoint; compose's
    /// `command` and a Kubernetes container's `args` the same way), so the image's own program
    /// runs, as when no command is given (text-generation-inference's README before #60:
    /// `… ghcr.io/huggingface/text-generation-inference:latest --model-id $model --num-shard
    /// $num_shard`, the launcher starting one NCCL shard per GPU).
    pub fn runs_other_program(&self) -> bool {
        let Some(cmd) = self.command.as_deref() else {
            return false;
        };
        let first = cmd
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(['[', ']', '"', '\'', ','])
            .rsplit('/')
            .next()
            .unwrap_or("");
        self.pytorch_hint.is_none()
            && !first.is_empty()
            && !first.starts_with('-')
            && !SHELLS.contains(&first)
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ContainerSpec {
    /// `docker-run`, `compose`, `kubernetes`, `argo workflow` or `kubernetes fragment`.
    pub source: &'static str,
    pub containers: Vec<Container>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Container {
    /// The service or container name (`docker run`: `--name`, else the image).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Command and arguments (entrypoint first), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The word of the image or command that shows a PyTorch job (`torch`, `python`, `train`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pytorch_hint: Option<String>,
    pub shm: Shm,
    /// GPUs asked for (`--gpus all`, `nvidia.com/gpu: 8`, a compose device reservation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<String>,
    /// What shows that the container runs CUDA work ([`cuda_hint`]): a CUDA image or build
    /// target, or a command that uses CUDA.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_hint: Option<String>,
    /// A compose service's `build.shm_size`: the shared memory of the image build's `RUN`
    /// steps only ("the size of the shared memory (/dev/shm partition on Linux) allocated for
    /// building Docker images", compose-spec `build.md`, `shm_size`), not the running
    /// container's; written where the author meant the service's, it says the job needs
    /// shared memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_shm_size: Option<String>,
    /// `--privileged` / `privileged: true` / `securityContext.privileged: true`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub privileged: bool,
    /// The spec leaves the container's GPUs to another file or object (a compose service that
    /// `extends` another, or one in a file that completes a base file): not judged for them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gpus_elsewhere: bool,
}

/// What shows that a container runs CUDA work, from its image, build target and command:
///
/// - an image or build target named for CUDA: `cuda`/`cudnn` in it (NVIDIA's `nvidia/cuda`
///   base images, PyTorch's `pytorch/pytorch:…-cuda12.1-cudnn8-runtime`), a `cuXYZ` build tag
///   (`…-cu121`), a `gpu` word (`tensorflow/tensorflow:latest-gpu`,
///   `paddlepaddle/paddle:…-gpu-…`), or NVIDIA's NGC registry (`nvcr.io/nvidia/…`, every image
///   of which is built on a CUDA base);
/// - a name chosen by a variable that selects the accelerator (`${AI_DEVICE:-cuda}`,
///   `${DEVICE-gpu}`, `${ACCELERATOR:-cu121}`), where the default the file writes is a CUDA
///   one (compose interpolates `${VAR:-default}` from the environment or `.env`,
///   compose-spec `12-interpolation.md`): the file as written runs the CUDA build. A variable
///   without a default, or whose default is `cpu` (physical-ai-studio's
///   `physical-ai-studio-${AI_DEVICE:-cpu}` before #312), is not: what it becomes is in an
///   environment or override file the text does not show, and a base file whose GPU
///   settings sit in a `docker-compose.gpu.yml` beside it is the usual shape of that;
/// - a command that uses CUDA (`--device cuda`, `cuda:0`, `torch.cuda`, `CUDA_VISIBLE_DEVICES`).
///
/// An image for another vendor's GPUs (`rocm`, Intel's `xpu`/`oneapi`) is none of these.
pub fn cuda_hint(
    image: Option<&str>,
    target: Option<&str>,
    command: Option<&str>,
) -> Option<String> {
    fn named(name: &str) -> Option<String> {
        let low = name.to_ascii_lowercase();
        if ["rocm", "xpu", "oneapi", "ipex"]
            .iter()
            .any(|w| low.contains(w))
        {
            return None;
        }
        let words: Vec<&str> = low
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        // the GPU stack's own infrastructure (the GPU Operator, device plugin, feature
        // discovery, DCGM and its exporter, the container toolkit, the driver container, the
        // MIG manager, validators): NVIDIA's manifests run them without a GPU request, on the
        // NVIDIA runtime class or with `NVIDIA_VISIBLE_DEVICES` set by the operator. Whole
        // words of the image's name, so a training image that merely holds one (`drivers`,
        // `cuda-toolkit-train`) is still judged.
        let pair = |a: &str, b: &str| words.windows(2).any(|w| w[0] == a && w[1] == b);
        if words
            .iter()
            .any(|w| ["operator", "dcgm", "exporter", "driver", "validator"].contains(w))
            || pair("device", "plugin")
            || pair("feature", "discovery")
            || pair("container", "toolkit")
            || pair("mig", "manager")
        {
            return None;
        }
        if low.contains("cuda") || low.contains("cudnn") || low.starts_with("nvcr.io/nvidia/") {
            return Some(format!("`{name}`"));
        }
        let cu = |w: &str| {
            w.strip_prefix("cu").is_some_and(|d| {
                (2..=3).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit())
            })
        };
        if words.iter().any(|w| *w == "gpu" || cu(w)) {
            return Some(format!("`{name}`"));
        }
        // `${AI_DEVICE:-cuda}`: a variable that picks the accelerator, with a CUDA default
        let mut rest = name;
        while let Some(at) = rest.find("${") {
            let var: String = rest[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let up = var.to_ascii_uppercase();
            let after = &rest[at + 2 + var.len()..];
            let default = after
                .strip_prefix(":-")
                .or_else(|| after.strip_prefix('-'))
                .map(|d| &d[..d.find('}').unwrap_or(d.len())]);
            let cuda_default = default.is_some_and(|d| {
                let d = d.to_ascii_lowercase();
                d.contains("cuda") || d == "gpu" || cu(&d)
            });
            if cuda_default
                && (up.ends_with("DEVICE")
                    || up.contains("ACCELERATOR")
                    || up.starts_with("GPU")
                    || up.starts_with("CUDA"))
            {
                return Some(format!("`{name}` (`{var}` defaults to a CUDA build)"));
            }
            rest = &rest[at + 2..];
        }
        None
    }
    if let Some(h) = image.and_then(named) {
        return Some(format!("image {h}"));
    }
    if let Some(h) = target.and_then(named) {
        return Some(format!("build target {h}"));
    }
    let cmd = command?;
    let low = cmd.to_ascii_lowercase();
    (low.contains("cuda") && !low.contains("rocm"))
        .then(|| format!("command `{}`", super::clip(cmd, 120)))
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Shm {
    /// `shm-size`, `ipc-host`, `host-dev-shm` (the host's /dev/shm bound in), `tmpfs`,
    /// `emptydir-memory`, `emptydir-disk`, `ipc-shared` (another container's), `ipc-none`,
    /// `default` (nothing written: the runtime's 64 MiB), or `base-file` (nothing written in a
    /// compose file that completes another: [`SHM_FROM_BASE_FILE`]).
    pub how: &'static str,
    /// MiB, where the spec fixes it (`default` is 64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_mib: Option<f64>,
    /// The setting as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
}

/// `units.RAMInBytes` (docker) and compose byte values: a number and a binary unit.
pub fn docker_size_mib(s: &str) -> Option<f64> {
    let s = s.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    let num_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let n: f64 = s[..num_end].parse().ok()?;
    let unit = s[num_end..]
        .trim()
        .trim_end_matches('b')
        .trim_end_matches('i');
    let mult = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024f64.powi(4),
        "p" => 1024f64.powi(5),
        _ => return None,
    };
    Some(n * mult / (1024.0 * 1024.0))
}

/// A Kubernetes quantity (`16Gi`, `1G`, `512Mi`, bytes) in MiB.
pub fn k8s_quantity_mib(s: &str) -> Option<f64> {
    let s = s.trim();
    let num_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let n: f64 = s[..num_end].parse().ok()?;
    let mult = match &s[num_end..] {
        "" => 1.0,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    Some(n * mult / (1024.0 * 1024.0))
}

/// Words of an image or command that show a PyTorch job. `vllm`: vLLM's serving containers
/// are PyTorch jobs that share tensors between the processes of a tensor-parallel engine
/// through `/dev/shm` — its own docs say so ("Deploying with Docker", docs.vllm.ai v0.4–latest:
/// "use the ipc=host flag or --shm-size flag … vLLM uses PyTorch, which uses shared memory to
/// share data between processes under the hood, particularly for tensor parallel inference"),
/// whatever the image's tag or the script that starts it (`voipmonitor/vllm:…` with a
/// `serve-….sh` entrypoint).
const PYTORCH_WORDS: [&str; 10] = [
    "torch",
    "pytorch",
    "python",
    "train",
    "deepspeed",
    "accelerate",
    "lightning",
    "megatron",
    "nemo",
    "vllm",
];

fn pytorch_hint(text: &str) -> Option<String> {
    let low = text.to_ascii_lowercase();
    PYTORCH_WORDS
        .iter()
        .find(|w| low.contains(*w))
        .map(|w| w.to_string())
}

// ---- docker run -------------------------------------------------------------------------

/// Flags of `docker run`/`create` that take no value (opts.go `BoolVar`s, and run's own).
const DOCKER_BOOL: [&str; 18] = [
    "-d",
    "--detach",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "--rm",
    "--privileged",
    "-P",
    "--publish-all",
    "--read-only",
    "--init",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--sig-proxy",
    "--disable-content-trust",
    "-q",
    "--quiet",
];

fn docker_run_words(words: &[String]) -> Option<(bool, &[String])> {
    let mut i = 0;
    while words
        .get(i)
        .is_some_and(|w| w == "sudo" || w.contains('=') && !w.starts_with('-'))
    {
        i += 1;
    }
    let prog = words.get(i)?.rsplit('/').next()?;
    if !["docker", "nvidia-docker", "podman"].contains(&prog) {
        return None;
    }
    i += 1;
    if words.get(i).map(String::as_str) == Some("container") {
        i += 1;
    }
    matches!(words.get(i).map(String::as_str), Some("run" | "create"))
        .then(|| (prog == "nvidia-docker", &words[i + 1..]))
}

fn docker_run(nvidia_docker: bool, args: &[String]) -> Container {
    let mut c = Container::default();
    // the NVIDIA runtime (or the nvidia-docker wrapper) exposes what NVIDIA_VISIBLE_DEVICES
    // names: `all` in NVIDIA's CUDA images unless `-e NVIDIA_VISIBLE_DEVICES=` says otherwise
    let mut nvidia_runtime = nvidia_docker;
    let mut visible: Option<String> = None;
    let mut nvidia_devices = 0u32;
    let mut cdi_gpus: Vec<String> = Vec::new();
    let mut shm_size = None;
    let mut ipc = None;
    let mut host_shm = None;
    let mut tmpfs = None;
    let mut i = 0;
    let mut rest: &[String] = &[];
    while i < args.len() {
        let a = &args[i];
        if !a.starts_with('-') || a == "-" {
            rest = &args[i..];
            break;
        }
        if a == "--" {
            rest = &args[i + 1..];
            break;
        }
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        // combined short booleans: -it, -itd
        if !flag.starts_with("--")
            && flag.len() > 2
            && flag[1..].chars().all(|ch| "itdPq".contains(ch))
        {
            i += 1;
            continue;
        }
        if DOCKER_BOOL.contains(&flag.as_str()) {
            c.privileged |= flag == "--privileged";
            i += 1;
            continue;
        }
        let value = match inline {
            Some(v) => {
                i += 1;
                v
            }
            None => {
                i += 2;
                match args.get(i - 1) {
                    Some(v) => v.clone(),
                    None => break,
                }
            }
        };
        match flag.as_str() {
            "--shm-size" => shm_size = Some(value),
            "--ipc" => ipc = Some(value),
            "--name" => c.name = value,
            "--gpus" => c.gpus = Some(value),
            "--privileged" => c.privileged = value != "false",
            "--runtime" => nvidia_runtime |= value == "nvidia",
            "-e" | "--env" => {
                if let Some(v) = value.strip_prefix("NVIDIA_VISIBLE_DEVICES=") {
                    visible = Some(v.to_string());
                }
            }
            "--device" => {
                // a CDI device (`--device nvidia.com/gpu=all`, docker 25+ with CDI enabled;
                // nvidia-container-toolkit's `nvidia-ctk cdi generate` names them so)
                if let Some(d) = value.strip_prefix("nvidia.com/gpu=") {
                    cdi_gpus.push(d.to_string());
                }
                let host = value.split(':').next().unwrap_or("");
                if host
                    .strip_prefix("/dev/nvidia")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                {
                    nvidia_devices += 1;
                }
            }
            "--entrypoint" => c.command = Some(value),
            "-v" | "--volume" => {
                let parts: Vec<&str> = value.split(':').collect();
                if parts
                    .get(1)
                    .is_some_and(|t| t.trim_end_matches('/') == "/dev/shm")
                {
                    host_shm = Some(value.clone());
                }
            }
            "--mount" => {
                let kv: Vec<(&str, &str)> =
                    value.split(',').filter_map(|p| p.split_once('=')).collect();
                let get = |k: &[&str]| kv.iter().find(|(a, _)| k.contains(a)).map(|(_, v)| *v);
                if get(&["target", "destination", "dst"]) == Some("/dev/shm") {
                    if get(&["type"]) == Some("tmpfs") {
                        tmpfs = Some((value.clone(), get(&["tmpfs-size"]).map(str::to_string)));
                    } else {
                        host_shm = Some(value.clone());
                    }
                }
            }
            "--tmpfs" => {
                let (path, opts) = value.split_once(':').unwrap_or((&value, ""));
                if path == "/dev/shm" {
                    let size = opts
                        .split(',')
                        .find_map(|o| o.strip_prefix("size="))
                        .map(str::to_string);
                    tmpfs = Some((value.clone(), size));
                }
            }
            _ => {}
        }
    }
    if let Some((image, cmd)) = rest.split_first() {
        c.image = Some(image.clone());
        if !cmd.is_empty() {
            let cmd = cmd.join(" ");
            c.command = Some(match c.command.take() {
                Some(e) => format!("{e} {cmd}"),
                None => cmd,
            });
        }
    }
    if c.name.is_empty() {
        c.name = c.image.clone().unwrap_or_else(|| "docker run".into());
    }
    if c.gpus.is_none() {
        c.gpus = if cdi_gpus.iter().any(|d| d == "all") {
            Some("all".into())
        } else if !cdi_gpus.is_empty() {
            Some(format!("device={}", cdi_gpus.join(",")))
        } else if nvidia_devices > 0 {
            Some(nvidia_devices.to_string())
        } else if nvidia_runtime || visible.is_some() {
            // NVIDIA_VISIBLE_DEVICES lists devices (`0,1`), where `--gpus N` counts them
            Some(match visible.as_deref() {
                None => "all".into(),
                Some(v @ ("all" | "none" | "void" | "")) => v.to_string(),
                Some(v) => format!("device={v}"),
            })
        } else {
            None
        };
    }
    c.pytorch_hint = pytorch_hint(&format!(
        "{} {}",
        c.image.as_deref().unwrap_or(""),
        c.command.as_deref().unwrap_or("")
    ));
    c.cuda_hint = cuda_hint(c.image.as_deref(), None, c.command.as_deref());
    c.shm = resolve(
        ipc.as_deref(),
        host_shm,
        tmpfs,
        shm_size.map(|s| (docker_size_mib(&s), format!("--shm-size={s}"))),
    );
    c
}

/// The `/dev/shm` a docker or compose container gets, from its settings, in the order the
/// daemon applies them: a mount at /dev/shm replaces the IPC namespace's; `--ipc=host` shares
/// the host's; `--shm-size` sizes a private one.
fn resolve(
    ipc: Option<&str>,
    host_shm: Option<String>,
    tmpfs: Option<(String, Option<String>)>,
    shm_size: Option<(Option<f64>, String)>,
) -> Shm {
    if let Some(w) = host_shm {
        return Shm {
            how: "host-dev-shm",
            size_mib: None,
            written: Some(w),
        };
    }
    if let Some((w, size)) = tmpfs {
        return Shm {
            how: "tmpfs",
            size_mib: size.as_deref().and_then(docker_size_mib),
            written: Some(w),
        };
    }
    match ipc.map(str::trim) {
        Some("host") => {
            return Shm {
                how: "ipc-host",
                size_mib: None,
                written: Some("ipc: host".into()),
            };
        }
        Some("none") => {
            return Shm {
                how: "ipc-none",
                size_mib: Some(0.0),
                written: Some("ipc: none".into()),
            };
        }
        Some(m) if m.starts_with("container:") || m.starts_with("service:") => {
            return Shm {
                how: "ipc-shared",
                size_mib: None,
                written: Some(format!("ipc: {m}")),
            };
        }
        _ => {}
    }
    match shm_size {
        Some((size, w)) => Shm {
            how: "shm-size",
            size_mib: size,
            written: Some(w),
        },
        None => Shm {
            how: "default",
            size_mib: Some(DEFAULT_SHM_MIB),
            written: None,
        },
    }
}

// ---- compose and Kubernetes ------------------------------------------------------------

fn s(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(x) => Some(x.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        Yaml::Bool(b) => Some(b.to_string()),
        Yaml::Sequence(items) => Some(items.iter().filter_map(s).collect::<Vec<_>>().join(" ")),
        _ => None,
    }
}

/// The GPUs a compose service gets from the NVIDIA container runtime, as `docker run
/// --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=…` gives them ([`docker_run`]): the Compose
/// Specification's `runtime` ("specifies which runtime to use for the service's containers",
/// compose-spec `spec.md`, services) set to `nvidia`, and `environment` in either of its forms
/// (a list of `KEY=VAL` strings or a mapping; a key alone takes the shell's value, unknown
/// here). The runtime exposes what `NVIDIA_VISIBLE_DEVICES` names, `all` in NVIDIA's CUDA
/// images when the service does not set it (nvidia-container-toolkit
/// `internal/config/image/cuda_image.go`); the variable alone, without the runtime named,
/// counts as it does for `docker run -e`, the runtime being the daemon's default on GPU hosts.
fn compose_nvidia_runtime_gpus(svc: &Yaml) -> Option<String> {
    let runtime = svc
        .get("runtime")
        .and_then(s)
        .is_some_and(|r| r == "nvidia");
    const KEY: &str = "NVIDIA_VISIBLE_DEVICES";
    let visible: Option<Option<String>> = match svc.get("environment") {
        Some(Yaml::Sequence(items)) => items.iter().filter_map(s).find_map(|e| {
            let (k, v) = e.split_once('=').unwrap_or((e.as_str(), ""));
            (k.trim() == KEY).then(|| e.contains('=').then(|| v.trim().to_string()))
        }),
        Some(m @ Yaml::Mapping(_)) => m.get(KEY).map(|v| if v.is_null() { None } else { s(v) }),
        _ => None,
    };
    if !runtime && visible.is_none() {
        return None;
    }
    Some(match visible.flatten().as_deref() {
        None => "all".into(),
        Some(v @ ("all" | "none" | "void" | "")) => v.to_string(),
        Some(v) => format!("device={v}"),
    })
}

fn compose_service(name: &str, svc: &Yaml) -> Container {
    let mut c = Container {
        name: name.to_string(),
        image: svc.get("image").and_then(s),
        ..Container::default()
    };
    let cmd: Vec<String> = ["entrypoint", "command"]
        .iter()
        .filter_map(|k| svc.get(*k).and_then(s))
        .collect();
    if !cmd.is_empty() {
        c.command = Some(cmd.join(" "));
    }
    let build = svc.get("build").and_then(|b| {
        s(b).or_else(|| b.get("context").and_then(s))
            .or_else(|| b.get("dockerfile").and_then(s))
    });
    c.pytorch_hint = pytorch_hint(&format!(
        "{} {} {}",
        c.image.as_deref().unwrap_or(""),
        c.command.as_deref().unwrap_or(""),
        build.as_deref().unwrap_or("")
    ));
    c.gpus = svc.get("gpus").and_then(s).or_else(|| {
        let devices = svc
            .get("deploy")?
            .get("resources")?
            .get("reservations")?
            .get("devices")?
            .as_sequence()?;
        devices.iter().find_map(|d| {
            let caps = s(d.get("capabilities")?)?;
            caps.contains("gpu")
                .then(|| d.get("count").and_then(s).unwrap_or_else(|| "gpu".into()))
        })
    });
    if c.gpus.is_none() {
        c.gpus = compose_nvidia_runtime_gpus(svc);
    }
    // `devices` (compose-spec: `HOST_PATH:CONTAINER_PATH[:CGROUP_PERMISSIONS]`, or a CDI
    // device name such as `nvidia.com/gpu=all`): the GPU's device nodes or a CDI GPU
    if c.gpus.is_none() {
        let devs: Vec<String> = svc
            .get("devices")
            .and_then(Yaml::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(s)
            .collect();
        let nodes = devs
            .iter()
            .filter(|d| {
                d.split(':')
                    .next()
                    .and_then(|h| h.strip_prefix("/dev/nvidia"))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .count();
        c.gpus = match devs.iter().find_map(|d| d.strip_prefix("nvidia.com/gpu=")) {
            Some("all") => Some("all".into()),
            Some(d) => Some(format!("device={d}")),
            None => (nodes > 0).then(|| nodes.to_string()),
        };
    }
    c.privileged = svc.get("privileged").and_then(Yaml::as_bool) == Some(true);
    c.gpus_elsewhere = svc.get("extends").is_some();
    c.build_shm_size = svc.get("build").and_then(|b| b.get("shm_size")).and_then(s);
    let target = svc.get("build").and_then(|b| b.get("target")).and_then(s);
    c.cuda_hint = cuda_hint(c.image.as_deref(), target.as_deref(), c.command.as_deref());
    let mut host_shm = None;
    let mut tmpfs = None;
    for v in svc
        .get("volumes")
        .and_then(Yaml::as_sequence)
        .into_iter()
        .flatten()
    {
        match v {
            Yaml::String(short) => {
                let parts: Vec<&str> = short.split(':').collect();
                if parts.len() >= 2 && parts[1].trim_end_matches('/') == "/dev/shm" {
                    host_shm = Some(short.clone());
                }
            }
            Yaml::Mapping(_) if v.get("target").and_then(s).as_deref() == Some("/dev/shm") => {
                let ty = v.get("type").and_then(s).unwrap_or_default();
                if ty == "tmpfs" {
                    tmpfs = Some((
                        "volumes: tmpfs at /dev/shm".to_string(),
                        v.get("tmpfs").and_then(|t| t.get("size")).and_then(s),
                    ));
                } else {
                    host_shm = Some(format!(
                        "volumes: {} {} at /dev/shm",
                        ty,
                        v.get("source").and_then(s).unwrap_or_default()
                    ));
                }
            }
            _ => {}
        }
    }
    let tmpfs_list = svc.get("tmpfs").map(|t| match t {
        Yaml::Sequence(items) => items.iter().filter_map(s).collect(),
        other => s(other).into_iter().collect::<Vec<_>>(),
    });
    for t in tmpfs_list.into_iter().flatten() {
        let (path, opts) = t.split_once(':').unwrap_or((&t, ""));
        if path == "/dev/shm" {
            let size = opts
                .split(',')
                .find_map(|o| o.strip_prefix("size="))
                .map(str::to_string);
            tmpfs = Some((format!("tmpfs: {t}"), size));
        }
    }
    let shm_size = svc
        .get("shm_size")
        .and_then(s)
        .map(|v| (docker_size_mib(&v), format!("shm_size: {v}")));
    c.shm = resolve(
        svc.get("ipc").and_then(s).as_deref(),
        host_shm,
        tmpfs,
        shm_size,
    );
    c
}

/// Every PodSpec in a Kubernetes object: a value holding a `containers` list.
fn pod_specs<'a>(v: &'a Yaml, out: &mut Vec<&'a Yaml>, depth: usize) {
    if depth > 12 || out.len() >= super::MAX_ITEMS {
        return;
    }
    match v {
        Yaml::Mapping(m) => {
            if v.get("containers").is_some_and(Yaml::is_sequence) {
                out.push(v);
                return;
            }
            for (_, x) in m {
                pod_specs(x, out, depth + 1);
            }
        }
        Yaml::Sequence(items) => {
            for x in items {
                pod_specs(x, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The pod specs of a KubeRay object's Ray nodes (`RayCluster`, and the `rayClusterSpec` of a
/// `RayJob` or `RayService`, apiVersion `ray.io/*`): each group's `template.spec`, with the
/// group's `rayStartParams`. (A RayJob's `submitterPodTemplate` is not a Ray node.)
fn ray_node_specs(d: &Yaml) -> Vec<(&Yaml, Option<&Yaml>)> {
    fn walk<'a>(v: &'a Yaml, out: &mut Vec<(&'a Yaml, Option<&'a Yaml>)>, depth: usize) {
        if depth > 8 || out.len() >= super::MAX_ITEMS {
            return;
        }
        match v {
            Yaml::Mapping(m) => {
                if let Some(spec) = v.get("template").and_then(|t| t.get("spec"))
                    && spec.get("containers").is_some_and(Yaml::is_sequence)
                {
                    out.push((spec, v.get("rayStartParams")));
                    return;
                }
                for (_, x) in m {
                    walk(x, out, depth + 1);
                }
            }
            Yaml::Sequence(items) => {
                for x in items {
                    walk(x, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    let ray = d
        .get("apiVersion")
        .and_then(s)
        .is_some_and(|a| a.starts_with("ray.io/"))
        && d.get("kind")
            .and_then(s)
            .is_some_and(|k| ["RayCluster", "RayJob", "RayService"].contains(&k.as_str()));
    let mut out = Vec::new();
    if ray {
        for key in [
            "headGroupSpec",
            "workerGroupSpecs",
            "rayClusterSpec",
            "rayClusterConfig",
        ] {
            if let Some(v) = d.get("spec").and_then(|sp| sp.get(key)) {
                walk(v, &mut out, 0);
            }
        }
    }
    out
}

/// KubeRay's operator gives the Ray container of every Ray node (`RayContainerIndex`, the
/// first) a `shared-mem` emptyDir of medium Memory at `/dev/shm` when the spec mounts none
/// there (ray-project/kuberay `ray-operator/controllers/ray/common/pod.go`: `BuildPod` →
/// `addEmptyDir(…, SharedMemoryVolumeName, SharedMemoryVolumeMountPath,
/// corev1.StorageMediumMemory)`; `makeEmptyDirVolume` sizes it to the container's memory
/// request, else its limit, else leaves it unlimited), unless `rayStartParams` sets
/// `plasma-directory` (the object store elsewhere; `PlasmaDirectoryParamKey`, 2025-).
fn kuberay_shared_mem(spec: &Yaml, params: Option<&Yaml>, cs: &mut [Container]) {
    if params.is_some_and(|p| p.get("plasma-directory").is_some()) {
        return;
    }
    let Some(c) = cs.first_mut() else { return };
    if c.shm.how != "default" {
        return;
    }
    let mem = spec
        .get("containers")
        .and_then(Yaml::as_sequence)
        .and_then(|v| v.first())
        .and_then(|c| c.get("resources"))
        .and_then(|r| {
            ["requests", "limits"]
                .iter()
                .find_map(|k| r.get(*k)?.get("memory").and_then(s))
        });
    c.shm = Shm {
        how: "emptydir-memory",
        size_mib: mem.as_deref().and_then(k8s_quantity_mib),
        written: Some(format!(
            "no /dev/shm in the spec: KubeRay mounts its `shared-mem` emptyDir (medium: Memory{}) there",
            mem.map(|m| format!(", sizeLimit {m}")).unwrap_or_default()
        )),
    };
}

fn pod_containers(spec: &Yaml) -> Vec<Container> {
    let host_ipc = spec.get("hostIPC").and_then(Yaml::as_bool) == Some(true);
    let volumes: Vec<&Yaml> = spec
        .get("volumes")
        .and_then(Yaml::as_sequence)
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for c in spec
        .get("containers")
        .and_then(Yaml::as_sequence)
        .into_iter()
        .flatten()
    {
        let mut k = Container {
            name: c
                .get("name")
                .and_then(s)
                .unwrap_or_else(|| "container".into()),
            image: c.get("image").and_then(s),
            ..Container::default()
        };
        let cmd: Vec<String> = ["command", "args"]
            .iter()
            .filter_map(|f| c.get(*f).and_then(s))
            .collect();
        if !cmd.is_empty() {
            k.command = Some(cmd.join(" "));
        }
        k.pytorch_hint = pytorch_hint(&format!(
            "{} {}",
            k.image.as_deref().unwrap_or(""),
            k.command.as_deref().unwrap_or("")
        ));
        k.gpus = ["limits", "requests"].iter().find_map(|r| {
            c.get("resources")?
                .get(*r)?
                .get("nvidia.com/gpu")
                .and_then(s)
        });
        // another NVIDIA resource (a MIG profile `nvidia.com/mig-1g.5gb`, a shared
        // `nvidia.com/gpu.shared`): the device plugin gives the container that GPU
        k.gpus_elsewhere = ["limits", "requests"].iter().any(|r| {
            c.get("resources")
                .and_then(|x| x.get(*r))
                .and_then(Yaml::as_mapping)
                .is_some_and(|m| {
                    m.keys()
                        .filter_map(|k| k.as_str())
                        .any(|k| k.starts_with("nvidia.com/"))
                })
        }) || c
            .get("env")
            .and_then(Yaml::as_sequence)
            .into_iter()
            .flatten()
            .any(|e| e.get("name").and_then(s).as_deref() == Some("NVIDIA_VISIBLE_DEVICES"))
            || spec
                .get("runtimeClassName")
                .and_then(s)
                .is_some_and(|r| r.contains("nvidia"));
        k.privileged = c
            .get("securityContext")
            .and_then(|x| x.get("privileged"))
            .and_then(Yaml::as_bool)
            == Some(true);
        k.cuda_hint = cuda_hint(k.image.as_deref(), None, k.command.as_deref());
        let mount = c
            .get("volumeMounts")
            .and_then(Yaml::as_sequence)
            .into_iter()
            .flatten()
            .find(|m| {
                m.get("mountPath")
                    .and_then(s)
                    .is_some_and(|p| p.trim_end_matches('/') == "/dev/shm")
            });
        // a mount at /dev/shm that names no volume is no VolumeMount (`name` is required,
        // see `pod_fragment`): the API server refuses the pod, so its /dev/shm is not known
        if mount.is_some_and(|m| m.get("name").and_then(s).is_none()) {
            k.shm = Shm {
                how: "unnamed-mount",
                size_mib: None,
                written: Some("a /dev/shm mount that names no volume".into()),
            };
            out.push(k);
            continue;
        }
        k.shm = match mount.and_then(|m| m.get("name").and_then(s)) {
            Some(vol) => {
                let v = volumes
                    .iter()
                    .find(|v| v.get("name").and_then(s).as_deref() == Some(vol.as_str()));
                match v {
                    Some(v) if v.get("emptyDir").is_some() => {
                        let e = v.get("emptyDir").expect("checked");
                        let memory = e.get("medium").and_then(s).as_deref() == Some("Memory");
                        let limit = e.get("sizeLimit").and_then(s);
                        Shm {
                            how: if memory {
                                "emptydir-memory"
                            } else {
                                "emptydir-disk"
                            },
                            size_mib: limit.as_deref().and_then(k8s_quantity_mib),
                            written: Some(format!(
                                "emptyDir{}{} mounted at /dev/shm",
                                if memory { " medium: Memory" } else { "" },
                                limit
                                    .map(|l| format!(" sizeLimit: {l}"))
                                    .unwrap_or_default()
                            )),
                        }
                    }
                    Some(v) if v.get("hostPath").is_some() => Shm {
                        how: "host-dev-shm",
                        size_mib: None,
                        written: Some(format!("hostPath volume `{vol}` mounted at /dev/shm")),
                    },
                    _ => Shm {
                        how: "host-dev-shm",
                        size_mib: None,
                        written: Some(format!("volume `{vol}` mounted at /dev/shm")),
                    },
                }
            }
            None if host_ipc => Shm {
                how: "ipc-host",
                size_mib: None,
                written: Some("hostIPC: true".into()),
            },
            None => Shm {
                how: "default",
                size_mib: Some(DEFAULT_SHM_MIB),
                written: None,
            },
        };
        out.push(k);
    }
    out
}

/// A listing copied from a page Asciidoctor rendered (OpenShift's and many vendors' docs),
/// without its callout markers. In AsciiDoc a callout `<N>` (or `<.>`, numbered in order) may
/// only end a line of a listing, several in a row, optionally behind a line comment
/// (asciidoctor `lib/asciidoctor/rx.rb`, `CalloutScanRx`, which requires the markers to reach
/// the end of the line); the HTML5 converter renders each as `<b class="conum">(N)</b>`, or
/// `<i class="conum" data-value="N"></i><b>(N)</b>` with font icons (asciidoctor
/// `lib/asciidoctor/converter/html5.rb`, `convert_inline_callout`, at 009d63a8), so the copied
/// text ends such lines in `(1)`, `(2)`, … and a YAML listing no longer parses (`volumes:   (1)`
/// gives a mapping key a scalar and a block at once). The markers are taken off only when they
/// are that sequence: at the end of lines, numbered from 1 in the order they appear, each the
/// same as or one more than the one before; otherwise `None`, and the text is read as it is.
fn without_callouts(text: &str) -> Option<String> {
    fn trailing(line: &str) -> (&str, Vec<u32>) {
        let mut rest = line.trim_end();
        let mut nums = Vec::new();
        while let Some(body) = rest.strip_suffix(')')
            && let Some((head, n)) = body.rsplit_once('(')
            && !n.is_empty()
            && n.len() <= 2
            && n.bytes().all(|b| b.is_ascii_digit())
            && (head.is_empty() || head.ends_with([' ', '\t']))
        {
            nums.push(n.parse::<u32>().unwrap_or(0));
            rest = head.trim_end();
        }
        nums.reverse();
        (rest, nums)
    }
    let mut last = 0u32;
    let mut out = String::with_capacity(text.len());
    for l in text.lines() {
        let (rest, nums) = trailing(l);
        for n in &nums {
            if *n == 0 || (*n != last && *n != last + 1) {
                return None;
            }
            last = *n;
        }
        out.push_str(if nums.is_empty() { l } else { rest });
        out.push('\n');
    }
    (last > 0).then_some(out)
}

/// A pasted spec put in the form its YAML would have when the tool that reads it reads it, or
/// `None` when nothing needed it:
///
/// - a Helm template (Go `text/template`, pkg.go.dev/text/template "Actions": "data evaluations
///   or control structures — are delimited by `{{` and `}}`", `{{-`/`-}}` trimming the space
///   beside them): Helm renders the actions before the YAML is read. A line that is one action
///   alone (`{{- if .Values.shm.enabled }}`, `{{- end }}`) is a control structure and is left
///   out; an action that starts a value (`- name: {{ .Release.Name }}-storage`) is quoted, as
///   YAML 1.2 §7.3.3 does not let a plain scalar start with the flow indicator `{`: the value
///   stays a string whose `{{` says the chart fills it in ([`is_templated`]).
/// - a compose service quoted without the file's top (vllm#2013: `<<: *default-gpu` under the
///   service, the anchor defined above the quote): YAML 1.2 §7.1 makes an alias of an anchor
///   the document does not hold an error, so the whole paste would not parse. The merge key's
///   line is left out: the service's own keys win over a merged mapping's (yaml.org/type/merge),
///   and what the anchor adds is not in the text. Only where the text has no `services:` line:
///   a file's services are read with the file's anchors.
fn as_yaml_would_read_it(text: &str) -> Option<String> {
    let anchors: Vec<&str> = text
        .split('&')
        .skip(1)
        .filter_map(|r| r.split([' ', '\n', '\r', '\t']).next())
        .filter(|a| !a.is_empty())
        .collect();
    // only a service quoted without its file's top: a file (or a part of one) that has its
    // `services:` line is read whole, where its anchors are (a paste cut into parts must not
    // lose `x-common`'s `ipc: host` by reading its services alone)
    let quoted_service = !text.lines().any(|l| l.starts_with("services:"));
    let mut changed = false;
    let mut out = String::with_capacity(text.len() + 16);
    for l in text.lines() {
        let t = l.trim();
        // an action alone on its line: a control structure Helm removes
        if t.starts_with("{{") && t.ends_with("}}") && t[2..].find("}}") == Some(t.len() - 4) {
            changed = true;
            continue;
        }
        // `<<: *name` with no `&name` in the text
        if let Some(alias) = t.strip_prefix("<<:").map(str::trim)
            && let Some(name) = alias.strip_prefix('*')
            && quoted_service
            && !anchors.contains(&name)
        {
            changed = true;
            continue;
        }
        // an action that starts a plain value: after `key: ` or a list item's `- `
        if let Some(at) = l.find("{{") {
            let head = l[..at].trim_end();
            if (head.ends_with(':') || head.ends_with('-') || head.ends_with("- "))
                && head.len() < at
            {
                let value = l[at..].trim_end();
                out.push_str(&l[..at]);
                out.push('\'');
                out.push_str(&value.replace('\'', "''"));
                out.push_str("'\n");
                changed = true;
                continue;
            }
        }
        out.push_str(l);
        out.push('\n');
    }
    changed.then_some(out)
}

/// The YAML documents of the text (mappings, or lists of mappings): the whole text, else its
/// fenced code blocks.
fn yaml_docs(text: &str) -> Vec<Yaml> {
    let parse = |t: &str| -> Vec<Yaml> {
        if t.len() > 1 << 20 {
            return Vec::new();
        }
        // yaml_serde 0.10 panics ("unexpected end of mapping", `de.rs`) when the document
        // after one that failed mid-mapping (a merge `<<: *x` of an anchor the text lacks,
        // then a line that is no YAML) starts at that mapping's end: such a panic ends the
        // reading of the stream, as an error ends the reading of its document
        let mut docs = serde_yaml::Deserializer::from_str(t).take(super::MAX_ITEMS);
        let mut read: Vec<Yaml> = Vec::new();
        loop {
            let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                docs.next().map(|d| serde::Deserialize::deserialize(d).ok())
            }));
            match next {
                Ok(Some(Some(d))) => read.push(d),
                Ok(Some(None)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        read.into_iter()
            .map(|mut d: Yaml| {
                // `<<: *anchor` (the YAML merge type) brings the anchored mapping's keys in,
                // as compose does for its `x-` extension blocks; a malformed merge is left as
                // written
                let mut merged = d.clone();
                if merged.apply_merge().is_ok() {
                    d = merged;
                }
                d
            })
            .filter(|d: &Yaml| {
                // a mapping, or a quoted list of them (Argo's `templates`); not a bullet list
                d.is_mapping()
                    || d.as_sequence()
                        .is_some_and(|v| !v.is_empty() && v.iter().all(Yaml::is_mapping))
            })
            .collect()
    };
    let whole = parse(text);
    if !whole.is_empty() {
        return whole;
    }
    if let Some(bare) = without_callouts(text) {
        let whole = parse(&bare);
        if !whole.is_empty() {
            return whole;
        }
    }
    if let Some(ready) = as_yaml_would_read_it(text) {
        let whole = parse(&ready);
        if !whole.is_empty() {
            return whole;
        }
    }
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            match block.take() {
                Some(b) => out.extend(parse(&b)),
                None => block = Some(String::new()),
            }
            continue;
        }
        if let Some(b) = block.as_mut() {
            b.push_str(l);
            b.push('\n');
        }
    }
    out
}

// ---- Argo Workflows ----------------------------------------------------------------------

/// The name Argo gives the container that runs a template's `container` or `script`
/// (argo-workflows `workflow/common/common.go`, `MainContainerName`).
const ARGO_MAIN: &str = "main";

/// The Container an Argo template runs: its `container`, or its `script` (a Container with a
/// `source`), when it names an image.
fn argo_container(t: &Yaml) -> Option<&Yaml> {
    ["container", "script"]
        .iter()
        .filter_map(|k| t.get(*k))
        .find(|c| c.is_mapping() && c.get("image").is_some())
}

/// Every Argo template that runs a pod, anywhere in a document.
fn argo_templates<'a>(v: &'a Yaml, out: &mut Vec<&'a Yaml>, depth: usize) {
    if depth > 12 || out.len() >= super::MAX_ITEMS {
        return;
    }
    match v {
        Yaml::Mapping(m) => {
            if argo_container(v).is_some() {
                out.push(v);
                return;
            }
            for (_, x) in m {
                argo_templates(x, out, depth + 1);
            }
        }
        Yaml::Sequence(items) => {
            for x in items {
                argo_templates(x, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The workflow-level `volumes` of an Argo Workflow/WorkflowTemplate (`spec.volumes`) or
/// CronWorkflow (`spec.workflowSpec.volumes`), which every template's pod mounts from.
fn argo_workflow_volumes(d: &Yaml) -> Vec<Yaml> {
    let spec = d.get("spec");
    [
        spec.and_then(|s| s.get("volumes")),
        spec.and_then(|s| s.get("workflowSpec"))
            .and_then(|w| w.get("volumes")),
    ]
    .into_iter()
    .flatten()
    .filter_map(Yaml::as_sequence)
    .flatten()
    .cloned()
    .collect()
}

/// An Argo template as the pod it runs: its container (named `main` unless it says), the
/// template's and the workflow's volumes, and what its `podSpecPatch` adds (the `main`
/// container's resources and mounts, volumes, `hostIPC`). A patch that is not YAML (a
/// parameter left unquoted) is left out.
fn argo_pod(t: &Yaml, workflow_volumes: &[Yaml]) -> Option<Container> {
    let mut c = argo_container(t)?.as_mapping()?.clone();
    if !c.contains_key("name") {
        c.insert("name".into(), ARGO_MAIN.into());
    }
    let main = c.get("name").and_then(s).unwrap_or_default();
    let mut volumes: Vec<Yaml> = t
        .get("volumes")
        .and_then(Yaml::as_sequence)
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    volumes.extend(workflow_volumes.iter().cloned());
    let mut spec = serde_yaml::Mapping::new();
    let patch = t
        .get("podSpecPatch")
        .and_then(Yaml::as_str)
        .filter(|p| p.len() < 1 << 16)
        .and_then(|p| serde_yaml::from_str::<Yaml>(p).ok())
        .filter(Yaml::is_mapping);
    if let Some(p) = &patch {
        if let Some(h) = p.get("hostIPC") {
            spec.insert("hostIPC".into(), h.clone());
        }
        volumes.extend(
            p.get("volumes")
                .and_then(Yaml::as_sequence)
                .into_iter()
                .flatten()
                .cloned(),
        );
        let pc = p
            .get("containers")
            .and_then(Yaml::as_sequence)
            .into_iter()
            .flatten()
            .find(|x| x.get("name").and_then(s).as_deref() == Some(main.as_str()));
        if let Some(pc) = pc {
            if let Some(r) = pc.get("resources") {
                c.insert("resources".into(), r.clone());
            }
            if let Some(m) = pc.get("volumeMounts").and_then(Yaml::as_sequence) {
                let mut mounts: Vec<Yaml> = c
                    .get("volumeMounts")
                    .and_then(Yaml::as_sequence)
                    .cloned()
                    .unwrap_or_default();
                mounts.extend(m.iter().cloned());
                c.insert("volumeMounts".into(), Yaml::Sequence(mounts));
            }
        }
    }
    spec.insert("containers".into(), Yaml::Sequence(vec![Yaml::Mapping(c)]));
    spec.insert("volumes".into(), Yaml::Sequence(volumes));
    let mut k = pod_containers(&Yaml::Mapping(spec)).into_iter().next()?;
    if let Some(n) = t.get("name").and_then(s) {
        k.name = n;
    }
    // a script's source says more than its interpreter (`python` runs any script)
    if let Some(h) = t
        .get("script")
        .and_then(|x| x.get("source"))
        .and_then(s)
        .and_then(|src| pytorch_hint(&src))
        && k.pytorch_hint.as_deref().is_none_or(|k| k == "python")
    {
        k.pytorch_hint = Some(h);
    }
    Some(k)
}

/// The pods an Argo document (or a quoted list of its templates) runs that could be a GPU
/// training step: one that asks for GPUs (`nvidia.com/gpu`, in the container or its
/// podSpecPatch) or names a training framework. A workflow's other steps (a Python script
/// that downloads or tokenizes data, a shell step) are left out: `python` alone does not make
/// a template a training job, and their `/dev/shm` serves no DataLoader.
fn argo_pods(d: &Yaml) -> Vec<Container> {
    let mut ts = Vec::new();
    argo_templates(d, &mut ts, 0);
    let wv = argo_workflow_volumes(d);
    ts.into_iter()
        .filter_map(|t| argo_pod(t, &wv))
        .filter(|c| c.gpus.is_some() || c.pytorch_hint.as_deref().is_some_and(|h| h != "python"))
        .collect()
}

fn is_compose(d: &Yaml) -> bool {
    d.get("services")
        .and_then(Yaml::as_mapping)
        .is_some_and(|m| is_service_map(m) || is_override_services(m))
}

/// The services of a compose file that completes another (`docker compose -f base.yaml -f
/// override.yaml`): a `services:` mapping of mappings where some service names what it runs
/// and some other names neither an `image` nor a `build`. Compose merges the files before it
/// checks the model (compose-spec `13-merge.md`, "Merge and override": "a Compose application
/// model [is] defined by multiple Compose files … merged together"); compose-spec/compose-go v2
/// `loader/validate.go`, `checkConsistency`, then rejects a service with neither (`service %q
/// has neither an image nor a build context specified`), so a file holding one cannot run on
/// its own: its base file gives what it leaves out (h105: Lumigator's
/// `docker-compose.gpu.override.yaml`, whose `backend` sets environment variables only).
fn is_override_services(m: &serde_yaml::Mapping) -> bool {
    m.values().all(Yaml::is_mapping)
        && m.values().any(|v| {
            v.get("image").is_some() || v.get("build").is_some() || v.get("command").is_some()
        })
        && m.values()
            .any(|v| v.get("image").is_none() && v.get("build").is_none())
}

/// `Shm::how` of a service in an override file (`is_override_services`) that sets no
/// /dev/shm of its own: the base file's setting (its `shm_size`, `ipc` or mount; compose-spec
/// `13-merge.md`: a key the override leaves out keeps the base's value) decides, not the
/// runtime's 64 MiB.
pub const SHM_FROM_BASE_FILE: &str = "base-file";

/// A mapping of compose services: each a mapping that names what it runs (`image`, `build` or
/// `command`).
fn is_service_map(m: &serde_yaml::Mapping) -> bool {
    !m.is_empty()
        && m.values().all(|v| {
            v.is_mapping()
                && (v.get("image").is_some()
                    || v.get("build").is_some()
                    || v.get("command").is_some())
        })
}

/// Service keys of the Compose Specification (compose-spec `schema/compose-spec.json`,
/// `definitions.service.properties`) that no Kubernetes object or Argo template has at a
/// container's level.
const COMPOSE_ONLY_KEYS: [&str; 8] = [
    "shm_size",
    "ipc",
    "deploy",
    "runtime",
    "restart",
    "container_name",
    "network_mode",
    "depends_on",
];

/// The services of a compose file quoted without its `services:` line (vllm#16841 pastes the
/// one service at its indent): a service map ([`is_service_map`]) where some service has a key
/// only a compose service has ([`COMPOSE_ONLY_KEYS`]), and no top-level key of a compose file or
/// a Kubernetes object.
fn quoted_services(d: &Yaml) -> Option<&serde_yaml::Mapping> {
    let m = d.as_mapping()?;
    let top = [
        "services",
        "apiVersion",
        "kind",
        "spec",
        "volumes",
        "networks",
    ];
    (is_service_map(m)
        && !top.iter().any(|k| d.get(*k).is_some())
        && m.values()
            .any(|v| COMPOSE_ONLY_KEYS.iter().any(|k| v.get(*k).is_some())))
    .then_some(m)
}

fn is_kubernetes(d: &Yaml) -> bool {
    d.get("apiVersion").is_some() && d.get("kind").is_some()
}

/// The source name of the pods of Argo Workflow templates (see `argo_pod`).
pub const ARGO: &str = "argo workflow";

/// The source name of a PodSpec read from a quoted fragment (see `pod_fragment`).
pub const K8S_FRAGMENT: &str = "kubernetes fragment";

/// A PodSpec quoted in pieces: the `volumeMounts` list and the `volumes` list without the pod
/// around them, at whatever indent the quote left them, between `...` or `---` lines. Each
/// block (a run of lines at or right of its first line's indent) is dedented and parsed alone;
/// the mount at `/dev/shm` and the volumes are put back into one PodSpec and read as a pod's.
fn pod_fragment(text: &str) -> Option<Container> {
    if !text.contains("/dev/shm") || !text.contains("mountPath") {
        return None;
    }
    // a Helm template's actions, as the chart renders them (see `as_yaml_would_read_it`)
    let ready = as_yaml_would_read_it(text);
    let text = ready.as_deref().unwrap_or(text);
    let mut blocks: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut base = 0usize;
    for l in text.lines().take(10_000) {
        let t = l.trim();
        let ind = l.len() - l.trim_start().len();
        let boundary = t.is_empty() || t == "..." || t == "---" || t.starts_with("```");
        if boundary || (!cur.is_empty() && ind < base) {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
            if boundary {
                continue;
            }
        }
        if cur.is_empty() {
            base = ind;
        }
        cur.push_str(l.get(base.min(ind)..).unwrap_or(""));
        cur.push('\n');
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    fn walk(v: &Yaml, mounts: &mut Vec<Yaml>, volumes: &mut Vec<Yaml>, depth: usize) {
        if depth > 12 || mounts.len() + volumes.len() >= super::MAX_ITEMS {
            return;
        }
        match v {
            Yaml::Mapping(m) => {
                // a VolumeMount has both `name` and `mountPath` (k8s.io/api `core/v1/types.go`,
                // `VolumeMount`: `Name string \`json:"name"\`` "This must match the Name of a
                // Volume." and `MountPath string \`json:"mountPath"\``, neither `omitempty`,
                // so both required); a chart's own values that merely hold a `mountPath`
                // (porter-charts' `emptyDir: {mountPath: /dev/shm, volumeOptions: …}`) are not
                // a PodSpec's mount
                if v.get("mountPath").is_some() && v.get("name").is_some() {
                    mounts.push(v.clone());
                } else if v.get("name").is_some()
                    && ["emptyDir", "hostPath"].iter().any(|k| v.get(*k).is_some())
                {
                    volumes.push(v.clone());
                } else {
                    for (_, x) in m {
                        walk(x, mounts, volumes, depth + 1);
                    }
                }
            }
            Yaml::Sequence(items) => {
                for x in items {
                    walk(x, mounts, volumes, depth + 1);
                }
            }
            _ => {}
        }
    }
    for b in blocks.iter().take(super::MAX_ITEMS) {
        if b.len() > 1 << 20 {
            continue;
        }
        if let Ok(v) = serde_yaml::from_str::<Yaml>(b) {
            walk(&v, &mut mounts, &mut volumes, 0);
        }
    }
    let shm_mount = mounts.into_iter().find(|m| {
        m.get("mountPath")
            .and_then(s)
            .is_some_and(|p| p.trim_end_matches('/') == "/dev/shm")
    })?;
    let mut container = serde_yaml::Mapping::new();
    container.insert("name".into(), "pod fragment".into());
    container.insert("volumeMounts".into(), Yaml::Sequence(vec![shm_mount]));
    let mut spec = serde_yaml::Mapping::new();
    spec.insert("containers".into(), Yaml::Sequence(vec![container.into()]));
    spec.insert("volumes".into(), Yaml::Sequence(volumes));
    pod_containers(&Yaml::Mapping(spec)).into_iter().next()
}

/// Every container spec the text holds: `docker run` lines, a compose file, Kubernetes objects
/// (or, when there is none of these, a quoted PodSpec fragment that mounts `/dev/shm`).
pub fn parse_container_specs(text: &str) -> Vec<ContainerSpec> {
    let mut out = Vec::new();
    // a wrapper script's `docker run ${RUNTIME} ${NAME} --rm … ${IMAGE}` is read with the
    // variables it assigns above the command (`IMAGE="raster-vision-pytorch"`), as bash runs it
    let runs: Vec<Container> = crate::formats::launcher::expanded_commands(text)
        .into_iter()
        .chain(
            substituted_docker_runs(text)
                .iter()
                .flat_map(|b| crate::formats::launcher::expanded_commands(b)),
        )
        .filter_map(|w| docker_run_words(&w).map(|(nv, a)| docker_run(nv, a)))
        .take(super::MAX_ITEMS)
        .collect();
    if !runs.is_empty() {
        out.push(ContainerSpec {
            source: "docker-run",
            containers: runs,
        });
    }
    for d in yaml_docs(text) {
        if is_compose(&d) || quoted_services(&d).is_some() {
            let containers = d
                .get("services")
                .and_then(Yaml::as_mapping)
                .or_else(|| quoted_services(&d))
                .into_iter()
                .flatten()
                .take(super::MAX_ITEMS)
                .map(|(k, v)| compose_service(&s(k).unwrap_or_default(), v))
                .collect::<Vec<_>>();
            let mut containers = containers;
            if d.get("services")
                .and_then(Yaml::as_mapping)
                .is_some_and(is_override_services)
            {
                // the base file may give the service its GPUs as well
                for c in containers.iter_mut() {
                    c.gpus_elsewhere = true;
                }
                for c in containers.iter_mut().filter(|c| c.shm.how == "default") {
                    c.shm = Shm {
                        how: SHM_FROM_BASE_FILE,
                        size_mib: None,
                        written: Some(
                            "no shm_size, ipc or /dev/shm mount in this file, which completes a base compose file (a service in it names neither image nor build)".into(),
                        ),
                    };
                }
            }
            out.push(ContainerSpec {
                source: "compose",
                containers,
            });
        } else {
            if is_kubernetes(&d) {
                let mut specs = Vec::new();
                pod_specs(&d, &mut specs, 0);
                let ray = ray_node_specs(&d);
                let containers: Vec<Container> = specs
                    .into_iter()
                    .flat_map(|spec| {
                        let mut cs = pod_containers(spec);
                        if let Some(params) = ray
                            .iter()
                            .find(|(g, _)| std::ptr::eq(*g, spec))
                            .map(|(_, p)| *p)
                        {
                            kuberay_shared_mem(spec, params, &mut cs);
                        }
                        cs
                    })
                    .collect();
                if !containers.is_empty() {
                    out.push(ContainerSpec {
                        source: "kubernetes",
                        containers,
                    });
                }
            }
            let argo = argo_pods(&d);
            if !argo.is_empty() {
                out.push(ContainerSpec {
                    source: ARGO,
                    containers: argo,
                });
            }
        }
    }
    if out.is_empty()
        && let Some(c) = pod_fragment(text)
    {
        out.push(ContainerSpec {
            source: K8S_FRAGMENT,
            containers: vec![c],
        });
    }
    out
}

const DOCKER_RUN_PREFIXES: [&str; 5] = [
    "docker run",
    "docker container run",
    "nvidia-docker run",
    "podman run",
    "docker create",
];

/// A line that starts a `docker run` (or `create`, `podman run`, `nvidia-docker run`) command,
/// after a prompt or `sudo`, or opens a command substitution that runs one
/// (`container_name=$(docker run \`, see [`substituted_docker_runs`]).
fn is_docker_run_line(l: &str) -> bool {
    let starts = |l: &str| {
        let l = l
            .trim_start()
            .trim_start_matches("$ ")
            .trim_start_matches("sudo ");
        DOCKER_RUN_PREFIXES.iter().any(|p| l.starts_with(p))
    };
    starts(l) || l.match_indices("$(").any(|(i, _)| starts(&l[i + 2..]))
}

/// The bodies of the command substitutions (`$( … )`) that run `docker run`: bash runs the
/// command inside `$(command)` in a subshell and puts its output in place of it (GNU Bash
/// manual 5.2, §3.5.4 "Command Substitution"), so `container_name=$(docker run --gpus all …
/// "${DOCKER_IMAGE}")` starts the container as a `docker run` line would; CI scripts keep the
/// id it prints to `docker exec` the job into it (PiPPy's `pippy_tests.yaml` before #420, a
/// GitHub Actions step's `run: |` script). The command reader leaves command substitutions
/// out (a `$(hostname)` is no command of the job), so they are found here: from `$(` to the
/// `)` that closes it, past quoted text and nested parentheses; `$((` is arithmetic, not a
/// command.
fn substituted_docker_runs(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = text[i..].find("$(") {
        let start = i + off + 2;
        i = start;
        if b.get(start) == Some(&b'(') {
            continue;
        }
        let (mut depth, mut j, mut quote) = (1usize, start, None::<u8>);
        while j < b.len() {
            let ch = b[j];
            match quote {
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None => match ch {
                    b'\'' | b'"' => quote = Some(ch),
                    b'\\' => j += 1,
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                },
            }
            j += 1;
        }
        let body = &text[start..j.min(b.len())];
        let head = body.trim_start().trim_start_matches("sudo ");
        if DOCKER_RUN_PREFIXES.iter().any(|p| head.starts_with(p)) {
            out.push(body.to_string());
            if out.len() >= super::MAX_ITEMS {
                break;
            }
        }
    }
    out
}

pub fn looks_like_container_spec(text: &str) -> bool {
    let has_run = text.lines().any(is_docker_run_line);
    let yamlish = text.contains("services:")
        || (text.contains("apiVersion:") && text.contains("kind:"))
        || (text.contains("mountPath:") && text.contains("/dev/shm"))
        // a compose service quoted without `services:` (see `quoted_services`)
        || (text.contains("image:") && COMPOSE_ONLY_KEYS.iter().any(|k| text.contains(&format!("{k}:"))))
        || ((text.contains("container:") || text.contains("script:")) && text.contains("image:"));
    (has_run || yamlish) && !parse_container_specs(text).is_empty()
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct ContainerSpecKind;

impl super::EvidenceKind for ContainerSpecKind {
    fn name(&self) -> &'static str {
        "container-spec"
    }
    fn doc(&self) -> &'static str {
        "a container spec (`docker run` line, docker-compose.yml, Kubernetes Pod/Job/Deployment YAML, Argo Workflow template): how it sizes /dev/shm, whether it runs a PyTorch job, and whether a container that runs CUDA work asks for GPUs"
    }
    fn example(&self) -> &'static str {
        "cat docker-compose.yml  (or: kubectl get pod POD -o yaml)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "specs",
            "per spec: source (docker-run, compose, kubernetes, argo workflow, kubernetes fragment), containers (name, image, command, pytorch_hint, shm: how, size_mib, written; gpus, cuda_hint, privileged, gpus_elsewhere)",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["shm", "container.gpus"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_container_spec(s.head)
    }
    /// A compose file or Kubernetes manifest that parses whole is read whole: cut at its blank
    /// lines, a service that merges `<<: *common` would be read without the `x-common` block
    /// above it (YAML 1.2 §7.1: an alias refers to an anchor earlier in the same document).
    /// An override compose file (`is_override_services`) is read whole too: cut at its blank
    /// lines, a service with an image would be read as a file of its own, and its /dev/shm
    /// as the runtime's default rather than its base file's.
    fn whole_text(&self, text: &str) -> bool {
        let merge = text.contains("<<:");
        text.len() <= 1 << 20
            && (merge || text.contains("services:"))
            && serde_yaml::Deserializer::from_str(text)
                .take(super::MAX_ITEMS)
                .map(<Yaml as serde::Deserialize>::deserialize)
                .collect::<Result<Vec<Yaml>, _>>()
                .is_ok_and(|docs| {
                    docs.iter().any(|d| {
                        (merge && (is_compose(d) || is_kubernetes(d)))
                            || d.get("services")
                                .and_then(Yaml::as_mapping)
                                .is_some_and(is_override_services)
                    })
                })
    }
    fn judges_whole_text(&self) -> bool {
        true
    }
    fn reads_assignments_above(&self, part: &str) -> bool {
        // a `docker run` command, not a compose file or a manifest (YAML, where a `NAME=value`
        // line put first would be no YAML)
        part.lines().any(is_docker_run_line)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let specs = parse_container_specs(text);
        if specs.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no docker run line, compose services, Kubernetes pod spec or Argo template in the text",
            ));
        }
        Ok(serde_json::json!({ "specs": super::to_value(&specs)? }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mozilla-ai/lumigator `docker-compose.gpu.override.yaml` at 12f2f80b (h105), whole.
    const LUMIGATOR_GPU_OVERRIDE: &str = "name: lumigator\n\nservices:\n  ray:\n    image: rayproject/ray:2.30.0-py311${COMPUTE_TYPE}${RAY_ARCH_SUFFIX}\n    # https://docs.ray.io/en/releases-2.30.0/cluster/cli.html#ray-start for more info about the command\n    runtime: nvidia\n    privileged: true\n    gpus: all\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=all\n      - LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH\n\n  backend:\n    environment:\n      - RAY_WORKER_GPUS\n      - RAY_WORKER_GPUS_FRACTION\n";

    #[test]
    fn an_override_compose_file_leaves_shm_to_its_base_file() {
        use super::super::EvidenceKind;
        let specs = parse_container_specs(LUMIGATOR_GPU_OVERRIDE);
        assert_eq!(specs.len(), 1);
        let ray = &specs[0].containers[0];
        assert_eq!(ray.name, "ray");
        assert_eq!(ray.gpus.as_deref(), Some("all"));
        assert_eq!(ray.shm.how, SHM_FROM_BASE_FILE);
        assert_eq!(ray.shm.size_mib, None);
        // read whole: cut at its blank lines, `ray` alone would look like a file of its own
        assert!(ContainerSpecKind.whole_text(LUMIGATOR_GPU_OVERRIDE));
        let alone = "services:\n  ray:\n    image: rayproject/ray:2.30.0-py311\n    runtime: nvidia\n    gpus: all\n";
        assert_eq!(
            parse_container_specs(alone)[0].containers[0].shm.how,
            "default"
        );
        // the same file where every service names its image runs on its own: the runtime's
        // 64 MiB, as before, and it is not read whole for want of a merge key
        let complete = LUMIGATOR_GPU_OVERRIDE.replace(
            "  backend:\n",
            "  backend:\n    image: mzdotai/lumigator:latest\n",
        );
        let specs = parse_container_specs(&complete);
        assert_eq!(specs[0].containers[0].shm.how, "default");
        assert_eq!(specs[0].containers[0].shm.size_mib, Some(DEFAULT_SHM_MIB));
        assert!(!ContainerSpecKind.whole_text(&complete));
        // a service of the override that sizes /dev/shm itself keeps its own setting
        let sized = LUMIGATOR_GPU_OVERRIDE
            .replace("    gpus: all\n", "    gpus: all\n    shm_size: 256m\n");
        let ray = &parse_container_specs(&sized)[0].containers[0];
        assert_eq!((ray.shm.how, ray.shm.size_mib), ("shm-size", Some(256.0)));
    }

    #[test]
    fn a_merge_of_a_missing_anchor_before_a_non_yaml_line_ends_the_stream_without_a_panic() {
        // a compose fragment's `<<: *de` cut from its anchor, glued to a py-spy dump (the
        // mutation test's `glued` text): yaml_serde panics on the document after it
        let t = "  vllm:\n    <<: *de\nThread 0x7F6D3C29D740 (idle): \"MainThread\"\n    wait (threading.py:312)\n    result (concurrent/futures/_base.py:435)\n";
        let _ = yaml_docs(t);
        let _ = parse_container_specs(t);
    }

    #[test]
    fn a_listing_copied_with_asciidoctor_callouts_is_read_without_them() {
        // OpenShift 3.6 developer guide, "Shared Memory": the pod spec as the rendered page
        // copies, `(1)`..`(3)` behind three lines (healthy: a memory emptyDir at /dev/shm)
        let t = include_str!(
            "../../tests/fixtures/corpus/h51_k8s_openshift36_pod_dshm_emptydir_memory.yaml"
        );
        assert!(serde_yaml::from_str::<Yaml>(t).is_err());
        let specs = parse_container_specs(t);
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].source, "kubernetes");
        assert_eq!(specs[0].containers.len(), 2);
        for c in &specs[0].containers {
            assert_eq!(c.shm.how, "emptydir-memory");
        }

        // ai-cloud-validation's 8-rank NCCL Job without a /dev/shm volume (#643), marked the
        // way a docs page would mark it (`<1>` on the containers key, `<2>` on the image): read
        // as the plain file is, on the runtime's 64 MiB
        let plain =
            include_str!("../../tests/fixtures/corpus/h12_k8s_aicv643_nccl_job_no_shm.yaml");
        let marked = plain
            .replacen("      containers:\n", "      containers:   (1)\n", 1)
            .replacen(
                "image: nvcr.io/nvidia/hpc-benchmarks:25.04\n",
                "image: nvcr.io/nvidia/hpc-benchmarks:25.04 (2)\n",
                1,
            );
        assert_ne!(marked, plain);
        assert!(serde_yaml::from_str::<Yaml>(&marked).is_err());
        let (a, b) = (parse_container_specs(plain), parse_container_specs(&marked));
        assert_eq!(a, b);
        assert_eq!(b[0].containers[0].shm.how, "default");

        // numbers that are not the callout sequence are not taken off
        assert_eq!(without_callouts("a: 1\nb: (2)\n"), None);
        assert_eq!(without_callouts("f(1)\n"), None);
        assert_eq!(
            without_callouts("a:  (1)\nb: x (2) (3)\nc: y (3)\n").as_deref(),
            Some("a:\nb: x\nc: y\n")
        );
    }

    #[test]
    fn docker_run_without_shm_settings_gets_the_default() {
        // github.com/open-mmlab/mmdetection/issues/1997 (bus error in the DataLoader)
        let t = "`sudo docker run --rm -it -v $(pwd):/$(pwd) -w $(pwd) --name cascademask cascademask python tools/train.py configs/mask_rcnn_r50_fpn_1x.py`\n";
        let specs = parse_container_specs(t.trim().trim_matches('`'));
        let c = &specs[0].containers[0];
        assert_eq!(specs[0].source, "docker-run");
        assert_eq!(c.name, "cascademask");
        assert_eq!(c.image.as_deref(), Some("cascademask"));
        assert_eq!(
            c.command.as_deref(),
            Some("python tools/train.py configs/mask_rcnn_r50_fpn_1x.py")
        );
        assert_eq!(c.pytorch_hint.as_deref(), Some("python"));
        assert_eq!(c.shm.how, "default");
        assert_eq!(c.shm.size_mib, Some(64.0));
    }

    #[test]
    fn a_wrapper_scripts_variables_are_expanded_before_docker_run_is_read() {
        // github.com/azavea/raster-vision docker/run at f7f9a7f8 (before PR #1077, which added
        // --ipc=host because DataLoader workers died for want of shared memory)
        let t = crate::test_corpus("h40_dockerrun_rastervision1077_no_shm.sh");
        let specs = parse_container_specs(&t);
        let c = &specs[0].containers[0];
        assert_eq!(c.image.as_deref(), Some("raster-vision-pytorch"));
        assert_eq!(c.name, "$1");
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(c.pytorch_hint.as_deref(), Some("torch"));
        assert_eq!(c.shm.how, "default");
        assert_eq!(c.shm.size_mib, Some(64.0));
        // the same repository's plugin template at f7f9a7f8 sizes /dev/shm on the command
        let t = crate::test_corpus("h40_dockerrun_rastervision_template_shm_8g.sh");
        let c = &parse_container_specs(&t)[0].containers[0];
        assert_eq!(c.image.as_deref(), Some("{{cookiecutter.docker_image}}"));
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(c.shm.how, "shm-size");
        assert_eq!(c.shm.size_mib, Some(8.0 * 1024.0));
        // a variable the text never assigns stays as written: nothing is guessed
        let c = &parse_container_specs("docker run --rm $IMG python train.py\n")[0].containers[0];
        assert_eq!(c.image.as_deref(), Some("$IMG"));
    }

    #[test]
    fn docker_run_with_the_hosts_dev_shm() {
        // github.com/bytedance/Protenix/issues/2 (the fix for the bus error), as the comment
        // shows it (the image is a markdown link)
        let t = "docker run --gpus all -it -v $(pwd):/workspace -v /dev/shm:/dev/shm [ai4s-cn-beijing.cr.volces.com/infra/protenix:v0.0.1](http://ai4s-cn-beijing.cr.volces.com/infra/protenix:v0.0.1) /bin/bash\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(c.shm.how, "host-dev-shm");
        assert_eq!(c.shm.written.as_deref(), Some("/dev/shm:/dev/shm"));
        // written for this test: the size flag and --ipc=host
        let t = "docker run --gpus all -it --shm-size=128g -v $(pwd):/workspace img python x.py\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "shm-size");
        assert_eq!(c.shm.size_mib, Some(128.0 * 1024.0));
        let c = &parse_container_specs("docker run --ipc=host img python t.py\n")[0].containers[0];
        assert_eq!(c.shm.how, "ipc-host");
    }

    #[test]
    fn sizes() {
        assert_eq!(docker_size_mib("64m"), Some(64.0));
        assert_eq!(docker_size_mib("2gb"), Some(2048.0));
        assert_eq!(docker_size_mib("1G"), Some(1024.0));
        assert_eq!(docker_size_mib("67108864"), Some(64.0));
        assert_eq!(docker_size_mib("lots"), None);
        assert_eq!(k8s_quantity_mib("16Gi"), Some(16384.0));
        assert_eq!(k8s_quantity_mib("512Mi"), Some(512.0));
        assert_eq!(k8s_quantity_mib("1x"), None);
    }

    #[test]
    fn compose_services() {
        // written for this test from the Compose Specification's fields
        let t = "services:\n  train:\n    image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\n    command: python train.py\n    shm_size: '8gb'\n  web:\n    image: nginx\n  trainer2:\n    build: .\n    command: [\"torchrun\", \"train.py\"]\n    ipc: host\n";
        let specs = parse_container_specs(t);
        assert_eq!(specs[0].source, "compose");
        let c = &specs[0].containers;
        assert_eq!(c[0].shm.how, "shm-size");
        assert_eq!(c[0].shm.size_mib, Some(8192.0));
        assert_eq!(c[1].pytorch_hint, None);
        assert_eq!(c[1].shm.how, "default");
        assert_eq!(c[2].command.as_deref(), Some("torchrun train.py"));
        assert_eq!(c[2].shm.how, "ipc-host");
        assert!(looks_like_container_spec(t));
    }

    #[test]
    fn compose_services_merged_from_an_anchored_extension() {
        // open-edge-platform/physical-ai-studio application/docker/docker-compose.trainer.yaml
        // at 17b8ab9 (healthy): `ipc: host` sits in `x-common: &common`, merged into the GPU
        // service with `<<: *common` (excerpt: the keys the reader reads)
        let t = "x-common: &common\n    restart: unless-stopped\n\n    # PyTorch DataLoader workers need shared memory beyond Docker's 64 MB\n    # default. ipc: host shares the host's /dev/shm; use shm_size instead\n    # if you need an isolated, fixed-size allocation (see README).\n    ipc: host\n\n    read_only: true\n\nservices:\n  physicalai-trainer-cuda:\n    <<: *common\n    profiles: [cuda]\n    container_name: physicalai-trainer-cuda\n    image: ${REGISTRY:-ghcr.io/open-edge-platform/}physicalai-trainer-cuda:${TRAINER_IMAGE_TAG:-main}\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.name, "physicalai-trainer-cuda");
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(c.shm.how, "ipc-host");
        // victorchall/EveryDream2trainer docker-compose.yml at 0fba021 (problem: the thread's
        // torch run hit the 64 MB default and set shm_size 2GB by hand): no anchor, no shm
        // setting (excerpt: its environment line left out)
        let t = "version: '3.8'\nservices:\n  everydream2trainer:\n    image: ghcr.io/victorchall/everydream2trainer:nightly\n    ports:\n      - \"127.0.0.1:8888:8888\"\n      - \"127.0.0.1:6006:6006\"\n    volumes:\n      - .:/workspace/EveryDream2trainer\n      - ./.cache:/root/.cache\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "default");
        // a merge the YAML merge type refuses (a scalar) leaves the document as written
        let t = "services:\n  train:\n    <<: 3\n    image: pytorch/pytorch\n    shm_size: 8gb\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "shm-size");
    }

    #[test]
    fn kuberay_mounts_shared_memory_on_its_ray_containers() {
        // ray-project/kuberay ray-operator/config/samples/pytorch-resnet-image-classifier/
        // ray-job.pytorch-image-classifier.yaml at 03cf52d (healthy): no /dev/shm in the spec,
        // the operator adds its `shared-mem` memory emptyDir (excerpt: the worker group)
        let t = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  generateName: pytorch-image-classifier-\nspec:\n  rayClusterSpec:\n    rayVersion: '2.9.0'\n    workerGroupSpecs:\n      - replicas: 4\n        groupName: gpu-group\n        rayStartParams:\n          dashboard-host: '0.0.0.0'\n        template:\n          spec:\n            containers:\n              - name: ray-worker\n                image: rayproject/ray-ml:2.9.0-gpu\n                resources:\n                  limits:\n                    memory: \"8G\"\n                    nvidia.com/gpu: \"1\"\n                  requests:\n                    cpu: \"1\"\n                    memory: \"8G\"\n                    nvidia.com/gpu: \"1\"\n                volumeMounts:\n                  - mountPath: /tmp/ray\n                    name: ray-logs\n            volumes:\n              - name: ray-logs\n                emptyDir: {}\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.name, "ray-worker");
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, Some(8e9 / (1024.0 * 1024.0)));
        // the object store moved by `plasma-directory`: the operator adds nothing
        let moved = t.replace(
            "          dashboard-host: '0.0.0.0'\n",
            "          dashboard-host: '0.0.0.0'\n          plasma-directory: /data/plasma\n",
        );
        assert_eq!(
            parse_container_specs(&moved)[0].containers[0].shm.how,
            "default"
        );
        // NVIDIA/ai-cloud-validation nccl_allreduce_job.yaml at 1207cb7 (problem): a batch/v1
        // Job is not a Ray node, its 8-GPU container keeps the runtime's 64 MiB
        let t = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: nccl-allreduce-gpu\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: nccl-allreduce\n          image: nvcr.io/nvidia/hpc-benchmarks:25.04\n          volumeMounts:\n            - name: results\n              mountPath: /results\n          resources:\n            limits:\n              nvidia.com/gpu: 8 # overridden at runtime by K8sNcclWorkload\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "default");
    }

    #[test]
    fn kubernetes_pod_templates() {
        // written for this test from the PodSpec's fields
        let t = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n      - name: trainer\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n        command: [\"python\", \"train.py\"]\n        resources:\n          limits:\n            nvidia.com/gpu: 8\n        volumeMounts:\n        - name: dshm\n          mountPath: /dev/shm\n      volumes:\n      - name: dshm\n        emptyDir:\n          medium: Memory\n          sizeLimit: 16Gi\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: pytorch/pytorch\n";
        let specs = parse_container_specs(t);
        assert_eq!(specs.len(), 2);
        let c = &specs[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("8"));
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, Some(16384.0));
        let p = &specs[1].containers[0];
        assert_eq!(p.shm.how, "default");
        assert_eq!(p.pytorch_hint.as_deref(), Some("torch"));
    }

    #[test]
    fn gpus_from_the_nvidia_runtime_devices_and_env() {
        // github.com/NVIDIA/nccl/issues/290 (problem: NCCL's segments do not fit the default
        // /dev/shm): the NVIDIA runtime exposes the image's NVIDIA_VISIBLE_DEVICES (all)
        let t = "docker run -it -d --rm --net=host --mount type=bind,source=/home,destination=/home --runtime nvidia nvcr.io/nvidia/tensorflow:20.01-tf1-py3 sh\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), None);
        assert_eq!(c.shm.how, "default");
        assert!(!c.runs_other_program());
        // github.com/tlkh/ai-lab/issues/5 (problem): the nvidia-docker wrapper, the image's
        // own command
        let t =
            "sudo nvidia-docker run --rm -p 8888:8888 -v /home/$USER:/home/jovyan nvaitc/ai-lab\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(c.command, None);
        // github.com/taronegeorage/MyUbuntuConfig Docker/start_pytorch_example.sh (healthy,
        // --ipc=host): one GPU named by NVIDIA_VISIBLE_DEVICES
        let t = "docker run --rm -it --init \\\n  --runtime=nvidia \\\n  --ipc=host \\\n  --user=\"$(id -u):$(id -g)\" \\\n  --volume=$PWD:/app \\\n  -e NVIDIA_VISIBLE_DEVICES=0 \\\n  anibali/pytorch python3 main.py\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("device=0"));
        assert_eq!(gpu_count("device=0"), Some(1));
        assert_eq!(c.shm.how, "ipc-host");
        // github.com/horovod/horovod/issues/566: eight GPU device nodes, no shm setting
        let t = "sudo docker run --privileged --cap-add=SYS_PTRACE --net=host --name=$container_name --device=/dev/nvidia0 --device=/dev/nvidia1 --device=/dev/nvidia2 --device=/dev/nvidia3 --device=/dev/nvidia4 --device=/dev/nvidia5 --device=/dev/nvidia6 --device=/dev/nvidia7 --device=/dev/nvidiactl --device=/dev/nvidia-uvm -v /var/drivers/nvidia/current:/usr/local/nvidia:ro -d -it horovod-python35:latest\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("8"));
        assert_eq!(c.shm.how, "default");
        // docker/compose#6691 (healthy): a GPU reservation running nvidia-smi is not a job
        let t = "services:\n  docker-compose-now-supports-device-requests:\n    image: nvidia/cuda:10.0-base\n    command: nvidia-smi\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - capabilities:\n              - gpu\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("gpu"));
        assert!(c.runs_other_program());
        assert_eq!(gpu_count("device=0,1"), Some(2));
        assert_eq!(gpu_count("\"device=0\""), Some(1));
        assert_eq!(gpu_count("2"), Some(2));
    }

    #[test]
    fn docker_run_in_a_command_substitution() {
        let corpus = |n: &str| {
            std::fs::read_to_string(format!(
                "{}/tests/fixtures/corpus/{n}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        // PiPPy's GPU integration-test job before #420 (h149, problem): a GitHub Actions step
        // whose `run: |` script keeps `container_name=$(docker run \ --gpus all … "${DOCKER_IMAGE}"
        // )` and then `docker exec`s the tests into it; no --shm-size or --ipc
        let t = corpus("h149_dockerrun_pippy420_gpu_ci_job_no_shm.yaml");
        assert!(looks_like_container_spec(&t));
        let specs = parse_container_specs(&t);
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].containers.len(), 1);
        let c = &specs[0].containers[0];
        assert_eq!(c.image.as_deref(), Some("${DOCKER_IMAGE}"));
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert_eq!(c.command, None);
        assert!(!c.runs_other_program());
        assert_eq!(
            (c.shm.how, c.shm.size_mib),
            ("default", Some(DEFAULT_SHM_MIB))
        );
        // #420's fix: the same step with --shm-size=1g
        let fixed = t.replace(
            "            --gpus all \\\n",
            "            --gpus all \\\n            --shm-size=1g --ulimit memlock=-1 \\\n",
        );
        assert_ne!(fixed, t);
        let c = &parse_container_specs(&fixed)[0].containers[0];
        assert_eq!(c.shm.size_mib, Some(1024.0));
        // on one line, after `export`, with `sudo`: the `)` closes the substitution, not the image
        let t =
            "export id=$(sudo docker run --gpus all -t -d -w /var/lib/jenkins ${DOCKER_IMAGE})\n";
        assert!(is_docker_run_line(t));
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.image.as_deref(), Some("${DOCKER_IMAGE}"));
        // a `$(pwd)` inside the run and a quoted `)` do not end it early
        let t = "cid=$(docker run --gpus 2 -v $(pwd):/w -e NOTE=\"a)b\" img python train.py)\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.image.as_deref(), Some("img"));
        assert_eq!(c.command.as_deref(), Some("python train.py"));
        // neighbours that run no container: another program, arithmetic, docker's other verbs
        for t in [
            "N=$(nvidia-smi -L | wc -l)\n",
            "echo $((1 + 2))\n",
            "docker stop $(docker ps -q) || true\n",
            "id=$(docker exec -t c nvidia-smi)\n",
            "echo \"$(hostname)\"\n",
        ] {
            assert!(parse_container_specs(t).is_empty(), "{t}");
            assert!(!is_docker_run_line(t), "{t}");
        }
        assert!(substituted_docker_runs("x=$(docker run img").len() == 1);
    }

    #[test]
    fn options_after_the_image_go_to_its_entrypoint() {
        let corpus = |n: &str| {
            std::fs::read_to_string(format!(
                "{}/tests/fixtures/corpus/{n}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        // text-generation-inference's README before #60 (h149, problem): the launcher's
        // options after the image, two NCCL shards, no --shm-size
        let t = corpus("h149_dockerrun_tgi60_num_shard_2_no_shm.sh");
        let c = &parse_container_specs(&t)[0].containers[0];
        assert_eq!(
            c.image.as_deref(),
            Some("ghcr.io/huggingface/text-generation-inference:latest")
        );
        assert_eq!(
            c.command.as_deref(),
            Some("--model-id bigscience/bloom-560m --num-shard 2")
        );
        assert_eq!(c.pytorch_hint, None);
        assert!(!c.runs_other_program());
        assert_eq!(c.shm.how, "default");
        // #60's fix
        let fixed = t.replace("--gpus all ", "--gpus all --shm-size 1g ");
        let c = &parse_container_specs(&fixed)[0].containers[0];
        assert_eq!(c.shm.size_mib, Some(1024.0));
        // a named program after the image still is one
        for (t, other) in [
            (
                "docker run --gpus all nvidia/cuda:12.4.1-base nvidia-smi -L\n",
                true,
            ),
            ("docker run --gpus all img -c 'x'\n", false),
            ("docker run --gpus all img bash -c 'python t.py'\n", false),
        ] {
            let c = &parse_container_specs(t)[0].containers[0];
            assert_eq!(c.runs_other_program(), other, "{t}");
        }
    }

    #[test]
    fn compose_services_on_the_nvidia_runtime() {
        let corpus = |n: &str| {
            std::fs::read_to_string(format!(
                "{}/tests/fixtures/corpus/{n}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        // TextyMcSpeechy's compose file (h138, problem: PR #66, the piper trainer's DataLoader
        // workers die on the 64 MB /dev/shm): runtime: nvidia with NVIDIA_VISIBLE_DEVICES=all
        // in the list form, a build and no command
        let t = corpus("h138_compose_textymcspeechy66_piper_gpu_no_shm.yml");
        let c = &parse_container_specs(&t)[0].containers[0];
        assert_eq!((c.name.as_str(), c.gpus.as_deref()), ("piper", Some("all")));
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), None);
        assert_eq!(c.shm.how, "default");
        assert!(!c.runs_other_program());
        // the runtime alone: the image's NVIDIA_VISIBLE_DEVICES, all
        let t = "services:\n  train:\n    build: .\n    runtime: nvidia\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("all"));
        // the mapping form naming two devices, and a number
        let t = "services:\n  train:\n    image: pytorch/pytorch\n    runtime: nvidia\n    environment:\n      NVIDIA_VISIBLE_DEVICES: \"0,1\"\n      OTHER: x\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("device=0,1"));
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), Some(2));
        let t = "services:\n  train:\n    image: pytorch/pytorch\n    runtime: nvidia\n    environment:\n      NVIDIA_VISIBLE_DEVICES: 3\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), Some(1));
        // a value the shell fills in (TextyMcSpeechy's later file): a number the file does
        // not fix
        let t = "services:\n  piper:\n    build: .\n    runtime: nvidia\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=${NVIDIA_VISIBLE_DEVICES:-all}\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), None);
        // no GPU asked: another runtime, a look-alike variable, a service without either
        for t in [
            "services:\n  web:\n    image: nginx\n    runtime: runc\n",
            "services:\n  web:\n    image: nginx\n    environment:\n      - NVIDIA_VISIBLE_DEVICES_NOTE=all\n      - MY_NVIDIA_VISIBLE_DEVICES=0\n",
            "services:\n  web:\n    image: nginx\n    environment:\n      CUDA_VISIBLE_DEVICES: \"0\"\n",
        ] {
            let c = &parse_container_specs(t)[0].containers[0];
            assert_eq!(c.gpus, None, "{t}");
        }
        // the devices turned off, and a GPU reservation that names its count first
        let t = "services:\n  cpu:\n    image: x\n    runtime: nvidia\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=void\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), Some(0));
        let t = "services:\n  t:\n    image: x\n    runtime: nvidia\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 2\n              capabilities: [gpu]\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("2"));
        // the runtime with a named tool for its command is not a job's container
        let t = "services:\n  smi:\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    runtime: nvidia\n    command: nvidia-smi\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert!(c.runs_other_program());
    }

    #[test]
    fn quoted_podspec_fragments() {
        // github.com/MaastrichtU-IDS/dsri-documentation/issues/10 (healthy): the two lists at
        // different indents, one after the other
        let t = "          volumeMounts:\n            - mountPath: /dev/shm\n              name: dshm\n      volumes:\n        - emptyDir:\n            medium: Memory\n          name: dshm\n";
        assert!(looks_like_container_spec(t));
        let specs = parse_container_specs(t);
        assert_eq!(specs[0].source, K8S_FRAGMENT);
        let c = &specs[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, None);
        // github.com/kubeflow/arena/issues/1044: between `...` lines, capped at 2Gi
        let t = "...\n    - mountPath: /dev/shm\n      name: dshm\n...\n...\n  - emptyDir:\n      medium: Memory\n      sizeLimit: 2Gi\n    name: dshm\n...\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, Some(2048.0));
        // written for this test: a mount whose volume is on disk
        let t = "volumeMounts:\n- mountPath: /dev/shm\n  name: s\nvolumes:\n- name: s\n  emptyDir: {}\n";
        assert_eq!(
            parse_container_specs(t)[0].containers[0].shm.how,
            "emptydir-disk"
        );
        // a mount elsewhere is not a /dev/shm fragment
        assert!(parse_container_specs("volumeMounts:\n- mountPath: /data\n  name: d\n").is_empty());
        // github.com/porter-dev/porter-charts/pull/1108 (healthy, not a PodSpec): a chart's own
        // values holding `mountPath: /dev/shm` beside its emptyDir options; no VolumeMount
        // (no `name`), so no pod is read and no 64 MiB default is claimed
        let t = "# values.yaml\nemptyDir:\n  enabled: true\n  mountPath: /dev/shm\n  volumeOptions:\n    medium: Memory\n    sizeLimit: 2G\n";
        assert!(parse_container_specs(t).is_empty());
        // github.com/InftyAI/llmaz/issues/73 (not judgeable): the named mount alone is still a
        // fragment, its volume not shown
        let t = "    volumeMounts:\n    - mountPath: /dev/shm\n      name: dshm\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "host-dev-shm");
        assert_eq!(c.shm.size_mib, None);
    }

    #[test]
    fn a_dev_shm_mount_without_a_volume_name_is_no_default() {
        // written for this test after porter-charts#1108's shape: a whole Pod whose /dev/shm
        // entry has no `name`; the API server refuses it (`name` is required), so the spec
        // does not give the runtime's 64 MiB either
        let t = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: train\n    image: pytorch/pytorch\n    command: [python, train.py]\n    volumeMounts:\n    - mountPath: /dev/shm\n  volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "unnamed-mount");
        assert_eq!(c.shm.size_mib, None);
        // the same pod with the mount naming its volume: the memory emptyDir
        let named = t.replace(
            "    - mountPath: /dev/shm\n",
            "    - mountPath: /dev/shm\n      name: dshm\n",
        );
        let c = &parse_container_specs(&named)[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-memory");
    }

    #[test]
    fn a_helm_templated_fragment_is_read_as_the_chart_renders_it() {
        // github.com/vllm-project/production-stack/issues/44 (healthy): the poster's fix in the
        // chart, a Helm action starting a volume's name (`{{ .Release.Name }}-storage`)
        let t = "volumeMounts:\n  - name: {{ .Release.Name }}-storage\n    mountPath: /data\n  - name: shm\n    mountPath: /dev/shm\n  \nvolumes:\n    - name: shm\n      emptyDir:\n        medium: Memory\n        sizeLimit: 20Gi\n";
        assert!(looks_like_container_spec(t));
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, Some(20480.0));
        // github.com/vllm-project/vllm/pull/49568 (problem its description names: the chart had
        // no /dev/shm mount; the size it adds is the chart's value): the mount under a control
        // action, the size left to `.Values` — the mount is read, the size is not a number the
        // text fixes
        let t = "volumeMounts:\n{{- if .Values.shm.enabled }}\n  - name: shm\n    mountPath: /dev/shm\n{{- end }}\nvolumes:\n  - name: shm\n    emptyDir:\n      medium: Memory\n      sizeLimit: {{ .Values.shm.size }}\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, None);
        // a line that is prose with braces is left as it is
        assert_eq!(as_yaml_would_read_it("no actions here\n"), None);
    }

    #[test]
    fn a_compose_service_quoted_without_its_file() {
        // github.com/vllm-project/vllm/issues/16841 (healthy for /dev/shm): the service at its
        // indent, without `services:`, four reserved GPUs and `ipc: host`
        let t = "  vllm-serve-interface:\n    image: vllm/vllm-openai:latest\n    runtime: nvidia\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              device_ids: ['1', '3', '0', '2']\n              capabilities: [gpu]\n    ipc: host\n    command:\n      - --tensor-parallel-size\n      - \"4\"\n";
        assert!(looks_like_container_spec(t));
        let specs = parse_container_specs(t);
        assert_eq!(specs[0].source, "compose");
        assert_eq!(specs[0].containers[0].name, "vllm-serve-interface");
        assert_eq!(specs[0].containers[0].shm.how, "ipc-host");
        // the same service without its `ipc` line (problem: Docker's 64 MB under four GPUs)
        let bare = t.replace("    ipc: host\n", "");
        let c = &parse_container_specs(&bare)[0].containers[0];
        assert_eq!(c.shm.how, "default");
        // github.com/vllm-project/vllm/issues/2013 (healthy): a merge of an anchor defined
        // above the quote; the service's own `shm_size` is read
        let t = "  vllm:\n    <<: *default-gpu\n    image: vllm/vllm-openai:v0.2.3\n    command: --model Qwen/Qwen-7B-Chat --trust-remote-code\n    environment:\n      #NCCL_P2P_DISABLE: 1\n      HF_HUB_OFFLINE: 0\n      CUDA_VISIBLE_DEVICES: 6\n    shm_size: 10.24gb\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.shm.how, "shm-size");
        assert!(c.shm.size_mib.is_some_and(|m| m > 10_000.0));
        // a mapping of names to images alone (a values file) is not a compose service
        assert!(parse_container_specs("app:\n  image: nginx\n  tag: 1\n").is_empty());
        // a defined anchor is merged as before (its line kept)
        assert_eq!(
            as_yaml_would_read_it("x: &a\n  ipc: host\ns:\n  <<: *a\n  image: i\n"),
            None
        );
    }

    #[test]
    fn a_compose_file_with_merged_anchors_is_read_whole() {
        // open-edge-platform/physical-ai-studio application/docker/docker-compose.trainer.yaml
        // at 17b8ab9 (healthy), its keys cut down: cut at its blank lines, the second service
        // alone (a quoted service, its merge's anchor not in the part) would lose `ipc: host`
        let t = "x-common: &common\n    ipc: host\n\nservices:\n  trainer-cuda:\n    <<: *common\n    image: trainer-cuda:main\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n\n  trainer-xpu:\n    <<: *common\n    container_name: trainer-xpu\n    image: trainer-xpu:main\n";
        let r = crate::evidence::segment::segment(t);
        assert_eq!(r.parts.len(), 1);
        assert_eq!(r.parts[0].lines, vec![(1, 19)]);
        let specs = parse_container_specs(t);
        assert!(specs[0].containers.iter().all(|c| c.shm.how == "ipc-host"));
        // a file without merges is cut as before
        assert!(!super::super::EvidenceKind::whole_text(
            &ContainerSpecKind,
            "services:\n  a:\n    image: i\n"
        ));
    }

    #[test]
    fn argo_templates_run_pods() {
        // github.com/coreweave/kubernetes-cloud finetuner-workflow/finetune-workflow.yaml at
        // 66bebd46 (problem: coreweave/kubernetes-cloud#170, 8 GPUs crash; fixed by PR #219),
        // the model-finetuner template cut to the fields read: the GPU count comes from the
        // podSpecPatch (a parameter), and nothing is mounted at /dev/shm
        let before = r#"  - name: model-finetuner
    podSpecPatch: |
      containers:
        - name: main
          resources:
            limits:
              memory: "{{workflow.parameters.trainer_ram}}Gi"
              nvidia.com/gpu: "{{workflow.parameters.trainer_gpus}}"
    container:
      image: "{{workflow.parameters.finetuner_image}}:{{workflow.parameters.finetuner_tag}}"
      command: ["/usr/bin/bash", "-c"]
      args: ["/usr/bin/python3 -m deepspeed.launcher.runner --num_gpus {{workflow.parameters.trainer_gpus}} /app/finetuner.py {{inputs.parameters.finetuner_params}}"]
      resources:
        limits:
          memory: 128Gi
          nvidia.com/gpu: 1
      volumeMounts:
        - mountPath: "/{{workflow.parameters.pvc}}"
          name: "{{workflow.parameters.pvc}}"
    volumes:
      - name: "{{workflow.parameters.pvc}}"
        persistentVolumeClaim:
           claimName: "{{workflow.parameters.pvc}}"
"#;
        assert!(looks_like_container_spec(before));
        let specs = parse_container_specs(before);
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].source, ARGO);
        let c = &specs[0].containers[0];
        assert_eq!(c.name, "model-finetuner");
        assert_eq!(
            c.gpus.as_deref(),
            Some("{{workflow.parameters.trainer_gpus}}")
        );
        assert_eq!(gpu_count(c.gpus.as_deref().unwrap()), None);
        assert_eq!(c.pytorch_hint.as_deref(), Some("python"));
        assert_eq!(c.shm.how, "default");
        assert_eq!(c.shm.size_mib, Some(DEFAULT_SHM_MIB));
        // the same template at d59ba51e (PR #219, healthy): a memory emptyDir on /dev/shm
        let after = before
            .replace(
                "          name: \"{{workflow.parameters.pvc}}\"\n    volumes:",
                "          name: \"{{workflow.parameters.pvc}}\"\n        - name: dshm\n          mountPath: /dev/shm\n    volumes:",
            )
            .replace(
                "           claimName: \"{{workflow.parameters.pvc}}\"\n",
                "           claimName: \"{{workflow.parameters.pvc}}\"\n      - emptyDir:\n          medium: Memory\n        name: dshm\n",
            );
        let c = &parse_container_specs(&after)[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-memory");
        assert_eq!(c.shm.size_mib, None);
        // github.com/argoproj/argo-workflows examples/pod-spec-patch.yaml (267798bd): a JSON
        // patch naming `main`; examples/volumes-emptydir.yaml (0b0aac92): a workflow-level
        // volume mounted elsewhere leaves /dev/shm at the default
        let t = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  generateName: pod-spec-patch-\nspec:\n  entrypoint: whalesay\n  arguments:\n    parameters:\n      - name: cpu-limit\n        value: 100m\n  templates:\n  - name: whalesay\n    podSpecPatch: '{\"containers\":[{\"name\":\"main\", \"resources\":{\"limits\":{\"cpu\": \"{{workflow.parameters.cpu-limit}}\" }}}]}'\n    container:\n      image: docker/whalesay:latest\n      command: [cowsay]\n      args: [\"hello world\"]\n";
        // (a step without GPUs or a training framework is not read as a training pod)
        assert!(parse_container_specs(t).is_empty());
        let t = t.replace(
            "\"{{workflow.parameters.cpu-limit}}\" }",
            "\"{{workflow.parameters.cpu-limit}}\", \"nvidia.com/gpu\": 2 }",
        );
        let c = &parse_container_specs(&t)[0].containers[0];
        assert_eq!(c.name, "whalesay");
        assert_eq!(c.gpus.as_deref(), Some("2"));
        assert!(c.runs_other_program());
        let t = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  generateName: volumes-emptydir-\nspec:\n  entrypoint: volumes-emptydir-example\n  volumes:\n  - name: workdir\n    emptyDir: {}\n\n  templates:\n  - name: volumes-emptydir-example\n    container:\n      image: alpine:latest\n      command: [\"/bin/sh\", \"-c\"]\n      volumeMounts:\n      - name: workdir\n        mountPath: /mnt/vol\n";
        assert!(parse_container_specs(t).is_empty());
        // written for this test: the workflow's volume mounted on /dev/shm by a script template
        // that trains (its source imports torch)
        let t = t
            .replace("/mnt/vol", "/dev/shm")
            .replace("    container:", "    script:")
            .replace(
                "      command: [\"/bin/sh\", \"-c\"]\n",
                "      command: [python]\n      source: |\n        import torch\n",
            );
        let c = &parse_container_specs(&t)[0].containers[0];
        assert_eq!(c.shm.how, "emptydir-disk");
        assert_eq!(c.pytorch_hint.as_deref(), Some("torch"));
        // the same step running a data script is not a training pod
        // (its /dev/shm mount is still read as a quoted fragment, as any text mounting it is)
        let t = t.replace("import torch", "import pandas");
        assert!(parse_container_specs(&t).iter().all(|s| s.source != ARGO));
        // a bullet list is not a list of templates
        assert!(parse_container_specs("- container: image\n- image: x\n").is_empty());
    }

    #[test]
    fn prose_is_not_a_spec() {
        assert!(!looks_like_container_spec("we use docker for training\n"));
        assert!(!looks_like_container_spec("services: many\n"));
    }

    #[test]
    fn what_shows_a_container_runs_cuda_work() {
        // NVIDIA's base images, PyTorch's CUDA images, NGC, a cuXYZ tag, a -gpu tag
        for image in [
            "nvidia/cuda:12.4.1-devel-ubuntu22.04",
            "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime",
            "nvcr.io/nvidia/pytorch:24.05-py3",
            "ghcr.io/org/trainer:2.3-cu121",
            "tensorflow/tensorflow:latest-gpu",
        ] {
            assert!(cuda_hint(Some(image), None, None).is_some(), "{image}");
        }
        // the accelerator chosen by a variable whose default is a CUDA build (written for
        // this test)
        let h = cuda_hint(
            Some("ghcr.io/org/studio-${AI_DEVICE:-cuda}:main"),
            None,
            None,
        );
        assert!(h.is_some_and(|h| h.contains("AI_DEVICE")));
        assert!(cuda_hint(Some("org/trainer:${ACCELERATOR-cu121}"), None, None).is_some());
        // physical-ai-studio before #312 (h149): the variable defaults to cpu, and one without
        // a default says nothing; what it becomes is in a file the text does not show
        for image in [
            "${REGISTRY:-ghcr.io/open-edge-platform/}physical-ai-studio-${AI_DEVICE:-cpu}:${IMAGE_TAG:-main}",
            "ghcr.io/org/studio-${DEVICE}:main",
        ] {
            assert!(cuda_hint(Some(image), None, None).is_none(), "{image}");
        }
        // a command that uses CUDA
        assert!(
            cuda_hint(
                Some("myorg/train:1"),
                None,
                Some("python train.py --device cuda")
            )
            .is_some()
        );
        // not CUDA work: a CPU or other-vendor image, a web server, a tag variable
        for image in [
            "rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.1.2",
            "intel/intel-extension-for-pytorch:2.1.10-xpu",
            "python:3.11-slim",
            "postgres:16",
            "ghcr.io/org/app:${IMAGE_TAG:-main}",
            "ghcr.io/open-edge-platform/physical-ai-studio-cpu:main",
            "nvcr.io/nvidia/k8s-device-plugin:v0.14.1",
            "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04",
            "nvcr.io/nvidia/gpu-operator:v23.9.1",
            "nvcr.io/nvidia/k8s/container-toolkit:v1.14.6-ubuntu20.04",
            "nvcr.io/nvidia/driver:535.154.05-ubuntu22.04",
            "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.6.0-ubuntu20.04",
            "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v23.9.1",
            "nvcr.io/nvidia/k8s/gpu-feature-discovery:v0.8.2",
        ] {
            assert!(
                cuda_hint(Some(image), None, Some("uvicorn app:app")).is_none(),
                "{image}"
            );
        }
        // a training image whose name only holds one of those words inside another word is
        // still CUDA work
        for image in [
            "myorg/drivers-license-ocr:cuda12.1",
            "myorg/cuda-toolkit-train:1.0",
            "myorg/cooperator-rl:cu121",
        ] {
            assert!(
                cuda_hint(Some(image), None, Some("python train.py")).is_some(),
                "{image}"
            );
        }
    }

    #[test]
    fn how_a_container_asks_for_gpus() {
        // docker run: a CDI device, a privileged container without GPUs
        let t = "docker run --rm --device nvidia.com/gpu=all nvidia/cuda:12.4.1-base nvidia-smi\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus.as_deref(), Some("all"));
        assert!(c.cuda_hint.is_some());
        let t = "docker run --rm --privileged nvidia/cuda:12.4.1-base nvidia-smi\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert_eq!(c.gpus, None);
        assert!(c.privileged);
        // compose: a device node list, and a service that extends another
        let t = "services:\n  train:\n    image: nvidia/cuda:12.4.1-base\n    devices:\n      - /dev/nvidia0:/dev/nvidia0\n  other:\n    extends:\n      service: train\n    image: nvidia/cuda:12.4.1-base\n";
        let cs = &parse_container_specs(t)[0].containers;
        assert_eq!(cs[0].gpus.as_deref(), Some("1"));
        assert!(cs[1].gpus_elsewhere);
        // Kubernetes: a MIG resource gives the container a GPU
        let t = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nvidia/cuda:12.4.1-base\n    resources:\n      limits:\n        nvidia.com/mig-1g.5gb: 1\n";
        let c = &parse_container_specs(t)[0].containers[0];
        assert!(c.gpus_elsewhere);
    }
}
