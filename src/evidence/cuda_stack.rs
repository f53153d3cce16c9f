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
    /// `nvcc`, `version.json` or `version.txt`.
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
