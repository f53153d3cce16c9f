//! The CUDA toolkit version from what a host says about it: `nvcc --version`
//! (`release 13.0, V13.0.88`), `/usr/local/cuda/version.json` (`{"cuda": {"version":
//! "12.4.1"}}`) or the older `/usr/local/cuda/version.txt` (`CUDA Version 11.8.0`).
//! `nvidia-smi`'s `CUDA Version` is the driver's maximum, not the toolkit: it is not read here.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CudaVersion {
    /// `major.minor`
    pub version: String,
    pub major: u32,
    pub minor: u32,
    /// The full version where the text gives one (`13.0.88`, `12.4.1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full: Option<String>,
    /// `nvcc`, `version.json`, `version.txt` or `cuda.h`.
    pub source: &'static str,
}

static NVCC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"release (\d{1,4})\.(\d{1,4})(?:, V(\d{1,4}(?:\.\d{1,6}){1,3}))?")
        .expect("static regex")
});
static JSON_LOOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""cuda"\s*:\s*\{[^{}]*?"version"\s*:\s*"(\d{1,4})\.(\d{1,4})((?:\.\d{1,6})*)""#)
        .expect("static regex")
});
static TXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"CUDA Version (\d{1,4})\.(\d{1,4})((?:\.\d{1,6})*)").expect("static regex")
});

fn build(
    major: &str,
    minor: &str,
    full: Option<String>,
    source: &'static str,
) -> Option<CudaVersion> {
    let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
    Some(CudaVersion {
        version: format!("{major}.{minor}"),
        major,
        minor,
        full,
        source,
    })
}

/// Reads whichever of the three forms `text` is; `None` if it holds no toolkit version.
pub fn parse_cuda_version(text: &str) -> Option<CudaVersion> {
    if text.contains("Cuda compilation tools") || text.contains("nvcc:") {
        if let Some(c) = NVCC.captures(text) {
            return build(
                &c[1],
                &c[2],
                c.get(3).map(|m| m.as_str().to_string()),
                "nvcc",
            );
        }
    }
    if text.trim_start().starts_with('{') {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            let full = v.pointer("/cuda/version").and_then(|x| x.as_str())?;
            let mut parts = full.split('.');
            let (major, minor) = (parts.next()?, parts.next().unwrap_or("0"));
            return build(major, minor, Some(super::clip(full, 32)), "version.json");
        }
        // A truncated version.json may still name the version.
        if let Some(c) = JSON_LOOSE.captures(text) {
            let full = format!("{}.{}{}", &c[1], &c[2], &c[3]);
            return build(&c[1], &c[2], Some(full), "version.json");
        }
        return None;
    }
    if let Some(c) = TXT.captures(text) {
        let full = (!c[3].is_empty()).then(|| format!("{}.{}{}", &c[1], &c[2], &c[3]));
        return build(&c[1], &c[2], full, "version.txt");
    }
    None
}

static CUDA_H: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*#\s*define\s+CUDA_VERSION\s+(\d{4,6})\b").expect("static regex")
});

/// The toolkit version from its `include/cuda.h` (`#define CUDA_VERSION 13000`): reading a
/// header costs far less than starting `nvcc`.
pub fn parse_cuda_h(text: &str) -> Option<CudaVersion> {
    let code: u32 = CUDA_H.captures(text)?[1].parse().ok()?;
    let (major, minor) = (code / 1000, (code % 1000) / 10);
    build(&major.to_string(), &minor.to_string(), None, "cuda.h")
}

/// `Name` and `Version` from the header of a `*.dist-info/METADATA` (or `PKG-INFO`) file: the
/// RFC 822 style fields before the first blank line. Only the header is read.
pub fn parse_metadata(text: &str) -> Option<(String, String)> {
    let (mut name, mut version) = (None, None);
    for line in text.lines().take(400) {
        if line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Name:") {
            name.get_or_insert_with(|| super::clip(v.trim(), 128));
        } else if let Some(v) = line.strip_prefix("Version:") {
            version.get_or_insert_with(|| super::clip(v.trim(), 64));
        }
    }
    Some((name?, version.filter(|v| !v.is_empty())?))
}

