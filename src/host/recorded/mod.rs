//! Snapshot replay and recording.
//!
//! A [`Snapshot`] is every answer a host gave, per call, in call order: `gpufix snapshot` wraps
//! the live host in a [`RecordingHost`], runs the probes, and writes the result; a
//! [`SnapshotHost`] later replays it. Repeated calls of the same key answer the recorded values
//! in order and then keep repeating the last one, so a sampled probe that read `/proc/diskstats`
//! twice sees both readings. The file format is described by `schemas/snapshot.schema.json`.
//!
//! Tests make degraded variants of a recorded host by loading it and replacing single answers
//! (`set_file`, `set_nvml`, `set_command`, ...), so every fixture starts from real data.
//!
//! One job per file: the snapshot format is here (with the hosts' state, which the files below
//! share); `recording` wraps a live host; `replay` answers from a snapshot and simulates the
//! changes fixes make; `builders` replaces single answers for tests and fixtures; `tests`.

mod builders;
mod recording;
mod replay;
#[cfg(test)]
mod tests;

use super::CudaCheck;
use super::{CommandOutput, FileMeta, Host, HostError};
use crate::vocab::nvml::{GpuSample, NvmlReading};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const SNAPSHOT_VERSION: u32 = 1;

/// The message of the not-found error a [`SnapshotHost`] answers for a key it has no record
/// of. Probes that must not read "not recorded" as "absent" (a command that was never run is
/// not a missing program) compare against it.
pub const NOT_RECORDED: &str = "not in the snapshot";

/// An I/O error as recorded: a stable kind name and the message.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordedError {
    /// `not-found`, `permission-denied`, `invalid-input`, `invalid-data`, `timed-out`,
    /// `not-a-directory`, `is-a-directory`, or `other`.
    pub kind: String,
    pub message: String,
}

impl RecordedError {
    pub fn from_io(e: &io::Error) -> RecordedError {
        let kind = match e.kind() {
            io::ErrorKind::NotFound => "not-found",
            io::ErrorKind::PermissionDenied => "permission-denied",
            io::ErrorKind::InvalidInput => "invalid-input",
            io::ErrorKind::InvalidData => "invalid-data",
            io::ErrorKind::TimedOut => "timed-out",
            io::ErrorKind::NotADirectory => "not-a-directory",
            io::ErrorKind::IsADirectory => "is-a-directory",
            _ => "other",
        };
        RecordedError {
            kind: kind.to_string(),
            message: e.to_string(),
        }
    }

    pub fn to_io(&self) -> io::Error {
        let kind = match self.kind.as_str() {
            "not-found" => io::ErrorKind::NotFound,
            "permission-denied" => io::ErrorKind::PermissionDenied,
            "invalid-input" => io::ErrorKind::InvalidInput,
            "invalid-data" => io::ErrorKind::InvalidData,
            "timed-out" => io::ErrorKind::TimedOut,
            "not-a-directory" => io::ErrorKind::NotADirectory,
            "is-a-directory" => io::ErrorKind::IsADirectory,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, self.message.clone())
    }
}

/// One recorded answer: the value, or `{"error": {"kind": ..., "message": ...}}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Recorded<T> {
    Err { error: RecordedError },
    Ok(T),
}

impl<T: Clone> Recorded<T> {
    pub fn from_result(r: &io::Result<T>) -> Recorded<T> {
        match r {
            Ok(v) => Recorded::Ok(v.clone()),
            Err(e) => Recorded::Err {
                error: RecordedError::from_io(e),
            },
        }
    }
    pub fn to_result(&self) -> io::Result<T> {
        match self {
            Recorded::Ok(v) => Ok(v.clone()),
            Recorded::Err { error } => Err(error.to_io()),
        }
    }
}

/// File content: a JSON string when it is UTF-8 (procfs and config files are), otherwise
/// `{"hex": "..."}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Bytes { hex: String },
}

impl Content {
    pub fn from_bytes(b: &[u8]) -> Content {
        match std::str::from_utf8(b) {
            Ok(s) => Content::Text(s.to_string()),
            Err(_) => Content::Bytes {
                hex: hex::encode(b),
            },
        }
    }
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        match self {
            Content::Text(s) => Ok(s.as_bytes().to_vec()),
            Content::Bytes { hex } => hex::decode(hex).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad hex in snapshot: {e}"),
                )
            }),
        }
    }
}

/// An NVML reading as recorded: `{"ok": {...}}` or `{"error": "NVML cannot be loaded: ..."}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum NvmlRecord<T> {
    Ok(T),
    Error(String),
}

/// The error is recorded as its text, which keeps a snapshot readable and every older one
/// loadable; replay reads it back with [`HostError::from_recorded`].
impl<T: Clone> NvmlRecord<T> {
    fn from_result(r: &Result<T, HostError>) -> Self {
        match r {
            Ok(v) => NvmlRecord::Ok(v.clone()),
            Err(e) => NvmlRecord::Error(e.to_string()),
        }
    }
    fn to_result(&self) -> Result<T, HostError> {
        match self {
            NvmlRecord::Ok(v) => Ok(v.clone()),
            NvmlRecord::Error(e) => Err(HostError::from_recorded(e)),
        }
    }
}

