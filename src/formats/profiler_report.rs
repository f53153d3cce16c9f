//! PyTorch's profiler table, pasted to show where a training step spends its time, read from
//! its producer:
//!
//! - PyTorch's `prof.key_averages().table()`: `torch/autograd/profiler_util.py`, `_build_table`
//!   (pytorch/pytorch, read at 006bb57b). Columns are right-aligned in fixed widths (the name
//!   column up to `max_name_column_width=55`, a longer name cut to 52 characters and `...`), two
//!   spaces between columns, a rule of dashes per column (`header_sep`) above and below the
//!   header row, and after the rows the rule again and `Self CPU time total: <time>` (then
//!   `Self CUDA time total: …` when the device recorded time). The header is `Name`, optionally
//!   `Overload Name`, `Self CPU %`, `Self CPU`, `CPU total %`, `CPU total`, `CPU time avg`, the
//!   device's four (`Self CUDA`, `Self CUDA %`, `CUDA total`, `CUDA time avg`), memory columns,
//!   `# of Calls` (`Number of Calls` and `Self CPU total %` before PyTorch 1.8), then `Node ID`,
//!   `Input Shapes`, `Source Location`, `Total FLOPs`. Percentages are `_format_time_share`
//!   (`12.34%`) and times `_format_time` (`791.161ms`, `78.632s`, `0.000us`).
//!
//! Lightning's `SimpleProfiler.summary()` report is read by
//! `formats::job_text::lightning_profiler_report`.
//!
//! One report is a share of time over the profiled steps, not a moment like a py-spy dump.
//!
//! Where the table shows both, the DataLoader's share of the profiled steps is read from it
//! ([`torch_table_loader`]): torch's DataLoader iterator records each batch as
//! `enumerate(DataLoader)#{iterator class}.__next__` (`torch/utils/data/dataloader.py`,
//! `_BaseDataLoaderIter.__init__` sets `_profile_name`, `__next__` runs under
//! `torch.autograd.profiler.record_function(self._profile_name)`; `_SingleProcessDataLoaderIter`
//! without workers, `_MultiProcessingDataLoaderIter` with them), and Lightning's
//! `PyTorchProfiler.start` (`src/lightning/pytorch/profilers/pytorch.py`) wraps each action in
//! `record_function("[pl][profile]" + action_name)`, the training fetch being
//! `[_TrainingEpochLoop].train_dataloader_next` (2.x; `[TrainingEpochLoop]…` 1.6-1.9,
//! `get_train_batch` before). Its `summary()` prints `FIT Profiler Report`, `Profile stats for:
//! records` and this table (`profiler.py`, `_stats_to_str`).
//!
//! cProfile listings (`pstats.Stats.print_stats`, CPython `Lib/pstats.py`, read at 43993c56):
//! `N function calls (M primitive calls) in T seconds`, `Ordered by: …`, the title `ncalls
//! tottime percall cumtime percall filename:lineno(function)` and rows of `ncalls` (`n/m` when
//! recursive) right-aligned in 9, four `%8.3f` times and `filename:lineno(function)` (or
//! `{built-in method …}`, `{method … of … objects}`). Lightning's `AdvancedProfiler.summary`
//! (`src/lightning/pytorch/profilers/advanced.py`) prints one per action under `Profile stats
//! for: {action}`, and `torch.utils.bottleneck` one under `cProfile output`. They are read as
//! the job's text ([`looks_like_pstats`]) and judged by no rule: `AdvancedProfiler.start`
//! disables every action's profile before enabling the new one ("Disable all profilers before
//! starting a new one"), so an outer action (`run_training_epoch`) stops counting when the
//! fetch inside it starts and no section measures the step the fetch belongs to; and in a
//! whole-process cProfile the main process waits on its workers in `poll`/`select` calls that
//! other waits share.

/// A `key_averages().table()` header: its row, 0-based.
pub fn torch_table_header(text: &str) -> Option<usize> {
    text.lines().take(20_000).position(is_torch_table_header)
}

fn is_torch_table_header(l: &str) -> bool {
    let w: Vec<&str> = cells(l);
    w.first() == Some(&"Name")
        && (w.contains(&"Self CPU %") || w.contains(&"Self CPU total %"))
        && (w.contains(&"CPU total %") || w.contains(&"CPU total"))
}

/// `_build_table`'s cells of one line: runs of text separated by two spaces or more (one space
/// stays inside a cell: `Self CPU %`, `# of Calls`).
fn cells(l: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let b = l.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' || b[i] == b'\t' {
            let gap = b[i..]
                .iter()
                .take_while(|c| **c == b' ' || **c == b'\t')
                .count();
            if (gap >= 2 || b[i] == b'\t') && start.is_some() {
                out.push(&l[start.take().unwrap_or(i)..i]);
            }
            i += gap;
            continue;
        }
        if start.is_none() {
            start = Some(i);
        }
        i += 1;
    }
    if let Some(s) = start {
        out.push(&l[s..]);
    }
    out
}

