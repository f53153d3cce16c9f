//! `NCCL_DEBUG=INFO` output: which NCCL, how many ranks and hosts, which transport each channel
//! connection uses, which network NCCL picked, and which `NCCL_*` variables the environment set.
//!
//! The network is read from the strongest evidence present: channel connections (`Channel 00/0
//! : 0[0] -> 1[1] [send] via NET/IB/0`) over NCCL's own `Using network IB` line over the
//! `NET/IB : Using` / `NET/Socket : Using` init lines. NCCL prints the socket transport's init
//! line on most hosts, IB or not, so an init line alone never decides it when channels say
//! otherwise. `network_used` is true only if a connection actually goes through `NET/…`.
//! Lines starting with `#` (comments, nccl-tests banners) are skipped.
//! nccl-tests' result table (NVIDIA/nccl-tests `src/common.cu`: the `size count type redop root
//! time algbw busbw #wrong` rows and `# Avg bus bandwidth : X`) is NCCL's output too: a paste of
//! the table alone is read as this kind, its rows counted and the out-of-place busbw kept.
//! Whether the collective returned the right data is read from what nccl-tests prints for it
//! (NVIDIA/nccl-tests at a0b82b2, July 2026: `src/util.cu` `writeBenchmarkLineBody` prints
//! each half's wrong-element count with `%6g`, or `N/A` where it did not check;
//! `writeResultFooter` prints `# Out of bounds values : %d FAILED|OK`; `src/common.cu`
//! `CheckData` prints `rank=%d #wrong=%d` per GPU that had any). Builds before the `#wrong`
//! column (2018–2021) print the largest relative `error` (`%7.0le`, `1e-06`): a rounding
//! residue, not a count, so only their footer says whether it was out of bounds. rccl-tests and
//! msccl-tests print the same table.
//!
//! Written from NCCL's source (github.com/NVIDIA/nccl, tags v2.3.7-1 to v2.21.5-1 and master
//! at 2.30): `src/transport/net_ib.cc` (`NET/IB : No device found.`, `NET/IB : Using …; OOB`,
//! `NET/IB : Unable to open device %s`, `NCCL_IB_HCA set to %s`), `src/transport/net_socket.cc`
//! (`NET/Socket : Using`), `src/misc/socket.cc` (`ncclFindInterfaces`: with no
//! NCCL_SOCKET_IFNAME NCCL picks `ib*` interfaces first, then anything but `docker`/`lo`),
//! `src/misc/ibvwrap.cc` / `ibvsymbols.cc` (`Failed to open libibverbs.so[.1]`, a WARN up to
//! 2.11, INFO after), `src/init.cc` (2.10), `src/net.cc` (2.18–2.23) and `src/plugin/net.cc`
//! (2.24+) for the net plugin lines, and the `NCCL_PARAM` echo (`%s set by environment to %s`).
//! NCCL 2.3 (tags v2.3.5-5, v2.3.7-1) words its init otherwise: `src/init.cu` `initNet` prints
//! `Using internal Network IB|Socket` (IB only when `ncclIbSupport()` found an active port) or
//! `Using external Network <plugin>`; `src/transport/net_ib.cu` prints `NET/IB : Using
//! interface %s for sideband communication` *before* it looks for devices (so it is the OOB
//! interface, never a sign of IB in use) and `NET/IB: [%d] %s:%d/%s ` per active port (a TRACE
//! from 2.4); `src/include/socket.h` prints `NET : Using interface %s:%s` and
//! `src/transport/net_socket.cu` `NET/Socket : %d interfaces found`. 2.4 and 2.5 print no line
//! naming the chosen network; 2.6 on prints `Using network %s`. `src/bootstrap.cc` prints
//! `Bootstrap : Using%s` up to 2.24 and `Bootstrap: Using%s` from 2.25 (v2.25.1-1 to 2.28).
//!
//! `ib_intended` says what in the text shows the site meant to use an RDMA fabric, whatever
//! NCCL ended up on. Sound signals only (each is printed because the hardware or the setting
//! is there): the socket or bootstrap interface is IPoIB (`ib0`, `ibp…`: NCCL chose it because
//! its auto-selection prefers `ib*`, or NCCL_SOCKET_IFNAME named it), an IB/RDMA setting
//! echoed (`NCCL_IB_HCA`, `NCCL_IB_GID_INDEX`, any other `NCCL_IB_*` but NCCL_IB_DISABLE=1,
//! `NCCL_NET_GDR_LEVEL`/`_READ`, `NCCL_NET=IB`), a device NCCL listed but could not open
//! (`NET/IB : Unable to open device mlx5_0`), and an HCA name (`mlx5_0`) elsewhere in the
//! paste. A net plugin library that was found but unusable (`NET/Plugin: Failed to find
//! ncclNetPlugin_v8 symbol.`, printed only after `dlopen` succeeded) is *not* one: NGC and
//! cloud images ship plugins on every machine, and public single-node logs show it (the
//! corpus's `nccl_single_rank_socket_gcp`, `h5_nccl_deepspeed_docker_one_host_no_ib`); nor is
//! `Failed to open libibverbs` alone, printed on every host without rdma-core.
//!
//! Whether the IB transport can read and write GPU memory directly (GPUDirect RDMA) is NCCL's
//! per-HCA verdict, read from its own line (NVIDIA/nccl, read at 5067397c, 2.30): from 2.13.4
//! on `src/graph/topo.cc` prints `NET/%s : GPU Direct RDMA %s for HCA %d '%s'` (the net's
//! name, `Enabled`/`Disabled`, the device index and name) for every device of the network the
//! communicator uses, `gdrSupport` being `NCCL_PTR_CUDA` (a peer-memory module:
//! `src/transport/net_ib/gdr.cc` `ncclIbGdrSupport` looks for
//! `/sys/kernel/mm/memory_peers/nv_mem{,_nc}/version` and, from 2.23.4, 68b5423,
//! `/sys/module/nvidia_peermem/version`; 2.22.3, 178b6b7, looked for nv_peer_mem alone) or
//! DMA-BUF; 2.5.6 to 2.12 (`src/transport/net_ib.cc` `ncclIbGetProperties`, read at v2.12.12-1,
//! 7aa1c46) print `NET/IB : GPU Direct RDMA Disabled for HCA %d '%s' (no module)` where no module
//! is loaded, and nothing where one is. Only the IB transport's verdicts are kept (`IB`, the
//! SHARP plugin's `IBext…`): the socket transport prints `Disabled` for every interface by
//! nature, and other plugins (aws-ofi-nccl's `AWS Libfabric`) decide GDR their own way. The
//! per-GPU distance verdict of `src/graph/paths.cc` (`GPU Direct RDMA Disabled for GPU %lx /
//! HCA %d (distance %d > %d)`) is NCCL_NET_GDR_LEVEL working as set, not a missing module, and is
//! not read as one. `gdr_connections` counts channel connections `via NET/…/GDRDMA`.

use super::scan::{find_lit, has};
use regex::Regex;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Connection {
    pub channel: u32,
    pub from: u32,
    pub to: u32,
    /// `send` or `receive` where the line says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// Normalized: `P2P/IPC`, `P2P/CUMEM`, `P2P/direct pointer`, `SHM`, `NET/IB`, `NET/Socket`,
    /// `NET/IBext_v8`, ...
    pub transport: String,
    /// GPUDirect RDMA (`/GDRDMA`).
    pub gdr: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct NcclLog {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_driver_version: Option<u32>,
    /// Distinct ranks named in `rank N nranks M` lines.
    pub ranks_seen: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nranks: Option<u32>,
    /// Distinct host names in the line prefixes (`host:pid:tid [dev] NCCL INFO`).
    pub hosts: Vec<String>,
    pub transports: Vec<Connection>,
    /// Connection lines seen, including those beyond the kept [`super::MAX_ITEMS`].
    pub connections_seen: u64,
    pub transports_used: Vec<String>,
    /// `IB` or `Socket` (or a plugin's network name), from the strongest evidence present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<String>,
    /// `channels`, `using_network` or `init`; `ofi_provider tcp` where aws-ofi-nccl's libfabric
    /// provider is TCP (see `ofi_over_sockets`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net_source: Option<String>,
    /// A network plugin NCCL loaded (`P2P plugin IBext`, `Loaded net plugin ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net_plugin: Option<String>,
    /// `NET/IB : Using [0]mlx5_0:1/IB ...` devices.
    pub ib_devices: Vec<String>,
    pub ib_no_device: bool,
    /// Interfaces from `NET/Socket : Using`, `Bootstrap : Using` and IB's `OOB` part.
    pub interfaces: Vec<String>,
    pub env_overrides: BTreeMap<String, String>,
    /// True only if a connection goes through the network; absent when the log has no
    /// connection lines (and more than one rank), since then it cannot tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_used: Option<bool>,
    pub warnings: Vec<String>,
    /// Lines that carried an NCCL message.
    pub lines: u64,
    /// Nodes of the job: NCCL's `nNodes`, else the distinct hosts in the line prefixes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// Ranks per node (`localRanks`), else the most ranks one host printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_ranks: Option<u32>,
    /// True when the job spans nodes (nNodes > 1, several hosts, or channels over the network
    /// while P2P and SHM were not both disabled); false when one node is certain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_node: Option<bool>,
    /// The IB verbs library could not be loaded or a device could not be opened.
    pub ib_verbs_failed: bool,
    /// Connections between GPUs of one node through SHM, and through the network.
    pub local_shm_connections: u64,
    pub local_net_connections: u64,
    /// Connections through P2P (IPC, CUMEM, direct pointer) or NVLS.
    pub p2p_connections: u64,
    /// NCCL's own line saying P2P between two local GPUs was wanted and refused (see
    /// `p2p_refused`): the first such line, clipped. Absent where no line says so: GPUs
    /// under different CPU host bridges go via SHM by NCCL's default, with no line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p2p_denied: Option<String>,
    /// `Init COMPLETE` was printed for at least one communicator.
    pub init_complete: bool,
    /// Distinct networks NCCL said it chose (`Using network X`), per rank.
    pub networks_chosen: Vec<String>,
    /// The environment asked for IB (NCCL_IB_HCA set, NCCL_IB_DISABLE=0, NCCL_NET=IB).
    pub ib_wanted: bool,
    /// What in the text shows the site meant to use an RDMA fabric (see the module doc), in
    /// words for a message: `NCCL's sockets run over the IPoIB interface ib0, …`. Always
    /// present (null when nothing shows it): its absence is not a missing fact.
    pub ib_intended: Option<String>,
    /// HCAs NCCL's IB transport says GPU Direct RDMA is disabled for (`NET/IB : GPU Direct RDMA
    /// Disabled for HCA 0 'mlx5_0'`, 2.5–2.12 with ` (no module)`), and enabled for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gdr_disabled_hcas: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gdr_enabled_hcas: Vec<String>,
    /// A disabled verdict said `(no module)` (NCCL 2.5–2.12): no peer-memory module loaded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gdr_no_module: bool,
    /// Channel connections through the network with GPUDirect RDMA (`via NET/IB/0/GDRDMA`).
    #[serde(skip_serializing_if = "no_rows")]
    pub gdr_connections: u64,
    /// What showed the job spans nodes when NCCL's own lines did not: a rank numbered past the
    /// GPUs of its host (`rank 10 nranks 16 cudaDev 2`), a command line (`--nnodes 2`), or the
    /// poster's words around the log ("cross-node", "2 machines").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_node_from: Option<String>,
    /// The text ends in the middle of an NCCL line (a cut paste): what the rest would have
    /// said is not judged from its absence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
    /// Fields the log cannot give, with why (`input ends early: ...`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
    /// nccl-tests result rows (`size count type redop root time algbw busbw #wrong …`).
    #[serde(skip_serializing_if = "no_rows")]
    pub tests_rows: u64,
    /// The highest out-of-place busbw of those rows, GB/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_busbw_max_gbs: Option<f64>,
    /// nccl-tests' `# Avg bus bandwidth    : X` summary, GB/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_avg_busbw_gbs: Option<f64>,
    /// nccl-tests' `# Out of bounds values : N FAILED|OK`: N, the most any footer said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_out_of_bounds: Option<u64>,
    /// Wrong elements the rows' `#wrong` columns (and `rank=R #wrong=N` lines) counted; absent
    /// where no row carried a count (the older `error` column, `N/A`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_wrong_elements: Option<u64>,
    /// The sizes (bytes) of the rows with wrong elements, the first few: empty where the rows
    /// counted none; absent, as `tests_wrong_elements`, where no row carried a count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_wrong_sizes: Option<Vec<u64>>,
}

fn no_rows(n: &u64) -> bool {
    *n == 0
}

/// A result row of NVIDIA/nccl-tests (`src/common.cu`, 2.x: `%12li  %12li  %8s  %6s  %6i`
/// then, out-of-place and in-place, `time algbw busbw #wrong`; before the `root` column and
/// `#wrong`, 2018–2021 builds print `size count type [redop] time algbw busbw error`): size and
/// count integers, a data type name, then the figures; group 1 is the out-of-place busbw.
static TESTS_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\d+\s+\d+\s+(?:float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64|f8e4m3|f8e5m2)\s+(?:(?:sum|prod|max|min|avg|premulsum|none)\s+)?(?:-?\d+\s+)?[\d.]+\s+[\d.]+\s+([\d.]+)\s")
        .expect("static regex")
});
static TESTS_AVG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^#\s*Avg bus bandwidth\s*:\s*([\d.]+)").expect("static regex"));
/// `writeResultFooter`'s `# %-20s : %d %s` with `Out of bounds values`, read wherever it stands
/// on the line: markdown eats the `#` of a pasted line, and posters quote it in prose.
static TESTS_OOB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bOut of bounds values\s*:\s*(\d{1,12})\s+(OK|FAILED)\b").expect("static regex")
});
/// `CheckData`'s `rank=%d #wrong=%d`.
static TESTS_RANK_WRONG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\brank=\d+ #wrong=(\d{1,12})\b").expect("static regex"));

