//! Human output, cause first: the findings a person must act on, most severe first, each with
//! its evidence, why it matters and the fix it proposes; then the rules that could not be judged
//! because of them, collapsed to one line per cause; one summary line at the end. Passing and
//! not-applicable rules only with `-v`, where a pass line says what was checked and not found.

use crate::report::{Report, RuleResult, Safety, Verdict};
use std::cmp::Reverse;
use std::fmt::Write;

#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
    /// Also print passing and not-applicable rules.
    pub verbose: bool,
    /// Only the summary line.
    pub quiet: bool,
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

/// How many rule ids a collapsed line names before `+N more` (all of them with `-v`).
const NAMED: usize = 3;

fn names(ids: &[&str], st: Style) -> String {
    if st.verbose || ids.len() <= NAMED {
        return ids.join(", ");
    }
    format!("{}, +{} more", ids[..NAMED].join(", "), ids.len() - NAMED)
}

pub fn render(report: &Report, st: Style) -> String {
    let mut out = String::new();
    if st.quiet {
        let _ = writeln!(out, "{}", summary_line(report));
        return out;
    }
    let _ = writeln!(out, "gpufix plan for {}", report.host);
    if !report.inputs.is_empty() {
        let _ = writeln!(out, "  inputs: {}", report.inputs.join(", "));
    }
    // Fail and unknown, most severe first; fail before unknown at one severity; a stable sort
    // keeps evaluation order (bottom-up: causes before consequences) among equals.
    let mut judged: Vec<&RuleResult> = report
        .results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Unknown))
        .collect();
    judged.sort_by_key(|r| (Reverse(r.severity), r.verdict != Verdict::Fail));
    if !judged.is_empty() {
        out.push('\n');
    }
    let mut done: Vec<&str> = Vec::new();
    for r in &judged {
        if done.contains(&r.id.as_str()) {
            continue;
        }
        // Unknown rules with one and the same reason (one probe could not read one file) are
        // one line: the reason is the news, not each rule.
        let same: Vec<&RuleResult> = if r.verdict == Verdict::Unknown && r.messages.is_empty() {
            judged
                .iter()
                .filter(|o| {
                    o.verdict == Verdict::Unknown && o.messages.is_empty() && o.reason == r.reason
                })
                .copied()
                .collect()
        } else {
            vec![*r]
        };
        done.extend(same.iter().map(|o| o.id.as_str()));
        if same.len() > 1 {
            let ids: Vec<&str> = same.iter().map(|o| o.id.as_str()).collect();
            let _ = writeln!(
                out,
                "  {} {} {}",
                badge(Verdict::Unknown, st),
                paint(&ids.join(", "), "1", st),
                paint(&format!("[{}]", r.severity.as_str()), "2", st)
            );
            if let Some(reason) = &r.reason {
                let _ = writeln!(out, "            reason: {reason}");
            }
        } else {
            render_rule(&mut out, r, st);
        }
    }
    // Blocked rules, one line per root cause: the first rule each waits on that is itself a
    // finding and not blocked (following blocked blockers down), so everything a missing driver
    // blocks is one line however the dependencies chain.
    let mut causes: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Blocked)
    {
        let cause = root_cause(report, r);
        match causes.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, ids)) => ids.push(&r.id),
            None => causes.push((cause, vec![&r.id])),
        }
    }
    for (cause, ids) in &causes {
        let what = if ids.len() == 1 {
            "1 rule waits".to_string()
        } else {
            format!("{} rules wait", ids.len())
        };
        let _ = writeln!(
            out,
            "  {} {what} on {cause}: {}",
            badge(Verdict::Blocked, st),
            names(ids, st)
        );
    }
    let waived: Vec<&RuleResult> = report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Waived)
        .collect();
    if !waived.is_empty() {
        out.push('\n');
        for r in waived {
            render_rule(&mut out, r, st);
        }
    }
    if st.verbose {
        let quiet: Vec<&RuleResult> = report
            .results
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable))
            .collect();
        if !quiet.is_empty() {
            out.push('\n');
        }
        for r in quiet {
            let detail = match (r.verdict, &r.reason) {
                (Verdict::NotApplicable, Some(reason)) => reason.clone(),
                (Verdict::NotApplicable, None) => "not applicable here".to_string(),
                _ => format!("checked, not found: {}", r.title),
            };
            let _ = writeln!(
                out,
                "  {} {} {}",
                badge(r.verdict, st),
                paint(&r.id, "1", st),
                paint(&detail, "2", st)
            );
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
    let hidden = report.count(Verdict::Pass) + report.count(Verdict::NotApplicable);
    let more = if !st.verbose && hidden > 0 {
        " (-v shows passing and not-applicable rules)"
    } else {
        ""
    };
    let _ = writeln!(out, "\n{}{more}", summary_line(report));
    once_per_input(&out)
}

