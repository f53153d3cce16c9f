//! Evidence parsers: turn what people paste into bug reports, and what a training job leaves
//! behind, into values that rules read. Each parser is a pure function over text (or a reader,
//! for profiler traces, which can be hundreds of megabytes) and shares three promises:
//!
//! - it never panics, whatever the bytes: truncated, garbled, oversized;
//! - it parses what is there and leaves out what the text does not say, rather than guessing
//!   a default (a field a rule needs and the evidence lacks makes that rule `unknown`);
//! - its output is bounded: long lines and long lists are clipped (see [`MAX_ITEMS`]).
//!
//! [`detect::detect`] recognises which kind of evidence a text is and [`detect::parse`]
//! dispatches to the right parser, returning a `serde_json::Value`.

pub mod cuda_stack;
pub mod dcgmi;
pub mod detect;
pub mod kernel_log;
pub mod lspci;
pub mod mount_text;
pub mod mounts;
pub mod nccl_log;
pub mod nvidia_smi;
pub mod smi_tables;
pub mod torch_memory;
pub mod trace;

pub use detect::{EvidenceKind, detect, parse};

// The evidence readers say `super::MAX_ITEMS`; the bound itself is vocabulary (formats use it).
pub use crate::vocab::MAX_ITEMS;
/// Longest free-text field (a log message, a kernel name) kept, in bytes.
pub const MAX_TEXT: usize = 512;

/// Cuts `s` to at most `max` bytes on a char boundary, marking the cut with `…`.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The text without markdown quote markers, when it is quoted as a whole (a reply on GitHub
/// quotes a paste with `> ` before every line): each quoted line loses its `>` markers and the
/// one space after each, so the indentation the tool printed is kept. Text not mostly quoted is
/// returned as it is.
pub(crate) fn unquote(text: &str) -> std::borrow::Cow<'_, str> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let quoted = lines
        .iter()
        .filter(|l| l.trim_start().starts_with('>'))
        .count();
    if lines.is_empty() || quoted * 2 <= lines.len() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut l = line;
        while let Some(r) = l.trim_start().strip_prefix('>') {
            l = r.strip_prefix(' ').unwrap_or(r);
        }
        out.push_str(l);
        out.push('\n');
    }
    std::borrow::Cow::Owned(out)
}

/// Lines of pasted text, skipping `#` comment lines (fixtures cite their source that way).
pub(crate) fn content_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with('#'))
}

#[cfg(test)]
pub(crate) mod testutil {
    use std::path::PathBuf;

    pub fn fixture_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence")
    }

    pub fn fixture(rel: &str) -> String {
        let p = fixture_dir().join(rel);
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Every prefix of `text` cut at a multiple of `step` bytes (on char boundaries).
    pub fn prefixes(text: &str, step: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let mut end = i;
            while end > 0 && !text.is_char_boundary(end) {
                end -= 1;
            }
            out.push(&text[..end]);
            i += step;
        }
        out.push(text);
        out
    }
}
