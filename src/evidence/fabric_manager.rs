//! `fabric-manager`: whether the NVLink fabric of an NVSwitch system (DGX/HGX A100, H100, H200,
//! B200, GB200) is ready for CUDA, as a paste shows it. On these systems a GPU accepts CUDA work
//! only once the NVIDIA Fabric Manager has set up the NVSwitches and registered the GPU with the
//! fabric; until then CUDA fails with error 802 (see `probes::fabric`). Three producers say so:
//!
//! - `nvidia-smi -q`'s per-GPU `Fabric` section, `State` and `Status` (text), or the XML's
//!   `<fabric><state>…</state><status>…</status>…</fabric>` (`nvsmi_device_v12.dtd`:
//!   `<!ELEMENT fabric (state, status, cliqueId, clusterUuid, health)>`). The state is NVML's
//!   `nvmlGpuFabricState_t` (nvml.h, R535 onwards: `NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0`,
//!   `NOT_STARTED 1`, `IN_PROGRESS 2`, `COMPLETED 3`), printed `Not Supported`, `Not Started`,
//!   `In Progress`, `Completed` (`N/A` where the query is not supported); the status is an
//!   `nvmlReturn_t` printed through `nvmlErrorString` (`Success`, `Insufficient Resources`, …),
//!   and nvml.h says it "must be checked only if state returns complete". So `Completed` with
//!   `Success` is a registered GPU, `Completed` with another status a registration that failed,
//!   `Not Started` and `In Progress` a GPU CUDA cannot use yet; `Not Supported` and `N/A` are a
//!   GPU without a fabric to join (a PCIe card, a single GPU of a VM), not judged.
//! - The Fabric Manager's own messages (`nv-fabricmanager`, closed source: the wording as the
//!   daemon prints it to the journal and its log, quoted in NVIDIA/gpu-operator#544 and
//!   NVIDIA/gpu-driver-container#735, the newer `doesn't … with the matching` in
//!   akash-network/website#632): `fabric manager NVIDIA GPU driver interface version A don't
//!   match with driver version B` (it refuses to run on another driver version, so the fabric
//!   is never set up); `request to query NVSwitch device information from NVSwitch driver
//!   failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]` (it found no NVSwitch:
//!   normal on a machine without one, where the service is not needed, so not judged);
//!   `Successfully configured all the available NVSwitches to route GPU NVLink traffic` and a
//!   `systemctl status` of the unit `Active: active (running)` (it runs); `fabric manager config
//!   file item: ITEM has an invalid value` (it rejects an item of its `fabricmanager.cfg` and
//!   exits before it touches an NVSwitch: siderolabs/extensions#511, where the daemon "keeps
//!   crashing" and its log "just repeats this one line" for `FABRIC_NODE_CONFIG_FILE`, then for
//!   `DATABASE_PATH` on a newer release, until siderolabs/extensions#536 gave it the paths its
//!   defaults expect; tinfoilsh/cvmimage#241, `LOG_FILE_NAME` pointing into a missing
//!   `/var/log`, the PID file never appearing). The items are the upper-case keys of
//!   `fabricmanager.cfg` (the Fabric Manager User Guide's configuration options: `LOG_LEVEL`,
//!   `LOG_FILE_NAME`, `FABRIC_MODE`, `DATABASE_PATH`, `FABRIC_NODE_CONFIG_FILE`, …).
//!
//! - systemd's own words when it starts or stops the unit: `systemctl start|restart` waits for
//!   the job and, where it fails, prints `Job for nvidia-fabricmanager.service failed because
//!   <explanation>.` (systemd `src/shared/bus-wait-for-jobs.c`, `check_wait_response`, whose
//!   table maps the job's result to `of unavailable resources or another system error`, `the
//!   service did not take the steps required by its unit configuration`, `a timeout was
//!   exceeded`, `the control process exited with error code`, `a fatal signal was delivered to
//!   the control process`, `a fatal signal was delivered causing the control process to dump
//!   core`, `the service failed to send watchdog ping`, `start of the service was attempted too
//!   often`; `Job for %s failed.` for another result), and the journal's `Stopping
//!   nvidia-fabricmanager.service` / the start script's `Stopped "Nvidia Fabric Manager"`
//!   (NVIDIA/nvtrust#128: an 8x H20 guest in protected-PCIe mode whose Fabric Manager had
//!   configured the NVSwitches, was stopped, and then failed to restart).
//!
//! The text is read in order: the Fabric Manager runs after it configured the NVSwitches or its
//! unit shows `active (running)`, and no longer after a later stop or failed start. A failed
//! start alone does not say whether the machine has NVSwitches at all (NVIDIA/gpu-operator#356,
//! a GeForce VM), so it is judged only beside the Fabric Manager's own word that it configured
//! NVSwitches on this machine (`start_failed` with `configured`).

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// One GPU's fabric registration as `nvidia-smi -q` printed it.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct GpuFabric {
    /// The GPU the section belongs to (`GPU 00000000:18:00.0` above it, the XML's `id`), where
    /// the text shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// `State` as printed (`Completed`, `In Progress`, `Not Started`, `Not Supported`, `N/A`).
    pub state: String,
    /// `Status` as printed (`Success`, `Insufficient Resources`, `N/A`), where shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `ready`, `not-ready` or `not-judged` (see the module's doc).
    pub verdict: &'static str,
}

