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
