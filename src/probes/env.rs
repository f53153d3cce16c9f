//! `env`: the environment a training job sees — the running process's (`--pid`), an env file
//! it is launched with (`--env-file`), or gpufix's own, which a job started from this shell
//! inherits.

use super::{Probe, ProbeCtx, ProbeOutcome};
use indexmap::IndexMap;
use serde_json::{Value, json};

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

impl EnvFrom {
    /// The name a playbook writes.
    pub fn name(&self) -> &'static str {
        match self {
            EnvFrom::Auto => "auto",
            EnvFrom::Process => "process",
            EnvFrom::EnvFile => "env-file",
            EnvFrom::Own => "self",
        }
    }
}

impl Probe for Env {
    type Params = EnvParams;
    fn name(&self) -> &'static str {
        "env"
    }
    fn doc(&self) -> &'static str {
        "The environment a job sees: the process's (--pid), an env file (--env-file), a launch script given as --config or --evidence (its exports) and a Python script's own `os.environ` settings, or gpufix's own."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "source",
                "`process PID`, `env-file PATH`, `launch script PATH`, `Python source PATH (set for its own process on line N)` or `gpufix environment`",
            ),
            (
                "vars",
                "name -> value; test a variable with `'X' in env.vars` or `env.vars.X is defined`",
            ),
            (
                "gpus",
                "GPUs per node: the host's (NVML), or the processes per node a launch script starts (absent when unknown)",
            ),
            (
                "ib_devices",
                "the host's /sys/class/infiniband entries (absent for a launch script given as evidence)",
            ),
            (
                "file",
                "the launch script the variables come from: one given as --config, or with --pid the script a shell among the job's parents runs (absent otherwise): env fixes edit it there",
            ),
            (
                "launched_by",
                "with --pid, the command line of the shell that runs the launch script (`bash run.sh`)",
            ),
            (
                "nodes",
                "nodes of the job a launch script starts, where it says (`--nnodes`; 1 for torchrun without rendezvous options)",
            ),
            (
                "starts_job",
                "a launch script's text sets up a job: a launch command (torchrun, python, srun, mpirun, …), `#SBATCH --nodes`, or a reference to a multi-node variable (`$SLURM_JOB_NUM_NODES`, `$MASTER_ADDR`, …); false for exports alone (absent for other sources)",
            ),
        ]
    }
    fn run(&self, params: &EnvParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let from = params.from.name();
        // a launch script given as --config (this machine's file: env fixes edit it) or as
        // --evidence (read only)
        let script = if from == "auto" && ctx.inputs.pid.is_none() && ctx.inputs.env_file.is_none()
        {
            launch_script(ctx.inputs.config.as_slice())
                .map(|s| (s, true))
                .or_else(|| launch_script(&ctx.inputs.evidence).map(|s| (s, false)))
        } else {
            None
        };
        // the variables a training script sets for itself (`os.environ[K] = V`): applied after
        // the launcher's, so they win over a script's exports
        let py = if from == "auto" && ctx.inputs.pid.is_none() {
            python_env(ctx.inputs.config.iter().chain(&ctx.inputs.evidence))
        } else {
            None
        };
        if let Some(((path, sc), editable)) = script {
            let mut v = script_env(&path, &sc);
            if editable {
                v["file"] = json!(path);
            }
            if let Some((ppath, sets)) = py {
                for e in sets {
                    v["vars"][e.name] = json!(e.value);
                }
                v["source"] = json!(format!(
                    "{} and Python source {ppath}",
                    v["source"].as_str().unwrap_or_default()
                ));
            }
            return ProbeOutcome::Value(v);
        }
        // what the script sets goes over the environment it is started from (an env file, this
        // shell's), or stands alone where that cannot be read
        let py = py.map(|(path, sets)| {
            let at: Vec<String> = sets.iter().map(|e| e.line.to_string()).collect();
            let source = format!(
                "Python source {path} (set for its own process on line {})",
                at.join(", ")
            );
            (source, sets)
        });
        let from = match from {
            "auto" if ctx.inputs.pid.is_some() => "process",
            "auto" if ctx.inputs.env_file.is_some() => "env-file",
            "auto" => "self",
            other => other,
        };
        let mut out = self.read(from, ctx);
        if let Some((source, sets)) = py {
            match &mut out {
                ProbeOutcome::Value(v) if v["vars"].is_object() => {
                    for e in sets {
                        v["vars"][e.name] = json!(e.value);
                    }
                    v["source"] = json!(format!(
                        "{} and {source}",
                        v["source"].as_str().unwrap_or_default()
                    ));
                }
                _ => {
                    out = ProbeOutcome::Value(json!({
                        "source": source,
                        "vars": vars_value(sets.into_iter().map(|e| (e.name, e.value))),
                    }));
                }
            }
        }
        // the host the environment applies to: its GPUs and RDMA devices
        if let ProbeOutcome::Value(v) = &mut out {
            if let Ok(r) = ctx.host.nvml() {
                v["gpus"] = json!(r.gpus.len());
            }
            match ctx.host.read_dir("/sys/class/infiniband") {
                Ok(mut e) => {
                    e.sort();
                    v["ib_devices"] = json!(e);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && ctx.host.is_live() => {
                    v["ib_devices"] = json!([]);
                }
                Err(_) => {}
            }
        }
        out
    }
}

