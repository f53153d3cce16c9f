//! The crate's layers (DESIGN.md "Layout", issue 11 item 5): every top-level module of `src/` sits
//! in one layer and may use only modules of its own layer or a layer below; modules that share a
//! layer must not use each other in a circle. A lower module reaching up, or two neighbours
//! importing each other, is how the tangle this replaced grew back one convenient `use` at a time.
//!
//! The test reads the real source: it walks the module tree from `src/lib.rs` the way the compiler
//! does (test-only modules and `#[cfg(test)]` items left out), lexes each file with proc-macro2
//! (so comments and string literals never count), and collects every path that reaches another
//! top-level module: `crate::x`, `crate::{x, ..}`, `$crate::x` and `super::` chains that climb to
//! the crate root. A violation is printed as `file:line: a (layer) -> b (layer)`.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Bottom first. A module may use its own layer and the layers before it.
const LAYERS: &[(&str, &[&str])] = &[
    // The shared vocabulary: expressions, escaping, trust checks, crash-safe writes, NVML reading
    // types, timings, small IO helpers, and the typed-parameter machinery every kind declares
    // its parameters with (`kinds`; the kind lists themselves are `probes::PROBES` and
    // `fixes::FIXES`, and what the playbook derives from them is `playbook::registry`).
    (
        "vocabulary",
        &[
            "vocab",
            "expr",
            "escape",
            "trust",
            "safe_write",
            "authority",
            "tempfiles",
            "crashpoint",
            "privacy",
            "kinds",
        ],
    ),
    // The report's data (verdicts, safety, severity, planned changes): what fixes produce, the
    // engine fills in and every renderer reads. It uses only the vocabulary.
    ("report data", &["report"]),
    ("formats", &["formats"]),
    ("host", &["host", "evidence"]),
    ("kinds", &["probes", "fixes"]),
    ("playbook", &["playbook"]),
    ("engine", &["engine"]),
    ("outputs", &["plan", "journal", "render"]),
    ("transaction", &["apply", "session", "record"]),
    ("cli", &["cli"]),
];

