//! The YAML playbook tests in playbooks/tests run under `cargo test`, and a wrong expectation
//! makes `gpufix test` fail with a readable difference.

use assert_cmd::Command;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gpufix(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("gpufix")
        .unwrap()
        .current_dir(repo())
        .arg("--no-system")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn builtin_playbook_tests_pass() {
    let (code, out) = gpufix(&["test", "playbooks/tests"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
    assert!(!out.contains("ERROR"), "{out}");
}

/// Every built-in rule has a test where it fails and one where it passes (and
/// `builtin_playbook_tests_pass` makes every one of those expectations hold).
#[test]
fn every_builtin_rule_has_a_failing_and_a_passing_case() {
    use std::collections::{BTreeMap, BTreeSet};
    let yaml = |p: &std::path::Path| -> serde_yaml::Value {
        serde_yaml::from_str(&std::fs::read_to_string(p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let files = |dir: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        v.sort();
        v
    };
    let mut rules = Vec::new();
    for f in files("playbooks") {
        for r in yaml(&f)["rules"].as_sequence().unwrap() {
            rules.push(r["id"].as_str().unwrap().to_string());
        }
    }
    assert!(rules.len() >= 49, "{rules:?}");
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files("playbooks/tests") {
        for t in yaml(&f)["tests"].as_sequence().unwrap() {
            for (rule, verdict) in t["expect"].as_mapping().unwrap() {
                seen.entry(rule.as_str().unwrap().to_string())
                    .or_default()
                    .insert(verdict.as_str().unwrap().to_string());
            }
        }
    }
    let missing: Vec<String> = rules
        .iter()
        .filter_map(|r| {
            let v = seen.get(r).cloned().unwrap_or_default();
            let lacks: Vec<&str> = ["fail", "pass"]
                .into_iter()
                .filter(|want| !v.contains(*want))
                .collect();
            (!lacks.is_empty()).then(|| format!("{r}: no `{}` case", lacks.join("`, no `")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "add cases to playbooks/tests:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_flipped_expectation_fails_with_the_difference() {
    let text = std::fs::read_to_string(repo().join("playbooks/tests/driver.yaml")).unwrap();
    let fixtures = repo().join("tests/fixtures");
    let flipped = text
        .replace("../../tests/fixtures", fixtures.to_str().unwrap())
        .replacen(
            "driver.persistence-off: fail",
            "driver.persistence-off: pass",
            1,
        );
    assert_ne!(flipped, text);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("flipped.yaml");
    std::fs::write(&f, flipped).unwrap();
    let (code, out) = gpufix(&["test", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL") && out.contains("driver.persistence-off: expected pass, got fail"),
        "{out}"
    );
    assert!(out.contains("1 failed"), "{out}");
}

#[test]
fn an_unknown_rule_or_verdict_in_expect_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        "tests:\n  - name: typo\n    expect:\n      driver.persistance-off: fail\n  - name: bad verdict\n    expect:\n      driver.persistence-off: failed\n",
    )
    .unwrap();
    let (code, out) = gpufix(&["test", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("did you mean `driver.persistence-off`"),
        "{out}"
    );
    assert!(out.contains("is not a verdict"), "{out}");
}

#[test]
fn the_readme_site_example_and_its_tests_pass() {
    let (code, out) = gpufix(&[
        "--playbooks",
        "docs/examples/site",
        "test",
        "docs/examples/site/tests",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("3 passed, 0 failed"), "{out}");
}
