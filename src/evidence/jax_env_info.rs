//! JAX's `jax.print_environment_info()` (`python -c 'import jax; jax.print_environment_info()'`),
//! which JAX's bug template asks for (and flax's, optax's, equinox's …), read from its producer:
//! jax-ml/jax `jax/_src/environment_info.py`, every version of it (read in a clone of the
//! repository: 0fb462ef, 2022-09, the first; 8d3cdcb9, jax 0.4.25, adds `platform`; 83b0a932,
//! jax 0.4.35, replaces the device list with `device info`; 24530dc9, jax 0.6.1, appends the
//! `JAX_*` environment; 385c5940, jax 0.7.0, `XLA_*` too; unchanged in content to 116f94ea,
//! 2026-04). Its lines, in order:
//!
//! ```text
//! jax:    0.4.33                      version.__version__
//! jaxlib: 0.4.33                      lib.version_str (a CUDA wheel before 0.4.x: `0.3.20+cuda11.cudnn82`)
//! numpy:  1.26.4
//! python: 3.10.12 (main, …) [GCC 11.4.0]                sys.version, newlines as spaces
//! jax.devices (8 total, 8 local): [CudaDevice(id=0) CudaDevice(id=1) ... CudaDevice(id=7)]
//!                                     to 0.4.34: str(np.array(devices)) with threshold=4,
//!                                     edgeitems=2 (more than four: the first two, ` ... `, the
//!                                     last two), newlines removed
//! device info: NVIDIA A100-SXM4-80GB-1, 1 local devices"
//!                                     0.4.35+: f'{devices()[0].device_kind}-{device_count()},
//!                                     {local_device_count()} local devices"' (the stray quote is
//!                                     the producer's)
//! process_count: 1
//! platform: uname_result(system='Linux', node='…', release='…', version='…', machine='x86_64')
//!                                     0.4.25+: platform.uname()
//! JAX_PLATFORMS=cpu                   0.6.1+: each environment variable starting with JAX_
//! XLA_PYTHON_CLIENT_PREALLOCATE=false 0.7.0+: and with XLA_
//!
//! $ nvidia-smi                        only where `subprocess.check_output(['nvidia-smi'])`
//! <nvidia-smi's own table>            returned: nvidia-smi exited 0
//! ```
//!
//! A device's repr is its platform's: `CpuDevice(id=0)` and `TFRT_CPU_0` (CPU), `GpuDevice(id=0,
//! process_index=0)` (GPU, 0.3.x), `CudaDevice(id=0)` and `cuda(id=0)` (CUDA), `rocm(id=0)`
//! (ROCm), `TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0)` (TPU), `METAL(id=0)`;
//! `device_kind` is `cpu` for the CPU, the GPU's name (`NVIDIA GeForce RTX 3090`), or the TPU's
//! (`TPU v4`). `nvidia-smi` exits non-zero where it finds no GPU ("No devices were found") or no
//! driver, and `check_output` then raises: so a `$ nvidia-smi` section with nvidia-smi's banner
//! under the environment lines is nvidia-smi, run by the same process, seeing a GPU. The table
//! itself is the nvidia-smi table kind's; this reader keeps only its banner's driver and CUDA.

use serde::Serialize;
use std::sync::LazyLock;

