//! DeepSpeed's `ds_report` (`python -m deepspeed.env_report`), the environment report DeepSpeed's
//! issue template asks for and people paste in DeepSpeed, Megatron-DeepSpeed, DeepSpeed-Chat,
//! LLaVA and LLaMA-Factory issues.
//!
//! Written from its producer, `deepspeed/env_report.py` (deepspeedai/DeepSpeed, read at the
//! mirror's HEAD; the `/dev/shm` line and its warnings came in PR #4015, July 2023, the HIP
//! variant of `nvcc version` in PR #1906, April 2022):
//!
//! - `op_report`: a rule of dashes, `DeepSpeed C++/CUDA extension op report`, a NOTE, `JIT
//!   compiled ops requires ninja`, `print('ninja', "." * (max_dots - 5), ninja_status)` with
//!   `[OKAY]` or `[FAIL]`, the header `op name ................ installed .. compatible`, then one
//!   line per op, `print(op_name, dots, is_installed, dots2, is_compatible)`: `[YES]`/`[NO]`, then
//!   `[OKAY]`/`[NO]`. An op builder's `is_compatible` prints its own ` [WARNING]  …` lines before
//!   the op's line (`async_io requires the dev libaio .so object and headers …`). Every status
//!   is wrapped in ANSI colours (`\033[92m[OKAY]\033[0m`), which a paste keeps, drops, or keeps
//!   without the ESC byte (`[92m[OKAY][0m`);
//! - `debug_report`: `DeepSpeed general environment info:`, then `print(name, "." * (33 -
//!   len(name)), value)` for `torch install path` (a Python list), `torch version`
//!   (`torch.__version__`, with its `+cuXYZ` local tag for a PyTorch-index wheel), `deepspeed
//!   install path`, `deepspeed info` (`{version}, {git_hash}, {git_branch}`); on a CUDA
//!   accelerator `torch cuda version` (`torch.version.cuda`, `None` for a CPU or ROCm build),
//!   `torch hip version`, `nvcc version` (`12.1`, `None` on HIP, ` [FAIL] nvcc missing ` or `
//!   [FAIL] cannot find CUDA_HOME via …`), `deepspeed wheel compiled w.` (`torch 2.1, cuda 12.1`
//!   or `torch 1.10, hip 5.1`); on an NPU `torch_npu install path`, `torch_npu version`,
//!   `ascend_cann version`; on any other accelerator only `deepspeed wheel compiled w.` (`torch
//!   2.1 `); last, `shared memory (/dev/shm) size` (`human_readable_size`: `{size:.2f} {unit}`
//!   with 1024-based `B`, `KB`, `MB`, `GB`, `TB`, or `UNKNOWN`), followed, under 512 MiB, by `
//!   [WARNING] /dev/shm size might be too small, if running in docker increase to at least
//!   --shm-size='1gb' ` and, for NCCL, a second `[WARNING]` line. Releases before #4015 print
//!   no `/dev/shm` line; before 0.3.x-era reworks the order differed (`torch cuda version`
//!   before `deepspeed install path`): entries are read by name, in any order.
//!
//! `--hide_operator_status` leaves out the op report; a paste often holds only one part, or
//! only the general entries without their heading (a README's `>> ds_report` excerpt): the kind
//! is recognised from its headings or from two of its entries as `name .... value`.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// The entries `debug_report` prints, as it names them.
pub const ENTRIES: [&str; 12] = [
    "torch install path",
    "torch version",
    "deepspeed install path",
    "deepspeed info",
    "torch cuda version",
    "torch hip version",
    "nvcc version",
    "deepspeed wheel compiled w.",
    "torch_npu install path",
    "torch_npu version",
    "ascend_cann version",
    "shared memory (/dev/shm) size",
];

/// `name .... value` as `print(name, dots, value)` writes it (the value may be empty: `print`
/// of `None`-less empty strings, or a paste that cut it).
static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z_][A-Za-z_ ./()]*?) \.{1,40}(?: (.*))?$").expect("static regex")
});

/// An op line: `op_name .... [YES] .... [OKAY]` (statuses already without colours).
static OP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([a-z][a-z0-9_]*) \.{1,40} \[(YES|NO)\] \.{1,40} \[(OKAY|NO)\]\s*$")
        .expect("static regex")
});

/// `ninja .... [OKAY]` / `[FAIL]`.
static NINJA: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ninja \.{1,40} \[(OKAY|FAIL)\]\s*$").expect("static regex"));

