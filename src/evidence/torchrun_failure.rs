//! torchrun's failure summary: the `ChildFailedError` that torch elastic raises when a worker
//! exits non-zero, as `torch/distributed/elastic/multiprocessing/errors/__init__.py` (PyTorch
//! 2.x, `_MSG_FORMAT_TEMPLATE` / `_FAILURE_FORMAT_TEMPLATE`) formats it: a `NAME FAILED` title,
//! `Failures:` (or `<NO_OTHER_FAILURES>`), `Root Cause (first observed failure):`, and per
//! failure `[idx]:` with `time`, `host`, `rank : R (local_rank: L)`, `exitcode : E (pid: P)`,
//! `error_file` and `traceback`. For a worker killed by a signal (negative exit code)
//! `ProcessFailure` writes `Signal N (SIGNAME) received by PID P` as the traceback. The agent's
//! own line before it (`torch/distributed/elastic/multiprocessing/api.py`: `failed (exitcode:
//! E) local_rank: L (pid: P) of binary: B`) is read too.
//!
//! The same failure is printed as the `ProcessFailure` dataclass's repr wherever a launcher
//! logs the failures dict or a `RunResult` (`torch/distributed/elastic/agent/server/api.py`'s
//! `RunResult(…, failures={0: ProcessFailure(…)})`, DLRover's `The worker fails with {0:
//! ProcessFailure(…)}`): the dataclass fields in their declared order, `local_rank=L, pid=P,
//! exitcode=E, error_file='F', error_file_data={…}, message='M', timestamp=T` (the same
//! `errors/__init__.py`, read at 0140b62d; `message` is `Signal N (SIGNAME) received by PID P`
//! for a signal). Each repr is read as a failure of `process_failures`.
//!
//! The summary says how a worker ended, not why: SIGBUS (-7) is often a full `/dev/shm` and
//! SIGKILL (-9) often the host's OOM killer, but neither is shown by the summary itself, so no
//! rule reads this kind; a paste that also holds the shared-memory or kernel-log lines is read
//! by those kinds' readers.

use regex::Regex;
use std::sync::LazyLock;

use super::scan::has;

static EXITCODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*exitcode\s*:\s*(-?\d+)\s*\(pid:\s*(\d+)\)").unwrap());
static RANK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*rank\s*:\s*(-?\d+)\s*\(local_rank:\s*(-?\d+)\)").unwrap());
static SIGNAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Signal (\d+) \(([A-Z0-9_/]+)\) received by PID (\d+)").unwrap());
static AGENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\) of binary").unwrap()
});
static REPR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"ProcessFailure\(local_rank=(-?\d+), pid=(\d+), exitcode=(-?\d+), error_file=")
        .unwrap()
});
static FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(time|host|error_file|traceback)\s*:\s?(.*)$").unwrap());
static IDX: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*\[(\d+)\]:\s*$").unwrap());

fn is_marker(l: &str) -> bool {
    has!(l, "errors.ChildFailedError")
        || has!(l, "Root Cause (first observed failure):")
        || EXITCODE.is_match(l)
        || AGENT.is_match(l)
        || REPR.is_match(l)
}

/// Each `ProcessFailure(local_rank=L, pid=P, exitcode=E, …, message='…', …)` repr of a line:
/// its figures, and the signal its message names (up to the next repr or the line's end).
fn process_failures(l: &str, out: &mut Vec<serde_json::Value>) {
    let starts: Vec<_> = REPR.captures_iter(l).collect();
    for (i, c) in starts.iter().enumerate() {
        if out.len() >= super::MAX_ITEMS {
            return;
        }
        let from = c.get(0).map_or(0, |m| m.end());
        let to = starts
            .get(i + 1)
            .and_then(|n| n.get(0))
            .map_or(l.len(), |m| m.start());
        let mut f = serde_json::json!({
            "local_rank": c[1].parse::<i64>().ok(),
            "pid": c[2].parse::<u64>().ok(),
            "exitcode": c[3].parse::<i64>().ok(),
        });
        if let Some(sig) = SIGNAL.captures(&l[from..to]) {
            f["signal"] = sig[2].to_string().into();
            f["signal_number"] = sig[1].parse::<u64>().ok().into();
        }
        out.push(f);
    }
}

