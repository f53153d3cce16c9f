//! The CUDA samples' `bandwidthTest` output, read from its producer: NVIDIA/cuda-samples
//! `Samples/1_Utilities/bandwidthTest/bandwidthTest.cu` (read at ceab6e8b, the CUDA 12.x samples;
//! removed from the repository by 7d1730f3 in favour of nvbandwidth, the same lines since the
//! CUDA 5 samples, which printed MB/s where 11.x and later print GB/s). It prints:
//!
//! ```text
//! [CUDA Bandwidth Test] - Starting...                    printf("[%s] - Starting...\n", sSDKsample)
//! Running on...
//!
//!  Device 0: NVIDIA A100-SXM4-80GB                       " Device %d: %s"
//!  Quick Mode                                            or Shmoo Mode / Range Mode
//!
//!  Host to Device Bandwidth, 1 Device(s)                 " %s Bandwidth, %i Device(s)", the kind
//!  PINNED Memory Transfers                               being Device to Host, Host to Device or
//!    Transfer Size (Bytes)\tBandwidth(GB/s)              Device to Device; PINNED or PAGEABLE
//!    32000000\t\t\t24.6                                  "   %u\t\t\t%s%.1f"
//! Result = PASS
//! ```
//!
//! With `--csv` each figure is one line, `bandwidthTest-<H2D|D2H|D2D>-<Pinned|Paged>, Bandwidth =
//! %.1f GB/s, Time = %.5f s, Size = %u bytes, NumDevsUsed = %d`. A failing start prints
//! `cudaGetDeviceCount returned N` and `-> <cudaGetErrorString>`, which the CUDA-runtime reader
//! names ([`super::cuda_errors`]). The figures depend on the slot, the NUMA node the copy runs
//! from and the GPU, and a single run has no reference to judge them against, so no rule reads
//! them; the kind is read so that such a paste is known.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct BandwidthTest {
    /// ` Device N: <name>` lines, in order (a paste may hold several runs).
    pub devices: Vec<String>,
    pub measurements: Vec<Measurement>,
    /// `PASS` or `FAIL` of each `Result = …` line.
    pub results: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Measurement {
    /// `Host to Device`, `Device to Host` or `Device to Device`.
    pub direction: String,
    /// `PINNED` or `PAGEABLE`, where the paste kept the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Transfer size in bytes.
    pub bytes: u64,
    /// The figure as printed, in `unit`.
    pub bandwidth: f64,
    /// `GB/s` (CUDA 11.x and later) or `MB/s` (older samples).
    pub unit: String,
}

const DIRECTIONS: &[&str] = &["Host to Device", "Device to Host", "Device to Device"];

/// ` Host to Device Bandwidth, 1 Device(s)`: the direction.
fn section(line: &str) -> Option<&'static str> {
    let l = line.trim();
    let (kind, rest) = l.split_once(" Bandwidth, ")?;
    let n = rest.strip_suffix(" Device(s)")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    DIRECTIONS.iter().copied().find(|d| *d == kind)
}

/// `bandwidthTest-H2D-Pinned, Bandwidth = 24.6 GB/s, Time = 0.00130 s, Size = 32000000 bytes, …`.
fn csv(line: &str) -> Option<Measurement> {
    let rest = line.trim().strip_prefix("bandwidthTest-")?;
    let (tag, rest) = rest.split_once(", Bandwidth = ")?;
    let (dir, mem) = tag.split_once('-')?;
    let direction = match dir {
        "H2D" => "Host to Device",
        "D2H" => "Device to Host",
        "D2D" => "Device to Device",
        _ => return None,
    };
    let (bw, rest) = rest.split_once(' ')?;
    let (unit, rest) = rest.split_once(", ")?;
    let size = rest.split(", ").find_map(|p| p.strip_prefix("Size = "))?;
    Some(Measurement {
        direction: direction.to_string(),
        memory: Some(mem.to_ascii_uppercase()).map(|m| {
            if m == "PAGED" {
                "PAGEABLE".to_string()
            } else {
                m
            }
        }),
        bytes: size.strip_suffix(" bytes")?.parse().ok()?,
        bandwidth: bw.parse().ok()?,
        unit: unit.to_string(),
    })
}

/// The sample's section line or a `--csv` line.
pub fn looks_like_bandwidth_test(text: &str) -> bool {
    super::content_lines(text)
        .take(4000)
        .any(|l| section(l).is_some() || csv(l).is_some())
}

