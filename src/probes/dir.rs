//! `dir`: the entries of one directory (e.g. /sys/class/infiniband, /sys/class/net).

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::json;

pub struct Dir;

/// Parameters of the `dir` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirParams {
    /// Absolute directory path.
    pub path: String,
}

impl Probe for Dir {
    type Params = DirParams;
    fn name(&self) -> &'static str {
        "dir"
    }
    fn doc(&self) -> &'static str {
        "entries of a directory on the host"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("path", "the directory"),
            ("exists", "false when it is absent"),
            ("entries", "entry names, sorted"),
        ]
    }
    fn run(&self, params: &DirParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let path = params.path.as_str();
        match ctx.host.read_dir(path) {
            Ok(entries) => {
                ProbeOutcome::Value(json!({"path": path, "exists": true, "entries": entries}))
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && !e.to_string().contains("snapshot")
                    && !e.to_string().contains(crate::host::NOT_IN_EVIDENCE) =>
            {
                ProbeOutcome::Value(json!({"path": path, "exists": false, "entries": []}))
            }
            Err(e) => ProbeOutcome::Unknown(format!("cannot list {path}: {e}")),
        }
    }
}
