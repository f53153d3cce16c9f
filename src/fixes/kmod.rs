//! `kmod.load` (load now, persist in modules-load.d; undo unloads only what this run loaded)
//! and `kmod.options` (an `options MODULE k=v` line in modprobe.d).

use super::edit::line::LineState;
use super::edit::module_conf;
use super::file::{self, FileEdit};
use super::{
    FixCtx, FixKind, Prepared, Prior, as_part, runtime_change, scalar_param, str_param,
    value_fingerprint,
};
use crate::report::PlannedChange;
use serde_json::{Map, Value, json};

pub const DEFAULT_LOAD_FILE: &str = "/etc/modules-load.d/gpufix.conf";
pub const DEFAULT_OPTIONS_FILE: &str = "/etc/modprobe.d/gpufix.conf";

fn loaded(module: &str, cx: &FixCtx) -> Result<bool, String> {
    let raw = cx
        .host
        .read_file("/proc/modules")
        .map_err(|e| format!("cannot read /proc/modules: {e}"))?;
    Ok(String::from_utf8_lossy(&raw)
        .lines()
        .any(|l| l.split_whitespace().next() == Some(module)))
}

fn module_of(change: &PlannedChange) -> Result<&str, String> {
    change
        .action
        .get("module")
        .and_then(Value::as_str)
        .ok_or_else(|| "action has no module".into())
}

struct LoadFile;

impl FileEdit for LoadFile {
    fn name(&self) -> &'static str {
        "kmod.load"
    }
    fn path(&self, action: &Map<String, Value>, _cx: &FixCtx) -> Result<String, String> {
        Ok(action
            .get("persist")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_LOAD_FILE)
            .to_string())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        module_conf::modules_load(old, str_param(action, "module")?, LineState::Present)
            .map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "load {} at boot ({path})",
            action.get("module").and_then(Value::as_str).unwrap_or("")
        )
    }
}

pub struct KmodLoad;

impl FixKind for KmodLoad {
    fn name(&self) -> &'static str {
        "kmod.load"
    }
    fn prepare(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<Vec<Prepared>, String> {
        let m = str_param(action, "module")?;
        let mut out = Vec::new();
        if !loaded(m, cx)? {
            out.push(runtime_change(
                "runtime",
                format!("module {m}"),
                format!("load kernel module {m}"),
                json!(false),
                json!(true),
            ));
        }
        out.extend(as_part(
            file::prepare_edit(&LoadFile, action, cx)?,
            "persist",
        ));
        Ok(out)
    }
    fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, String> {
        match change.part.as_str() {
            "runtime" => Ok(value_fingerprint(&json!(loaded(module_of(change)?, cx)?))),
            _ => file::file_fingerprint(change, cx),
        }
    }
    fn after_fingerprint(&self, change: &PlannedChange) -> String {
        match change.part.as_str() {
            "runtime" => value_fingerprint(&json!(true)),
            _ => file::file_after_fingerprint(change),
        }
    }
    fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, String> {
        match change.part.as_str() {
            "runtime" => Ok(Prior::Value {
                value: json!(loaded(module_of(change)?, cx)?),
            }),
            _ => file::file_save(change, cx),
        }
    }
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), String> {
        match change.part.as_str() {
            "runtime" => cx.host.set_module(module_of(change)?, true),
            _ => file::file_apply(change, cx),
        }
    }
    fn undo(&self, change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), String> {
        match (change.part.as_str(), prior) {
            // unload only what this run loaded
            ("runtime", Prior::Value { value }) if value == &json!(false) => {
                cx.host.set_module(module_of(change)?, false)
            }
            ("runtime", _) => Ok(()),
            _ => file::file_undo(change, prior, cx),
        }
    }
}

pub struct KmodOptions;

impl FileEdit for KmodOptions {
    fn name(&self) -> &'static str {
        "kmod.options"
    }
    fn path(&self, action: &Map<String, Value>, _cx: &FixCtx) -> Result<String, String> {
        Ok(action
            .get("file")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_OPTIONS_FILE)
            .to_string())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        module_conf::modprobe_option_set(
            old,
            str_param(action, "module")?,
            str_param(action, "option")?,
            Some(scalar_param(action, "value")?.as_str()),
        )
        .map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "options {} {}={} in {path} (takes effect when the module is next loaded)",
            action.get("module").and_then(Value::as_str).unwrap_or(""),
            action.get("option").and_then(Value::as_str).unwrap_or(""),
            scalar_param(action, "value").unwrap_or_default()
        )
    }
}
