//! Log probes: `nccl.log` (an NCCL_DEBUG=INFO log, `--nccl-log` or `--evidence`),
//! `kernel.log` (Xid, fallen off the bus, AER: `--kernel-log`, `--evidence`, or the live
//! kernel ring buffer through `dmesg`), and `torch.memory` (a `memory_summary()` table or an
//! out-of-memory message given as `--evidence`).

use super::inputs::evidence_of;
use super::{ProbeCtx, ProbeKind, ProbeOutcome};
use crate::evidence::{kernel_log, nccl_log, torch_memory};
use crate::vocab::io::read_shared;
use serde_json::{Map, Value, json};
use std::time::Duration;

fn to_value<T: serde::Serialize>(t: &T, source: String) -> ProbeOutcome {
    match serde_json::to_value(t) {
        Ok(Value::Object(mut m)) => {
            m.insert("file".into(), json!(source));
            ProbeOutcome::Value(Value::Object(m))
        }
        Ok(v) => ProbeOutcome::Value(v),
        Err(e) => ProbeOutcome::Unknown(e.to_string()),
    }
}

pub struct NcclLog;

impl ProbeKind for NcclLog {
    fn name(&self) -> &'static str {
        "nccl.log"
    }
    fn doc(&self) -> &'static str {
        "an NCCL_DEBUG=INFO log: version, transports per channel, network, environment overrides"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("nccl_version", "NCCL version"),
            (
                "transports_used",
                "distinct transports of channel connections (P2P/IPC, SHM, NET/IB, NET/Socket…)",
            ),
            ("network_used", "true when a channel goes over the network"),
            (
                "net",
                "IB or Socket, from the strongest evidence in the log",
            ),
            ("ib_no_device", "`NET/IB : No device found`"),
            (
                "env_overrides",
                "NCCL_* variables NCCL reports as set by the environment",
            ),
            ("interfaces", "network interfaces NCCL uses"),
            (
                "net_source",
                "where `net` came from: channels, ib_completions (NET/IB completion WARN lines), using_network or init",
            ),
            ("net_plugin", "a network plugin NCCL loaded"),
            ("ib_devices", "IB devices NCCL uses"),
            ("transports", "channel connections: peer, transport"),
            ("connections_seen", "connection lines seen"),
            ("warnings", "NCCL WARN lines"),
            ("lines", "lines that carried an NCCL message"),
            ("nodes", "nodes of the job (nNodes, else distinct hosts)"),
            ("nranks", "ranks of the job"),
            ("local_ranks", "ranks per node"),
            (
                "multi_node",
                "true when the job spans nodes, false when one node is certain",
            ),
            (
                "ib_verbs_failed",
                "the IB verbs library could not be loaded or a device opened",
            ),
            (
                "local_shm_connections",
                "connections between GPUs of one node through SHM",
            ),
            (
                "local_net_connections",
                "connections between GPUs of one node through the network",
            ),
            ("p2p_connections", "connections through P2P or NVLS"),
            ("init_complete", "`Init COMPLETE` was printed"),
            ("networks_chosen", "distinct networks NCCL said it chose"),
            ("ib_wanted", "the environment asked for IB"),
            ("hosts", "hosts named in the line prefixes"),
            ("unavailable", "fields the log cannot give, with why"),
        ]
    }
    fn run(&self, _params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        let (path, text) = match &ctx.inputs.nccl_log {
            Some(p) => match read_shared(p) {
                Ok(t) => (p.clone(), t),
                Err(e) => {
                    return ProbeOutcome::Unknown(format!("cannot read {}: {e}", p.display()));
                }
            },
            None => match evidence_of(
                &ctx.inputs.evidence,
                &crate::evidence::nccl_log::NcclLogKind,
            )
            .into_iter()
            .next()
            {
                Some(x) => x,
                None => return ProbeOutcome::NotApplicable("needs --nccl-log".into()),
            },
        };
        to_value(&nccl_log::parse_nccl_log(&text), path.display().to_string())
    }
}

pub struct KernelLog;

