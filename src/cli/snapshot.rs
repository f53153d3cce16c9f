//! `gpufix snapshot -o FILE`: run every probe of the rule set against this host through a
//! recording host and write everything they read into one JSON file.

use super::{Global, print_diagnostics};
use crate::engine::Options;
use crate::host::Host;
use crate::host::recorded::RecordingHost;
use crate::session::{ExitStatus, OpenError, Session};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// Where to write the snapshot.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

pub fn run(g: &Global, a: &SnapshotArgs) -> anyhow::Result<ExitStatus> {
    let mut recorder = None;
    let opened = Session::open_with(g.spec(), |inner| {
        let rec = Arc::new(RecordingHost::new(inner));
        recorder = Some(rec.clone());
        rec as Arc<dyn Host>
    });
    let s = match opened {
        Ok(s) => s,
        Err(OpenError::Invalid(d)) => return Ok(print_diagnostics(&d)),
        Err(OpenError::Other(e)) => return Err(e),
    };
    let rec = recorder.expect("open_with wraps the host");
    let report = s.evaluate(&g.eval(Options::default().probe_deadline), |_| {});
    let snap = rec.snapshot();
    let text = serde_json::to_string_pretty(&snap)?;
    std::fs::write(&a.output, text + "\n").map_err(|e| {
        anyhow::anyhow!(
            "cannot write {}: {e}\nhelp: choose a writable path for -o",
            a.output.display()
        )
    })?;
    eprintln!(
        "wrote {} ({} rules evaluated: {})",
        a.output.display(),
        report.results.len(),
        crate::render::text::summary_line(&report)
    );
    Ok(ExitStatus::Clean)
}
