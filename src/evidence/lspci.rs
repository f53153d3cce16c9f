//! `lspci -vv` (and `-vvv`, `-nn`) device blocks, for the PCIe link of each NVIDIA GPU.
//! Written from pciutils' own source, github.com/pciutils/pciutils at v3.14.0-22 (commit
//! 0f5b941), `ls-caps.c` and `lspci.c`:
//!
//! - a block opens with the device line `[dddd:]bb:dd.f <class>[ [cccc]]: <vendor device>[
//!   [vvvv:dddd]][ (rev xx)][ (prog-if …)]` at column 0 (`show_device`), its lines below are
//!   tab-indented;
//! - `Capabilities: [xx] Express (v2) <type>` names the port type (`Endpoint`, `Legacy
//!   Endpoint`, `Root Port`, `Upstream Port`, `Downstream Port`, …: `cap_express`);
//! - `LnkCap:\tPort #N, Speed S, Width xW, ASPM …` (`cap_express_link`), where S is
//!   `link_speed()`: 2.5GT/s, 5GT/s, 8GT/s, 16GT/s, 32GT/s, 64GT/s, 128GT/s or `unknown`;
//! - `LnkSta:\tSpeed S<mark>, Width xW<mark>` with `<mark>` from `link_compare()`: since
//!   v3.8 (commit 9f76812, 2022) ` (downgraded)`, ` (overdriven)` or nothing, and nothing for
//!   root and downstream ports; v3.6-3.7 printed ` (ok)`, ` (downgraded)` or ` (strange)` on
//!   every port; older versions nothing at all. So the reader compares LnkSta with LnkCap
//!   itself and uses the mark only where LnkCap is not in the paste;
//! - `LnkCap2: Supported Link Speeds: 2.5-16GT/s, …` and `LnkCtl2: Target Link Speed: 16GT/s,
//!   …` (`cap_express_link2`); `Kernel driver in use: nvidia` (lspci.c).
//!
//! A paste that starts below a device's header (an excerpt of its Express capability) is one
//! device whose name the paste does not show, unless an `lspci -s SLOT` command line above it
//! selected the device (`-s [[dom:]bus:]dev.fn`, lspci.c's filter): then it is that slot's, and
//! takes the name plain lspci gave the slot earlier in the same paste. Plain `lspci` (`lspci |
//! grep -i nvidia`: only `show_device`'s one-line form, no capabilities) is read too, as
//! devices whose link the paste does not show, a NIC-only listing included (its classes are
//! pci.ids names): a paste with no NVIDIA GPU gives the GPU probes nothing.
//!
//! A device that no longer answers configuration reads (read from pciutils' `lspci.c` at
//! 001b9ac): the class and the vendor and device names come from what the kernel enumerated
//! (`p->device_class`, the ids), but `show_terse` prints ` (rev %02x)` from the configuration
//! space's revision byte and `show_verbose` masks its header-type byte with 0x7f and prints
//! `\t!!! Unknown header type %02x` for a type it does not know. A read of a function that has
//! dropped off the link completes as all ones, so such a device shows as `(rev ff)` on its
//! header line and, under `-v`, `!!! Unknown header type 7f`: `config_unreadable`. The kernel
//! log's fallen-off-the-bus reading takes an NVIDIA GPU in that state beside NVIDIA GPUs that
//! answer ([`gpus_off_the_bus`]); a lone one is not judged, since pciutils names a switchable
//! (laptop) GPU asleep in D3cold as the common case of an all-ones configuration space (pciutils
//! 72cabfb, "lspci: Show information also for devices with unknown header type"), and such a
//! machine has one discrete GPU.

use serde::Serialize;

use crate::vocab::nvml::{Field, GpuReading, LspciLink, NvmlReading};

/// One device's link as `lspci -vv` printed it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LspciDevice {
    /// `da:00.0`, `0000:17:00.0`; `None` when the paste starts below the header.
    pub slot: Option<String>,
    /// `3D controller`, `VGA compatible controller`, …
    pub class: Option<String>,
    /// `NVIDIA Corporation GA100 [A100 SXM4 40GB] [10de:20b0] (rev a1)`
    pub description: Option<String>,
    /// The vendor is NVIDIA (name or `10de:` id); `None` without a header.
    pub nvidia: Option<bool>,
    /// A display-class device (VGA, 3D, display controller): a GPU rather than one of its
    /// audio or bridge functions.
    pub gpu: Option<bool>,
    /// `Endpoint`, `Legacy Endpoint`, `Root Port`, `Downstream Port`, …
    pub port_type: Option<String>,
    pub cap_port: Option<u32>,
    /// GT/s
    pub cap_speed_gts: Option<f64>,
    pub cap_width: Option<u32>,
    pub sta_speed_gts: Option<f64>,
    pub sta_width: Option<u32>,
    /// What lspci appended to LnkSta's speed and width (`downgraded`, `ok`, `overdriven`,
    /// `strange`), where it did.
    pub sta_speed_mark: Option<String>,
    pub sta_width_mark: Option<String>,
    /// Highest speed of `LnkCap2: Supported Link Speeds`, GT/s.
    pub cap2_max_gts: Option<f64>,
    /// `LnkCtl2: Target Link Speed`, GT/s.
    pub target_speed_gts: Option<f64>,
    pub kernel_driver: Option<String>,
    /// LnkSta below LnkCap (or marked `(downgraded)` where LnkCap is not shown).
    pub speed_downgraded: bool,
    pub width_downgraded: bool,
    /// The configuration space reads as all ones (`(rev ff)`, `!!! Unknown header type 7f`):
    /// the function no longer answers on the bus.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub config_unreadable: bool,
}

impl LspciDevice {
    /// What the messages call it: `da:00.0 3D controller: NVIDIA …` or the paste's device.
    pub fn label(&self) -> String {
        match (&self.slot, &self.class, &self.description) {
            (Some(s), Some(c), Some(d)) => super::clip(&format!("{s} {c}: {d}"), 160),
            (Some(s), _, _) => s.clone(),
            _ => "the pasted device (its lspci header is not in the paste)".into(),
        }
    }
    /// A device the PCIe rule judges: an NVIDIA GPU, or the one device of a paste that starts
    /// below its header.
    pub fn judged(&self) -> bool {
        (self.nvidia != Some(false) && self.gpu != Some(false))
            && (self.sta_speed_gts.is_some() || self.sta_width.is_some())
    }
}

/// `2.5GT/s` -> 2.5; `unknown` -> None.
fn gts(s: &str) -> Option<f64> {
    let n: f64 = s.trim().strip_suffix("GT/s")?.trim().parse().ok()?;
    (n.is_finite() && n > 0.0).then_some(n)
}

/// PCIe generation of a transfer rate.
pub fn generation(gts: f64) -> Option<u32> {
    [2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0]
        .iter()
        .position(|g| (g - gts).abs() < 0.01)
        .map(|i| i as u32 + 1)
}