pub fn parse_bandwidth_test(text: &str) -> BandwidthTest {
    let mut out = BandwidthTest::default();
    let mut direction: Option<&'static str> = None;
    let mut memory: Option<String> = None;
    let mut unit: Option<String> = None;
    for line in super::content_lines(text) {
        let l = line.trim();
        if let Some(m) = csv(l) {
            if out.measurements.len() < super::MAX_ITEMS {
                out.measurements.push(m);
            }
        } else if let Some(d) = section(l) {
            direction = Some(d);
            memory = None;
            unit = None;
        } else if let Some(m) = l.strip_suffix(" Memory Transfers") {
            if matches!(m, "PINNED" | "PAGEABLE") {
                memory = Some(m.to_string());
            }
        } else if let Some(u) = l
            .strip_prefix("Transfer Size (Bytes)")
            .and_then(|r| r.trim().strip_prefix("Bandwidth("))
            .and_then(|r| r.strip_suffix(')'))
        {
            unit = Some(u.to_string());
        } else if let Some(name) = l
            .strip_prefix("Device ")
            .and_then(|r| r.split_once(": "))
            .filter(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()))
            .map(|(_, name)| name)
        {
            if out.devices.len() < super::MAX_ITEMS {
                out.devices.push(super::clip(name, 80));
            }
        } else if let Some(r) = l.strip_prefix("Result = ") {
            if matches!(r, "PASS" | "FAIL") {
                out.results.push(r.to_string());
            }
        } else if let (Some(d), Some(u)) = (direction, unit.as_ref()) {
            let w: Vec<&str> = l.split_whitespace().collect();
            if let [size, bw] = w.as_slice()
                && let (Ok(bytes), Ok(bandwidth)) = (size.parse::<u64>(), bw.parse::<f64>())
            {
                if out.measurements.len() < super::MAX_ITEMS {
                    out.measurements.push(Measurement {
                        direction: d.to_string(),
                        memory: memory.clone(),
                        bytes,
                        bandwidth,
                        unit: u.clone(),
                    });
                }
            } else if !l.is_empty() {
                direction = None;
                unit = None;
            }
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct BandwidthTestKind;

impl super::EvidenceKind for BandwidthTestKind {
    fn name(&self) -> &'static str {
        "cuda-bandwidth-test"
    }
    fn doc(&self) -> &'static str {
        "the CUDA samples' `bandwidthTest` output: host-to-device, device-to-host and device-to-device copy bandwidth by transfer size, pinned or pageable"
    }
    fn example(&self) -> &'static str {
        "./bandwidthTest"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("devices", "the ` Device N: <name>` lines"),
            (
                "measurements",
                "direction, memory (PINNED/PAGEABLE), bytes, bandwidth, unit (GB/s or MB/s)",
            ),
            ("results", "PASS or FAIL of each `Result = …` line"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_bandwidth_test(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_bandwidth_test(text);
        if v.measurements.is_empty() && v.devices.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no bandwidthTest section (` Host to Device Bandwidth, 1 Device(s)`) or `bandwidthTest-…` CSV line in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_under_numactl_in_mb_per_s() {
        // h114: mpicbg-scicomp/gearshifft#82, a P100 from its own NUMA node and from the other
        let t = "$ numactl -m0 -N0 bandwidthTest\n[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: Tesla P100-PCIE-16GB\n Quick Mode\n\n Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     12150.7\n\n Device to Host Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     12890.6\n\n$ numactl -m1 -N1 bandwidthTest\nCUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: Tesla P100-PCIE-16GB\n Quick Mode\n\n Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     3783.4\n";
        assert!(looks_like_bandwidth_test(t));
        let b = parse_bandwidth_test(t);
        assert_eq!(b.devices, vec!["Tesla P100-PCIE-16GB"; 2]);
        assert_eq!(b.measurements.len(), 3);
        assert_eq!(b.measurements[1].direction, "Device to Host");
        assert_eq!(b.measurements[2].bandwidth, 3783.4);
        assert_eq!(b.measurements[2].unit, "MB/s");
        assert_eq!(b.measurements[2].memory.as_deref(), Some("PINNED"));
        assert_eq!(b.measurements[2].bytes, 33_554_432);
    }

    #[test]
    fn the_samples_own_tabs_result_and_csv() {
        // bandwidthTest.cu at ceab6e8b: "   %u\t\t\t%s%.1f", and the --csv line
        let t = "[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: NVIDIA A100-SXM4-80GB\n Quick Mode\n\n Device to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n   32000000\t\t\t1288.5\n\nResult = PASS\n";
        let b = parse_bandwidth_test(t);
        assert_eq!(b.measurements[0].bandwidth, 1288.5);
        assert_eq!(b.measurements[0].unit, "GB/s");
        assert_eq!(b.results, vec!["PASS"]);
        let c = "bandwidthTest-H2D-Pinned, Bandwidth = 24.6 GB/s, Time = 0.00130 s, Size = 32000000 bytes, NumDevsUsed = 1\n";
        assert!(looks_like_bandwidth_test(c));
        let m = &parse_bandwidth_test(c).measurements[0];
        assert_eq!(
            (m.direction.as_str(), m.bytes),
            ("Host to Device", 32_000_000)
        );
    }

    #[test]
    fn other_bandwidth_texts_are_not_claimed() {
        // nvbandwidth, busGrind, prose, deviceQuery
        assert!(!looks_like_bandwidth_test(
            "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
        ));
        assert!(!looks_like_bandwidth_test(
            "Host/Device Bandwidth Matrix (GB/s), memory=Pinned\n"
        ));
        assert!(!looks_like_bandwidth_test(
            "the Host to Device bandwidth is 12 GB/s on 1 device\n"
        ));
        assert!(!looks_like_bandwidth_test(
            "Device 0: \"NVIDIA A100-SXM4-80GB\"\n  CUDA Driver Version / Runtime Version          12.2 / 12.1\n"
        ));
    }
}