/// `_format_time_share`: `12.34%`.
fn is_share(c: &str) -> bool {
    c.strip_suffix('%')
        .is_some_and(|n| !n.is_empty() && n.trim_start_matches('-').parse::<f64>().is_ok())
}

/// `_format_time`: `791.161ms`, `78.632s`, `0.000us`, `-16028.000us`.
fn is_time(c: &str) -> bool {
    ["us", "ms", "s"].iter().any(|u| {
        c.strip_suffix(u).is_some_and(|n| {
            !n.is_empty()
                && n.trim_start_matches('-')
                    .chars()
                    .all(|ch| ch.is_ascii_digit() || ch == '.')
                && n.chars().any(|ch| ch.is_ascii_digit())
        })
    })
}

/// The five CPU cells `_build_table` prints from cell `k` on (after the name, and an `Overload
/// Name` when there is one): `Self CPU %`, `Self CPU`, `CPU total %` (`0` where torch printed no
/// share), `CPU total`, `CPU time avg`.
fn cpu_cells_at(w: &[&str], k: usize) -> bool {
    w.len() > k + 4
        && is_share(w[k])
        && is_time(w[k + 1])
        && (is_share(w[k + 2]) || w[k + 2] == "0")
        && is_time(w[k + 3])
        && is_time(w[k + 4])
}

/// A row of the table without its header (a paste of the rows alone): a name, then the CPU
/// columns `Self CPU %`, `Self CPU`, `CPU total %`, `CPU total`, `CPU time avg` as
/// `_build_table` prints them, and a count of calls after them.
fn is_torch_table_row(l: &str) -> bool {
    let w = cells(l);
    if w.len() < 7 {
        return false;
    }
    // an `Overload Name` column may stand between the name and the numbers
    (1..=2).any(|k| {
        w.len() > k + 5
            && cpu_cells_at(&w, k)
            && w[k + 5..]
                .iter()
                .any(|c| c.chars().all(|ch| ch.is_ascii_digit()))
    })
}

/// True when the text holds a `key_averages().table()`: its header, or two rows of it, or a
/// row and the `Self CPU time total:` line under it.
pub fn looks_like_torch_table(text: &str) -> bool {
    if torch_table_header(text).is_some() {
        return true;
    }
    let rows = text
        .lines()
        .take(20_000)
        .filter(|l| is_torch_table_row(l))
        .count();
    let total = text
        .lines()
        .take(20_000)
        .any(|l| total_line(l.trim()).is_some());
    rows >= 2 || rows >= 1 && total
}

/// `Self CPU time total: 195.526ms` (the device's `Self CUDA time total: …` too).
fn total_line(l: &str) -> Option<&str> {
    let rest = l.strip_prefix("Self ")?;
    let (_, t) = rest.split_once(" time total: ")?;
    is_time(t.trim()).then_some(t.trim())
}

/// `_format_time` back to seconds: `791.161ms` is 0.791161, `20.159s` 20.159.
fn seconds(c: &str) -> Option<f64> {
    if !is_time(c) {
        return None;
    }
    let (n, scale) = if let Some(n) = c.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = c.strip_suffix("ms") {
        (n, 1e-3)
    } else {
        (c.strip_suffix('s')?, 1.0)
    };
    n.parse::<f64>().ok().map(|v| v * scale)
}

/// A row of `_build_table` (as [`is_torch_table_row`] reads it): the name as printed, the
/// `CPU total` cell in seconds and the `# of Calls` (the first cell of digits alone after the
/// CPU columns: device times carry a unit, shares a `%`, memory `Gb`/`Mb`).
fn table_row(l: &str) -> Option<(&str, f64, Option<u64>)> {
    let w = cells(l);
    (1..=2).find_map(|k| {
        if !(w.len() > k + 5 && cpu_cells_at(&w, k)) {
            return None;
        }
        let calls = w[k + 5..]
            .iter()
            .find(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_digit()))?;
        Some((w[0], seconds(w[k + 3])?, calls.parse::<u64>().ok()))
    })
}

/// `name` as `_build_table` prints `full`: whole, or cut to 52 characters and `...` when it is
/// 52 or longer (`len(name) >= max_name_column_width - 3`).
fn printed_as(printed: &str, full: &str) -> bool {
    printed == full
        || printed
            .strip_suffix("...")
            .is_some_and(|p| p.len() >= 52 && full.starts_with(p))
}

/// The training DataLoader's batch fetch, by the names its producers record it under:
/// torch's iterator (any `enumerate(DataLoader)#…`; the prefix survives the cut) first,
/// Lightning's action around it second (`[pl][profile][{loop}].train_dataloader_next`,
/// `[pl][profile]get_train_batch`).
fn loader_kind(name: &str) -> Option<u8> {
    if name.starts_with("enumerate(DataLoader)#") {
        return Some(0);
    }
    let rest = name.strip_prefix("[pl][profile]")?;
    if printed_as(name, "[pl][profile]get_train_batch") {
        return Some(1);
    }
    let (body, cut) = match rest.strip_suffix("...") {
        Some(b) => (b, true),
        None => (rest, false),
    };
    let tail = &body[body.strip_prefix('[')?.find(']')? + 2..];
    let next = ".train_dataloader_next";
    (tail == next || cut && tail.len() >= 6 && next.starts_with(tail)).then_some(1)
}

