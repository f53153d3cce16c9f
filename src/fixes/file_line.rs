//! `file.line` (a line present, absent, or replacing the first regex match) and
//! `file.replace` (regex and template over the whole file).

use super::FixCtx;
use super::edit::line::{self, LineState};
use super::file::FileEdit;
use crate::fixes::FixError;

pub struct FileLine;

impl FileEdit for FileLine {
    type Params = LineParams;
    fn name(&self) -> &'static str {
        "file.line"
    }
    fn path(&self, params: &LineParams, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(params.path.clone())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        params: &LineParams,
    ) -> Result<String, FixError> {
        let state = match params.state {
            LineStateParam::Present => LineState::Present,
            LineStateParam::Absent => LineState::Absent,
        };
        line::ensure_line(old, &params.line, state, params.regex.as_deref()).map_err(FixError::from)
    }
    fn summary(&self, params: &LineParams, path: &str) -> String {
        let l = &params.line;
        match params.state {
            LineStateParam::Absent => format!("remove `{l}` from {path}"),
            LineStateParam::Present => format!("ensure `{l}` in {path}"),
        }
    }
}

pub struct FileReplace;

impl FileEdit for FileReplace {
    type Params = ReplaceParams;
    fn name(&self) -> &'static str {
        "file.replace"
    }
    fn path(&self, params: &ReplaceParams, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(params.path.clone())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        exists: bool,
        params: &ReplaceParams,
    ) -> Result<String, FixError> {
        if !exists {
            return Err(FixError::Failed(format!("{} does not exist", params.path)));
        }
        line::replace(old, &params.regex, &params.replacement).map_err(FixError::from)
    }
    fn summary(&self, params: &ReplaceParams, path: &str) -> String {
        format!(
            "replace /{}/ with `{}` in {path}",
            params.regex, params.replacement
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
