//! Fleet renderers and integrations: JUnit parses back with the counts CI dashboards show,
//! the Prometheus textfile passes `promtool check metrics` (when promtool is installed; see
//! tests/ci-deps.sh), Nagios exit codes per state, the Slurm reason, and
//! contrib/slurm/gpufix-healthcheck driving a fake `scontrol`.

use gpufix::render::{junit, nagios, prometheus, slurm};
use gpufix::report::{FixProposal, PlannedChange, Report, RuleResult, Safety, Severity, Verdict};
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn rule(id: &str, layer: &str, severity: Severity, verdict: Verdict) -> RuleResult {
    RuleResult {
        id: id.to_string(),
        title: format!("title of {id}"),
        layer: layer.to_string(),
        severity,
        verdict,
        reason: None,
        messages: vec![],
        evidence: BTreeMap::new(),
        blocked_by: vec![],
        why: format!("why {id} matters"),
        fix: None,
        source: format!("playbooks/{layer}.yaml"),
    }
}

fn report(results: Vec<RuleResult>) -> Report {
    Report {
        version: 1,
        gpufix_version: "0.1.0".to_string(),
        host: "root /host".to_string(),
        generated_at: "2025-01-02T03:04:05Z".to_string(),
        summary: Report::summarize(&results),
        results,
        changes: vec![],
        notes: vec![],
        timings: None,
    }
}

/// One rule per verdict across three layers, with messages, evidence, a fix and a planned diff.
fn all_verdicts() -> Report {
    let mut persistence = rule(
        "driver.persistence-off",
        "driver",
        Severity::Critical,
        Verdict::Fail,
    );
    persistence.messages = vec![
        "GPU 0 persistence mode is off".into(),
        "GPU 1 persistence mode is off".into(),
    ];
    persistence
        .evidence
        .insert("gpu.persistence".into(), json!(false));
    persistence.fix = Some(FixProposal {
        safety: Safety::Disruptive,
        restart: "nothing".into(),
        actions: vec![json!({"kind": "nvidia.persistence", "gpu": 0})],
        instructions: None,
    });
    let mut pass = rule(
        "driver.uvm-module-missing",
        "driver",
        Severity::Critical,
        Verdict::Pass,
    );
    pass.evidence
        .insert("mods.loaded".into(), json!(["nvidia", "nvidia_uvm"]));
    let mut unknown = rule(
        "cuda.version-mismatch",
        "cuda",
        Severity::Warning,
        Verdict::Unknown,
    );
    unknown.reason = Some("probe `nvml` timed out after 5s".into());
    let mut blocked = rule(
        "cuda.context-smoke",
        "cuda",
        Severity::Warning,
        Verdict::Blocked,
    );
    blocked.blocked_by = vec!["driver.persistence-off".into()];
    blocked.reason = Some("waits on `driver.persistence-off`, which fails".into());
    let mut na = rule(
        "data.dataloader-workers",
        "data",
        Severity::Warning,
        Verdict::NotApplicable,
    );
    na.reason = Some("needs `--config`".into());
    let mut waived = rule(
        "data.mount-noatime",
        "data",
        Severity::Info,
        Verdict::Waived,
    );
    waived.reason = Some("waived until 2025-12-31: nfs scratch".into());
    let mut r = report(vec![pass, persistence, unknown, blocked, na, waived]);
    r.changes.push(PlannedChange {
        rule: "driver.persistence-off".into(),
        kind: "env.unset".into(),
        target: "/etc/environment".into(),
        safety: Safety::Safe,
        summary: "unset CUDA_LAUNCH_BLOCKING in /etc/environment".into(),
        diff: Some("--- /etc/environment\n+++ /etc/environment\n@@ -1,2 +1 @@\n PATH=/usr/bin\n-CUDA_LAUNCH_BLOCKING=1\n".into()),
        before: None,
        after: None,
        before_text: Some("PATH=/usr/bin\nCUDA_LAUNCH_BLOCKING=1\n".into()),
        after_text: Some("PATH=/usr/bin\n".into()),
        part: "file".into(),
        action: serde_json::json!({"name": "CUDA_LAUNCH_BLOCKING"}),
        fingerprint: "sha256:0".into(),
        restart: "the training job".into(),
    });
    r
}

// ---------------------------------------------------------------------------------------- junit