/// nccl-tests' banner, the first line every test prints (NVIDIA/nccl-tests `src/common.cu`,
/// `run()`: `PRINT("# nThread %d nGpus %d minBytes %ld maxBytes %ld step: …")`, the same
/// opening in every version from 2018 to 2026, `graph:`/`agg iters:`/`unalign:` added later).
static TESTS_BANNER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^#\s*nThread \d+ nGpus \d+ minBytes \d+ maxBytes \d+ ").expect("static regex")
});

/// A line nccl-tests prints: its banner, a rank of its device table, a result row, the table
/// header, the bandwidth summary or the out-of-bounds verdict. The banner and the device table
/// come first, so the head of a run pasted before any result row is nccl-tests' output too
/// (github.com/skypilot-org/skypilot/pull/3217).
pub fn tests_line(line: &str) -> bool {
    maybe_row(line) && TESTS_ROW.is_match(line)
        || line.starts_with('#')
            && (TESTS_AVG.is_match(line)
                || has!(line, "algbw") && has!(line, "busbw")
                || TESTS_BANNER.is_match(line)
                || TESTS_RANK.is_match(line.trim_end()))
        || has!(line, "Out of bounds values") && TESTS_OOB.is_match(line)
        || has!(line, " #wrong=") && TESTS_RANK_WRONG.is_match(line)
}

const TESTS_REDOPS: [&str; 7] = ["sum", "prod", "max", "min", "avg", "premulsum", "none"];

/// A `#wrong` field: `writeBenchmarkLineBody`'s `%6g` of a count (`0`, `56`, `1.04858e+06`).
/// The older `error` column (`1e-06`, `0e+00`) and `N/A` are no count.
fn wrong_count(field: &str) -> Option<u64> {
    if !field.is_empty() && field.bytes().all(|b| b.is_ascii_digit()) {
        return field.parse().ok();
    }
    // `%6g` turns to an exponent only from 1e6 up (a count); a relative error is below 1
    let (_, exp) = field.split_once("e+")?;
    let v: f64 = field.parse().ok()?;
    (exp.parse::<u32>().ok()? >= 6 && v.fract() == 0.0).then_some(v as u64)
}

/// A result row's size and its wrong elements (out-of-place plus in-place), where the row has
/// `#wrong` counts: after `size count type [redop] [root]` come `time algbw busbw #wrong` twice
/// (then, with `-R`/timestamps, more). The root is there when an integer leads nine or more
/// fields (2019 on); the rows before it have eight.
fn row_wrong(line: &str) -> Option<(u64, u64)> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let size: u64 = t.first()?.parse().ok()?;
    let mut rest = t.get(3..)?;
    if rest.first().is_some_and(|op| TESTS_REDOPS.contains(op)) {
        rest = &rest[1..];
    }
    if rest.len() >= 9 && rest[0].parse::<i64>().is_ok() {
        rest = &rest[1..];
    }
    let counts: Vec<Option<u64>> = [3, 7]
        .iter()
        .map(|&i| rest.get(i).and_then(|f| wrong_count(f)))
        .collect();
    if counts.iter().all(Option::is_none) {
        return None;
    }
    Some((size, counts.into_iter().flatten().sum()))
}

/// A row starts with its size, a number: the cheap test before the row's regex, which an NCCL
/// log's every other line would otherwise pay.
fn maybe_row(line: &str) -> bool {
    line.trim_start()
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_digit)
}

static CONN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:Channel|Ring) (\d+)(?:/\d+)? : (\d+)(?:\[[0-9a-fA-Fx]*\])? -> (\d+)(?:\[[0-9a-fA-Fx]*\])?(?: \[(send|receive)\])? via (.+)$",
    )
    .expect("static regex")
});
static VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"NCCL version (\S+)").expect("static regex"));
static DRIVER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"cudaDriverVersion (\d+)").expect("static regex"));
static ENV: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(NCCL_[A-Z0-9_]+) set by environment to (.*)$").expect("static regex")
});
static RANK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\brank (\d+) nranks (\d+)").expect("static regex"));
/// nccl-tests' device table: `#  Rank  0 Group  0 Pid 295203 on    node005 device  0 [0x18] …`
/// (older versions without `Group`): the host each rank runs on.
static TESTS_RANK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s")
        .expect("static regex")
});
/// `comm 0x… rank 10 nranks 16 cudaDev 2 …`: the rank and the local device it runs on.
static RANK_DEV: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\brank (\d+) nranks (\d+) cudaDev (\d+)").expect("static regex")
});
/// An NCCL line prefix with nothing after it: `host:pid:tid [0] NC`, `host:12:`.
static PREFIX_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[\d+\]\s+)?[^\s:]+:\d+:\d*(?:\s+\[\d*\]?)?(?:\s+N(?:C(?:C(?:L\w*)?)?)?)?$")
        .expect("static regex")
});
/// The poster's words or a scheduler line around the log that say the job spans nodes.
static MULTI_NODE_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:cross|inter|multi)[- ]?(?:node|machine|host)s?\b|\b(?:[2-9]|[1-9]\d+|two|three|four|eight|several|multiple)\s+(?:nodes|machines|hosts|servers)\b|#SBATCH\s+(?:--nodes|-N)[= ]?\s*(?:[2-9]|[1-9]\d+)\b|\b(?:nnodes|num_nodes|num_machines|world_nodes)\s*[=:]\s*(?:[2-9]|[1-9]\d+)\b|多机|多节点|跨节点",
    )
    .expect("static regex")
});
static NNODES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bnNodes (\d+)").expect("static regex"));
static LOCAL_RANKS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\blocalRanks (\d+)").expect("static regex"));
static INDEXED_IF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\d+\]([^\s:\[\]<>;]+)").expect("static regex"));
static IB_DEV: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\d+\]([^\s;\[\]]+)").expect("static regex"));
static OOB: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"OOB ([^\s:<>;]+)").expect("static regex"));
/// `src/graph/topo.cc` (2.13.4+): `NET/%s : GPU Direct RDMA %s for HCA %d '%s'`; 2.5–2.12's
/// `NET/IB : GPU Direct RDMA Disabled for HCA %d '%s' (no module)`.
static GDR_HCA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^NET/([^:]+?) : GPU Direct RDMA (Enabled|Disabled) for HCA \d+ '([^']*)'( \(no module\))?")
        .expect("static regex")
});
static PLUGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:P2P plugin (\S+)|Loaded net plugin (.+?) \()").expect("static regex")
});

/// Normalizes the text after `via`.
fn transport_name(raw: &str) -> (String, bool) {
    let raw = raw.trim();
    let gdr = has!(raw, "GDRDMA");
    if contains_ci(raw, "shared memory") || raw.starts_with("SHM") {
        return ("SHM".into(), gdr);
    }
    let mut parts = raw.split('/');
    let head = parts.next().unwrap_or("");
    let name = match head {
        "NET" | "P2P" => match parts.next() {
            Some(second) if !second.is_empty() => format!("{head}/{second}"),
            _ => head.to_string(),
        },
        _ => head.split_whitespace().next().unwrap_or(head).to_string(),
    };
    (super::clip(&name, 64), gdr)
}

/// Whether aws-ofi-nccl's libfabric provider sends over TCP sockets. aws/aws-ofi-nccl (read at
/// v1.6.0, v1.9.1-aws, v1.14.0 and 2daf7d3, 2026): `NCCL_OFI_INFO(NCCL_INIT | NCCL_NET,
/// "Selected Provider is %s (found %d nics)", …)` (`src/nccl_ofi_net.c`, to 1.13) and `"Selected
/// provider is %s, fabric is %s (found %d nics)"` (`nccl_net_ofi_query_provider_capabilities`,
/// 1.14 on) print `fabric_attr->prov_name`; where the RDMA protocol finds no provider (`No
/// eligible providers were found`, `src/nccl_ofi_rdma.cpp`) the SENDRECV protocol may take
/// libfabric's `tcp` provider (the plugin's own filters match it with `strncmp(prov_name, "tcp",
/// 3)`, "to catch both tcp and tcp;ofi_rxm stacked providers", `src/nccl_ofi_ofiutils.cpp`) and
/// then forces NCCL_PROTO=simple (`Need to force simple protocol: GDR not supported`). NCCL
/// still says `Using network AWS Libfabric` (or `Libfabric`): the plugin's name, not the wire.
/// `tcp…`, libfabric's older `sockets` provider and `udp…` go over the kernel's sockets; `efa`,
/// `cxi`, `verbs…`, `psm3` and `opx` do not.
fn ofi_over_sockets(provider: &str) -> bool {
    provider.starts_with("tcp") || provider == "sockets" || provider.starts_with("udp")
}

fn net_kind(name: &str) -> String {
    if name.starts_with("IB") || name.starts_with("ib") {
        "IB".into()
    } else if name.eq_ignore_ascii_case("socket") {
        "Socket".into()
    } else {
        super::clip(name, 64)
    }
}

/// `NCCL INFO ` and `NCCL WARN `, found with memchr's SIMD searcher: every NCCL line is
/// looked at, so the search costs per byte, not per line.
static INFO_TAG: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("NCCL INFO "));
static NCCL_TAG: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("NCCL "));

