//! The other things people paste from `nvidia-smi`: the default table (the most common paste
//! of all), `--query-gpu=... --format=csv` with its header, `dmon` and `pmon` samples, and
//! `topo -m`. Each is read into [`SmiUsage`] (what the GPUs were doing, and which processes
//! ran on them), which also maps onto the [`NvmlReading`] the live read fills, so the driver
//! and memory rules judge a pasted table as they judge a live host. What a table does not
//! print stays "not in the evidence".
//!
//! Lines may come quoted (`> `), inside markdown fences, with a shell prompt before them or
//! cut at the end; each parser reads the rows it recognises and skips the rest.

use crate::vocab::nvml::ProcessMem;
use crate::vocab::nvml::{Field, GpuReading, NvmlReading};
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::nvidia_smi::NOT_IN_EVIDENCE;

/// What a pasted `nvidia-smi` table, CSV or monitor log shows.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SmiUsage {
    /// `table`, `query-csv`, `dmon`, `pmon`.
    pub format: String,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<UsageGpu>,
    /// True when the text has a whole process section (even one saying "No running
    /// processes"): one cut before its closing border lists only some of the processes, so
    /// it is not read as saying the others are absent.
    pub processes_listed: bool,
    /// The table is the output of a throwaway container whose command is nvidia-smi (`docker
    /// run --gpus all IMAGE nvidia-smi`, the NVIDIA Container Toolkit's own check). nvidia-smi
    /// in a container sees only its own PID namespace, which holds no job: memory the table
    /// shows is held by processes outside it, so it names no job of the paste's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub container_check: bool,
    pub processes: Vec<UsageProcess>,
    /// Rows read (dmon/pmon: samples).
    pub samples: usize,
    /// The last GPU row or sample is cut short.
    pub truncated: bool,
    /// `--format=csv,noheader` rows pasted without their command: the columns whose values'
    /// shapes name no one field (`100 %` is utilization.gpu or .memory, `40536 MiB` total,
    /// used or free), as `column 4 (100 %)`. They are left unread, never guessed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_fields: Vec<String>,
    /// The reading is one job's own GPUs over its run (a Slurm `jobstats` report, which selects
    /// the GPUs by the job's id): every GPU it lists hosts the job, and its figures are means
    /// over the run, not one moment.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub job_report: bool,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct UsageGpu {
    pub index: u32,
    pub name: Option<String>,
    pub bus_id: Option<String>,
    pub persistence: Option<bool>,
    /// The table's `Disp.A` column: this GPU drives a display.
    pub display_active: Option<bool>,
    pub temperature_c: Option<f64>,
    /// The table printed `ERR!` in the Temp column: nvidia-smi's mark for a reading whose NVML
    /// query failed (N/A is its mark for one not supported), the sensor could not be read.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub temperature_err: bool,
    pub pstate: Option<String>,
    pub power_w: Option<f64>,
    pub power_cap_w: Option<f64>,
    pub memory_used_mib: Option<f64>,
    pub memory_total_mib: Option<f64>,
    /// Percent; for dmon the mean over the samples.
    pub util_gpu: Option<f64>,
    pub util_gpu_max: Option<f64>,
    pub util_mem: Option<f64>,
    pub compute_mode: Option<String>,
    pub sm_clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    pub pcie_gen: Option<f64>,
    pub pcie_gen_max: Option<f64>,
    pub pcie_width: Option<f64>,
    pub pcie_width_max: Option<f64>,
    pub ecc_uncorrected: Option<f64>,
    /// Active clocks event (throttle) reasons, NVML's names (`HW_SLOWDOWN`, ...), when the
    /// CSV has `clocks_throttle_reasons.*` / `clocks_event_reasons.*` columns; over several
    /// samples, every reason seen active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocks_event_reasons: Option<Vec<String>>,
    /// `--query-gpu` fields that only the CSV prints (`nvidia-smi --help-query-gpu`):
    /// `clocks.max.sm` / `clocks.max.graphics` (MHz), `power.default_limit` (W),
    /// `ecc.errors.uncorrected.aggregate.total`, `retired_pages.pending` (`Yes`/`No`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_clock_max_mhz: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_default_w: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecc_uncorrected_aggregate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_pages_pending: Option<bool>,
    pub samples: usize,
    /// Over a time series of this GPU (dmon rows, a `--query-gpu -l` loop), how often work came
    /// back after the GPU went idle: a sample at [`WORK_PCT`] or more, then one at 0 %, then
    /// one at [`WORK_PCT`] or more again. `utilization.gpu` is the "percent of time over the
    /// past sample period during which one or more kernels was executing on the GPU"
    /// (`nvidia-smi --help-query-gpu`; nvml.h's `nvmlUtilization_t.gpu`, NVIDIA/go-nvml
    /// pkg/nvml/nvml.h at feba957; dmon's `sm` column is the same counter): 0 is a whole sample
    /// period without a kernel, and work after it says whatever ran before the gap was still
    /// there through it (a job that ends or starts inside the window shows no return).
    #[serde(skip_serializing_if = "is_zero")]
    pub work_resumed: usize,
    /// Where this GPU's series stands: 0 no work yet, 1 working, 2 idle after work.
    #[serde(skip)]
    pub work_phase: u8,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A sample at which a GPU counts as working for [`UsageGpu::work_resumed`]: kernels ran for a
/// tenth of the sample period or more, the level below which `launch.gpu-underutilized` calls
/// one reading near idle (its `max_snapshot_util`); less is what a desktop's compositor or a
/// monitoring tool's own context shows between samples of nothing.
pub const WORK_PCT: f64 = 10.0;

/// The next [`UsageGpu::work_phase`] after a sample at `util`, and whether work came back.
fn work_step(phase: u8, util: Option<f64>) -> (u8, bool) {
    match util {
        Some(x) if x >= WORK_PCT => (1, phase == 2),
        Some(x) if x == 0.0 && phase == 1 => (2, false),
        _ => (phase, false),
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct UsageProcess {
    pub gpu: Option<u32>,
    pub pid: Option<u32>,
    /// `C`, `G`, `C+G`, `M`…
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub memory_mib: Option<f64>,
    /// pmon: SM percent of this process.
    pub sm_pct: Option<f64>,
}

// ---------------------------------------------------------------------------------------------
// Line cleanup.

/// Strips what wraps a pasted line: quote marks, markdown fences and backticks, list bullets.
pub(crate) fn clean(line: &str) -> &str {
    let mut l = line.trim_end();
    loop {
        let t = l.trim_start();
        if let Some(r) = t.strip_prefix('>') {
            l = r;
        } else if let Some(r) = t.strip_prefix('`') {
            l = r;
        } else if t.starts_with("\\#") {
            // markdown escapes a leading `#` (dmon's header) as `\#`
            l = &t[1..];
            break;
        } else if let Some(r) = t.strip_prefix("**").filter(|r| r.starts_with('|')) {
            // a table row the poster made bold in markdown: `**|    2      8539 … |**`
            l = r;
        } else {
            break;
        }
    }
    let l = l.trim_end_matches('`');
    l.strip_suffix("**")
        .filter(|r| r.ends_with('|'))
        .unwrap_or(l)
}

fn num(s: &str) -> Option<f64> {
    let t = s
        .trim()
        .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%')
        .trim();
    let n: f64 = t.parse().ok()?;
    n.is_finite().then_some(n)
}

fn mib(s: &str) -> Option<f64> {
    let s = s.trim();
    let n = num(s)?;
    let unit: String = s
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
        .to_string();
    Some(match unit.trim() {
        "GiB" | "GB" | "G" => n * 1024.0,
        "KiB" | "KB" | "K" => n / 1024.0,
        "B" => n / 1048576.0,
        _ => n,
    })
}

// ---------------------------------------------------------------------------------------------
// The default table.

/// The banner line at the top of the default table, as the driver prints it: `| NVIDIA-SMI 387.26
/// Driver Version: 387.26 |` until R410 (no CUDA column), `| NVIDIA-SMI 570.133.20  Driver
/// Version: 570.133.20  CUDA Version: 12.8 |` from R410 on, `KMD Version: D  CUDA UMD Version:
/// C` from R610 on (the nvidia-smi documentation: "deprecated Driver Version and CUDA Version in
/// favor of KMD Version and CUDA UMD Version"). People paste it alone as their environment, with
/// or without its `|` borders, and often only its versions part (`Driver Version: 570.133.20
/// CUDA Version: 12.8`, NVIDIA-NeMo/Speech#13854): the two keys on one line are the banner's, no
/// other output prints them so. Only the whole line is taken, never a sentence that quotes it.
static BANNER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:NVIDIA-SMI\s+\d+\.\d+\S*\s+(?:Driver|KMD) Version:\s*\d+\.\d+(?:\.\d+)?(?:\s+CUDA (?:UMD )?Version:\s*(?:\d+\.\d+|N/A))?|(?:Driver|KMD) Version:\s*\d+\.\d+(?:\.\d+)?\s+CUDA (?:UMD )?Version:\s*(?:\d+\.\d+|N/A))$",
    )
    .expect("static regex")
});

/// The line is the table's banner (see [`BANNER`]), with or without its borders.
fn banner_line(l: &str) -> bool {
    let t = clean(l).trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t).trim();
    t.len() < 200 && BANNER.is_match(t)
}

/// True when the text has the default table's header or a GPU row of it. Not a copy of the
/// table another vendor's tool prints under its own banner (Habana's `hl-smi`, Intel's xpu-smi
/// 2.x: [`super::other_vendor::is_smi_lookalike`]), whose rows are not NVIDIA GPUs.
pub fn looks_like_table(h: &str) -> bool {
    if super::other_vendor::is_smi_lookalike(h) {
        return false;
    }
    (h.contains("GPU-Util") && h.contains("Memory-Usage"))
        || (h.contains("NVIDIA-SMI")
            && (h.contains("Driver Version") || h.contains("KMD Version"))
            && h.contains('|'))
        // a paste trimmed to the process section or the MIG section
        || (h.contains("Processes:") && h.contains("Process name") && h.contains('|'))
        // or to process rows alone, without the section's header
        || h.lines().filter(|l| bare_process_row(clean(l).trim()).is_some()).count() >= 2
        || (h.contains("MIG devices:") && h.contains('|'))
        || h.lines().any(|l| {
            let l = clean(l);
            l.trim_start().starts_with('|') && gpu_row_2(&cells(l)).is_some()
        })
        || (h.contains("Version:") && h.lines().any(banner_line))
}

fn cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(str::trim).collect()
}

/// `0  NVIDIA A100-SXM4-80GB   On` | `00000000:07:00.0 Off` | `0`
type Row1 = (u32, String, Option<bool>, Option<String>, Option<bool>);

fn gpu_row_1(c: &[&str]) -> Option<Row1> {
    if c.len() < 2 {
        return None;
    }
    let mut toks: Vec<&str> = c[0].split_whitespace().collect();
    let index: u32 = toks.first()?.parse().ok()?;
    toks.remove(0);
    let persistence = match toks.last().copied() {
        Some("On") => Some(true),
        Some("Off") => Some(false),
        _ => None,
    };
    if persistence.is_some() {
        toks.pop();
    }
    // Windows tables print the driver model (WDDM/TCC) instead of the persistence flag.
    if matches!(toks.last().copied(), Some("WDDM" | "TCC")) {
        toks.pop();
    }
    let disp = match c[1].split_whitespace().nth(1) {
        Some("On") => Some(true),
        Some("Off") => Some(false),
        _ => None,
    };
    let bus = c[1].split_whitespace().next().filter(|b| {
        b.matches(':').count() >= 1
            && b.contains('.')
            && b.chars()
                .all(|x| x.is_ascii_hexdigit() || x == ':' || x == '.')
    })?;
    Some((
        index,
        toks.join(" "),
        persistence,
        Some(bus.to_string()),
        disp,
    ))
}

struct Row2 {
    fan: Option<f64>,
    temp: Option<f64>,
    temp_err: bool,
    pstate: Option<String>,
    power: Option<f64>,
    cap: Option<f64>,
    used: Option<f64>,
    total: Option<f64>,
    util: Option<f64>,
    compute_mode: Option<String>,
}

/// `N/A   33C    P0    62W / 400W` | `4MiB / 81920MiB` | `0%      Default`
///
/// A GPU without a framebuffer of its own (the GB10 of a DGX Spark, whose memory is the
/// system's) has no memory figures: NVML's `nvmlDeviceGetMemoryInfo` answers
/// `NVML_ERROR_NOT_SUPPORTED` there, and nvidia-smi 580 prints `Not Supported` across the
/// Memory-Usage cell (NVIDIA/k8s-device-plugin#1482, driver 580.95.05), as it prints an
/// unsupported field `N/A` / `Not Supported` elsewhere. That row is still the GPU's second
/// line: it is read, its memory left unknown, where its first cell reads as that line (a
/// temperature `NNC` and a performance state `Pn`).
fn gpu_row_2(c: &[&str]) -> Option<Row2> {
    if c.len() < 2 {
        return None;
    }
    let toks: Vec<&str> = c[0].split_whitespace().collect();
    let temp_tok = toks
        .iter()
        .find(|t| t.ends_with('C') && t[..t.len() - 1].parse::<f64>().is_ok());
    let pstate = toks
        .iter()
        .find(|t| t.len() <= 3 && t.starts_with('P') && t[1..].parse::<u32>().is_ok())
        .map(|t| t.to_string());
    let (used, total) = match c[1].split_once('/') {
        Some((used, total)) => {
            if !used.trim().ends_with("MiB") && !used.trim().ends_with("GiB") {
                return None;
            }
            (used, total)
        }
        None if matches!(c[1].trim(), "Not Supported" | "N/A")
            && temp_tok.is_some()
            && pstate.is_some() =>
        {
            ("", "")
        }
        None => return None,
    };
    let temp = temp_tok.and_then(|t| num(t));
    let fan = toks.iter().find(|t| t.ends_with('%')).and_then(|t| num(t));
    // the cell's fields are positional, as the header names them (`Fan  Temp  Perf
    // Pwr:Usage/Cap`): the second token is the temperature, `ERR!` where its query failed
    let temp_err = temp.is_none() && toks.len() >= 3 && toks[1] == "ERR!";
    // `4W /  N/A`: a cap nvidia-smi cannot read is `N/A`, whose own slash is not the divider
    let (power, cap) = match c[0].rsplit_once(" / ").or_else(|| c[0].rsplit_once('/')) {
        Some((a, b)) => (
            a.split_whitespace().last().and_then(num),
            b.split_whitespace().next().and_then(num),
        ),
        None => (None, None),
    };
    let (util, compute_mode) = match c.get(2) {
        Some(u) => {
            let mut it = u.split_whitespace();
            let util = it.next().filter(|t| t.ends_with('%')).and_then(num);
            (util, it.next().map(str::to_string))
        }
        None => (None, None),
    };
    Some(Row2 {
        fan,
        temp,
        temp_err,
        pstate,
        power,
        cap,
        used: mib(used),
        total: mib(total),
        util,
        compute_mode,
    })
}

fn process_row(c: &[&str]) -> Option<UsageProcess> {
    if c.len() != 1 {
        return None;
    }
    let toks: Vec<&str> = c[0].split_whitespace().collect();
    if toks.len() < 4 {
        return None;
    }
    let gpu: u32 = toks[0].parse().ok()?;
    let ti = toks
        .iter()
        .position(|t| matches!(*t, "C" | "G" | "C+G" | "M" | "M+C" | "M+G" | "C+M"))?;
    let pid: Option<u32> = toks.get(ti.checked_sub(1)?).and_then(|p| p.parse().ok());
    let last = toks.last()?;
    let (memory_mib, end) = if last.ends_with("MiB") || last.ends_with("GiB") {
        (mib(last), toks.len() - 1)
    } else if *last == "N/A" {
        (None, toks.len() - 1)
    } else {
        (None, toks.len())
    };
    if end <= ti + 1 {
        return None;
    }
    Some(UsageProcess {
        gpu: Some(gpu),
        pid,
        kind: toks[ti].to_string(),
        name: super::clip(&toks[ti + 1..end].join(" "), 200),
        memory_mib,
        sm_pct: None,
    })
}

/// A row of the table's process section read without the section's header, as a paste cut
/// down to the rows in question gives it: one framed cell (`|  GPU  [GI CI]  PID  Type
/// Process name  Usage |`, the header nvidia-smi prints above these rows, R470 on with the
/// MIG GI/CI columns, before it without) whose last field is the memory in MiB. A GPU row is
/// several cells between `|`, so it is never one of these.
fn bare_process_row(t: &str) -> Option<UsageProcess> {
    if !t.starts_with('|') || !t.ends_with('|') {
        return None;
    }
    process_row(&cells(t)).filter(|p| p.memory_mib.is_some() && p.pid.is_some())
}

/// One rule of the table's frame as nvidia-smi prints it: `+-----+-----+`, `|=====+=====|`,
/// `|-----+-----+` (a whole line, no spaces). Its inner `+` junctions mark the column borders
/// of the rows below it.
fn is_frame_rule(tok: &str) -> bool {
    tok.len() >= 5
        && tok.starts_with(['+', '|'])
        && tok.ends_with(['+', '|'])
        && tok.chars().all(|c| matches!(c, '+' | '|' | '-' | '='))
        && tok.chars().filter(|&c| c == '-' || c == '=').count() >= 3
}

