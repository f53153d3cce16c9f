//! The attacks of "Nothing an unprivileged user can write decides what gpufix runs or writes as
//! root", each played against the binary on a scratch tree under `--root`. Each test failed on
//! the code before the fix (commit b7e0f02): run them against any binary with
//! `GPUFIX_BIN=/path/to/gpufix cargo test --test adversarial`.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    std::env::var_os("GPUFIX_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gpufix")))
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Out {
    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

fn gpufix(args: &[String]) -> Command {
    let mut c = Command::new(bin());
    c.env("NO_COLOR", "1")
        .env_remove("GPUFIX_CRASH_AT")
        .env_remove("GPUFIX_TEST_FAULT")
        .arg("--no-system")
        .args(args)
        .stdin(Stdio::null());
    c
}

fn run_cmd(mut c: Command) -> Out {
    let t = Instant::now();
    let o = c.output().unwrap();
    Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        took: t.elapsed(),
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn chmod(p: impl AsRef<Path>, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn write(p: impl AsRef<Path>, text: &str) {
    let p = p.as_ref();
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const GOVERNOR: &str = "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

/// A scratch host under `root/`, a job's config and env file under `job/`.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d.join("root/etc/fstab"),
            "# /etc/fstab\nUUID=1111\t/\text4\terrors=remount-ro\t0 1\nUUID=2222  /data  ext4  defaults  0 2\n",
        );
        write(
            d.join("root/proc/mounts"),
            "/dev/vda / ext4 rw,relatime 0 0\n/dev/nvme0n1 /data ext4 rw,relatime 0 0\n",
        );
        write(d.join("root").join(GOVERNOR), "powersave\n");
        write(
            d.join("job/config.yaml"),
            "# training config\ndata:\n  num_workers: 0   # decode workers\n  pin_memory: false\n  batch_size: 128\nddp:\n  bucket_cap_mb: 25\n",
        );
        write(
            d.join("job/job.env"),
            "# job env\nCUDA_LAUNCH_BLOCKING=1\nOMP_NUM_THREADS=4\n",
        );
        Fixture { dir }
    }
    fn p(&self, rel: &str) -> String {
        self.dir.path().join(rel).display().to_string()
    }
    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("root/var/lib/gpufix")
    }
    fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut v = strs(&[
            "--root",
            &self.p("root"),
            "--config",
            &self.p("job/config.yaml"),
            "--env-file",
            &self.p("job/job.env"),
            "--sample",
            "0",
            "--only",
            "data",
            "--only",
            "cuda.launch-blocking",
            "--only",
            "comm.ddp-bucket-default",
            "--only",
            "launch.cpu-governor-powersave",
        ]);
        v.extend(strs(extra));
        v
    }
    fn run(&self, extra: &[&str]) -> Out {
        run_cmd(gpufix(&self.args(extra)))
    }
    /// `rollback` and `history`: they take the run's --root, none of the probing options.
    fn journal(&self, extra: &[&str]) -> Out {
        let mut c = Command::new(bin());
        c.env("NO_COLOR", "1")
            .env_remove("GPUFIX_CRASH_AT")
            .env_remove("GPUFIX_TEST_FAULT")
            .args(extra)
            .args(["--root", &self.p("root")])
            .stdin(Stdio::null());
        run_cmd(c)
    }
    /// Every regular file of the fixture outside the state directory, with bytes and mode.
    fn state(&self) -> BTreeMap<String, (Vec<u8>, u32)> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.dir.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            if d == self.state_dir() {
                continue;
            }
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let m = e.path().symlink_metadata().unwrap();
                if m.is_dir() {
                    stack.push(e.path());
                } else if m.is_file() {
                    let rel = e.path().strip_prefix(self.dir.path()).unwrap().to_owned();
                    out.insert(
                        rel.display().to_string(),
                        (std::fs::read(e.path()).unwrap(), m.mode()),
                    );
                }
            }
        }
        out
    }
    /// `plan -o plan.json`, parsed.
    fn plan(&self) -> (String, Value) {
        let path = self.p("plan.json");
        let out = self.run(&["plan", "-o", &path]);
        assert_eq!(out.code, Some(2), "{}", out.all());
        let v = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        (path, v)
    }
}

fn save_json(path: &str, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn change_of<'a>(plan: &'a mut Value, kind: &str) -> &'a mut Value {
    plan["report"]["changes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["kind"] == kind)
        .unwrap_or_else(|| panic!("the plan has a `{kind}` change"))
}

/// Attack 1: a plan file is a proposal. What apply executes is re-derived from the playbooks and
/// the host; an edited file is refused (the attacker can recompute any fingerprint).
mod tampered_plan {
    use super::*;

    #[test]
    fn cannot_widen_the_roots_to_write_elsewhere() {
        let f = Fixture::new();
        let (path, mut plan) = f.plan();
        let victim = f.p("victim/authorized_keys");
        std::fs::create_dir_all(f.p("victim")).unwrap();
        plan["local_files"]
            .as_array_mut()
            .unwrap()
            .push(json!(victim));
        let c = change_of(&mut plan, "env.unset");
        c["target"] = json!(victim);
        c["after_text"] = json!("ssh-ed25519 AAAA attacker\n");
        c["fingerprint"] = json!("absent");
        save_json(&path, &plan);
        let before = f.state();
        let out = f.run(&["apply", &path, "--yes"]);
        assert!(
            !Path::new(&victim).exists(),
            "wrote {victim}: {}",
            out.all()
        );
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(out.stderr.contains("does not match"), "{}", out.stderr);
        assert_eq!(f.state(), before, "nothing changed");
    }

    #[test]
    fn cannot_turn_a_change_into_a_command() {
        let f = Fixture::new();
        let (path, mut plan) = f.plan();
        let marker = f.p("ran-as-root");
        let c = change_of(&mut plan, "env.unset");
        *c = json!({
            "rule": c["rule"], "kind": "command", "target": "command true", "safety": "safe",
            "summary": c["summary"], "part": "runtime", "restart": "nothing",
            "before": "not run", "after": "run", "fingerprint": "value:\"not run\"",
            "action": {"argv": ["/bin/sh", "-c", format!("touch {marker}")]},
        });
        save_json(&path, &plan);
        let out = f.run(&["apply", &path, "--yes"]);
        assert!(!Path::new(&marker).exists(), "ran the argv: {}", out.all());
        assert_eq!(out.code, Some(1), "{}", out.all());
    }

    #[test]
    fn cannot_write_other_content_than_the_diff_shown() {
        let f = Fixture::new();
        let (path, mut plan) = f.plan();
        let c = change_of(&mut plan, "env.unset");
        let after = c["after_text"].as_str().unwrap().to_string();
        c["after_text"] = json!(format!("{after}LD_PRELOAD=/tmp/evil.so\n"));
        save_json(&path, &plan);
        let before = f.state();
        let out = f.run(&["apply", &path, "--yes"]);
        let env = std::fs::read_to_string(f.p("job/job.env")).unwrap();
        assert!(!env.contains("LD_PRELOAD"), "{env}");
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(
            out.stderr.contains("LD_PRELOAD"),
            "shows the difference: {}",
            out.stderr
        );
        assert_eq!(f.state(), before);
    }

    #[test]
    fn cannot_lower_a_kinds_safety() {
        let f = Fixture::new();
        let (path, mut plan) = f.plan();
        change_of(&mut plan, "sysfs.write")["safety"] = json!("safe");
        save_json(&path, &plan);
        let out = f.run(&["apply", &path, "--yes"]);
        assert_eq!(
            std::fs::read_to_string(f.p(&format!("root/{GOVERNOR}"))).unwrap(),
            "powersave\n",
            "a disruptive write ran with --yes alone: {}",
            out.all()
        );
        assert_eq!(out.code, Some(1), "{}", out.all());
    }
}

