//! `gpufix rollback [RUN]` and `gpufix history`: undo a run from its journal; list runs.

use super::{Format, Global};
use crate::apply;
use crate::journal;
use crate::session::{ExitStatus, Session};
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

pub fn rollback(g: &Global, a: &RollbackArgs) -> anyhow::Result<ExitStatus> {
    if !matches!(g.format, Format::Text | Format::Json) {
        return super::unsupported_format("rollback", g.format);
    }
    let mut s = Session::without_rules(g.spec())?;
    let state = s.state_dir(a.state_dir.as_deref());
    // files named in the run's changes that live outside --root were --config/--env-file
    for r in journal::runs(&state) {
        if let Ok(recs) = journal::read(&state.join("runs").join(&r.run))
            && let Some(journal::Record::Begin { changes, .. }) = recs.first()
        {
            for c in changes {
                if c.diff.is_some()
                    && c.target.starts_with('/')
                    && s.spec
                        .root
                        .as_ref()
                        .is_some_and(|root| PathBuf::from(&c.target).starts_with(root))
                {
                    s.local_files.push(PathBuf::from(&c.target));
                }
                if c.action.get("file").is_none()
                    && matches!(c.kind.as_str(), "env.set" | "env.unset" | "config.set")
                {
                    s.local_files.push(PathBuf::from(&c.target));
                }
            }
        }
    }
    s.roots = s.spec.roots(&s.local_files);
    let cx = s.fix_ctx();
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
            Ok(ExitStatus::Clean)
        }
        Err(e) => anyhow::bail!("{e}"),
    }
}

pub fn history(g: &Global, a: &HistoryArgs) -> anyhow::Result<ExitStatus> {
    if !matches!(g.format, Format::Text | Format::Json) {
        return super::unsupported_format("history", g.format);
    }
    let state = g.spec().state_dir(a.state_dir.as_deref());
    let runs = journal::runs(&state);
    if g.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(ExitStatus::Clean);
    }
    if runs.is_empty() {
        println!("no runs in {}", state.join("runs").display());
        return Ok(ExitStatus::Clean);
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
    Ok(ExitStatus::Clean)
}
