//! `python -m torch.utils.collect_env` output: the PyTorch build, the CUDA it was built with and
//! finds at run time, the GPUs and driver, and the package lists. Written from
//! `torch/utils/collect_env.py` (pytorch/pytorch; read at 95511e23, PyTorch 1.10, and its
//! later `env_info_fmt` in 2.x copies): `env_info_fmt` prints one `Key: value` line per field —
//! PyTorch version, Is debug build, CUDA used to build PyTorch, ROCM used to build PyTorch, OS,
//! GCC version, Clang version, CMake version, Libc version, Python version, Python platform, Is
//! CUDA available, CUDA runtime version, CUDA_MODULE_LOADING set to (2.0+), GPU models and
//! configuration, Nvidia driver version, cuDNN version, Is XPU available (2.4+), HIP runtime
//! version, MIOpen runtime version, Is XNNPACK available (1.13+), Caching allocator config —
//! then a `CPU:` block (2.0+) and `Versions of relevant libraries:` with `[pip3] name==ver` and
//! `[conda] name ver build channel` lines. `pretty_str` writes `None` as `Could not collect`,
//! booleans as `Yes`/`No` (1.x) or `True`/`False` (later), `No CUDA` when torch sees no CUDA at
//! all, and starts a multi-line value (several GPUs, several cuDNN libraries) on the next line.
//! Older versions (1.0–1.4) print the same keys without some of them.
//!
//! PyTorch 2.8+ (`get_env_info`, the XPU block of pytorch/pytorch#137846) prints, after `Is XPU
//! available: True`, `XPU used to build PyTorch: V` and three headed lists of `* ` lines: `Intel
//! GPU driver version:`, `Intel GPU models onboard:`, `Intel GPU models detected:`.
//! vLLM's copy (`vllm/collect_env.py`, read at vllm-project/vllm 030ea52e) prints the same keys
//! padded to one column before the colon (`Nvidia driver version        : 570.124.06`) under
//! `==============================` section titles (System Info, PyTorch Info, Python
//! Environment, CUDA / GPU Info, Intel XPU / GPU Info), adds `XPU used to build PyTorch` /
//! `XPU runtime version` / `Intel GPU models`, and heads the packages `Versions of relevant
//! libraries` without a colon. Every key of `env_info_fmt` is printed every time, so a pasted
//! excerpt that starts below `PyTorch version` still shows a run of the CUDA/GPU keys.

