use super::*;
use crate::host::real::RealHost;
use crate::host::{Field, GpuReading};
use std::path::PathBuf;

fn sv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn schema_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/snapshot.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).expect("the snapshot schema compiles")
}

fn assert_valid(v: &serde_json::Value) {
    let errs: Vec<String> = schema_validator()
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errs.is_empty(),
        "snapshot does not match its schema:\n{}",
        errs.join("\n")
    );
}

/// Record a tempdir-rooted live host, write the snapshot to disk, replay it.
#[test]
fn recording_replays_every_answer_in_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc/pressure")).unwrap();
    std::fs::write(dir.path().join("proc/modules"), "nvidia 1 - - Live 0x0\n").unwrap();
    std::fs::write(dir.path().join("proc/bin"), [0xff, 0x00, 0x41]).unwrap();
    std::os::unix::fs::symlink("../dm-0", dir.path().join("proc/link")).unwrap();
    let live: Arc<dyn Host> = Arc::new(RealHost::new(Some(dir.path().to_path_buf())));
    let rec = RecordingHost::new(live);
    let modules_first = rec.read_file("/proc/modules").unwrap();
    std::fs::write(
        dir.path().join("proc/modules"),
        "nvidia_uvm 2 - - Live 0x0\n",
    )
    .unwrap();
    let modules_second = rec.read_file("/proc/modules").unwrap();
    let bin = rec.read_file("/proc/bin").unwrap();
    let missing = rec.read_file("/proc/nope").unwrap_err();
    let dirs = rec.read_dir("/proc").unwrap();
    let meta = rec.metadata("/proc/link").unwrap();
    let link = rec.read_link("/proc/link").unwrap();
    let echo = rec
        .run(&sv(&["echo", "hi"]), Duration::from_secs(5))
        .unwrap();
    let absent = rec
        .run(&sv(&["gpufix-absent-tool"]), Duration::from_secs(5))
        .unwrap_err();
    let nvml = rec.nvml();
    let now = rec.now();
    let cpus = rec.cpu_count();
    let snap = rec.into_snapshot();

    let json: serde_json::Value = serde_json::from_str(&snap.to_json()).unwrap();
    assert_valid(&json);
    assert_eq!(
        json["files"]["/proc/bin"][0],
        serde_json::json!({"hex": "ff0041"})
    );
    assert_eq!(json["files"]["/proc/nope"][0]["error"]["kind"], "not-found");

    let file = dir.path().join("snap.json");
    std::fs::write(&file, snap.to_json()).unwrap();
    let h = SnapshotHost::load(&file).unwrap();
    assert_eq!(h.describe(), "snapshot snap.json");
    assert!(!h.is_live());
    assert_eq!(h.read_file("/proc/modules").unwrap(), modules_first);
    assert_eq!(h.read_file("/proc/modules").unwrap(), modules_second);
    // Past the end, the last answer repeats.
    assert_eq!(h.read_file("/proc/modules").unwrap(), modules_second);
    assert_eq!(h.read_file("/proc/bin").unwrap(), bin);
    let e = h.read_file("/proc/nope").unwrap_err();
    assert_eq!(
        (e.kind(), e.to_string()),
        (missing.kind(), missing.to_string())
    );
    assert_eq!(h.read_dir("/proc").unwrap(), dirs);
    assert_eq!(h.metadata("/proc/link").unwrap(), meta);
    assert_eq!(meta.kind, "symlink");
    assert_eq!(h.read_link("/proc/link").unwrap(), link);
    assert_eq!(h.run(&sv(&["echo", "hi"]), Duration::ZERO).unwrap(), echo);
    assert_eq!(
        h.run(&sv(&["gpufix-absent-tool"]), Duration::ZERO)
            .unwrap_err()
            .kind(),
        absent.kind()
    );
    // an error replays as its text (the variants callers branch on are read back: see
    // `host::error`); NVML's own init failure has no caller that tells it apart
    let text = |r: Result<_, crate::host::HostError>| r.map_err(|e| e.to_string());
    assert_eq!(text(h.nvml()), text(nvml));
    assert_eq!(h.now(), now);
    assert_eq!(h.cpu_count(), cpus);
    assert_eq!(h.env(), std::env::vars().collect::<BTreeMap<_, _>>());
}

