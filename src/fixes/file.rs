//! The shared half of every file-editing fix: resolve the target under the allowed roots,
//! compute the new text with the kind's pure edit, show it as a unified diff, fingerprint it,
//! save the prior bytes, mode, owner and xattrs, write atomically, read back, and undo
//! byte-exactly (removing a file and directories the change created).
//!
//! A file found through a job (a discovered config, a launch script, the training source) is
//! read, written and restored with the job owner's authority ([`crate::authority::as_owner`]):
//! the kernel checks every step as it would for the owner, so `apply` can change only what the
//! job's owner could, and the file keeps its owner (one owned by anybody else is refused). The
//! owner is journaled with the prior state, so `rollback` restores it as the same owner.

use super::{Fix, FixCtx, FixError, Prepared, Prior};
use crate::authority::Owner;
use crate::report::PlannedChange;
use crate::safe_write::{self, TargetState};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A fix kind that edits one text file.
pub trait FileEdit: Sync {
    /// The kind's parameters ([`super::Fix::Params`]).
    type Params: serde::de::DeserializeOwned;
    fn name(&self) -> &'static str;
    /// The host path of the file this action edits.
    fn path(&self, params: &Self::Params, cx: &FixCtx) -> Result<String, FixError>;
    /// The new text, from the old text (`""` when the file does not exist yet).
    fn edit(
        &self,
        path: &str,
        old: &str,
        exists: bool,
        params: &Self::Params,
    ) -> Result<String, FixError>;
    /// One line for the plan: `unset CUDA_LAUNCH_BLOCKING in /job/env`.
    fn summary(&self, params: &Self::Params, path: &str) -> String;
    /// [`FileEdit::summary`], knowing the text the edit starts from (what it must say to do
    /// after: reload a unit, resubmit a batch job).
    fn summary_of(&self, params: &Self::Params, path: &str, _old: &str) -> String {
        self.summary(params, path)
    }
    /// See [`FixKind::left_to_you`](super::FixKind::left_to_you): what the action alone says (no file to edit).
    fn left_to_you(&self, _params: &Self::Params, _cx: &FixCtx) -> Option<String> {
        None
    }
    /// See [`FixKind::left_to_you`](super::FixKind::left_to_you): what the file says — the value is set where no single
    /// exact edit can change it (`old` is the text the edit would start from).
    fn unproven(
        &self,
        _path: &str,
        _old: &str,
        _params: &Self::Params,
        _cx: &FixCtx,
    ) -> Option<String> {
        None
    }
}

pub fn sha(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a{path}"), &format!("b{path}"))
        .to_string()
}

/// The real path of a host path, checked against the allowed roots.
pub fn resolve(path: &str, cx: &FixCtx) -> Result<PathBuf, FixError> {
    // files named on the command line (--config, --env-file) are this machine's paths as given
    if cx.local_files.iter().any(|f| f.as_os_str() == path) {
        return Ok(cx.roots.check(Path::new(path))?);
    }
    let p = cx.host.fs_path(path).ok_or_else(|| FixError::NoFiles {
        host: cx.host.describe(),
    })?;
    Ok(cx.roots.check(&p)?)
}

/// The job owner a target is changed as: the one it was read as when it was found through a
/// job ([`crate::host::Host::job_file_owner`]); `None` for gpufix's own targets.
pub fn owner_of(path: &str, cx: &FixCtx) -> Option<Owner> {
    if cx.local_files.iter().any(|f| f.as_os_str() == path) {
        return None;
    }
    cx.host.job_file_owner(path)
}

/// Run a step on a target as `owner` when it has one ([`crate::authority::as_owner`]).
fn as_target_owner<T: Send>(
    owner: Option<&Owner>,
    path: &Path,
    f: impl FnOnce() -> Result<T, FixError> + Send,
) -> Result<T, FixError> {
    match owner {
        None => f(),
        Some(o) => crate::authority::as_owner(o, f).map_err(|e| {
            FixError::Failed(format!(
                "cannot act on {} as the job's owner ({}): {e}",
                path.display(),
                o.describe()
            ))
        })?,
    }
}

/// The target's state, read as `owner` when it has one; a job's file owned by anybody but the
/// job's owner is refused (replacing it as the owner would take it over).
fn read_as(p: &Path, owner: Option<&Owner>) -> Result<TargetState, FixError> {
    let state = as_target_owner(owner, p, || {
        safe_write::read_target(p).map_err(|e| match &e {
            safe_write::WriteError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                FixError::Failed(crate::authority::not_readable(
                    &p.display().to_string(),
                    owner.expect("a permission error comes from the owner's thread"),
                ))
            }
            _ => FixError::Write(e),
        })
    })?;
    if let Some(o) = owner
        && state.exists
        && state.uid != o.uid
    {
        return Err(FixError::Failed(format!(
            "refusing to change {}: it is owned by uid {}, not by the job's owner ({}); gpufix changes a job's files only as their owner",
            p.display(),
            state.uid,
            o.describe()
        )));
    }
    Ok(state)
}

