//! `/etc/fstab`: read its entries ([`parse_fstab`], for the `fstab` probe and pasted fstab
//! evidence), and change only the options field (the 4th) of the one entry for a mount point;
//! every other byte, including the field separators, stays as it was. Reader and editor share
//! one line splitter, so what the `fstab.options` fix writes is what the probe reads back.
//!
//! Options are handled the way mount(8) reads them: adding an option drops its opposite
//! (`noatime` replaces `relatime`, `atime` and `strictatime`; `rw` replaces `ro`), adding
//! `key=value` replaces another value for the same key, and an option list left empty
//! becomes `defaults` (so adding `noatime` to `defaults` gives `defaults,noatime`).

use super::{EditError, Lines, check_single_line};

/// Mount-option groups of which at most one may be set.
const EXCLUSIVE: &[&[&str]] = &[
    &[
        "atime",
        "noatime",
        "relatime",
        "norelatime",
        "strictatime",
        "nostrictatime",
    ],
    &["diratime", "nodiratime"],
    &["ro", "rw"],
    &["exec", "noexec"],
    &["suid", "nosuid"],
    &["dev", "nodev"],
    &["auto", "noauto"],
    &["user", "nouser", "users"],
    &["sync", "async"],
    &["mand", "nomand"],
    &["iversion", "noiversion"],
    &["lazytime", "nolazytime"],
    &["dirsync"],
];

/// Byte spans of the whitespace-separated fields of a line.
fn fields(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' || b[i] == b'\t' {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && b[i] != b' ' && b[i] != b'\t' {
            i += 1;
        }
        out.push((s, i));
    }
    out
}

/// Decodes fstab's octal escapes (`\040` is a space): the one decoder the mount tables use.
pub use super::mounts::decode_octal;

/// One entry of an fstab file, fields decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    /// The 4th field split at commas (empty items dropped); `defaults` when the field is
    /// missing, as mount(8) reads it.
    pub options: Vec<String>,
    /// The 5th and 6th fields; `None` when missing (mount(8) then takes 0) or not a number.
    pub dump: Option<u32>,
    pub pass: Option<u32>,
    /// 1-based line number.
    pub line: usize,
}

/// Non-comment, non-blank lines that are not entries: fewer than three fields.
pub fn short_lines(text: &str) -> usize {
    Lines::parse(text)
        .lines
        .iter()
        .filter(|l| entry(&l.text).is_some_and(|f| f.len() < 3))
        .count()
}

/// The entries of an fstab file, in order. Comments and blank lines are skipped, and so are
/// lines with fewer than three fields (see [`short_lines`]).
pub fn parse_fstab(text: &str) -> Vec<Entry> {
    Lines::parse(text)
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let f = entry(&l.text)?;
            if f.len() < 3 {
                return None;
            }
            let field = |n: usize| f.get(n).map(|&(s, e)| &l.text[s..e]);
            Some(Entry {
                device: decode_octal(field(0)?),
                mount_point: decode_octal(field(1)?),
                fstype: decode_octal(field(2)?),
                options: match field(3) {
                    Some(o) => split_options(o).iter().map(|o| decode_octal(o)).collect(),
                    None => vec!["defaults".to_string()],
                },
                dump: field(4).and_then(|v| v.parse().ok()),
                pass: field(5).and_then(|v| v.parse().ok()),
                line: i + 1,
            })
        })
        .collect()
}

/// `/data/` and `/data` are the same mount point.
pub fn normalize_mount_point(mp: &str) -> &str {
    let t = mp.trim_end_matches('/');
    if t.is_empty() && mp.starts_with('/') {
        "/"
    } else {
        t
    }
}

/// An entry line: its field spans; `None` for comments and blank lines.
fn entry(text: &str) -> Option<Vec<(usize, usize)>> {
    let t = text.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    Some(fields(text))
}

/// Line indexes of the entries whose mount point (2nd field) is `mount_point`.
fn entries_for(lines: &Lines, mount_point: &str) -> Vec<usize> {
    let want = normalize_mount_point(mount_point);
    lines
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            entry(&l.text).is_some_and(|f| {
                f.len() >= 2
                    && normalize_mount_point(&decode_octal(&l.text[f[1].0..f[1].1])) == want
            })
        })
        .map(|(i, _)| i)
        .collect()
}

fn split_options(field: &str) -> Vec<String> {
    field
        .split(',')
        .filter(|o| !o.is_empty())
        .map(str::to_string)
        .collect()
}

