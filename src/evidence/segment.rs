//! Reading what is recognisable, wherever it is. People paste several things at once: a
//! warning above a table, a training log that echoes its environment and then dies of an OOM,
//! prose around a table in a chat message, `nvidia-smi` followed by `dmon` and a few `-q`
//! sections. A paste is read by every kind that recognises a part of it, not only by the first
//! kind whose markers its head holds.
//!
//! The text is cut into blocks (at blank lines, markdown fences and shell prompts) and each
//! block is offered to the kinds' detectors, in [`super::KINDS`] order. Neighbouring blocks of
//! one kind make one part; a block no detector claims joins the part above it when that kind's
//! reader reads something from it (the processes table under `nvidia-smi`'s GPU table, a `-q`
//! section without the keys its detector looks for), and is otherwise left unread. A kind whose
//! lines show it one at a time ([`super::EvidenceKind::marker`]: an NCCL line, an OOM message,
//! an Xid) is found on those lines wherever they sit, and its reader reads the whole text (it
//! reads only its own lines). Each part keeps the line ranges it was read from, which the text
//! report shows.
//!
//! Bounded: a text over [`SEGMENT_MAX`] bytes or [`MAX_BLOCKS`] blocks (a 200 MB log) is not
//! cut block by block; the kind its head shows ([`super::detect()`]) reads it whole, the kinds
//! found by marker lines are found in one pass over its lines, and only its first and last
//! [`WINDOW`] bytes are cut into blocks.

use super::{EvidenceKind, KINDS, detect};
use crate::formats::job_text::JobText;
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// Largest text cut into parts; larger ones are one part of the kind their head shows.
pub const SEGMENT_MAX: usize = 4 << 20;
/// Most blocks a text is cut into.
pub const MAX_BLOCKS: usize = 4096;
/// Most times a reader is asked whether a block belongs to the part above it, per text.
const MAX_JOIN_TRIES: usize = 256;

/// One part of a paste, read as one kind.
pub struct Part<'a> {
    pub kind: &'static dyn EvidenceKind,
    /// Line ranges it was read from, 1-based and inclusive, in order.
    pub lines: Vec<(usize, usize)>,
    /// What the kind's reader reads: the part's lines, or for a kind found by its marker lines,
    /// the whole text.
    pub text: Cow<'a, str>,
}

/// A paste cut into what each kind recognised.
pub struct Reading<'a> {
    pub parts: Vec<Part<'a>>,
    /// Lines holding text that no kind read, 1-based inclusive ranges (blank lines left out).
    pub unread: Vec<(usize, usize)>,
}

impl Reading<'_> {
    /// `smi.txt: lines 1-20 nvidia-smi-table, lines 22-30 nvidia-smi-dmon; lines 31-33 not read`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| format!("{} {}", ranges(&p.lines), p.kind.name()))
            .collect();
        let mut s = parts.join(", ");
        if !self.unread.is_empty() {
            s.push_str(&format!("; {} not read", ranges(&self.unread)));
        }
        s
    }

    /// The parts read as `kind`.
    pub fn of<'s>(&'s self, kind: &dyn EvidenceKind) -> impl Iterator<Item = &'s Part<'s>> {
        let name = kind.name();
        self.parts.iter().filter(move |p| p.kind.name() == name)
    }
}

/// `lines 1-20,22-30` (at most six ranges, then how many more).
fn ranges(r: &[(usize, usize)]) -> String {
    const SHOWN: usize = 6;
    let mut v: Vec<String> = r
        .iter()
        .take(SHOWN)
        .map(|(a, b)| {
            if a == b {
                format!("{a}")
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if r.len() > SHOWN {
        v.push(format!("+{} more", r.len() - SHOWN));
    }
    let one = r.len() == 1 && r[0].0 == r[0].1;
    format!("{} {}", if one { "line" } else { "lines" }, v.join(","))
}

/// A shell prompt that starts a new command's output: `$ nvidia-smi`, `user@node:~$ dmesg`,
/// `root@node:/# df -h`, `(venv) $ ...`.
fn is_prompt(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("$ ") {
        return true;
    }
    let t = t
        .strip_prefix('(')
        .and_then(|r| r.split_once(") "))
        .map_or(t, |(_, r)| r);
    t.starts_with("$ ")
        || t.split_once(['$', '#']).is_some_and(|(before, after)| {
            after.starts_with(' ')
                && before.contains('@')
                && before.contains(':')
                && !before.contains(' ')
        })
}

/// A Markdown code fence: three backticks or tildes (CommonMark 0.31.2, 4.5 "Fenced code
/// blocks"), but not the position markers CPython 3.11+ prints under a traceback frame's source
/// line, which can start with three tildes ([`is_traceback_carets`]).
fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~") && !is_traceback_carets(line)
}

/// The caret line CPython 3.11+ prints under a frame's source line (PEP 657; python/cpython
/// `Lib/traceback.py` at `00897611`, `StackSummary.format_frame_summary`'s `output_line`: one
/// character per column, a space before the instruction, `secondary_char` inside the anchors of
/// a call, subscript or binary operator and `primary_char` outside them, `_Anchors` defaulting
/// to `~` and `^`, without anchors `^` alone; the lines indented by `textwrap.indent(…, '    ')`):
/// `    ~~~~~~~~~~~~~~~~~~~~~~~~~~^^` under `    offload_stream.synchronize()`. After its indent
/// it holds only `~` and `^`, and a `^` (the anchors' characters, or the whole instruction's):
/// a tilde fence (`~~~`, `~~~python`) has none.
pub(crate) fn is_traceback_carets(line: &str) -> bool {
    let t = line.trim();
    t.contains('^') && t.chars().all(|c| c == '~' || c == '^')
}

/// The column heads of an `nvidia-smi topo -m` matrix (`\tGPU0\tGPU1\t…\tCPU Affinity`, its
/// NICs or affinity columns after the GPUs): a tool that prints the matrix under its own lines
/// (sglang's `check_env` ends with `NVIDIA Topology:` and the matrix, no blank line between) is
/// two outputs, cut there.
fn is_topo_head(line: &str) -> bool {
    let mut t = line.split_whitespace();
    t.next() == Some("GPU0")
        && t.next().is_some_and(|x| {
            ["GPU1", "NIC0", "mlx5_0", "CPU"]
                .iter()
                .any(|p| x.starts_with(p))
        })
}

/// Blocks of lines (0-based, inclusive): cut at blank lines and fences, and before prompts and
/// a topology matrix's column heads.
fn blocks(lines: &[&str]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        let sep = l.trim().is_empty() || is_fence(l);
        if sep || is_prompt(l) || is_topo_head(l) {
            if let Some(s) = start.take() {
                out.push((s, i - 1));
            }
        }
        if !sep && start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, lines.len() - 1));
    }
    out
}

/// A line that is one shell assignment whole: `NAME=value` or `export NAME=value`, indented or
/// not, its quotes balanced and not continued on the next line (bash's "Shell Parameters":
/// `name=[value]`, a name being letters, digits and underscores, not starting with a digit).
fn is_shell_assignment(line: &str) -> bool {
    let t = line.trim();
    let t = t.strip_prefix("export ").map_or(t, str::trim_start);
    let Some((name, _)) = t.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && t.matches('"').count().is_multiple_of(2)
        && t.matches('\'').count().is_multiple_of(2)
        && !t.ends_with('\\')
}

