//! `nvidia-smi -L` (`--list-gpus`) and `nvidia-smi nvlink -s` (`--status`): the GPU list lines
//! both print, read from nvidia-smi's own help and output (nvidia-smi is closed source; its
//! `-h` text, e.g. driver 418.67's, documents `-L, --list-gpus  Display a list of GPUs connected
//! to the system` and the `nvlink` subcommand's `-s, --status  Display link state`):
//!
//! - one line per GPU, `GPU <index>: <name> (UUID: GPU-<8-4-4-4-12 hex>)` (NVML's
//!   `nvmlDeviceGetName` and `nvmlDeviceGetUUID`); a paste cut at the line's end can lack the
//!   closing parenthesis, and `nvlink -s` without UUIDs prints the name alone;
//! - under a GPU in MIG mode, one indented line per MIG device, `MIG <profile> Device <n>:
//!   (UUID: MIG-<uuid>)` (R470 and later) or `(UUID: MIG-GPU-<uuid>/<gi>/<ci>)` (R450-R465);
//! - `nvlink -s`: under each GPU, `\t Link <n>: <speed> GB/s` or `\t Link <n>: <inactive>`.
//!
//! - a GPU NVML cannot reach any more: `-L` prints `Unable to determine the device handle for
//!   gpu <bus id>: <nvmlErrorString>` in its place (lower-case `gpu`, NordicHPC/sonar#72:
//!   `... for gpu 0000:18:00.0: Unknown Error` above GPUs 1-3 of four), where the table and
//!   `-q` print `... for GPU <bus id>: ...` (the h19 corpus texts).
//!
//! A list of GPUs shows no fault and no rule reads it, except the unreachable GPU: the
//! `kernel.log` probe reads it as the GPU lost that nvidia-smi reports elsewhere (see
//! [`super::kernel_log::is_gpu_lost`]). The rest is read so that such a paste is not "cannot
//! tell what this is", and its links (an `<inactive>` one) are there for whoever looks.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ListedGpu {
    pub index: u32,
    pub name: String,
    pub uuid: Option<String>,
    /// MIG devices listed under it: `1g.5gb device 0`.
    pub mig_devices: Vec<String>,
    /// `nvlink -s`: each link's speed in GB/s, `None` for `<inactive>`.
    pub links: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SmiList {
    pub gpus: Vec<ListedGpu>,
    /// Links `nvlink -s` shows `<inactive>`, as `GPU 0 link 2`.
    pub inactive_links: Vec<String>,
    /// GPUs whose device handle NVML could not get: the bus id and NVML's error, as
    /// `0000:18:00.0: Unknown Error`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreachable: Vec<String>,
}

/// `Unable to determine the device handle for gpu 0000:18:00.0: Unknown Error` (or `GPU`,
/// with or without the space before the bus id) -> `0000:18:00.0: Unknown Error`.
fn unreachable_line(line: &str) -> Option<String> {
    let l = super::smi_tables::clean(line).trim();
    let rest = l.strip_prefix("Unable to determine the device handle for ")?;
    let rest = rest
        .strip_prefix("gpu")
        .or_else(|| rest.strip_prefix("GPU"))?
        .trim_start();
    let (bus, err) = rest.split_once(": ")?;
    let bus_ok = bus.len() >= 7
        && bus.contains(':')
        && bus
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
    (bus_ok && !err.trim().is_empty()).then(|| format!("{bus}: {}", err.trim()))
}

/// `GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-…)` -> (index, name, uuid).
fn gpu_line(line: &str) -> Option<(u32, String, Option<String>)> {
    let l = super::smi_tables::clean(line).trim();
    let rest = l.strip_prefix("GPU ")?;
    let (idx, rest) = rest.split_once(": ")?;
    let index: u32 = idx.trim().parse().ok()?;
    let (name, uuid) = match rest.split_once(" (UUID: ") {
        Some((n, u)) => {
            let u = u.trim_end_matches(')').trim();
            let ok = u.strip_prefix("GPU-").is_some_and(|h| {
                h.len() >= 8 && h.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            });
            if !ok {
                return None;
            }
            (n.trim(), Some(u.to_string()))
        }
        None => (rest.trim(), None),
    };
    (!name.is_empty() && name.len() <= 120).then(|| (index, name.to_string(), uuid))
}

