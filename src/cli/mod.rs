//! Command-line interface: raw arguments (clap) first, then one resolved [`Session`] (host,
//! inputs, rule set) that every subcommand uses.

pub mod apply;
pub mod audit;
pub mod explain;
pub mod list;
pub mod man;
pub mod plan;
pub mod rollback;
pub mod snapshot;
pub mod test;
pub mod validate;

use crate::playbook::{self, Diagnostic, RuleSet, SourceFile};
use crate::session::{Eval, ExitStatus, OpenError, Session, Spec};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::session::{SYSTEM_PLAYBOOKS, SYSTEM_VALUES};

#[derive(Parser, Debug)]
#[command(
    name = "gpufix",
    version,
    about = "Find why a GPU training job runs at 20% utilization, and fix it.",
    long_about = "Find why a GPU training job runs at 20% utilization, and fix it.\n\n\
gpufix evaluates YAML playbooks (probe -> threshold -> fix) bottom-up over six layers: driver, \
cuda, data, launch, memory, comm. `plan` shows what is wrong and what it would change; nothing \
is changed until you `apply`.",
    after_help = "Examples:\n  \
gpufix plan                                   judge this host\n  \
gpufix plan --pid 4242 --config train.yaml    judge a running training job too\n  \
gpufix plan --snapshot node17.json            judge a host someone recorded\n  \
gpufix plan --only driver --format json       one layer, machine-readable\n  \
gpufix explain driver.persistence-off         why a rule exists and what it does\n  \
gpufix validate site-playbooks/               check site playbooks before deploying them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Treat DIR as the host's `/` for every file, /proc and /sys read (a container with the
    /// host mounted at /host, or a recorded tree).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Evaluate a host recorded by `gpufix snapshot` instead of this one.
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "root")]
    pub snapshot: Option<PathBuf>,
    /// Site playbooks (a directory of .yaml files, or one file), after the built-ins and
    /// /etc/gpufix/playbooks.d. A rule with a built-in's id replaces it. Repeatable.
    #[arg(long = "playbooks", global = true, value_name = "DIR")]
    pub playbooks: Vec<PathBuf>,
    /// Values file: parameters, disabled rules, waivers [default: /etc/gpufix/values.yaml if present]
    #[arg(long, global = true, value_name = "FILE")]
    pub values: Option<PathBuf>,
    /// Only these rules or layers (and what they depend on). Repeatable.
    #[arg(long, global = true, value_name = "RULE|LAYER")]
    pub only: Vec<String>,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Window for sampled probes (utilization, disk, CPU), e.g. 5s, 500ms, 0 for one reading.
    #[arg(long, global = true, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub sample: Duration,
    /// When to use color [NO_COLOR and non-terminals turn `auto` off].
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Do not read /etc/gpufix (playbooks.d and values.yaml).
    #[arg(long, global = true)]
    pub no_system: bool,
    #[command(flatten)]
    pub inputs: InputArgs,
}

