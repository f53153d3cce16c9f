//! A DataLoader worker's death as PyTorch reports it to the training process. Written from
//! pytorch/pytorch (read at 03d4ef67):
//!
//! - `torch/csrc/DataLoader.cpp`, `THPModule_errorIfAnyWorkerFails` (the SIGCHLD handler of
//!   `torch/utils/data/_utils/signal_handling.py` and the loader's own checks call it): `waitid`
//!   on each worker; a worker that exited with a non-zero status raises `DataLoader worker (pid
//!   N) exited unexpectedly with exit code C. Details are lost due to multiprocessing. Rerunning
//!   with num_workers=0 may give better error trace.`, one killed by a signal `DataLoader worker
//!   (pid N) is killed by signal: S. ` with `strsignal`'s name of the signal (`Killed`,
//!   `Segmentation fault`, `Aborted`, `Terminated`, `Floating point exception`), and for SIGBUS
//!   the sentence on shared memory after it. The same file's handlers, set in each worker, print
//!   `ERROR: Unexpected segmentation fault encountered in worker.` and `ERROR: Unexpected
//!   floating-point exception encountered in worker.` (and the bus error's line) to stderr
//!   before the signal kills it.
//! - `torch/utils/data/dataloader.py`, `_MultiProcessingDataLoaderIter._try_get_data`: when the
//!   queue times out and workers are gone, `RuntimeError(f"DataLoader worker (pid(s) {pids_str})
//!   exited unexpectedly")` (`'…'.format(pids_str)` before f-strings), the pids joined by `, `;
//!   on Windows, which has no SIGCHLD handler, it is the only report.
//!
//! The exit code and the signal say what kind of death it was: a worker that raised and exited
//! with status 1 (the error is in the worker's own output, or seen with `num_workers=0`), one
//! the kernel's OOM killer (SIGKILL, `Killed`) or a crash in native code (SIGSEGV, SIGABRT)
//! ended, or, for SIGBUS, `/dev/shm` too small, which the `shm-error-log` kind reads
//! (`data.shm-too-small`); its lines are left to that kind. No rule reads this kind: host
//! memory and a worker's own exception are no rule's; the death is read so that the paste is
//! recognised and the report names how the worker died rather than "cannot tell what this is".
//! Only a report with a pid in digits is the producer's: the source line `raise
//! RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str))` a
//! traceback quotes is not.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// `DataLoader.cpp`'s two reports: `(pid N) exited unexpectedly with exit code C` and `(pid N)
/// is killed by signal: NAME.`; `dataloader.py`'s `(pid(s) N, M) exited unexpectedly`.
static REPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"DataLoader worker \(pid(?:\(s\))? ([0-9]+(?:, [0-9]+)*)\) (?:exited unexpectedly(?: with exit code (-?[0-9]+))?|is killed by signal: ([A-Za-z][A-Za-z -]*[A-Za-z])\.?)",
    )
    .expect("static regex")
});

/// The worker's own signal handlers (`SIGNAL_HANDLER` of `DataLoader.cpp`), bus error aside.
const HANDLER: &[(&str, &str)] = &[
    (
        "ERROR: Unexpected segmentation fault encountered in worker.",
        "Segmentation fault",
    ),
    (
        "ERROR: Unexpected floating-point exception encountered in worker.",
        "Floating point exception",
    ),
];

/// The phrases a line this kind claims holds (each marker line holds one).
const ANCHORS: [&str; 2] = ["DataLoader worker (pid", "encountered in worker."];

/// One report of a worker's death.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Death {
    pub pids: Vec<u32>,
    /// `exit` (a status), `signal` (killed by one), `gone` (dataloader.py's report, which says
    /// neither)
    pub how: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    pub line: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct LoaderWorkerDeaths {
    pub deaths: Vec<Death>,
    /// The first report's exit code, where it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The first signal named, by a report or a worker's handler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// A worker's handler said what it met (segmentation fault, floating-point exception).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler_line: Option<String>,
    pub count: usize,
}

/// The report in a line, if the line is one (not a bus error's: see the module doc).
fn report(line: &str) -> Option<Death> {
    if !line.contains("DataLoader worker (pid") {
        return None;
    }
    let c = REPORT.captures(line)?;
    let pids: Vec<u32> = c[1]
        .split(", ")
        .filter_map(|p| p.parse().ok())
        .take(super::MAX_ITEMS)
        .collect();
    let signal = c.get(3).map(|s| s.as_str().to_string());
    if signal.as_deref() == Some("Bus error") {
        return None;
    }
    let exit_code = c.get(2).and_then(|s| s.as_str().parse().ok());
    let how = if signal.is_some() {
        "signal"
    } else if exit_code.is_some() {
        "exit"
    } else {
        "gone"
    };
    Some(Death {
        pids,
        how,
        exit_code,
        signal,
        line: super::clip(line.trim(), super::MAX_TEXT),
    })
}

fn handler(line: &str) -> Option<&'static str> {
    HANDLER
        .iter()
        .find(|(msg, _)| line.contains(msg))
        .map(|(_, sig)| *sig)
}

/// True for a line this kind reads.
pub fn is_marker(line: &str) -> bool {
    report(line).is_some() || handler(line).is_some()
}

/// True when the text holds a report of a worker's death (not a bus error's).
pub fn looks_like(text: &str) -> bool {
    (super::scan::has!(text, "DataLoader worker (pid")
        || super::scan::has!(text, "encountered in worker."))
        && text.lines().take(2_000_000).any(is_marker)
}

