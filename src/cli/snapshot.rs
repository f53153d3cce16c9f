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
    #[command(flatten)]
    pub progress: super::ProgressOpts,
    #[command(flatten)]
    pub host: super::HostOpts,
    #[command(flatten)]
    pub rules: super::RuleOpts,
    #[command(flatten)]
    pub only: super::OnlyOpts,
}

pub fn run(g: &Global, a: &SnapshotArgs) -> anyhow::Result<ExitStatus> {
    let mut recorder = None;
    // a snapshot records what the host answers now, never a remembered CUDA check
    let spec = crate::session::Spec {
        cuda_check_max_age: None,
        ..g.spec()
    };
    let opened = Session::open_with(spec, |inner| {
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
    let eval = g.eval(Options::default().probe_deadline);
    let mut progress = g
        .progress
        .probing(s.host.is_live(), eval.sample, eval.probe_deadline);
    let report = s.evaluate(&eval, |key| progress.probe_done(key));
    drop(progress);
    let mut snap = rec.snapshot();
    // snapshots are shared: keep only the variables the playbooks are about, no secrets
    let ((kept, dropped, redacted), files) = snap.redact();
    let text = serde_json::to_string_pretty(&snap)?;
    // private (0600): a snapshot holds what the host's files say; never through a link
    crate::safe_write::write_output(&a.output, (text + "\n").as_bytes(), 0o600).map_err(|e| {
        anyhow::anyhow!("{e}\nhelp: choose a writable path for -o that is not a link")
    })?;
    eprintln!(
        "environment: kept {kept} variable(s) named {}*, left out {dropped} other(s), redacted {redacted} secret-looking value(s); secrets filtered from {files} recorded file(s) and output(s)",
        crate::privacy::ENV_ALLOW.join("*, ")
    );
    eprintln!(
        "wrote {} ({} rules evaluated: {})",
        a.output.display(),
        report.results.len(),
        crate::render::text::summary_line(&report)
    );
    Ok(ExitStatus::Clean)
}
