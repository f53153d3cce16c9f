//! A job diagnosed from what it is made of: recorded /proc trees of real jobs on an H200
//! (`--pid` alone, no --config, no --env-file), and config fixes that land where the setting
//! was written — a Python call, a nested YAML key, a Hydra group file — proven by
//! apply -> plan clean -> rollback byte-exact.

use assert_cmd::Command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Out {
    let o = Command::cargo_bin("gpufix")
        .unwrap()
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env_remove("GPUFIX_PYSPY")
        .arg("--no-system")
        .args(args)
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn fails(json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "fail")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// The /proc trees bench/pid_only.sh recorded on the H200 (calibration run, 2026-12-02):
/// each case's job attached by its pid (the torchrun case by the launcher's pid), judged with
/// no --config and no --env-file. The data, launch and cuda rules that fail must be exactly
/// the case's root cause (the healthy job: none).
#[test]
fn recorded_jobs_attached_by_pid_alone() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("healthy", "450", &[]),
        ("workers0", "647", &["data.workers-too-few"]),
        ("workers2", "799", &["data.workers-too-few"]),
        ("pin_memory_false", "953", &["data.pin-memory-off"]),
        ("launch_blocking", "1121", &["cuda.launch-blocking"]),
        ("other_layout", "1493", &["data.workers-too-few"]),
        ("torchrun", "1647", &["data.workers-too-few"]),
    ];
    let mut report = Vec::new();
    for (case, pid, expect) in cases {
        let snap = format!("tests/fixtures/pid/{case}.snapshot.json");
        let o = run(&[
            "plan",
            "--snapshot",
            &snap,
            "--pid",
            pid,
            "--sample",
            "5s",
            "--format",
            "json",
            "--only",
            "data",
            "--only",
            "launch",
            "--only",
            "cuda.launch-blocking",
        ]);
        assert!(o.code == 0 || o.code == 2, "{case}: {}", o.stderr);
        let got: Vec<String> = fails(&o.stdout)
            .into_iter()
            .filter(|id| {
                id.starts_with("data.") || id.starts_with("launch.") || id.starts_with("cuda.")
            })
            .collect();
        if got.iter().map(String::as_str).collect::<Vec<_>>() != *expect {
            report.push(format!("{case}: expected {expect:?}, got {got:?}"));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The config was found from the process alone, and the output says which file set the value.
#[test]
fn config_discovered_from_argv_and_cwd_is_named() {
    let o = run(&[
        "plan",
        "--snapshot",
        "tests/fixtures/pid/other_layout.snapshot.json",
        "--pid",
        "1493",
        "--sample",
        "5s",
        "--only",
        "data.workers-too-few",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let r = &v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "data.workers-too-few")
        .unwrap();
    let msg = r["messages"][0].as_str().unwrap();
    assert!(
        msg.contains(
            "num_workers is 2 (`training.loader.workers` in /tmp/cal/other_layout/config.yaml)"
        ),
        "{msg}"
    );
    assert!(
        msg.contains("2 saturated"),
        "the census is in the message: {msg}"
    );
}

/// A config with few workers beside a busy GPU is not judged starved by the GPU reading alone
/// (a short window can catch a job at 80%+); a trace that shows the steps waiting on the
/// DataLoader settles it (bench, H200: 2 workers at 64% mean utilization, one 3 s window above
/// the utilization gate).
#[test]
fn few_workers_beside_a_busy_gpu_fail_when_the_trace_shows_loader_waits() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("config.yaml");
    std::fs::write(&cfg, "data:\n  num_workers: 2\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let base = [
        "plan",
        "--snapshot",
        "tests/fixtures/pid/healthy.snapshot.json",
        "--pid",
        "450",
        "--sample",
        "5s",
        "--config",
        cfg,
        "--only",
        "data.workers-too-few",
        "--format",
        "json",
    ];
    let o = run(&base);
    assert!(o.code == 0 || o.code == 2, "{}", o.stderr);
    assert!(
        fails(&o.stdout).is_empty(),
        "busy GPU, no trace: {}",
        o.stdout
    );
    let mut with_trace = base.to_vec();
    with_trace.extend([
        "--trace",
        "tests/fixtures/evidence/trace/starved.pt.trace.json",
    ]);
    let o = run(&with_trace);
    assert_eq!(fails(&o.stdout), ["data.workers-too-few"], "{}", o.stderr);
}

struct Job {
    dir: tempfile::TempDir,
}

impl Job {
    fn new(files: &[(&str, &str)]) -> Job {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("root/proc")).unwrap();
        for (p, text) in files {
            let f = dir.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        }
        Job { dir }
    }
    fn p(&self, rel: &str) -> String {
        self.dir.path().join(rel).display().to_string()
    }
    fn state(&self) -> BTreeMap<String, Vec<u8>> {
        fn walk(d: &Path, base: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            for e in std::fs::read_dir(d).unwrap() {
                let e = e.unwrap();
                let p = e.path();
                if p.file_name().is_some_and(|n| n == "var") {
                    continue; // gpufix's own state (journal)
                }
                if e.file_type().unwrap().is_dir() {
                    walk(&p, base, out);
                } else if e.file_type().unwrap().is_file() {
                    out.insert(
                        p.strip_prefix(base).unwrap().display().to_string(),
                        std::fs::read(&p).unwrap(),
                    );
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.dir.path(), self.dir.path(), &mut out);
        out
    }
    /// `rollback`: it takes the run's --root, none of the probing options.
    fn rollback(&self) -> Out {
        let o = Command::cargo_bin("gpufix")
            .unwrap()
            .env("NO_COLOR", "1")
            .args(["rollback", "--root", &self.p("root")])
            .output()
            .unwrap();
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
    fn run(&self, args: &[&str]) -> Out {
        let root = self.p("root");
        let mut a = vec!["--root", root.as_str(), "--sample", "0"];
        a.extend(args);
        run(&a)
    }
}

/// apply -> plan clean -> rollback byte-exact, with the diff at the place the setting lives.
fn prove(
    job: &Job,
    inputs: &[&str],
    rules: &[&str],
    diff_has: &[&str],
    after_has: &[(&str, &str)],
) {
    let mut base: Vec<&str> = inputs.to_vec();
    for r in rules {
        base.push("--only");
        base.push(r);
    }
    let before = job.state();
    let plan = job.run(&[&["plan"], base.as_slice()].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    for d in diff_has {
        assert!(
            plan.stdout.contains(d),
            "plan shows `{d}`:\n{}",
            plan.stdout
        );
    }
    assert_eq!(job.state(), before, "plan changes nothing");
    let apply = job.run(
        &[
            &["apply", "--yes", "--allow", "config.set"],
            base.as_slice(),
        ]
        .concat(),
    );
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    for (file, has) in after_has {
        let t = std::fs::read_to_string(job.p(file)).unwrap();
        assert!(t.contains(has), "{file} has `{has}` after apply:\n{t}");
    }
    let again = job.run(&[&["plan"], base.as_slice()].concat());
    assert!(
        !again.stdout.contains("FAIL"),
        "plan is clean after apply:\n{}",
        again.stdout
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

#[test]
fn python_dataloader_call_is_fixed_in_place() {
    let src = "import torch\nfrom torch.utils.data import DataLoader\n\n\ndef main():\n    ds = make()\n    loader = DataLoader(ds, batch_size=64,\n                        shuffle=True)  # the training loader\n    for x in loader:\n        step(x)\n";
    let job = Job::new(&[("job/train_script.txt", src)]);
    let cfg = job.p("job/train_script.txt");
    prove(
        &job,
        &["--config", &cfg],
        &["data.workers-too-few", "data.pin-memory-off"],
        &["+                        shuffle=True, num_workers=8)  # the training loader"],
        &[(
            "job/train_script.txt",
            "shuffle=True, num_workers=8, pin_memory=True)  # the training loader",
        )],
    );
}

#[test]
fn python_dict_literal_config_is_fixed_in_place() {
    let src = "'''dataloader config'''\nDATALOADER_CFG = {\n    'train': {\n        'batch_size_per_gpu': 2, 'num_workers_per_gpu': 2, 'shuffle': True, 'pin_memory': True,\n    },\n    'test': {'batch_size_per_gpu': 1, 'num_workers_per_gpu': 2},\n}";
    let job = Job::new(&[("job/dataloader_cfg.py", src)]);
    let cfg = job.p("job/dataloader_cfg.py");
    prove(
        &job,
        &["--config", &cfg],
        &["data.workers-too-few"],
        &[
            "+        'batch_size_per_gpu': 2, 'num_workers_per_gpu': 8, 'shuffle': True, 'pin_memory': True,",
        ],
        &[(
            "job/dataloader_cfg.py",
            "'num_workers_per_gpu': 8, 'shuffle': True, 'pin_memory': True,\n    },\n    'test': {'batch_size_per_gpu': 1, 'num_workers_per_gpu': 2},\n}",
        )],
    );
}

/// A launch script given as --config is the job's environment: the export that breaks the
/// job is removed from the script itself; rollback restores it byte for byte.
/// The launch script of issue 22: each env fix removes only the assignment it names. The
/// `torchrun` line and `OMP_NUM_THREADS=8` survive byte for byte; the two diffs of one file
/// are each drawn against the file as it is, and applied in one transaction.
#[test]
fn each_env_fix_removes_only_the_assignment_it_names() {
    let script = "#!/bin/bash\nexport NCCL_DEBUG=INFO\nNCCL_P2P_DISABLE=1 torchrun --nproc_per_node=8 train.py --config cfg.yaml\nexport CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8\n";
    // comm.p2p-disabled waits on NVML, which a test machine lacks: a site rule with its
    // condition and fix stands in for it
    let site = "playbook: site\nlayer: comm\ntitle: Site\nrules:\n  - id: site.p2p-disabled\n    title: NCCL_P2P_DISABLE=1 in the launch script\n    why: as comm.p2p-disabled\n    severity: warning\n    probes:\n      env: { kind: env }\n    fail_when: \"env.vars.NCCL_P2P_DISABLE is defined and env.vars.NCCL_P2P_DISABLE | trim == '1' and env.gpus > 1\"\n    message: \"NCCL_P2P_DISABLE=1 in the {{ env.source }}\"\n    fix:\n      safety: safe\n      restart: job\n      actions:\n        - kind: env.unset\n          name: NCCL_P2P_DISABLE\n          file: \"{{ env.file | default('') }}\"\n";
    let job = Job::new(&[("job/run.sh", script), ("site/site.yaml", site)]);
    let cfg = job.p("job/run.sh");
    let dir = job.p("site");
    let base = [
        "--playbooks",
        dir.as_str(),
        "--config",
        cfg.as_str(),
        "--only",
        "cuda.launch-blocking",
        "--only",
        "site.p2p-disabled",
    ];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    for has in [
        "-NCCL_P2P_DISABLE=1 torchrun --nproc_per_node=8 train.py --config cfg.yaml\n    +torchrun --nproc_per_node=8 train.py --config cfg.yaml\n",
        "-export CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8\n    +export OMP_NUM_THREADS=8\n",
    ] {
        assert!(
            plan.stdout.contains(has),
            "plan shows `{has}`:\n{}",
            plan.stdout
        );
    }
    // each diff alone: the second (NCCL_P2P_DISABLE) is drawn against the file as it is, not
    // on the result of the first, so its context still shows the CUDA_LAUNCH_BLOCKING line
    let p2p = plan.stdout.split("unset NCCL_P2P_DISABLE").nth(1).unwrap();
    assert!(
        p2p.contains("\n     export CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8\n"),
        "{p2p}"
    );
    let apply = job.run(&[&["apply", "--yes"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    let after = std::fs::read_to_string(&cfg).unwrap();
    assert_eq!(
        after,
        "#!/bin/bash\nexport NCCL_DEBUG=INFO\ntorchrun --nproc_per_node=8 train.py --config cfg.yaml\nexport OMP_NUM_THREADS=8\n"
    );
    let again = job.run(&[&["plan"][..], &base].concat());
    assert!(!again.stdout.contains("FAIL"), "{}", again.stdout);
    assert!(
        !again.stdout.contains("@@"),
        "applying twice changes nothing: {}",
        again.stdout
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

#[test]
fn launch_script_export_is_removed_where_it_is_written() {
    let script = "#!/bin/bash\nexport OMP_NUM_THREADS=8\nexport CUDA_LAUNCH_BLOCKING=1\ntorchrun --nproc_per_node=4 train.py --cfg exp.yaml\n";
    let job = Job::new(&[("job/run.sh", script)]);
    let cfg = job.p("job/run.sh");
    let base = ["--config", cfg.as_str(), "--only", "cuda.launch-blocking"];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("-export CUDA_LAUNCH_BLOCKING=1"),
        "{}",
        plan.stdout
    );
    let apply = job.run(&[&["apply", "--yes", "--allow", "env.unset"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    let after = std::fs::read_to_string(&cfg).unwrap();
    assert!(!after.contains("CUDA_LAUNCH_BLOCKING"), "{after}");
    assert!(
        after.contains("export OMP_NUM_THREADS=8\ntorchrun"),
        "{after}"
    );
    let again = job.run(&[&["plan"][..], &base].concat());
    assert!(!again.stdout.contains("FAIL"), "{}", again.stdout);
    // the journal holds the run's --config root: rollback takes only --root
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

#[test]
fn nested_yaml_key_is_fixed_where_it_lives() {
    let yaml = "# NeMo-style\nmodel:\n  train_ds:\n    batch_size: 32\n    num_workers: 2   # per GPU\n    pin_memory: false\n  validation_ds:\n    num_workers: 0\n";
    let job = Job::new(&[("job/exp.yaml", yaml)]);
    let cfg = job.p("job/exp.yaml");
    prove(
        &job,
        &["--config", &cfg],
        &["data.workers-too-few", "data.pin-memory-off"],
        &[
            "-    num_workers: 2   # per GPU",
            "+    num_workers: 8   # per GPU",
        ],
        &[(
            "job/exp.yaml",
            "    num_workers: 8   # per GPU\n    pin_memory: true\n  validation_ds:\n    num_workers: 0\n",
        )],
    );
}

#[test]
fn hydra_group_file_is_found_from_the_process_and_fixed() {
    let job = Job::new(&[
        (
            "root/job/train.py",
            "import hydra\n\n@hydra.main(config_path=\"conf\", config_name=\"config\")\ndef main(cfg):\n    loader = DataLoader(ds, num_workers=cfg.data.num_workers, pin_memory=cfg.data.pin_memory)\n",
        ),
        (
            "root/job/conf/config.yaml",
            "defaults:\n  - data: imagenet\n  - _self_\ntrainer:\n  max_epochs: 10\n",
        ),
        (
            "root/job/conf/data/imagenet.yaml",
            "# the data group\nbatch_size: 256\nnum_workers: 0\npin_memory: true\n",
        ),
        (
            "root/proc/4242/cmdline",
            "python\0train.py\0trainer.max_epochs=5\0",
        ),
        (
            "root/proc/4242/stat",
            "4242 (python) S 1 1 1 0 -1 4194304 100 0 0 0 100 10 0 0 20 0 3 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        ),
        (
            "root/proc/4242/task/4242/stat",
            "4242 (python) S 1 1 1 0 -1 4194304 100 0 0 0 100 10 0 0 20 0 3 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        ),
        ("root/proc/4242/task/4242/children", ""),
    ]);
    std::os::unix::fs::symlink("/job", job.dir.path().join("root/proc/4242/cwd")).unwrap();
    prove(
        &job,
        &["--pid", "4242"],
        &["data.workers-too-few"],
        &["set num_workers = ", "in /job/conf/data/imagenet.yaml"],
        &[(
            "root/job/conf/data/imagenet.yaml",
            "# the data group\nbatch_size: 256\nnum_workers: ",
        )],
    );
}

/// Job text given as --evidence (any name, any extension) feeds the config rules.
#[test]
fn launcher_line_and_log_warning_as_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let l = dir.path().join("cmd.txt");
    std::fs::write(
        &l,
        "torchrun --nproc_per_node=8 main.py --num_workers 32 --lr 0.1\n",
    )
    .unwrap();
    let o = run(&[
        "plan",
        "--evidence",
        &l.display().to_string(),
        "--sample",
        "0",
        "--format",
        "json",
        "--only",
        "data.workers-too-many",
        "--only",
        "data.loader-warning-in-log",
        "--only",
        "data.workers-too-few",
        "--only",
        "data.pin-memory-off",
    ]);
    assert_eq!(
        fails(&o.stdout),
        vec!["data.workers-too-many"],
        "{}\n{}",
        o.stdout,
        o.stderr
    );
    let g = dir.path().join("log.txt");
    std::fs::write(&g, "Epoch 0:  10%|# | 30/300 [00:10<01:30, 3.0it/s, loss=2.1]\n/usr/lib/python3/site-packages/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=7` in the `DataLoader` to improve performance.\n").unwrap();
    let o = run(&[
        "plan",
        "--evidence",
        &g.display().to_string(),
        "--sample",
        "0",
        "--format",
        "json",
        "--only",
        "data.workers-too-many",
        "--only",
        "data.loader-warning-in-log",
        "--only",
        "data.workers-too-few",
        "--only",
        "data.pin-memory-off",
    ]);
    assert_eq!(
        fails(&o.stdout),
        vec!["data.loader-warning-in-log"],
        "{}\n{}",
        o.stdout,
        o.stderr
    );
    // generous workers on 8 GPUs: silent
    std::fs::write(&l, "torchrun --nproc_per_node 8 train.py --workers 8\n").unwrap();
    let o = run(&[
        "plan",
        "--evidence",
        &l.display().to_string(),
        "--sample",
        "0",
        "--format",
        "json",
        "--only",
        "data.workers-too-many",
        "--only",
        "data.loader-warning-in-log",
        "--only",
        "data.workers-too-few",
        "--only",
        "data.pin-memory-off",
    ]);
    assert!(fails(&o.stdout).is_empty(), "{}", o.stdout);
}

/// Training scripts written the way public code is (tests/fixtures/pid/shapes/*/case.yaml:
/// pytorch/examples imagenet and mnist, a Hugging Face Trainer script, a Lightning DataModule,
/// timm, a loader in an imported module, a config loaded by a path literal, `accelerate
/// launch`, a job in a container), each laid on a /proc tree recorded on the H200: the
/// measurements (CPU of the process, its threads and DataLoader workers, GPU samples) are the
/// recording of bench/train.py with the same fault (`base`); the command line, working
/// directory and the files the job sees are the shape's. `plan --pid` alone must name the
/// root-cause rule with where the value was set (`says`), plan the fix there (`plan_has`),
/// and the healthy twin must be silent.
#[test]
fn public_script_shapes_attached_by_pid_alone() {
    let shapes = repo().join("tests/fixtures/pid/shapes");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&shapes)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.yaml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 8, "{dirs:?}");
    let mut report = Vec::new();
    let mut runs = 0;
    for dir in &dirs {
        let case: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(dir.join("case.yaml")).unwrap()).unwrap();
        for run in case["runs"].as_sequence().unwrap() {
            runs += 1;
            let label = format!(
                "{} / {}",
                dir.file_name().unwrap().to_string_lossy(),
                run["name"].as_str().unwrap()
            );
            let tmp = tempfile::tempdir().unwrap();
            let (snap, pid) = compose_shape(dir, &case, run, tmp.path());
            let snap = snap.display().to_string();
            let args = |fmt: &'static str| {
                vec![
                    "plan".to_string(),
                    "--snapshot".into(),
                    snap.clone(),
                    "--pid".into(),
                    pid.to_string(),
                    "--sample".into(),
                    "5s".into(),
                    "--format".into(),
                    fmt.into(),
                    "--only".into(),
                    "data".into(),
                    "--only".into(),
                    "launch".into(),
                    "--only".into(),
                    "cuda.launch-blocking".into(),
                ]
            };
            let a = args("json");
            let o = run_owned(&a);
            if o.code != 0 && o.code != 2 {
                report.push(format!("{label}: exit {}: {}", o.code, o.stderr));
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
            let results = v["results"].as_array().unwrap();
            let got: Vec<&str> = results
                .iter()
                .filter(|r| r["verdict"] == "fail")
                .map(|r| r["id"].as_str().unwrap())
                .collect();
            let want: Vec<&str> = run["fails"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            if got != want {
                let msgs: Vec<String> = results
                    .iter()
                    .filter(|r| r["verdict"] == "fail")
                    .map(|r| format!("{}: {}", r["id"], r["messages"]))
                    .collect();
                report.push(format!(
                    "{label}: expected {want:?}, got {got:?}\n    {}",
                    msgs.join("\n    ")
                ));
                continue;
            }
            let messages: String = results
                .iter()
                .filter(|r| r["verdict"] == "fail")
                .map(|r| r["messages"].to_string())
                .collect();
            for s in run["says"].as_sequence().into_iter().flatten() {
                let s = s.as_str().unwrap();
                if !messages.contains(&s.replace('"', "\\\"")) {
                    report.push(format!(
                        "{label}: the finding says `{s}`; it says {messages}"
                    ));
                }
            }
            if let Some(has) = run["plan_has"].as_sequence() {
                let text = run_owned(&args("text"));
                for s in has {
                    let s = s.as_str().unwrap();
                    if !text.stdout.contains(s) {
                        report.push(format!("{label}: the plan shows `{s}`:\n{}", text.stdout));
                    }
                }
            }
        }
    }
    assert!(runs >= 20, "{runs} runs");
    assert!(report.is_empty(), "{}", report.join("\n"));
}

fn run_owned(args: &[String]) -> Out {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&a)
}

/// The recordings a shape is laid on: bench/pid_only.sh's calibration run (file, the pid
/// attached: the torchrun case's launcher).
fn base_recording(name: &str) -> (&'static str, u32) {
    match name {
        "healthy" => ("healthy", 450),
        "workers0" => ("workers0", 647),
        "workers2" => ("workers2", 799),
        "pin_memory_false" => ("pin_memory_false", 953),
        "launch_blocking" => ("launch_blocking", 1121),
        "torchrun" => ("torchrun", 1647),
        other => panic!("no recording `{other}`"),
    }
}

/// Lay a shape on a recording: every process of the job gets the shape's command line (a
/// launcher at the top gets `launcher_argv`) and working directory; the recorded job's own
/// files (bench/train.py, its config) are taken out and the shape's put where the job sees
/// them (under /proc/PID/root for a job in a container, whose mount namespace differs).
fn compose_shape(
    dir: &Path,
    case: &serde_yaml::Value,
    run: &serde_yaml::Value,
    out: &Path,
) -> (PathBuf, u32) {
    use serde_json::{Value, json};
    let (file, top) = base_recording(run["base"].as_str().unwrap());
    let mut snap: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join(format!("tests/fixtures/pid/{file}.snapshot.json")))
            .unwrap(),
    )
    .unwrap();
    let text_of = |v: &Value| v[0].as_str().unwrap_or_default().to_string();
    // the job's processes: the top pid and its descendants
    let files = snap["files"].as_object().unwrap().clone();
    let kids = |p: u32| -> Vec<u32> {
        files
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("/proc/{p}/task/")) && k.ends_with("/children"))
            .flat_map(|(_, v)| {
                text_of(v)
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect()
    };
    let strs = |v: &serde_yaml::Value| -> Vec<String> {
        v.as_sequence()
            .map(|s| s.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let argv = strs(&run["argv"]);
    let launcher_argv = strs(&run["launcher_argv"]);
    let cwd = run["cwd"].as_str().or(case["cwd"].as_str()).unwrap();
    let container = case["container"].as_bool().unwrap_or(false);
    let mut todo = vec![top];
    let mut procs = Vec::new();
    while let Some(p) = todo.pop() {
        procs.push(p);
        todo.extend(kids(p));
    }
    let f = snap["files"].as_object_mut().unwrap();
    f.retain(|k, _| !(k.ends_with("/bench/train.py") || k.ends_with("/config.yaml")));
    for p in &procs {
        let a = if *p == top && file == "torchrun" {
            if launcher_argv.is_empty() {
                panic!("a launcher recording needs launcher_argv")
            }
            &launcher_argv
        } else {
            &argv
        };
        let mut cmd = a.join("\0");
        cmd.push('\0');
        if f.contains_key(&format!("/proc/{p}/cmdline")) {
            f.insert(format!("/proc/{p}/cmdline"), json!([cmd]));
        }
        // the run's environment variables, set over the recorded environment
        let key = format!("/proc/{p}/environ");
        if let Some(env) = run["env"].as_mapping()
            && let Some(old) = f.get(&key).map(&text_of)
        {
            let mut vars: Vec<String> = old
                .split('\0')
                .filter(|kv| {
                    !kv.is_empty()
                        && !env
                            .keys()
                            .any(|k| kv.starts_with(&format!("{}=", k.as_str().unwrap())))
                })
                .map(str::to_string)
                .collect();
            for (k, v) in env {
                vars.push(format!("{}={}", k.as_str().unwrap(), v.as_str().unwrap()));
            }
            f.insert(key, json!([format!("{}\0", vars.join("\0"))]));
        }
    }
    let links = snap["links"].as_object_mut().unwrap();
    for p in &procs {
        links.insert(format!("/proc/{p}/cwd"), json!([cwd]));
    }
    let job = if file == "torchrun" {
        procs[1..].iter().copied().min().unwrap()
    } else {
        top
    };
    let under = |p: &str| {
        if container {
            format!("/proc/{job}/root{p}")
        } else {
            p.to_string()
        }
    };
    if container {
        for p in &procs {
            links.insert(format!("/proc/{p}/ns/mnt"), json!(["mnt:[4026532901]"]));
        }
        links.insert("/proc/self/ns/mnt".into(), json!(["mnt:[4026531841]"]));
    }
    for (k, v) in case["links"].as_mapping().into_iter().flatten() {
        links.insert(under(k.as_str().unwrap()), json!([v.as_str().unwrap()]));
    }
    // the shape's files, with the run's edits
    let f = snap["files"].as_object_mut().unwrap();
    for (src, at) in case["files"].as_mapping().unwrap() {
        let src = src.as_str().unwrap();
        let mut text = std::fs::read_to_string(dir.join(src)).unwrap();
        for (e, pair) in run["edit"].as_mapping().into_iter().flatten() {
            if e.as_str() == Some(src) {
                let pair = strs(pair);
                assert!(text.contains(&pair[0]), "{src}: edit `{}`", pair[0]);
                text = text.replacen(&pair[0], &pair[1], 1);
            }
        }
        f.insert(under(at.as_str().unwrap()), json!([text]));
    }
    // files of the host itself (not the job's): must not be read as the job's
    for m in [&case["host_files"], &run["host_files"]] {
        for (src, at) in m.as_mapping().into_iter().flatten() {
            let text = std::fs::read_to_string(dir.join(src.as_str().unwrap())).unwrap();
            f.insert(at.as_str().unwrap().to_string(), json!([text]));
        }
    }
    snap["description"] = json!(format!(
        "{} laid on the H200 recording {file}",
        case["shape"].as_str().unwrap()
    ));
    let path = out.join("job.snapshot.json");
    std::fs::write(&path, serde_json::to_string(&snap).unwrap()).unwrap();
    (path, top)
}

/// A `--root` tree of a job: the process's argv, cwd link, one stat line and no workers (the
/// config branch of the rule decides: `--sample 0`).
fn job_tree(pid: &str, argv: &str, cwd: &str, files: &[(&str, &str)]) -> Job {
    let stat = format!(
        "{pid} (python) S 1 1 1 0 -1 4194304 100 0 0 0 100 10 0 0 20 0 3 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    );
    let mut all: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| (format!("root{p}"), t.to_string()))
        .collect();
    all.push((format!("root/proc/{pid}/cmdline"), argv.to_string()));
    all.push((format!("root/proc/{pid}/stat"), stat.clone()));
    all.push((format!("root/proc/{pid}/task/{pid}/stat"), stat));
    all.push((
        format!("root/proc/{pid}/task/{pid}/children"),
        String::new(),
    ));
    let refs: Vec<(&str, &str)> = all.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let job = Job::new(&refs);
    std::os::unix::fs::symlink(cwd, job.dir.path().join(format!("root/proc/{pid}/cwd"))).unwrap();
    job
}

/// The default of a DataModule's constructor parameter, read back as `self.num_workers`: the
/// fix edits the `def` line; apply -> plan clean -> rollback byte-exact.
#[test]
fn lightning_constructor_default_is_fixed_in_the_def() {
    let src = std::fs::read_to_string(repo().join("tests/fixtures/pid/shapes/lightning/main.py"))
        .unwrap();
    let job = job_tree(
        "4343",
        "python\0main.py\0fit\0--trainer.max_epochs\x005\0",
        "/home/ml/lit",
        &[("/home/ml/lit/main.py", &src)],
    );
    prove(
        &job,
        &["--pid", "4343"],
        &["data.workers-too-few"],
        &[
            "-    def __init__(self, data_dir: str = \"./\", batch_size: int = 64, num_workers: int = 0):",
            "+    def __init__(self, data_dir: str = \"./\", batch_size: int = 64, num_workers: int = ",
        ],
        &[(
            "root/home/ml/lit/main.py",
            "batch_size: int = 64, num_workers: int = ",
        )],
    );
}

/// `python -m detr.train` whose loader is built in detr/data.py: the fix edits the default of
/// `build_loader` in the imported module, not the entry point.
#[test]
fn imported_module_default_is_fixed_in_that_module() {
    let d = repo().join("tests/fixtures/pid/shapes/imported_module/proj/detr");
    let rd = |n: &str| std::fs::read_to_string(d.join(n)).unwrap();
    let (train, data) = (rd("train.py"), rd("data.py"));
    let job = job_tree(
        "4444",
        "python\0-m\0detr.train\0--batch_size\x004\0",
        "/srv/proj",
        &[
            ("/srv/proj/detr/__init__.py", ""),
            ("/srv/proj/detr/train.py", &train),
            ("/srv/proj/detr/data.py", &data),
        ],
    );
    prove(
        &job,
        &["--pid", "4444"],
        &["data.workers-too-few"],
        &[
            "-def build_loader(dataset, batch_size, num_workers=0, distributed=False):",
            "def build_loader(num_workers=…) at /srv/proj/detr/data.py:9 to 2",
        ],
        &[(
            "root/srv/proj/detr/train.py",
            "build_loader(dataset_train, args.batch_size)",
        )],
    );
}

/// `bash run.sh` started the job with `-j 2`: the value is the command line's, and the fix
/// edits the flag where the launch script writes it. The running process keeps its argv until
/// it is restarted (the fix says `restart: job`), so the proof is the diff, the bytes after
/// apply, and rollback.
#[test]
fn a_flag_from_a_launch_script_is_fixed_in_the_script() {
    let src =
        std::fs::read_to_string(repo().join("tests/fixtures/pid/shapes/imagenet/main.py")).unwrap();
    let run_sh = "#!/bin/bash\nset -euo pipefail\n# train resnet50\npython main.py -a resnet50 \\\n    -j 2 --dummy\n";
    let job = job_tree(
        "5001",
        "python\0main.py\0-a\0resnet50\0-j\x002\0--dummy\0",
        "/home/ml/imagenet",
        &[
            ("/home/ml/imagenet/main.py", &src),
            ("/home/ml/imagenet/run.sh", run_sh),
            ("/proc/5000/cmdline", "/bin/bash\0run.sh\0"),
            (
                "/proc/5000/stat",
                "5000 (bash) S 1 1 1 0 -1 4194304 100 0 0 0 1 1 0 0 20 0 1 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            ),
        ],
    );
    // the training process's parent is the shell running run.sh
    let stat = job.dir.path().join("root/proc/5001/stat");
    let t = std::fs::read_to_string(&stat)
        .unwrap()
        .replacen(" S 1 ", " S 5000 ", 1);
    std::fs::write(&stat, &t).unwrap();
    std::fs::write(job.dir.path().join("root/proc/5001/task/5001/stat"), &t).unwrap();
    std::os::unix::fs::symlink(
        "/home/ml/imagenet",
        job.dir.path().join("root/proc/5000/cwd"),
    )
    .unwrap();
    // judged for a 16-CPU node whatever the CPUs of the machine running the test
    let values = job.p("values.yaml");
    std::fs::write(
        &values,
        "rules:\n  data.workers-too-few:\n    params: { node_cpus: 16 }\n",
    )
    .unwrap();
    let base = [
        "--pid",
        "5001",
        "--values",
        values.as_str(),
        "--only",
        "data.workers-too-few",
    ];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    for has in [
        "given as `-j 2",
        "(`-j 2` on run.sh:4)",
        "-    -j 2 --dummy",
        "+    -j 8 --dummy",
    ] {
        assert!(
            plan.stdout.contains(has),
            "plan shows `{has}`:\n{}",
            plan.stdout
        );
    }
    assert_eq!(job.state(), before, "plan changes nothing");
    let apply = job.run(&[&["apply", "--yes", "--allow", "config.set"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    let after = std::fs::read_to_string(job.p("root/home/ml/imagenet/run.sh")).unwrap();
    assert_eq!(after, run_sh.replace("-j 2", "-j 8"));
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

/// A job started by `bash launch.sh` whose line is `CUDA_LAUNCH_BLOCKING=1 python3 train.py
/// …` (issue 22, the H200 run): with `--pid` alone the env fix is planned where the launch
/// script sets the variable — the one prefix goes, the command stays byte for byte — and
/// `apply` makes it under `--root`; rollback restores every byte.
fn launched_by_script(run_sh: &str, environ: &str) -> Job {
    let job = job_tree(
        "6001",
        "python3\0train.py\0--config\0cfg.yaml\0",
        "/home/ml/bench",
        &[
            ("/home/ml/bench/train.py", "import torch\nprint('train')\n"),
            ("/home/ml/bench/launch.sh", run_sh),
            ("/proc/6001/environ", environ),
            ("/proc/6000/cmdline", "bash\0launch.sh\0"),
            (
                "/proc/6000/stat",
                "6000 (bash) S 1 1 1 0 -1 4194304 100 0 0 0 1 1 0 0 20 0 1 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            ),
        ],
    );
    let stat = job.dir.path().join("root/proc/6001/stat");
    let t = std::fs::read_to_string(&stat)
        .unwrap()
        .replacen(" S 1 ", " S 6000 ", 1);
    std::fs::write(&stat, &t).unwrap();
    std::fs::write(job.dir.path().join("root/proc/6001/task/6001/stat"), &t).unwrap();
    std::os::unix::fs::symlink("/home/ml/bench", job.dir.path().join("root/proc/6000/cwd"))
        .unwrap();
    job
}

#[test]
fn an_env_prefix_in_the_launch_script_is_removed_through_pid() {
    let run_sh = "#!/bin/bash\nset -euo pipefail\n# debugging a hang\nCUDA_LAUNCH_BLOCKING=1 python3 train.py --config cfg.yaml \\\n    2>&1 | tee train.log\n";
    let job = launched_by_script(run_sh, "PATH=/usr/bin\0CUDA_LAUNCH_BLOCKING=1\0");
    let base = ["--pid", "6001", "--only", "cuda.launch-blocking"];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    for has in [
        "unset CUDA_LAUNCH_BLOCKING in /home/ml/bench/launch.sh",
        "-CUDA_LAUNCH_BLOCKING=1 python3 train.py --config cfg.yaml \\",
        "+python3 train.py --config cfg.yaml \\",
    ] {
        assert!(
            plan.stdout.contains(has),
            "plan shows `{has}`:\n{}",
            plan.stdout
        );
    }
    assert!(!plan.stdout.contains("needs --env-file"), "{}", plan.stdout);
    assert_eq!(job.state(), before, "plan changes nothing");
    let apply = job.run(&[&["apply", "--yes"][..], &base].concat());
    // the running process keeps its environment until it is restarted (`restart: job`):
    // apply says the rule still fails until then
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert!(
        apply
            .stdout
            .contains("still fails until you restart the training job")
    );
    let after = std::fs::read_to_string(job.p("root/home/ml/bench/launch.sh")).unwrap();
    assert_eq!(
        after,
        run_sh.replace("CUDA_LAUNCH_BLOCKING=1 python3", "python3"),
        "{}\n{}",
        apply.stdout,
        apply.stderr
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

/// The variable is not in the launch script: the job has it from the shell it was started
/// in, which gpufix cannot see. No change; a note with the command line that starts the job
/// without it.
#[test]
fn an_env_value_from_the_users_shell_says_how_to_start_without_it() {
    let run_sh = "#!/bin/bash\npython3 train.py --config cfg.yaml\n";
    let job = launched_by_script(run_sh, "PATH=/usr/bin\0CUDA_LAUNCH_BLOCKING=1\0");
    let before = job.state();
    let plan = job.run(&["plan", "--pid", "6001", "--only", "cuda.launch-blocking"]);
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("is left to you: PID 6001 has CUDA_LAUNCH_BLOCKING from the environment it was started in, which gpufix cannot see (the launch script /home/ml/bench/launch.sh does not set it): start the job without it: `env -u CUDA_LAUNCH_BLOCKING bash launch.sh`"),
        "{}",
        plan.stdout
    );
    assert!(
        !plan.stdout.contains("cannot be planned"),
        "{}",
        plan.stdout
    );
    assert_eq!(job.state(), before);
}

/// Set in two places in the launch script: refused with where, nothing planned.
#[test]
fn an_env_value_set_twice_in_the_launch_script_is_left_to_the_person() {
    let run_sh = "#!/bin/bash\nexport CUDA_LAUNCH_BLOCKING=1\nCUDA_LAUNCH_BLOCKING=1 python3 train.py --config cfg.yaml\n";
    let job = launched_by_script(run_sh, "CUDA_LAUNCH_BLOCKING=1\0");
    let plan = job.run(&["plan", "--pid", "6001", "--only", "cuda.launch-blocking"]);
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("CUDA_LAUNCH_BLOCKING is set in 2 places (line 2 (an export/declare), line 3 (a prefix of a command `python3`))"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("@@"), "no diff: {}", plan.stdout);
}

/// The launch script sources a file that exports the variable: the edit is made there.
#[test]
fn an_env_value_from_a_sourced_file_is_removed_there() {
    let run_sh = "#!/bin/bash\nsource ./env.sh\npython3 train.py --config cfg.yaml\n";
    let env_sh = "# site settings\nexport OMP_NUM_THREADS=4\nexport CUDA_LAUNCH_BLOCKING=1\n";
    let job = launched_by_script(run_sh, "CUDA_LAUNCH_BLOCKING=1\0OMP_NUM_THREADS=4\0");
    std::fs::write(job.p("root/home/ml/bench/env.sh"), env_sh).unwrap();
    let base = ["--pid", "6001", "--only", "cuda.launch-blocking"];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout
            .contains("unset CUDA_LAUNCH_BLOCKING in /home/ml/bench/env.sh"),
        "{}",
        plan.stdout
    );
    let apply = job.run(&[&["apply", "--yes"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert_eq!(
        std::fs::read_to_string(job.p("root/home/ml/bench/env.sh")).unwrap(),
        "# site settings\nexport OMP_NUM_THREADS=4\n"
    );
    assert_eq!(
        std::fs::read_to_string(job.p("root/home/ml/bench/launch.sh")).unwrap(),
        run_sh
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

/// Issue 26: a plan made from a running job stays applicable after the job stops. `plan --pid
/// -o plan.json` records what it learned from the process (the file, its owner, its
/// fingerprint, the rule's finding); the process is then taken out of the recorded /proc (the
/// job stopped), and `apply plan.json` re-checks the file, not the process: the edit is made,
/// and the output says which facts came from the job and were not observed again. A file that
/// changed since the plan is refused by name, and nothing changes.
fn plan_then_stop_then_apply(job: &Job, pids: &[&str], file: &str, before: &str, after: &str) {
    let values = job.p("values.yaml");
    std::fs::write(
        &values,
        "rules:\n  data.workers-too-few:\n    params: { node_cpus: 16 }\n",
    )
    .unwrap();
    let plan_json = job.p("plan.json");
    let plan = job.run(&[
        "plan",
        "--pid",
        pids[0],
        "--values",
        &values,
        "--only",
        "data.workers-too-few",
        "-o",
        &plan_json,
    ]);
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    let pf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_json).unwrap()).unwrap();
    let target = format!("/{}", file.trim_start_matches("root/"));
    assert_eq!(pf["job"]["files"][0]["path"], target.as_str(), "{pf:#}");
    // the job stops: its /proc entries are gone
    let saved = job.p("saved-proc");
    std::fs::create_dir_all(&saved).unwrap();
    for pid in pids {
        std::fs::rename(job.p(&format!("root/proc/{pid}")), format!("{saved}/{pid}")).unwrap();
    }
    let original = std::fs::read_to_string(job.p(file)).unwrap();
    assert!(original.contains(before), "{original}");

    // a file changed since the plan: refused by name, nothing changed
    let edited = original.replacen("#", "# edited by hand\n#", 1);
    std::fs::write(job.p(file), &edited).unwrap();
    let stale = job.run(&["apply", &plan_json, "--yes"]);
    assert_eq!(stale.code, 1, "{}\n{}", stale.stdout, stale.stderr);
    assert!(
        stale.stderr.contains("refusing a stale plan")
            && stale
                .stderr
                .contains(&format!("`{target}` changed since the plan was made")),
        "{}",
        stale.stderr
    );
    assert_eq!(std::fs::read_to_string(job.p(file)).unwrap(), edited);
    std::fs::write(job.p(file), &original).unwrap();

    // as it was: the edit is made without the process
    let apply = job.run(&["apply", &plan_json, "--yes"]);
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    for has in [
        format!("the job the plan was made from (pid {}", pids[0]),
        "is not running; from it, and not observed again:".to_string(),
        "data.workers-too-few: num_workers is 0".to_string(),
        format!("re-checked now: {target} (unchanged since the plan)"),
        format!(
            "note: the job (pid {}) had stopped: start it again",
            pids[0]
        ),
    ] {
        assert!(
            apply.stdout.contains(&has),
            "apply says `{has}`:\n{}",
            apply.stdout
        );
    }
    assert_eq!(
        std::fs::read_to_string(job.p(file)).unwrap(),
        original.replacen(before, after, 1)
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(std::fs::read_to_string(job.p(file)).unwrap(), original);
}

#[test]
fn a_plan_of_a_yaml_config_is_applied_after_the_job_stopped() {
    let job = job_tree(
        "7001",
        "python3\0train.py\0--config\0config.yaml\0",
        "/home/ml/bench",
        &[
            (
                "/home/ml/bench/train.py",
                "import yaml, torch\nfrom torch.utils.data import DataLoader\ncfg = yaml.safe_load(open(\"config.yaml\"))\nloader = DataLoader(ds, batch_size=cfg[\"data\"][\"batch_size\"], num_workers=cfg[\"data\"][\"num_workers\"])\n",
            ),
            (
                "/home/ml/bench/config.yaml",
                "# the H200 bench job\ndata:\n  num_workers: 0\n  batch_size: 128\ntrain:\n  max_seconds: 45\n",
            ),
        ],
    );
    plan_then_stop_then_apply(
        &job,
        &["7001"],
        "root/home/ml/bench/config.yaml",
        "num_workers: 0",
        "num_workers: 8",
    );
}

#[test]
fn a_plan_of_a_launch_script_flag_is_applied_after_the_job_stopped() {
    let src =
        std::fs::read_to_string(repo().join("tests/fixtures/pid/shapes/hf_trainer/run_clm.py"))
            .unwrap();
    let job = job_tree(
        "8001",
        "python3\0run_clm.py\0--model_name_or_path\0gpt2\0--do_train\0--dataloader_num_workers\x000\0--output_dir\0/tmp/out\0",
        "/workspace/lm",
        &[
            ("/workspace/lm/run_clm.py", &src),
            (
                "/workspace/lm/launch.sh",
                "#!/bin/bash\n# fine-tune gpt2\npython3 run_clm.py --model_name_or_path gpt2 --do_train \\\n    --dataloader_num_workers 0 --output_dir /tmp/out\n",
            ),
            ("/proc/8000/cmdline", "bash\0launch.sh\0"),
            (
                "/proc/8000/stat",
                "8000 (bash) S 1 1 1 0 -1 4194304 100 0 0 0 1 1 0 0 20 0 1 0 90 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            ),
        ],
    );
    // the training process's parent is the shell running launch.sh
    for f in ["root/proc/8001/stat", "root/proc/8001/task/8001/stat"] {
        let t = std::fs::read_to_string(job.p(f))
            .unwrap()
            .replacen(" S 1 ", " S 8000 ", 1);
        std::fs::write(job.p(f), t).unwrap();
    }
    std::os::unix::fs::symlink("/workspace/lm", job.dir.path().join("root/proc/8000/cwd")).unwrap();
    plan_then_stop_then_apply(
        &job,
        &["8001", "8000"],
        "root/workspace/lm/launch.sh",
        "--dataloader_num_workers 0",
        "--dataloader_num_workers 2",
    );
}

/// `apply --pid PID` while the job runs makes the change and says the job must be restarted.
#[test]
fn apply_by_pid_while_the_job_runs_says_to_restart_it() {
    let job = job_tree(
        "7101",
        "python3\0train.py\0--config\0config.yaml\0",
        "/home/ml/bench",
        &[
            ("/home/ml/bench/train.py", "import torch\n"),
            ("/home/ml/bench/config.yaml", "data:\n  num_workers: 0\n"),
        ],
    );
    let values = job.p("values.yaml");
    std::fs::write(
        &values,
        "rules:\n  data.workers-too-few:\n    params: { node_cpus: 16 }\n",
    )
    .unwrap();
    let apply = job.run(&[
        "apply",
        "--yes",
        "--pid",
        "7101",
        "--values",
        &values,
        "--only",
        "data.workers-too-few",
    ]);
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert!(
        apply.stdout.contains(
            "note: the job (pid 7101) is still running with the old settings: restart it for the change to take effect"
        ),
        "{}",
        apply.stdout
    );
    assert_eq!(
        std::fs::read_to_string(job.p("root/home/ml/bench/config.yaml")).unwrap(),
        "data:\n  num_workers: 8\n"
    );
}

/// A job (PID 7001, `python3 train.py`) whose parent is PID 1: started by a service manager,
/// not a shell; `files` are laid under the root.
fn started_by_manager(environ: &str, files: &[(&str, &str)]) -> Job {
    let mut all: Vec<(&str, &str)> = vec![
        ("/opt/train/train.py", "import torch\nprint('train')\n"),
        ("/proc/7001/environ", environ),
    ];
    all.extend_from_slice(files);
    job_tree(
        "7001",
        "/usr/bin/python3\0/opt/train/train.py\0",
        "/opt/train",
        &all,
    )
}

/// Issue 22 item 5: a job in a systemd service has the variable from its unit's
/// `Environment=` line: the plan drops that one assignment from the line (the other stays,
/// quoting kept), says `daemon-reload` and a restart are needed; apply -> rollback byte-exact.
#[test]
fn an_env_value_from_a_systemd_unit_is_removed_from_its_environment_line() {
    let unit = "[Unit]\nDescription=training\n\n[Service]\nUser=ml\nEnvironment=\"NCCL_DEBUG=INFO\" CUDA_LAUNCH_BLOCKING=1\nExecStart=/usr/bin/python3 /opt/train/train.py\n\n[Install]\nWantedBy=multi-user.target\n";
    let job = started_by_manager(
        "PATH=/usr/bin\0NCCL_DEBUG=INFO\0CUDA_LAUNCH_BLOCKING=1\0",
        &[
            ("/proc/7001/cgroup", "0::/system.slice/train.service\n"),
            ("/etc/systemd/system/train.service", unit),
        ],
    );
    let base = ["--pid", "7001", "--only", "cuda.launch-blocking"];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    for has in [
        "unset CUDA_LAUNCH_BLOCKING in /etc/systemd/system/train.service (then `systemctl daemon-reload` and `systemctl restart train.service`)",
        "-Environment=\"NCCL_DEBUG=INFO\" CUDA_LAUNCH_BLOCKING=1",
        "+Environment=\"NCCL_DEBUG=INFO\"",
    ] {
        assert!(
            plan.stdout.contains(has),
            "plan shows `{has}`:\n{}",
            plan.stdout
        );
    }
    assert_eq!(job.state(), before, "plan changes nothing");
    let apply = job.run(&[&["apply", "--yes"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert_eq!(
        std::fs::read_to_string(job.p("root/etc/systemd/system/train.service")).unwrap(),
        unit.replace(" CUDA_LAUNCH_BLOCKING=1", "")
    );
    // applying again: the unit no longer sets it, so nothing is planned there
    let again = job.run(&[&["plan"][..], &base].concat());
    assert!(!again.stdout.contains("@@"), "{}", again.stdout);
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

/// The unit reads the variable from its `EnvironmentFile=`: that file is edited; a vendor unit
/// (under /usr/lib) is left to the person with the drop-in that unsets it.
#[test]
fn an_env_value_from_a_units_environment_file_or_vendor_unit() {
    let unit = "[Service]\nEnvironmentFile=-/etc/default/train\nExecStart=/usr/bin/python3 /opt/train/train.py\n";
    let env = "# training defaults\nOMP_NUM_THREADS=8\nCUDA_LAUNCH_BLOCKING=1\n";
    let job = started_by_manager(
        "CUDA_LAUNCH_BLOCKING=1\0OMP_NUM_THREADS=8\0",
        &[
            ("/proc/7001/cgroup", "0::/system.slice/train.service\n"),
            ("/etc/systemd/system/train.service", unit),
            ("/etc/default/train", env),
        ],
    );
    let base = ["--pid", "7001", "--only", "cuda.launch-blocking"];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert!(
        plan.stdout
            .contains("unset CUDA_LAUNCH_BLOCKING in /etc/default/train"),
        "{}",
        plan.stdout
    );
    let apply = job.run(&[&["apply", "--yes"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert_eq!(
        std::fs::read_to_string(job.p("root/etc/default/train")).unwrap(),
        "# training defaults\nOMP_NUM_THREADS=8\n"
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");

    let vendor = "[Service]\nEnvironment=CUDA_LAUNCH_BLOCKING=1\nExecStart=/usr/bin/python3 /opt/train/train.py\n";
    let job = started_by_manager(
        "CUDA_LAUNCH_BLOCKING=1\0",
        &[
            ("/proc/7001/cgroup", "0::/system.slice/train@2.service\n"),
            ("/usr/lib/systemd/system/train@.service", vendor),
        ],
    );
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert!(
        plan.stdout.contains("is left to you: CUDA_LAUNCH_BLOCKING is set by train@2.service in /usr/lib/systemd/system/train@.service, which gpufix does not edit"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains(
            "`UnsetEnvironment=CUDA_LAUNCH_BLOCKING` in /etc/systemd/system/train@2.service.d/"
        ),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("@@"), "no diff: {}", plan.stdout);
    assert_eq!(job.state(), before);
}

/// A Slurm batch job: slurmd runs a copy of the batch script
/// (`/var/spool/slurmd/job00042/slurm_script`); the script as submitted
/// (`$SLURM_SUBMIT_DIR/$SLURM_JOB_NAME`, the same bytes) is edited as the job's owner — one
/// entry of its `#SBATCH --export=` list goes — and the plan says to resubmit; the copy is
/// never touched.
fn slurm_job(submitted: &str, copy: &str) -> Job {
    let job = job_tree(
        "8001",
        "python3\0train.py\0",
        "/home/ml/exp",
        &[
            ("/home/ml/exp/train.py", "import torch\nprint('train')\n"),
            ("/home/ml/exp/train.sbatch", submitted),
            ("/var/spool/slurmd/job00042/slurm_script", copy),
            (
                "/proc/8001/environ",
                "SLURM_JOB_ID=42\0SLURM_SUBMIT_DIR=/home/ml/exp\0SLURM_JOB_NAME=train.sbatch\0CUDA_LAUNCH_BLOCKING=1\0NCCL_DEBUG=INFO\0",
            ),
            (
                "/proc/8000/cmdline",
                "/bin/bash\0/var/spool/slurmd/job00042/slurm_script\0",
            ),
            (
                "/proc/8000/stat",
                "8000 (slurm_script) S 1 1 1 0 -1 4194304 100 0 0 0 1 1 0 0 20 0 1 0 100 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            ),
        ],
    );
    let stat = job.dir.path().join("root/proc/8001/stat");
    let t = std::fs::read_to_string(&stat)
        .unwrap()
        .replacen(" S 1 ", " S 8000 ", 1);
    std::fs::write(&stat, &t).unwrap();
    std::fs::write(job.dir.path().join("root/proc/8001/task/8001/stat"), &t).unwrap();
    std::os::unix::fs::symlink("/home/ml/exp", job.dir.path().join("root/proc/8000/cwd")).unwrap();
    job
}

#[test]
fn an_env_value_from_a_slurm_export_list_is_removed_from_the_submitted_script() {
    let script = "#!/bin/bash\n#SBATCH --job-name=train.sbatch\n#SBATCH --gres=gpu:8\n#SBATCH --export=ALL,CUDA_LAUNCH_BLOCKING=1,NCCL_DEBUG=INFO  # debugging\n\nsrun python3 train.py\n";
    let job = slurm_job(script, script);
    let base = ["--pid", "8001", "--only", "cuda.launch-blocking"];
    let before = job.state();
    let plan = job.run(&[&["plan"][..], &base].concat());
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    for has in [
        "unset CUDA_LAUNCH_BLOCKING in /home/ml/exp/train.sbatch (a Slurm batch script: the running job keeps its environment; resubmit it with sbatch)",
        "-#SBATCH --export=ALL,CUDA_LAUNCH_BLOCKING=1,NCCL_DEBUG=INFO  # debugging",
        "+#SBATCH --export=ALL,NCCL_DEBUG=INFO  # debugging",
    ] {
        assert!(
            plan.stdout.contains(has),
            "plan shows `{has}`:\n{}",
            plan.stdout
        );
    }
    assert!(
        !plan.stdout.contains("slurm_script (then"),
        "{}",
        plan.stdout
    );
    let apply = job.run(&[&["apply", "--yes"][..], &base].concat());
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert_eq!(
        std::fs::read_to_string(job.p("root/home/ml/exp/train.sbatch")).unwrap(),
        script.replace("CUDA_LAUNCH_BLOCKING=1,", "")
    );
    assert_eq!(
        std::fs::read_to_string(job.p("root/var/spool/slurmd/job00042/slurm_script")).unwrap(),
        script,
        "slurmd's copy is never edited"
    );
    let rb = job.rollback();
    assert_eq!(rb.code, 0, "{}\n{}", rb.stdout, rb.stderr);
    assert_eq!(job.state(), before, "rollback restores every byte");
}

/// The submitted script was changed after submission (it is not what the job runs): nothing is
/// edited; the note says where the running copy sets the value and to resubmit.
#[test]
fn a_slurm_script_changed_since_submission_is_left_to_the_person() {
    let copy =
        "#!/bin/bash\n#SBATCH --gres=gpu:8\nexport CUDA_LAUNCH_BLOCKING=1\nsrun python3 train.py\n";
    let now = copy.replace("gpu:8", "gpu:4");
    let job = slurm_job(&now, copy);
    let before = job.state();
    let plan = job.run(&["plan", "--pid", "8001", "--only", "cuda.launch-blocking"]);
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("is left to you: PID 8001 is Slurm job 42; the script it runs sets CUDA_LAUNCH_BLOCKING on line 3, but gpufix edits the batch script as submitted, never slurmd's copy, and /home/ml/exp/train.sbatch is not the script the job runs (it differs from slurmd's copy /var/spool/slurmd/job00042/slurm_script)"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("@@"), "no diff: {}", plan.stdout);
    assert_eq!(job.state(), before);
}
