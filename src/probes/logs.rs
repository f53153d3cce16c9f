//! Log probes: `nccl.log` (an NCCL_DEBUG=INFO log, `--nccl-log` or `--evidence`),
//! `kernel.log` (Xid, fallen off the bus, AER: `--kernel-log`, `--evidence`, or the live
//! kernel ring buffer through `dmesg`, else the host's own journal or syslog files; under
//! `--root`, only the root's own: see `host_kernel_log`), and `torch.memory` (a
//! `memory_summary()` table or an out-of-memory message given as `--evidence`).

use super::inputs::evidence_of;
use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::{kernel_log, nccl_log, torch_memory};
use crate::vocab::io::{read_log_tail, read_shared_cut};
use serde_json::{Value, json};
use std::time::Duration;

/// The kernel log the person gave (`--kernel-log`, or one pasted with `--evidence`), read, with
/// where it came from: what the `kernel.log` probe reads first, for a probe that needs only
/// the log's own lines (never this machine's log).
pub(crate) fn given_kernel_log(
    ctx: &ProbeCtx,
) -> Option<(String, std::sync::Arc<kernel_log::KernelLog>)> {
    read_given_kernel_log(ctx)?.ok().map(|(p, log, _)| (p, log))
}

/// Where a kernel log came from, the log, and the cut of a `--kernel-log` read in part.
type GivenKernelLog = (
    String,
    std::sync::Arc<kernel_log::KernelLog>,
    Option<crate::vocab::io::Cut>,
);

/// [`given_kernel_log`] with the cut of a `--kernel-log` read in part (its newest
/// [`crate::vocab::io::MAX_LOG_BYTES`]), or why a `--kernel-log` could not be read.
fn read_given_kernel_log(ctx: &ProbeCtx) -> Option<Result<GivenKernelLog, String>> {
    if let Some(p) = &ctx.inputs.kernel_log {
        // its end: the newest messages are about the GPUs as they are now
        return Some(match read_log_tail(p) {
            Ok((t, cut)) => Ok((
                p.display().to_string(),
                std::sync::Arc::new(kernel_log::parse_kernel_log(&t)),
                cut,
            )),
            Err(e) => Err(format!("cannot read {}: {e}", p.display())),
        });
    }
    let (p, t) = evidence_of(&ctx.inputs.evidence, &kernel_log::KernelLogKind)
        .into_iter()
        .next()?;
    Some(Ok((
        p.display().to_string(),
        crate::evidence::memo::parsed(&t, kernel_log::parse_kernel_log),
        None,
    )))
}

/// A log read in part (over [`crate::vocab::io::MAX_LOG_BYTES`]) is judged on the part read,
/// and says so in `cut`: a rule that fails on it says it was judged on part of the input, and
/// one that would pass is unknown instead (the engine's rule: a cut input never gives pass).
fn judged_in_part(outcome: ProbeOutcome, cut: Option<crate::vocab::io::Cut>) -> ProbeOutcome {
    match (outcome, cut) {
        (ProbeOutcome::Value(Value::Object(mut m)), Some(cut)) => {
            m.insert("cut".into(), json!(cut.describe()));
            ProbeOutcome::Value(Value::Object(m))
        }
        (outcome, _) => outcome,
    }
}

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

