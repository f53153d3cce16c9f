//! Kernel logs (`dmesg`, `dmesg -T`, `journalctl -k`, raw `/dev/kmsg` records): NVIDIA Xid
//! events, a GPU that fell off the bus, `RmInitAdapter` failures, and PCIe AER errors.
//!
//! Xid lines look like `NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.`
//! (older drivers omit `PCI:`; the driver prints the address as `PCI:%04x:%02x:%02x`, the
//! format open-gpu-kernel-modules' `nvErrorLog` uses, and a poster who hides it leaves `...`
//! or `…` in its place, which is read as an address not shown); the line prefix may be a dmesg `[  123.456]`, a syslog or
//! ISO date with host and `kernel:`, or a kmsg `6,1234,5678,-;` record header.
//!
//! Which GPU fell off the bus or failed to initialise is read from the driver's own wording
//! (open-gpu-kernel-modules 535-595, `kernel-open/nvidia/nv.c` and `src/nvidia/arch/nvalloc/
//! unix/src/osinit.c`): `NV_DEV_PRINTF` prefixes a device's message with `NVRM: GPU
//! %04x:%02x:%02x.%x: ` (`... RmInitAdapter failed! (0x%x:0x%x:%d)`, `... rm_init_adapter
//! failed, device minor number %d`, `... GPU has fallen off the bus.`); the probe routine's
//! report spans three lines, the address on the first (`NVRM: The NVIDIA GPU
//! %04x:%02x:%02x.%x` / `NVRM: (PCI ID: %04x:%04x) installed in this system has` / `NVRM:
//! fallen off the bus and is not responding to commands.`, or joined on one line by a log
//! shipper); drivers before the open modules printed `NVRM: GPU at %04x:%02x:%02x.%x has
//! fallen off the bus.`; Xid 79's own line names it as `PCI:%04x:%02x:%02x`. A line that
//! names no address (an old `RmInitAdapter failed!` without its device prefix) still sets
//! the flag.
//!
//! The module's load report of devices another driver holds (`nvidia_init_module` in
//! `kernel-open/nvidia/nv.c`, read at 30e15d79; the closed modules print the same): `NVRM: The
//! NVIDIA probe routine was not called for %d device(s).` when fewer NVIDIA display devices
//! reached its probe routine than the bus has (its next lines name nouveau, rivafb, nvidiafb
//! or rivatv as the usual owner), then `NVRM: No NVIDIA graphics adapter probed!` when none
//! did and the load fails. `The NVIDIA probe routine failed for %d device(s).` (the probe ran
//! and failed) is another report and is not read as either.
//!
//! The module's refusal of a user-space client of another version (`RmCheckVersionString`'s
//! error, open-gpu-kernel-modules `src/nvidia/arch/nvalloc/unix/src/osapi.c`, read at
//! 515.43.04 `1739a20ef` and 595.45.04 `df1c9a3de`): every NVIDIA library opening
//! `/dev/nvidiactl` (NVML, CUDA, the GL driver) sends its own version string; when it differs
//! from the module's `NV_VERSION_STRING` the ioctl fails with `NV_ERR_GENERIC` (NVML's
//! `Driver/library version mismatch`) and the module prints, before 575 `NVRM: API mismatch:
//! the client has the version %s, but` / `NVRM: this kernel module has the version %s.
//! Please` / two more lines, and from 575 on `NVRM: API mismatch: the client '%s' (pid %u)` /
//! `NVRM: has the version %s, but this kernel module has` / `NVRM: the version %s.  Please
//! make sure that this` / two more lines (a log shipper may join them with `#012`). The module
//! names its own version when it loads (`NVRM: loading NVIDIA UNIX x86_64 Kernel Module
//! %s`, `... Open Kernel Module for x86_64  %s`): a load of the client's version after the
//! refusal is the mismatch resolved (a reboot or a module reload), read as no mismatch.
//!
//! The Kubernetes device plugin reports the same Xid events from NVML (`EventTypeXidCriticalError`)
//! in its own log, for the Xids it does not skip as application errors (NVIDIA/k8s-device-plugin,
//! read at `1b826ac`): `XidCriticalError: Xid=%d on Device=%s, the device will go unhealthy.`
//! and, for an event NVML does not tie to one GPU, `XidCriticalError: Xid=%d, All devices will
//! go unhealthy.` (`log.Printf` in `nvidia.go` v0.6.0-v0.10.0 and `internal/rm/health.go`
//! v0.12.0), then `XidCriticalError: Xid=%d on Device=%s; marking device as unhealthy.` (klog
//! in `internal/rm/health.go` from v0.14.0). Such a line is read as that Xid on the device it
//! names (a GPU or MIG UUID, in `pci`'s place), or on `all devices`.
//!
//! The resource manager's report of an allocation that failed for lack of memory
//! (NVIDIA/open-gpu-kernel-modules `src/nvidia/src/libraries/utils/nvassert.c`, read at
//! `1739a20`: `nvCheckOkFailed`, `nvCheckOkFailedNoLog`, `nvAssertOkFailed` and
//! `nvAssertOkFailedNoLog` print `Check failed: %s (0x%08X) returned from %s @ %s:%d` or
//! `Assertion failed: …` through `NV_PRINTF`, which prefixes `NVRM: ` and the calling
//! function; `nvAssertStatusToString` gives the status as its `nvstatuscodes.h` string then
//! `[NAME]`, so `NV_ERR_NO_MEMORY` (0x51) reads `Out of memory [NV_ERR_NO_MEMORY]`): each such
//! line is counted and the first kept. The `returned from` part may sit on the next line where
//! a poster or a log shipper wrapped the message; the status is on the line with `NVRM:`.