/// The Fabric Manager refusing to run on a driver of another version.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct VersionMismatch {
    /// The Fabric Manager's driver interface version.
    pub fabric_manager: String,
    /// The loaded driver's version.
    pub driver: String,
    /// The line, trimmed.
    pub line: String,
}

/// The Fabric Manager rejecting an item of its configuration file.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct ConfigRejected {
    /// The `fabricmanager.cfg` key (`FABRIC_NODE_CONFIG_FILE`, `DATABASE_PATH`, …).
    pub item: String,
    /// The line, trimmed.
    pub line: String,
}

/// What a text says about the NVLink fabric and its Fabric Manager.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct FabricReport {
    /// Every `Fabric` section of `nvidia-smi -q` (text or XML), in order.
    pub gpus: Vec<GpuFabric>,
    /// The Fabric Manager's version-mismatch messages.
    pub version_mismatch: Vec<VersionMismatch>,
    /// The Fabric Manager's rejections of its configuration file (one per item, in order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_rejected: Vec<ConfigRejected>,
    /// The Fabric Manager found no NVSwitch (`NV_WARN_NOTHING_TO_DO`).
    pub nothing_to_do: bool,
    /// The Fabric Manager runs: it configured the NVSwitches, or its unit is active (running),
    /// and no later line says it stopped or failed to start.
    pub running: bool,
    /// The Fabric Manager said it configured the NVSwitches (`Successfully configured all the
    /// available NVSwitches`): the machine has them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub configured: bool,
    /// systemd's reason the unit's last start job failed (`the control process exited with error
    /// code`; `failed` where systemd gave none), where no later line says it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_failed: Option<String>,
}

impl FabricReport {
    /// Whether the text held anything of the kind.
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
            && self.version_mismatch.is_empty()
            && self.config_rejected.is_empty()
            && !self.nothing_to_do
            && !self.running
            && !self.configured
            && self.start_failed.is_none()
    }
}

/// The verdict on one GPU's `State` and `Status`, as nvml.h defines them.
pub fn verdict(state: &str, status: Option<&str>) -> &'static str {
    let s = state.trim().to_ascii_lowercase();
    match s.as_str() {
        "completed" => match status.map(|x| x.trim().to_ascii_lowercase()) {
            None => "ready",
            Some(st) if st == "success" || st == "n/a" || st.is_empty() => "ready",
            Some(_) => "not-ready",
        },
        "in progress" | "not started" => "not-ready",
        _ => "not-judged",
    }
}