/// A journal written by hand into the state directory: a run that "changed" files outside
/// the root, with undo records that would write, delete and run things.
fn plant_run(f: &Fixture, run: &str, lines: &[Value]) -> PathBuf {
    let dir = f.state_dir().join("runs").join(run);
    std::fs::create_dir_all(&dir).unwrap();
    chmod(f.state_dir(), 0o700);
    chmod(f.state_dir().join("runs"), 0o700);
    chmod(&dir, 0o700);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let j = dir.join("journal.jsonl");
    std::fs::write(&j, text).unwrap();
    chmod(&j, 0o600);
    j
}

fn begin(run: &str, changes: Value) -> Value {
    json!({"type": "begin", "run": run, "started_at": "2026-12-02T00:00:00Z", "host": "x", "changes": changes})
}

fn env_change(target: &str) -> Value {
    json!({"rule": "cuda.launch-blocking", "kind": "env.set", "target": target, "safety": "safe",
           "summary": "s", "part": "file", "restart": "nothing", "after_text": "A=1\n",
           "before_text": "", "diff": "d", "fingerprint": "absent",
           "action": {"name": "A", "value": "1"}})
}

/// Attack 2: rollback acts only on what the run itself recorded, inside its own roots.
mod planted_journal {
    use super::*;

    #[test]
    fn cannot_write_a_setuid_file_outside_the_root() {
        let f = Fixture::new();
        let victim = f.p("outside/sbin-helper");
        std::fs::create_dir_all(f.p("outside")).unwrap();
        let run = "20261202T000000.000Z-1";
        plant_run(
            &f,
            run,
            &[
                begin(run, json!([env_change(&victim)])),
                json!({"type": "intent", "index": 0, "prior": {"type": "file", "exists": true,
                       "text": "#!/bin/sh\nid\n", "mode": 0o104755, "uid": 0, "gid": 0}}),
                json!({"type": "applied", "index": 0}),
            ],
        );
        let out = f.journal(&["rollback", "--force"]);
        assert!(
            !Path::new(&victim).exists(),
            "wrote {victim}: {}",
            out.all()
        );
        assert_eq!(out.code, Some(1), "{}", out.all());
    }

    #[test]
    fn cannot_delete_a_file_outside_the_root() {
        let f = Fixture::new();
        let victim = f.p("outside/precious");
        write(&victim, "keep me\n");
        let run = "20261202T000000.000Z-2";
        plant_run(
            &f,
            run,
            &[
                begin(run, json!([env_change(&victim)])),
                json!({"type": "intent", "index": 0, "prior": {"type": "file", "exists": false,
                       "mode": 0o644, "uid": 0, "gid": 0}}),
                json!({"type": "applied", "index": 0}),
            ],
        );
        let out = f.journal(&["rollback", "--force"]);
        assert!(
            Path::new(&victim).exists(),
            "deleted {victim}: {}",
            out.all()
        );
        assert_eq!(out.code, Some(1), "{}", out.all());
    }

    #[test]
    fn an_out_of_range_index_is_an_error_not_a_panic() {
        let f = Fixture::new();
        let run = "20261202T000000.000Z-3";
        plant_run(
            &f,
            run,
            &[
                begin(run, json!([env_change(&f.p("job/job.env"))])),
                json!({"type": "intent", "index": 7, "prior": {"type": "value", "value": "x"}}),
                json!({"type": "applied", "index": 7}),
            ],
        );
        let out = f.journal(&["rollback", "--force"]);
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(out.stderr.contains("index 7"), "{}", out.stderr);
    }

    #[test]
    fn a_journal_someone_else_can_write_is_not_acted_on() {
        let f = Fixture::new();
        let marker = f.p("undo-ran");
        let run = "20261202T000000.000Z-4";
        let j = plant_run(
            &f,
            run,
            &[
                begin(
                    run,
                    json!([{"rule": "r", "kind": "command", "target": "command true",
                            "safety": "safe", "summary": "s", "part": "runtime",
                            "restart": "nothing", "before": "not run", "after": "run",
                            "fingerprint": "value:\"not run\"",
                            "action": {"argv": ["true"],
                                       "undo_argv": ["/bin/sh", "-c", format!("touch {marker}")]}}]),
                ),
                json!({"type": "intent", "index": 0, "prior": {"type": "value", "value": "not run"}}),
                json!({"type": "applied", "index": 0}),
            ],
        );
        // planted by a user who could write the state directory
        chmod(&j, 0o666);
        chmod(f.state_dir().join("runs"), 0o777);
        let out = f.journal(&["rollback", "--force"]);
        assert!(!Path::new(&marker).exists(), "ran undo_argv: {}", out.all());
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(out.stderr.contains("writable"), "says why: {}", out.stderr);
    }
}

/// Attack 6: a corrupt line other than a torn last line marks the run corrupt.
mod corrupt_journal {
    use super::*;

    fn applied(f: &Fixture) -> PathBuf {
        let out = f.run(&["apply", "--yes"]);
        assert_eq!(out.code, Some(0), "{}", out.all());
        let runs = f.state_dir().join("runs");
        let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
        run.path().join("journal.jsonl")
    }

    fn corrupt_line(j: &Path, n: usize) {
        let text = std::fs::read_to_string(j).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines[n] = format!("{{garbage{}", &lines[n][..lines[n].len().min(20)]);
        std::fs::write(j, lines.join("\n") + "\n").unwrap();
    }

    #[test]
    fn a_corrupt_middle_line_makes_rollback_refuse() {
        let f = Fixture::new();
        let j = applied(&f);
        corrupt_line(&j, 1); // the first intent record: the prior state of a change
        let after = f.state();
        let out = f.journal(&["rollback"]);
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(out.stderr.contains("corrupt"), "{}", out.stderr);
        assert_eq!(f.state(), after, "nothing restored from a corrupt journal");
    }

    #[test]
    fn a_corrupt_first_line_is_shown_in_history() {
        let f = Fixture::new();
        let j = applied(&f);
        corrupt_line(&j, 0);
        let out = f.journal(&["history"]);
        assert!(out.stdout.contains("corrupt"), "{}", out.all());
    }

    #[test]
    fn a_corrupt_first_line_blocks_apply() {
        let f = Fixture::new();
        let j = applied(&f);
        corrupt_line(&j, 0);
        // something to do again
        write(f.p("job/job.env"), "CUDA_LAUNCH_BLOCKING=1\n");
        let out = f.run(&["apply", "--yes"]);
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(out.stderr.contains("corrupt"), "{}", out.stderr);
        assert_eq!(
            std::fs::read_to_string(f.p("job/job.env")).unwrap(),
            "CUDA_LAUNCH_BLOCKING=1\n"
        );
    }
}

const PROBE_PLAYBOOK: &str = "playbook: site\nlayer: data\ntitle: Site\nrules:\n  - id: site.probe\n    title: Runs a command\n    why: Test.\n    severity: info\n    probes:\n      c: { kind: command, argv: [\"/bin/sh\", \"-c\", \"touch MARKER\"] }\n    fail_when: \"false\"\n    message: x\n";

/// Attack 3: playbooks are code; one anybody can write is refused before anything runs.
mod untrusted_playbooks {
    use super::*;

    fn playbook_dir(f: &Fixture) -> (String, String) {
        let marker = f.p("probe-ran");
        let dir = f.p("site");
        write(
            format!("{dir}/site.yaml"),
            &PROBE_PLAYBOOK.replace("MARKER", &marker),
        );
        (dir, marker)
    }

    fn plan(f: &Fixture, dir: &str) -> Out {
        run_cmd(gpufix(&strs(&[
            "--root",
            &f.p("root"),
            "--playbooks",
            dir,
            "--only",
            "site.probe",
            "plan",
        ])))
    }

    #[test]
    fn a_world_writable_playbook_directory_is_refused() {
        let f = Fixture::new();
        let (dir, marker) = playbook_dir(&f);
        // the trusted case first: the tempdir's defaults are accepted
        let ok = plan(&f, &dir);
        assert_eq!(ok.code, Some(0), "{}", ok.all());
        std::fs::remove_file(&marker).unwrap();
        chmod(&dir, 0o777);
        let out = plan(&f, &dir);
        assert!(!Path::new(&marker).exists(), "probe ran: {}", out.all());
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(
            out.stderr.contains("writable") && out.stderr.contains("help:"),
            "{}",
            out.stderr
        );
    }

