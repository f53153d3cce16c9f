//! `gpufix audit`: a plan that never writes (not even the journal), for schedulers, config
//! management and monitoring, in their formats. Exit codes as `plan`, except nagios (0 OK,
//! 1 WARNING, 2 CRITICAL, 3 UNKNOWN).

use super::{Format, Global};
use crate::render::{junit, nagios, prometheus, slurm, text};
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

pub fn run(g: &Global, a: &AuditArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let made = super::plan::host_and_inputs(g).and_then(|(host, inputs)| {
        // read-only: planning computes diffs without writing anything
        Ok(super::plan::planned_report(g, a.probe_timeout, &host, &inputs)?.map(|(r, _)| r))
    });
    let report = match made {
        Ok(Ok(r)) => r,
        Ok(Err(code)) => {
            if g.format == Format::Nagios {
                let (line, c) =
                    nagios::render_error("playbooks or values are invalid: run `gpufix validate`");
                emit(a, &line)?;
                return Ok(c);
            }
            return Ok(code);
        }
        Err(e) => {
            if g.format == Format::Nagios {
                let (line, c) = nagios::render_error(&format!("{e:#}"));
                emit(a, &line)?;
                return Ok(c);
            }
            return Err(e);
        }
    };
    let code = if report.has_findings() { 2 } else { 0 };
    let (out, code) = match g.format {
        Format::Json => (serde_json::to_string_pretty(&report)? + "\n", code),
        Format::Junit => (junit::render(&report), code),
        Format::Prometheus => (
            prometheus::render(
                &report,
                &prometheus::Extras {
                    duration: Some(started.elapsed()),
                    ..Default::default()
                },
            ),
            code,
        ),
        Format::Nagios => {
            let (l, c) = nagios::render(&report);
            (l, c)
        }
        Format::Slurm => (slurm::render(&report), code),
        Format::Text | Format::Markdown => (
            text::render(
                &report,
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
        Some(p) => prometheus::write_textfile_atomic(p, &s)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display())),
        None => {
            print!("{s}");
            Ok(())
        }
    }
}