// `GPU 00000000:18:00.0`, the header `nvidia-smi -q` prints above each GPU's sections
static GPU_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$")
        .expect("static regex")
});
static XML_FABRIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?s)<gpu id="([^"]{1,64})"|<fabric>\s*<state>([^<]{0,64})</state>\s*(?:<status>([^<]{0,64})</status>)?"#)
        .expect("static regex")
});
static MISMATCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)fabric manager NVIDIA GPU driver interface version ([0-9][0-9.]{0,20}[0-9]) do(?:n't|n’t|esn't|esn’t|es not|\s?not) match with (?:the )?driver version ([0-9][0-9.]{0,20}[0-9])")
        .expect("static regex")
});

// `fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value`: the item is
// an upper-case `fabricmanager.cfg` key
static CONFIG_INVALID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:fabric manager config file item):?\s+([A-Z][A-Z0-9_]{1,63}) (?i:has an invalid value)")
        .expect("static regex")
});

// systemd's `Job for UNIT failed because EXPLANATION.` / `Job for UNIT failed.` for the
// Fabric Manager's unit (see the module's doc)
static JOB_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bJob for nvidia-fabricmanager(?:\.service)? failed(?: because ([^\n]{1,120}?))?\.(?:\s|$)")
        .expect("static regex")
});

/// The unit being stopped: systemd's `Stopping nvidia-fabricmanager.service`, the unit's start
/// script's `Stopped "Nvidia Fabric Manager"`.
fn stopped_line(t: &str) -> bool {
    t.contains("Stopping nvidia-fabricmanager.service")
        || (t.contains("nvidia-fabricmanager-start.sh[")
            && t.contains("Stopped \"Nvidia Fabric Manager\""))
        || t.contains("nvidia-fabricmanager.service: Deactivated")
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// `Key   : value`, split at the first colon.
fn key_value(t: &str) -> Option<(&str, &str)> {
    let (k, v) = t.split_once(':')?;
    Some((k.trim(), v.trim()))
}

/// The `Fabric` sections of `nvidia-smi -q` text.
fn text_sections(text: &str, out: &mut Vec<GpuFabric>) {
    let mut gpu: Option<String> = None;
    let mut section: Option<(usize, GpuFabric)> = None;
    for raw in text.lines() {
        let l = raw.trim_end();
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some((ind, mut f)) = section.take() {
            if indent(l) > ind {
                if let Some((k, v)) = key_value(t) {
                    if k.eq_ignore_ascii_case("State") && f.state.is_empty() {
                        f.state = v.to_string();
                    } else if k.eq_ignore_ascii_case("Status") && f.status.is_none() {
                        f.status = Some(v.to_string());
                    }
                }
                section = Some((ind, f));
                continue;
            }
            finish(f, out);
        }
        if let Some(c) = GPU_HEADER.captures(t) {
            gpu = Some(c[1].to_string());
        } else if t == "Fabric" {
            section = Some((
                indent(l),
                GpuFabric {
                    gpu: gpu.clone(),
                    ..Default::default()
                },
            ));
        }
    }
    if let Some((_, f)) = section {
        finish(f, out);
    }
}

fn finish(mut f: GpuFabric, out: &mut Vec<GpuFabric>) {
    if f.state.is_empty() || out.len() >= super::MAX_ITEMS {
        return;
    }
    f.state = super::clip(&f.state, 64);
    f.status = f.status.map(|s| super::clip(&s, 64));
    f.verdict = verdict(&f.state, f.status.as_deref());
    out.push(f);
}

/// The `<fabric>` elements of `nvidia-smi -q -x`.
fn xml_sections(text: &str, out: &mut Vec<GpuFabric>) {
    if !text.contains("<fabric>") {
        return;
    }
    let mut gpu = None;
    for c in XML_FABRIC.captures_iter(text) {
        if let Some(id) = c.get(1) {
            gpu = Some(id.as_str().to_string());
        } else if let Some(state) = c.get(2) {
            finish(
                GpuFabric {
                    gpu: gpu.clone(),
                    state: state.as_str().trim().to_string(),
                    status: c.get(3).map(|s| s.as_str().trim().to_string()),
                    verdict: "",
                },
                out,
            );
        }
    }
}

/// Reads what `text` says about the fabric.
pub fn read(text: &str) -> FabricReport {
    let text = super::unquote(text);
    let mut r = FabricReport::default();
    text_sections(&text, &mut r.gpus);
    xml_sections(&text, &mut r.gpus);
    let (mut last_up, mut last_stop, mut job_failed) = (None, None, None);
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(c) = MISMATCH.captures(t)
            && r.version_mismatch.len() < super::MAX_ITEMS
        {
            r.version_mismatch.push(VersionMismatch {
                fabric_manager: c[1].to_string(),
                driver: c[2].to_string(),
                line: super::clip(t, super::MAX_TEXT),
            });
        }
        if let Some(c) = CONFIG_INVALID.captures(t)
            && !r.config_rejected.iter().any(|x| x.item == c[1])
            && r.config_rejected.len() < super::MAX_ITEMS
        {
            // the daemon repeats the line on every restart: one entry per item
            r.config_rejected.push(ConfigRejected {
                item: c[1].to_string(),
                line: super::clip(t, super::MAX_TEXT),
            });
        }
        if t.contains("NV_WARN_NOTHING_TO_DO") {
            r.nothing_to_do = true;
        }
        if t.contains("Successfully configured all the available NVSwitches") {
            r.configured = true;
            last_up = Some(i);
        }
        if stopped_line(t) {
            last_stop = Some(i);
        }
        if let Some(c) = JOB_FAILED.captures(t) {
            job_failed = Some(i);
            r.start_failed = Some(c.get(1).map_or("failed".to_string(), |m| {
                super::clip(m.as_str(), super::MAX_TEXT)
            }));
        }
    }
    // a `systemctl status` that shows the unit running is the state when it was run; a journal
    // is history, so a job that failed is not undone by an older `configured` line printed
    // after it (the failure, then `journalctl -xeu` to see why)
    let active = status_active_at(&text);
    if let (Some(a), Some(j)) = (active, job_failed)
        && a > j
    {
        r.start_failed = None;
    }
    let up = last_up.max(active);
    r.running = r.start_failed.is_none() && up.is_some() && up > last_stop;
    r
}

