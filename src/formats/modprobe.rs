//! Kernel module configuration: a module listed in a `modules-load.d` file, and one parameter of
//! an `options MODULE k=v ...` line in a `modprobe.d` file. Module and parameter names compare
//! with `-` and `_` as equal, as the kernel and modprobe do.

use indexmap::IndexMap;

use super::line::{LineState, ensure_line};
use super::{EditError, Lines};

fn check_name(what: &str, name: &str) -> Result<(), EditError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(EditError::Invalid(format!(
            "{what} `{}` is not a valid name (letters, digits, `_` and `-` only)",
            name.escape_debug()
        )))
    }
}

/// A module or parameter name with `-` written as `_`.
fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            let norm = |c: u8| if c == b'-' { b'_' } else { c };
            norm(x) == norm(y)
        })
}

/// A regex matching `name` with `-` and `_` interchangeable.
fn name_pattern(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '-' | '_' => "[-_]".to_string(),
            c => regex::escape(&c.to_string()),
        })
        .collect()
}

/// `modules-load.d`: make `module` listed (`Present`) or not listed (`Absent`). A line that
/// already names the module (whatever its spacing or `-`/`_` spelling) counts as present.
pub fn modules_load(old: &str, module: &str, state: LineState) -> Result<String, EditError> {
    check_name("module", module)?;
    let re = format!(r"^\s*{}\s*$", name_pattern(module));
    if state == LineState::Present && modules_loaded(old).iter().any(|m| same_name(m, module)) {
        return Ok(old.to_string());
    }
    ensure_line(old, module, state, Some(&re))
}

/// Modules a `modules-load.d` file lists (comments start with `#` or `;`).
pub fn modules_loaded(old: &str) -> Vec<String> {
    Lines::parse(old)
        .lines
        .iter()
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty() && !t.starts_with('#') && !t.starts_with(';'))
        .map(str::to_string)
        .collect()
}

