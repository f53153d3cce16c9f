//! `process` (sampled): a running training process (`--pid`): command line, state, threads,
//! environment, CPU use of the process and of its main (launch) thread, its children and how
//! many look like DataLoader workers, and its IO. Everything is read through the host's /proc,
//! so a recorded host replays it.

use super::env::parse_environ;
use super::pyspy;
use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::host::Host;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io;
use std::time::Duration;

pub struct Process;

/// Linux reports CPU time in clock ticks of 1/100 s (USER_HZ) on every architecture gpufix
/// supports.
const TICKS_PER_SEC: f64 = 100.0;
/// The window used when `--sample` is zero: long enough to see a busy thread, short enough not
/// to slow a plan down.
const DEFAULT_WINDOW: Duration = Duration::from_millis(100);

/// The fields of `/proc/PID/stat` the probe uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcStat {
    pub pid: u32,
    pub comm: String,
    pub state: String,
    pub ppid: u32,
    /// utime + stime, clock ticks
    pub cpu_ticks: u64,
    pub threads: u64,
    /// start time after boot, clock ticks
    pub start_ticks: u64,
}

/// Parse `/proc/PID/stat` with procfs's parser (it reads from bytes, so it works on what the
/// [`Host`] returns: a live file, a snapshot or a tree under `--root`).
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    use procfs::FromRead;
    let st = procfs::process::Stat::from_read(text.as_bytes()).ok()?;
    Some(ProcStat {
        pid: u32::try_from(st.pid).ok()?,
        comm: st.comm,
        state: st.state.to_string(),
        ppid: u32::try_from(st.ppid).ok()?,
        cpu_ticks: st.utime + st.stime,
        threads: u64::try_from(st.num_threads).ok()?,
        start_ticks: st.starttime,
    })
}

fn read_stat(host: &dyn Host, path: &str) -> io::Result<ProcStat> {
    let b = host.read_file(path)?;
    parse_stat(&String::from_utf8_lossy(&b)).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("`{path}` does not parse"),
        )
    })
}

