//! Fleet renderers and integrations: JUnit parses back with the counts CI dashboards show,
//! the Prometheus textfile passes `promtool check metrics` (when promtool is installed; see
//! tests/ci-deps.sh), Nagios exit codes per state, the Slurm reason, and
//! contrib/slurm/gpufix-healthcheck driving a fake `scontrol`.

use gpufix::journal::{RunInfo, RunStatus};
use gpufix::render::{FailPolicy, junit, nagios, prometheus, slurm};
use gpufix::report::{
    FixProposal, GpuRef, PlannedChange, Report, RuleResult, Safety, Severity, Verdict,
};
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
        gpus: vec![],
    }
}

fn report(results: Vec<RuleResult>) -> Report {
    Report {
        version: 1,
        gpufix_version: "0.1.0".to_string(),
        host: "gpu-node-17".to_string(),
        machine_id: Some("0123456789abcdef0123456789abcdef".to_string()),
        judged: "root /host".to_string(),
        inputs: vec![],
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
    classname: String,
    name: String,
    failure: Option<(String, String, String)>, // type, message, body
    element: String,                           // `failure` or `error`
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
                        classname: a["classname"].clone(),
                        name: a["name"].clone(),
                        ..Case::default()
                    }),
                    "skipped" => p.cases.last_mut().unwrap().skipped = Some(a["message"].clone()),
                    el @ ("failure" | "error") => {
                        assert!(!empty, "a failure carries a body");
                        let el = el.to_string();
                        let raw = reader.read_text(e.to_end().name()).unwrap();
                        let body = quick_xml::escape::unescape(&raw).unwrap().into_owned();
                        let case = p.cases.last_mut().unwrap();
                        case.failure = Some((a["type"].clone(), a["message"].clone(), body));
                        case.element = el;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    p
}

/// Runs `xmllint --schema` with Jenkins xunit's junit-10.xsd (vendored from
/// jenkinsci/xunit-plugin, MIT) over the document. `None` where xmllint is not installed; CI
/// installs it (tests/ci-deps.sh) and sets `FLEET_TOOLS_REQUIRED=1` so a missing tool fails.
fn xsd_check(xml: &str) -> Option<(bool, String)> {
    let xsd =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schemas/jenkins-junit-10.xsd");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.xml");
    std::fs::write(&file, xml).unwrap();
    match Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&file)
        .output()
    {
        Ok(o) => Some((
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )),
        Err(_) => {
            engine_missing("xmllint", "apt install libxml2-utils");
            None
        }
    }
}

#[test]
fn junit_passes_jenkins_xunit_schema() {
    let mut odd = rule("site.odd<&>", "data", Severity::Warning, Verdict::Fail);
    odd.messages = vec!["a\u{1} b ]]> <x>".into()];
    let mut all = all_verdicts();
    all.results.push(odd);
    for (what, r) in [("every verdict", all), ("empty", report(vec![]))] {
        let xml = junit::render(&r);
        if let Some((ok, err)) = xsd_check(&xml) {
            assert!(ok, "{what}: junit-10.xsd rejects the report:\n{err}\n{xml}");
        }
    }
    // The check itself can fail: the attributes the old renderer wrote are rejected.
    let bad = junit::render(&all_verdicts()).replace("<testcase ", "<testcase file=\"x.yaml\" ");
    if let Some((ok, _)) = xsd_check(&bad) {
        assert!(
            !ok,
            "xmllint accepted an attribute junit-10.xsd does not allow"
        );
    }
}

#[test]
fn junit_has_one_suite_per_host_and_counts_every_verdict() {
    let xml = junit::render(&all_verdicts());
    let p = parse_junit(&xml);
    assert_eq!(p.root["tests"], "6");
    assert_eq!(p.root["failures"], "1");
    assert_eq!(p.root["errors"], "2", "unknown and blocked are errors");
    assert_eq!(p.suites.len(), 1);
    let s = &p.suites[0];
    assert_eq!(s["name"], "gpu-node-17");
    assert_eq!(s["hostname"], "gpu-node-17");
    assert_eq!(s["tests"], "6");
    assert_eq!(s["failures"], "1");
    assert_eq!(s["errors"], "2");
    assert_eq!(s["skipped"], "2");
    let classes: Vec<&str> = p.cases.iter().map(|c| c.classname.as_str()).collect();
    assert_eq!(
        classes,
        [
            "gpu-node-17.driver",
            "gpu-node-17.driver",
            "gpu-node-17.cuda",
            "gpu-node-17.cuda",
            "gpu-node-17.data",
            "gpu-node-17.data"
        ],
        "classnames carry the host so merged reports of many nodes do not collide"
    );
    let kinds: Vec<(&str, &str)> = p
        .cases
        .iter()
        .filter_map(|c| {
            c.failure
                .as_ref()
                .map(|f| (c.element.as_str(), f.0.as_str()))
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("failure", "fail"),
            ("error", "unknown"),
            ("error", "blocked")
        ]
    );
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
    assert!(
        xml.contains(
            r#"<property name="gpufix.machine-id" value="0123456789abcdef0123456789abcdef"/>"#
        ),
        "{xml}"
    );
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

fn extras(duration_ms: Option<u64>) -> prometheus::Extras<'static> {
    prometheus::Extras {
        duration: duration_ms.map(std::time::Duration::from_millis),
        ..Default::default()
    }
}

#[test]
fn prometheus_exports_rule_info_once_and_one_lean_verdict_series_per_rule() {
    let text = prometheus::render(&all_verdicts(), &extras(Some(1250)));
    assert_eq!(
        sample(
            &text,
            r#"gpufix_rule_info{rule="driver.persistence-off",layer="driver",severity="critical"}"#
        )
        .as_deref(),
        Some("1")
    );
    assert_eq!(
        sample(
            &text,
            r#"gpufix_rule_verdict{rule="driver.persistence-off",verdict="fail"}"#
        )
        .as_deref(),
        Some("1")
    );
    // Two series per rule: its attributes once, its current verdict once; layer and severity
    // appear on no other series.
    let per_rule = |name: &str| {
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .count()
    };
    assert_eq!(per_rule("gpufix_rule_info"), 6);
    assert_eq!(per_rule("gpufix_rule_verdict"), 6);
    let with_severity = text
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("severity="))
        .count();
    assert_eq!(with_severity, 6, "severity only on gpufix_rule_info");
    assert!(
        !text.contains("gpufix_gpu_rule_failing"),
        "per-GPU is opt-in"
    );
    assert!(!text.contains("gpufix_apply_runs"), "no journal was read");
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
        assert_eq!(
            text.matches(&format!("verdict=\"{}\"}} 1", v.as_str()))
                .count(),
            2,
            "one rule and one count of verdict {}",
            v.as_str()
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
    let without = prometheus::render(&all_verdicts(), &extras(None));
    assert!(!without.contains("gpufix_audit_duration_seconds"));
}

