//! Command-line interface: raw arguments (clap) first, then one resolved [`Session`] (host,
//! inputs, rule set) that every subcommand uses.

pub mod apply;
pub mod audit;
pub mod explain;
pub mod list;
pub mod plan;
pub mod rollback;
pub mod snapshot;
pub mod validate;

use crate::host::Host;
use crate::host::real::RealHost;
use crate::host::recorded::SnapshotHost;
use crate::playbook::{self, Diagnostic, RuleSet, SourceFile, Tier};
use crate::probes::Inputs;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub const SYSTEM_PLAYBOOKS: &str = "/etc/gpufix/playbooks.d";
pub const SYSTEM_VALUES: &str = "/etc/gpufix/values.yaml";

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
        after_help = "Examples:\n  gpufix list\n  gpufix list --format markdown > CHECKLIST.md\n  gpufix list --probes"
    )]
    List(list::ListArgs),
    /// Explain a rule: why it exists, its threshold and where it comes from, its fix.
    #[command(after_help = "Example:\n  gpufix explain data.workers-too-few")]
    Explain(explain::ExplainArgs),
    /// Record everything the probes read into one JSON file, for replay with --snapshot.
    #[command(
        after_help = "Example:\n  gpufix snapshot -o node17.json && gpufix plan --snapshot node17.json"
    )]
    Snapshot(snapshot::SnapshotArgs),
    /// Print shell completions: bash, zsh, fish, elvish or powershell.
    #[command(after_help = "Example:\n  gpufix completions bash > /etc/bash_completion.d/gpufix")]
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff), generated from these definitions.
    #[command(after_help = "Example:\n  gpufix man > /usr/local/share/man/man1/gpufix.1")]
    Man,
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

    /// Built-ins, then /etc/gpufix/playbooks.d (under --root), then --playbooks.
    pub fn sources(&self) -> Result<Vec<SourceFile>, Vec<Diagnostic>> {
        let mut out = playbook::builtin_sources();
        let mut diags = Vec::new();
        if !self.no_system {
            let sys = self.host_path(SYSTEM_PLAYBOOKS);
            if sys.is_dir() {
                match playbook::read_sources(&sys, Tier::System) {
                    Ok(s) => out.extend(s),
                    Err(d) => diags.push(d),
                }
            }
        }
        for p in &self.playbooks {
            match playbook::read_sources(p, Tier::Cli) {
                Ok(s) => out.extend(s),
                Err(d) => diags.push(d),
            }
        }
        if diags.is_empty() {
            Ok(out)
        } else {
            Err(diags)
        }
    }

    pub fn values_source(&self) -> Result<Option<SourceFile>, Vec<Diagnostic>> {
        let (path, explicit) = match &self.values {
            Some(p) => (p.clone(), true),
            None if self.no_system => return Ok(None),
            None => (self.host_path(SYSTEM_VALUES), false),
        };
        if !explicit && !path.exists() {
            return Ok(None);
        }
        std::fs::read_to_string(&path)
            .map(|text| {
                Some(SourceFile {
                    name: path.display().to_string(),
                    text,
                    tier: Tier::Cli,
                })
            })
            .map_err(|e| {
                vec![Diagnostic::new(
                    "unreadable-values",
                    &path.display().to_string(),
                    format!("cannot read values file: {e}"),
                    "check the path given to `--values`",
                )]
            })
    }

    fn host_path(&self, p: &str) -> PathBuf {
        match &self.root {
            Some(r) => r.join(p.trim_start_matches('/')),
            None => PathBuf::from(p),
        }
    }

    pub fn rule_set(&self) -> Result<RuleSet, Vec<Diagnostic>> {
        let sources = self.sources()?;
        let values = self.values_source()?;
        playbook::validate::load(&sources, values.as_ref())
    }

    pub fn host(&self) -> anyhow::Result<Arc<dyn Host>> {
        if let Some(h) = crate::host::evidence::EvidenceHost::from_files(&self.inputs.evidence)? {
            if self.snapshot.is_some() || self.root.is_some() {
                anyhow::bail!(
                    "--evidence with nvidia-smi output, fstab or /proc/mounts judges the host it describes; it cannot be combined with --root or --snapshot"
                );
            }
            return Ok(Arc::new(h));
        }
        let a = &self.inputs;
        let job_inputs = !a.evidence.is_empty()
            || a.nccl_log.is_some()
            || a.kernel_log.is_some()
            || a.trace.is_some()
            || a.config.is_some();
        // A job's logs or config given on a machine without an NVIDIA driver (a laptop, CI)
        // come from another machine: judge them alone, never this one.
        if job_inputs
            && self.snapshot.is_none()
            && self.root.is_none()
            && a.pid.is_none()
            && a.job.is_none()
            && crate::host::evidence::no_local_driver()
        {
            return Ok(Arc::new(crate::host::evidence::EvidenceHost::inputs_only(
                "the inputs given (this machine has no NVIDIA driver, so it is not judged)",
            )));
        }
        Ok(match &self.snapshot {
            Some(f) => Arc::new(SnapshotHost::load(f)?),
            None => Arc::new(RealHost::new(self.root.clone())),
        })
    }

    pub fn inputs(&self, host: &dyn Host) -> anyhow::Result<Inputs> {
        let a = &self.inputs;
        let pid = match (&a.pid, &a.job) {
            (Some(p), _) => Some(*p),
            (None, Some(pat)) => Some(find_job(host, pat)?),
            _ => None,
        };
        for (flag, p) in [
            ("--config", &a.config),
            ("--env-file", &a.env_file),
            ("--trace", &a.trace),
            ("--nccl-log", &a.nccl_log),
            ("--kernel-log", &a.kernel_log),
        ] {
            if let Some(p) = p
                && !p.exists()
            {
                anyhow::bail!(
                    "{flag} {}: no such file\nhelp: give the path of an existing file",
                    p.display()
                );
            }
        }
        Ok(Inputs {
            pid,
            config: a.config.clone(),
            env_file: a.env_file.clone(),
            trace: a.trace.clone(),
            nccl_log: a.nccl_log.clone(),
            kernel_log: a.kernel_log.clone(),
            evidence: a.evidence.clone(),
        })
    }
}

