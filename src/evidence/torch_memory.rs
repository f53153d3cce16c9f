//! PyTorch CUDA memory evidence: `torch.cuda.memory_summary()` tables and CUDA out-of-memory
//! messages, in both the current wording ("Of the allocated memory A is allocated by PyTorch,
//! and R is reserved by PyTorch but unallocated") and the older one ("A already allocated; F
//! free; R reserved in total by PyTorch"). All sizes in MiB; PyTorch's `MB`/`GB` in older
//! summaries are binary units too.
//!
//! `torch.cuda.memory_stats()` is read too: the flat `OrderedDict` that `memory_stats` in
//! `torch/cuda/memory.py` (pytorch/pytorch, read at `00b65a04a2d3`; the same keys since 1.4)
//! builds from `memory_stats_as_nested_dict` by joining the nested keys with `.` and sorting,
//! printed as `OrderedDict([('allocated_bytes.all.current', 1024), ...])` (Python 3.12+:
//! `OrderedDict({'allocated_bytes.all.current': 1024, ...})`), as a plain dict or as JSON; the
//! values are bytes. Its `allocated_bytes`, `reserved_bytes` and `inactive_split_bytes` of pool
//! `all` are the summary table's "Allocated memory", "GPU reserved memory" and "Non-releasable
//! memory" rows (`memory_summary` formats those same stats); `num_ooms` and
//! `num_alloc_retries` its two counters.
//!
//! The `cudaMallocAsync` backend (`PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync`, the default
//! of some ComfyUI installs) raises its own message, from `mallocAsync` in
//! `c10/cuda/CUDAMallocAsyncAllocator.cpp` (pytorch/pytorch, read at `03459473c0ec`, the same
//! since the backend came in 2.0): "Allocation on device D would exceed allowed memory. (out of
//! memory)" then `Currently allocated     : A`, `Requested               : R`, `Device limit
//!            : T`, `Free (according to CUDA): F` and `PyTorch limit (set by user-supplied
//! memory fraction)` with its figure on the next line. `A` is what PyTorch holds from the
//! driver's pool (`pytorch_used_bytes`); the pool's reserved memory is not printed, so such a
//! message gives no reserved figure. The limit is `UINT64_MAX` bytes ("17179869184.00 GiB")
//! unless `set_per_process_memory_fraction` set one.
//!
//! ROCm builds raise the same messages from the hipified allocator (`c10/hip/HIPCachingAllocator.cpp`,
//! generated from the CUDA file by `torch/utils/hipify`, which rewrites `CUDA` to `HIP` inside
//! strings too): "HIP out of memory. Tried to allocate …", "private pools (e.g., HIP Graphs)",
//! as ROCm/TheRock#2118's CI log of PyTorch 2.9's tests prints them. The figures are the same.
//!
//! Fragmentation is `(reserved - allocated) / reserved`: memory the caching allocator holds
//! but cannot hand out in the shape asked for.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::scan::has;

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
    /// Other processes on the GPU the message names ("Process 2752205 has 91.82 GiB memory in
    /// use."), from NVML at the OOM.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_processes: Vec<OtherProcess>,
    /// Their memory together, MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_processes_mib: Option<f64>,
    /// "X allowed;": the cap `torch.cuda.set_per_process_memory_fraction` set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_mib: Option<f64>,
    /// "with X allocated in private pools (e.g., CUDA Graphs)": part of `allocated_mib`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_pools_mib: Option<f64>,
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
    /// Where allocated/reserved came from: `oom_message`, `memory_summary`, `memory_stats` or
    /// `printout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OtherProcess {
    pub pid: u32,
    pub mib: f64,
}

// `format_size` of c10/util (the OOM message: bytes, KiB … GiB) and `_format_size` of
// torch/cuda/memory.py's memory_summary (`B`, `KB` … `PB` before 2.1, `KiB` … `PiB` since);
// the one space between figure and unit may be a line break where a post wraps the message
// (see [`words`])
const SIZE: &str = r"([0-9]+(?:\.[0-9]+)?)\s{0,2}(bytes|B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB)";

// The OOM message is one line (`TORCH_CHECK_WITH(OutOfMemoryError, …)` in `malloc` of
// c10/cuda/CUDACachingAllocator.cpp, pytorch/pytorch: the words joined by single spaces in every
// version, 2.1's "total capacty" included); a post breaks it where the poster's terminal or
// editor wrapped it, at a space ("reserved by \nPyTorch but unallocated", lit-gpt#459's RTX
// 3090 message). Between two words of these patterns any run of white space is read (`\s+`,
// [`words`]), so a message re-broken at its spaces reads as the line it was.
static TRIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(r"Tried to allocate {SIZE}"))).expect("static regex")
});
static NEW_CAPACITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(
        r"GPU (\d+) has a total capac?i?ty of {SIZE} of which {SIZE} is free"
    )))
    .expect("static regex")
});
static IN_USE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(r"this process has {SIZE} memory in use"))).expect("static regex")
});
static NEW_SPLIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(
        r"(?i)Of the allocated memory {SIZE} is allocated by PyTorch,\s*(?:with {SIZE} allocated in private pools \(e\.g\., (?:CUDA|HIP) Graphs\),\s*)?and {SIZE} is reserved by PyTorch but unallocated"
    )))
    .expect("static regex")
});
static OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(
        r"(?i)\(GPU (\d+);\s*{SIZE} total capacity;\s*{SIZE} already allocated;\s*{SIZE} free;\s*(?:{SIZE} allowed;\s*)?{SIZE} reserved in total by PyTorch\)"
    )))
    .expect("static regex")
});
// PyTorch ≤ 1.3 (`THCCachingAllocator`): the last figure is reserved-but-unallocated ("cached")
static OLDEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(
        r"(?i)\(GPU (\d+);\s*{SIZE} total capacity;\s*{SIZE} already allocated;\s*{SIZE} free;\s*{SIZE} cached\)"
    )))
    .expect("static regex")
});