/// The text of lines `a..=b` (0-based), each followed by a newline.
fn text_of(lines: &[&str], spans: &[(usize, usize)]) -> String {
    let mut s = String::new();
    for &(a, b) in spans {
        for l in &lines[a..=b] {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

fn merge_ranges(mut r: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    r.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (a, b) in r {
        match out.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Line ranges, 0-based and inclusive.
type Spans = Vec<(usize, usize)>;

/// `text.lines().count()`, counted with memchr (a 200 MB paste is one part, asked for by
/// every probe that reads pasted text).
fn line_count(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// Bytes at each end of a text too big to cut whole that are cut as a text of their own: where
/// a long log echoes its environment (the head) and prints what it died of (the tail).
pub const WINDOW: usize = 256 << 10;
/// Most line ranges kept per marker kind of a text too big to cut: past it, the last range
/// grows to the newest marker line (the count of ranges is for the report, the reader reads
/// the whole text).
const MAX_MARKER_RANGES: usize = 10_000;

/// Cuts `text` into the parts the kinds recognise. See the module doc.
pub fn segment(text: &str) -> Reading<'_> {
    let r = segment_inner(text, true);
    // a post: what its fences hold, or what its sentences surround, read as its own text where
    // the post as a whole reads as nothing, or where it is one document a kind reads whole (a
    // compose file whose anchors its blocks alone would lose)
    let whole_doc = |d: &str| detect(d).is_some_and(|k| k.whole_text(d));
    // (a text read already is looked at again only where a document read whole may hide in
    // it: a fence, YAML's merge key, a kind read whole; a long log is not cut twice)
    // (the parts first, then one SIMD search a phrase: `str::contains` builds a two-way
    // searcher each call and ran at a tenth of the speed, 11% of a 60 MB log's reading)
    let may_hide_one = r.parts.iter().any(|p| p.kind.whole())
        || super::scan::has!(text, "```")
        || super::scan::has!(text, "~~~")
        || super::scan::has!(text, "<<:");
    if !r.parts.is_empty() && !may_hide_one {
        return r;
    }
    let Some(doc) = pasted_document(text) else {
        return r;
    };
    if !r.parts.is_empty() && !whole_doc(&doc) {
        return r;
    }
    let d = segment_inner(&doc, false);
    if d.parts.is_empty() {
        return r;
    }
    // a part read whole spans the document's lines, not the blanked ones around them
    let doc_lines: Vec<&str> = doc.lines().collect();
    let blank = |n: usize| doc_lines.get(n - 1).is_none_or(|l| l.trim().is_empty());
    let shrink = |(mut a, mut b): (usize, usize)| {
        while a < b && blank(a) {
            a += 1;
        }
        while b > a && blank(b) {
            b -= 1;
        }
        (a, b)
    };
    let mut parts: Vec<Part<'_>> = d
        .parts
        .into_iter()
        .map(|p| Part {
            kind: p.kind,
            lines: p.lines.into_iter().map(shrink).collect(),
            text: Cow::Owned(p.text.into_owned()),
        })
        .collect();
    // what the post holds besides that document stays read as it was
    let overlaps = |x: &[(usize, usize)], y: &[(usize, usize)]| {
        x.iter()
            .any(|&(a, b)| y.iter().any(|&(c, e)| a <= e && c <= b))
    };
    let doc_spans: Vec<(usize, usize)> = parts.iter().flat_map(|p| p.lines.clone()).collect();
    parts.extend(
        r.parts
            .into_iter()
            .filter(|p| !overlaps(&p.lines, &doc_spans)),
    );
    parts.sort_by_key(|p| p.lines.first().copied());
    let covered: Vec<(usize, usize)> = parts.iter().flat_map(|p| p.lines.clone()).collect();
    let unread = text
        .lines()
        .enumerate()
        .filter(|(n, l)| {
            !l.trim().is_empty()
                && !is_fence(l)
                && !covered.iter().any(|&(a, b)| a <= n + 1 && *n < b)
        })
        .map(|(n, _)| (n + 1, n + 1))
        .collect();
    Reading {
        parts,
        unread: merge_ranges(unread),
    }
}

/// A text over [`SEGMENT_MAX`] bytes or [`MAX_BLOCKS`] blocks: not cut line by line whole,
/// but not left unread either (a 20 MB training log that ends in an OOM, an NCCL log whose
/// watchdog timeout comes after an hour of INFO lines). What its head shows is one part read
/// whole; each kind found by its marker lines is found in one pass over every line, and read
/// from the whole text; and the first and last [`WINDOW`] bytes are cut as texts of their
/// own, so that a kind without marker lines there (a CUDA error's traceback at the end, a
/// `collect_env` at the top) is read from its own lines.
fn segment_big<'a>(text: &'a str, first: Option<&'static dyn EvidenceKind>) -> Reading<'a> {
    let mut out: Vec<Part<'a>> = Vec::new();
    if let Some(k) = first {
        out.push(Part {
            kind: k,
            lines: vec![(1, line_count(text).max(1))],
            text: Cow::Borrowed(text),
        });
    }
    let same = |a: &dyn EvidenceKind, b: &dyn EvidenceKind| a.name() == b.name();
    let markers: Vec<&'static dyn EvidenceKind> = KINDS
        .iter()
        .copied()
        .filter(|k| k.has_markers() && !first.is_some_and(|f| same(f, *k)))
        .collect();
    let mut spans: Vec<Spans> = vec![Vec::new(); markers.len()];
    let note = |s: &mut Spans, n: usize| {
        let full = s.len() >= MAX_MARKER_RANGES;
        match s.last_mut() {
            Some(last) if last.1 + 1 == n || full => last.1 = n,
            _ => s.push((n, n)),
        }
    };
    // one search of the text for the phrases every marker kind's lines hold, then only the
    // lines holding one are tested, each by the kinds whose phrase it holds (every marker line
    // holds one of its kind's: `marker_phrases_are_held_by_every_marker_line`), so each kind
    // finds the lines a search of its own phrases would find, in one pass instead of one a kind
    let anchors = super::scan::kinds_phrases(&markers);
    let own: Vec<regex::Regex> = markers
        .iter()
        .map(|k| super::scan::kind_phrases(*k))
        .collect();
    let b = text.as_bytes();
    let (mut pos, mut n, mut counted) = (0, 0, 0);
    let mut ahead = Vec::new();
    while !markers.is_empty() && pos <= text.len() {
        let Some((m_start, m_end)) = anchors.find_at(text, pos, &mut ahead) else {
            break;
        };
        // `pos` starts a line: the match's line starts at it or after it
        let start = memchr::memrchr(b'\n', &b[pos..m_start]).map_or(pos, |i| pos + i + 1);
        n += memchr::memchr_iter(b'\n', &b[counted..start]).count();
        counted = start;
        let end = memchr::memchr(b'\n', &b[m_end..]).map_or(text.len(), |i| m_end + i);
        let line = &text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        for ((k, s), own) in markers.iter().zip(spans.iter_mut()).zip(&own) {
            if own.is_match(line) && k.marker(line) {
                note(s, n);
            }
        }
        pos = end + 1;
    }
    for (k, s) in markers.iter().zip(spans) {
        if !s.is_empty() {
            out.push(Part {
                kind: *k,
                lines: s.iter().map(|(a, b)| (a + 1, b + 1)).collect(),
                text: Cow::Borrowed(text),
            });
        }
    }
    // the two ends, each starting and ending at a whole line
    let mut head_end = text.len().min(WINDOW);
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let head_end = text[..head_end].rfind('\n').map_or(0, |i| i + 1);
    let mut tail_start = text.len().saturating_sub(WINDOW).max(head_end);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let tail_start = text[tail_start..]
        .find('\n')
        .map_or(text.len(), |i| tail_start + i + 1)
        .max(head_end);
    let lines_before_tail = memchr::memchr_iter(b'\n', &text.as_bytes()[..tail_start]).count();
    for (offset, window) in [
        (0, &text[..head_end]),
        (lines_before_tail, &text[tail_start..]),
    ] {
        for p in segment_inner(window, false).parts {
            if p.kind.has_markers() || out.iter().any(|q| same(q.kind, p.kind)) {
                continue;
            }
            out.push(Part {
                kind: p.kind,
                lines: p
                    .lines
                    .iter()
                    .map(|(a, b)| (a + offset, b + offset))
                    .collect(),
                text: p.text,
            });
        }
    }
    out.sort_by_key(|p| p.lines.first().copied());
    Reading {
        parts: out,
        unread: Vec::new(),
    }
}

/// Runs of blocks (first block, then kind and last block) that are one document a kind reads
/// whole ([`EvidenceKind::whole_text`]), where the text as a whole is not: the blocks between
/// two blocks of other kinds, holding at least two blocks and one of the kind. Tried as the
/// run, then without its unclaimed blocks at the end; two readings a run at most.
fn whole_document_runs(
    lines: &[&str],
    bs: &[(usize, usize)],
    kinds: &[Option<&'static dyn EvidenceKind>],
) -> Vec<(usize, (&'static dyn EvidenceKind, usize))> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bs.len() {
        // the run: blocks of kind k or of none, from i
        let Some(k) = kinds[i..].iter().flatten().next().copied() else {
            break;
        };
        let mut end = i;
        while end + 1 < bs.len() && kinds[end + 1].is_none_or(|x| x.name() == k.name()) {
            end += 1;
        }
        // the blocks of no kind after the run's last block of the kind may lead the next run
        // (a compose file's comment header and anchored block under a table)
        let next = (i..=end)
            .rev()
            .find(|&b| kinds[b].is_some())
            .map_or(end + 1, |b| b + 1);
        // (a kind read whole whatever its text, JSON or XML, says nothing by `whole_text`)
        if end > i
            && k.judges_whole_text()
            && kinds[i..=end]
                .iter()
                .any(|x| x.is_some_and(|x| x.name() == k.name()))
        {
            let mut last = end;
            for _ in 0..2 {
                if k.whole_text(&text_of(lines, &bs[i..=last])) {
                    out.push((i, (k, last)));
                    break;
                }
                match (i..last).rev().find(|&b| kinds[b].is_some()) {
                    Some(b) if kinds[last].is_none() => last = b,
                    _ => break,
                }
            }
        }
        // a run read whole ends where it does; else the next run starts as said above
        i = match out.last() {
            Some(&(a, (_, last))) if a == i => last + 1,
            _ => next,
        };
    }
    out
}

fn segment_inner(text: &str, big_ok: bool) -> Reading<'_> {
    let whole = |k: &'static dyn EvidenceKind| {
        let n = line_count(text).max(1);
        Reading {
            parts: vec![Part {
                kind: k,
                lines: vec![(1, n)],
                text: Cow::Borrowed(text),
            }],
            unread: Vec::new(),
        }
    };
    let first = detect(text);
    if let Some(k) = first
        && k.whole_text(text)
    {
        return whole(k);
    }
    if text.len() > SEGMENT_MAX && big_ok {
        return segment_big(text, first);
    }
    if let Some(k) = first
        && text.len() > SEGMENT_MAX
    {
        return whole(k);
    }
    // a text too big to cut is one part: decided before its lines are listed
    let lines: Vec<&str> = if text.len() > SEGMENT_MAX {
        Vec::new()
    } else {
        text.lines().collect()
    };
    let bs = blocks(&lines);
    if bs.len() > MAX_BLOCKS && big_ok {
        return segment_big(text, first);
    }
    if bs.len() > MAX_BLOCKS || text.len() > SEGMENT_MAX {
        return match first {
            Some(k) => whole(k),
            None => Reading {
                parts: Vec::new(),
                unread: Vec::new(),
            },
        };
    }
    let kinds: Vec<Option<&'static dyn EvidenceKind>> =
        bs.iter().map(|&b| detect(&text_of(&lines, &[b]))).collect();

    // A document read whole (a compose file whose services merge an anchored block, XML) with
    // other output above or below it: each run of blocks between blocks of other kinds that
    // holds the kind is read whole when, as one text, it is such a document (with or without
    // the unclaimed blocks that end it: a thank-you line under the file).
    let whole_runs = whole_document_runs(&lines, &bs, &kinds);
    // Block kinds: neighbouring blocks of one kind, and unclaimed blocks its reader reads.
    let mut parts: Vec<(&'static dyn EvidenceKind, Spans)> = Vec::new();
    let mut tries = 0;
    let mut i = 0;
    while i < bs.len() {
        if let Some(&(k, end)) = whole_runs.iter().find_map(|(a, r)| (*a == i).then_some(r)) {
            parts.push((k, bs[i..=end].to_vec()));
            i = end + 1;
            continue;
        }
        let Some(k) = kinds[i] else {
            i += 1;
            continue;
        };
        let mut spans = vec![bs[i]];
        let mut j = i + 1;
        while j < bs.len() {
            if whole_runs.iter().any(|(a, _)| *a == j) {
                break;
            }
            match kinds[j] {
                Some(kj) if kj.name() == k.name() => {
                    spans.push(bs[j]);
                    j += 1;
                }
                None if !k.has_markers() && tries < MAX_JOIN_TRIES => {
                    tries += 1;
                    let before = k.parse(&text_of(&lines, &spans));
                    let mut with = spans.clone();
                    with.push(bs[j]);
                    let after = k.parse(&text_of(&lines, &with));
                    if after.is_ok() && after != before {
                        spans = with;
                        j += 1;
                    } else {
                        break;
                    }
                }
                _ => break,
            }
        }
        parts.push((k, spans));
        i = j;
    }

    // Marker kinds: their lines wherever they are, read from the whole text.
    let mut out: Vec<Part> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    for k in KINDS.iter().copied() {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for (pk, s) in &parts {
            if pk.name() == k.name() && k.has_markers() {
                spans.extend(s);
            }
        }
        if k.has_markers() {
            spans.extend(
                lines
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| k.marker(l))
                    .map(|(n, _)| (n, n)),
            );
            if !spans.is_empty() {
                let spans = merge_ranges(spans);
                covered.extend(&spans);
                out.push(Part {
                    kind: k,
                    lines: spans.iter().map(|(a, b)| (a + 1, b + 1)).collect(),
                    text: Cow::Borrowed(text),
                });
            }
        }
    }
    for (k, spans) in parts {
        if k.has_markers() {
            continue;
        }
        covered.extend(&spans);
        let own = text_of(&lines, &spans);
        let text = match spans.first() {
            Some(&(first, _)) if k.reads_assignments_above(&own) => {
                let mut t: String = lines[..first]
                    .iter()
                    .filter(|l| is_shell_assignment(l))
                    .flat_map(|l| [*l, "\n"])
                    .collect();
                t.push_str(&own);
                t
            }
            _ => own,
        };
        out.push(Part {
            kind: k,
            lines: spans.iter().map(|(a, b)| (a + 1, b + 1)).collect(),
            text: Cow::Owned(text),
        });
    }
    // What the head shows is read even when no single block shows it (markers spread over
    // blocks that each hold too few of them).
    if let Some(k) = first
        && !out.iter().any(|p| p.kind.name() == k.name())
    {
        let rest: Vec<(usize, usize)> = bs
            .iter()
            .copied()
            .filter(|&(a, b)| !covered.iter().any(|&(c, d)| a <= d && c <= b))
            .collect();
        let spans = merge_ranges(if rest.is_empty() { bs.clone() } else { rest });
        covered.extend(&spans);
        out.push(Part {
            kind: k,
            lines: spans.iter().map(|(a, b)| (a + 1, b + 1)).collect(),
            text: Cow::Borrowed(text),
        });
    }
    out.sort_by_key(|p| p.lines.first().copied());
    let covered = merge_ranges(covered);
    let unread = bs
        .iter()
        .flat_map(|&(a, b)| a..=b)
        .filter(|n| !covered.iter().any(|&(c, d)| c <= *n && *n <= d))
        .map(|n| (n, n))
        .collect();
    Reading {
        parts: out,
        unread: merge_ranges(unread)
            .into_iter()
            .map(|(a, b)| (a + 1, b + 1))
            .collect(),
    }
}

/// One [`Part`] as kept between calls: its text is the shared text's (`None`) or its own.
struct KeptPart {
    kind: &'static dyn EvidenceKind,
    lines: Vec<(usize, usize)>,
    own: Option<std::sync::Arc<String>>,
}

/// [`segment`] of a text read once per run ([`crate::vocab::io::read_shared`]), cut once: the
/// evidence host, each probe that reads pasted evidence and the report's notes all ask what a
/// paste holds, and each [`segment`] of a 200 MB paste searches all of it. The text's `Arc` is
/// kept with its reading, so the same `Arc` is the same text.
pub fn segment_shared(text: &std::sync::Arc<String>) -> Reading<'_> {
    use std::sync::{Arc, Mutex};
    type Kept = (Arc<String>, Arc<(Vec<KeptPart>, Vec<(usize, usize)>)>);
    static CUT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
    let kept = {
        let cache = CUT.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .iter()
            .find(|(t, _)| Arc::ptr_eq(t, text))
            .map(|(_, r)| r.clone())
    };
    let kept = match kept {
        Some(k) => k,
        None => {
            // the searches for a line anywhere in the text, made once for this reading and
            // the probes that read the same text
            super::scan::keep(text);
            let r = segment(text);
            let parts = r
                .parts
                .into_iter()
                .map(|p| KeptPart {
                    kind: p.kind,
                    lines: p.lines,
                    own: match p.text {
                        Cow::Borrowed(_) => None,
                        Cow::Owned(s) => Some(Arc::new(s)),
                    },
                })
                .collect();
            let k = Arc::new((parts, r.unread));
            let mut cache = CUT.lock().unwrap_or_else(|e| e.into_inner());
            // texts read again (changed on disk) leave their old readings behind
            cache.retain(|(t, _)| Arc::strong_count(t) > 1);
            cache.push((text.clone(), k.clone()));
            k
        }
    };
    Reading {
        parts: kept
            .0
            .iter()
            .map(|p| Part {
                kind: p.kind,
                lines: p.lines.clone(),
                text: match &p.own {
                    None => Cow::Borrowed(text.as_str()),
                    Some(s) => Cow::Owned(String::clone(s)),
                },
            })
            .collect(),
        unread: kept.1.clone(),
    }
}

/// For a text no kind recognises: the kind it comes closest to and the line that came
/// closest (1-based number and text), by the words the line shares with what the kind is
/// (its name, description, example command and field names). `None` when no line shares a
/// word with any kind.
pub fn nearest(text: &str) -> Option<(&'static dyn EvidenceKind, usize, String)> {
    fn words(s: &str) -> Vec<String> {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 4)
            .map(str::to_ascii_lowercase)
            .collect()
    }
    const COMMON: &[&str] = &[
        "with", "from", "that", "this", "what", "when", "each", "then", "their", "they", "where",
        "over", "read", "time", "python", "true", "false", "none", "line", "lines",
    ];
    let vocab: Vec<(&'static dyn EvidenceKind, Vec<String>)> = KINDS
        .iter()
        .map(|k| {
            let mut v = words(k.name());
            v.extend(words(k.doc()));
            v.extend(words(k.example()));
            for (f, _) in k.fields() {
                v.extend(words(f));
            }
            v.retain(|w| !COMMON.contains(&w.as_str()));
            v.sort();
            v.dedup();
            (*k, v)
        })
        .collect();
    let mut best: Option<(usize, &'static dyn EvidenceKind, usize, &str)> = None;
    for (n, line) in text.lines().take(10_000).enumerate() {
        let mut ws = words(line);
        ws.sort();
        ws.dedup();
        if ws.is_empty() {
            continue;
        }
        for (k, v) in &vocab {
            let score = ws.iter().filter(|w| v.binary_search(w).is_ok()).count();
            if score > 0 && best.is_none_or(|(s, ..)| score > s) {
                best = Some((score, *k, n + 1, line));
            }
        }
    }
    best.map(|(_, k, n, l)| (k, n, super::clip(l.trim(), 200)))
}

/// True when `text` reads as a person's writing (an issue body, a forum post, a question)
/// rather than a program's output: at least 3/5 of its characters sit on sentence lines. A
/// sentence line, once a markdown marker (`#`, `>`, `-`, `*`) is taken off its head, holds at
/// least four CJK characters or at least four tokens of which three in four are words (letters
/// only, once the punctuation around them is off; an apostrophe or hyphen between letters, as
/// in `don't` or `GPU-Util`, keeps a word one word). Tables, `key: value` lines, log lines and
/// tracebacks are mostly numbers, paths and identifiers, and fenced output counts against the
/// prose around it. A line that is only an attachment GitHub renders (a markdown image
/// `![alt](url)` or link `[name](url)`, or an HTML `<img …>` tag, the forms its editor inserts
/// for a pasted screenshot or file) is neither prose nor output and is not counted. A shell
/// command line the poster quotes (what they ran, `is_command_line`) is their writing and
/// counts as a sentence line: a post that gives a command and then says in words what it
/// printed holds no output either. So does a line with Markdown's strong emphasis
/// (`strong_emphasis`): the `- **Driver**: 580.126.09 (R580)` of an issue's environment list
/// is mostly numbers and names, but the markup is the poster's, which no program prints.
/// Asked only
/// of a text no kind reads: such a post is judged as showing nothing (every rule about the
/// host not-applicable, with a note), anything else is an error.
pub fn is_prose(text: &str) -> bool {
    let (mut all, mut prose) = (0usize, 0usize);
    for line in text.lines().take(2000) {
        let t = line
            .trim()
            .trim_start_matches(|c: char| "#>-*".contains(c))
            .trim();
        if t.is_empty() || is_attachment(t) {
            continue;
        }
        let n = t.chars().count();
        all += n;
        let cjk = t
            .chars()
            .filter(|c| matches!(*c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af))
            .count();
        let tokens: Vec<&str> = t.split_whitespace().collect();
        let words = tokens
            .iter()
            .filter(|w| {
                let w = w.trim_matches(|c: char| !c.is_alphanumeric());
                !w.is_empty()
                    && w.split(|c: char| "'’-".contains(c))
                        .all(|p| !p.is_empty() && p.chars().all(char::is_alphabetic))
            })
            .count();
        if cjk >= 4
            || (tokens.len() >= 4 && words * 4 >= tokens.len() * 3)
            || is_command_line(t)
            || strong_emphasis(line.trim())
        {
            prose += n;
        }
    }
    all > 0 && prose * 5 >= all * 3
}

/// True when `t` holds a Markdown strong-emphasis span written with asterisks, `**text**`
/// (CommonMark 0.31.2 §6.2, as GitHub Flavored Markdown renders it: a run of two `*` that is
/// left-flanking, so the character after it is no whitespace, closed by a run of two that is
/// right-flanking, so the character before it is no whitespace, no `*` between). The markup is
/// a person's, written for the page to render in bold: a post's `**Driver**: 580.126.09
/// (R580)`, `**Hardware ruled out.**`. Program output does not print it, and what comes close
/// does not match: Python's `func(*args, **kwargs)` has one run, a keyword-only `f(**a, **b)`
/// closes after whitespace, a power `2**10 * 3**2` has a `*` between its runs, a banner's `**
/// WARNING **` opens before whitespace. The underscore form (`__text__`) is left out: Python's
/// dunder names (`module.__init__(self)` in a traceback) are the same characters.
fn strong_emphasis(t: &str) -> bool {
    static STRONG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\*\*[^\s*](?:[^*]*[^\s*])?\*\*").expect("static regex"));
    STRONG.is_match(t)
}

/// True when `text` is a small table a person wrote in a post, as a page's stored copy renders
/// it: each row of a Markdown table (GitHub Flavored Markdown's table extension: cells between
/// pipes, a delimiter row under the header) becomes its cells' text run together, a label of
/// words and one value (`Single GPU step time 22.03ms`, `Communication overhead 42.6%`), under
/// at most one header of two to four words (`Metric Value`). No program prints this: output
/// rows carry a separator (`key: value`, `key=value`), several values, or identifiers, and a
/// training log's lines are job text, read before this is asked. Asked, like [`is_prose`], only
/// of a text no kind reads: such a table shows nothing gpufix judges.
pub fn is_rendered_table(text: &str) -> bool {
    if is_rendered_cell_grid(text) {
        return true;
    }
    static VALUE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[-+~≈]?\d+(?:[.,]\d+)?(?:%|[A-Za-z/]{1,6})?$").expect("static regex")
    });
    let word = |w: &str| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        !w.is_empty() && w.chars().all(char::is_alphabetic)
    };
    let (mut rows, mut first) = (0usize, true);
    for (i, line) in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i > 40 {
            return false;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        let is_first = std::mem::replace(&mut first, false);
        if t.iter()
            .any(|w| w.contains(':') || w.contains('=') || w.contains('|'))
        {
            return false;
        }
        let (label, value) = t.split_at(t.len() - 1);
        let words = label.iter().filter(|w| word(w)).count();
        if label.len() >= 2
            && words >= 2
            && words * 4 >= label.len() * 3
            && VALUE.is_match(value[0])
        {
            rows += 1;
        } else if !(is_first && (2..=4).contains(&t.len()) && t.iter().all(|w| word(w))) {
            return false;
        }
    }
    (3..=40).contains(&rows)
}

/// True when `text` is a table of figures a person wrote in a post, as a stored copy of the
/// page renders its HTML `<table>`: the WHATWG HTML standard's rendered-text collection steps
/// (the `innerText` getter, §3.2.7 "The innerText and outerText properties") put a U+0009 TAB
/// after every `table-cell` box but the last of its `table-row` and a line feed after every
/// `table-row`, so each row is one line of cells between tabs, empty cells kept (a header cell
/// spanning columns leaves empty ones). A person's table of measurements (a forum post's
/// epoch times per batch size on one and two GPUs, forums.fast.ai/t/43408) is then at most two
/// header rows of words, then at least three rows whose cells are figures (a count, `12,500`
/// with its thousands separator, `1.85`, `42.6%`, `15:17` as mm:ss, `1:02:03`), each row led
/// by at most one label or figure. No program gpufix meets prints this and is not read first:
/// `nvidia-smi topo -m` (tabs too) is its own kind, and its cells (`X`, `NV12`, `0-11`) are no
/// figures; `key=value` or `|`-separated output is not a person's table. Asked, like
/// [`is_prose`], only of a text no kind reads: such a table shows nothing gpufix judges.
fn is_rendered_cell_grid(text: &str) -> bool {
    static FIGURE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^[-+~≈]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:%|[A-Za-z/]{1,6})?$|^\d+(?::\d{2}){1,2}(?:\.\d+)?$",
        )
        .expect("static regex")
    });
    // a label or a column head: some letters (`1 GPU`, `Epoch Time (mm:ss)`), never a field
    // of output (`loss=0.5`, `| 0 |`)
    let words = |c: &str| {
        c.chars().any(char::is_alphabetic)
            && !c.contains('=')
            && !c.contains('|')
            && !FIGURE.is_match(c)
    };
    let (mut header, mut rows) = (0usize, 0usize);
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if i > 42 || !line.contains('\t') {
            return false;
        }
        let cells: Vec<&str> = line
            .split('\t')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let figures = cells.iter().filter(|c| FIGURE.is_match(c)).count();
        if figures == 0 && rows == 0 && header < 2 && !cells.is_empty() {
            // a header row: column heads only
            if !cells.iter().all(|c| words(c)) {
                return false;
            }
            header += 1;
            continue;
        }
        // a data row: figures, led by at most one label
        let led = usize::from(cells.first().is_some_and(|c| !FIGURE.is_match(c)));
        if figures < 2 || figures + led != cells.len() || (led == 1 && !words(cells[0])) {
            return false;
        }
        rows += 1;
    }
    (3..=40).contains(&rows)
}

