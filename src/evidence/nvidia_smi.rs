//! `nvidia-smi -q` text and `nvidia-smi -q -x` XML into [`NvmlReading`], the same struct the
//! live NVML read fills, so the same rules judge a pasted report and a live host.
//!
//! Both formats are first read into one small tree of (key, value, children), then mapped field
//! by field. A field the text does not contain becomes `Field::Error("not in the evidence")`;
//! a field nvidia-smi printed as `N/A`, `[N/A]` or `Not Supported` becomes
//! `Field::NotSupported`, so a rule can tell "this GPU cannot say" from "the paste lacks it".
//! Key spellings of older drivers are accepted too (`Clocks Throttle Reasons`, `Power Readings`,
//! `Power Limit`, `Enforced Power Limit`, `Double Bit`/`Single Bit` ECC totals, `Gpu`).
//! The text form follows nvidia-smi(1) (the GPU ATTRIBUTES section names every line and its
//! values) and the element names of the XML form, `nvsmi_device_v*.dtd`, shipped with the driver.

use crate::vocab::nvml::ProcessMem;
use crate::vocab::nvml::{Field, GpuReading, NvmlReading};

/// Why a field is `Field::Error`: the pasted text simply does not contain it.
pub const NOT_IN_EVIDENCE: &str = "not in the evidence";
/// Why a field is unknown when the paste was cut before it.
pub const INPUT_ENDS_EARLY: &str = "input ends early";

/// Parses `nvidia-smi -q` output, text or XML (detected).
pub fn parse_nvidia_smi(text: &str) -> Result<NvmlReading, super::ParseError> {
    if looks_like_xml(text) {
        parse_nvidia_smi_xml(text)
    } else {
        parse_nvidia_smi_text(text)
    }
}

pub(crate) fn looks_like_xml(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<?xml")
        || t.starts_with("<!DOCTYPE nvidia_smi_log")
        || t.contains("<nvidia_smi_log")
        || (t.starts_with('<') && XML_TAGS.iter().filter(|k| t.contains(*k)).count() >= 2)
        || (t.starts_with('<') && t.matches("<supported_graphics_clock>").count() >= 3)
}

/// Elements only `nvidia-smi -q -x` prints: two of them make an XML fragment recognisable. A
/// run of `<supported_graphics_clock>` elements alone (three or more) is one too: nvidia-smi's
/// DTD (`nvsmi_device_v*.dtd`, shipped with the driver) nests them as `supported_clocks >
/// supported_mem_clock > (value, supported_graphics_clock*)`, one per clock the GPU offers, and
/// `-q -x -d SUPPORTED_CLOCKS` pastes are mostly that run.
const XML_TAGS: &[&str] = &[
    // a `<processes>` excerpt: the DTD's `process_info (gpu_instance_id, compute_instance_id,
    // pid, type, process_name, used_memory)`, the instance ids since R450's MIG
    "<process_info>",
    "<gpu_instance_id>",
    "<compute_instance_id>",
    "<supported_clocks>",
    "<supported_mem_clock>",
    "<ecc_mode>",
    "<current_ecc>",
    "<pending_ecc>",
    "<single_bit>",
    "<double_bit>",
    "<sm_clock>",
    "<graphics_clock>",
    "<mem_clock>",
    "<power_draw>",
    "<gpu_temp>",
    "<memory_util>",
    "<pci_bus_id>",
    "<tx_util>",
    "<rx_util>",
    "<fan_speed>",
    "<pci_bridge_chip>",
    "<power_state>",
    "<enforced_power_limit>",
    "<gpu id=",
    "<product_name>",
    "<clocks_event_reasons>",
    "<clocks_throttle_reasons>",
    "<clocks_event_reason_",
    "<clocks_throttle_reason_",
    "<pci_gpu_link_info>",
    "<current_link_gen>",
    "<performance_state>",
    "<gpu_util>",
    "<fb_memory_usage>",
    "<ecc_errors>",
    "<retired_pages>",
    "<remapped_rows>",
    "<persistence_mode>",
    "<gpu_power_readings>",
];

/// `Key : value` names only `nvidia-smi -q` prints (any driver's spelling).
const Q_KEYS: &[&str] = &[
    "Utilization",
    "Encoder",
    "Decoder",
    "Correctable Error",
    "Uncorrectable Error",
    "Remapping Failure Occurred",
    "Max Clocks",
    "Applications Clocks",
    "Default Applications Clocks",
    "Clocks Event Reasons Counters",
    "ECC Mode",
    "ECC Errors",
    "Power Readings",
    "GPU Power Readings",
    "Video",
    "Product Name",
    "Product Brand",
    "Persistence Mode",
    "Performance State",
    "Clocks Event Reasons",
    "Clocks Throttle Reasons",
    "Clocks Event Reasons Counters",
    // and the reason lines under them: REASON_LINES ([`is_q_key`])
    "GPU Link Info",
    "PCIe Generation",
    "Link Width",
    "Bus Id",
    "GPU Current Temp",
    "GPU Shutdown Temp",
    "GPU Slowdown Temp",
    "Power Draw",
    "Current Power Limit",
    "Enforced Power Limit",
    "Default Power Limit",
    "Retired Pages",
    "Remapped Rows",
    "Pending Page Blacklist",
    "Single Bit ECC",
    "Double Bit ECC",
    "Volatile",
    "Aggregate",
    "FB Memory Usage",
    "BAR1 Memory Usage",
    "Compute Mode",
    "VBIOS Version",
    "GPU UUID",
    "Replays Since Reset",
    "GPU Utilization Samples",
    "Memory Utilization Samples",
    "ENC Utilization Samples",
    "DEC Utilization Samples",
    "Number of Samples",
    "GPU Max Operating Temp",
    "Average Power Draw",
    "Instantaneous Power Draw",
    "Requested Power Limit",
    "Min Power Limit",
    "Max Power Limit",
    "Power Management",
    "Max Customer Boost Clocks",
    "Clock Policy",
    "Auto Boost",
    "Device Current",
    "Device Max",
    "Host Max",
    "Tx Throughput",
    "Rx Throughput",
    "Sparse Operation Mode",
];

/// A shell prompt or command line pasted above the output (`$ nvidia-smi -q | grep -A8 ...`).
fn is_prompt(t: &str) -> bool {
    t.starts_with('$') || (t.contains("nvidia-smi") && !t.contains(" : "))
}

/// A piece of `nvidia-smi -q` text without its banner: a few of its keys, laid out as
/// `Key   : value` lines or section headers.
pub(crate) fn looks_like_q_fragment(h: &str) -> bool {
    let mut hits = 0;
    let mut kv = 0;
    let mut lines = 0;
    // the clock section whose lines follow, and its header's indentation
    let mut clock_section: Option<(&[&str], usize)> = None;
    for l in h.lines().take(400) {
        let t = l.trim().trim_start_matches(['>', '`']).trim();
        if t.is_empty() || is_prompt(t) {
            continue;
        }
        lines += 1;
        let indent = l.len() - l.trim_start().len();
        let (key, val) = split_key_value(t);
        if val.is_some() {
            kv += 1;
        }
        if is_q_key(key) {
            hits += 1;
        }
        match (clock_section, val) {
            (Some((children, at)), Some(v))
                if indent > at
                    && children.iter().any(|c| key.eq_ignore_ascii_case(c))
                    && is_clock_value(v) =>
            {
                hits += 1;
            }
            (_, None) => {
                clock_section = CLOCK_SECTIONS
                    .iter()
                    .find(|(name, _)| key.eq_ignore_ascii_case(name))
                    .map(|(_, children)| (*children, indent));
            }
            (Some((_, at)), Some(_)) if indent <= at => clock_section = None,
            _ => {}
        }
    }
    hits >= 2 && kv * 3 >= lines
}

/// The clock sections of `nvidia-smi -q` (`-d CLOCK`) and the lines each holds, as nvidia-smi(1)
/// lists them ("Clocks: Current frequency at which parts of the GPU are running. All readings
/// are in MHz." Graphics, SM, Memory, Video; "Applications Clocks" and "Default Applications
/// Clocks": Graphics, Memory; "Max Clocks": Graphics, SM, Memory, Video; "Max Customer Boost
/// Clocks": Graphics; "Deferred Clocks" (R450+): Memory). The XML form nests the same values in
/// `<clocks>`, `<applications_clocks>`, … as `graphics_clock`, `sm_clock`, `mem_clock`,
/// `video_clock`. A hand-cut excerpt of a clock section (`Clocks` / `SM : 1530 MHz` / `Memory :
/// 877 MHz`) has no key [`is_q_key`] knows: each of its lines under such a header, with a
/// value in MHz, is one of nvidia-smi's.
const CLOCK_SECTIONS: &[(&str, &[&str])] = &[
    ("Clocks", &["Graphics", "SM", "Memory", "Video"]),
    ("Max Clocks", &["Graphics", "SM", "Memory", "Video"]),
    ("Applications Clocks", &["Graphics", "Memory"]),
    ("Default Applications Clocks", &["Graphics", "Memory"]),
    ("Max Customer Boost Clocks", &["Graphics"]),
    ("Deferred Clocks", &["Memory"]),
];

/// A clock reading as nvidia-smi prints it: `1530 MHz` (a note after it is the paster's), or
/// `N/A` where the GPU cannot say.
fn is_clock_value(v: &str) -> bool {
    let mut w = v.split_whitespace();
    match (w.next(), w.next()) {
        (Some(n), Some("MHz")) => n.parse::<u32>().is_ok(),
        (Some(n), None) => is_na(n),
        _ => false,
    }
}

/// Parses the text of `nvidia-smi -q` (or `-a`).
pub fn parse_nvidia_smi_text(text: &str) -> Result<NvmlReading, super::ParseError> {
    let tree = Tree::from_text(&super::unquote(text));
    map_reading(&tree)
}

/// Parses the XML of `nvidia-smi -q -x`; a truncated or broken document yields what came
/// before the break.
pub fn parse_nvidia_smi_xml(text: &str) -> Result<NvmlReading, super::ParseError> {
    let tree = Tree::from_xml(&super::unquote(text));
    map_reading(&tree)
}

/// Largest `nvidia-smi -q` paste (text or XML) read as a host: the XML of one H200 with every
/// section is 27 KB, so [`MAX_GPUS`] of them stay well under this.
pub const MAX_SMI_Q_BYTES: usize = 8 << 20;

/// Most GPUs one pasted host may have. Every per-GPU rule judges each GPU against the whole
/// reading, so the work grows with the square of the count: a paste of hundreds of GPUs (several
/// hosts' output concatenated, or a hostile file) would take minutes and gigabytes.
pub const MAX_GPUS: usize = 64;

