//! `gpufix report run.json [--compare after.json] -o report.html`: a recording
//! ([`crate::vocab::record`]) drawn as one self-contained HTML page — a timeline of lanes (GPU
//! utilization, memory, PCIe, each process's CPU, the main thread's state, the job's progress)
//! with each finding shaded over the window it is about, the main thread's step breakdown, the
//! findings with their fixes and diffs, and with `--compare` the two runs side by side.
//!
//! Why one file with everything inline: the page is attached to tickets and opened offline, so
//! it loads nothing (a Content-Security-Policy of `default-src 'none'` says so to the browser;
//! the two scripts run by their sha256 hashes, nothing else can). The charts are drawn by uPlot
//! (vendored under `assets/uplot/`, MIT; docs/dependencies.md says why it and not
//! plotters' SVG backend): the page holds the data as JSON and a small script of ours that
//! hands it to uPlot.
//!
//! The recording is hostile input like every file gpufix is handed: size-capped, nesting
//! bounded, every column checked against its time axis before anything is drawn. Every string
//! from it passes the privacy filter, then [`crate::escape`] (control characters shown, not
//! interpreted), then HTML escaping; data reaches the page only as JSON inside
//! `<script type="application/json">`, with `<`, `>`, `&`, U+2028 and U+2029 written as `\u`
//! escapes so that no `</script>` or `<!--` in a string can end the element. The script sets
//! text through `textContent` only (uPlot does the same for its legend).
//!
//! Absent is not zero: a lane whose metric no GPU (or process) of the recording supports is left
//! out with a note saying so; a `null` (one failed reading) is a gap in its line.

use crate::escape::{escape, escape_lines};
use crate::vocab::record::{
    Column, GpuSeries, MAX_POINTS, RECORD_VERSION, RecordFile, RecordFinding, ThreadState,
};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write;

/// The vendored chart library (assets/uplot/README.md says where it comes from).
pub const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
/// uPlot's stylesheet, vendored with it.
pub const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
/// The vendored uPlot's version.
pub const UPLOT_VERSION: &str = "1.6.32";
/// Our script: reads each run's JSON and draws its lanes with uPlot.
const REPORT_JS: &str = include_str!("report.js");
const REPORT_CSS: &str = include_str!("report.css");

/// Largest recording read. A recording keeps at most [`MAX_POINTS`] samples per group, so a
/// real one of 8 GPUs and 64 processes at every metric is a few MB.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// The main thread's states, in the order the step breakdown lists them and the state lane
/// numbers them.
pub const THREAD_STATES: [(ThreadState, &str, &str); 6] = [
    (ThreadState::DataWait, "data_wait", "waiting on data"),
    (ThreadState::Compute, "compute", "compute"),
    (ThreadState::HostSync, "host_sync", "host sync"),
    (ThreadState::Copy, "copy", "copy"),
    (ThreadState::Communication, "communication", "communication"),
    (ThreadState::Other, "other", "other"),
];

/// The categories of the clock-slowdown lane, least to most serious, with their colours.
pub const THROTTLE_CATEGORIES: [(&str, &str); 7] = [
    ("none", "#cfe8cf"),
    ("idle", "#c7c7c7"),
    ("clocks set by the administrator", "#9467bd"),
    ("other", "#1f77b4"),
    ("power cap", "#ff7f0e"),
    ("thermal", "#d62728"),
    ("hardware slowdown", "#7b0000"),
];

/// The index in [`THROTTLE_CATEGORIES`] of the weightiest of a sample's active reasons, named
/// as NVML's `nvmlClocksEventReason*` flags (`GPU_IDLE`, `SW_POWER_CAP`, `HW_SLOWDOWN`, ...).
pub fn throttle_category(reasons: &[String]) -> usize {
    reasons
        .iter()
        .map(|r| match r.as_str() {
            "GPU_IDLE" => 1,
            "APPLICATIONS_CLOCKS_SETTING" | "DISPLAY_CLOCK_SETTING" => 2,
            "SW_POWER_CAP" => 4,
            "SW_THERMAL_SLOWDOWN" | "HW_THERMAL_SLOWDOWN" => 5,
            "HW_SLOWDOWN" | "HW_POWER_BRAKE_SLOWDOWN" => 6,
            _ => 3,
        })
        .max()
        .unwrap_or(0)
}

/// Why a recording's text is not drawn; one sentence, the caller names the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordError {
    /// Nested deeper than [`crate::vocab::io::MAX_NESTING`]: refused before it is parsed.
    #[error(
        "it nests `[`/`{{` {depth} levels deep; the limit is {}",
        crate::vocab::io::MAX_NESTING
    )]
    TooDeep { depth: usize },
    #[error("it is not JSON: {0}")]
    NotJson(String),
    /// A recording of another version (a newer gpufix wrote it).
    #[error("it is recording version {0}; this gpufix reads version {RECORD_VERSION}")]
    Version(u64),
    #[error("it has no `version`: it is not a gpufix recording")]
    NoVersion,
    /// JSON of the right version whose fields do not read as a recording.
    #[error("it is not a gpufix recording: {0}")]
    NotRecording(String),
    /// A recording whose series do not fit together (a column longer than its time axis,
    /// times that go back, too many samples, a finding's window backwards): the sentence says
    /// which.
    #[error("{0}")]
    Inconsistent(String),
}

