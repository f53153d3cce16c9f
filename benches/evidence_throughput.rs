//! Evidence parsing: throughput of each text parser, and the peak memory of a whole
//! `gpufix plan --evidence FILE` on a large paste. Size in MB from `GPUFIX_EVIDENCE_MB`
//! (default 200). The pastes repeat real recordings from tests/fixtures/evidence/ until they
//! reach the size (an NCCL log of a long job, a kernel log full of Xid lines).
//!
//! `cargo bench --bench evidence_throughput` prints, per kind: MB/s of the parser alone (in
//! this process), and the wall time and peak RSS (VmHWM, which gpufix reports in `--timings`)
//! of the plan run as its own process, with the ratio to the input size; the target is ≤ 2×.
//!
//! A training log's "parser" is every evidence reader a pasted log goes through whatever it
//! holds: [`segment::segment`] (which kinds read which lines) and the whole-text line readers
//! of the kinds that find their lines anywhere in a log (CUDA runtime errors, NCCL errors,
//! collect_env, py-spy, shared-memory errors, OOM messages), on the one text `gpufix plan`
//! reads and cuts once ([`segment::segment_shared`]), as it makes them: the readers' searches
//! for a line anywhere in the text are made once between them. The same readers each
//! searching a text of their own are timed on their own line, as is the loader-warning
//! reader of job text (`formats::job_text::log_warnings`).
//!
//! `GPUFIX_EVIDENCE_PARSERS_ONLY=1` times the parsers only (no plan processes): with a small
//! `GPUFIX_EVIDENCE_MB`, the run to count instructions under `valgrind --tool=callgrind`.
//! `GPUFIX_EVIDENCE_ONLY=TEXT` runs only the kinds whose name holds TEXT (`NCCL`, `kernel`).
//!
//! Each parser rate is given twice: MB per wall-clock second, and MB per second of the
//! thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`). On a shared machine the wall clock also
//! counts the time other processes held the core; the CPU-time rate is what one core of the
//! machine gives the parser.

