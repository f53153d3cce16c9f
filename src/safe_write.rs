//! The one place gpufix writes host files: allowed roots, symlink and hard-link refusal, and
//! atomic replacement that keeps mode, owner and extended attributes.
//!
//! gpufix applies fixes as root, so a symlink planted in a writable directory could redirect a
//! write to any file on the host. Every open therefore resolves the path with `openat2` and
//! `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (falling back to an `lstat` walk of every
//! component on kernels without `openat2`), and every later step works relative to the opened
//! parent directory. A hard-linked target is refused because replacing it by rename would
//! silently split it from its other names.
//!
//! A write goes to `.gpufix.<name>.<rand>.tmp` in the target's own directory (created with
//! `O_EXCL`), is fsynced, gets the old file's mode, owner and xattrs, and is renamed over the
//! target; then the directory is fsynced so the rename survives a crash. Any failure before the
//! rename removes the temporary file, so the target is either the old bytes or the new bytes.
//!
//! Fault injection for transaction tests: [`set_fault`] arms a one-shot [`Fault`] for the
//! current thread (thread-local, so parallel tests do not see each other's faults). Each call that
//! is about to change something counts as one write: [`write_atomic`] always, [`remove_file`] and
//! [`remove_dir`] when the target exists, [`create_dir_all`] when a directory is missing. The
//! write that meets the fault fails; [`write_atomic`] fails after its temporary file was written,
//! so the cleanup path runs too. The fault then disarms itself, so undo after it succeeds.

use std::cell::Cell;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, CWD, FileType, Gid, Mode, OFlags, ResolveFlags, Uid, XattrFlags};
use rustix::io::Errno;

/// Why a read or write of a host file was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("refusing to write `{path}`: it is outside the allowed roots {roots}")]
    OutsideRoots { path: PathBuf, roots: String },
    #[error("refusing to write `{path}`: {reason}")]
    BadPath { path: PathBuf, reason: String },
    #[error("refusing to write `{path}`: `{link}` is a symlink")]
    Symlink { path: PathBuf, link: PathBuf },
    #[error("hard-linked target: refusing to write `{path}` (it has {nlink} links)")]
    HardLink { path: PathBuf, nlink: u64 },
    #[error("refusing to write `{path}`: it is not a regular file")]
    NotRegular { path: PathBuf },
    #[error("no space left on device while writing `{path}`")]
    NoSpace { path: PathBuf },
    #[error("cannot {op} `{path}`: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl WriteError {
    fn io(path: &Path, op: &'static str, errno: Errno) -> Self {
        if errno == Errno::NOSPC || errno == Errno::DQUOT {
            return WriteError::NoSpace {
                path: path.to_path_buf(),
            };
        }
        WriteError::Io {
            path: path.to_path_buf(),
            op,
            source: errno.into(),
        }
    }

    fn std_io(path: &Path, op: &'static str, err: std::io::Error) -> Self {
        match err.raw_os_error() {
            Some(code) => WriteError::io(path, op, Errno::from_raw_os_error(code)),
            None => WriteError::Io {
                path: path.to_path_buf(),
                op,
                source: err,
            },
        }
    }
}

/// The directories gpufix may write under; anything else is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots(Vec<PathBuf>);

impl Roots {
    /// Allowed roots, normalised lexically (`.` dropped, `..` folded).
    pub fn new<I, P>(roots: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        Roots(
            roots
                .into_iter()
                .map(|root| {
                    let mut out = PathBuf::new();
                    for c in root.as_ref().components() {
                        match c {
                            Component::CurDir => {}
                            Component::ParentDir => {
                                out.pop();
                            }
                            other => out.push(other),
                        }
                    }
                    out
                })
                .collect(),
        )
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.0
    }

