//! The apply transaction and rollback. One run holds the lock in the state directory. Before
//! each change its prior state is journaled (fsynced); then the change is made, journaled and
//! verified by reading it back. If any change or verification fails, every change this run made
//! is undone, newest first. `rollback` undoes a finished or interrupted run from its journal,
//! refusing where a target changed since (unless forced).

use crate::fixes::{self, FixCtx, FixError, Prior};
use crate::journal::{self, Journal, Record, RunStatus};
use crate::report::PlannedChange;
use crate::trust::TrustError;
use std::fs::File;
use std::path::{Path, PathBuf};

pub use crate::session::DEFAULT_STATE_DIR;

/// Why `apply` or `rollback` stopped. The cases a caller tells apart: the state directory
/// refused ([`ApplyError::State`]), another run holding the lock ([`ApplyError::Locked`]),
/// targets changed since the plan or the run ([`ApplyError::Drifted`]: nothing was changed), a
/// refusal before anything changed ([`ApplyError::Refused`]), and a rollback that ran but could
/// not undo everything ([`ApplyError::Incomplete`]). Where there is something to do about it,
/// `help` says what; it displays as a `help:` line under the message, as the command line
/// prints it.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    State(#[from] TrustError),
    #[error("another gpufix run holds the lock {}; wait for it to finish (see `gpufix history`)", path.display())]
    Locked { path: PathBuf },
    /// The state directory, lock or journal could not be created, opened, read or written.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("unknown fix kind `{0}`")]
    UnknownKind(String),
    /// A fix could not read its target's state.
    #[error(transparent)]
    Fix(#[from] FixError),
    /// Targets are not as the plan (or the run) left them; each line names one.
    #[error("{message}{}", help_line(help))]
    Drifted {
        message: String,
        drifted: Vec<String>,
        help: Option<String>,
    },
    /// Refused before anything was changed.
    #[error("{message}{}", help_line(help))]
    Refused {
        message: String,
        help: Option<String>,
    },
    /// A rollback that ran and could not undo everything.
    #[error("{message}{}", help_line(help))]
    Incomplete {
        message: String,
        help: Option<String>,
    },
}

impl ApplyError {
    /// What to do about it, where there is something to say.
    pub fn help(&self) -> Option<&str> {
        match self {
            ApplyError::State(e) => (!e.help.is_empty()).then_some(e.help.as_str()),
            ApplyError::Drifted { help, .. }
            | ApplyError::Refused { help, .. }
            | ApplyError::Incomplete { help, .. } => help.as_deref(),
            _ => None,
        }
    }

    fn refused(message: String, help: Option<String>) -> ApplyError {
        ApplyError::Refused { message, help }
    }

    fn io(what: String) -> impl FnOnce(std::io::Error) -> ApplyError {
        move |source| ApplyError::Io { what, source }
    }
}

/// `help` as the line the command line prints under a message.
fn help_line(help: &Option<String>) -> String {
    help.as_ref()
        .map(|h| format!("\nhelp: {h}"))
        .unwrap_or_default()
}

/// The run's lock: held until dropped. A second run refuses with a clear message.
pub struct Lock {
    _file: File,
}

pub fn lock(state: &Path) -> Result<Lock, ApplyError> {
    use std::os::unix::fs::OpenOptionsExt;
    journal::create_private_dir(state).map_err(ApplyError::io(format!(
        "cannot create state directory {}",
        state.display()
    )))?;
    journal::check_state(state)?;
    let path = state.join("lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(ApplyError::io(format!("cannot open {}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(Lock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(ApplyError::Locked { path }),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(ApplyError::io(format!("cannot lock {}", path.display()))(e))
        }
    }
}

#[derive(Debug)]
pub struct Outcome {
    pub run: String,
    /// Indexes of the changes made and verified.
    pub applied: Vec<usize>,
    pub error: Option<String>,
    /// The changes made before the error were undone.
    pub rolled_back: bool,
}

fn kind(change: &PlannedChange) -> Result<&'static dyn fixes::FixKind, ApplyError> {
    fixes::find(&change.kind).ok_or_else(|| ApplyError::UnknownKind(change.kind.clone()))
}

