//! `config.set`: one key path in a YAML, JSON or TOML training config, keeping comments, order
//! and formatting of everything else (only the changed line differs).

use super::edit::config as cfg;
use super::file::FileEdit;
use super::{FixCtx, str_param};
use serde_json::{Map, Value};

pub struct ConfigSet;

pub fn format_of(path: &str, action: &Map<String, Value>) -> Result<cfg::ConfigFormat, String> {
    let name = match action.get("format").and_then(Value::as_str) {
        Some(f) => f.to_string(),
        None => path.rsplit('.').next().unwrap_or("").to_ascii_lowercase(),
    };
    match name.as_str() {
        "yaml" | "yml" => Ok(cfg::ConfigFormat::Yaml),
        "json" => Ok(cfg::ConfigFormat::Json),
        "toml" => Ok(cfg::ConfigFormat::Toml),
        other => Err(format!(
            "cannot tell the format of {path} (`{other}`): name it .yaml, .json or .toml, or set `format:`"
        )),
    }
}

impl FileEdit for ConfigSet {
    fn name(&self) -> &'static str {
        "config.set"
    }
    fn path(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<String, String> {
        if action.get("file").and_then(Value::as_str) == Some("") {
            // the config probe found the value on a command line: there is no file to edit
            return Err("the value comes from the job's command line, not a file: change it where the job is launched".into());
        }
        cx.input_file(action, "config")
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
        let key = str_param(action, "key")?;
        if crate::formats::python::parse_key(key).is_some()
            && (path.ends_with(".py") || crate::formats::python::looks_like_python(old))
        {
            // a keyword argument or assignment in Python source, edited in place
            let value = action.get("value").ok_or("action needs `value`")?;
            return crate::formats::python::set(old, key, value);
        }
        let fmt = format_of(path, action)?;
        let value = action.get("value").ok_or("action needs `value`")?;
        cfg::config_set(old, fmt, str_param(action, "key")?, value).map_err(|e| e.to_string())
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