#[derive(Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// A running training process to attach to (environment, DataLoader workers, CPU use).
    #[arg(long, global = true, value_name = "PID")]
    pub pid: Option<u32>,
    /// Find the training process by a pattern in its command line.
    #[arg(long, global = true, value_name = "PATTERN", conflicts_with = "pid")]
    pub job: Option<String>,
    /// The job's training config (YAML, JSON or TOML).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The env file the job's launcher reads; env fixes are written there.
    #[arg(long = "env-file", global = true, value_name = "FILE")]
    pub env_file: Option<PathBuf>,
    /// A PyTorch profiler trace (Chrome trace JSON, plain or .gz).
    #[arg(long, global = true, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Output of a run with NCCL_DEBUG=INFO.
    #[arg(long = "nccl-log", global = true, value_name = "FILE")]
    pub nccl_log: Option<PathBuf>,
    /// A kernel log (dmesg) to read instead of the live one.
    #[arg(long = "kernel-log", global = true, value_name = "FILE")]
    pub kernel_log: Option<PathBuf>,
    /// Pasted diagnostics (nvidia-smi -q, NCCL log, dmesg, memory summary, fstab…); the host
    /// they describe is judged, not this one. Repeatable.
    #[arg(long, global = true, value_name = "FILE")]
    pub evidence: Vec<PathBuf>,
    /// Also run the framework-level CUDA check: import torch in the job's Python and run a
    /// matmul (seconds; the default check talks to libcuda directly and starts no Python).
    #[arg(long, global = true)]
    pub deep: bool,
    /// Reuse a passed native CUDA check younger than this, from the state directory's cache
    /// (only while the boot, driver and GPUs are unchanged; a failed check is never reused).
    /// 0 runs the check every time.
    #[arg(long = "cuda-check-max-age", global = true, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub cuda_check_max_age: Duration,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// `list` only: the library as a printable checklist.
    Markdown,
    /// `audit` only: JUnit XML, one test case per rule.
    Junit,
    /// `audit` only: node_exporter textfile metrics.
    Prometheus,
    /// `audit` only: one Nagios plugin line; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    Nagios,
    /// `audit` only: a Slurm drain reason (`gpufix: RULE…`) or nothing when clean.
    Slurm,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Judge the host (and a job, if given) and show what gpufix would change. Changes nothing.
    #[command(
        after_help = "Exit status: 0 nothing found, 2 findings (fail, unknown or blocked), 1 error.\n\n\
Examples:\n  gpufix plan\n  gpufix plan --sample 5s --pid $(pgrep -f train.py)\n  gpufix plan --snapshot tests/fixtures/hosts/h200-vm.snapshot.json"
    )]
    Plan(plan::PlanArgs),
    /// Apply the fixes of a plan: show each change, ask (or --yes), apply in one transaction.
    #[command(
        after_help = "Exit status: 0 applied and verified (or nothing to do), 1 error or rolled back.\n\n\
Examples:\n  gpufix apply --dry-run\n  gpufix apply --yes --allow config.set --allow env.unset --config train.yaml --env-file job.env\n  \
gpufix plan -o plan.json && gpufix apply plan.json"
    )]
    Apply(apply::ApplyArgs),
    /// Undo a run from its journal (default: the last one).
    #[command(
        after_help = "Examples:\n  gpufix rollback\n  gpufix rollback 20261202T120301.123Z-4242 --force"
    )]
    Rollback(rollback::RollbackArgs),
    /// List apply runs and their status (applied, rolled-back, failed, interrupted).
    History(rollback::HistoryArgs),
    /// A plan that never writes (not even the journal), in machine formats for fleets.
    #[command(
        after_help = "Exit status: 0 nothing found, 2 findings, 1 error; with --format nagios 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.\n\n\
Examples:\n  gpufix audit --format json\n  gpufix audit --root /host --format prometheus -o /var/lib/node_exporter/textfile/gpufix.prom\n  \
gpufix audit --format nagios\n  gpufix audit --format junit > gpufix.xml"
    )]
    Audit(audit::AuditArgs),
    /// Check playbooks and a values file; print every problem at once.
    #[command(
        after_help = "Exit status: 0 valid, 1 problems found.\n\nExamples:\n  gpufix validate\n  gpufix validate site/ --values site/values.yaml"
    )]
    Validate(validate::ValidateArgs),
    /// List the rules with layer, severity and fix safety.
    #[command(
        after_help = "Examples:\n  gpufix list\n  gpufix list --format markdown > CHECKLIST.md\n  gpufix list --probes\n  gpufix list --fixes"
    )]
    List(list::ListArgs),
    /// Explain a rule: why it exists, its threshold and where it comes from, its fix.
    #[command(after_help = "Example:\n  gpufix explain data.workers-too-few")]
    Explain(explain::ExplainArgs),
    /// Run playbook tests written in YAML: inputs (a snapshot, host files, config, env file,
    /// evidence) and the verdict each rule must give.
    #[command(
        after_help = "Exit status: 0 every expectation holds, 1 otherwise (each difference is printed).\n\n\
A test file holds `tests:`, each with `name`, inputs (`snapshot:` path, `files:` {path: text, or\n\
a list of successive readings}, `dirs:`, `commands:` {\"argv\": {stdout, stderr, exit_code}},\n\
`patch:` merged into the snapshot (`nvml: [{ok: {gpus: [{persistence: {ok: false}}]}}]`),\n\
`config:`/`env_file:`/`trace:`/`nccl_log:`/`kernel_log:` as a path or {name, text}, `evidence:`\n\
a list of those, `pid:`, `sample:` (5s), `values:` inline, `only:`) and `expect:`\n\
{rule id: verdict}. Paths are relative to the test file.\n\n\
Examples:\n  gpufix test playbooks/tests\n  gpufix test --playbooks site/ site/tests/"
    )]
    Test(test::TestArgs),
    /// Record everything the probes read into one JSON file, for replay with --snapshot.
    #[command(
        after_help = "Example:\n  gpufix snapshot -o node17.json && gpufix plan --snapshot node17.json"
    )]
    Snapshot(snapshot::SnapshotArgs),
    /// Print shell completions: bash, zsh, fish, elvish or powershell.
    #[command(after_help = "Example:\n  gpufix completions bash > /etc/bash_completion.d/gpufix")]
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff), or write one per subcommand into a directory.
    #[command(
        after_help = "Examples:\n  gpufix man | man -l -\n  gpufix man --dir /usr/local/share/man/man1    gpufix.1, gpufix-plan.1, gpufix-audit.1, ..."
    )]
    Man(man::ManArgs),
    /// Print a JSON Schema: playbook, values, report, plan or snapshot.
    Schema {
        #[arg(value_parser = ["playbook", "values", "report", "plan", "snapshot"])]
        name: String,
    },
}

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let (num, unit) = s.split_at(
        s.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len()),
    );
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (try 5s, 500ms, 1m)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" | "" => n,
        "m" => n * 60.0,
        _ => return Err(format!("unknown unit `{unit}` in `{s}` (use ms, s or m)")),
    };
    if !(0.0..=3600.0).contains(&secs) {
        return Err(format!("`{s}` is out of range (0 to 60m)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

impl Global {
    pub fn color(&self) -> bool {
        match self.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }

    /// The run as given on the command line (`--root` made absolute), for [`Session::open`].
    pub fn spec(&self) -> Spec {
        let a = &self.inputs;
        Spec {
            root: self
                .root
                .as_ref()
                .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone())),
            snapshot: self.snapshot.clone(),
            playbooks: self.playbooks.clone(),
            values: self.values.clone(),
            no_system: self.no_system,
            pid: a.pid,
            job: a.job.clone(),
            config: a.config.clone(),
            env_file: a.env_file.clone(),
            trace: a.trace.clone(),
            nccl_log: a.nccl_log.clone(),
            kernel_log: a.kernel_log.clone(),
            evidence: a.evidence.clone(),
            deep: a.deep,
            cuda_check_max_age: Some(a.cuda_check_max_age),
        }
    }

    /// Built-ins, then /etc/gpufix/playbooks.d (under --root), then --playbooks.
    pub fn sources(&self) -> Result<Vec<SourceFile>, Vec<Diagnostic>> {
        self.spec().sources()
    }

    pub fn values_source(&self) -> Result<Option<SourceFile>, Vec<Diagnostic>> {
        self.spec().values_source()
    }

    pub fn rule_set(&self) -> Result<RuleSet, Vec<Diagnostic>> {
        self.spec().rule_set()
    }

    /// How to evaluate for this command line, with the given probe deadline.
    pub fn eval(&self, probe_deadline: Duration) -> Eval {
        Eval {
            sample: self.sample,
            probe_deadline,
            only: self.only.clone(),
            timings: false,
        }
    }
}

/// The error for a `--format` the subcommand does not write.
pub fn unsupported_format(cmd: &str, f: Format) -> anyhow::Result<ExitStatus> {
    let name = f
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let (formats, hint) = match cmd {
        "audit" => ("text, json, junit, prometheus, nagios or slurm", ""),
        "list" => ("text, json or markdown", ""),
        _ => (
            "text or json",
            "; junit, prometheus, nagios and slurm are `gpufix audit` formats",
        ),
    };
    anyhow::bail!("`gpufix {cmd}` does not write --format {name}\nhelp: use {formats}{hint}")
}

/// Open the session for a command, printing invalid playbooks' diagnostics (exit 1).
pub fn open_session(g: &Global) -> anyhow::Result<Result<Session, ExitStatus>> {
    match Session::open(g.spec()) {
        Ok(s) => Ok(Ok(s)),
        Err(OpenError::Invalid(d)) => Ok(Err(print_diagnostics(&d))),
        Err(OpenError::Other(e)) => Err(e),
    }
}

/// Print diagnostics; the status is [`ExitStatus::Error`].
pub fn print_diagnostics(diags: &[Diagnostic]) -> ExitStatus {
    for d in diags {
        eprintln!("{d}\n");
    }
    eprintln!(
        "error: {} problem{} found; nothing was probed or changed",
        diags.len(),
        if diags.len() == 1 { "" } else { "s" }
    );
    ExitStatus::Error
}

pub fn display_path(p: &Path) -> String {
    p.display().to_string()
}

pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let g = &cli.global;
    match &cli.command {
        Command::Plan(a) => plan::run(g, a),
        Command::Apply(a) => apply::run(g, a),
        Command::Audit(a) => audit::run(g, a),
        Command::Rollback(a) => rollback::rollback(g, a),
        Command::History(a) => rollback::history(g, a),
        Command::Validate(a) => validate::run(g, a),
        Command::List(a) => list::run(g, a),
        Command::Explain(a) => explain::run(g, a),
        Command::Test(a) => test::run(g, a),
        Command::Snapshot(a) => snapshot::run(g, a),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "gpufix", &mut std::io::stdout());
            Ok(ExitStatus::Clean)
        }
        Command::Man(a) => man::run(a),
        Command::Schema { name } => {
            let v = match name.as_str() {
                "playbook" => playbook::validate::playbook_schema(),
                "values" => playbook::validate::values_schema(),
                "report" => serde_json::to_value(schemars::schema_for!(crate::report::Report))?,
                "plan" => serde_json::to_value(schemars::schema_for!(crate::plan::PlanFile))?,
                _ => serde_json::from_str(include_str!("../../schemas/snapshot.schema.json"))?,
            };
            println!("{}", serde_json::to_string_pretty(&v)?);
            Ok(ExitStatus::Clean)
        }
    }
}