/// Parse and check a recording's text: JSON of the right version, every column as long as its
/// time axis, times increasing, at most [`MAX_POINTS`] samples per group, finding windows in
/// order. The error is one sentence (the caller names the file); the recording comes back with
/// the privacy filter applied to every string.
pub fn parse_record(text: &str) -> Result<RecordFile, RecordError> {
    let depth = crate::vocab::io::nesting_depth(text);
    if depth > crate::vocab::io::MAX_NESTING {
        return Err(RecordError::TooDeep { depth });
    }
    // the version first, so that a newer file says so instead of naming an unknown field
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| RecordError::NotJson(e.to_string()))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(RECORD_VERSION) => {}
        Some(v) => return Err(RecordError::Version(v)),
        None => return Err(RecordError::NoVersion),
    }
    let rec: RecordFile =
        serde_json::from_value(value).map_err(|e| RecordError::NotRecording(e.to_string()))?;
    check(&rec)?;
    Ok(crate::privacy::redacted(&rec))
}

fn check(rec: &RecordFile) -> Result<(), RecordError> {
    if !rec.duration_s.is_finite() || rec.duration_s < 0.0 {
        return Err(RecordError::Inconsistent(format!(
            "duration_s {} is not a length",
            rec.duration_s
        )));
    }
    for (i, g) in rec.gpus.iter().enumerate() {
        let name = format!("gpus[{i}]");
        check_axis(&name, &g.t)?;
        for (col, c) in gpu_columns(g) {
            check_len(&format!("{name}.{col}"), c.len(), g.t.len())?;
        }
        if let Some(r) = &g.throttle_reasons {
            check_len(&format!("{name}.throttle_reasons"), r.len(), g.t.len())?;
        }
    }
    for (i, p) in rec.processes.iter().enumerate() {
        let name = format!("processes[{i}]");
        check_axis(&name, &p.t)?;
        check_len(
            &format!("{name}.cpu_percent"),
            p.cpu_percent.len(),
            p.t.len(),
        )?;
        check_len(&format!("{name}.state"), p.state.len(), p.t.len())?;
        for (col, c) in [
            ("read_bytes_s", &p.read_bytes_s),
            ("write_bytes_s", &p.write_bytes_s),
        ] {
            if let Some(c) = c {
                check_len(&format!("{name}.{col}"), c.len(), p.t.len())?;
            }
        }
    }
    if let Some(n) = &rec.node {
        check_axis("node", &n.t)?;
        for (col, c) in [
            ("cpu_busy_percent", &n.cpu_busy_percent),
            ("cpu_pressure_percent", &n.cpu_pressure_percent),
            ("io_pressure_percent", &n.io_pressure_percent),
        ] {
            if let Some(c) = c {
                check_len(&format!("node.{col}"), c.len(), n.t.len())?;
            }
        }
    }
    if let Some(m) = &rec.main_thread {
        check_axis("main_thread", &m.t)?;
        check_len("main_thread.state", m.state.len(), m.t.len())?;
    }
    if let Some(p) = &rec.progress {
        check_axis("progress", &p.t)?;
        check_len("progress.rate", p.rate.len(), p.t.len())?;
    }
    for (i, f) in rec.findings.iter().enumerate() {
        let [a, b] = f.window;
        if !(a.is_finite() && b.is_finite() && a <= b) {
            return Err(RecordError::Inconsistent(format!(
                "findings[{i}] ({}) has the window [{a}, {b}]; it must be [from, to] with from <= to",
                escape(&f.rule)
            )));
        }
    }
    Ok(())
}

fn check_axis(name: &str, t: &[f64]) -> Result<(), RecordError> {
    if t.len() > MAX_POINTS {
        return Err(RecordError::Inconsistent(format!(
            "{name} has {} samples; a recording keeps at most {MAX_POINTS} per group",
            t.len()
        )));
    }
    if let Some(w) = t
        .windows(2)
        .find(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater))
    {
        return Err(RecordError::Inconsistent(format!(
            "{name}.t is not increasing ({} then {})",
            w[0], w[1]
        )));
    }
    Ok(())
}

fn check_len(name: &str, len: usize, t: usize) -> Result<(), RecordError> {
    if len != t {
        return Err(RecordError::Inconsistent(format!(
            "{name} has {len} values for {t} times"
        )));
    }
    Ok(())
}

fn gpu_columns(g: &GpuSeries) -> Vec<(&'static str, &Column)> {
    [
        ("utilization_gpu", &g.utilization_gpu),
        ("utilization_memory", &g.utilization_memory),
        ("memory_used_mib", &g.memory_used_mib),
        ("clock_sm_mhz", &g.clock_sm_mhz),
        ("power_w", &g.power_w),
        ("pcie_rx_mb_s", &g.pcie_rx_mb_s),
        ("pcie_tx_mb_s", &g.pcie_tx_mb_s),
    ]
    .into_iter()
    .filter_map(|(n, c)| c.as_ref().map(|c| (n, c)))
    .collect()
}

