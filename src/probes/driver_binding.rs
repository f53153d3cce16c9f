//! `driver.binding`: NVIDIA GPUs that another kernel driver holds, so the NVIDIA driver has no
//! device and NVML and CUDA see none, from pasted text (`--evidence`, `--kernel-log`).
//!
//! Two producers say it:
//!
//! - `lspci -k` / `-vv` (pciutils `ls-kernel.c`, `show_kernel`, read at 0f5b941): under a
//!   device, `\tKernel driver in use: %s` names the driver bound to it now, and `\tKernel
//!   modules: %s` the modules that could bind it. An NVIDIA display-class function (VGA, 3D or
//!   display controller, [`crate::evidence::lspci`]) bound to `nouveau`, or to one of the old
//!   framebuffer drivers the NVIDIA module's own message names (`nvidiafb`, `rivafb`,
//!   `rivatv`), is a GPU the NVIDIA driver cannot use. `vfio-pci` (and `pci-stub`) is a GPU
//!   set aside for a virtual machine on purpose, and `nvidia` the NVIDIA driver: neither is
//!   judged here.
//! - the NVIDIA kernel module at load (NVIDIA/open-gpu-kernel-modules
//!   `kernel-open/nvidia/nv.c`, `nvidia_init_module`, read at 30e15d79; the same strings in the
//!   closed modules since the 1.0 drivers): after `pci_register_driver` it compares the NVIDIA
//!   display devices on the bus with those its probe routine was called for, and prints
//!   `NVRM: The NVIDIA probe routine was not called for %d device(s).` then `NVRM: This can
//!   occur when a driver such as: \nNVRM: nouveau, rivafb, nvidiafb or rivatv … was loaded and
//!   obtained ownership of the NVIDIA device(s).` (older drivers: `such as nouveau, rivafb,`
//!   over three lines), and, when it was called for none, `NVRM: No NVIDIA graphics adapter
//!   probed!` and fails the load (`rc = -ENODEV`). `The NVIDIA probe routine failed for %d
//!   device(s).` is another case (the probe ran and failed: a GPU off the bus, an unsupported
//!   GPU) and is not read here ([`crate::evidence::kernel_log`] reads the fallen-off-the-bus
//!   report beside it).
//!
//! The module's message cannot tell which driver took the devices: on a host that passes a GPU
//! through to a virtual machine (`vfio-pci`) the same lines are expected, so the rule's
//! message says so.

use super::inputs::evidence_of;
use super::{NoParams, Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::{kernel_log, lspci};
use crate::vocab::io::read_shared;
use serde::Serialize;
use serde_json::json;

pub struct DriverBinding;

/// The drivers the NVIDIA module's message names as taking its devices (nv.c), bound to an
/// NVIDIA GPU.
pub const OTHER_DRIVERS: [&str; 4] = ["nouveau", "nvidiafb", "rivafb", "rivatv"];

/// One NVIDIA GPU of an lspci paste whose bound driver the paste shows.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BoundGpu {
    pub slot: Option<String>,
    pub description: Option<String>,
    pub driver: String,
    /// Bound to one of [`OTHER_DRIVERS`].
    pub held: bool,
}

/// The NVIDIA GPUs of an `lspci` paste with the driver each is bound to.
pub fn bound_gpus(devices: &[lspci::LspciDevice]) -> Vec<BoundGpu> {
    devices
        .iter()
        .filter(|d| d.nvidia == Some(true) && d.gpu == Some(true))
        .filter_map(|d| {
            let driver = d.kernel_driver.as_deref()?.trim().to_string();
            let held = OTHER_DRIVERS.contains(&driver.as_str());
            Some(BoundGpu {
                slot: d.slot.clone(),
                description: d.description.clone(),
                driver,
                held,
            })
        })
        .collect()
}