/// The table's printed lines. A web page that shows the table outside a `<pre>` block (or a
/// copy of such a page) turns every line break into a space and collapses runs of spaces to
/// one (CSS Text Module Level 3, §4.1.1 "Phase I: Collapsing and Transformation": segment breaks
/// are transformed to spaces, collapsible spaces collapse), so the whole table arrives as one
/// line. Its lines are put back from the table's own grammar: every frame rule
/// ([`is_frame_rule`]) was a line of its own, and every row between two rules was
/// `| cell | cell | cell |`, one cell per column of the rule above it, i.e. columns + 1 pipes
/// (the header box has one column, the GPU section three, the process section one). A cell may
/// be empty (`| | | MIG M. |`), which is why rows are cut by counting pipes and not at `| |`.
/// Text before the first pipe of a stretch (a date, a prompt) is a line of its own. Lines with
/// fewer than two rules (every table as nvidia-smi printed it) are left as they are.
fn table_lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.lines() {
        let line = clean(raw);
        if line.split_whitespace().filter(|t| is_frame_rule(t)).count() < 2 {
            out.push(raw.to_string());
            continue;
        }
        let mut columns = 1usize;
        let mut stretch = String::new();
        let flush = |stretch: &mut String, columns: usize, out: &mut Vec<String>| {
            let mut row = String::new();
            let mut pipes = 0usize;
            for ch in stretch.chars() {
                if ch == '|' {
                    if pipes == 0 && !row.trim().is_empty() {
                        out.push(row.trim().to_string());
                        row.clear();
                    }
                    pipes += 1;
                }
                row.push(ch);
                if pipes == columns + 1 {
                    out.push(row.trim().to_string());
                    row.clear();
                    pipes = 0;
                }
            }
            if !row.trim().is_empty() {
                out.push(row.trim().to_string());
            }
            stretch.clear();
        };
        for tok in line.split_whitespace() {
            if is_frame_rule(tok) {
                flush(&mut stretch, columns, &mut out);
                let inner = &tok[1..tok.len() - 1];
                columns = inner.chars().filter(|&c| c == '+' || c == '|').count() + 1;
                out.push(tok.to_string());
            } else {
                if !stretch.is_empty() {
                    stretch.push(' ');
                }
                stretch.push_str(tok);
            }
        }
        flush(&mut stretch, columns, &mut out);
    }
    out
}

// `docker run … IMAGE nvidia-smi` (podman, nerdctl alike) as a shell line, with or without its
// prompt: the command the container runs is nvidia-smi itself (the NVIDIA Container Toolkit's
// documented check, docs.nvidia.com/datacenter/cloud-native/container-toolkit "Running a Sample
// Workload": `sudo docker run --rm --runtime=nvidia --gpus all ubuntu nvidia-smi`)
static CONTAINER_SMI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\S*[$#>]\s*)?(?:sudo\s+)?(?:docker|podman|nerdctl)\s+run\s[^;&|]*\snvidia-smi\s*$",
    )
    .expect("static regex")
});

pub fn parse_table(text: &str) -> Result<SmiUsage, super::ParseError> {
    let mut u = SmiUsage {
        format: "table".into(),
        ..Default::default()
    };
    let mut in_procs = false;
    let mut in_mig = false;
    // instance rows of a MIG section: a paste of that section alone is still a table
    let mut mig_gpus: Vec<u32> = Vec::new();
    // The process section is whole once its closing border follows its `|===|` header rule
    // (or it says there are none); a paste cut inside it leaves the others unknown.
    let (mut procs_ruled, mut procs_whole) = (false, false);
    let mut pending: Option<UsageGpu> = None;
    for raw in table_lines(text) {
        let line = clean(&raw);
        let t = line.trim();
        if in_procs && t.starts_with("|=") {
            procs_ruled = true;
        } else if in_procs && procs_ruled && t.starts_with("+-") {
            procs_whole = true;
        }
        // The header line: `Driver Version: D  CUDA Version: C` until R610, `KMD Version: D
        // CUDA UMD Version: C` from R610 on (the nvidia-smi documentation: "deprecated Driver
        // Version and CUDA Version in favor of KMD Version and CUDA UMD Version").
        if t.contains("Driver Version:") || t.contains("KMD Version:") {
            let after = |k: &str| {
                t.split_once(k)
                    .and_then(|(_, r)| r.split_whitespace().next())
                    .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
                    .map(str::to_string)
            };
            u.driver_version = after("Driver Version:").or_else(|| after("KMD Version:"));
            u.cuda_version = after("CUDA Version:").or_else(|| after("CUDA UMD Version:"));
            continue;
        }
        if t.starts_with("| Processes") || t.starts_with("|  Processes") || t == "Processes:" {
            in_procs = true;
            in_mig = false;
            u.processes_listed = true;
            continue;
        }
        // A MIG-enabled GPU's instances (memory and SM count per instance, no utilization):
        // their rows are not GPUs.
        if t.contains("MIG devices:") {
            in_mig = true;
            continue;
        }
        if in_mig {
            if t.starts_with('|')
                && let Some(g) = mig_instance_gpu(&cells(t))
                && !mig_gpus.contains(&g)
                && mig_gpus.len() < super::MAX_ITEMS
            {
                mig_gpus.push(g);
            }
            continue;
        }
        if !t.starts_with('|') {
            continue;
        }
        let c = cells(t);
        // process rows pasted without their section's header (nothing of the table above
        // them): read as the processes they are; the section is not whole, so processes not
        // shown stay unknown
        if !in_procs
            && u.gpus.is_empty()
            && pending.is_none()
            && let Some(p) = bare_process_row(t)
        {
            if u.processes.len() < super::MAX_ITEMS {
                u.processes.push(p);
            }
            continue;
        }
        if in_procs {
            if t.contains("No running processes") {
                procs_whole = true;
                continue;
            }
            if let Some(p) = process_row(&c)
                && u.processes.len() < super::MAX_ITEMS
            {
                u.processes.push(p);
            }
            continue;
        }
        if let Some((index, name, persistence, bus_id, display_active)) = gpu_row_1(&c) {
            if let Some(g) = pending.take() {
                u.gpus.push(g);
            }
            pending = Some(UsageGpu {
                index,
                name: Some(super::clip(&name, 200)).filter(|n| !n.is_empty()),
                persistence,
                bus_id,
                display_active,
                // the `Volatile Uncorr. ECC` column: a count, or N/A / Off without ECC
                ecc_uncorrected: c
                    .get(2)
                    .map(|v| v.trim())
                    .filter(|v| !v.is_empty() && v.chars().all(|x| x.is_ascii_digit()))
                    .and_then(num),
                ..Default::default()
            });
            continue;
        }
        if let Some(r) = gpu_row_2(&c) {
            let mut g = pending.take().unwrap_or_else(|| UsageGpu {
                index: u.gpus.len() as u32,
                ..Default::default()
            });
            let _ = r.fan;
            g.temperature_c = r.temp;
            g.temperature_err = r.temp_err;
            g.pstate = r.pstate;
            g.power_w = r.power;
            g.power_cap_w = r.cap;
            g.memory_used_mib = r.used;
            g.memory_total_mib = r.total;
            g.util_gpu = r.util;
            g.util_gpu_max = r.util;
            g.compute_mode = r.compute_mode;
            g.samples = 1;
            u.samples += 1;
            if u.gpus.len() < super::MAX_ITEMS {
                u.gpus.push(g);
            }
        }
    }
    // A GPU row whose second line the paste lost.
    if let Some(g) = pending.take() {
        u.truncated = true;
        u.gpus.push(g);
    }
    if in_procs && !procs_whole {
        u.processes_listed = false;
    }
    u.container_check = text.lines().any(|l| CONTAINER_SMI.is_match(l.trim()));
    if u.gpus.is_empty() && u.processes.is_empty() && mig_gpus.is_empty() {
        // the banner alone: the driver and the CUDA it supports, nothing of the GPUs (how many,
        // what they do), which stay unknown rather than none
        if u.driver_version.is_some() && text.lines().any(banner_line) {
            return Ok(u);
        }
        return Err(super::ParseError::NotThisKind(
            "no GPU rows found in the nvidia-smi table",
        ));
    }
    // A paste trimmed to the process or MIG section names GPUs without their rows: each
    // stands with nothing read, so its rules say "not in the evidence" rather than passing
    // over no GPU at all.
    if u.gpus.is_empty() {
        let mut named: Vec<u32> = u.processes.iter().filter_map(|p| p.gpu).collect();
        named.extend(&mig_gpus);
        named.sort_unstable();
        named.dedup();
        u.gpus = named
            .into_iter()
            .take(super::MAX_ITEMS)
            .map(|index| UsageGpu {
                index,
                ..Default::default()
            })
            .collect();
    }
    Ok(u)
}

/// `  1    3   0   0  |  14366MiB / 19968MiB | 28      0 | …`: GPU, GI, CI and MIG device
/// numbers, then the instance's memory; the GPU it belongs to.
fn mig_instance_gpu(c: &[&str]) -> Option<u32> {
    let ids: Vec<&str> = c.first()?.split_whitespace().collect();
    let is_memory = c.get(1)?.split_once('/').is_some_and(|(used, _)| {
        let used = used.trim();
        used.ends_with("MiB") || used.ends_with("GiB")
    });
    if ids.len() != 4 || !is_memory {
        return None;
    }
    let nums: Vec<u32> = ids.iter().filter_map(|t| t.parse().ok()).collect();
    (nums.len() == 4).then_some(nums[0])
}

// ---------------------------------------------------------------------------------------------
// `--query-gpu=... --format=csv` (and `--query-compute-apps`).

/// The CSV header nvidia-smi prints: field names with units in brackets.
pub fn looks_like_query_csv(h: &str) -> bool {
    h.lines().any(|l| query_header(clean(l).trim()).is_some())
        || query_from_command(h).is_some_and(|(fields, at)| {
            h.lines()
                .skip(at + 1)
                .any(|l| headless_row(clean(l).trim(), fields.len()))
        })
        || shaped_header(h).is_some()
}

/// nvidia-smi's `timestamp` field, "YYYY/MM/DD HH:MM:SS.msec" (`nvidia-smi --help-query-gpu`,
/// as R525-R595 print it: `2024/01/16 14:44:16.977`), as seconds since 1970 (only differences
/// between rows are used). `None` for anything else.
fn nvsmi_timestamp(v: &str) -> Option<f64> {
    let (date, time) = v.trim().split_once(' ')?;
    let mut d = date.split('/');
    let (y, m, dd) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || y.len() != 4 || m.len() != 2 || dd.len() != 2 {
        return None;
    }
    let (y, m, dd): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, dd.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&dd) {
        return None;
    }
    let mut t = time.split(':');
    let (h, mi, sec) = (t.next()?, t.next()?, t.next()?);
    if t.next().is_some()
        || h.len() != 2
        || mi.len() != 2
        || !sec.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let (h, mi, sec): (i64, i64, f64) = (h.parse().ok()?, mi.parse().ok()?, sec.parse().ok()?);
    if h > 23 || mi > 59 || !(0.0..61.0).contains(&sec) {
        return None;
    }
    // days from the civil date (Howard Hinnant's algorithm)
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + dd - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some((days * 86400 + h * 3600 + mi * 60) as f64 + sec)
}

/// A row's time in seconds: nvidia-smi's own `timestamp`, or epoch seconds where a script
/// wrote `date +%s` into the `timestamp` column before nvidia-smi's `noheader` values.
fn row_time(v: &str) -> Option<f64> {
    nvsmi_timestamp(v).or_else(|| {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|t| *t > 1e8 && t.is_finite())
    })
}

/// The field a value's shape pins whatever the query, from `nvidia-smi --help-query-gpu`'s
/// formats: `pci.bus_id` is "domain:bus:device.function, in hex" (`00000000:07:00.0`), `uuid`
/// is `GPU-` and hex groups, `name` is the product name (NVIDIA's brands lead it). A number
/// with `%`, `MiB`, `W` or `MHz` is one of several fields and pins none.
fn pinned_field(v: &str) -> Option<&'static str> {
    let hex = |p: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&p.len()) && p.bytes().all(|b| b.is_ascii_hexdigit())
    };
    if let Some((dom, rest)) = v.split_once(':')
        && let Some((bus, df)) = rest.split_once(':')
        && let Some((dev, f)) = df.split_once('.')
        && hex(dom, 4..=8)
        && hex(bus, 2..=2)
        && hex(dev, 2..=2)
        && f.len() == 1
        && f.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        return Some("pci.bus_id");
    }
    if v.strip_prefix("GPU-")
        .is_some_and(|u| u.len() >= 32 && u.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
    {
        return Some("uuid");
    }
    // `"timestamp"`: "The timestamp of when the query was made in format \"YYYY/MM/DD
    // HH:MM:SS.msec\"" (`--help-query-gpu`); no other field prints a date
    if nvsmi_timestamp(v).is_some() {
        return Some("timestamp");
    }
    // `"pstate"`: "The current performance state for the GPU. States range from P0 (maximum
    // performance) to P12 (minimum performance)." (`--help-query-gpu`); NVML's
    // nvmlPstates_t goes to NVML_PSTATE_15, and no other field prints `P` and a number
    if let Some(d) = v.strip_prefix('P')
        && !d.is_empty()
        && d.len() <= 2
        && d.bytes().all(|b| b.is_ascii_digit())
        && d.parse::<u8>().is_ok_and(|n| n <= 15)
    {
        return Some("pstate");
    }
    let brands = ["NVIDIA ", "Tesla ", "GeForce ", "Quadro ", "TITAN ", "NVS "];
    (brands.iter().any(|b| v.starts_with(b)) && v.len() <= 96).then_some("name")
}

/// A value nvidia-smi prints with its unit under `--format=csv` (no `nounits`): a number, a
/// space, and `%`, `MiB`, `W` or `MHz` (`36 %`, `2856 MiB`, `106.56 W`, `1936 MHz`; the
/// `--format` section of nvidia-smi(1): "nounits: Don't print units for numerical values").
/// The unit names a family of fields (`%` is any utilization or `fan.speed`), never one field.
fn unit_value(v: &str) -> bool {
    ["%", "MiB", "W", "MHz"].iter().any(|u| {
        v.strip_suffix(u)
            .and_then(|n| n.strip_suffix(' '))
            .is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok_and(f64::is_finite))
    })
}

/// A value nvidia-smi prints for a measured field: a number, alone or with its unit.
/// True when `fields`, fewer than a row has, can be a `--query-gpu` row the paste cut: every
/// field but the last has the shape of the same column in the row above (the same pinned field,
/// measured or not, a digit first or not), and the last, which the cut may have split, begins
/// the value above it or has its shape without being words alone. With no row above, a cut row
/// holds a digit. A sentence under the rows is then not read as a cut row.
fn cut_row(fields: &[&str], above: Option<&Vec<String>>) -> bool {
    let shape = |v: &str| {
        (
            pinned_field(v),
            measured_value(v),
            v.starts_with(|c: char| c.is_ascii_digit()),
        )
    };
    let words_only = |v: &str| {
        v.split_whitespace().all(|w| {
            w.trim_matches(|c: char| c.is_ascii_punctuation())
                .chars()
                .all(char::is_alphabetic)
        })
    };
    let Some(above) = above else {
        return fields.iter().any(|f| f.bytes().any(|b| b.is_ascii_digit()));
    };
    let Some((last, head)) = fields.split_last() else {
        return false;
    };
    head.iter().zip(above).all(|(f, a)| shape(f) == shape(a))
        && above.get(head.len()).is_some_and(|a| {
            a.starts_with(last) && !last.is_empty() || shape(last) == shape(a) && !words_only(last)
        })
}

fn measured_value(v: &str) -> bool {
    let n = ["%", "MiB", "W", "MHz", "C"]
        .iter()
        .find_map(|u| v.strip_suffix(u))
        .unwrap_or(v)
        .trim();
    !n.is_empty() && n.parse::<f64>().is_ok()
}

/// Headerless `--format=csv,noheader` rows pasted without the command that names their
/// fields: read only where every row has the same number of fields (three or more), at least
/// one column's values pin a field by their shape ([`pinned_field`]) and another is measured.
/// Each column is its pinned field, or `?` (unread): the header the rows are read under.
fn shaped_header(text: &str) -> Option<Vec<String>> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| clean(l).trim())
        .filter(|l| !l.is_empty())
        .take(2000)
        .filter(|l| l.contains(", "))
        .map(|l| l.split(',').map(str::trim).collect())
        .collect();
    let n = rows.first()?.len();
    if n < 2 || rows.iter().any(|r| r.len() != n) {
        return None;
    }
    // Rows whose every column is a value with nvidia-smi's unit (`2 %, 588 MiB`): the
    // producer's own format, two columns or more, whose fields no value pins. Read as unknown
    // columns: the unit says `%`, never which utilization.
    let all_units = (0..n).all(|i| rows.iter().all(|r| unit_value(r[i])));
    if all_units {
        return Some(vec!["?".to_string(); n]);
    }
    if n < 3 {
        return None;
    }
    let cols: Vec<String> = (0..n)
        .map(|i| {
            let pins: Vec<Option<&str>> = rows.iter().map(|r| pinned_field(r[i])).collect();
            match pins[0] {
                Some(f) if pins.iter().all(|p| *p == Some(f)) => f.to_string(),
                _ => "?".to_string(),
            }
        })
        .collect();
    let pinned = cols.iter().filter(|c| *c != "?").count();
    let measured = (0..n).any(|i| rows.iter().all(|r| measured_value(r[i])));
    let mut seen = std::collections::BTreeSet::new();
    let distinct = cols
        .iter()
        .filter(|c| *c != "?")
        .all(|c| seen.insert(c.clone()));
    (pinned >= 1 && measured && distinct).then_some(cols)
}