fn text_of(state: &TargetState, path: &str) -> Result<String, FixError> {
    if !state.exists {
        return Ok(String::new());
    }
    state.text().map(str::to_string).ok_or_else(|| {
        FixError::Failed(format!(
            "{path} is not UTF-8 text; gpufix edits text files only"
        ))
    })
}

/// The text a file has for the next change of this plan: what an earlier change of the same
/// plan leaves, else what is on disk; whether it exists, and its fingerprint.
pub(crate) fn current(path: &str, cx: &FixCtx) -> Result<(String, bool, String), FixError> {
    if let Some(t) = cx.overlay.borrow().get(path) {
        return Ok((t.clone(), true, sha(t.as_bytes())));
    }
    let state = read_as(&resolve(path, cx)?, owner_of(path, cx).as_ref())?;
    Ok((
        text_of(&state, path)?,
        state.exists,
        if state.exists {
            sha(&state.content)
        } else {
            "absent".into()
        },
    ))
}

/// A file's text on disk (ignoring earlier changes of this plan), and whether it exists.
fn on_disk(path: &str, cx: &FixCtx) -> Result<(String, bool), FixError> {
    let state = read_as(&resolve(path, cx)?, owner_of(path, cx).as_ref())?;
    Ok((text_of(&state, path)?, state.exists))
}

/// Both changes of `base` — the one that gives `a` and the one that gives `b` — made together
/// (byte ranges that do not overlap; two insertions at one place go in the order made), or
/// None when they overlap.
fn merge(base: &str, a: &str, b: &str) -> Option<String> {
    use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let old = base.as_bytes();
    let hunks = |x: &str| -> Vec<(std::ops::Range<usize>, Vec<u8>)> {
        let new = x.as_bytes();
        capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline))
            .into_iter()
            .filter(|o| o.tag() != DiffTag::Equal)
            .map(|o| (o.old_range(), new[o.new_range()].to_vec()))
            .collect()
    };
    let mut all = hunks(a);
    all.extend(hunks(b));
    // stable: at one place, `a`'s insertion stays before `b`'s
    all.sort_by_key(|(r, _)| r.start);
    if all.windows(2).any(|w| w[1].0.start < w[0].0.end) {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut at = 0;
    for (r, with) in all {
        out.extend_from_slice(&old[at..r.start]);
        out.extend_from_slice(&with);
        at = r.end;
    }
    out.extend_from_slice(&old[at..]);
    String::from_utf8(out).ok()
}

pub fn prepare_edit<E: FileEdit + ?Sized>(
    e: &E,
    params: &E::Params,
    cx: &FixCtx,
) -> Result<Vec<Prepared>, FixError> {
    let path = e.path(params, cx)?;
    let (old, exists, fingerprint) = current(&path, cx)?;
    let new = e.edit(&path, &old, exists, params)?;
    if new == old && exists {
        return Ok(Vec::new());
    }
    // a later change of the same file is shown alone, against the file as it is; what apply
    // writes is both changes, and that must be exactly the two shown
    let disk = on_disk(&path, cx)?;
    let diff = if disk.0 != old {
        let alone = e.edit(&path, &disk.0, disk.1, params)?;
        let merged = merge(&disk.0, &old, &alone).filter(|m| *m == new);
        if merged.is_none() {
            return Err(FixError::Failed(format!(
                "another fix of this plan changes the same lines of {path}: apply the fixes one at a time"
            )));
        }
        unified_diff(&path, &disk.0, &alone)
    } else {
        unified_diff(&path, &old, &new)
    };
    cx.overlay.borrow_mut().insert(path.clone(), new.clone());
    Ok(vec![Prepared {
        part: "file",
        target: path.clone(),
        summary: e.summary_of(params, &path, &old),
        diff: Some(diff),
        before: None,
        after: None,
        before_text: Some(old),
        after_text: Some(new),
        fingerprint,
    }])
}

