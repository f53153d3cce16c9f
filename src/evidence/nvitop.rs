//! `nvitop -1` (`--once`, github.com/XuehaiPan/nvitop): nvitop's one-shot print, an
//! nvidia-smi-like device table drawn with box characters, then a processes table. Read from
//! the producer's own printing code at v1.7.0 (commit 3e797b2):
//! `nvitop/tui/screens/main/panels/device.py` (`DevicePanel.header_lines`, `formats_full`,
//! `formats_compact`, `print`) and `nvitop/tui/screens/main/panels/process.py`
//! (`ProcessPanel.header_lines`, `take_snapshots`, `print`):
//!
//! - the header box: `│ NVITOP {version}  Driver Version: {driver}  CUDA Driver Version: {cuda} │`
//!   (0.x releases printed `│ NVIDIA-SMI {driver}    Driver Version: {driver}    CUDA Version:
//!   {cuda} │`), then nvidia-smi's column heads (`GPU  Name  Persistence-M│ Bus-Id  Disp.A │ ...`,
//!   `Fan  Temp  Perf  Pwr:Usage/Cap│  Memory-Usage │ GPU-Util  Compute M.`);
//! - per GPU two rows, `│ {index:>3}  {name:<19} {persistence:>4} │ {bus_id:<16} {disp:>3} │
//!   {ecc:>20} │` and `│ {fan:>3}  {temp:>4}  {pstate:^4} {power:>13} │ {memory_usage:>20} │
//!   {util:>7}  {compute_mode:>11} │`; the compact form is one row, `│ {index:>3} {fan:>3}
//!   {temp:>4} {pstate:<3}{power:>13} │ ...`; a terminal 100 columns wide adds a fourth column
//!   of bars (`MEM: ▍ 4.4%`, `UTL: ▏ 0%`); a MIG device is `│{gpu:>2}:{mig:<2}{name:>12} @
//!   GI/CI:{gi}/{ci}│ {memory} │ BAR1: ... │`;
//! - values: the fan `30%` (`MAX` at 100%), the temperature `32C`, the power `41W / 250W`, the
//!   memory human-readable (`api/utils.py` `bytes2human`: `0B`, `724MiB`, `3.50MiB`,
//!   `79.65GiB`), the utilization `0%`; `N/A` where NVML gives nothing;
//! - the processes box: `│ Processes: ... user@host │`, `│ GPU  PID  USER  GPU-MEM %SM %GMBW
//!   %CPU  %MEM  TIME  COMMAND │` (no `%GMBW` before 1.0), then per process `│{gpu:>4}
//!   {pid:>7} {type} {user:>7} {gpu_mem:>8} {sm:>3} {gmbw:>5} {cpu:>5} {mem:>5}  {time}
//!   {command} │`, or `│  No running processes found │`;
//! - `--ascii` maps the box characters to `+ - = |` (`libcurses.py` `ASCII_TRANSTABLE`), which
//!   makes the device table read like nvidia-smi's; the `NVITOP` header or the processes head
//!   (`USER  GPU-MEM`) still tell it apart.
//!
//! What is read is what the nvidia-smi table reader yields ([`SmiUsage`]), so the same rules
//! judge it: per GPU utilization, memory used and total, temperature, power and its cap, the
//! performance state, and the processes with their type, memory and SM share. A job is present
//! as in the table: a training process listed, or where no processes box is pasted, memory
//! held.

use super::smi_tables::{SmiUsage, UsageGpu, UsageProcess, clean};

/// The line with nvitop's box characters mapped to ASCII as its `--ascii` mode does.
fn ascii(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '═' => '=',
            '─' | '╴' => '-',
            '╒' | '╤' | '╕' | '╪' | '╘' | '╧' | '╛' | '┌' | '┬' | '┐' | '┼' | '└' | '┴' | '┘' => {
                '+'
            }
            '│' | '╞' | '╡' | '├' | '┤' => '|',
            other => other,
        })
        .collect()
}

