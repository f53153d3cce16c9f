//! What `nvidia-smi -r` / `--gpu-reset` prints when it resets GPUs, read for the GPUs whose
//! reset the driver refused.
//!
//! nvidia-smi is closed source; its messages are those NVIDIA's driver packages print and its
//! manual page describes (`nvidia-smi(1)`, "-r, --gpu-reset": "Trigger a reset of one or more
//! GPUs … There can't be any applications using this particular device (e.g. CUDA application,
//! graphics application like X server, monitoring application like other instance of
//! nvidia-smi). There also can't be any compute applications running on any other GPU in the
//! system"). As posted from several driver generations:
//!
//! - R450 and later: `The following GPUs could not be reset:` over one `  GPU <bus id>:
//!   <reason>` line per GPU (`In use by another client`, NVML's `nvmlErrorString` for
//!   `NVML_ERROR_IN_USE`), then `N device(s) is/are currently being used by one or more other
//!   processes (e.g., Fabric Manager, CUDA application, …)` (NVIDIA/mig-parted#181,
//!   NVIDIA/NVSentinel#1690 and #1692: persistence mode holding the GPU, exit 255);
//!   mig-parted relays the same text inside a logrus field, its newlines escaped
//!   (`msg="\nThe following GPUs could not be reset:\n  GPU 00000000:00:06.0: In use by another
//!   client\n…"`, ComputeCanada/puppet-magic_castle#387);
//! - R450 on a single GPU: `GPU <bus id> is currently in use by another process.`
//!   (NVIDIA/gpu-operator#118: nvidia-persistenced keeping a handle);
//! - older drivers: `Unable to reset this GPU because it's being used by some other process
//!   (e.g. CUDA application, graphics application like X server, …)`.
//!
//! `GPU <bus id> was successfully reset.` is a reset that took place: a GPU refused and then
//! reset in the same text (the holder stopped in between) is no longer blocked. A reset refused
//! for another reason (`Not Supported` on a GPU without reset support, `Insufficient
//! Permissions`) is kept apart: stopping holders does not help it.

use serde::Serialize;

/// One GPU whose reset was refused.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Refused {
    /// The GPU's PCI bus id as printed, or `this GPU` where the message names none.
    pub gpu: String,
    pub reason: String,
    /// The GPU was refused because a client holds it (persistence mode, a daemon, a process).
    pub in_use: bool,
    pub line: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ResetReport {
    pub refused: Vec<Refused>,
    /// GPUs `was successfully reset`.
    pub reset: Vec<String>,
}

impl ResetReport {
    pub fn is_empty(&self) -> bool {
        self.refused.is_empty() && self.reset.is_empty()
    }
}

const HEADER: &str = "The following GPUs could not be reset:";
const OLD_IN_USE: &str = "Unable to reset this GPU because it's being used by some other process";

fn in_use_reason(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    r.contains("in use by another") || r.contains("being used by")
}

/// A PCI bus id as nvidia-smi prints it (`00000000:1A:00.0`, `0000:1a:00.0`).
fn is_bus_id(s: &str) -> bool {
    let mut parts = s.split(':');
    let (Some(dom), Some(bus), Some(devfn), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let hex = |x: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&x.len()) && x.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let Some((dev, func)) = devfn.split_once('.') else {
        return false;
    };
    hex(dom, 4..=8) && hex(bus, 2..=2) && hex(dev, 2..=2) && hex(func, 1..=1)
}

/// `GPU <bus id>: <reason>` under the header.
fn gpu_reason(l: &str) -> Option<(&str, &str)> {
    let rest = l.trim().strip_prefix("GPU ")?;
    let (bus, reason) = rest.split_once(": ")?;
    (is_bus_id(bus.trim()) && !reason.trim().is_empty()).then(|| (bus.trim(), reason.trim()))
}

