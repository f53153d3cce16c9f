//! gdb's backtraces of a hung process's threads (`thread apply all bt`, `bt`, `pstack`), read
//! from gdb's own printing code, bminor/binutils-gdb (gdb 8–15):
//!
//! - `gdb/thread.c` (`thr_try_catch_cmd`): each thread of `thread apply all` is headed
//!   `\nThread %s (%s):\n`, gdb's thread number and `thread_target_id_str`: the target's id
//!   (`Thread 0x7f012db1f740 (LWP 20271)` on Linux) and, when the thread has a name, the name in
//!   quotes (`… (LWP 3913167) "cuda00006000019"`). gdb numbers a process's threads in the order
//!   it sees them, from 1: thread 1 is the process's initial thread, whose LWP is the pid.
//! - `gdb/stack.c` (`print_frame`): `#` and the frame's level left-aligned in two columns and a
//!   space (`#0  `, `#12 `); the pc and ` in ` when the pc is not at the start of a source line
//!   or there is no symbol table; the function (`??` when unknown; a C++ function as its
//!   demangled name, parameter types included); ` (` the arguments `)`; then ` at FILE:LINE`
//!   with debug information, or ` from LIBRARY` without. A long frame wraps at `wrap_here
//!   ("   ")`: its ` from …` on the next line, three spaces in.
//!
//! ```text
//! Thread 1 (Thread 0x7f012db1f740 (LWP 20271)):
//! #0  0x00007f012d92bc10 in __tls_get_addr_slow (ti=0x7f01040f0858) at ../sysdeps/x86_64/dl-tls.c:43
//! #2  0x00007f00ad957285 in ncclGroupEnd () at group.cc:176
//! #3  0x00007f01294221f5 in c10d::ProcessGroupNCCL::getNCCLComm(std::string const&, …) ()
//!    from /home/dario/.local/lib/python3.6/site-packages/torch/lib/libtorch_python.so
//! ```
//!
//! The frames are native: a Python process's are the interpreter's (`_PyEval_EvalFrameDefault`)
//! and its extensions'. What a thread is doing is read as in a `py-spy dump --native`
//! ([`super::pyspy_dump::activity`]: an NCCL call such as `ncclGroupEnd`, a `cudaStreamSynchronize`),
//! so the dump is given in py-spy's shape ([`PyspyDump`]) to the probe that reads both.

use super::pyspy_dump::{Frame, Process, PyspyDump, Thread};

/// `Thread 1 (Thread 0x7f… (LWP 20271) "name"):` → (gdb's number, LWP, name).
fn header(l: &str) -> Option<(String, Option<u32>, Option<String>)> {
    let rest = l.trim().strip_prefix("Thread ")?;
    let (num, rest) = rest.split_once(" (")?;
    // `1`, or `2.1` (inferior 2's thread 1) when gdb debugs several inferiors
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let target = rest.strip_suffix("):")?;
    let lwp = target
        .split_once("(LWP ")
        .and_then(|(_, r)| r.split_once(')'))
        .and_then(|(n, _)| n.trim().parse().ok());
    let name = target
        .strip_suffix('"')
        .and_then(|t| t.rsplit_once(" \""))
        .map(|(_, n)| n.to_string());
    Some((num.to_string(), lwp, name))
}

/// `#3  0x… in func (args) at file:line` / `… from lib` / `#0  func (args) at file:line`.
fn frame(l: &str) -> Option<Frame> {
    let t = l.trim_start().strip_prefix('#')?;
    let (level, rest) = t.split_once(' ')?;
    if level.is_empty() || !level.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = rest.trim_start();
    if rest.starts_with("0x")
        && let Some((_, r)) = rest.split_once(" in ")
    {
        rest = r;
    }
    // the function runs up to ` (` (a demangled C++ name has no space before its parameter
    // list's parenthesis); the arguments are balanced parentheses after it
    let (func, after) = rest.split_once(" (")?;
    let func = func.trim();
    if func.is_empty() || func.contains(char::is_whitespace) && !func.contains("::") {
        return None;
    }
    let mut depth = 1usize;
    let mut end = None;
    for (i, c) in after.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let tail = end.map_or("", |e| &after[e + 1..]).trim();
    let (file, line) = if let Some(loc) = tail.strip_prefix("at ") {
        match loc.rsplit_once(':') {
            Some((f, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
                (f.to_string(), n.parse().ok())
            }
            _ => (loc.to_string(), None),
        }
    } else if let Some(lib) = tail.strip_prefix("from ") {
        (lib.trim().to_string(), None)
    } else {
        (String::new(), None)
    };
    Some(Frame {
        function: super::clip(strip_parameters(func), super::MAX_TEXT),
        file,
        line,
        ..Frame::default()
    })
}

/// A demangled C++ name's parameter list removed (`c10d::ProcessGroupNCCL::getNCCLComm(std::string
/// const&, …)` → `c10d::ProcessGroupNCCL::getNCCLComm`): the `(` that balances the final `)`.
fn strip_parameters(f: &str) -> &str {
    if !f.ends_with(')') {
        return f;
    }
    let mut depth = 0i32;
    for (i, c) in f.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return if i == 0 { f } else { &f[..i] };
                }
            }
            _ => {}
        }
    }
    f
}

