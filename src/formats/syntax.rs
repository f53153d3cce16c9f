//! The two real grammars gpufix reads and edits job files with — bash (tree-sitter-bash 0.25.1,
//! <https://github.com/tree-sitter/tree-sitter-bash>, `src/grammar.js`) and Python
//! (tree-sitter-python 0.25.0, <https://github.com/tree-sitter/tree-sitter-python>) — and the
//! one check every edit of such a file passes before it is planned.
//!
//! tree-sitter keeps every byte: each node knows its byte range, so an edit is a byte range of
//! the old text and the text put there, and everything outside it is the old bytes. What the
//! check proves ([`check_edit`]): both texts parse without an error node, and every token
//! (leaf) outside the edited range is the same token in the new tree — same text, same kinds of
//! ancestors, at the same place among its siblings (counted from the start before the edit and
//! from the end after it). So an edit that would, say, merge two commands, turn an argument
//! into a command name or leave a dangling `export` is refused, not written.
//!
//! Parsing is bounded: texts over [`MAX_BYTES`] are not parsed, and a parse is cancelled after
//! [`PARSE_DEADLINE`].

use std::ops::{ControlFlow, Range};
use std::time::{Duration, Instant};
use tree_sitter::{Node, Parser, Tree};

/// Larger texts are not parsed (a launch script or training source is far smaller).
pub const MAX_BYTES: usize = 4 << 20;
/// A parse that takes longer is abandoned.
pub const PARSE_DEADLINE: Duration = Duration::from_secs(2);

/// Why an edit of a script or Python source is not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The edit asked for does not fit the file (no such call on that line, a name the shell
    /// cannot take): an error in the fix.
    #[error("{0}")]
    Invalid(String),
    /// The file sets the value, but no single exact edit of it can be proven: the fix is left
    /// to the person, with this note saying where the value is set and why.
    #[error("{0}")]
    Unproven(String),
}

/// Why a text has no tree, or why an edit of it is not proven exact. Every case leaves the
/// edit to the person ([`Refusal::Unproven`]), with this sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// Larger than [`MAX_BYTES`]: not parsed.
    #[error("{:.1} MB is more than gpufix parses as {} ({} MiB at most)", *bytes as f64 / 1e6, lang.name(), MAX_BYTES >> 20)]
    TooLarge { lang: Lang, bytes: usize },
    /// tree-sitter refused the grammar (a version mismatch: a bug).
    #[error("the {} grammar cannot be loaded: {why}", lang.name())]
    Grammar { lang: Lang, why: String },
    /// The parse ran past [`PARSE_DEADLINE`] and was cancelled.
    #[error("parsing as {} took more than {} s: abandoned", lang.name(), PARSE_DEADLINE.as_secs())]
    TooSlow { lang: Lang },
    /// The file as it is does not parse cleanly (`at`: `line N`).
    #[error("the {} grammar cannot read {at}, so no edit of this file can be proven exact", lang.name())]
    Unreadable { lang: Lang, at: String },
    /// The edited text would not parse cleanly.
    #[error("the edited text would not parse as {} ({at})", lang.name())]
    EditUnreadable { lang: Lang, at: String },
    /// A token straddles an end of the edited range (`token` as Rust escapes it).
    #[error("the edit cuts through `{token}` on line {line}")]
    CutsToken { token: String, line: usize },
    /// The tokens outside the edit would not keep their text, ancestors or place.
    #[error("the edit on line {line} would change how the rest of the file parses")]
    ChangesRest { line: usize },
}

impl From<ProofError> for Refusal {
    fn from(e: ProofError) -> Self {
        Refusal::Unproven(e.to_string())
    }
}

/// Which grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Bash,
    Python,
}

impl Lang {
    fn language(self) -> tree_sitter::Language {
        match self {
            Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Lang::Bash => "shell",
            Lang::Python => "Python",
        }
    }
}

