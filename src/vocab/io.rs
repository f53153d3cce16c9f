//! Small reading helpers every layer uses: a text file read whole (gunzipped, bounded), and the
//! same read shared by everyone who asks for one file in a run.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Largest `--env-file` read (parsed whole; a real one is a few KB).
pub const MAX_ENV_FILE_BYTES: u64 = 16 << 20;
/// Largest `--config` read (a training config, script or launcher; parsed whole).
pub const MAX_CONFIG_BYTES: u64 = 64 << 20;
/// How much of a log (`--nccl-log`, `--kernel-log`, a gunzipped paste) is read: an NCCL log
/// from its start (initialisation is at the top), a kernel log from its end (the newest
/// messages are the ones about this boot's GPUs).
pub const MAX_LOG_BYTES: u64 = 256 << 20;

/// A file of at most `cap` bytes, read through a bounded reader (a file that grows after its
/// size was checked still cannot make this read more): "input too large" beyond.
pub fn read_capped(p: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(p)?;
    let mut buf = Vec::new();
    f.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("input too large (over {cap} bytes)"),
        ));
    }
    Ok(buf)
}

/// Deepest `[`/`{` nesting accepted in a playbook, values file or config (YAML, JSON, TOML)
/// before it is parsed: parsers recurse per level (and some are quadratic in it: 480 KB of
/// nested `--evidence` JSON took 38 s).
pub const MAX_NESTING: usize = 64;