    #[test]
    fn a_world_writable_playbook_file_is_refused_under_root_too() {
        let f = Fixture::new();
        let marker = f.p("probe-ran");
        let file = f.p("root/etc/gpufix/playbooks.d/site.yaml");
        write(&file, &PROBE_PLAYBOOK.replace("MARKER", &marker));
        chmod(&file, 0o666);
        let out = run_cmd({
            let mut c = Command::new(bin());
            c.env("NO_COLOR", "1").args(strs(&[
                "--root",
                &f.p("root"),
                "--only",
                "site.probe",
                "plan",
            ]));
            c
        });
        assert!(!Path::new(&marker).exists(), "probe ran: {}", out.all());
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(out.stderr.contains("writable"), "{}", out.stderr);
    }
}

/// Attack 4: runtime values and `-o` outputs are written without following links.
mod symlinked_writes {
    use super::*;

    #[test]
    fn a_symlinked_sysfs_target_is_not_followed() {
        let f = Fixture::new();
        let outside = f.p("outside-governor");
        write(&outside, "powersave\n");
        let gov = f.p(&format!("root/{GOVERNOR}"));
        std::fs::remove_file(&gov).unwrap();
        std::os::unix::fs::symlink(&outside, &gov).unwrap();
        let out = f.run(&[
            "--only",
            "launch.cpu-governor-powersave",
            "apply",
            "--yes",
            "--allow-disruptive",
        ]);
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "powersave\n",
            "wrote through the link: {}",
            out.all()
        );
    }

    #[test]
    fn a_symlinked_output_file_is_not_followed() {
        let f = Fixture::new();
        for cmd in ["plan", "snapshot"] {
            let victim = f.p(&format!("victim-{cmd}"));
            write(&victim, "precious\n");
            let link = f.p(&format!("out-{cmd}.json"));
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            let out = f.run(&[cmd, "-o", &link]);
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "precious\n",
                "{cmd} -o wrote through the link: {}",
                out.all()
            );
            assert_eq!(out.code, Some(1), "{cmd}: {}", out.all());
            assert!(out.stderr.contains("symlink"), "{cmd}: {}", out.stderr);
        }
    }
}

/// Attack 5: reads under `--root` stay in the root, read regular files only, never block.
mod reads_under_root {
    use super::*;

    #[test]
    fn a_symlink_out_of_the_root_is_not_followed() {
        let f = Fixture::new();
        let secret = f.p("secret");
        write(
            &secret,
            "UUID=SECRET-OUTSIDE-THE-ROOT / ext4 defaults 0 0\n",
        );
        std::fs::remove_file(f.p("root/etc/fstab")).unwrap();
        std::os::unix::fs::symlink(&secret, f.p("root/etc/fstab")).unwrap();
        let snap = f.p("snap.json");
        let out = f.run(&["snapshot", "-o", &snap]);
        let text = std::fs::read_to_string(&snap).unwrap_or_default();
        assert!(!text.contains("SECRET-OUTSIDE"), "{}", out.all());
        let plan = f.run(&["--format", "json", "plan"]);
        assert!(!plan.stdout.contains("SECRET-OUTSIDE"), "{}", plan.stdout);
    }

