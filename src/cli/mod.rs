//! Command-line interface: raw arguments (clap) first, then one resolved [`Session`] (host,
//! inputs, rule set) that every subcommand uses.

pub mod apply;
pub mod audit;
pub mod explain;
pub mod list;
pub mod man;
pub mod plan;
pub mod progress;
pub mod record;
pub mod report;
pub mod rollback;
pub mod snapshot;
pub mod test;
pub mod validate;

use crate::playbook::{self, Diagnostic, RuleSet, SourceFile};
use crate::session::{Eval, ExitStatus, OpenError, Session, Spec};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
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
    after_help = "Each subcommand has its own options: `gpufix help plan`, `gpufix audit --help`. \
They may also come before the subcommand (`gpufix --root /host audit`).\n\n\
Examples:\n  \
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
}

/// Which host is judged, and how: for the subcommands that probe (plan, apply, audit, snapshot).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Host")]
pub struct HostOpts {
    /// Treat DIR as the host's `/` for every file, /proc and /sys read (a container with the
    /// host mounted at /host, or a recorded tree).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Evaluate a host recorded by `gpufix snapshot` instead of this one.
    #[arg(long, value_name = "FILE", conflicts_with = "root")]
    pub snapshot: Option<PathBuf>,
    /// Window for sampled probes (utilization, disk, CPU), e.g. 5s, 500ms, 0 for one reading.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub sample: Duration,
    #[command(flatten)]
    pub inputs: InputArgs,
}

/// Which rules: the built-ins, /etc/gpufix and site playbooks, and a values file.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Rules")]
pub struct RuleOpts {
    /// Site playbooks (a directory of .yaml files, or one file), after the built-ins and
    /// /etc/gpufix/playbooks.d. A rule with a built-in's id replaces it. Repeatable.
    #[arg(long = "playbooks", value_name = "DIR")]
    pub playbooks: Vec<PathBuf>,
    /// Values file: parameters, disabled rules, waivers [default: /etc/gpufix/values.yaml if present]
    #[arg(long, value_name = "FILE")]
    pub values: Option<PathBuf>,
    /// Do not read /etc/gpufix (playbooks.d and values.yaml).
    #[arg(long, overrides_with = "no_system")]
    pub no_system: bool,
}

/// Site playbooks only, for `gpufix test` (each test brings its own values and host).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Rules")]
pub struct PlaybookOpts {
    /// Site playbooks (a directory of .yaml files, or one file), after the built-ins and
    /// /etc/gpufix/playbooks.d. A rule with a built-in's id replaces it. Repeatable.
    #[arg(long = "playbooks", value_name = "DIR")]
    pub playbooks: Vec<PathBuf>,
    /// Do not read /etc/gpufix/playbooks.d.
    #[arg(long, overrides_with = "no_system")]
    pub no_system: bool,
}

/// A subset of the rules.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Rules")]
pub struct OnlyOpts {
    /// Only these rules or layers (and what they depend on). Repeatable.
    #[arg(long, value_name = "RULE|LAYER")]
    pub only: Vec<String>,
}

