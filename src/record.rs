//! `gpufix record`: sample a running job and its host over a window into a [`RecordFile`]
//! ([`crate::vocab::record`]), so that what the job did is kept after the command ends.
//!
//! Every reading goes through the [`Host`] interface, as the probes' do, so a recorded host
//! drives the same code in tests (its `sleep` returns at once; its time is then the nominal
//! `k × interval`). What is read, per sample:
//! - each GPU through [`Host::nvml_sample`] (utilization, memory, SM clock, power, clocks-event
//!   reasons) and PCIe rx/tx as the rate between two readings of [`Host::nvml_pcie_bytes`]'s
//!   counters (on drivers without them, [`Host::nvml_pcie`]); uuid, name and memory total once from
//!   [`Host::nvml`]. A metric NVML says is not supported is left out; one failed reading is
//!   `null`.
//! - each process of the job, as the worker census finds them
//!   ([`crate::probes::process::job_census`], taken again every few seconds: a DataLoader
//!   starts new workers each epoch): CPU % from `/proc/PID/stat` deltas, its state letter, and
//!   `/proc/PID/io` byte deltas, parsed with procfs-core's parsers.
//! - the node: CPU busy from `/proc/stat` deltas, CPU and IO pressure from `/proc/pressure/*`
//!   `some total=` deltas.
//! - the main thread, from `py-spy dump` when py-spy is there, less often than the rest (a dump
//!   stops the job for the moment py-spy reads its stacks: `pyspy_every` samples apart, one a
//!   second by default), classed by [`crate::probes::pyspy::classify`].
//! - the job's progress from `--log FILE` ([`progress`]).
//!
//! A point stands for the interval that ends at its `t`: the first sample is taken one
//! interval after a baseline reading, so every CPU, IO and pressure value is a real delta.

pub mod progress;

use crate::host::{Field, GpuSample, Host, PcieBytes};
use crate::probes::process::{Member, job_census, parse_stat};
use crate::report::{Report, Verdict};
use crate::vocab::record::*;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Linux's USER_HZ on every architecture gpufix supports.
const TICKS_PER_SEC: f64 = 100.0;
/// How often the job's processes are looked for again.
const CENSUS_EVERY: Duration = Duration::from_secs(5);
/// Most processes followed (a job with hundreds of workers keeps the first ones).
const MAX_PROCESSES: usize = 256;
/// PCIe throughput costs NVML a 20 ms counter window per GPU and direction: where the byte
/// counters cannot be read, read it only when that stays well inside the interval.
const MAX_PCIE_GPUS: usize = 4;

/// How PCIe rx/tx is read.
#[derive(Debug, Clone)]
enum Pcie {
    Off,
    /// [`Host::nvml_pcie`]: NVML's own 20 ms window per GPU and direction (drivers before 535).
    Throughput,
    /// [`Host::nvml_pcie_bytes`]: the bytes the counters moved over the interval.
    Counters(Counters),
}

/// How often the PCIe counters are read within an interval while they may be 32 bits wide:
/// on the H200 (driver 580) they wrap at 4 GiB, which a Gen5 x16 link (64 GB/s) moves in 67
/// ms; read every 50 ms, at most one wrap lies between two readings.
const PCIE_POLL: Duration = Duration::from_millis(50);

/// The longest time between two readings of a 32-bit PCIe counter that still counts: a counter
/// wraps twice in 0.5 s only above 17 GB/s sustained (at the 50 ms polls, above 170 GB/s, past
/// any PCIe 5.0 x16 link); readings further apart leave the interval without a rate.
const MAX_GAP_S: f64 = 0.5;

/// The PCIe counters of every GPU over the current interval.
#[derive(Debug, Clone, Default)]
struct Counters {
    /// Per GPU: the last reading and the bytes moved since the interval began.
    gpus: BTreeMap<u32, CounterGpu>,
    /// When the interval began (host clock).
    since: f64,
    /// When the counters were last read (host clock).
    last_t: f64,
    /// A counter above 32 bits was seen: they are 64 bits wide, no wrap to watch for.
    wide: bool,
}

/// One GPU's counters: the last reading of (rx, tx) and the bytes each moved this interval.
#[derive(Debug, Clone)]
struct CounterGpu {
    last: (Field<u64>, Field<u64>),
    moved: (Field<u64>, Field<u64>),
}

/// One GPU's PCIe rates over an interval, MB/s.
#[derive(Debug, Clone, PartialEq)]
struct PcieRate {
    index: u32,
    rx: Field<f64>,
    tx: Field<f64>,
}

/// Bytes a counter moved from `old` to `new`: a counter that went back but was within 32 bits
/// wrapped once (NVML's counters are 32 bits wide on some drivers); a wide one was reset.
fn moved(old: u64, new: u64) -> Option<u64> {
    if new >= old {
        Some(new - old)
    } else if old <= u64::from(u32::MAX) {
        Some(new + (1u64 << 32) - old)
    } else {
        None
    }
}

/// Add one reading of a counter to the bytes it moved over the interval; the first problem of
/// the interval (not supported, an error, a reset) stays its value.
fn add_reading(so_far: &mut Field<u64>, last: &Field<u64>, new: &Field<u64>) {
    let Field::Ok(m) = *so_far else { return };
    *so_far = match (last, new) {
        (Field::Ok(a), Field::Ok(b)) => match moved(*a, *b) {
            Some(d) => Field::Ok(m + d),
            None => Field::Error("the counter went back (reset)".into()),
        },
        (_, Field::NotSupported) => Field::NotSupported,
        (_, Field::Error(e)) => Field::Error(e.clone()),
        // no earlier reading to count from
        _ => Field::Error("no earlier reading".into()),
    };
}

/// Whether a reading shows a counter wider than 32 bits.
fn wide(b: &PcieBytes) -> bool {
    [&b.rx, &b.tx]
        .iter()
        .any(|f| f.ok().is_some_and(|v| *v > u64::from(u32::MAX)))
}

impl Counters {
    /// The counters' first reading, at `t`: the baseline of the first interval.
    fn start(now: Vec<PcieBytes>, t: f64) -> Counters {
        let mut c = Counters {
            since: t,
            last_t: t,
            ..Counters::default()
        };
        for b in now {
            c.wide |= wide(&b);
            c.gpus.insert(
                b.index,
                CounterGpu {
                    last: (b.rx, b.tx),
                    moved: (Field::Ok(0), Field::Ok(0)),
                },
            );
        }
        c
    }

    /// One more reading within the interval, taken at `t`. Readings of 32-bit counters more than
    /// [`MAX_GAP_S`] apart (gpufix was stopped, or starved of CPU) cannot tell one wrap from
    /// two: the interval has no rate.
    fn read(&mut self, now: Vec<PcieBytes>, t: f64) {
        let gap = t - self.last_t;
        self.last_t = t;
        for b in now {
            self.wide |= wide(&b);
            let g = self.gpus.entry(b.index).or_insert_with(|| CounterGpu {
                last: (Field::NotSupported, Field::NotSupported),
                moved: (Field::Ok(0), Field::Ok(0)),
            });
            add_reading(&mut g.moved.0, &g.last.0, &b.rx);
            add_reading(&mut g.moved.1, &g.last.1, &b.tx);
            if !self.wide && gap > MAX_GAP_S {
                let why = format!(
                    "{gap:.1} s between two readings of a 32-bit counter: a wrap may be unseen"
                );
                for m in [&mut g.moved.0, &mut g.moved.1] {
                    if matches!(m, Field::Ok(_)) {
                        *m = Field::Error(why.clone());
                    }
                }
            }
            g.last = (b.rx, b.tx);
        }
    }

