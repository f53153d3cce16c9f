//! Other vendors' GPU tools and errors, pasted in the same threads as NVIDIA text: AMD's
//! `rocm-smi`, `amd-smi` and `rocminfo`, PyTorch's HIP (ROCm) errors, Intel's `xpu-smi` and
//! `sycl-ls`, Habana's `hl-smi`, Huawei's `npu-smi`, Apple's MPS allocator. gpufix judges NVIDIA
//! GPUs, so such text is read only to say what it is ("AMD's rocm-smi") rather than "cannot tell
//! what this is"; it yields the vendor and the tool, no field a rule reads. Each is recognised
//! from a line the tool itself prints, read from its source or documentation:
//!
//! - `rocm-smi`: ROCm/rocm_smi_lib `python_smi_tools/rocm_smi.py` at a1295714 (2024-10):
//!   `printLogSpacer(headerString)` centres `' ROCm System Management Interface '` (and
//!   `footerString`, `' End of ROCm SMI Log '`) in a run of `=`; older releases print the title
//!   without the spaces (`====ROCm System Management Interface====`); a per-GPU line is
//!   `printLog`'s `'GPU[%s]\t\t: %s'`. A spacer is claimed even after a log prefix
//!   (`nid005113 out: ====…`), since the `=` runs on both sides are the tool's own.
//! - `amd-smi`: ROCm/amdsmi `amdsmi_cli/amdsmi_logger.py` at 0ceca28
//!   (`_convert_json_to_human_readable`): keys are capitalised (`BDF`, `UUID`, `KFD_ID`,
//!   `MARKET_NAME`) and indented four spaces under `GPU: N`; the bare command's banner is
//!   `AMD System Management Interface | Version: … | ROCm version: …` (`amdsmi_cli/README.md`);
//!   amd-smi 26+ prints a summary table instead, under `| AMD-SMI <version>  amdgpu version: …`.
//! - `rocminfo`: ROCm/rocminfo `rocminfo.cc` at c6f7a17: `printLabel("HSA System Attributes")`
//!   and `printLabel("HSA Agents")`, each between two `=` lines, and `"ROCk module version %s is
//!   loaded"` / `"ROCk module is loaded"` before them.
//! - HIP errors: PyTorch's `c10/cuda/CUDAException.cpp` and `CUDAMiscFunctions.cpp`
//!   (`get_cuda_check_suffix`) as hipified for a ROCm build: `HIP error: <what>`, `HIP kernel
//!   errors might be asynchronously reported at some other API call…`, `For debugging consider
//!   passing AMD_SERIALIZE_KERNEL=3`, ``Compile with `TORCH_USE_HIP_DSA` ``; and the HIP
//!   runtime's `hipErrorNoBinaryForGpu: Unable to find code object for all current devices!`.
//!   (A HIP *out-of-memory* message is PyTorch's caching allocator's, the same allocator as on
//!   NVIDIA, and stays `torch-memory`'s.)
//! - MPS: PyTorch's `aten/src/ATen/mps/MPSAllocator.mm`: `MPS backend out of memory (MPS
//!   allocated: …, other allocations: …, max allowed: …)`.
//! - `xpu-smi`: intel/xpumanager: every device table is a two-column box whose first row's first
//!   cell is `Device ID` (`cli/src/comlet_diagnostic.cpp` before b785d33: `{ "rowTitle":
//!   "Device ID" }`; `ial/cmn/cmd_discovery.cpp` at 34c32c6: `addColumn("Device ID", 9)
//!   .addColumn("Device Information", 84)`), drawn with `+---+---+` borders. DCGM's discovery
//!   box says `GPU ID`, nvidia-smi's table has no such cell. `xpu-smi dump` heads its CSV
//!   `Timestamp, DeviceId, <metrics>` (`cmd_dump.cpp`: `addColumn("Timestamp", …)`,
//!   `addColumn("DeviceId", …)`); nvidia-smi's `--query-gpu` CSV says `timestamp, index`.
//! - `sycl-ls`: intel/llvm `sycl/tools/sycl-ls/sycl-ls.cpp`: one line per device,
//!   `[backend:type][backend:N] platform, device version [driver]` (older:
//!   `[backend:type:N]`), backends `opencl`, `level_zero`, `cuda`, `hip`, `native_cpu` (and
//!   their `ext_oneapi_` forms).
//! - `hl-smi`: Intel Gaudi's System Management Interface Tool page (docs.habana.ai) and the
//!   outputs its users publish: a copy of nvidia-smi's table that opens `| HL-SMI Version: …`
//!   and heads its rows `| AIP  Name … Persistence-M| Bus-Id …`. xpu-smi 2.x's summary is such a
//!   copy too (see [`smi_lookalike_banner`]); the nvidia-smi table's detector declines both.
//! - `npu-smi info`: Huawei Ascend's table opens `| npu-smi <ver>   Version: <ver> |` and heads
//!   its rows `| NPU   Name | Health | Power(W) …`.
//! - `nccom-test`: AWS Neuron's collective benchmark for Trainium and Inferentia (closed source;
//!   its user guide, `tools/neuron-sys-tools/nccom-test.rst`, from Neuron 1.12 to 2.29, shows
//!   and describes the output): a table headed `size(B)    count(elems)     type    time(us)
//!   algbw(GB/s)    busbw(GB/s)`, each column's unit glued to its name, no `#`, and an
//!   `Avg bus bandwidth:      40.6901GB/s` line after it. nccl-tests' header starts with `#`
//!   and puts the units on a second `#` row (`#  (B)  (elements)  …`), so the two never meet.
//!
//! Prose that names a vendor or a tool is never claimed: every marker is a line in its tool's
//! own layout. A text that NVIDIA kinds read is theirs: this kind comes late in [`super::KINDS`].

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct OtherVendor {
    /// The vendor whose tool printed the text: `AMD`, `Intel`, `Intel Gaudi (Habana)`,
    /// `Huawei Ascend`, `Apple`, `AWS (Neuron)`.
    pub vendor: &'static str,
    /// The tool or runtime: `rocm-smi`, `amd-smi`, `rocminfo`, `HIP runtime (ROCm)`, `xpu-smi`,
    /// `sycl-ls`, `hl-smi`, `npu-smi`, `MPS (Metal)`, `nccom-test`.
    pub tool: &'static str,
}

