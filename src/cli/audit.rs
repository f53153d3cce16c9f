//! `gpufix audit`: a plan that never writes (not even the journal), for schedulers, config
//! management and monitoring, in their formats. Exit codes as `plan`, except nagios (0 OK,
//! 1 WARNING, 2 CRITICAL, 3 UNKNOWN).

use super::{Format, Global};
use crate::render::{junit, nagios, prometheus, slurm, text};
use crate::session::ExitStatus;
use clap::Args;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Write the output to FILE (atomically: temp file, fsync, rename) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Probe deadline.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = super::parse_duration)]
    pub probe_timeout: Duration,
}

pub fn run(g: &Global, a: &AuditArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    // read-only: planning computes diffs without writing anything
    let made = super::open_session(g).and_then(|opened| match opened {
        Ok(s) => super::plan::planned_report(&s, &g.eval(a.probe_timeout)).map(|(r, _)| Ok(r)),
        Err(status) => Ok(Err(status)),
    });
    let report = match made {
        Ok(Ok(r)) => r,
        Ok(Err(status)) => {
            if g.format == Format::Nagios {
                let (line, c) =
                    nagios::render_error("playbooks or values are invalid: run `gpufix validate`");
                emit(a, &line)?;
                return Ok(ExitStatus::nagios(c));
            }
            return Ok(status);
        }
        Err(e) => {
            if g.format == Format::Nagios {
                let (line, c) = nagios::render_error(&format!("{e:#}"));
                emit(a, &line)?;
                return Ok(ExitStatus::nagios(c));
            }
            return Err(e);
        }
    };
    let code = ExitStatus::of_report(&report);
    // text formats show what files and commands said: control characters escaped
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
                    ..Default::default()
                },
            ),
            code,
        ),
        Format::Nagios => {
            let (l, c) = nagios::render(&shown);
            (l, ExitStatus::nagios(c))
        }
        Format::Slurm => (slurm::render(&shown), code),
        Format::Text | Format::Markdown => (
            text::render(
                &shown,
                text::Style {
                    color: g.color() && a.output.is_none(),
                    verbose: false,
                },
            ),
            code,
        ),
    };
    emit(a, &out)?;
    Ok(code)
}

fn emit(a: &AuditArgs, s: &str) -> anyhow::Result<()> {
    let s = if s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    };
    match &a.output {
        // atomically, never through a link planted at the name; readable by the collector
        Some(p) => crate::safe_write::write_output(p, s.as_bytes(), 0o644)
            .map_err(|e| anyhow::anyhow!("{e}\nhelp: choose a path for -o that is not a link")),
        None => {
            print!("{s}");
            Ok(())
        }
    }
}