fn cmdline(host: &dyn Host, pid: u32) -> Vec<String> {
    host.read_file(&format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn exe_name(argv: &[String], comm: &str) -> String {
    argv.first()
        .and_then(|a| a.rsplit('/').next())
        .filter(|a| !a.is_empty())
        .unwrap_or(comm)
        .to_string()
}

/// Children of `pid`: `/proc/PID/task/*/children` where the kernel has it, else a scan of
/// every `/proc/N/stat` for parent `pid`.
fn children(host: &dyn Host, pid: u32, tasks: &[String]) -> Vec<u32> {
    let mut found = Vec::new();
    let mut any_file = false;
    for tid in tasks {
        if let Ok(b) = host.read_file(&format!("/proc/{pid}/task/{tid}/children")) {
            any_file = true;
            found.extend(
                String::from_utf8_lossy(&b)
                    .split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    if !any_file {
        for entry in host.read_dir("/proc").unwrap_or_default() {
            let Ok(n) = entry.parse::<u32>() else {
                continue;
            };
            if let Ok(s) = read_stat(host, &format!("/proc/{n}/stat")) {
                if s.ppid == pid {
                    found.push(n);
                }
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// A worker at this share of a core or more is saturated (the calibration run on the H200:
/// starved jobs' workers at 100.4-100.6%, the healthy job's eight at 53-59%).
const SATURATED_PCT: f64 = 85.0;

/// Seconds since the process started: field 22 of stat against /proc/uptime.
fn age_s(host: &dyn Host, s: &ProcStat) -> Option<f64> {
    let start = s.start_ticks as f64;
    let up: f64 = String::from_utf8_lossy(&host.read_file("/proc/uptime").ok()?)
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(((up - start / TICKS_PER_SEC) * 10.0).round() / 10.0)
}

/// A forked DataLoader worker keeps its parent's command line; torch names them
/// `pt_data_worker` (recent versions); spawned ones run `python`.
fn looks_like_worker(parent_exe: &str, child_exe: &str, child_comm: &str, child_cmd: &str) -> bool {
    if child_cmd.contains("resource_tracker") || child_cmd.contains("compile_worker") {
        return false;
    }
    child_comm.starts_with("pt_data_worker")
        || child_comm.starts_with("python")
        || (!parent_exe.is_empty() && child_exe == parent_exe)
}

/// What a process found by [`job_census`] is to the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    /// The training process judged (the first rank under a launcher).
    Main,
    /// A child of a training process that looks like a DataLoader worker.
    Worker,
    /// A launcher, another rank, or another child.
    Other,
}

/// The job's processes as the `process` probe finds them: the launcher (when `pid` is one),
/// its training processes, and each one's children, DataLoader workers told by the same test
/// the worker census uses. (pid, what it is, the stat read), main first: the reading is the
/// caller's to use (a recorded host's readings are a sequence; each is taken once).
pub fn job_census(host: &dyn Host, pid: u32) -> Vec<(u32, Member, ProcStat)> {
    let ranks = super::config_sources::training_processes(host, pid);
    let mut out: Vec<(u32, Member, ProcStat)> = Vec::new();
    for (i, rank) in ranks.iter().enumerate() {
        let Ok(st) = read_stat(host, &format!("/proc/{rank}/stat")) else {
            continue;
        };
        let argv = cmdline(host, *rank);
        let exe = exe_name(&argv, &st.comm);
        let role = if i == 0 { Member::Main } else { Member::Other };
        out.push((*rank, role, st.clone()));
        let tasks = host
            .read_dir(&format!("/proc/{rank}/task"))
            .unwrap_or_default();
        for k in children(host, *rank, &tasks) {
            let Ok(ks) = read_stat(host, &format!("/proc/{k}/stat")) else {
                continue;
            };
            let kargv = cmdline(host, k);
            let worker = looks_like_worker(
                &exe,
                &exe_name(&kargv, &ks.comm),
                &ks.comm,
                &kargv.join(" "),
            );
            let role = if worker {
                Member::Worker
            } else {
                Member::Other
            };
            if !out.iter().any(|(p, _, _)| *p == k) {
                out.push((k, role, ks));
            }
        }
    }
    if !ranks.contains(&pid)
        && let Ok(st) = read_stat(host, &format!("/proc/{pid}/stat"))
    {
        out.push((pid, Member::Other, st));
    }
    out
}

struct Reading {
    t: f64,
    process: Option<ProcStat>,
    main_thread: Option<ProcStat>,
    children: BTreeMap<u32, ProcStat>,
}

/// One reading of the CPU counters; `process` is passed in when it was just read (so a
/// recorded sequence of `/proc/PID/stat` is consumed one reading at a time).
fn reading(host: &dyn Host, pid: u32, kids: &[u32], process: Option<ProcStat>) -> Reading {
    Reading {
        t: host.now(),
        process: process.or_else(|| read_stat(host, &format!("/proc/{pid}/stat")).ok()),
        main_thread: read_stat(host, &format!("/proc/{pid}/task/{pid}/stat")).ok(),
        children: kids
            .iter()
            .filter_map(|k| {
                read_stat(host, &format!("/proc/{k}/stat"))
                    .ok()
                    .map(|s| (*k, s))
            })
            .collect(),
    }
}

fn pct(a: Option<&ProcStat>, b: Option<&ProcStat>, secs: f64) -> Option<f64> {
    let (a, b) = (a?, b?);
    let p = b.cpu_ticks.saturating_sub(a.cpu_ticks) as f64 / TICKS_PER_SEC / secs * 100.0;
    Some((p * 10.0).round() / 10.0)
}

fn field_kb(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Parameters: `optional`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalParams {
    /// without --pid, answer `{attached: false}` instead of not-applicable (for rules that also judge a config)
    #[serde(default)]
    pub optional: bool,
}

impl Probe for Process {
    type Params = OptionalParams;
    fn name(&self) -> &'static str {
        "process"
    }
    fn doc(&self) -> &'static str {
        "A running training process (--pid): state, environment, CPU use of it and its main thread, children, DataLoader workers, IO."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "attached",
                "true when --pid/--job named a running process this probe read",
            ),
            (
                "starting",
                "the job started moments ago (its figures are not settled yet)",
            ),
            (
                "gpu_util",
                "GPU utilization of the GPUs the process uses, percent",
            ),
            ("ranks", "training ranks (processes) on this host"),
            (
                "workers_saturated",
                "DataLoader workers busy on a CPU most of the window",
            ),
            (
                "workers_cpu_pct_mean",
                "mean CPU percent of the DataLoader workers",
            ),
            ("pyspy", "py-spy sample of the main thread, when available"),
            ("pid", "the process id"),
            (
                "gone",
                "true when the process does not exist (then no other fields but pid)",
            ),
            ("comm", "kernel's short name (`python3`, `pt_main_thread`)"),
            ("cmdline", "command line joined with spaces"),
            ("argv", "command line as a list"),
            (
                "exe_name",
                "basename of argv[0] (comm when the command line is empty)",
            ),
            ("state", "R, S, D, Z, T, ..."),
            ("threads", "thread count"),
            ("rss_kb", "resident memory, KiB"),
            (
                "environ",
                "its environment, name -> value (absent when unreadable, see `unavailable`)",
            ),
            ("window_s", "seconds CPU use was measured over"),
            (
                "cpu_pct",
                "CPU percent of the whole process over the window (100 = one core)",
            ),
            (
                "main_thread_cpu_pct",
                "CPU percent of the main thread, which launches the CUDA kernels",
            ),
            ("children[]", "{pid, comm, cmdline, state, cpu_pct}"),
            (
                "dataloader_workers",
                "children that look like DataLoader workers",
            ),
            (
                "io.read_bytes / io.write_bytes",
                "bytes read from and written to storage (absent when /proc/PID/io is unreadable)",
            ),
            (
                "attached",
                "true (false, with no other field, when `optional` and no --pid)",
            ),
            (
                "launcher_pid / ranks",
                "when attached to torchrun/deepspeed/accelerate: its pid, and the training processes under it (the first is judged)",
            ),
            ("age_s", "seconds since the process started"),
            (
                "workers_cpu_pct_mean / workers_saturated",
                "the worker census: mean CPU of the DataLoader workers, and how many are near a full core",
            ),
            (
                "gpu_util",
                "mean utilization of the busiest GPU over the window (NVML)",
            ),
            (
                "gpu_mem_growth_mib / starting",
                "GPU memory growth over the window; starting = no kernels yet while memory grows",
            ),
            (
                "pyspy",
                "{available, samples, dataloader_share, host_sync_share, backward_optimizer_share, copy_share, pin_memory_thread} or {available: false, hint}",
            ),
            (
                "unavailable",
                "why environ or io are missing (usually another user's process)",
            ),
        ]
    }
    fn sampled(&self) -> bool {
        true
    }
    fn run(&self, params: &OptionalParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let Some(pid) = ctx.inputs.pid else {
            if params.optional {
                return ProbeOutcome::Value(json!({ "attached": false }));
            }
            return ProbeOutcome::NotApplicable("needs --pid or --job".into());
        };
        let host = ctx.host;
        // attached to a launcher (torchrun, deepspeed, accelerate): judge its first rank
        let given = pid;
        let ranks = super::config_sources::training_processes(host, pid);
        let pid = ranks[0];
        let stat_path = format!("/proc/{pid}/stat");
        let first = match read_stat(host, &stat_path) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return ProbeOutcome::Value(json!({ "pid": pid, "gone": true }));
            }
            Err(e) => return ProbeOutcome::Unknown(format!("cannot read `{stat_path}`: {e}")),
        };
        let argv = cmdline(host, pid);
        let exe = exe_name(&argv, &first.comm);
        let mut out = Map::new();
        let mut unavailable = Map::new();
        out.insert("pid".into(), json!(pid));
        out.insert("attached".into(), json!(true));
        out.insert("gone".into(), json!(false));
        if given != pid {
            out.insert("launcher_pid".into(), json!(given));
        }
        out.insert("ranks".into(), json!(ranks.len()));
        if let Some(age) = age_s(host, &first) {
            out.insert("age_s".into(), json!(age));
        }
        out.insert("comm".into(), json!(first.comm));
        out.insert("cmdline".into(), json!(argv.join(" ")));
        out.insert("argv".into(), json!(argv));
        out.insert("exe_name".into(), json!(exe));
        out.insert("state".into(), json!(first.state));
        out.insert("threads".into(), json!(first.threads));
        if let Ok(b) = host.read_file(&format!("/proc/{pid}/status")) {
            if let Some(rss) = field_kb(&String::from_utf8_lossy(&b), "VmRSS") {
                out.insert("rss_kb".into(), json!(rss));
            }
        }
        match host.read_file(&format!("/proc/{pid}/environ")) {
            Ok(b) => {
                let vars: Map<String, Value> = parse_environ(&b)
                    .into_iter()
                    .map(|(k, v)| (k, json!(v)))
                    .collect();
                out.insert("environ".into(), Value::Object(vars));
            }
            Err(e) => {
                unavailable.insert(
                    "environ".into(),
                    json!(format!("cannot read `/proc/{pid}/environ`: {e}")),
                );
            }
        }

        let tasks = host
            .read_dir(&format!("/proc/{pid}/task"))
            .unwrap_or_default();
        let kids = children(host, pid, &tasks);
        let window = if ctx.sample.is_zero() {
            DEFAULT_WINDOW
        } else {
            ctx.sample
        };
        let r0 = reading(host, pid, &kids, Some(first.clone()));
        // GPU readings over the same window: utilization while we watch (max over GPUs of
        // the mean), and whether memory is still growing (a job still starting)
        let mut gpu: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
        let mut tick = || {
            if let Ok(samples) = host.nvml_sample() {
                for g in samples {
                    let e = gpu.entry(g.index).or_default();
                    if let Some(u) = g.utilization_gpu.ok() {
                        e.0.push(f64::from(*u));
                    }
                    if let Some(m) = g.memory_used.ok() {
                        e.1.push(*m as f64 / 1048576.0);
                    }
                }
            }
        };
        let spy = pyspy::sample(host, pid, window, &argv, &mut tick);
        let r1 = reading(host, pid, &kids, None);
        let measured = r1.t - r0.t;
        let secs = if measured > 0.0 {
            measured
        } else {
            window.as_secs_f64()
        };
        out.insert("window_s".into(), json!(secs));
        if r1.process.is_none() {
            // It exited while we watched.
            out.insert("gone".into(), json!(true));
        }
        if let Some(p) = pct(r0.process.as_ref(), r1.process.as_ref(), secs) {
            out.insert("cpu_pct".into(), json!(p));
        }
        if let Some(p) = pct(r0.main_thread.as_ref(), r1.main_thread.as_ref(), secs) {
            out.insert("main_thread_cpu_pct".into(), json!(p));
        }
        let mut child_list = Vec::new();
        let mut workers = 0;
        let mut worker_cpu: Vec<f64> = Vec::new();
        for k in &kids {
            let Some(s) = r1.children.get(k).or_else(|| r0.children.get(k)) else {
                continue;
            };
            let kargv = cmdline(host, *k);
            let kcmd = kargv.join(" ");
            if looks_like_worker(&exe, &exe_name(&kargv, &s.comm), &s.comm, &kcmd) {
                workers += 1;
                if let Some(p) = pct(r0.children.get(k), r1.children.get(k), secs) {
                    worker_cpu.push(p);
                }
            }
            let mut c = Map::new();
            c.insert("pid".into(), json!(k));
            c.insert("comm".into(), json!(s.comm));
            c.insert("cmdline".into(), json!(kcmd));
            c.insert("state".into(), json!(s.state));
            if let Some(p) = pct(r0.children.get(k), r1.children.get(k), secs) {
                c.insert("cpu_pct".into(), json!(p));
            }
            child_list.push(Value::Object(c));
        }
        out.insert("children".into(), Value::Array(child_list));
        out.insert("dataloader_workers".into(), json!(workers));
        // the census: how busy the workers are (near a full core each = the pipeline is CPU-bound)
        if !worker_cpu.is_empty() {
            let mean = worker_cpu.iter().sum::<f64>() / worker_cpu.len() as f64;
            out.insert(
                "workers_cpu_pct_mean".into(),
                json!((mean * 10.0).round() / 10.0),
            );
            out.insert(
                "workers_saturated".into(),
                json!(worker_cpu.iter().filter(|c| **c >= SATURATED_PCT).count()),
            );
        }
        out.insert("pyspy".into(), spy);
        // the busiest GPU over the window
        let busiest = gpu
            .values()
            .filter(|(u, _)| !u.is_empty())
            .map(|(u, m)| {
                (
                    u.iter().sum::<f64>() / u.len() as f64,
                    u.iter().cloned().fold(0.0, f64::max),
                    m,
                )
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((mean, max, mem)) = busiest {
            out.insert("gpu_util".into(), json!((mean * 10.0).round() / 10.0));
            let growth = match (mem.first(), mem.last()) {
                (Some(a), Some(b)) => b - a,
                _ => 0.0,
            };
            out.insert("gpu_mem_growth_mib".into(), json!(growth.round()));
            // start-up: no kernels yet while memory is still being allocated
            out.insert("starting".into(), json!(max < 1.0 && growth > 64.0));
        }
        match host.read_file(&format!("/proc/{pid}/io")) {
            Ok(b) => {
                let t = String::from_utf8_lossy(&b);
                let mut io = Map::new();
                for key in ["read_bytes", "write_bytes"] {
                    if let Some(v) = field_kb(&t, key) {
                        io.insert(key.into(), json!(v));
                    }
                }
                out.insert("io".into(), Value::Object(io));
            }
            Err(e) => {
                unavailable.insert(
                    "io".into(),
                    json!(format!("cannot read `/proc/{pid}/io`: {e}")),
                );
            }
        }
        if !unavailable.is_empty() {
            out.insert("unavailable".into(), Value::Object(unavailable));
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::real::RealHost;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};

    fn stat(pid: u32, comm: &str, state: &str, ppid: u32, ticks: u64, threads: u64) -> String {
        format!(
            "{pid} ({comm}) {state} {ppid} 1 1 0 -1 4194304 100 0 0 0 {ticks} 0 0 0 20 0 {threads} 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        )
    }

    /// A training process (pid 100, main thread busy) with two DataLoader workers and the
    /// multiprocessing resource tracker, read twice 1 s apart.
    fn host() -> SnapshotHost {
        let mut h = SnapshotHost::empty();
        h.set_file_sequence(
            "/proc/100/stat",
            &[
                stat(100, "python3", "S", 1, 1000, 12),
                stat(100, "python3", "S", 1, 1190, 12),
            ],
        );
        h.set_file_sequence(
            "/proc/100/task/100/stat",
            &[
                stat(100, "python3", "R", 1, 500, 12),
                stat(100, "python3", "R", 1, 598, 12),
            ],
        );
        h.set_file(
            "/proc/100/cmdline",
            "/usr/bin/python3\0train.py\0--epochs\x00001\0",
        );
        h.set_file("/proc/100/environ", "CUDA_LAUNCH_BLOCKING=1\0HOME=/root\0");
        h.set_file("/proc/100/status", "Name:\tpython3\nVmRSS:\t  204800 kB\n");
        h.set_file(
            "/proc/100/io",
            "rchar: 5\nread_bytes: 4096\nwrite_bytes: 0\n",
        );
        h.set_dir("/proc/100/task", &["100", "101"]);
        h.set_file("/proc/100/task/100/children", "201 202 203");
        h.set_file("/proc/100/task/101/children", "");
        h.set_file_sequence(
            "/proc/201/stat",
            &[
                stat(201, "pt_data_worker", "R", 100, 0, 1),
                stat(201, "pt_data_worker", "R", 100, 50, 1),
            ],
        );
        h.set_file(
            "/proc/201/cmdline",
            "/usr/bin/python3\0train.py\0--epochs\x00001\0",
        );
        h.set_file("/proc/202/stat", stat(202, "python3", "S", 100, 0, 1));
        h.set_file("/proc/202/cmdline", "/usr/bin/python3\0train.py\0");
        h.set_file("/proc/203/stat", stat(203, "python3", "S", 100, 0, 1));
        h.set_file(
            "/proc/203/cmdline",
            "/usr/bin/python3\0-c\0from multiprocessing.resource_tracker import main;main(8)\0",
        );
        h.set_now(vec![10.0, 11.0]);
        h
    }

    #[test]
    fn parses_stat_with_awkward_comm() {
        let s = parse_stat(&stat(7, "a (b) c", "D", 3, 42, 5)).unwrap();
        assert_eq!(s.comm, "a (b) c");
        assert_eq!(s.state, "D");
        assert_eq!(s.ppid, 3);
        assert_eq!(s.cpu_ticks, 42);
        assert_eq!(s.threads, 5);
    }

    #[test]
    fn reports_cpu_children_workers_and_environment() {
        let i = Inputs {
            pid: Some(100),
            ..Default::default()
        };
        let v = value_of(run_with(
            &Process,
            &host(),
            json!({}),
            &i,
            Duration::from_secs(1),
        ));
        assert_eq!(v["cpu_pct"], json!(190.0));
        assert_eq!(v["main_thread_cpu_pct"], json!(98.0));
        assert_eq!(v["exe_name"], json!("python3"));
        assert_eq!(
            v["cmdline"],
            json!("/usr/bin/python3 train.py --epochs 001")
        );
        assert_eq!(v["threads"], json!(12));
        assert_eq!(v["rss_kb"], json!(204800));
        assert_eq!(v["environ"]["CUDA_LAUNCH_BLOCKING"], json!("1"));
        assert_eq!(v["children"].as_array().unwrap().len(), 3);
        assert_eq!(v["children"][0]["cpu_pct"], json!(50.0));
        assert_eq!(v["dataloader_workers"], json!(2));
        assert_eq!(v["io"]["read_bytes"], json!(4096));
        assert!(v.get("unavailable").is_none());
    }

    #[test]
    fn children_found_by_scanning_proc_when_no_children_files() {
        let mut h = host();
        h.remove_file("/proc/100/task/100/children");
        h.remove_file("/proc/100/task/101/children");
        h.set_dir("/proc", &["1", "100", "201", "self", "999"]);
        h.set_file("/proc/1/stat", stat(1, "init", "S", 0, 0, 1));
        h.set_file("/proc/999/stat", stat(999, "bash", "S", 1, 0, 1));
        let i = Inputs {
            pid: Some(100),
            ..Default::default()
        };
        let v = value_of(run_with(
            &Process,
            &h,
            json!({}),
            &i,
            Duration::from_secs(1),
        ));
        let pids: Vec<&Value> = v["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["pid"])
            .collect();
        assert_eq!(pids, vec![&json!(201)]);
    }

    #[test]
    fn needs_a_pid_and_reports_a_gone_one() {
        let h = host();
        assert_eq!(
            run_with(&Process, &h, json!({}), &Inputs::default(), Duration::ZERO),
            ProbeOutcome::NotApplicable("needs --pid or --job".into())
        );
        let i = Inputs {
            pid: Some(4242),
            ..Default::default()
        };
        let v = value_of(run_with(&Process, &h, json!({}), &i, Duration::ZERO));
        assert_eq!(v, json!({"pid": 4242, "gone": true}));
    }

    #[test]
    fn reads_this_test_process_live() {
        let i = Inputs {
            pid: Some(std::process::id()),
            ..Default::default()
        };
        let v = value_of(run_with(
            &Process,
            &RealHost::new(None),
            json!({}),
            &i,
            Duration::ZERO,
        ));
        assert_eq!(v["gone"], json!(false));
        assert!(v["threads"].as_u64().unwrap() >= 1);
        assert!(v["cpu_pct"].as_f64().is_some());
        assert!(v["window_s"].as_f64().unwrap() >= 0.1);
    }
}
