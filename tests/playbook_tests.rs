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
    // what is tested is how the rules read their inputs, not how fast a loaded machine parses
    // the H200 traces in a debug build: the default 15 s deadline made them `unknown` there
    let (code, out) = gpufix(&["test", "playbooks/tests", "--probe-timeout", "300s"]);
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

const LET_RULE: &str = r#"playbook: site
layer: data
title: Site rules
rules:
  - id: site.long-conf
    title: site.conf holds more than two words
    why: a test of `let:` bindings
    severity: info
    probes:
      conf: { kind: file, path: /etc/site.conf, missing_ok: true }
    let:
      text: "conf.text | trim"
      words: "text | split | length"
    fail_when: "words > 2"
    message: "{{ words }} words: {{ text }}"
"#;

/// A `let:` binding is computed once and read by name in the threshold and the message; one
/// that cannot be computed makes the verdict unknown with the reason of what it lacked.
#[test]
fn let_bindings_are_reused_in_threshold_and_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pb")).unwrap();
    std::fs::write(dir.path().join("pb/site.yaml"), LET_RULE).unwrap();
    let tests = dir.path().join("t.yaml");
    std::fs::write(
        &tests,
        "tests:\n  - name: three words\n    files: { /etc/site.conf: \"a b c\\n\" }\n    expect: { site.long-conf: fail }\n  - name: two words\n    files: { /etc/site.conf: \"a b\\n\" }\n    expect: { site.long-conf: pass }\n  - name: no file\n    expect: { site.long-conf: pass }\n",
    )
    .unwrap();
    let pb = dir.path().join("pb");
    let (code, out) = gpufix(&[
        "--playbooks",
        pb.to_str().unwrap(),
        "test",
        tests.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("2 passed, 1 failed"), "{out}");
    assert!(
        out.contains("site.long-conf: expected pass, got unknown (`conf.text` is not available)"),
        "{out}"
    );

    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/site.conf"), "x y z w\n").unwrap();
    let (_, out) = gpufix(&[
        "--playbooks",
        pb.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
        "--sample",
        "0",
        "plan",
        "--only",
        "site.long-conf",
    ]);
    assert!(out.contains("4 words: x y z w"), "{out}");

    let (code, out) = gpufix(&[
        "--playbooks",
        pb.to_str().unwrap(),
        "explain",
        "site.long-conf",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "where (let):\n    text = conf.text | trim\n    words = text | split | length"
        ),
        "{out}"
    );
}

/// Bindings are checked like every expression: unknown filters and names, with file:line,
/// all at once; a name may not shadow a probe.
#[test]
fn let_bindings_are_validated_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = LET_RULE
        .replace("conf.text | trim\"", "conf.text | trimm\"")
        .replace("text | split | length", "txt | split | length")
        .replace(
            "    fail_when: \"words > 2\"",
            "      conf: \"1\"\n    fail_when: \"word > 2\"",
        );
    std::fs::write(dir.path().join("site.yaml"), &bad).unwrap();
    let (code, out) = gpufix(&["--playbooks", dir.path().to_str().unwrap(), "validate"]);
    assert_eq!(code, 1, "{out}");
    for want in [
        "site.yaml:12 (at /rules/0/let/text)",
        "unknown filter `trimm`",
        "did you mean `trim`?",
        "site.yaml:13 (at /rules/0/let/words)",
        "`txt` is not a declared probe or parameter",
        "did you mean `text`?",
        "site.yaml:14 (at /rules/0/let/conf)",
        "`let` name `conf` is already a probe",
        "site.yaml:15 (at /rules/0/fail_when)",
        "did you mean `words`?",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
}

