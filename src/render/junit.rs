//! JUnit XML for CI systems and test dashboards (Jenkins, GitLab, GitHub test reporters): one
//! `<testsuite>` per layer in evaluation order, one `<testcase>` per rule. Findings (fail,
//! unknown, blocked) are `<failure type="VERDICT">` whose body carries everything a person needs
//! without gpufix at hand: messages, reason, evidence, the fix and the planned diffs.
//! Not-applicable and waived rules are `<skipped>`; passing rules are bare testcases.

use crate::report::{Report, RuleResult, Verdict};
use quick_xml::Writer;
use quick_xml::escape::partial_escape;
use quick_xml::events::{BytesDecl, BytesText, Event};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;

/// Renders the report as a JUnit XML document (`<testsuites>` root, UTF-8).
pub fn render(report: &Report) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    write_document(&mut w, report).expect("writing XML into a Vec cannot fail");
    let mut out = String::from_utf8(w.into_inner()).expect("the XML writer only emits UTF-8");
    out.push('\n');
    out
}

/// Counts in the attributes every JUnit reader looks at.
struct Counts {
    tests: usize,
    failures: usize,
    skipped: usize,
}

impl Counts {
    fn of<'a>(results: impl IntoIterator<Item = &'a RuleResult>) -> Counts {
        let mut c = Counts {
            tests: 0,
            failures: 0,
            skipped: 0,
        };
        for r in results {
            c.tests += 1;
            if r.verdict.is_finding() {
                c.failures += 1;
            } else if matches!(r.verdict, Verdict::NotApplicable | Verdict::Waived) {
                c.skipped += 1;
            }
        }
        c
    }
}

fn write_document(w: &mut Writer<Vec<u8>>, report: &Report) -> io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let total = Counts::of(&report.results);
    let tests = total.tests.to_string();
    let failures = total.failures.to_string();
    let skipped = total.skipped.to_string();
    w.create_element("testsuites")
        .with_attribute(("name", "gpufix"))
        .with_attribute(("tests", tests.as_str()))
        .with_attribute(("failures", failures.as_str()))
        .with_attribute(("errors", "0"))
        .with_attribute(("skipped", skipped.as_str()))
        .with_attribute(("timestamp", attr(&report.generated_at).as_ref()))
        .write_inner_content(|w| {
            for layer in layers(report) {
                write_suite(w, report, layer)?;
            }
            Ok(())
        })?;
    Ok(())
}

/// Layers in the order their first rule was evaluated (bottom-up), each once.
fn layers(report: &Report) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for r in &report.results {
        if !seen.contains(&r.layer.as_str()) {
            seen.push(&r.layer);
        }
    }
    seen
}

fn write_suite(w: &mut Writer<Vec<u8>>, report: &Report, layer: &str) -> io::Result<()> {
    let results: Vec<&RuleResult> = report.results.iter().filter(|r| r.layer == layer).collect();
    let counts = Counts::of(results.iter().copied());
    let tests = counts.tests.to_string();
    let failures = counts.failures.to_string();
    let skipped = counts.skipped.to_string();
    w.create_element("testsuite")
        .with_attribute(("name", attr(layer).as_ref()))
        .with_attribute(("tests", tests.as_str()))
        .with_attribute(("failures", failures.as_str()))
        .with_attribute(("errors", "0"))
        .with_attribute(("skipped", skipped.as_str()))
        .with_attribute(("timestamp", attr(&report.generated_at).as_ref()))
        .write_inner_content(|w| {
            w.create_element("properties").write_inner_content(|w| {
                for (name, value) in [
                    ("gpufix.version", report.gpufix_version.as_str()),
                    ("gpufix.host", report.host.as_str()),
                ] {
                    w.create_element("property")
                        .with_attribute(("name", name))
                        .with_attribute(("value", attr(value).as_ref()))
                        .write_empty()?;
                }
                Ok(())
            })?;
            for r in results {
                write_case(w, report, r)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn write_case(w: &mut Writer<Vec<u8>>, report: &Report, r: &RuleResult) -> io::Result<()> {
    let classname = format!("gpufix.{}", r.layer);
    let case = w
        .create_element("testcase")
        .with_attribute(("classname", attr(&classname).as_ref()))
        .with_attribute(("name", attr(&r.id).as_ref()))
        .with_attribute(("file", attr(&r.source).as_ref()));
    match r.verdict {
        Verdict::Pass => {
            case.write_empty()?;
        }
        Verdict::NotApplicable | Verdict::Waived => {
            let message = r.reason.as_deref().unwrap_or(r.verdict.as_str());
            case.write_inner_content(|w| {
                w.create_element("skipped")
                    .with_attribute(("message", attr(message).as_ref()))
                    .write_empty()?;
                Ok(())
            })?;
        }
        Verdict::Fail | Verdict::Unknown | Verdict::Blocked => {
            let body = failure_body(report, r);
            case.write_inner_content(|w| {
                w.create_element("failure")
                    .with_attribute(("message", attr(&failure_message(r)).as_ref()))
                    .with_attribute(("type", r.verdict.as_str()))
                    // Only `<` and `&` need escaping in text; leaving quotes alone keeps the
                    // JSON in the body readable in raw XML.
                    .write_text_content(BytesText::from_escaped(partial_escape(xml_chars(
                        &body,
                    ))))?;
                Ok(())
            })?;
        }
    }
    Ok(())
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
    b
}

/// An attribute value: XML-safe characters on one line (parsers turn raw newlines in attributes
/// into spaces anyway; doing it here keeps the output what a reader sees).
fn attr(s: &str) -> Cow<'_, str> {
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
/// them, and one would make the whole document unreadable to a CI server.
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