/// The options of the entry for `mount_point` (the last one if several, as `mount -a` mounts
/// them in order); `defaults` when the entry has no options field.
pub fn fstab_options(old: &str, mount_point: &str) -> Option<Vec<String>> {
    let want = normalize_mount_point(mount_point);
    parse_fstab(old)
        .into_iter()
        .rev()
        .find(|e| normalize_mount_point(&e.mount_point) == want)
        .map(|e| e.options)
}

fn key_of(opt: &str) -> &str {
    opt.split_once('=').map_or(opt, |(k, _)| k)
}

fn conflicts(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    if a.contains('=') || b.contains('=') {
        return key_of(a) == key_of(b);
    }
    EXCLUSIVE
        .iter()
        .any(|group| group.contains(&a) && group.contains(&b))
}

fn check_option(opt: &str) -> Result<(), EditError> {
    check_single_line("mount option", opt)?;
    if opt.is_empty() || opt.contains([',', ' ', '\t']) {
        return Err(EditError::Invalid(format!(
            "mount option `{opt}` must be one non-empty option without `,` or spaces"
        )));
    }
    Ok(())
}

/// The new option list: `remove` entries go (a bare key also removes `key=value`), `add`
/// entries are appended unless present, replacing their opposites.
fn merge(current: &[String], add: &[&str], remove: &[&str]) -> Vec<String> {
    let mut opts: Vec<String> = current
        .iter()
        .filter(|o| {
            !remove.iter().any(|r| {
                o.as_str() == *r || (!r.contains('=') && o.contains('=') && key_of(o) == *r)
            })
        })
        .cloned()
        .collect();
    for a in add {
        if opts.iter().any(|o| o == a) {
            continue;
        }
        match opts.iter().position(|o| conflicts(o, a)) {
            // Take the opposite's place so the list reads as before.
            Some(p) => {
                opts[p] = a.to_string();
                let mut i = opts.len();
                while i > p + 1 {
                    i -= 1;
                    if conflicts(&opts[i], a) {
                        opts.remove(i);
                    }
                }
            }
            None => opts.push(a.to_string()),
        }
    }
    if opts.is_empty() {
        opts.push("defaults".to_string());
    }
    opts
}