/// The caching allocator's out-of-memory message from `Tried to allocate` on, in either wording
/// (`malloc` in `c10/cuda/CUDACachingAllocator.cpp`, pytorch/pytorch: 1.4–2.0's `Tried to allocate
/// %s (GPU %d; %s total capacity; …` and 2.1+'s `Tried to allocate %s. GPU %d has a total
/// capacity of …`, built by one `TORCH_CHECK_WITH(OutOfMemoryError, …)` behind "CUDA out of
/// memory. "). The allocator prints these words only in that message, so a paste that kept the
/// message without its first sentence (a comment that copied from `Tried to` on, under Korean
/// lines asking about the same error: LISTatSNU/FastMRI_challenge#238) is the same
/// out-of-memory error with all its figures; prose that only says it "tried to allocate" names
/// no GPU and no capacity.
static CUT_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&words(&format!(
        r"Tried to allocate {SIZE}\s*(?:\(GPU \d+;\s*{SIZE} total capacity;|\.\s*GPU \d+ has a total capac?i?ty of {SIZE})"
    )))
    .expect("static regex")
});

/// `pattern` with each space between two words (a letter, digit or `)` before it, a letter,
/// digit or `(` after it) read as any run of white space: a message broken at its spaces. The
/// white space between a figure and its unit is `{SIZE}`'s own.
fn words(pattern: &str) -> String {
    let b = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 16);
    for (i, ch) in pattern.char_indices() {
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b')');
        let after = b.get(i + 1).copied();
        let word_after = after.is_some_and(|a| a.is_ascii_alphanumeric() || a == b'(');
        if ch == ' ' && word_before && word_after {
            out.push_str(r"\s+");
        } else {
            out.push(ch);
        }
    }
    out
}

// `c10/cuda/CUDAMallocAsyncAllocator.cpp`, `mallocAsync` (see the module header); the labels'
// padding spaces are matched loosely (a markdown paste collapses them)
static ASYNC_OOM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"Allocation on device (\d+) would exceed allowed memory\. \(out of memory\)\s*Currently allocated\s*:\s*{SIZE}\s*Requested\s*:\s*{SIZE}\s*Device limit\s*:\s*{SIZE}\s*Free \(according to CUDA\)\s*:\s*{SIZE}(?:\s*PyTorch limit \(set by user-supplied memory fraction\)\s*:\s*{SIZE})?"
    ))
    .expect("static regex")
});
/// The first words of the caching allocator's message in a ROCm build (see the module header).
const HIP_OOM: &str = "HIP out of memory. Tried to allocate";
/// The phrase every `cudaMallocAsync` OOM holds, also when a log keeps its first line alone.
const ASYNC_OOM_PHRASE: &str = "would exceed allowed memory. (out of memory)";
/// The caching allocator's OOM that failed while it was being reported. When `malloc` of
/// `c10/cuda/CUDACachingAllocator.cpp` (pytorch/pytorch 2.1-2.x; the stored texts read by the
/// search tool, ids 3232397 and 79076714) finds no block after freeing its cache, it builds the
/// `OutOfMemoryError` message, and first `reportProcessMemoryInfo` asks NVML for the GPU's
/// processes (the message's "Process N has X memory in use" and "Including non-PyTorch memory,
/// this process has X"), under `TORCH_INTERNAL_ASSERT(NVML_SUCCESS == r)`. That function is
/// called from this path alone, so where NVML cannot list processes (Jetson's integrated GPU,
/// whose NVML is partial) the allocator's out-of-memory surfaces as `RuntimeError: NVML_SUCCESS
/// == r INTERNAL ASSERT FAILED at ".../c10/cuda/CUDACachingAllocator.cpp":838, please report a
/// bug to PyTorch.` with none of the message's figures (the NVIDIA forum's Orin Nano thread
/// 370049, a JetPack 6.2 wheel: "It looks like the error is OOM"). Read as an OOM without
/// figures.
const NVML_OOM_ASSERT: &str = "NVML_SUCCESS == r INTERNAL ASSERT FAILED";
static OTHER_PROC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"Process (\d+) has {SIZE} memory in use")).expect("static regex")
});
static ALLOWED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"is free\. (?:[^;]*?memory in use\. )*{SIZE} allowed;"
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