/// `[dddd:]bb:dd.f` at the start of a line.
fn slot_of(line: &str) -> Option<(&str, &str)> {
    let (slot, rest) = line.split_once(' ')?;
    let parts: Vec<&str> = slot.split(':').collect();
    let ok = match parts.as_slice() {
        [b, df] | [_, b, df] => {
            b.len() == 2
                && b.chars().all(|c| c.is_ascii_hexdigit())
                && df.split_once('.').is_some_and(|(d, f)| {
                    d.len() == 2 && d.chars().all(|c| c.is_ascii_hexdigit()) && f.len() == 1
                })
        }
        _ => false,
    };
    (ok && (parts.len() == 2 || parts[0].len() == 4)).then_some((slot, rest))
}

/// A device header `17:00.0 3D controller [0302]: NVIDIA Corporation …`.
fn header(line: &str) -> Option<LspciDevice> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let (slot, rest) = slot_of(line.trim_end())?;
    let (class, desc) = rest.split_once(": ")?;
    let class = class
        .trim()
        .trim_end_matches(|c: char| c == ']' || c.is_ascii_hexdigit())
        .trim_end_matches('[')
        .trim()
        .to_string();
    let lower = desc.to_ascii_lowercase();
    let nvidia = lower.starts_with("nvidia") || lower.contains("[10de:");
    let cl = class.to_ascii_lowercase();
    let gpu = cl.contains("vga") || cl.contains("3d controller") || cl.contains("display");
    Some(LspciDevice {
        slot: Some(slot.to_string()),
        class: Some(super::clip(&class, 80)),
        description: Some(super::clip(desc.trim(), 160)),
        nvidia: Some(nvidia),
        gpu: Some(gpu),
        // `show_terse`'s ` (rev %02x)` of an all-ones revision byte
        config_unreadable: lower.contains(" (rev ff)"),
        ..Default::default()
    })
}

/// `Speed 2.5GT/s (downgraded)` -> (2.5, Some("downgraded")).
fn speed_part(s: &str) -> (Option<f64>, Option<String>) {
    let s = s.trim().trim_start_matches("Speed").trim();
    let (v, mark) = match s.split_once('(') {
        Some((v, m)) => (v, Some(m.trim_end_matches(')').trim().to_string())),
        None => (s, None),
    };
    (gts(v), mark)
}

/// `Width x8 (downgraded)` -> (8, Some("downgraded")).
fn width_part(s: &str) -> (Option<u32>, Option<String>) {
    let s = s.trim().trim_start_matches("Width").trim();
    let (v, mark) = match s.split_once('(') {
        Some((v, m)) => (v, Some(m.trim_end_matches(')').trim().to_string())),
        None => (s, None),
    };
    (v.trim().trim_start_matches('x').parse().ok(), mark)
}

/// A line's `Key:` and value, with lspci's tab or space after the colon.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.trim_start().strip_prefix(key).map(str::trim_start)
}

/// A class as `show_device` prints it: `pci_lookup_name(PCI_LOOKUP_CLASS)`, a pci.ids class or
/// subclass name (`Ethernet controller`, `PCI bridge`, `Audio device`, `Processing
/// accelerators`, `IOMMU`, …), or `Class %04x` where pci.ids has none. Their last words are
/// few; a `12:34.5 INFO: …` log line's are not.
fn pci_class_name(class: &str) -> bool {
    let c = class.trim();
    if let Some(code) = c.strip_prefix("Class ") {
        return code.len() == 4 && code.chars().all(|ch| ch.is_ascii_hexdigit());
    }
    let last = c.rsplit(' ').next().unwrap_or("").to_ascii_lowercase();
    matches!(
        last.as_str(),
        "controller"
            | "device"
            | "interface"
            | "bridge"
            | "memory"
            | "peripheral"
            | "iommu"
            | "station"
            | "processor"
            | "smbus"
            | "accelerators"
            | "instrumentation"
            | "coprocessor"
            | "class"
    )
}

/// Plain `lspci` (no `-v`), usually through `grep`: nothing but device lines
/// (`show_device`'s one-line form, `lspci.c`) and the command that printed them. Its devices
/// have no link lines, so the PCIe rule cannot judge them. A listing with no NVIDIA device
/// (`lspci | grep Mellanox`) is read too, where every class is one pciutils prints: its
/// devices are not GPUs, so it gives the GPU probes nothing.
fn plain_listing(text: &str) -> bool {
    let mut nvidia = false;
    let mut classes = true;
    let mut any = false;
    for l in text.lines().take(2000) {
        let t = l.trim().trim_matches('`').trim();
        if t.is_empty()
            || t.contains("lspci")
            || is_prompt_only(t)
            || t == "--"
            || tree_line(t)
            || report_note(t)
            || (any && terse_detail(t))
        {
            continue;
        }
        match header(t) {
            Some(d) => {
                any = true;
                nvidia |= d.nvidia == Some(true);
                classes &= d.class.as_deref().is_some_and(pci_class_name);
            }
            None => return false,
        }
    }
    nvidia || (any && classes)
}

/// A line `show_terse` (`lspci.c`) prints under a device line when `-k` is given (`lspci -k`,
/// `-nnk`): `\tDeviceName: …`, `\tSubsystem: …`, then `show_kernel`'s (`ls-kernel.c`)
/// `\tKernel driver in use: …` and `\tKernel modules: …`. They name no link, so a listing
/// made of device lines and these is still one whose links the paste does not show. Taken
/// below a device line only, with its tab, spaces, or nothing (an unfenced GitHub comment
/// drops the tab).
fn terse_detail(t: &str) -> bool {
    [
        "DeviceName: ",
        "Subsystem: ",
        "Kernel driver in use: ",
        "Kernel modules: ",
    ]
    .iter()
    .any(|k| t.starts_with(k))
}

/// A line of `lspci -t` without `-v` (pciutils `ls-tree.c`, `show_tree_bridge` /
/// `show_tree_bus` / `print_it`): the first line opens with `-[dddd:bb]-`, the rest with the
/// `|` and spaces `print_it` leaves of the lines above, then `+-`, `\-` or `--` and the
/// `dd.f` / `-[bb]-` / `-[bb-bb]-` parts. Nothing but those characters: a tree with `-v`
/// (device names after each slot) is not taken for one.
fn tree_line(t: &str) -> bool {
    t.starts_with(['-', '+', '\\', '|'])
        && t.contains(['-', '|'])
        && t.chars()
            .all(|c| c.is_ascii_hexdigit() || " .:-+|\\[]".contains(c))
}