/// The DataLoader's share of the profiled steps in a `key_averages().table()` (or the legacy
/// autograd profiler's per-event table that `torch.utils.bottleneck` prints), judged only where
/// the table shows both: the loader's `CPU total` (its rows summed: one per iterator class, or
/// one per event in the per-event table) against the steps' — the `ProfilerStep*` row that
/// `torch.profiler.profile.step()` records around each step (`ProfilerStep#N` rows summed in a
/// per-event table), else the table's `Self CPU time total` footer (every event's self time,
/// all threads: the share is then a floor). Each table (up to its footer) is read alone:
/// `bottleneck` prints a CPU-mode and a CUDA-mode table one after the other. A loader total
/// above the whole (beyond the printed rounding) is not judged.
pub fn torch_table_loader(text: &str) -> Option<crate::formats::job_text::LoaderProfile> {
    // (1-based line, name, cpu total s, calls)
    let mut rows: Vec<(usize, &str, f64, Option<u64>)> = Vec::new();
    let judge = |rows: &[(usize, &str, f64, Option<u64>)], footer: Option<f64>| {
        let best = rows.iter().filter_map(|r| loader_kind(r.1)).min()?;
        let loader: Vec<_> = rows
            .iter()
            .filter(|r| loader_kind(r.1) == Some(best))
            .collect();
        let loader_s: f64 = loader.iter().map(|r| r.2).sum();
        let step_star = rows
            .iter()
            .filter(|r| r.1 == "ProfilerStep*" && r.2 > 0.0)
            .map(|r| r.2)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let steps_s: f64 = rows
            .iter()
            .filter(|r| {
                r.1.strip_prefix("ProfilerStep#")
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            })
            .map(|r| r.2)
            .sum();
        let (whole, whole_s) = match (step_star, steps_s > 0.0, footer) {
            (Some(s), _, _) => ("ProfilerStep*".to_string(), s),
            (None, true, _) => ("the ProfilerStep#N rows".to_string(), steps_s),
            (None, false, Some(f)) => ("the table's Self CPU time total".to_string(), f),
            _ => return None,
        };
        (loader_s > 0.0 && whole_s > 0.0 && loader_s <= whole_s * 1.05).then(|| {
            crate::formats::job_text::LoaderProfile {
                report: "torch profiler table",
                action: loader[0].1.to_string(),
                calls: loader.iter().map(|r| r.3).sum::<Option<u64>>(),
                loader_s,
                whole_s,
                whole,
                share: (loader_s / whole_s).min(1.0),
                line: loader[0].0,
            }
        })
    };
    for (i, l) in text.lines().take(20_000).enumerate() {
        let t = l.trim();
        if let Some(total) = t
            .strip_prefix("Self CPU time total:")
            .and_then(|v| seconds(v.trim()))
        {
            if let Some(p) = judge(&rows, Some(total)) {
                return Some(p);
            }
            rows.clear();
            continue;
        }
        if let Some((name, cpu_total, calls)) = table_row(l) {
            rows.push((i + 1, name, cpu_total, calls));
        }
    }
    judge(&rows, None)
}

/// Host-to-device copies from pageable memory in a `key_averages().table()` with device columns:
/// Kineto names each such copy `Memcpy HtoD (Pageable -> Device)` (the activity name
/// `libkineto` builds from the CUPTI copy kind and the source and destination memory kinds,
/// `ActivityType::GPU_MEMCPY`), and the table gives its device time as a share of every
/// device event's (`Self CUDA %`, the cell after `Self CUDA`, after the five CPU cells).
#[derive(Debug, Clone, PartialEq)]
pub struct TablePageable {
    /// Copies (`# of Calls`).
    pub calls: Option<u64>,
    /// Their share of the table's device time, 0-1.
    pub device_share: f64,
    /// 1-based line of the row.
    pub line: usize,
}

/// The first `Memcpy HtoD (Pageable -> Device)` row of a profiler table (see [`TablePageable`]).
pub fn torch_table_pageable(text: &str) -> Option<TablePageable> {
    text.lines().take(20_000).enumerate().find_map(|(i, l)| {
        let w = cells(l);
        if w.first() != Some(&"Memcpy HtoD (Pageable -> Device)") {
            return None;
        }
        (1..=2).find_map(|k| {
            let cpu_ok = w.len() > k + 6 && cpu_cells_at(&w, k);
            if !cpu_ok || !is_time(w[k + 5]) || !is_share(w[k + 6]) {
                return None;
            }
            let share: f64 = w[k + 6].trim_end_matches('%').parse().ok()?;
            let calls = w[k + 7..]
                .iter()
                .find(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_digit()))
                .and_then(|c| c.parse().ok());
            (share.is_finite() && (0.0..=100.0).contains(&share)).then_some(TablePageable {
                calls,
                device_share: share / 100.0,
                line: i + 1,
            })
        })
    })
}