/// The cells of a row: `| a | b | c |` -> [a, b, c] (trimmed).
fn cells(line: &str) -> Vec<String> {
    let a = ascii(&super::gpustat::strip_ansi(clean(line)));
    let t = a.trim();
    let Some(t) = t.strip_prefix('|') else {
        return Vec::new();
    };
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(|c| c.trim().to_string()).collect()
}

fn na(s: &str) -> bool {
    s.is_empty() || s.contains("N/A")
}

/// `bytes2human`'s strings: `0B`, `512KiB`, `3.50MiB`, `724MiB`, `79.65GiB`, `1.2TiB`.
fn human_mib(s: &str) -> Option<f64> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (n, unit) = t.split_at(split);
    let n: f64 = n.parse().ok()?;
    let m = match unit.trim() {
        "B" => n / 1048576.0,
        "KiB" => n / 1024.0,
        "MiB" => n,
        "GiB" => n * 1024.0,
        "TiB" => n * 1048576.0,
        "PiB" => n * 1073741824.0,
        _ => return None,
    };
    m.is_finite().then_some(m)
}

/// `12%` / `12.5%` -> 12; `N/A` -> None.
fn pct(s: &str) -> Option<f64> {
    let n: f64 = s.trim().strip_suffix('%')?.trim().parse().ok()?;
    n.is_finite().then_some(n)
}

/// `41W / 250W` -> (41, 250); `N/A / N/A` -> (None, None).
fn power(s: &str) -> (Option<f64>, Option<f64>) {
    let w = |x: &str| -> Option<f64> { x.trim().strip_suffix('W')?.trim().parse().ok() };
    match s.split_once(" / ") {
        Some((a, b)) => (w(a), w(b)),
        None => (w(s), None),
    }
}

/// The first row of a GPU: `0  Tesla V100-PCIE...  On` | `00000000:3B:00.0 Off` | ...
fn gpu_row_1(c: &[String]) -> Option<(u32, String, Option<String>)> {
    if c.len() < 3 {
        return None;
    }
    let mut toks = c[0].split_whitespace();
    let index: u32 = toks.next()?.parse().ok()?;
    let rest: Vec<&str> = toks.collect();
    // the persistence mode (or, on Windows, the driver model) ends the name cell
    let name_toks = match rest.last() {
        Some(&("On" | "Off" | "N/A" | "WDDM" | "TCC" | "MCDM")) => &rest[..rest.len() - 1],
        _ => &rest[..],
    };
    if name_toks.is_empty() {
        return None;
    }
    let bus = c[1].split_whitespace().next()?;
    let bus_ok = bus.len() >= 7 && bus.contains(':') && bus.contains('.');
    bus_ok.then(|| (index, name_toks.join(" "), Some(bus.to_string())))
}

#[derive(Debug, Default, Clone, PartialEq)]
struct Row2 {
    index: Option<u32>,
    temperature_c: Option<f64>,
    pstate: Option<String>,
    power_w: Option<f64>,
    power_cap_w: Option<f64>,
    used_mib: Option<f64>,
    total_mib: Option<f64>,
    util: Option<f64>,
    compute_mode: Option<String>,
}

