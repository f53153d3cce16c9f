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
//! - pip (`pip list` rows `torch  V`, `pip freeze` `torch==V`) and the many scripts that log
//!   `PyTorch version: {torch.__version__}` or print `torch.__version__` on its own line.
//!
//! A version's local part names the build (PEP 440; PyTorch's wheel indexes use `+cuXYZ`,
//! `+cpu`, `+rocmX.Y`). GPU names are read with [`super::gpu_arch`], which knows names only as the
//! driver prints them. Nothing is guessed: a paste with two torch builds (before and after a
//! reinstall), a CPU or ROCm build, or no GPU the table knows gives no build to judge.

use super::cuda_compat;
use super::gpu_arch::{self, Named};
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// A torch version with its build tag, after any of the labels the producers print.
static TORCH_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:^|[^a-z0-9_.\-/\\])(?:py)?torch(?:\s*version|\.__version__\)?)?(?:\*\*)?\s*(?:==|:|=|\s)\s*(?:\*\*)?\s*['"]?v?(\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?)\+(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*)\b"#,
    )
    .expect("static regex")
});

/// collect_env's build line (torch's and vLLM's layouts).
static BUILT_WITH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"CUDA used to build PyTorch\s*:\s*(\d+\.\d+|None)\b").expect("static regex")
});

/// A version alone on a line (`print(torch.__version__)`'s output, with or without quotes).
static BARE_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^['"]?(\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?)\+(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*)['"]?$"#,
    )
    .expect("static regex")
});

/// sglang's `GPU 0,1: NAME` and `GPU 0,1 Compute Capability: M.m`.
static SGLANG_GPU: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^GPU ([\d,]+): (.+)$").expect("static regex"));
static SGLANG_CC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^GPU ([\d,]+) Compute Capability: (\d+)\.(\d+)\s*$").expect("static regex")
});

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

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) && v.len() < super::MAX_ITEMS {
        v.push(s);
    }
}

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

    fn add_gpu(&mut self, g: Named) {
        if !self.gpus.iter().any(|x| x.name == g.name) && self.gpus.len() < super::MAX_ITEMS {
            self.gpus.push(g);
        }
    }

    /// Nothing of a build or a GPU was read.
    pub fn is_empty(&self) -> bool {
        self.torch_versions.is_empty()
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
        self.cpu_only_build |= other.cpu_only_build;
        self.rocm_build |= other.rocm_build;
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

    /// The text shows one CUDA build and at least one GPU the table knows: enough to judge.
    pub fn judgeable(&self) -> bool {
        self.build_cuda_code().is_some() && !self.gpus.is_empty()
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
}

/// Reads every build and GPU name in `text` (quoted with `> ` or not).
pub fn read(text: &str) -> TorchEnv {
    let text = super::unquote(text);
    let mut out = TorchEnv::default();
    let mut prev_mentions_version = false;
    let mut sglang_names: Vec<(String, String)> = Vec::new();
    for raw in super::content_lines(&text) {
        let line = raw.trim();
        for c in TORCH_VERSION.captures_iter(line) {
            out.add_tag(&c[1], &c[2].to_ascii_lowercase());
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
    out
}

/// The text prints a torch build and names a GPU the table knows, in one of the producers'
/// grammars above.
pub fn looks_like(text: &str) -> bool {
    let e = read(text);
    (!e.torch_versions.is_empty() || !e.torch_cuda.is_empty()) && !e.gpus.is_empty()
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct TorchEnvKind;

impl super::EvidenceKind for TorchEnvKind {
    fn name(&self) -> &'static str {
        "torch-env"
    }
    fn doc(&self) -> &'static str {
        "the PyTorch build and the GPUs a paste names (ComfyUI's startup log and error report, sglang's check_env, version prints beside GPU names)"
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
        if e.is_empty() {
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
        // torchvision's tag and a path are not torch's
        let t = "torchvision 0.22.1+cu128\nC:\\x\\site-packages\\torch\\cuda\\__init__.py:235: 2.1+cu118\n";
        assert!(read(t).torch_versions.is_empty());
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
}
