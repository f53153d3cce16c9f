//! `py-spy dump` output, read from its producer: py-spy `src/dump.rs` (`write_traces`,
//! `write_trace`) and `src/stack_trace.rs` (`status_str`, `format_threadid`) at v0.4.2
//! (github.com/benfred/py-spy, d230d820). The one parser of this format: the live probe
//! ([`crate::probes::pyspy`]) reads its own dumps with it, and a pasted dump (`--evidence`) is
//! read the same way.
//!
//! ```text
//! Process 6473: /usr/bin/python3 -u train.py          cmdline joined with spaces
//! Python v3.11.4 (/usr/bin/python3.11)                version (executable)
//! Parent Process 6420: …                              with --subprocesses, for a child
//!
//! Thread 6473 (idle): "MainThread"                    native tid on Linux (else 0x… pthread id);
//!                                                     (idle) / (active) / (active+gil);
//!                                                     without --idle in `record`: (gil) or nothing;
//!                                                     the name only when Python knows it
//!     _try_get_data (torch/utils/data/dataloader.py:1133)   innermost frame first:
//!     _get_data (torch/utils/data/dataloader.py:1294)       func (short file:line), or
//!                                                            func (file) for a native frame (line 0)
//!         Arguments:                                  with --locals: the frame's arguments
//!             self: <…>                               and locals, `name: repr`
//!         Locals:
//!             batch: …
//! ```
//!
//! A Python frame's name is the code object's `co_name` up to py-spy 0.4.2 and, from py-spy
//! 0.4.3 on a Python 3.11+ target, its `co_qualname` (benfred/py-spy#825, `src/stack_trace.rs`:
//! "Try to get qualname first (available in Python 3.11+), fall back to name"): the same frame
//! prints as `_next_data (torch/utils/data/dataloader.py:1529)` or as
//! `_MultiProcessingDataLoaderIter._next_data (…)`, `main.<locals>.step (train.py:398)`. A
//! frame is matched by its name, the last part of a qualified name ([`py_name`]).
//!
//! With `--subprocesses` a rule of dashes separates each child's dump. `--json` output is not
//! this format (and is not read). Several dumps of one process pasted one after the other are
//! several samples of it.
//!
//! What one dump can show is where each thread *is* at that moment, not where it spends its
//! time; [`activity`] names the moment (waiting on the DataLoader, inside a collective, in a
//! host sync that shows as a frame), and only samples make a share. With `--native` a
//! collective shows as the C++ frame that waits on its work: `c10d::ProcessGroupGloo::RecvWork::wait`,
//! `…::SendWork::wait`, `c10d::ProcessGroupNCCL::WorkNCCL::wait` (pytorch/pytorch
//! `torch/csrc/distributed/c10d/ProcessGroupGloo.cpp` and `ProcessGroupNCCL.cpp`, 2.x).
//!
//! Whether a thread in a collective is *stuck* one dump cannot say, unless the text around it
//! does: SGLang's `ProcessWatchdog` (sgl-project/sglang `python/sglang/srt/utils/watchdog.py`,
//! read at 005c64c7; the older scheduler mixin's `Watchdog timeout (self.watchdog_timeout=300)`)
//! dumps its own process when its forward counter has not moved for `watchdog_timeout` seconds
//! while busy, logging `Pyspy dump for PID N:` and the dump (`utils/common.py`
//! `pyspy_dump_schedulers`), then `<name> watchdog timeout (self.watchdog_timeout=T,
//! self.soft=B)`; that line is kept as [`WatchdogTimeout`].

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PyspyDump {
    /// One entry per `Process N:` block (a process dumped twice appears twice: two samples).
    pub processes: Vec<Process>,
    /// A watchdog in the same paste that dumped its process after it stopped making progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watchdog_timeout: Option<WatchdogTimeout>,
    /// A faulthandler dump's `Fatal Python error:` message: the process crashed
    /// ([`super::faulthandler`]); py-spy prints none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fatal_error: Option<String>,
}

/// SGLang's `<name> watchdog timeout (self.watchdog_timeout=T, self.soft=B)`: no forward step
/// for T seconds while busy (soft: logged only; hard: the parent is sent SIGQUIT).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WatchdogTimeout {
    /// `Scheduler`, `Detokenizer`, … (empty in the older `Watchdog timeout (…)` wording)
    pub name: String,
    pub timeout_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft: Option<bool>,
}

