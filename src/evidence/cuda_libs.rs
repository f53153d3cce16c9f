//! The CUDA user-space libraries a framework could not use: missing (not on the loader's path,
//! not installed) or of another version than the framework was built against. Then the
//! framework runs without the GPU (TensorFlow skips registering it, JAX falls back to the CPU)
//! or stops (PyTorch's import, its cuDNN check, XLA's cuDNN check). Part of the CUDA runtime
//! reader ([`super::cuda_errors`]); written from each producer's source:
//!
//! - TensorFlow's `tensorflow/stream_executor/platform/default/dso_loader.cc` (later
//!   `tsl/platform/default/dso_loader.cc`): "Could not load dynamic library 'NAME'; dlerror:
//!   WHY" for each library `MaybeTryDlopenGPULibraries` tries (cudart, cublas(Lt), cufft,
//!   curand, cusolver, cusparse, cudnn; TensorRT's libnvinfer is tried apart and is optional),
//!   and `tensorflow/core/common_runtime/gpu/gpu_device.cc` (read at 637eae5b,
//!   `BaseGPUDeviceFactory::GetValidDeviceIds`): after "Found device N with properties" for each
//!   visible GPU, a failed dlopen logs "Cannot dlopen some GPU libraries. Please make sure the
//!   missing libraries mentioned above are installed properly if you would like to use GPU. …
//!   Skipping registering GPU devices..." and TensorFlow goes on without the GPUs. A machine
//!   with no GPU prints the dlopen lines too (TF 2.4+ adds "Ignore above cudart dlerror if you
//!   do not have a GPU set up on your machine"), so those lines alone are not judged: only
//!   beside a TensorFlow line that shows a GPU (the two above). The one exception is the
//!   CUDA runtime itself: `dlopen_checker.cc`'s `MaybeTryDlopenGPULibraries`, whose only caller
//!   is `GetValidDeviceIds`, tries cuBLAS, cuFFT, cuRAND, cuSOLVER, cuSPARSE and cuDNN after the
//!   GPUs were found, while libcudart is opened at import by the cudart stub on any machine; so
//!   a failed dlopen of one of those six is itself TensorFlow looking at a GPU. TensorFlow 0.x's
//!   loader said "Couldn't open CUDA library NAME. LD_LIBRARY_PATH: …" at import; there the
//!   GPU shows as "Creating TensorFlow device (/gpu:N) -> (device: N, name: …)".
//! - Caffe2's `caffe2/core/common_cudnn.h` (`CAFFE_ENFORCE(version_match ||
//!   backwards_compatible_7 || patch_compatible, "cuDNN compiled (", CUDNN_VERSION, ") and
//!   runtime (", cudnnGetVersion(), ") versions mismatch")`), as Detectron prints it.
//! - XLA's `xla/stream_executor/cuda/cuda_dnn.cc` (`CudnnSupport::Init`, run as a GPU's stream
//!   executor starts): "Loaded runtime CuDNN library: X but source was compiled with: Y. CuDNN
//!   library needs to have matching major version and equal or higher minor version."
//!   TensorFlow 0.x-1.x's `tensorflow/stream_executor/cuda/cuda_dnn.cc` (`CudnnSupport::Init`,
//!   before the `CudnnVersion` check of 1.5+; read in the code search's copy of that file, the
//!   one with the `TF_DISABLE_TENSOR_OP_MATH` switch) compared `cudnnCompatibilityVersion` of
//!   `cudnnGetVersion()` and `CUDNN_VERSION` and logged `port::StrCat("Loaded runtime CuDNN
//!   library: ", loaded_version, " (compatibility version ", loaded_compat_version, ") but source
//!   was compiled with ", CUDNN_VERSION, " (compatibility version ", compiled_compat_version,
//!   ").  If using a binary install, upgrade your CuDNN library to match. …")`: the bare
//!   `MAJOR*1000+MINOR*100+PATCH` numbers (5005 is 5.0.5), no colon after "with"; the convolution
//!   then aborts (`conv_ops.cc … Check failed: stream->parent()->GetConvolveAlgorithms`).
//! - JAX's `jax/_src/xla_bridge.py` (jax-ml/jax at cec06d11, and `_check_cuda_versions` as
//!   added in 94045182, 2023): `_suggest_missing_backends` warns only where
//!   `has_visible_nvidia_gpu()` (`/dev/nvidia0`, WSL2's `/dev/dxg`) and no CUDA backend came up:
//!   "CUDA backend failed to initialize: ERROR" (a CUDA jaxlib that failed), else "An NVIDIA GPU
//!   may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to
//!   cpu." The error names the library: "Found cuDNN version N, but JAX was built against version
//!   M, which is newer" (0.4.17+), `jax_plugins/cuda/__init__.py`'s "Outdated cuDNN installation
//!   found." with "Version JAX was built against: M" and "Installed version: N", or "Unable to
//!   load cuDNN. Is it installed?". The older "No GPU/TPU found, falling back to CPU" is printed
//!   on any machine and is not judged.
//! - PyTorch's `torch/backends/cudnn/__init__.py` (`_init`, as 0.4, 1.x and 2.x print it):
//!   "cuDNN version mismatch: PyTorch was compiled against N but linked against M", "cuDNN version
//!   incompatibility: PyTorch was compiled against N but linked against M", and 2.x's "…
//!   compiled  against (9, 8, 0) but found runtime version (9, 7, 0). PyTorch already comes
//!   bundled with cuDNN."
//! - The dynamic loader's own words (glibc `dlerror`), as Python's `ImportError`/`OSError`
//!   raises them: "libcudart.so.11.0: cannot open shared object file: No such file or
//!   directory". `libcuda.so.1` and `libnvidia-ml.so.1` are the driver's, not these.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// One library a framework could not use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LibraryProblem {
    /// The library as printed (`libcudart.so.10.1`, `cuDNN`, `jaxlib`).
    pub library: String,
    /// `missing` (not found or not loadable), `version` (another version than the build's), or
    /// `cpu-fallback` (the framework went on without the GPU, the library not named).
    pub problem: &'static str,
    /// TensorFlow, XLA, JAX or PyTorch (or `Python` for a bare loader error).
    pub framework: &'static str,
    /// The version the framework was built against, where printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wanted: Option<String>,
    /// The version it found, where printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The line that said it.
    pub line: String,
}

