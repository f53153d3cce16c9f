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

/// The first match of a search at or after a place in a text, from one forward search of the
/// whole text whose answer is kept. A reader that reads the lines in order and asks, line by
/// line, whether a line holds a match searches the text once this way, not once per line: on
/// short lines a search's setup costs more than its scan.
pub(crate) struct Ahead<'t, F> {
    text: &'t str,
    search: F,
    /// where the kept answer was searched from, and the match found there (start, end)
    from: usize,
    found: Option<(usize, usize)>,
}

impl<'t, F: Fn(&'t str, usize) -> Option<(usize, usize)>> Ahead<'t, F> {
    /// `search(text, from)` is the first match (start, end) starting at or after `from`.
    pub(crate) fn new(text: &'t str, search: F) -> Self {
        Ahead {
            text,
            search,
            from: usize::MAX,
            found: None,
        }
    }

    /// The first match starting at or after `pos`: the kept one when it was searched from at
    /// or before `pos` and starts at or after it (so no match lies between), else a new search
    /// from `pos`.
    pub(crate) fn at(&mut self, pos: usize) -> Option<(usize, usize)> {
        if !(self.from <= pos && self.found.is_none_or(|(s, _)| s >= pos)) {
            self.found = (self.search)(self.text, pos);
            self.from = pos;
        }
        self.found
    }
}

/// Where `part`, a slice of `text`, starts in it.
pub(crate) fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

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
/// shows): [`Literals`] groups of the phrases, each line holding one found by [`AnyOf::find_at`].
///
/// A regex of them all ran this search at a fifth of the speed on a training log: its
/// prefilter (Teddy on prefixes of the phrases) stopped every ~30 bytes at a candidate that
/// its lazy DFA then rejected (callgrind, 40 MB of `h3_log_colab_8_workers_2_cpus.txt`: 4.1
/// million prefilter calls, 24 instructions a byte; the same phrases' [`Literals`] in the
/// [`Index`]: 3 a byte).
pub(crate) fn kinds_phrases(kinds: &[&'static dyn super::EvidenceKind]) -> std::sync::Arc<AnyOf> {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock, Mutex};
    static KEPT: LazyLock<Mutex<HashMap<Vec<&'static str>, Arc<AnyOf>>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    let names: Vec<&'static str> = kinds.iter().map(|k| k.name()).collect();
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.entry(names)
        .or_insert_with(|| {
            let all: Vec<&'static str> = kinds
                .iter()
                .flat_map(|k| k.marker_phrases().iter().copied())
                .collect();
            Arc::new(AnyOf::new(&all))
        })
        .clone()
}

/// A search for any of many literals (no line breaks): [`Literals`] of at most 64 each,
/// leftmost match of them all.
pub(crate) struct AnyOf {
    groups: Vec<Literals>,
}

impl AnyOf {
    pub(crate) fn new(literals: &[&str]) -> AnyOf {
        let mut sorted: Vec<&str> = literals.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        // (a line holding a longer literal holds each shorter one inside it)
        let sorted = minimal(&sorted);
        AnyOf {
            groups: sorted.chunks(64).map(Literals::new).collect(),
        }
    }

    /// The leftmost match (start, end) of any literal starting at or after `at`; `ahead`
    /// keeps each group's last answer between calls of a search moving forward (pass the same
    /// one, starting empty, to each call of one pass over a text).
    pub(crate) fn find_at(
        &self,
        text: &str,
        at: usize,
        ahead: &mut Vec<(usize, Option<(usize, usize)>)>,
    ) -> Option<(usize, usize)> {
        ahead.resize(self.groups.len(), (usize::MAX, None));
        let mut best: Option<(usize, usize)> = None;
        for (g, (from, found)) in self.groups.iter().zip(ahead.iter_mut()) {
            // the kept answer holds while it was searched from at or before `at` and lies at
            // or after it (no match of the group between)
            if !(*from <= at && found.is_none_or(|(s, _)| s >= at)) {
                *found = g.find_at(text, at);
                *from = at;
            }
            if let Some(m) = *found
                && best.is_none_or(|b| m.0 < b.0)
            {
                best = Some(m);
            }
        }
        best
    }
}

/// The lines of `text` that `k`'s [`marker`](super::EvidenceKind::marker) accepts, in order:
/// the same lines as `text.lines().filter(|l| k.marker(l))`, found by searching the text once
/// for the kind's phrases (every marker line holds one:
/// `segment::tests::marker_phrases_are_held_by_every_marker_line`) instead of testing every line.
/// (The detectors ask [`Late::lines`], which finds the same lines with one search for several
/// kinds: `late_lines_are_each_sets_own_search`.)
#[cfg(test)]
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

/// [`lines_with`] of literals searched by [`Literals`] (the same lines as [`lines_with`] of
/// their [`phrases`]).
pub(crate) fn lines_with_literals<'t>(
    text: &'t str,
    anchors: &'t Literals,
) -> impl Iterator<Item = &'t str> {
    lines_found(text, move |t, at| anchors.find_at(t, at))
}

