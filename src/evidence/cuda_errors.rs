//! What PyTorch and the CUDA runtime print when CUDA cannot start or a kernel fails, read from a
//! paste that may hold much else (a traceback, prose, a training log). Written from:
//!
//! - `c10/cuda/CUDAFunctions.cpp` (pytorch/pytorch, read at 01a6a16d, PyTorch 2.x;
//!   `device_count_impl`): "The NVIDIA driver on your system is too old (found version N)",
//!   "Found no NVIDIA driver on your system", "CUDA driver initialization failed, you might not
//!   have a CUDA gpu.", "CUDA unknown error - this may be due to an incorrectly set up
//!   environment", "No CUDA GPUs are available", each behind "CUDA initialization: " when
//!   `device_count()` turns it into a `UserWarning`; and its default case, "Unexpected error from
//!   cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that
//!   might have already set an error? Error N: (cudaGetErrorString)" (the wording checked
//!   against public pastes that cite CUDAFunctions.cpp:100–109, PyTorch 1.7–2.x). `Error 804:
//!   forward compatibility was attempted on non supported HW` is
//!   `cudaErrorCompatNotSupportedOnDevice`: a forward-compatibility user-mode driver newer than
//!   the kernel driver on a GPU that does not support it, fixed by a driver that runs the CUDA;
//! - `torch/cuda/__init__.py` (read at 000d1f4a, PyTorch 1.5, and 17e3b6a9, PyTorch 2.4):
//!   1.x's `_check_driver` (the same "too old (found version N)" as an `AssertionError`),
//!   `_check_capability` ("Found GPU%d %s which is of cuda capability %d.%d. … The minimum cuda
//!   capability (that we support|supported by this library) is %d.%d", and "Found GPU%d %s which
//!   requires CUDA_VERSION >= %d … compiled with CUDA_VERSION %d"), and `_check_cubins` ("%s with
//!   CUDA capability sm_%d is not compatible with the current PyTorch installation. The current
//!   PyTorch install supports CUDA capabilities %s."); 2.8's `_check_capability` prints "Found
//!   GPU%d %s which is of cuda capability %d.%d. Minimum and Maximum cuda capability supported by
//!   this version of PyTorch is (%d.%d) - (%d.%d)" for a GPU below the oldest architecture of
//!   `torch.cuda.get_arch_list()` or above the newest (its `CUDA_ARCHES_SUPPORTED`: 12.6 50-90,
//!   12.8 and 12.9 70-120), then "Please install PyTorch with a following CUDA configurations:";
//!   2.11's `_check_capability` (`_warn_unsupported_code`, pytorch/pytorch#166185; the stored
//!   text of `torch/cuda/__init__.py` read by the search tool, id 154925696) warns only where no
//!   architecture of `get_arch_list()` runs the GPU (its `DEVICE_REQUIREMENT` table: a cubin runs
//!   later minors of its major, less the listed exceptions such as 8.7): "Found GPU%d %s which is
//!   of compute capability (CC) %d.%d.", "The following list shows the CCs this version of
//!   PyTorch was built for and the hardware CCs it supports:", one "- %d.%d which supports
//!   hardware CC %s" line per entry of the list (a cubin and a PTX of one architecture are two
//!   lines), then "Please follow the instructions at … one of these CUDA versions: …";
//! - `torchvision/extension.py` (pytorch/vision, read at 0341aa50 and 0d7913da;
//!   `_check_cuda_version`): where torchvision's `_C` ops report a CUDA (`_cuda_version()`)
//!   other than `torch.version.cuda`, importing torchvision raises `RuntimeError("Detected that
//!   PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA
//!   Version={}.{} and torchvision has CUDA Version={}.{}. Please reinstall the torchvision that
//!   matches your PyTorch install.")`; later releases compare the major only and say `different
//!   CUDA major versions` (the wording of public pastes from torchvision 0.16 on, e.g.
//!   deforum/deforum-stable-diffusion#348) with the same two `Version=X.Y`. A rich console wraps
//!   the message over several lines, so it is read from the text with its line breaks folded
//!   ([`extension_cuda_mismatch`]);
//! - `c10/cuda/CUDAException.cpp`: `CUDA error: <cudaGetErrorString>` with its hints ("CUDA
//!   kernel errors might be asynchronously reported …", "consider passing CUDA_LAUNCH_BLOCKING=1",
//!   "Compile with `TORCH_USE_CUDA_DSA`");
//! - the CUDA Runtime API's `cudaError` enum and its `cudaGetErrorString` strings, and the Driver
//!   API's `CUresult` names (`driver_types.h`, `cuda.h`, CUDA 12.x; documented at
//!   <https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html>);
//! - cuBLAS's `cublasStatus_t` and cuDNN's `cudnnStatus_t` names, as PyTorch prints them
//!   (`CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm(...)`, `cuDNN error:
//!   CUDNN_STATUS_INTERNAL_ERROR`);
//! - the THC library of PyTorch 0.x-1.x and Lua Torch (`aten/src/THC/THCGeneral.cpp`,
//!   pytorch/pytorch read at a9bce336; cutorch's `lib/THC/THCGeneral.c`, whose PR #330 added the
//!   line): `__THCudaCheck` prints `THCudaCheck FAIL file=%s line=%i error=%i : %s` once and then
//!   raises `cuda runtime error (%d) : %s` (with ` at FILE:LINE` from `_THError`);
//!   `__THCudaCheckWarn` prints `THCudaCheckWarn FAIL …` and goes on. The number is the runtime's
//!   enum of that CUDA release (before CUDA 10.1 an illegal address was 77, an assert 59, an
//!   unknown error 30), so the error is named from `cudaGetErrorString`'s text, which did not
//!   change, and the number kept as printed;
//! - other programs' own wrappers around the same `cudaGetErrorString` text, which put a
//!   qualifier between "CUDA error" and the colon and may follow the text with where it failed:
//!   NVIDIA Omniverse Kit's plugins log through Carbonite (`<ISO time> [<n>ms] [Error]
//!   [<plugin>] …`) as `CUDA error in memcpy: <text>: <file>: <line> (device 0)`, `CUDA error:
//!   <text>: <file>: <line>` (omni.physx.tensors) and `CUDA error 700: cudaErrorIllegalAddress -
//!   <text>` (carb.cudainterop), Isaac Gym as `Gym cuda error: <text>: <file>: <line>`; the CUDA
//!   samples' `helper_cuda.h` as `CUDA error at <file>:<line> code=<n>(<name>) "<call>"`. Such
//!   a line is read only where the text after the colon is one of the runtime's own strings
//!   (the table below), so a program's free-form "CUDA error in X: …" names nothing.
//!
//! - the CUDA SDK's `cutil` checks of the CUDA 1.x-4.x samples, copied into many programs since
//!   (`common/inc/cutil.h`, read in cudpp/cudpp at f1a63f77; `cutil_inline_runtime.h`'s
//!   `__cudaSafeCall`, the same text in every copy the search tool found): `CUDA_SAFE_CALL` /
//!   `CUDA_SAFE_CALL_NO_SYNC` / `CUDA_SAFE_THREAD_SYNC` print `Cuda error in file '%s' in line %i
//!   : %s.`, `CUT_CHECK_ERROR` and `CUDA_CHECK_CTX_LOST` `Cuda error: %s in file '%s' in line %i
//!   : %s.` (the program's own message first), `cutilSafeCall` `%s(%i) : cudaSafeCall() Runtime
//!   API error %d: %s.`, the last `%s` always `cudaGetErrorString(err)`; `CU_SAFE_CALL` prints the
//!   driver API's `CUresult` in hex, `Cuda driver error %x in file '%s' in line %i.`. The format
//!   itself says the text is the runtime's, so a text the table does not know (`unspecified
//!   driver error`, a string of the CUDA 1.x-2.x runtimes, listed twenty-second in gem5-gpu's
//!   copy of their table) is kept as printed, as THC's are; a forum that curls the quotes around
//!   the file name (`‘common/cuda/mc.cu’`) or around the whole line is read the same.
//!
//! - the CUDA checks of the programs that print a failed call's `cudaGetErrorString` behind their
//!   own prefix: NCCL's `CUDACHECK` (`src/include/checks.h`, github.com/NVIDIA/nccl: `Cuda
//!   failure '%s'`, since 2.19 `Cuda failure %d '%s'`, a WARN line) and nccl-tests' (`src/common.h`,
//!   github.com/NVIDIA/nccl-tests at a0b82b2: `%s: Test CUDA failure %s:%d '%s'`, the host, the
//!   file and line of the failed call, then its error string). Behind either prefix the short
//!   texts (`unknown error`, `invalid argument`) are read too.
//!
//! - PhysX's CUDA context manager (the GPU path of Isaac Gym, Omniverse and every PhysX GPU
//!   user), `CudaCtxMgr::safeDelayImport`: it reads `cuDriverGetVersion` and refuses a driver
//!   whose CUDA is below the one it was built for, reporting `CUDA driver version is %u,
//!   expected at least %u.` (PhysX 3.4/4.x, PxShared `src/cudamanager/src/CudaContextManager.cpp`,
//!   read in NVIDIAGameWorks/NvCloth at cfa944de, the expected value `CUDA_VERSION`) or `CUDA
//!   driver version is %u, expected driver version is at least %u.` (PhysX 5,
//!   NVIDIA-Omniverse/PhysX `physx/source/cudamanager/src/CudaContextManager.cpp` read at
//!   0a100161, the expected value `MIN_CUDA_VERSION` 12000), both numbers `cuDriverGetVersion`
//!   codes (1000 × major + 10 × minor). The default error callback prints it as `<file>
//!   (<line>) : <code> : <message>` (`PxDefaultErrorCallback::reportError`,
//!   `physx/source/physxextensions/src/ExtDefaultErrorCallback.cpp`); a program's own callback
//!   may print the message alone, so the message is read wherever it stands. It is read as the
//!   driver too old only where its first number is below its second, as PhysX only prints it
//!   then.
//!
//! - TensorFlow's and XLA's StreamExecutor and jaxlib, which print a failed driver call's
//!   `CUresult` by its name where `cuGetErrorName` knows it and by its number where it does not:
//!   `ToString(CUresult)` in TF's `tensorflow/stream_executor/cuda/cuda_driver.cc` (TF 1.x–2.x;
//!   the stored text read by the search tool, id 67358904) and in jaxlib's own CUDA helpers returns
//!   `UNKNOWN ERROR (%d)`, which `InternalInit` logs as `failed call to cuInit: UNKNOWN ERROR
//!   (303)`; XLA's `cuda::internal::ToStatusSlow` (openxla/xla
//!   `xla/stream_executor/cuda/cuda_status.cc`, id 1098816657, logged by `cuda_platform.cc`'s
//!   `InternalInit`, id 8722202, since 2024) builds `CUDA error: <detail>: UNKNOWN ERROR (%d)`
//!   (`failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)`);
//!   jaxlib's `ErrorString(CUresult)` (jax-ml/jax `jaxlib/gpu/gpu_kernel_helpers.cc`, id
//!   3724953542) prints `Unknown CUDA error %d; cuGetErrorName failed. This probably means that JAX
//!   was unable to load the CUDA libraries.` behind `JAX_AS_STATUS`'s `operation <call> failed: `.
//!   Each number is `cuda.h`'s `CUresult` (since CUDA 10.1 the runtime's `cudaError` numbers are the
//!   driver's for the errors both name), named from the table below; a number the table lacks
//!   stays `CUresult N`.
//!
//! - a failed `assert` in device code, which the CUDA runtime prints to stderr when the host
//!   next synchronises, in the form the CUDA C++ Programming Guide gives (section "Assertion",
//!   <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#assertion>, the same
//!   since CUDA 4.0 and compute capability 2.x): ``<filename>:<line number>:<function>: block:
//!   [blockIdx.x,blockIdx.y,blockIdx.z], thread: [threadIdx.x,threadIdx.y,threadIdx.z]
//!   Assertion `<expression>` failed.``, one line per failing thread, after which "any subsequent
//!   host-side synchronization calls made for the same device will return cudaErrorAssert".
//!   PyTorch's kernels assert through `CUDA_KERNEL_ASSERT` (`c10/macros/Macros.h`, the device
//!   `assert`, or `__assert_fail` where `NDEBUG` is set), so the line names ATen's source file,
//!   line and the condition (`Loss.cu:95: operator(): … Assertion `target_val >= zero &&
//!   target_val <= one` failed.`, `Indexing.cu:1515: indexSelectSmallIndex: … Assertion
//!   `srcIndex < srcSelectDimSize` failed.`): the op that asserted, which the asynchronous
//!   `CUDA error: device-side assert triggered` traceback does not show. Read only with both
//!   `block: [` and `thread: [` before `Assertion `, so glibc's host `assert` (`prog: file.c:12:
//!   main: Assertion `x' failed.`) is not one.
//!
//! The reader streams the lines once and keeps bounded lists.

use super::cuda_compat;
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// A GPU the installed PyTorch has no kernels for (`_check_cubins`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IncompatibleGpu {
    pub name: String,
    /// `sm_120`
    pub capability: String,
    /// 120
    pub sm: u32,
    /// The architectures the build has (`sm_50 sm_60 … compute_37`), as printed.
    pub supported: Vec<String>,
}

/// A GPU older than the build's oldest architecture (`_check_capability`'s `old_gpu_warn`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OldGpu {
    pub index: u32,
    pub name: String,
    /// `3.0`
    pub capability: String,
    /// The oldest capability the build supports (`3.5`), where the message says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_supported: Option<String>,
}

/// A GPU that needs a newer CUDA than PyTorch was compiled with (`incorrect_binary_warn`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NeedsNewerCuda {
    pub index: u32,
    pub name: String,
    pub requires_cuda_version: u32,
    pub compiled_cuda_version: u32,
}

/// One CUDA error named in the text.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CudaErrorSeen {
    /// The runtime's enum name (`cudaErrorIllegalAddress`); for a cuBLAS/cuDNN status, that name.
    pub name: String,
    /// The runtime's error number, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u32>,
    /// `cudaGetErrorString`'s text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What it is about: `memory-access`, `assert`, `launch`, `ecc`, `hardware`, `driver`,
    /// `arch`, `memory`, `device-unavailable`, `library`, `other`.
    pub category: &'static str,
    /// Lines naming it.
    pub count: u64,
    /// The first line naming it, trimmed.
    pub line: String,
}

/// A failed `assert` in device code, as the CUDA runtime prints it (see the module's notes).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceAssert {
    /// The source file as printed (`/opt/conda/…/aten/src/ATen/native/cuda/Loss.cu`).
    pub file: String,
    pub line: u32,
    /// The function as the compiler names it (`operator()`, `indexSelectSmallIndex`); MSVC
    /// builds of PyTorch for Windows print none (`…\Loss.cu:250: block: [0,0,0], thread:
    /// [8,0,0] Assertion `t >= 0 && t < n_classes` failed.`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The asserted expression (`target_val >= zero && target_val <= one`).
    pub condition: String,
    /// `blockIdx` of the first failing thread printed (`3663,0,0`).
    pub block: String,
    /// Its `threadIdx` (`64,0,0`).
    pub thread: String,
    /// Lines with this file, line and condition (one per failing thread).
    pub count: u64,
}

impl DeviceAssert {
    /// `Loss.cu:95`: the file's last path component and the line.
    pub fn site(&self) -> String {
        let base = self
            .file
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(self.file.as_str());
        format!("{base}:{}", self.line)
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct CudaRuntimeLog {
    /// "The NVIDIA driver on your system is too old (found version N)", or PhysX's "CUDA driver
    /// version is N, expected at least M." with N below M.
    pub driver_too_old: bool,
    /// N: the CUDA version the driver runs, as `cudaDriverGetVersion` codes it (12080).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_found_version: Option<u32>,
    /// The same as `major.minor` (`12.8`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_cuda: Option<String>,
    /// PhysX's driver check: the CUDA version it needs, as `cuDriverGetVersion` codes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_required_version: Option<u32>,
    /// PhysX's driver check: the line that said it, trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_check_line: Option<String>,
    /// "Found no NVIDIA driver on your system", or TF's, XLA's and jaxlib's libcuda stub
    /// answering cuInit with an unnamed 303 (`UNKNOWN ERROR (303)`: libcuda.so.1 not loadable).
    pub no_driver: bool,
    /// `cudaErrorInsufficientDriver`: "CUDA driver version is insufficient for CUDA runtime
    /// version".
    pub insufficient_driver: bool,
    /// `cudaErrorCompatNotSupportedOnDevice` (804): "forward compatibility was attempted on non
    /// supported HW", the CUDA needed a newer driver than this GPU's kernel driver.
    pub forward_compat_unsupported: bool,
    /// The message came as PyTorch's "CUDA initialization:" warning (torch fell back to CPU).
    pub init_warning: bool,
    /// "CUDA driver initialization failed, you might not have a CUDA gpu."
    pub driver_init_failed: bool,
    /// "CUDA unknown error - this may be due to an incorrectly set up environment".
    pub unknown_error_env: bool,
    /// "No CUDA GPUs are available".
    pub no_gpus: bool,
    /// `cudaErrorNoKernelImageForDevice`: "no kernel image is available for execution on the
    /// device".
    pub no_kernel_image: bool,
    /// NVRTC refused the architecture it was asked to compile for: its program log's
    /// `nvrtc: error: invalid value for --gpu-architecture (-arch)` (the compile returning
    /// NVRTC_ERROR_INVALID_OPTION). NVRTC accepts `-arch` only for the architectures its CUDA
    /// release supports (NVRTC User Guide, Supported Compile Options), and a runtime compiler asks
    /// for the GPU's own: CuPy's `_get_arch()` (cupy/cuda/compiler.py, read at 0122fc8e) passes
    /// `-arch=compute_XY` of `device.compute_capability`, lowered only to the newest NVRTC
    /// knows, so a refusal says the CUDA in use has no target for this GPU (one older than the
    /// release's floor: a Pascal GPU under CUDA 13's NVRTC, Kepler under CUDA 12's).
    pub nvrtc_arch_rejected: bool,
    pub incompatible_gpus: Vec<IncompatibleGpu>,
    pub old_gpus: Vec<OldGpu>,
    pub needs_newer_cuda: Vec<NeedsNewerCuda>,
    /// Every CUDA, cuBLAS or cuDNN error named, in order of first appearance.
    pub errors: Vec<CudaErrorSeen>,
    /// Distinct error names (`errors[].name`), for rules.
    pub error_names: Vec<String>,
    /// "CUDA kernel errors might be asynchronously reported …": the stack may not be where it
    /// failed.
    pub async_hint: bool,
    /// Device-side assertions the runtime printed (``<file>:<line>: <function>: block: […],
    /// thread: […] Assertion `<expr>` failed.``), distinct by file, line and condition.
    pub device_asserts: Vec<DeviceAssert>,
    /// `+cu121`-style wheel tags seen on torch versions in the text (`torch 2.1.0+cu121`).
    pub torch_wheel_cuda: Vec<String>,
    /// CUDA libraries the framework could not use (missing, or another version than its
    /// build's), where the text shows a GPU it would have run on ([`super::cuda_libs`]).
    pub library_problems: Vec<super::cuda_libs::LibraryProblem>,
    /// Library messages the text gives no ground to judge: TensorFlow's dlopen failures with
    /// no GPU shown beside them (a machine without one prints them too), JAX's CPU-only jaxlib
    /// beside a GPU (a job that imports JAX without computing with it prints it too).
    pub library_messages_not_judged: Vec<super::cuda_libs::LibraryProblem>,
    /// TensorFlow's and XLA's CUDA diagnostics found the loaded kernel module and the
    /// user-mode driver (libcuda, the "DSO") of different versions ([`kernel_dso_mismatch`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_dso_mismatch: Option<KernelDsoMismatch>,
    /// A torch extension (torchvision) refused to load because it was built for another CUDA
    /// than PyTorch ([`extension_cuda_mismatch`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extension_cuda_mismatch: Option<ExtensionCudaMismatch>,
    /// PyTorch's architecture warning quoted without the line that names the GPU: `_check_cubins`'
    /// "The current PyTorch install supports CUDA capabilities …" with no "… is not compatible
    /// with the current PyTorch installation" before it, or 2.11's `_warn_unsupported_code`
    /// advice "… to install a PyTorch release that supports one of these CUDA versions: …" with
    /// no "Found GPU… (CC)" line. `torch/cuda/__init__.py` prints either only inside the warning
    /// for a GPU that no architecture of the build runs, so the build lacks a GPU's architecture;
    /// a GPU the text names whose major the quoted list lacks is then in `incompatible_gpus`.
    pub arch_warning_unattributed: bool,
    /// Where PyTorch threw the CUDA error from, as c10's back trace under it names it
    /// ([`cuda_check_raises`]), distinct.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub raised_from: Vec<RaisedFrom>,
    /// Lines that carried one of these messages.
    pub lines: u64,
}

/// The head of the back trace c10 appends to a CUDA error: `c10/util/Exception.cpp`'s
/// `Exception raised from <function> at <file>:<line> (most recent call first):` (then
/// `c10/util/Backtrace.cpp`'s `frame #N: <symbol> + 0x… (0x… in <lib>)` lines), where the
/// file is `c10/cuda/CUDAException.cpp`: PyTorch 1.13 on routes every `C10_CUDA_CHECK` through
/// its `c10_cuda_check_implementation`, whose `TORCH_CHECK` message is the `CUDA error: …` with
/// its hints (read at pytorch/pytorch 01a6a16d). `c10::Error::what()` puts the back trace after
/// the message and a blank line, so a paste carries it as a block of its own under the error.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RaisedFrom {
    pub function: String,
    pub file: String,
    pub line: u32,
}

/// Every distinct [`RaisedFrom`] the text's back trace heads name, at most
/// [`super::MAX_ITEMS`].
pub fn cuda_check_raises(text: &str) -> Vec<RaisedFrom> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"Exception raised from (\S+) at (\S*CUDAException\.cpp):(\d+) \(most recent call first\):",
        )
        .expect("static regex")
    });
    let mut out: Vec<RaisedFrom> = Vec::new();
    for c in RE.captures_iter(text) {
        let Ok(line) = c[3].parse::<u32>() else {
            continue;
        };
        let r = RaisedFrom {
            function: super::clip(&c[1], 200),
            file: super::clip(&c[2], 300),
            line,
        };
        if !out.contains(&r) {
            out.push(r);
        }
        if out.len() >= super::MAX_ITEMS {
            break;
        }
    }
    out
}

/// TensorFlow's (and XLA's) `Diagnostician::WarnOnDsoKernelMismatch` in `cuda_diagnostics.cc`
/// (tensorflow/tensorflow `tensorflow/stream_executor/cuda/cuda_diagnostics.cc`, TF 0.x-2.12;
/// openxla/xla `xla/stream_executor/cuda/cuda_diagnostics.cc` since): after `cuInit` fails, TF
/// reads the kernel module's version from `/proc/driver/nvidia/version` and libcuda's from the
/// loaded library, and where both are known and differ logs at ERROR `kernel version <k> does
/// not match DSO version <d> -- cannot find working devices in this configuration`
/// (`DriverVersionToString`: `major.minor.patch`, `352.63.0`). Where a version could not be
/// read the same line carries the status's text instead (`kernel version not found`), which
/// says nothing of a mismatch and is not read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelDsoMismatch {
    /// The loaded kernel module's version, as TF printed it (`470.182.3`).
    pub kernel_version: String,
    /// libcuda's, the user-mode driver's (`470.223.2`).
    pub dso_version: String,
    /// The line that said so.
    pub line: String,
}

static KERNEL_DSO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bkernel version (\d{2,4}(?:\.\d{1,4}){1,3}) does not match DSO version (\d{2,4}(?:\.\d{1,4}){1,3})\b")
        .expect("static regex")
});

/// The kernel module's and libcuda's versions where TF's diagnostics line says they differ.
pub fn kernel_dso_mismatch(line: &str) -> Option<(&str, &str)> {
    if !line.contains("does not match DSO version") {
        return None;
    }
    let c = KERNEL_DSO.captures(line)?;
    let (k, d) = (c.get(1)?.as_str(), c.get(2)?.as_str());
    (k != d).then_some((k, d))
}

/// torchvision's `_check_cuda_version` (see the module's sources): the extension and PyTorch
/// were built for different CUDA versions, so the extension's ops do not load.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExtensionCudaMismatch {
    /// The extension that refused, as the message names it (`torchvision`).
    pub extension: String,
    /// The CUDA PyTorch was built for (`11.7`).
    pub torch_cuda: String,
    /// The CUDA the extension was built for (`11.8`).
    pub extension_cuda: String,
    /// The message, its line breaks folded into spaces.
    pub line: String,
}

