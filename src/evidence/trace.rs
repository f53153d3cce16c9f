//! PyTorch profiler (Kineto) Chrome traces: how busy the GPU was inside the profiled steps, and
//! why it was idle. The trace is streamed, never loaded: a custom serde visitor walks
//! `traceEvents` one element at a time and keeps only compact per-event aggregates (about 24
//! bytes per GPU kernel, nothing for most CPU events), so a 500 MB trace stays far below 500 MB
//! of memory. Plain and gzip files are accepted (detected by their magic bytes).
//!
//! Event shape read (Chrome trace format as Kineto writes it): `ph` (`X` complete events only),
//! `cat` (`kernel`, `gpu_memcpy`, `gpu_memset`, `cuda_runtime`, `cpu_op`, `user_annotation`,
//! `python_function`, `gpu_user_annotation`; the older `Kernel`, `Memcpy`, `Memset`, `Runtime`,
//! `Operator` spellings too), `name`, `ts` and `dur` in microseconds (floats), `args.bytes`, and
//! `args["External id"]` (`"external id"` in Kineto before 2022): the id of the CPU op that
//! issued a runtime call, which Kineto also writes on the GPU activity the call launched.
//!
//! A sync call is a host sync in the step unless it is the wait of a blocking host-to-device
//! copy: PyTorch's `copy_` (`aten/src/ATen/native/cuda/Copy.cu`, `copy_kernel_cuda`) issues
//! `cudaMemcpyAsync` and, without `non_blocking=True`, `cudaStreamSynchronize` under the same
//! op, so the sync shares the `External id` of a `Memcpy HtoD` activity. That wait is the batch's
//! `.to(device)` (what pinned memory and `non_blocking` remove, `launch.pageable-copies`), not a
//! read of a GPU value (`.item()`, `.cpu()`: their copies run device-to-host), and is counted
//! apart (`h2d_copy_syncs`).
//!
//! The analysis window is the profiled steps (`ProfilerStep#N` annotations: first step start to
//! last step end); a trace without steps is analysed whole. A truncated trace yields what its
//! complete events say, with `truncated: true`.

use flate2::read::MultiGzDecoder;
use serde::Serialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Host-side calls that make the CPU wait for the GPU; counted by name.
pub const SYNC_CALLS: [&str; 4] = [
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "aten::item",
    "aten::_local_scalar_dense",
];

/// A gap between GPU activities shorter than this (microseconds) is launch overhead: a launch
/// costs a few microseconds and the Python op around it tens; ten times the median kernel
/// `launch.tiny-kernels` calls tiny (10 us). A longer gap is the host doing other work.
pub const SHORT_GAP_US: f64 = 100.0;

/// Distinct kernel names remembered; further names are pooled under `<other kernels>` so a
/// trace with a unique name per kernel cannot grow the table without bound.
const MAX_KERNEL_NAMES: usize = 50_000;
const OTHER_KERNELS: &str = "<other kernels>";

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace `{path}`: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("not a Chrome trace: {0}")]
    NotATrace(String),
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TopKernel {
    pub name: String,
    pub count: u64,
    pub total_ms: f64,
    /// Of all kernel time in the window.
    pub share: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PageableCopies {
    pub count: u64,
    /// Sum of `args.bytes` over the copies that state it.
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_step: Option<f64>,
}

/// What a profiler trace says about GPU utilization. GPU figures are absent when the trace
/// recorded no GPU activity at all (a CPU-only profile), and host-side figures are absent when
/// it recorded no CPU activity: an absent figure was not measured, it is not zero.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceStats {
    /// Elements of `traceEvents` visited, of any kind.
    pub events_seen: u64,
    /// The JSON ended early or broke; figures cover the events before that point.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
    /// `steps` (first `ProfilerStep#N` start to last step end) or `whole_trace`.
    pub window: &'static str,
    pub steps: u64,
    /// Length of the window.
    pub duration_ms: f64,
    /// Union of GPU kernel intervals over the window, divided by the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_kernel_busy_fraction: Option<f64>,
    /// As above, counting memcpy and memset on the GPU as busy too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_busy_fraction: Option<f64>,
    /// Window time with no kernel, memcpy or memset running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_idle_ms: Option<f64>,
    /// GPU idle while the CPU was inside DataLoader `__next__` or a sync call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_waiting_on_host_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_other_ms: Option<f64>,
    /// GPU idle in gaps shorter than [`SHORT_GAP_US`] between GPU activities: the time a
    /// launch-bound step loses between kernels (longer gaps are the host doing something else).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_short_gaps_ms: Option<f64>,
    pub gpu_memcpy_count: u64,
    pub gpu_memcpy_ms: f64,
    pub gpu_memset_count: u64,
    pub gpu_memset_ms: f64,
    /// Time inside DataLoader `__next__` (union of its spans) in the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataloader_ms: Option<f64>,
    /// `dataloader_ms` over the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataloader_share: Option<f64>,
    /// Calls per name in [`SYNC_CALLS`]; nested calls count under each name (one `.item()`
    /// usually shows as `aten::item`, `aten::_local_scalar_dense` and `cudaStreamSynchronize`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_calls: Option<BTreeMap<String, u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_calls_total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_calls_per_step: Option<BTreeMap<String, f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_calls_per_step_total: Option<f64>,
    /// Sync calls that were the wait of a blocking host-to-device copy (same `External id` as a
    /// `Memcpy HtoD` activity): not in `sync_calls`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h2d_copy_syncs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pageable_h2d_copies: Option<PageableCopies>,
    pub kernel_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels_per_step: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_kernel_us: Option<f64>,
    /// Time in kernels whose name contains `nccl`, over all kernel time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_kernel_share: Option<f64>,
    pub top_kernels: Vec<TopKernel>,
}