/// The header line nvidia-smi prints over `--format=csv` rows (`index, utilization.gpu [%]`):
/// at least two fields, half or more of them query fields; the field names, units dropped. The
/// command line itself (`--query-gpu=…`) is no header.
fn query_header(l: &str) -> Option<Vec<String>> {
    let fields: Vec<&str> = l.split(',').map(str::trim).collect();
    let named = fields.iter().filter(|f| is_query_field(f)).count();
    // nvidia-smi heads a one-field query too (`utilization.gpu [%]`, a script calling it once
    // per sample prints it over every value): alone on a line, only a query field with its
    // unit in brackets is taken for that header, never a bare word
    // A field whose values carry no unit prints its bare name (`nvidia-smi --query-gpu=
    // clocks_throttle_reasons.supported --format=csv` prints `clocks_throttle_reasons.supported`
    // over `0x00000000000001FF`, NVIDIA/nvidia-settings#80): such a dotted field alone on a
    // line is taken too, never a bare word nor a field nvidia-smi prints with its unit
    let single = fields.len() == 1
        && is_query_field(fields[0])
        && ((fields[0].ends_with(']') && fields[0].contains(" ["))
            || unitless_dotted_field(fields[0]));
    (!l.contains("--query-") && (single || (fields.len() >= 2 && named * 2 >= fields.len()))).then(
        || {
            fields
                .iter()
                .map(|f| alias(f.split(" [").next().unwrap_or(f).trim()).to_string())
                .collect()
        },
    )
}

/// The dotted query fields whose values nvidia-smi prints without a unit, so without a `[unit]`
/// in the CSV header: the clocks throttle/event reason bitmasks and flags, the PCIe link's
/// generation and width, the temperatures (`temperature.gpu` over `60`, aristocratos/bpytop#26),
/// the ECC counts and the retired-page/remapped-row counts and flags (`--help-query-gpu`). The
/// `utilization.`, `memory.`, `power.` and `clocks.` fields print `%`, `MiB`, `W` and `MHz`.
fn unitless_dotted_field(f: &str) -> bool {
    f.contains('.')
        && f.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'_')
        && [
            "clocks_throttle_reasons.",
            "clocks_event_reasons.",
            "pcie.link.",
            "temperature.",
            "ecc.errors.",
            "retired_pages.",
            "remapped_rows.",
        ]
        .iter()
        .any(|p| f.starts_with(p))
}

/// `nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits` pasted with
/// its output: the fields the command asks for head rows printed without a header. The
/// fields and the line of the command. The command may sit in a sentence as markdown inline
/// code (`` `nvidia-smi --query-gpu=memory.used,memory.total` reports: ``,
/// github.com/mostlygeek/llama-swap/issues/782): its backticks are no part of the field list.
fn query_from_command(text: &str) -> Option<(Vec<String>, usize)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let (_, rest) = l
            .split_once("--query-gpu")
            .or_else(|| l.split_once("--query-compute-apps"))?;
        let list = rest
            .trim_start_matches(['=', ' '])
            .split_whitespace()
            .next()?
            .split('`')
            .next()?
            .trim_matches(['"', '\'']);
        let fields: Vec<String> = list
            .split(',')
            .map(|f| alias(f.trim()).to_string())
            .filter(|f| !f.is_empty())
            .collect();
        (!fields.is_empty() && fields.iter().all(|f| is_query_field(f))).then_some((fields, i))
    })
}

/// `--help-query-gpu`'s second names for a field (`"name" or "gpu_name"`, `"serial" or
/// "gpu_serial"`, `"uuid" or "gpu_uuid"`): the first name. (`gpu_uuid` and `gpu_bus_id` stay:
/// `--query-compute-apps` prints them for a process's GPU.)
fn alias(f: &str) -> &str {
    match f {
        "gpu_name" => "name",
        "gpu_serial" => "serial",
        // `"clocks.current.graphics" or "clocks.gr"`, `"clocks.current.sm" or "clocks.sm"`,
        // `"clocks.current.memory" or "clocks.mem"`, `"clocks.max.graphics" or "clocks.max.gr"`,
        // `"clocks.max.memory" or "clocks.max.mem"`: the header prints the first name
        "clocks.gr" => "clocks.current.graphics",
        "clocks.sm" => "clocks.current.sm",
        "clocks.mem" => "clocks.current.memory",
        "clocks.video" => "clocks.current.video",
        "clocks.max.gr" => "clocks.max.graphics",
        "clocks.max.mem" => "clocks.max.memory",
        "clocks.applications.gr" => "clocks.applications.graphics",
        "clocks.applications.mem" => "clocks.applications.memory",
        "clocks.default_applications.gr" => "clocks.default_applications.graphics",
        "clocks.default_applications.mem" => "clocks.default_applications.memory",
        "retired_pages.sbe" => "retired_pages.single_bit_ecc.count",
        "retired_pages.dbe" => "retired_pages.double_bit.count",
        other => other,
    }
}

/// A row of `n` values printed under a headerless query: the right number of fields and at
/// least one of them a number, or a value whose shape pins its field (a GPU name, a bus id).
fn headless_row(l: &str, n: usize) -> bool {
    let fields: Vec<&str> = l.split(',').map(str::trim).collect();
    !l.is_empty()
        && !l.contains("--query-")
        && fields.len() == n
        && fields
            .iter()
            .any(|f| num(f).is_some() || pinned_field(f).is_some())
}

fn is_query_field(f: &str) -> bool {
    let name = f.split(" [").next().unwrap_or(f).trim();
    [
        "index",
        "name",
        "pci.bus_id",
        "uuid",
        "serial",
        "driver_version",
        "pstate",
        "temperature.gpu",
        "utilization.gpu",
        "utilization.memory",
        "memory.total",
        "memory.used",
        "memory.free",
        "power.draw",
        "power.limit",
        "enforced.power.limit",
        "power.default_limit",
        "clocks.sm",
        "clocks.gr",
        "clocks.mem",
        "clocks.max.sm",
        "clocks.max.gr",
        "clocks.max.mem",
        "pcie.link.gen.current",
        "pcie.link.gen.max",
        "pcie.link.width.current",
        "pcie.link.width.max",
        "persistence_mode",
        "compute_mode",
        "fan.speed",
        "timestamp",
        "pid",
        "process_name",
        "used_gpu_memory",
        "used_memory",
        "gpu_uuid",
        "gpu_bus_id",
        "clocks_throttle_reasons.active",
        "clocks_event_reasons.active",
        "ecc.errors.uncorrected.volatile.total",
        "ecc.errors.uncorrected.aggregate.total",
        "count",
        "vbios_version",
        "compute_cap",
        "display_mode",
        "display_active",
        "enforced.power.limit",
    ]
    .contains(&name)
        // the sections of `--help-query-gpu` whose fields all share a prefix
        || [
            "clocks.",
            "power.",
            "temperature.",
            "memory.",
            "pcie.link.",
            "pci.",
            "retired_pages.",
            "remapped_rows.",
            "reset_status.",
            "mig.mode.",
            "accounting.",
            "driver_model.",
            "gom.",
            "inforom.",
            "protected_memory.",
        ]
        .iter()
        .any(|p| name.starts_with(p))
        || name.starts_with("clocks_throttle_reasons.")
        || name.starts_with("clocks_event_reasons.")
        || name.starts_with("ecc.")
        || name.starts_with("utilization.")
}

pub fn parse_query_csv(text: &str) -> Result<SmiUsage, super::ParseError> {
    let mut u = SmiUsage {
        format: "query-csv".into(),
        ..Default::default()
    };
    // `--format=csv,noheader`: the command pasted above the rows names their fields
    let command = query_from_command(text);
    let mut header: Option<Vec<String>> = None;
    let mut shaped_one_gpu = false;
    // no header and no command: only the columns whose values' shapes pin a field are read
    if command.is_none()
        && !text
            .lines()
            .any(|l| query_header(clean(l).trim()).is_some())
        && let Some(cols) = shaped_header(text)
    {
        let first: Vec<&str> = text
            .lines()
            .map(|l| clean(l).trim())
            .find(|l| l.contains(", "))
            .map(|l| l.split(',').map(str::trim).collect())
            .unwrap_or_default();
        for (i, c) in cols.iter().enumerate() {
            if c == "?" && u.unknown_fields.len() < super::MAX_ITEMS {
                let v = first.get(i).copied().unwrap_or("");
                u.unknown_fields
                    .push(format!("column {} ({})", i + 1, super::clip(v, 40)));
            }
        }
        // nvidia-smi prints one row per GPU per probe (`-l`/`-lms` repeat the probe): with no
        // column naming the GPU (`index`, bus id, uuid, `name`) or the time, the rows cannot be
        // told apart per GPU, and they are read as samples of one
        shaped_one_gpu = !cols.iter().any(|c| {
            ["index", "pci.bus_id", "uuid", "serial", "name", "timestamp"].contains(&c.as_str())
        });
        if shaped_one_gpu && u.unknown_fields.len() < super::MAX_ITEMS {
            u.unknown_fields
                .push("the rows name no GPU and no time: read as samples of one GPU".into());
        }
        header = Some(cols);
    }
    // The rows under each header (or command): one invocation of nvidia-smi. Read first, then
    // each block's rows are told apart per GPU (see `probe_size`).
    let mut blocks: Vec<(Vec<String>, Vec<Vec<String>>)> = Vec::new();
    let mut header_seen = header.is_some();
    if let Some(h) = &header {
        blocks.push((h.clone(), Vec::new()));
    }
    let mut rows_read = 0usize;
    let last_line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !clean(l).trim().is_empty())
        .map(|(i, _)| i)
        .last();
    for (i, raw) in text.lines().enumerate() {
        let l = clean(raw).trim();
        if l.is_empty() {
            continue;
        }
        if let Some((fields, at)) = &command
            && i == *at
        {
            header_seen = true;
            blocks.push((fields.clone(), Vec::new()));
            continue;
        }
        if l.contains("--query-") {
            // a later command heads the rows under it (`--query-gpu` rows, then a
            // `--query-compute-apps` run in the same paste)
            if let Some((fields, _)) = query_from_command(l) {
                header_seen = true;
                blocks.push((fields, Vec::new()));
            }
            continue;
        }
        if let Some(names) = query_header(l) {
            header_seen = true;
            blocks.push((names, Vec::new()));
            continue;
        }
        // nvidia-smi prints its error (`No devices were found`) where the rows would be: no row
        if super::nvidia_smi_error::nvidia_smi_error_line(l).is_some() {
            continue;
        }
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        let Some((h, rows)) = blocks.last_mut() else {
            continue;
        };
        if fields.len() != h.len() {
            // a row cut off by the paste: the paste's last line, its fields shaped as the
            // row's above them (a sentence under the rows, `Any idea what is wrong?`, is no row)
            if fields.len() < h.len()
                && !fields.is_empty()
                && last_line == Some(i)
                && cut_row(&fields, rows.last())
            {
                u.truncated = true;
            }
            continue;
        }
        // a one-field header takes only the values nvidia-smi prints under it: a measure, an
        // `[N/A]`, or a value whose shape is that field's (a product name under `name`)
        if h.len() == 1
            && !measured_value(fields[0])
            && !fields[0].contains("N/A")
            && pinned_field(fields[0]) != Some(h[0].as_str())
            && !(reason_mask_field(&h[0]) && reason_mask(fields[0]).is_some())
        {
            continue;
        }
        if rows_read >= 20_000 {
            break;
        }
        rows_read += 1;
        rows.push(fields.iter().map(|f| f.to_string()).collect());
    }
    if !header_seen {
        return Err(super::ParseError::NotThisKind(
            "no nvidia-smi --query-gpu CSV header found",
        ));
    }
    // GPUs named by a field other than `index` get indexes in the order first seen
    let mut named_ids: Vec<String> = Vec::new();
    for (b, (h, rows)) in blocks.iter().enumerate() {
        let col = |k: &str| h.iter().position(|x| x == k);
        let id_col = ["pci.bus_id", "gpu_bus_id", "uuid", "gpu_uuid", "serial"]
            .iter()
            .find_map(|k| col(k));
        // the shaped block is the first one (see above)
        let k = if b == 0 && shaped_one_gpu {
            1
        } else {
            probe_size(h, rows)
        };
        for (r, fields) in rows.iter().enumerate() {
            let get = |k: &str| {
                col(k)
                    .map(|i| fields[i].as_str())
                    .filter(|v| !v.contains("N/A") && !v.contains("Not Supported") && !v.is_empty())
            };
            if compute_apps_header(h) {
                u.processes_listed = true;
                if u.processes.len() < super::MAX_ITEMS {
                    u.processes.push(UsageProcess {
                        gpu: get("index").and_then(|v| v.parse().ok()),
                        pid: get("pid").and_then(|v| v.parse().ok()),
                        kind: "C".into(),
                        name: super::clip(get("process_name").unwrap_or(""), 200),
                        memory_mib: get("used_gpu_memory").or(get("used_memory")).and_then(mib),
                        sm_pct: None,
                    });
                }
                continue;
            }
            // which GPU the row is: its `index`; else its bus id, uuid or serial; else its
            // place in the probe (nvidia-smi lists every GPU once per probe, in index order)
            let index = get("index")
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| match id_col.and_then(|i| fields.get(i)) {
                    Some(id) => match named_ids.iter().position(|x| x == id) {
                        Some(p) => p as u32,
                        None => {
                            named_ids.push(id.clone());
                            (named_ids.len() - 1) as u32
                        }
                    },
                    None => (r % k) as u32,
                });
            let yes = |v: &str| match v {
                "Yes" => Some(true),
                "No" => Some(false),
                _ => None,
            };
            let g = UsageGpu {
                index,
                name: get("name").map(|v| super::clip(v, 200)),
                bus_id: get("pci.bus_id").map(str::to_string),
                persistence: get("persistence_mode").map(|v| v == "Enabled"),
                display_active: get("display_active").map(|v| v == "Enabled"),
                temperature_c: get("temperature.gpu").and_then(num),
                temperature_err: false,
                pstate: get("pstate").map(str::to_string),
                // R535's `--help-query-gpu` (driver 535.129.03, as published in
                // XueSongTap/XueSongTap.github.io _posts/2024-01-04-nvidia-smi-more.md) adds
                // `power.draw.average` ("The last measured average power draw for the entire
                // board, in watts") and `power.draw.instant` beside `power.draw`: a query may
                // name only one of them
                power_w: get("power.draw")
                    .or(get("power.draw.average"))
                    .or(get("power.draw.instant"))
                    .and_then(num),
                power_cap_w: get("enforced.power.limit")
                    .or(get("power.limit"))
                    .and_then(num),
                memory_used_mib: get("memory.used").and_then(mib),
                memory_total_mib: get("memory.total").and_then(mib),
                util_gpu: get("utilization.gpu").and_then(num),
                util_gpu_max: get("utilization.gpu").and_then(num),
                util_mem: get("utilization.memory").and_then(num),
                compute_mode: get("compute_mode").map(str::to_string),
                sm_clock_mhz: get("clocks.current.sm")
                    .or(get("clocks.current.graphics"))
                    .and_then(num),
                mem_clock_mhz: get("clocks.current.memory").and_then(num),
                // the same help: `pcie.link.gen.current` is "Deprecated, use
                // pcie.link.gen.gpucurrent instead"; `pcie.link.gen.max` is "The maximum PCI-E
                // link generation possible with this GPU and system configuration", the lower of
                // `pcie.link.gen.gpumax` ("supported by this GPU") and `pcie.link.gen.hostmax`
                // ("supported by the root port"): with only those two, their minimum (one alone
                // is not the link's maximum)
                pcie_gen: get("pcie.link.gen.current")
                    .or(get("pcie.link.gen.gpucurrent"))
                    .and_then(num),
                pcie_gen_max: get("pcie.link.gen.max").and_then(num).or_else(|| {
                    let gpu = get("pcie.link.gen.gpumax").and_then(num)?;
                    let host = get("pcie.link.gen.hostmax").and_then(num)?;
                    Some(gpu.min(host))
                }),
                pcie_width: get("pcie.link.width.current").and_then(num),
                pcie_width_max: get("pcie.link.width.max").and_then(num),
                ecc_uncorrected: get("ecc.errors.uncorrected.volatile.total").and_then(num),
                clocks_event_reasons: {
                    let f: Vec<&str> = fields.iter().map(String::as_str).collect();
                    csv_reasons(h, &f)
                },
                sm_clock_max_mhz: get("clocks.max.sm")
                    .or(get("clocks.max.graphics"))
                    .and_then(num),
                power_default_w: get("power.default_limit").and_then(num),
                ecc_uncorrected_aggregate: get("ecc.errors.uncorrected.aggregate.total")
                    .and_then(num),
                retired_pages_pending: get("retired_pages.pending").and_then(yes),
                samples: 1,
                ..Default::default()
            };
            u.samples += 1;
            merge_sample(&mut u.gpus, g);
        }
    }
    if u.gpus.is_empty() && u.processes.is_empty() {
        // `--query-compute-apps` lists "all active compute processes" (`nvidia-smi
        // --help-query-compute-apps`), one row each: with none running it prints its header
        // alone (driver 580.159.04 on an idle H200: `pid, process_name, used_gpu_memory
        // [MiB]` and nothing under it). That is a whole, empty process list, not a cut paste.
        // A `--query-gpu` header prints one row per GPU, so alone it stays no reading.
        if blocks
            .last()
            .is_some_and(|(h, _)| compute_apps_header(h) && !u.truncated)
        {
            u.processes_listed = true;
            return Ok(u);
        }
        return Err(super::ParseError::NoRows(
            "the --query-gpu CSV has a header but no rows",
        ));
    }
    Ok(u)
}

