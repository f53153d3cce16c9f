//! `mounts`: what is mounted where, from `/proc/mounts`, and which mount holds a given path.

use super::{Probe, ProbeCtx, ProbeOutcome, read_text};
use serde_json::{Map, Value};

pub struct Mounts;

pub use crate::formats::mounts::{Mount, decode_octal, is_under, mount_for_path, parse_mounts};

/// Parameters of the `mounts` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MountsParams {
    /// An absolute path whose mount to report as `for_path`.
    #[serde(default)]
    pub path: Option<String>,
}

impl Probe for Mounts {
    type Params = MountsParams;
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
    fn check(&self, params: &MountsParams) -> Vec<String> {
        match params.path.as_deref() {
            Some(p) if !p.starts_with('/') && !p.contains("{{") => {
                vec![format!(
                    "probe parameter `path` of `mounts` must be absolute, found `{p}`"
                )]
            }
            _ => Vec::new(),
        }
    }
    fn run(&self, params: &MountsParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let text = match read_text(ctx.host, "/proc/mounts") {
            Ok(t) => t,
            Err(e) => return e.into(),
        };
        let mounts = parse_mounts(&text);
        let mut out = Map::new();
        out.insert(
            "mounts".into(),
            Value::Array(mounts.iter().map(Mount::to_json).collect()),
        );
        if let Some(m) = params
            .path
            .as_deref()
            .and_then(|p| mount_for_path(&mounts, p))
        {
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
    use serde_json::json;
    use std::time::Duration;

    const MOUNTS: &str = "/dev/vda / ext4 rw,relatime 0 0\n\
        /dev/vdb /data xfs rw,noatime 0 0\n\
        tmpfs /data/tmp tmpfs rw 0 0\n\
        /dev/vdc /data xfs rw,relatime 0 0\n\
        /dev/sdb1 /mnt/my\\040disk ext4 rw 0 0\n";

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