/// What the lines said, gathered by [`Libs::read`] and settled by [`Libs::finish`].
#[derive(Debug, Default)]
pub struct Libs {
    problems: Vec<LibraryProblem>,
    /// TensorFlow's dlopen failures of its GPU libraries, judged only where a GPU is shown.
    tf_dso: Vec<LibraryProblem>,
    /// TensorFlow printed a GPU ("Found device N with properties", 0.x's "Creating TensorFlow
    /// device (/gpu:N)"), looked for its libraries (a GPU library other than cudart), or gave
    /// one up ("Cannot dlopen some GPU libraries").
    tf_gpu: bool,
    tf_skipped: Option<String>,
    /// JAX warned it has no CUDA backend while an NVIDIA GPU is present.
    jax_gpu: Option<String>,
    /// JAX's own reason (a library's version or load failure), placed under its warning.
    jax_reason: Vec<LibraryProblem>,
    /// "Outdated X installation found." waiting for its version lines.
    jax_outdated: Option<usize>,
}

/// The phrases a line must hold for [`Libs::read`] to take anything from it (the reader's
/// whole-text search looks for these).
pub const PHRASES: &[&str] = &[
    "Could not load dynamic library '",
    "Cannot dlopen some GPU libraries",
    "with properties",
    "Loaded runtime CuDNN library: ",
    "CUDA backend failed to initialize: ",
    "but a CUDA-enabled jaxlib is not installed",
    "but JAX was built against version ",
    " installation found.",
    "Version JAX was built against: ",
    "Installed version: ",
    "Is it installed?",
    "PyTorch was compiled",
    ": cannot open shared object file",
    "Couldn't open CUDA library ",
    "Creating TensorFlow device",
    ") versions mismatch",
];

