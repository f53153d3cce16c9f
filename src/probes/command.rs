//! `command`: run a program (an argv, never a shell) with a timeout and report what it printed.
//! A program that is not installed is a value (`found: false`) so a rule can say so; a timeout
//! is unknown, and the program's whole process group has been killed by then.

use super::{Probe, ProbeCtx, ProbeOutcome, check_regex, regex_fields};
use crate::host::recorded::NOT_RECORDED;
use serde_json::{Map, Value, json};
use std::io;
use std::time::Duration;

pub struct Command;

pub const DEFAULT_TIMEOUT_MS: u64 = 5000;

/// Parameters of the `command` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandParams {
    /// Program and arguments (an argv, never a shell).
    pub argv: Vec<String>,
    /// Kill the process group after this many milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// How to read stdout.
    #[serde(default)]
    pub parse: CommandParse,
    /// A regex applied to stdout; named groups become `captures`.
    #[serde(default)]
    pub regex: Option<String>,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

/// How the `command` probe reads stdout.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CommandParse {
    #[default]
    Text,
    Lines,
    Json,
}

impl Probe for Command {
    type Params = CommandParams;
    fn name(&self) -> &'static str {
        "command"
    }
    fn doc(&self) -> &'static str {
        "Runs a program (argv, no shell) under a timeout and reports its exit code and output."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("argv", "the argv run"),
            (
                "found",
                "false when the program is not installed (then no other fields but argv)",
            ),
            ("exit_code", "exit status (absent when a signal ended it)"),
            ("stdout", "standard output"),
            ("stderr", "standard error"),
            (
                "timed_out",
                "always false in a value: a timeout makes the probe unknown",
            ),
            ("lines", "with parse: lines, stdout's lines"),
            ("data", "with parse: json, stdout parsed"),
            ("matches", "with `regex`: matches in stdout"),
            (
                "captures",
                "with `regex`: named groups of the first match in stdout",
            ),
        ]
    }
    fn check(&self, params: &CommandParams) -> Vec<String> {
        let mut errs = Vec::new();
        // its type is checked against the declared parameters
        if params.argv.first().is_none_or(String::is_empty) {
            errs.push("probe parameter `argv` of `command` must not be empty".to_string())
        }
        if params.timeout_ms == 0 {
            errs.push("probe parameter `timeout_ms` of `command` must be positive".to_string());
        }
        errs.extend(check_regex("command", params.regex.as_deref()));
        errs
    }
    fn run(&self, params: &CommandParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let argv = &params.argv;
        let shown = argv.join(" ");
        // never longer than the probe deadline: an abandoned probe's group is killed with it
        let timeout = Duration::from_millis(params.timeout_ms).min(ctx.deadline);
        let out = match ctx.host.run(argv, timeout) {
            Ok(o) => o,
            Err(e) if e.kind() == io::ErrorKind::NotFound && e.to_string() == NOT_RECORDED => {
                return ProbeOutcome::Unknown(format!(
                    "`{shown}` was not recorded in this snapshot"
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return ProbeOutcome::Value(json!({ "argv": argv, "found": false }));
            }
            Err(e) => return ProbeOutcome::Unknown(format!("cannot run `{shown}`: {e}")),
        };
        if out.timed_out {
            return ProbeOutcome::Unknown(format!(
                "`{shown}` timed out after {}s; killed its process group",
                fmt_secs(timeout)
            ));
        }
        let mut m = Map::new();
        m.insert("argv".into(), json!(argv));
        m.insert("found".into(), json!(true));
        if let Some(c) = out.status {
            m.insert("exit_code".into(), json!(c));
        }
        m.insert("stdout".into(), json!(out.stdout));
        m.insert("stderr".into(), json!(out.stderr));
        m.insert("timed_out".into(), json!(false));
        match params.parse {
            CommandParse::Lines => {
                m.insert(
                    "lines".into(),
                    json!(out.stdout.lines().collect::<Vec<_>>()),
                );
            }
            CommandParse::Json => match serde_json::from_str::<Value>(&out.stdout) {
                Ok(v) => {
                    m.insert("data".into(), v);
                }
                Err(e) => {
                    return ProbeOutcome::Unknown(format!("`{shown}` printed invalid JSON: {e}"));
                }
            },
            CommandParse::Text => {}
        }
        if let Some(re) = params.regex.as_deref() {
            match regex::Regex::new(re) {
                Ok(re) => regex_fields(&re, &out.stdout, &mut m),
                Err(e) => return ProbeOutcome::Unknown(format!("bad regex `{re}`: {e}")),
            }
        }
        ProbeOutcome::Value(Value::Object(m))
    }
}

/// `5`, `0.5`, `2.25`: seconds without trailing zeros.
fn fmt_secs(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::CommandOutput;
    use crate::host::real::RealHost;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, check_params, run_with, value_of};

    fn out(stdout: &str, status: i32) -> CommandOutput {
        CommandOutput {
            status: Some(status),
            stdout: stdout.into(),
            stderr: String::new(),
            timed_out: false,
        }
    }

    #[test]
    fn regex_over_stdout() {
        let mut h = SnapshotHost::empty();
        h.set_command(
            &["nvcc", "--version"],
            out("Cuda compilation tools, release 13.0, V13.0.88\n", 0),
        );
        let v = value_of(run_with(
            &Command,
            &h,
            json!({"argv": ["nvcc", "--version"], "regex": "release (?P<version>[0-9.]+)"}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v["captures"]["version"], json!("13.0"));
        assert_eq!(v["exit_code"], json!(0));
        assert_eq!(v["found"], json!(true));
    }

    #[test]
    fn missing_program_is_a_value() {
        let mut h = SnapshotHost::empty();
        h.set_command_error(
            &["lsmod"],
            io::Error::new(io::ErrorKind::NotFound, "No such file or directory"),
        );
        let v = value_of(run_with(
            &Command,
            &h,
            json!({"argv": ["lsmod"]}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v, json!({"argv": ["lsmod"], "found": false}));
        // Live: a program that does not exist anywhere.
        let v = value_of(run_with(
            &Command,
            &RealHost::new(None),
            json!({"argv": ["gpufix-absent-tool"]}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v["found"], json!(false));
        // A command the snapshot never ran is not a missing program.
        assert_eq!(
            run_with(
                &Command,
                &SnapshotHost::empty(),
                json!({"argv": ["nvcc", "--version"]}),
                &Inputs::default(),
                Duration::ZERO
            ),
            ProbeOutcome::Unknown("`nvcc --version` was not recorded in this snapshot".into())
        );
    }

    #[test]
    fn timeout_is_unknown() {
        let v = run_with(
            &Command,
            &RealHost::new(None),
            json!({"argv": ["sleep", "10"], "timeout_ms": 300}),
            &Inputs::default(),
            Duration::ZERO,
        );
        assert_eq!(
            v,
            ProbeOutcome::Unknown(
                "`sleep 10` timed out after 0.3s; killed its process group".into()
            )
        );
    }

    /// The probe context's deadline caps `timeout_ms`: the engine abandons the probe then, and
    /// the program's group must be dead by that time. It is the run's, not the process's.
    #[test]
    fn the_context_deadline_caps_the_timeout() {
        let params = json!({"argv": ["sleep", "10"], "timeout_ms": 5000});
        let inputs = Inputs::default();
        let ctx = ProbeCtx {
            host: &RealHost::new(None),
            inputs: &inputs,
            sample: Duration::ZERO,
            deadline: Duration::from_millis(200),
        };
        let started = std::time::Instant::now();
        let got = crate::probes::run_checked(&Command, params.as_object().unwrap(), &ctx);
        assert_eq!(
            got,
            ProbeOutcome::Unknown(
                "`sleep 10` timed out after 0.2s; killed its process group".into()
            )
        );
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn json_and_lines_parsing() {
        let mut h = SnapshotHost::empty();
        h.set_command(&["tool", "--json"], out("{\"gpus\": 8}", 0));
        h.set_command(&["tool", "--bad"], out("not json", 1));
        let i = Inputs::default();
        let v = value_of(run_with(
            &Command,
            &h,
            json!({"argv": ["tool", "--json"], "parse": "json"}),
            &i,
            Duration::ZERO,
        ));
        assert_eq!(v["data"]["gpus"], json!(8));
        let ProbeOutcome::Unknown(m) = run_with(
            &Command,
            &h,
            json!({"argv": ["tool", "--bad"], "parse": "json"}),
            &i,
            Duration::ZERO,
        ) else {
            panic!()
        };
        assert!(m.starts_with("`tool --bad` printed invalid JSON"), "{m}");
        let v = value_of(run_with(
            &Command,
            &h,
            json!({"argv": ["tool", "--bad"], "parse": "lines"}),
            &i,
            Duration::ZERO,
        ));
        assert_eq!(v["lines"], json!(["not json"]));
        assert_eq!(v["exit_code"], json!(1));
    }

    #[test]
    fn argv_must_be_strings() {
        for p in [json!({"argv": []}), json!({"argv": ["a", 1]})] {
            assert_eq!(
                check_params(&Command, p.as_object().unwrap()).len(),
                1,
                "{p}"
            );
        }
    }
}