fn clean(line: &str) -> &str {
    super::infiniband::clean(line).trim()
}

/// `=` runs on both sides of `title` (what is before the left run, a log prefix, is allowed).
fn spacer(line: &str, title: &str) -> bool {
    let l = line.trim_end();
    let Some(i) = l.find(title) else {
        return false;
    };
    let (before, after) = (l[..i].trim_end(), l[i + title.len()..].trim_start());
    before.ends_with("===") && after.len() >= 3 && after.bytes().all(|b| b == b'=')
}

/// `GPU[0]\t\t: VBIOS version: 111` (tabs kept, or expanded to spaces).
fn gpu_log_line(line: &str) -> bool {
    let Some(rest) = clean(line).strip_prefix("GPU[") else {
        return false;
    };
    let Some((n, rest)) = rest.split_once(']') else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && rest.starts_with(['\t', ' '])
        && rest.trim_start().starts_with(": ")
}

/// `GPU: 0` above an amd-smi key line (`    BDF: 0000:23:00.0`, `    ASIC:`).
fn amd_smi_pair(head: &str, next: &str) -> bool {
    let Some(n) = clean(head).strip_prefix("GPU: ") else {
        return false;
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || head.starts_with(' ') {
        return false;
    }
    let key_line = next.trim_end();
    let Some(body) = key_line.strip_prefix("    ") else {
        return false;
    };
    let Some((key, _)) = body.split_once(':') else {
        return false;
    };
    !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_uppercase())
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The bare command's banner: the help screen's `AMD System Management Interface | Version: … |
/// ROCm version: …` (0ceca28), or the summary table amd-smi 26+ prints instead, opening `|
/// AMD-SMI 26.0.2+39589fda  amdgpu version: …  ROCm version: … |` (27.x: `| AMD-SMI
/// 27.0.0+6b0e43f3 |`, the versions on lines of their own), as ROCm's issues and the hipFile
/// documentation show it; its rows (`BDF  GPU-Name | Mem-Uti  Temp  UEC  Power-Usage`) are not
/// nvidia-smi's.
fn amd_smi_banner(line: &str) -> bool {
    let l = clean(line);
    if l.starts_with("AMD System Management Interface | Version: ")
        && l.contains("| ROCm version: ")
    {
        return true;
    }
    cells(line).is_some_and(|c| {
        let mut w = c[0].split_whitespace();
        w.next() == Some("AMD-SMI")
            && w.next()
                .is_some_and(|v| v.starts_with(|ch: char| ch.is_ascii_digit()) && v.contains('.'))
    })
}

fn rocminfo_pair(above: &str, line: &str) -> bool {
    let l = clean(line);
    (l == "HSA System Attributes" || l == "HSA Agents")
        && clean(above).len() >= 10
        && clean(above).bytes().all(|b| b == b'=')
}

fn rock_module_line(line: &str) -> bool {
    let l = clean(line);
    l == "ROCk module is loaded"
        || l.strip_prefix("ROCk module version ")
            .and_then(|r| r.strip_suffix(" is loaded"))
            .is_some_and(|v| !v.is_empty() && !v.contains(' '))
}

/// The line after an exception's type (`RuntimeError: `, `torch.AcceleratorError: `).
fn after_exception(line: &str) -> &str {
    let l = clean(line);
    match l.split_once(": ") {
        Some((ty, rest))
            if !ty.is_empty()
                && !ty.contains(' ')
                && (ty.ends_with("Error") || ty.ends_with("Exception")) =>
        {
            rest
        }
        _ => l,
    }
}

fn hip_error_line(line: &str) -> bool {
    let l = after_exception(line);
    l.starts_with("HIP error: ")
        || l.starts_with("HIP kernel errors might be asynchronously reported")
        || l == "For debugging consider passing AMD_SERIALIZE_KERNEL=3"
        || l.starts_with("Compile with `TORCH_USE_HIP_DSA`")
        || l.starts_with("hipErrorNoBinaryForGpu: ")
}

fn mps_oom_line(line: &str) -> bool {
    after_exception(line).starts_with("MPS backend out of memory (MPS allocated: ")
}

/// A box border of exactly two columns: `+-----+-----+`.
fn two_column_border(line: &str) -> bool {
    let l = clean(line);
    l.starts_with('+')
        && l.ends_with('+')
        && l.len() > 4
        && l.bytes().all(|b| b == b'+' || b == b'-')
        && l.matches('+').count() == 3
}

/// The cells of a box row `| a | b |`, trimmed.
fn cells(line: &str) -> Option<Vec<&str>> {
    let l = clean(line);
    let inner = l.strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(str::trim).collect())
}

