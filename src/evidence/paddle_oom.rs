//! PaddlePaddle's GPU out-of-memory error, read from its producer: the CUDA allocator's
//! `PADDLE_THROW_BAD_ALLOC(ResourceExhausted(…))` in `CUDAAllocator::AllocateImpl`
//! (PaddlePaddle/Paddle `paddle/fluid/memory/allocation/cuda_allocator.cc`, read at 8b4344e8;
//! the same text in `cuda_virtual_mem_allocator.cc`, in `naive_best_fit_allocator.cc`'s
//! buddy-allocator path and, from Paddle 3, under `paddle/phi/core/memory/allocation/`):
//!
//! ```text
//! Out of memory error on GPU %d. Cannot allocate %s memory on GPU %d, %s memory has been
//! allocated and available memory is only %s.
//!
//! Please check whether there is any other process using GPU %d.
//! 1. If yes, please stop them, or start PaddlePaddle on another GPU.
//! 2. If no, please decrease the batch size of your model. …
//! ```
//!
//! Paddle 1.8–2.0 (`cudaMalloc` then `cudaMemGetInfo`) print the headline without the
//! `%s memory has been allocated and` clause. The sizes are `string::HumanReadableSize`
//! (`paddle/fluid/string/printf.h`): `%f` and a unit of `B`, `kB`, `MB`, `GB`, `TB`, `PB`
//! in steps of 1024 (`129.394531MB`, `0.000000B`). The allocated figure is `total - avail` of
//! `cudaMemGetInfo` (or of `FLAGS_gpu_memory_limit_mb`): the card's memory in use by every
//! process, not Paddle's alone. The suggestions after the headline name the allocator's flags
//! where they apply (`FLAGS_fraction_of_gpu_memory_to_use is %.2lf now`, `Currently
//! `FLAGS_gpu_memory_limit_mb` is %d`, CUDA managed memory).
//!
//! No rule reads this kind: the message says the program did not fit in what the card had
//! free, which no fix of gpufix's changes; Paddle's allocator prints no split between memory
//! it holds idle and memory in use (what `memory.allocator-fragmentation` reads in PyTorch's).
//! The reader makes the text readable and says what it holds.

use regex::Regex;
use std::sync::LazyLock;

use super::scan::has;

/// The headline, on one line once the message's line breaks are joined (a paste re-wraps it:
/// PaddlePaddle/Paddle#26892 breaks it after `is only` and indents the rest).
static HEADLINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Out of memory error on GPU (\d+)\. Cannot allocate ([0-9.]+)([kKMGTP]?B) memory on GPU \d+, (?:([0-9.]+)([kKMGTP]?B) memory has been allocated and )?available memory is only ([0-9.]+)([kKMGTP]?B)").unwrap()
});
static FRACTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"FLAGS_fraction_of_gpu_memory_to_use is ([0-9.]+) now").unwrap());
static LIMIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Currently `FLAGS_gpu_memory_limit_mb` is (\d+)").unwrap());

/// Lines of the message joined after its headline: the headline and the sizes a re-wrapped
/// paste puts on the next lines.
const JOINED: usize = 3;

/// The headline's first half, which every Paddle version prints on one line.
fn is_marker(l: &str) -> bool {
    has!(l, "Out of memory error on GPU ") && has!(l, ". Cannot allocate ")
}

/// `HumanReadableSize`'s text back to bytes (its units step by 1024).
fn bytes(num: &str, unit: &str) -> Option<u64> {
    let n: f64 = num.parse().ok()?;
    let pow = match unit {
        "B" => 0,
        "kB" | "KB" => 1,
        "MB" => 2,
        "GB" => 3,
        "TB" => 4,
        "PB" => 5,
        _ => return None,
    };
    Some((n * 1024f64.powi(pow)).round() as u64)
}

