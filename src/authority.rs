//! The job's authority, not root's: every file gpufix finds through a job (its argv, working
//! directory, environment, discovered configs, launch scripts, Python sources) is opened and
//! written with the job owner's credentials, inside the job's root, and checked on the opened
//! descriptor — so a job can never make gpufix read or change what its owner could not.
//!
//! How: [`as_owner`] runs a closure on a short-lived thread that first takes the owner's
//! supplementary groups, gid and uid (`rustix::thread::set_thread_groups`,
//! `set_thread_res_gid`, `set_thread_res_uid`). On Linux credentials belong to each thread; the
//! C library's `setresuid` broadcasts the change to every thread of the process, but rustix's
//! calls are the raw system calls and change only the calling thread. Leaving uid 0 in the
//! real, effective and saved uid clears the thread's permitted and effective capabilities (the
//! kernel does that; gpufix sets no `SECBIT_KEEP_CAPS`), so the thread has no
//! `CAP_DAC_OVERRIDE`, `CAP_FOWNER` or `CAP_CHOWN`: the kernel judges every path walk, open,
//! create and rename exactly as it would for the owner. The thread ends with the closure, its
//! credentials with it; the descriptors it opened belong to the process and come back as
//! values. The rest of gpufix stays root throughout.
//!
//! Why a thread and not a child process: a child that drops to the uid would need a fork and
//! exec per file and would hand the descriptor back over a Unix socket (`SCM_RIGHTS`, which
//! needs `unsafe` or another crate; the crate denies `unsafe_code`), and a write would have to
//! run the whole atomic replacement in the child. A thread does the same with the same kernel
//! checks and none of the plumbing. `setfsuid` would change only the filesystem uid, but leaves
//! the capabilities in place unless they are dropped by hand as well.
//!
//! Every job-derived open and write goes through [`as_owner`] (grep for it): [`open_in_root`]
//! for reads, and the file fixes' writes (`fixes::file`) for `apply` and `rollback`. A path is
//! resolved inside the job's root with `openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)`: an
//! absolute or `..` symbolic link in a container's image resolves inside that container, never
//! on the host. Type and size are checked with `fstat` on the opened descriptor, never on a path
//! that could be swapped between the check and the read.

use rustix::fd::OwnedFd;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use serde::{Deserialize, Serialize};
use std::io::{self, Read};

/// Whose authority a job carries: its effective uid and gid and its supplementary groups, as
/// `/proc/PID/status` gives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<u32>,
}

impl Owner {
    /// The owner from the text of `/proc/PID/status` (`Uid:`/`Gid:` give real, effective, saved
    /// and filesystem ids; the effective ones are taken, `Groups:` as it is).
    pub fn from_status(text: &str) -> Option<Owner> {
        let ids = |key: &str| -> Option<Vec<u32>> {
            let line = text.lines().find(|l| l.starts_with(key))?;
            line[key.len()..]
                .split_whitespace()
                .map(|n| n.parse().ok())
                .collect()
        };
        let uid = *ids("Uid:")?.get(1)?;
        let gid = *ids("Gid:")?.get(1)?;
        let groups = ids("Groups:").unwrap_or_default();
        Some(Owner { uid, gid, groups })
    }

    /// How messages name the owner: `uid 65534`.
    pub fn describe(&self) -> String {
        format!("uid {}", self.uid)
    }
}

/// What a job-derived file its owner may not read is called, in every message about it.
pub const NOT_READABLE: &str = "not readable as the job's owner";

/// The sentence a job-derived file gets when its owner may not read or change it.
pub fn not_readable(path: &str, owner: &Owner) -> String {
    format!(
        "{path}: {NOT_READABLE} ({}); gpufix reads what a job names with its owner's authority",
        owner.describe()
    )
}