fn xpu_smi_pair(border: &str, row: &str) -> bool {
    two_column_border(border) && cells(row).is_some_and(|c| c.len() == 2 && c[0] == "Device ID")
}

/// `xpu-smi dump`'s header: `Timestamp, DeviceId, GPU Utilization (%), …` (`cli/src/comlet_dump.cpp`
/// before b785d33 and `ial/cmn/cmd_dump.cpp` at 34c32c6 put the two columns first).
fn xpu_smi_dump_header(line: &str) -> bool {
    let l = clean(line);
    let mut cols = l.split(',').map(str::trim);
    cols.next() == Some("Timestamp") && cols.next() == Some("DeviceId") && cols.next().is_some()
}

/// `nccom-test`'s table header (see the header): `size(B)`, `count(elems)` and `type` first,
/// `busbw(GB/s)` among the columns, the line not a `#` comment as nccl-tests' is.
fn nccom_test_header(line: &str) -> bool {
    let l = clean(line);
    let mut cols = l.split_whitespace();
    cols.next() == Some("size(B)")
        && cols.next() == Some("count(elems)")
        && cols.next() == Some("type")
        && cols.any(|c| c == "busbw(GB/s)")
}

fn sycl_ls_line(line: &str) -> bool {
    const BACKENDS: &[&str] = &[
        "opencl",
        "level_zero",
        "cuda",
        "hip",
        "native_cpu",
        "ext_oneapi_level_zero",
        "ext_oneapi_cuda",
        "ext_oneapi_hip",
        "ext_intel_esimd_emulator",
        "host",
    ];
    const TYPES: &[&str] = &["cpu", "gpu", "acc", "fpga", "host", "unknown"];
    let l = clean(line);
    let Some(rest) = l.strip_prefix('[') else {
        return false;
    };
    let Some((first, rest)) = rest.split_once(']') else {
        return false;
    };
    let f: Vec<&str> = first.split(':').collect();
    let known = |b: &str, t: &str| BACKENDS.contains(&b) && TYPES.contains(&t);
    let is_n = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    match f.as_slice() {
        // old: `[opencl:gpu:0] Intel(R) OpenCL HD Graphics, …`
        [b, t, n] => known(b, t) && is_n(n) && rest.starts_with(' '),
        // new: `[opencl:gpu][opencl:1] Intel(R) OpenCL Graphics, …`
        [b, t] => {
            known(b, t)
                && rest
                    .strip_prefix('[')
                    .and_then(|r| r.split_once(']'))
                    .is_some_and(|(second, after)| {
                        second
                            .split_once(':')
                            .is_some_and(|(b2, n)| b2 == *b && is_n(n))
                            && after.starts_with(' ')
                    })
        }
        _ => false,
    }
}

