//! `gpufix rollback [RUN]` and `gpufix history`: undo a run from its journal; list runs.

use super::{Format, Global};
use crate::apply;
use crate::journal::{self, RunInfo, RunStatus};
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

/// The runs as `gpufix history` prints them: each column as wide as its widest cell, so a
/// status or run id longer than its heading keeps the columns after it in line.
fn history_table(runs: &[RunInfo]) -> String {
    let rows: Vec<[String; 4]> = runs
        .iter()
        .map(|r| {
            [
                r.run.clone(),
                r.status.as_str().to_string(),
                format!("{}/{}", r.made, r.changes),
                r.rules.join(", "),
            ]
        })
        .collect();
    let head = ["run", "status", "changes", "rules"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let (run, status, changes) = (width(0), width(1), width(2));
    let mut out = String::new();
    for [a, b, c, d] in std::iter::once(head.map(str::to_string)).chain(rows) {
        let line = format!("{a:<run$}  {b:<status$}  {c:>changes$}  {d}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
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
    print!("{}", history_table(&runs));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(run: &str, status: RunStatus, made: usize, changes: usize, rules: &[&str]) -> RunInfo {
        RunInfo {
            run: run.to_string(),
            started_at: "2026-12-03T22:00:00Z".to_string(),
            host: "gpu-node-7".to_string(),
            status,
            changes,
            made,
            rules: rules.iter().map(|r| r.to_string()).collect(),
            problem: None,
        }
    }

    /// Issue 27: a status longer than its heading (`rolled-back` beside `applied`), a run id
    /// longer than the others and a count of two digits keep every column in line.
    #[test]
    fn history_columns_stay_in_line_whatever_their_widths() {
        let runs = [
            run(
                "20261203T210501Z-4f2a",
                RunStatus::Applied,
                2,
                2,
                &["data.workers-too-few", "cuda.launch-blocking"],
            ),
            run(
                "20261203T211733Z-9c01",
                RunStatus::RolledBack,
                0,
                1,
                &["driver.persistence-off"],
            ),
            run(
                "20261203T220002Z-1b7e-retry-after-reboot",
                RunStatus::Interrupted,
                3,
                12,
                &["data.pin-memory-off"],
            ),
            run("20261203T221510Z-77aa", RunStatus::Failed, 1, 1, &[]),
        ];
        let table = history_table(&runs);
        // every row's status, changes and rules start where the heading's do
        let head = table.lines().next().unwrap();
        let at = |w: &str| head.find(w).unwrap();
        for (line, r) in table.lines().skip(1).zip(&runs) {
            assert_eq!(line.find(r.status.as_str()), Some(at("status")), "{table}");
            let changes = format!("{}/{}", r.made, r.changes);
            assert_eq!(
                line.find(&changes).map(|i| i + changes.len()),
                Some(at("changes") + "changes".len()),
                "{table}"
            );
            if let Some(rule) = r.rules.first() {
                assert_eq!(line.find(rule.as_str()), Some(at("rules")), "{table}");
            }
        }
        insta::assert_snapshot!(table);
    }
}