/// A table's kernel launch calls and its device time ([`torch_table_launches`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TableLaunches {
    /// Each launch call's row, once per name.
    pub launches: Vec<TableLaunch>,
    /// The table's `Self CUDA time total`, seconds.
    pub device_total_s: f64,
}

/// One launch call's row of a profiler table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableLaunch {
    pub name: String,
    /// `# of Calls`.
    pub calls: Option<u64>,
    /// `CPU total`, seconds.
    pub cpu_total_s: f64,
}

/// The kernel launches of a `key_averages().table()` with device columns, which the evidence
/// layer turns into the Nsight Systems summary the launch rules read
/// (`evidence::nsys_stats::from_torch_table`): the host's launch
/// rows (`cudaLaunchKernel`, `cuLaunchKernel`, `cudaLaunchKernelExC`: Kineto records each CUDA
/// runtime and driver call the CPU makes as its own event, `ActivityType::CUDA_RUNTIME` /
/// `CUDA_DRIVER`, so the table lists them with their `CPU total` and `# of Calls`) against the
/// device time of the whole table (`_build_table`'s `Self CUDA time total:` footer, the sum of
/// every device event's self time; `CUDA time total:` before PyTorch 1.11 printed `Self`).
/// A table keeps its top `row_limit` rows only, so the kernels themselves are not all there:
/// the launches are counted by the launch calls and each one's device time is taken as their
/// mean (`Self CUDA time total` / launches), the figure the summary's `gpu_op_median_us`
/// stands for where a report has no median. Each table up to its footers is read alone; a
/// table with a `cudaGraphLaunch` row (one call running a whole graph of kernels) or without
/// a launch row or a device total is not read.
pub fn torch_table_launches(text: &str) -> Option<TableLaunches> {
    let is_launch = |n: &str| {
        matches!(
            n,
            "cudaLaunchKernel" | "cudaLaunchKernelExC" | "cuLaunchKernel" | "cuLaunchKernelEx"
        )
    };
    let mut launches: Vec<TableLaunch> = Vec::new();
    let mut graph = false;
    let mut self_cpu_seen = false;
    for l in text.lines().take(20_000) {
        let t = l.trim();
        if t.starts_with("Self CPU time total:") {
            self_cpu_seen = true;
            continue;
        }
        let device_total = t
            .strip_prefix("Self CUDA time total:")
            .or_else(|| t.strip_prefix("CUDA time total:"))
            .and_then(|v| seconds(v.trim()));
        if let Some(dev) = device_total {
            let calls: u64 = launches.iter().filter_map(|r| r.calls).sum();
            if !graph && calls > 0 && dev > 0.0 {
                return Some(TableLaunches {
                    launches,
                    device_total_s: dev,
                });
            }
            launches.clear();
            graph = false;
            self_cpu_seen = false;
            continue;
        }
        if self_cpu_seen && !t.is_empty() {
            // a footer without the device's: the next table starts
            launches.clear();
            graph = false;
            self_cpu_seen = false;
        }
        let Some((name, cpu_total, calls)) = table_row(l) else {
            continue;
        };
        if name == "cudaGraphLaunch" || name == "cuGraphLaunch" {
            graph = true;
        }
        if is_launch(name) && !launches.iter().any(|r| r.name == name) {
            launches.push(TableLaunch {
                name: name.to_string(),
                calls,
                cpu_total_s: cpu_total,
            });
        }
    }
    None
}

/// A `pstats` row (`Stats.print_line`): `ncalls` (`n` or `n/m`), `tottime`, `percall`,
/// `cumtime`, `percall` as `%8.3f` (a `percall` of no calls is blank), then the function as
/// `func_std_string` writes it: `file:line(name)`, `{built-in method …}`, `{method … objects}`.
static PSTATS_ROW: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^\s*\d+(?:/\d+)?\s+\d+\.\d{3}\s+(?:\d+\.\d{3}\s+)?\d+\.\d{3}\s+(?:\d+\.\d{3}\s+)?(?:\{[^}]*\}|\S.*:\d+\(.*\))\s*$",
    )
    .expect("static regex")
});

/// `pstats.Stats.print_stats`'s first line: `{total_calls} function calls[ ({prim_calls}
/// primitive calls)] in {total_tt:.3f} seconds` -> total_tt, the sum of every function's own time
/// (of every thread the profiler saw: Python 3.12's cProfile sees them all).
fn pstats_total(l: &str) -> Option<f64> {
    let w: Vec<&str> = l.split_whitespace().collect();
    let n = w.len();
    (n >= 6
        && w[0].chars().all(|c| c.is_ascii_digit())
        && w[1] == "function"
        && w[2] == "calls"
        && w[n - 3] == "in"
        && w[n - 1] == "seconds")
        .then(|| w[n - 2].parse::<f64>().ok())
        .flatten()
        .filter(|t| t.is_finite() && *t > 0.0)
}

/// A `print_line` row with both `percall`s (the function was called): its `cumtime` and the
/// function as printed.
fn pstats_cumtime(l: &str) -> Option<(f64, &str)> {
    if !PSTATS_ROW.is_match(l) {
        return None;
    }
    let w: Vec<&str> = l.split_whitespace().collect();
    let nums = w.iter().take_while(|t| {
        t.split('/')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit() || c == '.'))
    });
    (nums.count() == 5).then(|| Some((w[3].parse::<f64>().ok()?, w[5])))?
}

