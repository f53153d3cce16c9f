//! `env.set` / `env.unset`: one variable in an env file, written in the file's own format
//! (dotenv, shell `export`, /etc/environment, systemd `Environment=`).

use super::edit::env as envedit;
use super::file::FileEdit;
use super::{FixCtx, scalar_param, str_param};
use serde_json::{Map, Value};

/// The file's dialect from its path and content: the same detection the `env` probe reads an
/// `--env-file` with, so the fix writes in the form the probe will read.
fn format_for(path: &str, old: &str) -> envedit::Format {
    envedit::detect_format(Some(std::path::Path::new(path)), old)
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
        envedit::env_set(
            old,
            Some(format_for(path, old)),
            str_param(action, "name")?,
            &scalar_param(action, "value")?,
        )
        .map_err(|e| e.to_string())
    }
    fn summary(&self, action: &Map<String, Value>, path: &str) -> String {
        format!(
            "set {}={} in {path}",
            action.get("name").and_then(Value::as_str).unwrap_or(""),
            scalar_param(action, "value").unwrap_or_default()
        )
    }
}

pub struct EnvUnset;

impl FileEdit for EnvUnset {
    fn name(&self) -> &'static str {
        "env.unset"
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
        envedit::env_unset(old, Some(format_for(path, old)), str_param(action, "name")?)
            .map_err(|e| e.to_string())
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
