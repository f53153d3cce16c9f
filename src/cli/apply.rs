//! `gpufix apply [PLAN]`: show every change, ask (or take --yes), and apply the approved ones in
//! one transaction; then re-check the rules. `--dry-run` prints exactly what would happen.

use super::{Format, Global};
use crate::apply;
use crate::plan::{PLAN_VERSION, PlanFile};
use crate::report::{PlannedChange, Safety, Verdict};
use crate::session::{Eval, ExitStatus};
use clap::Args;
use serde_json::json;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// A plan written by `gpufix plan -o FILE`; without it, gpufix plans afresh.
    pub plan: Option<PathBuf>,
    /// Approve every safe change without asking (for automation).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Also approve disruptive changes (modprobe, remount, GPU settings) with --yes.
    #[arg(long)]
    pub allow_disruptive: bool,
    /// Only these fix kinds may run (repeatable), e.g. --allow config.set --allow env.unset.
    #[arg(long, value_name = "KIND")]
    pub allow: Vec<String>,
    /// These fix kinds may not run (repeatable), e.g. --deny nvidia.power_limit.
    #[arg(long, value_name = "KIND")]
    pub deny: Vec<String>,
    /// Print exactly what apply would do; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Where the lock and the journal live [default: /var/lib/gpufix, under --root when given].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub rule: String,
    pub kind: String,
    pub target: String,
    pub reason: String,
}

fn kind_allowed(a: &ApplyArgs, kind: &str) -> Option<String> {
    if a.deny.iter().any(|d| d == kind) {
        return Some(format!("fix kind `{kind}` is denied by --deny"));
    }
    if !a.allow.is_empty() && !a.allow.iter().any(|d| d == kind) {
        return Some(format!("fix kind `{kind}` is not in --allow"));
    }
    None
}

enum Answer {
    Yes,
    No,
    All,
    Quit,
}

fn ask(c: &PlannedChange) -> Answer {
    eprint!(
        "apply `{}` ({}, {})? [y]es / [n]o / [a]ll / [q]uit (default no): ",
        c.summary,
        c.kind,
        c.safety.as_str()
    );
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return Answer::Quit;
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Answer::Yes,
        "a" | "all" => Answer::All,
        "q" | "quit" => Answer::Quit,
        _ => Answer::No,
    }
}

