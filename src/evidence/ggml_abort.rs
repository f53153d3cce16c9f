//! ggml's abort report, as llama.cpp, whisper.cpp and every other ggml program print it when a
//! `GGML_ASSERT` fails or a backend calls `GGML_ABORT`. Written from:
//!
//! - ggml-org/llama.cpp `ggml/src/ggml.c` (read at 00bdaa10, the search tool's stored text id
//!   56666336747): `ggml_abort(file, line, fmt, …)` formats `"%s:%d: "` (the source file and line
//!   of the macro) followed by the message into one buffer and, unless a program set an abort
//!   callback, prints it to stderr on its own line, then `ggml_print_backtrace()`, then calls
//!   `abort()`. `GGML_ASSERT(x)` is `ggml_abort(__FILE__, __LINE__, "GGML_ASSERT(%s) failed", #x)`;
//!   `GGML_ABORT(...)` passes its own message (`"fatal error"`, a backend's `"CUDA error"`). ggml
//!   before mid-2024 printed a failed assertion as `GGML_ASSERT: %s:%d: %s` (file, line, the
//!   condition) from the macro itself; both are read.
//! - The same file's `ggml_print_backtrace`: on Linux it forks `gdb --batch … -ex "bt -frame-info
//!   source-and-location"` (or lldb), whose output is gdb's and which the `gdb-backtrace` kind
//!   reads; where neither debugger runs (a container, Kaggle, Colab) the child falls back to
//!   `ggml_print_backtrace_symbols`, glibc's `backtrace_symbols_fd` on the process's own stack.
//!   glibc `debug/backtracesymsfd.c` (bminor/glibc, read at 04277e02) writes each frame as
//!   `OBJECT(SYMBOL+0xOFFSET)[0xADDRESS]`, `OBJECT(+0xOFFSET)[0xADDRESS]` for an address with no
//!   symbol, or `[0xADDRESS]` alone when no object holds it (`-0x` for an address below the
//!   symbol).
//! - ggml's CUDA backend, `ggml/src/ggml-cuda/ggml-cuda.cu` `ggml_cuda_error` (the stored text id
//!   71099506958): a failed CUDA call prints `CUDA error: <cudaGetErrorString>`, `  current
//!   device: N, in function F at FILE:LINE` and the statement, then `GGML_ABORT("CUDA error")`.
//!   The `CUDA error: …` line is the CUDA runtime's and is read by the `cuda-runtime-log` kind
//!   (`cuda.error-in-log`), wherever it stands in the paste; this kind reads the abort around it.
//!
//! The abort says where ggml stopped and why in its own words: an assertion of the graph or of a
//! backend's dispatcher (`fattn.cu:110: fatal error`, an unsupported attention shape), which is
//! the program's, or a backend's error abort, whose cause is the error printed above it. No rule
//! reads this kind: a CUDA error in it is read as such, and the rest is the program's own
//! failure, named in the report, so the paste is recognised rather than "cannot tell what this
//! is".

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// `ggml_abort`'s first line: `FILE:LINE: MESSAGE` (any prefix before the path, a spinner's
/// `Loading model... |`), or the older `GGML_ASSERT: FILE:LINE: CONDITION`.
static ABORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[\s|>])(?P<old>GGML_ASSERT: )?(?P<file>(?:[A-Za-z]:)?[\w./\\+-]*\.(?:c|cc|cpp|cu|cuh|h|hpp|m|mm)):(?P<line>\d+): (?P<msg>\S.*)$",
    )
    .expect("ggml abort regex")
});

/// glibc's `backtrace_symbols_fd` frame: `OBJECT(SYMBOL+0xOFF)[0xADDR]`, `OBJECT(+0xOFF)[…]`,
/// `OBJECT[0xADDR]`, `[0xADDR]`.
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?P<obj>[^\s(\[][^(\[]*?)?(?:\((?P<sym>[^()+\s]*)(?:[+-]0x[0-9a-fA-F]+)?\))?\[0x[0-9a-fA-F]+\]\s*$",
    )
    .expect("backtrace_symbols regex")
});

