//! Structured config files (a training job's YAML, JSON/JSONC or TOML): detect the format
//! (extension, else content), read the whole document as JSON, and set one value by a key path
//! such as `data.num_workers` or `loaders[0].pin_memory` ([`super::keypath`]), keeping
//! comments, key order and formatting. The `config` and `file` probes read through
//! [`read_config`] / [`read_as`], and `config.set` edits through [`config_set`], so both sides
//! see one document.
//!
//! - YAML goes through `yaml-edit`, which edits a lossless syntax tree: a scalar replace keeps
//!   the key, its trailing comment and the line around it, and a missing key is inserted after
//!   its parent's last child at the parent's indentation (missing parents are created). Its
//!   path syntax is the same as ours, so the path is passed through escaped.
//! - TOML goes through `toml_edit`; a replaced value keeps its decor (spacing and comment).
//! - JSON and JSONC: `jsonc-parser` reads them (comments and trailing commas allowed) and its
//!   concrete syntax tree replaces an existing value, keeping comments and layout. A missing
//!   member goes in with a small span scanner that follows the object's layout (the CST would
//!   reflow a one-line object over several lines); in a file with comments, which the scanner
//!   does not read, the CST appends it.
//!
//! Every edit is checked before it is returned: the new text must parse to the old document
//! with exactly the one value set, otherwise the edit is refused. That guards against a library
//! or scanner mistake corrupting a config gpufix was asked to tune.

use std::path::Path;

use serde_json::{Map, Value};

use super::EditError;
pub use super::keypath::{Seg, get_path, parse_key_path, path_text};

/// The syntax of a config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFormat {
    Yaml,
    /// JSON, read with `//` and `/* */` comments and trailing commas allowed (JSONC, as VS Code
    /// and DeepSpeed-style configs are often written).
    Json,
    Toml,
}

impl ConfigFormat {
    /// The format a file's extension names.
    pub fn from_path(path: &Path) -> Option<Self> {
        Self::from_name(path.extension()?.to_str()?)
    }

    /// The format a name gives: an extension or a `format:` parameter (`yaml`, `yml`, `json`,
    /// `jsonc`, `toml`, any case).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "yaml" | "yml" => Some(ConfigFormat::Yaml),
            "json" | "jsonc" => Some(ConfigFormat::Json),
            "toml" => Some(ConfigFormat::Toml),
            _ => None,
        }
    }

    /// The format of a file with no telling extension (`.txt`, `.cfg`, a pasted config), from
    /// its content: JSON/JSONC first (the strictest), then TOML, then YAML (which reads almost
    /// any text as a string); only a non-empty mapping counts. `None` when it is none.
    pub fn from_content(text: &str) -> Option<Self> {
        sniff(text).map(|(f, _)| f)
    }

    /// The format of `path`'s extension, else of `text`.
    pub fn detect(path: Option<&Path>, text: &str) -> Option<Self> {
        path.and_then(Self::from_path)
            .or_else(|| Self::from_content(text))
    }

    /// The lower-case name probes report (`yaml`, `json`, `toml`).
    pub fn id(self) -> &'static str {
        match self {
            ConfigFormat::Yaml => "yaml",
            ConfigFormat::Json => "json",
            ConfigFormat::Toml => "toml",
        }
    }

    fn name(self) -> &'static str {
        match self {
            ConfigFormat::Yaml => "YAML",
            ConfigFormat::Json => "JSON",
            ConfigFormat::Toml => "TOML",
        }
    }
}

impl std::fmt::Display for ConfigFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a config file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The text is not valid in the format it was read as; `detail` is the parser's message,
    /// with the line where it says.
    #[error("invalid {format}: {detail}")]
    Syntax {
        format: ConfigFormat,
        detail: String,
    },
    /// No telling extension, and the content reads as none of the formats.
    #[error(
        "cannot tell the format: the content reads as none of JSON, TOML or YAML (a mapping); name it .yaml, .json or .toml to see that format's error"
    )]
    UnknownFormat,
}

fn jsonc_options() -> jsonc_parser::ParseOptions {
    // JSONC, not JSON5: comments and trailing commas, nothing that changes what a value means.
    jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parses `text` as `format` into a JSON value: the one reader behind the `config` and `file`
/// probes and the `config.set` fix. An empty YAML document is `null`.
pub fn read_as(text: &str, format: ConfigFormat) -> Result<Value, ReadError> {
    let err = |detail: String| ReadError::Syntax { format, detail };
    // a nesting bomb is refused in linear time, before a parser recurses into it
    let depth = crate::vocab::io::nesting_depth(text);
    if depth > crate::vocab::io::MAX_NESTING {
        return Err(err(format!(
            "input too large: it nests `[`/`{{` {depth} levels deep; the limit is {}",
            crate::vocab::io::MAX_NESTING
        )));
    }
    match format {
        ConfigFormat::Json => {
            if text.trim().is_empty() {
                return Err(err("the file is empty".into()));
            }
            jsonc_parser::parse_to_serde_value::<Value>(text, &jsonc_options())
                .map_err(|e| err(e.to_string()))
        }
        ConfigFormat::Yaml => {
            if text.trim().is_empty() {
                return Ok(Value::Null);
            }
            serde_yaml::from_str(text).map_err(|e| err(e.to_string()))
        }
        ConfigFormat::Toml => toml_to_json(text),
    }
}

/// Reads a config file: the format from `path`'s extension when it names one, else from the
/// content (see [`ConfigFormat::from_content`]).
pub fn read_config(path: Option<&Path>, text: &str) -> Result<(ConfigFormat, Value), ReadError> {
    if let Some(format) = path.and_then(ConfigFormat::from_path) {
        return read_as(text, format).map(|v| (format, v));
    }
    sniff(text).ok_or(ReadError::UnknownFormat)
}

/// Larger texts are not read as a structured config, by content or by name: training configs
/// are kilobytes, a parser's token list over a pasted log of tens of MB costs GBs, and parsing,
/// locating keys in and diffing a YAML config costs about a hundred times its size (3.5 MB
/// peaked at 400 MB).
pub const MAX_SNIFF_BYTES: usize = 1 << 20;

fn sniff(text: &str) -> Option<(ConfigFormat, Value)> {
    // A training config is a mapping at the top; anything else (a bare list, a YAML string,
    // an empty TOML table) says nothing about the format.
    if text.len() > MAX_SNIFF_BYTES {
        return None;
    }
    let text = text.trim_start_matches('\u{feff}');
    // the first line that says something: JSON starts with `{`, TOML with `[table]` or
    // `key = value`; only those are worth a parser's pass
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
        .unwrap_or("");
    let toml_like = first.starts_with('[')
        || first.split_once('=').is_some_and(|(k, _)| {
            let k = k.trim();
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\"' ".contains(c))
        });
    [ConfigFormat::Json, ConfigFormat::Toml, ConfigFormat::Yaml]
        .into_iter()
        .filter(|f| match f {
            ConfigFormat::Json => first.starts_with('{') || first.starts_with("/*"),
            ConfigFormat::Toml => toml_like,
            _ => true,
        })
        .find_map(|f| {
            read_as(text, f)
                .ok()
                .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
                // a line of prose with a colon is a YAML mapping too (`CUDA backend failed to
                // initialize: Found cuDNN …`): a config's keys are names, so a YAML text none
                // of whose top keys is one word is not taken for a config by its content
                .filter(|v| {
                    f != ConfigFormat::Yaml
                        || v.as_object()
                            .is_some_and(|m| m.keys().any(|k| !k.contains(char::is_whitespace)))
                })
                .map(|v| (f, v))
        })
}

