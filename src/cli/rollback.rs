//! `gpufix rollback [RUN]` and `gpufix history`: undo a run from its journal; list runs.

use super::{Format, Global};
use crate::apply;
use crate::fixes::FixCtx;
use crate::journal;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RollbackArgs {
    /// The run to undo [default: the last run not rolled back]
    pub run: Option<String>,
    /// Restore the prior state even where a target changed since the run.
    #[arg(long)]
    pub force: bool,
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

pub fn rollback(g: &Global, a: &RollbackArgs) -> anyhow::Result<i32> {
    let host = g.host()?;
    let inputs = g.inputs(host.as_ref())?;
    let state = super::apply::state_dir(g, &a.state_dir);
    // files named in the run's changes that live outside --root were --config/--env-file
    let mut local = super::apply::local_files(g);
    for r in journal::runs(&state) {
        if let Ok(recs) = journal::read(&state.join("runs").join(&r.run))
            && let Some(journal::Record::Begin { changes, .. }) = recs.first()
        {
            for c in changes {
                if c.diff.is_some()
                    && c.target.starts_with('/')
                    && g.root
                        .as_ref()
                        .is_some_and(|root| PathBuf::from(&c.target).starts_with(root))
                {
                    local.push(PathBuf::from(&c.target));
                }
                if c.action.get("file").is_none()
                    && matches!(c.kind.as_str(), "env.set" | "env.unset" | "config.set")
                {
                    local.push(PathBuf::from(&c.target));
                }
            }
        }
    }
    let roots = super::apply::roots(g, &local);
    let cx = FixCtx {
        host: host.as_ref(),
        inputs: &inputs,
        roots: &roots,
        local_files: local.clone(),
        overlay: Default::default(),
    };
    match apply::rollback(&state, a.run.as_deref(), a.force, &cx) {
        Ok(o) => {
            if g.format == Format::Json {
                println!(
                    "{}",
                    serde_json::json!({"run": o.run, "was": o.was, "undone": o.undone.len()})
                );
            } else {
                println!(
                    "rolled back run {} ({}): {} change(s) undone",
                    o.run,
                    o.was,
                    o.undone.len()
                );
                for c in o.undone.iter().rev() {
                    println!("  undone: {}", c.summary);
                }
            }
            Ok(0)
        }
        Err(e) => anyhow::bail!("{e}"),
    }
}

pub fn history(g: &Global, a: &HistoryArgs) -> anyhow::Result<i32> {
    let state = super::apply::state_dir(g, &a.state_dir);
    let runs = journal::runs(&state);
    if g.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(0);
    }
    if runs.is_empty() {
        println!("no runs in {}", state.join("runs").display());
        return Ok(0);
    }
    println!("{:<32} {:<12} {:>7}  rules", "run", "status", "changes");
    for r in &runs {
        println!(
            "{:<32} {:<12} {:>7}  {}",
            r.run,
            r.status,
            format!("{}/{}", r.made, r.changes),
            r.rules.join(", ")
        );
    }
    if let Some(r) = runs.iter().find(|r| r.status == "interrupted") {
        println!(
            "\nrun {} was interrupted: `gpufix rollback {}` restores what it changed",
            r.run, r.run
        );
    }
    Ok(0)
}
