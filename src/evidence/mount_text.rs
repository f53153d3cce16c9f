//! Mount tables as people paste them besides `/etc/fstab` and `/proc/mounts`: the output of
//! `mount` (`/dev/sdb1 on /data type ext4 (rw,relatime)`), `/proc/self/mountinfo`, and `df -h`
//! (sizes, which is how a container's 64 MB `/dev/shm` shows). `mount` and mountinfo become
//! `/proc/mounts` lines, so the rules that read mounts judge them the same way; `df` only gives
//! sizes and mount points, so it never stands in for a mount table.

use serde::Serialize;

fn clean(line: &str) -> &str {
    let mut l = line.trim();
    while let Some(r) = l.strip_prefix('>').or_else(|| l.strip_prefix('`')) {
        l = r.trim_start();
    }
    let l = l.trim_end_matches('`').trim_end();
    // a shell prompt before a command line (`$ mount`) is not a row
    l
}

/// `DEV on MOUNT type FSTYPE (OPTIONS)`; on macOS/BSD `DEV on MOUNT (FSTYPE, OPTIONS)`.
fn mount_line(l: &str) -> Option<(String, String, String, String)> {
    let (dev, rest) = l.split_once(" on ")?;
    let (mp, rest) = rest.rsplit_once(" type ")?;
    let rest = rest.trim();
    let (fstype, opts) = match rest.split_once(' ') {
        Some((t, o)) => (t, o.trim()),
        None => (rest, ""),
    };
    let opts = opts.strip_prefix('(')?.strip_suffix(')')?;
    if dev.trim().is_empty() || !mp.starts_with('/') || fstype.is_empty() {
        return None;
    }
    Some((
        dev.trim().to_string(),
        mp.trim().to_string(),
        fstype.to_string(),
        opts.to_string(),
    ))
}

pub fn looks_like_mount_output(h: &str) -> bool {
    if findmnt_rows(h).next().is_some() {
        return true;
    }
    let rows: Vec<&str> = h.lines().map(clean).filter(|l| !l.is_empty()).collect();
    let hits = rows.iter().filter(|l| mount_line(l).is_some()).count();
    hits >= 1 && hits * 2 >= rows.len().min(40)
}

/// `findmnt` (tree or `-l` list) under its default header `TARGET SOURCE FSTYPE OPTIONS`:
/// the rows after the header, as (source, target, fstype, options).
fn findmnt_rows(text: &str) -> impl Iterator<Item = (String, String, String, String)> + '_ {
    text.lines()
        .map(clean)
        .skip_while(|l| {
            l.split_whitespace().collect::<Vec<_>>() != ["TARGET", "SOURCE", "FSTYPE", "OPTIONS"]
        })
        .skip(1)
        .filter_map(|l| {
            // the tree drawing before a nested mount point
            let l = l.trim_start_matches(['│', '├', '└', '─', '|', '`', '-', ' ']);
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f[0].starts_with('/')).then(|| {
                (
                    f[1].to_string(),
                    f[0].to_string(),
                    f[2].to_string(),
                    f[3].to_string(),
                )
            })
        })
}

/// Escapes whitespace the way /proc/mounts does.
fn esc(s: &str) -> String {
    s.replace('\\', "\\134")
        .replace(' ', "\\040")
        .replace('\t', "\\011")
}

/// `mount` output as /proc/mounts text.
pub fn mount_output_to_proc_mounts(text: &str) -> String {
    let mut out = String::new();
    for (d, m, t, o) in findmnt_rows(text) {
        out.push_str(&format!("{} {} {} {} 0 0\n", esc(&d), esc(&m), t, o));
    }
    for l in text.lines().map(clean) {
        if let Some((d, m, t, o)) = mount_line(l) {
            out.push_str(&format!("{} {} {} {} 0 0\n", esc(&d), esc(&m), t, o));
        }
    }
    out
}