/// How many GPUs one probe of a block lists, for rows that name no GPU (no `index`, bus id,
/// uuid or serial). nvidia-smi lists every GPU once per probe, in index order, and `-l SEC` /
/// `-lms MS` repeat the probe (`nvidia-smi -h`), each row stamped when its GPU was read: the
/// rows of one probe are milliseconds apart, probes a loop interval apart. So:
/// - a `name` column whose names repeat with a period k > 1 gives k;
/// - with a `timestamp` column, gaps that stand out (over half the largest, every other gap
///   under a tenth of it) recurring every k rows give k, and a loop with no such structure
///   spanning a second or more is one GPU sampled again and again (k = 1);
/// - otherwise the block is one probe, every row a GPU.
fn probe_size(h: &[String], rows: &[Vec<String>]) -> usize {
    let n = rows.len().max(1);
    let col = |k: &str| h.iter().position(|x| x == k);
    if let Some(c) = col("name") {
        let names: Vec<&str> = rows.iter().map(|r| r[c].as_str()).collect();
        // the smallest k with two names among the first k that the names repeat with: the
        // sequence's smallest period, which holds two names whenever it is over 1 (found in
        // linear time: a search of every k was quadratic, minutes on a long `-l 1` log)
        let k = smallest_period(&names);
        if k > 1 && k < names.len() && names.len() >= 2 * k {
            return k;
        }
    }
    let Some(c) = col("timestamp") else {
        return n;
    };
    let times: Option<Vec<f64>> = rows.iter().map(|r| row_time(&r[c])).collect();
    let Some(times) = times.filter(|t| t.len() >= 2) else {
        return n;
    };
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let largest = gaps.iter().cloned().fold(0.0_f64, f64::max);
    if largest <= 0.0 {
        return n;
    }
    let big: Vec<usize> = (0..gaps.len())
        .filter(|&i| gaps[i] > largest / 2.0)
        .collect();
    let rest_small = gaps
        .iter()
        .all(|&g| g > largest / 2.0 || g < largest / 10.0);
    if let Some(&first) = big.first() {
        let k = first + 1;
        // the period is trusted once it repeats: two whole probes or more
        if k > 1
            && rows.len() >= 2 * k
            && rest_small
            && big.iter().enumerate().all(|(j, &i)| i == (j + 1) * k - 1)
        {
            return k;
        }
    }
    let span = times.last().unwrap_or(&0.0) - times.first().unwrap_or(&0.0);
    if span >= 1.0 { 1 } else { n }
}

/// The smallest p with `s[i] == s[i + p]` wherever both exist (`s.len()` for a sequence that
/// never repeats; 0 for an empty one), from the Knuth-Morris-Pratt prefix function: the
/// longest proper prefix that is also a suffix leaves the period beside it.
fn smallest_period<T: PartialEq>(s: &[T]) -> usize {
    let n = s.len();
    if n == 0 {
        return 0;
    }
    let mut pi = vec![0usize; n];
    for i in 1..n {
        let mut j = pi[i - 1];
        while j > 0 && s[i] != s[j] {
            j = pi[j - 1];
        }
        if s[i] == s[j] {
            j += 1;
        }
        pi[i] = j;
    }
    n - pi[n - 1]
}

/// The fields of a `--query-compute-apps` query: a process's pid or name and no GPU-wide
/// reading (`nvidia-smi --help-query-compute-apps`: timestamp, gpu_name, gpu_bus_id,
/// gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory / used_memory).
fn compute_apps_header(h: &[String]) -> bool {
    h.iter().any(|x| x == "pid" || x == "process_name") && !h.iter().any(|x| x == "utilization.gpu")
}

/// Several rows for one GPU (`-l 1`): utilization becomes the mean, the rest the latest.
/// NVML's clocks event reason bits (nvmlClocksEventReasons) and their names.
const REASON_BITS: [(u64, &str); 9] = [
    (0x1, "GPU_IDLE"),
    (0x2, "APPLICATIONS_CLOCKS_SETTING"),
    (0x4, "SW_POWER_CAP"),
    (0x8, "HW_SLOWDOWN"),
    (0x10, "SYNC_BOOST"),
    (0x20, "SW_THERMAL_SLOWDOWN"),
    (0x40, "HW_THERMAL_SLOWDOWN"),
    (0x80, "HW_POWER_BRAKE_SLOWDOWN"),
    (0x100, "DISPLAY_CLOCK_SETTING"),
];

/// The bitmask fields of `--help-query-gpu`'s clocks throttle (R535 on: clocks event) reasons
/// section: `"clocks_throttle_reasons.supported"`, "Bitmask of supported clock throttle
/// reasons", and `.active`, "Bitmask of active clock throttle reasons. See nvml.h for more
/// details."
fn reason_mask_field(f: &str) -> bool {
    ["clocks_throttle_reasons.", "clocks_event_reasons."]
        .iter()
        .any(|p| {
            f.strip_prefix(p)
                .is_some_and(|r| r == "supported" || r == "active")
        })
}

/// The value nvidia-smi prints for such a bitmask: `0x` and the hex digits of a 64-bit mask
/// (`0x0000000000000004`).
fn reason_mask(v: &str) -> Option<u64> {
    let h = v
        .trim()
        .strip_prefix("0x")
        .or_else(|| v.trim().strip_prefix("0X"))?;
    (!h.is_empty() && h.len() <= 16)
        .then(|| u64::from_str_radix(h, 16).ok())
        .flatten()
}

/// The active reasons of one CSV row: `Active` in the per-reason columns
/// (`clocks_throttle_reasons.hw_slowdown`, or the newer `clocks_event_reasons.` names), else
/// the bits of the `.active` mask. `None` when the row has neither.
fn csv_reasons(header: &[String], fields: &[&str]) -> Option<Vec<String>> {
    let mut named = None::<Vec<String>>;
    let mut mask = None;
    for (k, v) in header.iter().zip(fields) {
        let Some(reason) = k
            .strip_prefix("clocks_throttle_reasons.")
            .or_else(|| k.strip_prefix("clocks_event_reasons."))
        else {
            continue;
        };
        let v = v.trim();
        match reason {
            "active" => {
                mask = u64::from_str_radix(v.trim_start_matches("0x").trim_start_matches("0X"), 16)
                    .ok()
            }
            "supported" => {}
            _ if v.eq_ignore_ascii_case("Active") => named
                .get_or_insert_with(Vec::new)
                .push(reason.to_ascii_uppercase()),
            _ if v.eq_ignore_ascii_case("Not Active") => {
                named.get_or_insert_with(Vec::new);
            }
            _ => {}
        }
    }
    named.or_else(|| {
        mask.map(|m| {
            REASON_BITS
                .iter()
                .filter(|(bit, _)| m & bit != 0)
                .map(|(_, n)| n.to_string())
                .collect()
        })
    })
}

fn merge_sample(gpus: &mut Vec<UsageGpu>, g: UsageGpu) {
    let full = gpus.len() >= super::MAX_ITEMS;
    match gpus.iter_mut().find(|x| x.index == g.index) {
        Some(x) => {
            let n = x.samples as f64;
            let mean = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => Some((a * n + b) / (n + 1.0)),
                (a, b) => a.or(b),
            };
            let util = mean(x.util_gpu, g.util_gpu);
            let umem = mean(x.util_mem, g.util_mem);
            let umax = match (x.util_gpu_max, g.util_gpu) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            let samples = x.samples + 1;
            let (work_phase, back) = work_step(x.work_phase, g.util_gpu);
            let work_resumed = x.work_resumed + usize::from(back);
            let name = x.name.take();
            let reasons = match (
                x.clocks_event_reasons.take(),
                g.clocks_event_reasons.clone(),
            ) {
                (Some(mut a), Some(b)) => {
                    for r in b {
                        if !a.contains(&r) {
                            a.push(r);
                        }
                    }
                    Some(a)
                }
                (a, b) => a.or(b),
            };
            *x = UsageGpu {
                name: g.name.clone().or(name),
                clocks_event_reasons: reasons,
                util_gpu: util,
                util_mem: umem,
                util_gpu_max: umax,
                samples,
                work_phase,
                work_resumed,
                ..g
            };
        }
        None if !full => {
            let (work_phase, _) = work_step(0, g.util_gpu);
            gpus.push(UsageGpu { work_phase, ..g })
        }
        None => {}
    }
}

// ---------------------------------------------------------------------------------------------
// dmon / pmon.

fn monitor_header(h: &str) -> Option<(bool, Vec<String>)> {
    for l in h.lines().map(clean) {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix('#') {
            let cols: Vec<String> = rest
                .split_whitespace()
                .map(str::to_ascii_lowercase)
                .collect();
            // `-o D`, `-o T`, `-o DT` put `Date` and `Time` columns before `gpu` (the rows
            // carry `20240104   13:54:35` there too, so positions still line up)
            let lead = cols
                .iter()
                .take_while(|c| *c == "date" || *c == "time")
                .count();
            if lead <= 2 && cols.get(lead).is_some_and(|c| c == "gpu") {
                let pmon = cols.iter().any(|c| c == "pid");
                // dmon's `-s` groups each add their own columns after `gpu` (`nvidia-smi dmon
                // -h`, R580): p `pwr gtemp mtemp`, u `sm mem enc dec jpg ofa`, c `mclk pclk`,
                // v `pviol tviol`, m `fb bar1 ccpm`, e `sbecc dbecc pci`, t `rxpci txpci`
                // (`temp` before R450); `-s m` alone prints `# gpu fb bar1 ccpm`
                const DMON: [&str; 23] = [
                    "pwr", "gtemp", "mtemp", "temp", "sm", "mem", "enc", "dec", "jpg", "ofa",
                    "mclk", "pclk", "pviol", "tviol", "fb", "bar1", "ccpm", "sbecc", "dbecc",
                    "pci", "rxpci", "txpci", "gpu",
                ];
                let known = cols[lead + 1..]
                    .iter()
                    .filter(|c| DMON.contains(&c.as_str()))
                    .count();
                if pmon || (known >= 2 && known * 2 > cols.len() - lead - 1) {
                    return Some((pmon, cols));
                }
            }
        }
    }
    None
}

pub fn looks_like_monitor(h: &str) -> bool {
    monitor_header(h).is_some()
}

pub fn parse_monitor(text: &str) -> Result<SmiUsage, super::ParseError> {
    let Some((pmon, cols)) = monitor_header(text) else {
        return Err(super::ParseError::NotThisKind(
            "no `# gpu ...` header of nvidia-smi dmon or pmon",
        ));
    };
    let mut u = SmiUsage {
        format: if pmon { "pmon" } else { "dmon" }.into(),
        processes_listed: pmon,
        ..Default::default()
    };
    let col = |k: &str| cols.iter().position(|c| c == k);
    for raw in text.lines() {
        let t = clean(raw).trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        // dmon -o T/D prefixes date and time columns; they are in the header too.
        if toks.len() < cols.len() {
            if toks.first().is_some_and(|x| x.parse::<u32>().is_ok()) {
                u.truncated = true;
            }
            continue;
        }
        let Some(gi) = col("gpu") else { break };
        let Ok(index) = toks[gi].parse::<u32>() else {
            continue;
        };
        let get = |k: &str| col(k).and_then(|i| toks.get(i)).and_then(|v| num(v));
        u.samples += 1;
        if pmon {
            let pid = col("pid")
                .and_then(|i| toks.get(i))
                .and_then(|v| v.parse().ok());
            let name = col("command")
                .and_then(|i| toks.get(i..))
                .map(|r| r.join(" "))
                .unwrap_or_default();
            let sm = get("sm");
            if pid.is_none() {
                merge_sample(
                    &mut u.gpus,
                    UsageGpu {
                        index,
                        samples: 1,
                        ..Default::default()
                    },
                );
                continue;
            }
            let full = u.processes.len() >= super::MAX_ITEMS;
            match u
                .processes
                .iter_mut()
                .find(|p| p.pid == pid && p.gpu == Some(index))
            {
                Some(p) => {
                    p.sm_pct = match (p.sm_pct, sm) {
                        (Some(a), Some(b)) => Some((a + b) / 2.0),
                        (a, b) => a.or(b),
                    }
                }
                None if !full => u.processes.push(UsageProcess {
                    gpu: Some(index),
                    pid,
                    kind: col("type")
                        .and_then(|i| toks.get(i))
                        .unwrap_or(&"C")
                        .to_string(),
                    name: super::clip(&name, 200),
                    memory_mib: get("fb"),
                    sm_pct: sm,
                }),
                None => {}
            }
            merge_sample(
                &mut u.gpus,
                UsageGpu {
                    index,
                    util_gpu: sm.or(Some(0.0)),
                    util_gpu_max: sm,
                    samples: 1,
                    ..Default::default()
                },
            );
        } else {
            merge_sample(
                &mut u.gpus,
                UsageGpu {
                    index,
                    power_w: get("pwr"),
                    temperature_c: get("gtemp").or(get("temp")),
                    util_gpu: get("sm"),
                    util_gpu_max: get("sm"),
                    util_mem: get("mem"),
                    sm_clock_mhz: get("pclk"),
                    mem_clock_mhz: get("mclk"),
                    memory_used_mib: get("fb"),
                    samples: 1,
                    ..Default::default()
                },
            );
        }
    }
    if u.samples == 0 {
        return Err(super::ParseError::NoRows(
            "the dmon/pmon header has no sample rows under it",
        ));
    }
    Ok(u)
}

// ---------------------------------------------------------------------------------------------
// `nvidia-smi topo -m`.

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Topology {
    pub gpus: Vec<String>,
    /// `GPU0-GPU1: NV12`, one entry per pair.
    pub links: Vec<TopoLink>,
    pub nvlink_pairs: usize,
    pub pairs: usize,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TopoLink {
    pub a: String,
    pub b: String,
    pub link: String,
}

pub fn looks_like_topo(h: &str) -> bool {
    h.contains("CPU Affinity") && h.lines().any(|l| clean(l).trim_start().starts_with("GPU0"))
        || h.contains("Legend:") && h.contains("PHB") && h.contains("PIX")
        || is_bare_topo_matrix(h)
}

/// A cell of the `topo -m` matrix between two GPUs: `X` (the GPU itself), `NV<n>` (n bonded
/// NVLinks) or one of the PCIe levels the legend names, which are NVML's
/// `nvmlGpuTopologyLevel_t` as nvidia-smi prints them (nvidia-ml-py `pynvml.py`,
/// `_nvmlGpuTopologyLevel_t`, the 13.x binding: `NVML_TOPOLOGY_SINGLE` PIX,
/// `_MULTIPLE` PXB, `_HOSTBRIDGE` PHB, `_NODE` NODE, `_SYSTEM` SYS), and `SOC`, the name
/// drivers before R384 printed for SYS ("Connection traversing PCIe as well as the SMP link
/// between CPU sockets").
fn is_topo_cell(c: &str) -> bool {
    matches!(c, "X" | "PIX" | "PXB" | "PHB" | "NODE" | "SYS" | "SOC")
        || c.strip_prefix("NV")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|d| d.is_ascii_digit()))
}

/// The `topo -m` matrix as people paste it when they cut the `CPU Affinity`/`NUMA Affinity`
/// columns and the legend away: a header of `GPU0 GPU1 ...` (consecutively numbered, at least
/// two) and under it at least two rows `GPU<i>` whose cells under those columns are all
/// matrix cells ([`is_topo_cell`]), `X` where the row meets its own column and a link
/// elsewhere. `topo -p2p` (`OK`/`NS`/`CNS` cells), `nvlink` and prose are not matrices of links.
fn is_bare_topo_matrix(h: &str) -> bool {
    let mut lines = h.lines().map(|l| clean(l).trim());
    while let Some(l) = lines.next() {
        let cols: Vec<&str> = l.split_whitespace().collect();
        let gpus = cols
            .iter()
            .enumerate()
            .take_while(|(i, c)| **c == format!("GPU{i}"))
            .count();
        if gpus < 2 {
            continue;
        }
        let mut rows = 0;
        for r in lines.by_ref() {
            let toks: Vec<&str> = r.split_whitespace().collect();
            let Some(i) = toks
                .first()
                .and_then(|t| t.strip_prefix("GPU"))
                .and_then(|n| n.parse::<usize>().ok())
            else {
                break;
            };
            let cells = toks.get(1..=gpus);
            let ok = i < gpus
                && cells.is_some_and(|cs| {
                    cs.iter().all(|c| is_topo_cell(c))
                        && cs.iter().enumerate().all(|(j, c)| (*c == "X") == (j == i))
                });
            if !ok {
                break;
            }
            rows += 1;
        }
        if rows >= 2 {
            return true;
        }
    }
    false
}