use super::scan::{find_lit, has};
use regex::Regex;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// What an Xid code means, from NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) and
/// its dynamic page retirement notes. Codes the catalog marks as application errors say so:
/// they are rarely a hardware fault.
pub fn xid_meaning(code: u32) -> Option<&'static str> {
    Some(match code {
        8 => "GPU stopped processing (channel idle timeout)",
        13 => {
            "graphics engine exception (usually an application error, e.g. an out-of-range access)"
        }
        31 => "GPU memory page fault (MMU fault; usually an application error)",
        32 => "invalid or corrupted push buffer stream",
        43 => {
            "GPU stopped processing (reset channel verification error; usually an application error)"
        }
        45 => "preemptive cleanup after a previous error (robust channel preemptive removal)",
        48 => "double-bit ECC error (DBE): an uncorrectable memory error",
        61 => "internal micro-controller breakpoint or warning",
        62 => "internal micro-controller halt",
        63 => "ECC page retirement or row remapping recorded (takes effect after a GPU reset)",
        64 => "ECC page retirement or row remapping recording failed",
        69 => "graphics engine class error",
        74 => "NVLink error",
        79 => "GPU has fallen off the bus (no longer reachable over PCIe)",
        92 => "high single-bit ECC error rate",
        94 => "contained ECC error (affected applications stopped; the GPU keeps running)",
        95 => "uncontained ECC error (all applications on the GPU affected; reset required)",
        119 => "GSP RPC timeout (the GPU System Processor did not answer)",
        109 => "context switch timeout (the GPU stopped switching between jobs' contexts)",
        120 => "GSP error",
        140 => "unrecovered ECC error",
        144..=150 => "NVLink error (Hopper/Blackwell NVLink fabric)",
        154 => "GPU recovery action changed (a GPU reset or node reboot is required)",
        _ => return None,
    })
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Xid {
    pub code: u32,
    pub pci: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Aer {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci: Option<String>,
    /// `corrected`, `uncorrected` or `fatal`.
    pub severity: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct KernelLog {
    pub xids: Vec<Xid>,
    /// Every Xid line seen, including those beyond the kept [`super::MAX_ITEMS`].
    pub xid_count: u64,
    pub xid_codes: Vec<u32>,
    pub fallen_off_bus: bool,
    /// The PCI addresses of the GPUs the log says fell off the bus, as the driver printed
    /// them (`0000:01:00.0`, or Xid 79's `0000:3b:00`), first seen first.
    pub fallen_off_gpus: Vec<String>,
    pub rm_init_adapter_failed: bool,
    /// The PCI addresses of the GPUs whose `RmInitAdapter` (or `rm_init_adapter`) failed.
    pub rm_init_failed_gpus: Vec<String>,
    /// The GPU System Processor stopped answering (`GSP Timeout`, heartbeat timed out, RPC
    /// timeout): the state Xid 119 reports, logged before or without the Xid line.
    pub gsp_timeout: bool,
    /// A GPU is lost or cannot be reached: `nvidia-smi` (or NVML) says so (`GPU is lost`,
    /// `Unable to determine the device handle for GPU ...`), or the kernel's PCIe error
    /// recovery gave an NVIDIA GPU up after an uncorrectable fatal error (see
    /// [`KernelLog::aer_unrecovered_gpus`]): a GPU gone from the bus.
    pub gpu_lost: bool,
    /// The NVIDIA GPUs the kernel's AER recovery could not recover after an uncorrectable
    /// (Fatal) PCIe error: the log holds a Fatal AER error, the `nvidia BDF: AER: can't recover
    /// (no error_detected callback)` line of each such GPU and the port's `AER: device recovery
    /// failed`. Linux's `drivers/pci/pcie/err.c` (torvalds/linux `2555693`,
    /// `report_error_detected` and `pcie_do_recovery`): a device whose driver has no
    /// `error_detected` handler (nvidia.ko registers none) votes `PCI_ERS_RESULT_NO_AER_DRIVER`
    /// and is named through `pci_info` (`dev_printk`'s `<driver> <BDF>: ` prefix, so `nvidia`
    /// names the GPU's driver; the file's `dev_fmt` adds `AER: `); for a Fatal error the state
    /// is `pci_channel_io_frozen` and the bridge's subordinates are reset anyway (`Root Port link
    /// has been reset`), then that vote sends recovery to `failed:` (`device recovery failed`)
    /// and the devices are left disconnected: the GPU was reset under a driver that cannot
    /// bring it back. A Non-Fatal error resets nothing and is not read here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aer_unrecovered_gpus: Vec<String>,
    /// NVSwitch errors (`nvidia-nvswitchN: SXid (PCI:...): CODE, Fatal|Non-fatal, ...`): the
    /// distinct codes, and the ones a line calls fatal (the fabric stalls the GPUs' NVLink
    /// traffic and their jobs abort with Xid 45).
    pub sxid_codes: Vec<u32>,
    pub sxid_fatal_codes: Vec<u32>,
    pub aer: Vec<Aer>,
    pub aer_count: u64,
    pub lines: u64,
    /// The devices the NVIDIA module's probe routine was not called for (`NVRM: The NVIDIA
    /// probe routine was not called for N device(s).`, summed over the log's loads): NVIDIA
    /// GPUs another driver holds. Only when there are some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_not_called: Option<u32>,
    /// `NVRM: No NVIDIA graphics adapter probed!`: the module was left no GPU and did not
    /// load. Only when the log says so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_adapter_probed: bool,
    /// The newest refusal of a user-space client of another version (`NVRM: API mismatch`),
    /// unless a load of the client's version came after it. Only when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_mismatch: Option<ApiMismatch>,
    /// The resource manager's checks and assertions that failed with `NV_ERR_NO_MEMORY`
    /// (`NVRM: …: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from
    /// …`): the driver could not allocate memory (host, unified, video memory or VA space).
    /// Only when there are some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rm_no_memory: Option<u64>,
    /// The first such line, from `NVRM:` on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rm_no_memory_first: Option<String>,
}

/// `NVRM: API mismatch: …`: the kernel module refused a client (a library) of another
/// version, so that library (NVML, CUDA) cannot start. See the module documentation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ApiMismatch {
    /// The version the client sent (the installed user-space driver).
    pub client_version: String,
    /// The loaded kernel module's version, when the excerpt reaches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module_version: Option<String>,
    /// The client process, drivers 575 and later (`'nvidia-smi' (pid 1234)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Refusals in the log (every client, every attempt).
    pub count: u64,
}

static XID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?|\.\.\.|…)\): (\d+),?\s*(.*)$")
        .expect("static regex")
});
/// [`XID`] without its message: the same lines match (the message part matches whatever
/// follows the code), with the same PCI address and code; used once [`super::MAX_ITEMS`]
/// Xids are kept and only the code is read, so a log of a million Xid lines is not captured
/// to the end of every line.
static XID_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?|\.\.\.|…)\): (\d+)")
        .expect("static regex")
});
/// k8s-device-plugin's report of an NVML Xid event: the code, then the device or none.
static DEVICE_PLUGIN_XID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"XidCriticalError: Xid=(\d+)(?: on Device=([^\s,;]+))?[,;]?\s*(.*)$")
        .expect("static regex")
});
static SXID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"SXid \((?:PCI:)?[0-9A-Fa-f:.]+\): (\d+),\s*(Fatal|Non-fatal)?")
        .expect("static regex")
});
/// The refusal's sentence once its lines are joined (see [`ApiMismatch`]).
static API_MISMATCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"API mismatch: the client (?:'([^']*)' \(pid (\d+)\) )?has the version ([^\s,]+),? but(?: this kernel module has(?: the version (\d+(?:\.\d+)*))?)?")
        .expect("static regex")
});
static DMESG_TS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\s*(\d+\.\d+)\]").expect("static regex"));
static DMESG_T: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]")
        .expect("static regex")
});
static SYSLOG_TS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:- )?([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\S*)",
    )
    .expect("static regex")
});
static KMSG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+),(\d+),(\d+),[^;]*;").expect("static regex"));
/// The pattern [`pci_address`] finds (kept as its test's reference).
#[cfg(test)]
static PCI: LazyLock<Regex> = LazyLock::new(|| {
    // ASCII word boundaries: a Unicode `\b` keeps the search off the fast DFA on any line
    Regex::new(r"(?-u:\b)([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])(?-u:\b)")
        .expect("static regex")
});

/// [`PCI`]'s first match in `s` (`dddd:bb:dd.f` between ASCII word boundaries), found by
/// looking at the bytes around each `:` instead of running the pattern: a line that names a
/// GPU pays for it once per line read (a log of `GPU has fallen off the bus` lines, one per
/// second). Every match's first `:` is its fifth byte, so the first `:` that starts one is
/// the leftmost match.
fn pci_address(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let hex = |i: usize, n: usize| {
        b.get(i..i + n)
            .is_some_and(|w| w.iter().all(u8::is_ascii_hexdigit))
    };
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    memchr::memchr_iter(b':', b).find_map(|colon| {
        let i = colon.checked_sub(4)?;
        let matched = hex(i, 4)
            && hex(i + 5, 2)
            && b.get(i + 7) == Some(&b':')
            && hex(i + 8, 2)
            && b.get(i + 10) == Some(&b'.')
            && hex(i + 11, 1)
            && (i == 0 || !word(b[i - 1]))
            && b.get(i + 12).is_none_or(|&c| !word(c));
        // all ASCII: `i` and `i + 12` are character boundaries
        matched.then(|| &s[i..i + 12])
    })
}

fn timestamp(line: &str) -> Option<String> {
    if let Some(c) = SYSLOG_TS.captures(line) {
        return Some(c[1].to_string());
    }
    if let Some(c) = DMESG_T.captures(line) {
        return Some(c[1].to_string());
    }
    if let Some(c) = KMSG.captures(line) {
        // kmsg records carry microseconds since boot.
        let us: u64 = c[3].parse().ok()?;
        return Some(format!("{}.{:06}", us / 1_000_000, us % 1_000_000));
    }
    DMESG_TS.captures(line).map(|c| c[1].to_string())
}

fn aer_severity(line: &str) -> Option<&'static str> {
    let l = line.to_ascii_lowercase();
    let sev = if let Some(i) = l.find("severity=") {
        l[i + 9..].split(',').next().unwrap_or("").to_string()
    } else if has!(l, "aer:") && has!(l, "error") && has!(l, "received") {
        // Only fatal `... error received` lines stand alone; the others are followed by a
        // `severity=` line that carries the same error.
        if has!(l, "(fatal)") {
            "fatal".to_string()
        } else {
            return None;
        }
    } else {
        return None;
    };
    Some(if has!(sev, "non-fatal") || has!(sev, "nonfatal") {
        "uncorrected"
    } else if has!(sev, "fatal") {
        "fatal"
    } else if has!(sev, "uncorrect") {
        "uncorrected"
    } else if has!(sev, "correct") {
        "corrected"
    } else {
        return None;
    })
}

/// The driver's words for a GSP that stopped answering (r525+ GSP-RM firmware).
fn is_gsp_timeout(line: &str) -> bool {
    has!(line, "GSP Timeout")
        || has!(line, "_kgspLogRpcTimeout")
        || has!(line, "_kgspLogXid119")
        // the GSP falcon's core dump, which the driver writes when the GSP stops answering
        || has!(line, "kflcnCoreDump")
        || has!(line, "_kgspIsHeartbeatTimedOut")
        || (has!(line, "waiting for RPC response") && has!(line, "GSP"))
}

/// The GPU of a `nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)` line:
/// the kernel's `pci_info` through `dev_printk`, whose prefix is the bound driver's name and
/// the device's (`nvidia`, nvidia.ko's `pci_driver` name), then `err.c`'s `dev_fmt` `AER: `
/// (see [`KernelLog::aer_unrecovered_gpus`]). Another driver's device (`xhci_hcd`,
/// `thunderbolt`, an unbound `pci`) is not a GPU of the NVIDIA driver.
fn nvidia_cant_recover(line: &str) -> Option<&str> {
    let at = find_lit!(line, ": AER: can't recover (no error_detected callback)")?;
    let (driver, dev) = line[..at].rsplit_once(' ')?;
    let driver = driver.rsplit([' ', ']', ';']).next()?;
    (driver == "nvidia" && pci_address(dev) == Some(dev)).then_some(dev)
}

/// What `nvidia-smi` prints for a GPU that NVML cannot reach any more.
pub fn is_gpu_lost(line: &str) -> bool {
    // a phrase over 32 bytes is searched with a searcher built once (`str::contains` builds a
    // two-way searcher for it on every call)
    static UNABLE: LazyLock<memchr::memmem::Finder<'static>> = LazyLock::new(|| {
        memchr::memmem::Finder::new("Unable to determine the device handle for GPU")
    });
    // `nvidia-smi -L` words the same failure with a lower-case `gpu` (NordicHPC/sonar#72:
    // `Unable to determine the device handle for gpu 0000:18:00.0: Unknown Error` above the
    // GPUs it could list), the table and `-q` with `GPU` (the h19 corpus texts)
    static UNABLE_LIST: LazyLock<memchr::memmem::Finder<'static>> = LazyLock::new(|| {
        memchr::memmem::Finder::new("Unable to determine the device handle for gpu")
    });
    has!(line, "GPU is lost")
        || ((UNABLE.find(line.as_bytes()).is_some() || UNABLE_LIST.find(line.as_bytes()).is_some())
            && (has!(line, "Unknown Error") || has!(line, "lost")))
}

