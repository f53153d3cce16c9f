//! `gpufix record`: sample a running job and its host over a window into one JSON file
//! ([`crate::vocab::record::RecordFile`], `gpufix schema record`), with the plan's findings over
//! that window. The file is written atomically (0600, never through a link) every few seconds
//! and at the end; SIGINT or SIGTERM ends the window early and the file says so
//! (`interrupted: true`).

use super::{Global, open_session};
use crate::record::{self, Recorder};
use crate::session::{Eval, ExitStatus};
use crate::vocab::record::{RecordFile, RecordFinding};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest window.
const MAX_WINDOW: Duration = Duration::from_secs(3600);
/// The longest interval between two samples.
const MAX_INTERVAL: Duration = Duration::from_millis(200);
/// How often the file is written while the window runs.
const CHECKPOINT: Duration = Duration::from_secs(5);

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// How long to record: `60s`, `5m`, `1m30s` (at most 1h).
    #[arg(long = "for", value_name = "DURATION", default_value = "60s", value_parser = parse_window)]
    pub duration: Duration,
    /// Time between two samples (at most 200ms).
    #[arg(long, value_name = "DURATION", default_value = "200ms", value_parser = parse_interval)]
    pub interval: Duration,
    /// Where to write the recording (created 0600, replaced atomically).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// The job's training log: its progress (`it/s`, `samples/s`) is read as it grows.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Time between two py-spy dumps of the main thread, when py-spy is installed (`0`: none).
    /// A dump pauses the job for the moment py-spy reads its stacks, so it is taken less often
    /// than the other samples.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_span)]
    pub pyspy_interval: Duration,
    /// Probe deadline of the plan taken over the window.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = super::parse_duration)]
    pub probe_timeout: Duration,
    #[command(flatten)]
    pub host: super::HostOpts,
    #[command(flatten)]
    pub rules: super::RuleOpts,
    #[command(flatten)]
    pub only: super::OnlyOpts,
}

/// A duration as people write it (`60s`, `200ms`, `1m30s`, `1h`), by jiff's friendly format.
pub fn parse_span(s: &str) -> Result<Duration, String> {
    if s.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    let d: jiff::SignedDuration = s
        .trim()
        .parse()
        .map_err(|e| format!("`{s}` is not a duration (try 60s, 200ms, 1m30s): {e}"))?;
    Duration::try_from(d).map_err(|_| format!("`{s}` is negative"))
}

fn parse_window(s: &str) -> Result<Duration, String> {
    let d = parse_span(s)?;
    if d.is_zero() || d > MAX_WINDOW {
        return Err(format!("`{s}` is out of range (more than 0, at most 1h)"));
    }
    Ok(d)
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_span(s)?;
    if d < Duration::from_millis(10) || d > MAX_INTERVAL {
        return Err(format!(
            "`{s}` is out of range (10ms to 200ms: a slower sample misses a GPU's idle gaps)"
        ));
    }
    Ok(d)
}

/// Write the recording: the directory the operator chose, the file replaced atomically without
/// following a link at its name, 0600 ([`crate::safe_write::write_output`]).
pub fn write(path: &Path, f: &RecordFile) -> anyhow::Result<()> {
    let text = serde_json::to_string(f)? + "\n";
    crate::safe_write::write_output(path, text.as_bytes(), 0o600)
        .map_err(|e| anyhow::anyhow!("{e}\nhelp: choose a writable path for -o that is not a link"))
}

/// The file's findings, filled in as the plan over the window finishes.
fn with_findings(f: &RecordFile, found: &Mutex<Vec<RecordFinding>>) -> RecordFile {
    let mut f = f.clone();
    f.findings = found.lock().unwrap_or_else(|e| e.into_inner()).clone();
    f
}