#[derive(Debug, Default)]
struct Case {
    suite: String,
    classname: String,
    name: String,
    failure: Option<(String, String, String)>, // type, message, body
    skipped: Option<String>,
}

#[derive(Debug, Default)]
struct Parsed {
    root: BTreeMap<String, String>,
    suites: Vec<BTreeMap<String, String>>,
    cases: Vec<Case>,
}

fn attrs(e: &BytesStart) -> BTreeMap<String, String> {
    e.attributes()
        .map(|a| {
            let a = a.unwrap();
            (
                a.key.as_ref().to_string(),
                a.normalized_value(XmlVersion::Implicit1_0)
                    .unwrap()
                    .into_owned(),
            )
        })
        .collect()
}

/// Parses the JUnit document back; panics on anything that is not well-formed XML.
fn parse_junit(xml: &str) -> Parsed {
    let mut reader = Reader::from_str(xml);
    let mut p = Parsed::default();
    loop {
        match reader.read_event().unwrap() {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == "testsuites" => {
                p.root = attrs(&e)
            }
            Event::Start(e) if e.name().as_ref() == "testsuite" => p.suites.push(attrs(&e)),
            ev @ (Event::Start(_) | Event::Empty(_)) => {
                let (e, empty) = match &ev {
                    Event::Start(e) => (e, false),
                    Event::Empty(e) => (e, true),
                    _ => unreachable!(),
                };
                let a = attrs(e);
                match e.name().as_ref() {
                    "testcase" => p.cases.push(Case {
                        suite: p.suites.last().unwrap()["name"].clone(),
                        classname: a["classname"].clone(),
                        name: a["name"].clone(),
                        ..Case::default()
                    }),
                    "skipped" => p.cases.last_mut().unwrap().skipped = Some(a["message"].clone()),
                    "failure" => {
                        assert!(!empty, "a failure carries a body");
                        let raw = reader.read_text(e.to_end().name()).unwrap();
                        let body = quick_xml::escape::unescape(&raw).unwrap().into_owned();
                        p.cases.last_mut().unwrap().failure =
                            Some((a["type"].clone(), a["message"].clone(), body));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    p
}

#[test]
fn junit_has_one_suite_per_layer_and_counts_every_verdict() {
    let xml = junit::render(&all_verdicts());
    let p = parse_junit(&xml);
    assert_eq!(p.root["tests"], "6");
    assert_eq!(p.root["failures"], "3");
    assert_eq!(p.root["skipped"], "2");
    let names: Vec<&str> = p.suites.iter().map(|s| s["name"].as_str()).collect();
    assert_eq!(
        names,
        ["driver", "cuda", "data"],
        "suites follow evaluation order"
    );
    for s in &p.suites {
        let cases: Vec<&Case> = p.cases.iter().filter(|c| c.suite == s["name"]).collect();
        assert_eq!(s["tests"], cases.len().to_string(), "suite {}", s["name"]);
        let failures = cases.iter().filter(|c| c.failure.is_some()).count();
        let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
        assert_eq!(s["failures"], failures.to_string(), "suite {}", s["name"]);
        assert_eq!(s["skipped"], skipped.to_string(), "suite {}", s["name"]);
        for c in cases {
            assert_eq!(c.classname, format!("gpufix.{}", s["name"]));
        }
    }
    let types: Vec<&str> = p
        .cases
        .iter()
        .filter_map(|c| c.failure.as_ref())
        .map(|f| f.0.as_str())
        .collect();
    assert_eq!(types, ["fail", "unknown", "blocked"]);
    let waived = p
        .cases
        .iter()
        .find(|c| c.name == "data.mount-noatime")
        .unwrap();
    assert_eq!(
        waived.skipped.as_deref(),
        Some("waived until 2025-12-31: nfs scratch")
    );
    let pass = p
        .cases
        .iter()
        .find(|c| c.name == "driver.uvm-module-missing")
        .unwrap();
    assert!(pass.failure.is_none() && pass.skipped.is_none());
}

#[test]
fn junit_failure_body_carries_messages_evidence_fix_and_diff() {
    let p = parse_junit(&junit::render(&all_verdicts()));
    let case = p
        .cases
        .iter()
        .find(|c| c.name == "driver.persistence-off")
        .unwrap();
    let (kind, message, body) = case.failure.as_ref().unwrap();
    assert_eq!(kind, "fail");
    assert_eq!(
        message,
        "GPU 0 persistence mode is off; GPU 1 persistence mode is off"
    );
    for needle in [
        "- GPU 1 persistence mode is off",
        "gpu.persistence = false",
        "fix (disruptive, restart: nothing):",
        r#"{"kind":"nvidia.persistence","gpu":0}"#,
        "-CUDA_LAUNCH_BLOCKING=1",
        "why: why driver.persistence-off matters",
    ] {
        assert!(body.contains(needle), "body lacks {needle:?}:\n{body}");
    }
    let unknown = p
        .cases
        .iter()
        .find(|c| c.name == "cuda.version-mismatch")
        .unwrap();
    assert_eq!(
        unknown.failure.as_ref().unwrap().1,
        "probe `nvml` timed out after 5s"
    );
    let blocked = p
        .cases
        .iter()
        .find(|c| c.name == "cuda.context-smoke")
        .unwrap();
    assert!(
        blocked
            .failure
            .as_ref()
            .unwrap()
            .2
            .contains("blocked by: driver.persistence-off")
    );
}

#[test]
fn junit_escapes_markup_and_replaces_characters_xml_cannot_hold() {
    let mut r = rule("site.odd<&>\"'", "data", Severity::Warning, Verdict::Fail);
    r.messages = vec!["mount </testcase><x a=\"1\"> & \u{1}\u{1b}[0m done".into()];
    r.evidence
        .insert("log.line".into(), json!("]]> <![CDATA[ \u{0}"));
    let p = parse_junit(&junit::render(&report(vec![r])));
    assert_eq!(p.cases.len(), 1);
    assert_eq!(p.cases[0].name, "site.odd<&>\"'");
    let (_, message, body) = p.cases[0].failure.as_ref().unwrap();
    assert_eq!(
        message,
        "mount </testcase><x a=\"1\"> & \u{FFFD}\u{FFFD}[0m done"
    );
    assert!(
        body.contains(r#"log.line = "]]> <![CDATA[ \u0000""#),
        "{body}"
    );
}

#[test]
fn junit_of_an_empty_report_is_a_valid_empty_run() {
    let p = parse_junit(&junit::render(&report(vec![])));
    assert_eq!(p.root["tests"], "0");
    assert!(p.suites.is_empty());
}

// ----------------------------------------------------------------------------------- prometheus

fn sample(text: &str, series: &str) -> Option<String> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .map(str::to_string)
}

#[test]
fn prometheus_exports_each_verdict_as_a_one_hot_label_set() {
    let text = prometheus::render(
        &all_verdicts(),
        Some(std::time::Duration::from_millis(1250)),
    );
    let fail = r#"gpufix_rule_verdict{rule="driver.persistence-off",layer="driver",severity="critical",verdict="fail"}"#;
    let pass = r#"gpufix_rule_verdict{rule="driver.persistence-off",layer="driver",severity="critical",verdict="pass"}"#;
    assert_eq!(sample(&text, fail).as_deref(), Some("1"));
    assert_eq!(sample(&text, pass).as_deref(), Some("0"));
    // Six series per rule, exactly one of them 1.
    let rule_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("gpufix_rule_verdict{"))
        .collect();
    assert_eq!(rule_lines.len(), 6 * 6);
    assert_eq!(rule_lines.iter().filter(|l| l.ends_with(" 1")).count(), 6);
    // The fixture holds one rule of each verdict.
    for v in Verdict::ALL {
        assert_eq!(
            sample(
                &text,
                &format!("gpufix_rules{{verdict=\"{}\"}}", v.as_str())
            )
            .as_deref(),
            Some("1")
        );
    }
    assert_eq!(
        sample(&text, "gpufix_planned_changes").as_deref(),
        Some("1")
    );
    assert_eq!(
        sample(&text, r#"gpufix_info{version="0.1.0"}"#).as_deref(),
        Some("1")
    );
    assert_eq!(
        sample(&text, "gpufix_audit_timestamp_seconds").as_deref(),
        Some("1735787045")
    );
    assert_eq!(
        sample(&text, "gpufix_audit_duration_seconds").as_deref(),
        Some("1.25")
    );
    assert!(text.contains("# TYPE gpufix_rule_verdict gauge\n"));
    let without = prometheus::render(&all_verdicts(), None);
    assert!(!without.contains("gpufix_audit_duration_seconds"));
}

#[test]
fn prometheus_escapes_label_values() {
    assert_eq!(prometheus::label("a\\b\"c\nd"), r#"a\\b\"c\nd"#);
    let text = prometheus::render(
        &report(vec![rule(
            "site.x\"y",
            "da\\ta",
            Severity::Info,
            Verdict::Pass,
        )]),
        None,
    );
    assert!(
        text.contains(r#"rule="site.x\"y",layer="da\\ta""#),
        "{text}"
    );
}

/// Runs `promtool check metrics`, which parses the exposition format and lints names, types and
/// help strings. Skips with a note where promtool is not installed.
fn promtool_check(text: &str) -> Option<(bool, String)> {
    let promtool = std::env::var("PROMTOOL").unwrap_or_else(|_| "promtool".into());
    let mut child = match Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => {
            eprintln!(
                "note: `{promtool}` not found, skipping the promtool check (tests/ci-deps.sh installs it)"
            );
            return None;
        }
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let msg = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), msg))
}

#[test]
fn prometheus_output_passes_promtool() {
    let mut odd = rule(
        "site.odd\"id\\with\nnewline",
        "data",
        Severity::Info,
        Verdict::Unknown,
    );
    odd.reason = Some("x".into());
    let mut r = all_verdicts();
    r.results.push(odd);
    let text = prometheus::render(&r, Some(std::time::Duration::from_secs(3)));
    let Some((ok, msg)) = promtool_check(&text) else {
        return;
    };
    assert!(ok, "promtool rejected the textfile:\n{msg}\n{text}");
    assert!(msg.trim().is_empty(), "promtool lint findings:\n{msg}");
    // promtool itself must catch a broken file, or the check above proves nothing.
    let (ok, _) = promtool_check("gpufix_rules{verdict=\"fail} 1\n").unwrap();
    assert!(!ok, "promtool accepted an unterminated label value");
}

#[test]
fn textfile_is_replaced_atomically_with_no_temporary_left_behind() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpufix.prom");
    std::fs::write(&path, "old\n").unwrap();
    prometheus::write_textfile_atomic(&path, "gpufix_rules{verdict=\"fail\"} 2\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "gpufix_rules{verdict=\"fail\"} 2\n"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["gpufix.prom"]);

    let missing = dir.path().join("no-such-dir").join("gpufix.prom");
    assert!(prometheus::write_textfile_atomic(&missing, "x").is_err());
    // A directory in the way of the rename: the write fails and cleans up its temporary.
    let blocked = dir.path().join("blocked.prom");
    std::fs::create_dir_all(blocked.join("inner")).unwrap();
    assert!(prometheus::write_textfile_atomic(&blocked, "x").is_err());
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["blocked.prom", "gpufix.prom"]);
}

// --------------------------------------------------------------------------------------- nagios

#[test]
fn nagios_critical_when_a_critical_rule_fails() {
    let (out, code) = nagios::render(&all_verdicts());
    assert_eq!(code, 2);
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        "GPUFIX CRITICAL - 1 failing: driver.persistence-off; 1 unknown: cuda.version-mismatch; \
         1 blocked: cuda.context-smoke | pass=1;;;0 fail=1;;;0 unknown=1;;;0 blocked=1;;;0 \
         not-applicable=1;;;0 waived=1;;;0"
    );
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "[fail critical] driver.persistence-off: GPU 0 persistence mode is off; GPU 1 persistence mode is off"
    );
    assert_eq!(
        out.lines().count(),
        4,
        "one long-output line per finding:\n{out}"
    );
}

#[test]
fn nagios_warning_for_findings_without_a_critical_failure() {
    let mut warn = rule(
        "data.mount-noatime",
        "data",
        Severity::Warning,
        Verdict::Fail,
    );
    warn.messages = vec!["`/data` is mounted with `atime` | strictatime".into()];
    let (out, code) = nagios::render(&report(vec![
        rule("a.ok", "driver", Severity::Critical, Verdict::Pass),
        warn,
    ]));
    assert_eq!(code, 1);
    assert!(
        out.starts_with("GPUFIX WARNING - 1 failing: data.mount-noatime | "),
        "{out}"
    );
    assert!(
        out.contains("`/data` is mounted with `atime` / strictatime"),
        "a `|` in text would start perfdata:\n{out}"
    );

    // A critical rule that is only unknown is a warning: it was not seen failing.
    let mut unknown = rule(
        "driver.nvml",
        "driver",
        Severity::Critical,
        Verdict::Unknown,
    );
    unknown.reason = Some("probe `nvml` failed".into());
    let (out, code) = nagios::render(&report(vec![
        rule("a.ok", "driver", Severity::Info, Verdict::Pass),
        unknown,
    ]));
    assert_eq!(code, 1, "{out}");
}

#[test]
fn nagios_ok_when_nothing_is_found() {
    let r = report(vec![
        rule("a.ok", "driver", Severity::Critical, Verdict::Pass),
        rule("b.na", "data", Severity::Warning, Verdict::NotApplicable),
        rule("c.waived", "data", Severity::Critical, Verdict::Waived),
    ]);
    let (out, code) = nagios::render(&r);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "GPUFIX OK - no findings in 3 rules | pass=1;;;0 fail=0;;;0 unknown=0;;;0 blocked=0;;;0 not-applicable=1;;;0 waived=1;;;0\n"
    );
}