/// What `torch/version.py` (written by PyTorch's build) says: `__version__`, and `cuda` (None
/// on CPU and ROCm builds).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TorchVersionPy {
    pub version: Option<String>,
    pub cuda: Option<String>,
}

static PY_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^__version__\s*(?::\s*[A-Za-z_\[\]. ]{1,40})?=\s*['"]([^'"\n]{1,64})['"]"#)
        .expect("static regex")
});
static PY_CUDA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^cuda\s*(?::\s*[A-Za-z_\[\]. ]{1,40})?=\s*['"]([0-9][0-9.]{0,15})['"]"#)
        .expect("static regex")
});

pub fn parse_torch_version_py(text: &str) -> TorchVersionPy {
    TorchVersionPy {
        version: PY_VERSION.captures(text).map(|c| c[1].to_string()),
        cuda: PY_CUDA.captures(text).map(|c| c[1].to_string()),
    }
}

/// A dist-info directory name, `nvidia_nccl_cu13-2.28.9.dist-info`, as (name, version).
pub fn parse_dist_info_name(dir: &str) -> Option<(&str, &str)> {
    let stem = dir.strip_suffix(".dist-info")?;
    let (name, version) = stem.split_once('-')?;
    (!name.is_empty() && !version.is_empty()).then_some((name, version))
}

/// `home` and `include-system-site-packages` from a virtual environment's `pyvenv.cfg`.
pub fn parse_pyvenv_cfg(text: &str) -> (Option<String>, bool) {
    let (mut home, mut system) = (None, false);
    for line in text.lines().take(100) {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        match k.trim() {
            "home" => home = Some(v.trim().to_string()),
            "include-system-site-packages" => system = v.trim().eq_ignore_ascii_case("true"),
            _ => {}
        }
    }
    (home, system)
}

/// The registry entry.
pub struct CudaVersionKind;

