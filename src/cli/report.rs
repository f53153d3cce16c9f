//! `gpufix report run.json [--compare after.json] -o report.html`: draw a recording (or two,
//! before and after a fix) as one self-contained HTML page ([`crate::render::html`]).
//!
//! Nothing is written unless every input reads and checks: a bad file exits 1 naming the file
//! and what is wrong with it. The page is 0600 like every file gpufix writes that carries host
//! data (src/privacy.rs): it holds the host's name, the job's command line and the diffs of its
//! config; `chmod 644` it to share it.

use crate::render::html;
use crate::session::ExitStatus;
use crate::vocab::record::RecordFile;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The recording to draw (`gpufix record -o FILE`).
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
    /// A second recording (after a fix) to draw beside the first and compare with it.
    #[arg(long, value_name = "AFTER")]
    pub compare: Option<PathBuf>,
    /// Where to write the HTML page (replaced atomically; 0600).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// Read and check one recording; the error names the file and says what to do.
pub fn read(p: &Path) -> anyhow::Result<RecordFile> {
    let fail = |what: String| {
        anyhow::anyhow!(
            "cannot draw {}: {what}\nhelp: give a file written by `gpufix record -o FILE`",
            p.display()
        )
    };
    let meta = std::fs::metadata(p).map_err(|e| fail(e.to_string()))?;
    if !meta.is_file() {
        return Err(fail("it is not a regular file".into()));
    }
    let bytes = crate::vocab::io::read_capped(p, html::MAX_RECORD_BYTES).map_err(|e| {
        fail(match e.kind() {
            std::io::ErrorKind::InvalidData => format!(
                "input too large (the limit is {} MiB)",
                html::MAX_RECORD_BYTES >> 20
            ),
            _ => e.to_string(),
        })
    })?;
    let text = String::from_utf8(bytes).map_err(|_| fail("it is not UTF-8 text".into()))?;
    html::parse_record(&text).map_err(|e| fail(e.to_string()))
}

pub fn run(a: &ReportArgs) -> anyhow::Result<ExitStatus> {
    let first = read(&a.run)?;
    let second = a.compare.as_deref().map(read).transpose()?;
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string())
    };
    let mut runs = vec![(name(&a.run), &first)];
    if let (Some(p), Some(r)) = (&a.compare, &second) {
        runs.push((name(p), r));
    }
    let named: Vec<(&str, &RecordFile)> = runs.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    let page = html::render(&named);
    crate::safe_write::write_output(&a.output, page.as_bytes(), 0o600).map_err(|e| {
        anyhow::anyhow!("{e}\nhelp: choose a writable path for -o that is not a link")
    })?;
    let lanes: usize = named
        .iter()
        .map(|(_, r)| html::lanes(r).0.lanes.len())
        .sum();
    eprintln!(
        "wrote {} ({} KB, {} run(s), {lanes} lane(s))",
        a.output.display(),
        page.len().div_ceil(1024),
        named.len()
    );
    Ok(ExitStatus::Clean)
}