#[test]
fn unrecorded_keys_answer_not_found_and_nvml_says_it_was_not_recorded() {
    let h = SnapshotHost::empty();
    let e = h.read_file("/etc/fstab").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert_eq!(e.to_string(), "not in the snapshot");
    assert_eq!(
        h.run(&sv(&["nvcc"]), Duration::ZERO)
            .unwrap_err()
            .to_string(),
        NOT_RECORDED
    );
    let not_recorded = crate::host::HostError::NotRecorded {
        what: "NVML".into(),
    };
    assert_eq!(h.nvml(), Err(not_recorded.clone()));
    assert_eq!(h.nvml_sample(), Err(not_recorded.clone()));
    assert_eq!(
        not_recorded.to_string(),
        "NVML was not recorded in this snapshot"
    );
    let t = std::time::Instant::now();
    h.sleep(Duration::from_secs(30));
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn injection_replaces_recorded_answers() {
    let mut h = SnapshotHost::from_snapshot(fixture_snapshot());
    h.set_file("/proc/modules", "nvidia 1 - - Live 0x0\n");
    h.edit_nvml(|r| r.gpus[0].power_limit_mw = Field::Ok(350_000));
    h.set_command(
        &["nvcc", "--version"],
        CommandOutput {
            status: Some(0),
            stdout: "release 12.2".into(),
            stderr: String::new(),
            timed_out: false,
        },
    );
    assert_eq!(
        h.read_file("/proc/modules").unwrap(),
        b"nvidia 1 - - Live 0x0\n"
    );
    assert_eq!(h.nvml().unwrap().gpus[0].power_limit_mw, Field::Ok(350_000));
    assert_eq!(
        h.run(&sv(&["nvcc", "--version"]), Duration::ZERO)
            .unwrap()
            .stdout,
        "release 12.2"
    );
    // Samples fall back to the reading when none were recorded.
    h.set_samples(vec![]);
    assert_eq!(h.nvml_sample().unwrap()[0].power_usage_mw, Field::Ok(78663));
    h.set_nvml(Err("NVML cannot be loaded: x".into()));
    assert_eq!(
        h.nvml_sample().unwrap_err().to_string(),
        "NVML cannot be loaded: x"
    );
}

#[test]
fn rejects_other_versions_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.json");
    let mut s = Snapshot::new("x");
    s.version = 2;
    std::fs::write(&f, s.to_json()).unwrap();
    let e = SnapshotHost::load(&f).err().unwrap().to_string();
    assert!(
        e.contains("has version 2, this gpufix reads version 1"),
        "{e}"
    );
    std::fs::write(&f, "{\"version\": 1}").unwrap();
    let e = format!("{:#}", SnapshotHost::load(&f).err().unwrap());
    assert!(
        e.contains("is not a gpufix snapshot") && e.contains("gpufix_version"),
        "{e}"
    );
}

// ---- the recorded H200 fixture ----

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts")
}

fn fixture_snapshot() -> Snapshot {
    Snapshot::load(&fixture_dir().join("h200-vm.snapshot.json")).unwrap()
}

#[test]
fn h200_fixture_matches_the_schema() {
    let text = std::fs::read_to_string(fixture_dir().join("h200-vm.snapshot.json")).unwrap();
    assert_valid(&serde_json::from_str(&text).unwrap());
}