#[test]
fn explain_shows_the_bindings_of_data_workers_too_few() {
    let (code, out) = gpufix(&["explain", "data.workers-too-few"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("    config_suggests = [params.max_workers_text if cfg.workload == 'text' else (params.max_workers_cached if cfg.workload == 'cached-latents' else params.max_workers), (params.node_cpus if params.node_cpus > 0 else cfg.node.cpus) // cfg.node.gpus] | min"),
        "{out}"
    );
    assert!(
        out.contains("cfg.values.num_workers < config_suggests"),
        "{out}"
    );
}

const DEFAULTS_BOOK: &str = r#"playbook: site
layer: data
title: Site rules
defaults:
  depends_on: [site.base]
rules:
  - id: site.base
    title: /etc/base exists
    why: the rule the others need
    severity: info
    probes:
      f: { kind: file, path: /etc/base, missing_ok: true }
    fail_when: "f.exists"
    message: "/etc/base exists"
  - id: site.inherits
    title: /etc/x exists
    why: depends on site.base through the playbook's defaults
    severity: info
    probes:
      f: { kind: file, path: /etc/x, missing_ok: true }
    fail_when: "f.exists"
    message: "/etc/x exists"
  - id: site.own
    title: /etc/x exists (no dependency)
    why: writes its own empty depends_on
    severity: info
    depends_on: []
    probes:
      f: { kind: file, path: /etc/x, missing_ok: true }
    fail_when: "f.exists"
    message: "/etc/x exists"
"#;

/// `defaults: {depends_on: […]}` gives every rule of the file the dependency, except the rule
/// it names (no rule depends on itself) and a rule that writes its own `depends_on`.
#[test]
fn playbook_defaults_apply_unless_a_rule_writes_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let pb = dir.path().join("pb");
    std::fs::create_dir(&pb).unwrap();
    std::fs::write(pb.join("site.yaml"), DEFAULTS_BOOK).unwrap();
    let tests = dir.path().join("t.yaml");
    std::fs::write(
        &tests,
        "tests:\n  - name: base fails, so the inheriting rule is blocked\n    files: { /etc/base: \"\", /etc/x: \"\" }\n    expect: { site.base: fail, site.inherits: blocked, site.own: fail }\n  - name: base passes\n    files: { /etc/x: \"\" }\n    expect: { site.base: pass, site.inherits: fail, site.own: fail }\n",
    )
    .unwrap();
    let (code, out) = gpufix(&[
        "--playbooks",
        pb.to_str().unwrap(),
        "test",
        tests.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2 passed, 0 failed"), "{out}");

    let (_, out) = gpufix(&[
        "--playbooks",
        pb.to_str().unwrap(),
        "explain",
        "site.inherits",
    ]);
    assert!(
        out.contains("blocked while any of these fails or is unknown: site.base"),
        "{out}"
    );
    let (_, out) = gpufix(&["--playbooks", pb.to_str().unwrap(), "explain", "site.base"]);
    assert!(!out.contains("blocked while"), "{out}");
}

#[test]
fn playbook_defaults_are_validated_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("site.yaml"),
        DEFAULTS_BOOK.replace("depends_on: [site.base]", "depends_on: [site.bsae]"),
    )
    .unwrap();
    let (code, out) = gpufix(&["--playbooks", dir.path().to_str().unwrap(), "validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("`defaults` names unknown rule `site.bsae`")
            && out.contains("site.yaml:5 (at /defaults/depends_on/0)")
            && out.contains("did you mean `site.base`?"),
        "{out}"
    );
    // reported once, where it is written, not once per inheriting rule
    assert_eq!(out.matches("site.bsae").count(), 1, "{out}");

    std::fs::write(
        dir.path().join("site.yaml"),
        DEFAULTS_BOOK.replace("  depends_on: [site.base]", "  severity: info"),
    )
    .unwrap();
    let (code, out) = gpufix(&["--playbooks", dir.path().to_str().unwrap(), "validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("site.yaml:5"), "{out}");
}

/// The built-in playbooks use `defaults` for the NVML dependency.
#[test]
fn builtin_playbooks_use_defaults_for_the_nvml_dependency() {
    for f in ["driver", "cuda", "memory"] {
        let text = std::fs::read_to_string(repo().join(format!("playbooks/{f}.yaml"))).unwrap();
        assert!(
            text.contains("defaults:\n  depends_on: [driver.nvml-unavailable]"),
            "{f}"
        );
        assert!(
            !text.contains("    depends_on: [driver.nvml-unavailable]\n"),
            "{f} repeats the default"
        );
    }
}

/// A host given twice (a snapshot and pasted nvidia-smi output), or a `patch` that does not
/// fit the snapshot's form, is an error with what to do, not a silent choice.
#[test]
fn conflicting_or_malformed_test_hosts_are_errors() {
    let fixtures = repo().join("tests/fixtures");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.yaml");
    std::fs::write(
        &f,
        format!(
            "tests:\n  - name: two hosts\n    snapshot: {s}\n    evidence: [{e}]\n    expect: {{ driver.persistence-off: pass }}\n  - name: bad patch\n    snapshot: {s}\n    patch: {{ nvml: [{{ ok: {{ gpus: [{{ persistence: maybe }}] }} }}] }}\n    expect: {{ driver.persistence-off: pass }}\n",
            s = fixtures.join("hosts/h200-live.snapshot.json").display(),
            e = fixtures.join("evidence/nvidia_smi/h200-q.txt").display(),
        ),
    )
    .unwrap();
    let (code, out) = gpufix(&["test", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("0 passed, 2 failed"), "{out}");
    assert!(
        out.contains("cannot be combined with `snapshot`")
            && out.contains("help: give the host either as evidence or as a snapshot"),
        "{out}"
    );
    assert!(
        out.contains("`patch` does not make a snapshot") && out.contains("gpufix schema snapshot"),
        "{out}"
    );
}

/// A fix action's `when:` is an expression over the rule's names, checked at load like
/// `fail_when` (it is the action's condition, not a parameter of its kind).
#[test]
fn a_fix_actions_when_is_validated_as_an_expression() {
    let rule = |when: &str| {
        format!(
            "playbook: site\ntitle: site\nlayer: memory\nrules:\n  - id: site.when\n    title: t\n    why: w\n    severity: info\n    depends_on: []\n    probes:\n      m: {{ kind: torch.memory, optional: true }}\n    fail_when: \"m.reserved_mib is defined\"\n    message: m\n    fix:\n      safety: safe\n      restart: job\n      actions:\n        - kind: env.set\n          when: {when}\n          name: A\n          value: b\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let check = |text: String| {
        std::fs::write(dir.path().join("site.yaml"), text).unwrap();
        gpufix(&["--playbooks", dir.path().to_str().unwrap(), "validate"])
    };
    let (code, out) = check(rule("\"m.given\""));
    assert_eq!(code, 0, "{out}");
    let (code, out) = check(rule("\"n.given\""));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("/rules/0/fix/actions/0/when"), "{out}");
    assert!(out.contains("`n` is not a declared probe"), "{out}");
    let (code, out) = check(rule("true"));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("`when` must be an expression string"), "{out}");
}
