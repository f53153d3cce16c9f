//! `config.set`: one key path in a YAML, JSON or TOML training config, keeping comments, order
//! and formatting of everything else (only the changed line differs).

use super::FixCtx;
use super::edit::config as cfg;
use super::file::FileEdit;
use crate::fixes::FixError;
use crate::formats::syntax::Refusal;
use serde_json::Value;

pub struct ConfigSet;

/// The format `config.set` edits: `format:` when given, else the extension, else the content
/// (a config named `.txt` or `.cfg`), by the same detector the `config` probe reads with.
pub fn format_of(
    path: &str,
    old: &str,
    params: &ConfigSetParams,
) -> Result<cfg::ConfigFormat, FixError> {
    if let Some(f) = &params.format {
        return Ok(match f {
            ConfigFormatParam::Yaml => cfg::ConfigFormat::Yaml,
            ConfigFormatParam::Json => cfg::ConfigFormat::Json,
            ConfigFormatParam::Toml => cfg::ConfigFormat::Toml,
        });
    }
    cfg::ConfigFormat::detect(Some(std::path::Path::new(path)), old).ok_or_else(|| {
        FixError::Failed(format!(
            "cannot tell the format of {path}: no .yaml, .json or .toml name, and the content reads as none of them: set `format:`"
        ))
    })
}

/// A key that names a flag on a launch script's command line (`-j@L4`) or a keyword argument or
/// assignment in Python source: the edit, made on the file's grammar tree. None for a key of a
/// YAML, JSON or TOML config.
fn script_edit(path: &str, old: &str, params: &ConfigSetParams) -> Option<Result<String, Refusal>> {
    let key = params.key.as_str();
    let value = &params.value;
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
    type Params = ConfigSetParams;
    fn name(&self) -> &'static str {
        "config.set"
    }
    fn path(&self, params: &ConfigSetParams, cx: &FixCtx) -> Result<String, FixError> {
        if let Some(note) = FileEdit::left_to_you(self, params, cx) {
            return Err(FixError::LeftToYou { note });
        }
        cx.input_file(params.file.as_deref(), "config")
    }
    fn left_to_you(&self, params: &ConfigSetParams, _cx: &FixCtx) -> Option<String> {
        // `file: ""`: the config probe found the value on the job's own command line, or found
        // no config at all; either way there is no file to edit
        (params.file.as_deref() == Some("")).then(|| {
            "no file holds the value (the job takes it from its command line, or no config was found): change it where the job is launched".to_string()
        })
    }
    fn edit(
        &self,
        path: &str,
        old: &str,
        exists: bool,
        params: &ConfigSetParams,
    ) -> Result<String, FixError> {
        if !exists {
            return Err(FixError::Failed(format!(
                "the training config {path} does not exist"
            )));
        }
        if let Some(r) = script_edit(path, old, params) {
            return r.map_err(FixError::from);
        }
        let fmt = format_of(path, old, params)?;
        cfg::config_set(old, fmt, &params.key, &params.value).map_err(FixError::from)
    }
    fn unproven(
        &self,
        path: &str,
        old: &str,
        params: &ConfigSetParams,
        _cx: &FixCtx,
    ) -> Option<String> {
        match script_edit(path, old, params)? {
            Err(Refusal::Unproven(why)) => Some(format!("{path}: {why}")),
            _ => None,
        }
    }
    fn summary(&self, params: &ConfigSetParams, path: &str) -> String {
        match crate::formats::shown_key(&params.key, Some(path)) {
            Some(shown) => format!("set {shown} to {}", params.value),
            None => format!("set {} = {} in {path}", params.key, params.value),
        }
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
