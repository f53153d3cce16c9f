//! `mounts`: what is mounted where, from `/proc/mounts`, and which mount holds a given path.

use super::{ProbeCtx, ProbeKind, ProbeOutcome, param_str, read_text};
use serde_json::{Map, Value, json};

pub struct Mounts;

#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    pub options: Vec<String>,
}

impl Mount {
    pub fn to_json(&self) -> Value {
        json!({
            "device": self.device,
            "mount_point": self.mount_point,
            "fstype": self.fstype,
            "options": self.options,
        })
    }
}

/// Undo the kernel's octal escapes (`\040` is a space, `\011` a tab, `\012` a newline,
/// `\134` a backslash) in a mounts or fstab field.
pub fn decode_octal(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse `/proc/mounts` (or `/proc/self/mounts`); lines with fewer than four fields are skipped.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 {
                return None;
            }
            Some(Mount {
                device: decode_octal(f[0]),
                mount_point: decode_octal(f[1]),
                fstype: f[2].to_string(),
                options: f[3].split(',').map(decode_octal).collect(),
            })
        })
        .collect()
}

/// True when `path` is `mount_point` or below it (component-wise, so `/data2` is not under
/// `/data`).
pub fn is_under(path: &str, mount_point: &str) -> bool {
    if mount_point == "/" {
        return path.starts_with('/');
    }
    let mp = mount_point.trim_end_matches('/');
    path == mp
        || path
            .strip_prefix(mp)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The mount that holds `path`: the longest mount point that contains it; among equal ones the
/// last mounted, which is the one that shadows the others.
pub fn mount_for_path<'a>(mounts: &'a [Mount], path: &str) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if is_under(path, &m.mount_point)
            && best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// Parameters of the `mounts` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MountsParams {
    /// An absolute path whose mount to report as `for_path`.
    #[serde(default)]
    pub path: Option<String>,
}

impl ProbeKind for Mounts {
    fn name(&self) -> &'static str {
        "mounts"
    }
    fn doc(&self) -> &'static str {
        "Mounted filesystems from /proc/mounts, and the mount that holds a given path."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "mounts[].device",
                "source device (`/dev/vda`, `tmpfs`), escapes decoded",
            ),
            ("mounts[].mount_point", "where it is mounted"),
            ("mounts[].fstype", "filesystem type (`ext4`, `xfs`, `nfs4`)"),
            (
                "mounts[].options",
                "mount options as a list (`rw`, `relatime`, `noatime`)",
            ),
            (
                "for_path",
                "with `path`: the mount holding it (same fields as `mounts[]`); absent when none does",
            ),
        ]
    }
    fn params(&self) -> super::ParamsDecl {
        super::ParamsDecl::of::<MountsParams>()
    }
    fn check_params(&self, params: &Map<String, Value>) -> Vec<String> {
        match param_str(params, "path") {
            Some(p) if !p.starts_with('/') && !p.contains("{{") => {
                vec![format!(
                    "probe parameter `path` of `mounts` must be absolute, found `{p}`"
                )]
            }
            _ => Vec::new(),
        }
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        let text = match read_text(ctx.host, "/proc/mounts") {
            Ok(t) => t,
            Err(e) => return ProbeOutcome::Unknown(e),
        };
        let mounts = parse_mounts(&text);
        let mut out = Map::new();
        out.insert(
            "mounts".into(),
            Value::Array(mounts.iter().map(Mount::to_json).collect()),
        );
        if let Some(m) = param_str(params, "path").and_then(|p| mount_for_path(&mounts, p)) {
            out.insert("for_path".into(), m.to_json());
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

    const MOUNTS: &str = "/dev/vda / ext4 rw,relatime 0 0\n\
        /dev/vdb /data xfs rw,noatime 0 0\n\
        tmpfs /data/tmp tmpfs rw 0 0\n\
        /dev/vdc /data xfs rw,relatime 0 0\n\
        /dev/sdb1 /mnt/my\\040disk ext4 rw 0 0\n";

    #[test]
    fn decodes_octal_escapes() {
        assert_eq!(decode_octal("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(decode_octal("a\\134b"), "a\\b");
        assert_eq!(decode_octal("trailing\\04"), "trailing\\04");
        let m = parse_mounts(MOUNTS);
        assert_eq!(m[4].mount_point, "/mnt/my disk");
    }

    #[test]
    fn for_path_is_the_longest_prefix_and_the_last_of_duplicates() {
        let m = parse_mounts(MOUNTS);
        assert_eq!(
            mount_for_path(&m, "/data/set/x").unwrap().device,
            "/dev/vdc"
        );
        assert_eq!(mount_for_path(&m, "/data/tmp/a").unwrap().fstype, "tmpfs");
        assert_eq!(mount_for_path(&m, "/data2/x").unwrap().device, "/dev/vda");
        assert_eq!(mount_for_path(&m, "/data").unwrap().device, "/dev/vdc");
    }

    #[test]
    fn probe_reports_mounts_and_for_path() {
        let mut h = SnapshotHost::empty();
        h.set_file("/proc/mounts", MOUNTS);
        let v = value_of(run_with(
            &Mounts,
            &h,
            json!({"path": "/data/set"}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v["mounts"].as_array().unwrap().len(), 5);
        assert_eq!(v["for_path"]["options"], json!(["rw", "relatime"]));
        assert_eq!(v["for_path"]["mount_point"], json!("/data"));
    }

    #[test]
    fn relative_path_is_rejected() {
        let p = json!({"path": "data"});
        let errs = crate::probes::check_params(&Mounts, p.as_object().unwrap());
        assert_eq!(
            errs,
            vec!["probe parameter `path` of `mounts` must be absolute, found `data`"]
        );
    }
}