/// The first line `lspci -t` prints: `show_forest` (pciutils `ls-tree.c`, read at 0f5b941)
/// starts each host bridge with `-` and `show_tree_bridge` then names its root bus as
/// `[%04x:%02x]-` (one root bus) or `+-[%04x:%02x]-` (the first of several): `-[0000:00]-…` or
/// `-+-[0000:00]-+-…`.
fn tree_root(t: &str) -> bool {
    let Some(rest) = t.strip_prefix("-[").or_else(|| t.strip_prefix("-+-[")) else {
        return false;
    };
    let b = rest.as_bytes();
    b.len() > 8
        && b[..4].iter().all(u8::is_ascii_hexdigit)
        && b[4] == b':'
        && b[5..7].iter().all(u8::is_ascii_hexdigit)
        && b[7] == b']'
        && b[8] == b'-'
}

/// The number of tree lines when the whole paste is `lspci -t` without `-v` (the command line,
/// a bare prompt or blank lines aside): its first tree line a root (`tree_root`), every other
/// line a `tree_line`, at least two of them. Such a tree names slots and buses only: the
/// paste shows which devices sit behind which bridge, never a link's speed or width.
pub fn tree_only(text: &str) -> Option<usize> {
    let mut n = 0usize;
    for l in text.lines().take(2000) {
        let t = l.trim().trim_matches('`').trim();
        if t.is_empty() || t.contains("lspci") || is_prompt_only(t) {
            continue;
        }
        if n == 0 && !tree_root(t) {
            return None;
        }
        if !tree_line(t) {
            return None;
        }
        n += 1;
    }
    (n >= 2).then_some(n)
}

/// A message a report script prints in place of lspci output, one whole line in parentheses:
/// club-3090's `scripts/report.sh` (github.com/noonghunna/club-3090, its lspci section's
/// `dump_func`) greps `lspci -vvv -s SLOT` for the link and ACS lines and prints `  (no
/// matching LnkCap/LnkSta/ACSCap/ACSCtl lines)` when the grep finds none (lspci without root
/// shows no capabilities), `  (could not resolve upstream bridge for …)` and `  (no NVIDIA
/// functions found)`. lspci itself never prints a line that opens with `(`.
fn report_note(t: &str) -> bool {
    t.starts_with('(') && t.ends_with(')')
}

/// A shell prompt with no command after it (`[root@node75 ~]# `).
fn is_prompt_only(t: &str) -> bool {
    let bare = (t.ends_with('#') || t.ends_with('$')) && !t.contains(' ');
    let bracketed = t.starts_with('[') && (t.ends_with("]#") || t.ends_with("]$"));
    bare || bracketed
}

/// The device an `lspci … -s [[dom:]bus:]dev.fn …` command line selects (pciutils' `-s`
/// filter, `lspci.c`): `-s 17:00.0`, `-s17:00.0`, or flags ending in `s` (`-vvvs c9:00.0`).
fn selected_slot(line: &str) -> Option<String> {
    let l = line.trim().trim_matches('`');
    let i = l.find("lspci")?;
    let words: Vec<&str> = l[i..].split_whitespace().collect();
    for (k, w) in words.iter().enumerate() {
        if *w == "|" {
            break;
        }
        let Some(flags) = w.strip_prefix('-') else {
            continue;
        };
        if flags.starts_with('-') {
            continue;
        }
        let arg = if let Some(rest) = flags.strip_prefix('s') {
            if rest.is_empty() {
                words.get(k + 1).copied()
            } else {
                Some(rest)
            }
        } else if flags.ends_with('s') && flags.chars().all(|c| c.is_ascii_alphabetic()) {
            words.get(k + 1).copied()
        } else {
            None
        };
        if let Some(a) = arg
            && slot_of(&format!("{a} x")).is_some()
        {
            return Some(a.to_string());
        }
    }
    None
}

/// Lines of `lspci -vv` link output in the text: a LnkCap or LnkSta line in pciutils' words.
/// A device line with a `Capabilities:` line under it is `-v` output too: `[xx] …` as root,
/// and `<access denied>` for a user who may not read the configuration space past its
/// header (pciutils `ls-caps.c`, `show_caps`, read at 0089d48: `printf("\tCapabilities: ")`
/// then `puts("<access denied>")` where `config_fetch` fails), which is how `lspci -vv` run
/// without sudo prints every device.
pub fn looks_like_lspci(text: &str) -> bool {
    if plain_listing(text) || tree_only(text).is_some() {
        return true;
    }
    text.lines().take(20_000).any(|l| {
        let l = l.trim_start().trim_start_matches('>').trim_start();
        (l.starts_with("LnkSta:") || l.starts_with("LnkCap:"))
            && l.contains("Speed ")
            && l.contains("Width x")
    }) || (text.lines().take(20_000).any(|l| header(l).is_some())
        && text.lines().take(20_000).any(|l| {
            let l = l.trim_start();
            l.starts_with("Capabilities: [") || l == "Capabilities: <access denied>"
        }))
}