use super::cuda_compat;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Package {
    /// `pip3`, `pip`, `conda`
    pub manager: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct CollectEnv {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_debug_build: Option<bool>,
    /// "CUDA used to build PyTorch" (`12.1`); absent for `None`/`Could not collect`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda_code: Option<u32>,
    /// The build is CPU-only ("CUDA used to build PyTorch: None", or a `+cpu` version).
    pub cpu_only_build: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rocm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The OS line names Windows (driver numbering differs there).
    pub windows: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clang: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmake: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub libc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python_platform: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_available: Option<bool>,
    /// "CUDA runtime version": the toolkit nvcc found on the machine (not what torch ships).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_runtime_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_module_loading: Option<String>,
    pub gpus: Vec<Gpu>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia_driver_version: Option<String>,
    /// The newest CUDA the driver runs, from NVIDIA's driver table (`12080`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_max_cuda_code: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_max_cuda: Option<String>,
    /// cuDNN: a version, or the library paths it found.
    pub cudnn: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xpu_available: Option<bool>,
    /// "XPU used to build PyTorch" (2.8+; vLLM's copy also "XPU runtime version"): the oneAPI
    /// build (`20250101`); absent for `N/A`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xpu_build: Option<String>,
    /// The `* NAME` lines under "Intel GPU models onboard:" (vLLM: "Intel GPU models :").
    pub intel_gpus: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hip_runtime_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miopen_runtime_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xnnpack_available: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caching_allocator_config: Option<String>,
    /// The `CPU:` block, `Key: value` lines (lscpu on Linux, wmic on Windows).
    pub cpu: BTreeMap<String, String>,
    pub packages: Vec<Package>,
    /// Keys printed but absent from the producer's format (a newer collect_env), kept by name.
    pub other_keys: Vec<String>,
}

/// collect_env's own first line and its first two keys: the output is recognised by them,
/// written as `Key: value` (or, as CJK input methods and retyped pastes write it, with a
/// full-width colon `：` or only a space after the key, in any case: see `key_value`). An
/// excerpt cut above `PyTorch version` is recognised by three of the keys only collect_env
/// prints, one after another in `env_info_fmt` (`Is CUDA available` .. `Is XNNPACK available`).
/// An excerpt of its last section alone (`Versions of relevant libraries`) is recognised by two
/// of its pip lines: `pretty_str` tags every line of `pip list --format=freeze` with
/// `[{pip_version}] ` (`prepend`, `pip_version` being `pip` or `pip3`; torch/utils/collect_env.py
/// read at pytorch/pytorch 00adac86, the same in 2.x and in vLLM's copy), so `[pip3] name==ver`
/// is collect_env's own line, not pip's (see `pip_line`).
///
/// vLLM's copy opens with its `System Info` section (`env_info_fmt` of `vllm/collect_env.py`,
/// vllm-project/vllm at 030ea52e: `==============================`, `        System Info`, the
/// rule again, then `OS`, `GCC version`, `Clang version`, `CMake version` and `Libc version`
/// padded to one column before ` : `), and `main` prints `Collecting environment information...`
/// above it (`get_pip_packages` then `uv is set` where pip is missing from a uv venv). Those
/// keys are printed by other reports too, so that section is recognised by its title between
/// the rules followed by the padded `OS` key (`vllm_system_info`): a paste cut into blocks
/// reads the section with the rest of the output.
pub fn looks_like(text: &str) -> bool {
    if vllm_system_info(text) {
        return true;
    }
    let mut torch = false;
    let mut cuda_build = false;
    let mut own: Vec<&'static str> = Vec::new();
    let mut pip_lines = 0;
    for l in text.lines().take(20_000) {
        let l = strip_quote(l);
        if l.starts_with("[pip") && pip_line(l) {
            pip_lines += 1;
            if pip_lines >= 2 {
                return true;
            }
            continue;
        }
        let kv = key_value(l);
        match kv {
            Some(("PyTorch version", v)) if !v.is_empty() => torch = true,
            Some(("CUDA used to build PyTorch" | "Is CUDA available", v)) if !v.is_empty() => {
                cuda_build = true
            }
            _ => {}
        }
        if let Some((k, v)) = kv
            && OWN_KEYS.contains(&k)
            && !own.contains(&k)
            // a padded key with nothing after it is a value printed on the next lines (GPUs)
            && (!v.is_empty() || l.ends_with(':') || k == "GPU models and configuration")
        {
            own.push(k);
        }
        if (torch && cuda_build) || own.len() >= 3 {
            return true;
        }
    }
    false
}

/// vLLM's `System Info` section head (see [`looks_like`]): a rule of `=`, the title alone on its
/// line, the rule again, and the padded `OS` key (`OS` then spaces then `:`) on the next line.
fn vllm_system_info(text: &str) -> bool {
    let rule = |l: &str| l.len() >= 10 && l.bytes().all(|b| b == b'=');
    let lines: Vec<&str> = text.lines().take(200).map(strip_quote).collect();
    lines.windows(4).any(|w| {
        rule(w[0])
            && w[1] == "System Info"
            && rule(w[2])
            && w[3]
                .strip_prefix("OS ")
                .is_some_and(|r| r.trim_start_matches(' ').starts_with(':'))
    })
}

/// The keys of `env_info_fmt` that no other tool prints as `Key: value` lines (`OS`, `GCC
/// version`, `Python version` and the like are left out: other reports print them too).
const OWN_KEYS: &[&str] = &[
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Is XPU available",
    "XPU used to build PyTorch",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    // printed by every version's `env_info_fmt` ("Is debug build" since 1.0, "Python platform"
    // and "Libc version" since 1.9 and 1.10): what is left of a copy that drops the CUDA keys
    // (vllm-project/vllm-ascend's `collect_env.py`, vllm-ascend#5680)
    "Is debug build",
    "Python platform",
    "Libc version",
];

/// A collect_env key at the start of the line and its value: the key as the producer prints it
/// (any letter case: `Os` for `OS`), then `:`, a full-width `：` or a space, then the value.
/// The longest key that fits wins (`CUDA used to build PyTorch` over nothing shorter).
fn key_value(l: &str) -> Option<(&'static str, &str)> {
    let mut best: Option<(&'static str, &str)> = None;
    for k in KEYS {
        let Some(head) = l.get(..k.len()) else {
            continue;
        };
        if !head.eq_ignore_ascii_case(k) {
            continue;
        }
        let rest = &l[k.len()..];
        // vLLM pads the key to one column: `Nvidia driver version        : 570.124.06`
        let padded = rest.trim_start_matches(' ');
        let v = if let Some(v) = rest
            .strip_prefix(':')
            .or_else(|| rest.strip_prefix('\u{ff1a}'))
        {
            v
        } else if rest.starts_with(' ')
            && let Some(v) = padded.strip_prefix(':')
        {
            v
        } else if rest.starts_with(' ') {
            // only a value that does not read as prose: `PyTorch version 1.5.0`
            let v = rest.trim_start();
            if v.split_whitespace().count() > 3 {
                continue;
            }
            v
        } else {
            continue;
        };
        if best.is_none_or(|(b, _)| b.len() < k.len()) {
            best = Some((k, v.trim()));
        }
    }
    best
}

/// A line as printed, without a markdown quote (`> `) or the indentation of a pasted block.
fn strip_quote(l: &str) -> &str {
    let mut l = l.trim_start();
    while let Some(r) = l.strip_prefix('>') {
        l = r.trim_start();
    }
    l.trim_end()
}

fn value(v: &str) -> Option<String> {
    let v = v.trim();
    match v {
        "" | "Could not collect" | "N/A" | "No CUDA" | "None" => None,
        _ => Some(super::clip(v, 300)),
    }
}

fn boolean(v: &str) -> Option<bool> {
    match v.trim() {
        "Yes" | "True" => Some(true),
        "No" | "False" => Some(false),
        _ => None,
    }
}

const KEYS: &[&str] = &[
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Is XPU available",
    "XPU used to build PyTorch",
    "XPU runtime version",
    "Intel GPU driver version",
    "Intel GPU models onboard",
    "Intel GPU models detected",
    "Intel GPU models",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "Caching allocator config",
];

#[derive(PartialEq)]
enum Block {
    None,
    Gpus,
    Cudnn,
    Cpu,
    Libraries,
    /// `* NAME` lines of "Intel GPU models onboard:"
    IntelGpus,
    /// `* ...` lines of "Intel GPU driver version:" / "Intel GPU models detected:"
    Stars,
}

fn gpu_line(l: &str) -> Option<Gpu> {
    // `GPU 0: Tesla V100-PCIE-16GB` (nvidia-smi -L with the UUID taken out)
    let r = l.strip_prefix("GPU ")?;
    let (i, name) = r.split_once(':').or_else(|| r.split_once('\u{ff1a}'))?;
    let name = name.trim();
    let name = name
        .split_once(" (UUID:")
        .map(|(n, _)| n)
        .unwrap_or(name)
        .trim();
    Some(Gpu {
        index: i.trim().parse().ok()?,
        name: super::clip(name, 200),
    })
}

/// A package line of collect_env's pip list: `[pip3] ` or `[pip] ` (the tag `prepend` writes),
/// then one line of `pip list --format=freeze`, `name==version` (a PEP 508 name; a version
/// that starts with a digit). A line that only names a package (`[pip3] torch`) or carries prose
/// after the tag is not counted.
fn pip_line(l: &str) -> bool {
    let Some(rest) = l
        .strip_prefix("[pip3] ")
        .or_else(|| l.strip_prefix("[pip] "))
    else {
        return false;
    };
    let Some((name, version)) = rest.trim().split_once("==") else {
        return false;
    };
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && version.starts_with(|c: char| c.is_ascii_digit())
        && !version.contains(char::is_whitespace)
}

fn package_line(l: &str) -> Option<Package> {
    let (tag, rest) = l.strip_prefix('[')?.split_once(']')?;
    let rest = rest.trim();
    if rest.is_empty() || rest == "Could not collect" || rest == "No relevant packages" {
        return None;
    }
    if tag == "conda" {
        let mut f = rest.split_whitespace();
        return Some(Package {
            manager: "conda".into(),
            name: super::clip(f.next()?, 100),
            version: f.next().map(|v| super::clip(v, 100)),
        });
    }
    let (name, version) = match rest.split_once("==") {
        Some((n, v)) => (n.trim(), Some(super::clip(v.trim(), 100))),
        None => (rest, None),
    };
    Some(Package {
        manager: super::clip(tag, 20),
        name: super::clip(name, 100),
        version,
    })
}

pub fn parse_collect_env(text: &str) -> CollectEnv {
    let mut e = CollectEnv::default();
    let mut cuda_build_not_collected = false;
    let mut block = Block::None;
    for raw in text.lines() {
        let l = strip_quote(raw);
        if l.is_empty() {
            if block != Block::Libraries {
                block = Block::None;
            }
            continue;
        }
        if let Some((k, v)) = key_value(l) {
            block = Block::None;
            match k {
                "PyTorch version" => e.torch_version = value(v),
                "Is debug build" => e.is_debug_build = boolean(v),
                "CUDA used to build PyTorch" => {
                    cuda_build_not_collected = v.trim() == "Could not collect";
                    e.torch_cuda = value(v);
                    e.torch_cuda_code = e.torch_cuda.as_deref().and_then(cuda_compat::cuda_code);
                    if v.trim() == "None" {
                        e.cpu_only_build = true;
                    }
                }
                "ROCM used to build PyTorch" => e.rocm = value(v),
                "OS" => {
                    e.windows = v.contains("Windows");
                    e.os = value(v);
                }
                "GCC version" => e.gcc = value(v),
                "Clang version" => e.clang = value(v),
                "CMake version" => e.cmake = value(v),
                "Libc version" => e.libc = value(v),
                "Python version" => e.python_version = value(v),
                "Python platform" => e.python_platform = value(v),
                "Is CUDA available" => e.cuda_available = boolean(v),
                "CUDA runtime version" => e.cuda_runtime_version = value(v),
                "CUDA_MODULE_LOADING set to" => e.cuda_module_loading = value(v),
                "GPU models and configuration" => match gpu_line(v.trim()) {
                    Some(g) => e.gpus.push(g),
                    None if v.trim().is_empty() => block = Block::Gpus,
                    None => {}
                },
                "Nvidia driver version" => e.nvidia_driver_version = value(v),
                "cuDNN version" => match value(v) {
                    Some(x) if x != "Probably one of the following:" => e.cudnn.push(x),
                    Some(_) => block = Block::Cudnn,
                    None if v.trim().is_empty() => block = Block::Cudnn,
                    None => {}
                },
                "Is XPU available" => e.xpu_available = boolean(v),
                "XPU used to build PyTorch" | "XPU runtime version" => e.xpu_build = value(v),
                "Intel GPU models onboard" | "Intel GPU models" => match value(v) {
                    Some(n) => {
                        if let Some(n) = n.strip_prefix("* ") {
                            e.intel_gpus.push(super::clip(n.trim(), 200));
                        }
                    }
                    None if v.trim().is_empty() => block = Block::IntelGpus,
                    None => {}
                },
                "Intel GPU driver version" | "Intel GPU models detected" => block = Block::Stars,
                "HIP runtime version" => e.hip_runtime_version = value(v),
                "MIOpen runtime version" => e.miopen_runtime_version = value(v),
                "Is XNNPACK available" => e.xnnpack_available = boolean(v),
                "Caching allocator config" => e.caching_allocator_config = value(v),
                _ => {}
            }
            continue;
        }
        if l == "CPU:" {
            block = Block::Cpu;
            continue;
        }
        // torch writes the colon, vLLM's copy a section title without it
        if l == "Versions of relevant libraries:" || l == "Versions of relevant libraries" {
            block = Block::Libraries;
            continue;
        }
        if l.starts_with('[')
            && let Some(p) = package_line(l)
        {
            if e.packages.len() < 4 * super::MAX_ITEMS {
                e.packages.push(p);
            }
            continue;
        }
        match block {
            Block::Gpus => {
                if let Some(g) = gpu_line(l) {
                    if e.gpus.len() < super::MAX_ITEMS {
                        e.gpus.push(g);
                    }
                } else {
                    block = Block::None;
                }
            }
            Block::IntelGpus | Block::Stars => match l.strip_prefix("* ") {
                Some(n) => {
                    if block == Block::IntelGpus && e.intel_gpus.len() < super::MAX_ITEMS {
                        e.intel_gpus.push(super::clip(n.trim(), 200));
                    }
                }
                None => block = Block::None,
            },
            Block::Cudnn => {
                if e.cudnn.len() < 16 {
                    e.cudnn.push(super::clip(l, 300));
                }
            }
            Block::Cpu => {
                // lscpu prints `Key: value`, wmic on Windows `Key=value`
                if let Some((k, v)) = l.split_once(':').or_else(|| l.split_once('='))
                    && e.cpu.len() < 64
                {
                    e.cpu
                        .insert(super::clip(k.trim(), 60), super::clip(v.trim(), 200));
                }
            }
            _ => {
                // a `Key: value` line of a newer collect_env this reader does not know
                if let Some((k, _)) = l.split_once(": ")
                    && let k = k.trim_end()
                    && e.torch_version.is_some()
                    && k.len() < 60
                    && k.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                    && e.other_keys.len() < 16
                    && !e.other_keys.iter().any(|o| o == k)
                {
                    e.other_keys.push(k.to_string());
                }
            }
        }
    }
    if e.torch_version
        .as_deref()
        .is_some_and(|v| v.ends_with("+cpu"))
    {
        e.cpu_only_build = true;
    }
    // `get_env_info` takes the build's CUDA from `torch.version.cuda` (`N/A` for a HIP build)
    // and `pretty_str`'s `replace_nones` prints None as `Could not collect` (torch 1.x and 2.x;
    // `None` in the oldest): with a torch version and no ROCm or XPU build, that is a build
    // without CUDA (conda's `cpuonly`, a PyPI CPU wheel whose version has no `+cpu`).
    if !e.cpu_only_build
        && e.torch_version.is_some()
        && e.rocm.is_none()
        && e.xpu_build.is_none()
        && cuda_build_not_collected
    {
        e.cpu_only_build = true;
    }
    if let Some(d) = &e.nvidia_driver_version {
        e.driver_max_cuda_code = cuda_compat::driver_max_cuda(d, e.windows);
        e.driver_max_cuda = e.driver_max_cuda_code.map(cuda_compat::cuda_code_str);
    }
    e
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct CollectEnvKind;

impl super::EvidenceKind for CollectEnvKind {
    fn name(&self) -> &'static str {
        "torch-collect-env"
    }
    fn doc(&self) -> &'static str {
        "`python -m torch.utils.collect_env` output: the PyTorch build and its CUDA, CUDA available, GPUs, driver, cuDNN, packages"
    }
    fn example(&self) -> &'static str {
        "python -m torch.utils.collect_env"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("torch_version", "PyTorch version"),
            ("is_debug_build", "Is debug build"),
            ("torch_cuda", "CUDA used to build PyTorch"),
            ("torch_cuda_code", "the same as a CUDA code (12010)"),
            ("cpu_only_build", "a CPU-only build (`None`, `+cpu`)"),
            ("rocm", "ROCM used to build PyTorch"),
            ("os", "OS"),
            (
                "windows",
                "the OS is Windows (its driver numbering differs)",
            ),
            ("gcc", "GCC version"),
            ("clang", "Clang version"),
            ("cmake", "CMake version"),
            ("libc", "Libc version"),
            ("python_version", "Python version"),
            ("python_platform", "Python platform"),
            ("cuda_available", "Is CUDA available"),
            (
                "cuda_runtime_version",
                "CUDA runtime version (the toolkit nvcc found)",
            ),
            ("cuda_module_loading", "CUDA_MODULE_LOADING set to"),
            ("gpus", "GPU models and configuration: index, name"),
            ("nvidia_driver_version", "Nvidia driver version"),
            (
                "driver_max_cuda_code",
                "the newest CUDA that driver runs (NVIDIA's driver table)",
            ),
            ("driver_max_cuda", "the same as major.minor"),
            ("cudnn", "cuDNN version, or the libraries it found"),
            ("xpu_available", "Is XPU available"),
            ("xpu_build", "XPU used to build PyTorch (2.8+)"),
            ("intel_gpus", "Intel GPU models onboard: the names"),
            ("hip_runtime_version", "HIP runtime version"),
            ("miopen_runtime_version", "MIOpen runtime version"),
            ("xnnpack_available", "Is XNNPACK available"),
            ("caching_allocator_config", "Caching allocator config"),
            ("cpu", "the CPU: block, key to value"),
            (
                "packages",
                "pip/conda package lines: manager, name, version",
            ),
            (
                "other_keys",
                "keys of a newer collect_env this reader does not know",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cuda.log", "cuda.compat"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_collect_env(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn driver_418_under_a_cuda_10_2_build() {
        // pytorch/pytorch#43058: two V100s listed, CUDA not available, driver 418.67 (CUDA 10.1)
        let e = parse_collect_env(&fixture("collect_env/torch16_v100_driver_418.txt"));
        assert_eq!(e.torch_version.as_deref(), Some("1.6.0"));
        assert_eq!(e.is_debug_build, Some(false));
        assert_eq!(e.torch_cuda.as_deref(), Some("10.2"));
        assert_eq!(e.torch_cuda_code, Some(10020));
        assert_eq!(
            e.os.as_deref(),
            Some("Red Hat Enterprise Linux Server 7.6 (Maipo)")
        );
        assert_eq!(
            e.gcc.as_deref(),
            Some("(GCC) 4.8.5 20150623 (Red Hat 4.8.5-36)")
        );
        assert_eq!(e.cmake, None);
        assert_eq!(e.python_version.as_deref(), Some("3.7"));
        assert_eq!(e.cuda_available, Some(false));
        assert_eq!(e.cuda_runtime_version, None);
        assert_eq!(
            e.gpus,
            [
                Gpu {
                    index: 0,
                    name: "Tesla V100-PCIE-16GB".into()
                },
                Gpu {
                    index: 1,
                    name: "Tesla V100-PCIE-16GB".into()
                }
            ]
        );
        assert_eq!(e.nvidia_driver_version.as_deref(), Some("418.67"));
        assert_eq!(e.driver_max_cuda_code, Some(10010));
        assert_eq!(e.driver_max_cuda.as_deref(), Some("10.1"));
        assert!(e.cudnn.is_empty());
        assert_eq!(e.packages.len(), 4);
        assert_eq!(e.packages[1].name, "torch");
        assert_eq!(e.packages[1].version.as_deref(), Some("1.6.0"));
        assert_eq!(e.packages[2].manager, "conda");
        assert!(!e.windows && !e.cpu_only_build);
    }

    #[test]
    fn healthy_windows_2_0_with_cpu_block() {
        // pytorch/pytorch#51858 comment: 2.0.1+cu117 on driver 535.98, CUDA available
        let e = parse_collect_env(&fixture("collect_env/torch20_windows_1050ti_healthy.txt"));
        assert_eq!(e.torch_version.as_deref(), Some("2.0.1+cu117"));
        assert_eq!(e.torch_cuda_code, Some(11070));
        assert_eq!(e.rocm, None);
        assert!(e.windows);
        assert_eq!(e.clang, None);
        assert_eq!(e.libc, None);
        assert_eq!(
            e.python_platform.as_deref(),
            Some("Windows-10-10.0.22621-SP0")
        );
        assert_eq!(e.cuda_available, Some(true));
        assert_eq!(e.cuda_runtime_version.as_deref(), Some("11.7.64"));
        assert_eq!(e.cuda_module_loading.as_deref(), Some("LAZY"));
        assert_eq!(
            e.gpus,
            [Gpu {
                index: 0,
                name: "NVIDIA GeForce GTX 1050 Ti".into()
            }]
        );
        assert_eq!(e.nvidia_driver_version.as_deref(), Some("535.98"));
        assert_eq!(e.driver_max_cuda_code, Some(12010));
        assert_eq!(e.cudnn.len(), 1);
        assert_eq!(e.hip_runtime_version, None);
        assert_eq!(e.xnnpack_available, Some(true));
        assert_eq!(
            e.cpu.get("Name").map(String::as_str),
            Some("Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz")
        );
        assert!(
            e.packages
                .iter()
                .any(|p| p.name == "torch" && p.version.as_deref() == Some("2.0.1+cu117"))
        );
    }

    #[test]
    fn quoted_and_could_not_collect() {
        let e = parse_collect_env(&fixture("collect_env/torch15_quoted_titan_rtx.txt"));
        assert_eq!(e.torch_version.as_deref(), Some("1.5.0+cu101"));
        assert_eq!(e.cuda_available, Some(true));
        assert_eq!(e.gpus.len(), 2);
        assert!(e.windows);
        assert_eq!(e.driver_max_cuda_code, Some(10020));
        assert!(looks_like(&fixture(
            "collect_env/torch15_quoted_titan_rtx.txt"
        )));
    }

    #[test]
    fn cpu_only_build_and_detection() {
        let e = parse_collect_env(
            "PyTorch version: 1.7.1+cpu\nIs debug build: False\nCUDA used to build PyTorch: None\n",
        );
        assert!(e.cpu_only_build);
        assert_eq!(e.torch_cuda, None);
        // espnet/espnet#2626 (conda's cpuonly 1.4.0 beside two Quadro P5000): collect_env 1.x
        // prints torch.version.cuda's None as `Could not collect`
        let t = "PyTorch version: 1.4.0\nIs debug build: No\nCUDA used to build PyTorch: Could not collect\n\nPython version: 3.8\nIs CUDA available: No\nCUDA runtime version: Could not collect\nGPU models and configuration: \nGPU 0: Quadro P5000\nGPU 1: Quadro P5000\n\nNvidia driver version: 450.51.06\n";
        assert!(parse_collect_env(t).cpu_only_build);
        // healthy neighbour: a CUDA build (torch 2.1.0 for 12.1, espnet/espnet#5629) is not
        let t = "PyTorch version: 2.1.0\nIs debug build: False\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\nIs CUDA available: False\nGPU models and configuration: GPU 0: A100-PCIE-40GB\nNvidia driver version: 460.32.03\n";
        assert!(!parse_collect_env(t).cpu_only_build);
        // nor is an excerpt without the build line, nor a ROCm build (its CUDA line is `N/A`)
        assert!(
            !parse_collect_env("PyTorch version: 2.1.0\nIs CUDA available: False\n").cpu_only_build
        );
        let t = "PyTorch version: 2.4.0+rocm6.1\nCUDA used to build PyTorch: Could not collect\nROCM used to build PyTorch: 6.1.40091-a8dbc0c19\n";
        assert!(!parse_collect_env(t).cpu_only_build);
        // vllm-ascend#5680: vLLM Ascend's copy of collect_env prints no CUDA key
        let t = "Collecting environment information...\nPyTorch version: 2.8.0+cpu\nIs debug build: False\n\nOS: Ubuntu 22.04.5 LTS (x86_64)\nGCC version: (Ubuntu 11.4.0-1ubuntu1~22.04.2) 11.4.0\nClang version: Could not collect\nCMake version: version 4.2.1\nLibc version: glibc-2.35\n\nPython version: 3.11.13 (main, Nov 20 2025, 16:03:05) [GCC 11.4.0] (64-bit runtime)\nPython platform: Linux-5.15.0-134-generic-x86_64-with-glibc2.35\n";
        assert!(looks_like(t));
        assert!(parse_collect_env(t).cpu_only_build);
        // two of them alone are not enough (a pip report's platform line)
        assert!(!looks_like(
            "Python platform: Linux-5.15\nLibc version: glibc-2.35\n"
        ));
        assert!(!looks_like("PyTorch version: 2.1 is out\n"));
        assert!(!looks_like("hello\n"));
    }

    #[test]
    fn retyped_keys_full_width_colons_and_case() {
        // pytorch/pytorch#37320 (problem: torch 1.5 for CUDA 10.2 on driver 410), as published:
        // no colon after `PyTorch version`, `Os:`, full-width colons after `GPU N`
        let t = "PyTorch version 1.5.0\nIs debug build: No\nCUDA used to build PyTorch: 10.2\n\nOs: Ubuntu 18.04.3 LTS\nIs CUDA available: No\nGPU models and configuration:\nGPU 0\u{ff1a} Tesla P100-PCIE-16GB\nGPU 1\u{ff1a} Tesla P100-PCIE-16GB\n\nNvidia driver version: 410.104\n";
        assert!(looks_like(t));
        let e = parse_collect_env(t);
        assert_eq!(e.torch_version.as_deref(), Some("1.5.0"));
        assert_eq!(e.torch_cuda.as_deref(), Some("10.2"));
        assert_eq!(e.os.as_deref(), Some("Ubuntu 18.04.3 LTS"));
        assert_eq!(e.gpus.len(), 2);
        assert_eq!(e.gpus[1].name, "Tesla P100-PCIE-16GB");
        assert_eq!(e.nvidia_driver_version.as_deref(), Some("410.104"));
        // healthy, the producer's own layout (pytorch/pytorch#43058's keys): read the same way
        let e = parse_collect_env(
            "PyTorch version: 1.6.0\nCUDA used to build PyTorch: 10.2\nOS: Ubuntu\nGPU models and configuration: GPU 0: Tesla V100\n",
        );
        assert_eq!(e.os.as_deref(), Some("Ubuntu"));
        assert_eq!(e.gpus.len(), 1);
        // prose that starts with a key is not a key
        assert!(!looks_like(
            "PyTorch version 2.1 is out with a new allocator\nIs CUDA available: Yes\n"
        ));
    }

    #[test]
    fn vllm_padded_keys_read_like_torch_keys() {
        // healthy: vllm-project/vllm#29864, vLLM's padded collect_env of a torch 2.10 nightly
        // (cu128) on four RTX 5090, driver 570.172.08; `CUDA_MODULE_LOADING set to   : ` empty
        let t = fixture("collect_env/vllm_torch210_cu128_4x5090_vllm29864.txt");
        assert!(looks_like(&t));
        let e = parse_collect_env(&t);
        assert_eq!(e.torch_version.as_deref(), Some("2.10.0.dev20251124+cu128"));
        assert_eq!(e.is_debug_build, Some(false));
        assert_eq!(e.torch_cuda.as_deref(), Some("12.8"));
        assert_eq!(e.os.as_deref(), Some("Ubuntu 22.04.5 LTS (x86_64)"));
        assert_eq!(e.cuda_available, Some(true));
        assert_eq!(e.cuda_runtime_version.as_deref(), Some("12.8.93"));
        assert_eq!(e.cuda_module_loading, None);
        assert_eq!(e.gpus.len(), 4);
        assert_eq!(e.gpus[3].name, "NVIDIA GeForce RTX 5090");
        assert_eq!(e.nvidia_driver_version.as_deref(), Some("570.172.08"));
        assert_eq!(e.driver_max_cuda_code, Some(12080));
        assert!(e.other_keys.is_empty(), "{:?}", e.other_keys);
        // the thread's problem is vLLM's (vllm-project/vllm#30435, "vllm problem with cu130"):
        // a cu130 build under WSL2 with driver 581.57, two GPUs on the lines after the key
        let t = "==============================\n       PyTorch Info\n==============================\nPyTorch version              : 2.9.0+cu130\nIs debug build               : False\nCUDA used to build PyTorch   : 13.0\nROCM used to build PyTorch   : N/A\n\n==============================\n       CUDA / GPU Info\n==============================\nIs CUDA available            : True\nCUDA runtime version         : Could not collect\nCUDA_MODULE_LOADING set to   : \nGPU models and configuration : \nGPU 0: NVIDIA GeForce RTX 5090\nGPU 1: NVIDIA GeForce RTX 5060 Ti\n\nNvidia driver version        : 581.57\n";
        assert!(looks_like(t));
        let e = parse_collect_env(t);
        assert_eq!(e.torch_cuda_code, Some(13000));
        assert_eq!(e.cuda_runtime_version, None);
        assert_eq!(e.gpus.len(), 2);
        assert_eq!(e.gpus[1].name, "NVIDIA GeForce RTX 5060 Ti");
        assert_eq!(e.nvidia_driver_version.as_deref(), Some("581.57"));
    }

    #[test]
    fn an_excerpt_cut_above_pytorch_version_is_still_collect_env() {
        // problem: pytorch/pytorch#150733 (torch 2.6.0+cu126 on an RTX 5090 D, sm_120), the
        // report from `Python version` on: the CUDA/GPU keys still show the GPU and the driver
        let full = fixture("collect_env/torch26_cu126_5090d_pytorch150733.txt");
        let cut = &full[full.find("Python version").unwrap()..];
        assert!(looks_like(cut));
        let e = parse_collect_env(cut);
        assert_eq!(e.torch_version, None);
        assert_eq!(e.gpus[0].name, "NVIDIA GeForce RTX 5090 D");
        assert_eq!(e.nvidia_driver_version.as_deref(), Some("570.124.04"));
        // healthy: intel/torch-xpu-ops#3817, a torch 2.8+ XPU report from `Python version` on,
        // every CUDA key `No CUDA`, the XPU block with its tab-separated driver lines
        let t = "Python version: 3.10.20 (main, Mar  3 2026, 15:36:40) [GCC 13.3.0] (64-bit runtime)\nPython platform: Linux-5.15.0-176-generic-x86_64-with-glibc2.39\nIs CUDA available: False\nCUDA runtime version: No CUDA\nCUDA_MODULE_LOADING set to: N/A\nGPU models and configuration: No CUDA\nNvidia driver version: No CUDA\ncuDNN version: No CUDA\nIs XPU available: True\nXPU used to build PyTorch: 20260000\nIntel GPU driver version:\n* intel-opencl-icd:\t25.18.33578.51-1146~24.04\n* libze1:\t1.24.0.0-1146~24.04\nIntel GPU models onboard:\n* Intel(R) Data Center GPU Max 1100\n* Intel(R) Data Center GPU Max 1100\nIntel GPU models detected:\n* [0] _XpuDeviceProperties(name='Intel(R) Data Center GPU Max 1100', type='gpu')\nHIP runtime version: N/A\n";
        assert!(looks_like(t));
        let e = parse_collect_env(t);
        assert_eq!(e.cuda_available, Some(false));
        assert!(e.gpus.is_empty());
        assert_eq!(e.nvidia_driver_version, None);
        assert_eq!(e.xpu_available, Some(true));
        assert_eq!(e.xpu_build.as_deref(), Some("20260000"));
        assert_eq!(e.intel_gpus, vec!["Intel(R) Data Center GPU Max 1100"; 2]);
        // two generic keys are not enough: other reports print `OS:` and `Python version:`
        assert!(!looks_like(
            "OS: Ubuntu 22.04\nPython version: 3.10\nIs CUDA available: True\n"
        ));
    }

    #[test]
    fn the_library_section_alone_is_collect_env() {
        // Sandermage/genesis-vllm-patches#24: the tail of vLLM's collect_env, its pip lines
        // (torch 2.11.0, nvidia-nccl-cu13 2.28.9) and the vLLM Info block, nothing above
        let tail = fixture("collect_env/vllm_tail_pip_torch2110_nccl2289_cu13.txt");
        assert!(looks_like(&tail));
        let e = parse_collect_env(&tail);
        assert!(e.packages.iter().any(|p| p.manager == "pip3"
            && p.name == "torch"
            && p.version.as_deref() == Some("2.11.0")));
        assert!(
            e.packages
                .iter()
                .any(|p| p.name == "nvidia-nccl-cu13" && p.version.as_deref() == Some("2.28.9"))
        );
        // nothing in it to judge: no build, GPU or driver is made up
        assert_eq!((e.torch_version, e.gpus.len()), (None, 0));
        assert_eq!(e.nvidia_driver_version, None);
        // torch 1.x's `[pip] ` tag too
        assert!(looks_like("[pip] numpy==1.18.1\n[pip] torch==1.4.0\n"));
        // one line, a bare name, prose after the tag or pip's own freeze lines are not enough
        assert!(!looks_like("[pip3] torch==2.1.0\n"));
        assert!(!looks_like("[pip3] torch\n[pip3] numpy\n"));
        assert!(!looks_like(
            "[pip3] I ran pip install torch==2.9 and\n[pip3] then torch==2.9 again\n"
        ));
        assert!(!looks_like("torch==2.9.1+cu128\ntriton==3.5.1\n"));
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("collect_env/torch20_windows_1050ti_healthy.txt");
        for p in prefixes(&text, 9) {
            let _ = parse_collect_env(p);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_collect_env(&s);
        }
    }
    /// vLLM's collect_env opens with `System Info` (OS, GCC, Clang, CMake, Libc) above a blank
    /// line: that block alone is vLLM's output and is read with the rest
    /// (flashinfer-ai/flashinfer#3279 and vllm-project/vllm#42186, h135's corpus texts).
    #[test]
    fn vllm_system_info_section_is_collect_env() {
        let head = "Collecting environment information...\nuv is set\n==============================\n        System Info\n==============================\nOS                           : Ubuntu 24.04.4 LTS (x86_64)\nGCC version                  : (Ubuntu 13.3.0-6ubuntu2~24.04.1) 13.3.0\nClang version                : Could not collect\nCMake version                : version 3.28.3\nLibc version                 : glibc-2.39\n";
        assert!(looks_like(head));
        let whole = format!(
            "{head}\n==============================\n       PyTorch Info\n==============================\nPyTorch version              : 2.11.0+cu130\nIs debug build               : False\nCUDA used to build PyTorch   : 13.0\n"
        );
        let e = parse_collect_env(&whole);
        assert_eq!(e.os.as_deref(), Some("Ubuntu 24.04.4 LTS (x86_64)"));
        assert_eq!(e.libc.as_deref(), Some("glibc-2.39"));
        assert_eq!(e.cmake.as_deref(), Some("version 3.28.3"));
        assert_eq!(e.torch_version.as_deref(), Some("2.11.0+cu130"));
        let r = crate::evidence::segment::segment(&whole);
        assert!(r.unread.is_empty(), "{:?}", r.unread);
        assert_eq!(r.parts.len(), 1);
        assert_eq!(r.parts[0].kind.name(), "torch-collect-env");
        // quoted in a post, the same
        let quoted: String = head.lines().map(|l| format!("> {l}\n")).collect();
        assert!(looks_like(&quoted));
        // neighbours: another report's OS line, a title without the rules, the padded key
        // under another title, the torch format's own `OS:` without vLLM's head
        assert!(!looks_like(
            "OS                           : Ubuntu 22.04\nGCC version : 11.4.0\n"
        ));
        assert!(!looks_like(
            "System Info\nOS                           : Ubuntu 22.04\n"
        ));
        assert!(!looks_like(
            "==============================\n       CPU Info\n==============================\nOS                           : Ubuntu 22.04\n"
        ));
        assert!(!looks_like(
            "==============================\n        System Info\n==============================\nOS: Ubuntu 22.04 is what I run\n"
        ));
        assert!(!looks_like("== System Info ==\nOS : Ubuntu\n"));
    }
}