/// [`lines_with`] of a search borrowed or owned.
fn lines_holding<R: std::borrow::Borrow<Regex>>(
    text: &str,
    anchors: R,
) -> impl Iterator<Item = &str> {
    lines_found(text, move |t, at| {
        anchors
            .borrow()
            .find_at(t, at)
            .map(|m| (m.start(), m.end()))
    })
}

/// The lines holding a match of `find` (`find(text, at)`: the first match (start, end) at or
/// after `at`), each once, without its line break.
fn lines_found(
    text: &str,
    find: impl Fn(&str, usize) -> Option<(usize, usize)>,
) -> impl Iterator<Item = &str> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos > text.len() {
            return None;
        }
        let (m_start, m_end) = find(text, pos)?;
        let b = text.as_bytes();
        let start = memchr::memrchr(b'\n', &b[..m_start]).map_or(0, |i| i + 1);
        let (end, next) = match memchr::memchr(b'\n', &b[m_end..]) {
            Some(i) => (m_end + i, m_end + i + 1),
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

/// A search several readers make over the whole of a text for a line anywhere in it (an error
/// at the end of an hour of progress lines). [`Late`] makes them all with one search.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Set {
    /// [`super::cuda_errors::looks_like`]'s anchors
    CudaErrors,
    /// `too old`, which [`super::cuda_errors::rejoin_too_old`] asks for
    TooOld,
    /// [`super::nccl_errors::looks_like`]'s anchors
    NcclErrors,
    /// the words of the NCCL watchdog's stuck messages and the flight recorder's report
    /// (`nccl_errors::watchdog_stuck`, `nccl_errors::flight_recorder_not_joined`)
    NcclWhole,
    /// [`super::shm_error::shm_error_line`]'s anchors
    Shm,
    /// the marker phrases of `torchrun-failure`
    Torchrun,
    /// the marker phrases of `xla-oom`
    XlaOom,
    /// the marker phrases of `paddle-oom`
    PaddleOom,
    /// the marker phrases of `tensor-sharing-log`
    TensorSharing,
}

/// Every [`Set`], in the order of their lists in an [`Index`].
const SETS: [Set; 9] = [
    Set::CudaErrors,
    Set::TooOld,
    Set::NcclErrors,
    Set::NcclWhole,
    Set::Shm,
    Set::Torchrun,
    Set::XlaOom,
    Set::PaddleOom,
    Set::TensorSharing,
];

/// The search of one [`Set`]: the same search its reader makes alone.
fn set_search(s: Set) -> Regex {
    match s {
        Set::CudaErrors => super::cuda_errors::anchors().clone(),
        Set::NcclErrors => super::nccl_errors::anchors().clone(),
        _ => phrases(&set_literals(s)),
    }
}

