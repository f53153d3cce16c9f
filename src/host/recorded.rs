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

use super::nvml_types::{GpuSample, NvmlReading};
use super::{CommandOutput, FileMeta, Host};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const SNAPSHOT_VERSION: u32 = 1;

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

impl<T: Clone> NvmlRecord<T> {
    fn from_result(r: &Result<T, String>) -> Self {
        match r {
            Ok(v) => NvmlRecord::Ok(v.clone()),
            Err(e) => NvmlRecord::Error(e.clone()),
        }
    }
    fn to_result(&self) -> Result<T, String> {
        match self {
            NvmlRecord::Ok(v) => Ok(v.clone()),
            NvmlRecord::Error(e) => Err(e.clone()),
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

impl RecordingHost {
    pub fn new(inner: Arc<dyn Host>) -> RecordingHost {
        let snap = Snapshot::new(&format!("recorded from {}", inner.describe()));
        RecordingHost {
            inner,
            snap: Mutex::new(snap),
        }
    }

    /// What has been recorded so far (the environment and CPU count are always included).
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.snap.lock().unwrap().clone();
        if s.env.is_empty() {
            s.env = self.inner.env();
        }
        if s.cpu_count.is_none() {
            s.cpu_count = Some(self.inner.cpu_count());
        }
        s
    }

    pub fn into_snapshot(self) -> Snapshot {
        self.snapshot()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Snapshot) -> R) -> R {
        f(&mut self.snap.lock().unwrap())
    }
}

impl Host for RecordingHost {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn is_live(&self) -> bool {
        self.inner.is_live()
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        let r = self.inner.read_file(path);
        let rec = match &r {
            Ok(b) => Recorded::Ok(Content::from_bytes(b)),
            Err(e) => Recorded::Err {
                error: RecordedError::from_io(e),
            },
        };
        self.with(|s| s.files.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        let r = self.inner.read_dir(path);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.dirs.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        let r = self.inner.metadata(path);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.metadata.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        let r = self.inner.read_link(path);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.links.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn run(&self, argv: &[String], timeout: Duration) -> io::Result<CommandOutput> {
        let r = self.inner.run(argv, timeout);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.commands.entry(command_key(argv)).or_default().push(rec));
        r
    }
    fn nvml(&self) -> Result<NvmlReading, String> {
        let r = self.inner.nvml();
        let rec = NvmlRecord::from_result(&r);
        self.with(|s| s.nvml.push(rec));
        r
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, String> {
        let r = self.inner.nvml_sample();
        let rec = NvmlRecord::from_result(&r);
        self.with(|s| s.nvml_samples.push(rec));
        r
    }
    fn env(&self) -> BTreeMap<String, String> {
        let e = self.inner.env();
        self.with(|s| s.env = e.clone());
        e
    }
    fn now(&self) -> f64 {
        let t = self.inner.now();
        self.with(|s| s.now.push(t));
        t
    }
    fn sleep(&self, d: Duration) {
        self.inner.sleep(d)
    }
    fn cpu_count(&self) -> usize {
        let n = self.inner.cpu_count();
        self.with(|s| s.cpu_count = Some(n));
        n
    }
}

/// Replays a [`Snapshot`]. Each key keeps a cursor: the n-th call answers the n-th recorded
/// value, and calls past the end repeat the last one.
pub struct SnapshotHost {
    name: String,
    snap: Snapshot,
    cursors: Mutex<BTreeMap<(u8, String), usize>>,
}

const FILES: u8 = 0;
const DIRS: u8 = 1;
const META: u8 = 2;
const LINKS: u8 = 3;
const COMMANDS: u8 = 4;
const NVML: u8 = 5;
const SAMPLES: u8 = 6;
const NOW: u8 = 7;

impl SnapshotHost {
    pub fn load(path: &Path) -> anyhow::Result<SnapshotHost> {
        let snap = Snapshot::load(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Ok(SnapshotHost {
            name: format!("snapshot {name}"),
            snap,
            cursors: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn from_snapshot(snap: Snapshot) -> SnapshotHost {
        SnapshotHost {
            name: if snap.description.is_empty() {
                "snapshot".to_string()
            } else {
                format!("snapshot ({})", snap.description)
            },
            snap,
            cursors: Mutex::new(BTreeMap::new()),
        }
    }

    /// An empty snapshot host (every file missing, NVML not recorded): tests build on it.
    pub fn empty() -> SnapshotHost {
        SnapshotHost::from_snapshot(Snapshot::new("in-memory test host"))
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// Pick the answer for the next call of `key` among `n` recorded ones.
    fn next_index(&self, table: u8, key: &str, n: usize) -> usize {
        let mut c = self.cursors.lock().unwrap();
        let i = c.entry((table, key.to_string())).or_insert(0);
        let pick = (*i).min(n.saturating_sub(1));
        *i += 1;
        pick
    }

    fn replay<T: Clone>(
        &self,
        table: u8,
        key: &str,
        list: Option<&Vec<Recorded<T>>>,
    ) -> io::Result<T> {
        match list {
            Some(l) if !l.is_empty() => l[self.next_index(table, key, l.len())].to_result(),
            _ => Err(super::not_found("not in the snapshot")),
        }
    }

    /// Make `path` read as `content` (every later call), replacing what was recorded.
    pub fn set_file(&mut self, path: &str, content: impl AsRef<[u8]>) -> &mut Self {
        self.snap.files.insert(
            path.to_string(),
            vec![Recorded::Ok(Content::from_bytes(content.as_ref()))],
        );
        self
    }

    /// Make successive reads of `path` answer these contents in order (then repeat the last).
    pub fn set_file_sequence<C: AsRef<[u8]>>(&mut self, path: &str, contents: &[C]) -> &mut Self {
        self.snap.files.insert(
            path.to_string(),
            contents
                .iter()
                .map(|c| Recorded::Ok(Content::from_bytes(c.as_ref())))
                .collect(),
        );
        self
    }

    /// Make `path` missing (not-found).
    pub fn remove_file(&mut self, path: &str) -> &mut Self {
        self.snap.files.remove(path);
        self
    }

    pub fn set_dir(&mut self, path: &str, names: &[&str]) -> &mut Self {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort();
        self.snap
            .dirs
            .insert(path.to_string(), vec![Recorded::Ok(v)]);
        self
    }

    pub fn set_metadata(&mut self, path: &str, meta: FileMeta) -> &mut Self {
        self.snap
            .metadata
            .insert(path.to_string(), vec![Recorded::Ok(meta)]);
        self
    }

    pub fn set_link(&mut self, path: &str, target: &str) -> &mut Self {
        self.snap
            .links
            .insert(path.to_string(), vec![Recorded::Ok(target.to_string())]);
        self
    }

    /// Make `argv` answer `out` (every later call).
    pub fn set_command(&mut self, argv: &[&str], out: CommandOutput) -> &mut Self {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        self.snap
            .commands
            .insert(command_key(&argv), vec![Recorded::Ok(out)]);
        self
    }

    /// Make `argv` fail to start with this error (a missing program is `not-found`).
    pub fn set_command_error(&mut self, argv: &[&str], err: io::Error) -> &mut Self {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        self.snap.commands.insert(
            command_key(&argv),
            vec![Recorded::Err {
                error: RecordedError::from_io(&err),
            }],
        );
        self
    }

    /// Replace every recorded NVML reading with this one.
    pub fn set_nvml(&mut self, reading: Result<NvmlReading, String>) -> &mut Self {
        self.snap.nvml = vec![NvmlRecord::from_result(&reading)];
        self
    }

    /// Change the first recorded NVML reading and make it the only one. Panics when there is
    /// no successful reading to edit (a test helper: call `set_nvml` first).
    pub fn edit_nvml(&mut self, f: impl FnOnce(&mut NvmlReading)) -> &mut Self {
        match self.snap.nvml.first_mut() {
            Some(NvmlRecord::Ok(r)) => {
                f(r);
                let r = r.clone();
                self.snap.nvml = vec![NvmlRecord::Ok(r)];
            }
            _ => panic!("edit_nvml needs a recorded NVML reading"),
        }
        self
    }

    /// Replace the recorded sample sequence.
    pub fn set_samples(&mut self, samples: Vec<Result<Vec<GpuSample>, String>>) -> &mut Self {
        self.snap.nvml_samples = samples.iter().map(NvmlRecord::from_result).collect();
        self
    }

    pub fn set_env(&mut self, env: BTreeMap<String, String>) -> &mut Self {
        self.snap.env = env;
        self
    }

    pub fn set_cpu_count(&mut self, n: usize) -> &mut Self {
        self.snap.cpu_count = Some(n);
        self
    }

    pub fn set_now(&mut self, times: Vec<f64>) -> &mut Self {
        self.snap.now = times;
        self
    }
}

impl Host for SnapshotHost {
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn is_live(&self) -> bool {
        false
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        self.replay(FILES, path, self.snap.files.get(path))?
            .to_bytes()
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        self.replay(DIRS, path, self.snap.dirs.get(path))
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        self.replay(META, path, self.snap.metadata.get(path))
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        self.replay(LINKS, path, self.snap.links.get(path))
    }
    fn run(&self, argv: &[String], _timeout: Duration) -> io::Result<CommandOutput> {
        let key = command_key(argv);
        self.replay(COMMANDS, &key, self.snap.commands.get(&key))
    }
    fn nvml(&self) -> Result<NvmlReading, String> {
        let l = &self.snap.nvml;
        if l.is_empty() {
            return Err("NVML was not recorded in this snapshot".to_string());
        }
        l[self.next_index(NVML, "", l.len())].to_result()
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, String> {
        let l = &self.snap.nvml_samples;
        if l.is_empty() {
            // A snapshot with a full reading but no samples still answers from the reading.
            return self.nvml().map(|r| r.gpus.iter().map(sample_of).collect());
        }
        l[self.next_index(SAMPLES, "", l.len())].to_result()
    }
    fn env(&self) -> BTreeMap<String, String> {
        self.snap.env.clone()
    }
    fn now(&self) -> f64 {
        let l = &self.snap.now;
        if l.is_empty() {
            return 0.0;
        }
        l[self.next_index(NOW, "", l.len())]
    }
    fn sleep(&self, _d: Duration) {}
    fn cpu_count(&self) -> usize {
        self.snap.cpu_count.unwrap_or(1)
    }
}

/// The sampled fields of a full reading.
pub fn sample_of(g: &super::GpuReading) -> GpuSample {
    GpuSample {
        index: g.index,
        utilization_gpu: g.utilization_gpu.clone(),
        utilization_memory: g.utilization_memory.clone(),
        clock_sm: g.clock_sm.clone(),
        power_usage_mw: g.power_usage_mw.clone(),
        clocks_event_reasons: g.clocks_event_reasons.clone(),
        pcie_gen: g.pcie_gen.clone(),
        pcie_width: g.pcie_width.clone(),
        temperature_c: g.temperature_c.clone(),
        memory_used: g.memory_used.clone(),
    }
}
