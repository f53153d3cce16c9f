//! Human output: findings grouped by layer in evaluation order, each with its evidence, why it
//! matters and the fix it proposes; one summary line at the end.

use crate::playbook::Layer;
use crate::report::{Report, RuleResult, Verdict};
use std::fmt::Write;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    /// Also print passing and not-applicable rules with their details.
    pub verbose: bool,
}

fn paint(s: &str, code: &str, st: Style) -> String {
    if st.color {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn badge(v: Verdict, st: Style) -> String {
    let (txt, code) = match v {
        Verdict::Pass => ("pass   ", "32"),
        Verdict::Fail => ("FAIL   ", "1;31"),
        Verdict::Unknown => ("unknown", "33"),
        Verdict::Blocked => ("blocked", "35"),
        Verdict::NotApplicable => ("n/a    ", "2"),
        Verdict::Waived => ("waived ", "36"),
    };
    paint(txt, code, st)
}

pub fn summary_line(report: &Report) -> String {
    let parts: Vec<String> = Verdict::ALL
        .iter()
        .map(|v| format!("{} {}", report.count(*v), v.as_str()))
        .collect();
    format!("{} rules: {}", report.results.len(), parts.join(", "))
}

pub fn render(report: &Report, st: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "gpufix plan for {}", report.host);
    for layer in Layer::ALL {
        let rs: Vec<&RuleResult> = report
            .results
            .iter()
            .filter(|r| r.layer == layer.as_str())
            .collect();
        if rs.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} — {}",
            paint(layer.as_str(), "1", st),
            layer.title()
        );
        for r in rs {
            render_rule(&mut out, r, st);
        }
    }
    if !report.changes.is_empty() {
        let _ = writeln!(out, "\n{}", paint("changes", "1", st));
        for c in &report.changes {
            let _ = writeln!(out, "  {} [{}] {}", c.kind, c.safety.as_str(), c.summary);
            if let Some(d) = &c.diff {
                for line in d.lines() {
                    let colored = match line.chars().next() {
                        Some('+') if !line.starts_with("+++") => paint(line, "32", st),
                        Some('-') if !line.starts_with("---") => paint(line, "31", st),
                        Some('@') => paint(line, "36", st),
                        _ => line.to_string(),
                    };
                    let _ = writeln!(out, "    {colored}");
                }
            } else if let (Some(b), Some(a)) = (&c.before, &c.after) {
                let _ = writeln!(out, "    {b} → {a}");
            }
        }
    }
    for n in &report.notes {
        let _ = writeln!(out, "\nnote: {n}");
    }
    let _ = writeln!(out, "\n{}", summary_line(report));
    out
}

fn render_rule(out: &mut String, r: &RuleResult, st: Style) {
    let _ = write!(out, "  {} {} ", badge(r.verdict, st), paint(&r.id, "1", st));
    let _ = writeln!(
        out,
        "{}",
        paint(&format!("[{}] {}", r.severity.as_str(), r.title), "2", st)
    );
    let detailed = r.verdict.is_finding() || r.verdict == Verdict::Waived || st.verbose;
    if !detailed {
        if let (Verdict::NotApplicable, Some(reason)) = (r.verdict, &r.reason) {
            let _ = writeln!(out, "            {}", paint(reason, "2", st));
        }
        return;
    }
    for m in &r.messages {
        let _ = writeln!(out, "            {m}");
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(out, "            reason: {reason}");
    }
    if !r.evidence.is_empty() {
        let ev: Vec<String> = r
            .evidence
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        let _ = writeln!(out, "            evidence: {}", ev.join(", "));
    }
    if r.verdict == Verdict::Fail {
        let _ = writeln!(
            out,
            "            why: {}",
            r.why.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    if let Some(fix) = &r.fix {
        let when = match fix.restart.as_str() {
            "nothing" => "takes effect at once".to_string(),
            "a reboot" => "takes effect after a reboot or remount".to_string(),
            other => format!("takes effect after restarting {other}"),
        };
        let _ = writeln!(out, "            fix ({}, {when}):", fix.safety.as_str());
        for a in &fix.actions {
            let _ = writeln!(out, "              - {}", describe_action(a));
        }
        if let Some(ins) = &fix.instructions {
            for l in ins.lines() {
                let _ = writeln!(out, "              {l}");
            }
        }
    }
}

/// `env.unset name=CUDA_LAUNCH_BLOCKING file=/job/env`
pub fn describe_action(a: &serde_json::Value) -> String {
    let Some(m) = a.as_object() else {
        return a.to_string();
    };
    let kind = m.get("kind").and_then(|k| k.as_str()).unwrap_or("?");
    let rest: Vec<String> = m
        .iter()
        .filter(|(k, _)| *k != "kind")
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    format!("{kind} {}", rest.join(" "))
}
