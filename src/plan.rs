//! From findings to changes: render each failing rule's fix actions into concrete changes
//! (diffs, before → after, fingerprints), and the plan file `gpufix plan -o` writes.
//!
//! A plan file is a proposal, not an instruction: `apply PLAN` loads the playbooks and inputs
//! the plan records, derives the changes again from the host as it is, and applies them only
//! when they are exactly the plan's (kind, target, content, argv, safety); roots come from the
//! command line and each kind's safety from the playbooks, never from the file.

use crate::fixes::{self, FixCtx};
use crate::report::{PlannedChange, Report, Safety, Verdict};
use serde::{Deserialize, Serialize};

pub const PLAN_VERSION: u32 = 1;

/// `gpufix plan -o plan.json`: everything apply needs, computed ahead of time.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanFile {
    pub plan_version: u32,
    pub gpufix_version: String,
    pub created_at: String,
    /// `--root` the plan was made under (apply must use the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// `--config` and `--env-file` the plan read (absolute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_files: Vec<String>,
    /// What the plan was made from: `apply PLAN` loads the same and refuses a command line
    /// that names something else.
    #[serde(default)]
    pub made_from: MadeFrom,
    pub report: Report,
    /// What the plan learned from the running job (`--pid`): the files it found through the
    /// job, as whom they are changed and their fingerprints. `apply PLAN` after the job has
    /// stopped re-checks these files, not the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobFacts>,
}

/// What a plan made with `--pid` learned from the process. A job's config lives on after the
/// job stops, but what says which config, which key and which owner (its argv, cwd, /proc) goes
/// with the process: these facts are kept so that the plan stays applicable after the job is
/// stopped, as people close the loop (plan, stop, apply, restart). They are facts of the
/// job's past: `apply` re-checks the files and their fingerprints and says that the rest was
/// not re-observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobFacts {
    /// The process the plan read.
    pub pid: u32,
    /// Its start time (clock ticks after boot, /proc/PID/stat field 22): a process with the
    /// same pid and another start time is another process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    /// Its command line, secrets redacted.
    pub command: String,
    /// The files the plan found through the job and proposes to change.
    #[serde(default)]
    pub files: Vec<JobFile>,
    /// What the failing rules read from the job (their messages: the value and where it is set).
    #[serde(default)]
    pub facts: Vec<String>,
}

/// One file found through the job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobFile {
    /// The host path (as the plan's changes name it).
    pub path: String,
    /// The job's owner: the file is read and changed with this authority, never root's.
    pub owner: crate::authority::Owner,
    /// The file's fingerprint when the plan was made (`sha256:…`).
    pub fingerprint: String,
}

/// The facts a plan records about the job it was made from: the changes whose target the host
/// read through the job, and the messages of the rules behind them.
pub fn job_facts(host: &dyn crate::host::Host, pid: u32, report: &Report) -> Option<JobFacts> {
    let stat = host.read_file(&format!("/proc/{pid}/stat")).ok()?;
    let st = crate::probes::process::parse_stat(&String::from_utf8_lossy(&stat))?;
    let argv: Vec<String> = host
        .read_file(&format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut files: Vec<JobFile> = Vec::new();
    let mut rules: Vec<&str> = Vec::new();
    for c in &report.changes {
        let Some(owner) = host.job_file_owner(&c.target) else {
            continue;
        };
        if !rules.contains(&c.rule.as_str()) {
            rules.push(&c.rule);
        }
        // a later change to one file chains on the first: the first saw the disk
        if files.iter().any(|f| f.path == c.target) {
            continue;
        }
        files.push(JobFile {
            path: c.target.clone(),
            owner,
            fingerprint: c.fingerprint.clone(),
        });
    }
    let facts = report
        .results
        .iter()
        .filter(|r| rules.contains(&r.id.as_str()))
        .flat_map(|r| r.messages.iter().map(move |m| format!("{}: {m}", r.id)))
        .map(|m| crate::privacy::redact_text(&m).into_owned())
        .collect();
    Some(JobFacts {
        pid,
        start_ticks: Some(st.start_ticks),
        command: crate::privacy::redact_text(&argv.join(" ")).into_owned(),
        files,
        facts,
    })
}

/// Whether the process a plan was made from still runs: the same pid with the same start time.
pub fn job_running(host: &dyn crate::host::Host, job: &JobFacts) -> bool {
    let Ok(stat) = host.read_file(&format!("/proc/{}/stat", job.pid)) else {
        return false;
    };
    match crate::probes::process::parse_stat(&String::from_utf8_lossy(&stat)) {
        Some(st) => job.start_ticks.is_none_or(|t| t == st.start_ticks),
        None => false,
    }
}

/// The playbooks, values, inputs and selection a plan was made from (paths absolute).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MadeFrom {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub playbooks: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<String>,
    #[serde(default)]
    pub no_system: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl_log: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_log: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// `--only`
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
    /// `--sample`, milliseconds.
    #[serde(default)]
    pub sample_ms: u64,
}