/// True when `line` says a library could not be used (the lines [`Libs::read`] takes a problem
/// from, not the context lines).
pub fn recognised_line(line: &str) -> bool {
    (line.contains("Could not load dynamic library '") && tf_gpu_library(line).is_some())
        || line.contains("Cannot dlopen some GPU libraries")
        || XLA_CUDNN.is_match(line)
        || TF1_CUDNN.is_match(line)
        || line.contains("CUDA backend failed to initialize: ")
        || line.contains("but a CUDA-enabled jaxlib is not installed")
        || TORCH_CUDNN.is_match(line)
        || CAFFE2_CUDNN.is_match(line)
        || SO_MISSING.is_match(line)
        || TF0_DSO.is_match(line)
}

static TF_DSO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Could not load dynamic library '([^']+)'").expect("static regex")
});
static TF_FOUND_DEVICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bFound device \d+ with properties\b|Creating TensorFlow device \((?:/gpu:|/device:GPU:)",
    )
    .expect("static regex")
});
static TF0_DSO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Couldn't open CUDA library (lib(?:cublas|cufft|curand|cudnn|cudart)\S*?)\.? LD_LIBRARY_PATH")
        .expect("static regex")
});
static CAFFE2_CUDNN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"cuDNN compiled \((\d+)\) and runtime \((\d+)\) versions mismatch")
        .expect("static regex")
});
static TF1_CUDNN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Loaded runtime CuDNN library: (\d+) \(compatibility version \d+\) but source was compiled with (\d+) \(compatibility version \d+\)")
        .expect("static regex")
});
static XLA_CUDNN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Loaded runtime CuDNN library: ([0-9][0-9.]*) but source was compiled with: ([0-9][0-9.]*[0-9])")
        .expect("static regex")
});
static JAX_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Found (CUDA|cuDNN|cuFFT|cuSOLVER|cuPTI|cuBLAS|cuSPARSE) version (\d+), but JAX was built against version (\d+)")
        .expect("static regex")
});
static JAX_OUTDATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Outdated (CUDA|cuDNN|cuFFT|cuSOLVER|cuPTI|cuBLAS|cuSPARSE) installation found\.")
        .expect("static regex")
});
static JAX_UNABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Unable to load (CUDA|cuDNN|cuFFT|cuSOLVER|cuPTI|cuBLAS|cuSPARSE)\.")
        .expect("static regex")
});
static JAX_BUILT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*Version JAX was built against: (\d+)\s*$").expect("static regex")
});
static JAX_INSTALLED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*Installed version: (\d+)\s*$").expect("static regex"));
static TORCH_CUDNN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"cuDNN version (?:mismatch|incompatibility): PyTorch was compiled\s+against (\(\d+, \d+, \d+\)|\d+) but (?:linked against|found runtime version) (\(\d+, \d+, \d+\)|\d+)")
        .expect("static regex")
});
static SO_MISSING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(lib(?:cudart|cublasLt|cublas|cufft|curand|cusolver|cusparse|cudnn[a-z_]*|nvrtc|nvJitLink|nccl)\.so(?:\.[0-9][0-9.]*)?): cannot open shared object file")
        .expect("static regex")
});

/// The GPU library a TensorFlow dlopen line names, where it is one TensorFlow needs for the
/// GPU (`MaybeTryDlopenGPULibraries`): Linux `libcudart.so.11.0`, Windows `cudart64_110.dll`.
/// TensorRT's `libnvinfer*`, the profiler's `libcupti` and the driver's `libcuda.so.1` are not.
fn tf_gpu_library(line: &str) -> Option<&str> {
    let name = TF_DSO.captures(line)?.get(1)?.as_str();
    let bare = name.strip_prefix("lib").unwrap_or(name);
    const NEEDED: [&str; 7] = [
        "cudart", "cublas", "cufft", "curand", "cusolver", "cusparse", "cudnn",
    ];
    NEEDED.iter().any(|n| bare.starts_with(n)).then_some(name)
}

fn clip(line: &str) -> String {
    super::clip(line.trim(), super::MAX_TEXT)
}

