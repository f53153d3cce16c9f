//! `env`: the environment a training job sees — the running process's (`--pid`), an env file
//! it is launched with (`--env-file`), or gpufix's own, which a job started from this shell
//! inherits.

use super::{ProbeCtx, ProbeKind, ProbeOutcome, param_str};
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

pub struct Env;

/// `/proc/PID/environ`: NUL-separated `KEY=VALUE` entries.
pub fn parse_environ(bytes: &[u8]) -> IndexMap<String, String> {
    bytes
        .split(|b| *b == 0)
        .filter_map(|e| {
            let s = String::from_utf8_lossy(e);
            let (k, v) = s.split_once('=')?;
            (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// Parse an environment file in any of the forms jobs are launched with: dotenv
/// (`KEY=value`, quoted values, `# comments`), shell (`export KEY=value`), `/etc/environment`,
/// and systemd (`Environment=KEY=value "KEY2=value 2"` and `EnvironmentFile` style lines).
/// Later assignments win. Lines that are none of these are skipped.
pub fn parse_env_file(text: &str) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') || t.starts_with('[') {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Environment=") {
            // systemd: whitespace-separated words, each optionally quoted as a whole.
            for word in split_words(rest) {
                if let Some((k, v)) = word.split_once('=') {
                    if valid_key(k) {
                        out.insert(k.to_string(), v.to_string());
                    }
                }
            }
            continue;
        }
        let t = t.strip_prefix("export ").map(str::trim_start).unwrap_or(t);
        let Some((k, v)) = t.split_once('=') else {
            continue;
        };
        let k = k.trim();
        if !valid_key(k) {
            continue;
        }
        out.insert(k.to_string(), unquote(v.trim()));
    }
    out
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// A value as a shell or dotenv loader would read it: quotes removed, `\"` and `\n` in double
/// quotes, no escapes in single quotes, and an unquoted ` # comment` dropped.
fn unquote(v: &str) -> String {
    if let Some(inner) = v.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(o) => out.push(o),
                    None => {}
                },
                c => out.push(c),
            }
        }
        return out;
    }
    if let Some(inner) = v.strip_prefix('\'') {
        return inner.split('\'').next().unwrap_or("").to_string();
    }
    match v.find(" #") {
        Some(i) => v[..i].trim_end().to_string(),
        None => v.to_string(),
    }
}

/// systemd's word splitting for `Environment=`: spaces separate, double or single quotes group.
fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

fn vars_value(vars: impl IntoIterator<Item = (String, String)>) -> Value {
    Value::Object(
        vars.into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    )
}

/// Parameters of the `env` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvParams {
    /// Whose environment: `auto` is --pid's process, else --env-file, else gpufix's own.
    #[serde(default)]
    pub from: EnvFrom,
}

/// Where the `env` probe reads variables.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EnvFrom {
    #[default]
    Auto,
    Process,
    EnvFile,
    #[serde(rename = "self")]
    Own,
}

