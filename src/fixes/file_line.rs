//! `file.line` (a line present, absent, or replacing the first regex match) and
//! `file.replace` (regex and template over the whole file).

use super::edit::line::{self, LineState};
use super::file::FileEdit;
use super::{FixCtx, str_param};
use serde_json::{Map, Value};

pub struct FileLine;

impl FileEdit for FileLine {
    fn name(&self) -> &'static str {
        "file.line"
    }
    fn path(&self, action: &Map<String, Value>, _cx: &FixCtx) -> Result<String, String> {
        str_param(action, "path").map(str::to_string)
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        let state = match action
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("present")
        {
            "present" => LineState::Present,
            "absent" => LineState::Absent,
            other => return Err(format!("`state` must be present or absent, not `{other}`")),
        };
        let regex = action.get("regex").and_then(Value::as_str);
        line::ensure_line(old, str_param(action, "line")?, state, regex).map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        let l = action.get("line").and_then(Value::as_str).unwrap_or("");
        match action.get("state").and_then(Value::as_str) {
            Some("absent") => format!("remove `{l}` from {path}"),
            _ => format!("ensure `{l}` in {path}"),
        }
    }
}

pub struct FileReplace;

impl FileEdit for FileReplace {
    fn name(&self) -> &'static str {
        "file.replace"
    }
    fn path(&self, action: &Map<String, Value>, _cx: &FixCtx) -> Result<String, String> {
        str_param(action, "path").map(str::to_string)
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        if !exists {
            return Err(format!("{} does not exist", str_param(action, "path")?));
        }
        line::replace(
            old,
            str_param(action, "regex")?,
            str_param(action, "replacement")?,
        )
        .map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "replace /{}/ with `{}` in {path}",
            action.get("regex").and_then(Value::as_str).unwrap_or(""),
            action
                .get("replacement")
                .and_then(Value::as_str)
                .unwrap_or("")
        )
    }
}

/// Parameters of `file.line`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineParams {
    /// The file to edit.
    pub path: String,
    /// The line.
    pub line: String,
    /// Whether the line must be there or not.
    #[serde(default)]
    pub state: LineStateParam,
    /// Replace the first line matching this regex instead of appending.
    #[serde(default)]
    pub regex: Option<String>,
}

/// `present` or `absent`.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LineStateParam {
    #[default]
    Present,
    Absent,
}

/// Parameters of `file.replace`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceParams {
    /// The file to edit.
    pub path: String,
    /// The pattern.
    pub regex: String,
    /// The replacement; `$name` inserts a capture.
    pub replacement: String,
}

pub static LINE: super::spec::FixSpec = super::spec::FixSpec {
    name: "file.line",
    doc: "Ensure a line is present, absent, or replaces the first line matching a regex.",
    params: crate::kinds::ParamsDecl::of::<LineParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &FileLine,
};

pub static REPLACE: super::spec::FixSpec = super::spec::FixSpec {
    name: "file.replace",
    doc: "Replace every match of a regex in a file (captures as `$name`).",
    params: crate::kinds::ParamsDecl::of::<ReplaceParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &FileReplace,
};