/// The second row of a GPU (or the compact row, which starts with the index):
/// `MAX   32C    P0    41W / 250W` | `724MiB / 16384MiB` | `0%      Default` [| bars].
fn gpu_row_2(c: &[String]) -> Option<Row2> {
    if c.len() < 3 {
        return None;
    }
    let (used, total) = c[1].split_once(" / ")?;
    let (used, total) = (used.trim(), total.trim());
    let mem_ok = |x: &str| na(x) || human_mib(x).is_some();
    if !mem_ok(used) || !mem_ok(total) {
        return None;
    }
    let mut toks: Vec<&str> = c[0].split_whitespace().collect();
    let mut r = Row2::default();
    // compact: `0  30%  45C P8   20W / 250W`; full: `30%   45C    P8   20W / 250W`
    if toks.len() >= 2 && toks[0].chars().all(|ch| ch.is_ascii_digit()) {
        r.index = toks[0].parse().ok();
        toks.remove(0);
    }
    // fan, temperature, pstate, then the power status (which may hold spaces)
    if toks.len() < 4 {
        return None;
    }
    let fan_ok = toks[0] == "MAX" || na(toks[0]) || pct(toks[0]).is_some();
    let temp = toks[1];
    let temp_ok = na(temp)
        || temp
            .strip_suffix('C')
            .is_some_and(|n| n.parse::<f64>().is_ok());
    if !fan_ok || !temp_ok {
        return None;
    }
    r.temperature_c = temp.strip_suffix('C').and_then(|n| n.parse().ok());
    let pstate = toks[2];
    if !(na(pstate) || (pstate.starts_with('P') && pstate[1..].parse::<u32>().is_ok())) {
        return None;
    }
    r.pstate = (!na(pstate)).then(|| pstate.to_string());
    let (pw, cap) = power(&toks[3..].join(" "));
    r.power_w = pw;
    r.power_cap_w = cap;
    r.used_mib = human_mib(used);
    r.total_mib = human_mib(total);
    let mut u = c[2].split_whitespace();
    let util = u.next()?;
    if !(na(util) || pct(util).is_some()) {
        return None;
    }
    r.util = pct(util);
    r.compute_mode = u.next().filter(|m| !na(m)).map(str::to_string);
    Some(r)
}

/// The processes head: `GPU     PID      USER  GPU-MEM %SM [%GMBW]  %CPU  %MEM  TIME  COMMAND`.
fn process_head(c: &[String]) -> Option<bool> {
    let t = c.first()?;
    let w: Vec<&str> = t.split_whitespace().collect();
    let ok = w.len() >= 5 && w[..5] == ["GPU", "PID", "USER", "GPU-MEM", "%SM"];
    ok.then_some(w.get(5) == Some(&"%GMBW"))
}

/// A process row: `   0  205220 C ikissa+   497MiB   0   0.0   0.3  0:42  python3 ex4.py`.
fn process_row(c: &[String], gmbw: bool) -> Option<UsageProcess> {
    let t = c.first()?;
    let w: Vec<&str> = t.split_whitespace().collect();
    let fixed = if gmbw { 7 } else { 6 };
    if w.len() < fixed {
        return None;
    }
    // `0` or, for a MIG device, `0:1`
    let gpu: u32 = w[0].split(':').next()?.parse().ok()?;
    let pid: u32 = w[1].trim_end_matches('.').parse().ok()?;
    let kind = w[2];
    if !kind.chars().all(|ch| ch.is_ascii_uppercase() || ch == '+') {
        return None;
    }
    let mem = w[4];
    if !(na(mem) || human_mib(mem).is_some()) {
        return None;
    }
    let sm = pct(&format!("{}%", w[5]));
    // after the fixed columns: %CPU %MEM TIME (`0:42`, `1:02:03`, `4.5 days`) COMMAND
    let mut rest = &w[fixed..];
    let numeric = |x: &str| x == "N/A" || x.parse::<f64>().is_ok();
    if rest.len() >= 2 && numeric(rest[0]) && numeric(rest[1]) {
        rest = &rest[2..];
        if rest.len() >= 2 && rest[1] == "days" {
            rest = &rest[2..];
        } else if !rest.is_empty()
            && (rest[0] == "N/A"
                || rest[0]
                    .split(':')
                    .all(|p| !p.is_empty() && p.chars().all(|ch| ch.is_ascii_digit())))
        {
            rest = &rest[1..];
        }
    }
    Some(UsageProcess {
        gpu: Some(gpu),
        pid: Some(pid),
        kind: kind.to_string(),
        name: super::clip(&rest.join(" "), super::MAX_TEXT),
        memory_mib: human_mib(mem),
        sm_pct: sm,
    })
}

