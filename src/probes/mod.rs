//! THE list of probe kinds. A probe reads the host (only through [`Host`]) and returns one JSON
//! value whose fields are documented in [`ProbeKind::fields`]; rules' expressions read those
//! fields. Adding a kind means one new file and one line in [`PROBES`].
//!
//! A probe has three outcomes besides a value: `Unknown` (it tried and could not tell: an error,
//! a timeout, not supported), and `NotApplicable` (an input it needs, such as `--pid`, was not
//! given, or the evidence given does not cover it). Neither is ever turned into a value.

pub mod cluster_gpus;
pub mod command;
pub mod config;
pub mod config_sources;
pub mod container_gpus;
pub mod cuda_log;
pub mod cuda_stack;
pub mod dcgm;
pub mod devices;
pub mod dir;
pub mod diskstats;
pub mod driver_binding;
pub mod env;
pub mod fabric;
pub mod fabric_manager;
pub mod file;
pub mod fstab;
pub mod gpu_reset;
pub mod gpu_usage;
pub mod inputs;
pub mod kernel_modules;
pub mod logs;
pub mod mount_checks;
pub mod mounts;
pub mod nccl_errors;
pub mod nsys;
pub mod nvml;
pub mod nvml_sample;
pub mod open_files;
pub mod pressure;
pub mod process;
pub mod processes;
pub mod pyspy;
pub mod sysfs;
pub mod topology;
pub mod trace;

use crate::host::Host;
pub use crate::kinds::{NoParams, ParamsDecl, Problem};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

/// Inputs that only some probes need; they come from flags.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub pid: Option<u32>,
    pub config: Option<PathBuf>,
    pub env_file: Option<PathBuf>,
    pub trace: Option<PathBuf>,
    pub nccl_log: Option<PathBuf>,
    pub kernel_log: Option<PathBuf>,
    pub evidence: Vec<PathBuf>,
    /// `--deep`: also run the framework-level checks that start Python (seconds).
    pub deep: bool,
}

impl Inputs {
    /// Each input given, as its flag and value (`--config train.yaml`).
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = self.pid {
            out.push(format!("--pid {p}"));
        }
        for (flag, p) in [
            ("--config", &self.config),
            ("--env-file", &self.env_file),
            ("--trace", &self.trace),
            ("--nccl-log", &self.nccl_log),
            ("--kernel-log", &self.kernel_log),
        ] {
            if let Some(p) = p {
                out.push(format!("{flag} {}", p.display()));
            }
        }
        for p in &self.evidence {
            out.push(format!("--evidence {}", p.display()));
        }
        if self.deep {
            out.push("--deep".into());
        }
        out
    }
}

pub struct ProbeCtx<'a> {
    pub host: &'a dyn Host,
    pub inputs: &'a Inputs,
    /// Window for sampled probes (`--sample`). Zero means take a single reading.
    pub sample: Duration,
    /// When the engine stops waiting for this probe (`Duration::MAX`: never): a probe that
    /// starts a program caps its timeout at it, so that the program's process group has been
    /// killed by the time the probe is abandoned. Per run, so two evaluations in one process
    /// (tests, `gpufix test`) cannot see each other's.
    pub deadline: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProbeOutcome {
    Value(Value),
    Unknown(String),
    NotApplicable(String),
}

/// A probe kind as its file writes it: its typed parameters ([`crate::kinds`]: one struct per
/// kind, names and defaults in one place) reach [`Probe::run`] already parsed.
pub trait Probe: Sync {
    /// The parameters it takes in a playbook (serde defaults are the kind's defaults).
    type Params: DeserializeOwned + JsonSchema;
    fn name(&self) -> &'static str;
    /// One sentence: what it reads.
    fn doc(&self) -> &'static str;
    /// Output fields (dotted paths) with a short description each.
    fn fields(&self) -> &'static [(&'static str, &'static str)];
    /// True when the probe takes readings over the `--sample` window.
    fn sampled(&self) -> bool {
        false
    }
    /// Extra checks on parameter values beyond their declared types (a regex compiles, a path
    /// is absolute). Returns one message per problem.
    fn check(&self, _params: &Self::Params) -> Vec<String> {
        Vec::new()
    }
    fn run(&self, params: &Self::Params, ctx: &ProbeCtx) -> ProbeOutcome;
}

