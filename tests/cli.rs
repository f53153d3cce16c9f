//! End-to-end tests of the `gpufix` binary: exit codes, diagnostics, plans on recorded hosts.
//! Snapshots live in tests/snapshots/ (insta); run with INSTA_UPDATE=always to refresh, then
//! review the diff.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `gpufix` run from the repository root, isolated from /etc/gpufix and colors.
pub fn gpufix() -> Command {
    let mut c = Command::cargo_bin("gpufix").unwrap();
    c.current_dir(repo()).env("NO_COLOR", "1").arg("--no-system");
    c
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str]) -> Out {
    let o = gpufix().args(args).output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Every file in tests/fixtures/playbooks/invalid is a different mistake: each must exit 1,
/// print its own diagnostic with file, line or path, and a help line, and probe nothing.
mod invalid_playbooks {
    use super::*;

    #[test]
    fn each_mistake_is_reported_with_location_and_help() {
        let dir = repo().join("tests/fixtures/playbooks/invalid");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        assert!(files.len() >= 12, "at least 12 invalid fixtures, found {}", files.len());
        for f in files {
            let rel = f.strip_prefix(repo()).unwrap().to_str().unwrap().to_string();
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            let out = if name.ends_with(".values.yaml") {
                run(&["validate", "--values", &rel])
            } else {
                run(&["validate", &rel])
            };
            assert_eq!(out.code, 1, "{name} must exit 1; stderr:\n{}", out.stderr);
            assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
            assert!(out.stderr.contains(&rel), "{name}: diagnostics name the file");
            assert!(out.stderr.contains("help: "), "{name}: diagnostics have a help line");
            assert!(!out.stderr.contains("builtin:"), "{name}: built-in playbooks stay valid:\n{}", out.stderr);
            insta::assert_snapshot!(format!("invalid__{name}"), out.stderr);
        }
    }

    #[test]
    fn builtin_playbooks_are_valid() {
        let out = run(&["validate", "playbooks/"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.starts_with("ok: "));
    }
}

/// The committed JSON Schemas are generated from the Rust types; they must not drift.
mod schemas {
    use super::*;

    #[test]
    fn committed_schemas_match_the_types() {
        for name in ["playbook", "values", "report", "plan"] {
            let out = run(&["schema", name]);
            assert_eq!(out.code, 0);
            let path = repo().join(format!("schemas/{name}.schema.json"));
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == out.stdout,
                "schemas/{name}.schema.json is stale: run `cargo run -- schema {name} > schemas/{name}.schema.json`"
            );
        }
    }
}