/// Literal text one of which every match of a set's search holds (its phrases, where its
/// search is of phrases).
fn set_literals(s: Set) -> Vec<&'static str> {
    use super::EvidenceKind;
    match s {
        Set::CudaErrors => super::cuda_errors::anchor_phrases(),
        Set::TooOld => vec!["too old"],
        Set::NcclErrors => super::nccl_errors::anchor_literals(),
        Set::NcclWhole => super::nccl_errors::WHOLE_TEXT_WORDS.to_vec(),
        Set::Shm => super::shm_error::SHM_ANCHORS.to_vec(),
        Set::Torchrun => super::torchrun_failure::TorchrunFailureKind
            .marker_phrases()
            .to_vec(),
        Set::XlaOom => super::xla_oom::XlaOomKind.marker_phrases().to_vec(),
        Set::PaddleOom => super::paddle_oom::PaddleOomKind.marker_phrases().to_vec(),
        Set::TensorSharing => super::tensor_sharing::TensorSharingKind
            .marker_phrases()
            .to_vec(),
    }
}

/// Each set's own search, and the searches for the literals of all of them.
struct Searches {
    each: Vec<Regex>,
    /// the literals of every set, in groups of at most 64 (sorted, so that a group's
    /// literals share their first bytes): Teddy's SIMD search of a group (the `packed`
    /// searcher of the aho-corasick crate) ran the three groups at ~680 MB/s together on a
    /// training log, where one automaton of all of them ran at ~250–380 MB/s and a regex of
    /// them at ~240 (its lazy DFA)
    any: Vec<Literals>,
}

/// A search for any of a few literals (at most 64, no line breaks) that finds what a regex of
/// them ([`phrases`]) finds, leftmost first: Teddy's SIMD search (the aho-corasick crate's
/// `packed` searcher) where the CPU has it, else an Aho-Corasick automaton. On short lines it
/// answers several times faster than the regex, whose every call pays the meta engine's setup:
/// a scratch program searching each line of a kernel log for the kernel reader's 14 rare
/// phrases ran at ~560 MB/s with it, ~440 with the automaton and ~170 with the regex.
pub(crate) enum Literals {
    Packed(aho_corasick::packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
}

impl Literals {
    pub(crate) fn new(literals: &[&str]) -> Literals {
        assert!(literals.len() <= 64, "a group holds at most 64 literals");
        let mut b = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .builder();
        b.extend(literals);
        match b.build() {
            Some(p) => Literals::Packed(p),
            None => Literals::Automaton(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                    .build(literals)
                    .expect("64 short literals"),
            ),
        }
    }

    /// The first match (start, end) starting at or after `at`.
    pub(crate) fn find_at(&self, text: &str, at: usize) -> Option<(usize, usize)> {
        match self {
            Literals::Packed(p) => p.find_in(text, aho_corasick::Span::from(at..text.len())),
            Literals::Automaton(a) => a.find(aho_corasick::Input::new(text).range(at..)),
        }
        .map(|m| (m.start(), m.end()))
    }

    /// Where the first match in `text` starts.
    pub(crate) fn find(&self, text: &str) -> Option<usize> {
        self.find_at(text, 0).map(|(s, _)| s)
    }

    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.find_at(text, 0).is_some()
    }
}

static SEARCHES: std::sync::LazyLock<Searches> = std::sync::LazyLock::new(|| {
    let each: Vec<Regex> = SETS.iter().map(|s| set_search(*s)).collect();
    let mut literals: Vec<&str> = SETS.iter().flat_map(|s| set_literals(*s)).collect();
    literals.sort_unstable();
    literals.dedup();
    let literals = minimal(&literals);
    let any = literals.chunks(64).map(Literals::new).collect();
    Searches { each, any }
});

/// The literals of `sorted` (sorted, no two equal) that hold no other one: a line holding a
/// longer literal holds each shorter one inside it, so the longer one finds no line the shorter
/// does not, and only adds to the search's work (fewer literals keep each group of Teddy's
/// buckets less crowded, and fewer groups mean fewer passes over the text).
fn minimal<'a>(sorted: &[&'a str]) -> Vec<&'a str> {
    sorted
        .iter()
        .filter(|l| !sorted.iter().any(|m| m.len() < l.len() && l.contains(*m)))
        .copied()
        .collect()
}

/// Most lines an [`Index`] keeps for one set: past it the set's lines after the last one kept
/// are found by the set's own search when asked for (an [`Index`] stays small beside its
/// text, whatever the text holds).
const KEPT_LINES: usize = 4096;

