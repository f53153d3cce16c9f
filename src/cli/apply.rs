//! `gpufix apply [PLAN]`: show every change, ask (or take --yes), and apply the approved ones in
//! one transaction; then re-check the rules. `--dry-run` prints exactly what would happen.

use super::{Format, Global};
use crate::apply;
use crate::escape;
use crate::fixes::FixCtx;
use crate::host::remembered::HostView;
use crate::plan::{JobFacts, PLAN_VERSION, PlanFile};
use crate::report::{PlannedChange, Safety, Verdict};
use crate::session::{Eval, ExitStatus, OpenError, Session};
use clap::Args;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = super::FormatParser::new("apply", super::TEXT_JSON))]
    pub format: super::Format,
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
    #[command(flatten)]
    pub progress: super::ProgressOpts,
    #[command(flatten)]
    pub host: super::HostOpts,
    #[command(flatten)]
    pub rules: super::RuleOpts,
    #[command(flatten)]
    pub only: super::OnlyOpts,
}

/// A change left out of the run, and why (not allowed, declined, disruptive without
/// `--allow-disruptive`, building on a skipped change).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// The rule whose fix it is.
    pub rule: String,
    /// The fix kind.
    pub kind: String,
    /// What it would change.
    pub target: String,
    pub reason: String,
}

/// What `apply --format json` prints: one object of one of these shapes (the Ansible module
/// parses it; `gpufix schema apply` gives schemas/apply.schema.json). Exit 0 or 4 print a dry
/// run or an applied run; an apply that failed prints a failed run and exits 1.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ApplyJson {
    DryRun(DryRunJson),
    Applied(AppliedJson),
    Failed(FailedJson),
}

/// `--dry-run`: what would be applied; nothing was written.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DryRunJson {
    /// Always true.
    pub dry_run: bool,
    pub would_apply: Vec<PlannedChange>,
    pub skipped: Vec<Skipped>,
}

/// Applied and verified (exit 0), or applied and verified with the re-check failed or a rule
/// waiting for a restart (exit 4, said in `notes`); or nothing to apply (`run` null, `changed`
/// false, no `notes`).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppliedJson {
    /// The run id (`gpufix rollback RUN`); null when nothing was applied.
    pub run: Option<String>,
    pub changed: bool,
    pub applied: Vec<PlannedChange>,
    pub skipped: Vec<Skipped>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
}

/// A change failed: the run's changes were undone when `rolled_back` (exit 1).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailedJson {
    pub run: String,
    /// Always false.
    pub changed: bool,
    pub error: String,
    pub rolled_back: bool,
}

