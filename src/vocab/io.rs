//! Small reading helpers every layer uses: a text file read whole (gunzipped, bounded), and the
//! same read shared by everyone who asks for one file in a run.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file read once: its identity when read, and the text.
struct Shared {
    path: PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
    text: Arc<String>,
}

/// [`read_text`], once per file per process: the evidence host and every probe that looks at
/// `--evidence`, `--nccl-log` or `--kernel-log` share the same bytes instead of each reading
/// (and holding) their own copy; probes run concurrently, so separate reads of a 200 MB paste
/// used to be alive at the same time. A file whose size or mtime changed is read again.
pub fn read_shared(p: &Path) -> std::io::Result<Arc<String>> {
    static READ: Mutex<Vec<Shared>> = Mutex::new(Vec::new());
    let meta = std::fs::metadata(p)?;
    let (len, modified) = (meta.len(), meta.modified().ok());
    // held while reading, so two probes asking at once read the file once
    let mut cache = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cache
        .iter()
        .find(|s| s.path == p && s.len == len && s.modified == modified)
    {
        return Ok(s.text.clone());
    }
    let text = Arc::new(read_text(p)?);
    cache.retain(|s| s.path != p);
    cache.push(Shared {
        path: p.to_path_buf(),
        len,
        modified,
        text: text.clone(),
    });
    Ok(text)
}

/// The first `limit` bytes of a file as text (gunzipped for `.gz`): enough to tell what a paste
/// is without loading it.
pub fn read_head(p: &Path, limit: usize) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(p)?;
    let mut buf = Vec::with_capacity(limit);
    if p.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(f)
            .take(limit as u64)
            .read_to_end(&mut buf)?;
    } else {
        f.take(limit as u64).read_to_end(&mut buf)?;
    }
    Ok(String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Read a text file, gunzipping `.gz`; at most 256 MiB (larger logs are cut, never loaded whole).
pub fn read_text(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(p)?;
    let limit: u64 = 256 << 20;
    let mut buf = Vec::new();
    if p.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(f)
            .take(limit)
            .read_to_end(&mut buf)?;
    } else {
        // one allocation of the right size: growing by doubling would hold two buffers at once
        let len = f.metadata().map(|m| m.len()).unwrap_or(0).min(limit);
        buf.reserve_exact(len as usize + 1);
        f.take(limit).read_to_end(&mut buf)?;
    }
    // valid UTF-8 (the usual case) becomes the String without a copy
    Ok(String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}
