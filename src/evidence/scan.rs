//! Finding the few lines a reader wants in a large text without looking at every line.
//!
//! Most readers of a log want a handful of its lines (an OOM, an NCCL error, a CUDA error in a
//! training log of millions of progress lines) and test each line for a dozen phrases. Testing
//! every line costs a search per phrase per line; [`lines_with`] instead searches the whole
//! text once for all the phrases (the regex crate's multi-literal SIMD search) and yields only
//! the lines that hold one, each exactly as `str::lines` gives it. A reader keeps its own test
//! of each line, so what it reads does not change: the phrases are only a necessary condition
//! (every line its test accepts holds one of them).

use regex::Regex;

/// `$hay.contains($needle)` for a literal (or `const`) needle, with its searcher built once (a static)
/// instead of on every call: `str::contains` builds a two-way searcher for its needle each time,
/// which the per-line tests of the NCCL and kernel-log readers paid on every line (perf: 10% of
/// the evidence benchmark's samples in `StrSearcher::new`).
macro_rules! has {
    ($hay:expr, $needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        FINDER.find(($hay).as_bytes()).is_some()
    }};
}
pub(crate) use has;

/// `$hay.find($needle)` for a literal needle, with its searcher built once (see [`has!`]).
macro_rules! find_lit {
    ($hay:expr, $needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        FINDER.find(($hay).as_bytes())
    }};
}
pub(crate) use find_lit;

/// A search for any of `phrases` (literal text, no line breaks).
pub(crate) fn phrases(phrases: &[&str]) -> Regex {
    let alt: Vec<String> = phrases.iter().map(|p| regex::escape(p)).collect();
    Regex::new(&alt.join("|")).expect("escaped literals")
}

/// The search for a marker kind's [`marker_phrases`](super::EvidenceKind::marker_phrases),
/// built once per kind and kept (a whole-text detector and [`super::segment`]'s reading of a big
/// text ask for it on every call).
pub(crate) fn kind_phrases(k: &dyn super::EvidenceKind) -> Regex {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static KEPT: LazyLock<Mutex<HashMap<&'static str, Regex>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.entry(k.name())
        .or_insert_with(|| phrases(k.marker_phrases()))
        .clone()
}

/// The search for the [`marker_phrases`](super::EvidenceKind::marker_phrases) of several
/// kinds at once, built once per set of kinds and kept (a big text's reading in
/// [`super::segment`] asks for it on every call, for every marker kind but the one its head
/// shows).
pub(crate) fn kinds_phrases(kinds: &[&'static dyn super::EvidenceKind]) -> Regex {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static KEPT: LazyLock<Mutex<HashMap<Vec<&'static str>, Regex>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    let names: Vec<&'static str> = kinds.iter().map(|k| k.name()).collect();
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.entry(names)
        .or_insert_with(|| {
            let all: Vec<&str> = kinds
                .iter()
                .flat_map(|k| k.marker_phrases().iter().copied())
                .collect();
            phrases(&all)
        })
        .clone()
}

/// The lines of `text` that `k`'s [`marker`](super::EvidenceKind::marker) accepts, in order:
/// the same lines as `text.lines().filter(|l| k.marker(l))`, found by searching the text once
/// for the kind's phrases (every marker line holds one:
/// `segment::tests::marker_phrases_are_held_by_every_marker_line`) instead of testing every line.
pub(crate) fn marker_lines<'t>(
    k: &'t dyn super::EvidenceKind,
    text: &'t str,
) -> impl Iterator<Item = &'t str> + 't {
    lines_holding(text, kind_phrases(k)).filter(move |l| k.marker(l))
}

/// The lines of `text` that hold a match of `anchors`, in order, each once and as
/// `text.lines()` gives it (without its `\n`, or its `\r\n`).
pub(crate) fn lines_with<'t>(text: &'t str, anchors: &Regex) -> impl Iterator<Item = &'t str> {
    lines_holding(text, anchors)
}

/// [`lines_with`] of a search borrowed or owned.
fn lines_holding<R: std::borrow::Borrow<Regex>>(
    text: &str,
    anchors: R,
) -> impl Iterator<Item = &str> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos > text.len() {
            return None;
        }
        let m = anchors.borrow().find_at(text, pos)?;
        let b = text.as_bytes();
        let start = memchr::memrchr(b'\n', &b[..m.start()]).map_or(0, |i| i + 1);
        let (end, next) = match memchr::memchr(b'\n', &b[m.end()..]) {
            Some(i) => (m.end() + i, m.end() + i + 1),
            None => (text.len(), text.len() + 1),
        };
        pos = next;
        let line = &text[start..end];
        Some(if end < text.len() {
            line.strip_suffix('\r').unwrap_or(line)
        } else {
            line
        })
    })
}

