//! Where a training process's main thread spends its time, from `py-spy dump` taken every
//! quarter second over the sampling window (py-spy is a pip package: `pip install py-spy`).
//! It reads the target's memory with ptrace, so it needs root or CAP_SYS_PTRACE (in a
//! container: `--cap-add SYS_PTRACE`) and a `kernel.yama.ptrace_scope` that allows it.
//! Without it the fields say so and how to get it; nothing else changes.
//!
//! A sample of the main thread is classed by its frames: in DataLoader `__next__` (waiting
//! for a batch), in a host sync (its innermost Python frame is a line of the training script
//! that calls `.item()`, `.cpu()`, `.tolist()`, `.numpy()` or `synchronize`), in backward or
//! the optimizer, or in a host-to-device copy. A `_pin_memory_loop` thread shows
//! `pin_memory=True` at work.

use crate::evidence::pyspy_dump::{self, Activity};
use crate::evidence::{faulthandler, gdb_backtrace, pystack_dump};
use crate::host::Host;
use serde_json::{Value, json};
use std::time::Duration;

const PERIOD: Duration = Duration::from_millis(250);
const HINT: &str = "py-spy is not installed: `pip install py-spy` (needs root or CAP_SYS_PTRACE) would add where the main thread spends its time (DataLoader wait, host syncs, backward)";

/// A py-spy that exists and was not taken: the trust check's refusal. Shown as its message
/// alone (a value's `error` field, a recording's note); its help stays in the [`TrustError`].
///
/// [`TrustError`]: crate::trust::TrustError
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", .0.message)]
pub struct PyspyRefused(pub crate::trust::TrustError);