fn per_gpu_report() -> Report {
    let mut clocks = rule(
        "driver.clocks-throttled",
        "driver",
        Severity::Warning,
        Verdict::Fail,
    );
    clocks.gpus = vec![
        GpuRef {
            index: 1,
            uuid: Some("GPU-3b1c2d4e-0000-1111-2222-333344445555".into()),
        },
        GpuRef {
            index: 3,
            uuid: None,
        },
    ];
    // A passing per-GPU rule exports nothing per GPU.
    let pass = rule(
        "driver.ecc-errors",
        "driver",
        Severity::Critical,
        Verdict::Pass,
    );
    report(vec![clocks, pass])
}

#[test]
fn prometheus_per_gpu_series_carry_dcgm_labels_when_asked() {
    let r = per_gpu_report();
    let text = prometheus::render(
        &r,
        &prometheus::Extras {
            per_gpu: true,
            ..Default::default()
        },
    );
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("gpufix_gpu_rule_failing{"))
        .collect();
    assert_eq!(
        lines,
        [
            r#"gpufix_gpu_rule_failing{rule="driver.clocks-throttled",gpu="1",UUID="GPU-3b1c2d4e-0000-1111-2222-333344445555"} 1"#,
            r#"gpufix_gpu_rule_failing{rule="driver.clocks-throttled",gpu="3",UUID=""} 1"#,
        ]
    );
    if let Some((ok, msg)) = promtool_check(&text) {
        assert!(ok && msg.trim().is_empty(), "promtool: {msg}\n{text}");
    }
}

fn run_info(run: &str, status: RunStatus) -> RunInfo {
    RunInfo {
        run: run.into(),
        started_at: "2025-01-02T03:00:00Z".into(),
        host: "gpu-node-17".into(),
        status,
        changes: 2,
        made: 1,
        rules: vec!["data.mount-noatime".into()],
        problem: None,
    }
}

