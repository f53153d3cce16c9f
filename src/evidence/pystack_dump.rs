//! pystack's dump of a process's threads (`pystack remote PID`, `pystack core CORE`), read from
//! its producer: bloomberg/pystack `src/pystack/traceback_formatter.py` (`format_thread`,
//! `format_frame`, `_format_merged_stacks`; read at 07111234).
//!
//! ```text
//! Traceback for thread 2175 (python3.12) [] (most recent call last):   tid, (name), status
//!     (Python) File "/usr/lib/python3.12/threading.py", line 1032, in _bootstrap
//!         self._bootstrap_inner()                          the source line, when readable
//!     (C) File "Python/ceval.c", line 4181, in _PyEval_EvalFrameDefault (libpython3.12.so)
//!       Arguments:                                         --locals: name: repr
//!         self: <…>
//! ```
//!
//! `format_thread` heads each thread `Traceback for thread {tid}{ (name) }{status} (most recent
//! call last):` (the name only when the thread has one; the status the thread's GIL and GC
//! flags, `[]` for none) and then, oldest first as a Python traceback is, each Python frame as
//! `    (Python) File "{file}", line {n}, in {scope}` and, with `--native`, each native frame as
//! `    (C) File "{path}", line {n}, in {symbol} ({library})`; a thread without a frame prints
//! `The frame stack for thread {tid} is empty`. Tools wrap it (PySpark's `threaddump` prints
//! `Dumping threads for process N` before it). The dump is one moment of each thread, as a
//! `py-spy dump` is: it is given in py-spy's shape ([`PyspyDump`], frames innermost first) to the
//! probe that reads both, and a thread's activity is read as there
//! ([`super::pyspy_dump::activity`]).

use super::pyspy_dump::{Frame, Process, PyspyDump, Thread};

const TAIL: &str = " (most recent call last):";

/// `Traceback for thread 2175 (python3.12) [] (most recent call last):` → (tid, name, status).
fn header(l: &str) -> Option<(String, Option<String>, Option<String>)> {
    let at = l.find("Traceback for thread ")?;
    let rest = l[at + "Traceback for thread ".len()..]
        .trim_end()
        .strip_suffix(TAIL)?;
    let (tid, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    if tid.is_empty() || !tid.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = rest.trim();
    let mut name = None;
    if let Some(r) = rest.strip_prefix('(') {
        let (n, r) = r.split_once(") ")?;
        name = (!n.is_empty()).then(|| super::clip(n, 80));
        rest = r.trim();
    }
    // the status: `[]`, `[Has the GIL]`, `[Garbage collecting]`, … (pystack's thread flags)
    let status = rest
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))?
        .trim();
    Some((
        tid.to_string(),
        name,
        (!status.is_empty()).then(|| super::clip(status, 80)),
    ))
}

/// `(Python) File "f", line N, in scope` / `(C) File "f", line N, in symbol (library)`.
fn frame(l: &str) -> Option<Frame> {
    let t = l.trim_start();
    let (native, rest) = if let Some(r) = t.strip_prefix("(Python) File \"") {
        (false, r)
    } else if let Some(r) = t.strip_prefix("(C) File \"") {
        (true, r)
    } else {
        return None;
    };
    let end = rest.rfind("\", line ")?;
    let file = &rest[..end];
    let (line, func) = rest[end + "\", line ".len()..].split_once(", in ")?;
    let mut func = func.trim_end();
    let mut file = file.to_string();
    if native {
        // ` (library)` after the symbol: the native frame's file, as py-spy gives a library
        if let Some((f, lib)) = func.rsplit_once(" (")
            && let Some(lib) = lib.strip_suffix(')')
        {
            func = f.trim_end();
            if !lib.is_empty() {
                file = lib.to_string();
            }
        }
    }
    if func.is_empty() {
        return None;
    }
    Some(Frame {
        function: super::clip(func, super::MAX_TEXT),
        file: super::clip(&file, super::MAX_TEXT),
        // a native frame has no Python line: py-spy's `--native` frames carry none
        line: if native {
            None
        } else {
            line.trim().parse().ok()
        },
        ..Frame::default()
    })
}

/// True when the text holds a pystack dump: a thread header followed by one of its frames.
pub fn looks_like_pystack_dump(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text).take(20_000).collect();
    lines.iter().enumerate().any(|(i, l)| {
        header(l).is_some() && lines[i + 1..].iter().take(3).any(|n| frame(n).is_some())
    })
}