/// A TOML document as JSON: the one TOML→JSON conversion. Datetimes become their TOML text;
/// a float that JSON cannot hold (nan, inf) becomes `null`.
pub fn toml_to_json(text: &str) -> Result<Value, ReadError> {
    let doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| ReadError::Syntax {
                format: ConfigFormat::Toml,
                detail: e.to_string().trim_end().replace('\n', " "),
            })?;
    Ok(toml_item_to_json(doc.as_item()))
}

/// The whole document as a JSON value, for the editor's before/after checks.
pub fn parse_document(text: &str, format: ConfigFormat) -> Result<Value, EditError> {
    read_as(text, format).map_err(|e| match e {
        ReadError::Syntax { format, detail } => {
            EditError::Parse(format!("not valid {format}: {detail}"))
        }
        other => EditError::Parse(other.to_string()),
    })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Sets the value in the parsed document, creating missing mappings: the reference result the
/// text edit must match, and the source of path errors.
fn set_path(doc: &mut Value, segs: &[Seg], value: &Value, path: &str) -> Result<(), EditError> {
    if doc.is_null() {
        *doc = Value::Object(Map::new());
    }
    let mut cur = doc;
    for (n, s) in segs.iter().enumerate() {
        let last = n + 1 == segs.len();
        let here = path_text(&segs[..n]);
        let here = if here.is_empty() {
            "the document root".to_string()
        } else {
            format!("`{here}`")
        };
        cur = match s {
            Seg::Key(k) => {
                let Value::Object(m) = cur else {
                    return Err(EditError::Invalid(format!(
                        "cannot set `{path}`: {here} is {}, not a mapping",
                        kind(cur)
                    )));
                };
                if last {
                    m.insert(k.clone(), value.clone());
                    return Ok(());
                }
                m.entry(k.clone())
                    .or_insert_with(|| Value::Object(Map::new()))
            }
            Seg::Index(i) => {
                let Value::Array(a) = cur else {
                    return Err(EditError::Invalid(format!(
                        "cannot set `{path}`: {here} is {}, not a list",
                        kind(cur)
                    )));
                };
                let len = a.len();
                let Some(slot) = a.get_mut(*i) else {
                    return Err(EditError::NotFound(format!(
                        "cannot set `{path}`: {here} has {len} items, no index {i}"
                    )));
                };
                if last {
                    *slot = value.clone();
                    return Ok(());
                }
                slot
            }
        };
    }
    Ok(())
}

/// The value at `key_path`; `None` if the file does not parse or has no such value.
pub fn config_get(old: &str, format: ConfigFormat, key_path: &str) -> Option<Value> {
    let segs = parse_key_path(key_path).ok()?;
    let doc = parse_document(old, format).ok()?;
    get_path(&doc, &segs).cloned()
}

/// Sets `key_path` to `value`, changing only that value's text (or inserting it).
pub fn config_set(
    old: &str,
    format: ConfigFormat,
    key_path: &str,
    value: &Value,
) -> Result<String, EditError> {
    let segs = parse_key_path(key_path)?;
    let before = parse_document(old, format)?;
    if get_path(&before, &segs) == Some(value) {
        return Ok(old.to_string());
    }
    let mut expected = before;
    set_path(&mut expected, &segs, value, key_path)?;
    let new = match format {
        ConfigFormat::Yaml => yaml_set(old, &segs, value, key_path)?,
        ConfigFormat::Toml => toml_set(old, &segs, value, key_path)?,
        ConfigFormat::Json => json_set_cst(old, &segs, value, key_path)?,
    };
    let after = parse_document(&new, format).map_err(|e| {
        EditError::Parse(format!(
            "setting `{key_path}` would leave the file unparsable ({e}); refusing"
        ))
    })?;
    if after != expected {
        return Err(EditError::Parse(format!(
            "setting `{key_path}` would change more than that value; refusing"
        )));
    }
    Ok(new)
}

// ---------------------------------------------------------------------------------------- YAML

fn json_to_yaml(v: &Value) -> yaml_edit::YamlValue {
    use yaml_edit::{ScalarValue, YamlValue};
    match v {
        Value::Null => YamlValue::Scalar(ScalarValue::null()),
        Value::Bool(b) => YamlValue::Scalar(ScalarValue::from(*b)),
        Value::Number(n) => YamlValue::Scalar(match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => ScalarValue::from(i),
            (None, Some(f)) if n.is_f64() => ScalarValue::from(f),
            _ => ScalarValue::parse(n.to_string()),
        }),
        Value::String(s) => YamlValue::Scalar(ScalarValue::string(s.as_str())),
        Value::Array(a) => YamlValue::Sequence(a.iter().map(json_to_yaml).collect()),
        Value::Object(m) => YamlValue::Mapping(
            m.iter()
                .map(|(k, v)| (k.clone(), json_to_yaml(v)))
                .collect(),
        ),
    }
}