/// `--root` alone, for the journal commands (rollback, history).
#[derive(Args, Debug, Clone, Default)]
pub struct RootOpts {
    /// The root the run was applied with; the journal is under it [default: /].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// `--progress`, for the subcommands that probe.
#[derive(Args, Debug, Clone, Default)]
pub struct ProgressOpts {
    /// Show progress on stderr even when it is not a terminal (as `gpufix: ...` lines, for a
    /// log); on a terminal a spinner shows anyway while probes sample or wait on the driver.
    #[arg(long)]
    pub progress: bool,
}

impl ProgressOpts {
    fn mode(&self, quiet: bool) -> progress::Mode {
        if quiet {
            progress::Mode::Never
        } else if self.progress {
            progress::Mode::Always
        } else {
            progress::Mode::Auto
        }
    }
}

/// `--color`, for the subcommands that color their text.
#[derive(Args, Debug, Clone)]
pub struct ColorOpts {
    /// When to use color [NO_COLOR and non-terminals turn `auto` off].
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Job inputs")]
pub struct InputArgs {
    /// A running training process to attach to (environment, DataLoader workers, CPU use).
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Find the training process by a pattern in its command line.
    #[arg(long, value_name = "PATTERN", conflicts_with = "pid")]
    pub job: Option<String>,
    /// The job's training config (YAML, JSON or TOML); at most 64 MiB and 64 levels of
    /// `[`/`{` nesting, refused ("input too large") beyond.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The env file the job's launcher reads; env fixes are written there. At most 16 MiB,
    /// refused before it is read beyond.
    #[arg(long = "env-file", value_name = "FILE")]
    pub env_file: Option<PathBuf>,
    /// A PyTorch profiler trace (Chrome trace JSON, plain or .gz), streamed: any size, but no
    /// JSON string over 16 MiB (the trace is not read on: its rules are unknown).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Output of a run with NCCL_DEBUG=INFO. Its first 256 MiB are read; a rule that would
    /// pass on part of a log is unknown.
    #[arg(long = "nccl-log", value_name = "FILE")]
    pub nccl_log: Option<PathBuf>,
    /// A kernel log (dmesg) to read instead of the live one. Its newest 256 MiB are read; a
    /// rule that would pass on part of a log is unknown.
    #[arg(long = "kernel-log", value_name = "FILE")]
    pub kernel_log: Option<PathBuf>,
    /// Pasted diagnostics (nvidia-smi -q, NCCL log, dmesg, memory summary, fstab…); the host
    /// they describe is judged, not this one. Repeatable; at most 64 MiB each.
    #[arg(long, value_name = "FILE")]
    pub evidence: Vec<PathBuf>,
    /// Also run the framework-level CUDA check: import torch in the job's Python and run a
    /// matmul (seconds; the default check talks to libcuda directly and starts no Python).
    #[arg(long, overrides_with = "deep")]
    pub deep: bool,
    /// Reuse a passed native CUDA check younger than this, from the state directory's cache
    /// (only while the boot, driver and GPUs are unchanged; a failed check is never reused).
    /// 0 runs the check every time.
    #[arg(long = "cuda-check-max-age", value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub cuda_check_max_age: Duration,
}

/// The options of one run, resolved from the subcommand's groups; what a subcommand does not
/// take keeps its default (no root, built-in rules only when `no_system`, text, 1s, auto color).
#[derive(Debug, Clone)]
pub struct Global {
    pub root: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub playbooks: Vec<PathBuf>,
    pub values: Option<PathBuf>,
    pub only: Vec<String>,
    pub format: Format,
    pub sample: Duration,
    pub color: ColorWhen,
    pub no_system: bool,
    pub inputs: InputArgs,
    /// How this run shows its progress (`--progress`, `--quiet`).
    pub progress: progress::Progress,
}

impl Default for Global {
    fn default() -> Self {
        Global {
            root: None,
            snapshot: None,
            playbooks: Vec::new(),
            values: None,
            only: Vec::new(),
            format: Format::Text,
            sample: Duration::from_secs(1),
            color: ColorWhen::Auto,
            no_system: false,
            inputs: InputArgs::default(),
            progress: progress::Progress::default(),
        }
    }
}

impl Global {
    fn host(mut self, h: &HostOpts) -> Self {
        self.root = h.root.clone();
        self.snapshot = h.snapshot.clone();
        self.sample = h.sample;
        self.inputs = h.inputs.clone();
        self
    }
    fn rules(mut self, r: &RuleOpts) -> Self {
        self.playbooks = r.playbooks.clone();
        self.values = r.values.clone();
        self.no_system = r.no_system;
        self
    }
    fn playbooks(mut self, r: &PlaybookOpts) -> Self {
        self.playbooks = r.playbooks.clone();
        self.no_system = r.no_system;
        self
    }
    fn only(mut self, o: &OnlyOpts) -> Self {
        self.only = o.only.clone();
        self
    }
    fn format(mut self, f: Format) -> Self {
        self.format = f;
        self
    }
    fn color_opts(mut self, c: &ColorOpts) -> Self {
        self.color = c.color;
        self
    }
    fn root(mut self, r: &RootOpts) -> Self {
        self.root = r.root.clone();
        self
    }
}

/// A `--format` value parser that offers (in help and completions) and accepts only the
/// formats one subcommand writes; any other is a usage error naming the ones it does.
#[derive(Clone, Copy, Debug)]
pub struct FormatParser {
    cmd: &'static str,
    allowed: &'static [Format],
}

impl FormatParser {
    pub const fn new(cmd: &'static str, allowed: &'static [Format]) -> Self {
        FormatParser { cmd, allowed }
    }
}

pub const TEXT_JSON: &[Format] = &[Format::Text, Format::Json];
pub const LIST_FORMATS: &[Format] = &[Format::Text, Format::Json, Format::Markdown];
pub const AUDIT_FORMATS: &[Format] = &[
    Format::Text,
    Format::Json,
    Format::Junit,
    Format::Prometheus,
    Format::Nagios,
    Format::Slurm,
];

impl clap::builder::TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        let given = value.to_string_lossy();
        match Format::from_str(&given, false) {
            Ok(f) if self.allowed.contains(&f) => Ok(f),
            _ => {
                let mut cmd = cmd.clone();
                Err(cmd.error(
                    clap::error::ErrorKind::InvalidValue,
                    unsupported_format_message(self.cmd, &given, self.allowed),
                ))
            }
        }
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.allowed.iter().filter_map(|f| f.to_possible_value()),
        ))
    }
}

