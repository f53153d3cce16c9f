//! `cuda.log`: what pasted text says about the CUDA runtime — PyTorch's CUDA-init and runtime
//! messages ([`crate::evidence::cuda_errors`]) and `collect_env` output
//! ([`crate::evidence::collect_env`]) — with the facts rules judge by worked out here: whether
//! the build lacks the GPU's architecture, which CUDA the driver runs, which wheel index fits,
//! and which errors are left once the driver and architecture are accounted for.
//!
//! `cuda.compat`: the driver's CUDA against the CUDA the toolkit and PyTorch need, from the text
//! where it says (PyTorch's "found version N", collect_env's driver and build) and otherwise
//! from the host (NVML and [`super::cuda_stack`]), so `cuda.driver-too-old` judges a pasted
//! warning and a live host alike. Where the host has no NVML reading (a paste), the driver's
//! CUDA also comes from `nvidia-smi`'s banner pasted alone (`| NVIDIA-SMI 570.133.20  Driver
//! Version: 570.133.20  CUDA Version: 12.8 |`, R610's `KMD Version: D  CUDA UMD Version: C`,
//! read by [`crate::evidence::smi_tables::parse_table`]): nvidia-smi prints there the CUDA
//! version `cuDriverGetVersion` returns, the newest CUDA the driver runs, and the banner alone
//! names no GPU, so it is no NVML reading of the host. The build's CUDA also comes from a
//! torch version's `+cuXYZ` tag wherever [`torch_env`] reads one (`pip list`, `torch==V`, a
//! `torch.__version__` print: PEP 440's local version, PyTorch's wheel indexes `+cu130`), where
//! the text names that one CUDA build and no CPU or ROCm build beside it.
//!
//! Each reads every `--evidence` file its reader recognises a part of, whatever else the paste
//! holds (a traceback, prose, a training log).

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::{
    collect_env, cuda_compat, cuda_errors, cupy_config, device_query, jax_env_info, smi_tables,
    torch_env,
};
use crate::vocab::io::read_shared;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// The first `--evidence` file (with its text) that `recognises` accepts.
fn first_evidence(
    evidence: &[PathBuf],
    recognises: fn(&str) -> bool,
) -> Option<(PathBuf, Arc<String>)> {
    evidence.iter().find_map(|p| {
        let t = read_shared(p).ok()?;
        // (the text's searches for a line anywhere in it, made once for every probe)
        crate::evidence::scan::keep(&t);
        recognises(&t).then(|| (p.clone(), t))
    })
}

/// What to collect next for an error of this category.
fn next_evidence(category: &str) -> &'static str {
    match category {
        "memory-access" => {
            "rerun with CUDA_LAUNCH_BLOCKING=1 to get the failing kernel's own stack, then under `compute-sanitizer --tool memcheck`; check `dmesg` for Xid 13/31/43 on that GPU"
        }
        "assert" => {
            "rerun with CUDA_LAUNCH_BLOCKING=1 (or a build with TORCH_USE_CUDA_DSA) to see which op asserted: usually an index out of range (a label >= the number of classes, an embedding index past its table)"
        }
        "launch" => {
            "rerun with CUDA_LAUNCH_BLOCKING=1; for a launch timeout, check whether the GPU also drives a display (its watchdog ends long kernels); check `dmesg` for Xid errors"
        }
        "ecc" | "hardware" => {
            "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` and `dmesg | grep -i xid` on that node: an uncorrectable error needs a GPU reset and, if it repeats, a replacement"
        }
        "memory" => {
            "the full out-of-memory message or `torch.cuda.memory_summary()`, and `nvidia-smi` to see which processes hold the GPU's memory"
        }
        "device-unavailable" => {
            "`nvidia-smi` on that node (compute mode, other processes, a lost GPU), `dmesg | grep -i xid`, and CUDA_VISIBLE_DEVICES as the job saw it"
        }
        "library" => {
            "rerun with CUDA_LAUNCH_BLOCKING=1: a cuBLAS/cuDNN failure is often an earlier kernel's error or an out-of-memory surfacing late; give `python -m torch.utils.collect_env`"
        }
        "driver" => {
            "`nvidia-smi` (the driver's CUDA version) and `python -m torch.utils.collect_env` (the CUDA PyTorch was built with)"
        }
        "arch" => {
            "`python -m torch.utils.collect_env` and `python -c \"import torch; print(torch.cuda.get_arch_list())\"`"
        }
        _ => {
            "rerun with CUDA_LAUNCH_BLOCKING=1 and give the full traceback with `python -m torch.utils.collect_env`"
        }
    }
}

