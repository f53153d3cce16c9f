//! PyTorch CUDA memory evidence: `torch.cuda.memory_summary()` tables and CUDA out-of-memory
//! messages, in both the current wording ("Of the allocated memory A is allocated by PyTorch,
//! and R is reserved by PyTorch but unallocated") and the older one ("A already allocated; F
//! free; R reserved in total by PyTorch"). All sizes in MiB; PyTorch's `MB`/`GB` in older
//! summaries are binary units too.
//!
//! Fragmentation is `(reserved - allocated) / reserved`: memory the caching allocator holds
//! but cannot hand out in the shape asked for.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct TorchMemory {
    /// The text reports a CUDA out-of-memory error (a message, or `CUDA OOMs` > 0).
    pub oom: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tried_to_allocate_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_capacity_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_mib: Option<f64>,
    /// "Including non-PyTorch memory, this process has X memory in use".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_in_use_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocated_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_unallocated_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragmentation: Option<f64>,
    /// The allocator setting the message suggests: `expandable_segments:True` or
    /// `max_split_size_mb`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_conf_hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_allocated_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_reserved_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_releasable_mib: Option<f64>,
    /// Peak of "Non-releasable memory" (inactive split blocks): memory the allocator holds in
    /// split blocks it cannot hand out for other sizes, the direct measure of fragmentation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_non_releasable_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub malloc_retries: Option<u64>,
    /// Where allocated/reserved came from: `oom_message` or `memory_summary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'static str>,
}

const SIZE: &str = r"([0-9]+(?:\.[0-9]+)?) ?(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)";

static TRIED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"Tried to allocate {SIZE}")).expect("static regex"));
static NEW_CAPACITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"GPU (\d+) has a total capac?i?ty of {SIZE} of which {SIZE} is free"
    ))
    .expect("static regex")
});
static IN_USE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"this process has {SIZE} memory in use")).expect("static regex")
});
static NEW_SPLIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)Of the allocated memory {SIZE} is allocated by PyTorch,\s*and {SIZE} is reserved by PyTorch but unallocated"
    ))
    .expect("static regex")
});
static OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\(GPU (\d+);\s*{SIZE} total capacity;\s*{SIZE} already allocated;\s*{SIZE} free;\s*{SIZE} reserved in total by PyTorch\)"
    ))
    .expect("static regex")
});
static ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\|\s*(Allocated memory|GPU reserved memory|Non-releasable memory)\s*\|\s*{SIZE}\s*\|\s*(?:{SIZE}\s*\|)?"
    ))
    .expect("static regex")
});
static OOMS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"CUDA OOMs:\s*(\d+)").expect("static regex"));
static RETRIES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"cudaMalloc retries:\s*(\d+)").expect("static regex"));

// Custom printouts: `Allocated: 1.2 GB, Reserved: 8.0 GB`, `memory_allocated=...`,
// `torch.cuda.memory_reserved(): ...`, DeepSpeed's `MA 1.2 GB Max_MA 2 GB CA 8 GB Max_CA 8 GB`.
const PSIZE: &str = r"([0-9]+(?:\.[0-9]+)?)\s?(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB|kB)\b";
static P_ALLOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(max[_ ]?|peak[_ ]?)?(?:memory[_ ]?|mem[_ ]?)?allocated(?:\(\))?(?:\s*memory)?\s*[:=]?\s*{PSIZE}"
    ))
    .expect("static regex")
});
static P_RES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(max[_ ]?|peak[_ ]?)?(?:memory[_ ]?|mem[_ ]?)?(?:reserved|cached)(?:\(\))?(?:\s*memory)?\s*[:=]?\s*{PSIZE}"
    ))
    .expect("static regex")
});
static DS_MA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bMA ([0-9]+(?:\.[0-9]+)?) (GB|MB)\s+Max_MA [0-9.]+ (?:GB|MB)\s+CA ([0-9]+(?:\.[0-9]+)?) (GB|MB)")
        .expect("static regex")
});

/// The last (allocated, reserved) pair a custom printout gives, in MiB.
fn printout(text: &str) -> Option<(f64, f64)> {
    if let Some(c) = DS_MA.captures_iter(text).last() {
        return Some((size_at(&c, 1)?, size_at(&c, 3)?));
    }
    let last = |re: &Regex| {
        re.captures_iter(text)
            .filter(|c| c.get(1).is_none())
            .last()
            .and_then(|c| mib(c.get(2)?.as_str(), &unit(c.get(3)?.as_str())))
    };
    Some((last(&P_ALLOC)?, last(&P_RES)?))
}

