//! Judging a host from pasted diagnostics (`--evidence FILE`): `nvidia-smi -q` text or XML, the
//! default `nvidia-smi` table, `--query-gpu` CSV and `dmon` samples become the NVML reading;
//! `/etc/fstab`, `/proc/mounts`, `mount` output and mountinfo become those files. Everything
//! else answers "not in the evidence", which makes the rules that need it not-applicable:
//! nothing is ever read from the machine gpufix runs on. Job-side evidence (a profiler trace,
//! an NCCL log, a kernel log, a torch memory summary) is read by its probe directly and can be
//! combined with a live host; on a machine without an NVIDIA driver it is judged alone
//! ([`EvidenceHost::inputs_only`]), since that machine cannot be the one the job ran on.

use super::{CommandOutput, FileMeta, GpuSample, Host, HostError, NOT_IN_EVIDENCE, NvmlReading};
use crate::evidence::segment::{nearest, segment_shared};
use crate::evidence::{EvidenceKind, HostPart};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::evidence::nvidia_smi::{MAX_GPUS, MAX_SMI_Q_BYTES};

pub struct EvidenceHost {
    names: Vec<String>,
    files: BTreeMap<String, Vec<u8>>,
    nvml: Option<NvmlReading>,
    /// nvidia-smi's own failure message, when the paste holds one: it is what [`Host::nvml`]
    /// answers even beside a reading.
    nvml_error: Option<String>,
}

fn missing(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{what}: {NOT_IN_EVIDENCE}"),
    )
}