/// A shell command line as a person types it into a post (`nvidia-smi --query-gpu=… --format=csv`,
/// `$ sudo lspci -vvv | grep LnkSta`): what the poster ran, which is their writing, not a
/// program's output. POSIX's Shell Command Language (XCU 2.9.1, simple commands) makes such a
/// line optional `NAME=value` assignments, then the command name, then its arguments; the
/// Utility Syntax Guidelines (XBD 12.2, guidelines 4 and 5; GNU's `--name[=value]` long
/// options follow the same lead) start every option with `-` and a letter. So: an optional
/// prompt ending in `$`, `%` or `#` (`user@host:~$`), an optional `sudo`, assignments, a command
/// name (a word or a path of letters, digits, `._+-/`, never a `key:` label or a log prefix),
/// and at least one option among the arguments. Output lines (an NCCL line's `host:pid:tid`,
/// `LnkSta:` fields, a traceback) have no command name in front; a log line's lone ` - ` is
/// no option.
fn is_command_line(t: &str) -> bool {
    let mut tokens = t.split_whitespace().peekable();
    // a prompt: `$`, `%`, `#`, or a `user@host:dir$` word before the command
    if let Some(first) = tokens.peek()
        && (first.ends_with('$') || first.ends_with('%') || first.ends_with('#'))
    {
        tokens.next();
    }
    if tokens.peek() == Some(&"sudo") {
        tokens.next();
    }
    while let Some(w) = tokens.peek() {
        let assignment = w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        });
        if !assignment {
            break;
        }
        tokens.next();
    }
    let Some(name) = tokens.next() else {
        return false;
    };
    let command_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '.' || c == '/')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-/".contains(c));
    command_name
        && tokens.any(|a| {
            let opt = a.strip_prefix("--").or_else(|| a.strip_prefix('-'));
            opt.is_some_and(|o| o.starts_with(|c: char| c.is_ascii_alphabetic()))
        })
}