/// Where the first `NCCL INFO ` or `NCCL WARN ` at or after `from` starts.
fn tag_from(s: &str, from: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() {
        let p = i + NCCL_TAG.find(&b[i..])?;
        let after = &b[p + 5..];
        if after.starts_with(b"INFO ") || after.starts_with(b"WARN ") {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// Where `t`'s first `NCCL INFO `/`NCCL WARN ` at or after `from` starts and ends.
fn tag_span(t: &str, from: usize) -> Option<(usize, usize)> {
    tag_from(t, from).map(|p| (p, p + 10))
}

/// The lines of `text` (comment lines skipped) as NCCL lines: a forum quote can collapse many
/// lines into one, so a line is split before every `NCCL INFO`/`WARN` that follows another on
/// it (keeping the `[dev]` prefix before it). Streams: nothing is held but the current line.
/// Each piece comes with where its first tag starts in it.
fn nccl_lines(text: &str) -> impl Iterator<Item = (&str, Option<usize>)> {
    let mut lines = super::content_lines(text);
    let mut pending: Option<&str> = None;
    let mut pieces = 0usize;
    // the tags' places, from one search of the text (see [`super::scan::Ahead`])
    let mut tags = Ahead::new(text, tag_span);
    std::iter::from_fn(move || {
        let rest = match pending.take() {
            Some(r) => r,
            None => lines.next()?,
        };
        let can_split = pieces < 10_000_000;
        pieces += 1;
        // the piece's place in the text; a tag counts in it only when all of it is there
        let at = super::scan::offset_in(text, rest);
        let end = at + rest.len();
        let mut tag_in = |from: usize| {
            tags.at(at + from)
                .filter(|&(_, e)| e <= end)
                .map(|(s, _)| s - at)
        };
        let first = tag_in(0);
        let next = first.and_then(|f| tag_in(f + 10));
        match next {
            Some(i) if can_split => {
                // cut at the start of the ` [0] ` (or `host:pid:tid [0] `) before it
                let head = &rest[..i];
                let cut = head
                    .trim_end()
                    .rfind(' ')
                    .map(|j| {
                        let pre = &head[..j];
                        // include a `host:pid:tid` token before `[dev]`
                        match pre.trim_end().rfind(' ') {
                            Some(k) if pre[k + 1..].matches(':').count() >= 2 => k + 1,
                            _ => j + 1,
                        }
                    })
                    .unwrap_or(i);
                if cut <= first.unwrap_or(0) || cut >= rest.len() {
                    return Some((rest, first));
                }
                pending = Some(&rest[cut..]);
                // the first tag, when the piece holds all of it
                Some((&rest[..cut], first.filter(|f| f + 10 <= cut)))
            }
            _ => Some((rest, first)),
        }
    })
}

/// A host name as kept: clipped to 128 bytes.
fn host_name(h: &str) -> std::borrow::Cow<'_, str> {
    clipped(h, 128)
}

/// Splits `prefix NCCL INFO message`; the host is the `host` of a `host:pid:tid` prefix,
/// after any `[rank]` or `[1,0]<stdout>:` wrapper that launchers add (as printed: see
/// [`host_name`] for the name kept).
fn split_line(line: &str) -> Option<(Option<&str>, &str, bool)> {
    split_line_at(line, tag_from(line, 0))
}

/// [`split_line`] of a line whose first `NCCL INFO ` or `NCCL WARN ` starts at `first` (as
/// [`tag_from`] finds it). Every search is a byte search (memchr): this runs on every line.
fn split_line_at(line: &str, first: Option<usize>) -> Option<(Option<&str>, &str, bool)> {
    let b = line.as_bytes();
    // the first `NCCL INFO ` wherever it is, else the first `NCCL WARN `
    let (pos, warn) = match first {
        None => return None,
        Some(f) if b[f + 5] == b'I' => (f, false),
        Some(f) => match INFO_TAG.find(&b[f..]) {
            Some(i) => (f + i, false),
            None => (f, true),
        },
    };
    let msg = &line[pos + 10..];
    let prefix = line[..pos].trim_end();
    let pb = prefix.as_bytes();
    // Drop the trailing `[dev]`: cut at the last ` [` (the last `[` after a space).
    let last_space_bracket = memchr::memrchr_iter(b'[', pb)
        .find(|&i| i > 0 && pb[i - 1] == b' ')
        .map(|i| i - 1);
    let prefix = match last_space_bracket {
        Some(i) if prefix.ends_with(']') => &prefix[..i],
        _ if prefix.starts_with('[') && prefix.ends_with(']') => "",
        _ => prefix,
    };
    // a `<stdout>:` or `<stderr>:` wrapper needs a `<`
    let prefix = if memchr::memchr(b'<', prefix.as_bytes()).is_some() {
        prefix
            .rsplit_once("<stdout>:")
            .or_else(|| prefix.rsplit_once("<stderr>:"))
            .map(|p| p.1)
            .unwrap_or(prefix)
    } else {
        prefix
    };
    // `rsplitn(3, ':')`: the tid after the last `:`, the pid before it, the host before that
    let pb = prefix.as_bytes();
    let host = memchr::memrchr(b':', pb).and_then(|j| {
        let k = memchr::memrchr(b':', &pb[..j])?;
        let (h, p, t) = (&prefix[..k], &pb[k + 1..j], &pb[j + 1..]);
        if !(t.iter().all(u8::is_ascii_digit) && p.iter().all(u8::is_ascii_digit)) {
            return None;
        }
        // after any wrapper a launcher glued on: `[default0]:host` (torchrun --tee),
        // `(RayWorker pid=1) host`, `0: host` (srun -l), `10.0.0.1: host` (pdsh)
        let h = match memchr::memrchr2(b' ', b']', h.as_bytes()) {
            Some(i) => &h[i + 1..],
            None => h,
        };
        Some(h.trim_start_matches(':')).filter(|h| !h.is_empty())
    });
    Some((host, msg, warn))
}

/// The literal words of the tests of a line, by their place in [`GATE_WORDS`].
mod word {
    pub const INIT_COMPLETE: usize = 0;
    pub const NNODES: usize = 1;
    pub const LOCAL_RANKS: usize = 2;
    pub const VIA: usize = 3;
    pub const DRIVER: usize = 4;
    pub const ENV: usize = 5;
    pub const P2P_PLUGIN: usize = 6;
    pub const NET_PLUGIN: usize = 7;
}
const GATE_WORDS: [&str; 8] = [
    "Init COMPLETE",
    "nNodes ",
    "localRanks ",
    " via ",
    "cudaDriverVersion ",
    " set by environment to ",
    "P2P plugin ",
    "Loaded net plugin ",
];
/// [`GATE_WORDS`] as one search: a line holding none of them passes none of [`gate`]'s tests
/// (`gated` false). (An automaton that names every word a line holds was tried: most NCCL
/// lines hold one, and its pass over the line cost more than the searches it saved.)
static GATES: LazyLock<super::scan::Literals> =
    LazyLock::new(|| super::scan::Literals::new(&GATE_WORDS));

/// Whether `$s` holds word `$word` of [`GATE_WORDS`], `$gated` from [`GATES`] (a searcher
/// built once per call site: `$word` is a constant).
macro_rules! holds {
    ($gated:expr, $s:expr, $word:expr) => {
        $gated && has!($s, GATE_WORDS[$word])
    };
}

/// `re`'s captures in `s`, tried only when `s` holds word `$word` of [`GATE_WORDS`], which
/// every match of `re` holds: most lines hold none of the patterns' words.
macro_rules! gate {
    ($gated:expr, $s:expr, $word:expr, $re:expr) => {
        if holds!($gated, $s, $word) {
            $re.captures($s)
        } else {
            None
        }
    };
}

use super::scan::Ahead;
use crate::vocab::{contains_ignore_ascii_case as contains_ci_at, push_unique};

fn contains_ci(hay: &str, needle: &str) -> bool {
    contains_ci_at(hay, needle, 0)
}

/// `s` clipped to `max` bytes, borrowed when it fits (as [`super::clip`] gives it).
fn clipped(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(super::clip(s, max))
    }
}

/// [`push_unique`] of `s` clipped to 64 bytes, allocating only for a name not yet kept (every
/// rank prints the same interface and device lines).
fn push_clipped(v: &mut Vec<String>, s: &str) {
    let s = clipped(s, 64);
    if !v.iter().any(|x| *x == *s) && v.len() < super::MAX_ITEMS {
        v.push(s.into_owned());
    }
}

/// What the text around the NCCL lines says about the job's shape: a launch command with
/// `--nnodes 2` or more, a Slurm `--nodes` line, or the poster's words ("cross-node", "two
/// machines", "多机"). The matched words, quoted, for the message.
fn job_shape_from_text(text: &str) -> Option<String> {
    if let Some(n) = crate::formats::launcher::find(text)
        .iter()
        .filter_map(|l| l.nnodes)
        .find(|n| *n > 1)
    {
        return Some(format!("the command line runs {n} nodes"));
    }
    text.lines()
        .take(100_000)
        .filter(|l| !has!(l, "NCCL INFO") && !has!(l, "NCCL WARN"))
        .find_map(|l| MULTI_NODE_WORDS.find(l))
        .map(|m| format!("the text says \"{}\"", super::clip(m.as_str(), 60)))
}

/// The last line of a paste that stops in the middle of an NCCL line: no final newline and a
/// line NCCL would not print that way (`NCCL IN`, a channel line without `via`, a prefix
/// only). A file without a final newline whose last line is whole is not cut.
fn cut_line(text: &str) -> Option<String> {
    if text.is_empty() || text.ends_with('\n') {
        return None;
    }
    let last = text
        .rsplit('\n')
        .next()
        .unwrap_or(text)
        .trim_end_matches('\r');
    let cut = if let Some((_, msg, _)) = split_line(last) {
        let m = msg.trim();
        m.is_empty()
            || (m.starts_with("Channel ") && has!(m, " -> ") && !has!(m, " via "))
            || m.ends_with(" via")
            || m.ends_with(':')
    } else {
        // `host:pid:tid [0] NCCL I`, `host:pid:tid [0]`, `host:1234:`: a prefix without its message
        let t = last.trim();
        has!(t, "NCCL") || PREFIX_ONLY.is_match(t)
    };
    cut.then(|| {
        format!(
            "the last line stops mid-way (`{}`)",
            super::clip(last.trim(), 80)
        )
    })
}

pub fn parse_nccl_log(text: &str) -> NcclLog {
    let mut log = NcclLog::default();
    let mut ranks = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    let mut used = BTreeSet::new();
    let (mut using_network, mut ib_init, mut socket_init) = (None, false, false);
    // aws-ofi-nccl's libfabric provider (`NET/OFI Selected provider is tcp, …`)
    let mut ofi_provider: Option<String> = None;
    let mut net_channels: BTreeSet<String> = BTreeSet::new();
    let mut nnodes: Option<u32> = None;
    let mut ranks_by_host: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    let mut rank_past_gpus: Option<String> = None;
    // nccl-tests prints the host of every rank of the job before NCCL's own lines; the table
    // is whole once another line follows its last row (a paste cut inside it may have lost
    // the rows of other hosts)
    let mut tests_ranks: BTreeSet<u32> = BTreeSet::new();
    let (mut in_tests_table, mut tests_table_ended) = (false, false);
    // nccl-tests' footer and `CheckData` lines, looked for on each line only in a text that
    // holds one (one search of the text, not one per line)
    let (oob_any, wrong_any) = (has!(text, "Out of bounds values"), has!(text, " #wrong="));
    for l in super::scan::lines(text) {
        if let Some(c) = maybe_row(l).then(|| TESTS_ROW.captures(l)).flatten() {
            log.tests_rows += 1;
            if let Ok(b) = c[1].parse::<f64>() {
                log.tests_busbw_max_gbs = Some(log.tests_busbw_max_gbs.map_or(b, |m| m.max(b)));
            }
            if let Some((size, wrong)) = row_wrong(l) {
                let total = log.tests_wrong_elements.get_or_insert(0);
                *total = total.saturating_add(wrong);
                let sizes = log.tests_wrong_sizes.get_or_insert_with(Vec::new);
                if wrong > 0 && sizes.len() < 20 {
                    sizes.push(size);
                }
            }
        } else if let Some(c) = l.starts_with('#').then(|| TESTS_AVG.captures(l)).flatten() {
            log.tests_avg_busbw_gbs = c[1].parse().ok();
        } else if let Some(c) = (oob_any && has!(l, "Out of bounds values"))
            .then(|| TESTS_OOB.captures(l))
            .flatten()
        {
            let n: u64 = c[1].parse().unwrap_or(u64::MAX);
            // `FAILED` with a count that did not parse is still a failure
            let n = if &c[2] == "FAILED" { n.max(1) } else { n };
            log.tests_out_of_bounds = Some(log.tests_out_of_bounds.map_or(n, |m| m.max(n)));
        } else if let Some(c) = (wrong_any && has!(l, " #wrong="))
            .then(|| TESTS_RANK_WRONG.captures(l))
            .flatten()
        {
            let n: u64 = c[1].parse().unwrap_or(0);
            let total = log.tests_wrong_elements.get_or_insert(0);
            *total = total.saturating_add(n);
        }
        // `^#`: only a line starting with `#` can be a row
        if let Some(c) = l
            .starts_with('#')
            .then(|| TESTS_RANK.captures(l.trim_end()))
            .flatten()
        {
            in_tests_table = true;
            if hosts.len() < super::MAX_ITEMS {
                hosts.insert(c[2].to_string());
            }
            if let Ok(r) = c[1].parse::<u32>()
                && tests_ranks.len() < 1_000_000
            {
                tests_ranks.insert(r);
            }
        } else if in_tests_table && !l.trim().is_empty() {
            in_tests_table = false;
            tests_table_ended = true;
        }
    }
    // every rank 0..n of a whole device table, all on one host: a single-node job
    let tests_one_host = tests_table_ended
        && hosts.len() == 1
        && !tests_ranks.is_empty()
        && tests_ranks.iter().copied().eq(0..tests_ranks.len() as u32);
    // `NET/IB : Got completion from peer …` (or an async event on the port): the IB transport
    // carried this rank's traffic to another node, failing or not
    let mut ib_traffic = false;
    // `NET/IB : Unable to open device mlx5_0`: a device NCCL listed but could not open
    let mut ib_dev_unopened: Option<String> = None;
    // the `ib` phrases are looked for in a lowercased copy, kept between lines
    let mut lower = String::new();
    // lines read already: `NCCL_X set by environment to V` with what it sets, and the
    // `: Using` lines that name interfaces and devices (a few distinct ones, each printed by
    // every rank)
    let mut env_lines: Vec<(&str, Option<(&str, &str)>)> = Vec::new();
    let mut using_lines: Vec<&str> = Vec::new();
    // (a line is searched for the version only while none was read, and only in a text that
    // holds one: one search of the text instead of one per line)
    let version_unread = has!(text, "NCCL version ");
    for (line, first) in nccl_lines(text) {
        if version_unread && log.nccl_version.is_none() && has!(line, "NCCL version ") {
            if let Some(c) = VERSION.captures(line) {
                log.nccl_version = Some(super::clip(&c[1], 64));
            }
        }
        let Some((host, msg, warn)) = split_line_at(line, first) else {
            continue;
        };
        log.lines += 1;
        if let Some(h) = host {
            if hosts.len() < super::MAX_ITEMS {
                let h = host_name(h);
                if !hosts.contains(h.as_ref()) {
                    hosts.insert(h.into_owned());
                }
            }
        }
        // every phrase below holds `ib` (in any case): only such a line is lowercased
        if contains_ci_at(msg, "ib", 1) {
            lower.clear();
            lower.push_str(msg);
            lower.make_ascii_lowercase();
            // each phrase below comes with a failure word: most `ib` lines have none
            static FAILED: LazyLock<super::scan::Literals> =
                LazyLock::new(|| super::scan::Literals::new(&["fail", "unable", "cannot"]));
            let failed = FAILED.is_match(&lower);
            if failed
                && (has!(lower, "libibverbs")
                    && (has!(lower, "fail") || has!(lower, "unable") || has!(lower, "cannot"))
                    || has!(lower, "ibv_open_device") && has!(lower, "fail")
                    || has!(lower, "net/ib : unable to open")
                    || has!(lower, "ibv_get_device_list failed"))
            {
                log.ib_verbs_failed = true;
            }
            // (both phrases hold `unable`: only a line with a failure word is searched, and
            // with searchers built once, not a `str::find` searcher per `ib` line)
            if failed
                && ib_dev_unopened.is_none()
                && let Some(at) = find_lit!(&lower, "net/ib : unable to open device ")
                    .or_else(|| find_lit!(&lower, "net/ib : unable to query device "))
            {
                let dev = msg[at..].split_whitespace().nth(6).unwrap_or("");
                ib_dev_unopened = Some(super::clip(dev, 64));
            }
        }
        // one search says whether the line holds any of the literal words the tests below
        // look for; most lines hold none, and then none of them is searched for on its own
        let gated = GATES.is_match(msg);
        if holds!(gated, msg, word::INIT_COMPLETE) {
            log.init_complete = true;
        }
        // each pattern below is tried only on a line holding its literal words
        if let Some(c) = gate!(gated, msg, word::NNODES, NNODES) {
            if let Ok(n) = c[1].parse::<u32>() {
                nnodes = Some(nnodes.map_or(n, |m: u32| m.max(n)));
            }
        }
        if let Some(c) = gate!(gated, msg, word::LOCAL_RANKS, LOCAL_RANKS) {
            if let Ok(n) = c[1].parse::<u32>() {
                log.local_ranks = Some(log.local_ranks.map_or(n, |m| m.max(n)));
            }
        }
        if log.p2p_denied.is_none() && p2p_refused(msg.trim()) {
            log.p2p_denied = Some(super::clip(msg.trim(), 200));
        }
        if warn {
            let m = msg.trim();
            if m.starts_with("NET/IB : Got completion") || m.starts_with("NET/IB : Got async event")
            {
                ib_traffic = true;
            }
            if log.warnings.len() < 100 {
                log.warnings.push(super::clip(msg.trim(), super::MAX_TEXT));
            }
            continue;
        }
        if let Some(c) = gate!(gated, msg, word::VIA, CONN) {
            log.connections_seen += 1;
            let (transport, gdr) = transport_name(&c[5]);
            if let Some(net) = transport.strip_prefix("NET/")
                && !net_channels.contains(net)
            {
                net_channels.insert(net.to_string());
            }
            if gdr && transport.starts_with("NET/") {
                log.gdr_connections += 1;
            }
            if transport == "SHM" {
                log.local_shm_connections += 1;
            } else if transport.starts_with("P2P") || transport.starts_with("NVLS") {
                log.p2p_connections += 1;
            }
            if !used.contains(&transport) {
                used.insert(transport.clone());
            }
            if log.transports.len() < super::MAX_ITEMS {
                log.transports.push(Connection {
                    channel: c[1].parse().unwrap_or(u32::MAX),
                    from: c[2].parse().unwrap_or(u32::MAX),
                    to: c[3].parse().unwrap_or(u32::MAX),
                    direction: c.get(4).map(|m| m.as_str().to_string()),
                    transport,
                    gdr,
                    host: host.map(|h| host_name(h).into_owned()),
                });
            }
            continue;
        }
        if let Some(c) = gate!(gated, msg, word::DRIVER, DRIVER) {
            log.cuda_driver_version = c[1].parse().ok();
        }
        if holds!(gated, msg, word::ENV) {
            // every rank echoes the same settings: a line read before is read again only when
            // its setting would change what is kept (another line set it otherwise since)
            let known = env_lines.iter().find(|(m, _)| *m == msg).map(|(_, kv)| *kv);
            let kv = match known {
                Some(kv) => kv,
                None => {
                    let kv = ENV.captures(msg).map(|c| {
                        let (k, v) = (c.get(1).map_or("", |m| m.as_str()), c.get(2));
                        (
                            k,
                            v.map_or("", |m| m.as_str())
                                .trim()
                                .trim_end_matches('.')
                                .trim(),
                        )
                    });
                    if env_lines.len() < 64 {
                        env_lines.push((msg, kv));
                    }
                    kv
                }
            };
            if let Some((k, value)) = kv
                && log.env_overrides.len() < super::MAX_ITEMS
            {
                // allocate only for a new value
                let value = clipped(value, 256);
                if log.env_overrides.get(k).map(String::as_str) != Some(&*value) {
                    log.env_overrides.insert(k.to_string(), value.into_owned());
                }
            }
        }
        // `(?i)` also folds non-ASCII letters (the Kelvin sign is a `K`): the ASCII test
        // stands in for the pattern only on ASCII text
        if let Some(c) = (!msg.is_ascii() || contains_ci_at(msg, "nranks ", 4))
            .then(|| RANK.captures(msg))
            .flatten()
        {
            if let (Ok(r), Ok(n)) = (c[1].parse::<u32>(), c[2].parse::<u32>()) {
                if ranks.len() < 1_000_000 {
                    ranks.insert(r);
                }
                if let Some(h) = host
                    && ranks_by_host.len() < 10_000
                {
                    ranks_by_host
                        .entry(host_name(h).into_owned())
                        .or_default()
                        .insert(r);
                }
                log.nranks = Some(log.nranks.map_or(n, |m| m.max(n)));
            }
            // ranks are numbered node by node: a process that sees several GPUs (device 2 of
            // its host) yet holds rank 10 has ranks of other nodes before it
            if rank_past_gpus.is_none()
                && let Some(d) = RANK_DEV.captures(msg)
                && let (Ok(r), Ok(dev)) = (d[1].parse::<u32>(), d[3].parse::<u32>())
                && dev > 0
                && r > dev
            {
                rank_past_gpus = Some(format!("rank {r} runs on local device {dev}"));
            }
        }
        if let Some(c) = (holds!(gated, msg, word::P2P_PLUGIN)
            || holds!(gated, msg, word::NET_PLUGIN))
        .then(|| PLUGIN.captures(msg))
        .flatten()
        {
            if let Some(m) = c.get(1).or(c.get(2)) {
                log.net_plugin = Some(super::clip(m.as_str(), 64));
            }
        }
        let m = msg.trim();
        if let Some(rest) = m
            .strip_prefix("NET/OFI Selected provider is ")
            .or_else(|| m.strip_prefix("NET/OFI Selected Provider is "))
        {
            let name = rest.split([',', ' ']).next().unwrap_or("");
            if !name.is_empty() && ofi_provider.is_none() {
                ofi_provider = Some(super::clip(name, 64));
            }
        }
        if m.starts_with("NET/")
            && has!(m, " : GPU Direct RDMA ")
            && let Some(c) = GDR_HCA.captures(m)
            && net_kind(c[1].trim()) == "IB"
        {
            if &c[2] == "Disabled" {
                push_clipped(&mut log.gdr_disabled_hcas, &c[3]);
                log.gdr_no_module |= c.get(4).is_some();
            } else {
                push_clipped(&mut log.gdr_enabled_hcas, &c[3]);
            }
            continue;
        }
        // each rank prints the same interface lines: what a line read before names is kept
        // already (the lists only grow), so it is not read again
        let again = if has!(m, " : Using") || m.starts_with("Bootstrap: Using") {
            let seen = using_lines.contains(&m);
            if !seen && using_lines.len() < 64 {
                using_lines.push(m);
            }
            seen
        } else {
            false
        };
        if m.starts_with("NET/IB : No device found") {
            log.ib_no_device = true;
        } else if let Some(rest) = m
            .strip_prefix("NET/IB : Using interface ")
            .filter(|r| r.ends_with(" for sideband communication"))
        {
            // 2.3's out-of-band interface, printed before any device is looked for: no sign
            // that IB is used (`Using internal Network` says which network was)
            if again {
                continue;
            }
            if let Some(name) = rest.split_whitespace().next() {
                push_clipped(&mut log.interfaces, name);
            }
        } else if let Some(rest) = m.strip_prefix("NET : Using interface ") {
            // 2.3's `socket.h`: `NET : Using interface %s:%s` for each interface found
            if again {
                continue;
            }
            if let Some(name) = rest.split(':').next().filter(|n| !n.is_empty()) {
                push_clipped(&mut log.interfaces, name);
            }
        } else if let Some(rest) = m.strip_prefix("NET/IB: [") {
            // 2.3's device line `NET/IB: [%d] %s:%d/%s ` (a TRACE from 2.4 on)
            ib_init = true;
            if let Some(dev) = rest
                .split_once("] ")
                .and_then(|(_, d)| d.split(':').next())
                .filter(|d| !d.is_empty())
            {
                push_clipped(&mut log.ib_devices, dev);
            }
        } else if m.starts_with("NET/Socket : ") && m.ends_with(" interfaces found") {
            // 2.3's `NET/Socket : %d interfaces found`
            socket_init = true;
        } else if let Some(rest) = m.strip_prefix("NET/IB : Using") {
            ib_init = true;
            if again {
                continue;
            }
            let devs = rest.split(';').next().unwrap_or("");
            for c in IB_DEV.captures_iter(devs) {
                push_clipped(&mut log.ib_devices, &c[1]);
            }
            if let Some(c) = OOB.captures(rest) {
                push_clipped(&mut log.interfaces, &c[1]);
            }
        } else if let Some(rest) = m.strip_prefix("NET/Socket : Using") {
            socket_init = true;
            if again {
                continue;
            }
            for c in INDEXED_IF.captures_iter(rest) {
                push_clipped(&mut log.interfaces, &c[1]);
            }
        } else if let Some(rest) = m
            .strip_prefix("Bootstrap : Using")
            // `src/bootstrap.cc` from 2.25 on: `Bootstrap: Using%s`
            .or_else(|| m.strip_prefix("Bootstrap: Using"))
        {
            if again {
                continue;
            }
            let rest = rest.trim();
            let mut found = false;
            for c in INDEXED_IF.captures_iter(rest) {
                push_clipped(&mut log.interfaces, &c[1]);
                found = true;
            }
            if !found {
                if let Some(name) = rest.split(':').next().filter(|n| !n.is_empty()) {
                    push_clipped(&mut log.interfaces, name);
                }
            }
        } else if let Some(rest) = m
            .strip_prefix("Using network ")
            .or_else(|| {
                // NCCL 2.27+: `Assigned NET plugin IB to comm`
                m.strip_prefix("Assigned NET plugin ")
                    .and_then(|r| r.strip_suffix(" to comm"))
            })
            // NCCL 2.3: `Using internal Network IB|Socket`, `Using external Network <plugin>`
            .or_else(|| m.strip_prefix("Using internal Network "))
            .or_else(|| m.strip_prefix("Using external Network "))
        {
            let n = net_kind(rest.trim());
            push_unique(&mut log.networks_chosen, n.clone());
            using_network = Some(n);
        } else if m.starts_with("Failed to initialize NET plugin IB")
            || m.starts_with("NET/IB : No device")
        {
            log.ib_no_device = true;
        }
    }
    log.ranks_seen = ranks.len();
    log.hosts = hosts.into_iter().collect();
    log.transports_used = used.into_iter().collect();
    // Channels beat NCCL's own choice line, which beats init lines.
    let channel_net = if net_channels.iter().any(|n| net_kind(n) == "IB") {
        Some("IB".to_string())
    } else if net_channels
        .iter()
        .any(|n| n.eq_ignore_ascii_case("socket"))
    {
        Some("Socket".to_string())
    } else {
        net_channels.iter().next().map(|n| net_kind(n))
    };
    (log.net, log.net_source) = if let Some(n) = channel_net {
        (Some(n), Some("channels".into()))
    } else if ib_traffic {
        (Some("IB".into()), Some("ib_completions".into()))
    } else if let Some(n) = using_network {
        (Some(n), Some("using_network".into()))
    } else if ib_init {
        (Some("IB".into()), Some("init".into()))
    } else if socket_init {
        (Some("Socket".into()), Some("init".into()))
    } else {
        (None, None)
    };
    // a net plugin whose libfabric provider is TCP carries the traffic over sockets, whatever
    // the plugin's network is called (see `ofi_over_sockets`)
    if let Some(p) = ofi_provider.as_deref()
        && ofi_over_sockets(p)
        && log
            .net
            .as_deref()
            .is_some_and(|n| n != "IB" && n != "Socket")
    {
        log.net = Some("Socket".into());
        log.net_source = Some(format!("ofi_provider {p}"));
    }
    log.network_used = if log.connections_seen > 0 {
        Some(!net_channels.is_empty())
    } else if log.nranks == Some(1) {
        Some(false)
    } else {
        None
    };
    let set_to_1 = |k: &str| log.env_overrides.get(k).is_some_and(|v| v.trim() == "1");
    log.ib_wanted = log.env_overrides.contains_key("NCCL_IB_HCA")
        || log
            .env_overrides
            .get("NCCL_IB_DISABLE")
            .is_some_and(|v| v.trim() == "0")
        || log
            .env_overrides
            .get("NCCL_NET")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("IB"));
    if has!(text, "NCCL_IB_HCA set to") {
        log.ib_wanted = true;
    }
    log.ib_intended = ib_intent(&log, ib_dev_unopened.as_deref(), text);
    let intra_disabled = set_to_1("NCCL_P2P_DISABLE") && set_to_1("NCCL_SHM_DISABLE");
    if log.local_ranks.is_none() {
        log.local_ranks = ranks_by_host
            .values()
            .map(|r| r.len() as u32)
            .max()
            .filter(|_| log.hosts.len() == ranks_by_host.len());
    }
    log.nodes = nnodes.or_else(|| (!log.hosts.is_empty()).then_some(log.hosts.len() as u32));
    // ranks of one job choose different networks only on different nodes
    log.multi_node =
        if nnodes.is_some_and(|n| n > 1) || log.hosts.len() > 1 || log.networks_chosen.len() > 1 {
            Some(true)
        } else if nnodes == Some(1) || log.nranks == Some(1) {
            Some(false)
        } else if (!net_channels.is_empty() || ib_traffic) && !intra_disabled {
            // NCCL never sends between GPUs of one node over the network while P2P or SHM works
            Some(true)
        } else if tests_one_host {
            // nccl-tests' device table lists every rank of the job
            Some(false)
        } else if log.hosts.len() == 1
            && log.nranks.is_some()
            && log.ranks_seen as u32 == log.nranks.unwrap_or(0)
        {
            // every rank printed from one host
            Some(false)
        } else if log.hosts.len() == 1 && log.connections_seen > 0 && net_channels.is_empty() {
            Some(false)
        } else {
            None
        };
    if log.multi_node.is_none()
        && let Some(from) = rank_past_gpus.or_else(|| job_shape_from_text(text))
    {
        log.multi_node = Some(true);
        log.multi_node_from = Some(from);
    }
    if log.multi_node.is_none() {
        // what to add for a rule that needs the job's shape (the entry below may refine it)
        log.unavailable.insert(
            "multi_node".into(),
            format!(
                "the log shows {} host(s) and no nNodes, no rank count per host and no channel over the network: add every node's NCCL_DEBUG=INFO log through `Init COMPLETE`, or the launch command (--nnodes)",
                log.hosts.len()
            ),
        );
    }
    log.truncated = cut_line(text);
    if let Some(why) = &log.truncated {
        // a cut paste says nothing about what came after it: absence is not evidence
        let why = format!("input ends early: {why}");
        if log.multi_node == Some(false) && nnodes.is_none() && log.nranks != Some(1) {
            log.multi_node = None;
            log.unavailable.insert("multi_node".into(), why.clone());
        }
        if log.network_used == Some(false) && log.nranks != Some(1) {
            log.network_used = None;
            log.unavailable.insert("network_used".into(), why);
        }
    }
    // Within one node, network connections are GPU pairs that P2P and SHM did not serve.
    if log.multi_node == Some(false) {
        log.local_net_connections = log
            .transports
            .iter()
            .filter(|c| c.transport.starts_with("NET/"))
            .count() as u64;
    }
    if log.connections_seen == 0 && !log.init_complete && log.lines > 0 {
        let why = "input ends early: the log stops before NCCL set up its channels (no `via` lines, no `Init COMPLETE`)";
        if log.network_used.is_none() {
            log.unavailable.insert("network_used".into(), why.into());
        }
        if log.multi_node.is_none() {
            log.unavailable.insert("multi_node".into(), why.into());
        }
        if log.net.is_none() {
            log.unavailable.insert("net".into(), why.into());
        }
    }
    log
}

