//! `config`: the job's training config (`--config`, YAML, JSON or TOML), with the settings
//! rules ask for found by candidate key paths (`data.num_workers`, `dataloader.num_workers`, …).

use super::{ProbeCtx, ProbeKind, ProbeOutcome};
use serde_json::{Map, Value, json};

pub struct Config;

/// The value at a key path (`a.b[0].c`, `\.` for a dot inside a key) in a parsed config: the
/// one key-path syntax of [`crate::formats::keypath`], which `config.set` edits by.
pub fn get_path<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    crate::formats::keypath::lookup(v, path)
}

/// Reads a training config by [`crate::formats::config::read_config`]: the format from the
/// extension, else from the content (JSON/JSONC, TOML, YAML). Returns the format's name and the
/// document; the error names the file.
pub fn parse_config(path: &str, text: &str) -> Result<(&'static str, Value), String> {
    crate::formats::config::read_config(Some(std::path::Path::new(path)), text)
        .map(|(format, v)| (format.id(), v))
        .map_err(|e| format!("{path}: {e}"))
}

/// A parsed TOML item as JSON: [`crate::formats::config::toml_item_to_json`], the one
/// TOML→JSON conversion.
pub fn toml_to_json(item: &toml_edit::Item) -> Value {
    crate::formats::config::toml_item_to_json(item)
}

/// Parameters of the `config` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigParams {
    /// NAME: candidate key paths (one path or a list); the first present gives `values.NAME`.
    #[serde(default)]
    pub keys: Option<indexmap::IndexMap<String, KeyPaths>>,
    /// For Python sources: named captures of the first match.
    #[serde(default)]
    pub regex: Option<String>,
}

/// One key path, or candidates tried in order.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum KeyPaths {
    One(String),
    Candidates(Vec<String>),
}

impl ProbeKind for Config {
    fn name(&self) -> &'static str {
        "config"
    }
    fn doc(&self) -> &'static str {
        "the training config given with --config, and settings found by candidate key paths"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("path", "the config file"),
            ("format", "yaml, json or toml"),
            ("data", "the whole parsed config"),
            (
                "values.NAME",
                "the value of the first candidate key path of NAME present in the file",
            ),
            (
                "key_paths.NAME",
                "which key path that was (what config.set edits)",
            ),
            (
                "captures.NAME",
                "for a .py config: named groups of `regex`'s first match",
            ),
        ]
    }
    fn params(&self) -> super::ParamsDecl {
        super::ParamsDecl::of::<ConfigParams>()
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        let Some(path) = &ctx.inputs.config else {
            return ProbeOutcome::NotApplicable("needs --config".into());
        };
        let shown = std::path::absolute(path)
            .unwrap_or_else(|_| path.clone())
            .display()
            .to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return ProbeOutcome::Unknown(format!("cannot read {shown}: {e}")),
        };
        if shown.ends_with(".py") {
            // Python source: no keys to read, but a regex can find a keyword argument
            let mut out = json!({"path": shown, "format": "python", "values": {}, "key_paths": {}});
            if let Some(re) = params.get("regex").and_then(Value::as_str) {
                match regex::Regex::new(re) {
                    Ok(re) => {
                        if let Some(c) = re.captures(&text) {
                            let caps: Map<String, Value> = re
                                .capture_names()
                                .flatten()
                                .filter_map(|n| {
                                    c.name(n).map(|m| (n.to_string(), json!(m.as_str())))
                                })
                                .collect();
                            out["captures"] = Value::Object(caps);
                        }
                    }
                    Err(e) => return ProbeOutcome::Unknown(format!("regex does not compile: {e}")),
                }
            }
            return ProbeOutcome::Value(out);
        }
        let (format, data) = match parse_config(&shown, &text) {
            Ok(x) => x,
            Err(e) => return ProbeOutcome::Unknown(e),
        };
        let mut values = Map::new();
        let mut key_paths = Map::new();
        if let Some(keys) = params.get("keys").and_then(Value::as_object) {
            for (name, cands) in keys {
                let cands: Vec<&str> = match cands {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if let Some((p, v)) = cands
                    .iter()
                    .find_map(|c| get_path(&data, c).map(|v| (*c, v)))
                {
                    values.insert(name.clone(), v.clone());
                    key_paths.insert(name.clone(), json!(p));
                }
            }
        }
        ProbeOutcome::Value(
            json!({"path": shown, "format": format, "data": data, "values": values, "key_paths": key_paths}),
        )
    }
}