    #[test]
    fn a_fifo_does_not_block_and_a_device_is_not_read() {
        let f = Fixture::new();
        std::fs::remove_file(f.p("root/etc/fstab")).unwrap();
        let st = Command::new("mkfifo")
            .arg(f.p("root/etc/fstab"))
            .status()
            .unwrap();
        assert!(st.success());
        let out = f.run(&["--format", "json", "--only", "data", "plan"]);
        assert!(out.took < Duration::from_secs(5), "took {:?}", out.took);
        assert_eq!(out.code, Some(2), "{}", out.all());
        assert!(out.stdout.contains("not a regular file"), "{}", out.stdout);
        // a device (or a link to one): /dev/zero would never end
        std::fs::remove_file(f.p("root/etc/fstab")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", f.p("root/etc/fstab")).unwrap();
        std::fs::create_dir_all(f.p("root/dev")).unwrap();
        let made = Command::new("mknod")
            .args([&f.p("root/dev/zero"), "c", "1", "5"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        let out = f.run(&["--format", "json", "--only", "data", "plan"]);
        assert!(out.took < Duration::from_secs(5), "took {:?}", out.took);
        assert_eq!(out.code, Some(2), "{}", out.all());
        if made {
            assert!(out.stdout.contains("not a regular file"), "{}", out.stdout);
        }
    }
}

/// Attack 8: hostile sizes are refused quickly and in bounded memory.
mod hostile_sizes {
    use super::*;

    /// Run under a 1 GiB address-space limit: an input that would need more aborts the run.
    fn bounded(args: &[String]) -> Out {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
            .arg(bin())
            .arg("--no-system")
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        run_cmd(c)
    }

    #[test]
    fn a_nesting_bomb_is_rejected_in_under_a_second() {
        let f = Fixture::new();
        for (flag, name) in [("--playbooks", "bomb.yaml"), ("--values", "values.yaml")] {
            let p = f.p(name);
            std::fs::write(&p, "[".repeat(100_000) + &"]".repeat(100_000)).unwrap();
            let out = run_cmd(gpufix(&strs(&[flag, &p, "validate"])));
            assert_eq!(out.code, Some(1), "{flag}: {}", out.all());
            assert!(
                out.took < Duration::from_secs(1),
                "{flag}: took {:?}",
                out.took
            );
            assert!(out.stderr.contains("nest"), "{flag}: {}", out.stderr);
        }
    }

    #[test]
    fn oversized_inputs_are_refused_in_bounded_memory() {
        let f = Fixture::new();
        // a 64 MB playbook (seven million tiny mappings) and 256 MB of pasted evidence
        let big = f.p("big.yaml");
        let item = "- {a: 1}\n";
        std::fs::write(
            &big,
            format!("rules:\n{}", item.repeat((64 << 20) / item.len())),
        )
        .unwrap();
        let out = bounded(&strs(&["--playbooks", &big, "validate"]));
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(out.stderr.contains("input too large"), "{}", out.stderr);
        let ev = f.p("pasted.txt");
        {
            use std::io::Write;
            let mut w = std::io::BufWriter::new(std::fs::File::create(&ev).unwrap());
            let l = "Dec  2 12:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n";
            for _ in 0..(256 << 20) / l.len() {
                w.write_all(l.as_bytes()).unwrap();
            }
        }
        let out = bounded(&strs(&["--evidence", &ev, "--sample", "0", "plan"]));
        assert_eq!(out.code, Some(1), "ends normally (no abort): {}", out.all());
        assert!(out.stderr.contains("input too large"), "{}", out.stderr);
    }
}

/// Issue 23, item 4: a job's secrets stay home. Its environment holds tokens and cloud keys next
/// to the settings the playbooks are about; the snapshot, every report format and the files
/// `audit -o` writes keep the settings and redact the rest.
mod secrets_stay_home {
    use super::*;

    /// Credentials of the kinds a training job carries, each in its own shape.
    const SECRETS: &[(&str, &str)] = &[
        ("HF_TOKEN", "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567890"),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
        (
            "GITHUB_PAT_FOR_CI",
            "ghp_0123456789abcdefABCDEF0123456789abcd",
        ),
        (
            "DATABASE_URL",
            "postgres://trainer:pg-s3cret-pw@db.internal/runs",
        ),
        ("NCCL_IB_AUTH_TOKEN", "nccl-token-value-77"),
    ];

    fn leaked(text: &str) -> Vec<&'static str> {
        let mut v: Vec<&str> = SECRETS
            .iter()
            .map(|(_, s)| *s)
            .filter(|s| text.contains(s))
            .collect();
        if text.contains("pg-s3cret-pw") {
            v.push("pg-s3cret-pw");
        }
        v
    }

    /// A "training job": a process whose environment holds the secrets and one setting a
    /// built-in rule is about; killed when dropped.
    struct Job(std::process::Child);
    impl Drop for Job {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    fn job() -> Job {
        let mut c = Command::new("sleep");
        c.arg("300")
            .env("CUDA_LAUNCH_BLOCKING", "1")
            .env("OMP_NUM_THREADS", "8")
            .stdin(Stdio::null());
        for (k, v) in SECRETS {
            c.env(k, v);
        }
        Job(c.spawn().unwrap())
    }

    /// A site rule that shows the job's whole environment in its message and evidence, as a
    /// rule written to debug a launcher would.
    fn env_rule(f: &Fixture) -> String {
        let dir = f.p("site-env");
        write(
            format!("{dir}/env.yaml"),
            "playbook: site\nlayer: driver\ntitle: Site\nrules:\n  - id: site.job-env\n    title: Shows the job's environment\n    why: Test.\n    severity: critical\n    probes:\n      e: { kind: env, from: process }\n    fail_when: \"e.vars | length > 0\"\n    message: \"the job runs with {{ e.vars }}\"\n",
        );
        dir
    }

    #[test]
    fn a_jobs_tokens_are_redacted_in_the_snapshot_and_every_report_format() {
        let f = Fixture::new();
        let j = job();
        let pid = j.0.id().to_string();
        std::thread::sleep(Duration::from_millis(100));
        let dir = env_rule(&f);
        // the live host: the job's /proc/PID/environ
        let base = strs(&[
            "--playbooks",
            &dir,
            "--pid",
            &pid,
            "--sample",
            "0",
            "--only",
            "site.job-env",
            "--only",
            "cuda.launch-blocking",
        ]);
        let with = |extra: &[&str]| {
            let mut a = base.clone();
            a.extend(strs(extra));
            run_cmd(gpufix(&a))
        };
        // the snapshot: the job's /proc/PID/environ, recorded
        let snap = f.p("snap.json");
        let out = with(&["snapshot", "-o", &snap]);
        assert_eq!(out.code, Some(0), "{}", out.all());
        let text = std::fs::read_to_string(&snap).unwrap();
        assert!(
            leaked(&text).is_empty(),
            "snapshot leaks {:?}",
            leaked(&text)
        );
        assert!(
            text.contains("CUDA_LAUNCH_BLOCKING=1") && text.contains("HF_TOKEN=<redacted>"),
            "the snapshot keeps the job's settings and names: {}",
            &text[..text.len().min(3000)]
        );
        // the reports: every format, printed and written
        let mut shown = 0;
        for (cmd, format) in [
            ("plan", "text"),
            ("plan", "json"),
            ("audit", "text"),
            ("audit", "json"),
            ("audit", "junit"),
            ("audit", "prometheus"),
            ("audit", "nagios"),
            ("audit", "slurm"),
        ] {
            let out = with(&[cmd, "--format", format]);
            assert!(
                leaked(&out.all()).is_empty(),
                "{cmd} --format {format} leaks {:?}:\n{}",
                leaked(&out.all()),
                out.all()
            );
            if out.stdout.contains("CUDA_LAUNCH_BLOCKING") {
                shown += 1;
            }
        }
        assert!(shown >= 4, "the reports still show the job's settings");
        // and the same from the recorded snapshot
        let out = run_cmd(gpufix(&strs(&[
            "--snapshot",
            &snap,
            "--playbooks",
            &dir,
            "--pid",
            &pid,
            "--only",
            "site.job-env",
            "--format",
            "json",
            "plan",
        ])));
        assert!(leaked(&out.all()).is_empty(), "{}", out.all());
    }

    #[test]
    fn audit_output_files_are_private_and_hold_no_env_secrets() {
        let f = Fixture::new();
        write(
            f.p("job/job.env"),
            &format!(
                "# job env\nCUDA_LAUNCH_BLOCKING=1\nOMP_NUM_THREADS=4\n{}\n",
                SECRETS
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        );
        for format in ["json", "junit", "text", "nagios", "slurm", "prometheus"] {
            let out_file = f.p(&format!("audit.{format}"));
            let out = f.run(&["audit", "--format", format, "--output", &out_file]);
            assert!(Path::new(&out_file).exists(), "{format}: {}", out.all());
            let text = std::fs::read_to_string(&out_file).unwrap();
            let mode = std::fs::metadata(&out_file).unwrap().mode() & 0o777;
            let want = if format == "prometheus" { 0o644 } else { 0o600 };
            assert_eq!(mode, want, "{format}: mode {mode:o}");
            assert!(
                leaked(&text).is_empty(),
                "{format} output leaks {:?}",
                leaked(&text)
            );
            if format == "json" {
                // the env file's text is still shown, filtered: the change is visible
                assert!(text.contains("CUDA_LAUNCH_BLOCKING=1"), "{text}");
                assert!(text.contains("HF_TOKEN=<redacted>"), "{text}");
            }
        }
        // apply's own output and the plan file: filtered too; the plan still applies
        let out = f.run(&["--format", "json", "apply", "--dry-run"]);
        assert!(leaked(&out.all()).is_empty(), "{}", out.all());
        let (path, _) = f.plan();
        let plan = std::fs::read_to_string(&path).unwrap();
        assert!(
            leaked(&plan).is_empty(),
            "plan -o leaks {:?}",
            leaked(&plan)
        );
        let out = f.run(&["apply", "--yes", &path]);
        assert_eq!(out.code, Some(0), "{}", out.all());
        assert!(leaked(&out.all()).is_empty(), "{}", out.all());
        let env = std::fs::read_to_string(f.p("job/job.env")).unwrap();
        assert!(!env.contains("CUDA_LAUNCH_BLOCKING=1"), "{env}");
        assert!(
            env.contains(SECRETS[0].1),
            "the file itself keeps its secrets: {env}"
        );
    }
}

/// Issue 23, item 5: every input kind has a size bound, enforced while reading; a cut input
/// never gives pass; nesting and expression depth are bounded before parsing; a forced
/// rollback over a corrupt journal says what it could not undo.
mod bounds {
    use super::*;

    /// Run under a 1 GiB address-space limit: an input that would need more aborts the run.
    fn bounded(args: &[String]) -> Out {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
            .arg(bin())
            .arg("--no-system")
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        run_cmd(c)
    }

    const XID: &str = "Dec  2 12:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n";

    /// A sparse file of `holes` NUL bytes with `tail` written at its end (and `head` at its start).
    fn sparse(path: &str, head: &str, holes: u64, tail: &str) {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(path).unwrap();
        f.write_all(head.as_bytes()).unwrap();
        f.seek(SeekFrom::Start(holes)).unwrap();
        f.write_all(tail.as_bytes()).unwrap();
    }

    fn verdict(out: &Out, rule: &str) -> (String, String) {
        let v: Value =
            serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.all()));
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == rule)
            .unwrap_or_else(|| panic!("no {rule}: {}", out.stdout));
        (
            r["verdict"].as_str().unwrap().to_string(),
            format!("{} {}", r["reason"], r["messages"]),
        )
    }

    #[test]
    fn a_3gb_env_file_is_refused_in_bounded_memory() {
        let f = Fixture::new();
        let env = f.p("huge.env");
        sparse(
            &env,
            "CUDA_LAUNCH_BLOCKING=1\n",
            3 << 30,
            "\nOMP_NUM_THREADS=1\n",
        );
        let out = bounded(&strs(&[
            "--env-file",
            &env,
            "--only",
            "cuda.launch-blocking",
            "--sample",
            "0",
            "plan",
        ]));
        assert_eq!(out.code, Some(1), "ends normally (no abort): {}", out.all());
        assert!(out.stderr.contains("input too large"), "{}", out.stderr);
        assert!(out.stderr.contains("--env-file"), "{}", out.stderr);
        assert!(out.took < Duration::from_secs(5), "took {:?}", out.took);
    }

    #[test]
    fn a_kernel_log_with_an_xid_past_the_cap_is_not_pass() {
        let f = Fixture::new();
        let args = |log: &str| {
            strs(&[
                "--kernel-log",
                log,
                "--only",
                "driver.xid-errors",
                "--format",
                "json",
                "plan",
            ])
        };
        // 300 MiB: the Xid is on its last line, past the first 256 MiB
        let log = f.p("kern.log");
        sparse(&log, "boot\n", 300 << 20, &format!("\n{XID}"));
        let out = bounded(&args(&log));
        let (v, why) = verdict(&out, "driver.xid-errors");
        assert_eq!(v, "fail", "{why}");
        assert!(why.contains("input too large"), "says it read part: {why}");
        // the Xid only in the part left out (the oldest): unknown, never pass
        let old = f.p("old.log");
        sparse(&old, XID, 300 << 20, "\nnothing to see\n");
        let out = bounded(&args(&old));
        let (v, why) = verdict(&out, "driver.xid-errors");
        assert_eq!(v, "unknown", "{why}");
        assert!(why.contains("input too large"), "{why}");
    }

    #[test]
    fn a_gzip_trace_holding_one_huge_string_stays_bounded() {
        use std::io::Write;
        let f = Fixture::new();
        let trace = f.p("trace.json.gz");
        let mut z = flate2::write::GzEncoder::new(
            std::fs::File::create(&trace).unwrap(),
            flate2::Compression::fast(),
        );
        z.write_all(br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": ""#)
            .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..1024 {
            z.write_all(&chunk).unwrap(); // one 1 GiB string
        }
        z.write_all(br#"", "ts": 1, "dur": 1}]}"#).unwrap();
        z.finish().unwrap();
        let out = bounded(&strs(&[
            "--trace",
            &trace,
            "--only",
            "launch",
            "--sample",
            "0",
            "--format",
            "json",
            "plan",
            "--probe-timeout",
            "120s",
        ]));
        assert_eq!(out.code, Some(2), "ends normally (no abort): {}", out.all());
        assert!(out.stdout.contains("input too large"), "{}", out.stdout);
        // bounded in time too (a debug build on a loaded machine reads 16 MiB twice here)
        assert!(out.took < Duration::from_secs(60), "took {:?}", out.took);
    }

    #[test]
    fn nesting_and_expression_depth_bombs_are_refused_in_under_a_second() {
        let f = Fixture::new();
        // 30,000 `not` in a fail_when
        let dir = f.p("deep");
        write(
            format!("{dir}/p.yaml"),
            &format!(
                "playbook: site\nlayer: data\ntitle: Site\nrules:\n  - id: site.deep\n    title: Deep\n    why: Test.\n    severity: info\n    probes:\n      c: {{ kind: env }}\n    fail_when: \"{}true\"\n    message: x\n",
                "not ".repeat(30_000)
            ),
        );
        let out = run_cmd(gpufix(&strs(&["--playbooks", &dir, "validate"])));
        assert_eq!(out.code, Some(1), "{}", out.all());
        // 0.07 s of CPU, 0.35-0.55 s wall on a loaded 2-core machine; 2 s for the test's own load
        assert!(out.took < Duration::from_secs(2), "took {:?}", out.took);
        assert!(
            out.stderr.contains("expression") && out.stderr.contains("the limit is"),
            "{}",
            &out.stderr[out.stderr.len().saturating_sub(500)..]
        );
        // nested JSON and YAML pasted as evidence (480 KB)
        for (name, text) in [
            (
                "deep.json",
                "{\"a\":".repeat(80_000) + "1" + &"}".repeat(80_000),
            ),
            (
                "deep.yaml",
                "a: ".to_string() + &"[".repeat(240_000) + &"]".repeat(240_000),
            ),
        ] {
            let p = f.p(name);
            std::fs::write(&p, text).unwrap();
            for flag in ["--evidence", "--config"] {
                let out = run_cmd(gpufix(&strs(&[flag, &p, "--sample", "0", "plan"])));
                // a whole plan, not only the parse (every job-text reader still scans the
                // text, linearly): well under the 38 s a release build took on 480 KB, even as
                // a debug build on a loaded machine
                assert!(
                    out.took < Duration::from_secs(30),
                    "{flag} {name}: took {:?}",
                    out.took
                );
                assert_ne!(out.code, Some(134), "{flag} {name}: {}", out.all());
                assert_ne!(out.code, None, "{flag} {name}: killed: {}", out.all());
            }
        }
    }

    #[test]
    fn a_paste_of_hundreds_of_gpus_is_judged_in_time_linear_in_them() {
        // an `lspci -vv` excerpt of one GPU (a public blog's GT 730), pasted 40 and 320 times:
        // each GPU is a `for_each` item, and an item's context used to be the whole context
        // copied and converted again (quadratic: 200 GPUs took 2 s, a fleet's thousand minutes)
        let one = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/corpus/h29_blog_billauer_lspci_gt730_idle_2_5gts.txt"
        ))
        .unwrap();
        let f = Fixture::new();
        let time = |n: usize| {
            let p = f.p(&format!("lspci{n}.txt"));
            std::fs::write(&p, one.repeat(n)).unwrap();
            (0..2)
                .map(|_| {
                    let out = run_cmd(gpufix(&strs(&["--evidence", &p, "--sample", "0", "plan"])));
                    assert!(matches!(out.code, Some(0..=2)), "{}", out.all());
                    out.took
                })
                .min()
                .unwrap()
        };
        let (small, big) = (time(40), time(320));
        // 8 times the GPUs: about 8 times the time when linear (less, with the start-up), about
        // 64 when quadratic
        assert!(big < small * 24, "40 GPUs {small:?}, 320 GPUs {big:?}");
    }

    #[test]
    fn python_and_shell_nested_past_the_tree_limit_end_cleanly() {
        // each overflowed a reader's stack (an abort, exit 134) or kept the edit check busy for
        // minutes before syntax::MAX_DEPTH; now the config says why it is not read
        let f = Fixture::new();
        let deep = 20_000;
        for (name, text) in [
            (
                "parens.py",
                format!(
                    "import torch\nn = {}1{}\nloader = DataLoader(ds, num_workers=n, pin_memory=False)\n",
                    "(".repeat(deep),
                    ")".repeat(deep)
                ),
            ),
            (
                "lists.py",
                format!(
                    "import torch\nx = {}{}\nloader = DataLoader(ds, num_workers=2, pin_memory=False)\n",
                    "[".repeat(deep),
                    "]".repeat(deep)
                ),
            ),
            (
                "subshells.sh",
                format!(
                    "#!/bin/bash\n{}torchrun --nproc_per_node=8 train.py{}\n",
                    "( ".repeat(deep),
                    " )".repeat(deep)
                ),
            ),
        ] {
            let p = f.p(name);
            std::fs::write(&p, text).unwrap();
            for flag in ["--config", "--evidence"] {
                let out = run_cmd(gpufix(&strs(&[flag, &p, "--sample", "0", "plan"])));
                assert!(
                    matches!(out.code, Some(0..=2)),
                    "{flag} {name}: exit {:?}: {}",
                    out.code,
                    &out.stderr[out.stderr.len().saturating_sub(400)..]
                );
                assert!(
                    out.took < Duration::from_secs(60),
                    "{flag} {name}: took {:?}",
                    out.took
                );
            }
        }
        // the Python sources say why they are not read (or, on a slow debug build, that the
        // parse ran out of time), never read as sources that set nothing
        let out = run_cmd(gpufix(&strs(&[
            "--config",
            &f.p("parens.py"),
            "--sample",
            "0",
            "plan",
        ])));
        assert!(
            out.stdout.contains("levels deep") || out.stdout.contains("took more than"),
            "{}",
            out.all()
        );
    }

    #[test]
    fn rollback_force_over_a_corrupt_journal_names_what_it_could_not_undo() {
        let f = Fixture::new();
        let out = f.run(&["apply", "--yes"]);
        assert_eq!(out.code, Some(0), "{}", out.all());
        let runs = f.state_dir().join("runs");
        let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
        let j = run.path().join("journal.jsonl");
        // the first intent record (the prior state of the first change) is garbage
        let text = std::fs::read_to_string(&j).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let first: Value = serde_json::from_str(&lines[0]).unwrap();
        let target = first["changes"][0]["target"].as_str().unwrap().to_string();
        assert!(lines[1].contains("\"intent\""), "{}", lines[1]);
        lines[1] = format!("{{garbage{}", &lines[1][..20]);
        std::fs::write(&j, lines.join("\n") + "\n").unwrap();
        let out = f.journal(&["rollback", "--force"]);
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(
            out.stderr.contains("not undone") && out.stderr.contains(&target),
            "names what is left: {}",
            out.stderr
        );
        assert!(out.stderr.contains("change(s) undone"), "{}", out.stderr);
    }

    #[test]
    fn apply_refuses_a_recorded_host() {
        let f = Fixture::new();
        let snap = f.p("snap.json");
        let out = f.run(&["snapshot", "-o", &snap]);
        assert_eq!(out.code, Some(0), "{}", out.all());
        let before = f.state();
        let out = run_cmd(gpufix(&strs(&[
            "--snapshot",
            &snap,
            "--config",
            &f.p("job/config.yaml"),
            "--env-file",
            &f.p("job/job.env"),
            "apply",
            "--yes",
            "--state-dir",
            &f.p("state"),
        ])));
        assert_eq!(out.code, Some(1), "{}", out.all());
        assert!(
            out.stderr
                .contains("a recorded host cannot be changed; use `plan --snapshot`"),
            "{}",
            out.stderr
        );
        assert!(!out.stdout.contains("applied"), "{}", out.stdout);
        assert!(!Path::new(&f.p("state")).exists(), "no journal was written");
        assert_eq!(f.state(), before, "nothing changed");
    }
}

/// Attack 8 (commands): a probe's output is capped, a probe is killed with its group at the
/// deadline, and processes that left the group are swept.
mod command_probes {
    use super::*;