fn to_object<T: serde::Serialize>(t: &T) -> Map<String, Value> {
    match serde_json::to_value(t) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The text facts both probes share: (runtime messages, collect_env, files read).
fn read_text(
    ctx: &ProbeCtx,
) -> (
    Option<Arc<cuda_errors::CudaRuntimeLog>>,
    Option<Arc<collect_env::CollectEnv>>,
    Vec<String>,
) {
    let mut files = Vec::new();
    // an NCCL log (`--nccl-log`) carries the CUDA errors NCCL and nccl-tests print too
    let logs: Vec<PathBuf> = ctx
        .inputs
        .evidence
        .iter()
        .chain(ctx.inputs.nccl_log.iter())
        .cloned()
        .collect();
    let rt = first_evidence(&logs, cuda_errors::looks_like).map(|(p, t)| {
        files.push(p.display().to_string());
        crate::evidence::memo::parsed(&t, cuda_errors::parse_cuda_runtime_log)
    });
    let env = first_evidence(&ctx.inputs.evidence, collect_env::looks_like).map(|(p, t)| {
        let s = p.display().to_string();
        if !files.contains(&s) {
            files.push(s);
        }
        crate::evidence::memo::parsed(&t, collect_env::parse_collect_env)
    });
    (rt, env, files)
}

/// The torch build and the GPUs every `--evidence` file names, together (a `pip list` in one
/// file and an `nvidia-smi` table in another are one environment), with the files that held any.
fn read_torch_env(ctx: &ProbeCtx) -> (torch_env::TorchEnv, Vec<String>) {
    let mut all = torch_env::TorchEnv::default();
    let mut files = Vec::new();
    for p in &ctx.inputs.evidence {
        let Ok(t) = read_shared(p) else { continue };
        let e = torch_env::read(&t);
        if !e.is_empty() {
            files.push(p.display().to_string());
            all.merge(e);
        }
    }
    (all, files)
}

/// The driver's CUDA from the text: PyTorch's "found version N", else collect_env's driver.
fn driver_from_text(
    rt: Option<&cuda_errors::CudaRuntimeLog>,
    env: Option<&collect_env::CollectEnv>,
) -> Option<(u32, String)> {
    if let Some(r) = rt
        && let Some(v) = r.driver_found_version
    {
        return Some(match r.driver_check_line {
            Some(_) => (v, format!("PhysX's \"CUDA driver version is {v}\"")),
            None => (v, format!("PyTorch's \"found version {v}\"")),
        });
    }
    let e = env?;
    let code = e.driver_max_cuda_code?;
    // PyTorch's `is_available()` is true only where `cudaGetDeviceCount` succeeded, which it does
    // not on a driver older than the build's CUDA (`cudaErrorInsufficientDriver`, the driver
    // check's "too old" warning): `Is CUDA available: True` beside a build newer than the
    // table's CUDA for that driver shows the table does not know the driver (a Jetson's L4T
    // `580.00` under a cu130 build), so the table's reading is not used
    if e.cuda_available == Some(true) && e.torch_cuda_code.is_some_and(|t| t / 1000 > code / 1000) {
        return None;
    }
    Some((
        code,
        format!(
            "driver {} in collect_env (NVIDIA's driver table)",
            e.nvidia_driver_version.as_deref().unwrap_or("?")
        ),
    ))
}

/// The driver's CUDA from `nvidia-smi`'s banner in an `--evidence` file (`CUDA Version: 12.8`,
/// R610's `CUDA UMD Version: 13.3`): (code, where it came from, the file). `N/A` (a driver
/// without CUDA) and a banner without the field give nothing.
fn smi_banner_cuda(evidence: &[PathBuf]) -> Option<(u32, String, String)> {
    evidence.iter().find_map(|p| {
        let t = read_shared(p).ok()?;
        if !smi_tables::looks_like_table(&t) {
            return None;
        }
        let u = smi_tables::parse_table(&t).ok()?;
        let v = u.cuda_version.as_deref()?;
        let code = device_query::version_code(v)?;
        Some((
            code,
            format!(
                "nvidia-smi's banner: driver {}, CUDA Version {v}",
                u.driver_version.as_deref().unwrap_or("?")
            ),
            p.display().to_string(),
        ))
    })
}

/// The errors that say the driver is older than the runtime or the code needs.
fn says_driver_too_old(name: &str) -> bool {
    matches!(
        name,
        "cudaErrorInsufficientDriver"
            | "cudaErrorCallRequiresNewerDriver"
            | "cudaErrorUnsupportedPtxVersion"
    )
}

pub struct CudaLog;

impl Probe for CudaLog {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "cuda.log"
    }
    fn doc(&self) -> &'static str {
        "PyTorch's CUDA-init and runtime messages and collect_env output in pasted text (--evidence): driver too old, GPU architecture missing from the build, CUDA/cuBLAS/cuDNN errors"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "driver_init_failed",
                "\"CUDA driver initialization failed\" was seen",
            ),
            ("no_gpus", "\"No CUDA GPUs are available\" was seen"),
            (
                "unknown_error_env",
                "\"CUDA unknown error - this may be due to an incorrectly set up environment\" was seen",
            ),
            ("lines", "lines that carried one of these messages"),
            (
                "driver_too_old",
                "PyTorch said the NVIDIA driver is too old",
            ),
            (
                "driver_found_version",
                "the CUDA version PyTorch found the driver to run (12080)",
            ),
            ("no_driver", "\"Found no NVIDIA driver on your system\""),
            ("insufficient_driver", "cudaErrorInsufficientDriver"),
            (
                "forward_compat_unsupported",
                "cudaErrorCompatNotSupportedOnDevice (804): forward compatibility tried on a GPU that lacks it",
            ),
            (
                "init_warning",
                "the message came as PyTorch's `CUDA initialization:` warning",
            ),
            ("no_kernel_image", "cudaErrorNoKernelImageForDevice"),
            (
                "nvrtc_arch_rejected",
                "NVRTC refused the GPU's architecture (`invalid value for --gpu-architecture (-arch)`)",
            ),
            (
                "arch_warning_unattributed",
                "PyTorch's architecture warning quoted without its GPU line (its list of the build's capabilities, or 2.11's advice to install a release for other CUDA versions): the build lacks some GPU's architecture",
            ),
            (
                "incompatible_gpus",
                "GPUs PyTorch says its build has no kernels for: name, capability, supported",
            ),
            (
                "old_gpus",
                "GPUs older than the build's oldest architecture",
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
                "library_problems",
                "CUDA libraries the framework could not use where the text shows the GPU: library, problem (missing, version), framework, wanted, found, line",
            ),
            (
                "library_messages_not_judged",
                "library messages not judged: TensorFlow's dlopen failures where the text shows no GPU, JAX's CPU-only jaxlib or failed CUDA backend beside a GPU where no print_environment_info shows JAX itself on the CPU",
            ),
            (
                "jax_env",
                "JAX's print_environment_info() in the text: jax_version, jaxlib_version, device_platforms, device_count, env, nvidia_smi, … (the jax-env-info reader's fields)",
            ),
            (
                "jax_cpu_beside_gpu",
                "print_environment_info lists only CPU devices while the nvidia-smi it ran saw a GPU, and no JAX_PLATFORMS it printed asks for the CPU",
            ),
            (
                "extension_cuda_mismatch",
                "a torch extension (torchvision) built for another CUDA than PyTorch refused to load: extension, torch_cuda, extension_cuda, line",
            ),
            (
                "runtime_errors",
                "errors other than the driver's and the architecture's, each with `next`: the evidence to collect, and for a device-side assert whose assertion line the text holds, `assertion`: its condition, file:line and function",
            ),
            (
                "async_hint",
                "PyTorch warned that the stack may not be where the kernel failed",
            ),
            (
                "device_asserts",
                "device-side assertions the runtime printed (`<file>:<line>: <function>: block: […], thread: […] Assertion `<expr>` failed.`): file, line, function, condition, block, thread, count",
            ),
            (
                "torch_wheel_cuda",
                "`+cuXYZ` tags of torch versions in the text",
            ),
            (
                "arch_missing",
                "the build lacks the GPU's architecture (no kernel image, sm_XX not compatible, GPU too old or too new for the build)",
            ),
            (
                "arch_compiler",
                "`nvrtc` where only NVRTC refusing `--gpu-architecture` shows the architecture missing: the CUDA toolkit a run-time compiler (CuPy) uses lacks it, not a PyTorch build",
            ),
            (
                "arch_inferred",
                "arch_missing was worked out from the build's CUDA and the GPU's name, not read from PyTorch's words",
            ),
            (
                "arch_build_cuda",
                "when inferred: the CUDA the torch build was made with (12.1)",
            ),
            (
                "arch_gpu",
                "the GPU that lacks kernels, where the text names it",
            ),
            ("arch_sm", "its compute capability as sm_XX number (120)"),
            (
                "arch_wheel",
                "when an old GPU was judged against an official wheel's own list (Linux x86_64, or Windows where the text shows it) or its CUDA's floor: that build (2.8.0+cu129)",
            ),
            (
                "arch_wheel_source",
                "the PyTorch build script the wheel's architecture list was read from",
            ),
            (
                "arch_list_read",
                "the architecture list judged is the build's own, printed in the text (`torch.cuda.get_arch_list()`, an `Arch List` line, show_config's NVCC architecture flags), not a table's",
            ),
            (
                "arch_wheel_platform",
                "that wheel's platform (Linux x86_64, Windows); empty where only the CUDA toolkit's floor judged the build",
            ),
            (
                "arch_old",
                "the GPU is older than every architecture the build has: an older release or CUDA variant serves it, not a newer one",
            ),
            (
                "arch_in_wheel",
                "the official wheel the text names, where it carries every GPU named and the text's \"no kernel image\" is therefore another library's",
            ),
            (
                "arch_wheel_unjudged",
                "why a GPU and torch build the text names were not judged against an official wheel's list (Windows, aarch64, a nightly, a release not read)",
            ),
            (
                "build_archs",
                "the architectures the build has, where the text lists them",
            ),
            (
                "arch_min_cuda",
                "the first CUDA that compiles for that GPU (12.8 for sm_120)",
            ),
            (
                "driver_max_cuda",
                "the newest CUDA the driver runs, from the text (major.minor)",
            ),
            (
                "wheel_index",
                "the PyTorch wheel index that has kernels for the GPU and runs on the driver",
            ),
            (
                "env",
                "collect_env fields: torch_version, torch_cuda, cuda_available, gpus, nvidia_driver_version, driver_max_cuda, cudnn, packages, …",
            ),
            (
                "cuda_unavailable_with_gpu",
                "collect_env says CUDA is not available while it lists a GPU",
            ),
            (
                "cpu_only_build",
                "collect_env shows a CPU-only PyTorch build",
            ),
            ("files", "the evidence files read"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let (rt, env, mut files) = read_text(ctx);
        let (tenv, tenv_files) = read_torch_env(ctx);
        if rt.is_none() && env.is_none() && !tenv.judgeable() {
            return ProbeOutcome::NotApplicable(
                "needs --evidence with PyTorch's CUDA messages (a traceback or warning), `python -m torch.utils.collect_env` output, or a torch build (+cuXYZ) beside a GPU name the driver prints".into(),
            );
        }
        if tenv.judgeable() {
            for f in tenv_files {
                if !files.contains(&f) {
                    files.push(f);
                }
            }
        }
        // every field of the runtime reader is there, false/empty when only collect_env was given
        let empty = cuda_errors::CudaRuntimeLog::default();
        let mut out = to_object(rt.as_deref().unwrap_or(&empty));
        let driver = driver_from_text(rt.as_deref(), env.as_deref());
        // the architecture the text shows missing, and the GPU it belongs to
        let (mut gpu, mut sm, mut archs) = (None, None, Vec::new());
        let mut arch_missing = false;
        // the architecture's absence shown only by NVRTC refusing it: the CUDA toolkit a run-time
        // compiler (CuPy, Numba, Triton) uses lacks the target, not a PyTorch wheel
        let mut nvrtc_only = false;
        if let Some(r) = &rt {
            if let Some(g) = r.incompatible_gpus.first() {
                gpu = Some(g.name.clone());
                sm = Some(g.sm);
                archs = g.supported.clone();
            } else if let Some(g) = r.old_gpus.first() {
                gpu = Some(g.name.clone());
                sm = g
                    .capability
                    .split_once('.')
                    .and_then(|(a, b)| Some(a.parse::<u32>().ok()? * 10 + b.parse::<u32>().ok()?));
            } else if let Some(g) = r.needs_newer_cuda.first() {
                gpu = Some(g.name.clone());
            }
            // (PyTorch's warning quoted without its GPU line is its warning all the same)
            let warned = !r.incompatible_gpus.is_empty()
                || !r.old_gpus.is_empty()
                || !r.needs_newer_cuda.is_empty()
                || r.arch_warning_unattributed;
            // NVRTC refusing the GPU's architecture is the CUDA in use lacking it, as "no
            // kernel image" is the build lacking it
            arch_missing = r.no_kernel_image || warned || r.nvrtc_arch_rejected;
            nvrtc_only = r.nvrtc_arch_rejected && !r.no_kernel_image && !warned;
            // "no kernel image" alone, where the official wheel the text names carries every
            // GPU it names: PyTorch's own kernels run there, so the kernel without an image is
            // another library's (an extension built for other architectures): a runtime error
            // with its next evidence, not the build's architecture list
            if r.no_kernel_image
                && !warned
                && let Some(v) = tenv.wheel_runs_every_gpu()
            {
                arch_missing = false;
                out.insert("arch_in_wheel".into(), json!(v));
            }
            let runtime: Vec<Value> = r
                .errors
                .iter()
                // the errors `cuda.driver-too-old` and `cuda.arch-not-in-build` judge; a driver
                // error of another kind (the fabric manager not running: 802, a stub library)
                // is the runtime's to report. An error of the architecture's class goes to
                // `cuda.arch-not-in-build` only where the text shows the architecture missing
                // (no kernel image, PyTorch's capability warnings); `cudaGetErrorString`'s
                // "device kernel image is invalid" (200, also an invalid CUDA module), "invalid
                // device function" (98) and "a PTX JIT compilation failed" (218) alone do not
                // say which build lacks what, so they stay runtime errors with the arch's next
                // evidence rather than falling between the two rules
                .filter(|e| {
                    (e.category != "arch" || !arch_missing) && !says_driver_too_old(&e.name)
                })
                .map(|e| {
                    let mut v = to_object(e);
                    v.insert("next".into(), json!(next_evidence(e.category)));
                    // the runtime printed the kernel's own assertion (file, line, condition):
                    // the op that asserted is known, so the next evidence is its inputs, not a
                    // CUDA_LAUNCH_BLOCKING rerun to find it
                    if e.name == "cudaErrorAssert"
                        && let Some(a) = r.device_asserts.first()
                    {
                        let assertion = match &a.function {
                            Some(f) => format!("`{}` at {} ({f})", a.condition, a.site()),
                            None => format!("`{}` at {}", a.condition, a.site()),
                        };
                        v.insert(
                            "next".into(),
                            json!(format!(
                                "the kernel's assertion names the op and the condition that failed, {assertion}: check the values that op was given (a label or target outside its range, an index past its tensor); a rerun with CUDA_LAUNCH_BLOCKING=1 shows the Python line that launched it"
                            )),
                        );
                        v.insert("assertion".into(), json!(assertion));
                    }
                    Value::Object(v)
                })
                .collect();
            out.insert("runtime_errors".into(), Value::Array(runtime));
        } else {
            out.insert("runtime_errors".into(), json!([]));
        }
        // without PyTorch's own words, the build's CUDA against the GPU's architecture: a GPU
        // whose major architecture is newer than anything that CUDA compiles has no kernel
        let lacking = tenv.lacking();
        // an OLD GPU is judged against the official wheel's own list of architectures
        let wheel = if lacking.is_none() {
            tenv.wheel_lacking()
        } else {
            None
        };
        let mut inferred = None;
        let mut from_wheel = None;
        if let Some(w) = wheel
            // PyTorch's own words about another GPU win
            && (sm.is_none() || sm == Some(w.sm))
        {
            gpu = gpu.or_else(|| Some(w.gpu.clone()));
            sm = Some(w.sm);
            if archs.is_empty() {
                archs = w.archs.clone();
            }
            if !arch_missing {
                arch_missing = true;
                inferred = Some(torch_env::Lacking {
                    gpu: w.gpu.clone(),
                    sm: w.sm,
                    need: 0,
                    build: w.build_cuda,
                });
            }
            from_wheel = Some(w);
        } else if !arch_missing && let Some(why) = tenv.wheel_unjudged() {
            out.insert("arch_wheel_unjudged".into(), json!(why));
        }
        if let Some(l) = lacking {
            if !arch_missing {
                arch_missing = true;
                gpu = Some(l.gpu.clone());
                sm = Some(l.sm);
                inferred = Some(l);
            } else if gpu.is_none() {
                // "no kernel image" without a GPU name: the GPU the text names is the one
                gpu = Some(l.gpu.clone());
                sm = Some(l.sm);
            }
        }
        // older than every architecture the build has (the list PyTorch printed, or the
        // official wheel's): a newer CUDA is no cure
        let old = rt.as_ref().is_some_and(|r| !r.old_gpus.is_empty())
            || sm.is_some_and(|s| {
                let nums: Vec<u32> = archs
                    .iter()
                    .filter_map(|a| a.split_once('_')?.1.parse().ok())
                    .collect();
                nums.iter().min().is_some_and(|&m| s < m)
            });
        out.insert("arch_missing".into(), json!(arch_missing));
        out.insert("arch_inferred".into(), json!(inferred.is_some()));
        if arch_missing && nvrtc_only && inferred.is_none() && from_wheel.is_none() {
            out.insert("arch_compiler".into(), json!("nvrtc"));
        }
        if arch_missing {
            if let Some(g) = &gpu {
                out.insert("arch_gpu".into(), json!(g));
            }
            if let Some(l) = &inferred
                && l.build > 0
            {
                out.insert(
                    "arch_build_cuda".into(),
                    json!(cuda_compat::cuda_code_str(l.build)),
                );
            }
            if let Some(w) = &from_wheel {
                if w.from_text {
                    out.insert("arch_list_read".into(), json!(true));
                }
                out.insert("arch_wheel".into(), json!(w.build));
                out.insert("arch_wheel_source".into(), json!(w.source));
                out.insert("arch_wheel_platform".into(), json!(w.platform));
            }
            if let Some(s) = sm {
                out.insert("arch_sm".into(), json!(s));
                let need = match &inferred {
                    // an old GPU: a newer CUDA is not what it needs
                    _ if old => None,
                    Some(l) if l.need > 0 => Some(l.need),
                    _ => cuda_compat::arch_min_cuda(s),
                };
                if let Some(c) = need {
                    out.insert("arch_min_cuda".into(), json!(cuda_compat::cuda_code_str(c)));
                }
            }
            if !archs.is_empty() {
                out.insert("build_archs".into(), json!(archs));
            }
            // an old GPU is served by an older build, not a newer wheel: no newer index to name
            let old_only = rt
                .as_ref()
                .is_some_and(|r| r.incompatible_gpus.is_empty() && !r.old_gpus.is_empty());
            out.insert("arch_old".into(), json!(old));
            if let Some(w) = &from_wheel {
                // the same release's variant that still carries the GPU's architecture (cu126
                // for Pascal under 2.8's cu128), where the driver runs it; Kepler has none
                let max = driver.as_ref().map(|d| d.0);
                if let Some(alt) = w.alternative
                    && w.sm >= 50
                    && max.is_none_or(|m| m >= alt)
                {
                    out.insert(
                        "wheel_index".into(),
                        json!(format!(
                            "https://download.pytorch.org/whl/cu{}{}",
                            alt / 1000,
                            (alt % 1000) / 10
                        )),
                    );
                }
            } else if !old
                && !old_only
                && sm.is_some()
                && let Some(w) = cuda_compat::wheel_index(sm, driver.as_ref().map(|d| d.0))
            {
                out.insert("wheel_index".into(), json!(w));
            }
        }
        if let Some((code, _)) = &driver {
            out.insert(
                "driver_max_cuda".into(),
                json!(cuda_compat::cuda_code_str(*code)),
            );
        }
        judge_jax_env(ctx, &mut out, &mut files);
        if let Some(e) = &env {
            // A build without CUDA (`torch.version.cuda` is None: `+cpu`, `None`, or `Could not
            // collect`) is never available: torch/cuda/__init__.py `is_available` returns False
            // when `_is_compiled()` is False, while collect_env's `get_gpu_info` still lists the
            // GPUs from `nvidia-smi -L`. That is the wheel chosen, not a CUDA error.
            out.insert(
                "cuda_unavailable_with_gpu".into(),
                json!(e.cuda_available == Some(false) && !e.gpus.is_empty() && !e.cpu_only_build),
            );
            out.insert("cpu_only_build".into(), json!(e.cpu_only_build));
            out.insert("env".into(), Value::Object(to_object(&**e)));
        } else {
            out.insert("cuda_unavailable_with_gpu".into(), json!(false));
            out.insert("cpu_only_build".into(), json!(false));
        }
        out.insert("files".into(), json!(files));
        ProbeOutcome::Value(Value::Object(out))
    }
}