/// `… Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)` anywhere in a
/// line (behind SGLang's `[time PPn TPn] ` prefix).
fn watchdog_timeout(l: &str) -> Option<WatchdogTimeout> {
    const KEY: &str = "atchdog timeout (self.watchdog_timeout=";
    let at = l.find(KEY)?;
    let before = &l[..at];
    let lower = match before.chars().last()? {
        'w' => true,
        'W' => false,
        _ => return None,
    };
    let rest = &l[at + KEY.len()..];
    let inner = &rest[..rest.find(')')?];
    let (t, soft) = match inner.split_once(", self.soft=") {
        Some((t, b)) => (t, Some(b.trim() == "True")),
        None => (inner, None),
    };
    let timeout_s: f64 = t
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x >= 0.0)?;
    // `Scheduler watchdog timeout`: the watchdog's debug name is the word before
    let name = if lower {
        before[..before.len() - 1]
            .trim_end()
            .rsplit(|c: char| c.is_whitespace() || c == ']')
            .next()
            .unwrap_or("")
    } else {
        ""
    };
    Some(WatchdogTimeout {
        name: super::clip(name, 60),
        timeout_s,
        soft,
    })
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Process {
    pub pid: u32,
    pub cmdline: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python_exe: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_cmdline: Option<String>,
    pub threads: Vec<Thread>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Thread {
    /// As printed: a native tid (`6473`) or a pthread id (`0x7F768F77C740`).
    pub id: String,
    /// `idle`, `active`, `active+gil` or `gil`, when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Innermost first.
    pub frames: Vec<Frame>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Frame {
    pub function: String,
    pub file: String,
    /// Absent for a native frame or a frame without line information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// `--locals`: (name, repr), arguments first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locals: Vec<(String, String)>,
}

impl Thread {
    pub fn is_main(&self, pid: u32) -> bool {
        self.name.as_deref() == Some("MainThread")
            || !self.id.is_empty() && self.id == pid.to_string()
            || self.id.eq_ignore_ascii_case(&format!("0x{pid:x}"))
    }
    pub fn idle(&self) -> Option<bool> {
        self.status.as_deref().map(|s| s == "idle")
    }
}

impl Process {
    /// The main thread: named `MainThread`, or the thread whose id is the pid.
    pub fn main_thread(&self) -> Option<&Thread> {
        self.threads.iter().find(|t| t.is_main(self.pid))
    }
    /// A DataLoader worker or another multiprocessing child, not the training loop.
    pub fn is_worker(&self) -> bool {
        self.cmdline.contains("multiprocessing.spawn")
            || self.cmdline.contains("--multiprocessing-fork")
            || self.cmdline.contains("multiprocessing.forkserver")
            || self.main_thread().is_some_and(|t| {
                t.frames
                    .iter()
                    .any(|f| py_name(f) == "_worker_loop" && f.file.contains("torch/utils/data"))
            })
    }
}

impl Process {
    /// Which process this is across a paste: its pid, or (headers dropped) its main thread's id.
    pub fn identity(&self) -> String {
        if self.pid != 0 {
            return self.pid.to_string();
        }
        self.main_thread().map(|t| t.id.clone()).unwrap_or_default()
    }

    /// The program a process runs, to tell the ranks of one job from the other processes of a
    /// paste: its command line (py-spy's `Process N: cmdline`) with its numbers blanked, as the
    /// ranks of one job differ only there (`--local_rank=3` that `deepspeed`'s launcher appends,
    /// SGLang's `sglang::scheduler_TP3`, vLLM's `VLLM::Worker_TP1` process titles). A paste of
    /// threads alone, the `Process` headers dropped (several ranks' traces grouped by the
    /// poster), is one job: every such process has the empty program.
    pub fn program(&self) -> String {
        let mut out = String::with_capacity(self.cmdline.len());
        let mut in_number = false;
        for c in self.cmdline.chars() {
            if c.is_ascii_digit() {
                if !in_number {
                    out.push('N');
                }
                in_number = true;
            } else {
                in_number = false;
                out.push(c);
            }
        }
        out
    }
}

/// The NCCL operation a `torch.distributed` collective issues (`OpType` of c10d's `Work`,
/// `torch/csrc/distributed/c10d/Types.hpp`): the ranks of a group must issue the same one at the
/// same point of their sequence. Point-to-point calls (`send`, `recv`, `batch_isend_irecv`)
/// have none: a send and its receive are different calls by design.
pub fn collective_family(op: &str) -> Option<&'static str> {
    Some(match op {
        "all_reduce" | "all_reduce_coalesced" => "ALLREDUCE",
        "all_gather"
        | "all_gather_into_tensor"
        | "all_gather_object"
        | "all_gather_coalesced"
        | "_all_gather_base" => "ALLGATHER",
        "reduce_scatter" | "reduce_scatter_tensor" | "_reduce_scatter_base" => "REDUCE_SCATTER",
        "all_to_all" | "all_to_all_single" => "ALLTOALL",
        "broadcast" | "broadcast_object_list" => "BROADCAST",
        "reduce" => "REDUCE",
        "gather" | "gather_object" => "GATHER",
        "scatter" | "scatter_object_list" => "SCATTER",
        "barrier" | "monitored_barrier" => "BARRIER",
        // DistributedDataParallel's constructor (`torch/distributed/utils.py`, see
        // [`DDP_INIT_COLLECTIVES`])
        "_verify_param_shape_across_processes" => "ALLGATHER",
        "_sync_module_states" | "_sync_params_and_buffers" | "_broadcast_coalesced" => "BROADCAST",
        // NCCL's own calls (see [`NCCL_CALLS`])
        "ncclAllReduce" => "ALLREDUCE",
        "ncclAllGather" => "ALLGATHER",
        "ncclReduceScatter" => "REDUCE_SCATTER",
        "ncclBroadcast" | "ncclBcast" => "BROADCAST",
        "ncclReduce" => "REDUCE",
        _ => return None,
    })
}

/// py-spy's thread status words (`stack_trace.rs` `status_str`).
const STATUS_WORDS: &[&str] = &["idle", "active", "active+gil", "gil"];

/// `Thread 6473 (idle): "MainThread"` → (id, status, name).
///
/// py-spy always prints an id (`format_threadid`: the native tid, else the pthread id in
/// hex); a paste whose poster blanked the ids (`Thread (idle): "MainThread"`, as one would an
/// address) is still a py-spy header when py-spy's status word follows in parentheses, and its
/// thread gets an empty id (the main thread is then known by its name alone).
fn thread_header(l: &str) -> Option<(String, Option<String>, Option<String>)> {
    let rest = l.strip_prefix("Thread ")?;
    let (id, rest) = if let Some(inner) = rest.strip_prefix('(') {
        let word = inner.split_once(')')?.0;
        if !STATUS_WORDS.contains(&word) {
            return None;
        }
        ("", rest)
    } else {
        let (id, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let id = id.trim_end_matches(':');
        if id.is_empty()
            || !(id.chars().all(|c| c.is_ascii_digit())
                || (id.starts_with("0x") || id.starts_with("0X"))
                    && id[2..].chars().all(|c| c.is_ascii_hexdigit()))
        {
            return None;
        }
        (id, rest)
    };
    let mut status = None;
    let mut rest = rest.trim();
    if let Some(r) = rest.strip_prefix('(')
        && let Some((s, after)) = r.split_once(')')
    {
        status = Some(s.to_string());
        rest = after.trim();
    }
    let name = rest
        .strip_prefix(':')
        .map(str::trim)
        .and_then(|n| n.strip_prefix('"')?.strip_suffix('"'))
        .map(str::to_string);
    Some((id.to_string(), status, name))
}

/// `    func (file.py:123)` or `    func (file)`.
fn frame_line(l: &str) -> Option<Frame> {
    let t = l.trim();
    let (func, rest) = t.rsplit_once(" (")?;
    let inner = rest.strip_suffix(')')?;
    if func.is_empty() || inner.is_empty() {
        return None;
    }
    let (file, line) = match inner.rsplit_once(':') {
        Some((f, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
            (f, n.parse().ok())
        }
        _ => (inner, None),
    };
    Some(Frame {
        function: func.to_string(),
        file: file.to_string(),
        line,
        ..Frame::default()
    })
}

/// True when the text holds a py-spy dump: a `Thread` header with py-spy's status words
/// followed by a frame line, or a `Process N:` line followed by `Python v`.
pub fn looks_like_pyspy_dump(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text).take(20_000).collect();
    lines.iter().enumerate().any(|(i, l)| {
        let l = clean(l);
        if l.starts_with("Process ")
            && lines
                .get(i + 1)
                .is_some_and(|n| clean(n).starts_with("Python v"))
        {
            return true;
        }
        thread_header(l)
            .is_some_and(|(_, s, _)| s.as_deref().is_some_and(|s| STATUS_WORDS.contains(&s)))
            && lines.get(i + 1).is_some_and(|n| frame_line(n).is_some())
            || python_frame(l).is_some_and(|ind| {
                lines
                    .get(i + 1)
                    .is_some_and(|n| python_frame(clean(n)) == Some(ind))
            })
            || bare_python_frame(l)
                && lines
                    .get(i + 1)
                    .is_some_and(|n| bare_python_frame(clean(n)))
    }) || {
        // a stack pasted without its header, which paste unwrapping left unindented: every
        // line a Python frame
        let frames: Vec<&str> = lines.iter().map(|l| clean(l).trim()).collect();
        frames.len() >= 2 && frames.iter().all(|t| python_frame_text(t))
    }
}

/// A Python frame as `dump.rs` prints it with its four-space indent removed (`barrier
/// (torch/distributed/distributed_c10d.py:5030)` at the start of the line): a poster who pastes
/// only the innermost frames of each rank, each rank's block under a line of prose, drops the
/// indent with the header (github.com/cliangyu/ttcc-rl `docs/08_session_journal_20260522.md`).
/// Two in a row are a stack; the name must be a Python name (`co_name`, or a `co_qualname` such
/// as `main.<locals>.step`), so prose that happens to end in a parenthesis is not one.
fn bare_python_frame(l: &str) -> bool {
    !l.starts_with([' ', '\t'])
        && python_frame_text(l)
        && frame_line(l).is_some_and(|f| {
            f.function
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '<' | '>'))
        })
}

/// A frame line as `dump.rs` prints a Python frame: four spaces, `function (file.py:line)`;
/// returns its indent. Two of them in a row, with the same indent, are a py-spy stack pasted
/// without its `Thread` header (the header is what posters cut: "all of them end like this:").
/// A paste may shift the whole block (a Markdown list item's code block keeps the item's two
/// spaces: github.com/addison-nm/BioM3-dev `docs/bug_reports/…/postmortem.md`), so any indent
/// of one to eight spaces counts, the same on both lines.
fn python_frame(l: &str) -> Option<usize> {
    let r = l.trim_start_matches(' ');
    let indent = l.len() - r.len();
    ((1..=8).contains(&indent) && python_frame_text(r)).then_some(indent)
}

/// `function (file.py:line)`, the frame without its indent.
fn python_frame_text(t: &str) -> bool {
    frame_line(t).is_some_and(|f| {
        f.line.is_some() && f.file.ends_with(".py") && !f.function.contains(char::is_whitespace)
    })
}

fn clean(l: &str) -> &str {
    let mut l = l.trim_end_matches('\r');
    while let Some(r) = l.trim_start().strip_prefix('>') {
        l = r.strip_prefix(' ').unwrap_or(r);
    }
    l
}