pub fn parse_topo(text: &str) -> Result<Topology, super::ParseError> {
    let mut header: Vec<String> = Vec::new();
    let mut t = Topology::default();
    for raw in text.lines() {
        let l = clean(raw);
        let toks: Vec<&str> = l.split_whitespace().collect();
        if header.is_empty() {
            if toks.first().is_some_and(|x| x.starts_with("GPU0"))
                && toks.len() >= 2
                && l.starts_with(char::is_whitespace)
            {
                header = toks
                    .iter()
                    .take_while(|x| !x.starts_with("CPU") && !x.starts_with("NUMA"))
                    .map(|s| s.to_string())
                    .collect();
            } else if toks.first().is_some_and(|x| x.starts_with("GPU0"))
                && toks.len() >= 2
                && toks[1].starts_with("GPU")
            {
                header = toks
                    .iter()
                    .take_while(|x| !x.starts_with("CPU") && !x.starts_with("NUMA"))
                    .map(|s| s.to_string())
                    .collect();
            }
            continue;
        }
        let Some(row) = toks.first() else { continue };
        if !row.starts_with("GPU") || toks.len() < 2 {
            continue;
        }
        if !t.gpus.contains(&row.to_string()) {
            t.gpus.push(row.to_string());
        }
        for (i, cell) in toks[1..].iter().enumerate() {
            let Some(col) = header.get(i) else { break };
            if !col.starts_with("GPU") || *cell == "X" || col.as_str() <= *row {
                continue;
            }
            t.pairs += 1;
            if cell.starts_with("NV") {
                t.nvlink_pairs += 1;
            }
            if t.links.len() < super::MAX_ITEMS {
                t.links.push(TopoLink {
                    a: row.to_string(),
                    b: col.clone(),
                    link: cell.to_string(),
                });
            }
        }
    }
    if header.is_empty() {
        return Err(super::ParseError::NotThisKind(
            "no `GPU0 GPU1 ...` header of nvidia-smi topo -m",
        ));
    }
    Ok(t)
}

// ---------------------------------------------------------------------------------------------
// Mapping onto the NVML reading.

fn absent<T>() -> Field<T> {
    Field::Error(NOT_IN_EVIDENCE.to_string())
}

fn opt<T>(v: Option<T>) -> Field<T> {
    v.map(Field::Ok).unwrap_or_else(absent)
}

fn to_u32(v: Option<f64>) -> Field<u32> {
    opt(v
        .filter(|x| *x >= 0.0 && *x < 1e9)
        .map(|x| x.round() as u32))
}

fn mib_to_bytes(v: Option<f64>) -> Field<u64> {
    opt(v
        .filter(|x| *x >= 0.0 && *x < 1e12)
        .map(|x| (x * 1048576.0) as u64))
}

/// A process's `Type` column (`C`, `G`, `C+G`) as the reading's kind; anything else is compute.
fn process_kind(letter: &str) -> &'static str {
    match letter {
        "G" => "graphics",
        "C+G" => "compute+graphics",
        _ => "compute",
    }
}

/// The reading's process kind as the `Type` letter a table prints (`""` for unknown).
pub fn process_type_letter(kind: &str) -> &'static str {
    match kind {
        "compute" => "C",
        "graphics" => "G",
        "compute+graphics" => "C+G",
        _ => "",
    }
}

/// What the table says in the shape of a live NVML reading; the rest is not in the evidence.
pub fn to_reading(u: &SmiUsage) -> NvmlReading {
    let gpus = u
        .gpus
        .iter()
        .map(|g| {
            let processes = if u.processes_listed && u.format != "pmon" {
                Field::Ok(
                    u.processes
                        .iter()
                        .filter(|p| p.gpu == Some(g.index) || p.gpu.is_none())
                        .filter_map(|p| {
                            Some(ProcessMem {
                                pid: p.pid?,
                                used_memory: p.memory_mib.map(|m| (m * 1048576.0) as u64),
                                kind: process_kind(&p.kind).into(),
                                name: (!p.name.is_empty()).then(|| p.name.clone()),
                            })
                        })
                        .collect(),
                )
            } else {
                absent()
            };
            GpuReading {
                index: g.index,
                name: opt(g.name.clone()),
                uuid: absent(),
                pci_bus_id: opt(g.bus_id.clone()),
                vbios: absent(),
                // the table's Persistence-M column is a desktop's default as often as a
                // server's fault; only `-q` output (which names the mode) is judged for it
                persistence: absent(),
                clock_sm: to_u32(g.sm_clock_mhz),
                clock_sm_max: to_u32(g.sm_clock_max_mhz),
                clock_graphics: to_u32(g.sm_clock_mhz),
                clock_graphics_max: to_u32(g.sm_clock_max_mhz),
                clock_mem: to_u32(g.mem_clock_mhz),
                clock_mem_max: absent(),
                app_clock_graphics: absent(),
                default_app_clock_graphics: absent(),
                app_clock_mem: absent(),
                default_app_clock_mem: absent(),
                clocks_event_reasons: opt(g.clocks_event_reasons.clone()),
                power_usage_mw: to_u32(g.power_w.map(|w| w * 1000.0)),
                power_limit_mw: to_u32(g.power_cap_w.map(|w| w * 1000.0)),
                power_default_limit_mw: to_u32(g.power_default_w.map(|w| w * 1000.0)),
                power_enforced_limit_mw: to_u32(g.power_cap_w.map(|w| w * 1000.0)),
                temperature_c: if g.temperature_err {
                    Field::Error("nvidia-smi printed `ERR!`".to_string())
                } else {
                    to_u32(g.temperature_c)
                },
                temperature_max_operating_c: absent(),
                ecc_enabled: absent(),
                ecc_pending: absent(),
                ecc_uncorrected_volatile: opt(g.ecc_uncorrected.map(|x| x as u64)),
                ecc_uncorrected_aggregate: opt(g.ecc_uncorrected_aggregate.map(|x| x as u64)),
                ecc_corrected_volatile: absent(),
                retired_pages_pending: opt(g.retired_pages_pending),
                retired_pages_count: absent(),
                remapped_rows_correctable: absent(),
                remapped_rows_uncorrectable: absent(),
                remapped_rows_pending: absent(),
                remapped_rows_failure: absent(),
                pcie_gen: to_u32(g.pcie_gen),
                pcie_width: to_u32(g.pcie_width),
                pcie_max_gen: to_u32(g.pcie_gen_max),
                pcie_max_width: to_u32(g.pcie_width_max),
                nvlinks: absent(),
                compute_mode: opt(g.compute_mode.clone()),
                mig_current: absent(),
                mig_pending: absent(),
                utilization_gpu: to_u32(g.util_gpu),
                utilization_memory: to_u32(g.util_mem),
                memory_total: mib_to_bytes(g.memory_total_mib),
                memory_used: mib_to_bytes(g.memory_used_mib),
                memory_free: match (g.memory_total_mib, g.memory_used_mib) {
                    (Some(t), Some(u)) if t >= u => mib_to_bytes(Some(t - u)),
                    _ => absent(),
                },
                pstate: opt(g.pstate.clone()),
                processes,
                utilization_gpu_samples: None,
                utilization_memory_samples: None,
                clocks_event_counters_us: None,
                pcie_lspci: None,
            }
        })
        .collect();
    NvmlReading {
        driver_version: opt(u.driver_version.clone()),
        cuda_driver_version: match u.cuda_version.as_deref().and_then(|v| {
            let mut it = v.split('.');
            let a: i32 = it.next()?.parse().ok()?;
            let b: i32 = it.next().unwrap_or("0").parse().ok()?;
            Some(a * 1000 + b.clamp(0, 99) * 10)
        }) {
            Some(v) => Field::Ok(v),
            None => absent(),
        },
        nvml_version: absent(),
        init_ms: 0.0,
        gpus,
    }
}

// ---------------------------------------------------------------------------------------------
// The registry entries.

/// Fields of [`SmiUsage`], which the table, CSV and dmon kinds yield.
const USAGE_FIELDS: &[(&str, &str)] = &[
    ("format", "table, query-csv, dmon or pmon"),
    ("driver_version", "the driver's version, where printed"),
    (
        "cuda_version",
        "the newest CUDA the driver supports, where printed",
    ),
    (
        "gpus",
        "per GPU: index, name, bus id, persistence, temperature, pstate, power and cap, memory, utilization, compute mode, clocks, PCIe link, ECC, clocks event reasons",
    ),
    ("processes_listed", "the paste has a whole process section"),
    (
        "container_check",
        "the table is a throwaway container's `docker run … nvidia-smi`: its memory names no job",
    ),
    (
        "processes",
        "per process: gpu, pid, type, name, memory, SM share (pmon)",
    ),
    ("samples", "rows read"),
    ("truncated", "the last GPU row or sample is cut short"),
    (
        "unknown_fields",
        "csv,noheader rows pasted without their command: the columns no value's shape pins (left unread)",
    ),
];

/// What a table, CSV or dmon paste says about the machine: its GPUs as an NVML reading.
pub(crate) fn usage_host(
    parsed: Result<SmiUsage, super::ParseError>,
) -> Option<Result<super::HostPart, super::ParseError>> {
    Some(parsed.map(|u| super::HostPart::Nvml(to_reading(&u))))
}

/// [`usage_host`] for a reading that may name no GPU and no process at all (the table's banner
/// alone, `--query-compute-apps` with nothing running): such a reading says nothing of the
/// machine's GPUs, and judged as a host it would be one without GPUs, so it is no host part.
fn usage_host_if_any(
    parsed: Result<SmiUsage, super::ParseError>,
) -> Option<Result<super::HostPart, super::ParseError>> {
    if parsed
        .as_ref()
        .is_ok_and(|u| u.gpus.is_empty() && u.processes.is_empty())
    {
        return None;
    }
    usage_host(parsed)
}

/// The default `nvidia-smi` table.
pub struct Table;