// ---------------------------------------------------------------------------------------------
// What the page's script draws: lanes of series over shared time axes.

/// One run as the page's script reads it.
#[derive(Debug, Serialize)]
pub struct RunData {
    /// The x axis ends here (the window's length, or the last sample if later).
    pub duration: f64,
    /// Time axes, shared by the series of one group (`SeriesData::t` indexes this).
    pub times: Vec<Vec<f64>>,
    pub lanes: Vec<LaneData>,
    /// The findings' windows, drawn as bands on every lane.
    pub bands: Vec<Band>,
    /// The main thread's state names, indexed by the state lane's values.
    pub states: Vec<&'static str>,
}

/// One lane of the timeline.
#[derive(Debug, Serialize)]
pub struct LaneData {
    pub id: &'static str,
    pub title: String,
    pub unit: String,
    /// `line`, or `state` (a categorical band: values index [`RunData::states`]).
    pub kind: &'static str,
    /// The y axis's fixed range, when the unit has one (percent: 0..100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y_max: Option<f64>,
    /// A `state` lane's own categories (name, colour), which its values index; absent for the
    /// main thread's lane, whose values index [`RunData::states`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<(&'static str, &'static str)>>,
    pub series: Vec<SeriesData>,
}

#[derive(Debug, Serialize)]
pub struct SeriesData {
    pub label: String,
    /// Index into [`RunData::times`].
    pub t: usize,
    pub v: Vec<Option<f64>>,
}

impl LaneData {
    /// Readings that are not `null`, over all series: what the lane draws.
    pub fn points(&self) -> usize {
        self.series
            .iter()
            .map(|s| s.v.iter().filter(|v| v.is_some()).count())
            .sum()
    }
}

/// A finding's window on the timeline.
#[derive(Debug, Serialize)]
pub struct Band {
    pub rule: String,
    pub from: f64,
    pub to: f64,
}

/// Numbers in the page keep 3 decimals: a millisecond of time, a thousandth of a percent.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn col(c: &Column) -> Vec<Option<f64>> {
    c.iter().map(|v| v.map(round3)).collect()
}

fn gpu_label(g: &GpuSeries) -> String {
    format!("GPU {}", g.index)
}