/// One path from a module to another top-level module.
#[derive(Debug, Clone)]
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn lex(path: &Path) -> TokenStream {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

fn is_punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

fn is_ident(t: &TokenTree, s: &str) -> bool {
    matches!(t, TokenTree::Ident(i) if i == s)
}

fn ident(t: Option<&TokenTree>) -> Option<String> {
    match t {
        Some(TokenTree::Ident(i)) => Some(i.to_string().trim_start_matches("r#").to_string()),
        _ => None,
    }
}

/// `test`, or `all(.., test, ..)`: a predicate that holds only in test builds.
/// (`any(test, feature = "..")` and `not(test)` are compiled outside tests, so they count.)
fn test_only(pred: &[TokenTree]) -> bool {
    match pred {
        [t] => is_ident(t, "test"),
        [t, TokenTree::Group(g)] if is_ident(t, "all") => g
            .stream()
            .into_iter()
            .collect::<Vec<_>>()
            .split(|t| is_punct(t, ','))
            .any(test_only),
        _ => false,
    }
}

/// `[cfg(<test-only predicate>)]`, the bracket group of an attribute.
fn is_test_cfg(attr: &TokenTree) -> bool {
    let TokenTree::Group(g) = attr else {
        return false;
    };
    if g.delimiter() != Delimiter::Bracket {
        return false;
    }
    let toks: Vec<TokenTree> = g.stream().into_iter().collect();
    match toks.as_slice() {
        [c, TokenTree::Group(p)] if is_ident(c, "cfg") => {
            test_only(&p.stream().into_iter().collect::<Vec<_>>())
        }
        _ => false,
    }
}

/// `[path = "…"]`.
fn path_attr(attr: &TokenTree) -> Option<String> {
    let TokenTree::Group(g) = attr else {
        return None;
    };
    let toks: Vec<TokenTree> = g.stream().into_iter().collect();
    match toks.as_slice() {
        [p, eq, TokenTree::Literal(l)] if is_ident(p, "path") && is_punct(eq, '=') => {
            Some(l.to_string().trim_matches('"').to_string())
        }
        _ => None,
    }
}

/// What one file contributes: its references to top-level modules and the out-of-line modules
/// it declares for non-test builds (name, `#[path]`).
#[derive(Default)]
struct Scan {
    refs: Vec<(String, usize)>,
    mods: Vec<(String, Option<String>)>,
}

/// Walks a token stream, leaving out items under a test-only `#[cfg]`. `depth` is how many
/// `super`s reach the crate root from here.
fn scan(tokens: Vec<TokenTree>, depth: usize, top_level: bool, out: &mut Scan) {
    let mut i = 0;
    let mut pending_path: Option<String> = None;
    while i < tokens.len() {
        let t = &tokens[i];
        // Attributes: `#[..]` and `#![..]`.
        if is_punct(t, '#') {
            let inner = tokens.get(i + 1).is_some_and(|t| is_punct(t, '!'));
            let at = if inner { i + 2 } else { i + 1 };
            if let Some(attr) = tokens.get(at) {
                if is_test_cfg(attr) {
                    if inner {
                        // `#![cfg(test)]`: the rest of this module is test-only.
                        return;
                    }
                    i = skip_item(&tokens, at + 1);
                    pending_path = None;
                    continue;
                }
                if let Some(p) = path_attr(attr) {
                    pending_path = Some(p);
                }
                i = at + 1;
                continue;
            }
        }
        // `mod name;` (a file to follow) and `mod name { .. }` (one level deeper).
        if is_ident(t, "mod") {
            if let Some(name) = ident(tokens.get(i + 1)) {
                match tokens.get(i + 2) {
                    Some(s) if is_punct(s, ';') => {
                        if top_level {
                            out.mods.push((name, pending_path.take()));
                        }
                        i += 3;
                        continue;
                    }
                    Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                        scan(g.stream().into_iter().collect(), depth + 1, false, out);
                        pending_path = None;
                        i += 3;
                        continue;
                    }
                    _ => {}
                }
            }
        }
        match t {
            TokenTree::Ident(id) if id == "crate" && path_sep(&tokens, i + 1) => {
                let line = id.span().start().line;
                match tokens.get(i + 3) {
                    Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                        // `crate::{a::b, c}`
                        let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                        for part in inner.split(|t| is_punct(t, ',')) {
                            if let Some(name) = ident(part.first()) {
                                out.refs.push((name, line));
                            }
                        }
                    }
                    other => {
                        if let Some(name) = ident(other) {
                            out.refs.push((name, line));
                        }
                    }
                }
                i += 3;
                continue;
            }
            TokenTree::Ident(id) if id == "super" => {
                let line = id.span().start().line;
                let mut n = 1;
                let mut j = i + 1;
                while path_sep(&tokens, j)
                    && tokens.get(j + 2).is_some_and(|t| is_ident(t, "super"))
                {
                    n += 1;
                    j += 3;
                }
                if n >= depth && path_sep(&tokens, j) {
                    if let Some(name) = ident(tokens.get(j + 2)) {
                        out.refs.push((name, line));
                    }
                }
                i = j;
                continue;
            }
            TokenTree::Group(g) => scan(g.stream().into_iter().collect(), depth, false, out),
            _ => {}
        }
        i += 1;
    }
}

/// `::` at `i`.
fn path_sep(tokens: &[TokenTree], i: usize) -> bool {
    tokens.get(i).is_some_and(|t| is_punct(t, ':'))
        && tokens.get(i + 1).is_some_and(|t| is_punct(t, ':'))
}

/// The index after the item that starts at `i` (after its attributes): it ends at a `;` or at
/// its body's braces (and a `;` right after them).
fn skip_item(tokens: &[TokenTree], mut i: usize) -> usize {
    while i < tokens.len() {
        match &tokens[i] {
            t if is_punct(t, ';') => return i + 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                return if tokens.get(i + 1).is_some_and(|t| is_punct(t, ';')) {
                    i + 2
                } else {
                    i + 1
                };
            }
            _ => i += 1,
        }
    }
    i
}

