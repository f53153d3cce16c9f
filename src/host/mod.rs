//! Every read and write of the machine goes through [`Host`].
//!
//! Three implementations share the probes' code path: [`real::RealHost`] (this machine, or a
//! tree mounted at `--root`), [`recorded::SnapshotHost`] (a JSON file written by
//! `gpufix snapshot`) and [`recorded::RecordingHost`] (wraps another host and remembers every
//! answer, which is how a snapshot is made). Probes never touch `std::fs` or NVML directly, so a
//! recorded host replays exactly what a live one saw.

pub mod cuda_cache;
pub mod cuda_check;
pub mod error;
pub mod evidence;
pub mod real;
pub mod recorded;
pub mod remembered;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::time::Duration;

pub use crate::vocab::nvml::{Field, GpuReading, GpuSample, NvmlReading};
pub use cuda_check::CudaCheck;
pub use error::HostError;

/// What a command printed. `timed_out` means the whole process group was killed at the deadline.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CommandOutput {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// File metadata as the probes and fixes need it (never follows a final symlink).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileMeta {
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: String,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub len: u64,
    pub nlink: u64,
}

/// The machine as gpufix sees it. Paths are always the host's own absolute paths (`/proc/modules`);
/// an implementation maps them (under `--root`, into a snapshot) as it needs.
pub trait Host: Send + Sync {
    /// Human description for reports: `this host`, `snapshot h200.json`, `root /host`.
    fn describe(&self) -> String;
    /// True when reads reflect a live machine (sampling sleeps for real).
    fn is_live(&self) -> bool;
    /// True when reading again may see a later moment: a live machine, or a recording that
    /// holds the readings a live run took one after another. A rule with `recheck_after` is
    /// read a second time only here (pasted text holds one moment).
    fn can_read_again(&self) -> bool {
        self.is_live()
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>>;
    /// Entry names of a directory, sorted.
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>>;
    fn metadata(&self, path: &str) -> io::Result<FileMeta>;
    fn read_link(&self, path: &str) -> io::Result<String>;
    /// Run an argv (never a shell) in its own process group; the deadline kills the group.
    fn run(&self, argv: &[String], timeout: Duration) -> io::Result<CommandOutput>;
    /// One full NVML reading of every GPU. `Err` means NVML could not be initialised at all.
    fn nvml(&self) -> Result<NvmlReading, HostError>;
    /// A light NVML reading (utilization, clocks, power) used repeatedly by sampled probes.
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError>;
    /// Each GPU's PCIe throughput (NVML's byte counters over its own 20 ms window), for
    /// `gpufix record`; not part of [`Host::nvml_sample`] because each read costs that window.
    /// `Err` where this host cannot read it (a snapshot, pasted evidence).
    fn nvml_pcie(&self) -> Result<Vec<PcieThroughput>, HostError> {
        Err(HostError::unsupported(
            self.describe(),
            "PCIe throughput is not recorded here",
        ))
    }
    /// Each GPU's PCIe byte counters since the driver loaded (NVML fields
    /// `NVML_FI_DEV_PCIE_COUNT_RX_BYTES`/`TX_BYTES`, driver 535 and later): a read costs about
    /// 0.3 ms where [`Host::nvml_pcie`] waits 21 ms per direction, and a rate from two of them
    /// covers the whole interval, not NVML's 20 ms window. `Err` where this host cannot read them.
    fn nvml_pcie_bytes(&self) -> Result<Vec<PcieBytes>, HostError> {
        Err(HostError::unsupported(
            self.describe(),
            "PCIe byte counters are not recorded here",
        ))
    }
    /// The native CUDA check ([`cuda_check`]: context, copy and a tiny kernel on every GPU CUDA
    /// sees) under `deadline`. A check that ran and failed is `Ok` with `ok: false`; `Err`
    /// means this host cannot run it (pasted evidence, a snapshot that did not record it).
    fn cuda_check(&self, _deadline: Duration) -> Result<CudaCheck, HostError> {
        Err(HostError::unsupported(
            self.describe(),
            "the CUDA check cannot run here",
        ))
    }
    /// Read a file a job named (through its argv, working directory, environment, config
    /// discovery, launch script or Python sources) with the job owner's authority, inside the
    /// job's root, checked on the opened descriptor: see [`crate::authority`]. `path` is a host
    /// path (`/proc/PID/root/…` for a job in another mount namespace); at most `max` bytes of a
    /// regular file. A recorded host answers what it recorded; a live host that cannot act as
    /// the owner refuses rather than read as root.
    fn read_job_file(&self, _pid: u32, path: &str, max: u64) -> io::Result<Vec<u8>> {
        if self.is_live() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{}: cannot read {path} as the job's owner", self.describe()),
            ));
        }
        let too_large = || {
            io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("{path} is larger than {} MiB, not read", max >> 20),
            )
        };
        match self.metadata(path) {
            Ok(m) if m.kind != "file" => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{path} is a {}, not read", m.kind),
                ));
            }
            Ok(m) if m.len > max => return Err(too_large()),
            _ => {}
        }
        let b = self.read_file(path)?;
        if b.len() as u64 > max {
            return Err(too_large());
        }
        Ok(b)
    }
    /// The owner a job-derived file was read as ([`Host::read_job_file`]): a fix writes it as
    /// that owner. `None` for a file not found through a job.
    fn job_file_owner(&self, _path: &str) -> Option<crate::authority::Owner> {
        None
    }
    /// Run an argv the job chose (its interpreter, for `--deep`) as the job's owner: its uid,
    /// gid and groups, no capabilities, `no_new_privs`, a minimal environment. A recorded host
    /// answers what it recorded; a live host that cannot drop to the owner refuses.
    fn run_as_job(
        &self,
        _pid: u32,
        argv: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        if self.is_live() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{}: cannot run a job's program as its owner",
                    self.describe()
                ),
            ));
        }
        self.run(argv, timeout)
    }
    /// Start slow set-up (NVML) in the background so that it overlaps with loading playbooks;
    /// called once by a session that will probe. Hosts with nothing to warm up do nothing.
    fn warm_up(&self) {}
    /// gpufix's own process environment (what a job launched from this shell would inherit).
    fn env(&self) -> BTreeMap<String, String>;
    /// Seconds since the Unix epoch.
    fn now(&self) -> f64;
    /// Wait between two samples. Recorded hosts return at once.
    fn sleep(&self, d: Duration);
    /// Number of online CPUs.
    fn cpu_count(&self) -> usize;
    /// False when the host's own environment is unknown (judging pasted evidence).
    fn has_env(&self) -> bool {
        true
    }

    /// Whether a command run here (`dmesg`, `journalctl` without a file) reads the kernel of
    /// the host being judged. False under `--root`: this machine's ring buffer and journal
    /// belong to another kernel (a container's node, or the machine holding a copied tree), so
    /// the kernel log is read from the root's own files instead.
    fn commands_see_its_kernel(&self) -> bool {
        true
    }
    /// The newest `max` bytes of a host file (all of it when smaller) and the file's size,
    /// for logs that may be larger than [`Host::read_file`] takes. The default reads the
    /// whole file through [`Host::read_file`] (its cap applies), which is what a recorded host
    /// replays.
    fn read_file_tail(&self, path: &str, max: u64) -> io::Result<(Vec<u8>, u64)> {
        let mut b = self.read_file(path)?;
        let total = b.len() as u64;
        if total > max {
            b.drain(..(total - max) as usize);
        }
        Ok((b, total))
    }
    /// Run a helper program on host files: `argv`, then `file_flag` joined to each of
    /// `files`. A live host opens each file itself (inside `--root`, no link out, a regular
    /// file) and hands the program `/proc/<gpufix>/fd/N`, so the program reads exactly the
    /// file that was checked; the default names the host paths, which is what a recorded host
    /// replays.
    fn run_on_files(
        &self,
        argv: &[String],
        file_flag: &str,
        files: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        let mut argv = argv.to_vec();
        argv.extend(files.iter().map(|f| format!("{file_flag}{f}")));
        self.run(&argv, timeout)
    }

    // --- changes (fixes). Hosts that cannot make a change say so; nothing is faked. ---

    /// Where a host path lives on this machine's filesystem (under `--root`), for file fixes.
    /// `None` for hosts that have no filesystem behind them (a snapshot).
    fn fs_path(&self, _path: &str) -> Option<std::path::PathBuf> {
        None
    }
    /// Write a runtime value under /proc/sys or /sys (sysctl, sysfs).
    fn write_runtime(&self, path: &str, _value: &str) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: cannot write {path}", self.describe()),
        ))
    }
    /// Apply one NVML setting to one GPU.
    fn nvml_set(&self, _gpu: u32, _setting: &NvmlSetting) -> Result<(), HostError> {
        Err(HostError::unsupported(
            self.describe(),
            "cannot change GPU settings",
        ))
    }
    /// Load (`true`) or unload a kernel module.
    fn set_module(&self, name: &str, _loaded: bool) -> Result<(), HostError> {
        Err(HostError::unsupported(
            self.describe(),
            format!("cannot load or unload `{name}`"),
        ))
    }
    /// Remount a mount point with the given options (`remount,noatime`).
    fn remount(&self, mount_point: &str, _options: &str) -> Result<(), HostError> {
        Err(HostError::unsupported(
            self.describe(),
            format!("cannot remount {mount_point}"),
        ))
    }
}

