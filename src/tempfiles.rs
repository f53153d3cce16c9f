//! THE place gpufix makes temporary files. gpufix runs as root, often from a timer, so a
//! temporary file at a name someone else can guess (`/tmp/gpufix-<pid>`) is a root write to
//! whatever a local user planted there first: a symlink to `/etc/shadow`, or a directory they
//! own and can swap files in. A temporary file is therefore always made inside a fresh private
//! directory: created by `mkdtemp` (the `tempfile` crate: a random name, `O_EXCL` semantics,
//! mode 0700, owned by gpufix's user), so nobody else can have put anything in it or can put
//! anything in it later; it is removed when the returned guard is dropped.
//!
//! The rule is checked by `tests/layering.rs` (`temporary_files_go_through_one_helper`): no
//! `temp_dir`, `tempfile::` or `"/tmp/…"` path elsewhere in `src/` outside tests. Files gpufix
//! replaces atomically (`safe_write`) make their own temporary names beside the target with
//! `O_CREAT | O_EXCL | O_NOFOLLOW`, which is exclusive too.

use std::io::Write;
use std::path::PathBuf;

/// A private directory (0700, random name) that is removed with everything in it on drop.
pub struct PrivateDir {
    dir: tempfile::TempDir,
}

impl PrivateDir {
    /// Make one under the system's temporary directory (`TMPDIR` of the user running gpufix).
    pub fn new(purpose: &str) -> std::io::Result<PrivateDir> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("gpufix-{purpose}-"))
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()?;
        Ok(PrivateDir { dir })
    }

    /// Write `content` to a new file `name` in the directory (created exclusively, 0600) and
    /// return its path.
    pub fn write(&self, name: &str, content: &[u8]) -> std::io::Result<PathBuf> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = self.dir.path().join(name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&p)?;
        f.write_all(content)?;
        Ok(p)
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_private_dir_is_0700_random_and_gone_after_drop() {
        let a = PrivateDir::new("t").unwrap();
        let b = PrivateDir::new("t").unwrap();
        assert_ne!(a.path(), b.path());
        let m = std::fs::symlink_metadata(a.path()).unwrap();
        assert!(m.is_dir());
        assert_eq!(m.mode() & 0o7777, 0o700);
        let f = a.write("fstab", b"x\n").unwrap();
        assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o600);
        assert!(a.write("fstab", b"y\n").is_err(), "never reuses a name");
        let p = a.path().to_path_buf();
        drop(a);
        assert!(!p.exists());
    }
}