/// `(8, 9, 2)` or `8902` as `8.9.2`; `9101` (cuDNN's MAJOR*1000+MINOR*100+PATCH before 9,
/// MAJOR*10000+MINOR*100+PATCH from 9) as printed where the scheme is not certain.
fn version_text(v: &str) -> String {
    let t = v.trim_matches(|c| c == '(' || c == ')');
    if t.contains(',') {
        t.split(',').map(str::trim).collect::<Vec<_>>().join(".")
    } else {
        t.to_string()
    }
}

impl LibraryProblem {
    fn new(library: &str, problem: &'static str, framework: &'static str, line: &str) -> Self {
        Self {
            library: library.to_string(),
            problem,
            framework,
            wanted: None,
            found: None,
            line: clip(line),
        }
    }

    fn versions(mut self, wanted: String, found: String) -> Self {
        self.wanted = Some(wanted);
        self.found = Some(found);
        self
    }
}

/// The cuDNN version checks that stop a framework: (the check, framework, the capture groups
/// of the build's version and of the one found).
static CUDNN_CHECKS: LazyLock<[(&'static Regex, &'static str, usize, usize); 4]> =
    LazyLock::new(|| {
        [
            (&*CAFFE2_CUDNN, "Caffe2", 1, 2),
            (&*XLA_CUDNN, "XLA", 2, 1),
            (&*TF1_CUDNN, "TensorFlow", 2, 1),
            (&*TORCH_CUDNN, "PyTorch", 1, 2),
        ]
    });

impl Libs {
    /// Reads one line.
    pub fn read(&mut self, line: &str) {
        if TF_FOUND_DEVICE.is_match(line) {
            self.tf_gpu = true;
        }
        if let Some(lib) = tf_gpu_library(line) {
            // only the runtime is opened at import, on any machine
            let bare = lib.strip_prefix("lib").unwrap_or(lib);
            if !bare.starts_with("cudart") {
                self.tf_gpu = true;
            }
            self.tf_dso_push(lib, line);
            return;
        }
        if let Some(c) = TF0_DSO.captures(line) {
            self.tf_dso_push(&c[1], line);
            return;
        }
        for (check, framework, wanted, found) in CUDNN_CHECKS.iter() {
            if let Some(c) = check.captures(line) {
                let p = LibraryProblem::new("cuDNN", "version", framework, line)
                    .versions(version_text(&c[*wanted]), version_text(&c[*found]));
                self.push(p);
                return;
            }
        }
        if line.contains("Cannot dlopen some GPU libraries") {
            self.tf_gpu = true;
            self.tf_skipped.get_or_insert_with(|| clip(line));
            return;
        }
        // JAX's reason, on its warning's line or on its own (a traceback's RuntimeError)
        if let Some(c) = JAX_FOUND.captures(line) {
            let p = LibraryProblem::new(&c[1], "version", "JAX", line)
                .versions(c[3].to_string(), c[2].to_string());
            self.jax_reason_push(p);
        } else if let Some(c) = JAX_OUTDATED.captures(line) {
            self.jax_reason_push(LibraryProblem::new(&c[1], "version", "JAX", line));
            self.jax_outdated = Some(self.jax_reason.len() - 1);
        } else if let Some(c) = JAX_UNABLE.captures(line) {
            self.jax_reason_push(LibraryProblem::new(&c[1], "missing", "JAX", line));
        } else if let Some(i) = self.jax_outdated {
            if let Some(c) = JAX_BUILT.captures(line) {
                self.jax_reason[i].wanted = Some(c[1].to_string());
            } else if let Some(c) = JAX_INSTALLED.captures(line) {
                self.jax_reason[i].found = Some(c[1].to_string());
                self.jax_outdated = None;
            }
        }
        if line.contains("CUDA backend failed to initialize: ")
            || line.contains("but a CUDA-enabled jaxlib is not installed")
        {
            self.jax_gpu.get_or_insert_with(|| clip(line));
            return;
        }
        // TensorFlow's dlerror of a line read above, or of TensorRT's optional library; NCCL's
        // INFO lines of its optional plugins (`libnccl-net.so`, and a plugin's own dependencies)
        // that it goes on without
        if line.contains("Could not load dynamic library") || line.contains("NCCL INFO") {
            return;
        }
        for c in SO_MISSING.captures_iter(line) {
            self.push(LibraryProblem::new(&c[1], "missing", "Python", line));
        }
    }