/// What a cut paste lacks is said in full the first time ("input ends early: the paste stops
/// inside GPU …"); every later rule that misses a field of the same input says "as above", so a
/// truncated `nvidia-smi -q` does not repeat the same sentence on every line.
fn once_per_input(text: &str) -> String {
    const OPEN: &str = "(input ends early: ";
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        // the matching `)`: the note itself may hold parentheses
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in tail.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                '\n' => break,
                _ => {}
            }
        }
        let Some(end) = end else {
            out.push_str(tail);
            return out;
        };
        let note = &tail[..end];
        if seen.contains(&note) {
            out.push_str("(input ends early, as above)");
        } else {
            seen.push(note);
            out.push_str(note);
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The first rule `r` waits on that failed or is unknown, following blocked blockers down.
fn root_cause<'a>(report: &'a Report, r: &'a RuleResult) -> &'a str {
    let mut cur = r;
    // Dependencies are acyclic (checked at load); the bound only guards a hand-made report.
    for _ in 0..report.results.len() {
        let Some(first) = cur.blocked_by.first() else {
            break;
        };
        let direct = cur.blocked_by.iter().find(|b| {
            report
                .results
                .iter()
                .any(|o| &o.id == *b && o.verdict != Verdict::Blocked)
        });
        if let Some(d) = direct {
            return d;
        }
        match report.results.iter().find(|o| &o.id == first) {
            Some(next) => cur = next,
            None => return first,
        }
    }
    cur.blocked_by
        .first()
        .map_or(cur.id.as_str(), String::as_str)
}

/// Columns a person's terminal shows whole: every evidence line fits in them.
const WIDTH: usize = 100;
/// Evidence lines a rule shows without `-v` (a job's worker census reads 25 values, with the
/// loader-workers rule's parameters: 9 lines); the values past them are counted.
const EVIDENCE_LINES: usize = 9;
/// Where an evidence line starts; the lines it wraps onto start under its first value.
const EVIDENCE_LEAD: &str = "            evidence: ";
/// The least room a value keeps beside a long name.
const MIN_VALUE_CHARS: usize = 16;

/// One evidence value as the threshold read it, in at most `max` characters. A list or map
/// too long for that is named by its size, never printed as a cut-off serialised blob
/// (`--format json` has it whole); a long string or number is cut on a character.
fn evidence_value(v: &serde_json::Value, max: usize) -> String {
    let s = v.to_string();
    let n = s.chars().count();
    if n <= max {
        return s;
    }
    match v {
        serde_json::Value::Object(m) => format!("{{… {} keys}}", m.len()),
        serde_json::Value::Array(a) => format!("[… {} items]", a.len()),
        _ => {
            let note = |left: usize| format!("… (+{left} characters)");
            let keep = max.saturating_sub(note(n).chars().count()).max(1);
            let head: String = s.chars().take(keep).collect();
            format!("{head}{}", note(n - keep))
        }
    }
}

/// The evidence a person reads, each `name = value` as the threshold named it: a whole probe
/// output (`cfg = {…}`) is left out where the values the rule read from it
/// (`cfg.values.num_workers`) are listed too; each fits on an evidence line.
fn shown_evidence(evidence: &std::collections::BTreeMap<String, serde_json::Value>) -> Vec<String> {
    let room = WIDTH - EVIDENCE_LEAD.len();
    evidence
        .iter()
        .filter(|(k, v)| {
            !(v.is_object() || v.is_array())
                || !evidence.keys().any(|other| {
                    other.len() > k.len()
                        && other.starts_with(k.as_str())
                        && matches!(other.as_bytes()[k.len()], b'.' | b'[')
                })
        })
        .map(|(k, v)| {
            // `name = value,` within the line
            let max = room
                .saturating_sub(k.chars().count() + 4)
                .max(MIN_VALUE_CHARS);
            format!("{k} = {}", evidence_value(v, max))
        })
        .collect()
}

/// The evidence items wrapped into lines of at most [`WIDTH`] columns, the first after
/// [`EVIDENCE_LEAD`] and the rest under its first value. Without `verbose`, at most
/// [`EVIDENCE_LINES`] lines: the items past them are counted on the last (`(+N more: -v shows
/// them)`).
fn evidence_lines(items: &[String], verbose: bool) -> Vec<String> {
    let room = WIDTH - EVIDENCE_LEAD.len();
    let width = |l: &[&str]| l.iter().map(|i| i.chars().count() + 2).sum::<usize>();
    let mut lines: Vec<Vec<&str>> = Vec::new();
    for it in items {
        match lines.last_mut() {
            // `, item,`: the comma after it if a line follows
            Some(l) if width(l) + it.chars().count() < room => l.push(it),
            _ => lines.push(vec![it]),
        }
    }
    let mut more = String::new();
    if !verbose && lines.len() > EVIDENCE_LINES {
        lines.truncate(EVIDENCE_LINES);
        loop {
            let shown: usize = lines.iter().map(Vec::len).sum();
            more = format!("(+{} more: -v shows them)", items.len() - shown);
            let last = lines.last_mut().expect("EVIDENCE_LINES > 0");
            if last.is_empty() || width(last) + more.chars().count() <= room {
                break;
            }
            last.pop();
        }
    }
    let n = lines.len();
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 {
                EVIDENCE_LEAD.to_string()
            } else {
                " ".repeat(EVIDENCE_LEAD.len())
            };
            let mut s = lead + &l.join(", ");
            if i + 1 < n {
                s.push(',');
            } else if !more.is_empty() {
                if !l.is_empty() {
                    s.push_str(", ");
                }
                s.push_str(&more);
            }
            s
        })
        .collect()
}