/// The phrases every test of [`Reader::read_rare`] needs one of, by their place in
/// [`RARE_PHRASES`].
mod rare {
    pub const DEVICE_PLUGIN_XID: usize = 0;
    pub const SXID: usize = 1;
    pub const PROBE_REPORT: usize = 2;
    pub const FALLEN_OFF: usize = 3;
    pub const RM_INIT: usize = 4;
    pub const RM_INIT_LOWER: usize = 5;
    pub const GSP: [usize; 4] = [6, 7, 8, 9];
    pub const LOST: [usize; 3] = [10, 11, 19];
    pub const AER: [usize; 2] = [12, 13];
    pub const NOT_CALLED: usize = 14;
    pub const NONE_PROBED: usize = 15;
    pub const API_MISMATCH: usize = 16;
    pub const MODULE_LOAD: usize = 17;
    pub const NO_MEMORY: usize = 18;
}

/// Phrases one of which every line [`Reader::read_rare`] reads something from holds, found
/// all at once in one pass over a line ([`RARE`], overlapping: each phrase the line holds is
/// found).
const RARE_PHRASES: [&str; 20] = [
    "XidCriticalError: Xid=",
    "SXid (",
    "NVRM: The NVIDIA GPU ",
    "fallen off the bus",
    "RmInitAdapter failed",
    "rm_init_adapter failed",
    "GSP Timeout",
    "_kgsp",
    "kflcnCoreDump",
    "waiting for RPC response",
    "GPU is lost",
    "Unable to determine the device handle for GPU",
    "AER",
    "PCIe Bus Error",
    "NVIDIA probe routine was not called for ",
    "No NVIDIA graphics adapter probed",
    "API mismatch: the client",
    "NVRM: loading NVIDIA UNIX",
    "[NV_ERR_NO_MEMORY]",
    "Unable to determine the device handle for gpu",
];
static RARE: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
    aho_corasick::AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(RARE_PHRASES)
        .expect("static phrases")
});

/// [`RARE_PHRASES`] as one literal search: it tells a line without any (most lines of a log
/// of Xids) faster than the automaton, which looks at every byte.
static RARE_ANY: LazyLock<super::scan::Literals> =
    LazyLock::new(|| super::scan::Literals::new(&RARE_PHRASES));

/// Which of [`RARE_PHRASES`] `line` holds, bit `i` for phrase `i`: the automaton runs from
/// the first phrase on (no phrase starts before the leftmost match).
#[cfg(test)]
fn rare_phrases(line: &str) -> u32 {
    static ANY: LazyLock<Regex> = LazyLock::new(|| super::scan::phrases(&RARE_PHRASES));
    rare_phrases_from(line, ANY.find(line).map(|m| m.start()))
}

/// [`rare_phrases`] of a line whose first phrase starts at `first` (as [`RARE_ANY`] finds it).
fn rare_phrases_from(line: &str, first: Option<usize>) -> u32 {
    let Some(first) = first else {
        return 0;
    };
    RARE.find_overlapping_iter(&line[first..])
        .fold(0, |m, p| m | 1 << p.pattern().as_u32())
}

/// [`XID_CODE`]'s match on `line` without running it where the bytes decide it: `None` when
/// the line holds no match, `Some(code)` for a match (the code `None` when it does not parse
/// as a u32). A line where the pattern's Unicode `\d` could take more than the ASCII digits
/// is left to the pattern itself.
fn xid_code(line: &str) -> Option<Option<u32>> {
    const TAG: &str = "NVRM: Xid (";
    let hex = |b: &[u8], n: usize| b.len() >= n && b[..n].iter().all(u8::is_ascii_hexdigit);
    let mut from = 0;
    while let Some(i) = find_lit!(&line[from..], TAG) {
        let at = from + i + TAG.len();
        from = from + i + 1;
        let b = &line.as_bytes()[at..];
        let b = b.strip_prefix(b"PCI:").unwrap_or(b);
        // an address the poster elided: `...` or `…`
        let elided = [&b"..."[..], "…".as_bytes()]
            .into_iter()
            .find_map(|e| b.strip_prefix(e));
        // [0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?\): (\d+)
        if elided.is_none()
            && !(hex(b, 4)
                && b.get(4) == Some(&b':')
                && hex(&b[5..], 2)
                && b.get(7) == Some(&b':')
                && hex(&b[8..], 2))
        {
            continue;
        }
        let mut r = elided.unwrap_or_else(|| &b[10..]);
        if elided.is_none()
            && r.first() == Some(&b'.')
            && hex(&r[1..], 1)
            && r.get(2) == Some(&b')')
        {
            r = &r[2..];
        }
        let Some(r) = r.strip_prefix(b"): ") else {
            continue;
        };
        let digits = r.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || r.get(digits).is_some_and(|c| !c.is_ascii()) {
            // a Unicode digit may start or continue the code: the pattern decides
            return XID_CODE.captures(line).map(|c| c[2].parse::<u32>().ok());
        }
        return Some(
            std::str::from_utf8(&r[..digits])
                .ok()
                .and_then(|d| d.parse::<u32>().ok()),
        );
    }
    None
}

/// Phrases one of which every line [`parse_kernel_log`] reads holds.
const ANCHOR_PHRASES: [&str; 11] = [
    "XidCriticalError: Xid=",
    "SXid (",
    "NVRM:",
    "fallen off the bus",
    "RmInitAdapter failed",
    "rm_init_adapter failed",
    "GPU is lost",
    "Unable to determine the device handle for GPU",
    "Unable to determine the device handle for gpu",
    "AER",
    "PCIe Bus Error",
];
static ANCHORS: LazyLock<super::scan::Literals> =
    LazyLock::new(|| super::scan::Literals::new(&ANCHOR_PHRASES));

/// What the lines read so far say.
#[derive(Default, PartialEq)]
struct Reader {
    log: KernelLog,
    codes: BTreeSet<u32>,
    sx: BTreeSet<u32>,
    sx_fatal: BTreeSet<u32>,
    /// The address of `NVRM: The NVIDIA GPU %04x:%02x:%02x.%x`, the first line of the probe
    /// routine's report, and how many more read lines may still be that report's (its
    /// `fallen off the bus` line comes two lines on; the same first line also opens other
    /// reports, e.g. a GPU the driver does not support).
    report_gpu: Option<(String, u8)>,
    /// An uncorrectable Fatal AER error was read (see [`KernelLog::aer_unrecovered_gpus`]).
    aer_fatal: bool,
    /// A port's `AER: device recovery failed` was read.
    aer_recovery_failed: bool,
    /// The NVIDIA GPUs with an `AER: can't recover (no error_detected callback)` line.
    aer_cant_recover: Vec<String>,
    /// An `API mismatch` refusal being read: its text so far (from `API mismatch:` on, the
    /// lines joined), its timestamp and how many more lines may continue it.
    mismatch: Option<(String, Option<String>, u8)>,
}

/// Adds `pci` to `list` once, up to [`super::MAX_ITEMS`]: Xid's `0000:3b:00` and the device
/// prefix's `0000:3b:00.0` are one GPU, kept with its function where a line gave it.
fn push_gpu(list: &mut Vec<String>, pci: &str) {
    fn device(a: &str) -> &str {
        a.split('.').next().unwrap_or(a)
    }
    if let Some(g) = list.iter_mut().find(|g| device(g) == device(pci)) {
        if pci.len() > g.len() {
            *g = pci.to_string();
        }
    } else if list.len() < super::MAX_ITEMS {
        list.push(pci.to_string());
    }
}

impl Reader {
    /// One line of the log (not a comment).
    #[cfg(test)]
    fn read(&mut self, line: &str) {
        self.read_found(line, rare_phrases(line));
    }

    /// One line of the log (not a comment) holding the phrases of [`RARE_PHRASES`] `found`
    /// says ([`rare_phrases`]).
    fn read_found(&mut self, line: &str, found: u32) {
        if self.mismatch.is_some() {
            self.continue_mismatch(line, found);
        }
        self.report_gpu = self
            .report_gpu
            .take()
            .and_then(|(pci, left)| (left > 0).then(|| (pci, left - 1)));
        // each pattern is tried only on a line holding its literal start: most lines of a
        // kernel log are not the GPU's, and a substring search is far cheaper than a pattern
        if let Some(code) = (self.log.xids.len() >= super::MAX_ITEMS)
            .then(|| xid_code(line))
            .flatten()
        {
            // past the kept Xids only the code is read (see [`xid_code`])
            self.log.xid_count += 1;
            if let Some(code) = code {
                self.codes.insert(code);
            }
        } else if self.log.xids.len() < super::MAX_ITEMS
            && let Some(c) = has!(line, "NVRM: Xid (")
                .then(|| XID.captures(line))
                .flatten()
        {
            self.log.xid_count += 1;
            if let Ok(code) = c[2].parse::<u32>() {
                self.codes.insert(code);
                self.log.xids.push(Xid {
                    code,
                    pci: c[1].to_string(),
                    message: super::clip(c[3].trim(), super::MAX_TEXT),
                    timestamp: timestamp(line),
                    meaning: xid_meaning(code),
                });
            }
        }
        // the other tests are of rare lines: `found` says which of their phrases the line
        // holds (a kernel log of Xids runs none of them)
        if found != 0 {
            self.read_rare(line, found);
        }
    }