#[test]
fn prometheus_exports_journal_state_interrupted_runs_and_last_result() {
    let runs = vec![
        run_info("20250101T000000.000Z-1", RunStatus::Applied),
        run_info("20250101T010000.000Z-2", RunStatus::Interrupted),
        run_info("20250102T030000.000Z-3", RunStatus::RolledBack),
    ];
    let text = prometheus::render(
        &all_verdicts(),
        &prometheus::Extras {
            runs: Some(&runs),
            ..Default::default()
        },
    );
    for (st, n) in [
        ("applied", "1"),
        ("rolled-back", "1"),
        ("failed", "0"),
        ("interrupted", "1"),
    ] {
        assert_eq!(
            sample(&text, &format!("gpufix_apply_runs{{status=\"{st}\"}}")).as_deref(),
            Some(n),
            "{st}"
        );
        let last = if st == "rolled-back" { "1" } else { "0" };
        assert_eq!(
            sample(
                &text,
                &format!("gpufix_last_apply_status{{status=\"{st}\"}}")
            )
            .as_deref(),
            Some(last),
            "{st}"
        );
    }
    assert_eq!(
        sample(&text, "gpufix_last_apply_timestamp_seconds").as_deref(),
        Some("1735786800")
    );
    // A state directory with no runs: counts of zero, no last run.
    let empty = prometheus::render(
        &all_verdicts(),
        &prometheus::Extras {
            runs: Some(&[]),
            ..Default::default()
        },
    );
    assert_eq!(
        sample(&empty, r#"gpufix_apply_runs{status="interrupted"}"#).as_deref(),
        Some("0")
    );
    assert!(!empty.contains("gpufix_last_apply_status"));
    if let Some((ok, msg)) = promtool_check(&text) {
        assert!(ok && msg.trim().is_empty(), "promtool: {msg}\n{text}");
    }
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
        &extras(None),
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
            engine_missing(&promtool, "apt install prometheus");
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
fn prometheus_rules_join_gpufix_and_dcgm_exporter_across_two_targets() {
    // contrib/prometheus/gpufix.rules.test.yml: node_exporter's textfile (:9100) and
    // dcgm-exporter (:9400) as separate targets; the recorded join must return the failing GPU
    // with dcgm-exporter's Hostname, and the instance-based join must be empty.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/prometheus");
    let promtool = std::env::var("PROMTOOL").unwrap_or_else(|_| "promtool".into());
    let Ok(o) = Command::new(&promtool)
        .args(["test", "rules", "gpufix.rules.test.yml"])
        .current_dir(&dir)
        .output()
    else {
        engine_missing(&promtool, "apt install prometheus");
        return;
    };
    assert!(
        o.status.success(),
        "promtool test rules:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
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
    let text = prometheus::render(&r, &extras(Some(3000)));
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

const ANY: FailPolicy = FailPolicy::ANY_FINDING;
const DRAIN: FailPolicy = FailPolicy::DRAIN;

#[test]
fn slurm_reason_names_the_most_urgent_finding() {
    assert_eq!(
        slurm::slurm_reason(
            &report(vec![rule("a", "driver", Severity::Critical, Verdict::Pass)]),
            &ANY
        ),
        None
    );
    assert_eq!(slurm::render(&report(vec![]), &DRAIN), "");
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
        slurm::slurm_reason(&r, &ANY).as_deref(),
        Some("gpufix: comm.nccl-socket, +3 more")
    );
    assert_eq!(
        slurm::render(&r, &ANY),
        "gpufix: comm.nccl-socket, +3 more\n"
    );
    let single = report(vec![rule(
        "data.mount",
        "data",
        Severity::Warning,
        Verdict::Fail,
    )]);
    assert_eq!(
        slurm::slurm_reason(&single, &ANY).as_deref(),
        Some("gpufix: data.mount")
    );
}

#[test]
fn drain_policy_drains_only_on_failed_critical_health_rules_by_default() {
    // The recorded VM host: three unknown critical driver rules and nothing failing.
    let vm = report(vec![
        rule(
            "driver.nvml-unavailable",
            "driver",
            Severity::Critical,
            Verdict::Unknown,
        ),
        rule(
            "driver.uvm-module-missing",
            "driver",
            Severity::Critical,
            Verdict::Unknown,
        ),
        rule(
            "driver.persistence-off",
            "driver",
            Severity::Warning,
            Verdict::Blocked,
        ),
    ]);
    assert_eq!(
        slurm::slurm_reason(&vm, &DRAIN),
        None,
        "unknown never drains by default"
    );
    // A busy node: an info rule fails (CPU pressure), a job's critical NCCL setting fails.
    let busy = report(vec![
        rule("data.pressure-high", "data", Severity::Info, Verdict::Fail),
        rule(
            "comm.nccl-socket-fallback",
            "comm",
            Severity::Critical,
            Verdict::Fail,
        ),
        rule(
            "driver.persistence-off",
            "driver",
            Severity::Warning,
            Verdict::Fail,
        ),
    ]);
    assert_eq!(
        slurm::slurm_reason(&busy, &DRAIN),
        None,
        "job settings and warnings stay in service"
    );
    // A GPU with uncorrectable ECC errors drains, naming only what counts.
    let mut broken = busy.clone();
    broken.results.push(rule(
        "driver.ecc-uncorrectable",
        "driver",
        Severity::Critical,
        Verdict::Fail,
    ));
    broken.results.push(rule(
        "cuda.context-smoke-test-failed",
        "cuda",
        Severity::Critical,
        Verdict::Fail,
    ));
    assert_eq!(
        slurm::slurm_reason(&broken, &DRAIN).as_deref(),
        Some("gpufix: driver.ecc-uncorrectable, +1 more")
    );
    // Asked for: unknown drains too, and warnings count with a lower threshold.
    let strict = FailPolicy {
        undetermined: true,
        ..DRAIN
    };
    assert_eq!(
        slurm::slurm_reason(&vm, &strict).as_deref(),
        Some("gpufix: driver.nvml-unavailable, +1 more")
    );
    let warn = FailPolicy {
        fail_on: Severity::Warning,
        ..DRAIN
    };
    assert_eq!(
        slurm::slurm_reason(&busy, &warn).as_deref(),
        Some("gpufix: driver.persistence-off")
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
    let reason = slurm::slurm_reason(&r, &ANY).unwrap();
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
        slurm::slurm_reason(&odd, &ANY).as_deref(),
        Some("gpufix: site.a_b_c")
    );
}

// --------------------------------------------------------------- contrib/slurm/gpufix-healthcheck

fn healthcheck_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/gpufix-healthcheck")
}

/// A test's engine (promtool, xmllint, systemd-analyze) is not
/// installed: under `CI=true` (or FLEET_TOOLS_REQUIRED) the test fails, so a CI machine without
/// it cannot pass the test untested; elsewhere it skips with a note.
fn engine_missing(engine: &str, install: &str) {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if ci || std::env::var_os("FLEET_TOOLS_REQUIRED").is_some() {
        panic!("`{engine}` is required under CI=true: {install} (tests/ci-deps.sh installs it)");
    }
    eprintln!("note: `{engine}` not installed; skipped ({install}; tests/ci-deps.sh installs it)");
}

// ------------------------------------------------ the kernel log of the host under --root

/// The journal lines pasted in github.com/NVIDIA/open-gpu-kernel-modules/issues/1151 (an RTX
/// GPU that fell off the bus: Xid 79), as committed in the evidence fixtures.
fn xid79_lines() -> Vec<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence/kernel_log/xid79_journal.txt");
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// A directory holding a `dmesg` that prints `text`, in a place the helper-program trust
/// check accepts (under the target directory, not /tmp): first on PATH, it is what gpufix
/// would run for `dmesg`.
fn fake_dmesg(name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fake-dmesg-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = dir.join("dmesg");
    std::fs::write(&p, format!("#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `audit --root ROOT --only driver.xid-errors --format json`, with `path_first` first on
/// PATH and run through `prefix` (a capability-dropping wrapper): (exit, the rule's verdict,
/// the rule's result).
fn xid_audit(
    root: &Path,
    path_first: Option<&Path>,
    prefix: &[&str],
) -> (i32, String, serde_json::Value) {
    let bin = env!("CARGO_BIN_EXE_gpufix");
    let mut argv: Vec<&str> = prefix.to_vec();
    argv.extend([
        bin,
        "audit",
        "--root",
        root.to_str().unwrap(),
        "--only",
        "driver.xid-errors",
        "--format",
        "json",
    ]);
    let mut c = Command::new(argv[0]);
    c.args(&argv[1..]).env("NO_COLOR", "1");
    if let Some(d) = path_first {
        c.env(
            "PATH",
            format!("{}:{}", d.display(), std::env::var("PATH").unwrap()),
        );
    }
    let o = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let r = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "driver.xid-errors")
        .unwrap()
        .clone();
    (
        o.status.code().unwrap(),
        r["verdict"].as_str().unwrap().to_string(),
        r,
    )
}

#[test]
fn xid_in_the_roots_kern_log_fails_under_root_whatever_this_machines_dmesg_says() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("var/log")).unwrap();
    let boot = "Dec  1 10:00:00 gpu01 kernel: [    0.000000] Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)";
    let mut log = format!("{boot}\n");
    for l in xid79_lines() {
        log.push_str(&l);
        log.push('\n');
    }
    std::fs::write(root.join("var/log/kern.log"), &log).unwrap();
    // This machine's dmesg says nothing of an Xid: it is not the judged host's kernel.
    let clean = fake_dmesg("clean", "[    0.000000] Linux version 6.1.0-18-amd64");
    let (code, verdict, r) = xid_audit(root, Some(&clean), &[]);
    assert_eq!((code, verdict.as_str()), (2, "fail"), "{r}");
    assert!(r.to_string().contains("/var/log/kern.log"), "{r}");

    // The same tree without the Xid passes, though this machine's dmesg has one.
    let xid = fake_dmesg(
        "xid",
        "[ 4242.000000] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
    );
    std::fs::write(root.join("var/log/kern.log"), format!("{boot}\n")).unwrap();
    let (code, verdict, r) = xid_audit(root, Some(&xid), &[]);
    assert_eq!((code, verdict.as_str()), (0, "pass"), "{r}");

    // An Xid of an earlier boot is not this boot's fault: only the part from the last boot
    // line counts.
    std::fs::write(
        root.join("var/log/kern.log"),
        format!("{log}{}\n", boot.replace("10:00:00", "11:00:00")),
    )
    .unwrap();
    let (code, verdict, r) = xid_audit(root, None, &[]);
    assert_eq!((code, verdict.as_str()), (0, "pass"), "{r}");

    // The boot began before kern.log: its last rotation (kern.log.1) holds the Xid.
    std::fs::write(root.join("var/log/kern.log.1"), &log).unwrap();
    std::fs::write(
        root.join("var/log/kern.log"),
        "Dec  2 10:00:00 gpu01 kernel: usb 1-1: new high-speed USB device\n",
    )
    .unwrap();
    let (code, verdict, r) = xid_audit(root, None, &[]);
    assert_eq!((code, verdict.as_str()), (2, "fail"), "{r}");
    assert!(r.to_string().contains("kern.log.1"), "{r}");

    // ... and when older rotations exist that were not read, a clean part is not a pass.
    std::fs::write(
        root.join("var/log/kern.log.1"),
        "Dec  1 12:00:00 gpu01 kernel: eth0 up\n",
    )
    .unwrap();
    std::fs::write(root.join("var/log/kern.log.2.gz"), b"").unwrap();
    let (code, verdict, r) = xid_audit(root, None, &[]);
    assert_eq!((code, verdict.as_str()), (2, "unknown"), "{r}");
}

#[test]
fn xid_in_the_roots_kern_log_fails_without_cap_syslog() {
    // The DaemonSet drops CAP_SYSLOG: the kernel-log rule still reads the root's files.
    let is_root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    let (true, Some(setpriv)) = (is_root, setpriv) else {
        engine_missing("setpriv as root", "run as root with util-linux installed");
        return;
    };
    let drop = [
        setpriv,
        "--bounding-set=-syslog",
        "--inh-caps=-syslog",
        "--",
    ];
    // The drop holds: dmesg itself fails under it where dmesg_restrict is set.
    if std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict").is_ok_and(|s| s.trim() == "1") {
        let o = Command::new(setpriv)
            .args(&drop[1..])
            .arg("dmesg")
            .output()
            .unwrap();
        assert!(!o.status.success(), "dmesg ran without CAP_SYSLOG");
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("var/log")).unwrap();
    std::fs::write(
        root.join("var/log/kern.log"),
        xid79_lines().join("\n") + "\n",
    )
    .unwrap();
    let (code, verdict, r) = xid_audit(root, None, &drop);
    assert_eq!((code, verdict.as_str()), (2, "fail"), "{r}");
}

/// systemd's own writer of journal files from the journal export format
/// (https://systemd.io/JOURNAL_EXPORT_FORMATS/): it needs no running journald.
fn journal_remote() -> Option<&'static str> {
    [
        "/lib/systemd/systemd-journal-remote",
        "/usr/lib/systemd/systemd-journal-remote",
    ]
    .into_iter()
    .find(|p| Path::new(p).is_file())
}