impl Probe for NcclLog {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "nccl.log"
    }
    fn doc(&self) -> &'static str {
        "an NCCL_DEBUG=INFO log: version, transports per channel, network, environment overrides"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the file read"),
            (
                "cuda_driver_version",
                "the CUDA driver version NCCL printed",
            ),
            ("ranks_seen", "distinct ranks named"),
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
            (
                "p2p_denied",
                "NCCL's line saying P2P between local GPUs was refused by the driver or CUDA (`P2P is disabled between connected GPUs`, `Could not enable P2P between dev`); absent where none says so",
            ),
            ("init_complete", "`Init COMPLETE` was printed"),
            ("networks_chosen", "distinct networks NCCL said it chose"),
            ("ib_wanted", "the environment asked for IB"),
            (
                "ib_intended",
                "what shows the site meant to use RDMA (sockets on IPoIB, an NCCL_IB_* setting, an HCA named or not openable); null when nothing does",
            ),
            ("hosts", "hosts named in the line prefixes"),
            (
                "gdr_disabled_hcas",
                "HCAs NCCL's IB transport says GPU Direct RDMA is disabled for (`NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'`)",
            ),
            (
                "gdr_enabled_hcas",
                "HCAs NCCL's IB transport says GPU Direct RDMA is enabled for",
            ),
            (
                "gdr_no_module",
                "a disabled verdict said `(no module)` (NCCL 2.5–2.12)",
            ),
            (
                "gdr_connections",
                "channel connections through the network with GPUDirect RDMA (`via NET/IB/0/GDRDMA`)",
            ),
            ("unavailable", "fields the log cannot give, with why"),
            ("tests_rows", "nccl-tests result rows"),
            (
                "tests_busbw_max_gbs",
                "the highest out-of-place busbw of those rows, GB/s",
            ),
            (
                "tests_avg_busbw_gbs",
                "nccl-tests' `# Avg bus bandwidth` summary, GB/s",
            ),
            (
                "tests_out_of_bounds",
                "nccl-tests' `# Out of bounds values : N FAILED|OK` count",
            ),
            (
                "tests_wrong_elements",
                "wrong elements nccl-tests' `#wrong` columns counted",
            ),
            (
                "tests_wrong_sizes",
                "sizes (bytes) of the rows with wrong elements",
            ),
            (
                "cut",
                "only when the log is over 256 MiB: which part was read (its start); a rule that would pass on it is unknown",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut cut = None;
        let (path, text) = match &ctx.inputs.nccl_log {
            // its start: NCCL prints how it set up the communicators first
            Some(p) => match read_shared_cut(p) {
                Ok((t, c)) => {
                    cut = c;
                    (p.clone(), t)
                }
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
        judged_in_part(
            to_value(&nccl_log::parse_nccl_log(&text), path.display().to_string()),
            cut,
        )
    }
}

pub struct KernelLog;

impl Probe for KernelLog {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "kernel.log"
    }
    fn doc(&self) -> &'static str {
        "GPU errors in the kernel log: Xid codes with PCI address, fallen off the bus, RmInitAdapter, PCIe AER"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("aer_count", "every AER line seen"),
            ("lines", "lines read"),
            ("xids", "Xid events: code, pci, message, meaning"),
            (
                "xid_count",
                "every Xid line seen, including those beyond the kept list",
            ),
            ("xid_codes", "distinct Xid codes"),
            ("fallen_off_bus", "a GPU has fallen off the bus"),
            (
                "fallen_off_gpus",
                "PCI addresses of the GPUs that fell off the bus, as the driver printed them",
            ),
            ("rm_init_adapter_failed", "RmInitAdapter failed"),
            (
                "rm_init_failed_gpus",
                "PCI addresses of the GPUs whose RmInitAdapter failed",
            ),
            (
                "gsp_timeout",
                "the GPU System Processor stopped answering (GSP timeout, heartbeat or RPC timeout)",
            ),
            (
                "gpu_lost",
                "nvidia-smi says a GPU is lost or its device handle cannot be determined (gpustat names it `((Unknown Error))` or `((GPU is lost))`), or the kernel's AER recovery gave an NVIDIA GPU up after a fatal PCIe error",
            ),
            (
                "aer_unrecovered_gpus",
                "PCI addresses of the NVIDIA GPUs the kernel's AER recovery gave up after a fatal PCIe error (only when there is one)",
            ),
            (
                "api_mismatch",
                "{client_version, module_version?, client?, pid?, timestamp?, count}: the module refused a library of another version (`NVRM: API mismatch`; only when the newest refusal was not resolved by a load of the client's version)",
            ),
            ("sxid_codes", "distinct NVSwitch SXid codes"),
            (
                "sxid_fatal_codes",
                "SXid codes a line calls Fatal (NVLink traffic through the switch stalls)",
            ),
            (
                "rm_no_memory",
                "the driver's checks and assertions that failed with NV_ERR_NO_MEMORY (`NVRM: …: Check failed: Out of memory [NV_ERR_NO_MEMORY]`; only when there are some)",
            ),
            (
                "rm_no_memory_first",
                "the first such line, from `NVRM:` on (only when there is one)",
            ),
            ("aer", "PCIe AER errors"),
            (
                "file",
                "where the log came from (a path, `dmesg`, or the host's journal or syslog files)",
            ),
            (
                "cut",
                "only when the log is over 256 MiB, or a host's own log was not read back to its current boot: which part was read (its newest); a rule that would pass on it is unknown",
            ),
            (
                "skipped",
                "only for a host's own log: the sources tried before it that gave nothing, and why",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        match read_given_kernel_log(ctx) {
            Some(Ok((p, log, cut))) => return judged_in_part(to_value(&*log, p), cut),
            Some(Err(e)) => return ProbeOutcome::Unknown(e),
            None => {}
        }
        // `dcgmi dmon -e 230` shows each GPU's last Xid (the XIDER column) without a kernel log
        for (p, t) in evidence_of(&ctx.inputs.evidence, &crate::evidence::dcgmi::DcgmiDmon) {
            let Ok(d) = crate::evidence::dcgmi::parse_dmon(&t) else {
                continue;
            };
            let xids = crate::evidence::dcgmi::dmon_xids(&d);
            if xids.is_empty() {
                continue;
            }
            let k = xids_as_kernel_log(xids, |code| {
                format!("XIDER {code} (dcgmi dmon, DCGM_FI_DEV_XID_ERRORS)")
            });
            return to_value(&k, p.display().to_string());
        }
        // dcgm-exporter's `/metrics`: `DCGM_FI_DEV_XID_ERRORS` is each GPU's last Xid (its
        // value, repeated in `err_code`), `DCGM_EXP_XID_ERRORS_COUNT` names an Xid seen in its
        // window (see `evidence::dcgm_exporter`)
        for (p, t) in evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::dcgm_exporter::DcgmExporterKind,
        ) {
            let Ok(d) = crate::evidence::dcgm_exporter::parse_dcgm_exporter(&t) else {
                continue;
            };
            if d.xids.is_empty() {
                continue;
            }
            let xids = d
                .xids
                .into_iter()
                .map(|(gpu, code)| (format!("GPU {gpu}"), code));
            let k = xids_as_kernel_log(xids, |code| {
                format!("Xid {code} (dcgm-exporter, DCGM_FI_DEV_XID_ERRORS)")
            });
            return to_value(&k, p.display().to_string());
        }
        // `nvidia-smi -L` printing `Unable to determine the device handle for gpu <bus id>: …`
        // in the place of a GPU (see `evidence::smi_list`): the GPU lost that the same words
        // say in a table or `-q` (`kernel_log::is_gpu_lost`)
        for (p, t) in evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::smi_list::SmiListKind,
        ) {
            let Ok(l) = crate::evidence::smi_list::parse_smi_list(&t) else {
                continue;
            };
            if l.unreachable.is_empty() {
                continue;
            }
            let k = kernel_log::KernelLog {
                gpu_lost: true,
                lines: l.unreachable.len() as u64,
                ..Default::default()
            };
            return to_value(&k, p.display().to_string());
        }
        // gpustat naming a GPU `((Unknown Error))` or `((GPU is lost))` (see
        // `evidence::gpustat::is_unreachable_name`): NVML's same two errors nvidia-smi prints as
        // `Unable to determine the device handle …: Unknown Error` and `GPU is lost`
        for (p, t) in evidence_of(&ctx.inputs.evidence, &crate::evidence::gpustat::GpustatKind) {
            let Ok(u) = crate::evidence::gpustat::parse_gpustat(&t) else {
                continue;
            };
            let lost = crate::evidence::gpustat::unreachable_gpus(&u);
            if lost.is_empty() {
                continue;
            }
            let k = kernel_log::KernelLog {
                gpu_lost: true,
                lines: lost.len() as u64,
                ..Default::default()
            };
            return to_value(&k, p.display().to_string());
        }
        // `lspci` showing an NVIDIA GPU whose configuration space reads all ones (`(rev ff)`,
        // `!!! Unknown header type 7f`) beside NVIDIA GPUs that answer: that GPU no longer
        // answers on the bus, the state the driver reports as fallen off the bus (see
        // `evidence::lspci`). A lone unreadable GPU is not judged: pciutils names a switchable
        // (laptop) GPU asleep in D3cold as the common case of an all-ones configuration space
        // (pciutils 72cabfb, "lspci: Show information also for devices with unknown header
        // type"), and such a machine has one discrete GPU.
        for (p, t) in evidence_of(&ctx.inputs.evidence, &crate::evidence::lspci::Lspci) {
            let Ok(devices) = crate::evidence::lspci::parse_lspci(&t) else {
                continue;
            };
            let gone = crate::evidence::lspci::gpus_off_the_bus(&devices);
            if gone.is_empty() {
                continue;
            }
            let k = kernel_log::KernelLog {
                fallen_off_bus: true,
                lines: gone.len() as u64,
                fallen_off_gpus: gone,
                ..Default::default()
            };
            return to_value(&k, p.display().to_string());
        }
        if !ctx.inputs.evidence.is_empty() {
            return ProbeOutcome::NotApplicable(format!(
                "no kernel log: {}",
                crate::host::NOT_IN_EVIDENCE
            ));
        }
        // Under --root this machine's ring buffer and journal belong to another kernel (the
        // container's node, or the machine holding a copied tree): only the root's own log
        // on disk counts, and `dmesg` is never run.
        if !ctx.host.commands_see_its_kernel() {
            return match host_kernel_log(ctx, false) {
                Ok(log) => log.judge(),
                Err(why) => ProbeOutcome::Unknown(format!(
                    "no kernel log in {}: {why}; give the log with --kernel-log FILE",
                    ctx.host.describe()
                )),
            };
        }
        let argv = vec!["dmesg".to_string()];
        let dmesg_failed = match ctx.host.run(&argv, Duration::from_secs(5)) {
            Ok(o) if o.status == Some(0) => {
                return to_value(&kernel_log::parse_kernel_log(&o.stdout), "dmesg".into());
            }
            Ok(o) if o.timed_out => "`dmesg` timed out".to_string(),
            Ok(o) => format!(
                "`dmesg` failed ({})",
                o.stderr.lines().next().unwrap_or("no output").trim()
            ),
            Err(e) => format!("cannot run `dmesg` ({e})"),
        };
        // Without CAP_SYSLOG (dmesg_restrict) the journal and the syslog files still hold it.
        match host_kernel_log(ctx, true) {
            Ok(log) => log.judge(),
            Err(why) => ProbeOutcome::Unknown(format!(
                "{dmesg_failed}, and {why}; give the log with --kernel-log FILE"
            )),
        }
    }
}

