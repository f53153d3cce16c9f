//! `sysctl.set`: the runtime value under /proc/sys, and the same key persisted in a sysctl.d
//! file. Undo restores the value read before and the file's prior bytes.

use super::edit::sysctl_conf;
use super::file::{self, FileEdit};
use super::runtime::{RuntimeAndFile, runtime_and_file_kind};
use super::{FixCtx, Prepared, as_part, runtime_change, scalar_param, str_param};
use crate::report::PlannedChange;
use serde_json::{Map, Value, json};

pub const DEFAULT_FILE: &str = "/etc/sysctl.d/90-gpufix.conf";

pub fn proc_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

fn read_value(key: &str, cx: &FixCtx) -> Result<String, String> {
    let raw = cx
        .host
        .read_file(&proc_path(key))
        .map_err(|e| format!("cannot read sysctl `{key}`: {e}"))?;
    Ok(String::from_utf8_lossy(&raw)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" "))
}

struct SysctlFile;

impl FileEdit for SysctlFile {
    fn name(&self) -> &'static str {
        "sysctl.set"
    }
    fn path(&self, action: &Map<String, Value>, _cx: &FixCtx) -> Result<String, String> {
        Ok(action
            .get("file")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_FILE)
            .to_string())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        sysctl_conf::sysctl_set(
            old,
            str_param(action, "key")?,
            &scalar_param(action, "value")?,
        )
        .map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "persist {} = {} in {path}",
            action.get("key").and_then(Value::as_str).unwrap_or(""),
            scalar_param(action, "value").unwrap_or_default()
        )
    }
}

pub struct SysctlSet;

impl RuntimeAndFile for SysctlSet {
    const NAME: &'static str = "sysctl.set";
    const PART: &'static str = "runtime";
    fn prepare_parts(
        &self,
        action: &Map<String, Value>,
        cx: &FixCtx,
    ) -> Result<Vec<Prepared>, String> {
        let key = str_param(action, "key")?;
        let want = scalar_param(action, "value")?;
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
            file::prepare_edit(&SysctlFile, action, cx)?,
            "persist",
        ));
        Ok(out)
    }
    fn read(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Value, String> {
        Ok(json!(read_value(key_of(change)?, cx)?))
    }
    fn write(&self, change: &PlannedChange, v: &Value, cx: &FixCtx) -> Result<(), String> {
        let key = key_of(change)?;
        let text = v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        cx.host
            .write_runtime(&proc_path(key), &text)
            .map_err(|e| format!("cannot set sysctl {key}: {e}"))
    }
}

runtime_and_file_kind!(SysctlSet);

fn key_of(change: &PlannedChange) -> Result<&str, String> {
    change
        .action
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| "action has no key".into())
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