/// Reads every device block; devices without link lines are kept (their link is unknown).
pub fn parse_lspci(text: &str) -> Result<Vec<LspciDevice>, super::ParseError> {
    let text = super::unquote(text);
    let mut out: Vec<LspciDevice> = Vec::new();
    let mut cur: Option<LspciDevice> = None;
    // the device an `lspci -s SLOT` command line above a header-less excerpt selected
    let mut selected: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim_end().trim_start_matches('`');
        if let Some(h) = header(line) {
            if let Some(d) = cur.take()
                && out.len() < super::MAX_ITEMS
            {
                out.push(d);
            }
            cur = Some(h);
            selected = None;
            continue;
        }
        let t = line.trim_start();
        if t.contains("lspci") && !t.starts_with(['L', 'C', 'K']) {
            // a new command: what follows is its output, not the device above
            if let Some(d) = cur.take()
                && out.len() < super::MAX_ITEMS
            {
                out.push(d);
            }
            selected = selected_slot(t);
            continue;
        }
        let is_link = t.starts_with("LnkCap:")
            || t.starts_with("LnkSta:")
            || t.starts_with("LnkCap2:")
            || t.starts_with("LnkCtl2:");
        if cur.is_none() && !is_link {
            continue;
        }
        if cur.is_none()
            && let Some(sel) = selected.take()
        {
            // `lspci -s SLOT -vv | grep …`: the excerpt is that device's, named where the same
            // paste lists it (plain lspci above), else by its slot alone
            let key = bus_key(&sel);
            cur = Some(
                match out.iter().position(|d| {
                    d.slot.as_deref().map(bus_key) == Some(key.clone())
                        && d.sta_speed_gts.is_none()
                        && d.sta_width.is_none()
                        && d.cap_width.is_none()
                }) {
                    Some(i) => out.remove(i),
                    None => LspciDevice {
                        slot: Some(sel),
                        ..Default::default()
                    },
                },
            );
        }
        // a paste starting below its header: one device without a name
        let d = cur.get_or_insert_with(LspciDevice::default);
        if t.starts_with("!!! Unknown header type 7f") {
            // `show_verbose`'s header type of an all-ones configuration space
            d.config_unreadable = true;
        } else if let Some(v) = field(t, "Capabilities:")
            && let Some(i) = v.find("Express (")
            && let Some((_, ty)) = v[i..].split_once(") ")
        {
            d.port_type = Some(super::clip(ty.split(',').next().unwrap_or("").trim(), 40));
        } else if let Some(v) = field(t, "LnkCap:") {
            for part in v.split(',') {
                let p = part.trim();
                if let Some(n) = p.strip_prefix("Port #") {
                    d.cap_port = n.trim().parse().ok();
                } else if p.starts_with("Speed") {
                    d.cap_speed_gts = speed_part(p).0;
                } else if p.starts_with("Width") {
                    d.cap_width = width_part(p).0;
                }
            }
        } else if let Some(v) = field(t, "LnkSta:") {
            // old lspci printed the flags on the same line: `…, Width x16, TrErr- …`
            let mut parts = v.split(',');
            if let Some(p) = parts.next() {
                let (s, m) = speed_part(p);
                d.sta_speed_gts = s;
                d.sta_speed_mark = m;
            }
            if let Some(p) = parts.next() {
                let (w, m) = width_part(p);
                d.sta_width = w;
                d.sta_width_mark = m;
            }
        } else if let Some(v) = field(t, "LnkCap2:") {
            // `Supported Link Speeds: 2.5-16GT/s, Crosslink- …`
            if let Some(sp) = v
                .strip_prefix("Supported Link Speeds:")
                .and_then(|s| s.split(',').next())
            {
                let top = sp.trim().rsplit('-').next().unwrap_or("");
                d.cap2_max_gts = gts(top);
            }
        } else if let Some(v) = field(t, "LnkCtl2:") {
            if let Some(sp) = v
                .strip_prefix("Target Link Speed:")
                .and_then(|s| s.split(',').next())
            {
                d.target_speed_gts = gts(sp);
            }
        } else if let Some(v) = field(t, "Kernel driver in use:") {
            d.kernel_driver = Some(super::clip(v.trim(), 40));
        }
    }
    if let Some(d) = cur.take()
        && out.len() < super::MAX_ITEMS
    {
        out.push(d);
    }
    for d in &mut out {
        d.speed_downgraded = match (d.sta_speed_gts, d.cap_speed_gts) {
            (Some(s), Some(c)) => s + 0.01 < c,
            _ => d.sta_speed_mark.as_deref() == Some("downgraded"),
        };
        d.width_downgraded = match (d.sta_width, d.cap_width) {
            (Some(s), Some(c)) => s < c,
            _ => d.sta_width_mark.as_deref() == Some("downgraded"),
        };
    }
    if out.is_empty() {
        return Err(super::ParseError::NotThisKind(
            "no `lspci -vv` device or link lines in the text",
        ));
    }
    Ok(out)
}

fn absent<T>() -> Field<T> {
    Field::Error(super::nvidia_smi::NOT_IN_EVIDENCE.to_string())
}

fn opt<T>(v: Option<T>) -> Field<T> {
    v.map(Field::Ok).unwrap_or_else(absent)
}

/// The judged devices as GPUs of a reading that knows only their link: everything else is
/// "not in the evidence".
pub fn to_reading(devices: &[LspciDevice]) -> NvmlReading {
    let gpus = devices
        .iter()
        .filter(|d| d.judged())
        .enumerate()
        .map(|(i, d)| GpuReading {
            index: i as u32,
            name: opt(d.description.clone()),
            pci_bus_id: opt(d.slot.clone()),
            pcie_gen: opt(d.sta_speed_gts.and_then(generation)),
            pcie_width: opt(d.sta_width),
            pcie_max_gen: opt(d.cap_speed_gts.and_then(generation)),
            pcie_max_width: opt(d.cap_width),
            pcie_lspci: Some(LspciLink {
                device: d.label(),
                speed_downgraded: d.speed_downgraded,
                width_downgraded: d.width_downgraded,
            }),
            ..blank()
        })
        .collect();
    NvmlReading {
        driver_version: absent(),
        cuda_driver_version: absent(),
        nvml_version: absent(),
        init_ms: 0.0,
        gpus,
    }
}

fn blank() -> GpuReading {
    let mut g = GpuReading::default();
    let v = serde_json::to_value(&g).unwrap_or_default();
    if let serde_json::Value::Object(mut o) = v {
        for f in o.values_mut() {
            if f.as_str() == Some("not-supported") {
                *f = serde_json::json!({ "error": super::nvidia_smi::NOT_IN_EVIDENCE });
            }
        }
        if let Ok(n) = serde_json::from_value(serde_json::Value::Object(o)) {
            g = n;
        }
    }
    g
}

/// Adds lspci's link to the GPUs of a reading from the same paste (matched by bus id, the
/// reading's `00000000:17:00.0` against lspci's `17:00.0`), and the lspci GPUs it lacks.
pub fn merge_into(reading: &mut NvmlReading, devices: &[LspciDevice]) {
    merge_links(reading, to_reading(devices));
}

/// True for a reading made from `lspci -vv` alone (it knows only links).
pub fn is_links_only(r: &NvmlReading) -> bool {
    !r.gpus.is_empty()
        && r.gpus.iter().all(|g| g.pcie_lspci.is_some())
        && matches!(r.driver_version, Field::Error(_))
}

/// Two pastes that describe one machine, read in turn: where one is `lspci -vv` (links only),
/// its links join the other's GPUs. Otherwise (a table and `-q` sections, `-q` and a CSV) the
/// later reading stands where it read a field, and the earlier fills what it did not: each
/// GPU of the later is matched to the earlier's by bus id (by index where one names none)
/// where their names and UUIDs do not disagree, and the earlier's GPUs no later one matches
/// are kept. A `-q` pasted above a table keeps its
/// clocks, ECC and temperature limits, which the table does not print.
pub fn combine(earlier: Option<NvmlReading>, later: NvmlReading) -> NvmlReading {
    match earlier {
        Some(mut e) if is_links_only(&later) && !is_links_only(&e) => {
            merge_links(&mut e, later);
            e
        }
        Some(e) if is_links_only(&e) && !is_links_only(&later) => {
            let mut l = later;
            merge_links(&mut l, e);
            l
        }
        Some(e) => merge_readings(e, later),
        None => later,
    }
}