/// At most this much of a host's syslog files is read, newest first (the DaemonSet's container
/// has 256 MiB of memory).
const HOST_LOG_BYTES: u64 = 32 << 20;
/// Kernel lines taken from a journal: its newest, of the latest boot it holds. As many lines
/// read means there may be more: the log is cut.
const JOURNAL_LINES: usize = 50_000;
/// Journal files handed to `journalctl` at most (each is an open descriptor).
const JOURNAL_FILES: usize = 256;
/// Where journald keeps its files: persistent, else volatile (`Storage=auto` without
/// /var/log/journal).
const JOURNAL_DIRS: [&str; 2] = ["/var/log/journal", "/run/log/journal"];
/// The syslog files a distribution writes kernel messages to: Debian/Ubuntu (rsyslog `kern.*`
/// to kern.log, everything to syslog), RHEL/SUSE (messages). `.1` is the last rotation, which
/// logrotate's `delaycompress` (Debian's default) leaves uncompressed.
const SYSLOG_FILES: [&str; 3] = ["/var/log/kern.log", "/var/log/messages", "/var/log/syslog"];

/// A kernel log a host kept, its current boot's part, and what was left out.
struct HostLog {
    text: String,
    source: String,
    cut: Option<String>,
    /// Sources tried before this one, and why they gave nothing.
    skipped: Vec<String>,
}

