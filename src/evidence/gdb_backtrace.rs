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
//!   ("   ")`: its ` from …` on the next line, three spaces in; and at `wrap_hint (3)` before
//!   the argument list (gdb 13+, `print_frame`: `uiout->wrap_hint (3)` then `" ("`): a demangled
//!   C++ name as long as the terminal puts its ` (args) from …` on the next line, four spaces
//!   in (NVIDIA/Megatron-LM#1679: `#8  0x… in c10d::ProcessGroupNCCL::initNCCLComm(std::…,
//!   bool)` then `    () from …/libtorch_cuda.so`).
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
//!
//! gdb's `thread N` command heads the backtrace that follows with the thread it selected:
//! `[Switching to thread 12 (Thread 0x7f9d0cc00700 (LWP 30756))]` (`gdb/thread.c`,
//! `print_selected_thread_frame`: `[Switching to thread `, `print_thread_id`, ` (`,
//! `target_pid_to_str`, `)]`), read as a thread header.
//!
//! CPython's gdb extension (`Tools/gdb/libpython.py`, loaded with the interpreter's debug
//! symbols) adds `py-bt`. Python 2.7's prints each Python frame as `Frame.print_summary` does:
//! `#%i %s` — gdb's frame level and the frame object's repr cut at `MAX_OUTPUT_LEN` (1024)
//! characters with `...(truncated)` (`get_truncated_repr`) — then the frame's source line four
//! spaces in; `PyFrameObjectPtr.write_repr` writes that repr as `Frame 0x%x, for file %s, line
//! %i, in %s (` and the locals (CPython 2.7 and 3.x, read in the code corpus's copies of
//! `libpython.py`). Such a line is a Python frame of the thread above it, with its file and
//! line as py-spy gives them (pytorch/pytorch#24927's pin-memory thread in `multiprocessing/
//! queues.py`'s `get`):
//!
//! ```text
//! #3 Frame 0x7fa3b9fec850, for file /av/lib/third_party/python2.7/multiprocessing/queues.py, line 131, in get (self=<Queue(…
//! ```
//!
//! cuda-gdb (NVIDIA/cuda-gdb, gdb with CUDA support) adds the device side of the same process:
//! `info cuda kernels`, the kernels present on the devices with their status and invocation,
//! and `info cuda threads`, the device threads grouped by the source line their pc is at
//! (`gdb/cuda/cuda-commands.c`, read at 16f99a41; see `cuda_kernels_row` and
//! `cuda_threads_row`). A hung collective shows there as NCCL's kernel still resident, its
//! threads spinning in NCCL's primitives for the peers' data (k2-fsa/snowfall#71's
//! `ncclReduceRingLLKernel_sum_f64`, NVIDIA/nccl#558's `prims_ll.h`); each kernel is given as a
//! thread of one more process, its name or source lines as its frame.

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

/// gdb's `thread N` selection line, `[Switching to thread 12 (Thread 0x… (LWP 30756))]` →
/// (gdb's number, LWP), as [`header`] reads a `thread apply` heading.
fn switching_header(l: &str) -> Option<(String, Option<u32>, Option<String>)> {
    let rest = l
        .trim()
        .strip_prefix("[Switching to thread ")?
        .strip_suffix(']')?;
    header(&format!("Thread {rest}:"))
}