/// A probe kind with its parameter type erased, as [`PROBES`] holds it. Every [`Probe`] is one.
pub trait ProbeKind: Sync {
    fn name(&self) -> &'static str;
    /// One sentence: what it reads.
    fn doc(&self) -> &'static str;
    /// Output fields (dotted paths) with a short description each.
    fn fields(&self) -> &'static [(&'static str, &'static str)];
    /// The parameters it takes in a playbook, as a typed struct (see [`crate::kinds`]).
    fn params(&self) -> ParamsDecl;
    /// True when the probe takes readings over the `--sample` window.
    fn sampled(&self) -> bool;
    /// The kind's own checks on parameters that read as its struct (before templates render:
    /// a parameter whose template stands where another type goes is left out; nothing is
    /// checked when what remains does not read).
    fn check_params(&self, params: &Map<String, Value>) -> Vec<String>;
    /// Read the parameters as the kind's struct and run.
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome;
}

impl<P: Probe> ProbeKind for P {
    fn name(&self) -> &'static str {
        Probe::name(self)
    }
    fn doc(&self) -> &'static str {
        Probe::doc(self)
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        Probe::fields(self)
    }
    fn params(&self) -> ParamsDecl {
        ParamsDecl::of::<P::Params>()
    }
    fn sampled(&self) -> bool {
        Probe::sampled(self)
    }
    fn check_params(&self, params: &Map<String, Value>) -> Vec<String> {
        if let Ok(p) = crate::kinds::parse::<P::Params>(params) {
            return self.check(&p);
        }
        let mut rendered_later = params.clone();
        rendered_later.retain(|_, v| !v.as_str().is_some_and(crate::kinds::is_template));
        match crate::kinds::parse::<P::Params>(&rendered_later) {
            Ok(p) => self.check(&p),
            Err(_) => Vec::new(),
        }
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        let p = match crate::kinds::parse::<P::Params>(params) {
            Ok(p) => p,
            Err(e) => {
                return ProbeOutcome::Unknown(format!(
                    "parameters of probe `{}` after rendering: {e}",
                    Probe::name(self)
                ));
            }
        };
        Probe::run(self, &p, ctx)
    }
}

/// Every probe kind, in the order `gpufix list --probes` shows them.
pub static PROBES: &[&dyn ProbeKind] = &[
    &nvml::Nvml,
    &nvml_sample::NvmlSample,
    &devices::Devices,
    &kernel_modules::KernelModules,
    &logs::KernelLog,
    &dcgm::DcgmDiag,
    &dcgm::DcgmHealth,
    &mounts::Mounts,
    &fstab::Fstab,
    &diskstats::Diskstats,
    &pressure::Pressure,
    &sysfs::Sysfs,
    &file::File,
    &dir::Dir,
    &env::Env,
    &command::Command,
    &process::Process,
    &processes::Processes,
    &config::Config,
    &cuda_stack::CudaStack,
    &cuda_log::CudaCompat,
    &cuda_log::CudaLog,
    &trace::Trace,
    &pyspy::PyspyDumpProbe,
    &nsys::NsysStats,
    &logs::NcclLog,
    &nccl_errors::NcclErrors,
    &cluster_gpus::ClusterGpus,
    &fabric::IbPorts,
    &fabric_manager::FabricState,
    &driver_binding::DriverBinding,
    &logs::TorchMemory,
    &gpu_reset::GpuReset,
    &logs::XlaOom,
    &gpu_usage::GpuUsage,
    &topology::GpuTopology,
    &mount_checks::DataMounts,
    &mount_checks::Shm,
    &container_gpus::ContainerGpus,
    &open_files::OpenFiles,
];

/// The top-level output fields a probe kind documents (`gpus[].name` gives `gpus`).
pub fn output_fields(kind: &dyn ProbeKind) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let head = |f: &'static str| f.split(['.', '[', ' ', '/']).next().unwrap_or(f);
    for (names, _) in kind.fields() {
        // `a / b` documents two fields at once; `gpus[].name / uuid` two fields of `gpus`
        let mut parts = names.split(" / ");
        let first = parts.next().unwrap_or(names);
        let nested = first.contains(['.', '[']);
        for top in std::iter::once(head(first)).chain(parts.filter(|_| !nested).map(head)) {
            if !out.contains(&top) {
                out.push(top);
            }
        }
    }
    out
}

