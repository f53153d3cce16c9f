//! The PyTorch build and the GPUs a paste names, wherever a tool printed them: the CUDA the torch
//! wheel was built with and the GPU product names, so that a GPU newer than everything that CUDA
//! can compile for is seen even where PyTorch's own warning was not pasted.
//!
//! Written from the producers' sources:
//! - torch's `collect_env` (`torch/utils/collect_env.py`, pytorch/pytorch 1.x–2.x): `PyTorch
//!   version: V`, `CUDA used to build PyTorch: X.Y` (`None` for a CPU build; vLLM's copy pads the
//!   key: `CUDA used to build PyTorch   : 12.8`), `GPU N: NAME` under `GPU models and configuration`,
//!   `[pip3] torch==V`;
//! - ComfyUI (`comfy/model_management.py`, comfyanonymous/ComfyUI 0.3): `pytorch version: V` and
//!   `Device: cuda:N NAME : BACKEND` (`get_torch_device_name`: `"{} {} : {}".format(device,
//!   torch.cuda.get_device_name(device), allocator_backend)`); its error report
//!   (Comfy-Org/ComfyUI_frontend `src/utils/errorReportUtil.ts`, `generateErrorReport`): `- **PyTorch
//!   Version:** V` under `## System Information`, `- **Name:** cuda:N NAME : BACKEND` under `##
//!   Devices`, both from `/system_stats`;
//! - sglang's `python -m sglang.check_env` (sgl-project/sglang `python/sglang/check_env.py`):
//!   `PyTorch: V`, `GPU 0,1,…: NAME`, `GPU 0,1,… Compute Capability: M.m`;
//! - LLaMA-Factory's `llamafactory-cli env` (hiyouga/LlamaFactory `src/llamafactory/extras/env.py`,
//!   `print_env`, read at 9174a7a8): one `- {key}: {value}` line per entry, `` `llamafactory`
//!   version`` first, `PyTorch version: V (GPU)` (torch.__version__ with ` (GPU)`, ` (NPU)` or
//!   ` (SUPA)` appended), then `GPU type: NAME` (`torch.cuda.get_device_name()`), `GPU number`,
//!   `GPU memory`; an issue pasted unfenced loses the `- ` and the backticks to GitHub's markdown
//!   (`llamafactory version: 0.9.3.dev0`). Its build is read even where the GPU is a name the
//!   table does not know (a China-market SKU): the report is then read, not judged;
//! - the Hugging Face libraries' `env` commands, which print one `- {prop}: {val}` line per
//!   entry: transformers' `transformers env` (`src/transformers/commands/env.py`, read at
//!   026b0db8: `` `transformers` version`` first, `PyTorch version (GPU?): {torch.__version__}
//!   ({torch.cuda.is_available()})`), accelerate's `accelerate env`
//!   (`src/accelerate/commands/env.py`, read at bb22ffc8: `` `Accelerate` version`` first,
//!   `PyTorch version: {torch.__version__}` (`PyTorch version (GPU?): V (True)` in 0.x),
//!   `GPU type: {torch.cuda.get_device_name()}`) and TRL's `trl env` (`trl/scripts/env.py`,
//!   read at 3da24240: `TRL version`, `PyTorch version: {importlib.metadata.version("torch")}`,
//!   `CUDA device(s): {", ".join(torch.cuda.get_device_name(i) …)}` or `not available`). Such a
//!   report is read as what it is even where it shows no build to judge: TRL's package version
//!   carries no `+cuXYZ` for a PyPI wheel, and a virtual GPU (`NVIDIA vGPU-32GB`,
//!   huggingface/trl#2864) is no name the table knows; `report` then says which report was read;
//! - DeepSpeed's `ds_report` (`deepspeed/env_report.py`, read in [`super::ds_report`]): `torch
//!   version .... V` (`torch.__version__`), and `torch cuda version .... X.Y` (`torch.version.cuda`,
//!   `None` for a build without CUDA), read where the version carries no `+cuXYZ` (a PyPI wheel);
//!   a `torch hip version` other than `None` is a ROCm build;
//! - pyannote.audio's checkpoint check (pyannote/pyannote-audio `pyannote/audio/utils/version.py`,
//!   `check_version`, 3.x, and 2.x's `Model.check_version` in `pyannote/audio/core/model.py`,
//!   both read as stored by the search tool): `Model.on_load_checkpoint` calls it with the
//!   checkpoint's versions as `theirs` and the running `torch.__version__` as `mine`, and it
//!   prints `{what} was trained with {library} {theirs}, yours is {mine}. ` then "Bad things
//!   will probably happen unless you upgrade …", "Bad things might happen unless you revert …"
//!   or "This should be OK …" (`what` is `Model` or `Pipeline`). Only `mine` is this
//!   environment's torch (semver keeps its `+cu126` build metadata); `theirs` is the machine the
//!   checkpoint was saved on, the same `1.10.0+cu102` in every whisperX log (its VAD model), and
//!   is not read as a build. The line is a report of its own: read even where it names no GPU;
//! - torch's own build configuration, `torch.__config__.show()` (pytorch/pytorch
//!   `aten/src/ATen/Version.cpp`, `show_config`: `PyTorch built with:` then one `  - …` line per
//!   item; `aten/src/ATen/cuda/detail/CUDAHooks.cpp`, `CUDAHooks::showConfig`, 1.x-2.x: `  - CUDA
//!   Runtime X.Y`, the runtime `cudaRuntimeGetVersion` loaded, then `  - Built with CUDA Runtime
//!   X.Y` where that differs from the `CUDART_VERSION` torch was compiled with, then `  - NVCC
//!   architecture flags: …`), as OpenMMLab's environment reports print it under `PyTorch
//!   compiling details` (open-mmlab/mmcv `mmcv/utils/env.py`, `collect_env`, read at 01941ca5:
//!   `GPU 0,1: NAME` per device name, `PyTorch: {torch.__version__}`, `PyTorch compiling details:
//!   {get_build_config()}`, the same in mmengine's `collect_env`), and at the head of every
//!   MMDetection/MMSegmentation training log. The CUDA torch was built with is the `Built with`
//!   line's where there is one, else the `CUDA Runtime` line's; only inside that block (a
//!   `- CUDA Runtime` line elsewhere is no build), and a ROCm build's `HIP Runtime` is not read;
//! - the build's own list of architectures, where the text prints it: `torch.cuda.get_arch_list()`
//!   (`torch/cuda/__init__.py`: `arch_flags.split()` of `torch._C._cuda_getArchFlags()`, the
//!   build's `TORCH_CUDA_ARCH_LIST` as `sm_XX` cubins and `compute_XX` PTX), as Python prints the
//!   list (`['sm_50', 'sm_60', …, 'compute_37']`) on the line after the call or after a label
//!   that says `arch list` (nnDetection's `PyTorch CUDA Arch List: [...]`), and show_config's
//!   `  - NVCC architecture flags: -gencode;arch=compute_50,code=sm_50;…` (`code=sm_XX` a cubin,
//!   `code=compute_XX` PTX). A GPU runs the build where a cubin of its major is no newer than it
//!   or a PTX is no newer than it (the rule of `_check_capability`'s `DEVICE_REQUIREMENT` in
//!   2.11, without its few listed exceptions). The capability a text prints for the GPU
//!   (`torch.cuda.get_device_capability()`'s `(8, 6)`, nnDetection's `PyTorch Current Device
//!   Capability: (8, 6)`) stands for a GPU whose name the text does not give. The build's own
//!   list is judged before any table: a conda or source build carries its own list;
//! - pip (`pip list` rows `torch  V`, `pip freeze` `torch==V`) and the many scripts that log
//!   `PyTorch version: {torch.__version__}` or print `torch.__version__` on its own line.
//!
//! A version's local part names the build (PEP 440; PyTorch's wheel indexes use `+cuXYZ`,
//! `+cpu`, `+rocmX.Y`). GPU names are read with [`super::gpu_arch`], which knows names as the
//! driver prints them, and GeForce cards as their owners write them (`RTX 5060 Ti`). Nothing is guessed: a paste with two torch builds (before and after a
//! reinstall), a CPU or ROCm build, or no GPU the table knows gives no build to judge.

use super::cuda_compat;
use super::gpu_arch::{self, Named};
use super::torch_wheels;
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// A torch version with its build tag, after any of the labels the producers print.
static TORCH_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:^|[^a-z0-9_.\-/\\])(?:py)?torch(?:\s*version(?:\s*\((?:GPU|accelerator)\?\))?|版本|\.__version__\)?)?["']?(?:\*\*)?\s*(?:==|:|：|=|\s)\s*(?:\*\*)?\s*['"]?v?(\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?)\+(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*)\b"#,
    )
    .expect("static regex")
});

/// pyannote.audio's `check_version` line for torch (see the module's sources): the version after
/// `yours is`, with its build tag where it has one, is the running torch.
static PYANNOTE_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:Model|Pipeline) was trained with torch \S+, yours is v?(\d+\.\d+\.\d+)(?:\+(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*))?\.",
    )
    .expect("static regex")
});

/// The report name of a pyannote.audio checkpoint check.
const PYANNOTE_REPORT: &str = "pyannote.audio checkpoint check";

/// Some line is pyannote.audio's check of the torch a checkpoint was saved with.
fn pyannote_check(text: &str) -> bool {
    text.contains(" was trained with torch ") && text.lines().any(|l| PYANNOTE_CHECK.is_match(l))
}