impl HostLog {
    fn judge(self) -> ProbeOutcome {
        let mut out = to_value(&kernel_log::parse_kernel_log(&self.text), self.source);
        if let ProbeOutcome::Value(Value::Object(m)) = &mut out {
            if let Some(c) = self.cut {
                m.insert("cut".into(), json!(c));
            }
            if !self.skipped.is_empty() {
                m.insert("skipped".into(), json!(self.skipped));
            }
        }
        out
    }
}

/// The kernel's first line of every boot (`Linux version 6.1.0-18-amd64 (…)`), as syslog
/// (`kernel: [    0.000000] Linux version`) and the journal (`kernel: Linux version`) keep it.
fn is_boot_line(line: &str) -> bool {
    line.split_once("kernel: ").is_some_and(|(_, msg)| {
        let msg = match msg.strip_prefix('[') {
            Some(r) => r.split_once("] ").map_or("", |(_, m)| m),
            None => msg,
        };
        msg.starts_with("Linux version ")
    })
}

/// The part of `text` from its last boot line on, when it has one.
fn since_last_boot(text: &str) -> Option<&str> {
    let mut at = None;
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        if is_boot_line(line) {
            at = Some(off);
        }
        off += line.len();
    }
    at.map(|i| &text[i..])
}

/// The kernel log a host kept on disk: its current boot (the latest in the log), read newest
/// first and bounded. `live`: this machine (the default journal through `journalctl --dmesg`);
/// else the judged root's own journal files, each opened inside the root and handed to
/// `journalctl --file` ([`crate::host::Host::run_on_files`]). Then the first of
/// [`SYSLOG_FILES`] that exists, with its last rotation when the boot began before it. One
/// source is used: journald forwards to rsyslog and rsyslog writes each kernel line to kern.log
/// and syslog, so reading more would count every Xid twice or three times.
fn host_kernel_log(ctx: &ProbeCtx, live: bool) -> Result<HostLog, NoKernelLog> {
    let host = ctx.host;
    let mut tried = Vec::new();
    let base = [
        "--dmesg",
        "--no-pager",
        "--quiet",
        "--output=short",
        &format!("--lines={JOURNAL_LINES}"),
    ]
    .map(String::from);
    let mut argv = vec!["journalctl".to_string()];
    argv.extend(base);
    let mut more = false;
    let journal = if live {
        Some((
            "the journal".to_string(),
            host.run(&argv, Duration::from_secs(8)),
        ))
    } else {
        let files;
        (files, more) = journal_files(host);
        (!files.is_empty()).then(|| {
            let what = format!(
                "the journal in {} ({} files)",
                JOURNAL_DIRS.join(" or "),
                files.len(),
            );
            let r = host.run_on_files(&argv, "--file=", &files, Duration::from_secs(8));
            (what, r)
        })
    };
    if let Some((what, r)) = journal {
        match r {
            Ok(o) if o.status == Some(0) && o.stdout.lines().any(|l| !l.trim().is_empty()) => {
                let lines = o.stdout.lines().count();
                let cut = if lines >= JOURNAL_LINES {
                    Some(format!(
                        "input too large: only the newest {JOURNAL_LINES} kernel lines of the latest boot in {what} were read"
                    ))
                } else if more {
                    // the files left out may hold the latest boot
                    Some(format!(
                        "input too large: only {JOURNAL_FILES} journal files were read"
                    ))
                } else {
                    None
                };
                return Ok(HostLog {
                    text: o.stdout,
                    source: what,
                    cut,
                    skipped: tried,
                });
            }
            Ok(o) if o.status == Some(0) => tried.push(format!("{what} has no kernel line")),
            Ok(o) if o.timed_out => tried.push(format!("`journalctl` timed out on {what}")),
            Ok(o) => tried.push(format!(
                "`journalctl` failed on {what} ({})",
                o.stderr.lines().next().unwrap_or("no output").trim()
            )),
            Err(e) => tried.push(format!("cannot run `journalctl` on {what} ({e})")),
        }
    }
    for f in SYSLOG_FILES {
        match syslog_file(host, f) {
            Ok(Some(mut log)) => {
                tried.append(&mut log.skipped);
                log.skipped = tried;
                return Ok(log);
            }
            Ok(None) => {}
            Err(e) => tried.push(e.to_string()),
        }
    }
    if tried.is_empty() {
        tried.push(format!(
            "no journal in {} and none of {}",
            JOURNAL_DIRS.join(", "),
            SYSLOG_FILES.join(", ")
        ));
    }
    Err(NoKernelLog { tried })
}

