//! `gpufix audit`: a plan that never writes (not even the journal), for schedulers, config
//! management and monitoring, in their formats. Exit codes as `plan`, except nagios (0 OK,
//! 1 WARNING, 2 CRITICAL, 3 UNKNOWN).

use super::{Format, Global};
use crate::render::{FailPolicy, junit, nagios, prometheus, slurm, text};
use crate::report::Severity;
use crate::session::ExitStatus;
use clap::Args;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = super::FormatParser::new("audit", super::AUDIT_FORMATS))]
    pub format: super::Format,
    /// Write the output to FILE (atomically: temp file, fsync, rename) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Probe deadline.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = super::parse_duration)]
    pub probe_timeout: Duration,
    /// Least severity of a failing rule that counts (exit 2; a drain reason with --format
    /// slurm). [default: info; critical with --format slurm]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,
    /// Unknown and blocked rules count as failing too. Without --fail-on or --profile they do;
    /// with either (and with --format slurm) only when this is given.
    #[arg(long)]
    pub fail_on_unknown: bool,
    /// Which rules count: `all`, or `health` (driver and cuda layers: "this node is unfit",
    /// not "this job is slow"). [default: all; health with --format slurm]
    #[arg(long, value_enum, value_name = "PROFILE")]
    pub profile: Option<Profile>,
    /// --format prometheus: also export `gpufix_gpu_rule_failing{rule,gpu,UUID}` per GPU.
    #[arg(long)]
    pub per_gpu: bool,
    /// --format prometheus: read apply runs from this state directory (read-only) and export
    /// them (`gpufix_apply_runs`, `gpufix_last_apply_status`).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
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

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeverityArg {
    Info,
    Warning,
    Critical,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    All,
    Health,
}

impl AuditArgs {
    /// The rules that fail the host, from the flags and the format's defaults.
    pub fn policy(&self, format: Format) -> FailPolicy {
        let slurm = format == Format::Slurm;
        let asked = self.fail_on.is_some() || self.profile.is_some();
        FailPolicy {
            fail_on: match self.fail_on {
                Some(SeverityArg::Info) => Severity::Info,
                Some(SeverityArg::Warning) => Severity::Warning,
                Some(SeverityArg::Critical) => Severity::Critical,
                None if slurm => Severity::Critical,
                None => Severity::Info,
            },
            undetermined: self.fail_on_unknown || (!slurm && !asked),
            health_only: self
                .profile
                .unwrap_or(if slurm { Profile::Health } else { Profile::All })
                == Profile::Health,
        }
    }
}

pub fn run(g: &Global, a: &AuditArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let policy = a.policy(g.format);
    // read-only: planning computes diffs without writing anything
    let made = super::open_session_or_diagnostics(g).and_then(|opened| match opened {
        Ok(s) => super::plan::planned_report(&g.progress, &s, &g.eval(a.probe_timeout))
            .map(|(r, _)| Ok(r)),
        Err(diags) => Ok(Err(diags)),
    });
    let report = match made {
        Ok(Ok(r)) => r,
        Ok(Err(diags)) => {
            // never a report of per-rule unknowns: the rule set itself is broken (exit 1)
            let status = super::print_diagnostics(&diags);
            if g.format == Format::Nagios {
                let (line, c) = nagios::render_error(&format!(
                    "invalid playbooks or values: {}; run `gpufix validate`",
                    super::first_diagnostic_line(&diags)
                ));
                emit(g, a, &line)?;
                return Ok(ExitStatus::nagios(c));
            }
            return Ok(status);
        }
        Err(e) => {
            if g.format == Format::Nagios {
                let (line, c) = nagios::render_error(&format!("{e:#}"));
                emit(g, a, &line)?;
                return Ok(ExitStatus::nagios(c));
            }
            return Err(e);
        }
    };
    let code = if report.results.iter().any(|r| policy.counts(r)) {
        ExitStatus::Findings
    } else {
        ExitStatus::Clean
    };
    let runs = a.state_dir.as_deref().map(crate::journal::runs);
    // every format goes through the privacy filter; text formats show what files and commands
    // said with control characters escaped
    let report = crate::privacy::redacted(&report);
    let shown = if g.format == Format::Json {
        report.clone()
    } else {
        crate::escape::escaped(&report)
    };
    let (out, code) = match g.format {
        Format::Json => (serde_json::to_string_pretty(&report)? + "\n", code),
        Format::Junit => (junit::render(&shown), code),
        Format::Prometheus => (
            prometheus::render(
                &shown,
                &prometheus::Extras {
                    duration: Some(started.elapsed()),
                    per_gpu: a.per_gpu,
                    runs: runs.as_deref(),
                },
            ),
            code,
        ),
        Format::Nagios => {
            let (l, c) = nagios::render(&shown);
            (l, ExitStatus::nagios(c))
        }
        Format::Slurm => (slurm::render(&shown, &policy), code),
        Format::Text | Format::Markdown => (
            text::render(
                &shown,
                text::Style {
                    color: g.color() && a.output.is_none(),
                    verbose: false,
                    quiet: false,
                },
            ),
            code,
        ),
    };
    emit(g, a, &out)?;
    Ok(code)
}

fn emit(g: &Global, a: &AuditArgs, s: &str) -> anyhow::Result<()> {
    // `--format slurm` with nothing to drain prints nothing at all, not an empty line.
    let s = if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    };
    // The Prometheus textfile (rule ids, verdicts, counts: no file text, no environment) is
    // read by node_exporter's collector, often another user; every other format can carry
    // what the host's files say and is private (0600).
    let mode = if g.format == Format::Prometheus {
        0o644
    } else {
        0o600
    };
    match &a.output {
        // atomically, never through a link planted at the name
        Some(p) => crate::safe_write::write_output(p, s.as_bytes(), mode)
            .map_err(|e| anyhow::anyhow!("{e}\nhelp: choose a path for -o that is not a link")),
        None => {
            print!("{s}");
            Ok(())
        }
    }
}