impl ProbeKind for Env {
    fn name(&self) -> &'static str {
        "env"
    }
    fn doc(&self) -> &'static str {
        "The environment a job sees: the process's (--pid), an env file (--env-file), or gpufix's own."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "source",
                "`process PID`, `env-file PATH` or `gpufix environment`",
            ),
            (
                "vars",
                "name -> value; test a variable with `'X' in env.vars` or `env.vars.X is defined`",
            ),
        ]
    }
    fn params(&self) -> super::ParamsDecl {
        super::ParamsDecl::of::<EnvParams>()
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        let from = param_str(params, "from").unwrap_or("auto");
        let from = match from {
            "auto" if ctx.inputs.pid.is_some() => "process",
            "auto" if ctx.inputs.env_file.is_some() => "env-file",
            "auto" => "self",
            other => other,
        };
        match from {
            "process" => {
                let Some(pid) = ctx.inputs.pid else {
                    return ProbeOutcome::NotApplicable("needs --pid".into());
                };
                let path = format!("/proc/{pid}/environ");
                match ctx.host.read_file(&path) {
                    Ok(b) => ProbeOutcome::Value(json!({
                        "source": format!("process {pid}"),
                        "vars": vars_value(parse_environ(&b)),
                    })),
                    Err(e) => ProbeOutcome::Unknown(format!("cannot read `{path}`: {e}")),
                }
            }
            "env-file" => {
                let Some(file) = &ctx.inputs.env_file else {
                    return ProbeOutcome::NotApplicable("needs --env-file".into());
                };
                // --env-file is this machine's file as given, never mapped under --root
                let path = file.to_string_lossy();
                match std::fs::read(file) {
                    Ok(b) => ProbeOutcome::Value(json!({
                        "source": format!("env-file {path}"),
                        "vars": vars_value(parse_env_file(&String::from_utf8_lossy(&b))),
                    })),
                    Err(e) => ProbeOutcome::Unknown(format!("cannot read `{path}`: {e}")),
                }
            }
            _ if !ctx.host.has_env() => ProbeOutcome::Unknown(format!(
                "the job's environment is {} (give --pid or --env-file)",
                crate::host::NOT_IN_EVIDENCE
            )),
            _ => ProbeOutcome::Value(json!({
                "source": "gpufix environment",
                "vars": vars_value(ctx.host.env()),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};
    use std::collections::BTreeMap;
    use std::time::Duration;

    #[test]
    fn env_file_forms() {
        let text = "# comment\n\
            CUDA_LAUNCH_BLOCKING=1\n\
            export NCCL_IB_DISABLE=\"1\"\n\
            PATH='/usr/bin:$HOME'\n\
            MSG=\"a \\\"quoted\\\" word\"\n\
            PLAIN=value # trailing comment\n\
            Environment=A=1 \"B=two words\" 'C=3'\n\
            [Service]\n\
            not a line\n\
            1BAD=x\n\
            CUDA_LAUNCH_BLOCKING=0\n";
        let v = parse_env_file(text);
        assert_eq!(v["CUDA_LAUNCH_BLOCKING"], "0");
        assert_eq!(v["NCCL_IB_DISABLE"], "1");
        assert_eq!(v["PATH"], "/usr/bin:$HOME");
        assert_eq!(v["MSG"], "a \"quoted\" word");
        assert_eq!(v["PLAIN"], "value");
        assert_eq!(v["A"], "1");
        assert_eq!(v["B"], "two words");
        assert_eq!(v["C"], "3");
        assert!(!v.contains_key("1BAD"));
        assert_eq!(v.len(), 8);
    }

    #[test]
    fn environ_is_nul_separated() {
        let v = parse_environ(b"A=1\0B=x=y\0\0C=\0");
        assert_eq!(v["B"], "x=y");
        assert_eq!(v["C"], "");
        assert_eq!(v.len(), 3);
    }

    #[test]
    fn sources_in_order_of_preference() {
        let mut h = SnapshotHost::empty();
        h.set_file("/proc/42/environ", "CUDA_LAUNCH_BLOCKING=1\0");
        let dir = tempfile::tempdir().unwrap();
        let env_file = dir.path().join("job.env");
        std::fs::write(&env_file, "NCCL_P2P_DISABLE=1\n").unwrap();
        h.set_env(BTreeMap::from([("HOME".to_string(), "/root".to_string())]));
        let run = |i: &Inputs, p: Value| run_with(&Env, &h, p, i, Duration::ZERO);
        let both = Inputs {
            pid: Some(42),
            env_file: Some(env_file.clone()),
            ..Default::default()
        };
        let v = value_of(run(&both, json!({})));
        assert_eq!(v["source"], json!("process 42"));
        assert_eq!(v["vars"]["CUDA_LAUNCH_BLOCKING"], json!("1"));
        let v = value_of(run(&both, json!({"from": "env-file"})));
        assert_eq!(
            v["source"],
            json!(format!("env-file {}", env_file.display()))
        );
        assert_eq!(v["vars"]["NCCL_P2P_DISABLE"], json!("1"));
        let v = value_of(run(&Inputs::default(), json!({})));
        assert_eq!(
            v,
            json!({"source": "gpufix environment", "vars": {"HOME": "/root"}})
        );
        assert_eq!(
            run(&Inputs::default(), json!({"from": "process"})),
            ProbeOutcome::NotApplicable("needs --pid".into())
        );
        let gone = Inputs {
            pid: Some(7),
            ..Default::default()
        };
        assert_eq!(
            run(&gone, json!({})),
            ProbeOutcome::Unknown("cannot read `/proc/7/environ`: not in the snapshot".into())
        );
    }
}