const EXTENSION_CUDA_HEAD: &str = "Detected that PyTorch and ";

static EXTENSION_CUDA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Detected that PyTorch and (\w+) were compiled with different CUDA (?:major )?versions\. ?PyTorch has CUDA Version=(\d{1,2}\.\d{1,2}) and (\w+) has CUDA Version=(\d{1,2}\.\d{1,2})\b")
        .expect("static regex")
});

/// The first extension-versus-PyTorch CUDA mismatch `text` reports: the message from its head,
/// over at most six lines (a console wraps it; `│` frames and the spaces around line breaks
/// fold into one space), where the two versions it prints differ and the extension it names in
/// both places is the same.
pub fn extension_cuda_mismatch(text: &str) -> Option<ExtensionCudaMismatch> {
    for (at, _) in text.match_indices(EXTENSION_CUDA_HEAD) {
        let rest = &text[at..];
        let end = rest
            .char_indices()
            .filter(|(_, c)| *c == '\n')
            .nth(5)
            .map_or(rest.len(), |(i, _)| i);
        let folded = rest[..end]
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let Some(c) = EXTENSION_CUDA.captures(&folded) else {
            continue;
        };
        let (ext, t, ext2, e) = (&c[1], &c[2], &c[3], &c[4]);
        if ext != ext2 || t == e {
            continue;
        }
        let whole = c.get(0).map_or("", |m| m.as_str());
        return Some(ExtensionCudaMismatch {
            extension: ext.into(),
            torch_cuda: t.into(),
            extension_cuda: e.into(),
            line: super::clip(whole, super::MAX_TEXT),
        });
    }
    None
}

/// (runtime name, number, cudaGetErrorString text, CUresult name, category).
const CUDA_ERRORS: &[(&str, u32, &str, &str, &str)] = &[
    (
        "cudaErrorInvalidValue",
        1,
        "invalid argument",
        "CUDA_ERROR_INVALID_VALUE",
        "other",
    ),
    (
        "cudaErrorMemoryAllocation",
        2,
        "out of memory",
        "CUDA_ERROR_OUT_OF_MEMORY",
        "memory",
    ),
    (
        "cudaErrorInitializationError",
        3,
        "initialization error",
        "CUDA_ERROR_NOT_INITIALIZED",
        "driver",
    ),
    (
        "cudaErrorCudartUnloading",
        4,
        "driver shutting down",
        "CUDA_ERROR_DEINITIALIZED",
        "other",
    ),
    (
        "cudaErrorInvalidConfiguration",
        9,
        "invalid configuration argument",
        "",
        "launch",
    ),
    (
        "cudaErrorInvalidSymbol",
        13,
        "invalid device symbol",
        "",
        "other",
    ),
    (
        "cudaErrorInvalidDevicePointer",
        17,
        "invalid device pointer",
        "",
        "memory-access",
    ),
    (
        "cudaErrorStubLibrary",
        34,
        "CUDA driver is a stub library",
        "CUDA_ERROR_STUB_LIBRARY",
        "driver",
    ),
    (
        "cudaErrorInsufficientDriver",
        35,
        "CUDA driver version is insufficient for CUDA runtime version",
        "",
        "driver",
    ),
    (
        "cudaErrorCallRequiresNewerDriver",
        36,
        "API call is not supported in the installed CUDA driver",
        "",
        "driver",
    ),
    (
        "cudaErrorDevicesUnavailable",
        46,
        "CUDA-capable device(s) is/are busy or unavailable",
        "CUDA_ERROR_DEVICES_UNAVAILABLE",
        "device-unavailable",
    ),
    (
        "cudaErrorInvalidDeviceFunction",
        98,
        "invalid device function",
        "",
        "arch",
    ),
    (
        "cudaErrorNoDevice",
        100,
        "no CUDA-capable device is detected",
        "CUDA_ERROR_NO_DEVICE",
        "device-unavailable",
    ),
    (
        "cudaErrorInvalidDevice",
        101,
        "invalid device ordinal",
        "CUDA_ERROR_INVALID_DEVICE",
        "device-unavailable",
    ),
    (
        "cudaErrorInvalidKernelImage",
        200,
        "device kernel image is invalid",
        "CUDA_ERROR_INVALID_IMAGE",
        "arch",
    ),
    (
        "cudaErrorNoKernelImageForDevice",
        209,
        "no kernel image is available for execution on the device",
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        "arch",
    ),
    (
        "cudaErrorDeviceUninitialized",
        201,
        "invalid device context",
        "CUDA_ERROR_INVALID_CONTEXT",
        "other",
    ),
    (
        "cudaErrorECCUncorrectable",
        214,
        "uncorrectable ECC error encountered",
        "CUDA_ERROR_ECC_UNCORRECTABLE",
        "ecc",
    ),
    (
        "cudaErrorPeerAccessUnsupported",
        217,
        "peer access is not supported between these two devices",
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        "other",
    ),
    (
        "cudaErrorInvalidPtx",
        218,
        "a PTX JIT compilation failed",
        "CUDA_ERROR_INVALID_PTX",
        "arch",
    ),
    (
        "cudaErrorNvlinkUncorrectable",
        220,
        "uncorrectable NVLink error detected during the execution",
        "CUDA_ERROR_NVLINK_UNCORRECTABLE",
        "hardware",
    ),
    (
        "cudaErrorUnsupportedPtxVersion",
        222,
        "the provided PTX was compiled with an unsupported toolchain.",
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        "driver",
    ),
    (
        "cudaErrorSharedObjectInitFailed",
        303,
        "shared object initialization failed",
        "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
        "driver",
    ),
    (
        "cudaErrorOperatingSystem",
        304,
        "OS call failed or operation not supported on this OS",
        "CUDA_ERROR_OPERATING_SYSTEM",
        "driver",
    ),
    (
        "cudaErrorInvalidResourceHandle",
        400,
        "invalid resource handle",
        "CUDA_ERROR_INVALID_HANDLE",
        "other",
    ),
    (
        "cudaErrorSymbolNotFound",
        500,
        "named symbol not found",
        "CUDA_ERROR_NOT_FOUND",
        "driver",
    ),
    (
        "cudaErrorIllegalAddress",
        700,
        "an illegal memory access was encountered",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "memory-access",
    ),
    (
        "cudaErrorLaunchOutOfResources",
        701,
        "too many resources requested for launch",
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        "launch",
    ),
    (
        "cudaErrorLaunchTimeout",
        702,
        "the launch timed out and was terminated",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "launch",
    ),
    (
        "cudaErrorAssert",
        710,
        "device-side assert triggered",
        "CUDA_ERROR_ASSERT",
        "assert",
    ),
    (
        "cudaErrorHardwareStackError",
        714,
        "hardware stack error",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "hardware",
    ),
    (
        "cudaErrorIllegalInstruction",
        715,
        "an illegal instruction was encountered",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "memory-access",
    ),
    (
        "cudaErrorMisalignedAddress",
        716,
        "misaligned address",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "memory-access",
    ),
    (
        "cudaErrorInvalidAddressSpace",
        717,
        "operation not supported on global/shared address space",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "memory-access",
    ),
    (
        "cudaErrorInvalidPc",
        718,
        "invalid program counter",
        "CUDA_ERROR_INVALID_PC",
        "memory-access",
    ),
    (
        "cudaErrorLaunchFailure",
        719,
        "unspecified launch failure",
        "CUDA_ERROR_LAUNCH_FAILED",
        "launch",
    ),
    (
        "cudaErrorContextIsDestroyed",
        709,
        "context is destroyed",
        "CUDA_ERROR_CONTEXT_IS_DESTROYED",
        "other",
    ),
    (
        "cudaErrorNotPermitted",
        800,
        "operation not permitted",
        "CUDA_ERROR_NOT_PERMITTED",
        "other",
    ),
    (
        "cudaErrorNotSupported",
        801,
        "operation not supported",
        "CUDA_ERROR_NOT_SUPPORTED",
        "other",
    ),
    (
        "cudaErrorSystemNotReady",
        802,
        "system not yet initialized",
        "CUDA_ERROR_SYSTEM_NOT_READY",
        "driver",
    ),
    (
        "cudaErrorSystemDriverMismatch",
        803,
        "system has unsupported display driver / cuda driver combination",
        "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "driver",
    ),
    (
        "cudaErrorCompatNotSupportedOnDevice",
        804,
        "forward compatibility was attempted on non supported HW",
        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "driver",
    ),
    (
        "cudaErrorStreamCaptureUnsupported",
        900,
        "operation not permitted when stream is capturing",
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
        "other",
    ),
    (
        "cudaErrorStreamCaptureInvalidated",
        901,
        "operation failed due to a previous error during capture",
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
        "other",
    ),
    (
        "cudaErrorTimeout",
        909,
        "wait operation timed out",
        "CUDA_ERROR_TIMEOUT",
        "other",
    ),
    (
        "cudaErrorUnknown",
        999,
        "unknown error",
        "CUDA_ERROR_UNKNOWN",
        "device-unavailable",
    ),
];

fn by_message(
    m: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    let m = m.trim().trim_end_matches('.');
    CUDA_ERRORS
        .iter()
        .find(|e| e.2.trim_end_matches('.').eq_ignore_ascii_case(m))
}

fn by_name(
    n: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    CUDA_ERRORS
        .iter()
        .find(|e| e.0 == n || (!e.3.is_empty() && e.3 == n))
}

/// `c10/cuda/CUDAFunctions.cpp`'s text for cudaGetDeviceCount's `cudaErrorUnknown`, the part
/// before its example (see `parse_cuda_runtime_log`).
const UNKNOWN_ERROR_ENV: &str =
    "CUDA unknown error - this may be due to an incorrectly set up environment";

/// The heads under which torch delivers [`UNKNOWN_ERROR_ENV`]: `_cuda_init()` raises the
/// `TORCH_CHECK` of `device_count_impl` as a Python `RuntimeError` (`torch/cuda/__init__.py`,
/// `_lazy_init`), and `device_count()` warns it behind "CUDA initialization: ".
const UNKNOWN_ERROR_HEADS: [&str; 2] = [
    "RuntimeError: CUDA unknown error",
    "CUDA initialization: CUDA unknown error",
];

/// The line holds `c10/cuda/CUDAFunctions.cpp`'s cudaErrorUnknown message: whole
/// ([`UNKNOWN_ERROR_ENV`]), or cut after its fixed head where a poster quoted only the
/// exception (``the same `RuntimeError: CUDA unknown error` at `torch._C._cuda_init()` `` in
/// a comment, h127: tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark#6): one of
/// [`UNKNOWN_ERROR_HEADS`] not followed by a letter, digit or `_` (no other torch or CUDA
/// message starts with these words; `CUDA error: unknown error` is the runtime's own wording,
/// read by name).
fn unknown_error_env(line: &str) -> bool {
    if line.contains(UNKNOWN_ERROR_ENV) {
        return true;
    }
    UNKNOWN_ERROR_HEADS.iter().any(|head| {
        line.match_indices(head).any(|(at, _)| {
            line[at + head.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_')
        })
    })
}

/// The words of the driver-too-old message from its first one a line test recognises on; a
/// `found version` reading follows them.
const TOO_OLD_WORDS: &str = "NVIDIA driver on your system is too old (found version";

/// The text with each line break that falls inside the driver-too-old message made a space
/// again. `c10/cuda/CUDAFunctions.cpp` (`device_count_impl`, read at 01a6a16d) and 1.x's
/// `_check_driver` (`torch/cuda/__init__.py`) print "The NVIDIA driver on your system is too
/// old (found version N)" on one line; a paste wrapped by a terminal, an editor or its poster
/// breaks it between two of those fixed words ("The NVIDIA driver on your\nsystem is too old
/// (found version 12040). ...", andimarafioti/faster-qwen3-tts#113). A break is mended only
/// where one line ends with the message's first words (from `NVIDIA` on) and the next begins
/// with the rest, so no other pair of lines is joined; anything else is read as before.
pub(crate) fn rejoin_too_old(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NVIDIA") || !text.contains("too old") {
        return std::borrow::Cow::Borrowed(text);
    }
    let words: Vec<&str> = TOO_OLD_WORDS.split(' ').collect();
    let breaks_inside = |line: &str, next: &str| {
        let (line, next) = (line.trim_end(), next.trim_start());
        (1..words.len()).any(|k| {
            line.ends_with(&words[..k].join(" ")) && next.starts_with(&words[k..].join(" "))
        })
    };
    let lines: Vec<&str> = text.lines().collect();
    if !lines.windows(2).any(|w| breaks_inside(w[0], w[1])) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        if i + 1 < lines.len() && breaks_inside(lines[i], lines[i + 1]) {
            out.push_str(lines[i].trim_end());
            out.push(' ');
            out.push_str(lines[i + 1].trim_start());
            i += 2;
        } else {
            out.push_str(lines[i]);
            i += 1;
        }
        out.push('\n');
    }
    std::borrow::Cow::Owned(out)
}

static TOO_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NVIDIA driver on your system is too old \(found version (\d{1,6})\)")
        .expect("static regex")
});
// PhysX's `CudaCtxMgr::safeDelayImport` (3.4/4.x and 5 wordings; see the module's head)
static PHYSX_DRIVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bCUDA driver version is (\d{4,6}), expected (?:driver version is )?at least (\d{4,6})\.",
    )
    .expect("static regex")
});

/// PhysX's driver check in `line`: (the driver's CUDA code, the code PhysX needs), where the
/// first is below the second (PhysX prints it only then; other numbers are not its message).
fn physx_driver_check(line: &str) -> Option<(u32, u32)> {
    let c = PHYSX_DRIVER.captures(line)?;
    let found: u32 = c[1].parse().ok()?;
    let required: u32 = c[2].parse().ok()?;
    (found < required).then_some((found, required))
}
/// The end of a runtime text that a character outside ASCII makes (an optional `.` first): the
/// runtime's texts are ASCII, the prose of a post in another script is not (see [`CUDA_ERROR`]).
const NON_ASCII_END: &str = r"\.?[^\x00-\x7F]";

// `CUDA error: <message>`, the message ending at the first `.`-and-space, newline or `(`-hint,
// or at the closing back or double quote of a user who quoted the line in prose ("stops with
// error `CUDA error: out of memory` even tho ...", ultralytics/ultralytics#14367). PyTorch 2.8+
// follows the message with a line of its own, "Search for `<cudaGetErrorName>' in
// https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more
// information." (`c10_cuda_check_implementation`, c10/cuda/CUDAException.cpp); a CI summary or a
// log that joins the lines with spaces puts it on the message's line
// (flashinfer-ai/flashinfer#4957: "unspecified launch failure Search for `cudaErrorLaunchFailure'
// in …"), where it ends the message too.
//
// Every `cudaGetErrorString` text is ASCII (the runtime's table in `CUDA_ERRORS`, from
// `driver_types.h` and the Runtime API reference), so a character outside ASCII ends the
// message wherever it stands: a post in Chinese, Japanese or Korean goes on right after the
// error, without a space, behind full-width punctuation (`an illegal memory access was
// encountered，已经训练了好几轮了`, bubbliiiing/yolo3-pytorch#83; `…encountered，这是什么原因所致呀`,
// AstarLight/Lets_OCR#77; `device-side assert triggered。`) or a curly quote. [`NON_ASCII_END`]
// is the same stop for the other wrappers' patterns below.
static CUDA_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"CUDA error: ([A-Za-z][A-Za-z0-9 ()/,'_-]{{2,120}}?)(?:\.\s|\.$|$| \(|\n| Search for `|CUDA kernel|\.?[`"]|{NON_ASCII_END})"#,
    ))
    .expect("static regex")
});
// Another program's wrapper: `CUDA error <n>: `, `CUDA error in <op>: `, `CUDA error at
// <file>:<line>: `, `cuda error: ` (any case), then a text that ends where a `: <file>: <line>`
// location, a `(`, a sentence end or the line end follows. Named only where the text is the
// runtime's (`by_message`).
//
// PyTorch's own driver-API check reads the same way: `C10_CUDA_DRIVER_CHECK` in
// `c10/cuda/driver_api.h` and `AT_CUDA_DRIVER_CHECK` in `aten/src/ATen/cuda/Exceptions.h`
// (pytorch/pytorch, 2.1-2.x; the expandable-segments allocator maps memory through
// `cuMemCreate`/`cuMemMap` with it) raise `CUDA driver error: <cuGetErrorString>`, whose texts
// for the errors both APIs share are the runtime's (`out of memory`, `an illegal memory access
// was encountered`); read, like the others, only where the text is in the table.
//
// ggml's CUDA backend (llama.cpp / ollama, `ggml/src/ggml-cuda/ggml-cuda.cu`
// `ggml_cuda_error`) prints `CUDA error: <cudaGetErrorString>` then `  current device: %d, in
// function %s at %s:%d` and a `GGML_ASSERT`; ollama relays the runner's last line inside its
// API's JSON error, where the line end is the two characters `\n`. So the text may end at a
// backslash (a JSON or repr escape: no `cudaGetErrorString` text holds one), and a retyped
// paste may drop the space after the colon (`start:CUDA error:uncorrectable ECC error
// encountered\`, ollama#4226); both read only where the text is the runtime's.
//
// The launch check that CUDA tutorials and kernels copy after a `<<<…>>>` launch,
// `printf("CUDA kernel launch error: %s\n", cudaGetErrorString(err))` after
// `cudaGetLastError()` or `cudaDeviceSynchronize()` (mirage-project's persistent-kernel
// launchers, many torch extensions; `fprintf(stderr, "CUDA Kernel Launch Error: %s\n", …)` in
// others; the search tool's `find_string` of the literal, December 2026), prints the runtime's
// text behind `CUDA kernel launch error: ` (h134: RyanKor/cuda-programming's note, `the provided
// PTX was compiled with an unsupported toolchain.` from a hello-world built by nvcc 12.6 on an
// older driver); read, as the others, only where the text is the runtime's.
//
// TensorRT-LLM's `check` (NVIDIA/TensorRT-LLM `cpp/include/tensorrt_llm/common/cudaUtils.h`, the
// stored text read by the search tool, id 15816991480; behind `TLLM_CUDA_CHECK` and
// `check_cuda_error`) throws `[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s`, the failed
// call as written (`#val`, with its arguments) and `_cudaGetErrorEnum`, which is
// `cudaGetErrorString`; TensorRT-Edge-LLM's `_checkCuda` (`cpp/common/checkMacros.h`, ids
// 21659714861 and 69811666809) throws the same `CUDA runtime error in %s: %s` as a
// `std::runtime_error`, which libstdc++'s terminate handler prints after `what(): `
// (NVIDIA/TensorRT-Edge-LLM#50: `CUDA runtime error in cudaFreeHost(data): an illegal memory
// access was encountered`). So `runtime ` may stand before `error`, and the call after `in`
// may carry its parenthesised arguments (calls among them); read, as the others, only where
// the text is the runtime's.
static QUALIFIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\bcuda (?:driver |runtime |(?:kernel )?launch )?error(?: \d{{1,4}}| in [A-Za-z_:][\w:.<>-]{{0,60}}(?:\([^\n]{{0,160}}?\))?| at \S{{1,200}})?: ?([A-Za-z][A-Za-z0-9 /,'_-]{{2,120}}?)\s*(?::\s|:$|\.\s|\.$|$|\(|\\|{NON_ASCII_END})",
    ))
    .expect("static regex")
});

// CTranslate2's `CUDA_CHECK` (OpenNMT/CTranslate2 `include/ctranslate2/cuda/utils.h`, 1.x-4.x,
// the engine of faster-whisper, whisperX and whisper-ctranslate2): `THROW_RUNTIME_ERROR("CUDA
// failed with error " + std::string(cudaGetErrorString(code)))`, raised in Python as
// `RuntimeError: CUDA failed with error out of memory`; its predecessor OpenNMT/CTranslate's
// `cudaAssert` appends ` at <file>:<line>`. cumm's tensorview, under spconv 2.x (its `defs.h`,
// the stored text read by the search tool, id 513232988), prints `cuda failed with error <N>
// <cudaGetErrorString>. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.`
// (`TV_CUDART_RESULT_CHECK`) and `cuda execution failed with error <N> <cudaGetErrorString>`
// (`TV_CHECK_CUDA_ERR_V2`; its older `TV_CHECK_CUDA_ERR`, spconv 1.x's, prints the number
// alone, which is not read: the enum's numbers changed between CUDA releases). Named only where
// the text is the runtime's and a number, where printed, agrees with it.
static FAILED_WITH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\b(?:CUDA|cuda) (?:execution )?failed with error (?:(\d{{1,4}}) )?([A-Za-z][A-Za-z0-9 /,'_-]{{1,120}}?)\s*(?:\.\s|\.$| at \S+:\d+|$|{NON_ASCII_END})",
    ))
    .expect("static regex")
});

// FlashInfer's kernel launchers (flashinfer-ai/flashinfer `csrc/batch_prefill.cu`,
// `batch_decode.cu`, `batch_mla_*.cu`, `sampling.cu` and their JIT templates; the stored texts
// read by the search tool, ids 66166757074, 65735930444 and 1358158075) check the launch's
// `cudaError_t` with `TVM_FFI_ICHECK(status == cudaSuccess) << "<Op> failed with error " <<
// cudaGetErrorString(status)` (before the TVM-FFI port `TORCH_CHECK(status == cudaSuccess,
// "<Op> failed with error ", cudaGetErrorString(status))` and `CHECK(...)`), so the message is
// `Check failed: (status == cudaSuccess) is false: BatchPrefillWithPagedKVCache failed with
// error an illegal memory access was encountered` or `RuntimeError: <Op> failed with error
// <text>`, the check's head often on the line before (vLLM#37754). The op is one of the
// library's CamelCase names of two words or more (`BatchPrefillWithPagedKVCache`,
// `SamplingFromProbs`), so a program's `Command failed with error …` is not one; named only
// where the text is the runtime's.
static OP_FAILED_WITH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+ failed with error ([A-Za-z][A-Za-z0-9 /,'_-]{{1,120}}?)\s*(?:\.\s|\.$|$|{NON_ASCII_END})",
    ))
    .expect("static regex")
});

/// The table's error a `CUDA failed with error <text>` (or FlashInfer's `<Op> failed with
/// error <text>`) names.
fn failed_with(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    if !line.contains(" failed with error ") {
        return None;
    }
    FAILED_WITH
        .captures_iter(line)
        .find_map(|c| {
            by_message(c[2].trim()).filter(|e| {
                c.get(1)
                    .is_none_or(|n| n.as_str().parse::<u32>().ok() == Some(e.1))
            })
        })
        .or_else(|| {
            OP_FAILED_WITH
                .captures_iter(line)
                .find_map(|c| by_message(c[1].trim()))
        })
}

// FAISS's `CUDA_VERIFY` (facebookresearch/faiss `faiss/gpu/utils/DeviceUtils.h`, the stored text
// read by the search tool, id 43683096934; other projects copy the macro, ids 271241413 and
// 17282311516): `FAISS_ASSERT_FMT(err__ ==
// cudaSuccess, "CUDA error %d %s", (int)err__, cudaGetErrorString(err__))`, which
// `FAISS_ASSERT_FMT` (`faiss/impl/FaissAssert.h`, read at 14151f08) prints to stderr as `Faiss
// assertion 'err__ == cudaSuccess' failed in <function> at <file>:<line>; details: CUDA error
// 700 an illegal memory access was encountered` before `abort()` (NVIDIA/cuvs#2490, a CAGRA
// search through FAISS on a Blackwell RTX 4500). Number and text stand with no colon between them, so
// they are read only where both agree with the runtime's table, as `Error <N>: <text>` is.
static CUDA_ERROR_N_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\bCUDA error (\d{{1,4}}) ([A-Za-z][A-Za-z0-9 /,'_-]{{2,120}}?)\s*(?:\.\s|\.$|$|{NON_ASCII_END})"
    ))
    .expect("static regex")
});

/// The table's error a FAISS `CUDA error <N> <text>` names, number and text agreeing.
fn cuda_error_n_text(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    if !line.contains("CUDA error ") {
        return None;
    }
    CUDA_ERROR_N_TEXT.captures_iter(line).find_map(|c| {
        let code: u32 = c[1].parse().ok()?;
        by_message(c[2].trim()).filter(|e| e.1 == code)
    })
}