fn yaml_set(old: &str, segs: &[Seg], value: &Value, key_path: &str) -> Result<String, EditError> {
    use std::str::FromStr;
    use yaml_edit::path::YamlPath;
    let doc = yaml_edit::Document::from_str(old)
        .map_err(|e| EditError::Parse(format!("not valid YAML: {e}")))?;
    let mut new_value = json_to_yaml(value);
    // Keep a double- or single-quoted string quoted the same way.
    if let (Value::String(s), Ok(yaml_edit::YamlNode::Scalar(sc))) =
        (value, doc.try_get_path(&path_text(segs)))
    {
        let raw = sc.value();
        if raw.starts_with('"') && !s.contains(['"', '\\']) && !s.chars().any(char::is_control) {
            new_value =
                yaml_edit::YamlValue::Scalar(yaml_edit::ScalarValue::double_quoted(s.as_str()));
        } else if raw.starts_with('\'') && !s.contains('\'') && !s.chars().any(char::is_control) {
            new_value =
                yaml_edit::YamlValue::Scalar(yaml_edit::ScalarValue::single_quoted(s.as_str()));
        }
    }
    doc.try_set_path(&path_text(segs), new_value)
        .map_err(|e| EditError::Invalid(format!("cannot set `{key_path}`: {e}")))?;
    Ok(doc.to_string())
}

// ---------------------------------------------------------------------------------------- TOML

fn toml_value_to_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_value_to_json).collect()),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value_to_json(v)))
                .collect(),
        ),
    }
}

/// A parsed TOML item as JSON (see [`toml_to_json`]).
pub fn toml_item_to_json(item: &toml_edit::Item) -> Value {
    use toml_edit::Item;
    match item {
        Item::None => Value::Null,
        Item::Value(v) => toml_value_to_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_item_to_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| {
                    Value::Object(
                        t.iter()
                            .map(|(k, v)| (k.to_string(), toml_item_to_json(v)))
                            .collect(),
                    )
                })
                .collect(),
        ),
    }
}

fn json_to_toml(v: &Value, key_path: &str) -> Result<toml_edit::Value, EditError> {
    Ok(match v {
        Value::Null => {
            return Err(EditError::Invalid(format!(
                "cannot set `{key_path}` to null: TOML has no null"
            )));
        }
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) if n.is_f64() => f.into(),
            _ => {
                return Err(EditError::Invalid(format!(
                    "cannot set `{key_path}` to {n}: TOML integers are 64-bit signed"
                )));
            }
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for x in a {
                arr.push(json_to_toml(x, key_path)?);
            }
            toml_edit::Value::Array(arr)
        }
        Value::Object(m) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, x) in m {
                t.insert(k, json_to_toml(x, key_path)?);
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

/// Where a TOML path currently points.
enum Slot<'a> {
    Item(&'a mut toml_edit::Item),
    Table(&'a mut toml_edit::Table),
    Value(&'a mut toml_edit::Value),
}

fn toml_set(old: &str, segs: &[Seg], value: &Value, key_path: &str) -> Result<String, EditError> {
    let mut doc: toml_edit::DocumentMut = old
        .parse()
        .map_err(|e: toml_edit::TomlError| EditError::Parse(format!("not valid TOML: {e}")))?;
    let new_value = json_to_toml(value, key_path)?;
    toml_descend(Slot::Table(doc.as_table_mut()), segs, new_value, key_path)?;
    Ok(doc.to_string())
}

fn toml_descend(
    slot: Slot<'_>,
    segs: &[Seg],
    new_value: toml_edit::Value,
    key_path: &str,
) -> Result<(), EditError> {
    use toml_edit::{InlineTable, Item, Table, Value as T};
    let cannot = || EditError::Invalid(format!("cannot set `{key_path}` in this TOML file"));
    let (seg, rest) = segs.split_first().expect("paths are non-empty");
    // Normalise the slot so each container shape is handled once.
    let slot = match slot {
        Slot::Item(Item::Table(t)) => Slot::Table(t),
        Slot::Item(Item::Value(v)) => Slot::Value(v),
        other => other,
    };
    if rest.is_empty() {
        return toml_set_last(slot, seg, new_value, key_path);
    }
    let next = match (seg, slot) {
        (Seg::Key(k), Slot::Table(t)) => Slot::Item(t.entry(k).or_insert_with(|| {
            let mut t = Table::new();
            // An implicit table gets no `[header]` of its own unless it holds keys.
            t.set_implicit(true);
            Item::Table(t)
        })),
        (Seg::Key(k), Slot::Value(T::InlineTable(t))) => Slot::Value(
            t.entry(k.as_str())
                .or_insert(T::InlineTable(InlineTable::new())),
        ),
        (Seg::Index(i), Slot::Item(Item::ArrayOfTables(a))) => {
            Slot::Table(a.get_mut(*i).ok_or_else(cannot)?)
        }
        (Seg::Index(i), Slot::Value(T::Array(a))) => Slot::Value(a.get_mut(*i).ok_or_else(cannot)?),
        _ => return Err(cannot()),
    };
    toml_descend(next, rest, new_value, key_path)
}

/// Replaces `old` by `new`, keeping the spacing and comment around the old value.
fn replace_keeping_decor(old: &mut toml_edit::Value, mut new: toml_edit::Value) {
    *new.decor_mut() = old.decor().clone();
    *old = new;
}

fn toml_set_last(
    slot: Slot<'_>,
    seg: &Seg,
    new_value: toml_edit::Value,
    key_path: &str,
) -> Result<(), EditError> {
    use toml_edit::{Item, Value as T};
    match (seg, slot) {
        (Seg::Key(k), Slot::Table(t)) => match t.get_mut(k) {
            Some(Item::Value(old)) => replace_keeping_decor(old, new_value),
            Some(other) => *other = Item::Value(new_value),
            None => {
                t.insert(k, Item::Value(new_value));
            }
        },
        (Seg::Key(k), Slot::Value(T::InlineTable(t))) => match t.get_mut(k) {
            Some(old) => replace_keeping_decor(old, new_value),
            None => {
                t.insert(k, new_value);
            }
        },
        (Seg::Index(i), Slot::Value(T::Array(a))) if *i < a.len() => {
            let old = a.get_mut(*i).expect("index checked");
            replace_keeping_decor(old, new_value);
        }
        _ => {
            return Err(EditError::Invalid(format!(
                "cannot set `{key_path}` in this TOML file"
            )));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------- JSON

/// A JSON value and where its text is.
#[derive(Debug)]
struct JNode {
    start: usize,
    end: usize,
    kind: JKind,
}

#[derive(Debug)]
enum JKind {
    Scalar,
    Object(Vec<JMember>),
    Array(Vec<JNode>),
}

#[derive(Debug)]
struct JMember {
    key: String,
    key_start: usize,
    key_end: usize,
    value: JNode,
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn error(&self, what: &str) -> EditError {
        let before = &self.text[..self.i.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |p| p + 1) + 1;
        EditError::Parse(format!(
            "not valid JSON: {what} at line {line} column {col}"
        ))
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn document(mut self) -> Result<JNode, EditError> {
        self.ws();
        let v = self.value()?;
        self.ws();
        if self.i != self.b.len() {
            return Err(self.error("unexpected text after the document"));
        }
        Ok(v)
    }

    fn value(&mut self) -> Result<JNode, EditError> {
        let start = self.i;
        let kind = match self.b.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let key_start = self.i;
                        if self.b.get(self.i) != Some(&b'"') {
                            return Err(self.error("expected a key"));
                        }
                        let key = self.string()?;
                        let key_end = self.i;
                        self.ws();
                        if self.b.get(self.i) != Some(&b':') {
                            return Err(self.error("expected `:`"));
                        }
                        self.i += 1;
                        self.ws();
                        let value = self.value()?;
                        members.push(JMember {
                            key,
                            key_start,
                            key_end,
                            value,
                        });
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.error("expected `,` or `}`")),
                        }
                    }
                }
                JKind::Object(members)
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        items.push(self.value()?);
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.error("expected `,` or `]`")),
                        }
                    }
                }
                JKind::Array(items)
            }
            Some(b'"') => {
                self.string()?;
                JKind::Scalar
            }
            Some(_) => {
                while self.i < self.b.len()
                    && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
                {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(self.error("expected a value"));
                }
                JKind::Scalar
            }
            None => return Err(self.error("unexpected end")),
        };
        Ok(JNode {
            start,
            end: self.i,
            kind,
        })
    }

    /// A string starting at `"`; its decoded text.
    fn string(&mut self) -> Result<String, EditError> {
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_str(&self.text[start..self.i])
                        .map_err(|e| self.error(&format!("bad string ({e})")));
                }
                _ => self.i += 1,
            }
        }
        Err(self.error("unterminated string"))
    }
}

