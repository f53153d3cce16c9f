//! THE registry of evidence kinds: what people paste into bug reports, and what a training job
//! leaves behind, turned into values that rules read. Each kind is one entry of [`KINDS`]: a
//! value implementing [`EvidenceKind`] that says what the kind is (name, one line, a command
//! that produces it), recognises it ([`EvidenceKind::detect`]), reads it
//! ([`EvidenceKind::parse`]), names the fields it yields and the probes that read them, and, for
//! a kind that describes a machine rather than a job, what it says about that machine
//! ([`EvidenceKind::host`]). Nothing else in the crate lists the kinds: detection, parsing,
//! the evidence host (`host::evidence`) and `gpufix list --evidence` all walk [`KINDS`].
//!
//! Every reader shares three promises:
//!
//! - it never panics, whatever the bytes: truncated, garbled, oversized;
//! - it parses what is there and leaves out what the text does not say, rather than guessing
//!   a default (a field a rule needs and the evidence lacks makes that rule `unknown`);
//! - its output is bounded: long lines and long lists are clipped (see [`MAX_ITEMS`]).
//!
//! # Adding a kind
//!
//! One new file plus one line:
//!
//! 1. `src/evidence/<kind>.rs`: the reader, written from the producing tool's own source or
//!    specification, cited at the top of the module (file and version); a test per field it
//!    reads, with a healthy and a problem example copied from a public source (cited). Then a
//!    unit struct implementing [`EvidenceKind`]:
//!    - `name`: kebab-case, unique (`nccl-log`); `doc`: one sentence; `example`: the command
//!      that produces the text (`NCCL_DEBUG=INFO torchrun ... 2>&1 | tee nccl.log`);
//!    - `fields`: the top-level fields of the parsed value, each with a short description (a
//!      test parses every kind's examples and fails on a field not declared);
//!    - `read_by`: the probe kinds that read it (a test checks they exist); a probe reads a
//!      job kind with `probes::inputs::evidence_of(&ctx.inputs.evidence, &your::YourKind)`;
//!    - `detect`: recognition from markers the tool always prints, given a [`Sniff`] (the head
//!      of the text, at most [`detect::HEAD`] bytes, so asking what a 200 MB paste is stays
//!      cheap); it must not claim prose that merely mentions the words;
//!    - `parse`: the reader, returning the parsed value as JSON ([`ParseError::NotThisKind`],
//!      with a sentence saying what was looked for, when the text holds nothing of this kind);
//!    - `host`, only for text that describes the machine (nvidia-smi output, mount tables):
//!      what it says about it, as a [`HostPart`]; job evidence leaves the default (`None`).
//! 2. One line in [`KINDS`]. The list is also the detection order: put a kind before any kind
//!    whose detector would also claim its text (a table before `-q` text, whose markers a
//!    table's header holds too).
//!
//! [`detect::detect`] recognises which kind of evidence a text is and [`parse`] reads it with
//! that kind's reader; [`segment::segment`] cuts a paste that holds several kinds into the parts
//! each kind recognises. A kind whose lines show it one at a time (log lines) also implements
//! `marker` and `has_markers`, so it is found among other text.

pub mod bandwidth_test;
pub mod collect_env;
pub mod container_spec;
pub mod cuda_compat;
pub mod cuda_errors;
pub mod cuda_libs;
pub mod cuda_stack;
pub mod cupy_config;
pub mod dcgm_exporter;
pub mod dcgm_exporter_log;
pub mod dcgmi;
pub mod dcgmi_stats;
pub mod detect;
pub mod device_query;
pub mod docker_info;
pub mod ds_report;
pub mod fabric_manager;
pub mod faulthandler;
pub mod gdb_backtrace;
pub mod ggml_abort;
pub mod gpu_arch;
pub mod gpu_scheduling;
pub mod gpustat;
pub mod ibdev2netdev;
pub mod iblinkinfo;
pub mod ibportstate;
pub mod ibstat;
pub mod ibstatus;
pub mod ibv_devinfo;
pub mod infiniband;
pub mod iostat;
pub mod jax_env_info;
pub mod jetson_release;
pub mod jobinfo;
pub mod jobstats;
pub mod kernel_log;
pub mod kube_events;
pub mod loader_worker;
pub mod lshca;
pub mod lsmod;
pub mod lspci;
pub(crate) mod memo;
pub mod mlxlink;
pub mod mount_text;
pub mod mounts;
#[cfg(test)]
mod mutation_tests;
pub mod nccl_errors;
pub mod nccl_log;
pub mod nsys_stats;
pub mod nvidia_smi;
pub mod nvidia_smi_error;
pub mod nvitop;
pub mod other_vendor;
pub mod p2p_bandwidth;
pub mod paddle_oom;
pub mod perftest;
pub mod pip_list;
pub mod pyspy_dump;
pub mod pystack_dump;
pub mod rdma_link;
pub mod sacct;
pub mod sacct_gpu;
pub(crate) mod scan;
pub mod scontrol_job;
pub mod seff;
pub mod segment;
pub mod shm_error;
pub mod show_gids;
pub mod slog_log;
pub mod smi_list;
pub mod smi_nvlink;
pub mod smi_p2p;
pub mod smi_reset;
pub mod smi_tables;
pub mod tensor_sharing;
pub mod torch_env;
pub mod torch_memory;
pub mod torch_wheels;
pub mod torchrun_failure;
pub mod trace;
pub mod whichllm;
pub mod xla_oom;

