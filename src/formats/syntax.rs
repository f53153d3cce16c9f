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
//! Parsing is bounded: texts over [`MAX_BYTES`] are not parsed, a parse is cancelled after
//! [`PARSE_DEADLINE`], and a tree nested deeper than [`MAX_DEPTH`] is not handed on (the readers
//! and the edit check walk trees level by level; a few hundred kilobytes of `((((…` or
//! `1+1+…+1` nest tens of thousands of levels and overflowed the stack or ran for minutes).

use std::ops::{ControlFlow, Range};
use std::time::{Duration, Instant};
use tree_sitter::{Node, Parser, Tree};

/// Larger texts are not parsed (a launch script or training source is far smaller).
pub const MAX_BYTES: usize = 4 << 20;
/// A parse that takes longer is abandoned.
pub const PARSE_DEADLINE: Duration = Duration::from_secs(2);
/// Trees nested deeper are not read. CPython itself stops well before: its tokenizer allows 200
/// nested brackets (`MAXLEVEL`, Parser/tokenizer.h) and its parser a stack of 6,000 rules
/// (`MAXSTACK`, Parser/parser.c), and the deepest launch script or training source of the
/// corpus nests 25 levels of tree-sitter nodes (`the_corpus_scripts_nest_far_below_the_limit`); bash has no such limit, but a script written
/// by a person nests a few dozen.
pub const MAX_DEPTH: usize = 1000;

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
    /// The tree nests deeper than [`MAX_DEPTH`] levels: not read.
    #[error("read as {} it nests more than {MAX_DEPTH} levels deep: not read", lang.name())]
    TooDeep { lang: Lang },
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
    let tree = p
        .parse_with_options(&mut read, None, Some(opts))
        .ok_or(ProofError::TooSlow { lang })?;
    if depth(&tree, MAX_DEPTH) > MAX_DEPTH {
        return Err(ProofError::TooDeep { lang });
    }
    Ok(tree)
}

/// How many levels below the root the deepest node of `tree` sits, counted up to `limit + 1`
/// (the walk stops there), with one cursor: no recursion, no allocation.
fn depth(tree: &Tree, limit: usize) -> usize {
    let mut c = tree.walk();
    let (mut at, mut deepest) = (0usize, 0usize);
    loop {
        if c.goto_first_child() {
            at += 1;
            deepest = deepest.max(at);
            if at > limit {
                return at;
            }
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return deepest;
            }
            at -= 1;
        }
    }
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

/// A tree's nodes, each with its kind, its place among its siblings (from the start and from
/// the end) and its parent, and its tokens (leaves) wholly before and wholly after an edited
/// range, each as its byte range and its node. A token's ancestors are its node's parent chain,
/// so the tree is kept once however deep it nests (a list of each token's ancestors grows with
/// tokens × depth: 2 MB of `1+1+…` lines would have made tens of gigabytes).
struct Skeleton {
    nodes: Vec<SkNode>,
    before: Vec<(Range<usize>, usize)>,
    after: Vec<(Range<usize>, usize)>,
}

struct SkNode {
    kind: u16,
    from_start: usize,
    from_end: usize,
    /// `None` for the root.
    parent: Option<usize>,
}