/// Kinds that describe a host (and so replace the live one) rather than a job.
pub fn describes_host(kind: &dyn EvidenceKind) -> bool {
    kind.describes_host()
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
            let big = std::fs::metadata(p)
                .is_ok_and(|m| m.len() > crate::evidence::segment::SEGMENT_MAX as u64);
            if big && crate::evidence::detect_file(p).is_some_and(|k| !k.describes_host()) {
                continue;
            }
            let text = crate::vocab::io::read_shared(p)
                .map_err(|e| anyhow::anyhow!("--evidence {}: {e}", p.display()))?;
            let reading = segment_shared(&text);
            if reading.parts.is_empty() {
                // job text (Python, a training config, a launcher line, a training log) is
                // read by the config probe, not as a host description
                if crate::evidence::segment::job_text_in_paste(&text).is_some() {
                    continue;
                }
                // a post (an issue body, a question) whose paste holds no output gpufix reads:
                // nothing in it can be judged, which is an answer (every rule about the host
                // not-applicable: the paste, not this machine, is what was given); the report's
                // notes say so and what to give instead. A text that is neither prose nor a
                // kind gpufix reads is the input's error.
                if crate::evidence::segment::is_prose(&text) {
                    h.names
                        .push(format!("{} (prose: nothing read)", name_of(p)));
                    continue;
                }
                // a post's own table, as the page rendered it (a label and a value per row)
                if crate::evidence::segment::is_rendered_table(&text) {
                    h.names.push(format!(
                        "{} (a table a page rendered: nothing read)",
                        name_of(p)
                    ));
                    continue;
                }
                let near = match nearest(&text) {
                    Some((k, n, line)) => {
                        format!("; the nearest kind is {} (line {n}: `{line}`)", k.name())
                    }
                    None => String::new(),
                };
                return Err(crate::trust::TrustError {
                    message: format!(
                        "--evidence {}: cannot tell what this is: no line reads as any kind gpufix knows{near}",
                        p.display()
                    ),
                    help: "`gpufix list --evidence` lists the kinds of text gpufix reads, with a command that produces each".into(),
                }
                .into());
            }
            let mut gpus = 0;
            let several = reading.parts.len() > 1;
            for piece in &reading.parts {
                let Some(part) = piece.kind.host(&piece.text) else {
                    continue;
                };
                // a part its reader cannot read beside parts that others read (an nvidia-smi
                // banner and column heads pasted above a CUDA error, no GPU row under them)
                // leaves the rest of the paste to be read; alone, it is the input's error
                if several && part.is_err() {
                    continue;
                }
                h.add(p, piece.kind, part, &mut gpus)?;
            }
        }
        Ok(if h.names.is_empty() { None } else { Some(h) })
    }

    /// What one part of a paste says about the host. `gpus`: the GPUs the file's parts have
    /// shown so far; parts of one file that together show more GPUs than one host has are
    /// several hosts' output pasted together, refused like one part of that many.
    fn add(
        &mut self,
        p: &Path,
        kind: &dyn EvidenceKind,
        part: Result<HostPart, crate::evidence::ParseError>,
        gpus: &mut usize,
    ) -> anyhow::Result<()> {
        let part = part.map_err(|e| anyhow::anyhow!("--evidence {}: {e}", p.display()))?;
        self.names.push(format!("{} ({})", name_of(p), kind.name()));
        match part {
            // an lspci paste adds its links to the GPUs another paste shows: the same GPUs,
            // not more of them
            HostPart::Nvml(r) => {
                if !crate::evidence::lspci::is_links_only(&r) {
                    *gpus += r.gpus.len();
                }
                self.nvml = Some(crate::evidence::lspci::combine(self.nvml.take(), r));
            }
            HostPart::NvmlError(line) => {
                self.nvml_error = Some(format!("{line} (nvidia-smi output in {})", name_of(p)))
            }
            HostPart::File(path, bytes) => {
                self.files.insert(path.to_string(), bytes);
            }
            // topo -m and df are read by their own probes; they still describe that host
            HostPart::Shown => {}
        }
        if *gpus > MAX_GPUS {
            return Err(crate::trust::TrustError {
                message: format!(
                    "--evidence {}: nvidia-smi output of {gpus} GPUs; one host has at most {MAX_GPUS}",
                    p.display(),
                ),
                help: "give the output of one host (`nvidia-smi -q > smi.txt` on the node the job ran on), not several pasted together".into(),
            }
            .into());
        }
        Ok(())
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

impl Host for EvidenceHost {
    fn describe(&self) -> String {
        if self.files.is_empty() && self.nvml.is_none() && self.nvml_error.is_none() {
            // inputs_only: the reason is the whole description
            return self.names.join(", ");
        }
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
    fn nvml(&self) -> Result<NvmlReading, HostError> {
        match (&self.nvml, &self.nvml_error) {
            // the paste is nvidia-smi failing: NVML could not read the GPUs where it ran. A
            // reading beside it (the host's table above the container's failure, another
            // machine's output) does not undo the failure the paste shows.
            (_, Some(e)) => Err(HostError::NvmlInit { message: e.clone() }),
            (Some(r), None) => Ok(r.clone()),
            (None, None) => Err(HostError::NotInEvidence {
                what: "NVML readings".into(),
            }),
        }
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        match &self.nvml {
            Some(r) => Ok(r.gpus.iter().map(|g| g.sample()).collect()),
            None => Err(HostError::NotInEvidence {
                what: "NVML samples".into(),
            }),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The H200 host recorded read-only (`../shared/hosts/h200-vm`, copied into
    /// tests/fixtures/hosts): its table and its `-q -d TEMPERATURE,POWER`, one paste.
    fn recorded(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts/h200-vm/commands")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn nvml_of(text: &str) -> NvmlReading {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("paste.txt");
        std::fs::write(&p, text).unwrap();
        let h = EvidenceHost::from_files(&[p]).unwrap().unwrap();
        h.nvml().unwrap()
    }

    #[test]
    fn a_table_and_q_sections_of_one_machine_fill_each_other_in_either_order() {
        let table = recorded("nvidia-smi.txt");
        let q = recorded("nvidia-smi_-q_-d_TEMPERATURE,POWER.txt");
        // alone: the table has utilization and memory and no default power limit, the
        // sections the default limit and neither utilization nor memory
        let t = nvml_of(&table);
        assert_eq!(t.gpus[0].utilization_gpu.ok(), Some(&0));
        assert!(t.gpus[0].memory_total.ok().is_some());
        assert!(t.gpus[0].power_default_limit_mw.ok().is_none());
        let s = nvml_of(&q);
        assert!(s.gpus[0].utilization_gpu.ok().is_none());
        assert!(s.gpus[0].memory_total.ok().is_none());
        assert_eq!(s.gpus[0].power_default_limit_mw.ok(), Some(&700_000));
        for paste in [format!("{table}\n{q}"), format!("{q}\n{table}")] {
            let r = nvml_of(&paste);
            assert_eq!(r.gpus.len(), 1, "one GPU, read twice");
            assert_eq!(r.gpus[0].utilization_gpu.ok(), Some(&0));
            assert_eq!(r.gpus[0].memory_total, t.gpus[0].memory_total);
            assert_eq!(r.gpus[0].power_default_limit_mw.ok(), Some(&700_000));
            assert_eq!(
                r.driver_version.ok().map(String::as_str),
                Some("580.159.04")
            );
        }
    }

    #[test]
    fn another_machine_s_gpus_are_kept_beside_the_first() {
        // the H200's `-q` sections, then another machine's idle table (another bus id)
        let q = recorded("nvidia-smi_-q_-d_TEMPERATURE,POWER.txt");
        let other = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/h108_smi_immich13831_gtx1660_idle_container.txt"),
        )
        .unwrap();
        let r = nvml_of(&format!("{q}\n{other}"));
        assert_eq!(r.gpus.len(), 2);
        let h200 = r
            .gpus
            .iter()
            .find(|g| g.pci_bus_id.ok().is_some_and(|b| b.ends_with("00:06.0")));
        assert_eq!(
            h200.and_then(|g| g.power_default_limit_mw.ok()),
            Some(&700_000)
        );
        let other = r
            .gpus
            .iter()
            .find(|g| g.name.ok().is_some_and(|n| n.contains("GTX 1660")));
        assert_eq!(other.and_then(|g| g.memory_used.ok()), Some(&0));
    }

    #[test]
    fn two_machines_gpus_at_one_bus_id_stay_two() {
        // corpus h26 (a TITAN V's `-q`, bus 01:00.0) and h108 (a GTX 1660's table, 01:00.0):
        // one bus id, two names, two GPUs; neither takes the other's power limits
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let q = std::fs::read_to_string(corpus.join("h26_smiq_gpud_testdata_560_titanv_idle.txt"))
            .unwrap();
        let table =
            std::fs::read_to_string(corpus.join("h108_smi_immich13831_gtx1660_idle_container.txt"))
                .unwrap();
        for paste in [format!("{q}\n{table}"), format!("{table}\n{q}")] {
            let r = nvml_of(&paste);
            assert_eq!(r.gpus.len(), 2);
            let titan = r
                .gpus
                .iter()
                .find(|g| g.name.ok().is_some_and(|n| n.contains("TITAN V")));
            let gtx = r
                .gpus
                .iter()
                .find(|g| g.name.ok().is_some_and(|n| n.contains("GTX 1660")));
            let (Some(titan), Some(gtx)) = (titan, gtx) else {
                panic!("{:?}", r.gpus.iter().map(|g| &g.name).collect::<Vec<_>>())
            };
            assert_eq!(gtx.power_limit_mw.ok(), Some(&125_000));
            assert_ne!(
                gtx.power_default_limit_mw.ok(),
                titan.power_default_limit_mw.ok()
            );
        }
    }

    #[test]
    fn one_machine_s_table_dmon_and_query_loop_are_one_gpu() {
        // made on the H200 by bench/mixed_h200.sh: dmon and the CSV name no bus id, so they
        // are matched by the GPU index nvidia-smi gives all three
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence/mixed_h200");
        let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        let (table, dmon, csv, q) = (
            read("table.txt"),
            read("dmon.txt"),
            read("csv.txt"),
            read("q_sections.txt"),
        );
        let t = nvml_of(&table);
        for paste in [
            format!("{table}\n{dmon}\n{csv}"),
            format!("{csv}\n{dmon}\n{table}"),
            format!("{q}\n{table}"),
            format!("{table}\n{q}"),
        ] {
            let r = nvml_of(&paste);
            assert_eq!(r.gpus.len(), 1, "{paste}");
            assert_eq!(r.gpus[0].pci_bus_id, t.gpus[0].pci_bus_id);
            assert_eq!(r.gpus[0].memory_total.ok(), Some(&(143771 * 1024 * 1024)));
        }
    }
}