/// The deepest flow nesting (`[`, `{`) of YAML text outside quotes and comments: a bound
/// checked before parsing, so that a `[[[[…` bomb is refused in linear time.
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let (mut single, mut double, mut comment, mut escape) = (false, false, false, false);
    let mut prev = '\n';
    for c in text.chars() {
        if c == '\n' {
            comment = false;
        } else if comment {
        } else if double {
            if escape {
                escape = false;
            } else if c == '\\' {
                escape = true;
            } else if c == '"' {
                double = false;
            }
        } else if single {
            if c == '\'' {
                single = false;
            }
        } else {
            match c {
                '#' if prev.is_whitespace() => comment = true,
                '"' => double = true,
                '\'' if !prev.is_alphanumeric() => single = true,
                '[' | '{' => {
                    depth += 1;
                    max = max.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        prev = c;
    }
    max
}

/// A file's bytes as text: UTF-8 (its byte-order mark dropped; invalid bytes replaced), or
/// UTF-16 as Windows writes it — PowerShell 5's `>` and `Out-File` write UTF-16LE with a
/// byte-order mark (`nvidia-smi > smi.txt` there gives `FF FE` then two bytes a character),
/// and a copy that lost the mark still has a NUL after every ASCII character. Valid UTF-8 (the
/// usual case) becomes the String without a copy.
pub fn decode(mut buf: Vec<u8>) -> String {
    fn utf16(b: &[u8], le: bool) -> String {
        let units = b.chunks_exact(2).map(|c| {
            if le {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        });
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }
    match buf.as_slice() {
        [0xFF, 0xFE, rest @ ..] => return utf16(rest, true),
        [0xFE, 0xFF, rest @ ..] => return utf16(rest, false),
        [0xEF, 0xBB, 0xBF, ..] => {
            buf.drain(..3);
        }
        b if looks_utf16le(b) => return utf16(b, true),
        _ => {}
    }
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// UTF-16LE without its mark: in the first 4 KiB, nearly every second byte NUL and no other
/// (UTF-8 text has no NUL bytes; ASCII in UTF-16LE has one after each character).
fn looks_utf16le(b: &[u8]) -> bool {
    let head = &b[..b.len().min(4096) & !1];
    if head.len() < 16 {
        return false;
    }
    let pairs = head.len() / 2;
    let odd_nul = head.chunks_exact(2).filter(|c| c[1] == 0).count();
    let even_nul = head.chunks_exact(2).filter(|c| c[0] == 0).count();
    odd_nul * 10 >= pairs * 9 && even_nul * 100 <= pairs
}

/// What part of a log was read when it was larger than [`MAX_LOG_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Bytes read (whole lines).
    pub read: u64,
    /// The file's size (gunzipped for `.gz`), where it was read to its end.
    pub total: Option<u64>,
    /// The newest part (the end) was read; else the start.
    pub newest: bool,
}

impl Cut {
    /// `only the newest 256.0 MiB of 3.0 GiB were read`
    pub fn describe(&self) -> String {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        format!(
            "input too large: only the {} {:.1} MiB of {} were read (the limit is {} MiB)",
            if self.newest { "newest" } else { "first" },
            mib(self.read),
            self.total
                .map_or("more".to_string(), |t| format!("{:.1} MiB", mib(t))),
            MAX_LOG_BYTES >> 20
        )
    }
}

/// The newest [`MAX_LOG_BYTES`] of a log, from the first whole line on (gunzipped for `.gz`,
/// streamed through a ring buffer of that size), and what was left out.
pub fn read_log_tail(p: &Path) -> std::io::Result<(String, Option<Cut>)> {
    read_tail(p, MAX_LOG_BYTES)
}

fn read_tail(p: &Path, cap: u64) -> std::io::Result<(String, Option<Cut>)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(p)?;
    let (buf, total) = if p.extension().is_some_and(|e| e == "gz") {
        // a ring of `cap` bytes: memory stays bounded however large the stream
        let mut ring = vec![0u8; cap as usize];
        let (mut at, mut total) = (0usize, 0u64);
        let mut z = flate2::read::MultiGzDecoder::new(f);
        loop {
            let n = z.read(&mut ring[at..])?;
            if n == 0 {
                break;
            }
            total += n as u64;
            at = (at + n) % ring.len().max(1);
        }
        if total <= cap {
            ring.truncate(total as usize);
        } else {
            ring.rotate_left(at);
        }
        (ring, total)
    } else {
        let total = f.metadata()?.len();
        if total > cap {
            f.seek(SeekFrom::Start(total - cap))?;
        }
        let mut buf = Vec::with_capacity(total.min(cap) as usize + 1);
        f.take(cap).read_to_end(&mut buf)?;
        (buf, total)
    };
    let mut text = decode(buf);
    let cut = if total > cap {
        // the first line is a part of one: start at the next (std's search, not a byte loop)
        let start = text.find('\n').map_or(text.len(), |i| i + 1);
        text.drain(..start);
        Some(Cut {
            read: text.len() as u64,
            total: Some(total),
            newest: true,
        })
    } else {
        None
    };
    Ok((super::paste::unwrap(text), cut))
}

/// A file read once: its identity when read, the text, and whether it was cut.
struct Shared {
    path: PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
    text: Arc<String>,
    cut: Option<Cut>,
}

/// [`read_text`], once per file per process: the evidence host and every probe that looks at
/// `--evidence`, `--nccl-log` or `--kernel-log` share the same bytes instead of each reading
/// (and holding) their own copy; probes run concurrently, so separate reads of a 200 MB paste
/// used to be alive at the same time. A file whose size or mtime changed is read again.
pub fn read_shared(p: &Path) -> std::io::Result<Arc<String>> {
    read_shared_cut(p).map(|(t, _)| t)
}

/// [`read_shared`], and what was left out of a file over [`MAX_LOG_BYTES`] (its start is read).
pub fn read_shared_cut(p: &Path) -> std::io::Result<(Arc<String>, Option<Cut>)> {
    static READ: Mutex<Vec<Shared>> = Mutex::new(Vec::new());
    let meta = std::fs::metadata(p)?;
    let (len, modified) = (meta.len(), meta.modified().ok());
    // held while reading, so two probes asking at once read the file once
    let mut cache = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cache
        .iter()
        .find(|s| s.path == p && s.len == len && s.modified == modified)
    {
        return Ok((s.text.clone(), s.cut.clone()));
    }
    let (text, cut) = read_text_cut(p)?;
    let text = Arc::new(text);
    cache.retain(|s| s.path != p);
    cache.push(Shared {
        path: p.to_path_buf(),
        len,
        modified,
        text: text.clone(),
        cut: cut.clone(),
    });
    Ok((text, cut))
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
    Ok(super::paste::unwrap(decode(buf)))
}

/// Read a text file, gunzipping `.gz`; at most [`MAX_LOG_BYTES`] (larger logs are cut, never
/// loaded whole: [`read_shared_cut`] says whether, for a reader that must say so).
pub fn read_text(p: &Path) -> std::io::Result<String> {
    read_text_cut(p).map(|(t, _)| t)
}

fn read_text_cut(p: &Path) -> std::io::Result<(String, Option<Cut>)> {
    use std::io::Read;
    let f = std::fs::File::open(p)?;
    let limit: u64 = MAX_LOG_BYTES;
    let mut buf = Vec::new();
    let mut total = None;
    if p.extension().is_some_and(|e| e == "gz") {
        // one byte more than the limit tells a cut stream from one that fits
        flate2::read::MultiGzDecoder::new(f)
            .take(limit + 1)
            .read_to_end(&mut buf)?;
    } else {
        // one allocation of the right size: growing by doubling would hold two buffers at once
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        total = Some(len);
        buf.reserve_exact(len.min(limit) as usize + 2);
        f.take(limit + 1).read_to_end(&mut buf)?;
    }
    let over = buf.len() as u64 > limit;
    buf.truncate(limit as usize);
    let mut text = decode(buf);
    let cut = if over {
        // end at the last whole line read
        let end = text.rfind('\n').map_or(0, |i| i + 1);
        text.truncate(end);
        Some(Cut {
            read: text.len() as u64,
            total,
            newest: false,
        })
    } else {
        None
    };
    // how the paste was carried (colours, quotes, a launcher's line prefix) is not the
    // producer's text: every reader gets the text without it
    Ok((super::paste::unwrap(text), cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_as_windows_writes_it_reads_as_the_text() {
        // the table of nvidia-smi as PowerShell 5's `>` writes it: FF FE, then UTF-16LE
        let smi = "| NVIDIA-SMI 566.36    Driver Version: 566.36    CUDA Version: 12.7 |\r\n|  0  NVIDIA GeForce RTX 4090   WDDM  | 45% |\r\n";
        let le: Vec<u8> = smi.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = smi.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decode([&[0xFF, 0xFE][..], &le].concat()), smi);
        assert_eq!(decode([&[0xFE, 0xFF][..], &be].concat()), smi);
        // a copy that lost the mark
        assert_eq!(decode(le.clone()), smi);
        // UTF-8 with a mark (Notepad's "UTF-8 with BOM"), and without
        assert_eq!(
            decode([&[0xEF, 0xBB, 0xBF][..], smi.as_bytes()].concat()),
            smi
        );
        assert_eq!(decode(smi.as_bytes().to_vec()), smi);
        // invalid UTF-8 is replaced, not read as UTF-16; a short text with a NUL stays UTF-8
        assert_eq!(decode(b"ok \xff\n".to_vec()), "ok \u{fffd}\n");
        assert_eq!(decode(b"a\0b\0".to_vec()), "a\0b\0");
        // an odd trailing byte (a cut read) and a lone surrogate are replaced, not a panic
        let mut cut = [&[0xFF, 0xFE][..], &le].concat();
        cut.push(b'x');
        assert_eq!(decode(cut), smi);
        assert_eq!(decode(vec![0xFF, 0xFE, 0x00, 0xD8, b'a', 0]), "\u{fffd}a");
        // read from a file, as --evidence reads it
        let dir = std::env::temp_dir().join(format!("gpufix-utf16-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("smi.txt");
        std::fs::write(&p, [&[0xFF, 0xFE][..], &le].concat()).unwrap();
        let read = read_text(&p).unwrap();
        assert!(read.starts_with("| NVIDIA-SMI 566.36"), "{read:?}");
        assert!(read_head(&p, 64).unwrap().starts_with("| NVIDIA-SMI"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_tail_starts_at_a_whole_line_plain_and_gzipped() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let text = "first line\nsecond line\nthird\n";
        let plain = dir.path().join("k.log");
        std::fs::write(&plain, text).unwrap();
        let gz = dir.path().join("k.log.gz");
        let mut z = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        z.write_all(text.as_bytes()).unwrap();
        z.finish().unwrap();
        for p in [&plain, &gz] {
            let (t, cut) = read_tail(p, 15).unwrap();
            assert_eq!(t, "third\n", "{}", p.display());
            assert_eq!(
                cut,
                Some(Cut {
                    read: 6,
                    total: Some(29),
                    newest: true
                })
            );
            let (t, cut) = read_tail(p, 1000).unwrap();
            assert_eq!((t.as_str(), cut), (text, None));
        }
    }
}