/// Everything a host answered, per call, in call order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub version: u32,
    pub gpufix_version: String,
    /// RFC 3339
    pub recorded_at: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub files: BTreeMap<String, Vec<Recorded<Content>>>,
    #[serde(default)]
    pub dirs: BTreeMap<String, Vec<Recorded<Vec<String>>>>,
    #[serde(default)]
    pub metadata: BTreeMap<String, Vec<Recorded<FileMeta>>>,
    #[serde(default)]
    pub links: BTreeMap<String, Vec<Recorded<String>>>,
    /// Keyed by the argv joined with single spaces.
    #[serde(default)]
    pub commands: BTreeMap<String, Vec<Recorded<CommandOutput>>>,
    #[serde(default)]
    pub nvml: Vec<NvmlRecord<NvmlReading>>,
    #[serde(default)]
    pub nvml_samples: Vec<NvmlRecord<Vec<GpuSample>>>,
    /// Answers of the native CUDA check, in call order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuda_checks: Vec<NvmlRecord<CudaCheck>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cpu_count: Option<usize>,
    #[serde(default)]
    pub now: Vec<f64>,
}

impl Snapshot {
    pub fn new(description: &str) -> Snapshot {
        Snapshot {
            version: SNAPSHOT_VERSION,
            gpufix_version: env!("CARGO_PKG_VERSION").to_string(),
            recorded_at: jiff::Timestamp::now().to_string(),
            description: description.to_string(),
            files: BTreeMap::new(),
            dirs: BTreeMap::new(),
            metadata: BTreeMap::new(),
            links: BTreeMap::new(),
            commands: BTreeMap::new(),
            nvml: Vec::new(),
            nvml_samples: Vec::new(),
            cuda_checks: Vec::new(),
            env: BTreeMap::new(),
            cpu_count: None,
            now: Vec::new(),
        }
    }

    pub fn load(path: &Path) -> anyhow::Result<Snapshot> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read snapshot `{}`", path.display()))?;
        let s: Snapshot = serde_json::from_str(&text)
            .with_context(|| format!("`{}` is not a gpufix snapshot", path.display()))?;
        if s.version != SNAPSHOT_VERSION {
            anyhow::bail!(
                "snapshot `{}` has version {}, this gpufix reads version {SNAPSHOT_VERSION}",
                path.display(),
                s.version
            );
        }
        Ok(s)
    }

    /// Put everything recorded through the privacy filter ([`crate::privacy`]) before the
    /// snapshot is written: snapshots are made to be shared. gpufix's own environment keeps
    /// only the allowed variables; a job's `/proc/PID/environ` keeps every name with the values
    /// of the others redacted (a replay sees the same variables set); command lines, file
    /// texts and command output lose secret assignments and credential-shaped tokens. Returns
    /// (kept, dropped, redacted) of gpufix's own environment and how many recorded files and
    /// outputs were changed.
    pub fn redact(&mut self) -> ((usize, usize, usize), usize) {
        use crate::privacy;
        let own = privacy::filter_env(&mut self.env);
        let mut changed = 0;
        for (path, recs) in self.files.iter_mut() {
            let proc_file = path.starts_with("/proc/");
            for r in recs.iter_mut() {
                let Recorded::Ok(content) = r else { continue };
                let Ok(bytes) = content.to_bytes() else {
                    continue;
                };
                let shown = if proc_file && path.ends_with("/environ") {
                    privacy::redact_environ(&bytes)
                } else if proc_file && path.ends_with("/cmdline") {
                    privacy::redact_cmdline(&bytes)
                } else {
                    match std::str::from_utf8(&bytes) {
                        Ok(t) => privacy::redact_text(t).into_owned().into_bytes(),
                        Err(_) => continue,
                    }
                };
                if shown != bytes {
                    *content = Content::from_bytes(&shown);
                    changed += 1;
                }
            }
        }
        for (argv, recs) in self.commands.iter_mut() {
            // `env` prints an environment: filtered as one
            let environment = argv == "env" || argv.ends_with("/env");
            for r in recs.iter_mut() {
                let Recorded::Ok(out) = r else { continue };
                for text in [&mut out.stdout, &mut out.stderr] {
                    let shown = if environment {
                        privacy::redact_env_text(text, "")
                    } else {
                        privacy::redact_text(text)
                    };
                    if let std::borrow::Cow::Owned(t) = shown {
                        *text = t;
                        changed += 1;
                    }
                }
            }
        }
        (own, changed)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a snapshot always serializes")
    }
}

pub fn command_key(argv: &[String]) -> String {
    argv.join(" ")
}

/// Wraps another host and remembers every answer it gives.
pub struct RecordingHost {
    inner: Arc<dyn Host>,
    snap: Mutex<Snapshot>,
}

/// Replays a [`Snapshot`]. Each key keeps a cursor: the n-th call answers the n-th recorded
/// value, and calls past the end repeat the last one.
pub struct SnapshotHost {
    name: String,
    snap: Snapshot,
    cursors: Mutex<BTreeMap<(u8, String), usize>>,
    /// Changes fixes made to this recorded host (runtime values, NVML settings, modules,
    /// mounts): later reads see them, so apply → verify → undo runs end to end without a
    /// live machine.
    changed: Mutex<Changed>,
}

#[derive(Default)]
struct Changed {
    files: BTreeMap<String, Vec<u8>>,
    nvml: Option<NvmlReading>,
}

const FILES: u8 = 0;
const DIRS: u8 = 1;
const META: u8 = 2;
const LINKS: u8 = 3;
const COMMANDS: u8 = 4;
const NVML: u8 = 5;
const SAMPLES: u8 = 6;
const NOW: u8 = 7;
const CUDA: u8 = 8;
