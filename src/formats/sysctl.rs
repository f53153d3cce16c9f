//! `sysctl.d` files: one `key = value` per line. Keys compare in their dotted form, with `/` as
//! an accepted separator the way sysctl.d(5) reads it: when the first separator is `/`, slashes
//! and dots swap (`net/ipv4/conf/eth0.100/rp_filter` is `net.ipv4.conf.eth0/100.rp_filter`).

use indexmap::IndexMap;

use super::{EditError, Lines, check_single_line};

/// The dotted form of a sysctl key.
pub fn normalize_key(key: &str) -> String {
    let key = key.trim();
    match key.find(['.', '/']) {
        Some(i) if key.as_bytes()[i] == b'/' => key
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                c => c,
            })
            .collect(),
        _ => key.to_string(),
    }
}

/// A setting line: (byte span of the key, byte span of the value).
fn parse_line(text: &str) -> Option<((usize, usize), (usize, usize))> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
        return None;
    }
    let mut ks = text.len() - trimmed.len();
    // A leading `-` tells systemd-sysctl to ignore a failure to set the key.
    if text[ks..].starts_with('-') {
        ks += 1;
    }
    let eq = ks + text[ks..].find('=')?;
    let ke = ks + text[ks..eq].trim_end().len();
    let after = &text[eq + 1..];
    let vs = eq + 1 + (after.len() - after.trim_start().len());
    let ve = vs + text[vs..].trim_end().len();
    Some(((ks, ke), (vs, ve)))
}

/// One setting of a sysctl.d file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The value as written, blanks around it dropped.
    pub value: String,
    /// A leading `-`: systemd-sysctl ignores a failure to set it.
    pub ignore_failure: bool,
    /// 1-based line number of the line that wins.
    pub line: usize,
}

/// Every setting of a sysctl.d file by its dotted key ([`normalize_key`]), in order of first
/// appearance; the last line for a key wins, as systemd-sysctl applies them in order.
pub fn parse_sysctl(text: &str) -> IndexMap<String, Setting> {
    let mut out = IndexMap::new();
    for (i, l) in Lines::parse(text).lines.iter().enumerate() {
        if let Some(((ks, ke), (vs, ve))) = parse_line(&l.text) {
            out.insert(
                normalize_key(&l.text[ks..ke]),
                Setting {
                    value: l.text[vs..ve].to_string(),
                    ignore_failure: l.text[..ks].ends_with('-'),
                    line: i + 1,
                },
            );
        }
    }
    out
}

/// The value the file gives `key` (the last line wins): [`parse_sysctl`] for one key.
pub fn sysctl_get(old: &str, key: &str) -> Option<String> {
    parse_sysctl(old)
        .shift_remove(&normalize_key(key))
        .map(|s| s.value)
}

fn check_key(key: &str) -> Result<(), EditError> {
    check_single_line("sysctl key", key)?;
    if key.trim().is_empty() || key.contains(['=', '#', ';']) || key.contains(char::is_whitespace) {
        return Err(EditError::Invalid(format!(
            "sysctl key `{key}` is not a valid key"
        )));
    }
    Ok(())
}

/// Sets `key` to `value`: the last line for the key gets the new value in place (its spacing,
/// `-` prefix and key spelling kept), or a `key = value` line is appended.
pub fn sysctl_set(old: &str, key: &str, value: &str) -> Result<String, EditError> {
    check_key(key)?;
    check_single_line("sysctl value", value)?;
    let value = value.trim();
    if sysctl_get(old, key).as_deref() == Some(value) {
        return Ok(old.to_string());
    }
    let want = normalize_key(key);
    let mut lines = Lines::parse(old);
    let hit = lines.lines.iter().rposition(|l| {
        parse_line(&l.text).is_some_and(|((ks, ke), _)| normalize_key(&l.text[ks..ke]) == want)
    });
    match hit {
        Some(i) => {
            let text = &lines.lines[i].text;
            let (_, (vs, ve)) = parse_line(text).expect("matched above");
            lines.lines[i].text = format!("{}{value}{}", &text[..vs], &text[ve..]);
        }
        None => {
            // Match the file's own spacing around `=` if it has settings.
            let tight = lines
                .lines
                .iter()
                .filter_map(|l| {
                    parse_line(&l.text).map(|((_, ke), _)| l.text[ke..].starts_with('='))
                })
                .next_back()
                .unwrap_or(false);
            let sep = if tight { "=" } else { " = " };
            lines.push(&format!("{}{sep}{value}", key.trim()));
        }
    }
    Ok(lines.render())
}

