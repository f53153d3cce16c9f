//! Nsight Systems' statistics reports (`nsys profile --stats=true`, `nsys stats report.nsys-rep`)
//! and `nvprof`'s summary (`==PID== Profiling result:`), as people paste them: tables of CUDA
//! API calls, GPU kernels and memory operations, each row a name with its count and times.
//!
//! Written from the producers' own text:
//!
//! - Nsight Systems' report scripts (`reports/*.py` in the nsys package, NVIDIA, copyright
//!   2020-2024; documented in the Post-Collection Analysis Guide, "Statistical Reports Shipped
//!   With Nsight Systems", docs.nvidia.com/nsight-systems/AnalysisGuide): `cuda_gpu_kern_sum.py`
//!   selects `"Time:ratio_%"`, `"Total Time:dur_ns"`, `"Instances"`, `"Avg:dur_ns"`,
//!   `"Med:dur_ns"`, `"Min:dur_ns"`, `"Max:dur_ns"`, `"StdDev:dur_ns"`, `"Name"`, which the table
//!   printer shows as `Time (%)`, `Total Time (ns)`, … (the unit follows `--timeunit`), columns
//!   two spaces apart over a row of dashes; `cuda_api_sum` has `Num Calls` where the kernel
//!   report has `Instances`, `cuda_gpu_mem_time_sum` has `Count` and `Operation`
//!   (`[CUDA memcpy Host-to-Device]`, older `[CUDA memcpy HtoD]`). Reports before 2021.x
//!   (`cudaapisum.py`, `gpukernsum.py`, `gpumemtimesum.py`: "All time values given in
//!   nanoseconds") print `Time(%)`, `Average`, `Minimum`, `Maximum` without units and
//!   `Operations` for the count. A report is announced by `** Title (name):` (2022+),
//!   `[N/M] Executing 'name' stats report` (`--stats=true`), `Processing [db] with [.../name.py]`,
//!   `Exporting [.../name.py db] to console...` or `Running [.../name.py db]` (2020-2022), or an
//!   older title line (`CUDA API Statistics:`, `CUDA Kernel Statistics:`, `CUDA Memory
//!   Operation Statistics (by time):`; 2019.x: `Generating CUDA API Statistics...` then
//!   `CUDA API Statistics (nanoseconds)`, `Calls` for the count, memory operations under `Name`,
//!   and a `CUDA Memory Operation Statistics (KiB)` size table).
//! - The expert-system rule `rules/cuda_memcpy_async.py` ("CUDA Async Memcpy with Pageable
//!   Memory", 2024): rows of `Duration`, `Start`, `Src Kind`, `Dst Kind` (labels of
//!   `ENUM_CUDA_MEM_KIND`: `Pageable`, `Pinned`, `Device`, …), `Bytes`, `PID`, `Device ID`,
//!   `Context ID`, `Green Context ID` (`NULLIF(…, 0)`: a blank cell), `Stream ID`, `API Name`;
//!   with no such copy it prints "There were no problems detected related to memcpy operations
//!   using pageable memory." `cuda_gpu_trace` has the same kinds as `SrcMemKd`/`DstMemKd`.
//! - nvprof (CUDA Profiler User's Guide, "Summary Mode"): `Type  Time(%)  Time  Calls  Avg
//!   Min  Max  Name`, rows under `GPU activities:` and `API calls:` (older nvprof: a separate
//!   `==PID== API calls:` table), times with their unit (`1.4300us`, `252ns`, `4.42518s`).
//!
//! The CUDA Runtime API's "API synchronization behavior" says which calls block the host:
//! `cuda*Synchronize` (and the driver's `cu*Synchronize`), and the memcpy functions without
//! the `Async` suffix. nsys names calls with their version (`cudaMemcpy_v3020`,
//! `cuMemcpyHtoDAsync_v2`); the suffix is dropped before a name is classified.
//!
//! What the text shows, for the launch rules: how much of the host's CUDA API time was spent
//! blocked in syncs and in how many calls (`host_sync`); how many GPU operations ran and their
//! typical duration against the host's time spent enqueueing them (`gpu_ops`,
//! `gpu_op_median_us`, `enqueue`); host-to-device copies from pageable memory where a report
//! names the memory kind (`pageable_h2d`). A summary has no timeline: per-step counts and idle
//! gaps are not in it.

use serde::Serialize;
use serde_json::{Value, json};
use std::sync::LazyLock;

use regex::Regex;

/// One row of a summary table, times in nanoseconds.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Row {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub med_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stddev_ns: Option<f64>,
}

/// One row of a memory-operation size table (`cuda_gpu_mem_size_sum`, older `gpumemsizesum` in
/// KiB).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SizeRow {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<f64>,
}

/// A host-to-device copy's memory kinds, from a report that names them.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MemKinds {
    /// Copies from `Pageable` to `Device` memory.
    pub count: u64,
    /// Their bytes, where the report gives them.
    pub bytes: f64,
    /// Rows with memory kinds read (any direction).
    pub rows: u64,
}

/// What a paste holds: the rows of each table read.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Summary {
    /// `nsys` or `nvprof`.
    pub format: &'static str,
    /// Reports read, by nsys's name (`cuda_api_sum`, `cuda_gpu_kern_sum`, …) or nvprof's section.
    pub reports: Vec<String>,
    /// CUDA API calls (runtime and driver).
    pub api: Vec<Row>,
    /// GPU kernels.
    pub kernels: Vec<Row>,
    /// GPU memory operations by time (`[CUDA memcpy …]`, `[CUDA memset]`).
    pub memops: Vec<Row>,
    /// OS runtime calls (`osrt_sum`).
    pub osrt: Vec<Row>,
    /// NVTX ranges (`nvtx_sum`).
    pub nvtx: Vec<Row>,
    /// GPU memory operations by size (`cuda_gpu_mem_size_sum`).
    pub mem_sizes: Vec<SizeRow>,
    /// Host-to-device copies with their memory kinds, where a report names them.
    pub pageable_h2d: Option<MemKinds>,
}

// ---------------------------------------------------------------------------------------------
// recognising the text

static NSYS_ANNOUNCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)(?:\*\*[^\n]*\((?:cuda_|osrt_|nvtx_|gpu_|um_|openacc_|opengl_|mpi_|nccl_)[a-z_]*\):",
        r"|Executing '[a-z_]+' stats report",
        r"|(?:Processing|Exporting|Running) \[[^\n]*(?:nsight-systems|/reports/|/rules/)[^\n]*\.py",
        r"|^\s*(?:CUDA API Statistics|CUDA Kernel Statistics|CUDA Memory Operation Statistics[^\n]*|Operating System Runtime API Statistics|NVTX Push-Pop Range Statistics|NVTX Range Statistics)(?::| \((?:nanoseconds|KiB)\))\s*$",
        r"|^Generating (?:CUDA API|CUDA Kernel|CUDA Memory Operation|Operating System Runtime API) Statistics\.\.\.",
        r"|^\s*Time ?\(%\)\s+Total Time\b",
        r"|^\s*Duration(?: \([a-zμ]+\))?\s+Start(?: \([a-zμ]+\))?\s+Src Kind\s+Dst Kind)"
    ))
    .expect("nsys announce regex")
});

