//! From findings to changes: render each failing rule's fix actions into concrete changes
//! (diffs, before → after, fingerprints), and the plan file that `apply PLAN` executes exactly.

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
    pub report: Report,
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
                        error: e,
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