/// The lanes of one recording, and a note for each lane left out (its data is absent).
pub fn lanes(rec: &RecordFile) -> (RunData, Vec<String>) {
    let mut times: Vec<Vec<f64>> = Vec::new();
    let mut axis = |t: &[f64]| {
        times.push(t.iter().copied().map(round3).collect());
        times.len() - 1
    };
    let mut lanes = Vec::new();
    let mut notes = Vec::new();
    let gpu_t: Vec<usize> = rec.gpus.iter().map(|g| axis(&g.t)).collect();

    // Per-GPU metrics: one lane each, one series per GPU that supports it.
    type Pick = fn(&GpuSeries) -> &Option<Column>;
    /// id, title, unit, the y axis's top, and each series' label suffix and column
    type GpuLane<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Option<f64>,
        &'a [(&'a str, Pick)],
    );
    let gpu_lanes: [GpuLane; 5] = [
        (
            "gpu-util",
            "GPU utilization",
            "%",
            Some(100.0),
            &[("", |g| &g.utilization_gpu)],
        ),
        (
            "gpu-memory",
            "GPU memory used",
            "MiB",
            None,
            &[("", |g| &g.memory_used_mib)],
        ),
        (
            "pcie",
            "PCIe throughput",
            "MB/s",
            None,
            &[(" rx", |g| &g.pcie_rx_mb_s), (" tx", |g| &g.pcie_tx_mb_s)],
        ),
        ("gpu-power", "GPU power", "W", None, &[("", |g| &g.power_w)]),
        (
            "gpu-clock",
            "SM clock",
            "MHz",
            None,
            &[("", |g| &g.clock_sm_mhz)],
        ),
    ];
    for (id, title, unit, y_max, picks) in gpu_lanes {
        let mut series = Vec::new();
        let mut missing = BTreeSet::new();
        for (g, &t) in rec.gpus.iter().zip(&gpu_t) {
            for (suffix, pick) in picks {
                match pick(g) {
                    Some(c) => series.push(SeriesData {
                        label: format!("{}{suffix}", gpu_label(g)),
                        t,
                        v: col(c),
                    }),
                    None => {
                        missing.insert(g.index);
                    }
                }
            }
        }
        let y_max = if id == "gpu-memory" {
            rec.gpus
                .iter()
                .filter_map(|g| g.memory_total_mib)
                .filter(|m| m.is_finite() && *m > 0.0)
                .reduce(f64::max)
        } else {
            y_max
        };
        if rec.gpus.is_empty() {
            notes.push(format!("{title}: no GPU in this recording"));
        } else if series.is_empty() {
            notes.push(format!(
                "{title}: not supported by any GPU of this recording (absent, not zero)"
            ));
        } else if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|i| i.to_string()).collect();
            notes.push(format!(
                "{title}: not supported by GPU {} (absent, not zero)",
                list.join(", ")
            ));
        }
        if !series.is_empty() {
            lanes.push(LaneData {
                id,
                title: title.into(),
                unit: unit.into(),
                kind: "line",
                y_max,
                categories: None,
                series,
            });
        }
    }

    // Why the clocks were held back (NVML's clocks-event reasons), one strip per GPU: each
    // sample shows the weightiest active reason, so a GPU slowed by heat or a power cap stands
    // out from one that is merely idle.
    let throttle: Vec<SeriesData> = rec
        .gpus
        .iter()
        .zip(&gpu_t)
        .filter_map(|(g, &t)| {
            g.throttle_reasons.as_ref().map(|r| SeriesData {
                label: gpu_label(g),
                t,
                v: r.iter()
                    .map(|s| s.as_ref().map(|s| throttle_category(s) as f64))
                    .collect(),
            })
        })
        .collect();
    if throttle.is_empty() {
        if !rec.gpus.is_empty() {
            notes.push(
                "Clock slowdown reasons: not supported by any GPU of this recording (absent, not none)"
                    .into(),
            );
        }
    } else {
        lanes.push(LaneData {
            id: "throttle",
            title: "Clock slowdown reason".into(),
            unit: String::new(),
            kind: "state",
            y_max: None,
            categories: Some(THROTTLE_CATEGORIES.to_vec()),
            series: throttle,
        });
    }

    // Each process's CPU.
    if rec.processes.is_empty() {
        notes.push("Process CPU: no process recorded (no job was named with --pid)".into());
    } else {
        let series = rec
            .processes
            .iter()
            .map(|p| {
                let role = match p.role {
                    crate::vocab::record::ProcessRole::Main => "main",
                    crate::vocab::record::ProcessRole::Worker => "worker",
                    crate::vocab::record::ProcessRole::Other => "other",
                };
                SeriesData {
                    label: format!("{} {} ({role})", p.pid, escape(&p.name)),
                    t: axis(&p.t),
                    v: col(&p.cpu_percent),
                }
            })
            .collect();
        lanes.push(LaneData {
            id: "cpu",
            title: "Process CPU (100 = one core)".into(),
            unit: "%".into(),
            kind: "line",
            y_max: None,
            categories: None,
            series,
        });
    }

    // The main thread's state, as a categorical band.
    match &rec.main_thread {
        Some(m) => {
            let v = m
                .state
                .iter()
                .map(|s| {
                    s.and_then(|s| THREAD_STATES.iter().position(|(k, _, _)| *k == s))
                        .map(|i| i as f64)
                })
                .collect();
            lanes.push(LaneData {
                id: "thread",
                title: format!("Main thread (pid {})", m.pid),
                unit: String::new(),
                kind: "state",
                y_max: None,
                categories: None,
                series: vec![SeriesData {
                    label: "state".into(),
                    t: axis(&m.t),
                    v,
                }],
            });
        }
        None => notes
            .push("Main thread: not sampled (py-spy was not available or no job was named)".into()),
    }

    // The job's progress.
    match &rec.progress {
        Some(p) => lanes.push(LaneData {
            id: "progress",
            title: format!("Progress ({})", escape(&p.source)),
            unit: escape(&p.unit),
            kind: "line",
            y_max: None,
            categories: None,
            series: vec![SeriesData {
                label: escape(&p.unit),
                t: axis(&p.t),
                v: col(&p.rate),
            }],
        }),
        None => notes.push(
            "Progress: not recorded (give the job's log with --log, or a trace with step markers)"
                .into(),
        ),
    }

    // The node's CPU and IO pressure, when read.
    if let Some(n) = &rec.node {
        let t = axis(&n.t);
        let series: Vec<SeriesData> = [
            ("CPU busy", &n.cpu_busy_percent),
            ("CPU pressure", &n.cpu_pressure_percent),
            ("IO pressure", &n.io_pressure_percent),
        ]
        .into_iter()
        .filter_map(|(label, c)| {
            c.as_ref().map(|c| SeriesData {
                label: label.into(),
                t,
                v: col(c),
            })
        })
        .collect();
        if series.is_empty() {
            notes.push("Node: neither CPU use nor pressure was readable (absent)".into());
        } else {
            lanes.push(LaneData {
                id: "node",
                title: "Node CPU and IO pressure".into(),
                unit: "%".into(),
                kind: "line",
                y_max: Some(100.0),
                categories: None,
                series,
            });
        }
    }

    let last_t = times
        .iter()
        .filter_map(|t| t.last().copied())
        .fold(0.0f64, f64::max);
    // A lane whose every reading failed (`null` throughout: rates on a replayed host, which
    // has no clock) has nothing to draw: it is left out with a note, like an absent one.
    lanes.retain(|l: &LaneData| {
        let has = l.series.iter().any(|s| s.v.iter().any(Option::is_some));
        if !has {
            notes.push(format!(
                "{}: no reading in this recording (every sample failed)",
                l.title
            ));
        }
        has
    });
    let bands = rec
        .findings
        .iter()
        .map(|f| Band {
            rule: escape(&f.rule),
            from: round3(f.window[0]),
            to: round3(f.window[1]),
        })
        .collect();
    (
        RunData {
            duration: round3(rec.duration_s.max(last_t)),
            times,
            lanes,
            bands,
            states: THREAD_STATES.iter().map(|(_, id, _)| *id).collect(),
        },
        notes,
    )
}