/// Byte spans of the whitespace-separated words of a line; a `"..."` span stays one word.
fn words(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let mut quoted = false;
        while i < b.len() && (quoted || !b[i].is_ascii_whitespace()) {
            if b[i] == b'"' {
                quoted = !quoted;
            }
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// An `options` line for `module`: the spans of its parameter words.
fn options_params(text: &str, module: &str) -> Option<Vec<(usize, usize)>> {
    let w = words(text);
    if w.len() >= 2
        && &text[w[0].0..w[0].1] == "options"
        && same_name(&text[w[1].0..w[1].1], module)
    {
        Some(w[2..].to_vec())
    } else {
        None
    }
}

fn param_name(word: &str) -> &str {
    word.split_once('=').map_or(word, |(k, _)| k)
}

fn unquote(v: &str) -> String {
    v.replace('"', "")
}

fn render_value(param: &str, value: &str) -> Result<String, EditError> {
    super::check_single_line("value", value)?;
    if value.contains('"') {
        return Err(EditError::Invalid(format!(
            "value `{value}` for parameter `{param}` contains `\"`, which modprobe cannot quote"
        )));
    }
    if value.is_empty() || value.contains(char::is_whitespace) {
        Ok(format!("{param}=\"{value}\""))
    } else {
        Ok(format!("{param}={value}"))
    }
}

/// What a `modprobe.d` file says: module parameters (`options`) and `blacklist`ed modules.
/// Module and parameter names are stored with `_` for `-` (the kernel treats them as equal).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModprobeConf {
    /// Module -> parameter -> value (`""` for a bare flag), the last one given winning.
    pub options: IndexMap<String, IndexMap<String, String>>,
    pub blacklist: Vec<String>,
}

impl ModprobeConf {
    /// The value `param` of `module` gets.
    pub fn option(&self, module: &str, param: &str) -> Option<&str> {
        self.options
            .get(&canonical(module))?
            .get(&canonical(param))
            .map(String::as_str)
    }
}

/// Reads a `modprobe.d` file: `options MODULE p=v ...` and `blacklist MODULE` lines; other
/// commands (`install`, `alias`, `softdep`) and `#` comments are skipped.
pub fn parse_modprobe(text: &str) -> ModprobeConf {
    let mut conf = ModprobeConf::default();
    for l in &Lines::parse(text).lines {
        let w = words(&l.text);
        let word = |i: usize| w.get(i).map(|&(s, e)| &l.text[s..e]);
        match (word(0), word(1)) {
            (Some("options"), Some(module)) => {
                let params = conf.options.entry(canonical(module)).or_default();
                for &(s, e) in &w[2..] {
                    let word = &l.text[s..e];
                    let value = word
                        .split_once('=')
                        .map_or(String::new(), |(_, v)| unquote(v));
                    // Re-inserting moves nothing; the later value wins.
                    params.insert(canonical(param_name(word)), value);
                }
            }
            (Some("blacklist"), Some(module)) => conf.blacklist.push(canonical(module)),
            _ => {}
        }
    }
    conf
}

/// `modprobe.d`: the value `param` of `module` gets (the last one given wins, as in the kernel);
/// `Some("")` for a bare flag. [`parse_modprobe`] for one parameter.
pub fn modprobe_option(old: &str, module: &str, param: &str) -> Option<String> {
    parse_modprobe(old)
        .option(module, param)
        .map(str::to_string)
}

/// `modprobe.d`: set (`Some`) or unset (`None`) one parameter of `module`, leaving its other
/// parameters alone. An existing `param=` word is changed in place; a new one joins the last
/// `options MODULE` line, or a new `options MODULE param=value` line is appended. Unsetting
/// removes the word, and the line once it has no parameters left.
pub fn modprobe_option_set(
    old: &str,
    module: &str,
    param: &str,
    value: Option<&str>,
) -> Result<String, EditError> {
    check_name("module", module)?;
    check_name("parameter", param)?;
    let rendered = value.map(|v| render_value(param, v)).transpose()?;
    if let Some(v) = value
        && modprobe_option(old, module, param).as_deref() == Some(v)
    {
        return Ok(old.to_string());
    }
    let mut lines = Lines::parse(old);
    let mut last_options_line = None;
    let mut changed = false;
    let mut i = lines.len();
    // Walk backwards so a set changes the last (winning) occurrence.
    while i > 0 {
        i -= 1;
        let text = lines.lines[i].text.clone();
        let Some(params) = options_params(&text, module) else {
            continue;
        };
        last_options_line.get_or_insert(i);
        let hits: Vec<(usize, usize)> = params
            .iter()
            .copied()
            .filter(|&(s, e)| same_name(param_name(&text[s..e]), param))
            .collect();
        match &rendered {
            Some(word) => {
                if let Some(&(s, e)) = hits.last()
                    && !changed
                {
                    lines.lines[i].text = format!("{}{word}{}", &text[..s], &text[e..]);
                    changed = true;
                }
            }
            None => {
                if hits.is_empty() {
                    continue;
                }
                if hits.len() == params.len() {
                    lines.remove(i);
                    continue;
                }
                let mut new = text.clone();
                for &(s, e) in hits.iter().rev() {
                    // Take the word with the whitespace before it.
                    let start = text[..s].trim_end().len();
                    new.replace_range(start..e, "");
                }
                lines.lines[i].text = new;
            }
        }
    }
    if let Some(word) = rendered
        && !changed
    {
        match last_options_line {
            Some(i) => {
                let text = &mut lines.lines[i].text;
                let keep = text.trim_end().len();
                let trailing = text[keep..].to_string();
                text.truncate(keep);
                text.push(' ');
                text.push_str(&word);
                text.push_str(&trailing);
            }
            None => lines.push(&format!("options {module} {word}")),
        }
    }
    Ok(lines.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn modules_load_present_and_absent() {
        let old = "# Load at boot\nnvidia\n";
        let new = modules_load(old, "nvidia_uvm", LineState::Present).unwrap();
        assert_eq!(new, "# Load at boot\nnvidia\nnvidia_uvm\n");
        assert_eq!(
            modules_load(&new, "nvidia_uvm", LineState::Present).unwrap(),
            new
        );
        assert_eq!(
            modules_load(&new, "nvidia-uvm", LineState::Present).unwrap(),
            new
        );
        assert_eq!(
            modules_load(&new, "nvidia-uvm", LineState::Absent).unwrap(),
            old
        );
        assert_eq!(
            modules_load(" nvidia_uvm \r\nx", "nvidia_uvm", LineState::Absent).unwrap(),
            "x"
        );
        assert_eq!(
            modules_load("", "nvidia_uvm", LineState::Present).unwrap(),
            "nvidia_uvm\n"
        );
        assert_eq!(
            modules_load("a", "nvidia_uvm", LineState::Present).unwrap(),
            "a\nnvidia_uvm"
        );
        assert_eq!(
            modules_loaded("# c\n; c\n nvidia \n\nnvidia_uvm"),
            vec!["nvidia", "nvidia_uvm"]
        );
        assert!(modules_load("", "bad name", LineState::Present).is_err());
    }

    #[test]
    fn modprobe_set_replaces_one_word_in_place() {
        let old = "# tuned by site\r\noptions nvidia NVreg_EnableGpuFirmware=0  NVreg_UsePageAttributeTable=1\r\n";
        let new = modprobe_option_set(old, "nvidia", "NVreg_EnableGpuFirmware", Some("1")).unwrap();
        assert_eq!(
            new,
            "# tuned by site\r\noptions nvidia NVreg_EnableGpuFirmware=1  NVreg_UsePageAttributeTable=1\r\n"
        );
        assert_eq!(
            modprobe_option_set(&new, "nvidia", "NVreg_EnableGpuFirmware", Some("1")).unwrap(),
            new
        );
        assert_eq!(
            modprobe_option(&new, "nvidia", "NVreg-EnableGpuFirmware").as_deref(),
            Some("1")
        );
    }

    #[test]
    fn modprobe_set_new_param_joins_the_last_options_line() {
        let old = "options nvidia A=1\noptions nvidia_drm modeset=1\noptions nvidia B=2  \n";
        let new = modprobe_option_set(old, "nvidia", "C", Some("3")).unwrap();
        assert_eq!(
            new,
            "options nvidia A=1\noptions nvidia_drm modeset=1\noptions nvidia B=2 C=3  \n"
        );
        let old = "options nvidia A=1";
        assert_eq!(
            modprobe_option_set(old, "nvidia", "C", Some("x y")).unwrap(),
            "options nvidia A=1 C=\"x y\""
        );
        assert_eq!(modprobe_option(old, "nvidia", "C"), None);
    }

    #[test]
    fn modprobe_set_appends_a_line_when_module_has_none() {
        let new = modprobe_option_set(
            "",
            "nvidia",
            "NVreg_RestrictProfilingToAdminUsers",
            Some("0"),
        )
        .unwrap();
        assert_eq!(
            new,
            "options nvidia NVreg_RestrictProfilingToAdminUsers=0\n"
        );
        let back = modprobe_option_set(&new, "nvidia", "NVreg_RestrictProfilingToAdminUsers", None)
            .unwrap();
        assert_eq!(back, "");
    }

    #[test]
    fn modprobe_unset_removes_only_that_word() {
        let old = "options nvidia A=1 B=2\tC=3\n";
        let new = modprobe_option_set(old, "nvidia", "B", None).unwrap();
        assert_eq!(new, "options nvidia A=1\tC=3\n");
        assert_eq!(modprobe_option_set(&new, "nvidia", "B", None).unwrap(), new);
        let new = modprobe_option_set("x\noptions nvidia B=2", "nvidia", "B", None).unwrap();
        assert_eq!(new, "x");
    }

    #[test]
    fn modprobe_rejects_unquotable_values() {
        let err = modprobe_option_set("", "nvidia", "A", Some("a\"b")).unwrap_err();
        assert!(
            err.to_string().contains("which modprobe cannot quote"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn modprobe_set_then_unset_round_trips(
            other in proptest::collection::vec("(# x|options nvidia_drm modeset=1|blacklist nouveau)", 0..4),
            value in "[a-z0-9]{1,6}",
            final_nl in any::<bool>(),
        ) {
            let mut old = other.join("\n");
            if final_nl && !old.is_empty() { old.push('\n'); }
            let new = modprobe_option_set(&old, "nvidia", "NVreg_X", Some(&value)).unwrap();
            prop_assert_eq!(modprobe_option(&new, "nvidia", "NVreg_X"), Some(value.clone()));
            prop_assert_eq!(modprobe_option_set(&new, "nvidia", "NVreg_X", Some(&value)).unwrap(), new.clone());
            prop_assert_eq!(modprobe_option_set(&new, "nvidia", "NVreg_X", None).unwrap(), old);
        }
    }
}