/// The error read as JSON; `None` when the text holds no headline of it.
pub fn read(text: &str) -> Option<serde_json::Value> {
    let lines: Vec<&str> = text.lines().collect();
    let joined = |at: usize| {
        lines[at..lines.len().min(at + JOINED)]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // the first headline whose sizes are all there (a stored copy may cut one short)
    let (at, j) = (0..lines.len())
        .filter(|&i| is_marker(lines[i]))
        .map(|i| (i, joined(i)))
        .find(|(_, j)| HEADLINE.is_match(j))?;
    let c = HEADLINE.captures(&j)?;
    let mut out = serde_json::Map::new();
    out.insert("oom".into(), true.into());
    out.insert("gpu".into(), c[1].parse::<u64>().ok().into());
    out.insert("request".into(), format!("{}{}", &c[2], &c[3]).into());
    out.insert("request_bytes".into(), bytes(&c[2], &c[3]).into());
    if let (Some(n), Some(u)) = (c.get(4), c.get(5)) {
        out.insert(
            "in_use".into(),
            format!("{}{}", n.as_str(), u.as_str()).into(),
        );
        out.insert("in_use_bytes".into(), bytes(n.as_str(), u.as_str()).into());
    }
    out.insert("available".into(), format!("{}{}", &c[6], &c[7]).into());
    out.insert("available_bytes".into(), bytes(&c[6], &c[7]).into());
    let count = lines.iter().filter(|l| is_marker(l)).count();
    out.insert("errors".into(), count.into());
    for l in &lines[at..] {
        if let Some(f) = FRACTION.captures(l) {
            out.entry("fraction_of_gpu_memory_to_use")
                .or_insert_with(|| f[1].parse::<f64>().ok().into());
        }
        if let Some(m) = LIMIT.captures(l) {
            out.entry("gpu_memory_limit_mb")
                .or_insert_with(|| m[1].parse::<u64>().ok().into());
        }
    }
    Some(out.into())
}

/// What the plan says of a part read as this kind ([`read`]'s value): the sizes as Paddle
/// printed them, and why no rule judges it.
pub fn sentence(v: &serde_json::Value) -> Option<String> {
    let s = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
    let in_use = s("in_use")
        .map(|u| format!(", {u} of the card in use (by every process)"))
        .unwrap_or_default();
    Some(format!(
        "this is PaddlePaddle's GPU out-of-memory error: {} asked on GPU {}{in_use}, {} free; \
         the program did not fit in what the card had free (a smaller batch, another GPU or \
         stopping another process on it), which no rule of gpufix judges",
        s("request")?,
        v.get("gpu")?.as_u64()?,
        s("available")?,
    ))
}

pub struct PaddleOomKind;

impl super::EvidenceKind for PaddleOomKind {
    fn marker(&self, line: &str) -> bool {
        is_marker(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &["Out of memory error on GPU "]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "paddle-oom"
    }
    fn doc(&self) -> &'static str {
        "PaddlePaddle's GPU out-of-memory error (`Out of memory error on GPU N. Cannot allocate … available memory is only …`)"
    }
    fn example(&self) -> &'static str {
        "python tools/train.py -c config.yml 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "oom",
                "the text holds the allocator's out-of-memory headline",
            ),
            ("gpu", "the GPU it names"),
            ("request", "the size it could not allocate, as printed"),
            ("request_bytes", "its bytes"),
            (
                "in_use",
                "`%s memory has been allocated`: the card's memory in use by every process (Paddle 2.1+)",
            ),
            ("in_use_bytes", "its bytes"),
            ("available", "`available memory is only %s`"),
            ("available_bytes", "its bytes"),
            ("errors", "how many headlines the text holds"),
            (
                "fraction_of_gpu_memory_to_use",
                "the flag's value where the message names it",
            ),
            (
                "gpu_memory_limit_mb",
                "`FLAGS_gpu_memory_limit_mb` where the message names it",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        // (`scan::marker_lines` of the text, from the search made once for the late kinds)
        s.late
            .lines(super::scan::Set::PaddleOom)
            .any(|l| self.marker(l))
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        read(text).ok_or(super::ParseError::NotThisKind(
            "no PaddlePaddle out-of-memory headline found",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paddle_2_4_with_the_in_use_clause() {
        // github.com/PaddlePaddle/PaddleOCR/issues/11989 (a 24 GB card, the model too big)
        let t = "- 完整报错/Complete Error Message：Error Message Summary:\n----------------------\nResourceExhaustedError:\n\nOut of memory error on GPU 0. Cannot allocate 129.394531MB memory on GPU 0, 23.611938GB memory has been allocated and available memory is only 31.687500MB.\n\nPlease check whether there is any other process using GPU 0.\n1. If yes, please stop them, or start PaddlePaddle on another GPU.\n2. If no, please decrease the batch size of your model.\n";
        let v = read(t).unwrap();
        assert_eq!(v["oom"], true);
        assert_eq!(v["gpu"], 0);
        assert_eq!(v["request"], "129.394531MB");
        assert_eq!(v["request_bytes"], 135_680_000u64);
        assert_eq!(v["in_use"], "23.611938GB");
        assert_eq!(v["available"], "31.687500MB");
        assert_eq!(v["available_bytes"], 33_226_752u64);
        assert_eq!(v["errors"], 1);
    }

    #[test]
    fn the_older_headline_rewrapped_in_a_paste() {
        // github.com/PaddlePaddle/Paddle/issues/26892: no in-use clause, broken after 'only'
        let t = "报错信息：Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only \n                   416.625000MB.\n\n                   Please check whether there is any other process using GPU 0.\n";
        let v = read(t).unwrap();
        assert_eq!(v["request"], "1.531250GB");
        assert_eq!(v["available"], "416.625000MB");
        assert!(v.get("in_use").is_none());
        // github.com/PaddlePaddle/PaddleOCR/issues/865: the fraction flag in the suggestions
        let t = "Out of memory error on GPU 0. Cannot allocate 121.078369MB memory on GPU 0, available memory is only 55.625000MB.\n\nPlease check whether there is any other process using GPU 0.\n1. If yes, please stop them, or start PaddlePaddle on another GPU.\n2. If no, please try one of the following suggestions:\n   1) Decrease the batch size of your model.\n   2) FLAGS_fraction_of_gpu_memory_to_use is 0.50 now, please set it to a higher value but less than 1.0.\n";
        let v = read(t).unwrap();
        assert_eq!(v["fraction_of_gpu_memory_to_use"], 0.5);
        assert_eq!(v["available_bytes"], 58_327_040u64);
    }

    #[test]
    fn the_plan_says_what_it_is() {
        let t = "Out of memory error on GPU 0. Cannot allocate 129.394531MB memory on GPU 0, 23.611938GB memory has been allocated and available memory is only 31.687500MB.\n";
        let said = sentence(&read(t).unwrap()).unwrap();
        assert!(said.starts_with("this is PaddlePaddle's GPU out-of-memory error: 129.394531MB asked on GPU 0, 23.611938GB of the card in use (by every process), 31.687500MB free;"), "{said}");
        let t = "Out of memory error on GPU 2. Cannot allocate 1.531250GB memory on GPU 2, available memory is only 416.625000MB.\n";
        let said = sentence(&read(t).unwrap()).unwrap();
        assert!(
            said.contains("1.531250GB asked on GPU 2, 416.625000MB free;"),
            "{said}"
        );
    }

    #[test]
    fn not_paddles_message() {
        // PyTorch's and prose about an OOM are not this kind
        assert!(read("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)\n").is_none());
        assert!(read("I get an out of memory error on GPU 0 with paddle\n").is_none());
        // the headline's words without the allocator's sizes
        assert!(read("Out of memory error on GPU 0, what should I do?\n").is_none());
        assert!(!is_marker(
            "Out of memory error on GPU 0, what should I do?"
        ));
        // a headline the store cut short, then a whole one
        let t = "Out of memory error on GPU 1. Cannot allocate 2.0\nOut of memory error on GPU 1. Cannot allocate 2.000000GB memory on GPU 1, 9.000000GB memory has been allocated and available memory is only 1.000000GB.\n";
        let v = read(t).unwrap();
        assert_eq!(v["gpu"], 1);
        assert_eq!(v["in_use_bytes"], 9u64 << 30);
        assert_eq!(v["errors"], 2);
    }
}