/// The banner of a table drawn after nvidia-smi's (same columns, `Persistence-M`, `Bus-Id`,
/// `Memory-Usage`): Habana's `| HL-SMI Version:  hl-1.4.1-… |` and Intel's xpu-smi 2.x
/// `| Intel XPU-SMI v2.1    Driver: …    Level Zero: … |` (`ial/cmn/cmd_smi.cpp` at 34c32c6,
/// `buildGpuTable`: `std::format("Intel XPU-SMI {}    Driver: {}    Level Zero: {}", …)`,
/// `{}` being `v<major>.<minor>`). The nvidia-smi table's reader declines a text with such a
/// banner and no `NVIDIA-SMI` one, so a Gaudi's or an Arc's table is not read as NVIDIA GPUs.
pub fn smi_lookalike_banner(line: &str) -> Option<OtherVendor> {
    let first = *cells(line)?.first()?;
    if first.starts_with("HL-SMI Version:") {
        return Some(OtherVendor {
            vendor: "Intel Gaudi (Habana)",
            tool: "hl-smi",
        });
    }
    let ver = first.strip_prefix("Intel XPU-SMI v")?;
    let ver = ver.split_whitespace().next()?;
    let (major, minor) = ver.split_once('.')?;
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (num(major) && num(minor) && first.contains("Level Zero: ")).then_some(OtherVendor {
        vendor: "Intel",
        tool: "xpu-smi",
    })
}

/// True when a text shows one of [`smi_lookalike_banner`]'s banners and no nvidia-smi banner:
/// a byte search says no first, so the nvidia-smi table's detector pays nothing for it.
pub fn is_smi_lookalike(text: &str) -> bool {
    (text.contains("HL-SMI Version:") || text.contains("Intel XPU-SMI v"))
        && !text.contains("NVIDIA-SMI")
        && text
            .lines()
            .take(4000)
            .any(|l| smi_lookalike_banner(l).is_some())
}

fn hl_smi_line(line: &str) -> bool {
    cells(line).is_some_and(|c| {
        c.first().is_some_and(|f| f.starts_with("HL-SMI Version:"))
            || (c.len() >= 2
                && c[0].split_whitespace().take(2).eq(["AIP", "Name"])
                && c[1].starts_with("Bus-Id"))
    })
}

fn npu_smi_line(line: &str) -> bool {
    cells(line).is_some_and(|c| {
        let first = c.first().copied().unwrap_or("");
        (first.starts_with("npu-smi ") && first.contains("Version:"))
            || (c.len() >= 3
                && first.split_whitespace().eq(["NPU", "Name"])
                && c[1] == "Health"
                && c[2].starts_with("Power(W)"))
    })
}

