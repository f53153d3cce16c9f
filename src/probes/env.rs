//! `env`: the environment a training job sees — the running process's (`--pid`), an env file
//! it is launched with (`--env-file`), or gpufix's own, which a job started from this shell
//! inherits.

use super::{ProbeCtx, ProbeKind, ProbeOutcome, param_str};
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

pub struct Env;

pub use crate::formats::env::parse_environ;

/// Parse an environment file in any of the forms jobs are launched with: dotenv
/// (`KEY=value`, quoted values, `# comments`), shell (`export KEY=value`), `/etc/environment`,
/// and systemd (`Environment=KEY=value "KEY2=value 2"` lines in a drop-in). The form comes
/// from the content; later assignments win. This is [`crate::formats::env::read_vars`], the
/// reader the `env.set` fix checks its own edit with.
pub fn parse_env_file(text: &str) -> IndexMap<String, String> {
    crate::formats::env::read_vars(None, text)
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
                        "vars": vars_value(crate::formats::env::read_vars(
                            Some(file),
                            &String::from_utf8_lossy(&b),
                        )),
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
        // A dotenv or shell file: `KEY=value` lines, `Environment=` is not special there.
        let text = "# comment\n\
            CUDA_LAUNCH_BLOCKING=1\n\
            export NCCL_IB_DISABLE=\"1\"\n\
            PATH='/usr/bin:$HOME'\n\
            MSG=\"a \\\"quoted\\\" word\"\n\
            PLAIN=value # trailing comment\n\
            not a line\n\
            1BAD=x\n\
            CUDA_LAUNCH_BLOCKING=0\n";
        let v = parse_env_file(text);
        assert_eq!(v["CUDA_LAUNCH_BLOCKING"], "0");
        assert_eq!(v["NCCL_IB_DISABLE"], "1");
        assert_eq!(v["PATH"], "/usr/bin:$HOME");
        assert_eq!(v["MSG"], "a \"quoted\" word");
        assert_eq!(v["PLAIN"], "value");
        assert!(!v.contains_key("1BAD"));
        assert_eq!(v.len(), 5);
        // A systemd drop-in: only `Environment=` lines set variables (`ExecStart=` does not).
        let dropin = "[Service]\n\
            Environment=A=1 \"B=two words\" 'C=3'\n\
            ExecStart=/usr/bin/train\n\
            Environment=D=4\n";
        let v = parse_env_file(dropin);
        assert_eq!(v["A"], "1");
        assert_eq!(v["B"], "two words");
        assert_eq!(v["C"], "3");
        assert_eq!(v["D"], "4");
        assert_eq!(v.len(), 4);
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