/// One frame of the backtrace.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Frame {
    /// The shared object or executable (`/…/libggml-cuda.so.0`), where printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The symbol, as glibc printed it (mangled), where the object exports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct GgmlAbort {
    /// The source file of the abort, as printed (`/…/ggml/src/ggml-cuda/fattn.cu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What ggml said: `fatal error`, `CUDA error`, `GGML_ASSERT(…) failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The condition of a failed `GGML_ASSERT`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertion: Option<String>,
    /// The backend the abort is in, from the file's directory (`ggml-cuda`: `cuda`) or the
    /// objects of the backtrace (`libggml-cuda.so`): cuda, vulkan, metal, sycl, hip, cann, cpu.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The abort is a backend's error abort (`CUDA error`): its cause is the error printed
    /// before it.
    pub backend_error: bool,
    /// The backtrace's frames, innermost first (at most [`super::MAX_ITEMS`]).
    pub frames: Vec<Frame>,
    /// Frames printed.
    pub frame_count: u64,
}

fn backend_of(s: &str) -> Option<&'static str> {
    let s = s.to_ascii_lowercase();
    [
        ("ggml-cuda", "cuda"),
        ("ggml-hip", "hip"),
        ("ggml-vulkan", "vulkan"),
        ("ggml-metal", "metal"),
        ("ggml-sycl", "sycl"),
        ("ggml-cann", "cann"),
        ("ggml-cpu", "cpu"),
    ]
    .into_iter()
    .find(|(k, _)| s.contains(k))
    .map(|(_, v)| v)
}

/// `(file, line, message, old_form)` of an abort line.
fn abort_line(l: &str) -> Option<(String, u32, String, bool)> {
    let c = ABORT.captures(l.trim_end())?;
    let line = c["line"].parse().ok()?;
    Some((
        c["file"].to_string(),
        line,
        c["msg"].trim().to_string(),
        c.name("old").is_some(),
    ))
}

/// A line of glibc's `backtrace_symbols_fd`.
fn frame(l: &str) -> Option<Frame> {
    let c = FRAME.captures(l)?;
    let object = c.name("obj").map(|m| m.as_str().trim().to_string());
    let symbol = c
        .name("sym")
        .map(|m| m.as_str().to_string())
        .filter(|s| !s.is_empty());
    if object.as_deref().is_some_and(|o| o.contains(' ')) {
        return None;
    }
    Some(Frame { object, symbol })
}

/// An abort line that is ggml's: its message is ggml's own (`GGML_ASSERT(…) failed`, the old
/// `GGML_ASSERT:` form) or its file is one of ggml's sources (`ggml/…`, `ggml-cuda/…`).
fn is_ggml_abort(l: &str) -> bool {
    abort_line(l).is_some_and(|(file, _, msg, old)| {
        old || msg.starts_with("GGML_ASSERT(") || file.to_ascii_lowercase().contains("ggml")
    })
}

/// True for a frame of one of ggml's or llama.cpp's libraries.
fn is_ggml_frame(l: &str) -> bool {
    frame(l).is_some_and(|f| {
        f.object.as_deref().is_some_and(|o| {
            let o = o.to_ascii_lowercase();
            o.contains("libggml") || o.contains("libllama") || o.contains("libwhisper")
        })
    })
}

/// True when `text` holds ggml's abort line, or two frames of its libraries in glibc's form.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(is_ggml_abort)
        || text.lines().filter(|l| is_ggml_frame(l)).take(2).count() == 2
}