/// `NVITOP 1.3.2   Driver Version: 535.54.03   CUDA Driver Version: 12.2` (or 0.x's
/// `NVIDIA-SMI ...  CUDA Version: 11.2`) -> (driver, cuda).
fn header(c: &[String]) -> Option<(Option<String>, Option<String>)> {
    let t = c.first()?;
    if !(t.starts_with("NVITOP ") || t.starts_with("NVIDIA-SMI ")) || !t.contains("Driver Version:")
    {
        return None;
    }
    let after = |key: &str| {
        t.split_once(key)
            .and_then(|(_, r)| r.split_whitespace().next())
            .filter(|v| !na(v))
            .map(str::to_string)
    };
    let cuda = after("CUDA Driver Version:").or_else(|| after("CUDA Version:"));
    Some((after(" Driver Version:"), cuda))
}

/// nvitop's print: its `NVITOP` header, or nvidia-smi's column heads drawn with nvitop's box
/// characters, or its processes head.
pub fn looks_like_nvitop(text: &str) -> bool {
    text.lines().take(2000).any(|l| {
        let c = cells(l);
        header(&c).is_some_and(|_| l.contains("NVITOP") || l.contains('│'))
            || process_head(&c).is_some()
            || (l.contains('│') && l.contains("Memory-Usage") && l.contains("GPU-Util"))
    })
}

pub fn parse_nvitop(text: &str) -> Result<SmiUsage, super::ParseError> {
    let mut u = SmiUsage {
        format: "nvitop".into(),
        ..Default::default()
    };
    let mut pending: Option<(u32, String, Option<String>)> = None;
    let mut in_processes: Option<bool> = None;
    let mut seen_any = false;
    for l in text.lines().take(200_000) {
        let c = cells(l);
        if c.is_empty() {
            continue;
        }
        if let Some((d, cu)) = header(&c) {
            // a second print starts with its own header box
            seen_any = true;
            in_processes = None;
            u.driver_version = u.driver_version.or(d);
            u.cuda_version = u.cuda_version.or(cu);
            continue;
        }
        if let Some(gmbw) = process_head(&c) {
            seen_any = true;
            in_processes = Some(gmbw);
            u.processes_listed = true;
            continue;
        }
        if let Some(gmbw) = in_processes {
            if c[0].starts_with("No running processes found") {
                continue;
            }
            if c[0].starts_with("Gathering process status") {
                u.processes_listed = false;
                continue;
            }
            if let Some(p) = process_row(&c, gmbw)
                && u.processes.len() < super::MAX_ITEMS
            {
                u.processes.push(p);
            }
            continue;
        }
        if let Some(r1) = gpu_row_1(&c) {
            pending = Some(r1);
            continue;
        }
        if let Some(r2) = gpu_row_2(&c) {
            let (index, name, bus) = match (pending.take(), r2.index) {
                (Some((i, n, b)), _) => (i, Some(n), b),
                (None, Some(i)) => (i, None, None),
                (None, None) => continue,
            };
            if u.gpus.len() >= super::MAX_ITEMS || u.gpus.iter().any(|g| g.index == index) {
                continue;
            }
            u.samples += 1;
            u.gpus.push(UsageGpu {
                index,
                name: name.map(|n| super::clip(&n, super::MAX_TEXT)),
                bus_id: bus,
                temperature_c: r2.temperature_c,
                pstate: r2.pstate,
                power_w: r2.power_w,
                power_cap_w: r2.power_cap_w,
                memory_used_mib: r2.used_mib,
                memory_total_mib: r2.total_mib,
                util_gpu: r2.util,
                util_gpu_max: r2.util,
                compute_mode: r2.compute_mode,
                samples: 1,
                ..Default::default()
            });
        }
    }
    // a GPU's first row with no second one: the paste ends inside it
    u.truncated = pending.is_some();
    if u.gpus.is_empty() && !(seen_any && u.processes_listed) {
        return Err(super::ParseError::NotThisKind(
            "no nvitop device rows (`│   0  <name>  On │ <bus id> │`, `│ 30%  45C  P8  20W / 250W │ 1.2GiB / 24GiB │ 0%  Default │`) or processes table",
        ));
    }
    Ok(u)
}