// The hand-written check that names the failed call and then `cudaGetErrorString`'s text:
// `"<call> failed: " + cudaGetErrorString(err)`. LichtFeld Studio's CUDA memory pool
// (MrNeRF/LichtFeld-Studio `src/core/tensor/internal/memory_pool.hpp`, the stored text read by
// the search tool, id 62507713247, `CudaMemoryPool`: `LOG_ERROR(std::string("cudaGetDevice
// failed: ") + cudaGetErrorString(err))`, `"[MEM] cudaMalloc failed: " + … + ", trimming..."`,
// `"[MEM] cudaMalloc retry failed: "`, `"cudaMallocAsync failed for bucket " + N + ": "`) logs
// `cudaMallocAsync failed: an illegal memory access was encountered` when a sticky error of an
// earlier kernel surfaces at the next allocation (MrNeRF/LichtFeld-Studio#649); the same literal
// is in other allocators the search tool's `find_string` found (`"cudaMallocAsync failed: " +
// std::string(cudaGetErrorString(r))`, ids 70607109075 and 7027072664; `CudaBuffer:
// cudaMallocAsync failed: `, id 58268065113; `CudaArena: cudaMallocAsync failed: `, id
// 55590017869). The call is a runtime or driver API name (`cuda` or `cu` and a capital), with
// its arguments or a `for <what>` where the program adds them; read only where the text after
// the colon is the runtime's, so a program's own `cudaFoo failed: bad size` names nothing.
static CALL_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:cuda|cu)[A-Z][A-Za-z0-9_]{1,40}(?:\([^()\n]{0,120}\))? (?:retry )?failed(?: for [^:\n]{1,80}?)?: ?([A-Za-z][A-Za-z0-9 /,'_-]{2,120}?)\s*(?:,\s|\.\s|\.$|$|\(|\\)",
    )
    .expect("static regex")
});

/// The table's error a `<cudaCall> failed: <text>` names, if its text is the runtime's.
fn call_failed(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    if !line.contains("failed") {
        return None;
    }
    CALL_FAILED
        .captures_iter(line)
        .find_map(|c| by_message(c[1].trim()))
}

// A `CUresult` printed by its number because `cuGetErrorName` did not know it (see the module
// doc): TF's `failed call to cuInit: UNKNOWN ERROR (N)`, XLA's `CUDA error: <detail>: UNKNOWN
// ERROR (N)` and jaxlib's `failed: Unknown CUDA error N; cuGetErrorName failed`. Only in these
// producers' words: a bare `UNKNOWN ERROR (N)` says nothing of CUDA.
static UNNAMED_CURESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:failed call to cuInit|CUDA error: [A-Za-z][A-Za-z0-9 _()]{0,80}?): UNKNOWN ERROR \((\d{1,4})\)|\bfailed: Unknown CUDA error (\d{1,4}); cuGetErrorName failed",
    )
    .expect("static regex")
});

/// The `CUresult` number an unnamed-result line carries.
fn unnamed_curesult(line: &str) -> Option<u32> {
    if !line.contains("UNKNOWN ERROR (") && !line.contains("Unknown CUDA error ") {
        return None;
    }
    let c = UNNAMED_CURESULT.captures(line)?;
    c.get(1).or(c.get(2))?.as_str().parse().ok()
}

/// The table's error with that `CUresult` number: only entries that name a `CUresult`, whose
/// number is the runtime's.
fn by_curesult(
    n: u32,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    CUDA_ERRORS.iter().find(|e| e.1 == n && !e.3.is_empty())
}

/// The table's error a qualified `CUDA error …: <text>` names, if its text is the runtime's.
fn qualified(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    QUALIFIED
        .captures_iter(line)
        .find_map(|c| by_message(c[1].trim()))
}

// A `cudaGetErrorString` text of four words or more that a post quotes on its own (`I get an
// "uncorrectable ECC error encountered" after 600 iterations`): the runtime's words, whatever
// program printed them, between straight, curly or back quotes. Shorter texts (`out of memory`,
// `unknown error`) say too little alone and are read only behind a producer's prefix.
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    let alt: Vec<String> = quotable().map(regex::escape).collect();
    Regex::new(&format!("[\"“'`](?:{})\\.?[\"”'`]", alt.join("|"))).expect("escaped literals")
});

// c10/cuda/CUDAFunctions.cpp's `Error <N>: <cudaGetErrorString>` after "Unexpected error from
// cudaGetDeviceCount()" (the line may wrap before it); read only where number and text agree
// with the runtime's table
static ERROR_N: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\bError (\d{1,4}): ([A-Za-z][^()"“”'`\n]{2,120})"#).expect("static regex")
});

// the CUDA samples' `(error code %s)!` after a failed call, the text being cudaGetErrorString's
// (NVIDIA/cuda-samples `Samples/0_Introduction/vectorAdd/vectorAdd.cu`: `fprintf(stderr,
// "Failed to allocate device vector A (error code %s)!\n", cudaGetErrorString(err))`, and the
// same in every sample of its kind; the GPU operator's cuda-validator runs vectorAdd); read only
// where the text is the runtime's
static SAMPLE_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\(error code ([A-Za-z][^()\n]{1,120})\)!").expect("static regex")
});

/// The table's error a CUDA sample's `(error code <text>)!` names.
fn sample_error(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    SAMPLE_ERROR
        .captures_iter(line)
        .find_map(|c| by_message(c[1].trim()))
}

// gpu-burn's checks (wilicc/gpu-burn `gpu_burn-drv.cpp`, `_checkError`, read at 3ead140; this
// form since 564a9a6, 2023-04-13, "Improve status code to string handling"): a failed driver
// call throws `std::runtime_error` with `Error (<file>:<line>): <cuGetErrorString>`, or
// `Error in <desc> (<file>:<line>): <cuGetErrorString>` where the call names what it did
// (`Error in load module (gpu_burn-drv.cpp:244): …`); each worker process that fails prints it
// behind the C++ runtime's `terminate called after throwing an instance of
// 'std::runtime_error'` as `  what():  Error (…): …`, and the launcher as `Couldn't init a GPU
// test: Error (…): …` (wilicc/gpu-burn#92: `Error (gpu_burn-drv.cpp:298): system not yet
// initialized` on every GPU of an 8x H100 80GB HBM3 node). `cuGetErrorString`'s texts are the
// runtime's (the table below); its cuBLAS twin prints `cublasGetStatusString`'s, which the table
// does not hold and so names nothing. The older form, `Error: CUDA_ERROR_X` and `Error in
// "<desc>": CUDA_ERROR_X`, is read by the `CUDA_ERROR_` names.
static GPU_BURN_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bError(?: in [^()\n]{1,80}?)? \([\w./\\-]{1,200}\.(?:cpp|cu|cc|cxx|c|h|hpp):\d{1,6}\): ([A-Za-z][^\n]{1,120}?)\s*$",
    )
    .expect("static regex")
});

/// The table's error a gpu-burn `Error (<file>:<line>): <text>` names, if its text is the
/// runtime's.
fn gpu_burn_error(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    if !line.contains("Error") {
        return None;
    }
    let c = GPU_BURN_ERROR.captures(line)?;
    by_message(c[1].trim())
}

/// The CUDA samples' `deviceQuery` on failure (NVIDIA/cuda-samples
/// `Samples/1_Utilities/deviceQuery/deviceQuery.cpp`, `main`, read at c94ff366, CUDA 13.0
/// samples; the same since the CUDA 5 samples, and `bandwidthTest.cu`'s `runTest` at ceab6e8b):
/// `printf("cudaGetDeviceCount returned %d\n-> %s\n", error_id, cudaGetErrorString(error_id))`,
/// then `Result = FAIL`. The number alone on its line: N of `cudaGetDeviceCount returned N`.
fn device_query_count(line: &str) -> Option<u32> {
    let n = line.trim().strip_prefix("cudaGetDeviceCount returned ")?;
    if n.is_empty() || n.len() > 4 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The table's error for deviceQuery's `-> <text>` line after `cudaGetDeviceCount returned N`:
/// read only where the text is the runtime's own and its number N, so the short texts
/// (`-> unknown error`) that say too little alone are named here, in the producer's pair.
fn device_query_error(
    code: u32,
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    let text = line.trim().strip_prefix("-> ")?;
    by_message(text).filter(|e| e.1 == code)
}

// A check that printed the runtime's number beside `cudaSuccess`'s 0 and then its text:
//
// - glog's `CHECK_EQ(error, cudaSuccess) << " " << cudaGetErrorString(error)`, Caffe's
//   `CUDA_CHECK` (BVLC/caffe `include/caffe/util/device_alternate.hpp`, read at 1beb9ac, and
//   the copies of it in MXNet's operators and many CUDA projects): glog prints `Check failed:
//   error == cudaSuccess (N vs. 0) ` and the streamed ` <text>`, so two spaces before the text
//   (`F0718 15:20:34.923629 16833 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs.
//   0)  out of memory`);
// - OpenPose's `cudaCheck` (CMU-Perceptual-Computing-Lab/openpose `src/openpose/gpu/cuda.cpp`):
//   `error("Cuda check failed (" + std::to_string(errorCode) + " vs. " +
//   std::to_string(cudaSuccess) + "): " + cudaGetErrorString(errorCode), …)`, its oldest
//   copy without the space after the colon.
//
// Read only where number and text agree with the runtime's table, as `Error <N>: <text>` is.
static CHECK_VS_0: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:Check failed: [A-Za-z_][\w.>()\[\]-]{0,60} == cudaSuccess|Cuda check failed) \((\d{1,4}) vs\. 0\)(?::\s*|\s+)([A-Za-z][^\n]{1,120}?)\s*$",
    )
    .expect("static regex")
});

/// The table's error a check's `(N vs. 0) <text>` names, number and text agreeing.
fn check_vs_0(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    if !line.contains(" vs. 0)") {
        return None;
    }
    let c = CHECK_VS_0.captures(line)?;
    let code: u32 = c[1].parse().ok()?;
    let text = c[2].trim();
    by_message(text).filter(|e| e.1 == code).or_else(|| {
        // the check's line retold inside a sentence of a question (a Stack Overflow question
        // machine-translated into Chinese, h142: `我知道Check failed: error == cudaSuccess (2
        // vs. 0) out of memory我得到的错误是…`): the runtime's text for that number, then
        // text that is not an ASCII letter or digit (the sentence's own script, punctuation)
        CUDA_ERRORS.iter().find(|e| {
            e.1 == code
                && text.len() > e.2.len()
                && text.is_char_boundary(e.2.len())
                && text[..e.2.len()].eq_ignore_ascii_case(e.2)
                && text[e.2.len()..]
                    .chars()
                    .next()
                    .is_some_and(|ch| !ch.is_ascii() && ch.is_alphabetic())
        })
    })
}

/// The table's error for a `Error <N>: <text>` whose number and text agree.
fn error_n(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    let c = ERROR_N.captures(line)?;
    let code: u32 = c[1].parse().ok()?;
    let text = c[2].trim();
    by_message(text)
        .filter(|e| e.1 == code)
        // a program that re-raises the message may append to it (stable-diffusion-webui's
        // `... Error 500: named symbol not found: str`, AbdBarho/stable-diffusion-webui-docker
        // #694): the runtime's text followed by a non-word character, the number agreeing
        .or_else(|| {
            CUDA_ERRORS.iter().find(|e| {
                e.1 == code
                    && text.len() > e.2.len()
                    && text.is_char_boundary(e.2.len())
                    && text[..e.2.len()].eq_ignore_ascii_case(e.2)
                    && !text[e.2.len()..].starts_with(|ch: char| ch.is_alphanumeric())
            })
        })
}

fn quotable() -> impl Iterator<Item = &'static str> {
    CUDA_ERRORS
        .iter()
        .map(|e| e.2)
        .filter(|m| m.split_whitespace().count() >= 4)
}

// NCCL's and other tools' `Cuda failure 999 'unknown error'` / `Cuda failure 'out of memory'`,
// and nccl-tests' `host: Test CUDA failure common.cu:941 'system not yet initialized'`
static CUDA_FAILURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:Cuda failure (?:\d+ )?|Test CUDA failure \S+:\d+ )'([^']{2,120})'")
        .expect("static regex")
});
// THC's `THCudaCheck FAIL file=F line=L error=N : message` (PyTorch 0.x-1.x, Lua Torch)
static THC_FAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"THCudaCheck FAIL file=(.{1,300}?) line=(\d{1,7}) error=(\d{1,4}) : (.{1,120}?)\s*$",
    )
    .expect("static regex")
});
// `_THError`'s `cuda runtime error (N) : message at FILE:LINE`
static THC_RUNTIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"cuda runtime error \((\d{1,4})\) : (.{1,120}?)(?: at \S+:\d+)?\s*$")
        .expect("static regex")
});
// cutil's checks (see the module's head): `Cuda error in file '<f>' in line <n> : <text>.`,
// `Cuda error: <own message> in file '<f>' in line <n> : <text>.`; the quotes around the file
// may be curled by a forum, the text ends at cutil's closing `.` (before a quote a poster put
// round the line) or the line's end
static CUTIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\bCuda error(?:: .{1,200}?)? in file ['‘’`].{1,300}?['‘’`] in line \d{1,7} : ([A-Za-z][^\n]{1,120}?)\.?\s*(?:[”"'’`]|$)"#,
    )
    .expect("static regex")
});
// cutil_inline_runtime.h's `<file>(<line>) : cudaSafeCall() Runtime API error <n>: <text>.`
static CUTIL_SAFE_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"cudaSafeCall\(\) Runtime API error (\d{1,4}): ([A-Za-z][^\n]{1,120}?)\.?\s*$")
        .expect("static regex")
});
// `CU_SAFE_CALL`'s `Cuda driver error <hex CUresult> in file '<f>' in line <n>.`
static CUTIL_DRIVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bCuda driver error ([0-9a-fA-F]{1,4}) in file ['‘’`].{1,300}?['‘’`] in line \d{1,7}",
    )
    .expect("static regex")
});

/// The error a cutil check names on `line`: the table's entry where the text (or, for
/// `CU_SAFE_CALL`, the hex `CUresult`) is known, else the text as printed (the format says it is
/// `cudaGetErrorString`'s). `(name, code, message, category)`.
fn cutil_error(line: &str) -> Option<(String, Option<u32>, Option<&'static str>, &'static str)> {
    let found = CUTIL
        .captures(line)
        .and_then(|c| Some((None, c.get(1)?.as_str())))
        .or_else(|| {
            let c = CUTIL_SAFE_CALL.captures(line)?;
            Some((c[1].parse::<u32>().ok(), c.get(2)?.as_str()))
        });
    if let Some((num, text)) = found {
        let text = text.trim();
        return Some(match by_message(text) {
            Some(e) => (e.0.to_string(), num.or(Some(e.1)), Some(e.2), e.4),
            None => (super::clip(text, 120), num, None, "other"),
        });
    }
    let c = CUTIL_DRIVER.captures(line)?;
    let n = u32::from_str_radix(&c[1], 16).ok()?;
    by_curesult(n).map(|e| (e.0.to_string(), Some(e.1), Some(e.2), e.4))
}

// Enoki's CUDA memory pool (mitsuba-renderer/enoki `src/cuda/jit.cu`, the stored text read by
// the search tool, id 578540746; the array library of Mitsuba 2 and psdr-cuda): `cuda_malloc`,
// `cuda_managed_malloc` and `cuda_host_malloc` retry a failed `cudaMalloc` / `cudaMallocManaged`
// / `cudaMallocHost` once after `cuda_sync()` and `cuda_malloc_trim()` (its free lists given
// back), then `throw std::runtime_error("<fn>(): out of memory!")`, raised in Python as
// `RuntimeError: cuda_malloc(): out of memory!` (Mitsuba 2's docs: "The rendering or autodiff
// graph exhausted your GPU's memory"): the runtime's cudaErrorMemoryAllocation that survived
// the pool's own release and retry.
static ENOKI_MALLOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bcuda_(?:managed_|host_)?malloc\(\): out of memory!").expect("static regex")
});

/// True when `line` holds Enoki's allocation failure.
fn enoki_malloc_failed(line: &str) -> bool {
    line.contains("malloc(): out of memory!") && ENOKI_MALLOC.is_match(line)
}

// ND4J's CUDA backend (deeplearning4j, Deeplearning4j's and SameDiff's arrays; `nd4j-cuda`
// `org.nd4j.jita.memory.CudaMemoryManager.allocate`, the stored text read by the search tool, id
// 738196383): a device allocation calls libnd4j's `NativeOps::mallocDevice` (id 2403541552),
// which returns a null pointer when its `cudaMalloc` fails, and the manager throws
// `RuntimeException("Failed to allocate " + bytes + " bytes from DEVICE [" + device + "]
// memory")`: cudaMalloc's failure, out of memory (a context broken by an earlier error fails
// every later call before this one). The cuDNN helper's `Cannot allocate N bytes of device
// memory (CUDA error = 2), proceeding with host memory` is a fallback that carried on, as
// TensorFlow's retried allocations are (see `an_allocators_own_oom_report_is_not_a_cuda_error`),
// and is not read.
static ND4J_DEVICE_ALLOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bFailed to allocate \d+ bytes from DEVICE \[\d+\] memory").expect("static regex")
});

/// True when `line` holds ND4J's failed device allocation.
fn nd4j_device_alloc_failed(line: &str) -> bool {
    line.contains(" bytes from DEVICE [") && ND4J_DEVICE_ALLOC.is_match(line)
}

// mallocMC's (and ScatterAlloc's, whose code it carries) `CUDA::error` (`mallocMC_utils.hpp`,
// read in ComputationalRadiationPhysics/picongpu's copy at 2acd8a20 and alpaka-group/mallocMC's,
// `genErrorString`: `msg << file << '(' << line << "): error: " << cudaGetErrorString(error)`),
// thrown by `MALLOCMC_CUDA_CHECKED_CALL` around the reserve pool's `cudaMalloc`
// (`ReservePoolPolicies::SimpleCudaMalloc::setMemPool`); uncaught, libstdc++'s terminate handler
// prints `terminate called after throwing an instance of 'CUDA::error'` and `  what():  ` before
// the message, which a terminal or a post may wrap after `(<line>):`. Read where the file is a
// C/C++/CUDA source and the text after `error: ` is one of the runtime's own strings (the table),
// so a compiler's `f.cu(12): error: identifier "x" is undefined` names nothing.
static CPP_CUDA_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\.(?:c|cc|cpp|cxx|h|hh|hpp|hxx|cu|cuh|inl)\(\d{1,7}\):(?: ?error: ([A-Za-z][^\n]{1,120}?))?\s*$",
    )
    .expect("static regex")
});
/// The exception's class as libstdc++'s terminate handler names it.
const CUDA_ERROR_THROWN: &str = "terminate called after throwing an instance of 'CUDA::error'";

/// The runtime error a `<file>(<line>): error: <text>` line names; `Some(None)` for a line that
/// ends at `(<line>):`, whose text a wrapped paste carries on the next line.
#[allow(clippy::type_complexity)]
fn cpp_cuda_error(
    line: &str,
) -> Option<Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)>> {
    if !line.contains("):") {
        return None;
    }
    let c = CPP_CUDA_ERROR.captures(line)?;
    match c.get(1) {
        Some(t) => by_message(t.as_str()).map(Some),
        None => Some(None),
    }
}

/// The runtime error the second half of a wrapped `CUDA::error` message names (`error: <text>`
/// alone on the line after `<file>(<line>):`).
fn wrapped_cpp_cuda_error(
    line: &str,
) -> Option<&'static (&'static str, u32, &'static str, &'static str, &'static str)> {
    by_message(line.trim().strip_prefix("error: ")?)
}

static NAMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(cudaError[A-Z][A-Za-z]+|CUDA_ERROR_[A-Z_]+|CUBLAS_STATUS_[A-Z_]+|CUDNN_STATUS_[A-Z_]+)\b")
        .expect("static regex")
});
static INCOMPATIBLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\S.*?) with CUDA capability sm_(\d{2,3}) is not compatible with the current PyTorch installation")
        .expect("static regex")
});
static SUPPORTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"The current PyTorch install supports CUDA capabilities ((?:(?:sm|compute)_\d{2,3}[a-z]?\s*)+)")
        .expect("static regex")
});
/// The advice line ending torch 2.11's `_warn_unsupported_code` (see the module's sources):
/// "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a
/// PyTorch release that supports one of these CUDA versions: 12.6, 12.8", appended only where a
/// release of its `PYTORCH_RELEASES_CODE_CC` runs the GPU, inside the warning `_check_capability`
/// gives only for a GPU no architecture of `get_arch_list()` runs.
const RELEASE_ADVICE: &str =
    "to install a PyTorch release that supports one of these CUDA versions: ";
static OLD_GPU: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Found GPU(\d+) (.+?) which is of cuda capability (\d+\.\d+)")
        .expect("static regex")
});
/// torch 2.11's `_warn_unsupported_code`: "Found GPU%d %s which is of compute capability (CC)
/// %d.%d." (a GPU no architecture of the build runs).
static CC_GPU: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Found GPU(\d+) (.+?) which is of compute capability \(CC\) (\d+)\.(\d+)")
        .expect("static regex")
});
/// Its list: "- %d.%d which supports hardware CC %s", one line per architecture of the build.
static CC_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)- (\d+)\.(\d+) which supports hardware CC\b").expect("static regex")
});
static MIN_CAP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"minimum cuda capability (?:that we support|supported by this library) is (\d+\.\d+)",
    )
    .expect("static regex")
});
/// torch 2.8's `_check_capability` (`incompatible_gpu_warn`): "Minimum and Maximum cuda
/// capability supported by this version of PyTorch is\n (7.0) - (12.0)", printed for a GPU below
/// the build's oldest architecture or above its newest.
static MIN_MAX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^\s*|is\s*)\((\d+\.\d+)\) - \((\d+\.\d+)\)").expect("static regex")
});
static NEEDS_NEWER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Found GPU(\d+) (.+?) which requires CUDA_VERSION >= (\d+)").expect("static regex")
});
static COMPILED_WITH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"with CUDA_VERSION (\d+)").expect("static regex"));
static WHEEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\btorch(?:==|\s+|: |-)v?\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?\+(cu\d{2,3})\b")
        .expect("static regex")
});

/// The CUDA runtime's line for a failed device-side `assert` (CUDA C++ Programming Guide,
/// "Assertion"): `<file>:<line>:<function>: block: [x,y,z], thread: [x,y,z] Assertion
/// `<expression>` failed.` The file is the first non-blank run before `:<line>:` (a log prefix
/// such as `[rank0]: ` may stand before it); the spaces around the colons are as printed; the
/// function is absent where the compiler gave none (MSVC: `Loss.cu:250: block: …`).
static DEVICE_ASSERT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(\S+?):(\d+):\s*(?:(.*?):\s*)?block:\s*\[(\d+,\s*\d+,\s*\d+)\],\s*thread:\s*\[(\d+,\s*\d+,\s*\d+)\]\s*Assertion\s*`(.*)`\s*failed",
    )
    .expect("static regex")
});

/// A device-side assertion line: (file, line, function, block, thread, condition).
fn device_assert(line: &str) -> Option<DeviceAssert> {
    if !line.contains("thread: [") || !line.contains("Assertion") {
        return None;
    }
    let c = DEVICE_ASSERT.captures(line)?;
    let squeeze = |s: &str| s.split(',').map(str::trim).collect::<Vec<_>>().join(",");
    Some(DeviceAssert {
        file: super::clip(&c[1], super::MAX_TEXT),
        line: c[2].parse().ok()?,
        function: c
            .get(3)
            .map(|f| f.as_str().trim())
            .filter(|f| !f.is_empty())
            .map(|f| super::clip(f, super::MAX_TEXT)),
        condition: super::clip(c[6].trim(), super::MAX_TEXT),
        block: squeeze(&c[4]),
        thread: squeeze(&c[5]),
        count: 1,
    })
}

