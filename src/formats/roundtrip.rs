//! Round trips across the probe/fix boundary, one property per format: what a fix writes, the
//! probe that judges the file reads back as the new value, and every other line keeps its
//! bytes. The readers here are the probes' own entry points, not the editors' getters, so a
//! parser split between the two sides fails these tests.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

use super::{config, env, fstab, modprobe, mounts, sysctl};

/// (lines removed, lines added) from `old` to `new`, terminators included.
fn line_diff(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for c in TextDiff::from_lines(old, new).iter_all_changes() {
        match c.tag() {
            ChangeTag::Delete => removed.push(c.value().to_string()),
            ChangeTag::Insert => added.push(c.value().to_string()),
            ChangeTag::Equal => {}
        }
    }
    (removed, added)
}

/// Only the edited line (or, when a line is appended to a file without a final newline, the
/// old last line gaining its newline) may leave the file.
fn only_one_line_changed(old: &str, new: &str) -> Result<(), TestCaseError> {
    let (removed, added) = line_diff(old, new);
    prop_assert!(removed.len() <= 1, "removed {:?}", removed);
    prop_assert!(added.len() <= 2, "added {:?}", added);
    if let [r] = removed.as_slice()
        && added.len() == 2
    {
        // An append: the removed line is the old last one, now terminated.
        prop_assert!(!r.ends_with('\n') && added[0].starts_with(r.as_str()));
    }
    Ok(())
}

fn join(lines: &[String], crlf: bool, final_nl: bool) -> String {
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(nl);
    if final_nl && !s.is_empty() {
        s.push_str(nl);
    }
    s
}

fn env_file() -> impl Strategy<Value = (String, &'static str)> {
    let dotenv = proptest::collection::vec(
        "(# note|A=1|B='x y'|C=\"q \\\\\"z\\\\\"\"|D=a\t# tab comment|E.F=dotted|)",
        0..6,
    )
    .prop_map(|l| (l, "job.env"));
    let shell = proptest::collection::vec(
        "(#!/bin/sh|export A=1|export B='x y'|export C=\"a\\\\tb\"|echo hi|)",
        1..6,
    )
    .prop_map(|mut l| {
        l.insert(0, "export Z=0".into());
        (l, "run.sh")
    });
    let systemd =
        proptest::collection::vec("(Environment=A=1 \"B=x y\"|ExecStart=/bin/true|# c|)", 0..4)
            .prop_map(|mut l| {
                l.insert(0, "[Service]".into());
                (l, "/etc/systemd/system/train.service.d/env.conf")
            });
    let etc = proptest::collection::vec("(PATH=\"/usr/bin:/bin\"|LANG=C|# x|)", 0..4)
        .prop_map(|l| (l, "/etc/environment"));
    (
        prop_oneof![dotenv, shell, systemd, etc],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|((l, path), crlf, nl)| (join(&l, crlf, nl), path))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn env_probe_reads_what_env_set_writes(
        (old, path) in env_file(),
        key in "(A|B|C|GPUFIX_NEW|E\\.F)",
        value in "[ -~]{0,12}",
    ) {
        let path = Path::new(path);
        let format = env::detect_format(Some(path), &old);
        let etc = format == env::Format::Environment;
        prop_assume!(!(etc && value.contains(['"', '\\'])));
        let set = env::env_set(&old, Some(format), &key, &value);
        if key.contains('.') && format == env::Format::Shell {
            prop_assert!(set.is_err());
            return Ok(());
        }
        let new = set.unwrap();
        let before = env::read_vars(Some(path), &old);
        let after = env::read_vars(Some(path), &new);
        prop_assert_eq!(after.get(&key), Some(&value), "{}", new);
        if !etc {
            // The `env` probe reads a job's --env-file from its content alone.
            let probe = crate::probes::env::parse_env_file(&new);
            prop_assert_eq!(probe.get(&key), Some(&value));
        }
        for (k, v) in &before {
            if *k != key {
                prop_assert_eq!(after.get(k), Some(v));
            }
        }
        only_one_line_changed(&old, &new)?;
        prop_assert_eq!(env::env_set(&new, Some(format), &key, &value).unwrap(), new);
    }
}