/// Fields of [`NvmlReading`], which both `-q` kinds yield.
const READING_FIELDS: &[(&str, &str)] = &[
    ("driver_version", "the driver's version"),
    (
        "cuda_driver_version",
        "the newest CUDA the driver supports, e.g. 12040",
    ),
    ("nvml_version", "NVML's version"),
    ("init_ms", "always 0 for a paste"),
    (
        "gpus",
        "per GPU: name, bus id, persistence, pstate, clocks and their event reasons, power and its limits, temperature, utilization, memory, ECC, PCIe link, processes",
    ),
];

/// What the `-q` host kinds say about the machine: its GPU readings, refusing a paste too large
/// to be one host's before its tree is built.
fn q_host(text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
    if text.len() > MAX_SMI_Q_BYTES {
        return Some(Err(super::ParseError::TooLarge {
            message: format!(
                "{:.1} MB of nvidia-smi -q output; one host's is under {} MiB (-q -x of {MAX_GPUS} GPUs is about 2 MB)",
                text.len() as f64 / 1e6,
                MAX_SMI_Q_BYTES >> 20
            ),
            help: Some("give the output of one host (`nvidia-smi -q > smi.txt` on the node the job ran on), not several pasted together".into()),
        }));
    }
    Some(parse_nvidia_smi(text).map(super::HostPart::Nvml))
}

/// `nvidia-smi -q` text.
pub struct NvidiaSmiText;

impl super::EvidenceKind for NvidiaSmiText {
    fn name(&self) -> &'static str {
        "nvidia-smi-text"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi -q text (whole or a few of its sections): the GPUs' full NVML state"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi -q"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        READING_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let q = s.unquoted;
        q.contains("NVSMI LOG")
            || (q.contains("Product Name")
                && (q.contains("Attached GPUs") || q.contains("\nGPU 0")))
            || (q.contains("Persistence Mode") && q.contains("Performance State"))
            || looks_like_q_fragment(q)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_nvidia_smi_text(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        q_host(text)
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `nvidia-smi -q -x` XML.
pub struct NvidiaSmiXml;

impl super::EvidenceKind for NvidiaSmiXml {
    fn whole(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "nvidia-smi-xml"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi -q -x XML (whole or a fragment): the GPUs' full NVML state"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi -q -x"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        READING_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_xml(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_nvidia_smi_xml(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        q_host(text)
    }
    fn describes_host(&self) -> bool {
        true
    }
}

// ---------------------------------------------------------------------------------------------
// The tree.

struct Node {
    key: String,
    value: Option<String>,
    /// Indentation in the text form; depth in the XML form.
    indent: usize,
    children: Vec<usize>,
}

struct Tree {
    nodes: Vec<Node>,
    xml: bool,
    /// XML: elements still open where the text ends (the closing tags never came).
    open_at_end: usize,
}

const ROOT: usize = 0;

impl Tree {
    fn new() -> Tree {
        Tree {
            nodes: vec![Node {
                key: String::new(),
                value: None,
                indent: 0,
                children: Vec::new(),
            }],
            xml: false,
            open_at_end: 0,
        }
    }

    fn add(&mut self, parent: usize, key: &str, value: Option<String>, indent: usize) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            key: super::clip(key.trim(), 200),
            value,
            indent,
            children: Vec::new(),
        });
        self.nodes[parent].children.push(id);
        id
    }

    fn from_text(text: &str) -> Tree {
        let mut tree = Tree::new();
        // Stack of (indent, node); the root sits below every indentation.
        let mut stack: Vec<(i64, usize)> = vec![(-1, ROOT)];
        for raw in text.lines() {
            let line = raw.trim_end();
            let trimmed = line.trim_start();
            if trimmed.is_empty()
                || trimmed.starts_with('#')
                || trimmed.starts_with("====")
                || trimmed.starts_with("```")
                || is_prompt(trimmed)
            {
                continue;
            }
            let indent: usize = line
                .chars()
                .take_while(|c| c.is_whitespace())
                .map(|c| if c == '\t' { 4 } else { 1 })
                .sum();
            let (key, value) = split_key_value(trimmed);
            while stack.len() > 1 && stack.last().is_some_and(|t| t.0 >= indent as i64) {
                stack.pop();
            }
            let parent = stack.last().map(|t| t.1).unwrap_or(ROOT);
            let id = tree.add(parent, key, value.map(|v| super::clip(v, 200)), indent);
            stack.push((indent as i64, id));
        }
        tree
    }

    fn from_xml(text: &str) -> Tree {
        let owned;
        let text = if text.contains("<nvidia_smi_log") {
            text
        } else {
            owned = drop_unopened_end_tags(text);
            owned.as_str()
        };
        use quick_xml::events::Event;
        let mut tree = Tree::new();
        tree.xml = true;
        let mut reader = quick_xml::Reader::from_str(text);
        reader.config_mut().trim_text(true);
        // a fragment starts inside elements whose start tags the paste cut off
        reader.config_mut().check_end_names = false;
        let mut stack = vec![ROOT];
        // Nodes are bounded by the input size; this cap only stops pathological nesting.
        loop {
            let parent = *stack.last().unwrap_or(&ROOT);
            match reader.read_event() {
                Ok(Event::Start(e)) => {
                    let id = tree.add(parent, e.name().as_ref(), None, stack.len());
                    for a in e.attributes().flatten() {
                        if a.key.as_ref() == "id" {
                            let v = a
                                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .map(|v| v.into_owned())
                                .ok();
                            tree.add(id, "@id", v, stack.len() + 1);
                        }
                    }
                    if stack.len() < 64 {
                        stack.push(id);
                    }
                }
                Ok(Event::Empty(e)) => {
                    tree.add(parent, e.name().as_ref(), None, stack.len());
                }
                Ok(Event::End(_)) => {
                    if stack.len() > 1 {
                        stack.pop();
                    }
                }
                Ok(Event::Text(t)) => {
                    let s = t.xml_content(quick_xml::XmlVersion::Implicit1_0);
                    append_text(&mut tree.nodes[parent].value, s.trim());
                }
                Ok(Event::GeneralRef(r)) => {
                    let c = match r.into_inner().as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    };
                    append_text(&mut tree.nodes[parent].value, c);
                }
                Ok(Event::Eof) | Err(_) => break,
                Ok(_) => {}
            }
        }
        tree.open_at_end = stack.len() - 1;
        tree
    }

    fn key(&self, id: usize) -> &str {
        &self.nodes[id].key
    }

    fn value(&self, id: usize) -> Option<&str> {
        self.nodes[id].value.as_deref().filter(|v| !v.is_empty())
    }

    fn children(&self, id: usize) -> &[usize] {
        &self.nodes[id].children
    }

    fn child(&self, id: usize, key: &str) -> Option<usize> {
        self.children(id)
            .iter()
            .copied()
            .find(|&c| self.key(c).eq_ignore_ascii_case(key))
    }

    /// Looks up `a/b/c` under `id`. A node on the way that holds `N/A` instead of a section
    /// (older drivers print `Remapped Rows : N/A`) makes everything below it not supported.
    fn lookup(&self, id: usize, path: &str) -> Look<'_> {
        let mut cur = id;
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            match self.child(cur, part) {
                Some(c) => cur = c,
                None => return Look::Absent,
            }
            if i + 1 < parts.len() && self.children(cur).is_empty() {
                return match self.value(cur) {
                    Some(v) if is_na(v) => Look::Na,
                    _ => Look::Absent,
                };
            }
        }
        match self.value(cur) {
            Some(v) if is_na(v) => Look::Na,
            Some(v) => Look::Val(v),
            None => Look::Absent,
        }
    }

    /// The first path that holds a value; `Na` if none does but one says N/A.
    fn first(&self, id: usize, paths: &[&str]) -> Look<'_> {
        let mut na = false;
        for p in paths {
            match self.lookup(id, p) {
                Look::Val(v) => return Look::Val(v),
                Look::Na => na = true,
                Look::Absent => {}
            }
        }
        if na { Look::Na } else { Look::Absent }
    }

    fn section(&self, id: usize, paths: &[&str]) -> Option<usize> {
        paths.iter().find_map(|p| {
            let mut cur = id;
            for part in p.split('/') {
                cur = self.child(cur, part)?;
            }
            Some(cur)
        })
    }

    fn descendants(&self, id: usize, out: &mut Vec<usize>) {
        for &c in self.children(id) {
            out.push(c);
            if out.len() < 10_000 {
                self.descendants(c, out);
            }
        }
    }
}

