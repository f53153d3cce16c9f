//! Judging a host from pasted diagnostics (`--evidence FILE`): `nvidia-smi -q` text or XML, the
//! default `nvidia-smi` table, `--query-gpu` CSV and `dmon` samples become the NVML reading;
//! `/etc/fstab`, `/proc/mounts`, `mount` output and mountinfo become those files. Everything
//! else answers "not in the evidence", which makes the rules that need it not-applicable:
//! nothing is ever read from the machine gpufix runs on. Job-side evidence (a profiler trace,
//! an NCCL log, a kernel log, a torch memory summary) is read by its probe directly and can be
//! combined with a live host; on a machine without an NVIDIA driver it is judged alone
//! ([`EvidenceHost::inputs_only`]), since that machine cannot be the one the job ran on.

use super::{CommandOutput, FileMeta, GpuSample, Host, NOT_IN_EVIDENCE, NvmlReading};
use crate::evidence::detect::{EvidenceKind, detect};
use crate::evidence::{mount_text, nvidia_smi, smi_tables};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most GPUs one pasted host may have. Every per-GPU rule judges each GPU against the whole
/// reading, so the work grows with the square of the count: a paste of hundreds of GPUs (several
/// hosts' output concatenated, or a hostile file) would take minutes and gigabytes.
pub const MAX_GPUS: usize = 64;

/// Largest `nvidia-smi -q` paste (text or XML) read: the XML of one H200 with every section is
/// 27 KB, so [`MAX_GPUS`] of them stay well under this.
pub const MAX_SMI_Q_BYTES: usize = 8 << 20;

pub struct EvidenceHost {
    names: Vec<String>,
    files: BTreeMap<String, Vec<u8>>,
    nvml: Option<NvmlReading>,
    /// nvidia-smi's own failure message, when that is what was pasted.
    nvml_error: Option<String>,
}

fn missing(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{what}: {NOT_IN_EVIDENCE}"),
    )
}

/// Kinds that describe a host (and so replace the live one) rather than a job.
pub fn describes_host(kind: EvidenceKind) -> bool {
    matches!(
        kind,
        EvidenceKind::NvidiaSmiText
            | EvidenceKind::NvidiaSmiXml
            | EvidenceKind::NvidiaSmiTable
            | EvidenceKind::NvidiaSmiCsv
            | EvidenceKind::NvidiaSmiMonitor
            | EvidenceKind::NvidiaSmiTopo
            | EvidenceKind::Fstab
            | EvidenceKind::ProcMounts
            | EvidenceKind::MountOutput
            | EvidenceKind::Mountinfo
            | EvidenceKind::Df
            | EvidenceKind::NvidiaSmiError
            | EvidenceKind::Ibstat
            | EvidenceKind::IbvDevinfo
            | EvidenceKind::Ibdev2netdev
    )
}

/// True when this machine has no NVIDIA driver loaded (a laptop, CI): a job's logs given here
/// describe another machine.
pub fn no_local_driver() -> bool {
    !Path::new("/proc/driver/nvidia").exists() && !Path::new("/dev/nvidiactl").exists()
}

impl EvidenceHost {
    /// A host that knows nothing: the inputs given (an NCCL log, a kernel log, a trace, a
    /// config) are judged on their own and every rule about a machine is not-applicable.
    pub fn inputs_only(why: &str) -> EvidenceHost {
        EvidenceHost {
            names: vec![why.to_string()],
            files: BTreeMap::new(),
            nvml: None,
            nvml_error: None,
        }
    }