pub use detect::{detect, detect_file};

use crate::vocab::nvml::NvmlReading;
use serde_json::Value;

/// What a detector is given: the head of the text (at most [`detect::HEAD`] bytes), the same
/// head without markdown quote markers (a paste quoted in a reply, with `> ` before each line), and the
/// whole text as given (when a file is sniffed, only its head). A detector reads the head; it
/// scans past it only for one marker line that can sit anywhere (an error in a long log),
/// without collecting anything.
pub struct Sniff<'a> {
    pub head: &'a str,
    pub unquoted: &'a str,
    pub text: &'a str,
    /// The searches of `text` for a line anywhere in it, made once for the kinds that ask.
    pub(crate) late: &'a scan::Late<'a>,
}

impl<'a> Sniff<'a> {
    /// The head with leading whitespace removed.
    pub fn trimmed(&self) -> &'a str {
        self.head.trim_start()
    }
}

/// What a paste that describes a machine says about it; the evidence host
/// (`host::evidence::EvidenceHost`) answers the probes' questions from these.
#[derive(Debug, Clone)]
pub enum HostPart {
    /// GPU readings: they answer the `nvml` and `nvml.sample` probes.
    Nvml(NvmlReading),
    /// `nvidia-smi` failing to read the GPUs: the line it printed, NVML's error on that host.
    NvmlError(String),
    /// A file of the host, at its path (`/etc/fstab`, `/proc/mounts`), in its own format.
    File(&'static str, Vec<u8>),
    /// The text describes the host, but only its own probe reads it (`topo -m`, `df`).
    Shown,
}

/// Why a reader gave no value for a text. What callers do with it differs by variant: a part of
/// a paste that holds nothing its reader reads ([`ParseError::NotThisKind`],
/// [`ParseError::NoRows`]) is left out when other parts are read, while a refusal
/// ([`ParseError::TooLarge`]) stands for the whole input. The message is the sentence a person
/// sees after the file's name; a fix to suggest is in `help`, not in the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// The text holds nothing this reader reads (no table, header or block of its kind); the
    /// sentence says what was looked for.
    #[error("{0}")]
    NotThisKind(&'static str),
    /// The kind's header is there, but no rows under it.
    #[error("{0}")]
    NoRows(&'static str),
    /// Refused before it is read: larger than one host's output can be.
    #[error("{message}{}", help_line(help))]
    TooLarge {
        message: String,
        help: Option<String>,
    },
    /// The trace reader's refusal ([`trace::TraceError`]), as its sentence.
    #[error("{0}")]
    Trace(String),
    /// The parsed value could not be encoded as JSON.
    #[error("cannot encode the parsed evidence: {0}")]
    Encode(String),
}

impl ParseError {
    /// True when the text merely holds nothing of this kind (so other readers may read it),
    /// false for a refusal.
    pub fn is_not_this_kind(&self) -> bool {
        matches!(
            self,
            ParseError::NotThisKind(_) | ParseError::NoRows(_) | ParseError::Trace(_)
        )
    }
    /// What to do about it, when there is something to say.
    pub fn help(&self) -> Option<&str> {
        match self {
            ParseError::TooLarge { help, .. } => help.as_deref(),
            _ => None,
        }
    }
}

impl From<trace::TraceError> for ParseError {
    fn from(e: trace::TraceError) -> Self {
        ParseError::Trace(e.to_string())
    }
}

/// `help` as the line a message ends with, as [`crate::trust::TrustError`] prints it.
fn help_line(help: &Option<String>) -> String {
    help.as_ref()
        .map(|h| format!("\nhelp: {h}"))
        .unwrap_or_default()
}

/// One kind of evidence; see the module doc for how to add one.
pub trait EvidenceKind: Sync {
    /// Kebab-case, unique: what reports and `gpufix list --evidence` call it.
    fn name(&self) -> &'static str;
    /// One sentence: what the text is.
    fn doc(&self) -> &'static str;
    /// A command that produces it.
    fn example(&self) -> &'static str;
    /// Top-level fields of the value [`EvidenceKind::parse`] returns, each with a description.
    fn fields(&self) -> &'static [(&'static str, &'static str)];
    /// The probe kinds that read it, from the paste itself or through the evidence host.
    fn read_by(&self) -> &'static [&'static str];
    /// True when the text is of this kind, from its head.
    fn detect(&self, s: &Sniff) -> bool;
    /// The text read into the value rules see.
    fn parse(&self, text: &str) -> Result<Value, ParseError>;
    /// For text that describes the machine (and so stands in for the live host): what it says
    /// about it. `None` for job evidence (a log, a trace), which its probe reads directly and
    /// which can be combined with a live host.
    fn host(&self, _text: &str) -> Option<Result<HostPart, ParseError>> {
        None
    }
    /// True when [`EvidenceKind::host`] answers for this kind (whatever the text).
    fn describes_host(&self) -> bool {
        false
    }
    /// For a kind whose lines show it one at a time (an NCCL line, an OOM message, an Xid): true
    /// for such a line, wherever it sits. A paste is then read by this kind wherever those lines
    /// are (a training log that also holds a table), and its reader is given the whole text,
    /// reading only its own lines ([`segment`]). Kinds read as a block leave the default.
    fn marker(&self, _line: &str) -> bool {
        false
    }
    /// Phrases one of which every line [`EvidenceKind::marker`] accepts holds: a text too big
    /// to cut ([`segment`]) is searched for them once, and only the lines holding one are
    /// tested. Every kind with markers names them (a test holds it to that).
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[]
    }
    /// True when [`EvidenceKind::marker`] is implemented.
    fn has_markers(&self) -> bool {
        false
    }
    /// True for a document read whole (JSON, XML): never cut into parts.
    fn whole(&self) -> bool {
        false
    }
    /// True when this text, which this kind's detector claims, is one document to read whole
    /// (a YAML file whose anchors one part would lose): by default, [`EvidenceKind::whole`].
    fn whole_text(&self, _text: &str) -> bool {
        self.whole()
    }
    /// True when [`EvidenceKind::whole_text`] judges the text itself (a YAML file with anchors),
    /// rather than answering [`EvidenceKind::whole`] for any text: a run of blocks beside other
    /// output is then tried as one document ([`segment`]).
    fn judges_whole_text(&self) -> bool {
        false
    }
    /// True when this kind's `part` is shell commands that use the variables a script assigns
    /// above them (a wrapper's `docker run ${RUNTIME} ${NAME} … ${IMAGE}`): the part is then
    /// read with the script's one-line assignments above it put first ([`segment`]); they are
    /// not counted as lines it read. Kinds read as they stand leave the default.
    fn reads_assignments_above(&self, _part: &str) -> bool {
        false
    }
}