/// Writes `messages` as kernel-transport entries of one boot, from `at_us` (µs since the
/// epoch), into a real journal file `out`.
fn write_journal(remote: &str, out: &Path, boot: &str, at_us: u64, messages: &[String]) {
    use std::io::Write;
    let mut export = String::new();
    for (i, m) in messages.iter().enumerate() {
        export.push_str(&format!(
            "__REALTIME_TIMESTAMP={}\n__MONOTONIC_TIMESTAMP={}\n_BOOT_ID={boot}\n_TRANSPORT=kernel\nPRIORITY=4\nSYSLOG_IDENTIFIER=kernel\n_HOSTNAME=gpu01\nMESSAGE={m}\n\n",
            at_us + i as u64 * 1000,
            1_000_000 + i as u64 * 1000,
        ));
    }
    let mut child = Command::new(remote)
        .arg(format!("--output={}", out.display()))
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(export.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn xid_in_the_roots_journal_fails_under_root() {
    let Some(remote) = journal_remote() else {
        engine_missing(
            "systemd-journal-remote",
            "apt install systemd-journal-remote",
        );
        return;
    };
    let messages: Vec<String> = xid79_lines()
        .iter()
        .map(|l| l.split_once("kernel: ").unwrap().1.to_string())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let jdir = root.join("var/log/journal/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(&jdir).unwrap();
    let boot = "0123456789abcdef0123456789abcdef";
    write_journal(
        remote,
        &jdir.join("system.journal"),
        boot,
        1_716_058_959_000_000,
        &messages,
    );
    // kern.log (rsyslog) has nothing: the journal is the source read first.
    std::fs::write(
        root.join("var/log/kern.log"),
        "Dec  2 10:00:00 gpu01 kernel: eth0 up\n",
    )
    .unwrap();
    let clean = fake_dmesg("clean-j", "[    0.000000] Linux version 6.1.0-18-amd64");
    let (code, verdict, r) = xid_audit(root, Some(&clean), &[]);
    assert_eq!((code, verdict.as_str()), (2, "fail"), "{r}");
    assert!(r.to_string().contains("journal"), "{r}");

    // A later boot without the Xid: the journal's latest boot is the one judged.
    write_journal(
        remote,
        &jdir.join(
            "system@0000000000000000000000000000000a-0000000000000002-0006100000000000.journal",
        ),
        "fedcba9876543210fedcba9876543210",
        1_716_100_000_000_000,
        &["Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)".to_string()],
    );
    let (code, verdict, r) = xid_audit(root, None, &[]);
    assert_eq!((code, verdict.as_str()), (0, "pass"), "{r}");

    // A journal file that is a link (out of the tree) is not read; neither is another
    // host's (remote-*.journal).
    let outside = tempfile::tempdir().unwrap();
    write_journal(
        remote,
        &outside.path().join("system.journal"),
        "00000000000000000000000000000001",
        1_716_058_959_000_000,
        &messages,
    );
    std::fs::remove_dir_all(&jdir).unwrap();
    std::fs::create_dir_all(&jdir).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("system.journal"),
        jdir.join("system.journal"),
    )
    .unwrap();
    std::fs::copy(
        outside.path().join("system.journal"),
        jdir.join("remote-gpu02.journal"),
    )
    .unwrap();
    let (code, verdict, r) = xid_audit(root, None, &[]);
    assert_eq!((code, verdict.as_str()), (0, "pass"), "{r}");
}

/// A tree under `d/gpu` with `dev/nvidia0`: what the health checks take for a GPU node (their
/// device check looks under GPUFIX_HC_SYSROOT / GPUFIX_ROOT), whatever machine runs the test.
fn gpu_sysroot(d: &Path) -> PathBuf {
    let root = d.join("gpu");
    std::fs::create_dir_all(root.join("dev")).unwrap();
    std::fs::write(root.join("dev/nvidia0"), "").unwrap();
    root
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
    gpu_sysroot(d);
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
        .env("GPUFIX_HC_SYSROOT", d.join("gpu"))
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
fn healthcheck_fails_and_never_resumes_when_the_audit_errors() {
    let (code, calls, _) = healthcheck(1, "", IDLE);
    assert_eq!(code, 1);
    assert_eq!(
        calls,
        [
            SHOW,
            SHOW,
            "update|nodename=gpu-node-7|state=drain|reason=gpufix: audit failed: exit 1: some warning"
        ],
        "an audit that cannot run fails the check with its own reason"
    );
    let own = "NodeName=gpu-node-7 State=IDLE+DRAIN Partitions=gpu Reason=gpufix: driver.xid-errors [root@2025-01-02T03:04:05]\n";
    let (code, calls, _) = healthcheck(1, "", own);
    assert_eq!(code, 1);
    assert_eq!(
        calls,
        [SHOW],
        "a drained node keeps its reason and is never resumed"
    );
}

/// A fake scontrol that logs its calls; returns (dir, scontrol path).
fn fake_scontrol(d: &Path, node_line: &str) -> PathBuf {
    std::fs::write(d.join("node"), node_line).unwrap();
    let p = d.join("scontrol");
    write_exec(
        &p,
        &format!(
            "#!/usr/bin/env bash\n(IFS='|'; echo \"$*\") >> '{log}'\nif [ \"$1\" = show ]; then cat '{node}'; fi\n",
            log = d.join("scontrol.log").display(),
            node = d.join("node").display(),
        ),
    );
    p
}

#[test]
fn healthcheck_with_a_bad_flag_fails_the_check_with_the_error() {
    // The real binary: a typo in GPUFIX_AUDIT_ARGS is a usage error (exit 1), not findings.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scontrol = fake_scontrol(d, IDLE);
    let out = Command::new("bash")
        .arg(healthcheck_script())
        .env("GPUFIX", env!("CARGO_BIN_EXE_gpufix"))
        .env("SCONTROL", &scontrol)
        .env("GPUFIX_NODENAME", "gpu-node-7")
        .env("GPUFIX_AUDIT_ARGS", "--valuse /etc/gpufix/values.yaml")
        .env("GPUFIX_HC_SYSROOT", gpu_sysroot(d))
        .env("TMPDIR", d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("failed: exit 1") && stderr.contains("--valuse"),
        "the error is logged with gpufix's message: {stderr}"
    );
    let calls = std::fs::read_to_string(d.join("scontrol.log")).unwrap_or_default();
    assert!(
        calls.contains("reason=gpufix: audit failed: exit 1: ") && !calls.contains("resume"),
        "a usage error fails the check with its reason, never resumes: {calls}"
    );
}

#[test]
fn healthcheck_fails_on_exit_2_without_a_reason() {
    let (code, calls, _) = healthcheck(2, "", IDLE);
    assert_eq!(code, 1);
    assert_eq!(
        calls.last().map(String::as_str),
        Some(
            "update|nodename=gpu-node-7|state=drain|reason=gpufix: audit failed: exit 2 without a drain reason: some warning"
        ),
        "{calls:?}"
    );
}

#[test]
fn healthcheck_passes_a_node_without_an_nvidia_device() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scontrol = fake_scontrol(d, IDLE);
    std::fs::create_dir_all(d.join("nogpu")).unwrap();
    let run = |require: &str| {
        Command::new("bash")
            .arg(healthcheck_script())
            .env("GPUFIX", d.join("no-gpufix-here"))
            .env("SCONTROL", &scontrol)
            .env("GPUFIX_NODENAME", "gpu-node-7")
            .env("GPUFIX_HC_SYSROOT", d.join("nogpu"))
            .env("GPUFIX_REQUIRE_GPU", require)
            .env("TMPDIR", d)
            .output()
            .unwrap()
    };
    let out = run("0");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no NVIDIA device"), "{stderr}");
    assert!(
        !d.join("scontrol.log").exists(),
        "a GPU-less node is not touched"
    );
    let out = run("1");
    assert_eq!(
        out.status.code(),
        Some(1),
        "--require-gpu audits (here: no binary)"
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
        .env("GPUFIX_HC_SYSROOT", gpu_sysroot(d))
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
    assert_eq!(
        (code, calls.as_str()),
        (1, "die 1 gpufix audit failed: exit 1: noise"),
        "an audit that cannot run fails the check with its own reason"
    );
}

#[test]
fn nhc_check_with_a_bad_flag_fails_with_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let nhc = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/gpufix.nhc");
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"die() { echo "die $*"; }; log() { echo "log $*"; }; source "$1"; check_gpufix --valuse /etc/gpufix/values.yaml; echo "returned $?""#)
        .arg("nhc")
        .arg(&nhc)
        .env("GPUFIX_BIN", env!("CARGO_BIN_EXE_gpufix"))
        .env("GPUFIX_HC_SYSROOT", gpu_sysroot(dir.path()))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("die 1 gpufix audit failed: exit 1: ") && stdout.contains("--valuse"),
        "a usage error fails the check with gpufix's message: {stdout}"
    );
    assert!(stdout.trim_end().ends_with("returned 1"), "{stdout}");
}

// ------------------------------------------------------------ contrib/kubernetes/gpufix-npd

/// Runs the Node Problem Detector plugin against a fake gpufix; returns (exit, stdout).
fn npd(rc: i32, out: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("gpufix");
    write_exec(
        &fake,
        &format!("#!/bin/sh\nprintf '%s' '{out}'\nexit {rc}\n"),
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/kubernetes/gpufix-npd");
    let o = Command::new("bash")
        .arg(script)
        .env("GPUFIX", &fake)
        .env("GPUFIX_ROOT", gpu_sysroot(dir.path()))
        .env("GPUFIX_NPD_STATE", dir.path().join("state"))
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stdout).trim_end().to_string(),
    )
}