/// mountinfo: `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`.
fn mountinfo_line(l: &str) -> Option<(String, String, String, String)> {
    let (left, right) = l.split_once(" - ")?;
    let lf: Vec<&str> = left.split_whitespace().collect();
    let rf: Vec<&str> = right.split_whitespace().collect();
    if lf.len() < 6 || rf.len() < 2 {
        return None;
    }
    lf[0].parse::<u64>().ok()?;
    lf[1].parse::<u64>().ok()?;
    if !lf[2].contains(':') || !lf[4].starts_with('/') {
        return None;
    }
    // per-mount options (lf[5]) then the superblock's (rf[2]): both matter for atime
    let mut opts: Vec<&str> = lf[5].split(',').collect();
    if let Some(so) = rf.get(2) {
        for o in so.split(',') {
            if !opts.contains(&o) && o != "rw" && o != "ro" {
                opts.push(o);
            }
        }
    }
    Some((
        rf[1].to_string(),
        lf[4].to_string(),
        rf[0].to_string(),
        opts.join(","),
    ))
}

pub fn looks_like_mountinfo(h: &str) -> bool {
    let rows: Vec<&str> = h.lines().map(clean).filter(|l| !l.is_empty()).collect();
    let hits = rows.iter().filter(|l| mountinfo_line(l).is_some()).count();
    hits >= 1 && hits * 2 >= rows.len().min(40)
}

