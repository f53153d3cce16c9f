//! whichllm's `Hardware Info` panel (`whichllm` and `whichllm hardware` print it before their
//! ranking), read from its producer: Andyyyy64/whichllm `display_hardware`, in
//! `src/whichllm/output/display.py` at 7d247d17 (May 2026) and `src/whichllm/output/ranking.py`
//! at a8975516 (June 2026), the same lines in both. It builds one line per detected GPU, or the
//! fallback, then the host's lines, and prints them in a rich `Panel` titled `Hardware Info`
//! (rounded box: `╭─ Hardware Info ─╮`, `│ <line> │` padded to the console's width, `╰─╯`):
//!
//! ```text
//! GPU {i}: {name} — {vram}{ (CC x.y, CUDA v, ROCm v)} — BW: {n GB/s | N/A}
//! No GPU detected — CPU-only mode                 where it found none
//! CPU: {cpu_name} — {cores} cores{ (AVX2, AVX-512)}
//! RAM: {ram}{ (budget …)}
//! Disk free: {disk}
//! OS: {os}
//! ```
//!
//! `vram` is `_format_bytes` (`src/whichllm/output/formatting.py`: `%.1f GB`, `%.0f MB`, `%.0f
//! KB`), `shared memory` or `N shared` for an integrated GPU, with ` (budget …)` where whichllm
//! keeps less for models. Its rich markup (`[bold green]GPU 0:[/]`) is not printed. The
//! fallback is whichllm's own verdict: its NVIDIA detection reads NVML through `nvidia-ml-py`
//! and falls back to `nvidia-smi` (`docs/troubleshooting.md`), so `No GPU detected` says that
//! neither answered whichllm, not why (Andyyyy64/whichllm#2 and #34, both the tool's bugs). No
//! rule reads the kind: the panel is recognised and the report says what whichllm saw.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WhichllmGpu {
    pub index: u32,
    pub name: String,
    /// As printed (`24.0 GB`, `shared memory`, `16.0 GB (budget 14.0 GB)`).
    pub vram: String,
    /// `8.9`, where printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rocm: Option<String>,
    /// `1008 GB/s`, or `N/A`.
    pub bandwidth: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WhichllmHardware {
    pub gpus: Vec<WhichllmGpu>,
    /// `No GPU detected — CPU-only mode`: whichllm found no GPU (its verdict, not the driver's).
    pub no_gpu_detected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<u32>,
    /// `AVX2`, `AVX-512`.
    pub cpu_flags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_free: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
}

const NO_GPU: &str = "No GPU detected — CPU-only mode";
const DASH: &str = " — ";

/// The line inside the panel's border: `│ <text> │` less the border and its padding, or the
/// line itself where the panel was copied without it.
fn unboxed(line: &str) -> &str {
    let l = line.trim();
    let l = l.strip_prefix('│').unwrap_or(l);
    let l = l.strip_suffix('│').unwrap_or(l);
    l.trim()
}

/// `CPU: {name} — {cores} cores{ (flags)}`.
fn cpu_line(l: &str) -> Option<(&str, u32, Vec<String>)> {
    let rest = l.strip_prefix("CPU: ")?;
    let (name, rest) = rest.rsplit_once(DASH)?;
    let (cores, flags) = rest.split_once(" cores")?;
    let cores: u32 = cores.trim().parse().ok()?;
    let flags = flags.trim();
    let flags = if flags.is_empty() {
        Vec::new()
    } else {
        flags
            .strip_prefix('(')?
            .strip_suffix(')')?
            .split(", ")
            .map(|f| f.trim().to_string())
            .collect()
    };
    if name.trim().is_empty() {
        return None;
    }
    Some((name.trim(), cores, flags))
}

