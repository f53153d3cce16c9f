//! The CUDA samples' `deviceQuery` output, read from its producer: NVIDIA/cuda-samples
//! `Samples/1_Utilities/deviceQuery/deviceQuery.cpp` (read at 2e41896e, CUDA 12.x samples; the
//! lines it prints have kept their labels since the CUDA 5 samples, which named a few
//! differently: `GPU Clock rate` for `GPU Max Clock rate`, `Max Texture Dimension Size`). It
//! prints:
//!
//! ```text
//! ./deviceQuery Starting...
//!
//!  CUDA Device Query (Runtime API) version (CUDART static linking)
//!
//! cudaGetDeviceCount returned 35                      on failure, then `Result = FAIL`
//! -> CUDA driver version is insufficient for CUDA runtime version
//! Detected 1 CUDA Capable device(s)                   or "There are no available device(s) that support CUDA"
//!
//! Device 0: "NVIDIA A100-SXM4-80GB"                   per device:
//!   CUDA Driver Version / Runtime Version          12.2 / 12.1
//!   CUDA Capability Major/Minor version number:    8.0
//!   Total amount of global memory:                 81038 MBytes (84974239744 bytes)
//!   (108) Multiprocessors, (064) CUDA Cores/MP:    6912 CUDA Cores
//!   …  `Label:  value` lines (clocks, caches, limits, ECC, UVA, compute mode)
//! > Peer access from A (GPU0) -> B (GPU1) : Yes        with two or more GPUs
//! deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.1, NumDevs = 1
//! Result = PASS
//! ```
//!
//! The driver and runtime versions are what `cuda.compat` judges (a driver older than the
//! runtime the samples were built with fails with error 35, which the CUDA-runtime reader
//! names); every other `Label: value` line of a device is kept by its label.

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DeviceQuery {
    /// `Detected N CUDA Capable device(s)` (0 for "There are no available device(s)").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detected: Option<u32>,
    pub devices: Vec<Device>,
    /// `cudaGetDeviceCount returned N` on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<u32>,
    /// The `-> message` line after it (`cudaGetErrorString`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `PASS` or `FAIL`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The driver's CUDA version (`12.2`), from a device block or the summary line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_cuda: Option<String>,
    /// The runtime the samples were built with (`12.1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_cuda: Option<String>,
    /// `> Peer access from A (GPU0) -> B (GPU1) : Yes|No` lines: (from, to, yes).
    pub peer_access: Vec<(u32, u32, bool)>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Device {
    pub index: u32,
    pub name: String,
    /// `8.0`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_memory_mib: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiprocessors: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_cores: Option<u32>,
    /// The compute mode line under `Compute Mode:` (`Default (multiple host threads …)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_mode: Option<String>,
    /// Every other `Label: value` line of the device, by its label.
    pub properties: BTreeMap<String, String>,
}

const BANNER: &str = "CUDA Device Query (Runtime API) version";

/// True when the text holds deviceQuery's banner, or a device block's version line.
pub fn looks_like_device_query(text: &str) -> bool {
    super::content_lines(text).take(4000).any(|l| {
        l.contains(BANNER)
            || l.trim_start()
                .starts_with("CUDA Driver Version / Runtime Version")
    })
}

/// `12.2 / 12.1` into its two versions.
fn versions(v: &str) -> Option<(String, String)> {
    let (a, b) = v.split_once('/')?;
    let ok = |s: &str| {
        let s = s.trim();
        (s.split('.').count() == 2 && s.split('.').all(|p| p.parse::<u32>().is_ok()))
            .then(|| s.to_string())
    };
    Some((ok(a)?, ok(b)?))
}

pub fn parse_device_query(text: &str) -> DeviceQuery {
    let mut out = DeviceQuery::default();
    let mut in_compute_mode = false;
    for raw in super::content_lines(text) {
        let line = raw.trim_end();
        let t = line.trim();
        if let Some(n) = t
            .strip_prefix("cudaGetDeviceCount returned ")
            .and_then(|n| n.trim().parse().ok())
        {
            out.error_code = Some(n);
            continue;
        }
        if let Some(m) = t.strip_prefix("-> ")
            && out.error_code.is_some()
            && out.error.is_none()
        {
            out.error = Some(super::clip(m.trim(), 200));
            continue;
        }
        if let Some(r) = t.strip_prefix("Result = ") {
            out.result = Some(super::clip(r.trim(), 16));
            continue;
        }
        if let Some(n) = t
            .strip_prefix("Detected ")
            .and_then(|r| r.split_whitespace().next()?.parse().ok())
            && t.contains("CUDA Capable device")
        {
            out.detected = Some(n);
            continue;
        }
        if t.starts_with("There are no available device(s) that support CUDA") {
            out.detected = Some(0);
            continue;
        }
        if let Some(rest) = t.strip_prefix("deviceQuery, CUDA Driver = ") {
            for part in rest.split(", ") {
                if let Some(v) = part.strip_prefix("CUDA Driver Version = ") {
                    out.driver_cuda.get_or_insert_with(|| v.trim().to_string());
                } else if let Some(v) = part.strip_prefix("CUDA Runtime Version = ") {
                    out.runtime_cuda.get_or_insert_with(|| v.trim().to_string());
                }
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("> Peer access from ") {
            // `A (GPU0) -> B (GPU1) : Yes`
            let gpu = |s: &str| -> Option<u32> {
                s.rsplit_once("(GPU")?.1.split(')').next()?.parse().ok()
            };
            if let Some((pair, yes)) = rest.rsplit_once(" : ")
                && let Some((a, b)) = pair.split_once(" -> ")
                && let (Some(a), Some(b)) = (gpu(a), gpu(b))
                && out.peer_access.len() < super::MAX_ITEMS
            {
                out.peer_access.push((a, b, yes.trim() == "Yes"));
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("Device ")
            && let Some((n, name)) = rest.split_once(": \"")
            && let Ok(index) = n.trim().parse::<u32>()
        {
            if out.devices.len() >= super::MAX_ITEMS {
                break;
            }
            out.devices.push(Device {
                index,
                name: super::clip(name.trim_end_matches('"'), 200),
                ..Default::default()
            });
            in_compute_mode = false;
            continue;
        }
        // `CUDA Driver Version / Runtime Version          12.2 / 12.1` (no colon), also in a
        // paste that starts at it without the device header
        if let Some(v) = t.strip_prefix("CUDA Driver Version / Runtime Version") {
            if let Some((a, b)) = versions(v) {
                out.driver_cuda.get_or_insert(a);
                out.runtime_cuda.get_or_insert(b);
            }
            continue;
        }
        let Some(d) = out.devices.last_mut() else {
            continue;
        };
        if in_compute_mode {
            if let Some(m) = t.strip_prefix('<') {
                d.compute_mode = Some(super::clip(m.trim_end_matches('>').trim(), 200));
            }
            in_compute_mode = false;
            continue;
        }
        if t == "Compute Mode:" {
            in_compute_mode = true;
            continue;
        }
        // `(108) Multiprocessors, (064) CUDA Cores/MP:    6912 CUDA Cores` (CUDA 5: `x` for `,`)
        if t.contains("Multiprocessors") && t.contains("CUDA Cores/MP:") {
            let num = |s: &str| {
                s.trim()
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .trim()
                    .parse()
                    .ok()
            };
            d.multiprocessors = t.split(')').next().and_then(num);
            d.cuda_cores = t
                .rsplit_once("CUDA Cores/MP:")
                .and_then(|(_, r)| r.split_whitespace().next()?.parse().ok());
            continue;
        }
        // the labels end at the first `:` followed by spaces (`(x,y,z)` labels hold no colon)
        let Some((label, value)) = t.split_once(':') else {
            continue;
        };
        let (label, value) = (label.trim(), value.trim());
        match label {
            "CUDA Capability Major/Minor version number" => {
                d.capability = Some(super::clip(value, 16))
            }
            "Total amount of global memory" => {
                d.total_memory_mib = value.split_whitespace().next().and_then(|n| n.parse().ok())
            }
            _ if !label.is_empty() && d.properties.len() < 64 => {
                d.properties
                    .insert(super::clip(label, 80), super::clip(value, 200));
            }
            _ => {}
        }
    }
    out
}

/// The CUDA version code (`12.2` -> 12020), as `cudaDriverGetVersion` codes it.
pub fn version_code(v: &str) -> Option<u32> {
    let (a, b) = v.split_once('.')?;
    Some(a.parse::<u32>().ok()? * 1000 + b.parse::<u32>().ok()? * 10)
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct DeviceQueryKind;

impl super::EvidenceKind for DeviceQueryKind {
    fn name(&self) -> &'static str {
        "cuda-device-query"
    }
    fn doc(&self) -> &'static str {
        "the CUDA samples' deviceQuery: the driver's and the runtime's CUDA versions, each GPU's capability, memory and properties, PASS or FAIL"
    }
    fn example(&self) -> &'static str {
        "./deviceQuery"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("detected", "the CUDA-capable devices it counted"),
            (
                "devices",
                "per GPU: index, name, capability, total_memory_mib, multiprocessors, cuda_cores, compute_mode, properties (every other labelled line)",
            ),
            ("error_code", "`cudaGetDeviceCount returned N` on failure"),
            ("error", "the error's text (`-> …`)"),
            ("result", "PASS or FAIL"),
            ("driver_cuda", "the CUDA version the driver runs (12.2)"),
            (
                "runtime_cuda",
                "the CUDA runtime the samples were built with",
            ),
            (
                "peer_access",
                "(from GPU, to GPU, yes) for each pair it tried",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["cuda.compat"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_device_query(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_device_query(text);
        if v.devices.is_empty() && v.result.is_none() && v.driver_cuda.is_none() {
            return Err(super::ParseError::NotThisKind(
                "no deviceQuery device block or result in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};

    #[test]
    fn a_passing_run_every_field() {
        // github.com/uzh-rpg/rpg_open_remode/issues/9: GTX 770 after the driver update
        let t = fixture("cuda/devicequery_gtx770_remode9.txt");
        assert!(looks_like_device_query(&t));
        let q = parse_device_query(&t);
        assert_eq!(q.detected, Some(1));
        assert_eq!(q.driver_cuda.as_deref(), Some("7.0"));
        assert_eq!(q.runtime_cuda.as_deref(), Some("6.5"));
        let d = &q.devices[0];
        assert_eq!((d.index, d.name.as_str()), (0, "GeForce GTX 770"));
        assert_eq!(d.capability.as_deref(), Some("3.0"));
        assert_eq!(d.total_memory_mib, Some(2047));
        assert_eq!(d.multiprocessors, Some(8));
        assert_eq!(d.cuda_cores, Some(1536));
        assert_eq!(
            d.properties.get("Memory Bus Width").map(String::as_str),
            Some("256-bit")
        );
        assert_eq!(q.error_code, None);
        assert_eq!(version_code("7.0"), Some(7000));
    }

    #[test]
    fn a_failing_run_names_the_error() {
        // github.com/anduril/jetpack-nixos/issues/328: error 35 on a JetPack 6 Orin Nano
        let t = fixture("cuda/devicequery_returned35_jetpack328.txt");
        assert!(looks_like_device_query(&t));
        let q = parse_device_query(&t);
        assert_eq!(q.error_code, Some(35));
        assert_eq!(
            q.error.as_deref(),
            Some("CUDA driver version is insufficient for CUDA runtime version")
        );
        assert_eq!(q.result.as_deref(), Some("FAIL"));
        assert!(q.devices.is_empty());
        // the CUDA-runtime reader names the same error, for `cuda.driver-too-old`
        assert!(crate::evidence::cuda_errors::parse_cuda_runtime_log(&t).insufficient_driver);
    }

    #[test]
    fn summary_and_peer_lines_from_the_source() {
        let q = parse_device_query(
            "> Peer access from Tesla V100 (GPU0) -> Tesla V100 (GPU1) : Yes\n\ndeviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.1, NumDevs = 2\nResult = PASS\n",
        );
        assert_eq!(q.peer_access, [(0, 1, true)]);
        assert_eq!(q.driver_cuda.as_deref(), Some("12.2"));
        assert_eq!(q.runtime_cuda.as_deref(), Some("12.1"));
        assert_eq!(q.result.as_deref(), Some("PASS"));
        assert!(!looks_like_device_query("run deviceQuery and paste it\n"));
    }

    #[test]
    fn truncated_pastes_never_panic() {
        let t = fixture("cuda/devicequery_gtx770_remode9.txt");
        for p in prefixes(&t, 3) {
            let _ = parse_device_query(p);
        }
    }
}