/// `{size:.2f} {unit}` of `human_readable_size`.
static SIZE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+(?:\.\d+)?) ?(B|KB|MB|GB|TB)\b").expect("static regex"));

/// The headings `env_report.py` prints.
const OP_HEADING: &str = "DeepSpeed C++/CUDA extension op report";
const ENV_HEADING: &str = "DeepSpeed general environment info";

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Op {
    pub name: String,
    pub installed: bool,
    pub compatible: bool,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DsReport {
    /// `ninja .... [OKAY]`: true, `[FAIL]`: false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ninja: Option<bool>,
    /// The op table.
    pub ops: Vec<Op>,
    /// The ` [WARNING]  …` lines, as printed (colours dropped).
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_install_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deepspeed_install_path: Option<String>,
    /// `deepspeed info`: the version, git hash and branch, as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deepspeed_info: Option<String>,
    /// The DeepSpeed version (first of `deepspeed info`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deepspeed_version: Option<String>,
    /// `torch.version.cuda`; `None` as printed for a build without CUDA.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_hip_version: Option<String>,
    /// The nvcc release (`12.1`), `None`, or the `[FAIL] …` text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvcc_version: Option<String>,
    /// False where `nvcc version` says `[FAIL]` (nvcc missing, CUDA_HOME not found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvcc_found: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wheel_compiled_with: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_npu_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ascend_cann_version: Option<String>,
    /// `shared memory (/dev/shm) size` as printed (`64.00 MB`, `UNKNOWN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shm_size: Option<String>,
    /// The same in MiB (`human_readable_size` divides by 1024).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shm_size_mib: Option<f64>,
    /// ds_report's own `/dev/shm size might be too small` warning (under 512 MiB) is printed.
    pub shm_warning: bool,
}

impl DsReport {
    fn is_empty(&self) -> bool {
        self.ninja.is_none()
            && self.ops.is_empty()
            && self.torch_version.is_none()
            && self.deepspeed_info.is_none()
            && self.torch_cuda_version.is_none()
            && self.nvcc_version.is_none()
            && self.wheel_compiled_with.is_none()
            && self.shm_size.is_none()
            && self.torch_install_path.is_none()
            && self.deepspeed_install_path.is_none()
    }
}

/// The line without ANSI colours, whether the ESC byte survived the paste or not (`[92m`,
/// `[0m` left behind when it did not).
fn plain(line: &str) -> String {
    static BARE_SGR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[(?:\d{1,3}(?:;\d{1,3})*)?m").expect("static regex"));
    let l = crate::vocab::gpustat_line::strip_ansi(line);
    BARE_SGR.replace_all(&l, "").into_owned()
}

/// One general entry: `(name, value)`, for the names [`ENTRIES`] lists.
pub fn entry(line: &str) -> Option<(&'static str, String)> {
    // env_report.py prints `name`, a space and the dots before any colour (colours wrap only the
    // values): a line without ` .` is no entry. `torch_env::read` asks this of every line of
    // every paste, so the colour stripping and the regex run only on lines that can be one.
    if !super::scan::has!(line, " .") {
        return None;
    }
    let l = plain(line);
    let c = ENTRY.captures(l.trim())?;
    let name = c.get(1)?.as_str().trim();
    let key = ENTRIES.iter().find(|e| **e == name)?;
    let value = c.get(2).map(|m| m.as_str().trim()).unwrap_or("");
    Some((key, value.to_string()))
}

/// `64.00 MB` → MiB.
fn size_mib(v: &str) -> Option<f64> {
    let c = SIZE.captures(v.trim())?;
    let n: f64 = c[1].parse().ok()?;
    let f = match &c[2] {
        "B" => 1.0 / (1024.0 * 1024.0),
        "KB" => 1.0 / 1024.0,
        "MB" => 1.0,
        "GB" => 1024.0,
        _ => 1024.0 * 1024.0,
    };
    Some(n * f)
}

/// Reads every part of a ds_report in `text` (quoted with `> ` or not).
pub fn read(text: &str) -> DsReport {
    let text = super::unquote(text);
    let mut r = DsReport::default();
    for raw in super::content_lines(&text) {
        let line = plain(raw);
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = NINJA.captures(t) {
            r.ninja = Some(&c[1] == "OKAY");
            continue;
        }
        if let Some(c) = OP.captures(t) {
            if r.ops.len() < super::MAX_ITEMS {
                r.ops.push(Op {
                    name: c[1].to_string(),
                    installed: &c[2] == "YES",
                    compatible: &c[3] == "OKAY",
                });
            }
            continue;
        }
        if let Some(w) = t.strip_prefix("[WARNING]") {
            let w = w.trim();
            if w.starts_with("/dev/shm size might be too small") {
                r.shm_warning = true;
            }
            if r.warnings.len() < super::MAX_ITEMS && !r.warnings.iter().any(|x| x == w) {
                r.warnings.push(super::clip(w, super::MAX_TEXT));
            }
            continue;
        }
        let Some((name, value)) = entry(t) else {
            continue;
        };
        let value = super::clip(&value, super::MAX_TEXT);
        let slot = match name {
            "torch install path" => &mut r.torch_install_path,
            "torch version" => &mut r.torch_version,
            "deepspeed install path" => &mut r.deepspeed_install_path,
            "deepspeed info" => &mut r.deepspeed_info,
            "torch cuda version" => &mut r.torch_cuda_version,
            "torch hip version" => &mut r.torch_hip_version,
            "nvcc version" => &mut r.nvcc_version,
            "deepspeed wheel compiled w." => &mut r.wheel_compiled_with,
            "torch_npu version" => &mut r.torch_npu_version,
            "ascend_cann version" => &mut r.ascend_cann_version,
            "shared memory (/dev/shm) size" => &mut r.shm_size,
            _ => continue,
        };
        if slot.is_none() && !value.is_empty() {
            *slot = Some(value);
        }
    }
    if let Some(i) = &r.deepspeed_info {
        r.deepspeed_version = i
            .split(',')
            .next()
            .map(|s| s.trim().to_string())
            .filter(|s| s.starts_with(|c: char| c.is_ascii_digit()));
    }
    if let Some(n) = &r.nvcc_version {
        r.nvcc_found = match n.as_str() {
            "None" => None,
            _ if n.contains("[FAIL]") => Some(false),
            _ => Some(true),
        };
    }
    r.shm_size_mib = r.shm_size.as_deref().and_then(size_mib);
    r
}

/// The torch build a ds_report names: `(version, tag)` from `torch version`, where it carries a
/// local tag (`2.0.1+cu117`).
pub fn torch_build(r: &DsReport) -> Option<(String, String)> {
    let v = r.torch_version.as_deref()?;
    let (ver, tag) = v.split_once('+')?;
    let tag = tag.trim().to_ascii_lowercase();
    let known = (tag.starts_with("cu") && tag[2..].chars().all(|c| c.is_ascii_digit()))
        || tag == "cpu"
        || tag.starts_with("rocm");
    (known && ver.starts_with(|c: char| c.is_ascii_digit())).then(|| (ver.to_string(), tag))
}

/// True when the text is a ds_report: one of its headings at a line's start, or two of its
/// general entries as `name .... value`.
pub fn looks_like(text: &str) -> bool {
    let mut entries = 0;
    for l in text.lines().take(400) {
        let t = plain(l);
        let t = t.trim();
        if t.starts_with(OP_HEADING) || t.starts_with(ENV_HEADING) {
            return true;
        }
        if entry(t).is_some() {
            entries += 1;
            if entries >= 2 {
                return true;
            }
        }
    }
    false
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct DsReportKind;

impl super::EvidenceKind for DsReportKind {
    fn name(&self) -> &'static str {
        "ds-report"
    }
    fn doc(&self) -> &'static str {
        "DeepSpeed's ds_report: the C++/CUDA op report and the general environment info (torch and its CUDA, nvcc, the wheel's build, /dev/shm size)"
    }
    fn example(&self) -> &'static str {
        "ds_report"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("ninja", "ninja found (true for [OKAY], false for [FAIL])"),
            (
                "ops",
                "the op table: [{name, installed ([YES]), compatible ([OKAY])}]",
            ),
            (
                "warnings",
                "the [WARNING] lines (async_io without libaio, /dev/shm too small, …)",
            ),
            ("torch_install_path", "torch install path, as printed"),
            ("torch_version", "torch.__version__ (2.0.1+cu117)"),
            (
                "deepspeed_install_path",
                "deepspeed install path, as printed",
            ),
            (
                "deepspeed_info",
                "deepspeed info: version, git hash, branch",
            ),
            (
                "deepspeed_version",
                "the DeepSpeed version of deepspeed info",
            ),
            (
                "torch_cuda_version",
                "torch.version.cuda (11.7; None for a CPU or ROCm build)",
            ),
            ("torch_hip_version", "torch.version.hip"),
            (
                "nvcc_version",
                "the nvcc release, None, or the [FAIL] text (nvcc missing, CUDA_HOME not found)",
            ),
            ("nvcc_found", "false where nvcc version says [FAIL]"),
            (
                "wheel_compiled_with",
                "deepspeed wheel compiled w. (torch 2.1, cuda 12.1)",
            ),
            ("torch_npu_version", "torch_npu version (Ascend NPU)"),
            ("ascend_cann_version", "ascend_cann version (Ascend NPU)"),
            (
                "shm_size",
                "shared memory (/dev/shm) size as printed (64.00 MB, UNKNOWN)",
            ),
            ("shm_size_mib", "the /dev/shm size in MiB"),
            (
                "shm_warning",
                "ds_report's own warning that /dev/shm is under 512 MiB is printed",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["shm", "cuda.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let r = read(text);
        if r.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no ds_report op line (`op .... [YES] .... [OKAY]`) and no general entry (`torch version .... V`)",
            ));
        }
        super::to_value(&r)
    }
}