/// Every top-level module's references, following `mod` declarations from `src/lib.rs` as the
/// compiler does. Returns (top-level modules declared in lib.rs, edges).
fn collect() -> (Vec<String>, Vec<Edge>) {
    let root = src();
    let mut lib = Scan::default();
    scan(
        lex(&root.join("lib.rs")).into_iter().collect(),
        0,
        true,
        &mut lib,
    );
    let tops: Vec<String> = lib.mods.iter().map(|(m, _)| m.clone()).collect();
    let mut edges = Vec::new();
    // (file, top-level module, the directory its `mod x;` resolve against, depth)
    let mut queue: Vec<(PathBuf, String, PathBuf, usize)> = Vec::new();
    for (m, p) in &lib.mods {
        let file = match p {
            Some(p) => root.join(p),
            None => module_file(&root, m),
        };
        queue.push((file, m.clone(), root.join(m), 1));
    }
    while let Some((file, top, dir, depth)) = queue.pop() {
        let mut s = Scan::default();
        scan(lex(&file).into_iter().collect(), depth, true, &mut s);
        let rel = file.strip_prefix(root.parent().unwrap()).unwrap_or(&file);
        for (to, line) in s.refs {
            edges.push(Edge {
                from: top.clone(),
                to,
                file: rel.display().to_string(),
                line,
            });
        }
        for (m, p) in s.mods {
            let child = match p {
                Some(p) => file.parent().unwrap().join(p),
                None => module_file(&dir, &m),
            };
            queue.push((child, top.clone(), dir.join(&m), depth + 1));
        }
    }
    (tops, edges)
}

/// `dir/m.rs` or `dir/m/mod.rs`.
fn module_file(dir: &Path, m: &str) -> PathBuf {
    let flat = dir.join(format!("{m}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(m).join("mod.rs")
    }
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&module))
}