#[test]
fn npd_plugin_follows_the_0_ok_1_problem_2_unknown_convention() {
    assert_eq!(npd(0, ""), (0, "gpufix: healthy".into()));
    assert_eq!(
        npd(2, "gpufix: driver.xid-errors, +1 more\n"),
        (1, "gpufix: driver.xid-errors, +1 more".into())
    );
    assert_eq!(npd(1, "").0, 2, "an audit error is unknown, not a problem");
    assert_eq!(npd(2, "").0, 2, "exit 2 without a reason is unknown");
}

// ------------------------------------------------------------------- the binary: exit codes, output

fn gpufix(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpufix"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn usage_errors_exit_1_not_the_findings_code_and_3_for_nagios() {
    for args in [
        &["plan", "--bogus"][..],
        &["audit", "--format", "slurm", "--valuse", "x"],
        &["audit", "--fail-on", "sometimes"],
        &["plan", "--sample", "ten seconds"],
    ] {
        let o = gpufix(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {:?}", o);
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert!(String::from_utf8_lossy(&o.stderr).contains("error:"));
    }
    let o = gpufix(&["audit", "--format", "nagios", "--bogus"]);
    assert_eq!(o.status.code(), Some(3), "UNKNOWN");
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        line.starts_with("GPUFIX UNKNOWN - usage error: unexpected argument '--bogus'"),
        "{line}"
    );
    let o = gpufix(&["audit", "--format=nagios", "--fail-on", "x"]);
    assert_eq!(o.status.code(), Some(3));
    // Help and version are not errors.
    assert_eq!(gpufix(&["--version"]).status.code(), Some(0));
    assert_eq!(gpufix(&["audit", "--help"]).status.code(), Some(0));
}