#[cfg(test)]
mod tests {
    use super::super::EvidenceKind;
    use super::*;

    /// https://github.com/deepspeedai/DeepSpeed/pull/1906 (the PR's "Previous:" block): ROCm
    /// torch, nvcc FAIL, no /dev/shm line (before PR #4015).
    const PR1906: &str = "torch version .................... 1.10.0a0+git539d476
torch cuda version ............... None
torch hip version ................ 5.1.20531-cacfa990
nvcc version .....................  [FAIL] cannot find CUDA_HOME via torch.utils.cpp_extension.CUDA_HOME=None
deepspeed install path ........... ['/opt/conda/lib/python3.7/site-packages/deepspeed']
deepspeed info ................... 0.6.2+ef17c89, ef17c89, master
deepspeed wheel compiled w. ...... torch 1.10, cuda 0.0, hip 5.1
";

    #[test]
    fn general_entries_of_a_rocm_report_with_nvcc_failing() {
        assert!(looks_like(PR1906));
        let r = read(PR1906);
        assert_eq!(r.torch_version.as_deref(), Some("1.10.0a0+git539d476"));
        assert_eq!(r.torch_cuda_version.as_deref(), Some("None"));
        assert_eq!(r.torch_hip_version.as_deref(), Some("5.1.20531-cacfa990"));
        assert_eq!(r.nvcc_found, Some(false));
        assert!(
            r.nvcc_version
                .as_deref()
                .unwrap()
                .starts_with("[FAIL] cannot find CUDA_HOME")
        );
        assert_eq!(r.deepspeed_version.as_deref(), Some("0.6.2+ef17c89"));
        assert_eq!(
            r.wheel_compiled_with.as_deref(),
            Some("torch 1.10, cuda 0.0, hip 5.1")
        );
        assert_eq!(
            r.deepspeed_install_path.as_deref(),
            Some("['/opt/conda/lib/python3.7/site-packages/deepspeed']")
        );
        // a git tag is no build tag
        assert_eq!(torch_build(&r), None);
        assert!(r.shm_size.is_none() && r.shm_size_mib.is_none());
    }