/// zzc0721/torch-performance-test-data's `test.py` (`generate_github_issue_link`): `- PyTorch版本：
/// {torch_version}` where `torch_version = f"torch{torch.__version__.replace('.', '').replace('+',
/// '')}"` (`torch271cu126` for 2.7.1+cu126; a two-digit minor reads `torch2100cu128`), beside `-
/// 设备名称：{torch.cuda.get_device_name(0)}`.
static DOTLESS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"PyTorch版本[:：]\s*torch(\d)(\d{1,2})(\d)(cu\d{2,3}|cpu)\b").expect("static regex")
});

/// collect_env's build line (torch's and vLLM's layouts).
static BUILT_WITH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"CUDA used to build PyTorch\s*:\s*(\d+\.\d+|None)\b").expect("static regex")
});

/// A CUDA line of torch's build configuration (see the module's sources), the `  - ` trimmed:
/// `(Built with )?`, the version.
static CONFIG_RUNTIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^-\s+(Built with )?CUDA Runtime (\d+\.\d+)\b").expect("static regex")
});

/// The head line of torch's build configuration (`show_config`).
const CONFIG_HEAD: &str = "PyTorch built with:";

/// A version alone on a line (`print(torch.__version__)`'s output, with or without quotes), or
/// first of the values one `print` wrote: Python's `print(*objects)` joins them with a space, so
/// `print(torch.__version__, torch.version.cuda)` writes `2.4.1+cu124 12.4` (`torch/version.py`'s
/// `cuda` is `'12.4'`, `None` for a CPU build) and `print(torch.__version__,
/// torch.cuda.is_available())` writes `2.4.1+cu124 True` (runpod/containers#114).
static BARE_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^['"]?(\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?)\+(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*)['"]?(?: (?:\d+\.\d+|None|True|False))?$"#,
    )
    .expect("static regex")
});

/// sglang's `GPU 0,1: NAME` and `GPU 0,1 Compute Capability: M.m`.
static SGLANG_GPU: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^GPU ([\d,]+): (.+)$").expect("static regex"));
static SGLANG_CC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^GPU ([\d,]+) Compute Capability: (\d+)\.(\d+)\s*$").expect("static regex")
});

/// A platform whose official wheels carry other architecture lists than Linux x86_64's: Windows
/// (collect_env's `OS: Microsoft Windows …`, `Python platform: Windows-10-…`, `[MSC v.…]`;
/// ComfyUI's `**OS:** nt`; a `C:\` path; nvidia-smi's `WDDM`) or aarch64 (`aarch64`, `arm64`,
/// `sbsa`). WSL runs the Linux wheels (`Linux-…-microsoft-standard-WSL2`).
static WINDOWS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bWindows\b|\bwin32\b|win_amd64|\[MSC v\.|(?i:\bOS:?\**:?\s*nt\b)|\bWDDM\b|\b[A-Z]:\\",
    )
    .expect("static regex")
});
static ARM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\baarch64\b|\barm64\b|\bsbsa\b").expect("static regex"));

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TorchEnv {
    /// torch versions with a build tag (`2.6.0+cu126`), in the order seen.
    pub torch_versions: Vec<String>,
    /// The distinct CUDA versions the text says torch was built with (`12.6`).
    pub torch_cuda: Vec<String>,
    /// A CPU-only build was named (`+cpu`, `CUDA used to build PyTorch: None`).
    pub cpu_only_build: bool,
    /// A ROCm build was named (`+rocm6.0`).
    pub rocm_build: bool,
    /// GPUs named as the driver prints names, with their compute capability (sm).
    pub gpus: Vec<Named>,
    /// The text shows a platform other than Linux x86_64 (`windows`, `aarch64`), whose official
    /// wheels carry other architecture lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// The build's own architecture lists the text prints (`get_arch_list()`, show_config's
    /// NVCC flags), each as PyTorch writes it (`sm_50 … compute_90`), distinct.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arch_lists: Vec<Vec<String>>,
    /// The environment report the text is, where it is one of the Hugging Face libraries'
    /// (`transformers env`, `accelerate env`, `trl env`, `llamafactory-cli env`) or
    /// pyannote.audio's checkpoint check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

/// A GPU that no kernel of the build can run: its major architecture is newer than the
/// build's CUDA can compile for.
#[derive(Debug, Clone, PartialEq)]
pub struct Lacking {
    pub gpu: String,
    pub sm: u32,
    /// The first CUDA that builds kernels it runs (`12080`).
    pub need: u32,
    /// The CUDA the build was made with (`12010`).
    pub build: u32,
}

/// A GPU older than every architecture of the official wheel the text names (see
/// [`torch_wheels`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WheelLacking {
    pub gpu: String,
    pub sm: u32,
    /// The build as written (`2.8.0+cu129`).
    pub build: String,
    /// Its CUDA (`12090`).
    pub build_cuda: u32,
    /// The architectures that wheel carries (`sm_70 … compute_120`).
    pub archs: Vec<String>,
    /// Where that list was read.
    pub source: &'static str,
    /// The wheel's platform as a message names it (`Linux x86_64`, `Windows`); empty where the
    /// CUDA toolkit's floor judged the build, whatever built it.
    pub platform: &'static str,
    /// The newest CUDA variant of the same release that runs the GPU (`12060`).
    pub alternative: Option<u32>,
    /// The list is the build's own, read from the text (not a table's).
    pub from_text: bool,
}

use crate::vocab::push_unique;

impl TorchEnv {
    fn add_tag(&mut self, version: &str, tag: &str) {
        push_unique(
            &mut self.torch_versions,
            super::clip(&format!("{version}+{tag}"), 64),
        );
        if tag == "cpu" {
            self.cpu_only_build = true;
        } else if tag.starts_with("rocm") {
            self.rocm_build = true;
        } else if let Some(c) = cuda_compat::cuda_code(tag) {
            push_unique(&mut self.torch_cuda, cuda_compat::cuda_code_str(c));
        }
    }

    /// The CUDA of one build configuration block: its `Built with CUDA Runtime`, else its
    /// `CUDA Runtime` (see the module's sources).
    fn add_config_build(&mut self, block: Option<(Option<String>, Option<String>)>) {
        if let Some((runtime, built)) = block
            && let Some(v) = built.or(runtime)
            && let Some(code) = cuda_compat::cuda_code(&v)
        {
            push_unique(&mut self.torch_cuda, cuda_compat::cuda_code_str(code));
        }
    }

    fn add_gpu(&mut self, g: Named) {
        if !self.gpus.iter().any(|x| x.name == g.name) && self.gpus.len() < super::MAX_ITEMS {
            self.gpus.push(g);
        }
    }

    /// The one architecture list the text prints for the build; `None` where it prints none or
    /// several that differ (two environments).
    pub fn one_arch_list(&self) -> Option<ArchList> {
        match self.arch_lists.as_slice() {
            [one] => ArchList::from_entries(one.iter().map(String::as_str)),
            _ => None,
        }
    }

    /// Nothing of a build or a GPU was read.
    pub fn is_empty(&self) -> bool {
        self.arch_lists.is_empty()
            && self.torch_versions.is_empty()
            && self.torch_cuda.is_empty()
            && !self.cpu_only_build
            && !self.rocm_build
            && self.gpus.is_empty()
    }

    /// Another paste's findings added to these (the evidence files of one run).
    pub fn merge(&mut self, other: TorchEnv) {
        for v in other.torch_versions {
            push_unique(&mut self.torch_versions, v);
        }
        for c in other.torch_cuda {
            push_unique(&mut self.torch_cuda, c);
        }
        for l in other.arch_lists {
            if !self.arch_lists.contains(&l) {
                self.arch_lists.push(l);
            }
        }
        self.cpu_only_build |= other.cpu_only_build;
        self.rocm_build |= other.rocm_build;
        if self.platform.is_none() {
            self.platform = other.platform;
        }
        if self.report.is_none() {
            self.report = other.report;
        }
        for g in other.gpus {
            self.add_gpu(g);
        }
    }

    /// The CUDA of the one build the text names (`12010`); `None` when it names none, several,
    /// or a CPU or ROCm build beside it.
    pub fn build_cuda_code(&self) -> Option<u32> {
        if self.cpu_only_build || self.rocm_build || self.torch_cuda.len() != 1 {
            return None;
        }
        cuda_compat::cuda_code(&self.torch_cuda[0])
    }

    /// The text shows one CUDA build (or the build's own architecture list) and at least one GPU
    /// the table knows: enough to judge.
    pub fn judgeable(&self) -> bool {
        (self.build_cuda_code().is_some() || self.one_arch_list().is_some())
            && !self.gpus.is_empty()
    }

    /// The GPU (the one needing the newest CUDA, if several) that the build's CUDA cannot
    /// compile any kernel for (see [`cuda_compat::family_min_cuda`]).
    pub fn lacking(&self) -> Option<Lacking> {
        let build = self.build_cuda_code()?;
        self.gpus
            .iter()
            .filter_map(|g| {
                let need = cuda_compat::family_min_cuda(g.sm)?;
                (need > build).then(|| Lacking {
                    gpu: g.name.clone(),
                    sm: g.sm,
                    need,
                    build,
                })
            })
            .max_by_key(|l| l.need)
    }

    /// The one exact CUDA build the text names (`2.8.0+cu129`), agreeing with its CUDA line.
    fn one_cuda_build(&self) -> Option<(&str, u32)> {
        let build = self.build_cuda_code()?;
        let mut cu = self
            .torch_versions
            .iter()
            .filter(|v| v.split_once('+').is_some_and(|(_, t)| t.starts_with("cu")));
        let v = cu.next()?;
        cu.next().is_none().then_some((v.as_str(), build))
    }

