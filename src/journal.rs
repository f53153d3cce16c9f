//! Write-ahead journal of one apply run, under the state directory
//! (`/var/lib/gpufix/runs/<run>/journal.jsonl`). Every record is appended and fsynced before
//! the step it announces, so a crash at any point leaves enough to undo: the prior state of a
//! change is on disk before the change is made. A run without an `end` record was interrupted.

use crate::fixes::Prior;
use crate::report::PlannedChange;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Record {
    Begin {
        run: String,
        started_at: String,
        host: String,
        changes: Vec<PlannedChange>,
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
        status: String,
        at: String,
    },
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
        std::fs::create_dir_all(&runs)?;
        let dir = runs.join(run);
        std::fs::create_dir(&dir)?;
        fsync_dir(&runs)?;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(dir.join("journal.jsonl"))?;
        fsync_dir(&dir)?;
        Ok(Journal { file, dir })
    }

    pub fn open(dir: &Path) -> std::io::Result<Journal> {
        let file = OpenOptions::new()
            .append(true)
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

/// Records of a run; a torn last line (a crash mid-append) is ignored.
pub fn read(dir: &Path) -> std::io::Result<Vec<Record>> {
    let text = std::fs::read_to_string(dir.join("journal.jsonl"))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// A run as `gpufix history` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub run: String,
    pub started_at: String,
    pub host: String,
    /// applied, rolled-back, failed, interrupted
    pub status: String,
    pub changes: usize,
    pub made: usize,
    pub rules: Vec<String>,
}

pub fn info(dir: &Path) -> Option<RunInfo> {
    let recs = read(dir).ok()?;
    let Some(Record::Begin {
        run,
        started_at,
        host,
        changes,
    }) = recs.first().cloned()
    else {
        return None;
    };
    let status = recs
        .iter()
        .rev()
        .find_map(|r| match r {
            Record::End { status, .. } => Some(status.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "interrupted".into());
    let made = recs
        .iter()
        .filter(|r| matches!(r, Record::Intent { .. }))
        .count();
    let mut rules: Vec<String> = changes.iter().map(|c| c.rule.clone()).collect();
    rules.dedup();
    Some(RunInfo {
        run,
        started_at,
        host,
        status,
        changes: changes.len(),
        made,
        rules,
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
