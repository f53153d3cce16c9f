//! `processes`: which PIDs exist on the host and which are zombies (to tell GPU memory held by
//! processes that are gone).

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::json;

pub struct Processes;

impl Probe for Processes {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "processes"
    }
    fn doc(&self) -> &'static str {
        "PIDs present in /proc and the zombies among them"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("pids", "every PID in /proc"),
            ("zombies", "PIDs in state Z (defunct)"),
            ("count", "number of processes"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let names = match ctx.host.read_dir("/proc") {
            Ok(n) => n,
            Err(e) => return ProbeOutcome::Unknown(format!("cannot list /proc: {e}")),
        };
        let pids: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
        let mut zombies = Vec::new();
        for pid in &pids {
            // procfs's parser (the command name may hold spaces and parentheses)
            if let Ok(raw) = ctx.host.read_file(&format!("/proc/{pid}/stat"))
                && super::process::parse_stat(&String::from_utf8_lossy(&raw))
                    .is_some_and(|st| st.state == "Z")
            {
                zombies.push(*pid);
            }
        }
        ProbeOutcome::Value(json!({"count": pids.len(), "pids": pids, "zombies": zombies}))
    }
}
