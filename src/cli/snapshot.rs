//! `gpufix snapshot -o FILE`: run every probe of the rule set against this host through a
//! recording host and write everything they read into one JSON file.

use super::{Global, print_diagnostics};
use crate::engine::{self, Options};
use crate::host::Host;
use crate::host::recorded::RecordingHost;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// Where to write the snapshot.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

pub fn run(g: &Global, a: &SnapshotArgs) -> anyhow::Result<i32> {
    let set = match g.rule_set() {
        Ok(s) => s,
        Err(d) => return Ok(print_diagnostics(&d)),
    };
    let inner = g.host()?;
    let inputs = Arc::new(g.inputs(inner.as_ref())?);
    let rec = Arc::new(RecordingHost::new(inner));
    let opts = Options {
        sample: g.sample,
        only: g.only.clone(),
        ..Options::default()
    };
    let report = engine::evaluate(&set, rec.clone() as Arc<dyn Host>, inputs, &opts, |_| {});
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
    Ok(0)
}