/// The lines of one text that hold a phrase of each [`Set`], found with one search of the
/// text for all of them: byte ranges of the lines as [`lines_with`] yields them.
#[derive(Debug, Default)]
pub(crate) struct Index {
    lines: [Vec<(usize, usize)>; SETS.len()],
    /// sets whose lines past the last kept one were not looked for
    full: [bool; SETS.len()],
}

impl Index {
    /// One search of `text` for the phrases of every set.
    pub(crate) fn build(text: &str) -> Index {
        let s = &*SEARCHES;
        let mut idx = Index::default();
        // each group's lines, then the sets' lines of all groups in the text's order: a set's
        // first lines are among the first a group found (a line is found by every group whose
        // literal it holds), so the first [`KEPT_LINES`] of the merged lines are the set's
        for group in &s.any {
            let mut found = Index::default();
            found.scan(text, group, &s.each);
            for i in 0..SETS.len() {
                idx.full[i] |= found.full[i];
                idx.lines[i].append(&mut found.lines[i]);
            }
        }
        for i in 0..SETS.len() {
            let lines = &mut idx.lines[i];
            lines.sort_unstable();
            lines.dedup();
            if lines.len() > KEPT_LINES {
                lines.truncate(KEPT_LINES);
                idx.full[i] = true;
            }
        }
        idx
    }

    /// The lines of `text` holding a literal of `group`, tested by each set's search.
    fn scan(&mut self, text: &str, group: &Literals, each: &[Regex]) {
        let b = text.as_bytes();
        let mut pos = 0;
        while pos <= text.len() {
            let Some((m_start, m_end)) = group.find_at(text, pos) else {
                break;
            };
            let start = memchr::memrchr(b'\n', &b[..m_start]).map_or(0, |i| i + 1);
            let (end, next) = match memchr::memchr(b'\n', &b[m_end..]) {
                Some(i) => (m_end + i, m_end + i + 1),
                None => (text.len(), text.len() + 1),
            };
            pos = next;
            let end = if end < text.len() && b[start..end].ends_with(b"\r") {
                end - 1
            } else {
                end
            };
            let line = &text[start..end];
            for (i, re) in each.iter().enumerate() {
                if self.full[i] || !re.is_match(line) {
                    continue;
                }
                if self.lines[i].len() >= KEPT_LINES {
                    self.full[i] = true;
                } else {
                    self.lines[i].push((start, end));
                }
            }
            if self.full.iter().all(|f| *f) {
                break;
            }
        }
    }
}

/// The late sets of one text, searched for once: built on the first question, or taken from
/// the index kept for a text read once per run ([`keep`]).
pub(crate) struct Late<'t> {
    text: &'t str,
    /// `None`: each question answered by its set's own search ([`Late::alone`])
    index: Option<std::sync::Arc<std::sync::OnceLock<Index>>>,
}