/// A fragment cut inside elements closes tags it never opened; those end tags are dropped so
/// the reader keeps going.
fn drop_unopened_end_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("</") {
        let (before, after) = rest.split_at(i);
        // count the start tags in `before`
        for seg in before.split('<').skip(1) {
            let name_end = seg.find(['>', ' ', '/']).unwrap_or(seg.len());
            let name = &seg[..name_end];
            if !name.is_empty()
                && !seg[..seg.find('>').unwrap_or(seg.len())].ends_with('/')
                && !name.starts_with('?')
                && !name.starts_with('!')
                && open.len() < 4096
            {
                open.push(name);
            }
        }
        out.push_str(before);
        let (name, end) = match after.find('>') {
            Some(j) => (after[2..j].trim(), j + 1),
            None => (after[2..].trim(), after.len()),
        };
        if let Some(pos) = open.iter().rposition(|n| *n == name) {
            open.truncate(pos);
            out.push_str(&after[..end]);
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn append_text(slot: &mut Option<String>, s: &str) {
    if s.is_empty() {
        return;
    }
    let v = slot.get_or_insert_with(String::new);
    if v.len() < 200 {
        v.push_str(s);
    }
}

/// `Key      : value` → (`Key`, `value`); a line without ` : ` is a section header.
fn split_key_value(line: &str) -> (&str, Option<&str>) {
    // The separator is whitespace then a colon; keys such as `GPU 00000000:00:06.0` have colons
    // without whitespace before them.
    let bytes = line.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i] == b':' && bytes[i - 1].is_ascii_whitespace() {
            let key = line[..i].trim_end();
            let value = line[i + 1..].trim();
            return (key, Some(value));
        }
    }
    (line, None)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Look<'a> {
    Absent,
    Na,
    Val(&'a str),
}

fn is_na(v: &str) -> bool {
    let v = v.trim().trim_start_matches('[').trim_end_matches(']');
    v.eq_ignore_ascii_case("N/A")
        || v.eq_ignore_ascii_case("Not Supported")
        || v.eq_ignore_ascii_case("Not Available")
        || v.eq_ignore_ascii_case("Requested functionality has been deprecated")
}

fn absent<T>() -> Field<T> {
    Field::Error(NOT_IN_EVIDENCE.to_string())
}

/// Turns a lookup into a field with `conv`; a value `conv` cannot read is an error naming it.
fn field<T>(look: Look<'_>, conv: impl Fn(&str) -> Option<T>) -> Field<T> {
    match look {
        Look::Absent => absent(),
        Look::Na => Field::NotSupported,
        Look::Val(v) => match conv(v) {
            Some(x) => Field::Ok(x),
            None if v.to_ascii_lowercase().contains("error") || v.contains("requires reset") => {
                Field::Error(format!("nvidia-smi printed `{}`", super::clip(v, 80)))
            }
            None => Field::Error(format!("cannot read `{}`", super::clip(v, 80))),
        },
    }
}

fn leading_number(v: &str) -> Option<f64> {
    let tok = v.split_whitespace().next()?;
    let tok = tok.trim_end_matches(['x', 'X', '%']);
    let n: f64 = tok.parse().ok()?;
    n.is_finite().then_some(n)
}

fn to_u32(v: &str) -> Option<u32> {
    let n = leading_number(v)?;
    (n >= 0.0 && n <= u32::MAX as f64).then(|| n.round() as u32)
}

fn to_u64(v: &str) -> Option<u64> {
    let n = leading_number(v)?;
    (0.0..1.8e19).contains(&n).then(|| n.round() as u64)
}

fn to_milliwatts(v: &str) -> Option<u32> {
    let n = leading_number(v)?;
    let unit = v.split_whitespace().nth(1).unwrap_or("W");
    let mw = match unit {
        "mW" => n,
        "kW" => n * 1e6,
        _ => n * 1000.0,
    };
    (mw >= 0.0 && mw <= u32::MAX as f64).then(|| mw.round() as u32)
}

fn to_bytes(v: &str) -> Option<u64> {
    let n = leading_number(v)?;
    let unit = v.split_whitespace().nth(1).unwrap_or("MiB");
    let factor: f64 = match unit {
        "B" | "bytes" => 1.0,
        "KiB" | "KB" => 1024.0,
        "MiB" | "MB" => 1048576.0,
        "GiB" | "GB" => 1073741824.0,
        _ => return None,
    };
    let b = n * factor;
    (0.0..1.8e19).contains(&b).then(|| b.round() as u64)
}

/// nvidia-smi prints its two-state fields as one of these words (nvidia-smi(1): `Enabled` /
/// `Disabled` for modes, `Yes` / `No` for pending remaps and page blacklists, `Active` / `Not
/// Active` for each clocks event reason). Pastes add a note after the value (`Active
/// (bitmask 0x20)`, `Yes  <===`): the value is the leading word(s), up to whitespace or the end.
fn to_bool(v: &str) -> Option<bool> {
    const WORDS: &[(&str, bool)] = &[
        ("not active", false),
        ("enabled", true),
        ("disabled", false),
        ("active", true),
        ("yes", true),
        ("no", false),
        ("true", true),
        ("false", false),
        ("on", true),
        ("off", false),
    ];
    let v = v.trim().to_ascii_lowercase();
    WORDS.iter().find_map(|(w, b)| {
        let rest = v.strip_prefix(w)?;
        (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(*b)
    })
}

fn to_string(v: &str) -> Option<String> {
    Some(super::clip(v.trim(), 200))
}

fn compute_mode(v: &str) -> Option<String> {
    let k: String = v
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    Some(
        match k.as_str() {
            "default" => "Default",
            "exclusiveprocess" => "ExclusiveProcess",
            "exclusivethread" => "ExclusiveThread",
            "prohibited" => "Prohibited",
            _ => return to_string(v),
        }
        .to_string(),
    )
}

/// `13.0` → 13000, the encoding `nvmlSystemGetCudaDriverVersion` uses.
fn cuda_version_number(v: &str) -> Option<i32> {
    let mut it = v.trim().split('.');
    let major: i32 = it.next()?.trim().parse().ok()?;
    let minor: i32 = it.next().unwrap_or("0").trim().parse().ok()?;
    (0..1000)
        .contains(&major)
        .then_some(major * 1000 + minor.clamp(0, 99) * 10)
}

fn reason_name(key: &str) -> String {
    let k = key
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '-'], "_")
        .trim_start_matches("clocks_event_reason_")
        .trim_start_matches("clocks_throttle_reason_")
        .to_string();
    match k.as_str() {
        "idle" | "gpu_idle" => "GPU_IDLE".into(),
        "display_clock_setting" | "display_clocks_setting" => "DISPLAY_CLOCK_SETTING".into(),
        _ => k.to_ascii_uppercase(),
    }
}

// ---------------------------------------------------------------------------------------------
// Mapping.

fn map_reading(t: &Tree) -> Result<NvmlReading, super::ParseError> {
    // GPU sections: `GPU 00000000:00:06.0` headers (text) or `<gpu id=...>` (XML).
    // An XML fragment without its root element is read from the top, like a text fragment.
    let xml_root = t.child(ROOT, "nvidia_smi_log");
    let top = xml_root.unwrap_or(ROOT);
    let mut gpus: Vec<(usize, Option<String>)> = Vec::new();
    let mut orphans = false;
    for &c in t.children(top) {
        let key = t.key(c);
        if key.eq_ignore_ascii_case("gpu") {
            let id = t
                .child(c, "@id")
                .and_then(|i| t.value(i))
                .map(str::to_string);
            gpus.push((c, id));
        } else if let Some(id) = key.strip_prefix("GPU ").filter(|_| t.value(c).is_none()) {
            gpus.push((c, Some(id.trim().to_string())));
        } else if xml_root.is_none()
            && (if t.xml {
                is_gpu_element(key)
            } else {
                t.nodes[c].indent > 0 || is_gpu_field(key)
            })
        {
            orphans = true;
        }
    }
    // An excerpt that starts inside a GPU section: its fields belong to a GPU whose header the
    // paste cut off, so they are read as one GPU without a bus id.
    if orphans {
        gpus.insert(0, (ROOT, None));
    }

    let driver_version = field(
        t.first(top, &["Driver Version", "driver_version"]),
        to_string,
    );
    let cuda_driver_version = field(
        t.first(top, &["CUDA Version", "cuda_version"]),
        cuda_version_number,
    );
    if gpus.is_empty() && matches!(driver_version, Field::Error(_)) {
        return Err(super::ParseError::NotThisKind(
            "no `nvidia-smi -q` fields found in the text",
        ));
    }
    let cut = where_cut(t, top, xml_root.is_some(), &gpus);
    let mut gpus: Vec<GpuReading> = gpus
        .iter()
        .enumerate()
        .map(|(i, (node, header_id))| map_gpu(t, *node, header_id.as_deref(), i as u32))
        .collect();
    if let Some((why, attached, last_cut)) = cut {
        // what a cut GPU section lacks comes after the cut; GPUs never reached are unknown
        if let Some(last) = gpus.last_mut().filter(|_| last_cut) {
            mark_cut(last, &why);
        }
        let read = gpus.len();
        for i in read..attached.min(64) {
            let mut g = GpuReading {
                index: i as u32,
                ..Default::default()
            };
            mark_cut(
                &mut g,
                &format!(
                    "the paste stops before this GPU ({read} of {attached} attached GPUs shown)"
                ),
            );
            gpus.push(g);
        }
    }
    Ok(NvmlReading {
        driver_version,
        cuda_driver_version,
        nvml_version: absent(),
        init_ms: 0.0,
        gpus,
    })
}

/// Where a paste that starts at the log's head stops early, and how many GPUs it announced:
/// an XML document whose `</nvidia_smi_log>` never comes; text or XML that shows fewer GPU
/// sections than `Attached GPUs`; a full `-q` GPU section (it opens with `Product Name`)
/// without the `Processes` section that closes it. Fragments without the head are not
/// judged: what they lack may come before or after the excerpt.
fn where_cut(
    t: &Tree,
    top: usize,
    xml_root: bool,
    gpus: &[(usize, Option<String>)],
) -> Option<(String, usize, bool)> {
    let attached: Option<usize> = match t.first(top, &["Attached GPUs", "attached_gpus"]) {
        Look::Val(v) => v.trim().parse().ok(),
        _ => None,
    };
    if !xml_root && attached.is_none() {
        return None;
    }
    let shown = gpus.len();
    let last = gpus.last();
    let inside = |(_, id): &(usize, Option<String>)| {
        format!(
            "the paste stops inside GPU {}",
            id.as_deref().unwrap_or("section")
        )
    };
    let has = |n: usize, keys: [&str; 2]| keys.iter().any(|k| t.child(n, k).is_some());
    // the last GPU section itself is cut: the XML never closes, or a full `-q` section (it
    // opens with Product Name) lacks the Processes section that ends it
    let last_cut = last.filter(|(n, _)| {
        (t.xml && t.open_at_end > 0)
            || (!t.xml
                && has(*n, ["Product Name", "product_name"])
                && !has(*n, ["Processes", "processes"]))
    });
    let more = attached.is_some_and(|n| shown < n);
    let why = match (last_cut, more) {
        (Some(g), _) if !t.xml => format!("{}, before its Processes section", inside(g)),
        (Some(g), _) => inside(g),
        (None, true) => format!(
            "the paste shows {shown} of {} attached GPUs",
            attached.unwrap_or(0)
        ),
        (None, false) if t.xml && t.open_at_end > 0 => {
            "the XML stops before </nvidia_smi_log>".into()
        }
        (None, false) => return None,
    };
    Some((
        why,
        attached.unwrap_or(shown).max(shown),
        last_cut.is_some(),
    ))
}

/// Marks what a GPU section lacks as cut off rather than absent from the evidence.
fn mark_cut(g: &mut GpuReading, why: &str) {
    let reason = format!("{INPUT_ENDS_EARLY}: {why}");
    let Ok(mut v) = serde_json::to_value(&*g) else {
        return;
    };
    if let Some(o) = v.as_object_mut() {
        for f in o.values_mut() {
            let missing = f.get("error").and_then(|e| e.as_str()) == Some(NOT_IN_EVIDENCE)
                || f.as_str() == Some("not-supported");
            if missing {
                *f = serde_json::json!({ "error": reason });
            }
        }
    }
    if let Ok(n) = serde_json::from_value(v) {
        *g = n;
    }
}

/// A key that belongs inside a GPU section (not the log's header lines).
fn is_gpu_field(key: &str) -> bool {
    ![
        "Timestamp",
        "Driver Version",
        "CUDA Version",
        "Attached GPUs",
        "timestamp",
        "driver_version",
        "cuda_version",
        "attached_gpus",
    ]
    .iter()
    .any(|k| key.eq_ignore_ascii_case(k))
        && (is_q_key(key)
            || [
                "Clocks",
                "Max Clocks",
                "Utilization",
                "PCI",
                "Temperature",
                "ECC Mode",
                "ECC Errors",
                "Processes",
                "Power Readings",
                "GPU Power Readings",
                "MIG Mode",
                "Applications Clocks",
                "Default Applications Clocks",
            ]
            .iter()
            .any(|k| key.eq_ignore_ascii_case(k)))
}