/// Which vendor's tool the text is, from the first line (or pair of lines) in a tool's own
/// layout; `None` when no line is.
pub fn which(text: &str) -> Option<OtherVendor> {
    let lines: Vec<&str> = text.lines().take(4000).collect();
    let found = |vendor, tool| Some(OtherVendor { vendor, tool });
    let mut gpu_log = 0;
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).copied().unwrap_or("");
        if spacer(line, "ROCm System Management Interface") || spacer(line, "End of ROCm SMI Log") {
            return found("AMD", "rocm-smi");
        }
        if gpu_log_line(line) {
            gpu_log += 1;
            if gpu_log >= 2 {
                return found("AMD", "rocm-smi");
            }
        }
        if amd_smi_banner(line) || amd_smi_pair(line, next) {
            return found("AMD", "amd-smi");
        }
        if rocminfo_pair(line, next) || rock_module_line(line) {
            return found("AMD", "rocminfo");
        }
        if hip_error_line(line) {
            return found("AMD", "HIP runtime (ROCm)");
        }
        if mps_oom_line(line) {
            return found("Apple", "MPS (Metal)");
        }
        if xpu_smi_pair(line, next) || xpu_smi_dump_header(line) {
            return found("Intel", "xpu-smi");
        }
        if sycl_ls_line(line) {
            return found("Intel", "sycl-ls (oneAPI)");
        }
        if let Some(v) = smi_lookalike_banner(line) {
            return Some(v);
        }
        if hl_smi_line(line) {
            return found("Intel Gaudi (Habana)", "hl-smi");
        }
        if npu_smi_line(line) {
            return found("Huawei Ascend", "npu-smi");
        }
        if nccom_test_header(line) {
            return found("AWS (Neuron)", "nccom-test");
        }
    }
    None
}

/// True for a line in one of these tools' layouts (used by the segmenter through
/// [`super::EvidenceKind::detect`] on a block).
pub fn looks_like_other_vendor(text: &str) -> bool {
    which(text).is_some()
}

