//! Every fix kind: prepare → save → apply → verify → undo leaves the target as it was (bytes,
//! mode and owner of files; the value of runtime state). File kinds run against a real directory
//! tree under `--root`; runtime kinds (NVML setters, modules, remount) against the recorded H200
//! with injected state, so no machine setting is touched.

use super::*;
use crate::host::real::RealHost;
use crate::host::recorded::SnapshotHost;
use crate::host::{CommandOutput, FileMeta, GpuSample, Host, HostError, NvmlReading, NvmlSetting};
use crate::report::Safety;
use serde_json::json;
use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The recorded H200 for runtime state, a temp dir for files.
struct Combo {
    snap: SnapshotHost,
    root: PathBuf,
}

impl Host for Combo {
    fn describe(&self) -> String {
        "combo".into()
    }
    fn is_live(&self) -> bool {
        false
    }
    fn read_file(&self, p: &str) -> io::Result<Vec<u8>> {
        self.snap.read_file(p)
    }
    fn read_dir(&self, p: &str) -> io::Result<Vec<String>> {
        self.snap.read_dir(p)
    }
    fn metadata(&self, p: &str) -> io::Result<FileMeta> {
        self.snap.metadata(p)
    }
    fn read_link(&self, p: &str) -> io::Result<String> {
        self.snap.read_link(p)
    }
    fn run(&self, a: &[String], t: Duration) -> io::Result<CommandOutput> {
        self.snap.run(a, t)
    }
    fn nvml(&self) -> Result<NvmlReading, HostError> {
        self.snap.nvml()
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        self.snap.nvml_sample()
    }
    fn env(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
    fn now(&self) -> f64 {
        0.0
    }
    fn sleep(&self, _d: Duration) {}
    fn cpu_count(&self) -> usize {
        16
    }
    fn fs_path(&self, p: &str) -> Option<PathBuf> {
        Some(self.root.join(p.trim_start_matches('/')))
    }
    fn write_runtime(&self, p: &str, v: &str) -> io::Result<()> {
        self.snap.write_runtime(p, v)
    }
    fn nvml_set(&self, g: u32, s: &NvmlSetting) -> Result<(), HostError> {
        self.snap.nvml_set(g, s)
    }
    fn set_module(&self, n: &str, l: bool) -> Result<(), HostError> {
        self.snap.set_module(n, l)
    }
    fn remount(&self, m: &str, o: &str) -> Result<(), HostError> {
        self.snap.remount(m, o)
    }
}

fn h200() -> SnapshotHost {
    SnapshotHost::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/h200-vm.snapshot.json"),
    )
    .unwrap()
}

fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            let key = e.path().strip_prefix(dir).unwrap().display().to_string();
            if m.is_dir() {
                out.insert(key + "/", (Vec::new(), m.mode(), m.uid()));
                stack.push(e.path());
            } else {
                out.insert(key, (std::fs::read(e.path()).unwrap(), m.mode(), m.uid()));
            }
        }
    }
    out
}

