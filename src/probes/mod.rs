//! THE list of probe kinds. A probe reads the host (only through [`Host`]) and returns one JSON
//! value whose fields are documented in [`ProbeKind::fields`]; rules' expressions read those
//! fields. Adding a kind means one new file and one line in [`PROBES`].
//!
//! A probe has three outcomes besides a value: `Unknown` (it tried and could not tell: an error,
//! a timeout, not supported), and `NotApplicable` (an input it needs, such as `--pid`, was not
//! given, or the evidence given does not cover it). Neither is ever turned into a value.

pub mod command;
pub mod config;
pub mod cuda_stack;
pub mod devices;
pub mod dir;
pub mod diskstats;
pub mod env;
pub mod file;
pub mod fstab;
pub mod inputs;
pub mod kernel_modules;
pub mod logs;
pub mod mounts;
pub mod nvml;
pub mod nvml_sample;
pub mod pressure;
pub mod process;
pub mod processes;
pub mod sysfs;
pub mod trace;

use crate::host::Host;
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

pub struct ProbeCtx<'a> {
    pub host: &'a dyn Host,
    pub inputs: &'a Inputs,
    /// Window for sampled probes (`--sample`). Zero means take a single reading.
    pub sample: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProbeOutcome {
    Value(Value),
    Unknown(String),
    NotApplicable(String),
}

/// A parameter a probe accepts in a playbook (`probes: { x: { kind: file, path: ..., parse: yaml } }`).
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub required: bool,
    /// `string`, `integer`, `number`, `boolean`, `array`, `object`, or `string|array`
    pub ty: &'static str,
    pub doc: &'static str,
}

pub trait ProbeKind: Sync {
    fn name(&self) -> &'static str;
    /// One sentence: what it reads.
    fn doc(&self) -> &'static str;
    /// Output fields (dotted paths) with a short description each.
    fn fields(&self) -> &'static [(&'static str, &'static str)];
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    /// True when the probe takes readings over the `--sample` window.
    fn sampled(&self) -> bool {
        false
    }
    /// Extra checks on parameter values beyond their presence and type (regex compiles, enum
    /// values). Returns one message per problem.
    fn check_params(&self, _params: &Map<String, Value>) -> Vec<String> {
        Vec::new()
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome;
}

/// Every probe kind, in the order `gpufix list --probes` shows them.
pub static PROBES: &[&dyn ProbeKind] = &[
    &nvml::Nvml,
    &nvml_sample::NvmlSample,
    &devices::Devices,
    &kernel_modules::KernelModules,
    &logs::KernelLog,
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
    &trace::Trace,
    &logs::NcclLog,
    &logs::TorchMemory,
];

pub fn find(name: &str) -> Option<&'static dyn ProbeKind> {
    PROBES.iter().copied().find(|p| p.name() == name)
}

/// Check a probe's parameters against its [`ParamSpec`]s: unknown names, missing required
/// ones, wrong JSON types, then the kind's own checks.
pub fn check_params(kind: &dyn ProbeKind, params: &Map<String, Value>) -> Vec<String> {
    let mut errs = Vec::new();
    for (k, v) in params {
        match kind.params().iter().find(|p| p.name == k) {
            None => {
                let known: Vec<&str> = kind.params().iter().map(|p| p.name).collect();
                errs.push(format!(
                    "probe kind `{}` has no parameter `{k}`{}",
                    kind.name(),
                    if known.is_empty() {
                        " (it takes none)".to_string()
                    } else {
                        format!(" (it takes: {})", known.join(", "))
                    }
                ));
            }
            Some(spec) => {
                // a template renders to its value's type at run time
                let templated = v.as_str().is_some_and(|s| s.contains("{{"));
                if !templated && !type_matches(spec.ty, v) {
                    errs.push(format!(
                        "probe parameter `{k}` of `{}` must be {}, found {}",
                        kind.name(),
                        spec.ty,
                        json_type(v)
                    ));
                }
            }
        }
    }
    for spec in kind.params().iter().filter(|p| p.required) {
        if !params.contains_key(spec.name) {
            errs.push(format!(
                "probe kind `{}` needs parameter `{}`",
                kind.name(),
                spec.name
            ));
        }
    }
    if errs.is_empty() {
        errs.extend(kind.check_params(params));
    }
    errs
}

fn type_matches(ty: &str, v: &Value) -> bool {
    ty.split('|').any(|t| match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    })
}

pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Helpers for probe implementations.
pub fn param_str<'a>(params: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    params.get(name).and_then(Value::as_str)
}

pub fn param_bool(params: &Map<String, Value>, name: &str) -> Option<bool> {
    params.get(name).and_then(Value::as_bool)
}

pub fn param_u64(params: &Map<String, Value>, name: &str) -> Option<u64> {
    params.get(name).and_then(Value::as_u64)
}

/// A host file as text, or the sentence a probe reports as `unknown`.
pub fn read_text(host: &dyn Host, path: &str) -> Result<String, String> {
    host.read_file(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("cannot read `{path}`: {e}"))
}

/// Check that a parameter, when given, is one of `allowed`.
pub fn check_enum(
    kind: &str,
    params: &Map<String, Value>,
    name: &str,
    allowed: &[&str],
) -> Option<String> {
    let v = param_str(params, name)?;
    (!allowed.contains(&v)).then(|| {
        format!(
            "probe parameter `{name}` of `{kind}` must be one of {}, found `{v}`",
            allowed.join(", ")
        )
    })
}

/// Check that a `regex` parameter, when given, compiles.
pub fn check_regex(kind: &str, params: &Map<String, Value>) -> Option<String> {
    let re = param_str(params, "regex")?;
    regex::Regex::new(re)
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