/// True when the text holds a gdb backtrace: a `thread apply` header followed by frame `#0`, or
/// frames `#0` and `#1` in a row. (Read line by line with the `#` lines kept: they are the
/// frames, not comments.)
pub fn looks_like_gdb_backtrace(text: &str) -> bool {
    let lines: Vec<&str> = super::scan::lines(text).take(20_000).collect();
    let is_frame = |l: &str, level: &str| {
        l.trim_start()
            .strip_prefix('#')
            .and_then(|r| r.strip_prefix(level))
            .is_some_and(|r| r.starts_with(' '))
            && frame(l).is_some()
    };
    lines.iter().enumerate().any(|(i, l)| {
        header(l).is_some() && lines.get(i + 1).is_some_and(|n| is_frame(n, "0"))
            || is_frame(l, "0") && lines[i + 1..].iter().take(2).any(|n| is_frame(n, "1"))
    })
}

/// The backtraces in py-spy's shape: one process per run of threads numbered from 1 (a second
/// `Thread 1` header is another process's), its pid the LWP of its thread 1; a bare `bt` is one
/// thread of an unknown process.
pub fn parse_gdb_backtrace(text: &str) -> PyspyDump {
    let mut out = PyspyDump::default();
    for raw in super::scan::lines(text) {
        let l = raw.trim_end_matches('\r');
        if let Some((num, lwp, name)) = header(l) {
            let first = num == "1" || num.ends_with(".1");
            if first || out.processes.is_empty() {
                if out.processes.len() >= super::MAX_ITEMS {
                    break;
                }
                out.processes.push(Process {
                    pid: if first { lwp.unwrap_or(0) } else { 0 },
                    ..Process::default()
                });
            }
            let p = out.processes.last_mut().expect("pushed above");
            if p.threads.len() < super::MAX_ITEMS {
                p.threads.push(Thread {
                    id: lwp.map(|n| n.to_string()).unwrap_or(num),
                    status: None,
                    name,
                    frames: Vec::new(),
                });
            }
            continue;
        }
        if let Some(f) = frame(l) {
            if out.processes.last().is_none_or(|p| p.threads.is_empty()) {
                // `bt` of the current thread only: no header
                if out.processes.is_empty() {
                    out.processes.push(Process::default());
                }
                out.processes[0].threads.push(Thread::default());
            }
            let th = out
                .processes
                .last_mut()
                .and_then(|p| p.threads.last_mut())
                .expect("a thread above");
            // a new `#0` under the same thread is another `bt`: another moment of it
            if th.frames.len() < 4 * super::MAX_ITEMS {
                th.frames.push(f);
            }
            continue;
        }
        // the wrapped ` from LIBRARY` of the frame above
        if let Some(lib) = l.trim().strip_prefix("from ")
            && l.starts_with(' ')
            && let Some(f) = out
                .processes
                .last_mut()
                .and_then(|p| p.threads.last_mut())
                .and_then(|t| t.frames.last_mut())
            && f.file.is_empty()
        {
            f.file = lib.trim().to_string();
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct GdbBacktraceKind;

impl super::EvidenceKind for GdbBacktraceKind {
    fn name(&self) -> &'static str {
        "gdb-backtrace"
    }
    fn doc(&self) -> &'static str {
        "gdb's backtrace of a hung process's threads (`thread apply all bt`): each thread's native frames"
    }
    fn example(&self) -> &'static str {
        "gdb -p PID -batch -ex 'thread apply all bt' > bt.txt"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "processes",
            "per `thread apply all`: pid (the LWP of gdb's thread 1), threads (id: the LWP, name, frames: function without its C++ parameter list, file: source file or library, line)",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["pyspy.dump"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_gdb_backtrace(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let d = parse_gdb_backtrace(text);
        if d.processes.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no gdb backtrace (`Thread N (…):` and `#0  …` frames) in the text",
            ));
        }
        super::to_value(&d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::pyspy_dump::{Activity, activity};

    /// github.com/pytorch/pytorch/issues/52916: DistributedDataParallel's constructor hangs
    /// with NCCL; gdb's backtrace of the hung process's main thread
    const DDP_HANG: &str = "Thread 1 (Thread 0x7f012db1f740 (LWP 20271)):\n\
#0  0x00007f012d92bc10 in __tls_get_addr_slow (ti=0x7f01040f0858) at ../sysdeps/x86_64/dl-tls.c:43\n\
#1  0x00007f012d931ba8 in __tls_get_addr () at ../sysdeps/x86_64/tls_get_addr.S:55\n\
#2  0x00007f00ad957285 in ncclGroupEnd () at group.cc:176\n\
#3  0x00007f01294221f5 in c10d::ProcessGroupNCCL::getNCCLComm(std::string const&, std::vector<c10::Device, std::allocator<c10::Device> > const&, c10d::OpType, int, bool) ()\n   from /home/dario/.local/lib/python3.6/site-packages/torch/lib/libtorch_python.so\n";

    /// github.com/NVIDIA/TensorRT-LLM/issues/2560: a named thread of a healthy helper, idle
    /// in poll (libcuda's event thread), no symbols
    const NAMED_IDLE: &str = "Thread 4 (Thread 0x7fd09a759000 (LWP 3913167) \"cuda00006000019\"):\n\
#0  0x00007fd0b01abac1 in poll () from /lib64/libc.so.6\n\
#1  0x00007fd0b2867e4f in ?? () from /lib64/libcuda.so.1\n\
#2  0x00007fd0b293b12f in ?? () from /lib64/libcuda.so.1\n";

    #[test]
    fn thread_headers_give_the_lwp_the_name_and_the_process() {
        assert!(looks_like_gdb_backtrace(DDP_HANG));
        let d = parse_gdb_backtrace(DDP_HANG);
        let p = &d.processes[0];
        // gdb's thread 1 is the initial thread: its LWP is the pid
        assert_eq!(p.pid, 20271);
        assert_eq!(p.threads[0].id, "20271");
        assert!(p.threads[0].is_main(p.pid));
        assert_eq!(p.threads[0].name, None);
        let d = parse_gdb_backtrace(NAMED_IDLE);
        let t = &d.processes[0].threads[0];
        assert_eq!(t.id, "3913167");
        assert_eq!(t.name.as_deref(), Some("cuda00006000019"));
        // not thread 1: the pid is not known
        assert_eq!(d.processes[0].pid, 0);
    }

    #[test]
    fn frames_read_function_source_line_and_library() {
        let d = parse_gdb_backtrace(DDP_HANG);
        let f = &d.processes[0].threads[0].frames;
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].function, "__tls_get_addr_slow");
        assert_eq!(f[0].file, "../sysdeps/x86_64/dl-tls.c");
        assert_eq!(f[0].line, Some(43));
        assert_eq!(f[2].function, "ncclGroupEnd");
        assert_eq!(f[2].line, Some(176));
        // a demangled C++ name without its parameter list; the library from the wrapped line
        assert_eq!(f[3].function, "c10d::ProcessGroupNCCL::getNCCLComm");
        assert_eq!(
            f[3].file,
            "/home/dario/.local/lib/python3.6/site-packages/torch/lib/libtorch_python.so"
        );
        assert_eq!(f[3].line, None);
        // `??`: an unknown function, with its library
        let d = parse_gdb_backtrace(NAMED_IDLE);
        let f = &d.processes[0].threads[0].frames;
        assert_eq!(f[0].function, "poll");
        assert_eq!(f[0].file, "/lib64/libc.so.6");
        assert_eq!(f[1].function, "??");
        // a frame without its pc (at the start of a line): `#0  func (args) at file:line`
        let g = frame("#0  futex_wait_cancelable (private=<optimized out>, expected=0, futex_word=0x7f322e7fb158) at ../sysdeps/nptl/futex-internal.h:183").unwrap();
        assert_eq!(g.function, "futex_wait_cancelable");
        assert_eq!(g.line, Some(183));
    }

    #[test]
    fn a_main_thread_inside_an_nccl_call_is_in_a_collective_and_an_idle_helper_is_not() {
        let d = parse_gdb_backtrace(DDP_HANG);
        assert!(matches!(
            activity(&d.processes[0].threads[0]),
            Activity::Collective { ref op, .. } if op == "ncclGroupEnd"
        ));
        let d = parse_gdb_backtrace(NAMED_IDLE);
        assert_eq!(activity(&d.processes[0].threads[0]), Activity::Other);
    }

    #[test]
    fn a_second_thread_1_is_another_process_and_prose_is_no_backtrace() {
        let two = format!("{DDP_HANG}\n{}", DDP_HANG.replace("20271", "20272"));
        let d = parse_gdb_backtrace(&two);
        assert_eq!(d.processes.len(), 2);
        assert_eq!(d.processes[1].pid, 20272);
        // PyTorch's C++ stack of an exception (`frame #0: …`) is not gdb's
        assert!(!looks_like_gdb_backtrace(
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x69 (0x7f in libc10.so)\nframe #1: c10d::ProcessGroupNCCL::getNCCLComm + 0x10 (0x7f in libtorch_cuda.so)\n"
        ));
        assert!(!looks_like_gdb_backtrace(
            "# 0 issues found\n#1 see the notes (below)\n"
        ));
    }
}
