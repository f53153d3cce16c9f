//! End-to-end tests of the `gpufix` binary: exit codes, diagnostics, plans on recorded hosts.
//! Snapshots live in tests/snapshots/ (insta); run with INSTA_UPDATE=always to refresh, then
//! review the diff.

use assert_cmd::Command;
use std::path::PathBuf;

/// The synthetic trace writer (test support, not in the library).
#[path = "support/trace_synth.rs"]
#[allow(dead_code)]
mod trace_synth;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `gpufix` run from the repository root, isolated from /etc/gpufix and colors.
pub fn gpufix() -> Command {
    let mut c = Command::cargo_bin("gpufix").unwrap();
    c.current_dir(repo())
        .env("NO_COLOR", "1")
        .arg("--no-system");
    c
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str]) -> Out {
    // completions, man and schema read no rules: they take no --no-system
    let o = if matches!(args.first(), Some(&("completions" | "man" | "schema"))) {
        let mut c = Command::cargo_bin("gpufix").unwrap();
        c.current_dir(repo()).env("NO_COLOR", "1");
        c.args(args).output().unwrap()
    } else {
        gpufix().args(args).output().unwrap()
    };
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
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(
            files.len() >= 12,
            "at least 12 invalid fixtures, found {}",
            files.len()
        );
        for f in files {
            let rel = f
                .strip_prefix(repo())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            let out = if name.ends_with(".values.yaml") {
                run(&["validate", "--values", &rel])
            } else {
                run(&["validate", &rel])
            };
            assert_eq!(out.code, 1, "{name} must exit 1; stderr:\n{}", out.stderr);
            assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
            assert!(
                out.stderr.contains(&rel),
                "{name}: diagnostics name the file"
            );
            assert!(
                out.stderr.contains("help: "),
                "{name}: diagnostics have a help line"
            );
            assert!(
                !out.stderr.contains("builtin:"),
                "{name}: built-in playbooks stay valid:\n{}",
                out.stderr
            );
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
        for name in ["playbook", "values", "report", "plan", "apply", "record"] {
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

/// `apply --format json`, which the Ansible module parses, matches schemas/apply.schema.json in
/// each shape it prints (a dry run, an applied run, nothing to apply), from gpufix and from the
/// Ansible tests' fake binary (exit 4 included); and every key the module reads is one the
/// schema defines.
mod apply_schema {
    use super::*;

    fn validator() -> jsonschema::Validator {
        let schema: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(repo().join("schemas/apply.schema.json")).unwrap(),
        )
        .unwrap();
        jsonschema::draft202012::new(&schema).unwrap()
    }

    fn check(v: &jsonschema::Validator, what: &str, out: &str) -> serde_json::Value {
        let json: serde_json::Value =
            serde_json::from_str(out).unwrap_or_else(|e| panic!("{what}: {e}: {out}"));
        let errors: Vec<String> = v.iter_errors(&json).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{what}: {errors:?}\n{json:#}");
        json
    }

    #[test]
    fn gpufix_apply_json_matches_the_schema() {
        let v = validator();
        let f = super::apply_loop::Fixture::new();
        let dry = f.run(&["apply", "--dry-run", "--format", "json"]);
        assert_eq!(dry.code, 0, "{}", dry.stderr);
        let j = check(&v, "dry run", &dry.stdout);
        assert!(!j["would_apply"].as_array().unwrap().is_empty(), "{j}");
        let done = f.run(&["apply", "--yes", "--format", "json"]);
        assert!([0, 4].contains(&done.code), "{}", done.stderr);
        let j = check(&v, "applied", &done.stdout);
        assert_eq!(j["changed"], true, "{j}");
        let again = f.run(&["apply", "--yes", "--format", "json"]);
        assert_eq!(again.code, 0, "{}", again.stderr);
        let j = check(&v, "nothing to apply", &again.stdout);
        assert_eq!(
            (j["changed"].clone(), j["run"].clone()),
            (false.into(), serde_json::Value::Null)
        );
        // The schema is strict: an object with a key it does not define fails.
        let mut bad = j.clone();
        bad["chnaged"] = true.into();
        assert!(!v.is_valid(&bad), "a misspelled key passes the schema");
    }

    #[test]
    fn the_ansible_fake_prints_what_the_schema_defines() {
        let v = validator();
        let fake = repo().join("contrib/ansible/test/fake-gpufix");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("etc")).unwrap();
        std::fs::write(
            root.join("etc/environment"),
            "CUDA_LAUNCH_BLOCKING=1\nLANG=C\n",
        )
        .unwrap();
        let run = |mode: &str, env: &[(&str, &str)]| {
            let o = Command::new("python3")
                .arg(&fake)
                .args(["apply", mode, "--format", "json", "--root"])
                .arg(&root)
                .envs(env.iter().copied())
                .output()
                .unwrap();
            (
                o.status.code().unwrap(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
            )
        };
        let (code, out) = run("--dry-run", &[("FAKE_GPUFIX_BEFORE_AFTER", "1")]);
        assert_eq!(code, 0);
        check(&v, "fake dry run", &out);
        let (code, out) = run("--yes", &[("FAKE_GPUFIX_RECHECK_FAIL", "1")]);
        assert_eq!(code, 4);
        let j = check(&v, "fake exit 4", &out);
        assert!(!j["notes"].as_array().unwrap().is_empty(), "{j}");
        let (code, out) = run("--yes", &[]);
        assert_eq!(code, 0);
        check(&v, "fake nothing to apply", &out);
    }

    #[test]
    fn every_key_the_ansible_module_reads_is_in_the_schema() {
        let schema: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(repo().join("schemas/apply.schema.json")).unwrap(),
        )
        .unwrap();
        let module =
            std::fs::read_to_string(repo().join(
                "contrib/ansible/ansible_collections/gpufix/gpufix/plugins/modules/gpufix.py",
            ))
            .unwrap();
        let keys_of = |def: &serde_json::Value| -> Vec<String> {
            def["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let mut top: Vec<String> = Vec::new();
        for d in ["DryRunJson", "AppliedJson", "FailedJson"] {
            top.extend(keys_of(&schema["$defs"][d]));
        }
        let change = keys_of(&schema["$defs"]["PlannedChange"]);
        // `out.get("KEY")` reads apply's object; `change.get("KEY")` / `change["KEY"]` a change.
        let read = |var: &str| -> Vec<String> {
            let mut keys = Vec::new();
            for pat in [format!("{var}.get(\""), format!("{var}[\"")] {
                let mut rest = module.as_str();
                while let Some(i) = rest.find(&pat) {
                    rest = &rest[i + pat.len()..];
                    keys.push(rest[..rest.find('"').unwrap()].to_string());
                }
            }
            keys
        };
        let (outs, changes) = (read("out"), read("change"));
        assert!(
            outs.len() >= 5 && changes.len() >= 5,
            "{outs:?} {changes:?}"
        );
        for k in &outs {
            assert!(
                top.contains(k),
                "the module reads `{k}` of apply's output; the schema has {top:?}"
            );
        }
        for k in &changes {
            assert!(
                change.contains(k),
                "the module reads `{k}` of a change; the schema has {change:?}"
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
        evaluate(
            &set,
            Arc::new(host) as Arc<dyn Host>,
            Arc::new(Inputs::default()),
            &Options::default(),
            |_| {},
        )
    }

    fn with(r: &Report, v: Verdict) -> BTreeSet<String> {
        r.results
            .iter()
            .filter(|x| x.verdict == v)
            .map(|x| x.id.clone())
            .collect()
    }

    fn ids(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn busy(
        util: u32,
        pcie: u32,
        reasons: &[&str],
    ) -> Vec<Result<Vec<GpuSample>, gpufix::host::HostError>> {
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
            utilization_gpu_samples: None,
        };
        vec![Ok(vec![s])]
    }

    #[test]
    fn healthy_h200_has_no_failure_and_every_unknown_has_a_reason() {
        let r = judge(h200());
        assert!(
            with(&r, Verdict::Fail).is_empty(),
            "{:?}",
            with(&r, Verdict::Fail)
        );
        for x in &r.results {
            if x.verdict == Verdict::Unknown || x.verdict == Verdict::Blocked {
                assert!(
                    x.reason.as_deref().is_some_and(|s| !s.is_empty()),
                    "{} has no reason",
                    x.id
                );
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
        let f = r
            .results
            .iter()
            .find(|x| x.id == "driver.persistence-off")
            .unwrap();
        assert_eq!(
            f.messages,
            vec!["GPU 0 (NVIDIA H200): persistence mode is off".to_string()]
        );
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
        assert_eq!(
            with(&r, Verdict::Fail),
            ids(&["driver.power-limit-below-default"])
        );
        assert!(with(&r, Verdict::Blocked).contains("driver.clocks-held-low"));
        let b = r
            .results
            .iter()
            .find(|x| x.id == "driver.clocks-held-low")
            .unwrap();
        assert_eq!(
            b.blocked_by,
            vec!["driver.power-limit-below-default".to_string()]
        );
    }

    #[test]
    fn uvm_module_missing_blocks_the_smoke_test() {
        let mut h = h200();
        h.set_file(
            "/proc/modules",
            "nvidia 14299136 - - Live 0xffffffffc0400000 (O)\n",
        );
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.uvm-module-missing"]));
        let f = r
            .results
            .iter()
            .find(|x| x.id == "driver.uvm-module-missing")
            .unwrap();
        assert_eq!(f.fix.as_ref().unwrap().actions[0]["kind"], "kmod.load");
        assert!(with(&r, Verdict::Blocked).contains("cuda.context-smoke-test-failed"));
    }

    #[test]
    fn hw_slowdown_under_load() {
        let mut h = h200();
        h.set_samples(busy(98, 5, &["HW_SLOWDOWN"]));
        let r = judge(h);
        assert_eq!(
            with(&r, Verdict::Fail),
            ids(&["driver.clocks-event-slowdown"])
        );
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
        h.set_nvml(Err(
            "NVML cannot be loaded: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
                .into(),
        ));
        let r = judge(h);
        assert_eq!(with(&r, Verdict::Fail), ids(&["driver.nvml-unavailable"]));
        let blocked = with(&r, Verdict::Blocked);
        for id in [
            "driver.persistence-off",
            "driver.power-limit-below-default",
            "cuda.driver-too-old",
            "memory.full-but-idle",
        ] {
            assert!(blocked.contains(id), "{id} must be blocked: {blocked:?}");
        }
        // transitively: blocked because what it depends on is blocked
        assert!(blocked.contains("driver.clocks-held-low"));
    }
}

/// The native CUDA check (libcuda, no Python) as the smoke rule reads it: a recorded host
/// replays the check's answer, so the no-driver, broken-context and hung cases are judged
/// exactly as a live run would judge them.
mod native_cuda_check {
    use super::recorded_hosts::judge;
    use gpufix::host::CudaCheck;
    use gpufix::host::cuda_check::CudaDeviceCheck;
    use gpufix::host::recorded::SnapshotHost;
    use gpufix::report::{Report, Verdict};

    const RULE: &str = "cuda.context-smoke-test-failed";

    fn healthy() -> CudaCheck {
        CudaCheck {
            ok: true,
            driver_api_version: Some(13000),
            device_count: Some(1),
            devices: vec![CudaDeviceCheck {
                index: 0,
                name: "NVIDIA H200".into(),
                ok: true,
                error: None,
                error_name: None,
                context_ms: Some(90.0),
                ms: 120.0,
            }],
            error: None,
            error_name: None,
            init_ms: Some(40.0),
            timed_out: false,
            ms: 160.0,
            cached_age_s: None,
        }
    }

    fn failing(error: &str, name: Option<&str>) -> CudaCheck {
        CudaCheck {
            ok: false,
            error: Some(error.into()),
            error_name: name.map(str::to_string),
            devices: vec![],
            ..healthy()
        }
    }

    /// The recorded H200 with its device nodes listed (the recording has no /dev listing, which
    /// would leave `driver.device-nodes-missing`, a dependency of the smoke rule, unknown).
    fn h200() -> SnapshotHost {
        let mut h = super::recorded_hosts::h200();
        h.set_dir("/dev", &["nvidia0", "nvidiactl", "nvidia-uvm"]);
        h
    }

    fn rule(r: &Report) -> &gpufix::report::RuleResult {
        r.results.iter().find(|x| x.id == RULE).unwrap()
    }

    fn fails(r: &Report) -> Vec<String> {
        r.results
            .iter()
            .filter(|x| x.verdict == Verdict::Fail)
            .map(|x| x.id.clone())
            .collect()
    }

    #[test]
    fn a_passing_check_passes_and_names_no_python() {
        let mut h = h200();
        h.set_cuda_check(Ok(healthy()));
        let r = judge(h);
        assert_eq!(rule(&r).verdict, Verdict::Pass, "{:?}", rule(&r).reason);
        assert!(fails(&r).is_empty(), "{:?}", fails(&r));
    }

    #[test]
    fn broken_context_fails_the_smoke_rule_with_the_cuda_error() {
        let mut h = h200();
        h.set_cuda_check(Ok(failing(
            "GPU 0: cuDevicePrimaryCtxRetain: CUDA_ERROR_DEVICES_UNAVAILABLE (CUDA-capable device(s) is/are busy or unavailable)",
            Some("CUDA_ERROR_DEVICES_UNAVAILABLE"),
        )));
        let r = judge(h);
        assert_eq!(fails(&r), vec![RULE.to_string()]);
        assert_eq!(
            rule(&r).messages,
            vec!["CUDA smoke test failed: GPU 0: cuDevicePrimaryCtxRetain: CUDA_ERROR_DEVICES_UNAVAILABLE (CUDA-capable device(s) is/are busy or unavailable)".to_string()]
        );
    }

    #[test]
    fn a_hung_driver_is_a_failure_not_a_stuck_plan() {
        let mut h = h200();
        let mut c = failing(
            "the CUDA driver did not answer within 10.0s (a hung GPU or driver? check the kernel log for Xid errors)",
            None,
        );
        c.timed_out = true;
        h.set_cuda_check(Ok(c));
        let r = judge(h);
        assert_eq!(fails(&r), vec![RULE.to_string()]);
        assert!(rule(&r).messages[0].contains("did not answer within 10.0s"));
    }

    /// No driver at all: NVML fails first, and the smoke rule is blocked by it rather than
    /// repeating the same fault.
    #[test]
    fn no_driver_host_blocks_the_smoke_rule_behind_nvml() {
        let mut h = h200();
        h.set_nvml(Err(
            "NVML cannot be loaded: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
                .into(),
        ));
        h.set_cuda_check(Ok(failing(
            "cannot load libcuda.so.1 (is the NVIDIA driver installed?): libcuda.so.1: cannot open shared object file: No such file or directory",
            None,
        )));
        let r = judge(h);
        assert_eq!(fails(&r), vec!["driver.nvml-unavailable".to_string()]);
        assert_eq!(rule(&r).verdict, Verdict::Blocked);
        assert!(
            rule(&r)
                .blocked_by
                .contains(&"driver.nvml-unavailable".to_string())
        );
    }

    /// NVML answers but the CUDA driver library is missing (a container whose runtime did not
    /// mount libcuda): the smoke rule is the finding, with the loader's message.
    #[test]
    fn missing_libcuda_with_working_nvml_fails_the_smoke_rule() {
        let mut h = h200();
        h.set_cuda_check(Ok(failing(
            "cannot load libcuda.so.1 (is the NVIDIA driver installed?): libcuda.so.1: cannot open shared object file: No such file or directory",
            None,
        )));
        let r = judge(h);
        assert_eq!(fails(&r), vec![RULE.to_string()]);
        assert!(
            rule(&r).messages[0].starts_with("CUDA smoke test failed: cannot load libcuda.so.1")
        );
    }

    /// Pasted evidence and snapshots without the check cannot say: not applicable, with why.
    #[test]
    fn a_host_that_cannot_run_the_check_is_not_applicable() {
        let mut h = h200();
        h.set_cuda_check(Err(
            "the CUDA check was not recorded in this snapshot".into()
        ));
        let r = judge(h);
        assert_eq!(rule(&r).verdict, Verdict::NotApplicable);
    }
}

/// The default plan starts no Python process: `python3`/`python` on PATH are stand-ins that
/// leave a mark; only `--deep` may run one.
mod no_python {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn stand_ins(dir: &std::path::Path, mark: &std::path::Path) {
        for name in ["python3", "python", "python3.12"] {
            let p = dir.join(name);
            std::fs::write(
                &p,
                format!(
                    "#!/bin/sh\necho \"$0 $*\" >> '{}'\necho '{{\"import_error\": \"stand-in\"}}'\n",
                    mark.display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    fn plan(dir: &std::path::Path, extra: &[&str]) -> Out {
        let path = format!(
            "{}:{}",
            dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut args = vec!["plan", "--sample", "0", "--format", "json"];
        args.extend_from_slice(extra);
        let o = gpufix().env("PATH", path).args(&args).output().unwrap();
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    #[test]
    fn default_plan_starts_no_python_but_deep_does() {
        let t = tempfile::tempdir().unwrap();
        let mark = t.path().join("python-ran.txt");
        stand_ins(t.path(), &mark);
        let out = plan(t.path(), &[]);
        assert_ne!(out.code, 1, "{}", out.stderr);
        assert!(
            !mark.exists(),
            "the default plan started Python: {}",
            std::fs::read_to_string(&mark).unwrap_or_default()
        );
        // the same run with --deep does start it (so this test can fail); a machine without a
        // driver blocks the smoke rule, so ask the probe through --only's dependencies
        let out = plan(t.path(), &["--deep", "--timings"]);
        assert_ne!(out.code, 1, "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let probes = v["timings"]["probes"].as_array().unwrap();
        assert!(
            probes
                .iter()
                .any(|p| p["probe"].as_str().unwrap().starts_with("cuda.stack")),
            "{probes:?}"
        );
        assert!(
            std::fs::read_to_string(&mark)
                .unwrap_or_default()
                .contains("-c"),
            "--deep must run the framework check through python"
        );
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
        assert!(
            nvml["messages"][0]
                .as_str()
                .unwrap()
                .contains("NVML cannot"),
            "{nvml}"
        );
        for id in [
            "driver.persistence-off",
            "driver.ecc-uncorrectable",
            "cuda.driver-too-old",
        ] {
            let r = get(id);
            assert_eq!(r["verdict"], "blocked", "{id}");
            assert!(
                r["blocked_by"]
                    .as_array()
                    .unwrap()
                    .contains(&serde_json::json!("driver.nvml-unavailable"))
            );
        }
        let text = run(&["plan", "--sample", "0"]);
        assert_eq!(text.code, 2);
        assert!(text.stdout.contains("NVML cannot"));
        assert!(!text.stderr.contains("panicked"));
    }
}

/// The apply loop on a recorded host under `--root`: plan shows diffs, apply changes exactly
/// that, plan is clean, rollback restores every byte; refusals change nothing.
mod apply_loop {
    use super::*;
    use std::collections::BTreeMap;
    use std::os::unix::fs::MetadataExt;

    pub struct Fixture {
        pub dir: tempfile::TempDir,
    }

    impl Fixture {
        pub fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("root");
            std::fs::create_dir_all(root.join("etc")).unwrap();
            std::fs::create_dir_all(root.join("proc")).unwrap();
            std::fs::create_dir_all(dir.path().join("job")).unwrap();
            std::fs::write(root.join("etc/fstab"), "# /etc/fstab\nUUID=1111\t/\text4\terrors=remount-ro\t0 1\nUUID=2222  /data  ext4  defaults  0 2\n").unwrap();
            std::fs::write(
                root.join("proc/mounts"),
                "/dev/vda / ext4 rw,relatime 0 0\n/dev/nvme0n1 /data ext4 rw,relatime 0 0\n",
            )
            .unwrap();
            std::fs::write(
                dir.path().join("job/config.yaml"),
                "# training config\ndata:\n  num_workers: 0   # decode workers\n  pin_memory: false\n  batch_size: 128\nddp:\n  bucket_cap_mb: 25\n",
            )
            .unwrap();
            std::fs::write(
                dir.path().join("job/job.env"),
                "# job env\nCUDA_LAUNCH_BLOCKING=1\nOMP_NUM_THREADS=4\n",
            )
            .unwrap();
            let mut perms = std::fs::metadata(dir.path().join("job/job.env"))
                .unwrap()
                .permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o640);
            std::fs::set_permissions(dir.path().join("job/job.env"), perms).unwrap();
            Fixture { dir }
        }
        pub fn p(&self, rel: &str) -> String {
            self.dir.path().join(rel).display().to_string()
        }
        pub fn args(&self, extra: &[&str]) -> Vec<String> {
            let mut v: Vec<String> = vec![
                "--root".into(),
                self.p("root"),
                "--config".into(),
                self.p("job/config.yaml"),
                "--env-file".into(),
                self.p("job/job.env"),
                "--sample".into(),
                "0".into(),
                "--only".into(),
                "data".into(),
                "--only".into(),
                "cuda.launch-blocking".into(),
                "--only".into(),
                "comm.ddp-bucket-default".into(),
            ];
            v.extend(extra.iter().map(|s| s.to_string()));
            v
        }
        pub fn run(&self, extra: &[&str]) -> Out {
            let a = self.args(extra);
            run(&a.iter().map(String::as_str).collect::<Vec<_>>())
        }
        /// `rollback` and `history`: they take the run's --root, none of the probing options.
        pub fn journal(&self, extra: &[&str]) -> Out {
            let root = self.p("root");
            let o = Command::cargo_bin("gpufix")
                .unwrap()
                .env("NO_COLOR", "1")
                .args(extra)
                .args(["--root", &root])
                .output()
                .unwrap();
            Out {
                code: o.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            }
        }
        /// Every file of the fixture (outside the state dir) with its bytes and mode.
        pub fn state(&self) -> BTreeMap<String, (Vec<u8>, u32)> {
            let mut out = BTreeMap::new();
            for sub in ["root/etc", "root/proc", "job"] {
                let d = self.dir.path().join(sub);
                for e in std::fs::read_dir(&d).unwrap() {
                    let e = e.unwrap();
                    let m = e.metadata().unwrap();
                    if m.is_file() {
                        out.insert(
                            format!("{sub}/{}", e.file_name().to_string_lossy()),
                            (std::fs::read(e.path()).unwrap(), m.mode()),
                        );
                    }
                }
            }
            out
        }
    }

    #[test]
    fn plan_apply_plan_rollback_restores_every_byte() {
        let f = Fixture::new();
        let before = f.state();
        let plan = f.run(&["plan"]);
        assert_eq!(plan.code, 2, "{}", plan.stderr);
        for needle in [
            "-  num_workers: 0   # decode workers",
            "+  num_workers: ",
            "-CUDA_LAUNCH_BLOCKING=1",
            "+  bucket_cap_mb: 128",
            "defaults,noatime",
        ] {
            assert!(
                plan.stdout.contains(needle),
                "plan shows `{needle}`:\n{}",
                plan.stdout
            );
        }
        assert_eq!(f.state(), before, "plan changes nothing");
        let apply = f.run(&["apply", "--yes"]);
        assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
        // the undo hint carries the run's --root, or it would look in the real /var/lib/gpufix
        let hint = format!("(undo with `gpufix rollback --root {} ", f.p("root"));
        assert!(apply.stdout.contains(&hint), "{}", apply.stdout);
        let cfg = std::fs::read_to_string(f.p("job/config.yaml")).unwrap();
        assert!(
            cfg.contains("pin_memory: true")
                && cfg.contains("bucket_cap_mb: 128")
                && cfg.contains("# decode workers"),
            "{cfg}"
        );
        assert!(
            !std::fs::read_to_string(f.p("job/job.env"))
                .unwrap()
                .contains("CUDA_LAUNCH_BLOCKING")
        );
        assert_eq!(f.state()["job/job.env"].1 & 0o777, 0o640, "mode kept");
        // idempotent: nothing left to do, and a second apply changes nothing
        let again = f.run(&["plan"]);
        assert!(!again.stdout.contains("FAIL"), "{}", again.stdout);
        let after = f.state();
        let second = f.run(&["apply", "--yes"]);
        assert_eq!(second.code, 0);
        assert!(
            second.stdout.contains("nothing to apply"),
            "{}",
            second.stdout
        );
        assert_eq!(f.state(), after);
        let hist = f.journal(&["history"]);
        assert!(hist.stdout.contains("applied"), "{}", hist.stdout);
        let rb = f.journal(&["rollback"]);
        assert_eq!(rb.code, 0, "{}", rb.stderr);
        assert_eq!(f.state(), before, "rollback restores bytes and modes");
        assert!(f.journal(&["history"]).stdout.contains("rolled-back"));
    }

    #[test]
    fn apply_plan_file_refuses_when_a_target_changed() {
        let f = Fixture::new();
        let plan_path = f.p("plan.json");
        assert_eq!(f.run(&["plan", "-o", &plan_path]).code, 2);
        std::fs::write(f.p("job/config.yaml"), "data:\n  num_workers: 1\n").unwrap();
        let snapshot = f.state();
        let out = f.run(&["apply", &plan_path, "--yes"]);
        assert_eq!(out.code, 1);
        assert!(
            out.stderr.contains("stale plan") && out.stderr.contains("config.yaml"),
            "{}",
            out.stderr
        );
        assert_eq!(f.state(), snapshot, "nothing changed");
    }

    #[test]
    fn apply_plan_file_executes_exactly_that_plan() {
        let f = Fixture::new();
        let plan_path = f.p("plan.json");
        f.run(&["plan", "-o", &plan_path]);
        let plan: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
        let out = f.run(&["apply", &plan_path, "--yes"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        for c in plan["report"]["changes"].as_array().unwrap() {
            if let Some(after) = c["after_text"].as_str() {
                let target = c["target"].as_str().unwrap();
                let path = if target.starts_with(&f.p("")) {
                    target.to_string()
                } else {
                    f.p(&format!("root{target}"))
                };
                // a file changed twice ends as the last change's text
                let last = plan["report"]["changes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .rev()
                    .find(|x| x["target"] == c["target"])
                    .unwrap();
                assert_eq!(
                    std::fs::read_to_string(&path).unwrap(),
                    last["after_text"].as_str().unwrap(),
                    "{target}"
                );
                let _ = after;
            }
        }
    }

    #[test]
    fn refuses_symlinked_and_hardlinked_targets() {
        for kind in ["symlink", "hardlink"] {
            let f = Fixture::new();
            let real = f.p("elsewhere.env");
            std::fs::write(&real, "CUDA_LAUNCH_BLOCKING=1\n").unwrap();
            std::fs::remove_file(f.p("job/job.env")).unwrap();
            if kind == "symlink" {
                std::os::unix::fs::symlink(&real, f.p("job/job.env")).unwrap();
            } else {
                std::fs::hard_link(&real, f.p("job/job.env")).unwrap();
            }
            let snapshot = f.state();
            let out = f.run(&["apply", "--yes", "--only", "cuda.launch-blocking"]);
            assert_ne!(out.code, 0, "{kind}: {}", out.stdout);
            let msg = format!("{}{}", out.stdout, out.stderr);
            assert!(
                msg.contains(kind) || msg.contains("hard-linked") || msg.contains("symlink"),
                "{kind}: {msg}"
            );
            assert_eq!(
                std::fs::read_to_string(&real).unwrap(),
                "CUDA_LAUNCH_BLOCKING=1\n"
            );
            assert_eq!(f.state(), snapshot);
        }
    }

    #[test]
    fn refuses_targets_outside_the_allowed_roots() {
        let f = Fixture::new();
        let site = f.p("site");
        std::fs::create_dir_all(&site).unwrap();
        let outside = f.p("outside.conf");
        std::fs::write(&outside, "x=1\n").unwrap();
        std::fs::write(
            format!("{site}/escape.yaml"),
                "playbook: site\nlayer: data\ntitle: Site\nrules:\n  - id: site.escape\n    title: Writes outside the root\n    why: Test.\n    severity: info\n    fail_when: \"true\"\n    message: x\n    fix:\n      safety: safe\n      restart: nothing\n      actions:\n        - kind: file.line\n          path: \"/../../outside.conf\"\n          line: \"y=2\"\n",
        )
        .unwrap();
        let out = f.run(&[
            "--playbooks",
            &site,
            "--only",
            "site.escape",
            "apply",
            "--yes",
        ]);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x=1\n");
        let msg = format!("{}{}", out.stdout, out.stderr);
        assert!(
            msg.contains("cannot be planned") || msg.contains("refus"),
            "{msg}"
        );
    }

    #[test]
    #[cfg(feature = "fault-injection")]
    fn a_second_concurrent_apply_is_refused() {
        let f = Fixture::new();
        let a = f.args(&["apply", "--yes"]);
        let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpufix"));
        first
            .current_dir(repo())
            .env("NO_COLOR", "1")
            .env("GPUFIX_TEST_HOLD_LOCK_MS", "8000")
            .arg("--no-system")
            .args(&a);
        let child = first
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // start the second run once the first holds the lock (its lock file exists)
        let lock = f.dir.path().join("root/var/lib/gpufix/lock");
        let t0 = std::time::Instant::now();
        while !lock.exists() && t0.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let second = f.run(&["apply", "--yes"]);
        let first = child.wait_with_output().unwrap();
        assert_eq!(
            first.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&first.stderr)
        );
        assert_eq!(second.code, 1);
        assert!(
            second.stderr.contains("holds the lock"),
            "{}",
            second.stderr
        );
    }

    #[test]
    #[cfg(feature = "fault-injection")]
    fn injected_failures_roll_back_earlier_changes() {
        for (var, val) in [
            ("GPUFIX_TEST_FAIL_VERIFY", "3"),
            ("GPUFIX_TEST_FAULT", "fail-after:2"),
            ("GPUFIX_TEST_FAULT", "no-space"),
        ] {
            let f = Fixture::new();
            let before = f.state();
            let a = f.args(&["apply", "--yes"]);
            let out = gpufix().env(var, val).args(&a).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{var}={val}: {stderr}");
            assert!(
                stderr.contains("every change of this run was undone"),
                "{var}={val}: {stderr}"
            );
            assert_eq!(
                f.state(),
                before,
                "{var}={val}: earlier changes rolled back"
            );
            if val == "no-space" {
                assert!(stderr.contains("no space"), "{stderr}");
            }
        }
    }

    #[test]
    fn no_terminal_and_no_yes_refuses_and_dry_run_writes_nothing() {
        let f = Fixture::new();
        let before = f.state();
        let out = f.run(&["apply"]);
        assert_eq!(out.code, 1);
        assert!(out.stderr.contains("--yes"), "{}", out.stderr);
        let dry = f.run(&["apply", "--dry-run"]);
        assert_eq!(dry.code, 0);
        assert!(dry.stdout.contains("would be applied"), "{}", dry.stdout);
        assert_eq!(f.state(), before);
        assert!(
            !f.dir.path().join("root/var/lib/gpufix/runs").exists(),
            "dry run writes no journal"
        );
    }
}

/// Recordings from the real H200 (device runs of 2026-12-02): the live snapshot, two profiler
/// traces of the benchmark job and a one-process NCCL log.
mod h200_recordings {
    use super::*;

    fn plan_json(args: &[&str]) -> serde_json::Value {
        let mut a = vec!["plan", "--sample", "0", "--format", "json"];
        a.extend_from_slice(args);
        let out = run(&a);
        assert_ne!(out.code, 1, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    }

    fn verdict(v: &serde_json::Value, id: &str) -> (String, serde_json::Value) {
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap();
        (
            r["verdict"].as_str().unwrap().to_string(),
            r["evidence"].clone(),
        )
    }

    #[test]
    fn live_snapshot_is_healthy_with_nothing_unknown() {
        let v = plan_json(&["--snapshot", "tests/fixtures/hosts/h200-live.snapshot.json"]);
        assert_eq!(v["summary"]["fail"], 0, "{v}");
        assert_eq!(v["summary"]["unknown"], 0, "{v}");
        assert_eq!(v["summary"]["blocked"], 0, "{v}");
        assert!(v["summary"]["pass"].as_u64().unwrap() >= 20);
    }

    #[test]
    fn starved_trace_vs_well_fed_trace() {
        // a debug build reading a 2 MB gzipped trace on a loaded machine can pass the default
        // probe timeout (the verdict, not the time, is what this test is about)
        let starved = plan_json(&[
            "--probe-timeout",
            "120s",
            "--trace",
            "tests/fixtures/evidence/trace/h200-workers0.trace.json.gz",
            "--only",
            "launch",
            "--only",
            "data",
        ]);
        let (v, ev) = verdict(&starved, "launch.gpu-idle-gaps");
        assert_eq!(v, "fail");
        assert!(
            ev["t.gpu_kernel_busy_fraction"].as_f64().unwrap() < 0.3,
            "{ev}"
        );
        let (v, ev) = verdict(&starved, "data.dataloader-wait");
        assert_eq!(v, "fail");
        assert!(ev["t.dataloader_share"].as_f64().unwrap() > 0.5, "{ev}");
        let fed = plan_json(&[
            "--probe-timeout",
            "120s",
            "--trace",
            "tests/fixtures/evidence/trace/h200-healthy.trace.json.gz",
            "--only",
            "launch",
            "--only",
            "data",
        ]);
        assert_eq!(verdict(&fed, "data.dataloader-wait").0, "pass");
        assert_eq!(verdict(&fed, "launch.host-sync-in-step").0, "pass");
        assert_eq!(verdict(&fed, "launch.tiny-kernels").0, "pass");
    }

    #[test]
    fn one_process_nccl_log_uses_no_network() {
        let v = plan_json(&[
            "--nccl-log",
            "tests/fixtures/evidence/nccl/h200-1proc.log",
            "--only",
            "comm",
        ]);
        let (verdict_socket, _) = verdict(&v, "comm.nccl-socket-fallback");
        assert_eq!(
            verdict_socket, "not-applicable",
            "a single-node log that never used the network"
        );
        // one rank has no peer: whether P2P is off is not judged (issue 24)
        assert_eq!(verdict(&v, "comm.p2p-disabled-in-log").0, "not-applicable");
    }

    /// On a machine without an NVIDIA driver (this CI), a job's log or a paste given alone is
    /// judged alone: no NVML or driver finding about this machine, no wall of blocked rules.
    #[test]
    fn inputs_alone_on_a_gpu_less_machine_judge_only_the_inputs() {
        if !gpufix::host::evidence::no_local_driver() {
            eprintln!("skipped: this machine has an NVIDIA driver");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let table = d.path().join("smi.txt");
        std::fs::write(
            &table,
            "|   0  Tesla V100-SXM2...  Off  | 00000000:40:00.0 Off |                    0 |\n\
| N/A   34C    P0    55W / 300W |   6671MiB / 16160MiB |      0%      Default |\n",
        )
        .unwrap();
        let table = table.to_str().unwrap().to_string();
        for args in [
            vec!["--nccl-log", "tests/fixtures/evidence/nccl/h200-1proc.log"],
            vec![
                "--kernel-log",
                "tests/fixtures/evidence/kernel_log/aer_corrected.txt",
            ],
            vec![
                "--trace",
                "tests/fixtures/evidence/trace/h200-healthy.trace.json.gz",
            ],
            vec![
                "--evidence",
                "tests/fixtures/evidence/torch_memory/oom_old_wording.txt",
            ],
            vec!["--evidence", table.as_str()],
        ] {
            let mut a = vec!["--no-system"];
            a.extend(args.iter().copied());
            let v = plan_json(&a);
            for r in v["results"].as_array().unwrap() {
                let id = r["id"].as_str().unwrap();
                let verdict = r["verdict"].as_str().unwrap();
                assert!(
                    !(id.starts_with("driver.") && verdict == "fail"),
                    "{args:?}: {id} failed on this machine"
                );
                assert_ne!(verdict, "blocked", "{args:?}: {id}");
            }
            // a pasted table is an NVML reading of that host; a log is none
            let nvml = verdict(&v, "driver.nvml-unavailable").0;
            assert!(
                nvml == "not-applicable" || nvml == "pass",
                "{args:?}: {nvml}"
            );
        }
        let v = plan_json(&["--no-system", "--evidence", table.as_str()]);
        assert_eq!(verdict(&v, "launch.gpu-underutilized").0, "fail");
        let text = run(&[
            "--no-system",
            "plan",
            "--sample",
            "0",
            "--evidence",
            table.as_str(),
        ]);
        assert!(!text.stdout.contains("NVML cannot"), "{}", text.stdout);
    }

    #[test]
    fn pasted_nvidia_smi_is_judged_without_the_local_machine() {
        let v = plan_json(&[
            "--evidence",
            "tests/fixtures/evidence/nvidia_smi/h200-q.txt",
        ]);
        assert!(v["host"].as_str().unwrap().starts_with("evidence"));
        assert_eq!(verdict(&v, "driver.nvml-unavailable").0, "pass");
        assert_eq!(verdict(&v, "driver.persistence-off").0, "pass");
        // nothing the text lacks is read from this machine
        assert_eq!(verdict(&v, "driver.uvm-module-missing").0, "not-applicable");
        assert_eq!(verdict(&v, "cuda.launch-blocking").0, "not-applicable");
        assert_eq!(v["summary"]["fail"], 0, "{v}");
    }

    /// Per-GPU rules judge each GPU against the whole reading (work grows with the square of
    /// the count): a paste of more GPUs than one host has is refused, with what to give instead,
    /// rather than taking minutes and gigabytes (730 pasted GPUs took 8 GB and 7 minutes).
    #[test]
    fn pasted_nvidia_smi_of_more_gpus_than_a_host_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let one =
            std::fs::read_to_string(repo().join("tests/fixtures/evidence/nvidia_smi/h200-q.txt"))
                .unwrap();
        let many = d.path().join("many.txt");
        std::fs::write(&many, one.repeat(65)).unwrap();
        let o = run(&[
            "--no-system",
            "plan",
            "--sample",
            "0",
            "--evidence",
            many.to_str().unwrap(),
        ]);
        assert_eq!(o.code, 1, "{}", o.stderr);
        assert!(
            o.stderr
                .contains("nvidia-smi output of 65 GPUs; one host has at most 64"),
            "{}",
            o.stderr
        );
        assert!(
            o.stderr.contains("help: give the output of one host"),
            "{}",
            o.stderr
        );
        // a paste far larger than one host's is refused before its lines are parsed into a tree
        std::fs::write(&many, one.repeat(700)).unwrap();
        let o = run(&[
            "--no-system",
            "plan",
            "--sample",
            "0",
            "--evidence",
            many.to_str().unwrap(),
        ]);
        assert_eq!(o.code, 1, "{}", o.stderr);
        assert!(
            o.stderr
                .contains("9.9 MB of nvidia-smi -q output; one host's is under 8 MiB"),
            "{}",
            o.stderr
        );
    }
}

/// `gpufix list --evidence`: the evidence kinds from their one registry, with what reads them.
mod list_evidence {
    use super::*;

    #[test]
    fn lists_each_kind_with_an_example_its_fields_and_the_rules_that_read_it() {
        let out = run(&["list", "--evidence"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        for name in [
            "nvidia-smi-table",
            "nccl-log",
            "kernel-log",
            "torch-memory",
            "df",
        ] {
            assert!(
                out.stdout.contains(&format!("{name} — ")),
                "{name}: {}",
                out.stdout
            );
        }
        assert!(out.stdout.contains("  example: nvidia-smi topo -m\n"));
        let json = run(&["list", "--evidence", "--format", "json"]);
        assert_eq!(json.code, 0, "{}", json.stderr);
        let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        let kinds = v.as_array().unwrap();
        let nccl = kinds.iter().find(|k| k["name"] == "nccl-log").unwrap();
        assert_eq!(nccl["probes"], serde_json::json!(["nccl.log"]));
        let rules: Vec<&str> = nccl["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(rules.contains(&"comm.p2p-disabled-in-log"), "{rules:?}");
        assert!(
            nccl["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["field"] == "env_overrides")
        );
        let table = kinds
            .iter()
            .find(|k| k["name"] == "nvidia-smi-table")
            .unwrap();
        assert_eq!(table["describes_host"], true);
        assert!(
            table["rules"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "launch.gpu-underutilized"),
            "{table}"
        );
    }
}

/// A paste holding several kinds is read by each (issue 24): the table judges the host and
/// the OOM message the memory rules, and the report says which lines were read as what.
mod mixed_paste {
    use super::*;

    #[test]
    fn a_table_then_an_oom_message_are_both_read_and_the_report_names_the_parts() {
        let corpus = repo().join("tests/fixtures/corpus");
        let table =
            std::fs::read_to_string(corpus.join("h2_smi_table_k80_python_10g_0pct.txt")).unwrap();
        let oom = std::fs::read_to_string(corpus.join("h2_oom_6g_2_30g_unallocated.txt")).unwrap();
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("paste.txt");
        std::fs::write(&f, format!("{table}\nand then:\n\n{oom}")).unwrap();
        let o = run(&[
            "plan",
            "--evidence",
            f.to_str().unwrap(),
            "--sample",
            "0",
            "--format",
            "json",
        ]);
        assert!(o.code == 0 || o.code == 2, "{}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        let note = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .find(|n| n.starts_with("--evidence"))
            .unwrap_or_else(|| panic!("{}", v["notes"]));
        assert!(
            note.contains("nvidia-smi-table") && note.contains("torch-memory"),
            "{note}"
        );
        assert!(note.contains("not read"), "{note}");
        // the table describes the host (its GPU was read) and the OOM reached the memory probe
        let verdict = |id: &str| {
            v["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"] == id)
                .map(|r| r["verdict"].as_str().unwrap().to_string())
                .unwrap()
        };
        assert_eq!(
            verdict("memory.allocator-fragmentation"),
            "fail",
            "{}",
            v["results"]
        );
        assert!(
            v["judged"].as_str().unwrap().contains("nvidia-smi-table"),
            "{}",
            v["judged"]
        );
    }

    #[test]
    fn text_no_kind_reads_says_the_nearest_kind_and_line() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("notes.txt");
        std::fs::write(&f, "hi all\ngpu_utilization=3 memory_used=81000\n").unwrap();
        let o = run(&["plan", "--evidence", f.to_str().unwrap(), "--sample", "0"]);
        assert_eq!(o.code, 1, "{}", o.stderr);
        assert!(
            o.stderr.contains("cannot tell what this is"),
            "{}",
            o.stderr
        );
        assert!(o.stderr.contains("the nearest kind is"), "{}", o.stderr);
        assert!(o.stderr.contains("(line 2:"), "{}", o.stderr);
    }

    #[test]
    fn a_post_in_prose_is_judged_as_showing_nothing() {
        // a whole issue body with no output in it (github.com/facebookresearch/svoice/issues/60):
        // every rule not-applicable, exit 0, and a note saying what to give instead
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("post.md");
        std::fs::write(
            &f,
            "Hello,\nIn order to support sm_86 we need to install pytorch1.90, but it breaks svoice. Is there a plan to upgrade?\n\nThanks,\nArik",
        )
        .unwrap();
        let o = run(&[
            "plan",
            "--evidence",
            f.to_str().unwrap(),
            "--sample",
            "0",
            "--format",
            "json",
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        // the report's notes say it, in the JSON as in the text
        assert!(o.stdout.contains("reads as prose"), "{}", o.stdout);
        assert!(
            !o.stderr.contains("cannot tell what this is"),
            "{}",
            o.stderr
        );
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        assert!(
            v["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["verdict"] == "not-applicable"),
            "{}",
            v["results"]
        );
    }
}

/// The printable checklist (docs/rules.md) is `gpufix list --format markdown`, kept current.
mod readme {
    use super::*;

    #[test]
    fn checklist_is_current() {
        let out = run(&["list", "--format", "markdown"]);
        assert_eq!(out.code, 0);
        let readme = std::fs::read_to_string(repo().join("docs/rules.md")).unwrap();
        let start = readme
            .find("<!-- checklist:begin -->\n")
            .expect("checklist markers")
            + "<!-- checklist:begin -->\n".len();
        let end = readme.find("<!-- checklist:end -->").unwrap();
        assert!(
            readme[start..end] == out.stdout,
            "docs/rules.md's checklist is stale: paste `cargo run -- list --format markdown` between the checklist markers"
        );
    }

    #[test]
    fn explain_works_for_every_rule() {
        let list = run(&["list", "--format", "json"]);
        let rules: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
        for r in rules.as_array().unwrap() {
            let id = r["id"].as_str().unwrap();
            let out = run(&["explain", id]);
            assert_eq!(out.code, 0, "{id}: {}", out.stderr);
            assert!(
                out.stdout.starts_with(id) && out.stdout.contains("Why it matters"),
                "{id}"
            );
        }
    }
}

/// Crash consistency: SIGKILL the apply process at every crash point (each journal append and
/// each step of each file write) of a multi-change plan; after each kill `gpufix rollback`
/// restores the exact prior state. Needs the `fault-injection` feature (`.ci/run` turns it on).
#[cfg(feature = "fault-injection")]
mod crash {
    use super::apply_loop::Fixture;
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn kill_at_every_journal_and_write_step_then_rollback_restores() {
        let mut tried = 0;
        let mut restored = 0;
        for n in 1..200 {
            let f = Fixture::new();
            let before = f.state();
            let a = f.args(&["apply", "--yes"]);
            let out = gpufix()
                .env("GPUFIX_CRASH_AT", n.to_string())
                .args(&a)
                .output()
                .unwrap();
            if out.status.code() == Some(0) {
                // past the last crash point: the run completed
                assert!(
                    n > 10,
                    "a multi-change plan has many crash points, only {} were found",
                    n - 1
                );
                break;
            }
            assert_eq!(
                out.status.signal(),
                Some(9),
                "crash point {n}: killed by SIGKILL, got {:?}",
                out.status
            );
            tried += 1;
            let hist = f.journal(&["history"]);
            let rb = f.journal(&["rollback"]);
            let nothing_journaled = rb.stderr.contains("nothing to roll back");
            assert!(
                rb.code == 0 || nothing_journaled,
                "crash point {n}: rollback failed: {}\n{}",
                rb.stderr,
                hist.stdout
            );
            assert_eq!(
                f.state(),
                before,
                "crash point {n}: state restored exactly\n{}",
                hist.stdout
            );
            restored += 1;
        }
        eprintln!("crash points tried: {tried}, restored: {restored}");
        assert_eq!(tried, restored);
        assert!(tried >= 10);
    }
}

/// Completions and the man page come from the clap definitions.
mod generated {
    use super::*;

    #[test]
    fn completions_and_man_page() {
        for shell in ["bash", "zsh", "fish"] {
            let out = run(&["completions", shell]);
            assert_eq!(out.code, 0);
            assert!(
                out.stdout.contains("gpufix") && out.stdout.contains("rollback"),
                "{shell}"
            );
        }
        let man = run(&["man"]);
        assert_eq!(man.code, 0);
        assert!(
            man.stdout.starts_with(".ie") || man.stdout.contains(".TH gpufix"),
            "{}",
            &man.stdout[..80.min(man.stdout.len())]
        );
        assert!(man.stdout.contains("plan") && man.stdout.contains("apply"));
    }
}

/// One failing case per rule: the recorded H200 (which passes or is not applicable for every
/// rule, see `recorded_hosts::healthy_h200_has_no_failure_and_every_unknown_has_a_reason`) with
/// one fault injected. Each case checks the verdict and message; the message, fix and planned
/// diff of every case are snapshot in `tests/snapshots/cli__rule_cases__*.snap`.
mod rule_cases {
    use super::recorded_hosts::h200;
    use super::*;
    use gpufix::engine::{Options, evaluate};
    use gpufix::fixes::FixCtx;
    use gpufix::host::recorded::SnapshotHost;
    use gpufix::host::{CommandOutput, Field, GpuSample, Host};
    use gpufix::playbook::{SourceFile, Tier, builtin_sources, validate};
    use gpufix::probes::Inputs;
    use gpufix::report::Verdict;
    use gpufix::safe_write::Roots;
    use std::sync::Arc;

    struct Case {
        rule: &'static str,
        host: SnapshotHost,
        inputs: Inputs,
        values: Option<String>,
        sample: bool,
        expect: &'static str,
    }

    fn case(rule: &'static str, expect: &'static str) -> Case {
        Case {
            rule,
            host: h200(),
            inputs: Inputs::default(),
            values: None,
            sample: false,
            expect,
        }
    }

    /// A file of its own for each case (cases are built before any runs).
    fn file(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let sub = dir.join(format!(
            "case{}",
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&sub).unwrap();
        let p = sub.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn ok(stdout: &str) -> CommandOutput {
        CommandOutput {
            status: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
            timed_out: false,
        }
    }

    fn busy_sample(
        util: u32,
        mem_used: u64,
    ) -> Vec<Result<Vec<GpuSample>, gpufix::host::HostError>> {
        vec![Ok(vec![GpuSample {
            index: 0,
            utilization_gpu: Field::Ok(util),
            utilization_memory: Field::Ok(1),
            clock_sm: Field::Ok(1980),
            power_usage_mw: Field::Ok(100_000),
            clocks_event_reasons: Field::Ok(vec![]),
            pcie_gen: Field::Ok(5),
            pcie_width: Field::Ok(16),
            temperature_c: Field::Ok(40),
            memory_used: Field::Ok(mem_used),
            utilization_gpu_samples: None,
        }])]
    }

    fn run_case(c: Case, dir: &std::path::Path) -> String {
        let mut sources = builtin_sources();
        let values = c.values.map(|text| SourceFile {
            name: "values.yaml".into(),
            text,
            tier: Tier::Cli,
        });
        sources.truncate(sources.len());
        let set = validate::load(&sources, values.as_ref()).unwrap();
        let host: Arc<dyn Host> = Arc::new(c.host);
        let opts = Options {
            only: vec![c.rule.to_string()],
            sample: if c.sample {
                std::time::Duration::from_secs(1)
            } else {
                std::time::Duration::ZERO
            },
            ..Options::default()
        };
        let inputs = Arc::new(c.inputs);
        let mut report = evaluate(&set, host.clone(), inputs.clone(), &opts, |_| {});
        let r = report
            .results
            .iter()
            .find(|r| r.id == c.rule)
            .unwrap()
            .clone();
        assert_eq!(
            r.verdict,
            Verdict::Fail,
            "{}: {:?} {:?}",
            c.rule,
            r.reason,
            r.messages
        );
        let msg = r.messages.join(" | ");
        assert!(
            msg.contains(c.expect),
            "{}: message `{msg}` lacks `{}`",
            c.rule,
            c.expect
        );
        // plan the fix's changes (read-only)
        let local: Vec<std::path::PathBuf> = [&inputs.config, &inputs.env_file]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let roots = Roots::new([dir.to_path_buf()]);
        let cx = FixCtx {
            host: host.as_ref(),
            inputs: &inputs,
            roots: &roots,
            local_files: local,
            overlay: Default::default(),
        };
        report.results.retain(|x| x.id == c.rule);
        let unplannable = gpufix::plan::plan_changes(&mut report, &cx);
        let mut out = format!("rule: {}\nmessage: {msg}\n", c.rule);
        for p in unplannable {
            out.push_str(&format!("cannot plan: {}\n", p.error));
        }
        if let Some(fix) = &r.fix {
            out.push_str(&format!(
                "fix: {} (restart: {})\n",
                fix.safety.as_str(),
                fix.restart
            ));
            for a in &fix.actions {
                out.push_str(&format!(
                    "  action: {}\n",
                    gpufix::render::text::describe_action(a)
                ));
            }
        }
        for ch in &report.changes {
            out.push_str(&format!("change: {}\n", ch.summary));
            if let Some(d) = &ch.diff {
                out.push_str(d);
            }
        }
        let re = regex::Regex::new(r"\[DIR\]/case\d+").unwrap();
        re.replace_all(&out.replace(&dir.display().to_string(), "[DIR]"), "[DIR]")
            .into_owned()
    }

    #[test]
    fn every_rule_fails_on_its_fault() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().to_path_buf();
        let env = |text: &str| Inputs {
            env_file: Some(file(&d, "job.env", text)),
            ..Default::default()
        };
        let cfg = |name: &str, text: &str| Inputs {
            config: Some(file(&d, name, text)),
            ..Default::default()
        };
        let mut cases = Vec::new();

        let mut c = case("driver.device-nodes-missing", "/dev/nvidiactl");
        c.host.set_dir("/dev", &["nvidia0", "null"]);
        cases.push(c);
        let mut c = case("driver.clocks-held-low", "application clock 1500 MHz");
        c.host
            .edit_nvml(|n| n.gpus[0].app_clock_graphics = Field::Ok(1500));
        cases.push(c);
        let mut c = case("driver.temperature-unreadable", "temperature 0");
        c.host.edit_nvml(|n| n.gpus[0].temperature_c = Field::Ok(0));
        cases.push(c);
        let mut c = case("driver.ecc-uncorrectable", "row remap pending True");
        c.host
            .edit_nvml(|n| n.gpus[0].remapped_rows_pending = Field::Ok(true));
        cases.push(c);
        let mut c = case("driver.selinux-blocks-modules", "--> off");
        c.host.set_command(
            &["getsebool", "domain_kernel_load_modules"],
            ok("domain_kernel_load_modules --> off\n"),
        );
        cases.push(c);
        let mut c = case("driver.xid-errors", "Xid 79");
        c.inputs.kernel_log = Some(file(
            &d,
            "dmesg.txt",
            "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n",
        ));
        cases.push(c);
        let mut c = case("cuda.driver-too-old", "supports CUDA 12.0");
        c.host
            .edit_nvml(|n| n.cuda_driver_version = Field::Ok(12000));
        cases.push(c);
        let mut c = case("cuda.launch-blocking", "CUDA_LAUNCH_BLOCKING=1");
        c.inputs = env("CUDA_LAUNCH_BLOCKING=1\n");
        cases.push(c);
        let mut c = case("cuda.visible-devices-empty", "no GPU is visible");
        c.inputs = env("CUDA_VISIBLE_DEVICES=\n");
        cases.push(c);
        let mut c = case("cuda.visible-devices-unknown", "names 3");
        c.inputs = env("CUDA_VISIBLE_DEVICES=0,3\n");
        cases.push(c);
        let mut c = case("cuda.compute-mode-restricted", "Prohibited");
        c.host
            .edit_nvml(|n| n.gpus[0].compute_mode = Field::Ok("Prohibited".into()));
        cases.push(c);
        let mut c = case(
            "data.workers-too-few",
            "num_workers is 0 (`data.num_workers` in",
        );
        c.inputs = cfg("train.yaml", "data:\n  num_workers: 0\n");
        cases.push(c);
        let mut c = case("data.pin-memory-off", "pin_memory is false");
        c.inputs = cfg(
            "train.yaml",
            "data:\n  num_workers: 8\n  pin_memory: false\n",
        );
        cases.push(c);
        let mut c = case("data.persistent-workers-off", "with 4 workers");
        c.inputs = cfg(
            "train.json",
            "{\"dataloader\": {\"num_workers\": 4, \"persistent_workers\": false}}\n",
        );
        cases.push(c);
        let mut c = case("data.dataloader-wait", "DataLoader __next__");
        c.inputs.trace =
            Some(repo().join("tests/fixtures/evidence/trace/h200-workers0.trace.json.gz"));
        cases.push(c);
        let mut c = case("data.mount-atime", "without noatime");
        c.host.set_file(
            "/proc/mounts",
            "/dev/vda / ext4 rw,relatime 0 0\n/dev/nvme0n1 /data xfs rw,relatime 0 0\n",
        );
        c.host
            .set_file("/etc/fstab", "UUID=2222 /data xfs defaults 0 2\n");
        cases.push(c);
        let mut c = case("data.pressure-high", "io some 71");
        c.host.set_file("/proc/pressure/io", "some avg10=71.00 avg60=60.00 avg300=20.00 total=1\nfull avg10=50.00 avg60=0.00 avg300=0.00 total=1\n");
        cases.push(c);
        let mut c = case("launch.gpu-idle-gaps", "waiting on the host");
        c.inputs.trace =
            Some(repo().join("tests/fixtures/evidence/trace/h200-workers0.trace.json.gz"));
        cases.push(c);
        let mut c = case("launch.cpu-governor-powersave", "powersave");
        c.host.set_file(
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "powersave\n",
        );
        cases.push(c);
        let mut c = case("memory.orphaned-gpu-memory", "PID 424242 (gone");
        c.host.edit_nvml(|n| {
            n.gpus[0].processes = Field::Ok(vec![gpufix::vocab::nvml::ProcessMem {
                pid: 424242,
                used_memory: Some(1 << 30),
                kind: "compute".into(),
                name: None,
            }])
        });
        c.host.set_dir("/proc", &["1", "2"]);
        cases.push(c);
        let mut c = case(
            "memory.allocator-fragmentation",
            "non-releasable split blocks",
        );
        c.inputs.evidence = vec![
            repo().join("tests/fixtures/evidence/torch_memory/h200-fragmentation-summary.txt"),
        ];
        c.inputs.env_file = Some(file(&d, "job.env", "# launcher env\nOMP_NUM_THREADS=8\n"));
        cases.push(c);
        let mut c = case("memory.full-but-idle", "at 3.0% utilization");
        c.host.edit_nvml(|n| {
            n.gpus[0].memory_used =
                Field::Ok(n.gpus[0].memory_total.ok().copied().unwrap_or(0) - (1 << 20))
        });
        c.host.set_samples(busy_sample(3, 140 << 30));
        cases.push(c);
        let mut c = case("comm.nccl-socket-fallback", "over sockets");
        c.inputs.nccl_log =
            Some(repo().join("tests/fixtures/evidence/nccl/socket_fallback_multinode.log"));
        c.host.set_dir("/sys/class/infiniband", &["mlx5_0"]);
        cases.push(c);
        let mut c = case("comm.p2p-disabled", "NCCL_P2P_DISABLE=1");
        c.inputs = env("NCCL_P2P_DISABLE=1\n");
        c.host.edit_nvml(|n| {
            let mut g = n.gpus[0].clone();
            g.index = 1;
            n.gpus.push(g);
        });
        cases.push(c);
        let mut c = case("comm.p2p-disabled-in-log", "set to 1");
        c.inputs.nccl_log = Some(file(
            &d,
            "nccl.log",
            "host:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.\nhost:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n",
        ));
        cases.push(c);
        let mut c = case("comm.ib-disabled", "mlx5_0");
        c.inputs = env("NCCL_IB_DISABLE=1\n");
        c.host.set_dir("/sys/class/infiniband", &["mlx5_0"]);
        cases.push(c);
        let mut c = case("comm.socket-ifname-missing", "`ib9`");
        c.inputs = env("NCCL_SOCKET_IFNAME=ib9,^docker\n");
        c.host.set_dir("/sys/class/net", &["eth0", "lo"]);
        cases.push(c);
        let mut c = case("comm.ddp-bucket-default", "is 25 MB");
        c.inputs = cfg("train.toml", "[ddp]\nbucket_cap_mb = 25 # default\n");
        cases.push(c);
        let mut c = case("comm.ddp-bucket-default-source", "bucket_cap_mb=25");
        c.inputs = cfg(
            "train.py",
            "model = DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=25)\n",
        );
        cases.push(c);
        let mut c = case("comm.topology-no-nvlink", "no active NVLink");
        c.values = Some(
            "rules:\n  comm.topology-no-nvlink:\n    params: { expect_nvlink: true }\n".into(),
        );
        c.host.edit_nvml(|n| {
            let mut g = n.gpus[0].clone();
            g.index = 1;
            n.gpus.push(g);
        });
        cases.push(c);

        let mut c = case("launch.host-sync-in-step", "aten::item");
        c.inputs.trace =
            Some(repo().join("tests/fixtures/evidence/trace/h200-item-sync.trace.json.gz"));
        cases.push(c);
        let synth = |name: &str, spec: trace_synth::Spec| {
            let p = d.join(name);
            let mut f = std::fs::File::create(&p).unwrap();
            trace_synth::write(&mut f, &spec).unwrap();
            p
        };
        let mut c = case("launch.pageable-copies", "pageable host-to-device copies");
        c.inputs.trace = Some(synth("starved.json", trace_synth::starved()));
        c.inputs.config = Some(file(
            &d,
            "train.yaml",
            "data:\n  pin_memory: false  # pageable\n",
        ));
        cases.push(c);
        let mut tiny = trace_synth::well_fed();
        tiny.kernels_per_step = 2000;
        tiny.kernel_us = 3.0;
        tiny.gap_us = 12.0;
        tiny.dataloader_us = 0.0;
        tiny.item_calls_per_step = 0;
        tiny.pageable_copies_per_step = 0;
        let mut c = case("launch.tiny-kernels", "kernels per step");
        c.inputs.trace = Some(synth("tiny.json", tiny));
        cases.push(c);
        let mut c = case("data.disk-slow", "await");
        c.sample = true;
        c.host.set_file_sequence(
            "/proc/diskstats",
            &[
                " 254       0 vda 100 0 800 1000 0 0 0 0 0 500 1000 0 0 0 0 0 0\n",
                " 254       0 vda 200 0 1600 11000 0 0 0 0 0 1500 11000 0 0 0 0 0 0\n",
            ],
        );
        cases.push(c);
        let mut c = case("cuda.context-smoke-test-failed", "no kernel image");
        c.host
            .set_dir("/dev", &["nvidia0", "nvidiactl", "nvidia-uvm"]);
        c.host.set_cuda_check(Ok(gpufix::host::CudaCheck {
            ok: false,
            driver_api_version: Some(13000),
            device_count: Some(1),
            devices: vec![],
            error: Some("GPU 0: cuModuleLoadDataEx (PTX 8.0, sm_75): CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for execution on the device)".into()),
            error_name: Some("CUDA_ERROR_NO_BINARY_FOR_GPU".into()),
            init_ms: Some(40.0),
            timed_out: false,
            ms: 90.0,
            cached_age_s: None,
        }));
        cases.push(c);
        let mut c = case("launch.cpu-bound-launch-thread", "main thread of PID 4242");
        c.sample = true;
        c.inputs.pid = Some(4242);
        let stat = |utime: u32| {
            format!(
                "4242 (python3) R 1 4242 4242 0 -1 4194304 100 0 0 0 {utime} 0 0 0 20 0 3 0 100 0 0 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
            )
        };
        c.host
            .set_file_sequence("/proc/4242/stat", &[stat(0), stat(100)]);
        c.host
            .set_file_sequence("/proc/4242/task/4242/stat", &[stat(0), stat(98)]);
        c.host.set_file("/proc/4242/cmdline", "python3\0train.py\0");
        c.host.set_file("/proc/4242/environ", "HOME=/root\0");
        c.host.set_dir("/proc/4242/task", &["4242"]);
        // two DataLoader workers with CPU to spare: the main thread, not the loader, is the
        // bottleneck (with no workers at all, data.workers-too-few names the cause instead)
        c.host
            .set_file("/proc/4242/task/4242/children", "5001 5002");
        for w in [5001, 5002] {
            let ws = |utime: u32| {
                format!(
                    "{w} (pt_data_worker) S 4242 4242 4242 0 -1 4194304 100 0 0 0 {utime} 0 0 0 20 0 1 0 100 0 0 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
                )
            };
            c.host
                .set_file_sequence(&format!("/proc/{w}/stat"), &[ws(0), ws(10)]);
            c.host
                .set_file(&format!("/proc/{w}/cmdline"), "python3\0train.py\0");
        }
        c.host.set_samples(busy_sample(4, 1 << 30));
        cases.push(c);

        // Rules judged from evidence alone (a pasted table, a df, an NCCL log).
        let mut c = case("launch.gpu-underutilized", "at 0% mean utilization");
        c.inputs.evidence = vec![file(
            &d,
            "smi.txt",
            "| NVIDIA-SMI 418.87.00    Driver Version: 418.87.00    CUDA Version: 10.1     |\n\
|===============================+======================+======================|\n\
|   0  GRID K520           On   | 00000000:00:03.0 Off |                  N/A |\n\
| N/A   30C    P8    17W / 125W |     46MiB /  4037MiB |      0%      Default |\n\
+-------------------------------+----------------------+----------------------+\n\
| Processes:                                                       GPU Memory |\n\
|  GPU       PID   Type   Process name                             Usage      |\n\
|=============================================================================|\n\
|    0      8351      C   /usr/bin/python3.6                            35MiB |\n",
        )];
        cases.push(c);
        let mut c = case("data.shm-too-small", "Docker's 64 MB default");
        c.inputs.evidence = vec![file(
            &d,
            "df.txt",
            "Filesystem      Size  Used Avail Use% Mounted on\noverlay         1.8T  1.2T  520G  70% /\nshm              64M     0   64M   0% /dev/shm\n",
        )];
        cases.push(c);
        let nccl = |text: &str| file(&d, "nccl.log", text);
        let mut c = case("comm.no-ib-device-multinode", "No device found");
        c.inputs.nccl_log = Some(nccl(
            "a:1:1 [0] NCCL INFO NET/IB : No device found.\n\
a:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n\
a:1:1 [0] NCCL INFO Using network Socket\n\
b:2:2 [0] NCCL INFO Using network Socket\n\
a:1:3 [0] NCCL INFO Channel 00 : 1[0] -> 0[0] [receive] via NET/Socket/0\n",
        ));
        cases.push(c);
        let mut c = case("comm.ib-disabled-in-log", "NCCL_IB_DISABLE was set to 1");
        c.inputs.nccl_log = Some(nccl(
            "a:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n\
a:1:3 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n",
        ));
        cases.push(c);
        let mut c = case("comm.shm-between-local-gpus", "via SHM");
        c.inputs.nccl_log = Some(nccl(
            "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START\n\
a:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 2000 - Init START\n\
a:1:3 [0] NCCL INFO Could not enable P2P between dev 0(=1000) and dev 1(=2000)\n\
a:1:3 [0] NCCL INFO Channel 00 : 0[1000] -> 1[2000] via SHM/direct/direct\n\
a:2:3 [1] NCCL INFO Channel 00 : 1[2000] -> 0[1000] via SHM/direct/direct\n",
        ));
        cases.push(c);
        // nccl-tests' footer when the data it checked was wrong (NVIDIA/nccl-tests#356)
        let mut c = case("comm.collective-wrong-results", "56 out-of-bounds values");
        c.inputs.nccl_log = Some(nccl(
            "      262144         65536     float     sum      -1    43.00    6.10    6.10      0    42.86    6.12    6.12      0\n\
# Out of bounds values : 56 FAILED\n\
# Avg bus bandwidth    : 3.41227\n",
        ));
        cases.push(c);

        let mut all = String::new();
        let n = cases.len();
        for c in cases {
            all.push_str(&run_case(c, &d));
            all.push('\n');
        }
        insta::assert_snapshot!("rule_cases", all);
        eprintln!("{n} rule fault cases");
    }
}

/// Issue 12 item 6: a paste cut short gives `unknown` with "input ends early" for the rules
/// that needed the missing part, never a confident verdict from half a file. Each test cuts a
/// real file here; no truncated copy is committed.
mod truncated_input {
    use super::*;

    fn cut_to(name: &str, text: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpufix-cut-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn results(args: &[&str]) -> Vec<serde_json::Value> {
        let mut a = vec!["plan", "--sample", "0", "--format", "json"];
        a.extend_from_slice(args);
        let out = run(&a);
        assert_ne!(out.code, 1, "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v["results"].as_array().unwrap().clone()
    }

    fn assert_ends_early(rs: &[serde_json::Value], id: &str) {
        let r = rs.iter().find(|r| r["id"] == id).unwrap();
        assert_eq!(r["verdict"], "unknown", "{id}: {r}");
        let why = r["reason"].as_str().unwrap_or_default();
        assert!(why.contains("input ends early"), "{id}: {why}");
    }

    #[test]
    fn a_trace_that_ends_mid_array() {
        let full = std::fs::read_to_string(
            repo().join("tests/fixtures/evidence/trace/well_fed.pt.trace.json"),
        )
        .unwrap();
        let half = &full[..full.floor_char_boundary(full.len() / 2)];
        let p = cut_to("half.pt.trace.json", half);
        let rs = results(&[
            "--trace",
            p.to_str().unwrap(),
            "--only",
            "launch",
            "--only",
            "data",
        ]);
        for id in [
            "launch.gpu-idle-gaps",
            "launch.tiny-kernels",
            "data.dataloader-wait",
        ] {
            assert_ends_early(&rs, id);
        }
        // the whole file is judged
        let rs = results(&[
            "--trace",
            "tests/fixtures/evidence/trace/well_fed.pt.trace.json",
            "--only",
            "launch",
        ]);
        let r = rs
            .iter()
            .find(|r| r["id"] == "launch.gpu-idle-gaps")
            .unwrap();
        assert!(r["verdict"] == "pass" || r["verdict"] == "fail", "{r}");
    }

    #[test]
    fn an_nvidia_smi_xml_cut_inside_its_gpu() {
        let full = std::fs::read_to_string(
            repo().join("tests/fixtures/corpus/smi_x_full_head_with_command.xml"),
        )
        .unwrap();
        // the public paste, cut after the GPU's persistence line (before clocks, power, temps)
        let at = full.find("</persistence_mode>").unwrap() + "</persistence_mode>".len();
        let p = cut_to("cut.xml", &full[..at]);
        let rs = results(&["--evidence", p.to_str().unwrap()]);
        for id in [
            "driver.power-limit-below-default",
            "driver.temperature-unreadable",
            "driver.pcie-link-degraded",
        ] {
            assert_ends_early(&rs, id);
        }
    }

    #[test]
    fn an_nvidia_smi_q_text_cut_or_missing_a_gpu() {
        let full =
            std::fs::read_to_string(repo().join("tests/fixtures/evidence/nvidia_smi/h200-q.txt"))
                .unwrap();
        // a live H200's -q, cut before its Temperature section
        let end = full.find("\n    Temperature").unwrap();
        let p = cut_to("cut-q.txt", &full[..end]);
        let rs = results(&["--evidence", p.to_str().unwrap()]);
        assert_ends_early(&rs, "driver.temperature-unreadable");
        // a GPU the header announces but the paste never reaches is not passed either
        let two = full.replacen(
            "Attached GPUs                                          : 1",
            "Attached GPUs                                          : 2",
            1,
        );
        assert_ne!(two, full);
        let p = cut_to("one-of-two-q.txt", &two);
        let rs = results(&["--evidence", p.to_str().unwrap()]);
        assert_ends_early(&rs, "driver.temperature-unreadable");
    }
}

/// Pasted host evidence judged alone: `topo -m` and what nvidia-smi prints for a lost GPU.
mod pasted_gpu_evidence {
    use super::*;

    fn verdict_of(file: &str, id: &str) -> String {
        let out = run(&[
            "plan",
            "--sample",
            "0",
            "--format",
            "json",
            "--evidence",
            file,
        ]);
        assert_ne!(out.code, 1, "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["verdict"].as_str().unwrap().to_string())
            .unwrap()
    }

    #[test]
    fn topo_with_every_pair_across_the_sockets_fails_and_closer_pairs_pass() {
        let c = "tests/fixtures/corpus/";
        assert_eq!(
            verdict_of(
                &format!("{c}h2_topo_8gpu_all_sys_ring_slow.txt"),
                "comm.topology-no-nvlink"
            ),
            "fail"
        );
        for healthy in [
            "topo_l20_pix_node_sys.txt",
            "topo_h100_nvl_pairs.txt",
            "topo_2x5090_phb_tabs.txt",
            "topo_markdown_indented_node.txt",
        ] {
            assert_eq!(
                verdict_of(&format!("{c}{healthy}"), "comm.topology-no-nvlink"),
                "pass",
                "{healthy}"
            );
        }
    }

    #[test]
    fn nvidia_smi_saying_a_gpu_is_lost_is_a_gpu_fault() {
        assert_eq!(
            verdict_of(
                "tests/fixtures/corpus/h2_smi_error_gpu_is_lost.txt",
                "driver.xid-errors"
            ),
            "fail"
        );
    }
}

/// A paste cut short gives `unknown` with "input ends early" for the rules that needed what it
/// lost, never a verdict from half a file. Each case cuts a real recording or corpus artifact
/// here, in the test (no truncated copy is committed as real), and checks the whole file first
/// so that the cut is what changes the verdict.
mod truncation {
    use super::*;

    pub(super) fn judge(text: &str) -> serde_json::Value {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("paste.txt");
        std::fs::write(&p, text).unwrap();
        let out = run(&[
            "plan",
            "--sample",
            "0",
            "--format",
            "json",
            "--evidence",
            p.to_str().unwrap(),
        ]);
        assert_ne!(out.code, 1, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    }

    pub(super) fn result<'a>(v: &'a serde_json::Value, id: &str) -> (&'a str, String) {
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} not in {v}"));
        (
            r["verdict"].as_str().unwrap(),
            r["reason"].as_str().unwrap_or_default().to_string(),
        )
    }

    fn read(rel: &str) -> String {
        std::fs::read_to_string(repo().join(rel)).unwrap()
    }

    /// `text` up to (not including) the first line holding `marker`.
    fn cut_before(text: &str, marker: &str) -> String {
        let at = text.find(marker).unwrap_or_else(|| panic!("no {marker}"));
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        text[..line_start].to_string()
    }

    fn assert_cut(v: &serde_json::Value, id: &str) {
        let (verdict, reason) = result(v, id);
        assert_eq!(verdict, "unknown", "{id}: {reason}");
        assert!(reason.contains("input ends early"), "{id}: {reason}");
    }

    #[test]
    fn q_text_cut_before_its_event_reasons_and_ecc() {
        let whole = read("tests/fixtures/evidence/nvidia_smi/h200-q.txt");
        let v = judge(&whole);
        for id in ["driver.clocks-event-slowdown", "driver.ecc-uncorrectable"] {
            assert_eq!(result(&v, id).0, "pass", "{id}");
        }
        let cut = judge(&cut_before(&whole, "Clocks Event Reasons"));
        for id in ["driver.clocks-event-slowdown", "driver.ecc-uncorrectable"] {
            assert_cut(&cut, id);
        }
        // what the head still shows is judged: persistence mode is on
        assert_eq!(result(&cut, "driver.persistence-off").0, "pass");
    }

    #[test]
    fn q_xml_cut_before_its_event_reasons_and_ecc() {
        let whole = read("tests/fixtures/evidence/nvidia_smi/h200-q-x.xml");
        let v = judge(&whole);
        for id in ["driver.clocks-event-slowdown", "driver.ecc-uncorrectable"] {
            assert_eq!(result(&v, id).0, "pass", "{id}");
        }
        let cut = judge(&cut_before(&whole, "<clocks_event_reasons>"));
        for id in ["driver.clocks-event-slowdown", "driver.ecc-uncorrectable"] {
            assert_cut(&cut, id);
        }
    }

    #[test]
    fn default_table_cut_inside_a_gpu_row() {
        // a real table: V100s holding 3 GB each at 0% (the poster's training job, no processes)
        let whole = read("tests/fixtures/corpus/h2_smi_table_v100sxm2_0pct_3gb.txt");
        assert_eq!(result(&judge(&whole), "launch.gpu-underutilized").0, "fail");
        // cut after the last GPU's first line: its utilization is lost
        let last = whole.rfind("Tesla V100").unwrap();
        let end = last + whole[last..].find('\n').unwrap() + 1;
        assert_cut(&judge(&whole[..end]), "launch.gpu-underutilized");
    }
}

/// A process or a root that does not exist is a usage error (exit 1, 3 for Nagios) with the
/// reason, for plan, audit and apply: never a report of unknowns or an apply with nothing to do.
mod missing_pid_and_root {
    use super::*;

    /// A pid no process has: above the kernel's pid_max limit (2^22).
    const NO_PID: &str = "4194305";

    #[test]
    fn a_pid_that_does_not_exist_is_a_usage_error() {
        for cmd in [
            &["plan"][..],
            &["audit"],
            &["apply", "--dry-run"],
            &["apply", "--yes"],
        ] {
            let mut args = cmd.to_vec();
            args.extend(["--pid", NO_PID]);
            let o = run(&args);
            assert_eq!(o.code, 1, "{args:?}: {}{}", o.stdout, o.stderr);
            assert!(
                o.stderr
                    .contains(&format!("--pid {NO_PID}: no such process")),
                "{args:?}: {}",
                o.stderr
            );
        }
        let o = run(&["audit", "--format", "nagios", "--pid", NO_PID]);
        assert_eq!(o.code, 3, "{}{}", o.stdout, o.stderr);
    }

    #[test]
    fn a_root_that_does_not_exist_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-root");
        let missing = missing.to_str().unwrap();
        for cmd in [
            &["plan"][..],
            &["audit"],
            &["apply", "--dry-run"],
            &["apply", "--yes"],
        ] {
            let mut args = cmd.to_vec();
            args.extend(["--root", missing]);
            let o = run(&args);
            assert_eq!(o.code, 1, "{args:?}: {}{}", o.stdout, o.stderr);
            assert!(
                o.stderr.contains(&format!("--root {missing}: ")),
                "{args:?}: {}",
                o.stderr
            );
        }
        let o = run(&["audit", "--format", "nagios", "--root", missing]);
        assert_eq!(o.code, 3, "{}{}", o.stdout, o.stderr);
        // A file is not a root either.
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let o = run(&["plan", "--root", file.to_str().unwrap()]);
        assert_eq!(o.code, 1, "{}", o.stderr);
        assert!(o.stderr.contains("not a directory"), "{}", o.stderr);
    }
}

/// The native CUDA check runs in a child of the binary (`host::cuda_check::isolate_in`): the
/// child's side answers one line of JSON, which on a machine without the driver says why.
#[test]
fn the_cuda_check_child_answers_one_json_line() {
    let o = Command::cargo_bin("gpufix")
        .unwrap()
        .arg("--internal-cuda-check")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout.lines().last().unwrap();
    let c: gpufix::host::cuda_check::CudaCheck = serde_json::from_str(line).unwrap();
    if !c.ok {
        assert!(c.error.is_some(), "{line}");
    }
}

/// Issue 24 (item 7, peak memory ≤ 2× the input): a large pasted log is held once. The peak
/// memory of a whole plan over the paste, less that of the same plan over a small piece of it
/// (the binary, the rules, the probes' fixed costs: a piece of 32 KB, which the shell grammar
/// parses whole), stays under 1.5× the paste (1.0× when written). A second whole copy of it (a
/// re-encoding, a probe reading it again, a list of every line) would take it to 2×, and so did
/// the shell grammar's parse of the log's command lines in one piece (30 MB on any log holding
/// a megabyte of them).
#[test]
fn a_large_pasted_log_is_held_once() {
    fn repeated(unit: &str, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + unit.len());
        while s.len() < bytes {
            s.push_str(unit);
        }
        s
    }
    fn peak_kib(paste: &std::path::Path) -> u64 {
        let o = run(&[
            "plan",
            "--sample",
            "0",
            "--format",
            "json",
            "--timings",
            "--evidence",
            paste.to_str().unwrap(),
        ]);
        assert!(o.code == 0 || o.code == 2, "{}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        v["timings"]["peak_rss_kib"]
            .as_u64()
            .unwrap_or_else(|| panic!("no peak_rss_kib in --timings: {}", v["timings"]))
    }
    let dir = tempfile::tempdir().unwrap();
    const SIZE: usize = 16_000_000;
    for (name, corpus) in [
        ("train.log", "h3_log_colab_8_workers_2_cpus.txt"),
        ("nccl.log", "nccl_two_node_roce_a800.log"),
    ] {
        let mut unit =
            std::fs::read_to_string(repo().join("tests/fixtures/corpus").join(corpus)).unwrap();
        if !unit.ends_with('\n') {
            unit.push('\n');
        }
        let (big, small) = (
            dir.path().join(name),
            dir.path().join(format!("small-{name}")),
        );
        let text = repeated(&unit, SIZE);
        std::fs::write(&big, &text).unwrap();
        std::fs::write(&small, repeated(&unit, 32_000)).unwrap();
        drop(text);
        let (b, s) = (peak_kib(&big), peak_kib(&small));
        let ratio = b.saturating_sub(s) as f64 * 1024.0 / SIZE as f64;
        // issue 24's bound: peak memory at most twice the input (the plans measure 1.4-1.55×
        // on the NCCL log, varying by a MiB from run to run with the probes' timing)
        assert!(
            ratio <= 2.0,
            "{name}: a plan over {SIZE} bytes peaked at {b} KiB, {s} KiB over a small piece: {ratio:.2}× the paste beside the fixed costs"
        );
    }
}

/// `gpufix plan --evidence FILE --sample 0 --format json`'s report, which must not be an error.
fn plan_evidence_json(file: &str) -> serde_json::Value {
    let o = run(&[
        "plan",
        "--evidence",
        file,
        "--sample",
        "0",
        "--format",
        "json",
    ]);
    assert_ne!(o.code, 1, "{file}: {}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap()
}

/// PaddlePaddle's GPU out-of-memory error (its CUDA allocator's `Out of memory error on GPU N.
/// Cannot allocate …`) is read as `paddle-oom` and the plan says what it holds, where it was
/// "prose: nothing read" before; a PyTorch OOM beside it stays PyTorch's.
#[test]
fn a_paddle_oom_is_read_and_said_plainly() {
    let notes = |file: &str| -> Vec<String> {
        plan_evidence_json(file)["notes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect()
    };
    let c = "tests/fixtures/corpus/";
    // github.com/PaddlePaddle/PaddleOCR/issues/11989 and Paddle#26892 (the older, re-wrapped one)
    let n = notes(&format!("{c}h99_oom_paddleocr11989_resource_exhausted.txt"));
    assert!(n.iter().any(|n| n.contains("paddle-oom")), "{n:?}");
    assert!(
        n.iter().any(|n| n.contains(
            "this is PaddlePaddle's GPU out-of-memory error: 129.394531MB asked on GPU 0, 23.611938GB of the card in use (by every process), 31.687500MB free"
        )),
        "{n:?}"
    );
    assert!(!n.iter().any(|n| n.contains("reads as prose")), "{n:?}");
    let n = notes(&format!("{c}h99_oom_paddle26892_old_wording.txt"));
    assert!(
        n.iter()
            .any(|n| n.contains("1.531250GB asked on GPU 0, 416.625000MB free")),
        "{n:?}"
    );
    // a PyTorch OOM is not Paddle's
    let n = notes(&format!("{c}h2_oom_6g_2_30g_unallocated.txt"));
    assert!(!n.iter().any(|n| n.contains("PaddlePaddle")), "{n:?}");
}

/// A paste holding several views of GPUs (a table, `dmon`, a `--query-gpu` loop, a Slurm job
/// report) is judged from the view that shows a job, wherever it sits: another machine's idle
/// table beside the job's own samples says nothing about them. Each paste is two corpus texts
/// put together here, in the test (found by `bench/paste_variants.py --variants beside_table`).
mod views {
    use super::*;
    use truncation::{judge, result};

    const IDLE_TABLE: &str =
        "tests/fixtures/corpus/h108_smi_immich13831_gtx1660_idle_container.txt";

    fn verdict(v: &serde_json::Value, id: &str) -> String {
        result(v, id).0.to_string()
    }

    #[test]
    fn a_job_s_samples_beside_another_machine_s_idle_table_are_judged() {
        let table = std::fs::read_to_string(IDLE_TABLE).unwrap();
        // alone, the idle table shows no job
        assert_ne!(verdict(&judge(&table), "launch.gpu-underutilized"), "fail");
        for job in [
            "tests/fixtures/corpus/h100d_smi_query_loop_starved.csv",
            "tests/fixtures/corpus/h100d_smi_dmon_um_starved.txt",
            "tests/fixtures/corpus/h101_jobstats_gnntracking95_gpu_33pct.txt",
        ] {
            let job = std::fs::read_to_string(job).unwrap();
            assert_eq!(verdict(&judge(&job), "launch.gpu-underutilized"), "fail");
            for paste in [format!("{job}\n{table}"), format!("{table}\n{job}")] {
                assert_eq!(
                    verdict(&judge(&paste), "launch.gpu-underutilized"),
                    "fail",
                    "{paste}"
                );
            }
        }
    }

    #[test]
    fn nvidia_smi_failing_beside_a_working_table_is_still_nvml_failing() {
        // the host's table above the container's failure, or another machine's output: the
        // failure the paste shows stands
        let table = std::fs::read_to_string(IDLE_TABLE).unwrap();
        assert_eq!(verdict(&judge(&table), "driver.nvml-unavailable"), "pass");
        for failing in [
            "tests/fixtures/corpus/h11_smierr_shinecluster50_unattended_upgrade.txt",
            "tests/fixtures/corpus/h114_nvccli_k8sdp1431_hook_mismatch_smi.txt",
        ] {
            let failing = std::fs::read_to_string(failing).unwrap();
            assert_eq!(verdict(&judge(&failing), "driver.nvml-unavailable"), "fail");
            for paste in [format!("{failing}\n{table}"), format!("{table}\n{failing}")] {
                assert_eq!(
                    verdict(&judge(&paste), "driver.nvml-unavailable"),
                    "fail",
                    "{paste}"
                );
            }
        }
    }

    #[test]
    fn a_compose_file_merging_an_anchor_is_read_whole_beside_other_output() {
        // `ipc: host` sits in an `x-common: &common` block each service merges (`<<: *common`):
        // cut at its blank lines beside a table, the services lost it
        let compose = std::fs::read_to_string(
            "tests/fixtures/corpus/h22_compose_physicalai_trainer_ipc_host_anchor.yaml",
        )
        .unwrap();
        let table = std::fs::read_to_string(IDLE_TABLE).unwrap();
        let env = std::fs::read_to_string(
            "tests/fixtures/corpus/h109_collectenv_pytorch165929_h100_torch290_cu128_driver550.txt",
        )
        .unwrap();
        assert_ne!(verdict(&judge(&compose), "data.shm-too-small"), "fail");
        for paste in [
            format!("{compose}\n{table}"),
            format!("{table}\n{compose}"),
            format!("{env}\n{compose}"),
            format!("{compose}\nThanks, any idea?\n"),
        ] {
            assert_ne!(
                verdict(&judge(&paste), "data.shm-too-small"),
                "fail",
                "{paste}"
            );
        }
    }

    #[test]
    fn job_text_beside_a_table_is_still_read() {
        // a DataLoader interrupted while the loop waited on it, then another machine's table
        let log = std::fs::read_to_string(
            "tests/fixtures/corpus/h22_log_acodet47_val_loader_hang_keyboardinterrupt.log",
        )
        .unwrap();
        let table = std::fs::read_to_string(IDLE_TABLE).unwrap();
        assert_eq!(verdict(&judge(&log), "data.dataloader-wait"), "fail");
        for paste in [format!("{log}\n{table}"), format!("{table}\n{log}")] {
            assert_eq!(
                verdict(&judge(&paste), "data.dataloader-wait"),
                "fail",
                "{paste}"
            );
        }
    }
}

/// `memory.allocator-fragmentation` judges XLA's TPU runtime too (its E0100 figures: free memory
/// enough in total, in no contiguous block) and proposes what fits it: PyTorch's
/// `expandable_segments` has a `when:` that leaves it out there, so the finding is a manual fix
/// with E0100's instructions; a PyTorch OOM keeps its env action and no instructions.
#[test]
fn a_fragmented_tpu_oom_gets_xla_advice_not_pytorch_settings() {
    let fix = |file: &str| -> serde_json::Value {
        let v = plan_evidence_json(file);
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == "memory.allocator-fragmentation")
            .unwrap()
            .clone();
        assert_eq!(r["verdict"], "fail", "{file}: {r}");
        r["fix"].clone()
    };
    let c = "tests/fixtures/corpus/";
    // github.com/google/trax/issues/431
    let f = fix(&format!(
        "{c}h148_xlaoom_trax431_tpu_largest_contiguous_region.txt"
    ));
    assert_eq!(f["safety"], "manual", "{f}");
    assert_eq!(f["actions"], serde_json::json!([]), "{f}");
    let ins = f["instructions"].as_str().unwrap();
    assert!(ins.contains("donate_argnums"), "{ins}");
    assert!(!ins.contains("PYTORCH"), "{ins}");
    // a PyTorch OOM: the env action, no XLA instructions
    let f = fix(&format!("{c}h200_oom_fragmented.txt"));
    assert_eq!(f["safety"], "safe", "{f}");
    assert_eq!(f["actions"][0]["name"], "PYTORCH_CUDA_ALLOC_CONF", "{f}");
    assert!(f["actions"][0].get("when").is_none(), "{f}");
    assert!(f.get("instructions").is_none_or(|i| i.is_null()), "{f}");
}