    fn probe_playbook(f: &Fixture, argv: &str, timeout_ms: u64) -> String {
        let dir = f.p("cmd");
        write(
            format!("{dir}/p.yaml"),
            &format!(
                "playbook: site\nlayer: data\ntitle: Site\nrules:\n  - id: site.cmd\n    title: Runs a command\n    why: Test.\n    severity: info\n    probes:\n      c: {{ kind: command, argv: {argv}, timeout_ms: {timeout_ms} }}\n    fail_when: \"c.found == false\"\n    message: x\n"
            ),
        );
        dir
    }

    fn alive_with(tag: &str) -> Vec<u32> {
        let mut v = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline"))
                && String::from_utf8_lossy(&c).contains(tag)
            {
                v.push(pid);
            }
        }
        v
    }

    #[test]
    fn a_flooding_probe_is_capped() {
        let f = Fixture::new();
        let dir = probe_playbook(&f, "[\"yes\"]", 3000);
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
            .arg(bin())
            .args(strs(&[
                "--no-system",
                "--playbooks",
                &dir,
                "--only",
                "site.cmd",
                "--format",
                "json",
                "plan",
                "--probe-timeout",
                "10s",
            ]))
            .stdin(Stdio::null());
        let out = run_cmd(c);
        assert_eq!(out.code, Some(2), "{}", out.all());
        assert!(
            out.stdout.contains("output cap"),
            "{}",
            &out.stdout[..out.stdout.len().min(2000)]
        );
    }

