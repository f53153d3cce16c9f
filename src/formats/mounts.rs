//! Mount tables the kernel writes: `/proc/mounts` (`/proc/self/mounts`, also `mount`'s
//! `/etc/mtab`) and `/proc/self/mountinfo`. Both escape whitespace and backslashes in path
//! fields as `\NNN` octal; [`decode_octal`] is the one decoder, shared with fstab.

use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Mount {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    pub options: Vec<String>,
}

impl Mount {
    pub fn to_json(&self) -> Value {
        json!({
            "device": self.device,
            "mount_point": self.mount_point,
            "fstype": self.fstype,
            "options": self.options,
        })
    }
}

/// Undo the kernel's octal escapes (`\040` is a space, `\011` a tab, `\012` a newline,
/// `\134` a backslash) in a mounts or fstab field.
pub fn decode_octal(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse `/proc/mounts` (or `/proc/self/mounts`, `/etc/mtab`); lines with fewer than four
/// fields are skipped.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines().filter_map(mounts_line).collect()
}

/// One line of `/proc/mounts`: `device mount_point fstype options dump pass`; `None` when it
/// has fewer than four fields.
pub fn mounts_line(line: &str) -> Option<Mount> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 4 {
        return None;
    }
    Some(Mount {
        device: decode_octal(f[0]),
        mount_point: decode_octal(f[1]),
        fstype: decode_octal(f[2]),
        options: f[3]
            .split(',')
            .filter(|o| !o.is_empty())
            .map(decode_octal)
            .collect(),
    })
}

/// True when `path` is `mount_point` or below it (component-wise, so `/data2` is not under
/// `/data`).
pub fn is_under(path: &str, mount_point: &str) -> bool {
    if mount_point == "/" {
        return path.starts_with('/');
    }
    let mp = mount_point.trim_end_matches('/');
    path == mp
        || path
            .strip_prefix(mp)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The mount that holds `path`: the longest mount point that contains it; among equal ones the
/// last mounted, which is the one that shadows the others.
pub fn mount_for_path<'a>(mounts: &'a [Mount], path: &str) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if is_under(path, &m.mount_point)
            && best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// One line of `/proc/PID/mountinfo` (proc(5)): unlike `/proc/mounts` it separates the
/// per-mount options from the filesystem's, and says which part of the filesystem (`root`) is
/// mounted — a bind mount of `/srv/data` shows `root: /srv/data`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MountInfo {
    pub mount_id: u64,
    pub parent_id: u64,
    /// `major:minor` of the device.
    pub dev: String,
    pub root: String,
    pub mount_point: String,
    /// Per-mount options (`rw`, `noatime`, `nosuid`).
    pub mount_options: Vec<String>,
    /// Optional fields (`shared:1`, `master:2`).
    pub optional: Vec<String>,
    pub fstype: String,
    pub source: String,
    /// Per-superblock options (`rw`, `inode64`, `discard`).
    pub super_options: Vec<String>,
}

impl MountInfo {
    /// As a `/proc/mounts` entry: the kernel shows the per-mount options there, then the
    /// filesystem's ones it does not repeat.
    pub fn to_mount(&self) -> Mount {
        let mut options = self.mount_options.clone();
        for o in &self.super_options {
            if !options.contains(o) && o != "rw" && o != "ro" {
                options.push(o.clone());
            }
        }
        Mount {
            device: self.source.clone(),
            mount_point: self.mount_point.clone(),
            fstype: self.fstype.clone(),
            options,
        }
    }
}

/// Parses `/proc/PID/mountinfo`; lines that do not have the fixed fields and the ` - `
/// separator are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountInfo> {
    text.lines().filter_map(mountinfo_line).collect()
}

fn mountinfo_line(line: &str) -> Option<MountInfo> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let sep = f.iter().position(|x| *x == "-")?;
    if sep < 6 || f.len() < sep + 3 {
        return None;
    }
    let list = |s: &str| {
        s.split(',')
            .filter(|o| !o.is_empty())
            .map(decode_octal)
            .collect()
    };
    Some(MountInfo {
        mount_id: f[0].parse().ok()?,
        parent_id: f[1].parse().ok()?,
        dev: f[2].to_string(),
        root: decode_octal(f[3]),
        mount_point: decode_octal(f[4]),
        mount_options: list(f[5]),
        optional: f[6..sep].iter().map(|s| s.to_string()).collect(),
        fstype: f[sep + 1].to_string(),
        source: decode_octal(f[sep + 2]),
        super_options: f.get(sep + 3).map(|s| list(s)).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "/dev/vda / ext4 rw,relatime 0 0\n\
        /dev/vdb /data xfs rw,noatime 0 0\n\
        tmpfs /data/tmp tmpfs rw 0 0\n\
        /dev/vdc /data xfs rw,relatime 0 0\n\
        /dev/sdb1 /mnt/my\\040disk ext4 rw 0 0\n";

    #[test]
    fn decodes_octal_escapes() {
        assert_eq!(decode_octal("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(decode_octal("a\\134b"), "a\\b");
        assert_eq!(decode_octal("trailing\\04"), "trailing\\04");
        let m = parse_mounts(MOUNTS);
        assert_eq!(m[4].mount_point, "/mnt/my disk");
    }

    #[test]
    fn for_path_is_the_longest_prefix_and_the_last_of_duplicates() {
        let m = parse_mounts(MOUNTS);
        assert_eq!(
            mount_for_path(&m, "/data/set/x").unwrap().device,
            "/dev/vdc"
        );
        assert_eq!(mount_for_path(&m, "/data/tmp/a").unwrap().fstype, "tmpfs");
        assert_eq!(mount_for_path(&m, "/data2/x").unwrap().device, "/dev/vda");
        assert_eq!(mount_for_path(&m, "/data").unwrap().device, "/dev/vdc");
    }

    #[test]
    fn mountinfo_fields_and_as_mounts() {
        let text = "22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n\
            95 22 259:0 /srv/data /mnt/my\\040data rw,noatime shared:40 master:2 - xfs /dev/nvme0n1 rw,attr2,inode64\n\
            garbage line\n\
            96 22 0:50 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].root, "/srv/data");
        assert_eq!(m[1].mount_point, "/mnt/my data");
        assert_eq!(m[1].optional, vec!["shared:40", "master:2"]);
        assert_eq!(m[1].fstype, "xfs");
        assert_eq!(m[1].source, "/dev/nvme0n1");
        let as_mount = m[1].to_mount();
        assert_eq!(as_mount.options, vec!["rw", "noatime", "attr2", "inode64"]);
        assert_eq!(as_mount.device, "/dev/nvme0n1");
        assert_eq!(
            m[2].to_mount().options,
            vec!["rw", "nosuid", "nodev", "size=65536k"]
        );
        let mounts: Vec<Mount> = m.iter().map(MountInfo::to_mount).collect();
        assert_eq!(
            mount_for_path(&mounts, "/mnt/my data/x").unwrap().fstype,
            "xfs"
        );
    }
}