// ---------------------------------------------------------------------------------------------
// Figures for the step breakdown and the comparison.

/// The main thread's samples per state (in [`THREAD_STATES`] order) and the failed dumps.
pub fn breakdown(rec: &RecordFile) -> Option<([usize; 6], usize)> {
    let m = rec.main_thread.as_ref()?;
    let mut counts = [0usize; 6];
    let mut failed = 0;
    for s in &m.state {
        match s.and_then(|s| THREAD_STATES.iter().position(|(k, _, _)| *k == s)) {
            Some(i) => counts[i] += 1,
            None => failed += 1,
        }
    }
    Some((counts, failed))
}

/// One run's figures for `--compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    /// Mean GPU utilization over every reading of every GPU, percent.
    pub util_mean: Option<f64>,
    /// 5th percentile (nearest rank) of the same readings.
    pub util_p5: Option<f64>,
    /// Mean progress rate, with its unit.
    pub progress_mean: Option<(f64, String)>,
    /// Share of the main thread's (successful) samples waiting on data, 0..1.
    pub data_wait_share: Option<f64>,
    /// The findings' rule ids.
    pub rules: BTreeSet<String>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub fn stats(rec: &RecordFile) -> RunStats {
    let mut util: Vec<f64> = rec
        .gpus
        .iter()
        .filter_map(|g| g.utilization_gpu.as_ref())
        .flatten()
        .flatten()
        .copied()
        .collect();
    util.sort_by(f64::total_cmp);
    let util_p5 = (!util.is_empty()).then(|| {
        let rank = ((0.05 * util.len() as f64).ceil() as usize).max(1);
        util[rank - 1]
    });
    let progress_mean = rec.progress.as_ref().and_then(|p| {
        let v: Vec<f64> = p.rate.iter().flatten().copied().collect();
        mean(&v).map(|m| (m, p.unit.clone()))
    });
    let data_wait_share = breakdown(rec).and_then(|(c, _)| {
        let n: usize = c.iter().sum();
        (n > 0).then(|| c[0] as f64 / n as f64)
    });
    RunStats {
        util_mean: mean(&util),
        util_p5,
        progress_mean,
        data_wait_share,
        rules: rec.findings.iter().map(|f| f.rule.clone()).collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// The page.

/// HTML-escape text that has already had its control characters made visible.
fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // line separators: harmless in HTML text, but kept out of the file raw as in JSON
            '\u{2028}' => out.push_str("&#x2028;"),
            '\u{2029}' => out.push_str("&#x2029;"),
            _ => out.push(c),
        }
    }
    out
}

/// One line of untrusted text for the page.
fn h(s: &str) -> String {
    html(&escape(s))
}

/// Several lines of untrusted text for a `<pre>`.
fn hl(s: &str) -> String {
    html(&escape_lines(s))
}

/// JSON that may sit inside `<script type="application/json">`: no `<`, `>` or `&` (so no
/// `</script>` or `<!--`), and no U+2028/U+2029 (line ends to some JavaScript parsers). These
/// characters occur in JSON only inside strings, where the `\u` escape means the same.
pub fn script_json<T: Serialize>(v: &T) -> String {
    let text = serde_json::to_string(v).expect("report data serializes");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(c),
        }
    }
    out
}

fn sha256_b64(s: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(s.as_bytes()))
}

fn pct(x: f64) -> String {
    format!("{x:.1}")
}

/// The page for one run, or two side by side (`--compare`). `names` are the files' names as
/// given, shown in the headings.
pub fn render(runs: &[(&str, &RecordFile)]) -> String {
    let mut body = String::new();
    let title = match runs {
        [(_, a), (_, b)] if a.host == b.host => {
            format!("gpufix report: {} (before / after)", h(&a.host))
        }
        [(_, a), (_, b)] => format!("gpufix report: {} / {}", h(&a.host), h(&b.host)),
        [(_, a), ..] => format!("gpufix report: {}", h(&a.host)),
        [] => "gpufix report".to_string(),
    };
    let _ = writeln!(body, "<h1>{title}</h1>");
    if let [(na, a), (nb, b)] = runs {
        compare(&mut body, (na, a), (nb, b));
    }
    let _ = writeln!(body, "<div class=\"runs\" data-runs=\"{}\">", runs.len());
    for (i, (name, rec)) in runs.iter().enumerate() {
        run_section(&mut body, i, name, rec, runs.len() > 1);
    }
    body.push_str("</div>\n");
    let _ = writeln!(
        body,
        "<footer>Drawn by gpufix {} with uPlot {UPLOT_VERSION} (MIT, inlined). Drag on a lane to zoom, double-click to reset.</footer>",
        env!("CARGO_PKG_VERSION")
    );

    let csp = format!(
        "default-src 'none'; script-src 'sha256-{}' 'sha256-{}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_b64(UPLOT_JS),
        sha256_b64(REPORT_JS)
    );
    let mut page = String::with_capacity(body.len() + UPLOT_JS.len() + 8192);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"gpufix {}\">\n<title>{title}</title>\n\
<style>\n{UPLOT_CSS}\n{REPORT_CSS}</style>\n</head>\n<body>\n{body}\
<script>{UPLOT_JS}</script>\n<script>{REPORT_JS}</script>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    page
}

