//! Fix kinds: how each change is prepared (previewed), saved, applied, verified and undone.
//! [`FIXES`] is THE list; each kind is one file (its implementation and its [`FixSpec`]). File-editing kinds share [`file::FileEdit`]:
//! they only say which file and how its text changes, and the shared code handles the safe
//! write, the fingerprint, the read-back and the byte-exact undo.

pub mod command;
pub mod config_set;
pub mod edit;
pub mod env;
pub mod error;
pub mod file;
pub mod file_line;
pub mod fstab_options;
#[cfg(test)]
mod grammar_test;
#[cfg(test)]
mod kinds_test;
pub mod kmod;
pub mod nvidia;
pub mod runtime;
pub mod spec;
pub mod sysctl;
pub mod sysfs;

use crate::host::Host;
use crate::probes::Inputs;
use crate::report::PlannedChange;
use crate::safe_write::Roots;
pub use error::FixError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
pub use spec::FixSpec;

/// What a fix needs from the world.
pub struct FixCtx<'a> {
    pub host: &'a dyn Host,
    pub inputs: &'a Inputs,
    /// Files a fix may write: under `--root` (or `/`) only.
    pub roots: &'a Roots,
    /// Files named on the command line (`--config`, `--env-file`), absolute: used as given,
    /// not mapped under `--root`.
    pub local_files: Vec<std::path::PathBuf>,
    /// Text a file will have after earlier changes of the same plan (so two fixes to one config
    /// chain instead of overwriting each other).
    pub overlay: std::cell::RefCell<std::collections::HashMap<String, String>>,
}

impl FixCtx<'_> {
    /// The file an env or config fix writes: its `file:` or the flag's (`--env-file`,
    /// `--config`).
    pub fn input_file(&self, file: Option<&str>, which: &str) -> Result<String, FixError> {
        // an empty `file:` (a template whose source names no file) falls back to the flag
        if let Some(f) = file.filter(|f| !f.is_empty()) {
            return Ok(f.to_string());
        }
        let (given, flag) = match which {
            "config" => (&self.inputs.config, "--config"),
            _ => (&self.inputs.env_file, "--env-file"),
        };
        given
            .as_ref()
            .map(|p| {
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string()
            })
            .ok_or(FixError::NeedsInput { flag })
    }
}

/// One change a fix action would make, before it becomes a [`PlannedChange`].
#[derive(Debug, Clone)]
pub struct Prepared {
    pub part: &'static str,
    pub target: String,
    pub summary: String,
    pub diff: Option<String>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub before_text: Option<String>,
    pub after_text: Option<String>,
    pub fingerprint: String,
}

/// The state a change replaced, journaled before the change is made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Prior {
    File {
        exists: bool,
        /// UTF-8 text, or hex when the file is not UTF-8.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hex: Option<String>,
        mode: u32,
        uid: u32,
        gid: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        xattrs: Vec<(String, String)>,
        /// Directories the change had to create (removed again by undo).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        created_dirs: Vec<String>,
        /// The job owner the file was changed as (a file found through a job): undo restores it
        /// as the same owner ([`crate::authority`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<crate::authority::Owner>,
    },
    Value {
        value: Value,
    },
}

/// A fix kind as its file writes it: its typed parameters ([`crate::kinds`]; names and
/// defaults in one struct) reach [`Fix::prepare`] and [`Fix::left_to_you`] already parsed, and
/// a planned change's action reads as them through [`params_of`].
pub trait Fix: Sync {
    /// The parameters it takes in a playbook (serde defaults are the kind's defaults).
    type Params: DeserializeOwned;
    fn name(&self) -> &'static str;
    /// The changes this action would make now; empty when the target is already as wanted.
    fn prepare(&self, params: &Self::Params, cx: &FixCtx) -> Result<Vec<Prepared>, FixError>;
    /// See [`FixKind::left_to_you`].
    fn left_to_you(&self, _params: &Self::Params, _cx: &FixCtx) -> Option<String> {
        None
    }
    /// See [`FixKind::fingerprint`].
    fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError>;
    /// See [`FixKind::after_fingerprint`].
    fn after_fingerprint(&self, change: &PlannedChange) -> String;
    /// See [`FixKind::save`].
    fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError>;
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError>;
    /// See [`FixKind::verify`].
    fn verify(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        read_back(
            &change.target,
            self.fingerprint(change, cx)?,
            self.after_fingerprint(change),
        )
    }
    fn undo(&self, change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), FixError>;
}

/// The target read back as the change wrote it, or [`FixError::ReadBack`].
pub fn read_back(target: &str, found: String, expected: String) -> Result<(), FixError> {
    if found == expected {
        Ok(())
    } else {
        Err(FixError::ReadBack {
            target: target.into(),
            expected,
            found,
        })
    }
}

/// A planned change's action read as its kind's parameters.
pub fn params_of<T: DeserializeOwned>(change: &PlannedChange) -> Result<T, FixError> {
    let action = change.action.as_object().cloned().unwrap_or_default();
    crate::kinds::parse(&action).map_err(|e| {
        FixError::Failed(format!(
            "the plan's action of fix `{}` does not read as its parameters: {e}",
            change.kind
        ))
    })
}

