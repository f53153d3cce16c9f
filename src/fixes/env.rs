//! `env.set` / `env.unset`: one variable in an env file, written in the file's own format
//! (dotenv, shell `export`, /etc/environment, systemd `Environment=`), or in a launch script
//! where it sets the variable.
//!
//! A shell file (a launch script given as `--config`, the script that started a `--pid` job,
//! an env file of `export` lines) is edited on the bash grammar's tree ([`shell`]): at the one
//! place that sets the variable — a command's prefix, an `export`/`declare -x` operand, an
//! `env` argument, or the one file the script sources that sets it — and nowhere else. Where that is not one exact edit (set in two places,
//! inside a quoted command, a line that holds more), or where the job has the variable from
//! an environment gpufix cannot see (the user's shell), the fix is left to the person with a
//! note that says where the value is set and the command line to start the job without it.

use super::edit::env as envedit;
use super::file::FileEdit;
use super::{FixCtx, scalar_param, str_param};
use crate::formats::shell;
use crate::formats::syntax::Refusal;
use serde_json::{Map, Value};

/// The file's dialect from its path and content: the same detection the `env` probe reads an
/// `--env-file` with, so the fix writes in the form the probe will read.
fn format_for(path: &str, old: &str) -> envedit::Format {
    envedit::detect_format(Some(std::path::Path::new(path)), old)
}

/// A shell file: named or written as one, or a launch script (a command line, a shebang).
fn is_shell(path: &str, old: &str) -> bool {
    match format_for(path, old) {
        envedit::Format::Shell => true,
        envedit::Format::Dotenv => {
            old.starts_with("#!")
                || crate::formats::job_text::detect(old)
                    == Some(crate::formats::job_text::JobText::Launcher)
        }
        _ => false,
    }
}

/// The refusal of a shell edit as a note, or None when the edit can be made.
fn refused<T>(path: &str, r: Result<T, Refusal>) -> Option<String> {
    match r {
        Err(Refusal::Unproven(why)) => Some(format!("{path}: {why}")),
        _ => None,
    }
}

/// The command that starts the `--pid` job without `name`: the launch script's shell line
/// (`bash run.sh`) when a shell among its parents runs one, else the job's own command line.
fn start_without(name: &str, cx: &FixCtx) -> Option<String> {
    let pid = cx.inputs.pid?;
    let argv = match crate::probes::config_sources::launching_shell(cx.host, pid) {
        Some((_, argv, _)) => argv,
        None => cx
            .host
            .read_file(&format!("/proc/{pid}/cmdline"))
            .ok()?
            .split(|c| *c == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    };
    let words: Vec<String> = argv.iter().map(|a| shell::quote(a, "")).collect();
    Some(format!("env -u {name} {}", words.join(" ")))
}

/// With `--pid` and no file that sets the variable: it came from the environment the job was
/// started in.
fn from_the_shell(name: &str, cx: &FixCtx, file: Option<&str>) -> Option<String> {
    let pid = cx.inputs.pid?;
    let cmd = start_without(name, cx)?;
    let where_ = match file {
        Some(f) => format!("the launch script {f} does not set it"),
        None => "no launch script gpufix can read started the job".into(),
    };
    Some(format!(
        "PID {pid} has {name} from the environment it was started in, which gpufix cannot see ({where_}): start the job without it: `{cmd}`"
    ))
}

/// No file to edit: no `file:` (or an empty one) and no `--env-file`, for a `--pid` job.
fn no_file(action: &Map<String, Value>, cx: &FixCtx) -> Option<String> {
    let file = action.get("file").and_then(Value::as_str).unwrap_or("");
    if !file.is_empty() || cx.inputs.env_file.is_some() {
        return None;
    }
    from_the_shell(action.get("name").and_then(Value::as_str)?, cx, None)
}

pub struct EnvSet;

impl FileEdit for EnvSet {
    fn name(&self) -> &'static str {
        "env.set"
    }
    fn path(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<String, String> {
        cx.input_file(action, "env_file")
    }
    fn edit(
        &self,
        path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        if is_shell(path, old) {
            return shell::set(
                old,
                str_param(action, "name")?,
                &scalar_param(action, "value")?,
            )
            .map_err(|e| e.to_string());
        }
        envedit::env_set(
            old,
            Some(format_for(path, old)),
            str_param(action, "name")?,
            &scalar_param(action, "value")?,
        )
        .map_err(|e| e.to_string())
    }
    fn unproven(
        &self,
        path: &str,
        old: &str,
        action: &Map<String, Value>,
        _cx: &FixCtx,
    ) -> Option<String> {
        if !is_shell(path, old) {
            return None;
        }
        let (name, value) = (
            action.get("name").and_then(Value::as_str)?,
            scalar_param(action, "value").ok()?,
        );
        refused(path, shell::set(old, name, &value))
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "set {}={} in {path}",
            action.get("name").and_then(Value::as_str).unwrap_or(""),
            scalar_param(action, "value").unwrap_or_default()
        )
    }
}

