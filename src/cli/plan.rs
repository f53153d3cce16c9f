//! `gpufix plan`: judge the host (and a job), show findings and the fixes they propose.

use super::{Format, Global, open_session};
use crate::plan::Unplannable;
use crate::playbook::{Layer, RuleSet};
use crate::render::text::{self, Style};
use crate::report::Report;
use crate::session::{Eval, ExitStatus, Session};
use crate::vocab::did_you_mean;
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = super::FormatParser::new("plan", super::TEXT_JSON))]
    pub format: super::Format,
    /// Also show passing and not-applicable rules (what each checked, why each was skipped).
    #[arg(short, long)]
    pub verbose: bool,
    /// Print only the summary line; the exit status says the rest.
    #[arg(short, long, conflicts_with_all = ["verbose", "progress"])]
    pub quiet: bool,
    /// Probe deadline: a probe still running after this is `unknown`.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = super::parse_duration)]
    pub probe_timeout: Duration,
    /// Write the complete plan (changes with concrete values and fingerprints) for `gpufix apply FILE`.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Show where the time went: the run's phases, each probe's wall time and what it waited
    /// on (commands, NVML, the CUDA check, files), and peak memory. In JSON: `timings`.
    #[arg(long)]
    pub timings: bool,
    #[command(flatten)]
    pub color: super::ColorOpts,
    #[command(flatten)]
    pub progress: super::ProgressOpts,
    #[command(flatten)]
    pub host: super::HostOpts,
    #[command(flatten)]
    pub rules: super::RuleOpts,
    #[command(flatten)]
    pub only: super::OnlyOpts,
}

/// Check `--only` names against the rule set.
pub fn check_only(set: &RuleSet, only: &[String]) -> anyhow::Result<()> {
    for o in only {
        if Layer::parse(o).is_none() && set.get(o).is_none() {
            let mut names: Vec<&str> = set.rules.iter().map(|r| r.rule.id.as_str()).collect();
            names.extend(Layer::ALL.iter().map(|l| l.as_str()));
            let hint = did_you_mean(o, names.iter().copied())
                .unwrap_or_else(|| "run `gpufix list` to see rule ids".into());
            anyhow::bail!("--only `{o}` is neither a rule id nor a layer\nhelp: {hint}");
        }
    }
    Ok(())
}

/// Observe and evaluate the session's rules, with progress on stderr (see [`super::progress`]).
/// Shared by plan, audit, apply and apply's re-check.
pub fn evaluate(s: &Session, eval: &Eval) -> anyhow::Result<Report> {
    check_only(&s.rules, &eval.only)?;
    let mut progress =
        super::progress::Probing::start(s.host.is_live(), eval.sample, eval.probe_deadline);
    let report = s.evaluate(eval, |key| progress.probe_done(key));
    drop(progress);
    Ok(report)
}

/// The report with every failing rule's fix planned into changes (read-only), and the fixes
/// that could not be planned. Shared by plan, audit and apply.
pub fn planned_report(s: &Session, eval: &Eval) -> anyhow::Result<(Report, Vec<Unplannable>)> {
    let mut report = evaluate(s, eval)?;
    let problems = s.plan_changes(&mut report);
    Ok((report, problems))
}

pub fn run(g: &Global, a: &PlanArgs) -> anyhow::Result<ExitStatus> {
    let started = std::time::Instant::now();
    let s = match open_session(g)? {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let opened = started.elapsed();
    let eval = Eval {
        timings: a.timings,
        ..g.eval(a.probe_timeout)
    };
    // planned_report's two steps, timed apart: `plan the fixes` draws every change's diff
    let mut report = evaluate(&s, &eval)?;
    let evaluated = started.elapsed();
    let _ = s.plan_changes(&mut report);
    if let Some(t) = &mut report.timings {
        t.add_run_phases(opened, evaluated, started.elapsed());
    }
    // everything shown or written from here on goes through the privacy filter
    let report = crate::privacy::redacted(&report);
    if let Some(out) = &a.output {
        let pf = crate::plan::PlanFile {
            plan_version: crate::plan::PLAN_VERSION,
            gpufix_version: env!("CARGO_PKG_VERSION").to_string(),
            created_at: report.generated_at.clone(),
            root: s.spec.root.as_ref().map(|r| r.display().to_string()),
            local_files: s
                .local_files
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            made_from: s.spec.made_from(&eval),
            report: report.clone(),
        };
        // private (0600): a plan holds the text of the files it changes (filtered: `apply PLAN`
        // compares it with the changes it derives filtered the same way); never through a link
        let text = serde_json::to_string_pretty(&pf)? + "\n";
        crate::safe_write::write_output(out, text.as_bytes(), 0o600).map_err(|e| {
            anyhow::anyhow!("{e}\nhelp: choose a writable path for -o that is not a link")
        })?;
    }
    match g.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => print!(
            "{}",
            text::render(
                &crate::escape::escaped(&report),
                Style {
                    color: g.color(),
                    verbose: a.verbose,
                    quiet: a.quiet,
                }
            )
        ),
    }
    if let (Some(t), Format::Text) = (&report.timings, g.format) {
        print!("\n{}", crate::vocab::timing::render(t));
    }
    Ok(ExitStatus::of_report(&report))
}