/// The differences between the changes a plan file proposes and those derived now, one line
/// (or a diff) per difference, for the operator to read. Empty when they are the same.
pub fn differences(file: &[PlannedChange], derived: &[PlannedChange]) -> Vec<String> {
    let mut out = Vec::new();
    if file.len() != derived.len() {
        out.push(format!(
            "the plan file has {} change(s); the playbooks propose {} now",
            file.len(),
            derived.len()
        ));
    }
    for (i, (f, d)) in file.iter().zip(derived).enumerate() {
        if f == d {
            continue;
        }
        let n = i + 1;
        let mut field = |name: &str, a: String, b: String| {
            if a != b {
                out.push(format!(
                    "change {n} ({}): {name}: the plan file has {}, gpufix derives {}",
                    crate::escape::escape(&d.target),
                    crate::escape::escape(&a),
                    crate::escape::escape(&b)
                ));
            }
        };
        field("rule", f.rule.clone(), d.rule.clone());
        field("kind", f.kind.clone(), d.kind.clone());
        field("target", f.target.clone(), d.target.clone());
        field("part", f.part.clone(), d.part.clone());
        field("safety", f.safety.as_str().into(), d.safety.as_str().into());
        field("action", f.action.to_string(), d.action.to_string());
        field("restart", f.restart.clone(), d.restart.clone());
        field("fingerprint", f.fingerprint.clone(), d.fingerprint.clone());
        field("after", format!("{:?}", f.after), format!("{:?}", d.after));
        field("summary", f.summary.clone(), d.summary.clone());
        if f.after_text != d.after_text || f.diff != d.diff || f.before_text != d.before_text {
            let (a, b) = (
                d.after_text.clone().unwrap_or_default(),
                f.after_text.clone().unwrap_or_default(),
            );
            out.push(format!(
                "change {n} ({}): the plan file would write other content (what gpufix derives → what the file says):\n{}",
                crate::escape::escape(&d.target),
                crate::escape::escape_lines(&crate::fixes::file::unified_diff(&d.target, &a, &b))
            ));
        }
    }
    out
}

/// Fill `report.changes` for every failing rule with an executable fix. Problems preparing a
/// fix become notes on the report (the rule still fails; its fix cannot be planned).
pub fn plan_changes(report: &mut Report, cx: &FixCtx) -> Vec<Unplannable> {
    let mut problems = Vec::new();
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    for r in &report.results {
        if r.verdict != Verdict::Fail {
            continue;
        }
        let Some(fix) = &r.fix else { continue };
        if fix.safety == Safety::Manual {
            continue;
        }
        for action in &fix.actions {
            let Some(obj) = action.as_object() else {
                continue;
            };
            let kind = obj.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            let Some(k) = fixes::spec(kind) else {
                notes.push(format!("fix of `{}`: unknown fix kind `{kind}`", r.id));
                problems.push(Unplannable {
                    rule: r.id.clone(),
                    kind: kind.to_string(),
                    error: format!("unknown fix kind `{kind}`"),
                });
                continue;
            };
            let mut params = obj.clone();
            params.remove("kind");
            if let Some(why) = k.imp.left_to_you(&params, cx) {
                notes.push(format!(
                    "fix of `{}` ({kind}) is left to you: {why}; the rule's fix says how",
                    r.id
                ));
                continue;
            }
            match fixes::prepare_checked(k, &params, cx) {
                Ok(prepared) => {
                    for p in prepared {
                        changes.push(PlannedChange {
                            rule: r.id.clone(),
                            kind: kind.to_string(),
                            target: p.target,
                            safety: fix.safety,
                            summary: p.summary,
                            diff: p.diff,
                            before: p.before,
                            after: p.after,
                            before_text: p.before_text,
                            after_text: p.after_text,
                            part: p.part.to_string(),
                            action: serde_json::Value::Object(params.clone()),
                            fingerprint: p.fingerprint,
                            restart: fix.restart.clone(),
                        });
                    }
                }
                Err(e) => {
                    notes.push(format!("fix of `{}` cannot be planned: {e}", r.id));
                    problems.push(Unplannable {
                        rule: r.id.clone(),
                        kind: kind.to_string(),
                        error: e.to_string(),
                    });
                }
            }
        }
    }
    report.changes = changes;
    report.notes.extend(notes);
    problems
}

/// A failing rule's fix action that could not be turned into a change (a refused target, a
/// missing --env-file, an entry fstab does not have).
#[derive(Debug, Clone)]
pub struct Unplannable {
    pub rule: String,
    pub kind: String,
    pub error: String,
}