fn take_credentials(owner: &Owner) -> io::Result<()> {
    use rustix::process::{Gid, Uid};
    let me = rustix::process::geteuid().as_raw();
    if me != 0 {
        // not root: the thread has only this user's authority; acting for another is refused
        return if owner.uid == me {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "gpufix runs as uid {me} and cannot act as the job's owner ({})",
                    owner.describe()
                ),
            ))
        };
    }
    let groups: Vec<Gid> = owner.groups.iter().map(|g| Gid::from_raw(*g)).collect();
    rustix::thread::set_thread_groups(&groups)?;
    let gid = Gid::from_raw(owner.gid);
    rustix::thread::set_thread_res_gid(gid, gid, gid)?;
    let uid = Uid::from_raw(owner.uid);
    rustix::thread::set_thread_res_uid(uid, uid, uid)?;
    // the kernel cleared the capabilities when uid 0 left all three ids; make sure of it
    if owner.uid != 0 && rustix::thread::capabilities(None).is_ok_and(|c| !c.effective.is_empty()) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the job owner's thread kept capabilities; refusing to act",
        ));
    }
    Ok(())
}

/// Run `f` with `owner`'s credentials (uid, gid, supplementary groups; no capabilities) on a
/// thread of its own; `f` never runs when the credentials cannot be taken. THE way gpufix acts
/// for a job (see the module doc). A fault armed for the transaction tests
/// ([`crate::safe_write::set_fault`]) travels to that thread and back.
pub fn as_owner<T: Send>(owner: &Owner, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    let fault = crate::safe_write::take_armed_fault();
    let r = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("as-job-owner".into())
            .spawn_scoped(s, move || {
                take_credentials(owner)?;
                crate::safe_write::set_fault(fault);
                let v = f();
                Ok((v, crate::safe_write::take_armed_fault()))
            })
            .map_err(io::Error::other)?
            .join()
            .map_err(|_| io::Error::other("the job owner's thread panicked"))?
    });
    match r {
        Ok((v, left)) => {
            crate::safe_write::set_fault(left);
            Ok(v)
        }
        Err(e) => {
            crate::safe_write::set_fault(fault);
            Err(e)
        }
    }
}

/// Open `path` as `owner`, resolved inside `root` (a directory descriptor: the job's
/// `/proc/PID/root`, `/`, or `--root`): every symbolic link resolves inside the root, magic
/// links are refused. Read-only, non-blocking (a FIFO does not hang), no controlling terminal.
pub fn open_in_root(owner: &Owner, root: &OwnedFd, path: &str) -> io::Result<OwnedFd> {
    let rel = path.trim_start_matches('/');
    let rel = if rel.is_empty() { "." } else { rel };
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    as_owner(owner, || {
        rustix::fs::openat2(
            root,
            rel,
            flags,
            Mode::empty(),
            ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
        )
    })?
    .map_err(io::Error::from)
}

/// Why a job-derived file was not read, as a sentence.
#[derive(Debug)]
pub enum JobReadError {
    /// The owner may not read it (or reach it).
    NotReadable(String),
    NotFound(String),
    NotRegular(String),
    TooLarge(String),
    Other(String),
}

impl std::fmt::Display for JobReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobReadError::NotReadable(s)
            | JobReadError::NotFound(s)
            | JobReadError::NotRegular(s)
            | JobReadError::TooLarge(s)
            | JobReadError::Other(s) => f.write_str(s),
        }
    }
}

impl From<JobReadError> for io::Error {
    fn from(e: JobReadError) -> io::Error {
        let kind = match &e {
            JobReadError::NotReadable(_) => io::ErrorKind::PermissionDenied,
            JobReadError::NotFound(_) => io::ErrorKind::NotFound,
            JobReadError::NotRegular(_) => io::ErrorKind::InvalidInput,
            JobReadError::TooLarge(_) => io::ErrorKind::FileTooLarge,
            JobReadError::Other(_) => io::ErrorKind::Other,
        };
        io::Error::new(kind, e.to_string())
    }
}

