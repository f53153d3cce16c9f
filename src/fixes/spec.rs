//! What the fix list holds for each kind: its name, one line of documentation, its typed
//! parameters, the loosest safety class a playbook may give it, and its implementation. Each
//! kind's file declares its own [`FixSpec`]; [`super::FIXES`] lists them.

use super::FixKind;
use crate::kinds::ParamsDecl;
use crate::report::Safety;
use schemars::JsonSchema;
use serde::Deserialize;

pub struct FixSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: ParamsDecl,
    /// The loosest class a playbook may declare for a fix using this kind.
    pub max_safety: Safety,
    pub imp: &'static dyn FixKind,
}

/// A text or integer value (`kmod.options`, `sysctl.set`, `sysfs.write`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TextOrInt {
    Int(i64),
    Text(String),
}

impl TextOrInt {
    /// The value as written to the target (`8`, `madvise`).
    pub fn text(&self) -> String {
        match self {
            TextOrInt::Int(i) => i.to_string(),
            TextOrInt::Text(s) => s.clone(),
        }
    }
}

/// A scalar written as text (`env.set`: `8`, `true`, `expandable_segments:True`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    Text(String),
    Int(i64),
    Number(f64),
    Bool(bool),
}

impl Scalar {
    /// The value as text (`8`, `true`, `expandable_segments:True`), numbers as JSON writes them.
    pub fn text(&self) -> String {
        match self {
            Scalar::Text(s) => s.clone(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Number(f) => serde_json::Value::from(*f).to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// Which GPU: an index, or every GPU.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GpuSelector {
    Index(u32),
    Every(All),
}

/// `all`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum All {
    All,
}