/// The sentence a report says about such a part.
pub fn sentence(v: &OtherVendor) -> String {
    format!(
        "this is {}'s {} output; gpufix judges NVIDIA GPUs, so nothing in it is judged",
        v.vendor, v.tool
    )
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct OtherVendorKind;

impl super::EvidenceKind for OtherVendorKind {
    fn name(&self) -> &'static str {
        "other-vendor-gpu"
    }
    fn doc(&self) -> &'static str {
        "another vendor's GPU tool or error (AMD rocm-smi/amd-smi/rocminfo/HIP, Intel xpu-smi/sycl-ls, Habana hl-smi, Huawei npu-smi, Apple MPS, AWS Neuron nccom-test): recognised to say what it is; gpufix judges NVIDIA GPUs"
    }
    fn example(&self) -> &'static str {
        "rocm-smi"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "vendor",
                "AMD, Intel, Intel Gaudi (Habana), Huawei Ascend, Apple or AWS (Neuron)",
            ),
            (
                "tool",
                "the tool or runtime that printed it (rocm-smi, xpu-smi, …)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_other_vendor(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        match which(text) {
            Some(v) => super::to_value(&v),
            None => Err(super::ParseError::NotThisKind(
                "no line of another vendor's GPU tool (rocm-smi, amd-smi, rocminfo, a HIP error, xpu-smi, sycl-ls, hl-smi, npu-smi, an MPS error, nccom-test)",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(t: &str) -> Option<(&'static str, &'static str)> {
        which(t).map(|v| (v.vendor, v.tool))
    }

    #[test]
    fn rocm_smi_spacers_old_new_and_behind_a_log_prefix() {
        // ROCm/rocm_smi_lib#77 (2021): the title without spaces; legacy-rocm-build#2410: with
        // spaces and tabs; wandb/wandb#5449: a Slurm log's `nid005113 out: ` before each line
        let old = "========================ROCm System Management Interface========================\nDriver version: 5.6.19\n";
        let new = "========================= ROCm System Management Interface =========================\n=========================== Version of System Component ============================\nGPU[0]\t\t: GPU ID: 0x164e\n";
        let prefixed = "nid005113 out: ======================= ROCm System Management Interface =======================\nnid005113 out: GPU  Temp   AvgPwr  SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%\n";
        for t in [old, new, prefixed] {
            assert_eq!(tool(t), Some(("AMD", "rocm-smi")), "{t}");
        }
        // `printLog` lines alone, tabs expanded
        let lines = "GPU[0]          : Temperature (Sensor edge) (C): 67.0\nGPU[0]          : Temperature (Sensor junction) (C): 76.0\n";
        assert_eq!(tool(lines), Some(("AMD", "rocm-smi")));
    }

    #[test]
    fn amd_smi_rocminfo_and_hip_errors() {
        // ROCm/rocm-systems#3654: amd-smi list
        let list =
            "GPU: 0\n    BDF: 0000:23:00.0\n    UUID: 67ff740f-0000-1000-80e6-b5bb3c3ce0db\n";
        assert_eq!(tool(list), Some(("AMD", "amd-smi")));
        // amd-smi 26's summary table (ROCm issues, 2026), and 27's banner
        let table = "+------------------------------------------------------------------------------+\n| AMD-SMI 26.0.2+39589fda      amdgpu version: 6.14.14  ROCm version: 7.0.2    |\n| Platform: Linux Baremetal                                                    |\n|-------------------------------------+----------------------------------------|\n| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |\n| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |\n|=====================================+========================================|\n| 0000:2d:00.0  AMD Radeon RX 9070 XT | 6 %      62 °C   0           189/266 W |\n|   0       0     N/A             N/A | 100 %   29.8 %          11541/16304 MB |\n+-------------------------------------+----------------------------------------+\n";
        assert_eq!(tool(table), Some(("AMD", "amd-smi")));
        assert!(!crate::evidence::smi_tables::looks_like_table(table));
        assert_eq!(
            tool(
                "| AMD-SMI            27.0.0+6b0e43f3                                           |\n"
            ),
            Some(("AMD", "amd-smi"))
        );
        // ROCm/device-metrics-exporter#259: rocminfo's agents header
        let info = "==========\nHSA Agents\n==========\n*******\nAgent 1\n*******\n";
        assert_eq!(tool(info), Some(("AMD", "rocminfo")));
        assert_eq!(
            tool("ROCk module version 6.8.5 is loaded\n"),
            Some(("AMD", "rocminfo"))
        );
        // etched-ai/open-oasis#27: PyTorch's hipified CUDA check, trailing spaces as pasted
        let hip = "RuntimeError: HIP error: invalid device function  \nHIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n";
        assert_eq!(tool(hip), Some(("AMD", "HIP runtime (ROCm)")));
        // easydiffusion/easydiffusion#1477: the HIP runtime's own message
        let nobin = "Python 3.8.5\nhipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n";
        assert_eq!(tool(nobin), Some(("AMD", "HIP runtime (ROCm)")));
    }

    #[test]
    fn intel_habana_huawei_and_apple() {
        // intel/xpumanager#126 (discovery) and #102 (diag --singletest)
        let disc = "+-----------+------------------------------+\n| Device ID | Device Information           |\n+-----------+------------------------------+\n";
        let diag = "+------------------------------+-----------------+\n| Device ID                    | 0, 1, 2, 3      |\n";
        assert_eq!(tool(disc), Some(("Intel", "xpu-smi")));
        assert_eq!(tool(diag), Some(("Intel", "xpu-smi")));
        // intel/xpumanager#98: `xpu-smi dump`'s CSV header
        let dump = "Timestamp, DeviceId, GPU Utilization (%), GPU Power (W), GPU Frequency (MHz)\n08:08:16.817,    0,  N/A, 281.13, 1600.00\n";
        assert_eq!(tool(dump), Some(("Intel", "xpu-smi")));
        // intel/compute-runtime#764 (new layout) and the old `[backend:type:N]`
        let ls = "[opencl:cpu][opencl:0] Intel(R) OpenCL, Intel(R) Core(TM) i9-10900X CPU @ 3.70GHz OpenCL 3.0 (Build 0) [2024.18.6.0.02_160000]\n";
        assert_eq!(tool(ls), Some(("Intel", "sycl-ls (oneAPI)")));
        assert_eq!(
            tool(
                "[level_zero:gpu:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770 Graphics 1.3 [1.3.26241]\n"
            ),
            Some(("Intel", "sycl-ls (oneAPI)"))
        );
        // Project-HAMi/HAMi-WebUI#47
        let npu = "| npu-smi 25.2.0                   Version: 25.2.0                                               |\n";
        assert_eq!(tool(npu), Some(("Huawei Ascend", "npu-smi")));
        let hl =
            "| HL-SMI Version:                                hl-1.17.0-fw-51.3.0          |\n";
        assert_eq!(tool(hl), Some(("Intel Gaudi (Habana)", "hl-smi")));
        // lllyasviel/Fooocus#1139
        let mps = "RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool.\n";
        assert_eq!(tool(mps), Some(("Apple", "MPS (Metal)")));
    }

    #[test]
    fn nvidia_text_and_prose_that_names_the_tools_are_not_claimed() {
        // NVIDIA's own table, DCGM's discovery box, the CUDA form of the same check, prose
        let smi = "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n|-------------------------------+----------------------+----------------------+\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n";
        let dcgm = "+--------+----------------------------------------------------------------------+\n| GPU ID | Device Information                                                   |\n+--------+----------------------------------------------------------------------+\n";
        let cuda = "RuntimeError: CUDA error: no kernel image is available for execution on the device\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n";
        let prose = "On the AMD box I ran rocm-smi and xpu-smi on the Intel one; the ROCm System Management Interface shows the MI250 idle, and a HIP error: was printed once.\nsycl-ls shows [opencl:gpu] only.\n";
        for t in [smi, dcgm, cuda, prose] {
            assert_eq!(tool(t), None, "{t}");
        }
        // a `GPU[0]` line alone, and a `GPU: 0` without amd-smi's capitalised keys
        assert_eq!(tool("GPU[0]          : GPU ID: 0x731f\n"), None);
        assert_eq!(tool("GPU: 0\n    Product Name: NVIDIA A100\n"), None);
    }

    #[test]
    fn an_nvidia_table_beside_rocm_smi_and_prose_is_still_read_as_nvidia() {
        // an NVIDIA table (h14's GTX 1080 Ti), a sentence naming AMD's tool, then rocm-smi's
        // concise table: the NVIDIA part stays nvidia-smi-table, only the AMD block is this kind
        let t = "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 410.48                 Driver Version: 410.48                    |\n|-------------------------------+----------------------+----------------------+\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n|===============================+======================+======================|\n|   0  GeForce GTX 108...  Off  | 00000000:05:00.0  On |                  N/A |\n|  0%   31C    P2   159W / 250W |   5644MiB / 11178MiB |      0%      Default |\n+-------------------------------+----------------------+----------------------+\n\nThe AMD box runs the same job; rocm-smi there shows it busy.\n\n====================    ROCm System Management Interface    ====================\n================================================================================\n GPU  Temp    AvgPwr   SCLK     MCLK     Fan      Perf    SCLK OD    MCLK OD\n  0   35c     73.68W   1411Mhz  300Mhz   0.0%     auto      0%         0%\n================================================================================\n====================           End of ROCm SMI Log          ====================\n";
        let r = crate::evidence::segment::segment(t);
        let kinds: Vec<&str> = r.parts.iter().map(|p| p.kind.name()).collect();
        assert_eq!(
            kinds,
            ["nvidia-smi-table", "other-vendor-gpu"],
            "{}",
            r.describe()
        );
        assert_eq!(r.parts[1].lines, [(13, 18)]);
    }

    /// Habana's hl-smi as a 2022 run log prints it (github.com code search: a `hl-smi` run in a
    /// rm-runner log, hl-1.4.1), trimmed to two AIPs.
    const HL_SMI: &str = "+-----------------------------------------------------------------------------+\n| HL-SMI Version:                            hl-1.4.1-rc-fw-35.0.2.0          |\n| Driver Version:                                      1.4.0-d8f95f4          |\n|-------------------------------+----------------------+----------------------+\n| AIP  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | AIP-Util  Compute M. |\n|===============================+======================+======================|\n|   0  HL-205              N/A  | 0000:20:1d.0     N/A |                   0  |\n| N/A   35C   N/A   102W / 350W |    512Mib / 32768Mib |     2%           N/A |\n|-------------------------------+----------------------+----------------------+\n|   1  HL-205              N/A  | 0000:a0:1d.0     N/A |                   0  |\n| N/A   36C   N/A   101W / 350W |    512Mib / 32768Mib |     1%           N/A |\n|-------------------------------+----------------------+----------------------+\n";

    /// xpu-smi 2.x's summary as `cmd_smi.cpp` `buildGpuTable` lays it out (banner, the
    /// nvidia-smi column heads, one Arc Pro B60 row pair); borders as its `TableBuilder` draws.
    const XPU_SMI_2: &str = "+-----------------------------------------------------------------------------------------+\n| Intel XPU-SMI v2.1    Driver: 1.6.33578    Level Zero: 1.21.9                           |\n+-------------------------------------------+--------------------------+------------------+\n| GPU  Name                    Persistence-M | Bus-Id            Disp.A | Volatile Uncorr. ECC |\n| Fan              Temp  Pwr:Usage/Cap       | Memory-Usage             | GPU-Util  Compute M. |\n+===========================================+==========================+==================+\n|   0  Intel(R) Arc(TM) Pro B  Off           | 0000:18:00.0      Off    |         Disabled |\n| N/A               45C  35W / 200W          | 1024MiB / 24480MiB       | 0%        Default |\n+-------------------------------------------+--------------------------+------------------+\n";

    #[test]
    fn nvidia_smi_look_alikes_are_other_vendors_not_nvidia_tables() {
        assert_eq!(tool(HL_SMI), Some(("Intel Gaudi (Habana)", "hl-smi")));
        assert_eq!(tool(XPU_SMI_2), Some(("Intel", "xpu-smi")));
        for t in [HL_SMI, XPU_SMI_2] {
            assert!(is_smi_lookalike(t));
            // the nvidia-smi table reader read a Gaudi's rows as GPUs before
            assert!(!crate::evidence::smi_tables::looks_like_table(t), "{t}");
            let r = crate::evidence::segment::segment(t);
            let kinds: Vec<&str> = r.parts.iter().map(|p| p.kind.name()).collect();
            assert_eq!(kinds, ["other-vendor-gpu"], "{}", r.describe());
        }
        // an NVIDIA table stays one, whatever an hl-smi line beside it says
        let nv = "| NVIDIA-SMI 410.48                 Driver Version: 410.48                    |\n| HL-SMI Version:                            hl-1.4.1-rc-fw-35.0.2.0          |\n";
        assert!(!is_smi_lookalike(nv));
        assert!(crate::evidence::smi_tables::looks_like_table(nv));
    }

    #[test]
    fn aws_neurons_nccom_test_table_and_not_nccl_tests() {
        // AWS Neuron's nccom-test user guide (awsdocs-neuron v2.28.1, nccom-test.rst): its
        // first example as the reST code block indents it, and the 1.12 HTML page's flattened
        // copy
        let t = "    nccom-test -r 2 allr\n         size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)\n        33554432        33554432    uint8         768          40.69          40.69\n    Avg bus bandwidth:      40.6901GB/s\n";
        assert_eq!(tool(t), Some(("AWS (Neuron)", "nccom-test")));
        let flat = "nccom-test -r 2 allr\nsize(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n33554432 33554432 uint8 768 40.69 40.69\n";
        assert_eq!(tool(flat), Some(("AWS (Neuron)", "nccom-test")));
        // nccl-tests' own header (units on a second `#` row) and prose naming the tool
        let nccl = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n    33554432       8388608     float     sum      -1    359.0   93.46  163.56      0    358.6   93.58  163.77      0\n# Avg bus bandwidth    : 163.6\n";
        assert_eq!(tool(nccl), None);
        assert_eq!(tool("I ran nccom-test and busbw(GB/s) was 40\n"), None);
    }

    #[test]
    fn the_report_sentence_names_vendor_and_tool() {
        let v = which("==========\nHSA Agents\n==========\n").expect("rocminfo");
        assert_eq!(
            sentence(&v),
            "this is AMD's rocminfo output; gpufix judges NVIDIA GPUs, so nothing in it is judged"
        );
    }
}