#[test]
fn schema_rejects_what_replay_would_misread() {
    let text = std::fs::read_to_string(fixture_dir().join("h200-vm.snapshot.json")).unwrap();
    let good: serde_json::Value = serde_json::from_str(&text).unwrap();
    let v = schema_validator();
    let mut bad = good.clone();
    bad["nvml"][0]["ok"]["gpus"][0]["temperature_c"] = serde_json::json!(42);
    assert!(!v.is_valid(&bad), "a bare value where a Field belongs");
    let mut bad = good.clone();
    bad["files"]["/etc/fstab"] = serde_json::json!([{"error": {"kind": "gone", "message": "x"}}]);
    assert!(!v.is_valid(&bad), "an unknown error kind");
    let mut bad = good;
    bad["extra"] = serde_json::json!(1);
    assert!(!v.is_valid(&bad), "an unknown top-level key");
}

#[test]
fn h200_fixture_is_up_to_date() {
    let committed = std::fs::read_to_string(fixture_dir().join("h200-vm.snapshot.json")).unwrap();
    let fresh = gen_h200::build().to_json() + "\n";
    assert!(
        committed == fresh,
        "tests/fixtures/hosts/h200-vm.snapshot.json is stale: run \
             `cargo test --lib -- --ignored regenerate_h200_snapshot` to regenerate"
    );
}

/// Regenerates tests/fixtures/hosts/h200-vm.snapshot.json from the recorded tree.
#[test]
#[ignore]
fn regenerate_h200_snapshot() {
    let s = gen_h200::build();
    std::fs::write(
        fixture_dir().join("h200-vm.snapshot.json"),
        s.to_json() + "\n",
    )
    .unwrap();
}

#[test]
fn h200_fixture_reads_as_the_healthy_host_it_was() {
    let h = SnapshotHost::from_snapshot(fixture_snapshot());
    let r = h.nvml().unwrap();
    assert_eq!(r.cuda_driver_version, Field::Ok(13000));
    let g: &GpuReading = &r.gpus[0];
    assert_eq!(g.name, Field::Ok("NVIDIA H200".to_string()));
    assert_eq!(
        g.clocks_event_reasons,
        Field::Ok(vec!["GPU_IDLE".to_string()])
    );
    assert_eq!(g.power_enforced_limit_mw, Field::Ok(700_000));
    assert_eq!(g.clock_mem_max, Field::Ok(3201));
    assert_eq!(g.remapped_rows_pending, Field::Ok(false));
    assert_eq!(g.retired_pages_count, Field::NotSupported);
    assert_eq!(g.nvlinks, Field::NotSupported);
    assert_eq!(g.processes, Field::Ok(vec![]));
    assert_eq!(h.nvml_sample().unwrap()[0].utilization_gpu, Field::Ok(0));
    let modules = String::from_utf8(h.read_file("/proc/modules").unwrap()).unwrap();
    assert!(modules.contains("nvidia_uvm"));
    assert_eq!(h.read_file("/proc/sys/vm/swappiness").unwrap(), b"60\n");
    assert_eq!(h.metadata("/dev/nvidia-uvm").unwrap().mode, 0o020666);
    assert!(
        h.read_dir("/sys/block")
            .unwrap()
            .contains(&"vda".to_string())
    );
    let nvcc = h.run(&sv(&["nvcc", "--version"]), Duration::ZERO).unwrap();
    assert!(nvcc.stdout.contains("release 13.0, V13.0.88"));
    assert_eq!(h.cpu_count(), 16);
    assert_eq!(h.env()["CUDA_HOME"], "/usr/local/cuda");
}

