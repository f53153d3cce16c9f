//! `file`: any file on the host, read as text, lines, YAML, JSON, TOML or an env file, with an
//! optional regex. Training configs (`--config`) and site files are read through it.

use super::env::parse_env_file;
use super::{Probe, ProbeCtx, ProbeOutcome, check_regex, regex_fields};
use crate::formats::config::{ConfigFormat, read_as};
use serde_json::{Map, Value, json};
use std::io;

pub struct File;

/// A TOML document as JSON (datetimes become their TOML text): the shared converter.
pub use crate::formats::config::toml_to_json;

/// Parse `text` as `how`; the error names the format and, where the parser says, the line.
pub fn parse_as(
    how: &str,
    text: &str,
) -> Result<(&'static str, Value), crate::formats::config::ReadError> {
    match how {
        "lines" => Ok(("lines", json!(text.lines().collect::<Vec<_>>()))),
        "yaml" | "json" | "toml" => {
            let format = ConfigFormat::from_name(how).expect("a config format name");
            read_as(text, format).map(|v| ("data", v))
        }
        "dotenv" => Ok((
            "vars",
            Value::Object(
                parse_env_file(text)
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            ),
        )),
        _ => Ok(("text", json!(text))),
    }
}

/// Parameters of the `file` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileParams {
    /// The file to read.
    pub path: String,
    /// How to read it.
    #[serde(default)]
    pub parse: FileParse,
    /// A regex applied to the raw content; named groups become `captures`.
    #[serde(default)]
    pub regex: Option<String>,
    /// A missing file gives `{exists: false}` instead of unknown.
    #[serde(default)]
    pub missing_ok: bool,
}

/// How the `file` probe reads a file.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileParse {
    #[default]
    Text,
    Lines,
    Yaml,
    Json,
    Toml,
    Dotenv,
}

impl FileParse {
    /// The name a playbook writes.
    pub fn name(&self) -> &'static str {
        match self {
            FileParse::Text => "text",
            FileParse::Lines => "lines",
            FileParse::Yaml => "yaml",
            FileParse::Json => "json",
            FileParse::Toml => "toml",
            FileParse::Dotenv => "dotenv",
        }
    }
}