/// The oldest process whose command line contains the pattern (not gpufix itself).
fn find_job(host: &dyn Host, pat: &str) -> anyhow::Result<u32> {
    let me = std::process::id();
    let mut hits = Vec::new();
    for name in host.read_dir("/proc").unwrap_or_default() {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(raw) = host.read_file(&format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmd.contains(pat) && !cmd.contains("gpufix") {
            hits.push((pid, cmd.trim().to_string()));
        }
    }
    hits.sort();
    match hits.first() {
        Some((pid, _)) => Ok(*pid),
        None => anyhow::bail!(
            "--job `{pat}`: no running process has that in its command line\nhelp: check `ps -eo pid,args | grep {pat}`, or give --pid"
        ),
    }
}

/// Print diagnostics and return exit code 1.
pub fn print_diagnostics(diags: &[Diagnostic]) -> i32 {
    for d in diags {
        eprintln!("{d}\n");
    }
    eprintln!(
        "error: {} problem{} found; nothing was probed or changed",
        diags.len(),
        if diags.len() == 1 { "" } else { "s" }
    );
    1
}

pub fn display_path(p: &Path) -> String {
    p.display().to_string()
}

pub fn run(cli: Cli) -> anyhow::Result<i32> {
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
        Command::Snapshot(a) => snapshot::run(g, a),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "gpufix", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
            Ok(0)
        }
        Command::Schema { name } => {
            let v = match name.as_str() {
                "playbook" => playbook::validate::playbook_schema(),
                "values" => playbook::validate::values_schema(),
                "report" => serde_json::to_value(schemars::schema_for!(crate::report::Report))?,
                "plan" => serde_json::to_value(schemars::schema_for!(crate::plan::PlanFile))?,
                _ => serde_json::from_str(include_str!("../../schemas/snapshot.schema.json"))?,
            };
            println!("{}", serde_json::to_string_pretty(&v)?);
            Ok(0)
        }
    }
}