/// When a launch script does not set `name` itself but exactly one file it sources (`source
/// ./env.sh`, a path written out) does, that file: the place the value is set.
fn sourced_setter(script: &str, name: &str, cx: &FixCtx) -> Option<String> {
    let (text, _, _) = super::file::current(script, cx).ok()?;
    if !is_shell(script, &text) || !shell::sets(&text, name).ok()?.is_empty() {
        return None;
    }
    let dir = script.rsplit_once('/').map_or(".", |(d, _)| d);
    let setters: Vec<String> = shell::sourced(&text)
        .into_iter()
        .map(|(_, p)| {
            if p.starts_with('/') {
                p
            } else {
                format!("{dir}/{}", p.trim_start_matches("./"))
            }
        })
        .filter(|p| {
            super::file::current(p, cx)
                .ok()
                .and_then(|(t, exists, _)| exists.then(|| shell::sets(&t, name).ok()))
                .flatten()
                .is_some_and(|s| !s.is_empty())
        })
        .collect();
    match setters.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

pub struct EnvUnset;

impl FileEdit for EnvUnset {
    fn name(&self) -> &'static str {
        "env.unset"
    }
    fn path(&self, action: &Map<String, Value>, cx: &FixCtx) -> Result<String, String> {
        let file = cx.input_file(action, "env_file")?;
        let name = str_param(action, "name")?;
        Ok(sourced_setter(&file, name, cx).unwrap_or(file))
    }
    fn edit(
        &self,
        path: &str,
        old: &str,
        _exists: bool,
        action: &Map<String, Value>,
    ) -> Result<String, String> {
        if is_shell(path, old) {
            return shell::unset(old, str_param(action, "name")?).map_err(|e| e.to_string());
        }
        envedit::env_unset(old, Some(format_for(path, old)), str_param(action, "name")?)
            .map_err(|e| e.to_string())
    }
    fn left_to_you(&self, action: &Map<String, Value>, cx: &FixCtx) -> Option<String> {
        no_file(action, cx)
    }
    fn unproven(
        &self,
        path: &str,
        old: &str,
        action: &Map<String, Value>,
        cx: &FixCtx,
    ) -> Option<String> {
        if !is_shell(path, old) {
            return None;
        }
        let name = action.get("name").and_then(Value::as_str)?;
        match shell::unset(old, name) {
            // the launch script of a --pid job does not set it: the job's environment did
            Ok(new) if new == old => from_the_shell(name, cx, Some(path)),
            r => refused(path, r),
        }
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "unset {} in {path}",
            action.get("name").and_then(Value::as_str).unwrap_or("")
        )
    }
}

/// Parameters of `env.set`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetParams {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: super::spec::Scalar,
    /// The env file (default: --env-file).
    #[serde(default)]
    pub file: Option<String>,
}