/// `…/torch/utils/data/dataloader.py:736(__next__)` (any install path, `\` on Windows): torch's
/// `_BaseDataLoaderIter.__next__`, the one `__next__` of `torch/utils/data/dataloader.py`, through
/// which the training loop takes every batch, whether the loader fetches it itself
/// (num_workers=0) or waits for a worker's.
fn is_loader_next(func: &str) -> bool {
    let Some((file, rest)) = func.rsplit_once(':') else {
        return false;
    };
    let file = file.replace('\\', "/");
    file.ends_with("torch/utils/data/dataloader.py")
        && rest.ends_with("(__next__)")
        && rest[..rest.len() - "(__next__)".len()]
            .chars()
            .all(|c| c.is_ascii_digit())
}

/// `…/torch/utils/data/_utils/fetch.py:49(fetch)`: a dataset fetcher's `fetch`
/// (`_MapDatasetFetcher` / `_IterableDatasetFetcher`), which runs in the process that makes the
/// batches: the training process only with num_workers=0 (`_SingleProcessDataLoaderIter._next_data`
/// calls it; with workers, `_utils/worker.py`'s `_worker_loop` does, in the worker processes,
/// which cProfile does not follow).
pub fn pstats_fetch_row(text: &str) -> Option<(usize, String)> {
    text.lines().take(20_000).enumerate().find_map(|(i, l)| {
        let (_, func) = pstats_cumtime(l)?;
        let (file, rest) = func.rsplit_once(':')?;
        (file
            .replace('\\', "/")
            .ends_with("torch/utils/data/_utils/fetch.py")
            && rest.ends_with("(fetch)"))
        .then(|| (i + 1, func.to_string()))
    })
}

/// The DataLoader's share of a cProfile listing (`pstats.Stats.print_stats`, CPython
/// `Lib/pstats.py`): the cumulative time of torch's `__next__` row (`is_loader_next`) against
/// the listing's `in T seconds`, the time the profiled code (every thread of it) spent. The
/// loop's wait for batches is inside `__next__` whoever makes them, so this is the share of the
/// profiled time the loop waited on its loader; other threads' time (the pin-memory thread's)
/// only adds to the whole, so the share is a floor. Not read: Lightning's AdvancedProfiler
/// sections (`Profile stats for: {action}`; each profiles one action alone, and the fetch's
/// own section is all fetch — see the module header), a listing without the `__next__` row
/// (sorted or cut so that it is not shown), a `__next__` above the whole.
pub fn pstats_loader(text: &str) -> Option<crate::formats::job_text::LoaderProfile> {
    if text.contains("Profile stats for:") {
        return None;
    }
    let mut whole: Option<f64> = None;
    for (i, l) in text.lines().take(20_000).enumerate() {
        if let Some(t) = pstats_total(l) {
            whole = Some(t);
            continue;
        }
        let Some((cum, func)) = pstats_cumtime(l) else {
            continue;
        };
        if !is_loader_next(func) {
            continue;
        }
        let w = whole?;
        let calls = l
            .split_whitespace()
            .next()
            .and_then(|c| c.split('/').next())
            .and_then(|c| c.parse().ok());
        return (cum > 0.0 && cum <= w * 1.05).then(|| crate::formats::job_text::LoaderProfile {
            report: "cProfile listing",
            action: func.to_string(),
            calls,
            loader_s: cum,
            whole_s: w,
            whole: "the listing".to_string(),
            share: (cum / w).min(1.0),
            line: i + 1,
        });
    }
    None
}

