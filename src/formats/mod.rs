//! One reader/editor per file format gpufix reads or changes, shared by the probes that judge a
//! file, the fixes that edit it and the evidence parsers that read a pasted copy — so a verdict
//! and a fix's idempotence check can never read the same bytes two ways.
//!
//! Shell and Python have one reader each, a real grammar ([`syntax`]: tree-sitter-bash and
//! tree-sitter-python), and reading and editing go through the same tree: for shell,
//! [`launcher`] reads commands, their words, prefix assignments, `export`s, heredocs and
//! continuation lines from the bash tree ([`launcher::split_commands`]) and interprets them,
//! [`shell`] finds where a variable or flag is set and edits it there; for Python, [`python`]
//! reads calls, keyword arguments, assignments, dict literals, `def` defaults and argparse
//! defaults from the Python tree and edits one of them. [`job_text`] says what a pasted or
//! found text is and reads training logs; it reads shell and Python only through those two.
//! What is still read by line, outside any grammar: `#SBATCH` resource lines
//! ([`launcher`]'s `read_slurm`) and the content sniffing that decides a text *is* shell or
//! Python at all ([`python::looks_like_python`], `is_shell_line`).
//!
//! Editors are pure text edits: old text in, new text out, so a change can be previewed as a
//! diff and undone byte-exactly. Each edit is idempotent (applying it to its own output changes
//! nothing) and leaves every line it does not need to change byte-identical, line endings and a
//! missing final newline included.
//!
//! Lines are handled as (text, terminator) pairs. A new line takes the file's own line ending
//! (the first one it has, else `\n`); appending to a file without a final newline moves the
//! missing newline to the new last line, and removing that line moves it back, so an insert
//! followed by a removal gives the original bytes.

pub mod config;
pub mod env;
pub mod fstab;
pub mod hf_args;
pub mod job_text;
pub mod jsonnet;
pub mod keypath;
pub mod launcher;
pub mod line;
pub mod modprobe;
pub mod mounts;
pub mod profiler_report;
pub mod python;
pub mod shell;
pub mod syntax;
pub mod sysctl;

/// A script setting key (`config.set`'s `key:` for a launch script or Python source) as a user
/// writes the setting, at its file and line: `DataLoader(num_workers=…) at train.py:5` for
/// `DataLoader@L5.num_workers`, `--dataloader_num_workers at launch.sh:3` for
/// `--dataloader_num_workers@L3`. None for any other key (a config's key path reads as is).
pub fn shown_key(key: &str, file: Option<&str>) -> Option<String> {
    let at = |line: usize| match file.filter(|f| !f.is_empty()) {
        Some(f) => format!("{f}:{line}"),
        None => format!("line {line}"),
    };
    if let Some((flag, line)) = launcher::parse_flag_key(key) {
        return Some(format!("{flag} at {}", at(line)));
    }
    Some(match python::parse_key(key)? {
        python::PyKey::Kwarg {
            callee,
            line,
            kwarg,
        } => format!("{callee}({kwarg}=…) at {}", at(line)),
        python::PyKey::Param { def, line, param } => {
            format!("def {def}({param}=…) at {}", at(line))
        }
        python::PyKey::Assign { target, line } => format!("{target} = … at {}", at(line)),
        python::PyKey::DictEntry { key, line } => format!("{{'{key}': …}} at {}", at(line)),
    })
}

#[cfg(test)]
mod roundtrip;

/// Why an edit could not be computed; the message names the key, entry or value involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// An argument cannot be written into this kind of file (bad key, newline in a value).
    #[error("{0}")]
    Invalid(String),
    /// The existing file cannot be parsed well enough to edit it safely.
    #[error("{0}")]
    Parse(String),
    /// The entry the edit must change is not in the file.
    #[error("{0}")]
    NotFound(String),
    /// More than one entry matches and the edit cannot choose.
    #[error("{0}")]
    Ambiguous(String),
}

/// One line of a file: its text and its terminator (`"\n"`, `"\r\n"` or `""` for a last line
/// without a newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub text: String,
    pub end: String,
}

/// A file as lines, editable without disturbing the bytes of lines it does not touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lines {
    pub lines: Vec<Line>,
    /// The ending new lines get.
    pub nl: &'static str,
}

impl Lines {
    pub fn parse(s: &str) -> Self {
        let mut lines = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            match rest.find('\n') {
                Some(i) => {
                    let (text, end) = if i > 0 && rest.as_bytes()[i - 1] == b'\r' {
                        (&rest[..i - 1], "\r\n")
                    } else {
                        (&rest[..i], "\n")
                    };
                    lines.push(Line {
                        text: text.to_string(),
                        end: end.to_string(),
                    });
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push(Line {
                        text: rest.to_string(),
                        end: String::new(),
                    });
                    rest = "";
                }
            }
        }
        let nl = match lines.iter().find(|l| !l.end.is_empty()) {
            Some(l) if l.end == "\r\n" => "\r\n",
            _ => "\n",
        };
        Lines { lines, nl }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Inserts `text` as a new line before index `at` (`at == len` appends).
    pub fn insert(&mut self, at: usize, text: &str) {
        let mut end = self.nl.to_string();
        if at == self.lines.len()
            && let Some(last) = self.lines.last_mut()
            && last.end.is_empty()
        {
            last.end = self.nl.to_string();
            end = String::new();
        }
        self.lines.insert(
            at,
            Line {
                text: text.to_string(),
                end,
            },
        );
    }

    pub fn push(&mut self, text: &str) {
        self.insert(self.lines.len(), text);
    }

    /// Removes line `at`; removing an unterminated last line leaves the new last line
    /// unterminated, undoing [`Lines::insert`].
    pub fn remove(&mut self, at: usize) {
        let removed = self.lines.remove(at);
        if removed.end.is_empty()
            && at == self.lines.len()
            && let Some(last) = self.lines.last_mut()
        {
            last.end = String::new();
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(&l.text);
            out.push_str(&l.end);
        }
        out
    }
}

/// Refuses values that would break a line-oriented file.
pub(crate) fn check_single_line(what: &str, value: &str) -> Result<(), EditError> {
    if value.contains(['\n', '\r', '\0']) {
        return Err(EditError::Invalid(format!(
            "{what} `{}` contains a newline or NUL, which cannot be written on one line",
            value.escape_debug()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_render_is_identity() {
        for s in ["", "a", "a\n", "a\r\nb", "a\r\nb\n\n", "\n", "x\ry\n"] {
            assert_eq!(Lines::parse(s).render(), s);
        }
    }

    #[test]
    fn insert_then_remove_restores_bytes() {
        for s in ["", "a", "a\n", "a\r\nb", "a\r\nb\r\n"] {
            let mut l = Lines::parse(s);
            let n = l.len();
            l.push("new");
            assert!(l.render().contains("new"));
            l.remove(n);
            assert_eq!(l.render(), s);
        }
    }

    #[test]
    fn new_lines_take_the_file_ending() {
        let mut l = Lines::parse("a\r\nb");
        l.push("c");
        assert_eq!(l.render(), "a\r\nb\r\nc");
        let mut l = Lines::parse("");
        l.push("c");
        assert_eq!(l.render(), "c\n");
    }
}
