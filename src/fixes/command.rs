//! `command`: run an argv (never through a shell) with a declared safety and an undo argv.
//! gpufix cannot read back what a command changed, so verification is its exit status and the
//! rule's own re-check.

use super::{Fix, FixCtx, Prepared, Prior, params_of, runtime_change};
use crate::fixes::FixError;
use crate::report::PlannedChange;
use serde_json::json;
use std::time::Duration;

pub struct Command;

/// A non-empty argv.
fn argv(v: Option<&Vec<String>>) -> Option<&Vec<String>> {
    v.filter(|a| !a.is_empty())
}

fn run(cx: &FixCtx, argv: &[String]) -> Result<(), FixError> {
    let out = cx
        .host
        .run(argv, Duration::from_secs(60))
        .map_err(FixError::io(format!("cannot run `{}`", argv.join(" "))))?;
    if out.timed_out {
        return Err(FixError::Failed(format!(
            "`{}` timed out after 60s",
            argv.join(" ")
        )));
    }
    match out.status {
        Some(0) => Ok(()),
        s => Err(FixError::Failed(format!(
            "`{}` exited with {s:?}: {}",
            argv.join(" "),
            out.stderr.trim()
        ))),
    }
}

impl Fix for Command {
    type Params = CommandParams;
    fn name(&self) -> &'static str {
        "command"
    }
    fn prepare(&self, params: &CommandParams, _cx: &FixCtx) -> Result<Vec<Prepared>, FixError> {
        let a = argv(Some(&params.argv)).ok_or("`argv` must be a non-empty list")?;
        let undo = argv(params.undo_argv.as_ref());
        let summary = match &undo {
            Some(u) => format!("run `{}` (undo: `{}`)", a.join(" "), u.join(" ")),
            None => format!("run `{}` (no undo)", a.join(" ")),
        };
        Ok(vec![runtime_change(
            "runtime",
            format!("command {}", a.join(" ")),
            summary,
            json!("not run"),
            json!("run"),
        )])
    }
    fn fingerprint(&self, _change: &PlannedChange, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(super::value_fingerprint(&json!("not run")))
    }
    fn after_fingerprint(&self, _change: &PlannedChange) -> String {
        super::value_fingerprint(&json!("not run"))
    }
    fn save(&self, _change: &PlannedChange, _cx: &FixCtx) -> Result<Prior, FixError> {
        Ok(Prior::Value {
            value: json!("not run"),
        })
    }
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        let p: CommandParams = params_of(change)?;
        run(cx, argv(Some(&p.argv)).ok_or("no argv")?)
    }
    fn verify(&self, _change: &PlannedChange, _cx: &FixCtx) -> Result<(), FixError> {
        Ok(())
    }
    fn undo(&self, change: &PlannedChange, _prior: &Prior, cx: &FixCtx) -> Result<(), FixError> {
        let p: CommandParams = params_of(change)?;
        match argv(p.undo_argv.as_ref()) {
            Some(u) => run(cx, u),
            None => Err(FixError::Failed(format!(
                "`{}` has no undo_argv: undo it by hand",
                change.target
            ))),
        }
    }
}

/// Parameters of the `command` fix.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandParams {
    /// Program and arguments (an argv, never a shell).
    pub argv: Vec<String>,
    /// The argv that undoes it.
    #[serde(default)]
    pub undo_argv: Option<Vec<String>>,
    /// The declared class of this command.
    pub safety: crate::report::Safety,
}

pub static SPEC: super::spec::FixSpec = super::spec::FixSpec {
    name: "command",
    doc: "Run an argv (never a shell), with an argv that undoes it.",
    params: crate::kinds::ParamsDecl::of::<CommandParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &Command,
};