/// JAX's print_environment_info() in the text: where it lists only CPU devices while the
/// nvidia-smi it ran (`environment_info.py`'s `try_nvidia_smi`: a section only where nvidia-smi
/// exited 0, i.e. saw a GPU) shows a GPU, JAX itself, in the environment the person reports, runs
/// on the CPU beside that GPU. JAX's own fallback warning in the same text (a CPU-only jaxlib, a
/// CUDA backend that failed), which alone is not judged (a PyTorch job that imports JAX prints it
/// too: [`crate::evidence::cuda_libs`]), is then the reason and is judged. A JAX_PLATFORMS the
/// print shows (jax 0.6.1+) that names no GPU platform is the CPU asked for: not judged.
fn judge_jax_env(ctx: &ProbeCtx, out: &mut Map<String, Value>, files: &mut Vec<String>) {
    let Some((p, t)) = first_evidence(&ctx.inputs.evidence, jax_env_info::looks_like_jax_env_info)
    else {
        out.insert("jax_cpu_beside_gpu".into(), json!(false));
        return;
    };
    let s = p.display().to_string();
    if !files.contains(&s) {
        files.push(s);
    }
    let e = crate::evidence::memo::parsed(&t, jax_env_info::parse_jax_env_info);
    let cpu_asked = e.env_var("JAX_PLATFORMS").is_some_and(|v| {
        !v.split(',')
            .any(|p| matches!(p.trim(), "cuda" | "gpu" | "rocm" | ""))
    });
    let cpu_beside_gpu = e.cpu_only() && e.nvidia_smi && !cpu_asked;
    out.insert("jax_cpu_beside_gpu".into(), json!(cpu_beside_gpu));
    out.insert("jax_env".into(), Value::Object(to_object(&*e)));
    if !cpu_beside_gpu {
        return;
    }
    let Some(Value::Array(unjudged)) = out.remove("library_messages_not_judged") else {
        return;
    };
    let (jax, rest): (Vec<Value>, Vec<Value>) =
        unjudged.into_iter().partition(|v| v["framework"] == "JAX");
    if let Some(Value::Array(problems)) = out.get_mut("library_problems") {
        problems.extend(jax);
    }
    out.insert("library_messages_not_judged".into(), Value::Array(rest));
}