impl ApplyJson {
    fn print(&self) -> anyhow::Result<()> {
        println!("{}", serde_json::to_string_pretty(self)?);
        Ok(())
    }
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
        escape::escape(&c.summary),
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

/// Largest plan file read.
const MAX_PLAN_BYTES: u64 = 64 << 20;

/// Read a plan file: trusted (owner, not writable by others), bounded, the right version.
fn read_plan(p: &Path) -> anyhow::Result<PlanFile> {
    use std::io::Read;
    // checked on the descriptor it reads (crate::trust::open_trusted)
    let f = crate::trust::open_trusted(p, "plan file").map_err(|e| anyhow::anyhow!(e))?;
    let mut text = String::new();
    f.take(MAX_PLAN_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| anyhow::anyhow!("cannot read plan {}: {e}", p.display()))?;
    if text.len() as u64 > MAX_PLAN_BYTES {
        anyhow::bail!(
            "cannot read plan {}: input too large (over {MAX_PLAN_BYTES} bytes)\nhelp: write one with `gpufix plan -o FILE`",
            p.display()
        );
    }
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
    Ok(pf)
}

/// Changes the plan file proposes that are not what gpufix derives now: refused, showing why.
fn refuse_mismatch(
    p: &Path,
    file: &[PlannedChange],
    derived: &[PlannedChange],
    cx: &crate::fixes::FixCtx,
) -> anyhow::Result<()> {
    let diffs = crate::plan::differences(file, derived);
    if diffs.is_empty() {
        return Ok(());
    }
    // A target that changed since the plan was made explains the difference: a stale plan.
    let mut stale = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for c in file {
        // later changes to one target chain on the earlier ones: the first saw the disk
        if !seen.insert((c.kind.as_str(), c.part.as_str(), c.target.as_str())) {
            continue;
        }
        let same_target = derived
            .iter()
            .any(|d| d.kind == c.kind && d.target == c.target && d.part == c.part);
        if !same_target {
            continue;
        }
        if let Some(k) = crate::fixes::find(&c.kind)
            && let Ok(now) = k.fingerprint(c, cx)
            && now != c.fingerprint
        {
            stale.push(format!(
                "`{}` changed since the plan was made (plan saw {}, now {now})",
                crate::escape::escape(&c.target),
                c.fingerprint
            ));
        }
    }
    if !stale.is_empty() {
        anyhow::bail!(
            "refusing a stale plan; nothing was changed:\n  {}\nhelp: run `gpufix plan` again",
            stale.join("\n  ")
        );
    }
    anyhow::bail!(
        "refusing plan {}: it does not match what gpufix derives now from the playbooks and this host; nothing was changed:\n{}\nhelp: a plan file is a proposal: make a new one with `gpufix plan -o FILE`, or run `gpufix apply` without one",
        p.display(),
        diffs.join("\n")
    );
}

pub fn run(g: &Global, a: &ApplyArgs) -> anyhow::Result<ExitStatus> {
    let mut spec = g.spec();
    let mut eval = g.eval(Duration::from_secs(15));
    let plan_file = match &a.plan {
        Some(p) => {
            let pf = read_plan(p)?;
            let given = spec.root.as_ref().map(|r| r.display().to_string());
            if pf.root != given {
                anyhow::bail!(
                    "{} was made with --root {:?}, this run has --root {:?}\nhelp: apply a plan with the same --root it was made with",
                    p.display(),
                    pf.root,
                    given
                );
            }
            (spec, eval) = spec.for_plan(&eval, &pf.made_from).map_err(|e| {
                anyhow::anyhow!(
                    "{} was made from other inputs than this command line names:\n{e}\nhelp: `gpufix apply PLAN` needs no inputs again; leave them out or make a new plan",
                    p.display()
                )
            })?;
            Some((p.clone(), pf))
        }
        None => None,
    };
    // A snapshot is what a host said, not a host: nothing it names can be changed, and a
    // journal of "verified" changes made to nothing would be a lie rollback acts on.
    if spec.snapshot.is_some() && !a.dry_run {
        anyhow::bail!(
            "a recorded host cannot be changed; use `plan --snapshot` to see the changes\nhelp: `gpufix apply --dry-run --snapshot FILE` shows what apply would do on that host; run apply on the host itself"
        );
    }
    // A plan made from a running job that has stopped since (or whose pid is another process
    // now): the facts the plan recorded about the job stand in for the process, and the rules
    // are derived again without it (issue 26).
    let gone_job: Option<JobFacts> = match &plan_file {
        Some((_, pf)) => match &pf.job {
            Some(job) => {
                let h = spec.host()?;
                (!crate::plan::job_running(h.as_ref(), job)).then(|| job.clone())
            }
            None => None,
        },
        None => None,
    };
    let mut owners = std::collections::BTreeMap::new();
    if let Some(job) = &gone_job {
        spec.pid = None;
        for f in &job.files {
            owners.insert(f.path.clone(), f.owner.clone());
        }
    }
    let running_pid = if gone_job.is_none() { spec.pid } else { None };
    let reading = g.progress.reading(&super::progress::input_files(&spec));
    let opened = Session::open_with(spec, |h| {
        if owners.is_empty() {
            h
        } else {
            Arc::new(HostView::new(h, owners))
        }
    });
    drop(reading);
    let s = match opened {
        Ok(s) => s,
        Err(OpenError::Invalid(d)) => return Ok(super::print_diagnostics(&d)),
        Err(OpenError::Other(e)) => return Err(e),
    };
    // Roots come from the command line (and the plan's recorded inputs, which must match it);
    // what apply executes is derived again here, never read from the plan file.
    let (mut report, problems) = super::plan::planned_report(&g.progress, &s, &eval)?;
    let cx = s.fix_ctx();
    let json_out = g.format == Format::Json;
    if let (Some((_, pf)), Some(job)) = (&plan_file, &gone_job) {
        report.changes = offline_changes(&s, pf, job, std::mem::take(&mut report.changes))?;
        if !json_out {
            print!("{}", job_gone_text(job));
        }
    }
    if let Some((p, pf)) = &plan_file {
        // the plan file holds the changes as `plan -o` wrote them: through the privacy filter
        refuse_mismatch(
            p,
            &pf.report.changes,
            &crate::privacy::redacted(&report.changes),
            &cx,
        )?;
    }
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
            // what files said is shown escaped: an ESC sequence must not hide a diff line;
            // and without the secrets next to it (the privacy filter)
            let c = &crate::privacy::redacted(c);
            writeln!(
                out,
                "\n{} [{}] {}",
                c.kind,
                c.safety.as_str(),
                escape::escape(&c.summary)
            )?;
            match &c.diff {
                Some(d) => write!(out, "{}", indent(&escape::escape_lines(d)))?,
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
            ApplyJson::DryRun(DryRunJson {
                dry_run: true,
                would_apply: crate::privacy::redacted(&approved),
                skipped,
            })
            .print()?;
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
            ApplyJson::Applied(AppliedJson {
                run: None,
                changed: false,
                applied: vec![],
                skipped,
                notes: None,
            })
            .print()?;
        } else {
            writeln!(out, "nothing to apply ({} skipped)", skipped.len())?;
            for s in &skipped {
                writeln!(out, "  skipped {} ({}): {}", s.target, s.kind, s.reason)?;
            }
        }
        return Ok(ExitStatus::Clean);
    }
    let state = s.state_dir(a.state_dir.as_deref());
    let outcome = apply::apply(
        &approved,
        &cx,
        &state,
        &s.host.describe(),
        s.spec.root.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    // the hint carries the run's --root and --state-dir, or rollback looks elsewhere
    let undo =
        super::rollback_command(&outcome.run, s.spec.root.as_deref(), a.state_dir.as_deref());
    if let Some(err) = &outcome.error {
        let what = if outcome.rolled_back {
            "every change of this run was undone"
        } else {
            "undo failed too: see `gpufix history`"
        };
        if json_out {
            ApplyJson::Failed(FailedJson {
                run: outcome.run.clone(),
                changed: false,
                error: err.clone(),
                rolled_back: outcome.rolled_back,
            })
            .print()?;
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
        &g.progress,
        &s,
        &Eval {
            sample: Duration::ZERO,
            only: rules.clone(),
            ..eval
        },
    );
    let mut status = ExitStatus::Clean;
    let restart_job = approved
        .iter()
        .any(|c| c.restart == crate::playbook::model::Restart::Job.as_str());
    if let Some(job) = &gone_job
        && restart_job
    {
        notes.push(format!(
            "the job (pid {}) had stopped: start it again from the changed files; `gpufix plan --pid NEWPID` checks the new one",
            job.pid
        ));
    } else if let Some(pid) = running_pid
        && restart_job
    {
        notes.push(format!(
            "the job (pid {pid}) is still running with the old settings: restart it for the change to take effect"
        ));
    }
    if let Err(e) = &recheck {
        // the changes were made and verified: say so, and that the re-check did not run
        notes.push(format!(
            "every change was applied and verified, but re-checking the rules failed: {e:#}; run `gpufix plan` to see where the host stands"
        ));
        status = ExitStatus::RecheckFailed;
    }
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
                    crate::privacy::redact_text(&r.messages.join("; ")),
                    if rb.is_ok() {
                        "every change of this run was undone"
                    } else {
                        "undo failed: run `{undo}`"
                    }
                    .replace("{undo}", &undo),
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
        ApplyJson::Applied(AppliedJson {
            run: Some(outcome.run.clone()),
            changed: true,
            applied: crate::privacy::redacted(&approved),
            skipped: skipped.clone(),
            notes: Some(notes.clone()),
        })
        .print()?;
    } else {
        writeln!(
            out,
            "\napplied {} change(s) in run {} (undo with `{undo}`)",
            approved.len(),
            outcome.run,
        )?;
        for s in &skipped {
            writeln!(out, "  skipped {} ({}): {}", s.target, s.kind, s.reason)?;
        }
        for n in &notes {
            writeln!(out, "note: {n}")?;
        }
    }
    Ok(status)
}

/// What `apply PLAN` says when the job the plan was made from has stopped: which facts came
/// from the job and were not observed again, and which files were re-checked.
fn job_gone_text(job: &JobFacts) -> String {
    let mut t = format!(
        "the job the plan was made from (pid {}: {}) is not running; from it, and not observed again:\n",
        job.pid,
        escape::escape(&job.command)
    );
    for f in &job.facts {
        t += &format!("  - {}\n", escape::escape(f));
    }
    for f in &job.files {
        t += &format!(
            "  - {} is the job's file, changed as its owner ({})\n",
            escape::escape(&f.path),
            f.owner.describe()
        );
    }
    if !job.files.is_empty() {
        t += "re-checked now: ";
        t += &job
            .files
            .iter()
            .map(|f| format!("{} (unchanged since the plan)", escape::escape(&f.path)))
            .collect::<Vec<_>>()
            .join(", ");
        t += "\n";
    }
    t
}

/// The changes `apply PLAN` makes when the job the plan was made from has stopped. A change to
/// a file found through the job is prepared again from the plan's action on the file as it is
/// now, after its fingerprint is checked against the plan's (a changed file is refused, named);
/// the file must be one the plan recorded as the job's, it is read and written as the job's
/// recorded owner, under the command line's roots, and its safety and restart come from the
/// playbooks. Every other change is the one derived from the host now (`derived_now`).
fn offline_changes(
    s: &Session,
    pf: &PlanFile,
    job: &JobFacts,
    derived_now: Vec<PlannedChange>,
) -> anyhow::Result<Vec<PlannedChange>> {
    let fresh = s.fix_ctx();
    let mut stale = Vec::new();
    for f in &job.files {
        if f.path.starts_with("/proc/") {
            anyhow::bail!(
                "refusing plan: {} lived in the job's own root (a container), which went with the job; nothing was changed\nhelp: apply while the job runs (`gpufix apply --pid PID`), or make a plan from the restarted job",
                escape::escape(&f.path)
            );
        }
        let Some(c) = pf.report.changes.iter().find(|c| c.target == f.path) else {
            continue;
        };
        let Some(k) = crate::fixes::find(&c.kind) else {
            anyhow::bail!(
                "refusing plan: unknown fix kind `{}`; nothing was changed",
                c.kind
            );
        };
        match k.fingerprint(c, &fresh) {
            Ok(now) if now == f.fingerprint => {}
            Ok(now) => stale.push(format!(
                "`{}` changed since the plan was made (plan saw {}, now {now})",
                escape::escape(&f.path),
                f.fingerprint
            )),
            Err(e) => stale.push(format!(
                "`{}` cannot be checked again: {}",
                escape::escape(&f.path),
                escape::escape(&e.to_string())
            )),
        }
    }
    if !stale.is_empty() {
        anyhow::bail!(
            "refusing a stale plan; nothing was changed:\n  {}\nhelp: the job (pid {}) has stopped, so the plan cannot be made again from it: start the job, then `gpufix plan --pid NEWPID -o FILE`",
            stale.join("\n  "),
            job.pid
        );
    }
    let prep = s.fix_ctx();
    let mut rest = derived_now;
    let mut out = Vec::new();
    for c in &pf.report.changes {
        if job.files.iter().any(|f| f.path == c.target) {
            out.push(prepare_again(s, &prep, c)?);
        } else if let Some(i) = rest
            .iter()
            .position(|d| d.kind == c.kind && d.target == c.target && d.part == c.part)
        {
            out.push(rest.remove(i));
        }
    }
    out.extend(rest);
    Ok(out)
}

/// A job file's change prepared again from the plan's rendered action on the file as it is.
fn prepare_again(s: &Session, cx: &FixCtx, c: &PlannedChange) -> anyhow::Result<PlannedChange> {
    let target = escape::escape(&c.target);
    let rule = s.rules.get(&c.rule).ok_or_else(|| {
        anyhow::anyhow!(
            "refusing plan: the rule `{}` of its change to {target} is not in the playbooks; nothing was changed",
            c.rule
        )
    })?;
    let has_kind = |f: &&crate::playbook::model::Fix| {
        f.actions
            .iter()
            .any(|a| a.get("kind").and_then(|k| k.as_str()) == Some(c.kind.as_str()))
    };
    let fix = rule.rule.fix.as_ref().filter(has_kind).ok_or_else(|| {
        anyhow::anyhow!(
            "refusing plan: the rule `{}` has no `{}` fix in the playbooks; nothing was changed",
            c.rule,
            c.kind
        )
    })?;
    let safety = rule.fix_safety.unwrap_or(fix.safety);
    let spec = crate::fixes::spec(&c.kind)
        .filter(|_| c.part == "file" && safety != Safety::Manual)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "refusing plan: its `{}` change to {target} is not a file edit gpufix can make without the job; nothing was changed",
                c.kind
            )
        })?;
    let params = c.action.as_object().cloned().unwrap_or_default();
    let prepared = crate::fixes::prepare_checked(spec, &params, cx).map_err(|e| {
        anyhow::anyhow!(
            "refusing plan: its change to {target} cannot be made again: {}; nothing was changed",
            escape::escape(&e.to_string())
        )
    })?;
    let p = prepared
        .into_iter()
        .find(|p| p.target == c.target && p.part == c.part)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "refusing plan: {target} already has what the change writes; nothing was changed"
            )
        })?;
    Ok(PlannedChange {
        rule: c.rule.clone(),
        kind: c.kind.clone(),
        target: p.target,
        safety,
        summary: p.summary,
        diff: p.diff,
        before: p.before,
        after: p.after,
        before_text: p.before_text,
        after_text: p.after_text,
        part: p.part.to_string(),
        action: serde_json::Value::Object(params),
        fingerprint: p.fingerprint,
        restart: fix.restart.as_str().to_string(),
    })
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}