/// Record `opts`'s window while `plan` runs: on a live host beside it (one window, one clock),
/// on a recorded host after it, on a replay of the same recording from its start (a recording
/// has no time to share). The recording is `None` when its thread panicked.
pub(super) fn beside_plan<T>(
    s: &crate::session::Session,
    opts: record::Options,
    stop: &AtomicBool,
    checkpoint: &mut (dyn FnMut(&RecordFile) + Send),
    plan: impl FnOnce() -> T,
) -> anyhow::Result<(Option<RecordFile>, T)> {
    if s.host.is_live() {
        let host = s.host.clone();
        Ok(std::thread::scope(|sc| {
            let rec = sc.spawn(|| {
                let mut r = Recorder::start(host.as_ref(), opts);
                r.run(stop, checkpoint);
                r.file()
            });
            let planned = plan();
            (rec.join().ok(), planned)
        }))
    } else {
        let planned = plan();
        let replay = s.spec.host()?;
        let mut r = Recorder::start(replay.as_ref(), opts);
        r.run(stop, checkpoint);
        Ok((Some(r.file()), planned))
    }
}

pub fn run(g: &Global, a: &RecordArgs) -> anyhow::Result<ExitStatus> {
    // nothing is sampled for a file that cannot be written
    let parent = match a.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "-o {}: the directory {} does not exist\nhelp: choose an existing directory",
            a.output.display(),
            parent.display()
        );
    }
    let s = match open_session(g)? {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    let interval = a.interval;
    let pyspy_every = if a.pyspy_interval.is_zero() {
        0
    } else {
        (a.pyspy_interval.as_secs_f64() / interval.as_secs_f64())
            .ceil()
            .max(1.0) as u32
    };
    let opts = record::Options {
        pid: s.inputs.pid,
        duration: a.duration,
        interval,
        log: a.log.clone(),
        pyspy_every,
        checkpoint: CHECKPOINT,
    };
    // the plan's own window: its `--sample`, at least 5 s (the sampled rules need a few
    // seconds), within the recording
    let plan_window = g.sample.max(Duration::from_secs(5)).min(a.duration);
    let eval = Eval {
        sample: plan_window,
        ..g.eval(a.probe_timeout)
    };
    let window = [0.0, plan_window.as_secs_f64()];
    let found: Mutex<Vec<RecordFinding>> = Mutex::new(Vec::new());
    let checkpoint_error: Mutex<Option<String>> = Mutex::new(None);
    let host = s.host.clone();
    let out = a.output.clone();
    let mut checkpoint = |f: &RecordFile| {
        if let Err(e) = write(&out, &with_findings(f, &found)) {
            *checkpoint_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{e:#}"));
        }
    };
    let (recorded, planned) = beside_plan(&s, opts, &stop, &mut checkpoint, || {
        let planned = super::plan::planned_report(&g.progress, &s, &eval);
        if let Ok((report, _)) = &planned {
            *found.lock().unwrap_or_else(|e| e.into_inner()) = record::findings(report, window);
        }
        planned
    })?;
    let mut file = with_findings(
        &recorded
            .ok_or_else(|| anyhow::anyhow!("the recording thread failed; see the message above"))?,
        &found,
    );
    let mut notes = Vec::new();
    match &planned {
        Ok((report, _)) => {
            if let (Some(pid), Some(j)) = (s.inputs.pid, &mut file.job) {
                j.config = crate::plan::job_facts(host.as_ref(), pid, report)
                    .and_then(|j| j.files.first().map(|f| f.path.clone()))
                    .map(|c| crate::privacy::redact_text(&c).into_owned());
            }
        }
        Err(e) => notes.push(format!("the plan over the window failed: {e:#}")),
    }
    file.notes.extend(notes);
    write(&a.output, &file)?;
    if let Some(e) = checkpoint_error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        eprintln!(
            "warning: a checkpoint of {} failed: {e}",
            a.output.display()
        );
    }
    let samples = file.gpus.first().map_or(0, |g| g.t.len());
    let util = file
        .gpus
        .iter()
        .filter_map(|g| {
            let v: Vec<f64> = g
                .utilization_gpu
                .as_ref()?
                .iter()
                .flatten()
                .copied()
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .fold(None::<f64>, |m, x| Some(m.map_or(x, |m| m.max(x))));
    println!(
        "recorded {:.1} s ({} samples{}){}, {} finding(s): {}",
        file.duration_s,
        samples,
        util.map(|u| format!(", GPU utilization mean {u:.0}%"))
            .unwrap_or_default(),
        match &file.interrupted_by {
            Some(by) => format!(", ended early ({by})"),
            None => String::new(),
        },
        file.findings.len(),
        a.output.display()
    );
    Ok(ExitStatus::Clean)
}
