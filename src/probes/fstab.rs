//! `fstab`: the static mount table `/etc/fstab`, with the line each entry sits on (the
//! `fstab.options` fix edits that line).

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::formats::fstab::normalize_mount_point as norm;
use serde_json::{Map, Value, json};
use std::io;

pub struct Fstab;

#[derive(Debug, Clone, PartialEq)]
pub struct FstabEntry {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    pub options: Vec<String>,
    pub dump: u32,
    pub pass: u32,
    /// 1-based line number in the file.
    pub line: usize,
}

impl FstabEntry {
    pub fn to_json(&self) -> Value {
        json!({
            "device": self.device,
            "mount_point": self.mount_point,
            "fstype": self.fstype,
            "options": self.options,
            "dump": self.dump,
            "pass": self.pass,
            "line": self.line,
        })
    }
}

/// Parse fstab text with the shared reader ([`crate::formats::fstab::parse_fstab`]): comments
/// and blank lines are skipped; missing options default to `defaults`, missing dump and pass
/// to 0 (as mount(8) does). Lines with fewer than three fields are skipped.
pub fn parse_fstab(text: &str) -> Vec<FstabEntry> {
    crate::formats::fstab::parse_fstab(text)
        .into_iter()
        .map(|e| FstabEntry {
            device: e.device,
            mount_point: e.mount_point,
            fstype: e.fstype,
            options: e.options,
            dump: e.dump.unwrap_or(0),
            pass: e.pass.unwrap_or(0),
            line: e.line,
        })
        .collect()
}

/// Parameters of the `fstab` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FstabParams {
    /// Report the entry for this mount point as `entry`.
    #[serde(default)]
    pub mount_point: Option<String>,
}

impl Probe for Fstab {
    type Params = FstabParams;
    fn name(&self) -> &'static str {
        "fstab"
    }
    fn doc(&self) -> &'static str {
        "Entries of /etc/fstab with their line numbers, and the entry for a given mount point."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "exists",
                "false when /etc/fstab does not exist (containers often have none)",
            ),
            (
                "entries[].device",
                "first field (`/dev/vdb`, `UUID=...`, `LABEL=...`)",
            ),
            ("entries[].mount_point", "second field"),
            ("entries[].fstype", "third field"),
            (
                "entries[].options",
                "fourth field as a list (`defaults` when absent)",
            ),
            ("entries[].dump", "fifth field (0 when absent)"),
            ("entries[].pass", "sixth field (0 when absent)"),
            ("entries[].line", "1-based line number"),
            (
                "empty",
                "true when there are no entries (only comments, as on the recorded H200)",
            ),
            (
                "entry",
                "with `mount_point`: that entry (same fields as `entries[]`); absent when none, so test it with `is defined`",
            ),
        ]
    }
    fn run(&self, params: &FstabParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let (text, exists) = match ctx.host.read_file("/etc/fstab") {
            Ok(b) => (String::from_utf8_lossy(&b).into_owned(), true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => (String::new(), false),
            Err(e) => return ProbeOutcome::Unknown(format!("cannot read `/etc/fstab`: {e}")),
        };
        let entries = parse_fstab(&text);
        let mut out = Map::new();
        out.insert("exists".into(), json!(exists));
        out.insert(
            "entries".into(),
            Value::Array(entries.iter().map(FstabEntry::to_json).collect()),
        );
        out.insert("empty".into(), json!(entries.is_empty()));
        if let Some(mp) = params.mount_point.as_deref() {
            // The last entry wins, as it would when `mount -a` mounts them in order.
            if let Some(e) = entries
                .iter()
                .rev()
                .find(|e| norm(&e.mount_point) == norm(mp))
            {
                out.insert("entry".into(), e.to_json());
            }
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};
    use std::time::Duration;

    const FSTAB: &str = "# /etc/fstab\n\
        UUID=abcd / ext4 errors=remount-ro 0 1\n\
        \n\
        /dev/vdb /data xfs defaults,nofail\n\
        /dev/vdc\t/mnt/my\\040disk  ext4\n";

    #[test]
    fn parses_entries_with_defaults_and_line_numbers() {
        let e = parse_fstab(FSTAB);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].pass, 1);
        assert_eq!(e[1].line, 4);
        assert_eq!(e[1].options, vec!["defaults", "nofail"]);
        assert_eq!(e[1].dump, 0);
        assert_eq!(e[2].mount_point, "/mnt/my disk");
        assert_eq!(e[2].options, vec!["defaults"]);
    }

    #[test]
    fn entry_for_a_mount_point_or_absent() {
        let mut h = SnapshotHost::empty();
        h.set_file("/etc/fstab", FSTAB);
        let i = Inputs::default();
        let v = value_of(run_with(
            &Fstab,
            &h,
            json!({"mount_point": "/data/"}),
            &i,
            Duration::ZERO,
        ));
        assert_eq!(v["entry"]["device"], json!("/dev/vdb"));
        assert_eq!(v["empty"], json!(false));
        let v = value_of(run_with(
            &Fstab,
            &h,
            json!({"mount_point": "/scratch"}),
            &i,
            Duration::ZERO,
        ));
        assert!(v.get("entry").is_none(), "{v}");
    }

    #[test]
    fn comment_only_fstab_is_empty_and_missing_fstab_does_not_exist() {
        let mut h = SnapshotHost::empty();
        h.set_file("/etc/fstab", "# UNCONFIGURED FSTAB FOR BASE SYSTEM\n");
        let i = Inputs::default();
        let v = value_of(run_with(&Fstab, &h, json!({}), &i, Duration::ZERO));
        assert_eq!(v["empty"], json!(true));
        assert_eq!(v["exists"], json!(true));
        let v = value_of(run_with(
            &Fstab,
            &SnapshotHost::empty(),
            json!({}),
            &i,
            Duration::ZERO,
        ));
        assert_eq!(v["exists"], json!(false));
        assert_eq!(v["entries"], json!([]));
    }
}
