//! The one key-path syntax for training configs, used by the `config` probe's candidate keys,
//! the `config.set` fix and every reader: `a.b[0].c`, where `\.`, `\[` and `\\` put a dot, a
//! bracket or a backslash inside a key (`env.NCCL\.DEBUG` is the key `NCCL.DEBUG` under `env`).

use serde_json::Value;

use super::EditError;

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Parses `a.b[0].c`; `\.`, `\[` and `\\` put those characters in a key.
pub fn parse_key_path(path: &str) -> Result<Vec<Seg>, EditError> {
    let bad = |why: &str| EditError::Invalid(format!("key path `{path}` is not valid: {why}"));
    let mut segs = Vec::new();
    let mut key = String::new();
    let mut have_key = false;
    let mut after_index = false;
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next().ok_or_else(|| bad("it ends with `\\`"))?;
                key.push(next);
                have_key = true;
            }
            '.' => {
                if have_key {
                    segs.push(Seg::Key(std::mem::take(&mut key)));
                    have_key = false;
                } else if !after_index {
                    return Err(bad("it has an empty segment"));
                }
                after_index = false;
                if chars.peek().is_none() {
                    return Err(bad("it ends with `.`"));
                }
            }
            '[' => {
                if have_key {
                    segs.push(Seg::Key(std::mem::take(&mut key)));
                    have_key = false;
                } else if !after_index {
                    return Err(bad("an index must follow a key"));
                }
                let mut digits = String::new();
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some(d) if d.is_ascii_digit() => digits.push(d),
                        _ => return Err(bad("an index must be digits closed by `]`")),
                    }
                }
                let n = digits
                    .parse()
                    .map_err(|_| bad("an index must be digits closed by `]`"))?;
                segs.push(Seg::Index(n));
                after_index = true;
            }
            c => {
                if after_index {
                    return Err(bad("expected `.` or `[` after `]`"));
                }
                key.push(c);
                have_key = true;
            }
        }
    }
    if have_key {
        segs.push(Seg::Key(key));
    }
    if segs.is_empty() {
        return Err(bad("it is empty"));
    }
    Ok(segs)
}

pub fn path_text(segs: &[Seg]) -> String {
    let mut out = String::new();
    for s in segs {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                for c in k.chars() {
                    if matches!(c, '.' | '[' | '\\') {
                        out.push('\\');
                    }
                    out.push(c);
                }
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The value at `segs` in a parsed document.
pub fn get_path<'a>(mut v: &'a Value, segs: &[Seg]) -> Option<&'a Value> {
    for s in segs {
        v = match (s, v) {
            (Seg::Key(k), Value::Object(m)) => m.get(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// The value at `key_path` in a parsed document; `None` when the path is not valid or leads
/// nowhere.
pub fn lookup<'a>(doc: &'a Value, key_path: &str) -> Option<&'a Value> {
    get_path(doc, &parse_key_path(key_path).ok()?)
}