static NVPROF_MARK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)(?:^==\d+== (?:Profiling result|API calls):",
        r"|^\s*Type\s+Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name\s*$",
        r"|^\s*(?:GPU activities|API calls):\s+\d+(?:\.\d+)?%\s)"
    ))
    .expect("nvprof mark regex")
});

/// True for text holding an Nsight Systems statistics report (its announcement line or a
/// table header of its own).
pub fn looks_like_nsys(text: &str) -> bool {
    NSYS_ANNOUNCE.is_match(text)
}

/// True for text holding an nvprof summary.
pub fn looks_like_nvprof(text: &str) -> bool {
    NVPROF_MARK.is_match(text)
}

// ---------------------------------------------------------------------------------------------
// nsys tables

/// The report a title line announces, by its current name.
fn announced(line: &str) -> Option<String> {
    static TITLED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\*\*[^\n]*\(([a-z_]+)\):").expect("titled"));
    static EXECUTING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"Executing '([a-z_]+)' stats report").expect("executing"));
    static SCRIPT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:Processing|Exporting|Running) \[[^\n]*?([A-Za-z_]+)\.py\b").expect("script")
    });
    let name = TITLED
        .captures(line)
        .or_else(|| EXECUTING.captures(line))
        .or_else(|| SCRIPT.captures(line))
        .map(|c| c[1].to_string());
    if let Some(n) = name {
        return Some(current_name(&n).to_string());
    }
    old_title(line).map(str::to_string)
}

/// A title of the 2019-2021 reports: `CUDA API Statistics:` (2020-2021) or `CUDA API
/// Statistics (nanoseconds)` (2019.x, whose memory tables are `(nanoseconds)` and `(KiB)`).
fn old_title(line: &str) -> Option<&'static str> {
    let t = line.trim().trim_end_matches(':').trim_end();
    let (base, unit) = match t.rfind(" (") {
        Some(i) if t.ends_with(')') => (&t[..i], &t[i + 2..t.len() - 1]),
        _ => (t, ""),
    };
    if !(line.trim_end().ends_with(':') || matches!(unit, "nanoseconds" | "KiB")) {
        return None;
    }
    Some(match (base, unit) {
        ("CUDA API Statistics", _) => "cuda_api_sum",
        ("CUDA Kernel Statistics", _) => "cuda_gpu_kern_sum",
        ("CUDA Memory Operation Statistics", "by time" | "nanoseconds") => "cuda_gpu_mem_time_sum",
        ("CUDA Memory Operation Statistics", u) if u == "KiB" || u.starts_with("by size") => {
            "cuda_gpu_mem_size_sum"
        }
        ("Operating System Runtime API Statistics", _) => "osrt_sum",
        ("NVTX Push-Pop Range Statistics" | "NVTX Range Statistics", _) => "nvtx_sum",
        _ => return None,
    })
}

/// True for a 2019-2021 size table's title, whose `Total`, `Average`, … are in KiB.
fn kib_title(line: &str) -> bool {
    let t = line.trim().trim_end_matches(':');
    t.starts_with("CUDA Memory Operation Statistics") && t.contains("KiB")
}

/// A report's current name for its pre-2022 one (`cudaapisum` is `cuda_api_sum`).
fn current_name(n: &str) -> &str {
    match n {
        "cudaapisum" => "cuda_api_sum",
        "gpukernsum" => "cuda_gpu_kern_sum",
        "gpumemtimesum" => "cuda_gpu_mem_time_sum",
        "gpumemsizesum" => "cuda_gpu_mem_size_sum",
        "osrtsum" => "osrt_sum",
        "nvtxsum" | "nvtxppsum" => "nvtx_sum",
        "gpusum" => "cuda_gpu_sum",
        "gputrace" => "cuda_gpu_trace",
        "cudaapitrace" => "cuda_api_trace",
        other => other,
    }
}

/// What a column holds, from its header (without its unit).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    Pct,
    Total,
    Count,
    Avg,
    Med,
    Min,
    Max,
    StdDev,
    Name,
    Category,
    SrcKind,
    DstKind,
    Bytes,
    Other,
}

fn column(header: &str) -> (Col, f64) {
    // the unit in parentheses: a time unit scales to ns; `(%)` marks the share
    let (base, unit) = match header.rfind('(') {
        Some(i) if header.ends_with(')') => (header[..i].trim(), &header[i + 1..header.len() - 1]),
        _ => (header.trim(), ""),
    };
    let scale = match unit {
        "s" | "sec" => 1e9,
        "ms" | "msec" => 1e6,
        "us" | "μs" | "usec" => 1e3,
        "MB" => 1e6,
        "KiB" | "KB" => 1024.0,
        "GB" => 1e9,
        _ => 1.0,
    };
    let c = match base.to_ascii_lowercase().as_str() {
        "time" if unit == "%" => Col::Pct,
        "time(%)" => Col::Pct,
        "total time" | "total" => Col::Total,
        "num calls" | "instances" | "count" | "operations" | "calls" => Col::Count,
        "avg" | "average" => Col::Avg,
        "med" | "median" => Col::Med,
        "min" | "minimum" => Col::Min,
        "max" | "maximum" => Col::Max,
        "stddev" => Col::StdDev,
        "name" | "operation" | "range" | "api name" => Col::Name,
        "category" => Col::Category,
        "src kind" | "srcmemkd" => Col::SrcKind,
        "dst kind" | "dstmemkd" => Col::DstKind,
        "bytes" => Col::Bytes,
        _ => Col::Other,
    };
    (c, scale)
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("--") && t.chars().all(|c| c == '-' || c == ' ') && t.contains(' ')
}

