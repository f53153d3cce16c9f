//! Python's `faulthandler` dump of every thread's stack, read from its producer: CPython's
//! `Python/traceback.c` (`_Py_DumpTracebackThreads`, `write_thread_id`, `dump_traceback`,
//! `dump_frame`; python/cpython 01204b73, the format unchanged since 3.3) and
//! `Python/pylifecycle.c` (`fatal_error`: the `Fatal Python error:` banner). It is what
//! `faulthandler.dump_traceback()`, `dump_traceback_later()` (a hang watchdog),
//! `faulthandler.register(SIGUSR1)` and a crash (`faulthandler.enable()`, `PYTHONFAULTHANDLER`)
//! print, and what torch.distributed's test harness and launchers print for a hung rank.
//!
//! ```text
//! Fatal Python error: Aborted                           a crash only: the banner, the
//! Python runtime state: initialized                     runtime state
//!
//! Thread 0x00007ff3363ff700 (most recent call first):   each thread, newest first; the one
//!   File "…/distributed_c10d.py", line 2477 in barrier  that called (or crashed) is
//!   File "train.py", line 90 in main                    `Current thread 0x…`; frames innermost
//!                                                       first, `File "f", line N in name`
//! Current thread 0x00007ff406132180 (most recent call first):
//!   <no Python frame>                                   a thread in C code only
//! ```
//!
//! One thread's dump (`faulthandler.dump_traceback(all_threads=False)`) is headed `Stack (most
//! recent call first):`. Frames past 100 print as `  ...`, threads past 100 as `...`; an
//! unknown file, line or name as `???`.
//!
//! Logs add their own prefix before each line (torchrun's `[rank0]:`, Ray's `(Actor pid=N) `, a
//! job log's timestamp), and a terminal may wrap a long frame line: a header or a frame is found
//! where it starts in the line, and a frame line cut before its `", line N in name` is joined
//! with the next line that ends it. The dump carries no thread names or states, so no thread is
//! known as the main one: what each thread is doing is read as in a py-spy dump
//! ([`super::pyspy_dump::activity`]), and the dump is given in py-spy's shape ([`PyspyDump`]) to the
//! probe that reads both.

use super::pyspy_dump::{Frame, Process, PyspyDump, Thread};

/// `Thread 0x…` / `Current thread 0x…` / `Stack` headers: (id, current).
fn header(l: &str) -> Option<(String, bool)> {
    const TAIL: &str = " (most recent call first):";
    let l = l.trim_end();
    let head = l.strip_suffix(TAIL)?;
    if head.ends_with("Stack") {
        return Some((String::new(), true));
    }
    let at = head
        .rfind("thread 0x")
        .or_else(|| head.rfind("Thread 0x"))?;
    let id = &head[at + "thread ".len()..];
    if id.len() <= 2 || !id[2..].chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let current = head[..at].ends_with("Current ");
    Some((id.to_string(), current))
}

/// `  File "path", line N in name` (anywhere in the line) → the frame; `???` for an unknown part.
fn frame(l: &str) -> Option<Frame> {
    let at = l.find("File ")?;
    let rest = &l[at + "File ".len()..];
    let (file, rest) = match rest.strip_prefix('"') {
        Some(r) => {
            let end = r.rfind("\", line ")?;
            (&r[..end], &r[end + 1..])
        }
        None => {
            let end = rest.find(", line ")?;
            (&rest[..end], &rest[end..])
        }
    };
    let rest = rest.strip_prefix(", line ")?;
    let (line, name) = rest.split_once(" in ")?;
    let name = name.trim_end();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    Some(Frame {
        function: name.to_string(),
        file: file.to_string(),
        line: line.trim().parse().ok(),
        ..Frame::default()
    })
}