impl Probe for DriverBinding {
    type Params = NoParams;
    fn name(&self) -> &'static str {
        "driver.binding"
    }
    fn doc(&self) -> &'static str {
        "which kernel driver holds each NVIDIA GPU in pasted text (--evidence, --kernel-log): lspci's `Kernel driver in use:` of an NVIDIA display function, the NVIDIA module's `probe routine was not called for N device(s)` and `No NVIDIA graphics adapter probed!`"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "judgeable",
                "the text shows the driver bound to an NVIDIA GPU, or the NVIDIA module reporting devices it was not called for",
            ),
            (
                "held",
                "one sentence per thing that says another driver holds NVIDIA GPUs",
            ),
            (
                "gpus",
                "slot, description, driver, held per NVIDIA GPU of an lspci paste",
            ),
            (
                "probe_not_called",
                "the devices the NVIDIA module's probe routine was not called for",
            ),
            (
                "no_adapter_probed",
                "the NVIDIA module found no GPU of its own (`No NVIDIA graphics adapter probed!`), read beside `probe_not_called`",
            ),
            ("files", "the texts read"),
        ]
    }
    fn run(&self, _params: &NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut files: Vec<String> = Vec::new();
        let mut gpus: Vec<BoundGpu> = Vec::new();
        let mut not_called = 0u32;
        let mut none_probed = false;
        let note = |files: &mut Vec<String>, p: &std::path::Path| {
            let p = p.display().to_string();
            if !files.contains(&p) {
                files.push(p);
            }
        };
        for (p, t) in evidence_of(&ctx.inputs.evidence, &lspci::Lspci) {
            let Ok(devices) = lspci::parse_lspci(&t) else {
                continue;
            };
            let b = bound_gpus(&devices);
            if !b.is_empty() {
                note(&mut files, &p);
                gpus.extend(b);
            }
        }
        let mut logs: Vec<(std::path::PathBuf, std::sync::Arc<String>)> = Vec::new();
        if let Some(p) = &ctx.inputs.kernel_log
            && let Ok(t) = read_shared(p)
        {
            logs.push((p.clone(), t));
        }
        logs.extend(evidence_of(
            &ctx.inputs.evidence,
            &kernel_log::KernelLogKind,
        ));
        for (p, t) in logs {
            let k = crate::evidence::memo::parsed(&t, kernel_log::parse_kernel_log);
            // `No NVIDIA graphics adapter probed!` alone is a bus without an NVIDIA display
            // device (nv.c prints it when the probe was called for none and none was left
            // uncalled): no other driver is named by it
            if let Some(n) = k.probe_not_called.filter(|n| *n > 0) {
                note(&mut files, &p);
                not_called = not_called.saturating_add(n);
                none_probed |= k.no_adapter_probed;
            }
        }
        if files.is_empty() {
            return ProbeOutcome::NotApplicable(
                "needs --evidence or --kernel-log with lspci -k's `Kernel driver in use:` of an NVIDIA GPU, or the NVIDIA module's probe messages".into(),
            );
        }
        let mut held: Vec<String> = gpus
            .iter()
            .filter(|g| g.held)
            .take(crate::evidence::MAX_ITEMS)
            .map(|g| {
                let slot = g
                    .slot
                    .as_deref()
                    .map(|s| format!("{s} "))
                    .unwrap_or_default();
                let name = g
                    .description
                    .as_deref()
                    .map(|d| format!("({}) ", crate::evidence::clip(d, 80)))
                    .unwrap_or_default();
                format!("GPU {slot}{name}is bound to {}", g.driver)
            })
            .collect();
        if not_called > 0 {
            held.push(format!(
                "the NVIDIA module's probe routine was not called for {not_called} device(s): another driver took them{}",
                if none_probed {
                    ", and it found no GPU of its own (`No NVIDIA graphics adapter probed!`)"
                } else {
                    ""
                }
            ));
        }
        ProbeOutcome::Value(json!({
            "judgeable": true,
            "held": held,
            "gpus": gpus,
            "probe_not_called": not_called,
            "no_adapter_probed": none_probed,
            "files": files,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(t: &str) -> Vec<BoundGpu> {
        bound_gpus(&lspci::parse_lspci(t).expect("lspci"))
    }

    #[test]
    fn the_driver_bound_to_each_nvidia_gpu_is_read() {
        // h119: negativo17/nvidia-driver#73, lspci -vv run without sudo
        let t = include_str!(
            "../../tests/fixtures/corpus/h119_lspci_negativo73_gtx970_nouveau_in_use.txt"
        );
        assert!(lspci::looks_like_lspci(t));
        let b = bound(t);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].slot.as_deref(), Some("01:00.0"));
        assert_eq!(b[0].driver, "nouveau");
        assert!(b[0].held);
        // an NVIDIA GPU bound to nvidia, its audio function bound to snd_hda_intel (not a GPU),
        // a GPU set aside for a VM, a framebuffer driver, an AMD GPU bound to amdgpu
        let t = "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation TU117M [GeForce GTX 1650 Mobile / Max-Q] [10de:1f91] (rev a1)\n\tKernel driver in use: nvidia\n\tKernel modules: nouveau, nvidia_drm, nvidia\n01:00.1 Audio device [0403]: NVIDIA Corporation Device [10de:10fa] (rev a1)\n\tKernel driver in use: snd_hda_intel\n02:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204] (rev a1)\n\tKernel driver in use: vfio-pci\n03:00.0 VGA compatible controller [0300]: NVIDIA Corporation NV34 [GeForce FX 5200] [10de:0322] (rev a1)\n\tKernel driver in use: nvidiafb\n04:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 [1002:73bf] (rev c1)\n\tKernel driver in use: amdgpu\n";
        let b = bound(t);
        let drivers: Vec<(&str, bool)> = b.iter().map(|g| (g.driver.as_str(), g.held)).collect();
        assert_eq!(
            drivers,
            vec![("nvidia", false), ("vfio-pci", false), ("nvidiafb", true)]
        );
        // a GPU whose bound driver the paste does not show is not judged
        let t = "17:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n\t\tLnkSta:\tSpeed 32GT/s, Width x16\n";
        assert!(bound(t).is_empty());
    }

    #[test]
    fn access_denied_capabilities_make_a_paste_lspci_and_prose_does_not() {
        let t = "02:00.0 Network controller: Atheros Communications Inc. AR9285 Wireless Network Adapter (PCI-Express) (rev 01)\n    Subsystem: Foxconn International, Inc. Device e016\n    Flags: bus master, fast devsel, latency 0, IRQ 4\n    Memory at d1100000 (64-bit, non-prefetchable) [size=64K]\n    Capabilities: <access denied>\n";
        assert!(lspci::looks_like_lspci(t));
        // the words without a device line above them
        assert!(!lspci::looks_like_lspci(
            "Without sudo lspci -vvs prints\nCapabilities: <access denied>\nfor every device.\n"
        ));
    }
}
