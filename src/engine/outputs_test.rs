//! Every probe's declared outputs ([`crate::probes::ProbeKind::fields`]) against the fields it
//! returns on recorded hosts: each built-in rule's probes, rendered as `evaluate` renders them,
//! run on every host snapshot in `tests/fixtures/hosts` and `tests/fixtures/pid` (the job's
//! pid given), and once more for each folder of `tests/fixtures/evidence` given as evidence
//! (traces as `--trace`). A returned
//! top-level field the kind does not declare fails, and so does a declared field that no
//! recorded host returns, unless [`NOT_RECORDED`] names it with the reason.

use super::evaluate::{inputs_json, missing_input};
use crate::expr;
use crate::host::Host;
use crate::host::recorded::SnapshotHost;
use crate::playbook::{builtin_sources, validate};
use crate::probes::{self, Inputs, ProbeCtx, ProbeOutcome};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Declared fields that no recorded host or evidence fixture returns yet: each needs an input
/// no fixture has (a pasted `lspci -vv` alone, `dcgmi health` output, a cut or oversized log,
/// an out-of-memory report with its numbers, a fabric with NVLink, a job started by a launcher
/// whose parent is gone, a host known from a kernel log alone, whose NVML the recorded empty
/// host answers instead, …). Each is checked to be declared and not returned, so the list
/// only shrinks: a fixture that gives one fails the test until it is taken out.
const NOT_RECORDED: &[(&str, &[&str])] = &[
    ("nvml", &["links_only", "api_mismatch"]),
    ("kernel.log", &["aer_unrecovered_gpus", "cut", "skipped"]),
    (
        "dcgm.health",
        &[
            "entities",
            "file",
            "incidents",
            "not_healthy",
            "overall",
            "power_capped",
        ],
    ),
    ("fstab", &["entry"]),
    ("pressure", &["unavailable"]),
    ("file", &["data"]),
    // `starts_job`: the `export` lines above `nvcc --version` in cuda/ptx_unsupported_toolchain_ryankor.txt (h134)
    ("env", &["file", "launched_by"]),
    ("command", &["data"]),
    ("process", &["age_s", "unavailable"]),
    ("config", &["captures"]),
    ("cuda.compat", &["said"]),
    // `arch_list_read`: no public text in the corpus prints a build's own architecture list
    // (`get_arch_list()`, show_config's NVCC flags) beside a GPU it lacks; the probe's unit test
    // reads pytorch/pytorch#182250's REPL lines
    ("cuda.log", &["driver_found_version", "arch_list_read"]),
    // `gdr_enabled_hcas`: no public text here prints NCCL's `GPU Direct RDMA Enabled for HCA`
    ("nccl.log", &["cut", "gdr_enabled_hcas", "net_plugin"]),
    (
        "nccl.errors",
        &[
            "last_completed_work",
            "last_enqueued_work",
            "nccl_version",
            "ras",
        ],
    ),
    // no recorded host holds an XLA or TPU out-of-memory report (the corpus's are read in
    // playbooks/tests/memory.yaml and tests/cli.rs)
    ("xla.oom", &["bfc_stats", "file", "oom", "oom_bytes", "tpu"]),
    (
        "torch.memory",
        &[
            "alloc_conf_hint",
            "allowed_mib",
            "free_mib",
            "gpu",
            "other_processes",
            "other_processes_mib",
            "private_pools_mib",
            "process_in_use_mib",
            "total_capacity_mib",
            "tried_to_allocate_mib",
        ],
    ),
    (
        "gpu.usage",
        &[
            "gpu_util",
            "job_gpus",
            "job_inferred",
            "process_evidence",
            "snapshot",
        ],
    ),
    (
        "gpu.topology",
        &[
            "all_pairs_sys",
            "file",
            "inactive_links",
            "links",
            "nvlink_pairs",
            "pairs",
        ],
    ),
    ("shm", &["how", "unknown"]),
];

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.file_name().is_some_and(|n| n != "README.md") {
            out.push(p);
        }
    }
}

fn snapshots(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo(dir))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".snapshot.json"))
        .collect();
    v.sort();
    v
}

/// The job of a recorded `--pid` host: its lowest recorded pid (the launcher; its workers
/// have higher ones).
fn job_pid(host: &SnapshotHost) -> Option<u32> {
    host.snapshot()
        .files
        .keys()
        .filter_map(|k| {
            k.strip_prefix("/proc/")?
                .strip_suffix("/cmdline")?
                .parse()
                .ok()
        })
        .min()
}

/// Probes as site playbooks use them, for the kinds and parameters no built-in rule takes.
fn site_probes() -> Vec<Value> {
    vec![
        json!({"kind": "sysfs", "path": "/sys/block/vda/queue/read_ahead_kb"}),
        json!({"kind": "sysfs", "path": "/sys/kernel/mm/transparent_hugepage/enabled"}),
        json!({"kind": "fstab", "mount_point": "/"}),
        json!({"kind": "mounts", "path": "/"}),
        json!({"kind": "file", "path": "/proc/modules", "regex": "(?P<module>nvidia_uvm)"}),
        json!({"kind": "file", "path": "/etc/os-release", "parse": "lines"}),
        json!({"kind": "file", "path": "/etc/os-release", "parse": "dotenv"}),
        json!({"kind": "file", "path": "/etc/gpufix-absent", "missing_ok": true}),
        json!({"kind": "command", "argv": ["nvidia-smi"], "regex": "Driver Version: (?P<driver>\\S+)"}),
        json!({"kind": "command", "argv": ["nvidia-smi"], "parse": "lines"}),
    ]
}

