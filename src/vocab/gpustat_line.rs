//! gpustat's GPU line (github.com/wookayin/gpustat, `gpustat/core.py` `GPUStat.print_to` at
//! v1.1.1 and the `%`-format string of v0.6.0 it replaced): `[{index}] {name} |{temp}°C,
//! [{fan} %, ]{util} %[ (E: .. %  D: .. %)][,  {draw}[ / {limit}] W] | {used} / {total} MB[ |
//! {processes}]`. The grammar lives here, below both its readers: the gpustat evidence kind
//! (`evidence::gpustat`), and the carrier detection of `vocab::paste`, which must not take the
//! `[0]` that starts the line for a Hydra or MPICH rank prefix. The field-by-field account of
//! the whole output is at the top of `evidence::gpustat`.

use std::borrow::Cow;

/// The text without ANSI escape sequences: `ESC [ ... letter` (SGR colours) and the
/// two-byte `ESC ( B` that blessed's `normal` writes on xterm.
pub fn strip_ansi(l: &str) -> Cow<'_, str> {
    if !l.contains('\u{1b}') {
        return Cow::Borrowed(l);
    }
    let mut out = String::with_capacity(l.len());
    let mut it = l.chars();
    while let Some(c) = it.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('[') => {
                for d in it.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            Some('(') | Some(')') => {
                it.next();
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// One process of the processes column.
#[derive(Debug, Clone, PartialEq)]
pub struct Proc {
    pub name: String,
    /// The name is a command: printed after `user:`, or given by a `-f` line.
    pub command_known: bool,
    pub pid: Option<u32>,
    pub memory_mib: Option<f64>,
}

/// One GPU line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuLine {
    pub index: u32,
    pub name: String,
    pub temperature_c: Option<f64>,
    pub util: Option<f64>,
    pub power_w: Option<f64>,
    pub power_cap_w: Option<f64>,
    pub used_mib: Option<f64>,
    pub total_mib: Option<f64>,
    /// `None`: no process column (`--no-processes`) or `(Not Supported)`.
    pub processes: Option<Vec<Proc>>,
}

/// A number as gpustat prints it, `??` (or `?`) for a value NVML did not give.
fn value(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.starts_with('?') {
        return None;
    }
    let n: f64 = t.parse().ok()?;
    n.is_finite().then_some(n)
}

/// `27'C` / ` 47°C` / `??°C`: the temperature, whatever the degree sign became in the paste.
fn temperature(s: &str) -> Option<Option<f64>> {
    let t = s.trim();
    let num = t.strip_suffix('C')?;
    let num = num.trim_end_matches(|c: char| !c.is_ascii_digit() && c != '?');
    if num.is_empty()
        || !num
            .chars()
            .all(|c| c.is_ascii_digit() || c == '?' || c == ' ')
    {
        return None;
    }
    Some(value(num))
}

/// `   0 %` -> Some(Some(0)); `?? %` -> Some(None); anything else -> None.
fn percent(s: &str) -> Option<Option<f64>> {
    let t = s.trim().strip_suffix('%')?.trim();
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || c == '?' || c == '.')
    {
        return None;
    }
    Some(value(t))
}

/// `  123 / 250 W`, `  123 W`, `  123` (v1's `--show-power=draw`).
fn power(s: &str) -> Option<(Option<f64>, Option<f64>)> {
    let t = s.trim().trim_end_matches('W').trim_end();
    match t.split_once('/') {
        Some((d, l)) => {
            let (d, l) = (d.trim(), l.trim());
            let ok = |x: &str| x.starts_with('?') || x.parse::<f64>().is_ok();
            (ok(d) && ok(l)).then(|| (value(d), value(l)))
        }
        None => (t.starts_with('?') || t.parse::<f64>().is_ok()).then(|| (value(t), None)),
    }
}

/// `user:command/pid(1234M)` and its shorter forms.
fn process_token(tok: &str) -> Option<Proc> {
    let inner = tok.strip_suffix("M)")?;
    let (ident, mem) = inner.rsplit_once('(')?;
    if ident.is_empty() {
        return None;
    }
    let memory_mib = value(mem);
    if memory_mib.is_none() && !mem.starts_with('?') {
        return None;
    }
    let (ident, pid) = match ident.rsplit_once('/') {
        Some((a, p)) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => {
            (a, p.parse().ok())
        }
        Some((a, "--")) => (a, None),
        _ => (ident, None),
    };
    // `user:command`: what follows the user is the command
    let (name, command_known) = match ident.split_once(':') {
        Some((_, c)) => (c.to_string(), true),
        None => (ident.to_string(), false),
    };
    Some(Proc {
        name: if name == "--" { String::new() } else { name },
        command_known,
        pid,
        memory_mib,
    })
}

/// A GPU line: `[0] NVIDIA A100-SXM4-80GB | 34°C,   0 % |  1234 / 81920 MB | user(1200M)`.
pub fn gpu_line(line: &str) -> Option<GpuLine> {
    let l = strip_ansi(line);
    let l = l.trim();
    let rest = l.strip_prefix('[')?;
    let (idx, rest) = rest.split_once(']')?;
    let index: u32 = idx.trim().parse().ok()?;
    let all: Vec<&str> = rest.split('|').collect();
    // `--gpuname-width 0` prints no name and no `|` after it: `[0]  80°C,  76 % | ...`
    let named = all
        .first()
        .is_none_or(|p| temperature(p.split(',').next().unwrap_or(p)).is_none());
    let (name, parts) = if named {
        (all[0].trim().to_string(), &all[1..])
    } else {
        (String::new(), &all[..])
    };
    if parts.len() < 2 {
        return None;
    }
    // temperature, [fan,] utilization [codec], [power]
    let stats: Vec<&str> = parts[0].split(',').collect();
    let temperature_c = temperature(stats.first()?)?;
    let mut percents = Vec::new();
    let mut pw = None;
    for s in &stats[1..] {
        // `  0 % (E:   0 %  D:   0 %)`: the codec utilization follows the GPU's
        let head = s.split(" (").next().unwrap_or(s);
        if let Some(p) = percent(head) {
            percents.push(p);
        } else if let Some(p) = power(s) {
            pw = Some(p);
        } else {
            return None;
        }
    }
    // `[fan %,] util %`: with `--show-fan-speed` the fan comes first
    let util = *percents.last()?;
    let (used, total) = parts[1].trim().strip_suffix("MB")?.split_once('/')?;
    let (used, total) = (used.trim(), total.trim());
    let num_or_q = |x: &str| x.starts_with('?') || x.parse::<f64>().is_ok();
    if !num_or_q(used) || !num_or_q(total) {
        return None;
    }
    let processes = if parts.len() > 2 {
        let col = parts[2..].join("|");
        let col = col.trim();
        if col.starts_with("(Not Supported)") {
            None
        } else {
            Some(
                col.split_whitespace()
                    .filter_map(process_token)
                    .take(super::MAX_ITEMS)
                    .collect(),
            )
        }
    } else {
        None
    };
    Some(GpuLine {
        index,
        name,
        temperature_c,
        util,
        power_w: pw.and_then(|p| p.0),
        power_cap_w: pw.and_then(|p| p.1),
        used_mib: value(used),
        total_mib: value(total),
        processes,
    })
}