/// Parse `src`; `Err` says why there is no tree (too large, too slow).
pub fn parse(lang: Lang, src: &str) -> Result<Tree, ProofError> {
    if src.len() > MAX_BYTES {
        return Err(ProofError::TooLarge {
            lang,
            bytes: src.len(),
        });
    }
    let mut p = Parser::new();
    p.set_language(&lang.language())
        .map_err(|e| ProofError::Grammar {
            lang,
            why: e.to_string(),
        })?;
    let start = Instant::now();
    // The parser sees every byte of a non-ASCII character as `x`: tree-sitter-bash 0.25.1's
    // external scanner passes the lookahead character to C's `isdigit` (src/scanner.c, after
    // a `{`), which reads outside its table for a code point past 255 and crashed gpufix on
    // `echo {` + U+E0000. Neither shell nor Python gives a non-ASCII character a meaning of
    // its own outside words, identifiers, strings and comments, so the tree has the same shape;
    // byte ranges are unchanged, and every text is taken from `src` itself.
    let bytes: Vec<u8> = src
        .bytes()
        .map(|b| if b.is_ascii() { b } else { b'x' })
        .collect();
    let mut read = |at: usize, _| -> &[u8] { bytes.get(at..).unwrap_or_default() };
    let mut cancel = |_: &tree_sitter::ParseState| {
        if start.elapsed() > PARSE_DEADLINE {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let opts = tree_sitter::ParseOptions::new().progress_callback(&mut cancel);
    p.parse_with_options(&mut read, None, Some(opts))
        .ok_or(ProofError::TooSlow { lang })
}

/// The 1-based line of a byte offset.
pub fn line_of(src: &str, at: usize) -> usize {
    src.as_bytes()[..at.min(src.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The first place the tree does not read: an ERROR or MISSING node, as `line N`.
pub fn first_error(tree: &Tree, src: &str) -> Option<String> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            return Some(format!("line {}", line_of(src, n.start_byte())));
        }
        if n.has_error() {
            let mut c = n.walk();
            let kids: Vec<Node> = n.children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
    }
    Some("somewhere".into())
}

/// The text of a node.
/// The parsers see non-ASCII characters as runs of `x` (see [`parse`]); on garbled input their
/// error recovery can end a node inside such a run, so the range is widened to whole characters
/// rather than cut one in two.
pub fn text<'s>(n: Node, src: &'s str) -> &'s str {
    let r = n.byte_range();
    let mut a = r.start.min(src.len());
    while !src.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = r.end.clamp(a, src.len());
    while !src.is_char_boundary(b) {
        b += 1;
    }
    &src[a..b]
}

/// Every node of the tree, depth first, in source order.
pub fn nodes(tree: &Tree) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        out.push(n);
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// One token and where it sits: its text and, from the root down, each ancestor's kind and
/// its place among its siblings.
#[derive(Debug, PartialEq, Eq)]
struct Leaf {
    text: String,
    path: Vec<(u16, usize)>,
}

/// The leaves of `tree` wholly before `range` (each ancestor placed from the start of its
/// parent) and wholly after it (placed from the end: removing or adding a sibling before it
/// does not move it); `Err` names a leaf that straddles an end of the range.
fn leaves(
    tree: &Tree,
    src: &str,
    range: &Range<usize>,
) -> Result<(Vec<Leaf>, Vec<Leaf>), ProofError> {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    // (node, its path placed from the start, from the end)
    let mut stack = vec![(tree.root_node(), Vec::new(), Vec::new())];
    while let Some((n, from_start, from_end)) = stack.pop() {
        let count = n.child_count() as usize;
        if count == 0 && from_start.is_empty() {
            // an empty file: its root is no token
            continue;
        }
        if count == 0 {
            let r = n.byte_range();
            let text = src[r.clone()].to_string();
            if r.end <= range.start && r.start < range.start {
                before.push(Leaf {
                    text,
                    path: from_start,
                });
            } else if r.start >= range.end {
                after.push(Leaf {
                    text,
                    path: from_end,
                });
            } else if r.start < range.start || r.end > range.end {
                return Err(ProofError::CutsToken {
                    token: text.escape_debug().to_string(),
                    line: line_of(src, r.start),
                });
            }
            continue;
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        for (i, k) in kids.into_iter().enumerate().rev() {
            let (mut s, mut e) = (from_start.clone(), from_end.clone());
            s.push((k.kind_id(), i));
            e.push((k.kind_id(), count - i));
            stack.push((k, s, e));
        }
    }
    Ok((before, after))
}

/// Proves that replacing `range` of `old` by `with` changes nothing but that range: both texts
/// parse cleanly and every token outside it keeps its text, its ancestors and its place. Returns
/// the new text.
pub fn check_edit(
    lang: Lang,
    old: &str,
    range: Range<usize>,
    with: &str,
) -> Result<String, ProofError> {
    let new = format!("{}{with}{}", &old[..range.start], &old[range.end..]);
    let old_tree = parse(lang, old)?;
    if let Some(at) = first_error(&old_tree, old) {
        return Err(ProofError::Unreadable { lang, at });
    }
    let new_tree = parse(lang, &new)?;
    if let Some(at) = first_error(&new_tree, &new) {
        return Err(ProofError::EditUnreadable { lang, at });
    }
    let new_range = range.start..range.start + with.len();
    let (ob, oa) = leaves(&old_tree, old, &range)?;
    let (nb, na) = leaves(&new_tree, &new, &new_range)?;
    if ob != nb || oa != na {
        let line = line_of(old, range.start);
        return Err(ProofError::ChangesRest { line });
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_of_one_token_is_proven() {
        let src = "A=1 torchrun x.py\n";
        assert_eq!(
            check_edit(Lang::Bash, src, 0..4, "").unwrap(),
            "torchrun x.py\n"
        );
        let py = "f(a, n=2, **kw)\n";
        assert_eq!(
            check_edit(Lang::Python, py, 7..8, "8").unwrap(),
            "f(a, n=8, **kw)\n"
        );
    }

    #[test]
    fn an_edit_that_changes_other_nodes_is_refused() {
        // dropping the `;` merges two commands into one
        let err = check_edit(Lang::Bash, "a x; b y\n", 3..4, "").unwrap_err();
        assert_eq!(err, ProofError::ChangesRest { line: 1 });
        assert!(err.to_string().contains("change how the rest"), "{err}");
        // dropping `export ` makes `B` a command name
        let err = check_edit(Lang::Bash, "export A=1 B\n", 0..7, "").unwrap_err();
        assert!(matches!(err, ProofError::ChangesRest { .. }), "{err:?}");
        // half a token
        let err = check_edit(Lang::Python, "f(n=12)\n", 5..6, "").unwrap_err();
        assert!(
            matches!(&err, ProofError::CutsToken { line: 1, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("cuts through"), "{err}");
        // a new syntax error
        let err = check_edit(Lang::Python, "f(n=2)\n", 4..5, "(").unwrap_err();
        assert!(matches!(err, ProofError::EditUnreadable { .. }), "{err:?}");
        assert!(err.to_string().contains("would not parse"), "{err}");
    }

    #[test]
    fn a_character_past_255_after_a_brace_does_not_crash_the_bash_scanner() {
        // tree-sitter-bash 0.25.1 read outside isdigit's table here (SIGSEGV)
        for src in [
            "echo {\u{E0000}",
            "x={\u{10FFFF}..2}\n",
            "echo {\u{1F600}é\n",
        ] {
            let t = parse(Lang::Bash, src).unwrap();
            assert_eq!(t.root_node().end_byte(), src.len());
        }
        // non-ASCII words keep their bytes: `é` is one word with what is around it
        let src = "python tráin.py --name \u{E0000}x\n";
        let words = crate::formats::launcher::split_commands(src);
        assert_eq!(words, [vec!["python", "tráin.py", "--name", "\u{E0000}x"]]);
    }

    #[test]
    fn a_file_with_a_syntax_error_is_not_edited() {
        let err = check_edit(Lang::Python, "def f(:\n  pass\nx = 1\n", 19..20, "2").unwrap_err();
        assert_eq!(
            err,
            ProofError::Unreadable {
                lang: Lang::Python,
                at: "line 1".into()
            }
        );
        assert_eq!(
            Refusal::from(err).to_string(),
            "the Python grammar cannot read line 1, so no edit of this file can be proven exact"
        );
    }
}