    #[test]
    fn an_escaped_grandchild_is_swept() {
        let f = Fixture::new();
        let tag = format!("{}", 200_000 + std::process::id() % 10_000);
        // a grandchild that leaves the group with setsid and outlives its parent
        let argv =
            format!("[\"/bin/sh\", \"-c\", \"setsid sleep {tag} >/dev/null 2>&1 & exit 0\"]");
        let dir = probe_playbook(&f, &argv, 5000);
        let out = run_cmd(gpufix(&strs(&[
            "--playbooks",
            &dir,
            "--only",
            "site.cmd",
            "plan",
        ])));
        std::thread::sleep(Duration::from_millis(300));
        let left = alive_with(&format!("sleep\0{tag}"));
        for p in &left {
            let _ = Command::new("kill").arg(p.to_string()).status();
        }
        assert!(
            left.is_empty(),
            "escapees left running: {left:?}\n{}",
            out.all()
        );
    }

    #[test]
    fn a_timeout_beyond_the_probe_deadline_still_kills() {
        let f = Fixture::new();
        let tag = format!("{}", 300_000 + std::process::id() % 10_000);
        let dir = probe_playbook(&f, &format!("[\"sleep\", \"{tag}\"]"), 3_600_000);
        let out = run_cmd(gpufix(&strs(&[
            "--playbooks",
            &dir,
            "--only",
            "site.cmd",
            "plan",
            "--probe-timeout",
            "1s",
        ])));
        std::thread::sleep(Duration::from_millis(300));
        let left = alive_with(&format!("sleep\0{tag}"));
        for p in &left {
            let _ = Command::new("kill").arg(p.to_string()).status();
        }
        assert!(
            left.is_empty(),
            "abandoned probe left running: {left:?}\n{}",
            out.all()
        );
    }
}

/// Attack 9: what the operator sees and approves is what will happen, shown safely.
mod hygiene {
    use super::*;

    #[test]
    fn terminal_escapes_are_shown_escaped() {
        let f = Fixture::new();
        write(
            f.p("job/job.env"),
            "CUDA_LAUNCH_BLOCKING=1\x1b]0;owned\x07\x1b[2J\nOMP_NUM_THREADS=4\n",
        );
        let out = f.run(&["apply", "--dry-run"]);
        assert_eq!(out.code, Some(0), "{}", out.all());
        assert!(
            !out.stdout.contains('\x1b'),
            "raw ESC in:\n{:?}",
            out.stdout
        );
        assert!(out.stdout.contains("\\x1b"), "{}", out.stdout);
        let plan = f.run(&["plan"]);
        assert!(!plan.stdout.contains('\x1b'), "{:?}", plan.stdout);
    }

    #[test]
    fn a_closed_pipe_ends_quietly() {
        let f = Fixture::new();
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        let mut c = gpufix(&f.args(&["plan", "--verbose"]));
        c.stdout(w).stderr(Stdio::piped());
        let o = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_ne!(o.status.code(), Some(101), "{stderr}");
    }
}

/// Issue 23: what a job names is read and written as its owner, nothing it chose runs as root,
/// and what gpufix opens is checked on the descriptor it reads. Each job here is a real process
/// run by `nobody` (uid 65534); gpufix attaches to it with `--pid`. They need root (to start a
/// job as another user, as gpufix's own users do) and `/usr/bin/python3` (the job's
/// interpreter); the tests run as root here and in CI.
mod job_authority {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    const NOBODY: u32 = 65534;
    const PYTHON: &str = "/usr/bin/python3";
    const TRAIN: &str = "import time\ntime.sleep(120)\n";
    const SECRET: &str = "SECRET-ROOT-ONLY-7f3a";

    fn prereqs() -> bool {
        let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
        let ok = root && Path::new(PYTHON).is_file();
        if !ok {
            eprintln!("skipped: needs root and {PYTHON}");
        }
        ok
    }

    /// A scratch tree every user may traverse (the jobs run as nobody).
    struct Scene {
        dir: tempfile::TempDir,
    }

    impl Scene {
        fn new() -> Scene {
            let dir = tempfile::tempdir().unwrap();
            chmod(dir.path(), 0o755);
            Scene { dir }
        }
        fn p(&self, rel: &str) -> String {
            self.dir.path().join(rel).display().to_string()
        }
        /// A directory `nobody` owns.
        fn user_dir(&self, rel: &str) -> String {
            let d = self.p(rel);
            std::fs::create_dir_all(&d).unwrap();
            std::os::unix::fs::chown(&d, Some(NOBODY), Some(NOBODY)).unwrap();
            chmod(&d, 0o755);
            d
        }
        /// A file `nobody` owns.
        fn user_file(&self, rel: &str, text: &str, mode: u32) -> String {
            let p = self.p(rel);
            write(&p, text);
            std::os::unix::fs::chown(&p, Some(NOBODY), Some(NOBODY)).unwrap();
            chmod(&p, mode);
            p
        }
        /// A root-owned 0600 file in a directory anybody may traverse.
        fn root_only(&self, rel: &str, text: &str) -> String {
            let p = self.p(rel);
            write(&p, text);
            chmod(Path::new(&p).parent().unwrap(), 0o755);
            chmod(&p, 0o600);
            p
        }
    }