/// The summary read as JSON: `title`, `failures` (each with `root_cause` true for the first
/// observed one), `agent_failures` (the agent's `failed (exitcode: …)` lines).
pub fn read(text: &str) -> Option<serde_json::Value> {
    let mut title = None;
    let mut failures: Vec<serde_json::Map<String, serde_json::Value>> = Vec::new();
    let mut agent = Vec::new();
    let mut reprs = Vec::new();
    let mut in_root = false;
    let mut any = false;
    for line in text.lines() {
        let l = line.trim_end();
        if let Some(c) = AGENT.captures(l) {
            any = true;
            if agent.len() < super::MAX_ITEMS {
                agent.push(serde_json::json!({
                    "exitcode": c[1].parse::<i64>().ok(),
                    "local_rank": c[2].parse::<i64>().ok(),
                    "pid": c[3].parse::<u64>().ok(),
                }));
            }
            continue;
        }
        if l.contains("errors.ChildFailedError") {
            any = true;
        }
        if REPR.is_match(l) {
            any = true;
            process_failures(l, &mut reprs);
            continue;
        }
        let t = l.trim();
        if let Some(name) = t.strip_suffix(" FAILED") {
            if title.is_none() && !name.is_empty() {
                title = Some(super::clip(name, super::MAX_TEXT));
            }
            continue;
        }
        if t == "Failures:" {
            in_root = false;
            continue;
        }
        if t.starts_with("Root Cause (first observed failure):") {
            any = true;
            in_root = true;
            continue;
        }
        if let Some(c) = IDX.captures(l) {
            if failures.len() >= super::MAX_ITEMS {
                break;
            }
            let mut m = serde_json::Map::new();
            m.insert("idx".into(), c[1].parse::<u64>().ok().into());
            m.insert("root_cause".into(), in_root.into());
            failures.push(m);
            continue;
        }
        let Some(f) = failures.last_mut() else {
            continue;
        };
        if let Some(c) = RANK.captures(l) {
            f.insert("rank".into(), c[1].parse::<i64>().ok().into());
            f.insert("local_rank".into(), c[2].parse::<i64>().ok().into());
        } else if let Some(c) = EXITCODE.captures(l) {
            any = true;
            f.insert("exitcode".into(), c[1].parse::<i64>().ok().into());
            f.insert("pid".into(), c[2].parse::<u64>().ok().into());
        } else if let Some(c) = FIELD.captures(l) {
            let v = c[2].trim();
            f.insert(c[1].to_string(), super::clip(v, super::MAX_TEXT).into());
            if &c[1] == "traceback" {
                if let Some(s) = SIGNAL.captures(v) {
                    f.insert("signal".into(), s[2].to_string().into());
                    f.insert("signal_number".into(), s[1].parse::<u64>().ok().into());
                }
            }
        }
    }
    if !any {
        return None;
    }
    let root = failures
        .iter()
        .find(|f| f.get("root_cause") == Some(&serde_json::Value::Bool(true)));
    Some(serde_json::json!({
        "title": title,
        "root_cause_exitcode": root.and_then(|f| f.get("exitcode")).cloned(),
        "root_cause_signal": root.and_then(|f| f.get("signal")).cloned(),
        "failures": failures,
        "agent_failures": agent,
        "process_failures": reprs,
    }))
}

pub struct TorchrunFailureKind;