/// An IPoIB interface name: `ib0`, `ib1.8001` (a partition child), `ibp12s0`, `ibs3`,
/// `ibP1p12s0` (the kernel's predictable names for IPoIB).
fn ipoib_name(name: &str) -> bool {
    let b = name.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    b.len() >= 3
        && b[..2].eq_ignore_ascii_case(b"ib")
        && (digit(2) || matches!(b[2], b'p' | b's' | b'P') && digit(3))
}

/// What shows the site meant to use an RDMA fabric (the module doc says which signals count
/// and why), strongest first; None when the text shows none.
fn ib_intent(log: &NcclLog, unopened: Option<&str>, text: &str) -> Option<String> {
    if let Some(i) = log.interfaces.iter().find(|i| ipoib_name(i)) {
        return Some(format!(
            "NCCL's sockets run over the IPoIB interface {i}, so the host has InfiniBand"
        ));
    }
    if let Some(dev) = unopened {
        return Some(format!(
            "NCCL found the RDMA device {dev} but could not open it"
        ));
    }
    let env = &log.env_overrides;
    if let Some((k, v)) = env.iter().find(|(k, v)| {
        let v = v.trim();
        match k.as_str() {
            "NCCL_IB_DISABLE" => v == "0",
            "NCCL_NET" => v.eq_ignore_ascii_case("IB"),
            "NCCL_SOCKET_IFNAME" => v
                .split(',')
                .any(|i| ipoib_name(i.trim_start_matches(['^', '=']))),
            "NCCL_NET_GDR_LEVEL" | "NCCL_NET_GDR_READ" => true,
            k => k.starts_with("NCCL_IB_"),
        }
    }) {
        return Some(format!(
            "the environment sets {k}={}",
            super::clip(v.trim(), 60)
        ));
    }
    if log.ib_wanted {
        return Some("the environment sets NCCL_IB_HCA".into());
    }
    // the last, and only where it could matter: one pass over the text for an HCA name
    let unsure = log.net.as_deref() != Some("IB") || log.ib_no_device || log.ib_verbs_failed;
    if unsure {
        for pat in ["mlx5_", "mlx4_"] {
            for at in memchr::memmem::find_iter(text.as_bytes(), pat.as_bytes()) {
                let name: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .take(32)
                    .collect();
                // a device (`mlx5_0`), not the driver (`mlx5_core`, Ethernet-only NICs too)
                if name[pat.len()..].chars().all(|c| c.is_ascii_digit()) && name.len() > pat.len() {
                    return Some(format!("the text names the HCA {name}"));
                }
            }
        }
    }
    None
}