/// py-spy runs as root (it reads the job's memory with ptrace), so it is taken only from a
/// place the trust check of playbooks accepts ([`crate::trust::check`]: owned by root or the
/// invoking user, nothing above it writable by others): `GPUFIX_PYSPY`, else the first trusted
/// `py-spy` on gpufix's own PATH (never the job's) or in the usual directories. `Err` says why
/// a py-spy that exists was refused.
pub fn find_pyspy(host: &dyn Host) -> Result<Option<String>, PyspyRefused> {
    if !host.is_live() {
        // a recorded host answers the commands it recorded
        return Ok(Some("py-spy".into()));
    }
    if let Ok(p) = std::env::var("GPUFIX_PYSPY")
        && !p.is_empty()
    {
        if !p.starts_with('/') {
            return Err(PyspyRefused(
                format!("refusing GPUFIX_PYSPY `{p}`: give an absolute path (py-spy runs as root)")
                    .into(),
            ));
        }
        return crate::trust::check(std::path::Path::new(&p), "py-spy (GPUFIX_PYSPY)")
            .map(|()| Some(p))
            .map_err(PyspyRefused);
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let mut refused = None;
    for p in path
        .split(':')
        .filter(|d| d.starts_with('/'))
        .chain(["/usr/local/bin", "/usr/bin", "/opt/conda/bin"])
        .map(|d| format!("{}/py-spy", d.trim_end_matches('/')))
        .filter(|p| std::path::Path::new(p).is_file())
    {
        match crate::trust::check(std::path::Path::new(&p), "py-spy") {
            Ok(()) => return Ok(Some(p)),
            Err(e) => {
                refused.get_or_insert(PyspyRefused(e));
            }
        }
    }
    match refused {
        Some(e) => Err(e),
        None => Ok(None),
    }
}

/// The job's training script, read once with its owner's authority, for [`classify`]'s look at
/// the line a C call was made from.
pub struct Script {
    base: Option<String>,
    text: Option<String>,
}

impl Script {
    pub fn of(host: &dyn Host, pid: u32, argv: &[String]) -> Script {
        let cwd = host
            .read_link(&format!("/proc/{pid}/cwd"))
            .unwrap_or_else(|_| "/".into());
        let script = crate::formats::launcher::parse(argv)
            .and_then(|l| l.script)
            .map(|s| {
                if s.starts_with('/') {
                    s
                } else {
                    format!("{}/{}", cwd.trim_end_matches('/'), s)
                }
            });
        // the job's own script: read with its owner's authority, like every file a job names
        let script_text = script
            .as_ref()
            .and_then(|p| {
                host.read_job_file(pid, p, crate::probes::config_sources::MAX_TEXT)
                    .ok()
            })
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let script_base = script
            .as_ref()
            .and_then(|p| p.rsplit('/').next().map(str::to_string));
        Script {
            base: script_base,
            text: script_text,
        }
    }

    /// Line `line` of `file` when `file` is the training script.
    pub fn line(&self, file: &str, line: u32) -> Option<String> {
        let base = file.rsplit('/').next()?;
        if Some(base) != self.base.as_deref() {
            return None;
        }
        self.text
            .as_ref()?
            .lines()
            .nth(line.checked_sub(1)? as usize)
            .map(str::to_string)
    }
}

/// One dump's main thread, innermost frame first: (function, file, line). Read with the one
/// parser of py-spy's format ([`pyspy_dump`]).
pub fn main_thread(dump: &str, pid: u32) -> Vec<(String, String, u32)> {
    let d = pyspy_dump::parse_pyspy_dump(dump);
    d.processes
        .iter()
        .find(|p| p.pid == pid)
        .or(d.processes.first())
        .and_then(|p| p.threads.iter().find(|t| t.is_main(pid)))
        .map(|t| {
            t.frames
                .iter()
                .map(|f| (f.function.clone(), f.file.clone(), f.line.unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

/// The class of one main-thread sample: what the frames show ([`pyspy_dump::activity`]: the
/// DataLoader, a sync frame, backward/optimizer), and, where they cannot show it, the training
/// script's own line (`.item()` is a C call: its innermost Python frame is the script's line).
pub fn classify(
    frames: &[(String, String, u32)],
    script_line: &dyn Fn(&str, u32) -> Option<String>,
) -> &'static str {
    let thread = pyspy_dump::Thread {
        frames: frames
            .iter()
            .map(|(f, file, line)| pyspy_dump::Frame {
                function: f.clone(),
                file: file.clone(),
                line: (*line > 0).then_some(*line),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let seen = pyspy_dump::activity(&thread);
    match seen {
        Activity::DataloaderWait { .. } => return "dataloader",
        Activity::HostSync { .. } => return "host_sync",
        Activity::HostToDeviceCopy { .. } => return "copy",
        _ => {}
    }
    if let Some((_, file, line)) = frames.first()
        && let Some(src) = script_line(file, *line)
    {
        let s = src.replace(' ', "");
        if [".item()", ".cpu()", ".tolist()", ".numpy()", "synchronize("]
            .iter()
            .any(|k| s.contains(k))
        {
            return "host_sync";
        }
        if s.contains(".to(") || s.contains(".cuda(") {
            return "copy";
        }
    }
    if seen == Activity::BackwardOptimizer {
        return "backward_optimizer";
    }
    "other"
}

/// Sample over `window` (at least one dump); returns the `pyspy` field of the process probe.
pub fn sample(
    host: &dyn Host,
    pid: u32,
    window: Duration,
    argv: &[String],
    tick: &mut dyn FnMut(),
) -> Value {
    let found = find_pyspy(host);
    let Ok(Some(bin)) = found else {
        // still tick over the window (GPU readings)
        let n = ((window.as_secs_f64() / PERIOD.as_secs_f64()).floor() as usize).max(1);
        for _ in 0..n {
            tick();
            host.sleep(window / n as u32);
        }
        tick();
        return match found {
            Err(why) => json!({"available": false, "error": why.to_string()}),
            _ => json!({"available": false, "hint": HINT}),
        };
    };
    let script = Script::of(host, pid, argv);
    let script_line = |file: &str, line: u32| script.line(file, line);
    let argv_run = vec![bin.clone(), "dump".into(), "--pid".into(), pid.to_string()];
    let n = ((window.as_secs_f64() / PERIOD.as_secs_f64()).floor() as usize).clamp(1, 40);
    let start = host.now();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    let mut samples = 0;
    let mut pin_thread = false;
    let mut error = None;
    for i in 0..n {
        tick();
        if error.is_some() {
            // py-spy failed: keep the window's GPU readings going
            host.sleep(window / n as u32);
            continue;
        }
        match host.run(&argv_run, Duration::from_secs(5)) {
            Ok(o) if o.status == Some(0) => {
                pin_thread |= o.stdout.contains("_pin_memory_loop");
                let frames = main_thread(&o.stdout, pid);
                if !frames.is_empty() {
                    samples += 1;
                    *counts.entry(classify(&frames, &script_line)).or_default() += 1;
                }
            }
            Ok(o) => {
                error = Some(format!(
                    "py-spy exit {:?}: {}",
                    o.status,
                    o.stderr.lines().last().unwrap_or("").trim()
                ));
            }
            Err(e) => {
                error = Some(format!("cannot run {bin}: {e}"));
            }
        }
        // spread the dumps over the window
        if host.is_live() {
            let due = start + PERIOD.as_secs_f64() * (i + 1) as f64;
            let now = host.now();
            if due > now {
                host.sleep(Duration::from_secs_f64(due - now));
            }
        }
    }
    tick();
    if host.is_live() {
        let left = window.as_secs_f64() - (host.now() - start);
        if left > 0.0 {
            host.sleep(Duration::from_secs_f64(left));
        }
    }
    if samples == 0 {
        return json!({"available": false, "hint": error.map_or(HINT.to_string(), |e| format!("{e} (py-spy needs root or CAP_SYS_PTRACE)"))});
    }
    let share = |k: &str| {
        (counts.get(k).copied().unwrap_or(0) as f64 / samples as f64 * 1000.0).round() / 1000.0
    };
    json!({
        "available": true,
        "samples": samples,
        "dataloader_share": share("dataloader"),
        "host_sync_share": share("host_sync"),
        "backward_optimizer_share": share("backward_optimizer"),
        "copy_share": share("copy"),
        "other_share": share("other"),
        "pin_memory_thread": pin_thread,
    })
}

/// `pyspy.dump`: pasted `py-spy dump` output (`--evidence`), read with the same parser as the
/// live samples. Each dump of a training process's main thread is one sample; a DataLoader
/// worker's own dump is counted apart (its main thread waits for indices by design). One dump
/// is one moment: shares over few samples say where the thread *was*, which the rules read as
/// such.
pub struct PyspyDumpProbe;

/// Parameters: `optional`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DumpParams {
    /// without a pasted dump, answer `{given: false}` instead of not-applicable (for rules that also judge a trace or a live --pid)
    #[serde(default)]
    pub optional: bool,
}

impl super::Probe for PyspyDumpProbe {
    type Params = DumpParams;
    fn name(&self) -> &'static str {
        "pyspy.dump"
    }
    fn doc(&self) -> &'static str {
        "pasted `py-spy dump` output (or Python's faulthandler dump of every thread, pystack's dump, or gdb's `thread apply all bt`): what each training process's main thread is doing (DataLoader wait, host sync, backward/optimizer), and threads inside a torch.distributed or NCCL collective"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "given",
                "false (and nothing else) when `optional` and no dump was given",
            ),
            ("files", "the dumps read"),
            (
                "tool",
                "what printed the dumps, for messages: `py-spy dump`, `faulthandler dump`, `pystack dump`, `gdb backtrace`, or `stack dump` where they differ",
            ),
            (
                "samples",
                "main-thread samples of training processes (one per dump)",
            ),
            (
                "workers",
                "dumps of DataLoader workers or other multiprocessing children (not judged)",
            ),
            (
                "main_threads",
                "per sample: pid, activity (dataloader_wait, host_sync, h2d_copy, collective, backward_optimizer, other), frame, status",
            ),
            (
                "dataloader_share",
                "share of samples waiting on the DataLoader",
            ),
            (
                "host_sync_share",
                "share of samples in a sync that shows as a frame",
            ),
            (
                "h2d_copy_share",
                "share of samples inside the driver's host-to-device copy (`cuMemcpyHtoD*`, a `--native` frame): the host thread staging pageable memory",
            ),
            (
                "native",
                "a main thread's stack holds C/C++ frames (`py-spy dump --native`), so a copy or a sync in a C call can show",
            ),
            (
                "backward_optimizer_share",
                "share of samples in backward or the optimizer",
            ),
            (
                "collectives",
                "threads inside a torch.distributed collective (a `distributed_c10d.py` frame, or a `--native` c10d work wait): pid, thread, op, frame, status",
            ),
            (
                "watchdog_timeout",
                "a watchdog in the paste that dumped its process after no progress (SGLang's): name, timeout_s, soft",
            ),
            (
                "collective_mismatch",
                "main threads of two or more processes of one program waiting in different collectives (ranks out of order, which cannot complete): program, processes, ops, collectives; null otherwise",
            ),
            (
                "stuck_collectives",
                "the collectives, when the paste says the process stopped (a watchdog timeout) or its ranks wait in collectives that cannot match; empty otherwise",
            ),
        ]
    }
    fn run(&self, params: &DumpParams, ctx: &super::ProbeCtx) -> super::ProbeOutcome {
        let mut files = Vec::new();
        let mut dumps = Vec::new();
        let mut tools: Vec<&str> = Vec::new();
        for p in &ctx.inputs.evidence {
            let Ok(t) = crate::vocab::io::read_shared(p) else {
                continue;
            };
            if pyspy_dump::looks_like_pyspy_dump(&t) {
                files.push(p.display().to_string());
                tools.push("py-spy dump");
                dumps.push(pyspy_dump::parse_pyspy_dump(&t));
            } else if faulthandler::looks_like_faulthandler_dump(&t) {
                // Python's own dump of every thread (a hang watchdog's, a signal's): the same
                // stacks without py-spy's thread states and names
                files.push(p.display().to_string());
                tools.push("faulthandler dump");
                dumps.push(faulthandler::parse_faulthandler_dump(&t));
            } else if pystack_dump::looks_like_pystack_dump(&t) {
                // pystack's dump of the process's threads: the same stacks, oldest frame first
                // as printed, given innermost first
                files.push(p.display().to_string());
                tools.push("pystack dump");
                dumps.push(pystack_dump::parse_pystack_dump(&t));
            } else if gdb_backtrace::looks_like_gdb_backtrace(&t) {
                // gdb's `thread apply all bt` of the process: the native frames alone, as a
                // `py-spy dump --native` shows them under the Python ones
                files.push(p.display().to_string());
                tools.push("gdb backtrace");
                dumps.push(gdb_backtrace::parse_gdb_backtrace(&t));
            }
        }
        if dumps.is_empty() {
            return if params.optional {
                super::ProbeOutcome::Value(json!({"given": false}))
            } else {
                super::ProbeOutcome::NotApplicable(
                    "needs a `py-spy dump` given as --evidence".into(),
                )
            };
        }
        let mut v = summarize(&dumps, files);
        let tool = match tools.split_first() {
            Some((first, rest)) if rest.iter().all(|t| t == first) => *first,
            _ => "stack dump",
        };
        if let Value::Object(m) = &mut v {
            m.insert("tool".into(), json!(tool));
        }
        super::ProbeOutcome::Value(v)
    }
}

/// The probe's value over parsed dumps.
pub fn summarize(dumps: &[pyspy_dump::PyspyDump], files: Vec<String>) -> Value {
    let mut samples = 0usize;
    let mut native = false;
    let mut workers = 0usize;
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    let mut mains = Vec::new();
    let mut collectives = Vec::new();
    // per program: (process, NCCL operation, collective) of each main thread in a collective
    let mut in_collective: std::collections::BTreeMap<String, Vec<(String, &str, Value)>> =
        Default::default();
    // a crash's dump (faulthandler's `Fatal Python error: Segmentation fault`, `none_dealloc`)
    // shows where each thread was when the process died, not a wait; an abort is kept, as
    // PyTorch's NCCL watchdog ends a timed-out collective with one (`Aborted`)
    let waited = |d: &&pyspy_dump::PyspyDump| {
        d.fatal_error
            .as_deref()
            .is_none_or(|m| m.starts_with("Aborted"))
    };
    for p in dumps.iter().filter(waited).flat_map(|d| &d.processes) {
        if p.is_worker() {
            workers += 1;
            continue;
        }
        for t in &p.threads {
            let a = pyspy_dump::activity(t);
            if let Activity::Collective { op, frame } = &a
                && collectives.len() < crate::vocab::MAX_ITEMS
            {
                collectives.push(json!({
                    "pid": p.pid, "thread": t.name.clone().unwrap_or_else(|| t.id.clone()),
                    "op": op, "frame": frame, "status": t.status,
                }));
            }
            if !t.is_main(p.pid) {
                continue;
            }
            if let Activity::Collective { op, frame } = &a
                && let Some(family) = pyspy_dump::collective_family(op)
            {
                in_collective.entry(p.program()).or_default().push((
                    p.identity(),
                    family,
                    json!({
                        "pid": p.pid, "thread": t.name.clone().unwrap_or_else(|| t.id.clone()),
                        "op": op, "frame": frame, "status": t.status,
                    }),
                ));
            }
            samples += 1;
            // a native frame: no line, and a shared object for a file (`libcuda.so.580.159.04`)
            native |= t
                .frames
                .iter()
                .any(|f| f.line.is_none() && (f.file.ends_with(".so") || f.file.contains(".so.")));
            let (kind, frame) = match &a {
                Activity::DataloaderWait { frame } => ("dataloader_wait", Some(frame.clone())),
                Activity::HostSync { frame } => ("host_sync", Some(frame.clone())),
                Activity::HostToDeviceCopy { frame } => ("h2d_copy", Some(frame.clone())),
                Activity::Collective { frame, .. } => ("collective", Some(frame.clone())),
                Activity::BackwardOptimizer => ("backward_optimizer", None),
                Activity::Other => ("other", None),
            };
            *counts.entry(kind).or_default() += 1;
            if mains.len() < crate::vocab::MAX_ITEMS {
                let innermost = t.frames.first().map(|f| match f.line {
                    Some(n) => format!("{} ({}:{n})", f.function, f.file),
                    None => format!("{} ({})", f.function, f.file),
                });
                mains.push(json!({
                    "pid": p.pid, "activity": kind, "frame": frame.or(innermost), "status": t.status,
                }));
            }
        }
    }
    let share = |k: &str| {
        if samples == 0 {
            0.0
        } else {
            (counts.get(k).copied().unwrap_or(0) as f64 / samples as f64 * 1000.0).round() / 1000.0
        }
    };
    // ranks of one program whose main threads wait in different collectives: the ranks of a
    // process group must call its collectives in the same order (torch.distributed docs,
    // "Collective functions"; c10d's ProcessGroupWrapper under TORCH_DISTRIBUTED_DEBUG=DETAIL
    // raises "Detected mismatch between collectives on ranks" from each call's
    // CollectiveFingerPrint, torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp), and NCCL
    // matches a communicator's operations by their order on every rank: an all_reduce on one
    // rank and a broadcast on another can never both complete. One process's moment in a
    // collective is not this; two processes of the program in the same operation are not
    // either (a collective everyone reached, or passing through it)
    let mismatch = in_collective.into_iter().find_map(|(program, procs)| {
        let ids: std::collections::BTreeSet<String> =
            procs.iter().map(|(id, _, _)| id.clone()).collect();
        let ops: std::collections::BTreeSet<&str> = procs.iter().map(|(_, f, _)| *f).collect();
        (ids.len() >= 2 && ops.len() >= 2).then(|| {
            json!({
                "program": program,
                "processes": ids.len(),
                "ops": ops,
                "collectives": procs.into_iter().map(|(_, _, c)| c).collect::<Vec<_>>(),
            })
        })
    });
    // a thread in a collective is stuck only where the text says the process stopped: a
    // watchdog that dumped it after no progress (one dump alone is one moment), or the ranks
    // waiting in collectives that cannot match
    let stall = dumps.iter().find_map(|d| d.watchdog_timeout.clone());
    let stuck: Vec<Value> = if stall.is_some() {
        collectives.clone()
    } else if let Some(m) = &mismatch {
        m["collectives"].as_array().cloned().unwrap_or_default()
    } else {
        Vec::new()
    };
    json!({
        "given": true,
        "files": files,
        "samples": samples,
        "watchdog_timeout": stall,
        "collective_mismatch": mismatch,
        "stuck_collectives": stuck,
        "workers": workers,
        "main_threads": mains,
        "dataloader_share": share("dataloader_wait"),
        "host_sync_share": share("host_sync"),
        "h2d_copy_share": share("h2d_copy"),
        "native": native,
        "backward_optimizer_share": share("backward_optimizer"),
        "collectives": collectives,
    })
}

#[cfg(test)]
mod dump_tests {
    use super::*;
    use crate::evidence::testutil::fixture;

    /// The messages name what printed the stacks: a gdb backtrace is no py-spy dump.
    #[test]
    fn the_tool_that_printed_the_dumps_is_named() {
        let dir = crate::evidence::testutil::fixture_dir().join("pyspy");
        let run = |files: &[&str]| {
            let inputs = crate::probes::Inputs {
                evidence: files.iter().map(|f| dir.join(f)).collect(),
                ..Default::default()
            };
            crate::probes::value_of(crate::probes::run_with(
                &PyspyDumpProbe,
                &crate::host::recorded::SnapshotHost::empty(),
                json!({}),
                &inputs,
                Duration::ZERO,
            ))
        };
        let gdb = "gdb_ddp_ctor_ncclgroupend_pytorch52916.txt";
        let pyspy = "allgather_hang_accelerate.txt";
        assert_eq!(run(&[gdb])["tool"], "gdb backtrace");
        assert_eq!(run(&[pyspy])["tool"], "py-spy dump");
        assert_eq!(run(&[pyspy, pyspy])["tool"], "py-spy dump");
        assert_eq!(run(&[pyspy, gdb])["tool"], "stack dump");
    }

    #[test]
    fn a_native_dump_in_the_drivers_host_to_device_copy_counts_as_a_copy() {
        let d = pyspy_dump::parse_pyspy_dump(&fixture("pyspy/h100_native_itemsync_h2d_copy.txt"));
        let v = summarize(&[d], vec![]);
        assert_eq!(v["native"], true);
        assert_eq!(v["samples"], 1);
        assert_eq!(v["h2d_copy_share"], 1.0);
        assert_eq!(v["host_sync_share"], 0.0);
        // a dump without C frames says nothing of copies
        let d = pyspy_dump::parse_pyspy_dump(&fixture("pyspy/allgather_hang_accelerate.txt"));
        let v = summarize(&[d], vec![]);
        assert_eq!(v["native"], false);
        assert_eq!(v["h2d_copy_share"], 0.0);
    }

    #[test]
    fn ranks_waiting_in_different_collectives_cannot_complete() {
        // github.com/deepspeedai/DeepSpeed/issues/7461: 3 ranks in all_reduce, 5 in
        // reduce_scatter_tensor, the two groups of one comment together
        let d = pyspy_dump::parse_pyspy_dump(&fixture(
            "pyspy/mismatch_allreduce_reduce_scatter_ds7461.txt",
        ));
        let v = summarize(&[d], vec!["x".into()]);
        assert_eq!(v["collective_mismatch"]["processes"], 2);
        assert_eq!(
            v["collective_mismatch"]["ops"],
            json!(["ALLREDUCE", "REDUCE_SCATTER"])
        );
        assert_eq!(v["stuck_collectives"].as_array().unwrap().len(), 2);
        // one of them alone is one rank's moment (corpus h41_pyspy_ds7461_*)
        let one = pyspy_dump::parse_pyspy_dump(concat!(
            "Thread 33550 (active): \"MainThread\"\n",
            "    all_reduce (torch/distributed/distributed_c10d.py:2924)\n",
            "    step (deepspeed/runtime/zero/stage3.py:2120)\n",
        ));
        let v = summarize(&[one], vec![]);
        assert!(v["collective_mismatch"].is_null());
        assert_eq!(v["stuck_collectives"], json!([]));
        // bigscience chronicles-prequel.md: 2 ranks in a broadcast, 6 past it: one process in a
        // collective is no mismatch of collectives
        let d = pyspy_dump::parse_pyspy_dump(&fixture("pyspy/ranks_split_bloom_prequel.txt"));
        let v = summarize(&[d], vec![]);
        assert_eq!(v["samples"], 2);
        assert!(v["collective_mismatch"].is_null());
    }

    #[test]
    fn ranks_in_the_same_collective_or_other_programs_are_no_mismatch() {
        // two ranks in all_gather_into_tensor and _all_gather_base: one NCCL all-gather
        let same = pyspy_dump::parse_pyspy_dump(concat!(
            "Process 11: python train.py --local_rank=0\nPython v3.10.12 (/usr/bin/python3.10)\n\n",
            "Thread 11 (active): \"MainThread\"\n",
            "    all_gather_into_tensor (torch/distributed/distributed_c10d.py:2709)\n",
            "    fetch (train.py:40)\n",
            "Process 12: python train.py --local_rank=1\nPython v3.10.12 (/usr/bin/python3.10)\n\n",
            "Thread 12 (active): \"MainThread\"\n",
            "    _all_gather_base (torch/distributed/distributed_c10d.py:2800)\n",
            "    fetch (train.py:40)\n",
        ));
        assert!(summarize(&[same], vec![])["collective_mismatch"].is_null());
        // an SGLang scheduler in an all_reduce beside another program's process in a broadcast
        let other = pyspy_dump::parse_pyspy_dump(concat!(
            "Process 21: sglang::scheduler_TP0\nPython v3.12.3 (/usr/bin/python3.12)\n\n",
            "Thread 21 (active): \"MainThread\"\n",
            "    all_reduce (torch/distributed/distributed_c10d.py:3075)\n",
            "    event_loop_overlap (scheduler.py:1622)\n",
            "Process 22: sglang::detokenizer\nPython v3.12.3 (/usr/bin/python3.12)\n\n",
            "Thread 22 (active): \"MainThread\"\n",
            "    broadcast (torch/distributed/distributed_c10d.py:2800)\n",
            "    event_loop (detokenizer_manager.py:100)\n",
        ));
        assert!(summarize(&[other], vec![])["collective_mismatch"].is_null());
        // a pipeline's send on one stage and its receive on the next are one transfer
        let p2p = pyspy_dump::parse_pyspy_dump(concat!(
            "Thread 31 (active): \"MainThread\"\n",
            "    send (torch/distributed/distributed_c10d.py:1600)\n",
            "Thread 32 (active): \"MainThread\"\n",
            "    recv (torch/distributed/distributed_c10d.py:1700)\n",
        ));
        assert!(summarize(&[p2p], vec![])["collective_mismatch"].is_null());
    }

    #[test]
    fn a_crash_dump_shows_no_wait_but_an_abort_does() {
        use crate::evidence::faulthandler::parse_faulthandler_dump;
        // faulthandler's dump of a rank in a barrier (pytorch/pytorch#54818's example shape):
        // read like a py-spy dump, the thread in the collective counts
        let hang = "Thread 0x00007ff406132180 (most recent call first):\n  File \"torch/distributed/distributed_c10d.py\", line 2477 in barrier\n  File \"train.py\", line 9 in main\n";
        let v = summarize(&[parse_faulthandler_dump(hang)], vec![]);
        assert_eq!(v["collectives"][0]["op"], "barrier");
        // the same stack in a crash's dump is where the thread was when the process died
        let crash = format!("Fatal Python error: Segmentation fault\n\n{hang}");
        let v = summarize(&[parse_faulthandler_dump(&crash)], vec![]);
        assert_eq!(v["collectives"], json!([]));
        // PyTorch's NCCL watchdog ends a timed-out collective with an abort: kept
        let abort = format!("Fatal Python error: Aborted\n\n{hang}");
        let v = summarize(&[parse_faulthandler_dump(&abort)], vec![]);
        assert_eq!(v["collectives"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_pasted_dump_is_summarised() {
        let d = pyspy_dump::parse_pyspy_dump(&fixture("pyspy/allgather_hang_accelerate.txt"));
        let v = summarize(&[d], vec!["x".into()]);
        assert_eq!(v["samples"], 1);
        assert_eq!(v["backward_optimizer_share"], 1.0);
        assert_eq!(v["dataloader_share"], 0.0);
        assert_eq!(v["collectives"][0]["op"], "all_gather_into_tensor");
        assert_eq!(v["collectives"][0]["thread"], "4079");
        // one dump with a thread in an all-gather, and nothing saying the job stopped
        assert!(v["watchdog_timeout"].is_null());
        assert_eq!(v["stuck_collectives"].as_array().unwrap().len(), 0);
        let g = pyspy_dump::parse_pyspy_dump(concat!(
            "[2026-01-29 13:12:37 PP1 TP1] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n",
            "Process 88693: sglang::scheduler_PP2_TP1\n",
            "Python v3.12.3 (/usr/bin/python3.12)\n",
            "Thread 88693 (idle): \"MainThread\"\n",
            "    pthread_cond_timedwait (libc.so.6)\n",
            "    c10d::ProcessGroupGloo::RecvWork::wait (libtorch_cpu.so)\n",
        ));
        let v = summarize(&[g], vec![]);
        assert_eq!(v["watchdog_timeout"]["timeout_s"], 300.0);
        assert_eq!(v["stuck_collectives"][0]["op"], "recv");
        assert_eq!(v["stuck_collectives"][0]["thread"], "MainThread");
        let w = pyspy_dump::parse_pyspy_dump(&fixture("pyspy/worker_idle_lhotse.txt"));
        let v = summarize(&[w], vec![]);
        assert_eq!(v["samples"], 0);
        assert_eq!(v["workers"], 1);
    }

    #[test]
    fn the_live_probe_reads_with_the_same_parser() {
        let dump = "Process 7: python train.py\nPython v3.10.12 (/usr/bin/python3)\n\nThread 7 (active): \"MainThread\"\n    _try_get_data (torch/utils/data/dataloader.py:1133)\n    _get_data (torch/utils/data/dataloader.py:1294)\n    _next_data (torch/utils/data/dataloader.py:1327)\n    __next__ (torch/utils/data/dataloader.py:631)\n    main (train.py:40)\n";
        let f = main_thread(dump, 7);
        assert_eq!(
            f[0],
            (
                "_try_get_data".into(),
                "torch/utils/data/dataloader.py".into(),
                1133
            )
        );
        assert_eq!(classify(&f, &|_, _| None), "dataloader");
        let f = vec![("main".to_string(), "train.py".to_string(), 12)];
        assert_eq!(
            classify(&f, &|_, _| Some("    l = loss.item()".into())),
            "host_sync"
        );
        assert_eq!(
            classify(&f, &|_, _| Some("    out = model(x)".into())),
            "other"
        );
    }
}