/// The spans (char offsets) of the dash runs of a separator line.
fn spans(sep: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in sep.chars().enumerate() {
        match (c == '-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, sep.chars().count()));
    }
    out
}

fn number(cell: &str) -> Option<f64> {
    let t = cell.trim().replace(',', "");
    if t.is_empty() || t == "-" {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn is_numeric_col(c: Col) -> bool {
    !matches!(
        c,
        Col::Name | Col::Category | Col::SrcKind | Col::DstKind | Col::Other
    )
}

/// The cells of a row: by the separator's spans when the row lines up with them, else split at
/// whitespace with the last column taking the rest (a paste whose alignment was lost).
fn cells(row: &str, spans: &[(usize, usize)], cols: &[(Col, f64)]) -> Option<Vec<String>> {
    let chars: Vec<char> = row.chars().collect();
    let cut = |a: usize, b: usize| -> String {
        chars
            .get(a.min(chars.len())..b.min(chars.len()))
            .map(|s| s.iter().collect::<String>().trim().to_string())
            .unwrap_or_default()
    };
    let n = spans.len();
    let by_span: Vec<String> = spans
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            if i + 1 == n {
                cut(a, chars.len())
            } else {
                cut(a, b)
            }
        })
        .collect();
    // a cell must not straddle a span boundary: the character before each span is a space
    let aligned = spans
        .iter()
        .skip(1)
        .all(|&(a, _)| a == 0 || chars.get(a - 1).is_none_or(|c| *c == ' '))
        && by_span.iter().zip(cols).all(|(c, (col, _))| {
            !is_numeric_col(*col) || c.is_empty() || c == "-" || number(c).is_some()
        });
    if aligned && by_span.iter().any(|c| !c.is_empty()) {
        return Some(by_span);
    }
    let toks: Vec<&str> = row.split_whitespace().collect();
    if toks.len() < n {
        return None;
    }
    let mut out: Vec<String> = toks[..n - 1].iter().map(|s| s.to_string()).collect();
    out.push(toks[n - 1..].join(" "));
    let ok = out
        .iter()
        .zip(cols)
        .all(|(c, (col, _))| !is_numeric_col(*col) || number(c).is_some());
    ok.then_some(out)
}

/// Which bucket a table's rows go to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bucket {
    Api,
    Kernels,
    MemTime,
    Osrt,
    Nvtx,
    /// kernels and memory operations in one table, told apart by `Category`
    GpuSum,
    /// API, kernels and memory operations, by `Category`
    ApiGpuSum,
    /// rows naming memory kinds (`cuda_memcpy_async`, `cuda_gpu_trace`)
    MemKinds,
    /// memory operations by size
    MemSize,
    Skip,
}

fn bucket_of(report: Option<&str>, cols: &[(Col, f64)], headers: &[String]) -> Bucket {
    let has = |c: Col| cols.iter().any(|(x, _)| *x == c);
    if has(Col::SrcKind) && has(Col::DstKind) {
        return Bucket::MemKinds;
    }
    if let Some(r) = report {
        return match r {
            "cuda_api_sum" => Bucket::Api,
            "cuda_gpu_kern_sum" => Bucket::Kernels,
            "cuda_gpu_mem_time_sum" => Bucket::MemTime,
            "cuda_gpu_mem_size_sum" => Bucket::MemSize,
            "osrt_sum" => Bucket::Osrt,
            "nvtx_sum" | "nvtx_pushpop_sum" | "nvtx_startend_sum" => Bucket::Nvtx,
            "cuda_gpu_sum" => Bucket::GpuSum,
            "cuda_api_gpu_sum" => Bucket::ApiGpuSum,
            _ => Bucket::Skip,
        };
    }
    // a table pasted without its title: its columns say what it is
    let header = |h: &str| headers.iter().any(|x| x.eq_ignore_ascii_case(h));
    let timed = headers.iter().any(|h| h.starts_with("Total Time"));
    if !timed {
        // `Total (MB)` (or the older `Total` in KiB) over `Operation`: a size table
        return if header("Operation") && has(Col::Total) {
            Bucket::MemSize
        } else {
            Bucket::Skip
        };
    }
    if has(Col::Category) {
        return Bucket::ApiGpuSum;
    }
    if header("Style") || header("Range") {
        return Bucket::Nvtx;
    }
    if header("Instances") {
        return Bucket::Kernels;
    }
    if header("Operation") {
        return Bucket::MemTime;
    }
    if (header("Num Calls") || header("Calls")) && has(Col::Name) {
        // cuda_api_sum and osrt_sum share their columns; the names tell them apart
        return Bucket::Api; // refined by the rows' names in `read_nsys`
    }
    Bucket::Skip
}

/// True for a CUDA runtime or driver API name (`cudaMalloc`, `cuLaunchKernel`).
fn is_cuda_api(name: &str) -> bool {
    name.starts_with("cuda")
        || name
            .strip_prefix("cu")
            .and_then(|r| r.chars().next())
            .is_some_and(char::is_uppercase)
}

fn row_of(cells: &[String], cols: &[(Col, f64)]) -> Row {
    let mut r = Row::default();
    let mut name_parts: Vec<&str> = Vec::new();
    for (c, &(col, scale)) in cells.iter().zip(cols) {
        let v = number(c);
        match col {
            Col::Pct => r.time_pct = v,
            Col::Total => r.total_ns = v.map(|x| x * scale),
            Col::Count => r.count = v.map(|x| x as u64),
            Col::Avg => r.avg_ns = v.map(|x| x * scale),
            Col::Med => r.med_ns = v.map(|x| x * scale),
            Col::Min => r.min_ns = v.map(|x| x * scale),
            Col::Max => r.max_ns = v.map(|x| x * scale),
            Col::StdDev => r.stddev_ns = v.map(|x| x * scale),
            Col::Name => name_parts.push(c),
            _ => {}
        }
    }
    r.name = super::clip(name_parts.join(" ").trim(), super::MAX_TEXT);
    r
}