impl super::EvidenceKind for CudaVersionKind {
    fn name(&self) -> &'static str {
        "cuda-version"
    }
    fn doc(&self) -> &'static str {
        "the CUDA toolkit's version: nvcc --version, /usr/local/cuda/version.json or version.txt"
    }
    fn example(&self) -> &'static str {
        "nvcc --version"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("version", "major.minor"),
            ("major", "major version"),
            ("minor", "minor version"),
            ("full", "the full version where the text gives one"),
            ("source", "nvcc, version.json, version.txt or cuda.h"),
        ]
    }
    // recognised, but no rule reads a pasted toolkit version yet (cuda.stack reads the host's)
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let (h, t) = (s.head, s.trimmed());
        (t.starts_with('{') && h.contains("\"cuda\"") && h.contains("\"version\""))
            || h.contains("Cuda compilation tools")
            || t.starts_with("CUDA Version ")
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        match parse_cuda_version(text) {
            Some(v) => super::to_value(&v),
            None => Err(super::ParseError::NotThisKind(
                "no CUDA toolkit version in the text (expected `nvcc --version`, version.json or version.txt)",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn nvcc_on_the_h200() {
        let v = parse_cuda_version(&fixture("cuda/nvcc_version_h200.txt")).unwrap();
        assert_eq!((v.version.as_str(), v.major, v.minor), ("13.0", 13, 0));
        assert_eq!(v.full.as_deref(), Some("13.0.88"));
        assert_eq!(v.source, "nvcc");
    }

    #[test]
    fn version_json_and_txt() {
        let j = parse_cuda_version(r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"version": "12.4.127"}}"#).unwrap();
        assert_eq!(
            (j.version.as_str(), j.full.as_deref(), j.source),
            ("12.4", Some("12.4.1"), "version.json")
        );
        let cut =
            parse_cuda_version(r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cud"#)
                .unwrap();
        assert_eq!(cut.version, "12.4");
        let t = parse_cuda_version("CUDA Version 11.8.0\n").unwrap();
        assert_eq!(
            (t.version.as_str(), t.minor, t.source),
            ("11.8", 8, "version.txt")
        );
    }

    #[test]
    fn driver_cuda_version_lines_are_not_toolkit_versions() {
        assert_eq!(
            parse_cuda_version("CUDA Version                  : 13.0"),
            None
        );
        assert_eq!(
            parse_cuda_version(
                "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |"
            ),
            None
        );
        assert_eq!(parse_cuda_version(r#"{"cuda": {"name": "x"}}"#), None);
        assert_eq!(parse_cuda_version(""), None);
    }

    #[test]
    fn cuda_h_define() {
        let v =
            parse_cuda_h("/* CUDA API version number */\n#define CUDA_VERSION 13000\n").unwrap();
        assert_eq!((v.version.as_str(), v.source), ("13.0", "cuda.h"));
        assert_eq!(
            parse_cuda_h("#define CUDA_VERSION 12040").unwrap().version,
            "12.4"
        );
        assert_eq!(parse_cuda_h("#define CUDA_VERSION_MAJOR 13"), None);
        assert_eq!(parse_cuda_h(""), None);
    }

    #[test]
    fn package_metadata_header() {
        let m = "Metadata-Version: 2.4\nName: torch\nVersion: 2.11.0+cu130\nSummary: Tensors\n\nName: not-this\nVersion: 9\n";
        assert_eq!(
            parse_metadata(m),
            Some(("torch".to_string(), "2.11.0+cu130".to_string()))
        );
        assert_eq!(parse_metadata("Name: x\n\nVersion: 1\n"), None);
        assert_eq!(parse_metadata(""), None);
    }

    #[test]
    fn torch_version_py_as_the_build_writes_it() {
        // the shape PyTorch 2.x's setup writes (tools/generate_torch_version.py)
        let t = "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = '70d99e998b8955ec7f5e8a9a0c5ff1a2a2cbcb11'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n";
        let v = parse_torch_version_py(t);
        assert_eq!(v.version.as_deref(), Some("2.11.0+cu130"));
        assert_eq!(v.cuda.as_deref(), Some("13.0"));
        let cpu = parse_torch_version_py("__version__ = '2.4.0+cpu'\ncuda: Optional[str] = None\n");
        assert_eq!(cpu.cuda, None);
        assert_eq!(cpu.version.as_deref(), Some("2.4.0+cpu"));
        let old = parse_torch_version_py("__version__ = \"1.13.1\"\ncuda = '11.7'\n");
        assert_eq!(old.cuda.as_deref(), Some("11.7"));
    }

    #[test]
    fn dist_info_names_and_venv_config() {
        assert_eq!(
            parse_dist_info_name("nvidia_nccl_cu13-2.28.9.dist-info"),
            Some(("nvidia_nccl_cu13", "2.28.9"))
        );
        assert_eq!(parse_dist_info_name("torch-2.11.0+cu130.egg-info"), None);
        assert_eq!(parse_dist_info_name("-1.dist-info"), None);
        let (home, sys) = parse_pyvenv_cfg(
            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
        );
        assert_eq!((home.as_deref(), sys), (Some("/usr/bin"), false));
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("cuda/nvcc_version_h200.txt");
        for p in prefixes(&text, 3) {
            let _ = parse_cuda_version(p);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,300}") {
            let _ = parse_cuda_version(&s);
        }

        #[test]
        fn huge_numbers_do_not_panic(n in "[0-9]{1,40}") {
            let _ = parse_cuda_version(&format!("Cuda compilation tools, release {n}.{n}, V{n}.{n}.{n}"));
            let _ = parse_cuda_version(&format!("CUDA Version {n}.{n}.{n}"));
            let _ = parse_cuda_version(&format!(r#"{{"cuda": {{"version": "{n}.{n}"}}}}"#));
        }
    }
}