/// Longest JSON string (a name, a key, an argument) read from a trace: serde_json holds a
/// string whole while it reads it, so one 3 GiB string in a 3 MB gzip took 3.16 GB. Kernel
/// names, the longest strings a real trace has, are a few KB.
pub const MAX_TRACE_STRING_BYTES: usize = 16 << 20;

/// A reader that fails with "input too large" once a JSON string runs longer than `max` bytes:
/// the bound applies while streaming, before serde_json has buffered the string.
struct StringCap<R> {
    inner: R,
    max: usize,
    in_string: bool,
    escaped: bool,
    run: usize,
}

impl<R: Read> Read for StringCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut rest = &buf[..n];
        // memchr jumps from quote to quote (and backslash), so the scan costs little per byte
        while !rest.is_empty() {
            if !self.in_string {
                match memchr::memchr(b'"', rest) {
                    Some(i) => {
                        self.in_string = true;
                        self.run = 0;
                        rest = &rest[i + 1..];
                    }
                    None => break,
                }
            } else if self.escaped {
                self.escaped = false;
                self.run += 1;
                rest = &rest[1..];
            } else {
                let i = memchr::memchr2(b'"', b'\\', rest);
                let upto = i.unwrap_or(rest.len());
                self.run += upto;
                if self.run > self.max {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "input too large: a JSON string longer than {} MiB",
                            self.max >> 20
                        ),
                    ));
                }
                match i {
                    Some(i) if rest[i] == b'"' => self.in_string = false,
                    Some(_) => self.escaped = true,
                    None => {}
                }
                rest = &rest[(upto + 1).min(rest.len())..];
            }
        }
        Ok(n)
    }
}

fn capped<R: Read>(inner: R) -> StringCap<R> {
    StringCap {
        inner,
        max: MAX_TRACE_STRING_BYTES,
        in_string: false,
        escaped: false,
        run: 0,
    }
}

/// Analyses a Chrome trace from a reader (plain JSON or gzip).
pub fn analyze_trace<R: Read>(r: R) -> Result<TraceStats, TraceError> {
    let mut br = BufReader::with_capacity(1 << 16, r);
    let gzip = match br.fill_buf() {
        Ok(head) => head.starts_with(&[0x1f, 0x8b]),
        Err(e) => return Err(TraceError::NotATrace(format!("read failed: {e}"))),
    };
    if gzip {
        analyze_json(BufReader::with_capacity(
            1 << 16,
            capped(MultiGzDecoder::new(br)),
        ))
    } else {
        analyze_json(BufReader::with_capacity(1 << 16, capped(br)))
    }
}

/// Analyses the trace file at `path` (plain JSON or gzip).
pub fn analyze_trace_file(path: &Path) -> Result<TraceStats, TraceError> {
    let f = std::fs::File::open(path).map_err(|source| TraceError::Open {
        path: path.display().to_string(),
        source,
    })?;
    analyze_trace(f)
}

fn analyze_json<R: Read>(r: R) -> Result<TraceStats, TraceError> {
    let mut acc = Acc::default();
    let mut de = serde_json::Deserializer::from_reader(r);
    let err = TopSeed(&mut acc).deserialize(&mut de).err();
    if acc.events_seen == 0 {
        let why = match err {
            Some(e) => format!("no trace events before the JSON ended or broke: {e}"),
            None => "no `traceEvents` array with events".to_string(),
        };
        return Err(TraceError::NotATrace(why));
    }
    Ok(acc.finish(err.map(|e| super::clip(&e.to_string(), super::MAX_TEXT))))
}

// ---------------------------------------------------------------------------------------------
// Streaming deserialization: top level (object with `traceEvents`, or a bare array), the event
// array, and each event. Every visitor accepts any JSON type and drops what it does not expect,
// so one odd element never stops the walk.

struct TopSeed<'a>(&'a mut Acc);

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(TopVisitor(self.0))
    }
}

struct TopVisitor<'a>(&'a mut Acc);

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace object or event array")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            if key == Key::TraceEvents {
                map.next_value_seed(EventsSeed(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(EventSeed(&mut *self.0))?.is_some() {}
        Ok(())
    }
    // Any other top-level value is not a trace; the caller reports zero events.
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

struct EventsSeed<'a>(&'a mut Acc);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(EventsVisitor(self.0))
    }
}

struct EventsVisitor<'a>(&'a mut Acc);

impl<'de> Visitor<'de> for EventsVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(EventSeed(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        drain_map(map)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

struct EventSeed<'a>(&'a mut Acc);

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(EventVisitor(self.0))
    }
}

struct EventVisitor<'a>(&'a mut Acc);

impl<'de> Visitor<'de> for EventVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut ev = RawEvent::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Ph => ev.ph = map.next_value::<Lenient>()?.0,
                Key::Cat => ev.cat = map.next_value::<Lenient>()?.0,
                Key::Name => ev.name = map.next_value::<Lenient>()?.0,
                Key::Ts => ev.ts = map.next_value::<Num>()?.0,
                Key::Dur => ev.dur = map.next_value::<Num>()?.0,
                Key::Args => ev.args = map.next_value::<Args>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.0.add(ev);
        Ok(())
    }
    // A non-object element is garbage: count it as seen and move on.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.events_seen += 1;
        drain_seq(seq)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.0.events_seen += 1;
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.0.events_seen += 1;
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.0.events_seen += 1;
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.0.events_seen += 1;
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.0.events_seen += 1;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.events_seen += 1;
        Ok(())
    }
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Object keys we act on, matched without allocating.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    TraceEvents,
    Ph,
    Cat,
    Name,
    Ts,
    Dur,
    Args,
    Bytes,
    CopyKind,
    ExternalId,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "traceEvents" => Key::TraceEvents,
                    "ph" => Key::Ph,
                    "cat" => Key::Cat,
                    "name" => Key::Name,
                    "ts" => Key::Ts,
                    "dur" => Key::Dur,
                    "args" => Key::Args,
                    "bytes" => Key::Bytes,
                    "kind" | "copy_kind" | "copyKind" | "memory kind" => Key::CopyKind,
                    "External id" | "external id" => Key::ExternalId,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// A string if the value is one; anything else is consumed and dropped.