/// A frame of libpython's `py-bt` (see the module's notes): `#N Frame 0x…, for file F, line L,
/// in NAME (locals…` → the Python frame (function, file, line).
fn py_bt_frame(l: &str) -> Option<Frame> {
    let t = l.trim_start().strip_prefix('#')?;
    let (level, rest) = t.split_once(' ')?;
    if level.is_empty() || !level.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let rest = rest.strip_prefix("Frame 0x")?;
    let (addr, rest) = rest.split_once(", for file ")?;
    if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let (file, rest) = rest.split_once(", line ")?;
    let (line, rest) = rest.split_once(", in ")?;
    let line: u32 = line.parse().ok()?;
    let name = rest.split(" (").next().unwrap_or("").trim();
    if file.is_empty()
        || name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '<' || c == '>')
    {
        return None;
    }
    Some(Frame {
        function: super::clip(name, super::MAX_TEXT),
        file: super::clip(file, super::MAX_TEXT),
        line: Some(line),
        ..Frame::default()
    })
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
    // a name with spaces is a C++ one: qualified (`ns::f`), or a free function demangled with
    // its parameter list (`ccl_coll_create(ccl_coll_param&, ccl_coll_attr const&)`, no space
    // before its `(`); prose (`#1 see the notes (below)`) is neither
    let free_cxx = func.ends_with(')')
        && func
            .split('(')
            .next()
            .is_some_and(|n| !n.is_empty() && !n.contains(char::is_whitespace));
    if func.is_empty() || func.contains(char::is_whitespace) && !func.contains("::") && !free_cxx {
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

/// gdb's `info threads` table (`gdb/thread.c`, `print_thread_info_1`, gdb 7–15): the column
/// headers `Id`, `Target Id` and `Frame` after the unnamed current-thread column.
fn info_threads_header(l: &str) -> bool {
    let t = l.trim();
    t.starts_with("Id ") && t.contains(" Target Id ") && t.ends_with(" Frame")
}

/// A row of `info threads`: `*` for gdb's current thread (else blank), the thread's number,
/// `thread_target_id_str` (`Thread 0x… (LWP n)`, then the thread's name in quotes when it has
/// one: `""` for an empty one), then the thread's innermost frame as `print_stack_frame` prints
/// a location (`func (args) at file:line`, `0x… in func () from lib`) → (number, LWP, name,
/// frame).
fn info_threads_row(l: &str) -> Option<(String, Option<u32>, Option<String>, Frame)> {
    let t = l.trim_start();
    let t = t.strip_prefix('*').unwrap_or(t).trim_start();
    let (num, rest) = t.split_once(char::is_whitespace)?;
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let rest = rest.trim_start();
    if !rest.starts_with("Thread ") && !rest.starts_with("LWP ") && !rest.starts_with("process ") {
        return None;
    }
    let (lwp, after) = match rest.split_once("(LWP ") {
        Some((_, r)) => {
            let (n, a) = r.split_once(')')?;
            (n.trim().parse().ok(), a)
        }
        None => {
            let (_, a) = rest.split_once(char::is_whitespace)?;
            let (_, a) = a.trim_start().split_once(char::is_whitespace)?;
            (None, a)
        }
    };
    let mut after = after.trim_start();
    let mut name = None;
    if let Some(q) = after.strip_prefix('"') {
        let (n, a) = q.split_once('"')?;
        name = (!n.is_empty()).then(|| n.to_string());
        after = a.trim_start();
    }
    let f = frame(&format!("#0  {after}"))?;
    Some((num.to_string(), lwp, name, f))
}

/// cuda-gdb's `info cuda kernels` table (NVIDIA/cuda-gdb `gdb/cuda/cuda-commands.c`,
/// `info_cuda_kernels_command`, read at 16f99a41): the columns `Kernel`, `Parent`, `Dev`, `Grid`,
/// `Status`, `SMs Mask`, `GridDim`, `BlockDim`, `Invocation` after the unnamed current column.
fn cuda_kernels_header(l: &str) -> bool {
    let t = l.trim();
    t.starts_with("Kernel Parent Dev Grid Status") && t.ends_with(" Invocation")
}

/// A row of it: `*` for the kernel in focus, the kernel's id, its parent's (`-`), the device,
/// the grid, the status (`status_string`: `Invalid`, `Pending`, `Active`, `Sleeping`,
/// `Terminated`, `Undetermined`, or `Active (preempted)`), the SMs mask (`0x%08x`), the grid and
/// block dimensions (`(%u,%u,%u)`) and the invocation, `name(args)` (`"%s(%s)"`, `n/a` for
/// unknown arguments) → (kernel id, device, status, the kernel's name).
fn cuda_kernels_row(l: &str) -> Option<(String, String, String, String)> {
    let t = l.trim_start();
    let t = t.strip_prefix('*').unwrap_or(t);
    let tok: Vec<&str> = t.split_whitespace().collect();
    let number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let dim = |s: &str| s.starts_with('(') && s.ends_with(')') && s.contains(',');
    if tok.len() < 9
        || !number(tok[0])
        || !(tok[1] == "-" || number(tok[1]))
        || !number(tok[2])
        || !number(tok[3].trim_start_matches('-'))
    {
        return None;
    }
    let mask = tok.iter().skip(4).position(|s| s.starts_with("0x"))? + 4;
    if mask == 4 || tok.len() < mask + 4 || !dim(tok[mask + 1]) || !dim(tok[mask + 2]) {
        return None;
    }
    let status = tok[4..mask].join(" ");
    let invocation = tok[mask + 3..].join(" ");
    let name = invocation.split('(').next().unwrap_or("").trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    Some((
        tok[0].to_string(),
        tok[2].to_string(),
        super::clip(&status, 40),
        super::clip(name, super::MAX_TEXT),
    ))
}

/// cuda-gdb's `info cuda threads` table (the same file, `info_cuda_threads_print_coalesced` and
/// `…_uncoalesced`): `BlockIdx ThreadIdx To BlockIdx ThreadIdx Count Virtual PC Filename Line`
/// (coalesced, the default) or `BlockIdx ThreadIdx Virtual PC Dev SM Wp Ln Filename Line`, its
/// rows grouped under `Kernel N` lines.
fn cuda_threads_header(l: &str) -> bool {
    let t = l.trim();
    t.starts_with("BlockIdx ThreadIdx") && t.contains("Virtual PC") && t.ends_with("Line")
}

/// A row of it → (the source file of the threads' pc, its line): the row ends with the
/// filename (`n/a` without line information) and the line; the pc before them is `0x%016llx`.
fn cuda_threads_row(l: &str) -> Option<(String, u32)> {
    // `*` marks the range holding the thread in focus
    let t = l.trim_start();
    let tok: Vec<&str> = t
        .strip_prefix('*')
        .unwrap_or(t)
        .split_whitespace()
        .collect();
    let n = tok.len();
    if n < 5 || !tok[0].starts_with('(') {
        return None;
    }
    let line: u32 = tok[n - 1].parse().ok()?;
    let file = tok[n - 2];
    if !tok[..n - 2].iter().any(|t| t.starts_with("0x")) || file == "n/a" {
        return None;
    }
    Some((super::clip(file, super::MAX_TEXT), line))
}

/// The kernels and device threads of cuda-gdb's tables, one thread per kernel (`kernel N`, named
/// by its device), each with one frame: the kernel's name (`info cuda kernels`, no file), or the
/// source lines its threads stand at (`info cuda threads`, no function). What a kernel runs is
/// read from it as from a host frame ([`super::pyspy_dump::activity`]: NCCL's kernels and device
/// code are a collective in flight on the device).
fn cuda_gdb_tables(text: &str) -> Option<Process> {
    let mut p = Process::default();
    let mut table = None;
    for raw in super::scan::lines(text) {
        let l = raw.trim_end_matches('\r');
        if cuda_kernels_header(l) {
            table = Some("kernels");
            continue;
        }
        if cuda_threads_header(l) {
            table = Some("threads");
            continue;
        }
        match table {
            Some("kernels") => {
                let Some((id, dev, status, name)) = cuda_kernels_row(l) else {
                    table = None;
                    continue;
                };
                if p.threads.len() < super::MAX_ITEMS {
                    p.threads.push(Thread {
                        id: format!("kernel {id}"),
                        status: Some(status),
                        name: Some(format!("device {dev}")),
                        frames: vec![Frame {
                            function: name,
                            ..Frame::default()
                        }],
                    });
                }
            }
            Some("threads") => {
                if let Some(k) = l.trim().strip_prefix("Kernel ")
                    && !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_digit())
                {
                    if p.threads.len() < super::MAX_ITEMS {
                        p.threads.push(Thread {
                            id: format!("kernel {k}"),
                            ..Thread::default()
                        });
                    }
                    continue;
                }
                let Some((file, line)) = cuda_threads_row(l) else {
                    table = None;
                    continue;
                };
                if p.threads.is_empty() {
                    p.threads.push(Thread::default());
                }
                let th = p.threads.last_mut().expect("pushed above");
                if !th
                    .frames
                    .iter()
                    .any(|f| f.file == file && f.line == Some(line))
                    && th.frames.len() < super::MAX_ITEMS
                {
                    th.frames.push(Frame {
                        file,
                        line: Some(line),
                        ..Frame::default()
                    });
                }
            }
            _ => {}
        }
    }
    (!p.threads.is_empty()).then_some(p)
}