/// A sentence line around a paste: prose ([`is_prose`]), or a few words ending a sentence
/// (`Thanks in advance.`, `Any idea?`), never a block with a config's `key: value` or
/// `key = value` line (a commented YAML file reads as words too).
fn is_sentence_block(block: &str) -> bool {
    // a poster's paragraphs around a paste are short; a long block is output or code (and is
    // not handed whole to the job-text reader below)
    if block.len() > 32 << 10 || block.lines().nth(200).is_some() {
        return false;
    }
    static KEY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:-\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*(?::(?:\s|$)|=)")
            .expect("static regex")
    });
    if block.lines().any(|l| KEY.is_match(l)) {
        return false;
    }
    // a warning a program printed reads as a sentence too
    if matches!(
        crate::formats::job_text::detect(block),
        Some(JobText::Log | JobText::Python | JobText::Launcher)
    ) {
        return false;
    }
    if is_prose(block) {
        return true;
    }
    block.lines().filter(|l| !l.trim().is_empty()).all(|l| {
        let t = l.trim();
        let words = t.split_whitespace().all(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            !w.is_empty() && w.chars().all(char::is_alphabetic)
        });
        words && t.ends_with(['.', '!', '?'])
    })
}

/// The output a post pastes, where the post around it keeps every reader from it: the
/// contents of its fenced code blocks (CommonMark 0.31 §4.5: a run of three or more backticks
/// or tildes opens a block, the same run closes it, an unclosed block runs to the end), or,
/// with no fence, the text without the sentences before and after it. The other lines are
/// blanked, so a line number stays the file's. `None` when the text is not such a post (no
/// fence and no sentence around it) or nothing would be left.
///
/// Asked only where the text as a whole reads as nothing (no kind, no job text) or where a
/// fenced block is one document a kind reads whole ([`EvidenceKind::whole_text`]): prose lines
/// that do carry facts (a GPU named in a sentence) are never taken from a text that is read.
pub fn pasted_document(text: &str) -> Option<String> {
    if text.len() > SEGMENT_MAX {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut keep = vec![false; lines.len()];
    if lines.iter().any(|l| is_fence(l)) {
        let mut open: Option<(char, usize)> = None;
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            let run = |c: char| t.chars().take_while(|&x| x == c).count();
            match open {
                None if is_fence(l) => {
                    let c = t.chars().next().unwrap_or('`');
                    open = Some((c, run(c)));
                }
                Some((c, n)) if run(c) >= n && t.trim_end().chars().all(|x| x == c) => open = None,
                Some(_) => keep[i] = true,
                None => {}
            }
        }
    } else {
        let bs = blocks(&lines);
        let sentence = |&(a, b): &(usize, usize)| {
            let t = text_of(&lines, &[(a, b)]);
            detect(&t).is_none() && is_sentence_block(&t)
        };
        let first = bs.iter().position(|b| !sentence(b))?;
        let last = bs.iter().rposition(|b| !sentence(b))?;
        if first == 0 && last + 1 == bs.len() {
            return None;
        }
        for k in keep.iter_mut().take(bs[last].1 + 1).skip(bs[first].0) {
            *k = true;
        }
    }
    if !keep.iter().any(|&k| k) || keep.iter().all(|&k| k) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for (l, k) in lines.iter().zip(&keep) {
        if *k {
            out.push_str(l);
        }
        out.push('\n');
    }
    (!out.trim().is_empty()).then_some(out)
}

