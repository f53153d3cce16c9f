//! Out-of-memory reports of XLA (JAX, TensorFlow with XLA, EXLA) and of the BFC allocator that
//! XLA and TensorFlow share, read from their producers:
//!
//! - XLA `xla/service/buffer_assignment.cc` (openxla/xla, 2023-2024): the runtime's
//!   `RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes.` followed by
//!   `BufferAssignment::ToVerboseString`: `BufferAssignment OOM Debugging.`, `StatsString`'s
//!   `BufferAssignment stats:` lines (`parameter allocation:`, `constant allocation:`,
//!   `maybe_live_out allocation:`, `preallocated temp allocation:`, `preallocated temp
//!   fragmentation:`, `total allocation:`, `total fragmentation: S (P%)`) and `Peak buffers:`
//!   with `Buffer K:` entries (`Size:`, `Operator:`, `XLA Label:`, `Shape:`);
//! - XLA's stream-executor allocator (`StreamExecutorMemoryAllocator::Allocate`):
//!   `Failed to allocate request for S (NB) on device ordinal D`;
//! - the BFC allocator (`tsl/framework/bfc_allocator.cc`, before 2022
//!   `tensorflow/core/common_runtime/bfc_allocator.cc`): `Allocator (NAME) ran out of memory
//!   trying to allocate S` (with `(rounded to N)requested by op OP`, or `with freed_by_count=N.
//!   The caller indicates that this is not a failure, …`), `Current allocation summary
//!   follows.`, and `AllocatorStats::DebugString` (`Limit:`, `InUse:`, `MaxInUse:`,
//!   `NumAllocs:`, `MaxAllocSize:`, `Reserved:`, `PeakReserved:`, `LargestFreeBlock:`);
//!   TensorFlow 1.x's `gpu_bfc_allocator.cc` startup lines (`Creating bin of max chunk size S`,
//!   `Allocating S bytes.`) are the same allocator being created, not an OOM.
//! - TensorFlow's `report_tensor_allocations_upon_oom` listing (`RunOptions`, TF 1.x-2.x):
//!   where an op fails with `RESOURCE_EXHAUSTED` and the option is set, the executor appends
//!   `ReportAllocsOnResourceExhausted`'s report (`tensorflow/core/common_runtime/
//!   step_stats_collector.cc`, the stored text read by the search tool, id 13278416231):
//!   `Current usage from device: <device>, allocator: <name>` per device and allocator, then
//!   `  <HumanReadableNumBytes> from <node>` for its largest live tensors. It is printed only
//!   after an allocation failed, so the line is read as the allocator's OOM, its name as
//!   `allocator`.
//!
//! - the TPU runtime's allocator (closed source; its wordings documented by openxla/xla
//!   `docs/errors/error_0100.md` at 4456b67 and `error_0101.md` at 11903d4): E0100's buffer
//!   allocation failure `Attempting to allocate S. That was not possible. There are F free.`,
//!   with `Due to fragmentation, the largest contiguous region of free memory is L.` where no
//!   single free block holds the request, then `; (0x0x0_HBM0)` (the memory space); E0101's
//!   program load `Attempting to reserve S at the bottom of memory. That was not possible.
//!   There are F free, R reserved, and V reservable.`; and the older runtime's (jax 0.4.x on
//!   Colab TPUs, 2023) `Could not allocate N bytes in memory SPACE; A bytes allocatable, V
//!   bytes available`. Sizes are the runtime's human-readable ones (K/M/G/T, binary). The
//!   error docs name the two causes: a request above the free memory (out of memory) or free
//!   memory enough in total but in no single contiguous block (fragmentation): `fragmented`
//!   says the second, from the figures (largest contiguous or allocatable < request <= free).
//! - XLA's old `LocalClient` (`tensorflow/compiler/xla/python/local_client.cc`, jaxlib 0.1.x,
//!   2019): `Execution of replica 0 failed: Resource exhausted: Out of memory while trying to
//!   allocate N bytes.`, read also where a terminal or the paste wrapped it after `Out`.
//!
//! The `xla.oom` probe gives this reading to `memory.allocator-fragmentation`, which judges
//! only the TPU runtime's `fragmented` (its own figures: free memory enough in total, in no
//! single block). Otherwise an XLA OOM says the program did not fit: XLA's `total
//! fragmentation` is its buffer packing at compile time, not an allocator holding idle memory,
//! and the BFC stats' `Limit - InUse` is no free memory in one place (EXLA's report with
//! `LargestFreeBlock: 0` and its regions allocated up to the limit).