/// NCCL's lines that say P2P between two GPUs of one node was allowed by the topology (and
/// NCCL_P2P_LEVEL) and then refused by the driver or CUDA, so the pair falls back to SHM or
/// the network. NVIDIA/nccl (read at v2.10.3-1, v2.12.12-1, v2.19.3-1 and 5067397c, 2.30):
/// `src/graph/paths.cc` `ncclTopoCheckP2p` sets `p2pLevel = PATH_PXB` by default (2.10 to 2.29
/// on Intel, ARM and Zhaoxin CPUs, 2.30 everywhere but AMD with two GPUs or fewer), so GPUs
/// under different CPU host bridges go via SHM by NCCL's own choice and nothing is printed;
/// only where the path is within that level does it ask NVML (2.12 on) and print `P2P is
/// disabled between connected GPUs %d and %d` (INFO) or `P2P is disabled between NVLINK
/// connected GPUs %d and %d` (WARN); `src/transport/p2p.cc` `p2pCanConnect`, after the
/// topology said yes, prints `peer query failed between dev`, `Could not enable P2P between
/// dev` (cudaDeviceCanAccessPeer said no) and `Legacy IPC not supported` (cudaIpcGetMemHandle
/// failed, WSL).
fn p2p_refused(m: &str) -> bool {
    m.starts_with("P2P is disabled between ")
        || m.starts_with("Could not enable P2P between dev ")
        || m.starts_with("peer query failed between dev ")
        || m.starts_with("Legacy IPC not supported")
}

/// The registry entry.
pub struct NcclLogKind;

impl super::EvidenceKind for NcclLogKind {
    fn marker(&self, line: &str) -> bool {
        has!(line, "NCCL INFO")
            || has!(line, "NCCL WARN")
            || has!(line, "NCCL version ")
            || tests_line(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        // a results row of nccl-tests names its data type (TESTS_ROW); its other lines hold
        // the words of [`tests_line`]'s tests (not `#` alone: a one-byte phrase makes the
        // search of a big text for them all look closely at nearly every byte)
        &[
            "NCCL INFO",
            "NCCL WARN",
            "NCCL version ",
            "Avg bus bandwidth",
            "algbw",
            "nThread ",
            "Rank",
            "#wrong=",
            "float",
            "half",
            "double",
            "int8",
            "int32",
            "int64",
            "f8e",
            "Out of bounds values",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "nccl-log"
    }
    fn doc(&self) -> &'static str {
        "NCCL_DEBUG=INFO output: NCCL's version, ranks and nodes, the transport of each channel, the network chosen, NCCL_* settings, warnings"
    }
    fn example(&self) -> &'static str {
        "NCCL_DEBUG=INFO torchrun --nproc-per-node 8 train.py 2>&1 | tee nccl.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("nccl_version", "NCCL's version"),
            (
                "cuda_driver_version",
                "the driver's CUDA version NCCL printed",
            ),
            ("ranks_seen", "distinct ranks named"),
            ("nranks", "ranks of the communicator"),
            ("hosts", "host names in the line prefixes"),
            (
                "transports",
                "channel connections: channel, from, to, direction, transport, gdr, host",
            ),
            ("connections_seen", "connection lines seen"),
            ("transports_used", "distinct transports of the connections"),
            ("net", "IB, Socket or a plugin's network"),
            (
                "net_source",
                "what decided `net`: channels, using_network, init, or `ofi_provider <name>` (aws-ofi-nccl on libfabric's tcp provider)",
            ),
            ("net_plugin", "a network plugin NCCL loaded"),
            ("ib_devices", "IB devices NCCL used"),
            ("ib_no_device", "`NET/IB : No device found`"),
            ("interfaces", "socket and bootstrap interfaces"),
            ("env_overrides", "NCCL_* variables the environment set"),
            ("network_used", "a connection goes through the network"),
            ("warnings", "NCCL WARN lines"),
            ("lines", "lines that carried an NCCL message"),
            ("nodes", "nodes of the job"),
            ("local_ranks", "ranks per node"),
            (
                "multi_node",
                "the job spans nodes (absent when the log cannot tell)",
            ),
            (
                "ib_verbs_failed",
                "the IB verbs library or a device could not be opened",
            ),
            (
                "local_shm_connections",
                "connections within a node through SHM",
            ),
            (
                "local_net_connections",
                "connections within a node through the network",
            ),
            ("p2p_connections", "connections through P2P or NVLS"),
            (
                "p2p_denied",
                "NCCL's line saying P2P between local GPUs was refused (`P2P is disabled between connected GPUs`, `Could not enable P2P between dev`)",
            ),
            ("init_complete", "`Init COMPLETE` was printed"),
            ("networks_chosen", "networks NCCL said it chose"),
            ("ib_wanted", "the environment asked for IB"),
            (
                "ib_intended",
                "what shows the site meant to use RDMA: an IPoIB socket interface, an IB setting, an HCA named",
            ),
            ("multi_node_from", "what else showed the job spans nodes"),
            (
                "gdr_disabled_hcas",
                "HCAs the IB transport says GPU Direct RDMA is disabled for",
            ),
            (
                "gdr_enabled_hcas",
                "HCAs the IB transport says GPU Direct RDMA is enabled for",
            ),
            ("gdr_no_module", "a disabled verdict said `(no module)`"),
            (
                "gdr_connections",
                "connections through the network with GPUDirect RDMA (`/GDRDMA`)",
            ),
            ("truncated", "the text ends inside an NCCL line"),
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
                "wrong elements the rows' `#wrong` columns counted",
            ),
            (
                "tests_wrong_sizes",
                "sizes (bytes) of the rows with wrong elements",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nccl.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let h = s.head;
        has!(h, "NCCL INFO")
            || has!(h, "NCCL WARN")
            || has!(h, "NCCL version ")
            || h.lines().any(tests_line)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_nccl_log(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    fn parse(name: &str) -> NcclLog {
        parse_nccl_log(&fixture(name))
    }

    #[test]
    fn a_garbled_line_whose_shell_parse_splits_a_character_does_not_panic() {
        // proptest's minimal case from CI (garbled_nccl_lines_never_panic): tree-sitter's
        // error recovery put a word boundary inside `ﬀ`, and the launcher sliced there
        let l = parse_nccl_log(
            "]<<0 NCCL INFO Channel 0/0 : 0[] -> 0 via \n]<<x NCCL INFO Channel 0/0 : 0[] -> 0 via <ﬀ",
        );
        assert!(l.transports.len() <= 40);
    }

    #[test]
    fn nccl_2_3_init_wording_is_read() {
        // github.com/NVIDIA/nccl/issues/207 (problem: 8 ranks on two nodes over sockets on the
        // IPoIB ib0; the maintainer named that socket the bottleneck), NCCL 2.3.7's `init.cu`,
        // `net_ib.cu` and `socket.h` lines
        let t = "gpu2:46654:46654 [0] NCCL INFO NET : Using interface ib0:12.12.12.102<0>\ngpu2:46654:46654 [0] NCCL INFO NET/IB : Using interface ib0 for sideband communication\ngpu2:46654:46654 [0] NCCL INFO Using internal Network Socket\ngpu2:46654:46654 [0] NCCL INFO NET/Socket : 1 interfaces found\nNCCL version 2.3.7+cuda9.0\ngpu2:46654:46654 [0] NCCL INFO rank 0 nranks 8\ngpu2:46655:47153 [1] NCCL INFO comm 0x7f132405ad20 rank 1 nranks 8\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert_eq!(l.net_source.as_deref(), Some("using_network"));
        assert_eq!(l.networks_chosen, ["Socket"]);
        assert_eq!(l.interfaces, ["ib0"]);
        assert!(l.ib_devices.is_empty());
        assert!(l.ib_intended.as_deref().is_some_and(|w| w.contains("ib0")));
        assert_eq!(l.nranks, Some(8));
        // the sideband line alone, printed before any device is looked for, is no IB init
        let l = parse_nccl_log(
            "gpu2:46654:46654 [0] NCCL INFO NET/IB : Using interface ib0 for sideband communication\n",
        );
        assert_eq!(l.net, None);
        // 2.3's device line and `Using internal Network IB` (the wording of `initNet` and of
        // `NET/IB: [%d] %s:%d/%s ` in v2.3.7-1's sources)
        let l = parse_nccl_log(
            "n1:1:1 [0] NCCL INFO NET/IB: [0] mlx5_0:1/IB \nn1:1:1 [0] NCCL INFO Using internal Network IB\n",
        );
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.ib_devices, ["mlx5_0"]);
        // healthy, github.com/horovod/horovod/issues/969 (one host, no InfiniBand): sockets
        // on Ethernet interfaces, nothing showing the site meant to use RDMA
        let t = "[1,0]<stdout>:ptv-gpu01:11007:11098 [0] NCCL INFO Using internal Network Socket\n[1,0]<stdout>:ptv-gpu01:11007:11098 [0] NCCL INFO NET : Using interface enp14s0:10.128.5.150<0>\n[1,0]<stdout>:ptv-gpu01:11007:11098 [0] NCCL INFO NET/Socket : 3 interfaces found\n[1,0]<stdout>:NCCL version 2.3.7+cuda9.0\n[1,0]<stdout>:ptv-gpu01:11007:11098 [0] NCCL INFO rank 0 nranks 4\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert_eq!(l.interfaces, ["enp14s0"]);
        assert_eq!(l.ib_intended, None);
    }

    #[test]
    fn bootstrap_line_of_2_25_on_is_read() {
        // github.com/NVIDIA/nccl/issues/1189 (2.2x, `Bootstrap : Using ibs1130f0` on H20
        // nodes) and github.com/dstackai/dstack/issues/2712 (NCCL 2.26.2's `Bootstrap: Using`,
        // healthy, IB in use): both spellings name the bootstrap interface
        let old = parse_nccl_log(
            "H20-GPU-05:1789224:1789224 [0] NCCL INFO Bootstrap : Using ibs1130f0:10.6.128.137<0>\n",
        );
        assert_eq!(old.interfaces, ["ibs1130f0"]);
        assert!(old.ib_intended.is_some());
        let t = "computeinstance-e00vcar76672ttnkq6:698:698 [1] NCCL INFO Bootstrap: Using dstack-default-:192.168.0.5<0>\ncomputeinstance-e00vcar76672ttnkq6:697:739 [0] NCCL INFO Using network IB\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.interfaces, ["dstack-default-"]);
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.ib_intended, None);
    }

