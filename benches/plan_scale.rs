//! Plan scaling: load, validate and evaluate 1,000 and 10,000 synthetic rules over the recorded
//! H200 host. `cargo bench --bench plan_scale` prints the median of 5 runs for each size and the
//! time per rule, so linear growth shows as a flat per-rule figure.

use gpufix::engine::{Options, evaluate};
use gpufix::host::Host;
use gpufix::host::recorded::SnapshotHost;
use gpufix::playbook::{SourceFile, Tier, validate};
use gpufix::probes::Inputs;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn synthetic(n: usize) -> String {
    let mut s = String::from("playbook: synthetic\nlayer: data\ntitle: Synthetic rules\nrules:\n");
    for i in 0..n {
        s.push_str(&format!("  - id: synth.r{i}\n    title: Synthetic rule {i}\n    why: Scale test.\n    severity: info\n"));
        if i % 10 != 0 {
            s.push_str(&format!("    depends_on: [synth.r{}]\n", i - 1));
        }
        s.push_str(&format!(
            "    params:\n      limit: {{ default: {i}, source: \"empirical: bench\" }}\n    probes:\n      mods: {{ kind: kernel.modules }}\n      p: {{ kind: pressure }}\n    fail_when: \"'nvidia_uvm' not in mods.loaded or p.cpu.some.avg10 > params.limit + 100\"\n    message: \"rule {i}: {{{{ mods.loaded | length }}}} modules\"\n"
        ));
    }
    s
}

fn main() {
    let snap = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts/h200-vm.snapshot.json");
    let host: Arc<dyn Host> = Arc::new(SnapshotHost::load(&snap).expect("snapshot fixture"));
    println!(
        "{:>7} {:>12} {:>12} {:>12} {:>10}",
        "rules", "load+check", "evaluate", "total", "µs/rule"
    );
    for n in [1_000usize, 10_000] {
        let text = synthetic(n);
        let mut times: Vec<(Duration, Duration)> = Vec::new();
        for _ in 0..5 {
            let t0 = Instant::now();
            let set = validate::load(
                &[SourceFile {
                    name: "synthetic.yaml".into(),
                    text: text.clone(),
                    tier: Tier::Cli,
                }],
                None,
            )
            .expect("synthetic playbook is valid");
            let t1 = Instant::now();
            let report = evaluate(
                &set,
                host.clone(),
                Arc::new(Inputs::default()),
                &Options::default(),
                |_| {},
            );
            let t2 = Instant::now();
            assert_eq!(report.results.len(), n);
            times.push((t1 - t0, t2 - t1));
        }
        times.sort_by_key(|(a, b)| *a + *b);
        let (l, e) = times[2];
        let total = l + e;
        println!(
            "{n:>7} {:>10.1}ms {:>10.1}ms {:>10.1}ms {:>10.1}",
            l.as_secs_f64() * 1e3,
            e.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e6 / n as f64
        );
    }
}