/// Run one action through every step and check that undo restores what save read.
pub(super) fn roundtrip(
    kind: &str,
    action: serde_json::Value,
    host: &dyn Host,
    inputs: &Inputs,
    dir: &Path,
) -> usize {
    let roots = Roots::new([dir.to_path_buf()]);
    let local: Vec<PathBuf> = [&inputs.config, &inputs.env_file]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let cx = FixCtx {
        host,
        inputs,
        roots: &roots,
        local_files: local,
        overlay: Default::default(),
    };
    let k = find(kind).unwrap();
    let action = action.as_object().unwrap().clone();
    let before_files = files(dir);
    let prepared = k
        .prepare(&action, &cx)
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    assert!(!prepared.is_empty(), "{kind}: nothing to change");
    let changes: Vec<PlannedChange> = prepared
        .into_iter()
        .map(|p| PlannedChange {
            rule: "test".into(),
            kind: kind.into(),
            target: p.target,
            safety: Safety::Disruptive,
            summary: p.summary,
            diff: p.diff,
            before: p.before,
            after: p.after,
            before_text: p.before_text,
            after_text: p.after_text,
            part: p.part.into(),
            action: serde_json::Value::Object(action.clone()),
            fingerprint: p.fingerprint,
            restart: "nothing".into(),
        })
        .collect();
    let mut priors = Vec::new();
    for c in &changes {
        assert_eq!(
            k.fingerprint(c, &cx).unwrap(),
            c.fingerprint,
            "{kind}/{}: fingerprint before",
            c.part
        );
        let prior = k.save(c, &cx).unwrap();
        k.apply(c, &cx)
            .unwrap_or_else(|e| panic!("{kind}/{}: {e}", c.part));
        k.verify(c, &cx)
            .unwrap_or_else(|e| panic!("{kind}/{}: verify: {e}", c.part));
        assert_ne!(
            k.fingerprint(c, &cx).unwrap(),
            c.fingerprint,
            "{kind}/{}: the change is visible",
            c.part
        );
        priors.push(prior);
    }
    // applying the same action again finds nothing to do (idempotent)
    let cx2 = FixCtx {
        host,
        inputs,
        roots: &roots,
        local_files: cx.local_files.clone(),
        overlay: Default::default(),
    };
    assert!(
        k.prepare(&action, &cx2).unwrap().is_empty(),
        "{kind}: second prepare is empty"
    );
    for (c, prior) in changes.iter().zip(&priors).rev() {
        k.undo(c, prior, &cx)
            .unwrap_or_else(|e| panic!("{kind}/{}: undo: {e}", c.part));
        assert_eq!(
            k.fingerprint(c, &cx).unwrap(),
            c.fingerprint,
            "{kind}/{}: undone",
            c.part
        );
    }
    assert_eq!(
        files(dir),
        before_files,
        "{kind}: files byte-identical with the same mode and owner"
    );
    changes.len()
}

fn write(dir: &Path, rel: &str, text: &str, mode: u32) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, mode);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