/// "`gpufix plan` does not write --format junit" with the formats it does write, and which
/// subcommand writes the one asked for.
fn unsupported_format_message(cmd: &str, given: &str, allowed: &[Format]) -> String {
    let names: Vec<String> = allowed
        .iter()
        .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
        .collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    };
    let elsewhere = match Format::from_str(given, false) {
        Ok(Format::Markdown) => "; markdown is a `gpufix list` format",
        Ok(Format::Junit | Format::Prometheus | Format::Nagios | Format::Slurm) => {
            "; junit, prometheus, nagios and slurm are `gpufix audit` formats"
        }
        _ => "",
    };
    format!("`gpufix {cmd}` does not write --format {given}\nhelp: use {list}{elsewhere}")
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// The library as a printable checklist.
    Markdown,
    /// JUnit XML (Jenkins xunit's junit-10.xsd), one test case per rule.
    Junit,
    /// node_exporter textfile metrics.
    Prometheus,
    /// One Nagios plugin line; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    Nagios,
    /// A Slurm drain reason (`gpufix: RULE…`) or nothing when clean.
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
        after_help = "Examples:\n  gpufix list\n  gpufix list --format markdown > CHECKLIST.md\n  gpufix list --probes\n  gpufix list --fixes\n  gpufix list --evidence"
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
    /// Record a running job over a window: per GPU, per process of the job, the node, the
    /// main thread (py-spy) and its progress, sampled every 200 ms, with the plan's findings.
    #[command(
        after_help = "Writes one JSON file (`gpufix schema record`), every 5 s while it runs and at the end;\n\
Ctrl-C ends the window early and keeps what was recorded (`interrupted: true`).\n\
Exit status: 0 recorded, 1 error.\n\n\
Examples:\n  gpufix record --pid $(pgrep -f train.py) --for 60s -o run.json\n  \
gpufix record --pid 4242 --for 5m --log train.log -o before.json"
    )]
    Record(record::RecordArgs),
    /// Record everything the probes read into one JSON file, for replay with --snapshot.
    #[command(
        after_help = "Example:\n  gpufix snapshot -o node17.json && gpufix plan --snapshot node17.json"
    )]
    Snapshot(snapshot::SnapshotArgs),
    /// Draw a recording as one self-contained HTML page: timeline lanes with each finding on
    /// its window, the main thread's step breakdown, the findings and their fixes; with
    /// --compare, a run before and after a fix side by side.
    #[command(
        after_help = "The page loads nothing (scripts and styles are inline): open it offline or attach it to a ticket. \
It is written 0600, as it holds the host's name, the job's command line and its config's diffs.\n\n\
Exit status: 0 written, 1 error (a file that is not a recording of this version: nothing is written).\n\n\
Examples:\n  gpufix report run.json -o report.html\n  \
gpufix record --pid 4242 --for 60s -o before.json   (then apply the fix, restart the job)\n  \
gpufix record --pid 4343 --for 60s -o after.json\n  \
gpufix report before.json --compare after.json -o report.html"
    )]
    Report(report::ReportArgs),
    /// Print shell completions: bash, zsh, fish, elvish or powershell.
    #[command(after_help = "Example:\n  gpufix completions bash > /etc/bash_completion.d/gpufix")]
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff), or write one per subcommand into a directory.
    #[command(
        after_help = "Examples:\n  gpufix man | man -l -\n  gpufix man --dir /usr/local/share/man/man1    gpufix.1, gpufix-plan.1, gpufix-audit.1, ..."
    )]
    Man(man::ManArgs),
    /// Print a JSON Schema: playbook, values, report, plan, apply (`apply --format json`),
    /// snapshot or record (`gpufix record`).
    Schema {
        #[arg(value_parser = ["playbook", "values", "report", "plan", "apply", "snapshot", "record"])]
        name: String,
    },
}