use regex::Regex;
use std::sync::LazyLock;

use super::scan::has;

static OOM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(RESOURCE_EXHAUSTED|Resource exhausted): Out\s+of memory while trying to allocate (\d+) bytes").unwrap()
});
static REQUEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"Failed to allocate request for ([0-9.]+\s*[KMGT]?i?B) \((\d+)B\) on device ordinal (\d+)",
    )
    .unwrap()
});
static BFC_OOM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Allocator \(([^)]+)\) ran out of memory trying to allocate ([0-9.]+\s*[KMGT]?i?B)")
        .unwrap()
});
static STAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(parameter allocation|constant allocation|maybe_live_out allocation|preallocated temp allocation|preallocated temp fragmentation|total allocation|total fragmentation):\s*(\S+)(?:\s*\(([0-9.]+)%\))?").unwrap()
});
static CURRENT_USAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Current usage from device: /\S+, allocator: ([A-Za-z0-9_]{1,64})").unwrap()
});
static BFC_STAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize|Reserved|PeakReserved|LargestFreeBlock):\s+(\d+)\s*$").unwrap()
});
// the TPU runtime (E0100, E0101, the 2023 wording); sizes as `31.06M`, `29.49G`, `0B`
static TPU_ALLOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Attempting to (allocate|reserve) ([0-9.]+[KMGT]?i?B?)(?: at the bottom of memory)?\. That was not possible\. There are ([0-9.]+[KMGT]?i?B?) free(?:, ([0-9.]+[KMGT]?i?B?) reserved, and ([0-9.]+[KMGT]?i?B?) reservable)?\.(?: Due to fragmentation, the largest contiguous region of free memory is ([0-9.]+[KMGT]?i?B?)\.)?(?:; \(([0-9A-Za-z_]{1,32})\))?").unwrap()
});
static TPU_COULD_NOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Could not allocate (\d+) bytes in memory ([0-9A-Za-z_]{1,32}); (\d+) bytes allocatable, (\d+) bytes available").unwrap()
});
// XLA's old message wrapped after `Out` (the next line begins `of memory while trying …`)
static OOM_WRAPPED_HEAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(RESOURCE_EXHAUSTED|Resource exhausted): Out\s*$").unwrap());
static OOM_WRAPPED_TAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*of memory while trying to allocate (\d+) bytes").unwrap());

/// Bytes of the TPU runtime's human-readable size (`31.06M`, `29.49G`, `147.64M`, `0B`),
/// binary multiples; `None` for anything else.
fn tpu_bytes(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches('B').trim_end_matches('i');
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let n: f64 = num.parse().ok()?;
    (n.is_finite() && n >= 0.0).then(|| (n * mult as f64).round() as u64)
}

static BUFFER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*Buffer \d+:\s*$").unwrap());

fn is_marker(l: &str) -> bool {
    OOM.is_match(l)
        || OOM_WRAPPED_HEAD.is_match(l)
        || TPU_ALLOC.is_match(l)
        || TPU_COULD_NOT.is_match(l)
        || REQUEST.is_match(l)
        || BFC_OOM.is_match(l)
        || has!(l, "BufferAssignment OOM Debugging.")
        || (has!(l, "Current usage from device: ") && CURRENT_USAGE.is_match(l))
        || has!(l, "gpu_bfc_allocator.cc")
        || (has!(l, "bfc_allocator.cc") && has!(l, "Allocator ("))
}