/// Parameters of `env.unset`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsetParams {
    /// The variable.
    pub name: String,
    /// The env file (default: --env-file).
    #[serde(default)]
    pub file: Option<String>,
}

pub static SET: super::spec::FixSpec = super::spec::FixSpec {
    name: "env.set",
    doc: "Set a variable in an env file, in the file's own format.",
    params: crate::kinds::ParamsDecl::of::<SetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &EnvSet,
};

pub static UNSET: super::spec::FixSpec = super::spec::FixSpec {
    name: "env.unset",
    doc: "Remove a variable from an env file.",
    params: crate::kinds::ParamsDecl::of::<UnsetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &EnvUnset,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixes::file::FileEdit;
    use serde_json::json;

    fn set(path: &str, old: &str, name: &str, value: &str) -> Result<String, String> {
        let action = json!({"name": name, "value": value});
        EnvSet.edit(path, old, true, action.as_object().unwrap())
    }

    fn unset(path: &str, old: &str, name: &str) -> Result<String, String> {
        let action = json!({ "name": name });
        EnvUnset.edit(path, old, true, action.as_object().unwrap())
    }

    /// Issue 22: the edit takes exactly the named assignment out of a launch script.
    #[test]
    fn unset_in_a_script_takes_only_the_named_assignment() {
        let run = "#!/bin/bash\nexport NCCL_DEBUG=INFO\nNCCL_P2P_DISABLE=1 torchrun --nproc_per_node=8 train.py --config cfg.yaml\nexport CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8\n";
        assert_eq!(
            unset("/job/run.sh", run, "NCCL_P2P_DISABLE").unwrap(),
            run.replace("NCCL_P2P_DISABLE=1 torchrun", "torchrun")
        );
        assert_eq!(
            unset("/job/run.sh", run, "CUDA_LAUNCH_BLOCKING").unwrap(),
            run.replace("CUDA_LAUNCH_BLOCKING=1 OMP", "OMP")
        );
        assert_eq!(
            unset("/job/run.sh", "export A=1 B=1\n", "A").unwrap(),
            "export B=1\n"
        );
        assert_eq!(
            unset("/job/run.sh", "env A=1 python train.py\n", "A").unwrap(),
            "env python train.py\n"
        );
        // a heredoc and a continuation line keep every byte
        let src = "#!/bin/bash\ncat > hostfile <<EOF\nnode1 slots=8\nEOF\nA=1 \\\n  deepspeed --hostfile hostfile \\\n  train.py\n";
        assert_eq!(
            unset("/job/run.sh", src, "A").unwrap(),
            src.replace("A=1 \\\n  ", "")
        );
        // set in two places: no edit
        let err = unset("/job/run.sh", "export A=1\nA=1 python t.py\n", "A").unwrap_err();
        assert!(err.contains("set in 2 places"), "{err}");
    }

    #[test]
    fn the_path_decides_the_dialect_as_it_does_for_the_probe() {
        // A script named .sh is a shell file even before it has an `export` line.
        let new = set("/opt/job/run.sh", "A=1\n", "NCCL_DEBUG", "INFO").unwrap();
        assert_eq!(new, "A=1\nexport NCCL_DEBUG=INFO\n");
        let vars = crate::formats::env::read_vars(Some(std::path::Path::new("run.sh")), &new);
        assert_eq!(vars["NCCL_DEBUG"], "INFO");
        // A dotted name is no shell assignment: refused rather than written for bash to reject.
        let err = set("/opt/job/run.sh", "A=1\n", "A.B", "1").unwrap_err();
        assert!(err.contains("not valid in a shell file"), "{err}");
        // The same name in a dotenv file is fine.
        assert_eq!(
            set("/opt/job/job.env", "A=1\n", "A.B", "1").unwrap(),
            "A=1\nA.B=1\n"
        );
        // /etc/environment is quoted the pam_env way.
        assert_eq!(
            set("/etc/environment", "", "HF_HOME", "/data/hf").unwrap(),
            "HF_HOME=\"/data/hf\"\n"
        );
    }
}