    /// `None` when no file describes a host (only job evidence: keep the live host).
    pub fn from_files(paths: &[PathBuf]) -> anyhow::Result<Option<EvidenceHost>> {
        let mut h = EvidenceHost {
            names: Vec::new(),
            files: BTreeMap::new(),
            nvml: None,
            nvml_error: None,
        };
        for p in paths {
            // Job evidence (a log, a trace) is read by its own probe: knowing from the head that
            // it is one, leave it unread here rather than hold a whole paste for nothing. (Only
            // the shm-error check reads past the head, and it never makes a text describe a host.)
            if crate::evidence::detect::detect_file(p).is_some_and(|k| !describes_host(k)) {
                continue;
            }
            let text = crate::vocab::io::read_shared(p)
                .map_err(|e| anyhow::anyhow!("--evidence {}: {e}", p.display()))?;
            let Some(kind) = detect(&text) else {
                // job text (Python, a training config, a launcher line, a training log) is
                // read by the config probe, not as a host description
                if crate::formats::job_text::detect(&text).is_some() {
                    continue;
                }
                anyhow::bail!(
                    "--evidence {}: cannot tell what this is\nhelp: give nvidia-smi output (the table, -q text or -x XML, --query-gpu CSV, dmon, topo -m), an NCCL_DEBUG=INFO log, dmesg, a torch memory summary or OOM message, /etc/fstab, /proc/mounts, mount or df -h output, ibstat/ibv_devinfo/ibdev2netdev output, or a profiler trace",
                    p.display()
                );
            };
            if !describes_host(kind) {
                continue;
            }
            if matches!(
                kind,
                EvidenceKind::NvidiaSmiText | EvidenceKind::NvidiaSmiXml
            ) && text.len() > MAX_SMI_Q_BYTES
            {
                // its parse keeps a tree of every line: refuse before building it
                anyhow::bail!(
                    "--evidence {}: {:.1} MB of nvidia-smi -q output; one host's is under {} MiB (-q -x of {MAX_GPUS} GPUs is about 2 MB)\nhelp: give the output of one host (`nvidia-smi -q > smi.txt` on the node the job ran on), not several pasted together",
                    p.display(),
                    text.len() as f64 / 1e6,
                    MAX_SMI_Q_BYTES >> 20
                );
            }
            h.names.push(format!("{} ({})", name_of(p), kind.name()));
            match kind {
                EvidenceKind::NvidiaSmiText | EvidenceKind::NvidiaSmiXml => {
                    h.nvml = Some(
                        nvidia_smi::parse_nvidia_smi(&text)
                            .map_err(|e| anyhow::anyhow!("--evidence {}: {e}", p.display()))?,
                    );
                }
                EvidenceKind::NvidiaSmiTable
                | EvidenceKind::NvidiaSmiCsv
                | EvidenceKind::NvidiaSmiMonitor => {
                    let u = match kind {
                        EvidenceKind::NvidiaSmiTable => smi_tables::parse_table(&text),
                        EvidenceKind::NvidiaSmiCsv => smi_tables::parse_query_csv(&text),
                        _ => smi_tables::parse_monitor(&text),
                    }
                    .map_err(|e| anyhow::anyhow!("--evidence {}: {e}", p.display()))?;
                    h.nvml = Some(smi_tables::to_reading(&u));
                }
                EvidenceKind::Fstab => {
                    h.files
                        .insert("/etc/fstab".into(), text.as_bytes().to_vec());
                }
                EvidenceKind::ProcMounts => {
                    h.files
                        .insert("/proc/mounts".into(), text.as_bytes().to_vec());
                }
                EvidenceKind::MountOutput => {
                    h.files.insert(
                        "/proc/mounts".into(),
                        mount_text::mount_output_to_proc_mounts(&text).into_bytes(),
                    );
                }
                EvidenceKind::Mountinfo => {
                    h.files.insert(
                        "/proc/mounts".into(),
                        mount_text::mountinfo_to_proc_mounts(&text).into_bytes(),
                    );
                }
                EvidenceKind::NvidiaSmiError => {
                    h.nvml_error = crate::evidence::detect::nvidia_smi_error_line(&text)
                        .map(|l| format!("{l} (nvidia-smi output in {})", name_of(p)));
                }
                // topo -m and df are read by their own probes; they still describe that host
                _ => {}
            }
            if let Some(r) = &h.nvml
                && r.gpus.len() > MAX_GPUS
            {
                anyhow::bail!(
                    "--evidence {}: nvidia-smi output of {} GPUs; one host has at most {MAX_GPUS}\nhelp: give the output of one host (`nvidia-smi -q > smi.txt` on the node the job ran on), not several pasted together",
                    p.display(),
                    r.gpus.len()
                );
            }
        }
        Ok(if h.names.is_empty() { None } else { Some(h) })
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

impl Host for EvidenceHost {
    fn describe(&self) -> String {
        format!("evidence {}", self.names.join(", "))
    }
    fn is_live(&self) -> bool {
        false
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        self.files.get(path).cloned().ok_or_else(|| missing(path))
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        Err(missing(path))
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        Err(missing(path))
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        Err(missing(path))
    }
    fn run(&self, argv: &[String], _timeout: Duration) -> io::Result<CommandOutput> {
        Err(missing(&format!("`{}`", argv.join(" "))))
    }
    fn nvml(&self) -> Result<NvmlReading, String> {
        match (&self.nvml, &self.nvml_error) {
            (Some(r), _) => Ok(r.clone()),
            // the paste is nvidia-smi failing: NVML could not read the GPUs on that host
            (None, Some(e)) => Err(e.clone()),
            (None, None) => Err(format!("NVML readings: {NOT_IN_EVIDENCE}")),
        }
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, String> {
        match &self.nvml {
            Some(r) => Ok(r.gpus.iter().map(|g| g.sample()).collect()),
            None => Err(format!("NVML samples: {NOT_IN_EVIDENCE}")),
        }
    }
    fn env(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
    fn has_env(&self) -> bool {
        false
    }
    fn now(&self) -> f64 {
        0.0
    }
    fn sleep(&self, _d: Duration) {}
    fn cpu_count(&self) -> usize {
        0
    }
}
