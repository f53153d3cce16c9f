//! SYNTHETIC recordings for `gpufix report`'s tests (tests/report.rs, tests/report_browser.sh):
//! shapes made up here, with deterministic noise, to exercise every lane and the edge cases the
//! format defines (absent metrics, a null reading, downsampling, hostile strings). None of them
//! was recorded on a machine; the recorded fixture runs of issue 26 come from `gpufix record` on
//! the H200. They are written to tests/fixtures/runs/synthetic-*.json by
//! `GPUFIX_REGENERATE_RUNS=1 cargo test --test report synthetic_fixtures_are_current`.

use gpufix::vocab::record::*;

/// splitmix64: a deterministic "random" number in [0, 1) for sample `i` of stream `seed`.
fn noise(i: usize, seed: u64) -> f64 {
    let mut z = (i as u64)
        .wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn times(n: usize, step: f64) -> Vec<f64> {
    (0..n).map(|i| r1(i as f64 * step * 10.0) / 10.0).collect()
}

fn col(n: usize, f: impl Fn(usize) -> f64) -> Column {
    (0..n).map(|i| Some(r1(f(i)))).collect()
}

fn base(host: &str, duration_s: f64) -> RecordFile {
    RecordFile {
        version: RECORD_VERSION,
        gpufix: "0.1.0".into(),
        host: host.into(),
        started_at: "2026-12-03T12:00:00Z".into(),
        interval_ms: 200,
        duration_s,
        interrupted: false,
        interrupted_by: None,
        job: None,
        gpus: vec![],
        processes: vec![],
        node: None,
        main_thread: None,
        progress: None,
        findings: vec![],
        downsampled: None,
        notes: vec![],
    }
}

fn gpu(index: u32, n: usize, step: f64, util: impl Fn(usize) -> f64, pcie: bool) -> GpuSeries {
    let seed = u64::from(index) * 7 + 1;
    let u = |i| util(i).clamp(0.0, 100.0);
    GpuSeries {
        index,
        uuid: Some(format!("GPU-synthetic-{index}")),
        name: Some("NVIDIA H200".into()),
        t: times(n, step),
        utilization_gpu: Some(col(n, u)),
        utilization_memory: Some(col(n, |i| u(i) * 0.4)),
        memory_used_mib: Some(col(n, |i| 30_000.0 + 200.0 * noise(i, seed + 1))),
        memory_total_mib: Some(143_771.0),
        clock_sm_mhz: Some(col(n, |_| 1980.0)),
        power_w: Some(col(n, |i| 120.0 + 5.0 * u(i))),
        pcie_rx_mb_s: pcie.then(|| col(n, |i| 40.0 * u(i) + 50.0 * noise(i, seed + 2))),
        pcie_tx_mb_s: pcie.then(|| col(n, |i| 5.0 * u(i) + 20.0 * noise(i, seed + 3))),
        throttle_reasons: Some(vec![Some(vec![]); n]),
    }
}

fn process(
    pid: u32,
    role: ProcessRole,
    name: &str,
    n: usize,
    cpu: impl Fn(usize) -> f64,
) -> ProcessSeries {
    ProcessSeries {
        pid,
        role,
        name: name.into(),
        t: times(n, 0.2),
        cpu_percent: col(n, cpu),
        state: (0..n).map(|_| Some("R".to_string())).collect(),
        read_bytes_s: Some(col(n, |i| 1.0e6 * noise(i, u64::from(pid)))),
        write_bytes_s: None,
    }
}

fn main_thread(
    pid: u32,
    n: usize,
    pick: impl Fn(f64) -> ThreadState,
    failed: &[usize],
) -> MainThreadSeries {
    MainThreadSeries {
        pid,
        t: times(n, 0.2),
        state: (0..n)
            .map(|i| (!failed.contains(&i)).then(|| pick(noise(i, 99))))
            .collect(),
    }
}

fn finding(rule: &str, layer: &str, window: [f64; 2], message: &str) -> RecordFinding {
    RecordFinding {
        rule: rule.into(),
        layer: layer.into(),
        status: "fail".into(),
        severity: "warning".into(),
        message: message.into(),
        window,
        fix: None,
        diff: None,
    }
}

const N: usize = 300; // 60 s at 200 ms

fn job(pid: u32) -> Option<RecordJob> {
    Some(RecordJob {
        pid,
        command: "python train.py --config train.yaml".into(),
        user: Some("alice".into()),
        config: Some("/home/alice/run/train.yaml".into()),
    })
}

/// A starved job: the GPUs idle between short bursts, two DataLoader workers saturated, the
/// main thread mostly waiting on data.
pub fn starved() -> RecordFile {
    let mut r = base("synthetic-h200", 60.0);
    r.job = job(4242);
    let util = |seed: u64| {
        move |i: usize| {
            if i.is_multiple_of(5) {
                85.0
            } else {
                8.0 + 10.0 * noise(i, seed)
            }
        }
    };
    r.gpus = vec![gpu(0, N, 0.2, util(1), true), gpu(1, N, 0.2, util(2), true)];
    // one failed NVML reading
    r.gpus[0].utilization_gpu.as_mut().unwrap()[17] = None;
    r.processes = vec![
        process(4242, ProcessRole::Main, "python", N, |i| {
            35.0 + 10.0 * noise(i, 5)
        }),
        process(4250, ProcessRole::Worker, "pt_data_worker", N, |i| {
            97.0 + 3.0 * noise(i, 6)
        }),
        process(4251, ProcessRole::Worker, "pt_data_worker", N, |i| {
            96.0 + 4.0 * noise(i, 7)
        }),
    ];
    r.node = Some(NodeSeries {
        t: times(N, 0.2),
        cpu_busy_percent: Some(col(N, |i| 12.0 + 2.0 * noise(i, 8))),
        cpu_pressure_percent: Some(col(N, |i| 3.0 * noise(i, 9))),
        io_pressure_percent: Some(col(N, |i| noise(i, 10))),
    });
    r.main_thread = Some(main_thread(
        4242,
        N,
        |x| match x {
            x if x < 0.72 => ThreadState::DataWait,
            x if x < 0.92 => ThreadState::Compute,
            x if x < 0.96 => ThreadState::HostSync,
            _ => ThreadState::Other,
        },
        &[50],
    ));
    r.progress = Some(ProgressSeries {
        source: "train.log".into(),
        unit: "it/s".into(),
        t: (1..=60).map(f64::from).collect(),
        rate: col(60, |i| 3.0 + 0.4 * noise(i, 11)),
    });
    let mut workers = finding(
        "data.workers-too-few",
        "data",
        [0.0, 60.0],
        "2 DataLoader workers are busy 96% of the time and the GPU waits: num_workers 2 is too few for 64 CPUs",
    );
    workers.fix = Some("set num_workers: 8 in /home/alice/run/train.yaml".into());
    workers.diff = Some(
        "--- /home/alice/run/train.yaml\n+++ /home/alice/run/train.yaml\n@@ -3,3 +3,3 @@\n data:\n-  num_workers: 2\n+  num_workers: 8\n   batch_size: 256\n"
            .into(),
    );
    let mut wait = finding(
        "data.dataloader-wait",
        "data",
        [12.0, 41.5],
        "the main thread waits on the DataLoader in 72% of py-spy samples",
    );
    wait.severity = "critical".into();
    r.findings = vec![
        workers,
        wait,
        finding(
            "driver.persistence-off",
            "driver",
            [0.0, 60.0],
            "persistence mode is off on GPU 0, 1",
        ),
    ];
    r
}

/// The same job after the fix: GPUs busy, eight workers at moderate CPU, the main thread
/// computing.
pub fn healthy() -> RecordFile {
    let mut r = base("synthetic-h200", 60.0);
    r.job = job(4343);
    let util = |seed: u64| move |i: usize| 90.0 + 9.0 * noise(i, seed);
    r.gpus = vec![
        gpu(0, N, 0.2, util(21), true),
        gpu(1, N, 0.2, util(22), true),
    ];
    r.processes = std::iter::once(process(4343, ProcessRole::Main, "python", N, |i| {
        95.0 + 5.0 * noise(i, 23)
    }))
    .chain((0..8).map(|w| {
        process(
            4350 + w,
            ProcessRole::Worker,
            "pt_data_worker",
            N,
            move |i| 40.0 + 15.0 * noise(i, 30 + u64::from(w)),
        )
    }))
    .collect();
    r.main_thread = Some(main_thread(
        4343,
        N,
        |x| match x {
            x if x < 0.03 => ThreadState::DataWait,
            x if x < 0.90 => ThreadState::Compute,
            x if x < 0.95 => ThreadState::Copy,
            _ => ThreadState::HostSync,
        },
        &[],
    ));
    r.progress = Some(ProgressSeries {
        source: "train.log".into(),
        unit: "it/s".into(),
        t: (1..=60).map(f64::from).collect(),
        rate: col(60, |i| 14.5 + 0.8 * noise(i, 24)),
    });
    r.findings = vec![
        finding(
            "driver.persistence-off",
            "driver",
            [0.0, 60.0],
            "persistence mode is off on GPU 0, 1",
        ),
        finding(
            "launch.host-sync-in-step",
            "launch",
            [30.0, 45.0],
            "the main thread synchronises with the GPU in 5% of samples",
        ),
    ];
    r
}

/// A GPU without PCIe counters, no job named (no processes, no py-spy, no progress), one
/// failed reading.
pub fn no_pcie() -> RecordFile {
    let mut r = base("synthetic-a10", 30.0);
    let n = 150;
    r.gpus = vec![gpu(0, n, 0.2, |i| 40.0 + 30.0 * noise(i, 41), false)];
    r.gpus[0].utilization_gpu.as_mut().unwrap()[3] = None;
    r.gpus[0].name = Some("NVIDIA A10".into());
    r.notes = vec![
        "pcie_rx_mb_s, pcie_tx_mb_s: NVML answered NotSupported on GPU 0".into(),
        "no --pid: processes, the main thread and progress were not sampled".into(),
    ];
    r.findings = vec![finding(
        "launch.gpu-underutilized",
        "launch",
        [5.0, 25.0],
        "GPU 0 averages 55% utilization",
    )];
    r
}

/// A long window merged down to [`MAX_POINTS`] samples: 48 minutes at 200 ms, four samples to
/// a point.
pub fn downsampled() -> RecordFile {
    let mut r = base("synthetic-h200", 2880.0);
    r.job = job(4444);
    let n = MAX_POINTS;
    let mut g = gpu(
        0,
        n,
        0.8,
        |i| {
            if (i / 300).is_multiple_of(2) {
                92.0
            } else {
                20.0 + 10.0 * noise(i, 51)
            }
        },
        true,
    );
    g.clock_sm_mhz = None;
    g.power_w = None;
    g.utilization_memory = None;
    g.throttle_reasons = None;
    r.gpus = vec![g];
    r.downsampled = Some(Downsampled {
        factor: 4,
        raw_samples: 14_400,
    });
    r.findings = vec![finding(
        "data.dataloader-wait",
        "data",
        [240.0, 480.0],
        "the GPU waits between 240 s and 480 s",
    )];
    r
}

/// Strings that try to break out of the page: a `</script>` in the command line, markup in a
/// process name, a comment opener and U+2028 in a message, a `</pre>` in a diff.
pub fn hostile() -> RecordFile {
    let mut r = no_pcie();
    r.host = "\"><svg onload=alert(3)>".into();
    r.job = Some(RecordJob {
        pid: 7,
        command: "python train.py --name '</script><script>alert(1)</script>' \u{2028}x".into(),
        user: Some("<b>bob</b>".into()),
        config: None,
    });
    r.processes = vec![process(
        7,
        ProcessRole::Main,
        "<img src=x onerror=alert(2)>",
        150,
        |_| 50.0,
    )];
    r.notes
        .push("<!-- note --><script>alert(4)</script>".into());
    r.findings[0].rule = "launch.gpu-underutilized</script><script>alert(5)</script>".into();
    r.findings[0].message = "<!--\u{2029} \x1b[2J".into();
    r.findings[0].diff = Some("--- a\n+++ b\n-x\n+</pre><script>alert(6)</script>\n".into());
    r
}

/// Every synthetic run with its fixture file name.
pub fn all() -> Vec<(&'static str, RecordFile)> {
    vec![
        ("synthetic-starved.json", starved()),
        ("synthetic-healthy.json", healthy()),
        ("synthetic-no-pcie.json", no_pcie()),
        ("synthetic-downsampled.json", downsampled()),
        ("synthetic-hostile.json", hostile()),
    ]
}