/// Every probe kind on the recorded host: values where the host had the data, and the
/// healthy readings the catalog names (nvidia_uvm loaded, fstab empty, 700 W of 700 W,
/// only GPU_IDLE, no NVLink on a PCIe card).
#[test]
fn every_probe_runs_on_the_h200_fixture() {
    use crate::probes::{Inputs, PROBES, ProbeCtx, ProbeOutcome};
    use serde_json::{Value, json};
    let h = SnapshotHost::from_snapshot(fixture_snapshot());
    let inputs = Inputs::default();
    let ctx = ProbeCtx {
        host: &h,
        inputs: &inputs,
        sample: Duration::from_secs(1),
        deadline: Duration::MAX,
    };
    let params = |name: &str| -> serde_json::Map<String, Value> {
        let p = match name {
            "mounts" | "diskstats" => json!({"path": "/home/user/data"}),
            "fstab" => json!({"mount_point": "/"}),
            "dir" => json!({"path": "/sys/block"}),
            "sysfs" => json!({"path": "/sys/kernel/mm/transparent_hugepage/enabled"}),
            "file" => json!({"path": "/etc/os-release", "parse": "dotenv"}),
            "command" => {
                json!({"argv": ["nvcc", "--version"], "regex": "release (?P<v>[0-9.]+)"})
            }
            _ => json!({}),
        };
        p.as_object().unwrap().clone()
    };
    let mut got = BTreeMap::new();
    for p in PROBES {
        let errs = crate::probes::check_params(*p, &params(p.name()));
        assert!(errs.is_empty(), "{errs:?}");
        got.insert(p.name(), p.run(&params(p.name()), &ctx));
    }
    let v = |name: &str| match &got[name] {
        ProbeOutcome::Value(v) => v.clone(),
        other => panic!("`{name}` gave {other:?}"),
    };
    let nvml = v("nvml");
    assert_eq!(nvml["available"], json!(true));
    assert_eq!(nvml["cuda_driver_version_str"], json!("13.0"));
    let g = &nvml["gpus"][0];
    assert_eq!(g["power_enforced_limit_w"], json!(700.0));
    assert_eq!(g["power_default_limit_w"], json!(700.0));
    assert_eq!(g["clocks_event_reasons"], json!(["GPU_IDLE"]));
    assert_eq!(g["nvlink_supported"], json!(false));
    assert_eq!(g["memory_total_mib"], json!(143771));
    assert_eq!(
        nvml["unavailable"],
        json!({
            "gpus[0].temperature_max_operating_c": "not supported by this GPU or driver",
            "gpus[0].retired_pages_pending": "not supported by this GPU or driver",
            "gpus[0].retired_pages_count": "not supported by this GPU or driver",
            "gpus[0].nvlinks": "not supported by this GPU or driver",
        })
    );
    let smp = v("nvml.sample");
    assert_eq!(smp["gpus"][0]["utilization_gpu"]["max"], json!(0.0));
    assert_eq!(
        smp["gpus"][0]["event_reason_fraction"],
        json!({"GPU_IDLE": 1.0})
    );
    assert_eq!(
        v("kernel.modules")["loaded"],
        json!(["nvidia_uvm", "nvidia"])
    );
    assert_eq!(v("mounts")["for_path"]["fstype"], json!("ext4"));
    assert_eq!(v("fstab")["empty"], json!(true));
    assert!(v("fstab").get("entry").is_none());
    let disk = v("diskstats");
    assert_eq!(disk["for_path"]["device"], json!("vda"));
    // One recorded reading, so no IO happened over the replayed window.
    assert_eq!(disk["for_path"]["util_pct"], json!(0.0));
    assert_eq!(v("pressure")["io"]["some"]["avg10"], json!(3.15));
    assert_eq!(v("sysfs")["selected"], json!("madvise"));
    assert_eq!(v("file")["vars"]["VERSION_ID"], json!("24.04"));
    assert_eq!(v("env")["vars"]["CUDA_VERSION"], json!("13.0.2"));
    assert_eq!(v("command")["captures"]["v"], json!("13.0"));
    assert_eq!(
        got["process"],
        ProbeOutcome::NotApplicable("needs --pid or --job".into())
    );
}