impl<'t> Late<'t> {
    /// The searches of `text` for the kinds a detector asks in turn: one search for every set,
    /// made on the first question (or the one kept for `text`).
    pub(crate) fn new(text: &'t str) -> Late<'t> {
        Late {
            text,
            index: Some(kept(text).unwrap_or_default()),
        }
    }

    /// The searches of `text` for one reader asking alone: the index kept for `text` where
    /// there is one, else each question answered by its set's own search (one set's search
    /// costs less than the search for all of them).
    pub(crate) fn alone(text: &'t str) -> Late<'t> {
        Late {
            text,
            index: kept(text),
        }
    }

    /// The text searched.
    pub(crate) fn text(&self) -> &'t str {
        self.text
    }

    fn index(&self) -> Option<&Index> {
        Some(self.index.as_ref()?.get_or_init(|| Index::build(self.text)))
    }

    /// The lines of the text holding a phrase of `set`, in order: the same lines as
    /// [`lines_with`] of the set's own search yields.
    pub(crate) fn lines(&self, set: Set) -> impl Iterator<Item = &'t str> + '_ {
        let i = SETS
            .iter()
            .position(|s| *s == set)
            .expect("every set is listed");
        let text = self.text;
        let (kept, from): (&[(usize, usize)], Option<usize>) = match self.index() {
            None => (&[], Some(0)),
            // past the kept lines: the rest of the text, searched by the set's own search
            Some(idx) => (
                &idx.lines[i],
                idx.full[i].then(|| {
                    idx.lines[i].last().map_or(0, |&(_, b)| {
                        memchr::memchr(b'\n', &text.as_bytes()[b..])
                            .map_or(text.len(), |n| b + n + 1)
                    })
                }),
            ),
        };
        let rest = from.map(|from| {
            lines_holding(&text[from..], &SEARCHES.each[i]).map(move |l| {
                // (a line of the rest is a line of the text: the same bytes, at its offset)
                let at = l.as_ptr() as usize - text.as_ptr() as usize;
                &text[at..at + l.len()]
            })
        });
        kept.iter()
            .map(move |&(a, b)| &text[a..b])
            .chain(rest.into_iter().flatten())
    }

    /// True when a line of the text holds a phrase of `set`.
    pub(crate) fn holds(&self, set: Set) -> bool {
        self.lines(set).next().is_some()
    }
}

/// The late index of each text read once per run, for as long as the text is held: the
/// readers that search a shared text ([`super::segment::segment_shared`], the probes) search it
/// once between them.
static KEPT: std::sync::Mutex<Vec<KeptIndex>> = std::sync::Mutex::new(Vec::new());

type KeptIndex = (
    std::sync::Weak<String>,
    std::sync::Arc<std::sync::OnceLock<Index>>,
);

/// Keeps one [`Index`] for `text` while it is held, which [`Late::new`] of the same text
/// (the same bytes at the same address: the `Arc` keeps them there) then uses.
pub(crate) fn keep(text: &std::sync::Arc<String>) {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.retain(|(w, _)| w.strong_count() > 0);
    if !kept
        .iter()
        .any(|(w, _)| std::ptr::eq(w.as_ptr(), std::sync::Arc::as_ptr(text)))
    {
        kept.push((std::sync::Arc::downgrade(text), Default::default()));
    }
}

/// The index kept for `text`, where `text` is a kept text whole. A live `Arc<String>` owns its
/// bytes alone and cannot change while shared, so a `str` at the same address and of the
/// same length is that text.
fn kept(text: &str) -> Option<std::sync::Arc<std::sync::OnceLock<Index>>> {
    let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.iter().find_map(|(w, idx)| {
        let t = w.upgrade()?;
        (t.as_ptr() == text.as_ptr() && t.len() == text.len()).then(|| idx.clone())
    })
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

    /// Every text of the fixtures and the corpus, and each set: the lines one search for all
    /// the sets gives it are the lines its own search gives, and a marker kind's detector
    /// finds the lines `marker_lines` finds.
    #[test]
    fn late_lines_are_each_sets_own_search() {
        use crate::evidence::EvidenceKind;
        let mut n = 0;
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            n += 1;
            let late = Late::new(&t);
            for (set, own) in SETS.iter().zip(&SEARCHES.each) {
                let want: Vec<&str> = lines_with(&t, own).collect();
                assert_eq!(
                    late.lines(*set).collect::<Vec<_>>(),
                    want,
                    "{} {set:?}",
                    p.display()
                );
                assert_eq!(Late::alone(&t).lines(*set).collect::<Vec<_>>(), want);
            }
            for (set, k) in [
                (
                    Set::Torchrun,
                    &crate::evidence::torchrun_failure::TorchrunFailureKind as &dyn EvidenceKind,
                ),
                (Set::XlaOom, &crate::evidence::xla_oom::XlaOomKind),
                (Set::PaddleOom, &crate::evidence::paddle_oom::PaddleOomKind),
                (
                    Set::TensorSharing,
                    &crate::evidence::tensor_sharing::TensorSharingKind,
                ),
            ] {
                assert_eq!(
                    late.lines(set).filter(|l| k.marker(l)).collect::<Vec<_>>(),
                    marker_lines(k, &t).collect::<Vec<_>>(),
                    "{}",
                    p.display()
                );
            }
        }
        assert!(n > 300, "{n} files");
    }