    /// A training job: `python3 train.py ARGS` in `cwd` as nobody (through `wrap`, e.g.
    /// `unshare -m`, when given); killed on drop.
    struct Job(std::process::Child);

    impl Drop for Job {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    impl Job {
        fn pid(&self) -> String {
            self.0.id().to_string()
        }
    }

    fn start_job(cwd: &str, args: &[&str], env: &[(&str, &str)]) -> Job {
        let mut c = Command::new(PYTHON);
        c.arg("train.py")
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .envs(env.iter().copied())
            .uid(NOBODY)
            .gid(NOBODY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Job(c.spawn().unwrap())
    }

    fn job_args(pid: &str, extra: &[&str]) -> Vec<String> {
        let mut v = strs(&["--pid", pid, "--sample", "200ms"]);
        v.extend(strs(extra));
        v
    }

    #[test]
    fn a_root_only_config_a_job_names_is_neither_shown_nor_edited() {
        if !prereqs() {
            return;
        }
        let s = Scene::new();
        write(s.p("job/train.py"), TRAIN);
        chmod(s.p("job"), 0o755);
        let secret = s.root_only(
            "secret/root-only.yaml",
            &format!("data:\n  num_workers: 0   # {SECRET}\n  pin_memory: false\n"),
        );
        let before = std::fs::read(&secret).unwrap();
        let job = start_job(&s.p("job"), &["--config", &secret], &[]);
        let only = ["--only", "data.workers-too-few"];
        for fmt in ["text", "json"] {
            let mut a = job_args(&job.pid(), &only);
            a.extend(strs(&["--format", fmt, "plan"]));
            let out = run_cmd(gpufix(&a));
            assert!(
                !out.all().contains(SECRET),
                "{fmt} report echoes a root-only file the job named:\n{}",
                out.all()
            );
            if fmt == "json" {
                assert!(
                    out.stdout.contains("not readable as the job's owner"),
                    "{}",
                    out.all()
                );
            }
        }
        let mut a = job_args(&job.pid(), &only);
        a.extend(strs(&["apply", "--yes", "--state-dir", &s.p("state")]));
        let out = run_cmd(gpufix(&a));
        assert_eq!(
            std::fs::read(&secret).unwrap(),
            before,
            "apply edited a root-only file the job named: {}",
            out.all()
        );
        assert!(!out.all().contains(SECRET), "{}", out.all());
    }

    #[test]
    fn a_jobs_own_config_is_edited_as_its_owner_and_stays_theirs() {
        if !prereqs() {
            return;
        }
        let s = Scene::new();
        s.user_dir("job");
        write(s.p("job/train.py"), TRAIN);
        let cfg = s.user_file(
            "job/cfg.yaml",
            "data:\n  num_workers: 0\n  pin_memory: false\n",
            0o640,
        );
        let job = start_job(&s.p("job"), &["--config", "cfg.yaml"], &[]);
        let mut a = job_args(&job.pid(), &["--only", "data.workers-too-few"]);
        a.extend(strs(&["apply", "--yes", "--state-dir", &s.p("state")]));
        let out = run_cmd(gpufix(&a));
        assert_eq!(out.code, Some(0), "{}", out.all());
        let text = std::fs::read_to_string(&cfg).unwrap();
        assert!(!text.contains("num_workers: 0"), "{text}\n{}", out.all());
        let m = std::fs::metadata(&cfg).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o777),
            (NOBODY, NOBODY, 0o640)
        );
        // rollback restores it as the same owner
        let mut c = Command::new(bin());
        c.env("NO_COLOR", "1")
            .args(["rollback", "--state-dir", &s.p("state")])
            .stdin(Stdio::null());
        let out = run_cmd(c);
        assert_eq!(out.code, Some(0), "{}", out.all());
        assert_eq!(
            std::fs::read_to_string(&cfg).unwrap(),
            "data:\n  num_workers: 0\n  pin_memory: false\n"
        );
        let m = std::fs::metadata(&cfg).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o777),
            (NOBODY, NOBODY, 0o640)
        );
    }

    #[test]
    fn deep_runs_the_jobs_python_as_the_job_owner_never_as_root() {
        if !prereqs() {
            return;
        }
        let s = Scene::new();
        write(s.p("job/train.py"), TRAIN);
        chmod(s.p("job"), 0o755);
        // a venv the user owns: its python3 writes the uid it runs as
        let venv = s.user_dir("venv");
        s.user_dir("venv/bin");
        s.user_dir("venv/lib/python3.11/site-packages/torch-2.5.0.dist-info");
        let seen = s.user_dir("seen");
        let fake = s.user_file(
            "venv/bin/python3",
            &format!("#!/bin/sh\nid -u >> {seen}/uid\necho '{{}}'\n"),
            0o755,
        );
        let pb = s.p("site");
        write(
            format!("{pb}/deep.yaml"),
            "playbook: site\nlayer: cuda\ntitle: Site\nrules:\n  - id: site.deep\n    title: Runs the framework check\n    why: Test.\n    severity: info\n    probes:\n      s: { kind: cuda.stack, deep: true, timeout_ms: 20000 }\n    fail_when: \"false\"\n    message: x\n",
        );
        let job = start_job(&s.p("job"), &[], &[("VIRTUAL_ENV", venv.as_str())]);
        let out = run_cmd(gpufix(&job_args(
            &job.pid(),
            &[
                "--playbooks",
                &pb,
                "--only",
                "site.deep",
                "--deep",
                "--format",
                "json",
                "plan",
            ],
        )));
        let uids = std::fs::read_to_string(format!("{seen}/uid")).unwrap_or_default();
        assert!(
            !uids.lines().any(|u| u.trim() == "0"),
            "the job's {fake} ran as root: {uids:?}\n{}",
            out.all()
        );
        assert_eq!(
            uids.trim(),
            NOBODY.to_string(),
            "the job's python runs as the job's owner\n{}",
            out.all()
        );
    }

    #[test]
    fn a_container_jobs_config_swapped_for_a_link_never_leaks_a_host_file() {
        if !prereqs() || !Path::new("/usr/bin/unshare").exists() {
            return;
        }
        let s = Scene::new();
        // the host's file says 1 (a finding), the job's own says 4 (none): a report that finds
        // `num_workers is 1` read the host's root-only file
        let secret = s.root_only(
            "secret/host-only.yaml",
            &format!("data:\n  num_workers: 1 # {SECRET}\n"),
        );
        let jobdir = s.user_dir("job");
        write(s.p("job/train.py"), TRAIN);
        s.user_file("job/cfg.yaml", "data:\n  num_workers: 4\n", 0o644);
        // a job in its own mount namespace (a container), run by nobody
        let mut c = Command::new("/usr/bin/unshare");
        c.args(["-m", "--propagation", "private", "/usr/bin/setpriv"])
            .args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
            ])
            .args([PYTHON, "train.py", "--config", "cfg.yaml"])
            .current_dir(&jobdir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let job = Job(c.spawn().unwrap());
        // unshare and setpriv exec in place: wait until the process is the interpreter
        let t0 = Instant::now();
        while !std::fs::read(format!("/proc/{}/cmdline", job.pid()))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("train.py"))
            && t0.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        // the job swaps its config for an absolute link to the host's root-only file and back
        let stop = Arc::new(AtomicBool::new(false));
        let flip = {
            let stop = stop.clone();
            let (cfg, jobdir, secret) = (s.p("job/cfg.yaml"), jobdir.clone(), secret.clone());
            std::thread::spawn(move || {
                let (link, file) = (format!("{jobdir}/.l"), format!("{jobdir}/.f"));
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::remove_file(&link);
                    std::os::unix::fs::symlink(&secret, &link).unwrap();
                    std::fs::rename(&link, &cfg).unwrap();
                    std::thread::sleep(Duration::from_micros(300));
                    std::fs::write(&file, "data:\n  num_workers: 4\n").unwrap();
                    std::fs::rename(&file, &cfg).unwrap();
                    std::thread::sleep(Duration::from_micros(300));
                }
            })
        };
        let mut leaks = 0;
        let runs = 20;
        for _ in 0..runs {
            let out = run_cmd(gpufix(&job_args(
                &job.pid(),
                &["--only", "data.workers-too-few", "--format", "json", "plan"],
            )));
            if out.all().contains(SECRET) || out.all().contains("num_workers is 1 (") {
                leaks += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        flip.join().unwrap();
        assert_eq!(
            leaks, 0,
            "{leaks} of {runs} reports showed the host's root-only file"
        );
    }

    #[test]
    fn a_user_owned_pyspy_is_refused() {
        if !prereqs() {
            return;
        }
        let s = Scene::new();
        write(s.p("job/train.py"), TRAIN);
        chmod(s.p("job"), 0o755);
        let marker = s.p("pyspy-ran");
        s.user_dir("user");
        let spy = s.user_file(
            "user/py-spy",
            &format!("#!/bin/sh\nid -u >> {marker}\n"),
            0o755,
        );
        let pb = s.p("site");
        write(
            format!("{pb}/p.yaml"),
            "playbook: site\nlayer: launch\ntitle: Site\nrules:\n  - id: site.proc\n    title: Samples the job\n    why: Test.\n    severity: info\n    probes:\n      p: { kind: process }\n    fail_when: \"false\"\n    message: x\n",
        );
        let job = start_job(&s.p("job"), &[], &[]);
        let mut c = gpufix(&job_args(
            &job.pid(),
            &[
                "--playbooks",
                &pb,
                "--only",
                "site.proc",
                "--format",
                "json",
                "plan",
            ],
        ));
        c.env("GPUFIX_PYSPY", &spy);
        let out = run_cmd(c);
        assert!(
            !Path::new(&marker).exists(),
            "a user's GPUFIX_PYSPY ran as root: {}",
            out.all()
        );
    }

    #[test]
    fn a_playbook_link_flipped_to_a_users_file_never_runs() {
        if !prereqs() {
            return;
        }
        let s = Scene::new();
        let marker = s.p("probe-ran");
        // deep below many directories, as /etc/gpufix/... is a few: the check walks each one, so
        // a flip has a window between the check of a path and its open
        let good = s.p(&format!("trusted/{}site.yaml", "d/".repeat(120)));
        write(&good, &PROBE_PLAYBOOK.replace("touch MARKER", "true"));
        s.user_dir("user");
        let evil = s.user_file(
            "user/evil.yaml",
            &PROBE_PLAYBOOK.replace("MARKER", &marker),
            0o644,
        );
        let link = s.p("user/site.yaml");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        let spare = s.p("user/.spare");
        std::os::unix::fs::symlink(&evil, &spare).unwrap();
        // the user swaps the two links back and forth, one atomic exchange at a time
        let stop = Arc::new(AtomicBool::new(false));
        let flip = {
            let (stop, link, spare) = (stop.clone(), link.clone(), spare.clone());
            std::thread::spawn(move || {
                use rustix::fs::{CWD, RenameFlags, renameat_with};
                while !stop.load(Ordering::Relaxed) {
                    renameat_with(CWD, &link, CWD, &spare, RenameFlags::EXCHANGE).unwrap();
                }
            })
        };
        let (mut ran, runs) = (0, 100);
        for _ in 0..runs {
            let _ = run_cmd(gpufix(&strs(&[
                "--playbooks",
                &link,
                "--only",
                "site.probe",
                "--sample",
                "0",
                "plan",
            ])));
            if std::fs::remove_file(&marker).is_ok() {
                ran += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        flip.join().unwrap();
        assert_eq!(
            ran, 0,
            "a user's command probe ran as root in {ran} of {runs} runs"
        );
    }
}

/// Issue 23: `--root R` whose `sys` is a link: the sysfs write is resolved inside R.
#[test]
fn a_root_whose_sys_is_a_link_keeps_writes_inside() {
    let f = Fixture::new();
    // R/sys -> ../outside-sys: a path walk leaves R, a walk inside R (openat2 RESOLVE_IN_ROOT)
    // ends at R/outside-sys
    std::fs::rename(f.p("root/sys"), f.p("root/outside-sys")).unwrap();
    std::os::unix::fs::symlink("../outside-sys", f.p("root/sys")).unwrap();
    let victim = f.p(&format!("outside-sys/{}", &GOVERNOR["sys/".len()..]));
    // another value than the root's: a write and its undo both show
    write(&victim, "ondemand\n");
    let out = f.run(&[
        "--only",
        "launch.cpu-governor-powersave",
        "apply",
        "--yes",
        "--allow-disruptive",
    ]);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "ondemand\n",
        "a sysfs write left the root through R/sys: {}",
        out.all()
    );
}

/// Issue 22 item 4: gpufix makes no file at a name anybody could guess. A shell plants a link
/// to a victim (and a directory holding one, and a link to a directory) at every temporary
/// name gpufix has used — `$TMPDIR/gpufix-fstab-PID` (the fstab check's candidate, during plan,
/// audit and apply) and the Prometheus textfile's `.NAME.tmp.PID` — then execs gpufix, whose
/// pid is the shell's `$$`: nothing outside gpufix's own files changes.
#[test]
fn planted_temporary_names_are_never_followed() {
    let plants = [
        // a directory someone else made, holding a link where the candidate goes
        "mkdir TMP/gpufix-fstab-$$ && ln -s VICTIM TMP/gpufix-fstab-$$/fstab",
        // the directory name itself a link to another directory
        "ln -s VDIR TMP/gpufix-fstab-$$",
    ];
    for plant in plants {
        let f = Fixture::new();
        let tmp = f.p("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let victim = f.p("victim/file");
        write(&victim, "precious\n");
        let victim_dir = f.p("victim-dir");
        std::fs::create_dir_all(&victim_dir).unwrap();
        let out_dir = f.p("textfile");
        std::fs::create_dir_all(&out_dir).unwrap();
        let plant = plant
            .replace("TMP", &tmp)
            .replace("VICTIM", &victim)
            .replace("VDIR", &victim_dir);
        let before = f.state();
        for cmd in [
            &["plan"][..],
            &["audit", "--format", "prometheus", "--output"][..],
            &["apply", "--yes", "--allow-disruptive"][..],
        ] {
            let mut args = f.args(cmd);
            if cmd[0] == "audit" {
                args.push(format!("{out_dir}/gpufix.prom"));
            }
            let script = format!(
                "rm -rf {tmp}/* {out_dir}/.gpufix*; {plant} && ln -s {victim} {out_dir}/.gpufix.prom.tmp.$$ && exec \"$0\" \"$@\""
            );
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(&script)
                .arg(bin())
                .arg("--no-system")
                .args(&args)
                .env("NO_COLOR", "1")
                .env("TMPDIR", &tmp)
                .stdin(Stdio::null());
            let out = run_cmd(c);
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "precious\n",
                "{cmd:?} wrote through a planted name: {}",
                out.all()
            );
            assert!(
                std::fs::read_dir(&victim_dir).unwrap().next().is_none(),
                "{cmd:?} wrote into a planted directory: {}",
                out.all()
            );
        }
        // nothing else outside the fixture's own targets changed: the job's config and env
        // file, the governor and fstab are apply's; the textfile is audit's
        let after = f.state();
        for (k, v) in &before {
            let own = k.starts_with("job/") || k.starts_with("root/");
            if !own {
                assert_eq!(after.get(k), Some(v), "{k} changed");
            }
        }
    }
}