/// How new JSON text is laid out: `unit` is the indentation step (`None`: one line).
struct JsonStyle<'a> {
    nl: &'a str,
    unit: Option<String>,
    colon: String,
}

fn line_indent(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn render_json(v: &Value, style: &JsonStyle<'_>, base: &str) -> String {
    let items: Vec<(Option<&String>, &Value)> = match v {
        Value::Array(a) if !a.is_empty() => a.iter().map(|x| (None, x)).collect(),
        Value::Object(m) if !m.is_empty() => m.iter().map(|(k, x)| (Some(k), x)).collect(),
        _ => return serde_json::to_string(v).expect("a JSON value renders"),
    };
    let (open, close) = if v.is_array() { ("[", "]") } else { ("{", "}") };
    let member = |k: Option<&String>, x: &Value, inner: &str| match k {
        Some(k) => format!(
            "{}{}{}",
            serde_json::to_string(k).expect("a string renders"),
            style.colon,
            render_json(x, style, inner)
        ),
        None => render_json(x, style, inner),
    };
    match &style.unit {
        Some(unit) => {
            let inner = format!("{base}{unit}");
            let body: Vec<String> = items
                .iter()
                .map(|(k, x)| format!("{inner}{}", member(*k, x, &inner)))
                .collect();
            format!(
                "{open}{nl}{}{nl}{base}{close}",
                body.join(&format!(",{}", style.nl)),
                nl = style.nl
            )
        }
        None => {
            let body: Vec<String> = items.iter().map(|(k, x)| member(*k, x, base)).collect();
            format!("{open}{}{close}", body.join(", "))
        }
    }
}

fn cst_input(v: &Value) -> jsonc_parser::cst::CstInputValue {
    use jsonc_parser::cst::CstInputValue as I;
    match v {
        Value::Null => I::Null,
        Value::Bool(b) => I::Bool(*b),
        Value::Number(n) => I::Number(n.to_string()),
        Value::String(s) => I::String(s.clone()),
        Value::Array(a) => I::Array(a.iter().map(cst_input).collect()),
        Value::Object(m) => I::Object(m.iter().map(|(k, v)| (k.clone(), cst_input(v))).collect()),
    }
}

/// JSON and JSONC: a value that exists is replaced through `jsonc-parser`'s concrete syntax
/// tree, which keeps comments, whitespace and trailing commas, so only the value's text
/// changes. A missing member goes in with the span scanner below, which follows the object's
/// layout (the CST would turn a one-line object into several lines); in a file the scanner
/// cannot read (comments), the CST appends it.
fn json_set_cst(
    old: &str,
    segs: &[Seg],
    value: &Value,
    key_path: &str,
) -> Result<String, EditError> {
    use jsonc_parser::cst::{CstInputValue, CstRootNode};
    let root = CstRootNode::parse(old, &jsonc_options())
        .map_err(|e| EditError::Parse(format!("not valid JSON: {e}")))?;
    let cannot = || EditError::Invalid(format!("cannot set `{key_path}` in this JSON file"));
    let mut node = root.value().ok_or_else(cannot)?;
    for (n, seg) in segs.iter().enumerate() {
        let last = n + 1 == segs.len();
        match seg {
            Seg::Key(k) => {
                let obj = node.as_object().ok_or_else(cannot)?;
                // The last of duplicate keys is the one readers see.
                let prop = obj
                    .properties()
                    .into_iter()
                    .rev()
                    .find(|p| p.decoded_name().as_deref() == Some(k.as_str()));
                match prop {
                    Some(p) if last => {
                        p.set_value(cst_input(value));
                        return Ok(root.to_string());
                    }
                    Some(p) => node = p.value().ok_or_else(cannot)?,
                    None => {
                        // The scanner inserts in the object's own layout (one line stays one
                        // line, which the CST's `append` would reflow); it reads no comments,
                        // so a JSONC file gets the CST's insertion.
                        match json_set(old, segs, value, key_path) {
                            Err(EditError::Parse(_)) => {}
                            done => return done,
                        }
                        // Build the missing rest of the path as one nested value.
                        let mut v = cst_input(value);
                        for s in segs[n + 1..].iter().rev() {
                            let Seg::Key(k) = s else { return Err(cannot()) };
                            v = CstInputValue::Object(vec![(k.clone(), v)]);
                        }
                        obj.append(k, v);
                        return Ok(root.to_string());
                    }
                }
            }
            Seg::Index(i) => {
                let arr = node.as_array().ok_or_else(cannot)?;
                let item = arr.elements().into_iter().nth(*i).ok_or_else(cannot)?;
                if last {
                    replace_node(item, cst_input(value)).ok_or_else(cannot)?;
                    return Ok(root.to_string());
                }
                node = item;
            }
        }
    }
    Err(cannot())
}

fn replace_node(
    node: jsonc_parser::cst::CstNode,
    with: jsonc_parser::cst::CstInputValue,
) -> Option<()> {
    use jsonc_parser::cst::{CstContainerNode as C, CstLeafNode as L, CstNode as N};
    match node {
        N::Container(C::Object(o)) => o.replace_with(with),
        N::Container(C::Array(a)) => a.replace_with(with),
        N::Leaf(L::BooleanLit(b)) => b.replace_with(with),
        N::Leaf(L::NullKeyword(b)) => b.replace_with(with),
        N::Leaf(L::NumberLit(b)) => b.replace_with(with),
        N::Leaf(L::StringLit(b)) => b.replace_with(with),
        N::Leaf(L::WordLit(b)) => b.replace_with(with),
        _ => return None,
    }
    .map(|_| ())
}

/// Inserts the missing part of `segs` with the span scanner: the deepest object on the path
/// that exists gets the new member after its last one, in its own layout. Only called when
/// the full path is missing (a value that exists is replaced through the CST).
fn json_set(old: &str, segs: &[Seg], value: &Value, key_path: &str) -> Result<String, EditError> {
    let root = Scanner {
        text: old,
        b: old.as_bytes(),
        i: 0,
    }
    .document()?;
    let nl = if old.contains("\r\n") { "\r\n" } else { "\n" };
    // The indentation step: the first indented line's leading blanks.
    let unit = old.contains('\n').then(|| {
        old.lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|ws| !ws.is_empty())
            .unwrap_or("  ")
            .to_string()
    });
    let mut node = &root;
    for (n, seg) in segs.iter().enumerate() {
        let next = match (seg, &node.kind) {
            (Seg::Key(k), JKind::Object(members)) => {
                match members.iter().rev().find(|m| m.key == *k) {
                    Some(m) => Some(&m.value),
                    None => {
                        return json_insert(old, node, &segs[n..], value, nl, unit, key_path);
                    }
                }
            }
            (Seg::Index(i), JKind::Array(items)) => items.get(*i),
            _ => None,
        };
        node = next.ok_or_else(|| {
            EditError::Invalid(format!("cannot set `{key_path}` in this JSON file"))
        })?;
    }
    Err(EditError::Invalid(format!(
        "cannot set `{key_path}` in this JSON file"
    )))
}