    fn tf_dso_push(&mut self, library: &str, line: &str) {
        if !self.tf_dso.iter().any(|p| p.library == library) && self.tf_dso.len() < super::MAX_ITEMS
        {
            self.tf_dso
                .push(LibraryProblem::new(library, "missing", "TensorFlow", line));
        }
    }

    fn push(&mut self, p: LibraryProblem) {
        if self.problems.len() < super::MAX_ITEMS
            && !self
                .problems
                .iter()
                .any(|q| q.library == p.library && q.framework == p.framework)
        {
            self.problems.push(p);
        }
    }

    fn jax_reason_push(&mut self, p: LibraryProblem) {
        if self.jax_reason.len() < super::MAX_ITEMS
            && !self.jax_reason.iter().any(|q| q.library == p.library)
        {
            self.jax_reason.push(p);
        }
    }

    /// The problems the text shows, and those it gives no ground to judge: TensorFlow's dlopen
    /// failures with no GPU shown beside them, JAX's CPU-only jaxlib.
    pub fn finish(self) -> (Vec<LibraryProblem>, Vec<LibraryProblem>) {
        let mut out = Self {
            problems: Vec::new(),
            ..Default::default()
        };
        for p in self.problems {
            out.push(p);
        }
        let mut unjudged = Vec::new();
        if self.tf_gpu && (!self.tf_dso.is_empty() || self.tf_skipped.is_some()) {
            if self.tf_dso.is_empty() {
                let line = self.tf_skipped.unwrap_or_default();
                out.push(LibraryProblem::new(
                    "some GPU libraries",
                    "missing",
                    "TensorFlow",
                    &line,
                ));
            }
            for p in self.tf_dso {
                out.push(p);
            }
        } else {
            unjudged = self.tf_dso;
        }
        // JAX's warning says a GPU is there (see the module doc); the library it names is the
        // problem. A CPU-only jaxlib beside a GPU says JAX computes on the CPU, not that the
        // job does: a PyTorch job whose dependencies import JAX prints it too
        // (hollowstrawberry/kohya-colab#133: "the training works fine despite this warning").
        // A failure with no library named is another layer's (the libcuda stub's 303: no
        // driver, read by `cuda_errors`; "no supported devices found": memory preallocated).
        match self.jax_gpu {
            Some(_) if !self.jax_reason.is_empty() => {
                for p in self.jax_reason {
                    out.push(p);
                }
            }
            Some(line) => {
                let cpu_only = line.contains("CUDA-enabled jaxlib is not installed");
                unjudged.push(if cpu_only {
                    LibraryProblem::new("jaxlib", "cpu-fallback", "JAX", &line)
                } else {
                    LibraryProblem::new("CUDA backend", "missing", "JAX", &line)
                });
            }
            None => unjudged.extend(self.jax_reason),
        }
        (out.problems, unjudged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Vec<LibraryProblem>, Vec<LibraryProblem>) {
        let mut l = Libs::default();
        for line in text.lines() {
            l.read(line);
        }
        l.finish()
    }

    use crate::evidence::corpus_text as corpus;

    #[test]
    fn tensorflow_missing_cuda_libraries_beside_its_gpus_are_problems() {
        // NVIDIA/nvvl#108: two TITAN Xp found, libcudart/cublas/cufft 10.x not loadable
        let (p, u) = read(&corpus(
            "h95_tfdso_nvvl108_titanxp_libcudart101_missing.txt",
        ));
        let libs: Vec<&str> = p.iter().map(|p| p.library.as_str()).collect();
        assert!(libs.contains(&"libcudart.so.10.1"), "{p:?}");
        assert!(libs.contains(&"libcublas.so.10"), "{p:?}");
        assert!(
            p.iter()
                .all(|p| p.framework == "TensorFlow" && p.problem == "missing")
        );
        assert!(u.is_empty());
    }

    #[test]
    fn tensorflow_tensorrt_warnings_and_loaded_libraries_are_not_problems() {
        // TensorRT's optional libnvinfer (elasticdl#2160, fastsd#1580) and a Colab P100 where
        // every library opened (colab#1406)
        for f in [
            "h95_tftrt_elasticdl2160_cpu_docker_libnvinfer6.txt",
            "h95_tftrt_fastsd1580_colab_libnvinfer7_warning.txt",
            "h95_tfdso_colab1406_p100_successfully_opened.log",
        ] {
            let (p, _) = read(&corpus(f));
            assert!(p.is_empty(), "{f}: {p:?}");
        }
    }

    #[test]
    fn a_gpu_library_tensorflow_tries_only_for_a_gpu_shows_one() {
        // NVIDIA/tensorflow#110: cuSOLVER's dlopen fails on its libnvJitLink dependency, which
        // `MaybeTryDlopenGPULibraries` tries only after finding the GPUs
        let (p, _) = read(&corpus(
            "h104_tfdso_nvidiatf110_cusolver_needs_nvjitlink.txt",
        ));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].library, "libcusolver.so.11");
        // TensorFlow 0.6 (tensorflow/tensorflow#722): cuDNN not opened, GPUs created after
        let (p, _) = read(&corpus("h104_tfdso_tf722_cudnn65_not_opened_k20c.txt"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].library, "libcudnn.so.6.5");
        // its import-time lines alone show no GPU
        let t = "I tensorflow/stream_executor/dso_loader.cc:93] Couldn't open CUDA library libcudnn.so.6.5. LD_LIBRARY_PATH: /usr/local/cuda-7.0/lib64\n";
        assert!(read(t).0.is_empty());
    }

    #[test]
    fn caffe2s_cudnn_check_is_a_version_problem() {
        // facebookresearch/Detectron#574
        let (p, _) = read(&corpus("h104_caffe2cudnn_detectron574_7102_7005.txt"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (
                p[0].framework,
                p[0].wanted.as_deref(),
                p[0].found.as_deref()
            ),
            ("Caffe2", Some("7102"), Some("7005"))
        );
    }

    #[test]
    fn a_cudart_dlerror_with_no_gpu_shown_is_not_judged() {
        // TF 2.4+ on a machine without a GPU (the dlopen line and its own "Ignore above")
        let t = "2021-01-05 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n2021-01-05 10:00:00.000001: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.\n";
        let (p, u) = read(t);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].library, "libcudart.so.11.0");
    }

    #[test]
    fn tensorflow_1x_cudnn_compatibility_check_is_a_version_problem() {
        // whosebug.com 2129428 (h142): TensorFlow 0.x on a Tesla K20m, cuDNN 5.0.5 loaded
        // where the build wants 5.1.3
        let (p, u) = read(&corpus(
            "h142_tfcudnn_whosebug_k20m_cudnn5005_built5103.txt",
        ));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (
                p[0].framework,
                p[0].problem,
                p[0].wanted.as_deref(),
                p[0].found.as_deref()
            ),
            ("TensorFlow", "version", Some("5103"), Some("5005"))
        );
        assert!(u.is_empty());
        // the format alone, and neighbours not claimed: the message's own source line, the
        // 1.5+ wording without the numbers, prose naming the check
        assert!(recognised_line(
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7101 (compatibility version 7100) but source was compiled with 7003 (compatibility version 7000).  If using a binary install, upgrade your CuDNN library to match."
        ));
        for not in [
            r#"port::StrCat("Loaded runtime CuDNN library: ", loaded_version, " (compatibility version ","#,
            "Loaded runtime CuDNN library: X (compatibility version Y) but source was compiled with Z",
            "I got the Loaded runtime CuDNN library error again",
        ] {
            assert!(!recognised_line(not), "{not}");
            assert!(read(not).0.is_empty(), "{not}");
        }
    }

    #[test]
    fn xla_and_jax_cudnn_older_than_the_build_are_version_problems() {
        // conda-forge/jaxlib-feedstock#329: XLA's cuda_dnn.cc
        let (p, _) = read(&corpus(
            "h95_cudnn_jaxlibfeedstock329_runtime_9101_compiled_9131.txt",
        ));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (
                p[0].framework,
                p[0].problem,
                p[0].wanted.as_deref(),
                p[0].found.as_deref()
            ),
            ("XLA", "version", Some("9.13.1"), Some("9.10.1"))
        );
        // MIT-REALM/gcbfplus#1: JAX's warning with _check_cuda_versions' reason
        let (p, _) = read(&corpus("h95_jaxinit_gcbfplus1_cudnn_8600_built_8906.txt"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (
                p[0].library.as_str(),
                p[0].wanted.as_deref(),
                p[0].found.as_deref()
            ),
            ("cuDNN", Some("8906"), Some("8600"))
        );
    }

    #[test]
    fn jax_falling_back_is_judged_only_where_it_says_a_gpu_is_present() {
        // the older "No GPU/TPU found" is printed on any machine (t5x#1286; multinerf#12's
        // INFO lines of backends that are not there)
        for f in [
            "h95_jaxinit_t5x1286_no_gpuallocatorconfig_cpu_fallback.log",
            "h95_jaxinit_multinerf12_tpu_rocm_info_cuda_present.log",
        ] {
            let (p, _) = read(&corpus(f));
            assert!(p.is_empty(), "{f}: {p:?}");
        }
        // xla_bridge's `_suggest_missing_backends` of a CPU-only jaxlib, as a notebook's stderr
        // shows it: read, not judged (a PyTorch job that imports JAX prints it too)
        let (p, u) = read(
            "WARNING:2025-02-06 16:38:26,869:jax._src.xla_bridge:987: An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n",
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(
            (u[0].library.as_str(), u[0].problem),
            ("jaxlib", "cpu-fallback")
        );
        // a CUDA jaxlib that failed for a reason that names no library is another layer's
        let (p, u) = read(
            "W0918 11:06:20.243524 140090094478592 xla_bridge.py:898] CUDA backend failed to initialize: INTERNAL: no supported devices found for platform CUDA (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(
            (u[0].library.as_str(), u[0].problem),
            ("CUDA backend", "missing")
        );
    }

    #[test]
    fn jax_outdated_installation_reads_its_version_lines() {
        // jax_plugins/cuda/__init__.py `_make_msg`, under the backend warning
        let t = "RuntimeError: Outdated cuDNN installation found.\nVersion JAX was built against: 90800\nMinimum supported: 90000\nInstalled version: 8907\nThe local installation version must be no lower than 90000.\nCUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:\n";
        let (p, _) = read(t);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (
                p[0].library.as_str(),
                p[0].wanted.as_deref(),
                p[0].found.as_deref()
            ),
            ("cuDNN", Some("90800"), Some("8907"))
        );
        // the same error with no GPU-present warning: a CPU machine's CUDA jaxlib, not judged
        let (p, _) = read(&t.lines().take(5).collect::<Vec<_>>().join("\n"));
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn pytorch_cudnn_checks_of_each_version_and_loader_errors() {
        // torch 2.x (two spaces after "compiled", as `_init` prints it)
        let (p, _) = read(
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 8, 0) but found runtime version (9, 1, 1). PyTorch already comes bundled with cuDNN.\n",
        );
        assert_eq!(
            (p[0].wanted.as_deref(), p[0].found.as_deref()),
            (Some("9.8.0"), Some("9.1.1"))
        );
        // torch 0.4
        let (p, _) = read(
            "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7005\n",
        );
        assert_eq!(p[0].found.as_deref(), Some("7005"));
        // the loader's own words; the driver's library is not one of these
        let (p, _) = read(
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\nOSError: libcuda.so.1: cannot open shared object file: No such file or directory\n",
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (p[0].library.as_str(), p[0].framework),
            ("libcudart.so.11.0", "Python")
        );
        // NCCL probing for its optional net plugin (vllm-project/vllm#10626's log) goes on
        for f in [
            "h20_nccl_vllm10626_docker_single_node_socket.log",
            "h46_nccltests_nccltests208_4090_named_symbol_not_found.log",
        ] {
            let (p, _) = read(&corpus(f));
            assert!(p.is_empty(), "{f}: {p:?}");
        }
    }
}