use gpufix::evidence::{
    collect_env, cuda_errors, kernel_log, nccl_errors, nccl_log, nvidia_smi, pyspy_dump, segment,
    shm_error, torch_memory,
};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn fixture(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A public artifact of tests/fixtures/corpus/ (see its README), ending in a newline so that
/// repeats stay whole lines.
fn corpus(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus")
        .join(name);
    let mut s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
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

/// The evidence readers every pasted training log goes through (see the module doc).
fn training_log_readers(t: &str) {
    std::hint::black_box(segment::segment(t).parts.len());
    whole_text_readers(t);
}

/// The readers of the kinds that find their lines anywhere in a log.
fn whole_text_readers(t: &str) {
    std::hint::black_box(cuda_errors::looks_like(t));
    std::hint::black_box(nccl_errors::looks_like(t));
    std::hint::black_box(collect_env::looks_like(t));
    std::hint::black_box(pyspy_dump::looks_like_pyspy_dump(t));
    std::hint::black_box(shm_error::shm_error_line(t));
    std::hint::black_box(torch_memory::parse_torch_memory(t));
}

/// [`training_log_readers`] as `gpufix plan` makes them on a paste: on the one text it read
/// (`vocab::io::read_shared`), cut by [`segment::segment_shared`], whose searches for a line
/// anywhere in the text (CUDA and NCCL errors, shared-memory errors, the marker kinds' late
/// lines) the readers after it share.
fn training_log_readers_shared(t: &std::sync::Arc<String>) {
    std::hint::black_box(segment::segment_shared(t).parts.len());
    whole_text_readers(t);
}

/// [`parse_rate`] of a reader of a shared text: each run is given a new copy of the text
/// (made before its clock starts), as each `gpufix plan` reads its paste anew.
fn parse_rate_shared(text: &str, f: impl Fn(&std::sync::Arc<String>)) -> Rate {
    median_of_3(text.len(), || {
        let shared = std::sync::Arc::new(text.to_string());
        timed(|| f(&shared))
    })
}

/// The wall-clock and CPU seconds `f` takes.
fn timed(f: impl FnOnce()) -> (f64, f64) {
    let (t, c) = (Instant::now(), thread_cpu_s());
    f();
    (t.elapsed().as_secs_f64(), thread_cpu_s() - c)
}

/// The median rates of 3 runs over `bytes`, each run giving its (wall, CPU) seconds.
fn median_of_3(bytes: usize, mut run: impl FnMut() -> (f64, f64)) -> Rate {
    let (mut wall, mut cpu): (Vec<f64>, Vec<f64>) = (0..3)
        .map(|_| {
            let (w, c) = run();
            (mbps(bytes, w), mbps(bytes, c))
        })
        .unzip();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Rate {
        wall: wall[1],
        cpu: cpu[1],
    }
}

/// CPU time this thread has run, in seconds (`CLOCK_THREAD_CPUTIME_ID`): on a shared machine
/// the wall clock counts the time other processes held the core, this does not.
#[allow(unsafe_code)]
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// A parser's rate over one text: MB per wall-clock second and MB per second of this
/// thread's CPU time, each the median of 3 runs.
#[derive(Clone, Copy)]
struct Rate {
    wall: f64,
    cpu: f64,
}

/// Median of 3 timed runs of the parser over `text`.
fn parse_rate(text: &str, f: impl Fn(&str)) -> Rate {
    median_of_3(text.len(), || timed(|| f(text)))
}

/// [`parse_rate`] of a reader that takes the text it reads (`vocab::paste::unwrap`): each run
/// is given a new copy (made before its clock starts), as `gpufix plan` hands it the paste it
/// read.
fn parse_rate_owned(text: &str, f: impl Fn(String)) -> Rate {
    median_of_3(text.len(), || {
        let owned = text.to_string();
        timed(|| f(owned))
    })
}

struct Run {
    wall_s: f64,
    peak_kib: Option<u64>,
    status: Option<i32>,
    /// the first line of stderr (a refusal's message)
    error: String,
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
        error: String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
    }
}

fn main() {
    let mb: u64 = std::env::var("GPUFIX_EVIDENCE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let parsers_only = std::env::var_os("GPUFIX_EVIDENCE_PARSERS_ONLY").is_some();
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
        // every other kind people paste, each a real public artifact repeated
        (
            "NCCL log (corpus)",
            dir.path().join("nccl-corpus.log"),
            String::new(),
            corpus("nccl_two_node_roce_a800.log"),
        ),
        // the same NCCL log as `srun --label` prints it: every line behind `0: `, taken off by
        // `vocab::paste::unwrap` before the NCCL reader reads it
        (
            "NCCL log, srun -l",
            dir.path().join("nccl-srun.log"),
            String::new(),
            fixture("nccl/socket_and_ib_init.log")
                .lines()
                .map(|l| format!("0: {l}\n"))
                .collect(),
        ),
        (
            "training log",
            dir.path().join("train.log"),
            String::new(),
            corpus("h3_log_colab_8_workers_2_cpus.txt"),
        ),
        (
            "dmesg (corpus)",
            dir.path().join("dmesg-corpus.txt"),
            String::new(),
            corpus("dmesg_xid13_graphics_exception.txt"),
        ),
        (
            "smi -q text",
            dir.path().join("smi-q.txt"),
            String::new(),
            corpus("smi_q_full_head_gtx780.txt"),
        ),
        (
            "smi table",
            dir.path().join("smi-table.txt"),
            String::new(),
            corpus("smi_table_a100_84_89pct.txt"),
        ),
        (
            "Python",
            dir.path().join("train.py"),
            String::new(),
            corpus("py_torchvision_classification_train.py"),
        ),
        (
            "YAML config",
            dir.path().join("config.yaml"),
            String::new(),
            corpus("nemo_conformer_ctc_bpe_train_ds8.yaml"),
        ),
    ];
    println!("evidence pastes of {mb} MB (parser alone: median of 3; plan: one process)");
    println!(
        "{:<18} {:>10} {:>12} {:>10} {:>14} {:>10}",
        "kind", "size MB", "parser MB/s", "plan s", "plan peak MiB", "peak/size"
    );
    let only = std::env::var("GPUFIX_EVIDENCE_ONLY").unwrap_or_default();
    for (name, path, head, unit) in kinds {
        if !name.contains(only.as_str()) {
            continue;
        }
        let size = write_repeated(&path, &head, &unit, mb * 1_000_000);
        // the parser alone, for the kinds whose parser reads the whole paste
        let rate = match name {
            "NCCL log" | "NCCL log (corpus)" => {
                let text = std::fs::read_to_string(&path).expect("read paste");
                Some(parse_rate(&text, |t| {
                    std::hint::black_box(nccl_log::parse_nccl_log(t));
                }))
            }
            "NCCL log, srun -l" => {
                let text = std::fs::read_to_string(&path).expect("read paste");
                let unwrap = parse_rate_owned(&text, |t| {
                    std::hint::black_box(gpufix::vocab::paste::unwrap(t));
                });
                println!(
                    "  (NCCL log, srun -l: vocab::paste::unwrap alone {:.1} MB/s, {:.1} MB/s of CPU time)",
                    unwrap.wall, unwrap.cpu
                );
                Some(parse_rate_owned(&text, |t| {
                    let plain = gpufix::vocab::paste::unwrap(t);
                    std::hint::black_box(nccl_log::parse_nccl_log(&plain));
                }))
            }
            "kernel log" | "dmesg (corpus)" => {
                let text = std::fs::read_to_string(&path).expect("read paste");
                Some(parse_rate(&text, |t| {
                    std::hint::black_box(kernel_log::parse_kernel_log(t));
                }))
            }
            "training log" => {
                let text = std::fs::read_to_string(&path).expect("read paste");
                let loader = parse_rate(&text, |t| {
                    std::hint::black_box(gpufix::formats::job_text::log_warnings(t));
                });
                println!(
                    "  (training log: job_text::log_warnings alone {:.1} MB/s, {:.1} MB/s of CPU time)",
                    loader.wall, loader.cpu
                );
                if std::env::var_os("GPUFIX_EVIDENCE_SPLIT").is_some() {
                    // each recogniser of the training log alone, to find the slow one
                    type Reader = fn(&str);
                    let parts: [(&str, Reader); 7] = [
                        ("segment", |t| {
                            std::hint::black_box(segment::segment(t).parts.len());
                        }),
                        ("cuda_errors::looks_like", |t| {
                            std::hint::black_box(cuda_errors::looks_like(t));
                        }),
                        ("nccl_errors::looks_like", |t| {
                            std::hint::black_box(nccl_errors::looks_like(t));
                        }),
                        ("collect_env::looks_like", |t| {
                            std::hint::black_box(collect_env::looks_like(t));
                        }),
                        ("pyspy_dump::looks_like", |t| {
                            std::hint::black_box(pyspy_dump::looks_like_pyspy_dump(t));
                        }),
                        ("shm_error_line", |t| {
                            std::hint::black_box(shm_error::shm_error_line(t));
                        }),
                        ("parse_torch_memory", |t| {
                            std::hint::black_box(torch_memory::parse_torch_memory(t));
                        }),
                    ];
                    for (n, f) in parts {
                        let r = parse_rate(&text, f);
                        println!("  (training log: {n} alone {:.1} MB/s of CPU time)", r.cpu);
                    }
                }
                let alone = parse_rate(&text, training_log_readers);
                println!(
                    "  (training log: each reader searching the text alone {:.1} MB/s, {:.1} MB/s of CPU time)",
                    alone.wall, alone.cpu
                );
                Some(parse_rate_shared(&text, training_log_readers_shared))
            }
            _ => None,
        };
        if parsers_only {
            if let Some(r) = rate {
                println!(
                    "{name:<18} {:>10.1} {:>12.1}   ({:.1} MB/s of CPU time)",
                    size as f64 / 1e6,
                    r.wall,
                    r.cpu
                );
            }
            continue;
        }
        let r = plan(&path);
        let peak_mib = r.peak_kib.map(|k| k as f64 / 1024.0);
        println!(
            "{:<18} {:>10.1} {:>12} {:>10.2} {:>14} {:>10}{}",
            name,
            size as f64 / 1e6,
            rate.map_or("-".into(), |r| format!("{:.1}", r.wall)),
            r.wall_s,
            peak_mib.map_or("?".into(), |m| format!("{m:.1}")),
            peak_mib.map_or("?".into(), |m| format!(
                "{:.2}×",
                m * 1024.0 * 1024.0 / size as f64
            )),
            match r.status {
                Some(0) | Some(2) => String::new(),
                s => format!("  (exit {s:?}: {})", r.error),
            }
        );
        if let Some(r) = rate {
            println!("{:<18} parser {:.1} MB/s of CPU time", "", r.cpu);
        }
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