/// Removes every line setting `key`.
pub fn sysctl_unset(old: &str, key: &str) -> Result<String, EditError> {
    check_key(key)?;
    let want = normalize_key(key);
    let mut lines = Lines::parse(old);
    let mut i = lines.len();
    while i > 0 {
        i -= 1;
        let l = &lines.lines[i];
        if parse_line(&l.text).is_some_and(|((ks, ke), _)| normalize_key(&l.text[ks..ke]) == want) {
            lines.remove(i);
        }
    }
    Ok(lines.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn replaces_existing_key_in_place() {
        let old = "# gpu host\nvm.swappiness = 60   \n-kernel.numa_balancing=1\n";
        let new = sysctl_set(old, "vm.swappiness", "10").unwrap();
        assert_eq!(
            new,
            "# gpu host\nvm.swappiness = 10   \n-kernel.numa_balancing=1\n"
        );
        assert_eq!(sysctl_set(&new, "vm.swappiness", "10").unwrap(), new);
        let new = sysctl_set(old, "kernel/numa_balancing", "0").unwrap();
        assert_eq!(
            new,
            "# gpu host\nvm.swappiness = 60   \n-kernel.numa_balancing=0\n"
        );
        assert_eq!(
            sysctl_get(&new, "kernel.numa_balancing").as_deref(),
            Some("0")
        );
    }

    #[test]
    fn slash_and_dot_are_the_same_separator() {
        assert_eq!(
            normalize_key("net/ipv4/conf/eth0.100/rp_filter"),
            "net.ipv4.conf.eth0/100.rp_filter"
        );
        assert_eq!(normalize_key("vm.swappiness"), "vm.swappiness");
        let old = "net/core/rmem_max=1\r\n";
        assert_eq!(
            sysctl_set(old, "net.core.rmem_max", "2").unwrap(),
            "net/core/rmem_max=2\r\n"
        );
    }

    #[test]
    fn last_line_wins_and_is_the_one_changed() {
        let old = "vm.swappiness=1\nvm.swappiness=2\n";
        assert_eq!(sysctl_get(old, "vm.swappiness").as_deref(), Some("2"));
        assert_eq!(
            sysctl_set(old, "vm.swappiness", "3").unwrap(),
            "vm.swappiness=1\nvm.swappiness=3\n"
        );
    }

    #[test]
    fn appends_in_file_style() {
        assert_eq!(
            sysctl_set("", "vm.swappiness", "10").unwrap(),
            "vm.swappiness = 10\n"
        );
        assert_eq!(
            sysctl_set("a.b=1", "vm.swappiness", "10").unwrap(),
            "a.b=1\nvm.swappiness=10"
        );
        assert_eq!(
            sysctl_set("a.b = 1\r\n", "c.d", "2").unwrap(),
            "a.b = 1\r\nc.d = 2\r\n"
        );
    }

    #[test]
    fn bad_keys_are_errors() {
        let err = sysctl_set("", "vm swappiness", "1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "sysctl key `vm swappiness` is not a valid key"
        );
        assert!(sysctl_set("", "a.b", "1\n2").is_err());
    }

    proptest! {
        #[test]
        fn set_then_unset_round_trips(
            other in proptest::collection::vec("(# c|a.b = 1|-x.y=2|)", 0..5),
            value in "[0-9]{1,4}",
            final_nl in any::<bool>(),
        ) {
            let mut old = other.join("\n");
            if final_nl && !old.is_empty() { old.push('\n'); }
            let new = sysctl_set(&old, "vm.swappiness", &value).unwrap();
            prop_assert_eq!(sysctl_get(&new, "vm/swappiness"), Some(value.clone()));
            prop_assert_eq!(sysctl_set(&new, "vm.swappiness", &value).unwrap(), new.clone());
            prop_assert_eq!(sysctl_unset(&new, "vm.swappiness").unwrap(), old);
        }
    }
}