fn run_section(out: &mut String, i: usize, name: &str, rec: &RecordFile, two: bool) {
    let heading = if two {
        format!("{}: {}", if i == 0 { "Before" } else { "After" }, h(name))
    } else {
        h(name)
    };
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"run-{i}\">\n<h2>{heading}</h2>"
    );
    header(out, rec);
    let (data, lane_notes) = lanes(rec);
    // the timeline: one element per lane, its figures in data- attributes for tests and tools
    let ids: Vec<&str> = data.lanes.iter().map(|l| l.id).collect();
    let _ = writeln!(
        out,
        "<h3>Timeline</h3>\n<div class=\"timeline\" data-lanes=\"{}\">",
        ids.join(",")
    );
    for l in &data.lanes {
        let unit = if l.unit.is_empty() {
            String::new()
        } else {
            format!(" <span class=\"unit\">({})</span>", html(&l.unit))
        };
        let _ = writeln!(
            out,
            "<div class=\"lane\" id=\"lane-{i}-{id}\" data-lane=\"{id}\" data-kind=\"{kind}\" data-series=\"{n}\" data-points=\"{p}\">\
<div class=\"lane-title\">{title}{unit}</div><div class=\"chart\"></div></div>",
            id = l.id,
            kind = l.kind,
            n = l.series.len(),
            p = l.points(),
            title = html(&l.title),
        );
        if let Some(cats) = &l.categories {
            out.push_str("<div class=\"state-key\">");
            for (k, (label, _)) in cats.iter().enumerate() {
                let _ = write!(out, "<span><i class=\"sw t{k}\"></i>{label}</span> ");
            }
            out.push_str("<span><i class=\"sw sx\"></i>not read</span></div>\n");
        } else if l.kind == "state" {
            out.push_str("<div class=\"state-key\">");
            for (k, (_, id, label)) in THREAD_STATES.iter().enumerate() {
                let _ = write!(
                    out,
                    "<span data-key=\"{id}\"><i class=\"sw s{k}\"></i>{label}</span> "
                );
            }
            out.push_str("<span><i class=\"sw sx\"></i>dump failed</span></div>\n");
        }
    }
    out.push_str("</div>\n");
    if !lane_notes.is_empty() {
        out.push_str("<ul class=\"lane-notes\">\n");
        for n in &lane_notes {
            let _ = writeln!(out, "<li>{}</li>", h(n));
        }
        out.push_str("</ul>\n");
    }
    let _ = writeln!(
        out,
        "<script type=\"application/json\" class=\"run-data\" data-run=\"{i}\">{}</script>",
        script_json(&data)
    );
    step_breakdown(out, rec);
    findings(out, &rec.findings);
    out.push_str("</section>\n");
}

fn header(out: &mut String, rec: &RecordFile) {
    out.push_str("<table class=\"facts\">\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(out, "<tr><th>{k}</th><td>{v}</td></tr>");
    };
    row("host", h(&rec.host));
    match &rec.job {
        Some(j) => {
            row(
                "job",
                format!("pid {} <code>{}</code>", j.pid, h(&j.command)),
            );
            if let Some(u) = &j.user {
                row("user", h(u));
            }
            if let Some(c) = &j.config {
                row("config", format!("<code>{}</code>", h(c)));
            }
        }
        None => row("job", "none named (host only)".into()),
    }
    let mut window = format!("{} for {:.1} s", h(&rec.started_at), rec.duration_s);
    if rec.interrupted {
        window += &format!(
            " (ended early{})",
            rec.interrupted_by
                .as_deref()
                .map(|b| format!(": {}", h(b)))
                .unwrap_or_default()
        );
    }
    row("window", window);
    row("interval", format!("{} ms", rec.interval_ms));
    row(
        "downsampled",
        match &rec.downsampled {
            Some(d) => format!(
                "yes: one point stands for {} samples ({} taken)",
                d.factor, d.raw_samples
            ),
            None => "no".into(),
        },
    );
    row("recorded by", format!("gpufix {}", h(&rec.gpufix)));
    if !rec.gpus.is_empty() {
        let names: Vec<String> = rec
            .gpus
            .iter()
            .map(|g| match &g.name {
                Some(n) => format!("{} {}", g.index, h(n)),
                None => g.index.to_string(),
            })
            .collect();
        row("GPUs", names.join(", "));
    }
    out.push_str("</table>\n");
    if !rec.notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in &rec.notes {
            let _ = writeln!(out, "<li>{}</li>", h(n));
        }
        out.push_str("</ul>\n");
    }
}