/// The first `--evidence` file that is a launch script or command line, read.
fn launch_script(
    evidence: &[std::path::PathBuf],
) -> Option<(String, crate::formats::launcher::Script)> {
    use crate::evidence::segment::job_text_in_paste as in_paste;
    use crate::formats::job_text::JobText;
    evidence.iter().find_map(|p| {
        let text = crate::vocab::io::read_shared(p).ok()?;
        let (kind, text) = in_paste(&text)?;
        (kind == JobText::Launcher).then(|| {
            (
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string(),
                crate::formats::launcher::read_script(&text),
            )
        })
    })
}

/// The first `--config`/`--evidence` file that is Python source setting environment variables
/// for its own process ([`crate::formats::python::environ_sets`]), with those settings.
fn python_env<'a>(
    paths: impl Iterator<Item = &'a std::path::PathBuf>,
) -> Option<(String, Vec<crate::formats::python::EnvSet>)> {
    use crate::evidence::segment::job_text_in_paste as in_paste;
    use crate::formats::job_text::JobText;
    paths.into_iter().find_map(|p| {
        let text = crate::vocab::io::read_shared(p).ok()?;
        let (kind, text) = in_paste(&text)?;
        if kind != JobText::Python {
            return None;
        }
        let sets = crate::formats::python::environ_sets(&text);
        (!sets.is_empty()).then(|| {
            (
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string(),
                sets,
            )
        })
    })
}

/// The environment a launch script gives its training processes: its exports and the
/// `NAME=value` prefixes of its launch commands; the job's shape where the script says it
/// (`gpus` per node from `--nproc_per_node` or `CUDA_VISIBLE_DEVICES`, `nodes` from
/// `--nnodes`, 1 for a torchrun without rendezvous options).
fn script_env(path: &str, sc: &crate::formats::launcher::Script) -> Value {
    let mut vars: IndexMap<String, String> = sc.exports.iter().cloned().collect();
    for l in &sc.launches {
        for (k, v) in &l.env {
            vars.insert(k.clone(), v.clone());
        }
    }
    let mut out = json!({
        "source": format!("launch script {path}"),
        "vars": vars_value(vars.clone()),
    });
    let gpus = sc
        .launches
        .iter()
        .find_map(|l| l.nproc_per_node)
        .map(u64::from)
        .or_else(|| {
            vars.get("CUDA_VISIBLE_DEVICES")
                .filter(|v| {
                    !v.is_empty()
                        && v.split(',')
                            .all(|d| !d.trim().is_empty() && !d.contains('$'))
                })
                .map(|v| v.split(',').count() as u64)
        });
    if let Some(g) = gpus {
        out["gpus"] = json!(g);
    }
    let nodes = sc
        .launches
        .iter()
        .find_map(|l| l.nnodes)
        .map(u64::from)
        .or_else(|| {
            // torchrun, torch.distributed.launch and accelerate default to one node, and so
            // does a plain `python train.py`, unless a scheduler (srun, mpirun) starts it or a
            // rendezvous option names another host
            let single = !sc.launches.is_empty()
                && sc.launches.iter().all(|l| {
                    matches!(
                        l.launcher.as_deref(),
                        Some("torchrun" | "torch.distributed.launch" | "accelerate") | None
                    ) && !l.multi_node_hint
                        && !l.via_scheduler
                });
            single.then_some(1)
        });
    if let Some(n) = nodes {
        out["nodes"] = json!(n);
    }
    // exports with no command after them (a blog's two `export` lines) start no job: a rule
    // that judges the job's shape has nothing to judge
    out["starts_job"] =
        json!(!sc.launches.is_empty() || sc.slurm.nodes.is_some() || sc.distributed_vars);
    out
}