fn read_nsys(text: &str) -> Summary {
    let mut s = Summary {
        format: "nsys",
        ..Summary::default()
    };
    let lines: Vec<&str> = super::content_lines(text).collect();
    let mut report: Option<String> = None;
    let mut kib = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(r) = announced(line) {
            report = Some(r);
            kib = kib_title(line);
            i += 1;
            continue;
        }
        if line.contains("There were no problems detected related to memcpy operations")
            && line.contains("pageable")
        {
            s.pageable_h2d.get_or_insert_with(MemKinds::default);
        }
        if !is_separator(line) || i == 0 {
            i += 1;
            continue;
        }
        // the header is the line above the dashes; its names are two or more spaces apart
        let header = lines[i - 1];
        let sp = spans(line);
        static GAP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s{2,}").expect("gap"));
        let headers: Vec<String> = GAP
            .split(header.trim())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .collect();
        i += 1;
        if headers.len() != sp.len() {
            continue;
        }
        let cols: Vec<(Col, f64)> = headers.iter().map(|h| column(h)).collect();
        let mut bucket = bucket_of(report.as_deref(), &cols, &headers);
        let mut rows = Vec::new();
        let mut cats = Vec::new();
        let mut kinds = Vec::new();
        while i < lines.len() {
            let l = lines[i];
            if l.trim().is_empty() || announced(l).is_some() {
                break;
            }
            let Some(c) = cells(l, &sp, &cols) else { break };
            let cat = cols
                .iter()
                .position(|(x, _)| *x == Col::Category)
                .map(|p| c[p].clone());
            let kind = (
                cols.iter()
                    .position(|(x, _)| *x == Col::SrcKind)
                    .map(|p| c[p].clone()),
                cols.iter()
                    .position(|(x, _)| *x == Col::DstKind)
                    .map(|p| c[p].clone()),
                cols.iter()
                    .position(|(x, _)| *x == Col::Bytes)
                    .and_then(|p| number(&c[p]).map(|b| b * cols[p].1)),
            );
            rows.push(row_of(&c, &cols));
            cats.push(cat);
            kinds.push(kind);
            i += 1;
        }
        if rows.is_empty() {
            continue;
        }
        if bucket == Bucket::Api && report.is_none() && !rows.iter().any(|r| is_cuda_api(&r.name)) {
            bucket = Bucket::Osrt;
        }
        let name = report.clone().unwrap_or_else(|| {
            match bucket {
                Bucket::Api => "cuda_api_sum",
                Bucket::Kernels => "cuda_gpu_kern_sum",
                Bucket::MemTime => "cuda_gpu_mem_time_sum",
                Bucket::Osrt => "osrt_sum",
                Bucket::Nvtx => "nvtx_sum",
                Bucket::GpuSum => "cuda_gpu_sum",
                Bucket::ApiGpuSum => "cuda_api_gpu_sum",
                Bucket::MemKinds => "memory kinds",
                Bucket::MemSize => "cuda_gpu_mem_size_sum",
                Bucket::Skip => "",
            }
            .to_string()
        });
        if bucket != Bucket::Skip && !s.reports.contains(&name) {
            s.reports.push(name);
        }
        match bucket {
            Bucket::Api => s.api.extend(rows),
            Bucket::Kernels => s.kernels.extend(rows),
            Bucket::MemTime => s.memops.extend(rows),
            Bucket::Osrt => s.osrt.extend(rows),
            Bucket::Nvtx => s.nvtx.extend(rows),
            Bucket::MemSize => s.mem_sizes.extend(rows.into_iter().map(|r| SizeRow {
                name: r.name,
                count: r.count,
                total_bytes: r.total_ns.map(|t| if kib { t * 1024.0 } else { t }),
            })),
            Bucket::GpuSum | Bucket::ApiGpuSum => {
                for (r, c) in rows.into_iter().zip(cats) {
                    match c.as_deref() {
                        Some("CUDA_KERNEL") => s.kernels.push(r),
                        Some("MEMORY_OPER") => s.memops.push(r),
                        Some("CUDA_API") => s.api.push(r),
                        _ => {}
                    }
                }
            }
            Bucket::MemKinds => {
                let m = s.pageable_h2d.get_or_insert_with(MemKinds::default);
                for (src, dst, bytes) in kinds {
                    m.rows += 1;
                    if src.as_deref() == Some("Pageable") && dst.as_deref() == Some("Device") {
                        m.count += 1;
                        m.bytes += bytes.unwrap_or(0.0);
                    }
                }
            }
            Bucket::Skip => {}
        }
        report = None;
        kib = false;
    }
    s
}

// ---------------------------------------------------------------------------------------------
// nvprof

/// `1.4300us`, `252ns`, `4.42518s`, `17.498ms` in ns.
fn nvprof_time(t: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        return None;
    };
    num.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v * scale)
}

