//! `sysctl.set`: the runtime value under /proc/sys, and the same key persisted in a sysctl.d
//! file. Undo restores the value read before and the file's prior bytes.

use super::edit::sysctl_conf;
use super::file::{self, FileEdit};
use super::runtime::{RuntimeAndFile, runtime_and_file_kind};
use super::{FixCtx, Prepared, as_part, params_of, runtime_change};
use crate::fixes::FixError;
use crate::report::PlannedChange;
use serde_json::{Value, json};

pub const DEFAULT_FILE: &str = "/etc/sysctl.d/90-gpufix.conf";

pub fn proc_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

fn read_value(key: &str, cx: &FixCtx) -> Result<String, FixError> {
    let raw = cx
        .host
        .read_file(&proc_path(key))
        .map_err(FixError::io(format!("cannot read sysctl `{key}`")))?;
    Ok(String::from_utf8_lossy(&raw)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" "))
}

struct SysctlFile;

impl FileEdit for SysctlFile {
    type Params = SysctlParams;
    fn name(&self) -> &'static str {
        "sysctl.set"
    }
    fn path(&self, params: &SysctlParams, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(params.file.clone())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        params: &SysctlParams,
    ) -> Result<String, FixError> {
        sysctl_conf::sysctl_set(old, &params.key, &params.value.text()).map_err(FixError::from)
    }
    fn summary(&self, params: &SysctlParams, path: &str) -> String {
        format!("persist {} = {} in {path}", params.key, params.value.text())
    }
}

pub struct SysctlSet;

impl RuntimeAndFile for SysctlSet {
    type Params = SysctlParams;
    const NAME: &'static str = "sysctl.set";
    const PART: &'static str = "runtime";
    fn prepare_parts(&self, params: &SysctlParams, cx: &FixCtx) -> Result<Vec<Prepared>, FixError> {
        let key = params.key.as_str();
        let want = params.value.text();
        let mut out = Vec::new();
        let cur = read_value(key, cx)?;
        if cur != want {
            out.push(runtime_change(
                "runtime",
                format!("sysctl {key}"),
                format!("set sysctl {key} = {want} (now {cur})"),
                json!(cur),
                json!(want),
            ));
        }
        out.extend(as_part(
            file::prepare_edit(&SysctlFile, params, cx)?,
            "persist",
        ));
        Ok(out)
    }
    fn read(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Value, FixError> {
        Ok(json!(read_value(&key_of(change)?, cx)?))
    }
    fn write(&self, change: &PlannedChange, v: &Value, cx: &FixCtx) -> Result<(), FixError> {
        let key = &key_of(change)?;
        let text = v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        cx.host
            .write_runtime(&proc_path(key), &text)
            .map_err(FixError::io(format!("cannot set sysctl {key}")))
    }
}

runtime_and_file_kind!(SysctlSet);

fn key_of(change: &PlannedChange) -> Result<String, FixError> {
    params_of::<SysctlParams>(change).map(|p| p.key)
}

/// Parameters of `sysctl.set`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SysctlParams {
    /// Sysctl name, e.g. `vm.swappiness`.
    pub key: String,
    /// The value.
    pub value: super::spec::TextOrInt,
    /// The sysctl.d file that persists it.
    #[serde(default = "default_file")]
    pub file: String,
}

fn default_file() -> String {
    DEFAULT_FILE.into()
}

pub static SPEC: super::spec::FixSpec = super::spec::FixSpec {
    name: "sysctl.set",
    doc: "Set a sysctl now and persist it in sysctl.d.",
    params: crate::kinds::ParamsDecl::of::<SysctlParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &SysctlSet,
};