    /// The normalised target if it lies under one of the roots.
    pub fn check(&self, path: &Path) -> Result<PathBuf, WriteError> {
        let normal = normalize(path)?;
        if self.0.iter().any(|root| normal.starts_with(root)) {
            return Ok(normal);
        }
        let roots = if self.0.is_empty() {
            "(none)".to_string()
        } else {
            self.0
                .iter()
                .map(|r| format!("`{}`", r.display()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Err(WriteError::OutsideRoots {
            path: path.to_path_buf(),
            roots,
        })
    }
}

/// Absolute path with `.` and repeated separators removed; `..` is refused rather than folded
/// because folding it lexically can disagree with what the kernel resolves.
fn normalize(path: &Path) -> Result<PathBuf, WriteError> {
    if !path.is_absolute() {
        return Err(WriteError::BadPath {
            path: path.to_path_buf(),
            reason: "it is not an absolute path".into(),
        });
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                return Err(WriteError::BadPath {
                    path: path.to_path_buf(),
                    reason: "it contains `..`".into(),
                });
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

/// A file as it was before gpufix touched it: what undo restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetState {
    pub exists: bool,
    pub content: Vec<u8>,
    /// Permission bits only (`0o7777` mask); `0o644` when the file does not exist.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub xattrs: Vec<(String, Vec<u8>)>,
}

impl TargetState {
    /// The content as UTF-8, if it is.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.content).ok()
    }
}

/// A one-shot failure injected into the next mutating call on this thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The next write fails with an I/O error.
    WriteError,
    /// The next write fails as if the disk were full.
    NoSpace,
    /// `n` writes succeed, then the next one fails with an I/O error.
    FailAfter(u32),
}

thread_local! {
    static FAULT: Cell<Option<Fault>> = const { Cell::new(None) };
}

/// Arm (or with `None`, disarm) a one-shot fault for this thread; see the module doc.
pub fn set_fault(fault: Option<Fault>) {
    FAULT.with(|f| f.set(fault));
}

/// Take (and disarm) the fault armed on this thread, to arm it on another
/// ([`crate::authority::as_owner`] writes on a thread of its own).
pub fn take_armed_fault() -> Option<Fault> {
    FAULT.with(|f| f.take())
}

/// Counts this mutating call against the armed fault; `Some` when it must fail.
fn take_fault() -> Option<Fault> {
    FAULT.with(|f| match f.get() {
        None => None,
        Some(Fault::FailAfter(0)) => {
            f.set(None);
            Some(Fault::WriteError)
        }
        Some(Fault::FailAfter(n)) => {
            f.set(Some(Fault::FailAfter(n - 1)));
            None
        }
        Some(fault) => {
            f.set(None);
            Some(fault)
        }
    })
}

fn injected(fault: Fault, path: &Path) -> WriteError {
    match fault {
        Fault::NoSpace => WriteError::NoSpace {
            path: path.to_path_buf(),
        },
        _ => WriteError::Io {
            path: path.to_path_buf(),
            op: "write",
            source: std::io::Error::other("injected fault"),
        },
    }
}

#[cfg(test)]
thread_local! {
    /// Lets tests exercise the `lstat` walk used on kernels without `openat2`.
    static FORCE_FALLBACK: Cell<bool> = const { Cell::new(false) };
}

fn force_fallback() -> bool {
    #[cfg(test)]
    {
        FORCE_FALLBACK.with(|f| f.get())
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// Opens `path` without following a symlink in any component; a symlink gives `ELOOP`.
fn open_nofollow(path: &Path, flags: OFlags, mode: Mode) -> rustix::io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    if !force_fallback() {
        let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(CWD, path, flags, mode, resolve) {
            // Seccomp filters in some containers answer EPERM for syscalls they do not know.
            Err(Errno::NOSYS) | Err(Errno::PERM) => {}
            other => return other,
        }
    }
    if first_symlink(path).is_some() {
        return Err(Errno::LOOP);
    }
    rustix::fs::openat(CWD, path, flags, mode)
}

/// The first component of `path` (from the root down) that is a symlink.
fn first_symlink(path: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        if matches!(c, Component::RootDir | Component::CurDir) {
            continue;
        }
        match std::fs::symlink_metadata(&prefix) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(prefix),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

fn symlink_error(path: &Path) -> WriteError {
    WriteError::Symlink {
        path: path.to_path_buf(),
        link: first_symlink(path).unwrap_or_else(|| path.to_path_buf()),
    }
}

fn open_error(path: &Path, op: &'static str, errno: Errno) -> WriteError {
    // `O_DIRECTORY | O_NOFOLLOW` on a symlink answers ENOTDIR rather than ELOOP.
    match errno {
        Errno::LOOP => symlink_error(path),
        Errno::NOTDIR => match first_symlink(path) {
            Some(link) => WriteError::Symlink {
                path: path.to_path_buf(),
                link,
            },
            None => WriteError::io(path, op, errno),
        },
        _ => WriteError::io(path, op, errno),
    }
}

fn split(path: &Path) -> Result<(&Path, &OsStr), WriteError> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            Ok((parent, name))
        }
        _ => Err(WriteError::BadPath {
            path: path.to_path_buf(),
            reason: "it has no file name".into(),
        }),
    }
}

/// The parent directory of `path`, opened for `*at` calls and fsync.
fn open_parent(path: &Path) -> Result<(OwnedFd, &OsStr), WriteError> {
    let (parent, name) = split(path)?;
    let dir = open_nofollow(parent, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .map_err(|e| open_error(path, "open the directory of", e))?;
    Ok((dir, name))
}

/// Refuses a target that is a symlink, a hard link or not a regular file; `None` if absent.
fn check_existing(
    dir: &OwnedFd,
    name: &OsStr,
    path: &Path,
) -> Result<Option<rustix::fs::Stat>, WriteError> {
    let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(WriteError::io(path, "stat", e)),
    };
    check_stat(&st, path)?;
    Ok(Some(st))
}

fn check_stat(st: &rustix::fs::Stat, path: &Path) -> Result<(), WriteError> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => Err(WriteError::Symlink {
            path: path.to_path_buf(),
            link: path.to_path_buf(),
        }),
        FileType::RegularFile => {
            #[allow(clippy::useless_conversion)] // `st_nlink` is u32 on some targets.
            let nlink = u64::from(st.st_nlink);
            if nlink > 1 {
                Err(WriteError::HardLink {
                    path: path.to_path_buf(),
                    nlink,
                })
            } else {
                Ok(())
            }
        }
        _ => Err(WriteError::NotRegular {
            path: path.to_path_buf(),
        }),
    }
}