fn read_nvprof(text: &str) -> Summary {
    static ROW: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:(?:==\d+==\s*)?([A-Za-z][A-Za-z ()/]*?):)?\s*(\d+(?:\.\d+)?)%\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S.*?)\s*$")
            .expect("nvprof row")
    });
    static SECTION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^==\d+== (API calls|Profiling result):").expect("section"));
    let mut s = Summary {
        format: "nvprof",
        ..Summary::default()
    };
    let mut section = "GPU activities".to_string();
    for line in super::content_lines(text) {
        if let Some(c) = SECTION.captures(line) {
            section = if &c[1] == "API calls" {
                "API calls".into()
            } else {
                "GPU activities".into()
            };
            continue;
        }
        let Some(c) = ROW.captures(line) else {
            continue;
        };
        if let Some(label) = c.get(1) {
            section = label.as_str().trim().to_string();
        }
        let (Some(total), Some(avg), Some(min), Some(max)) = (
            nvprof_time(&c[3]),
            nvprof_time(&c[5]),
            nvprof_time(&c[6]),
            nvprof_time(&c[7]),
        ) else {
            continue;
        };
        let r = Row {
            name: super::clip(&c[8], super::MAX_TEXT),
            count: c[4].parse().ok(),
            time_pct: c[2].parse().ok(),
            total_ns: Some(total),
            avg_ns: Some(avg),
            med_ns: None,
            min_ns: Some(min),
            max_ns: Some(max),
            stddev_ns: None,
        };
        let report = match section.as_str() {
            "GPU activities" if r.name.starts_with("[CUDA mem") => {
                s.memops.push(r);
                "GPU activities"
            }
            "GPU activities" => {
                s.kernels.push(r);
                "GPU activities"
            }
            "API calls" => {
                s.api.push(r);
                "API calls"
            }
            _ => continue,
        };
        if !s.reports.iter().any(|x| x == report) {
            s.reports.push(report.to_string());
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// what the rows say

/// The API name without nsys's version suffix (`cudaMemcpy_v3020`, `cuMemcpyHtoDAsync_v2`) or
/// the per-thread-stream suffix (`_ptsz`, `_ptds`).
fn base_name(name: &str) -> &str {
    static SUFFIX: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:_v\d+|_ptsz|_ptds)+$").expect("suffix"));
    let n = name.trim();
    match SUFFIX.find(n) {
        Some(m) => &n[..m.start()],
        None => n,
    }
}

/// A call that blocks the host until the GPU has done the work before it (the Runtime API's
/// "API synchronization behavior"): the synchronize calls and the copies without `Async`.
pub fn is_host_sync(name: &str) -> bool {
    let b = base_name(name);
    matches!(
        b,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaThreadSynchronize"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
    ) || ((b.starts_with("cudaMemcpy") || b.starts_with("cuMemcpy")) && !b.contains("Async"))
}

/// A call that puts work on a stream: a kernel launch, a graph launch, an async copy or memset.
pub fn is_enqueue(name: &str) -> bool {
    let b = base_name(name);
    matches!(
        b,
        "cudaLaunchKernel"
            | "cudaLaunchKernelExC"
            | "cudaLaunchCooperativeKernel"
            | "cudaLaunch"
            | "cuLaunchKernel"
            | "cuLaunchKernelEx"
            | "cuLaunchCooperativeKernel"
            | "cudaGraphLaunch"
            | "cuGraphLaunch"
    ) || ((b.starts_with("cudaMemcpy")
        || b.starts_with("cuMemcpy")
        || b.starts_with("cudaMemset")
        || b.starts_with("cuMemset"))
        && b.contains("Async"))
}

/// Instance-weighted median of the rows' typical durations (the median where the report has
/// one, else the mean), in microseconds.
fn weighted_median_us(rows: &[&Row]) -> Option<f64> {
    let mut v: Vec<(f64, u64)> = rows
        .iter()
        .filter_map(|r| Some((r.med_ns.or(r.avg_ns)?, r.count?)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let total: u64 = v.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return None;
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut seen = 0;
    for (d, n) in v {
        seen += n;
        if seen * 2 >= total {
            return Some((d / 1e3 * 1000.0).round() / 1000.0);
        }
    }
    None
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The facts rules read, over the rows of one or more summaries.
pub fn facts(sums: &[Summary]) -> Value {
    let api: Vec<&Row> = sums.iter().flat_map(|s| &s.api).collect();
    let kernels: Vec<&Row> = sums.iter().flat_map(|s| &s.kernels).collect();
    let memops: Vec<&Row> = sums.iter().flat_map(|s| &s.memops).collect();
    let mut out = serde_json::Map::new();
    let mut reports: Vec<String> = Vec::new();
    for r in sums.iter().flat_map(|s| &s.reports) {
        if !reports.contains(r) {
            reports.push(r.clone());
        }
    }
    out.insert("reports".into(), json!(reports));
    let formats: Vec<&str> = sums.iter().map(|s| s.format).collect();
    out.insert("format".into(), json!(formats.first().copied()));
    if !api.is_empty() {
        let total: f64 = api.iter().filter_map(|r| r.total_ns).sum();
        let calls: u64 = api.iter().filter_map(|r| r.count).sum();
        out.insert("api_total_ns".into(), json!(total));
        out.insert("api_calls".into(), json!(calls));
        let syncs: Vec<&&Row> = api.iter().filter(|r| is_host_sync(&r.name)).collect();
        let s_total: f64 = syncs.iter().filter_map(|r| r.total_ns).sum();
        let s_calls: u64 = syncs.iter().filter_map(|r| r.count).sum();
        let by_name: Vec<Value> = syncs
            .iter()
            .take(super::MAX_ITEMS)
            .map(|r| json!({"name": r.name, "calls": r.count, "total_ns": r.total_ns}))
            .collect();
        out.insert(
            "host_sync".into(),
            json!({
                "calls": s_calls,
                "total_ns": s_total,
                "share": if total > 0.0 { round3(s_total / total) } else { 0.0 },
                "by_name": by_name,
            }),
        );
        let enq: Vec<&&Row> = api.iter().filter(|r| is_enqueue(&r.name)).collect();
        out.insert(
            "enqueue".into(),
            json!({
                "calls": enq.iter().filter_map(|r| r.count).sum::<u64>(),
                "total_ns": enq.iter().filter_map(|r| r.total_ns).sum::<f64>(),
            }),
        );
    }
    let ops: Vec<&Row> = kernels.iter().chain(memops.iter()).copied().collect();
    if !ops.is_empty() {
        out.insert(
            "gpu_ops".into(),
            json!(ops.iter().filter_map(|r| r.count).sum::<u64>()),
        );
        out.insert(
            "gpu_total_ns".into(),
            json!(ops.iter().filter_map(|r| r.total_ns).sum::<f64>()),
        );
        if let Some(m) = weighted_median_us(&ops) {
            out.insert("gpu_op_median_us".into(), json!(m));
        }
    }
    if !kernels.is_empty() {
        out.insert(
            "kernel_instances".into(),
            json!(kernels.iter().filter_map(|r| r.count).sum::<u64>()),
        );
        if let Some(m) = weighted_median_us(&kernels) {
            out.insert("kernel_median_us".into(), json!(m));
        }
    }
    let mut pageable: Option<MemKinds> = None;
    for p in sums.iter().filter_map(|s| s.pageable_h2d.as_ref()) {
        let m = pageable.get_or_insert_with(MemKinds::default);
        m.count += p.count;
        m.bytes += p.bytes;
        m.rows += p.rows;
    }
    if let Some(p) = pageable {
        out.insert("pageable_h2d".into(), json!(p));
    }
    let top = |rows: &[&Row]| -> Vec<Value> {
        let mut v: Vec<&&Row> = rows.iter().collect();
        v.sort_by(|a, b| {
            b.total_ns
                .unwrap_or(0.0)
                .total_cmp(&a.total_ns.unwrap_or(0.0))
        });
        v.into_iter()
            .take(5)
            .map(|r| json!({"name": r.name, "count": r.count, "total_ns": r.total_ns}))
            .collect()
    };
    if !api.is_empty() {
        out.insert("top_api".into(), json!(top(&api)));
    }
    if !ops.is_empty() {
        out.insert("top_gpu_ops".into(), json!(top(&ops)));
    }
    Value::Object(out)
}

/// Reads a pasted Nsight Systems statistics output.
pub fn parse_nsys(text: &str) -> Summary {
    read_nsys(&super::unquote(text))
}

/// Reads a pasted nvprof summary.
pub fn parse_nvprof(text: &str) -> Summary {
    read_nvprof(&super::unquote(text))
}

fn is_empty(s: &Summary) -> bool {
    s.api.is_empty()
        && s.kernels.is_empty()
        && s.memops.is_empty()
        && s.osrt.is_empty()
        && s.nvtx.is_empty()
        && s.mem_sizes.is_empty()
        && s.pageable_h2d.is_none()
}

/// The parsed value of a kind: the summary's rows (clipped) and its facts.
fn value(s: Summary) -> Result<Value, super::ParseError> {
    let f = facts(std::slice::from_ref(&s));
    let clip = |v: &[Row]| -> Vec<Row> { v.iter().take(super::MAX_ITEMS).cloned().collect() };
    let mut v = json!({
        "format": s.format,
        "reports": s.reports,
        "api": clip(&s.api),
        "kernels": clip(&s.kernels),
        "memops": clip(&s.memops),
        "osrt": clip(&s.osrt),
        "nvtx": clip(&s.nvtx),
        "mem_sizes": s.mem_sizes.iter().take(super::MAX_ITEMS).cloned().collect::<Vec<_>>(),
    });
    if let (Value::Object(m), Value::Object(f)) = (&mut v, f) {
        for (k, x) in f {
            m.entry(k).or_insert(x);
        }
    }
    Ok(v)
}

const FIELDS: &[(&str, &str)] = &[
    ("format", "`nsys` or `nvprof`"),
    (
        "reports",
        "reports read: nsys's names (`cuda_api_sum`, `cuda_gpu_kern_sum`, `cuda_gpu_mem_time_sum`, `osrt_sum`, `nvtx_sum`, `cuda_memcpy_async`, …; older names mapped to these) or nvprof's sections",
    ),
    (
        "api",
        "CUDA API rows: name, count, time_pct, total_ns, avg_ns, med_ns, min_ns, max_ns, stddev_ns",
    ),
    ("kernels", "GPU kernel rows, as `api`"),
    ("memops", "GPU memory-operation rows by time, as `api`"),
    ("osrt", "OS runtime rows (`osrt_sum`)"),
    ("nvtx", "NVTX range rows (`nvtx_sum`)"),
    (
        "mem_sizes",
        "memory operations by size (`cuda_gpu_mem_size_sum`): name, count, total_bytes",
    ),
    ("api_total_ns", "host time in all CUDA API calls listed"),
    ("api_calls", "CUDA API calls listed"),
    (
        "host_sync",
        "calls that block the host (cuda/cu*Synchronize, memcpy without Async): calls, total_ns, share of API time, by_name",
    ),
    (
        "enqueue",
        "calls that put work on a stream (kernel and graph launches, async copies and memsets): calls, total_ns",
    ),
    (
        "gpu_ops",
        "GPU operations listed (kernels and memory operations)",
    ),
    ("gpu_total_ns", "their total GPU time"),
    (
        "gpu_op_median_us",
        "instance-weighted median of their durations (each row's median, or mean where the report has none)",
    ),
    ("kernel_instances", "kernel launches listed"),
    (
        "kernel_median_us",
        "instance-weighted median kernel duration",
    ),
    (
        "pageable_h2d",
        "where a report names memory kinds (nsys's `cuda_memcpy_async` rule, `cuda_gpu_trace`): count and bytes of Pageable-to-Device copies, rows read",
    ),
    ("top_api", "the five API calls with the most time"),
    ("top_gpu_ops", "the five GPU operations with the most time"),
];

/// The registry entry for Nsight Systems' statistics output (see [`super::EvidenceKind`]).
pub struct NsysStatsKind;

impl super::EvidenceKind for NsysStatsKind {
    fn name(&self) -> &'static str {
        "nsys-stats"
    }
    fn doc(&self) -> &'static str {
        "Nsight Systems statistics reports (`nsys profile --stats=true`, `nsys stats`): CUDA API, GPU kernel and memory-operation summaries, OS runtime and NVTX tables, expert-system rules"
    }
    fn example(&self) -> &'static str {
        "nsys stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_memcpy_async report.nsys-rep"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nsys.stats"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_nsys(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<Value, super::ParseError> {
        let s = parse_nsys(text);
        if is_empty(&s) {
            return Err(super::ParseError::NotThisKind(
                "no Nsight Systems statistics table (a header over a row of dashes) in the text",
            ));
        }
        value(s)
    }
}

/// The registry entry for nvprof's summary (see [`super::EvidenceKind`]).
pub struct NvprofSummaryKind;

impl super::EvidenceKind for NvprofSummaryKind {
    fn name(&self) -> &'static str {
        "nvprof-summary"
    }
    fn doc(&self) -> &'static str {
        "nvprof's summary (`==PID== Profiling result:`): GPU activities and API calls with their time, calls, avg, min and max"
    }
    fn example(&self) -> &'static str {
        "nvprof python train.py"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nsys.stats"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_nvprof(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<Value, super::ParseError> {
        let s = parse_nvprof(text);
        if is_empty(&s) {
            return Err(super::ParseError::NotThisKind(
                "no nvprof summary row (`Time(%)  Time  Calls  Avg  Min  Max  Name`) in the text",
            ));
        }
        value(s)
    }
}