struct Lenient(Option<String>);

impl<'de> de::Deserialize<'de> for Lenient {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lenient, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lenient;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Lenient, E> {
                Ok(Lenient(Some(super::clip(v, super::MAX_TEXT))))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Lenient, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Lenient, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Lenient, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Lenient, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Lenient, E> {
                Ok(Lenient(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Lenient, A::Error> {
                drain_map(map).map(|_| Lenient(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Lenient, A::Error> {
                drain_seq(seq).map(|_| Lenient(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A number, or a string holding one (some exporters quote them); anything else is dropped.
struct Num(Option<f64>);

impl<'de> de::Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Num, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v.is_finite().then_some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                Ok(Num(v.trim().parse::<f64>().ok().filter(|x| x.is_finite())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Num, A::Error> {
                drain_map(map).map(|_| Num(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Num, A::Error> {
                drain_seq(seq).map(|_| Num(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Default)]
struct Args {
    bytes: Option<f64>,
    copy_kind: Option<String>,
    external_id: Option<f64>,
}

impl<'de> de::Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Args, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an args object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args, A::Error> {
                let mut args = Args::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Bytes => args.bytes = map.next_value::<Num>()?.0,
                        Key::CopyKind => args.copy_kind = map.next_value::<Lenient>()?.0,
                        Key::ExternalId => args.external_id = map.next_value::<Num>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(args)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Args, A::Error> {
                drain_seq(seq).map(|_| Args::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Args, E> {
                Ok(Args::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Args, E> {
                Ok(Args::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Args, E> {
                Ok(Args::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Args, E> {
                Ok(Args::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Args, E> {
                Ok(Args::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Args, E> {
                Ok(Args::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Default)]
struct RawEvent {
    ph: Option<String>,
    cat: Option<String>,
    name: Option<String>,
    ts: Option<f64>,
    dur: Option<f64>,
    args: Args,
}

// ---------------------------------------------------------------------------------------------
// Aggregation.

type Span = (i64, i64);

#[derive(Clone, Copy)]
struct Kernel {
    start: i64,
    end: i64,
    name: u32,
}

#[derive(PartialEq)]
enum Cat {
    Kernel,
    Memcpy,
    Memset,
    GpuAnnotation,
    Host,
    Other,
}

fn classify(cat: &str) -> Cat {
    let is = |s: &str| cat.eq_ignore_ascii_case(s);
    if is("kernel") {
        Cat::Kernel
    } else if is("gpu_memcpy") || is("memcpy") {
        Cat::Memcpy
    } else if is("gpu_memset") || is("memset") {
        Cat::Memset
    } else if is("gpu_user_annotation") {
        Cat::GpuAnnotation
    } else if is("cpu_op")
        || is("operator")
        || is("user_annotation")
        || is("python_function")
        || is("cuda_runtime")
        || is("runtime")
        || is("cuda_driver")
    {
        Cat::Host
    } else {
        Cat::Other
    }
}

fn step_number(name: &str) -> Option<u64> {
    name.strip_prefix("ProfilerStep#")?.trim().parse().ok()
}

fn sync_kind(name: &str) -> Option<u8> {
    SYNC_CALLS.iter().position(|s| *s == name).map(|i| i as u8)
}

fn is_dataloader_next(name: &str) -> bool {
    name.contains("DataLoaderIter.__next__")
        || name.starts_with("enumerate(DataLoader)")
        || (name.contains("dataloader.py(") && name.ends_with(": __next__"))
}

/// A host-to-device copy, by Kineto's activity name (`Memcpy HtoD (Pageable -> Device)`) or the
/// copy kind of other exporters.
fn is_h2d(name: &str, kind: Option<&str>) -> bool {
    let text = format!("{name} {}", kind.unwrap_or("")).to_ascii_lowercase();
    text.contains("htod") || text.contains("h2d")
}

fn is_pageable_h2d(name: &str, kind: Option<&str>) -> bool {
    let text = format!("{name} {}", kind.unwrap_or("")).to_ascii_lowercase();
    text.contains("pageable") && (text.contains("htod") || text.contains("h2d"))
}

/// Microseconds to integer nanoseconds; `as` saturates on overflow and maps NaN to 0.
fn to_ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

#[derive(Default)]
struct Acc {
    events_seen: u64,
    /// First timestamp seen; times are kept relative to it so that large absolute `ts`
    /// values (microseconds since epoch) keep their sub-microsecond digits.
    base_us: Option<f64>,
    bounds: Option<Span>,
    kernels: Vec<Kernel>,
    name_ids: HashMap<String, u32>,
    names: Vec<String>,
    memcpy: Vec<Span>,
    memset: Vec<Span>,
    pageable: Vec<(i64, Option<u64>)>,
    /// start, end, which of [`SYNC_CALLS`], `External id`
    syncs: Vec<(i64, i64, u8, Option<i64>)>,
    /// `External id`s of host-to-device copies on the GPU
    h2d_ids: std::collections::HashSet<i64>,
    dataloader: Vec<Span>,
    steps_cpu: BTreeMap<u64, Span>,
    steps_gpu: BTreeMap<u64, Span>,
    gpu_seen: bool,
    host_seen: bool,
}

impl Acc {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let key = if self.names.len() >= MAX_KERNEL_NAMES {
            OTHER_KERNELS
        } else {
            name
        };
        if let Some(&id) = self.name_ids.get(key) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(key.to_string());
        self.name_ids.insert(key.to_string(), id);
        id
    }

    fn add(&mut self, ev: RawEvent) {
        self.events_seen += 1;
        if !matches!(ev.ph.as_deref(), None | Some("X")) {
            return;
        }
        let (Some(ts), Some(dur)) = (ev.ts, ev.dur) else {
            return;
        };
        if dur < 0.0 {
            return;
        }
        let base = *self.base_us.get_or_insert(ts);
        let start = to_ns(ts - base);
        let end = start.saturating_add(to_ns(dur));
        self.bounds = Some(match self.bounds {
            Some((lo, hi)) => (lo.min(start), hi.max(end)),
            None => (start, end),
        });
        let name = ev.name.unwrap_or_default();
        match classify(ev.cat.as_deref().unwrap_or("")) {
            Cat::Kernel => {
                self.gpu_seen = true;
                let id = self.intern(&name);
                self.kernels.push(Kernel {
                    start,
                    end,
                    name: id,
                });
            }
            Cat::Memcpy => {
                self.gpu_seen = true;
                self.memcpy.push((start, end));
                if let Some(id) = ev.args.external_id
                    && is_h2d(&name, ev.args.copy_kind.as_deref())
                {
                    self.h2d_ids.insert(id as i64);
                }
                if is_pageable_h2d(&name, ev.args.copy_kind.as_deref()) {
                    let bytes = ev.args.bytes.filter(|b| *b >= 0.0).map(|b| b as u64);
                    self.pageable.push((start, bytes));
                }
            }
            Cat::Memset => {
                self.gpu_seen = true;
                self.memset.push((start, end));
            }
            Cat::GpuAnnotation => {
                if let Some(n) = step_number(&name) {
                    widen(&mut self.steps_gpu, n, (start, end));
                }
            }
            Cat::Host => {
                self.host_seen = true;
                if let Some(n) = step_number(&name) {
                    widen(&mut self.steps_cpu, n, (start, end));
                } else if let Some(k) = sync_kind(&name) {
                    self.syncs
                        .push((start, end, k, ev.args.external_id.map(|x| x as i64)));
                } else if is_dataloader_next(&name) {
                    self.dataloader.push((start, end));
                }
            }
            Cat::Other => {}
        }
    }

    fn finish(self, error: Option<String>) -> TraceStats {
        // the runtime syncs a blocking host-to-device copy made (see the module doc) are the
        // copy's wait, counted apart from the step's syncs
        type Sync = (i64, i64, u8, Option<i64>);
        let (copy_syncs, syncs): (Vec<&Sync>, Vec<&Sync>) = self.syncs.iter().partition(|s| {
            SYNC_CALLS[s.2 as usize].starts_with("cuda")
                && s.3.is_some_and(|id| self.h2d_ids.contains(&id))
        });
        let steps_map = if self.steps_cpu.is_empty() {
            &self.steps_gpu
        } else {
            &self.steps_cpu
        };
        let steps = steps_map.len() as u64;
        let (window, (ws, we)) = if steps > 0 {
            let lo = steps_map.values().map(|s| s.0).min().unwrap_or(0);
            let hi = steps_map.values().map(|s| s.1).max().unwrap_or(0);
            ("steps", (lo, hi))
        } else {
            ("whole_trace", self.bounds.unwrap_or((0, 0)))
        };
        let win = (we - ws).max(0);
        let in_window = |s: i64| s >= ws && s <= we;
        let clip = |(s, e): Span| -> Option<Span> {
            let (s, e) = (s.max(ws), e.min(we));
            (e > s).then_some((s, e))
        };
        let frac = |ns: i64| (win > 0).then(|| round4(ns as f64 / win as f64));
        let per_step = |n: f64| (steps > 0).then(|| round3(n / steps as f64));

        // Kernels inside the window: busy time, counts, names.
        let kernels: Vec<Kernel> = self
            .kernels
            .iter()
            .copied()
            .filter(|k| in_window(k.start))
            .collect();
        let kernel_spans: Vec<Span> = kernels
            .iter()
            .filter_map(|k| clip((k.start, k.end)))
            .collect();
        let kernel_union = union(kernel_spans.clone());
        let memcpy_in: Vec<Span> = self.memcpy.iter().copied().filter_map(clip).collect();
        let memset_in: Vec<Span> = self.memset.iter().copied().filter_map(clip).collect();
        let gpu_union = union(
            kernel_spans
                .into_iter()
                .chain(memcpy_in.iter().copied())
                .chain(memset_in.iter().copied())
                .collect(),
        );
        let gpu_busy = total(&gpu_union);
        let idle = (win - gpu_busy).max(0);

        let dl_union = union(self.dataloader.iter().copied().filter_map(clip).collect());
        let host_wait = union(
            dl_union
                .iter()
                .copied()
                .chain(syncs.iter().filter_map(|s| clip((s.0, s.1))))
                .collect(),
        );
        let idle_host = (total(&host_wait) - overlap(&host_wait, &gpu_union)).max(0);
        let short_gap_ns = to_ns(SHORT_GAP_US);
        let idle_short: i64 = gpu_union
            .windows(2)
            .map(|w| w[1].0 - w[0].1)
            .filter(|g| *g > 0 && *g < short_gap_ns)
            .sum();

        let mut durations: Vec<u64> = kernels
            .iter()
            .map(|k| (k.end - k.start).max(0) as u64)
            .collect();
        let kernel_time: u64 = durations.iter().sum();
        let median = median_ns(&mut durations).map(|ns| round3(ns / 1000.0));

        let mut by_name: HashMap<u32, (u64, u64)> = HashMap::new();
        for k in &kernels {
            let e = by_name.entry(k.name).or_default();
            e.0 += 1;
            e.1 += (k.end - k.start).max(0) as u64;
        }
        let nccl_time: u64 = by_name
            .iter()
            .filter(|(id, _)| {
                self.names[**id as usize]
                    .to_ascii_lowercase()
                    .contains("nccl")
            })
            .map(|(_, (_, t))| *t)
            .sum();
        let mut top: Vec<(u32, u64, u64)> =
            by_name.into_iter().map(|(id, (c, t))| (id, c, t)).collect();
        top.sort_by(|a, b| {
            b.2.cmp(&a.2)
                .then_with(|| self.names[a.0 as usize].cmp(&self.names[b.0 as usize]))
        });
        let top_kernels = top
            .into_iter()
            .take(5)
            .map(|(id, count, t)| TopKernel {
                name: self.names[id as usize].clone(),
                count,
                total_ms: round3(t as f64 / 1e6),
                share: if kernel_time > 0 {
                    round4(t as f64 / kernel_time as f64)
                } else {
                    0.0
                },
            })
            .collect();

        let (sync_calls, sync_total, sync_per_step, sync_per_step_total) = if self.host_seen {
            let mut counts: BTreeMap<String, u64> =
                SYNC_CALLS.iter().map(|s| (s.to_string(), 0)).collect();
            for s in syncs.iter().filter(|s| in_window(s.0)) {
                *counts
                    .entry(SYNC_CALLS[s.2 as usize].to_string())
                    .or_default() += 1;
            }
            let total_calls: u64 = counts.values().sum();
            let ps = (steps > 0).then(|| {
                counts
                    .iter()
                    .map(|(k, v)| (k.clone(), round3(*v as f64 / steps as f64)))
                    .collect::<BTreeMap<String, f64>>()
            });
            (
                Some(counts),
                Some(total_calls),
                ps,
                per_step(total_calls as f64),
            )
        } else {
            (None, None, None, None)
        };

        let pageable_h2d_copies = self.gpu_seen.then(|| {
            let copies: Vec<_> = self.pageable.iter().filter(|p| in_window(p.0)).collect();
            PageableCopies {
                count: copies.len() as u64,
                bytes: copies.iter().filter_map(|p| p.1).sum(),
                per_step: per_step(copies.len() as f64),
            }
        });

        let gpu = self.gpu_seen;
        let dl_seen = !self.dataloader.is_empty();
        TraceStats {
            events_seen: self.events_seen,
            truncated: error.is_some(),
            parse_error: error,
            window,
            steps,
            duration_ms: round3(win as f64 / 1e6),
            gpu_kernel_busy_fraction: if gpu {
                frac(total(&kernel_union))
            } else {
                None
            },
            gpu_busy_fraction: if gpu { frac(gpu_busy) } else { None },
            gpu_idle_ms: gpu.then(|| round3(idle as f64 / 1e6)),
            idle_waiting_on_host_ms: (gpu && self.host_seen)
                .then(|| round3(idle_host as f64 / 1e6)),
            idle_other_ms: (gpu && self.host_seen)
                .then(|| round3((idle - idle_host).max(0) as f64 / 1e6)),
            idle_short_gaps_ms: gpu.then(|| round3(idle_short as f64 / 1e6)),
            gpu_memcpy_count: memcpy_in.len() as u64,
            gpu_memcpy_ms: round3(total(&union(memcpy_in)) as f64 / 1e6),
            gpu_memset_count: memset_in.len() as u64,
            gpu_memset_ms: round3(total(&union(memset_in)) as f64 / 1e6),
            dataloader_ms: dl_seen.then(|| round3(total(&dl_union) as f64 / 1e6)),
            dataloader_share: if dl_seen {
                frac(total(&dl_union))
            } else {
                None
            },
            sync_calls,
            sync_calls_total: sync_total,
            sync_calls_per_step: sync_per_step,
            sync_calls_per_step_total: sync_per_step_total,
            h2d_copy_syncs: self
                .host_seen
                .then(|| copy_syncs.iter().filter(|s| in_window(s.0)).count() as u64),
            pageable_h2d_copies,
            kernel_count: kernels.len() as u64,
            kernels_per_step: per_step(kernels.len() as f64),
            median_kernel_us: median,
            nccl_kernel_share: (kernel_time > 0)
                .then(|| round4(nccl_time as f64 / kernel_time as f64)),
            top_kernels,
        }
    }
}

fn widen(map: &mut BTreeMap<u64, Span>, n: u64, span: Span) {
    map.entry(n)
        .and_modify(|s| *s = (s.0.min(span.0), s.1.max(span.1)))
        .or_insert(span);
}

/// Sorted, merged union of intervals.
fn union(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len().min(1 << 16));
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out.shrink_to_fit();
    out
}

fn total(spans: &[Span]) -> i64 {
    spans.iter().map(|(s, e)| e - s).sum()
}

/// Length of the intersection of two merged interval lists.
fn overlap(a: &[Span], b: &[Span]) -> i64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            sum += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

fn median_ns(v: &mut [u64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m] as f64
    } else {
        (v[m - 1] as f64 + v[m] as f64) / 2.0
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn round4(x: f64) -> f64 {
    (x * 10000.0).round() / 10000.0
}

/// The synthetic Kineto-shaped trace writer, for tests only (it is not shipped): the file lives
/// with the test support code and the bench and integration tests include it the same way.
/// The registry entry.
pub struct ChromeTrace;

impl super::EvidenceKind for ChromeTrace {
    fn whole(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "chrome-trace"
    }
    fn doc(&self) -> &'static str {
        "a PyTorch profiler (Kineto) Chrome trace: GPU busy and idle time in the profiled steps, and why it was idle"
    }
    fn example(&self) -> &'static str {
        "torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler('./log'))"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("events_seen", "events visited"),
            ("truncated", "the JSON ended early or broke"),
            ("parse_error", "where it broke"),
            ("window", "steps or whole_trace"),
            ("steps", "profiled steps"),
            ("duration_ms", "length of the window"),
            ("gpu_kernel_busy_fraction", "kernel time over the window"),
            (
                "gpu_busy_fraction",
                "kernel, memcpy and memset time over the window",
            ),
            ("gpu_idle_ms", "window time with nothing on the GPU"),
            (
                "idle_waiting_on_host_ms",
                "GPU idle while the CPU waited in the DataLoader or a sync",
            ),
            ("idle_other_ms", "other GPU idle time"),
            (
                "idle_short_gaps_ms",
                "GPU idle in gaps under 100 us between GPU activities (launch overhead)",
            ),
            ("gpu_memcpy_count", "memcpy count"),
            ("gpu_memcpy_ms", "memcpy time"),
            ("gpu_memset_count", "memset count"),
            ("gpu_memset_ms", "memset time"),
            ("dataloader_ms", "time inside DataLoader __next__"),
            ("dataloader_share", "dataloader_ms over the window"),
            ("sync_calls", "host syncs per name"),
            ("sync_calls_total", "all host syncs"),
            ("sync_calls_per_step", "host syncs per step per name"),
            ("sync_calls_per_step_total", "all host syncs per step"),
            (
                "h2d_copy_syncs",
                "syncs that were a blocking host-to-device copy's wait (not in sync_calls)",
            ),
            (
                "pageable_h2d_copies",
                "host-to-device copies from pageable memory",
            ),
            ("kernel_count", "kernel launches"),
            ("kernels_per_step", "kernel launches per step"),
            ("median_kernel_us", "median kernel duration"),
            ("nccl_kernel_share", "NCCL kernels' share of kernel time"),
            ("top_kernels", "kernels with the most time"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["trace"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        let (h, t) = (s.head, s.trimmed());
        (t.starts_with('{') || t.starts_with('['))
            && (h.contains("\"traceEvents\"") || (h.contains("\"ph\"") && h.contains("\"ts\"")))
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&analyze_trace(text.as_bytes())?)
    }
}

#[cfg(test)]
#[path = "../../tests/support/trace_synth.rs"]
mod synth;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, fixture_dir};
    use proptest::prelude::*;
    use std::io::Write;

    fn make_trace(spec: &synth::Spec) -> Vec<u8> {
        let mut v = Vec::new();
        synth::write(&mut v, spec).unwrap();
        v
    }

    fn stats(bytes: &[u8]) -> TraceStats {
        analyze_trace(bytes).unwrap()
    }

    /// The committed fixtures are the generator's output; `GPUFIX_REGEN=1` rewrites them.
    #[test]
    fn fixtures_match_generator() {
        let dir = fixture_dir().join("trace");
        let full = make_trace(&synth::starved());
        let cases = [
            ("starved.pt.trace.json", full.clone()),
            ("well_fed.pt.trace.json", make_trace(&synth::well_fed())),
            (
                "truncated.pt.trace.json",
                full[..full.len() * 3 / 5].to_vec(),
            ),
        ];
        for (name, bytes) in cases {
            let path = dir.join(name);
            if std::env::var_os("GPUFIX_REGEN").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &bytes).unwrap();
            }
            let on_disk = std::fs::read(&path).unwrap();
            assert!(
                on_disk == bytes,
                "fixture `{}` is stale: run `GPUFIX_REGEN=1 cargo test --lib evidence::trace` to regenerate",
                path.display()
            );
        }
    }

    #[test]
    fn starved_job_shows_low_busy_fraction_and_host_wait() {
        let s = analyze_trace_file(&fixture_dir().join("trace/starved.pt.trace.json")).unwrap();
        assert_eq!(s.window, "steps");
        assert_eq!(s.steps, 5);
        let busy = s.gpu_kernel_busy_fraction.unwrap();
        assert!(busy < 0.3, "busy {busy}");
        assert!(s.dataloader_share.unwrap() > 0.6);
        assert!(s.idle_waiting_on_host_ms.unwrap() > s.idle_other_ms.unwrap());
        assert_eq!(s.pageable_h2d_copies.as_ref().unwrap().count, 10);
        assert_eq!(
            s.pageable_h2d_copies.as_ref().unwrap().bytes,
            10 * (4 << 20)
        );
        assert_eq!(s.sync_calls_per_step_total, Some(3.0));
        assert_eq!(s.kernels_per_step, Some(40.0));
        assert_eq!(s.median_kernel_us, Some(200.0));
        assert!(!s.truncated);
        insta::assert_json_snapshot!("trace_starved", s);
    }

    #[test]
    fn well_fed_job_keeps_gpu_busy() {
        let s = analyze_trace_file(&fixture_dir().join("trace/well_fed.pt.trace.json")).unwrap();
        assert!(s.gpu_kernel_busy_fraction.unwrap() > 0.9);
        assert_eq!(s.pageable_h2d_copies.as_ref().unwrap().count, 0);
        assert_eq!(s.sync_calls_total, Some(0));
        let nccl = s.nccl_kernel_share.unwrap();
        assert!(nccl > 0.0 && nccl < 0.1, "nccl share {nccl}");
        assert_eq!(s.top_kernels.len(), 5);
        insta::assert_json_snapshot!("trace_well_fed", s);
    }

    #[test]
    fn truncated_trace_reports_what_it_saw() {
        let s = analyze_trace_file(&fixture_dir().join("trace/truncated.pt.trace.json")).unwrap();
        assert!(s.truncated);
        assert!(s.parse_error.is_some());
        assert!(s.steps >= 2 && s.steps < 5, "steps {}", s.steps);
        assert!(s.gpu_kernel_busy_fraction.unwrap() < 0.3);
    }

    #[test]
    fn gzip_is_detected_by_magic_bytes() {
        let plain = fixture("trace/well_fed.pt.trace.json");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(plain.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(stats(&gz), stats(plain.as_bytes()));
        // A truncated gzip stream still yields the events before the cut.
        let cut = analyze_trace(&gz[..gz.len() / 2]).unwrap();
        assert!(cut.truncated && cut.events_seen > 0);
    }

    #[test]
    fn busy_fraction_is_the_union_of_overlapping_kernels() {
        let json = r#"{"traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 0, "dur": 100},
            {"ph": "X", "cat": "kernel", "name": "a", "ts": 10, "dur": 30},
            {"ph": "X", "cat": "kernel", "name": "b", "ts": 20, "dur": 30},
            {"ph": "X", "cat": "kernel", "name": "c", "ts": 90, "dur": 40},
            {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 60, "dur": 10}
        ]}"#;
        let s = stats(json.as_bytes());
        // [10,50) ∪ [90,100) clipped to the step = 50 of 100.
        assert_eq!(s.gpu_kernel_busy_fraction, Some(0.5));
        assert_eq!(s.gpu_busy_fraction, Some(0.6));
        assert_eq!(s.gpu_idle_ms, Some(0.04));
        assert_eq!(s.gpu_memset_count, 1);
        assert_eq!(s.kernel_count, 3);
        assert_eq!(s.median_kernel_us, Some(30.0));
    }

    #[test]
    fn host_wait_counts_only_gpu_idle_time_under_host_spans() {
        let json = r#"[
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
            {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ts": 0, "dur": 40},
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 30, "dur": 50},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": 85, "dur": 5}
        ]"#;
        let s = stats(json.as_bytes());
        // idle: [0,30) and [80,100) = 50; host spans idle: [0,30) and [85,90) = 35.
        assert_eq!(s.gpu_idle_ms, Some(0.05));
        assert_eq!(s.idle_waiting_on_host_ms, Some(0.035));
        assert_eq!(s.idle_other_ms, Some(0.015));
        assert_eq!(s.dataloader_share, Some(0.4));
        assert_eq!(s.sync_calls.unwrap()["cudaDeviceSynchronize"], 1);
    }

    #[test]
    fn a_blocking_h2d_copy_wait_is_not_a_host_sync_but_an_item_read_is() {
        // the events of one step as Kineto wrote them in the PyTorch profiler's ResNet-50 sample
        // (github.com/pytorch/kineto tb_plugin/samples/resnet50_num_workers_4, 2021 spelling
        // `external id`): aten::copy_ (op 20585) issued a pageable HtoD memcpy and waited on it;
        // then a `.item()` (written for this test in PyTorch 2's spelling, `External id`) reads a
        // loss back device-to-host and waits
        let json = r#"{"traceEvents": [
            {"ph": "X", "cat": "Operator", "name": "ProfilerStep#16", "ts": 0, "dur": 1000},
            {"ph": "X", "cat": "Operator", "name": "aten::copy_", "ts": 10, "dur": 300, "args": {"external id": 20585}},
            {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "ts": 12, "dur": 200, "args": {"cbid": 41, "correlation": 160906, "external id": 20585}},
            {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": 100, "dur": 150, "args": {"correlation": 160906, "external id": 20585, "bytes": 19267584}},
            {"ph": "X", "cat": "Runtime", "name": "cudaStreamSynchronize", "ts": 240, "dur": 62, "args": {"cbid": 131, "correlation": 160907, "external id": 20585}},
            {"ph": "X", "cat": "Kernel", "name": "k", "ts": 400, "dur": 300, "args": {"correlation": 160910, "external id": 20600}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::item", "ts": 800, "dur": 60, "args": {"External id": 30}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::_local_scalar_dense", "ts": 801, "dur": 58, "args": {"External id": 31}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "ts": 802, "dur": 10, "args": {"External id": 31, "correlation": 7}},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "ts": 805, "dur": 2, "args": {"External id": 31, "correlation": 7, "bytes": 4}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "ts": 813, "dur": 40, "args": {"External id": 31, "correlation": 8}}
        ]}"#;
        let s = stats(json.as_bytes());
        assert_eq!(s.h2d_copy_syncs, Some(1));
        let calls = s.sync_calls.unwrap();
        assert_eq!(calls["cudaStreamSynchronize"], 1);
        assert_eq!(calls["aten::item"], 1);
        assert_eq!(s.pageable_h2d_copies.unwrap().count, 1);
        // a sync with no id to match stays a host sync (older exporters)
        let bare = r#"[
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": 10, "dur": 5},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "ts": 12, "dur": 5}
        ]"#;
        let s = stats(bare.as_bytes());
        assert_eq!(s.h2d_copy_syncs, Some(0));
        assert_eq!(s.sync_calls_total, Some(1));
    }

    #[test]
    fn only_short_gaps_between_gpu_activities_count_as_launch_overhead() {
        // written for this test: gaps of 20 us, 50 us and 500 us between four kernels
        let json = r#"[
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000},
            {"ph": "X", "cat": "kernel", "name": "a", "ts": 0, "dur": 10},
            {"ph": "X", "cat": "kernel", "name": "a", "ts": 30, "dur": 10},
            {"ph": "X", "cat": "kernel", "name": "a", "ts": 90, "dur": 10},
            {"ph": "X", "cat": "kernel", "name": "a", "ts": 600, "dur": 10}
        ]"#;
        let s = stats(json.as_bytes());
        assert_eq!(s.idle_short_gaps_ms, Some(0.07));
        // the 500 us gap and the 390 us to the step's end are not
        assert_eq!(s.gpu_idle_ms, Some(0.96));
    }

    #[test]
    fn trace_without_steps_is_analysed_whole_and_cpu_only_trace_has_no_gpu_figures() {
        let json = r#"{"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1000.5, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "aten::item", "ts": 1020.5, "dur": 10}
        ]}"#;
        let s = stats(json.as_bytes());
        assert_eq!(s.window, "whole_trace");
        assert_eq!(s.steps, 0);
        assert_eq!(s.duration_ms, 0.03);
        assert_eq!(s.gpu_kernel_busy_fraction, None);
        assert_eq!(s.pageable_h2d_copies, None);
        assert_eq!(s.sync_calls_total, Some(1));
        assert_eq!(s.sync_calls_per_step, None);
    }

    #[test]
    fn odd_elements_and_types_are_skipped_not_fatal() {
        let json = r#"{"meta": {"x": [1, 2]}, "traceEvents": [
            42, "text", null, [1, {"a": 2}],
            {"ph": "X", "cat": 7, "name": {"n": 1}, "ts": "12.5", "dur": [1]},
            {"ph": "X", "cat": "kernel", "name": "k", "ts": "10", "dur": "5", "args": [1, 2]},
            {"ph": "M", "name": "process_name", "args": {"name": "python"}},
            {"ph": "X", "cat": "kernel", "name": "neg", "ts": 1, "dur": -3}
        ]}"#;
        let s = stats(json.as_bytes());
        assert_eq!(s.events_seen, 8);
        assert_eq!(s.kernel_count, 1);
        assert!(!s.truncated);
    }

    #[test]
    fn non_traces_are_errors() {
        let inputs: [&[u8]; 6] = [
            b"",
            b"hello",
            b"{}",
            b"[]",
            br#"{"traceEvents": 3}"#,
            b"\x1f\x8bjunk",
        ];
        for bytes in inputs {
            assert!(
                matches!(analyze_trace(bytes), Err(TraceError::NotATrace(_))),
                "{bytes:?}"
            );
        }
        let missing = analyze_trace_file(Path::new("/nonexistent/trace.json"));
        assert!(matches!(missing, Err(TraceError::Open { .. })));
    }

    #[test]
    fn large_epoch_timestamps_keep_sub_microsecond_precision() {
        let json = r#"[
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "ts": 1759300000123456.25, "dur": 2.0},
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 1759300000123456.75, "dur": 0.5}
        ]"#;
        let s = stats(json.as_bytes());
        assert_eq!(s.gpu_kernel_busy_fraction, Some(0.25));
    }

    #[test]
    fn truncation_at_every_4093_bytes_never_panics_and_stays_bounded() {
        let full = fixture("trace/starved.pt.trace.json");
        let mut last_events = 0;
        for cut in (0..full.len()).step_by(4093) {
            match analyze_trace(&full.as_bytes()[..cut]) {
                Ok(s) => {
                    assert!(s.truncated);
                    // Longer prefixes never see fewer events.
                    assert!(s.events_seen >= last_events);
                    last_events = s.events_seen;
                }
                Err(TraceError::NotATrace(_)) => assert_eq!(last_events, 0),
                Err(e) => panic!("{e}"),
            }
        }
    }

    fn cases() -> u32 {
        256
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(cases())
        })]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = analyze_trace(bytes.as_slice());
        }

        #[test]
        fn any_truncation_parses_a_prefix(frac in 0.0f64..1.0) {
            let full = fixture("trace/starved.pt.trace.json");
            let cut = ((full.len() as f64 * frac) as usize).min(full.len());
            if let Ok(s) = analyze_trace(&full.as_bytes()[..cut]) {
                prop_assert!(s.events_seen > 0);
                prop_assert!(s.top_kernels.len() <= 5);
                if let Some(b) = s.gpu_kernel_busy_fraction {
                    prop_assert!((0.0..=1.0).contains(&b));
                }
            }
        }

        #[test]
        fn garbled_events_never_panic(
            ts in proptest::num::f64::ANY, dur in proptest::num::f64::ANY,
            name in ".{0,40}", cat in prop::sample::select(vec!["kernel", "gpu_memcpy", "cpu_op", "user_annotation", "x"]),
        ) {
            let ev = serde_json::json!({"traceEvents": [
                {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur},
                {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 10}
            ]});
            let s = analyze_trace(ev.to_string().as_bytes()).unwrap();
            if let Some(b) = s.gpu_kernel_busy_fraction {
                prop_assert!((0.0..=1.0).contains(&b));
            }
        }

        #[test]
        fn very_long_names_are_clipped(n in 1usize..200_000) {
            let name = "k".repeat(n);
            let json = format!(r#"[{{"ph": "X", "cat": "kernel", "name": "{name}", "ts": 0, "dur": 1}}]"#);
            let s = analyze_trace(json.as_bytes()).unwrap();
            prop_assert!(s.top_kernels[0].name.len() <= crate::evidence::MAX_TEXT + 3);
        }
    }
}