/// Adds and removes options on the one entry for `mount_point`. Errors when fstab has no entry
/// for it, or several.
pub fn fstab_set_options(
    old: &str,
    mount_point: &str,
    add: &[&str],
    remove: &[&str],
) -> Result<String, EditError> {
    for o in add.iter().chain(remove) {
        check_option(o)?;
    }
    if let Some(both) = add.iter().find(|a| remove.contains(a)) {
        return Err(EditError::Invalid(format!(
            "mount option `{both}` is both added and removed"
        )));
    }
    let mut lines = Lines::parse(old);
    let hits = entries_for(&lines, mount_point);
    let i = match hits.as_slice() {
        [] => {
            return Err(EditError::NotFound(format!(
                "fstab has no entry for mount point `{mount_point}`"
            )));
        }
        [i] => *i,
        many => {
            let nums: Vec<String> = many.iter().map(|i| (i + 1).to_string()).collect();
            return Err(EditError::Ambiguous(format!(
                "fstab has {} entries for mount point `{mount_point}` (lines {})",
                many.len(),
                nums.join(", ")
            )));
        }
    };
    let text = lines.lines[i].text.clone();
    let f = fields(&text);
    if f.len() < 3 {
        return Err(EditError::Parse(format!(
            "fstab entry for mount point `{mount_point}` on line {} has only {} fields",
            i + 1,
            f.len()
        )));
    }
    let current = match f.get(3) {
        Some(&(s, e)) => split_options(&text[s..e]),
        None => vec!["defaults".to_string()],
    };
    let new = merge(&current, add, remove);
    if new == current {
        return Ok(old.to_string());
    }
    let joined = new.join(",");
    lines.lines[i].text = match f.get(3) {
        Some(&(s, e)) => format!("{}{joined}{}", &text[..s], &text[e..]),
        None => {
            let end = f[2].1;
            // Reuse the separator before the 3rd field.
            let sep = &text[f[1].1..f[2].0];
            format!("{}{sep}{joined}{}", &text[..end], &text[end..])
        }
    };
    Ok(lines.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FSTAB: &str = "# /etc/fstab: static file system information.\n\
UUID=1b2c-33\t/\text4\terrors=remount-ro\t0\t1\n\
/dev/nvme1n1p1  /data           xfs     defaults        0       2\n\
# /dev/sdb1 /data ext4 defaults 0 2\n\
nas:/vol/ds     /mnt/my\\040data  nfs     rw,relatime,vers=4.1   0 0\n\
/swap.img\tnone\tswap\tsw\t0\t0\n";

    fn changed_lines(a: &str, b: &str) -> Vec<(String, String)> {
        let a: Vec<&str> = a.split_inclusive('\n').collect();
        let b: Vec<&str> = b.split_inclusive('\n').collect();
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| (x.to_string(), y.to_string()))
            .collect()
    }

    #[test]
    fn adding_noatime_to_defaults_touches_only_that_field() {
        let new = fstab_set_options(FSTAB, "/data", &["noatime"], &[]).unwrap();
        assert_eq!(
            changed_lines(FSTAB, &new),
            vec![(
                "/dev/nvme1n1p1  /data           xfs     defaults        0       2\n".to_string(),
                "/dev/nvme1n1p1  /data           xfs     defaults,noatime        0       2\n"
                    .to_string()
            )]
        );
        assert_eq!(
            fstab_set_options(&new, "/data", &["noatime"], &[]).unwrap(),
            new
        );
        assert_eq!(
            fstab_options(&new, "/data/").unwrap(),
            vec!["defaults", "noatime"]
        );
        assert_eq!(
            fstab_set_options(&new, "/data", &[], &["noatime"]).unwrap(),
            FSTAB
        );
    }

    #[test]
    fn noatime_replaces_relatime_and_key_values_replace() {
        let new = fstab_set_options(FSTAB, "/mnt/my data", &["noatime", "vers=4.2"], &[]).unwrap();
        assert!(
            new.contains("nas:/vol/ds     /mnt/my\\040data  nfs     rw,noatime,vers=4.2   0 0\n"),
            "{new}"
        );
        assert_eq!(
            fstab_options(&new, "/mnt/my data").unwrap(),
            vec!["rw", "noatime", "vers=4.2"]
        );
        let new = fstab_set_options(&new, "/mnt/my data", &[], &["vers"]).unwrap();
        assert_eq!(
            fstab_options(&new, "/mnt/my data").unwrap(),
            vec!["rw", "noatime"]
        );
    }

    #[test]
    fn tabs_and_root_entry() {
        let new = fstab_set_options(FSTAB, "/", &["noatime"], &[]).unwrap();
        assert!(
            new.contains("UUID=1b2c-33\t/\text4\terrors=remount-ro,noatime\t0\t1\n"),
            "{new}"
        );
    }

    #[test]
    fn removing_everything_leaves_defaults() {
        let new = fstab_set_options(FSTAB, "none", &[], &["sw"]).unwrap();
        assert!(
            new.contains("/swap.img\tnone\tswap\tdefaults\t0\t0\n"),
            "{new}"
        );
    }

    #[test]
    fn missing_and_duplicate_entries_are_errors() {
        let err = fstab_set_options(FSTAB, "/scratch", &["noatime"], &[]).unwrap_err();
        assert_eq!(
            err,
            EditError::NotFound("fstab has no entry for mount point `/scratch`".into())
        );
        let dup = format!("{FSTAB}/dev/sdc1 /data ext4 defaults 0 2\n");
        let err = fstab_set_options(&dup, "/data", &["noatime"], &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fstab has 2 entries for mount point `/data` (lines 3, 7)"
        );
        let err = fstab_set_options(FSTAB, "/data", &["a,b"], &[]).unwrap_err();
        assert!(matches!(err, EditError::Invalid(_)));
        assert_eq!(fstab_options(FSTAB, "/scratch"), None);
        assert_eq!(
            fstab_set_options("", "/data", &["noatime"], &[])
                .unwrap_err()
                .to_string(),
            "fstab has no entry for mount point `/data`"
        );
    }

    #[test]
    fn crlf_no_final_newline_and_short_entries() {
        let old = "# c\r\n/dev/a /data ext4 defaults 0 2\r\n/dev/b /x xfs";
        let new = fstab_set_options(old, "/x", &["noatime"], &[]).unwrap();
        assert_eq!(
            new,
            "# c\r\n/dev/a /data ext4 defaults 0 2\r\n/dev/b /x xfs defaults,noatime"
        );
        let new = fstab_set_options(old, "/data", &["noatime"], &[]).unwrap();
        assert_eq!(
            new,
            "# c\r\n/dev/a /data ext4 defaults,noatime 0 2\r\n/dev/b /x xfs"
        );
        assert_eq!(fstab_options(old, "/x").unwrap(), vec!["defaults"]);
    }

    #[test]
    fn octal_escapes_decode() {
        assert_eq!(decode_octal("/mnt/a\\040b\\011c\\134d"), "/mnt/a b\tc\\d");
        assert_eq!(decode_octal("/mnt/\\04"), "/mnt/\\04");
    }
}