fn unit(u: &str) -> String {
    if u == "kB" {
        "KB".into()
    } else {
        u.to_string()
    }
}

/// A custom printout of allocated and reserved memory (not an OOM message or summary table).
pub fn looks_like_memory_printout(h: &str) -> bool {
    printout(h).is_some()
}

fn mib(n: &str, unit: &str) -> Option<f64> {
    let n: f64 = n.parse().ok()?;
    let f = match unit {
        "bytes" | "B" => 1.0 / 1048576.0,
        "KiB" | "KB" => 1.0 / 1024.0,
        "MiB" | "MB" => 1.0,
        "GiB" | "GB" => 1024.0,
        "TiB" | "TB" => 1048576.0,
        _ => return None,
    };
    round2(n * f)
}

/// Two decimals; `None` for values too large to round (they are not real sizes).
fn round2(v: f64) -> Option<f64> {
    let r = (v * 100.0).round() / 100.0;
    r.is_finite().then_some(r)
}

fn size_at(c: &regex::Captures, i: usize) -> Option<f64> {
    mib(c.get(i)?.as_str(), c.get(i + 1)?.as_str())
}

pub fn parse_torch_memory(text: &str) -> TorchMemory {
    let mut m = TorchMemory {
        oom: text.contains("CUDA out of memory") || text.contains("OutOfMemoryError"),
        ..Default::default()
    };
    // With several OOM messages in one log, the last one describes the final state.
    if let Some(c) = TRIED.captures_iter(text).last() {
        m.tried_to_allocate_mib = size_at(&c, 1);
    }
    if let Some(c) = NEW_CAPACITY.captures_iter(text).last() {
        m.gpu = c[1].parse().ok();
        m.total_capacity_mib = size_at(&c, 2);
        m.free_mib = size_at(&c, 4);
    }
    if let Some(c) = IN_USE.captures_iter(text).last() {
        m.process_in_use_mib = size_at(&c, 1);
    }
    if let Some(c) = NEW_SPLIT.captures_iter(text).last() {
        m.allocated_mib = size_at(&c, 1);
        m.reserved_unallocated_mib = size_at(&c, 3);
        if let (Some(a), Some(u)) = (m.allocated_mib, m.reserved_unallocated_mib) {
            m.reserved_mib = round2(a + u);
        }
        m.source = Some("oom_message");
    } else if let Some(c) = OLD.captures_iter(text).last() {
        m.gpu = c[1].parse().ok();
        m.total_capacity_mib = size_at(&c, 2);
        m.allocated_mib = size_at(&c, 4);
        m.free_mib = size_at(&c, 6);
        m.reserved_mib = size_at(&c, 8);
        m.source = Some("oom_message");
    }
    if text.contains("expandable_segments:True") {
        m.alloc_conf_hint = Some("expandable_segments:True".into());
    } else if text.contains("max_split_size_mb") {
        m.alloc_conf_hint = Some("max_split_size_mb".into());
    }

    // memory_summary(): current and peak of each row.
    let (mut s_alloc, mut s_res) = (None, None);
    for line in super::content_lines(text) {
        let line = line.trim();
        if let Some(c) = ROW.captures(line) {
            let cur = size_at(&c, 2);
            let peak = size_at(&c, 4);
            match &c[1] {
                "Allocated memory" => {
                    s_alloc = s_alloc.or(cur);
                    m.peak_allocated_mib = m.peak_allocated_mib.or(peak);
                }
                "GPU reserved memory" => {
                    s_res = s_res.or(cur);
                    m.peak_reserved_mib = m.peak_reserved_mib.or(peak);
                }
                _ => {
                    m.non_releasable_mib = m.non_releasable_mib.or(cur);
                    m.peak_non_releasable_mib = m.peak_non_releasable_mib.or(peak);
                }
            }
        }
    }
    if let Some(c) = OOMS.captures(text) {
        m.oom_count = c[1].parse().ok();
    }
    if let Some(c) = RETRIES.captures(text) {
        m.malloc_retries = c[1].parse().ok();
    }
    if m.oom_count.is_some_and(|n| n > 0) {
        m.oom = true;
    }
    if m.allocated_mib.is_none()
        && m.reserved_mib.is_none()
        && (s_alloc.is_some() || s_res.is_some())
    {
        m.allocated_mib = s_alloc;
        m.reserved_mib = s_res;
        m.source = Some("memory_summary");
    }
    if m.allocated_mib.is_none()
        && m.reserved_mib.is_none()
        && let Some((a, r)) = printout(text)
    {
        m.allocated_mib = Some(a);
        m.reserved_mib = Some(r);
        m.source = Some("printout");
    }
    if let (Some(a), Some(r)) = (m.allocated_mib, m.reserved_mib) {
        if m.reserved_unallocated_mib.is_none() && r >= a {
            m.reserved_unallocated_mib = round2(r - a);
        }
        if r > 0.0 && r >= a {
            m.fragmentation = Some((((r - a) / r) * 10000.0).round() / 10000.0);
        }
    }
    m
}