/// An element that sits inside `<gpu>` in `-q -x` output.
fn is_gpu_element(key: &str) -> bool {
    [
        "product_name",
        "product_brand",
        "persistence_mode",
        "performance_state",
        "clocks_event_reasons",
        "clocks_throttle_reasons",
        "pci",
        "utilization",
        "fb_memory_usage",
        "ecc_errors",
        "ecc_mode",
        "retired_pages",
        "remapped_rows",
        "gpu_power_readings",
        "power_readings",
        "clocks",
        "max_clocks",
        "temperature",
        "processes",
        "compute_mode",
        "uuid",
        "vbios_version",
        "mig_mode",
        "applications_clocks",
        "default_applications_clocks",
        "supported_clocks",
        "supported_mem_clock",
        "supported_graphics_clock",
        "process_info",
    ]
    .contains(&key)
}

const POWER: [&str; 4] = [
    "GPU Power Readings",
    "Power Readings",
    "gpu_power_readings",
    "power_readings",
];

fn power_paths(keys: &[&str]) -> Vec<String> {
    POWER
        .iter()
        .flat_map(|s| keys.iter().map(move |k| format!("{s}/{k}")))
        .collect()
}

fn first_val<T>(
    t: &Tree,
    g: usize,
    paths: &[String],
    conv: impl Fn(&str) -> Option<T>,
) -> Field<T> {
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    field(t.first(g, &refs), conv)
}

fn map_gpu(t: &Tree, g: usize, header_id: Option<&str>, index: u32) -> GpuReading {
    let f = |paths: &[&str]| t.first(g, paths);
    let pci_bus_id = match f(&["PCI/Bus Id", "pci/pci_bus_id"]) {
        Look::Val(v) => Field::Ok(v.to_string()),
        Look::Na => Field::NotSupported,
        Look::Absent => match header_id {
            Some(id) => Field::Ok(id.to_string()),
            None => absent(),
        },
    };
    GpuReading {
        index,
        name: field(f(&["Product Name", "product_name"]), to_string),
        uuid: field(f(&["GPU UUID", "uuid"]), to_string),
        pci_bus_id,
        vbios: field(f(&["VBIOS Version", "vbios_version"]), to_string),
        persistence: field(f(&["Persistence Mode", "persistence_mode"]), to_bool),
        clock_sm: field(f(&["Clocks/SM", "clocks/sm_clock"]), to_u32),
        clock_sm_max: field(f(&["Max Clocks/SM", "max_clocks/sm_clock"]), to_u32),
        clock_graphics: field(f(&["Clocks/Graphics", "clocks/graphics_clock"]), to_u32),
        clock_graphics_max: field(
            f(&["Max Clocks/Graphics", "max_clocks/graphics_clock"]),
            to_u32,
        ),
        clock_mem: field(f(&["Clocks/Memory", "clocks/mem_clock"]), to_u32),
        clock_mem_max: field(f(&["Max Clocks/Memory", "max_clocks/mem_clock"]), to_u32),
        app_clock_graphics: field(
            f(&[
                "Applications Clocks/Graphics",
                "applications_clocks/graphics_clock",
            ]),
            to_u32,
        ),
        default_app_clock_graphics: field(
            f(&[
                "Default Applications Clocks/Graphics",
                "default_applications_clocks/graphics_clock",
            ]),
            to_u32,
        ),
        app_clock_mem: field(
            f(&[
                "Applications Clocks/Memory",
                "applications_clocks/mem_clock",
            ]),
            to_u32,
        ),
        default_app_clock_mem: field(
            f(&[
                "Default Applications Clocks/Memory",
                "default_applications_clocks/mem_clock",
            ]),
            to_u32,
        ),
        clocks_event_reasons: clocks_event_reasons(t, g),
        power_usage_mw: first_val(
            t,
            g,
            &power_paths(&[
                "Power Draw",
                "Average Power Draw",
                "Instantaneous Power Draw",
                "power_draw",
                "average_power_draw",
                "instant_power_draw",
            ]),
            to_milliwatts,
        ),
        power_limit_mw: first_val(
            t,
            g,
            &power_paths(&[
                "Power Limit",
                "Requested Power Limit",
                "power_limit",
                "requested_power_limit",
            ]),
            to_milliwatts,
        ),
        power_default_limit_mw: first_val(
            t,
            g,
            &power_paths(&["Default Power Limit", "default_power_limit"]),
            to_milliwatts,
        ),
        power_enforced_limit_mw: first_val(
            t,
            g,
            &power_paths(&[
                "Enforced Power Limit",
                "Current Power Limit",
                "enforced_power_limit",
                "current_power_limit",
            ]),
            to_milliwatts,
        ),
        temperature_c: field(
            f(&["Temperature/GPU Current Temp", "temperature/gpu_temp"]),
            to_u32,
        ),
        temperature_max_operating_c: max_operating_temp(t, g),
        ecc_enabled: field(f(&["ECC Mode/Current", "ecc_mode/current_ecc"]), to_bool),
        ecc_pending: field(f(&["ECC Mode/Pending", "ecc_mode/pending_ecc"]), to_bool),
        ecc_uncorrected_volatile: ecc_count(t, g, "Volatile", true),
        ecc_uncorrected_aggregate: ecc_count(t, g, "Aggregate", true),
        ecc_corrected_volatile: ecc_count(t, g, "Volatile", false),
        retired_pages_pending: field(
            f(&[
                "Retired Pages/Pending Page Blacklist",
                "Retired Pages/Pending Page Retirement",
                "Retired Pages/Pending",
                "retired_pages/pending_blacklist",
                "retired_pages/pending_retirement",
            ]),
            to_bool,
        ),
        retired_pages_count: retired_count(t, g),
        remapped_rows_correctable: field(
            f(&[
                "Remapped Rows/Correctable Error",
                "remapped_rows/remapped_row_corr",
            ]),
            to_u32,
        ),
        remapped_rows_uncorrectable: field(
            f(&[
                "Remapped Rows/Uncorrectable Error",
                "remapped_rows/remapped_row_unc",
            ]),
            to_u32,
        ),
        remapped_rows_pending: field(
            f(&[
                "Remapped Rows/Pending",
                "remapped_rows/remapped_row_pending",
            ]),
            to_bool,
        ),
        remapped_rows_failure: field(
            f(&[
                "Remapped Rows/Remapping Failure Occurred",
                "remapped_rows/remapped_row_failure",
            ]),
            to_bool,
        ),
        pcie_gen: field(
            f(&[
                "PCI/GPU Link Info/PCIe Generation/Current",
                "pci/pci_gpu_link_info/pcie_gen/current_link_gen",
            ]),
            to_u32,
        ),
        pcie_width: field(
            f(&[
                "PCI/GPU Link Info/Link Width/Current",
                "pci/pci_gpu_link_info/link_widths/current_link_width",
            ]),
            to_u32,
        ),
        pcie_max_gen: field(
            f(&[
                "PCI/GPU Link Info/PCIe Generation/Max",
                "pci/pci_gpu_link_info/pcie_gen/max_link_gen",
            ]),
            to_u32,
        ),
        pcie_max_width: field(
            f(&[
                "PCI/GPU Link Info/Link Width/Max",
                "pci/pci_gpu_link_info/link_widths/max_link_width",
            ]),
            to_u32,
        ),
        // `nvidia-smi -q` does not print NVLink state unless asked (`-d NVLINK` is separate).
        nvlinks: absent(),
        compute_mode: field(f(&["Compute Mode", "compute_mode"]), compute_mode),
        mig_current: field(f(&["MIG Mode/Current", "mig_mode/current_mig"]), to_bool),
        mig_pending: field(f(&["MIG Mode/Pending", "mig_mode/pending_mig"]), to_bool),
        utilization_gpu: field(f(&["Utilization/GPU", "utilization/gpu_util"]), to_u32),
        utilization_memory: field(
            f(&["Utilization/Memory", "utilization/memory_util"]),
            to_u32,
        ),
        memory_total: field(
            f(&["FB Memory Usage/Total", "fb_memory_usage/total"]),
            to_bytes,
        ),
        memory_used: field(
            f(&["FB Memory Usage/Used", "fb_memory_usage/used"]),
            to_bytes,
        ),
        memory_free: field(
            f(&["FB Memory Usage/Free", "fb_memory_usage/free"]),
            to_bytes,
        ),
        pstate: field(f(&["Performance State", "performance_state"]), to_string),
        processes: processes(t, g),
        utilization_gpu_samples: utilization_samples(t, g, &["GPU Utilization Samples"]),
        utilization_memory_samples: utilization_samples(t, g, &["Memory Utilization Samples"]),
        clocks_event_counters_us: clocks_event_counters(t, g),
        pcie_lspci: None,
    }
}

/// The GPU's max operating temperature (NVML's `NVML_TEMPERATURE_THRESHOLD_GPU_MAX`): printed
/// as `GPU Max Operating Temp` (`<gpu_temp_max_gpu_threshold>`) by drivers that give absolute
/// thresholds, and only as T.Limit figures by the R535+ drivers on Hopper, Ada and Blackwell:
/// `GPU T.Limit Temp` (`<gpu_temp_tlimit>`) is the current margin to the T.Limit reference
/// (NVML's `nvmlDeviceGetMarginTemperature`, "distance to nearest slowdown threshold") and
/// `GPU Max Operating T.Limit Temp` (`<gpu_temp_max_gpu_tlimit_threshold>`) is the max
/// operating threshold as an offset from that reference (0 C: the reference itself, -2 C two
/// degrees past it). NVML's `nvmlDeviceGetTemperatureThreshold` says these thresholds are no
/// longer read as absolute figures on Ada and later. The GPU reaches its max operating
/// temperature where the margin falls to the offset, so the absolute threshold is the current
/// temperature plus the margin left above that offset.
fn max_operating_temp(t: &Tree, g: usize) -> Field<u32> {
    let absolute = t.first(
        g,
        &[
            "Temperature/GPU Max Operating Temp",
            "temperature/gpu_temp_max_gpu_threshold",
        ],
    );
    if !matches!(absolute, Look::Absent) {
        return field(absolute, to_u32);
    }
    let num = |paths: &[&str]| match t.first(g, paths) {
        Look::Val(v) => leading_number(v),
        _ => None,
    };
    let current = num(&["Temperature/GPU Current Temp", "temperature/gpu_temp"]);
    let margin = num(&[
        "Temperature/GPU T.Limit Temp",
        "temperature/gpu_temp_tlimit",
    ]);
    let offset = num(&[
        "Temperature/GPU Max Operating T.Limit Temp",
        "temperature/gpu_temp_max_gpu_tlimit_threshold",
    ]);
    match (current, margin, offset) {
        (Some(c), Some(m), Some(o)) if (0.0..200.0).contains(&(c + m - o)) => {
            Field::Ok((c + m - o).round() as u32)
        }
        _ => field(absolute, to_u32),
    }
}