/// A frame line exactly as `dump_frame` writes it (`Python/traceback.c`: `PUTS(fd, "  File
/// \"")`, the file, `PUTS(fd, "\", line ")`, the number, `PUTS(fd, " in ")`, the name; every
/// CPython 3.x): the line starts with `File "` and its number is digits (or `???`) followed by
/// ` in `. An exception's traceback (`Lib/traceback.py`, `  File "f", line N, in name`) puts a
/// comma after the number and is not this.
fn strict_frame(l: &str) -> Option<Frame> {
    let t = l.trim();
    if !t.starts_with("File \"") {
        return None;
    }
    let f = frame(t)?;
    let (_, tail) = t.rsplit_once("\", line ")?;
    let (num, _) = tail.split_once(" in ")?;
    (num == "???" || !num.is_empty() && num.chars().all(|c| c.is_ascii_digit())).then_some(f)
}

/// Frame lines in `dump_frame`'s own shape needed, one after the other, to take a paste without
/// its thread header (the poster or the page kept the frames only) as a faulthandler dump.
const HEADERLESS_FRAMES: usize = 3;

/// True when the text holds a faulthandler dump: a thread header followed (past the line
/// prefixes logs add) by a frame line or `<no Python frame>`, or, without a header, at least
/// `HEADERLESS_FRAMES` (three) consecutive frame lines in `dump_frame`'s exact shape.
pub fn looks_like_faulthandler_dump(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text).take(20_000).collect();
    let headed = lines.iter().enumerate().any(|(i, l)| {
        header(l).is_some()
            && lines[i + 1..].iter().take(2).any(|n| {
                n.contains("<no Python frame>") || n.contains("File \"") || n.contains("File ???")
            })
    });
    headed
        || lines
            .windows(HEADERLESS_FRAMES)
            .any(|w| w.iter().all(|l| strict_frame(l).is_some()))
}

