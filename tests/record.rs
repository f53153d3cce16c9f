//! `gpufix record` (issue 26) on recorded hosts: the file validates against
//! `schemas/record.schema.json`, an interrupted recording (SIGINT through the fault-injection
//! hook, the same handler Ctrl-C reaches) is a whole file that says so, the fixture runs in
//! tests/fixtures/runs validate, and `plan --pid` prints its utilization sparkline beside the
//! verdict (snapshot).

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_env(args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::cargo_bin("gpufix").unwrap();
    c.current_dir(repo())
        .env("NO_COLOR", "1")
        .env_remove("GPUFIX_PYSPY")
        .env_remove("GPUFIX_TEST_INTERRUPT_AFTER")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.arg("--no-system").args(args).output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn schema_errors(file: &Path) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/record.schema.json")).unwrap(),
    )
    .unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(&v)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn load(file: &Path) -> gpufix::vocab::record::RecordFile {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

const WORKERS0: &str = "tests/fixtures/pid/workers0.snapshot.json";

#[test]
fn a_record_of_a_recorded_host_validates_against_the_schema() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run.json");
    let o = run_env(
        &[
            "record",
            "--snapshot",
            WORKERS0,
            "--pid",
            "647",
            "--for",
            "3s",
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.starts_with("recorded 3.0 s (15 samples"),
        "{}",
        o.stdout
    );
    let errors = schema_errors(&out);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let f = load(&out);
    assert!(!f.interrupted);
    assert_eq!((f.interval_ms, f.duration_s), (200, 3.0));
    let g = &f.gpus[0];
    assert_eq!(g.t.len(), 15);
    assert_eq!(g.name.as_deref(), Some("NVIDIA H200"));
    assert_eq!(g.utilization_gpu.as_ref().unwrap().len(), 15);
    // the snapshot has no PCIe throughput: absent, not zeros
    assert!(g.pcie_rx_mb_s.is_none());
    let main = f.processes.iter().find(|p| p.pid == 647).unwrap();
    assert_eq!(main.role, gpufix::vocab::record::ProcessRole::Main);
    assert_eq!(main.cpu_percent.len(), main.t.len());
    let finding = f
        .findings
        .iter()
        .find(|x| x.rule == "data.workers-too-few")
        .unwrap();
    assert!(finding.window[0] >= 0.0 && finding.window[1] <= f.duration_s);
    assert_eq!(f.job.as_ref().unwrap().pid, 647);
}

#[test]
fn an_interrupted_record_leaves_a_whole_file_that_says_so() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run.json");
    let o = run_env(
        &[
            "record",
            "--snapshot",
            WORKERS0,
            "--pid",
            "647",
            "--for",
            "60s",
            "-o",
            out.to_str().unwrap(),
        ],
        &[("GPUFIX_TEST_INTERRUPT_AFTER", "5")],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("ended early (SIGINT)"), "{}", o.stdout);
    let errors = schema_errors(&out);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let f = load(&out);
    assert!(f.interrupted);
    assert_eq!(f.interrupted_by.as_deref(), Some("SIGINT"));
    assert_eq!(
        f.duration_s, 1.0,
        "five samples of 200 ms, not the 60 s asked for"
    );
    assert_eq!(f.gpus[0].t.len(), 5);
}

#[test]
fn plan_keeps_its_own_window_as_a_recording() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("plan-window.json");
    let o = run_env(
        &[
            "plan",
            "--snapshot",
            WORKERS0,
            "--pid",
            "647",
            "--sample",
            "5s",
            "--only",
            "data.workers-too-few",
            "--record",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains(&format!("recording: {}", out.display())),
        "{}",
        o.stdout
    );
    let errors = schema_errors(&out);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let f = load(&out);
    assert!(!f.gpus.is_empty() && !f.gpus[0].t.is_empty());
    assert_eq!(f.findings[0].rule, "data.workers-too-few");
    // the job's processes and the node over the same window, not only the GPU
    let main = f
        .processes
        .iter()
        .find(|p| p.pid == 647)
        .expect("the job's main process");
    // (a snapshot has one state of /proc, so no CPU rate: null, not zero; the live test below
    // reads rates)
    assert!(!main.t.is_empty() && main.cpu_percent.len() == main.t.len());
    assert_eq!(f.job.as_ref().map(|j| j.pid), Some(647));
}

/// On the live host (no GPU needed): a job's plan window keeps the job's process and the node.
#[test]
fn plan_record_on_a_live_job_keeps_its_processes() {
    let mut job = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("live.json");
    let pid = job.id().to_string();
    let o = run_env(
        &[
            "plan",
            "--pid",
            &pid,
            "--sample",
            "2s",
            "--only",
            "data.workers-too-few",
            "--record",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let _ = job.kill();
    let _ = job.wait();
    assert!(out.exists(), "{}\n{}", o.stdout, o.stderr);
    let errors = schema_errors(&out);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let f = load(&out);
    let p = f
        .processes
        .iter()
        .find(|p| p.pid == job.id())
        .unwrap_or_else(|| panic!("no process {} in {:?}", job.id(), f.processes));
    // a busy loop: it shows CPU use in every reading (however loaded the machine is)
    let busy: Vec<f64> = p.cpu_percent.iter().flatten().copied().collect();
    assert!(busy.len() >= 3, "{busy:?}");
    assert!(busy.iter().all(|c| *c > 0.0), "{busy:?}");
    assert!(f.node.is_some());
}

#[test]
fn the_fixture_runs_validate_against_the_schema() {
    let dir = repo().join("tests/fixtures/runs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if !p.to_string_lossy().ends_with(".run.json") {
            continue;
        }
        n += 1;
        let errors = schema_errors(&p);
        assert!(errors.is_empty(), "{}: {}", p.display(), errors.join("\n"));
        let f = load(&p);
        assert_eq!(f.version, gpufix::vocab::record::RECORD_VERSION);
        assert!(!f.gpus.is_empty(), "{}", p.display());
    }
    assert!(n >= 2, "{n} fixture runs");
}

/// The glance beside the verdict: one line, block characters in a UTF-8 terminal, an ASCII
/// ramp otherwise.
#[test]
fn plan_by_pid_prints_a_utilization_sparkline() {
    let args = [
        "plan",
        "--snapshot",
        WORKERS0,
        "--pid",
        "647",
        "--sample",
        "5s",
        "--only",
        "data.workers-too-few",
    ];
    let glance = |lang: &str| {
        let o = run_env(&args, &[("LANG", lang)]);
        assert_eq!(o.code, 2, "{}", o.stderr);
        o.stdout
            .lines()
            .filter(|l| l.starts_with("GPU utilization over the window"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    insta::assert_snapshot!("sparkline_utf8", glance("C.UTF-8"));
    insta::assert_snapshot!("sparkline_ascii", glance("C"));
}

#[test]
fn record_help_teaches_with_an_example() {
    let o = run_env(&["record", "--help"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("gpufix record --pid $(pgrep -f train.py) --for 60s -o run.json"),
        "{}",
        o.stdout
    );
}