/// A `… Utilization Samples` block, which only the text of `-q -d UTILIZATION` prints:
/// `Duration`, `Number of Samples`, `Max`, `Min`, `Avg`. `None` unless `Avg` is a number
/// (drivers print `Not Found` on every line when they kept no samples).
fn utilization_samples(
    t: &Tree,
    g: usize,
    names: &[&str],
) -> Option<crate::vocab::nvml::UtilizationSamples> {
    let sec = t.section(g, names)?;
    let get = |keys: &[&str]| match t.first(sec, keys) {
        Look::Val(v) => Some(v),
        _ => None,
    };
    let avg = get(&["Avg", "avg"]).and_then(to_u32)?;
    let duration_s = get(&["Duration", "duration"])
        .and_then(leading_number)
        // no samples yet: the driver prints an overflowed 64-bit microsecond count
        .filter(|d| *d >= 0.0 && *d < 1e9);
    Some(crate::vocab::nvml::UtilizationSamples {
        avg,
        min: get(&["Min", "min"]).and_then(to_u32),
        max: get(&["Max", "max"]).and_then(to_u32),
        samples: get(&["Number of Samples", "Number of Sample"]).and_then(to_u32),
        duration_s,
    })
}

/// `Clocks Event Reasons Counters` (`-q -d PERFORMANCE`, drivers 535+): `SW Power Capping :
/// 0 us`, `HW Thermal Slowdown : 0 us`, … as microseconds by NVML reason name.
fn clocks_event_counters(t: &Tree, g: usize) -> Option<std::collections::BTreeMap<String, u64>> {
    let sec = t.section(
        g,
        &[
            "Clocks Event Reasons Counters",
            "clocks_event_reasons_counters",
        ],
    )?;
    let mut out = std::collections::BTreeMap::new();
    for &c in t.children(sec) {
        let Some(v) = t.value(c) else { continue };
        let Some(n) = leading_number(v).filter(|n| *n >= 0.0 && *n < 1.8e19) else {
            continue;
        };
        // microseconds as printed (`us`); `ms`/`s` scale up
        let us = match v.split_whitespace().nth(1) {
            Some("ms") => n * 1e3,
            Some("s") => n * 1e6,
            Some("ns") => n / 1e3,
            _ => n,
        };
        let key = t
            .key(c)
            .trim()
            .to_ascii_lowercase()
            .replace([' ', '-'], "_");
        // text `HW Power Braking`, XML `…_hw_power_brake`; text `Thermal`, XML `therm`
        let key = match key.trim_start_matches("clocks_event_reasons_counters_") {
            "sw_power_capping" | "sw_power_cap" => "SW_POWER_CAP".to_string(),
            "sync_boost" => "SYNC_BOOST".to_string(),
            "sw_thermal_slowdown" | "sw_therm_slowdown" => "SW_THERMAL_SLOWDOWN".to_string(),
            "hw_thermal_slowdown" | "hw_therm_slowdown" => "HW_THERMAL_SLOWDOWN".to_string(),
            "hw_power_braking" | "hw_power_brake" => "HW_POWER_BRAKE_SLOWDOWN".to_string(),
            other => other.to_ascii_uppercase(),
        };
        if out.len() < super::MAX_ITEMS {
            out.insert(key, us.round() as u64);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn clocks_event_reasons(t: &Tree, g: usize) -> Field<Vec<String>> {
    let Some(sec) = t.section(
        g,
        &[
            "Clocks Event Reasons",
            "Clocks Throttle Reasons",
            "clocks_event_reasons",
            "clocks_throttle_reasons",
        ],
    ) else {
        return lone_reason_lines(t, g);
    };
    let mut all = Vec::new();
    t.descendants(sec, &mut all);
    let mut active = Vec::new();
    let mut readable = 0;
    for id in all {
        let Some(v) = t.value(id) else { continue };
        if is_na(v) {
            continue;
        }
        if let Some(on) = to_bool(v) {
            readable += 1;
            let name = reason_name(t.key(id));
            if on && !active.contains(&name) {
                active.push(name);
            }
        }
    }
    if readable == 0 {
        Field::NotSupported
    } else {
        Field::Ok(active)
    }
}

/// A `Key : value` name only `nvidia-smi -q` prints: [`Q_KEYS`] or a reason line of
/// [`REASON_LINES`].
fn is_q_key(key: &str) -> bool {
    Q_KEYS
        .iter()
        .chain(REASON_LINES)
        .any(|k| key.eq_ignore_ascii_case(k))
}

/// The reason lines of `Clocks Event Reasons` (`Clocks Throttle Reasons` before R535), as
/// nvidia-smi(1) names them; each prints `Active` or `Not Active`.
const REASON_LINES: &[&str] = &[
    "Idle",
    "Applications Clocks Setting",
    "SW Power Cap",
    "HW Slowdown",
    "HW Thermal Slowdown",
    "HW Power Brake Slowdown",
    "Sync Boost",
    "SW Thermal Slowdown",
    "Display Clock Setting",
];

/// Reason lines without their section header, as `nvidia-smi -q | grep "HW Power Brake"` leaves
/// them or an excerpt cut above the header. The lines shown are only some of the reasons: those
/// `Active` are active (a fact), but `Not Active` on the lines shown says nothing of the others,
/// so without an active one the reasons stay unknown rather than none.
fn lone_reason_lines(t: &Tree, g: usize) -> Field<Vec<String>> {
    let mut active = Vec::new();
    for &c in t.children(g) {
        let key = t.key(c);
        if !REASON_LINES.iter().any(|r| key.eq_ignore_ascii_case(r)) {
            continue;
        }
        if t.value(c).and_then(to_bool) == Some(true) {
            let name = reason_name(key);
            if !active.contains(&name) {
                active.push(name);
            }
        }
    }
    if active.is_empty() {
        absent()
    } else {
        Field::Ok(active)
    }
}

/// Sum of the uncorrectable (or correctable) counters of an ECC section. Older drivers print
/// `Double Bit`/`Single Bit` groups with a `Total`; newer ones print SRAM and DRAM counters.
fn ecc_count(t: &Tree, g: usize, which: &str, uncorrected: bool) -> Field<u64> {
    let Some(sec) = t.section(
        g,
        &[
            &format!("ECC Errors/{which}"),
            &format!("ecc_errors/{}", which.to_ascii_lowercase()),
        ],
    ) else {
        return match t.first(g, &["ECC Errors", "ecc_errors"]) {
            Look::Na => Field::NotSupported,
            _ => absent(),
        };
    };
    let group = if uncorrected {
        ["Double Bit", "double_bit"]
    } else {
        ["Single Bit", "single_bit"]
    };
    if let Some(grp) = group.iter().find_map(|k| t.child(sec, k)) {
        return field(t.first(grp, &["Total", "total"]), to_u64);
    }
    let (mut sum, mut seen, mut na) = (0u64, false, false);
    for &c in t.children(sec) {
        let key = t.key(c).to_ascii_lowercase();
        let unc = key.contains("uncorrectable");
        let matches = if uncorrected {
            unc
        } else {
            key.contains("correctable") && !unc
        };
        if !matches {
            continue;
        }
        match t.value(c) {
            Some(v) if is_na(v) => na = true,
            Some(v) => {
                if let Some(n) = to_u64(v) {
                    sum = sum.saturating_add(n);
                    seen = true;
                }
            }
            None => {}
        }
    }
    if seen {
        Field::Ok(sum)
    } else if na {
        Field::NotSupported
    } else {
        absent()
    }
}

fn retired_count(t: &Tree, g: usize) -> Field<u64> {
    let sbe = t.first(
        g,
        &[
            "Retired Pages/Single Bit ECC",
            "retired_pages/multiple_single_bit_retirement/retired_count",
        ],
    );
    let dbe = t.first(
        g,
        &[
            "Retired Pages/Double Bit ECC",
            "retired_pages/double_bit_retirement/retired_count",
        ],
    );
    match (field(sbe, to_u64), field(dbe, to_u64)) {
        (Field::Ok(a), Field::Ok(b)) => Field::Ok(a.saturating_add(b)),
        (Field::Ok(a), Field::NotSupported) | (Field::NotSupported, Field::Ok(a)) => Field::Ok(a),
        (Field::NotSupported, Field::NotSupported) => Field::NotSupported,
        (Field::Error(e), _) | (_, Field::Error(e)) => Field::Error(e),
    }
}

fn processes(t: &Tree, g: usize) -> Field<Vec<ProcessMem>> {
    let Some(sec) = t.section(g, &["Processes", "processes"]) else {
        return absent();
    };
    let kids = t.children(sec);
    if kids.is_empty() {
        return match t.value(sec) {
            Some(v) if is_na(v) => Field::NotSupported,
            // `Processes : None` (text) or an empty `<processes>` element (XML).
            _ => Field::Ok(Vec::new()),
        };
    }
    let mut out = Vec::new();
    for (i, &c) in kids.iter().enumerate() {
        let key = t.key(c);
        let (pid, attrs): (Option<u32>, Vec<usize>) = if key.eq_ignore_ascii_case("process_info") {
            let pid = t.child(c, "pid").and_then(|p| t.value(p)).and_then(to_u32);
            (pid, t.children(c).to_vec())
        } else if key.eq_ignore_ascii_case("Process ID") {
            let pid = t.value(c).and_then(to_u32);
            // Type and memory sit either under the `Process ID` line or after it as siblings.
            let mut attrs = t.children(c).to_vec();
            attrs.extend(
                kids[i + 1..]
                    .iter()
                    .copied()
                    .take_while(|&s| !t.key(s).eq_ignore_ascii_case("Process ID")),
            );
            (pid, attrs)
        } else {
            continue;
        };
        let Some(pid) = pid else { continue };
        let get = |names: &[&str]| {
            attrs
                .iter()
                .copied()
                .find(|&a| names.iter().any(|n| t.key(a).eq_ignore_ascii_case(n)))
                .and_then(|a| t.value(a))
        };
        let kind = match get(&["Type", "type"]).map(str::trim) {
            Some("C") => "compute",
            Some("G") => "graphics",
            Some("C+G") => "compute+graphics",
            _ => "unknown",
        };
        let used_memory = get(&["Used GPU Memory", "used_memory"]).and_then(to_bytes);
        if out.len() < super::MAX_ITEMS {
            let name = get(&["Name", "Process Name", "process_name"])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| super::clip(n, 200));
            out.push(ProcessMem {
                pid,
                used_memory,
                kind: kind.to_string(),
                name,
            });
        }
    }
    Field::Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    fn gpu(r: &NvmlReading) -> &GpuReading {
        &r.gpus[0]
    }

    #[test]
    fn h200_text_maps_every_field_the_live_read_has() {
        let r = parse_nvidia_smi_text(&fixture("nvidia_smi/h200-q.txt")).unwrap();
        assert_eq!(r.driver_version, Field::Ok("580.159.04".into()));
        assert_eq!(r.cuda_driver_version, Field::Ok(13000));
        assert_eq!(r.nvml_version, Field::Error(NOT_IN_EVIDENCE.into()));
        let g = gpu(&r);
        assert_eq!(g.pci_bus_id, Field::Ok("00000000:00:06.0".into()));
        assert_eq!(g.clock_sm, Field::Ok(345));
        assert_eq!(g.clock_sm_max, Field::Ok(1980));
        assert_eq!(g.clocks_event_reasons, Field::Ok(vec!["GPU_IDLE".into()]));
        assert_eq!(g.power_usage_mw, Field::Ok(80630));
        assert_eq!(g.power_limit_mw, Field::Ok(700_000));
        assert_eq!(g.power_enforced_limit_mw, Field::Ok(700_000));
        assert_eq!(g.memory_total, Field::Ok(150_754_820_096));
        assert_eq!(g.retired_pages_count, Field::NotSupported);
        assert_eq!(g.retired_pages_pending, Field::NotSupported);
        assert_eq!(g.remapped_rows_pending, Field::Ok(false));
        assert_eq!(g.ecc_uncorrected_volatile, Field::Ok(0));
        assert_eq!(g.pcie_gen, Field::Ok(5));
        assert_eq!(g.pcie_max_width, Field::Ok(16));
        assert_eq!(g.compute_mode, Field::Ok("Default".into()));
        assert_eq!(g.mig_current, Field::Ok(false));
        assert_eq!(g.processes, Field::Ok(vec![]));
        assert_eq!(g.pstate, Field::Ok("P0".into()));
        insta::assert_json_snapshot!("nvidia_smi_h200_text", r);
    }

    #[test]
    fn h200_xml_agrees_with_text_where_the_readings_are_static() {
        let x = parse_nvidia_smi_xml(&fixture("nvidia_smi/h200-q-x.xml")).unwrap();
        let t = parse_nvidia_smi_text(&fixture("nvidia_smi/h200-q.txt")).unwrap();
        let (gx, gt) = (gpu(&x), gpu(&t));
        assert_eq!(gx.pci_bus_id, gt.pci_bus_id);
        assert_eq!(gx.uuid, gt.uuid);
        assert_eq!(gx.clock_sm_max, gt.clock_sm_max);
        assert_eq!(gx.clocks_event_reasons, gt.clocks_event_reasons);
        assert_eq!(gx.power_default_limit_mw, gt.power_default_limit_mw);
        assert_eq!(gx.ecc_enabled, gt.ecc_enabled);
        assert_eq!(gx.retired_pages_count, gt.retired_pages_count);
        assert_eq!(
            gx.remapped_rows_uncorrectable,
            gt.remapped_rows_uncorrectable
        );
        assert_eq!(gx.pcie_max_gen, gt.pcie_max_gen);
        assert_eq!(gx.clocks_event_counters_us, gt.clocks_event_counters_us);
        assert_eq!(gx.memory_total, gt.memory_total);
        assert_eq!(gx.processes, Field::Ok(vec![]));
        insta::assert_json_snapshot!("nvidia_smi_h200_xml", x);
    }

    #[test]
    fn older_driver_text_uses_old_key_names() {
        let r = parse_nvidia_smi_text(&fixture("nvidia_smi/titan_v_tail.txt")).unwrap();
        // The paste starts inside a GPU section, then a full header follows.
        assert_eq!(r.gpus.len(), 2);
        let g = gpu(&r);
        assert_eq!(g.pci_bus_id, Field::Error(NOT_IN_EVIDENCE.into()));
        // The `Power Readings` header was cut off, so its lines cannot be placed: not guessed.
        assert_eq!(
            g.power_enforced_limit_mw,
            Field::Error(NOT_IN_EVIDENCE.into())
        );
        assert_eq!(g.app_clock_graphics, Field::Ok(1200));
        assert_eq!(g.clock_sm_max, Field::Ok(1912));
        assert_eq!(g.processes, Field::Ok(vec![]));
        assert_eq!(r.gpus[1].pci_bus_id, Field::Ok("00000000:83:00.0".into()));
        assert_eq!(r.gpus[1].name, Field::Ok("TITAN V".into()));
        insta::assert_json_snapshot!("nvidia_smi_titan_v_tail", r);
    }

    #[test]
    fn cut_xml_and_text_say_input_ends_early() {
        let xml = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/smi_x_full_head_with_command.xml"),
        )
        .unwrap();
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/corpus/smi_q_full_head_gtx780.txt"),
        )
        .unwrap();
        for (name, full, parse) in [
            (
                "xml",
                xml.as_str(),
                parse_nvidia_smi_xml
                    as fn(&str) -> Result<NvmlReading, crate::evidence::ParseError>,
            ),
            ("text", text.as_str(), parse_nvidia_smi_text),
        ] {
            // cut the real paste right after its first GPU's product name
            let at = full
                .find("product_name")
                .or_else(|| full.find("Product Name"))
                .unwrap();
            let cut = &full[..full[at..].find('\n').map(|n| at + n + 1).unwrap()];
            let r = parse(cut).unwrap();
            let g = &r.gpus[0];
            assert!(
                g.name.ok().is_some(),
                "{name}: the name before the cut is read"
            );
            let why = g.temperature_c.reason().unwrap();
            assert!(why.starts_with("input ends early"), "{name}: {why}");
        }
    }

    #[test]
    fn a_gpu_never_reached_is_unknown_not_absent() {
        let t = "==============NVSMI LOG==============\n\nDriver Version : 535.54.03\nAttached GPUs : 2\nGPU 00000000:01:00.0\n    Product Name : Tesla V100\n    Persistence Mode : Enabled\n    Processes : None\n";
        let r = parse_nvidia_smi_text(t).unwrap();
        assert_eq!(r.gpus.len(), 2);
        assert_eq!(r.gpus[0].persistence, Field::Ok(true));
        // the first GPU's section is complete: what it lacks is not in the evidence
        assert!(
            r.gpus[0]
                .temperature_c
                .reason()
                .unwrap()
                .contains(NOT_IN_EVIDENCE)
        );
        let why = r.gpus[1].persistence.reason().unwrap();
        assert!(why.starts_with("input ends early"), "{why}");
        assert!(why.contains("1 of 2"), "{why}");
    }

    #[test]
    fn max_operating_temperature_from_text_and_xml() {
        let t = "GPU 00000000:2D:00.0\n    Temperature\n        GPU Current Temp : 56 C\n        GPU Shutdown Temp : 102 C\n        GPU Slowdown Temp : 97 C\n        GPU Max Operating Temp : 57 C\n";
        let r = parse_nvidia_smi_text(t).unwrap();
        assert_eq!(r.gpus[0].temperature_c, Field::Ok(56));
        assert_eq!(r.gpus[0].temperature_max_operating_c, Field::Ok(57));
        let x = "<gpu id=\"00000000:2D:00.0\">\n<temperature>\n<gpu_temp>56 C</gpu_temp>\n<gpu_temp_max_threshold>102 C</gpu_temp_max_threshold>\n<gpu_temp_slow_threshold>97 C</gpu_temp_slow_threshold>\n<gpu_temp_max_gpu_threshold>57 C</gpu_temp_max_gpu_threshold>\n</temperature>\n</gpu>\n";
        let r = parse_nvidia_smi_xml(x).unwrap();
        assert_eq!(r.gpus[0].temperature_max_operating_c, Field::Ok(57));
    }

    #[test]
    fn max_operating_temperature_from_t_limit_figures() {
        let corpus = |name: &str| {
            std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/corpus")
                    .join(name),
            )
            .unwrap()
        };
        // h96: thamada/gls's GH200 -a (R550): 31 C now, T.Limit margin 55 C, max operating
        // at the T.Limit reference (0 C): the threshold is 86 C
        let r =
            parse_nvidia_smi_text(&corpus("h96_smiq_gls_gh200_550_dbe_remapped_done.txt")).unwrap();
        assert_eq!(gpu(&r).temperature_c, Field::Ok(31));
        assert_eq!(gpu(&r).temperature_max_operating_c, Field::Ok(86));
        // the same figures in the XML form (the project's H200 capture, R570): 39 + 48 - 0
        let r = parse_nvidia_smi_xml(&corpus("h200_smi_qx_idle.xml")).unwrap();
        assert_eq!(gpu(&r).temperature_c, Field::Ok(39));
        assert_eq!(gpu(&r).temperature_max_operating_c, Field::Ok(87));
        // a max operating offset past the reference counts: 80 C, margin 1 C, offset -2 C
        let t = "GPU 00000000:01:00.0\n    Temperature\n        GPU Current Temp : 80 C\n        GPU T.Limit Temp : 1 C\n        GPU Max Operating T.Limit Temp : -2 C\n";
        let r = parse_nvidia_smi_text(t).unwrap();
        assert_eq!(gpu(&r).temperature_max_operating_c, Field::Ok(83));
        // healthy neighbour: a v13 XML whose T.Limit is N/A keeps its absolute threshold
        let r =
            parse_nvidia_smi_xml(&corpus("h96_smix_telegraf_rtx3080_595_v13_busy.xml")).unwrap();
        assert_eq!(gpu(&r).temperature_max_operating_c, Field::Ok(93));
        // a margin without its reference offset says nothing absolute
        let t = "GPU 00000000:01:00.0\n    Temperature\n        GPU Current Temp : 80 C\n        GPU T.Limit Temp : 1 C\n";
        let r = parse_nvidia_smi_text(t).unwrap();
        assert!(gpu(&r).temperature_max_operating_c.ok().is_none());
    }

    #[test]
    fn a_run_of_supported_graphics_clocks_is_an_xml_fragment() {
        // netdata/netdata#10362: `<supported_graphics_clock>` elements of `nvidia-smi -q -x`
        let t = "\t\t\t\t<supported_graphics_clock>1000 MHz</supported_graphics_clock>\n\t\t\t\t<supported_graphics_clock>987 MHz</supported_graphics_clock>\n\t\t\t\t<supported_graphics_clock>975 MHz</supported_graphics_clock>\n";
        assert!(looks_like_xml(t));
        let r = parse_nvidia_smi(t).unwrap();
        assert_eq!(r.gpus.len(), 1);
        // influxdata/telegraf#12996: `<process_info>` elements of a `-q -x` pasted alone
        let p = "\t\t\t<process_info>\n\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>\n\t\t\t\t<compute_instance_id>N/A</compute_instance_id>\n\t\t\t\t<pid>13048</pid>\n\t\t\t\t<type>C+G</type>\n\t\t\t\t<process_name>C:\\Program Files\\Electronic Arts\\EA Desktop\\EA Desktop\\EADesktop.exe</process_name>\n\t\t\t\t<used_memory>N/A</used_memory>\n\t\t\t</process_info>\n";
        assert!(looks_like_xml(p));
        assert_eq!(parse_nvidia_smi(p).unwrap().gpus.len(), 1);
        // one element is too little to call it nvidia-smi's
        assert!(!looks_like_xml(
            "<supported_graphics_clock>1000 MHz</supported_graphics_clock>\n"
        ));
    }

    #[test]
    fn a_fragment_without_the_head_is_not_called_cut() {
        let t = "    Clocks\n        Graphics : 435 MHz\n        SM : 435 MHz\n    Max Clocks\n        Graphics : 1740 MHz\n";
        let r = parse_nvidia_smi_text(t).unwrap();
        assert!(
            r.gpus[0]
                .temperature_c
                .reason()
                .unwrap()
                .contains(NOT_IN_EVIDENCE)
        );
    }

    #[test]
    fn a_quoted_paste_reads_as_the_paste() {
        // a GitHub reply quotes the -q excerpt with `> ` before every line
        let plain = fixture("nvidia_smi/reasons_utilization_excerpt.txt");
        let quoted: String = plain.lines().map(|l| format!("> {l}\n")).collect();
        assert_eq!(
            parse_nvidia_smi_text(&quoted).unwrap(),
            parse_nvidia_smi_text(&plain).unwrap()
        );
        let x = fixture("nvidia_smi/gtx_1080_truncated.xml");
        let qx: String = x.lines().map(|l| format!(">{l}\n")).collect();
        assert_eq!(
            parse_nvidia_smi_xml(&qx).unwrap(),
            parse_nvidia_smi_xml(&x).unwrap()
        );
    }

    #[test]
    fn truncated_public_paste_keeps_the_head() {
        let r = parse_nvidia_smi_text(&fixture("nvidia_smi/v100_truncated.txt")).unwrap();
        assert_eq!(r.driver_version, Field::Ok("390.30".into()));
        // Driver 390 printed no CUDA version line.
        assert_eq!(r.cuda_driver_version, Field::Error(NOT_IN_EVIDENCE.into()));
        let g = gpu(&r);
        assert_eq!(g.name, Field::Ok("Tesla V100-SXM2-16GB".into()));
        assert_eq!(g.persistence, Field::Ok(true));
        // the paste stops inside the GPU's section: what it lacks is cut off, not absent
        assert!(g.clock_sm.reason().unwrap().starts_with(INPUT_ENDS_EARLY));
        insta::assert_json_snapshot!("nvidia_smi_v100_truncated", r);
    }

    #[test]
    fn older_throttle_reasons_and_gpu_utilization_spelling() {
        let r =
            parse_nvidia_smi_text(&fixture("nvidia_smi/reasons_utilization_excerpt.txt")).unwrap();
        let g = gpu(&r);
        assert_eq!(g.utilization_gpu, Field::Ok(0));
        assert_eq!(g.memory_total, Field::Ok(8119 * 1048576));
        assert_eq!(g.compute_mode, Field::Ok("Default".into()));
        insta::assert_json_snapshot!("nvidia_smi_reasons_utilization_excerpt", r);
    }

    #[test]
    fn public_xml_excerpt_with_throttle_reasons() {
        let r = parse_nvidia_smi_xml(&fixture("nvidia_smi/gtx_1080_truncated.xml")).unwrap();
        assert_eq!(r.driver_version, Field::Ok("430.26".into()));
        assert_eq!(r.cuda_driver_version, Field::Ok(10020));
        let g = gpu(&r);
        assert_eq!(g.persistence, Field::Ok(false));
        assert_eq!(g.pci_bus_id, Field::Ok("00000000:01:00.0".into()));
        insta::assert_json_snapshot!("nvidia_smi_gtx_1080_truncated_xml", r);
    }

    #[test]
    fn old_ecc_layout_and_na_sections() {
        let text = "GPU 00000000:84:00.0\n    ECC Errors\n        Volatile\n            Single Bit\n                Total : 3\n            Double Bit\n                Device Memory : 1\n                Total : 2\n    Remapped Rows : N/A\n    Retired Pages\n        Single Bit ECC : 1\n        Double Bit ECC : 2\n        Pending Page Blacklist : Yes\n    Processes\n        Process ID : 24010\n            Type : C\n            Name : python\n            Used GPU Memory : 10000 MiB\n        Process ID : 1\n            Type : G\n            Used GPU Memory : Not available in WDDM driver model\n    Clocks Throttle Reasons\n        Idle : Not Active\n        SW Power Cap : Active\n        HW Slowdown : Active\n    Compute Mode : Exclusive_Process\n    Power Readings\n        Power Draw : [Unknown Error]\n";
        let g = parse_nvidia_smi_text(text).unwrap().gpus.remove(0);
        assert_eq!(g.ecc_uncorrected_volatile, Field::Ok(2));
        assert_eq!(g.ecc_corrected_volatile, Field::Ok(3));
        assert_eq!(g.remapped_rows_correctable, Field::NotSupported);
        assert_eq!(g.retired_pages_count, Field::Ok(3));
        assert_eq!(g.retired_pages_pending, Field::Ok(true));
        assert_eq!(
            g.clocks_event_reasons,
            Field::Ok(vec!["SW_POWER_CAP".into(), "HW_SLOWDOWN".into()])
        );
        assert_eq!(g.compute_mode, Field::Ok("ExclusiveProcess".into()));
        assert_eq!(
            g.processes,
            Field::Ok(vec![
                ProcessMem {
                    pid: 24010,
                    used_memory: Some(10000 * 1048576),
                    kind: "compute".into(),
                    name: Some("python".into()),
                },
                ProcessMem {
                    pid: 1,
                    used_memory: None,
                    kind: "graphics".into(),
                    name: None,
                },
            ])
        );
        assert_eq!(
            g.power_usage_mw,
            Field::Error("nvidia-smi printed `[Unknown Error]`".into())
        );
    }

    // --- `nvidia-smi -q -d SECTION` pastes, one public example each (cited in the fixtures) ---

    #[test]
    fn utilization_samples_are_read_and_an_overflowed_duration_is_dropped() {
        let r = parse_nvidia_smi_text(&fixture("nvidia_smi/q_d_utilization_samples_encoder.txt"))
            .unwrap();
        assert_eq!(r.driver_version, Field::Ok("396.24".into()));
        let g = gpu(&r);
        assert_eq!(g.pci_bus_id, Field::Ok("00000000:08:00.0".into()));
        // the instant reading and the driver's samples over its window
        assert_eq!(g.utilization_gpu, Field::Ok(1));
        let s = g.utilization_gpu_samples.clone().unwrap();
        assert_eq!(
            (s.avg, s.min, s.max, s.samples),
            (0, Some(0), Some(1), Some(99))
        );
        // `18446744073709.21 sec` is the driver's overflow, not a duration: the block is
        // read but does not stand for a window
        assert_eq!(s.duration_s, None);
        assert!(!s.usable());
        let m = g.utilization_memory_samples.clone().unwrap();
        assert_eq!((m.avg, m.max), (0, Some(1)));
        // a section paste says nothing of the rest: not in the evidence, never a default
        assert_eq!(g.persistence, Field::Error(NOT_IN_EVIDENCE.into()));
        assert_eq!(g.processes, Field::Error(NOT_IN_EVIDENCE.into()));
    }

    #[test]
    fn samples_a_driver_did_not_keep_are_no_samples() {
        // `Power Samples` of a laptop driver print `Not Found`; the utilization blocks do the
        // same, and a block without a numeric Avg is no reading
        let t = "GPU 00000000:01:00.0\n    GPU Utilization Samples\n        Duration : Not Found\n        Number of Samples : Not Found\n        Max : Not Found\n        Min : Not Found\n        Avg : Not Found\n";
        let r = parse_nvidia_smi_text(t).unwrap();
        assert_eq!(gpu(&r).utilization_gpu_samples, None);
        let r =
            parse_nvidia_smi_text(&fixture("nvidia_smi/q_d_power_at_default_laptop.txt")).unwrap();
        assert_eq!(gpu(&r).utilization_gpu_samples, None);
    }

    #[test]
    fn power_section_newer_wording_below_and_at_default() {
        // Current Power Limit is the limit in force; Requested is what was asked for
        let r = parse_nvidia_smi_text(&fixture(
            "nvidia_smi/q_d_power_current_limit_below_default.txt",
        ))
        .unwrap();
        let g = gpu(&r);
        assert_eq!(g.power_enforced_limit_mw, Field::Ok(500_000));
        assert_eq!(g.power_limit_mw, Field::Ok(700_000));
        assert_eq!(g.power_default_limit_mw, Field::Ok(700_000));
        assert_eq!(g.power_usage_mw, Field::Ok(78_830));
        // the paste shows 1 of 4 attached GPUs: the others are unknown, not healthy
        assert_eq!(r.gpus.len(), 4);
        assert!(
            r.gpus[1]
                .power_enforced_limit_mw
                .reason()
                .unwrap()
                .starts_with(INPUT_ENDS_EARLY)
        );
        let r =
            parse_nvidia_smi_text(&fixture("nvidia_smi/q_d_power_at_default_laptop.txt")).unwrap();
        let g = gpu(&r);
        assert_eq!(g.power_enforced_limit_mw, Field::Ok(35_000));
        assert_eq!(g.power_default_limit_mw, Field::Ok(35_000));
        assert_eq!(g.power_usage_mw, Field::Ok(1_440));
    }

    #[test]
    fn power_and_clocks_older_wording() {
        let r =
            parse_nvidia_smi_text(&fixture("nvidia_smi/q_power_clocks_older_wording.txt")).unwrap();
        let g = gpu(&r);
        assert_eq!(g.power_limit_mw, Field::Ok(250_000));
        assert_eq!(g.power_enforced_limit_mw, Field::Ok(250_000));
        assert_eq!(g.power_default_limit_mw, Field::Ok(250_000));
        assert_eq!(g.power_usage_mw, Field::Ok(65_790));
        assert_eq!(g.clock_sm, Field::Ok(1480));
        assert_eq!(g.clock_sm_max, Field::Ok(1911));
        assert_eq!(g.clock_mem_max, Field::Ok(5505));
        // a GeForce prints N/A for application clocks: not supported, not a value
        assert_eq!(g.app_clock_graphics, Field::NotSupported);
        assert_eq!(g.default_app_clock_graphics, Field::NotSupported);
    }

    use crate::test_corpus as corpus;

    #[test]
    fn a_reason_value_with_a_note_after_it_is_read() {
        // https://github.com/kaievns/gpu-node/blob/8682dec0792243681293aacaf93d7356d3a01c0d/docs/lessons/xid79-gddr6x-heat-soak.md
        // `SW Thermal Slowdown : Active      (bitmask 0x20)` during a soak run: a problem
        let r =
            parse_nvidia_smi_text(&corpus("h66_smiq_xid79_rtx3080_sw_thermal_soak.txt")).unwrap();
        assert_eq!(
            gpu(&r).clocks_event_reasons,
            Field::Ok(vec!["SW_THERMAL_SLOWDOWN".into()])
        );
        // the same line Not Active, with the same note: no reason (healthy)
        let cool = "Clocks Event Reasons\n    SW Thermal Slowdown               : Not Active      (bitmask 0x20)\n";
        assert_eq!(
            gpu(&parse_nvidia_smi_text(cool).unwrap()).clocks_event_reasons,
            Field::Ok(vec![])
        );
        // https://github.com/sayfjawad/dell-poweredge-c4130-v100-32g-solution/blob/d2cab0e4e79b6f34f475fe6ea9f80bb6a11bb7bf/README.md
        // the power brake held by the iDRAC, SM `382 MHz   ← should be ~1530 MHz`: a problem
        let r =
            parse_nvidia_smi_text(&corpus("h66_smiq_c4130_v100_power_brake_382mhz.txt")).unwrap();
        let g = gpu(&r);
        assert_eq!(
            g.clocks_event_reasons,
            Field::Ok(vec!["HW_SLOWDOWN".into(), "HW_POWER_BRAKE_SLOWDOWN".into()])
        );
        assert_eq!(g.clock_sm, Field::Ok(382));
    }

    #[test]
    fn two_state_words_take_the_leading_word_only() {
        assert_eq!(to_bool("Active      (bitmask 0x20)"), Some(true));
        assert_eq!(to_bool("Not Active"), Some(false));
        assert_eq!(to_bool("Yes                      <==="), Some(true));
        assert_eq!(to_bool("No"), Some(false));
        assert_eq!(to_bool("Enabled"), Some(true));
        // a word that only starts like one of them is not it
        assert_eq!(to_bool("None"), None);
        assert_eq!(to_bool("Activated"), None);
        assert_eq!(to_bool("Note: see below"), None);
    }

    #[test]
    fn a_hand_cut_clock_section_is_a_q_fragment() {
        // the same README's 'GPU Clocks After Fix': `Clocks` / `SM : 1530 MHz   ← full speed` /
        // `Memory : 877 MHz` and a grep'd reason line outside its section: healthy
        let text = corpus("h66_smiq_c4130_v100_after_fix_1530mhz.txt");
        assert!(looks_like_q_fragment(&text));
        let r = parse_nvidia_smi_text(&text).unwrap();
        let g = gpu(&r);
        assert_eq!(g.clock_sm, Field::Ok(1530));
        assert_eq!(g.clock_mem, Field::Ok(877));
        // one reason shown Not Active says nothing of the others: unknown, not none
        assert_eq!(g.clocks_event_reasons, Field::Error(NOT_IN_EVIDENCE.into()));
        // a lone reason line that is Active is a fact
        let brake = "Clocks\n    SM                                : 382 MHz\n\nHW Power Brake Slowdown : Active\n";
        assert_eq!(
            gpu(&parse_nvidia_smi_text(brake).unwrap()).clocks_event_reasons,
            Field::Ok(vec!["HW_POWER_BRAKE_SLOWDOWN".into()])
        );
        // a clock header over lines that are not nvidia-smi's clock readings is not claimed
        assert!(!looks_like_q_fragment(
            "Clocks\n    Memory : 16 GB\n    SM : enabled\nHW Slowdown : yes\n"
        ));
        assert!(!looks_like_q_fragment("Clocks\n  Graphics : 1500 MHz\n"));
    }

    #[test]
    fn remap_pending_retired_pages_and_sram_counts_from_the_ml_engineering_guide() {
        // https://github.com/stas00/ml-engineering/blob/744d01e18b79512572f64a6bbd8b5f4a725203a7/compute/accelerator/nvidia/debug.md
        // Xid 63 on an A100: a row remap recorded and Pending Yes (a problem)
        let r =
            parse_nvidia_smi_text(&corpus("h66_smiq_mleng_a100_xid63_remap_pending.txt")).unwrap();
        let g = gpu(&r);
        assert_eq!(g.remapped_rows_pending, Field::Ok(true));
        assert_eq!(g.remapped_rows_failure, Field::Ok(false));
        assert_eq!(g.ecc_uncorrected_volatile, Field::Ok(0));
        assert_eq!(g.ecc_corrected_volatile, Field::Ok(177));
        // `Retired pages` (so spelled in the guide) with Pending Page Blacklist Yes
        let r = parse_nvidia_smi_text(&corpus(
            "h66_smiq_mleng_retired_pages_pending_blacklist.txt",
        ))
        .unwrap();
        assert_eq!(gpu(&r).retired_pages_pending, Field::Ok(true));
        assert_eq!(gpu(&r).retired_pages_count, Field::Ok(2));
        // the broken GPU's ECC record: 1 volatile SRAM uncorrectable (a problem)
        let r = parse_nvidia_smi_text(&corpus("h66_smiq_mleng_sram_uncorrectable_volatile.txt"))
            .unwrap();
        assert_eq!(gpu(&r).ecc_uncorrected_volatile, Field::Ok(1));
        assert_eq!(gpu(&r).ecc_uncorrected_aggregate, Field::Ok(5));
        // https://github.com/leptonai/gpud/blob/a7cdf53da3fb277bfa0fe21518211a7d9f2befa4/components/accelerator/nvidia/query/testdata/nvidia-smi-query.535.154.05.out.1.valid
        // healthy 4090s: no remap pending, and SW Power Cap at full load read as it is
        let r = parse_nvidia_smi_text(&corpus(
            "h66_smiq_gpud_4090x8_53515405_busy_sw_power_cap.txt",
        ))
        .unwrap();
        assert_eq!(r.gpus[0].remapped_rows_pending, Field::Ok(false));
        assert_eq!(
            r.gpus[1].clocks_event_reasons,
            Field::Ok(vec!["SW_POWER_CAP".into()])
        );
        assert_eq!(r.gpus[1].utilization_gpu, Field::Ok(97));
    }

    #[test]
    fn performance_section_with_and_without_the_banner() {
        let full = fixture("nvidia_smi/q_d_performance_idle.txt");
        let r = parse_nvidia_smi_text(&full).unwrap();
        let g = gpu(&r);
        assert_eq!(g.pstate, Field::Ok("P0".into()));
        assert_eq!(g.clocks_event_reasons, Field::Ok(vec!["GPU_IDLE".into()]));
        // the same section without banner, Timestamp and Driver Version
        let bare: String = full
            .lines()
            .skip_while(|l| !l.starts_with("GPU "))
            .map(|l| format!("{l}\n"))
            .collect();
        let b = parse_nvidia_smi_text(&bare).unwrap();
        assert_eq!(gpu(&b).clocks_event_reasons, g.clocks_event_reasons);
        assert_eq!(b.driver_version, Field::Error(NOT_IN_EVIDENCE.into()));
        // and the section alone, indented as printed, without its GPU header
        let section: String = bare.lines().skip(1).map(|l| format!("{l}\n")).collect();
        let s = parse_nvidia_smi_text(&section).unwrap();
        assert_eq!(gpu(&s).clocks_event_reasons, g.clocks_event_reasons);
    }

    #[test]
    fn temperature_and_multi_section_pastes() {
        let r = parse_nvidia_smi_text(&fixture("nvidia_smi/q_d_temperature_at_max_operating.txt"))
            .unwrap();
        let g = gpu(&r);
        assert_eq!(g.temperature_c, Field::Ok(56));
        assert_eq!(g.temperature_max_operating_c, Field::Ok(57));
        let r = parse_nvidia_smi_text(&fixture("nvidia_smi/q_d_power_clock_temp_perf_idle.txt"))
            .unwrap();
        let g = gpu(&r);
        assert_eq!(g.pstate, Field::Ok("P8".into()));
        assert_eq!(g.clocks_event_reasons, Field::Ok(vec!["GPU_IDLE".into()]));
        assert_eq!(g.temperature_c, Field::Ok(37));
        assert_eq!(g.temperature_max_operating_c, Field::NotSupported);
    }

    #[test]
    fn clocks_event_counters_by_reason() {
        // the block drivers 535+ print under -d PERFORMANCE (DTD: clocks_event_reasons_counters)
        let t = "GPU 00000000:01:00.0\n    Clocks Event Reasons Counters\n        SW Power Capping : 1200 us\n        Sync Boost : 0 us\n        SW Thermal Slowdown : 0 us\n        HW Thermal Slowdown : 35 ms\n        HW Power Braking : 0 us\n";
        let c = gpu(&parse_nvidia_smi_text(t).unwrap())
            .clocks_event_counters_us
            .clone()
            .unwrap();
        assert_eq!(c["SW_POWER_CAP"], 1200);
        assert_eq!(c["HW_THERMAL_SLOWDOWN"], 35_000);
        assert_eq!(c["HW_POWER_BRAKE_SLOWDOWN"], 0);
        assert_eq!(c.len(), 5);
    }

    #[test]
    fn text_without_nvidia_smi_fields_is_an_error() {
        assert!(parse_nvidia_smi_text("hello\nworld").is_err());
        assert!(parse_nvidia_smi_xml("<a><b>c</b></a>").is_err());
        assert!(parse_nvidia_smi("").is_err());
    }

    #[test]
    fn every_truncation_of_the_fixtures_parses_or_errs() {
        for name in ["nvidia_smi/h200-q.txt", "nvidia_smi/h200-q-x.xml"] {
            let text = fixture(name);
            for p in prefixes(&text, 97) {
                if let Ok(r) = parse_nvidia_smi(p) {
                    assert!(r.gpus.len() <= 1);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,400}") {
            let _ = parse_nvidia_smi(&s);
            let _ = parse_nvidia_smi_xml(&s);
        }

        #[test]
        fn garbled_lines_never_panic(lines in proptest::collection::vec(
            prop_oneof![
                Just("GPU 00000000:00:06.0".to_string()),
                "[ \t]{0,12}[A-Za-z ]{1,20} : [0-9A-Za-z./ ]{0,12}",
                "[ \t]{0,12}[A-Za-z ]{1,20}",
                "\\PC{0,30}",
            ], 0..60)) {
            let text = lines.join("\n");
            if let Ok(r) = parse_nvidia_smi_text(&text) {
                prop_assert!(r.gpus.len() <= 61);
            }
        }

        #[test]
        fn very_long_values_are_clipped(n in 1usize..100_000) {
            let text = format!("GPU 0000:01:00.0\n    Product Name : {}\n", "x".repeat(n));
            let r = parse_nvidia_smi_text(&text).unwrap();
            if let Field::Ok(name) = &r.gpus[0].name {
                prop_assert!(name.len() <= 210);
            }
        }

        #[test]
        fn deep_or_broken_xml_never_panics(depth in 0usize..200, cut in 0usize..4000) {
            let mut s = String::from("<nvidia_smi_log><gpu id=\"1\">");
            for i in 0..depth { s.push_str(&format!("<n{i}>v")); }
            s.push_str("<product_name>A &amp; B</product_name>");
            let cut = cut.min(s.len());
            let _ = parse_nvidia_smi_xml(&s[..cut]);
        }
    }
}
