//! `nvidia-smi nvlink -s` / `nvidia-smi nvlink --status` output: each GPU's NVLinks and whether
//! each is up. nvidia-smi's own documentation (docs.nvidia.com/deploy/nvidia-smi, the `nvlink`
//! subcommand: `-s, --status` "Display link state (active/inactive)") names what it prints; the
//! printed form, as NVIDIA's own repositories quote it (NVIDIA/nccl-tests#228, NVIDIA/k8s-test-infra#371):
//!
//! ```text
//! GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5269b708-678a-b1a8-60f0-c90406537486)
//!          Link 0: 25 GB/s
//!          Link 3: <inactive>
//! ```
//!
//! - a GPU line, `GPU %u: %s (UUID: %s)` (the same line as `nvidia-smi -L`);
//! - one line per link under it, `Link %u: ` then the link's speed (`%s GB/s`) when it is
//!   active, or `<inactive>` when it is not. Lines may be indented with spaces or a tab.
//!
//! A link whose value is neither is kept with its text and judged neither up nor down.
//!
//! A GPU none of whose links is up gets no link lines: nvidia-smi prints, under its GPU line,
//! `NVML: Unable to retrieve NVLink information as all links are inActive` (R5xx drivers;
//! quoted from production hosts by leptonai/gpud#1085 on a B200 of an NVLink system,
//! NVIDIA/open-gpu-kernel-modules#1150 after Xid 149, and as the condition
//! Azure/azurehpc-health-checks' `customTests/azure_gpu_nvlink.nhc` tests for; gpud reads it as
//! NVML's `nvmlDeviceGetNvLinkState` answering `FEATURE_DISABLED` for every link of a GPU that
//! supports NVLink). The GPU is kept with `all_inactive` set and no links. Whether that is a
//! fault is the board's: a lone GPU, or a PCIe card with no bridge fitted (the same line on a
//! GeForce pair with no bridge), has nothing to link to.
//!
//! `nvidia-smi nvlink -e` / `--errorcounters` prints each link's error counters under the same
//! GPU line, one counter a line, `Link %u: <Counter> Errors: %llu` (nvidia-smi's documentation:
//! `-e, --errorcounters` "Display error counters"; NVML's `nvmlDeviceGetNvLinkErrorCounter`,
//! whose `nvmlNvLinkErrorCounter_t` are `NVML_NVLINK_ERROR_DL_REPLAY`, `DL_RECOVERY`,
//! `DL_CRC_FLIT`, `DL_CRC_DATA`), as stas00/ml-engineering's NVLink notes quote it on an H100
//! (`Replay Errors`, `Recovery Errors`, `CRC Errors`, a blank line between links), older drivers
//! with the CRC counter split (`CRC Flit Errors`, `CRC Data Errors`), and NVIDIA/srt-slurm#307 on
//! a GB300:
//!
//! ```text
//! GPU 0: NVIDIA GB300
//! \t Link 0: Replay Errors: 0
//! \t Link 0: Recovery Errors: 0
//! \t Link 0: CRC Errors: 0
//! ```
//!
//! The counters are kept per link (`errors`, the counter's name without `Errors` and its count);
//! such a link's state is not printed, so it is judged neither up nor down.
//!
//! DCGM prints the same states as a grid, `dcgmi nvlink -s` / `--link-status`
//! (`Nvlink::DisplayNvLinkLinkStatus` and `nvLinkStateToCharacter` in NVIDIA/DCGM
//! `dcgmi/Nvlink.cpp`, read at `72fa3fe`, DCGM 4.6.0; the same form in 3.x as DCGM#198 and the
//! llm-action H800 notes paste it):
//!
//! ```text
//! +----------------------+
//! |  NvLink Link Status  |
//! +----------------------+
//! GPUs:
//!     gpuId 0:
//!         U U U U U U U U _ _ _ _ _ _ _ _ _ _
//! NvSwitches:
//!     No NvSwitches found.
//!
//! Key: Up=U, Down=D, Disabled=X, Not Supported=_
//! ```
//!
//! - `gpuId %u:` (four spaces of indentation), then on the next line one character per link
//!   slot (`DCGM_NVLINK_MAX_LINKS_PER_GPU` of them: 18 in 3.x, 36 in 4.x), separated by one
//!   space: `U` up, `D` down, `X` disabled, `_` not supported (no such link);
//! - `physicalId %u:` and its grid under `NvSwitches:` are the switches' ports, not GPUs, and
//!   are not read.
//!
//! A `D` link is read as `<inactive>` (the link exists and carries nothing), `U` as up; an `X`
//! link is kept with its letter and judged neither (an administrator can disable a link on
//! purpose); a `_` slot is no link at all and is skipped.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct NvlinkStatus {
    pub gpus: Vec<NvlinkGpu>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct NvlinkGpu {
    /// The `GPU N:` index; `None` for links pasted without their GPU line.
    pub index: Option<u32>,
    pub name: Option<String>,
    pub links: Vec<NvLink>,
    /// nvidia-smi said `… all links are inActive` for this GPU instead of listing its links.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all_inactive: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NvLink {
    pub link: u32,
    /// `Some(true)` with a speed, `Some(false)` for `<inactive>`, `None` for other text.
    pub active: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gb_per_s: Option<f64>,
    pub value: String,
    /// `nvidia-smi nvlink -e`'s counters of the link (`Replay`, `Recovery`, `CRC`, `CRC Flit`,
    /// `CRC Data`) and their counts, in the order printed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<(String, u64)>,
}

