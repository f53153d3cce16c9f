//! `env.set` / `env.unset`: one variable in an env file, written in the file's own format
//! (dotenv, shell `export`, /etc/environment, systemd `Environment=`).

use super::edit::env as envedit;
use super::file::FileEdit;
use super::{FixCtx, scalar_param, str_param};
use serde_json::{Map, Value};

pub struct EnvSet;

impl FileEdit for EnvSet {
    fn name(&self) -> &'static str {
        "env.set"
    }
    fn path(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<String, String> {
        cx.input_file(action, "env_file")
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        envedit::env_set(
            old,
            None,
            str_param(action, "name")?,
            &scalar_param(action, "value")?,
        )
        .map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "set {}={} in {path}",
            action.get("name").and_then(Value::as_str).unwrap_or(""),
            scalar_param(action, "value").unwrap_or_default()
        )
    }
}

pub struct EnvUnset;

impl FileEdit for EnvUnset {
    fn name(&self) -> &'static str {
        "env.unset"
    }
    fn path(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<String, String> {
        cx.input_file(action, "env_file")
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        envedit::env_unset(old, None, str_param(action, "name")?).map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "unset {} in {path}",
            action.get("name").and_then(Value::as_str).unwrap_or("")
        )
    }
}

/// Parameters of `env.set`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetParams {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: super::spec::Scalar,
    /// The env file (default: --env-file).
    #[serde(default)]
    pub file: Option<String>,
}

/// Parameters of `env.unset`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsetParams {
    /// The variable.
    pub name: String,
    /// The env file (default: --env-file).
    #[serde(default)]
    pub file: Option<String>,
}

pub static SET: super::spec::FixSpec = super::spec::FixSpec {
    name: "env.set",
    doc: "Set a variable in an env file, in the file's own format.",
    params: crate::kinds::ParamsDecl::of::<SetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &EnvSet,
};

pub static UNSET: super::spec::FixSpec = super::spec::FixSpec {
    name: "env.unset",
    doc: "Remove a variable from an env file.",
    params: crate::kinds::ParamsDecl::of::<UnsetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &EnvUnset,
};