    #[test]
    fn nccl_tests_table_alone_is_read() {
        // github.com/NVIDIA/nccl-tests/issues/119 (healthy, ~96 GB/s, 'perfect' per the maintainer)
        let t = "   133169160      33292290     float     sum      -1   2666.0   49.95   95.74      0   2660.4   50.06   95.94      0\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 84.8558\n";
        assert!(t.lines().any(tests_line));
        let l = parse_nccl_log(t);
        assert_eq!(l.tests_rows, 1);
        assert_eq!(l.tests_busbw_max_gbs, Some(95.74));
        assert_eq!(l.tests_avg_busbw_gbs, Some(84.8558));
        // the 2020 format without root/#wrong (github.com/NVIDIA/nccl/issues/340)
        let old = "    67108864       8388608   float   1568.3   21.40   21.40  0e+00   1560.9   21.50   21.50  0e+00\n";
        assert_eq!(parse_nccl_log(old).tests_busbw_max_gbs, Some(21.40));
        // an NCCL INFO line is not a row
        assert!(!tests_line(
            "node1:10:10 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"
        ));
    }

    #[test]
    fn nccl_tests_head_before_any_row_is_read() {
        // github.com/skypilot-org/skypilot/pull/3217 (h53_nccltests_sky3217_gcp_a100_head,
        // healthy): the banner and the first devices of a run across two GCP A100 nodes, its
        // SkyPilot/Ray prefixes taken off by the paste unwrapper
        let t = "10.164.15.192,10.164.15.193\n# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid  21431 on nccl-ebd1-head-5vwmjam2-compute device  0 [0x00] NVIDIA A100-SXM4-40GB\n#  Rank  1 Group  0 Pid  21431 on nccl-ebd1-head-5vwmjam2-compute device  1 [0x00] NVIDIA A100-SXM4-40GB\n";
        assert!(t.lines().any(tests_line));
        let l = parse_nccl_log(t);
        assert_eq!(l.tests_rows, 0);
        // a comment that merely names nccl-tests' words is not one of its lines
        assert!(!tests_line("# nThread count is set by -t"));
        assert!(!tests_line("# Using devices"));
    }

    #[test]
    fn nccl_tests_wrong_results_are_read() {
        // github.com/NVIDIA/nccl-tests/issues/356: the footer quoted in an issue body
        let t = "However, when I run the same test with 4 GPUs:\n\n` ./hypercube_perf -b 8 -e 8g -f 2 -g 4 -d 0,1,2,3` \n\nI get the following error:\n\n` Out of bounds values : 56 FAILED` \n";
        assert!(t.lines().any(tests_line));
        assert_eq!(parse_nccl_log(t).tests_out_of_bounds, Some(56));
        // github.com/NVIDIA/nccl/issues/1706 (healthy): a row with 0 wrong, the footer OK
        let ok = "   134217728      33554432     float     sum      -1   5190.8   25.86   25.86      0   5186.6   25.88   25.88      0\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 8.62002 \n";
        let l = parse_nccl_log(ok);
        assert_eq!(l.tests_out_of_bounds, Some(0));
        assert_eq!(l.tests_wrong_elements, Some(0));
        // github.com/NVIDIA/nccl-tests/issues/287: in-place not checked (`N/A`)
        let na = "    33554432       8388608     float    none      -1    19.56  1715.44    0.00      0     0.78  43046.10    0.00    N/A\n";
        assert_eq!(parse_nccl_log(na).tests_wrong_elements, Some(0));
        // github.com/ROCm/rccl/pull/2075: rccl-tests' broadcast row (root 0)
        let rccl = "      262144         65536     float    none       0    43.00    6.10    6.10      0    42.86    6.12    6.12      0\n";
        assert_eq!(parse_nccl_log(rccl).tests_wrong_elements, Some(0));
        // github.com/NVIDIA/nccl-tests/issues/176 and /44: the older `error` column is no count
        let old = "        4096          1024     float     sum    93.73    0.04    0.09  1e-06    93.15    0.04    0.09  1e-06\n    67108864       8388608   float   1568.3   21.40   21.40  0e+00   1560.9   21.50   21.50  0e+00\n";
        let l = parse_nccl_log(old);
        assert_eq!(l.tests_rows, 2);
        assert_eq!(l.tests_wrong_elements, None);
        // a row as src/util.cu's `%6g` prints wrong counts (12, and a million as `1e+06`), and
        // CheckData's `rank=%d #wrong=%d`: built from the format strings, not a paste
        let bad = "     1048576        262144     float     sum      -1    152.7    6.87   10.30     12    157.6    6.65    9.98  1e+06\nrank=3 #wrong=7\n";
        let l = parse_nccl_log(bad);
        assert_eq!(l.tests_wrong_elements, Some(12 + 1_000_000 + 7));
        assert_eq!(l.tests_wrong_sizes, Some(vec![1048576]));
        // `%6g` rounds 1048576 to six digits: the count read is that figure
        assert_eq!(wrong_count("1.04858e+06"), Some(1_048_580));
        assert_eq!(wrong_count("N/A"), None);
        // prose naming the footer without its figures is not it
        assert!(!tests_line(
            "2-GPU tests consistently pass without any “Out of bounds values” failure."
        ));
    }

    #[test]
    fn ofi_plugin_on_libfabrics_tcp_provider_is_sockets() {
        // the Polaris team's note (rcc-uchicago/pedramh-profiling, polaris_nccl_debug_info.md):
        // aws-ofi-nccl 1.21.1 found no RDMA provider and took `tcp`; NCCL names the plugin
        let t = "x1:5:5 [0] NCCL INFO NET/OFI No eligible providers were found\n\
x1:5:5 [0] NCCL INFO NET/OFI Selected provider is tcp, fabric is 10.201.0.0/16 (found 2 nics)\n\
x1:5:5 [0] NCCL INFO NET/OFI Need to force simple protocol: GDR not supported\n\
x1:5:5 [0] NCCL INFO Using network AWS Libfabric\n\
x1:5:9 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 4 localRanks 4 localRank 0 MNNVL 0\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert_eq!(l.net_source.as_deref(), Some("ofi_provider tcp"));
        assert_eq!(l.multi_node, Some(true));
        // 1.x's wording with a stacked provider, the channels naming the plugin
        let o = "a:1:1 [0] NCCL INFO NET/OFI Selected Provider is tcp;ofi_rxm (found 1 nics)\n\
a:1:2 [0] NCCL INFO Channel 00/0 : 4[0] -> 0[0] [receive] via NET/AWS Libfabric/0\n";
        assert_eq!(parse_nccl_log(o).net.as_deref(), Some("Socket"));
        // neighbours: EFA and Slingshot's cxi are the RDMA fabric (the same note's working
        // run), and a tcp provider line does not turn NCCL's own IB into sockets
        for (h, net) in [
            (
                "a:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\na:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
                "AWS Libfabric",
            ),
            (
                "a:1:1 [0] NCCL INFO NET/OFI Selected Provider is cxi (found 2 nics)\na:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
                "AWS Libfabric",
            ),
            (
                "a:1:1 [0] NCCL INFO NET/OFI Selected provider is tcp, fabric is x (found 1 nics)\na:1:1 [0] NCCL INFO Using network IB\n",
                "IB",
            ),
        ] {
            let l = parse_nccl_log(h);
            assert_eq!(l.net.as_deref(), Some(net), "{h}");
            assert!(
                !l.net_source.as_deref().unwrap_or("").starts_with("ofi"),
                "{h}"
            );
        }
        assert!(ofi_over_sockets("sockets") && ofi_over_sockets("udp;ofi_rxd"));
        assert!(!ofi_over_sockets("verbs;ofi_rxm") && !ofi_over_sockets("psm3"));
    }

    #[test]
    fn job_shape_and_failures() {
        let t = "node1:10:10 [0] NCCL INFO NET/IB : No device found.\n\
node1:10:10 [0] NCCL INFO Failed to open libibverbs.so[.1]\n\
node1:10:10 [0] NCCL INFO Using network Socket\n\
node1:10:20 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n\
node1:10:20 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n\
node1:10:20 [0] NCCL INFO Channel 00/0 : 15[7] -> 0[0] [receive] via NET/Socket/0\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.nodes, Some(2));
        assert_eq!(l.local_ranks, Some(8));
        assert_eq!(l.multi_node, Some(true));
        assert!(l.ib_verbs_failed && l.ib_no_device);
        assert_eq!(l.local_shm_connections, 1);
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert!(l.unavailable.is_empty());
    }

    #[test]
    fn nccl_tests_device_table_names_the_hosts() {
        let log = "# Using devices\n#   Rank  0 Pid   7846 on ip-172-31-0-112 device  0 [0x00] Tesla V100-SXM2-32GB\n#   Rank  1 Pid   7998 on ip-172-31-13-129 device  0 [0x00] Tesla V100-SXM2-32GB\nip-172-31-0-112:7846:7846 [0] NCCL INFO NET/IB : No device found.\nip-172-31-0-112:7846:7846 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.112<0>\n";
        let l = parse_nccl_log(log);
        assert_eq!(l.hosts.len(), 2, "{:?}", l.hosts);
        assert_eq!(l.multi_node, Some(true));
        let one = parse_nccl_log(
            "#  Rank  0 Group  0 Pid 295203 on    node005 device  0 [0x18] NVIDIA H100 80GB HBM3\n#  Rank  1 Group  0 Pid 295203 on    node005 device  1 [0x6d] NVIDIA H100 80GB HBM3\nnode005:295203:295203 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>\n",
        );
        assert_eq!(one.hosts, vec!["node005".to_string()]);
    }

    #[test]
    fn a_whole_nccl_tests_table_on_one_host_is_a_single_node_job() {
        let table = "#  Rank  0 Group  0 Pid    11 on   box-a device  0 [0x01] NVIDIA L40S\n#  Rank  1 Group  0 Pid    11 on   box-a device  1 [0x02] NVIDIA L40S\n#  Rank  2 Group  0 Pid    11 on   box-a device  2 [0x03] NVIDIA L40S\n";
        let whole = format!(
            "{table}box-a:11:11 [0] NCCL INFO Bootstrap : Using eth0:10.1.1.1<0>\nbox-a:11:20 [0] NCCL INFO Using network Socket\n"
        );
        let l = parse_nccl_log(&whole);
        assert_eq!(l.multi_node, Some(false));
        // the table alone may have lost the rows of the next host
        assert_eq!(parse_nccl_log(table).multi_node, None);
        // ranks missing from the table (1 of 0..2): not every rank is listed
        let gap = whole.replace("Rank  1 Group", "Rank  5 Group");
        assert_eq!(parse_nccl_log(&gap).multi_node, None);
    }

    #[test]
    fn ib_completion_errors_mean_the_job_used_ib_across_nodes() {
        let t = "gx:9:40 [3] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.2.0.7<5000> with status=12 opcode=0 len=0 vendor err 129 (Recv)\ngx:9:40 [3] NCCL INFO transport/net.cc:1298 -> 6\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.net_source.as_deref(), Some("ib_completions"));
        assert_eq!(l.multi_node, Some(true));
        let async_event =
            parse_nccl_log("n1:1:2 [0] NCCL WARN NET/IB : Got async event : port error\n");
        assert_eq!(async_event.net.as_deref(), Some("IB"));
        // the same words outside a WARN line are not read
        let info = parse_nccl_log("n1:1:2 [0] NCCL INFO NET/IB : Got completion from peer x\n");
        assert_eq!(info.net, None);
    }

    #[test]
    fn single_node_bootstrap_socket_is_not_multi_node() {
        let t = "h:1:1 [0] NCCL INFO Using network Socket\n\
h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START\n\
h:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 2000 - Init START\n\
h:1:2 [0] NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/IPC\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.multi_node, Some(false));
        assert_eq!(l.network_used, Some(false));
        assert_eq!(l.p2p_connections, 1);
    }

    #[test]
    fn p2p_refused_only_where_nccl_says_so() {
        // Open-Sora-Plan#386 (the corpus's h108): four GPUs of one VM, every pair via SHM and
        // no line saying why: NCCL's default for GPUs under different host bridges
        let shm = "ins:3018453:3024011 [2] NCCL INFO Channel 01 : 2[1040] -> 0[1020] via SHM/direct/direct\n\
ins:3018454:3024009 [3] NCCL INFO Channel 01 : 3[1050] -> 1[1030] via SHM/direct/direct\n";
        let l = parse_nccl_log(shm);
        assert_eq!(l.local_shm_connections, 2);
        assert_eq!(l.p2p_denied, None);
        // `src/transport/p2p.cc` `p2pCanConnect` (turingaicloud/quickstart#6, the corpus's h48)
        let cuda = format!(
            "10-0-4-11:62453:62550 [1] NCCL INFO Could not enable P2P between dev 1(=1e000) and dev 0(=1d000)\n{shm}"
        );
        assert_eq!(
            parse_nccl_log(&cuda).p2p_denied.as_deref(),
            Some("Could not enable P2P between dev 1(=1e000) and dev 0(=1d000)")
        );
        // `src/graph/paths.cc` `ncclTopoCheckP2p`: NVML's verdict, INFO and the NVLink WARN
        for line in [
            "h:1:2 [0] NCCL INFO P2P is disabled between connected GPUs 0 and 1. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
            "h:1:2 [0] graph/paths.cc:312 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.",
            "h:1:2 [0] NCCL INFO peer query failed between dev 0(=1000) and dev 1(=2000)",
            "h:1:2 [0] NCCL INFO Legacy IPC not supported",
        ] {
            let l = parse_nccl_log(&format!("{line}\n{shm}"));
            assert!(l.p2p_denied.is_some(), "{line}");
        }
        // neighbours: the env echo and a P2P channel are no refusal
        for line in [
            "h:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.",
            "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
            "h:1:2 [0] NCCL INFO NCCL_IGNORE_DISABLED_P2P set by environment to 1.",
        ] {
            assert_eq!(
                parse_nccl_log(&format!("{line}\n")).p2p_denied,
                None,
                "{line}"
            );
        }
    }

