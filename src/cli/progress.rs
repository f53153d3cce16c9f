//! Progress on stderr for the slow parts of a run: reading large inputs (evidence, traces,
//! logs), the sampling window, and probes that wait on the driver (the CUDA check, NVML). A
//! spinner when stderr is a terminal; plain `gpufix: ...` lines with `--progress` (a log, a CI
//! job); nothing with `--quiet` or when stderr is not a terminal. stdout is never touched, so
//! machine formats stay clean.

use crate::engine::observe::ProbeKey;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// When to show progress; set once per run from the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A spinner when stderr is a terminal, nothing otherwise.
    Auto,
    /// `--progress`: a spinner on a terminal, lines elsewhere.
    Always,
    /// `--quiet`.
    Never,
}

static MODE: AtomicU8 = AtomicU8::new(0);

pub fn set(mode: Mode) {
    MODE.store(mode as u8, Ordering::Relaxed);
}

fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Always,
        2 => Mode::Never,
        _ => Mode::Auto,
    }
}

/// Inputs at least this large get a "reading" line: below it, reading takes no noticeable time.
const LARGE_INPUTS: u64 = 1 << 20;

/// A probe answering after this long gets its own line in `--progress` line mode.
const SLOW_PROBE: Duration = Duration::from_secs(1);

enum Draw {
    Spinner(ProgressBar),
    Lines,
}

fn draw(live_only_spinner: bool) -> Option<Draw> {
    let terminal = std::io::stderr().is_terminal();
    match mode() {
        Mode::Never => None,
        Mode::Auto if !terminal || !live_only_spinner => None,
        Mode::Always if !terminal => Some(Draw::Lines),
        _ => {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(120));
            Some(Draw::Spinner(b))
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// Shown while large input files are read (session open); dropped when done.
pub struct Reading {
    draw: Option<Draw>,
    started: Instant,
}

impl Reading {
    /// Starts when the given files add up to `LARGE_INPUTS` or more.
    pub fn start(files: &[PathBuf]) -> Reading {
        let sizes: Vec<u64> = files
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .collect();
        let total: u64 = sizes.iter().sum();
        let draw = if total >= LARGE_INPUTS {
            draw(true)
        } else {
            None
        };
        let what = format!(
            "reading {} of inputs ({} file{})",
            mib(total),
            sizes.len(),
            if sizes.len() == 1 { "" } else { "s" }
        );
        match &draw {
            Some(Draw::Spinner(b)) => b.set_message(format!("{what}…")),
            Some(Draw::Lines) => eprintln!("gpufix: {what}"),
            None => {}
        }
        Reading {
            draw,
            started: Instant::now(),
        }
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        match self.draw.take() {
            Some(Draw::Spinner(b)) => b.finish_and_clear(),
            Some(Draw::Lines) => eprintln!(
                "gpufix: inputs read in {:.1}s",
                self.started.elapsed().as_secs_f64()
            ),
            None => {}
        }
    }
}

/// Shown while the probes run: the sampling window's countdown, then how many answered and
/// which one came last, with the elapsed time.
pub struct Probing {
    draw: Option<Draw>,
    started: Instant,
    sample: Duration,
    done: usize,
}

impl Probing {
    /// `live`: the host is this machine (or a tree under --root), where probes can be slow; a
    /// snapshot or pasted evidence answers at once and gets a spinner only with `--progress`.
    pub fn start(live: bool, sample: Duration, deadline: Duration) -> Probing {
        let draw = draw(live);
        match &draw {
            Some(Draw::Spinner(b)) => b.set_message(if sample.is_zero() {
                "probing…".to_string()
            } else {
                format!("probing, sampling for {sample:.1?}…")
            }),
            Some(Draw::Lines) => eprintln!(
                "gpufix: probing (sampling window {:.1}s, probe deadline {:.1}s)",
                sample.as_secs_f64(),
                deadline.as_secs_f64()
            ),
            None => {}
        }
        Probing {
            draw,
            started: Instant::now(),
            sample,
            done: 0,
        }
    }

    /// A probe answered (the engine calls this from its observer, one probe at a time).
    pub fn probe_done(&mut self, key: &ProbeKey) {
        self.done += 1;
        let kind = key.0.split(' ').next().unwrap_or_default();
        let elapsed = self.started.elapsed();
        match &self.draw {
            Some(Draw::Spinner(b)) => {
                let left = self.sample.saturating_sub(elapsed);
                b.set_message(if left.is_zero() {
                    format!("probing: {} answered, last {kind}…", self.done)
                } else {
                    format!(
                        "sampling… {:.0}s left, {} probes answered",
                        left.as_secs_f64().ceil(),
                        self.done
                    )
                });
            }
            Some(Draw::Lines) if elapsed >= SLOW_PROBE => eprintln!(
                "gpufix: {kind} answered after {:.1}s",
                elapsed.as_secs_f64()
            ),
            _ => {}
        }
    }
}

impl Drop for Probing {
    fn drop(&mut self) {
        match self.draw.take() {
            Some(Draw::Spinner(b)) => b.finish_and_clear(),
            Some(Draw::Lines) => eprintln!(
                "gpufix: {} probe{} answered in {:.1}s",
                self.done,
                if self.done == 1 { "" } else { "s" },
                self.started.elapsed().as_secs_f64()
            ),
            None => {}
        }
    }
}

/// The input files a run reads whole at session open (size decides whether that shows).
pub fn input_files(spec: &crate::session::Spec) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [&spec.config, &spec.trace, &spec.nccl_log, &spec.kernel_log]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    files.extend(spec.evidence.iter().cloned());
    files
}