impl std::fmt::Debug for dyn EvidenceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for dyn EvidenceKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// Every evidence kind, in detection order (the first whose detector claims a text is its
/// kind) and the order `gpufix list --evidence` shows them.
pub static KINDS: &[&dyn EvidenceKind] = &[
    &nvidia_smi::NvidiaSmiXml,
    &trace::ChromeTrace,
    // before the nvidia-smi table, whose column heads nvitop's device table repeats
    &nvitop::NvitopKind,
    &smi_tables::Table,
    // before `-q` text: a `Fabric` section copied alone (`-q | grep -A 3 Fabric`) holds keys
    // that kind also reads; a whole `-q` stays that kind's
    &fabric_manager::FabricManagerKind,
    &nvidia_smi::NvidiaSmiText,
    &smi_tables::QueryCsv,
    // `dcgmi stats`: its section rows (`Execution Stats`, …) name no diag stage
    &dcgmi_stats::DcgmiStatsKind,
    &dcgmi::DcgmiDiag,
    &dcgmi::DcgmiHealth,
    &dcgmi::DcgmiDmon,
    &dcgmi::DcgmiDiscovery,
    // dcgm-exporter's series: `DCGM_FI_…{gpu="0",…} value`, no other kind's lines
    &dcgm_exporter::DcgmExporterKind,
    // dcgm-exporter's own log: one of its start-up records (`msg="Starting dcgm-exporter"`…)
    &dcgm_exporter_log::DcgmExporterLogKind,
    &smi_tables::Monitor,
    &gpustat::GpustatKind,
    // Slurm jobstats: its banner and meters are no other kind's
    &jobstats::JobstatsKind,
    // Slurm seff: `Job ID:` then its printf'd efficiency lines; after jobstats, whose metadata
    // also starts with `Job ID:`
    &seff::SeffKind,
    // the `jobinfo` job summary: its accounting fields padded to 20 columns (`%-20s: %s`)
    &jobinfo::JobinfoKind,
    // a site epilog's GPU statistics in a job's comment (`sacct -o comment`: sacct_gpu's JSON);
    // before sacct, whose parsable rows (`ID|{…}|`) would claim it
    &sacct_gpu::SacctGpuKind,
    // Slurm's job record and accounting table: `JobId=N JobName=` with its `KEY=value` lines,
    // a `JobID` header over its dash line or `ID|…` rows
    &scontrol_job::ScontrolJobKind,
    &sacct::SacctKind,
    &smi_tables::Topo,
    &nvidia_smi_error::NvidiaSmiError,
    &lspci::Lspci,
    &nccl_log::NcclLogKind,
    &pyspy_dump::PyspyDumpKind,
    &faulthandler::FaulthandlerKind,
    &pystack_dump::PystackDumpKind,
    &gdb_backtrace::GdbBacktraceKind,
    // ggml's abort (`FILE:LINE: GGML_ASSERT(…) failed` / `fatal error`) and glibc's frames: no
    // rule reads it; a CUDA error above it is the CUDA-runtime kind's
    &ggml_abort::GgmlAbortKind,
    // a DataLoader worker's death (`DataLoader worker (pid N) exited unexpectedly with exit code
    // C` / `is killed by signal: S`): no rule reads it; a bus error is shm-error-log's
    &loader_worker::LoaderWorkerKind,
    &nsys_stats::NsysStatsKind,
    &nsys_stats::NvprofSummaryKind,
    &ibstat::IbstatKind,
    &ibstatus::IbstatusKind,
    &ibv_devinfo::IbvDevinfoKind,
    &ibdev2netdev::Ibdev2netdevKind,
    &rdma_link::RdmaLinkKind,
    &lshca::LshcaKind,
    // perftest (ib_write_bw, …): its title, `Key : value` header pairs, report columns, port
    // state line or its own failures; before mlxlink, whose `Key : value` pages it resembles
    &perftest::PerftestKind,
    // infiniband-diags' iblinkinfo: `CA:`/`Switch:` headers over `==( 4X … Active/ LinkUp)==>` lines
    &iblinkinfo::IblinkinfoKind,
    &mlxlink::MlxlinkKind,
    &show_gids::ShowGidsKind,
    &ibportstate::IbportstateKind,
    &torch_memory::TorchMemoryKind,
    &shm_error::ShmErrorLog,
    &tensor_sharing::TensorSharingKind,
    &xla_oom::XlaOomKind,
    &paddle_oom::PaddleOomKind,
    &torchrun_failure::TorchrunFailureKind,
    // before the kernel log, whose timestamp test takes a launcher's `[80746] [rank0]:` prefix
    // for dmesg's; after the NCCL log and the OOM, whose probes read a whole log of their own
    &nccl_errors::NcclErrorsKind,
    &kernel_log::KernelLogKind,
    &container_spec::ContainerSpecKind,
    &kube_events::KubeEventsKind,
    // a scheduler's view of GPUs (node resource lists, admission and scheduling errors, GFD
    // labels, Slurm node records and gres errors): after the event table, whose rows it
    // reads only for `Insufficient nvidia.com/gpu`
    &gpu_scheduling::GpuSchedulingKind,
    &cuda_stack::CudaVersionKind,
    // after the NCCL log, the OOM and kernel-log kinds, which read a whole log of their own and
    // whose probes would lose it to these; the probes of the CUDA-runtime, collect_env and
    // NCCL-error kinds read every paste that holds their lines, whatever kind it was detected as
    // DeepSpeed's ds_report: before the CUDA-runtime kind, whose marker lines (PyTorch's
    // capability warning) a paste often holds above it, and before the torch build beside GPU
    // names, which would claim its `torch version` entry; the runtime lines are still read
    &ds_report::DsReportKind,
    &device_query::DeviceQueryKind,
    // JAX's print_environment_info(): before the CUDA-runtime kind, whose JAX warning a paste
    // often holds just above its `jax:` line (that warning is still read), and before the torch
    // build beside GPU names; its `$ nvidia-smi` table stays the table kind's
    &jax_env_info::JaxEnvInfoKind,
    // CuPy's show_config(): before the CUDA-runtime kind, whose lines (a traceback's NVRTC
    // error) a paste often holds beside it; those are still read
    &cupy_config::CupyConfigKind,
    &cuda_errors::CudaRuntimeKind,
    &collect_env::CollectEnvKind,
    &mount_text::Df,
    // sysstat's `iostat -x`: a `Device … %util` header over device rows, no other kind's
    &iostat::IostatKind,
    &mount_text::Mountinfo,
    &mount_text::MountOutput,
    &mounts::FstabKind,
    &mounts::ProcMounts,
    // before `nvidia-smi -L`, whose `GPU N: … (UUID: …)` lines it shares
    &smi_nvlink::NvlinkStatusKind,
    // late: kinds no rule reads, claiming only a block no other kind reads
    &smi_p2p::P2pKind,
    &smi_p2p::MigKind,
    // the CUDA samples' p2pBandwidthLatencyTest: no rule reads it
    &p2p_bandwidth::P2pBandwidthKind,
    // the CUDA samples' bandwidthTest: no rule reads it
    &bandwidth_test::BandwidthTestKind,
    // `docker info` (its runtimes): no rule reads it
    &docker_info::DockerInfoKind,
    // jetson-stats' `jetson_release` (a Jetson's JetPack, L4T and CUDA): no rule reads it
    &jetson_release::JetsonReleaseKind,
    // whichllm's `Hardware Info` panel (the GPUs it detected, or `No GPU detected`): no rule
    // reads it
    &whichllm::WhichllmHardwareKind,
    // another vendor's tool or error (rocm-smi, xpu-smi, a HIP error, …): late, so that a text
    // an NVIDIA kind reads stays that kind's; it only says what the text is
    &other_vendor::OtherVendorKind,
    // a torch build beside GPU names (ComfyUI, sglang, version prints): before the package list,
    // whose rows it also reads
    &torch_env::TorchEnvKind,
    &lsmod::LsmodKind,
    &pip_list::PipListKind,
    // a Go server's slog records (ollama): no rule reads them
    &slog_log::SlogLogKind,
    // last: a `GPU 0: <name> (UUID: …)` line is claimed only where no other kind reads the block
    &smi_list::SmiListKind,
];

