//! `config.set`: one key path in a YAML, JSON or TOML training config, keeping comments, order
//! and formatting of everything else (only the changed line differs).

use super::edit::config as cfg;
use super::file::FileEdit;
use super::{FixCtx, str_param};
use crate::formats::syntax::Refusal;
use serde_json::{Map, Value};

pub struct ConfigSet;

/// The format `config.set` edits: `format:` when given, else the extension, else the content
/// (a config named `.txt` or `.cfg`), by the same detector the `config` probe reads with.
pub fn format_of(
    path: &str,
    old: &str,
    action: &Map<String, Value>,
) -> Result<cfg::ConfigFormat, String> {
    if let Some(name) = action.get("format").and_then(Value::as_str) {
        return cfg::ConfigFormat::from_name(name).ok_or_else(|| {
            format!("`format: {name}` is not a config format: use yaml, json or toml")
        });
    }
    cfg::ConfigFormat::detect(Some(std::path::Path::new(path)), old).ok_or_else(|| {
        format!(
            "cannot tell the format of {path}: no .yaml, .json or .toml name, and the content reads as none of them: set `format:`"
        )
    })
}

/// A key that names a flag on a launch script's command line (`-j@L4`) or a keyword argument or
/// assignment in Python source: the edit, made on the file's grammar tree. None for a key of a
/// YAML, JSON or TOML config.
fn script_edit(
    path: &str,
    old: &str,
    action: &Map<String, Value>,
) -> Option<Result<String, Refusal>> {
    let key = action.get("key").and_then(Value::as_str)?;
    let value = action.get("value")?;
    if crate::formats::launcher::is_flag_key(key) {
        let value = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Some(crate::formats::launcher::set_flag_checked(old, key, &value));
    }
    if crate::formats::python::parse_key(key).is_some()
        && (path.ends_with(".py") || crate::formats::python::looks_like_python(old))
    {
        return Some(crate::formats::python::set_checked(old, key, value));
    }
    None
}

impl FileEdit for ConfigSet {
    fn name(&self) -> &'static str {
        "config.set"
    }
    fn path(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<String, String> {
        if let Some(why) = FileEdit::left_to_you(self, action, cx) {
            return Err(why);
        }
        cx.input_file(action, "config")
    }
    fn left_to_you(&self, action: &Map<String, Value>, _cx: &FixCtx) -> Option<String> {
        // `file: ""`: the config probe found the value on the job's own command line, or found
        // no config at all; either way there is no file to edit
        (action.get("file").and_then(Value::as_str) == Some("")).then(|| {
            "no file holds the value (the job takes it from its command line, or no config was found): change it where the job is launched".to_string()
        })
    }
    fn edit(
        &self,
        path: &str,
        old: &str,
        exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        if !exists {
            return Err(format!("the training config {path} does not exist"));
        }
        if let Some(r) = script_edit(path, old, action) {
            return r.map_err(|e| e.to_string());
        }
        let fmt = format_of(path, old, action)?;
        let value = action.get("value").ok_or("action needs `value`")?;
        cfg::config_set(old, fmt, str_param(action, "key")?, value).map_err(|e| e.to_string())
    }
    fn unproven(
        &self,
        path: &str,
        old: &str,
        action: &Map<String, Value>,
        _cx: &FixCtx,
    ) -> Option<String> {
        match script_edit(path, old, action)? {
            Err(Refusal::Unproven(why)) => Some(format!("{path}: {why}")),
            _ => None,
        }
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "set {} = {} in {path}",
            action.get("key").and_then(Value::as_str).unwrap_or(""),
            action
                .get("value")
                .map(Value::to_string)
                .unwrap_or_default()
        )
    }
}

/// Parameters of `config.set`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigSetParams {
    /// Dotted key path, e.g. `data.num_workers`.
    pub key: String,
    /// The new value.
    pub value: Value,
    /// The config file (default: --config).
    #[serde(default)]
    pub file: Option<String>,
    /// The file's format (default: from the file name).
    #[serde(default)]
    pub format: Option<ConfigFormatParam>,
}

/// `yaml`, `json` or `toml`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConfigFormatParam {
    Yaml,
    Json,
    Toml,
}

pub static SPEC: super::spec::FixSpec = super::spec::FixSpec {
    name: "config.set",
    doc: "Set a key path in a YAML, JSON or TOML training config, keeping everything else.",
    params: crate::kinds::ParamsDecl::of::<ConfigSetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &ConfigSet,
};