    /// The interval ends at `t`: each GPU's rates over it, MB/s; the next interval begins.
    fn rates(&mut self, t: f64) -> Vec<PcieRate> {
        let secs = t - self.since;
        self.since = t;
        let rate = |m: &Field<u64>| match m {
            Field::Ok(b) if secs > 0.0 => Field::Ok(*b as f64 / secs / 1e6),
            Field::Ok(_) => Field::Error("no time between two readings".into()),
            Field::NotSupported => Field::NotSupported,
            Field::Error(e) => Field::Error(e.clone()),
        };
        self.gpus
            .iter_mut()
            .map(|(i, g)| {
                let r = PcieRate {
                    index: *i,
                    rx: rate(&g.moved.0),
                    tx: rate(&g.moved.1),
                };
                g.moved = (Field::Ok(0), Field::Ok(0));
                r
            })
            .collect()
    }
}

/// What to record.
#[derive(Debug, Clone)]
pub struct Options {
    pub pid: Option<u32>,
    pub duration: Duration,
    pub interval: Duration,
    /// The training log to read the job's progress from.
    pub log: Option<PathBuf>,
    /// A py-spy dump every this many samples (0: none).
    pub pyspy_every: u32,
    /// Write a checkpoint this often.
    pub checkpoint: Duration,
}

/// One metric column while it fills: whether the GPU or kernel ever supported it.
#[derive(Debug, Clone, Default)]
struct Col {
    vals: Column,
    supported: bool,
}

impl Col {
    fn push(&mut self, v: Option<f64>, supported: bool) {
        self.supported |= supported;
        self.vals.push(v);
    }
    fn field<T: Copy>(&mut self, f: &Field<T>, to: impl Fn(T) -> f64) {
        match f {
            Field::Ok(v) => self.push(Some(to(*v)), true),
            Field::NotSupported => self.push(None, false),
            Field::Error(_) => self.push(None, true),
        }
    }
    fn column(&self) -> Option<Column> {
        self.supported.then(|| self.vals.clone())
    }
}

#[derive(Debug, Clone, Default)]
struct GpuAcc {
    uuid: Option<String>,
    name: Option<String>,
    memory_total_mib: Option<f64>,
    t: Vec<f64>,
    util: Col,
    mem_util: Col,
    mem_used: Col,
    clock: Col,
    power: Col,
    rx: Col,
    tx: Col,
    reasons: Vec<Option<Vec<String>>>,
    reasons_supported: bool,
    /// The entries at the front that are merged chunks already ([`Recorder::chunk`]).
    merged: usize,
}

#[derive(Debug, Clone)]
struct ProcAcc {
    role: ProcessRole,
    name: String,
    t: Vec<f64>,
    cpu: Column,
    /// The kernel's one-letter state (`/proc/PID/stat`), a `char` rather than a `String` each.
    state: Vec<Option<char>>,
    read: Col,
    write: Col,
    /// The last reading.
    last: Option<ProcReading>,
    gone: bool,
    merged: usize,
}

/// One reading of a process: (t, cpu ticks, io bytes read and written).
type ProcReading = (f64, u64, Option<(u64, u64)>);
/// One reading of the node: (t, (busy ticks, all ticks), cpu `some` µs, io `some` µs).
type NodeReading = (f64, Option<(u64, u64)>, Option<u64>, Option<u64>);

#[derive(Debug, Clone, Default)]
struct NodeAcc {
    t: Vec<f64>,
    busy: Col,
    cpu_psi: Col,
    io_psi: Col,
    last: Option<NodeReading>,
    merged: usize,
}

/// The recording as it fills; [`Recorder::file`] turns it into a [`RecordFile`] at any moment
/// (a checkpoint) and at the end.
pub struct Recorder<'h> {
    host: &'h dyn Host,
    opts: Options,
    host_name: String,
    started_at: String,
    t0: f64,
    samples: u64,
    /// Intervals that had no sample: a recorder that wakes more than one interval late (stopped
    /// with SIGSTOP, or starved of CPU) takes one sample then instead of a burst of catch-up
    /// samples a few microseconds apart. The interval the last sample closed is
    /// [`Recorder::slot`].
    skipped: u64,
    /// Raw samples per kept point, fixed at the start from the window's length so that the whole
    /// window fits [`MAX_POINTS`]: every `chunk` samples of a group are merged as they arrive, and
    /// memory stays bounded however long and fine the window (1 h at 10 ms: 360,000 samples).
    chunk: usize,
    gpus: BTreeMap<u32, GpuAcc>,
    procs: BTreeMap<u32, ProcAcc>,
    node: NodeAcc,
    main_thread: Option<MainThreadSeries>,
    pyspy: Option<(String, crate::probes::pyspy::Script)>,
    progress: Option<progress::Tail>,
    notes: Vec<String>,
    job: Option<RecordJob>,
    interrupted_by: Option<String>,
    last_census: f64,
    pcie: Pcie,
}

fn redact(s: &str) -> String {
    crate::privacy::redact_text(s).into_owned()
}