    #[test]
    fn collapsed_quote_lines_are_split() {
        let t = "> > [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0. [0] NCCL INFO NET/IB : No device found. [0] NCCL INFO Using network Socket\n";
        let l = parse_nccl_log(t);
        assert!(l.ib_no_device);
        assert!(l.ib_wanted);
        assert_eq!(l.env_overrides["NCCL_IB_DISABLE"], "0");
        assert_eq!(l.net.as_deref(), Some("Socket"));
        let m = parse_nccl_log(
            "u:1:1 [0] NCCL INFO Using network Socket\nu:2:2 [1] NCCL INFO Using network IB\n",
        );
        assert_eq!(m.multi_node, Some(true));
    }

    use crate::test_corpus as corpus;

    /// NCCL's per-HCA GPUDirect RDMA verdict (`src/graph/topo.cc` 2.13.4+, `net_ib.cc`'s
    /// `(no module)` in 2.5–2.12), and the lines that must not be read as one.
    #[test]
    fn gdr_verdict_per_hca_is_read_from_the_ib_transport_only() {
        // nccl#1676: four verdicts of two ranks, three HCAs, no job shape
        let l = parse_nccl_log(&corpus(
            "h116_nccl_nccl1676_dgx2501_gdr_disabled_peermem.log",
        ));
        assert_eq!(l.gdr_disabled_hcas, ["mlx5_0", "mlx5_1", "mlx5_2"]);
        assert!(l.gdr_enabled_hcas.is_empty() && !l.gdr_no_module);
        assert_eq!(l.multi_node, None);
        // nccl#1537: RoCE HCAs, 16 ranks seen from one host
        let l = parse_nccl_log(&corpus("h116_nccl_nccl1537_roce_gdr_disabled_16ranks.log"));
        assert_eq!(l.gdr_disabled_hcas, ["mlx5_0", "mlx5_1"]);
        assert_eq!(l.net.as_deref(), Some("IB"));
        // nccl#899: 2.5–2.12's `(no module)` and channels over NET/IB without GDRDMA
        let l = parse_nccl_log(&corpus("h116_nccl_nccl899_ib_gdr_no_module_two_hosts.log"));
        assert_eq!(l.gdr_disabled_hcas, ["mlx5_1", "mlx5_2", "mlx5_3"]);
        assert!(l.gdr_no_module);
        assert_eq!(l.gdr_connections, 0);
        assert_eq!(l.multi_node, Some(true));
        // NCCL_NET_GDR_LEVEL's per-GPU distance verdicts (paths.cc) are not an HCA's
        let l = parse_nccl_log(&corpus("h116_nccl_dle383_gdr_level_phb_distance.log"));
        assert!(l.gdr_disabled_hcas.is_empty() && l.gdr_enabled_hcas.is_empty());
        assert_eq!(l.env_overrides["NCCL_NET_GDR_LEVEL"], "PHB");
        // the socket transport says Disabled by nature; aws-ofi-nccl's own words are its own
        let l = parse_nccl_log(&corpus("h200_nccl_1rank_none.log"));
        assert!(l.gdr_disabled_hcas.is_empty());
        let l = parse_nccl_log(&corpus("h116_nccl_nccltests245_ofi_gdr_disabled_a10g.log"));
        assert!(l.gdr_disabled_hcas.is_empty() && l.gdr_enabled_hcas.is_empty());
        let l = parse_nccl_log(
            "h:1:2 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n\
             h:1:2 [0] NCCL INFO NET/AWS Libfabric : GPU Direct RDMA Disabled for HCA 0 'rdmap16s27'\n\
             h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA (nvidia-peermem) enable for HCA 0 'mlx5_0\n",
        );
        assert!(l.gdr_disabled_hcas.is_empty() && l.gdr_enabled_hcas.is_empty());
        // the SHARP plugin's net name, an enabled HCA and channels via GDRDMA
        let l = parse_nccl_log(
            "h:1:2 [0] NCCL INFO NET/IBext_v8 : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n\
             h:1:2 [0] NCCL INFO NET/IBext_v8 : GPU Direct RDMA Disabled for HCA 1 'mlx5_bond_0'\n\
             h:1:2 [0] NCCL INFO Channel 00/0 : 9[1] -> 0[0] [receive] via NET/IBext_v8/0/GDRDMA\n\
             h:1:2 [0] NCCL INFO Channel 01/0 : 9[1] -> 0[0] [receive] via NET/IBext_v8/0\n",
        );
        assert_eq!(l.gdr_enabled_hcas, ["mlx5_0"]);
        assert_eq!(l.gdr_disabled_hcas, ["mlx5_bond_0"]);
        assert_eq!(l.gdr_connections, 1);
        // a log without the verdict keeps none, and says nothing of it in JSON
        let l = parse_nccl_log(&corpus("h116_nccl_nccl988_ibext_sharp_no_peermem.log"));
        assert!(l.gdr_disabled_hcas.is_empty() && l.gdr_connections == 0);
        let v = serde_json::to_value(&l).unwrap();
        assert!(v.get("gdr_disabled_hcas").is_none() && v.get("gdr_no_module").is_none());
    }

    #[test]
    fn words_and_commands_around_the_log_give_the_job_shape() {
        // the poster's sentence above a one-line quote
        let l = parse_nccl_log(&corpus("h3_nccl_areal_socket_instead_of_ib.txt"));
        assert_eq!(l.multi_node, Some(true));
        assert!(
            l.multi_node_from.as_deref().unwrap().contains("Cross-node"),
            "{l:?}"
        );
        assert_eq!(l.net.as_deref(), Some("Socket"));
        // a launch command in the paste
        let t = "torchrun --nnodes=2 --nproc_per_node=8 train.py
h:1:1 [0] NCCL INFO Using network Socket
";
        let l = parse_nccl_log(t);
        assert_eq!(l.multi_node, Some(true));
        assert_eq!(
            l.multi_node_from.as_deref(),
            Some("the command line runs 2 nodes")
        );
        for words in [
            "two machines are slower than one",
            "#SBATCH --nodes=4",
            "多机训练",
        ] {
            let l = parse_nccl_log(&format!(
                "{words}\nh:1:1 [0] NCCL INFO Using network Socket\n"
            ));
            assert_eq!(l.multi_node, Some(true), "{words}");
        }
        // words never override what NCCL's own lines settle
        let one = parse_nccl_log(
            "2 nodes were slower than this one\nh:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0\n",
        );
        assert_eq!(one.multi_node, Some(false));
        assert_eq!(one.multi_node_from, None);
        // a single node and its own words: nothing about nodes
        let quiet =
            parse_nccl_log("the single node run hangs\nh:1:1 [0] NCCL INFO Using network Socket\n");
        assert_eq!(quiet.multi_node, None);
    }

    #[test]
    fn ipoib_names() {
        for n in ["ib0", "ib1.8001", "ibp12s0", "ibs3", "ibP1p12s0", "IB0"] {
            assert!(ipoib_name(n), "{n}");
        }
        for n in [
            "ibm0",
            "ib",
            "ibp",
            "eth0",
            "enp36s0f1",
            "ens5",
            "bond0",
            "lo",
        ] {
            assert!(!ipoib_name(n), "{n}");
        }
    }

    #[test]
    fn the_site_meant_to_use_rdma() {
        // sockets on ib0 with libibverbs missing (sgl-project/sglang#1427): the host has IB
        let l = parse_nccl_log(&corpus("h5_nccl_sglang_no_verbs_socket_on_ib0.log"));
        assert_eq!(l.multi_node, None);
        let why = l.ib_intended.as_deref().expect("ipoib");
        assert!(why.contains("IPoIB interface ib0"), "{why}");
        // a device NCCL listed but could not open (the RoCE bond in a container)
        let l = parse_nccl_log(&corpus("h5_nccl_docker_ib_open_device_failed.log"));
        let why = l.ib_intended.as_deref().expect("unopened device");
        assert!(why.contains("mlx5_bond_0"), "{why}");
        // RoCE settings echoed (NCCL_IB_GID_INDEX=3) on a two-node A800 job
        let l = parse_nccl_log(&corpus("nccl_two_node_roce_a800.log"));
        assert!(
            l.ib_intended
                .as_deref()
                .is_some_and(|w| w.contains("NCCL_IB_")),
            "{l:?}"
        );
        // NCCL_IB_DISABLE=1 is the opposite of an intent; a socket interface name is named
        let t = "h:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\nh:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n";
        assert_eq!(parse_nccl_log(t).ib_intended, None);
        let t = "h:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib0\nh:1:1 [0] NCCL INFO Using network Socket\n";
        assert!(parse_nccl_log(t).ib_intended.is_some());
        // an HCA named elsewhere in the paste (not the mlx5_core driver)
        let t = "$ ibv_devinfo\nhca_id: mlx5_0\nh:1:1 [0] NCCL INFO Failed to open libibverbs.so[.1]\nh:1:1 [0] NCCL INFO Using network Socket\n";
        assert!(
            parse_nccl_log(t)
                .ib_intended
                .is_some_and(|w| w.contains("mlx5_0"))
        );
        let t = "mlx5_core 0000:3b:00.0: firmware version 16.35\nh:1:1 [0] NCCL INFO Using network Socket\n";
        assert_eq!(parse_nccl_log(t).ib_intended, None);
    }

    #[test]
    fn no_intent_where_the_text_shows_none() {
        // a loaded-but-unusable net plugin and no IB device: healthy single-host public logs
        for name in [
            "nccl_single_rank_socket_gcp.log",
            "h5_nccl_deepspeed_docker_one_host_no_ib.log",
            "nccl_single_node_l20_no_verbs.log",
            "h5_nccl_accelerate_single_node_socket.log",
        ] {
            let l = parse_nccl_log(&corpus(name));
            assert_eq!(l.ib_intended, None, "{name}");
        }
        // libibverbs missing on one host of a two-node job whose excerpt shows one host
        // (facebookresearch/detectron2#4730): neither intent nor nodes; the log says what to add
        let l = parse_nccl_log(&corpus("h3_nccl_detectron2_two_node_no_verbs.log"));
        assert_eq!(l.ib_intended, None);
        assert_eq!(l.multi_node, None);
        assert!(
            l.unavailable.contains_key("multi_node"),
            "{:?}",
            l.unavailable
        );
        // a whole log of one host without rank counts: it names what to add
        let l = parse_nccl_log(
            "h:1:1 [0] NCCL INFO Using network Socket\nh:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 8 cudaDev 0 busId 1000 - Init COMPLETE\n",
        );
        assert_eq!(l.multi_node, None);
        assert!(
            l.unavailable["multi_node"].contains("--nnodes"),
            "{:?}",
            l.unavailable
        );
    }

