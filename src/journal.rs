//! Write-ahead journal of one apply run, under the state directory
//! (`/var/lib/gpufix/runs/<run>/journal.jsonl`). Every record is appended and fsynced before
//! the step it announces, so a crash at any point leaves enough to undo: the prior state of a
//! change is on disk before the change is made. A run without an `end` record was interrupted.
//!
//! The state directory is private: created 0700, files 0600, and refused when another user owns
//! it or it is group- or world-writable, since rollback acts on what the journal says. A line
//! that does not parse is tolerated only as the torn last line of a crash mid-append; anywhere
//! else it marks the run `corrupt`: shown in `history`, blocking `apply`, refused by `rollback`
//! unless forced.

use crate::fixes::Prior;
use crate::report::PlannedChange;
use crate::trust::TrustError;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Create `dir` (and missing parents) with mode 0700 for the last component.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// Why the state directory (or a run in it) is not private: rollback acts on what it says.
const FOREIGN_JOURNAL: &str = "a journal someone else wrote could make rollback write anything";

fn check_private(p: &Path, m: &std::fs::Metadata) -> Result<(), TrustError> {
    if !crate::trust::trusted_uid(m.uid()) {
        return Err(TrustError {
            message: format!(
                "refusing the state directory: {} is owned by uid {}, not by root or the user running gpufix",
                p.display(),
                m.uid()
            ),
            help: format!("{FOREIGN_JOURNAL}; remove it or `chown root` it if it is gpufix's own"),
        });
    }
    if m.mode() & 0o022 != 0 {
        return Err(TrustError {
            message: format!(
                "refusing the state directory: {} is group- or world-writable (mode {:o})",
                p.display(),
                m.mode() & 0o7777,
            ),
            help: format!(
                "{FOREIGN_JOURNAL}; `chmod go-w {}` once you checked its runs",
                p.display()
            ),
        });
    }
    Ok(())
}

/// Refuse a state directory (or anything in it) that someone else could have written.
pub fn check_state(state: &Path) -> Result<(), TrustError> {
    if !state.exists() {
        return Ok(());
    }
    crate::trust::check(state, "state directory")?;
    let runs = state.join("runs");
    let Ok(m) = std::fs::symlink_metadata(&runs) else {
        return Ok(());
    };
    check_private(&runs, &m)?;
    let rd =
        std::fs::read_dir(&runs).map_err(|e| format!("cannot list {}: {e}", runs.display()))?;
    for e in rd.flatten() {
        let dir = e.path();
        let m = std::fs::symlink_metadata(&dir).map_err(|e| e.to_string())?;
        check_private(&dir, &m)?;
        let j = dir.join("journal.jsonl");
        if let Ok(m) = std::fs::symlink_metadata(&j) {
            if !m.is_file() {
                return Err(format!(
                    "refusing the state directory: {} is not a regular file",
                    j.display()
                )
                .into());
            }
            check_private(&j, &m)?;
        }
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Record {
    Begin {
        run: String,
        started_at: String,
        host: String,
        changes: Vec<PlannedChange>,
        /// The run's `--root` (absent: `/`); rollback must be given the same.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        root: Option<String>,
        /// The run's `--config` / `--env-file`, absolute: the only files outside the root it
        /// may have written.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        local_files: Vec<String>,
    },
    Intent {
        index: usize,
        prior: Prior,
    },
    Applied {
        index: usize,
    },
    Verified {
        index: usize,
    },
    Failed {
        index: usize,
        error: String,
    },
    Undone {
        index: usize,
    },
    /// `applied`, `rolled-back`, `failed`
    End {
        status: RunStatus,
        at: String,
    },
}

/// How an apply run ended: the journal's end record, or what its absence (or damage) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Every change was made and verified.
    Applied,
    /// A change failed and every change made was undone (or `gpufix rollback` undid the run).
    RolledBack,
    /// A change failed and undoing failed too, or a rollback failed.
    Failed,
    /// No end record: the process died mid-run and changes may be half-made.
    Interrupted,
    /// The journal cannot be read or names another run.
    Corrupt,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Applied,
        RunStatus::RolledBack,
        RunStatus::Failed,
        RunStatus::Interrupted,
        RunStatus::Corrupt,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Applied => "applied",
            RunStatus::RolledBack => "rolled-back",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Corrupt => "corrupt",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

pub struct Journal {
    file: File,
    pub dir: PathBuf,
}

pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn fsync_dir(p: &Path) -> std::io::Result<()> {
    File::open(p)?.sync_all()
}

impl Journal {
    /// Create the run directory and its journal (both fsynced into their parents).
    pub fn create(state: &Path, run: &str) -> std::io::Result<Journal> {
        let runs = state.join("runs");
        create_private_dir(&runs)?;
        let dir = runs.join(run);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        fsync_dir(&runs)?;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join("journal.jsonl"))?;
        fsync_dir(&dir)?;
        Ok(Journal { file, dir })
    }

    pub fn open(dir: &Path) -> std::io::Result<Journal> {
        let file = OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join("journal.jsonl"))?;
        Ok(Journal {
            file,
            dir: dir.to_path_buf(),
        })
    }

    pub fn append(&mut self, rec: &Record) -> std::io::Result<()> {
        let mut line = serde_json::to_string(rec).map_err(std::io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.sync_data()?;
        crate::crashpoint::hit("journal: after append");
        Ok(())
    }
}

/// What a run's journal holds: its records, and why it is corrupt if it is.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub records: Vec<Record>,
    /// A line other than a torn last one does not parse, or the first record is not `begin`.
    pub corrupt: Option<String>,
}

