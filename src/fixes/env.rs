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