pub fn parse_loader_worker_deaths(text: &str) -> LoaderWorkerDeaths {
    let mut out = LoaderWorkerDeaths::default();
    for l in text.lines() {
        if let Some(d) = report(l) {
            out.count += 1;
            if out.exit_code.is_none() && out.signal.is_none() {
                out.exit_code = d.exit_code;
            }
            if out.signal.is_none() {
                out.signal.clone_from(&d.signal);
            }
            if out.deaths.len() < super::MAX_ITEMS {
                out.deaths.push(d);
            }
        } else if let Some(sig) = handler(l) {
            out.count += 1;
            if out.signal.is_none() {
                out.signal = Some(sig.to_string());
            }
            if out.handler_line.is_none() {
                out.handler_line = Some(super::clip(l.trim(), super::MAX_TEXT));
            }
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct LoaderWorkerKind;

impl super::EvidenceKind for LoaderWorkerKind {
    fn marker(&self, line: &str) -> bool {
        is_marker(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &ANCHORS
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "dataloader-worker-death"
    }
    fn doc(&self) -> &'static str {
        "PyTorch's report that a DataLoader worker died: its pid, the exit code or the signal that ended it (a bus error is shm-error-log's)"
    }
    fn example(&self) -> &'static str {
        "python train.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "deaths",
                "each report: pids, how (exit, signal, gone), exit_code, signal, line",
            ),
            ("exit_code", "the first report's exit code"),
            (
                "signal",
                "the first signal named (strsignal's name: Killed, Segmentation fault, Aborted)",
            ),
            (
                "handler_line",
                "a worker's own handler line (segmentation fault, floating-point exception)",
            ),
            ("count", "reports and handler lines read"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like(s.text)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_loader_worker_deaths(text);
        if v.count == 0 {
            return Err(super::ParseError::NotThisKind(
                "no DataLoader worker (pid N) exited unexpectedly / is killed by signal report",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // GrayboxTech/weightslab#111 (h135): the terminal wrapped the log at 100 columns, the
    // report whole on its middle line
    const WEIGHTSLAB: &str = "03/03/2026-11:02:57.450 ERROR:weightslab.backend.dataloader_interface:_next_batch: Error in _next_bat\nch: DataLoader worker (pid 2804708) exited unexpectedly with exit code 1. Details are lost due to mul\ntiprocessing. Rerunning with num_workers=0 may give better error trace.\n";

    #[test]
    fn an_exit_code_report_wrapped_by_the_terminal_is_read() {
        assert!(looks_like(WEIGHTSLAB));
        let v = parse_loader_worker_deaths(WEIGHTSLAB);
        assert_eq!(v.count, 1);
        assert_eq!(v.exit_code, Some(1));
        assert_eq!(v.signal, None);
        assert_eq!(v.deaths[0].pids, vec![2804708]);
        assert_eq!(v.deaths[0].how, "exit");
        let r = crate::evidence::segment::segment(WEIGHTSLAB);
        let got: Vec<(&str, Vec<(usize, usize)>)> = r
            .parts
            .iter()
            .map(|p| (p.kind.name(), p.lines.clone()))
            .collect();
        assert!(
            // the block the report stands in, its wrapped neighbours with it
            got.contains(&("dataloader-worker-death", vec![(1, 3)])),
            "{got:?}"
        );
    }

    #[test]
    fn signals_pids_and_the_worker_handler_are_read() {
        let killed = "RuntimeError: DataLoader worker (pid 16471) is killed by signal: Killed. \n";
        let v = parse_loader_worker_deaths(killed);
        assert_eq!(v.signal.as_deref(), Some("Killed"));
        assert_eq!(v.deaths[0].how, "signal");
        assert_eq!(v.exit_code, None);
        let seg = "ERROR: Unexpected segmentation fault encountered in worker.\nRuntimeError: DataLoader worker (pid 2130) is killed by signal: Segmentation fault. \n";
        let v = parse_loader_worker_deaths(seg);
        assert_eq!(v.count, 2);
        assert_eq!(v.signal.as_deref(), Some("Segmentation fault"));
        assert!(
            v.handler_line
                .as_deref()
                .unwrap()
                .contains("segmentation fault")
        );
        let gone = "RuntimeError: DataLoader worker (pid(s) 1448, 8988) exited unexpectedly\n";
        let v = parse_loader_worker_deaths(gone);
        assert_eq!(v.deaths[0].pids, vec![1448, 8988]);
        assert_eq!(v.deaths[0].how, "gone");
        let abort = "RuntimeError: DataLoader worker (pid 77) is killed by signal: Aborted.";
        assert_eq!(
            parse_loader_worker_deaths(abort).signal.as_deref(),
            Some("Aborted")
        );
    }

    #[test]
    fn a_bus_error_and_the_source_line_are_not_this_kinds() {
        // the bus error is shm-error-log's (data.shm-too-small)
        let bus = "RuntimeError: DataLoader worker (pid 13068) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\nERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n";
        assert!(!looks_like(bus));
        assert_eq!(parse_loader_worker_deaths(bus).count, 0);
        // dataloader.py's source line a traceback quotes, and prose about it
        for t in [
            "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str))\n",
            "    raise RuntimeError(f\"DataLoader worker (pid(s) {pids_str}) exited unexpectedly\") from e\n",
            "My DataLoader worker (pid unknown) exited unexpectedly, why?\n",
            "the DataLoader worker exited unexpectedly with exit code 1\n",
        ] {
            assert!(!looks_like(t), "{t}");
        }
    }

    #[test]
    fn every_truncation_parses() {
        let t = format!(
            "{WEIGHTSLAB}RuntimeError: DataLoader worker (pid(s) 1448, 8988) exited unexpectedly\n"
        );
        for i in 0..t.len() {
            if t.is_char_boundary(i) {
                let _ = parse_loader_worker_deaths(&t[..i]);
            }
        }
    }
}