/// True when the text holds a gdb backtrace: a `thread apply` header followed by frame `#0`, or
/// frames `#0` and `#1` in a row, or an `info threads` table with a row. (Read line by line with
/// the `#` lines kept: they are the frames, not comments.)
pub fn looks_like_gdb_backtrace(text: &str) -> bool {
    let lines: Vec<&str> = super::scan::lines(text).take(20_000).collect();
    if lines.iter().enumerate().any(|(i, l)| {
        info_threads_header(l)
            && lines
                .get(i + 1)
                .is_some_and(|n| info_threads_row(n).is_some())
    }) {
        return true;
    }
    let is_frame = |l: &str, level: &str| {
        l.trim_start()
            .strip_prefix('#')
            .and_then(|r| r.strip_prefix(level))
            .is_some_and(|r| r.starts_with(' '))
            && frame(l).is_some()
    };
    lines.iter().enumerate().any(|(i, l)| {
        (header(l).is_some() || switching_header(l).is_some())
            && lines.get(i + 1).is_some_and(|n| is_frame(n, "0"))
            // libpython's `py-bt` frames: their `Frame 0x…, for file …, line …, in …` is no
            // other producer's
            || py_bt_frame(l).is_some()
            || is_frame(l, "0") && lines[i + 1..].iter().take(2).any(|n| is_frame(n, "1"))
            // cuda-gdb's tables of the device's kernels and threads
            || cuda_kernels_header(l)
                && lines.get(i + 1).is_some_and(|n| cuda_kernels_row(n).is_some())
            || cuda_threads_header(l)
                && lines[i + 1..]
                    .iter()
                    .take(2)
                    .any(|n| cuda_threads_row(n).is_some())
    })
}