#[test]
fn nagios_unknown_when_nothing_could_be_evaluated() {
    let mut u = rule(
        "driver.nvml",
        "driver",
        Severity::Critical,
        Verdict::Unknown,
    );
    u.reason = Some("probe `nvml` failed".into());
    let r = report(vec![
        u,
        rule("cuda.smoke", "cuda", Severity::Critical, Verdict::Blocked),
        rule("data.x", "data", Severity::Info, Verdict::NotApplicable),
    ]);
    let (out, code) = nagios::render(&r);
    assert_eq!(code, 3);
    assert!(out.starts_with("GPUFIX UNKNOWN - no rule could be evaluated; 1 unknown: driver.nvml; 1 blocked: cuda.smoke |"), "{out}");
    assert_eq!(nagios::render(&report(vec![])).1, 3);
    let (out, code) =
        nagios::render_error("playbook `site.yaml`: unknown key `fial_when`\nat line 3");
    assert_eq!(
        (out.as_str(), code),
        (
            "GPUFIX UNKNOWN - playbook `site.yaml`: unknown key `fial_when` at line 3\n",
            3
        )
    );
}

#[test]
fn nagios_names_a_few_rules_then_counts_the_rest() {
    let results = (0..5)
        .map(|i| {
            rule(
                &format!("data.r{i}"),
                "data",
                Severity::Warning,
                Verdict::Fail,
            )
        })
        .collect();
    let (out, _) = nagios::render(&report(results));
    assert!(
        out.starts_with("GPUFIX WARNING - 5 failing: data.r0, data.r1, data.r2, +2 more |"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------- slurm

#[test]
fn slurm_reason_names_the_most_urgent_finding() {
    assert_eq!(
        slurm::slurm_reason(&report(vec![rule(
            "a",
            "driver",
            Severity::Critical,
            Verdict::Pass
        )])),
        None
    );
    assert_eq!(slurm::render(&report(vec![])), "");
    // The critical failure wins over earlier-evaluated unknown and warning findings.
    let r = report(vec![
        rule(
            "driver.nvml",
            "driver",
            Severity::Critical,
            Verdict::Unknown,
        ),
        rule("data.mount", "data", Severity::Warning, Verdict::Fail),
        rule(
            "comm.nccl-socket",
            "comm",
            Severity::Critical,
            Verdict::Fail,
        ),
        rule("comm.blocked", "comm", Severity::Critical, Verdict::Blocked),
    ]);
    assert_eq!(
        slurm::slurm_reason(&r).as_deref(),
        Some("gpufix: comm.nccl-socket, +3 more")
    );
    assert_eq!(slurm::render(&r), "gpufix: comm.nccl-socket, +3 more\n");
    let single = report(vec![rule(
        "data.mount",
        "data",
        Severity::Warning,
        Verdict::Fail,
    )]);
    assert_eq!(
        slurm::slurm_reason(&single).as_deref(),
        Some("gpufix: data.mount")
    );
}

#[test]
fn slurm_reason_stays_short_and_plain() {
    let long = "site.".to_string() + &"very-long-rule-name-".repeat(10);
    let r = report(vec![
        rule(&long, "data", Severity::Warning, Verdict::Fail),
        rule("b", "data", Severity::Warning, Verdict::Fail),
        rule("c", "data", Severity::Info, Verdict::Blocked),
    ]);
    let reason = slurm::slurm_reason(&r).unwrap();
    assert!(
        reason.len() <= slurm::MAX_REASON,
        "{} chars: {reason}",
        reason.len()
    );
    assert!(reason.starts_with("gpufix: site.very-long-rule-name-"));
    assert!(reason.ends_with("..., +2 more"), "{reason}");
    let odd = report(vec![rule(
        "site.a b\"c",
        "data",
        Severity::Warning,
        Verdict::Fail,
    )]);
    assert_eq!(
        slurm::slurm_reason(&odd).as_deref(),
        Some("gpufix: site.a_b_c")
    );
}

// --------------------------------------------------------------- contrib/slurm/gpufix-healthcheck

fn healthcheck_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/gpufix-healthcheck")
}

fn write_exec(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs the health check against a fake `gpufix` (prints `reason`, exits `rc`) and a fake
/// `scontrol` that reports `node_line` for `show node` and logs every call. Returns the script's
/// exit code, the scontrol calls (argv joined by `|`) and the gpufix argv.
fn healthcheck(rc: i32, reason: &str, node_line: &str) -> (i32, Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_exec(
        &d.join("gpufix"),
        &format!(
            "#!/bin/sh\necho \"$*\" > '{log}'\nprintf '%s' '{reason}'\necho 'some warning' >&2\nexit {rc}\n",
            log = d.join("gpufix.log").display(),
        ),
    );
    std::fs::write(d.join("node"), node_line).unwrap();
    write_exec(
        &d.join("scontrol"),
        &format!(
            "#!/usr/bin/env bash\n(IFS='|'; echo \"$*\") >> '{log}'\nif [ \"$1\" = show ]; then cat '{node}'; fi\n",
            log = d.join("scontrol.log").display(),
            node = d.join("node").display(),
        ),
    );
    let status = Command::new("bash")
        .arg(healthcheck_script())
        .env("GPUFIX", d.join("gpufix"))
        .env("SCONTROL", d.join("scontrol"))
        .env("GPUFIX_NODENAME", "gpu-node-7")
        .env("GPUFIX_AUDIT_ARGS", "--values /etc/gpufix/values.yaml")
        .env("TMPDIR", d)
        .status()
        .unwrap();
    let calls = std::fs::read_to_string(d.join("scontrol.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let gpufix_args = std::fs::read_to_string(d.join("gpufix.log")).unwrap_or_default();
    let leftovers = std::fs::read_dir(d).unwrap().filter(|e| {
        e.as_ref()
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("gpufix-healthcheck.")
    });
    assert_eq!(
        leftovers.count(),
        0,
        "the script left its temporary file behind"
    );
    (status.code().unwrap(), calls, gpufix_args)
}

const IDLE: &str =
    "NodeName=gpu-node-7 Arch=x86_64 CPUTot=64 State=IDLE ThreadsPerCore=2 Partitions=gpu\n";
const SHOW: &str = "show|node|-o|gpu-node-7";

#[test]
fn healthcheck_drains_a_node_with_findings() {
    let (code, calls, args) = healthcheck(2, "gpufix: driver.persistence-off, +1 more\n", IDLE);
    assert_eq!(code, 0);
    assert_eq!(
        args.trim(),
        "audit --format slurm --values /etc/gpufix/values.yaml"
    );
    assert_eq!(
        calls,
        [
            SHOW,
            "update|nodename=gpu-node-7|state=drain|reason=gpufix: driver.persistence-off, +1 more"
        ]
    );
}

#[test]
fn healthcheck_updates_its_own_drain_only_when_the_reason_changes() {
    let own = "NodeName=gpu-node-7 State=IDLE+DRAIN Partitions=gpu Reason=gpufix: data.mount [root@2025-01-02T03:04:05]\n";
    let (_, calls, _) = healthcheck(2, "gpufix: data.mount\n", own);
    assert_eq!(calls, [SHOW], "already drained for the same reason");
    let (_, calls, _) = healthcheck(2, "gpufix: driver.xid\n", own);
    assert_eq!(
        calls,
        [
            SHOW,
            "update|nodename=gpu-node-7|state=drain|reason=gpufix: driver.xid"
        ]
    );
}

#[test]
fn healthcheck_resumes_only_nodes_it_drained() {
    let own = "NodeName=gpu-node-7 State=IDLE+DRAIN Partitions=gpu Reason=gpufix: data.mount [root@2025-01-02T03:04:05]\n";
    let (code, calls, _) = healthcheck(0, "", own);
    assert_eq!(code, 0);
    assert_eq!(calls, [SHOW, "update|nodename=gpu-node-7|state=resume"]);

    let foreign = "NodeName=gpu-node-7 State=IDLE+DRAIN Partitions=gpu Reason=bad DIMM, ticket 4711 [admin@2025-01-02T03:04:05]\n";
    let (code, calls, _) = healthcheck(0, "", foreign);
    assert_eq!(code, 0);
    assert_eq!(
        calls,
        [SHOW],
        "a clean audit must not resume a node an admin drained"
    );

    let (_, calls, _) = healthcheck(0, "", IDLE);
    assert_eq!(calls, [SHOW], "nothing to resume on a healthy node");
}

#[test]
fn healthcheck_leaves_a_foreign_drain_alone_even_with_findings() {
    let foreign = "NodeName=gpu-node-7 State=DOWN+DRAIN Partitions=gpu Reason=Not responding [slurm@2025-01-02T03:04:05]\n";
    let (code, calls, _) = healthcheck(2, "gpufix: driver.persistence-off\n", foreign);
    assert_eq!(code, 0);
    assert_eq!(calls, [SHOW]);
}

#[test]
fn healthcheck_changes_nothing_when_the_audit_errors() {
    let (code, calls, _) = healthcheck(1, "", IDLE);
    assert_eq!(code, 1);
    assert!(
        calls.is_empty(),
        "a broken audit must not drain or resume: {calls:?}"
    );
}

// ------------------------------------------------------------------------ contrib/slurm/gpufix.nhc

/// Sources the NHC check with stub `die`/`log` (NHC's own functions) and a fake gpufix; returns
/// what `check_gpufix` returned and the calls the stubs saw.
fn nhc_check(rc: i32, on_error: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_exec(
        &d.join("gpufix"),
        &format!(
            "#!/bin/sh\necho \"$*\" > '{}'\nprintf 'gpufix: driver.xid, +1 more\\nsecond line\\n'\necho noise >&2\nexit {rc}\n",
            d.join("argv").display()
        ),
    );
    let nhc = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/gpufix.nhc");
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"die() { echo "die $*"; }; log() { echo "log $*"; }; source "$1"; check_gpufix --values /etc/gpufix/values.yaml; echo "returned $?""#)
        .arg("nhc")
        .arg(&nhc)
        .env("GPUFIX_BIN", d.join("gpufix"))
        .env("GPUFIX_ON_ERROR", on_error)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (calls, returned) = stdout
        .trim_end()
        .rsplit_once('\n')
        .map_or(("", stdout.trim_end()), |(a, b)| (a, b));
    let code = returned.strip_prefix("returned ").unwrap().parse().unwrap();
    (
        code,
        calls.to_string(),
        std::fs::read_to_string(d.join("argv")).unwrap(),
    )
}

#[test]
fn nhc_check_fails_with_the_reason_on_findings_only() {
    let (code, calls, argv) = nhc_check(2, "ignore");
    assert_eq!(
        (code, calls.as_str()),
        (1, "die 1 gpufix: driver.xid, +1 more")
    );
    assert_eq!(
        argv.trim(),
        "audit --format slurm --values /etc/gpufix/values.yaml"
    );
    let (code, calls, _) = nhc_check(0, "ignore");
    assert_eq!((code, calls.as_str()), (0, ""));
    let (code, calls, _) = nhc_check(1, "ignore");
    assert_eq!(code, 0, "an audit error must not fail the node: {calls}");
    assert!(
        calls.starts_with("log check_gpufix:") && calls.contains("(exit 1)"),
        "{calls}"
    );
    let (code, calls, _) = nhc_check(1, "drain");
    assert_eq!(
        (code, calls.as_str()),
        (1, "die 1 gpufix: audit error (exit 1)")
    );
}