/// Parse the command line. Options placed before the subcommand (`gpufix --root /host audit`,
/// the form scripts written for earlier versions use) are moved after it first, so each
/// subcommand still accepts only its own options and says so when given another's.
pub fn parse_from(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let args = hoist_leading_options(args);
    Cli::try_parse_from(&args).map_err(|e| with_owner_hint(e, &args))
}

/// An option of another subcommand (`gpufix list --root /host`) gets a `help:` line saying
/// which subcommands take it, instead of clap's bare "unexpected argument".
fn with_owner_hint(e: clap::Error, args: &[OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let name = given.split('=').next().unwrap_or(given);
    let Some(long) = name.strip_prefix("--") else {
        return e;
    };
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let Some(sub) = args
        .get(1)
        .and_then(|w| w.to_str())
        .filter(|w| cmd.find_subcommand(w).is_some())
    else {
        return e;
    };
    let owners: Vec<&str> = cmd
        .get_subcommands()
        .filter(|s| s.get_arguments().any(|a| a.get_long() == Some(long)))
        .map(|s| s.get_name())
        .collect();
    if owners.is_empty() {
        return e;
    }
    let list = match owners.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => owners.join(""),
    };
    let msg = format!(
        "`gpufix {sub}` does not take {name}\nhelp: {name} is an option of {list}; see `gpufix {sub} --help` for this one's"
    );
    let sub = sub.to_string();
    cmd.find_subcommand_mut(&sub)
        .map(|c| c.clone().bin_name(format!("gpufix {sub}")))
        .unwrap_or(cmd)
        .error(ErrorKind::UnknownArgument, msg)
}