pub fn file_fingerprint(change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError> {
    let state = read_as(
        &resolve(&change.target, cx)?,
        owner_of(&change.target, cx).as_ref(),
    )?;
    Ok(if state.exists {
        sha(&state.content)
    } else {
        "absent".into()
    })
}

pub fn file_after_fingerprint(change: &PlannedChange) -> String {
    sha(change.after_text.as_deref().unwrap_or_default().as_bytes())
}

pub fn file_save(change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError> {
    let real = resolve(&change.target, cx)?;
    let owner = owner_of(&change.target, cx);
    let state = read_as(&real, owner.as_ref())?;
    let mut created = Vec::new();
    let mut dir = real.parent();
    while let Some(d) = dir {
        if d.exists() {
            break;
        }
        created.push(d.display().to_string());
        dir = d.parent();
    }
    created.reverse();
    let (text, hex) = match std::str::from_utf8(&state.content) {
        Ok(t) => (Some(t.to_string()), None),
        Err(_) => (None, Some(hex::encode(&state.content))),
    };
    Ok(Prior::File {
        exists: state.exists,
        text,
        hex,
        mode: state.mode,
        uid: state.uid,
        gid: state.gid,
        xattrs: state
            .xattrs
            .iter()
            .map(|(k, v)| (k.clone(), hex::encode(v)))
            .collect(),
        created_dirs: created,
        owner,
    })
}

pub fn file_apply(change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
    let real = resolve(&change.target, cx)?;
    let owner = owner_of(&change.target, cx);
    let state = read_as(&real, owner.as_ref())?;
    let content = change
        .after_text
        .as_deref()
        .ok_or("the plan has no text for this file")?;
    as_target_owner(owner.as_ref(), &real, || {
        if let Some(parent) = real.parent() {
            safe_write::create_dir_all(parent).map_err(FixError::from)?;
        }
        crate::crashpoint::hit("file: before write");
        safe_write::write_atomic(&real, content.as_bytes(), state.exists.then_some(&state))
            .map_err(FixError::from)?;
        crate::crashpoint::hit("file: after write");
        Ok(())
    })
}

pub fn file_undo(change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), FixError> {
    let Prior::File {
        exists,
        text,
        hex,
        mode,
        uid,
        gid,
        xattrs,
        created_dirs,
        owner,
    } = prior
    else {
        return Err(FixError::NoPrior { what: "file state" });
    };
    let real = resolve(&change.target, cx)?;
    // a job's file is restored as the owner it was changed as
    as_target_owner(owner.as_ref(), &real, || {
        undo_file(
            &real,
            *exists,
            text,
            hex,
            *mode,
            *uid,
            *gid,
            xattrs,
            created_dirs,
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn undo_file(
    real: &Path,
    exists: bool,
    text: &Option<String>,
    hex: &Option<String>,
    mode: u32,
    uid: u32,
    gid: u32,
    xattrs: &[(String, String)],
    created_dirs: &[String],
) -> Result<(), FixError> {
    let real = real.to_path_buf();
    // a write killed midway leaves its temporary file beside the target
    safe_write::remove_stale_temps(&real).map_err(FixError::from)?;
    if exists {
        let content = match (text, hex) {
            (Some(t), _) => t.as_bytes().to_vec(),
            (None, Some(h)) => hex::decode(h).map_err(|e| FixError::Failed(e.to_string()))?,
            _ => Vec::new(),
        };
        let like = TargetState {
            exists: true,
            content: Vec::new(),
            mode,
            uid,
            gid,
            xattrs: xattrs
                .iter()
                .map(|(k, v)| (k.clone(), hex::decode(v).unwrap_or_default()))
                .collect(),
        };
        crate::crashpoint::hit("undo: before write");
        safe_write::write_atomic(&real, &content, Some(&like)).map_err(FixError::from)?;
    } else {
        safe_write::remove_file(&real).map_err(FixError::from)?;
        for d in created_dirs.iter().rev() {
            safe_write::remove_dir(Path::new(d)).map_err(FixError::from)?;
        }
    }
    Ok(())
}

impl<T: FileEdit> Fix for T {
    type Params = T::Params;
    fn name(&self) -> &'static str {
        FileEdit::name(self)
    }
    fn prepare(&self, params: &T::Params, cx: &FixCtx) -> Result<Vec<Prepared>, FixError> {
        prepare_edit(self, params, cx)
    }
    fn left_to_you(&self, params: &T::Params, cx: &FixCtx) -> Option<String> {
        if let Some(why) = FileEdit::left_to_you(self, params, cx) {
            return Some(why);
        }
        // a file that cannot be found or read is an error `prepare` reports, not a note
        let path = self.path(params, cx).ok()?;
        let (old, _, _) = current(&path, cx).ok()?;
        self.unproven(&path, &old, params, cx)
    }
    fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError> {
        file_fingerprint(change, cx)
    }
    fn after_fingerprint(&self, change: &PlannedChange) -> String {
        file_after_fingerprint(change)
    }
    fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError> {
        file_save(change, cx)
    }
    fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
        file_apply(change, cx)
    }
    fn undo(&self, change: &PlannedChange, prior: &Prior, cx: &FixCtx) -> Result<(), FixError> {
        file_undo(change, prior, cx)
    }
}