    #[test]
    fn launcher_wrappers_are_not_hosts() {
        // torchrun --tee, mpirun stderr, srun -l, Ray: one host each time
        for t in [
            "[default0]:n1:10:10 [0] NCCL INFO Using network Socket\n[default1]:n1:11:11 [1] NCCL INFO Using network Socket\n",
            "[1,0]<stderr>:n1:10:10 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n[1,1]<stderr>:n1:11:11 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n",
            "0: n1:10:10 [0] NCCL INFO Using network Socket\n1: n1:11:11 [1] NCCL INFO Using network Socket\n",
            "(RayWorkerWrapper pid=2981, ip=169.254.28.198) n1:2981:2981 [0] NCCL INFO Using network IB\n",
        ] {
            assert_eq!(parse_nccl_log(t).hosts, vec!["n1".to_string()], "{t}");
        }
        // NCCL 2.27+ names its network plugin per communicator
        let l = parse_nccl_log(&corpus("h5_nccl_k8s_pods_ib_two_hosts.log"));
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.hosts.len(), 2);
        let l = parse_nccl_log(
            "h:1:1 [0] NCCL INFO Failed to initialize NET plugin IB\nh:1:1 [0] NCCL INFO Assigned NET plugin Socket to comm\n",
        );
        assert!(l.ib_no_device);
        assert_eq!(l.net.as_deref(), Some("Socket"));
    }

    #[test]
    fn a_rank_numbered_past_its_hosts_gpus_is_another_nodes() {
        let t = "h:9:9 [2] NCCL INFO comm 0xa rank 10 nranks 16 cudaDev 2 nvmlDev 2 busId a2000 commId 0x1 - Init START\n";
        let l = parse_nccl_log(t);
        assert_eq!(l.multi_node, Some(true));
        assert_eq!(
            l.multi_node_from.as_deref(),
            Some("rank 10 runs on local device 2")
        );
        // one GPU per process (device 0 everywhere) says nothing; rank == device is one node
        for t in [
            "h:9:9 [0] NCCL INFO comm 0xa rank 5 nranks 8 cudaDev 0 busId a2000 - Init START\n",
            "h:9:9 [3] NCCL INFO comm 0xa rank 3 nranks 8 cudaDev 3 busId a2000 - Init START\n",
        ] {
            assert_eq!(parse_nccl_log(t).multi_node_from, None, "{t}");
        }
    }

    /// Real logs cut in the middle of a line (not committed cut copies: the cut is made
    /// here): a verdict that rests on what is absent is withheld, a whole log is judged.
    #[test]
    fn corpus_logs_cut_mid_line_do_not_conclude_from_absence() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let mut judged_whole = 0;
        for e in std::fs::read_dir(&dir).expect("corpus dir") {
            let path = e.expect("entry").path();
            let label =
                std::fs::read_to_string(path.with_extension("label.yaml")).unwrap_or_default();
            if !label.contains("input: nccl-log") || path.to_string_lossy().ends_with(".label.yaml")
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("artifact");
            let whole = parse_nccl_log(&text);
            if whole.multi_node == Some(false) {
                judged_whole += 1;
            }
            // cut every NCCL line in its middle
            let mut at = 0;
            for line in text.split_inclusive('\n') {
                let mid = at + line.len() / 2;
                at += line.len();
                if !line.contains("NCCL INFO") || !text.is_char_boundary(mid) || line.len() < 40 {
                    continue;
                }
                let cut = &text[..mid];
                let l = parse_nccl_log(cut);
                let settled = cut.contains("nNodes 1") || l.nranks == Some(1);
                if l.truncated.is_some() && !settled {
                    assert_ne!(
                        l.multi_node,
                        Some(false),
                        "{}: cut at {mid}",
                        path.display()
                    );
                    assert_ne!(
                        l.network_used,
                        Some(false),
                        "{}: cut at {mid}",
                        path.display()
                    );
                }
            }
        }
        assert!(
            judged_whole > 0,
            "some whole single-node corpus log is judged"
        );
    }

    #[test]
    fn a_cut_last_line_is_told_from_a_whole_one() {
        let single = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nh:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n";
        let whole = parse_nccl_log(single);
        assert_eq!(whole.multi_node, Some(false));
        assert_eq!(whole.truncated, None);
        // no final newline but a whole line: not cut
        assert_eq!(parse_nccl_log(single.trim_end()).truncated, None);
        for tail in [
            "h:1:2 [1] NCCL IN",
            "h:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 0[0] v",
            "h:1:2 [1]",
            "h:1:",
        ] {
            let l = parse_nccl_log(&format!("{single}{tail}"));
            assert!(l.truncated.is_some(), "{tail}");
            assert_eq!(l.multi_node, None, "{tail}");
            assert!(
                l.unavailable["multi_node"].starts_with("input ends early"),
                "{tail}"
            );
        }
    }

    #[test]
    fn a_log_cut_before_channels_says_so() {
        let t = "h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nNCCL version 2.18.1+cuda12.1\n";
        let l = parse_nccl_log(t);
        assert!(l.unavailable["network_used"].starts_with("input ends early"));
    }

    #[test]
    fn roce_two_node_log_uses_ib_on_channels() {
        let l = parse("nccl/ib_roce_2node.log");
        assert_eq!(l.nccl_version.as_deref(), Some("2.5.7+cuda10.0"));
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.net_source.as_deref(), Some("channels"));
        assert_eq!(l.network_used, Some(true));
        assert_eq!(l.transports_used, ["NET/IB", "P2P/IPC", "SHM"]);
        assert_eq!(l.env_overrides["NCCL_IB_DISABLE"], "0");
        assert_eq!(l.env_overrides["NCCL_IB_GID_INDEX"], "3");
        assert_eq!(l.ib_devices, ["mlx5_0:1/RoCE"]);
        // `Channel 00/02 :    0   1 ...` ring listings are not connections.
        assert_eq!(l.connections_seen, 5);
        insta::assert_json_snapshot!("nccl_ib_roce_2node", l);
    }

    #[test]
    fn socket_fallback_multinode_uses_network_over_sockets() {
        let l = parse("nccl/socket_fallback_multinode.log");
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert_eq!(l.network_used, Some(true));
        assert!(l.transports_used.contains(&"P2P/IPC".to_string()));
        assert_eq!(l.net_plugin.as_deref(), Some("IBext"));
        assert!(l.interfaces.contains(&"ibp12s0".to_string()));
        insta::assert_json_snapshot!("nccl_socket_fallback_multinode", l);
    }

    #[test]
    fn aws_log_without_ib_devices() {
        let l = parse("nccl/no_ib_device_multinode.log");
        assert!(l.ib_no_device);
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert_eq!(l.network_used, Some(true));
        assert!(l.hosts.len() > 3);
        insta::assert_json_snapshot!("nccl_no_ib_device_multinode", l);
    }

    #[test]
    fn single_node_p2p_does_not_use_the_network() {
        let l = parse("nccl/single_node_p2p.log");
        assert_eq!(l.network_used, Some(false));
        assert_eq!(l.transports_used, ["P2P/direct pointer"]);
        assert_eq!(l.net, None);
        insta::assert_json_snapshot!("nccl_single_node_p2p", l);
    }

    #[test]
    fn init_lines_alone_leave_network_use_open() {
        let l = parse("nccl/socket_and_ib_init.log");
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.net_source.as_deref(), Some("init"));
        assert_eq!(l.network_used, None);
        assert_eq!(l.env_overrides["NCCL_IB_DISABLE"], "0");
        insta::assert_json_snapshot!("nccl_socket_and_ib_init", l);
    }

    #[test]
    fn truncated_ibext_log() {
        let l = parse("nccl/ibext_truncated.log");
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.network_used, Some(true));
        assert_eq!(l.nranks, Some(64));
        assert!(l.transports_used.contains(&"NET/IBext_v8".to_string()));
        assert_eq!(l.env_overrides["NCCL_SOCKET_IFNAME"], "bond0");
        insta::assert_json_snapshot!("nccl_ibext_truncated", l);
    }

    #[test]
    fn socket_init_line_does_not_override_ib_channels() {
        let text = "\
host1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
host1:1:1 [0] NCCL INFO Using network Socket
host1:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
host1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
";
        let l = parse_nccl_log(text);
        assert_eq!(l.net.as_deref(), Some("IB"));
        assert_eq!(l.network_used, Some(true));
        assert!(l.transports[0].gdr);
        assert_eq!(l.transports[1].transport, "P2P/CUMEM");
    }

    #[test]
    fn single_node_socket_init_with_p2p_channels_is_not_network() {
        let text = "\
n:1:1 [0] NCCL INFO NET/IB : No device found.
n:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
n:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC
n:1:2 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct
n:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE
";
        let l = parse_nccl_log(text);
        assert_eq!(l.network_used, Some(false));
        assert_eq!(l.net.as_deref(), Some("Socket"));
        assert_eq!(l.net_source.as_deref(), Some("init"));
        assert_eq!(l.transports_used, ["P2P/IPC", "SHM"]);
        assert_eq!(l.ranks_seen, 1);
    }

    #[test]
    fn every_truncation_parses() {
        for name in [
            "nccl/ib_roce_2node.log",
            "nccl/socket_fallback_multinode.log",
        ] {
            let text = fixture(name);
            for p in prefixes(&text, 53) {
                let l = parse_nccl_log(p);
                assert!(l.transports.len() <= crate::evidence::MAX_ITEMS);
            }
        }
    }

    /// `split_line` as it was written with `str` searches (before the memchr ones).
    /// The lines as [`nccl_lines`] read them before its tags came from one search of the text:
    /// two searches of every line.
    fn nccl_lines_reference(text: &str) -> impl Iterator<Item = (&str, Option<usize>)> {
        let mut lines = crate::evidence::content_lines(text);
        let mut pending: Option<&str> = None;
        let mut pieces = 0usize;
        std::iter::from_fn(move || {
            let rest = match pending.take() {
                Some(r) => r,
                None => lines.next()?,
            };
            let can_split = pieces < 10_000_000;
            pieces += 1;
            let first = tag_from(rest, 0);
            let next = first.and_then(|f| tag_from(rest, f + 10));
            match next {
                Some(i) if can_split => {
                    // cut at the start of the ` [0] ` (or `host:pid:tid [0] `) before it
                    let head = &rest[..i];
                    let cut = head
                        .trim_end()
                        .rfind(' ')
                        .map(|j| {
                            let pre = &head[..j];
                            // include a `host:pid:tid` token before `[dev]`
                            match pre.trim_end().rfind(' ') {
                                Some(k) if pre[k + 1..].matches(':').count() >= 2 => k + 1,
                                _ => j + 1,
                            }
                        })
                        .unwrap_or(i);
                    if cut <= first.unwrap_or(0) || cut >= rest.len() {
                        return Some((rest, first));
                    }
                    pending = Some(&rest[cut..]);
                    // the first tag, when the piece holds all of it
                    Some((&rest[..cut], first.filter(|f| f + 10 <= cut)))
                }
                _ => Some((rest, first)),
            }
        })
    }

    fn split_line_reference(line: &str) -> Option<(Option<&str>, &str, bool)> {
        let (pos, warn) = match line.find("NCCL INFO ") {
            Some(i) => (i, false),
            None => (line.find("NCCL WARN ")?, true),
        };
        let msg = &line[pos + 10..];
        let prefix = line[..pos].trim_end();
        let prefix = match prefix.rfind(" [") {
            Some(i) if prefix.ends_with(']') => &prefix[..i],
            _ if prefix.starts_with('[') && prefix.ends_with(']') => "",
            _ => prefix,
        };
        let prefix = prefix
            .rsplit_once("<stdout>:")
            .or_else(|| prefix.rsplit_once("<stderr>:"))
            .map(|p| p.1)
            .unwrap_or(prefix);
        let host = {
            let mut parts = prefix.rsplitn(3, ':');
            let (tid, pid, rest) = (parts.next(), parts.next(), parts.next());
            match (tid, pid, rest) {
                (Some(t), Some(p), Some(h))
                    if t.chars().all(|c| c.is_ascii_digit())
                        && p.chars().all(|c| c.is_ascii_digit()) =>
                {
                    h.rsplit([' ', ']'])
                        .next()
                        .map(|h| h.trim_start_matches(':'))
                        .filter(|h| !h.is_empty())
                }
                _ => None,
            }
        };
        Some((host, msg, warn))
    }

    /// Each piece's gate as the parse reads it ([`super::scan::Literals`]).
    fn gates_read(text: &str) -> Vec<bool> {
        nccl_lines(text)
            .filter_map(|(line, first)| split_line_at(line, first))
            .map(|(_, msg, _)| GATES.is_match(msg))
            .collect()
    }

    /// Each piece's gate as a regex of [`GATE_WORDS`] says it, of the pieces as each line's
    /// own searches cut them.
    fn gates_alone(text: &str) -> Vec<bool> {
        static WORDS: LazyLock<Regex> = LazyLock::new(|| super::super::scan::phrases(&GATE_WORDS));
        nccl_lines_reference(text)
            .filter_map(|(line, _)| split_line(line))
            .map(|(_, msg, _)| WORDS.is_match(msg))
            .collect()
    }

    /// The pieces, their tags and their gates, found by searches of the whole text, are those
    /// searches of each line find: on every fixture and corpus text.
    #[test]
    fn whole_text_searches_find_what_line_searches_find() {
        let mut n = 0;
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            n += 1;
            assert_eq!(
                nccl_lines(&t).collect::<Vec<_>>(),
                nccl_lines_reference(&t).collect::<Vec<_>>(),
                "{}",
                p.display()
            );
            assert_eq!(gates_read(&t), gates_alone(&t), "{}", p.display());
        }
        assert!(n > 1000, "{n} texts");
    }

    /// A gate word cut by the end of a collapsed line's piece does not count in that piece
    /// (`Init COMPLETE` glued to the next `host:pid:tid` is cut after `Init `), and a word
    /// wholly in the piece after it still does.
    #[test]
    fn a_gate_word_across_a_piece_end_is_not_the_pieces() {
        let t = "h:1:2 [0] NCCL INFO x Init COMPLETEh:1:2 [0] NCCL INFO nNodes 2\n";
        assert_eq!(
            nccl_lines(t).map(|(l, _)| l).collect::<Vec<_>>(),
            [
                "h:1:2 [0] NCCL INFO x Init ",
                "COMPLETEh:1:2 [0] NCCL INFO nNodes 2"
            ]
        );
        assert_eq!(gates_read(t), gates_alone(t));
        assert_eq!(gates_read(t), vec![false, true]);
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_nccl_log(&s);
        }

        #[test]
        fn split_line_as_it_read_with_string_searches(
            l in "(\\[1,0\\]<stdout>:|<stderr>:|\\[[0-9a-z]{0,3}\\]| |:|[0-9]|h|é|\\(|NCCL INFO |NCCL WARN |NCCL |INFO |x){0,16}"
        ) {
            prop_assert_eq!(split_line(&l), split_line_reference(&l));
            // as nccl_lines hands the pieces of a line over
            for (piece, first) in nccl_lines(&l) {
                prop_assert_eq!(split_line_at(piece, first), split_line_reference(piece));
            }
        }

        #[test]
        fn whole_text_tags_and_gates_are_each_lines(lines in proptest::collection::vec(
            "(\\[1,0\\]<stdout>:|# |\\[[0-9a-z]{0,3}\\]| |:|[0-9]|h|é|NCCL INFO |NCCL WARN |NCCL |INFO | via |nNodes |Init COMPLETE|cudaDriverVersion |x|\r){0,16}",
            0..12)) {
            let t = lines.join("\n");
            prop_assert_eq!(
                nccl_lines(&t).collect::<Vec<_>>(),
                nccl_lines_reference(&t).collect::<Vec<_>>()
            );
            prop_assert_eq!(gates_read(&t), gates_alone(&t));
        }

        #[test]
        fn garbled_nccl_lines_never_panic(lines in proptest::collection::vec(
            prop_oneof![
                "[a-z0-9:\\[\\] <>]{0,20} NCCL INFO Channel [0-9]{1,12}/[0-9] : [0-9]{1,12}\\[[0-9a-f]{0,5}\\] -> [0-9]{1,12} via \\PC{0,20}",
                "[a-z0-9:]{0,20} NCCL INFO \\PC{0,60}",
                "NCCL_[A-Z]{1,8} set by environment to \\PC{0,10}",
                "\\PC{0,40}",
            ], 0..40)) {
            let l = parse_nccl_log(&lines.join("\n"));
            prop_assert!(l.transports.len() <= 40);
        }

        #[test]
        fn many_connections_are_capped(n in 1000usize..3000) {
            let line = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n";
            let l = parse_nccl_log(&line.repeat(n));
            prop_assert!(l.transports.len() <= crate::evidence::MAX_ITEMS);
            prop_assert_eq!(l.connections_seen, n as u64);
        }
    }
}
