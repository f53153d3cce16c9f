//! Reading the files named on the command line (`--config`, `--trace`, `--nccl-log`,
//! `--kernel-log`, `--evidence`). These are files on this machine as given, never mapped under
//! `--root` or into a snapshot: they describe the job, not the host.

use crate::evidence::EvidenceKind;
use crate::evidence::segment::segment_shared;
use crate::vocab::io::read_shared;
use std::path::PathBuf;
use std::sync::Arc;

/// The parts of the evidence files that `kind` recognises, each with the text its reader reads
/// (the part's lines, or the whole paste for a kind read line by line): a paste holding several
/// kinds gives each its own part ([`segment`](crate::evidence::segment)). Files are read once per run ([`read_shared`]).
pub fn evidence_of(evidence: &[PathBuf], kind: &dyn EvidenceKind) -> Vec<(PathBuf, Arc<String>)> {
    let mut out = Vec::new();
    for p in evidence {
        let Ok(text) = read_shared(p) else { continue };
        let reading = segment_shared(&text);
        for part in reading.of(kind) {
            let t = match &part.text {
                std::borrow::Cow::Borrowed(_) => text.clone(),
                std::borrow::Cow::Owned(s) => Arc::new(s.clone()),
            };
            out.push((p.clone(), t));
        }
    }
    out
}