pub struct CudaCompat;

impl Probe for CudaCompat {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "cuda.compat"
    }
    fn doc(&self) -> &'static str {
        "the driver's CUDA version against the CUDA the toolkit and PyTorch need: from pasted text where it says (PyTorch's driver warning, collect_env), else from NVML and the installed packages"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("files", "the evidence files read"),
            (
                "driver_cuda_code",
                "the newest CUDA the driver runs (12080)",
            ),
            ("driver_cuda", "the same as major.minor"),
            (
                "driver_source",
                "where it came from: NVML, PyTorch's warning, collect_env's driver, deviceQuery, CuPy's show_config, or nvidia-smi's banner pasted alone",
            ),
            (
                "said_too_old",
                "PyTorch or the CUDA runtime said the driver is too old (\"found version N\", cudaErrorInsufficientDriver)",
            ),
            ("said", "the line that said it"),
            (
                "toolkit",
                "the CUDA toolkit: version, major, minor, code (host only)",
            ),
            (
                "torch_cuda_code",
                "the CUDA PyTorch was built for (collect_env, a `+cuXYZ` tag, or the installed package)",
            ),
            ("torch_cuda", "the same as major.minor"),
            ("torch_source", "where it came from"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let (rt, env, mut files) = read_text(ctx);
        let mut out = Map::new();
        // the CUDA samples' deviceQuery prints the driver's CUDA version on a passing run
        // the first `--evidence` text `recognises` accepts, its file among those read
        let mut first_read = |recognises: fn(&str) -> bool| {
            let (p, t) = first_evidence(&ctx.inputs.evidence, recognises)?;
            let s = p.display().to_string();
            if !files.contains(&s) {
                files.push(s);
            }
            Some(t)
        };
        let dq = first_read(device_query::looks_like_device_query)
            .map(|t| device_query::parse_device_query(&t));
        // CuPy's show_config() prints `CUDA Driver Version` (cudaDriverGetVersion: the newest
        // CUDA the driver runs)
        let cp = first_read(cupy_config::looks_like_cupy_config)
            .map(|t| cupy_config::parse_cupy_config(&t));
        let text_driver = driver_from_text(rt.as_deref(), env.as_deref())
            .or_else(|| {
                let v = dq.as_ref()?.driver_cuda.as_deref()?;
                Some((
                    device_query::version_code(v)?,
                    format!("deviceQuery's CUDA Driver Version {v}"),
                ))
            })
            .or_else(|| {
                let v = cp.as_ref()?.cuda_driver?;
                Some((v, format!("CuPy's show_config, CUDA Driver Version {v}")))
            });
        let said = rt.as_ref().and_then(|r| {
            // an error `says_driver_too_old` keeps out of the runtime's list (a PTX of a newer
            // toolkit than the driver, `cudaErrorUnsupportedPtxVersion`; a call that requires a
            // newer driver) says it too, and is judged here rather than dropped
            (r.driver_too_old
                || r.insufficient_driver
                || r.forward_compat_unsupported
                || r.errors.iter().any(|e| says_driver_too_old(&e.name)))
            .then(|| {
                r.errors
                    .iter()
                    .find(|e| {
                        e.name == "cudaErrorInsufficientDriver"
                            || e.name == "cudaErrorCompatNotSupportedOnDevice"
                            || says_driver_too_old(&e.name)
                    })
                    .map(|e| e.line.clone())
                    .or_else(|| r.driver_check_line.clone())
                    .unwrap_or_else(|| match r.driver_found_version {
                        Some(v) => format!(
                            "The NVIDIA driver on your system is too old (found version {v})"
                        ),
                        None => "The NVIDIA driver on your system is too old".to_string(),
                    })
            })
        });
        out.insert("said_too_old".into(), json!(said.is_some()));
        if let Some(s) = said {
            out.insert("said".into(), json!(s));
        }
        let text_seen = rt.is_some() || env.is_some() || dq.is_some() || cp.is_some();
        match text_driver {
            Some((code, src)) => {
                out.insert("driver_cuda_code".into(), json!(code));
                out.insert(
                    "driver_cuda".into(),
                    json!(cuda_compat::cuda_code_str(code)),
                );
                out.insert("driver_source".into(), json!(src));
            }
            None => match ctx.host.nvml() {
                Ok(r) => match r.cuda_driver_version.ok() {
                    Some(&v) if v > 0 => {
                        out.insert("driver_cuda_code".into(), json!(v));
                        out.insert(
                            "driver_cuda".into(),
                            json!(cuda_compat::cuda_code_str(v as u32)),
                        );
                        out.insert("driver_source".into(), json!("NVML"));
                    }
                    _ if !text_seen => {
                        return ProbeOutcome::Unknown(format!(
                            "NVML's CUDA driver version: {}",
                            r.cuda_driver_version
                                .reason()
                                .unwrap_or_else(|| "not reported".into())
                        ));
                    }
                    _ => {}
                },
                // nothing from the text and no NVML: nvidia-smi's banner pasted alone (no GPU
                // row, so no NVML reading) still says the driver's CUDA; else the probe cannot
                // tell (with pasted evidence only, NVML's message says it is not in the
                // evidence: not applicable)
                Err(e) => match smi_banner_cuda(&ctx.inputs.evidence) {
                    Some((code, src, path)) => {
                        out.insert("driver_cuda_code".into(), json!(code));
                        out.insert(
                            "driver_cuda".into(),
                            json!(cuda_compat::cuda_code_str(code)),
                        );
                        out.insert("driver_source".into(), json!(src));
                        if !files.contains(&path) {
                            files.push(path);
                        }
                    }
                    None if !text_seen => return ProbeOutcome::Unknown(e.into()),
                    None => {}
                },
            },
        }
        // what PyTorch was built for: the text first, then the installed package
        let text_torch = env
            .as_ref()
            .and_then(|e| Some((e.torch_cuda_code?, "collect_env".to_string())))
            .or_else(|| {
                let tag = rt.as_ref()?.torch_wheel_cuda.first()?;
                Some((
                    cuda_compat::cuda_code(tag)?,
                    format!("the torch version's +{tag} tag"),
                ))
            })
            .or_else(|| {
                // a torch version's `+cuXYZ` tag wherever the text prints one (`pip list`,
                // `torch==V`, a version print): one CUDA build, no CPU or ROCm build beside it
                let (tenv, tenv_files) = read_torch_env(ctx);
                let code = tenv.build_cuda_code()?;
                for f in tenv_files {
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
                let v = tenv
                    .torch_versions
                    .iter()
                    .find(|v| v.split_once('+').is_some_and(|(_, t)| t.starts_with("cu")));
                Some((
                    code,
                    match v {
                        Some(v) => format!("the torch build {v} in the text"),
                        None => "the torch build in the text".to_string(),
                    },
                ))
            });
        if let Some((code, src)) = text_torch {
            out.insert("torch_cuda_code".into(), json!(code));
            out.insert("torch_cuda".into(), json!(cuda_compat::cuda_code_str(code)));
            out.insert("torch_source".into(), json!(src));
        } else if !text_seen || ctx.host.is_live() {
            // the host's own stack (toolkit files, installed torch), as `cuda.stack` reads it
            if let ProbeOutcome::Value(Value::Object(stack)) =
                super::ProbeKind::run(&super::cuda_stack::CudaStack, &Map::new(), ctx)
            {
                if let Some(t) = stack.get("toolkit") {
                    out.insert("toolkit".into(), t.clone());
                }
                if let Some(code) = stack
                    .get("torch")
                    .and_then(|t| t.get("cuda_code"))
                    .and_then(Value::as_u64)
                {
                    out.insert("torch_cuda_code".into(), json!(code));
                    out.insert(
                        "torch_cuda".into(),
                        json!(cuda_compat::cuda_code_str(code as u32)),
                    );
                    out.insert("torch_source".into(), json!("installed package"));
                }
            }
        }
        if !files.is_empty() {
            out.insert("files".into(), json!(files));
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::fixture_dir;
    use crate::host::evidence::EvidenceHost;
    use crate::probes::{Inputs, run_with, value_of};
    use std::time::Duration;

    fn run(kind: &dyn crate::probes::ProbeKind, files: &[&str]) -> ProbeOutcome {
        let host = EvidenceHost::inputs_only("test");
        let inputs = Inputs {
            evidence: files.iter().map(|f| fixture_dir().join(f)).collect(),
            ..Default::default()
        };
        run_with(kind, &host, json!({}), &inputs, Duration::ZERO)
    }

    /// The probe on a text of its own (written to a file of this test's name).
    fn run_text(kind: &dyn crate::probes::ProbeKind, name: &str, text: &str) -> ProbeOutcome {
        let p =
            std::env::temp_dir().join(format!("gpufix-cuda-log-{}-{name}.txt", std::process::id()));
        std::fs::write(&p, text).unwrap();
        let out = run(kind, &[p.to_str().unwrap()]);
        let _ = std::fs::remove_file(&p);
        out
    }

    /// PyTorch's architecture warning quoted without its GPU line is its warning: the build
    /// lacks a GPU's architecture (pytorch/pytorch#182250's description, 2.11's advice line
    /// alone; stylegan3-editing#12, `_check_cubins`' list mid-sentence beside an RTX 3090).
    #[test]
    fn an_architecture_warning_without_its_gpu_line_is_the_arch_missing() {
        let advice = "When executing the code on a system with a V100 the recommendation states:\n\n```shell\nPlease follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that supports one of these CUDA versions: 12.6, 12.8\n```\n";
        let v = value_of(run_text(&CudaLog, "advice", advice));
        assert_eq!(v["arch_missing"], true, "{v}");
        assert_eq!(v["arch_warning_unattributed"], true);
        assert!(v.get("arch_gpu").is_none());
        let prose = "when using a newer graphics card ( like nvidia. GeForce RTX 3090) capability sm_86 is not compatible at the same time, you can see The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 currently\n";
        let v = value_of(run_text(&CudaLog, "list", prose));
        assert_eq!(v["arch_missing"], true, "{v}");
        assert_eq!(v["arch_gpu"], "GeForce RTX 3090");
        assert_eq!(v["arch_sm"], 86);
        // the same words without the warning's lines: nothing to judge
        let healthy = "On a system with a V100 and torch 2.11 the capability check passes; I installed a PyTorch release for CUDA 12.6.\n";
        assert!(matches!(
            run_text(&CudaLog, "healthy", healthy),
            ProbeOutcome::NotApplicable(_)
        ));
    }

    #[test]
    fn sm_120_names_the_cu128_index() {
        let v = value_of(run(&CudaLog, &["cuda/sm_120_not_compatible.txt"]));
        assert_eq!(v["arch_missing"], true);
        assert_eq!(v["arch_gpu"], "NVIDIA GeForce RTX 5060 Ti");
        assert_eq!(v["arch_sm"], 120);
        assert_eq!(v["arch_min_cuda"], "12.8");
        assert_eq!(v["wheel_index"], "https://download.pytorch.org/whl/cu128");
        assert_eq!(v["runtime_errors"], json!([]));
    }

    #[test]
    fn a_build_older_than_the_gpu_is_inferred_from_the_versions() {
        // pytorch/pytorch#150733's collect_env without the warning printed before it
        let v = value_of(run(
            &CudaLog,
            &["collect_env/torch26_cu126_5090d_pytorch150733.txt"],
        ));
        assert_eq!(v["arch_missing"], true);
        assert_eq!(v["arch_inferred"], true);
        assert_eq!(v["arch_gpu"], "NVIDIA GeForce RTX 5090 D");
        assert_eq!(v["arch_sm"], 120);
        assert_eq!(v["arch_build_cuda"], "12.6");
        assert_eq!(v["arch_min_cuda"], "12.8");
        assert_eq!(v["wheel_index"], "https://download.pytorch.org/whl/cu128");
        // pytorch/pytorch#130181: an A100 under a cu121 build has its kernels
        let a = value_of(run(
            &CudaLog,
            &["collect_env/torch25_cu121_a100_mig_pytorch130181.txt"],
        ));
        assert_eq!(a["arch_missing"], false);
        assert_eq!(a["arch_inferred"], false);
        // PyTorch's own warning is quoted, not inferred
        let w = value_of(run(&CudaLog, &["cuda/sm_120_not_compatible.txt"]));
        assert_eq!(w["arch_inferred"], false);
    }

    #[test]
    fn no_kernel_image_under_a_wheel_that_carries_the_gpu_is_another_librarys() {
        // InternLM/lmdeploy#3806: lmdeploy's own kernels on an RTX 5090 under 2.7.1+cu128,
        // whose official wheel has sm_120
        let v = value_of(run(
            &CudaLog,
            &["cuda_extension/no_kernel_image_lmdeploy3806_5090_torch271_cu128.txt"],
        ));
        assert_eq!(v["arch_missing"], false, "{v}");
        assert_eq!(v["arch_in_wheel"], "2.7.1+cu128");
        assert!(
            v["runtime_errors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["category"] == "arch"),
            "the error stays a runtime error: {v}"
        );
        // the same words without a build and GPU to judge them by (mit-han-lab/llm-awq#238):
        // the build's architecture list is the cause the text names
        let t = value_of(run(&CudaLog, &["cuda/no_kernel_image_traceback.txt"]));
        assert_eq!(t["arch_missing"], true, "{t}");
        assert!(t.get("arch_in_wheel").is_none());
    }

    #[test]
    fn an_old_gpu_is_judged_against_the_official_wheels_list() {
        // bnsreenu/digitalsreeni-image-annotator#57: a GTX 1050 beside 2.8.0+cu128, versions only
        let v = value_of(run(
            &CudaLog,
            &["../corpus/h30_post_digitalsreeni57_gtx1050_torch280_cu128_env.md"],
        ));
        assert_eq!(v["arch_missing"], true);
        assert_eq!(v["arch_inferred"], true);
        assert_eq!(v["arch_old"], true);
        assert_eq!(v["arch_sm"], 61);
        assert_eq!(v["arch_wheel"], "2.8.0+cu128");
        assert_eq!(v["build_archs"][0], "sm_70");
        // the same release's cu126 wheel keeps sm_60; no "needs CUDA 8.0" for an old GPU
        assert_eq!(v["wheel_index"], "https://download.pytorch.org/whl/cu126");
        assert!(v.get("arch_min_cuda").is_none());
        // vllm-project/vllm#3785: 8 P100 under 2.1.2+cu121, whose wheel has sm_60
        let h = value_of(run(
            &CudaLog,
            &["../corpus/h30_collectenv_vllm3785_p100x8_torch212_cu121.txt"],
        ));
        assert_eq!(h["arch_missing"], false);
        // Comfy-Org/ComfyUI#9705: Windows (`**OS:** nt`) 2.8.0+cu129, judged against the
        // Windows script's floor (nothing below sm_70), not the Linux list
        let w = value_of(run(
            &CudaLog,
            &["../corpus/h24_comfyui9705_gtx1070_cu129_sysinfo.md"],
        ));
        assert_eq!(w["arch_missing"], true);
        assert_eq!(w["arch_inferred"], true);
        assert_eq!(w["arch_wheel_platform"], "Windows");
        assert_eq!(w["build_archs"][0], "no architecture below sm_70");
        assert_eq!(w["arch_old"], true);
        assert!(w.get("wheel_index").is_none());
        // yyuezhi/GenVDM#5: a GTX 1070 under Windows 2.7.0+cu126 runs (the Windows 2.7 cu126
        // wheel has sm_61): judged, not missing
        let g = value_of(run(
            &CudaLog,
            &["../corpus/h33_collectenv_genvdm5_win10_gtx1070_torch270_cu126.txt"],
        ));
        assert_eq!(g["arch_missing"], false);
        assert!(g.get("arch_wheel_unjudged").is_none());
        // Comfy-Org/ComfyUI#10468: a GTX 1080 under Windows 2.10.0+cu130: the CUDA 13 floor
        let f = value_of(run(
            &CudaLog,
            &["../corpus/h33_comfyui10468_gtx1080_win32_cu130_sysinfo.md"],
        ));
        assert_eq!(f["arch_missing"], true);
        assert_eq!(f["arch_wheel_platform"], "");
        assert_eq!(f["build_archs"][0], "no architecture below sm_75");
        // Kaggle/docker-python#1546: torch 2.8's own warnings; old, so no newer index
        let k = value_of(run(
            &CudaLog,
            &["../corpus/h30_post_kaggledocker1546_p100_torch28_capability_warnings.md"],
        ));
        assert_eq!(k["arch_missing"], true);
        assert_eq!(k["arch_old"], true);
        assert!(k.get("wheel_index").is_none());
    }

    #[test]
    fn a_device_assert_with_its_assertion_line_names_the_op_as_next_evidence() {
        // RuiZhang97/ISNet#31 (h121): the assertion line below the error names Loss.cu:95
        let v = value_of(run(
            &CudaLog,
            &["../corpus/h121_cudaerr_isnet31_dsa_loss_cu_target_val.txt"],
        ));
        let e = &v["runtime_errors"][0];
        assert_eq!(e["name"], "cudaErrorAssert");
        assert_eq!(
            e["assertion"],
            "`target_val >= zero && target_val <= one` at Loss.cu:95 (operator())"
        );
        assert!(e["next"].as_str().unwrap().contains("Loss.cu:95"));
        assert_eq!(v["device_asserts"][0]["line"], 95);
        // WangYueFt/dcp#30 (h121): the error and its hints alone: no assertion, the rerun
        let d = value_of(run(
            &CudaLog,
            &["../corpus/h121_cudaerr_dcp30_dsa_windows_caret_epoch70.txt"],
        ));
        let e = &d["runtime_errors"][0];
        assert_eq!(e["name"], "cudaErrorAssert");
        assert!(e.get("assertion").is_none());
        assert!(
            e["next"]
                .as_str()
                .unwrap()
                .starts_with("rerun with CUDA_LAUNCH_BLOCKING=1")
        );
        assert_eq!(d["device_asserts"], json!([]));
    }

    #[test]
    fn an_invalid_kernel_image_alone_is_a_runtime_error_and_no_kernel_image_is_the_archs() {
        // Dao-AILab/flash-attention#1749: flash_attn 2.8.1's wheel, `CUDA error: device kernel
        // image is invalid` behind `[rank0]:`, no GPU or build named
        let v = value_of(run(
            &CudaLog,
            &["../corpus/h43_cudaerr_flashattn1749_kernel_image_invalid_rank0.log"],
        ));
        assert_eq!(v["arch_missing"], false);
        assert_eq!(
            v["runtime_errors"][0]["name"],
            "cudaErrorInvalidKernelImage"
        );
        assert!(
            v["runtime_errors"][0]["next"]
                .as_str()
                .unwrap()
                .contains("get_arch_list")
        );
        // hiyouga/LlamaFactory#10132: flash-attn's "no kernel image" on two RTX 5090 is
        // `cuda.arch-not-in-build`'s, not a runtime error as well
        let a = value_of(run(
            &CudaLog,
            &["../corpus/h43_cudaerr_llamafactory10132_5090_flashattn_no_kernel_image.log"],
        ));
        assert_eq!(a["arch_missing"], true);
        assert_eq!(a["runtime_errors"], json!([]));
    }

    #[test]
    fn illegal_access_is_a_runtime_error_with_what_to_collect() {
        let v = value_of(run(&CudaLog, &["cuda/illegal_memory_access.txt"]));
        assert_eq!(v["arch_missing"], false);
        assert_eq!(v["runtime_errors"][0]["name"], "cudaErrorIllegalAddress");
        assert!(
            v["runtime_errors"][0]["next"]
                .as_str()
                .unwrap()
                .contains("compute-sanitizer")
        );
    }

    #[test]
    fn collect_env_gives_the_driver_and_the_build() {
        let v = value_of(run(
            &CudaCompat,
            &["collect_env/torch16_v100_driver_418.txt"],
        ));
        assert_eq!(v["driver_cuda_code"], 10010);
        assert_eq!(v["torch_cuda_code"], 10020);
        assert_eq!(v["torch_source"], "collect_env");
        assert_eq!(v["said_too_old"], false);
        let l = value_of(run(&CudaLog, &["collect_env/torch16_v100_driver_418.txt"]));
        assert_eq!(l["cuda_unavailable_with_gpu"], true);
        assert_eq!(l["env"]["gpus"][1]["name"], "Tesla V100-PCIE-16GB");
    }

    #[test]
    fn a_build_without_cuda_beside_a_gpu_is_no_cuda_error() {
        // healthy: vllm-project/vllm#8493, a 2.4.0+cpu wheel chosen on purpose beside an RTX 2080
        let t = "PyTorch version: 2.4.0+cpu\nIs debug build: False\nCUDA used to build PyTorch: Could not collect\nROCM used to build PyTorch: N/A\nIs CUDA available: False\nCUDA runtime version: Could not collect\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 2080\nNvidia driver version: 560.70\n";
        let l = value_of(run_text(&CudaLog, "cpu", t));
        assert_eq!(l["cpu_only_build"], true);
        assert_eq!(l["cuda_unavailable_with_gpu"], false);
        // problem neighbour: a CUDA build that cannot reach the GPU still is
        let t = "PyTorch version: 2.1.0\nIs debug build: False\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\nIs CUDA available: False\nGPU models and configuration: GPU 0: A100-PCIE-40GB\nNvidia driver version: 460.32.03\n";
        let l = value_of(run_text(&CudaLog, "cu121", t));
        assert_eq!(l["cuda_unavailable_with_gpu"], true);
    }

    #[test]
    fn cuda_available_with_a_newer_build_outranks_the_driver_table() {
        // healthy: vllm-project/vllm#34470, a Jetson Thor's L4T driver `580.00` (the desktop
        // table: CUDA 12.9) under torch 2.10.0+cu130 with `Is CUDA available: True`
        let v = value_of(run(
            &CudaCompat,
            &["collect_env/vllm_torch210_cu130_thor_vllm34470.txt"],
        ));
        assert!(v["driver_cuda_code"].is_null(), "{v}");
        assert_eq!(v["torch_cuda_code"], 13000);
        // problem: pytorch/pytorch#43058, CUDA not available: the table's driver CUDA stands
        let v = value_of(run(
            &CudaCompat,
            &["collect_env/torch16_v100_driver_418.txt"],
        ));
        assert_eq!(v["driver_cuda_code"], 10010);
    }

    #[test]
    fn smi_banner_alone_gives_the_driver_and_a_torch_tag_the_build() {
        // problem: NVIDIA/GPUStressTest#13's banner (driver 570.133.20, `CUDA Version: 12.8`, the
        // table cut after it) beside sgl-project/sglang#14327's check_env `PyTorch: 2.9.1+cu130`:
        // a CUDA 13 build on a driver that runs CUDA 12.8
        let v = value_of(run(
            &CudaCompat,
            &[
                "cuda/smi_banner_570_b200_gpustresstest13.txt",
                "cuda/torch291_cu130_sglang14327.txt",
            ],
        ));
        assert_eq!(v["driver_cuda_code"], 12080, "{v}");
        assert_eq!(
            v["driver_source"],
            "nvidia-smi's banner: driver 570.133.20, CUDA Version 12.8"
        );
        assert_eq!(v["torch_cuda_code"], 13000);
        assert_eq!(v["torch_source"], "the torch build 2.9.1+cu130 in the text");
        // healthy: SYSTRAN/faster-whisper#1278's one banner line (535.183.01, CUDA 12.2, no
        // closing bar) beside bnsreenu/digitalsreeni-image-annotator#57's `PyTorch:
        // 2.8.0+cu128`: the same CUDA major, which minor-version compatibility runs
        let v = value_of(run(
            &CudaCompat,
            &[
                "cuda/smi_banner_535_fasterwhisper1278.txt",
                "cuda/torch280_cu128_digitalsreeni57.txt",
            ],
        ));
        assert_eq!(v["driver_cuda_code"], 12020, "{v}");
        assert_eq!(v["torch_cuda_code"], 12080);
        // healthy: R610's banner (sgl-project/sglang#27487: `KMD Version: 610.43.02  CUDA UMD
        // Version: 13.3`) beside the cu130 build
        let v = value_of(run(
            &CudaCompat,
            &[
                "cuda/smi_banner_610_kmd_umd_sglang27487.txt",
                "cuda/torch291_cu130_sglang14327.txt",
            ],
        ));
        assert_eq!(v["driver_cuda_code"], 13030, "{v}");
        assert_eq!(v["torch_cuda_code"], 13000);
        // two builds named (before and after a reinstall): no build to judge
        let v = value_of(run(
            &CudaCompat,
            &[
                "cuda/smi_banner_570_b200_gpustresstest13.txt",
                "cuda/torch291_cu130_sglang14327.txt",
                "cuda/torch280_cu128_digitalsreeni57.txt",
            ],
        ));
        assert!(v["torch_cuda_code"].is_null(), "{v}");
    }

    #[test]
    fn a_ptx_of_a_newer_toolkit_says_too_old() {
        // h134: a kernel launch check's `CUDA kernel launch error: the provided PTX was compiled
        // with an unsupported toolchain.` (cudaErrorUnsupportedPtxVersion) above nvcc 12.6
        let v = value_of(run(
            &CudaCompat,
            &["cuda/ptx_unsupported_toolchain_ryankor.txt"],
        ));
        assert_eq!(v["said_too_old"], true, "{v}");
        assert_eq!(
            v["said"],
            "CUDA kernel launch error: the provided PTX was compiled with an unsupported toolchain."
        );
        // and it is not a runtime error of its own (`cuda.error-in-log`)
        let v = value_of(run(
            &CudaLog,
            &["cuda/ptx_unsupported_toolchain_ryankor.txt"],
        ));
        assert!(
            v["runtime_errors"].as_array().is_none_or(|a| a.is_empty()),
            "{v}"
        );
    }

    #[test]
    fn torch_warning_says_too_old() {
        let v = value_of(run(&CudaCompat, &["cuda/torch_driver_too_old_12080.txt"]));
        assert_eq!(v["said_too_old"], true);
        assert_eq!(v["driver_cuda"], "12.8");
        assert_eq!(v["driver_source"], "PyTorch's \"found version 12080\"");
    }

    #[test]
    fn nothing_recognised_is_not_applicable_or_unknown() {
        assert!(matches!(
            run(&CudaLog, &["nccl/single_node_p2p.log"]),
            ProbeOutcome::NotApplicable(_)
        ));
        // no text and no NVML: the evidence host's own message (not in the evidence)
        match run(&CudaCompat, &["nccl/single_node_p2p.log"]) {
            ProbeOutcome::Unknown(e) => assert!(e.contains(crate::host::NOT_IN_EVIDENCE)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nvrtc_refusing_the_architecture_names_the_toolkit_not_a_torch_build() {
        // github.com/cupy/cupy/issues/9475's title line: CuPy on CUDA 13.0's NVRTC, a GTX 1080
        let cupy = "GTX 1080 | \"NVRTC_ERROR_INVALID_OPTION (5)\" && \"nvrtc: error: invalid value for --gpu-architecture (-arch)\"\n";
        let v = value_of(run_text(&CudaLog, "cupy", cupy));
        assert_eq!(v["arch_missing"], true, "{v}");
        assert_eq!(v["arch_compiler"], "nvrtc", "{v}");
        // PyTorch's own "no kernel image" beside it: the build's list is what the text shows
        let both = format!(
            "{cupy}RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        );
        let v = value_of(run_text(&CudaLog, "both", &both));
        assert_eq!(v["arch_missing"], true, "{v}");
        assert!(v.get("arch_compiler").is_none(), "{v}");
    }

    #[test]
    fn the_builds_own_arch_list_is_judged_and_said_to_be_read() {
        // pytorch/pytorch#182250's REPL lines (2.11.0+cu128 has no sm_70); the GPU line stands
        // for the issue's V100
        let t = ">>> torch.__version__\n'2.11.0+cu128'\n>>> torch.cuda.get_arch_list()\n['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120']\nGPU 0: Tesla V100-SXM2-32GB\n";
        let v = value_of(run_text(&CudaLog, "repl", t));
        assert_eq!(v["arch_missing"], true, "{v}");
        assert_eq!(v["arch_list_read"], true, "{v}");
        assert_eq!(v["arch_sm"], 70);
        assert_eq!(v["build_archs"][0], "sm_75");
        // the list beside a GPU it runs: not missing
        let ok = t.replace("Tesla V100-SXM2-32GB", "NVIDIA H100 80GB HBM3");
        let v = value_of(run_text(&CudaLog, "ok", &ok));
        assert_eq!(v["arch_missing"], false, "{v}");
    }
}