/// `systemctl status nvidia-fabricmanager`: the unit's header line, then `Active: active
/// (running)` before the next unit's header.
fn status_active(text: &str) -> bool {
    status_active_at(text).is_some()
}

/// The line (its index) of the last `Active: active (running)` of the Fabric Manager's unit.
fn status_active_at(text: &str) -> Option<usize> {
    let mut in_unit = false;
    let mut at = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim().trim_start_matches(['●', '×', '○', '*']).trim();
        if t.starts_with("nvidia-fabricmanager.service - ") {
            in_unit = true;
        } else if t.ends_with(".service") && t.contains(" - ") {
            in_unit = false;
        } else if in_unit && t.starts_with("Active: active (running)") {
            at = Some(i);
        }
    }
    at
}

/// A line only the Fabric Manager (or its unit) prints.
fn fm_line(t: &str) -> bool {
    MISMATCH.is_match(t)
        || CONFIG_INVALID.is_match(t)
        || t.contains("nv-fabricmanager[")
        || t.contains("nvidia-fabricmanager")
        || t.contains("NV_WARN_NOTHING_TO_DO")
}

/// Whether the text is made of `Fabric` sections alone (`nvidia-smi -q | grep -A 3 Fabric`, a
/// section copied out of a longer `-q`): every line is a section header, one of its fields, a
/// GPU header, a prompt or grep's `--`, and a `State` is among them. A whole `-q` is the `-q`
/// kind's.
fn fabric_sections_only(head: &str) -> bool {
    let mut states = 0;
    let mut in_section: Option<usize> = None;
    for raw in head.lines() {
        let l = raw.trim_end();
        let t = l.trim();
        if t.is_empty() || t == "--" || t.starts_with('$') || t.starts_with('#') {
            continue;
        }
        if let Some(ind) = in_section {
            // the section's fields, and its `Health` subsection's header
            if indent(l) > ind && (key_value(t).is_some() || t == "Health") {
                if key_value(t).is_some_and(|(k, _)| k.eq_ignore_ascii_case("State")) {
                    states += 1;
                }
                continue;
            }
            in_section = None;
        }
        if t == "Fabric" {
            in_section = Some(indent(l));
        } else if !GPU_HEADER.is_match(t) {
            return false;
        }
    }
    states > 0
}