impl ProbeKind for KernelLog {
    fn name(&self) -> &'static str {
        "kernel.log"
    }
    fn doc(&self) -> &'static str {
        "GPU errors in the kernel log: Xid codes with PCI address, fallen off the bus, RmInitAdapter, PCIe AER"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("xids", "Xid events: code, pci, message, meaning"),
            (
                "xid_count",
                "every Xid line seen, including those beyond the kept list",
            ),
            ("xid_codes", "distinct Xid codes"),
            ("fallen_off_bus", "a GPU has fallen off the bus"),
            ("rm_init_adapter_failed", "RmInitAdapter failed"),
            (
                "gsp_timeout",
                "the GPU System Processor stopped answering (GSP timeout, heartbeat or RPC timeout)",
            ),
            (
                "gpu_lost",
                "nvidia-smi says a GPU is lost or its device handle cannot be determined",
            ),
            ("sxid_codes", "distinct NVSwitch SXid codes"),
            (
                "sxid_fatal_codes",
                "SXid codes a line calls Fatal (NVLink traffic through the switch stalls)",
            ),
            ("aer", "PCIe AER errors"),
            ("file", "where the log came from (a path, or `dmesg`)"),
        ]
    }
    fn run(&self, _params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        if let Some(p) = &ctx.inputs.kernel_log {
            return match read_shared(p) {
                Ok(t) => to_value(&kernel_log::parse_kernel_log(&t), p.display().to_string()),
                Err(e) => ProbeOutcome::Unknown(format!("cannot read {}: {e}", p.display())),
            };
        }
        if let Some((p, t)) = evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::kernel_log::KernelLogKind,
        )
        .into_iter()
        .next()
        {
            return to_value(&kernel_log::parse_kernel_log(&t), p.display().to_string());
        }
        if !ctx.inputs.evidence.is_empty() {
            return ProbeOutcome::NotApplicable(format!(
                "no kernel log: {}",
                crate::host::NOT_IN_EVIDENCE
            ));
        }
        let argv = vec!["dmesg".to_string()];
        match ctx.host.run(&argv, Duration::from_secs(5)) {
            Ok(o) if o.status == Some(0) => {
                to_value(&kernel_log::parse_kernel_log(&o.stdout), "dmesg".into())
            }
            Ok(o) if o.timed_out => ProbeOutcome::Unknown("`dmesg` timed out".into()),
            Ok(o) => ProbeOutcome::Unknown(format!(
                "`dmesg` failed ({}); give the log with --kernel-log FILE",
                o.stderr.lines().next().unwrap_or("no output").trim()
            )),
            Err(e) => ProbeOutcome::Unknown(format!(
                "cannot run `dmesg` ({e}); give the log with --kernel-log FILE"
            )),
        }
    }
}

pub struct TorchMemory;

impl ProbeKind for TorchMemory {
    fn name(&self) -> &'static str {
        "torch.memory"
    }
    fn doc(&self) -> &'static str {
        "PyTorch allocator state from a memory_summary() table or a CUDA OOM message (--evidence)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("allocated_mib", "memory allocated by tensors"),
            ("reserved_mib", "memory the caching allocator holds"),
            ("peak_allocated_mib", "peak allocated"),
            ("peak_reserved_mib", "peak reserved"),
            (
                "non_releasable_mib",
                "non-releasable memory (inactive split blocks)",
            ),
            (
                "peak_non_releasable_mib",
                "peak non-releasable memory: the direct measure of fragmentation",
            ),
            (
                "alloc_conf_hint",
                "the allocator setting the message suggests",
            ),
            ("oom_count", "out-of-memory errors seen"),
            (
                "malloc_retries",
                "allocator retries after a failed cudaMalloc",
            ),
            (
                "source",
                "where allocated/reserved came from: `oom_message` or `memory_summary`",
            ),
            ("reserved_unallocated_mib", "reserved but not allocated"),
            ("fragmentation", "(reserved - allocated) / reserved"),
            ("oom", "an out-of-memory error is reported"),
            (
                "tried_to_allocate_mib",
                "the request that failed (an OOM message)",
            ),
            (
                "free_mib",
                "memory free on the GPU at the OOM, as the message says",
            ),
        ]
    }
    fn run(&self, _params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        match evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::torch_memory::TorchMemoryKind,
        )
        .into_iter()
        .next()
        {
            Some((p, t)) => to_value(
                &torch_memory::parse_torch_memory(&t),
                p.display().to_string(),
            ),
            None => ProbeOutcome::NotApplicable(
                "needs --evidence with a torch memory summary or OOM message".into(),
            ),
        }
    }
}