/// The dump in py-spy's shape: one process (a faulthandler dump is one process's), its threads.
pub fn parse_faulthandler_dump(text: &str) -> PyspyDump {
    let mut out = PyspyDump::default();
    let mut p = Process::default();
    let mut pending: Option<String> = None;
    for raw in super::content_lines(text) {
        let l = raw.trim_end_matches('\r');
        if let Some(msg) = l.split_once("Fatal Python error: ").map(|(_, m)| m.trim())
            && out.fatal_error.is_none()
        {
            out.fatal_error = Some(super::clip(msg, super::MAX_TEXT));
            continue;
        }
        if let Some((id, current)) = header(l) {
            pending = None;
            if p.threads.len() >= super::MAX_ITEMS {
                break;
            }
            p.threads.push(Thread {
                id,
                status: None,
                name: current.then(|| "Current thread".to_string()),
                frames: Vec::new(),
            });
            continue;
        }
        // frames pasted without their header: a thread faulthandler did not name (its
        // `Thread 0x…` line is not in the text), as `Stack (most recent call first):` gives
        if p.threads.is_empty() && strict_frame(l).is_some() {
            p.threads.push(Thread::default());
        }
        let Some(th) = p.threads.last_mut() else {
            continue;
        };
        // a frame line a terminal wrapped: the part before, joined with this line's start
        let joined;
        let l = match pending.take() {
            Some(head) => {
                joined = format!("{head}{}", l.trim_start());
                joined.as_str()
            }
            None => l,
        };
        if let Some(f) = frame(l) {
            if th.frames.len() < 4 * super::MAX_ITEMS {
                th.frames.push(f);
            }
        } else if l.contains("File \"") && !l.contains(" in ") && l.len() < 4096 {
            pending = Some(l.to_string());
        }
    }
    if !p.threads.is_empty() {
        out.processes.push(p);
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct FaulthandlerKind;

impl super::EvidenceKind for FaulthandlerKind {
    fn name(&self) -> &'static str {
        "faulthandler-dump"
    }
    fn doc(&self) -> &'static str {
        "Python's faulthandler dump of every thread's stack (a hang watchdog, a signal, a crash)"
    }
    fn example(&self) -> &'static str {
        "python -X faulthandler train.py  # or faulthandler.dump_traceback_later(600)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "processes",
                "the dumped process (pid 0: faulthandler prints none): threads (id, name `Current thread` for the one that dumped, frames: function, file, line)",
            ),
            (
                "fatal_error",
                "the `Fatal Python error:` message of a crash (Segmentation fault, Aborted, none_dealloc: …)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["pyspy.dump"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_faulthandler_dump(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let d = parse_faulthandler_dump(text);
        if d.processes.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no faulthandler dump (`Thread 0x… (most recent call first):`) in the text",
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

    /// pytorch/pytorch#54818 (its description's example): a distributed test's rank that timed
    /// out, dumped by faulthandler: the current thread a listener, the other in `barrier`.
    const BARRIER_HANG: &str = "Process 3 timed out with traceback:\n\
Current thread 0x00007ff3363ff700 (most recent call first):\n  File \"torch/testing/_internal/common_distributed.py\", line 373 in _event_listener\n  File \"threading.py\", line 870 in run\n  File \"threading.py\", line 932 in _bootstrap_inner\n  File \"threading.py\", line 890 in _bootstrap\n\n\
Thread 0x00007ff406132180 (most recent call first):\n  File \"torch/distributed/distributed_c10d.py\", line 2477 in barrier\n  File \"torch/testing/_internal/distributed/rpc/rpc_test.py\", line 838 in test_reinit\n";

    #[test]
    fn headers_frames_and_the_current_thread() {
        assert!(looks_like_faulthandler_dump(BARRIER_HANG));
        let d = parse_faulthandler_dump(BARRIER_HANG);
        assert_eq!(d.fatal_error, None);
        let p = &d.processes[0];
        assert_eq!(p.pid, 0);
        assert_eq!(p.threads.len(), 2);
        let cur = &p.threads[0];
        assert_eq!(cur.id, "0x00007ff3363ff700");
        assert_eq!(cur.name.as_deref(), Some("Current thread"));
        assert_eq!(cur.status, None);
        assert_eq!(cur.frames[0].function, "_event_listener");
        assert_eq!(
            cur.frames[0].file,
            "torch/testing/_internal/common_distributed.py"
        );
        assert_eq!(cur.frames[0].line, Some(373));
        assert_eq!(cur.frames.len(), 4);
        // a problem: the other thread waits in a barrier
        let other = &p.threads[1];
        assert_eq!(other.name, None);
        assert!(
            matches!(activity(other), Activity::Collective { ref op, .. } if op == "barrier"),
            "{:?}",
            activity(other)
        );
        // no thread is known as the main one: faulthandler prints no names
        assert!(p.main_thread().is_none());
    }

    #[test]
    fn a_crash_with_threads_in_c_code_behind_torchruns_prefix() {
        // pytorch/torchtitan#1066: a compiled model's training dies with none_dealloc; every
        // line behind `[rank0]:`; healthy as far as waiting goes (no frame, no collective)
        let t = test_corpus("h70_faulthandler_torchtitan1066_none_dealloc_rank0.txt");
        assert!(looks_like_faulthandler_dump(&t));
        let d = parse_faulthandler_dump(&t);
        assert_eq!(
            d.fatal_error.as_deref(),
            Some("none_dealloc: deallocating None")
        );
        let p = &d.processes[0];
        assert_eq!(p.threads.len(), 3);
        assert_eq!(p.threads[0].id, "0x00007f975c95b640");
        assert!(p.threads.iter().all(|t| t.frames.is_empty()));
    }

    #[test]
    fn timestamps_before_each_line() {
        // om-ai-lab/VLM-R1#309: the job log's `2025-06-22 03:09:55  ` before each line
        let t = test_corpus("h70_faulthandler_vlmr1_309_none_dealloc_timestamped.txt");
        assert!(looks_like_faulthandler_dump(&t));
        let d = parse_faulthandler_dump(&t);
        assert_eq!(d.processes[0].threads.len(), 8);
        assert_eq!(d.processes[0].threads[7].id, "0x00007fd629fff640");
    }

    #[test]
    fn ray_prefixes_and_frame_lines_a_terminal_wrapped() {
        // OpenRLHF/OpenRLHF#1133: a vLLM actor's dump behind `(LLMRayActor pid=N) `, each frame
        // line wrapped at the terminal's width
        let t = test_corpus("h70_faulthandler_openrlhf1133_vllm_sleep_unmap.txt");
        assert!(looks_like_faulthandler_dump(&t));
        let d = parse_faulthandler_dump(&t);
        let p = &d.processes[0];
        assert_eq!(p.threads.len(), 2);
        let usage = &p.threads[0];
        assert_eq!(usage.frames.len(), 5);
        assert_eq!(usage.frames[0].function, "_report_continuous_usage");
        assert_eq!(
            usage.frames[0].file,
            "/mnt/gemini/home/yifengliu/miniconda3/envs/qe-rl/lib/python3.10/site-packages/vllm/usage/usage_lib.py"
        );
        assert_eq!(usage.frames[0].line, Some(230));
        let cur = &p.threads[1];
        assert_eq!(cur.name.as_deref(), Some("Current thread"));
        assert_eq!(cur.frames[0].function, "unmap_and_release");
        assert_eq!(activity(cur), Activity::Other);
    }

    #[test]
    fn one_threads_stack_and_unknown_parts() {
        // CPython's own header for one thread (`dump_traceback(all_threads=False)`) and `???`
        // for a file, line or name it cannot read (Python/traceback.c `dump_frame`)
        let t = "Stack (most recent call first):\n  File \"train.py\", line 12 in step\n  File ???, line ??? in ???\n";
        assert!(looks_like_faulthandler_dump(t));
        let th = &parse_faulthandler_dump(t).processes[0].threads[0];
        assert_eq!(th.id, "");
        assert_eq!(th.frames.len(), 2);
        assert_eq!(th.frames[1].file, "???");
        assert_eq!(th.frames[1].line, None);
    }

    #[test]
    fn frames_pasted_without_their_thread_header() {
        // vllm-project/vllm#2731: the poster's stack, `dump_frame`'s lines only, in all_reduce
        let t = test_corpus("h140_faulthandler_vllm2731_tp_all_reduce_stuck.txt");
        assert!(looks_like_faulthandler_dump(&t));
        let d = parse_faulthandler_dump(&t);
        let p = &d.processes[0];
        assert_eq!(p.threads.len(), 1);
        let th = &p.threads[0];
        assert_eq!(th.id, "");
        assert_eq!(th.name, None);
        assert_eq!(th.frames.len(), 12);
        assert_eq!(th.frames[0].line, Some(2050));
        assert!(
            matches!(activity(th), Activity::Collective { ref op, .. } if op == "all_reduce"),
            "{:?}",
            activity(th)
        );
        // fewer than three such lines, or lines of an exception's traceback (a comma after the
        // number), are not a dump
        let two = "  File \"a.py\", line 1 in f\n  File \"b.py\", line 2 in g\n";
        assert!(!looks_like_faulthandler_dump(two));
        let tb = "  File \"a.py\", line 1, in f\n  File \"b.py\", line 2, in g\n  File \"c.py\", line 3, in h\n";
        assert!(!looks_like_faulthandler_dump(tb));
        assert!(parse_faulthandler_dump(tb).processes.is_empty());
    }

    #[test]
    fn not_a_traceback_or_a_pyspy_dump() {
        // an exception's traceback (`File "f", line N, in name`, oldest first) has no thread
        // header; py-spy's header has a status word and no `(most recent call first):`
        let tb = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    main()\nRuntimeError: boom\n";
        assert!(!looks_like_faulthandler_dump(tb));
        assert!(parse_faulthandler_dump(tb).processes.is_empty());
        let spy = "Thread 6473 (idle): \"MainThread\"\n    _try_get_data (torch/utils/data/dataloader.py:1133)\n";
        assert!(!looks_like_faulthandler_dump(spy));
    }
}