impl<'h> Recorder<'h> {
    /// Start: the host's identity, the GPUs' fixed facts, the job's processes and the baseline
    /// readings every delta is taken against.
    pub fn start(host: &'h dyn Host, opts: Options) -> Recorder<'h> {
        let t0 = if host.is_live() { host.now() } else { 0.0 };
        let started_at = if host.is_live() {
            jiff::Timestamp::from_millisecond((t0 * 1000.0) as i64)
                .map(|t| t.to_string())
                .unwrap_or_default()
        } else {
            jiff::Timestamp::now().to_string()
        };
        let mut r = Recorder {
            host,
            host_name: crate::host::identity(host).0,
            started_at,
            t0,
            samples: 0,
            skipped: 0,
            chunk: chunk_for(opts.duration, opts.interval),
            gpus: BTreeMap::new(),
            procs: BTreeMap::new(),
            node: NodeAcc::default(),
            main_thread: None,
            pyspy: None,
            progress: None,
            notes: Vec::new(),
            job: None,
            interrupted_by: None,
            last_census: 0.0,
            pcie: Pcie::Off,
            opts,
        };
        match host.nvml() {
            Ok(full) => {
                for g in &full.gpus {
                    let acc = r.gpus.entry(g.index).or_default();
                    acc.uuid = g.uuid.ok().cloned();
                    acc.name = g.name.ok().cloned();
                    acc.memory_total_mib = g.memory_total.ok().map(|b| *b as f64 / 1048576.0);
                }
                r.pcie = match host.nvml_pcie_bytes() {
                    // the counters' first reading is the baseline of the first rate
                    Ok(b) if b.iter().any(|g| g.rx.ok().is_some() || g.tx.ok().is_some()) => {
                        let now = if host.is_live() { host.now() } else { 0.0 };
                        Pcie::Counters(Counters::start(b, now))
                    }
                    _ if full.gpus.len() <= MAX_PCIE_GPUS => Pcie::Throughput,
                    _ => {
                        r.notes.push(format!(
                            "PCIe throughput not read: {} GPUs and no PCIe byte counters (driver before 535); NVML counts each GPU over 20 ms, which gpufix does for at most {MAX_PCIE_GPUS} within one interval",
                            full.gpus.len()
                        ));
                        Pcie::Off
                    }
                };
            }
            Err(e) => r.notes.push(format!("NVML: {e}")),
        }
        // the window starts now: starting NVML (a second or more on some hosts) is not in it
        if host.is_live() {
            r.t0 = host.now();
            r.started_at = jiff::Timestamp::from_millisecond((r.t0 * 1000.0) as i64)
                .map(|t| t.to_string())
                .unwrap_or_default();
        }
        if let Some(pid) = r.opts.pid {
            let argv: Vec<String> = host
                .read_file(&format!("/proc/{pid}/cmdline"))
                .map(|b| {
                    b.split(|c| *c == 0)
                        .filter(|a| !a.is_empty())
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let user = host
                .read_file(&format!("/proc/{pid}/status"))
                .ok()
                .and_then(|b| crate::authority::Owner::from_status(&String::from_utf8_lossy(&b)))
                .map(|o| o.describe());
            r.job = Some(RecordJob {
                pid,
                command: redact(&argv.join(" ")),
                user,
                config: None,
            });
            if r.opts.pyspy_every > 0 {
                match crate::probes::pyspy::find_pyspy(host) {
                    Ok(Some(bin)) => {
                        let main = crate::probes::config_sources::training_processes(host, pid)
                            .first()
                            .copied()
                            .unwrap_or(pid);
                        let script = crate::probes::pyspy::Script::of(host, main, &argv);
                        r.pyspy = Some((bin, script));
                        r.main_thread = Some(MainThreadSeries {
                            pid: main,
                            t: Vec::new(),
                            state: Vec::new(),
                        });
                    }
                    Ok(None) => r.notes.push(
                        "main thread not recorded: py-spy is not installed (`pip install py-spy`)"
                            .into(),
                    ),
                    Err(e) => r.notes.push(format!("main thread not recorded: {e}")),
                }
            }
            r.census(0.0);
        }
        if !host.is_live() {
            r.notes.push(format!(
                "replayed from {}: GPU readings and process states are the recorded ones at a nominal {} ms apart; CPU, IO and pressure rates are null (the time between two recorded readings is not known)",
                host.describe(),
                r.opts.interval.as_millis()
            ));
        }
        if let Some(log) = &r.opts.log {
            r.progress = Some(progress::Tail::new(log.clone()));
        }
        // the baseline every delta is taken against
        r.read_processes(0.0, false);
        r.read_node(0.0, false);
        r
    }

    /// Seconds since the window began: the host's clock when live, else the nominal time.
    fn now(&self) -> f64 {
        if self.host.is_live() {
            self.host.now() - self.t0
        } else {
            self.samples as f64 * self.opts.interval.as_secs_f64()
        }
    }

    /// Look for the job's processes again: a worker seen for the first time gets a baseline
    /// reading now and points from the next sample on.
    fn census(&mut self, t: f64) {
        let Some(pid) = self.opts.pid else { return };
        self.last_census = t;
        for (p, member, st) in job_census(self.host, pid) {
            if self.procs.contains_key(&p) || self.procs.len() >= MAX_PROCESSES {
                continue;
            }
            let role = match member {
                Member::Main => ProcessRole::Main,
                Member::Worker => ProcessRole::Worker,
                Member::Other => ProcessRole::Other,
            };
            self.procs.insert(
                p,
                ProcAcc {
                    role,
                    name: redact(&st.comm),
                    t: Vec::new(),
                    cpu: Vec::new(),
                    state: Vec::new(),
                    read: Col::default(),
                    write: Col::default(),
                    // the census's reading is this process's baseline
                    last: Some((t, st.cpu_ticks, io_of(self.host, p))),
                    gone: false,
                    merged: 0,
                },
            );
        }
    }

    /// Read every process followed; `push: false` takes only a baseline, of those without one.
    fn read_processes(&mut self, t: f64, push: bool) {
        let host = self.host;
        let live = host.is_live();
        for (pid, acc) in self
            .procs
            .iter_mut()
            .filter(|(_, a)| !a.gone && (push || a.last.is_none()))
        {
            let stat = self
                .host
                .read_file(&format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|b| parse_stat(&String::from_utf8_lossy(&b)));
            let io = io_of(host, *pid);
            let Some(st) = stat else {
                // gone: one `null` says so, then the series ends
                if push && acc.last.is_some() {
                    acc.t.push(t);
                    acc.cpu.push(None);
                    acc.state.push(None);
                    acc.read.push(None, acc.read.supported);
                    acc.write.push(None, acc.write.supported);
                }
                acc.gone = acc.last.is_some();
                continue;
            };
            if push && let Some((t_last, ticks, io_last)) = acc.last {
                // a recorded host replays readings without the time that passed between them:
                // no rate can be taken from them
                let dt = if live { t - t_last } else { 0.0 };
                acc.t.push(t);
                acc.cpu.push((dt > 0.0).then(|| {
                    round1(st.cpu_ticks.saturating_sub(ticks) as f64 / TICKS_PER_SEC / dt * 100.0)
                }));
                acc.state.push(st.state.chars().next());
                let rate =
                    |a: u64, b: u64| (dt > 0.0).then(|| round1(b.saturating_sub(a) as f64 / dt));
                match (io_last, io) {
                    (Some((r0, w0)), Some((r1, w1))) => {
                        acc.read.push(rate(r0, r1), true);
                        acc.write.push(rate(w0, w1), true);
                    }
                    // unreadable (another user's process without root): a failed reading
                    _ => {
                        acc.read.push(None, io.is_some() || acc.read.supported);
                        acc.write.push(None, io.is_some() || acc.write.supported);
                    }
                }
            }
            acc.last = Some((t, st.cpu_ticks, io));
        }
    }

    fn read_node(&mut self, t: f64, push: bool) {
        use procfs::{FromRead, FromReadSI};
        let info = procfs::ExplicitSystemInfo {
            boot_time_secs: 0,
            ticks_per_second: TICKS_PER_SEC as u64,
            page_size: 4096,
            is_little_endian: cfg!(target_endian = "little"),
        };
        let cpu = self
            .host
            .read_file("/proc/stat")
            .ok()
            .and_then(|b| procfs::KernelStats::from_read(&b[..], &info).ok())
            .map(|k| {
                let c = &k.total;
                let idle = c.idle + c.iowait.unwrap_or(0);
                let all = c.user
                    + c.nice
                    + c.system
                    + idle
                    + c.irq.unwrap_or(0)
                    + c.softirq.unwrap_or(0)
                    + c.steal.unwrap_or(0);
                (all - idle, all)
            });
        let cpu_psi = self
            .host
            .read_file("/proc/pressure/cpu")
            .ok()
            .and_then(|b| procfs::CpuPressure::from_read(&b[..]).ok())
            .map(|p| p.some.total);
        let io_psi = self
            .host
            .read_file("/proc/pressure/io")
            .ok()
            .and_then(|b| procfs::IoPressure::from_read(&b[..]).ok())
            .map(|p| p.some.total);
        let live = self.host.is_live();
        let n = &mut self.node;
        if push && let Some((t_last, cpu0, cpsi0, ipsi0)) = n.last {
            let dt = if live { t - t_last } else { 0.0 };
            n.t.push(t);
            match (cpu0, cpu) {
                (Some((b0, a0)), Some((b1, a1))) if live && a1 > a0 => n.busy.push(
                    Some(round1(
                        b1.saturating_sub(b0) as f64 / (a1 - a0) as f64 * 100.0,
                    )),
                    true,
                ),
                _ => n.busy.push(None, cpu.is_some() || n.busy.supported),
            }
            let psi = |a: Option<u64>, b: Option<u64>| match (a, b) {
                (Some(a), Some(b)) if dt > 0.0 => Some(round1(
                    (b.saturating_sub(a) as f64 / 1e6 / dt * 100.0).min(100.0),
                )),
                _ => None,
            };
            let v = psi(cpsi0, cpu_psi);
            n.cpu_psi.push(v, cpu_psi.is_some() || n.cpu_psi.supported);
            let v = psi(ipsi0, io_psi);
            n.io_psi.push(v, io_psi.is_some() || n.io_psi.supported);
        }
        n.last = Some((t, cpu, cpu_psi, io_psi));
    }

    fn read_gpus(&mut self, t: f64) {
        let samples = self.host.nvml_sample();
        let pcie: Option<Vec<PcieRate>> = match &mut self.pcie {
            Pcie::Off => None,
            Pcie::Throughput => self.host.nvml_pcie().ok().map(|v| {
                v.into_iter()
                    .map(|p| PcieRate {
                        index: p.index,
                        rx: fmap(&p.rx_kb_s, |kb| f64::from(kb) / 1000.0),
                        tx: fmap(&p.tx_kb_s, |kb| f64::from(kb) / 1000.0),
                    })
                    .collect()
            }),
            Pcie::Counters(c) => {
                let now = if self.host.is_live() {
                    self.host.now()
                } else {
                    t
                };
                // a failed reading: no rate now; the interval goes on to the next reading
                self.host.nvml_pcie_bytes().ok().map(|b| {
                    c.read(b, now);
                    c.rates(now)
                })
            }
        };
        match samples {
            Ok(samples) => {
                for g in &samples {
                    push_gpu(&mut self.gpus, t, g, pcie.as_deref());
                }
            }
            Err(_) => {
                // NVML did not answer this time: a failed reading for every GPU known
                for acc in self.gpus.values_mut().filter(|a| !a.t.is_empty()) {
                    acc.t.push(t);
                    for c in [
                        &mut acc.util,
                        &mut acc.mem_util,
                        &mut acc.mem_used,
                        &mut acc.clock,
                        &mut acc.power,
                        &mut acc.rx,
                        &mut acc.tx,
                    ] {
                        let s = c.supported;
                        c.push(None, s);
                    }
                    acc.reasons.push(None);
                }
            }
        }
    }

    fn read_main_thread(&mut self, t: f64) {
        let (Some((bin, script)), Some(series)) = (&self.pyspy, &mut self.main_thread) else {
            return;
        };
        let argv = vec![
            bin.clone(),
            "dump".into(),
            "--pid".into(),
            series.pid.to_string(),
        ];
        let state = match self.host.run(&argv, Duration::from_secs(5)) {
            Ok(o) if o.status == Some(0) => {
                let frames = crate::probes::pyspy::main_thread(&o.stdout, series.pid);
                (!frames.is_empty()).then(|| {
                    thread_state(
                        &frames,
                        crate::probes::pyspy::classify(&frames, &|f, l| script.line(f, l)),
                    )
                })
            }
            _ => None,
        };
        series.t.push(t);
        series.state.push(state);
    }

    /// Take one sample at the end of the next interval (sleeping until then on a live host).
    fn sample(&mut self) {
        let step = self.opts.interval.as_secs_f64();
        let due = (self.slot() + 1) as f64 * step;
        if self.host.is_live() {
            loop {
                let left = due - self.now();
                if left <= 0.0 {
                    break;
                }
                // 32-bit PCIe counters are read every PCIE_POLL, so none wraps twice unseen
                match &mut self.pcie {
                    Pcie::Counters(c) if !c.wide && left > PCIE_POLL.as_secs_f64() => {
                        self.host.sleep(PCIE_POLL);
                        if let Ok(b) = self.host.nvml_pcie_bytes() {
                            c.read(b, self.host.now());
                        }
                    }
                    _ => {
                        self.host.sleep(Duration::from_secs_f64(left));
                        break;
                    }
                }
            }
        }
        self.samples += 1;
        if self.host.is_live() {
            // late by a whole interval or more: the intervals slept through are skipped
            let late = ((self.now() - due) / step).floor();
            if late >= 1.0 {
                self.skipped += late as u64;
            }
        }
        let t = round3(self.now());
        self.read_gpus(t);
        self.read_processes(t, true);
        self.read_node(t, true);
        if self.opts.pyspy_every > 0
            && self
                .samples
                .is_multiple_of(u64::from(self.opts.pyspy_every))
        {
            self.read_main_thread(t);
        }
        if let Some(p) = &mut self.progress {
            p.read(t);
        }
        if t - self.last_census >= CENSUS_EVERY.as_secs_f64() {
            self.census(t);
            // the new ones' baseline
            self.read_processes(t, false);
        }
        let k = self.chunk;
        if k > 1 {
            self.gpus.values_mut().for_each(|a| a.merge(k, false));
            self.procs.values_mut().for_each(|a| a.merge(k, false));
            self.node.merge(k, false);
        }
    }

    /// The interval the last sample closed: the samples taken and the intervals skipped.
    fn slot(&self) -> u64 {
        self.samples + self.skipped
    }

    /// Whether the job's main process is gone.
    fn job_gone(&self) -> bool {
        self.opts.pid.is_some()
            && self
                .procs
                .values()
                .find(|p| p.role == ProcessRole::Main)
                .is_some_and(|p| p.gone)
    }

    /// Sample until the window ends, `stop` is raised (SIGINT) or the job exits; `checkpoint`
    /// gets the file every [`Options::checkpoint`] of the window.
    pub fn run(&mut self, stop: &AtomicBool, checkpoint: &mut dyn FnMut(&RecordFile)) {
        let end = self.opts.duration.as_secs_f64();
        let mut last_checkpoint = 0.0;
        loop {
            if stop.load(Ordering::SeqCst) {
                self.interrupted_by = Some("SIGINT".into());
                break;
            }
            if (self.slot() + 1) as f64 * self.opts.interval.as_secs_f64() > end + 1e-9 {
                break;
            }
            self.sample();
            crate::record::fault::after_sample(self.samples);
            if self.job_gone() {
                self.interrupted_by = Some("the job exited".into());
                break;
            }
            let t = self.now();
            if t - last_checkpoint >= self.opts.checkpoint.as_secs_f64() {
                last_checkpoint = t;
                checkpoint(&self.file());
            }
        }
    }

    /// The recording as it stands, bounded to [`MAX_POINTS`] per group.
    pub fn file(&self) -> RecordFile {
        let duration_s = round3(self.samples as f64 * self.opts.interval.as_secs_f64());
        let duration_s = if self.host.is_live() {
            round3(self.now().max(0.0))
        } else {
            duration_s
        };
        let mut notes = self.notes.clone();
        if self.skipped > 0 {
            notes.push(format!(
                "{} interval(s) of {} ms had no sample: gpufix woke late (it was stopped, or starved of CPU), and took one sample then instead of catching up",
                self.skipped,
                self.opts.interval.as_millis()
            ));
        }
        if self.pyspy.is_some() {
            notes.push(format!(
                "main thread: one py-spy dump every {} samples (a dump pauses the job while py-spy reads its stacks)",
                self.opts.pyspy_every
            ));
        }
        if let Some(p) = &self.progress
            && let Some(why) = &p.problem
        {
            notes.push(why.clone());
        }
        // the raw samples at the end merged as the last (maybe shorter) chunk
        let k = self.chunk;
        let (gpus, procs, node) = if k > 1 {
            let (mut g, mut p, mut n) = (self.gpus.clone(), self.procs.clone(), self.node.clone());
            g.values_mut().for_each(|a| a.merge(k, true));
            p.values_mut().for_each(|a| a.merge(k, true));
            n.merge(k, true);
            (Cow::Owned(g), Cow::Owned(p), Cow::Owned(n))
        } else {
            (
                Cow::Borrowed(&self.gpus),
                Cow::Borrowed(&self.procs),
                Cow::Borrowed(&self.node),
            )
        };
        let mut f = RecordFile {
            version: RECORD_VERSION,
            gpufix: env!("CARGO_PKG_VERSION").to_string(),
            host: self.host_name.clone(),
            started_at: self.started_at.clone(),
            interval_ms: self.opts.interval.as_millis() as u64,
            duration_s,
            interrupted: self.interrupted_by.is_some(),
            interrupted_by: self.interrupted_by.clone(),
            job: self.job.clone(),
            gpus: gpu_series(&gpus),
            processes: procs
                .iter()
                .filter(|(_, a)| !a.t.is_empty())
                .map(|(pid, a)| ProcessSeries {
                    pid: *pid,
                    role: a.role,
                    name: a.name.clone(),
                    t: a.t.clone(),
                    cpu_percent: a.cpu.clone(),
                    state: a.state.iter().map(|c| c.map(|c| c.to_string())).collect(),
                    read_bytes_s: a.read.column(),
                    write_bytes_s: a.write.column(),
                })
                .collect(),
            node: (!node.t.is_empty()
                && (node.busy.supported || node.cpu_psi.supported || node.io_psi.supported))
                .then(|| NodeSeries {
                    t: node.t.clone(),
                    cpu_busy_percent: node.busy.column(),
                    cpu_pressure_percent: node.cpu_psi.column(),
                    io_pressure_percent: node.io_psi.column(),
                }),
            main_thread: self.main_thread.clone().filter(|m| !m.t.is_empty()),
            progress: self.progress.as_ref().and_then(|p| p.series()),
            findings: Vec::new(),
            downsampled: None,
            notes,
        };
        downsample(&mut f, MAX_POINTS);
        if k > 1 {
            // merged as it came (and further by `downsample` when a group still had too many)
            let further = f.downsampled.as_ref().map_or(1, |d| d.factor);
            f.downsampled = Some(Downsampled {
                factor: (k as u32).saturating_mul(further),
                raw_samples: self.samples,
            });
        }
        f
    }
}

fn push_gpu(gpus: &mut BTreeMap<u32, GpuAcc>, t: f64, g: &GpuSample, pcie: Option<&[PcieRate]>) {
    let acc = gpus.entry(g.index).or_default();
    // a GPU first seen now: its columns start here (padding keeps them index-aligned)
    acc.t.push(t);
    acc.util.field(&g.utilization_gpu, f64::from);
    acc.mem_util.field(&g.utilization_memory, f64::from);
    acc.mem_used
        .field(&g.memory_used, |b| round1(b as f64 / 1048576.0));
    acc.clock.field(&g.clock_sm, f64::from);
    acc.power
        .field(&g.power_usage_mw, |mw| round1(f64::from(mw) / 1000.0));
    match pcie.and_then(|p| p.iter().find(|p| p.index == g.index)) {
        Some(p) => {
            acc.rx.field(&p.rx, round1);
            acc.tx.field(&p.tx, round1);
        }
        None => {
            let (r, x) = (acc.rx.supported, acc.tx.supported);
            acc.rx.push(None, r);
            acc.tx.push(None, x);
        }
    }
    match &g.clocks_event_reasons {
        Field::Ok(r) => {
            acc.reasons_supported = true;
            acc.reasons.push(Some(r.clone()));
        }
        Field::NotSupported => acc.reasons.push(None),
        Field::Error(_) => {
            acc.reasons_supported = true;
            acc.reasons.push(None);
        }
    }
}

fn gpu_series(gpus: &BTreeMap<u32, GpuAcc>) -> Vec<GpuSeries> {
    gpus.iter()
        .filter(|(_, a)| !a.t.is_empty())
        .map(|(i, a)| GpuSeries {
            index: *i,
            uuid: a.uuid.clone(),
            name: a.name.clone(),
            t: a.t.clone(),
            utilization_gpu: a.util.column(),
            utilization_memory: a.mem_util.column(),
            memory_used_mib: a.mem_used.column(),
            memory_total_mib: a.memory_total_mib,
            clock_sm_mhz: a.clock.column(),
            power_w: a.power.column(),
            pcie_rx_mb_s: a.rx.column(),
            pcie_tx_mb_s: a.tx.column(),
            throttle_reasons: a.reasons_supported.then(|| a.reasons.clone()),
        })
        .collect()
}

/// `plan --record FILE`: the plan's own window kept as a recording — the GPU samples its
/// probes took ([`crate::host::remembered::HostView`]'s taps) and its findings over the
/// window. Times are the host's clock where it has one (a live host), else the samples spread
/// evenly over the window.
pub fn plan_window_file(
    host: &dyn Host,
    taps: &crate::host::remembered::Taps,
    window: Duration,
    report: &Report,
    job: Option<RecordJob>,
) -> RecordFile {
    let n = taps.len().max(1);
    let w = window.as_secs_f64();
    let t0 = taps.first().map(|(t, _)| *t).filter(|t| t.is_finite());
    let mut gpus = BTreeMap::new();
    if let Ok(full) = host.nvml() {
        for g in &full.gpus {
            let acc: &mut GpuAcc = gpus.entry(g.index).or_default();
            acc.uuid = g.uuid.ok().cloned();
            acc.name = g.name.ok().cloned();
            acc.memory_total_mib = g.memory_total.ok().map(|b| *b as f64 / 1048576.0);
        }
    }
    for (i, (at, samples)) in taps.iter().enumerate() {
        let t = match t0 {
            Some(t0) if at.is_finite() => round3(at - t0),
            _ => round3(w * i as f64 / n as f64),
        };
        for g in samples {
            push_gpu(&mut gpus, t, g, None);
        }
    }
    let duration_s = round3(
        gpus.values()
            .filter_map(|a| a.t.last().copied())
            .fold(w, f64::max),
    );
    let mut f = RecordFile {
        version: RECORD_VERSION,
        gpufix: env!("CARGO_PKG_VERSION").to_string(),
        host: crate::host::identity(host).0,
        started_at: report.generated_at.clone(),
        interval_ms: (w * 1000.0 / n as f64).round() as u64,
        duration_s,
        interrupted: false,
        interrupted_by: None,
        job,
        gpus: gpu_series(&gpus),
        processes: Vec::new(),
        node: None,
        main_thread: None,
        progress: None,
        findings: findings(report, [0.0, duration_s]),
        downsampled: None,
        notes: vec![
            "the window of `gpufix plan`: the GPU samples its probes took; `gpufix record` also keeps the job's processes, the node and the main thread".into(),
        ],
    };
    downsample(&mut f, MAX_POINTS);
    f
}

/// Bytes read and written by `pid` so far (`/proc/PID/io`, procfs-core's parser).
fn io_of(host: &dyn Host, pid: u32) -> Option<(u64, u64)> {
    use procfs::FromRead;
    host.read_file(&format!("/proc/{pid}/io"))
        .ok()
        .and_then(|b| procfs::process::Io::from_read(&b[..]).ok())
        .map(|io| (io.read_bytes, io.write_bytes))
}

fn fmap<T: Copy>(f: &Field<T>, g: impl Fn(T) -> f64) -> Field<f64> {
    match f {
        Field::Ok(v) => Field::Ok(g(*v)),
        Field::NotSupported => Field::NotSupported,
        Field::Error(e) => Field::Error(e.clone()),
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The [`ThreadState`] of one main-thread sample: py-spy's class ([`classify`]'s names), and
/// from the frames what it cannot tell apart — a collective, and forward as compute.
///
/// [`classify`]: crate::probes::pyspy::classify
pub fn thread_state(frames: &[(String, String, u32)], class: &str) -> ThreadState {
    const COLLECTIVES: [&str; 7] = [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "broadcast",
        "barrier",
        "all_to_all",
        "_allreduce",
    ];
    match class {
        "dataloader" => ThreadState::DataWait,
        "host_sync" => ThreadState::HostSync,
        "copy" => ThreadState::Copy,
        "backward_optimizer" => ThreadState::Compute,
        _ if frames.iter().any(|(f, file, _)| {
            COLLECTIVES.iter().any(|c| f.contains(c)) && file.contains("distributed")
        }) =>
        {
            ThreadState::Communication
        }
        _ if frames.iter().any(|(f, _, _)| f == "forward") => ThreadState::Compute,
        _ => ThreadState::Other,
    }
}

/// The plan's findings over a window `[from, to]` (seconds since the recording began): each
/// failing rule with its message, and its fix's summary and diff where the plan has them.
pub fn findings(report: &Report, window: [f64; 2]) -> Vec<RecordFinding> {
    report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(|r| {
            let changes: Vec<_> = report.changes.iter().filter(|c| c.rule == r.id).collect();
            let diff: Vec<String> = changes.iter().filter_map(|c| c.diff.clone()).collect();
            RecordFinding {
                rule: r.id.clone(),
                layer: r.layer.clone(),
                status: "fail".into(),
                severity: r.severity.as_str().to_string(),
                message: redact(&r.messages.join("; ")),
                window,
                fix: changes.first().map(|c| redact(&c.summary)),
                diff: (!diff.is_empty()).then(|| redact(&diff.join(""))),
            }
        })
        .collect()
}

/// Merge neighbouring samples so that no group has more than `max` points: chunks of `factor`
/// samples become one (the mean of its numbers — `null` only when all were — the union of its
/// reason lists, its most frequent state; its `t` is the chunk's last). `downsampled` records
/// the largest factor and the raw sample count.
pub fn downsample(f: &mut RecordFile, max: usize) {
    let max = max.max(1);
    let mut factor = 1usize;
    let mut raw = 0usize;
    let mut pick = |n: usize| -> usize {
        raw = raw.max(n);
        let k = n.div_ceil(max).max(1);
        factor = factor.max(k);
        k
    };
    for g in &mut f.gpus {
        let k = pick(g.t.len());
        if k > 1 {
            g.t = last_of(&g.t, k);
            for c in [
                &mut g.utilization_gpu,
                &mut g.utilization_memory,
                &mut g.memory_used_mib,
                &mut g.clock_sm_mhz,
                &mut g.power_w,
                &mut g.pcie_rx_mb_s,
                &mut g.pcie_tx_mb_s,
            ]
            .into_iter()
            .flatten()
            {
                *c = mean_of(c, k);
            }
            if let Some(r) = &mut g.throttle_reasons {
                *r = union_of(r, k);
            }
        }
    }
    for p in &mut f.processes {
        let k = pick(p.t.len());
        if k > 1 {
            p.t = last_of(&p.t, k);
            p.cpu_percent = mean_of(&p.cpu_percent, k);
            p.state = mode_of(&p.state, k);
            for c in [&mut p.read_bytes_s, &mut p.write_bytes_s]
                .into_iter()
                .flatten()
            {
                *c = mean_of(c, k);
            }
        }
    }
    if let Some(n) = &mut f.node {
        let k = pick(n.t.len());
        if k > 1 {
            n.t = last_of(&n.t, k);
            for c in [
                &mut n.cpu_busy_percent,
                &mut n.cpu_pressure_percent,
                &mut n.io_pressure_percent,
            ]
            .into_iter()
            .flatten()
            {
                *c = mean_of(c, k);
            }
        }
    }
    if let Some(m) = &mut f.main_thread {
        let k = pick(m.t.len());
        if k > 1 {
            m.t = last_of(&m.t, k);
            m.state = mode_of(&m.state, k);
        }
    }
    if let Some(p) = &mut f.progress {
        let k = pick(p.t.len());
        if k > 1 {
            p.t = last_of(&p.t, k);
            p.rate = mean_of(&p.rate, k);
        }
    }
    if factor > 1 {
        f.downsampled = Some(Downsampled {
            factor: factor as u32,
            raw_samples: raw as u64,
        });
    }
}

fn last_of(t: &[f64], k: usize) -> Vec<f64> {
    t.chunks(k).filter_map(|c| c.last().copied()).collect()
}

fn mean_of(c: &[Option<f64>], k: usize) -> Column {
    c.chunks(k)
        .map(|ch| {
            let v: Vec<f64> = ch.iter().flatten().copied().collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect()
}

fn mode_of<T: Clone + PartialEq>(c: &[Option<T>], k: usize) -> Vec<Option<T>> {
    c.chunks(k)
        .map(|ch| {
            let mut best: Option<(&T, usize)> = None;
            for v in ch.iter().flatten() {
                let n = ch.iter().flatten().filter(|x| *x == v).count();
                if best.is_none_or(|(_, m)| n > m) {
                    best = Some((v, n));
                }
            }
            best.map(|(v, _)| v.clone())
        })
        .collect()
}

/// The throttle reasons of each chunk of `k`: their union (`null` only when all were).
fn union_of(c: &[Option<Vec<String>>], k: usize) -> Vec<Option<Vec<String>>> {
    c.chunks(k)
        .map(|ch| {
            let mut u: Vec<String> = ch.iter().flatten().flatten().cloned().collect();
            u.sort();
            u.dedup();
            ch.iter().any(Option::is_some).then_some(u)
        })
        .collect()
}

/// Raw samples per kept point for a window: enough that the window's samples fit
/// [`MAX_POINTS`].
fn chunk_for(window: Duration, interval: Duration) -> usize {
    let planned = (window.as_secs_f64() / interval.as_secs_f64().max(1e-3)).ceil();
    ((planned / MAX_POINTS as f64).ceil() as usize).max(1)
}

/// Merge the entries of `v` after the first `from` (merged already) `k` at a time with `f`; a
/// shorter run at the end is merged only when `whole`. Returns how many entries are merged
/// chunks now.
fn merge_from<T>(
    v: &mut Vec<T>,
    from: usize,
    k: usize,
    whole: bool,
    f: impl Fn(&[T], usize) -> Vec<T>,
) -> usize {
    let k = k.max(1);
    let from = from.min(v.len());
    let n = v.len() - from;
    let m = if whole { n } else { n / k * k };
    if m == 0 {
        return from;
    }
    let merged = f(&v[from..from + m], k);
    let upto = from + merged.len();
    v.splice(from..from + m, merged);
    upto
}

impl GpuAcc {
    /// Merge the raw samples at the end into chunks of `k` ([`merge_from`]).
    fn merge(&mut self, k: usize, whole: bool) {
        let from = self.merged;
        let upto = merge_from(&mut self.t, from, k, whole, last_of);
        for c in [
            &mut self.util,
            &mut self.mem_util,
            &mut self.mem_used,
            &mut self.clock,
            &mut self.power,
            &mut self.rx,
            &mut self.tx,
        ] {
            merge_from(&mut c.vals, from, k, whole, mean_of);
        }
        merge_from(&mut self.reasons, from, k, whole, union_of);
        self.merged = upto;
    }
}

impl ProcAcc {
    fn merge(&mut self, k: usize, whole: bool) {
        let from = self.merged;
        let upto = merge_from(&mut self.t, from, k, whole, last_of);
        merge_from(&mut self.cpu, from, k, whole, mean_of);
        merge_from(&mut self.state, from, k, whole, mode_of);
        merge_from(&mut self.read.vals, from, k, whole, mean_of);
        merge_from(&mut self.write.vals, from, k, whole, mean_of);
        self.merged = upto;
    }
}

impl NodeAcc {
    fn merge(&mut self, k: usize, whole: bool) {
        let from = self.merged;
        let upto = merge_from(&mut self.t, from, k, whole, last_of);
        for c in [&mut self.busy, &mut self.cpu_psi, &mut self.io_psi] {
            merge_from(&mut c.vals, from, k, whole, mean_of);
        }
        self.merged = upto;
    }
}

/// The test hook for an interrupted recording (`fault-injection` builds only):
/// `GPUFIX_TEST_INTERRUPT_AFTER=N` sends this process SIGINT after the N-th sample, through the
/// same signal handler a person's Ctrl-C reaches.
pub mod fault {
    #[cfg(not(feature = "fault-injection"))]
    pub fn after_sample(_n: u64) {}

    #[cfg(feature = "fault-injection")]
    pub fn after_sample(n: u64) {
        let at: Option<u64> = std::env::var("GPUFIX_TEST_INTERRUPT_AFTER")
            .ok()
            .and_then(|v| v.parse().ok());
        if at == Some(n) {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::INT,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(n: usize) -> RecordFile {
        let t: Vec<f64> = (1..=n).map(|i| i as f64 * 0.2).collect();
        RecordFile {
            version: RECORD_VERSION,
            gpufix: "test".into(),
            host: "h".into(),
            started_at: "2026-12-03T00:00:00Z".into(),
            interval_ms: 200,
            duration_s: n as f64 * 0.2,
            interrupted: false,
            interrupted_by: None,
            job: None,
            gpus: vec![GpuSeries {
                index: 0,
                t: t.clone(),
                utilization_gpu: Some((0..n).map(|i| Some((i % 7) as f64 * 10.0)).collect()),
                throttle_reasons: Some(
                    (0..n)
                        .map(|i| {
                            Some(if i % 2 == 0 {
                                vec!["GPU_IDLE".into()]
                            } else {
                                vec![]
                            })
                        })
                        .collect(),
                ),
                ..Default::default()
            }],
            processes: vec![ProcessSeries {
                pid: 7,
                role: ProcessRole::Worker,
                name: "pt_data_worker".into(),
                t: t.clone(),
                cpu_percent: (0..n).map(|i| Some(100.0 - (i % 3) as f64)).collect(),
                state: (0..n)
                    .map(|i| Some(if i % 4 == 0 { "S" } else { "R" }.to_string()))
                    .collect(),
                read_bytes_s: None,
                write_bytes_s: None,
            }],
            node: None,
            main_thread: None,
            progress: None,
            findings: Vec::new(),
            downsampled: None,
            notes: Vec::new(),
        }
    }

    fn mean(c: &[Option<f64>]) -> f64 {
        let v: Vec<f64> = c.iter().flatten().copied().collect();
        v.iter().sum::<f64>() / v.len() as f64
    }

    #[test]
    fn downsampling_keeps_at_most_max_points_and_the_means() {
        let n = MAX_POINTS * 4 + 12; // not a multiple: the last chunk is shorter
        let mut f = file_with(n);
        let before_gpu = mean(f.gpus[0].utilization_gpu.as_ref().unwrap());
        let before_cpu = mean(&f.processes[0].cpu_percent);
        downsample(&mut f, MAX_POINTS);
        let g = &f.gpus[0];
        assert!(g.t.len() <= MAX_POINTS, "{}", g.t.len());
        assert_eq!(g.t.len(), g.utilization_gpu.as_ref().unwrap().len());
        assert_eq!(f.processes[0].t.len(), f.processes[0].state.len());
        let d = f.downsampled.clone().unwrap();
        assert_eq!((d.factor, d.raw_samples), (5, n as u64));
        // chunks of equal size keep the mean exactly; a shorter last chunk moves it by little
        let after_gpu = mean(g.utilization_gpu.as_ref().unwrap());
        assert!(
            (after_gpu - before_gpu).abs() < 0.05,
            "{before_gpu} -> {after_gpu}"
        );
        let after_cpu = mean(&f.processes[0].cpu_percent);
        assert!(
            (after_cpu - before_cpu).abs() < 0.05,
            "{before_cpu} -> {after_cpu}"
        );
        // the window's end is kept, reasons are the union, a state the most frequent
        assert_eq!(*g.t.last().unwrap(), n as f64 * 0.2);
        assert_eq!(
            g.throttle_reasons.as_ref().unwrap()[0],
            Some(vec!["GPU_IDLE".to_string()])
        );
        assert_eq!(f.processes[0].state[0].as_deref(), Some("R"));
    }

    #[test]
    fn equal_chunks_keep_the_mean_exactly_and_a_small_file_is_left_alone() {
        let mut f = file_with(MAX_POINTS * 2);
        let before = mean(f.gpus[0].utilization_gpu.as_ref().unwrap());
        downsample(&mut f, MAX_POINTS);
        assert_eq!(f.gpus[0].t.len(), MAX_POINTS);
        let after = mean(f.gpus[0].utilization_gpu.as_ref().unwrap());
        assert!((after - before).abs() < 1e-9, "{before} -> {after}");
        let mut small = file_with(10);
        let copy = small.clone();
        downsample(&mut small, MAX_POINTS);
        assert_eq!(small, copy);
    }

    #[test]
    fn pcie_rates_count_every_byte_across_32_bit_wraps() {
        let b = |rx: Field<u64>, tx: Field<u64>| vec![PcieBytes { index: 0, rx, tx }];
        let top = 1u64 << 32;
        let mut c = Counters::start(b(Field::Ok(top - 1_000_000), Field::Ok(0)), 0.0);
        assert!(!c.wide);
        // within one interval rx wraps at 4 GiB: 1 MB before the wrap, 49 MB after it
        c.read(b(Field::Ok(49_000_000), Field::Ok(10_000_000)), 0.1);
        c.read(b(Field::Ok(49_000_000), Field::Ok(20_000_000)), 0.25);
        let r = c.rates(0.25);
        assert_eq!(
            (r[0].rx.clone(), r[0].tx.clone()),
            (Field::Ok(200.0), Field::Ok(80.0))
        );
        // the next interval counts from the last reading
        c.read(b(Field::Ok(69_000_000), Field::Ok(20_000_000)), 0.45);
        assert_eq!(c.rates(0.45)[0].rx, Field::Ok(100.0));
        // readings 1.05 s apart (gpufix stopped): one wrap or two cannot be told apart
        c.read(b(Field::Ok(79_000_000), Field::Ok(30_000_000)), 1.5);
        let r = c.rates(1.5);
        assert!(
            matches!(&r[0].rx, Field::Error(e) if e.contains("32-bit")),
            "{:?}",
            r[0].rx
        );
        // the next interval counts again
        c.read(b(Field::Ok(99_000_000), Field::Ok(30_000_000)), 2.0);
        assert_eq!(c.rates(2.0)[0].rx, Field::Ok(40.0));
        // a counter above 32 bits is 64 wide: going back is a reset, not a wrap
        c.read(b(Field::Ok(top + 5), Field::NotSupported), 2.1);
        assert!(c.wide);
        c.read(b(Field::Ok(7), Field::NotSupported), 2.2);
        let r = c.rates(2.2);
        assert!(matches!(r[0].rx, Field::Error(_)), "{:?}", r[0].rx);
        assert_eq!(r[0].tx, Field::NotSupported);
        // a GPU first seen within an interval has no earlier reading
        let mut c = Counters::start(Vec::new(), 0.0);
        c.read(b(Field::Ok(5), Field::Ok(5)), 0.1);
        assert!(matches!(c.rates(0.2)[0].rx, Field::Error(_)));
        assert_eq!((moved(10, 4), moved(top + 10, 4)), (Some(top - 6), None));
    }

    #[test]
    fn a_chunk_of_failed_readings_stays_null() {
        assert_eq!(
            mean_of(&[None, None, Some(4.0), Some(6.0)], 2),
            vec![None, Some(5.0)]
        );
    }

    #[test]
    fn py_spy_classes_map_to_thread_states() {
        let f = |fun: &str, file: &str| vec![(fun.to_string(), file.to_string(), 1)];
        assert_eq!(thread_state(&[], "dataloader"), ThreadState::DataWait);
        assert_eq!(thread_state(&[], "host_sync"), ThreadState::HostSync);
        assert_eq!(
            thread_state(&[], "backward_optimizer"),
            ThreadState::Compute
        );
        assert_eq!(
            thread_state(
                &f(
                    "all_reduce",
                    "/usr/lib/python3/torch/distributed/distributed_c10d.py"
                ),
                "other"
            ),
            ThreadState::Communication
        );
        assert_eq!(
            thread_state(&f("forward", "model.py"), "other"),
            ThreadState::Compute
        );
        assert_eq!(
            thread_state(&f("main", "train.py"), "other"),
            ThreadState::Other
        );
    }
}

#[cfg(test)]
mod late_wakeups {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::host::{CommandOutput, FileMeta, GpuReading, GpuSample, HostError, NvmlReading};
    use std::io;
    use std::sync::Mutex;

    /// A live host on a clock only `sleep` moves, which loses `stall_s` once when it passes
    /// `stall_at` (the recorder stopped with SIGSTOP, or starved of CPU).
    struct Clock {
        snap: SnapshotHost,
        t: Mutex<f64>,
        stall_at: f64,
        stall_s: Mutex<f64>,
    }

    impl Host for Clock {
        fn describe(&self) -> String {
            "clock".into()
        }
        fn is_live(&self) -> bool {
            true
        }
        fn read_file(&self, p: &str) -> io::Result<Vec<u8>> {
            self.snap.read_file(p)
        }
        fn read_dir(&self, p: &str) -> io::Result<Vec<String>> {
            self.snap.read_dir(p)
        }
        fn metadata(&self, p: &str) -> io::Result<FileMeta> {
            self.snap.metadata(p)
        }
        fn read_link(&self, p: &str) -> io::Result<String> {
            self.snap.read_link(p)
        }
        fn run(&self, a: &[String], t: Duration) -> io::Result<CommandOutput> {
            self.snap.run(a, t)
        }
        fn nvml(&self) -> Result<NvmlReading, HostError> {
            self.snap.nvml()
        }
        fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
            self.snap.nvml_sample()
        }
        fn env(&self) -> BTreeMap<String, String> {
            BTreeMap::new()
        }
        fn now(&self) -> f64 {
            *self.t.lock().unwrap()
        }
        fn sleep(&self, d: Duration) {
            let mut t = self.t.lock().unwrap();
            *t += d.as_secs_f64();
            if *t >= self.stall_at {
                *t += std::mem::take(&mut *self.stall_s.lock().unwrap());
            }
        }
        fn cpu_count(&self) -> usize {
            1
        }
    }

    /// A recording of `window` on a GPU whose utilization goes 0, 1, … 96 and then stays;
    /// `raw`: every sample kept until the end (the recorder's merging as it goes turned off).
    fn recording(window: Duration, stall_s: f64, raw: bool) -> (RecordFile, usize) {
        let gpu = |u: u32| GpuReading {
            index: 0,
            utilization_gpu: Field::Ok(u),
            ..Default::default()
        };
        let mut snap = SnapshotHost::empty();
        snap.set_nvml(Ok(NvmlReading {
            gpus: vec![gpu(50)],
            ..Default::default()
        }));
        snap.set_samples((0..97).map(|u| Ok(vec![gpu(u).sample()])).collect());
        let host = Clock {
            snap,
            t: Mutex::new(100.0),
            stall_at: 101.0,
            stall_s: Mutex::new(stall_s),
        };
        let opts = Options {
            pid: None,
            duration: window,
            interval: Duration::from_millis(200),
            log: None,
            pyspy_every: 0,
            checkpoint: Duration::from_secs(3600),
        };
        let mut r = Recorder::start(&host, opts);
        if raw {
            r.chunk = 1;
        }
        r.run(&AtomicBool::new(false), &mut |_| {});
        let held = r.gpus[&0].t.len();
        (r.file(), held)
    }

    fn record(stall_s: f64) -> RecordFile {
        recording(Duration::from_secs(4), stall_s, false).0
    }

    #[test]
    fn a_long_window_is_merged_as_it_comes_into_the_file_a_raw_one_would_give() {
        // 10,807 samples of 200 ms: 4 per kept point
        let window = Duration::from_millis(200 * (MAX_POINTS as u64 * 3 + 7));
        let (merged, held) = recording(window, 0.0, false);
        let (mut raw, raw_held) = recording(window, 0.0, true);
        assert_eq!(raw_held, MAX_POINTS * 3 + 7);
        // memory: the merged points and less than one chunk of raw samples
        assert!(held <= MAX_POINTS, "{held} points held");
        downsample(&mut raw, MAX_POINTS);
        let g = (&merged.gpus[0], &raw.gpus[0]);
        assert_eq!(g.0.t, g.1.t);
        assert_eq!(g.0.utilization_gpu, g.1.utilization_gpu);
        assert_eq!(merged.gpus[0].t.len(), (MAX_POINTS * 3 + 7).div_ceil(4));
        let d = merged.downsampled.as_ref().unwrap();
        assert_eq!((d.factor, d.raw_samples), (4, (MAX_POINTS * 3 + 7) as u64));
        let d = raw.downsampled.as_ref().unwrap();
        assert_eq!((d.factor, d.raw_samples), (4, (MAX_POINTS * 3 + 7) as u64));
    }

    #[test]
    fn a_recorder_that_wakes_late_skips_the_lost_intervals_instead_of_bursting() {
        let f = record(0.0);
        assert_eq!(f.gpus[0].t.len(), 20);
        assert!(!f.notes.iter().any(|n| n.contains("had no sample")));

        // stopped for 1.1 s after its first second: five intervals are lost, not caught up
        let f = record(1.1);
        let t = &f.gpus[0].t;
        assert_eq!(t.len(), 15, "{t:?}");
        let min_gap = t.windows(2).map(|w| w[1] - w[0]).fold(f64::MAX, f64::min);
        assert!(min_gap >= 0.099, "samples a few microseconds apart: {t:?}");
        assert!(*t.last().unwrap() <= 4.2 + 1e-9, "{t:?}");
        assert!(
            f.notes
                .iter()
                .any(|n| n.starts_with("5 interval(s) of 200 ms had no sample")),
            "{:?}",
            f.notes
        );
    }
}