/// Every reset result in the text.
pub fn read(text: &str) -> ResetReport {
    let mut r = ResetReport::default();
    if !(text.contains("reset") || text.contains("in use by another process")) {
        return r;
    }
    // a relayed message whose newlines are escaped (`msg="\nThe following GPUs …\n  GPU …"`)
    let unescaped;
    let text = if text.contains("could not be reset:\\n") {
        unescaped = text.replace("\\n", "\n");
        unescaped.as_str()
    } else {
        text
    };
    let mut under_header = false;
    for raw in text.lines() {
        let l = raw.trim();
        if l.ends_with(HEADER) {
            under_header = true;
            continue;
        }
        if under_header {
            if let Some((bus, reason)) = gpu_reason(l) {
                if r.refused.len() < super::MAX_ITEMS {
                    r.refused.push(Refused {
                        gpu: bus.to_string(),
                        reason: reason.to_string(),
                        in_use: in_use_reason(reason),
                        line: super::clip(l, super::MAX_TEXT),
                    });
                }
                continue;
            }
            under_header = false;
        }
        if let Some(rest) = l.strip_prefix("GPU ") {
            if let Some(bus) = rest.strip_suffix(" was successfully reset.") {
                if is_bus_id(bus.trim()) && r.reset.len() < super::MAX_ITEMS {
                    r.reset.push(bus.trim().to_string());
                }
                continue;
            }
            if let Some(bus) = rest.strip_suffix(" is currently in use by another process.")
                && is_bus_id(bus.trim())
                && r.refused.len() < super::MAX_ITEMS
            {
                r.refused.push(Refused {
                    gpu: bus.trim().to_string(),
                    reason: "in use by another process".into(),
                    in_use: true,
                    line: super::clip(l, super::MAX_TEXT),
                });
                continue;
            }
        }
        if l.starts_with(OLD_IN_USE) && r.refused.len() < super::MAX_ITEMS {
            r.refused.push(Refused {
                gpu: "this GPU".into(),
                reason: "being used by some other process".into(),
                in_use: true,
                line: super::clip(l, super::MAX_TEXT),
            });
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_r450_refusal_under_its_header() {
        // github.com/NVIDIA/NVSentinel/pull/1692 (corpus h150_smierr_nvsentinel1692_…)
        let t = "The following GPUs could not be reset:\n  GPU 00000000:1A:00.0: In use by another client\nexit=255\n";
        let r = read(t);
        assert_eq!(r.refused.len(), 1);
        assert_eq!(r.refused[0].gpu, "00000000:1A:00.0");
        assert!(r.refused[0].in_use);
        assert!(r.reset.is_empty());
        // NVIDIA/mig-parted#181: four GPUs and the summary sentence
        let t = "ERRO[0003]\nThe following GPUs could not be reset:\n  GPU 00000000:01:00.0: In use by another client\n  GPU 00000000:47:00.0: In use by another client\n  GPU 00000000:81:00.0: In use by another client\n  GPU 00000000:C2:00.0: In use by another client\n\n4 devices are currently being used by one or more other processes (e.g., Fabric Manager, CUDA application, graphics application such as an X server, or a monitoring application such as another instance of nvidia-smi). Please first kill all processes using these devices and all compute applications running in the system.\nFATA[0008] Error applying MIG configuration with hooks: error resetting all GPUs: exit status 255\n";
        let r = read(t);
        assert_eq!(r.refused.len(), 4);
        assert!(r.refused.iter().all(|g| g.in_use));
    }

    #[test]
    fn the_refusal_relayed_with_escaped_newlines() {
        // ComputeCanada/puppet-magic_castle#387: mig-parted's logrus field
        let t = "time=\"2024-09-30T19:49:46Z\" level=error msg=\"\\nThe following GPUs could not be reset:\\n  GPU 00000000:00:06.0: In use by another client\\n\\n1 device is currently being used by one or more other processes (e.g., Fabric Manager, CUDA application, graphics application such as an X server, or a monitoring application such as another instance of nvidia-smi). Please first kill all processes using this device and all compute applications running in the system.\\n\"\n";
        let r = read(t);
        assert_eq!(r.refused.len(), 1);
        assert_eq!(r.refused[0].gpu, "00000000:00:06.0");
    }

    #[test]
    fn the_older_wordings_and_a_later_success() {
        // NVIDIA/gpu-operator#118: refused while nvidia-persistenced runs, reset after it stops
        let t = "$ nvidia-smi --gpu-reset\nGPU 00000000:C1:00.0 is currently in use by another process.\n\n1 device is currently being used by one or more other processes (e.g., Fabric Manager, CUDA application, graphics application such as an X server, or a monitoring application such as another instance of nvidia-smi). Please first kill all processes using this device and all compute applications running in the system.\n\n$ killall nvidia-persistenced\n\n$ nvidia-smi --gpu-reset\nGPU 00000000:C1:00.0 was successfully reset.\n";
        let r = read(t);
        assert_eq!(r.refused.len(), 1);
        assert_eq!(r.reset, vec!["00000000:C1:00.0".to_string()]);
        let old = "Unable to reset this GPU because it's being used by some other process (e.g. CUDA application, graphics application like X server, monitoring application like other instance of nvidia-smi). Please first kill all processes using this GPU and all compute applications running in the system (even when they are running on other GPUs) and then try to reset the GPU again.\n";
        assert!(read(old).refused[0].in_use);
    }

    #[test]
    fn texts_that_are_no_refusal() {
        // a successful reset alone (NVSentinel#1692's second block)
        let ok = "$ nvidia-smi -pm 0 -i <uuid>\nAll done.\n$ nvidia-smi -r -i <uuid>\nGPU 00000000:1A:00.0 was successfully reset.\nexit=0\n";
        let r = read(ok);
        assert!(r.refused.is_empty());
        assert_eq!(r.reset.len(), 1);
        // prose about resets, and a MIG instance refused (not a reset)
        for t in [
            "If the GPU could not be reset, reboot the node.\n",
            "Unable to destroy GPU instance ID  3 from GPU  0: In use by another client\n",
            "The following GPUs could not be reset: see the log\n",
        ] {
            assert!(read(t).refused.is_empty(), "{t}");
        }
        // a reason other than a holder is kept apart
        let ns = "The following GPUs could not be reset:\n  GPU 00000000:01:00.0: Not Supported\n";
        let r = read(ns);
        assert_eq!(r.refused.len(), 1);
        assert!(!r.refused[0].in_use);
    }
}