/// One GPU's PCIe throughput, KB/s (NVML's unit), as [`Host::nvml_pcie`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieThroughput {
    pub index: u32,
    pub rx_kb_s: Field<u32>,
    pub tx_kb_s: Field<u32>,
}

/// One GPU's PCIe byte counters as [`Host::nvml_pcie_bytes`] reads them: monotonic since the
/// driver loaded; 32 bits wide on some drivers (580 on an H200 wraps at 4 GiB), 64 on others.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieBytes {
    pub index: u32,
    pub rx: Field<u64>,
    pub tx: Field<u64>,
}

/// A GPU setting a fix may change through NVML.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "setting")]
pub enum NvmlSetting {
    Persistence { enabled: bool },
    PowerLimit { milliwatts: u32 },
    ResetApplicationClocks,
    ApplicationClocks { memory_mhz: u32, graphics_mhz: u32 },
}

/// What an evidence host answers for anything the pasted text does not cover.
pub const NOT_IN_EVIDENCE: &str = "not in the evidence";

pub fn not_found(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, what.to_string())
}

/// The host's name and machine id as the host itself records them: what fleet reports key on
/// (a JUnit suite per host, a Slurm node, a Prometheus instance). The name comes from
/// `/proc/sys/kernel/hostname`, then `/etc/hostname`; the id from `/etc/machine-id`. Both are
/// read through the host (so `--root` and snapshots give the judged machine's, not this one's)
/// and checked: a name is at most 253 printable ASCII characters, an id is 32 hex digits.
/// Without a usable name, [`Host::describe`] stands in (`snapshot node17.json`).
pub fn identity(host: &dyn Host) -> (String, Option<String>) {
    fn first_line(host: &dyn Host, path: &str, max: usize) -> Option<String> {
        let meta = host.metadata(path).ok()?;
        // A regular file of at most a line (`/proc` files report length 0); never a FIFO or a
        // device under a hostile `--root`.
        if meta.kind != "file" || meta.len > max as u64 + 1 {
            return None;
        }
        let bytes = host.read_file(path).ok()?;
        let text = std::str::from_utf8(bytes.get(..bytes.len().min(max + 1))?).ok()?;
        let line = text.lines().next()?.trim();
        (!line.is_empty() && line.len() <= max).then(|| line.to_string())
    }
    let name = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|p| first_line(host, p, 253))
        .find(|n| {
            n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
        })
        .unwrap_or_else(|| host.describe());
    let machine_id = first_line(host, "/etc/machine-id", 32)
        .filter(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()));
    (name, machine_id)
}
