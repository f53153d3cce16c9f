//! JUnit XML for CI systems and test dashboards (Jenkins xunit, GitLab, GitHub test reporters),
//! written with the quick-junit crate and checked in tests against Jenkins xunit's
//! `junit-10.xsd`, the strictest reader in common use.
//!
//! Shape: one `<testsuite>` per host, named by the host's name (so reports of many nodes merged
//! into one dashboard stay apart), one `<testcase>` per rule with classname `HOST.LAYER` and the
//! rule id as name. Verdicts map to what a CI reader understands:
//! - `fail` → `<failure type="fail">`: the host has the problem;
//! - `unknown` and `blocked` → `<error type="unknown|blocked">`: the check could not be made,
//!   which JUnit calls an error, not a failure;
//! - `not-applicable` and `waived` → `<skipped>`;
//! - `pass` → a bare testcase.
//!
//! A failure's or error's body carries everything a person needs without gpufix at hand:
//! messages, reason, evidence, the fix and the planned diffs.

use crate::report::{Report, RuleResult, Verdict};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use std::borrow::Cow;
use std::fmt::Write as _;

/// Renders the report as a JUnit XML document (`<testsuites>` root, UTF-8).
pub fn render(report: &Report) -> String {
    let mut doc = quick_junit::Report::new("gpufix");
    if !report.results.is_empty() {
        doc.add_test_suite(suite(report));
    }
    let xml = doc
        .to_string()
        .expect("serializing a JUnit report into memory cannot fail");
    let mut out = skipped_not_disabled(&xml);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// quick-junit counts skipped cases in a `disabled` attribute on `<testsuite>`; junit-10.xsd
/// (and so Jenkins xunit, which drops a file that fails it) allows only `skipped` there. Renames
/// that one attribute, event by event, and leaves everything else as quick-junit wrote it.
fn skipped_not_disabled(xml: &str) -> String {
    use quick_xml::events::{BytesStart, Event};
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut writer = quick_xml::Writer::new(Vec::new());
    loop {
        let ev = reader
            .read_event()
            .expect("quick-junit writes well-formed XML");
        let ev = match ev {
            Event::Eof => break,
            Event::Start(e) if e.name().as_ref() == "testsuite" => {
                let mut renamed = BytesStart::new("testsuite");
                for a in e.attributes().flatten() {
                    if a.key.as_ref() == "disabled" {
                        renamed.push_attribute(("skipped", a.value.as_ref()));
                    } else {
                        renamed.push_attribute(a);
                    }
                }
                Event::Start(renamed)
            }
            other => other,
        };
        writer
            .write_event(ev)
            .expect("writing XML into a Vec cannot fail");
    }
    String::from_utf8(writer.into_inner()).expect("the XML writer only emits UTF-8")
}

fn suite(report: &Report) -> TestSuite {
    let host = one_line(&report.host);
    let mut s = TestSuite::new(host.as_ref());
    // `hostname` and `timestamp` are attributes junit-10.xsd allows on a testsuite (not on
    // testsuites). quick-junit's own timestamp needs a parsed date; the report's string is
    // already RFC 3339.
    s.extra.insert("hostname".into(), host.as_ref().into());
    s.extra.insert(
        "timestamp".into(),
        one_line(&report.generated_at).as_ref().into(),
    );
    let mut props = vec![
        ("gpufix.version", report.gpufix_version.clone()),
        ("gpufix.judged", report.judged.clone()),
    ];
    if let Some(id) = &report.machine_id {
        props.push(("gpufix.machine-id", id.clone()));
    }
    s.add_properties(
        props
            .into_iter()
            .map(|(k, v)| Property::new(k, one_line(&v).as_ref())),
    );
    for r in &report.results {
        s.add_test_case(case(report, &host, r));
    }
    s
}

fn case(report: &Report, host: &str, r: &RuleResult) -> TestCase {
    let status = match r.verdict {
        Verdict::Pass => TestCaseStatus::success(),
        Verdict::NotApplicable | Verdict::Waived => {
            let mut st = TestCaseStatus::skipped();
            st.set_message(one_line(r.reason.as_deref().unwrap_or(r.verdict.as_str())).as_ref());
            st.set_type(r.verdict.as_str());
            st
        }
        Verdict::Fail | Verdict::Unknown | Verdict::Blocked => {
            let kind = if r.verdict == Verdict::Fail {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            };
            let mut st = TestCaseStatus::non_success(kind);
            st.set_message(one_line(&failure_message(r)).as_ref());
            st.set_type(r.verdict.as_str());
            st.set_description(failure_body(report, r));
            st
        }
    };
    let mut c = TestCase::new(one_line(&r.id).as_ref(), status);
    c.set_classname(format!("{}.{}", host, one_line(&r.layer)));
    c
}

/// One line for the `message` attribute: the rule's own messages for a failure, the reason for
/// unknown and blocked, the title when neither was given.
fn failure_message(r: &RuleResult) -> String {
    if r.verdict == Verdict::Fail && !r.messages.is_empty() {
        return r.messages.join("; ");
    }
    if let Some(reason) = &r.reason {
        return reason.clone();
    }
    if !r.blocked_by.is_empty() {
        return format!("blocked by {}", r.blocked_by.join(", "));
    }
    r.title.clone()
}

fn failure_body(report: &Report, r: &RuleResult) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "{}: {}", r.id, r.title);
    let _ = writeln!(
        b,
        "verdict: {}, severity: {}",
        r.verdict.as_str(),
        r.severity.as_str()
    );
    for m in &r.messages {
        let _ = writeln!(b, "- {m}");
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(b, "reason: {reason}");
    }
    if !r.blocked_by.is_empty() {
        let _ = writeln!(b, "blocked by: {}", r.blocked_by.join(", "));
    }
    if !r.evidence.is_empty() {
        let _ = writeln!(b, "evidence:");
        for (k, v) in &r.evidence {
            let _ = writeln!(b, "  {k} = {v}");
        }
    }
    let _ = writeln!(b, "why: {}", r.why);
    if let Some(fix) = &r.fix {
        let _ = writeln!(
            b,
            "fix ({}, restart: {}):",
            fix.safety.as_str(),
            fix.restart
        );
        for a in &fix.actions {
            let _ = writeln!(b, "  {a}");
        }
        if let Some(i) = &fix.instructions {
            let _ = writeln!(b, "  {i}");
        }
    }
    for c in report.changes.iter().filter(|c| c.rule == r.id) {
        let _ = writeln!(
            b,
            "change: {} ({}, {})",
            c.summary,
            c.kind,
            c.safety.as_str()
        );
        if let Some(diff) = &c.diff {
            b.push_str(diff);
            if !diff.ends_with('\n') {
                b.push('\n');
            }
        } else if c.before.is_some() || c.after.is_some() {
            let show = |v: &Option<serde_json::Value>| {
                v.as_ref().map_or("-".to_string(), |v| v.to_string())
            };
            let _ = writeln!(b, "  {} -> {}", show(&c.before), show(&c.after));
        }
    }
    let _ = write!(b, "source: {}", r.source);
    xml_chars(&b).into_owned()
}

/// An attribute value: XML-safe characters on one line (parsers turn raw newlines in attributes
/// into spaces anyway; doing it here keeps the output what a reader sees).
fn one_line(s: &str) -> Cow<'_, str> {
    let s = xml_chars(s);
    if s.contains(['\n', '\r', '\t']) {
        Cow::Owned(
            s.split(['\n', '\r', '\t'])
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
        )
    } else {
        s
    }
}

/// Replaces characters XML 1.0 cannot carry at all, escaped or not (NUL, most C0 controls, the
/// noncharacters U+FFFE and U+FFFF), with U+FFFD. Probe output such as a kernel log line may hold
/// them, and one would make the whole document unreadable to a CI server. (quick-junit drops
/// some of these itself; replacing them keeps a visible mark where something was.)
pub fn xml_chars(s: &str) -> Cow<'_, str> {
    fn ok(c: char) -> bool {
        matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
    }
    if s.chars().all(ok) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(
            s.chars()
                .map(|c| if ok(c) { c } else { '\u{FFFD}' })
                .collect(),
        )
    }
}
