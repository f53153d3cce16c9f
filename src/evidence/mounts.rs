//! `/etc/fstab` and `/proc/mounts` tables. Both are whitespace-separated with octal escapes
//! (`\040` for a space) in the path fields; fstab allows `#` comments and omitted dump/pass.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FstabEntry {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    pub options: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Fstab {
    pub entries: Vec<FstabEntry>,
    /// Non-comment lines with fewer than three fields.
    pub skipped: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Mount {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    pub options: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Mounts {
    pub mounts: Vec<Mount>,
    pub skipped: u64,
}

// Both tables are read by the shared readers in [`crate::formats`]; this module only bounds
// what pasted evidence can make gpufix hold (field length, option count, entry count).

fn clipped(field: &str) -> String {
    super::clip(field, 4096)
}

fn options(opts: Vec<String>) -> Vec<String> {
    opts.into_iter()
        .take(256)
        .map(|o| super::clip(&o, 256))
        .collect()
}

pub fn parse_fstab(text: &str) -> Fstab {
    let entries = crate::formats::fstab::parse_fstab(text);
    let mut t = Fstab {
        entries: Vec::new(),
        skipped: crate::formats::fstab::short_lines(text) as u64,
    };
    for e in entries {
        if t.entries.len() >= super::MAX_ITEMS {
            t.skipped += 1;
            continue;
        }
        t.entries.push(FstabEntry {
            device: clipped(&e.device),
            mount_point: clipped(&e.mount_point),
            fstype: clipped(&e.fstype),
            options: options(e.options),
            dump: e.dump,
            pass: e.pass,
        });
    }
    t
}

pub fn parse_proc_mounts(text: &str) -> Mounts {
    let mut m = Mounts::default();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        match crate::formats::mounts::mounts_line(line) {
            Some(x) if m.mounts.len() < super::MAX_ITEMS => m.mounts.push(Mount {
                device: clipped(&x.device),
                mount_point: clipped(&x.mount_point),
                fstype: clipped(&x.fstype),
                options: options(x.options),
            }),
            _ => m.skipped += 1,
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    #[test]
    fn h200_fstab_and_mounts() {
        let f = parse_fstab(&fixture("mounts/h200_fstab"));
        let m = parse_proc_mounts(&fixture("mounts/h200_proc_mounts"));
        assert!(
            m.mounts
                .iter()
                .any(|x| x.mount_point == "/proc" && x.fstype == "proc")
        );
        assert_eq!(m.skipped, 0);
        insta::assert_json_snapshot!("mounts_h200_fstab", f);
        insta::assert_json_snapshot!("mounts_h200_proc_mounts", m);
    }

    #[test]
    fn fstab_fields_escapes_and_defaults() {
        let f = parse_fstab(
            "# comment\nUUID=abcd /data\\040set ext4 defaults,noatime 0 2\n/dev/sdb1 /scratch xfs\nbroken line\n",
        );
        assert_eq!(f.entries.len(), 2);
        assert_eq!(f.entries[0].mount_point, "/data set");
        assert_eq!(f.entries[0].options, ["defaults", "noatime"]);
        assert_eq!((f.entries[0].dump, f.entries[0].pass), (Some(0), Some(2)));
        assert_eq!(f.entries[1].options, ["defaults"]);
        assert_eq!(f.entries[1].pass, None);
        assert_eq!(f.skipped, 1);
    }

    #[test]
    fn every_truncation_parses() {
        let text = fixture("mounts/h200_proc_mounts");
        for p in prefixes(&text, 11) {
            let m = parse_proc_mounts(p);
            assert!(m.mounts.len() <= text.lines().count());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn random_text_never_panics(s in "\\PC{0,600}") {
            let _ = parse_fstab(&s);
            let _ = parse_proc_mounts(&s);
        }

        #[test]
        fn escapes_never_panic(s in "(\\\\[0-9]{0,4}|[a-z /])*") {
            let _ = parse_fstab(&format!("{s} {s} ext4 {s}"));
        }
    }
}