#[test]
fn every_module_is_in_a_layer() {
    let (tops, _) = collect();
    let unlisted: Vec<&String> = tops.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unlisted.is_empty(),
        "top-level modules in no layer: {unlisted:?}\nhelp: add each to LAYERS in tests/layering.rs, \
         at the lowest layer that holds everything it uses"
    );
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let (tops, edges) = collect();
    let mut bad = Vec::new();
    for e in &edges {
        if !tops.contains(&e.to) || e.to == e.from {
            continue;
        }
        let (Some(from), Some(to)) = (layer_of(&e.from), layer_of(&e.to)) else {
            continue;
        };
        if to > from {
            bad.push(format!(
                "{}:{}: {} ({}) -> {} ({})",
                e.file, e.line, e.from, LAYERS[from].0, e.to, LAYERS[to].0
            ));
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "{} imports reach up a layer:\n{}\nhelp: move the shared item down to the lower layer \
         (the vocabulary at the bottom holds what everyone needs) instead of importing upward",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn modules_of_one_layer_form_no_cycle() {
    let (tops, edges) = collect();
    // same-layer graph: from -> to -> first place seen
    let mut graph: BTreeMap<&str, BTreeMap<&str, &Edge>> = BTreeMap::new();
    for e in &edges {
        if e.from == e.to || !tops.contains(&e.to) {
            continue;
        }
        if layer_of(&e.from).is_some() && layer_of(&e.from) == layer_of(&e.to) {
            graph
                .entry(e.from.as_str())
                .or_default()
                .entry(e.to.as_str())
                .or_insert(e);
        }
    }
    let mut cycles = BTreeSet::new();
    for &start in graph.keys() {
        // depth-first search for a path back to `start`
        let mut stack = vec![(start, vec![start])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for (&next, _) in graph.get(node).into_iter().flatten() {
                if next == start {
                    let mut c = path.clone();
                    // print each cycle once, from its smallest module
                    let min = c.iter().enumerate().min_by_key(|(_, m)| **m).unwrap().0;
                    c.rotate_left(min);
                    let mut text = Vec::new();
                    for k in 0..c.len() {
                        let e = graph[c[k]][c[(k + 1) % c.len()]];
                        text.push(format!("  {}:{}: {} -> {}", e.file, e.line, e.from, e.to));
                    }
                    cycles.insert(text.join("\n"));
                } else if seen.insert(next) {
                    let mut p = path.clone();
                    p.push(next);
                    stack.push((next, p));
                }
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "modules of one layer import each other in a circle:\n{}\nhelp: move what both need \
         into one of them (or down a layer) so the imports run one way",
        cycles.into_iter().collect::<Vec<_>>().join("\n\n")
    );
}

/// The scanner itself: paths in comments, strings and test-only items do not count; the forms
/// that do are each found.
#[test]
fn the_scanner_finds_real_imports_only() {
    let code = r##"
        //! crate::docs_only
        use crate::alpha::X;
        use crate::{beta::Y, gamma};
        fn f() { let _ = "crate::in_string"; let _ = r#"crate::raw"#; /* crate::block */ }
        fn g() -> super::super::delta::Z { $crate::eps::m!() }
        #[cfg(test)]
        mod tests { use crate::test_only; }
        #[cfg(all(test, unix))]
        use crate::also_test;
        #[cfg(not(test))]
        use crate::zeta;
        #[cfg(test)]
        mod test_file;
        mod child;
    "##;
    let mut s = Scan::default();
    scan(
        TokenStream::from_str(code).unwrap().into_iter().collect(),
        2,
        true,
        &mut s,
    );
    let names: Vec<&str> = s.refs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["alpha", "beta", "gamma", "delta", "eps", "zeta"]);
    assert_eq!(s.refs[0].1, 3, "line numbers are the source's");
    let mods: Vec<&str> = s.mods.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(mods, ["child"]);
}

/// Temporary-file uses outside test code: `temp_dir`, the `tempfile` crate, a `"/tmp/…"` path.
fn temp_uses(tokens: Vec<TokenTree>, out: &mut Vec<(usize, String)>) {
    let mut i = 0;
    while i < tokens.len() {
        if is_punct(&tokens[i], '#') && tokens.get(i + 1).is_some_and(is_test_cfg) {
            // leave out the whole test-only item: up to its body or its `;`
            i += 2;
            while i < tokens.len() {
                let end = matches!(&tokens[i], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace)
                    || is_punct(&tokens[i], ';');
                i += 1;
                if end {
                    break;
                }
            }
            continue;
        }
        match &tokens[i] {
            TokenTree::Group(g) => temp_uses(g.stream().into_iter().collect(), out),
            TokenTree::Ident(id) if id == "temp_dir" || id == "tempfile" => {
                out.push((id.span().start().line, id.to_string()))
            }
            TokenTree::Literal(l) => {
                let s = l.to_string();
                if s.starts_with("\"/tmp/") && s.len() > "\"/tmp/\"".len() {
                    out.push((l.span().start().line, s));
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Issue 22 item 4: every temporary file gpufix makes goes through `src/tempfiles.rs` (a private
/// directory, never a name someone could guess); no other module names `temp_dir`, the
/// `tempfile` crate or a `/tmp/…` path outside its tests.
#[test]
fn temporary_files_go_through_one_helper() {
    let mut bad = Vec::new();
    let mut stack = vec![src()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // the helper itself, and files that are test-only modules
            if p.extension().is_none_or(|x| x != "rs")
                || p == src().join("tempfiles.rs")
                || name.ends_with("tests.rs")
                || name.ends_with("_test.rs")
            {
                continue;
            }
            let mut uses = Vec::new();
            temp_uses(lex(&p).into_iter().collect(), &mut uses);
            for (line, what) in uses {
                bad.push(format!("{}:{line}: {what}", p.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "temporary files go through crate::tempfiles::PrivateDir (a private 0700 directory), not:\n{}",
        bad.join("\n")
    );
    // the scanner sees through test code and finds real uses
    let mut found = Vec::new();
    temp_uses(
        TokenStream::from_str(
            "fn f() { let d = std::env::temp_dir(); let p = \"/tmp/gpufix-x\"; }\n#[cfg(test)]\nmod tests { fn g() { tempfile::tempdir(); } }",
        )
        .unwrap()
        .into_iter()
        .collect(),
        &mut found,
    );
    let what: Vec<&str> = found.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(what, ["temp_dir", "\"/tmp/gpufix-x\""]);
}