/// The report read as JSON; `None` when the text holds none of its lines.
pub fn read(text: &str) -> Option<serde_json::Value> {
    let mut out = serde_json::Map::new();
    let mut stats = serde_json::Map::new();
    let mut bfc = serde_json::Map::new();
    let (mut any, mut peak, mut in_peak, mut bins) = (false, 0u64, false, 0u64);
    let mut not_a_failure = false;
    let mut wrapped_head = None::<String>;
    let mut tpu = serde_json::Map::new();
    for l in text.lines() {
        if let (Some(status), Some(c)) = (wrapped_head.take(), OOM_WRAPPED_TAIL.captures(l)) {
            any = true;
            out.entry("status").or_insert_with(|| status.into());
            out.entry("oom_bytes")
                .or_insert_with(|| c[1].parse::<u64>().ok().into());
        }
        if let Some(c) = OOM_WRAPPED_HEAD.captures(l) {
            wrapped_head = Some(c[1].to_string());
        }
        if tpu.is_empty() {
            if let Some(c) = TPU_ALLOC.captures(l) {
                any = true;
                tpu.insert("operation".into(), c[1].to_string().into());
                tpu.insert("request".into(), c[2].to_string().into());
                tpu.insert("request_bytes".into(), tpu_bytes(&c[2]).into());
                tpu.insert("free".into(), c[3].to_string().into());
                tpu.insert("free_bytes".into(), tpu_bytes(&c[3]).into());
                if let (Some(r), Some(v)) = (c.get(4), c.get(5)) {
                    tpu.insert("reserved_bytes".into(), tpu_bytes(r.as_str()).into());
                    tpu.insert("reservable_bytes".into(), tpu_bytes(v.as_str()).into());
                }
                if let Some(m) = c.get(6) {
                    tpu.insert("largest_free".into(), m.as_str().to_string().into());
                    tpu.insert("largest_free_bytes".into(), tpu_bytes(m.as_str()).into());
                }
                if let Some(m) = c.get(7) {
                    tpu.insert("memory_space".into(), m.as_str().to_string().into());
                }
            } else if let Some(c) = TPU_COULD_NOT.captures(l) {
                any = true;
                tpu.insert("operation".into(), "allocate".into());
                tpu.insert("request_bytes".into(), c[1].parse::<u64>().ok().into());
                tpu.insert("memory_space".into(), c[2].to_string().into());
                tpu.insert("largest_free_bytes".into(), c[3].parse::<u64>().ok().into());
                tpu.insert("free_bytes".into(), c[4].parse::<u64>().ok().into());
            }
            if !tpu.is_empty() && l.contains("RESOURCE_EXHAUSTED") {
                out.entry("status")
                    .or_insert_with(|| "RESOURCE_EXHAUSTED".into());
            }
        }
        if let Some(c) = OOM.captures(l) {
            any = true;
            out.entry("status")
                .or_insert_with(|| c[1].to_string().into());
            out.entry("oom_bytes")
                .or_insert_with(|| c[2].parse::<u64>().ok().into());
        }
        if let Some(c) = REQUEST.captures(l) {
            any = true;
            out.entry("request")
                .or_insert_with(|| c[1].trim().to_string().into());
            out.entry("request_bytes")
                .or_insert_with(|| c[2].parse::<u64>().ok().into());
            out.entry("device_ordinal")
                .or_insert_with(|| c[3].parse::<u64>().ok().into());
            if l.contains("RESOURCE_EXHAUSTED") {
                out.entry("status")
                    .or_insert_with(|| "RESOURCE_EXHAUSTED".into());
            }
        }
        if let Some(c) = BFC_OOM.captures(l) {
            any = true;
            out.entry("allocator")
                .or_insert_with(|| super::clip(&c[1], 64).into());
            out.entry("allocator_request")
                .or_insert_with(|| c[2].trim().to_string().into());
            not_a_failure |= l.contains("The caller indicates that this is not a failure");
        }
        if l.contains("BufferAssignment OOM Debugging.") {
            any = true;
        }
        // TF's listing after a failed allocation (`report_tensor_allocations_upon_oom`)
        if let Some(c) = CURRENT_USAGE.captures(l) {
            any = true;
            out.entry("allocator")
                .or_insert_with(|| super::clip(&c[1], 64).into());
        }
        if let Some(c) = STAT.captures(l) {
            let key = c[1].replace([' ', '-'], "_");
            stats.insert(key.clone(), c[2].to_string().into());
            if let Some(p) = c.get(3) {
                stats.insert(format!("{key}_pct"), p.as_str().parse::<f64>().ok().into());
            }
        }
        if let Some(c) = BFC_STAT.captures(l) {
            bfc.insert(c[1].to_string(), c[2].parse::<u64>().ok().into());
        }
        if l.trim() == "Peak buffers:" {
            in_peak = true;
        } else if in_peak && BUFFER.is_match(l) {
            peak += 1;
        }
        if l.contains("Creating bin of max chunk size") {
            bins += 1;
            any = true;
        }
        if l.contains("gpu_bfc_allocator.cc") {
            any = true;
            if let Some(s) = l.split("] Allocating ").nth(1) {
                out.entry("bfc_region").or_insert_with(|| {
                    super::clip(s.trim().trim_end_matches(" bytes."), 64).into()
                });
            }
        }
    }
    if !any {
        return None;
    }
    if !tpu.is_empty() {
        let n = |k: &str| tpu.get(k).and_then(|v| v.as_u64());
        // the error docs' fragmentation: the free memory holds the request, no block of it does
        let fragmented = matches!(
            (n("request_bytes"), n("free_bytes"), n("largest_free_bytes")),
            (Some(r), Some(f), Some(l)) if l < r && r <= f
        );
        tpu.insert("fragmented".into(), fragmented.into());
        out.insert("tpu".into(), tpu.into());
    }
    out.insert(
        "oom".into(),
        (out.contains_key("oom_bytes")
            || out.contains_key("tpu")
            || out.contains_key("request_bytes")
            || (out.contains_key("allocator") && !not_a_failure))
            .into(),
    );
    out.insert("not_a_failure".into(), not_a_failure.into());
    if !stats.is_empty() {
        out.insert("buffer_assignment".into(), stats.into());
    }
    out.insert("peak_buffers".into(), peak.into());
    if !bfc.is_empty() {
        out.insert("bfc_stats".into(), bfc.into());
    }
    out.insert("bins_created".into(), bins.into());
    Some(out.into())
}