const CONFIGS: &[(&str, &str)] = &[
    (
        "train.yaml",
        "# run\ndata:\n  num_workers: 2   # low\n  pin_memory: false\noptim:\n  lr: 0.1\n",
    ),
    (
        "train.toml",
        "# run\n[data]\nnum_workers = 2 # low\npin_memory = false\n\n[optim]\nlr = 0.1\n",
    ),
    (
        "ds.json",
        "{\n  \"data\": {\"num_workers\": 2, \"pin_memory\": false},\n  \"optim\": {\n    \"lr\": 0.1\n  }\n}\n",
    ),
    (
        "ds.jsonc",
        "{\n  // loader\n  \"data\": {\n    \"num_workers\": 2, // low\n    \"pin_memory\": false,\n  },\n  \"optim\": {\"lr\": 0.1},\n}\n",
    ),
    // Named with no telling extension: found by content.
    ("pasted.cfg", "[data]\nnum_workers = 2\n[optim]\nlr = 0.1\n"),
    ("pasted.txt", "data:\n  num_workers: 2\noptim:\n  lr: 0.1\n"),
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[ -~]{0,10}".prop_map(Value::from),
        (-1000i32..1000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn config_probe_reads_what_config_set_writes(
        which in 0..CONFIGS.len(),
        key in "(data\\.num_workers|data\\.persistent_workers|optim\\.lr|trainer\\.devices)",
        value in scalar(),
    ) {
        let (name, old) = CONFIGS[which];
        let format = config::ConfigFormat::detect(Some(Path::new(name)), old).unwrap();
        let new = config::config_set(old, format, &key, &value).unwrap();
        let (_, before) = crate::probes::config::parse_config(name, old).unwrap();
        let (_, after) = crate::probes::config::parse_config(name, &new).unwrap();
        prop_assert_eq!(crate::probes::config::get_path(&after, &key), Some(&value), "{}", new);
        // Everything else reads as before.
        let mut expected = before.clone();
        let segs = super::keypath::parse_key_path(&key).unwrap();
        let (parent, last) = segs.split_at(segs.len() - 1);
        let mut cur = &mut expected;
        for s in parent {
            let super::keypath::Seg::Key(k) = s else { unreachable!() };
            cur = cur.as_object_mut().unwrap().entry(k.clone()).or_insert_with(|| json!({}));
        }
        let super::keypath::Seg::Key(k) = &last[0] else { unreachable!() };
        cur.as_object_mut().unwrap().insert(k.clone(), value.clone());
        prop_assert_eq!(after, expected);
        let (removed, _) = line_diff(old, &new);
        prop_assert!(removed.len() <= 1, "{:?}", removed);
    }
}

fn fstab_file() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(
            "(# static table|UUID=1 / ext4 errors=remount-ro 0 1|/dev/vdc /scratch xfs|tmpfs /tmp tmpfs size=1g,mode=1777 0 0|)",
            0..5,
        ),
        "(/dev/vdb\t/data  xfs  defaults,relatime  0  2|/dev/vdb /data xfs|LABEL=d /data/ ext4 rw,atime,nofail)",
        0usize..5,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mut lines, data, at, crlf, nl)| {
            let at = at.min(lines.len());
            lines.insert(at, data);
            join(&lines, crlf, nl)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn fstab_probe_reads_what_fstab_options_writes(
        old in fstab_file(),
        add in "(noatime|nodiratime|lazytime|commit=60)",
        remove in proptest::option::of("(nofail|relatime|rw)"),
    ) {
        let remove: Vec<&str> = remove.iter().map(String::as_str).collect();
        let new = fstab::fstab_set_options(&old, "/data", &[&add], &remove).unwrap();
        let before = crate::probes::fstab::parse_fstab(&old);
        let after = crate::probes::fstab::parse_fstab(&new);
        prop_assert_eq!(before.len(), after.len());
        for (b, a) in before.iter().zip(&after) {
            if fstab::normalize_mount_point(&a.mount_point) == "/data" {
                prop_assert!(a.options.contains(&add), "{:?}", a.options);
                for r in &remove {
                    prop_assert!(!a.options.iter().any(|o| o == r));
                }
                prop_assert_eq!((&a.device, &a.fstype, a.dump, a.pass), (&b.device, &b.fstype, b.dump, b.pass));
            } else {
                prop_assert_eq!(a, b);
            }
        }
        let (removed, added) = line_diff(&old, &new);
        prop_assert!(removed.len() <= 1 && added.len() <= 1, "{:?} {:?}", removed, added);
        prop_assert_eq!(fstab::fstab_set_options(&new, "/data", &[&add], &remove).unwrap(), new);
    }

    #[test]
    fn mount_tables_read_back_their_escapes(
        device in "[a-z/ \\\\]{1,8}",
        mount_point in "/[a-z \t\\\\]{0,8}",
        options in proptest::collection::vec("[a-z=]{1,6}", 1..4),
    ) {
        let esc = |s: &str| s.replace('\\', "\\134").replace(' ', "\\040").replace('\t', "\\011");
        let line = format!("{} {} ext4 {} 0 0\n", esc(&device), esc(&mount_point), options.join(","));
        let m = mounts::parse_mounts(&line);
        prop_assert_eq!(m.len(), 1);
        prop_assert_eq!(&m[0].device, &device);
        prop_assert_eq!(&m[0].mount_point, &mount_point);
        prop_assert_eq!(&m[0].options, &options);
        let info = format!("36 25 8:1 / {} {} shared:1 - ext4 {} rw\n", esc(&mount_point), options.join(","), esc(&device));
        let mi = mounts::parse_mountinfo(&info);
        prop_assert_eq!(mi.len(), 1);
        prop_assert_eq!(&mi[0].mount_point, &mount_point);
        prop_assert_eq!(&mi[0].source, &device);
        let f = fstab::parse_fstab(&line);
        prop_assert_eq!(&f[0].mount_point, &mount_point);
    }

    #[test]
    fn sysctl_reader_reads_what_sysctl_set_writes(
        other in proptest::collection::vec("(# c|; c|vm.swappiness = 60|-kernel.numa_balancing=1|net/core/somaxconn = 128|)", 0..5),
        key in "(vm\\.swappiness|kernel/numa_balancing|net\\.core\\.somaxconn|vm\\.max_map_count)",
        value in "[0-9a-z ]{1,8}",
        crlf in any::<bool>(),
    ) {
        let old = join(&other, crlf, true);
        let new = sysctl::sysctl_set(&old, &key, &value).unwrap();
        let before = sysctl::parse_sysctl(&old);
        let after = sysctl::parse_sysctl(&new);
        let want = sysctl::normalize_key(&key);
        prop_assert_eq!(&after[&want].value, value.trim());
        for (k, s) in &before {
            if *k != want {
                prop_assert_eq!(&after[k].value, &s.value);
            }
        }
        only_one_line_changed(&old, &new)?;
    }

    #[test]
    fn modprobe_reader_reads_what_modprobe_set_writes(
        other in proptest::collection::vec("(# c|options nvidia NVreg_EnableGpuFirmware=0|options nvidia-drm modeset=1|blacklist nouveau|)", 0..5),
        module in "(nvidia|nvidia_drm|nvidia-uvm)",
        param in "(NVreg_EnableGpuFirmware|modeset|uvm_perf_prefetch_enable)",
        value in "[0-9a-z ]{0,6}",
    ) {
        let old = join(&other, false, true);
        let new = modprobe::modprobe_option_set(&old, &module, &param, Some(&value)).unwrap();
        let before = modprobe::parse_modprobe(&old);
        let after = modprobe::parse_modprobe(&new);
        prop_assert_eq!(after.option(&module, &param), Some(value.as_str()), "{}", new);
        prop_assert_eq!(&after.blacklist, &before.blacklist);
        for (m, ps) in &before.options {
            for (p, v) in ps {
                if !(modprobe_same(m, &module) && modprobe_same(p, &param)) {
                    prop_assert_eq!(after.option(m, p), Some(v.as_str()));
                }
            }
        }
        only_one_line_changed(&old, &new)?;
        let unset = modprobe::modprobe_option_set(&new, &module, &param, None).unwrap();
        let unset = modprobe::parse_modprobe(&unset);
        prop_assert_eq!(unset.option(&module, &param), None);
    }
}

fn modprobe_same(a: &str, b: &str) -> bool {
    a.replace('-', "_") == b.replace('-', "_")
}
