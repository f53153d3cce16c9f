//! Text shown to the operator may come from files anybody wrote (an env value, a config key,
//! a pasted log). Control characters in it — ESC sequences that retitle the terminal, clear
//! the screen or hide lines of the diff being approved — are shown escaped (`\x1b`), never raw.

use std::fmt::Write;

fn needs_escape(c: char, keep_newlines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_newlines,
        // C0, DEL, C1, and the bidirectional overrides that reorder what is shown
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn run(s: &str, keep_newlines: bool) -> String {
    if !s.chars().any(|c| needs_escape(c, keep_newlines)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c, keep_newlines) {
            let n = c as u32;
            if n <= 0xff {
                let _ = write!(out, "\\x{n:02x}");
            } else {
                let _ = write!(out, "\\u{{{n:x}}}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One line of text: every control character escaped, newlines and tabs included.
pub fn escape(s: &str) -> String {
    run(s, false)
}

/// Text of several lines: control characters escaped, newlines and tabs kept.
pub fn escape_lines(s: &str) -> String {
    run(s, true)
}

/// A copy of `value` with every string in it escaped as [`escape_lines`] does: for rendering
/// a report (messages, diffs, values read from files) as text.
pub fn escape_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(escape_lines(s)),
        Value::Array(a) => Value::Array(a.iter().map(escape_json).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (escape(k), escape_json(v))).collect())
        }
        other => other.clone(),
    }
}

/// A copy of a serializable value (a report) with every string escaped for display; the value
/// itself when it does not round-trip.
pub fn escaped<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(value: &T) -> T {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(escape_json(&v)).ok())
        .unwrap_or_else(|| value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_sequences_and_keeps_plain_text() {
        assert_eq!(escape_lines("a=1\n"), "a=1\n");
        assert_eq!(escape_lines("x\x1b]0;t\x07\n"), "x\\x1b]0;t\\x07\n");
        assert_eq!(escape("a\nb"), "a\\x0ab");
        assert_eq!(escape("\u{202e}abc"), "\\u{202e}abc");
        assert_eq!(escape("ü ok"), "ü ok");
    }
}
