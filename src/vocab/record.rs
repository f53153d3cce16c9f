//! The recording file (`gpufix record -o run.json`, `gpufix schema record`): what a job did over a
//! window, kept so that a person can look at it later (`gpufix report`) and so that two runs —
//! before and after a fix — can be compared.
//!
//! The layout is columnar: each group of series (one GPU, one process, the node, the main
//! thread, the job's progress) has its own time axis `t` (seconds since `started_at`) and one
//! array per metric, index-aligned with `t`. Columnar arrays are small on disk and are what chart
//! libraries draw directly. Two kinds of "no value" are kept apart, as NVML keeps them:
//! - a metric the GPU or kernel does not support is **absent** (the field is left out), never a
//!   column of zeros;
//! - one reading that failed inside a supported metric is `null` at that index.
//!
//! The file is bounded: past [`MAX_POINTS`] samples per group, neighbouring samples are merged
//! (mean of numbers, union of reason lists, the most frequent state) and `downsampled` says by
//! how much. Nothing in the file is a secret: command lines pass through the privacy filter
//! before they are written.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The format version this build writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// Most samples kept per group of series; beyond it neighbouring samples are merged.
pub const MAX_POINTS: usize = 3600;

/// A metric column: one entry per sample of its group, `null` where that one reading failed.
pub type Column = Vec<Option<f64>>;

/// One recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFile {
    /// Always [`RECORD_VERSION`] for files this build writes.
    pub version: u32,
    /// The gpufix version that wrote it.
    pub gpufix: String,
    /// The host's name, as `plan` reports it.
    pub host: String,
    /// When the window began, RFC 3339 in UTC.
    pub started_at: String,
    /// The sampling interval asked for, in milliseconds.
    pub interval_ms: u64,
    /// The window's real length in seconds (shorter than asked for when interrupted).
    pub duration_s: f64,
    /// True when the window was ended early (SIGINT, the job exited); the file is still whole.
    pub interrupted: bool,
    /// Why the window ended early, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    /// The job recorded, when `--pid` named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<RecordJob>,
    /// One entry per GPU seen (all GPUs of the host, or those the job uses).
    pub gpus: Vec<GpuSeries>,
    /// The job's processes: its main process and each DataLoader worker.
    #[serde(default)]
    pub processes: Vec<ProcessSeries>,
    /// The node's CPU and IO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeSeries>,
    /// What the main thread was doing, from py-spy dumps, when py-spy was available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_thread: Option<MainThreadSeries>,
    /// The job's own progress, when it could be read (`--log`, a trace's step markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressSeries>,
    /// The plan's findings over this window.
    #[serde(default)]
    pub findings: Vec<RecordFinding>,
    /// Set when samples were merged to stay under [`MAX_POINTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downsampled: Option<Downsampled>,
    /// What could not be sampled and why (a metric NVML does not support, py-spy missing, …).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The job a recording is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordJob {
    pub pid: u32,
    /// The command line, secrets redacted.
    pub command: String,
    /// The user the job runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The config or launch script the plan found for the job, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// One GPU's series. Every metric is absent when this GPU does not support it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuSeries {
    pub index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Seconds since the window began.
    pub t: Vec<f64>,
    /// SM utilization, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_gpu: Option<Column>,
    /// Memory bandwidth utilization, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_memory: Option<Column>,
    /// Memory used, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_mib: Option<Column>,
    /// Memory total, MiB (one value: it does not change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_mib: Option<f64>,
    /// SM clock, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sm_mhz: Option<Column>,
    /// Power draw, watts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<Column>,
    /// PCIe receive throughput, MB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_rx_mb_s: Option<Column>,
    /// PCIe transmit throughput, MB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_tx_mb_s: Option<Column>,
    /// Active clocks-event (throttle) reasons per sample, NVML's names; `null` where unread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_reasons: Option<Vec<Option<Vec<String>>>>,
}

/// What a process is to the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessRole {
    /// The training process named by `--pid`.
    Main,
    /// A DataLoader worker, as the worker census finds them.
    Worker,
    /// Another process of the job (a launcher, a rank on this node).
    Other,
}

/// One process's series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessSeries {
    pub pid: u32,
    pub role: ProcessRole,
    /// `comm` from /proc.
    pub name: String,
    pub t: Vec<f64>,
    /// CPU use over the interval, percent of one core (100 = one core saturated).
    pub cpu_percent: Column,
    /// The kernel's state letter per sample (R, S, D, …); `null` when the process was gone.
    pub state: Vec<Option<String>>,
    /// Bytes read per second (from /proc/PID/io), when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_s: Option<Column>,
    /// Bytes written per second, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_s: Option<Column>,
}

/// The node's series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSeries {
    pub t: Vec<f64>,
    /// All CPUs busy, percent of the whole node (/proc/stat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_busy_percent: Option<Column>,
    /// Share of the interval some task stalled on CPU, percent (/proc/pressure/cpu `some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_percent: Option<Column>,
    /// Share of the interval some task stalled on IO, percent (/proc/pressure/io `some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_pressure_percent: Option<Column>,
}

/// What the main thread was doing at one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadState {
    /// Waiting on the DataLoader for the next batch.
    DataWait,
    /// Forward, backward or optimizer step.
    Compute,
    /// Waiting for the GPU: `.item()`, `.cpu()`, `synchronize()`.
    HostSync,
    /// Copying to or from the device.
    Copy,
    /// In a collective (all-reduce, all-gather, barrier).
    Communication,
    /// Anything else the frames show.
    Other,
}

/// The main thread's state per py-spy sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MainThreadSeries {
    pub pid: u32,
    pub t: Vec<f64>,
    /// `null` where that dump failed.
    pub state: Vec<Option<ThreadState>>,
}

/// The job's own progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressSeries {
    /// Where it was read: a log path or a trace.
    pub source: String,
    /// The rate's unit as the job prints it: `it/s`, `samples/s`, `steps/s`.
    pub unit: String,
    pub t: Vec<f64>,
    pub rate: Column,
}

/// One finding of the plan over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFinding {
    /// The rule's id (`data.workers-too-few`).
    pub rule: String,
    /// The rule's layer.
    pub layer: String,
    /// `fail` or `warn`.
    pub status: String,
    pub severity: String,
    /// The rule's message with its values.
    pub message: String,
    /// The part of the window it is about, seconds since `started_at`: `[from, to]`.
    pub window: [f64; 2],
    /// The fix's one-line summary, when the rule has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The fix's diff, when it edits a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// How samples were merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Downsampled {
    /// How many raw samples one kept sample stands for.
    pub factor: u32,
    /// The raw samples taken in all.
    pub raw_samples: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsupported_metric_is_absent_not_zero_and_a_failed_reading_is_null() {
        let g = GpuSeries {
            index: 0,
            t: vec![0.0, 0.2],
            utilization_gpu: Some(vec![Some(20.0), None]),
            ..Default::default()
        };
        let v = serde_json::to_value(&g).unwrap();
        assert_eq!(v["utilization_gpu"], serde_json::json!([20.0, null]));
        assert!(v.get("pcie_rx_mb_s").is_none());
        let back: GpuSeries = serde_json::from_value(v).unwrap();
        assert_eq!(back, g);
    }
}
