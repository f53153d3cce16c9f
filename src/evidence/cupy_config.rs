//! CuPy's `cupy.show_config()` (`python -c 'import cupy; cupy.show_config()'`), which CuPy's
//! issue template asks for, read from its producer: cupy/cupy `cupyx/_runtime.py`
//! (`_RuntimeInfo.__str__`, read at 8b6accb1; the records CuPy 13 and 14 add, `CuPy Platform`,
//! `Python Version`, `nvcc PATH`, `CUDA Extra Include Dirs`, `Jitify Build Version`,
//! `cuSPARSELt Build Version`, the runtime's `(linked to CuPy) / (locally installed)` pair, are
//! read by the same rule). Every record is one line, its label padded to the longest label
//! plus two (`fmt = '{:' + str(width) + '}: {}\n'`):
//!
//! ```text
//! OS                           : Linux-6.2.0-32-generic-x86_64-with-glibc2.35
//! CuPy Version                 : 13.0.0b1
//! CUDA Build Version           : 12020        cupy.cuda.driver.get_build_version(): CUDA_VERSION CuPy was built with
//! CUDA Driver Version          : 12030        runtime.driverGetVersion(): the newest CUDA the driver runs
//! CUDA Runtime Version         : 12030        runtime.runtimeGetVersion(); CuPy 13+: `12090 (linked to CuPy) / 12000 (locally installed)`
//! cuBLAS Version               : (available)  or the library's error, `repr(e)` (`_eval_or_error`)
//! NVRTC Version                : (12, 3)
//! Device 0 Name                : NVIDIA GeForce RTX 4090
//! Device 0 Compute Capability  : 89           device.compute_capability
//! ```
//!
//! A version is CUDA's own number (`1000 * major + 10 * minor`), the code gpufix's CUDA
//! versions use. A call that failed prints the exception's `repr` in place of the value
//! (`CUDARuntimeError('cudaErrorInsufficientDriver: …')`, `ImportError('Failure finding
//! "libcublasLt.so": …')`): those are kept by label, never read as versions. `cuda.compat`
//! takes the driver's CUDA from `CUDA Driver Version`.

use serde::Serialize;
use std::sync::LazyLock;

use regex::Regex;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CupyConfig {
    /// `CuPy Version` (`13.0.0b1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cupy_version: Option<String>,
    /// `CuPy Platform` (`NVIDIA CUDA`, `AMD ROCm`), CuPy 9 and later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// `CUDA Build Version`: the CUDA CuPy was built with (12020).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_build: Option<u32>,
    /// `CUDA Driver Version`: the newest CUDA the driver runs (12030).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_driver: Option<u32>,
    /// `CUDA Runtime Version`: the runtime CuPy uses (CuPy 13+: the one linked to CuPy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_runtime: Option<u32>,
    /// CuPy 13+'s `… / N (locally installed)`: the runtime found on the system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_runtime_local: Option<u32>,
    /// `NVRTC Version` as printed (`(12, 3)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvrtc: Option<String>,
    /// `Device N Name` and `Device N Compute Capability` lines.
    pub devices: Vec<Device>,
    /// Records whose call failed: (label, the exception's repr, clipped).
    pub errors: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Device {
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `device.compute_capability` as printed (`89`, `120`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
}

/// A record line: the label, padded with at least one space, then `: ` and the value.
static RECORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z][A-Za-z0-9 ./()-]*?[A-Za-z0-9)])\s+: ?(.*)$").expect("record regex")
});