impl NvlinkGpu {
    /// The links reported `<inactive>`.
    pub fn inactive(&self) -> Vec<u32> {
        self.links
            .iter()
            .filter(|l| l.active == Some(false))
            .map(|l| l.link)
            .collect()
    }
}

/// A line with its markdown quote and leading whitespace removed.
fn clean(line: &str) -> &str {
    let t = line.trim();
    t.strip_prefix('>').map(str::trim).unwrap_or(t)
}

/// `Link N: VALUE` → (N, VALUE).
fn link_line(line: &str) -> Option<(u32, &str)> {
    let rest = clean(line).strip_prefix("Link ")?;
    let (n, v) = rest.split_once(':')?;
    let n = n.trim().parse::<u32>().ok()?;
    Some((n, v.trim()))
}

/// The value of a link line: its speed when active, `<inactive>`, or neither.
fn link_value(v: &str) -> Option<(Option<bool>, Option<f64>)> {
    if v == "<inactive>" {
        return Some((Some(false), None));
    }
    let speed = v.strip_suffix("GB/s")?.trim().parse::<f64>().ok()?;
    Some((Some(true), Some(speed)))
}

/// An error counter's value, `Replay Errors: 0` → (`Replay`, 0): words, then `Errors: N`.
fn counter_value(v: &str) -> Option<(String, u64)> {
    let (name, n) = v.rsplit_once("Errors:")?;
    let name = name.trim();
    let n = n.trim().parse::<u64>().ok()?;
    (!name.is_empty()
        && name.len() <= 40
        && name
            .split(' ')
            .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric())))
    .then(|| (name.to_string(), n))
}

/// `GPU N: NAME (UUID: …)` → (N, NAME).
fn gpu_line(line: &str) -> Option<(u32, String)> {
    let rest = clean(line).strip_prefix("GPU ")?;
    let (n, name) = rest.split_once(": ")?;
    let n = n.trim().parse::<u32>().ok()?;
    let name = name.split(" (UUID:").next().unwrap_or(name).trim();
    Some((n, name.to_string()))
}

/// nvidia-smi's line for a GPU none of whose links is up (see the header), in any case (a
/// health check that lower-cases the output before matching prints it so).
fn all_inactive_line(line: &str) -> bool {
    let t = clean(line).to_ascii_lowercase();
    t.contains("unable to retrieve nvlink information as all links are inactive")
}

