//! Which files gpufix may take instructions from. gpufix runs as root and playbooks are code
//! (their `command` probes run during `plan` and `audit`), so a playbook, values file, plan
//! file or state directory is used only when nobody but root (or the invoking user) could have
//! written it: the file and every directory above it must be owned by root or the invoking user
//! and not be group- or world-writable — as sudo and cron check their files. A world-writable
//! directory with the sticky bit (`/tmp`) is accepted above a trusted entry, since others cannot
//! rename or remove what they do not own there.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
pub fn check(path: &Path, what: &str) -> Result<(), String> {
    let canon = std::fs::canonicalize(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let mut chain: Vec<PathBuf> = canon.ancestors().map(Path::to_path_buf).collect();
    chain.reverse(); // from `/` down to the file
    let last = chain.len() - 1;
    for (i, p) in chain.iter().enumerate() {
        let m =
            std::fs::metadata(p).map_err(|e| format!("cannot read {what} {}: {e}", p.display()))?;
        let mode = m.mode();
        let is_dir = m.is_dir();
        let sticky = is_dir && mode & 0o1000 != 0;
        let shown = if p == &canon {
            format!("{what} {}", p.display())
        } else {
            format!("{} (above {what} {})", p.display(), path.display())
        };
        if !trusted_uid(m.uid()) {
            return Err(format!(
                "refusing {shown}: it is owned by {}, not by root or the user running gpufix\n\
                 help: playbooks, values and plan files are instructions gpufix runs as root; \
                 `chown root {}` if its content is yours",
                owner_name(m.uid()),
                p.display()
            ));
        }
        // a sticky world-writable directory (/tmp) above a trusted entry is fine
        let writable = mode & 0o022 != 0 && !(sticky && i < last);
        if writable {
            return Err(format!(
                "refusing {shown}: it is {}-writable (mode {:o}), so anybody could change what gpufix runs as root\n\
                 help: `chmod go-w {}`",
                if mode & 0o002 != 0 { "world" } else { "group" },
                mode & 0o7777,
                p.display()
            ));
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
        assert!(e.contains("world-writable") && e.contains("help:"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o775)).unwrap();
        let e = check(&f, "playbook").unwrap_err();
        assert!(e.contains("group-writable") && e.contains("above"), "{e}");
    }
}