impl super::EvidenceKind for Table {
    fn name(&self) -> &'static str {
        "nvidia-smi-table"
    }
    fn doc(&self) -> &'static str {
        "the default nvidia-smi table: per GPU its state, power, memory and utilization, then the processes"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        USAGE_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    // before `-q` text: the table's header line holds `Driver Version` too
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_table(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_table(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        usage_host_if_any(parse_table(text))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `nvidia-smi --query-gpu=... --format=csv`.
pub struct QueryCsv;

impl super::EvidenceKind for QueryCsv {
    fn name(&self) -> &'static str {
        "nvidia-smi-csv"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi --query-gpu (or --query-compute-apps) CSV, with or without its header"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total --format=csv"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        USAGE_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_query_csv(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_query_csv(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        usage_host_if_any(parse_query_csv(text))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `nvidia-smi dmon` and `pmon` samples.
pub struct Monitor;

impl super::EvidenceKind for Monitor {
    fn name(&self) -> &'static str {
        "nvidia-smi-dmon"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi dmon or pmon samples: utilization, power, clocks (per process for pmon) over time"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi dmon -c 10"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        USAGE_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_monitor(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_monitor(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        usage_host(parse_monitor(text))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `nvidia-smi topo -m`.
pub struct Topo;

impl super::EvidenceKind for Topo {
    fn name(&self) -> &'static str {
        "nvidia-smi-topo"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi topo -m: how each pair of GPUs is connected (NVLink, PCIe switch, host bridge, socket)"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi topo -m"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("gpus", "the GPUs of the matrix"),
            (
                "links",
                "per pair: a, b and the link (NV12, PIX, PXB, PHB, NODE, SYS)",
            ),
            ("nvlink_pairs", "pairs joined by NVLink"),
            ("pairs", "pairs in the matrix"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["gpu.topology"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_topo(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_topo(text)?)
    }
    // the matrix describes the host; the topology probe reads it from the paste
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::Shown))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The period as `probe_size` first searched it, every k in turn: the reference.
    fn period_by_search(names: &[&str]) -> Option<usize> {
        (2..names.len())
            .find(|&k| {
                names[..k]
                    .iter()
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
                    > 1
                    && names.iter().enumerate().all(|(i, v)| *v == names[i % k])
            })
            .filter(|&k| names.len() >= 2 * k)
    }

    fn period_now(names: &[&str]) -> Option<usize> {
        let k = smallest_period(names);
        (k > 1 && k < names.len() && names.len() >= 2 * k).then_some(k)
    }

    proptest::proptest! {
        #[test]
        fn the_names_period_is_the_one_every_k_searched_for(
            picks in proptest::collection::vec(0usize..3, 0..40),
            period in 1usize..6,
            repeat in proptest::bool::ANY,
        ) {
            const NAMES: [&str; 3] = ["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "Tesla V100"];
            let mut names: Vec<&str> = picks.iter().map(|&i| NAMES[i]).collect();
            if repeat && !names.is_empty() {
                // a periodic sequence (a `-l 1` loop over `period` GPUs), maybe cut mid-probe
                let unit: Vec<&str> = names.iter().take(period).copied().collect();
                let len = names.len();
                names = unit.iter().cycle().take(len).copied().collect();
            }
            proptest::prop_assert_eq!(period_now(&names), period_by_search(&names), "{:?}", names);
        }
    }

    #[test]
    fn a_long_query_loop_is_read_in_linear_time() {
        // 5,000 probes of 8 GPUs of one name, one second apart: 40,000 rows took 6 s of CPU
        // (a set of the names for every candidate period, and a list search for every gap)
        let mut text =
            String::from("timestamp, name, pci.bus_id, utilization.gpu [%], memory.used [MiB]\n");
        for i in 0..5_000 {
            for g in 0..8 {
                text.push_str(&format!(
                    "2026/01/03 15:{:02}:{:02}.{:03}, NVIDIA H100 80GB HBM3, 00000000:{:02X}:00.0, {} %, 40000 MiB\n",
                    (i / 60) % 60,
                    i % 60,
                    g,
                    0x18 + g * 0x10,
                    30 + (i * 7 + g) % 40
                ));
            }
        }
        let start = std::time::Instant::now();
        let u = parse_query_csv(&text).unwrap();
        assert_eq!(u.gpus.len(), 8);
        // a debug build on a loaded machine: well under the seconds the quadratic reading took
        // in release
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    /// What a web page does to a table it shows outside `<pre>`: line breaks become spaces and
    /// runs of spaces collapse to one (CSS Text 3, §4.1.1).
    fn flattened(t: &str) -> String {
        t.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_banner_alone_names_the_driver_and_no_gpu() {
        use super::super::EvidenceKind;
        // github.com/NVIDIA-NeMo/Speech/issues/13854 (h58_smi_nemo13854_driver_line): asked for
        // the driver, the poster gave the banner's versions part alone
        let t = "Driver Version: 570.133.20     CUDA Version: 12.8\n";
        assert!(looks_like_table(t));
        let u = parse_table(t).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("570.133.20"));
        assert_eq!(u.cuda_version.as_deref(), Some("12.8"));
        assert!(u.gpus.is_empty());
        // nothing of the GPUs: no host reading (of none) is made of it
        assert!(Table.host(t).is_none());
        // the whole banner with its borders, cut from github.com/jax-ml/jax/issues/17399's table
        let b = "| NVIDIA-SMI 530.30.02              Driver Version: 530.30.02    CUDA Version: 12.1     |\n";
        assert!(looks_like_table(b));
        let u = parse_table(b).unwrap();
        assert_eq!(
            (u.driver_version.as_deref(), u.cuda_version.as_deref()),
            (Some("530.30.02"), Some("12.1"))
        );
        // before R410 the banner has no CUDA column (github.com/open-mmlab/mmdetection/issues/99)
        let old =
            "| NVIDIA-SMI 387.26                 Driver Version: 387.26                    |\n";
        let u = parse_table(old).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("387.26"));
        assert_eq!(u.cuda_version, None);
        // the same words in a sentence, or one key alone, are not the banner
        for prose in [
            "I have Driver Version: 535.54.03 and CUDA Version: 12.2 installed\n",
            "Driver Version: 570.133.20\n",
            "CUDA Version: 12.8\n",
        ] {
            assert!(!looks_like_table(prose), "{prose}");
            assert!(parse_table(prose).is_err(), "{prose}");
        }
    }

    #[test]
    fn a_table_cut_after_its_banner_still_has_gpu_rows_to_judge() {
        // the banner above GPU rows is read as before: the rows make the host reading
        // (github.com/jax-ml/jax/issues/19534, h58_smi_jax19534_a800_idle)
        use super::super::EvidenceKind;
        let t = "+---------------------------------------------------------------------------------------+\n| NVIDIA-SMI 535.54.03              Driver Version: 535.54.03    CUDA Version: 12.3     |\n|-----------------------------------------+----------------------+----------------------+\n| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n|                                         |                      |               MIG M. |\n|=========================================+======================+======================|\n|   0  NVIDIA A800-SXM4-80GB          Off | 00000000:3D:00.0 Off |                    0 |\n| N/A   29C    P0              54W / 400W |      2MiB / 81920MiB |      0%      Default |\n|                                         |                      |             Disabled |\n+-----------------------------------------+----------------------+----------------------+\n";
        let u = parse_table(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.driver_version.as_deref(), Some("535.54.03"));
        assert!(matches!(Table.host(t), Some(Ok(_))));
    }

    #[test]
    fn a_temperature_printed_err_is_an_unreadable_sensor() {
        // github.com/NVIDIA/gpu-operator/issues/559 (h53_smi_gpuop559_a40_gpu0_err): GPU 0 of
        // an A40 node reads ERR! in every field, GPU 1 is an ordinary idle A40
        let t = "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 525.125.06   Driver Version: 525.125.06   CUDA Version: 12.0     |\n|-------------------------------+----------------------+----------------------+\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n|                               |                      |               MIG M. |\n|===============================+======================+======================|\n|   0  ERR!                On   | 00000000:19:00.0 Off |                 ERR! |\n|ERR!  ERR! ERR!    ERR! / ERR! |      0MiB / 46068MiB |    ERR!      Default |\n|                               |                      |                 ERR! |\n+-------------------------------+----------------------+----------------------+\n|   1  NVIDIA A40          On   | 00000000:1A:00.0 Off |                    0 |\n|  0%   26C    P8    12W / 300W |      0MiB / 46068MiB |      0%      Default |\n|                               |                      |                  N/A |\n+-------------------------------+----------------------+----------------------+\n";
        let u = parse_table(t).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert!(u.gpus[0].temperature_err);
        assert!(!u.gpus[1].temperature_err);
        let r = to_reading(&u);
        assert_eq!(
            r.gpus[0].temperature_c,
            Field::Error("nvidia-smi printed `ERR!`".into())
        );
        assert_eq!(r.gpus[1].temperature_c, Field::Ok(26));
        // gpud's 525.125.06 capture (h35_smi_table_gpud_geforce_52512506_err_fan_eprocess):
        // only the fan reads ERR!, the temperature is read
        let t = "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n|===============================+======================+======================|\n|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |                    0 |\n|ERR!   38C    P5    49W / 450W |   2021MiB / 23028MiB |      0%   E. Process |\n";
        let u = parse_table(t).unwrap();
        assert!(!u.gpus[0].temperature_err);
        assert_eq!(to_reading(&u).gpus[0].temperature_c, Field::Ok(38));
    }

    #[test]
    fn a_table_flattened_onto_one_line_is_read_row_by_row() {
        // chegva.com/6622.html as the pages corpus stores it: an idle 8x B200 host, one line
        let t =
            include_str!("../../tests/fixtures/corpus/h51_smi_chegva_580_b200_idle_flattened.txt");
        assert_eq!(t.lines().count(), 1);
        let u = parse_table(t).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("580.95.05"));
        assert_eq!(u.cuda_version.as_deref(), Some("13.0"));
        assert_eq!(u.gpus.len(), 3);
        let g = &u.gpus[2];
        assert_eq!((g.index, g.name.as_deref()), (2, Some("NVIDIA B200")));
        assert_eq!(g.bus_id.as_deref(), Some("00000000:62:00.0"));
        assert_eq!(g.persistence, Some(true));
        assert_eq!((g.util_gpu, g.memory_used_mib), (Some(0.0), Some(0.0)));
        assert_eq!(g.memory_total_mib, Some(183359.0));
        assert_eq!(g.power_w, Some(138.0));
        assert!(!u.truncated);

        // verl#1595's table (GPUs holding 17-21 GB at 0%, the training never started), the
        // same flattening applied: read as its printed lines are
        let printed =
            include_str!("../../tests/fixtures/corpus/h2_smi_table_4090_0pct_21gb_hang.txt");
        let flat = flattened(printed);
        assert_eq!(flat.lines().count(), 1);
        let (a, b) = (parse_table(printed).unwrap(), parse_table(&flat).unwrap());
        assert_eq!(a.gpus, b.gpus);
        assert_eq!(b.gpus.len(), 2);
        assert_eq!(
            (b.gpus[0].util_gpu, b.gpus[0].memory_used_mib),
            (Some(0.0), Some(21614.0))
        );
        assert_eq!(b.driver_version.as_deref(), Some("525.125.06"));
    }

    #[test]
    fn a_table_with_its_lines_is_left_as_printed() {
        // the cnblogs table whose stored copy collapses runs of spaces but keeps line breaks
        let t = include_str!(
            "../../tests/fixtures/corpus/h29_blog_cnblogs_smi_550_4090x8_collapsed.txt"
        );
        let lines: Vec<String> = t.lines().map(str::to_string).collect();
        assert_eq!(table_lines(t), lines);
        assert!(!is_frame_rule("|"));
        assert!(!is_frame_rule("+--+"));
        assert!(is_frame_rule("|===+===|"));
    }

    #[test]
    fn table_volatile_uncorrected_ecc_column() {
        let t = "|   0  Tesla V100-SXM2...  On   | 00000000:1A:00.0 Off |                    2 |\n\
| N/A   43C    P0    61W / 300W |   3358MiB / 32510MiB |     97%      Default |\n\
|   1  GeForce GTX 108...  Off  | 00000000:01:00.0  On |                  N/A |\n\
| 31%   58C    P2    70W / 250W |   9584MiB / 11170MiB |      0%      Default |\n";
        let u = parse_table(t).unwrap();
        assert_eq!(u.gpus[0].ecc_uncorrected, Some(2.0));
        assert_eq!(u.gpus[1].ecc_uncorrected, None);
    }

    #[test]
    fn csv_throttle_reasons_by_column_and_by_mask() {
        let t = "index, clocks_throttle_reasons.active, clocks_throttle_reasons.hw_slowdown, clocks_throttle_reasons.sw_thermal_slowdown, utilization.gpu [%]\n0, 0x0000000000000008, Active, Not Active, 100 %\n";
        let u = parse_query_csv(t).unwrap();
        assert_eq!(
            u.gpus[0].clocks_event_reasons,
            Some(vec!["HW_SLOWDOWN".to_string()])
        );
        let t =
            "index, clocks_event_reasons.active, utilization.gpu [%]\n0, 0x0000000000000081, 3 %\n";
        let u = parse_query_csv(t).unwrap();
        assert_eq!(
            u.gpus[0].clocks_event_reasons,
            Some(vec![
                "GPU_IDLE".to_string(),
                "HW_POWER_BRAKE_SLOWDOWN".to_string()
            ])
        );
        let r = to_reading(&u);
        assert!(matches!(r.gpus[0].clocks_event_reasons, Field::Ok(_)));
        // no reason columns: not in the evidence
        let u = parse_query_csv("index, utilization.gpu [%]\n0, 50 %\n").unwrap();
        assert_eq!(u.gpus[0].clocks_event_reasons, None);
    }

    #[test]
    fn dmon_quoted_in_markdown_with_an_escaped_header() {
        let t = "> \\# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk\n\
> \\# Idx     W     C     %     %     %     %   MHz   MHz\n\
>     0   111    83    25     7     0     0  4513  1683\n\
>     1   111    84    18     5     0     0  4513  1733\n";
        assert!(looks_like_monitor(t));
        let u = parse_monitor(t).unwrap();
        assert_eq!(u.samples, 2);
        assert_eq!(u.gpus[1].util_gpu, Some(18.0));
    }

    const NEW_TABLE: &str = "\
Tue Mar  5 10:00:00 2024
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |
| N/A   33C    P0              92W / 400W |  20155MiB / 81920MiB |      7%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM4-80GB          On  | 00000000:0F:00.0 Off |                    0 |
| N/A   31C    P0              61W / 400W |      4MiB / 81920MiB |      0%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+

+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
|    0   N/A  N/A     41234      C   /opt/conda/bin/python                     20142MiB |
+---------------------------------------------------------------------------------------+
";

    #[test]
    fn new_table_layout_with_gi_ci_columns() {
        assert!(looks_like_table(NEW_TABLE));
        let u = parse_table(NEW_TABLE).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("535.104.05"));
        assert_eq!(u.cuda_version.as_deref(), Some("12.2"));
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[0].name.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
        assert_eq!(u.gpus[0].util_gpu, Some(7.0));
        assert_eq!(u.gpus[0].memory_used_mib, Some(20155.0));
        assert_eq!(u.gpus[0].power_cap_w, Some(400.0));
        assert_eq!(u.gpus[1].index, 1);
        assert_eq!(u.processes.len(), 1);
        assert_eq!(u.processes[0].pid, Some(41234));
        assert_eq!(u.processes[0].name, "/opt/conda/bin/python");
        assert_eq!(u.processes[0].memory_mib, Some(20142.0));
        let r = to_reading(&u);
        assert_eq!(r.cuda_driver_version, Field::Ok(12020));
        assert_eq!(r.gpus[0].utilization_gpu, Field::Ok(7));
        assert!(matches!(r.gpus[0].clocks_event_reasons, Field::Error(_)));
    }

    #[test]
    fn quoted_old_table_in_backticks_and_cut_gpu_row() {
        let t = "> `+-----------------------------------------------------------------------------+\n\
> | NVIDIA-SMI 396.45                 Driver Version: 396.45                    |\n\
> |===============================+======================+======================|\n\
> |   0  Tesla V100-SXM2...  Off  | 00000000:40:00.0 Off |                    0 |\n\
> | N/A   34C    P0    55W / 300W |   6671MiB / 16160MiB |      0%      Default |\n\
> |   1  Tesla V100-SXM2...  Off  | 00000000:41:00.0 Off |                    0 |`\n";
        let u = parse_table(t).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[0].util_gpu, Some(0.0));
        assert_eq!(u.gpus[0].persistence, Some(false));
        assert!(u.truncated);
        assert!(!u.processes_listed);
    }

    #[test]
    fn mig_instance_rows_are_not_gpus() {
        // the layout of a MIG-enabled A100 (driver 470): one GPU, two instances, one process
        let t = "|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                   On |\n\
| N/A   32C    P0    62W / 400W |  10450MiB / 40536MiB |     N/A      Default |\n\
|                               |                      |              Enabled |\n\
+-------------------------------+----------------------+----------------------+\n\
| MIG devices:                                                                |\n\
+------------------+----------------------+-----------+-----------------------+\n\
| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |\n\
|==================+======================+===========+=======================|\n\
|  0    1   0   0  |  10440MiB / 20096MiB | 42      0 |  3   0    2    0    0 |\n\
|                  |      4MiB / 32767MiB |           |                       |\n\
+------------------+----------------------+-----------+-----------------------+\n\
| Processes:                                                                  |\n\
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n\
|=============================================================================|\n\
|    0    1    0      12345      C   python                          10427MiB |\n\
+-----------------------------------------------------------------------------+\n";
        let u = parse_table(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, None);
        assert_eq!(u.gpus[0].compute_mode.as_deref(), Some("Default"));
        assert_eq!(u.processes.len(), 1);
        assert!(u.processes_listed);
    }

    #[test]
    fn headerless_rows_without_the_command_read_only_pinned_columns() {
        // public code found with the project's search tool (index id 56518037701): a GPU
        // inventory parser's test input, `--format=csv,noheader,nounits` rows of index, name,
        // bus id and memory.total, pasted without the command
        let t = "0, NVIDIA GeForce RTX 5090, 00000000:01:00.0, 32607\n1, NVIDIA GeForce RTX 3090, 00000000:21:00.0, 24576\n2, NVIDIA GeForce RTX 3090, 00000000:41:00.0, 24576\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 3);
        assert_eq!(u.gpus[1].name.as_deref(), Some("NVIDIA GeForce RTX 3090"));
        assert_eq!(u.gpus[2].bus_id.as_deref(), Some("00000000:41:00.0"));
        // `0` could be index or a count, `32607` total, used or free memory: left unread
        assert_eq!(u.gpus[0].memory_total_mib, None);
        assert_eq!(u.unknown_fields, ["column 1 (0)", "column 4 (32607)"]);
        // numbers alone pin no field: rows of bare numbers are not read as a query
        assert!(!looks_like_query_csv("35, 1200, 80\n40, 1300, 90\n"));
        // (rows whose every value carries nvidia-smi's unit are its CSV, read with every
        // column unknown: `headerless_rows_with_units_or_a_pstate_are_read_as_one_gpu`)
        // conbench/conbench#158: `--query-gpu=gpu_name` (name's second name) and its one row
        let c =
            "sh-4.2$ nvidia-smi --query-gpu=gpu_name --format=csv,noheader\nTesla T4\nsh-4.2$\n";
        assert!(looks_like_query_csv(c));
        let u = parse_query_csv(c).unwrap();
        assert_eq!(u.gpus[0].name.as_deref(), Some("Tesla T4"));
        assert!(u.unknown_fields.is_empty());
    }

    #[test]
    fn headerless_rows_with_units_or_a_pstate_are_read_as_one_gpu() {
        // PZH1gdmu/CMP40HX-Unlock#52 (driver 596.36): `--format=csv,noheader` rows of
        // clocks.sm, power.draw, temperature.gpu, utilization.gpu and pstate pasted without the
        // command. `P0`..`P12` is `pstate`'s shape (`--help-query-gpu`); the rest are one of
        // several fields each. No column names the GPU or the time: one GPU's samples.
        let t = "300 MHz, 13.74 W, 37, 0 %, P8\n780 MHz, 20.58 W, 37, 0 %, P3\n\
1470 MHz, 181.83 W, 48, 100 %, P0\n1200 MHz, 134.91 W, 49, 100 %, P0\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1, "{:?}", u.gpus);
        assert_eq!(u.gpus[0].pstate.as_deref(), Some("P0"));
        assert_eq!(u.samples, 4);
        // `100 %` may be utilization.gpu, .memory or fan.speed: nothing is taken for one
        assert_eq!(u.gpus[0].util_gpu, None);
        assert_eq!(u.gpus[0].sm_clock_mhz, None);
        assert!(
            u.unknown_fields
                .iter()
                .any(|f| f.contains("read as samples of one GPU"))
        );
        // cosmosapjw-quantum/omoknuni_small gpu_usage.log (8be6bdd): two columns, each value
        // with nvidia-smi's unit (`--format=csv,noheader` without `nounits`)
        let o = "2 %, 588 MiB\n1 %, 588 MiB\n13 %, 719 MiB\n8 %, 881 MiB\n";
        assert!(looks_like_query_csv(o));
        let u = parse_query_csv(o).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.samples, 4);
        assert_eq!(u.gpus[0].util_gpu, None);
        assert_eq!(u.gpus[0].memory_used_mib, None);
        assert_eq!(u.unknown_fields.len(), 3, "{:?}", u.unknown_fields);
        // neighbours: a sentence with the same figures, a value without the unit's space, a
        // `P` word that is no state, and rows with a word among the values are not CSV
        for prose in [
            "GPU usage 2 %, memory 588 MiB\nGPU usage 1 %, memory 588 MiB\n",
            "2%, 588MiB\n1%, 588MiB\n",
            "PS, 36 %, 1200 MiB\nPS, 37 %, 1200 MiB\n",
            "2 %, 588 MiB, idle\n1 %, 588 MiB, idle\n",
            "Ran at 1470 MHz, 181.83 W, 48, 100 %, P16\n",
        ] {
            assert!(!looks_like_query_csv(prose), "{prose}");
        }
        assert_eq!(pinned_field("P12"), Some("pstate"));
        assert_eq!(pinned_field("P16"), None);
        assert_eq!(pinned_field("P"), None);
    }

    #[test]
    fn a_bare_field_name_heads_its_unitless_values() {
        // NVIDIA/nvidia-settings#80: `nvidia-smi --query-gpu=clocks_throttle_reasons.supported
        // --format=csv` on a GTX 1080; a field with no unit prints its bare name over the value
        let t = "clocks_throttle_reasons.supported\n0x00000000000001FF\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        // the supported reasons are no active ones
        assert_eq!(u.gpus[0].clocks_event_reasons, None);
        // the same shape for `.active` names the bits nvml.h gives them (0x4: SW power cap)
        let a = parse_query_csv("clocks_event_reasons.active\n0x0000000000000004\n").unwrap();
        assert_eq!(
            a.gpus[0].clocks_event_reasons.as_deref(),
            Some(&["SW_POWER_CAP".to_string()][..])
        );
        // a unitless number under a bare dotted name (`pcie.link.gen.current` prints `4`)
        let g = parse_query_csv("pcie.link.gen.current\n4\n").unwrap();
        assert_eq!(g.gpus[0].pcie_gen, Some(4.0));
        // neighbours: a list of field names is no header with rows, a bare word is no header
        assert!(parse_query_csv("clocks.sm\nclocks.mem\n").is_err());
        assert!(query_header("index").is_none());
        assert!(query_header("utilization").is_none());
        assert!(query_header("Clocks.SM").is_none());
        // a field printed with its unit heads its values only with the unit
        assert!(query_header("memory.used").is_none());
    }

    #[test]
    fn a_mig_section_pasted_alone_is_read_without_gpus() {
        let t = "+-----------------------------------------------------------------------------+\n\
| MIG devices:                                                                |\n\
+------------------+----------------------+-----------+-----------------------+\n\
| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |\n\
|==================+======================+===========+=======================|\n\
|  0    2   0   0  |   5120MiB / 9984MiB  | 14      0 |  1   0    0    0    0 |\n\
|                  |      2MiB / 16383MiB |           |                       |\n\
+------------------+----------------------+-----------+-----------------------+\n";
        let u = parse_table(t).unwrap();
        // instance rows name GPU 0 but print no GPU reading (no utilization, power, clocks)
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].index, 0);
        assert_eq!(u.gpus[0].memory_used_mib, None);
        assert_eq!(u.gpus[0].util_gpu, None);
        assert_eq!(u.samples, 0);
        assert!(u.processes.is_empty());
        assert!(!u.processes_listed);
        assert!(looks_like_table(t));
        // a MIG header with no instance row under it is still nothing
        let empty = t.lines().take(5).collect::<Vec<_>>().join("\n");
        assert!(parse_table(&empty).is_err());
    }

    #[test]
    fn a_paste_of_the_process_rows_alone_is_a_table() {
        let t = "+-----------------------------------------------------------------------------+\n\
| Processes:                                                       GPU Memory |\n\
|  GPU       PID   Type   Process name                             Usage      |\n\
|=============================================================================|\n\
|    2     40411      C   python train.py                             9120MiB |\n\
|    3     40412      C   python train.py                             9120MiB |\n\
+-----------------------------------------------------------------------------+\n";
        assert!(looks_like_table(t));
        let u = parse_table(t).unwrap();
        assert_eq!(u.processes.len(), 2);
        assert!(u.processes_listed);
        // GPUs 2 and 3 are named, none of their readings is in the paste
        let idx: Vec<u32> = u.gpus.iter().map(|g| g.index).collect();
        assert_eq!(idx, vec![2, 3]);
        assert!(
            u.gpus
                .iter()
                .all(|g| g.util_gpu.is_none() && g.persistence.is_none())
        );
        // -q text with a Processes section is not a table
        assert!(!looks_like_table(
            "    Processes                         : None\n"
        ));
    }

    #[test]
    fn a_process_section_cut_before_its_border_lists_nothing_for_sure() {
        let gpu = "|   0  GeForce RTX 3090    Off  | 00000000:01:00.0 Off |                  N/A |\n\
| 32%   32C    P8    23W / 350W |  23081MiB / 24245MiB |      0%      Default |\n\
+-------------------------------+----------------------+----------------------+\n\
+-----------------------------------------------------------------------------+\n\
| Processes:                                                                  |\n\
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n\
|        ID   ID                                                   Usage      |\n";
        // cut inside the header: the paste does not say which processes run
        let u = parse_table(gpu).unwrap();
        assert!(!u.processes_listed);
        // cut after a row: that row counts, the others are still unknown
        let row = format!(
            "{gpu}|=============================================================================|\n\
|    0   N/A  N/A      1234      C   python                          23000MiB |\n"
        );
        let u = parse_table(&row).unwrap();
        assert!(!u.processes_listed);
        assert_eq!(u.processes.len(), 1);
        // the closing border, or \"No running processes found\", makes the list whole
        for end in [
            "+-----------------------------------------------------------------------------+\n",
            "",
        ] {
            let whole = format!("{row}{end}");
            assert_eq!(
                parse_table(&whole).unwrap().processes_listed,
                !end.is_empty()
            );
        }
        let none = format!(
            "{gpu}|=============================================================================|\n\
|  No running processes found                                                 |\n"
        );
        assert!(parse_table(&none).unwrap().processes_listed);
    }

    #[test]
    fn query_csv_command_in_inline_code_and_a_second_command() {
        // github.com/mostlygeek/llama-swap/issues/782 (healthy: a GB10, whose unified memory
        // nvidia-smi reports as [N/A]): the first command is markdown inline code in a sentence,
        // the second heads a `--query-compute-apps` row of the same paste
        let t = "Observed behavior:\n`nvidia-smi --query-gpu=memory.used,memory.total,utilization.memory` reports:\n\n```text\n[N/A], [N/A], 0\n```\n\nBut the process list still reports GPU memory usage, for example:\n\n```text\nnvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits\nGPU-..., 114687, /usr/local/bin/python, 19135\n```\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].memory_used_mib, None);
        assert_eq!(u.gpus[0].util_mem, Some(0.0));
        assert_eq!(u.gpus[0].util_gpu, None);
        assert_eq!(u.processes.len(), 1);
        assert_eq!(u.processes[0].pid, Some(114687));
        assert_eq!(u.processes[0].memory_mib, Some(19135.0));
        // github.com/pytorch/pytorch/issues/163658 (the problem side: no device): the query's
        // answer is nvidia-smi's error, no row of the query, so no CSV is read from it
        let e = "nvidia-smi --query-gpu=driver_version --format=csv,noheader --id=0\nNo devices were found\n";
        assert!(parse_query_csv(e).is_err());
    }

    #[test]
    fn query_csv_with_units_and_several_samples() {
        let t = "index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n\
0, NVIDIA GeForce RTX 3090, 12 %, 10240 MiB, 24576 MiB\n\
0, NVIDIA GeForce RTX 3090, 4 %, 10240 MiB, 24576 MiB\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, Some(8.0));
        assert_eq!(u.gpus[0].util_gpu_max, Some(12.0));
        assert_eq!(u.samples, 2);
    }

    #[test]
    fn query_csv_r535_power_and_pcie_field_names() {
        // the field names of R535's `--help-query-gpu` (driver 535.129.03, published in
        // XueSongTap/XueSongTap.github.io _posts/2024-01-04-nvidia-smi-more.md), header as
        // nvidia-smi prints it with units; a query naming only the newer fields
        let h = "index, power.draw.instant [W], power.draw.average [W], pcie.link.gen.gpucurrent, pcie.link.gen.gpumax, pcie.link.gen.hostmax\n";
        // a link trained at its maximum (healthy) and one trained down to Gen1
        let t = format!("{h}0, 61.32 W, 60.87 W, 4, 4, 4\n1, 59.10 W, 58.75 W, 1, 4, 4\n");
        let u = parse_query_csv(&t).unwrap();
        // the average (what `power.draw` returns on Ampere and newer) before the instant
        assert_eq!(u.gpus[0].power_w, Some(60.87));
        assert_eq!(
            (u.gpus[0].pcie_gen, u.gpus[0].pcie_gen_max),
            (Some(4.0), Some(4.0))
        );
        assert_eq!(
            (u.gpus[1].pcie_gen, u.gpus[1].pcie_gen_max),
            (Some(1.0), Some(4.0))
        );
        // the link's maximum is the lower of the GPU's and the root port's (`pcie.link.gen.max`:
        // "if the GPU supports a higher PCIe generation than the system supports then this
        // reports the system PCIe generation")
        let t = format!("{h}0, 80 W, 80 W, 4, 5, 4\n");
        assert_eq!(parse_query_csv(&t).unwrap().gpus[0].pcie_gen_max, Some(4.0));
        // the GPU's maximum alone is not the link's
        let t = "index, pcie.link.gen.gpucurrent, pcie.link.gen.gpumax\n0, 4, 5\n";
        let g = &parse_query_csv(t).unwrap().gpus[0];
        assert_eq!((g.pcie_gen, g.pcie_gen_max), (Some(4.0), None));
        // `power.draw` and `pcie.link.gen.max`, where given, stay the ones read
        let t = "index, power.draw [W], power.draw.instant [W], pcie.link.gen.current, pcie.link.gen.max, pcie.link.gen.gpumax\n0, 52.12 W, 70.00 W, 3, 3, 4\n";
        let g = &parse_query_csv(t).unwrap().gpus[0];
        assert_eq!((g.power_w, g.pcie_gen_max), (Some(52.12), Some(3.0)));
    }

    #[test]
    fn compute_apps_header_alone_is_an_empty_process_list() {
        // captured on the project's idle H200 (driver 580.159.04, 2026-12-05):
        // `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` prints
        // its header (used_memory named used_gpu_memory) and no row: no compute process runs
        let t = "pid, process_name, used_gpu_memory [MiB]\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert!(u.processes_listed);
        assert!(u.processes.is_empty() && u.gpus.is_empty());
        // the same query with a process, in the gpu_uuid form a public notes file of an 8x H200
        // host prints it (found with the code search)
        let t = "gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n\
GPU-28780eb0-24d5-1f13-59b8-ae5c23617a72, 1328667, /usr/local/bin/python3.10, 130004 MiB\n";
        let u = parse_query_csv(t).unwrap();
        assert!(u.processes_listed);
        assert_eq!(u.processes.len(), 1);
        assert_eq!(u.processes[0].pid, Some(1328667));
        assert_eq!(u.processes[0].memory_mib, Some(130004.0));
        // a --query-gpu header prints one row per GPU: alone it is no reading
        assert!(parse_query_csv("index, name, utilization.gpu [%]\n").is_err());
    }

    #[test]
    fn headerless_query_csv_takes_its_fields_from_the_command() {
        let t = "$ nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits\n\
0, NVIDIA L4, 7, 20100, 23034\n\
1, NVIDIA L4, 0, 20100, 23034\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[0].util_gpu, Some(7.0));
        assert_eq!(u.gpus[1].memory_used_mib, Some(20100.0));
        assert_eq!(u.gpus[1].memory_total_mib, Some(23034.0));
        // with units, and the command's list quoted
        let q = "nvidia-smi --query-gpu=\"utilization.gpu,memory.used\" --format=csv,noheader\n35 %, 1200 MiB\n";
        assert_eq!(parse_query_csv(q).unwrap().gpus[0].util_gpu, Some(35.0));
        // the command alone, or followed by prose, is no CSV
        assert!(!looks_like_query_csv(
            "run nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader to see it\n"
        ));
        assert!(!looks_like_query_csv(
            "nvidia-smi --query-gpu=index,name --format=csv,noheader\nit printed nothing\n"
        ));
        // a field list with something that is no query field is not trusted
        assert!(query_from_command("nvidia-smi --query-gpu=index,bogus --format=csv").is_none());
    }

    #[test]
    fn dmon_with_date_and_time_columns() {
        // `nvidia-smi dmon -i 0 -s mutc -d 1 -o TD` as published in
        // github.com/XueSongTap/XueSongTap.github.io (c2fc96a) _posts/2024-01-04-nvidia-smi-more.md:
        // an idle desktop GPU (sm 0-13%), trailing spaces and the blank line kept
        let t = "#Date       Time        gpu     fb   bar1   ccpm     sm    mem    enc    dec    jpg    ofa  rxpci  txpci   mclk   pclk \n\
#YYYYMMDD   HH:MM:SS    Idx     MB     MB     MB      %      %      %      %      %      %   MB/s   MB/s    MHz    MHz \n\
 20240104   13:54:35      0    239      3      0      6      1      0      0      0      0      5     10   6250   1695 \n\
\n\
 20240104   13:54:36      0     74     10      0      0      0      0      0      0      0    217    677   6250   1695 \n\
 20240104   13:54:38      0    478      6      0     13      0      0      0      0      0     44     30   6250   1695 \n";
        assert!(looks_like_monitor(t));
        let u = parse_monitor(t).unwrap();
        assert_eq!((u.format.as_str(), u.samples), ("dmon", 3));
        let g = &u.gpus[0];
        assert_eq!(g.index, 0);
        assert_eq!(g.util_gpu_max, Some(13.0));
        assert_eq!(g.sm_clock_mhz, Some(1695.0));
        // `-o T` alone: one leading column
        let t = "#Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n 10:00:01      0     85     45     50      4      1      0      0   1593    1410\n";
        assert_eq!(parse_monitor(t).unwrap().gpus[0].util_gpu, Some(4.0));
        // a `#Date` line of something else is no header
        assert!(!looks_like_monitor("#Date Time gpu_name\n"));
    }

    #[test]
    fn dmon_samples_average_per_gpu() {
        let t = "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n\
# Idx      W      C      C      %      %      %      %    MHz    MHz\n\
    0     70     36     43     10      2      0      0   2619   1980\n\
    1     71     37     44     90     30      0      0   2619   1980\n\
    0     70     36     43     30      2      0      0   2619   1980\n\
    1     71";
        let u = parse_monitor(t).unwrap();
        assert_eq!(u.format, "dmon");
        assert_eq!(u.gpus[0].util_gpu, Some(20.0));
        assert_eq!(u.gpus[1].util_gpu, Some(90.0));
        assert!(u.truncated);
    }

    /// dmon's rows are a time series of each GPU: work that comes back after a sample at 0 %
    /// is counted, work that only starts or only stops inside the window is not.
    #[test]
    fn dmon_counts_work_that_comes_back_after_an_idle_sample() {
        use crate::test_corpus as corpus;
        let resumed = |name: &str| parse_monitor(&corpus(name)).unwrap().gpus[0].work_resumed;
        // our H200 during a num_workers=0 job: sm 0, 47, 0, 47, 0
        assert_eq!(resumed("h200_smi_dmon_starved.txt"), 1);
        // mini-llms-playground's L4 at batch 1: work, 7 %, 0, 0, 0, work
        assert_eq!(resumed("h122_dmon_minillms_l4_bs1_bursty_idle_gaps.txt"), 1);
        // healthy, idle, all-zero and a series that falls to 4-8 % at its end: no return
        for healthy in [
            "h200_smi_dmon_healthy.txt",
            "h200_smi_dmon_idle.txt",
            "h14_dmon_su_idle_zeros_telegraf.txt",
            "h64_dmon_fullbot_s_u_jpg_ofa.txt",
            "h112_dmon_mybiome_su_jpg_ofa_dash_rows.txt",
            "dmon_idle_header.txt",
        ] {
            assert_eq!(resumed(healthy), 0, "{healthy}");
        }
        let head = "# gpu     sm    mem    enc    dec\n# Idx      %      %      %      %\n";
        let series = |sm: &[u32]| {
            let rows: String = sm
                .iter()
                .map(|x| format!("    0  {x:>5}      1      0      0\n"))
                .collect();
            parse_monitor(&format!("{head}{rows}")).unwrap().gpus[0].work_resumed
        };
        // a job that starts, or ends, inside the window
        assert_eq!(series(&[0, 0, 0, 60, 70]), 0);
        assert_eq!(series(&[60, 70, 0, 0, 0]), 0);
        // a desktop's noise between samples of nothing is no work
        assert_eq!(series(&[0, 3, 0, 5, 0, 2, 0]), 0);
        // two gaps, two returns; a dip that never reaches 0 is no gap
        assert_eq!(series(&[50, 0, 50, 0, 0, 40]), 2);
        assert_eq!(series(&[50, 4, 50, 8, 40]), 0);
        // each GPU its own series
        let two = format!(
            "{head}    0     50      1      0      0\n    1      0      0      0      0\n    0      0      1      0      0\n    1     50      0      0      0\n    0     50      1      0      0\n"
        );
        let u = parse_monitor(&two).unwrap();
        assert_eq!((u.gpus[0].work_resumed, u.gpus[1].work_resumed), (1, 0));
        // a --query-gpu loop is a series too
        let csv = "index, utilization.gpu [%]\n0, 40 %\n0, 0 %\n0, 45 %\n";
        assert_eq!(parse_query_csv(csv).unwrap().gpus[0].work_resumed, 1);
    }

    #[test]
    fn pmon_lists_processes() {
        let t = "# gpu        pid  type    sm   mem   enc   dec   command\n\
# Idx          #   C/G     %     %     %     %   name\n\
    0      23456     C     3     1     -     -   python\n\
    1          -     -     -     -     -     -   -\n";
        let u = parse_monitor(t).unwrap();
        assert_eq!(u.format, "pmon");
        assert_eq!(u.processes.len(), 1);
        assert_eq!(u.processes[0].name, "python");
        assert_eq!(u.processes[0].sm_pct, Some(3.0));
    }

    #[test]
    fn topo_matrix() {
        let t = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n\
GPU0\t X \tNV12\tSYS\t0-31\t0\n\
GPU1\tNV12\t X \tPHB\t0-31\t0\n\
GPU2\tSYS\tPHB\t X \t32-63\t1\n\n\
Legend:\n  X    = Self\n";
        assert!(looks_like_topo(t));
        let topo = parse_topo(t).unwrap();
        assert_eq!(topo.pairs, 3);
        assert_eq!(topo.nvlink_pairs, 1);
    }

    #[test]
    fn a_sentence_under_query_rows_is_no_cut_row() {
        // made on the H100 (corpus h100d_smi_query_loop_starved.csv), pasted as an issue body
        // pastes it: a question above, a sentence under the rows
        let rows = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/h100d_smi_query_loop_starved.csv"),
        )
        .expect("corpus text");
        for under in [
            "Any idea what is wrong? Thanks!",
            "Thanks",
            "thanks, any help is appreciated",
            "NVIDIA support said to update, but nothing changed",
        ] {
            let t = format!("Hi, I get this when training:\n\n{rows}\n{under}\n");
            let u = parse_query_csv(&t).unwrap();
            assert!(!u.truncated, "{under}");
            assert_eq!(u.gpus[0].samples, 6, "{under}");
        }
        // the paste's last row cut inside a field, or after its first fields
        for cut in [
            "2026/12/06 16:14:29.926, NVIDIA H100 80GB HBM3, 5",
            "2026/12/06 16:14:29.926, NVIDIA H1",
            "2026/12/06 16:14:29.926",
        ] {
            let u = parse_query_csv(&format!("{rows}{cut}\n")).unwrap();
            assert!(u.truncated, "{cut}");
        }
        // a shorter line in the middle of the rows is not where the paste ends
        let mid = rows.replacen(
            "\n2026/12/06 16:14:25",
            "\n2026/12/06 16:14:24.950, NVIDIA\n2026/12/06 16:14:25",
            1,
        );
        assert!(!parse_query_csv(&mid).unwrap().truncated);
        // no row above: a cut first row holds a figure
        assert!(cut_row(&["0", "5"], None));
        assert!(!cut_row(&["see above"], None));
    }

    #[test]
    fn a_topo_matrix_without_its_affinity_columns_and_legend_is_read() {
        // forum.level1techs.com/t/gpu-gpu-expected-bandwidth/185531: two RTX 3070 Ti, the
        // poster's topo -m "edited slightly" (tabs, only the PHB legend line left)
        let phb = "\tGPU0\tGPU1\t\nGPU0\t X \tPHB\t\nGPU1\tPHB\t X \t\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n";
        assert!(looks_like_topo(phb));
        let t = parse_topo(phb).unwrap();
        assert_eq!((t.pairs, t.nvlink_pairs), (1, 0));
        assert_eq!(t.links[0].link, "PHB");
        // cortwave.github.io/posts/multi-gpu: 4x RTX 4090 on two sockets, spaces, no legend
        let sys = "$ nvidia-smi topo -m\n        GPU0    GPU1    GPU2    GPU3\nGPU0     X      PHB     SYS     SYS\nGPU1    PHB      X      SYS     SYS\nGPU2    SYS     SYS      X      PHB\nGPU3    SYS     SYS     PHB      X\n";
        assert!(looks_like_topo(sys));
        let t = parse_topo(sys).unwrap();
        assert_eq!(t.pairs, 6);
        assert_eq!(t.links.iter().filter(|l| l.link == "SYS").count(), 4);
        // an NVLink pair, as the legend-less matrix of two NVLinked cards prints it
        assert!(looks_like_topo(
            "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n"
        ));
    }

    #[test]
    fn process_rows_pasted_without_their_header_are_read() {
        // discuss.pytorch.org/t/66080: three rows of the pre-R470 process section, the middle
        // one made bold by the poster (process 8539 on GPU 2 and GPU 3)
        let t = "|    2      8538      C   /usr/bin/python3                            8025MiB |\n**|    2      8539      C   /usr/bin/python3                            1369MiB |**\n|    3      8539      C   /usr/bin/python3                            8037MiB |\n";
        assert!(looks_like_table(t));
        let u = parse_table(t).unwrap();
        assert_eq!(u.processes.len(), 3);
        assert_eq!(u.processes[1].pid, Some(8539));
        assert_eq!(u.processes[1].gpu, Some(2));
        assert_eq!(u.processes[1].memory_mib, Some(1369.0));
        assert!(!u.processes_listed);
        assert_eq!(
            u.gpus.iter().map(|g| g.index).collect::<Vec<_>>(),
            vec![2, 3]
        );
        // R470 on: GI and CI columns (stackoverflow.com/questions/70074789)
        let gi = "|    0   N/A  N/A      1047      G   /usr/lib/xorg/Xorg                168MiB |\n|    0   N/A  N/A      5521      G   /usr/lib/xorg/Xorg                363MiB |\n";
        assert!(looks_like_table(gi));
        assert_eq!(parse_table(gi).unwrap().processes[1].pid, Some(5521));
        // one row, a GPU row (several cells), and a framed sentence are not process rows
        assert!(!looks_like_table(
            "|    2      8538      C   /usr/bin/python3                            8025MiB |\n"
        ));
        assert!(
            bare_process_row(
                "| N/A   40C    P0    55W / 250W |  31194MiB / 32480MiB |     44%      Default |"
            )
            .is_none()
        );
        assert!(bare_process_row("| see the 2 C rows above, 300MiB |").is_none());
    }

    #[test]
    fn matrices_that_are_not_topo_links_are_not_claimed() {
        // topo -p2p r: OK/NS cells
        assert!(!is_bare_topo_matrix(
            " \tGPU0\tGPU1\n GPU0\tX\tOK\n GPU1\tOK\tX\n"
        ));
        // one row only, a diagonal that is not X, a word that is no link
        assert!(!is_bare_topo_matrix("GPU0 GPU1\nGPU0 X PHB\n"));
        assert!(!is_bare_topo_matrix(
            "GPU0 GPU1\nGPU0 PHB PHB\nGPU1 PHB X\n"
        ));
        assert!(!is_bare_topo_matrix(
            "GPU0 GPU1\nGPU0 X fast\nGPU1 fast X\n"
        ));
        // prose naming GPUs
        assert!(!is_bare_topo_matrix(
            "GPU0 and GPU1 are slow\nGPU0 is at 100%\nGPU1 is at 0%\n"
        ));
    }

    #[test]
    fn non_tables_are_errors() {
        assert!(parse_table("hello").is_err());
        assert!(parse_query_csv("a,b\n1,2").is_err());
        assert!(parse_monitor("# nothing").is_err());
        assert!(parse_topo("x").is_err());
    }
    #[test]
    fn a_gb10_row_without_memory_figures_is_still_read() {
        // NVIDIA/k8s-device-plugin#1482: driver 580.95.05 on a DGX Spark, the GB10's memory is
        // the system's, `Not Supported` in the Memory-Usage cell and no power cap (`N/A`)
        let t = "+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |\n+-----------------------------------------+------------------------+----------------------+\n| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n|                                         |                        |               MIG M. |\n|=========================================+========================+======================|\n|   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |\n| N/A   40C    P8              4W /  N/A  | Not Supported          |      0%      Default |\n|                                         |                        |                  N/A |\n+-----------------------------------------+------------------------+----------------------+\n";
        let u = parse_table(t).unwrap();
        assert!(!u.truncated);
        assert_eq!(u.gpus.len(), 1);
        let g = &u.gpus[0];
        assert_eq!(g.name.as_deref(), Some("NVIDIA GB10"));
        assert_eq!(
            (g.temperature_c, g.pstate.as_deref()),
            (Some(40.0), Some("P8"))
        );
        assert_eq!((g.power_w, g.power_cap_w), (Some(4.0), None));
        assert_eq!((g.memory_used_mib, g.memory_total_mib), (None, None));
        assert_eq!(g.util_gpu, Some(0.0));
        assert_eq!(g.compute_mode.as_deref(), Some("Default"));
        // the header's own row and a blank third line are still not a GPU's second line
        assert!(gpu_row_2(&cells("| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |")).is_none());
        assert!(gpu_row_2(&cells("|                                         |                        |                  N/A |")).is_none());
        assert!(gpu_row_2(&cells("| N/A   N/A   N/A              N/A /  N/A | N/A                    |      N/A     Default |")).is_none());
    }

    #[test]
    fn r610_table_header_names_kmd_and_cuda_umd_versions() {
        // sgl-project/sglang#27487 (R610 header: `KMD Version` / `CUDA UMD Version`)
        let r610 = "+-----------------------------------------------------------------------------------------+\n\
| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n\
+-----------------------------------------+------------------------+----------------------+\n\
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n\
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n\
|                                         |                        |               MIG M. |\n\
|=========================================+========================+======================|\n\
|   0  NVIDIA B200                    On  |   00000000:63:00.0 Off |                    0 |\n\
| N/A   26C    P0            139W / 1000W |       0MiB / 183359MiB |      0%      Default |\n\
|                                         |                        |             Disabled |\n";
        assert!(looks_like_table(r610));
        let u = parse_table(r610).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("610.43.02"));
        assert_eq!(u.cuda_version.as_deref(), Some("13.3"));
        assert_eq!(u.gpus.len(), 1);
        // NVIDIA/k8s-test-infra#371's older header still reads as before (580, `Driver Version`)
        let r580 = "| NVIDIA-SMI 580.126.09             Driver Version: 580.126.09     CUDA Version: 13.0     |\n\
|   0  NVIDIA A100-SXM4-40GB          On  |   00000000:10:1C.0 Off |                    0 |\n\
| N/A   41C    P0             67W /  400W |     598MiB /  40960MiB |     11%   E. Process |\n";
        let u = parse_table(r580).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("580.126.09"));
        assert_eq!(u.cuda_version.as_deref(), Some("13.0"));
    }

    // --- h64: `--query-gpu` loops and headers as nvidia-smi prints them (`nvidia-smi
    // --help-query-gpu`, `nvidia-smi -h` for -l / -lms) ---

    #[test]
    fn one_field_header_over_every_sample_is_one_gpu_looped() {
        // github.com/Unshapendwarf/SlowFast/blob/f91a2bcb0842c71f1e2ab007754f5fc8922ab381/gpu_utilization.csv:
        // a script calls `--query-gpu=utilization.gpu --format=csv` per sample, so the one-field
        // header precedes each value (healthy: a training run at 85-100%)
        let t =
            "utilization.gpu [%]\n85 %\nutilization.gpu [%]\n100 %\nutilization.gpu [%]\n94 %\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.samples, 3);
        assert!((u.gpus[0].util_gpu.unwrap() - 93.0).abs() < 0.01);
        // a bare word alone, or a field with no unit, is no header
        assert!(query_header("utilization.gpu").is_none());
        assert!(query_header("index").is_none());
        assert!(query_header("name").is_none());
        // prose under a one-field header is not a value
        let p = "utilization.gpu [%]\nthe GPU is busy\n";
        assert!(parse_query_csv(p).is_err());
    }

    #[test]
    fn timestamped_loop_without_index_is_one_gpu_sampled() {
        // github.com/eobo0530/vlm_optimization/blob/a35a64748f43570caaed56e85e5e607c90233977/gpu_log.csv
        // (healthy, an RTX 4090 busy after the model loads): `-l 1` rows with a name, no index
        let t = "timestamp, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], power.draw [W]\n\
2026/01/03 15:36:53.507, NVIDIA GeForce RTX 4090, 1 %, 2 %, 1129 MiB, 33.09 W\n\
2026/01/03 15:36:54.512, NVIDIA GeForce RTX 4090, 0 %, 2 %, 1123 MiB, 33.14 W\n\
2026/01/03 15:36:59.525, NVIDIA GeForce RTX 4090, 65 %, 25 %, 18141 MiB, 130.55 W\n\
2026/01/03 15:37:00.527, NVIDIA GeForce RTX 4090, 86 %, 83 %, 17902 MiB, 250.07 W\n";
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1, "{:?}", u.gpus);
        assert_eq!(u.gpus[0].samples, 4);
        assert_eq!(u.gpus[0].memory_used_mib, Some(17902.0));
        // github.com/PranavDani/Flame/blob/d517472bb6c99b9098c993bf230429e5224d5b39/nvidia-smi.csv:
        // `-lms 50`, rows 50 ms apart, one GPU
        let f = "timestamp, power.draw [W]\n\
2024/10/30 18:42:33.189, 22.89 W\n2024/10/30 18:42:33.239, 22.73 W\n\
2024/10/30 18:42:33.290, 22.73 W\n2024/10/30 18:42:33.340, 23.00 W\n\
2024/10/30 18:42:33.390, 23.00 W\n2024/10/30 18:42:33.441, 23.00 W\n\
2024/10/30 18:42:33.491, 23.00 W\n2024/10/30 18:42:33.541, 22.67 W\n\
2024/10/30 18:42:33.592, 22.67 W\n2024/10/30 18:42:33.642, 22.60 W\n\
2024/10/30 18:42:33.692, 22.60 W\n2024/10/30 18:42:33.743, 22.47 W\n\
2024/10/30 18:42:33.793, 22.47 W\n2024/10/30 18:42:33.844, 22.43 W\n\
2024/10/30 18:42:33.894, 22.43 W\n2024/10/30 18:42:33.944, 22.50 W\n\
2024/10/30 18:42:33.995, 22.50 W\n2024/10/30 18:42:34.045, 22.51 W\n\
2024/10/30 18:42:34.095, 22.51 W\n2024/10/30 18:42:34.146, 22.51 W\n\
2024/10/30 18:42:34.196, 22.51 W\n2024/10/30 18:42:34.247, 22.51 W\n";
        let u = parse_query_csv(f).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].samples, 22);
        assert_eq!(u.gpus[0].power_w, Some(22.51));
    }

    #[test]
    fn timestamped_loop_of_several_gpus_is_cut_into_probes() {
        // github.com/dst915/llama.cpp/blob/13f53bb12b263ed7a882d1876c0ed517b545983b/gpu_stats.csv:
        // `noheader,nounits` rows of four GPUs per probe, a probe a second; the timestamp's
        // shape pins its column, the other two are left unread (not judgeable)
        let t = "2025/09/08 14:14:37.120, 0, 11409\n2025/09/08 14:14:37.121, 0, 10851\n\
2025/09/08 14:14:37.122, 0, 10911\n2025/09/08 14:14:37.122, 0, 13325\n\
2025/09/08 14:14:38.123, 0, 11409\n2025/09/08 14:14:38.124, 0, 10851\n\
2025/09/08 14:14:38.124, 0, 10911\n2025/09/08 14:14:38.124, 0, 13325\n";
        assert!(looks_like_query_csv(t));
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 4);
        assert!(
            u.gpus
                .iter()
                .all(|g| g.samples == 2 && g.util_gpu.is_none())
        );
        assert_eq!(u.unknown_fields.len(), 2);
        // a snapshot of identical GPUs with no index or timestamp stays one row per GPU
        let s =
            "name, memory.used [MiB]\nNVIDIA H100 80GB HBM3, 1 MiB\nNVIDIA H100 80GB HBM3, 1 MiB\n";
        assert_eq!(parse_query_csv(s).unwrap().gpus.len(), 2);
        // nvidia-smi's timestamp shape, and nothing else, pins the field
        assert_eq!(pinned_field("2024/01/16 14:44:16.977"), Some("timestamp"));
        assert_eq!(pinned_field("03-11-2026 15:13:16"), None);
        assert_eq!(pinned_field("14:14:37"), None);
    }

    #[test]
    fn bus_id_tells_gpus_apart_across_an_elided_paste() {
        // github.com/stas00/ml-engineering/blob/744d01e18b79512572f64a6bbd8b5f4a725203a7/compute/accelerator/nvidia/debug.md
        // (healthy inventory): rows elided as `[...]`, the GPUs told apart by `pci.bus_id`
        let t = "$ nvidia-smi --query-gpu=gpu_name,gpu_bus_id,vbios_version --format=csv\n\
name, pci.bus_id, vbios_version\n\
NVIDIA H100 80GB HBM3, 00000000:04:00.0, 96.00.89.00.01\n[...]\n\
NVIDIA H100 80GB HBM3, 00000000:8B:00.0, 96.00.89.00.01\n";
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[1].bus_id.as_deref(), Some("00000000:8B:00.0"));
    }

    #[test]
    fn own_header_with_epoch_seconds_is_one_gpu_looped() {
        // github.com/RCKola/Rectified-Point-Flow/blob/076d3d9952609239fcdc0c5bb3dd5100ea0b56a3/gpu_usage.csv:
        // a script's header with nvidia-smi's field names over `date +%s` and nounits values
        // (healthy: a training run at 26-96%)
        let t = "timestamp,memory.used,memory.total,utilization.gpu\n\
1764189255,10544, 24576, 93\n1764189315,10546, 24576, 46\n1764189375,10546, 24576, 56\n";
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].samples, 3);
        assert_eq!(u.gpus[0].memory_total_mib, Some(24576.0));
    }

    #[test]
    fn power_default_limit_and_max_clocks_are_read() {
        // github.com/Quake4/MindMiner/blob/0aa9824cbd6ede7dab23a1b8303bea1800491042/Code/Get-DeviceInfo.ps1
        // (a sample kept in a comment): GTX 1080 Tis at 98% capped at 212.50 W of the 250.00 W
        // default (problem for driver.power-limit-below-default)
        let t = "name, utilization.gpu [%], utilization.memory [%], temperature.gpu, power.draw [W], power.limit [W], fan.speed [%], pstate, clocks.current.graphics [MHz], clocks.current.memory [MHz], power.max_limit [W], power.default_limit [W]\n\
GeForce GTX 1080 Ti, 98, 5, 50, 211.44, 212.50, 50, P2, 1771, 5005, 300.00, 250.00\n\
GeForce GTX 1080 Ti, 98, 5, 50, 212.56, 212.50, 50, P2, 1784, 5005, 300.00, 250.00\n";
        let u = parse_query_csv(t).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[0].power_default_w, Some(250.0));
        assert_eq!(u.gpus[0].power_cap_w, Some(212.5));
        assert_eq!(u.gpus[0].sm_clock_mhz, Some(1771.0));
        let r = to_reading(&u);
        assert_eq!(r.gpus[0].power_default_limit_mw.ok(), Some(&250000));
        assert_eq!(r.gpus[0].power_enforced_limit_mw.ok(), Some(&212500));
        // the project's H200 capture (healthy, idle): clocks.max.sm read as the max SM clock
        let h = "index, name, utilization.gpu [%], persistence_mode, power.limit [W], clocks.current.sm [MHz], clocks.max.sm [MHz]\n\
0, NVIDIA H200, 0 %, Enabled, 700.00 W, 345 MHz, 1980 MHz\n";
        let u = parse_query_csv(h).unwrap();
        assert_eq!(u.gpus[0].sm_clock_max_mhz, Some(1980.0));
        assert_eq!(to_reading(&u).gpus[0].clock_sm_max.ok(), Some(&1980));
        // the second names of `--help-query-gpu` read as the first (`clocks.gr`, `clocks.max.gr`)
        let c = "nvidia-smi --query-gpu=index,clocks.gr,clocks.max.gr --format=csv,noheader,nounits\n0, 1410, 1980\n";
        let u = parse_query_csv(c).unwrap();
        assert_eq!(u.gpus[0].sm_clock_mhz, Some(1410.0));
        assert_eq!(u.gpus[0].sm_clock_max_mhz, Some(1980.0));
    }

    #[test]
    fn dmon_with_memory_columns_only_is_a_monitor_log() {
        // the `-s m` group alone prints `# gpu fb bar1 ccpm` (nvidia-smi dmon -h, R580), and
        // github.com/michalaarne-create/FULL-BOT-new/blob/e1be43f86bab6f88b7b813e3b478d56702af5a40/nvidia_dmon.log
        // the `-s u` group with R5xx's jpg and ofa
        let m = "# gpu     fb   bar1   ccpm \n# Idx     MB     MB     MB \n    0      4      1      0 \n    1      4      1      0 \n";
        assert!(looks_like_monitor(m));
        let u = parse_monitor(m).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[0].memory_used_mib, Some(4.0));
        let s = "# gpu     sm    mem    enc    dec    jpg    ofa \n# Idx      %      %      %      %      %      % \n    0     46     26      0      1      0      0 \n";
        assert_eq!(parse_monitor(s).unwrap().gpus[0].util_gpu, Some(46.0));
        // a comment line that merely names the GPU is no header
        assert!(!looks_like_monitor("# gpu stats below\n0 1 2\n"));
    }
}