/// `GPU {i}: {name} — {vram}{ (extra)} — BW: {bw}`.
fn gpu_line(l: &str) -> Option<WhichllmGpu> {
    let rest = l.strip_prefix("GPU ")?;
    let (index, rest) = rest.split_once(": ")?;
    let index: u32 = index.parse().ok()?;
    let (rest, bw) = rest.rsplit_once(" — BW: ")?;
    let (name, vram) = rest.split_once(DASH)?;
    if name.trim().is_empty() || vram.trim().is_empty() || bw.trim().is_empty() {
        return None;
    }
    let mut g = WhichllmGpu {
        index,
        name: super::clip(name.trim(), 120),
        vram: super::clip(vram.trim(), 60),
        bandwidth: super::clip(bw.trim(), 30),
        ..Default::default()
    };
    // the extras, last in parentheses: `(CC 8.9, CUDA 12.4)`; a budget's `(budget …)` stays in
    // the VRAM as printed
    if let Some((size, extra)) = vram.trim().rsplit_once(" (")
        && let Some(extra) = extra.strip_suffix(')')
        && !extra.starts_with("budget ")
    {
        for part in extra.split(", ") {
            if let Some(v) = part.strip_prefix("CC ") {
                g.compute_capability = Some(super::clip(v, 10));
            } else if let Some(v) = part.strip_prefix("CUDA ") {
                g.cuda = Some(super::clip(v, 20));
            } else if let Some(v) = part.strip_prefix("ROCm ") {
                g.rocm = Some(super::clip(v, 20));
            }
        }
        if g.compute_capability.is_some() || g.cuda.is_some() || g.rocm.is_some() {
            g.vram = super::clip(size.trim(), 60);
        }
    }
    Some(g)
}

/// A GPU line or the fallback, and the CPU line: the two lines every panel has.
pub fn looks_like_whichllm_hardware(text: &str) -> bool {
    let mut headline = false;
    let mut cpu = false;
    for l in super::content_lines(text).take(4000) {
        let l = unboxed(l);
        if l == NO_GPU || (l.contains(" — BW: ") && gpu_line(l).is_some()) {
            headline = true;
        } else if l.starts_with("CPU: ") && cpu_line(l).is_some() {
            cpu = true;
        }
        if headline && cpu {
            return true;
        }
    }
    false
}