/// The skeleton of `tree` around `range`; `Err` names a token that straddles an end of it.
fn skeleton(tree: &Tree, src: &str, range: &Range<usize>) -> Result<Skeleton, ProofError> {
    let mut sk = Skeleton {
        nodes: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
    };
    let root = tree.root_node();
    sk.nodes.push(SkNode {
        kind: root.kind_id(),
        from_start: 0,
        from_end: 0,
        parent: None,
    });
    let mut stack = vec![(root, 0usize)];
    while let Some((n, at)) = stack.pop() {
        let count = n.child_count() as usize;
        if count == 0 && at == 0 {
            // an empty file: its root is no token
            continue;
        }
        if count == 0 {
            let r = n.byte_range();
            if r.end <= range.start && r.start < range.start {
                sk.before.push((r, at));
            } else if r.start >= range.end {
                sk.after.push((r, at));
            } else if r.start < range.start || r.end > range.end {
                return Err(ProofError::CutsToken {
                    token: src[r.clone()].escape_debug().to_string(),
                    line: line_of(src, r.start),
                });
            }
            continue;
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        for (i, k) in kids.into_iter().enumerate().rev() {
            sk.nodes.push(SkNode {
                kind: k.kind_id(),
                from_start: i,
                from_end: count - i,
                parent: Some(at),
            });
            stack.push((k, sk.nodes.len() - 1));
        }
    }
    Ok(sk)
}

/// Whether node `i` of `a` and node `j` of `b` have the same ancestors — same kinds, each at the
/// same place among its siblings, counted from the start or from the end — up to the root.
/// A pair found equal is kept in `same` (node `i` of `a` to node `j` of `b`), so consecutive
/// tokens, which share most ancestors, stop at the first pair already proven.
fn same_ancestry(
    a: &Skeleton,
    b: &Skeleton,
    (mut i, mut j): (usize, usize),
    from_end: bool,
    same: &mut [usize],
) -> bool {
    let mut walked = Vec::new();
    loop {
        if same[i] == j {
            break;
        }
        let (x, y) = (&a.nodes[i], &b.nodes[j]);
        let place = |n: &SkNode| if from_end { n.from_end } else { n.from_start };
        match (x.parent, y.parent) {
            (None, None) => break,
            (Some(pi), Some(pj)) if x.kind == y.kind && place(x) == place(y) => {
                walked.push((i, j));
                (i, j) = (pi, pj);
            }
            _ => return false,
        }
    }
    for (i, j) in walked {
        same[i] = j;
    }
    true
}

/// Whether every token of `a` and `b` on one side of the edit has the same text and ancestry.
fn same_tokens((a, a_src): (&Skeleton, &str), (b, b_src): (&Skeleton, &str), after: bool) -> bool {
    let (x, y) = if after {
        (&a.after, &b.after)
    } else {
        (&a.before, &b.before)
    };
    let mut same = vec![usize::MAX; a.nodes.len()];
    x.len() == y.len()
        && x.iter().zip(y).all(|((ra, na), (rb, nb))| {
            a_src[ra.clone()] == b_src[rb.clone()]
                && same_ancestry(a, b, (*na, *nb), after, &mut same)
        })
}

/// A text with an edit made, both trees read cleanly.
struct Edited {
    new: String,
    old_tree: Tree,
    new_tree: Tree,
    /// Where `with` sits in the new text.
    new_range: Range<usize>,
}

/// `old` with `range` replaced by `with`, and both texts' trees; `Err` when either does not
/// parse cleanly.
fn edited(lang: Lang, old: &str, range: &Range<usize>, with: &str) -> Result<Edited, ProofError> {
    let new = format!("{}{with}{}", &old[..range.start], &old[range.end..]);
    let old_tree = parse(lang, old)?;
    if let Some(at) = first_error(&old_tree, old) {
        return Err(ProofError::Unreadable { lang, at });
    }
    let new_tree = parse(lang, &new)?;
    if let Some(at) = first_error(&new_tree, &new) {
        return Err(ProofError::EditUnreadable { lang, at });
    }
    Ok(Edited {
        new,
        old_tree,
        new_tree,
        new_range: range.start..range.start + with.len(),
    })
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
    let Edited {
        new,
        old_tree,
        new_tree,
        new_range,
    } = edited(lang, old, &range, with)?;
    let o = skeleton(&old_tree, old, &range)?;
    let n = skeleton(&new_tree, &new, &new_range)?;
    if !same_tokens((&o, old), (&n, &new), false) || !same_tokens((&o, old), (&n, &new), true) {
        let line = line_of(old, range.start);
        return Err(ProofError::ChangesRest { line });
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    // the check as it was written first, one list of ancestors per token: the reference the
    // skeleton's answers are compared with
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

    /// Every Python source and shell script among the fixtures that parses: its path, grammar,
    /// text and tree.
    fn fixture_scripts() -> Vec<(std::path::PathBuf, Lang, String, Tree)> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        crate::evidence::testutil::files_under(vec![root.into()])
            .into_iter()
            .filter_map(|p| {
                let lang = match p.extension().and_then(|x| x.to_str()) {
                    Some("py") => Lang::Python,
                    Some("sh") => Lang::Bash,
                    _ => return None,
                };
                let src = std::fs::read_to_string(&p).ok()?;
                let tree = parse(lang, &src).ok()?;
                Some((p, lang, src, tree))
            })
            .collect()
    }

    /// `check_edit` with the reference's lists of ancestors.
    fn check_edit_by_lists(
        lang: Lang,
        old: &str,
        range: Range<usize>,
        with: &str,
    ) -> Result<String, ProofError> {
        let Edited {
            new,
            old_tree,
            new_tree,
            new_range,
        } = edited(lang, old, &range, with)?;
        let (ob, oa) = leaves(&old_tree, old, &range)?;
        let (nb, na) = leaves(&new_tree, &new, &new_range)?;
        if ob != nb || oa != na {
            return Err(ProofError::ChangesRest {
                line: line_of(old, range.start),
            });
        }
        Ok(new)
    }

    #[test]
    fn the_skeleton_proves_what_the_lists_of_ancestors_proved() {
        // every fixture script, edits at spread-out tokens: the token itself, another number,
        // two words, an opening bracket, a cut through two tokens
        let (mut edits, mut proven) = (0, 0);
        for (p, lang, src, tree) in fixture_scripts() {
            let tokens: Vec<Range<usize>> = nodes(&tree)
                .into_iter()
                .filter(|n| n.child_count() == 0 && !n.byte_range().is_empty())
                .map(|n| n.byte_range())
                .collect();
            let step = (tokens.len() / 5).max(1);
            for (k, r) in tokens.iter().enumerate().step_by(step) {
                let mut ranges = vec![r.clone()];
                if let Some(next) = tokens.get(k + 1)
                    && src.is_char_boundary(r.start + 1)
                    && r.start + 1 < next.end
                {
                    ranges.push(r.start + 1..next.end);
                }
                for range in ranges {
                    if !src.is_char_boundary(range.start) || !src.is_char_boundary(range.end) {
                        continue;
                    }
                    let same = src[range.clone()].to_string();
                    for with in [same.as_str(), "0", "a b", "("] {
                        let a = check_edit(lang, &src, range.clone(), with);
                        let b = check_edit_by_lists(lang, &src, range.clone(), with);
                        assert_eq!(a, b, "{} {range:?} {with:?}", p.display());
                        edits += 1;
                        proven += a.is_ok() as usize;
                    }
                }
            }
        }
        eprintln!("{edits} edits, {proven} proven");
        assert!(edits > 1000 && proven > 300, "{edits} {proven}");
    }

    #[test]
    fn a_deep_file_is_compared_in_bounded_memory() {
        // 400 kB of 900-term sums, under the depth limit: one list of ancestors per token would
        // be about 1,800 entries (28 kB) for each of 200,000 tokens. Parsed here without the
        // parse's deadline, which a loaded machine can pass in a debug build.
        let line = format!("n = {}\n", vec!["1"; 900].join("+"));
        let src = format!(
            "loader = DataLoader(ds, pin_memory=False)\n{}",
            line.repeat(400_000 / line.len())
        );
        let mut p = Parser::new();
        p.set_language(&Lang::Python.language()).unwrap();
        let tree = p.parse(&src, None).unwrap();
        assert!(depth(&tree, MAX_DEPTH) < MAX_DEPTH);
        let at = src.find("False").unwrap();
        let start = Instant::now();
        let sk = skeleton(&tree, &src, &(at..at + 5)).unwrap();
        assert!(sk.after.len() > 150_000, "{}", sk.after.len());
        assert!(sk.nodes.len() < 3 * src.len(), "{}", sk.nodes.len());
        assert!(same_tokens((&sk, &src), (&sk, &src), false));
        assert!(same_tokens((&sk, &src), (&sk, &src), true));
        eprintln!(
            "{} tokens compared in {:?}",
            sk.after.len(),
            start.elapsed()
        );
    }

    #[test]
    fn a_tree_nested_past_the_limit_is_not_read() {
        // each of these overflowed the stack of the reader or the edit check, or (the list)
        // kept `gpufix plan --config` busy for minutes, before the limit
        let deep = 50_000;
        let py = [
            format!(
                "x = {}1{}\nDataLoader(ds, num_workers=2)\n",
                "(".repeat(deep),
                ")".repeat(deep)
            ),
            format!(
                "x = {}{}\nDataLoader(ds, num_workers=2)\n",
                "[".repeat(deep),
                "]".repeat(deep)
            ),
            format!(
                "n = {}\nDataLoader(ds, num_workers=n)\n",
                vec!["1"; deep].join("+")
            ),
            format!("n = {}1\nDataLoader(ds, num_workers=n)\n", "-".repeat(deep)),
        ];
        for src in &py {
            assert_eq!(
                parse(Lang::Python, src).err(),
                Some(ProofError::TooDeep { lang: Lang::Python }),
                "{}",
                &src[..40]
            );
        }
        let sh = [
            format!(
                "{}torchrun train.py{}\n",
                "( ".repeat(deep),
                " )".repeat(deep)
            ),
            format!(
                "{}torchrun train.py\n{}",
                "if true; then\n".repeat(5_000),
                "fi\n".repeat(5_000)
            ),
        ];
        for src in &sh {
            assert_eq!(
                parse(Lang::Bash, src).err(),
                Some(ProofError::TooDeep { lang: Lang::Bash }),
                "{}",
                &src[..40]
            );
        }
        // at the limit's side: a chain CPython still compiles is read
        let ok = format!("n = {}\n", vec!["1"; 300].join("+"));
        assert!(parse(Lang::Python, &ok).is_ok());
    }

    #[test]
    fn the_corpus_scripts_nest_far_below_the_limit() {
        // every Python source and shell script among the fixtures, as the limit's doc says
        let mut deepest = (0, String::new());
        let mut files = 0;
        for (p, _, _, tree) in fixture_scripts() {
            files += 1;
            let d = depth(&tree, MAX_DEPTH);
            if d > deepest.0 {
                deepest = (d, p.display().to_string());
            }
        }
        eprintln!(
            "{files} scripts; the deepest nests {} levels: {}",
            deepest.0, deepest.1
        );
        assert!(files > 100, "{files}");
        assert!(deepest.0 * 10 < MAX_DEPTH, "{deepest:?}");
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