use regex::Regex;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct JaxEnvInfo {
    /// `jax:` (`0.4.33`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jax_version: Option<String>,
    /// `jaxlib:` as printed (`0.4.33`, `0.3.20+cuda11.cudnn82`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jaxlib_version: Option<String>,
    /// The jaxlib version's local tag, where it has one (`cuda11.cudnn82`): the CUDA wheels
    /// before jax 0.4.x's plugins carried it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jaxlib_build: Option<String>,
    /// `numpy:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numpy_version: Option<String>,
    /// `python:` (sys.version), clipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python_version: Option<String>,
    /// `devices` (`jax.devices (…)`, to 0.4.34) or `device-info` (0.4.35+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devices_line: Option<&'static str>,
    /// All devices, of every process (`N total`; the count before `-` in `device info`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_count: Option<u32>,
    /// This process's devices (`M local`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_device_count: Option<u32>,
    /// The device reprs listed (at most four: numpy elides the middle of a longer list).
    pub devices: Vec<String>,
    /// `device info`'s device kind (`NVIDIA A100-SXM4-80GB`, `cpu`, `TPU v4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_kind: Option<String>,
    /// The platform the devices are on, from their reprs or the device kind: `cpu`, `cuda`
    /// (`gpu` for 0.3.x's `GpuDevice` and a non-NVIDIA device kind), `rocm`, `tpu`, `metal`;
    /// one entry per platform seen.
    pub device_platforms: Vec<String>,
    /// `process_count:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_count: Option<u32>,
    /// `platform:`'s uname: system, release and machine (node and version left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<Uname>,
    /// The `JAX_*` and `XLA_*` environment lines (0.6.1+): name and value.
    pub env: Vec<(String, String)>,
    /// A `$ nvidia-smi` section follows with nvidia-smi's banner: nvidia-smi, run by the same
    /// process, exited 0 (it saw a GPU).
    pub nvidia_smi: bool,
    /// The banner's `Driver Version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia_smi_driver: Option<String>,
    /// The banner's `CUDA Version` (the newest CUDA the driver runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia_smi_cuda: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Uname {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

impl JaxEnvInfo {
    /// Every device listed is the CPU's (JAX runs on the CPU).
    pub fn cpu_only(&self) -> bool {
        !self.device_platforms.is_empty() && self.device_platforms.iter().all(|p| p == "cpu")
    }
    /// The value of a `JAX_*`/`XLA_*` line, where printed.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `jax.devices (8 total, 8 local): [...]`.
static DEVICES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^jax\.devices \((\d+) total, (\d+) local\):\s*(.*)$").expect("devices regex")
});

/// `device info: NVIDIA A100-SXM4-80GB-1, 1 local devices"` (the kind may hold `-`).
static DEVICE_INFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^device info: (.+)-(\d+), (\d+) local devices"?$"#).expect("device info regex")
});

/// One device repr in numpy's str of the device array: `Name(id=0, … (…) …)` or `TFRT_CPU_0`.
static DEVICE_REPR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([A-Za-z][A-Za-z0-9_]*)\(id=(\d+)(?:[^()]|\([^()]*\))*\)|\b(TFRT_CPU_\d+)\b")
        .expect("device repr regex")
});

/// A `JAX_*` / `XLA_*` environment line as the producer prints it (`f"\n{key}={value}"`).
static ENV_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^((?:JAX|XLA)_[A-Z0-9_]*)=(.*)$").expect("env line regex"));

/// nvidia-smi's banner: `| NVIDIA-SMI 560.35.03   Driver Version: 560.35.03   CUDA Version: 12.6 |`.
static SMI_BANNER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NVIDIA-SMI\s+\S+\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*([0-9.]+))?")
        .expect("smi banner regex")
});

/// A `key='value'` of the uname_result.
static UNAME_FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\w+)='([^']*)'").expect("uname field regex"));

/// The platform a device repr's name is on.
fn repr_platform(name: &str) -> &'static str {
    match name.to_ascii_lowercase().as_str() {
        "cpudevice" | "cpu" => "cpu",
        "cudadevice" | "cuda" => "cuda",
        "gpudevice" | "gpu" => "gpu",
        "rocmdevice" | "rocm" => "rocm",
        "tpudevice" | "tpu" => "tpu",
        "metal" => "metal",
        _ if name.starts_with("TFRT_CPU") => "cpu",
        _ => "other",
    }
}

/// The platform of `device info`'s device kind.
fn kind_platform(kind: &str) -> &'static str {
    let k = kind.trim();
    if k.eq_ignore_ascii_case("cpu") {
        "cpu"
    } else if k.starts_with("TPU") {
        "tpu"
    } else if k.starts_with("NVIDIA") || k.starts_with("Tesla") || k.starts_with("Quadro") {
        "cuda"
    } else {
        "gpu"
    }
}

/// The line without a Python prompt or markdown list/quote noise a paste may carry.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.trim()
        .strip_prefix(key)
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
}

/// True when the text holds print_environment_info's `jax:` and `jaxlib:` lines and its
/// devices line (either form), within a few lines of each other.
pub fn looks_like_jax_env_info(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text).take(2000).collect();
    lines.iter().enumerate().any(|(i, l)| {
        field(l, "jax:").is_some()
            && lines.get(i + 1).and_then(|l| field(l, "jaxlib:")).is_some()
            && lines[i + 1..lines.len().min(i + 8)].iter().any(|l| {
                let t = l.trim();
                DEVICES.is_match(t) || DEVICE_INFO.is_match(t)
            })
    })
}