#[test]
fn a_format_the_subcommand_does_not_write_is_an_error() {
    for (args, want) in [
        (
            &["plan", "--format", "junit"][..],
            "`gpufix plan` does not write --format junit",
        ),
        (
            &["history", "--format", "prometheus"],
            "`gpufix history` does not write --format prometheus",
        ),
        (
            &["audit", "--format", "markdown"],
            "`gpufix audit` does not write --format markdown",
        ),
    ] {
        let o = gpufix(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want) && err.contains("help: use"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn every_subcommand_refuses_a_format_it_does_not_write() {
    // Subcommands with --format offer only theirs; the others take no --format at all.
    for args in [
        &["list", "--format", "junit"][..],
        &["apply", "--format", "nagios"],
        &["rollback", "--format", "markdown"],
        &["validate", "--format", "json"],
        &["explain", "--format", "json", "driver.persistence-off"],
        &["test", "--format", "json"],
        &["snapshot", "--format", "json", "-o", "x.json"],
        &["man", "--format", "json"],
        &["schema", "--format", "json", "plan"],
    ] {
        let o = gpufix(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {o:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("error:"));
    }
}

/// The options that say which host is judged and how.
const HOST_OPTIONS: &[&str] = &[
    "--root",
    "--snapshot",
    "--sample",
    "--pid",
    "--job",
    "--config",
    "--env-file",
    "--trace",
    "--nccl-log",
    "--kernel-log",
    "--evidence",
    "--deep",
];

fn help_of(sub: &str) -> String {
    let o = gpufix(&[sub, "--help"]);
    assert_eq!(o.status.code(), Some(0), "{sub} --help");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn has_option(help: &str, opt: &str) -> bool {
    help.lines().any(|l| {
        l.trim_start()
            .trim_start_matches("-v, ")
            .starts_with(&format!("{opt} "))
            || l.trim() == opt
    })
}

#[test]
fn each_subcommand_shows_only_its_own_options() {
    for sub in [
        "completions",
        "man",
        "list",
        "schema",
        "explain",
        "validate",
        "test",
    ] {
        let help = help_of(sub);
        for opt in HOST_OPTIONS {
            // `list --evidence` is list's own switch (list the evidence kinds), no file
            if sub == "list" && *opt == "--evidence" {
                continue;
            }
            assert!(
                !has_option(&help, opt),
                "`gpufix {sub} --help` shows {opt}:\n{help}"
            );
        }
    }
    for sub in [
        "completions",
        "man",
        "schema",
        "explain",
        "validate",
        "test",
    ] {
        assert!(
            !has_option(&help_of(sub), "--format"),
            "{sub} shows --format"
        );
    }
    for sub in ["completions", "man", "schema"] {
        let help = help_of(sub);
        for opt in [
            "--playbooks",
            "--values",
            "--no-system",
            "--only",
            "--color",
        ] {
            assert!(!has_option(&help, opt), "`gpufix {sub} --help` shows {opt}");
        }
    }
    // ...while the probing subcommands keep them, and each lists only the formats it writes.
    for sub in ["plan", "audit", "apply"] {
        let help = help_of(sub);
        for opt in HOST_OPTIONS
            .iter()
            .chain(&["--playbooks", "--only", "--format"])
        {
            assert!(has_option(&help, opt), "`gpufix {sub} --help` lacks {opt}");
        }
    }
    let plan = help_of("plan");
    assert!(plan.contains("[possible values: text, json]"), "{plan}");
    let audit = help_of("audit");
    assert!(
        audit.contains("[possible values: text, json, junit, prometheus, nagios, slurm]")
            || ["text", "json", "junit", "prometheus", "nagios", "slurm"]
                .iter()
                .all(|f| audit.contains(&format!("- {f}"))),
        "{audit}"
    );
    assert!(!help_of("history").contains("--sample"));
    // The top level shows none of them: they belong to subcommands.
    let top = String::from_utf8_lossy(&gpufix(&["--help"]).stdout).into_owned();
    for opt in HOST_OPTIONS.iter().chain(&["--format", "--playbooks"]) {
        assert!(!has_option(&top, opt), "`gpufix --help` shows {opt}");
    }
}

#[test]
fn completions_and_man_pages_offer_each_subcommand_only_its_options() {
    let o = gpufix(&["completions", "bash"]);
    let script = String::from_utf8_lossy(&o.stdout);
    // clap's bash script has one `opts="..."` line per subcommand, after its case label.
    let opts_of = |sub: &str| -> String {
        let label = format!("gpufix__subcmd__{sub})");
        let at = script.find(&label).unwrap_or_else(|| panic!("no {label}"));
        let rest = &script[at..];
        let line = rest
            .lines()
            .find(|l| l.trim_start().starts_with("opts="))
            .unwrap();
        line.to_string()
    };
    for sub in [
        "list",
        "explain",
        "validate",
        "man",
        "completions",
        "schema",
        "test",
    ] {
        let opts = opts_of(sub);
        for opt in HOST_OPTIONS {
            // `list --evidence` is list's own switch (list the evidence kinds), no file
            if sub == "list" && *opt == "--evidence" {
                continue;
            }
            assert!(
                !opts.split_whitespace().any(|w| w.trim_matches('"') == *opt),
                "{sub}: {opts}"
            );
        }
    }
    let plan = opts_of("plan");
    assert!(
        plan.contains("--root") && plan.contains("--evidence"),
        "{plan}"
    );

    let dir = tempfile::tempdir().unwrap();
    let o = gpufix(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let page = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    for name in [
        "gpufix-list.1",
        "gpufix-explain.1",
        "gpufix-validate.1",
        "gpufix-man.1",
    ] {
        let p = page(name);
        assert!(
            !p.contains("\\-\\-root") && !p.contains("\\-\\-sample"),
            "{name}"
        );
    }
    assert!(page("gpufix-plan.1").contains("\\-\\-root"));
}

#[test]
fn options_before_the_subcommand_still_work_and_foreign_ones_are_refused() {
    // The form README, CI and integrations written for earlier versions use.
    let before = gpufix(&[
        "--no-system",
        "--format",
        "json",
        "--only",
        "driver",
        "list",
    ]);
    let after = gpufix(&[
        "list",
        "--no-system",
        "--format",
        "json",
        "--only",
        "driver",
    ]);
    assert_eq!(before.status.code(), Some(0), "{before:?}");
    assert_eq!(before.stdout, after.stdout);
    let rules: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap();
    assert!(
        rules
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["layer"] == "driver")
    );

    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    let before = gpufix(&[
        "--root",
        r,
        "--sample=0",
        "--no-system",
        "--format",
        "json",
        "plan",
        "--only",
        "driver",
    ]);
    assert_eq!(before.status.code(), Some(2), "{before:?}");
    let plan: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap();
    assert!(plan["results"].as_array().is_some_and(|r| !r.is_empty()));

    // A host option before a subcommand that does not probe is a usage error naming who takes it.
    let o = gpufix(&["--root", r, "list"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`gpufix list` does not take --root"), "{err}");
    assert!(err.contains("help: --root is an option of plan"), "{err}");
    let o = gpufix(&["explain", "--evidence", "x", "driver.persistence-off"]);
    assert_eq!(o.status.code(), Some(1));
    // Given twice (before and after) is clap's own error, not a silent choice.
    let o = gpufix(&["--sample", "0", "plan", "--sample", "1s", "--root", r]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
}

#[test]
fn progress_shows_on_stderr_with_the_flag_and_never_without_it() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    let base = [
        "--no-system",
        "--root",
        r,
        "--sample",
        "0",
        "--only",
        "driver",
    ];
    let run = |extra: &[&str]| {
        let mut args = vec!["plan"];
        args.extend(base);
        args.extend(extra);
        gpufix(&args)
    };
    let forced = run(&["--progress", "--format", "json"]);
    let err = String::from_utf8_lossy(&forced.stderr);
    assert!(err.contains("gpufix: probing (sampling window 0"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("gpufix: ") && l.contains(" answered in ")),
        "{err}"
    );
    // stdout is the report alone, as without the flag
    let plain = run(&["--format", "json"]);
    let a: serde_json::Value = serde_json::from_slice(&forced.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(a["results"], b["results"]);
    // stderr is not a terminal here: no flag, no progress; --quiet wins over nothing and
    // cannot be combined with --progress
    assert!(!String::from_utf8_lossy(&plain.stderr).contains("gpufix: probing"));
    let quiet = run(&["--quiet"]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("gpufix: probing"));
    assert_eq!(run(&["--quiet", "--progress"]).status.code(), Some(1));

    // audit in a machine format: progress on stderr, the textfile untouched on stdout
    let o = gpufix(&[
        "audit",
        "--no-system",
        "--root",
        r,
        "--sample",
        "0",
        "--only",
        "driver",
        "--format",
        "prometheus",
        "--progress",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("gpufix: probing"));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("# HELP"));

    // large evidence: a line while it is read
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("dmesg.log");
    let line = "[ 1234.567890] NVRM: GPU at PCI:0000:17:00: GPU-3e1f Xid (PCI:0000:17:00): 79, pid=1234, GPU has fallen off the bus.\n";
    std::fs::write(&big, line.repeat((3 << 20) / line.len())).unwrap();
    let o = gpufix(&[
        "plan",
        "--no-system",
        "--sample",
        "0",
        "--progress",
        "--kernel-log",
        big.to_str().unwrap(),
        "--only",
        "driver",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("gpufix: reading 3.0 MiB of inputs (1 file)")
            && err.contains("gpufix: inputs read in"),
        "{err}"
    );
}

/// A site playbook directory holding one broken file; returns (dir, file name, line).
fn broken_site(kind: &str) -> (tempfile::TempDir, &'static str, usize) {
    let dir = tempfile::tempdir().unwrap();
    let (name, text, line) = match kind {
        // a tab where YAML needs spaces, in line 6
        "yaml" => (
            "yaml-error.yaml",
            "playbook: site\nlayer: data\ntitle: Site checks\nrules:\n  - id: site.x\n\ttitle: broken\n",
            6,
        ),
        // valid YAML, but `treshold` is not a rule key (line 8)
        _ => (
            "schema-error.yaml",
            "playbook: site\nlayer: data\ntitle: Site checks\nrules:\n  - id: site.scratch-mount\n    title: scratch is mounted\n    why: jobs read from /scratch\n    treshold: 3\n    probes:\n      m: { kind: mounts }\n    fail_when: \"false\"\n    severity: warning\n    message: scratch\n",
            8,
        ),
    };
    std::fs::write(dir.path().join(name), text).unwrap();
    (dir, name, line)
}

#[test]
fn a_broken_site_playbook_is_an_error_with_its_place_never_per_rule_unknown() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    for kind in ["yaml", "schema"] {
        let (site, name, line) = broken_site(kind);
        let pb = site.path().to_str().unwrap();
        let place = format!("{name}:{line}");
        let common = [
            "--no-system",
            "--root",
            r,
            "--sample",
            "0",
            "--playbooks",
            pb,
        ];
        for (sub, format) in [
            ("plan", "text"),
            ("plan", "json"),
            ("audit", "text"),
            ("audit", "json"),
            ("audit", "junit"),
            ("audit", "prometheus"),
            ("audit", "slurm"),
        ] {
            let mut args = vec![sub, "--format", format];
            args.extend(common);
            let o = gpufix(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{kind} {sub} {format}: {err}");
            assert!(
                o.stdout.is_empty(),
                "{kind} {sub} {format}: no report, no drain reason"
            );
            assert!(err.contains(&place), "{kind} {sub} {format}: {err}");
            assert!(
                err.contains("nothing was probed or changed"),
                "{kind} {sub} {format}: {err}"
            );
        }
        // Nagios: UNKNOWN (3), and the status line says where
        let mut args = vec!["audit", "--format", "nagios"];
        args.extend(common);
        let o = gpufix(&args);
        assert_eq!(o.status.code(), Some(3), "{kind} nagios");
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(
            out.starts_with("GPUFIX UNKNOWN - invalid playbooks or values: ")
                && out.contains(&place),
            "{kind}: {out}"
        );

        // The Slurm health check: the audit's error is logged, the node is not drained.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let scontrol = fake_scontrol(d, IDLE);
        let out = Command::new("bash")
            .arg(healthcheck_script())
            .env("GPUFIX", env!("CARGO_BIN_EXE_gpufix"))
            .env("SCONTROL", &scontrol)
            .env("GPUFIX_NODENAME", "gpu-node-7")
            // a node with a GPU (the device check looks here, not at this machine)
            .env("GPUFIX_HC_SYSROOT", gpu_sysroot(d))
            .env(
                "GPUFIX_AUDIT_ARGS",
                format!("--no-system --root {r} --sample 0 --playbooks {pb}"),
            )
            .env("TMPDIR", d)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            // the first line of gpufix's error (the place is on the lines below it)
            stderr.contains("failed: exit 1: error["),
            "{stderr}"
        );
        // an audit that cannot run fails the check with its own reason (issue 25): the node is
        // drained `gpufix: audit failed: …`, which only a clean audit lifts
        let calls = std::fs::read_to_string(d.join("scontrol.log")).unwrap_or_default();
        assert!(
            calls.contains("state=drain|reason=gpufix: audit failed: exit 1"),
            "a broken playbook fails the check: {calls}"
        );

        // ... and the NHC check fails the node with the audit's error (NHC `die`).
        let nhc = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/gpufix.nhc");
        let o = Command::new("bash")
            .arg("-c")
            .arg(r#"die() { echo "die $*"; }; log() { echo "log $*"; }; source "$1"; check_gpufix --no-system --root "$2" --sample 0 --playbooks "$3"; echo "returned $?""#)
            .arg("nhc")
            .arg(&nhc)
            .arg(r)
            .arg(pb)
            .env("GPUFIX_BIN", env!("CARGO_BIN_EXE_gpufix"))
            .env("GPUFIX_HC_SYSROOT", gpu_sysroot(d))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("die 1 gpufix audit failed: exit 1"),
            "{stdout}"
        );
    }
}

#[test]
fn gpu_less_plan_is_short_and_names_the_cause_first() {
    // An empty tree as the host: no driver, no /proc, no NVML (CI has no libnvidia-ml).
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    // The no-driver case: the driver and cuda layers (the empty tree also lacks /proc, which
    // makes the data layer's probes unknown for reasons a real GPU-less host does not have).
    let o = gpufix(&[
        "plan",
        "--no-system",
        "--sample",
        "0",
        "--root",
        r,
        "--only",
        "driver",
        "--only",
        "cuda",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    if !text.contains("driver.nvml-unavailable") {
        eprintln!("note: NVML answers on this machine; the no-driver case cannot be made here");
        return;
    }
    assert_eq!(o.status.code(), Some(2));
    let lines: Vec<&str> = text.lines().collect();
    // (+2: the empty tree has no kernel log, so driver.xid-errors is unknown with the reason;
    // it no longer reads this machine's dmesg under --root)
    assert!(lines.len() <= 17, "{} lines:\n{text}", lines.len());
    let first = lines
        .iter()
        .find(|l| l.trim_start().starts_with("FAIL"))
        .unwrap();
    assert!(
        first.contains("driver.nvml-unavailable"),
        "cause first:\n{text}"
    );
    let blocked: Vec<&&str> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("blocked "))
        .collect();
    assert_eq!(
        blocked.len(),
        1,
        "every rule the driver blocks is one line:\n{text}"
    );
    assert!(
        blocked[0].contains("wait on driver.nvml-unavailable"),
        "{text}"
    );
    assert!(
        !text.contains("pass "),
        "passing rules only with -v:\n{text}"
    );
    let v = gpufix(&[
        "plan",
        "--no-system",
        "--sample",
        "0",
        "--root",
        r,
        "--only",
        "driver",
        "-v",
    ]);
    let vt = String::from_utf8_lossy(&v.stdout);
    assert!(
        vt.contains("checked, not found:") || vt.contains("n/a "),
        "{vt}"
    );
    let q = gpufix(&[
        "plan",
        "--no-system",
        "--sample",
        "0",
        "--root",
        r,
        "--quiet",
    ]);
    assert_eq!(String::from_utf8_lossy(&q.stdout).lines().count(), 1);
    assert_eq!(q.status.code(), Some(2), "--quiet keeps the exit status");
}

#[test]
fn audit_junit_of_a_real_snapshot_passes_the_schema_and_is_keyed_by_host() {
    let snap = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts/h200-degraded.snapshot.json");
    let o = gpufix(&[
        "audit",
        "--no-system",
        "--sample",
        "0",
        "--snapshot",
        snap.to_str().unwrap(),
        "--format",
        "junit",
    ]);
    let xml = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(xml.contains("<testsuite name="), "{xml}");
    if let Some((ok, err)) = xsd_check(&xml) {
        assert!(ok, "{err}");
    }
}

#[test]
fn slurm_format_exits_2_only_when_it_prints_a_drain_reason() {
    // The recorded VM: NVML unknown, nothing critical failing → stays in service, exit 0.
    let snap =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/h200-vm.snapshot.json");
    let s = snap.to_str().unwrap();
    let o = gpufix(&[
        "audit",
        "--no-system",
        "--sample",
        "0",
        "--snapshot",
        s,
        "--format",
        "slurm",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    match o.status.code() {
        Some(0) => assert!(out.is_empty(), "{out}"),
        Some(2) => assert!(out.starts_with("gpufix: "), "{out}"),
        c => panic!("exit {c:?}: {out}"),
    }
    // The same host under the strictest policy drains when anything is found.
    let any = gpufix(&[
        "audit",
        "--no-system",
        "--sample",
        "0",
        "--snapshot",
        s,
        "--format",
        "slurm",
        "--fail-on",
        "info",
        "--fail-on-unknown",
        "--profile",
        "all",
    ]);
    let json = gpufix(&[
        "audit",
        "--no-system",
        "--sample",
        "0",
        "--snapshot",
        s,
        "--format",
        "json",
    ]);
    assert_eq!(
        any.status.code(),
        json.status.code(),
        "every finding counts"
    );
    assert_eq!(any.stdout.is_empty(), json.status.code() == Some(0));
}

#[test]
fn man_pages_per_subcommand_carry_the_reader_sections() {
    let dir = tempfile::tempdir().unwrap();
    let o = gpufix(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    for name in [
        "gpufix",
        "gpufix-plan",
        "gpufix-audit",
        "gpufix-apply",
        "gpufix-rollback",
    ] {
        let page = std::fs::read_to_string(dir.path().join(format!("{name}.1"))).unwrap();
        for sec in ["EXIT STATUS", "FILES", "ENVIRONMENT", "SEE ALSO"] {
            assert!(page.contains(&format!(".SH \"{sec}\"")), "{name}: no {sec}");
        }
        assert!(
            page.contains("nvidia-smi(1)") && page.contains("nhc(8)"),
            "{name}"
        );
    }
    // Every page SEE ALSO names exists.
    let top = std::fs::read_to_string(dir.path().join("gpufix.1")).unwrap();
    let see = top.split(".SH \"SEE ALSO\"").nth(1).unwrap();
    for r in see.split(", ").filter(|r| r.starts_with("gpufix-")) {
        let name = r.trim().trim_end_matches("(1)");
        assert!(
            dir.path().join(format!("{name}.1")).exists(),
            "{name}(1) is named but not written"
        );
    }
    let audit = std::fs::read_to_string(dir.path().join("gpufix-audit.1")).unwrap();
    assert!(
        audit.contains("3 UNKNOWN"),
        "audit's page documents the nagios codes"
    );
    assert!(audit.contains(".nf"), "examples keep their layout");
}

#[test]
fn systemd_units_pass_systemd_analyze_verify() {
    let Ok(v) = Command::new("systemd-analyze").arg("--version").output() else {
        engine_missing("systemd-analyze", "apt install systemd");
        return;
    };
    assert!(v.status.success());
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let svc = std::fs::read_to_string(repo.join("contrib/systemd/gpufix-audit.service")).unwrap();
    assert!(svc.contains(
        "ExecStart=/usr/bin/gpufix audit --format prometheus --state-dir /var/lib/gpufix --output "
    ));
    // verify wants ExecStart's binary to exist: point it at the one under test; and it runs
    // `man` for Documentation=, whose pages only the package installs: leave those lines out.
    let no_docs = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("Documentation="))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    std::fs::write(
        dir.path().join("gpufix-audit.service"),
        no_docs(&svc.replace("/usr/bin/gpufix", env!("CARGO_BIN_EXE_gpufix"))),
    )
    .unwrap();
    let timer = std::fs::read_to_string(repo.join("contrib/systemd/gpufix-audit.timer")).unwrap();
    std::fs::write(dir.path().join("gpufix-audit.timer"), no_docs(&timer)).unwrap();
    let verify = |names: &[&str]| {
        let o = Command::new("systemd-analyze")
            .arg("verify")
            .args(names)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let msg = String::from_utf8_lossy(&o.stderr).into_owned();
        (
            o.status.success() && !msg.contains("gpufix-audit") && !msg.contains("broken"),
            msg,
        )
    };
    let (ok, msg) = verify(&["./gpufix-audit.service", "./gpufix-audit.timer"]);
    assert!(ok, "{msg}");
    std::fs::write(
        dir.path().join("broken.service"),
        "[Service]\nType=oneshoot\nExecStart=/nonexistent/x\n",
    )
    .unwrap();
    let (ok, _) = verify(&["./broken.service"]);
    assert!(!ok, "systemd-analyze verify must catch a broken unit");
}

#[test]
fn audit_exports_interrupted_runs_from_the_state_dir() {
    let state = tempfile::tempdir().unwrap();
    let runs = state.path().join("runs");
    let run = runs.join("20250101T000000.000Z-7");
    std::fs::create_dir_all(&run).unwrap();
    // A run that began and never ended: interrupted.
    let begin = serde_json::json!({"type": "begin", "run": "20250101T000000.000Z-7", "started_at": "2025-01-01T00:00:00Z", "host": "gpu-node-17", "changes": []});
    std::fs::write(run.join("journal.jsonl"), format!("{begin}\n")).unwrap();
    let root = tempfile::tempdir().unwrap();
    let o = gpufix(&[
        "audit",
        "--no-system",
        "--sample",
        "0",
        "--root",
        root.path().to_str().unwrap(),
        "--format",
        "prometheus",
        "--state-dir",
        state.path().to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let journal_known = gpufix::journal::runs(state.path()).len() == 1;
    if journal_known {
        assert_eq!(
            sample(&text, r#"gpufix_apply_runs{status="interrupted"}"#).as_deref(),
            Some("1"),
            "{text}"
        );
        assert_eq!(
            sample(&text, r#"gpufix_last_apply_status{status="interrupted"}"#).as_deref(),
            Some("1")
        );
    } else {
        // The journal's record format moved on: still exported, with zero runs.
        assert_eq!(
            sample(&text, r#"gpufix_apply_runs{status="interrupted"}"#).as_deref(),
            Some("0"),
            "{text}"
        );
    }
}
