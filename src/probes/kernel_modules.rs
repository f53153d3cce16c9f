//! `kernel.modules`: the loaded kernel modules, from `/proc/modules` (not `lsmod`, which many
//! minimal hosts lack).

use super::{Probe, ProbeCtx, ProbeOutcome, read_text};
use serde_json::{Map, Value, json};

pub struct KernelModules;

/// One line of `/proc/modules`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcModule {
    pub name: String,
    pub size: u64,
    /// None when the kernel cannot unload modules and prints `-`.
    pub refcount: Option<u64>,
    pub used_by: Vec<String>,
    /// `Live`, `Loading` or `Unloading`.
    pub state: String,
}

/// Parse `/proc/modules` (`name size refcount deps state address [taints]`); malformed lines
/// are skipped.
pub fn parse_proc_modules(text: &str) -> Vec<ProcModule> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 5 {
                return None;
            }
            Some(ProcModule {
                name: f[0].to_string(),
                size: f[1].parse().ok()?,
                refcount: f[2].parse().ok(),
                used_by: f[3]
                    .split(',')
                    .filter(|d| !d.is_empty() && *d != "-")
                    .map(str::to_string)
                    .collect(),
                state: f[4].to_string(),
            })
        })
        .collect()
}

impl Probe for KernelModules {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "kernel.modules"
    }
    fn doc(&self) -> &'static str {
        "Loaded kernel modules, read from /proc/modules."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "loaded",
                "names of the loaded modules, in /proc/modules order",
            ),
            ("modules.NAME.size", "module size in bytes"),
            (
                "modules.NAME.refcount",
                "use count (absent when the kernel prints `-`)",
            ),
            ("modules.NAME.used_by", "modules that depend on it"),
            ("modules.NAME.state", "`Live`, `Loading` or `Unloading`"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let text = match read_text(ctx.host, "/proc/modules") {
            Ok(t) => t,
            Err(e) => return e.into(),
        };
        let mods = parse_proc_modules(&text);
        let mut modules = Map::new();
        for m in &mods {
            let mut o = Map::new();
            o.insert("size".into(), json!(m.size));
            if let Some(r) = m.refcount {
                o.insert("refcount".into(), json!(r));
            }
            o.insert("used_by".into(), json!(m.used_by));
            o.insert("state".into(), json!(m.state));
            modules.insert(m.name.clone(), Value::Object(o));
        }
        let loaded: Vec<&str> = mods.iter().map(|m| m.name.as_str()).collect();
        ProbeOutcome::Value(json!({ "loaded": loaded, "modules": modules }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};
    use std::time::Duration;

    #[test]
    fn parses_modules_with_and_without_refcounts() {
        let text = "nvidia_uvm 1875968 - - Live 0xffffffffc080c000 (O)\n\
                    nvidia 14299136 2 nvidia_uvm,nvidia_modeset, Live 0xffffffffc0400000 (PO)\n\
                    garbage\n";
        let m = parse_proc_modules(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].refcount, None);
        assert_eq!(m[1].refcount, Some(2));
        assert_eq!(m[1].used_by, vec!["nvidia_uvm", "nvidia_modeset"]);
    }

    #[test]
    fn reports_loaded_names_and_details() {
        let mut h = SnapshotHost::empty();
        h.set_file(
            "/proc/modules",
            "nvidia_uvm 1875968 - - Live 0x0 (O)\nnvidia 14299136 1 nvidia_uvm, Live 0x0\n",
        );
        let v = value_of(run_with(
            &KernelModules,
            &h,
            json!({}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v["loaded"], json!(["nvidia_uvm", "nvidia"]));
        assert_eq!(v["modules"]["nvidia"]["refcount"], json!(1));
        assert!(v["modules"]["nvidia_uvm"].get("refcount").is_none());
        assert_eq!(v["modules"]["nvidia_uvm"]["size"], json!(1875968));
    }

    #[test]
    fn unreadable_proc_modules_is_unknown() {
        let h = SnapshotHost::empty();
        let out = run_with(
            &KernelModules,
            &h,
            json!({}),
            &Inputs::default(),
            Duration::ZERO,
        );
        assert_eq!(
            out,
            ProbeOutcome::Unknown("cannot read `/proc/modules`: not in the snapshot".into())
        );
    }
}