/// Markers this reader recognises, for detection inside a larger paste.
/// cuda-gdb's report of a device exception (NVIDIA/cuda-gdb, read at afd75cab:
/// `gdb/cuda/cuda-exceptions.c` `cuda_exception::print_exception_name` prints `\nCUDA
/// Exception: <name>\n`, the name `gdb_signal_to_string` gives the exception's signal, and
/// gdb's stop line `… received signal CUDA_EXCEPTION_<n>, <name>.`; `include/gdb/signals.def`,
/// read at 16f99a41, names them `Lane Illegal Address`, `Warp Illegal Instruction`, `Warp
/// Out-of-range Address`, `Warp Misaligned Address`, `Warp Invalid Address Space`, `Warp Invalid
/// PC`, `Warp Hardware Stack Overflow`, `Device Illegal Address`, `Warp Assert`, `Lane Syscall
/// Error`, `Warp Illegal Address`, …; NVIDIA's lldb prints the same words as a thread's `stop
/// reason = CUDA Exception: <name>`, and newer GPUs add names of the same families, `Warp MMU
/// Fault`, `Warp Misaligned PC`). A kernel that raises one ends, and the process's next CUDA call
/// returns the runtime error the CUDA Runtime API documents for that fault
/// (`group__CUDART__TYPES`): a misaligned access `cudaErrorMisalignedAddress`, an access outside
/// any mapping `cudaErrorIllegalAddress`, an instruction of the wrong address space
/// `cudaErrorInvalidAddressSpace`, an illegal instruction `cudaErrorIllegalInstruction`, an invalid
/// PC `cudaErrorInvalidPc`, a stack overflow `cudaErrorHardwareStackError`, a device assert
/// `cudaErrorAssert`; any other device exception is the documented catch-all
/// `cudaErrorLaunchFailure` ("an exception occurred on the device while executing a kernel").
/// A line mentioning `CUDA_EXCEPTION_6` in prose or a code comment is not the debugger's.
fn cuda_gdb_exception(line: &str) -> Option<&'static str> {
    static SHOWN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?:^[\s>]*|stop reason = )CUDA Exception: ((?:Warp|Lane|Device|Cluster) [A-Za-z][A-Za-z -]*[A-Za-z]|Invalid Managed Memory Access|Non-migratable System-scoped Atomic Access)\s*$",
        )
        .expect("cuda-gdb exception regex")
    });
    static SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"received signal CUDA_EXCEPTION_\d+, ([A-Z][A-Za-z -]*[A-Za-z])\.")
            .expect("cuda-gdb signal regex")
    });
    if line.contains("//") {
        return None;
    }
    let c = SHOWN.captures(line).or_else(|| SIGNAL.captures(line))?;
    let name = c[1].to_ascii_lowercase();
    Some(if name.contains("assert") {
        "cudaErrorAssert"
    } else if name.contains("misaligned address") {
        "cudaErrorMisalignedAddress"
    } else if name.contains("invalid address space") {
        "cudaErrorInvalidAddressSpace"
    } else if name.contains("illegal address")
        || name.contains("out-of-range address")
        || name.contains("mmu fault")
    {
        "cudaErrorIllegalAddress"
    } else if name.contains("illegal instruction") {
        "cudaErrorIllegalInstruction"
    } else if name.contains("invalid pc") || name.contains("misaligned pc") {
        "cudaErrorInvalidPc"
    } else if name.contains("stack overflow") {
        "cudaErrorHardwareStackError"
    } else {
        "cudaErrorLaunchFailure"
    })
}

/// NVRTC's program-log line for an `-arch` it has no target for (see
/// [`CudaRuntimeLog::nvrtc_arch_rejected`]).
const NVRTC_ARCH_REJECTED: &str = "invalid value for --gpu-architecture (-arch)";

pub fn recognised_line(line: &str) -> bool {
    device_query_count(line).is_some()
        || line.contains(NVRTC_ARCH_REJECTED)
        || kernel_dso_mismatch(line).is_some()
        || (line.contains(EXTENSION_CUDA_HEAD) && line.contains(" were compiled with different"))
        || line.contains("NVIDIA driver on your system is too old")
        || line.contains("Found no NVIDIA driver on your system")
        || line.contains("CUDA driver version is insufficient for CUDA runtime version")
        || physx_driver_check(line).is_some()
        || line.contains("no kernel image is available for execution on the device")
        || line.contains("is not compatible with the current PyTorch installation")
        || (line.contains("The current PyTorch install supports CUDA capabilities")
            && SUPPORTS.is_match(line))
        || line.contains(RELEASE_ADVICE)
        || line.contains("CUDA error: ")
        || line.contains("CUDA driver initialization failed")
        || unknown_error_env(line)
        || (line.contains("Found GPU") && line.contains("cuda capability"))
        || (line.contains("Found GPU") && line.contains("compute capability (CC)"))
        || line.contains("CUBLAS_STATUS_")
        || line.contains("CUDNN_STATUS_")
        || line.contains("cudaError")
        || line.contains("CUDA_ERROR_")
        || line.contains("THCudaCheck FAIL")
        || line.contains("cuda runtime error (")
        || (line.contains("Cuda failure") || line.contains("Test CUDA failure"))
            && CUDA_FAILURE.is_match(line)
        || QUOTED.is_match(line)
        || error_n(line).is_some()
        || check_vs_0(line).is_some()
        || qualified(line).is_some()
        || sample_error(line).is_some()
        || gpu_burn_error(line).is_some()
        || failed_with(line).is_some()
        || cuda_error_n_text(line).is_some()
        || call_failed(line).is_some()
        || unnamed_curesult(line).is_some()
        || cuda_gdb_exception(line).is_some()
        || device_assert(line).is_some()
        || cutil_error(line).is_some()
        || enoki_malloc_failed(line)
        || nd4j_device_alloc_failed(line)
        || line.contains(CUDA_ERROR_THROWN)
        || cpp_cuda_error(line).is_some_and(|e| e.is_some())
        || super::cuda_libs::recognised_line(line)
}

/// True when some line of `text` is one of these messages.
pub fn looks_like(text: &str) -> bool {
    looks_like_in(&super::scan::Late::alone(text))
}

/// [`looks_like`] of a text whose late searches are made once ([`super::scan::Late`]).
pub(crate) fn looks_like_in(late: &super::scan::Late<'_>) -> bool {
    // a message broken inside its words is joined first, and the joined text searched; a
    // text without `too old` is never changed by the join
    if late.holds(super::scan::Set::TooOld) {
        if let std::borrow::Cow::Owned(joined) = rejoin_too_old(late.text()) {
            return super::scan::lines_with(&joined, anchors()).any(recognised_line);
        }
    }
    late.lines(super::scan::Set::CudaErrors)
        .any(recognised_line)
}

/// Phrases one of which every line [`recognised_line`] accepts holds (every phrase of its
/// tests, one of each conjunction): the text is searched for them once, not line by line.
pub(crate) fn anchors() -> &'static Regex {
    static ANCHORS: LazyLock<Regex> = LazyLock::new(|| super::scan::phrases(&anchor_phrases()));
    &ANCHORS
}

/// The phrases of [`anchors`].
pub(crate) fn anchor_phrases() -> Vec<&'static str> {
    let mut p = vec![
        "NVIDIA driver on your system is too old",
        "Found no NVIDIA driver on your system",
        "CUDA driver version is insufficient for CUDA runtime version",
        // `physx_driver_check`: PhysX's `CUDA driver version is N, expected … at least M.`
        "CUDA driver version is ",
        "no kernel image is available for execution on the device",
        NVRTC_ARCH_REJECTED,
        "is not compatible with the current PyTorch installation",
        // `_check_cubins`' list and 2.11's advice, quoted without the GPU's line
        "The current PyTorch install supports CUDA capabilities",
        RELEASE_ADVICE,
        "CUDA error: ",
        "CUDA driver initialization failed",
        "CUDA unknown error - this may be due to an incorrectly set up environment",
        // `unknown_error_env`: the message's head alone
        "RuntimeError: CUDA unknown error",
        "CUDA initialization: CUDA unknown error",
        "cuda capability",
        "compute capability (CC)",
        "CUBLAS_STATUS_",
        "CUDNN_STATUS_",
        "cudaError",
        "CUDA_ERROR_",
        // `kernel_dso_mismatch`: TF's diagnostics
        "does not match DSO version",
        // `extension_cuda_mismatch`: torchvision's `_check_cuda_version`
        EXTENSION_CUDA_HEAD,
        "THCudaCheck FAIL",
        "cuda runtime error (",
        "Cuda failure",
        "Test CUDA failure",
        "CUDA error ",
        "CUDA driver error: ",
        // `qualified`: the launch check's `CUDA kernel launch error: <text>`, as the copies
        // print it
        "CUDA kernel launch error: ",
        "CUDA Kernel Launch Error: ",
        "CUDA launch error: ",
        "cuda kernel launch error: ",
        "cuda launch error: ",
        "CUDA failed with error ",
        "cuda failed with error ",
        "cuda execution failed with error ",
        "cuda error: ",
        "Cuda error: ",
        "CUDA error:",
        "(error code ",
        // `error_n`: CUDAFunctions.cpp's `Error <N>: <text>` after "Unexpected error from
        // cudaGetDeviceCount()", whose text may be too short to quote (`Error 2: out of
        // memory`, pytorch/pytorch#150048)
        "Error ",
        // `unnamed_curesult`: TF's, XLA's and jaxlib's result printed by number
        "UNKNOWN ERROR (",
        "Unknown CUDA error ",
        // `device_query_count`: deviceQuery's `cudaGetDeviceCount returned N`
        "cudaGetDeviceCount returned ",
        // `check_vs_0`: glog's `Check failed: … == cudaSuccess (N vs. 0)`, OpenPose's check
        " vs. 0)",
        // `cuda_gdb_exception`: cuda-gdb's (and NVIDIA's lldb's) device exception
        "CUDA Exception: ",
        "CUDA_EXCEPTION_",
        // `device_assert`: the runtime's line for a failed device-side assert
        "thread: [",
        // `cutil_error`: the CUDA SDK's cutil checks
        "Cuda error in file ",
        "cudaSafeCall() Runtime API error ",
        "Cuda driver error ",
        // `enoki_malloc_failed`: Enoki's `cuda_malloc(): out of memory!`
        "malloc(): out of memory!",
        // `nd4j_device_alloc_failed`: ND4J's `Failed to allocate N bytes from DEVICE [D] memory`
        " bytes from DEVICE [",
        // `failed_with`: FlashInfer's `<Op> failed with error <text>`
        " failed with error ",
        // `qualified`: TensorRT-LLM's `CUDA runtime error in <call>: <text>`
        "CUDA runtime error in ",
        // `call_failed`: a program's `<cudaCall> failed: <text>` (`cudaMallocAsync failed: `,
        // `cudaMalloc retry failed: `, `cudaMallocAsync failed for bucket N: `)
        " failed: ",
        " failed for ",
        // `cpp_cuda_error`: mallocMC's `CUDA::error`, thrown or printed
        "instance of 'CUDA::error'",
        "): error: ",
    ];
    // `cuda_libs::recognised_line`'s phrases
    p.extend([
        "Could not load dynamic library '",
        "Cannot dlopen some GPU libraries",
        "Loaded runtime CuDNN library: ",
        "CUDA backend failed to initialize: ",
        "but a CUDA-enabled jaxlib is not installed",
        "PyTorch was compiled",
        ": cannot open shared object file",
        "Couldn't open CUDA library ",
        ") versions mismatch",
    ]);
    p.extend(quotable());
    p
}

fn note_error(
    out: &mut CudaRuntimeLog,
    name: &str,
    code: Option<u32>,
    message: Option<&str>,
    category: &'static str,
    line: &str,
) {
    if let Some(e) = out.errors.iter_mut().find(|e| e.name == name) {
        e.count += 1;
        return;
    }
    if out.errors.len() >= super::MAX_ITEMS {
        return;
    }
    out.errors.push(CudaErrorSeen {
        name: name.to_string(),
        code,
        message: message.map(str::to_string),
        category,
        count: 1,
        line: super::clip(line.trim(), super::MAX_TEXT),
    });
    out.error_names.push(name.to_string());
}

fn library_category(name: &str) -> &'static str {
    if name.ends_with("ALLOC_FAILED") {
        "memory"
    } else if name.ends_with("ARCH_MISMATCH") {
        "arch"
    } else {
        "library"
    }
}

/// True when the text holds THC's exception (`cuda runtime error (N) : …`), which a FAIL line
/// precedes when the error was not caught.
fn text_raises_thc(text: &str) -> bool {
    text.contains("cuda runtime error (")
}