/// Fields of the value this kind yields (the table reader's, [`SmiUsage`]).
const FIELDS: &[(&str, &str)] = &[
    ("format", "nvitop"),
    ("driver_version", "the driver version of the header box"),
    ("cuda_version", "the CUDA driver version of the header box"),
    (
        "gpus",
        "per GPU: index, name, bus id, temperature, pstate, power and cap, memory used and total (MiB), utilization, compute mode",
    ),
    (
        "processes_listed",
        "the paste has the processes table (even one saying No running processes found)",
    ),
    (
        "processes",
        "per process: gpu, pid, type, command, GPU memory (MiB), SM share",
    ),
    ("samples", "GPUs read"),
    ("truncated", "the paste ends inside a GPU's rows"),
];

/// The registry entry (see [`super::EvidenceKind`]).
pub struct NvitopKind;

impl super::EvidenceKind for NvitopKind {
    fn name(&self) -> &'static str {
        "nvitop"
    }
    fn doc(&self) -> &'static str {
        "nvitop -1: the nvidia-smi-like device table (utilization, memory, power, temperature) and the processes table with GPU memory and SM share"
    }
    fn example(&self) -> &'static str {
        "nvitop -1"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    // before the nvidia-smi table, whose column heads nvitop prints too
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_nvitop(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_nvitop(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        super::smi_tables::usage_host(parse_nvitop(text))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::gpu_usage::usage_value;
    use serde_json::json;

    /// healthy: github.com/HPC-Simlab/Tutorials (cf00007)
    /// ALL/F_Commands_of_a_GPU_code/Interactive_execution.md, nvitop 0.x on an idle P40 node.
    const P40_IDLE: &str = "Thu Apr 21 01:03:14 2022\n╒═════════════════════════════════════════════════════════════════════════════╕\n│ NVIDIA-SMI 460.32.03    Driver Version: 460.32.03    CUDA Version: 11.2     │\n├───────────────────────────────┬──────────────────────┬──────────────────────┤\n│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ Volatile Uncorr. ECC │\n│ Fan  Temp  Perf  Pwr:Usage/Cap│         Memory-Usage │ GPU-Util  Compute M. │\n╞═══════════════════════════════╪══════════════════════╪══════════════════════╪════════════════════╕\n│   0  Tesla P40           On   │ 00000000:3B:00.0 Off │                    0 │ MEM: ▏ 0.0%        │\n│ MAX   20C    P8     9W / 250W │        0B / 22.38GiB │      0%      Default │ UTL: ▏ 0%          │\n╘═══════════════════════════════╧══════════════════════╧══════════════════════╧════════════════════╛\n[ CPU: █▌ 2.9%                                                ]  ( Load Average:  1.08  1.03  0.79 )\n[ MEM: █▉ 3.8%                                                ]  [ SWP: █████████████▋ 62.1%       ]\n\n╒══════════════════════════════════════════════════════════════════════════════════════════════════╕\n│ Processes:                                                                       team1337@node15 │\n│ GPU     PID      USER  GPU-MEM %SM  %CPU  %MEM  TIME  COMMAND                                    │\n╞══════════════════════════════════════════════════════════════════════════════════════════════════╡\n│  No running processes found                                                                      │\n╘══════════════════════════════════════════════════════════════════════════════════════════════════╛\n";

    /// problem: a python process listed on a GPU at 0 % (a cluster exercise sheet's `nvitop`
    /// print, HPC-Simlab course material, `python3 ex4.py` on a V100, stored copy id 17037260434).
    const V100_PYTHON_IDLE: &str = "Thu Dec 14 00:34:36 2023\n╒═════════════════════════════════════════════════════════════════════════════╕\n│ NVIDIA-SMI 515.65.01    Driver Version: 515.65.01    CUDA Version: 11.7     │\n├───────────────────────────────┬──────────────────────┬──────────────────────┤\n│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ Volatile Uncorr. ECC │\n│ Fan  Temp  Perf  Pwr:Usage/Cap│         Memory-Usage │ GPU-Util  Compute M. │\n╞═══════════════════════════════╪══════════════════════╪══════════════════════╪════════════════════╕\n│   0  Tesla V100-PCIE...  On   │ 00000000:3B:00.0 Off │                    0 │ MEM: ▍ 4.4%        │\n│ MAX   32C    P0    41W / 250W │    724MiB / 16384MiB │      0%      Default │ UTL: ▏ 0%          │\n╘═══════════════════════════════╧══════════════════════╧══════════════════════╧════════════════════╛\n[ CPU: ██ 3.9%                                                ]  ( Load Average:  0.68  0.45  0.27 )\n[ MEM: █▍ 2.7%                                                ]  [ SWP: █▊ 7.9%                    ]\n\n╒══════════════════════════════════════════════════════════════════════════════════════════════════╕\n│ Processes:                                                                       ikissami@node16 │\n│ GPU     PID      USER  GPU-MEM %SM  %CPU  %MEM  TIME  COMMAND                                    │\n╞══════════════════════════════════════════════════════════════════════════════════════════════════╡\n│   0  205220 C ikissa+   497MiB   0   0.0   0.3  0:42  python3 ex4.py                             │\n╘══════════════════════════════════════════════════════════════════════════════════════════════════╛\n";

    #[test]
    fn idle_gpu_with_no_processes() {
        assert!(looks_like_nvitop(P40_IDLE));
        let u = parse_nvitop(P40_IDLE).unwrap();
        assert_eq!(u.format, "nvitop");
        assert_eq!(u.driver_version.as_deref(), Some("460.32.03"));
        assert_eq!(u.cuda_version.as_deref(), Some("11.2"));
        assert_eq!(u.gpus.len(), 1);
        let g = &u.gpus[0];
        assert_eq!(g.name.as_deref(), Some("Tesla P40"));
        assert_eq!(g.bus_id.as_deref(), Some("00000000:3B:00.0"));
        assert_eq!(g.temperature_c, Some(20.0));
        assert_eq!(g.pstate.as_deref(), Some("P8"));
        assert_eq!((g.power_w, g.power_cap_w), (Some(9.0), Some(250.0)));
        // `0B / 22.38GiB`: bytes2human's units
        assert_eq!(g.memory_used_mib, Some(0.0));
        assert!((g.memory_total_mib.unwrap() - 22.38 * 1024.0).abs() < 0.01);
        assert_eq!(g.util_gpu, Some(0.0));
        assert!(u.processes_listed && u.processes.is_empty());
        assert_eq!(usage_value(&u, "x")["process_on_gpu"], json!(false));
    }

    #[test]
    fn python_process_at_zero_utilization() {
        let u = parse_nvitop(V100_PYTHON_IDLE).unwrap();
        assert_eq!(u.gpus[0].memory_used_mib, Some(724.0));
        let p = &u.processes[0];
        assert_eq!(
            (p.gpu, p.pid, p.kind.as_str()),
            (Some(0), Some(205220), "C")
        );
        assert_eq!(p.memory_mib, Some(497.0));
        assert_eq!(p.sm_pct, Some(0.0));
        assert_eq!(p.name, "python3 ex4.py");
        let v = usage_value(&u, "x");
        assert_eq!(v["process_evidence"], json!("a training process is listed"));
        assert_eq!(v["gpu_util"], json!(0.0));
        // the same process box with nvitop 1.x's `%GMBW` column
        let t = V100_PYTHON_IDLE
            .replace("GPU-MEM %SM  %CPU", "GPU-MEM %SM %GMBW  %CPU")
            .replace("497MiB   0   0.0", "497MiB   0     0   0.0");
        let p = &parse_nvitop(&t).unwrap().processes[0];
        assert_eq!((p.name.as_str(), p.sm_pct), ("python3 ex4.py", Some(0.0)));
    }

    #[test]
    fn nvitop_1x_header_mig_column_and_decimal_mib() {
        // nvitop 1.4.2 on eight idle H800s (a public deployment note, stored copy id
        // 39089211520), cut to its first GPU
        let t = "│ NVITOP 1.4.2       Driver Version: 550.90.12      CUDA Driver Version: 12.4 │\n├───────────────────────────────┬──────────────────────┬──────────────────────┤\n│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ MIG M.   Uncorr. ECC │\n│ Fan  Temp  Perf  Pwr:Usage/Cap│         Memory-Usage │ GPU-Util  Compute M. │\n╞═══════════════════════════════╪══════════════════════╪══════════════════════╪════════════════════╕\n│   0  H800                Off  │ 00000000:18:00.0 Off │ Disabled           0 │ MEM: ▏ 0.0%        │\n│ N/A   36C    P0    85W / 700W │   3.50MiB / 79.65GiB │      0%      Default │ UTL: ▏ 0%          │\n";
        let u = parse_nvitop(t).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("550.90.12"));
        assert_eq!(u.cuda_version.as_deref(), Some("12.4"));
        let g = &u.gpus[0];
        assert_eq!(g.name.as_deref(), Some("H800"));
        assert_eq!(g.memory_used_mib, Some(3.5));
        assert_eq!((g.temperature_c, g.power_w), (Some(36.0), Some(85.0)));
        // `--ascii`: the same rows with `|` `+` `=`
        let a = ascii(t);
        assert!(looks_like_nvitop(&a));
        assert_eq!(parse_nvitop(&a).unwrap().gpus[0].memory_used_mib, Some(3.5));
    }

    #[test]
    fn compact_rows_na_values_and_cut_pastes() {
        // `formats_compact` (the monitor's compact mode): the index starts the row
        let t = "│   0 30%  45C P2    120W / 250W │  20.00GiB / 24.00GiB │     97%      Default │\n│ GPU     PID      USER  GPU-MEM %SM %GMBW  %CPU  %MEM  TIME  COMMAND │\n│   0   4242 C    alice  19.9GiB  95    40  100.0   3.1  4.5 days  python train.py │\n";
        let u = parse_nvitop(t).unwrap();
        let g = &u.gpus[0];
        assert_eq!((g.index, g.util_gpu), (0, Some(97.0)));
        assert_eq!(g.memory_used_mib, Some(20.0 * 1024.0));
        assert_eq!(u.processes[0].name, "python train.py");
        assert_eq!(u.processes[0].sm_pct, Some(95.0));
        // N/A values and a paste cut after a GPU's first row
        let t = "│   0  NVIDIA GeForce ...  Off  │ 00000000:01:00.0  On │                  N/A │\n│ N/A   N/A    N/A  N/A / N/A │   1.2GiB / 8.00GiB │     N/A      Default │\n│   1  NVIDIA GeForce ...  Off  │ 00000000:02:00.0 Off │                  N/A │\n";
        let u = parse_nvitop(t).unwrap();
        let g = &u.gpus[0];
        assert_eq!((g.temperature_c, g.util_gpu, g.power_w), (None, None, None));
        assert!(u.truncated);
        // the nvidia-smi table is not nvitop's
        assert!(!looks_like_nvitop(
            "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
        ));
        assert!(parse_nvitop("hello\n").unwrap_err().is_not_this_kind());
    }
}
