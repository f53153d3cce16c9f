//! `gpufix plan`: judge the host (and a job), show findings and the fixes they propose.

use super::progress::Progress;
use super::{Format, Global};
use crate::host::GpuSample;
use crate::host::remembered::HostView;
use crate::plan::Unplannable;
use crate::playbook::{Layer, RuleSet};
use crate::render::text::{self, Style};
use crate::report::Report;
use crate::session::{Eval, ExitStatus, OpenError, Session};
use crate::vocab::did_you_mean;
use clap::Args;
use std::collections::BTreeMap;
use std::sync::Arc;
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
    /// Keep the plan's own sampling window as a recording (`gpufix schema record`, drawn by
    /// `gpufix report`): the GPUs and, with --pid, the job's processes and the node over the
    /// window, and the plan's findings; `gpufix record` also samples the main thread and the
    /// job's progress.
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,
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
pub fn evaluate(progress: &Progress, s: &Session, eval: &Eval) -> anyhow::Result<Report> {
    check_only(&s.rules, &eval.only)?;
    let mut progress = progress.probing(s.host.is_live(), eval.sample, eval.probe_deadline);
    let report = s.evaluate(eval, |key| progress.probe_done(key));
    drop(progress);
    Ok(report)
}

/// The report with every failing rule's fix planned into changes (read-only), and the fixes
/// that could not be planned. Shared by plan, audit and apply.
pub fn planned_report(
    progress: &Progress,
    s: &Session,
    eval: &Eval,
) -> anyhow::Result<(Report, Vec<Unplannable>)> {
    let mut report = evaluate(progress, s, eval)?;
    let problems = s.plan_changes(&mut report);
    Ok((report, problems))
}

