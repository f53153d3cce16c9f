//! Progress on stderr for the slow parts of a run: reading large inputs (evidence, traces,
//! logs), the sampling window, and probes that wait on the driver (the CUDA check, NVML). A
//! spinner when stderr is a terminal; plain `gpufix: ...` lines with `--progress` (a log, a CI
//! job); nothing with `--quiet` or when stderr is not a terminal. stdout is never touched, so
//! machine formats stay clean.
//!
//! How progress shows is the run's: a [`Progress`] built from its flags and carried by its
//! [`super::Global`], not a process-wide setting, so two runs in one process (the tests) each
//! show theirs.

use crate::engine::observe::ProbeKey;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
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

/// One run's progress reporter: when it shows (from the run's flags) and where its lines go.
#[derive(Debug, Clone)]
pub struct Progress {
    mode: Mode,
    /// Lines kept here instead of written to stderr (a test reading what a run showed); never
    /// a spinner.
    kept: Option<Arc<Mutex<String>>>,
}

impl Default for Progress {
    /// Nothing shown: commands that do not probe.
    fn default() -> Self {
        Progress::new(Mode::Never)
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

impl Progress {
    /// Progress shown on stderr as `mode` says.
    pub fn new(mode: Mode) -> Progress {
        Progress { mode, kept: None }
    }

    /// Progress whose lines are kept in the returned buffer, as when stderr is not a terminal.
    pub fn kept(mode: Mode) -> (Progress, Arc<Mutex<String>>) {
        let buf = Arc::new(Mutex::new(String::new()));
        (
            Progress {
                mode,
                kept: Some(buf.clone()),
            },
            buf,
        )
    }

    fn line(&self, s: &str) {
        match &self.kept {
            Some(buf) => {
                let mut b = buf.lock().unwrap_or_else(|e| e.into_inner());
                b.push_str(s);
                b.push('\n');
            }
            None => eprintln!("{s}"),
        }
    }

    fn draw(&self, live_only_spinner: bool) -> Option<Draw> {
        let terminal = self.kept.is_none() && std::io::stderr().is_terminal();
        match self.mode {
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

    /// Shown while large input files are read (session open), until the value is dropped;
    /// only when the given files add up to `LARGE_INPUTS` or more.
    pub fn reading(&self, files: &[PathBuf]) -> Reading {
        let sizes: Vec<u64> = files
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .collect();
        let total: u64 = sizes.iter().sum();
        let draw = if total >= LARGE_INPUTS {
            self.draw(true)
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
            Some(Draw::Lines) => self.line(&format!("gpufix: {what}")),
            None => {}
        }
        Reading {
            to: self.clone(),
            draw,
            started: Instant::now(),
        }
    }

    /// Shown while the probes run, until the value is dropped. `live`: the host is this machine
    /// (or a tree under --root), where probes can be slow; a snapshot or pasted evidence
    /// answers at once and gets a spinner only with `--progress`.
    pub fn probing(&self, live: bool, sample: Duration, deadline: Duration) -> Probing {
        let draw = self.draw(live);
        match &draw {
            Some(Draw::Spinner(b)) => b.set_message(if sample.is_zero() {
                "probing…".to_string()
            } else {
                format!("probing, sampling for {sample:.1?}…")
            }),
            Some(Draw::Lines) => self.line(&format!(
                "gpufix: probing (sampling window {:.1}s, probe deadline {:.1}s)",
                sample.as_secs_f64(),
                deadline.as_secs_f64()
            )),
            None => {}
        }
        Probing {
            to: self.clone(),
            draw,
            started: Instant::now(),
            sample,
            done: 0,
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// Shown while large input files are read (session open); dropped when done.
pub struct Reading {
    to: Progress,
    draw: Option<Draw>,
    started: Instant,
}

impl Drop for Reading {
    fn drop(&mut self) {
        match self.draw.take() {
            Some(Draw::Spinner(b)) => b.finish_and_clear(),
            Some(Draw::Lines) => self.to.line(&format!(
                "gpufix: inputs read in {:.1}s",
                self.started.elapsed().as_secs_f64()
            )),
            None => {}
        }
    }
}

/// Shown while the probes run: the sampling window's countdown, then how many answered and
/// which one came last, with the elapsed time.
pub struct Probing {
    to: Progress,
    draw: Option<Draw>,
    started: Instant,
    sample: Duration,
    done: usize,
}

impl Probing {
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
            Some(Draw::Lines) if elapsed >= SLOW_PROBE => self.to.line(&format!(
                "gpufix: {kind} answered after {:.1}s",
                elapsed.as_secs_f64()
            )),
            _ => {}
        }
    }
}

impl Drop for Probing {
    fn drop(&mut self) {
        match self.draw.take() {
            Some(Draw::Spinner(b)) => b.finish_and_clear(),
            Some(Draw::Lines) => self.to.line(&format!(
                "gpufix: {} probe{} answered in {:.1}s",
                self.done,
                if self.done == 1 { "" } else { "s" },
                self.started.elapsed().as_secs_f64()
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs in one process each show their own progress: a `--progress` run's lines stay
    /// its own while a `--quiet` one, made after it and used between its lines, shows nothing
    /// (with one process-wide setting, the second run's `--quiet` silenced the first).
    #[test]
    fn two_runs_in_one_process_show_their_own_progress() {
        let (loud, loud_lines) = Progress::kept(Mode::Always);
        let (quiet, quiet_lines) = Progress::kept(Mode::Never);
        let big = tempfile::NamedTempFile::new().unwrap();
        big.as_file().set_len(LARGE_INPUTS).unwrap();
        let files = [big.path().to_path_buf()];
        {
            let _r = loud.reading(&files);
            let _q = quiet.reading(&files);
        }
        let mut p = loud.probing(false, Duration::ZERO, Duration::from_secs(5));
        let mut q = quiet.probing(false, Duration::ZERO, Duration::from_secs(5));
        q.probe_done(&ProbeKey("nvml".into()));
        drop(q);
        p.probe_done(&ProbeKey("nvml".into()));
        drop(p);
        let loud_lines = loud_lines.lock().unwrap().clone();
        let lines: Vec<&str> = loud_lines.lines().collect();
        assert_eq!(lines.len(), 4, "{loud_lines}");
        assert_eq!(lines[0], "gpufix: reading 1.0 MiB of inputs (1 file)");
        assert!(
            lines[1].starts_with("gpufix: inputs read in "),
            "{loud_lines}"
        );
        assert_eq!(
            lines[2],
            "gpufix: probing (sampling window 0.0s, probe deadline 5.0s)"
        );
        assert!(
            lines[3].starts_with("gpufix: 1 probe answered in "),
            "{loud_lines}"
        );
        assert_eq!(quiet_lines.lock().unwrap().as_str(), "");
        // an Auto run whose stderr is not a terminal shows nothing either
        let (auto, auto_lines) = Progress::kept(Mode::Auto);
        drop(auto.probing(true, Duration::ZERO, Duration::from_secs(5)));
        assert_eq!(auto_lines.lock().unwrap().as_str(), "");
    }
}