/// The dump in py-spy's shape: one process (pid 0: pystack's thread headers carry none), each
/// thread's frames innermost first.
pub fn parse_pystack_dump(text: &str) -> PyspyDump {
    let mut out = PyspyDump::default();
    let mut p = Process::default();
    for raw in super::content_lines(text) {
        let l = raw.trim_end_matches('\r');
        if let Some((id, name, status)) = header(l) {
            if p.threads.len() >= super::MAX_ITEMS {
                break;
            }
            p.threads.push(Thread {
                id,
                status,
                name,
                frames: Vec::new(),
            });
            continue;
        }
        if let Some(f) = frame(l)
            && let Some(th) = p.threads.last_mut()
            && th.frames.len() < 4 * super::MAX_ITEMS
        {
            th.frames.push(f);
        }
    }
    for t in &mut p.threads {
        // pystack prints the oldest frame first; py-spy's shape is innermost first
        t.frames.reverse();
    }
    if !p.threads.is_empty() {
        out.processes.push(p);
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct PystackDumpKind;

impl super::EvidenceKind for PystackDumpKind {
    fn name(&self) -> &'static str {
        "pystack-dump"
    }
    fn doc(&self) -> &'static str {
        "pystack's dump of a running (or crashed) Python process's threads (`Traceback for thread N … (most recent call last):`, `(Python) File …` and `(C) File …` frames): one moment of each thread"
    }
    fn example(&self) -> &'static str {
        "pystack remote PID --native > stacks.txt"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "processes",
            "the dumped process (pid 0: pystack prints none): threads (id: the tid, name, status: pystack's GIL/GC flags, frames innermost first: function, file (a native frame's library), line)",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["pyspy.dump"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_pystack_dump(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let d = parse_pystack_dump(text);
        if d.processes.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no pystack dump (`Traceback for thread N … (most recent call last):`) in the text",
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

    #[test]
    fn a_pyspark_workers_socketserver_thread() {
        // apache/spark#53705: PySpark's `threaddump` wraps pystack's dump of a worker
        let t = test_corpus("h111_pystack_spark53705_threaddump_socketserver.txt");
        assert!(looks_like_pystack_dump(&t));
        let d = parse_pystack_dump(&t);
        let p = &d.processes[0];
        assert_eq!(p.threads.len(), 1);
        let th = &p.threads[0];
        assert_eq!(th.id, "2175");
        assert_eq!(th.name.as_deref(), Some("python3.12"));
        assert_eq!(th.status, None);
        assert_eq!(th.frames.len(), 6);
        // innermost first
        assert_eq!(th.frames[0].function, "process_request");
        assert_eq!(th.frames[0].file, "/usr/lib/python3.12/socketserver.py");
        assert_eq!(th.frames[0].line, Some(349));
        assert_eq!(th.frames[5].function, "_bootstrap");
        assert_eq!(activity(th), Activity::Other);
    }

    #[test]
    fn native_frames_status_and_a_collective() {
        // pystack's own shapes (`format_thread`, `_format_merged_stacks`): a thread holding the
        // GIL, its Python frames with a native one between them, a rank in all_reduce
        let t = concat!(
            "Traceback for thread 112 [Has the GIL] (most recent call last):\n",
            "    (Python) File \"/opt/train.py\", line 40, in <module>\n",
            "        main()\n",
            "    (Python) File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 2050, in all_reduce\n",
            "        work = group.allreduce([tensor], opts)\n",
            "    (C) File \"Python/ceval.c\", line 4181, in _PyEval_EvalFrameDefault (libpython3.10.so.1.0)\n",
            "\n",
            "The frame stack for thread 113 is empty\n",
        );
        assert!(looks_like_pystack_dump(t));
        let d = parse_pystack_dump(t);
        let th = &d.processes[0].threads[0];
        assert_eq!(th.status.as_deref(), Some("Has the GIL"));
        assert_eq!(th.name, None);
        assert_eq!(th.frames[0].function, "_PyEval_EvalFrameDefault");
        assert_eq!(th.frames[0].file, "libpython3.10.so.1.0");
        assert_eq!(th.frames[0].line, None);
        assert!(
            matches!(activity(th), Activity::Collective { ref op, .. } if op == "all_reduce"),
            "{:?}",
            activity(th)
        );
    }

    #[test]
    fn not_a_python_traceback_or_a_faulthandler_dump() {
        // an exception's traceback has no thread header; faulthandler's reads `most recent call
        // first` and `File "f", line N in name`
        let tb = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    main()\nRuntimeError: boom\n";
        assert!(!looks_like_pystack_dump(tb));
        assert!(parse_pystack_dump(tb).processes.is_empty());
        let fh = "Thread 0x00007ff406132180 (most recent call first):\n  File \"train.py\", line 90 in main\n";
        assert!(!looks_like_pystack_dump(fh));
        // a header in prose without a frame under it
        assert!(!looks_like_pystack_dump(
            "we saw Traceback for thread 1 [] (most recent call last): and nothing more\n"
        ));
    }
}
