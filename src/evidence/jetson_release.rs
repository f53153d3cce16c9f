//! jetson-stats' `jetson_release` (also the first block of `jtop`'s info page and of the many
//! wrappers that call it), read from its producer: rbonghi/jetson_stats `jtop/jetson_release.py`,
//! `main` (read at 768dc993, jetson-stats 4.x; the 3.x layout, read at 03e3a5d6, differs only in
//! the power-mode line), which prints, each label through `bcolors.bold`:
//!
//! ```text
//! Software part of jetson-stats 4.3.1 - (c) 2024, Raffaello Bonghi     the banner, always first
//! Model: NVIDIA Jetson Orin Nano Developer Kit - Jetpack 6.1 [L4T 36.4.0]
//! NV Power Mode[0]: 15W                   4.x; 3.x: "NV Power Mode: 15W - Type: 0"
//! Serial Number: [XXX Show with: jetson_release -s XXX]
//! Hardware:                               " - {name}: {variable}" per jetson variable
//!  - P-Number: p3767-0005
//!  - Module: NVIDIA Jetson Orin Nano (Developer kit)
//! Platform:                               the same per platform variable
//!  - Distribution: Ubuntu 22.04 Jammy Jellyfish
//!  - Release: 5.15.148-tegra
//! jtop:
//!  - Version: 4.3.1
//!  - Service: Active                      or Inactive
//! Libraries:
//!  - CUDA: 12.6.68                        or "Not installed" (3.x: " - CUDA not installed!")
//!  - cuDNN: 9.3.0.75                      one line per `get_libraries()` entry
//!  - OpenCV: 4.11.0 - with CUDA: YES      last in 4.x, right after CUDA in 3.x
//! ```
//!
//! Without a JetPack the headline is `Jetpack missing!` followed by ` - Model:` and ` - L4T:`
//! lines. The text says which JetPack, L4T and CUDA a Jetson runs, not whether a job works on
//! it, so no rule reads it; it is read so that such a paste is known, with those versions. Lines
//! a wrapper prints after it (jetson-fpv's `Python Environment:` block) are another program's and
//! are left unread.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct JetsonRelease {
    /// The banner's jetson-stats version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jetson_stats: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jetpack: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l4t: Option<String>,
    /// `Jetpack missing!` was printed.
    pub jetpack_missing: bool,
    /// The power mode's name (`15W`, `MAXN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_mode: Option<String>,
    /// `Hardware:` and `Platform:` entries, `(name, value)`.
    pub hardware: Vec<(String, String)>,
    pub platform: Vec<(String, String)>,
    /// jtop's service: `Active` or `Inactive`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jtop_service: Option<String>,
    /// ` - CUDA:`'s version; `None` where it says `Not installed` or is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    /// ` - CUDA: Not installed` (4.x) or ` - CUDA not installed!` (3.x).
    pub cuda_missing: bool,
    /// The other `Libraries:` entries (`cuDNN`, `TensorRT`, `VPI`, `Vulkan`, `OpenCV`), as printed.
    pub libraries: Vec<(String, String)>,
    /// OpenCV's ` - with CUDA: YES|NO`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opencv_cuda: Option<bool>,
}

const BANNER: &str = "Software part of jetson-stats ";

/// The headline `Model: <model> - Jetpack <jp> [L4T <l4t>]`.
fn headline(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.strip_prefix("Model: ")?;
    let (model, rest) = rest.rsplit_once(" - Jetpack ")?;
    let (jp, rest) = rest.split_once(" [L4T ")?;
    let l4t = rest.strip_suffix(']')?;
    if model.is_empty() || jp.is_empty() || l4t.is_empty() || l4t.contains(' ') {
        return None;
    }
    Some((model.trim(), jp.trim(), l4t))
}

/// The banner line (`Software part of jetson-stats 4.3.1 - (c) 2024, …`) or the headline.
pub fn looks_like_jetson_release(text: &str) -> bool {
    super::content_lines(text).take(4000).any(|l| {
        let l = l.trim_end();
        l.strip_prefix(BANNER)
            .is_some_and(|v| v.split(" - ").next().is_some_and(is_version))
            || headline(l).is_some()
    })
}

fn is_version(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 20
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
}

/// ` - {name}: {value}`.
fn entry(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix(" - ")?;
    let (name, value) = rest.split_once(": ")?;
    if name.is_empty() || name.len() > 40 {
        return None;
    }
    Some((name.trim(), value.trim()))
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    None,
    Hardware,
    Platform,
    Jtop,
    Libraries,
    Missing,
}