pub fn parse_pyspy_dump(text: &str) -> PyspyDump {
    let mut out = PyspyDump::default();
    // which --locals section the lines below a frame belong to
    let mut section: Option<bool> = None; // Some(true): arguments
    // the line before was a frame, a local or a thread header (not the poster's prose)
    let mut last_was_stack = false;
    for raw in super::content_lines(text) {
        let l = clean(raw);
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let was_stack = std::mem::replace(&mut last_was_stack, true);
        if out.watchdog_timeout.is_none()
            && let Some(w) = watchdog_timeout(t)
        {
            out.watchdog_timeout = Some(w);
            continue;
        }
        if let Some(rest) = t.strip_prefix("Process ")
            && let Some((pid, cmd)) = rest.split_once(": ")
            && let Ok(pid) = pid.trim().parse::<u32>()
        {
            if out.processes.len() >= super::MAX_ITEMS {
                break;
            }
            out.processes.push(Process {
                pid,
                cmdline: super::clip(cmd.trim(), super::MAX_TEXT),
                ..Process::default()
            });
            section = None;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Parent Process ")
            && let Some((pid, cmd)) = rest.split_once(": ")
            && let Some(p) = out.processes.last_mut()
        {
            p.parent_pid = pid.trim().parse().ok();
            p.parent_cmdline = Some(super::clip(cmd.trim(), super::MAX_TEXT));
            continue;
        }
        if let Some(rest) = t.strip_prefix("Python v")
            && let Some(p) = out.processes.last_mut()
        {
            let (v, exe) = rest.split_once(' ').unwrap_or((rest, ""));
            p.python_version = Some(v.to_string());
            p.python_exe = exe
                .trim()
                .strip_prefix('(')
                .and_then(|e| e.strip_suffix(')'))
                .map(str::to_string);
            continue;
        }
        if let Some((id, status, name)) = thread_header(t) {
            // a process has one main thread (CPython's `threading.main_thread()`, the thread
            // py-spy names "MainThread"): a second one, in a paste that dropped the `Process N:`
            // headers (several ranks' dumps grouped, `grep -A5 MainThread` over them), is the
            // next process
            let next_process = name.as_deref() == Some("MainThread")
                && out.processes.last().is_some_and(|p| {
                    p.threads
                        .iter()
                        .any(|t| t.name.as_deref() == Some("MainThread"))
                });
            if out.processes.is_empty() || next_process {
                // a paste of the threads alone
                if out.processes.len() >= super::MAX_ITEMS {
                    break;
                }
                out.processes.push(Process::default());
            }
            let p = out.processes.last_mut().expect("pushed above");
            if p.threads.len() < super::MAX_ITEMS {
                p.threads.push(Thread {
                    id,
                    status,
                    name,
                    frames: Vec::new(),
                });
            }
            section = None;
            continue;
        }
        let headerless_after_prose = !was_stack
            && out
                .processes
                .last()
                .and_then(|p| p.threads.last())
                .is_some_and(|th| th.id.is_empty() && th.status.is_none() && th.name.is_none());
        if (out
            .processes
            .last()
            .is_none_or(|p: &Process| p.threads.is_empty())
            || headerless_after_prose)
            && python_frame_text(t)
        {
            // frames before any `Thread` header: a stack pasted without its header, or the
            // tail of a thread the paste cut; its thread is not known. Another headerless
            // stack after the poster's prose is another thread ("stragglers at: …", "waiters
            // at: …"), not more frames of the first
            if out.processes.is_empty() {
                out.processes.push(Process::default());
            }
            let p = out.processes.last_mut().expect("pushed above");
            p.threads.push(Thread::default());
        }
        let Some(th) = out.processes.last_mut().and_then(|p| p.threads.last_mut()) else {
            continue;
        };
        match t {
            "Arguments:" => {
                section = Some(true);
                continue;
            }
            "Locals:" => {
                section = Some(false);
                continue;
            }
            _ => {}
        }
        // a local (`name: repr`) is indented deeper than a frame (12 spaces against 4)
        let indent = l.len() - l.trim_start().len();
        if let (Some(args), Some(f)) = (section, th.frames.last_mut())
            && indent >= 8
            && let Some((name, repr)) = t.split_once(": ")
        {
            let list = if args {
                &mut f.arguments
            } else {
                &mut f.locals
            };
            if list.len() < super::MAX_ITEMS {
                list.push((name.to_string(), super::clip(repr, 200)));
            }
            continue;
        }
        if let Some(f) = frame_line(t) {
            section = None;
            if th.frames.len() < 4 * super::MAX_ITEMS {
                th.frames.push(f);
            }
        } else {
            // the poster's prose between blocks
            last_was_stack = false;
        }
    }
    out
}

/// What a thread is doing at the moment of a dump.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Activity {
    /// The training loop waits for a batch from the DataLoader (`_next_data`, `_get_data`,
    /// `_try_get_data`, a queue `get`/`poll` under `dataloader.py`).
    DataloaderWait { frame: String },
    /// Inside a collective of `torch.distributed` (`distributed_c10d.py`, DDP's constructor in
    /// `torch/distributed/utils.py`), or of NCCL itself (a call of `NCCL_CALLS`, the
    /// communicator's creation).
    Collective { op: String, frame: String },
    /// A host–device sync that shows as a frame: `torch.cuda.synchronize`, an event or stream
    /// `synchronize`, or native frames (`--native`) of `cudaStreamSynchronize`,
    /// `cudaDeviceSynchronize`, `_local_scalar_dense` (`.item()`).
    HostSync { frame: String },
    /// Inside the driver's host-to-device copy (`cuMemcpyHtoD`, `cuMemcpyHtoDAsync`: a
    /// `--native` frame). A copy from pinned memory is queued and returns at once; from pageable
    /// memory the driver first stages the data into a pinned buffer on the calling thread (CUDA
    /// Runtime API, "API synchronization behavior": "If pageable memory must first be staged to
    /// pinned memory, the driver may synchronize with the stream and stage the copy into pinned
    /// memory"), which is where a dump finds the thread.
    HostToDeviceCopy { frame: String },
    /// In backward or the optimizer.
    BackwardOptimizer,
    /// Anything else (forward, the training script's own lines: a `.item()` there is a C call
    /// without a frame of its own, so one dump without `--native` cannot tell).
    Other,
}

/// Collectives of `torch.distributed.distributed_c10d` (PyTorch 1.x–2.x public names).
const COLLECTIVES: &[&str] = &[
    "all_reduce",
    "all_reduce_coalesced",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_gather_coalesced",
    "_all_gather_base",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "broadcast",
    "broadcast_object_list",
    "reduce",
    "gather",
    "gather_object",
    "scatter",
    "scatter_object_list",
    "barrier",
    "monitored_barrier",
    "send",
    "recv",
    "batch_isend_irecv",
];

/// Collectives DistributedDataParallel's constructor issues from `torch/distributed/utils.py`
/// (PyTorch 2.x): `_verify_param_shape_across_processes` calls c10d's
/// `verify_params_across_processes` (`torch/csrc/distributed/c10d/reducer.cpp`: "Allgather and
/// verify parameter size", then waits on it), and `_sync_module_states` broadcasts rank 0's
/// parameters and buffers (`_sync_params_and_buffers` → `_broadcast_coalesced`). A thread there
/// is in the job's first collectives, which also create its communicator: every rank must come.
const DDP_INIT_COLLECTIVES: &[&str] = &[
    "_verify_param_shape_across_processes",
    "_sync_module_states",
    "_sync_params_and_buffers",
    "_broadcast_coalesced",
];

/// NCCL calls every rank of a communicator makes together (NCCL's `nccl.h`, 2.18–2.29): the
/// collectives, point-to-point send/receive, communicator creation (`ncclCommInitRank*`,
/// `ncclCommSplit`: a bootstrap exchange with every rank), the end of a group (`ncclGroupEnd`,
/// which launches the grouped calls and completes a grouped creation), and symmetric-memory
/// window registration (`ncclCommWindowRegister`/`Deregister`: "unconditionally collective",
/// `src/dev_runtime.cc` of 2.29.7 runs bootstrap all-gathers and barriers without a timeout, as
/// pytorch/pytorch#192112 reads it). A dump shows them as frames named after the call: native
/// frames under `--native` (`ncclGroupEnd (group.cc:95)`, `ncclCommInitRank (libnccl.so.2)`), or
/// the methods of the ctypes binding vLLM and SGLang share, which keep NCCL's names
/// (`NCCLLibrary.ncclCommWindowRegister`, vllm `vllm/distributed/device_communicators/
/// pynccl_wrapper.py`; `ncclCommWindowRegister (pynccl_wrapper.py:540)` in SGLang's copy).
const NCCL_CALLS: &[&str] = &[
    "ncclAllReduce",
    "ncclAllGather",
    "ncclReduceScatter",
    "ncclBroadcast",
    "ncclBcast",
    "ncclReduce",
    "ncclSend",
    "ncclRecv",
    "ncclGroupEnd",
    "ncclCommInitRank",
    "ncclCommInitRankConfig",
    "ncclCommInitAll",
    "ncclCommSplit",
    "ncclCommWindowRegister",
    "ncclCommWindowDeregister",
    // inside a group's launch: `ncclGroupEnd` → `ncclGroupEndInternal` → `groupLaunch` →
    // `doLaunches` → `ncclLaunchKernel` (src/group.cc, src/enqueue.cc of 2.18.1 and of
    // 5067397c, nccl4py-v0.3.1), which launches the kernel of the grouped collectives and
    // point-to-point calls; every collective call (`ncclEnqueueCheck`) ends its implicit group
    // there too. A gdb backtrace cut above `ncclGroupEnd` still shows it.
    "ncclLaunchKernel",
];

/// oneCCL's collectives (see [`oneccl_collective`]), without their `ccl_` prefix.
const ONECCL_COLLECTIVES: &[&str] = &[
    "allgather",
    "allgatherv",
    "allreduce",
    "alltoall",
    "alltoallv",
    "barrier",
    "broadcast",
    "reduce",
    "reduce_scatter",
    "send",
    "recv",
];