pub fn parse_cuda_runtime_log(text: &str) -> CudaRuntimeLog {
    let joined = rejoin_too_old(text);
    let text = &*joined;
    let mut out = CudaRuntimeLog::default();
    // NCCL's CUDACHECK warns `Cuda failure '…'` and returns ncclUnhandledCudaError: the
    // failure is the NCCL error's reason, which comm.nccl-error reports, where the text shows
    // that result (`unhandled cuda error`, ncclGetErrorString's words, or NCCLCHECK's `-> 1`
    // back trace after the WARN) or the WARN itself, which only those macros print at WARN
    // (`nccl_errors::cuda_failure_warn`; h108)
    let nccl_reported = text.contains("unhandled cuda error")
        || text.contains("ncclUnhandledCudaError")
        || super::nccl_errors::unhandled_cuda_traced(text)
        || super::nccl_errors::cuda_failure_warned(text);
    // `_check_cubins` prints its message over three lines: keep the GPU until the list follows
    let mut pending_gpu: Option<usize> = None;
    // `_check_cubins`' list with no "not compatible" line before it, and 2.11's advice line
    let mut unattributed_list: Option<Vec<String>> = None;
    let mut advice = false;
    // the libraries a framework could not use, and the lines around them that say a GPU was
    // there (TensorFlow's "Found device", JAX's version lines)
    static LIB_PHRASES: LazyLock<Regex> =
        LazyLock::new(|| super::scan::phrases(super::cuda_libs::PHRASES));
    let mut libs = super::cuda_libs::Libs::default();
    // deviceQuery's `cudaGetDeviceCount returned N`, whose `-> <text>` follows on the next line
    let mut device_query_code: Option<u32> = None;
    // the first device-side assertion line: the error it makes the runtime return
    // (`cudaErrorAssert`), where no line of the text names that error itself
    let mut first_assert_line: Option<String> = None;
    // a `CUDA::error` message wrapped after `<file>(<line>):`: its `error: <text>` is next
    let mut wrapped_cpp = false;
    let mut extension_head = false;
    // `content_lines` passes over `#` lines (a fixture's citation of its source); PyTorch's
    // driver message with its found version is PyTorch's own words wherever the line begins: an
    // issue's title kept as a markdown heading (`# The NVIDIA driver on your system is too old
    // (found version 11080)`), a shell session's output pasted as a comment. Only that message is
    // read there; every other line of the text as before.
    if text.contains("too old (found version") {
        for line in super::scan::lines(text).filter(|l| l.trim_start().starts_with('#')) {
            if let Some(c) = TOO_OLD.captures(line) {
                out.driver_too_old = true;
                if out.driver_found_version.is_none()
                    && let Ok(v) = c[1].parse::<u32>()
                {
                    out.driver_found_version = Some(v);
                    out.driver_cuda = Some(cuda_compat::cuda_code_str(v));
                }
                out.lines += 1;
            }
        }
    }
    for line in super::content_lines(text) {
        if std::mem::take(&mut wrapped_cpp)
            && let Some(e) = wrapped_cpp_cuda_error(line)
        {
            note_error(&mut out, e.0, Some(e.1), Some(e.2), e.4, line);
            out.lines += 1;
            continue;
        }
        wrapped_cpp = matches!(cpp_cuda_error(line.trim_end()), Some(None));
        if let Some(code) = device_query_code.take()
            && let Some(e) = device_query_error(code, line)
        {
            note_error(&mut out, e.0, Some(e.1), Some(e.2), e.4, line);
            out.lines += 1;
            continue;
        }
        device_query_code = device_query_count(line);
        // the message may be wrapped over the next lines: read from the text after the loop
        extension_head |= line.contains(EXTENSION_CUDA_HEAD);
        if out.kernel_dso_mismatch.is_none()
            && let Some((k, d)) = kernel_dso_mismatch(line)
        {
            out.kernel_dso_mismatch = Some(KernelDsoMismatch {
                kernel_version: k.into(),
                dso_version: d.into(),
                line: super::clip(line.trim(), super::MAX_TEXT),
            });
        }
        if LIB_PHRASES.is_match(line) {
            libs.read(line);
        }
        if !recognised_line(line)
            && !line.contains("The current PyTorch install supports")
            && !line.contains("CUDA_VERSION")
            && !line.contains("minimum cuda capability")
            && !line.contains("which supports hardware CC")
            && !MIN_MAX.is_match(line)
            && !line.contains("Cuda failure")
            && !line.contains("No CUDA GPUs are available")
            && !line.contains("CUDA kernel errors might be asynchronously reported")
            && !line.contains("+cu")
        {
            continue;
        }
        let mut carried = false;
        if let Some(c) = TOO_OLD.captures(line) {
            out.driver_too_old = true;
            if let Ok(v) = c[1].parse::<u32>() {
                out.driver_found_version = Some(v);
                out.driver_cuda = Some(cuda_compat::cuda_code_str(v));
            }
            carried = true;
        } else if line.contains("NVIDIA driver on your system is too old") {
            out.driver_too_old = true;
            carried = true;
        }
        if let Some((found, required)) = physx_driver_check(line) {
            out.driver_too_old = true;
            out.driver_found_version = Some(found);
            out.driver_cuda = Some(cuda_compat::cuda_code_str(found));
            out.driver_required_version = Some(required);
            out.driver_check_line = Some(super::clip(line.trim(), super::MAX_TEXT));
            carried = true;
        }
        if line.contains("CUDA initialization:") {
            out.init_warning = true;
        }
        if line.contains("Found no NVIDIA driver on your system") {
            out.no_driver = true;
            carried = true;
        }
        if line.contains("CUDA driver initialization failed") {
            out.driver_init_failed = true;
            carried = true;
        }
        if unknown_error_env(line) {
            out.unknown_error_env = true;
            carried = true;
        }
        if line.contains("No CUDA GPUs are available") {
            out.no_gpus = true;
            carried = true;
        }
        if line.contains(NVRTC_ARCH_REJECTED) {
            out.nvrtc_arch_rejected = true;
            carried = true;
        }
        if line.contains("CUDA kernel errors might be asynchronously reported") {
            out.async_hint = true;
        }
        if let Some(c) = INCOMPATIBLE.captures(line) {
            let name = c[1]
                .trim()
                .trim_start_matches("UserWarning:")
                .trim()
                .to_string();
            let sm: u32 = c[2].parse().unwrap_or(0);
            if out.incompatible_gpus.len() < super::MAX_ITEMS
                && !out
                    .incompatible_gpus
                    .iter()
                    .any(|g| g.name == name && g.sm == sm)
            {
                out.incompatible_gpus.push(IncompatibleGpu {
                    name: super::clip(&name, 200),
                    capability: format!("sm_{sm}"),
                    sm,
                    supported: Vec::new(),
                });
                pending_gpu = Some(out.incompatible_gpus.len() - 1);
            }
            carried = true;
        }
        if let Some(c) = SUPPORTS.captures(line) {
            let list: Vec<String> = c[1]
                .split_whitespace()
                .take(64)
                .map(|s| s.trim_end_matches('.').to_string())
                .collect();
            if let Some(i) = pending_gpu.take() {
                out.incompatible_gpus[i].supported = list;
            } else if unattributed_list.is_none() {
                // the list alone: the GPU it was printed for is found among the names below
                unattributed_list = Some(list);
            }
            carried = true;
        }
        if line.contains(RELEASE_ADVICE) {
            advice = true;
            carried = true;
        }
        // torch 2.11: the GPU, then its build's list one architecture a line
        if let Some(c) = CC_GPU.captures(line) {
            let major: u32 = c[3].parse().unwrap_or(0);
            let minor: u32 = c[4].parse().unwrap_or(0);
            let sm = major * 10 + minor;
            let name = c[2].trim().to_string();
            if out.incompatible_gpus.len() < super::MAX_ITEMS
                && !out
                    .incompatible_gpus
                    .iter()
                    .any(|g| g.name == name && g.sm == sm)
            {
                out.incompatible_gpus.push(IncompatibleGpu {
                    name: super::clip(&name, 200),
                    capability: format!("sm_{sm}"),
                    sm,
                    supported: Vec::new(),
                });
                pending_gpu = Some(out.incompatible_gpus.len() - 1);
            } else {
                // the same GPU warned of again (one warning per rank): its list is known
                pending_gpu = None;
            }
            carried = true;
        }
        if let Some(c) = CC_LIST.captures(line) {
            if let Some(i) = pending_gpu {
                let arch = format!("sm_{}{}", &c[1], &c[2]);
                let list = &mut out.incompatible_gpus[i].supported;
                if list.len() < 64 && !list.contains(&arch) {
                    list.push(arch);
                }
            }
            carried = true;
        }
        if let Some(c) = OLD_GPU.captures(line) {
            if out.old_gpus.len() < super::MAX_ITEMS {
                out.old_gpus.push(OldGpu {
                    index: c[1].parse().unwrap_or(0),
                    name: super::clip(c[2].trim(), 200),
                    capability: c[3].to_string(),
                    min_supported: MIN_CAP.captures(line).map(|m| m[1].to_string()),
                });
            }
            carried = true;
        } else if let Some(c) = MIN_CAP.captures(line)
            && let Some(g) = out.old_gpus.last_mut()
            && g.min_supported.is_none()
        {
            g.min_supported = Some(c[1].to_string());
        }
        if let Some(c) = MIN_MAX.captures(line)
            && let Some(g) = out.old_gpus.last()
            && g.min_supported.is_none()
        {
            // torch 2.8+ warns of a GPU above the newest architecture too; such a GPU is not
            // old, and whether it runs is `_check_cubins`' "not compatible" line to say (a 12.1
            // GB10 runs the sm_120 cubins of a (8.0) - (12.0) build)
            let cap = cuda_compat::cuda_code(&g.capability);
            let max = cuda_compat::cuda_code(&c[2]);
            if cap.is_some() && max.is_some() && cap > max {
                out.old_gpus.pop();
            } else if let Some(g) = out.old_gpus.last_mut() {
                g.min_supported = Some(c[1].to_string());
            }
            carried = true;
        }
        if let Some(c) = NEEDS_NEWER.captures(line) {
            if out.needs_newer_cuda.len() < super::MAX_ITEMS {
                out.needs_newer_cuda.push(NeedsNewerCuda {
                    index: c[1].parse().unwrap_or(0),
                    name: super::clip(c[2].trim(), 200),
                    requires_cuda_version: c[3].parse().unwrap_or(0),
                    compiled_cuda_version: COMPILED_WITH
                        .captures(line)
                        .and_then(|m| m[1].parse().ok())
                        .unwrap_or(0),
                });
            }
            carried = true;
        } else if let Some(c) = COMPILED_WITH.captures(line)
            && let Some(g) = out.needs_newer_cuda.last_mut()
            && g.compiled_cuda_version == 0
        {
            g.compiled_cuda_version = c[1].parse().unwrap_or(0);
        }
        // errors named on this line (each counted once per line)
        let mut here: Vec<(String, Option<u32>, Option<&'static str>, &'static str)> = Vec::new();
        let mut add =
            |n: String, code: Option<u32>, msg: Option<&'static str>, cat: &'static str| {
                if !here.iter().any(|h| h.0 == n) {
                    here.push((n, code, msg, cat));
                }
            };
        // a terminal pads lines with spaces to its width: the message ends before them
        let line = line.trim_end();
        if let Some(a) = device_assert(line) {
            if let Some(seen) = out
                .device_asserts
                .iter_mut()
                .find(|s| s.file == a.file && s.line == a.line && s.condition == a.condition)
            {
                seen.count += 1;
            } else if out.device_asserts.len() < super::MAX_ITEMS {
                out.device_asserts.push(a);
            }
            if first_assert_line.is_none() {
                first_assert_line = Some(line.to_string());
            }
            carried = true;
        }
        // NVIDIA/nccl `src/include/checks.h` (read at HEAD, 2026): `CUDACHECK` / `CUDACHECKGOTO`
        // WARN `Cuda failure '%s'` and return ncclUnhandledCudaError (the NCCL error, where
        // the text shows it, above); `CUDACHECKIGNORE` prints the same words at INFO
        // (`INFO_LOC(NCCL_ALL, "Cuda failure '%s'", …)`), clears the error and goes on: no
        // failure at all
        let nccl_failure = |c: &regex::Captures| {
            c[0].starts_with("Cuda failure") && (nccl_reported || line.contains("NCCL INFO "))
        };
        let nccl_spans: Vec<(usize, usize)> = CUDA_FAILURE
            .captures_iter(line)
            .filter(|c| nccl_failure(c))
            .filter_map(|c| c.get(0).map(|m| (m.start(), m.end())))
            .collect();
        for c in CUDA_ERROR.captures_iter(line).chain(
            CUDA_FAILURE
                .captures_iter(line)
                .filter(|c| !nccl_failure(c)),
        ) {
            let msg = c[1].trim();
            match by_message(msg) {
                Some(e) => add(e.0.to_string(), Some(e.1), Some(e.2), e.4),
                // a message this table does not know stays as printed
                None => add(super::clip(msg, 120), None, None, "other"),
            }
        }
        // cuda-gdb's device exception, named as the runtime error the process gets for it
        if let Some(n) = cuda_gdb_exception(line)
            && let Some(e) = by_name(n)
        {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // the CUDA SDK's cutil checks
        if let Some((n, code, msg, cat)) = cutil_error(line) {
            add(n, code, msg, cat);
        }
        // Enoki's pool, out of memory after its own release and retry
        if enoki_malloc_failed(line)
            && let Some(e) = by_name("cudaErrorMemoryAllocation")
        {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // ND4J's device allocation, cudaMalloc failed
        if nd4j_device_alloc_failed(line)
            && let Some(e) = by_name("cudaErrorMemoryAllocation")
        {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // mallocMC's `CUDA::error`: `<file>(<line>): error: <text>`
        if let Some(Some(e)) = cpp_cuda_error(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // THC: the exception `_THError` raised, and the FAIL line printed before it. A FAIL in
        // THCGeneral.cpp with `invalid argument` and no exception after it is PyTorch 1.0's
        // start-up check that it caught and went on from (pytorch/pytorch#15797): not an error.
        for (c, raised) in THC_RUNTIME
            .captures_iter(line)
            .map(|c| (c, true))
            .chain(THC_FAIL.captures_iter(line).map(|c| (c, false)))
        {
            let (num, msg, file) = if raised {
                (c.get(1), c.get(2), None)
            } else {
                (c.get(3), c.get(4), c.get(1))
            };
            let (Some(num), Some(msg)) = (num, msg) else {
                continue;
            };
            let code = num.as_str().parse::<u32>().ok();
            let msg = msg.as_str().trim();
            let known = by_message(msg);
            if !raised
                && file.is_some_and(|f| f.as_str().ends_with("THCGeneral.cpp"))
                && known.is_some_and(|e| e.1 == 1)
                && !text_raises_thc(text)
            {
                continue;
            }
            match known {
                Some(e) => add(e.0.to_string(), code, Some(e.2), e.4),
                None => add(super::clip(msg, 120), code, None, "other"),
            }
        }
        // a runtime text quoted alone, named from the table
        for m in QUOTED.find_iter(line) {
            // the message NCCL's `Cuda failure '…'` quotes is that NCCL failure's (above)
            if nccl_spans
                .iter()
                .any(|&(a, b)| m.start() >= a && m.end() <= b)
            {
                continue;
            }
            let q = m.as_str().trim_matches(|c: char| "\"“”'`".contains(c));
            if let Some(e) = by_message(q) {
                add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
            }
        }
        // another program's `CUDA error in <op>: <text>: <file>: <line>`
        for c in QUALIFIED.captures_iter(line) {
            if let Some(e) = by_message(c[1].trim()) {
                add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
            }
        }
        // `Error <N>: <text>` of CUDAFunctions.cpp's cudaGetDeviceCount failure
        if let Some(e) = error_n(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // glog's (Caffe's `CUDA_CHECK`) and OpenPose's `(N vs. 0) <text>`
        if let Some(e) = check_vs_0(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // `c10/cuda/CUDAFunctions.cpp` (`device_count_impl`, read at 01a6a16d): torch throws
        // "CUDA unknown error - this may be due to an incorrectly set up environment, …
        // Setting the available devices to be zero." in `case cudaErrorUnknown:` of
        // cudaGetDeviceCount's result, and `device_count()` warns it behind "CUDA
        // initialization: " and returns 0: cudaGetDeviceCount failed with 999, whatever the
        // cause the sentence guesses, and the process runs without its GPUs (h108:
        // RazgrizHsu/immich-deduper#126). Only that case's fixed text: "CUDA driver
        // initialization failed, you might not have a CUDA gpu." (`cudaErrorInitializationError`)
        // stays a flag, its own words allowing a machine without a GPU.
        if unknown_error_env(line)
            && let Some(e) = by_name("cudaErrorUnknown")
        {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // a CUDA sample's `(error code <text>)!`
        if let Some(e) = sample_error(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // gpu-burn's `Error (<file>:<line>): <text>`
        if let Some(e) = gpu_burn_error(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // CTranslate2's (and tensorview's) `CUDA failed with error <text>`
        if let Some(e) = failed_with(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // FAISS's `details: CUDA error <N> <text>`
        if let Some(e) = cuda_error_n_text(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // a program's `<cudaCall> failed: <text>`
        if let Some(e) = call_failed(line) {
            add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
        }
        // TF's, XLA's and jaxlib's `CUresult` printed by its number. 303 so printed is their
        // libcuda stub's answer (TF `tensorflow/stream_executor/cuda/cuda_stub.cc`, the stored
        // text id 65552798, and tsl's copy that XLA and jaxlib load through: where
        // `GetCudaDriverDsoHandle` cannot dlopen libcuda.so.1, every driver call, cuInit and
        // cuGetErrorName too, returns `CUDA_ERROR_SHARED_OBJECT_INIT_FAILED`, so the name is
        // unknown): no NVIDIA driver on this host, as a CPU-only machine prints it
        // (tensorflow/tensorflow#37689, "spurious error … on a machine without a GPU"), not a
        // CUDA error of a GPU. A real libcuda names its 303 (`CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
        // shared object initialization failed`), read from the name above.
        if let Some(n) = unnamed_curesult(line) {
            // 303 by number: the libcuda stub answered, no driver library was loaded
            if n == 303 {
                out.no_driver = true;
                carried = true;
            } else {
                match by_curesult(n) {
                    Some(e) => add(e.0.to_string(), Some(e.1), Some(e.2), e.4),
                    None => add(format!("CUresult {n}"), Some(n), None, "other"),
                }
            }
        }
        // messages PyTorch prints without the `CUDA error:` prefix
        for e in CUDA_ERRORS.iter().filter(|e| e.1 == 35 || e.1 == 209) {
            if line.contains(e.2) {
                add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
            }
        }
        for c in NAMES.captures_iter(line) {
            let n = &c[1];
            if let Some(e) = by_name(n) {
                add(e.0.to_string(), Some(e.1), Some(e.2), e.4);
            } else if (n.starts_with("CUBLAS_STATUS_") || n.starts_with("CUDNN_STATUS_"))
                && !n.ends_with("_SUCCESS")
            {
                add(n.to_string(), None, None, library_category(n));
            } else if (n.starts_with("cudaError") && n != "cudaErrorSuccess")
                || (n.starts_with("CUDA_ERROR_") && n != "CUDA_ERROR_SUCCESS")
            {
                add(n.to_string(), None, None, "other");
            }
        }
        // an allocator's own out-of-memory report names the driver's result it got: XLA's
        // `GpuCudaMallocAsyncAllocator::AllocateRaw` (xla/stream_executor/gpu/
        // gpu_cudamallocasync_allocator.cc: "<name> cuMemAllocAsync failed to allocate N bytes:
        // <status>", then "Reported by CUDA: Free memory/Total memory") and TensorFlow's and
        // XLA's `GpuDriver::DeviceAllocate` (stream_executor/cuda/cuda_driver.cc: "failed to
        // allocate X (N bytes) from device: <result>", logged at INFO "because this isn't
        // always important to users (e.g. BFCAllocator implements a retry if the first
        // allocation fails)"). Those lines are the framework's allocator running out of memory,
        // which its OOM error then raises (RESOURCE_EXHAUSTED), as PyTorch's caching allocator
        // raises "CUDA out of memory": memory evidence, not a CUDA error in the step.
        if line.contains("cuMemAllocAsync failed to allocate")
            || (line.contains("failed to allocate ") && line.contains(" bytes) from device: "))
        {
            here.retain(|h| h.0 != "cudaErrorMemoryAllocation");
        }
        if !here.is_empty() {
            carried = true;
        }
        for (n, code, msg, cat) in here {
            note_error(&mut out, &n, code, msg, cat, line);
        }
        for c in WHEEL.captures_iter(line) {
            let tag = c[1].to_string();
            if !out.torch_wheel_cuda.contains(&tag) && out.torch_wheel_cuda.len() < 8 {
                out.torch_wheel_cuda.push(tag);
            }
        }
        if carried {
            out.lines += 1;
        }
    }
    if extension_head {
        out.extension_cuda_mismatch = extension_cuda_mismatch(text);
    }
    // the runtime returns cudaErrorAssert to the next synchronisation after a device-side
    // assert: a text that shows only the assertion lines (cut before the traceback) shows it
    if let Some(l) = first_assert_line
        && !out.error_names.iter().any(|n| n == "cudaErrorAssert")
        && let Some(e) = by_name("cudaErrorAssert")
    {
        note_error(&mut out, e.0, Some(e.1), Some(e.2), e.4, &l);
    }
    out.insufficient_driver = out
        .error_names
        .iter()
        .any(|n| n == "cudaErrorInsufficientDriver");
    out.forward_compat_unsupported = out
        .error_names
        .iter()
        .any(|n| n == "cudaErrorCompatNotSupportedOnDevice");
    out.no_kernel_image = out
        .error_names
        .iter()
        .any(|n| n == "cudaErrorNoKernelImageForDevice");
    (out.library_problems, out.library_messages_not_judged) = libs.finish();
    out.raised_from = cuda_check_raises(text);
    if out.incompatible_gpus.is_empty()
        && out.old_gpus.is_empty()
        && (unattributed_list.is_some() || advice)
    {
        out.arch_warning_unattributed = true;
        if let Some(list) = unattributed_list {
            attribute_supports_list(&mut out, text, list);
        }
    }
    out
}

/// `_check_cubins`' list quoted without its GPU's line: the GPUs the text names (as the driver
/// prints names, or a GeForce card as its owner writes it: [`super::gpu_arch::names_in`]) whose
/// major architecture no `sm_` entry of the list has, `_check_cubins`' own test (`supported =
/// any(sm // 10 == cap_major for sm in supported_sm)`), are the GPUs it was printed for.
fn attribute_supports_list(out: &mut CudaRuntimeLog, text: &str, list: Vec<String>) {
    let majors: Vec<u32> = list
        .iter()
        .filter_map(|a| a.strip_prefix("sm_"))
        .filter_map(|n| {
            n.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse::<u32>()
                .ok()
        })
        .map(|sm| sm / 10)
        .collect();
    if majors.is_empty() {
        return;
    }
    for line in super::content_lines(text) {
        for g in super::gpu_arch::names_in(line) {
            if majors.contains(&(g.sm / 10))
                || out.incompatible_gpus.len() >= super::MAX_ITEMS
                || out.incompatible_gpus.iter().any(|x| x.name == g.name)
            {
                continue;
            }
            out.incompatible_gpus.push(IncompatibleGpu {
                name: super::clip(&g.name, 200),
                capability: format!("sm_{}", g.sm),
                sm: g.sm,
                supported: list.clone(),
            });
        }
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct CudaRuntimeKind;

impl super::EvidenceKind for CudaRuntimeKind {
    fn name(&self) -> &'static str {
        "cuda-runtime-log"
    }
    fn doc(&self) -> &'static str {
        "PyTorch's CUDA-init and runtime messages: driver too old, GPU architecture not in the build, no kernel image, CUDA/cuBLAS/cuDNN errors (and TensorFlow's, XLA's and jaxlib's failed CUDA driver calls)"
    }
    fn example(&self) -> &'static str {
        "python train.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "driver_too_old",
                "\"The NVIDIA driver on your system is too old\", or PhysX's \"CUDA driver version is N, expected at least M.\"",
            ),
            (
                "driver_found_version",
                "the CUDA version the driver runs, as cudaDriverGetVersion codes it (12080)",
            ),
            ("driver_cuda", "the same as major.minor"),
            (
                "driver_required_version",
                "PhysX's driver check: the CUDA version it needs (cudaDriverGetVersion code)",
            ),
            (
                "driver_check_line",
                "PhysX's driver check: the line that said the driver's CUDA is below it",
            ),
            (
                "no_driver",
                "\"Found no NVIDIA driver on your system\", or cuInit's `UNKNOWN ERROR (303)` (TF's, XLA's or jaxlib's libcuda stub: libcuda.so.1 not loadable)",
            ),
            ("insufficient_driver", "cudaErrorInsufficientDriver"),
            (
                "forward_compat_unsupported",
                "cudaErrorCompatNotSupportedOnDevice (804), as PyTorch's `Error 804: …`",
            ),
            (
                "init_warning",
                "the message came as PyTorch's `CUDA initialization:` warning",
            ),
            (
                "driver_init_failed",
                "\"CUDA driver initialization failed\"",
            ),
            (
                "unknown_error_env",
                "\"CUDA unknown error - this may be due to an incorrectly set up environment\"",
            ),
            ("no_gpus", "\"No CUDA GPUs are available\""),
            ("no_kernel_image", "cudaErrorNoKernelImageForDevice"),
            (
                "nvrtc_arch_rejected",
                "NVRTC refused the GPU's architecture (`invalid value for --gpu-architecture (-arch)`)",
            ),
            (
                "incompatible_gpus",
                "GPUs the build has no kernels for: name, capability, sm, supported",
            ),
            (
                "old_gpus",
                "GPUs older than the build supports: index, name, capability, min_supported",
            ),
            (
                "needs_newer_cuda",
                "GPUs that need a newer CUDA than PyTorch was compiled with",
            ),
            (
                "errors",
                "CUDA, cuBLAS and cuDNN errors: name, code, message, category, count, line",
            ),
            ("error_names", "distinct error names"),
            (
                "async_hint",
                "PyTorch warned that the stack may not be where the kernel failed",
            ),
            (
                "device_asserts",
                "device-side assertions the runtime printed: file, line, function, condition, block, thread, count",
            ),
            (
                "torch_wheel_cuda",
                "`+cuXYZ` tags of torch versions in the text",
            ),
            (
                "library_problems",
                "CUDA libraries the framework could not use where the text shows the GPU: library, problem (missing, version), framework, wanted, found, line",
            ),
            (
                "library_messages_not_judged",
                "library messages the text gives no ground to judge (TensorFlow's cudart dlerror alone, JAX's CPU-only jaxlib)",
            ),
            (
                "kernel_dso_mismatch",
                "TensorFlow's CUDA diagnostics: the loaded kernel module's and libcuda's versions differ (kernel_version, dso_version, line); the `nvml` probe of a host known from text reads it as NVML failing",
            ),
            (
                "extension_cuda_mismatch",
                "torchvision's `_check_cuda_version`: the extension and PyTorch were built for different CUDA versions (extension, torch_cuda, extension_cuda, line)",
            ),
            (
                "arch_warning_unattributed",
                "PyTorch's architecture warning quoted without its GPU line (`The current PyTorch install supports CUDA capabilities …` alone, 2.11's `… a PyTorch release that supports one of these CUDA versions: …`): printed only for a GPU the build has no kernels for",
            ),
            (
                "raised_from",
                "c10's back trace under a CUDA error: the function, file (c10/cuda/CUDAException.cpp) and line PyTorch threw it from",
            ),
            ("lines", "lines that carried one of these messages"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cuda.log", "cuda.compat", "nvml"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        // the error can sit anywhere in a long log: scan for its line, collecting nothing
        looks_like_in(s.late)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_cuda_runtime_log(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c10_s_back_trace_under_a_cuda_error_names_where_it_was_raised() {
        // h162: hao-ai-lab/FastVideo#1008, the watchdog's `unspecified launch failure`, a
        // blank line, then c10's back trace head and frame #0 (frame #1 cut)
        let t = include_str!(
            "../../tests/fixtures/corpus/h162_cudaerr_fastvideo1008_wan14b_watchdog_unspecified_launch_failure.txt"
        );
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorLaunchFailure"]);
        assert_eq!(
            m.raised_from,
            [RaisedFrom {
                function: "c10_cuda_check_implementation".into(),
                file: "/pytorch/c10/cuda/CUDAException.cpp".into(),
                line: 43,
            }]
        );
        // the back trace block alone, as the segmenter offers it to the part above it, is read
        let trace = t.split("\n\n").nth(1).unwrap();
        assert_eq!(cuda_check_raises(trace).len(), 1);
        // a repeat (every rank prints one) is one entry; an older build's relative path is
        // read too
        let two = "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):\n\
                   frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f in libc10.so)\n\
                   Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):\n";
        assert_eq!(
            cuda_check_raises(two),
            [RaisedFrom {
                function: "c10_cuda_check_implementation".into(),
                file: "../c10/cuda/CUDAException.cpp".into(),
                line: 44,
            }]
        );
        // neighbours: other throw sites (the NCCL watchdog's timeout, the caching allocator's
        // OOM), the head without its file, prose
        for t in [
            "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call first):\n",
            "Exception raised from malloc at ../c10/cuda/CUDACachingAllocator.cpp:1200 (most recent call first):\n",
            "Exception raised from c10_cuda_check_implementation (most recent call first):\n",
            "the exception was raised from CUDAException.cpp:43, see the trace\n",
        ] {
            assert!(cuda_check_raises(t).is_empty(), "{t}");
            assert!(parse_cuda_runtime_log(t).raised_from.is_empty(), "{t}");
        }
    }

    #[test]
    fn torchvision_built_for_another_cuda_is_read_wrapped_or_not() {
        // h141: sd-1click-colab#30 (the traceback, one line) and sd-easy-mode#18 (wrapped at 80
        // columns by a rich console, trailing spaces kept)
        for (t, name) in [
            (
                include_str!(
                    "../../tests/fixtures/corpus/h141_tvcuda_sd1click30_torch117_tv118_traceback.txt"
                ),
                "one line",
            ),
            (
                include_str!(
                    "../../tests/fixtures/corpus/h141_tvcuda_sdeasymode18_wrapped_torch117_tv118.txt"
                ),
                "wrapped",
            ),
        ] {
            assert!(looks_like(t), "{name}");
            let m = parse_cuda_runtime_log(t)
                .extension_cuda_mismatch
                .expect(name);
            assert_eq!(
                (
                    m.extension.as_str(),
                    m.torch_cuda.as_str(),
                    m.extension_cuda.as_str()
                ),
                ("torchvision", "11.7", "11.8"),
                "{name}"
            );
            assert!(m.line.ends_with("CUDA Version=11.8"), "{name}: {}", m.line);
        }
        // the later wording (major versions only), inside a rich traceback's frame
        let t = "\u{2502} RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major \u{2502}\n\u{2502} versions. PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please \u{2502}\n";
        let m = extension_cuda_mismatch(t).unwrap();
        assert_eq!(
            (m.torch_cuda.as_str(), m.extension_cuda.as_str()),
            ("12.1", "11.8")
        );
        // neighbours not claimed: the head without versions (prose, a title cut short), equal
        // versions, two different names, torchvision's other refusal, a CPU-only message
        for t in [
            "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. Please reinstall",
            "Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=11.8.",
            "Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA Version=11.7 and torchaudio has CUDA Version=11.8.",
            "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible",
            "PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8.",
        ] {
            assert_eq!(extension_cuda_mismatch(t), None, "{t}");
            assert_eq!(
                parse_cuda_runtime_log(t).extension_cuda_mismatch,
                None,
                "{t}"
            );
        }
    }

    #[test]
    fn tensorflow_s_kernel_dso_mismatch_is_read_where_both_versions_are_known_and_differ() {
        // h12: tensorflow/tensorflow#4768 (TF 0.x, stream_executor); h134: OpenVINO's notebook
        // page (TF 2.12, compiler/xla/stream_executor), indented and timestamped
        let t =
            include_str!("../../tests/fixtures/corpus/h12_cudaerr_tf4768_kernel_dso_mismatch.txt");
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t).kernel_dso_mismatch.unwrap();
        assert_eq!(
            (m.kernel_version.as_str(), m.dso_version.as_str()),
            ("352.63.0", "361.93.2")
        );
        assert!(
            m.line
                .starts_with("E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:296]")
        );
        let t = include_str!(
            "../../tests/fixtures/corpus/h134_tferr_openvino_bit_cuinit_804_kernel_dso_mismatch.txt"
        );
        let m = parse_cuda_runtime_log(t).kernel_dso_mismatch.unwrap();
        assert_eq!(
            (m.kernel_version.as_str(), m.dso_version.as_str()),
            ("470.182.3", "470.223.2")
        );
        // the line alone is the kind's: XLA's path of 2025 (external/local_xla)
        let xla = "2025-01-27 13:52:31.859580: E external/local_xla/xla/stream_executor/cuda/cuda_diagnostics.cc:262] kernel version 550.120.0 does not match DSO version 560.35.5 -- cannot find working devices in this configuration\n";
        assert!(looks_like(xla));
        assert_eq!(kernel_dso_mismatch(xla), Some(("550.120.0", "560.35.5")));
        // neighbours: a version TF could not read (the status's text in its place), equal
        // versions, the INFO line of a match, a TF healthy start, prose
        for t in [
            "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:296] kernel version Permission denied: could not open driver version path for reading: /proc/driver/nvidia/version does not match DSO version 361.93.2 -- cannot find working devices in this configuration",
            "kernel version 470.57.2 does not match DSO version 470.57.2 -- cannot find working devices",
            "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] kernel version seems to match DSO: 460.32.3",
            "the kernel version does not match DSO version, what should I do?",
        ] {
            assert_eq!(kernel_dso_mismatch(t), None, "{t}");
            assert_eq!(parse_cuda_runtime_log(t).kernel_dso_mismatch, None, "{t}");
        }
    }

    #[test]
    fn check_vs_0_of_glog_and_openpose_is_the_runtime_error() {
        // h119: taokong/RON#4, Caffe's CUDA_CHECK through glog's CHECK_EQ
        let t = include_str!(
            "../../tests/fixtures/corpus/h119_cudaerr_ron4_caffe_syncedmem_oom_k80.txt"
        );
        assert!(looks_like(t));
        let log = parse_cuda_runtime_log(t);
        let names: Vec<&str> = log.errors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, vec!["cudaErrorMemoryAllocation"]);
        assert_eq!(log.errors[0].code, Some(2));
        // gkioxari/RstarCNN#6 (35) and OpenPose's own check with and without its space
        let t = "F0408 15:16:28.126595 23712 common.cpp:141] Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient for CUDA runtime version\n";
        assert!(
            parse_cuda_runtime_log(t)
                .errors
                .iter()
                .any(|e| e.code == Some(35))
        );
        for t in [
            "Cuda check failed (35 vs. 0): CUDA driver version is insufficient for CUDA runtime version\n",
            "Cuda check failed (2 vs. 0):out of memory\n",
        ] {
            assert!(recognised_line(t.trim_end()), "{t}");
        }
        // neighbours: a number that disagrees with the text, a check of another API, glog's
        // CHECK of something else, prose
        // the line retold inside a machine-translated question's sentence (qa.1r1g.com's copy
        // of a Stack Overflow question, h142)
        let t = include_str!(
            "../../tests/fixtures/corpus/h142_forum_1r1g_caffe_segnet_oom_batch1_question.txt"
        );
        let log = parse_cuda_runtime_log(t);
        let names: Vec<&str> = log.errors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, vec!["cudaErrorMemoryAllocation"]);
        for t in [
            "Check failed: error == cudaSuccess (3 vs. 0)  out of memory",
            "Check failed: error == cudaSuccess (3 vs. 0) out of memory我得到",
            "Check failed: error == cudaSuccess (2 vs. 0) out of memoryless",
            "Check failed: error == cudaSuccess (2 vs. 0) out of memory, again",
            "Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)  CUBLAS_STATUS_EXECUTION_FAILED",
            "Check failed: count == 2 (3 vs. 2)  out of memory",
            "the check failed (2 vs. 0) with out of memory",
        ] {
            assert!(check_vs_0(t).is_none(), "{t}");
        }
    }

    /// The driver-too-old message broken over two lines between its own words is read as
    /// printed; lines that only look alike are not joined.
    /// `_check_cubins`' list and 2.11's `_warn_unsupported_code` advice are printed only inside
    /// the warning for a GPU no architecture of the build runs: quoted without the GPU's line,
    /// they still say the build lacks one, and a GPU the text names whose major the list lacks
    /// is the one (`supported = any(sm // 10 == cap_major …)`).
    #[test]
    fn an_architecture_warning_quoted_without_its_gpu_line() {
        let corpus = crate::evidence::testutil::fixture_dir().join("../corpus");
        // yuval-alaluf/stylegan3-editing#12 (h16): the list mid-sentence in the poster's prose,
        // the RTX 3090 named in full-width brackets
        let t =
            std::fs::read_to_string(corpus.join("h16_post_stylegan3editing12_arch_sm86_prose.md"))
                .unwrap();
        assert!(looks_like(&t));
        let m = parse_cuda_runtime_log(&t);
        assert!(m.arch_warning_unattributed);
        assert_eq!(m.incompatible_gpus.len(), 1, "{:?}", m.incompatible_gpus);
        let g = &m.incompatible_gpus[0];
        assert_eq!((g.name.as_str(), g.sm), ("GeForce RTX 3090", 86));
        assert_eq!(g.supported, ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75"]);
        // a named GPU whose major the list has is not the one it was printed for
        let other = "GPUs: NVIDIA GeForce RTX 3090 and a Tesla K80.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.\n";
        let m = parse_cuda_runtime_log(other);
        assert!(m.arch_warning_unattributed);
        assert_eq!(m.incompatible_gpus.len(), 1);
        assert_eq!(m.incompatible_gpus[0].sm, 37);
        // the whole warning: the GPU comes from its own line, nothing is unattributed
        let whole = "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75.\n";
        let m = parse_cuda_runtime_log(whole);
        assert!(!m.arch_warning_unattributed);
        assert_eq!(m.incompatible_gpus.len(), 1);
        assert_eq!(m.incompatible_gpus[0].supported.len(), 5);
        // pytorch/pytorch#182250's description (h45): only the warning's last line, a V100
        // named in prose (no GPU the table takes), 2.11.0+cu128 written after the code block
        let t = std::fs::read_to_string(
            corpus.join("h45_pytorch182250_v100_torch211_cu128_description.md"),
        )
        .unwrap();
        assert!(looks_like(&t));
        let m = parse_cuda_runtime_log(&t);
        assert!(m.arch_warning_unattributed);
        assert!(m.incompatible_gpus.is_empty());
        // the whole 2.11 warning names its GPU (h45_pytorch182250_v100x2_…_cc_warning)
        let t = std::fs::read_to_string(
            corpus.join("h45_pytorch182250_v100x2_torch211_cu128_cc_warning.log"),
        )
        .unwrap();
        let m = parse_cuda_runtime_log(&t);
        assert!(!m.arch_warning_unattributed);
        assert!(!m.incompatible_gpus.is_empty());
        // words about the warning are not its lines
        for prose in [
            "The current PyTorch install supports CUDA capabilities of your card, so it runs.\n",
            "install a PyTorch release that supports your CUDA version\n",
        ] {
            assert!(!looks_like(prose), "{prose}");
            assert!(!parse_cuda_runtime_log(prose).arch_warning_unattributed);
        }
    }

    /// PyTorch's driver message on a `#` line (an issue's title kept as a markdown heading,
    /// FastEval/FastEval#92) is read; nothing else on such a line is.
    #[test]
    fn the_driver_message_as_a_markdown_heading() {
        let t = "# The NVIDIA driver on your system is too old (found version 11080)\n\nI'm running with 11.8 and have PyTorch 2.1.2+cu118 installed\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert!(m.driver_too_old);
        assert_eq!(m.driver_found_version, Some(11080));
        for other in [
            "# The NVIDIA driver on your system is too old\nit was fixed\n",
            "# CUDA error: no kernel image is available for execution on the device\n",
            "### Failed to initialize NVML\n",
        ] {
            let m = parse_cuda_runtime_log(other);
            assert!(!m.driver_too_old && !m.no_kernel_image, "{other}");
        }
    }

    #[test]
    fn device_side_assertion_lines_are_read_from_the_runtimes_format() {
        // RuiZhang97/ISNet#31 (h121): torch 2.x's error with its hints, then the BCE kernel's
        // assertion line of a conda build
        let t = std::fs::read_to_string(
            crate::evidence::testutil::fixture_dir()
                .join("../corpus/h121_cudaerr_isnet31_dsa_loss_cu_target_val.txt"),
        )
        .unwrap();
        let m = parse_cuda_runtime_log(&t);
        assert_eq!(m.error_names, vec!["cudaErrorAssert".to_string()]);
        assert_eq!(
            m.errors[0].count, 1,
            "the assertion line does not count again"
        );
        assert!(m.errors[0].line.starts_with("RuntimeError: CUDA error"));
        assert_eq!(m.device_asserts.len(), 1);
        let a = &m.device_asserts[0];
        assert_eq!(
            a.file,
            "/opt/conda/conda-bld/pytorch_1724789143830/work/aten/src/ATen/native/cuda/Loss.cu"
        );
        assert_eq!(a.line, 95);
        assert_eq!(a.function.as_deref(), Some("operator()"));
        assert_eq!(a.condition, "target_val >= zero && target_val <= one");
        assert_eq!(a.block, "3663,0,0");
        assert_eq!(a.thread, "64,0,0");
        assert_eq!(a.count, 1);
        assert_eq!(a.site(), "Loss.cu:95");
        assert!(looks_like(&t));

        // assertion lines alone (a log cut before the traceback): one per failing thread,
        // counted on one site, and the runtime's cudaErrorAssert they imply
        let only = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0], thread: [1,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
[rank3]: /pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:365: operator(): block: [2,0,0], thread: [31,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.\n";
        assert!(looks_like(only));
        let m = parse_cuda_runtime_log(only);
        assert_eq!(m.error_names, vec!["cudaErrorAssert".to_string()]);
        assert_eq!(m.errors[0].code, Some(710));
        assert_eq!(m.errors[0].category, "assert");
        assert_eq!(m.device_asserts.len(), 2);
        assert_eq!(m.device_asserts[0].count, 2);
        assert_eq!(m.device_asserts[0].thread, "0,0,0");
        assert_eq!(
            m.device_asserts[1].file,
            "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu"
        );
        assert_eq!(
            m.device_asserts[1].condition,
            "idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\""
        );

        // MSVC builds print no function (a Windows wheel's path, spaces as printed)
        let win = "    C:\\actions-runner\\_work\\pytorch\\pytorch\\builder\\windows\\pytorch\\aten\\src\\ATen\\native\\cuda\\Loss.cu:250: block: [0,0,0], thread: [8,0,0] Assertion `t >= 0 && t < n_classes` failed.";
        let m = parse_cuda_runtime_log(win);
        assert_eq!(m.device_asserts.len(), 1, "{m:?}");
        assert_eq!(m.device_asserts[0].function, None);
        assert_eq!(m.device_asserts[0].line, 250);
        assert_eq!(m.device_asserts[0].site(), "Loss.cu:250");
        assert_eq!(m.device_asserts[0].condition, "t >= 0 && t < n_classes");

        // not claimed: glibc's host assert, a kernel's own printf of its indices, HIP's device
        // assert (another runtime's wording), prose naming the phrase
        for other in [
            "python3: src/foo.c:12: main: Assertion `x > 0' failed.",
            "train.cu:40: debug block: [1,0,0], thread: [3,0,0] value=7",
            "Loss.cu:95: operator(): Device-side assertion `target_val >= zero' failed.",
            "the assertion says block: [0,0,0], thread: [0,0,0] Assertion failed somewhere",
        ] {
            let m = parse_cuda_runtime_log(other);
            assert!(m.device_asserts.is_empty(), "{other}");
            assert!(m.errors.is_empty(), "{other}");
        }
    }

    #[test]
    fn driver_too_old_wrapped_inside_its_words_is_read() {
        // problem: andimarafioti/faster-qwen3-tts#113, the warning wrapped after "on your"
        let t = ".../torch/cuda/__init__.py:187: UserWarning: CUDA initialization: The NVIDIA driver on your\nsystem is too old (found version 12040). ...\nAssertionError: CUDA not available\n";
        assert!(looks_like(t));
        let log = parse_cuda_runtime_log(t);
        assert!(log.driver_too_old && log.init_warning);
        assert_eq!(log.driver_found_version, Some(12040));
        // broken after "driver": the same reading
        let t2 = "UserWarning: CUDA initialization: The NVIDIA driver\n  on your system is too old (found version 11080). Please update your GPU driver\n";
        assert_eq!(parse_cuda_runtime_log(t2).driver_found_version, Some(11080));
        // unbroken (unslothai/unsloth#2499): as before
        let t3 = "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11080). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n";
        assert_eq!(parse_cuda_runtime_log(t3).driver_found_version, Some(11080));
        assert!(matches!(rejoin_too_old(t3), std::borrow::Cow::Borrowed(_)));
        // healthy: prose that ends a line with the same words and goes on otherwise is not joined
        let prose = "I updated the NVIDIA driver on your\nadvice and it is not too old any more.\n";
        assert!(!looks_like(prose));
        assert!(!parse_cuda_runtime_log(prose).driver_too_old);
    }
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    /// PhysX's driver check (Isaac Gym's PhysX 4.x wording through the default error callback,
    /// h117's fuchaojie.com paste; PhysX 5's wording) says the driver's CUDA and the CUDA PhysX
    /// needs: read as the driver too old only where the first is below the second.
    #[test]
    fn physx_driver_check_is_the_driver_too_old() {
        let isaac = "/buildAgent/work/45f70df4210b2e3e/source/cudamanager/src/CudaContextManager.cpp (635) : warning : CUDA driver version is 11020, expected at least 11040.\n\n/buildAgent/work/45f70df4210b2e3e/source/cudamanager/src/CudaContextManager.cpp (370) : info : NVIDIA Release 411 graphics driver and above is required for GPU acceleration.\n";
        assert!(looks_like(isaac));
        let m = parse_cuda_runtime_log(isaac);
        assert!(m.driver_too_old && !m.init_warning);
        assert_eq!(m.driver_found_version, Some(11020));
        assert_eq!(m.driver_required_version, Some(11040));
        assert_eq!(m.driver_cuda.as_deref(), Some("11.2"));
        assert!(
            m.driver_check_line
                .as_deref()
                .unwrap()
                .ends_with("expected at least 11040.")
        );
        assert_eq!(m.lines, 1);
        // PhysX 5: the message alone, as a program's own callback prints it
        let px5 = "CUDA driver version is 11080, expected driver version is at least 12000.\n";
        let m = parse_cuda_runtime_log(px5);
        assert!(m.driver_too_old);
        assert_eq!(
            (m.driver_found_version, m.driver_required_version),
            (Some(11080), Some(12000))
        );
        // numbers PhysX would not print (the driver at or above what it needs), a wording
        // without the expected version, and PyTorch's own insufficient-driver text are not it
        for t in [
            "CUDA driver version is 12040, expected at least 11040.\n",
            "CUDA driver version is 12000, expected driver version is at least 12000.\n",
            "the CUDA driver version is 11.2, expected at least 11.4 by the wheel\n",
            "CUDA driver version is 11020\n",
        ] {
            let m = parse_cuda_runtime_log(t);
            assert!(!m.driver_too_old, "{t}");
            assert_eq!(m.driver_required_version, None, "{t}");
        }
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
        );
        assert!(m.driver_check_line.is_none() && m.driver_required_version.is_none());
    }

    #[test]
    fn driver_too_old_warning_from_torch_2() {
        let m = parse_cuda_runtime_log(&fixture("cuda/torch_driver_too_old_12080.txt"));
        assert!(m.driver_too_old);
        assert!(m.init_warning);
        assert_eq!(m.driver_found_version, Some(12080));
        assert_eq!(m.driver_cuda.as_deref(), Some("12.8"));
        assert!(!m.no_kernel_image);
        assert!(m.incompatible_gpus.is_empty());
    }

    #[test]
    fn driver_too_old_assertion_from_torch_1() {
        // 1.x's `_check_driver` spread the message over lines and printed no "CUDA initialization:"
        let m = parse_cuda_runtime_log(&fixture("cuda/torch1_driver_too_old_9000.txt"));
        assert!(m.driver_too_old);
        assert!(!m.init_warning);
        assert_eq!(m.driver_found_version, Some(9000));
        assert_eq!(m.driver_cuda.as_deref(), Some("9.0"));
    }

    #[test]
    fn gpu_not_in_the_build_lists_what_the_build_has() {
        let m = parse_cuda_runtime_log(&fixture("cuda/sm_120_not_compatible.txt"));
        assert_eq!(m.incompatible_gpus.len(), 1);
        let g = &m.incompatible_gpus[0];
        assert_eq!(g.name, "NVIDIA GeForce RTX 5060 Ti");
        assert_eq!(g.capability, "sm_120");
        assert_eq!(g.sm, 120);
        assert_eq!(
            g.supported,
            [
                "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"
            ]
        );
        assert!(!m.driver_too_old);
    }

    #[test]
    fn a_cuda_samples_error_code_is_read() {
        // github.com/NVIDIA/gpu-operator/issues/1043: the GPU operator's cuda-validator runs the
        // vectorAdd sample, which could not allocate (the fabric manager not running)
        let t = "Failed to allocate device vector A (error code system not yet initialized)! [Vector addition of 5000 elements]\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorSystemNotReady"]);
        assert_eq!(m.errors[0].code, Some(802));
        // github.com/NVIDIA/gpu-operator/issues/854's title: the same sample's unknown error
        let t = "Failed to allocate device vector A (error code unknown error)!\n";
        assert_eq!(parse_cuda_runtime_log(t).errors[0].code, Some(999));
        // a successful run prints no error code; text in the brackets that is not the
        // runtime's names nothing
        assert!(!looks_like(
            "[Vector addition of 50000 elements]\nCopy input data from the host memory to the CUDA device\nTest PASSED\nDone\n"
        ));
        assert!(
            parse_cuda_runtime_log("step failed (error code banana split)!\n")
                .errors
                .is_empty()
        );
    }

    #[test]
    fn gpu_burns_checks_are_read() {
        // wilicc/gpu-burn#92 (h139): 8x H100 80GB HBM3 without the Fabric Manager, each worker's
        // `what():` line, the first 802 and then the OS error of the others
        let t = "GPU 6: NVIDIA H100 80GB HBM3 ...\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  Error (gpu_burn-drv.cpp:298): OS call failed or operation not supported on this OS\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(
            m.error_names,
            ["cudaErrorSystemNotReady", "cudaErrorOperatingSystem"]
        );
        assert_eq!(m.errors[0].code, Some(802));
        assert_eq!(m.errors[1].code, Some(304));
        // the launcher's prefix and a described call (`Error in <desc> (<file>:<line>): …`)
        let m = parse_cuda_runtime_log(
            "Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:244): unknown error\n",
        );
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        // a text that is not the runtime's names nothing (cuBLAS's status strings, prose)
        assert!(
            parse_cuda_runtime_log("  what():  Error (gpu_burn-drv.cpp:122): the banana is ripe\n")
                .errors
                .is_empty()
        );
        assert!(!looks_like("Error (see above): please retry\n"));
        // a compiler's `file.cpp:12:` diagnostics are not this form
        assert!(!looks_like("gpu_burn-drv.cpp:298:5: error: expected ';'\n"));
    }

    #[test]
    fn faiss_cuda_verify_is_read_number_and_text_agreeing() {
        // NVIDIA/cuvs#2490 (h144): FAISS's `CUDA_VERIFY` through `FAISS_ASSERT_FMT`, as the
        // poster wrapped it over four lines, then compute-sanitizer's report
        let t = "Faiss assertion 'err__ == cudaSuccess' failed in\n  faiss::gpu::Tensor<float,2,true,long,DefaultPtrTraits>::copyFrom(..., cudaStream_t)\n  at .../faiss/gpu/utils/Tensor-inl.cuh:191;\n  details: CUDA error 700 an illegal memory access was encountered\n\n========= Invalid __global__ read of size 16 bytes\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(m.errors[0].code, Some(700));
        assert_eq!(m.errors[0].category, "memory-access");
        assert_eq!(m.lines, 1);
        // FAISS's own one-line form, with an out of memory
        let m = parse_cuda_runtime_log(
            "Faiss assertion 'err__ == cudaSuccess' failed in void faiss::gpu::allocMemorySpaceV(faiss::gpu::MemorySpace, void**, size_t) at /faiss/gpu/utils/MemorySpace.cpp:69; details: CUDA error 2 out of memory\n",
        );
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        // a number that is not the text's, or a text that is not the runtime's, names nothing
        assert!(
            parse_cuda_runtime_log(
                "details: CUDA error 2 an illegal memory access was encountered\n"
            )
            .errors
            .is_empty()
        );
        assert!(
            parse_cuda_runtime_log("we saw CUDA error 700 times in the log\n")
                .errors
                .is_empty()
        );
        assert!(!looks_like("CUDA error 12 reasons why your build fails\n"));
    }

    #[test]
    fn a_failed_calls_runtime_text_is_read() {
        // MrNeRF/LichtFeld-Studio#649 (h144): the memory pool's log after an earlier kernel's
        // illegal access, then the program's own lines
        let t = "cudaMallocAsync failed: an illegal memory access was encountered\nFailed to allocate from memory pool\nTraining error: Shape mismatch: rendered and gt_image must have same shape\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(m.lines, 1);
        // LichtFeld's other forms: a prefix, a trailing clause, `retry`, `for bucket N`
        let m = parse_cuda_runtime_log("[MEM] cudaMalloc failed: out of memory, trimming...\n");
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        let m = parse_cuda_runtime_log("[MEM] cudaMalloc retry failed: out of memory\n");
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        let m = parse_cuda_runtime_log(
            "[warn] cudaMallocAsync failed for bucket 268435456: an illegal memory access was encountered\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        // other programs' copies: a class prefix, the call with its arguments, a driver call
        let m = parse_cuda_runtime_log(
            "RuntimeError: CudaBuffer: cudaMallocAsync failed: out of memory\n",
        );
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        let m = parse_cuda_runtime_log(
            "cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost) failed: an illegal memory access was encountered\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        let m = parse_cuda_runtime_log("cuCtxSynchronize failed: unspecified launch failure\n");
        assert_eq!(m.error_names, ["cudaErrorLaunchFailure"]);
        // a program's own text after the colon, another library's call, or prose name nothing
        assert!(
            parse_cuda_runtime_log("cudaMallocAsync failed: requested size too large\n")
                .errors
                .is_empty()
        );
        assert!(
            parse_cuda_runtime_log("cublasCreate failed: CUBLAS handle\n")
                .errors
                .is_empty()
        );
        assert!(
            parse_cuda_runtime_log("Build failed: out of memory\n")
                .errors
                .is_empty()
        );
        assert!(
            parse_cuda_runtime_log("Failed to allocate from memory pool\n")
                .errors
                .is_empty()
        );
        assert!(!looks_like("docker pull failed: unknown error\n"));
    }

    #[test]
    fn nccl_tests_and_nccl_cuda_checks_are_read() {
        // github.com/NVIDIA/nccl-tests/issues/264 (8x H100: the fabric manager is not running)
        let t = "# Using devices\ntest: Test CUDA failure common.cu:941 'system not yet initialized'\n .. test pid 54340: Test failure common.cu:891\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorSystemNotReady"]);
        assert_eq!(m.errors[0].code, Some(802));
        // github.com/NVIDIA/nccl-tests/issues/66 and /289: the short texts behind the prefix
        let m = parse_cuda_runtime_log("Test CUDA failure common.cu:730 'unknown error'\n");
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        let m = parse_cuda_runtime_log(
            "localhost: Test CUDA failure hypercube.cu:57 'invalid argument'\n .. localhost pid 180044: Test failure common.cu:383\n",
        );
        assert_eq!(m.error_names, ["cudaErrorInvalidValue"]);
        // github.com/NVIDIA/nccl-tests/issues/208: NCCL's own CUDACHECK WARN line, which
        // returns ncclUnhandledCudaError at once (`nccl_errors::cuda_failure_warn`): the NCCL
        // error's reason, read there, not a CUDA error of its own here
        let t = "noodle-4090-0:1896106:1896121 [1] enqueue.cc:47 NCCL WARN Cuda failure 'named symbol not found'\n";
        assert!(looks_like(t));
        assert!(parse_cuda_runtime_log(t).errors.is_empty());
        assert_eq!(
            crate::evidence::nccl_errors::parse_nccl_errors(t).error_results,
            ["ncclUnhandledCudaError"]
        );
        // github.com/NVIDIA/nccl-tests/issues/230: NCCL's Cuda failure turned into the NCCL
        // error the text shows ('unhandled cuda error'): that error's reason, not read here
        let t = "DESKTOP-GGBQPHK:64756:64771 [0] include/alloc.h:123 NCCL WARN Cuda failure 999 'unknown error'\nDESKTOP-GGBQPHK: Test NCCL failure common.cu:990 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n";
        assert!(parse_cuda_runtime_log(t).errors.is_empty());
        // github.com/NVIDIA/nccl-tests/issues/24: the same where the runtime's text is one the
        // quoted-message search also knows ('an illegal memory access was encountered')
        let t = "gpu5:35917:35917 [1] init.cu:194 NCCL WARN Cuda failure 'an illegal memory access was encountered'\ngpu5:35917:35917 [1] NCCL INFO init.cu:1143 -> 1\ngpu5: Test NCCL failure common.cu:343 'unhandled cuda error'\n";
        assert!(parse_cuda_runtime_log(t).errors.is_empty());
        // h105, github.com/tdrussell/diffusion-pipe/issues/292 (the `[%F %T] ` timestamp newer
        // NCCL puts before a WARN, the traceback cut before the DistBackendError line):
        // NCCLCHECK's `-> 1` frames of the same thread say the call returned
        // ncclUnhandledCudaError, the NCCL error whose reason the WARN names
        let t = "[2025-06-15 05:29:38] KhoaDesktop:1090:1348 [0] include/alloc.h:237 NCCL WARN Cuda failure 999 'unknown error'\nKhoaDesktop:1090:1348 [0] NCCL INFO include/alloc.h:338 -> 1\nKhoaDesktop:1090:1348 [0] NCCL INFO channel.cc:42 -> 1\nKhoaDesktop:1090:1090 [0] NCCL INFO group.cc:422 -> 1\n[rank0]: Traceback (most recent call last):\n";
        assert!(parse_cuda_runtime_log(t).errors.is_empty());
        // h108: the WARN alone (a log cut after it, PKU-YuanGroup/Open-Sora-Plan#386), or a
        // `-> 1` of another thread: only CUDACHECK/CUCHECK print `Cuda failure` at WARN, each
        // returning ncclUnhandledCudaError, so the failure is that NCCL error's reason
        for t in [
            "KhoaDesktop:1090:1348 [0] include/alloc.h:237 NCCL WARN Cuda failure 999 'unknown error'\n",
            "KhoaDesktop:1090:1348 [0] include/alloc.h:237 NCCL WARN Cuda failure 999 'unknown error'\nKhoaDesktop:1090:1400 [0] NCCL INFO init.cc:590 -> 1\n",
            "ins-7df6eojsifuykig9:3018453:3024011 [2] NCCL INFO Channel 01 : 2[1040] -> 0[1020] via SHM/direct/direct\n\nins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'\n",
        ] {
            assert!(parse_cuda_runtime_log(t).errors.is_empty(), "{t}");
        }
        // the same runtime text outside NCCL's WARN is still read: PyTorch's own CUDA error
        // beside it, and nccl-tests' `Test CUDA failure` (its own CUDACHECK, above)
        let t = "h:1:2 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
        assert_eq!(
            parse_cuda_runtime_log(t).error_names,
            ["cudaErrorIllegalAddress"]
        );
        // CUDACHECKIGNORE's INFO line: NCCL cleared the error and went on
        let t = "node1:123:456 [0] NCCL INFO misc/cudawrap.cc:100 Cuda failure 'an illegal memory access was encountered'\n";
        assert!(parse_cuda_runtime_log(t).errors.is_empty());
        // a PyTorch CUDA error beside an NCCL error is still read
        let t = "RuntimeError: CUDA error: an illegal memory access was encountered\nNCCL error in: x.cpp:1, unhandled cuda error, NCCL version 2.18.1\n";
        assert_eq!(
            parse_cuda_runtime_log(t).error_names,
            ["cudaErrorIllegalAddress"]
        );
        // nccl-tests' NCCL failure line and its trail are not CUDA errors
        assert!(!looks_like(
            "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'\n .. fastmoe pid 1: Test failure common.cu:1\n"
        ));
    }

    #[test]
    fn runtime_table_errors_500_400_900_and_appended_text() {
        // AbdBarho/stable-diffusion-webui-docker#694 (driver 555.85 under Docker Desktop/WSL2):
        // CUDAFunctions.cpp's `Error 500: ...`, the webui appending `: str`
        let t = "webui-docker-auto-1  | Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found: str\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorSymbolNotFound"]);
        assert_eq!(m.errors[0].code, Some(500));
        // transcriptionstream/transcriptionstream#13: the RuntimeError as torch raises it
        let m = parse_cuda_runtime_log(
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found\n",
        );
        assert_eq!(m.error_names, ["cudaErrorSymbolNotFound"]);
        // a number that disagrees with the text names nothing, appended text or not
        assert!(
            parse_cuda_runtime_log("Error 400: named symbol not found: str\n")
                .errors
                .is_empty()
        );
        // ggml-org/llama.cpp#2269's title; vllm-project/vllm NCCL WARN of a CUDA-graph capture
        let m = parse_cuda_runtime_log("RuntimeError: CUDA error: invalid resource handle\n");
        assert_eq!(m.error_names, ["cudaErrorInvalidResourceHandle"]);
        // (NCCL's WARN of it is ncclUnhandledCudaError's reason: `nccl_errors`, h108)
        let t = "10-64-29-12:20967:20967 [1] dev_runtime.cc:591 NCCL WARN Cuda failure 'operation not permitted when stream is capturing'\n";
        assert!(parse_cuda_runtime_log(t).errors.is_empty());
        let e = crate::evidence::nccl_errors::parse_nccl_errors(t);
        assert_eq!(e.error_results, ["ncclUnhandledCudaError"]);
        assert_eq!(
            e.errors[0].last_error.as_deref(),
            Some("Cuda failure 'operation not permitted when stream is capturing'")
        );
        // healthy: a line naming the error's class without an error (a docs heading)
        assert!(
            parse_cuda_runtime_log("CUDA error codes: see the runtime API\n")
                .errors
                .is_empty()
        );
    }

    #[test]
    fn cuda_error_quoted_in_prose_ends_at_the_quote() {
        // ultralytics/ultralytics#14367: the message in backticks inside a sentence
        let m = parse_cuda_runtime_log(
            "Within the first epoch training stops with error `CUDA error: out of memory` even tho `nvidia-smi` reports there to be 16 GB of VRAM left.\n",
        );
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        // in double quotes (xformers#845's title form)
        let m = parse_cuda_runtime_log(
            "it fails with \"CUDA error: invalid configuration argument\" above 65535\n",
        );
        assert_eq!(m.error_names, ["cudaErrorInvalidConfiguration"]);
        // healthy: prose about the error class, no runtime text after the colon
        assert!(
            parse_cuda_runtime_log("the `CUDA error:` prefix is what c10 prints\n")
                .errors
                .is_empty()
        );
    }

    #[test]
    fn nvrtc_refusing_the_gpus_architecture_is_read() {
        // github.com/cupy/cupy/issues/9475: CuPy 13.6 on CUDA 13.0's NVRTC and a GTX 1080 (its
        // title carries NVRTC's log line; the traceback names NVRTC_ERROR_INVALID_OPTION)
        let t = include_str!(
            "../../tests/fixtures/corpus/h158_cudaerr_cupy9475_gtx1080_cuda13_nvrtc_invalid_arch.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert!(m.nvrtc_arch_rejected);
        assert!(!m.no_kernel_image);
        // NVRTC_ERROR_INVALID_OPTION alone (some other option refused) says nothing of the
        // architecture; nor does a compile that went through
        let other = "cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_INVALID_OPTION (5)\n";
        assert!(!parse_cuda_runtime_log(other).nvrtc_arch_rejected);
        let fine = "NVRTC compilation error: kern.cu(3): error: identifier \"foo\" is undefined\n";
        assert!(!parse_cuda_runtime_log(fine).nvrtc_arch_rejected);
    }

    #[test]
    fn no_kernel_image_and_cuda_error_hints() {
        let m = parse_cuda_runtime_log(&fixture("cuda/no_kernel_image_traceback.txt"));
        assert!(m.no_kernel_image);
        assert!(m.async_hint);
        assert_eq!(m.errors[0].name, "cudaErrorNoKernelImageForDevice");
        assert_eq!(m.errors[0].code, Some(209));
        assert_eq!(m.errors[0].category, "arch");
    }

    #[test]
    fn illegal_memory_access_is_named_with_its_number() {
        let m = parse_cuda_runtime_log(&fixture("cuda/illegal_memory_access.txt"));
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(m.errors[0].code, Some(700));
        assert_eq!(m.errors[0].category, "memory-access");
        assert!(!m.no_kernel_image && !m.driver_too_old);
    }

    #[test]
    fn an_allocators_own_oom_report_is_not_a_cuda_error() {
        // NovaSky-AI/SkyRL#624 (XLA's cudaMallocAsync allocator asked for 1.1 TiB) and
        // tensorflow/tensorflow#60401 (TF's BFC allocator's device allocation): each the
        // framework's out-of-memory report, read by the memory evidence
        let xla = "E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 cuMemAllocAsync failed to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\n Reported by CUDA: Free memory/Total memory: 22635544576/85095874560\n";
        assert!(parse_cuda_runtime_log(xla).errors.is_empty());
        let tf = "2023-04-23 01:00:06.362905: I tensorflow/stream_executor/cuda/cuda_driver.cc:733] failed to allocate 8.41G (9029127168 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n";
        assert!(parse_cuda_runtime_log(tf).errors.is_empty());
        // the driver's result elsewhere is still named (a CUDA call that failed outright)
        let other = "RuntimeError: CUDA error: out of memory\n";
        assert_eq!(
            parse_cuda_runtime_log(other).error_names,
            ["cudaErrorMemoryAllocation"]
        );
        let ctx = "CUDA_ERROR_OUT_OF_MEMORY: out of memory while creating the context\n";
        assert_eq!(
            parse_cuda_runtime_log(ctx).error_names,
            ["cudaErrorMemoryAllocation"]
        );
    }

    #[test]
    fn enokis_pool_out_of_memory_is_the_runtimes_allocation_failure() {
        // uiuc-graphics/psdr-cuda#7 (h128): Enoki's `cuda_malloc()` raised in Python
        let t = include_str!(
            "../../tests/fixtures/corpus/h128_cudaerr_psdrcuda7_enoki_cuda_malloc_oom_traceback.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        assert_eq!(m.errors[0].code, Some(2));
        assert_eq!(
            m.errors[0].line,
            "RuntimeError: cuda_malloc(): out of memory!"
        );
        // the managed and pinned-host pools say the same of their calls
        for l in [
            "RuntimeError: cuda_managed_malloc(): out of memory!\n",
            "cuda_host_malloc(): out of memory!\n",
        ] {
            assert_eq!(
                parse_cuda_runtime_log(l).error_names,
                ["cudaErrorMemoryAllocation"],
                "{l}"
            );
        }
        // its other messages, a Python MemoryError and prose are not it
        for l in [
            "cuda_malloc(): internal error!\n",
            "cuda_malloc_trim(): freed 3 arrays (1 GiB device memory)\n",
            "my_malloc(): out of memory!\n",
            "MemoryError: out of memory\n",
            "it ran out of memory in cuda_malloc\n",
        ] {
            assert!(!looks_like(l), "{l}");
            assert!(parse_cuda_runtime_log(l).errors.is_empty(), "{l}");
        }
    }

    #[test]
    fn flashinfers_op_failed_with_error_names_the_runtimes_text() {
        // vLLM#37754 via StepCodex (h136): the TVM-FFI check's head on the line before
        let t = include_str!(
            "../../tests/fixtures/corpus/h136_cudaerr_stepcodex_vllm37754_flashinfer_illegal_address.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(
            m.errors[0].line,
            "BatchPrefillWithPagedKVCache failed with error an illegal memory access was encountered"
        );
        // the TORCH_CHECK form of FlashInfer before TVM-FFI, on one line, and its other ops
        for (l, name) in [
            (
                "RuntimeError: BatchDecodeWithPagedKVCache failed with error out of memory\n",
                "cudaErrorMemoryAllocation",
            ),
            (
                "Check failed: (status == cudaSuccess) is false: SamplingFromProbs failed with error no kernel image is available for execution on the device\n",
                "cudaErrorNoKernelImageForDevice",
            ),
        ] {
            assert_eq!(parse_cuda_runtime_log(l).error_names, [name], "{l}");
        }
        // a one-word program, a text the runtime does not print, and prose are not it
        for l in [
            "Command failed with error out of memory\n",
            "npm install failed with error out of memory\n",
            "BatchPrefillWithPagedKVCache failed with error code 7\n",
            "the prefill failed with error an illegal memory access was encountered\n",
        ] {
            assert!(parse_cuda_runtime_log(l).errors.is_empty(), "{l}");
        }
    }

    #[test]
    fn tensorrt_llms_cuda_runtime_error_in_a_call_names_the_runtimes_text() {
        // NVIDIA/TensorRT-Edge-LLM#50 (h136): the terminate handler's `what():` line
        let t = include_str!(
            "../../tests/fixtures/corpus/h136_cudaerr_trtedgellm50_myelin_cuda_error_700_cudafreehost.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(
            m.errors[0].line,
            "what(): CUDA runtime error in cudaFreeHost(data): an illegal memory access was encountered"
        );
        // TensorRT-LLM's own prefix, a namespaced call with several arguments
        let l = "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/src/cpp/tensorrt_llm/runtime/tllmBuffers.h:133)\n";
        assert_eq!(
            parse_cuda_runtime_log(l).error_names,
            ["cudaErrorMemoryAllocation"]
        );
        // a program's own text behind the same words names nothing
        for l in [
            "CUDA runtime error in cudaFreeHost(data): the buffer was never mapped\n",
            "CUDA runtime error in my_kernel: bad grid\n",
        ] {
            assert!(parse_cuda_runtime_log(l).errors.is_empty(), "{l}");
        }
    }

    #[test]
    fn nd4js_failed_device_allocation_is_cudamallocs_failure() {
        // Stack Overflow's DL4J question on a 1 GB GTX 750 (h136)
        let t = include_str!(
            "../../tests/fixtures/corpus/h136_cudaerr_whosebug_dl4j_failed_to_allocate_device_memory.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        assert_eq!(m.errors[0].count, 2);
        assert!(m.errors[0].line.starts_with("Exception in thread"));
        // the cuDNN helper's fallback that carried on, host memory, and prose are not it
        for l in [
            "2019-01-12 14:47:44 WARN  org.deeplearning4j.nn.layers.BaseCudnnHelper Cannot allocate 300000000 bytes of device memory (CUDA error = 2), proceeding with host memory\n",
            "java.lang.RuntimeException: Failed to allocate 4096 bytes from HOST memory\n",
            "Failed to allocate memory from DEVICE [0]\n",
        ] {
            assert!(parse_cuda_runtime_log(l).errors.is_empty(), "{l}");
        }
    }

    #[test]
    fn mallocmcs_cuda_error_is_read_whole_or_wrapped() {
        // ComputationalRadiationPhysics/picongpu#3064 (h128): the terminate handler's lines,
        // the message wrapped after `(42):`
        let t = include_str!(
            "../../tests/fixtures/corpus/h128_cudaerr_picongpu3064_mallocmc_cuda_error_oom_v100.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        assert_eq!(m.errors[0].line, "error: out of memory");
        // the same message on one line, caught and printed or thrown
        let one = "  what():  /src/mallocMC/reservePoolPolicies/SimpleCudaMalloc_impl.hpp(42): error: out of memory\n";
        assert!(looks_like(one));
        assert_eq!(
            parse_cuda_runtime_log(one).error_names,
            ["cudaErrorMemoryAllocation"]
        );
        let illegal = "include/mallocMC/mallocMC_utils.hpp(88): error: an illegal memory access was encountered\n";
        assert_eq!(
            parse_cuda_runtime_log(illegal).error_names,
            ["cudaErrorIllegalAddress"]
        );
        // nvcc's and MSVC's diagnostics, a text the runtime does not print, a path that is not
        // a source file, and a `(N):` line with no `error:` after it name nothing
        for l in [
            "kernel.cu(12): error: identifier \"x\" is undefined\n",
            "main.cpp(7): error C2065: 'x': undeclared identifier\n",
            "pool.hpp(42): error: pool exhausted\n",
            "run.log(42): error: out of memory\n",
            "pool.hpp(42):\nwarning: out of memory\n",
            "pool.hpp(42):\n\nerror: out of memory\n",
            "error: out of memory\n",
        ] {
            assert!(parse_cuda_runtime_log(l).errors.is_empty(), "{l}");
        }
        // the class alone says a CUDA::error was thrown: the text is read, with nothing named
        let thrown = "terminate called after throwing an instance of 'CUDA::error'\n";
        assert!(looks_like(thrown));
        assert!(parse_cuda_runtime_log(thrown).errors.is_empty());
    }

    #[test]
    fn ctranslate2_and_tensorview_failed_with_error_are_read() {
        // SYSTRAN/faster-whisper#442: CTranslate2's CUDA_CHECK, raised in Python
        let m = parse_cuda_runtime_log(
            "    result = self.model.generate(\nRuntimeError: CUDA failed with error out of memory\n",
        );
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        assert!(looks_like(
            "RuntimeError: CUDA failed with error out of memory\n"
        ));
        // OpenNMT/CTranslate's cudaAssert: the same text, then where it failed
        let m = parse_cuda_runtime_log(
            "CUDA failed with error an illegal memory access was encountered at /src/cuda/primitives.cu:42\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        // tensorview's TV_CHECK_CUDA_ERR_V2 and TV_CUDART_RESULT_CHECK (traveller59/spconv#392's
        // title): the number agrees with the text
        let m = parse_cuda_runtime_log(
            "cuda execution failed with error 700 an illegal memory access was encountered\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        let m = parse_cuda_runtime_log(
            "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.\n",
        );
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        // healthy: faster-whisper's start line (Purfview/whisper-standalone-win#50), a number
        // alone (spconv 1.x's `cuda execution failed with error 98`, traveller59/spconv#287: the
        // enum's numbers differ between CUDA releases), a number that disagrees with the text,
        // and a text that is not the runtime's
        for healthy in [
            "Standalone Faster-Whisper r141.3 running on: CUDA\n",
            "RuntimeError: src/spconv/indice.cu 120 cuda execution failed with error 98\n",
            "cuda failed with error 700 out of memory. use CUDA_LAUNCH_BLOCKING=1\n",
            "CUDA failed with error while loading the model\n",
        ] {
            assert!(
                parse_cuda_runtime_log(healthy).errors.is_empty(),
                "{healthy}"
            );
        }
    }

    #[test]
    fn torch_device_count_unknown_error_is_cuda_error_999() {
        // h108, RazgrizHsu/immich-deduper#126: `device_count_impl`'s text for
        // `case cudaErrorUnknown:` behind `device_count()`'s "CUDA initialization: " warning
        let t = "/usr/local/lib/python3.12/site-packages/torch/cuda/__init__.py:180: UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero. (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:119.)\n  return torch._C._cuda_getDeviceCount() > 0\n";
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        assert_eq!(m.errors[0].code, Some(999));
        assert!(m.unknown_error_env && m.init_warning);
        // the same text raised by `device_count_ensure_non_zero` (a RuntimeError)
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.\n",
        );
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        // neighbours: `cudaErrorInitializationError`'s text stays a flag (its words allow a
        // machine without a GPU), and no driver at all is not a runtime error
        let m = parse_cuda_runtime_log(
            "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n",
        );
        assert!(m.driver_init_failed && m.errors.is_empty());
        let m = parse_cuda_runtime_log(
            "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx (Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n",
        );
        assert!(m.no_driver && m.errors.is_empty());
    }

    #[test]
    fn torch_unknown_error_head_alone_is_cuda_error_999() {
        // h127: tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark#6, the exception quoted in
        // backticks in a comment, cut after `_cuda_init`'s RuntimeError head
        let t = include_str!(
            "../../tests/fixtures/corpus/h127_comment_glm53spark6_cuda_unknown_error_cuda_init.txt"
        );
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        assert!(m.unknown_error_env);
        // the warning's head, cut by its poster at the dash or the line's end
        for t in [
            "UserWarning: CUDA initialization: CUDA unknown error\n",
            "UserWarning: CUDA initialization: CUDA unknown error - see above\n",
            "raised \"RuntimeError: CUDA unknown error\" on the head node\n",
        ] {
            assert_eq!(
                parse_cuda_runtime_log(t).error_names,
                ["cudaErrorUnknown"],
                "{t}"
            );
        }
        // neighbours: the words in prose without torch's head, a longer word after the head,
        // the runtime's own `CUDA error: unknown error` (read by its name, not as this text)
        for t in [
            "we keep getting a CUDA unknown error at startup\n",
            "RuntimeError: CUDA unknown errors_total counter\n",
        ] {
            assert!(!looks_like(t), "{t}");
            let m = parse_cuda_runtime_log(t);
            assert!(m.errors.is_empty() && !m.unknown_error_env, "{t}");
        }
        let m = parse_cuda_runtime_log("RuntimeError: CUDA error: unknown error\n");
        assert!(!m.unknown_error_env);
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
    }

    #[test]
    fn torch_driver_api_check_is_read() {
        // pytorch/pytorch#192330: C10_CUDA_DRIVER_CHECK's `CUDA driver error: <cuGetErrorString>`
        // from the expandable-segments allocator's cuMemSetAccess
        let m = parse_cuda_runtime_log("RuntimeError: CUDA driver error: unknown error\n");
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        let m = parse_cuda_runtime_log("RuntimeError: CUDA driver error: out of memory\n");
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        // healthy: the same issue's driver-attribute line
        assert!(
            parse_cuda_runtime_log(
                "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 1\n"
            )
            .errors
            .is_empty()
        );
    }

    #[test]
    fn healthy_torch_output_names_nothing() {
        // a healthy collect_env: torch 2.0.1+cu117 with CUDA available
        let text = fixture("collect_env/torch20_windows_1050ti_healthy.txt");
        let m = parse_cuda_runtime_log(&text);
        assert!(m.errors.is_empty());
        assert!(!m.driver_too_old && !m.no_kernel_image && m.incompatible_gpus.is_empty());
        assert!(!looks_like(&text));
    }

    #[test]
    fn torch_2_8_min_max_warning_is_old_only_below_the_minimum() {
        // Kaggle/docker-python#1546: a P100 (6.0) below a (7.0) - (12.0) build is old
        let t = "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:435: UserWarning: \n    Found GPU0 Tesla P100-PCIE-16GB which is of cuda capability 6.0.\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (7.0) - (12.0)\n    \n  queued_call()\n";
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.old_gpus.len(), 1);
        assert_eq!(m.old_gpus[0].min_supported.as_deref(), Some("7.0"));
        // pytorch/pytorch#172629: a GB10 (12.1) above it runs the sm_120 cubins: not old
        let t = "UserWarning:\n    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (8.0) - (12.0) \n";
        assert!(parse_cuda_runtime_log(t).old_gpus.is_empty());
        // eugr/spark-vllm-docker#15: the same on one line
        let t = "Found GPU0 NVIDIA GB10 which is of cuda capability 12.1. Minimum and Maximum cuda capability supported by this version of PyTorch is (8.0) - (12.0)\n";
        assert!(parse_cuda_runtime_log(t).old_gpus.is_empty());
    }

    #[test]
    fn torch_2_11_capability_warning_names_the_gpu_and_the_build_list() {
        // pytorch/pytorch#182250: two V100s (7.0) under torch 2.11.0+cu128, collect_env's head
        let t = "Collecting environment information...\n/home/matti/test/test_torch_2.7/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:371: UserWarning: Found GPU0 Tesla V100-PCIE-32GB which is of compute capability (CC) 7.0.\nThe following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:\n- 7.5 which supports hardware CC >=7.5,<8.0\n- 8.0 which supports hardware CC >=8.0,<9.0 except {8.7}\n- 8.6 which supports hardware CC >=8.6,<9.0 except {8.7}\n- 9.0 which supports hardware CC >=9.0,<10.0\n- 10.0 which supports hardware CC >=10.0,<11.0 except {10.1}\n- 12.0 which supports hardware CC >=12.0,<13.0\nPlease follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that supports one of these CUDA versions: 12.6, 12.8\n  _warn_unsupported_code(d, device_cc, code_ccs)\n/home/matti/test/test_torch_2.7/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:371: UserWarning: Found GPU1 Tesla V100-PCIE-32GB which is of compute capability (CC) 7.0.\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.incompatible_gpus.len(), 1);
        let g = &m.incompatible_gpus[0];
        assert_eq!((g.name.as_str(), g.sm), ("Tesla V100-PCIE-32GB", 70));
        assert_eq!(
            g.supported,
            ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
        );
        // vllm-project/vllm#39878: the same behind vLLM's worker prefix, 12.0 listed twice (the
        // cubin and the PTX of one architecture)
        let t = "(Worker pid=369) /usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:371: UserWarning: Found GPU1 Tesla V100-SXM2-32GB which is of compute capability (CC) 7.0.\n(Worker pid=369) The following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:\n(Worker pid=369) - 7.5 which supports hardware CC >=7.5,<8.0\n(Worker pid=369) - 12.0 which supports hardware CC >=12.0,<13.0\n(Worker pid=369) - 12.0 which supports hardware CC >=12.0,<13.0\n";
        assert!(looks_like(t));
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.incompatible_gpus[0].sm, 70);
        assert_eq!(m.incompatible_gpus[0].supported, ["sm_75", "sm_120"]);
        // a healthy 2.11 start-up prints none of it; the older wording stays the older reader's
        assert!(!looks_like(
            "PyTorch version: 2.11.0+cu128\nGPU 0: NVIDIA GeForce RTX 5080\n"
        ));
        let m = parse_cuda_runtime_log(
            "    Found GPU0 GeForce GTX 770 which is of cuda capability 3.0.\n",
        );
        assert!(m.incompatible_gpus.is_empty() && m.old_gpus.len() == 1);
    }

    #[test]
    fn small_messages_from_the_sources() {
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n",
        );
        assert_eq!(m.error_names, ["cudaErrorAssert"]);
        assert!(m.async_hint);
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n",
        );
        assert!(
            m.error_names
                .contains(&"CUBLAS_STATUS_EXECUTION_FAILED".to_string())
        );
        let m = parse_cuda_runtime_log(
            "RuntimeError: cuDNN error: CUDNN_STATUS_SUCCESS\nRuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n",
        );
        assert_eq!(m.error_names, ["CUDNN_STATUS_INTERNAL_ERROR"]);
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
        );
        assert!(m.insufficient_driver);
        let m = parse_cuda_runtime_log(
            "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx (Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n",
        );
        assert!(m.no_driver && m.init_warning && !m.driver_too_old);
        let m = parse_cuda_runtime_log(
            "    Found GPU0 GeForce GTX 770 which is of cuda capability 3.0.\n    PyTorch no longer supports this GPU because it is too old.\n    The minimum cuda capability that we support is 3.5.\n",
        );
        assert_eq!(m.old_gpus[0].capability, "3.0");
        assert_eq!(m.old_gpus[0].min_supported.as_deref(), Some("3.5"));
        let m = parse_cuda_runtime_log("torch: 2.11.0+cu130 cuda: False\n");
        assert_eq!(m.torch_wheel_cuda, ["cu130"]);
        assert!(!looks_like("the driver is fine and CUDA works\n"));
    }

    #[test]
    fn thc_fail_line_and_the_exception_it_raises() {
        // github.com/torch/cutorch/pull/330, the PR's example output: the FAIL line, then the
        // `cuda runtime error (N)` that `_THError` raised (the pre-10.1 number 77)
        let m = parse_cuda_runtime_log(
            "THCudaCheck FAIL file=/home/ubuntu/git/cutorch/lib/THC/THCTensorMath.cu line=303 error=77 : an illegal memory access was encountered\nluajit: cuda runtime error (77) : an illegal memory access was encountered at /home/ubuntu/git/cutorch/lib/THC/generic/THCStorage.c:147\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(m.errors[0].code, Some(77), "the number as printed");
        assert_eq!(m.errors[0].category, "memory-access");
        assert_eq!(m.errors[0].count, 2);
        // github.com/ayooshkathuria/pytorch-yolo-v3/issues/88: error 30, unknown error (Windows path)
        let m = parse_cuda_runtime_log(
            "THCudaCheck FAIL file=..\\aten\\src\\THC\\THCGeneral.cpp line=87 error=30 : unknown error\n",
        );
        assert_eq!(m.error_names, ["cudaErrorUnknown"]);
        assert_eq!(m.errors[0].code, Some(30));
        // github.com/zhanghang1989/PyTorch-Encoding/issues/23: an assert, FAIL indented
        let m = parse_cuda_runtime_log(
            "  THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=59 : device-side assert triggered\nRuntimeError: cuda runtime error (59) : device-side assert triggered at /pytorch/torch/lib/THC/generic/THCStorage.cu:58\n",
        );
        assert_eq!(m.error_names, ["cudaErrorAssert"]);
        assert!(looks_like(
            "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50\n"
        ));
    }

    #[test]
    fn thc_start_up_check_pytorch_caught_is_not_an_error() {
        // github.com/uber-research/UPSNet/issues/45 (PyTorch 1.0; pytorch/pytorch#15797): the
        // FAIL line alone, the model runs on
        let m = parse_cuda_runtime_log(
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument\n",
        );
        assert!(m.errors.is_empty());
        // the same check beside the error that ended the run (fanq15/FSOD-code#54)
        let m = parse_cuda_runtime_log(
            "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1535491974311/work/aten/src/THC/THCGeneral.cpp line=663 error=11 : invalid argument\ncudaCheckError() failed : no kernel image is available for execution on the device\n",
        );
        assert_eq!(m.error_names, ["cudaErrorNoKernelImageForDevice"]);
        assert!(m.no_kernel_image);
    }

    #[test]
    fn torch_search_for_line_joined_onto_the_message_ends_it() {
        // flashinfer-ai/flashinfer#4957: a CI summary of torch 2.9's AcceleratorError, its lines
        // joined with spaces and cut at `migh`
        let t = "torch.AcceleratorError: CUDA error: unspecified launch failure Search for `cudaErrorLaunchFailure' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information. CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below migh\n";
        let m = parse_cuda_runtime_log(t);
        assert_eq!(m.error_names, ["cudaErrorLaunchFailure"]);
        assert_eq!(m.errors.len(), 1);
        // the message on its own line, as torch prints it, reads the same
        let own = "torch.AcceleratorError: CUDA error: unspecified launch failure\nSearch for `cudaErrorLaunchFailure' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n";
        assert_eq!(
            parse_cuda_runtime_log(own).error_names,
            ["cudaErrorLaunchFailure"]
        );
    }

    #[test]
    fn a_message_padded_to_the_terminal_width_is_named() {
        // github.com/hpcaitech/Open-Sora/issues/694: lines padded with spaces
        let line = format!(
            "RuntimeError: CUDA error: an illegal memory access was encountered{}\n",
            " ".repeat(200)
        );
        assert_eq!(
            parse_cuda_runtime_log(&line).error_names,
            ["cudaErrorIllegalAddress"]
        );
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("cuda/sm_120_not_compatible.txt");
        for p in prefixes(&text, 5) {
            let _ = parse_cuda_runtime_log(p);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_cuda_runtime_log(&s);
        }

        #[test]
        fn garbled_versions_never_panic(v in "[0-9]{1,12}", sm in "[0-9]{1,9}") {
            let t = format!("The NVIDIA driver on your system is too old (found version {v}).\nX with CUDA capability sm_{sm} is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_{sm}.\n");
            let _ = parse_cuda_runtime_log(&t);
        }
    }

    #[test]
    fn device_count_error_n_is_named_when_number_and_text_agree() {
        // PKU-YuanGroup/Video-LLaVA#22 (torch's warning and RuntimeError, Error 804)
        let m = parse_cuda_runtime_log(
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)\n",
        );
        assert!(m.forward_compat_unsupported && m.init_warning);
        assert_eq!(m.error_names, ["cudaErrorCompatNotSupportedOnDevice"]);
        // chenfei-wu/TaskMatrix#379: the message wrapped, `Error 804:` on the second line
        let wrapped = "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have \nalready set an error? Error 804: forward compatibility was attempted on non supported HW\n";
        assert!(looks_like(wrapped));
        assert!(parse_cuda_runtime_log(wrapped).forward_compat_unsupported);
        // AIR-DISCOVER/ICRA2024-Sim2Real-AXS#5: the same in double quotes
        assert!(
            parse_cuda_runtime_log("\"RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW\"\n")
                .forward_compat_unsupported
        );
        // a number that does not match the text names nothing, nor do healthy collect_env lines
        // (vllm-project/vllm#12030: torch 2.5.1+cu124, CUDA available)
        assert!(!looks_like("Error 804: out of memory\n"));
        let h = parse_cuda_runtime_log("PyTorch version: 2.5.1+cu124\nIs CUDA available: True\n");
        assert!(!h.forward_compat_unsupported && h.errors.is_empty());
    }

    #[test]
    fn another_programs_cuda_error_wrapper_is_read_when_its_text_is_the_runtimes() {
        // eliabntt/GRADE-RR#5 (Isaac Lab, Carbonite log): `CUDA error in memcpy: <text>: <file>`
        let kit = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/h48_cudaerr_graderr5_isaaclab_memcpy_illegal.log"),
        )
        .unwrap();
        assert!(looks_like(&kit));
        let m = parse_cuda_runtime_log(&kit);
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        assert_eq!(m.errors[0].count, 1);
        for (problem, name) in [
            // isaac-sim/IsaacLab#346: omni.physx.tensors, `CUDA error: <text>: <file>: <line>`
            (
                "2024-04-05 09:49:52 [34,449ms] [Error] [omni.physx.tensors.plugin] CUDA error: an illegal memory access was encountered: ../../../extensions/runtime/source/omni.physx.tensors/plugins/gpu/GpuRigidBodyView.cpp: 228\n",
                "cudaErrorIllegalAddress",
            ),
            // leggedrobotics/legged_gym#64: Isaac Gym's `Gym cuda error: <text>: <file>: <line>`
            (
                "[Error] [carb.gym.plugin] Gym cuda error: an illegal memory access was encountered: ../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1459\n",
                "cudaErrorIllegalAddress",
            ),
            // ollama#4226: ggml's `CUDA error: <text>` inside ollama's JSON error as the poster
            // retyped it, the space after the colon lost and the escaped line end split
            (
                "{\"error\":{\"message\":\"timed out waiting for llama runner to start:CUDA error:uncorrectable ECC error encountered\\\nn current device:0,in function ggml cuda_compute_forward at /go/src/github.com/ollama/ollama/11m/1lama.cpp/ggml\n",
                "cudaErrorECCUncorrectable",
            ),
            // the same relayed as JSON writes it, `\n` escaped
            (
                "{\"error\":\"llama runner process has terminated: CUDA error: an illegal memory access was encountered\\n  current device: 0, in function ggml_backend_cuda_synchronize\"}\n",
                "cudaErrorIllegalAddress",
            ),
            // isaac-sim/IsaacLab#1737: carb.cudainterop's `CUDA error 700: <name> - <text>)`
            (
                "2025-01-27 16:43:39 [23,702ms] [Error] [carb.cudainterop.plugin] CUDA error 700: cudaErrorIllegalAddress - an illegal memory access was encountered)\n",
                "cudaErrorIllegalAddress",
            ),
        ] {
            assert!(looks_like(problem), "{problem}");
            assert_eq!(
                parse_cuda_runtime_log(problem).error_names,
                [name],
                "{problem}"
            );
        }
        // the same logs' lines that name no runtime error (isaac-sim/IsaacLab#1737's PhysX
        // warning and its texture failure), and a program's own words after the colon
        for healthy in [
            "2025-01-27 16:43:39 [23,656ms] [Warning] [omni.physx.plugin] PhysX warning: CUDA context validation failed, FILE C:\\g\\110116602\\physx\\source\\cudamanager\\src\\CudaContextManager.cpp, LINE 638\n",
            "2025-01-27 16:43:39 [23,704ms] [Error] [gpu.foundation.plugin] Texture creation failed for the device: 0.\n",
            "CUDA error in kernel launch: grid too large for this toy example\n",
            // no space and a program's own words: still not the runtime's text
            "CUDA error:see the log above\\n err\n",
        ] {
            assert!(!looks_like(healthy), "{healthy}");
            assert!(
                parse_cuda_runtime_log(healthy).error_names.is_empty(),
                "{healthy}"
            );
        }
    }

    #[test]
    fn a_kernel_launch_checks_cuda_kernel_launch_error_line_is_read() {
        // h134: RyanKor/cuda-programming troubleshooting/tutorial/Readme.md, a hello-world built
        // with nvcc 12.6 on a driver of an older CUDA
        let t = "CUDA kernel launch error: the provided PTX was compiled with an unsupported toolchain.\n";
        assert!(looks_like(t));
        assert_eq!(
            parse_cuda_runtime_log(t).error_names,
            ["cudaErrorUnsupportedPtxVersion"]
        );
        // the same check in another case, `fprintf(stderr, "CUDA Kernel Launch Error: %s\n", …)`,
        // and the launch check without `kernel`
        for (line, name) in [
            (
                "CUDA Kernel Launch Error: too many resources requested for launch\n",
                "cudaErrorLaunchOutOfResources",
            ),
            (
                "CUDA launch error: invalid device function\n",
                "cudaErrorInvalidDeviceFunction",
            ),
        ] {
            assert!(looks_like(line), "{line}");
            assert_eq!(parse_cuda_runtime_log(line).error_names, [name], "{line}");
        }
        // a program's own words after the colon, and a launch error of no CUDA, name nothing
        for healthy in [
            "CUDA kernel launch error: grid dimension too large for my tiling\n",
            "Kernel launch error: the queue was full, retrying\n",
            "OpenCL kernel launch error: invalid device function\n",
        ] {
            assert!(
                parse_cuda_runtime_log(healthy).error_names.is_empty(),
                "{healthy}"
            );
        }
    }

    #[test]
    fn a_runtime_text_quoted_alone_in_a_post_is_read() {
        // github.com/jcjohnson/neural-style/issues/312 (whole issue body, Lua Torch on a K40c):
        // the runtime's text in curly quotes inside the poster's sentence
        let post = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/h18_post_neuralstyle312_ecc_curly_quoted_prose.md"),
        )
        .unwrap();
        assert!(looks_like(&post));
        let m = parse_cuda_runtime_log(&post);
        assert_eq!(m.error_names, vec!["cudaErrorECCUncorrectable"]);
        // the words unquoted, a short text quoted, and a healthy question
        // (github.com/NVIDIA/nccl/issues/631) are not read as an error
        for healthy in [
            "Is an uncorrectable ECC error encountered on this card a hardware fault?\n",
            "it said \"out of memory\" but the machine has 64 GB\n",
            "I would like to know what potential problems can arise when NCCL_P2P_DISABLE is set to 1 like this.\n",
        ] {
            assert!(!looks_like(healthy), "{healthy}");
            assert!(
                parse_cuda_runtime_log(healthy).error_names.is_empty(),
                "{healthy}"
            );
        }
    }

    #[test]
    fn a_curesult_printed_by_its_number_is_named_from_cuda_h() {
        // tensorflow/tensorflow#44869 (h95): the cuInit failure with its name, as
        // `ToString(CUresult)` prints it where `cuGetErrorName` knows the result
        let named = "2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n";
        assert_eq!(
            parse_cuda_runtime_log(named).error_names,
            vec!["cudaErrorNoDevice"]
        );
        // the same producers where it does not: TF's and jaxlib's `UNKNOWN ERROR (%d)` after
        // `failed call to cuInit: `, XLA's `ToStatusSlow` (`CUDA error: <detail>: UNKNOWN
        // ERROR (%d)`) and jaxlib's `ErrorString` behind `JAX_AS_STATUS`
        for (text, name, code) in [
            (
                "2023-10-12 10:00:01.123456: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: UNKNOWN ERROR (100)\n",
                "cudaErrorNoDevice",
                100,
            ),
            (
                "E0000 00:00:1730000000.123456   12345 cuda_executor.cc:1015] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (100)\n",
                "cudaErrorNoDevice",
                100,
            ),
            (
                "I0918 11:06:20.239907 140090094478592 xla_bridge.py:863] Unable to initialize backend 'cuda': jaxlib/cuda/versions_helpers.cc:98: operation cuInit(0) failed: Unknown CUDA error 100; cuGetErrorName failed. This probably means that JAX was unable to load the CUDA libraries.\n",
                "cudaErrorNoDevice",
                100,
            ),
            (
                "W tensorflow/stream_executor/cuda/cuda_driver.cc:326] failed call to cuInit: UNKNOWN ERROR (34)\n",
                "cudaErrorStubLibrary",
                34,
            ),
            (
                "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: UNKNOWN ERROR (123)\n",
                "CUresult 123",
                123,
            ),
        ] {
            assert!(looks_like(text), "{text}");
            let m = parse_cuda_runtime_log(text);
            assert_eq!(m.error_names, vec![name], "{text}");
            assert_eq!(m.errors[0].code, Some(code), "{text}");
        }
        // 303 so printed is the libcuda stub's answer where libcuda.so.1 cannot be loaded: no
        // driver on the host (medaka#214's CPU node, TF's `cuda_driver.cc:313` line; XLA's and
        // jaxlib's forms), not a GPU's CUDA error; a real libcuda's 303 comes by its name
        for text in [
            "2020-10-08 23:28:14.726991: E tensorflow/stream_executor/cuda/cuda_driver.cc:313] failed call to cuInit: UNKNOWN ERROR (303)\n",
            "E0000 00:00:1730000000.123456   12345 cuda_executor.cc:1015] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n",
            "W0918 11:06:20.243524 140090094478592 xla_bridge.py:898] CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:98: operation cuInit(0) failed: Unknown CUDA error 303; cuGetErrorName failed. This probably means that JAX was unable to load the CUDA libraries.\n",
        ] {
            assert!(looks_like(text), "{text}");
            let m = parse_cuda_runtime_log(text);
            assert!(m.no_driver, "{text}");
            assert!(m.error_names.is_empty(), "{text}");
        }
        let named = "E tensorflow/stream_executor/cuda/cuda_driver.cc:318] failed call to cuInit: CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: shared object initialization failed\n";
        let m = parse_cuda_runtime_log(named);
        assert!(!m.no_driver);
        assert_eq!(m.error_names, vec!["cudaErrorSharedObjectInitFailed"]);
        // a number outside those producers' words, and TF's healthy library lines, name nothing
        for healthy in [
            "requests.exceptions.HTTPError: UNKNOWN ERROR (500) from the model server\n",
            "E hip_driver.cc:312] failed call to hipInit: UNKNOWN ERROR (303)\n",
            "2020-07-13 17:29:56.616434: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened dynamic library libcudart.so.10.1\n",
        ] {
            assert!(!looks_like(healthy), "{healthy}");
            assert!(
                parse_cuda_runtime_log(healthy).error_names.is_empty(),
                "{healthy}"
            );
        }
        // TF's dlopen warning alone is read (`cuda_libs`) but names no error, and with no GPU
        // shown beside it is not judged
        let dso = "2020-06-26 12:33:16.916743: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'libcudart.so.10.1'; dlerror: libcudart.so.10.1: cannot open shared object file: No such file or directory\n";
        assert!(looks_like(dso));
        let m = parse_cuda_runtime_log(dso);
        assert!(m.error_names.is_empty());
        assert!(m.library_problems.is_empty());
        assert_eq!(m.library_messages_not_judged.len(), 1);
    }

    /// deviceQuery's failure pair (h114: NVIDIA/cuda-samples#13): `cudaGetDeviceCount returned
    /// 999` then `-> unknown error`, a text too short to read alone, is named where number and
    /// text agree; the text without its count line, or under another number, names nothing.
    #[test]
    fn device_query_failure_pair_names_the_error() {
        let t = "$ ./deviceQuery \n./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\ncudaGetDeviceCount returned 999\n-> unknown error\nResult = FAIL\n";
        assert!(looks_like(t));
        let r = parse_cuda_runtime_log(t);
        assert_eq!(r.error_names, vec!["cudaErrorUnknown".to_string()]);
        assert_eq!(r.errors[0].code, Some(999));
        let no_device = "cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected\nResult = FAIL\n";
        assert_eq!(
            parse_cuda_runtime_log(no_device).error_names,
            vec!["cudaErrorNoDevice".to_string()]
        );
        // the text alone, or under a number that is not its own
        assert!(
            parse_cuda_runtime_log("-> unknown error\n")
                .error_names
                .is_empty()
        );
        let wrong = "cudaGetDeviceCount returned 100\n-> unknown error\nResult = FAIL\n";
        assert!(parse_cuda_runtime_log(wrong).error_names.is_empty());
        // a passing run has no count line
        let pass = "Detected 1 CUDA Capable device(s)\n\nDevice 0: \"NVIDIA A100-SXM4-80GB\"\nResult = PASS\n";
        assert!(!looks_like(pass));
    }

    /// cuda-gdb's device exception (h120: ggml-org/llama.cpp#24398, the poster's coredump
    /// summary; ggml-org/llama.cpp#18799, cuda-gdb's own stop lines) is the runtime error the
    /// process gets; the exception named in a comment or prose is not.
    #[test]
    fn cutil_checks_name_the_runtime_error_they_print() {
        // h124: NVIDIA developer forum 282, the x264 port's CUDA_SAFE_CALL line quoted in prose
        // with the forum's curly quotes; the CUDA 1.x-2.x text is kept as printed
        let t = "The error message is \u{201c}Cuda error in file \u{2018}common/cuda/mc.cu\u{2019} in line 104 : unspecified driver error.\u{201d} which is the first of the last 4 calls at the end of this code fragment.\n";
        assert!(looks_like(t));
        let r = parse_cuda_runtime_log(t);
        assert_eq!(r.error_names, ["unspecified driver error"]);
        assert_eq!((r.errors[0].code, r.errors[0].category), (None, "other"));
        // CUDA_SAFE_CALL as printed, a text of the table
        let r = parse_cuda_runtime_log(
            "Cuda error in file 'reduction_kernel.cu' in line 212 : out of memory.\n",
        );
        assert_eq!(r.error_names, ["cudaErrorMemoryAllocation"]);
        // CUT_CHECK_ERROR: the program's own message before the file
        let r = parse_cuda_runtime_log(
            "Cuda error: Kernel execution failed in file 'bitonic.cu' in line 88 : unspecified launch failure.\n",
        );
        assert_eq!(r.error_names, ["cudaErrorLaunchFailure"]);
        // cutilSafeCall keeps the number it printed
        let r = parse_cuda_runtime_log(
            "main.cu(57) : cudaSafeCall() Runtime API error 38: no CUDA-capable device is detected.\n",
        );
        assert_eq!(r.error_names, ["cudaErrorNoDevice"]);
        assert_eq!(r.errors[0].code, Some(38));
        // CU_SAFE_CALL's hex CUresult: 0x2bc is CUDA_ERROR_ILLEGAL_ADDRESS (700)
        let r = parse_cuda_runtime_log("Cuda driver error 2bc in file 'sim.cpp' in line 301.\n");
        assert_eq!(r.error_names, ["cudaErrorIllegalAddress"]);
        // not cutil's output: the macro's own source, cutil's other checks, prose
        for t in [
            "        fprintf(stderr, \"Cuda error in file '%s' in line %i : %s.\\n\",        \\\n",
            "Cut error in file 'main.cpp' in line 40.\n",
            "CUFFT error in file 'fft.cu' in line 12.\n",
            "I get a Cuda error in file mc.cu sometimes, any idea?\n",
            "Cuda driver error in file 'x.cpp' in line 3.\n",
        ] {
            assert!(parse_cuda_runtime_log(t).errors.is_empty(), "{t}");
        }
    }

    #[test]
    fn cuda_gdb_device_exceptions_are_the_runtime_errors_they_raise() {
        let t = "CUDA Exception: Warp Misaligned Register\nkernel: void flash_attn_ext_f16<256, 256, 32, 2, false, false>(...)\nGridDim (64,1,1)  BlockDim (32,4,1)   focus: device 0, sm 10, warp 0, lane 0\n";
        assert!(looks_like(t));
        assert_eq!(
            parse_cuda_runtime_log(t).error_names,
            ["cudaErrorLaunchFailure"]
        );
        let t = "CUDA Exception: Warp Misaligned Address\nThe exception was triggered at PC 0x7fff20cd8fb0  flash_attn_ext_vec<64, 1, (ggml_type)1, (ggml_type)1, false>(...)  (common.cuh:692)\n\nThread 1 \"llama-batched-b\" received signal CUDA_EXCEPTION_6, Warp Misaligned Address.\n";
        let r = parse_cuda_runtime_log(t);
        assert_eq!(r.error_names, ["cudaErrorMisalignedAddress"]);
        assert_eq!((r.errors[0].code, r.errors[0].count), (Some(716), 2));
        for (line, name) in [
            (
                "CUDA Exception: Warp Illegal Address",
                "cudaErrorIllegalAddress",
            ),
            (
                "CUDA Exception: Warp Out-of-range Address",
                "cudaErrorIllegalAddress",
            ),
            (
                "CUDA Exception: Device Illegal Address",
                "cudaErrorIllegalAddress",
            ),
            (
                "CUDA Exception: Warp Illegal Instruction",
                "cudaErrorIllegalInstruction",
            ),
            (
                "CUDA Exception: Warp Invalid Address Space",
                "cudaErrorInvalidAddressSpace",
            ),
            ("CUDA Exception: Warp Invalid PC", "cudaErrorInvalidPc"),
            (
                "CUDA Exception: Lane User Stack Overflow",
                "cudaErrorHardwareStackError",
            ),
            (
                "Program received signal CUDA_EXCEPTION_12, Warp Assert.",
                "cudaErrorAssert",
            ),
            (
                "* thread #1, stop reason = CUDA Exception: Warp MMU Fault",
                "cudaErrorIllegalAddress",
            ),
        ] {
            assert_eq!(parse_cuda_runtime_log(line).error_names, [name], "{line}");
        }
        for t in [
            "  case 3: // stop reason = CUDA Exception: Warp Misaligned Address",
            "对于uint16_t在这里不要使用iph->tot_len方式，这样会出现CUDA_EXCEPTION_6 Warp Misaligned Address",
            "The CUDA Exception: Warp Illegal Address happens when I run it",
        ] {
            assert!(parse_cuda_runtime_log(t).error_names.is_empty(), "{t}");
        }
    }

    /// A post in Chinese, Japanese or Korean goes on right after the runtime's text, with no
    /// space, behind full-width punctuation: the runtime's texts are ASCII, so the first
    /// character outside ASCII ends the message (see `NON_ASCII_END`).
    #[test]
    fn a_runtime_text_ends_where_east_asian_prose_begins() {
        // bubbliiiing/yolo3-pytorch#83, the description whole
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: an illegal memory access was encountered，已经训练了好几轮了，半夜训练的过程中报错了，请问是什么原因呀\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        // AstarLight/Lets_OCR#77: the title joins the traceback on one line after Chinese words
        let m = parse_cuda_runtime_log(
            "训练报错 line 90, in backward allow_unreachable=True) # allow_unreachable flag RuntimeError: CUDA error: an illegal memory access was encountered，求解决问题\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        // an ideographic full stop, a full stop then a full-width comma, a Japanese sentence
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: device-side assert triggered。请问怎么办\n",
        );
        assert_eq!(m.error_names, ["cudaErrorAssert"]);
        let m = parse_cuda_runtime_log("RuntimeError: CUDA error: out of memory.，换了卡也一样\n");
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        let m = parse_cuda_runtime_log(
            "CUDA error: unspecified launch failureが出て学習が止まります\n",
        );
        assert_eq!(m.error_names, ["cudaErrorLaunchFailure"]);
        // the other wrappers' patterns stop there too
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA failed with error out of memory，请问怎么办\n",
        );
        assert_eq!(m.error_names, ["cudaErrorMemoryAllocation"]);
        let m = parse_cuda_runtime_log(
            "CUDA runtime error in cudaFreeHost(data): an illegal memory access was encountered（第二次）\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
        // words in another script after the prefix are no runtime text; the ASCII message of
        // the same line before the prose is read as it was
        assert!(
            parse_cuda_runtime_log("CUDA error: 显存不足\n")
                .errors
                .is_empty()
        );
        assert!(
            parse_cuda_runtime_log("报错说 illegal memory access，不知道为什么\n")
                .errors
                .is_empty()
        );
        let m = parse_cuda_runtime_log(
            "RuntimeError: CUDA error: an illegal memory access was encountered\n",
        );
        assert_eq!(m.error_names, ["cudaErrorIllegalAddress"]);
    }
}