/// The later reading, its unread fields filled from the earlier (see [`combine`]).
fn merge_readings(earlier: NvmlReading, mut later: NvmlReading) -> NvmlReading {
    fn fill<T>(into: &mut Field<T>, from: Field<T>) {
        if !matches!(into, Field::Ok(_)) && matches!(from, Field::Ok(_)) {
            *into = from;
        }
    }
    fill(&mut later.driver_version, earlier.driver_version);
    fill(&mut later.cuda_driver_version, earlier.cuda_driver_version);
    fill(&mut later.nvml_version, earlier.nvml_version);
    let bus = |g: &GpuReading| g.pci_bus_id.ok().map(|s| bus_key(s));
    // one GPU read twice has one bus id, and names and UUIDs that do not disagree (two
    // machines' GPUs often share `01:00.0`); a table cuts a long name with `...`
    let name = |g: &GpuReading| {
        g.name
            .ok()
            .map(|n| n.trim().trim_end_matches("...").trim().to_ascii_lowercase())
    };
    let agree = |a: &GpuReading, b: &GpuReading| {
        let names = match (name(a), name(b)) {
            (Some(x), Some(y)) => x.starts_with(&y) || y.starts_with(&x),
            _ => true,
        };
        let uuids = match (a.uuid.ok(), b.uuid.ok()) {
            (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
            _ => true,
        };
        names && uuids
    };
    let mut unmatched = Vec::new();
    for eg in earlier.gpus {
        // by bus id where both name one; else by nvidia-smi's GPU index, which its table,
        // `-q`, `dmon` and `--query-gpu` of one machine share (`dmon` and a CSV without
        // `pci.bus_id` name no bus)
        let hit = later.gpus.iter_mut().find(|g| {
            agree(g, &eg)
                && match (bus(g), bus(&eg)) {
                    (Some(a), Some(b)) => a == b,
                    _ => g.index == eg.index,
                }
        });
        match hit {
            Some(g) => fill_gpu(g, &eg),
            None => unmatched.push(eg),
        }
    }
    for mut g in unmatched {
        if later.gpus.len() >= super::nvidia_smi::MAX_GPUS {
            break;
        }
        g.index = later.gpus.len() as u32;
        later.gpus.push(g);
    }
    later
}

/// `into`'s fields that are not read (`not-supported`, an error, `not in the evidence`, an empty
/// or absent value) taken from `from` where it read them: field by field, through the reading's
/// own serialized form, so a field added to [`GpuReading`] is filled too.
fn fill_gpu(into: &mut GpuReading, from: &GpuReading) {
    use serde_json::Value;
    let (Ok(Value::Object(mut a)), Ok(Value::Object(b))) =
        (serde_json::to_value(&*into), serde_json::to_value(from))
    else {
        return;
    };
    let read = |v: &Value| match v {
        Value::Object(o) => o.contains_key("ok"),
        Value::Null => false,
        Value::Array(x) => !x.is_empty(),
        Value::String(s) => s != "not-supported",
        _ => true,
    };
    for (k, v) in b {
        if k == "index" {
            continue;
        }
        let unread = a.get(&k).is_none_or(|x| !read(x));
        if unread && read(&v) {
            a.insert(k, v);
        }
    }
    if let Ok(g) = serde_json::from_value(Value::Object(a)) {
        *into = g;
    }
}

fn merge_links(reading: &mut NvmlReading, from: NvmlReading) {
    for lg in from.gpus {
        let key = lg.pci_bus_id.ok().map(|s| bus_key(s));
        let n = reading.gpus.len();
        let hit = reading
            .gpus
            .iter_mut()
            .find(|g| key.is_some() && g.pci_bus_id.ok().map(|s| bus_key(s)) == key);
        match hit {
            Some(g) => {
                if matches!(g.pcie_max_gen, Field::Error(_)) {
                    g.pcie_max_gen = lg.pcie_max_gen;
                }
                if matches!(g.pcie_max_width, Field::Error(_)) {
                    g.pcie_max_width = lg.pcie_max_width;
                }
                if matches!(g.pcie_gen, Field::Error(_)) {
                    g.pcie_gen = lg.pcie_gen;
                }
                if matches!(g.pcie_width, Field::Error(_)) {
                    g.pcie_width = lg.pcie_width;
                }
                g.pcie_lspci = lg.pcie_lspci;
            }
            None if n < super::MAX_ITEMS => {
                let mut g = lg;
                g.index = n as u32;
                reading.gpus.push(g);
            }
            None => {}
        }
    }
}

/// `00000000:17:00.0` and `17:00.0` name the same device (domain 0).
fn bus_key(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    let parts: Vec<&str> = s.split(':').collect();
    match parts.as_slice() {
        [dom, b, df] => {
            let d = dom.trim_start_matches('0');
            format!("{}:{b}:{df}", if d.is_empty() { "0" } else { d })
        }
        [b, df] => format!("0:{b}:{df}"),
        _ => s,
    }
}

/// The slots of the NVIDIA GPUs whose configuration space reads all ones while other NVIDIA
/// GPUs of the same listing answer: GPUs that no longer answer on the bus. Empty when every
/// NVIDIA GPU answers, or when none does (a sleeping switchable GPU, or a listing of one).
pub fn gpus_off_the_bus(devices: &[LspciDevice]) -> Vec<String> {
    let gpus = devices
        .iter()
        .filter(|d| d.nvidia == Some(true) && d.gpu == Some(true));
    let (gone, answering): (Vec<&LspciDevice>, Vec<&LspciDevice>) =
        gpus.partition(|d| d.config_unreadable);
    if answering.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for s in gone.iter().filter_map(|d| d.slot.clone()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// `lspci -vv`: the registry entry.
pub struct Lspci;

/// What the registry's reader returns: the devices read.
#[derive(Serialize)]
struct Devices {
    devices: Vec<LspciDevice>,
    /// For a paste that is only `lspci -t` ([`tree_only`]): its number of tree lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    tree_lines: Option<usize>,
}

/// A paste that is only `lspci -t`: read, with no device to judge.
fn tree_devices(text: &str, e: super::ParseError) -> Result<Devices, super::ParseError> {
    match tree_only(&super::unquote(text)) {
        Some(n) => Ok(Devices {
            devices: Vec::new(),
            tree_lines: Some(n),
        }),
        None => Err(e),
    }
}

impl super::EvidenceKind for Lspci {
    fn name(&self) -> &'static str {
        "lspci"
    }
    fn doc(&self) -> &'static str {
        "lspci -vv device blocks: each device's PCIe link capability (LnkCap) and trained state (LnkSta)"
    }
    fn example(&self) -> &'static str {
        "sudo lspci -vv -d 10de:"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "devices",
                "per device: slot, class, description, nvidia, gpu, port_type, LnkCap/LnkSta speed and width, LnkCap2, LnkCtl2 target, kernel driver, speed_downgraded, width_downgraded, config_unreadable (its configuration space reads all ones: `(rev ff)`, `!!! Unknown header type 7f`)",
            ),
            (
                "tree_lines",
                "for a paste that is only `lspci -t` (no device line, no link): its number of tree lines",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "kernel.log", "driver.binding"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_lspci(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let d = match parse_lspci(text) {
            Ok(devices) => Devices {
                devices,
                tree_lines: None,
            },
            Err(e) => tree_devices(text, e)?,
        };
        super::to_value(&d)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        // with no GPU link to show (plain `lspci`, a NIC's block) the paste gives the GPU probes
        // nothing: an empty reading would let every GPU rule pass on zero GPUs
        // a tree alone (`lspci -t`) names no link either
        Some(match parse_lspci(text) {
            Ok(d) if d.iter().any(LspciDevice::judged) => Ok(super::HostPart::Nvml(to_reading(&d))),
            Ok(_) => Ok(super::HostPart::Shown),
            Err(e) => tree_devices(text, e).map(|_| super::HostPart::Shown),
        })
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn kernel_listing_reads_devices_without_links() {
        // github.com/vanities/GPU-Passthrough-Arch-Linux-to-Windows10/issues/6: `lspci -nnk`
        // (show_terse's `Subsystem:` and show_kernel's lines under each device), once as
        // printed (indented) and once as an unfenced comment keeps it (the tab dropped)
        for t in [
            "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation TU117M [GeForce GTX 1650 Mobile / Max-Q] [10de:1f91] (rev a1)\n        Subsystem: Hewlett-Packard Company Device [103c:85fc]\n        Kernel driver in use: nvidia\n        Kernel modules: nouveau, nvidia_drm, nvidia\n01:00.1 Audio device [0403]: NVIDIA Corporation Device [10de:10fa] (rev a1)\n        Subsystem: Hewlett-Packard Company Device [103c:85fc]\n        Kernel driver in use: snd_hda_intel\n        Kernel modules: snd_hda_intel\n",
            "3e:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3080] [10de:2206] (rev a1)\nSubsystem: Gigabyte Technology Co., Ltd Device [1458:404b]\nKernel driver in use: nvidia\nKernel modules: nouveau, nvidia_drm, nvidia\n3e:00.1 Audio device [0403]: NVIDIA Corporation GA102 High Definition Audio Controller [10de:1aef] (rev a1)\nSubsystem: Gigabyte Technology Co., Ltd Device [1458:404b]\nKernel driver in use: snd_hda_intel\nKernel modules: snd_hda_intel\n",
        ] {
            assert!(looks_like_lspci(t), "{t}");
            let d = parse_lspci(t).unwrap();
            assert_eq!(d.len(), 2);
            assert_eq!(d[0].gpu, Some(true));
            assert_eq!(d[0].kernel_driver.as_deref(), Some("nvidia"));
            assert!(!d.iter().any(LspciDevice::judged), "no link lines");
        }
        // github.com/noonghunna/club-3090/issues/356: the report script's lspci section as the
        // stored copy holds it, from the tail of `lspci -t` (ls-tree.c lines) through the
        // `lspci -vvv -s` greps that found no link line (without root) to `lspci -nnk | grep
        // -A3`: read, one RTX 3090 with its driver, no link to judge
        let t = "             +-1e.4\n             +-1f.0\n             \\-1f.2\n\n# lspci -vvv -s 0000:02:00.0  (GPU function: LnkCap/LnkSta/ACSCap/ACSCtl)\n  (no matching LnkCap/LnkSta/ACSCap/ACSCtl lines)\n\n# lspci -vvv -s 0000:00:02.0  (upstream bridge of 0000:02:00.0: LnkCap/LnkSta/ACSCap/ACSCtl)\n  (no matching LnkCap/LnkSta/ACSCap/ACSCtl lines)\n\n# lspci -nnk | grep -A3 -i nvidia  (driver binding + device IDs)\n02:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204] (rev a1)\n        Subsystem: ZOTAC International (MCO) Ltd. GA102 [GeForce RTX 3090] [19da:1613]\n        Kernel driver in use: nvidia\n        Kernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n";
        assert!(looks_like_lspci(t));
        let d = parse_lspci(t).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].slot.as_deref(), Some("02:00.0"));
        assert_eq!(d[0].kernel_driver.as_deref(), Some("nvidia"));
        assert!(!d[0].judged());
        // the same report with a link: club-3090#1028, its tree's first lines above the
        // GPU's greps (idle at 2.5GT/s on all 16 lanes: speed downgraded, width not)
        let t = " \\-[0000:60]-+-00.0\n             +-00.2\n             \\-08.1-[62]----00.0\n\n# lspci -vvv -s 0000:01:00.0  (GPU function: LnkCap/LnkSta/ACSCap/ACSCtl)\n\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <512ns, L1 <4us\n\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n";
        let d = parse_lspci(t).unwrap();
        assert_eq!(d.len(), 1);
        assert!(d[0].speed_downgraded && !d[0].width_downgraded);
        // what is not lspci output stays out: detail lines with no device line above, a
        // tree with device names (`lspci -tv`), a lone parenthesised note
        assert!(!looks_like_lspci(
            "Kernel driver in use: nvidia\nKernel modules: nvidia\n"
        ));
        assert!(!tree_line(
            "+-01.1-[01]--+-00.0  NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]"
        ));
        assert!(tree_line("-+-[0000:00]-+-00.0"));
        assert!(tree_line("|           +-01.1-[01]--+-00.0"));
        assert!(!looks_like_lspci(
            "(no matching LnkCap/LnkSta/ACSCap/ACSCtl lines)\n"
        ));
        assert!(!looks_like_lspci(
            "(no NVIDIA functions found)\nTraceback (most recent call last):\n"
        ));
    }

    #[test]
    fn a_bare_lspci_tree_is_read_with_no_device_to_judge() {
        use crate::evidence::EvidenceKind;
        // github.com/noonghunna/club-3090/issues/1098: `lspci -t` of a WRX80 board (several
        // root buses: ls-tree.c's `+-[%04x:%02x]-` first), as the stored copy cuts it
        let t = "lspci -t\n-+-[0000:00]-+-00.0\n |           +-00.2\n |           +-01.1-[01]--+-00.0\n |           |            \\-00.1\n |           \\-18.7\n +-[0000:20]-+-00.0\n |           \\-08.1-[22]--+-00.0\n \\-[0000:60]-+-00.0\n             +-01.1-[61-ca]----00.0-[62-ca]--+-00.0-[63]----00.0\n";
        assert_eq!(tree_only(t), Some(9));
        assert!(looks_like_lspci(t));
        let v = Lspci.parse(t).unwrap();
        assert_eq!(v["tree_lines"], 9);
        assert_eq!(v["devices"].as_array().map(Vec::len), Some(0));
        assert!(matches!(
            Lspci.host(t),
            Some(Ok(crate::evidence::HostPart::Shown))
        ));
        // one root bus: `-[0000:00]-+-…` (show_tree_bridge's `[%04x:%02x]-` after the `-`)
        assert_eq!(
            tree_only("-[0000:00]-+-00.0\n           +-01.0-[01]----00.0\n           \\-1f.3\n"),
            Some(3)
        );
        // not a tree: a markdown table's rule (tree characters, no root), `lspci -tv` (device
        // names), a lone root line, a tree under prose
        for t in [
            "|---|---|\n|---|---|\n",
            "-[0000:00]-+-00.0  Intel Corporation Device 1234\n           \\-1f.3  Intel Corporation SMBus\n",
            "-[0000:00]-+-00.0\n",
            "the tree is below\n-[0000:00]-+-00.0\n           \\-1f.3\n",
        ] {
            assert_eq!(tree_only(t), None, "{t}");
        }
        assert!(!looks_like_lspci("|---|---|\n|---|---|\n"));
    }

    #[test]
    fn plain_lspci_through_grep_lists_devices_without_links() {
        // zgle-fork/deepracer-for-dummies scripts/3-validate.md, as published (the stray quote
        // after the line too): a T4 listed by plain lspci
        let t = "$ lspci | awk '/NVIDIA/ && /3D controller/'\n00:1e.0 3D controller: NVIDIA Corporation Device 1eb8 (rev a1)'\n";
        assert!(looks_like_lspci(t));
        let d = parse_lspci(t).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].slot.as_deref(), Some("00:1e.0"));
        assert_eq!(d[0].nvidia, Some(true));
        assert!(!d[0].judged(), "no link lines: nothing to judge");
        // openshift/sriov-network-operator#635: a NIC-only listing is lspci's, and no GPU's
        let nic = "root@node2$ lspci | grep Mellanox\n0c:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n";
        assert!(looks_like_lspci(nic));
        let d = parse_lspci(nic).unwrap();
        assert_eq!(d[0].nvidia, Some(false));
        assert!(!d.iter().any(LspciDevice::judged));
        // a log line shaped like a slot is not a device line
        assert!(!looks_like_lspci("12:34.5 INFO: loading model\n"));
        // a device line inside other text is no listing
        assert!(!looks_like_lspci(
            "3b:00.0 3D controller: NVIDIA Corporation GV100GL (rev a1)\nTraceback (most recent call last):\n"
        ));
    }

    #[test]
    fn a_gpu_whose_configuration_space_reads_all_ones_is_off_the_bus() {
        // lyulyul/shine-cluster#171 (`lspci | grep -i nvidia` on a Slurm node that drained):
        // bus 1c's four functions read `(rev ff)` beside Quadro RTX cards that answer
        let t = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/h48_lspci_shinecluster171_quadro_rev_ff.txt"),
        )
        .unwrap();
        let d = parse_lspci(&t).unwrap();
        assert_eq!(d.len(), 12);
        assert!(
            d.iter()
                .all(|x| x.config_unreadable == x.slot.as_deref().unwrap().starts_with("1c:"))
        );
        assert_eq!(gpus_off_the_bus(&d), ["1c:00.0"]);
        // the same listing without bus 1c: every GPU answers
        let healthy: String = t
            .lines()
            .filter(|l| !l.starts_with("1c:"))
            .map(|l| format!("{l}\n"))
            .collect();
        let h = parse_lspci(&healthy).unwrap();
        assert!(h.iter().all(|x| !x.config_unreadable));
        assert!(gpus_off_the_bus(&h).is_empty());
        // bus 1c alone: one unreadable GPU and none answering, as a switchable GPU asleep in
        // D3cold shows, is not judged
        let alone: String = t
            .lines()
            .filter(|l| l.starts_with("1c:"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(gpus_off_the_bus(&parse_lspci(&alone).unwrap()).is_empty());
        // `show_verbose`'s header type of an all-ones space, under the device's header line
        // (the xmm7360_usb module's README quotes it for a modem whose link it turned off)
        let v = "02:00.0 Wireless controller [0d40]: Intel Corporation XMM7360 LTE Advanced Modem (rev ff) (prog-if ff)\n\t!!! Unknown header type 7f\n\tKernel driver in use: xmm7360_usb\n";
        let m = parse_lspci(v).unwrap();
        assert!(m[0].config_unreadable && m[0].nvidia == Some(false));
        assert!(gpus_off_the_bus(&m).is_empty(), "not an NVIDIA GPU");
    }

    #[test]
    fn an_excerpt_under_lspci_s_is_the_selected_device() {
        // github.com/pciutils/pciutils/issues/128: a ConnectX-5 Socket Direct listed by plain
        // lspci, then `lspci -s 17:00.0 -vvv | grep` of its link (older pciutils: Speed unknown)
        let t = "lspci |grep Mell\n17:00.0 Ethernet controller: Mellanox Technologies MT28841\nb1:00.0 Ethernet controller: Mellanox Technologies MT28841\n\nlspci -s 17:00.0 -vvv | grep -E 'Width|PCIeGen'\nLnkCap:\tPort #0, Speed unknown, Width x8, ASPM not supported, Exit Latency L0s unlimited, L1 <4us\nLnkSta:\tSpeed unknown, Width x8, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n\t[V0] Vendor specific: PCIeGen4 x16\n";
        assert!(looks_like_lspci(t));
        let d = parse_lspci(t).unwrap();
        assert_eq!(d.len(), 2);
        let nic = d.iter().find(|d| d.cap_width.is_some()).unwrap();
        assert_eq!(nic.slot.as_deref(), Some("17:00.0"));
        assert_eq!(nic.nvidia, Some(false));
        assert_eq!((nic.cap_width, nic.sta_width), (Some(8), Some(8)));
        assert!(!nic.judged(), "a NIC's link is not a GPU's");
        // the link lines went to 17:00.0, not to b1:00.0 listed last above the command
        let other = d
            .iter()
            .find(|d| d.slot.as_deref() == Some("b1:00.0"))
            .unwrap();
        assert_eq!(other.cap_width, None);
        // `-vvvs SLOT` with no listing: the excerpt keeps its slot, its vendor unknown
        let g = parse_lspci("lspci -vvvs c9:00.0 | grep -i speed\nLnkCap: Port #0, Speed 16GT/s, Width x4, ASPM L0s L1, Exit Latency L0 <512ns, L1 <16us\nLnkSta: Speed 8GT/s (downgraded), Width x2 (downgraded)\n").unwrap();
        assert_eq!(g[0].slot.as_deref(), Some("c9:00.0"));
        assert_eq!(g[0].nvidia, None);
        assert!(g[0].width_downgraded);
        assert_eq!(
            selected_slot("sudo lspci -vv -s 0000:17:00.0"),
            Some("0000:17:00.0".into())
        );
        assert_eq!(selected_slot("lspci -s17:00.0 -vv"), Some("17:00.0".into()));
        assert_eq!(selected_slot("lspci -vv -d 10de:"), None);
    }

    #[test]
    fn a_nic_listing_and_its_prompts() {
        // github.com/deepseek-ai/3FS/pull/283: a ConnectX-6 Dx's two functions under prompts
        let t = "[root@node75 ~]# lspci |grep net\n86:00.0 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n86:00.1 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n[root@node75 ~]# \n";
        assert!(looks_like_lspci(t));
        assert_eq!(parse_lspci(t).unwrap().len(), 2);
        assert!(pci_class_name("Class 0207"));
        assert!(pci_class_name("Processing accelerators"));
        assert!(!pci_class_name("INFO"));
    }

    #[test]
    fn fragment_with_speed_downgraded_and_width_ok() {
        let t = fixture("lspci/lnksta_gen1_riser_idle.txt");
        assert!(looks_like_lspci(&t));
        let d = parse_lspci(&t).unwrap();
        assert_eq!(d.len(), 1);
        let g = &d[0];
        assert_eq!(g.slot, None);
        assert_eq!(g.cap_port, Some(0));
        assert_eq!((g.cap_speed_gts, g.cap_width), (Some(16.0), Some(16)));
        assert_eq!((g.sta_speed_gts, g.sta_width), (Some(2.5), Some(16)));
        assert_eq!(g.sta_speed_mark.as_deref(), Some("downgraded"));
        assert_eq!(g.sta_width_mark.as_deref(), Some("ok"));
        assert!(g.speed_downgraded && !g.width_downgraded);
        let r = to_reading(&d);
        assert_eq!(r.gpus[0].pcie_gen, Field::Ok(1));
        assert_eq!(r.gpus[0].pcie_max_gen, Field::Ok(4));
        assert_eq!(r.gpus[0].pcie_max_width, Field::Ok(16));
        // lspci shows no load: the reading says so rather than 0%
        assert!(
            r.gpus[0]
                .utilization_gpu
                .reason()
                .unwrap()
                .contains("not in the evidence")
        );
    }

    #[test]
    fn width_downgraded_by_mark_where_lnkcap_is_cut() {
        let d = parse_lspci(&fixture("lspci/lnksta_x1_downgraded.txt")).unwrap();
        assert_eq!(d.len(), 1);
        let g = &d[0];
        assert_eq!(g.cap_width, None);
        assert_eq!((g.sta_speed_gts, g.sta_width), (Some(5.0), Some(1)));
        assert!(g.width_downgraded && g.speed_downgraded);
        let l = to_reading(&d).gpus[0].pcie_lspci.clone().unwrap();
        assert!(l.width_downgraded);
        assert!(l.device.contains("header is not in the paste"));
    }

    #[test]
    fn full_link_with_old_ok_marks_and_link2() {
        let d = parse_lspci(&fixture("lspci/full_link_ok_wording.txt")).unwrap();
        let g = &d[0];
        assert_eq!((g.cap_speed_gts, g.cap_width), (Some(8.0), Some(16)));
        assert_eq!((g.sta_speed_gts, g.sta_width), (Some(8.0), Some(16)));
        assert_eq!(g.target_speed_gts, Some(8.0));
        assert!(!g.speed_downgraded && !g.width_downgraded);
    }

    #[test]
    fn headers_name_the_device_and_the_vendor() {
        let d = parse_lspci(&fixture("lspci/a100_header_nn.txt")).unwrap();
        let a = &d[0];
        assert_eq!(a.slot.as_deref(), Some("da:00.0"));
        assert_eq!(a.class.as_deref(), Some("3D controller"));
        assert_eq!(a.nvidia, Some(true));
        assert_eq!(a.gpu, Some(true));
        assert_eq!(a.port_type.as_deref(), Some("Endpoint"));
        // cut before LnkCap: the link is unknown, so the device is not judged
        assert!(!a.judged());
        let d = parse_lspci(&fixture("lspci/other_vendor_accelerator.txt")).unwrap();
        assert_eq!(d[0].nvidia, Some(false));
        assert_eq!(d[0].class.as_deref(), Some("Processing accelerators"));
        assert!(to_reading(&d).gpus.is_empty());
    }

    #[test]
    fn current_pciutils_layout_with_several_devices() {
        // the layout of ls-caps.c today: no mark on a link at capability, `(downgraded)` on an
        // endpoint below it; a bridge above the GPU and the GPU's audio function are skipped
        let t = "16:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])\n\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <4us\n\t\tLnkSta:\tSpeed 16GT/s, Width x16\n17:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n\t\tLnkSta:\tSpeed 32GT/s, Width x8 (downgraded)\n\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer+ 2Retimers+ DRS-\n\t\tLnkCtl2: Target Link Speed: 32GT/s, EnterCompliance- SpeedDis-\n\tKernel driver in use: nvidia\n17:00.1 Audio device: NVIDIA Corporation Device 22bb (rev a1)\n\t\tLnkSta:\tSpeed 32GT/s, Width x8 (downgraded)\n";
        let d = parse_lspci(t).unwrap();
        assert_eq!(d.len(), 3);
        let g = &d[1];
        assert_eq!(g.cap2_max_gts, Some(32.0));
        assert_eq!(g.kernel_driver.as_deref(), Some("nvidia"));
        assert!(g.width_downgraded && !g.speed_downgraded);
        let r = to_reading(&d);
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpus[0].pci_bus_id, Field::Ok("17:00.0".into()));
        assert_eq!(r.gpus[0].pcie_gen, Field::Ok(5));
        assert_eq!(r.gpus[0].pcie_width, Field::Ok(8));
    }

    #[test]
    fn merges_into_a_reading_of_the_same_gpu() {
        let t = "17:00.0 3D controller: NVIDIA Corporation GH100 (rev a1)\n\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n";
        let mut r = NvmlReading {
            driver_version: Field::Ok("580.159.04".into()),
            gpus: vec![GpuReading {
                pci_bus_id: Field::Ok("00000000:17:00.0".into()),
                utilization_gpu: Field::Ok(90),
                ..Default::default()
            }],
            ..Default::default()
        };
        let links = to_reading(&parse_lspci(t).unwrap());
        assert!(is_links_only(&links));
        // either order of the two pastes gives the same GPU with its load and its link
        for r in [
            combine(Some(r.clone()), links.clone()),
            combine(Some(links), r.clone()),
        ] {
            assert_eq!(r.gpus.len(), 1);
            assert_eq!(r.gpus[0].utilization_gpu, Field::Ok(90));
            assert!(r.gpus[0].pcie_lspci.as_ref().unwrap().speed_downgraded);
        }
        merge_into(&mut r, &parse_lspci(t).unwrap());
        assert_eq!(r.gpus.len(), 1);
    }

    #[test]
    fn prose_is_not_lspci() {
        assert!(!looks_like_lspci("the link speed was downgraded\n"));
        assert!(parse_lspci("hello\n").is_err());
        for p in prefixes(&fixture("lspci/lnksta_x1_downgraded.txt"), 29) {
            let _ = parse_lspci(p);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]
        #[test]
        fn never_panics(lines in proptest::collection::vec(prop_oneof![
            Just("17:00.0 3D controller: NVIDIA Corporation X".to_string()),
            "\t\tLnkSta:\tSpeed [0-9.]{0,4}GT/s( \\(downgraded\\))?, Width x[0-9]{0,3}.{0,10}",
            "\t\tLnkCap:\tPort #[0-9]{0,3}, Speed [0-9.a-z]{0,6}GT/s, Width x[0-9]{0,3}",
            "\\PC{0,40}",
        ], 0..30)) {
            let t = lines.join("\n");
            if let Ok(d) = parse_lspci(&t) {
                let _ = to_reading(&d);
            }
        }
    }
}