/// True when the text holds a cProfile listing as `pstats.Stats.print_stats` prints it (see the
/// module header): the `ncalls  tottime  percall  cumtime  percall filename:lineno(function)`
/// title, or two rows, or a row and the `N function calls … in T seconds` line.
pub fn looks_like_pstats(text: &str) -> bool {
    let mut rows = 0;
    let mut calls_line = false;
    for l in text.lines().take(20_000) {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w == [
            "ncalls",
            "tottime",
            "percall",
            "cumtime",
            "percall",
            "filename:lineno(function)",
        ] {
            return true;
        }
        calls_line |= w.len() >= 5
            && w[0].chars().all(|c| c.is_ascii_digit())
            && w[1] == "function"
            && w[2] == "calls"
            && l.trim_end().ends_with(" seconds");
        if PSTATS_ROW.is_match(l) {
            rows += 1;
        }
        if rows >= 2 || rows >= 1 && calls_line {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_averages_table_is_read_by_its_header_or_its_rows() {
        // github.com/pytorch/pytorch/issues/124547: a CPU-only table (no device columns)
        let cpu = "-----------------  ------------  ------------  ------------  ------------  ------------  ------------  \n             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n-----------------  ------------  ------------  ------------  ------------  ------------  ------------  \n    ProfilerStep*        50.64%       5.776ms       100.00%      11.407ms     126.744us            90  \n";
        assert_eq!(torch_table_header(cpu), Some(1));
        assert!(looks_like_torch_table(cpu));
        // github.com/pytorch/pytorch/issues/44784: PyTorch 1.6's wording of the header
        let old = "Name                           Self CPU total %  Self CPU total   CPU total %      CPU total        CPU time avg     CUDA total %     CUDA total       CUDA time avg    Number of Calls  Input Shapes                                   \n";
        assert!(looks_like_torch_table(old));
        // github.com/sgl-project/sglang/pull/11032: rows pasted without the header
        let rows = "                                  cudaDeviceSynchronize         5.30%     164.896us         5.30%     164.896us      54.965us       0.000us         0.00%       0.000us       0.000us             3  \n                                            aten::addmm         4.55%     141.430us         5.77%     179.635us      59.878us      34.848us         5.98%      34.848us      11.616us             3  \n";
        assert!(looks_like_torch_table(rows));
        // github.com/uccl-project/uccl/issues/684: the tail, one row short of two, and the total
        let tail = "                  cudaStreamSynchronize         0.02%      35.851us         0.02%      35.851us      35.851us             1\n---------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------\nSelf CPU time total: 195.526ms\n";
        assert!(looks_like_torch_table(tail));
        // composer#2647's memory table: a `--` count of FLOPs, negative times
        let mem = "                                aten::nll_loss_backward        -0.08%  -16028.000us         3.88%     741.826ms      11.591ms      24.59 Gb      10.76 Gb            64            --  \n";
        assert!(is_torch_table_row(mem));
        // not a table: a training log line with a percentage, a py-spy frame
        assert!(!looks_like_torch_table(
            "Epoch 1:  45%|████▌     | 45/100 [00:10<00:12,  4.50it/s, loss=0.512]\n"
        ));
        assert!(!looks_like_torch_table(
            "    _try_get_data (torch/utils/data/dataloader.py:1133)\n"
        ));
        assert!(!looks_like_torch_table("Self CPU time total: 2.304ms\n"));
    }

    #[test]
    fn the_loader_share_is_read_where_the_table_shows_the_loader_and_the_whole() {
        use crate::test_corpus as corpus;
        // SalvatoreConza/AdaptFNO `profile` (problem: the loop waits on its workers): the
        // per-event CUDA-mode table of torch.utils.bottleneck, 15 `__next__` events against the
        // footer
        let p =
            torch_table_loader(&corpus("h47_bottleneck_adaptfno_loader_poll_cfgrib.txt")).unwrap();
        assert_eq!(p.report, "torch profiler table");
        assert!(
            p.action
                .starts_with("enumerate(DataLoader)#_MultiProcessingDataLoaderIter")
        );
        assert_eq!(p.calls, Some(15));
        assert_eq!(p.whole, "the table's Self CPU time total");
        assert!((p.whole_s - 186.591).abs() < 1e-9);
        assert!(p.share > 0.99, "{p:?}");
        // saforem2/vault GenSLM notes: Lightning's PyTorchProfiler report (unquoted as paste
        // unwrapping leaves it), the worker-less loader against ProfilerStep*
        let quoted = corpus("h47_plprof_genslm_fit_report_single_process_loader.txt");
        let t: String = quoted
            .lines()
            .map(|l| format!("{}\n", l.strip_prefix("> ").unwrap_or(l)))
            .collect();
        let p = torch_table_loader(&t).unwrap();
        assert_eq!(p.whole, "ProfilerStep*");
        assert_eq!((p.calls, p.line), (Some(3), 18));
        assert!((p.share - 0.149889 / 1.411).abs() < 1e-9, "{p:?}");
        // a table without a whole: ClinicalDG#2 and neural_prophet#972 cut before the footer and
        // without ProfilerStep (the `CPU total %` column is a share of every thread's self time,
        // not of the steps); a table without a loader: pytorch#124547, STGym's PyTorchProfiler
        // table; midi-lm#7's report cut before the loader row's numbers
        for name in [
            "h3_profiler_single_process_dataloader.txt",
            "h41_profiler_neuralprophet972_cpu_single_process_loader.txt",
            "h41_profiler_pytorch124547_cpu_only_profilerstep.txt",
            "h47_plprof_stgym_pageable_htod_copies.txt",
            "h47_plprof_midilm7_loader_row_cut.txt",
        ] {
            assert_eq!(torch_table_loader(&corpus(name)), None, "{name}");
        }
        // Lightning's action row when torch's is not shown, cut at 52 characters; its val_next
        // is not the training fetch; the footer of another table does not pair with it
        let row = |name: &str, total: &str| {
            format!(
                "{name:>55}        10.00%       1.000ms        50.00%      {total:>8}      10.000ms             5  \n"
            )
        };
        let t = format!(
            "{}{}Self CPU time total: 2.000s\n",
            row(
                "[pl][profile][_TrainingEpochLoop].train_dataloader_n...",
                "1.000s"
            ),
            row("[pl][profile][_EvaluationLoop].val_next", "0.500s")
        );
        let p = torch_table_loader(&t).unwrap();
        assert!((p.share - 0.5).abs() < 1e-9);
        assert_eq!(loader_kind("[pl][profile][_EvaluationLoop].val_next"), None);
        assert_eq!(loader_kind("[pl][profile]get_train_batch"), Some(1));
        let t = format!(
            "Self CPU time total: 2.000s\n{}",
            row(
                "enumerate(DataLoader)#_MultiProcessingDataLoaderIter...",
                "1.000s"
            )
        );
        assert_eq!(torch_table_loader(&t), None);
        // a loader total above the whole is another thread's or another table's
        let t = format!(
            "{}Self CPU time total: 0.500s\n",
            row(
                "enumerate(DataLoader)#_SingleProcessDataLoaderIter._...",
                "1.000s"
            )
        );
        assert_eq!(torch_table_loader(&t), None);
        assert_eq!(seconds("210.225ms"), Some(0.210225));
        assert_eq!(seconds("20.159s"), Some(20.159));
    }

    #[test]
    fn pageable_copies_are_read_with_their_share_of_the_device_time() {
        use crate::test_corpus as corpus;
        // made on the H200: a 64 MiB pageable .to(device) every step, 30 copies, 31.29%
        let p = torch_table_pageable(&corpus("h200p_keyavg_itemsync.txt")).unwrap();
        assert_eq!((p.calls, p.line), (Some(30), 36));
        assert!((p.device_share - 0.3129).abs() < 1e-9);
        // xiaohan2012's STGym post: Lightning's PyTorchProfiler table on an A30, 1231 copies, 57.47%
        let p = torch_table_pageable(&corpus("h47_plprof_stgym_pageable_htod_copies.txt")).unwrap();
        assert_eq!(p.calls, Some(1231));
        assert!((p.device_share - 0.5747).abs() < 1e-9);
        // no such row (the healthy and the starved job), or a CPU-only table (no device cells)
        for name in ["h200p_keyavg_healthy.txt", "h200p_keyavg_starved.txt"] {
            assert_eq!(torch_table_pageable(&corpus(name)), None, "{name}");
        }
        let cpu_only = "                       Memcpy HtoD (Pageable -> Device)         0.00%       0.000us         0.00%       0.000us       0.000us            30  \n";
        assert_eq!(torch_table_pageable(cpu_only), None);
    }

    #[test]
    fn kernel_launches_are_read_against_the_tables_device_time() {
        use crate::test_corpus as corpus;
        // duoan/playground-cuda's eager preset: 3264 cudaLaunchKernel calls, 22.039 ms of host
        // time, 8.311 ms of device time in the whole table
        let s = torch_table_launches(&corpus(
            "h129_torchprof_playgroundcuda_eager_micro_ops_launch_bound.txt",
        ))
        .unwrap();
        assert_eq!(s.launches.len(), 1);
        assert_eq!(s.launches[0].name, "cudaLaunchKernel");
        assert_eq!(s.launches[0].calls, Some(3264));
        assert!((s.launches[0].cpu_total_s - 0.022_039).abs() < 1e-9);
        assert!((s.device_total_s - 0.008_311).abs() < 1e-9);
        // the data preset's table lists no launch row in its top rows; the H200 captures'
        // tables, a CPU-only table (pytorch#124547) and a Lightning report: nothing read
        for name in [
            "h129_torchprof_playgroundcuda_data_workers0_dataloader_self_cpu.txt",
            "h41_profiler_pytorch124547_cpu_only_profilerstep.txt",
        ] {
            assert_eq!(torch_table_launches(&corpus(name)), None, "{name}");
        }
        // a graph launch runs many kernels per call: not read
        let graph = "                                       cudaLaunchKernel        20.59%      22.039ms        20.59%      22.039ms       6.752us       0.000us         0.00%       0.000us       0.000us          3264  \n                                        cudaGraphLaunch         1.00%       1.000ms         1.00%       1.000ms      10.000us       0.000us         0.00%       0.000us       0.000us           100  \nSelf CPU time total: 107.043ms\nSelf CUDA time total: 8.311ms\n";
        assert_eq!(torch_table_launches(graph), None);
        // without the device's footer (a CPU-only profile of the same rows): nothing
        let no_device = graph.replace("                                        cudaGraphLaunch         1.00%       1.000ms         1.00%       1.000ms      10.000us       0.000us         0.00%       0.000us       0.000us           100  \n", "").replace("Self CUDA time total: 8.311ms\n", "");
        assert_eq!(torch_table_launches(&no_device), None);
        // the same without the graph launch is read, and a pre-1.11 `CUDA time total:` footer too
        let plain = graph.replace("                                        cudaGraphLaunch         1.00%       1.000ms         1.00%       1.000ms      10.000us       0.000us         0.00%       0.000us       0.000us           100  \n", "");
        assert!(torch_table_launches(&plain).is_some());
        let old = plain.replace("Self CUDA time total", "CUDA time total");
        assert!(torch_table_launches(&old).is_some());
    }

    #[test]
    fn a_cprofile_listing_gives_the_loader_share_through_torchs_next() {
        use crate::test_corpus as corpus;
        // made on the H200 (bench/capture_h200_profilers.sh): 30 steps of a num_workers=0 job,
        // `__next__` 1.178 s of the listing's 1.420 s, and the fetcher in the training process
        let p = pstats_loader(&corpus("h200p_cprofile_starved.txt")).unwrap();
        assert_eq!(p.report, "cProfile listing");
        assert!(
            p.action
                .ends_with("torch/utils/data/dataloader.py:736(__next__)")
        );
        assert_eq!((p.calls, p.line), (Some(30), 9));
        assert!((p.share - 1.178 / 1.420).abs() < 1e-9, "{p:?}");
        let (line, func) = pstats_fetch_row(&corpus("h200p_cprofile_starved.txt")).unwrap();
        assert_eq!(line, 11);
        assert!(func.ends_with("_utils/fetch.py:49(fetch)"));
        // the same job with 8 workers: `__next__` is not among the 30 rows shown, nor is the
        // fetcher (it runs in the workers); the item-sync job's listing neither
        for name in ["h200p_cprofile_healthy.txt", "h200p_cprofile_itemsync.txt"] {
            assert_eq!(pstats_loader(&corpus(name)), None, "{name}");
            assert_eq!(pstats_fetch_row(&corpus(name)), None, "{name}");
        }
        // Lightning's AdvancedProfiler sections profile one action each (the fetch's section
        // is all fetch): not read (choderalab/modelforge#141, Lightning-AI#782 and the H200's)
        for name in [
            "h47_advprof_modelforge141_training_step.txt",
            "h47_advprof_lightning782_get_train_batch.txt",
            "h200p_lightning_advanced_starved.txt",
        ] {
            assert_eq!(pstats_loader(&corpus(name)), None, "{name}");
        }
        // pstats' grammar: `n/m` calls, a Windows path, a `__next__` of another file, a row
        // before any total, a `__next__` above the total
        let row = |calls: &str, cum: &str, func: &str| {
            format!("{calls:>9}    0.001    0.000 {cum:>8}    0.039 {func}\n")
        };
        let win = format!(
            "         3082621 function calls (3080581 primitive calls) in 10.000 seconds\n\n{}",
            row(
                "40/20",
                "4.000",
                r"C:\Python310\lib\site-packages\torch\utils\data\dataloader.py:628(__next__)"
            )
        );
        let p = pstats_loader(&win).unwrap();
        assert_eq!(p.calls, Some(40));
        assert!((p.share - 0.4).abs() < 1e-9);
        let other = format!(
            "   10 function calls in 10.000 seconds\n{}",
            row("30", "4.000", "/x/mydata/dataloader.py:12(__next__)")
        );
        assert_eq!(pstats_loader(&other), None);
        let before = row(
            "30",
            "4.000",
            "/x/torch/utils/data/dataloader.py:736(__next__)",
        );
        assert_eq!(pstats_loader(&before), None);
        let above = format!("   10 function calls in 1.000 seconds\n{before}");
        assert_eq!(pstats_loader(&above), None);
        assert_eq!(pstats_total("   7 function calls in 0.000 seconds"), None);
    }

    #[test]
    fn cprofile_listings_are_read_as_pstats_prints_them() {
        use crate::test_corpus as corpus;
        // Lightning AdvancedProfiler sections (choderalab/modelforge#141, Lightning-AI#782,
        // kalekundert's notebook, rows pasted without their title), torch.utils.bottleneck's
        // cProfile section (clovaai/voxceleb_trainer#110) and a pstats file printed with
        // `print_stats(10)` (turboderp-org/exllamav2#455)
        for name in [
            "h47_advprof_modelforge141_training_step.txt",
            "h47_advprof_lightning782_get_train_batch.txt",
            "h47_advprof_kalekundert_loader_section_only.txt",
            "h47_advprof_kalekundert_rows_without_header.txt",
            "h47_bottleneck_voxceleb110_cprofile_cuda_calls.txt",
            "h47_cprofile_exllamav2_455_item_in_loop.txt",
        ] {
            assert!(looks_like_pstats(&corpus(name)), "{name}");
        }
        // rows alone, with `{…}` functions
        assert!(looks_like_pstats(
            "      289    4.347    0.015    4.347    0.015 {method 'cuda' of 'torch._C._TensorBase' objects}\n  1265289    1.193    0.000    1.951    0.000 /usr/lib/python3.6/posixpath.py:75(join)\n"
        ));
        // not a listing: a torch table row, a training log line, a lone count line, nvidia-smi
        assert!(!looks_like_pstats(
            "                  cudaStreamSynchronize         0.02%      35.851us         0.02%      35.851us      35.851us             1\n"
        ));
        assert!(!looks_like_pstats(
            "Epoch 1:  45%|████▌     | 45/100 [00:10<00:12,  4.50it/s, loss=0.512]\n"
        ));
        assert!(!looks_like_pstats(
            "         5844 function calls in 0.058 seconds\n"
        ));
        assert!(!looks_like_pstats(
            "|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |\n"
        ));
    }
}