/// The kind called `name`.
pub fn find(name: &str) -> Option<&'static dyn EvidenceKind> {
    KINDS.iter().copied().find(|k| k.name() == name)
}

/// Parses `text` as evidence of `kind` into a JSON value for rules to read.
pub fn parse(kind: &dyn EvidenceKind, text: &str) -> Result<Value, ParseError> {
    kind.parse(text)
}

/// A parsed value as JSON, for the kinds' [`EvidenceKind::parse`].
pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ParseError> {
    serde_json::to_value(v).map_err(|e| ParseError::Encode(e.to_string()))
}

// The evidence readers say `super::MAX_ITEMS`; the bound itself is vocabulary (formats use it).
pub use crate::vocab::MAX_ITEMS;
/// Longest free-text field (a log message, a kernel name) kept, in bytes.
pub const MAX_TEXT: usize = 512;

pub(crate) use crate::vocab::clip;

/// A corpus artifact's text (`tests/fixtures/corpus/NAME`), for the readers' unit tests.
#[cfg(test)]
pub(crate) fn corpus_text(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/corpus")
            .join(name),
    )
    .expect("corpus file")
}

/// The text without markdown quote markers, when it is quoted as a whole (a reply on GitHub
/// quotes a paste with `> ` before every line): each quoted line loses its `>` markers and the
/// one space after each, so the indentation the tool printed is kept. Text not mostly quoted is
/// returned as it is.
pub(crate) fn unquote(text: &str) -> std::borrow::Cow<'_, str> {
    // counted in one pass, not collected: every probe that may meet a quoted paste calls this
    // on the whole text, a large log included
    let (mut lines, mut quoted) = (0usize, 0usize);
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        quoted += usize::from(l.trim_start().starts_with('>'));
    }
    if lines == 0 || quoted * 2 <= lines {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut l = line;
        while let Some(r) = l.trim_start().strip_prefix('>') {
            l = r.strip_prefix(' ').unwrap_or(r);
        }
        out.push_str(l);
        out.push('\n');
    }
    std::borrow::Cow::Owned(out)
}