/// `  MIG 1g.5gb Device 0: (UUID: MIG-…)` -> `1g.5gb device 0`.
fn mig_line(line: &str) -> Option<String> {
    let l = super::smi_tables::clean(line).trim();
    let rest = l.strip_prefix("MIG ")?;
    let (head, uuid) = rest.split_once(": (UUID: MIG-")?;
    let w: Vec<&str> = head.split_whitespace().collect();
    let [profile, "Device", n] = w[..] else {
        return None;
    };
    (n.parse::<u32>().is_ok() && !uuid.is_empty()).then(|| format!("{profile} device {n}"))
}

/// `\t Link 0: 25 GB/s` -> (0, Some(25.0)); `\t Link 2: <inactive>` -> (2, None).
fn link_line(line: &str) -> Option<(u32, Option<f64>)> {
    let l = super::smi_tables::clean(line).trim();
    let (n, v) = l.strip_prefix("Link ")?.split_once(": ")?;
    let n: u32 = n.trim().parse().ok()?;
    let v = v.trim();
    if v == "<inactive>" {
        return Some((n, None));
    }
    let gbps: f64 = v.strip_suffix("GB/s")?.trim().parse().ok()?;
    Some((n, Some(gbps)))
}

/// A GPU line with its UUID (what `-L` always prints), or a GPU line followed by a link line.
pub fn looks_like_smi_list(text: &str) -> bool {
    let mut prev_gpu = false;
    for l in text.lines().take(2000) {
        match gpu_line(l) {
            Some((_, _, Some(_))) => return true,
            Some(_) => prev_gpu = true,
            None => {
                if prev_gpu && link_line(l).is_some() {
                    return true;
                }
                prev_gpu = false;
            }
        }
    }
    false
}

