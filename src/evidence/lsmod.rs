//! `lsmod` output, read from its producer: kmod's `tools/lsmod.c` (github.com/kmod-project/kmod,
//! read at 84fa569b, the `lsmod` of every current distribution). It lists the loaded modules of
//! `/proc/modules` under a fixed header and prints one row per module:
//!
//! ```text
//! puts("Module                  Size  Used by");
//! printf("%-19s %8ld  %d", name, size, use_count);     then ' ' and the holders joined by ','
//! ```
//!
//! so a module name of up to 19 characters is padded to column 19, the size right-aligned to end
//! at column 28, two spaces, the use count, and the modules that hold it:
//!
//! ```text
//! Module                  Size  Used by
//! nvidia_uvm           1875968  0
//! nvidia_drm             77824  2
//! nvidia              35282944  2 nvidia_uvm,nvidia_modeset
//! ```
//!
//! module-init-tools' `lsmod` (before kmod) prints the same columns with a space after the count
//! even when no module holds it (the nvidia-docker 1.0 wiki's `nvidia_uvm            711531  2 `).
//! People paste it whole or through `grep` (`lsmod | grep nvidia`), without the header.
//!
//! The reader keeps each row's name, size, use count and holders, and whether the list is the
//! whole of `/proc/modules`'s NVIDIA modules: the header is there (the whole list), or the
//! command line shows a `grep` whose one pattern every `nvidia*` name holds (`grep nvidia`,
//! `grep -i nv`). Only then is the paste the host's module list for the `kernel.modules` probe
//! (as `/proc/modules` lines): a narrower grep (`grep nvidia_drm`) drops rows whose absence
//! would read as modules not loaded.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Lsmod {
    pub modules: Vec<Module>,
    /// The header line `Module  Size  Used by` was there.
    pub header: bool,
    /// The `grep` pattern of the command line, where the paste shows one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grep: Option<String>,
    /// Every loaded `nvidia*` module is in the list (see the module doc).
    pub nvidia_complete: bool,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Module {
    pub name: String,
    pub size: u64,
    /// `kmod_module_get_refcnt`; negative when kmod could not read it.
    pub used: i64,
    pub used_by: Vec<String>,
}

/// A module name as the kernel lists it (`-` is made `_` in `/proc/modules`).
fn is_module_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// `Module                  Size  Used by` (busybox and old releases may add words after it).
fn is_header(line: &str) -> bool {
    let w: Vec<&str> = line.split_whitespace().collect();
    w.len() >= 4 && w[0] == "Module" && w[1] == "Size" && w[2] == "Used" && w[3] == "by"
}

/// One row in `lsmod`'s layout: the size ends at column 28 (or right after a name longer than
/// 19 characters), then two spaces, the count, and optionally the holders.
fn row(line: &str) -> Option<Module> {
    let line = line.trim_end();
    let name = line.split(' ').next()?;
    if !is_module_name(name) {
        return None;
    }
    let size_end = 28.max(name.len() + 9);
    if line.len() < size_end + 3 || !line.is_char_boundary(size_end) {
        return None;
    }
    let (head, tail) = line.split_at(size_end);
    // spaces, then the size right-aligned against column 28
    let between = &head[name.len()..];
    let size = between.trim_start_matches(' ');
    if size.is_empty() || size.len() == between.len() || !size.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let tail = tail.strip_prefix("  ")?;
    let mut f = tail.split(' ');
    let used: i64 = f.next()?.parse().ok()?;
    let holders = f.next().unwrap_or("");
    if f.next().is_some() {
        return None;
    }
    let used_by: Vec<String> = holders
        .split(',')
        .filter(|h| is_module_name(h))
        .map(str::to_string)
        .collect();
    Some(Module {
        name: name.to_string(),
        size: size.parse().ok()?,
        used,
        used_by,
    })
}