/// The job text a pasted file holds, and what it is: the text itself, or where a post around
/// it keeps [`crate::formats::job_text::detect`] from it (a question above a pasted log, a
/// fenced config), the text the post pastes ([`pasted_document`]: its other lines blanked, so
/// line numbers stay the file's). Every reader of `--evidence` job text asks this.
///
/// A structured config the post pastes is read as one even where the post as a whole reads as
/// a log (its sentences are no YAML): a config's parse is the stronger evidence; a log that
/// shows what a log reader reads stays one.
pub fn job_text_in_paste(text: &str) -> Option<(JobText, Cow<'_, str>)> {
    use crate::formats::job_text::{detect, log_shows_its_own};
    let whole = detect(text);
    if matches!(whole, Some(JobText::Config(_)) | Some(JobText::Python))
        || (whole == Some(JobText::Log) && log_shows_its_own(text))
    {
        return whole.map(|k| (k, Cow::Borrowed(text)));
    }
    let doc = pasted_document(text).and_then(|d| detect(&d).map(|k| (k, d)));
    match (whole, doc) {
        // a paste that is Python, with sentences around it that read as a log's lines (a log
        // that showed its own job was taken above): the paste, as the text alone is read
        (_, Some((k @ JobText::Config(_), d)))
        | (Some(JobText::Log), Some((k @ JobText::Python, d)))
        | (None, Some((k, d))) => Some((k, Cow::Owned(d))),
        (Some(k), _) => Some((k, Cow::Borrowed(text))),
        (None, None) => None,
    }
}

/// The lines of a paste that no kind read, the others blanked (line numbers stay the file's):
/// where the paste as a whole is no job text (a traceback pasted above an `nvidia-smi` table),
/// what is left once the kinds took their parts may be ([`job_text_in_paste`] of it). `None`
/// where no kind read a part, or every line was read, or the text is too big to cut
/// ([`SEGMENT_MAX`]: a log, not a paste of several outputs).
pub fn unread_lines(text: &str) -> Option<String> {
    if text.len() > SEGMENT_MAX {
        return None;
    }
    let r = segment(text);
    if r.parts.is_empty() || r.unread.is_empty() {
        return None;
    }
    // `unread` is 1-based, sorted and merged: one pass over the lines and the ranges together
    // (a paste alternating read and unread lines holds as many ranges as lines)
    let mut ranges = r.unread.iter().peekable();
    let mut out = String::with_capacity(text.len());
    for (n, l) in text.lines().enumerate() {
        let line = n + 1;
        while ranges.next_if(|&&(_, b)| b < line).is_some() {}
        if ranges.peek().is_some_and(|&&(a, _)| a <= line) {
            out.push_str(l);
        }
        out.push('\n');
    }
    Some(out)
}