/// ProcessGroupNCCL creating the communicator on a collective's or a send/receive's first use
/// of a device, which waits for every rank's NCCL bootstrap (a `--native` or gdb frame): the op
/// is named after the method. `c10d::ProcessGroupNCCL::getNCCLComm` created it up to PyTorch
/// 2.2; later `torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp` (pytorch/pytorch, read in the
/// code corpus's copies of 2.5–2.9) only looks the communicator up there, and `collective()` and
/// `pointToPoint()` call `initNCCLComm(key, device, opType, p2pRank, …)` when it is missing,
/// which broadcasts the unique id through the store and calls `NCCLComm::create` →
/// `ncclCommInitRankConfig` (NVIDIA/Megatron-LM#1679's cuda-gdb backtrace of a hung rank:
/// `pncclCommInitRankConfig` ← `c10d::NCCLComm::create` ← `c10d::ProcessGroupNCCL::initNCCLComm`
/// ← `c10d::ProcessGroupNCCL::recv`).
const NATIVE_COMM_INIT: &[&str] = &[
    "c10d::ProcessGroupNCCL::getNCCLComm",
    "c10d::ProcessGroupNCCL::initNCCLComm",
];

/// An NCCL call as a native frame may name it: NCCL builds every public function with
/// `NCCL_API(ret, func, args)`, which under `PROFAPI` (on by default: `makefiles/common.mk`,
/// `PROFAPI ?= 1` → `-DPROFAPI`) defines the code as `p##func` and `func` as a weak alias of it
/// (`src/include/core.h`, NVIDIA/nccl 5067397c; the same since 2.4), so a backtrace through a
/// libnccl without debug symbols names the strong symbol, `pncclCommInitRankConfig` for
/// `ncclCommInitRankConfig`. Only a frame without a Python line (a C symbol) is renamed.
fn nccl_call_name(f: &Frame) -> &str {
    let n = py_name(f);
    match n.strip_prefix('p') {
        Some(rest)
            if f.line.is_none() && rest.starts_with("nccl") && NCCL_CALLS.contains(&rest) =>
        {
            rest
        }
        _ => n,
    }
}

const NATIVE_SYNC: &[&str] = &[
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaEventSynchronize",
    "cuStreamSynchronize",
    "cuCtxSynchronize",
    "cuEventSynchronize",
    "_local_scalar_dense",
    // a device-to-host copy (`.cpu()`, `.item()`, `.tolist()`): the host waits for the data
    // (into pageable memory the copy is synchronous, "API synchronization behavior")
    "cuMemcpyDtoH",
];

/// The driver's host-to-device copies (`cuMemcpyHtoD_v2`, `cuMemcpyHtoDAsync_v2`; CUDA Driver
/// API, "Memory Management").
const NATIVE_H2D: &[&str] = &["cuMemcpyHtoD"];

/// The name a Python frame is known by: `co_name`, the last part of the `co_qualname` py-spy
/// 0.4.3+ prints for a Python 3.11+ target (`Event.synchronize` → `synchronize`,
/// `main.<locals>.step` → `step`; benfred/py-spy#825). A C/C++ frame (no line, or a `::`
/// qualified symbol) keeps its whole name.
pub fn py_name(f: &Frame) -> &str {
    let n = f.function.as_str();
    if f.line.is_none() || n.contains("::") {
        return n;
    }
    n.rsplit('.').next().unwrap_or(n)
}

fn at(f: &Frame) -> String {
    match f.line {
        Some(n) => format!("{} ({}:{n})", f.function, f.file),
        None => format!("{} ({})", f.function, f.file),
    }
}

/// `c10d::ProcessGroupGloo::RecvWork::wait`, `c10d::ProcessGroupNCCL::WorkNCCL::wait`,
/// `c10d::Work::wait` (a `--native` frame, no line): the op a work waits for, as far as its class
/// names it (`recv`, `send`; else `wait`).
fn native_work_wait(f: &Frame) -> Option<&'static str> {
    let func = f.function.as_str();
    if f.line.is_some() || !func.starts_with("c10d::") || !func.ends_with("::wait") {
        return None;
    }
    let class = func.trim_end_matches("::wait").rsplit("::").next()?;
    if !class.ends_with("Work") && class != "WorkNCCL" {
        return None;
    }
    Some(match class {
        "RecvWork" | "RecvAnysourceWork" => "recv",
        "SendWork" => "send",
        _ => "wait",
    })
}

/// What a thread is doing, from its frames. A collective anywhere on the stack comes first: the
/// CUDA wait a collective's own code makes beneath it is the collective's, not a host sync of the
/// step (PyTorch's `ProcessGroupNCCL::WorkNCCL::synchronizeInternal`, 1.x–2.x, blocks a
/// barrier's caller in `cudaDeviceSynchronize` — "If we use the work to do barrier, we should
/// block here" — so `dist.barrier()` on a rank whose peers never come is found in it).
pub fn activity(t: &Thread) -> Activity {
    if let Some(c) = t.frames.iter().find_map(collective_at) {
        return c;
    }
    if let Some(c) = pynccl_warmup(t) {
        return c;
    }
    for f in &t.frames {
        let name = py_name(f);
        let py_sync = name == "synchronize"
            && (f.file.contains("torch/cuda/") || f.file.ends_with("torch/cuda/__init__.py"));
        let native_sync = f.line.is_none() && NATIVE_SYNC.iter().any(|n| f.function.contains(n));
        if py_sync || native_sync {
            return Activity::HostSync { frame: at(f) };
        }
        if f.line.is_none() && NATIVE_H2D.iter().any(|n| f.function.starts_with(n)) {
            return Activity::HostToDeviceCopy { frame: at(f) };
        }
    }
    activity_outside_calls(t)
}

/// A frame inside a collective: a `torch.distributed` one, DDP's constructor's, NCCL's or
/// oneCCL's own call, or a c10d work's wait.
fn collective_at(f: &Frame) -> Option<Activity> {
    let name = py_name(f);
    if f.file.ends_with("distributed_c10d.py") && COLLECTIVES.contains(&name) {
        return Some(Activity::Collective {
            op: name.to_string(),
            frame: at(f),
        });
    }
    let call = nccl_call_name(f);
    if f.file.ends_with("torch/distributed/utils.py") && DDP_INIT_COLLECTIVES.contains(&name)
        || NCCL_CALLS.contains(&call)
        || f.line.is_none() && NATIVE_COMM_INIT.contains(&f.function.as_str())
    {
        let op = if NCCL_CALLS.contains(&call) {
            call
        } else {
            name
        };
        return Some(Activity::Collective {
            op: op.rsplit("::").next().unwrap_or(op).to_string(),
            frame: at(f),
        });
    }
    if let Some(op) = native_work_wait(f).or_else(|| oneccl_collective(f)) {
        return Some(Activity::Collective {
            op: op.to_string(),
            frame: at(f),
        });
    }
    if let Some(op) = nccl_device_code(f) {
        return Some(Activity::Collective { op, frame: at(f) });
    }
    if let Some(op) = trtllm_plugin_collective(f) {
        return Some(Activity::Collective {
            op: op.to_string(),
            frame: at(f),
        });
    }
    if let Some(op) = serving_collective(f) {
        return Some(Activity::Collective {
            op: op.to_string(),
            frame: at(f),
        });
    }
    None
}

/// The warm-up all-reduce of vLLM's and SGLang's `PyNcclCommunicator`: its `__init__`
/// (`distributed/device_communicators/pynccl.py`; sgl-project/sglang 06c48ca8, the stored copy
/// read by the search tool, and vLLM's of which it is a fork) creates the communicator with
/// `ncclCommInitRank`, then, under "# A small all_reduce for warmup.", runs `self.all_reduce(data)`
/// on a one-element tensor and `self.stream.synchronize()` (vLLM: `stream.synchronize()`). The
/// all-reduce only enqueues `ncclAllReduce` and returns; the stream's synchronize then waits for
/// it, and with it for every rank of the group, so a thread in a `torch/cuda/` `synchronize`
/// called directly by `__init__` of `pynccl.py` is in that collective, not in a host sync of a
/// step. py-spy prints the file as short as the target's `sys.path` allows (`pynccl.py`,
/// `sglang/srt/distributed/device_communicators/pynccl.py`), so the name's end is matched.
fn pynccl_warmup(t: &Thread) -> Option<Activity> {
    t.frames.windows(2).find_map(|w| {
        let (sync, caller) = (&w[0], &w[1]);
        let file = caller.file.replace('\\', "/");
        (py_name(sync) == "synchronize"
            && sync.file.contains("torch/cuda/")
            && py_name(caller) == "__init__"
            && caller.line.is_some()
            && (file == "pynccl.py" || file.ends_with("/pynccl.py")))
        .then(|| Activity::Collective {
            op: "all_reduce".to_string(),
            frame: at(caller),
        })
    })
}