    /// The platform whose official wheels' rows apply: Linux x86_64 unless the text shows
    /// Windows; `None` for another platform (aarch64).
    fn wheel_platform(&self) -> Option<torch_wheels::Platform> {
        match self.platform.as_deref() {
            None => Some(torch_wheels::Platform::Linux),
            Some("windows") => Some(torch_wheels::Platform::Windows),
            Some(_) => None,
        }
    }

    /// Why an old GPU cannot be judged against the official wheels' lists, where the text
    /// names a GPU and a torch build but no row of [`torch_wheels`] applies.
    pub fn wheel_unjudged(&self) -> Option<String> {
        if self.gpus.is_empty() || self.torch_versions.is_empty() {
            return None;
        }
        let Some(platform) = self.wheel_platform() else {
            return Some(format!(
                "not inferred from the versions: the text shows {}, whose official wheels carry other architecture lists than Linux x86_64's",
                self.platform.as_deref().unwrap_or("another platform")
            ));
        };
        let Some((v, _)) = self.one_cuda_build() else {
            return Some("not inferred from the versions: no single +cuXYZ torch build".into());
        };
        if torch_wheels::row_on(v, platform).is_some() {
            return None;
        }
        Some(match platform {
            torch_wheels::Platform::Windows => format!(
                "not inferred from the versions: the text shows Windows, and the Windows wheel of {v} is not one whose architecture list was read (only 1.11-2.5, 2.6's cu118/cu124/cu126, 2.7, 2.10's cu126/cu128, and 2.8's cu129 floor)"
            ),
            torch_wheels::Platform::Linux => format!(
                "not inferred from the versions: {v} is not an official release variant whose architecture list was read (nightly, pre-release, container, or a variant whose list was not read, such as 2.11's cu129)"
            ),
        })
    }

    /// The official wheel the text names (its one `+cuXYZ` build, on the platform the text
    /// shows) where its architecture list was read and carries every GPU the text names: that
    /// build has kernels for them (`2.7.1+cu128` and an RTX 2060, sm_75). `None` when the text
    /// names no GPU, no single build, or a build whose list was not read.
    pub fn wheel_runs_every_gpu(&self) -> Option<&str> {
        if self.gpus.is_empty() {
            return None;
        }
        let (v, _) = self.one_cuda_build()?;
        let row = torch_wheels::row_on(v, self.wheel_platform()?)?;
        self.gpus.iter().all(|g| row.runs(g.sm)).then_some(v)
    }

    /// The GPU (the oldest, if several) that the official wheel the text names has no kernels
    /// for: the Linux x86_64 wheel's list, the Windows wheel's where the text shows Windows, or,
    /// where no list was read, the floor of the CUDA that built it (nothing below sm_75 in a
    /// CUDA 13 build, on any platform); `None` when every GPU runs it or nothing applies.
    pub fn wheel_lacking(&self) -> Option<WheelLacking> {
        if let Some(list) = self.one_arch_list() {
            // the build's own list: every GPU it runs is judged by it, not by a table
            let g = self
                .gpus
                .iter()
                .filter(|g| !list.runs(g.sm))
                .min_by_key(|g| g.sm)?;
            return Some(WheelLacking {
                gpu: g.name.clone(),
                sm: g.sm,
                build: match self.torch_versions.as_slice() {
                    [one] => one.clone(),
                    _ => "in use".into(),
                },
                build_cuda: self.build_cuda_code().unwrap_or(0),
                archs: list.names.clone(),
                source: "the build's own list in the text",
                platform: "",
                alternative: None,
                from_text: true,
            });
        }
        let (v, build_cuda) = self.one_cuda_build()?;
        if let Some(p) = self.wheel_platform()
            && let Some(row) = torch_wheels::row_on(v, p)
        {
            let g = self
                .gpus
                .iter()
                .filter(|g| !row.runs(g.sm))
                .min_by_key(|g| g.sm)?;
            return Some(WheelLacking {
                gpu: g.name.clone(),
                sm: g.sm,
                build: v.to_string(),
                build_cuda,
                archs: row.arch_names(),
                source: row.source,
                platform: p.name(),
                alternative: row.alternative(v, g.sm),
                from_text: false,
            });
        }
        let (floor, source) = torch_wheels::toolkit_floor(build_cuda)?;
        let g = self
            .gpus
            .iter()
            .filter(|g| g.sm < floor)
            .min_by_key(|g| g.sm)?;
        Some(WheelLacking {
            gpu: g.name.clone(),
            sm: g.sm,
            build: v.to_string(),
            build_cuda,
            archs: vec![format!("no architecture below sm_{floor}")],
            source,
            platform: "",
            alternative: None,
            from_text: false,
        })
    }
}

/// One architecture list of the build, as read from the text (see the module's sources).
#[derive(Debug, Clone, PartialEq)]
pub struct ArchList {
    /// `sm_XX` entries: cubins, by number (90 for sm_90 and sm_90a).
    pub cubins: Vec<u32>,
    /// `compute_XX` entries: PTX.
    pub ptx: Vec<u32>,
    /// As PyTorch writes it (`sm_50 … compute_90`).
    pub names: Vec<String>,
}

impl ArchList {
    /// From the entries as printed (`sm_86`, `compute_37`, `sm_90a`); `None` when there is none.
    fn from_entries<'a>(entries: impl Iterator<Item = &'a str>) -> Option<ArchList> {
        let mut l = ArchList {
            cubins: Vec::new(),
            ptx: Vec::new(),
            names: Vec::new(),
        };
        for e in entries {
            let c = ARCH_ENTRY.captures(e)?;
            let n: u32 = c[2].parse().ok()?;
            if &c[1] == "sm" {
                l.cubins.push(n);
            } else {
                l.ptx.push(n);
            }
            push_unique(&mut l.names, super::clip(e, 16));
        }
        (!l.names.is_empty() && l.names.len() <= 64).then_some(l)
    }

    /// A GPU of compute capability `sm` (86 for 8.6) finds a cubin of its major no newer than
    /// itself, or PTX no newer than itself.
    pub fn runs(&self, sm: u32) -> bool {
        self.cubins.iter().any(|&a| a / 10 == sm / 10 && a <= sm)
            || self.ptx.iter().any(|&p| p <= sm)
    }
}

/// One entry of an architecture list (`sm_86`, `compute_37`, `sm_90a`).
static ARCH_ENTRY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(sm|compute)_(\d{2,3})[a-z]?$").expect("static regex"));

/// Python's repr of `get_arch_list()`: a list of quoted entries, nothing else in the brackets.
static ARCH_REPR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\[\s*(['"](?:sm|compute)_\d{2,3}[a-z]?['"](?:\s*,\s*['"](?:sm|compute)_\d{2,3}[a-z]?['"])*)\s*,?\s*\]"#,
    )
    .expect("static regex")
});

/// show_config's `NVCC architecture flags` entries: `code=sm_XX` (a cubin), `code=compute_XX`
/// (PTX).
static NVCC_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"code=((?:sm|compute)_\d{2,3}[a-z]?)\b").expect("static regex"));

/// A capability as Python prints `get_device_capability()`'s tuple: `(8, 6)`.
static CAPABILITY_TUPLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\((\d{1,2}),\s*(\d)\)\s*$").expect("static regex"));

/// The architecture list `line` prints, where the line or the one before says it is the
/// build's (`get_arch_list()`, `Arch List`, show_config's NVCC flags).
fn arch_list_in(line: &str, prev: &str) -> Option<ArchList> {
    if let Some(flags) = line
        .trim_start_matches(['-', ' '])
        .strip_prefix("NVCC architecture flags:")
    {
        let entries: Vec<&str> = NVCC_CODE
            .captures_iter(flags)
            .filter_map(|c| c.get(1).map(|m| m.as_str()))
            .collect();
        return ArchList::from_entries(entries.into_iter());
    }
    let labelled = prev.contains("get_arch_list")
        || line.contains("get_arch_list")
        || crate::vocab::contains_ignore_ascii_case(line, "arch list", 0)
        || crate::vocab::contains_ignore_ascii_case(line, "arch_list", 0);
    if !labelled {
        return None;
    }
    let c = ARCH_REPR.captures(line)?;
    ArchList::from_entries(
        c[1].split(',')
            .map(|e| e.trim().trim_matches(|ch| ch == '\'' || ch == '"')),
    )
}