impl<F: Fix> FixKind for F {
    fn name(&self) -> &'static str {
        Fix::name(self)
    }
    fn prepare(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<Vec<Prepared>, FixError> {
        let p = crate::kinds::parse(action).map_err(|e| {
            FixError::Failed(format!(
                "parameters of fix `{}` after rendering: {e}",
                Fix::name(self)
            ))
        })?;
        Fix::prepare(self, &p, cx)
    }
    fn left_to_you(&self, action: &Map<String, Value>, cx: &FixCtx) -> Option<String> {
        // parameters that do not read are an error `prepare` reports, not a note
        let p = crate::kinds::parse(action).ok()?;
        Fix::left_to_you(self, &p, cx)
    }
    fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError> {
        Fix::fingerprint(self, change, cx)
    }
    fn after_fingerprint(&self, change: &PlannedChange) -> String {
        Fix::after_fingerprint(self, change)
    }
    fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError> {
        Fix::save(self, change, cx)
    }
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        Fix::apply(self, change, cx)
    }
    fn verify(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        Fix::verify(self, change, cx)
    }
    fn undo(&self, change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), FixError> {
        Fix::undo(self, change, prior, cx)
    }
}

/// A fix kind with its parameter type erased, as [`FIXES`] holds it. Every [`Fix`] is one.
pub trait FixKind: Sync {
    fn name(&self) -> &'static str;
    /// The changes this action would make now; empty when the target is already as wanted.
    /// The action must read as the kind's parameters.
    fn prepare(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<Vec<Prepared>, FixError>;
    /// Why this action has nothing here it may act on, so that its fix is left to the person
    /// (the rule's instructions) instead of stopping `apply` as a fix that cannot be planned: a
    /// value the job takes from its own command line, which no file holds, or a value a script
    /// sets in a way no single exact edit can change. The note says where the value is set and
    /// why gpufix will not edit it.
    fn left_to_you(&self, _action: &Map<String, Value>, _cx: &FixCtx) -> Option<String> {
        None
    }
    /// The target's current fingerprint (compared with the plan's, and with `after` at rollback).
    fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError>;
    /// The fingerprint the target has once the change is made.
    fn after_fingerprint(&self, change: &PlannedChange) -> String;
    /// Read what undo needs.
    fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError>;
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError>;
    /// Read back and compare with what apply meant to write.
    fn verify(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError>;
    fn undo(&self, change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), FixError>;
}

/// THE list of fix kinds: dispatch, names, parameters (and so the playbook schema, validation,
/// `gpufix list --fixes` and docs/playbooks.md) and the loosest safety each allows. A new kind is
/// one file declaring its [`FixSpec`] plus one line here. `manual` fixes have no actions and are
/// only printed.
pub static FIXES: &[&FixSpec] = &[
    &file_line::LINE,
    &file_line::REPLACE,
    &fstab_options::SPEC,
    &kmod::LOAD,
    &kmod::OPTIONS,
    &env::SET,
    &env::UNSET,
    &config_set::SPEC,
    &sysctl::SPEC,
    &sysfs::SPEC,
    &nvidia::PERSISTENCE,
    &nvidia::POWER_LIMIT,
    &nvidia::CLOCKS,
    &command::SPEC,
];

/// The implementation of a fix kind.
pub fn find(name: &str) -> Option<&'static dyn FixKind> {
    spec(name).map(|s| s.imp)
}

/// A fix kind's entry in [`FIXES`].
pub fn spec(name: &str) -> Option<&'static FixSpec> {
    FIXES.iter().copied().find(|k| k.name == name)
}

/// Check a fix action's parameters (before templates render) against its kind's types.
pub fn param_problems(spec: &FixSpec, params: &Map<String, Value>) -> Vec<crate::kinds::Problem> {
    crate::kinds::check("fix", spec.name, &spec.params, params)
}

/// Prepare an action whose templates have rendered: its parameters must read as the kind's
/// typed parameters first.
pub fn prepare_checked(
    spec: &FixSpec,
    params: &Map<String, Value>,
    cx: &FixCtx,
) -> Result<Vec<Prepared>, FixError> {
    spec.imp.prepare(params, cx)
}

/// Fingerprint of a runtime value.
pub fn value_fingerprint(v: &Value) -> String {
    format!("value:{v}")
}

/// The `after` value of a runtime change.
pub fn after_value(change: &PlannedChange) -> Value {
    change.after.clone().unwrap_or(Value::Null)
}

/// A runtime change (no file): before → after.
pub fn runtime_change(
    part: &'static str,
    target: String,
    summary: String,
    before: Value,
    after: Value,
) -> Prepared {
    Prepared {
        part,
        target,
        summary,
        diff: None,
        fingerprint: value_fingerprint(&before),
        before: Some(before),
        after: Some(after),
        before_text: None,
        after_text: None,
    }
}

/// Relabel a file change prepared by [`file::prepare_edit`] as another part of an action.
pub fn as_part(mut v: Vec<Prepared>, part: &'static str) -> Vec<Prepared> {
    for p in &mut v {
        p.part = part;
    }
    v
}