/// A `#N  0x… in NAME` line without its argument list: the head of a frame gdb wrapped before
/// ` (` (see the module's notes), joined with the next line when that one starts with `(`.
fn is_unwrapped_frame_head(l: &str) -> bool {
    let Some(t) = l.trim_start().strip_prefix('#') else {
        return false;
    };
    let Some((level, rest)) = t.split_once(' ') else {
        return false;
    };
    if level.is_empty() || !level.chars().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let rest = rest.trim_start();
    let name = match rest.split_once(" in ") {
        Some((pc, n)) if pc.starts_with("0x") => n,
        _ => return false,
    };
    !name.is_empty() && !name.contains(" (") && (name.contains("::") || !name.contains(' '))
}

/// The backtraces in py-spy's shape: one process per run of threads numbered from 1 (a second
/// `Thread 1` header is another process's), its pid the LWP of its thread 1; a bare `bt` is one
/// thread of an unknown process.
pub fn parse_gdb_backtrace(text: &str) -> PyspyDump {
    let mut out = PyspyDump::default();
    let mut table = false;
    // a `#N` line whose argument list gdb wrapped onto the next line
    let mut wrapped: Option<String> = None;
    for raw in super::scan::lines(text) {
        let l = raw.trim_end_matches('\r');
        let joined;
        let l = match wrapped.take() {
            Some(head) if l.starts_with(' ') && l.trim_start().starts_with('(') => {
                joined = format!("{head} {}", l.trim_start());
                joined.as_str()
            }
            _ => l,
        };
        if frame(l).is_none() && py_bt_frame(l).is_none() && is_unwrapped_frame_head(l) {
            wrapped = Some(l.to_string());
            continue;
        }
        if info_threads_header(l) {
            // `info threads`: one process, each row a thread and its innermost frame
            table = true;
            if out.processes.len() < super::MAX_ITEMS {
                out.processes.push(Process::default());
            }
            continue;
        }
        if table {
            if let Some((num, lwp, name, f)) = info_threads_row(l) {
                let p = out.processes.last_mut().expect("pushed above");
                if num == "1" || num.ends_with(".1") {
                    p.pid = lwp.unwrap_or(0);
                }
                if p.threads.len() < super::MAX_ITEMS {
                    p.threads.push(Thread {
                        id: lwp.map(|n| n.to_string()).unwrap_or(num),
                        status: None,
                        name,
                        frames: vec![f],
                    });
                }
                continue;
            }
            table = false;
        }
        if let Some((num, lwp, name)) = header(l).or_else(|| switching_header(l)) {
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
        if let Some(f) = frame(l).or_else(|| py_bt_frame(l)) {
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
    // cuda-gdb's device tables: the device side of the process, apart from its host threads
    if let Some(p) = cuda_gdb_tables(text)
        && out.processes.len() < super::MAX_ITEMS
    {
        out.processes.push(p);
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
        "gdb's backtrace of a hung process's threads (`thread apply all bt`, a `thread N` selection and its `bt`, or `info threads`: each thread's innermost frame), libpython's `py-bt` frames (`#N Frame 0x…, for file F, line L, in NAME (…`), and cuda-gdb's `info cuda kernels` / `info cuda threads` of its device: each thread's native and Python frames, each kernel's name or source lines"
    }
    fn example(&self) -> &'static str {
        "gdb -p PID -batch -ex 'thread apply all bt' > bt.txt"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "processes",
            "per `thread apply all`: pid (the LWP of gdb's thread 1), threads (id: the LWP, name, frames: function without its C++ parameter list, file: source file or library, line); cuda-gdb's tables as one more process: a thread per kernel (id `kernel N`, name `device D`, status, frames: the kernel's name, or its threads' source file and line)",
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
    use crate::test_corpus;

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

    /// github.com/NVIDIA/nccl/issues/901: FasterTransformer's all-reduce over 4 GPUs hangs; the
    /// rank's main thread, cut by gdb's pager above `ncclGroupEnd`, in NCCL's kernel launch
    const GROUP_LAUNCH: &str = "Thread 1 (Thread 0x7f31a6ea7000 (LWP 496116)):\n\
#10 0x00007f31a587f7f2 in ?? () from /lib/x86_64-linux-gnu/libcuda.so\n\
#11 0x00007f31a772210b in __cudart803 () from /usr/local/lib/libnccl.so.2\n\
#12 0x00007f31a777cfe6 in cudaLaunchKernel () from /usr/local/lib/libnccl.so.2\n\
#13 0x00007f31a76877bd in ncclLaunchKernel (comm=comm@entry=0x555a34139b10, plan=plan@entry=0x555a79a14c30) at enqueue.cc:1092\n\
#14 0x00007f31a768cdd3 in doLaunches (head=<optimized out>) at group.cc:163\n\
#15 groupLaunch (job_=<optimized out>) at group.cc:325\n\
#16 0x00007f31a768d908 in ncclGroupEndInternal () at group.cc:406\n";

    /// github.com/pytorch/pytorch/pull/94864: process 0 of a hung test in a barrier's
    /// `Work::wait`, which blocks in `cudaDeviceSynchronize` (a bare `bt`, no thread header)
    const BARRIER_WAIT: &str = "#6  0x00007f8ff2cb8f59 in ?? () from /usr/local/cuda/lib64/libcudart.so.11.0\n\
#7  0x00007f8ff2cee665 in cudaDeviceSynchronize () from /usr/local/cuda/lib64/libcudart.so.11.0\n\
#8  0x00007f8fd4f82bb5 in c10d::ProcessGroupNCCL::WorkNCCL::synchronizeInternal(std::chrono::duration<long, std::ratio<1l, 1000l> >) () from /opt/conda/envs/py_3.10/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so\n\
#9  0x00007f8fd4f93773 in c10d::ProcessGroupNCCL::WorkNCCL::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >) ()\n   from /opt/conda/envs/py_3.10/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so\n";

    /// github.com/intel/torch-xpu-ops/issues/1536: rank 0 of a hung XCCL test in oneCCL's
    /// all-gather
    const ONECCL_ALLGATHER: &str = "#0  0x0000145afa2a9e40 in ccl_executor::wait(ccl_request const*) () from /home/ratnampa/2025_1/ccl/2021.15/lib/libccl.so.1\n\
#1  0x0000145afa164cf1 in ccl_coll_create(ccl_coll_param&, ccl_coll_attr const&) ()\n   from /home/ratnampa/2025_1/ccl/2021.15/lib/libccl.so.1\n\
#2  0x0000145afa163a31 in ccl_allgather_impl(void const*, void*, unsigned long, ccl::v1::datatype, ccl_coll_attr const&, ccl_comm*, ccl_stream const*, std::vector<ccl::v1::event, std::allocator<ccl::v1::event> > const&) ()\n   from /home/ratnampa/2025_1/ccl/2021.15/lib/libccl.so.1\n";

    #[test]
    fn a_tensorrt_llm_nccl_plugins_enqueue_is_its_collective() {
        // NVIDIA/TensorRT-LLM#2560: the executionLoop thread waiting under
        // AllgatherPlugin::enqueue (a cudaStreamQuery beneath it)
        let t = test_corpus("h140_gdb_trtllm2560_execution_loop_allgather_plugin.txt");
        assert!(looks_like_gdb_backtrace(&t));
        let d = parse_gdb_backtrace(&t);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.name.as_deref(), Some("executionLoop"));
        match activity(th) {
            Activity::Collective { op, frame } => {
                assert_eq!(op, "all_gather");
                assert!(frame.starts_with("tensorrt_llm::plugins::AllgatherPlugin::enqueue ("));
            }
            other => panic!("{other:?}"),
        }
        // the other plugins, with debug info
        for (plugin, op) in [
            ("AllreducePlugin", "all_reduce"),
            ("ReduceScatterPlugin", "reduce_scatter"),
            ("SendPlugin", "send"),
            ("RecvPlugin", "recv"),
        ] {
            let text = format!(
                "Thread 1 (Thread 0x7f (LWP 9) \"python3\"):\n#0  0x00007f in tensorrt_llm::plugins::{plugin}::enqueue(nvinfer1::PluginTensorDesc const*, void*, CUstream_st*) (this=0x1) at /src/cpp/tensorrt_llm/plugins/ncclPlugin/x.cpp:98\n"
            );
            let th = &parse_gdb_backtrace(&text).processes[0].threads[0];
            assert!(
                matches!(activity(th), Activity::Collective { op: ref o, .. } if o == op),
                "{plugin}: {:?}",
                activity(th)
            );
        }
        // neighbours not claimed: a plugin that is no collective, a plugin's other method
        for f in [
            "tensorrt_llm::plugins::GPTAttentionPlugin::enqueue(int)",
            "tensorrt_llm::plugins::AllgatherPlugin::initialize()",
        ] {
            let text = format!(
                "Thread 1 (Thread 0x7f (LWP 9) \"python3\"):\n#0  0x00007f in {f} () from /x/libnvinfer_plugin_tensorrt_llm.so\n"
            );
            let th = &parse_gdb_backtrace(&text).processes[0].threads[0];
            assert_eq!(activity(th), Activity::Other, "{f}");
        }
        // the same issue's idle helper threads are no collective
        let t = test_corpus("h140_gdb_trtllm2560_helper_threads_poll_epoll.txt");
        let d = parse_gdb_backtrace(&t);
        assert!(
            d.processes
                .iter()
                .flat_map(|p| &p.threads)
                .all(|t| activity(t) == Activity::Other)
        );
    }

    #[test]
    fn nccl_launching_a_groups_kernel_is_inside_the_collective() {
        let d = parse_gdb_backtrace(GROUP_LAUNCH);
        assert!(matches!(
            activity(&d.processes[0].threads[0]),
            Activity::Collective { ref op, .. } if op == "ncclLaunchKernel"
        ));
        // the same frames without NCCL's launch: only the driver and the runtime
        let driver_only: String = GROUP_LAUNCH.lines().take(4).collect::<Vec<_>>().join("\n");
        let d = parse_gdb_backtrace(&driver_only);
        assert_eq!(activity(&d.processes[0].threads[0]), Activity::Other);
    }

    #[test]
    fn a_barriers_device_synchronize_is_the_collectives_wait_not_a_host_sync() {
        let d = parse_gdb_backtrace(BARRIER_WAIT);
        assert!(matches!(
            activity(&d.processes[0].threads[0]),
            Activity::Collective { ref op, .. } if op == "wait"
        ));
        // a device synchronize of the step itself, no collective above it, stays a host sync
        let step_sync: String = BARRIER_WAIT.lines().take(2).collect::<Vec<_>>().join("\n");
        let d = parse_gdb_backtrace(&step_sync);
        assert!(matches!(
            activity(&d.processes[0].threads[0]),
            Activity::HostSync { .. }
        ));
    }

    #[test]
    fn oneccl_collectives_are_collectives_and_its_executor_alone_is_not() {
        let d = parse_gdb_backtrace(ONECCL_ALLGATHER);
        assert!(matches!(
            activity(&d.processes[0].threads[0]),
            Activity::Collective { ref op, .. } if op == "allgather"
        ));
        let executor: String = ONECCL_ALLGATHER
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n");
        let d = parse_gdb_backtrace(&executor);
        assert_eq!(activity(&d.processes[0].threads[0]), Activity::Other);
    }

    /// github.com/pytorch/pytorch/issues/75147: a DataLoader hang; gdb's `info threads` of the
    /// main process
    const INFO_THREADS: &str = "(gdb) info threads\n  Id   Target Id         Frame\n\
* 1    Thread 0x7fc73ac5d700 (LWP 52422) \"\" select_poll_poll () at /usr/local/src/conda/python-3.8.12/Modules/clinic/selectmodule.c.h:219\n\
  2    Thread 0x7fc6b59e6700 (LWP 52574) \"\" pthread_cond_wait@@GLIBC_2.3.2 () at ../sysdeps/unix/sysv/linux/x86_64/pthread_cond_wait.S:185\n\
  5    Thread 0x7fc6b71e9700 (LWP 52742) \"\" 0x00007fc739c909c8 in accept4 (fd=7, addr=..., addr_len=0x7fc6b71e8e58, flags=524288) at ../sysdeps/unix/sysv/linux/accept4.c:40\n";

    #[test]
    fn info_threads_rows_are_threads_with_their_innermost_frame() {
        assert!(looks_like_gdb_backtrace(INFO_THREADS));
        let d = parse_gdb_backtrace(INFO_THREADS);
        assert_eq!(d.processes.len(), 1);
        let p = &d.processes[0];
        // gdb's thread 1 is the initial thread: its LWP is the pid
        assert_eq!(p.pid, 52422);
        assert_eq!(p.threads.len(), 3);
        let main = p.main_thread().unwrap();
        assert_eq!(main.frames[0].function, "select_poll_poll");
        assert_eq!(main.frames[0].line, Some(219));
        assert_eq!(main.name, None);
        assert_eq!(p.threads[2].id, "52742");
        assert_eq!(p.threads[2].frames[0].function, "accept4");
        // a poll of the main thread alone is no wait gpufix can name
        assert_eq!(activity(main), Activity::Other);
        // the rows without gdb's column headers are not a table
        let rows: String = INFO_THREADS.lines().skip(2).collect::<Vec<_>>().join("\n");
        assert!(!looks_like_gdb_backtrace(&rows));
        // nor is a header over prose
        assert!(!looks_like_gdb_backtrace(
            "  Id   Target Id         Frame\nthe id is the thread's number (see below)\n"
        ));
    }

    #[test]
    fn a_demangled_free_function_with_its_parameters_is_a_frame_and_prose_is_not() {
        // oneCCL's `ccl_coll_create(ccl_coll_param&, ccl_coll_attr const&)`: spaces inside the
        // parameter list of a C++ function outside any namespace
        assert!(looks_like_gdb_backtrace(ONECCL_ALLGATHER));
        let f = frame(
            "#1  0x0000145afa164cf1 in ccl_coll_create(ccl_coll_param&, ccl_coll_attr const&) ()",
        )
        .unwrap();
        assert_eq!(f.function, "ccl_coll_create");
        assert!(frame("#1 see the notes (below)").is_none());
        assert!(frame("#2 then run it again (twice)").is_none());
    }

    #[test]
    fn cuda_gdb_kernels_table_names_an_nccl_kernel_in_flight() {
        // k2-fsa/snowfall#71: the hung DDP job's device, cuda-gdb's `info cuda kernels`
        let t = crate::test_corpus("h111_gdb_snowfall71_cuda_gdb_nccl_reduce_kernel_active.txt");
        assert!(looks_like_gdb_backtrace(&t));
        let d = parse_gdb_backtrace(&t);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.id, "kernel 0");
        assert_eq!(th.name.as_deref(), Some("device 0"));
        assert_eq!(th.status.as_deref(), Some("Active"));
        assert_eq!(th.frames[0].function, "ncclReduceRingLLKernel_sum_f64");
        assert!(
            matches!(activity(th), Activity::Collective { ref op, .. } if op == "ncclReduce"),
            "{:?}",
            activity(th)
        );
        // the kernel names of NCCL 2.8–2.18 and 2.19 on; a preempted kernel's two-word status
        let t = "  Kernel Parent Dev Grid Status   SMs Mask GridDim BlockDim Invocation\n*      3      -   1 77 Active (preempted) 0x000000ff (2,1,1) (640,1,1) ncclDevKernel_AllReduce_Sum_f32_RING_LL(n/a)\n       4      -   1 78 Sleeping 0x00000000 (1,1,1) (512,1,1) ncclKernel_AllGather_RING_LL_Sum_int8_t(n/a)\n";
        let p = &parse_gdb_backtrace(t).processes[0];
        assert_eq!(p.threads[0].status.as_deref(), Some("Active (preempted)"));
        let ops: Vec<String> = p
            .threads
            .iter()
            .map(|t| match activity(t) {
                Activity::Collective { op, .. } => op,
                a => format!("{a:?}"),
            })
            .collect();
        assert_eq!(ops, ["ncclAllReduce", "ncclAllGather"]);
        // a healthy neighbour: the program's own kernel (cuda-gdb's documented example shape)
        let t = "  Kernel Parent Dev Grid Status   SMs Mask GridDim BlockDim Invocation\n*      1      -   0    2 Active 0x00ffffff (240,1,1) (128,1,1) acos_main(parms=...)\n";
        assert!(looks_like_gdb_backtrace(t));
        let th = &parse_gdb_backtrace(t).processes[0].threads[0];
        assert_eq!(th.frames[0].function, "acos_main");
        assert_eq!(activity(th), Activity::Other);
    }

    #[test]
    fn cuda_gdb_threads_table_in_ncclss_device_code() {
        // NVIDIA/nccl#558: `info cuda threads` of a hung all-reduce, its threads in prims_ll.h
        let t = crate::test_corpus("h111_gdb_nccl558_cuda_gdb_threads_prims_ll.txt");
        assert!(looks_like_gdb_backtrace(&t));
        let d = parse_gdb_backtrace(&t);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.id, "kernel 0");
        // six rows, two distinct source lines
        assert_eq!(th.frames.len(), 2);
        assert_eq!(
            th.frames[0].file,
            "/sources/nccl/src/collectives/device/prims_ll.h"
        );
        assert_eq!(th.frames[0].line, Some(48));
        assert_eq!(th.frames[1].line, Some(94));
        assert!(matches!(activity(th), Activity::Collective { ref op, .. } if op == "ncclKernel"));
        // a healthy neighbour: the program's own source (cuda-gdb's documented example shape)
        let t = "  BlockIdx ThreadIdx To BlockIdx ThreadIdx Count         Virtual PC Filename  Line\nKernel 0\n*  (0,0,0)   (0,0,0)     (0,0,0) (31,0,0)    32 0x000000000088f88c   acos.cu   376\n";
        assert!(looks_like_gdb_backtrace(t));
        let th = &parse_gdb_backtrace(t).processes[0].threads[0];
        assert_eq!(th.frames[0].file, "acos.cu");
        assert_eq!(activity(th), Activity::Other);
        // prose that names the command is not the table
        assert!(!looks_like_gdb_backtrace(
            "I ran info cuda kernels and info cuda threads, both hang\n"
        ));
    }

    #[test]
    fn nccls_profiling_names_and_pytorchs_lazy_communicator_creation_are_collectives() {
        // NVIDIA/Megatron-LM#1679: cuda-gdb's `bt` of a hung rank (no `Thread N (…)` heading,
        // gdb's stop line above it), the main thread in ProcessGroupNCCL::recv's lazy
        // communicator creation, NCCL's strong `p`-prefixed symbol without debug info
        let t = crate::test_corpus("h129_gdb_megatron1679_cuda_gdb_recv_lazy_comm_init_hang.txt");
        assert!(looks_like_gdb_backtrace(&t));
        let d = parse_gdb_backtrace(&t);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.frames.len(), 10);
        assert_eq!(th.frames[6].function, "pncclCommInitRankConfig");
        assert_eq!(th.frames[6].file, "/lib/x86_64-linux-gnu/libnccl.so.2");
        assert_eq!(
            th.frames[8].function,
            "c10d::ProcessGroupNCCL::initNCCLComm"
        );
        assert_eq!(
            th.frames[9].file,
            "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so"
        );
        assert!(matches!(
            activity(th),
            Activity::Collective { ref op, ref frame }
                if op == "ncclCommInitRankConfig"
                    && frame == "pncclCommInitRankConfig (/lib/x86_64-linux-gnu/libnccl.so.2)"
        ));
        // the same stack with NCCL's frames unnamed: PyTorch's creation names the op
        let unnamed = Thread {
            frames: th.frames[7..].to_vec(),
            ..Thread::default()
        };
        assert!(
            matches!(activity(&unnamed), Activity::Collective { ref op, .. } if op == "initNCCLComm")
        );
        // not NCCL calls: a `p`-prefixed NCCL symbol that is no call every rank makes, and a
        // Python function of that name (it has a line)
        let not = |function: &str, line: Option<u32>| Thread {
            frames: vec![Frame {
                function: function.into(),
                file: "libnccl.so.2".into(),
                line,
                ..Frame::default()
            }],
            ..Thread::default()
        };
        assert_eq!(activity(&not("pncclGetUniqueId", None)), Activity::Other);
        assert_eq!(activity(&not("pncclAllReduce", Some(12))), Activity::Other);
        assert_eq!(activity(&not("pnccl", None)), Activity::Other);
        assert!(matches!(
            activity(&not("pncclAllReduce", None)),
            Activity::Collective { ref op, .. } if op == "ncclAllReduce"
        ));
    }

    #[test]
    fn libpython_py_bt_frames_and_thread_selection() {
        // pytorch/pytorch#24927: `thread 12` then its `bt` and `py-bt` (Python 2.7): the
        // loader's pin-memory thread in a queue get
        let t = crate::test_corpus("h129_gdb_pytorch24927_pin_memory_thread_queue_get_py27.txt");
        assert!(looks_like_gdb_backtrace(&t));
        let d = parse_gdb_backtrace(&t);
        assert_eq!(d.processes.len(), 1);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.id, "30756");
        // not gdb's thread 1: the pid is not known
        assert_eq!(d.processes[0].pid, 0);
        assert_eq!(th.frames.len(), 2);
        assert_eq!(th.frames[0].function, "poll");
        assert_eq!(th.frames[0].file, "../sysdeps/unix/syscall-template.S");
        assert_eq!(th.frames[1].function, "get");
        assert_eq!(
            th.frames[1].file,
            "/av/lib/third_party/python2.7/multiprocessing/queues.py"
        );
        assert_eq!(th.frames[1].line, Some(131));
        // a queue get alone does not say whose queue: the loader's frames are cut in the paste
        assert_eq!(activity(th), Activity::Other);
        // a py-bt frame alone is read; the Python 3 form of a frame's summary too
        let f = py_bt_frame("#7 Frame 0x7f3484000910, for file /usr/lib/python3.8/threading.py, line 302, in wait (self=<Condition(_lock=<_thread.lock at remote 0x7f37>) at remote 0x7f36>, timeout=None)").unwrap();
        assert_eq!((f.function.as_str(), f.line), ("wait", Some(302)));
        assert!(looks_like_gdb_backtrace(
            "(gdb) py-bt\n#4 Frame 0x7f3484000910, for file /a/threading.py, line 358, in wait (self=...(truncated)\n"
        ));
        // neighbours: prose and other `#N` lines
        for l in [
            "#3 Frame rate dropped, for file uploads",
            "#3 Frame 0xZZ, for file a.py, line 1, in f (",
            "#3 Frame 0x7f, for file a.py, line one, in f (",
            "## Frame 0x7f, for file a.py, line 1, in f (",
        ] {
            assert!(py_bt_frame(l).is_none(), "{l}");
            assert!(!looks_like_gdb_backtrace(l), "{l}");
        }
        assert!(
            switching_header("[Switching to thread 2 (Thread 0x75786a7ff640 (LWP 51477))]")
                .is_some_and(|(n, lwp, _)| n == "2" && lwp == Some(51477))
        );
        assert!(switching_header("[Switching to thread 2]").is_none());
    }
}
