//! End-to-end tests of the `gpufix` binary: exit codes, diagnostics, plans on recorded hosts.
//! Snapshots live in tests/snapshots/ (insta); run with INSTA_UPDATE=always to refresh, then
//! review the diff.

use assert_cmd::Command;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `gpufix` run from the repository root, isolated from /etc/gpufix and colors.
pub fn gpufix() -> Command {
    let mut c = Command::cargo_bin("gpufix").unwrap();
    c.current_dir(repo()).env("NO_COLOR", "1").arg("--no-system");
    c
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str]) -> Out {
    let o = gpufix().args(args).output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Every file in tests/fixtures/playbooks/invalid is a different mistake: each must exit 1,
/// print its own diagnostic with file, line or path, and a help line, and probe nothing.
mod invalid_playbooks {
    use super::*;

    #[test]
    fn each_mistake_is_reported_with_location_and_help() {
        let dir = repo().join("tests/fixtures/playbooks/invalid");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        assert!(files.len() >= 12, "at least 12 invalid fixtures, found {}", files.len());
        for f in files {
            let rel = f.strip_prefix(repo()).unwrap().to_str().unwrap().to_string();
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            let out = if name.ends_with(".values.yaml") {
                run(&["validate", "--values", &rel])
            } else {
                run(&["validate", &rel])
            };
            assert_eq!(out.code, 1, "{name} must exit 1; stderr:\n{}", out.stderr);
            assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
            assert!(out.stderr.contains(&rel), "{name}: diagnostics name the file");
            assert!(out.stderr.contains("help: "), "{name}: diagnostics have a help line");
            assert!(!out.stderr.contains("builtin:"), "{name}: built-in playbooks stay valid:\n{}", out.stderr);
            insta::assert_snapshot!(format!("invalid__{name}"), out.stderr);
        }
    }

    #[test]
    fn builtin_playbooks_are_valid() {
        let out = run(&["validate", "playbooks/"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.starts_with("ok: "));
    }
}

/// The committed JSON Schemas are generated from the Rust types; they must not drift.
mod schemas {
    use super::*;

    #[test]
    fn committed_schemas_match_the_types() {
        for name in ["playbook", "values", "report", "plan"] {
            let out = run(&["schema", name]);
            assert_eq!(out.code, 0);
            let path = repo().join(format!("schemas/{name}.schema.json"));
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == out.stdout,
                "schemas/{name}.schema.json is stale: run `cargo run -- schema {name} > schemas/{name}.schema.json`"
            );
        }
    }
}


/// The recorded H200 and degraded variants of it: each fault gives exactly its finding, and
/// rules that need a failing rule's evidence are blocked.
mod recorded_hosts {
    use super::*;
    use gpufix::engine::{Options, evaluate};
    use gpufix::host::recorded::SnapshotHost;
    use gpufix::host::{Field, GpuSample, Host};
    use gpufix::playbook::{builtin_sources, validate};
    use gpufix::probes::Inputs;
    use gpufix::report::{Report, Verdict};
    use std::collections::BTreeSet;
    use std::sync::Arc;

    pub fn h200() -> SnapshotHost {
        SnapshotHost::load(&repo().join("tests/fixtures/hosts/h200-vm.snapshot.json")).unwrap()
    }

    pub fn judge(host: SnapshotHost) -> Report {
        let set = validate::load(&builtin_sources(), None).unwrap();
        evaluate(&set, Arc::new(host) as Arc<dyn Host>, Arc::new(Inputs::default()), &Options::default(), |_| {})
    }

    fn with(r: &Report, v: Verdict) -> BTreeSet<String> {
        r.results.iter().filter(|x| x.verdict == v).map(|x| x.id.clone()).collect()
    }

    fn ids(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn busy(util: u32, pcie: u32, reasons: &[&str]) -> Vec<Result<Vec<GpuSample>, String>> {
        let s = GpuSample {
            index: 0,
            utilization_gpu: Field::Ok(util),
            utilization_memory: Field::Ok(40),
            clock_sm: Field::Ok(1980),
            power_usage_mw: Field::Ok(650_000),
            clocks_event_reasons: Field::Ok(reasons.iter().map(|r| r.to_string()).collect()),
            pcie_gen: Field::Ok(pcie),
            pcie_width: Field::Ok(16),
            temperature_c: Field::Ok(70),
            memory_used: Field::Ok(80 << 30),
        };
        vec![Ok(vec![s])]
    }

    #[test]
    fn healthy_h200_has_no_failure_and_every_unknown_has_a_reason() {
        let r = judge(h200());
        assert!(with(&r, Verdict::Fail).is_empty(), "{:?}", with(&r, Verdict::Fail));
        for x in &r.results {
            if x.verdict == Verdict::Unknown || x.verdict == Verdict::Blocked {
                assert!(x.reason.as_deref().is_some_and(|s| !s.is_empty()), "{} has no reason", x.id);
            }
        }
        assert_eq!(r.results.len(), r.summary.values().sum::<usize>());
    }

    #[test]
    fn persistence_off() {
        let mut h = h200();
        h.edit_nvml(|n| n.gpus[0].persistence = Field::Ok(false));
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.persistence-off"]));
        let f = r.results.iter().find(|x| x.id == "driver.persistence-off").unwrap();
        assert_eq!(f.messages, vec!["GPU 0 (NVIDIA H200): persistence mode is off".to_string()]);
        let fix = f.fix.as_ref().unwrap();
        assert_eq!(fix.actions[0]["kind"], "nvidia.persistence");
        assert_eq!(fix.actions[0]["gpu"], 0);
    }

    #[test]
    fn power_cap_below_default_blocks_the_clock_rule() {
        let mut h = h200();
        h.edit_nvml(|n| {
            n.gpus[0].power_enforced_limit_mw = Field::Ok(450_000);
            n.gpus[0].power_limit_mw = Field::Ok(450_000);
        });
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.power-limit-below-default"]));
        assert!(with(&r, Verdict::Blocked).contains("driver.clocks-held-low"));
        let b = r.results.iter().find(|x| x.id == "driver.clocks-held-low").unwrap();
        assert_eq!(b.blocked_by, vec!["driver.power-limit-below-default".to_string()]);
    }

    #[test]
    fn uvm_module_missing_blocks_the_smoke_test() {
        let mut h = h200();
        h.set_file("/proc/modules", "nvidia 14299136 - - Live 0xffffffffc0400000 (O)\n");
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.uvm-module-missing"]));
        let f = r.results.iter().find(|x| x.id == "driver.uvm-module-missing").unwrap();
        assert_eq!(f.fix.as_ref().unwrap().actions[0]["kind"], "kmod.load");
        assert!(with(&r, Verdict::Blocked).contains("cuda.context-smoke-test-failed"));
    }

    #[test]
    fn hw_slowdown_under_load() {
        let mut h = h200();
        h.set_samples(busy(98, 5, &["HW_SLOWDOWN"]));
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.clocks-event-slowdown"]));
        // the same event on an idle GPU is not a finding
        let mut idle = h200();
        idle.set_samples(busy(0, 5, &["HW_SLOWDOWN"]));
        assert!(with(&judge(idle), Verdict::Fail).is_empty());
    }

    #[test]
    fn pcie_link_down_under_load_but_not_idle() {
        let mut h = h200();
        h.set_samples(busy(97, 3, &[]));
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.pcie-link-degraded"]));
        let mut idle = h200();
        idle.set_samples(busy(0, 1, &["GPU_IDLE"]));
        assert!(with(&judge(idle), Verdict::Fail).is_empty());
    }

    #[test]
    fn nvml_unavailable_blocks_every_gpu_rule() {
        let mut h = h200();
        h.set_nvml(Err("NVML cannot be loaded: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)".into()));
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.nvml-unavailable"]));
        let blocked = with(&r, Verdict::Blocked);
        for id in ["driver.persistence-off", "driver.power-limit-below-default", "cuda.driver-too-old", "memory.full-but-idle"] {
            assert!(blocked.contains(id), "{id} must be blocked: {blocked:?}");
        }
        // transitively: blocked because what it depends on is blocked
        assert!(blocked.contains("driver.clocks-held-low"));
    }
}

/// On a machine without an NVIDIA driver (CI): plan says so plainly, blocks the GPU rules, exits 2.
mod no_driver {
    use super::*;

    #[test]
    fn plan_without_nvml_exits_2_and_blocks_gpu_rules() {
        let out = run(&["plan", "--sample", "0", "--format", "json"]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let res = v["results"].as_array().unwrap();
        let get = |id: &str| res.iter().find(|r| r["id"] == id).unwrap().clone();
        let nvml = get("driver.nvml-unavailable");
        if nvml["verdict"] == "pass" {
            eprintln!("this machine has a working NVIDIA driver; skipping the no-driver check");
            return;
        }
        assert_eq!(nvml["verdict"], "fail");
        assert!(nvml["messages"][0].as_str().unwrap().contains("NVML cannot"), "{nvml}");
        for id in ["driver.persistence-off", "driver.ecc-uncorrectable", "cuda.driver-too-old"] {
            let r = get(id);
            assert_eq!(r["verdict"], "blocked", "{id}");
            assert!(r["blocked_by"].as_array().unwrap().contains(&serde_json::json!("driver.nvml-unavailable")));
        }
        let text = run(&["plan", "--sample", "0"]);
        assert_eq!(text.code, 2);
        assert!(text.stdout.contains("NVML cannot"));
        assert!(!text.stderr.contains("panicked"));
    }
}