/// The registry entry.
pub struct TorchMemoryKind;

impl super::EvidenceKind for TorchMemoryKind {
    fn name(&self) -> &'static str {
        "torch-memory"
    }
    fn doc(&self) -> &'static str {
        "a PyTorch CUDA out-of-memory message or torch.cuda.memory_summary() table: allocated, reserved, fragmentation"
    }
    fn example(&self) -> &'static str {
        "python -c 'import torch; ...; print(torch.cuda.memory_summary())'"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("oom", "the text reports a CUDA out-of-memory error"),
            ("tried_to_allocate_mib", "the allocation that failed"),
            ("gpu", "the GPU it failed on"),
            ("total_capacity_mib", "the GPU's capacity"),
            ("free_mib", "free memory at the failure"),
            (
                "process_in_use_mib",
                "memory the process held, PyTorch's or not",
            ),
            ("allocated_mib", "memory allocated by PyTorch"),
            (
                "reserved_mib",
                "memory reserved by PyTorch's caching allocator",
            ),
            ("reserved_unallocated_mib", "reserved but unallocated"),
            ("fragmentation", "(reserved - allocated) / reserved"),
            (
                "alloc_conf_hint",
                "the allocator setting the message suggests",
            ),
            ("peak_allocated_mib", "peak allocated (summary)"),
            ("peak_reserved_mib", "peak reserved (summary)"),
            ("non_releasable_mib", "non-releasable memory (summary)"),
            (
                "peak_non_releasable_mib",
                "peak non-releasable memory (summary)",
            ),
            ("oom_count", "CUDA OOMs counted (summary)"),
            ("malloc_retries", "cudaMalloc retries (summary)"),
            ("source", "oom_message or memory_summary"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["torch.memory"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let h = s.head;
        h.contains("CUDA out of memory")
            || h.contains("OutOfMemoryError")
            || h.contains("PyTorch CUDA memory summary")
            || looks_like_memory_printout(h)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, String> {
        super::to_value(&parse_torch_memory(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn current_oom_message_with_expandable_segments_hint() {
        let m = parse_torch_memory(&fixture("torch_memory/oom_expandable_segments.txt"));
        assert!(m.oom);
        assert_eq!(m.tried_to_allocate_mib, Some(23326.72));
        assert_eq!(m.allocated_mib, Some(9297.92));
        assert_eq!(m.reserved_unallocated_mib, Some(9574.4));
        assert_eq!(
            m.alloc_conf_hint.as_deref(),
            Some("expandable_segments:True")
        );
        assert_eq!(m.fragmentation, Some(0.5073));
        assert_eq!(m.process_in_use_mib, Some(19179.52));
        insta::assert_json_snapshot!("torch_memory_oom_expandable_segments", m);
    }

    #[test]
    fn older_oom_message_wording() {
        let m = parse_torch_memory(&fixture("torch_memory/oom_old_wording.txt"));
        assert!(m.oom);
        assert_eq!(m.allocated_mib, Some(781.59));
        assert_eq!(m.reserved_mib, Some(1269.76));
        assert_eq!(m.free_mib, Some(3102.72));
        assert_eq!(m.alloc_conf_hint, None);
        insta::assert_json_snapshot!("torch_memory_oom_old_wording", m);
    }

    #[test]
    fn memory_summary_table() {
        let m = parse_torch_memory(&fixture("torch_memory/memory_summary_truncated.txt"));
        assert_eq!(m.source, Some("memory_summary"));
        assert_eq!(m.allocated_mib, Some(1062.0));
        assert_eq!(m.reserved_mib, Some(12420.0));
        assert_eq!(m.peak_allocated_mib, Some(4877.0));
        assert_eq!(m.oom_count, Some(1));
        assert!(m.oom);
        assert_eq!(m.fragmentation, Some(0.9145));
        insta::assert_json_snapshot!("torch_memory_memory_summary_truncated", m);
    }

    #[test]
    fn truncated_oom_message_keeps_what_is_there() {
        let m = parse_torch_memory(&fixture("torch_memory/oom_truncated.txt"));
        assert!(m.oom);
        assert_eq!(m.tried_to_allocate_mib, Some(1740.8));
        assert_eq!(m.free_mib, Some(0.0));
        assert_eq!(m.allocated_mib, None);
        assert_eq!(m.fragmentation, None);
        insta::assert_json_snapshot!("torch_memory_oom_truncated", m);
    }

    #[test]
    fn r_torch_spells_pytorch_its_own_way() {
        // mlverse/torch (libtorch from R) prints `Pytorch`; the figures are the same
        let m = parse_torch_memory(
            "CUDA out of memory. Tried to allocate 2.93 GiB (GPU 0; 23.80 GiB total capacity; 12.04 GiB already allocated; 2.82 GiB free; 19.69 GiB reserved in total by Pytorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
        );
        assert_eq!(m.source, Some("oom_message"));
        assert_eq!(m.allocated_mib, Some(12328.96));
        assert_eq!(m.reserved_mib, Some(20162.56));
        assert_eq!(m.free_mib, Some(2887.68));
        assert_eq!(m.tried_to_allocate_mib, Some(3000.32));
    }

    #[test]
    fn custom_printouts_of_allocated_and_reserved() {
        let m = parse_torch_memory(
            "step 10 | Allocated: 1.5 GB, Reserved: 6.0 GB\nstep 20 | Allocated: 2.0 GB, Reserved: 8.0 GB\n",
        );
        assert_eq!(m.allocated_mib, Some(2048.0));
        assert_eq!(m.reserved_mib, Some(8192.0));
        assert_eq!(m.fragmentation, Some(0.75));
        let ds = parse_torch_memory(
            "[INFO] [utils.py:781:see_memory_usage] MA 3.5 GB         Max_MA 4.0 GB         CA 12.0 GB         Max_CA 12 GB \n",
        );
        assert_eq!(ds.allocated_mib, Some(3584.0));
        assert_eq!(ds.reserved_mib, Some(12288.0));
        let peak =
            parse_torch_memory("max allocated: 9 GB\nmemory_allocated=1 GB memory_reserved=2 GB\n");
        assert_eq!(peak.allocated_mib, Some(1024.0));
        assert!(looks_like_memory_printout(
            "torch.cuda.memory_allocated(): 10 MB torch.cuda.memory_reserved(): 20 MB"
        ));
        assert!(!looks_like_memory_printout("allocated 3 GB"));
    }

    #[test]
    fn text_without_memory_evidence_reports_nothing() {
        let m = parse_torch_memory("all good");
        assert_eq!(m, TorchMemory::default());
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("torch_memory/oom_expandable_segments.txt");
        for p in prefixes(&text, 7) {
            let m = parse_torch_memory(p);
            if let Some(f) = m.fragmentation {
                assert!((0.0..=1.0).contains(&f));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_torch_memory(&s);
        }

        #[test]
        fn garbled_numbers_never_panic(a in "[0-9]{1,400}(\\.[0-9]{1,20})?", r in "[0-9]{1,30}", unit in "(B|KiB|MiB|GiB|TiB|bytes)") {
            let text = format!("CUDA out of memory. Tried to allocate {a} {unit}. Of the allocated memory {a} {unit} is allocated by PyTorch, and {r} {unit} is reserved by PyTorch but unallocated.");
            let m = parse_torch_memory(&text);
            if let Some(f) = m.fragmentation {
                prop_assert!((0.0..=1.0).contains(&f));
            }
        }
    }
}