    /// https://github.com/deepspeedai/DeepSpeed/issues/6972 (healthy op report part: async_io
    /// not compatible for want of libaio) and DeepSpeed#3710 (every op pre-built).
    #[test]
    fn op_table_ninja_and_warnings() {
        let t = "JIT compiled ops requires ninja
ninja .................. [OKAY]
--------------------------------------------------
op name ................ installed .. compatible
--------------------------------------------------
 [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.
async_io ............... [NO] ....... [NO]
fused_adam ............. [NO] ....... [OKAY]
stochastic_transformer . [YES] ...... [OKAY]
";
        let r = read(t);
        assert_eq!(r.ninja, Some(true));
        assert_eq!(r.ops.len(), 3);
        assert_eq!(
            r.ops[0],
            Op {
                name: "async_io".into(),
                installed: false,
                compatible: false
            }
        );
        assert!(r.ops[2].installed && r.ops[2].compatible);
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].starts_with("async_io requires the dev libaio"));
        // the header line is no op
        assert!(!r.ops.iter().any(|o| o.name == "op"));
    }

    /// Colours as printed (`\x1b[92m[OKAY]\x1b[0m`) and as a paste that lost the ESC byte
    /// keeps them (env_report.py's GREEN/RED/YELLOW/END); ninja `[FAIL]`.
    #[test]
    fn ansi_colours_with_or_without_the_escape_byte() {
        let t = "ninja .................. \x1b[91m[FAIL]\x1b[0m\nfused_adam ............. [93m[NO][0m ....... [92m[OKAY][0m\n";
        let r = read(t);
        assert_eq!(r.ninja, Some(false));
        assert_eq!(r.ops.len(), 1);
        assert!(!r.ops[0].installed && r.ops[0].compatible);
    }

    /// The /dev/shm entry and its warnings: 64 MB with the warning as `get_shm_size` prints it
    /// in a container on Docker's default (written from env_report.py: the text of PR #4015's
    /// screenshot is not stored), 1007.76 GB on a host (the `>> ds_report` excerpt of
    /// lsdefine/simple_GRPO's README.md), and UNKNOWN (statvfs failing).
    #[test]
    fn shm_size_in_every_unit_and_the_warning() {
        let small = "DeepSpeed general environment info:
torch version .................... 2.0.1+cu117
torch cuda version ............... 11.7
shared memory (/dev/shm) size .... 64.00 MB
  [93m [WARNING] /dev/shm size might be too small, if running in docker increase to at least --shm-size='1gb' [0m
";
        let r = read(small);
        assert_eq!(r.shm_size.as_deref(), Some("64.00 MB"));
        assert_eq!(r.shm_size_mib, Some(64.0));
        assert!(r.shm_warning);
        assert_eq!(
            torch_build(&r),
            Some(("2.0.1".to_string(), "cu117".to_string()))
        );
        let big = "torch version .................... 2.3.0+cu121\ndeepspeed info ................... 0.12.0, unknown, unknown\nshared memory (/dev/shm) size .... 1007.76 GB\n";
        let r = read(big);
        assert!((r.shm_size_mib.unwrap() - 1007.76 * 1024.0).abs() < 0.01);
        assert!(!r.shm_warning);
        let r = read(
            "torch version .................... 2.1.0\nshared memory (/dev/shm) size .... UNKNOWN\n",
        );
        assert_eq!(r.shm_size.as_deref(), Some("UNKNOWN"));
        assert_eq!(r.shm_size_mib, None);
    }

    /// The NPU and the other-accelerator variants of `debug_report`: the XPU entries as an
    /// Aurora run log in a public repository prints them, four spaces in (found with the code
    /// search, by its text: `deepspeed wheel compiled w. ...... torch 2.1 `, 503.18 GB); the NPU
    /// lines written from env_report.py's `npu` branch (no public NPU paste was found).
    #[test]
    fn npu_and_xpu_variants_and_indented_entries() {
        let t = "    torch version .................... 2.1.0a0+cxx11.abi
    deepspeed info ................... 0.12.3+6ea44d02, 6ea44d02, HEAD
    deepspeed wheel compiled w. ...... torch 2.1 
    shared memory (/dev/shm) size .... 503.18 GB
torch_npu version ................ 2.1.0.post3
ascend_cann version .............. 7.0.0
";
        assert!(looks_like(t));
        let r = read(t);
        assert_eq!(r.wheel_compiled_with.as_deref(), Some("torch 2.1"));
        assert_eq!(r.torch_npu_version.as_deref(), Some("2.1.0.post3"));
        assert_eq!(r.ascend_cann_version.as_deref(), Some("7.0.0"));
        assert_eq!(r.deepspeed_version.as_deref(), Some("0.12.3+6ea44d02"));
        assert!(r.shm_size_mib.unwrap() > 500.0 * 1024.0);
    }

    /// Prose that names the entries is not a report; the op heading alone is.
    #[test]
    fn detection() {
        assert!(!looks_like(
            "please paste your torch version and the deepspeed info from ds_report\n"
        ));
        assert!(looks_like(
            "--------\nDeepSpeed C++/CUDA extension op report\n--------\n"
        ));
        assert!(DsReportKind.parse("hello\n").is_err());
        let v = DsReportKind.parse(PR1906).unwrap();
        assert_eq!(v["nvcc_found"], false);
    }
}