/// A line that is only a markdown image or link (`![alt](url)`, `[name](url)`) or an HTML
/// `<img …>` tag: what GitHub's editor inserts for an attached screenshot or file.
fn is_attachment(t: &str) -> bool {
    static ATTACHMENT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:!?\[[^\]]*\]\([^)\s]+\)\s*)+$|^<img\s[^>]*>$").expect("static regex")
    });
    ATTACHMENT.is_match(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sglang's `check_env` prints `NVIDIA Topology:` and the `topo -m` matrix right under its
    /// own lines: its versions are read as its kind's, the matrix as a matrix, with or without
    /// a blank line between (corpus h126, sglang#8336; h24, sglang#18943, has no matrix).
    #[test]
    fn a_check_env_and_the_matrix_under_it_are_two_outputs() {
        let t = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/h126_checkenv_sglang8336_h200_mtp_ima.txt"),
        )
        .unwrap();
        let kinds = |t: &str| -> Vec<String> {
            segment(t)
                .parts
                .iter()
                .map(|p| p.kind.name().to_string())
                .collect()
        };
        assert_eq!(kinds(&t), ["cuda-version", "nvidia-smi-topo"]);
        let spaced = t.replacen("NVIDIA Topology: \n", "NVIDIA Topology: \n\n", 1);
        assert_eq!(kinds(&spaced), ["cuda-version", "nvidia-smi-topo"]);
        // a matrix's rows are no column heads
        assert!(is_topo_head("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity"));
        assert!(is_topo_head("        GPU0    NIC0    CPU Affinity"));
        assert!(!is_topo_head("GPU0\t X \tNV12\tSYS\t0-31\t0"));
        assert!(!is_topo_head("GPU0: NVIDIA H200"));
    }

    /// The lines left unread, each where it stood, in one pass over lines and ranges (a
    /// paste alternating read and unread blocks holds a range per block).
    #[test]
    fn unread_lines_keep_their_places() {
        let table = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/evidence/mixed_h200/table.txt"),
        )
        .unwrap();
        let mut t = String::new();
        for i in 0..20 {
            t.push_str(&format!("\nrun {i} of the loop, then:\n\n{table}"));
        }
        let r = segment(&t);
        let u = unread_lines(&t).expect("some lines read, some not");
        assert_eq!(u.lines().count(), t.lines().count());
        for (n, (kept, orig)) in u.lines().zip(t.lines()).enumerate() {
            let unread = r.unread.iter().any(|&(a, b)| (a..=b).contains(&(n + 1)));
            assert_eq!(kept, if unread { orig } else { "" }, "line {}", n + 1);
        }
    }

    /// What a post pastes: its fences' contents, or what its sentences surround; the rest
    /// blanked so that line numbers stay the file's.
    #[test]
    fn a_post_s_paste_is_its_fences_or_what_its_sentences_surround() {
        // github.com/facebookresearch/detectron2/issues/384: the error line alone, with the
        // question around it as an issue has it
        let post = "Hi, training stops with this:\n\nRuntimeError: DataLoader worker (pid(s) 25) exited unexpectedly\n\nThanks in advance.\n";
        assert_eq!(
            pasted_document(post).as_deref(),
            Some("\n\nRuntimeError: DataLoader worker (pid(s) 25) exited unexpectedly\n\n\n")
        );
        // fences: backticks or tildes, a longer run closes only on as long a run, an unclosed
        // one runs to the end
        let fenced = "see:\n````yaml\na: 1\n```\nb: 2\n````\nthen\n~~~\nc: 3\n";
        assert_eq!(
            pasted_document(fenced).as_deref(),
            Some("\n\na: 1\n```\nb: 2\n\n\n\nc: 3\n")
        );
        // not a post: output alone, or a config whose last block is keys, not a sentence
        assert_eq!(
            pasted_document("GPU 0: NVIDIA A100\nGPU 1: NVIDIA A100\n"),
            None
        );
        assert_eq!(
            pasted_document("Our config:\n\ntrain:\n  num_workers: 2\n\nvolumes:\n  data:\n"),
            None,
            "a leading line ending in `:` is a key, so nothing is taken off"
        );
        let commented = "Here is the config we train with, nothing changed:\n\ntask: detect # (str) YOLO task, i.e. detect, segment, classify\nworkers: 8 # (int) number of worker threads for data loading\n";
        assert_eq!(
            pasted_document(commented).as_deref(),
            Some(
                "\n\ntask: detect # (str) YOLO task, i.e. detect, segment, classify\nworkers: 8 # (int) number of worker threads for data loading\n"
            ),
            "a commented YAML line is no sentence"
        );
        // a warning a program printed is not the poster's sentence
        let warned = "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py:478: UserWarning: This DataLoader will create 32 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create.\n\nDocs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html\n";
        assert_eq!(pasted_document(warned), None);
        // a compose file in a fence keeps its anchors: read whole, `ipc: host` merged into
        // the service (github.com/open-edge-platform/physical-ai-studio, as h22's artifact)
        let compose = "x-common: &common\n  restart: unless-stopped\n\n  ipc: host\n\nservices:\n  trainer:\n    <<: *common\n    image: trainer:latest\n    command: python train.py\n";
        let post =
            format!("Our compose file:\n\n```yaml\n{compose}```\n\nIs /dev/shm large enough?\n");
        let r = segment(&post);
        assert_eq!(kinds(&r), vec!["container-spec"]);
        assert_eq!(r.parts[0].lines, vec![(4, 13)]);
        assert_eq!(r.parts[0].text.trim(), compose.trim());
    }

    /// Every fixture text, pasted in a post (a sentence above and below it, or in a fence, or
    /// both), is read as the text alone is: by the same kinds, and as the same job text.
    #[test]
    fn every_fixture_text_reads_the_same_inside_a_post() {
        type Wrap = fn(&str) -> String;
        let posts: [(&str, Wrap); 3] = [
            ("sentences", |t| {
                format!("Hi, I get this when training:\n\n{t}\nAny idea what is wrong? Thanks!\n")
            }),
            ("fence", |t| format!("```\n{t}```\n")),
            ("both", |t| {
                format!("I see the following output:\n\n```text\n{t}```\n\nThanks in advance.\n")
            }),
        ];
        // the kinds a text is read as, and the job text it is where no kind reads it
        let reading = |t: &str| {
            let r = segment(t);
            let mut v: Vec<&str> = r.parts.iter().map(|p| p.kind.name()).collect();
            v.sort_unstable();
            v.dedup();
            let job = if r.parts.is_empty() {
                job_text_in_paste(t).map(|(k, _)| k)
            } else {
                None
            };
            (v, job)
        };
        let (mut texts, mut fails) = (0, Vec::new());
        for (path, t) in crate::evidence::testutil::every_fixture_text() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // a post pastes a few screens, not a whole log
            if name.ends_with(".label.yaml")
                || name.ends_with(".md")
                || t.trim().is_empty()
                || t.len() > 16 << 10
            {
                continue;
            }
            let t = crate::vocab::paste::unwrap(t);
            if t.lines().any(is_fence) {
                continue;
            }
            let t = if t.ends_with('\n') {
                t
            } else {
                format!("{t}\n")
            };
            texts += 1;
            let (kinds, job) = reading(&t);
            for (post, wrap) in posts {
                let (got, got_job) = reading(&wrap(&t));
                // (a post may read more: a fence cuts a text into blocks its head alone
                // would not)
                if !kinds.iter().all(|k| got.contains(k)) || got_job != job {
                    fails.push(format!(
                        "{name} in {post}: {kinds:?}/{job:?} -> {got:?}/{got_job:?}"
                    ));
                }
            }
        }
        assert!(texts > 1000, "{texts}");
        assert!(fails.is_empty(), "{}", fails.join("\n"));
    }

    use crate::test_corpus as corpus;

    fn kinds(r: &Reading) -> Vec<&'static str> {
        r.parts.iter().map(|p| p.kind.name()).collect()
    }

    #[test]
    fn a_docker_run_wrapper_is_read_with_the_assignments_above_it() {
        // github.com/azavea/raster-vision docker/run before and after PR #1077 (--ipc=host)
        for (name, how) in [
            ("h40_dockerrun_rastervision1077_no_shm.sh", "default"),
            ("h40_dockerrun_rastervision1077_ipc_host.sh", "ipc-host"),
        ] {
            let t = corpus(name);
            let r = segment(&t);
            let p = r
                .parts
                .iter()
                .find(|p| p.kind.name() == "container-spec")
                .expect("a container spec");
            assert_eq!(
                p.lines,
                [(108, 116)],
                "{name}: only its own lines are claimed"
            );
            assert!(p.text.contains("IMAGE=\"raster-vision-pytorch\"\n"));
            assert!(
                !p.text.contains("function usage()"),
                "other lines are left out"
            );
            let v = p.kind.parse(&p.text).expect("read");
            let c = &v["specs"][0]["containers"][0];
            assert_eq!(c["image"], "raster-vision-pytorch", "{name}");
            assert_eq!(c["shm"]["how"], how, "{name}");
        }
        assert!(is_shell_assignment("        RUNTIME=$runtime"));
        assert!(is_shell_assignment("export NCCL_IB_DISABLE=1"));
        assert!(!is_shell_assignment("    docker run --rm -e A=1 img"));
        assert!(!is_shell_assignment("X=\"two"));
        assert!(!is_shell_assignment("1X=2"));
        // an env file above a compose file is not put in front of the YAML (written for this
        // test; the compose service is docs.docker.com's `shm_size` example)
        let t = "FOO=bar\n\nservices:\n  app:\n    image: pytorch/pytorch\n    shm_size: 2gb\n";
        let r = segment(t);
        let p = r
            .parts
            .iter()
            .find(|p| p.kind.name() == "container-spec")
            .expect("a container spec");
        assert!(!p.text.contains("FOO=bar"));
    }

    /// A shared text is cut once and read the same way every time it is asked for: parts,
    /// their lines and texts, and the lines left unread, as [`segment`] gives them.
    #[test]
    fn a_shared_text_reads_as_segment_reads_it() {
        let table = corpus("h2_smi_table_k80_python_10g_0pct.txt");
        let oom = corpus("h2_oom_6g_2_30g_unallocated.txt");
        let text = std::sync::Arc::new(format!("some words\n\n$ nvidia-smi\n{table}\n{oom}"));
        let plain = segment(&text);
        let view = |r: &Reading| {
            let parts: Vec<_> = r
                .parts
                .iter()
                .map(|p| (p.kind.name(), p.lines.clone(), p.text.to_string()))
                .collect();
            (parts, r.unread.clone())
        };
        for _ in 0..2 {
            assert_eq!(view(&segment_shared(&text)), view(&plain));
        }
        // another text with the same bytes is another entry, read the same
        let twin = std::sync::Arc::new(text.as_str().to_string());
        assert_eq!(view(&segment_shared(&twin)), view(&plain));
    }

    /// A paste of three outputs one after the other, each a public artifact of the corpus:
    /// the table of https://github.com/NVIDIA/nvidia-container-runtime/issues/17, the dmon
    /// samples of https://github.com/NVIDIA/gpu-monitoring-tools/issues/12 and the OOM message
    /// of https://github.com/carolchenyx/MGFN./issues/35. Each is read, by its own reader.
    #[test]
    fn three_concatenated_kinds_are_each_read_in_full() {
        let table = corpus("h2_smi_table_k80_python_10g_0pct.txt");
        let dmon = corpus("dmon_idle_header.txt");
        let oom = corpus("h2_oom_6g_2_30g_unallocated.txt");
        let paste = format!("$ nvidia-smi\n{table}\n$ nvidia-smi dmon\n{dmon}\n{oom}");
        let r = segment(&paste);
        assert_eq!(
            kinds(&r),
            ["nvidia-smi-table", "nvidia-smi-dmon", "torch-memory"],
            "{}",
            r.describe()
        );
        let part = |k: &str| r.parts.iter().find(|p| p.kind.name() == k).unwrap();
        // each part read as its reader reads the output alone
        for (k, alone) in [("nvidia-smi-table", &table), ("nvidia-smi-dmon", &dmon)] {
            let kind = crate::evidence::find(k).unwrap();
            assert_eq!(kind.parse(&part(k).text), kind.parse(alone), "{k}");
        }
        let mem = part("torch-memory")
            .kind
            .parse(&part("torch-memory").text)
            .unwrap();
        assert_eq!(mem["oom"], true);
        assert!(
            mem["reserved_unallocated_mib"].as_f64().unwrap() > 2000.0,
            "{mem}"
        );
        // nothing but the prompts is left unread
        let n = paste.lines().count();
        let prompt_lines: Vec<usize> = paste
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("$ "))
            .map(|(i, _)| i + 1)
            .collect();
        for (a, b) in &r.unread {
            for l in *a..=*b {
                assert!(
                    prompt_lines.contains(&l),
                    "line {l} of {n} unread: {}",
                    r.describe()
                );
            }
        }
    }

    /// Prose around a table with an error under it, as a chat message or an issue holds them:
    /// the poster's words of https://github.com/NVIDIA/gpu-monitoring-tools/issues/12, the
    /// table of https://github.com/NVIDIA/nvidia-container-runtime/issues/17, the OOM of
    /// https://github.com/carolchenyx/MGFN./issues/35.
    #[test]
    fn prose_a_table_and_an_error_are_read_and_the_prose_is_named_unread() {
        let prose = "In the dmon example, memory utilization and GPU utilization are calculated. For example, in the following example, memory utilization is 1%, but how is this value defined? Is it the percentage of bandwidth used during the last second ? And is there any reference document?";
        let table = corpus("h2_smi_table_k80_python_10g_0pct.txt");
        let oom = corpus("h2_oom_6g_2_30g_unallocated.txt");
        let paste =
            format!("{prose}\n\n```\n{table}```\n\nthen it died with\n\n{oom}\nany idea?\n");
        let r = segment(&paste);
        assert_eq!(
            kinds(&r),
            ["nvidia-smi-table", "torch-memory"],
            "{}",
            r.describe()
        );
        let t = crate::evidence::find("nvidia-smi-table").unwrap();
        assert_eq!(t.parse(&r.parts[0].text), t.parse(&table));
        // the table's lines, exactly: the prose and the fence are not in it
        let first = paste.lines().position(|l| l.starts_with("+---")).unwrap() + 1;
        assert_eq!(r.parts[0].lines[0].0, first, "{}", r.describe());
        assert!(r.unread.iter().any(|(a, _)| *a == 1), "{}", r.describe());
        assert!(r.describe().contains("not read"), "{}", r.describe());
    }

    /// Prose, a table and a warning, as an issue holds them: the poster's words of
    /// https://github.com/NVIDIA/gpu-monitoring-tools/issues/12, the table of
    /// https://github.com/NVIDIA/nvidia-container-runtime/issues/17 and PyTorch's CUDA-init
    /// warning of https://github.com/weaviate/Verba/issues/72, each read by its own reader.
    #[test]
    fn prose_a_table_and_a_warning_are_each_read() {
        let prose = "In the dmon example, memory utilization and GPU utilization are calculated.";
        let table = corpus("h2_smi_table_k80_python_10g_0pct.txt");
        let warning = corpus("h7_cudainit_verba_found_11040_driver470.txt");
        let paste = format!("{prose}\n\n{table}\nand python says\n{warning}");
        let r = segment(&paste);
        let k = kinds(&r);
        assert_eq!(k[0], "nvidia-smi-table", "{}", r.describe());
        assert_eq!(k.len(), 2, "{}", r.describe());
        let t = crate::evidence::find("nvidia-smi-table").unwrap();
        assert_eq!(t.parse(&r.parts[0].text), t.parse(&table));
        let w = r.parts[1].kind.parse(&r.parts[1].text).unwrap();
        assert!(w.to_string().contains("11040"), "{w}");
        assert!(r.unread.iter().any(|(a, _)| *a == 1), "{}", r.describe());
    }

    /// A log too big to cut block by block is still read where it shows something: the
    /// environment it echoed at the top (the collect_env of
    /// https://github.com/lhotse-speech/lhotse/issues/793), an OOM in the middle of millions of
    /// progress lines (https://github.com/carolchenyx/MGFN./issues/35) and a table pasted at its
    /// end (https://github.com/NVIDIA/nvidia-container-runtime/issues/17). The progress lines
    /// between them are made here, a trainer's loss dict repeated past [`SEGMENT_MAX`].
    #[test]
    fn a_log_too_big_to_cut_is_read_at_its_markers_and_both_ends() {
        let env = corpus("h12_collectenv_lhotse793_driver9010_cu102.txt");
        let oom = corpus("h2_oom_6g_2_30g_unallocated.txt");
        let table = corpus("h2_smi_table_k80_python_10g_0pct.txt");
        let progress = |n: usize| -> String {
            (0..n)
                .map(|i| format!("{{'loss': 0.{i:04}, 'learning_rate': 1e-05, 'epoch': 0.01}}\n"))
                .collect()
        };
        let before = progress(40_000);
        let after = progress(40_000);
        let paste = format!("{env}\n{before}{oom}\n{after}\n{table}");
        assert!(paste.len() > SEGMENT_MAX, "{}", paste.len());
        let r = segment(&paste);
        let names = kinds(&r);
        for k in ["cuda-runtime-log", "torch-memory", "nvidia-smi-table"] {
            assert!(names.contains(&k), "{k}: {}", r.describe());
        }
        let part = |k: &str| r.parts.iter().find(|p| p.kind.name() == k).unwrap();
        // the OOM's lines, numbered as in the whole paste
        let oom_first = env.lines().count() + 1 + before.lines().count() + 1;
        let mem = &part("torch-memory").lines;
        assert!(
            mem.iter()
                .all(|&(a, b)| a >= oom_first && b < oom_first + oom.lines().count()),
            "{mem:?} not within the OOM's lines from {oom_first}"
        );
        let m = part("torch-memory")
            .kind
            .parse(&part("torch-memory").text)
            .unwrap();
        assert_eq!(m["oom"], true, "{m}");
        // the table at the end, read from its own lines as it reads alone
        let t = part("nvidia-smi-table");
        let n = paste.lines().count();
        assert!(
            t.lines
                .iter()
                .all(|&(a, b)| a > n - table.lines().count() - 1 && b <= n),
            "{:?} of {n}",
            t.lines
        );
        let kind = crate::evidence::find("nvidia-smi-table").unwrap();
        assert_eq!(kind.parse(&t.text), kind.parse(&table));
        // without the OOM and the table, the progress lines alone are no kind
        assert!(
            segment(&format!("{before}{after}{before}"))
                .parts
                .is_empty()
        );
    }

    /// Every line of the fixtures and the corpus that a kind's marker accepts holds one of the
    /// phrases the kind names for it: a big text searched for the phrases finds the lines that
    /// testing every line finds. A marker widened without its phrases fails here.
    #[test]
    fn marker_phrases_are_held_by_every_marker_line() {
        let kinds: Vec<_> = KINDS.iter().copied().filter(|k| k.has_markers()).collect();
        assert!(
            kinds.iter().all(|k| !k.marker_phrases().is_empty()),
            "a marker kind without phrases is never found in a big text: name them"
        );
        let (mut files, mut lines) = (0, 0);
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            files += 1;
            let t = crate::vocab::paste::unwrap(t);
            for l in t.lines() {
                for k in &kinds {
                    if k.marker(l) {
                        lines += 1;
                        assert!(
                            k.marker_phrases().iter().any(|ph| l.contains(ph)),
                            "{} accepts a line of {} holding none of its phrases: {l}",
                            k.name(),
                            p.display()
                        );
                    }
                }
            }
        }
        assert!(files > 1000 && lines > 1000, "{files} files, {lines} lines");
    }

    /// A big text's marker lines, found by one search for every marker kind's phrases at once,
    /// are each kind's lines exactly: every fixture and corpus text put together (past
    /// [`SEGMENT_MAX`]), each kind's ranges against its marker asked of every line. A line
    /// holding two kinds' phrases (an NCCL WARN that relays a CUDA OOM) is each kind's.
    #[test]
    fn one_search_for_every_kind_finds_each_kinds_lines() {
        let mut t = String::new();
        for (_, x) in crate::evidence::testutil::every_fixture_text() {
            t.push_str(&crate::vocab::paste::unwrap(x));
            if !t.ends_with('\n') {
                t.push('\n');
            }
        }
        t.push_str("node1:7:7 [0] NCCL WARN Cuda failure 'out of memory' torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
        while t.len() <= SEGMENT_MAX {
            t.push_str("step 1 loss 0.5\r\n");
        }
        let r = segment_big(&t, None);
        let mut checked = 0;
        for k in KINDS.iter().filter(|k| k.has_markers()) {
            let mut want: Spans = Vec::new();
            for (n, l) in t.lines().enumerate() {
                if k.marker(l) {
                    let full = want.len() >= MAX_MARKER_RANGES;
                    match want.last_mut() {
                        Some(last) if last.1 + 1 == n + 1 || full => last.1 = n + 1,
                        _ => want.push((n + 1, n + 1)),
                    }
                }
            }
            let got: Vec<(usize, usize)> = r
                .parts
                .iter()
                .filter(|p| p.kind.name() == k.name())
                .flat_map(|p| p.lines.clone())
                .collect();
            assert_eq!(got, want, "{}", k.name());
            checked += usize::from(!want.is_empty());
        }
        assert!(
            checked >= 6,
            "only {checked} marker kinds have lines in the fixtures"
        );
    }

    /// The search for phrases numbers lines as counting them does: a text over [`SEGMENT_MAX`]
    /// with marker lines of several kinds at known places, CRLF and LF mixed.
    #[test]
    fn a_big_text_numbers_its_marker_lines_exactly() {
        let filler = "step 1 loss 0.5 epoch 0.01 lr 1e-05 throughput 12.3 samples/s\r\n";
        let marks = [
            (
                2_000usize,
                "node1:77:77 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            ),
            (
                2_001,
                "node1:77:77 [0] NCCL INFO NET/Plugin : No plugin found",
            ),
            (
                40_000,
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
            ),
            (
                70_001,
                "[12.3] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
            ),
        ];
        let mut t = String::new();
        let mut n = 1;
        for &(at, line) in &marks {
            while n < at {
                t.push_str(filler);
                n += 1;
            }
            t.push_str(line);
            t.push('\n');
            n += 1;
        }
        while t.len() <= SEGMENT_MAX {
            t.push_str(filler);
        }
        let r = segment(&t);
        let lines = |k: &str| {
            r.parts
                .iter()
                .find(|p| p.kind.name() == k)
                .map(|p| p.lines.clone())
                .unwrap_or_default()
        };
        assert_eq!(lines("nccl-log"), [(2_000, 2_001)], "{}", r.describe());
        assert_eq!(
            lines("torch-memory"),
            [(40_000, 40_000)],
            "{}",
            r.describe()
        );
        assert_eq!(lines("kernel-log"), [(70_001, 70_001)], "{}", r.describe());
    }

    /// The same for a text under [`SEGMENT_MAX`] cut into more than [`MAX_BLOCKS`] blocks (a
    /// log with a blank line after every step).
    #[test]
    fn a_text_of_too_many_blocks_is_read_at_its_markers() {
        let oom = corpus("h2_oom_6g_2_30g_unallocated.txt");
        let steps: String = (0..MAX_BLOCKS + 10)
            .map(|i| format!("step {i} loss 0.5\n\n"))
            .collect();
        let paste = format!("{steps}{oom}\n{steps}");
        assert!(paste.len() < SEGMENT_MAX);
        let r = segment(&paste);
        assert_eq!(kinds(&r), ["torch-memory"], "{}", r.describe());
    }

    #[test]
    fn text_no_kind_reads_names_the_nearest_kind_and_line() {
        let t = "hello\nmy GPU utilization is low, the dataloader seems slow\n";
        let r = segment(t);
        assert!(r.parts.is_empty());
        let (k, n, line) = nearest(t).unwrap();
        assert_eq!(n, 2, "{}", k.name());
        assert!(line.contains("utilization"));
        assert!(nearest("hello world\n").is_none());
    }

    #[test]
    fn line_count_is_the_count_of_lines() {
        for t in ["", "\n", "a", "a\n", "a\nb", "a\r\nb\r\n", "\n\n", "a\r"] {
            assert_eq!(line_count(t), t.lines().count(), "{t:?}");
        }
    }

    #[test]
    fn a_single_kind_is_one_part_as_before() {
        let table = corpus("h2_smi_table_k80_python_10g_0pct.txt");
        let r = segment(&table);
        assert_eq!(kinds(&r), ["nvidia-smi-table"]);
        // every line but the blank one between the GPUs and the processes
        let n = table.lines().count();
        let blank: Vec<usize> = table
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim().is_empty())
            .map(|(i, _)| i + 1)
            .collect();
        assert!(r.unread.is_empty(), "{}", r.describe());
        let covered: usize = r.parts[0].lines.iter().map(|(a, b)| b - a + 1).sum();
        assert_eq!(covered + blank.len(), n, "{}", r.describe());
    }
    #[test]
    fn posts_read_as_prose_and_output_does_not() {
        // github.com/facebookresearch/svoice/issues/60, github.com/greatlog/UnpairedSR/issues/17,
        // github.com/facebookresearch/maskrcnn-benchmark/issues/1072 (whole issue bodies)
        for post in [
            "Hello,\nIn order to support sm_86 we need to install pytorch1.90, but it breaks svoice. Is there a plan to upgrade?\n\nThanks,\nArik",
            "请问作者是否有遇到过这个问题：共享内存不足。\n我已经进行了以下尝试：\n（1）num_worker设置为0\n仍然报错，显示Bus error\n",
            "## ❓ Questions and Help\nI have implemented `ssd-512` and some segmentation models based on `maskrcnn-benchmark`. When the single gpu batch size is large like 16, the `GPU-Util` always drops to 60% and in some bad case even drops to 0%.",
        ] {
            assert!(is_prose(post), "{post}");
        }
        // a sentence cut by a pasted screenshot (github.com/jwyang/faster-rcnn.pytorch/issues/770),
        // a question beside an `<img>` tag (github.com/verl-project/verl/issues/407), and
        // contractions and `GPU-Util` among the words (github.com/google-research/noisystudent/
        // issues/5): whole issue bodies, tests/fixtures/corpus/h18_post_*
        for name in [
            "h18_post_fasterrcnn770_util0_image_only.md",
            "h18_post_verl407_ecc_screenshot_zh.md",
            "h18_post_noisystudent5_util0_prose.md",
            "h18_post_ogkm888_fallen_off_bus_template_no_log.md",
        ] {
            assert!(is_prose(&corpus(name)), "{name}");
        }
        // an issue body whose environment list is written in Markdown's bold labels
        // (github.com/NVIDIA/nccl/issues/2186, 2026-05-20, h152's corpus text: the list is
        // mostly versions and names, the markup is the poster's)
        assert!(is_prose(&corpus(
            "h152_issue_nccl2186_gb200_mnnvl_healthmask_0xaa_sigsegv.txt"
        )));
        // attachments alone are no prose; nor is a log line of hyphenated identifiers
        for out in [
            "![image](https://user-images.githubusercontent.com/1/2.png)\n<img width=\"977\" alt=\"Image\" src=\"https://github.com/user-attachments/assets/3\" />\n",
            "[nvidia-bug-report.log.gz](https://github.com/user-attachments/files/20856576/nvidia-bug-report.log.gz)\n",
            "ip-172-31-12-21:45361:45361 [0] NCCL INFO NET/IB : No device found.\nip-172-31-12-210:45305:45305 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.12.210<0>\n",
        ] {
            assert!(!is_prose(out), "{out}");
        }
        // output: an nvidia-smi banner (github.com/lllyasviel/Fooocus/issues/1313), a
        // traceback (github.com/msr-fiddle/pipedream/issues/28), a df line
        for out in [
            "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 470.86       Driver Version: 470.86       CUDA Version: 11.4\n|-------------------------------+----------------------+----------------------+\n",
            "Epoch 0: 6843.771 seconds\nEpoch start time: 1577064742.170, epoch end time: 1577071585.941\n  File \"/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 480, in _try_get_batch\n    data = self.data_queue.get(timeout=timeout)\n",
            "shm  1.0G  883M  142M  87% /dev/shm\n",
            "",
        ] {
            assert!(!is_prose(out), "{out}");
        }
    }

    #[test]
    fn strong_emphasis_is_markup_not_output() {
        // the spans posts write (github.com/NVIDIA/nccl/issues/2186's environment list,
        // github.com/vllm-project/vllm/issues/57822's paragraph heads)
        for t in [
            "**Driver**: 580.126.09 (R580)",
            "**torch**: 2.10.0+cu129",
            "**Hardware ruled out.** The GPU logged zero Xid events",
            "NCCL crashes with **SIGSEGV** during `ncclCommInitRank`",
            "**x**",
        ] {
            assert!(strong_emphasis(t), "{t}");
        }
        // output that carries `*` or `_` runs: a traceback's `**kwargs`, a keyword-only
        // signature, a power, dunder names, a bare `**` rule, a glob, a run closed after a space
        for out in [
            "    return func(*args, **kwargs)",
            "def f(**a, **b):",
            "x = 2**10 * 3**2",
            "  File \"/usr/lib/python3.10/runpy.py\", line 196, in _run_module_as_main __main__",
            "module.__init__(self) calls super().__init__()",
            "**",
            "ls /data/**/*.png",
            "** WARNING ** disk almost full",
            "",
        ] {
            assert!(!strong_emphasis(out), "{out}");
        }
        // the environment list alone is the poster's writing; the same values as a program's
        // `key: value` output are not
        let list = "- **Hardware**: GB200 NVL72\n- **Driver**: 580.126.09 (R580)\n- **CUDA**: 12.9\n- **torch**: 2.10.0+cu129\n";
        assert!(is_prose(list));
        // a span that opens the line is read before the list markers are taken off (they
        // would take its `**` too)
        assert!(is_prose(
            "**Driver**: 580.126.09 (R580)\n**CUDA**: 12.9 (13.0)\n"
        ));
        assert!(!is_prose(
            "Driver: 580.126.09 (R580)\nCUDA: 12.9\ntorch: 2.10.0+cu129\n"
        ));
    }

    #[test]
    fn a_table_a_page_rendered_is_no_output() {
        // h145: dev.to's "DDP Is Not Always Faster", its Markdown table as the stored copy
        // renders it (the cells run together)
        let t = corpus("h145_forum_devto_ddp_two_t4_step_times.txt");
        assert!(!is_prose(&t));
        assert!(is_rendered_table(&t));
        assert!(is_rendered_table(
            "Method Time\nDirect tensor indexing 0.39s\nDataLoader with shuffle 48.49s\nDataLoader with workers 43.29s\n"
        ));
        // output and logs are not: key: value lines, a df row, a log's epoch lines, an
        // nvidia-smi row, iostat rows, two rows only
        for out in [
            "Fan Speed : 30 %\nPower Draw : 55.00 W\nGPU Current Temp : 40 C\n",
            "shm  1.0G  883M  142M  87% /dev/shm\nudev 16G 0 16G 0% /dev\ntmpfs 3.2G 2.1M 3.2G 1% /run\n",
            "Epoch 0: 6843.771 seconds\nEpoch 1: 6840.100 seconds\nEpoch 2: 6839.000 seconds\n",
            "sda 382.50 9.45 14.50\nsdb 1.00 0.10 0.00\nsdc 0.00 0.00 0.00\n",
            "|   0  GeForce RTX 3090    On   | 00000000:81:00.0 Off |                  N/A |\n",
            "Single GPU step time 22.03ms\nDDP step time 26.36ms\n",
            "loss went down to 0.5\nthen it went up to 0.9\nand stayed at 0.9 for hours and hours again\n",
        ] {
            assert!(!is_rendered_table(out), "{out}");
        }
    }

    #[test]
    fn a_table_a_page_rendered_cell_by_cell_is_no_output() {
        // h155: forums.fast.ai/t/43408, the poster's epoch times on one and two GPUs by batch
        // size, its <table> as the stored copy renders it (innerText: cells between tabs, a
        // header cell spanning two columns leaving empty ones, mm:ss durations)
        let t = corpus("h155_table_fastai43408_cifar_1gpu_2gpu_epoch_time_by_bs.txt");
        assert!(!is_prose(&t));
        assert!(is_rendered_table(&t));
        // a label column and a percentage
        assert!(is_rendered_table(
            "Setting\tStep (ms)\tGPU util\nnum_workers 0\t563.3\t7%\nnum_workers 4\t120.5\t41%\nnum_workers 8\t37.3\t67%\n"
        ));
        // output with tabs is not: nvidia-smi topo -m rows (its own kind; NV12 and CPU
        // ranges are no figures), key=value rows, a two-row table, a row of words only
        // after the figures begin, a line without a tab
        for out in [
            "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV12\t0-11\nGPU1\tNV12\t X \t0-11\n",
            "step\tloss=0.51\tlr=0.1\n1\tloss=0.50\tlr=0.1\n2\tloss=0.49\tlr=0.1\n3\tloss=0.47\tlr=0.1\n",
            "bs\t1 GPU\t2 GPU\n4\t15:17\t8:16\n8\t8:02\t4:15\n",
            "bs\t1 GPU\t2 GPU\n4\t15:17\t8:16\n8\t8:02\t4:15\nsee\tbelow\tthen\n16\t3:48\t2:06\n",
            "bs\t1 GPU\t2 GPU\n4\t15:17\t8:16\n8 8:02 4:15\n16\t3:48\t2:06\n32\t1:59\t1:07\n",
        ] {
            assert!(!is_rendered_table(out), "{out}");
        }
    }

    #[test]
    fn a_command_the_poster_quotes_is_their_writing() {
        // command lines as posts quote them: nvidia-smi's query (prismix.dev/news/43ed5251c285,
        // r/LocalLLaMA), a prompt and a pipe, a prompt word (server-gear.com/blog/post/
        // rtx3090-nvidia-smi-devicequery), assignments before the command, nccl-tests' path
        for c in [
            "nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current --format=csv",
            "$ sudo lspci -vvv | grep -i LnkSta",
            "dl@dl-machine:~$ nvidia-smi -q -d PERFORMANCE",
            "root@node1:~# ibstat -l",
            "NCCL_DEBUG=INFO NCCL_IB_DISABLE=1 torchrun --nproc_per_node 8 train.py",
            "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2",
        ] {
            assert!(is_command_line(c), "{c}");
        }
        // output lines: lspci's fields (lists.kernelnewbies.org 2016-June/016416), an NCCL
        // line, a log line's lone dash, a topo row, a table row, a command with no option
        for out in [
            "LnkSta: Speed 2.5GT/s, Width x4, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
            "ip-172-31-12-21:45361:45361 [0] NCCL INFO NET/IB : No device found.",
            "Epoch 1 - loss 0.2512 - lr 0.001",
            "GPU0 X SYS SYS SYS 24-31,88-95 3 N/A",
            "|   0  GeForce RTX 3090    On   | 00000000:81:00.0 Off |                  N/A |",
            "[  12.345678] nvidia 0000:01:00.0: -fbdev disabled",
            "nvidia-smi",
            "",
        ] {
            assert!(!is_command_line(out), "{out}");
        }
        // the post: the command, two sentences and the poster's own summary of what it printed
        // after the fix (h80_prose_prismix_localllama_4x3090_pcie_slot_fixed) reads as prose
        assert!(is_prose(&corpus(
            "h80_prose_prismix_localllama_4x3090_pcie_slot_fixed.txt"
        )));
        // commands with their output under them stay output: the B200 forum post's nccl-tests
        // command over its failure and vLLM's log (h80_nccltests_nvforum360195_b200_cuda700_vllm)
        assert!(!is_prose(&corpus(
            "h80_nccltests_nvforum360195_b200_cuda700_vllm.log"
        )));
    }
    /// CPython 3.11+'s caret lines under a frame's source line start with `~~~` but are no
    /// fence: a traceback they sit in is one block, read whole
    /// (github.com/Comfy-Org/ComfyUI/issues/14165, h135's corpus text).
    #[test]
    fn python_traceback_carets_are_no_fence() {
        assert!(is_traceback_carets(
            "    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~^^"
        ));
        assert!(is_traceback_carets("    ~~~~~~~~~~~~~~~~~~~^^"));
        assert!(is_traceback_carets("    ^^^^^^^^^^^^^^^^^^^"));
        assert!(is_traceback_carets("~~~^^~~~"));
        for fence in ["~~~", "~~~~", "  ~~~python", "~~~ yaml", "```", "````text"] {
            assert!(!is_traceback_carets(fence), "{fence}");
            assert!(is_fence(fence), "{fence}");
        }
        assert!(!is_fence("    ~~~~~~~~~~~~~~~~~~~^^"));
        assert!(!is_traceback_carets(""));
        assert!(!is_traceback_carets("    x ~ ^ y"));
        let tb = "Traceback (most recent call last):\n  File \"C:\\ComfyUI\\execution.py\", line 541, in execute\n    comfy.model_management.reset_cast_buffers()\n    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~^^\n  File \"C:\\ComfyUI\\comfy\\model_management.py\", line 1366, in reset_cast_buffers\n    offload_stream.synchronize()\n    ~~~~~~~~~~~~~~~~~~~~~~~~~~^^\ntorch.AcceleratorError: CUDA error: out of memory\n";
        let r = segment(tb);
        assert!(r.unread.is_empty(), "{:?}", r.unread);
        assert_eq!(r.parts.len(), 1);
        assert_eq!(r.parts[0].kind.name(), "cuda-runtime-log");
        assert_eq!(r.parts[0].lines, vec![(1, 8)]);
        // no fence opened by a caret line: the post's paste is its one real fence
        let post = "It fails:\n```\n  File \"x.py\", line 1, in f\n    g()\n    ~^^\nRuntimeError: CUDA error: out of memory\n```\nthanks\n";
        assert_eq!(
            pasted_document(post).as_deref(),
            Some(
                "\n\n  File \"x.py\", line 1, in f\n    g()\n    ~^^\nRuntimeError: CUDA error: out of memory\n\n\n"
            )
        );
    }
}
