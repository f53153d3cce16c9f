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

/// Decodes the `\NNN` octal escapes the kernel and fstab(5) use for whitespace.
fn unescape(field: &str) -> String {
    super::clip(&crate::probes::mounts::decode_octal(field), 4096)
}

fn options(field: &str) -> Vec<String> {
    field
        .split(',')
        .filter(|o| !o.is_empty())
        .take(256)
        .map(|o| super::clip(o, 256))
        .collect()
}

pub fn parse_fstab(text: &str) -> Fstab {
    let mut t = Fstab::default();
    for line in super::content_lines(text) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() < 3 {
            t.skipped += 1;
            continue;
        }
        if t.entries.len() >= super::MAX_ITEMS {
            t.skipped += 1;
            continue;
        }
        t.entries.push(FstabEntry {
            device: unescape(fields[0]),
            mount_point: unescape(fields[1]),
            fstype: unescape(fields[2]),
            // fstab(5): options default to `defaults` when the field is missing.
            options: fields
                .get(3)
                .map(|o| options(o))
                .unwrap_or_else(|| vec!["defaults".into()]),
            dump: fields.get(4).and_then(|d| d.parse().ok()),
            pass: fields.get(5).and_then(|p| p.parse().ok()),
        });
    }
    t
}

pub fn parse_proc_mounts(text: &str) -> Mounts {
    let mut m = Mounts::default();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() < 4 || m.mounts.len() >= super::MAX_ITEMS {
            m.skipped += 1;
            continue;
        }
        m.mounts.push(Mount {
            device: unescape(fields[0]),
            mount_point: unescape(fields[1]),
            fstype: unescape(fields[2]),
            options: options(fields[3]),
        });
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