/// `text.lines()`, the same lines, found with the memchr crate's SIMD search (the standard
/// library's line iterator looks at a word at a time): the readers that look at every line of
/// a long log walk them with this.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text).filter(|t| !t.is_empty());
    std::iter::from_fn(move || {
        let t = rest?;
        Some(match memchr::memchr(b'\n', t.as_bytes()) {
            Some(i) => {
                rest = Some(&t[i + 1..]).filter(|r| !r.is_empty());
                let line = &t[..i];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => {
                rest = None;
                t
            }
        })
    })
}

/// How many lines `super::content_lines` yields for `text` (its lines, less those whose first
/// non-blank character is `#`), counted with memchr instead of walking every line: a reader
/// that looks only at the lines [`lines_with`] finds still counts the lines it was given.
pub(crate) fn content_line_count(text: &str) -> u64 {
    let b = text.as_bytes();
    let lines = memchr::memchr_iter(b'\n', b).count()
        + usize::from(!text.is_empty() && !text.ends_with('\n'));
    let mut comments = 0usize;
    // the start of the line last looked at, and where the search for a newline resumes:
    // several `#` on one line are looked at once, and each byte is searched once
    let (mut line_start, mut searched) = (usize::MAX, 0usize);
    for p in memchr::memchr_iter(b'#', b) {
        let start = match memchr::memrchr(b'\n', &b[searched..p]) {
            Some(i) => searched + i + 1,
            None if line_start != usize::MAX => line_start,
            None => 0,
        };
        searched = p;
        if start == line_start {
            continue;
        }
        line_start = start;
        // `trim_start` removes Unicode white space: the same test, on the same characters
        if text[start..p].chars().all(char::is_whitespace) {
            comments += 1;
        }
    }
    (lines - comments) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference<'t>(text: &'t str, words: &[&str]) -> Vec<&'t str> {
        text.lines()
            .filter(|l| words.iter().any(|w| l.contains(w)))
            .collect()
    }

    #[test]
    fn yields_each_holding_line_once_as_lines_gives_it() {
        let words = ["Bus error", "nccl", "x"];
        let re = phrases(&words);
        for text in [
            "",
            "nccl",
            "a\nnccl nccl x\r\nb\n",
            "Bus error\r\n\r\nnccl\r",
            "\n\nx\n",
            "xx\nx",
            "é nccl ü\n",
        ] {
            assert_eq!(
                lines_with(text, &re).collect::<Vec<_>>(),
                reference(text, &words),
                "{text:?}"
            );
        }
    }

    /// Every text of the fixtures and the corpus: the readers that search for their phrases
    /// first find exactly the lines that testing every line finds. A phrase added to a
    /// reader's line test but not to its search fails here (on the text that shows it).
    #[test]
    fn readers_searching_phrases_agree_with_testing_every_line() {
        use crate::evidence::{cuda_errors, nccl_errors, shm_error};
        let mut n = 0;
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            n += 1;
            let name = p.display();
            assert_eq!(
                cuda_errors::looks_like(&t),
                cuda_errors::rejoin_too_old(&t)
                    .lines()
                    .any(cuda_errors::recognised_line),
                "{name}"
            );
            // (the heartbeat monitor's message is read from rows a terminal wrapped, and the
            // flight recorder analyzer's report from its head line and the lines under it:
            // whole-text readers beside the line test)
            assert_eq!(
                nccl_errors::looks_like(&t),
                t.lines().any(nccl_errors::recognised_line)
                    || !nccl_errors::parse_nccl_errors(&t).watchdog_stuck.is_empty()
                    || !nccl_errors::parse_nccl_errors(&t).not_joined.is_empty(),
                "{name}"
            );
            assert_eq!(
                shm_error::shm_error_line(&t),
                t.lines().find(|l| shm_error::is_shm_error_line(l)),
                "{name}"
            );
        }
        assert!(n > 300, "{n} files");
    }

    #[test]
    fn counts_the_lines_content_lines_yields() {
        for text in [
            "",
            "#",
            "\n",
            "# a\nb\n  # c # d\n\t#\n#x",
            "a # b\n##\n\r#\n",
            "\u{3000}# wide space\nx\u{a0}#\n",
            "a\r\n#\r\n",
        ] {
            assert_eq!(
                content_line_count(text),
                crate::evidence::content_lines(text).count() as u64,
                "{text:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn lines_as_the_standard_library_gives_them(text in "[a\\r\\n é]{0,40}") {
            prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
        }

        #[test]
        fn line_count_as_content_lines_gives_it(text in "[a#\\r\\n \t\u{3000}é]{0,60}") {
            prop_assert_eq!(
                content_line_count(&text),
                crate::evidence::content_lines(&text).count() as u64
            );
        }

        #[test]
        fn same_lines_as_filtering_every_line(text in "[a-c\\r\\n é]{0,60}") {
            let words = ["ab", "c", "\u{e9}a"];
            let re = phrases(&words);
            prop_assert_eq!(lines_with(&text, &re).collect::<Vec<_>>(), reference(&text, &words));
        }
    }
}
