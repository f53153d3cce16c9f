//! Reading the files named on the command line (`--config`, `--trace`, `--nccl-log`,
//! `--kernel-log`, `--evidence`). These are files on this machine as given, never mapped under
//! `--root` or into a snapshot: they describe the job, not the host.

use crate::evidence::detect::{self, EvidenceKind};
use std::path::{Path, PathBuf};

/// Evidence files of one kind, with their text.
pub fn evidence_of(evidence: &[PathBuf], kind: EvidenceKind) -> Vec<(PathBuf, String)> {
    evidence
        .iter()
        .filter_map(|p| {
            let text = read_text(p).ok()?;
            (detect::detect(&text) == Some(kind)).then(|| (p.clone(), text))
        })
        .collect()
}

/// Read a text file, gunzipping `.gz`; at most 256 MiB (larger logs are cut, never loaded whole).
pub fn read_text(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(p)?;
    let limit = 256 << 20;
    let mut buf = Vec::new();
    if p.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(f)
            .take(limit)
            .read_to_end(&mut buf)?;
    } else {
        f.take(limit).read_to_end(&mut buf)?;
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