/// TensorRT-LLM's NCCL plugins (NVIDIA/TensorRT-LLM `cpp/tensorrt_llm/plugins/ncclPlugin/`,
/// read at 14e801da: `AllgatherPlugin::enqueue` calls `ncclAllGather(…, stream)`; the sibling
/// `allreducePlugin.cpp`, `reduceScatterPlugin.cpp`, `sendPlugin.cpp` and `recvPlugin.cpp`
/// enqueue `ncclAllReduce` (or the custom all-reduce kernel), `ncclReduceScatter`, `ncclSend`
/// and `ncclRecv`): TensorRT runs a plugin layer by calling its `enqueue` on the engine's
/// stream, so a native frame `tensorrt_llm::plugins::<Op>Plugin::enqueue` (gdb, `--native`) is
/// the engine inside that collective → the op as `torch.distributed` names it.
fn trtllm_plugin_collective(f: &Frame) -> Option<&'static str> {
    // a C++ symbol, with or without debug info (`at allgatherPlugin.cpp:98` or `from lib….so`)
    let class = f
        .function
        .strip_prefix("tensorrt_llm::plugins::")?
        .strip_suffix("::enqueue")?;
    Some(match class {
        "AllreducePlugin" => "all_reduce",
        "AllgatherPlugin" => "all_gather",
        "ReduceScatterPlugin" => "reduce_scatter",
        "SendPlugin" => "send",
        "RecvPlugin" => "recv",
        _ => return None,
    })
}

/// vLLM's and SGLang's own collectives, which do not pass through `distributed_c10d.py`: a
/// `GroupCoordinator` of `distributed/parallel_state.py` (vllm-project/vllm, the stored copy read
/// by the search tool, id 16784586; SGLang's `python/sglang/srt/distributed/parallel_state.py`
/// is its fork) hands `all_reduce`, `all_gather(v)`, `reduce_scatter(v)` and `gather` (and their
/// `_…_out_place` halves) to a device communicator under `distributed/device_communicators/`
/// (`cuda_communicator.py`, `pynccl.py`, `custom_all_reduce.py`, `symm_mem.py`,
/// `quick_all_reduce.py`), whose methods of the same names run NCCL or a peer-memory kernel
/// that waits for every rank. Not `shm_broadcast.py`'s `MessageQueue` (`dequeue`,
/// `acquire_read`, `broadcast_object` through it): an idle worker waits there for the
/// scheduler's next request (h41's vllm#50835), which is no collective. → the op as
/// `torch.distributed` names it.
fn serving_collective(f: &Frame) -> Option<&'static str> {
    let file = f.file.replace('\\', "/");
    let serving = file.contains("vllm/distributed/") || file.contains("sglang/srt/distributed/");
    if !serving
        || f.line.is_none()
        || !(file.ends_with("distributed/parallel_state.py")
            || file.contains("distributed/device_communicators/")
                && !file.ends_with("shm_broadcast.py"))
    {
        return None;
    }
    let name = py_name(f).trim_start_matches('_');
    let name = name.strip_suffix("_out_place").unwrap_or(name);
    Some(match name {
        "all_reduce" | "custom_all_reduce" | "quick_all_reduce" => "all_reduce",
        "all_gather" | "all_gatherv" => "all_gather",
        "reduce_scatter" | "reduce_scatterv" => "reduce_scatter",
        "gather" => "gather",
        _ => return None,
    })
}

/// A GPU frame of NCCL's own kernel, as cuda-gdb shows a device's work
/// ([`super::gdb_backtrace`]'s `info cuda kernels` and `info cuda threads`) → the NCCL call it
/// runs (`ncclAllReduce`, …; `ncclKernel` where only its source shows). NVIDIA/nccl names its
/// kernels `NCCL_KERN_NAME(coll, op, dtype)` = `coll##Kernel_##op##_##dtype` in 2.3–2.7
/// (`ncclReduceRingLLKernel_sum_f64`: the collective, then its algorithm and protocol),
/// `ncclKernel_##func##_##algo##_##proto##_##redop##_##type` in 2.8–2.18
/// (`src/collectives/device/common.h`), and `ncclDevKernel_<Func>_…` from 2.19
/// (`src/device/generate.py`, `ncclDevKernel_AllReduce_Sum_f32_RING_LL`); the device code of
/// those releases lives under `src/collectives/device/` and then `src/device/`
/// (`prims_ll.h`, `prims_simple.h`, `all_reduce.h`, …), the files cuda-gdb's thread table names.
fn nccl_device_code(f: &Frame) -> Option<String> {
    // a kernel's name (cuda-gdb's invocation without its arguments)
    let name = f.function.as_str();
    let func = if let Some(r) = name
        .strip_prefix("ncclDevKernel_")
        .or_else(|| name.strip_prefix("ncclKernel_"))
    {
        r.split('_').next().unwrap_or("")
    } else if let Some(coll) = name
        .strip_prefix("nccl")
        .and_then(|r| r.split_once("Kernel_"))
        .map(|(c, _)| c)
    {
        // 2.3–2.7: the collective's name with its algorithm and protocol appended
        let mut c = coll;
        loop {
            let before = c;
            for suffix in ["LL128", "LL", "Simple", "Ring", "Tree", "CollNet", "NVLS"] {
                c = c.strip_suffix(suffix).unwrap_or(c);
            }
            if c == before {
                break;
            }
        }
        c
    } else {
        ""
    };
    if !func.is_empty() && func.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some(format!("nccl{func}"));
    }
    // a device thread's source file in NCCL's tree
    let file = f.file.replace('\\', "/");
    (f.function.is_empty()
        && (file.contains("/collectives/device/")
            || file.contains("nccl/src/device/")
            || file.starts_with("src/device/")))
    .then(|| "ncclKernel".to_string())
}

/// oneCCL's collectives (uxlfoundation/oneCCL `src/coll/coll.cpp`, 2021.x: `ccl_allgather`,
/// `ccl_allreduce`, … each creating its schedule in `ccl_<op>_impl` → `ccl_coll_create`), the
/// native frames of PyTorch's XCCL backend on Intel GPUs and of oneCCL's own users: the op
/// without its `ccl_` prefix.
fn oneccl_collective(f: &Frame) -> Option<&'static str> {
    if f.line.is_some() {
        return None;
    }
    let name = f.function.strip_suffix("_impl").unwrap_or(&f.function);
    ONECCL_COLLECTIVES
        .iter()
        .find(|c| name.strip_prefix("ccl_") == Some(**c))
        .copied()
}

