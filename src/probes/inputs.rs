//! Reading the files named on the command line (`--config`, `--trace`, `--nccl-log`,
//! `--kernel-log`, `--evidence`). These are files on this machine as given, never mapped under
//! `--root` or into a snapshot: they describe the job, not the host.

use crate::evidence::{EvidenceKind, detect};
use crate::vocab::io::read_shared;
use std::path::PathBuf;
use std::sync::Arc;

/// Evidence files of one kind, with their text (read once per run, see [`read_shared`]).
pub fn evidence_of(evidence: &[PathBuf], kind: &dyn EvidenceKind) -> Vec<(PathBuf, Arc<String>)> {
    evidence
        .iter()
        .filter_map(|p| {
            let text = read_shared(p).ok()?;
            detect(&text)
                .is_some_and(|k| k.name() == kind.name())
                .then(|| (p.clone(), text))
        })
        .collect()
}