/// `gpuId N:` (dcgmi's GPU line in the link-status grid) → N.
fn dcgmi_gpu_line(line: &str) -> Option<u32> {
    clean(line)
        .strip_prefix("gpuId ")?
        .strip_suffix(':')?
        .trim()
        .parse()
        .ok()
}

/// A dcgmi link-state row, one of `U`, `D`, `X`, `_` per link slot separated by one space.
fn dcgmi_state_row(line: &str) -> Option<Vec<char>> {
    let t = clean(line);
    let states: Vec<char> = t
        .split(' ')
        .map(|c| {
            let mut it = c.chars();
            match (it.next(), it.next()) {
                (Some(ch @ ('U' | 'D' | 'X' | '_')), None) => Some(ch),
                _ => None,
            }
        })
        .collect::<Option<Vec<char>>>()?;
    (!states.is_empty()).then_some(states)
}

/// True when some line is a link line with a speed or `<inactive>`, or a dcgmi `gpuId N:`
/// line followed by its link-state row: no other tool prints `Link N: 25.781 GB/s`,
/// `Link N: <inactive>`, or a row of `U`/`D`/`X`/`_` under `gpuId N:`.
pub fn looks_like_nvlink_status(text: &str) -> bool {
    let mut after_gpu_id = false;
    for l in text.lines() {
        if link_line(l).is_some_and(|(_, v)| link_value(v).is_some() || counter_value(v).is_some())
            || (after_gpu_id && dcgmi_state_row(l).is_some())
            || all_inactive_line(l)
        {
            return true;
        }
        after_gpu_id = dcgmi_gpu_line(l).is_some();
    }
    false
}

pub fn parse_nvlink_status(text: &str) -> NvlinkStatus {
    let mut s = NvlinkStatus::default();
    // dcgmi: the GPU whose `gpuId N:` line came last, waiting for its state row
    let mut dcgmi_gpu: Option<u32> = None;
    for line in text.lines() {
        if let Some(index) = dcgmi_gpu_line(line) {
            dcgmi_gpu = Some(index);
            continue;
        }
        if let Some(index) = dcgmi_gpu.take() {
            if let Some(states) = dcgmi_state_row(line) {
                let links = states
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c != '_')
                    .map(|(i, c)| NvLink {
                        link: i as u32,
                        active: match c {
                            'U' => Some(true),
                            'D' => Some(false),
                            _ => None,
                        },
                        gb_per_s: None,
                        value: c.to_string(),
                        errors: Vec::new(),
                    })
                    .collect();
                s.gpus.push(NvlinkGpu {
                    index: Some(index),
                    name: None,
                    links,
                    all_inactive: false,
                });
                continue;
            }
        }
        if let Some((index, name)) = gpu_line(line) {
            s.gpus.push(NvlinkGpu {
                index: Some(index),
                name: Some(name),
                ..Default::default()
            });
        } else if all_inactive_line(line) {
            // the message belongs to the GPU line above it; one pasted alone names no GPU
            match s.gpus.last_mut() {
                Some(g) if g.links.is_empty() && !g.all_inactive => g.all_inactive = true,
                _ => s.gpus.push(NvlinkGpu {
                    all_inactive: true,
                    ..Default::default()
                }),
            }
        } else if let Some((link, v)) = link_line(line) {
            if s.gpus.is_empty() {
                s.gpus.push(NvlinkGpu::default());
            }
            if let Some(counter) = counter_value(v) {
                // `-e`: one line per counter; the link's entry gathers them
                if let Some(g) = s.gpus.last_mut() {
                    if let Some(i) = g.links.iter().rposition(|l| l.link == link) {
                        if g.links[i].errors.len() < super::MAX_ITEMS {
                            g.links[i].errors.push(counter);
                        }
                    } else if g.links.len() < super::MAX_ITEMS {
                        g.links.push(NvLink {
                            link,
                            active: None,
                            gb_per_s: None,
                            value: String::new(),
                            errors: vec![counter],
                        });
                    }
                }
                continue;
            }
            let (active, gb_per_s) = link_value(v).unwrap_or((None, None));
            if let Some(g) = s.gpus.last_mut() {
                g.links.push(NvLink {
                    link,
                    active,
                    gb_per_s,
                    value: super::clip(v, super::MAX_TEXT),
                    errors: Vec::new(),
                });
            }
        }
    }
    s.gpus.retain(|g| !g.links.is_empty() || g.all_inactive);
    s
}