/// Reads a target's bytes, mode, owner and xattrs, refusing symlinks and hard links.
pub fn read_target(path: &Path) -> Result<TargetState, WriteError> {
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK;
    let fd = match open_nofollow(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => {
            return Ok(TargetState {
                exists: false,
                content: Vec::new(),
                mode: 0o644,
                uid: rustix::process::geteuid().as_raw(),
                gid: rustix::process::getegid().as_raw(),
                xattrs: Vec::new(),
            });
        }
        Err(e) => return Err(open_error(path, "open", e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| WriteError::io(path, "stat", e))?;
    check_stat(&st, path)?;
    let xattrs = read_xattrs(&fd, path)?;
    let mut content = Vec::new();
    File::from(fd)
        .read_to_end(&mut content)
        .map_err(|e| WriteError::std_io(path, "read", e))?;
    Ok(TargetState {
        exists: true,
        content,
        mode: st.st_mode & 0o7777,
        uid: st.st_uid,
        gid: st.st_gid,
        xattrs,
    })
}

fn read_xattrs(fd: &OwnedFd, path: &Path) -> Result<Vec<(String, Vec<u8>)>, WriteError> {
    let size = match rustix::fs::flistxattr_query(fd) {
        Ok(size) => size,
        Err(Errno::NOTSUP) => return Ok(Vec::new()),
        Err(e) => return Err(WriteError::io(path, "list xattrs of", e)),
    };
    let mut names = vec![0u8; size];
    let len = rustix::fs::flistxattr(fd, &mut names[..])
        .map_err(|e| WriteError::io(path, "list xattrs of", e))?;
    names.truncate(len);
    let mut out = Vec::new();
    for raw in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8(raw.to_vec()).map_err(|_| WriteError::BadPath {
            path: path.to_path_buf(),
            reason: format!(
                "it has an xattr whose name is not UTF-8 ({})",
                String::from_utf8_lossy(raw)
            ),
        })?;
        let value = get_xattr(fd, &name).map_err(|e| WriteError::io(path, "read xattr of", e))?;
        if let Some(value) = value {
            out.push((name, value));
        }
    }
    Ok(out)
}

fn get_xattr<Fd: AsFd>(fd: Fd, name: &str) -> rustix::io::Result<Option<Vec<u8>>> {
    let size = match rustix::fs::fgetxattr_query(&fd, name) {
        Ok(size) => size,
        Err(Errno::NODATA) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut value = vec![0u8; size];
    if size > 0 {
        let len = rustix::fs::fgetxattr(&fd, name, &mut value[..])?;
        value.truncate(len);
    }
    Ok(Some(value))
}

fn temp_name(name: &OsStr, attempt: u32) -> Vec<u8> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let seed = nanos
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(17)
        ^ u64::from(attempt);
    // splitmix64 so consecutive seeds do not give similar names.
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // Keep the whole name under NAME_MAX (255).
    let base = name.as_bytes();
    let base = &base[..base.len().min(200)];
    let mut out = b".gpufix.".to_vec();
    out.extend_from_slice(base);
    out.extend_from_slice(format!(".{z:016x}.tmp").as_bytes());
    out
}

/// Remove temporary files a crashed write left beside `path` (`.gpufix.<name>….tmp`); the
/// target itself is never touched. Returns how many were removed.
pub fn remove_stale_temps(path: &Path) -> Result<usize, WriteError> {
    let Some(dir) = path.parent() else {
        return Ok(0);
    };
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(0);
    };
    // temp names keep at most a prefix of long names; match on that prefix
    let prefix = format!(
        ".gpufix.{}",
        &name[..name.floor_char_boundary(name.len().min(200))]
    );
    let mut removed = 0;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    for e in rd.flatten() {
        let n = e.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(&prefix) && n.ends_with(".tmp") && e.file_type().is_ok_and(|t| t.is_file())
        {
            std::fs::remove_file(e.path())
                .map_err(|err| WriteError::std_io(&e.path(), "remove", err))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Replaces `path` with `content` atomically, giving it the mode, owner and xattrs of `like`
/// (the state read before). With `None`, an existing file keeps its own; a new file, or a
/// `like` that did not exist, gets `0o644` and the caller's owner.
pub fn write_atomic(
    path: &Path,
    content: &[u8],
    like: Option<&TargetState>,
) -> Result<(), WriteError> {
    let (dir, name) = open_parent(path)?;
    let existing = check_existing(&dir, name, path)?;
    // Without a saved state, an existing file keeps its own attributes.
    let current;
    let like = match like {
        None if existing.is_some() => {
            current = read_target(path)?;
            Some(&current)
        }
        like => like,
    };
    let fault = take_fault();

    let mut attempt = 0;
    let (tmp, fd) = loop {
        let tmp = temp_name(name, attempt);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(
            &dir,
            OsStr::from_bytes(&tmp),
            flags,
            Mode::from_raw_mode(0o600),
        ) {
            Ok(fd) => break (tmp, fd),
            Err(Errno::EXIST) if attempt < 16 => attempt += 1,
            Err(e) => return Err(WriteError::io(path, "create a temporary file for", e)),
        }
    };
    let tmp = OsStr::from_bytes(&tmp);

    let result = fill_temp(fd, path, content, like, fault).and_then(|()| {
        crate::crashpoint::hit("write: temp file written and fsynced, not renamed");
        rustix::fs::renameat(&dir, tmp, &dir, name)
            .map_err(|e| WriteError::io(path, "rename the temporary file over", e))
    });
    if let Err(err) = result {
        let _ = rustix::fs::unlinkat(&dir, tmp, AtFlags::empty());
        return Err(err);
    }
    crate::crashpoint::hit("write: renamed, directory not fsynced");
    rustix::fs::fsync(&dir).map_err(|e| WriteError::io(path, "fsync the directory of", e))
}

fn fill_temp(
    fd: OwnedFd,
    path: &Path,
    content: &[u8],
    like: Option<&TargetState>,
    fault: Option<Fault>,
) -> Result<(), WriteError> {
    let mut file = File::from(fd);
    file.write_all(content)
        .map_err(|e| WriteError::std_io(path, "write", e))?;
    if let Some(fault) = fault {
        return Err(injected(fault, path));
    }
    let like = like.filter(|l| l.exists);
    let mode = like.map_or(0o644, |l| l.mode & 0o7777);
    if let Some(like) = like {
        let st = rustix::fs::fstat(&file).map_err(|e| WriteError::io(path, "stat", e))?;
        // Only chown when needed, so an unprivileged run (tests, `--root` trees) still works.
        if st.st_uid != like.uid || st.st_gid != like.gid {
            rustix::fs::fchown(
                &file,
                Some(Uid::from_raw(like.uid)),
                Some(Gid::from_raw(like.gid)),
            )
            .map_err(|e| WriteError::io(path, "set the owner of", e))?;
        }
    }
    // After fchown, which clears set-id bits.
    rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
        .map_err(|e| WriteError::io(path, "set the mode of", e))?;
    if let Some(like) = like {
        let fd = file.as_fd();
        for (name, value) in &like.xattrs {
            // An inherited label that already matches needs no privileged set.
            if let Ok(Some(current)) = get_xattr(fd, name)
                && current == *value
            {
                continue;
            }
            rustix::fs::fsetxattr(fd, name.as_str(), value, XattrFlags::empty())
                .map_err(|e| WriteError::io(path, "set an xattr on", e))?;
        }
    }
    file.sync_all()
        .map_err(|e| WriteError::std_io(path, "fsync", e))
}

/// Writes an output file the operator named (`plan -o`, `snapshot -o`, `audit -o`): the
/// directory the operator chose is resolved as given, then the file is replaced atomically
/// without following a symlink planted at its name (or hard link to another file), and gets
/// `mode` and the caller's owner.
pub fn write_output(path: &Path, content: &[u8], mode: u32) -> Result<(), WriteError> {
    let (parent, name) = split(path)?;
    let parent = std::fs::canonicalize(parent)
        .map_err(|e| WriteError::std_io(path, "find the directory of", e))?;
    let like = TargetState {
        exists: true,
        content: Vec::new(),
        mode,
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
        xattrs: Vec::new(),
    };
    write_atomic(&parent.join(name), content, Some(&like))
}

/// Writes a runtime value (`/sys/...`, `/proc/sys/...`) in place, as `echo VALUE > FILE` does,
/// resolving the path inside `dir` (the opened `/sys` or `/proc/sys`, under `--root` when given;
/// `base` is its path, for messages) so that no link, absolute or relative, leads out of it; the
/// target must be a regular file.
pub fn write_runtime(
    dir: &OwnedFd,
    base: &Path,
    rel: &Path,
    content: &[u8],
) -> Result<(), WriteError> {
    let full = base.join(rel);
    // O_TRUNC as the shell's `>` does (sysfs and procfs ignore it; a tree under --root needs it)
    let flags =
        OFlags::WRONLY | OFlags::TRUNC | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat2(
        dir,
        rel,
        flags,
        Mode::empty(),
        ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(|e| match e {
        Errno::XDEV | Errno::LOOP => WriteError::Symlink {
            path: full.clone(),
            link: full.clone(),
        },
        e => WriteError::io(&full, "open", e),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| WriteError::io(&full, "stat", e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(WriteError::NotRegular { path: full });
    }
    let mut f = File::from(fd);
    f.write_all(content)
        .map_err(|e| WriteError::std_io(&full, "write", e))
}

/// Removes a file gpufix created (undo of a file that did not exist), with the same refusals
/// as [`write_atomic`]; `Ok(false)` when it is already gone.
pub fn remove_file(path: &Path) -> Result<bool, WriteError> {
    let (dir, name) = open_parent(path)?;
    if check_existing(&dir, name, path)?.is_none() {
        return Ok(false);
    }
    if let Some(fault) = take_fault() {
        return Err(injected(fault, path));
    }
    rustix::fs::unlinkat(&dir, name, AtFlags::empty())
        .map_err(|e| WriteError::io(path, "remove", e))?;
    rustix::fs::fsync(&dir).map_err(|e| WriteError::io(path, "fsync the directory of", e))?;
    Ok(true)
}

/// Creates the missing directories of `path` (mode `0o755`), refusing symlinked components;
/// returns the directories it created, outermost first, so undo can remove them.
pub fn create_dir_all(path: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let mut missing = Vec::new();
    let mut cur = path;
    loop {
        match open_nofollow(cur, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()) {
            Ok(_) => break,
            Err(Errno::NOENT) => {
                missing.push(cur.to_path_buf());
                match cur.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => cur = parent,
                    _ => break,
                }
            }
            Err(e) => return Err(open_error(cur, "open directory", e)),
        }
    }
    missing.reverse();
    if let Some(first) = missing.first()
        && let Some(fault) = take_fault()
    {
        return Err(injected(fault, first));
    }
    let mut created = Vec::new();
    for dir_path in missing {
        let (dir, name) = open_parent(&dir_path)?;
        match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o755)) {
            Ok(()) => {}
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(WriteError::io(&dir_path, "create directory", e)),
        }
        // mkdir honours the umask; the mode must not depend on who runs gpufix.
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_error(&dir_path, "open directory", e))?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o755))
            .map_err(|e| WriteError::io(&dir_path, "set the mode of", e))?;
        rustix::fs::fsync(&dir)
            .map_err(|e| WriteError::io(&dir_path, "fsync the directory of", e))?;
        created.push(dir_path);
    }
    Ok(created)
}