fn step_breakdown(out: &mut String, rec: &RecordFile) {
    let Some((counts, failed)) = breakdown(rec) else {
        out.push_str(
            "<h3>Step breakdown</h3>\n<p class=\"absent\">Not available: the main thread was not sampled.</p>\n",
        );
        return;
    };
    let n: usize = counts.iter().sum();
    let _ = writeln!(
        out,
        "<h3>Step breakdown</h3>\n<table class=\"breakdown\" data-samples=\"{n}\" data-failed=\"{failed}\">\n<tr><th>main thread</th><th>samples</th><th>share</th><th></th></tr>"
    );
    for (k, (_, id, label)) in THREAD_STATES.iter().enumerate() {
        let share = if n > 0 {
            counts[k] as f64 / n as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "<tr data-state=\"{id}\" data-share=\"{share:.4}\"><td><i class=\"sw s{k}\"></i>{label}</td><td>{}</td><td>{}%</td>\
<td class=\"bar\"><span class=\"s{k}\" style=\"width:{:.1}%\"></span></td></tr>",
            counts[k],
            pct(share * 100.0),
            share * 100.0
        );
    }
    out.push_str("</table>\n");
    if failed > 0 {
        let _ = writeln!(
            out,
            "<p class=\"absent\">{failed} dump(s) failed and are not counted.</p>"
        );
    }
}

fn diff_html(diff: &str) -> String {
    let mut out = String::new();
    for line in diff.lines() {
        let class = match line.chars().next() {
            Some('+') if !line.starts_with("+++") => "add",
            Some('-') if !line.starts_with("---") => "del",
            Some('@') => "hunk",
            _ => "ctx",
        };
        // one block per line; no newline between them (the <pre> would show it)
        let _ = write!(out, "<span class=\"{class}\">{}</span>", hl(line));
    }
    out
}

fn findings(out: &mut String, list: &[RecordFinding]) {
    let _ = writeln!(out, "<h3>Findings ({})</h3>", list.len());
    if list.is_empty() {
        out.push_str("<p class=\"clean\">No finding over this window.</p>\n");
        return;
    }
    out.push_str("<div class=\"findings\">\n");
    for f in list {
        let _ = writeln!(
            out,
            "<div class=\"finding sev-{sev}\" data-rule=\"{rule}\" data-from=\"{from}\" data-to=\"{to}\">\
<div class=\"finding-head\"><b>{rule}</b> <span class=\"tag\">{layer}</span> <span class=\"tag\">{status}</span> <span class=\"tag\">{sevt}</span> \
<span class=\"when\">{from:.1} s – {to:.1} s</span></div>\n<p>{msg}</p>",
            sev = h(&f.severity).replace(' ', "-"),
            sevt = h(&f.severity),
            rule = h(&f.rule),
            layer = h(&f.layer),
            status = h(&f.status),
            from = f.window[0],
            to = f.window[1],
            msg = hl(&f.message),
        );
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "<p class=\"fix\"><b>Fix:</b> {}</p>", hl(fix));
        }
        if let Some(d) = &f.diff {
            let _ = writeln!(out, "<pre class=\"diff\">{}</pre>", diff_html(d));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</div>\n");
}

