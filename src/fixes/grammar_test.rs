//! The property every fix kind that edits a script or Python source keeps (issue 22), over the
//! real launch scripts and training sources in `tests/fixtures/corpus` (`.sh`, `.py`, and the
//! files labelled `kind: launcher`) and `tests/fixtures/pid`:
//!
//! - parsed before and after, the trees are equal except for the one named value: the new
//!   tree's nodes in preorder (depth, kind, token text) are the old tree's with one subtree —
//!   the assignment `env.unset` drops, the value `env.set`/`config.set` replaces — taken out
//!   or swapped for one new subtree. This is checked here on the raw tree-sitter trees, apart
//!   from the proof the editors run ([`crate::formats::syntax::check_edit`]).
//! - through the fix kind itself (`prepare → save → apply → verify → undo`, the transaction's
//!   steps): applying twice changes nothing, and rollback restores the bytes.
//!
//! Every place a variable is set once, every flag given once on a command and every keyword
//! argument of a call is edited, up to [`PER_FILE`] of each per file.

use super::kinds_test::roundtrip;
use crate::formats::python;
use crate::formats::shell::{self, Script};
use crate::host::real::RealHost;
use crate::probes::Inputs;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Edits of each kind tried per file, at most.
const PER_FILE: usize = 12;

/// One node in preorder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    depth: usize,
    kind: String,
    /// the text of a token; None for an inner node (its text is its tokens')
    token: Option<String>,
}

fn preorder(lang: tree_sitter::Language, src: &str) -> (Vec<Item>, Vec<String>) {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&lang).unwrap();
    let tree = p.parse(src, None).unwrap();
    assert!(!tree.root_node().has_error(), "parses cleanly");
    let (mut items, mut texts) = (Vec::new(), Vec::new());
    let mut stack = vec![(tree.root_node(), 0)];
    while let Some((n, d)) = stack.pop() {
        let text = src[n.byte_range()].to_string();
        items.push(Item {
            depth: d,
            kind: n.kind().to_string(),
            token: (n.child_count() == 0).then(|| text.clone()),
        });
        texts.push(text);
        let mut c = n.walk();
        let kids: Vec<_> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev().map(|k| (k, d + 1)));
    }
    (items, texts)
}

/// The end of the subtree that starts at `i`.
fn subtree_end(items: &[Item], i: usize) -> usize {
    let d = items[i].depth;
    (i + 1..items.len())
        .find(|j| items[*j].depth <= d)
        .unwrap_or(items.len())
}

/// Is `new` the tree `old` with exactly one subtree whose text satisfies `named` removed
/// (`replacement` None) or replaced by one subtree whose text is `replacement`?
fn one_subtree_changed(
    lang: tree_sitter::Language,
    old: &str,
    new: &str,
    named: impl Fn(&str) -> bool,
    replacement: Option<&str>,
) -> bool {
    let (o, otext) = preorder(lang.clone(), old);
    let (n, ntext) = preorder(lang, new);
    (1..o.len()).filter(|i| named(&otext[*i])).any(|i| {
        let j = subtree_end(&o, i);
        let tail = o.len() - j;
        if n.len() < i + tail || n[..i] != o[..i] || n[n.len() - tail..] != o[j..] {
            return false;
        }
        let k = n.len() - tail;
        match replacement {
            None => k == i,
            Some(r) => {
                k > i
                    && subtree_end(&n, i) == k
                    && n[i].depth == o[i].depth
                    && (ntext[i] == r || ntext[i].trim_matches(['"', '\'']) == r)
            }
        }
    })
}

fn bash() -> tree_sitter::Language {
    tree_sitter_bash::LANGUAGE.into()
}

fn py() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The corpus's launch scripts and Python sources, and the recorded jobs' sources.
fn sources() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut sh, mut pyf) = (Vec::new(), Vec::new());
    for e in std::fs::read_dir(repo("tests/fixtures/corpus")).unwrap() {
        let p = e.unwrap().path();
        let name = p.display().to_string();
        if name.ends_with(".label.yaml") {
            let label = std::fs::read_to_string(&p).unwrap();
            if label.lines().any(|l| l.trim() == "kind: launcher") {
                let stem = name.trim_end_matches(".label.yaml");
                let files: Vec<PathBuf> = std::fs::read_dir(repo("tests/fixtures/corpus"))
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .filter(|f| {
                        let s = f.display().to_string();
                        s.starts_with(&format!("{stem}.")) && !s.ends_with(".label.yaml")
                    })
                    .collect();
                sh.extend(files);
            }
        } else if name.ends_with(".sh") {
            sh.push(p);
        } else if name.ends_with(".py") {
            pyf.push(p);
        }
    }
    let mut stack = vec![repo("tests/fixtures/pid")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                pyf.push(p);
            } else if p.extension().is_some_and(|x| x == "sh") {
                sh.push(p);
            }
        }
    }
    sh.sort();
    sh.dedup();
    pyf.sort();
    (sh, pyf)
}

/// A fresh root with the file as the job's (`--env-file` and `--config` name it).
fn staged(text: &str, name: &str) -> (tempfile::TempDir, PathBuf, RealHost, Inputs) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("root");
    std::fs::create_dir_all(dir.join("job")).unwrap();
    let f = dir.join("job").join(name);
    std::fs::write(&f, text).unwrap();
    let host = RealHost::new(Some(dir.clone()));
    let inputs = Inputs {
        env_file: Some(f.clone()),
        config: Some(f),
        ..Default::default()
    };
    (t, dir, host, inputs)
}