    /// The tests of lines other than Xids: each needs a phrase of [`RARE`], and `found` says
    /// which of them the line holds ([`rare_phrases`]).
    fn read_rare(&mut self, line: &str, found: u32) {
        let holds = |i: usize| found & (1 << i) != 0;
        if holds(rare::DEVICE_PLUGIN_XID)
            && let Some(c) = DEVICE_PLUGIN_XID.captures(line)
            && let Ok(code) = c[1].parse::<u32>()
        {
            self.log.xid_count += 1;
            self.codes.insert(code);
            if self.log.xids.len() < super::MAX_ITEMS {
                self.log.xids.push(Xid {
                    code,
                    pci: c.get(2).map_or("all devices", |m| m.as_str()).to_string(),
                    message: super::clip(c[3].trim(), super::MAX_TEXT),
                    timestamp: timestamp(line),
                    meaning: xid_meaning(code),
                });
            }
        }
        if holds(rare::SXID)
            && let Some(c) = SXID.captures(line)
            && let Ok(code) = c[1].parse::<u32>()
        {
            self.sx.insert(code);
            if c.get(2).is_some_and(|m| m.as_str() == "Fatal") {
                self.sx_fatal.insert(code);
            }
        }
        if holds(rare::PROBE_REPORT)
            && let Some(at) = find_lit!(line, "NVRM: The NVIDIA GPU ")
            && let Some(pci) = pci_address(&line[at + "NVRM: The NVIDIA GPU ".len()..])
        {
            self.report_gpu = Some((pci.to_string(), 2));
        }
        if holds(rare::FALLEN_OFF) {
            self.log.fallen_off_bus = true;
            // the address on this line (`GPU 0000:01:00.0:`, `GPU at 0000:01:00.0`, a
            // joined report), Xid 79's `PCI:0000:3b:00`, else the report's first line
            // (an Xid line's address is cut from its parentheses, as [`XID`] reads it: a
            // log of Xid 79s runs no pattern here)
            let here = match find_lit!(line, "NVRM: Xid (").map(|at| &line[at + 11..]) {
                Some(rest) => rest
                    .split_once(')')
                    .map(|(a, _)| a.trim_start_matches("PCI:"))
                    .filter(|a| a.contains(':')),
                None => pci_address(line),
            };
            if let Some(pci) = here {
                push_gpu(&mut self.log.fallen_off_gpus, pci);
            } else if let Some((pci, _)) = self.report_gpu.take() {
                push_gpu(&mut self.log.fallen_off_gpus, &pci);
            }
        }
        if holds(rare::RM_INIT) || holds(rare::RM_INIT_LOWER) {
            self.log.rm_init_adapter_failed = true;
            if let Some(pci) = pci_address(line) {
                push_gpu(&mut self.log.rm_init_failed_gpus, pci);
            }
        }
        if rare::GSP.into_iter().any(holds) && has!(line, "NVRM:") && is_gsp_timeout(line) {
            self.log.gsp_timeout = true;
        }
        if holds(rare::NOT_CALLED) && has!(line, "NVRM:") {
            let at = find_lit!(line, "NVIDIA probe routine was not called for ").unwrap_or(0);
            let n: String = line[at..]
                .trim_start_matches("NVIDIA probe routine was not called for ")
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = n.parse::<u32>() {
                let sum = self.log.probe_not_called.unwrap_or(0).saturating_add(n);
                self.log.probe_not_called = (sum > 0).then_some(sum);
            }
        }
        if holds(rare::NONE_PROBED) && has!(line, "NVRM:") {
            self.log.no_adapter_probed = true;
        }
        if holds(rare::API_MISMATCH) && has!(line, "NVRM:") {
            self.end_mismatch();
            let at = find_lit!(line, "API mismatch: the client").unwrap_or(0);
            // a shipper's `#012` is the module's own newline
            let text = line[at..].replace("#012", "\n");
            self.mismatch = Some((text, timestamp(line), 4));
            if self
                .mismatch
                .as_ref()
                .is_some_and(|m| m.0.contains("same version"))
            {
                self.end_mismatch();
            }
        }
        if holds(rare::MODULE_LOAD) {
            self.end_mismatch();
            // `NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.144.03  Mon Dec 30 …`,
            // `NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release …`
            let at = find_lit!(line, "Kernel Module").map_or(line.len(), |i| i + 13);
            let version = line[at..]
                .split_whitespace()
                .find(|w| w.starts_with(|c: char| c.is_ascii_digit()));
            if version.is_some()
                && self
                    .log
                    .api_mismatch
                    .as_ref()
                    .is_some_and(|m| Some(m.client_version.as_str()) == version)
            {
                // the client's version loaded after the refusal: resolved
                self.log.api_mismatch = None;
            }
        }
        if holds(rare::NO_MEMORY)
            && let Some(at) = find_lit!(line, "NVRM:")
            && line[at..].contains(" failed: ")
        {
            let n = self.log.rm_no_memory.unwrap_or(0);
            self.log.rm_no_memory = Some(n.saturating_add(1));
            if self.log.rm_no_memory_first.is_none() {
                self.log.rm_no_memory_first =
                    Some(super::clip(line[at..].trim_end(), super::MAX_TEXT));
            }
        }
        if rare::LOST.into_iter().any(holds) && is_gpu_lost(line) {
            self.log.gpu_lost = true;
        }
        if rare::AER.into_iter().any(holds) {
            if let Some(pci) = nvidia_cant_recover(line) {
                push_gpu(&mut self.aer_cant_recover, pci);
            } else if has!(line, "AER: device recovery failed") {
                self.aer_recovery_failed = true;
            }
            if let Some(severity) = aer_severity(line) {
                self.aer_fatal |= severity == "fatal";
                self.log.aer_count += 1;
                if self.log.aer.len() < super::MAX_ITEMS {
                    let message = line
                        .split_once("kernel: ")
                        .map(|p| p.1)
                        .unwrap_or(line)
                        .trim();
                    self.log.aer.push(Aer {
                        pci: pci_address(line).map(str::to_string),
                        severity,
                        message: super::clip(message, super::MAX_TEXT),
                    });
                }
            }
        }
    }

    /// A read line while a refusal is being read: an `NVRM:` line that starts nothing of its
    /// own continues it (its text after `NVRM:`); anything else ends it.
    fn continue_mismatch(&mut self, line: &str, found: u32) {
        let starts_own = found & (1 << rare::API_MISMATCH | 1 << rare::MODULE_LOAD) != 0
            || has!(line, "NVRM: Xid (");
        match (find_lit!(line, "NVRM:"), self.mismatch.as_mut()) {
            (Some(at), Some((text, _, left))) if !starts_own && *left > 0 => {
                text.push('\n');
                text.push_str(&line[at + 5..]);
                *left -= 1;
                if *left == 0 || text.contains("same version") {
                    self.end_mismatch();
                }
            }
            _ => self.end_mismatch(),
        }
    }

    /// The refusal being read, read (see [`API_MISMATCH`]).
    fn end_mismatch(&mut self) {
        let Some((text, timestamp, _)) = self.mismatch.take() else {
            return;
        };
        let joined = text
            .split('\n')
            .map(|l| l.trim().trim_start_matches("NVRM:").trim())
            .collect::<Vec<_>>()
            .join(" ");
        let joined = joined.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(c) = API_MISMATCH.captures(&joined) else {
            return;
        };
        let count = self.log.api_mismatch.as_ref().map_or(0, |m| m.count) + 1;
        self.log.api_mismatch = Some(ApiMismatch {
            client_version: super::clip(&c[3], 64),
            module_version: c.get(4).map(|m| m.as_str().to_string()),
            client: c.get(1).map(|m| super::clip(m.as_str(), 64)),
            pid: c.get(2).and_then(|m| m.as_str().parse().ok()),
            timestamp,
            count,
        });
    }

    fn finish(mut self) -> KernelLog {
        self.end_mismatch();
        if self.aer_fatal && self.aer_recovery_failed && !self.aer_cant_recover.is_empty() {
            self.log.gpu_lost = true;
            self.log.aer_unrecovered_gpus = self.aer_cant_recover;
        }
        self.log.xid_codes = self.codes.into_iter().collect();
        self.log.sxid_codes = self.sx.into_iter().collect();
        self.log.sxid_fatal_codes = self.sx_fatal.into_iter().collect();
        self.log
    }
}

pub fn parse_kernel_log(text: &str) -> KernelLog {
    let mut r = Reader::default();
    // Every test of [`Reader::read`] needs one of [`ANCHOR_PHRASES`] on its line (the Xid and GSP
    // tests `NVRM:`, the lost-GPU test one of its two phrases, the AER test `AER` or `PCIe Bus
    // Error`): the text is searched for them once and only the lines holding one are read;
    // the other lines are only counted.
    r.log.lines = super::scan::content_line_count(text);
    for (line, found) in read_lines(text) {
        r.read_found(line, found);
    }
    r.finish()
}

/// The lines [`parse_kernel_log`] reads (those holding one of [`ANCHOR_PHRASES`], not
/// comments), each with the phrases of [`RARE_PHRASES`] it holds ([`rare_phrases`]).
fn read_lines(text: &str) -> impl Iterator<Item = (&str, u32)> {
    super::scan::lines_with_literals(text, &ANCHORS)
        .filter(|line| !line.trim_start().starts_with('#'))
        .map(|line| (line, rare_phrases_from(line, RARE_ANY.find(line))))
}

/// Most lines carry a dmesg timestamp or a kmsg record header.
fn looks_like_kernel_log(h: &str) -> bool {
    let lines: Vec<&str> = h
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(50)
        .collect();
    if lines.is_empty() {
        return false;
    }
    let stamped = lines
        .iter()
        .filter(|l| {
            let l = l.trim_start();
            (l.starts_with('[')
                && l.find(']')
                    .is_some_and(|i| l[1..i].trim().parse::<f64>().is_ok()))
                || l.split_once(';').is_some_and(|(head, _)| {
                    head.split(',').count() >= 3
                        && head.split(',').take(3).all(|p| p.parse::<u64>().is_ok())
                })
                || has!(l, " kernel: ")
        })
        .count();
    stamped * 2 > lines.len()
}