pub fn run(g: &Global, a: &ApplyArgs) -> anyhow::Result<ExitStatus> {
    if !matches!(g.format, Format::Text | Format::Json) {
        return super::unsupported_format("apply", g.format);
    }
    let mut s = match super::open_session(g)? {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let eval = g.eval(Duration::from_secs(15));
    let (report, problems) = match &a.plan {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("cannot read plan {}: {e}", p.display()))?;
            let pf: PlanFile = serde_json::from_str(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not a gpufix plan: {e}\nhelp: write one with `gpufix plan -o FILE`",
                    p.display()
                )
            })?;
            if pf.plan_version != PLAN_VERSION {
                anyhow::bail!(
                    "{} is plan version {}, this gpufix reads version {PLAN_VERSION}",
                    p.display(),
                    pf.plan_version
                );
            }
            let plan_root = pf.root.clone();
            let given = s.spec.root.as_ref().map(|r| r.display().to_string());
            if plan_root != given {
                anyhow::bail!(
                    "{} was made with --root {:?}, this run has --root {:?}\nhelp: apply a plan with the same --root it was made with",
                    p.display(),
                    plan_root,
                    given
                );
            }
            s.local_files
                .extend(pf.local_files.iter().map(PathBuf::from));
            s.roots = s.spec.roots(&s.local_files);
            (pf.report, Vec::new())
        }
        None => super::plan::planned_report(&s, &eval)?,
    };
    let cx = s.fix_ctx();
    let json_out = g.format == Format::Json;
    let mut out = std::io::stdout();
    // A fix that should run but cannot be planned (a refused target, a missing input) stops the
    // whole run before anything changes.
    let blocking: Vec<String> = problems
        .iter()
        .filter(|p| kind_allowed(a, &p.kind).is_none())
        .map(|p| {
            format!(
                "fix of `{}` ({}) cannot be planned: {}",
                p.rule, p.kind, p.error
            )
        })
        .collect();
    if !blocking.is_empty() && !a.dry_run {
        anyhow::bail!(
            "{}
nothing was changed
help: fix the cause, or leave those fixes out with --deny KIND or --only RULE",
            blocking.join("\n")
        );
    }

    // manual fixes: printed, never run
    if !json_out {
        for r in report.results.iter().filter(|r| r.verdict == Verdict::Fail) {
            if let Some(f) = r.fix.as_ref().filter(|f| f.safety == Safety::Manual) {
                writeln!(out, "manual fix for {} (not run by gpufix):", r.id)?;
                for l in f.instructions.as_deref().unwrap_or("").lines() {
                    writeln!(out, "    {l}")?;
                }
            }
        }
    }
    let mut approved: Vec<PlannedChange> = Vec::new();
    let mut skipped: Vec<Skipped> = Vec::new();
    let interactive = !a.yes && std::io::stdin().is_terminal() && !a.dry_run;
    if !a.yes && !interactive && !a.dry_run && !report.changes.is_empty() {
        anyhow::bail!(
            "{} change(s) to approve, but there is no terminal to ask on\nhelp: review them with `gpufix apply --dry-run`, then run `gpufix apply --yes`",
            report.changes.len()
        );
    }
    let mut all = false;
    let mut quit = false;
    for c in &report.changes {
        let skip = |reason: String| Skipped {
            rule: c.rule.clone(),
            kind: c.kind.clone(),
            target: c.target.clone(),
            reason,
        };
        if quit {
            skipped.push(skip("not asked: quit".into()));
            continue;
        }
        if let Some(why) = kind_allowed(a, &c.kind) {
            skipped.push(skip(why));
            continue;
        }
        if skipped.iter().any(|s| s.target == c.target) && c.diff.is_some() {
            skipped.push(skip("builds on a skipped change to the same file".into()));
            continue;
        }
        if !json_out {
            writeln!(out, "\n{} [{}] {}", c.kind, c.safety.as_str(), c.summary)?;
            match &c.diff {
                Some(d) => write!(out, "{}", indent(d))?,
                None => writeln!(
                    out,
                    "    {} → {}",
                    c.before.clone().unwrap_or_default(),
                    c.after.clone().unwrap_or_default()
                )?,
            }
        }
        let disruptive = c.safety == Safety::Disruptive;
        if a.dry_run || a.yes {
            if disruptive && !a.allow_disruptive {
                skipped.push(skip(
                    "disruptive: needs --allow-disruptive (or approve it at the prompt)".into(),
                ));
            } else {
                approved.push(c.clone());
            }
            continue;
        }
        if all && !disruptive {
            approved.push(c.clone());
            continue;
        }
        match ask(c) {
            Answer::Yes => approved.push(c.clone()),
            Answer::All => {
                all = true;
                approved.push(c.clone());
            }
            Answer::No => skipped.push(skip("declined".into())),
            Answer::Quit => {
                quit = true;
                skipped.push(skip("declined: quit".into()));
            }
        }
    }
    if a.dry_run {
        if json_out {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"dry_run": true, "would_apply": approved, "skipped": skipped})
                )?
            );
        } else {
            writeln!(
                out,
                "\ndry run: {} change(s) would be applied, {} skipped; nothing was written",
                approved.len(),
                skipped.len()
            )?;
            for s in &skipped {
                writeln!(out, "  skipped {} ({}): {}", s.target, s.kind, s.reason)?;
            }
        }
        return Ok(ExitStatus::Clean);
    }
    if approved.is_empty() {
        if json_out {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"run": null, "changed": false, "applied": [], "skipped": skipped})
                )?
            );
        } else {
            writeln!(out, "nothing to apply ({} skipped)", skipped.len())?;
            for s in &skipped {
                writeln!(out, "  skipped {} ({}): {}", s.target, s.kind, s.reason)?;
            }
        }
        return Ok(ExitStatus::Clean);
    }
    let state = s.state_dir(a.state_dir.as_deref());
    let outcome = apply::apply(&approved, &cx, &state, &s.host.describe())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(err) = &outcome.error {
        let what = if outcome.rolled_back {
            "every change of this run was undone"
        } else {
            "undo failed too: see `gpufix history`"
        };
        if json_out {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"run": outcome.run, "changed": false, "error": err, "rolled_back": outcome.rolled_back})
                )?
            );
        }
        anyhow::bail!("apply failed: {err}\n{what} (run {})", outcome.run);
    }
    // Re-check the rules: one whose fix takes effect at once must now pass.
    let mut notes = Vec::new();
    let rules: Vec<String> = {
        let mut v: Vec<String> = approved.iter().map(|c| c.rule.clone()).collect();
        v.dedup();
        v
    };
    let recheck = super::plan::evaluate(
        &s,
        &Eval {
            sample: Duration::ZERO,
            only: rules.clone(),
            ..eval
        },
    );
    if let Ok(after) = recheck {
        for r in after
            .results
            .iter()
            .filter(|r| rules.contains(&r.id) && r.verdict == Verdict::Fail)
        {
            let immediate = approved
                .iter()
                .filter(|c| c.rule == r.id)
                .all(|c| c.restart == "nothing");
            if immediate {
                let rb = apply::rollback(&state, Some(&outcome.run), true, &cx);
                anyhow::bail!(
                    "rule `{}` still fails after its fix: {}\n{} (run {})",
                    r.id,
                    r.messages.join("; "),
                    if rb.is_ok() {
                        "every change of this run was undone"
                    } else {
                        "undo failed: run `gpufix rollback`"
                    },
                    outcome.run
                );
            }
            notes.push(format!(
                "`{}` still fails until you restart {}",
                r.id,
                approved
                    .iter()
                    .find(|c| c.rule == r.id)
                    .map(|c| c.restart.as_str())
                    .unwrap_or("the job")
            ));
        }
    }
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"run": outcome.run, "changed": true, "applied": approved, "skipped": skipped, "notes": notes})
            )?
        );
    } else {
        writeln!(
            out,
            "\napplied {} change(s) in run {} (undo with `gpufix rollback {}`)",
            approved.len(),
            outcome.run,
            outcome.run
        )?;
        for s in &skipped {
            writeln!(out, "  skipped {} ({}): {}", s.target, s.kind, s.reason)?;
        }
        for n in &notes {
            writeln!(out, "note: {n}")?;
        }
    }
    Ok(ExitStatus::Clean)
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}