pub fn parse_jetson_release(text: &str) -> JetsonRelease {
    let mut out = JetsonRelease::default();
    let mut section = Section::None;
    let mut started = false;
    for line in super::content_lines(text) {
        let line = line.trim_end();
        if let Some(v) = line.strip_prefix(BANNER) {
            if let Some(ver) = v.split(" - ").next().filter(|v| is_version(v)) {
                out.jetson_stats = Some(ver.to_string());
                started = true;
                section = Section::None;
            }
            continue;
        }
        if let Some((model, jp, l4t)) = headline(line) {
            out.model = Some(super::clip(model, 120));
            out.jetpack = Some(super::clip(jp, 20));
            out.l4t = Some(super::clip(l4t, 20));
            started = true;
            section = Section::None;
            continue;
        }
        if !started {
            continue;
        }
        match line {
            "Jetpack missing!" => {
                out.jetpack_missing = true;
                section = Section::Missing;
                continue;
            }
            "Hardware:" => {
                section = Section::Hardware;
                continue;
            }
            "Platform:" => {
                section = Section::Platform;
                continue;
            }
            "jtop:" => {
                section = Section::Jtop;
                continue;
            }
            "Libraries:" => {
                section = Section::Libraries;
                continue;
            }
            " - CUDA not installed!" => {
                out.cuda_missing = true;
                continue;
            }
            _ => {}
        }
        if let Some(rest) = line.strip_prefix("NV Power Mode") {
            // 4.x `NV Power Mode[0]: 15W`, 3.x `NV Power Mode: 15W - Type: 0`
            if let Some((_, name)) = rest.split_once(": ") {
                let name = name.split(" - Type: ").next().unwrap_or(name).trim();
                if !name.is_empty() {
                    out.power_mode = Some(super::clip(name, 40));
                }
            }
            continue;
        }
        if line.starts_with("Serial Number:") {
            continue;
        }
        let Some((name, value)) = entry(line) else {
            if !line.starts_with(' ') && !line.is_empty() {
                // a line of another program after the block
                section = Section::None;
            }
            continue;
        };
        let pair = (super::clip(name, 40), super::clip(value, 120));
        match section {
            Section::Missing => match name {
                "Model" => out.model = Some(pair.1),
                "L4T" => out.l4t = Some(pair.1),
                _ => {}
            },
            Section::Hardware if out.hardware.len() < super::MAX_ITEMS => out.hardware.push(pair),
            Section::Platform if out.platform.len() < super::MAX_ITEMS => out.platform.push(pair),
            Section::Jtop if name == "Service" => out.jtop_service = Some(pair.1),
            Section::Libraries => {
                if name == "CUDA" {
                    if value == "Not installed" {
                        out.cuda_missing = true;
                    } else {
                        out.cuda = Some(pair.1);
                    }
                } else if let Some((ver, cuda)) = value.split_once(" - with CUDA: ") {
                    out.opencv_cuda = match cuda {
                        "YES" => Some(true),
                        "NO" => Some(false),
                        _ => None,
                    };
                    if out.libraries.len() < super::MAX_ITEMS {
                        out.libraries.push((pair.0, super::clip(ver.trim(), 120)));
                    }
                } else if out.libraries.len() < super::MAX_ITEMS {
                    out.libraries.push(pair);
                }
            }
            _ => {}
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct JetsonReleaseKind;

impl super::EvidenceKind for JetsonReleaseKind {
    fn name(&self) -> &'static str {
        "jetson-release"
    }
    fn doc(&self) -> &'static str {
        "jetson-stats' `jetson_release` output (rbonghi/jetson_stats): the Jetson's model, JetPack and L4T, power mode, hardware and platform entries, jtop's service and the CUDA, cuDNN, TensorRT and OpenCV versions"
    }
    fn example(&self) -> &'static str {
        "jetson_release"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("jetson_stats", "the banner's jetson-stats version"),
            ("model", "the headline's model"),
            ("jetpack", "the headline's JetPack"),
            ("l4t", "the headline's L4T release"),
            ("jetpack_missing", "`Jetpack missing!` was printed"),
            ("power_mode", "the `NV Power Mode` name"),
            ("hardware", "the `Hardware:` entries (name, value)"),
            ("platform", "the `Platform:` entries (name, value)"),
            ("jtop_service", "jtop's service, Active or Inactive"),
            ("cuda", "the `Libraries:` CUDA version"),
            ("cuda_missing", "CUDA `Not installed`"),
            (
                "libraries",
                "the other `Libraries:` entries (cuDNN, TensorRT, VPI, Vulkan, OpenCV)",
            ),
            ("opencv_cuda", "OpenCV's `with CUDA: YES|NO`"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_jetson_release(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        if !looks_like_jetson_release(text) {
            return Err(super::ParseError::NotThisKind(
                "no `jetson_release` lines (`Software part of jetson-stats N - …` or `Model: … - Jetpack N [L4T N]`) in the text",
            ));
        }
        super::to_value(&parse_jetson_release(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // h134: SnapDragonfly/jetson-fpv doc/TESTENV.md (its `wrapper.sh version`), the
    // jetson_release block and the start of the wrapper's own lines after it
    const FPV: &str = "$ sudo ./wrapper.sh version\n\nSoftware part of jetson-stats 4.3.1 - (c) 2024, Raffaello Bonghi\nModel: NVIDIA Jetson Orin Nano Developer Kit - Jetpack 6.1 [L4T 36.4.0]\nNV Power Mode[0]: 15W\nSerial Number: [XXX Show with: jetson_release -s XXX]\nHardware:\n - P-Number: p3767-0005\n - Module: NVIDIA Jetson Orin Nano (Developer kit)\nPlatform:\n - Distribution: Ubuntu 22.04 Jammy Jellyfish\n - Release: 5.15.148-tegra\njtop:\n - Version: 4.3.1\n - Service: Active\nLibraries:\n - CUDA: 12.6.68\n - cuDNN: 9.3.0.75\n - TensorRT: 10.3.0.30\n - VPI: 3.2.4\n - OpenCV: 4.11.0 - with CUDA: YES\n\n--------------------------------\nNVIDIA SDK:\nDeepStream C/C++ SDK version: 7.1\n    jetson-inference version: c038530 (dirty)\n\n--------------------------------\nPython Environment:\nPython 3.10.12\n          Torch version: 2.5.0a0+872d972e41.nv24.08\n";

    #[test]
    fn a_wrappers_jetson_release_block_4x() {
        assert!(looks_like_jetson_release(FPV));
        let r = parse_jetson_release(FPV);
        assert_eq!(r.jetson_stats.as_deref(), Some("4.3.1"));
        assert_eq!(
            r.model.as_deref(),
            Some("NVIDIA Jetson Orin Nano Developer Kit")
        );
        assert_eq!(r.jetpack.as_deref(), Some("6.1"));
        assert_eq!(r.l4t.as_deref(), Some("36.4.0"));
        assert!(!r.jetpack_missing);
        assert_eq!(r.power_mode.as_deref(), Some("15W"));
        assert_eq!(
            r.hardware,
            vec![
                ("P-Number".to_string(), "p3767-0005".to_string()),
                (
                    "Module".to_string(),
                    "NVIDIA Jetson Orin Nano (Developer kit)".to_string()
                )
            ]
        );
        assert_eq!(r.platform.len(), 2);
        assert_eq!(r.jtop_service.as_deref(), Some("Active"));
        assert_eq!(r.cuda.as_deref(), Some("12.6.68"));
        assert!(!r.cuda_missing);
        assert_eq!(
            r.libraries,
            vec![
                ("cuDNN".to_string(), "9.3.0.75".to_string()),
                ("TensorRT".to_string(), "10.3.0.30".to_string()),
                ("VPI".to_string(), "3.2.4".to_string()),
                ("OpenCV".to_string(), "4.11.0".to_string()),
            ]
        );
        assert_eq!(r.opencv_cuda, Some(true));
    }

    #[test]
    fn the_3x_layout_and_a_missing_jetpack_and_cuda() {
        // jetson_release.py at 03e3a5d6 (3.x): the power mode as `name - Type: number`, OpenCV
        // right after CUDA, `Jetpack missing!` with its Model and L4T entries
        let t = "Software part of jetson-stats 3.1.4 - (c) 2020, Raffaello Bonghi\nJetpack missing!\n - Model: NVIDIA Jetson Nano Developer Kit\n - L4T: 32.7.4\nNV Power Mode: MAXN - Type: 0\njtop:\n - Version: 3.1.4\n - Service: Inactive\nLibraries:\n - CUDA not installed!\n - OpenCV: 4.1.1 - with CUDA: NO\n";
        assert!(looks_like_jetson_release(t));
        let r = parse_jetson_release(t);
        assert!(r.jetpack_missing);
        assert_eq!(r.model.as_deref(), Some("NVIDIA Jetson Nano Developer Kit"));
        assert_eq!(r.l4t.as_deref(), Some("32.7.4"));
        assert_eq!(r.jetpack, None);
        assert_eq!(r.power_mode.as_deref(), Some("MAXN"));
        assert_eq!(r.jtop_service.as_deref(), Some("Inactive"));
        assert!(r.cuda_missing);
        assert_eq!(r.cuda, None);
        assert_eq!(r.opencv_cuda, Some(false));
        // 4.x's `Not installed`
        let r = parse_jetson_release(
            "Software part of jetson-stats 4.2.12 - (c) 2024, Raffaello Bonghi\nLibraries:\n - CUDA: Not installed\n",
        );
        assert!(r.cuda_missing);
        assert_eq!(r.cuda, None);
    }

    #[test]
    fn jetsoninfo_jtop_prose_and_other_version_lists_are_not_claimed() {
        // jetsonUtilities' jetsonInfo.py (alekxoo/senior-design markdown/jetson_env.md): another
        // tool's layout, no banner and no headline
        assert!(!looks_like_jetson_release(
            "NVIDIA NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\n L4T 36.4.3 [ JetPack UNKNOWN ]\n   Ubuntu 22.04.5 LTS\n   Kernel Version: 5.15.148-tegra\n CUDA 12.6.68\n   CUDA Architecture: 8.7\n"
        ));
        assert!(!looks_like_jetson_release(
            "Run jetson_release to see the Jetpack version; jtop shows the Model: line too.\n"
        ));
        assert!(!looks_like_jetson_release(
            "Libraries:\n - CUDA: 12.6.68\n - cuDNN: 9.3.0.75\n"
        ));
        // a Model line without the Jetpack/L4T pair
        assert!(!looks_like_jetson_release(
            "Model: Llama-3-8B - Jetpack of doom\n"
        ));
    }
}