pub fn mountinfo_to_proc_mounts(text: &str) -> String {
    let mut out = String::new();
    for l in text.lines().map(clean) {
        if let Some((d, m, t, o)) = mountinfo_line(l) {
            out.push_str(&format!("{d} {m} {t} {o} 0 0\n"));
        }
    }
    out
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DfRow {
    pub filesystem: String,
    pub fstype: Option<String>,
    pub size_mib: Option<f64>,
    /// the `Avail` column (GNU coreutils `df.c`: `Size Used Avail Use%`, or `Available` with
    /// `1K-blocks`): what was free when `df` ran
    pub avail_mib: Option<f64>,
    pub mount_point: String,
}

/// `df -h` / `df -hT` / `df -k`: a header with `Filesystem` and `Mounted on`, or rows
/// without it (`df -h | grep shm`): `shm 64M 0 64M 0% /dev/shm`.
pub fn looks_like_df(h: &str) -> bool {
    let rows: Vec<&str> = h.lines().map(clean).filter(|l| !l.is_empty()).collect();
    rows.iter().any(|l| {
        l.starts_with("Filesystem")
            && l.contains("Mounted on")
            && (l.contains("Size") || l.contains("blocks") || l.contains("Avail"))
    }) || {
        let hits = rows.iter().filter(|l| is_df_row(l)).count();
        hits >= 1 && hits * 2 >= rows.len()
    }
}

/// `FS SIZE USED AVAIL USE% /mount` with sizes and a percentage.
fn is_df_row(l: &str) -> bool {
    let f: Vec<&str> = l.split_whitespace().collect();
    let n = f.len();
    n >= 6
        && f[n - 1].starts_with('/')
        && f[n - 2].ends_with('%')
        && f[n - 2].trim_end_matches('%').parse::<f64>().is_ok()
        && f[n - 5].chars().next().is_some_and(|c| c.is_ascii_digit())
}

fn size_mib(s: &str, block_kib: Option<f64>) -> Option<f64> {
    let s = s.trim();
    if let Some(k) = block_kib {
        return s.parse::<f64>().ok().map(|n| n * k / 1024.0);
    }
    let (n, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let n: f64 = n.parse().ok()?;
    let f = match unit.trim_end_matches(['i', 'B']) {
        "" => 1.0 / 1024.0 / 1024.0, // bare bytes with --block-size=1; rare
        "K" | "k" => 1.0 / 1024.0,
        "M" => 1.0,
        "G" => 1024.0,
        "T" => 1024.0 * 1024.0,
        "P" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * f)
}

pub fn parse_df(text: &str) -> Vec<DfRow> {
    let mut out = Vec::new();
    let mut typed = false;
    let mut block_kib = None;
    let mut carry: Option<String> = None;
    let mut seen_header = false;
    for l in text.lines().map(clean) {
        if l.starts_with("Filesystem") {
            seen_header = true;
            typed = l.split_whitespace().nth(1) == Some("Type");
            block_kib = if l.contains("1K-blocks") {
                Some(1.0)
            } else if l.contains("1M-blocks") {
                Some(1024.0)
            } else {
                None
            };
            continue;
        }
        let mut f: Vec<String> = l.split_whitespace().map(str::to_string).collect();
        if f.is_empty() {
            continue;
        }
        // a long device name on its own line, the numbers on the next
        if f.len() == 1 {
            carry = Some(f.remove(0));
            continue;
        }
        if let Some(dev) = carry.take()
            && f.first()
                .is_some_and(|x| x.chars().next().is_some_and(|c| c.is_ascii_digit()))
        {
            f.insert(0, dev);
        }
        // rows without a header: the type column is there when the size column is not a size
        if !seen_header && f.len() >= 7 && !f[1].chars().next().is_some_and(|c| c.is_ascii_digit())
        {
            typed = true;
        }
        let need = if typed { 7 } else { 6 };
        if f.len() < need || !f[need - 1].starts_with('/') {
            continue;
        }
        let size_col = if typed { 2 } else { 1 };
        if out.len() < super::MAX_ITEMS {
            out.push(DfRow {
                filesystem: f[0].clone(),
                fstype: typed.then(|| f[1].clone()),
                size_mib: size_mib(&f[size_col], block_kib),
                avail_mib: size_mib(&f[size_col + 2], block_kib),
                mount_point: f[need - 1..].join(" "),
            });
        }
    }
    out
}

/// Size of a tmpfs from its `size=` mount option (`65536k`, `64m`, `8g`, or bytes).
pub fn tmpfs_size_option_mib(options: &str) -> Option<f64> {
    let v = options
        .split(',')
        .find_map(|o| o.trim().strip_prefix("size="))?;
    if v.ends_with('%') {
        return None;
    }
    let (n, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
    let n: f64 = n.parse().ok()?;
    Some(match unit.to_ascii_lowercase().as_str() {
        "" => n / 1048576.0,
        "k" => n / 1024.0,
        "m" => n,
        "g" => n * 1024.0,
        "t" => n * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// `mount` output.
pub struct MountOutput;

impl super::EvidenceKind for MountOutput {
    fn name(&self) -> &'static str {
        "mount-output"
    }
    fn doc(&self) -> &'static str {
        "mount's output (`/dev/sdb1 on /data type ext4 (rw,relatime)`): what is mounted now, read as /proc/mounts"
    }
    fn example(&self) -> &'static str {
        "mount"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        super::mounts::MOUNTS_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["mounts", "mounts.data", "shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_mount_output(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&super::mounts::parse_proc_mounts(
            &mount_output_to_proc_mounts(text),
        ))
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::File(
            "/proc/mounts",
            mount_output_to_proc_mounts(text).into_bytes(),
        )))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `/proc/self/mountinfo`.
pub struct Mountinfo;

impl super::EvidenceKind for Mountinfo {
    fn name(&self) -> &'static str {
        "mountinfo"
    }
    fn doc(&self) -> &'static str {
        "/proc/self/mountinfo: what is mounted now, read as /proc/mounts"
    }
    fn example(&self) -> &'static str {
        "cat /proc/self/mountinfo"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        super::mounts::MOUNTS_FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["mounts", "mounts.data", "shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_mountinfo(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&super::mounts::parse_proc_mounts(
            &mountinfo_to_proc_mounts(text),
        ))
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::File(
            "/proc/mounts",
            mountinfo_to_proc_mounts(text).into_bytes(),
        )))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `df -h`.
pub struct Df;