/// Why a syslog file that exists was not used.
#[derive(Debug, thiserror::Error)]
enum SyslogError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} is empty")]
    Empty(String),
}

/// No source of the host's kernel log could be read: why each one tried was not used.
#[derive(Debug, thiserror::Error)]
#[error("{}", tried.join("; "))]
struct NoKernelLog {
    tried: Vec<String>,
}

/// journald's system journal files (`system.journal`, `system@….journal`, `….journal~`) in
/// [`JOURNAL_DIRS`] and their machine-id directories: regular files only, never a link (a
/// remote host's `remote-*.journal` and users' journals are not this kernel's). At most
/// [`JOURNAL_FILES`] (the active `system.journal` and the newest names); `true` when more
/// were left out.
fn journal_files(host: &dyn crate::host::Host) -> (Vec<String>, bool) {
    let is_system =
        |n: &str| n.starts_with("system") && (n.ends_with(".journal") || n.ends_with(".journal~"));
    let mut files = Vec::new();
    for d in JOURNAL_DIRS {
        if !host.metadata(d).is_ok_and(|m| m.kind == "dir") {
            continue;
        }
        for e in host.read_dir(d).unwrap_or_default() {
            let p = format!("{d}/{e}");
            match host.metadata(&p) {
                Ok(m) if m.kind == "file" && is_system(&e) => files.push(p),
                Ok(m) if m.kind == "dir" => {
                    for f in host.read_dir(&p).unwrap_or_default() {
                        let fp = format!("{p}/{f}");
                        if is_system(&f) && host.metadata(&fp).is_ok_and(|m| m.kind == "file") {
                            files.push(fp);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let more = files.len() > JOURNAL_FILES;
    if more {
        // `system.journal` sorts before `system@…`: keep the active files and the newest names
        files.sort_by_key(|f| !f.ends_with("/system.journal"));
        let active = files
            .iter()
            .filter(|f| f.ends_with("/system.journal"))
            .count();
        let (head, rest) = files.split_at(active.min(JOURNAL_FILES));
        let mut rest = rest.to_vec();
        rest.sort();
        let keep = JOURNAL_FILES - head.len();
        let tail = rest.split_off(rest.len() - keep.min(rest.len()));
        files = head.iter().cloned().chain(tail).collect();
    }
    (files, more)
}

/// One syslog file's current boot: from its last boot line, reading the last rotation
/// (`FILE.1`) too when the boot began before the file; `None` when the file does not exist.
/// Cut when the budget ([`HOST_LOG_BYTES`]) ran out, or older rotations exist, before the
/// boot line was found.
fn syslog_file(host: &dyn crate::host::Host, f: &str) -> Result<Option<HostLog>, SyslogError> {
    let mut text = String::new();
    let mut budget = HOST_LOG_BYTES;
    let mut read_from = Vec::new();
    let mut cut = None;
    for (i, path) in [f.to_string(), format!("{f}.1")].iter().enumerate() {
        let (bytes, total) = match host.read_file_tail(path, budget) {
            Ok(x) => x,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if i == 0 {
                    return Ok(None);
                }
                break;
            }
            Err(e) if i == 0 => {
                return Err(SyslogError::Read {
                    path: path.clone(),
                    source: e,
                });
            }
            Err(e) => {
                cut = Some(format!("input too large: {path} could not be read ({e})"));
                break;
            }
        };
        let len = bytes.len() as u64;
        budget -= len;
        let mut part = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        if total > len {
            // the first line is a part of one
            let start = part.find('\n').map_or(part.len(), |i| i + 1);
            part.drain(..start);
        }
        read_from.push(path.clone());
        part.push_str(&text);
        text = part;
        if let Some(boot) = since_last_boot(&text) {
            let from = text.len() - boot.len();
            text.drain(..from);
            cut = None;
            break;
        }
        if total > len || budget == 0 {
            cut = Some(format!(
                "input too large: only the newest {:.1} MiB of {} were read, and they do not reach the current boot",
                text.len() as f64 / (1u64 << 20) as f64,
                read_from.join(" and ")
            ));
            break;
        }
        if i == 1
            && [".2", ".2.gz"]
                .iter()
                .any(|s| host.metadata(&format!("{f}{s}")).is_ok())
        {
            cut = Some(format!(
                "the current boot began before {f}.1; older rotations were not read"
            ));
        }
    }
    if text.lines().all(|l| l.trim().is_empty()) {
        return Err(SyslogError::Empty(f.to_string()));
    }
    Ok(Some(HostLog {
        text,
        source: read_from.join(" and "),
        cut,
        skipped: Vec::new(),
    }))
}

pub struct TorchMemory;

/// Parameters: `optional`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalParams {
    /// without the evidence, answer `{given: false}` instead of not-applicable (for a rule that judges another framework's report too)
    #[serde(default)]
    pub optional: bool,
}

impl Probe for TorchMemory {
    type Params = OptionalParams;
    fn name(&self) -> &'static str {
        "torch.memory"
    }
    fn doc(&self) -> &'static str {
        "PyTorch allocator state from a memory_summary() table or a CUDA OOM message (--evidence)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the file read"),
            (
                "given",
                "false (and nothing else) when `optional` and no summary or OOM message was given",
            ),
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
                "where allocated/reserved came from: `oom_message`, `memory_summary`, `memory_stats` or `printout`",
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
            ("gpu", "the GPU the OOM message names"),
            (
                "total_capacity_mib",
                "the GPU's capacity, as the OOM message says",
            ),
            (
                "process_in_use_mib",
                "memory this process held at the OOM, PyTorch's or not",
            ),
            (
                "other_processes",
                "other processes the OOM message names on that GPU: pid, mib",
            ),
            ("other_processes_mib", "their memory together"),
            (
                "allowed_mib",
                "the cap set_per_process_memory_fraction set (\"X allowed;\")",
            ),
            (
                "private_pools_mib",
                "memory in private pools (CUDA Graphs), part of allocated_mib",
            ),
        ]
    }
    fn run(&self, params: &OptionalParams, ctx: &ProbeCtx) -> ProbeOutcome {
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
            None if params.optional => ProbeOutcome::Value(json!({"given": false})),
            None => ProbeOutcome::NotApplicable(
                "needs --evidence with a torch memory summary or OOM message".into(),
            ),
        }
    }
}