/// Whether most of the text's lines are the Fabric Manager's (its journal, its status).
fn fm_log(head: &str) -> bool {
    let lines: Vec<&str> = head
        .lines()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let fm = lines.iter().filter(|t| fm_line(t)).count();
    fm > 0 && (fm * 2 >= lines.len() || status_active(head))
}

pub struct FabricManagerKind;

impl super::EvidenceKind for FabricManagerKind {
    fn name(&self) -> &'static str {
        "fabric-manager"
    }
    fn doc(&self) -> &'static str {
        "the NVLink fabric of an NVSwitch system: nvidia-smi -q's Fabric sections (State, Status), the Fabric Manager's journal or status"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi -q | grep -A 3 Fabric; journalctl -u nvidia-fabricmanager"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("gpus", "gpu, state, status, verdict per Fabric section"),
            (
                "version_mismatch",
                "fabric_manager, driver, line: the Fabric Manager refusing another driver version",
            ),
            (
                "config_rejected",
                "item, line: the Fabric Manager rejecting an item of its fabricmanager.cfg (it exits)",
            ),
            ("nothing_to_do", "the Fabric Manager found no NVSwitch"),
            (
                "running",
                "the Fabric Manager configured the NVSwitches or its unit runs, and did not stop or fail to start since",
            ),
            (
                "configured",
                "the Fabric Manager said it configured the NVSwitches (the machine has them)",
            ),
            (
                "start_failed",
                "systemd's reason the unit's last start failed (`Job for nvidia-fabricmanager.service failed because …`)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["fabric.state"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        fabric_sections_only(s.unquoted) || fm_log(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let r = read(text);
        if r.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no nvidia-smi -q Fabric section with a State, nor a Fabric Manager message, in the text",
            ));
        }
        super::to_value(&r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::EvidenceKind;

    fn detect(t: &str) -> bool {
        FabricManagerKind.detect(&crate::evidence::Sniff {
            head: t,
            unquoted: t,
            text: t,
            late: &crate::evidence::scan::Late::new(t),
        })
    }

    #[test]
    fn fabric_state_and_status_per_gpu() {
        // github.com/NVIDIA/gpu-operator/issues/2511: a GPU whose registration never completes
        let stuck = "    Fabric\n        State                                          : In Progress\n        Status                                         : N/A\n        CliqueId                                       : N/A\n        ClusterUUID                                    : N/A\n        Health\n            Summary                                    : N/A\n            Bandwidth                                  : N/A\n";
        assert!(detect(stuck));
        let r = read(stuck);
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpus[0].state, "In Progress");
        assert_eq!(r.gpus[0].status.as_deref(), Some("N/A"));
        assert_eq!(r.gpus[0].verdict, "not-ready");
        // github.com/Azure/azhpc-images/pull/506: registration completed with an error status
        let failed = "Fabric\n    State                             : Completed\n    Status                            : Insufficient Resources\n    CliqueId                          : 0\n    ClusterUUID                       : 00000000-0000-0000-0000-000000000000\n";
        assert_eq!(read(failed).gpus[0].verdict, "not-ready");
        // github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/626: a registered GB200 GPU
        // (its health summary is not the registration)
        let ok = "# nvidia-smi -q | grep -E -C3 \"ClusterUUID|CliqueId\"\n    Fabric\n        State                             : Completed\n        Status                            : Success\n        CliqueId                          : 2\n        ClusterUUID                       : dc6e40c4-d722-4357-9ba6-5291dd461278\n        Health\n            Summary                       : Unhealthy\n            Bandwidth                     : Full\n--\n";
        assert!(detect(ok));
        let r = read(ok);
        assert_eq!(r.gpus[0].verdict, "ready");
        assert_eq!(r.gpus[0].status.as_deref(), Some("Success"));
    }

    #[test]
    fn a_whole_q_keeps_its_gpus_and_not_supported_is_not_judged() {
        // the recorded H200 of this project (a VM's single GPU): State N/A
        let h200 = include_str!("../../tests/fixtures/evidence/nvidia_smi/h200-q.txt");
        assert!(!detect(h200), "a whole -q is the -q kind's");
        let r = read(h200);
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpus[0].verdict, "not-judged");
        assert!(r.gpus[0].gpu.is_some());
        // its XML form
        let x = include_str!("../../tests/fixtures/evidence/nvidia_smi/h200-q-x.xml");
        let r = read(x);
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpus[0].state, "N/A");
        assert_eq!(r.gpus[0].verdict, "not-judged");
        // github.com/leptonai/gpud testdata (corpus h35): eight H100s, every one Completed/Success
        let q = include_str!(
            "../../tests/fixtures/corpus/h35_smiq_gpud_h100x8_53516108_power_brake_86mhz.txt"
        );
        let r = read(q);
        assert!(!r.gpus.is_empty());
        assert!(
            r.gpus
                .iter()
                .all(|g| g.verdict == "ready" && g.gpu.is_some())
        );
        assert_eq!(verdict("Not Supported", Some("Success")), "not-judged");
        assert_eq!(verdict("Not Started", None), "not-ready");
    }

    #[test]
    fn the_fabric_managers_messages() {
        // github.com/NVIDIA/gpu-operator/issues/544 (journal) and akash-network/website#632
        // (the newer wording)
        let old = "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver version 530.41.03. Please update with matching NVIDIA driver package.\n";
        assert!(detect(old));
        let r = read(old);
        assert_eq!(r.version_mismatch.len(), 1);
        assert_eq!(r.version_mismatch[0].fabric_manager, "530.30.02");
        assert_eq!(r.version_mismatch[0].driver, "530.41.03");
        let new = "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 doesn't match with driver version 550.120. Please update with the matching NVIDIA driver package.\n";
        let r = read(new);
        assert_eq!(r.version_mismatch[0].driver, "550.120");
        // github.com/NVIDIA/gpu-operator/issues/610: no NVSwitch, nothing to manage
        let none = "11月 15 14:15:47 leon-NF5468M6 nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n";
        let r = read(none);
        assert!(r.nothing_to_do && r.version_mismatch.is_empty() && !r.running);
        // github.com/bottlerocket-os/bottlerocket/pull/3873: the unit running on a p4d
        let up = "nvidia-fabricmanager.service - NVIDIA fabric manager service\n     Loaded: loaded (/usr/lib/systemd/system/nvidia-fabricmanager.service; enabled; preset: enabled)\n     Active: active (running) since Thu 2024-05-16 23:22:02 UTC; 7s ago\n   Main PID: 128549 (nv-fabricmanage)\n";
        assert!(detect(up));
        assert!(read(up).running);
        // github.com/NVIDIA/nvtrust/issues/128: the Fabric Manager's own word that it configured
        let conf = "Jan 05 14:45:28 TENCENT64 nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support will be enabled once the GPUs are successfully registered with the NVLink fabric.\n";
        assert!(read(conf).running);
        // prose that names the service is not its log
        assert!(!detect(
            "Please install nvidia-fabricmanager first, then rerun the job on the node with the right driver.\nThe job runs on eight GPUs.\nIt fails.\n"
        ));
        assert!(read("the fabric manager is not running").is_empty());
    }

    #[test]
    fn a_failed_start_and_a_stop_are_read_in_order() {
        // github.com/NVIDIA/nvtrust/issues/128 (h139): the restart fails, then the journal shows
        // the earlier run configuring the NVSwitches and being stopped
        let t = "[root@TENCENT64 ~]# systemctl restart nvidia-fabricmanager.service \nJob for nvidia-fabricmanager.service failed because the control process exited with error code.\nSee \"systemctl status nvidia-fabricmanager.service\" and \"journalctl -xeu nvidia-fabricmanager.service\" for details.\n[root@TENCENT64 ~]# journalctl -xeu nvidia-fabricmanager.service --no-pager\nJan 05 14:44:41 TENCENT64 nvidia-fabricmanager-start.sh[1049]: Detected Pre-NVL5 system\nJan 05 14:45:28 TENCENT64 nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support will be enabled once the GPUs are successfully registered with the NVLink fabric.\nJan 05 14:45:28 TENCENT64 systemd[1]: Started nvidia-fabricmanager.service - NVIDIA fabric manager service.\nJan 05 15:32:16 TENCENT64 systemd[1]: Stopping nvidia-fabricmanager.service - NVIDIA fabric manager service...\nJan 05 15:32:16 TENCENT64 nvidia-fabricmanager-start.sh[20411]: Stopped \"Nvidia Fabric Manager\"\n";
        assert!(detect(t));
        let r = read(t);
        assert!(r.configured);
        assert!(!r.running);
        assert_eq!(
            r.start_failed.as_deref(),
            Some("the control process exited with error code")
        );
        // the journal alone: configured, then stopped: not running, no failed start
        let j = "Jan 05 14:45:28 h nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route GPU NVLink traffic.\nJan 05 15:32:16 h systemd[1]: Stopping nvidia-fabricmanager.service - NVIDIA fabric manager service...\n";
        let r = read(j);
        assert!(r.configured && !r.running && r.start_failed.is_none());
        // a status run after the failure that shows the unit running undoes it
        let fixed = "Job for nvidia-fabricmanager.service failed because a timeout was exceeded.\n● nvidia-fabricmanager.service - NVIDIA fabric manager service\n     Active: active (running) since Mon 2026-01-05 16:00:00 CST; 1min ago\n";
        let r = read(fixed);
        assert!(r.start_failed.is_none() && r.running);
        // systemd's reasonless form
        let r = read("Job for nvidia-fabricmanager.service failed.\n");
        assert_eq!(r.start_failed.as_deref(), Some("failed"));
        assert!(!r.configured);
        // another unit's failure, and prose, are not the Fabric Manager's
        assert!(read("Job for docker.service failed because the control process exited with error code.\n").start_failed.is_none());
        assert!(
            read("the nvidia-fabricmanager job failed yesterday")
                .start_failed
                .is_none()
        );
    }

    #[test]
    fn the_fabric_manager_rejecting_its_configuration() {
        // github.com/siderolabs/extensions/issues/511 (corpus h133): the extension's log, its
        // node address left as the poster's placeholder
        let t = include_str!(
            "../../tests/fixtures/corpus/h133_fmlog_siderolabs511_fabric_node_config_invalid.txt"
        );
        assert!(detect(t));
        let r = read(t);
        assert_eq!(r.config_rejected.len(), 1);
        assert_eq!(r.config_rejected[0].item, "FABRIC_NODE_CONFIG_FILE");
        assert!(!r.running && r.version_mismatch.is_empty());
        // the daemon repeats the line on every restart, and a newer release rejected
        // DATABASE_PATH instead (the same issue): one entry per item
        let repeated = "10.0.0.5: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value\n10.0.0.5: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value\nNov 04 10:01:02 node nv-fabricmanager[812]: fabric manager config file item: DATABASE_PATH has an invalid value\n";
        let r = read(repeated);
        let items: Vec<&str> = r.config_rejected.iter().map(|c| c.item.as_str()).collect();
        assert_eq!(items, ["FABRIC_NODE_CONFIG_FILE", "DATABASE_PATH"]);
        // the posters' prose about the same error is not the daemon's line
        for prose in [
            "It exits, with an error compalining that `FABRIC_NODE_CONFIG_FILE` is invalid.",
            "instead saying that the \"DATABASE_PATH\" variable had an invalid value.",
            "the fabric manager config file has an invalid value somewhere",
        ] {
            assert!(read(prose).config_rejected.is_empty(), "{prose}");
            assert!(!detect(prose), "{prose}");
        }
    }
}