pub fn run(g: &Global, a: &PlanArgs) -> anyhow::Result<ExitStatus> {
    let started = std::time::Instant::now();
    // a job's plan keeps the GPU samples its probes take: the glance beside the verdict
    let job = g.inputs.pid.is_some() || g.inputs.job.is_some();
    let mut view: Option<Arc<HostView>> = None;
    let spec = g.spec();
    let reading = g.progress.reading(&super::progress::input_files(&spec));
    let opened = Session::open_with(spec, |h| {
        if !job && a.record.is_none() {
            return h;
        }
        let v = Arc::new(HostView::new(h, BTreeMap::new()).tapping());
        view = Some(v.clone());
        v
    });
    drop(reading);
    let s = match opened {
        Ok(s) => s,
        Err(OpenError::Invalid(d)) => return Ok(super::print_diagnostics(&d)),
        Err(OpenError::Other(e)) => return Err(e),
    };
    let opened = started.elapsed();
    let eval = Eval {
        timings: a.timings,
        ..g.eval(a.probe_timeout)
    };
    // With --record and a job, the recorder samples the job's processes and the node over the
    // plan's window, as `gpufix record` does.
    let keep_job = a.record.is_some() && s.inputs.pid.is_some();
    let record_opts = crate::record::Options {
        pid: s.inputs.pid,
        duration: eval.sample,
        interval: Duration::from_millis(200),
        log: None,
        pyspy_every: 0,
        checkpoint: Duration::from_secs(24 * 3600),
    };
    let (recorded, report) = if keep_job {
        let stop = std::sync::atomic::AtomicBool::new(false);
        super::record::beside_plan(&s, record_opts, &stop, &mut |_| {}, || {
            evaluate(&g.progress, &s, &eval)
        })?
    } else {
        (None, evaluate(&g.progress, &s, &eval))
    };
    // planned_report's two steps, timed apart: `plan the fixes` draws every change's diff
    let mut report = report?;
    let evaluated = started.elapsed();
    let _ = s.plan_changes(&mut report);
    if let Some(t) = &mut report.timings {
        t.add_run_phases(opened, evaluated, started.elapsed());
    }
    // what the plan learned from the job, for `apply PLAN` after the job has stopped
    let job_facts = s
        .inputs
        .pid
        .filter(|_| a.output.is_some())
        .and_then(|pid| crate::plan::job_facts(s.host.as_ref(), pid, &report));
    let taps = view.as_ref().map(|v| v.taps()).unwrap_or_default();
    if let Some(path) = &a.record {
        let job = s.inputs.pid.map(|pid| crate::vocab::record::RecordJob {
            pid,
            command: job_command(s.host.as_ref(), pid),
            user: None,
            config: None,
        });
        let f = match recorded
            .filter(|f| f.gpus.iter().any(|g| !g.t.is_empty()) || !f.processes.is_empty())
        {
            Some(mut f) => {
                f.findings = crate::record::findings(&report, [0.0, f.duration_s]);
                if let (Some(j), Some(pid)) = (&mut f.job, s.inputs.pid) {
                    j.config = crate::plan::job_facts(s.host.as_ref(), pid, &report)
                        .and_then(|j| j.files.first().map(|f| f.path.clone()))
                        .map(|c| crate::privacy::redact_text(&c).into_owned());
                }
                f.notes.push(
                    "the window of `gpufix plan --record`: the job's processes, the node and the GPUs sampled beside the plan's probes; `gpufix record` also samples the main thread and the job's progress".into(),
                );
                f
            }
            None => {
                crate::record::plan_window_file(s.host.as_ref(), &taps, eval.sample, &report, job)
            }
        };
        super::record::write(path, &f)?;
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
            job: job_facts,
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
    if g.format == Format::Text && !a.quiet && job {
        let unicode = utf8_locale();
        if let Some(line) = glance(&taps, unicode) {
            println!("{line}");
        }
    }
    if let (Some(path), Format::Text, false) = (&a.record, g.format, a.quiet) {
        println!("recording: {}", path.display());
    }
    if let (Some(t), Format::Text) = (&report.timings, g.format) {
        print!("\n{}", crate::vocab::timing::render(t));
    }
    Ok(ExitStatus::of_report(&report))
}

/// The job's command line, secrets redacted.
fn job_command(host: &dyn crate::host::Host, pid: u32) -> String {
    let raw = host
        .read_file(&format!("/proc/{pid}/cmdline"))
        .unwrap_or_default();
    let argv: Vec<String> = raw
        .split(|c| *c == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    crate::privacy::redact_text(&argv.join(" ")).into_owned()
}

/// Whether the terminal's locale is UTF-8 (`LC_ALL`, else `LC_CTYPE`, else `LANG`, as
/// setlocale(3) picks them): the sparkline's block characters, else its ASCII ramp.
pub fn utf8_locale() -> bool {
    let var = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    var.contains("utf-8") || var.contains("utf8")
}

/// Most characters of the sparkline.
const SPARK_WIDTH: usize = 40;

/// A one-line sparkline of `values` (percent, 0–100): at most `SPARK_WIDTH` characters,
/// each the mean of its share of the samples, drawn with `▁▂▃▄▅▆▇█` or, without a UTF-8
/// terminal, `_.-:=+*#`.
pub fn sparkline(values: &[f64], unicode: bool) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    const ASCII: [char; 8] = ['_', '.', '-', ':', '=', '+', '*', '#'];
    let ramp = if unicode { BLOCKS } else { ASCII };
    if values.is_empty() {
        return String::new();
    }
    let width = values.len().min(SPARK_WIDTH);
    (0..width)
        .map(|i| {
            let (a, b) = (i * values.len() / width, (i + 1) * values.len() / width);
            let chunk = &values[a..b.max(a + 1)];
            let m = chunk.iter().sum::<f64>() / chunk.len() as f64;
            let level = ((m.clamp(0.0, 100.0) / 100.0) * 7.0).round() as usize;
            ramp[level.min(7)]
        })
        .collect()
}

/// The glance `plan --pid` prints beside its verdict: the busiest GPU's utilization per sample
/// of the plan's window, as a sparkline with its mean, lowest and highest.
pub fn glance(taps: &[(f64, Vec<GpuSample>)], unicode: bool) -> Option<String> {
    let values: Vec<f64> = taps
        .iter()
        .filter_map(|(_, gpus)| {
            gpus.iter()
                .filter_map(|g| g.utilization_gpu.ok().map(|u| f64::from(*u)))
                .fold(None, |m: Option<f64>, u| Some(m.map_or(u, |m| m.max(u))))
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    Some(format!(
        "GPU utilization over the window: {} mean {mean:.0}%, min {lo:.0}%, max {hi:.0}% ({} samples)",
        sparkline(&values, unicode),
        values.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_has_one_character_per_sample_up_to_its_width() {
        let v: Vec<f64> = vec![0.0, 20.0, 100.0, 50.0];
        assert_eq!(sparkline(&v, true), "▁▂█▅");
        assert_eq!(sparkline(&v, false), "_.#=");
        let long: Vec<f64> = (0..400)
            .map(|i| if i < 200 { 0.0 } else { 100.0 })
            .collect();
        let s = sparkline(&long, true);
        assert_eq!(s.chars().count(), SPARK_WIDTH);
        assert_eq!(s, format!("{}{}", "▁".repeat(20), "█".repeat(20)));
        assert_eq!(sparkline(&[], true), "");
    }
}