impl super::EvidenceKind for Df {
    fn name(&self) -> &'static str {
        "df"
    }
    fn doc(&self) -> &'static str {
        "df -h output: filesystem sizes and mount points (a container's 64 MB /dev/shm shows here)"
    }
    fn example(&self) -> &'static str {
        "df -hT"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "[]",
            "a list of rows: filesystem, fstype, size_mib, mount_point",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_df(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_df(text))
    }
    // sizes only: it describes the host, but the shm probe reads it from the paste
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::Shown))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findmnt_tree_and_list_become_mount_lines() {
        let tree = "$ findmnt\nTARGET                SOURCE         FSTYPE     OPTIONS\n\
/                     /dev/nvme0n1p2 ext4       rw,relatime\n\
├─/dev/shm            shm            tmpfs      rw,nosuid,nodev,noexec,relatime,size=65536k\n\
│ └─/dev/mqueue       mqueue         mqueue     rw,relatime\n\
└─/data               /dev/sdb1      ext4       rw,relatime\n";
        assert!(looks_like_mount_output(tree));
        let m = mount_output_to_proc_mounts(tree);
        assert!(m.contains("/dev/sdb1 /data ext4 rw,relatime 0 0"), "{m}");
        assert!(
            m.contains("shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0"),
            "{m}"
        );
        assert_eq!(m.lines().count(), 4);
        // the words alone are no table
        assert!(!looks_like_mount_output("TARGET SOURCE FSTYPE OPTIONS\n"));
    }

    #[test]
    fn mount_output_becomes_proc_mounts() {
        let t = "$ mount\n/dev/sdb1 on /data type ext4 (rw,relatime)\nshm on /dev/shm type tmpfs (rw,nosuid,nodev,noexec,relatime,size=65536k)\n";
        assert!(looks_like_mount_output(t));
        let m = mount_output_to_proc_mounts(t);
        assert_eq!(
            m,
            "/dev/sdb1 /data ext4 rw,relatime 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n"
        );
    }

    #[test]
    fn mountinfo_becomes_proc_mounts() {
        let t = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n";
        assert!(looks_like_mountinfo(t));
        assert_eq!(
            mountinfo_to_proc_mounts(t),
            "/dev/root /mnt2 ext3 rw,noatime,errors=continue 0 0\n"
        );
    }

    #[test]
    fn df_sizes() {
        let t = "Filesystem      Size  Used Avail Use% Mounted on\noverlay         1.8T  1.2T  520G  70% /\ntmpfs            64M     0   64M   0% /dev\nshm              64M     0   64M   0% /dev/shm\n/dev/mapper/vg-very-long-name\n                 100G   10G   90G  10% /data\n";
        assert!(looks_like_df(t));
        let rows = parse_df(t);
        let shm = rows.iter().find(|r| r.mount_point == "/dev/shm").unwrap();
        assert_eq!(shm.size_mib, Some(64.0));
        assert!(
            rows.iter()
                .any(|r| r.mount_point == "/data" && r.size_mib == Some(102400.0))
        );
        let k = "Filesystem     1K-blocks  Used Available Use% Mounted on\nshm                65536     0     65536   0% /dev/shm\n";
        assert_eq!(parse_df(k)[0].size_mib, Some(64.0));
    }

    #[test]
    fn df_avail_column() {
        // modelscope/ms-swift#7264: the poster's `df -h /dev/shm` under a DataLoader bus error
        let t = "df -h /dev/shm\nFilesystem      Size  Used Avail Use% Mounted on\ntmpfs           492G     0  492G   0% /dev/shm\n";
        let r = &parse_df(t)[0];
        assert_eq!(r.size_mib, Some(492.0 * 1024.0));
        assert_eq!(r.avail_mib, Some(492.0 * 1024.0));
        // Docker's default, `-k` columns (`Available`) and a typed (`-hT`) row
        let k = "Filesystem     1K-blocks  Used Available Use% Mounted on\nshm                65536 65536         0 100% /dev/shm\n";
        assert_eq!(parse_df(k)[0].avail_mib, Some(0.0));
        let typed = "Filesystem     Type     Size  Used Avail Use% Mounted on\nshm            tmpfs     64M   12M   53M  19% /dev/shm\n";
        assert_eq!(parse_df(typed)[0].avail_mib, Some(53.0));
    }

    #[test]
    fn df_rows_without_header() {
        let t = "user@08482dc37efa:~$ df -h | grep shm\nshm              64M     0   64M   0% /dev/shm\n";
        assert!(looks_like_df(t));
        assert_eq!(parse_df(t)[0].size_mib, Some(64.0));
    }

    #[test]
    fn tmpfs_size() {
        assert_eq!(tmpfs_size_option_mib("rw,size=65536k"), Some(64.0));
        assert_eq!(tmpfs_size_option_mib("rw,size=8g"), Some(8192.0));
        assert_eq!(tmpfs_size_option_mib("rw,size=50%"), None);
        assert_eq!(tmpfs_size_option_mib("rw"), None);
    }
}