/// Reads every build and GPU name in `text` (quoted with `> ` or not).
pub fn read(text: &str) -> TorchEnv {
    let text = super::unquote(text);
    let mut out = TorchEnv::default();
    let mut prev_mentions_version = false;
    let mut sglang_names: Vec<(String, String)> = Vec::new();
    let mut wsl = false;
    // ds_report's `torch cuda version` (`torch.version.cuda`), used where its `torch version`
    // carries no build tag (a PyPI wheel's `2.1.0`)
    let mut ds_cuda: Option<String> = None;
    let mut ds_hip = false;
    let mut pyannote = false;
    // inside torch's build configuration: its `CUDA Runtime` and `Built with CUDA Runtime`
    let mut config: Option<(Option<String>, Option<String>)> = None;
    // the previous non-empty line: a REPL call whose result this line prints
    let mut prev_line: &str = "";
    for raw in super::content_lines(&text) {
        let line = raw.trim();
        if !line.is_empty() {
            if (line.contains("sm_") || line.contains("compute_"))
                && let Some(l) = arch_list_in(line, prev_line)
                && !out.arch_lists.contains(&l.names)
                && out.arch_lists.len() < 8
            {
                out.arch_lists.push(l.names);
            }
            if (prev_line.contains("get_device_capability") || line.contains("Device Capability"))
                && let Some(c) = CAPABILITY_TUPLE.captures(line)
                && let (Ok(maj), Ok(min)) = (c[1].parse::<u32>(), c[2].parse::<u32>())
                && (1..=20).contains(&maj)
            {
                out.add_gpu(Named {
                    name: format!("the GPU of compute capability {maj}.{min}"),
                    sm: maj * 10 + min,
                });
            }
            prev_line = line;
        }
        if let Some((runtime, built)) = &mut config {
            if let Some(c) = line
                .starts_with('-')
                .then(|| CONFIG_RUNTIME.captures(line))
                .flatten()
            {
                let v = Some(c[2].to_string());
                if c.get(1).is_some() {
                    *built = v;
                } else {
                    *runtime = v;
                }
            } else if !line.starts_with('-') {
                out.add_config_build(config.take());
            }
        }
        if line.contains(CONFIG_HEAD) {
            out.add_config_build(config.take());
            config = Some((None, None));
        }
        if let Some((name, value)) = super::ds_report::entry(line) {
            match name {
                "torch version" => {
                    if let Some((v, tag)) = value.split_once('+')
                        && BARE_VERSION.is_match(&value)
                    {
                        out.add_tag(v, &tag.to_ascii_lowercase());
                    }
                }
                "torch cuda version" => ds_cuda = Some(value),
                "torch hip version" => ds_hip |= value != "None" && !value.is_empty(),
                _ => {}
            }
            continue;
        }
        wsl |= line.contains("microsoft-standard-WSL");
        if out.platform.is_none() {
            if WINDOWS.is_match(line) {
                out.platform = Some("windows".into());
            } else if ARM.is_match(line) {
                out.platform = Some("aarch64".into());
            }
        }
        if let Some(c) = PYANNOTE_CHECK.captures(line) {
            // the checkpoint's torch (`theirs`) is another machine's: only `mine` is read
            pyannote = true;
            if let Some(tag) = c.get(2) {
                out.add_tag(&c[1], &tag.as_str().to_ascii_lowercase());
            }
            continue;
        }
        for c in TORCH_VERSION.captures_iter(line) {
            out.add_tag(&c[1], &c[2].to_ascii_lowercase());
        }
        if let Some(c) = DOTLESS.captures(line) {
            out.add_tag(&format!("{}.{}.{}", &c[1], &c[2], &c[3]), &c[4]);
        }
        if let Some(c) = BUILT_WITH.captures(line) {
            if &c[1] == "None" {
                out.cpu_only_build = true;
            } else if let Some(code) = cuda_compat::cuda_code(&c[1]) {
                push_unique(&mut out.torch_cuda, cuda_compat::cuda_code_str(code));
            }
        }
        if prev_mentions_version && let Some(c) = BARE_VERSION.captures(line) {
            out.add_tag(&c[1], &c[2].to_ascii_lowercase());
        }
        if let Some((v, tag)) = listed_bare(line) {
            out.add_tag(v, tag);
        }
        if !line.is_empty() {
            prev_mentions_version = line.contains("torch.__version__");
        }
        for g in gpu_arch::names_in(line) {
            out.add_gpu(g);
        }
        if let Some(c) = SGLANG_GPU.captures(line) {
            sglang_names.push((c[1].to_string(), c[2].trim().to_string()));
        }
        if let Some(c) = SGLANG_CC.captures(line)
            && let (Ok(maj), Ok(min)) = (c[2].parse::<u32>(), c[3].parse::<u32>())
            && let Some((_, name)) = sglang_names.iter().find(|(ids, _)| ids == &c[1])
        {
            // the capability check_env printed, for a GPU the name table does not know
            if gpu_arch::sm_of(name).is_none() && maj < 100 && min < 10 {
                out.add_gpu(Named {
                    name: super::clip(name, 64),
                    sm: maj * 10 + min,
                });
            }
        }
    }
    out.add_config_build(config.take());
    if out.torch_versions.is_empty()
        && let Some(c) = ds_cuda
    {
        if ds_hip {
            out.rocm_build = true;
        } else if c == "None" {
            out.cpu_only_build = true;
        } else if let Some(code) = cuda_compat::cuda_code(&c) {
            push_unique(&mut out.torch_cuda, cuda_compat::cuda_code_str(code));
        }
    }
    if wsl && out.platform.as_deref() == Some("windows") {
        out.platform = None;
    }
    out.report = hf_env_report(&text)
        .or(pyannote.then_some(PYANNOTE_REPORT))
        .map(str::to_string);
    out
}

/// The `- {prop}: {val}` line a Hugging Face `env` report opens its own entry with, as printed
/// or as GitHub renders an unfenced paste (no `- `, no backticks): `(report, line)`.
static HF_ENV_FIRST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-*]\s+)?(?:`?(transformers|Accelerate|llamafactory|diffusers)`?|(TRL)) version:\s*v?\d+\.\d+",
    )
    .expect("static regex")
});

/// Every report of [`HF_ENV_FIRST`] has this entry: the torch the library imports.
static HF_ENV_TORCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-*]\s+)?PyTorch version(?:\s*\((?:GPU|accelerator)\?\))?:\s*\S")
        .expect("static regex")
});

/// Which Hugging Face `env` report the text is: its library's own entry and a `PyTorch version`
/// entry, both as that report prints them (see the module's sources). The others name
/// accelerate as a dependency (`Accelerate version: 1.3.0`), which is accelerate's own entry
/// once GitHub has dropped its backticks: that entry is accelerate's report only with its
/// backticks or as the text's first line (where `accelerate env` prints it), and any other
/// library's own entry comes first.
fn hf_env_report(text: &str) -> Option<&'static str> {
    if !text.contains("PyTorch version") {
        return None;
    }
    // llamafactory-cli, transformers, trl, accelerate: the reports that name the others
    // as dependencies come first
    let mut own = [false; 5];
    let mut torch = false;
    let mut first = true;
    for l in text.lines().take(400) {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(c) = HF_ENV_FIRST.captures(l) {
            match c.get(1).map(|m| m.as_str()) {
                Some("llamafactory") => own[0] = true,
                Some("transformers") => own[1] = true,
                Some("Accelerate") => own[3] |= first || l.contains("`Accelerate`"),
                // huggingface/diffusers `commands/env.py`: "`diffusers` version" first, then
                // "PyTorch version (GPU?)" as transformers prints it
                Some("diffusers") => own[4] = true,
                _ => own[2] = true,
            }
        }
        torch |= HF_ENV_TORCH.is_match(l);
        first = false;
    }
    let names = [
        "llamafactory-cli env",
        "transformers env",
        "trl env",
        "accelerate env",
        "diffusers-cli env",
    ];
    own.iter()
        .position(|&o| o)
        .map(|i| names[i])
        .filter(|_| torch)
}

/// The text prints a torch build and names a GPU the table knows, in one of the producers'
/// grammars above.
pub fn looks_like(text: &str) -> bool {
    // a Hugging Face `env` report, or pyannote's check of the running torch, is read as one
    // whatever it shows
    if hf_env_report(text).is_some() || pyannote_check(text) {
        return true;
    }
    // every build the grammars above read is named next to `torch` (any case), but for a list
    // item that is `torch.__version__` alone (`- 2.8.0+cu128`): a text with neither is none of
    // them, and is not read line by line for it
    let named = crate::vocab::contains_ignore_ascii_case(text, "torch", 0);
    if !named && !text.contains("+cu") {
        return false;
    }
    // a build line first (a few regexes on the lines that name torch), the GPU names after: a
    // training log names torch in every warning's path and no build
    let config = text.contains(CONFIG_HEAD);
    // the build's own architecture list (`get_arch_list()`, an `Arch List` label, show_config's
    // NVCC flags) is the build's report of itself, read even where no GPU is named
    let arch_listed = named
        && (text.contains("get_arch_list")
            || text.contains("NVCC architecture flags:")
            || crate::vocab::contains_ignore_ascii_case(text, "arch list", 0));
    let build = arch_listed
        || if named {
            text.contains("torch.__version__")
                || text.lines().any(|l| {
                    TORCH_VERSION.is_match(l)
                        || DOTLESS.is_match(l)
                        || BUILT_WITH.is_match(l)
                        || listed_bare(l.trim()).is_some()
                        || (config
                            && l.contains("CUDA Runtime")
                            && CONFIG_RUNTIME.is_match(l.trim()))
                })
        } else {
            text.lines().any(|l| listed_bare(l.trim()).is_some())
        };
    if !build {
        return false;
    }
    let e = read(text);
    !e.arch_lists.is_empty()
        || ((!e.torch_versions.is_empty() || !e.torch_cuda.is_empty())
            && (!e.gpus.is_empty() || text.lines().any(|l| LLAMAFACTORY_ENV.is_match(l.trim()))))
}

/// `llamafactory-cli env`'s first line, as printed (``- `llamafactory` version: 0.9.3``) or as
/// GitHub renders an unfenced paste of it (`llamafactory version: 0.9.3`).
static LLAMAFACTORY_ENV: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-*]\s+)?`?llamafactory`? version:\s*\d+\.\d+").expect("static regex")
});

/// A markdown list item that is a torch version and nothing else (`- 2.8.0+cu128`, as an issue
/// form's "Other" list gives `torch.__version__`, torch/version.py's `__version__` with the
/// wheel's local `+cuXYZ` label): `(version, tag)`. Major 0 is torchvision's, never torch's.
fn listed_bare(line: &str) -> Option<(&str, &str)> {
    let item = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))?
        .trim();
    let c = BARE_VERSION.captures(item)?;
    let (v, tag) = (c.get(1)?.as_str(), c.get(2)?.as_str());
    (tag.starts_with("cu") && !v.starts_with("0.")).then_some((v, tag))
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct TorchEnvKind;