/// Builds the H200 snapshot from `tests/fixtures/hosts/h200-vm`: the root tree as files and
/// directory listings, `commands/` as command outputs, and an NVML reading.
mod gen_h200 {
    use super::super::*;
    use crate::host::{Field, GpuReading, NvmlReading};
    use crate::vocab::nvml::ProcessMem;
    use regex::Regex;
    use std::path::{Path, PathBuf};

    fn tree() -> PathBuf {
        super::fixture_dir().join("h200-vm")
    }

    fn cmd(name: &str) -> String {
        std::fs::read_to_string(tree().join("commands").join(name)).unwrap()
    }

    /// Which argv printed each file under commands/ (the file name is the command with
    /// spaces as `_`). `--query-compute-apps` was recorded without its full argv; this
    /// is the query whose CSV header the file holds.
    const COMMANDS: &[(&str, &[&str])] = &[
        ("nvcc_--version.txt", &["nvcc", "--version"]),
        ("nvidia-smi.txt", &["nvidia-smi"]),
        ("nvidia-smi_-q.txt", &["nvidia-smi", "-q"]),
        ("nvidia-smi_-q_-x.xml", &["nvidia-smi", "-q", "-x"]),
        (
            "nvidia-smi_-q_-d_CLOCK,SUPPORTED_CLOCKS,PERFORMANCE.txt",
            &[
                "nvidia-smi",
                "-q",
                "-d",
                "CLOCK,SUPPORTED_CLOCKS,PERFORMANCE",
            ],
        ),
        (
            "nvidia-smi_-q_-d_TEMPERATURE,POWER.txt",
            &["nvidia-smi", "-q", "-d", "TEMPERATURE,POWER"],
        ),
        ("nvidia-smi_topo_-m.txt", &["nvidia-smi", "topo", "-m"]),
        (
            "nvidia-smi_dmon_-s_u_-d_1_-c_3.txt",
            &["nvidia-smi", "dmon", "-s", "u", "-d", "1", "-c", "3"],
        ),
        (
            "nvidia-smi_--query-compute-apps.txt",
            &[
                "nvidia-smi",
                "--query-compute-apps=pid,used_gpu_memory,process_name",
                "--format=csv",
            ],
        ),
        (
            "python3_-m_torch.utils.collect_env.txt",
            &["python3", "-m", "torch.utils.collect_env"],
        ),
    ];

    pub fn build() -> Snapshot {
        let mut s = Snapshot::new(
            "one NVIDIA H200 in a KVM VM, driver 580.159.04, CUDA 13.0, healthy and idle \
                 (tests/fixtures/hosts/README.md)",
        );
        s.gpufix_version = "0.1.0".into(); // fixed, so the file only changes with its inputs
        s.recorded_at = "2026-12-02T10:20:40Z".into(); // nvidia-smi -q's timestamp
        s.now = vec![1_796_206_840.0];
        s.cpu_count = Some(16); // collect_env: "CPU(s): 16"
        walk(&tree(), "", &mut s);
        // sysctl_selected.txt holds `sysctl` output for keys the tree lacks; as /proc/sys
        // files they are what the sysfs probe reads.
        for line in cmd("sysctl_selected.txt").lines() {
            if let Some((k, v)) = line.split_once(" = ") {
                let path = format!("/proc/sys/{}", k.trim().replace('.', "/"));
                s.files.entry(path).or_insert_with(|| {
                    vec![Recorded::Ok(Content::Text(format!("{}\n", v.trim())))]
                });
            }
        }
        dev_nodes(&mut s);
        for (file, argv) in COMMANDS {
            let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
            s.commands.insert(
                command_key(&argv),
                vec![Recorded::Ok(CommandOutput {
                    status: Some(0),
                    stdout: cmd(file),
                    stderr: String::new(),
                    timed_out: false,
                })],
            );
        }
        s.env = cmd("env_gpu.txt")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let reading = nvml_reading();
        // nvidia-smi dmon's three utilization samples; the other sampled values are the
        // reading's (the host was idle and steady).
        let dmon = Regex::new(r"(?m)^\s+0\s+(\d+)\s+(\d+)\s").unwrap();
        for c in dmon.captures_iter(&cmd("nvidia-smi_dmon_-s_u_-d_1_-c_3.txt")) {
            let mut smp = reading.gpus[0].sample();
            smp.utilization_gpu = Field::Ok(c[1].parse().unwrap());
            smp.utilization_memory = Field::Ok(c[2].parse().unwrap());
            s.nvml_samples.push(NvmlRecord::Ok(vec![smp]));
        }
        assert_eq!(s.nvml_samples.len(), 3);
        s.nvml = vec![NvmlRecord::Ok(reading)];
        s
    }

