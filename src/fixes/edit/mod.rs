//! Pure text edits behind the file-changing fix kinds: old text in, new text out, so a change
//! can be previewed as a diff and undone byte-exactly. Each edit is idempotent and leaves every
//! line it does not need to change byte-identical (line endings and a missing final newline
//! included).
