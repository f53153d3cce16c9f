//! Diagnostics for bad playbooks and values files: every problem is collected, then all are
//! printed at once with file, line (or JSON path), message and a `help:` line. Nothing is
//! probed while any exists.

use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Stable kebab-case code (`unknown-key`, `dependency-cycle`, …).
    pub code: &'static str,
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// JSON path inside the document (`/rules/2/fail_when`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
    pub help: String,
}

impl Diagnostic {
    pub fn new(
        code: &'static str,
        file: &str,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            file: file.to_string(),
            line: None,
            path: None,
            message: message.into(),
            help: help.into(),
        }
    }
    pub fn at(mut self, path: impl Into<String>, line: Option<usize>) -> Self {
        self.path = Some(path.into());
        if line.is_some() {
            self.line = line;
        }
        self
    }
    pub fn line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error[{}]: {}", self.code, self.message)?;
        write!(f, "  --> {}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(p) = &self.path {
            write!(f, " (at {p})")?;
        }
        writeln!(f)?;
        write!(f, "  help: {}", self.help)
    }
}

/// Find the 1-based line of a JSON pointer (`/rules/0/probes/mods/kind`) in block-style YAML
/// text. A heuristic, since the YAML parser keeps no spans on values: it follows keys by
/// indentation and list items by `- `. Returns the deepest line it could reach.
pub fn locate(text: &str, pointer: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut pos = 0usize; // line index where the current node starts
    let mut indent: isize = -1; // indentation of the current node's key
    let mut found = None;
    for seg in pointer.split('/').filter(|s| !s.is_empty()) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        let start = if found.is_some() { pos + 1 } else { pos };
        let mut hit = None;
        if let Ok(idx) = seg.parse::<usize>() {
            // n-th list item below the current node
            let mut n = 0;
            let mut item_indent = None;
            for (i, l) in lines.iter().enumerate().skip(start) {
                let t = l.trim_start();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let ind = (l.len() - t.len()) as isize;
                if ind <= indent && !t.starts_with("- ") && found.is_some() {
                    break;
                }
                if t.starts_with("- ") || t == "-" {
                    let ii = *item_indent.get_or_insert(ind);
                    if ind == ii {
                        if n == idx {
                            hit = Some((i, ind));
                            break;
                        }
                        n += 1;
                    }
                }
            }
        } else {
            for (i, l) in lines
                .iter()
                .enumerate()
                .skip(if found.is_some() { pos } else { 0 })
            {
                let t = l.trim_start();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let ind = (l.len() - t.len()) as isize;
                if i > pos && ind <= indent && found.is_some() && !(t.starts_with("- ") && i == pos)
                {
                    break;
                }
                let body = t.strip_prefix("- ").unwrap_or(t);
                let key_ind = ind + (t.len() - body.len()) as isize;
                if (body.starts_with(&format!("{seg}:"))
                    || body.starts_with(&format!("\"{seg}\":")))
                    && (key_ind > indent || found.is_none())
                {
                    hit = Some((i, key_ind));
                    break;
                }
                // flow mapping on the current line: `mods: { kind: x }`
                if i == pos && found.is_some() && l.contains(&format!("{seg}:")) {
                    hit = Some((i, indent + 1));
                    break;
                }
            }
        }
        match hit {
            Some((i, ind)) => {
                pos = i;
                indent = ind;
                found = Some(i + 1);
            }
            None => break,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::did_you_mean;

    const DOC: &str = "playbook: x\nlayer: driver\nrules:\n  - id: a\n    probes:\n      mods: { kind: kernel.modules }\n    fail_when: x\n  - id: b\n    metircs: 1\n";

    #[test]
    fn locates_keys_and_items() {
        assert_eq!(locate(DOC, "/layer"), Some(2));
        assert_eq!(locate(DOC, "/rules/0"), Some(4));
        assert_eq!(locate(DOC, "/rules/0/fail_when"), Some(7));
        assert_eq!(locate(DOC, "/rules/1/metircs"), Some(9));
        assert_eq!(locate(DOC, "/rules/0/probes/mods/kind"), Some(6));
    }

    #[test]
    fn suggests_close_names() {
        assert_eq!(
            did_you_mean(
                "driver.persistnce-off",
                ["driver.persistence-off", "cuda.x"]
            )
            .as_deref(),
            Some("did you mean `driver.persistence-off`?")
        );
        assert_eq!(did_you_mean("zzz", ["driver.persistence-off"]), None);
    }
}