// memory_stats(): `('key', value)` (an OrderedDict's items) or `'key': value` (a dict, JSON),
// the key opening an item: after `(` that follows `[`, `,` or a space, or after `{`, `,`, a
// space or the line's start; not `stats.get('key', 0)` in a script that reads the stats
static STAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?m)(?:^|[\s\[{,]|[\s\[,]\()['"]((?:allocated|reserved|inactive_split)_bytes\.all\.(?:current|peak)|num_ooms|num_alloc_retries)['"]\s*[:,]\s*(\d+)"#,
    )
    .expect("static regex")
});

/// A `torch.cuda.memory_stats()` dump: a reserved-bytes stat with its value.
fn looks_like_memory_stats(h: &str) -> bool {
    holds(h, "reserved_bytes.all.")
        && STAT
            .captures_iter(h)
            .any(|c| c[1].starts_with("reserved_bytes"))
}

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
    // every match of P_ALLOC holds `allocated` (see [`contains_ascii_ci`])
    if !contains_ascii_ci(text, "allocated", 8) {
        return None;
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
        "PiB" | "PB" => 1073741824.0,
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

// found through a rare byte of the needle (a `;`, a `d`): for a `(?i)` pattern whose literal
// words hold no `k` or `s` (the only ASCII letters Unicode case folding joins to other
// characters: the Kelvin sign, the long s), a necessary condition for a match, at a fraction of
// the pattern's cost
use crate::vocab::contains_ignore_ascii_case as contains_ascii_ci;

/// `text` holds `needle` (memchr's SIMD search, for a whole log).
fn holds(text: &str, needle: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), needle.as_bytes()).is_some()
}

/// Words one of which every pattern and phrase [`read_all`] looks for holds (`allocated` in
/// any ASCII case, for the `(?i)` patterns; the others as the patterns spell them): a text
/// without any of them reads as the empty text does. One search of the text instead of the
/// reader's dozen and a half (a training log of progress lines holds none). Only `allocated`
/// is case folded: a search for every word in any case runs at a tenth of the speed.
static ANY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i-u:allocated)|out of memory|OutOfMemoryError|Tried to allocate|total capa|memory in use|allowed;|expandable_segments:True|max_split_size_mb|reserved memory|Non-releasable memory|CUDA OOMs:|cudaMalloc retries:|_bytes\.all\.|num_ooms|Max_MA|NVML_SUCCESS == r INTERNAL ASSERT FAILED",
    )
    .expect("static regex")
});

pub fn parse_torch_memory(text: &str) -> TorchMemory {
    if ANY.is_match(text) {
        read_all(text)
    } else {
        read_all("")
    }
}