pub fn find(name: &str) -> Option<&'static dyn ProbeKind> {
    PROBES.iter().copied().find(|p| p.name() == name)
}

/// Check a probe's parameters (before templates render) against its declared types: unknown
/// names, missing required ones, wrong types and values outside an enum; then the kind's own
/// checks.
pub fn param_problems(kind: &dyn ProbeKind, params: &Map<String, Value>) -> Vec<Problem> {
    let mut errs = crate::kinds::check("probe", kind.name(), &kind.params(), params);
    // the kind's own checks read the parameters as its struct: leave out the ones already
    // reported, so that every problem is reported at once
    let mut readable = params.clone();
    for e in &errs {
        if let Some(name) = e.path.trim_start_matches('/').split('/').next() {
            readable.remove(name);
        }
    }
    errs.extend(kind.check_params(&readable).into_iter().map(|m| Problem {
        path: String::new(),
        message: m,
        help: format!("see `gpufix list --probes` for `{}`", kind.name()),
    }));
    errs
}

/// [`param_problems`] as messages.
pub fn check_params(kind: &dyn ProbeKind, params: &Map<String, Value>) -> Vec<String> {
    param_problems(kind, params)
        .into_iter()
        .map(|p| p.message)
        .collect()
}

/// Run a probe on rendered parameters: they must read as the kind's typed parameters first.
pub fn run_checked(
    kind: &dyn ProbeKind,
    params: &Map<String, Value>,
    ctx: &ProbeCtx,
) -> ProbeOutcome {
    kind.run(params, ctx)
}

/// A host file that could not be read: the path and the host's error (whose kind tells a
/// missing file from a refused one). A probe that needs the file is `unknown` with it.
#[derive(Debug, thiserror::Error)]
#[error("cannot read `{path}`: {source}")]
pub struct HostReadError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

impl From<HostReadError> for ProbeOutcome {
    fn from(e: HostReadError) -> Self {
        ProbeOutcome::Unknown(e.to_string())
    }
}

/// A host file as text.
pub fn read_text(host: &dyn Host, path: &str) -> Result<String, HostReadError> {
    host.read_file(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|source| HostReadError {
            path: path.to_string(),
            source,
        })
}

/// Check that a `regex` parameter, when given, compiles.
pub fn check_regex(kind: &str, regex: Option<&str>) -> Option<String> {
    regex::Regex::new(regex?)
        .err()
        .map(|e| format!("probe parameter `regex` of `{kind}` does not compile: {e}"))
}

/// Apply a `regex` parameter to `text`: `matches` (count) and `captures` (the named groups of
/// the first match that took part in it).
pub fn regex_fields(re: &regex::Regex, text: &str, out: &mut Map<String, Value>) {
    out.insert("matches".into(), Value::from(re.find_iter(text).count()));
    if let Some(c) = re.captures(text) {
        let mut caps = Map::new();
        for name in re.capture_names().flatten() {
            if let Some(m) = c.name(name) {
                caps.insert(name.to_string(), Value::from(m.as_str()));
            }
        }
        out.insert("captures".into(), Value::Object(caps));
    }
}

/// Test helper: run `kind` with JSON `params` on `host`.
#[cfg(test)]
pub(crate) fn run_with(
    kind: &dyn ProbeKind,
    host: &dyn Host,
    params: Value,
    inputs: &Inputs,
    sample: Duration,
) -> ProbeOutcome {
    let params = params.as_object().cloned().unwrap_or_default();
    let errs = check_params(kind, &params);
    assert!(errs.is_empty(), "bad params in test: {errs:?}");
    kind.run(
        &params,
        &ProbeCtx {
            host,
            inputs,
            sample,
            deadline: Duration::MAX,
        },
    )
}

/// Test helper: the value of a probe that must succeed.
#[cfg(test)]
pub(crate) fn value_of(outcome: ProbeOutcome) -> Value {
    match outcome {
        ProbeOutcome::Value(v) => v,
        other => panic!("expected a value, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_probe_an_evidence_kind_names_exists() {
        for k in crate::evidence::KINDS {
            for p in k.read_by() {
                assert!(
                    super::find(p).is_some(),
                    "evidence kind {} says probe `{p}` reads it; there is no such probe",
                    k.name()
                );
            }
        }
    }
}
