//! Whole-line edits for files without a structure of their own (modules-load.d lists, ad-hoc
//! config), in the manner of Ansible's `lineinfile`, and a regex replace.

use regex::Regex;

use super::{EditError, Lines, check_single_line};

/// Whether [`ensure_line`] makes the line exist or go away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineState {
    Present,
    Absent,
}

fn compile(pattern: &str) -> Result<Regex, EditError> {
    Regex::new(pattern)
        .map_err(|e| EditError::Invalid(format!("regex `{pattern}` does not compile: {e}")))
}

/// `Present`: leave the file alone if `line` is already there; else replace the first line
/// matching `regex` with `line`; else append `line`. `Absent`: remove every line equal to
/// `line` or matching `regex`.
pub fn ensure_line(
    old: &str,
    line: &str,
    state: LineState,
    regex: Option<&str>,
) -> Result<String, EditError> {
    check_single_line("line", line)?;
    let re = regex.map(compile).transpose()?;
    let mut lines = Lines::parse(old);
    match state {
        LineState::Present => {
            if lines.lines.iter().any(|l| l.text == line) {
                return Ok(old.to_string());
            }
            let hit = re
                .as_ref()
                .and_then(|re| lines.lines.iter().position(|l| re.is_match(&l.text)));
            match hit {
                Some(i) => lines.lines[i].text = line.to_string(),
                None => lines.push(line),
            }
        }
        LineState::Absent => {
            let mut i = lines.len();
            while i > 0 {
                i -= 1;
                let text = &lines.lines[i].text;
                if text == line || re.as_ref().is_some_and(|re| re.is_match(text)) {
                    lines.remove(i);
                }
            }
        }
    }
    Ok(lines.render())
}

/// Every match of `regex` replaced by `template` (`$1`, `$name` captures). No match returns
/// `old` unchanged; the caller reports "no match" by comparing. Use `(?m)` for `^`/`$` at
/// line boundaries. Idempotent only when the replacement no longer matches.
pub fn replace(old: &str, regex: &str, template: &str) -> Result<String, EditError> {
    let re = compile(regex)?;
    Ok(re.replace_all(old, template).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn present_appends_once() {
        let old = "# modules\nnvidia\n";
        let once = ensure_line(old, "nvidia_uvm", LineState::Present, None).unwrap();
        assert_eq!(once, "# modules\nnvidia\nnvidia_uvm\n");
        let twice = ensure_line(&once, "nvidia_uvm", LineState::Present, None).unwrap();
        assert_eq!(twice, once);
    }

    #[test]
    fn present_replaces_first_regex_match_only() {
        let old = "a\r\nmax_workers=2\r\nmax_workers=3\r\n";
        let new = ensure_line(
            old,
            "max_workers=8",
            LineState::Present,
            Some("^max_workers="),
        )
        .unwrap();
        assert_eq!(new, "a\r\nmax_workers=8\r\nmax_workers=3\r\n");
        assert_eq!(
            ensure_line(
                &new,
                "max_workers=8",
                LineState::Present,
                Some("^max_workers=")
            )
            .unwrap(),
            new
        );
    }

    #[test]
    fn absent_removes_exact_and_matching_lines() {
        let old = "keep\nnvidia_uvm\n  nvidia_uvm  \nother";
        let new = ensure_line(old, "nvidia_uvm", LineState::Absent, None).unwrap();
        assert_eq!(new, "keep\n  nvidia_uvm  \nother");
        let new = ensure_line(
            old,
            "nvidia_uvm",
            LineState::Absent,
            Some(r"^\s*nvidia_uvm\s*$"),
        )
        .unwrap();
        assert_eq!(new, "keep\nother");
        assert_eq!(
            ensure_line(&new, "nvidia_uvm", LineState::Absent, None).unwrap(),
            new
        );
    }

    #[test]
    fn no_final_newline_is_kept() {
        let new = ensure_line("a\nb", "c", LineState::Present, None).unwrap();
        assert_eq!(new, "a\nb\nc");
        assert_eq!(
            ensure_line(&new, "c", LineState::Absent, None).unwrap(),
            "a\nb"
        );
        assert_eq!(
            ensure_line("a\nb", "b", LineState::Absent, None).unwrap(),
            "a"
        );
    }

    #[test]
    fn empty_file() {
        assert_eq!(
            ensure_line("", "x", LineState::Present, None).unwrap(),
            "x\n"
        );
        assert_eq!(ensure_line("", "x", LineState::Absent, None).unwrap(), "");
    }

    #[test]
    fn bad_arguments_are_errors() {
        let err = ensure_line("", "a\nb", LineState::Present, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line `a\\nb` contains a newline or NUL, which cannot be written on one line"
        );
        let err = ensure_line("", "a", LineState::Present, Some("(")).unwrap_err();
        assert!(
            err.to_string().starts_with("regex `(` does not compile"),
            "{err}"
        );
    }

    #[test]
    fn replace_uses_captures_and_leaves_no_match_alone() {
        let old = "GRUB_CMDLINE_LINUX=\"quiet\"\r\nother\r\n";
        let new = replace(
            old,
            r#"(?m)^(GRUB_CMDLINE_LINUX)="(?<args>[^"]*)""#,
            r#"$1="$args iommu=pt""#,
        )
        .unwrap();
        assert_eq!(new, "GRUB_CMDLINE_LINUX=\"quiet iommu=pt\"\r\nother\r\n");
        assert_eq!(replace(old, "nomatch", "x").unwrap(), old);
    }

    proptest! {
        #[test]
        fn present_then_absent_round_trips(
            lines in proptest::collection::vec("[a-z_ #]{0,8}", 0..6),
            crlf in any::<bool>(),
            final_nl in any::<bool>(),
        ) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut old = lines.join(nl);
            if final_nl && !old.is_empty() { old.push_str(nl); }
            let line = "gpufix_marker";
            let added = ensure_line(&old, line, LineState::Present, None).unwrap();
            prop_assert_eq!(ensure_line(&added, line, LineState::Present, None).unwrap(), added.clone());
            prop_assert_eq!(ensure_line(&added, line, LineState::Absent, None).unwrap(), old);
        }
    }
}