/// `xla.oom`: an XLA out-of-memory report (JAX, TF/XLA), the TPU runtime's allocation failure
/// or the BFC allocator's, read by [`crate::evidence::xla_oom`].
pub struct XlaOom;

impl Probe for XlaOom {
    type Params = OptionalParams;
    fn name(&self) -> &'static str {
        "xla.oom"
    }
    fn doc(&self) -> &'static str {
        "an XLA out-of-memory report (JAX, TF/XLA): the TPU runtime's allocation failure with its free and largest contiguous figures, the BFC allocator's OOM and stats, BufferAssignment (--evidence)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the file read"),
            (
                "given",
                "false (and nothing else) when `optional` and no XLA OOM report was given",
            ),
            ("oom", "an allocation failed"),
            (
                "tpu",
                "the TPU runtime's failure: request_bytes, free_bytes, largest_free_bytes, memory_space, fragmented (free memory enough in total, in no single block)",
            ),
            (
                "oom_bytes",
                "N of `Out of memory while trying to allocate N bytes`",
            ),
            ("bfc_stats", "the BFC allocator's AllocatorStats (bytes)"),
        ]
    }
    fn run(&self, params: &OptionalParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let found = evidence_of(&ctx.inputs.evidence, &crate::evidence::xla_oom::XlaOomKind)
            .into_iter()
            .find_map(|(p, t)| crate::evidence::xla_oom::read(&t).map(|v| (p, v)));
        match found {
            Some((p, Value::Object(mut m))) => {
                m.insert("given".into(), json!(true));
                m.insert("file".into(), json!(p.display().to_string()));
                ProbeOutcome::Value(Value::Object(m))
            }
            Some((_, v)) => ProbeOutcome::Value(v),
            None if params.optional => ProbeOutcome::Value(json!({"given": false})),
            None => ProbeOutcome::NotApplicable(
                "needs --evidence with an XLA or TPU out-of-memory report".into(),
            ),
        }
    }
}

/// The kernel-log value of the Xids a DCGM text reports, `(where, code)` each, with the message
/// `describe` gives each code (which tool and field said it).
fn xids_as_kernel_log(
    xids: impl IntoIterator<Item = (String, u32)>,
    describe: impl Fn(u32) -> String,
) -> kernel_log::KernelLog {
    let mut k = kernel_log::KernelLog::default();
    for (pci, code) in xids {
        k.xids.push(kernel_log::Xid {
            code,
            pci,
            message: describe(code),
            timestamp: None,
            meaning: kernel_log::xid_meaning(code),
        });
        if !k.xid_codes.contains(&code) {
            k.xid_codes.push(code);
        }
        k.xid_count += 1;
    }
    k
}