/// The `grep` pattern of an `lsmod | grep …` command line (one pattern, no `-v`).
fn grep_pattern(line: &str) -> Option<String> {
    let t = line.trim().trim_start_matches(['$', '#']).trim();
    let t = t.strip_prefix("sudo ").unwrap_or(t);
    let (cmd, grep) = t.split_once('|')?;
    if cmd.trim() != "lsmod" {
        return None;
    }
    let mut w = grep.split_whitespace();
    if !matches!(w.next(), Some("grep" | "egrep")) {
        return None;
    }
    let mut pattern = None;
    let mut icase = false;
    for a in w {
        match a {
            "-i" => icase = true,
            _ if a.starts_with('-') => return None,
            _ if pattern.is_none() => pattern = Some(a.trim_matches(['\'', '"'])),
            _ => return None,
        }
    }
    let p = pattern?;
    Some(if icase {
        p.to_ascii_lowercase()
    } else {
        p.to_string()
    })
}

pub fn parse_lsmod(text: &str) -> Lsmod {
    let mut out = Lsmod::default();
    for line in text.lines() {
        if is_header(line) {
            out.header = true;
            continue;
        }
        if out.grep.is_none()
            && let Some(p) = grep_pattern(line)
        {
            out.grep = Some(p);
            continue;
        }
        if let Some(m) = row(line)
            && out.modules.len() < super::MAX_ITEMS
        {
            out.modules.push(m);
        }
    }
    out.nvidia_complete = out.header
        || out
            .grep
            .as_deref()
            .is_some_and(|p| !p.is_empty() && "nvidia".contains(p));
    out
}

/// The text is `lsmod` output: the header with a row, a `lsmod` command line with a row, or two
/// rows in its layout.
pub fn looks_like_lsmod(text: &str) -> bool {
    let mut rows = 0;
    let mut anchor = false;
    for line in text.lines().take(200) {
        if is_header(line)
            || grep_pattern(line).is_some()
            || line.trim().trim_start_matches('$').trim() == "lsmod"
        {
            anchor = true;
        } else if row(line).is_some() {
            rows += 1;
        }
        if rows >= 2 || (anchor && rows >= 1) {
            return true;
        }
    }
    false
}

impl Lsmod {
    /// The rows as `/proc/modules` lines (`name size refcount deps state address`), which the
    /// `kernel.modules` probe reads.
    pub fn proc_modules(&self) -> String {
        let mut s = String::new();
        for m in &self.modules {
            let deps = if m.used_by.is_empty() {
                "-".to_string()
            } else {
                format!("{},", m.used_by.join(","))
            };
            let used = if m.used < 0 {
                "-".to_string()
            } else {
                m.used.to_string()
            };
            s.push_str(&format!("{} {} {used} {deps} Live 0x0\n", m.name, m.size));
        }
        s
    }
}

pub struct LsmodKind;