pub fn parse_smi_list(text: &str) -> Result<SmiList, super::ParseError> {
    if !looks_like_smi_list(text) {
        return Err(super::ParseError::NotThisKind(
            "no `nvidia-smi -L` line (`GPU 0: <name> (UUID: GPU-…)`) in the text",
        ));
    }
    let mut out = SmiList::default();
    for l in text.lines().take(20_000) {
        if let Some((index, name, uuid)) = gpu_line(l) {
            if out.gpus.len() < super::MAX_ITEMS {
                out.gpus.push(ListedGpu {
                    index,
                    name,
                    uuid,
                    ..Default::default()
                });
            }
            continue;
        }
        if let Some(u) = unreachable_line(l) {
            if out.unreachable.len() < super::MAX_ITEMS {
                out.unreachable.push(u);
            }
            continue;
        }
        let Some(g) = out.gpus.last_mut() else {
            continue;
        };
        if let Some(m) = mig_line(l) {
            if g.mig_devices.len() < super::MAX_ITEMS {
                g.mig_devices.push(m);
            }
        } else if let Some((n, v)) = link_line(l)
            && g.links.len() < 64
        {
            g.links.push(v);
            if v.is_none() && out.inactive_links.len() < super::MAX_ITEMS {
                out.inactive_links.push(format!("GPU {} link {n}", g.index));
            }
        }
    }
    Ok(out)
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct SmiListKind;

impl super::EvidenceKind for SmiListKind {
    fn name(&self) -> &'static str {
        "nvidia-smi-list"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi -L (or nvlink -s): each GPU's index, name and UUID, its MIG devices, and each NVLink's speed"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi -L"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "gpus",
                "per GPU: index, name, uuid, mig_devices, links (GB/s; none for <inactive>)",
            ),
            ("inactive_links", "links nvlink -s shows <inactive>"),
            (
                "unreachable",
                "GPUs whose device handle NVML could not get: bus id and error",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["kernel.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_smi_list(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_smi_list(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_with_mig_devices() {
        // NVIDIA/DCGM#94: two A100 80GB PCIe split into 3g.40gb MIG instances
        let t = "yasir@517m214:~$ sudo nvidia-smi -L\nGPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-a22537c7-6eaa-7bdb-0ba4-45e67e84e963)\n  MIG 3g.40gb     Device  0: (UUID: MIG-1503b9a7-3336-58e3-b589-bb25ef1e39f1)\n  MIG 3g.40gb     Device  1: (UUID: MIG-9dcf6483-16e6-5a0f-8db3-8a8d4969cd59)\nGPU 1: NVIDIA A100 80GB PCIe (UUID: GPU-91d61502-6349-8428-a597-fd33747ccbee)\n  MIG 3g.40gb     Device  0: (UUID: MIG-1854de69-a51b-5fbd-8654-82ab2c663383)\n";
        assert!(looks_like_smi_list(t));
        let l = parse_smi_list(t).unwrap();
        assert_eq!(l.gpus.len(), 2);
        assert_eq!(l.gpus[0].name, "NVIDIA A100 80GB PCIe");
        assert_eq!(
            l.gpus[0].uuid.as_deref(),
            Some("GPU-a22537c7-6eaa-7bdb-0ba4-45e67e84e963")
        );
        assert_eq!(
            l.gpus[0].mig_devices,
            vec!["3g.40gb device 0", "3g.40gb device 1"]
        );
        assert_eq!(l.gpus[1].mig_devices.len(), 1);
        // TheTumultuousUnicornOfDarkness/CPU-X#115: a line cut before its closing parenthesis
        let cut = "GPU 0: GeForce GTX 1660 Ti (UUID: GPU-e18afb8d-1627-f8ff-2ba3-c05c5a8e9e67\n";
        assert_eq!(
            parse_smi_list(cut).unwrap().gpus[0].name,
            "GeForce GTX 1660 Ti"
        );
    }

    #[test]
    fn nvlink_status_links() {
        // aws-samples/awsome-distributed-training 1.architectures/efa-cheatsheet.md: a
        // p4de.24xlarge's GPU 0 with its twelve links up (cut to four here)
        let t = "ubuntu@ip-172-31-35-99:~$ nvidia-smi nvlink -s\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-370ec676-e407-3115-836a-8ebcb3c4f62a)\n\t Link 0: 25 GB/s\n\t Link 1: 25 GB/s\n\t Link 2: 25 GB/s\n\t Link 3: 25 GB/s\n";
        let l = parse_smi_list(t).unwrap();
        assert_eq!(l.gpus[0].links, vec![Some(25.0); 4]);
        assert!(l.inactive_links.is_empty());
        // the `<inactive>` nvidia-smi prints for a link that is down
        let t = "GPU 1: NVIDIA A100-SXM4-80GB\n\t Link 0: 25 GB/s\n\t Link 1: <inactive>\n";
        assert!(looks_like_smi_list(t));
        assert_eq!(
            parse_smi_list(t).unwrap().inactive_links,
            vec!["GPU 1 link 1"]
        );
        // collect_env's GPU line carries no UUID and no link: not this kind
        assert!(!looks_like_smi_list(
            "GPU models and configuration: GPU 0: NVIDIA A100 80GB PCIe\nNvidia driver version: 525.116.04\n"
        ));
        assert!(!looks_like_smi_list("GPU 0: NVIDIA A100\nsomething else\n"));
    }

    #[test]
    fn a_gpu_nvml_cannot_reach_in_the_list() {
        // NordicHPC/sonar#72 (h150 corpus): the first of four RTX 2080 Ti failing
        let t = "$ nvidia-smi -L\nUnable to determine the device handle for gpu 0000:18:00.0: Unknown Error\nGPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-f0f3ae96-fe93-f5c8-4295-bf657e5a25da)\nGPU 2: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-99c4f278-11da-052d-ac5c-3490b58ade04)\n";
        let l = parse_smi_list(t).unwrap();
        assert_eq!(l.unreachable, vec!["0000:18:00.0: Unknown Error"]);
        assert_eq!(l.gpus.len(), 2);
        assert!(l.gpus.iter().all(|g| g.index != 0));
        // the table's and -q's wording, no space before the bus id (h19)
        assert_eq!(
            unreachable_line(
                "Unable to determine the device handle for GPU0000:A1:00.0: Unknown Error"
            )
            .as_deref(),
            Some("0000:A1:00.0: Unknown Error")
        );
        // neighbours: prose about the message, a list with every GPU, a bus id that is not one
        assert!(
            unreachable_line("We saw Unable to determine the device handle for gpu errors")
                .is_none()
        );
        assert!(
            unreachable_line("Unable to determine the device handle for gpu: Unknown Error")
                .is_none()
        );
        let all = "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-370ec676-e407-3115-836a-8ebcb3c4f62a)\n";
        assert!(parse_smi_list(all).unwrap().unreachable.is_empty());
    }
}
