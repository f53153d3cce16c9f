//! Evidence parsing: throughput of each text parser, and the peak memory of a whole
//! `gpufix plan --evidence FILE` on a large paste. Size in MB from `GPUFIX_EVIDENCE_MB`
//! (default 200). The pastes repeat real recordings from tests/fixtures/evidence/ until they
//! reach the size (an NCCL log of a long job, a kernel log full of Xid lines).
//!
//! `cargo bench --bench evidence_throughput` prints, per kind: MB/s of the parser alone (in
//! this process), and the wall time and peak RSS (VmHWM, which gpufix reports in `--timings`)
//! of the plan run as its own process, with the ratio to the input size; the target is ≤ 2×.

use gpufix::evidence::{kernel_log, nccl_log, nvidia_smi};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn fixture(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Write `unit` repeatedly (after `head`, once) until the file holds `bytes`.
fn write_repeated(path: &Path, head: &str, unit: &str, bytes: u64) -> u64 {
    let f = std::fs::File::create(path).expect("create paste");
    let mut w = BufWriter::with_capacity(1 << 20, f);
    w.write_all(head.as_bytes()).expect("write");
    let mut n = head.len() as u64;
    while n < bytes {
        w.write_all(unit.as_bytes()).expect("write");
        n += unit.len() as u64;
    }
    w.flush().expect("flush");
    n
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs
}

/// Median of 3 timed runs of the parser over `text`.
fn parse_rate(text: &str, f: impl Fn(&str)) -> f64 {
    let mut v: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            f(text);
            mbps(text.len(), t.elapsed().as_secs_f64())
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[1]
}

struct Run {
    wall_s: f64,
    peak_kib: Option<u64>,
    status: Option<i32>,
}

fn plan(file: &Path) -> Run {
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpufix"))
        .args([
            "--no-system",
            "plan",
            "--sample",
            "0",
            "--format",
            "json",
            "--timings",
        ])
        .arg("--evidence")
        .arg(file)
        .output()
        .expect("run gpufix");
    let wall_s = t.elapsed().as_secs_f64();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    Run {
        wall_s,
        peak_kib: v["timings"]["peak_rss_kib"].as_u64(),
        status: out.status.code(),
    }
}

fn main() {
    let mb: u64 = std::env::var("GPUFIX_EVIDENCE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("temp dir");
    let nccl = fixture("nccl/socket_and_ib_init.log");
    let dmesg = fixture("kernel_log/xid79_journal.txt");
    let smi = fixture("nvidia_smi/h200-q.txt");
    let kinds: Vec<(&str, PathBuf, String, String)> = vec![
        ("NCCL log", dir.path().join("nccl.log"), String::new(), nccl),
        (
            "kernel log",
            dir.path().join("dmesg.txt"),
            String::new(),
            dmesg,
        ),
    ];
    println!("evidence pastes of {mb} MB (parser alone: median of 3; plan: one process)");
    println!(
        "{:<12} {:>10} {:>12} {:>10} {:>14} {:>10}",
        "kind", "size MB", "parser MB/s", "plan s", "plan peak MiB", "peak/size"
    );
    for (name, path, head, unit) in kinds {
        let size = write_repeated(&path, &head, &unit, mb * 1_000_000);
        let text = std::fs::read_to_string(&path).expect("read paste");
        let rate = match name {
            "NCCL log" => parse_rate(&text, |t| {
                std::hint::black_box(nccl_log::parse_nccl_log(t));
            }),
            _ => parse_rate(&text, |t| {
                std::hint::black_box(kernel_log::parse_kernel_log(t));
            }),
        };
        drop(text);
        let r = plan(&path);
        let peak_mib = r.peak_kib.map(|k| k as f64 / 1024.0);
        println!(
            "{:<12} {:>10.1} {:>12.1} {:>10.2} {:>14} {:>10}{}",
            name,
            size as f64 / 1e6,
            rate,
            r.wall_s,
            peak_mib.map_or("?".into(), |m| format!("{m:.1}")),
            peak_mib.map_or("?".into(), |m| format!(
                "{:.2}×",
                m * 1024.0 * 1024.0 / size as f64
            )),
            match r.status {
                Some(0) | Some(2) => String::new(),
                s => format!("  (exit {s:?})"),
            }
        );
    }
    // nvidia-smi -q of one GPU, parsed many times (a paste holds a few GPUs, not megabytes)
    let t = Instant::now();
    let mut n = 0usize;
    while t.elapsed().as_secs_f64() < 1.0 {
        std::hint::black_box(nvidia_smi::parse_nvidia_smi(&smi).ok());
        n += 1;
    }
    println!(
        "nvidia-smi -q (one H200, {} KB): {:.1} MB/s ({n} parses in {:.2} s)",
        smi.len() / 1000,
        mbps(smi.len() * n, t.elapsed().as_secs_f64()),
        t.elapsed().as_secs_f64()
    );
}