pub fn parse_ggml_abort(text: &str) -> GgmlAbort {
    let mut out = GgmlAbort::default();
    for l in text.lines() {
        if out.file.is_none()
            && is_ggml_abort(l)
            && let Some((file, line, msg, old)) = abort_line(l)
        {
            if old {
                out.assertion = Some(super::clip(&msg, super::MAX_TEXT));
                out.message = Some(super::clip(
                    &format!("GGML_ASSERT({msg}) failed"),
                    super::MAX_TEXT,
                ));
            } else {
                out.assertion = msg
                    .strip_prefix("GGML_ASSERT(")
                    .and_then(|m| m.strip_suffix(") failed"))
                    .map(|m| super::clip(m, super::MAX_TEXT));
                out.message = Some(super::clip(&msg, super::MAX_TEXT));
            }
            // a backend's error abort: `GGML_ABORT(GGML_CUDA_NAME " error")`, the old
            // `GGML_ASSERT(!"CUDA error")`
            let m = msg.trim_start_matches("GGML_ASSERT(!\"");
            out.backend_error = [
                "CUDA error",
                "ROCm error",
                "MUSA error",
                "CANN error",
                "SYCL error",
            ]
            .iter()
            .any(|e| m.starts_with(e));
            out.backend = backend_of(&file).map(str::to_string);
            out.file = Some(super::clip(&file, super::MAX_TEXT));
            out.line = Some(line);
            continue;
        }
        if let Some(f) = frame(l) {
            out.frame_count += 1;
            if out.backend.is_none() {
                out.backend = f.object.as_deref().and_then(backend_of).map(str::to_string);
            }
            if out.frames.len() < super::MAX_ITEMS {
                out.frames.push(Frame {
                    object: f.object.map(|o| super::clip(&o, super::MAX_TEXT)),
                    symbol: f.symbol.map(|s| super::clip(&s, super::MAX_TEXT)),
                });
            }
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct GgmlAbortKind;

impl super::EvidenceKind for GgmlAbortKind {
    fn name(&self) -> &'static str {
        "ggml-abort"
    }
    fn doc(&self) -> &'static str {
        "ggml's abort report (llama.cpp, whisper.cpp): the file and line of a failed GGML_ASSERT or GGML_ABORT, its message, and the backtrace glibc printed"
    }
    fn example(&self) -> &'static str {
        "llama-server -m model.gguf -fa on 2>&1 | tee server.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the source file of the abort, as printed"),
            ("line", "its line"),
            (
                "message",
                "ggml's message: fatal error, CUDA error, GGML_ASSERT(…) failed",
            ),
            ("assertion", "the condition of a failed GGML_ASSERT"),
            (
                "backend",
                "the backend the abort is in (cuda, hip, vulkan, metal, sycl, cann, cpu), from the file or the backtrace's objects",
            ),
            (
                "backend_error",
                "the abort is a backend's error abort (CUDA error): its cause is the error printed before it",
            ),
            ("frames", "the backtrace's frames: object, symbol"),
            ("frame_count", "frames printed"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_ggml_abort(text);
        if v.file.is_none() && v.frame_count < 2 {
            return Err(super::ParseError::NotThisKind(
                "no ggml abort (FILE:LINE: GGML_ASSERT(…) failed / fatal error) nor glibc backtrace frames of libggml",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ggml-org/llama.cpp#24400 (comment of 2026-06-10, a Kaggle T4): FlashAttention's
    // dispatcher aborts behind llama-cli's spinner, then glibc's frames
    const T4: &str = "Loading model... |/kaggle/working/llama.cpp/ggml/src/ggml-cuda/fattn.cu:110: fatal error\n/kaggle/working/llama.cpp/build/bin/libggml-base.so.0(+0x194e5)[0x7fa00b3064e5]\n/kaggle/working/llama.cpp/build/bin/libggml-base.so.0(ggml_print_backtrace+0x1eb)[0x7fa00b3068bb]\n/kaggle/working/llama.cpp/build/bin/libggml-base.so.0(ggml_abort+0x11f)[0x7fa00b306a3f]\n/kaggle/working/llama.cpp/build/bin/libggml-cuda.so.0(_Z24ggml_cuda_flash_attn_extR25ggml_backend_cuda_contextP11ggml_tensor+0x1ab3)[0x7fa006e26d13]\n";

    #[test]
    fn a_dispatcher_abort_behind_a_spinner_gives_file_line_message_and_frames() {
        assert!(looks_like(T4));
        let v = parse_ggml_abort(T4);
        assert_eq!(
            v.file.as_deref(),
            Some("/kaggle/working/llama.cpp/ggml/src/ggml-cuda/fattn.cu")
        );
        assert_eq!(v.line, Some(110));
        assert_eq!(v.message.as_deref(), Some("fatal error"));
        assert_eq!(v.assertion, None);
        assert_eq!(v.backend.as_deref(), Some("cuda"));
        assert!(!v.backend_error);
        assert_eq!(v.frame_count, 4);
        assert_eq!(v.frames[0].symbol, None);
        assert_eq!(v.frames[2].symbol.as_deref(), Some("ggml_abort"));
        assert_eq!(
            v.frames[0].object.as_deref(),
            Some("/kaggle/working/llama.cpp/build/bin/libggml-base.so.0")
        );
    }

    #[test]
    fn a_failed_assertion_and_a_cuda_error_abort() {
        // ggml.c's GGML_ASSERT through ggml_abort (llama.cpp issues paste it this way)
        let v = parse_ggml_abort(
            "/app/ggml/src/ggml-cuda/ggml-cuda.cu:1254: GGML_ASSERT(ggml_nbytes(src0) <= INT_MAX) failed\n",
        );
        assert_eq!(v.assertion.as_deref(), Some("ggml_nbytes(src0) <= INT_MAX"));
        assert_eq!(v.line, Some(1254));
        // ggml_cuda_error's abort after the runtime's line (read by the cuda-runtime-log kind)
        let t = "CUDA error: an illegal memory access was encountered\n  current device: 0, in function ggml_backend_cuda_synchronize at /src/ggml/src/ggml-cuda/ggml-cuda.cu:2551\n  cudaStreamSynchronize(cuda_ctx->stream())\n/src/ggml/src/ggml-cuda/ggml-cuda.cu:84: CUDA error\n";
        assert!(looks_like(t));
        let v = parse_ggml_abort(t);
        assert!(v.backend_error);
        assert_eq!(v.line, Some(84));
        // the older form printed by the macro itself
        let v = parse_ggml_abort(
            "GGML_ASSERT: /tmp/llama.cpp/ggml.c:4785: view_src == NULL || data_size + view_offs <= ggml_nbytes(view_src)\n",
        );
        assert_eq!(
            v.assertion.as_deref(),
            Some("view_src == NULL || data_size + view_offs <= ggml_nbytes(view_src)")
        );
        assert_eq!(v.backend, None);
        // frames alone, with glibc's `[0xADDR]` of an address no object holds
        let v = parse_ggml_abort(
            "/usr/lib/libggml-base.so(ggml_abort+0x11f)[0x7f00]\n/usr/lib/libllama.so(llama_decode+0xe)[0x7f01]\n[0x55d0]\n",
        );
        assert_eq!((v.file, v.frame_count), (None, 3));
        assert_eq!(v.frames[2].object, None);
    }

    #[test]
    fn other_file_line_messages_and_prose_are_not_ggml_aborts() {
        for t in [
            // a compiler's diagnostic: a source file and line, but not ggml's
            "src/main.cpp:42: error: expected ';' before '}' token\n",
            // glibc frames of other programs only
            "./a.out(main+0x1d)[0x4005ad]\n/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xf0)[0x7f0]\n",
            // prose about an assertion
            "I get a GGML_ASSERT failure in ggml-cuda when I enable flash attention\n",
            // a Python traceback line
            "  File \"/opt/llama.cpp/convert.py\", line 42, in <module>\n",
        ] {
            assert!(!looks_like(t), "{t}");
        }
    }
}