impl Probe for File {
    type Params = FileParams;
    fn name(&self) -> &'static str {
        "file"
    }
    fn doc(&self) -> &'static str {
        "A file read as text, lines, YAML, JSON, TOML or env assignments, with an optional regex."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("path", "the path read"),
            (
                "exists",
                "false only with `missing_ok` when the file does not exist (no other fields then)",
            ),
            ("text", "with parse: text (the default), the whole content"),
            (
                "lines",
                "with parse: lines, the lines without their newlines",
            ),
            (
                "data",
                "with parse: yaml, json or toml, the parsed document",
            ),
            ("vars", "with parse: dotenv, name -> value"),
            (
                "matches",
                "with `regex`: how many times it matches the content",
            ),
            (
                "captures",
                "with `regex`: named groups of the first match (absent when none matched)",
            ),
        ]
    }
    fn check(&self, params: &FileParams) -> Vec<String> {
        check_regex("file", params.regex.as_deref())
            .into_iter()
            .collect()
    }
    fn run(&self, params: &FileParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let path = params.path.as_str();
        let mut out = Map::new();
        out.insert("path".into(), json!(path));
        let text = match ctx.host.read_file(path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == io::ErrorKind::NotFound && params.missing_ok => {
                out.insert("exists".into(), json!(false));
                return ProbeOutcome::Value(Value::Object(out));
            }
            Err(e) => return ProbeOutcome::Unknown(format!("cannot read `{path}`: {e}")),
        };
        out.insert("exists".into(), json!(true));
        match parse_as(params.parse.name(), &text) {
            Ok((key, v)) => {
                out.insert(key.into(), v);
            }
            Err(e) => return ProbeOutcome::Unknown(format!("`{path}`: {e}")),
        }
        if let Some(re) = params.regex.as_deref() {
            match regex::Regex::new(re) {
                Ok(re) => regex_fields(&re, &text, &mut out),
                Err(e) => return ProbeOutcome::Unknown(format!("bad regex `{re}`: {e}")),
            }
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, check_params, run_with, value_of};
    use std::time::Duration;

    fn run(h: &SnapshotHost, p: Value) -> ProbeOutcome {
        run_with(&File, h, p, &Inputs::default(), Duration::ZERO)
    }

    fn host() -> SnapshotHost {
        let mut h = SnapshotHost::empty();
        h.set_file(
            "/train.yaml",
            "data:\n  num_workers: 0\n  pin_memory: false\n",
        );
        h.set_file(
            "/train.toml",
            "[data]\nnum_workers = 4\nwhen = 1979-05-27T07:32:00Z\n[[layers]]\nn = 1\n",
        );
        h.set_file("/bad.yaml", "a: 1\n  b: [\n");
        h.set_file("/bad.json", "{\"a\": 1,\n\"b\": }\n");
        h.set_file("/cuda/version.txt", "CUDA Version 12.4.131\n");
        h
    }

    #[test]
    fn parses_yaml_toml_and_lines() {
        let h = host();
        let v = value_of(run(&h, json!({"path": "/train.yaml", "parse": "yaml"})));
        assert_eq!(v["data"]["data"]["num_workers"], json!(0));
        assert_eq!(v["exists"], json!(true));
        let v = value_of(run(&h, json!({"path": "/train.toml", "parse": "toml"})));
        assert_eq!(v["data"]["data"]["num_workers"], json!(4));
        assert_eq!(v["data"]["data"]["when"], json!("1979-05-27T07:32:00Z"));
        assert_eq!(v["data"]["layers"][0]["n"], json!(1));
        let v = value_of(run(&h, json!({"path": "/train.yaml", "parse": "lines"})));
        assert_eq!(v["lines"][1], json!("  num_workers: 0"));
    }

    #[test]
    fn regex_named_captures() {
        let v = value_of(run(
            &host(),
            json!({"path": "/cuda/version.txt", "regex": "Version (?P<major>\\d+)\\.(?P<minor>\\d+)"}),
        ));
        assert_eq!(v["captures"], json!({"major": "12", "minor": "4"}));
        assert_eq!(v["matches"], json!(1));
        assert_eq!(v["text"], json!("CUDA Version 12.4.131\n"));
        let v = value_of(run(
            &host(),
            json!({"path": "/cuda/version.txt", "regex": "nope"}),
        ));
        assert_eq!(v["matches"], json!(0));
        assert!(v.get("captures").is_none());
    }

    #[test]
    fn missing_files() {
        let h = host();
        let v = value_of(run(
            &h,
            json!({"path": "/usr/local/cuda/version.json", "missing_ok": true}),
        ));
        assert_eq!(
            v,
            json!({"path": "/usr/local/cuda/version.json", "exists": false})
        );
        assert_eq!(
            run(&h, json!({"path": "/usr/local/cuda/version.json"})),
            ProbeOutcome::Unknown(
                "cannot read `/usr/local/cuda/version.json`: not in the snapshot".into()
            )
        );
    }

    #[test]
    fn parse_errors_are_unknown_with_the_line() {
        let h = host();
        let ProbeOutcome::Unknown(m) = run(&h, json!({"path": "/bad.yaml", "parse": "yaml"}))
        else {
            panic!()
        };
        assert!(
            m.starts_with("`/bad.yaml`: invalid YAML:") && m.contains("line 2"),
            "{m}"
        );
        let ProbeOutcome::Unknown(m) = run(&h, json!({"path": "/bad.json", "parse": "json"}))
        else {
            panic!()
        };
        assert!(m.contains("invalid JSON") && m.contains("line 2"), "{m}");
        let ProbeOutcome::Unknown(m) = run(&h, json!({"path": "/bad.yaml", "parse": "toml"}))
        else {
            panic!()
        };
        assert!(m.contains("invalid TOML") && m.contains("line 1"), "{m}");
    }

    #[test]
    fn bad_parameters_are_reported() {
        let p = json!({"path": "/x", "parse": "xml", "regex": "("});
        let errs = check_params(&File, p.as_object().unwrap());
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].contains("must be one of text, lines"));
        assert!(errs[1].contains("`regex`"));
    }
}
