//! Which files gpufix may take instructions from. gpufix runs as root and playbooks are code
//! (their `command` probes run during `plan` and `audit`), so a playbook, values file, plan
//! file or state directory is used only when nobody but root (or the invoking user) could have
//! written it: the file and every directory above it must be owned by root or the invoking user
//! and not be group- or world-writable — as sudo and cron check their files. A world-writable
//! directory with the sticky bit (`/tmp`) is accepted above a trusted entry, since others cannot
//! rename or remove what they do not own there.
//!
//! [`open_trusted`] is the check for what gpufix then reads: it opens first and checks the
//! opened descriptor (`fstat`: owner, mode) and the directories above the file the descriptor
//! really is (`/proc/self/fd/N`), so a symbolic link flipped between a check of a path and its
//! open cannot hand gpufix another file than the one checked. [`check`] (a path) is for what
//! is not read through a descriptor gpufix keeps: a program run by path, a directory written to.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why a file or directory is not taken: the message, and what to do (empty when there is
/// nothing more to say than the message). Displays as `message\nhelp: help`, the form the
/// command line prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", if help.is_empty() { String::new() } else { format!("\nhelp: {help}") })]
pub struct TrustError {
    pub message: String,
    pub help: String,
}

impl From<String> for TrustError {
    fn from(message: String) -> Self {
        TrustError {
            message,
            help: String::new(),
        }
    }
}

/// The user gpufix acts for: root, or the invoking user when not root.
pub fn trusted_uid(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

fn owner_name(uid: u32) -> String {
    if uid == 0 {
        "root".into()
    } else {
        format!("uid {uid}")
    }
}

/// Why `path` (a file or directory gpufix takes instructions from) is not trusted, if it is
/// not. `what` names it in the message ("playbook", "values file", "plan file").
pub fn check(path: &Path, what: &str) -> Result<(), TrustError> {
    let canon = std::fs::canonicalize(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let m = std::fs::metadata(&canon)
        .map_err(|e| format!("cannot read {what} {}: {e}", canon.display()))?;
    check_chain(path, &canon, (m.uid(), m.mode()), what)
}

/// Open `path` to read it (links followed as given, non-blocking, no controlling terminal) and
/// check the descriptor: the file it is, and every directory above where it really lives. The
/// caller reads the returned file and nothing else.
pub fn open_trusted(path: &Path, what: &str) -> Result<std::fs::File, TrustError> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        format!(
            "cannot read {what} {}: {}",
            path.display(),
            std::io::Error::from(e)
        )
    })?;
    let st = rustix::fs::fstat(&fd)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let real = match std::fs::read_link(format!("/proc/self/fd/{}", {
        use std::os::fd::AsRawFd;
        fd.as_raw_fd()
    })) {
        Ok(r) => r,
        // no /proc (a chroot, an early-boot container): the canonical path, taken only when it
        // is the very file that was opened (same device and inode), so a swap in between is
        // refused rather than checked in its place
        Err(_) => {
            let c = std::fs::canonicalize(path)
                .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
            let m = std::fs::metadata(&c)
                .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
            if m.dev() != st.st_dev || m.ino() != st.st_ino {
                return Err(format!(
                    "cannot read {what} {}: it changed while it was being opened",
                    path.display()
                )
                .into());
            }
            c
        }
    };
    check_chain(path, &real, (st.st_uid, st.st_mode), what)?;
    Ok(std::fs::File::from(fd))
}

/// Check `canon` (owner and mode `last`, as read from it) and every directory above it.
fn check_chain(path: &Path, canon: &Path, last: (u32, u32), what: &str) -> Result<(), TrustError> {
    let mut chain: Vec<PathBuf> = canon.ancestors().map(Path::to_path_buf).collect();
    chain.reverse(); // from `/` down to the file
    let end = chain.len() - 1;
    for (i, p) in chain.iter().enumerate() {
        let (uid, mode) = if i == end {
            last
        } else {
            let m = std::fs::metadata(p)
                .map_err(|e| format!("cannot read {what} {}: {e}", p.display()))?;
            (m.uid(), m.mode())
        };
        let is_dir = mode & 0o170000 == 0o040000;
        let sticky = is_dir && mode & 0o1000 != 0;
        let shown = if i == end {
            format!("{what} {}", p.display())
        } else {
            format!("{} (above {what} {})", p.display(), path.display())
        };
        if !trusted_uid(uid) {
            return Err(TrustError {
                message: format!(
                    "refusing {shown}: it is owned by {}, not by root or the user running gpufix",
                    owner_name(uid)
                ),
                help: format!(
                    "playbooks, values and plan files are instructions gpufix runs as root; \
                     `chown root {}` if its content is yours",
                    p.display()
                ),
            });
        }
        // a sticky world-writable directory (/tmp) above a trusted entry is fine
        let writable = mode & 0o022 != 0 && !(sticky && i < end);
        if writable {
            return Err(TrustError {
                message: format!(
                    "refusing {shown}: it is {}-writable (mode {:o}), so anybody could change what gpufix runs as root",
                    if mode & 0o002 != 0 { "world" } else { "group" },
                    mode & 0o7777,
                ),
                help: format!("`chmod go-w {}`", p.display()),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_tempdir_file_is_trusted_and_a_writable_one_is_not() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p.yaml");
        std::fs::write(&f, "x").unwrap();
        check(&f, "playbook").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = check(&f, "playbook").unwrap_err();
        assert!(e.message.contains("world-writable"), "{e}");
        assert!(e.help.contains("chmod go-w"), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("world-writable") && e.contains("\nhelp: `chmod"),
            "{e}"
        );
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o775)).unwrap();
        let e = check(&f, "playbook").unwrap_err().message;
        assert!(e.contains("group-writable") && e.contains("above"), "{e}");
        let e = open_trusted(&f, "playbook").unwrap_err().message;
        assert!(e.contains("group-writable") && e.contains("above"), "{e}");
    }

    #[test]
    fn what_is_checked_is_the_file_opened_not_the_link() {
        let d = tempfile::tempdir().unwrap();
        let good = d.path().join("good.yaml");
        std::fs::write(&good, "good").unwrap();
        let bad = d.path().join("bad.yaml");
        std::fs::write(&bad, "bad").unwrap();
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o666)).unwrap();
        let link = d.path().join("link.yaml");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        let mut text = String::new();
        use std::io::Read;
        open_trusted(&link, "playbook")
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "good");
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&bad, &link).unwrap();
        let e = open_trusted(&link, "playbook").unwrap_err().message;
        assert!(
            e.contains("bad.yaml") && e.contains("world-writable"),
            "{e}"
        );
    }
}
