//! What a cluster scheduler says about the GPUs it can hand out, as platform teams paste it,
//! read from the producers' own code:
//!
//! - kubectl (kubernetes/kubectl at dee3483a, `pkg/describe/describe.go`, the node describer):
//!   `Capacity:` and `Allocatable:` at level 0, then one `  %s:\t%s` line per resource
//!   (`printResourceList`, a tabwriter's columns), e.g. `  nvidia.com/gpu:  8`. `kubectl get
//!   node -o yaml` prints the same lists as `status.capacity` and `status.allocatable`, a
//!   quantity quoted when it is a bare number (`nvidia.com/gpu: "16"`). The kubelet sets
//!   capacity to the devices a device plugin registered and allocatable to the healthy ones
//!   (kubernetes/kubernetes `pkg/kubelet/cm/devicemanager/manager.go`, `GetCapacity`), and
//!   keeps a resource whose plugin went away at 0: so an allocatable count below capacity,
//!   or a GPU resource listed at 0, is a node that cannot give pods those GPUs.
//! - the kubelet's admission (`pkg/kubelet/lifecycle` and `cm/admission/errors.go`,
//!   `unexpectedAdmissionError`): reason `UnexpectedAdmissionError`, message `Allocate failed
//!   due to %v, which is unexpected` (the pod's `Message:` prefixes `Pod `), the cause being the
//!   device manager's `requested number of devices unavailable for %s. Requested: %d,
//!   Available: %d` (`devicesToAllocate`) or the device plugin's own error (`… rpc failed with
//!   err: …`).
//! - the scheduler (`pkg/scheduler/framework/plugins/noderesources/fit.go`, `Insufficient %v`
//!   per resource), summed into `0/N nodes are available: M Insufficient nvidia.com/gpu.`.
//! - NVIDIA's KAI Scheduler (github.com/kai-scheduler/KAI-Scheduler, read 2026-12 through the
//!   search index): a node's fit error for a resource is
//!   `Node didn't have enough resources: %s, requested: %s, used: %s, capacity: %s` (or `…: %s,
//!   taking all considerations into account` for a distributed task), `%s` being KAI's display
//!   name of the resource, `GPUs` for whole or fractional GPUs and `GPU memory` for a
//!   `gpu-memory` request (`pkg/scheduler/k8s_internal`, `NewInsufficientResourceError`,
//!   `NewInsufficientGpuMemoryCapacity`); a pending task's fit errors are summed per reason into
//!   `no nodes with enough resources were found: N node(s) didn't have enough resources: GPUs.`
//!   (`pkg/scheduler/api/common_info`'s fit errors, as `pkg/scheduler/actions/allocate`'s
//!   tests assert it; `No nodes …` in the 2025 releases, KAI-Scheduler#39), and a topology
//!   constraint's into `node-group(s) didn't have enough resources: GPUs`. The podgroup's
//!   condition and the pod's `Unschedulable` event carry the text.
//! - the kubelet's device manager (kubernetes/kubernetes
//!   `pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go`, `Run`; before 1.25
//!   `endpoint.go`, `run`): it opens the plugin's `ListAndWatch` stream and, when `Recv` fails,
//!   logs `"ListAndWatch ended unexpectedly for device plugin" err="…" resource="<name>"`
//!   (`klog.ErrorS`; older `listAndWatch ended unexpectedly for device plugin %s with error %v`
//!   and a `resourceName=` key) and stops listening; the device manager drops the endpoint's
//!   devices after its grace period (`endpointStopGracePeriod`, 5 min). The stream ends on every
//!   plugin restart (`Unavailable … EOF`) and the plugin registers again, so that alone is no
//!   fault. One error is deterministic: grpc-go's client refuses a message over its receive
//!   limit, 4 MiB by default (`defaultClientMaxReceiveMessageSize`, which the kubelet's plugin
//!   dial does not raise), with `code = ResourceExhausted desc = grpc: received message larger
//!   than max (<size> vs. <limit>)`: a plugin whose device list is that large never delivers
//!   one, on every registration, and the node never offers that resource
//!   (github.com/Project-HAMi/volcano-vgpu-device-plugin/issues/99: `volcano.sh/vgpu-memory`,
//!   one device per MiB of 8 x H20). Read for a resource whose name holds `gpu`.
//! - gpu-feature-discovery's node labels (NVIDIA/k8s-device-plugin at 1b826acc,
//!   `internal/lm/resource.go`: `nvidia.com/gpu.count`, `.product`, `.memory`, `.replicas`,
//!   `nvidia.com/mig-<profile>.count`, `nvidia.com/mig.strategy`, …) as `kubectl describe
//!   node` lists them (`key=value`): read only so a label listing is known for what it is; the
//!   labels say what the node has, not what it can give.
//! - Slurm (SchedMD/slurm at 284c3b95): `scontrol show node` (`src/api/node_info.c`,
//!   `slurm_sprint_node_table`: `NodeName=%s`, `Gres=%s`, `CfgTRES=%s`, `AllocTRES=%s`,
//!   `State=%s…`, `Reason=%s [%s@%s]`); slurmctld's check of a node's registration
//!   (`src/interfaces/gres.c`, `_node_config_validate`: the reason `%s count reported lower than
//!   configured (%"PRIu64" < %"PRIu64")` with the gres type, e.g. `gres/gpu`, and `Count changed
//!   on node %s (%"PRIu64" != %"PRIu64")`; `src/slurmctld/node_mgr.c`: `Setting node %s state to
//!   INVAL with reason:%s`), which drains the node; and the submit commands' error for a request
//!   the controller refuses (`src/common/slurm_errno.c`, ESLURM_INVALID_GRES: `Invalid generic
//!   resource (gres) specification`, printed by `sbatch: error: Batch job submission failed:
//!   %m`, srun's `Unable to allocate resources: %s` / `Unable to create step for job %u: %m`),
//!   with the site's own `error:` lines a job-submit filter prints above it. The same commands
//!   print ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, `Requested node configuration is not
//!   available`, when no node of the partition could ever hold the request (slurmctld's
//!   `job_mgr.c` and the select plugin's test of the job against every node of the partition):
//!   a refusal of the request's shape, not a wait. It says nothing of GPUs by itself (CPUs or
//!   memory per node can be what no node has), so it is read only where the paste also shows
//!   the command's GPU request, one of the options `src/common/slurm_opt.c` defines for
//!   sbatch, salloc and srun: `--gres=gpu[:type]:N` (or `--gres gpu…`), `--gpus[=]N`/`-G N`,
//!   `--gpus-per-node`, `--gpus-per-task`, `--gpus-per-socket`, on a command line or an
//!   `#SBATCH` line.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct GpuScheduling {
    /// GPU resources of Kubernetes nodes, from `Capacity:`/`Allocatable:` (describe) or
    /// `capacity:`/`allocatable:` (-o yaml).
    pub k8s_resources: Vec<K8sResource>,
    /// The kubelet's `UnexpectedAdmissionError`s: the cause after `Allocate failed due to`.
    pub admission_errors: Vec<Admission>,
    /// Resources the scheduler found too few of (`Insufficient nvidia.com/gpu`), with the
    /// number of nodes when the summary gives it.
    pub insufficient: Vec<Insufficient>,
    /// gpu-feature-discovery labels (`nvidia.com/gpu.count=8`), key and value.
    pub gfd_labels: Vec<(String, String)>,
    /// Nodes of `scontrol show node`.
    pub slurm_nodes: Vec<SlurmNode>,
    /// slurmctld's `gres/gpu count reported lower than configured (R < C)`.
    pub gres_count_lower: Vec<GresLower>,
    /// Submit errors ending in `Invalid generic resource (gres) specification`, with the other
    /// `error:` lines of the same command (a site filter's reason).
    pub invalid_gres: Vec<String>,
    /// Submit errors ending in `Requested node configuration is not available`, read where the
    /// paste also shows the command's GPU request: the error and the request, as `error (the
    /// request: --gres=gpu:teslap100:1)`.
    pub node_config_unavailable: Vec<String>,
    /// The kubelet's `ListAndWatch ended unexpectedly` for a GPU resource whose device list is
    /// over its gRPC receive limit (`received message larger than max`).
    pub device_lists_too_large: Vec<DeviceListTooLarge>,
    /// One sentence per thing the text shows the scheduler cannot give.
    pub findings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DeviceListTooLarge {
    pub resource: String,
    /// The message's size and the kubelet's limit, bytes.
    pub size: u64,
    pub limit: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct K8sResource {
    pub resource: String,
    pub capacity: Option<u64>,
    pub allocatable: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Admission {
    pub cause: String,
    pub resource: Option<String>,
    pub requested: Option<u64>,
    pub available: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Insufficient {
    pub resource: String,
    pub nodes: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SlurmNode {
    pub name: Option<String>,
    pub gres: Option<String>,
    /// `gres/gpu=N` of `CfgTRES`.
    pub cfg_gpus: Option<u64>,
    /// `gres/gpu=N` of `AllocTRES`.
    pub alloc_gpus: Option<u64>,
    pub state: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct GresLower {
    pub gres: String,
    pub reported: u64,
    pub configured: u64,
    pub node: Option<String>,
}

/// A GPU extended resource: NVIDIA's device plugin names (`nvidia.com/gpu`,
/// `nvidia.com/gpu.shared`, `nvidia.com/mig-1g.10gb`).
fn gpu_resource(name: &str) -> bool {
    name == "nvidia.com/gpu"
        || name == "nvidia.com/gpu.shared"
        || name.strip_prefix("nvidia.com/mig-").is_some_and(|p| {
            p.contains("g.")
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '+')
        })
}

/// A quantity as kubectl prints it for a device count: digits, quoted or not.
fn count(v: &str) -> Option<u64> {
    let v = v.trim().trim_matches('"').trim_matches('\'');
    (!v.is_empty() && v.len() <= 9 && v.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse().ok())
        .flatten()
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The resource lists: a `Capacity:`/`capacity:` or `Allocatable:`/`allocatable:` line alone,
/// then the lines indented deeper (`name: value`; describe's `name:  value`). Lines that are
/// no `name: value` (a paste's `....` elisions) are passed over inside the block.
fn resource_lists(lines: &[&str]) -> Vec<K8sResource> {
    let mut out: Vec<K8sResource> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let head = lines[i].trim();
        let which = match head {
            "Capacity:" | "capacity:" => Some(true),
            "Allocatable:" | "allocatable:" => Some(false),
            _ => None,
        };
        let Some(is_capacity) = which else {
            i += 1;
            continue;
        };
        let base = indent(lines[i]);
        i += 1;
        while i < lines.len() {
            let l = lines[i];
            if l.trim().is_empty() {
                i += 1;
                continue;
            }
            if indent(l) <= base {
                break;
            }
            if let Some((k, v)) = l.trim().split_once(':')
                && gpu_resource(k.trim())
                && let Some(n) = count(v)
            {
                let name = k.trim();
                let at = match out.iter().position(|r| r.resource == name) {
                    Some(at) => at,
                    None => {
                        out.push(K8sResource {
                            resource: name.to_string(),
                            ..Default::default()
                        });
                        out.len() - 1
                    }
                };
                if is_capacity {
                    out[at].capacity = Some(n);
                } else {
                    out[at].allocatable = Some(n);
                }
            }
            i += 1;
        }
    }
    out.truncate(super::MAX_ITEMS);
    out
}

/// The kubelet's admission failure in a line: the cause between `Allocate failed due to ` and
/// `, which is unexpected` (or the line's end).
fn admission(l: &str) -> Option<Admission> {
    let at = l.find("Allocate failed due to ")?;
    let rest = &l[at + "Allocate failed due to ".len()..];
    let cause = rest
        .split_once(", which is unexpected")
        .map_or(rest, |(c, _)| c)
        .trim();
    if cause.is_empty() {
        return None;
    }
    let mut a = Admission {
        cause: super::clip(cause, super::MAX_TEXT),
        ..Default::default()
    };
    if let Some(r) = cause.strip_prefix("requested number of devices unavailable for ")
        && let Some((res, nums)) = r.split_once(". Requested:")
    {
        a.resource = Some(res.trim().to_string());
        let (req, avail) = nums.split_once(", Available:").unwrap_or((nums, ""));
        a.requested = count(req);
        a.available = count(avail.trim_end_matches('.'));
    }
    Some(a)
}

/// `M Insufficient nvidia.com/gpu` in the scheduler's summary (or `Insufficient nvidia.com/gpu`
/// alone): one entry per GPU resource named.
fn insufficient(l: &str, out: &mut Vec<Insufficient>) {
    let mut rest = l;
    while let Some(at) = rest.find("Insufficient ") {
        let before = rest[..at].trim_end();
        let after = &rest[at + "Insufficient ".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "./-_".contains(*c))
            .collect();
        let name = name.trim_end_matches('.').to_string();
        if gpu_resource(&name) {
            let nodes = before.rsplit([' ', ',', ':']).next().and_then(count);
            let e = Insufficient {
                resource: name,
                nodes,
            };
            if !out.contains(&e) && out.len() < super::MAX_ITEMS {
                out.push(e);
            }
        }
        rest = after;
    }
}

/// KAI Scheduler's fit error for GPUs in a line (module doc): `N node(s) didn't have enough
/// resources: GPUs`, `N node-group(s) …`, or one node's `Node didn't have enough resources:
/// GPUs, requested: …`; `GPU memory` likewise. Other resources (`CPU cores`, `memory`) are not
/// a GPU's and are left alone.
fn kai_insufficient(l: &str, out: &mut Vec<Insufficient>) {
    const NOT_ENOUGH: &str = " didn't have enough resources: ";
    let mut rest = l;
    while let Some(at) = rest.find(NOT_ENOUGH) {
        let before = rest[..at].trim_end();
        let after = &rest[at + NOT_ENOUGH.len()..];
        let name = ["GPU memory", "GPUs"].into_iter().find(|n| {
            after
                .strip_prefix(n)
                .is_some_and(|r| r.is_empty() || r.starts_with([',', '.', ' ', '*', '"', '\'']))
        });
        let who = before.rsplit([' ', ':', '*', '"']).next().unwrap_or("");
        let nodes = if who == "Node" {
            Some(1)
        } else if who == "node(s)" || who == "node-group(s)" {
            before[..before.len() - who.len()]
                .trim_end()
                .rsplit([' ', ':', '*', '"'])
                .next()
                .and_then(count)
        } else {
            None
        };
        if let Some(name) = name
            && matches!(who, "Node" | "node(s)" | "node-group(s)")
        {
            let e = Insufficient {
                resource: name.to_string(),
                nodes,
            };
            if !out.contains(&e) && out.len() < super::MAX_ITEMS {
                out.push(e);
            }
        }
        rest = after;
    }
}

/// The kubelet's `ListAndWatch ended unexpectedly for device plugin` for a GPU resource with
/// grpc-go's `received message larger than max (<size> vs. <limit>)` (module doc).
fn device_list_too_large(l: &str) -> Option<DeviceListTooLarge> {
    const ENDED: &str = "istAndWatch ended unexpectedly for device plugin";
    const LARGER: &str = "received message larger than max (";
    let at = l.find(ENDED)?;
    if !matches!(l[..at].chars().last(), Some('L' | 'l')) {
        return None;
    }
    let after = &l[at + ENDED.len()..];
    let m = after.find(LARGER)?;
    let (size, rest) = after[m + LARGER.len()..].split_once(" vs. ")?;
    let limit = rest.split(')').next()?;
    let (size, limit) = (size.trim().parse().ok()?, limit.trim().parse().ok()?);
    // the resource: klog's `resource="…"` / `resourceName="…"`, or the old `plugin %s with`
    let resource = ["resource=\"", "resourceName=\""]
        .iter()
        .find_map(|k| {
            let i = after.find(k)?;
            after[i + k.len()..].split('"').next()
        })
        .or_else(|| {
            after
                .trim_start()
                .split_once(" with error")
                .map(|(r, _)| r.trim())
        })?;
    (resource.to_ascii_lowercase().contains("gpu")
        && !resource.is_empty()
        && resource.len() <= 128
        && !resource.contains(char::is_whitespace))
    .then(|| DeviceListTooLarge {
        resource: resource.to_string(),
        size,
        limit,
    })
}

/// A gpu-feature-discovery label line: `nvidia.com/<name>=<value>`, nothing else on the line
/// (describe's `Labels:` column, or the same after `Labels:`).
fn gfd_label(l: &str) -> Option<(String, String)> {
    let t = l.trim();
    let t = t.strip_prefix("Labels:").map_or(t, str::trim);
    let (k, v) = t.split_once('=')?;
    let name = k.strip_prefix("nvidia.com/")?;
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c))
        && !v.contains(char::is_whitespace);
    ok.then(|| (k.to_string(), v.to_string()))
}

/// `gres/gpu=N` inside a TRES list (`cpu=8,mem=1M,billing=8,gres/gpu=1`).
fn tres_gpus(v: &str) -> Option<u64> {
    v.split(',')
        .find_map(|kv| kv.strip_prefix("gres/gpu="))
        .and_then(count)
}

/// `scontrol show node`: a block from `NodeName=` through its indented `KEY=value` lines, or
/// such lines alone (`scontrol show node X | grep gres`).
fn slurm_nodes(lines: &[&str]) -> Vec<SlurmNode> {
    let mut out: Vec<SlurmNode> = Vec::new();
    let mut cur: Option<SlurmNode> = None;
    for l in lines {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("NodeName=") {
            let name = rest.split_whitespace().next().unwrap_or("");
            // scontrol's first line: `NodeName=%s Arch=%s CoresPerSocket=%u` (slurm.conf's
            // `NodeName=… Gres=…` lines hold no Arch)
            if rest.contains(" Arch=") || rest.trim() == name {
                if let Some(n) = cur.take() {
                    out.push(n);
                }
                cur = Some(SlurmNode {
                    name: Some(name.to_string()),
                    ..Default::default()
                });
                continue;
            }
        }
        let key_of = |p: &str| t.strip_prefix(p);
        let node_line = key_of("Gres=").is_some()
            || key_of("CfgTRES=").is_some()
            || key_of("AllocTRES=").is_some()
            || (key_of("State=").is_some() && t.contains(" ThreadsPerCore="))
            || (key_of("Reason=").is_some() && cur.is_some());
        // without its NodeName line, only the indented TRES lines of a grep naming gres/gpu
        let alone_ok = l.starts_with([' ', '\t']) && t.contains("gres/gpu");
        if !node_line || (cur.is_none() && !alone_ok) {
            continue;
        }
        let n = cur.get_or_insert_with(SlurmNode::default);
        if let Some(v) = key_of("Gres=") {
            n.gres = Some(v.split_whitespace().next().unwrap_or("").to_string());
        } else if let Some(v) = key_of("CfgTRES=") {
            n.cfg_gpus = tres_gpus(v.trim());
        } else if let Some(v) = key_of("AllocTRES=") {
            n.alloc_gpus = tres_gpus(v.trim());
        } else if let Some(v) = key_of("State=") {
            n.state = v.split_whitespace().next().map(str::to_string);
        } else if let Some(v) = key_of("Reason=") {
            n.reason = Some(super::clip(v.trim(), super::MAX_TEXT));
        }
    }
    if let Some(n) = cur {
        out.push(n);
    }
    out.truncate(super::MAX_ITEMS);
    out
}

/// slurmctld's reason `<gres> count reported lower than configured (R < C)`.
fn gres_lower(l: &str) -> Option<GresLower> {
    let at = l.find(" count reported lower than configured (")?;
    let gres = l[..at].rsplit([' ', ':', '=']).next()?.to_string();
    if !gres.starts_with("gres/") {
        return None;
    }
    let nums = &l[at + " count reported lower than configured (".len()..];
    let (r, rest) = nums.split_once(" < ")?;
    let c = rest.split_once(')')?.0;
    let node = l
        .split_once("Setting node ")
        .and_then(|(_, r)| r.split_whitespace().next())
        .map(str::to_string);
    Some(GresLower {
        gres,
        reported: count(r)?,
        configured: count(c)?,
        node,
    })
}

const INVALID_GRES: &str = "Invalid generic resource (gres) specification";
/// ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE's text (`src/common/slurm_errno.c`).
const NODE_CONFIG: &str = "Requested node configuration is not available";

/// A GPU request among a line's words: `--gres=gpu:a100:2` (a `gres` list holding `gpu…`),
/// `--gres gpu:1`, `--gpus=2`/`--gpus 2`/`-G 2`, `--gpus-per-node=4`, `--gpus-per-task=1`,
/// `--gpus-per-socket=1` (`src/common/slurm_opt.c`), on a command line or an `#SBATCH` line.
/// A count of 0 asks for none.
fn gpu_request(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let gres_gpu = |v: &str| {
        v.split(',')
            .any(|g| g.strip_prefix("gres/").unwrap_or(g).starts_with("gpu"))
    };
    let count_not_zero = |v: &str| {
        // `a100:2` or `2`: the last `:` field is the count
        let n = v.rsplit(':').next().unwrap_or(v);
        n.parse::<u64>().is_ok_and(|n| n > 0)
    };
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        let (opt, val) = match w.split_once('=') {
            Some((o, v)) => (o, v),
            None => (*w, next),
        };
        let hit = match opt {
            "--gres" => gres_gpu(val) && val.split(',').all(|g| !g.ends_with(":0")),
            "--gpus" | "-G" | "--gpus-per-node" | "--gpus-per-task" | "--gpus-per-socket" => {
                count_not_zero(val)
            }
            _ => false,
        };
        if hit {
            return Some(if w.contains('=') {
                w.to_string()
            } else {
                format!("{w} {val}")
            });
        }
    }
    None
}

/// A submit command's `error:` line (`sbatch: error: …`, `srun: error: …`, `salloc: error: …`).
fn submit_error(l: &str) -> Option<&str> {
    let t = l.trim();
    ["sbatch: error: ", "srun: error: ", "salloc: error: "]
        .iter()
        .find_map(|p| t.strip_prefix(p))
}

pub fn parse_gpu_scheduling(text: &str) -> GpuScheduling {
    let lines: Vec<&str> = super::scan::lines(text).take(MAX_LINES).collect();
    let mut v = GpuScheduling {
        k8s_resources: resource_lists(&lines),
        slurm_nodes: slurm_nodes(&lines),
        ..Default::default()
    };
    let mut errors: Vec<&str> = Vec::new();
    let mut unavailable: Vec<&str> = Vec::new();
    let mut request: Option<String> = None;
    for l in &lines {
        if request.is_none() {
            request = gpu_request(l);
        }
        if let Some(a) = admission(l)
            && !v.admission_errors.contains(&a)
            && v.admission_errors.len() < super::MAX_ITEMS
        {
            v.admission_errors.push(a);
        }
        insufficient(l, &mut v.insufficient);
        kai_insufficient(l, &mut v.insufficient);
        if let Some(d) = device_list_too_large(l)
            && !v.device_lists_too_large.contains(&d)
            && v.device_lists_too_large.len() < super::MAX_ITEMS
        {
            v.device_lists_too_large.push(d);
        }
        if let Some(kv) = gfd_label(l)
            && v.gfd_labels.len() < super::MAX_ITEMS
        {
            v.gfd_labels.push(kv);
        }
        if let Some(g) = gres_lower(l)
            && !v.gres_count_lower.contains(&g)
            && v.gres_count_lower.len() < super::MAX_ITEMS
        {
            v.gres_count_lower.push(g);
        }
        if let Some(e) = submit_error(l) {
            if e.ends_with(INVALID_GRES) {
                let mut said: Vec<String> = errors
                    .drain(..)
                    .filter(|x| !x.contains(INVALID_GRES))
                    .map(|x| x.to_string())
                    .collect();
                said.push(e.to_string());
                let s = super::clip(&said.join(" / "), super::MAX_TEXT);
                if !v.invalid_gres.contains(&s) && v.invalid_gres.len() < super::MAX_ITEMS {
                    v.invalid_gres.push(s);
                }
            } else if e.ends_with(NODE_CONFIG) {
                unavailable.push(e);
            } else {
                errors.push(e);
            }
        }
    }
    // the refusal is of the GPU request only where the paste shows one
    if let Some(req) = &request {
        for e in unavailable {
            let s = super::clip(&format!("{e} (the request: {req})"), super::MAX_TEXT);
            if !v.node_config_unavailable.contains(&s)
                && v.node_config_unavailable.len() < super::MAX_ITEMS
            {
                v.node_config_unavailable.push(s);
            }
        }
    }
    // a slurmctld line names the node; the scontrol block gives it too
    let mut f: Vec<String> = Vec::new();
    for r in &v.k8s_resources {
        match (r.capacity, r.allocatable) {
            (Some(c), Some(a)) if a < c => f.push(format!(
                "a node offers {a} of its {c} {} (allocatable below capacity: the device plugin reports the others unhealthy)",
                r.resource
            )),
            (Some(0), _) | (None, Some(0)) => f.push(format!(
                "a node lists {} at 0: its device plugin registered no usable GPU",
                r.resource
            )),
            _ => {}
        }
    }
    for a in &v.admission_errors {
        f.push(match (&a.resource, a.requested, a.available) {
            (Some(res), Some(q), Some(n)) => format!(
                "the kubelet refused the pod (UnexpectedAdmissionError): {q} {res} requested, {n} available on the node"
            ),
            _ => format!(
                "the kubelet refused the pod (UnexpectedAdmissionError): {}",
                a.cause
            ),
        });
    }
    for i in &v.insufficient {
        f.push(match i.nodes {
            Some(n) => format!(
                "the scheduler found {n} node(s) with too few free {}",
                i.resource
            ),
            None => format!("the scheduler found too few free {}", i.resource),
        });
    }
    for d in &v.device_lists_too_large {
        f.push(format!(
            "the kubelet cannot receive the device plugin's list of {}: {} bytes, over its gRPC limit of {} (ResourceExhausted), so the node never offers {}",
            d.resource, d.size, d.limit, d.resource
        ));
    }
    for g in &v.gres_count_lower {
        f.push(format!(
            "Slurm: {}{} reported {} of the {} configured, so the node is drained",
            g.gres,
            g.node
                .as_deref()
                .map(|n| format!(" on node {n}"))
                .unwrap_or_default(),
            g.reported,
            g.configured
        ));
    }
    for n in &v.slurm_nodes {
        if let Some(r) = &n.reason
            && r.contains("gres/")
            && !v.gres_count_lower.iter().any(|g| r.contains(&g.gres))
        {
            f.push(format!(
                "Slurm node {} is {} for: {r}",
                n.name.as_deref().unwrap_or("(unnamed)"),
                n.state.as_deref().unwrap_or("drained")
            ));
        }
    }
    for e in &v.invalid_gres {
        f.push(format!("Slurm refused the job's GPU request: {e}"));
    }
    for e in &v.node_config_unavailable {
        f.push(format!(
            "Slurm refused the job's GPU request, no node of the partition offers what it asks for: {e}"
        ));
    }
    f.dedup();
    f.truncate(super::MAX_ITEMS);
    v.findings = f;
    v
}

/// Lines [`parse_gpu_scheduling`] reads, from the top.
const MAX_LINES: usize = 20_000;

/// Literal text one of which a line holds for each thing [`looks_like`] asks for: a GPU
/// resource's name (`nvidia.com/`: the resource lists, the scheduler's `Insufficient`, the
/// feature-discovery labels), the kubelet's admission failure, the `scontrol` keys read, and
/// the slurmctld and submit-command messages, KAI Scheduler's fit error and the kubelet's
/// `ListAndWatch` end.
const ANY: [&str; 10] = [
    "nvidia.com/",
    "Allocate failed due to ",
    " didn't have enough resources: ",
    "istAndWatch ended unexpectedly for device plugin",
    "Gres=",
    "CfgTRES=",
    "AllocTRES=",
    " count reported lower than configured (",
    INVALID_GRES,
    NODE_CONFIG,
];

/// True when the text holds anything this kind reads.
pub fn looks_like(text: &str) -> bool {
    // a text whose lines read hold none of [`ANY`] holds nothing: one search of those lines,
    // not the reading of each (a 60 MB training log is handed to every detector)
    static ANY_OF: std::sync::LazyLock<super::scan::Literals> =
        std::sync::LazyLock::new(|| super::scan::Literals::new(&ANY));
    let read = memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(MAX_LINES - 1)
        .map_or(text, |i| &text[..i]);
    if !ANY_OF.is_match(read) {
        return false;
    }
    reads_anything(&parse_gpu_scheduling(text))
}

/// True when a reading holds anything this kind reads.
fn reads_anything(v: &GpuScheduling) -> bool {
    !v.k8s_resources.is_empty()
        || !v.admission_errors.is_empty()
        || !v.insufficient.is_empty()
        || v.gfd_labels.len() >= 2
        || v.slurm_nodes
            .iter()
            .any(|n| n.gres.is_some() || n.cfg_gpus.is_some() || n.alloc_gpus.is_some())
        || !v.gres_count_lower.is_empty()
        || !v.invalid_gres.is_empty()
        || !v.node_config_unavailable.is_empty()
        || !v.device_lists_too_large.is_empty()
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct GpuSchedulingKind;

impl super::EvidenceKind for GpuSchedulingKind {
    fn name(&self) -> &'static str {
        "gpu-scheduling"
    }
    fn doc(&self) -> &'static str {
        "what a cluster scheduler says about the GPUs it can give: a Kubernetes node's nvidia.com/gpu capacity and allocatable (describe node, get node -o yaml), gpu-feature-discovery labels, the kubelet's UnexpectedAdmissionError, the scheduler's Insufficient nvidia.com/gpu (KAI Scheduler's didn't have enough resources: GPUs), the kubelet's ListAndWatch refusing a GPU plugin's device list over its gRPC limit; Slurm's scontrol show node, slurmctld's gres count check and the submit commands' invalid gres error or refusal of a GPU request no node can hold"
    }
    fn example(&self) -> &'static str {
        "kubectl describe node gpu-node-1; scontrol show node gpu01"
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
                "GPU resources the scheduler found too few of, with the node count",
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
                "submit errors ending in Invalid generic resource (gres) specification, with the command's other error lines",
            ),
            (
                "node_config_unavailable",
                "submit errors ending in Requested node configuration is not available, where the paste also shows the command's GPU request (--gres=gpu…, --gpus…), with that request",
            ),
            (
                "device_lists_too_large",
                "the kubelet's ListAndWatch ended for a GPU resource whose device list is over its gRPC receive limit: resource, size, limit",
            ),
            (
                "findings",
                "one sentence per GPU the text shows the scheduler cannot give",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cluster.gpus"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like(s.text)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        if !looks_like(text) {
            return Err(super::ParseError::NotThisKind(
                "no node GPU resource list, GPU admission or scheduling error, gpu-feature-discovery labels, scontrol node lines nor Slurm gres error",
            ));
        }
        super::to_value(&parse_gpu_scheduling(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literal_search_passes_over_no_text_the_reading_reads() {
        // every corpus text: where the reading finds anything, the lines it reads hold one of
        // `ANY`
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let texts: Vec<String> = std::fs::read_dir(&dir)
            .expect("corpus")
            .filter_map(|e| {
                let p = e.ok()?.path();
                (!p.to_string_lossy().ends_with(".yaml"))
                    .then(|| std::fs::read_to_string(&p).ok())
                    .flatten()
            })
            .collect();
        let mut read = 0;
        for t in &texts {
            let whole = reads_anything(&parse_gpu_scheduling(t));
            assert_eq!(looks_like(t), whole, "{t:.200}");
            read += usize::from(whole);
        }
        // the corpus's scheduler texts
        assert!(read >= 5, "{read} texts read");
        // a line past those read is not searched either
        let mut far = "x\n".repeat(MAX_LINES);
        far.push_str("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected\n");
        assert!(!looks_like(&far));
        assert!(looks_like(&far[2..]));
    }

    #[test]
    fn describe_and_yaml_resource_lists() {
        // k8s-device-plugin#58: capacity 16, allocatable 0 (kubectl get node -o yaml)
        let t = "    status:\n      allocatable:\n        cpu: \"48\"\n        nvidia.com/gpu: \"0\"\n        pods: \"110\"\n      capacity:\n        cpu: \"48\"\n        nvidia.com/gpu: \"16\"\n        pods: \"110\"\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(
            v.k8s_resources,
            vec![K8sResource {
                resource: "nvidia.com/gpu".into(),
                capacity: Some(16),
                allocatable: Some(0)
            }]
        );
        assert_eq!(v.findings.len(), 1);
        // k8s-device-plugin#1228: both 0, with the poster's `....` elisions
        let t = "  allocatable:\n    .......\n    nvidia.com/gpu: \"0\"\n    ....\n  capacity:\n    .......\n    nvidia.com/gpu: \"0\"\n    ....\n";
        assert!(parse_gpu_scheduling(t).findings[0].contains("at 0"));
        // describe node of a healthy 8-GPU node: no finding
        let t = "Capacity:\n  cpu:                128\n  nvidia.com/gpu:     8\n  pods:               110\nAllocatable:\n  cpu:                128\n  nvidia.com/gpu:     8\n  pods:               110\nSystem Info:\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(v.k8s_resources[0].capacity, Some(8));
        assert_eq!(v.k8s_resources[0].allocatable, Some(8));
        assert!(v.findings.is_empty());
        // podman-desktop#7778: 1 of 1
        let t = "status:\n  allocatable:\n    nvidia.com/gpu: \"1\"\n  capacity:\n    nvidia.com/gpu: \"1\"\n";
        assert!(parse_gpu_scheduling(t).findings.is_empty());
        // a list without a GPU resource is not read, nor a `capacity:` of a PVC spec
        let t = "Capacity:\n  cpu:  8\n  memory:  1Gi\n";
        assert!(!looks_like(t));
        let t = "spec:\n  capacity:\n    storage: 10Gi\n";
        assert!(!looks_like(t));
    }

    #[test]
    fn the_kubelets_admission_errors() {
        // kubernetes#130145
        let t = "Status:              Failed\nReason:            UnexpectedAdmissionError\nMessage:         Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested:1, Available: 0, which is unexpected\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(
            v.admission_errors[0].resource.as_deref(),
            Some("nvidia.com/gpu")
        );
        assert_eq!(v.admission_errors[0].requested, Some(1));
        assert_eq!(v.admission_errors[0].available, Some(0));
        // kubernetes#97131: the plugin's own error as the cause
        let t = "Message:        Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = Unable to retrieve list of available devices: error creating nvml.Device 5: nvml: GPU is lost, which is unexpected\n";
        let v = parse_gpu_scheduling(t);
        assert!(v.admission_errors[0].cause.ends_with("nvml: GPU is lost"));
        assert_eq!(v.findings.len(), 1);
        // prose naming the reason alone is not an admission failure
        assert!(!looks_like(
            "pods keep ending in UnexpectedAdmissionError, why?\n"
        ));
    }

    #[test]
    fn the_schedulers_insufficient_gpu() {
        let t = "  Warning  FailedScheduling  40s (x2 over 40s)  default-scheduler  0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(
            v.insufficient,
            vec![Insufficient {
                resource: "nvidia.com/gpu".into(),
                nodes: Some(1)
            }]
        );
        // too little CPU or memory is not a GPU's
        assert!(!looks_like(
            "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory.\n"
        ));
    }

    #[test]
    fn kai_schedulers_fit_errors_for_gpus() {
        // github.com/kai-scheduler/KAI-Scheduler/issues/39 (corpus h164_k8sevents_kaisched39_…):
        // the pod's event as the poster pasted it, inside markdown bold
        let t = "**Warning  Unschedulable  kai-scheduler  No nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs.**\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(
            v.insufficient,
            vec![Insufficient {
                resource: "GPUs".into(),
                nodes: Some(2)
            }]
        );
        assert_eq!(
            v.findings,
            vec!["the scheduler found 2 node(s) with too few free GPUs".to_string()]
        );
        // KAI's allocate tests: the lower-case summary, and its per-node form
        // (`NewInsufficientResourceError`) and the topology form
        let t = "no nodes with enough resources were found: 10 node(s) didn't have enough resources: GPUs.\n";
        assert_eq!(parse_gpu_scheduling(t).insufficient[0].nodes, Some(10));
        let t = "Unschedulable: <dgx02>: Node didn't have enough resources: GPUs, requested: 1, used: 8, capacity: 8\n";
        assert_eq!(parse_gpu_scheduling(t).insufficient[0].nodes, Some(1));
        let t = "Not enough resources for the workload: node-group(s) didn't have enough resources: GPU memory.\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(v.insufficient[0].nodes, None);
        assert_eq!(
            v.findings,
            vec!["the scheduler found too few free GPU memory".to_string()]
        );
        let t = "Not enough resources for the workload: 3 node-group(s) didn't have enough resources: GPU memory.\n";
        assert_eq!(
            parse_gpu_scheduling(t).insufficient[0].resource,
            "GPU memory"
        );
        // healthy and neighbouring texts: CPU cores and memory are not a GPU's, prose naming
        // the phrase without a count is not KAI's
        for t in [
            "no nodes with enough resources were found: 4 node(s) didn't have enough resources: CPU cores.\n",
            "Node didn't have enough resources: memory, requested: 2147483648, used: 32290433792, capacity: 32457011200\n",
            "my nodes didn't have enough resources: GPUs are all taken\n",
        ] {
            assert!(!looks_like(t), "{t}");
        }
    }

    #[test]
    fn the_kubelet_refuses_a_device_list_over_its_grpc_limit() {
        // github.com/Project-HAMi/volcano-vgpu-device-plugin/issues/99 (corpus
        // h164_kubelet_volcanovgpu99_…): 8 x H20, one device per MiB of GPU memory
        let t = "E0116 16:52:03.819472  175650 client.go:88] \"ListAndWatch ended unexpectedly for device plugin\" err=\"rpc error: code = ResourceExhausted desc = grpc: received message larger than max (23264648 vs. 4194304)\" resource=\"volcano.sh/vgpu-memory\"\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(
            v.device_lists_too_large,
            vec![DeviceListTooLarge {
                resource: "volcano.sh/vgpu-memory".into(),
                size: 23264648,
                limit: 4194304
            }]
        );
        assert_eq!(v.findings.len(), 1);
        // github.com/Project-HAMi/volcano-vgpu-device-plugin/issues/134: the same under
        // journalctl's prefix; the kubelet before 1.25 (`endpoint.go`, written here in its
        // format string with the same error)
        let t = "Jun 05 10:59:27 cn-linux-005 kubelet[55792]: E0605 10:59:27.878147   55792 client.go:90] \"ListAndWatch ended unexpectedly for device plugin\" err=\"rpc error: code = ResourceExhausted desc = grpc: received message larger than max (9052428 vs. 4194304)\" resource=\"volcano.sh/vgpu-memory\"\n";
        assert_eq!(
            parse_gpu_scheduling(t).device_lists_too_large[0].size,
            9052428
        );
        let t = "E0116 16:52:03.819472  1 endpoint.go:107] listAndWatch ended unexpectedly for device plugin nvidia.com/gpu with error rpc error: code = ResourceExhausted desc = grpc: received message larger than max (5000000 vs. 4194304)\n";
        assert_eq!(
            parse_gpu_scheduling(t).device_lists_too_large[0].resource,
            "nvidia.com/gpu"
        );
        // no fault: a plugin restart's EOF (github.com/bottlerocket-os/bottlerocket/issues/4250),
        // the same limit for a resource that is not a GPU's, the registration lines
        for t in [
            "Oct 17 12:05:33 ip-xx-xx-x-xx.ec2.internal kubelet[1655]: E1017 12:05:33.335816    1655 client.go:90] \"ListAndWatch ended unexpectedly for device plugin\" err=\"rpc error: code = Unavailable desc = error reading from server: EOF\" resource=\"nvidia.com/gpu\"\n",
            "E0116 16:52:03.819472  1 client.go:88] \"ListAndWatch ended unexpectedly for device plugin\" err=\"rpc error: code = ResourceExhausted desc = grpc: received message larger than max (5000000 vs. 4194304)\" resource=\"example.com/hugepages\"\n",
            "I0116 16:52:03.110671  175650 server.go:144] \"Got registration request from device plugin with resource\" resourceName=\"volcano.sh/vgpu-number\"\n",
        ] {
            assert!(!looks_like(t), "{t}");
        }
    }

    #[test]
    fn gfd_labels_are_read_not_judged() {
        // k8s-device-plugin#1501
        let t = "                    nvidia.com/gpu.count=8\n                    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n                    nvidia.com/gpu.replicas=1\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(v.gfd_labels.len(), 3);
        assert!(looks_like(t) && v.findings.is_empty());
        // one label in prose is not a listing
        assert!(!looks_like("set nvidia.com/gpu.present=true on the node\n"));
    }

    #[test]
    fn scontrol_show_node() {
        // awsome-distributed-ai#195 (a comment, Slurm 24.05)
        let t = "NodeName=yigou-dev-102-68 Arch=x86_64 CoresPerSocket=1 \n   Gres=gpu:nvidia-rtx-3090:1\n   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n   CfgTRES=cpu=8,mem=1M,billing=8,gres/gpu=1\n   AllocTRES=\n   \n   Reason=gres/gpu count reported lower than configured (0 < 1) [slurm@2024-12-19T11:03:34]\n";
        let v = parse_gpu_scheduling(t);
        let n = &v.slurm_nodes[0];
        assert_eq!(n.name.as_deref(), Some("yigou-dev-102-68"));
        assert_eq!(n.gres.as_deref(), Some("gpu:nvidia-rtx-3090:1"));
        assert_eq!(n.cfg_gpus, Some(1));
        assert_eq!(n.state.as_deref(), Some("IDLE+DRAIN"));
        assert_eq!(v.gres_count_lower[0].reported, 0);
        assert_eq!(v.gres_count_lower[0].configured, 1);
        assert_eq!(v.findings.len(), 1);
        // SlurmCommander#5: grep gres of a healthy node, 3 of 4 allocated
        let t = "# scontrol show node sh03-12n09  | grep gres\n   CfgTRES=cpu=32,mem=250G,billing=154,gres/gpu=4\n   AllocTRES=cpu=15,mem=48G,gres/gpu=3\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(v.slurm_nodes[0].cfg_gpus, Some(4));
        assert_eq!(v.slurm_nodes[0].alloc_gpus, Some(3));
        assert!(looks_like(t) && v.findings.is_empty());
        // a job record's TRES is scontrol show job's, not a node's
        assert!(!looks_like(
            "JobId=5 JobName=train\n   ReqTRES=cpu=1,gres/gpu=1\n"
        ));
    }

    #[test]
    fn slurmctld_and_submit_errors() {
        // puppet-magic_castle#361
        let t = "May 23 12:49:52 mgmt1 slurmctld[80708]: slurmctld: error: Setting node nodegpu1 state to INVAL with reason:gres/gpu count reported lower than configured (3 < 4)\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(
            v.gres_count_lower,
            vec![GresLower {
                gres: "gres/gpu".into(),
                reported: 3,
                configured: 4,
                node: Some("nodegpu1".into())
            }]
        );
        // radical.saga#679: the site's filter line kept beside the refusal
        let t = "sbatch: error: Gres format wrong, specify --gres=gpu:TYPE:NUM\nsbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n";
        let v = parse_gpu_scheduling(t);
        assert_eq!(v.invalid_gres.len(), 1);
        assert!(v.invalid_gres[0].starts_with("Gres format wrong"));
        // srun's step error
        assert!(looks_like(
            "srun: error: Unable to create step for job 16413634: Invalid generic resource (gres) specification\n"
        ));
        // other refusals are not a gres one
        assert!(!looks_like(
            "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"
        ));
    }

    #[test]
    fn a_gpu_request_no_node_can_hold() {
        // problem: AaltoSciComp/scicomp-docs#26 (corpus h153_sbatcherr_aalto26_…), a P100 asked
        // for without the GPU partition; the same request with `-p gpushort` starts
        let t = crate::test_corpus(
            "h153_sbatcherr_aalto26_sinteractive_gres_teslap100_no_partition.txt",
        );
        assert!(looks_like(&t));
        let v = parse_gpu_scheduling(&t);
        assert_eq!(
            v.node_config_unavailable,
            vec![
                "Batch job submission failed: Requested node configuration is not available (the request: --gres=gpu:teslap100:1)"
                    .to_string()
            ]
        );
        assert_eq!(v.findings.len(), 1);
        assert!(v.findings[0].contains("no node of the partition"));
        // srun's and salloc's wording, the request on an `#SBATCH` line or as `--gpus N`
        let t = "#SBATCH --gpus-per-node=8\nsrun: error: Unable to allocate resources: Requested node configuration is not available\n";
        assert!(
            parse_gpu_scheduling(t).node_config_unavailable[0]
                .ends_with("(the request: --gpus-per-node=8)")
        );
        let t = "$ salloc --gpus 4 -p debug\nsalloc: error: Job submit/allocate failed: Requested node configuration is not available\n";
        assert!(
            parse_gpu_scheduling(t).node_config_unavailable[0].ends_with("(the request: --gpus 4)")
        );
    }

    #[test]
    fn the_same_refusal_without_a_gpu_request_is_not_read() {
        // ArjunaCluster/ArjunaUsers#112: 56 tasks on nodes that keep 2 of their cores, no GPU
        // asked for (the fix was `-n 54`); the script, then the error its prose quotes
        let t = "#!/bin/bash\n#SBATCH -p debug\n#SBATCH -N 1\n#SBATCH -n 56\n#SBATCH --mem=2G\n#SBATCH -A marom\n#SBATCH -J test\n\necho \"Hello World!\"\nsbatch: error: Batch job submission failed: Requested node configuration is not available\n";
        assert!(!looks_like(t));
        assert!(parse_gpu_scheduling(t).findings.is_empty());
        // a count of 0 asks for no GPU; `-G` with no count is some other tool's flag
        assert_eq!(gpu_request("sbatch --gpus=0 job.sh"), None);
        assert_eq!(gpu_request("grep -G pattern file"), None);
        assert_eq!(gpu_request("#SBATCH --gres=gpu:0"), None);
        assert_eq!(
            gpu_request("#SBATCH --gres=gpu:a100:2"),
            Some("--gres=gpu:a100:2".into())
        );
        assert_eq!(gpu_request("srun -G 1 python x.py"), Some("-G 1".into()));
    }
}