    /// A literal holding another is dropped; the rest are kept, in order.
    #[test]
    fn minimal_literals_drop_those_holding_another() {
        let mut l = vec![
            "NCCL error",
            "NCCL error(",
            "Bus error",
            "cuda",
            "CUDA error: ",
            "x cuda y",
        ];
        l.sort_unstable();
        assert_eq!(
            minimal(&l),
            vec!["Bus error", "CUDA error: ", "NCCL error", "cuda"]
        );
        // every set's literals, minimal: none holds another, and each dropped one holds a kept one
        let mut all: Vec<&str> = SETS.iter().flat_map(|s| set_literals(*s)).collect();
        all.sort_unstable();
        all.dedup();
        let kept = minimal(&all);
        assert!(kept.len() < all.len(), "{} of {}", kept.len(), all.len());
        for l in &all {
            assert!(kept.iter().any(|k| l.contains(k)), "{l}");
        }
        for k in &kept {
            assert!(!kept.iter().any(|m| m != k && k.contains(m)), "{k}");
        }
    }

    /// Past [`KEPT_LINES`] lines of a set, the rest are found by the set's own search: the
    /// same lines, in order, and the other sets' lines as well.
    #[test]
    fn a_set_past_its_kept_lines_yields_the_rest() {
        let mut t = String::new();
        for i in 0..KEPT_LINES + 50 {
            t.push_str(&format!("step {i} Bus error\r\nplain line\n"));
            if i % 1000 == 7 {
                t.push_str("RuntimeError: CUDA error: out of memory\n");
            }
        }
        t.push_str("last Bus error");
        let late = Late::new(&t);
        for (set, own) in SETS.iter().zip(&SEARCHES.each) {
            assert_eq!(
                late.lines(*set).collect::<Vec<_>>(),
                lines_with(&t, own).collect::<Vec<_>>(),
                "{set:?}"
            );
        }
        assert_eq!(late.lines(Set::Shm).count(), KEPT_LINES + 51);
        assert!(
            late.index().expect("built").full[SETS.iter().position(|s| *s == Set::Shm).unwrap()]
        );
    }

    /// A kept text's index is found for that text whole, not for a part of it or a copy.
    #[test]
    fn a_kept_index_is_the_kept_texts_alone() {
        let t =
            std::sync::Arc::new("a\nNCCL error in: x.cc:1, unhandled system error\n".to_string());
        assert!(kept(&t).is_none());
        keep(&t);
        let idx = kept(&t).expect("kept");
        assert!(kept(&t[2..]).is_none());
        let copy = String::clone(&t);
        assert!(kept(&copy).is_none());
        // one index, built once, for every reader of the text
        assert!(Late::alone(&t).holds(Set::NcclErrors));
        assert!(idx.get().is_some());
        assert!(std::sync::Arc::ptr_eq(&kept(&t).expect("kept"), &idx));
        // a text no longer held is no longer found
        let weak = std::sync::Arc::downgrade(&t);
        drop(t);
        assert!(weak.upgrade().is_none());
        keep(&std::sync::Arc::new(String::new()));
        let left = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        assert!(!left.iter().any(|(w, _)| w.ptr_eq(&weak)));
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
        fn late_lines_as_each_sets_own_search(
            text in "(too old|Bus error|stuck|NCCL error |exitcode|CUDA error: |ncclSystemError|NCCL INFO a\\.cc:12 -> 3|\\.c:|x|é|\\r|\\n| ){0,30}"
        ) {
            let late = Late::new(&text);
            for (set, own) in SETS.iter().zip(&SEARCHES.each) {
                prop_assert_eq!(
                    late.lines(*set).collect::<Vec<_>>(),
                    lines_with(&text, own).collect::<Vec<_>>(),
                    "{:?}", set
                );
            }
        }

        #[test]
        fn same_lines_as_filtering_every_line(text in "[a-c\\r\\n é]{0,60}") {
            let words = ["ab", "c", "\u{e9}a"];
            let re = phrases(&words);
            prop_assert_eq!(lines_with(&text, &re).collect::<Vec<_>>(), reference(&text, &words));
        }
    }
}