/// Largest journal read (a journal holds the plan's changes and the prior text of each target).
pub const MAX_JOURNAL_BYTES: u64 = 256 << 20;

/// Read a run's journal. A torn last line (a crash mid-append: no final newline) is ignored;
/// any other line that does not parse makes the run corrupt.
pub fn read_run(dir: &Path) -> std::io::Result<Read> {
    use std::io::Read as _;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir.join("journal.jsonl"))?;
    // checked on the descriptor read, not only on the path check_state looked at
    let m = f.metadata()?;
    if !m.is_file() || !crate::trust::trusted_uid(m.uid()) || m.mode() & 0o022 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "refusing journal {}: not a regular file owned by root or the user running gpufix and writable by nobody else",
                dir.join("journal.jsonl").display()
            ),
        ));
    }
    let mut text = String::new();
    f.take(MAX_JOURNAL_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_JOURNAL_BYTES {
        return Ok(Read {
            records: Vec::new(),
            corrupt: Some(format!("input too large (over {MAX_JOURNAL_BYTES} bytes)")),
        });
    }
    let mut out = Read::default();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let torn = i + 1 == lines.len() && !raw.ends_with('\n');
        let line = raw.trim_end_matches('\n');
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.records.push(r),
            Err(_) if torn => {}
            Err(e) => {
                if out.corrupt.is_none() {
                    out.corrupt = Some(format!("line {} does not parse: {e}", i + 1));
                }
            }
        }
    }
    if out.corrupt.is_none() && !matches!(out.records.first(), Some(Record::Begin { .. })) {
        out.corrupt = Some("it does not start with a begin record".into());
    }
    Ok(out)
}

/// Records of a run (see [`read_run`]; corruption is ignored here).
pub fn read(dir: &Path) -> std::io::Result<Vec<Record>> {
    Ok(read_run(dir)?.records)
}

/// A run as `gpufix history` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub run: String,
    pub started_at: String,
    pub host: String,
    pub status: RunStatus,
    pub changes: usize,
    pub made: usize,
    pub rules: Vec<String>,
    /// Why the run is corrupt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

pub fn info(dir: &Path) -> Option<RunInfo> {
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let read = match read_run(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => Read {
            records: Vec::new(),
            corrupt: Some(format!("cannot read the journal: {e}")),
        },
    };
    let recs = read.records;
    let begin = match recs.first().cloned() {
        Some(Record::Begin {
            run,
            started_at,
            host,
            changes,
            ..
        }) => Some((run, started_at, host, changes)),
        _ => None,
    };
    let (run, started_at, host, changes) =
        begin.unwrap_or_else(|| (name.clone(), String::new(), String::new(), Vec::new()));
    let status = if read.corrupt.is_some() || run != name {
        RunStatus::Corrupt
    } else {
        recs.iter()
            .rev()
            .find_map(|r| match r {
                Record::End { status, .. } => Some(*status),
                _ => None,
            })
            .unwrap_or(RunStatus::Interrupted)
    };
    let problem = read.corrupt.or_else(|| {
        (run != name).then(|| format!("its begin record names run `{run}`, not `{name}`"))
    });
    let made = recs
        .iter()
        .filter(|r| matches!(r, Record::Intent { .. }))
        .count();
    let mut rules: Vec<String> = changes.iter().map(|c| c.rule.clone()).collect();
    rules.dedup();
    Some(RunInfo {
        run: name,
        started_at,
        host,
        status,
        changes: changes.len(),
        made,
        rules,
        problem,
    })
}

/// Every run, oldest first.
pub fn runs(state: &Path) -> Vec<RunInfo> {
    let Ok(rd) = std::fs::read_dir(state.join("runs")) else {
        return Vec::new();
    };
    let mut v: Vec<RunInfo> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| info(&e.path()))
        .collect();
    v.sort_by(|a, b| a.run.cmp(&b.run));
    v
}

/// A sortable, unique run id: `20261202T120301Z-4242`.
pub fn new_run_id() -> String {
    format!(
        "{}-{}",
        jiff::Timestamp::now().strftime("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id()
    )
}