/// Top-level fields each kind returned, over every built-in rule's probes on `host`.
fn returned(host: &dyn Host, inputs: &Inputs, seen: &mut BTreeMap<String, BTreeSet<String>>) {
    let set = validate::load(&builtin_sources(), None).expect("the built-in playbooks load");
    let inputs_v = inputs_json(inputs);
    let host_v = json!({"cpus": host.cpu_count(), "live": host.is_live()});
    let mut done = BTreeSet::new();
    let base = json!({"params": {}, "inputs": inputs_v, "host": host_v});
    let site: Vec<(Value, Map<String, Value>)> = site_probes()
        .into_iter()
        .map(|p| (base.clone(), p.as_object().unwrap().clone()))
        .collect();
    let rules = set.rules.iter().flat_map(|r| {
        let base = json!({"params": r.params, "inputs": inputs_v, "host": host_v});
        r.rule
            .probes
            .values()
            .map(move |spec| (base.clone(), spec.clone()))
    });
    for (base, spec) in rules.chain(site) {
        let kind_name = spec.get("kind").and_then(Value::as_str).unwrap_or_default();
        let kind = probes::find(kind_name).expect("a built-in rule names a known probe");
        let mut params = spec.clone();
        params.remove("kind");
        if missing_input(&Value::Object(params.clone()), &inputs_v).is_some() {
            continue;
        }
        let Ok(Value::Object(p)) = expr::render_value(&Value::Object(params), &base) else {
            continue;
        };
        if !done.insert(format!("{kind_name} {}", Value::Object(p.clone()))) {
            continue;
        }
        let ctx = ProbeCtx {
            host,
            inputs,
            sample: Duration::from_secs(5),
            deadline: Duration::MAX,
        };
        if let ProbeOutcome::Value(Value::Object(m)) = probes::run_checked(kind, &p, &ctx) {
            seen.entry(kind_name.to_string())
                .or_default()
                .extend(m.keys().cloned());
        }
    }
}

#[test]
fn every_probe_returns_exactly_its_declared_outputs_on_recorded_hosts() {
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for snap in snapshots("tests/fixtures/hosts") {
        let host = SnapshotHost::load(&snap).unwrap();
        returned(&host, &Inputs::default(), &mut seen);
    }
    for snap in snapshots("tests/fixtures/pid") {
        let host = SnapshotHost::load(&snap).unwrap();
        let inputs = Inputs {
            pid: job_pid(&host),
            ..Inputs::default()
        };
        assert!(
            inputs.pid.is_some(),
            "{} records no process",
            snap.display()
        );
        returned(&host, &inputs, &mut seen);
    }
    // one pass per kind of evidence, as a person pastes it
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo("tests/fixtures/evidence"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let mut files = Vec::new();
        files_under(&dir, &mut files);
        if dir.ends_with("trace") {
            // traces as `--trace` (given as --evidence, every probe that reads job text reads
            // a multi-megabyte trace: minutes in a debug build)
            for trace in files {
                let inputs = Inputs {
                    trace: Some(trace),
                    ..Inputs::default()
                };
                returned(&SnapshotHost::empty(), &inputs, &mut seen);
            }
            continue;
        }
        let inputs = Inputs {
            evidence: files,
            ..Inputs::default()
        };
        returned(&SnapshotHost::empty(), &inputs, &mut seen);
    }

    let mut problems = Vec::new();
    for kind in probes::PROBES {
        let declared: BTreeSet<&str> = probes::output_fields(*kind).into_iter().collect();
        let got = seen.remove(kind.name()).unwrap_or_default();
        for f in &got {
            if !declared.contains(f.as_str()) {
                problems.push(format!(
                    "{} returns `{f}`, which its fields() does not declare",
                    kind.name()
                ));
            }
        }
        for f in &declared {
            let excused = NOT_RECORDED
                .iter()
                .any(|(k, fields)| *k == kind.name() && fields.contains(f));
            match (got.contains(*f), excused) {
                (false, false) => problems.push(format!(
                    "{} declares `{f}`, which no recorded host returns",
                    kind.name()
                )),
                (true, true) => problems.push(format!(
                    "{} returns `{f}` on a recorded host: take it out of NOT_RECORDED",
                    kind.name()
                )),
                _ => {}
            }
        }
    }
    for (k, fields) in NOT_RECORDED {
        let kind = probes::find(k).expect("NOT_RECORDED names a probe kind");
        for f in *fields {
            assert!(
                probes::output_fields(kind).contains(f),
                "NOT_RECORDED: {k} does not declare `{f}`"
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