/// A PyTorch profiler table's kernel launch calls against its device time
/// ([`crate::formats::profiler_report::torch_table_launches`]) as the summary the launch rules
/// read: the launch rows as the host's API calls, and the table's device time as one kernel row
/// of as many launches, each taking their mean.
pub fn from_torch_table(t: crate::formats::profiler_report::TableLaunches) -> Summary {
    let calls: u64 = t.launches.iter().filter_map(|r| r.calls).sum();
    let dev_ns = t.device_total_s * 1e9;
    Summary {
        format: "torch profiler table",
        reports: vec!["key_averages".into()],
        api: t
            .launches
            .into_iter()
            .map(|l| Row {
                name: l.name,
                count: l.calls,
                total_ns: Some(l.cpu_total_s * 1e9),
                ..Row::default()
            })
            .collect(),
        kernels: vec![Row {
            name: "device time of the table (Self CUDA time total)".into(),
            count: Some(calls),
            total_ns: Some(dev_ns),
            avg_ns: (calls > 0).then(|| dev_ns / calls as f64),
            ..Row::default()
        }],
        ..Summary::default()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_torch_table_s_launches_are_a_summary_the_launch_rules_read() {
        // duoan/playground-cuda's eager preset (h129): 3264 cudaLaunchKernel calls, 22.039 ms of
        // host time, 8.311 ms of device time in the whole table
        let t = crate::formats::profiler_report::torch_table_launches(&crate::test_corpus(
            "h129_torchprof_playgroundcuda_eager_micro_ops_launch_bound.txt",
        ))
        .unwrap();
        let s = from_torch_table(t);
        assert_eq!(s.format, "torch profiler table");
        assert_eq!(s.api.len(), 1);
        assert_eq!(s.api[0].count, Some(3264));
        assert!((s.api[0].total_ns.unwrap() - 22_039_000.0).abs() < 1.0);
        let k = &s.kernels[0];
        assert_eq!(k.count, Some(3264));
        assert!((k.total_ns.unwrap() - 8_311_000.0).abs() < 1.0);
        assert!((k.avg_ns.unwrap() - 8_311_000.0 / 3264.0).abs() < 1e-6);
        let f = facts(&[s]);
        assert_eq!(f["gpu_ops"], 3264);
        assert_eq!(f["enqueue"]["calls"], 3264);
    }
    use super::*;
    use crate::evidence::EvidenceKind as _;
    use crate::evidence::testutil::{fixture, prefixes};

    fn row<'a>(rows: &'a [Row], name: &str) -> &'a Row {
        rows.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name} in {rows:?}"))
    }

    /// nsys 2023+ `--stats=true`: each report announced by `[N/M] Executing '…'`, units in the
    /// headers, thousands separators in the cells (a launch-bound loop: problem).
    #[test]
    fn stats_reports_of_a_launch_bound_loop() {
        let t = fixture("nsys/stats_vector_add_launch_bound.txt");
        assert!(looks_like_nsys(&t) && !looks_like_nvprof(&t));
        let s = parse_nsys(&t);
        assert_eq!(
            s.reports,
            [
                "cuda_api_sum",
                "cuda_gpu_kern_sum",
                "cuda_gpu_mem_time_sum",
                "cuda_gpu_mem_size_sum"
            ]
        );
        assert_eq!(s.api.len(), 6);
        let l = row(&s.api, "cudaLaunchKernel");
        assert_eq!(l.count, Some(1010));
        assert_eq!(l.total_ns, Some(3_145_161.0));
        assert_eq!(l.time_pct, Some(2.8));
        assert_eq!(l.avg_ns, Some(3114.0));
        assert_eq!(l.med_ns, Some(2894.0));
        assert_eq!(l.min_ns, Some(0.0));
        assert_eq!(l.max_ns, Some(104_466.0));
        assert_eq!(l.stddev_ns, Some(3286.8));
        let k = row(
            &s.kernels,
            "vectorAdd(const float *, const float *, float *, int)",
        );
        assert_eq!((k.count, k.med_ns), (Some(1010), Some(1824.0)));
        assert_eq!(s.memops.len(), 2);
        assert_eq!(row(&s.memops, "[CUDA memcpy DtoH]").total_ns, Some(2176.0));
        assert_eq!(s.mem_sizes.len(), 2);
        let f = facts(&[s]);
        assert_eq!(f["gpu_ops"], 1013);
        assert_eq!(f["gpu_op_median_us"], 1.824);
        assert_eq!(f["enqueue"]["calls"], 1010);
        assert_eq!(f["enqueue"]["total_ns"], 3_145_161.0);
        // three cudaMemcpy and two cudaDeviceSynchronize: a blocking call, but few
        assert_eq!(f["host_sync"]["calls"], 5);
        assert!(f["host_sync"]["share"].as_f64().unwrap() < 0.01);
    }

    /// nsys 2020.4.3 `cudaapisum` (`Exporting [...] to console...`): `Time(%)`, `Average`,
    /// `Minimum`, `Maximum` in ns, no separators (a thread with no cause named: syncs take 31% of the API time listed).
    #[test]
    fn old_cudaapisum_and_its_host_syncs() {
        let t = fixture("nsys/cudaapisum_2020_oneflow.txt");
        assert!(looks_like_nsys(&t));
        let s = parse_nsys(&t);
        assert_eq!(s.reports, ["cuda_api_sum"]);
        assert_eq!(s.api.len(), 11);
        let l = row(&s.api, "cudaLaunchKernel");
        assert_eq!(l.count, Some(1_747_010));
        assert_eq!(l.total_ns, Some(12_711_800_961.0));
        assert_eq!(l.avg_ns, Some(7276.3));
        assert_eq!((l.min_ns, l.max_ns), (Some(4118.0), Some(403_176_487.0)));
        assert_eq!(l.med_ns, None);
        let f = facts(&[s]);
        assert_eq!(f["host_sync"]["calls"], 2005 + 28);
        assert_eq!(f["host_sync"]["share"], 0.313);
        // cudaEventQuery polls, it does not block
        let names: Vec<&str> = f["host_sync"]["by_name"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["cudaStreamSynchronize", "cudaDeviceSynchronize"]);
        assert!(f.get("gpu_ops").is_none());
    }

    /// The `cuda_memcpy_async` expert rule: Pageable-to-Device rows, a blank `Green Context ID`
    /// cell (problem); the rule's own no-result sentence (healthy).
    #[test]
    fn pageable_copies_named_by_the_expert_rule() {
        let t = fixture("nsys/rule_memcpy_async_pageable.txt");
        assert!(looks_like_nsys(&t));
        let s = parse_nsys(&t);
        assert_eq!(s.reports, ["cuda_memcpy_async"]);
        let p = s.pageable_h2d.clone().unwrap();
        assert_eq!((p.count, p.rows), (3, 3));
        assert!((p.bytes - 3_145_000.0).abs() < 1.0, "{}", p.bytes);
        assert_eq!(facts(&[s])["pageable_h2d"]["count"], 3);
        // rules/cuda_memcpy_async.py's message_noresult, as the rule prints it
        let none = "Processing [report1.sqlite] with [/opt/nvidia/nsight-systems/2024.4.1/host-linux-x64/rules/cuda_memcpy_async.py]... \n\n ** CUDA Async Memcpy with Pageable Memory (cuda_memcpy_async):\n\nThere were no problems detected related to memcpy operations using pageable memory.\n";
        let s = parse_nsys(none);
        assert_eq!(s.pageable_h2d.map(|p| p.count), Some(0));
    }

    /// nvprof's summary: GPU activities with their unit per cell; a kernel name the terminal
    /// wrapped is kept up to the wrap (problem: millions of 1.4 us copies).
    #[test]
    fn nvprof_summary_of_tiny_copies() {
        let t = fixture("nsys/nvprof_dtod_tiny_copies.txt");
        assert!(looks_like_nvprof(&t) && !looks_like_nsys(&t));
        let s = parse_nvprof(&t);
        assert_eq!(s.reports, ["GPU activities"]);
        let d = row(&s.memops, "[CUDA memcpy DtoD]");
        assert_eq!(d.count, Some(3_094_192));
        assert_eq!(d.total_ns, Some(4.42518e9));
        assert_eq!(d.avg_ns, Some(1430.0));
        assert_eq!(d.time_pct, Some(99.04));
        assert_eq!(s.kernels.len(), 7);
        assert!(
            s.kernels[0].name.ends_with("thrust::t"),
            "{:?}",
            s.kernels[0]
        );
        let f = facts(&[s]);
        assert_eq!(f["gpu_op_median_us"], 1.43);
        assert!(f.get("enqueue").is_none());
    }

    /// nvprof pasted with a blank line after each row: rows without a label stay in the
    /// section above (healthy: one 365 ms kernel).
    #[test]
    fn nvprof_rows_apart() {
        let t = fixture("nsys/nvprof_blank_lines_one_kernel.txt");
        let s = parse_nvprof(&t);
        assert_eq!((s.kernels.len(), s.memops.len()), (4, 2));
        let f = facts(&[s]);
        assert_eq!(f["gpu_ops"], 1 + 15 + 20 + 1 + 3 + 3);
        assert!(f["gpu_op_median_us"].as_f64().unwrap() > 100.0);
    }

    /// nvprof's API block alone (github.com/CliMA/Oceananigans.jl/issues/1912): cuStreamQuery
    /// polls the stream without blocking, so it is no host sync.
    #[test]
    fn nvprof_api_calls_without_a_header() {
        let t = "grid = 16384 x 16384\n      API calls:   70.92%  702.12ms    468805  1.4970us  1.2730us  101.02us  cuStreamQuery\n                   28.00%  277.25ms    470363     589ns     433ns  15.851us  cuCtxGetCurrent\n                    0.85%  8.3729ms       302  27.724us  11.380us  3.7689ms  cuLaunchKernel\n";
        assert!(looks_like_nvprof(t));
        let s = parse_nvprof(t);
        assert_eq!(s.api.len(), 3);
        assert_eq!(row(&s.api, "cuCtxGetCurrent").avg_ns, Some(589.0));
        let f = facts(&[s]);
        assert_eq!(f["host_sync"]["calls"], 0);
        assert_eq!(f["enqueue"]["calls"], 302);
    }

    /// nsys 2019.5 `--stats=true`: titles `… Statistics (nanoseconds)` without a colon,
    /// `Calls`/`Instances`/`Operations`, memory operations under `Name`, a size table in KiB
    /// (healthy: 20 cudaMemcpy and 10 cudaDeviceSynchronize in a course project's run).
    #[test]
    fn stats_of_2019() {
        let t = fixture("nsys/stats_2019_conv_kernel.txt");
        assert!(looks_like_nsys(&t));
        let s = parse_nsys(&t);
        assert_eq!(
            s.reports,
            [
                "cuda_api_sum",
                "cuda_gpu_kern_sum",
                "cuda_gpu_mem_time_sum",
                "cuda_gpu_mem_size_sum"
            ]
        );
        let m = row(&s.api, "cudaMemcpy");
        assert_eq!((m.count, m.total_ns), (Some(20), Some(1_053_104_319.0)));
        assert_eq!(m.avg_ns, Some(52_655_216.0));
        assert_eq!(row(&s.kernels, "conv_forward_kernel").count, Some(6));
        assert_eq!(row(&s.memops, "[CUDA memcpy HtoD]").count, Some(14));
        assert_eq!(s.mem_sizes[1].total_bytes, Some(545_660.0 * 1024.0));
        let f = facts(&[s]);
        assert_eq!(f["host_sync"]["calls"], 30);
        assert_eq!(f["gpu_ops"], 6 + 2 + 2 + 6 + 14);
    }

    /// Titles of other eras and tables pasted without one.
    #[test]
    fn titles_and_untitled_tables() {
        // github.com/proteneer/timemachine/pull/1304: `CUDA Kernel Statistics:`, names cut with `…`
        let t = "CUDA Kernel Statistics:\n\n Time (%)  Total Time (ns)  Instances  Avg (ns)   Med (ns)   Min (ns)  Max (ns)  StdDev (ns)                                                  Name                                                \n --------  ---------------  ---------  ---------  ---------  --------  --------  -----------  ----------------------------------------------------------------------------------------------------\n     49.0         21030252         98   214594.4   214413.0    212252    216733        742.2  void timemachine::k_atom_by_atom_energies<float>(int, int, const int *, const double *, const doubl\u{2026}\n      8.7          3717464         49    75866.6    75839.0     75422     76415        266.9  void timemachine::k_adjust_energies<float, (bool)0>(int, int, int, int, const int *, const int *, c\u{2026}\n";
        assert!(looks_like_nsys(t));
        let s = parse_nsys(t);
        assert_eq!(s.reports, ["cuda_gpu_kern_sum"]);
        assert_eq!(s.kernels.len(), 2);
        assert_eq!(s.kernels[0].med_ns, Some(214_413.0));
        assert!(s.kernels[1].name.ends_with('\u{2026}'));
        // github.com/apache/mahout/issues/699: the NVTX summary, its `**` lost in the paste
        let t = "NVTX Range Summary (nvtx_sum):\n\n Time (%)  Total Time (ns)  Instances   Avg (ns)    Med (ns)   Min (ns)  Max (ns)  StdDev (ns)   Style          Range       \n --------  ---------------  ---------  ----------  ----------  --------  --------  -----------  --------  ------------------\n     50.2         22777979          1  22777979.0  22777979.0  22777979  22777979          0.0  StartEnd  :Mahout::Encode   \n      0.1            42253          1     42253.0     42253.0     42253     42253          0.0  StartEnd  :GPU::Synchronize \n";
        let s = parse_nsys(t);
        assert_eq!(s.nvtx.len(), 2);
        assert_eq!(s.nvtx[1].name, ":GPU::Synchronize");
        assert!(s.kernels.is_empty() && s.api.is_empty());
        // github.com/pytorch/pytorch/issues/111570: nsys 2022.1.3 `osrtsum` only
        let t = "Running [/opt/nvidia/nsight-systems/2022.1.3/target-linux-x64/reports/osrtsum.py report2.sqlite]... \n\n Time (%)  Total Time (ns)  Num Calls      Avg (ns)          Med (ns)         Min (ns)        Max (ns)     StdDev (ns)    Name  \n --------  ---------------  ---------  ----------------  ----------------  --------------  --------------  -----------  --------\n     55.0   10,786,646,470          1  10,786,646,470.0  10,786,646,470.0  10,786,646,470  10,786,646,470          0.0  sem_wait\n     45.0    8,810,850,393         88     100,123,299.9     100,119,051.5     100,031,945     100,211,569     25,734.0  poll    \n";
        let s = parse_nsys(t);
        assert_eq!(s.reports, ["osrt_sum"]);
        assert_eq!(s.osrt.len(), 2);
        assert!(facts(&[s]).get("host_sync").is_none());
        // github.com/vllm-project/vllm/pull/6317: the size report alone
        let t = "[7/7] Executing 'cuda_gpu_mem_size_sum' stats report\n\n  Total (MB)    Count   Avg (MB)  Med (MB)  Min (MB)  Max (MB)  StdDev (MB)            Operation\n -------------  ------  --------  --------  --------  --------  -----------  ------------------------------\n 294088757.097  783962   375.131   167.772     0.000  2101.346      335.997  [CUDA memcpy Host-to-Device]\n         1.319   25605     0.000     0.000     0.000     0.002        0.000  [CUDA memcpy Device-to-Host]\n";
        let s = parse_nsys(t);
        assert_eq!(s.mem_sizes.len(), 2);
        assert_eq!(s.mem_sizes[0].count, Some(783_962));
        assert!(s.memops.is_empty());
    }

    /// The sync and enqueue calls by the Runtime API's "API synchronization behavior", with
    /// nsys's version suffixes.
    #[test]
    fn blocking_and_enqueueing_calls() {
        for n in [
            "cudaStreamSynchronize",
            "cudaDeviceSynchronize",
            "cuStreamSynchronize",
            "cudaMemcpy",
            "cudaMemcpy_v3020",
            "cudaMemcpyToSymbol",
            "cuMemcpyDtoH_v2",
        ] {
            assert!(is_host_sync(n), "{n}");
        }
        for n in [
            "cudaMemcpyAsync",
            "cudaMemcpyAsync_v3020",
            "cudaEventQuery",
            "cuStreamQuery",
            "cudaLaunchKernel",
            "cudaMemset",
        ] {
            assert!(!is_host_sync(n), "{n}");
        }
        for n in [
            "cudaLaunchKernel",
            "cuLaunchKernel",
            "cudaMemcpyAsync_v3020",
            "cuMemcpyHtoDAsync_v2",
            "cudaMemsetAsync",
            "cudaGraphLaunch_v10000",
        ] {
            assert!(is_enqueue(n), "{n}");
        }
        assert!(!is_enqueue("cudaMalloc") && !is_enqueue("cudaMemcpy"));
        assert_eq!(nvprof_time("252ns"), Some(252.0));
        assert_eq!(nvprof_time("4.42518s"), Some(4.42518e9));
        assert_eq!(nvprof_time("17.498ms"), Some(17.498e6));
    }

    /// Prose that names the tools is not a report; and no prefix of a report panics.
    #[test]
    fn prose_is_not_a_report_and_cut_text_reads() {
        let prose = "I profiled with nsys and cudaStreamSynchronize takes most of the API time; nvprof said the same.\n";
        assert!(!looks_like_nsys(prose) && !looks_like_nvprof(prose));
        assert!(NsysStatsKind.parse(prose).is_err());
        assert!(NvprofSummaryKind.parse(prose).is_err());
        for f in [
            "nsys/stats_vector_add_launch_bound.txt",
            "nsys/rule_memcpy_async_pageable.txt",
            "nsys/cudaapisum_2020_oneflow.txt",
            "nsys/nvprof_dtod_tiny_copies.txt",
        ] {
            let t = fixture(f);
            for p in prefixes(&t, 37) {
                let _ = NsysStatsKind.parse(p);
                let _ = NvprofSummaryKind.parse(p);
            }
            assert!(
                NsysStatsKind.parse(&t).is_ok() || NvprofSummaryKind.parse(&t).is_ok(),
                "{f}"
            );
        }
    }
}