#[test]
fn shell_edits_change_one_node_apply_once_and_roll_back() {
    let (scripts, _) = sources();
    assert!(scripts.len() >= 15, "{scripts:?}");
    let (mut unsets, mut sets, mut flags, mut parsed) = (0, 0, 0, 0);
    for path in &scripts {
        let text = std::fs::read_to_string(path).unwrap();
        let label = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(sc) = Script::parse(&text) else {
            continue; // a paste with prose around the command: no edit is ever planned
        };
        parsed += 1;
        // every variable the script sets, once
        let mut names: Vec<String> = Vec::new();
        for l in text.lines() {
            for w in l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '=')) {
                if let Some((n, _)) = w.split_once('=')
                    && shell::valid_name(n)
                    && !names.iter().any(|x| x == n)
                {
                    names.push(n.to_string());
                }
            }
        }
        let mut done = 0;
        for name in &names {
            if done >= PER_FILE {
                break;
            }
            let sites = sc.sites(name);
            if sites.len() != 1 {
                continue;
            }
            let Ok(new) = shell::unset(&text, name) else {
                continue; // refused with a note: nothing is edited
            };
            done += 1;
            assert!(
                one_subtree_changed(
                    bash(),
                    &text,
                    &new,
                    |t| t.contains(&format!("{name}=")),
                    None
                ),
                "{label}: env.unset {name} changed more than its assignment:\n{}",
                crate::fixes::file::unified_diff("/x", &text, &new)
            );
            let (_t, dir, host, inputs) = staged(&text, "run.sh");
            assert_eq!(
                roundtrip("env.unset", json!({ "name": name }), &host, &inputs, &dir),
                1,
                "{label}: {name}"
            );
            unsets += 1;
            // a new value at the same place
            if sites[0].how != shell::How::EnvArg {
                let Ok(new) = shell::set(&text, name, "gpufix_7") else {
                    continue;
                };
                assert!(
                    one_subtree_changed(
                        bash(),
                        &text,
                        &new,
                        |t| t == sites[0].value,
                        Some("gpufix_7")
                    ),
                    "{label}: env.set {name} changed more than its value:\n{}",
                    crate::fixes::file::unified_diff("/x", &text, &new)
                );
                roundtrip(
                    "env.set",
                    json!({ "name": name, "value": "gpufix_7" }),
                    &host,
                    &inputs,
                    &dir,
                );
                sets += 1;
            }
        }
        // every flag given once on its command
        let all = sc.flags();
        for f in all
            .iter()
            .filter(|f| {
                all.iter()
                    .filter(|g| g.flag == f.flag && g.line == f.line)
                    .count()
                    == 1
            })
            .take(PER_FILE)
        {
            let key = format!("{}@L{}", f.flag, f.line);
            let Ok(new) = crate::formats::launcher::set_flag_checked(&text, &key, "7") else {
                continue;
            };
            if new == text {
                continue;
            }
            let want = if f.joined {
                format!("{}={}", f.flag, shell::quote("7", &f.value))
            } else {
                shell::quote("7", &f.value)
            };
            let old_value = text[f.span.clone()].to_string();
            assert!(
                one_subtree_changed(bash(), &text, &new, |t| t == old_value, Some(&want)),
                "{label}: config.set {key} changed more than its value:\n{}",
                crate::fixes::file::unified_diff("/x", &text, &new)
            );
            let (_t, dir, host, inputs) = staged(&text, "run.sh");
            roundtrip(
                "config.set",
                json!({ "key": key, "value": 7 }),
                &host,
                &inputs,
                &dir,
            );
            flags += 1;
        }
    }
    eprintln!(
        "{} scripts ({parsed} parse cleanly): {unsets} env.unset, {sets} env.set, {flags} flag edits",
        scripts.len()
    );
    assert!(parsed >= 12, "{parsed} of {} scripts parse", scripts.len());
    assert!(
        unsets >= 20 && sets >= 10 && flags >= 50,
        "{unsets} {sets} {flags}"
    );
}

#[test]
fn python_keyword_edits_change_one_node_apply_once_and_roll_back() {
    let (_, sources) = sources();
    assert!(sources.len() >= 25, "{sources:?}");
    let mut edits = 0;
    for path in &sources {
        let text = std::fs::read_to_string(path).unwrap();
        let label = path.display().to_string();
        let m = python::scan(&text);
        let mut done = 0;
        for c in &m.calls {
            for a in c.args.iter().filter(|a| a.name.is_some()) {
                if done >= PER_FILE {
                    break;
                }
                let kwarg = a.name.as_deref().unwrap();
                let key = python::kwarg_key(c, kwarg);
                let value = if a.value.trim() == "7" { 8 } else { 7 };
                let Ok(new) = python::set_checked(&text, &key, &json!(value)) else {
                    continue;
                };
                done += 1;
                let old_value = a.value.trim().to_string();
                assert!(
                    one_subtree_changed(
                        py(),
                        &text,
                        &new,
                        |t| t == old_value,
                        Some(&value.to_string())
                    ),
                    "{label}: config.set {key} changed more than its value:\n{}",
                    crate::fixes::file::unified_diff("/x", &text, &new)
                );
                let (_t, dir, host, inputs) = staged(&text, "train.py");
                roundtrip(
                    "config.set",
                    json!({ "key": key, "value": value }),
                    &host,
                    &inputs,
                    &dir,
                );
                edits += 1;
            }
        }
    }
    eprintln!("{} Python sources: {edits} keyword edits", sources.len());
    assert!(edits >= 100, "{edits}");
}