fn compare(out: &mut String, (na, a): (&str, &RecordFile), (nb, b): (&str, &RecordFile)) {
    let (sa, sb) = (stats(a), stats(b));
    let num = |v: Option<f64>| v.map_or("not recorded".to_string(), pct);
    let change = |x: Option<f64>, y: Option<f64>, unit: &str| match (x, y) {
        (Some(x), Some(y)) => format!("{:+.1}{unit}", y - x),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "<section id=\"compare\">\n<h2>Before and after</h2>\n<table class=\"compare\">\n\
<tr><th></th><th>before: {}</th><th>after: {}</th><th>change</th></tr>",
        h(na),
        h(nb)
    );
    let mut row = |key: &str, label: String, x: String, y: String, d: String| {
        let _ = writeln!(
            out,
            "<tr data-metric=\"{key}\"><th>{label}</th><td>{x}</td><td>{y}</td><td>{d}</td></tr>"
        );
    };
    row(
        "util_mean",
        "GPU utilization, mean (%)".into(),
        num(sa.util_mean),
        num(sb.util_mean),
        change(sa.util_mean, sb.util_mean, " points"),
    );
    row(
        "util_p5",
        "GPU utilization, 5th percentile (%)".into(),
        num(sa.util_p5),
        num(sb.util_p5),
        change(sa.util_p5, sb.util_p5, " points"),
    );
    let rate = |p: &Option<(f64, String)>| {
        p.as_ref().map_or("not recorded".to_string(), |(m, u)| {
            format!("{m:.1} {}", h(u))
        })
    };
    let rate_change = match (&sa.progress_mean, &sb.progress_mean) {
        (Some((x, u)), Some((y, v))) if u == v && *x > 0.0 => format!("×{:.2}", y / x),
        (Some(_), Some(_)) => "units differ".into(),
        _ => String::new(),
    };
    row(
        "progress_mean",
        "Progress rate, mean".into(),
        rate(&sa.progress_mean),
        rate(&sb.progress_mean),
        rate_change,
    );
    let share = |s: Option<f64>| s.map(|s| s * 100.0);
    row(
        "data_wait_share",
        "Main thread waiting on data (% of samples)".into(),
        num(share(sa.data_wait_share)),
        num(share(sb.data_wait_share)),
        change(
            share(sa.data_wait_share),
            share(sb.data_wait_share),
            " points",
        ),
    );
    out.push_str("</table>\n");
    let gone: Vec<&String> = sa.rules.difference(&sb.rules).collect();
    let remain: Vec<&String> = sa.rules.intersection(&sb.rules).collect();
    let new: Vec<&String> = sb.rules.difference(&sa.rules).collect();
    out.push_str(
        "<table class=\"compare findings-diff\">\n<tr><th>findings</th><th>rules</th></tr>\n",
    );
    for (key, label, list) in [
        ("gone", "went away", gone),
        ("remain", "remain", remain),
        ("new", "new", new),
    ] {
        let items: Vec<String> = list
            .iter()
            .map(|r| format!("<code>{}</code>", h(r)))
            .collect();
        let _ = writeln!(
            out,
            "<tr data-findings=\"{key}\" data-count=\"{}\"><th>{label}</th><td>{}</td></tr>",
            items.len(),
            if items.is_empty() {
                "none".to_string()
            } else {
                items.join(" ")
            }
        );
    }
    out.push_str("</table>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_uplot_is_unchanged() {
        use sha2::Digest;
        let hex = |s: &str| hex::encode(sha2::Sha256::digest(s.as_bytes()));
        assert_eq!(
            hex(UPLOT_JS),
            "19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f",
            "assets/uplot/uPlot.iife.min.js differs from uplot@1.6.32's dist (assets/uplot/README.md)"
        );
        assert_eq!(
            hex(UPLOT_CSS),
            "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04"
        );
        for s in [UPLOT_JS, REPORT_JS] {
            let lower = s.to_ascii_lowercase();
            assert!(!lower.contains("</script") && !lower.contains("<!--"));
        }
    }

    #[test]
    fn the_weightiest_slowdown_reason_names_the_sample() {
        let c = |r: &[&str]| {
            THROTTLE_CATEGORIES
                [throttle_category(&r.iter().map(|s| s.to_string()).collect::<Vec<_>>())]
            .0
        };
        assert_eq!(c(&[]), "none");
        assert_eq!(c(&["GPU_IDLE"]), "idle");
        assert_eq!(c(&["GPU_IDLE", "SW_POWER_CAP"]), "power cap");
        assert_eq!(c(&["SW_POWER_CAP", "HW_THERMAL_SLOWDOWN"]), "thermal");
        assert_eq!(
            c(&["SW_THERMAL_SLOWDOWN", "HW_POWER_BRAKE_SLOWDOWN"]),
            "hardware slowdown"
        );
        assert_eq!(c(&["SYNC_BOOST"]), "other");
        assert_eq!(
            c(&["APPLICATIONS_CLOCKS_SETTING"]),
            "clocks set by the administrator"
        );
    }

    #[test]
    fn a_throttle_lane_has_its_own_key_and_one_strip_per_gpu() {
        let mut rec: RecordFile = serde_json::from_str(include_str!(
            "../../tests/fixtures/runs/synthetic-starved.json"
        ))
        .unwrap();
        let n = rec.gpus[0].t.len();
        let mut r: Vec<Option<Vec<String>>> = vec![Some(vec![]); n];
        r[0] = Some(vec!["HW_SLOWDOWN".into()]);
        r[1] = None;
        rec.gpus[0].throttle_reasons = Some(r);
        let (data, _) = lanes(&rec);
        let l = data.lanes.iter().find(|l| l.id == "throttle").unwrap();
        assert_eq!(l.kind, "state");
        assert_eq!(
            l.series.len(),
            rec.gpus
                .iter()
                .filter(|g| g.throttle_reasons.is_some())
                .count()
        );
        assert_eq!(l.series[0].v[0], Some(6.0));
        assert_eq!(l.series[0].v[1], None);
        assert_eq!(l.series[0].v[2], Some(0.0));
        let page = render(&[("run.json", &rec)]);
        assert!(page.contains("<i class=\"sw t6\"></i>hardware slowdown"));
    }

    #[test]
    fn script_json_cannot_end_its_element() {
        let v = serde_json::json!({"s": "</script><!-- <script>x</script> & \u{2028}\u{2029}"});
        let s = script_json(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}') && !s.contains('\u{2029}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn html_text_is_escaped_and_control_characters_shown() {
        assert_eq!(
            h("<b a='1'>&\"\x1b[2J"),
            "&lt;b a=&#39;1&#39;&gt;&amp;&quot;\\x1b[2J"
        );
    }

    #[test]
    fn p5_is_the_nearest_rank() {
        let rec = RecordFile {
            version: RECORD_VERSION,
            gpufix: "t".into(),
            host: "h".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            interval_ms: 200,
            duration_s: 4.0,
            interrupted: false,
            interrupted_by: None,
            job: None,
            gpus: vec![GpuSeries {
                index: 0,
                t: (0..20).map(|i| i as f64 * 0.2).collect(),
                utilization_gpu: Some((1..=20).map(|i| Some(i as f64)).collect()),
                ..Default::default()
            }],
            processes: vec![],
            node: None,
            main_thread: None,
            progress: None,
            findings: vec![],
            downsampled: None,
            notes: vec![],
        };
        let s = stats(&rec);
        assert_eq!(s.util_p5, Some(1.0));
        assert_eq!(s.util_mean, Some(10.5));
        assert_eq!(s.data_wait_share, None);
    }
}