/// `[gpufix, --opt, VAL, .., SUB, rest..]` becomes `[gpufix, SUB, --opt, VAL, .., rest..]` when
/// every leading word is a long option some subcommand has; anything else is left for clap to
/// report as it stands.
pub fn hoist_leading_options(args: Vec<OsString>) -> Vec<OsString> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut i = 1;
    while let Some(word) = args.get(i) {
        let Some(word) = word.to_str() else {
            return args;
        };
        if !word.starts_with('-') || word == "-" {
            break;
        }
        let Some(long) = word.strip_prefix("--") else {
            return args; // a short option, or `--`: not ours to move
        };
        let (name, inline_value) = match long.split_once('=') {
            Some((n, _)) => (n, true),
            None => (long, false),
        };
        let takes_value = cmd
            .get_subcommands()
            .flat_map(|s| s.get_arguments())
            .find(|a| a.get_long() == Some(name))
            .map(|a| a.get_action().takes_values());
        match takes_value {
            None => return args, // --help, --version, or unknown: clap answers
            Some(true) if !inline_value => i += 2,
            Some(_) => i += 1,
        }
    }
    let is_subcommand = args
        .get(i)
        .and_then(|w| w.to_str())
        .is_some_and(|w| cmd.find_subcommand(w).is_some());
    if i == 1 || !is_subcommand {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    out.push(args[0].clone());
    out.push(args[i].clone());
    out.extend_from_slice(&args[1..i]);
    out.extend_from_slice(&args[i + 1..]);
    out
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

/// Open the session for a command, printing invalid playbooks' diagnostics (exit 1).
pub fn open_session(g: &Global) -> anyhow::Result<Result<Session, ExitStatus>> {
    Ok(open_session_or_diagnostics(g)?.map_err(|d| print_diagnostics(&d)))
}

/// Open the session; invalid playbooks or values come back as their diagnostics, unprinted.
pub fn open_session_or_diagnostics(g: &Global) -> anyhow::Result<Result<Session, Vec<Diagnostic>>> {
    let spec = g.spec();
    let reading = g.progress.reading(&progress::input_files(&spec));
    let opened = Session::open(spec);
    drop(reading);
    match opened {
        Ok(s) => Ok(Ok(s)),
        Err(OpenError::Invalid(d)) => Ok(Err(d)),
        Err(OpenError::Other(e)) => Err(e),
    }
}

/// The first diagnostic's place and message on one line (`site/x.yaml:4: ...`), for formats
/// that have one line to say it (Nagios).
pub fn first_diagnostic_line(diags: &[Diagnostic]) -> String {
    let Some(d) = diags.first() else {
        return "playbooks or values are invalid".to_string();
    };
    let place = match d.line {
        Some(l) => format!("{}:{l}", d.file),
        None => d.file.clone(),
    };
    let more = match diags.len() {
        1 => String::new(),
        n => format!(" (+{} more)", n - 1),
    };
    format!(
        "{place}: {}{more}",
        d.message.lines().next().unwrap_or_default()
    )
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

/// `gpufix rollback RUN` with the `--root` and `--state-dir` the run was made with, so the hint
/// finds the journal where it is (a shell word per path, quoted when it needs to be).
pub fn rollback_command(run: &str, root: Option<&Path>, state_dir: Option<&Path>) -> String {
    fn word(p: &Path) -> String {
        let s = p.display().to_string();
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
        {
            s
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    }
    let mut cmd = "gpufix rollback".to_string();
    if let Some(r) = root {
        cmd += &format!(" --root {}", word(r));
    }
    if let Some(d) = state_dir {
        cmd += &format!(" --state-dir {}", word(d));
    }
    if !run.is_empty() {
        cmd += &format!(" {run}");
    }
    cmd
}

pub fn display_path(p: &Path) -> String {
    p.display().to_string()
}

pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let g = Global {
        progress: progress::Progress::new(match &cli.command {
            Command::Plan(a) => a.progress.mode(a.quiet),
            Command::Apply(a) => a.progress.mode(false),
            Command::Audit(a) => a.progress.mode(false),
            Command::Snapshot(a) => a.progress.mode(false),
            _ => progress::Mode::Never,
        }),
        ..Global::default()
    };
    match &cli.command {
        Command::Plan(a) => plan::run(
            &g.host(&a.host)
                .rules(&a.rules)
                .only(&a.only)
                .format(a.format)
                .color_opts(&a.color),
            a,
        ),
        Command::Apply(a) => apply::run(
            &g.host(&a.host)
                .rules(&a.rules)
                .only(&a.only)
                .format(a.format),
            a,
        ),
        Command::Audit(a) => audit::run(
            &g.host(&a.host)
                .rules(&a.rules)
                .only(&a.only)
                .format(a.format)
                .color_opts(&a.color),
            a,
        ),
        Command::Rollback(a) => rollback::rollback(&g.root(&a.root).format(a.format), a),
        Command::History(a) => rollback::history(&g.root(&a.root).format(a.format), a),
        Command::Validate(a) => validate::run(&g.rules(&a.rules), a),
        Command::List(a) => list::run(&g.rules(&a.rules).only(&a.only).format(a.format), a),
        Command::Explain(a) => explain::run(&g.rules(&a.rules), a),
        Command::Test(a) => test::run(&g.playbooks(&a.playbooks), a),
        Command::Snapshot(a) => snapshot::run(&g.host(&a.host).rules(&a.rules).only(&a.only), a),
        Command::Record(a) => record::run(&g.host(&a.host).rules(&a.rules).only(&a.only), a),
        Command::Report(a) => report::run(a),
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
                "record" => {
                    serde_json::to_value(schemars::schema_for!(crate::vocab::record::RecordFile))?
                }
                "apply" => serde_json::to_value(schemars::schema_for!(apply::ApplyJson))?,
                _ => serde_json::from_str(include_str!("../../schemas/snapshot.schema.json"))?,
            };
            println!("{}", serde_json::to_string_pretty(&v)?);
            Ok(ExitStatus::Clean)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hoist_leading_options;

    fn hoist(args: &[&str]) -> Vec<String> {
        hoist_leading_options(args.iter().map(Into::into).collect())
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn leading_options_move_after_the_subcommand_with_their_values() {
        assert_eq!(
            hoist(&[
                "gpufix",
                "--root",
                "/host",
                "--no-system",
                "--sample=0",
                "audit",
                "-o",
                "x"
            ]),
            [
                "gpufix",
                "audit",
                "--root",
                "/host",
                "--no-system",
                "--sample=0",
                "-o",
                "x"
            ]
        );
        // a value that looks like a subcommand stays the option's value
        assert_eq!(
            hoist(&["gpufix", "--only", "plan", "list"]),
            ["gpufix", "list", "--only", "plan"]
        );
    }

    #[test]
    fn anything_else_is_left_for_clap() {
        for args in [
            &["gpufix", "plan", "--root", "/"][..],
            &["gpufix", "--bogus", "plan"],
            &["gpufix", "--help", "plan"],
            &["gpufix", "-v", "plan"],
            &["gpufix", "--root", "/", "notacommand"],
            &["gpufix", "--root"],
        ] {
            assert_eq!(hoist(args), args, "{args:?}");
        }
    }
}