/// Refuse a stale plan before touching anything: the first change to each target must find
/// the target as the plan saw it.
pub fn check_fresh(changes: &[PlannedChange], cx: &FixCtx) -> Result<(), ApplyError> {
    let mut seen = std::collections::HashSet::new();
    let mut stale = Vec::new();
    for c in changes {
        if !seen.insert((c.kind.clone(), c.part.clone(), c.target.clone())) {
            continue;
        }
        let now = kind(c)?.fingerprint(c, cx)?;
        if now != c.fingerprint {
            stale.push(format!(
                "`{}` changed since the plan was made (plan saw {}, now {now})",
                c.target, c.fingerprint
            ));
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(ApplyError::Drifted {
            message: format!(
                "refusing a stale plan; nothing was changed:\n  {}",
                stale.join("\n  ")
            ),
            drifted: stale,
            help: Some("run `gpufix plan` again".into()),
        })
    }
}

/// Refuse to start while an earlier run was interrupted (its undo information must be used
/// first) or its journal is corrupt (what it changed is not known).
pub fn check_no_interrupted(state: &Path) -> Result<(), ApplyError> {
    for r in journal::runs(state) {
        if r.status == RunStatus::Interrupted {
            return Err(ApplyError::refused(
                format!(
                    "run {} was interrupted before it finished; nothing was changed now",
                    r.run
                ),
                Some(format!(
                    "run `gpufix rollback {}` to restore what it changed, then plan again",
                    r.run
                )),
            ));
        }
        if r.status == RunStatus::Corrupt {
            return Err(ApplyError::refused(
                format!(
                    "the journal of run {} is corrupt ({}); nothing was changed now",
                    r.run,
                    r.problem.as_deref().unwrap_or("unreadable"),
                ),
                Some(format!(
                    "read {}, restore what it changed by hand or with `gpufix rollback {} --force`, then move that run directory away",
                    state
                        .join("runs")
                        .join(&r.run)
                        .join("journal.jsonl")
                        .display(),
                    r.run
                )),
            ));
        }
    }
    Ok(())
}

/// Test hooks, read from the environment so CLI tests can inject failures into a real run:
/// `GPUFIX_TEST_FAULT` = `write-error` | `no-space` | `fail-after:N` (the N+1-th file write
/// fails), `GPUFIX_TEST_FAIL_VERIFY` = N (verification of the N-th change, 1-based, fails),
/// `GPUFIX_TEST_HOLD_LOCK_MS` = how long to hold the lock before applying (concurrency test).
/// Only with the `fault-injection` cargo feature; release builds never read these variables.
#[cfg(not(feature = "fault-injection"))]
fn test_hooks() -> Option<usize> {
    None
}

#[cfg(feature = "fault-injection")]
fn test_hooks() -> Option<usize> {
    use crate::safe_write::{Fault, set_fault};
    match std::env::var("GPUFIX_TEST_FAULT").ok().as_deref() {
        Some("write-error") => set_fault(Some(Fault::WriteError)),
        Some("no-space") => set_fault(Some(Fault::NoSpace)),
        Some(f) if f.starts_with("fail-after:") => {
            set_fault(f[11..].parse().ok().map(Fault::FailAfter));
        }
        _ => {}
    }
    if let Some(ms) = std::env::var("GPUFIX_TEST_HOLD_LOCK_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    std::env::var("GPUFIX_TEST_FAIL_VERIFY")
        .ok()
        .and_then(|v| v.parse().ok())
}

/// Apply `changes` (already approved) in one transaction.
pub fn apply(
    changes: &[PlannedChange],
    cx: &FixCtx,
    state: &Path,
    host: &str,
    root: Option<&Path>,
) -> Result<Outcome, ApplyError> {
    let _lock = lock(state)?;
    let fail_verify = test_hooks();
    check_no_interrupted(state)?;
    check_fresh(changes, cx)?;
    let run = journal::new_run_id();
    let mut j = Journal::create(state, &run).map_err(ApplyError::io(format!(
        "cannot create the journal in {}",
        state.display()
    )))?;
    let jerr = |e: std::io::Error| ApplyError::io("cannot write the journal".into())(e);
    j.append(&Record::Begin {
        run: run.clone(),
        started_at: journal::now(),
        host: host.to_string(),
        changes: changes.to_vec(),
        root: root.map(|r| r.display().to_string()),
        local_files: cx
            .local_files
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    })
    .map_err(jerr)?;
    let mut made: Vec<(usize, Prior)> = Vec::new();
    let mut applied = Vec::new();
    let mut failure = None;
    for (i, c) in changes.iter().enumerate() {
        let step = (|| -> Result<Option<Prior>, ApplyError> {
            let k = kind(c)?;
            let now = k.fingerprint(c, cx)?;
            if now != c.fingerprint {
                let line = format!(
                    "`{}` changed while applying (expected {}, found {now})",
                    c.target, c.fingerprint
                );
                return Err(ApplyError::Drifted {
                    message: line.clone(),
                    drifted: vec![line],
                    help: None,
                });
            }
            let prior = k.save(c, cx)?;
            j.append(&Record::Intent {
                index: i,
                prior: prior.clone(),
            })
            .map_err(jerr)?;
            // A failed apply wrote nothing (writes are atomic): there is nothing to undo.
            k.apply(c, cx)?;
            made.push((i, prior.clone()));
            j.append(&Record::Applied { index: i }).map_err(jerr)?;
            if fail_verify == Some(i + 1) {
                return Err(ApplyError::refused(
                    "verification failed: injected by GPUFIX_TEST_FAIL_VERIFY".into(),
                    None,
                ));
            }
            k.verify(c, cx)
                .map_err(|e| ApplyError::refused(format!("verification failed: {e}"), None))?;
            j.append(&Record::Verified { index: i }).map_err(jerr)?;
            Ok(Some(prior))
        })();
        match step {
            Ok(_) => applied.push(i),
            Err(e) => {
                let _ = j.append(&Record::Failed {
                    index: i,
                    error: e.to_string(),
                });
                failure = Some(format!("{} ({}): {e}", c.target, c.kind));
                break;
            }
        }
    }
    if let Some(err) = failure {
        let undo_errs = undo_all(changes, &made, cx, &mut j);
        let status = if undo_errs.is_empty() {
            RunStatus::RolledBack
        } else {
            RunStatus::Failed
        };
        let _ = j.append(&Record::End {
            status,
            at: journal::now(),
        });
        let mut msg = err;
        if !undo_errs.is_empty() {
            msg.push_str(&format!("\nundo also failed: {}", undo_errs.join("; ")));
        }
        return Ok(Outcome {
            run,
            applied: Vec::new(),
            error: Some(msg),
            rolled_back: undo_errs.is_empty(),
        });
    }
    j.append(&Record::End {
        status: RunStatus::Applied,
        at: journal::now(),
    })
    .map_err(jerr)?;
    Ok(Outcome {
        run,
        applied,
        error: None,
        rolled_back: false,
    })
}

/// Undo changes newest first, journaling each; returns the errors.
fn undo_all(
    changes: &[PlannedChange],
    made: &[(usize, Prior)],
    cx: &FixCtx,
    j: &mut Journal,
) -> Vec<String> {
    let mut errs = Vec::new();
    for (i, prior) in made.iter().rev() {
        let c = &changes[*i];
        match kind(c).and_then(|k| Ok(k.undo(c, prior, cx)?)) {
            Ok(()) => {
                let _ = j.append(&Record::Undone { index: *i });
            }
            Err(e) => errs.push(format!("{}: {e}", c.target)),
        }
    }
    errs
}

/// The changes of a corrupt run that cannot be undone, one line each: those with no readable
/// intent record (the line holding their prior state is the corrupt one), not undone already.
/// Whether each was made is said as far as the readable records tell.
fn lost_changes(
    changes: &[PlannedChange],
    recs: &[Record],
    undone: &std::collections::HashSet<usize>,
) -> Vec<String> {
    let saved: std::collections::HashSet<usize> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Intent { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    let finished = recs.iter().any(|r| {
        matches!(
            r,
            Record::End {
                status: RunStatus::Applied,
                ..
            }
        )
    });
    let made = |i: usize| {
        finished
            || recs.iter().any(|r| {
                matches!(r, Record::Applied { index } | Record::Verified { index } if *index == i)
            })
    };
    (0..changes.len())
        .filter(|i| !saved.contains(i) && !undone.contains(i))
        .map(|i| {
            let c = &changes[i];
            format!(
                "  change {} `{}` ({}): {}; {}",
                i + 1,
                c.target,
                c.kind,
                crate::privacy::redact_text(&c.summary),
                if made(i) {
                    "it was made and stays"
                } else {
                    "it may have been made"
                }
            )
        })
        .collect()
}

/// Undo a run from its journal. `force` undoes even where a target changed since the run.
pub fn rollback(
    state: &Path,
    run: Option<&str>,
    force: bool,
    cx: &FixCtx,
) -> Result<RollbackOutcome, ApplyError> {
    let _lock = lock(state)?;
    let runs = journal::runs(state);
    let info = match run {
        Some(r) => runs.iter().find(|x| x.run == r).ok_or_else(|| {
            ApplyError::refused(
                format!("no run `{r}` in {}", state.join("runs").display()),
                Some("`gpufix history` lists the runs".into()),
            )
        })?,
        None => runs
            .iter()
            .rev()
            .find(|x| x.status != RunStatus::RolledBack)
            .ok_or_else(|| {
                ApplyError::refused(
                    format!(
                        "nothing to roll back: no run in {} that is not rolled back already",
                        state.display()
                    ),
                    None,
                )
            })?,
    };
    if info.status == RunStatus::RolledBack {
        return Err(ApplyError::refused(
            format!("run {} is already rolled back", info.run),
            None,
        ));
    }
    if info.status == RunStatus::Corrupt && !force {
        return Err(ApplyError::refused(
            format!(
                "refusing to roll back run {}: its journal is corrupt ({}); nothing was changed",
                info.run,
                info.problem.as_deref().unwrap_or("unreadable"),
            ),
            Some(format!(
                "read {}; `gpufix rollback {} --force` undoes what can still be read",
                state
                    .join("runs")
                    .join(&info.run)
                    .join("journal.jsonl")
                    .display(),
                info.run
            )),
        ));
    }
    let dir: PathBuf = state.join("runs").join(&info.run);
    let recs = journal::read(&dir).map_err(ApplyError::io(format!(
        "cannot read the journal of {}",
        info.run
    )))?;
    let Some(Record::Begin { changes, .. }) = recs.first() else {
        return Err(ApplyError::refused(
            format!("journal of {} has no begin record", info.run),
            None,
        ));
    };
    check_journal(&info.run, changes, &recs, cx)?;
    let undone: std::collections::HashSet<usize> = recs
        .iter()
        .filter_map(|r| {
            if let Record::Undone { index } = r {
                Some(*index)
            } else {
                None
            }
        })
        .collect();
    let applied: std::collections::HashSet<usize> = recs
        .iter()
        .filter_map(|r| {
            if let Record::Applied { index } = r {
                Some(*index)
            } else {
                None
            }
        })
        .collect();
    let made: Vec<(usize, Prior)> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Intent { index, prior } if !undone.contains(index) => {
                Some((*index, prior.clone()))
            }
            _ => None,
        })
        .collect();
    // Where a later change of the same run touched the same target, only the last one's
    // result is expected on disk.
    let mut conflicts = Vec::new();
    if !force {
        let mut last_for: std::collections::HashMap<(String, String), usize> =
            std::collections::HashMap::new();
        for (i, _) in &made {
            let c = &changes[*i];
            last_for.insert((c.kind.clone() + &c.part, c.target.clone()), *i);
        }
        for (i, _) in &made {
            let c = &changes[*i];
            if last_for.get(&(c.kind.clone() + &c.part, c.target.clone())) != Some(i)
                || !applied.contains(i)
            {
                continue;
            }
            let k = kind(c)?;
            let now = k.fingerprint(c, cx)?;
            if now != k.after_fingerprint(c) {
                let detail = match (&c.after_text, c.kind.as_str()) {
                    (Some(after), _) => {
                        let cur = cx
                            .host
                            .fs_path(&c.target)
                            // never through a link planted at the target since the run
                            .and_then(|p| crate::safe_write::read_target(&p).ok())
                            .and_then(|t| String::from_utf8(t.content).ok())
                            .unwrap_or_default();
                        crate::fixes::file::unified_diff(&c.target, after, &cur)
                    }
                    _ => format!("expected {}, found {now}\n", k.after_fingerprint(c)),
                };
                conflicts.push(format!(
                    "`{}` changed since run {} (what gpufix wrote → what is there now):\n{detail}",
                    c.target, info.run
                ));
            }
        }
    }
    if !conflicts.is_empty() {
        let all = conflicts.join("\n");
        return Err(ApplyError::Drifted {
            // each conflict ends with its diff's last line
            message: format!(
                "refusing to roll back; nothing was changed:\n{}",
                all.strip_suffix('\n').unwrap_or(&all)
            ),
            drifted: conflicts,
            help: Some(
                "re-apply your edits after rollback, or pass --force to restore the prior state anyway"
                    .into(),
            ),
        });
    }
    // A corrupt journal (forced): a change whose intent record cannot be read has no saved
    // prior state, so it cannot be undone. Each one is named, and the rollback fails.
    let lost = if info.status == RunStatus::Corrupt {
        lost_changes(changes, &recs, &undone)
    } else {
        Vec::new()
    };
    let mut j = Journal::open(&dir).map_err(ApplyError::io("cannot open the journal".into()))?;
    let errs = undo_all(changes, &made, cx, &mut j);
    if !lost.is_empty() {
        let _ = j.append(&Record::End {
            status: RunStatus::Failed,
            at: journal::now(),
        });
        let mut msg = format!(
            "rollback of {} is incomplete: {} change(s) undone, {} not undone: the journal is corrupt ({}) and holds no readable prior state for:\n{}",
            info.run,
            made.len() - errs.len(),
            lost.len(),
            info.problem.as_deref().unwrap_or("unreadable"),
            lost.join("\n")
        );
        if !errs.is_empty() {
            msg.push_str(&format!("\nundo also failed: {}", errs.join("; ")));
        }
        return Err(ApplyError::Incomplete {
            message: msg,
            help: Some(
                "restore those targets by hand (from a backup, or undo the change the line names)"
                    .into(),
            ),
        });
    }
    if !errs.is_empty() {
        let _ = j.append(&Record::End {
            status: RunStatus::Failed,
            at: journal::now(),
        });
        return Err(ApplyError::Incomplete {
            message: format!("rollback of {} failed: {}", info.run, errs.join("; ")),
            help: None,
        });
    }
    j.append(&Record::End {
        status: RunStatus::RolledBack,
        at: journal::now(),
    })
    .map_err(ApplyError::io("cannot write the journal".into()))?;
    Ok(RollbackOutcome {
        run: info.run.clone(),
        undone: made.iter().map(|(i, _)| changes[*i].clone()).collect(),
        was: info.status,
    })
}

/// Refuse a journal whose records do not fit its own run: an index past its changes, a target
/// outside the run's recorded roots, directories to remove that are not above the target, a
/// prior state with set-id bits. Nothing is undone when any record is refused.
fn check_journal(
    run: &str,
    changes: &[PlannedChange],
    recs: &[Record],
    cx: &FixCtx,
) -> Result<(), ApplyError> {
    let bad = |why: String| {
        Err(ApplyError::refused(
            format!("refusing to roll back run {run}: {why}; nothing was changed"),
            Some(
                "this journal was not written by this run of gpufix as it stands; inspect it before acting on it"
                    .into(),
            ),
        ))
    };
    for r in recs {
        let index = match r {
            Record::Intent { index, .. }
            | Record::Applied { index }
            | Record::Verified { index }
            | Record::Failed { index, .. }
            | Record::Undone { index } => *index,
            _ => continue,
        };
        if index >= changes.len() {
            return bad(format!(
                "its journal names change index {index}, but the run has {} change(s)",
                changes.len()
            ));
        }
        let c = &changes[index];
        if fixes::find(&c.kind).is_none() {
            return bad(format!("change {index} has an unknown kind `{}`", c.kind));
        }
        let Record::Intent { prior, .. } = r else {
            continue;
        };
        if c.part != "file" {
            continue;
        }
        // env and config fixes without `file:` write --env-file / --config: the run's own
        if c.action.get("file").is_none()
            && matches!(c.kind.as_str(), "env.set" | "env.unset" | "config.set")
            && !cx
                .local_files
                .iter()
                .any(|f| f.as_os_str() == c.target.as_str())
        {
            return bad(format!(
                "change {index} targets `{}`, which is not one of the run's recorded --config/--env-file files",
                c.target
            ));
        }
        let real = fixes::file::resolve(&c.target, cx).map_err(|e| {
            ApplyError::refused(
                format!("refusing to roll back run {run}: change {index}: {e}"),
                None,
            )
        })?;
        if let Prior::File {
            mode, created_dirs, ..
        } = prior
        {
            if mode & 0o6000 != 0 {
                return bad(format!(
                    "change {index} would restore `{}` with set-id bits (mode {:o})",
                    c.target,
                    mode & 0o7777
                ));
            }
            for d in created_dirs {
                let d = Path::new(d);
                if !(real.starts_with(d) && real != d) || cx.roots.check(d).is_err() {
                    return bad(format!(
                        "change {index} would remove directory `{}`, which is not above its target `{}`",
                        d.display(),
                        real.display()
                    ));
                }
            }
        }
    }
    Ok(())
}

pub struct RollbackOutcome {
    pub run: String,
    pub undone: Vec<PlannedChange>,
    /// The run's status before the rollback (applied, interrupted, failed).
    pub was: RunStatus,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::real::RealHost;
    use crate::probes::Inputs;
    use crate::report::Safety;
    use crate::safe_write::Roots;

    fn planned(action: serde_json::Value, cx: &FixCtx) -> Vec<PlannedChange> {
        let k = fixes::find("file.line").unwrap();
        let action = action.as_object().unwrap().clone();
        k.prepare(&action, cx)
            .unwrap()
            .into_iter()
            .map(|p| PlannedChange {
                rule: "test".into(),
                kind: "file.line".into(),
                target: p.target,
                safety: Safety::Safe,
                summary: p.summary,
                diff: p.diff,
                before: p.before,
                after: p.after,
                before_text: p.before_text,
                after_text: p.after_text,
                part: p.part.into(),
                action: serde_json::Value::Object(action.clone()),
                fingerprint: p.fingerprint,
                restart: "nothing".into(),
            })
            .collect()
    }

    /// A file changed after the plan was made: `apply` refuses it as drifted (with its help
    /// as a field), and a fix's read-back of it is a read-back error, not a message to parse.
    #[test]
    fn a_file_changed_since_the_plan_is_refused_as_drifted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        let conf = dir.path().join("etc/a.conf");
        std::fs::write(&conf, "x=1\n").unwrap();
        let host = RealHost::new(Some(dir.path().to_path_buf()));
        let inputs = Inputs::default();
        let roots = Roots::new([dir.path().to_path_buf()]);
        let cx = FixCtx {
            host: &host,
            inputs: &inputs,
            roots: &roots,
            local_files: Vec::new(),
            overlay: Default::default(),
        };
        let changes = planned(
            serde_json::json!({"path": "/etc/a.conf", "line": "y=2"}),
            &cx,
        );
        assert_eq!(changes.len(), 1);
        check_fresh(&changes, &cx).unwrap();

        std::fs::write(&conf, "x=3\n").unwrap();
        let e = check_fresh(&changes, &cx).unwrap_err();
        let ApplyError::Drifted { drifted, help, .. } = &e else {
            panic!("not a drift: {e:?}");
        };
        assert_eq!(drifted.len(), 1);
        assert!(drifted[0].starts_with("`/etc/a.conf` changed since the plan was made"));
        assert_eq!(help.as_deref(), Some("run `gpufix plan` again"));
        assert_eq!(e.help(), help.as_deref());
        assert!(
            e.to_string()
                .starts_with("refusing a stale plan; nothing was changed:\n  `/etc/a.conf`")
                && e.to_string().ends_with("\nhelp: run `gpufix plan` again"),
            "{e}"
        );

        let k = fixes::find("file.line").unwrap();
        match k.verify(&changes[0], &cx) {
            Err(FixError::ReadBack { target, .. }) => assert_eq!(target, "/etc/a.conf"),
            other => panic!("not a read-back error: {other:?}"),
        }
        // a journal whose saved state is not a file's cannot undo a file change
        let value = Prior::Value {
            value: serde_json::json!(1),
        };
        assert!(matches!(
            k.undo(&changes[0], &value, &cx),
            Err(FixError::NoPrior { what: "file state" })
        ));
    }
}
