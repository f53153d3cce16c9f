//! `fstab.options`: add or remove mount options of the fstab entry for one mount point. Only
//! the options field changes; every other byte of the file stays. The candidate is checked with
//! `findmnt --verify --tab-file` where findmnt exists. With `remount: true` the mount is also
//! remounted now (disruptive), verified from the live mount table, and undone by remounting with
//! the options it had.

use super::edit::fstab;
use super::file::{self, FileEdit};
use super::runtime::{RuntimeAndFile, runtime_and_file_kind};
use super::{FixCtx, Prepared, params_of, runtime_change};
use crate::fixes::FixError;
use crate::report::PlannedChange;
use serde_json::{Value, json};
use std::time::Duration;

pub const DEFAULT_FSTAB: &str = "/etc/fstab";

struct FstabFile;

impl FileEdit for FstabFile {
    type Params = FstabOptionsParams;
    fn name(&self) -> &'static str {
        "fstab.options"
    }
    fn path(&self, params: &FstabOptionsParams, _cx: &FixCtx) -> Result<String, FixError> {
        Ok(params.fstab.clone())
    }
    fn edit(
        &self,
        _path: &str,
        old: &str,
        _exists: bool,
        params: &FstabOptionsParams,
    ) -> Result<String, FixError> {
        let add: Vec<&str> = params.add.iter().map(String::as_str).collect();
        let remove: Vec<&str> = params.remove.iter().map(String::as_str).collect();
        fstab::fstab_set_options(old, &params.mount_point, &add, &remove).map_err(FixError::from)
    }
    fn summary(&self, params: &FstabOptionsParams, path: &str) -> String {
        let mut s = format!("mount options of {} in {path}:", params.mount_point);
        for a in &params.add {
            s.push_str(&format!(" +{a}"));
        }
        for r in &params.remove {
            s.push_str(&format!(" -{r}"));
        }
        s
    }
}

/// Options of the live mount at `mp` (last entry wins, as the kernel shows stacked mounts).
fn live_options(mp: &str, cx: &FixCtx) -> Result<Vec<String>, FixError> {
    let raw = cx
        .host
        .read_file("/proc/mounts")
        .map_err(FixError::io("cannot read /proc/mounts".into()))?;
    crate::formats::mounts::parse_mounts(&String::from_utf8_lossy(&raw))
        .into_iter()
        .rev()
        .find(|m| m.mount_point == mp)
        .map(|m| m.options)
        .ok_or_else(|| FixError::Failed(format!("{mp} is not mounted")))
}

fn with_changes(cur: &[String], add: &[String], remove: &[String]) -> Vec<String> {
    let mut out: Vec<String> = cur
        .iter()
        .filter(|o| !remove.contains(o))
        .cloned()
        .collect();
    for a in add {
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    out
}

/// Errors `findmnt --verify --tab-file FILE` reports for a file's text (`[E]` lines), or `None`
/// when findmnt cannot be run here.
fn findmnt_errors(text: &str, cx: &FixCtx) -> Option<Vec<String>> {
    // a private directory (crate::tempfiles): nothing at a name anybody could guess
    let dir = crate::tempfiles::PrivateDir::new("fstab").ok()?;
    let cand = dir.write("fstab", text.as_bytes()).ok()?;
    let argv = vec![
        "findmnt".to_string(),
        "--verify".into(),
        "--tab-file".into(),
        cand.display().to_string(),
    ];
    let res = cx.host.run(&argv, Duration::from_secs(10));
    drop(dir);
    let out = res.ok()?;
    if out.timed_out {
        return None;
    }
    Some(
        format!("{}{}", out.stdout, out.stderr)
            .lines()
            .filter(|l| l.contains("[E]"))
            .map(|l| l.trim().to_string())
            .collect(),
    )
}

/// Refuse a candidate fstab that findmnt finds new errors in (errors the file already had, such
/// as a device absent from this machine, are not the change's doing).
fn findmnt_verify(old: &str, new: &str, cx: &FixCtx) -> Result<(), FixError> {
    if !cx.host.is_live() {
        return Ok(());
    }
    let (Some(before), Some(after)) = (findmnt_errors(old, cx), findmnt_errors(new, cx)) else {
        return Ok(());
    };
    let fresh: Vec<&String> = after.iter().filter(|e| !before.contains(e)).collect();
    if fresh.is_empty() {
        Ok(())
    } else {
        Err(FixError::Failed(format!(
            "findmnt --verify finds new errors in the changed fstab: {}",
            fresh
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }
}

pub struct FstabOptions;

impl RuntimeAndFile for FstabOptions {
    type Params = FstabOptionsParams;
    const NAME: &'static str = "fstab.options";
    const PART: &'static str = "remount";
    fn prepare_parts(
        &self,
        params: &FstabOptionsParams,
        cx: &FixCtx,
    ) -> Result<Vec<Prepared>, FixError> {
        let mut out = file::prepare_edit(&FstabFile, params, cx)?;
        if let Some(p) = out.first()
            && let (Some(old), Some(new)) = (&p.before_text, &p.after_text)
        {
            findmnt_verify(old, new, cx)?;
        }
        if params.remount {
            let mp = params.mount_point.as_str();
            let cur = live_options(mp, cx)?;
            let want = with_changes(&cur, &params.add, &params.remove);
            if want != cur {
                out.push(runtime_change(
                    "remount",
                    format!("mount {mp}"),
                    format!("remount {mp} with {}", want.join(",")),
                    json!(cur),
                    json!(want),
                ));
            }
        }
        Ok(out)
    }
    fn read(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Value, FixError> {
        Ok(json!(live_options(&mp_of(change)?, cx)?))
    }
    fn write(&self, change: &PlannedChange, opts: &Value, cx: &FixCtx) -> Result<(), FixError> {
        let o: Vec<&str> = opts
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        Ok(cx
            .host
            .remount(&mp_of(change)?, &format!("remount,{}", o.join(",")))?)
    }
    /// The kernel may add or reorder options: check the ones asked for.
    fn verify_runtime(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        let a: FstabOptionsParams = params_of(change)?;
        let live = live_options(&a.mount_point, cx)?;
        let missing: Vec<String> = a.add.into_iter().filter(|o| !live.contains(o)).collect();
        let still: Vec<String> = a.remove.into_iter().filter(|o| live.contains(o)).collect();
        if missing.is_empty() && still.is_empty() {
            Ok(())
        } else {
            Err(FixError::Failed(format!(
                "after remount {} lacks {missing:?} / still has {still:?}",
                change.target
            )))
        }
    }
}

runtime_and_file_kind!(FstabOptions);

fn mp_of(change: &PlannedChange) -> Result<String, FixError> {
    params_of::<FstabOptionsParams>(change).map(|p| p.mount_point)
}

/// Parameters of `fstab.options`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FstabOptionsParams {
    /// The entry's mount point.
    pub mount_point: String,
    /// Options to add.
    #[serde(default)]
    pub add: Vec<String>,
    /// Options to remove.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Also remount now (disruptive).
    #[serde(default)]
    pub remount: bool,
    /// The fstab file.
    #[serde(default = "default_fstab")]
    pub fstab: String,
}

fn default_fstab() -> String {
    DEFAULT_FSTAB.into()
}

pub static SPEC: super::spec::FixSpec = super::spec::FixSpec {
    name: "fstab.options",
    doc: "Add or remove mount options of one fstab entry; optionally remount now.",
    params: crate::kinds::ParamsDecl::of::<FstabOptionsParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &FstabOptions,
};