impl Env {
    fn read(&self, from: &str, ctx: &ProbeCtx) -> ProbeOutcome {
        match from {
            "process" => {
                let Some(pid) = ctx.inputs.pid else {
                    return ProbeOutcome::NotApplicable("needs --pid".into());
                };
                let path = format!("/proc/{pid}/environ");
                match ctx.host.read_file(&path) {
                    Ok(b) => {
                        let mut v = json!({
                            "source": format!("process {pid}"),
                            "vars": vars_value(parse_environ(&b)),
                        });
                        // the script that started the job: env fixes edit a variable where
                        // it sets it, or say how to start the job without it
                        if let Some((file, _, argv)) =
                            super::config_sources::launch_script_of(ctx.host, pid)
                        {
                            v["file"] = json!(file);
                            v["launched_by"] = json!(argv.join(" "));
                        }
                        ProbeOutcome::Value(v)
                    }
                    Err(e) => ProbeOutcome::Unknown(format!("cannot read `{path}`: {e}")),
                }
            }
            "env-file" => {
                let Some(file) = &ctx.inputs.env_file else {
                    return ProbeOutcome::NotApplicable("needs --env-file".into());
                };
                // --env-file is this machine's file as given, never mapped under --root
                let path = file.to_string_lossy();
                match crate::vocab::io::read_capped(file, crate::vocab::io::MAX_ENV_FILE_BYTES) {
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

    #[test]
    fn a_python_script_s_own_environment() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let p = |n: &str| dir.join(n);
        // problem: BernoulliDiffusion's trainer.py (issue #23) sets CUDA_LAUNCH_BLOCKING=1 at
        // import; a YAML config given beside it (WavTokenizer's) is not Python and is passed over
        let paths = [
            p("h27_lightningcli_wavtokenizer_frame40_8_workers.yaml"),
            p("h27_py_bernoullidiffusion23_trainer_launch_blocking.py"),
        ];
        let (path, sets) = python_env(paths.iter()).unwrap();
        assert!(path.ends_with("h27_py_bernoullidiffusion23_trainer_launch_blocking.py"));
        assert_eq!(
            sets.iter()
                .map(|e| (e.name.as_str(), e.value.as_str(), e.line))
                .collect::<Vec<_>>(),
            [("CUDA_LAUNCH_BLOCKING", "1", 12)]
        );
        // healthy: a training script that sets nothing (Piper's LightningModule) gives none
        let paths = [p("h27_py_piper121_lightning_num_workers_default_1.py")];
        assert!(python_env(paths.iter()).is_none());
    }

    #[test]
    fn launch_script_environment_and_shape() {
        let read = |t: &str| script_env("run.sh", &crate::formats::launcher::read_script(t));
        let v =
            read("export NCCL_IB_DISABLE=1\nexport CUDA_VISIBLE_DEVICES=0,1\npython train.py\n");
        assert_eq!(v["vars"]["NCCL_IB_DISABLE"], "1");
        assert_eq!(
            (v["gpus"].clone(), v["nodes"].clone()),
            (json!(2), json!(1))
        );
        let v = read("export NCCL_IB_DISABLE=1\nsrun python train.py\n");
        assert!(v.get("nodes").is_none(), "srun may span nodes: {v}");
        assert_eq!(v["starts_job"], json!(true));
        // blog.csdn.net/engchina/article/details/144787759: the two exports alone
        let v = read("export NCCL_P2P_DISABLE=1\nexport NCCL_IB_DISABLE=1\n");
        assert_eq!(v["vars"]["NCCL_IB_DISABLE"], "1");
        assert_eq!(v["starts_job"], json!(false));
        assert!(v.get("nodes").is_none(), "{v}");
        let v = read("#SBATCH --nodes=4\nexport NCCL_IB_DISABLE=1\n");
        assert_eq!(v["starts_job"], json!(true));
        // a Slurm template's multi-node branch cut before its srun line (the corpus's
        // launcher_slurm_multinode_ib_disable): it reads the allocation's node count
        let v = read(
            "    echo \"Multiple ($SLURM_JOB_NUM_NODES) node training\"\n    export NCCL_IB_DISABLE=1\n",
        );
        assert_eq!(v["starts_job"], json!(true));
        // the names in a comment, or a longer name, are no such reference
        let v = read(
            "# uses $MASTER_ADDR later\nexport NCCL_IB_DISABLE=1\necho $MASTER_ADDRESS_BOOK\n",
        );
        assert_eq!(v["starts_job"], json!(false));
        let v = read("NCCL_P2P_DISABLE=1 torchrun --nnodes 2 --nproc_per_node 8 t.py\n");
        assert_eq!(v["vars"]["NCCL_P2P_DISABLE"], "1");
        assert_eq!(
            (v["gpus"].clone(), v["nodes"].clone()),
            (json!(8), json!(2))
        );
        let v = read("torchrun --nproc_per_node 8 --node_rank 1 --master_addr 10.0.0.2 t.py\n");
        assert!(v.get("nodes").is_none(), "{v}");
        // an excerpt without a launch: shape unknown
        let v = read("else\n    export NCCL_IB_DISABLE=1\nfi\n");
        assert!(v.get("nodes").is_none() && v.get("gpus").is_none(), "{v}");
    }
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