pub fn parse_whichllm_hardware(text: &str) -> WhichllmHardware {
    let mut out = WhichllmHardware::default();
    for l in super::content_lines(text) {
        let l = unboxed(l);
        if l == NO_GPU {
            out.no_gpu_detected = true;
        } else if let Some(g) = gpu_line(l) {
            if out.gpus.len() < super::MAX_ITEMS {
                out.gpus.push(g);
            }
        } else if let Some((name, cores, flags)) = cpu_line(l) {
            out.cpu = Some(super::clip(name, 120));
            out.cpu_cores = Some(cores);
            out.cpu_flags = flags;
        } else if let Some(v) = l.strip_prefix("RAM: ") {
            out.ram = Some(super::clip(v.trim(), 60));
        } else if let Some(v) = l.strip_prefix("Disk free: ") {
            out.disk_free = Some(super::clip(v.trim(), 40));
        } else if let Some(v) = l.strip_prefix("OS: ") {
            out.os = Some(super::clip(v.trim(), 40));
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct WhichllmHardwareKind;

impl super::EvidenceKind for WhichllmHardwareKind {
    fn name(&self) -> &'static str {
        "whichllm-hardware"
    }
    fn doc(&self) -> &'static str {
        "whichllm's `Hardware Info` panel (Andyyyy64/whichllm): the GPUs it detected with VRAM, compute capability, CUDA and bandwidth, or its `No GPU detected — CPU-only mode`, and the CPU, RAM, free disk and OS"
    }
    fn example(&self) -> &'static str {
        "whichllm hardware"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "gpus",
                "the GPU lines: index, name, VRAM, compute capability, CUDA, ROCm, bandwidth",
            ),
            (
                "no_gpu_detected",
                "`No GPU detected — CPU-only mode`: whichllm's own verdict",
            ),
            ("cpu", "the CPU's name"),
            ("cpu_cores", "the cores whichllm counted"),
            ("cpu_flags", "AVX2, AVX-512"),
            ("ram", "the RAM line, as printed"),
            ("disk_free", "the free disk, as printed"),
            ("os", "the OS"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_whichllm_hardware(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        if !looks_like_whichllm_hardware(text) {
            return Err(super::ParseError::NotThisKind(
                "no whichllm `Hardware Info` lines (`GPU N: … — BW: …` or `No GPU detected — CPU-only mode`, and `CPU: … — N cores`) in the text",
            ));
        }
        super::to_value(&parse_whichllm_hardware(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // h144: Andyyyy64/whichllm#2, the panel as the poster's terminal printed it (fish's right
    // prompt on the command line, the bottom border cut by the stored copy)
    const ISSUE2: &str = "whichllm                                                                                                                   (devenv) 10s\n\n╭─────────────────────────────────────────────────────────────────────────────── Hardware Info ────────────────────────────────────────────────────────────────────────────────╮\n│ No GPU detected — CPU-only mode                                                                                                                                              │\n│ CPU: AMD Ryzen 9 3900X 12-Core Processor — 6 cores (AVX2)                                                                                                                    │\n│ RAM: 15.6 GB                                                                                                                                                                 │\n│ Disk free: 407.4 GB                                                                                                                                                          │\n│ OS: linux                                                                                                                                                                    │\n";

    #[test]
    fn the_no_gpu_panel_is_read_with_its_host_lines() {
        assert!(looks_like_whichllm_hardware(ISSUE2));
        let h = parse_whichllm_hardware(ISSUE2);
        assert!(h.no_gpu_detected);
        assert!(h.gpus.is_empty());
        assert_eq!(
            h.cpu.as_deref(),
            Some("AMD Ryzen 9 3900X 12-Core Processor")
        );
        assert_eq!(h.cpu_cores, Some(6));
        assert_eq!(h.cpu_flags, ["AVX2"]);
        assert_eq!(h.ram.as_deref(), Some("15.6 GB"));
        assert_eq!(h.disk_free.as_deref(), Some("407.4 GB"));
        assert_eq!(h.os.as_deref(), Some("linux"));
    }

    #[test]
    fn gpu_lines_are_read_with_their_extras_boxed_or_not() {
        // the format of `display_hardware` (an NVIDIA GPU with CC and CUDA, an integrated one
        // with shared memory and no bandwidth), copied without the panel's border
        let t = "GPU 0: NVIDIA GeForce RTX 4090 — 24.0 GB (CC 8.9, CUDA 12.4) — BW: 1008 GB/s\nGPU 1: AMD Radeon 780M — 16.0 GB shared (budget 12.0 GB) — BW: N/A\nCPU: AMD Ryzen 9 7950X 16-Core Processor — 16 cores (AVX2, AVX-512)\nRAM: 64.0 GB\nDisk free: 1.2 GB\nOS: linux\n";
        assert!(looks_like_whichllm_hardware(t));
        let h = parse_whichllm_hardware(t);
        assert!(!h.no_gpu_detected);
        assert_eq!(h.gpus.len(), 2);
        let g = &h.gpus[0];
        assert_eq!(g.index, 0);
        assert_eq!(g.name, "NVIDIA GeForce RTX 4090");
        assert_eq!(g.vram, "24.0 GB");
        assert_eq!(g.compute_capability.as_deref(), Some("8.9"));
        assert_eq!(g.cuda.as_deref(), Some("12.4"));
        assert_eq!(g.bandwidth, "1008 GB/s");
        let g = &h.gpus[1];
        assert_eq!(g.vram, "16.0 GB shared (budget 12.0 GB)");
        assert_eq!(g.compute_capability, None);
        assert_eq!(g.bandwidth, "N/A");
        assert_eq!(h.cpu_flags, ["AVX2", "AVX-512"]);
        // the same GPU line inside the panel's border
        let boxed = "│ GPU 0: NVIDIA GB10 — 119.7 GB shared (CC 12.1, CUDA 13.0) — BW: 273 GB/s │\n│ CPU: Unknown CPU — 20 cores                  │\n";
        let h = parse_whichllm_hardware(boxed);
        assert!(looks_like_whichllm_hardware(boxed));
        assert_eq!(h.gpus[0].compute_capability.as_deref(), Some("12.1"));
        assert_eq!(h.gpus[0].vram, "119.7 GB shared");
        assert_eq!(h.cpu_cores, Some(20));
        assert!(h.cpu_flags.is_empty());
    }

    #[test]
    fn other_hardware_lists_and_prose_are_not_claimed() {
        // a line alone is not the panel: the fallback needs the CPU line beside it
        assert!(!looks_like_whichllm_hardware(
            "No GPU detected — CPU-only mode\n"
        ));
        // ollama's and LM Studio's words, a plain CPU line, `nvidia-smi -L`
        assert!(!looks_like_whichllm_hardware(
            "WARNING: No NVIDIA GPU detected. Ollama will run in CPU-only mode.\nCPU: AMD Ryzen 9 3900X\n"
        ));
        assert!(!looks_like_whichllm_hardware(
            "CPU: Intel Xeon — 32 cores\nGPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-6b6a1d6a-1111-2222-3333-444455556666)\n"
        ));
        assert!(!looks_like_whichllm_hardware(
            "CPU: 12 cores\nRAM: 64 GB\nOS: linux\n"
        ));
    }

    #[test]
    fn every_truncation_parses() {
        for i in 0..ISSUE2.len() {
            if ISSUE2.is_char_boundary(i) {
                let _ = parse_whichllm_hardware(&ISSUE2[..i]);
                let _ = looks_like_whichllm_hardware(&ISSUE2[..i]);
            }
        }
    }
}
