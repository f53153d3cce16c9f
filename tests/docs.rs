//! The documentation cannot go stale: every `console` block of README.md and docs/*.md is run
//! against the binary this build made and its output compared (trycmd, by the clap authors:
//! `$ ` lines are commands, `? N` the exit status, `[..]` and `...` elide what changes between
//! runs). A command block that cannot run here (a live GPU, a running job, root on a real host,
//! `cargo install`) is an `sh` block whose first line says so (`# not run in CI: …`); nothing
//! else is allowed to hold commands. After a deliberate change of output:
//! `TRYCMD=overwrite cargo test --features fault-injection --test docs`, then review the diff.

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, the files the trycmd case list names.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The binary the blocks run: this build's, or `GPUFIX_DOCS_BIN` (the newcomer's path: the
/// binary `cargo install --locked --path .` put on their PATH prints what the README shows).
fn docs_bin() -> PathBuf {
    std::env::var_os("GPUFIX_DOCS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| trycmd::cargo::cargo_bin("gpufix"))
}

#[test]
fn readme_and_docs_commands_print_what_they_show() {
    trycmd::TestCases::new()
        .register_bin("gpufix", docs_bin())
        // the same bytes on any machine: no colours, the sparkline's block characters
        .env("NO_COLOR", "1")
        .env("LC_ALL", "C.UTF-8")
        .case("README.md")
        .case("docs/*.md");
}

/// A fenced block: its info string, first line number and lines.
struct Block {
    info: String,
    line: usize,
    body: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match &mut open {
            None if ticks >= 3 => {
                open = Some((
                    line[..ticks].to_string(),
                    Block {
                        info: line[ticks..].trim().to_string(),
                        line: i + 1,
                        body: Vec::new(),
                    },
                ))
            }
            Some((fence, _)) if line.starts_with(fence.as_str()) && line.trim() == fence => {
                out.push(open.take().unwrap().1);
            }
            Some((_, b)) => b.body.push(line.to_string()),
            None => {}
        }
    }
    out
}

/// trycmd runs `console` (and unlabelled) blocks and skips a command whose program it does not
/// know without a word, so: every block is labelled, every `console` command is `gpufix`, and a
/// shell block that is not run says why on its first line.
#[test]
fn every_command_block_is_run_or_says_why_not() {
    let mut problems = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.strip_prefix(repo()).unwrap().display().to_string();
        for b in blocks(&text) {
            let lang = b.info.split([',', ' ']).next().unwrap_or("");
            match lang {
                "" => problems.push(format!(
                    "{name}:{}: a code block needs a language (`console` to run it)",
                    b.line
                )),
                "console" | "trycmd" => {
                    for l in b.body.iter().filter(|l| l.starts_with("$ ")) {
                        if !l.starts_with("$ gpufix ") {
                            problems.push(format!(
                                "{name}:{}: `{l}` is not gpufix: trycmd would skip it silently",
                                b.line
                            ));
                        }
                    }
                }
                "sh" | "bash" | "shell" | "shell-session"
                    if !b
                        .body
                        .first()
                        .is_some_and(|l| l.starts_with("# not run in CI: ")) =>
                {
                    problems.push(format!(
                        "{name}:{}: a shell block is not run: make it `console`, or say why on its first line (`# not run in CI: …`)",
                        b.line
                    ));
                }
                _ => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_unlabelled_and_unexplained_blocks() {
    let text = "a\n```\n$ ls\n```\n```sh\ncargo build\n```\n```sh\n# not run in CI: a GPU\ngpufix plan\n```\n";
    let b = blocks(text);
    assert_eq!(b.len(), 3);
    assert_eq!((b[0].info.as_str(), b[0].line), ("", 2));
    assert_eq!(b[1].body, ["cargo build"]);
    assert!(b[2].body[0].starts_with("# not run in CI: "));
}

#[test]
fn readme_is_a_newcomers_page() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(
        n <= 300,
        "README.md has {n} lines; move detail to docs/ (at most 300)"
    );
    // the second set-up command is the one CI runs
    let test_cmd = "cargo test --features fault-injection";
    assert!(
        readme.contains(&format!("\n{test_cmd}\n")),
        "README's test command"
    );
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == test_cmd),
        ".ci/run must run the README's test command `{test_cmd}`"
    );
    // every page the README links exists
    for link in readme.split("](").skip(1) {
        let target = link.split(')').next().unwrap();
        if target.starts_with("http") || target.starts_with('#') {
            continue;
        }
        assert!(
            repo().join(target).exists(),
            "README links {target}, which does not exist"
        );
    }
}

/// Each crate in Cargo.toml is named in docs/dependencies.md with why it is there.
#[test]
fn every_dependency_is_explained() {
    let manifest: toml_edit::DocumentMut = std::fs::read_to_string(repo().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let why = std::fs::read_to_string(repo().join("docs/dependencies.md")).unwrap();
    let words: std::collections::BTreeSet<&str> = why
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .collect();
    let mut missing = Vec::new();
    for table in ["dependencies", "dev-dependencies"] {
        for (name, _) in manifest[table].as_table().unwrap().iter() {
            if !words.contains(name) {
                missing.push(format!("{table}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/dependencies.md does not say why these are there: {missing:?}"
    );
}

/// docs/record.md draws the report from copies of two H200 recordings; they stay the recordings.
#[test]
fn the_report_example_draws_the_recorded_runs() {
    for (copy, fixture) in [
        (
            "docs/record.in/before.json",
            "tests/fixtures/runs/h200-yaml-workers0.before.run.json",
        ),
        (
            "docs/record.in/after.json",
            "tests/fixtures/runs/h200-yaml-workers8.after.run.json",
        ),
    ] {
        assert!(
            std::fs::read(repo().join(copy)).unwrap()
                == std::fs::read(repo().join(fixture)).unwrap(),
            "{copy} is not a copy of {fixture}: `cp {fixture} {copy}`"
        );
    }
}
