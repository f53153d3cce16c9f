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

/// The fields after the mount point hold what fstab(5) and proc_pid_mounts(5) put there: a
/// filesystem type (`ext4`, `nfs4`, `fuse.sshfs`: lower-case letters, digits and `._+-`), mount
/// options separated by commas, then the dump and pass numbers. A sentence that names a path
/// second (`Is /dev/shm large enough?`) is no mount row.
fn row_fields_hold(f: &[&str]) -> bool {
    let fstype = |t: &str| {
        t.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && t.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._+-".contains(c))
    };
    let options = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_=.,:/@+-\"'".contains(c))
    };
    let number = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    fstype(f[2]) && f.get(3).is_none_or(|o| options(o)) && f.iter().skip(4).all(|n| number(n))
}

/// Which of the two tables a text is, told apart by content: fstab has comments, `UUID=` or
/// `LABEL=` devices, options like `defaults`/`noauto`/`nofail`, or omits dump and pass;
/// `/proc/mounts` always prints six fields and none of those. `None` when most lines are not
/// mount rows.
fn mount_table_kind(h: &str) -> Option<MountTable> {
    let lines: Vec<&str> = h.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let comments = lines.iter().filter(|l| l.starts_with('#')).count();
    let rows: Vec<Vec<&str>> = lines
        .iter()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let table_rows = rows
        .iter()
        .filter(|f| {
            f.len() >= 3
                && f.len() <= 6
                && (f[1].starts_with('/') || f[1] == "none" || f[1] == "swap")
                && row_fields_hold(f)
        })
        .count();
    if rows.is_empty() {
        // Only comments: an fstab with nothing configured (a fresh install's placeholder).
        return (comments > 0
            && lines
                .iter()
                .any(|l| l.to_ascii_lowercase().contains("fstab")))
        .then_some(MountTable::Fstab);
    }
    if table_rows * 2 <= rows.len() {
        return None;
    }
    let fstab_markers = comments > 0
        || rows.iter().any(|f| {
            f[0].starts_with("UUID=")
                || f[0].starts_with("LABEL=")
                || f[0].starts_with("PARTUUID=")
                || f.get(3).is_some_and(|o| {
                    o.split(',')
                        .any(|x| x == "defaults" || x == "noauto" || x == "nofail")
                })
                || f.len() < 6
        });
    Some(if fstab_markers {
        MountTable::Fstab
    } else {
        MountTable::ProcMounts
    })
}

#[derive(PartialEq)]
enum MountTable {
    Fstab,
    ProcMounts,
}

/// `/etc/fstab`.
pub struct FstabKind;

impl super::EvidenceKind for FstabKind {
    fn name(&self) -> &'static str {
        "fstab"
    }
    fn doc(&self) -> &'static str {
        "/etc/fstab: the filesystems mounted at boot and their options"
    }
    fn example(&self) -> &'static str {
        "cat /etc/fstab"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "entries",
                "device, mount_point, fstype, options, dump, pass",
            ),
            ("skipped", "lines with fewer than three fields"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["fstab", "mounts.data"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        mount_table_kind(s.head) == Some(MountTable::Fstab)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_fstab(text))
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::File(
            "/etc/fstab",
            text.as_bytes().to_vec(),
        )))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `/proc/mounts`.
pub struct ProcMounts;

/// Fields of [`Mounts`], which every mount-table kind but fstab yields.
pub(crate) const MOUNTS_FIELDS: &[(&str, &str)] = &[
    ("mounts", "device, mount_point, fstype, options"),
    ("skipped", "lines that are not mount rows"),
];

impl super::EvidenceKind for ProcMounts {
    fn name(&self) -> &'static str {
        "proc-mounts"
    }
    fn doc(&self) -> &'static str {
        "/proc/mounts: what is mounted now, with the options in force"
    }
    fn example(&self) -> &'static str {
        "cat /proc/mounts"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        MOUNTS_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["mounts", "mounts.data", "shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        mount_table_kind(s.head) == Some(MountTable::ProcMounts)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_proc_mounts(text))
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::File(
            "/proc/mounts",
            text.as_bytes().to_vec(),
        )))
    }
    fn describes_host(&self) -> bool {
        true
    }
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
