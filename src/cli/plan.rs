//! `gpufix plan`: judge the host (and a job), show findings and the fixes they propose.

use super::{Format, Global, print_diagnostics};
use crate::engine::{self, Options};
use crate::host::Host;
use crate::plan::Unplannable;
use crate::playbook::diag::did_you_mean;
use crate::playbook::{Layer, RuleSet};
use crate::probes::Inputs;
use crate::render::text::{self, Style};
use crate::report::Report;
use clap::Args;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug, Default)]
pub struct PlanArgs {
    /// Also show details of passing and not-applicable rules.
    #[arg(short, long)]
    pub verbose: bool,
    /// Probe deadline: a probe still running after this is `unknown`.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = super::parse_duration)]
    pub probe_timeout: Duration,
    /// Write the complete plan (changes with concrete values and fingerprints) for `gpufix apply FILE`.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
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

/// The host and inputs one run judges, made once (a snapshot is parsed once, NVML starts once).
pub fn host_and_inputs(g: &Global) -> anyhow::Result<(Arc<dyn Host>, Arc<Inputs>)> {
    let host = g.host()?;
    let inputs = Arc::new(g.inputs(host.as_ref())?);
    Ok((host, inputs))
}

/// Shared by plan, audit and apply: load, check, observe, evaluate.
pub fn make_report(
    g: &Global,
    probe_timeout: Duration,
    host: &Arc<dyn Host>,
    inputs: &Arc<Inputs>,
) -> anyhow::Result<Result<Report, i32>> {
    let set = match g.rule_set() {
        Ok(s) => s,
        Err(d) => return Ok(Err(print_diagnostics(&d))),
    };
    check_only(&set, &g.only)?;
    let (host, inputs) = (host.clone(), inputs.clone());
    let opts = Options {
        sample: g.sample,
        probe_deadline: probe_timeout,
        only: g.only.clone(),
        ..Options::default()
    };
    let show =
        std::io::stderr().is_terminal() && host.is_live() && g.sample >= Duration::from_millis(500);
    let bar = show.then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_message(format!("sampling for {:.0?}…", g.sample));
        b.enable_steady_tick(Duration::from_millis(120));
        b
    });
    let started = std::time::Instant::now();
    let report = engine::evaluate(&set, host, inputs, &opts, |_| {
        if let Some(b) = &bar {
            let left = g.sample.saturating_sub(started.elapsed());
            b.set_message(format!("sampling… {:.0}s left", left.as_secs_f64()));
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(Ok(report))
}

/// The report with every failing rule's fix planned into changes (read-only), and the fixes
/// that could not be planned. Shared by plan, audit and apply.
pub fn planned_report(
    g: &Global,
    probe_timeout: Duration,
    host: &Arc<dyn Host>,
    inputs: &Arc<Inputs>,
) -> anyhow::Result<Result<(Report, Vec<Unplannable>), i32>> {
    let mut report = match make_report(g, probe_timeout, host, inputs)? {
        Ok(r) => r,
        Err(code) => return Ok(Err(code)),
    };
    let local = super::apply::local_files(g);
    let cx = crate::fixes::FixCtx {
        host: host.as_ref(),
        inputs,
        roots: &super::apply::roots(g, &local),
        local_files: local,
        overlay: Default::default(),
    };
    let problems = crate::plan::plan_changes(&mut report, &cx);
    Ok(Ok((report, problems)))
}

pub fn run(g: &Global, a: &PlanArgs) -> anyhow::Result<i32> {
    let (host, inputs) = host_and_inputs(g)?;
    let report = match planned_report(g, a.probe_timeout, &host, &inputs)? {
        Ok((r, _)) => r,
        Err(code) => return Ok(code),
    };
    let local = super::apply::local_files(g);
    if let Some(out) = &a.output {
        let pf = crate::plan::PlanFile {
            plan_version: crate::plan::PLAN_VERSION,
            gpufix_version: env!("CARGO_PKG_VERSION").to_string(),
            created_at: report.generated_at.clone(),
            root: g.root.as_ref().map(|r| r.display().to_string()),
            local_files: local.iter().map(|p| p.display().to_string()).collect(),
            report: report.clone(),
        };
        std::fs::write(out, serde_json::to_string_pretty(&pf)? + "\n")
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
    }
    match g.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => print!(
            "{}",
            text::render(
                &report,
                Style {
                    color: g.color(),
                    verbose: a.verbose
                }
            )
        ),
    }
    Ok(if report.has_findings() { 2 } else { 0 })
}