pub fn parse_jax_env_info(text: &str) -> JaxEnvInfo {
    let mut out = JaxEnvInfo::default();
    let lines: Vec<&str> = super::content_lines(text).collect();
    // the first block: from `jax:` on, the producer's lines in order
    let Some(start) = lines.iter().position(|l| field(l, "jax:").is_some()) else {
        return out;
    };
    let mut end = start;
    for (i, raw) in lines.iter().enumerate().skip(start) {
        let l = raw.trim();
        if i > start && l.is_empty() {
            // blank lines end the environment lines; the nvidia-smi section may follow
            end = i;
            break;
        }
        end = i + 1;
        if let Some(v) = field(l, "jax:") {
            if out.jax_version.is_some() {
                // a second print: read the first only
                end = i;
                break;
            }
            out.jax_version = Some(super::clip(v, 64));
        } else if let Some(v) = field(l, "jaxlib:") {
            out.jaxlib_version = Some(super::clip(v, 64));
            out.jaxlib_build = v.split_once('+').map(|(_, b)| super::clip(b, 64));
        } else if let Some(v) = field(l, "numpy:") {
            out.numpy_version = Some(super::clip(v, 64));
        } else if let Some(v) = field(l, "python:") {
            out.python_version = Some(super::clip(v, 200));
        } else if let Some(c) = DEVICES.captures(l) {
            out.devices_line = Some("devices");
            out.device_count = c[1].parse().ok();
            out.local_device_count = c[2].parse().ok();
            for d in DEVICE_REPR.captures_iter(&c[3]) {
                let (name, repr) = match (d.get(1), d.get(3)) {
                    (Some(n), _) => (n.as_str(), d.get(0).map_or("", |m| m.as_str())),
                    (None, Some(t)) => (t.as_str(), t.as_str()),
                    _ => continue,
                };
                let p = repr_platform(name).to_string();
                if !out.device_platforms.contains(&p) {
                    out.device_platforms.push(p);
                }
                if out.devices.len() < super::MAX_ITEMS {
                    out.devices.push(super::clip(repr, 200));
                }
            }
        } else if let Some(c) = DEVICE_INFO.captures(l) {
            out.devices_line = Some("device-info");
            let kind = c[1].trim();
            out.device_kind = Some(super::clip(kind, 200));
            out.device_count = c[2].parse().ok();
            out.local_device_count = c[3].parse().ok();
            out.device_platforms.push(kind_platform(kind).to_string());
        } else if let Some(v) = field(l, "process_count:") {
            out.process_count = v.parse().ok();
        } else if let Some(v) = field(l, "platform:") {
            let mut u = Uname::default();
            for f in UNAME_FIELD.captures_iter(v) {
                let val = Some(super::clip(&f[2], 200));
                match &f[1] {
                    "system" => u.system = val,
                    "release" => u.release = val,
                    "machine" => u.machine = val,
                    _ => {}
                }
            }
            out.os = Some(u);
        } else if let Some(c) = ENV_LINE.captures(l) {
            if out.env.len() < super::MAX_ITEMS {
                out.env
                    .push((c[1].to_string(), super::clip(c[2].trim(), super::MAX_TEXT)));
            }
        } else if i > start {
            // a line the producer does not print: the block ended (a paste's next output)
            end = i;
            break;
        }
    }
    // `\n\n$ nvidia-smi\n` then nvidia-smi's output: only blank lines (and a markdown fence a
    // paste may put around it) between
    let mut rest = lines[end..]
        .iter()
        .map(|l| l.trim())
        .skip_while(|l| l.is_empty() || l.starts_with("```"));
    if rest
        .next()
        .is_some_and(|l| l.trim_start_matches('$').trim() == "nvidia-smi")
    {
        // its date line, the border, then the banner
        if let Some(c) = rest.take(4).find_map(|l| SMI_BANNER.captures(l)) {
            out.nvidia_smi = true;
            out.nvidia_smi_driver = Some(super::clip(&c[1], 32));
            out.nvidia_smi_cuda = c.get(2).map(|m| m.as_str().to_string());
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct JaxEnvInfoKind;

impl super::EvidenceKind for JaxEnvInfoKind {
    fn name(&self) -> &'static str {
        "jax-env-info"
    }
    fn doc(&self) -> &'static str {
        "JAX's print_environment_info(): the jax, jaxlib, numpy and Python versions, the devices JAX uses, the process count, the OS, JAX_/XLA_ variables, and nvidia-smi as the same process ran it"
    }
    fn example(&self) -> &'static str {
        "python -c 'import jax; jax.print_environment_info()'"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("jax_version", "`jax:`"),
            (
                "jaxlib_version",
                "`jaxlib:` as printed (0.3.20+cuda11.cudnn82)",
            ),
            (
                "jaxlib_build",
                "the jaxlib version's local tag (cuda11.cudnn82), where it has one",
            ),
            ("numpy_version", "`numpy:`"),
            ("python_version", "`python:` (sys.version)"),
            (
                "devices_line",
                "`devices` (`jax.devices (N total, M local): [...]`, to 0.4.34) or `device-info` (0.4.35+)",
            ),
            ("device_count", "all devices, of every process (`N total`)"),
            ("local_device_count", "this process's devices"),
            (
                "devices",
                "the device reprs listed (CpuDevice(id=0), cuda(id=0), …; numpy elides the middle of more than four)",
            ),
            (
                "device_kind",
                "`device info`'s device kind (NVIDIA A100-SXM4-80GB, cpu, TPU v4)",
            ),
            (
                "device_platforms",
                "the platforms the devices are on: cpu, cuda, gpu, rocm, tpu, metal",
            ),
            ("process_count", "`process_count:`"),
            ("os", "`platform:`'s uname: system, release, machine"),
            (
                "env",
                "the JAX_* and XLA_* environment lines (0.6.1+): name, value",
            ),
            (
                "nvidia_smi",
                "a `$ nvidia-smi` section with nvidia-smi's banner follows: nvidia-smi, run by the same process, exited 0",
            ),
            ("nvidia_smi_driver", "its banner's Driver Version"),
            ("nvidia_smi_cuda", "its banner's CUDA Version"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cuda.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_jax_env_info(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_jax_env_info(text);
        if v.jax_version.is_none() || v.devices_line.is_none() {
            return Err(super::ParseError::NotThisKind(
                "no `jax:` line with the devices line of jax.print_environment_info() in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::evidence::corpus_text as corpus;

    /// jax-ml/jax#21295 (h158): jax 0.4.33 on 8 x A10G, the device list of 0.4.25–0.4.34 with
    /// numpy's elision, the platform line, nvidia-smi's section.
    #[test]
    fn a_healthy_device_list_every_field() {
        let t = corpus("h158_jaxenv_jax21295_8xa10g_550_env_info.txt");
        assert!(looks_like_jax_env_info(&t));
        let e = parse_jax_env_info(&t);
        assert_eq!(e.jax_version.as_deref(), Some("0.4.33"));
        assert_eq!(e.jaxlib_version.as_deref(), Some("0.4.33"));
        assert_eq!(e.jaxlib_build, None);
        assert_eq!(e.numpy_version.as_deref(), Some("1.26.4"));
        assert_eq!(
            e.python_version.as_deref(),
            Some("3.10.12 (main, Sep 11 2024, 15:47:36) [GCC 11.4.0]")
        );
        assert_eq!(e.devices_line, Some("devices"));
        assert_eq!((e.device_count, e.local_device_count), (Some(8), Some(8)));
        assert_eq!(
            e.devices,
            [
                "CudaDevice(id=0)",
                "CudaDevice(id=1)",
                "CudaDevice(id=6)",
                "CudaDevice(id=7)"
            ]
        );
        assert_eq!(e.device_platforms, ["cuda"]);
        assert!(!e.cpu_only());
        assert_eq!(e.process_count, Some(1));
        let os = e.os.as_ref().unwrap();
        assert_eq!(os.system.as_deref(), Some("Linux"));
        assert_eq!(os.release.as_deref(), Some("6.8.0-1017-aws"));
        assert_eq!(os.machine.as_deref(), Some("x86_64"));
        assert!(e.env.is_empty());
        assert!(e.nvidia_smi);
        assert_eq!(e.nvidia_smi_driver.as_deref(), Some("550.127.05"));
        assert_eq!(e.nvidia_smi_cuda.as_deref(), Some("12.4"));
    }

    /// conda-forge/jaxlib-feedstock#285 (h161): the CUDA build without its plugin lists only
    /// the CPU, under JAX's warning, while the same process's nvidia-smi runs.
    #[test]
    fn a_cpu_only_list_beside_nvidia_smi() {
        let t = corpus("h161_jaxenv_jaxlibfs285_conda_cuda_build_cpu_only_560.txt");
        assert!(looks_like_jax_env_info(&t));
        let e = parse_jax_env_info(&t);
        assert_eq!(e.jax_version.as_deref(), Some("0.4.32"));
        assert_eq!(e.devices, ["CpuDevice(id=0)"]);
        assert_eq!((e.device_count, e.local_device_count), (Some(1), Some(1)));
        assert!(e.cpu_only());
        assert!(e.nvidia_smi);
        assert_eq!(e.nvidia_smi_driver.as_deref(), Some("560.35.03"));
        assert_eq!(e.nvidia_smi_cuda.as_deref(), Some("12.6"));
        assert!(
            e.python_version
                .as_deref()
                .unwrap()
                .contains("packaged by conda-forge")
        );
    }

    /// jax-ml/jax#27231 (h161): jax 0.5.2's `device info` line, the kind holding `-`, and the
    /// producer's stray quote; jaxlib older than jax.
    #[test]
    fn the_device_info_line_of_0_4_35_and_later() {
        let t = corpus("h161_jaxenv_jax27231_jit_result_8x3090_570_device_info.txt");
        assert!(looks_like_jax_env_info(&t));
        let e = parse_jax_env_info(&t);
        assert_eq!(
            (e.jax_version.as_deref(), e.jaxlib_version.as_deref()),
            (Some("0.5.2"), Some("0.5.1"))
        );
        assert_eq!(e.devices_line, Some("device-info"));
        assert_eq!(e.device_kind.as_deref(), Some("NVIDIA GeForce RTX 3090"));
        assert_eq!((e.device_count, e.local_device_count), (Some(8), Some(8)));
        assert_eq!(e.device_platforms, ["cuda"]);
        assert!(e.devices.is_empty());
        assert!(e.nvidia_smi);
        assert_eq!(e.nvidia_smi_driver.as_deref(), Some("570.86.16"));
        // an A100's kind ends in a digit group of its own (`A100-SXM4-80GB-1`)
        let e = parse_jax_env_info(&corpus(
            "h161_jaxenv_jax32157_vmap_conv_a100_570_xla_env.txt",
        ));
        assert_eq!(e.device_kind.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
        assert_eq!(e.device_count, Some(1));
        // the CPU's kind is `cpu`, as `device info: cpu-1` prints it
        let e = parse_jax_env_info(
            "jax:    0.5.2\njaxlib: 0.5.2\nnumpy:  2.2.5\npython: 3.13.3\ndevice info: cpu-1, 1 local devices\"\nprocess_count: 1\n",
        );
        assert!(e.cpu_only());
        assert!(!e.nvidia_smi);
    }

    /// jax-ml/jax#32157 (h161): jax 0.7.2 appends the XLA_ variables set.
    #[test]
    fn the_jax_and_xla_environment_lines() {
        let e = parse_jax_env_info(&corpus(
            "h161_jaxenv_jax32157_vmap_conv_a100_570_xla_env.txt",
        ));
        assert_eq!(
            e.env,
            [("XLA_PYTHON_CLIENT_PREALLOCATE".into(), "false".into())]
        );
        assert_eq!(e.env_var("XLA_PYTHON_CLIENT_PREALLOCATE"), Some("false"));
        assert!(e.nvidia_smi);
        assert_eq!(e.nvidia_smi_driver.as_deref(), Some("570.172.08"));
    }

    /// jax-ml/jax#12213 (h161): the first format (jax 0.3.17): no platform line; 0.3.x's
    /// `GpuDevice` repr; the CPU runtime prints no nvidia-smi section.
    #[test]
    fn the_first_format_and_a_cpu_runtime() {
        let e = parse_jax_env_info(&corpus("h161_jaxenv_jax12213_colab_t4_gpudevice_460.txt"));
        assert_eq!(e.jaxlib_version.as_deref(), Some("0.3.15"));
        assert_eq!(e.devices, ["GpuDevice(id=0, process_index=0)"]);
        assert_eq!(e.device_platforms, ["gpu"]);
        assert_eq!(e.os, None);
        assert!(e.nvidia_smi);
        assert_eq!(e.nvidia_smi_driver.as_deref(), Some("460.32.03"));
        let e = parse_jax_env_info(&corpus("h161_jaxenv_jax12213_colab_cpu_only_no_gpu.txt"));
        assert!(e.cpu_only());
        assert_eq!(e.process_count, Some(1));
        assert!(!e.nvidia_smi);
        assert_eq!(e.nvidia_smi_driver, None);
    }

    /// Other platforms' reprs as jax prints them (jax/_src/lib and jaxlib's device classes):
    /// TPU's repr holds spaces and parentheses; TFRT's CPU device; ROCm; a CUDA jaxlib's tag.
    #[test]
    fn other_device_reprs_and_a_cuda_wheel_tag() {
        let t = "jax:    0.3.25\njaxlib: 0.3.25+cuda11.cudnn82\nnumpy:  1.23.5\npython: 3.8.10\n\
                 jax.devices (8 total, 8 local): [TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0) TpuDevice(id=1, process_index=0, coords=(0,0,0), core_on_chip=1) ... TpuDevice(id=6, process_index=0, coords=(1,1,0), core_on_chip=0) TpuDevice(id=7, process_index=0, coords=(1,1,0), core_on_chip=1)]\n\
                 process_count: 1\n";
        let e = parse_jax_env_info(t);
        assert_eq!(e.jaxlib_build.as_deref(), Some("cuda11.cudnn82"));
        assert_eq!(e.devices.len(), 4);
        assert!(e.devices[0].ends_with("core_on_chip=0)"), "{:?}", e.devices);
        assert_eq!(e.device_platforms, ["tpu"]);
        let e = parse_jax_env_info(
            "jax:    0.3.17\njaxlib: 0.3.15\nnumpy:  1.21.6\npython: 3.7.13\njax.devices (1 total, 1 local): [TFRT_CPU_0]\nprocess_count: 1\n",
        );
        assert_eq!(e.devices, ["TFRT_CPU_0"]);
        assert!(e.cpu_only());
        let e = parse_jax_env_info(
            "jax:    0.4.28\njaxlib: 0.4.28\nnumpy:  1.26.4\npython: 3.10.14\njax.devices (2 total, 2 local): [rocm(id=0) rocm(id=1)]\nprocess_count: 1\n",
        );
        assert_eq!(e.device_platforms, ["rocm"]);
        assert!(!e.cpu_only());
    }

    /// A `$ nvidia-smi` section that is not this print's (prose between) is not read as it, and
    /// an env block cut before the devices line (jax-ml/jax#20519's stored copy ends on it) is.
    #[test]
    fn only_the_section_the_producer_printed_counts() {
        let t = "jax:    0.4.26\njaxlib: 0.4.26\nnumpy:  1.26.4\npython: 3.11.8\njax.devices (1 total, 1 local): [CpuDevice(id=0)]\nprocess_count: 1\n\nAnd on the host:\n\n$ nvidia-smi\n| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |\n";
        let e = parse_jax_env_info(t);
        assert!(e.cpu_only());
        assert!(!e.nvidia_smi);
        let e = parse_jax_env_info(&corpus(
            "h161_jaxenv_jax20519_cudnn_unloadable_cpu_fallback.txt",
        ));
        assert_eq!(e.jax_version.as_deref(), Some("0.4.25"));
        assert!(e.cpu_only());
        assert_eq!(e.process_count, None);
    }

    #[test]
    fn prose_and_other_reports_are_not_claimed() {
        assert!(!looks_like_jax_env_info(
            "I use jax: 0.4.30 and jaxlib: 0.4.30 on my GPU\n"
        ));
        // pip's list names jax and jaxlib without the devices line
        assert!(!looks_like_jax_env_info(
            "jax                      0.4.34\njaxlib                   0.4.34\n"
        ));
        // `jax.devices()` printed alone
        assert!(!looks_like_jax_env_info("[CudaDevice(id=0)]\n"));
    }
}
