//! `gpufix rollback [RUN]` and `gpufix history`: undo a run from its journal; list runs.

use super::{Format, Global};
use crate::apply;
use crate::journal::{self, RunStatus};
use crate::session::{ExitStatus, Session};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RollbackArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = super::FormatParser::new("rollback", super::TEXT_JSON))]
    pub format: super::Format,
    /// The run to undo [default: the last run not rolled back]
    pub run: Option<String>,
    /// Restore the prior state even where a target changed since the run.
    #[arg(long)]
    pub force: bool,
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    #[command(flatten)]
    pub root: super::RootOpts,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = super::FormatParser::new("history", super::TEXT_JSON))]
    pub format: super::Format,
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    #[command(flatten)]
    pub root: super::RootOpts,
}

pub fn rollback(g: &Global, a: &RollbackArgs) -> anyhow::Result<ExitStatus> {
    let mut s = Session::without_rules(g.spec())?;
    let state = s.state_dir(a.state_dir.as_deref());
    journal::check_state(&state).map_err(|e| anyhow::anyhow!(e))?;
    // The roots are the run's own: its --root (which must be this one) and the --config /
    // --env-file it recorded. Nothing a change names widens them.
    let runs = journal::runs(&state);
    let chosen = match &a.run {
        Some(r) => runs.iter().find(|x| &x.run == r),
        None => runs
            .iter()
            .rev()
            .find(|x| x.status != RunStatus::RolledBack),
    };
    if let Some(info) = chosen
        && let Ok(recs) = journal::read(&state.join("runs").join(&info.run))
        && let Some(journal::Record::Begin {
            root, local_files, ..
        }) = recs.first()
    {
        let now = s.spec.root.as_ref().map(|r| r.display().to_string());
        if root.is_some() && *root != now {
            anyhow::bail!(
                "run {} was applied with --root {}, this rollback has {}\nhelp: roll back with the --root the run was applied with",
                info.run,
                root.as_deref().unwrap_or("/"),
                now.as_deref()
                    .map_or("no --root".to_string(), |r| format!("--root {r}"))
            );
        }
        for f in local_files {
            let p = PathBuf::from(f);
            if p.is_absolute() && !s.local_files.contains(&p) {
                s.local_files.push(p);
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
                    println!("  undone: {}", crate::privacy::redact_text(&c.summary));
                }
            }
            Ok(ExitStatus::Clean)
        }
        Err(e) => anyhow::bail!("{e}"),
    }
}

pub fn history(g: &Global, a: &HistoryArgs) -> anyhow::Result<ExitStatus> {
    let state = g.spec().state_dir(a.state_dir.as_deref());
    journal::check_state(&state).map_err(|e| anyhow::anyhow!(e))?;
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
    if let Some(r) = runs.iter().find(|r| r.status == RunStatus::Interrupted) {
        println!(
            "\nrun {} was interrupted: `{}` restores what it changed",
            r.run,
            super::rollback_command(&r.run, g.root.as_deref(), a.state_dir.as_deref())
        );
    }
    for r in runs.iter().filter(|r| r.status == RunStatus::Corrupt) {
        println!(
            "\nrun {} has a corrupt journal ({}): `gpufix apply` is blocked until it is dealt with",
            r.run,
            r.problem.as_deref().unwrap_or("unreadable")
        );
    }
    Ok(ExitStatus::Clean)
}