/// Read a file a job names: opened as `owner` inside `root` ([`open_in_root`]), a regular file
/// (checked on the descriptor), at most `max` bytes. `shown` names it in messages.
pub fn read_in_root(
    owner: &Owner,
    root: &OwnedFd,
    path: &str,
    shown: &str,
    max: u64,
) -> Result<Vec<u8>, JobReadError> {
    let fd = open_in_root(owner, root, path).map_err(|e| match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            JobReadError::NotReadable(not_readable(shown, owner))
        }
        Some(libc::ENOENT) => JobReadError::NotFound(format!("{shown}: not found")),
        Some(libc::EXDEV) | Some(libc::ELOOP) => JobReadError::NotReadable(format!(
            "{shown}: a link leads out of the job's root or loops; not read"
        )),
        _ => JobReadError::Other(format!("cannot read {shown}: {e}")),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| JobReadError::Other(format!("{shown}: {e}")))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(JobReadError::NotRegular(format!(
            "{shown} is not a regular file, not read"
        )));
    }
    if st.st_size as u64 > max {
        return Err(JobReadError::TooLarge(format!(
            "{shown} is larger than {} MiB, not read",
            max >> 20
        )));
    }
    let mut out = Vec::new();
    std::fs::File::from(fd)
        .take(max + 1)
        .read_to_end(&mut out)
        .map_err(|e| JobReadError::Other(format!("cannot read {shown}: {e}")))?;
    if out.len() as u64 > max {
        return Err(JobReadError::TooLarge(format!(
            "{shown} is larger than {} MiB, not read",
            max >> 20
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_the_effective_ids_of_proc_status() {
        let s = "Name:\tpython3\nUid:\t1000\t1001\t1001\t1001\nGid:\t100\t101\t101\t101\nGroups:\t4 27 1001 \n";
        assert_eq!(
            Owner::from_status(s),
            Some(Owner {
                uid: 1001,
                gid: 101,
                groups: vec![4, 27, 1001]
            })
        );
        let none = "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n";
        assert_eq!(Owner::from_status(none).unwrap().groups, Vec::<u32>::new());
        assert_eq!(Owner::from_status("Name: x\n"), None);
    }

    #[test]
    fn a_thread_as_nobody_cannot_read_a_root_only_file_and_the_rest_stays_root() {
        if !rustix::process::geteuid().is_root() {
            return; // the credential switch needs root; CI and the dev machines run as root
        }
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            d.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let secret = d.path().join("secret.yaml");
        std::fs::write(&secret, "token: hunter2\n").unwrap();
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let root = rustix::fs::open("/", OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let nobody = Owner {
            uid: 65534,
            gid: 65534,
            groups: vec![],
        };
        let shown = secret.display().to_string();
        let e = read_in_root(&nobody, &root, &shown, &shown, 1 << 20).unwrap_err();
        assert!(
            matches!(e, JobReadError::NotReadable(_))
                && e.to_string().contains("not readable as the job's owner"),
            "{e}"
        );
        // this thread is still root and reads it
        assert_eq!(rustix::process::geteuid().as_raw(), 0);
        let me = Owner {
            uid: 0,
            gid: 0,
            groups: vec![],
        };
        assert_eq!(
            read_in_root(&me, &root, &shown, &shown, 1 << 20).unwrap(),
            b"token: hunter2\n"
        );
        // and the owner's thread had no capabilities left
        let caps = as_owner(&nobody, || rustix::thread::capabilities(None).unwrap()).unwrap();
        assert!(caps.effective.is_empty() && caps.permitted.is_empty());
    }

    #[test]
    fn links_resolve_inside_the_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("etc")).unwrap();
        std::fs::write(d.path().join("etc/hostname"), "inside\n").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("cfg.yaml")).unwrap();
        let root =
            rustix::fs::open(d.path(), OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let me = Owner {
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
            groups: vec![],
        };
        assert_eq!(
            read_in_root(&me, &root, "/cfg.yaml", "cfg.yaml", 1 << 20).unwrap(),
            b"inside\n"
        );
    }
}