/// Inserts the missing `rest` of the path (keys only) into `obj`.
fn json_insert(
    old: &str,
    obj: &JNode,
    rest: &[Seg],
    value: &Value,
    nl: &str,
    unit: Option<String>,
    key_path: &str,
) -> Result<String, EditError> {
    // Nest the value under the keys still missing.
    let (first, deeper) = rest.split_first().expect("non-empty");
    let mut nested = value.clone();
    for s in deeper.iter().rev() {
        if let Seg::Key(k) = s {
            let mut m = Map::new();
            m.insert(k.clone(), nested);
            nested = Value::Object(m);
        }
    }
    let (JKind::Object(members), Seg::Key(key)) = (&obj.kind, first) else {
        return Err(EditError::Invalid(format!(
            "cannot set `{key_path}`: list items are not created"
        )));
    };
    let key = serde_json::to_string(key).expect("a string renders");
    match members.last() {
        Some(lastm) => {
            let colon = old[lastm.key_end..lastm.value.start].to_string();
            let multi_line = old[obj.start..members[0].key_start].contains('\n');
            let (sep, indent) = if multi_line {
                let indent = line_indent(old, lastm.key_start);
                (format!(",{nl}{indent}"), indent.to_string())
            } else {
                let sep = match members.get(1) {
                    Some(second) => old[members[0].value.end..second.key_start].to_string(),
                    None => ", ".to_string(),
                };
                (sep, String::new())
            };
            let style = JsonStyle {
                nl,
                unit: if multi_line { unit } else { None },
                colon: colon.clone(),
            };
            let rendered = render_json(&nested, &style, &indent);
            let at = lastm.value.end;
            Ok(format!(
                "{}{sep}{key}{colon}{rendered}{}",
                &old[..at],
                &old[at..]
            ))
        }
        None => {
            let base = line_indent(old, obj.start).to_string();
            let replacement = match &unit {
                Some(u) => {
                    let inner = format!("{base}{u}");
                    let style = JsonStyle {
                        nl,
                        unit: unit.clone(),
                        colon: ": ".into(),
                    };
                    format!(
                        "{{{nl}{inner}{key}: {}{nl}{base}}}",
                        render_json(&nested, &style, &inner)
                    )
                }
                None => {
                    let style = JsonStyle {
                        nl,
                        unit: None,
                        colon: ": ".into(),
                    };
                    format!("{{{key}: {}}}", render_json(&nested, &style, ""))
                }
            };
            Ok(format!(
                "{}{replacement}{}",
                &old[..obj.start],
                &old[obj.end..]
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use similar::{ChangeTag, TextDiff};

    /// (lines removed, lines added) between two texts.
    fn line_diff(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
        let diff = TextDiff::from_lines(old, new);
        let mut removed = Vec::new();
        let mut added = Vec::new();
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Delete => removed.push(change.value().to_string()),
                ChangeTag::Insert => added.push(change.value().to_string()),
                ChangeTag::Equal => {}
            }
        }
        (removed, added)
    }

    fn expect_set(old: &str, format: ConfigFormat, path: &str, value: Value) -> String {
        let new = config_set(old, format, path, &value).unwrap();
        assert_eq!(config_get(&new, format, path), Some(value.clone()), "{new}");
        assert_eq!(
            config_set(&new, format, path, &value).unwrap(),
            new,
            "not idempotent"
        );
        new
    }

    const YAML: &str = "\
# ResNet-50 on ImageNet, 8x H200
seed: 42
model:
  name: resnet50   # torchvision
  pretrained: false
data:
  root: /mnt/imagenet
  # DataLoader settings
  batch_size: 256
  num_workers: 2          # TODO: raise
  pin_memory: false
  augment:
    - random_resized_crop
    - horizontal_flip
optim:
  name: \"sgd\"
  lr: 0.1
trainer:
  precision: bf16-mixed
  max_epochs: 90
";

    #[test]
    fn a_line_of_prose_with_a_colon_is_no_yaml_config() {
        // github.com/MIT-REALM/gcbfplus/issues/1 (corpus h95): JAX's message, one line
        let t = "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n";
        assert!(read_config(None, t).is_err());
        // a config whose keys are names still is one, beside a key with a space
        let (f, v) = read_config(None, "data:\n  num_workers: 2\nmy note: fine\n").unwrap();
        assert_eq!(
            (f, &v["data"]["num_workers"]),
            (ConfigFormat::Yaml, &json!(2))
        );
        // by its name, a file is read as what it says it is
        assert!(read_config(Some(Path::new("notes.yaml")), t).is_ok());
    }

    #[test]
    fn parses_key_paths() {
        assert_eq!(
            parse_key_path("a.b[0].c").unwrap(),
            vec![
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Index(0),
                Seg::Key("c".into())
            ]
        );
        assert_eq!(
            parse_key_path(r"env.a\.b").unwrap(),
            vec![Seg::Key("env".into()), Seg::Key("a.b".into())]
        );
        assert_eq!(parse_key_path("x[1][2]").unwrap().len(), 3);
        for bad in ["", "a..b", "a.", "[0]", "a[x]", "a[0]b", "a\\"] {
            let err = parse_key_path(bad).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("key path `{bad}` is not valid")),
                "{err}"
            );
        }
        assert_eq!(
            path_text(&parse_key_path(r"a\.b[3].c").unwrap()),
            r"a\.b[3].c"
        );
    }

    #[test]
    fn yaml_scalar_replace_changes_one_line() {
        let new = expect_set(YAML, ConfigFormat::Yaml, "data.num_workers", json!(8));
        let (removed, added) = line_diff(YAML, &new);
        assert_eq!(removed, vec!["  num_workers: 2          # TODO: raise\n"]);
        assert_eq!(added, vec!["  num_workers: 8          # TODO: raise\n"]);
        let reparsed: Value = serde_yaml::from_str(&new).unwrap();
        let mut expected: Value = serde_yaml::from_str(YAML).unwrap();
        expected["data"]["num_workers"] = json!(8);
        assert_eq!(reparsed, expected);
    }

    #[test]
    fn yaml_keeps_quote_style_and_types() {
        let new = expect_set(YAML, ConfigFormat::Yaml, "optim.name", json!("adamw"));
        assert_eq!(
            line_diff(YAML, &new),
            (
                vec!["  name: \"sgd\"\n".into()],
                vec!["  name: \"adamw\"\n".into()]
            )
        );
        let new = expect_set(YAML, ConfigFormat::Yaml, "model.name", json!("8"));
        assert!(new.contains("  name: '8'   # torchvision\n"), "{new}");
        let new = expect_set(YAML, ConfigFormat::Yaml, "optim.lr", json!(1.0));
        assert!(new.contains("  lr: 1.0\n"), "{new}");
        expect_set(
            YAML,
            ConfigFormat::Yaml,
            "data.augment[1]",
            json!("color_jitter"),
        );
    }

    #[test]
    fn yaml_missing_key_is_inserted_once() {
        let new = expect_set(
            YAML,
            ConfigFormat::Yaml,
            "data.persistent_workers",
            json!(true),
        );
        let (removed, added) = line_diff(YAML, &new);
        assert!(removed.is_empty(), "{removed:?}");
        assert_eq!(added, vec!["  persistent_workers: true\n"]);
        let new = expect_set(
            YAML,
            ConfigFormat::Yaml,
            "env.PYTORCH_CUDA_ALLOC_CONF",
            json!("expandable_segments:True"),
        );
        let (removed, added) = line_diff(YAML, &new);
        assert!(removed.is_empty(), "{removed:?}");
        assert_eq!(
            added,
            vec![
                "env:\n",
                "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"
            ]
        );
    }

    #[test]
    fn yaml_crlf_no_final_newline_and_empty() {
        let old = "data:\r\n  num_workers: 2\r\n  pin_memory: false";
        let new = expect_set(old, ConfigFormat::Yaml, "data.num_workers", json!(6));
        assert_eq!(new, "data:\r\n  num_workers: 6\r\n  pin_memory: false");
        let new = expect_set("", ConfigFormat::Yaml, "data.num_workers", json!(4));
        assert_eq!(
            config_get(&new, ConfigFormat::Yaml, "data.num_workers"),
            Some(json!(4))
        );
    }

    #[test]
    fn yaml_errors_name_the_path() {
        let err = config_set(YAML, ConfigFormat::Yaml, "seed.x", &json!(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot set `seed.x`: `seed` is a number, not a mapping"
        );
        let err = config_set(YAML, ConfigFormat::Yaml, "data.augment[5]", &json!(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot set `data.augment[5]`: `data.augment` has 2 items, no index 5"
        );
        let err = config_set("a: [1, 2\n", ConfigFormat::Yaml, "a", &json!(1)).unwrap_err();
        assert!(err.to_string().starts_with("not valid YAML"), "{err}");
    }

    const TOML: &str = "\
# fine-tune config
title = \"llama-ft\"

[data]
path = \"/mnt/ds\"   # shards
num_workers = 2 # low
pin_memory = false

[optim]
lr = 3e-4

[[loaders]]
name = \"train\"
workers = 2

[[loaders]]
name = \"val\"
workers = 1
";

    #[test]
    fn toml_scalar_replace_keeps_comment() {
        let new = expect_set(TOML, ConfigFormat::Toml, "data.num_workers", json!(8));
        assert_eq!(
            line_diff(TOML, &new),
            (
                vec!["num_workers = 2 # low\n".into()],
                vec!["num_workers = 8 # low\n".into()]
            )
        );
        let doc: toml_edit::DocumentMut = new.parse().unwrap();
        assert_eq!(doc["data"]["num_workers"].as_integer(), Some(8));
        assert_eq!(doc["data"]["path"].as_str(), Some("/mnt/ds"));
        let new = expect_set(TOML, ConfigFormat::Toml, "loaders[1].workers", json!(4));
        assert_eq!(
            line_diff(TOML, &new),
            (vec!["workers = 1\n".into()], vec!["workers = 4\n".into()])
        );
    }

    #[test]
    fn toml_missing_key_and_table() {
        let new = expect_set(
            TOML,
            ConfigFormat::Toml,
            "data.persistent_workers",
            json!(true),
        );
        let (removed, added) = line_diff(TOML, &new);
        assert!(removed.is_empty(), "{removed:?}");
        assert_eq!(added, vec!["persistent_workers = true\n"]);
        assert!(
            new.contains("pin_memory = false\npersistent_workers = true\n\n[optim]"),
            "{new}"
        );
        let new = expect_set(TOML, ConfigFormat::Toml, "trainer.devices", json!(4));
        let doc: toml_edit::DocumentMut = new.parse().unwrap();
        assert_eq!(doc["trainer"]["devices"].as_integer(), Some(4));
        assert!(new.starts_with(TOML), "{new}");
        let err = config_set(TOML, ConfigFormat::Toml, "data.x", &json!(null)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot set `data.x` to null: TOML has no null"
        );
    }

    const JSON: &str = r#"{
  "train_batch_size": 256,
  "bf16": {
    "enabled": false
  },
  "zero_optimization": {
    "stage": 2,
    "reduce_bucket_size": 500000000
  },
  "data": {"num_workers": 2, "pin_memory": false},
  "empty": {}
}
"#;

    #[test]
    fn json_scalar_replace_changes_one_line() {
        let new = expect_set(JSON, ConfigFormat::Json, "bf16.enabled", json!(true));
        assert_eq!(
            line_diff(JSON, &new),
            (
                vec!["    \"enabled\": false\n".into()],
                vec!["    \"enabled\": true\n".into()]
            )
        );
        let new = expect_set(JSON, ConfigFormat::Json, "data.num_workers", json!(8));
        assert_eq!(
            line_diff(JSON, &new).1,
            vec!["  \"data\": {\"num_workers\": 8, \"pin_memory\": false},\n"]
        );
        let reparsed: Value = serde_json::from_str(&new).unwrap();
        let mut expected: Value = serde_json::from_str(JSON).unwrap();
        expected["data"]["num_workers"] = json!(8);
        assert_eq!(reparsed, expected);
    }

    #[test]
    fn json_missing_key_goes_after_the_last_member() {
        let new = expect_set(
            JSON,
            ConfigFormat::Json,
            "zero_optimization.overlap_comm",
            json!(true),
        );
        let (removed, added) = line_diff(JSON, &new);
        assert_eq!(removed, vec!["    \"reduce_bucket_size\": 500000000\n"]);
        assert_eq!(
            added,
            vec![
                "    \"reduce_bucket_size\": 500000000,\n",
                "    \"overlap_comm\": true\n"
            ]
        );
        let new = expect_set(
            JSON,
            ConfigFormat::Json,
            "data.persistent_workers",
            json!(true),
        );
        assert!(
            new.contains(
                "{\"num_workers\": 2, \"pin_memory\": false, \"persistent_workers\": true}"
            ),
            "{new}"
        );
        let new = expect_set(
            JSON,
            ConfigFormat::Json,
            "comms_logger.enabled",
            json!(true),
        );
        assert!(
            new.ends_with(
                "  \"empty\": {},\n  \"comms_logger\": {\n    \"enabled\": true\n  }\n}\n"
            ),
            "{new}"
        );
        let new = expect_set(JSON, ConfigFormat::Json, "empty.a", json!([1, 2]));
        assert!(
            new.contains("  \"empty\": {\n    \"a\": [\n      1,\n      2\n    ]\n  }\n"),
            "{new}"
        );
    }

    #[test]
    fn json_crlf_minified_and_errors() {
        let old = "{\r\n\t\"a\": 1\r\n}";
        let new = expect_set(old, ConfigFormat::Json, "b", json!("x"));
        assert_eq!(new, "{\r\n\t\"a\": 1,\r\n\t\"b\": \"x\"\r\n}");
        let new = expect_set("{\"a\":{\"b\":1}}", ConfigFormat::Json, "a.c", json!(2));
        assert_eq!(new, "{\"a\":{\"b\":1, \"c\":2}}");
        // JSONC's trailing comma is kept; a file that does not parse is refused.
        let new = expect_set("{\"a\": 1,}", ConfigFormat::Json, "a", json!(2));
        assert_eq!(new, "{\"a\": 2,}");
        let err = config_set("{\"a\": 1", ConfigFormat::Json, "a", &json!(2)).unwrap_err();
        assert!(err.to_string().starts_with("not valid JSON"), "{err}");
        let err = config_set("[1]", ConfigFormat::Json, "a", &json!(2)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot set `a`: the document root is a list, not a mapping"
        );
        assert_eq!(
            config_get("{\"a\": 1, \"a\": 2}", ConfigFormat::Json, "a"),
            Some(json!(2))
        );
        let new = expect_set("{\"a\": 1, \"a\": 2}", ConfigFormat::Json, "a", json!(3));
        assert_eq!(new, "{\"a\": 1, \"a\": 3}");
    }

    #[test]
    fn jsonc_edits_keep_comments() {
        let old = "{\n  // DataLoader\n  \"data\": {\n    \"num_workers\": 2, // low\n    \"pin_memory\": false,\n  },\n}\n";
        let new = expect_set(old, ConfigFormat::Json, "data.num_workers", json!(8));
        assert_eq!(
            new,
            old.replace("\"num_workers\": 2,", "\"num_workers\": 8,")
        );
        let new = expect_set(
            old,
            ConfigFormat::Json,
            "data.persistent_workers",
            json!(true),
        );
        assert!(
            new.contains("// DataLoader") && new.contains("// low"),
            "{new}"
        );
        let (removed, added) = line_diff(old, &new);
        assert!(removed.is_empty(), "{removed:?}");
        assert_eq!(added, vec!["    \"persistent_workers\": true,\n"]);
    }

    #[test]
    fn format_from_path() {
        assert_eq!(
            ConfigFormat::from_path(Path::new("/job/train.yml")),
            Some(ConfigFormat::Yaml)
        );
        assert_eq!(
            ConfigFormat::from_path(Path::new("ds_config.json")),
            Some(ConfigFormat::Json)
        );
        assert_eq!(
            ConfigFormat::from_path(Path::new("pyproject.toml")),
            Some(ConfigFormat::Toml)
        );
        assert_eq!(ConfigFormat::from_path(Path::new("train.cfg")), None);
    }

    #[test]
    fn content_decides_when_the_name_does_not() {
        let cases = [
            (YAML, ConfigFormat::Yaml),
            (TOML, ConfigFormat::Toml),
            (JSON, ConfigFormat::Json),
            (
                "// DeepSpeed\n{\"a\": 1, /* x */ \"b\": [1, 2,],}\n",
                ConfigFormat::Json,
            ),
            ("[trainer]\ndevices = 8\n", ConfigFormat::Toml),
        ];
        for (text, want) in cases {
            assert_eq!(ConfigFormat::from_content(text), Some(want), "{text}");
            let (got, _) = read_config(Some(Path::new("/job/pasted.txt")), text).unwrap();
            assert_eq!(got, want);
            let (got, _) = read_config(None, text).unwrap();
            assert_eq!(got, want);
        }
        // Prose reads as a YAML string and a list is no config: neither is detected.
        assert_eq!(ConfigFormat::from_content("just some words\n"), None);
        assert_eq!(ConfigFormat::from_content("- a\n- b\n"), None);
        assert_eq!(ConfigFormat::from_content("[1, 2]"), None);
        assert_eq!(
            read_config(Some(Path::new("notes.cfg")), "just some words\n"),
            Err(ReadError::UnknownFormat)
        );
        // The name wins over the content: a .yaml file is read as YAML and its error shown.
        let err = read_config(Some(Path::new("t.yaml")), "a: [1\n").unwrap_err();
        assert!(err.to_string().starts_with("invalid YAML: "), "{err}");
        assert_eq!(
            ConfigFormat::detect(Some(Path::new("x.JSONC")), ""),
            Some(ConfigFormat::Json)
        );
    }

    #[test]
    fn jsonc_reads_with_comments_and_errors_name_the_line() {
        let text = "{\n  // workers\n  \"data\": {\"num_workers\": 2,},\n}\n";
        let v = read_as(text, ConfigFormat::Json).unwrap();
        assert_eq!(v, json!({"data": {"num_workers": 2}}));
        let err = read_as("{\n  \"a\": ,\n}", ConfigFormat::Json).unwrap_err();
        assert!(err.to_string().starts_with("invalid JSON: "), "{err}");
        assert!(err.to_string().contains("line 2"), "{err}");
        // JSONC, not JSON5: single quotes and bare keys are still errors.
        assert!(read_as("{'a': 1}", ConfigFormat::Json).is_err());
        assert!(read_as("{a: 1}", ConfigFormat::Json).is_err());
    }

    #[test]
    fn one_toml_conversion() {
        let v =
            toml_to_json("when = 1979-05-27T07:32:00Z\n[[loaders]]\nw = 1\n[[loaders]]\nw = 2\n")
                .unwrap();
        assert_eq!(
            v,
            json!({"when": "1979-05-27T07:32:00Z", "loaders": [{"w": 1}, {"w": 2}]})
        );
        assert!(
            toml_to_json("a = ")
                .unwrap_err()
                .to_string()
                .contains("line 1")
        );
    }

    #[test]
    fn the_config_probe_reads_what_config_set_writes() {
        use crate::probes::config::{get_path, parse_config};
        // A pasted TOML config named .cfg, and a key with a dot in it.
        let old = "[env]\n\"NCCL.DEBUG\" = \"WARN\"\n[data]\nnum_workers = 2 # low\n";
        let format = ConfigFormat::detect(Some(Path::new("job.cfg")), old).unwrap();
        let new = config_set(old, format, r"env.NCCL\.DEBUG", &json!("INFO")).unwrap();
        let new = config_set(&new, format, "data.num_workers", &json!(8)).unwrap();
        assert_eq!(
            new,
            "[env]\n\"NCCL.DEBUG\" = \"INFO\"\n[data]\nnum_workers = 8 # low\n"
        );
        let (name, doc) = parse_config("/job/job.cfg", &new).unwrap();
        assert_eq!(name, "toml");
        assert_eq!(get_path(&doc, r"env.NCCL\.DEBUG"), Some(&json!("INFO")));
        assert_eq!(get_path(&doc, "data.num_workers"), Some(&json!(8)));
        assert_eq!(get_path(&doc, "env.NCCL.DEBUG"), None);
        let err = parse_config("/job/notes.txt", "hello\n").unwrap_err();
        assert_eq!(err.error, super::ReadError::UnknownFormat);
        assert!(
            err.to_string()
                .starts_with("/job/notes.txt: cannot tell the format"),
            "{err}"
        );
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            "[ -~]{0,10}".prop_map(Value::from),
            (-1000i32..1000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn set_then_get_in_every_format(value in scalar(), path in "(data\\.num_workers|data\\.new_key|newtop\\.x)") {
            for (text, format) in [(YAML, ConfigFormat::Yaml), (TOML, ConfigFormat::Toml), (JSON, ConfigFormat::Json)] {
                let new = config_set(text, format, &path, &value).unwrap();
                prop_assert_eq!(config_get(&new, format, &path), Some(value.clone()));
                prop_assert_eq!(config_set(&new, format, &path, &value).unwrap(), new.clone());
                let (removed, _) = line_diff(text, &new);
                prop_assert!(removed.len() <= 1, "{:?}", removed);
            }
        }
    }
}