/// [`parse_torch_memory`] without its first search.
fn read_all(text: &str) -> TorchMemory {
    let mut m = TorchMemory {
        oom: holds(text, "CUDA out of memory")
            || holds(text, HIP_OOM)
            || holds(text, "OutOfMemoryError")
            || holds(text, ASYNC_OOM_PHRASE)
            || holds(text, NVML_OOM_ASSERT)
            || (holds(text, "Tried to allocate") && CUT_HEAD.is_match(text)),
        ..Default::default()
    };
    // the `(?i)` patterns are run only on a text holding their words (see
    // [`contains_ascii_ci`]): a training log without an OOM message is not scanned by each
    // (one word each, so that a message broken at a space still passes: see [`words`])
    let new_split = contains_ascii_ci(text, "unallocated", 10);
    let old_forms = contains_ascii_ci(text, "capacity;", 8);
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
    if let Some(c) = new_split
        .then(|| NEW_SPLIT.captures_iter(text).last())
        .flatten()
    {
        m.allocated_mib = size_at(&c, 1);
        m.private_pools_mib = size_at(&c, 3);
        m.reserved_unallocated_mib = size_at(&c, 5);
        if let (Some(a), Some(u)) = (m.allocated_mib, m.reserved_unallocated_mib) {
            m.reserved_mib = round2(a + u);
        }
        m.source = Some("oom_message");
    } else if let Some(c) = old_forms.then(|| OLD.captures_iter(text).last()).flatten() {
        m.gpu = c[1].parse().ok();
        m.total_capacity_mib = size_at(&c, 2);
        m.allocated_mib = size_at(&c, 4);
        m.free_mib = size_at(&c, 6);
        m.allowed_mib = size_at(&c, 8);
        m.reserved_mib = size_at(&c, 10);
        m.source = Some("oom_message");
    } else if let Some(c) = old_forms
        .then(|| OLDEST.captures_iter(text).last())
        .flatten()
    {
        m.gpu = c[1].parse().ok();
        m.total_capacity_mib = size_at(&c, 2);
        m.allocated_mib = size_at(&c, 4);
        m.free_mib = size_at(&c, 6);
        m.reserved_unallocated_mib = size_at(&c, 8);
        if let (Some(a), Some(u)) = (m.allocated_mib, m.reserved_unallocated_mib) {
            m.reserved_mib = round2(a + u);
        }
        m.source = Some("oom_message");
    }
    // the cudaMallocAsync backend's message: no reserved figure, so `source` stays unset and
    // nothing is derived from `allocated` alone
    if m.allocated_mib.is_none()
        && m.tried_to_allocate_mib.is_none()
        && holds(text, ASYNC_OOM_PHRASE)
        && let Some(c) = ASYNC_OOM.captures_iter(text).last()
    {
        m.gpu = c[1].parse().ok();
        m.allocated_mib = size_at(&c, 2);
        m.tried_to_allocate_mib = size_at(&c, 4);
        m.total_capacity_mib = size_at(&c, 6);
        m.free_mib = size_at(&c, 8);
        // a limit at or above the device is no limit (UINT64_MAX bytes unless one was set)
        m.allowed_mib = size_at(&c, 10).filter(|&l| m.total_capacity_mib.is_some_and(|t| l < t));
    }
    if m.allowed_mib.is_none()
        && let Some(c) = ALLOWED.captures_iter(text).last()
    {
        m.allowed_mib = size_at(&c, 1);
    }
    // the process list of the last OOM message: its other processes
    if let Some(last) = TRIED.find_iter(text).last() {
        let tail = &text[last.start()..];
        let mut end = tail
            .find("Of the allocated memory")
            .unwrap_or(tail.len().min(4096));
        while !tail.is_char_boundary(end) {
            end -= 1;
        }
        for c in OTHER_PROC.captures_iter(&tail[..end]) {
            if m.other_processes.len() >= super::MAX_ITEMS {
                break;
            }
            if let (Ok(pid), Some(mib)) = (c[1].parse(), size_at(&c, 2)) {
                m.other_processes.push(OtherProcess { pid, mib });
            }
        }
        if !m.other_processes.is_empty() {
            m.other_processes_mib = round2(m.other_processes.iter().map(|p| p.mib).sum());
        }
    }
    if holds(text, "expandable_segments:True") {
        m.alloc_conf_hint = Some("expandable_segments:True".into());
    } else if holds(text, "max_split_size_mb") {
        m.alloc_conf_hint = Some("max_split_size_mb".into());
    }

    // memory_summary(): current and peak of each row.
    let (mut s_alloc, mut s_res) = (None, None);
    // a row starts with `|`: only the lines holding one are looked at
    static BAR: LazyLock<Regex> = LazyLock::new(|| super::scan::phrases(&["|"]));
    for line in super::scan::lines_with(text, &BAR) {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let line = line.trim();
        if let Some(c) = line.starts_with('|').then(|| ROW.captures(line)).flatten() {
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
    // memory_stats(): the last value of each key (a log printing the stats at each step ends
    // with the newest)
    if holds(text, "_bytes.all.") || holds(text, "num_ooms") {
        let mut st: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
        for c in STAT.captures_iter(text) {
            if let (Some(k), Ok(v)) = (c.get(1), c[2].parse::<u64>()) {
                st.insert(k.as_str(), v);
            }
        }
        let mib_of = |k: &str| st.get(k).and_then(|&b| round2(b as f64 / 1048576.0));
        m.peak_allocated_mib = m
            .peak_allocated_mib
            .or_else(|| mib_of("allocated_bytes.all.peak"));
        m.peak_reserved_mib = m
            .peak_reserved_mib
            .or_else(|| mib_of("reserved_bytes.all.peak"));
        m.non_releasable_mib = m
            .non_releasable_mib
            .or_else(|| mib_of("inactive_split_bytes.all.current"));
        m.peak_non_releasable_mib = m
            .peak_non_releasable_mib
            .or_else(|| mib_of("inactive_split_bytes.all.peak"));
        m.oom_count = m.oom_count.or_else(|| st.get("num_ooms").copied());
        m.malloc_retries = m
            .malloc_retries
            .or_else(|| st.get("num_alloc_retries").copied());
        if m.oom_count.is_some_and(|n| n > 0) {
            m.oom = true;
        }
        let (a, r) = (
            mib_of("allocated_bytes.all.current"),
            mib_of("reserved_bytes.all.current"),
        );
        if m.allocated_mib.is_none() && m.reserved_mib.is_none() && (a.is_some() || r.is_some()) {
            m.allocated_mib = a;
            m.reserved_mib = r;
            m.source = Some("memory_stats");
        }
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
    fn marker(&self, line: &str) -> bool {
        // (asked of every line of a paste: searchers built once, see `scan::has!`)
        has!(line, "CUDA out of memory")
            || has!(line, HIP_OOM)
            || has!(line, "OutOfMemoryError")
            || has!(line, ASYNC_OOM_PHRASE)
            || has!(line, NVML_OOM_ASSERT)
            || has!(line, "PyTorch CUDA memory summary")
            || looks_like_memory_stats(line)
            || (has!(line, "Tried to allocate") && CUT_HEAD.is_match(line))
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[
            "CUDA out of memory",
            HIP_OOM,
            "OutOfMemoryError",
            ASYNC_OOM_PHRASE,
            NVML_OOM_ASSERT,
            "PyTorch CUDA memory summary",
            "reserved_bytes.all.",
            "Tried to allocate",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "torch-memory"
    }
    fn doc(&self) -> &'static str {
        "a PyTorch CUDA out-of-memory message, torch.cuda.memory_summary() table or memory_stats() dump: allocated, reserved, fragmentation"
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
            (
                "other_processes",
                "other processes on the GPU the message names: pid, mib",
            ),
            ("other_processes_mib", "their memory together"),
            (
                "allowed_mib",
                "the cap set_per_process_memory_fraction set (\"X allowed;\")",
            ),
            (
                "private_pools_mib",
                "memory in private pools (CUDA Graphs), part of allocated_mib",
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
            (
                "source",
                "oom_message, memory_summary, memory_stats or printout",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["torch.memory"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let h = s.head;
        h.contains("CUDA out of memory")
            || h.contains(HIP_OOM)
            || h.contains("OutOfMemoryError")
            || h.contains(ASYNC_OOM_PHRASE)
            || h.contains("PyTorch CUDA memory summary")
            || looks_like_memory_stats(h)
            || looks_like_memory_printout(h)
            || (h.contains("Tried to allocate") && CUT_HEAD.is_match(h))
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_torch_memory(text))
    }
}

#[cfg(test)]
mod tests {
    /// Every text of the fixtures and the corpus reads the same with the first search and
    /// without it: a pattern added to [`read_all`] without its word in [`ANY`] fails here.
    #[test]
    fn the_first_search_changes_no_reading() {
        let mut n = 0;
        for (p, t) in crate::evidence::testutil::every_fixture_text() {
            n += 1;
            assert_eq!(parse_torch_memory(&t), read_all(&t), "{}", p.display());
        }
        assert!(n > 1000, "{n} files");
    }

    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    /// The `(?i)` patterns are gated on their words in ASCII case only: no character outside
    /// ASCII matches a letter of those words under the patterns' case folding.
    #[test]
    fn gate_words_fold_to_ascii_only() {
        let letters: std::collections::BTreeSet<char> = ["unallocated", "capacity;", "allocated"]
            .concat()
            .chars()
            .filter(char::is_ascii_alphabetic)
            .flat_map(|c| [c.to_ascii_lowercase(), c.to_ascii_uppercase()])
            .collect();
        let class: String = letters.iter().collect();
        let re = Regex::new(&format!("(?i)^[{class}]$")).unwrap();
        let other = (0x80..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .find(|c| re.is_match(&c.to_string()));
        assert_eq!(other, None);
        assert!(contains_ascii_ci("x ALLOCATED", "allocated", 8));
        assert!(!contains_ascii_ci("allocate d", "allocated", 8));
        assert!(contains_ascii_ci(
            "(GPU 0; 1 GiB Total Capacity;",
            "total capacity;",
            14
        ));
    }

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
    fn summary_rows_in_every_unit_memory_py_prints() {
        // `_format_size` climbs B, KiB, MiB, GiB, TiB, PiB (KB … PB before 2.1) once the
        // preferred size passes 768 of the unit below
        let t = "|                  PyTorch CUDA memory summary, device ID 0                 |\n| Allocated memory      |      1 PiB |      1 PiB |      2 PiB |      1 PiB |\n| GPU reserved memory   |   2048 TiB |   2048 TiB |   2048 TiB |      0 B   |\n";
        let m = parse_torch_memory(t);
        assert_eq!(m.allocated_mib, Some(1073741824.0));
        assert_eq!(m.reserved_mib, Some(2147483648.0));
        assert_eq!(m.fragmentation, Some(0.5));
    }

    /// `text` broken at its spaces so that no line is longer than `width` (as a terminal or an
    /// editor wraps a pasted line), the space kept at the end of the line or dropped.
    fn wrap_at_spaces(text: &str, width: usize, keep_space: bool) -> String {
        let mut out = String::new();
        let mut line_len = 0;
        for (i, word) in text.split(' ').enumerate() {
            if i > 0 {
                if line_len + 1 + word.len() > width {
                    out.push_str(if keep_space { " \n" } else { "\n" });
                    line_len = 0;
                } else {
                    out.push(' ');
                    line_len += 1;
                }
            }
            out.push_str(word);
            line_len += word.len();
        }
        out
    }

    #[test]
    fn oom_message_broken_at_its_spaces_reads_as_the_line() {
        // lit-gpt#459 (https://github.com/Lightning-AI/litgpt/issues/459), PyTorch 2.1's
        // wording ("capacty") as the poster pasted it, broken at the terminal's width with the
        // space kept: 22.22 GiB allocated, 1.04 GiB reserved but unallocated (healthy: the
        // fix was a smaller micro batch)
        let t = "OutOfMemoryError: CUDA out of memory. Tried to allocate 86.00 MiB. GPU 0 has a total capacty of 23.69 GiB of which 83.94 MiB is free. Including \nnon-PyTorch memory, this process has 23.57 GiB memory in use. Of the allocated memory 22.22 GiB is allocated by PyTorch, and 1.04 GiB is reserved by \nPyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory\nManagement and PYTORCH_CUDA_ALLOC_CONF\n";
        let m = parse_torch_memory(t);
        assert_eq!(m.source, Some("oom_message"));
        assert_eq!(m.tried_to_allocate_mib, Some(86.0));
        assert_eq!(m.total_capacity_mib, Some(24258.56));
        assert_eq!(m.free_mib, Some(83.94));
        assert_eq!(m.process_in_use_mib, Some(24135.68));
        assert_eq!(m.allocated_mib, Some(22753.28));
        assert_eq!(m.reserved_unallocated_mib, Some(1064.96));
        assert_eq!(m.reserved_mib, Some(23818.24));
        assert_eq!(m.fragmentation, Some(0.0447));
        // a problem: CADS#4's message (9.35 of 18.43 GiB reserved unallocated), broken at every
        // width a terminal may have, with and without the space, reads as the one line does;
        // the same for the pre-2.0 wording (the old_wording fixture) and PyTorch ≤ 1.3's
        for f in [
            "torch_memory/oom_expandable_segments.txt",
            "torch_memory/oom_old_wording.txt",
            "torch_memory/oom_cached_wording_1gb.txt",
        ] {
            // the message without the fixture's `#` line naming its source
            let one: String = fixture(f).lines().filter(|l| !l.starts_with('#')).collect();
            let line = parse_torch_memory(&one);
            assert!(line.allocated_mib.is_some(), "{f}");
            for width in [40, 60, 72, 80, 100, 120] {
                for keep in [true, false] {
                    let wrapped = wrap_at_spaces(&one, width, keep);
                    assert_eq!(parse_torch_memory(&wrapped), line, "{f} at {width}, {keep}");
                }
            }
        }
        let cads: String = fixture("torch_memory/oom_expandable_segments.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect();
        let cads = parse_torch_memory(&wrap_at_spaces(&cads, 80, true));
        assert_eq!(cads.fragmentation, Some(0.5073));
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

    /// The allocator's message kept from `Tried to allocate` on (see [`CUT_HEAD`]): the same
    /// out-of-memory error with its figures, found among lines of another script.
    #[test]
    fn a_message_cut_before_tried_to_allocate_is_the_same_oom() {
        use crate::evidence::EvidenceKind;
        // LISTatSNU/FastMRI_challenge#238 (a Korean comment, torch 1.x wording), whole
        let t = "안녕하세요!!\n\n저도 비슷한 문제를 겪고 있는데 해결해주실 수 있나요?\n\
Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated; 24.56 MiB free; 86.00 MiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n\n\
IABENG102입니다!\n";
        let m = parse_torch_memory(t);
        assert!(m.oom);
        assert_eq!(m.source, Some("oom_message"));
        assert_eq!(m.tried_to_allocate_mib, Some(216.0));
        assert_eq!(m.allocated_mib, Some(69.17));
        assert_eq!(m.reserved_mib, Some(86.0));
        assert_eq!(m.free_mib, Some(24.56));
        let kind = TorchMemoryKind;
        let line = t.lines().find(|l| l.starts_with("Tried")).unwrap();
        assert!(kind.marker(line));
        assert_eq!(
            crate::evidence::detect::detect(line).map(|k| k.name()),
            Some("torch-memory")
        );
        // 2.1+'s wording cut the same way
        let m = parse_torch_memory(
            "Tried to allocate 86.00 MiB. GPU 0 has a total capacty of 23.69 GiB of which 83.94 MiB is free. Of the allocated memory 22.22 GiB is allocated by PyTorch, and 1.04 GiB is reserved by PyTorch but unallocated.\n",
        );
        assert!(m.oom);
        assert_eq!(m.reserved_unallocated_mib, Some(1064.96));
        // neighbours: words that only say something tried to allocate name no GPU and no
        // capacity, and are neither an OOM nor this kind's line
        for t in [
            "the loader tried to allocate 2 GiB of pinned memory and failed\n",
            "Tried to allocate 216.00 MiB, then the job stopped\n",
            "Tried to allocate 20.00 MiB (GPU 0 is busy)\n",
        ] {
            assert!(!parse_torch_memory(t).oom, "{t}");
            assert!(!kind.marker(t.trim_end()), "{t}");
        }
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
    fn other_processes_the_message_names() {
        let m = parse_torch_memory(&fixture("torch_memory/oom_other_process_vllm.txt"));
        assert!(m.oom);
        assert_eq!(m.gpu, Some(1));
        assert_eq!(m.tried_to_allocate_mib, Some(1280.0));
        assert_eq!(m.total_capacity_mib, Some(95252.48));
        assert_eq!(m.free_mib, Some(1208.32));
        assert_eq!(m.process_in_use_mib, None);
        assert_eq!(
            m.other_processes,
            [OtherProcess {
                pid: 2752205,
                mib: 94023.68
            }]
        );
        assert_eq!(m.other_processes_mib, Some(94023.68));
        assert_eq!(m.allocated_mib, Some(92805.12));
        assert_eq!(m.reserved_unallocated_mib, Some(120.54));
        assert_eq!(m.private_pools_mib, None);
        assert_eq!(m.allowed_mib, None);
    }

    #[test]
    fn pytorch_1_2_cached_wording() {
        // before 1.4 the last figure is what the allocator holds beyond allocations ("cached")
        let m = parse_torch_memory(&fixture("torch_memory/oom_cached_wording_1gb.txt"));
        assert_eq!(m.source, Some("oom_message"));
        assert_eq!(m.total_capacity_mib, Some(1024.0));
        assert_eq!(m.allocated_mib, Some(435.61));
        assert_eq!(m.free_mib, Some(24.17));
        assert_eq!(m.reserved_unallocated_mib, Some(26.39));
        assert_eq!(m.reserved_mib, Some(462.0));
        assert_eq!(m.tried_to_allocate_mib, Some(26.0));
    }

    #[test]
    fn cuda_malloc_async_backend_wording() {
        // pytorch/pytorch#110194 (a problem: 'cudaMallocAsync cause too much fragmentation'),
        // the message of c10/cuda/CUDAMallocAsyncAllocator.cpp's mallocAsync as posted
        let text = "torch.cuda.OutOfMemoryError: Allocation on device 5 would exceed allowed memory. (out of memory)\nCurrently allocated     : 54.14 GiB\nRequested               : 686.41 MiB\nDevice limit            : 79.35 GiB\nFree (according to CUDA): 27.19 MiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB\n";
        let m = parse_torch_memory(text);
        assert!(m.oom);
        assert_eq!(m.gpu, Some(5));
        assert_eq!(m.allocated_mib, Some(55439.36));
        assert_eq!(m.tried_to_allocate_mib, Some(686.41));
        assert_eq!(m.total_capacity_mib, Some(81254.4));
        assert_eq!(m.free_mib, Some(27.19));
        // UINT64_MAX bytes: no limit was set
        assert_eq!(m.allowed_mib, None);
        // the backend prints no reserved figure: nothing is derived from `allocated` alone
        assert_eq!(m.reserved_mib, None);
        assert_eq!(m.reserved_unallocated_mib, None);
        assert_eq!(m.fragmentation, None);
        assert_eq!(m.source, None);
        // a markdown paste collapses the labels' padding; a set fraction is a limit below the
        // device (the wording's second form, as c10 prints it)
        let collapsed = "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated : 9.43 GiB\nRequested : 640.00 MiB\nDevice limit : 11.59 GiB\nFree (according to CUDA): 7.12 MiB\nPyTorch limit (set by user-supplied memory fraction)\n : 10.00 GiB";
        let c = parse_torch_memory(collapsed);
        assert_eq!(c.tried_to_allocate_mib, Some(640.0));
        assert_eq!(c.allowed_mib, Some(10240.0));
        // the first line alone (what ComfyUI logs keep) still says out of memory
        let first = parse_torch_memory(
            "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)",
        );
        assert!(first.oom);
        assert_eq!(first.allocated_mib, None);
        // a native message is not read as one (vllm-project/vllm#2140, healthy: 755.50 KiB
        // reserved but unallocated)
        let native = parse_torch_memory(
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacty of 23.69 GiB of which 3.09 GiB is free. Including non-PyTorch memory, this process has 20.57 GiB memory in use. Of the allocated memory 20.13 GiB is allocated by PyTorch, and 755.50 KiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
        );
        assert_eq!(native.source, Some("oom_message"));
        assert_eq!(native.reserved_unallocated_mib, Some(0.74));
        assert_eq!(native.free_mib, Some(3164.16));
    }

    #[test]
    fn memory_stats_dumps() {
        // NVIDIA/MinkowskiEngine#359 (healthy for the fragmentation rule: memory kept after a
        // caught OOM, 48 MiB reserved now): the OrderedDict printed on one line, a key wrapped
        // by the paste
        let mink = "('inactive_split_bytes.small_pool.freed', 310437888), ('inactive_split_bytes.small_pool.peak', 7574016), ('num_alloc_retries', 33), ('num_ooms', 2), ('reserved_bytes.all.allocated', 181865021440), ('reserved_bytes.all.current', 50331648), ('reserved_bytes.all.freed', 181814689792), ('reserved_bytes.all.peak', 15890120704), ('reserved_bytes.large_pool.allocated', 181779038208), ('reserved_bytes.large_pool.current', 0), ('reserved_bytes.large_pool.freed', 181779038208), ('reserved_bytes.large_pool.peak', 15837691904), ('reserved_bytes.small_pool.allocated', 85983232), ('reserved_bytes.small_pool.current', 50331648), ('reserved_bytes.small_pool.freed', 35651584), ('reserved_bytes.small_pool.peak', 54525952), ('segment.all.allocated', 354), ('segment.all.current', 24), ('segment.all.freed', 330), ('segment.all.peak', 58), ('segment.large_pool.allocated', 313), ('segment.large_pool.current', 0), ('segment.large_pool.freed', 313), ('segment.large_pool.peak', 32), ('segment.small_pool.alloca\nted', 41), ('segment.small_pool.current', 24), ('segment.small_pool.freed', 17), ('segment.small_pool.peak', 26)])";
        assert!(looks_like_memory_stats(mink));
        let m = parse_torch_memory(mink);
        assert_eq!(m.source, Some("memory_stats"));
        assert_eq!(m.reserved_mib, Some(48.0));
        assert_eq!(m.allocated_mib, None);
        assert_eq!(m.peak_reserved_mib, Some(15154.0));
        assert_eq!(m.peak_allocated_mib, None);
        assert_eq!(m.oom_count, Some(2));
        assert_eq!(m.malloc_retries, Some(33));
        assert!(m.oom);
        // the same stats as a dict or JSON (Python 3.12's OrderedDict repr, json.dumps): peak
        // allocated 3.83 GiB of 9.35 GiB peak reserved, the split blocks 1 GiB at their peak
        // (the figures of Stonesjtu/pytorch_memlab#47's profile, in memory_stats' keys)
        let d = parse_torch_memory(
            "OrderedDict({'allocated_bytes.all.current': 1073741824, 'allocated_bytes.all.peak': 4112380805, 'inactive_split_bytes.all.current': 0, 'inactive_split_bytes.all.peak': 1073741824, 'num_alloc_retries': 0, 'num_ooms': 0, 'reserved_bytes.all.current': 10039429939, 'reserved_bytes.all.peak': 10039429939})",
        );
        assert_eq!(d.source, Some("memory_stats"));
        assert_eq!(d.allocated_mib, Some(1024.0));
        assert_eq!(d.peak_allocated_mib, Some(3921.87));
        assert_eq!(d.peak_reserved_mib, Some(9574.35));
        assert_eq!(d.peak_non_releasable_mib, Some(1024.0));
        assert!(!d.oom);
        let j = parse_torch_memory(
            "{\n  \"allocated_bytes.all.peak\": 4112380805,\n  \"reserved_bytes.all.current\": 10039429939,\n  \"reserved_bytes.all.peak\": 10039429939\n}",
        );
        assert_eq!(j.peak_reserved_mib, Some(9574.35));
        assert_eq!(j.reserved_mib, Some(9574.35));
        // ROCm/pytorch#703's pretty-printed OrderedDict: every stat 0 (nothing to judge)
        let rocm = "OrderedDict([('active.all.allocated', 0),\n             ('reserved_bytes.all.current', 0),\n             ('reserved_bytes.all.peak', 0)])";
        let r = parse_torch_memory(rocm);
        assert_eq!(r.reserved_mib, Some(0.0));
        assert_eq!(r.fragmentation, None);
        // a script that reads the stats is not a dump of them
        let script = "        'inactive_split_bytes_peak': int(stats.get('inactive_split_bytes.all.peak', 0)),\n        'reserved_bytes': int(torch.cuda.memory_reserved()),\n        'num_ooms': int(stats.get('num_ooms', 0)),\n    x = stats.get('reserved_bytes.all.current', 0)";
        assert!(!looks_like_memory_stats(script));
        let s = parse_torch_memory(script);
        assert_eq!(s.oom_count, None);
        assert_eq!(s.source, None);
    }

    #[test]
    fn allowed_and_private_pool_figures() {
        // the source's two optional parts (`allowed_info`, `private_pool_msg`), in its wording
        let m = parse_torch_memory(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 30.00 GiB is free. Including non-PyTorch memory, this process has 40.00 GiB memory in use. 39.58 GiB allowed; Of the allocated memory 36.00 GiB is allocated by PyTorch, with 4.00 GiB allocated in private pools (e.g., CUDA Graphs), and 1.50 GiB is reserved by PyTorch but unallocated.",
        );
        assert_eq!(m.allowed_mib, Some(40529.92));
        assert_eq!(m.private_pools_mib, Some(4096.0));
        assert_eq!(m.allocated_mib, Some(36864.0));
        assert_eq!(m.reserved_unallocated_mib, Some(1536.0));
        let old = parse_torch_memory(
            "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capacity; 1.21 GiB already allocated; 19.92 GiB free; 1.70 GiB allowed; 1.22 GiB reserved in total by PyTorch)",
        );
        assert_eq!(old.allowed_mib, Some(1740.8));
        assert_eq!(old.reserved_mib, Some(1249.28));
    }

    #[test]
    fn rocm_builds_hipified_wording() {
        use crate::evidence::EvidenceKind as _;
        // ROCm/TheRock#2118 (healthy for the fragmentation rule: a test's 1.05 GiB memory
        // fraction, 55 MiB reserved but unallocated), the CI line without its exception class
        let line = "HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 255.98 GiB of which 244.65 GiB is free. 1.05 GiB allowed; Of the allocated memory 1017.01 MiB is allocated by PyTorch, with 17.00 MiB allocated in private pools (e.g., HIP Graphs), and 54.99 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";
        let m = parse_torch_memory(line);
        assert!(m.oom);
        assert!(TorchMemoryKind.marker(line));
        assert_eq!(m.source, Some("oom_message"));
        assert_eq!(m.allocated_mib, Some(1017.01));
        assert_eq!(m.private_pools_mib, Some(17.0));
        assert_eq!(m.reserved_unallocated_mib, Some(54.99));
        assert_eq!(m.allowed_mib, Some(1075.2));
        assert_eq!(m.free_mib, Some(250521.6));
        // a problem in the same wording (figures of kohya-ss/sd-scripts#2029's CUDA message:
        // 6.39 GiB of 21.12 GiB reserved unallocated when 1.99 GiB could not be had)
        let p = parse_torch_memory(
            "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.99 GiB. GPU 0 has a total capacity of 23.56 GiB of which 1.23 GiB is free. Of the allocated memory 14.73 GiB is allocated by PyTorch, and 6.39 GiB is reserved by PyTorch but unallocated.",
        );
        assert_eq!(p.reserved_mib, Some(21626.88));
        assert_eq!(p.fragmentation, Some(0.3026));
    }

    #[test]
    fn the_allocators_nvml_assert_is_an_oom_without_figures() {
        use crate::evidence::EvidenceKind;
        // NVIDIA forum thread 370049 (h136): JetPack 6.2's wheel on an Orin Nano, the assert
        // wrapped before its file
        let t = include_str!(
            "../../tests/fixtures/corpus/h136_forumpost_nvforum370049_orin_nano_nvml_assert_caching_allocator.txt"
        );
        assert!(
            TorchMemoryKind.marker("RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at")
        );
        let m = parse_torch_memory(t);
        assert!(m.oom);
        assert_eq!(m.source, None);
        assert_eq!(m.reserved_mib, None);
        // other internal asserts, and NVML's own errors, are not it
        for l in [
            "RuntimeError: false INTERNAL ASSERT FAILED at \"../c10/cuda/CUDAGraph.cpp\":47\n",
            "NVML_SUCCESS == r failed\n",
            "Failed to initialize NVML: Driver/library version mismatch\n",
        ] {
            assert!(!parse_torch_memory(l).oom, "{l}");
            assert!(!l.lines().any(|x| TorchMemoryKind.marker(x)), "{l}");
        }
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