pub struct XlaOomKind;

impl super::EvidenceKind for XlaOomKind {
    fn marker(&self, line: &str) -> bool {
        is_marker(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[
            "RESOURCE_EXHAUSTED",
            "Resource exhausted",
            "That was not possible.",
            " bytes allocatable, ",
            "Failed to allocate request for ",
            "ran out of memory trying to allocate",
            "BufferAssignment OOM Debugging.",
            "bfc_allocator.cc",
            "Current usage from device: ",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "xla-oom"
    }
    fn doc(&self) -> &'static str {
        "an XLA (JAX, TF/XLA) out-of-memory report with its BufferAssignment block, or the BFC allocator's OOM, stats or startup lines"
    }
    fn example(&self) -> &'static str {
        "python train_jax.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "oom",
                "the text reports an allocation that failed (not the BFC's 'not a failure' retry)",
            ),
            (
                "status",
                "RESOURCE_EXHAUSTED (or TF 1.x's `Resource exhausted`)",
            ),
            (
                "oom_bytes",
                "N of `Out of memory while trying to allocate N bytes`",
            ),
            (
                "tpu",
                "the TPU runtime's allocation or program-load failure: operation (allocate/reserve), request, request_bytes, free, free_bytes, largest_free(_bytes) (the largest contiguous region, or the older wording's allocatable bytes), reserved_bytes and reservable_bytes (a program load), memory_space (0x0x0_HBM0), fragmented (free memory enough in total, in no single block)",
            ),
            (
                "request",
                "S of `Failed to allocate request for S (NB) on device ordinal D`",
            ),
            ("request_bytes", "its N"),
            ("device_ordinal", "its D"),
            (
                "allocator",
                "the BFC allocator's name (`GPU_0_bfc`), from its OOM line or TF's `Current usage from device` listing",
            ),
            (
                "allocator_request",
                "the size it ran out of memory trying to allocate",
            ),
            (
                "not_a_failure",
                "the BFC says the caller does not treat it as a failure",
            ),
            (
                "buffer_assignment",
                "XLA's BufferAssignment stats: allocations and fragmentation (its buffer packing)",
            ),
            (
                "peak_buffers",
                "how many `Buffer K:` entries `Peak buffers:` lists",
            ),
            (
                "bfc_stats",
                "AllocatorStats: Limit, InUse, MaxInUse, NumAllocs, MaxAllocSize, Reserved, PeakReserved, LargestFreeBlock (bytes)",
            ),
            (
                "bins_created",
                "TF 1.x `gpu_bfc_allocator.cc` `Creating bin` startup lines",
            ),
            (
                "bfc_region",
                "the size of its `Allocating S bytes.` startup line",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["xla.oom"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        // (`scan::marker_lines` of the text, from the search made once for the late kinds)
        s.late
            .lines(super::scan::Set::XlaOom)
            .any(|l| self.marker(l))
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        read(text).ok_or(super::ParseError::NotThisKind(
            "no XLA or BFC allocator out-of-memory line found",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // github.com/patrickbryant1/AFProfile/issues/8 (a model too big for a 12 GB GPU)
    const AFPROFILE: &str = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:  372.76MiB\n              constant allocation:    48.5KiB\n        maybe_live_out allocation:    9.64GiB\n     preallocated temp allocation:    4.44GiB\n                 total allocation:   14.44GiB\n              total fragmentation:  680.30MiB (4.60%)\n";

    #[test]
    fn the_oom_and_its_buffer_assignment_stats() {
        let v = read(AFPROFILE).unwrap();
        assert_eq!(v["oom"], true);
        assert_eq!(v["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(v["oom_bytes"], 4770354232u64);
        let s = &v["buffer_assignment"];
        assert_eq!(s["parameter_allocation"], "372.76MiB");
        assert_eq!(s["constant_allocation"], "48.5KiB");
        assert_eq!(s["maybe_live_out_allocation"], "9.64GiB");
        assert_eq!(s["preallocated_temp_allocation"], "4.44GiB");
        assert_eq!(s["total_allocation"], "14.44GiB");
        assert_eq!(s["total_fragmentation"], "680.30MiB");
        assert_eq!(s["total_fragmentation_pct"], 4.6);
        assert_eq!(v["peak_buffers"], 0);
    }

    #[test]
    fn peak_buffers_and_the_bfc_stats_above_it() {
        // github.com/elixir-nx/xla/issues/32 (EXLA's log: BFC stats, then XLA's block)
        let t = "[info] Stats: \nLimit:                      4928097484\nInUse:                      4248542720\nMaxInUse:                   4248542720\nNumAllocs:                        1040\nMaxAllocSize:                151781376\nReserved:                            0\nPeakReserved:                        0\nLargestFreeBlock:                    0\n\n[error] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 58982400 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n                 total allocation:  112.50MiB\n              total fragmentation:         0B (0.00%)\nPeak buffers:\n        Buffer 1:\n                Size: 56.25MiB\n                Entry Parameter Subshape: f32[14745600]\n                ==========================\n\n        Buffer 2:\n";
        let v = read(t).unwrap();
        assert_eq!(v["oom_bytes"], 58982400);
        assert_eq!(v["peak_buffers"], 2);
        let b = &v["bfc_stats"];
        assert_eq!(b["Limit"], 4928097484u64);
        assert_eq!(b["InUse"], 4248542720u64);
        assert_eq!(b["MaxInUse"], 4248542720u64);
        assert_eq!(b["NumAllocs"], 1040);
        assert_eq!(b["MaxAllocSize"], 151781376);
        assert_eq!(b["Reserved"], 0);
        assert_eq!(b["PeakReserved"], 0);
        assert_eq!(b["LargestFreeBlock"], 0);
    }

    #[test]
    fn tensorflows_allocation_listing_after_an_oom() {
        use crate::evidence::EvidenceKind;
        // discuss.tf.wiki topic 171 (h136): `report_tensor_allocations_upon_oom`'s listing
        let t = include_str!(
            "../../tests/fixtures/corpus/h136_tfoom_tfwiki171_report_tensor_allocations_unet.txt"
        );
        assert!(XlaOomKind.marker(
            "Current usage from device: /job:localhost/replica:0/task:0/device:GPU:0, allocator: GPU_0_bfc"
        ));
        let v = read(t).unwrap();
        assert_eq!(v["allocator"], "GPU_0_bfc");
        assert_eq!(v["oom"], true);
        // prose about current usage, and another tool's line, are not it
        for l in [
            "Current usage from device: high\n",
            "current usage from device /dev/sda, allocator: none\n",
        ] {
            assert!(read(l).is_none(), "{l}");
        }
    }

    #[test]
    fn the_stream_executor_request_and_the_bfc_oom() {
        // github.com/google-deepmind/jax_privacy/issues/10
        let v = read("Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device ordinal 0\n").unwrap();
        assert_eq!(v["oom"], true);
        assert_eq!(v["request"], "176.00MiB");
        assert_eq!(v["request_bytes"], 184549376);
        assert_eq!(v["device_ordinal"], 0);
        // github.com/tensorflow/tensorflow/issues/60401 (a real OOM)
        let v = read("2023-04-23 01:00:16.820335: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 560.44MiB (rounded to 587661312)requested by op _EagerConst\n").unwrap();
        assert_eq!(v["allocator"], "GPU_0_bfc");
        assert_eq!(v["allocator_request"], "560.44MiB");
        assert_eq!(v["oom"], true);
        assert_eq!(v["not_a_failure"], false);
        // github.com/talmolab/sleap/issues/2142: the BFC's retry that is not a failure
        let v = read("2025-03-17 17:48:09.935747: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.10GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\n").unwrap();
        assert_eq!(v["not_a_failure"], true);
        assert_eq!(v["oom"], false);
    }

    #[test]
    fn the_healthy_startup_lines() {
        // github.com/tensorflow/tensorflow/issues/1772 (TF 0.x creating its GPU allocator)
        let t = "I tensorflow/core/common_runtime/gpu/gpu_bfc_allocator.cc:51] Creating bin of max chunk size 8.00MiB\nI tensorflow/core/common_runtime/gpu/gpu_bfc_allocator.cc:51] Creating bin of max chunk size 16.00GiB\nI tensorflow/core/common_runtime/gpu/gpu_bfc_allocator.cc:73] Allocating 10.54GiB bytes.\n";
        let v = read(t).unwrap();
        assert_eq!(v["oom"], false);
        assert_eq!(v["bins_created"], 2);
        assert_eq!(v["bfc_region"], "10.54GiB");
        // prose about an OOM is not the report
        assert!(read("I get an out of memory error with jax on my GPU\n").is_none());
    }

    #[test]
    fn the_tpu_runtimes_allocation_failures() {
        use crate::evidence::EvidenceKind;
        // github.com/google/trax/issues/431 (h148): E0100 with the fragmentation sentence
        let t = include_str!(
            "../../tests/fixtures/corpus/h148_xlaoom_trax431_tpu_largest_contiguous_region.txt"
        );
        assert!(XlaOomKind.marker(t.lines().next().unwrap()));
        let v = read(t).unwrap();
        assert_eq!(v["oom"], true);
        assert_eq!(v["status"], "RESOURCE_EXHAUSTED");
        let p = &v["tpu"];
        assert_eq!(p["operation"], "allocate");
        assert_eq!(p["request"], "31.06M");
        assert_eq!(p["request_bytes"], 32568771u64);
        assert_eq!(p["free"], "58.64M");
        assert_eq!(p["largest_free"], "30.56M");
        assert_eq!(p["largest_free_bytes"], 32044483u64);
        assert_eq!(p["memory_space"], "0x0x0_HBM0");
        assert_eq!(p["fragmented"], true);
        // github.com/jax-ml/jax/issues/14304 (h148): the older wording, allocatable < available
        let t = include_str!(
            "../../tests/fixtures/corpus/h148_xlaoom_jax14304_hbm_allocatable_below_available.txt"
        );
        let v = read(t).unwrap();
        let p = &v["tpu"];
        assert_eq!(p["request_bytes"], 10485760u64);
        assert_eq!(p["largest_free_bytes"], 4374528u64);
        assert_eq!(p["free_bytes"], 14942208u64);
        assert_eq!(p["memory_space"], "0x0x0_HBM0");
        assert_eq!(p["fragmented"], true);
        assert_eq!(v["oom"], true);
        // openxla/xla docs/errors/error_0100.md's sample: more than the free memory, no
        // fragmentation sentence: out of memory, not fragmented
        let v = read("ValueError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 8.00M. That was not possible. There are 6.43M free.; (0x0x1_HBM0)\n").unwrap();
        assert_eq!(v["tpu"]["request_bytes"], 8388608u64);
        assert_eq!(v["tpu"]["memory_space"], "0x0x1_HBM0");
        assert_eq!(v["tpu"]["fragmented"], false);
        // error_0101.md's program load: reserved and reservable, a program bigger than the free
        let v = read("XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program 'jit_embedding_pipeline_step_fn': Attempting to reserve 29.49G at the bottom of memory. That was not possible. There are 147.64M free, 0B reserved, and 147.64M reservable. Scope: unknown..: while running replica 0 and partition 34 of a replicated computation (other replicas may have failed as well).\n").unwrap();
        let p = &v["tpu"];
        assert_eq!(p["operation"], "reserve");
        assert_eq!(p["reserved_bytes"], 0);
        assert_eq!(p["reservable_bytes"], 154811761u64);
        assert_eq!(p["fragmented"], false);
        // prose about it, and another allocator's wording, are not it
        for l in [
            "I tried to allocate more but that was not possible.\n",
            "Could not allocate 10 bytes of host memory\n",
            "java.lang.OutOfMemoryError: Failed to allocate a 24 byte allocation with 1361696 free bytes; failed due to fragmentation (largest possible contiguous allocation 190840832 bytes)\n",
        ] {
            assert!(read(l).is_none(), "{l}");
        }
    }

    #[test]
    fn the_old_local_client_message_wrapped_after_out() {
        use crate::evidence::EvidenceKind;
        // github.com/jax-ml/jax/issues/788 (h148): jaxlib 0.1.20, the paste wrapped after `Out `
        let t = include_str!(
            "../../tests/fixtures/corpus/h148_xlaoom_jax788_replica_resource_exhausted_wrapped.txt"
        );
        assert!(XlaOomKind.marker(t.lines().next().unwrap()));
        let v = read(t).unwrap();
        assert_eq!(v["oom"], true);
        assert_eq!(v["status"], "Resource exhausted");
        assert_eq!(v["oom_bytes"], 5520758552u64);
        // a line ending `Out` with nothing after it, or followed by another line, holds no size
        assert!(read("Resource exhausted: Out\nof the box it works\n").is_none());
        assert!(read("Time Out\nof memory while trying to allocate 5 bytes\n").is_none());
    }
}