/// The registry entry.
pub struct KernelLogKind;

impl super::EvidenceKind for KernelLogKind {
    fn marker(&self, line: &str) -> bool {
        has!(line, "NVRM:")
            || has!(line, "XidCriticalError: Xid=")
            || has!(line, "SXid")
            || (has!(line, "AER:") && has!(line, "pcieport"))
            || is_gpu_lost(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[
            "NVRM:",
            "XidCriticalError: Xid=",
            "SXid",
            "AER:",
            "GPU is lost",
            "Unable to determine the device handle for GPU",
            "Unable to determine the device handle for gpu",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "kernel-log"
    }
    fn doc(&self) -> &'static str {
        "a kernel log: NVIDIA Xid and NVSwitch SXid events (and the k8s device plugin's XidCriticalError reports of them), a GPU fallen off the bus or lost, RmInitAdapter and GSP failures, PCIe AER errors"
    }
    fn example(&self) -> &'static str {
        "sudo dmesg -T"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("xids", "Xid events: code, pci, message, timestamp, meaning"),
            ("xid_count", "every Xid line seen"),
            ("xid_codes", "distinct Xid codes"),
            ("fallen_off_bus", "a GPU fell off the bus"),
            (
                "fallen_off_gpus",
                "the PCI addresses of the GPUs that fell off the bus",
            ),
            (
                "rm_init_adapter_failed",
                "the driver could not initialise a GPU",
            ),
            (
                "rm_init_failed_gpus",
                "the PCI addresses of the GPUs the driver could not initialise",
            ),
            ("gsp_timeout", "the GPU System Processor stopped answering"),
            ("gpu_lost", "a GPU is lost or cannot be reached"),
            (
                "aer_unrecovered_gpus",
                "the PCI addresses of the NVIDIA GPUs the kernel's AER recovery gave up after a fatal PCIe error (only when there is one)",
            ),
            ("sxid_codes", "distinct NVSwitch SXid codes"),
            ("sxid_fatal_codes", "SXid codes a line calls fatal"),
            ("aer", "PCIe AER errors: pci, severity, message"),
            ("aer_count", "every AER line seen"),
            ("lines", "lines read"),
            (
                "probe_not_called",
                "the NVIDIA GPUs the NVIDIA module's probe routine was not called for (another driver holds them; only when there are some)",
            ),
            (
                "no_adapter_probed",
                "the NVIDIA module was left no GPU (`No NVIDIA graphics adapter probed!`; only when the log says so)",
            ),
            (
                "api_mismatch",
                "{client_version, module_version?, client?, pid?, timestamp?, count}: the module refused a library of another version (`NVRM: API mismatch`), the newest refusal, unless the client's version loaded after it; only when there is one",
            ),
            (
                "rm_no_memory",
                "the driver's checks and assertions that failed with `Out of memory [NV_ERR_NO_MEMORY]` (only when there are some)",
            ),
            ("rm_no_memory_first", "the first such line, from `NVRM:` on"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["kernel.log", "driver.binding"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let h = s.head;
        has!(h, "NVRM:")
            || has!(h, "XidCriticalError: Xid=")
            || (has!(h, "AER:") && has!(h, "pcieport"))
            || h.lines().any(is_gpu_lost)
            || looks_like_kernel_log(h)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_kernel_log(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn rm_no_memory_failures_are_read() {
        // h127: dgx-spark-playbooks#97, one message the poster wrapped at `(0x00000051)`
        let t = include_str!(
            "../../tests/fixtures/corpus/h127_kern_dgxspark97_gb10_nvrm_no_memory_wrapped.txt"
        );
        let k = parse_kernel_log(t);
        assert_eq!(k.rm_no_memory, Some(1));
        assert_eq!(
            k.rm_no_memory_first.as_deref(),
            Some("NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY]")
        );
        assert!(k.xid_codes.is_empty() && !k.gsp_timeout && !k.fallen_off_bus);
        // h127: dgx-spark-playbooks#116, beside the IOVA mapping failure (another message)
        let t = include_str!(
            "../../tests/fixtures/corpus/h127_kern_dgxspark116_gb10_nvrm_no_memory_iova.txt"
        );
        assert_eq!(parse_kernel_log(t).rm_no_memory, Some(1));
        // h97: vllm#41834, dmesg stamped, three lines (two from _memdescAllocInternal, one
        // from system_mem.c), journald's memory pressure around them
        let t = include_str!(
            "../../tests/fixtures/corpus/h97_dmesg_vllm41834_sm12x_nv_err_no_memory_journald_pressure.txt"
        );
        let k = parse_kernel_log(t);
        assert_eq!(k.rm_no_memory, Some(3));
        assert!(
            k.rm_no_memory_first
                .as_deref()
                .is_some_and(|m| m.starts_with("NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal"))
        );
        // nvAssertOkFailed's wording, in a journal
        let t = "Sep 13 10:00:01 spark kernel: NVRM: osAllocPagesInternal: Assertion failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from memdescAlloc(pMemDesc) @ mem_desc.c:1359\n";
        assert_eq!(parse_kernel_log(t).rm_no_memory, Some(1));
        // neighbours: another status, the status quoted in prose without the driver's prefix,
        // a line without the check's wording, an Xid log
        for t in [
            "[ 12.0] NVRM: nvAssertOkFailedNoLog: Assertion failed: Generic Error: Invalid state [NV_ERR_INVALID_STATE] (0x00000040) returned from pRmApi->Control @ kernel_gsp.c:4411\n",
            "the driver logs NV_ERR_NO_MEMORY [NV_ERR_NO_MEMORY] when memory runs out\n",
            "[ 12.0] NVRM: status [NV_ERR_NO_MEMORY]\n",
            "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n",
        ] {
            let k = parse_kernel_log(t);
            assert_eq!(k.rm_no_memory, None, "{t}");
            let v = serde_json::to_value(&k).unwrap();
            assert!(v.get("rm_no_memory").is_none() && v.get("rm_no_memory_first").is_none());
        }
    }

    #[test]
    fn nvidia_module_probe_not_called_is_read() {
        // h119: mattshma/bigdata#133, two loads of the module, three GPUs held by another driver
        let t = include_str!(
            "../../tests/fixtures/corpus/h119_dmesg_bigdata133_nvrm_probe_not_called.txt"
        );
        let k = parse_kernel_log(t);
        assert_eq!(k.probe_not_called, Some(3));
        assert!(k.no_adapter_probed);
        assert!(!k.fallen_off_bus && !k.rm_init_adapter_failed && k.xid_codes.is_empty());
        // the 1.0-9629 closed module's wording (2006), one device, a GPU probed elsewhere
        let t = "[  150.518463] NVRM: The NVIDIA probe routine was not called for 1 device(s).\n[  150.533044] NVRM: This can occur when a driver such as rivafb, nvidiafb or\n[  150.533045] NVRM: rivatv was loaded and obtained ownership of the NVIDIA\n";
        let k = parse_kernel_log(t);
        assert_eq!(k.probe_not_called, Some(1));
        assert!(!k.no_adapter_probed);
        // two loads in one journal add up
        let t = "Oct 24 14:20:15 WNT071 kernel: [  105.844466] NVRM: The NVIDIA probe routine was not called for 1 device(s).\nOct 24 14:25:15 WNT071 kernel: [  405.844466] NVRM: The NVIDIA probe routine was not called for 2 device(s).\n";
        assert_eq!(parse_kernel_log(t).probe_not_called, Some(3));
        // neighbours: the probe ran and failed (NVSentinel#155), the message quoted in prose
        // without the module's prefix, the serialized report without the fields
        let t = "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n";
        let k = parse_kernel_log(t);
        assert_eq!(k.probe_not_called, None);
        assert!(!k.no_adapter_probed);
        let t = "dmesg says the NVIDIA probe routine was not called for 1 device(s), why?\n";
        assert_eq!(parse_kernel_log(t).probe_not_called, None);
        let v = serde_json::to_value(parse_kernel_log(
            "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n",
        ))
        .unwrap();
        assert!(v.get("probe_not_called").is_none() && v.get("no_adapter_probed").is_none());
    }

    #[test]
    fn api_mismatch_is_read_in_both_wordings_and_every_line_form() {
        let corpus = crate::test_corpus;
        // the pre-575 wording, continuation lines indented under the timestamp (dalle#104)
        let m = parse_kernel_log(&corpus("h92_dmesg_dalle104_api_mismatch_515_510.txt"))
            .api_mismatch
            .unwrap();
        assert_eq!(m.client_version, "515.48.07");
        assert_eq!(m.module_version.as_deref(), Some("510.73.05"));
        assert_eq!((m.client.as_deref(), m.pid, m.count), (None, None, 1));
        assert_eq!(m.timestamp.as_deref(), Some("7386.259769"));
        // the 575+ wording naming the client and its pid (nvidia-all#394), beside another
        // driver's line
        let m = parse_kernel_log(&corpus(
            "h92_dmesg_nvidiaall394_api_mismatch_client_pid.txt",
        ))
        .api_mismatch
        .unwrap();
        assert_eq!(
            (m.client.as_deref(), m.pid, m.client_version.as_str()),
            (Some("kwin_wayland"), Some(1005), "595.84")
        );
        assert_eq!(m.module_version.as_deref(), Some("595.80"));
        // every line stamped, after the module's own load of 570.148.06 (vgpuarchive#1)
        let m = parse_kernel_log(&corpus("h92_dmesg_vgpuarchive1_api_mismatch_guest_570.txt"))
            .api_mismatch
            .unwrap();
        assert_eq!(
            (m.client_version.as_str(), m.module_version.as_deref()),
            ("570.148.08", Some("570.148.06"))
        );
        // rsyslog's `#012` for the module's newlines (ansible-slurm-appliance#287)
        let m = parse_kernel_log(&corpus("h92_syslog_stackhpc287_api_mismatch_hash012.txt"))
            .api_mismatch
            .unwrap();
        assert_eq!(
            (m.client_version.as_str(), m.module_version.as_deref()),
            ("535.54.03", Some("530.30.02"))
        );
        // a kern.log repeating the refusal, each line syslog-stamped (the module's text as
        // Ubuntu forums quote it): counted, and the newest kept
        let t = "Dec 22 11:26:00 blocky kernel: [   15.483551] NVRM: API mismatch: the client has the version 319.32, but\nDec 22 11:26:00 blocky kernel: [   15.483551] NVRM: this kernel module has the version 304.108.  Please\nDec 22 11:26:00 blocky kernel: [   15.483551] NVRM: make sure that this kernel module and all NVIDIA driver\nDec 22 11:26:00 blocky kernel: [   15.483551] NVRM: components have the same version.\nDec 22 11:26:00 blocky kernel: [   15.785471] NVRM: API mismatch: the client has the version 319.32, but\nDec 22 11:26:00 blocky kernel: [   15.785471] NVRM: this kernel module has the version 304.108.  Please\n";
        let m = parse_kernel_log(t).api_mismatch.unwrap();
        assert_eq!(m.count, 2);
        assert_eq!(m.module_version.as_deref(), Some("304.108"));
        // an excerpt cut after the first line still names the client's version
        let t = "[ 9.4] NVRM: API mismatch: the client has the version 470.129.06, but\n";
        let m = parse_kernel_log(t).api_mismatch.unwrap();
        assert_eq!(
            (m.client_version.as_str(), m.module_version),
            ("470.129.06", None)
        );
    }

    #[test]
    fn api_mismatch_resolved_by_a_load_of_the_client_s_version() {
        let refusal = "[ 100.1] NVRM: API mismatch: the client has the version 570.133.07, but\n               NVRM: this kernel module has the version 570.124.06.  Please\n               NVRM: make sure that this kernel module and all NVIDIA driver\n               NVRM: components have the same version.\n";
        // the reboot (or reload) brings up the client's version: resolved
        let open = "[ 5.2] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.133.07  Release Build  (dvs-builder@U22)  Fri Mar 28 11:18:11 UTC 2025\n";
        assert_eq!(
            parse_kernel_log(&format!("{refusal}{open}")).api_mismatch,
            None
        );
        let closed = "[ 5.2] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.133.07  Mon May  5 11:36:21 UTC 2025\n";
        assert_eq!(
            parse_kernel_log(&format!("{refusal}{closed}")).api_mismatch,
            None
        );
        // the old module loaded again, or a load before the refusal: still refused
        let old = closed.replace("570.133.07", "570.124.06");
        assert!(
            parse_kernel_log(&format!("{refusal}{old}"))
                .api_mismatch
                .is_some()
        );
        assert!(
            parse_kernel_log(&format!("{closed}{refusal}"))
                .api_mismatch
                .is_some()
        );
        // a load line right after the first line of a refusal ends it, read as far as it went
        let first = refusal.lines().next().unwrap();
        let m = parse_kernel_log(&format!("{first}\n{old}"))
            .api_mismatch
            .unwrap();
        assert_eq!(m.module_version, None);
    }

    #[test]
    fn no_api_mismatch_where_none_is_printed() {
        // a module load and an Xid, the refusal quoted in prose without the module's prefix,
        // and a log with none: the field is absent, so no snapshot of a log changes
        for t in [
            "[ 6.2] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06  Mon May  5 11:36:21 UTC 2025\n[ 9.1] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception\n",
            "after the upgrade dmesg says API mismatch: the client has the version 515, but …\n",
            "[ 1.0] usb 1-1: new high-speed USB device\n",
        ] {
            let k = parse_kernel_log(t);
            assert_eq!(k.api_mismatch, None, "{t}");
            assert!(
                serde_json::to_value(&k)
                    .unwrap()
                    .get("api_mismatch")
                    .is_none()
            );
        }
    }

    #[test]
    fn device_plugin_xid_reports() {
        // NVIDIA/k8s-device-plugin#189 (plugin v0.6-v0.12 wording)
        let t = "2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, the device will go unhealthy.\n2020/08/10 19:09:42 'nvidia.com/gpu' device marked unhealthy: GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8\n";
        let k = parse_kernel_log(t);
        assert_eq!(k.xid_codes, vec![69]);
        assert_eq!(k.xids[0].pci, "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8");
        assert_eq!(k.xids[0].message, "the device will go unhealthy.");
        assert!(crate::evidence::EvidenceKind::marker(
            &KernelLogKind,
            t.lines().next().unwrap()
        ));
        // v0.14+ (klog) and the event tied to no device, built from the producers' format
        // strings (health.go) around #189's device
        let t = "I0806 07:12:01.123456       1 health.go:185] XidCriticalError: Xid=79 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8; marking device as unhealthy.\n2021/03/15 10:00:00 XidCriticalError: Xid=48, All devices will go unhealthy.\n";
        let k = parse_kernel_log(t);
        assert_eq!(k.xid_codes, vec![48, 79]);
        assert_eq!(k.xids[0].message, "marking device as unhealthy.");
        assert_eq!(k.xids[1].pci, "all devices");
        // NVIDIA/k8s-device-plugin#1340: the event type named in prose is no Xid
        let t = "We register for NVML Events of type `nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError`\n";
        let k = parse_kernel_log(t);
        assert!(k.xids.is_empty() && k.xid_codes.is_empty());
    }

    /// [`read_lines`] as the regexes of [`ANCHOR_PHRASES`] and [`RARE_PHRASES`] find them.
    fn read_lines_by_regexes(t: &str) -> Vec<(&str, u32)> {
        static ANCHORS_RE: LazyLock<Regex> =
            LazyLock::new(|| crate::evidence::scan::phrases(&ANCHOR_PHRASES));
        crate::evidence::scan::lines_with(t, &ANCHORS_RE)
            .filter(|l| !l.trim_start().starts_with('#'))
            .map(|l| (l, rare_phrases(l)))
            .collect()
    }

    /// The lines read and the rare phrases of each, found by [`super::scan::Literals`], are
    /// those the phrases' regexes find: on every fixture and corpus text.
    #[test]
    fn whole_text_rare_phrases_are_each_lines() {
        let mut n = 0;
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            n += 1;
            assert_eq!(
                read_lines(&t).collect::<Vec<_>>(),
                read_lines_by_regexes(&t),
                "{}",
                p.display()
            );
        }
        assert!(n > 1000, "{n} texts");
    }

    /// The reader looks only at lines holding one of its phrases: every line of the fixtures
    /// and the corpus that reads as something on its own holds one (a test added to the loop
    /// without its phrase fails here, on the line that shows it).
    #[test]
    fn every_line_read_holds_a_searched_phrase() {
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            for l in t.lines() {
                let mut r = Reader::default();
                r.read(l);
                if r != Reader::default() {
                    assert!(ANCHORS.is_match(l), "{}: {l}", p.display());
                }
                // the one pass finds each phrase the line holds, as a search for each would
                let each = RARE_PHRASES
                    .iter()
                    .enumerate()
                    .filter(|(_, ph)| l.contains(*ph))
                    .fold(0u32, |m, (i, _)| m | 1 << i);
                assert_eq!(rare_phrases(l), each, "{}: {l}", p.display());
                assert_eq!(xid_code(l), xid_code_reference(l), "{}: {l}", p.display());
            }
        }
    }

    /// The byte scan finds what the pattern finds: every line of the fixtures and the corpus,
    /// edge cases, and generated text of the characters that matter.
    #[test]
    fn pci_address_is_the_patterns_first_match() {
        let reference = |s: &str| {
            PCI.captures(s)
                .map(|c| c.get(1).unwrap().as_str().to_string())
        };
        for s in [
            "",
            "0000:3b:00.0",
            "GPU 0000:3b:00.0: GPU has fallen off the bus.",
            "x0000:3b:00.0 0000:3c:00.1",
            "0000:3b:00.0_ 00000:3b:00.0 0000:3b:00.0",
            "0000:3b:00.0a",
            "é0000:3b:00.0é",
            "PCI:0000:3b:00",
            "::0000:3b:00.f:",
            "0000:3B:0a.F",
        ] {
            assert_eq!(pci_address(s).map(str::to_string), reference(s), "{s:?}");
        }
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            for l in t.lines() {
                assert_eq!(
                    pci_address(l).map(str::to_string),
                    reference(l),
                    "{}: {l}",
                    p.display()
                );
            }
        }
    }

    proptest! {
        #[test]
        fn pci_address_as_the_pattern_on_any_text(s in "[0-9a-fA-F:._ xé]{0,40}") {
            prop_assert_eq!(
                pci_address(&s).map(str::to_string),
                PCI.captures(&s).map(|c| c.get(1).unwrap().as_str().to_string())
            );
        }
    }

    fn xid_code_reference(l: &str) -> Option<Option<u32>> {
        XID_CODE.captures(l).map(|c| c[2].parse::<u32>().ok())
    }

    #[test]
    fn xid_code_reads_as_its_pattern() {
        for l in [
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1",
            "NVRM: Xid (0000:3b:00.0): 13",
            "NVRM: Xid (0000:3b:00.0: 13",
            "NVRM: Xid (0000:3b:00.0x): 13",
            "NVRM: Xid (PCI:0000:3b:0): 1 NVRM: Xid (PCI:0000:3b:00): 2",
            "NVRM: Xid (PCI:0000:3b:00): 99999999999",
            "NVRM: Xid (PCI:0000:3b:00): 4\u{663}",
            "NVRM: Xid (PCI:0000:3b:00): \u{663}",
            "NVRM: Xid (PCI:0000:3b:00): x",
            "NVRM: Xid (PCI:",
            "NVRM: Xid (",
            "NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal",
            "NVRM: Xid (...): 13",
            "NVRM: Xid (PCI:…): 79, GPU has fallen off the bus.",
            "NVRM: Xid (PCI:....): 13",
            "NVRM: Xid (PCI:..): 13",
        ] {
            assert_eq!(xid_code(l), xid_code_reference(l), "{l}");
        }
    }

    #[test]
    fn journal_with_fallen_off_bus() {
        let l = parse_kernel_log(&fixture("kernel_log/xid79_journal.txt"));
        assert!(l.fallen_off_bus);
        assert_eq!(l.xid_codes, [79]);
        assert_eq!(l.xids[0].pci, "0000:2b:00");
        assert_eq!(l.xids[0].timestamp.as_deref(), Some("May 18 19:02:39"));
        assert_eq!(l.xids[0].meaning, xid_meaning(79));
        insta::assert_json_snapshot!("kernel_log_xid79_journal", l);
    }

    #[test]
    fn gsp_timeout_without_an_xid_line() {
        let t = "[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 heartbeat 1899482\n\
[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout **********************************\n";
        let l = parse_kernel_log(t);
        assert!(l.gsp_timeout);
        assert!(l.xids.is_empty());
        assert!(xid_meaning(109).is_some() && xid_meaning(147).is_some());
        // the words alone, outside an NVRM line, are not the driver's report
        assert!(!parse_kernel_log("we saw a GSP Timeout last week\n").gsp_timeout);
    }

    #[test]
    fn nvswitch_sxid_lines_and_their_fatality() {
        // gpud's scan of a real HGX log (continuation line of a 12028), and the two-line form
        // NVIDIA's SXid catalog documents
        let t = "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a}\n\
[ 1234.5] nvidia-nvswitch3: SXid (PCI:0000:c3:00.0): 20034, Fatal, Link 39 LTSSM Fault Up\n\
[ 1234.6] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 11004, Non-fatal, Link 12 ingress invalid ACL\n";
        let l = parse_kernel_log(t);
        assert_eq!(l.sxid_codes, [11004, 12028, 20034]);
        assert_eq!(l.sxid_fatal_codes, [20034]);
        assert!(l.xids.is_empty());
        assert!(detect_kernel(t));
    }

    fn detect_kernel(t: &str) -> bool {
        crate::evidence::detect(t).is_some_and(|k| k.name() == "kernel-log")
    }

    #[test]
    fn the_gsp_core_dump_after_a_timeout_says_the_gsp_failed() {
        // a Talos node's kernel log: `host: kern: level: [RFC3339]: ` before the driver's words
        let t = "192.168.11.119: kern: warning: [2026-04-22T21:27:51.291660856Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 08 = 0x0000000004d4b1a0\n";
        assert!(parse_kernel_log(t).gsp_timeout);
        let t = "[Sun Apr 26 23:12:26 2026] NVRM: _kgspLogXid119: Note: Please also check logs above.\n";
        assert!(parse_kernel_log(t).gsp_timeout);
    }

    #[test]
    fn nvidia_smi_saying_a_gpu_is_lost() {
        for t in [
            "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU\n",
            "Unable to determine the device handle for GPU0000:A1:00.0: Unknown Error\n",
            // `nvidia-smi -L`'s wording (NordicHPC/sonar#72)
            "Unable to determine the device handle for gpu 0000:18:00.0: Unknown Error\n",
        ] {
            assert!(parse_kernel_log(t).gpu_lost, "{t}");
            assert!(detect_kernel(t), "{t}");
        }
        assert!(!parse_kernel_log("NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n").gpu_lost);
    }

    #[test]
    fn dmesg_with_rm_init_adapter_failures() {
        let l = parse_kernel_log(&fixture("kernel_log/rm_init_adapter_dmesg.txt"));
        assert!(l.rm_init_adapter_failed);
        assert!(!l.fallen_off_bus);
        assert!(l.xids.is_empty());
        insta::assert_json_snapshot!("kernel_log_rm_init_adapter_dmesg", l);
    }

    /// Past the kept Xids only the code is read: every code and line is still counted.
    #[test]
    fn xids_past_the_kept_ones_are_counted_with_their_codes() {
        let kept = "[  1.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, Graphics Exception\n"
            .repeat(crate::evidence::MAX_ITEMS + 5);
        let log = format!(
            "{kept}[  2.0] NVRM: Xid (PCI:0000:3b:00.0): 79, GPU has fallen off the bus.\n[  3.0] NVRM: Xid (0000:3b:00): 48\n"
        );
        let k = parse_kernel_log(&log);
        assert_eq!(k.xid_count as usize, crate::evidence::MAX_ITEMS + 7);
        assert_eq!(k.xid_codes, vec![13, 48, 79]);
        assert_eq!(k.xids.len(), crate::evidence::MAX_ITEMS);
        assert!(k.fallen_off_bus);
    }

    #[test]
    fn pcie_aer_corrected_errors() {
        let l = parse_kernel_log(&fixture("kernel_log/aer_corrected.txt"));
        assert!(l.aer_count >= 3);
        assert!(l.aer.iter().all(|a| a.severity == "corrected"));
        assert_eq!(l.aer[0].pci.as_deref(), Some("0000:00:03.1"));
        insta::assert_json_snapshot!("kernel_log_aer_corrected", l);
    }

    /// github.com/rwth-i6/returnn/issues/1500 (`dmesg -H`): a Fatal completion timeout on the
    /// GPU's root port, the nvidia GPU cannot recover, the link is reset and recovery fails.
    const AER_FATAL_GPU: &str = "\
[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)
[  +0.000001] snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)
[  +0.000008] pcieport 0000:00:03.0: AER: device recovery failed
[  +0.000001] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0
[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)
[  +0.000898] pcieport 0000:00:03.0:   device [8086:6f08] error status/mask=00004020/00000000
[  +0.000894] pcieport 0000:00:03.0:    [14] CmpltTO                (First)
[  +0.000921] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)
[  +1.050439] pcieport 0000:00:03.0: AER: Root Port link has been reset (0)
[  +0.000041] pcieport 0000:00:03.0: AER: device recovery failed
";

    #[test]
    fn a_gpu_the_aer_recovery_gave_up_after_a_fatal_error_is_lost() {
        let l = parse_kernel_log(AER_FATAL_GPU);
        assert!(l.gpu_lost);
        assert_eq!(l.aer_unrecovered_gpus, ["0000:03:00.0"]);
        // the same lines from the journal and from a kmsg record
        let journal = AER_FATAL_GPU.replace("[  +", "Jan 21 10:00:00 cn-234 kernel: [  +");
        assert_eq!(
            parse_kernel_log(&journal).aer_unrecovered_gpus,
            ["0000:03:00.0"]
        );
        let kmsg = AER_FATAL_GPU.replace("[  +0.000844] nvidia", "3,812,9321,-;nvidia");
        assert_eq!(
            parse_kernel_log(&kmsg).aer_unrecovered_gpus,
            ["0000:03:00.0"]
        );
    }

    #[test]
    fn aer_recovery_that_resets_no_gpu_loses_none() {
        // github.com/minisforum-docs/MS-02-Ultra/issues/10: a Non-Fatal error, other drivers
        let other = "\
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, (Receiver ID)
Sep 22 09:59:09 pve kernel: thunderbolt 0000:84:00.0: AER: can't recover (no error_detected callback)
Sep 22 09:59:09 pve kernel: xhci_hcd 0000:97:00.0: AER: can't recover (no error_detected callback)
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: AER: device recovery failed
";
        let l = parse_kernel_log(other);
        assert!(!l.gpu_lost && l.aer_unrecovered_gpus.is_empty());
        // the GPU's own Non-Fatal error: nothing was reset
        let non_fatal = "\
nvidia 0000:05:00.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer
nvidia 0000:05:00.0: AER: can't recover (no error_detected callback)
pcieport 0000:00:07.0: AER: device recovery failed
";
        assert!(!parse_kernel_log(non_fatal).gpu_lost);
        // a Fatal error on another port whose recovery succeeded, the GPU's line without failure
        let recovered = AER_FATAL_GPU.replace(
            "AER: device recovery failed",
            "AER: device recovery successful",
        );
        assert!(!parse_kernel_log(&recovered).gpu_lost);
        // a driver whose name ends in `nvidia` is not nvidia.ko
        let other_driver = AER_FATAL_GPU.replace("] nvidia ", "] not_nvidia ");
        assert!(!parse_kernel_log(&other_driver).gpu_lost);
    }

    #[test]
    fn mixed_xids_in_dmesg_kmsg_and_old_forms() {
        let text = "\
[  123.456] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.
6,1234,5678000,-;NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.
[Mon May 18 19:02:39 2026] NVRM: Xid (PCI:0000:3b:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.
Jan 18 11:38:05 localhost kernel: [ 269.517039] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007 M 00001ffc Data ffffffff
2026-03-01T12:42:15+0100 host kernel: NVRM: Xid (PCI:0000:01:00): 119, pid=1, name=x, Timeout after 45s of waiting for RPC response from GPU0 GSP!
pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0
nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)
";
        let l = parse_kernel_log(text);
        assert_eq!(l.xid_codes, [3, 48, 63, 79, 119]);
        assert_eq!(l.xids[0].timestamp.as_deref(), Some("123.456"));
        assert_eq!(l.xids[1].timestamp.as_deref(), Some("5.678000"));
        assert_eq!(
            l.xids[2].timestamp.as_deref(),
            Some("Mon May 18 19:02:39 2026")
        );
        assert_eq!(l.xids[3].pci, "0000:01:00");
        assert_eq!(l.xids[3].meaning, None);
        assert_eq!(
            l.xids[4].timestamp.as_deref(),
            Some("2026-03-01T12:42:15+0100")
        );
        assert_eq!(l.aer[0].severity, "fatal");
        assert_eq!(l.aer[1].severity, "uncorrected");
        assert_eq!(l.aer[1].pci.as_deref(), Some("0000:01:00.0"));
        assert!(l.fallen_off_bus);
    }

    #[test]
    fn xid_table_covers_the_codes_rules_use() {
        for code in [13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120] {
            assert!(xid_meaning(code).is_some(), "xid {code}");
        }
        assert_eq!(xid_meaning(1), None);
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("kernel_log/xid79_journal.txt");
        for p in prefixes(&text, 29) {
            let l = parse_kernel_log(p);
            assert!(l.xids.len() <= 1);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn xid_code_as_its_pattern(s in "(NVRM: Xid \\(|PCI:|[0-9a-f:.)]|\\): |[0-9]|\u{663}| |x){0,24}") {
            prop_assert_eq!(xid_code(&s), xid_code_reference(&s));
        }

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_kernel_log(&s);
        }

        #[test]
        fn whole_text_rare_phrases_as_each_lines(lines in proptest::collection::vec(
            "(NVRM: |Xid \\(|AER|fallen off the bus|GPU is lost|PCIe Bus Error|SXid \\(|# | |x|\r){0,10}",
            0..12)) {
            let t = lines.join("\n");
            prop_assert_eq!(read_lines(&t).collect::<Vec<_>>(), read_lines_by_regexes(&t));
        }

        #[test]
        fn garbled_xid_lines_never_panic(lines in proptest::collection::vec(
            prop_oneof![
                "\\[ *[0-9]{1,8}\\.[0-9]{1,6}\\] NVRM: Xid \\(PCI:[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\): [0-9]{1,12}, \\PC{0,40}",
                "[0-9]{1,3},[0-9]{1,20},[0-9]{1,25},-;NVRM: Xid \\(PCI:0000:01:00\\): [0-9]{1,3}, x",
                "\\PC{0,20}AER\\PC{0,20}severity=\\PC{0,20}",
                "\\PC{0,60}",
            ], 0..50)) {
            let l = parse_kernel_log(&lines.join("\n"));
            prop_assert!(l.xids.len() <= 50);
        }

        #[test]
        fn very_long_lines_are_clipped(n in 1usize..100_000) {
            let line = format!("NVRM: Xid (PCI:0000:01:00): 79, {}", "y".repeat(n));
            let l = parse_kernel_log(&line);
            prop_assert!(l.xids[0].message.len() <= crate::evidence::MAX_TEXT + 3);
        }
    }

    #[test]
    fn an_xid_whose_address_the_poster_elided_is_read() {
        // NVIDIA/nccl#2241 (B200, the address elided as `PCI:...`)
        let t = "kernel: NVRM: GPU1 kbifCacheVFInfo_GB100: Unable to read NV_PF0_INITIAL_AND_TOTAL_VFS\n\
kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)\n\
kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error\n";
        let l = parse_kernel_log(t);
        assert_eq!(l.xid_codes, vec![137, 145]);
        assert_eq!(l.xids[0].pci, "...");
        // leptonai/gpud's pstore fixture: a 550 driver's load lines, no Xid
        let healthy = "<4>[ 1126.635824] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.144.03  Mon Dec 30 17:44:08 UTC 2024\n\
<6>[ 1126.671378] [drm] [nvidia-drm] [GPU ID 0x00000100] Loading driver\n";
        let l = parse_kernel_log(healthy);
        assert!(l.xid_codes.is_empty() && l.xids.is_empty());
    }

    #[test]
    fn the_gpu_that_fell_off_the_bus_is_named_in_each_driver_wording() {
        // Bumblebee-Project/Bumblebee#554: the pre-open-modules `GPU at ADDR has fallen off`
        let old = "[   49.261458] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n\
[   49.261465] NVRM: os_pci_init_handle: invalid context!\n\
[   49.261472] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n";
        let l = parse_kernel_log(old);
        assert!(l.fallen_off_bus);
        assert_eq!(l.fallen_off_gpus, vec!["0000:01:00.0"]);
        // NVIDIA/NVSentinel#155: the probe routine's three-line report, the address on its
        // first line and the driver's load banner after it
        let report = "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n\
               NVRM: (PCI ID: 10de:26b5) installed in this system has\n\
               NVRM: fallen off the bus and is not responding to commands.\n\
[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n\
[ 1843.439669] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025\n";
        let l = parse_kernel_log(report);
        assert_eq!(l.fallen_off_gpus, vec!["0000:b3:00.0"]);
        assert!(l.rm_init_failed_gpus.is_empty());
        // NVIDIA/nvidia-docker#1553: Xid 79 names the GPU as `PCI:%04x:%02x:%02x`, and the
        // device-prefixed line after it with its function
        let xid = "[1084456.074562] NVRM: Xid (PCI:0000:09:00): 79, pid=0, GPU has fallen off the bus.\n\
[1084456.074566] NVRM: GPU 0000:09:00.0: GPU has fallen off the bus.\n";
        let l = parse_kernel_log(xid);
        assert_eq!(l.fallen_off_gpus, vec!["0000:09:00.0"]);
        assert_eq!(
            parse_kernel_log(xid.lines().next().unwrap()).fallen_off_gpus,
            vec!["0000:09:00"]
        );
        // NVIDIA/nccl#2241 style: an address the poster elided names no GPU
        let elided = "kernel: NVRM: Xid (PCI:...): 79, GPU has fallen off the bus.\n";
        let l = parse_kernel_log(elided);
        assert!(l.fallen_off_bus && l.fallen_off_gpus.is_empty());
    }

    #[test]
    fn the_gpus_rm_init_adapter_failed_for_are_named() {
        // NVIDIA/gpu-operator#649: two passed-through GPUs failing in turn, container
        // network lines between them
        let t = "[ 1097.650222] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)\n\
[ 1097.650377] NVRM: GPU 0000:04:01.0: rm_init_adapter failed, device minor number 0\n\
[ 1102.469870] NVRM: GPU 0000:04:02.0: RmInitAdapter failed! (0x11:0x45:2525)\n\
[ 1102.470052] NVRM: GPU 0000:04:02.0: rm_init_adapter failed, device minor number 1\n\
[ 1114.993489] IPv6: ADDRCONF(NETDEV_UP): dddd1c3ccc54a5b: link is not ready\n\
[ 1112.163623] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)\n";
        let l = parse_kernel_log(t);
        assert!(l.rm_init_adapter_failed && !l.fallen_off_bus);
        assert_eq!(l.rm_init_failed_gpus, vec!["0000:04:01.0", "0000:04:02.0"]);
        // NVIDIA/open-gpu-kernel-modules#433: the 525 wording without a colon after NVRM
        // for the GSP lines, the device prefix on the failure itself
        let t = "[  217.545145] NVRM RmInitAdapter: Cannot initialize GSP firmware RM\n\
[  217.545832] NVRM: GPU 0000:05:00.0: RmInitAdapter failed! (0x62:0xffff:1622)\n\
[  217.546288] NVRM: GPU 0000:05:00.0: rm_init_adapter failed, device minor number 0\n";
        let l = parse_kernel_log(t);
        assert_eq!(l.rm_init_failed_gpus, vec!["0000:05:00.0"]);
        // WayfireWM/wayfire#3018 (healthy for these fields): NVRM out of VA space, no GPU
        // lost or failed
        let t = "[227646.165923] NVRM: dmaAllocMapping_GM107: can't alloc VA space for mapping.\n\
[228976.344172] nvidia 0000:01:00.0: Using 47-bit DMA addresses\n";
        let l = parse_kernel_log(t);
        assert!(!l.rm_init_adapter_failed && !l.fallen_off_bus);
        assert!(l.fallen_off_gpus.is_empty() && l.rm_init_failed_gpus.is_empty());
    }

    #[test]
    fn a_report_opening_line_far_from_a_fall_off_names_nothing() {
        // NVIDIA/NVSentinel#155's first line, then (as in gpu-operator#649) other lines:
        // an address-less fall-off line three read lines later is not that report's
        let t = "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n\
[ 1097.650222] NVRM: loading NVIDIA UNIX Open Kernel Module\n\
[ 1097.650223] NVRM: loading NVIDIA UNIX Open Kernel Module\n\
[ 1097.650224] NVRM: loading NVIDIA UNIX Open Kernel Module\n\
[ 1843.308146] NVRM: fallen off the bus and is not responding to commands.\n";
        let l = parse_kernel_log(t);
        assert!(l.fallen_off_bus && l.fallen_off_gpus.is_empty());
    }
}