    fn walk(dir: &Path, host_path: &str, s: &mut Snapshot) {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !(host_path.is_empty() && (n == "commands" || n == "README.md")))
            .collect();
        names.sort();
        if !host_path.is_empty() {
            s.dirs
                .insert(host_path.to_string(), vec![Recorded::Ok(names.clone())]);
        }
        for n in names {
            let p = dir.join(&n);
            let hp = format!("{host_path}/{n}");
            if p.is_dir() {
                walk(&p, &hp, s);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                s.files
                    .insert(hp, vec![Recorded::Ok(Content::from_bytes(&bytes))]);
            }
        }
    }

    /// `ls -l /dev` lines for the NVIDIA nodes as metadata (the nodes cannot live in a git
    /// tree).
    fn dev_nodes(s: &mut Snapshot) {
        let re = Regex::new(r"^([cd])([rwxsStT-]{9})\s+(\d+)\s+\S+\s+\S+\s+.*\s(\S+)$").unwrap();
        for line in cmd("ls_-l_dev.txt").lines() {
            let c = re
                .captures(line)
                .unwrap_or_else(|| panic!("unexpected ls line {line:?}"));
            let mut perm = 0u32;
            for (i, ch) in c[2].chars().enumerate() {
                perm |= u32::from(!matches!(ch, '-' | 'S' | 'T')) << (8 - i);
                if matches!(ch, 's' | 'S' | 't' | 'T') {
                    perm |= [0o4000, 0o2000, 0o1000][i / 3]; // setuid, setgid, sticky
                }
            }
            let (kind, ifmt) = if &c[1] == "d" {
                ("dir", 0o040000)
            } else {
                ("other", 0o020000)
            };
            s.metadata.insert(
                format!("/dev/{}", &c[4]),
                vec![Recorded::Ok(FileMeta {
                    kind: kind.into(),
                    mode: ifmt | perm,
                    uid: 0,
                    gid: 0,
                    len: 0,
                    nlink: c[3].parse().unwrap(),
                })],
            );
        }
    }

    fn one(text: &str, re: &str) -> Vec<String> {
        let c = Regex::new(re)
            .unwrap()
            .captures(text)
            .unwrap_or_else(|| panic!("nvml_readings.txt has no line matching {re}"));
        c.iter()
            .skip(1)
            .map(|m| m.unwrap().as_str().to_string())
            .collect()
    }

    /// `nvidia-smi -q` as `Section/Sub/Key` -> value.
    fn smi_q(text: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut stack: Vec<(usize, String)> = Vec::new();
        for line in text.lines() {
            if line.trim().is_empty() || line.starts_with('=') {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            while stack.last().is_some_and(|(i, _)| *i >= indent) {
                stack.pop();
            }
            let path = |k: &str| {
                let mut p: Vec<&str> = stack.iter().map(|(_, n)| n.as_str()).collect();
                p.push(k);
                p.join("/")
            };
            match line.split_once(" : ") {
                Some((k, v)) => {
                    out.insert(path(k.trim()), v.trim().to_string());
                }
                None => stack.push((indent, line.trim().to_string())),
            }
        }
        out
    }

    fn nvml_reading() -> NvmlReading {
        let t = cmd("nvml_readings.txt");
        let q = smi_q(&cmd("nvidia-smi_-q.txt"));
        let gpu = "GPU 00000000:00:06.0";
        let smi = |k: &str| -> String {
            q.get(&format!("{gpu}/{k}"))
                .unwrap_or_else(|| panic!("nvidia-smi -q has no `{k}`"))
                .clone()
        };
        let num = |k: &str| -> u64 {
            smi(k)
                .trim_end_matches(" MHz")
                .parse()
                .unwrap_or_else(|_| panic!("`{k}` is not a number"))
        };
        let yes = |k: &str| match smi(k).as_str() {
            "Yes" => true,
            "No" => false,
            v => panic!("`{k}` is {v}"),
        };
        let u = |re: &str| -> Vec<u64> { one(&t, re).iter().map(|v| v.parse().unwrap()).collect() };
        let clock_sm = u(r"clock_sm Ok\((\d+)\) max Ok\((\d+)\)");
        let clock_gr = u(r"clock_gr Ok\((\d+)\) max Ok\((\d+)\)");
        let app = u(r"app_clock Ok\((\d+)\) default Ok\((\d+)\)");
        let power =
            u(r"power Ok\((\d+)\) limit Ok\((\d+)\) default Ok\((\d+)\) enforced Ok\((\d+)\)");
        let util = u(r"util Ok\(Utilization \{ gpu: (\d+), memory: (\d+) \}\)");
        let mem =
            u(r"mem Ok\(MemoryInfo \{ free: (\d+), reserved: \d+, total: (\d+), used: (\d+),");
        let pcie =
            u(r"pcie gen Ok\((\d+)\) width Ok\((\d+)\) max gen Ok\((\d+)\) max width Ok\((\d+)\)");
        let mig = u(r"mig Ok\(MigMode \{ current: (\d+), pending: (\d+) \}\)");
        let ecc = one(
            &t,
            r"ecc Ok\(EccModeState \{ currently_enabled: (\w+), pending_enabled: (\w+) \}\)",
        );
        let reasons = one(&t, r"throttle Ok\(ThrottleReasons\(([A-Z_ |]*)\)\)")[0]
            .split(" | ")
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect();
        assert_eq!(
            one(&t, r"procs Ok\((\[.*\])\)")[0],
            "[]",
            "the generator only knows an empty process list"
        );
        assert_eq!(one(&t, r"nvlink0 (\S+)")[0], "Err(NotSupported)");
        let pstate = match one(&t, r"pstate Ok\((\w+)\)")[0].as_str() {
            "Zero" => "P0",
            other => panic!("unexpected pstate {other}"),
        };
        let dram_sram = |scope: &str, kind: &str| -> u64 {
            let keys: &[&str] = if kind == "uncorrected" {
                &[
                    "DRAM Uncorrectable",
                    "SRAM Uncorrectable Parity",
                    "SRAM Uncorrectable SEC-DED",
                ]
            } else {
                &["DRAM Correctable", "SRAM Correctable"]
            };
            keys.iter()
                .map(|k| num(&format!("ECC Errors/{scope}/{k}")))
                .sum()
        };
        let u32f = |v: u64| Field::Ok(v as u32);
        let gpu = GpuReading {
            index: 0,
            name: Field::Ok(one(&t, r#"name Ok\("(.*)"\)"#)[0].clone()),
            uuid: Field::Ok(one(&t, r#"uuid Ok\("(.*)"\)"#)[0].clone()),
            pci_bus_id: Field::Ok(one(&t, r#"pci Ok\("(.*)"\)"#)[0].clone()),
            vbios: Field::Ok(one(&t, r#"vbios Ok\("(.*)"\)"#)[0].clone()),
            persistence: Field::Ok(one(&t, r"persistence Ok\((\w+)\)")[0] == "true"),
            clock_sm: u32f(clock_sm[0]),
            clock_sm_max: u32f(clock_sm[1]),
            clock_graphics: u32f(clock_gr[0]),
            clock_graphics_max: u32f(clock_gr[1]),
            // Not in the NVML recording: from nvidia-smi -q.
            clock_mem: u32f(num("Clocks/Memory")),
            clock_mem_max: u32f(num("Max Clocks/Memory")),
            app_clock_graphics: u32f(app[0]),
            default_app_clock_graphics: u32f(app[1]),
            // Not in the NVML recording: from nvidia-smi -q.
            app_clock_mem: u32f(num("Applications Clocks/Memory")),
            default_app_clock_mem: u32f(num("Default Applications Clocks/Memory")),
            clocks_event_reasons: Field::Ok(reasons),
            power_usage_mw: u32f(power[0]),
            power_limit_mw: u32f(power[1]),
            power_default_limit_mw: u32f(power[2]),
            power_enforced_limit_mw: u32f(power[3]),
            temperature_c: u32f(u(r"temp Ok\((\d+)\)")[0]),
            // the recorded -q gives a T.Limit margin, not the max operating temperature
            temperature_max_operating_c: Field::NotSupported,
            ecc_enabled: Field::Ok(ecc[0] == "true"),
            ecc_pending: Field::Ok(ecc[1] == "true"),
            // ECC counts, retired pages and remapped rows: from nvidia-smi -q. Retired
            // pages read N/A there (Hopper remaps rows instead), so they are NotSupported.
            ecc_uncorrected_volatile: Field::Ok(dram_sram("Volatile", "uncorrected")),
            ecc_uncorrected_aggregate: Field::Ok(dram_sram("Aggregate", "uncorrected")),
            ecc_corrected_volatile: Field::Ok(dram_sram("Volatile", "corrected")),
            retired_pages_pending: {
                assert_eq!(smi("Retired Pages/Pending Page Blacklist"), "N/A");
                Field::NotSupported
            },
            retired_pages_count: {
                assert_eq!(smi("Retired Pages/Double Bit ECC"), "N/A");
                Field::NotSupported
            },
            remapped_rows_correctable: u32f(num("Remapped Rows/Correctable Error")),
            remapped_rows_uncorrectable: u32f(num("Remapped Rows/Uncorrectable Error")),
            remapped_rows_pending: Field::Ok(yes("Remapped Rows/Pending")),
            remapped_rows_failure: Field::Ok(yes("Remapped Rows/Remapping Failure Occurred")),
            pcie_gen: u32f(pcie[0]),
            pcie_width: u32f(pcie[1]),
            pcie_max_gen: u32f(pcie[2]),
            pcie_max_width: u32f(pcie[3]),
            nvlinks: Field::NotSupported,
            compute_mode: Field::Ok(one(&t, r"compute_mode Ok\((\w+)\)")[0].clone()),
            mig_current: Field::Ok(mig[0] == 1),
            mig_pending: Field::Ok(mig[1] == 1),
            utilization_gpu: u32f(util[0]),
            utilization_memory: u32f(util[1]),
            memory_total: Field::Ok(mem[1]),
            memory_used: Field::Ok(mem[2]),
            memory_free: Field::Ok(mem[0]),
            pstate: Field::Ok(pstate.to_string()),
            processes: Field::Ok(Vec::<ProcessMem>::new()),
            ..GpuReading::default()
        };
        NvmlReading {
            driver_version: Field::Ok(one(&t, r#"driver Ok\("(.*)"\)"#)[0].clone()),
            cuda_driver_version: Field::Ok(one(&t, r"cuda_driver Ok\((\d+)\)")[0].parse().unwrap()),
            nvml_version: Field::Ok(one(&t, r#"nvml_version Ok\("(.*)"\)"#)[0].clone()),
            init_ms: one(&t, r"init_ms ([0-9.]+)")[0].parse().unwrap(),
            gpus: vec![gpu],
        }
    }
}