/// An exception's repr printed for a record (`_eval_or_error`): `Name('…')` or `Name(…)`.
static ERROR_REPR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Z][A-Za-z]*(Error|Exception)\(").expect("error repr regex"));

/// A record line's label and value (`CUDA Driver Version          : 12030`).
fn record(line: &str) -> Option<(&str, &str)> {
    let c = RECORD.captures(line.trim())?;
    Some((c.get(1)?.as_str(), c.get(2)?.as_str().trim()))
}

/// True when the text holds `show_config()`'s `CuPy Version` record and one of its CUDA
/// records (`CUDA Root`, `CUDA Build Version`, `CUDA Driver Version`).
pub fn looks_like_cupy_config(text: &str) -> bool {
    let mut cupy = false;
    let mut cuda = false;
    for line in super::content_lines(text).take(400) {
        if let Some((label, _)) = record(line) {
            match label {
                "CuPy Version" => cupy = true,
                "CUDA Root" | "CUDA Build Version" | "CUDA Driver Version" => cuda = true,
                _ => {}
            }
        }
        if cupy && cuda {
            return true;
        }
    }
    false
}

/// CUDA's version number as `show_config()` prints it (`12030`; `12090 (linked to CuPy)`).
fn version_number(v: &str) -> Option<u32> {
    let n: String = v
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let n: u32 = n.parse().ok()?;
    // CUDA 7.0 (7000) to a CUDA 99: anything else is not a CUDA version
    (7000..100_000).contains(&n).then_some(n)
}

pub fn parse_cupy_config(text: &str) -> CupyConfig {
    let mut out = CupyConfig::default();
    for line in super::content_lines(text) {
        let Some((label, value)) = record(line) else {
            continue;
        };
        if ERROR_REPR.is_match(value) {
            if out.errors.len() < super::MAX_ITEMS {
                out.errors
                    .push((label.to_string(), super::clip(value, super::MAX_TEXT)));
            }
            continue;
        }
        match label {
            "CuPy Version" => out.cupy_version = Some(super::clip(value, 64)),
            "CuPy Platform" => out.platform = Some(super::clip(value, 64)),
            "CUDA Build Version" => out.cuda_build = version_number(value),
            "CUDA Driver Version" => out.cuda_driver = version_number(value),
            "CUDA Runtime Version" => {
                out.cuda_runtime = version_number(value);
                if let Some((_, local)) = value.split_once(" / ")
                    && local.contains("(locally installed)")
                {
                    out.cuda_runtime_local = version_number(local);
                }
            }
            "NVRTC Version" => out.nvrtc = Some(super::clip(value, 32)),
            _ => {
                // `Device N Name`, `Device N Compute Capability`
                let Some(rest) = label.strip_prefix("Device ") else {
                    continue;
                };
                let Some((n, what)) = rest.split_once(' ') else {
                    continue;
                };
                let Ok(index) = n.parse::<u32>() else {
                    continue;
                };
                let at = match out.devices.iter().position(|d| d.index == index) {
                    Some(i) => i,
                    None if out.devices.len() < super::MAX_ITEMS => {
                        out.devices.push(Device {
                            index,
                            ..Default::default()
                        });
                        out.devices.len() - 1
                    }
                    None => continue,
                };
                match what {
                    "Name" => out.devices[at].name = Some(super::clip(value, 200)),
                    "Compute Capability" => {
                        out.devices[at].compute_capability = Some(super::clip(value, 16))
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct CupyConfigKind;

impl super::EvidenceKind for CupyConfigKind {
    fn name(&self) -> &'static str {
        "cupy-show-config"
    }
    fn doc(&self) -> &'static str {
        "CuPy's show_config(): the CUDA CuPy was built with, the driver's and the runtime's CUDA, the libraries it found, each GPU's name and compute capability"
    }
    fn example(&self) -> &'static str {
        "python -c 'import cupy; cupy.show_config()'"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("cupy_version", "`CuPy Version`"),
            ("platform", "`CuPy Platform` (NVIDIA CUDA, AMD ROCm)"),
            (
                "cuda_build",
                "`CUDA Build Version`: the CUDA CuPy was built with (12020)",
            ),
            (
                "cuda_driver",
                "`CUDA Driver Version`: the newest CUDA the driver runs",
            ),
            (
                "cuda_runtime",
                "`CUDA Runtime Version`: the runtime CuPy uses",
            ),
            (
                "cuda_runtime_local",
                "the runtime installed on the system (CuPy 13+)",
            ),
            ("nvrtc", "`NVRTC Version` as printed"),
            ("devices", "per GPU: index, name, compute_capability"),
            (
                "errors",
                "records whose call failed: label and the exception's repr",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cuda.compat"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_cupy_config(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_cupy_config(text);
        if v.cupy_version.is_none() {
            return Err(super::ParseError::NotThisKind(
                "no `CuPy Version` record of cupy.show_config() in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// github.com/cupy/cupy/issues/7967 (a comment's show_config, up to the line the stored
    /// copy cuts): CuPy 13.0.0b1 built for CUDA 12.2 on driver 12.3, an RTX 4090.
    const RTX4090: &str = include_str!(
        "../../tests/fixtures/corpus/h158_cupyenv_cupy7967_rtx4090_cupy13b1_cuda123.txt"
    );

    #[test]
    fn a_healthy_config_every_field() {
        assert!(looks_like_cupy_config(RTX4090));
        let c = parse_cupy_config(RTX4090);
        assert_eq!(c.cupy_version.as_deref(), Some("13.0.0b1"));
        assert_eq!(c.platform.as_deref(), Some("NVIDIA CUDA"));
        assert_eq!(c.cuda_build, Some(12020));
        assert_eq!(c.cuda_driver, Some(12030));
        assert_eq!(c.cuda_runtime, Some(12030));
        assert_eq!(c.cuda_runtime_local, None);
        assert_eq!(c.nvrtc.as_deref(), Some("(12, 3)"));
        assert_eq!(
            c.devices,
            [Device {
                index: 0,
                name: Some("NVIDIA GeForce RTX 4090".into()),
                compute_capability: Some("89".into()),
            }]
        );
        assert!(c.errors.is_empty());
    }

    #[test]
    fn a_library_that_failed_is_kept_as_its_error_not_a_version() {
        // github.com/cupy/cupy/issues/9719 (CuPy 14 in a CUDA 12.0 devcontainer): its records
        // up to the cuBLAS line, whose repr (the error's directory listing after the first
        // `No such file`) is shortened here and closed
        let t = "CuPy Version                 : 14.0.0\n\
                 CuPy Platform                : NVIDIA CUDA\n\
                 CUDA Root                    : /usr/local/cuda\n\
                 CUDA Build Version           : 12090\n\
                 CUDA Driver Version          : 13000\n\
                 CUDA Runtime Version         : 12090 (linked to CuPy) / 12000 (locally installed)\n\
                 cuBLAS Version               : ImportError('Failure finding \"libcublasLt.so\": No such file: libcublasLt.so*')\n";
        assert!(looks_like_cupy_config(t));
        let c = parse_cupy_config(t);
        assert_eq!((c.cuda_build, c.cuda_driver), (Some(12090), Some(13000)));
        assert_eq!(
            (c.cuda_runtime, c.cuda_runtime_local),
            (Some(12090), Some(12000))
        );
        assert_eq!(c.errors.len(), 1);
        assert_eq!(c.errors[0].0, "cuBLAS Version");
        assert!(c.errors[0].1.starts_with("ImportError('Failure finding"));
    }

    #[test]
    fn a_driver_call_that_failed_gives_no_driver_version() {
        // `_eval_or_error` prints the CUDARuntimeError's repr where the version would be
        // (cupyx/_runtime.py); the error's text as cupy_backends' runtime formats it
        let t = "CuPy Version          : 7.0.0\n\
                 CUDA Root             : /usr/local/cuda\n\
                 CUDA Build Version    : 10010\n\
                 CUDA Driver Version   : CUDARuntimeError('cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version')\n";
        let c = parse_cupy_config(t);
        assert_eq!(c.cuda_build, Some(10010));
        assert_eq!(c.cuda_driver, None);
        assert_eq!(c.errors[0].0, "CUDA Driver Version");
    }

    #[test]
    fn prose_and_other_reports_are_not_claimed() {
        assert!(!looks_like_cupy_config(
            "I installed CuPy Version 13 and the CUDA Driver Version is 12.2\n"
        ));
        // collect_env's `CUDA used to build PyTorch: 12.1` has no CuPy record
        assert!(!looks_like_cupy_config(
            "PyTorch version: 2.1.0\nCUDA used to build PyTorch: 12.1\nCUDA runtime version: 12.1.105\n"
        ));
        // a `CuPy Version` record alone (pip's table, a sentence) is not show_config
        assert!(!looks_like_cupy_config(
            "CuPy Version                 : 13.6.0\n"
        ));
    }
}