/// Lines of pasted text, skipping `#` comment lines (fixtures cite their source that way).
pub(crate) fn content_lines(text: &str) -> impl Iterator<Item = &str> {
    scan::lines(text).filter(|l| !l.trim_start().starts_with('#'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paste too large to be one host's is a refusal, with its help apart from the message;
    /// text that merely is not of a kind says what was looked for, and other readers may read it.
    #[test]
    fn a_refusal_is_told_from_text_of_another_kind() {
        let big = format!(
            "==============NVSMI LOG==============\n{}",
            "x".repeat(nvidia_smi::MAX_SMI_Q_BYTES)
        );
        let e = nvidia_smi::NvidiaSmiText.host(&big).unwrap().unwrap_err();
        assert!(
            matches!(e, ParseError::TooLarge { .. }) && !e.is_not_this_kind(),
            "{e:?}"
        );
        let help = e.help().unwrap();
        assert!(help.starts_with("give the output of one host"), "{help}");
        // printed as trust errors are: the message, then its help on a line of its own
        let shown = e.to_string();
        assert_eq!(
            shown.lines().nth(1),
            Some(format!("help: {help}").as_str()),
            "{shown}"
        );
        assert!(!shown.lines().next().unwrap().contains("help"), "{shown}");

        let e = nvidia_smi::NvidiaSmiText.parse("hello\n").unwrap_err();
        assert_eq!(
            e,
            ParseError::NotThisKind("no `nvidia-smi -q` fields found in the text")
        );
        assert!(e.is_not_this_kind() && e.help().is_none());
        let e = smi_tables::QueryCsv
            .parse("index, name, utilization.gpu [%]\n")
            .unwrap_err();
        assert!(
            matches!(e, ParseError::NoRows(_)) && e.is_not_this_kind(),
            "{e:?}"
        );
        let e = trace::ChromeTrace.parse("{\"nope\": 1}").unwrap_err();
        assert!(
            matches!(&e, ParseError::Trace(w) if w.starts_with("not a Chrome trace")),
            "{e:?}"
        );
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use std::path::PathBuf;

    pub fn fixture_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence")
    }

    pub fn fixture(rel: &str) -> String {
        let p = fixture_dir().join(rel);
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Every file under the directories `dirs`, in their subdirectories too.
    pub fn files_under(mut dirs: Vec<PathBuf>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    out.push(p);
                }
            }
        }
        out
    }

    /// Every file under `tests/fixtures/corpus` and `tests/fixtures/evidence` with its text
    /// (invalid UTF-8 replaced), one at a time, for the tests that hold a reader's phrase
    /// search to its line test over all the public text there is.
    pub fn every_fixture_text() -> impl Iterator<Item = (PathBuf, String)> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        files_under(vec![root.join("corpus"), root.join("evidence")])
            .into_iter()
            .filter_map(|p| {
                let bytes = std::fs::read(&p).ok()?;
                let t = String::from_utf8_lossy(&bytes).into_owned();
                Some((p, t))
            })
    }

    /// Every prefix of `text` cut at a multiple of `step` bytes (on char boundaries).
    pub fn prefixes(text: &str, step: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let mut end = i;
            while end > 0 && !text.is_char_boundary(end) {
                end -= 1;
            }
            out.push(&text[..end]);
            i += step;
        }
        out.push(text);
        out
    }
}
