//! Throughput and peak memory of the streaming profiler-trace analysis on a large synthetic
//! Kineto trace. Size in MB from `GPUFIX_TRACE_MB` (default 500). Prints MB/s and the process's
//! peak resident set (VmHWM), which must stay well below the trace size.

use gpufix::evidence::trace::analyze_trace_file;
use std::io::{BufWriter, Write};
use std::time::Instant;

#[path = "../tests/support/trace_synth.rs"]
#[allow(dead_code)]
mod synth;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let target_mb: u64 = std::env::var("GPUFIX_TRACE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let mut spec = synth::well_fed();
    // Size one step, then write enough steps to reach the target.
    spec.steps = 1;
    let one = synth::write(&mut std::io::sink(), &spec).expect("size one step");
    spec.steps = 2;
    let two = synth::write(&mut std::io::sink(), &spec).expect("size two steps");
    let per_step = (two - one).max(1);
    spec.steps = ((target_mb * 1_000_000).saturating_sub(one) / per_step + 1) as u32;

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.pt.trace.json");
    let t0 = Instant::now();
    {
        let f = std::fs::File::create(&path).expect("create trace");
        let mut w = BufWriter::with_capacity(1 << 20, f);
        synth::write(&mut w, &spec).expect("write trace");
        w.flush().expect("flush trace");
    }
    let size = std::fs::metadata(&path).expect("stat trace").len();
    let gen_s = t0.elapsed().as_secs_f64();
    let rss_before = vm_hwm_kib();

    let t1 = Instant::now();
    let stats = analyze_trace_file(&path).expect("analyze trace");
    let secs = t1.elapsed().as_secs_f64();
    let mb = size as f64 / 1e6;

    println!(
        "trace: {mb:.1} MB, {} steps, {} events (generated in {gen_s:.1} s)",
        stats.steps, stats.events_seen
    );
    println!("analyzed in {secs:.2} s: {:.1} MB/s", mb / secs);
    println!(
        "kernels: {}, busy fraction: {:?}, median kernel: {:?} us",
        stats.kernel_count, stats.gpu_kernel_busy_fraction, stats.median_kernel_us
    );
    match (rss_before, vm_hwm_kib()) {
        (Some(before), Some(after)) => println!(
            "peak RSS (VmHWM): {:.1} MiB (before analysis: {:.1} MiB)",
            after as f64 / 1024.0,
            before as f64 / 1024.0
        ),
        _ => println!("peak RSS: /proc/self/status has no VmHWM here"),
    }
}