impl super::EvidenceKind for TorchEnvKind {
    fn name(&self) -> &'static str {
        "torch-env"
    }
    fn doc(&self) -> &'static str {
        "the PyTorch build and the GPUs a paste names (ComfyUI's startup log and error report, sglang's check_env, the Hugging Face libraries' env reports, torch's build configuration (torch.__config__.show(), as OpenMMLab's collect_env prints it too), torch.cuda.get_arch_list(), version prints beside GPU names)"
    }
    fn example(&self) -> &'static str {
        "python -m sglang.check_env"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "torch_versions",
                "torch versions with their build tag (2.6.0+cu126)",
            ),
            (
                "torch_cuda",
                "the distinct CUDA versions torch was built with (12.6)",
            ),
            ("cpu_only_build", "a CPU-only torch build is named"),
            ("rocm_build", "a ROCm torch build is named"),
            (
                "gpus",
                "GPUs named as the driver prints them: name, sm (compute capability, 120 for 12.0)",
            ),
            (
                "platform",
                "a platform other than Linux x86_64 the text shows (windows, aarch64): its official wheels carry other architecture lists",
            ),
            (
                "arch_lists",
                "the build's own architecture lists the text prints (torch.cuda.get_arch_list(), an `Arch List` line, show_config's NVCC architecture flags): sm_XX cubins and compute_XX PTX",
            ),
            (
                "report",
                "the report the text is (transformers env, accelerate env, trl env, llamafactory-cli env; pyannote.audio checkpoint check)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cuda.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let e = read(text);
        if e.is_empty() && e.report.is_none() {
            return Err(super::ParseError::NotThisKind(
                "no torch build (a version with +cuXYZ/+cpu, `CUDA used to build PyTorch`) and no GPU name the table knows",
            ));
        }
        super::to_value(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// torch's build configuration as OpenMMLab's collect_env prints it (see the module's
    /// sources): the CUDA torch was built with, and the GPU named beside it.
    #[test]
    fn torch_build_configuration_in_an_openmmlab_env_report() {
        use crate::evidence::EvidenceKind;
        // healthy: MengyangPu/EDTER#29, torch 1.6.0 (no build tag) on a V100, sm_70 in the flags
        let edter = "Python: 3.7.7 [GCC 7.3.0]\nCUDA available: True\nGPU: Tesla V100-PCIE-32GB\nGCC: gcc (Ubuntu 7.5.0-3ubuntu1~18.04) 7.5.0\nPyTorch: 1.6.0\nPyTorch compiling details: PyTorch built with:\n  - GCC 7.3\n  - C++ Version: 201402\n  - OpenMP 201511 (a.k.a. OpenMP 4.5)\n  - CUDA Runtime 10.1\n  - NVCC architecture flags: -gencode;arch=compute_37,code=sm_37;-gencode;arch=compute_70,code=sm_70;-gencode;arch=compute_75,code=sm_75;-gencode;arch=compute_37,code=compute_37\n  - CuDNN 7.6.3\n  - Magma 2.5.2\n\nTorchVision: 0.7.0\nMMCV: 1.2.4\nMMCV CUDA Compiler: 10.1\n";
        assert!(looks_like(edter));
        let e = read(edter);
        assert_eq!(e.torch_cuda, ["10.1"]);
        assert_eq!(e.gpus[0].sm, 70);
        assert!(e.judgeable());
        assert_eq!(e.lacking(), None);
        assert!(TorchEnvKind.parse(edter).is_ok());
        // the runtime loaded differs from the one torch was compiled with: the build's is read
        let built = "GPU 0,1: NVIDIA A100-SXM4-40GB\nPyTorch: 1.9.0\nPyTorch compiling details: PyTorch built with:\n  - CUDA Runtime 11.3\n  - Built with CUDA Runtime 10.2\n  - NVCC architecture flags: -gencode;arch=compute_70,code=sm_70\nTorchVision: 0.10.0\n";
        let e = read(built);
        assert_eq!(e.torch_cuda, ["10.2"]);
        assert_eq!(e.lacking().map(|l| l.sm), Some(80));
        // a ROCm build's block, and a CUDA Runtime line outside torch's block, are no build
        let rocm = "GPU 0: AMD Instinct MI100\nPyTorch compiling details: PyTorch built with:\n  - HIP Runtime 5.2\n";
        assert!(read(rocm).torch_cuda.is_empty());
        let loose = "GPU 0: Tesla V100-PCIE-32GB\nPyTorch: 1.6.0\n  - CUDA Runtime 10.1\n";
        assert!(read(loose).torch_cuda.is_empty());
        assert!(!looks_like(loose));
    }

    /// pyannote.audio's `check_version` (see the module's sources): the running torch is the
    /// version after `yours is`; the checkpoint's `1.10.0+cu102` is another machine's.
    #[test]
    fn pyannote_check_reads_the_running_torch_not_the_checkpoints() {
        use crate::evidence::EvidenceKind;
        // healthy: ahmetoner/whisper-asr-webservice#289, two docker compose lines, whisperX works
        let t = "fasterwhisperasrwebservice              | Model was trained with pyannote.audio 0.0.1, yours is 3.3.2. Bad things might happen unless you revert pyannote.audio to 0.x.\nfasterwhisperasrwebservice              | Model was trained with torch 1.10.0+cu102, yours is 2.6.0+cu126. Bad things might happen unless you revert torch to 1.x.\n";
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.6.0+cu126"]);
        assert_eq!(e.torch_cuda, ["12.6"]);
        assert_eq!(e.report.as_deref(), Some(PYANNOTE_REPORT));
        assert!(looks_like(t));
        assert!(TorchEnvKind.parse(t).is_ok());
        // the same beside an RTX 4090 (sm_89; unsloth#5830's table row): the cu102 of the
        // checkpoint would lack it, the running cu126 build does not
        let t4090 = format!(
            "{t}|   0  NVIDIA GeForce RTX 4090      WDDM  |   00000000:09:00.0  On |                  Off |\n"
        );
        let e = read(&t4090);
        assert_eq!(e.gpus[0].sm, 89);
        assert_eq!(e.lacking(), None);
        // a PyPI wheel's version has no tag: no build read (whisperX#822, `yours is 2.0.0.`)
        let e = read(
            "Model was trained with torch 1.10.0+cu102, yours is 2.0.0. Bad things might happen unless you revert torch to 1.x.\n",
        );
        assert!(e.torch_versions.is_empty() && e.torch_cuda.is_empty());
        assert_eq!(e.report.as_deref(), Some(PYANNOTE_REPORT));
        // problem: ahmetoner/whisper-asr-webservice#335, the running 2.7.1+cu126 on an RTX 5090 D
        let t = "NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch installation.\nModel was trained with pyannote.audio 0.0.1, yours is 3.3.2. Bad things might happen unless you revert pyannote.audio to 0.x.\nModel was trained with torch 1.10.0+cu102, yours is 2.7.1+cu126. Bad things might happen unless you revert torch to 1.x.\n";
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.7.1+cu126"]);
        let l = e.lacking().expect("cu126 has no sm_120 kernels");
        assert_eq!((l.sm, l.build), (120, 12060));
        // pyannote's line for another library alone is no torch report
        assert!(!looks_like(
            "Model was trained with pyannote.audio 0.0.1, yours is 3.3.2. Bad things might happen unless you revert pyannote.audio to 0.x.\n"
        ));
    }

    /// DeepSpeed's ds_report (deepspeed/env_report.py): the tagged `torch version` entry is the
    /// build; where it has no tag, `torch cuda version` is; `None` there is a CPU build, a
    /// `torch hip version` a ROCm one. Entries of deepspeedai/DeepSpeed#1906's ROCm report and
    /// lsdefine/simple_GRPO's README.md excerpt; the untagged 2.1.0 written from env_report.py.
    #[test]
    fn ds_report_torch_version_and_torch_cuda_version() {
        let e = read(
            "torch version .................... 2.3.0+cu121\ntorch cuda version ............... 12.1\n",
        );
        assert_eq!(e.torch_versions, vec!["2.3.0+cu121".to_string()]);
        assert_eq!(e.torch_cuda, vec!["12.1".to_string()]);
        let e = read(
            "torch version .................... 2.1.0\ntorch cuda version ............... 12.1\nnvcc version ..................... 11.8\n",
        );
        assert!(e.torch_versions.is_empty());
        assert_eq!(e.torch_cuda, vec!["12.1".to_string()]);
        let e = read(
            "torch version .................... 1.10.0a0+git539d476\ntorch cuda version ............... None\ntorch hip version ................ 5.1.20531-cacfa990\n",
        );
        assert!(e.torch_versions.is_empty() && e.torch_cuda.is_empty());
        assert!(e.rocm_build && !e.cpu_only_build);
        let e = read(
            "torch version .................... 2.4.0\ntorch cuda version ............... None\ntorch hip version ................ None\n",
        );
        assert!(e.cpu_only_build && e.torch_cuda.is_empty());
    }

    #[test]
    fn trl_env_on_virtual_gpus_is_read_as_a_report_with_nothing_to_judge() {
        use super::super::EvidenceKind;
        // huggingface/trl#2864 (h58_trlenv_trl2864_vgpu32_vllm_oom): `trl env`'s PyTorch entry is
        // the package version (no +cuXYZ from PyPI), the devices two vGPUs the table lacks
        let t = "- Platform: Linux-5.15.0-78-generic-x86_64-with-glibc2.35\n- Python version: 3.10.8\n- PyTorch version: 2.5.1\n- CUDA device(s): NVIDIA vGPU-32GB, NVIDIA vGPU-32GB\n- Transformers version: 4.48.3\n- Accelerate version: 1.3.0\n- Accelerate config: not found\n- Datasets version: 3.1.0\n- HF Hub version: 0.27.0\n- TRL version: 0.16.0.dev0+ffcb9f4\n";
        assert!(looks_like(t));
        let e = read(t);
        assert_eq!(e.report.as_deref(), Some("trl env"));
        assert!(e.torch_versions.is_empty() && e.gpus.is_empty());
        assert!(!e.judgeable());
        assert!(TorchEnvKind.parse(t).is_ok());
        // the same entries without the report's own one are no report
        let no_trl = t.replace("- TRL version: 0.16.0.dev0+ffcb9f4\n", "");
        assert_eq!(read(&no_trl).report, None);
        assert!(!looks_like(&no_trl));
    }

    #[test]
    fn accelerate_env_reads_the_build_in_its_gpu_column_and_the_gpu_type() {
        // accelerate's docs (docs/source/basic_tutorials/install.md, `accelerate env` example):
        // a cu124 build on an RTX 4090 (sm_89, CUDA 11.8 and later), fine
        let t = "- `Accelerate` version: 1.2.0.dev0\n- Platform: Linux-6.8.0-47-generic-x86_64-with-glibc2.35\n- Python version: 3.10.13\n- Numpy version: 1.26.4\n- PyTorch version (GPU?): 2.5.1+cu124 (True)\n- PyTorch XPU available: False\n- System RAM: 187.91 GB\n- GPU type: NVIDIA GeForce RTX 4090\n- `Accelerate` default config:\n        - compute_environment: LOCAL_MACHINE\n";
        let e = read(t);
        assert_eq!(e.report.as_deref(), Some("accelerate env"));
        assert_eq!(e.torch_versions, ["2.5.1+cu124"]);
        assert_eq!(e.torch_cuda, ["12.4"]);
        assert_eq!(e.gpus.len(), 1);
        assert_eq!(e.gpus[0].sm, 89);
        assert!(e.judgeable());
        assert_eq!(e.lacking(), None);
        // huggingface/accelerate#1573 (0.20.3): the same on 4 A100s under a cu117 build
        let t = "- `Accelerate` version: 0.20.3\n- Platform: Linux-3.10.0-1160.71.1.el7.x86_64-x86_64-with-glibc2.17\n- Python version: 3.10.9\n- Numpy version: 1.23.5\n- PyTorch version (GPU?): 2.0.1+cu117 (True)\n- PyTorch XPU available: False\n- System RAM: 1929.00 GB\n- GPU type: NVIDIA A100-SXM4-80GB\n";
        let e = read(t);
        assert_eq!(e.torch_cuda, ["11.7"]);
        assert_eq!(e.gpus[0].sm, 80);
        assert_eq!(e.lacking(), None);
    }

    #[test]
    fn transformers_env_reads_the_build_or_says_it_names_none() {
        // huggingface/transformers#26839's System Info: a cu117 build, no GPU named
        let t = "- `transformers` version: 4.33.1\n- Platform: Linux-5.4.0-153-generic-x86_64-with-glibc2.31\n- Python version: 3.9.18\n- Huggingface_hub version: 0.17.1\n- Safetensors version: 0.3.3\n- Accelerate version: 0.23.0\n- Accelerate config: \tnot found\n- PyTorch version (GPU?): 2.0.1+cu117 (True)\n- Tensorflow version (GPU?): not installed (NA)\n";
        let e = read(t);
        assert_eq!(e.report.as_deref(), Some("transformers env"));
        assert_eq!(e.torch_cuda, ["11.7"]);
        assert!(e.gpus.is_empty());
        // huggingface/transformers#37541: a macOS arm64 torch without a local version label
        let t = "- `transformers` version: 4.31.0\n- Platform: macOS-15.3.2-arm64-arm-64bit\n- Python version: 3.11.8\n- PyTorch version (GPU?): 2.6.0 (False)\n";
        let e = read(t);
        assert_eq!(e.report.as_deref(), Some("transformers env"));
        assert!(e.torch_versions.is_empty());
        assert_eq!(e.platform.as_deref(), Some("aarch64"));
    }

    #[test]
    fn diffusers_env_is_a_hugging_face_report() {
        // ShivamShrirao/diffusers#18: `diffusers-cli env` (its "`diffusers` version" first)
        let t = "- `diffusers` version: 0.4.0.dev0\n- Platform: Linux-4.4.0-19041-Microsoft-x86_64-with-glibc2.31\n- Python version: 3.9.13\n- PyTorch version (GPU?): 1.12.1+cu116 (False)\n- Huggingface_hub version: 0.10.0\n- Transformers version: 4.22.2\n- Using GPU in script?: <fill in>\n";
        assert!(looks_like(t));
        let e = read(t);
        assert_eq!(e.report.as_deref(), Some("diffusers-cli env"));
        assert_eq!(e.torch_cuda, ["11.6"]);
        // a sentence naming the version is not the report
        assert!(
            hf_env_report("We pin `diffusers` version: 0.4 and PyTorch version 1.12\n").is_none()
        );
    }

    #[test]
    fn comfyui_report_5070ti_under_cu126_lacks_kernels() {
        // Comfy-Org/ComfyUI#7126: a quoted error report's System Information and Devices
        let t = "> - **Embedded Python:** false\n> - **PyTorch Version:** 2.6.0+cu126\n> ## Devices\n> \n> - **Name:** cuda:0 NVIDIA GeForce RTX 5070 Ti : cudaMallocAsync\n>   - **Type:** cuda\n";
        assert!(looks_like(t));
        let e = read(t);
        assert_eq!(e.torch_cuda, ["12.6"]);
        let l = e.lacking().expect("sm_120 needs CUDA 12.8");
        assert_eq!(
            (l.gpu.as_str(), l.sm, l.need, l.build),
            ("NVIDIA GeForce RTX 5070 Ti", 120, 12080, 12060)
        );
    }

    #[test]
    fn comfyui_report_5090_under_cu129_is_fine() {
        // Comfy-Org/ComfyUI#11186
        let t = "- **PyTorch Version:** 2.8.0+cu129\n## Devices\n\n- **Name:** cuda:0 NVIDIA GeForce RTX 5090 : cudaMallocAsync\n";
        let e = read(t);
        assert!(e.judgeable());
        assert_eq!(e.lacking(), None);
    }

    #[test]
    fn llamafactory_env_is_read_even_for_a_gpu_the_table_does_not_know() {
        // github.com/hiyouga/LlamaFactory/issues/8830: 8 NVIDIA L20X under 2.7.0+cu126 (the hang
        // is not in the report): read, nothing to judge
        let t = "- `llamafactory` version: 0.9.3\n- Platform: Linux-5.10.134-16.101.al8.x86_64-x86_64-with-glibc2.32\n- Python version: 3.10.16\n- PyTorch version: 2.7.0+cu126 (GPU)\n- Transformers version: 4.51.3\n- GPU type: NVIDIA L20X\n- GPU number: 8\n- GPU memory: 139.72GB\n";
        assert!(looks_like(t));
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.7.0+cu126"]);
        assert!(e.gpus.is_empty());
        assert!(e.lacking().is_none());
        // github.com/hiyouga/LlamaFactory/issues/8261 as GitHub rendered it (no `- `, no
        // backticks): an A100 the table knows, under cu124 (healthy)
        let r = "llamafactory version: 0.9.3.dev0\nPlatform: Linux-4.18.0-348.7.1.el8_5.x86_64-x86_64-with-glibc2.28\nPython version: 3.11.0\nPyTorch version: 2.6.0+cu124 (GPU)\nTransformers version: 4.52.3\nGPU type: NVIDIA A100-SXM4-80GB\nGPU number: 8\nGPU memory: 79.14GB\n";
        assert!(looks_like(r));
        let e = read(r);
        assert_eq!(e.torch_versions, ["2.6.0+cu124"]);
        assert_eq!(e.gpus.len(), 1);
        assert!(e.lacking().is_none());
        // the same list without its build says nothing about one
        assert!(!looks_like(
            "- `llamafactory` version: 0.9.3\n- GPU type: NVIDIA L20X\n"
        ));
    }

    #[test]
    fn comfyui_startup_log_and_sglang_check_env() {
        // Comfy-Org/ComfyUI#6823's startup lines
        let log = "2025-02-15T18:39:38.433370 - pytorch version: 2.6.0+cu126\n2025-02-15T18:39:38.434500 - Device: cuda:0 NVIDIA GeForce RTX 5080 : cudaMallocAsync\n";
        assert_eq!(read(log).lacking().map(|l| l.sm), Some(120));
        // sgl-project/sglang#3685: H20 (9.0) under cu124 is fine
        let sg = "GPU 0,1,2,3,4,5,6,7: NVIDIA H20\nGPU 0,1,2,3,4,5,6,7 Compute Capability: 9.0\nCUDA_HOME: /usr/local/cuda\nPyTorch: 2.5.1+cu124\nflashinfer: 0.2.1.post2+cu124torch2.5\n";
        let e = read(sg);
        assert!(looks_like(sg) && e.judgeable());
        assert_eq!(e.torch_versions, ["2.5.1+cu124"]);
        assert_eq!(e.lacking(), None);
        // a GPU the name table does not know, with the capability check_env printed
        let e = read(
            "GPU 0: NVIDIA Future GPU\nGPU 0 Compute Capability: 12.1\nPyTorch: 2.5.1+cu124\n",
        );
        assert_eq!(e.lacking().map(|l| (l.sm, l.need)), Some((121, 12080)));
    }

    #[test]
    fn versions_in_prose_lists_and_prints() {
        // pytorch/pytorch#160804: markdown list items
        let t =
            "- **PyTorch Version**: 2.2.0+cu121\n- **GPU**: NVIDIA GeForce RTX 5090 (32GB GDDR7)\n";
        assert_eq!(read(t).lacking().map(|l| l.build), Some(12010));
        // print(torch.__version__) and its output on the next line (pytorch/pytorch#85332)
        let t = "print(torch.__version__)\n1.8.1+cu102\n";
        assert_eq!(read(t).torch_cuda, ["10.2"]);
        // print(torch.__version__, torch.version.cuda): one line, the values space-joined, beside
        // `nvidia-smi --query-gpu=name,driver_version` rows (runpod/containers#114: 2 B200 under
        // the 2.4.1+cu124 a template fell back to)
        let t = "$ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader\nNVIDIA B200, 580.126.09\n\n$ python3 -c \"import torch; print(torch.__version__, torch.version.cuda)\"\n2.4.1+cu124 12.4\n";
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.4.1+cu124"]);
        assert_eq!(e.lacking().map(|l| (l.sm, l.build)), Some((100, 12040)));
        // healthy: an RTX 5090 under 2.7.1+cu128 printed the same way
        let t = "python -c \"import torch; print(torch.__version__, torch.cuda.is_available())\"\n2.7.1+cu128 True\nNVIDIA GeForce RTX 5090, 575.57.08\n";
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.7.1+cu128"]);
        assert_eq!(e.lacking(), None);
        assert_eq!(e.wheel_lacking(), None);
        // a version with other words after it is not a print of torch's values
        let t = "print(torch.__version__)\n2.4.1+cu124 is installed\n";
        assert!(read(t).torch_versions.is_empty());
        // torchvision's tag and a path are not torch's
        let t = "torchvision 0.22.1+cu128\nC:\\x\\site-packages\\torch\\cuda\\__init__.py:235: 2.1+cu118\n";
        assert!(read(t).torch_versions.is_empty());
    }

    #[test]
    fn an_old_gpu_beside_an_official_wheel_that_dropped_it() {
        // bnsreenu/digitalsreeni-image-annotator#57's Environment list
        let t = "- OS: Ubuntu 24.04.3 LTS\n- GPU: NVIDIA GeForce GTX 1050 (compute capability 6.1)\n- PyTorch: 2.8.0+cu128\n";
        let e = read(t);
        assert_eq!(e.lacking(), None);
        let w = e.wheel_lacking().expect("2.8.0+cu128 starts at sm_70");
        assert_eq!(
            (w.sm, w.build.as_str(), w.build_cuda),
            (61, "2.8.0+cu128", 12080)
        );
        assert_eq!(w.alternative, Some(12060));
        // index-tts/index-tts#815: a full-width colon, as typed in a Chinese list
        let e = read("GPU：NVIDIA Tesla P100 16GB（sm_60）\nPyTorch：2.8.0+cu128\n");
        assert_eq!(e.wheel_lacking().map(|w| w.sm), Some(60));
        // vllm-project/vllm#10147: V100S under 2.5.1+cu118, which has sm_70
        let e = read(
            "PyTorch version: 2.5.1+cu118\nCUDA used to build PyTorch: 11.8\nGPU 0: Tesla V100S-PCIE-32GB\n",
        );
        assert!(e.judgeable());
        assert_eq!(e.wheel_lacking(), None);
        assert_eq!(e.wheel_unjudged(), None);
        // edenaion/EZ-CorridorKey#87: a 1080 Ti under 2.9.1+cu130 on Windows: no Windows list
        // was read for 2.9, but no CUDA 13 build has anything below sm_75
        let e = read(
            "- **OS:** Windows-11-10.0.26200-SP0\n- **PyTorch:** 2.9.1+cu130\n- **GPU:** NVIDIA GeForce GTX 1080 Ti\n",
        );
        assert_eq!(e.platform.as_deref(), Some("windows"));
        let w = e
            .wheel_lacking()
            .expect("CUDA 13 compiles nothing below sm_75");
        assert_eq!((w.sm, w.platform, w.alternative), (61, "", None));
        assert!(e.wheel_unjudged().is_some());
        // a Windows RTX 4070 under 2.9.1+cu130 (Lightricks/ComfyUI-LTXVideo#337): above the
        // floor nothing is inferred
        let e = read(
            "- **OS:** win32\n- **PyTorch Version:** 2.9.1+cu130\n- **Name:** cuda:0 NVIDIA GeForce RTX 4070 : cudaMallocAsync\n",
        );
        assert_eq!(e.wheel_lacking(), None);
        // WSL runs the Linux wheels (vllm-project/vllm#9293's collect_env)
        let e = read(
            "Python platform: Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35\nOS: Windows host\n",
        );
        assert_eq!(e.platform, None);
        // zzc0721/torch-performance-test-data#60: the benchmark's dotless tag; 2.7 is not in
        // the table, so a GTX 1080 Ti is not judged against it
        let e = read(
            "## 设备信息\n- 设备名称：NVIDIA GeForce GTX 1080 Ti\n- Python版本：py31018\n- PyTorch版本：torch271cu126\n",
        );
        assert!(looks_like(
            "- 设备名称：NVIDIA GeForce RTX 2080 Ti\n- PyTorch版本：torch271cu128\n"
        ));
        assert_eq!(e.torch_versions, ["2.7.1+cu126"]);
        assert_eq!(e.wheel_lacking(), None);
        assert_eq!(
            read("PyTorch版本：torch2100cu128").torch_versions,
            ["2.10.0+cu128"]
        );
        // the script's own stdout line
        assert_eq!(read("PyTorch版本: 2.8.0+cu128").torch_cuda, ["12.8"]);
        // a nightly is not an official release's list (pytorch/pytorch#144536: V100, fine anyway)
        let e = read("PyTorch version: 2.6.0.dev20241230+cu126\nGPU 0: Tesla V100-SXM2-32GB\n");
        assert_eq!(e.wheel_lacking(), None);
        assert!(
            e.wheel_unjudged()
                .is_some_and(|s| s.contains("2.6.0.dev20241230+cu126"))
        );
    }

    #[test]
    fn an_ambiguous_or_cpu_build_is_not_judged() {
        // two builds (a reinstall) and a CPU build: no one build to judge
        let two = "torch 2.5.1+cu124\ntorch 2.7.0+cu128\nNVIDIA GeForce RTX 5090\n";
        assert_eq!(read(two).build_cuda_code(), None);
        assert_eq!(read(two).lacking(), None);
        let cpu = "torch==2.1.0+cpu\nGPU 0: NVIDIA GeForce RTX 5090\n";
        assert!(read(cpu).cpu_only_build);
        assert_eq!(read(cpu).lacking(), None);
        // collect_env's own line agrees with the tag: one build
        let ce = "PyTorch version: 1.7.0.dev20200929\nCUDA used to build PyTorch: 11.0\nGPU models and configuration: GPU 0: GeForce RTX 3080\n";
        let e = read(ce);
        assert!(e.judgeable());
        // pytorch/pytorch#45578: an RTX 3080 runs the CUDA 11.0 build's sm_80 kernels
        assert_eq!(e.lacking(), None);
        // an RTX 3090 under a CUDA 10.2 build has none it can run
        let old =
            "PyTorch version: 1.7.0\nCUDA used to build PyTorch: 10.2\nGPU 0: GeForce RTX 3090\n";
        assert_eq!(read(old).lacking().map(|l| l.need), Some(11000));
    }

    #[test]
    fn a_windows_wheel_is_judged_against_the_windows_scripts() {
        // Comfy-Org/ComfyUI#9705: a GTX 1070 under Windows (`**OS:** nt`) 2.8.0+cu129
        let t = "- **OS:** nt\n- **Python Version:** 3.12.9 (main, Feb 12 2025, 14:52:31) [MSC v.1942 64 bit (AMD64)]\n- **Embedded Python:** false\n- **PyTorch Version:** 2.8.0+cu129\n## Devices\n\n- **Name:** cuda:0 NVIDIA GeForce GTX 1070 : cudaMallocAsync\n";
        let e = read(t);
        assert_eq!(e.platform.as_deref(), Some("windows"));
        let w = e
            .wheel_lacking()
            .expect("Windows cu129 of 2.8: nothing below sm_70");
        assert_eq!((w.sm, w.platform), (61, "Windows"));
        assert_eq!(w.archs, ["no architecture below sm_70"]);
        assert_eq!(w.alternative, None);
        // Comfy-Org/ComfyUI#10468: a GTX 1080 under Windows (win32) 2.10.0+cu130
        let t = "- **OS:** win32\n- **PyTorch Version:** 2.10.0+cu130\n## Devices\n\n- **Name:** cuda:0 NVIDIA GeForce GTX 1080 : cudaMallocAsync\n";
        assert_eq!(read(t).wheel_lacking().map(|w| w.sm), Some(61));
        // yyuezhi/GenVDM#5: a GTX 1070 under Windows 2.7.0+cu126 runs: judged against the
        // Windows 2.7 cu126 wheel's list (sm_61 in it, nikopueringer/CorridorKey#141)
        let t = "PyTorch version: 2.7.0+cu126\nCUDA used to build PyTorch: 12.6\nOS: Microsoft Windows 10 Home (10.0.19045 64-bitowy)\nGPU models and configuration: GPU 0: NVIDIA GeForce GTX 1070\n";
        let e = read(t);
        assert_eq!(e.wheel_lacking(), None);
        assert_eq!(e.wheel_unjudged(), None);
        // the same GPU under Windows 2.10.0+cu128 (sm_70 up) has no kernel; cu126 is named
        let t = "PyTorch version: 2.10.0+cu128\nOS: Microsoft Windows 10 Home (10.0.19045 64-bitowy)\nGPU models and configuration: GPU 0: NVIDIA GeForce GTX 1070\n";
        let w = read(t)
            .wheel_lacking()
            .expect("Windows 2.10 cu128 starts at sm_70");
        assert_eq!(
            (w.sm, w.platform, w.alternative),
            (61, "Windows", Some(12060))
        );
        // pytorch/pytorch#51858: a GTX 1050 Ti under Windows 2.0.1+cu117 (windows/cuda117.bat
        // of builder release/2.0 has 6.1): judged, and it runs
        let t = "PyTorch version: 2.0.1+cu117\nCUDA used to build PyTorch: 11.7\nOS: Microsoft Windows 11 Pro\nPython platform: Windows-10-10.0.22621-SP0\nGPU models and configuration: GPU 0: NVIDIA GeForce GTX 1050 Ti\n";
        let e = read(t);
        assert_eq!(e.wheel_lacking(), None);
        assert_eq!(e.wheel_unjudged(), None);
        // the same versions without Windows in the text: the Linux list, which has sm_60
        let e = read("PyTorch version: 2.0.1+cu117\nGPU 0: NVIDIA GeForce GTX 1050 Ti\n");
        assert_eq!(e.platform, None);
        assert_eq!(e.wheel_lacking(), None);
    }

    #[test]
    fn an_issue_forms_json_dependencies_and_written_gpu_model() {
        // invoke-ai/InvokeAI#7934's form: "GPU model" written by its owner, the Python
        // dependencies as JSON ("torch" : "2.6.0+cu124"); a CUDA 12.4 build cannot compile
        // an RTX 5060 Ti's sm_120
        let t = "### GPU model\n\nRTX 5060 TI \n\n### Python dependencies\n\n{\n        \"torch\"       : \"2.6.0+cu124\" , \n        \"torchvision\" : \"0.21.0+cu124\",\n}\n";
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.6.0+cu124"], "{e:?}");
        assert_eq!(e.gpus.len(), 1);
        let l = e.lacking().expect("sm_120 under CUDA 12.4");
        assert_eq!((l.sm, l.build), (120, 12040));
        // Comfy-Org/ComfyUI#10326's "### Other": an RTX 2060 under 2.7.1+cu128, which has sm_75
        let e = read("### Other\n\n- RTX2060\n- 2.7.1+cu128\n");
        assert_eq!(e.lacking(), None);
        assert_eq!(e.wheel_lacking(), None);
        assert_eq!(e.wheel_runs_every_gpu(), Some("2.7.1+cu128"));
        // torchvision's own quoted entry is not torch's
        assert!(
            read("\"torchvision\" : \"0.21.0+cu124\"")
                .torch_versions
                .is_empty()
        );
    }

    #[test]
    fn a_list_item_that_is_torch_version_alone() {
        // Comfy-Org/ComfyUI#9650's "### Other" list: GPU, OS, torch.__version__
        let t = "### Other\n\n- NVIDIA GeForce GTX 1080 Ti\n- Windows 10\n- 2.8.0+cu128\n";
        assert!(looks_like(t));
        let e = read(t);
        assert_eq!(e.torch_versions, ["2.8.0+cu128"]);
        assert_eq!(e.platform.as_deref(), Some("windows"));
        // Windows cu128 of 2.8 is not pinned, and CUDA 12.8 still compiles Pascal: not judged
        assert_eq!(e.wheel_lacking(), None);
        assert!(e.wheel_unjudged().is_some());
        // torchvision's 0.x, a version inside prose and a CPU build are not read this way
        assert!(!looks_like("- NVIDIA GeForce RTX 4090\n- 0.23.0+cu128\n"));
        assert!(read("- I use 2.8.0+cu128 now\n").torch_versions.is_empty());
        assert!(read("- 2.8.0+cpu\n").torch_versions.is_empty());
    }

    /// The build's own list, as nnDetection's environment report prints it (healthy:
    /// MIC-DKFZ/nnDetection#220, torch 1.13.0 cu117 on an RTX 3060-class GPU of capability 8.6,
    /// whose list holds sm_86).
    const NNDETECTION: &str = "----- PyTorch Information -----\nPyTorch Version: 1.13.0\nPyTorch Debug: False\nPyTorch CUDA: 11.7\nPyTorch Backend cudnn: 8500\nPyTorch CUDA Arch List: ['sm_37', 'sm_50', 'sm_60', 'sm_61', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'compute_37']\nPyTorch Current Device Capability: (8, 6)\nPyTorch CUDA available: True\n";

    #[test]
    fn an_arch_list_label_and_the_devices_capability_are_read() {
        assert!(looks_like(NNDETECTION));
        let e = read(NNDETECTION);
        assert_eq!(
            e.arch_lists,
            [vec![
                "sm_37",
                "sm_50",
                "sm_60",
                "sm_61",
                "sm_70",
                "sm_75",
                "sm_80",
                "sm_86",
                "compute_37"
            ]]
        );
        assert_eq!(e.gpus.len(), 1);
        assert_eq!(e.gpus[0].sm, 86);
        let list = e.one_arch_list().expect("one list");
        assert!(list.runs(86) && list.runs(89));
        // no judgement: the list runs the GPU, whatever a table says
        assert!(e.wheel_lacking().is_none());
    }

    #[test]
    fn get_arch_list_printed_after_the_call_is_the_builds_own_list() {
        // pytorch/pytorch#182250 (a maintainer's REPL, 2026-05): the 2.11 cu128 wheel has no
        // sm_70; the issue is a V100's (the GPU line stands for it: the comment names none)
        let repl = ">>> import torch\n>>> torch.__version__\n'2.11.0+cu128'\n>>> torch.cuda.get_arch_list()\n['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120']\n";
        assert!(looks_like(repl));
        let e = read(repl);
        assert_eq!(e.arch_lists.len(), 1);
        assert_eq!(e.arch_lists[0].last().map(String::as_str), Some("sm_120"));
        let v100 = format!("{repl}GPU 0: Tesla V100-SXM2-32GB\n");
        let w = read(&v100).wheel_lacking().expect("V100 lacks");
        assert!(w.from_text);
        assert_eq!((w.sm, w.build.as_str()), (70, "2.11.0+cu128"));
        // the same list before an RTX 5090 (sm_120): it runs
        let b = format!("{repl}GPU 0: NVIDIA GeForce RTX 5090\n");
        assert!(read(&b).wheel_lacking().is_none());
        // a list nobody says is the build's (a TORCH_CUDA_ARCH_LIST of an extension) is not read
        assert!(read("archs = ['sm_75', 'sm_80']\n").arch_lists.is_empty());
    }

    #[test]
    fn show_configs_nvcc_flags_are_the_builds_list() {
        // healthy: pytorch/pytorch#45021 (a comment of 2022-01): torch 1.8.1+cu111 on an RTX
        // 3060 Laptop GPU, sm_86 in the flags
        let t = "GPU 0: NVIDIA GeForce RTX 3060 Laptop GPU\nPyTorch: 1.8.1+cu111\nPyTorch compiling details: PyTorch built with:\n  - GCC 7.3\n  - CUDA Runtime 11.1\n  - NVCC architecture flags: -gencode;arch=compute_37,code=sm_37;-gencode;arch=compute_50,code=sm_50;-gencode;arch=compute_60,code=sm_60;-gencode;arch=compute_70,code=sm_70;-gencode;arch=compute_75,code=sm_75;-gencode;arch=compute_80,code=sm_80;-gencode;arch=compute_86,code=sm_86\n  - CuDNN 8.0.5\n";
        let e = read(t);
        assert_eq!(e.arch_lists.len(), 1);
        assert_eq!(e.arch_lists[0].len(), 7);
        assert!(e.wheel_lacking().is_none() && e.lacking().is_none());
        // healthy: the corpus's EDTER#29 (torch 1.6.0 on a V100; a PTX entry `code=compute_37`)
        let edter = include_str!(
            "../../tests/fixtures/corpus/h109_mmcvenv_edter29_v100_pytorch16_sm70_flags.txt"
        );
        let e = read(edter);
        assert!(e.arch_lists[0].contains(&"compute_37".to_string()), "{e:?}");
        assert!(e.wheel_lacking().is_none());
        // the bare show_config is the build's report of itself: read, nothing to judge
        let bare = "PyTorch built with:\n  - GCC 9.3\n  - CUDA Runtime 11.8\n  - NVCC architecture flags: -gencode;arch=compute_50,code=sm_50;-gencode;arch=compute_90,code=sm_90\n";
        assert!(looks_like(bare));
        // and the same flags beside a GPU of a major no entry has, and newer than no PTX: lacking
        let k80 = format!("GPU 0: Tesla K80\n{bare}");
        let w = read(&k80).wheel_lacking().expect("K80 lacks");
        assert_eq!(w.sm, 37);
        assert_eq!(w.archs, ["sm_50", "sm_90"]);
    }
}
