//! `kmod.load` (load now, persist in modules-load.d; undo unloads only what this run loaded)
//! and `kmod.options` (an `options MODULE k=v` line in modprobe.d).

use super::edit::line::LineState;
use super::edit::module_conf;
use super::file::{self, FileEdit};
use super::runtime::{RuntimeAndFile, runtime_and_file_kind};
use super::{FixCtx, Prepared, as_part, params_of, runtime_change};
use crate::fixes::FixError;
use crate::report::PlannedChange;
use serde_json::{Value, json};

pub const DEFAULT_LOAD_FILE: &str = "/etc/modules-load.d/gpufix.conf";
pub const DEFAULT_OPTIONS_FILE: &str = "/etc/modprobe.d/gpufix.conf";

fn loaded(module: &str, cx: &FixCtx) -> Result<bool, FixError> {
    let raw = cx
        .host
        .read_file("/proc/modules")
        .map_err(FixError::io("cannot read /proc/modules".into()))?;
    Ok(String::from_utf8_lossy(&raw)
        .lines()
        .any(|l| l.split_whitespace().next() == Some(module)))
}

fn module_of(change: &PlannedChange) -> Result<String, FixError> {
    params_of::<LoadParams>(change).map(|p| p.module)
}

struct LoadFile;

impl FileEdit for LoadFile {
    type Params = LoadParams;
    fn name(&self) -> &'static str {
        "kmod.load"
    }
    fn path(&self, params: &LoadParams, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(params.persist.clone())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        params: &LoadParams,
    ) -> Result<String, FixError> {
        module_conf::modules_load(old, &params.module, LineState::Present).map_err(FixError::from)
    }
    fn summary(&self, params: &LoadParams, path: &str) -> String {
        format!("load {} at boot ({path})", params.module)
    }
}

pub struct KmodLoad;

impl RuntimeAndFile for KmodLoad {
    type Params = LoadParams;
    const NAME: &'static str = "kmod.load";
    const PART: &'static str = "runtime";
    fn prepare_parts(&self, params: &LoadParams, cx: &FixCtx) -> Result<Vec<Prepared>, FixError> {
        let m = params.module.as_str();
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
            file::prepare_edit(&LoadFile, params, cx)?,
            "persist",
        ));
        Ok(out)
    }
    fn read(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Value, FixError> {
        Ok(json!(loaded(&module_of(change)?, cx)?))
    }
    fn write(&self, change: &PlannedChange, v: &Value, cx: &FixCtx) -> Result<(), FixError> {
        Ok(cx.host.set_module(&module_of(change)?, v == &json!(true))?)
    }
    /// Unload only what this run loaded.
    fn undo_runtime(
        &self,
        change: &PlannedChange,
        prior: &Value,
        cx: &FixCtx,
    ) -> Result<(), FixError> {
        if prior == &json!(false) {
            self.write(change, prior, cx)
        } else {
            Ok(())
        }
    }
}

runtime_and_file_kind!(KmodLoad);

pub struct KmodOptions;

impl FileEdit for KmodOptions {
    type Params = OptionsParams;
    fn name(&self) -> &'static str {
        "kmod.options"
    }
    fn path(&self, params: &OptionsParams, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(params.file.clone())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        params: &OptionsParams,
    ) -> Result<String, FixError> {
        module_conf::modprobe_option_set(
            old,
            &params.module,
            &params.option,
            Some(params.value.text().as_str()),
        )
        .map_err(FixError::from)
    }
    fn summary(&self, params: &OptionsParams, path: &str) -> String {
        format!(
            "options {} {}={} in {path} (takes effect when the module is next loaded)",
            params.module,
            params.option,
            params.value.text()
        )
    }
}

/// Parameters of `kmod.load`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadParams {
    /// Module name.
    pub module: String,
    /// The modules-load.d file that loads it at boot.
    #[serde(default = "default_load_file")]
    pub persist: String,
}

fn default_load_file() -> String {
    DEFAULT_LOAD_FILE.into()
}

/// Parameters of `kmod.options`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionsParams {
    /// Module name.
    pub module: String,
    /// Parameter name.
    pub option: String,
    /// Parameter value.
    pub value: super::spec::TextOrInt,
    /// The modprobe.d file.
    #[serde(default = "default_options_file")]
    pub file: String,
}

fn default_options_file() -> String {
    DEFAULT_OPTIONS_FILE.into()
}

pub static LOAD: super::spec::FixSpec = super::spec::FixSpec {
    name: "kmod.load",
    doc: "Load a kernel module now and persist it in modules-load.d.",
    params: crate::kinds::ParamsDecl::of::<LoadParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &KmodLoad,
};

pub static OPTIONS: super::spec::FixSpec = super::spec::FixSpec {
    name: "kmod.options",
    doc: "Set a module option in modprobe.d (takes effect when the module loads).",
    params: crate::kinds::ParamsDecl::of::<OptionsParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &KmodOptions,
};