fn render_rule(out: &mut String, r: &RuleResult, st: Style) {
    let _ = write!(out, "  {} {} ", badge(r.verdict, st), paint(&r.id, "1", st));
    let _ = writeln!(
        out,
        "{}",
        paint(&format!("[{}] {}", r.severity.as_str(), r.title), "2", st)
    );
    for m in &r.messages {
        let _ = writeln!(out, "            {m}");
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(out, "            reason: {reason}");
    }
    if !r.evidence.is_empty() {
        for line in evidence_lines(&shown_evidence(&r.evidence), st.verbose) {
            let _ = writeln!(out, "{line}");
        }
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
            // a manual fix is the person's to make: "at once" would read as gpufix's promise
            "nothing" if fix.safety == Safety::Manual => "yours to make".to_string(),
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
    // a launch-script flag or Python setting reads as its user writes it, with its file
    let shown = match (kind, m.get("key").and_then(|k| k.as_str())) {
        ("config.set", Some(key)) => {
            crate::formats::shown_key(key, m.get("file").and_then(|f| f.as_str()))
        }
        _ => None,
    };
    let rest: Vec<String> = shown
        .iter()
        .cloned()
        .chain(
            m.iter()
                // an empty parameter is one the rule left to its default (`file:` of a source
                // that names no file): not worth a `file=` in the line
                .filter(|(k, v)| *k != "kind" && v.as_str() != Some(""))
                .filter(|(k, _)| shown.is_none() || !matches!(k.as_str(), "key" | "file"))
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                }),
        )
        .collect();
    format!("{kind} {}", rest.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27: a fix's key reads as its user writes the setting, at its file and line.
    #[test]
    fn fix_keys_read_as_the_user_writes_them() {
        let actions = serde_json::json!([
            {"kind": "config.set", "file": "train.py", "key": "DataLoader@L5.num_workers", "value": 8},
            {"kind": "config.set", "file": "launch.sh", "key": "--dataloader_num_workers@L3", "value": 8},
            {"kind": "config.set", "file": "/srv/proj/data.py", "key": "def build_loader@L9.num_workers", "value": 8},
            {"kind": "config.set", "file": "main.py", "key": "{num_workers}@L50", "value": 8},
            {"kind": "config.set", "file": "main.py", "key": "=NUM_WORKERS@L12", "value": 8},
            {"kind": "config.set", "file": "", "key": "dict@L5.NUM_WORKERS", "value": 8},
            {"kind": "config.set", "file": "cfg.yaml", "key": "data.num_workers", "value": 8},
            {"kind": "env.unset", "name": "CUDA_LAUNCH_BLOCKING", "file": "/job/env"},
        ]);
        let lines: Vec<String> = actions
            .as_array()
            .unwrap()
            .iter()
            .map(describe_action)
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn a_long_list_or_map_is_named_by_its_size_and_a_long_string_is_cut() {
        let short = serde_json::json!({"num_workers": 0});
        assert_eq!(evidence_value(&short, 60), r#"{"num_workers":0}"#);
        let keys: serde_json::Map<String, serde_json::Value> = (0..100)
            .map(|i| (format!("layer_{i}"), serde_json::json!(i)))
            .collect();
        let long = serde_json::Value::Object(keys);
        assert_eq!(evidence_value(&long, 60), "{… 100 keys}");
        assert_eq!(
            evidence_value(&serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8]), 12),
            "[… 8 items]"
        );
        // cut on a character, not a byte, within the room given
        let wide = serde_json::json!("é".repeat(300));
        let s = evidence_value(&wide, 60);
        assert!(s.ends_with("… (+261 characters)"), "{s}");
        assert_eq!(s.chars().count(), 60, "{s}");
    }

    /// Issue 27: an evidence line fits a 100-column screen. Many values wrap onto lines under
    /// the first value; past [`EVIDENCE_LINES`] lines they are counted, unless -v.
    #[test]
    fn evidence_wraps_to_the_screen_and_counts_what_is_left() {
        let ev: std::collections::BTreeMap<String, serde_json::Value> = (0..40)
            .map(|i| (format!("p.value_{i:02}"), serde_json::json!(i * 1000)))
            .chain([(
                "p.cmdline".to_string(),
                serde_json::json!("python train.py ".repeat(20)),
            )])
            .collect();
        let items = shown_evidence(&ev);
        let short = evidence_lines(&items, false);
        let all = evidence_lines(&items, true);
        for l in short.iter().chain(&all) {
            assert!(
                l.chars().count() <= WIDTH,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert_eq!(short.len(), EVIDENCE_LINES, "{short:#?}");
        assert!(all.len() > EVIDENCE_LINES, "{all:#?}");
        assert!(all[0].starts_with(EVIDENCE_LEAD));
        for l in &all[1..] {
            assert!(l.starts_with(&" ".repeat(EVIDENCE_LEAD.len())));
            assert!(!l[EVIDENCE_LEAD.len()..].starts_with(' '), "{l}");
        }
        let shown = short.join("\n").matches(" = ").count();
        assert!(
            short[EVIDENCE_LINES - 1].ends_with(&format!("(+{} more: -v shows them)", 41 - shown)),
            "{short:#?}"
        );
        // -v shows every value once
        assert_eq!(all.join("\n").matches(" = ").count(), 41);
        insta::assert_snapshot!(format!("{}\n-v:\n{}", short.join("\n"), all.join("\n")));
    }

    #[test]
    fn a_whole_probe_output_is_not_shown_beside_the_values_read_from_it() {
        let ev: std::collections::BTreeMap<String, serde_json::Value> = [
            (
                "cfg".to_string(),
                serde_json::json!({"values": {"num_workers": 2}}),
            ),
            ("cfg.values.num_workers".to_string(), serde_json::json!(2)),
            ("gpus".to_string(), serde_json::json!([1, 2])),
            ("params.max_workers".to_string(), serde_json::json!(8)),
        ]
        .into();
        assert_eq!(
            shown_evidence(&ev),
            [
                "cfg.values.num_workers = 2",
                "gpus = [1,2]",
                "params.max_workers = 8"
            ]
        );
    }
}