/// Removes an empty directory gpufix created (undo of [`create_dir_all`]); `Ok(false)` when it
/// is already gone. A directory that is no longer empty is an error, never emptied.
pub fn remove_dir(path: &Path) -> Result<bool, WriteError> {
    let (dir, name) = open_parent(path)?;
    match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {}
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
            return Err(symlink_error(path));
        }
        Ok(_) => {
            return Err(WriteError::BadPath {
                path: path.to_path_buf(),
                reason: "it is not a directory".into(),
            });
        }
        Err(Errno::NOENT) => return Ok(false),
        Err(e) => return Err(WriteError::io(path, "stat", e)),
    }
    if let Some(fault) = take_fault() {
        return Err(injected(fault, path));
    }
    rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)
        .map_err(|e| WriteError::io(path, "remove directory", e))?;
    rustix::fs::fsync(&dir).map_err(|e| WriteError::io(path, "fsync the directory of", e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    fn dir_names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn is_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    #[test]
    fn new_file_gets_exact_content_and_mode_0644() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("gpufix.conf");
        let state = read_target(&path).unwrap();
        assert!(!state.exists);
        write_atomic(&path, b"nvidia_uvm\n", Some(&state)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"nvidia_uvm\n");
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
        assert_eq!(dir_names(tmp.path()), vec!["gpufix.conf"]);
    }

    #[test]
    fn replace_keeps_mode_owner_and_xattrs() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("environment");
        std::fs::write(&path, "A=1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        if is_root() {
            std::os::unix::fs::chown(&path, Some(1234), Some(5678)).unwrap();
        }
        let xattr_ok =
            match rustix::fs::setxattr(&path, "user.gpufix-test", b"label", XattrFlags::empty()) {
                Ok(()) => true,
                Err(Errno::NOTSUP) | Err(Errno::PERM) => false,
                Err(e) => panic!("setxattr: {e}"),
            };
        let before = read_target(&path).unwrap();
        assert!(before.exists);
        assert_eq!(before.content, b"A=1\n");
        assert_eq!(before.mode, 0o640);
        if xattr_ok {
            assert!(
                before
                    .xattrs
                    .contains(&("user.gpufix-test".to_string(), b"label".to_vec()))
            );
        }

        write_atomic(&path, b"A=1\nB=2\n", Some(&before)).unwrap();
        let after = read_target(&path).unwrap();
        assert_eq!(after.content, b"A=1\nB=2\n");
        assert_eq!(after.mode, 0o640);
        assert_eq!((after.uid, after.gid), (before.uid, before.gid));
        if is_root() {
            assert_eq!((after.uid, after.gid), (1234, 5678));
        }
        assert_eq!(after.xattrs, before.xattrs);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.nlink(), 1);
        assert_eq!(dir_names(tmp.path()), vec!["environment"]);
    }

    #[test]
    fn without_a_saved_state_the_current_attributes_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("limits.conf");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"new", None).unwrap();
        let after = read_target(&path).unwrap();
        assert_eq!((after.content.as_slice(), after.mode), (&b"new"[..], 0o600));
    }

    #[test]
    fn setuid_bit_survives_a_chown() {
        if !is_root() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("tool");
        std::fs::write(&path, "x").unwrap();
        std::os::unix::fs::chown(&path, Some(4321), Some(4321)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o4755)).unwrap();
        let before = read_target(&path).unwrap();
        write_atomic(&path, b"y", Some(&before)).unwrap();
        assert_eq!(read_target(&path).unwrap().mode, 0o4755);
    }

    #[test]
    fn symlinked_target_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::write(&real, "keep").unwrap();
        let link = tmp.path().join("link");
        symlink(&real, &link).unwrap();

        let err = read_target(&link).unwrap_err();
        assert!(
            matches!(&err, WriteError::Symlink { link: l, .. } if *l == link),
            "{err}"
        );
        let err = write_atomic(&link, b"evil", None).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err}");
        assert!(err.to_string().contains("is a symlink"), "{err}");
        let err = remove_file(&link).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err}");
        assert_eq!(std::fs::read(&real).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(dir_names(tmp.path()), vec!["link", "real"]);
    }

    #[test]
    fn symlinked_parent_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.d");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("a.conf"), "keep").unwrap();
        let link = tmp.path().join("link.d");
        symlink(&real, &link).unwrap();
        let target = link.join("a.conf");

        for fallback in [false, true] {
            FORCE_FALLBACK.with(|f| f.set(fallback));
            let err = read_target(&target).unwrap_err();
            assert!(
                matches!(&err, WriteError::Symlink { link: l, .. } if *l == link),
                "{err}"
            );
            let err = write_atomic(&target, b"evil", None).unwrap_err();
            assert!(
                matches!(&err, WriteError::Symlink { link: l, .. } if *l == link),
                "{err}"
            );
            let err = write_atomic(&link.join("new.conf"), b"evil", None).unwrap_err();
            assert!(matches!(err, WriteError::Symlink { .. }), "{err}");
            // A missing file under a symlinked directory is refused too, not read as absent.
            let err = read_target(&link.join("missing.conf")).unwrap_err();
            assert!(matches!(err, WriteError::Symlink { .. }), "{err}");
        }
        FORCE_FALLBACK.with(|f| f.set(false));
        assert_eq!(dir_names(&real), vec!["a.conf"]);
        assert_eq!(std::fs::read(real.join("a.conf")).unwrap(), b"keep");
    }

    #[test]
    fn hard_linked_target_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("fstab");
        std::fs::write(&path, "keep").unwrap();
        std::fs::hard_link(&path, tmp.path().join("other")).unwrap();

        let err = read_target(&path).unwrap_err();
        assert!(
            matches!(err, WriteError::HardLink { nlink: 2, .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("hard-linked target: refusing to write")
        );
        let err = write_atomic(&path, b"new", None).unwrap_err();
        assert!(matches!(err, WriteError::HardLink { .. }), "{err}");
        let err = remove_file(&path).unwrap_err();
        assert!(matches!(err, WriteError::HardLink { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"keep");
        assert_eq!(dir_names(tmp.path()), vec!["fstab", "other"]);
    }

    #[test]
    fn directory_target_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let err = read_target(tmp.path()).unwrap_err();
        assert!(matches!(err, WriteError::NotRegular { .. }), "{err}");
        let sub = tmp.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let err = write_atomic(&sub, b"x", None).unwrap_err();
        assert!(matches!(err, WriteError::NotRegular { .. }), "{err}");
        assert!(sub.is_dir());
    }

    #[test]
    fn roots_refuse_outside_targets_and_dotdot() {
        let roots = Roots::new(["/etc", "/run/gpufix/./"]);
        assert_eq!(
            roots
                .check(Path::new("/etc/./modules-load.d//gpufix.conf"))
                .unwrap(),
            PathBuf::from("/etc/modules-load.d/gpufix.conf")
        );
        assert_eq!(
            roots.check(Path::new("/run/gpufix/x")).unwrap(),
            PathBuf::from("/run/gpufix/x")
        );
        let err = roots.check(Path::new("/etc2/passwd")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "refusing to write `/etc2/passwd`: it is outside the allowed roots `/etc`, `/run/gpufix`"
        );
        let err = roots
            .check(Path::new("/etc/../root/.ssh/authorized_keys"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "refusing to write `/etc/../root/.ssh/authorized_keys`: it contains `..`"
        );
        let err = roots.check(Path::new("etc/fstab")).unwrap_err();
        assert!(matches!(err, WriteError::BadPath { .. }), "{err}");
        let none = Roots::new(Vec::<PathBuf>::new());
        assert!(
            none.check(Path::new("/etc/fstab"))
                .unwrap_err()
                .to_string()
                .contains("(none)")
        );
    }

    #[test]
    fn injected_failure_removes_the_temp_file_and_keeps_the_target() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("train.yaml");
        std::fs::write(&path, "old\n").unwrap();
        let before = read_target(&path).unwrap();

        set_fault(Some(Fault::NoSpace));
        let err = write_atomic(&path, b"new\n", Some(&before)).unwrap_err();
        assert!(matches!(err, WriteError::NoSpace { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!("no space left on device while writing `{}`", path.display())
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"old\n");
        assert_eq!(dir_names(tmp.path()), vec!["train.yaml"]);

        // One-shot: the next write goes through.
        write_atomic(&path, b"new\n", Some(&before)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
    }

    #[test]
    fn fail_after_counts_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        set_fault(Some(Fault::FailAfter(1)));
        write_atomic(&a, b"1", None).unwrap();
        let err = write_atomic(&b, b"2", None).unwrap_err();
        assert!(matches!(err, WriteError::Io { op: "write", .. }), "{err}");
        assert!(!b.exists());
        assert_eq!(dir_names(tmp.path()), vec!["a"]);
        write_atomic(&b, b"2", None).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"2");

        set_fault(Some(Fault::WriteError));
        assert!(remove_file(&a).is_err());
        assert!(a.exists());
        set_fault(None);
        assert!(remove_file(&a).unwrap());
    }

    #[test]
    fn remove_file_removes_and_tolerates_absence() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("gpufix.conf");
        write_atomic(&path, b"x", None).unwrap();
        assert!(remove_file(&path).unwrap());
        assert!(!path.exists());
        assert!(!remove_file(&path).unwrap());
    }

    #[test]
    fn create_dir_all_reports_created_dirs_for_undo() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("system").join("train.service.d");
        let created = create_dir_all(&top).unwrap();
        assert_eq!(created, vec![tmp.path().join("system"), top.clone()]);
        let mode = std::fs::metadata(&top).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755);
        assert!(create_dir_all(&top).unwrap().is_empty());

        write_atomic(&top.join("gpufix.conf"), b"[Service]\n", None).unwrap();
        let err = remove_dir(&top).unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::Io {
                    op: "remove directory",
                    ..
                }
            ),
            "{err}"
        );
        remove_file(&top.join("gpufix.conf")).unwrap();
        for dir in created.iter().rev() {
            assert!(remove_dir(dir).unwrap());
        }
        assert!(dir_names(tmp.path()).is_empty());

        let link = tmp.path().join("link");
        symlink(tmp.path(), &link).unwrap();
        let err = create_dir_all(&link.join("x")).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err}");
        assert!(!tmp.path().join("x").exists());
    }

    #[test]
    fn enospc_and_edquot_map_to_no_space() {
        let p = Path::new("/etc/fstab");
        assert!(matches!(
            WriteError::io(p, "write", Errno::NOSPC),
            WriteError::NoSpace { .. }
        ));
        assert!(matches!(
            WriteError::io(p, "write", Errno::DQUOT),
            WriteError::NoSpace { .. }
        ));
        let err = WriteError::io(p, "write", Errno::IO);
        assert!(
            err.to_string().starts_with("cannot write `/etc/fstab`: "),
            "{err}"
        );
    }

    #[test]
    fn temp_names_are_hidden_distinct_and_bounded() {
        let long = "x".repeat(255);
        let a = temp_name(OsStr::new(&long), 0);
        let b = temp_name(OsStr::new(&long), 0);
        assert_ne!(a, b);
        assert!(a.len() <= 255);
        assert!(a.starts_with(b".gpufix.") && a.ends_with(b".tmp"));
    }
}