pub struct NvlinkStatusKind;

impl super::EvidenceKind for NvlinkStatusKind {
    fn name(&self) -> &'static str {
        "nvidia-smi-nvlink"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi nvlink -s / --status: each GPU's NVLinks, their speed or `<inactive>`; nvidia-smi nvlink -e's error counters per link; dcgmi nvlink -s's U/D/X/_ grid alike"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi nvlink -s"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "gpus",
            "index, name, links (link, active, gb_per_s, value, errors: nvlink -e's counters) per GPU; all_inactive where nvidia-smi said all its links are inActive",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["gpu.topology"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_nvlink_status(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_nvlink_status(text);
        if v.gpus.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `Link N: <speed> GB/s`, `Link N: <inactive>` or `Link N: <counter> Errors: N` line, no `all links are inActive` line, nor a dcgmi `gpuId N:` link-state row, in the text",
            ));
        }
        super::to_value(&v)
    }
    // the links describe the host; the topology probe reads them from the paste
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::Shown))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inactive_links_and_healthy_links() {
        // Azure/azhpc-diagnostics#73: a V100 with two links <inactive>
        let t = "nvidia-smi nvlink -s\n....\nGPU 3: Tesla V100-SXM2-32GB (UUID: ...)\n         Link 0: 25.781 GB/s\n         Link 1: 25.781 GB/s\n         Link 2: 25.781 GB/s\n         Link 3: <inactive>\n         Link 4: 25.781 GB/s\n         Link 5: <inactive>\n";
        assert!(looks_like_nvlink_status(t));
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 1);
        assert_eq!(s.gpus[0].index, Some(3));
        assert_eq!(s.gpus[0].name.as_deref(), Some("Tesla V100-SXM2-32GB"));
        assert_eq!(s.gpus[0].links.len(), 6);
        assert_eq!(s.gpus[0].inactive(), vec![3, 5]);
        assert_eq!(s.gpus[0].links[0].gb_per_s, Some(25.781));
        // NVIDIA/nccl-tests#228: A100s, tab-indented, every link up
        let t = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05)\n\t Link 0: 25 GB/s\n\t Link 1: 25 GB/s\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-0c512562-871f-8257-6187-b5ae1b986d5e)\n\t Link 0: 25 GB/s\n";
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 2);
        assert!(s.gpus.iter().all(|g| g.inactive().is_empty()));
        // `nvidia-smi -L` alone is not this kind
        assert!(!looks_like_nvlink_status(
            "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05)\n"
        ));
    }

    #[test]
    fn error_counters_per_link() {
        // NVIDIA/srt-slurm#307 (h139): the hardware snapshot's header, nvlink -e on a GB300 and
        // the next command's error, all counters 0
        let t = "===== node01 | before | 2026-08-13T07:53:30Z =====\n\n# ---------- NVLink ----------\n\n$ nvidia-smi nvlink -e\nGPU 0: NVIDIA GB300\n\t Link 0: Replay Errors: 0\n\t Link 0: Recovery Errors: 0\n\t Link 0: CRC Errors: 0\n\n$ ls -al /dev/nvidia-caps-imex-channels/\nls: cannot access '/dev/nvidia-caps-imex-channels/': No such file or directory\n[exit 2]\n";
        assert!(looks_like_nvlink_status(t));
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 1);
        assert_eq!(s.gpus[0].name.as_deref(), Some("NVIDIA GB300"));
        assert_eq!(s.gpus[0].links.len(), 1);
        let l = &s.gpus[0].links[0];
        assert_eq!(l.active, None);
        assert_eq!(
            l.errors,
            [
                ("Replay".to_string(), 0),
                ("Recovery".to_string(), 0),
                ("CRC".to_string(), 0)
            ]
        );
        assert!(s.gpus[0].inactive().is_empty());
        // older drivers split the CRC counter; two GPUs, counts kept per link
        let t = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-a)\n         Link 0: Replay Errors: 0\n         Link 0: CRC Flit Errors: 5\n         Link 0: CRC Data Errors: 0\n         Link 1: Replay Errors: 12\nGPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-b)\n         Link 0: Replay Errors: 0\n";
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(s.gpus[0].links.len(), 2);
        assert_eq!(s.gpus[0].links[0].errors[1], ("CRC Flit".to_string(), 5));
        assert_eq!(s.gpus[0].links[1].errors, [("Replay".to_string(), 12)]);
        // a counter word that is not one, and prose, are not this kind
        assert!(!looks_like_nvlink_status("Link 0: errors: many\n"));
        assert!(!looks_like_nvlink_status(
            "Link 3: Replay Errors: a few, I think\n"
        ));
    }

    #[test]
    fn dcgmi_link_status_grid() {
        // liguodongiot/llm-action docs/llm-base/dcgmi.md (2a7d856): 8 H800, eight links up,
        // ten slots not supported
        let t = "dcgmi nvlink -s\n+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n    gpuId 0:\n        U U U U U U U U _ _ _ _ _ _ _ _ _ _\n    gpuId 1:\n        U U U U U U U U _ _ _ _ _ _ _ _ _ _\nNvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n";
        assert!(looks_like_nvlink_status(t));
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(s.gpus[1].index, Some(1));
        assert_eq!(s.gpus[0].links.len(), 8);
        assert!(s.gpus.iter().all(|g| g.inactive().is_empty()));
        // NVIDIA/DCGM#198: two H100 NVL whose 18 links are all down
        let t = "dcgmi nvlink --link-status\n+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n    gpuId 0:\n        D D D D D D D D D D D D D D D D D D\n    gpuId 1:\n        D D D D D D D D D D D D D D D D D D\nNvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n";
        assert!(looks_like_nvlink_status(t));
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(s.gpus[0].inactive().len(), 18);
        // a switch's row under `physicalId N:` is not a GPU
        let t = "NvSwitches:\n    physicalId 8:\n        U U D _\n";
        assert!(!looks_like_nvlink_status(t));
        assert!(parse_nvlink_status(t).gpus.is_empty());
    }

    #[test]
    fn all_links_inactive_message() {
        // leptonai/gpud#1085: a B200 of an NVLink system, its links all down
        let t = "GPU 2: NVIDIA B200 (UUID: GPU-xxx)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
        assert!(looks_like_nvlink_status(t));
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 1);
        assert_eq!(s.gpus[0].index, Some(2));
        assert_eq!(s.gpus[0].name.as_deref(), Some("NVIDIA B200"));
        assert!(s.gpus[0].all_inactive);
        assert!(s.gpus[0].links.is_empty());
        // healthy neighbours keep their links; the message sits with its own GPU only
        let t = "GPU 0: NVIDIA B200 (UUID: a)\n\t Link 0: 53.125 GB/s\nGPU 1: NVIDIA B200 (UUID: b)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
        let s = parse_nvlink_status(t);
        assert_eq!(s.gpus.len(), 2);
        assert!(!s.gpus[0].all_inactive);
        assert!(s.gpus[1].all_inactive);
        // the lower-cased form a health check prints, pasted alone: a GPU with no index
        let s = parse_nvlink_status(
            "nvml: unable to retrieve nvlink information as all links are inactive\n",
        );
        assert_eq!(s.gpus.len(), 1);
        assert_eq!(s.gpus[0].index, None);
        // prose about links is not this kind
        assert!(!looks_like_nvlink_status(
            "all links are inactive on the bridge\n"
        ));
    }
}