#[test]
fn file_kinds_round_trip_under_root() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("root");
    std::fs::create_dir_all(&dir).unwrap();
    let host = RealHost::new(Some(dir.clone()));
    write(&dir, "etc/site.conf", "# site\nmode=slow\n", 0o640);
    write(
        &dir,
        "etc/fstab",
        "# fstab\nUUID=1\t/data\text4\tdefaults\t0 2\n",
        0o644,
    );
    write(&dir, "proc/sys/vm/swappiness", "60\n", 0o644);
    write(
        &dir,
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "powersave\n",
        0o644,
    );
    let none = Inputs::default();
    assert_eq!(
        roundtrip(
            "file.line",
            json!({"path": "/etc/site.conf", "line": "mode=fast", "regex": "^mode="}),
            &host,
            &none,
            &dir
        ),
        1
    );
    assert_eq!(
        roundtrip(
            "file.replace",
            json!({"path": "/etc/site.conf", "regex": "slow", "replacement": "fast"}),
            &host,
            &none,
            &dir
        ),
        1
    );
    assert_eq!(
        roundtrip(
            "fstab.options",
            json!({"mount_point": "/data", "add": ["noatime"]}),
            &host,
            &none,
            &dir
        ),
        1
    );
    // a new file in a new directory: undo removes both
    assert_eq!(
        roundtrip(
            "kmod.options",
            json!({"module": "nvidia", "option": "NVreg_EnableGpuFirmware", "value": "0"}),
            &host,
            &none,
            &dir
        ),
        1
    );
    // runtime value plus a new sysctl.d file
    assert_eq!(
        roundtrip(
            "sysctl.set",
            json!({"key": "vm.swappiness", "value": "10"}),
            &host,
            &none,
            &dir
        ),
        2
    );
    assert_eq!(
        roundtrip(
            "sysfs.write",
            json!({"path": "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "value": "performance"}),
            &host,
            &none,
            &dir
        ),
        1
    );
    // env and config files named on the command line
    let env = write(
        &dir,
        "job/job.env",
        "# env\nCUDA_LAUNCH_BLOCKING=1\n",
        0o600,
    );
    let cfg = write(
        &dir,
        "job/train.yaml",
        "# cfg\ndata:\n  num_workers: 0  # w\n",
        0o644,
    );
    let toml = write(
        &dir,
        "job/train.toml",
        "[data]\nnum_workers = 0 # w\n",
        0o644,
    );
    let jsn = write(
        &dir,
        "job/train.json",
        "{\n  \"data\": {\n    \"num_workers\": 0\n  }\n}\n",
        0o644,
    );
    let with = |c: &Path| Inputs {
        env_file: Some(env.clone()),
        config: Some(c.to_path_buf()),
        ..Default::default()
    };
    assert_eq!(
        roundtrip(
            "env.unset",
            json!({"name": "CUDA_LAUNCH_BLOCKING"}),
            &host,
            &with(&cfg),
            &dir
        ),
        1
    );
    assert_eq!(
        roundtrip(
            "env.set",
            json!({"name": "PYTORCH_CUDA_ALLOC_CONF", "value": "expandable_segments:True"}),
            &host,
            &with(&cfg),
            &dir
        ),
        1
    );
    for c in [&cfg, &toml, &jsn] {
        assert_eq!(
            roundtrip(
                "config.set",
                json!({"key": "data.num_workers", "value": 8}),
                &host,
                &with(c),
                &dir
            ),
            1
        );
    }
    // a command with an undo command (argv, no shell)
    let flag = dir.join("flag");
    let argv = json!(["touch", flag.display().to_string()]);
    let undo = json!(["rm", "--", flag.display().to_string()]);
    let roots = Roots::new([dir.clone()]);
    let cx = FixCtx {
        host: &host,
        inputs: &none,
        roots: &roots,
        local_files: Vec::new(),
        overlay: Default::default(),
    };
    let k = find("command").unwrap();
    let action = json!({"argv": argv, "undo_argv": undo, "safety": "disruptive"});
    let p = k
        .prepare(action.as_object().unwrap(), &cx)
        .unwrap()
        .remove(0);
    let c = PlannedChange {
        rule: "t".into(),
        kind: "command".into(),
        target: p.target,
        safety: Safety::Disruptive,
        summary: p.summary,
        diff: None,
        before: p.before,
        after: p.after,
        before_text: None,
        after_text: None,
        part: "runtime".into(),
        action,
        fingerprint: p.fingerprint,
        restart: "nothing".into(),
    };
    let prior = k.save(&c, &cx).unwrap();
    k.apply(&c, &cx).unwrap();
    assert!(flag.exists());
    k.undo(&c, &prior, &cx).unwrap();
    assert!(!flag.exists());
}

#[test]
fn runtime_kinds_round_trip_on_the_recorded_host() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("root");
    std::fs::create_dir_all(&dir).unwrap();
    let none = Inputs::default();
    // GPU settings, with injected degraded state
    let mut snap = h200();
    snap.edit_nvml(|n| {
        let g = &mut n.gpus[0];
        g.persistence = crate::host::Field::Ok(false);
        g.power_limit_mw = crate::host::Field::Ok(450_000);
        g.app_clock_graphics = crate::host::Field::Ok(1500);
    });
    let host = Combo {
        snap,
        root: dir.clone(),
    };
    assert_eq!(
        roundtrip(
            "nvidia.persistence",
            json!({"gpu": 0, "enabled": true}),
            &host,
            &none,
            &dir
        ),
        1
    );
    assert_eq!(
        roundtrip(
            "nvidia.power_limit",
            json!({"gpu": "all", "watts": "default"}),
            &host,
            &none,
            &dir
        ),
        1
    );
    assert_eq!(
        roundtrip(
            "nvidia.clocks",
            json!({"gpu": 0, "action": "reset"}),
            &host,
            &none,
            &dir
        ),
        1
    );
    // a module: loaded now (undo unloads only what this run loaded) and persisted
    let mut snap = h200();
    snap.set_file(
        "/proc/modules",
        "nvidia 14299136 - - Live 0xffffffffc0400000 (O)\n",
    );
    let host = Combo {
        snap,
        root: dir.clone(),
    };
    assert_eq!(
        roundtrip(
            "kmod.load",
            json!({"module": "nvidia_uvm"}),
            &host,
            &none,
            &dir
        ),
        2
    );
    // remount, verified from the (recorded) live mount table
    let mut snap = h200();
    snap.set_file(
        "/proc/mounts",
        "/dev/vda / ext4 rw,relatime 0 0\n/dev/nvme0n1 /data ext4 rw,relatime 0 0\n",
    );
    let host = Combo {
        snap,
        root: dir.clone(),
    };
    write(&dir, "etc/fstab", "UUID=1 /data ext4 defaults 0 2\n", 0o644);
    assert_eq!(
        roundtrip(
            "fstab.options",
            json!({"mount_point": "/data", "add": ["noatime"], "remount": true}),
            &host,
            &none,
            &dir
        ),
        2
    );
}
