//! `sysfs.write`: a runtime value under /sys (CPU governor, read-ahead, THP). The value read
//! before is journaled and written back by undo. Writes outside /sys are refused.

use super::{Fix, FixCtx, Prepared, Prior, after_value, runtime_change, value_fingerprint};
use crate::fixes::FixError;
use crate::report::PlannedChange;
use serde_json::json;

pub struct SysfsWrite;

/// The current value: the bracketed word for `a [b] c` files, else the trimmed text.
pub fn read_value(path: &str, cx: &FixCtx) -> Result<String, FixError> {
    let raw = cx
        .host
        .read_file(path)
        .map_err(FixError::io(format!("cannot read {path}")))?;
    let t = String::from_utf8_lossy(&raw).trim().to_string();
    if let (Some(a), Some(b)) = (t.find('['), t.find(']'))
        && a < b
    {
        return Ok(t[a + 1..b].to_string());
    }
    Ok(t)
}

fn check_path(path: &str) -> Result<(), FixError> {
    if !path.starts_with("/sys/") || path.contains("/../") {
        return Err(FixError::Failed(format!(
            "sysfs.write writes under /sys only, not `{path}`"
        )));
    }
    Ok(())
}

impl Fix for SysfsWrite {
    type Params = SysfsWriteParams;
    fn name(&self) -> &'static str {
        "sysfs.write"
    }
    fn prepare(&self, params: &SysfsWriteParams, cx: &FixCtx) -> Result<Vec<Prepared>, FixError> {
        let path = params.path.as_str();
        check_path(path)?;
        let want = params.value.text();
        let cur = read_value(path, cx)?;
        if cur == want {
            return Ok(Vec::new());
        }
        Ok(vec![runtime_change(
            "runtime",
            path.to_string(),
            format!("write `{want}` to {path} (now `{cur}`)"),
            json!(cur),
            json!(want),
        )])
    }
    fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError> {
        Ok(value_fingerprint(&json!(read_value(&change.target, cx)?)))
    }
    fn after_fingerprint(&self, change: &PlannedChange) -> String {
        value_fingerprint(&after_value(change))
    }
    fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError> {
        Ok(Prior::Value {
            value: json!(read_value(&change.target, cx)?),
        })
    }
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        check_path(&change.target)?;
        let v = after_value(change);
        cx.host
            .write_runtime(&change.target, v.as_str().unwrap_or_default())
            .map_err(FixError::io(format!("cannot write {}", change.target)))
    }
    fn undo(&self, change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), FixError> {
        let Prior::Value { value } = prior else {
            return Err(FixError::NoPrior { what: "value" });
        };
        cx.host
            .write_runtime(&change.target, value.as_str().unwrap_or_default())
            .map_err(FixError::io(format!("cannot restore {}", change.target)))
    }
}

/// Parameters of `sysfs.write`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SysfsWriteParams {
    /// A path under /sys.
    pub path: String,
    /// The value to write.
    pub value: super::spec::TextOrInt,
}

pub static SPEC: super::spec::FixSpec = super::spec::FixSpec {
    name: "sysfs.write",
    doc: "Write a value under /sys now (undo restores the value read before).",
    params: crate::kinds::ParamsDecl::of::<SysfsWriteParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &SysfsWrite,
};