impl super::EvidenceKind for LsmodKind {
    fn name(&self) -> &'static str {
        "lsmod"
    }
    fn doc(&self) -> &'static str {
        "`lsmod` output (kmod): the loaded kernel modules, their size, use count and holders, whole or through `grep nvidia`"
    }
    fn example(&self) -> &'static str {
        "lsmod | grep nvidia"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("modules", "name, size, used (the use count), used_by"),
            ("header", "the `Module  Size  Used by` header was there"),
            ("grep", "the pattern of an `lsmod | grep` command line"),
            (
                "nvidia_complete",
                "every loaded nvidia* module is listed (header, or a grep every nvidia* name matches)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["kernel.modules"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_lsmod(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_lsmod(text);
        if v.modules.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no lsmod row (`NAME  SIZE  COUNT [HOLDERS]` in its columns) in the text",
            ));
        }
        super::to_value(&v)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        let v = parse_lsmod(text);
        if v.modules.is_empty() {
            return Some(Err(super::ParseError::NotThisKind(
                "no lsmod row (`NAME  SIZE  COUNT [HOLDERS]` in its columns) in the text",
            )));
        }
        // a list narrowed by another grep would read as modules not loaded: shown, not given
        Some(Ok(if v.nvidia_complete {
            super::HostPart::File("/proc/modules", v.proc_modules().into_bytes())
        } else {
            super::HostPart::Shown
        }))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::kernel_modules::parse_proc_modules;

    // h124: the nvidia-docker 1.0 wiki's "NVIDIA driver" page (module-init-tools' layout, a
    // space after a count with no holders), through `grep nvidia`
    const WIKI: &str = "$ lsmod | grep nvidia\nnvidia_uvm            711531  2 \nnvidia_modeset        742329  0 \nnvidia              10058469  80 nvidia_modeset,nvidia_uvm\n$ ldconfig -p | grep -E 'nvidia|cuda'\nlibnvidia-ml.so (libc6,x86-64) => /usr/lib/nvidia-361/libnvidia-ml.so\n";

    #[test]
    fn reads_the_wiki_grep_and_gives_the_host_its_modules() {
        assert!(looks_like_lsmod(WIKI));
        let v = parse_lsmod(WIKI);
        assert_eq!(v.grep.as_deref(), Some("nvidia"));
        assert!(v.nvidia_complete && !v.header);
        let names: Vec<&str> = v.modules.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["nvidia_uvm", "nvidia_modeset", "nvidia"]);
        assert_eq!((v.modules[0].size, v.modules[0].used), (711531, 2));
        assert_eq!(v.modules[2].used_by, ["nvidia_modeset", "nvidia_uvm"]);
        let proc = parse_proc_modules(&v.proc_modules());
        assert_eq!(proc.len(), 3);
        assert_eq!(proc[2].used_by, ["nvidia_modeset", "nvidia_uvm"]);
        assert_eq!(proc[1].refcount, Some(0));
    }

    #[test]
    fn kmod_layout_with_header_and_long_names() {
        // kmod's own printf: name padded to 19, size to column 28, two spaces, count, holders
        let t = format!(
            "Module                  Size  Used by\n{:<19} {:>8}  {}\n{:<19} {:>8}  {} {}\n{} {:>8}  {}\n",
            "nvidia_drm",
            77824,
            2,
            "nvidia",
            35282944,
            2,
            "nvidia_uvm,nvidia_modeset",
            "nvidia_peermem_long_name_x",
            16384,
            0,
        );
        assert!(looks_like_lsmod(&t));
        let v = parse_lsmod(&t);
        assert!(v.header && v.nvidia_complete);
        assert_eq!(v.modules.len(), 3);
        assert_eq!(v.modules[2].name, "nvidia_peermem_long_name_x");
        assert!(v.modules[0].used_by.is_empty());
    }

    #[test]
    fn a_narrower_grep_is_not_the_module_list() {
        let t = "$ lsmod | grep nvidia_drm\nnvidia_drm             77824  2\ndrm_kms_helper        311296  1 nvidia_drm\n";
        let v = parse_lsmod(t);
        assert_eq!(v.modules.len(), 2);
        assert!(!v.nvidia_complete);
        let t = "lsmod | grep -i NV\nnvidia_uvm           1875968  0\n";
        assert!(parse_lsmod(t).nvidia_complete);
        let t = "lsmod | grep -v nvidia\nsnd                   135168  0\n";
        let v = parse_lsmod(t);
        assert!(v.grep.is_none() && !v.nvidia_complete);
    }

    #[test]
    fn other_columns_are_not_lsmod() {
        for t in [
            // /proc/modules itself
            "nvidia_uvm 1875968 - - Live 0xffffffffc080c000 (O)\nnvidia 14299136 2 nvidia_uvm, Live 0x0 (PO)\n",
            // du, a process list, prose with numbers
            "4096    ./data\n123456  ./model.bin\n",
            "python 12345 0\ntorchrun 12 1\n",
            "GPU0 has 2 NVLinks and 0 errors, GPU1 has 2 too\n",
            // an nvidia-smi process row
            "|    0   N/A  N/A     12345      C   python                         4514MiB |\n",
        ] {
            assert!(!looks_like_lsmod(t), "{t}");
        }
        assert!(parse_lsmod("nothing here\n").modules.is_empty());
    }
}