/// The rest of [`activity`]: the DataLoader, backward and the optimizer, by their Python frames.
fn activity_outside_calls(t: &Thread) -> Activity {
    if let Some(f) = t.frames.iter().find(|f| {
        f.file.ends_with("data/dataloader.py")
            && ["_next_data", "_get_data", "_try_get_data", "__next__"].contains(&py_name(f))
    }) {
        // in the loader: waiting for workers, or fetching in-process (num_workers=0, whose
        // `_next_data` calls the fetcher directly: also time the GPU waits for data)
        return Activity::DataloaderWait { frame: at(f) };
    }
    if t.frames.iter().any(|f| {
        f.function.contains("backward")
            || f.file.contains("torch/optim")
            || py_name(f) == "zero_grad"
    }) {
        return Activity::BackwardOptimizer;
    }
    Activity::Other
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct PyspyDumpKind;

impl super::EvidenceKind for PyspyDumpKind {
    fn name(&self) -> &'static str {
        "pyspy-dump"
    }
    fn doc(&self) -> &'static str {
        "`py-spy dump` output: each thread's Python stack in a running process (one moment)"
    }
    fn example(&self) -> &'static str {
        "py-spy dump --pid PID > dump.txt"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "processes",
                "per dump: pid, cmdline, python_version, python_exe, parent_pid, parent_cmdline, threads (id, status, name, frames: function, file, line, arguments, locals)",
            ),
            (
                "watchdog_timeout",
                "SGLang's watchdog that dumped its process after no progress: name, timeout_s, soft",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["pyspy.dump"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_pyspy_dump(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let d = parse_pyspy_dump(text);
        if d.processes.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no py-spy dump (`Process N:` or `Thread N (idle):`) in the text",
            ));
        }
        super::to_value(&d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use crate::test_corpus;

    #[test]
    fn a_second_main_thread_is_the_next_process() {
        // github.com/bigscience-workshop/bigscience tr11-176B-ml/chronicles-prequel.md: one
        // node's ranks grouped by stack, the `Process` headers dropped
        let d = parse_pyspy_dump(&fixture("pyspy/ranks_split_bloom_prequel.txt"));
        assert_eq!(d.processes.len(), 2);
        assert_eq!(d.processes[0].identity(), "835990");
        assert_eq!(d.processes[1].identity(), "835995");
        assert_eq!(d.processes[0].program(), d.processes[1].program());
        assert_eq!(
            activity(d.processes[1].main_thread().unwrap()),
            Activity::Collective {
                op: "broadcast".into(),
                frame: "broadcast (torch/distributed/distributed_c10d.py:1191)".into()
            }
        );
        // the other threads of a process stay in it (github.com/huggingface/accelerate/issues/3104)
        let d = parse_pyspy_dump(&fixture("pyspy/allgather_hang_accelerate.txt"));
        assert_eq!(d.processes.len(), 1);
        assert!(d.processes[0].threads.len() > 1);
    }

    #[test]
    fn ranks_of_one_job_differ_only_in_numbers() {
        let p = |c: &str| Process {
            pid: 1,
            cmdline: c.into(),
            ..Process::default()
        };
        // deepspeed's launcher appends the rank; SGLang titles its schedulers by rank
        assert_eq!(
            p("python -u train.py --local_rank=0 --deepspeed ds.json").program(),
            p("python -u train.py --local_rank=7 --deepspeed ds.json").program()
        );
        assert_eq!(
            p("sglang::scheduler_DP1_TP3").program(),
            p("sglang::scheduler_DP0_TP0").program()
        );
        assert_ne!(
            p("sglang::scheduler_TP0").program(),
            p("sglang::detokenizer").program()
        );
    }

    #[test]
    fn collectives_by_the_nccl_operation_they_issue() {
        assert_eq!(
            collective_family("all_gather_into_tensor"),
            Some("ALLGATHER")
        );
        assert_eq!(collective_family("_all_gather_base"), Some("ALLGATHER"));
        assert_eq!(
            collective_family("reduce_scatter_tensor"),
            Some("REDUCE_SCATTER")
        );
        assert_eq!(
            collective_family("broadcast_object_list"),
            Some("BROADCAST")
        );
        // a send and its receive are different calls by design
        assert_eq!(collective_family("recv"), None);
        assert_eq!(collective_family("batch_isend_irecv"), None);
        assert_eq!(collective_family("wait"), None);
    }

    #[test]
    fn headerless_stacks_in_a_list_item_are_read_apart() {
        // github.com/addison-nm/BioM3-dev docs/bug_reports/2026-04-27_ddp_xccl_phantom_hang/
        // postmortem.md: two stacks in a Markdown list, two spaces in, prose around them
        let t = "- **1–4 \"straggler\" ranks** with their MainThread parked. py-spy MainThread stack:\n  _engine_run_backward (torch/autograd/graph.py:865)\n  backward (torch/autograd/__init__.py:364)\n  backward (torch/_tensor.py:630)\n  These ranks were stuck *inside* `loss.backward()`.\n\n- **8–11 \"waiter\" ranks** at:\n  all_reduce (torch/distributed/distributed_c10d.py:3007)\n  _sync_ddp (lightning/fabric/utilities/distributed.py:231)\n  These had completed backward.\n";
        assert!(looks_like_pyspy_dump(t));
        let d = parse_pyspy_dump(t);
        let threads = &d.processes[0].threads;
        assert_eq!(threads.len(), 2);
        assert_eq!(threads[0].frames.len(), 3);
        assert_eq!(threads[1].frames[0].function, "all_reduce");
        // beside prose, two frame lines at different indents are no stack
        assert!(!looks_like_pyspy_dump(
            "It ends like this:\n  main_loop (ray/_private/worker.py:935)\n      <module> (ray/_private/workers/default_worker.py:297)\n"
        ));
    }

    #[test]
    fn a_qualified_name_of_py_spy_0_4_3_is_matched_by_its_last_part() {
        // py-spy 0.4.3 on Python 3.12 prints `co_qualname` (benfred/py-spy#825): the corpus's
        // H200 captures (bench/capture_h200.sh, h200_pyspy_starved_1, h200_pyspy_healthy_1)
        let starved = "Thread 985 (active): \"MainThread\"\n    ImageSource.__getitem__ (imagedata.py:73)\n    _MapDatasetFetcher.fetch (torch/utils/data/_utils/fetch.py:54)\n    _SingleProcessDataLoaderIter._next_data (torch/utils/data/dataloader.py:801)\n    _BaseDataLoaderIter.__next__ (torch/utils/data/dataloader.py:741)\n    main.<locals>.step (train.py:398)\n";
        let d = parse_pyspy_dump(starved);
        let t = &d.processes[0].threads[0];
        assert_eq!(py_name(&t.frames[2]), "_next_data");
        assert_eq!(py_name(&t.frames[4]), "step");
        assert_eq!(
            activity(t),
            Activity::DataloaderWait {
                frame:
                    "_SingleProcessDataLoaderIter._next_data (torch/utils/data/dataloader.py:801)"
                        .into()
            }
        );
        // a healthy moment: the forward pass, qualified names and all
        let healthy = "Thread 1101 (active): \"MainThread\"\n    Conv2d._conv_forward (torch/nn/modules/conv.py:548)\n    Conv2d.forward (torch/nn/modules/conv.py:553)\n    Module._call_impl (torch/nn/modules/module.py:1790)\n    main.<locals>.step (train.py:402)\n";
        let d = parse_pyspy_dump(healthy);
        assert_eq!(activity(&d.processes[0].threads[0]), Activity::Other);
        // `Event.synchronize` of torch/cuda/streams.py is a host sync; a C++ frame keeps its name
        let f = Frame {
            function: "Event.synchronize".into(),
            file: "torch/cuda/streams.py".into(),
            line: Some(224),
            ..Frame::default()
        };
        assert!(matches!(
            activity(&Thread {
                frames: vec![f],
                ..Thread::default()
            }),
            Activity::HostSync { .. }
        ));
        let native = Frame {
            function: "c10d::ProcessGroupNCCL::WorkNCCL::wait".into(),
            file: "libtorch_cuda.so".into(),
            ..Frame::default()
        };
        assert_eq!(py_name(&native), "c10d::ProcessGroupNCCL::WorkNCCL::wait");
    }

    #[test]
    fn frames_pasted_without_their_thread_header_are_a_dump_of_an_unknown_thread() {
        // github.com/verl-project/verl/issues/340: "all of them appear like this"
        let t = "    main_loop (ray/_private/worker.py:935)\n    <module> (ray/_private/workers/default_worker.py:297)\n";
        assert!(looks_like_pyspy_dump(t));
        let d = parse_pyspy_dump(t);
        assert_eq!(d.processes.len(), 1);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.frames.len(), 2);
        assert_eq!(th.frames[0].function, "main_loop");
        // an unknown thread is not the main thread of a pid it never named
        assert!(d.processes[0].main_thread().is_none());
        // github.com/LMCache/LMCache/issues/4759: a paste that starts with the cut tail of a
        // thread keeps it apart from the next thread
        let t = "    <module> (<string>:1)\n    run (threading.py:1012)\nThread 765 (idle): \"MultiprocWorkerMonitor\"\n    select (selectors.py:415)\n";
        let d = parse_pyspy_dump(t);
        assert_eq!(d.processes[0].threads.len(), 2);
        assert_eq!(d.processes[0].threads[1].frames[0].function, "select");
        // one frame alone, a traceback's `File "x.py", line 3`, a sentence in parentheses: no
        assert!(!looks_like_pyspy_dump(
            "    main_loop (ray/_private/worker.py:935)\n"
        ));
        // as paste unwrapping leaves it: the common indent removed
        let t = "main_loop (ray/_private/worker.py:935)\n<module> (ray/_private/workers/default_worker.py:297)\n";
        assert!(looks_like_pyspy_dump(t));
        assert_eq!(parse_pyspy_dump(t).processes[0].threads[0].frames.len(), 2);
        // two of them beside prose are a stack too: each rank's innermost frames under a line
        // naming the rank (github.com/cliangyu/ttcc-rl docs/08_session_journal_20260522.md);
        // one alone, or prose ending in a parenthesis, is not
        let t = "**Rank 1 (waiting):**\nbarrier (torch/distributed/distributed_c10d.py:5030)\nsafe_ddp_context (swift/utils/torch_utils.py:66)\n\n**Rank 0 (orchestrating):**\n_recv (multiprocess/connection.py:398)\nmap (datasets/arrow_dataset.py:3623)\n";
        assert!(looks_like_pyspy_dump(t));
        let d = parse_pyspy_dump(t);
        assert_eq!(d.processes[0].threads.len(), 2);
        assert_eq!(
            activity(&d.processes[0].threads[0]),
            Activity::Collective {
                op: "barrier".into(),
                frame: "barrier (torch/distributed/distributed_c10d.py:5030)".into()
            }
        );
        assert_eq!(d.processes[0].threads[1].frames[0].function, "_recv");
        assert!(!looks_like_pyspy_dump(
            "It hangs here:\nmain_loop (ray/_private/worker.py:935)\nsee the log (train.log:12)\n"
        ));
        assert!(!looks_like_pyspy_dump(
            "It hangs here:\nmain_loop (ray/_private/worker.py:935)\nthen nothing.\n"
        ));
        assert!(!looks_like_pyspy_dump(
            "  File \"train.py\", line 3, in <module>\n  File \"a.py\", line 4, in f\n"
        ));
        assert!(!looks_like_pyspy_dump(
            "    see the notes (docs/setup.md:12)\n    and the rest (README.rst)\n"
        ));
    }

    #[test]
    fn a_worker_process_waiting_for_indices_is_not_the_training_loop() {
        // github.com/lhotse-speech/lhotse/issues/666: a DataLoader worker's own dump
        let t = fixture("pyspy/worker_idle_lhotse.txt");
        assert!(looks_like_pyspy_dump(&t));
        let d = parse_pyspy_dump(&t);
        let p = &d.processes[0];
        assert_eq!(p.pid, 365617);
        assert!(p.cmdline.contains("spawn_main"));
        assert_eq!(p.python_version.as_deref(), Some("3.8.0"));
        assert_eq!(
            p.python_exe.as_deref(),
            Some("/ceph-fj/fangjun/software/py38/bin/python3.8")
        );
        assert!(p.is_worker());
        let m = p.main_thread().unwrap();
        assert_eq!(m.id, "365617");
        assert_eq!(m.status.as_deref(), Some("idle"));
        assert_eq!(m.idle(), Some(true));
        assert_eq!(m.frames[0].function, "select");
        assert_eq!(m.frames[0].file, "selectors.py");
        assert_eq!(m.frames[0].line, Some(415));
        assert_eq!(m.frames.last().unwrap().file, "<string>");
        assert_eq!(p.threads[1].name.as_deref(), Some("QueueFeederThread"));
    }

    #[test]
    fn a_dump_whose_thread_ids_the_poster_blanked() {
        // github.com/RolnickLab/ami-data-companion/issues/140: the parent of a DataLoader
        // deadlocked for ~23 h, pasted with `Thread (idle): "MainThread"` (no id), frames
        // elided with `...`
        let t = "Thread (idle): \"MainThread\"\n    wait (threading.py:359)\n    get (queue.py:180)\n    _try_get_data (torch/utils/data/dataloader.py:1310)\n    _get_data (torch/utils/data/dataloader.py:1473)\n    _next_data (torch/utils/data/dataloader.py:1524)\n    __next__ (torch/utils/data/dataloader.py:741)\n    _preload (trapdata/antenna/datasets.py:455)\n    ...\n";
        assert!(looks_like_pyspy_dump(t));
        let d = parse_pyspy_dump(t);
        let m = d.processes[0].main_thread().unwrap();
        assert_eq!(m.id, "");
        assert_eq!(m.status.as_deref(), Some("idle"));
        assert_eq!(m.frames.len(), 7);
        assert!(matches!(activity(m), Activity::DataloaderWait { .. }));
        // healthy, the same way: a DataLoader worker's dump with its ids (lhotse#666) keeps them
        let w = parse_pyspy_dump(&fixture("pyspy/worker_idle_lhotse.txt"));
        assert_eq!(w.processes[0].main_thread().unwrap().id, "365617");
        // not py-spy: faulthandler's header (pytorch/torchtitan#810) has no status word, and a
        // parenthesis that is not one of py-spy's is no header without an id either
        assert!(
            thread_header("Thread 0x00007fdcbce00640 (most recent call first):")
                .is_some_and(|(_, s, _)| !s.as_deref().is_some_and(|s| STATUS_WORDS.contains(&s)))
        );
        assert_eq!(thread_header("Thread (most recent call first):"), None);
    }

    #[test]
    fn a_pynccl_communicators_warm_up_synchronize_is_its_all_reduce() {
        // devopsrustem/slurmv4 3/14.sh: SGLang 0.5.9 over two nodes, every scheduler of node
        // 0007 in the stream synchronize under PyNcclCommunicator.__init__'s warm-up all_reduce
        let t = test_corpus("h140_pyspy_slurmv4_sglang_two_nodes_pynccl_warmup_synchronize.txt");
        assert!(looks_like_pyspy_dump(&t));
        let d = parse_pyspy_dump(&t);
        assert_eq!(d.processes.len(), 8);
        for p in &d.processes {
            let m = p.main_thread().unwrap();
            match activity(m) {
                Activity::Collective { op, frame } => {
                    assert_eq!(op, "all_reduce");
                    assert_eq!(frame, "__init__ (pynccl.py:121)");
                }
                other => panic!("{other:?}"),
            }
        }
        // the full path py-spy prints when sys.path does not shorten it
        let full = "Thread 7 (active): \"MainThread\"\n    synchronize (torch/cuda/streams.py:102)\n    __init__ (sglang/srt/distributed/device_communicators/pynccl.py:121)\n";
        let th = &parse_pyspy_dump(full).processes[0].threads[0];
        assert!(matches!(activity(th), Activity::Collective { ref op, .. } if op == "all_reduce"));
        // neighbours not claimed: a step's own synchronize, a synchronize called by another
        // `__init__`, and pynccl's __init__ without a synchronize under it
        for (text, want) in [
            (
                "Thread 7 (active): \"MainThread\"\n    synchronize (torch/cuda/__init__.py:801)\n    train_step (train.py:40)\n",
                "host_sync",
            ),
            (
                "Thread 7 (active): \"MainThread\"\n    synchronize (torch/cuda/streams.py:102)\n    __init__ (my_pynccl_cache.py:12)\n",
                "host_sync",
            ),
            (
                "Thread 7 (active): \"MainThread\"\n    __init__ (pynccl.py:104)\n    __init__ (distributed/parallel_state.py:338)\n",
                "other",
            ),
        ] {
            let th = &parse_pyspy_dump(text).processes[0].threads[0];
            let got = match activity(th) {
                Activity::HostSync { .. } => "host_sync",
                Activity::Other => "other",
                other => panic!("{text}: {other:?}"),
            };
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn a_thread_stuck_in_an_all_gather() {
        // github.com/huggingface/accelerate/issues/3104: main thread in backward, a thread in
        // all_gather_into_tensor; unnamed threads without frames
        let t = fixture("pyspy/allgather_hang_accelerate.txt");
        assert!(looks_like_pyspy_dump(&t));
        let d = parse_pyspy_dump(&t);
        let p = &d.processes[0];
        let m = p.main_thread().unwrap();
        assert_eq!(m.id, "42");
        assert_eq!(activity(m), Activity::BackwardOptimizer);
        let unnamed = p.threads.iter().find(|t| t.id == "4076").unwrap();
        assert_eq!(unnamed.name, None);
        assert!(unnamed.frames.is_empty());
        let c = p.threads.iter().find(|t| t.id == "4079").unwrap();
        assert_eq!(c.status.as_deref(), Some("active"));
        match activity(c) {
            Activity::Collective { op, frame } => {
                assert_eq!(op, "all_gather_into_tensor");
                assert_eq!(
                    frame,
                    "all_gather_into_tensor (torch/distributed/distributed_c10d.py:2709)"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_watchdog_dump_of_a_gloo_receive() {
        // sgl-project/sglang#17941: SGLang's watchdog gave up after 300 s and dumped the PP2
        // scheduler, whose main thread waits in a gloo receive (`--native` frames)
        let t = concat!(
            "[2026-01-29 13:12:37 PP1 TP1] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n",
            "\n",
            "[2026-01-29 13:12:37 PP2 TP1] Pyspy dump for PID 88693:\n",
            "Process 88693: sglang::scheduler_PP2_TP1\n",
            "Python v3.12.3 (/usr/bin/python3.12)\n",
            "\n",
            "Thread 88693 (idle): \"MainThread\"\n",
            "    0x7fa2d1487d71 (libc.so.6)\n",
            "    pthread_cond_timedwait (libc.so.6)\n",
            "    gloo::transport::tcp::UnboundBuffer::waitRecv (libtorch_cpu.so)\n",
            "    c10d::ProcessGroupGloo::RecvWork::wait (libtorch_cpu.so)\n",
        );
        assert!(looks_like_pyspy_dump(t));
        let d = parse_pyspy_dump(t);
        let w = d.watchdog_timeout.as_ref().unwrap();
        assert_eq!(
            (w.name.as_str(), w.timeout_s, w.soft),
            ("Scheduler", 300.0, Some(false))
        );
        let p = &d.processes[0];
        assert_eq!(p.pid, 88693);
        match activity(p.main_thread().unwrap()) {
            Activity::Collective { op, frame } => {
                assert_eq!(op, "recv");
                assert_eq!(
                    frame,
                    "c10d::ProcessGroupGloo::RecvWork::wait (libtorch_cpu.so)"
                );
            }
            other => panic!("{other:?}"),
        }
        // the older wording (scheduler mixin), and lines that only look alike
        let w = watchdog_timeout("Watchdog timeout (self.watchdog_timeout=300)").unwrap();
        assert_eq!((w.name.as_str(), w.timeout_s, w.soft), ("", 300.0, None));
        assert!(watchdog_timeout("Watchdog timeout (self.watchdog_timeout=)").is_none());
        assert!(watchdog_timeout("set --watchdog-timeout 600").is_none());
        // a dump without any watchdog (a healthy job's) has none, and its NCCL work frame
        // with a line number is Python's, not a native wait
        let d = parse_pyspy_dump(&fixture("pyspy/allgather_hang_accelerate.txt"));
        assert_eq!(d.watchdog_timeout, None);
        let f = Frame {
            function: "c10d::ProcessGroupNCCL::WorkNCCL::wait".into(),
            file: "libtorch_cuda.so".into(),
            ..Frame::default()
        };
        assert_eq!(native_work_wait(&f), Some("wait"));
        let g = Frame {
            function: "c10d::ProcessGroupNCCL::WorkNCCL::isCompleted".into(),
            file: "libtorch_cuda.so".into(),
            ..Frame::default()
        };
        assert_eq!(native_work_wait(&g), None);
    }

    #[test]
    fn headers_frames_and_locals() {
        let d = parse_pyspy_dump(
            "Process 12: python train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\nThread 0x7F768F77C740 (active+gil): \"MainThread\"\n    _try_get_data (torch/utils/data/dataloader.py:1133)\n        Arguments:\n            self: <_MultiProcessingDataLoaderIter at 0x7f>\n            timeout: 5.0\n        Locals:\n            success: False\n    cudaStreamSynchronize (libcudart.so.12)\nThread 13 (gil)\n    run (threading.py:975)\n",
        );
        let p = &d.processes[0];
        let m = &p.threads[0];
        assert_eq!(m.id, "0x7F768F77C740");
        assert_eq!(m.status.as_deref(), Some("active+gil"));
        assert_eq!(m.frames[0].arguments.len(), 2);
        assert_eq!(m.frames[0].arguments[1], ("timeout".into(), "5.0".into()));
        assert_eq!(m.frames[0].locals, vec![("success".into(), "False".into())]);
        assert_eq!(m.frames[1].line, None);
        assert_eq!(m.frames[1].file, "libcudart.so.12");
        assert!(matches!(activity(m), Activity::HostSync { .. }));
        assert_eq!(p.threads[1].status.as_deref(), Some("gil"));
        assert_eq!(p.threads[1].name, None);
        assert!(!looks_like_pyspy_dump("Thread 5 started\n"));
    }

    #[test]
    fn native_frames_show_a_host_to_device_copy_and_a_device_to_host_read() {
        // made on the H100 (tests/fixtures/evidence/README.md): the itemsync job's main thread
        // inside cuMemcpyHtoDAsync_v2 under Tensor.to, then the same job in backward
        let d = parse_pyspy_dump(&fixture("pyspy/h100_native_itemsync_h2d_copy.txt"));
        let p = &d.processes[0];
        let m = p.threads.iter().find(|t| t.is_main(p.pid)).unwrap();
        match activity(m) {
            Activity::HostToDeviceCopy { frame } => {
                assert_eq!(frame, "cuMemcpyHtoDAsync_v2 (libcuda.so.580.159.04)")
            }
            a => panic!("{a:?}"),
        }
        let d = parse_pyspy_dump(&fixture("pyspy/h100_native_itemsync_backward.txt"));
        let p = &d.processes[0];
        let m = p.threads.iter().find(|t| t.is_main(p.pid)).unwrap();
        assert_eq!(activity(m), Activity::BackwardOptimizer);
        // `.cpu()` under --native: the driver's device-to-host copy is the host waiting
        let d = parse_pyspy_dump(
            "Thread 7 (active): \"MainThread\"\n    cuMemcpyDtoHAsync_v2 (libcuda.so.1)\n    cudaMemcpyAsync (libcudart.so.12)\n    at::native::copy_kernel_cuda (libtorch_cuda.so)\n    train_step (train.py:88)\n",
        );
        assert!(matches!(
            activity(&d.processes[0].threads[0]),
            Activity::HostSync { .. }
        ));
    }

    #[test]
    fn vllm_s_and_sglang_s_own_collectives_but_not_their_message_queue() {
        // modelscope/ms-swift#8506: a GRPO run's vLLM all-reduce (symm_mem) inside a compiled
        // forward, hung at step 105
        let d = parse_pyspy_dump(&crate::test_corpus(
            "h37_pyspy_msswift8506_vllm_allreduce_stuck.txt",
        ));
        let main = &d.processes[0].threads[0];
        assert_eq!(
            activity(main),
            Activity::Collective {
                op: "all_reduce".into(),
                frame: "all_reduce (vllm/distributed/device_communicators/symm_mem.py:148)".into()
            }
        );
        // h41's vllm#50835: an idle engine core's workers wait in the message queue
        let d = parse_pyspy_dump(&crate::test_corpus(
            "h41_pyspy_vllm50835_enginecore_shm_dequeue_wait.txt",
        ));
        for t in d.processes.iter().flat_map(|p| &p.threads) {
            assert!(!matches!(activity(t), Activity::Collective { .. }), "{t:?}");
        }
        let frame = |function: &str, file: &str| Frame {
            function: function.into(),
            file: file.into(),
            line: Some(1),
            ..Frame::default()
        };
        for (func, file, op) in [
            (
                "_all_gather_out_place",
                "sglang/srt/distributed/parallel_state.py",
                Some("all_gather"),
            ),
            (
                "custom_all_reduce",
                "/usr/lib/python3/dist-packages/vllm/distributed/device_communicators/custom_all_reduce.py",
                Some("all_reduce"),
            ),
            (
                "reduce_scatterv",
                "vllm/distributed/device_communicators/pynccl.py",
                Some("reduce_scatter"),
            ),
            // neighbours: the message queue, another module's all_reduce, a helper of the group
            (
                "broadcast_object",
                "vllm/distributed/device_communicators/shm_broadcast.py",
                None,
            ),
            ("all_reduce", "megatron/core/parallel_state.py", None),
            ("graph_capture", "vllm/distributed/parallel_state.py", None),
        ] {
            assert_eq!(serving_collective(&frame(func, file)), op, "{func} {file}");
        }
    }

    #[test]
    fn collectives_that_are_not_distributed_c10d_frames() {
        // NVIDIA/nccl#1258: a 2-node DDP example stuck in its constructor, dumped twice: the
        // Python stack in DDP's parameter all-gather (`torch/distributed/utils.py`), then the
        // native one in NCCL's group end under the communicator's creation
        let d = parse_pyspy_dump(&crate::test_corpus(
            "h70_pyspy_nccl1258_ddp_verify_params_py_and_native.txt",
        ));
        let ops: Vec<String> = d
            .processes
            .iter()
            .flat_map(|p| &p.threads)
            .map(|t| match activity(t) {
                Activity::Collective { op, .. } => op,
                a => format!("{a:?}"),
            })
            .collect();
        assert_eq!(
            ops,
            ["_verify_param_shape_across_processes", "ncclGroupEnd"]
        );
        assert_eq!(
            collective_family("_verify_param_shape_across_processes"),
            Some("ALLGATHER")
        );
        // sgl-project/sglang#11208: the forward thread in SGLang's ctypes binding of NCCL's
        // symmetric window registration
        let d = parse_pyspy_dump(&crate::test_corpus(
            "h70_pyspy_sglang11208_gb200_forward_thread_comm_window_register.txt",
        ));
        let fwd = d.processes[0]
            .threads
            .iter()
            .find(|t| t.name.as_deref() == Some("Thread-2 (forward_thread_func)"))
            .unwrap();
        assert!(
            matches!(activity(fwd), Activity::Collective { ref op, ref frame } if op == "ncclCommWindowRegister" && frame == "ncclCommWindowRegister (pynccl_wrapper.py:540)")
        );
        // a --native frame of the communicator's creation, named after the method
        let t = Thread {
            frames: vec![Frame {
                function: "c10d::ProcessGroupNCCL::getNCCLComm".into(),
                file: "libtorch_cuda.so".into(),
                ..Frame::default()
            }],
            ..Thread::default()
        };
        assert!(matches!(activity(&t), Activity::Collective { ref op, .. } if op == "getNCCLComm"));
        // healthy: sgl-project/sglang#31178, an exiting scheduler's --native dump (libc and
        // CPython frames, threading._shutdown): no collective
        let d = parse_pyspy_dump(&crate::test_corpus(
            "h70_pyspy_sglang31178_exiting_scheduler_native.txt",
        ));
        assert!(
            d.processes[0]
                .threads
                .iter()
                .all(|t| !matches!(activity(t), Activity::Collective { .. }))
        );
        // a function of the same name outside torch/distributed/utils.py is not DDP's
        let other = Thread {
            frames: vec![Frame {
                function: "_broadcast_coalesced".into(),
                file: "mylib/comm.py".into(),
                line: Some(3),
                ..Frame::default()
            }],
            ..Thread::default()
        };
        assert_eq!(activity(&other), Activity::Other);
    }

    #[test]
    fn truncated_pastes_never_panic() {
        let t = fixture("pyspy/allgather_hang_accelerate.txt");
        for p in prefixes(&t, 11) {
            let d = parse_pyspy_dump(p);
            for pr in &d.processes {
                for th in &pr.threads {
                    let _ = activity(th);
                }
            }
        }
    }
}