impl super::EvidenceKind for TorchrunFailureKind {
    fn marker(&self, line: &str) -> bool {
        is_marker(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[
            "errors.ChildFailedError",
            "Root Cause (first observed failure):",
            "exitcode",
            "ProcessFailure(local_rank=",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "torchrun-failure"
    }
    fn doc(&self) -> &'static str {
        "torchrun's ChildFailedError summary: which rank failed, its exit code or signal (SIGBUS -7, SIGKILL -9)"
    }
    fn example(&self) -> &'static str {
        "torchrun --nproc_per_node 8 train.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("title", "the script or binary named in `NAME FAILED`"),
            (
                "root_cause_exitcode",
                "the first observed failure's exit code",
            ),
            (
                "root_cause_signal",
                "its signal name, where it was killed by one",
            ),
            (
                "failures",
                "each failure: idx, root_cause, time, host, rank, local_rank, exitcode, pid, error_file, traceback, signal, signal_number",
            ),
            (
                "agent_failures",
                "the agent's `failed (exitcode: E) local_rank: L (pid: P)` lines",
            ),
            (
                "process_failures",
                "each `ProcessFailure(local_rank=L, pid=P, exitcode=E, …)` repr a launcher logged: local_rank, pid, exitcode, signal, signal_number",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        // (`scan::marker_lines` of the text, from the search made once for the late kinds)
        s.late
            .lines(super::scan::Set::Torchrun)
            .any(|l| self.marker(l))
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        read(text).ok_or(super::ParseError::NotThisKind(
            "no torchrun failure summary (ChildFailedError, `exitcode : E (pid: P)`, a ProcessFailure repr) found",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // github.com/awslabs/slapo/issues/114 (rank 1 killed by SIGBUS; corpus
    // h13_torchrun_slapo114_sigbus_summary)
    const SIGBUS: &str = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n===================================================\npytest FAILED\n---------------------------------------------------\nFailures:\n[1]:\n  time      : 2025-04-16_00:06:43\n  host      : 494f2fcc8a8d\n  rank      : 1 (local_rank: 1)\n  exitcode  : -7 (pid: 100)\n  error_file: <N/A>\n  traceback : Signal 7 (SIGBUS) received by PID 100\n---------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2025-04-16_00:06:43\n  host      : 494f2fcc8a8d\n  rank      : 0 (local_rank: 0)\n";
    // github.com/zai-org/GLM-130B/issues/100 (a Python error: exit code 1)
    const EXIT1: &str = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\n/home/edcuser/models/glm/GLM-130B-main/generate.py FAILED\n------------------------------------------------------------\nFailures:\n[1]:\n  time      : 2023-03-14_11:22:52\n  host      : localhost.localdomain\n  rank      : 7 (local_rank: 7)\n  exitcode  : 1 (pid: 160925)\n  error_file: <N/A>\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2023-03-14_11:22:52\n  host      : localhost.localdomain\n  rank      : 6 (local_rank: 6)\n  exitcode  : 1 (pid: 160924)\n  error_file: <N/A>\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n";

    #[test]
    fn a_signal_failure_and_its_fields() {
        let v = read(SIGBUS).unwrap();
        assert_eq!(v["title"], "pytest");
        let f = &v["failures"][0];
        assert_eq!(f["idx"], 1);
        assert_eq!(f["root_cause"], false);
        assert_eq!(f["rank"], 1);
        assert_eq!(f["local_rank"], 1);
        assert_eq!(f["exitcode"], -7);
        assert_eq!(f["pid"], 100);
        assert_eq!(f["host"], "494f2fcc8a8d");
        assert_eq!(f["time"], "2025-04-16_00:06:43");
        assert_eq!(f["error_file"], "<N/A>");
        assert_eq!(f["signal"], "SIGBUS");
        assert_eq!(f["signal_number"], 7);
        // the root cause's exit code is cut off in the excerpt: not guessed
        assert_eq!(v["failures"][1]["root_cause"], true);
        assert!(v["root_cause_exitcode"].is_null());
    }

    #[test]
    fn an_exit_code_without_a_signal_and_the_agent_line() {
        let v = read(EXIT1).unwrap();
        assert_eq!(v["root_cause_exitcode"], 1);
        assert!(v["root_cause_signal"].is_null());
        assert_eq!(v["failures"][1]["rank"], 6);
        assert!(v["failures"][1].get("signal").is_none());
        // github.com/lmzpai/roboMamba/issues/10 (the agent's line, PyTorch 2.x log prefix)
        let a = read("E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python\n").unwrap();
        assert_eq!(a["agent_failures"][0]["exitcode"], -9);
        assert_eq!(a["agent_failures"][0]["local_rank"], 5);
        assert_eq!(a["agent_failures"][0]["pid"], 2630);
    }

    #[test]
    fn prose_naming_the_error_is_not_the_summary() {
        // written for this test: a question that names the class without the summary
        assert!(read("why do I get ChildFailedError when I run torchrun?\n").is_none());
    }

    #[test]
    fn the_process_failure_repr_a_launcher_logs() {
        // github.com/intelligent-machine-learning/dlrover/pull/1046 (a worker killed by
        // SIGBUS; corpus h37_torchrun_dlrover1046_processfailure_sigbus)
        let t = "The worker fails with {0: ProcessFailure(local_rank=0, pid=54, exitcode=-7, error_file='<N/A>', error_file_data={'message': '<NONE>'}, message='Signal 7 (SIGBUS) received by PID 54', timestamp=1711419181)}\n";
        assert!(is_marker(t.trim_end()));
        let v = read(t).unwrap();
        let f = &v["process_failures"][0];
        assert_eq!(f["local_rank"], 0);
        assert_eq!(f["pid"], 54);
        assert_eq!(f["exitcode"], -7);
        assert_eq!(f["signal"], "SIGBUS");
        assert_eq!(f["signal_number"], 7);
        // healthy: the ChildFailedError summary of a Python error (GLM-130B#100) holds no repr
        assert_eq!(
            read(EXIT1).unwrap()["process_failures"],
            serde_json::json!([])
        );
    }
}
