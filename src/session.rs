//! What one run is made of — the host it judges, the inputs it was given, the roots it may write
//! under, the rule set and the fix context — built once from the command line and used by
//! `plan`, `audit`, `apply`, `rollback` and `snapshot`. Also the exit status every subcommand
//! ends with.
//!
//! The CLI turns raw arguments into a [`Spec`] (plain paths and flags, nothing parsed yet);
//! [`Session::open`] reads everything the spec names exactly once: one snapshot parse, one NVML
//! start, one playbook load.

use crate::engine::{self, Options};
use crate::fixes::FixCtx;
use crate::host::Host;
use crate::host::real::RealHost;
use crate::host::recorded::SnapshotHost;
use crate::plan::{MadeFrom, Unplannable};
use crate::playbook::{self, Diagnostic, RuleSet, SourceFile, Tier};
use crate::probes::Inputs;
use crate::report::Report;
use crate::safe_write::Roots;
use crate::trust::TrustError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub const SYSTEM_PLAYBOOKS: &str = "/etc/gpufix/playbooks.d";
pub const SYSTEM_VALUES: &str = "/etc/gpufix/values.yaml";
pub const DEFAULT_STATE_DIR: &str = "/var/lib/gpufix";

/// How a gpufix command ends. Every subcommand returns one; `main` turns it into the process's
/// exit status. Documented in the README ("Exit status").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: nothing found; applied and verified; nothing to do.
    Clean = 0,
    /// 1: an error — invalid playbooks or arguments, a refused or failed apply. With
    /// `--format nagios`: WARNING.
    Error = 1,
    /// 2: findings (a rule failed, is unknown or blocked). With `--format nagios`: CRITICAL.
    Findings = 2,
    /// 3: `--format nagios` only: UNKNOWN (gpufix could not judge the host).
    Unknown = 3,
    /// 4: `apply` made and verified every change, but re-checking the rules afterwards failed
    /// (the changes stay; see `gpufix history`).
    RecheckFailed = 4,
}

impl ExitStatus {
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The status for a report: findings or clean.
    pub fn of_report(report: &Report) -> ExitStatus {
        if report.has_findings() {
            ExitStatus::Findings
        } else {
            ExitStatus::Clean
        }
    }

    /// A Nagios plugin code (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN) as a status.
    pub fn nagios(code: i32) -> ExitStatus {
        match code {
            0 => ExitStatus::Clean,
            1 => ExitStatus::Error,
            2 => ExitStatus::Findings,
            _ => ExitStatus::Unknown,
        }
    }
}

/// Everything a run is built from, as given on the command line (nothing read yet).
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// `--root`, made absolute.
    pub root: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub playbooks: Vec<PathBuf>,
    pub values: Option<PathBuf>,
    pub no_system: bool,
    pub pid: Option<u32>,
    pub job: Option<String>,
    pub config: Option<PathBuf>,
    pub env_file: Option<PathBuf>,
    pub trace: Option<PathBuf>,
    pub nccl_log: Option<PathBuf>,
    pub kernel_log: Option<PathBuf>,
    pub evidence: Vec<PathBuf>,
    /// `--deep`: also the framework-level checks that start Python.
    pub deep: bool,
    /// `--cuda-check-max-age`: reuse a passed native CUDA check this young from the state
    /// directory's cache ([`crate::host::cuda_cache`]); `None` or zero: always run it.
    pub cuda_check_max_age: Option<std::time::Duration>,
}

impl Spec {
    /// A host path (`/etc/…`) where it lives on this machine: under `--root` when given.
    pub fn host_path(&self, p: &str) -> PathBuf {
        match &self.root {
            Some(r) => r.join(p.trim_start_matches('/')),
            None => PathBuf::from(p),
        }
    }

    /// Built-ins, then /etc/gpufix/playbooks.d (under --root), then --playbooks.
    pub fn sources(&self) -> Result<Vec<SourceFile>, Vec<Diagnostic>> {
        let mut out = playbook::builtin_sources();
        let mut diags = Vec::new();
        if !self.no_system {
            let sys = self.host_path(SYSTEM_PLAYBOOKS);
            if sys.is_dir() {
                match read_playbooks(&sys, Tier::System) {
                    Ok(s) => out.extend(s),
                    Err(d) => diags.push(d),
                }
            }
        }
        for p in &self.playbooks {
            match read_playbooks(p, Tier::Cli) {
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

    /// The values file: `--values`, else /etc/gpufix/values.yaml (under --root) if present.
    pub fn values_source(&self) -> Result<Option<SourceFile>, Vec<Diagnostic>> {
        let (path, explicit) = match &self.values {
            Some(p) => (p.clone(), true),
            None if self.no_system => return Ok(None),
            None => (self.host_path(SYSTEM_VALUES), false),
        };
        if !explicit && !path.exists() {
            return Ok(None);
        }
        read_trusted(&path, "values file", MAX_VALUES_BYTES)
            .map(|text| {
                Some(SourceFile {
                    name: path.display().to_string(),
                    text,
                    tier: Tier::Cli,
                })
            })
            .map_err(|(message, help)| {
                vec![Diagnostic::new(
                    "unreadable-values",
                    &path.display().to_string(),
                    message,
                    help,
                )]
            })
    }

    /// Load and validate the rule set (every problem at once).
    pub fn rule_set(&self) -> Result<RuleSet, Vec<Diagnostic>> {
        let sources = self.sources()?;
        let values = self.values_source()?;
        playbook::validate::load(&sources, values.as_ref())
    }

    /// The host this run judges: pasted evidence, a snapshot, or this machine (under --root).
    pub fn host(&self) -> anyhow::Result<Arc<dyn Host>> {
        // A mistyped --root is a usage error, never an empty host whose rules all read unknown
        // (or an apply that finds nothing to do).
        if let Some(r) = &self.root {
            match std::fs::metadata(r) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => anyhow::bail!(
                    "--root {}: not a directory; give the directory the host's `/` is mounted at",
                    r.display()
                ),
                Err(e) => anyhow::bail!(
                    "--root {}: {e}; give the directory the host's `/` is mounted at",
                    r.display()
                ),
            }
        }
        for p in &self.evidence {
            check_input_file("--evidence", p, MAX_EVIDENCE_BYTES)?;
        }
        if let Some(h) = crate::host::evidence::EvidenceHost::from_files(&self.evidence)? {
            if self.snapshot.is_some() || self.root.is_some() {
                anyhow::bail!(
                    "--evidence with nvidia-smi output, fstab or /proc/mounts judges the host it describes; it cannot be combined with --root or --snapshot"
                );
            }
            return Ok(Arc::new(h));
        }
        let job_inputs = !self.evidence.is_empty()
            || self.nccl_log.is_some()
            || self.kernel_log.is_some()
            || self.trace.is_some()
            || self.config.is_some();
        // A job's logs or config given on a machine without an NVIDIA driver (a laptop, CI)
        // come from another machine: judge them alone, never this one.
        if job_inputs
            && self.snapshot.is_none()
            && self.root.is_none()
            && self.pid.is_none()
            && self.job.is_none()
            && crate::host::evidence::no_local_driver()
        {
            return Ok(Arc::new(crate::host::evidence::EvidenceHost::inputs_only(
                "the inputs given (this machine has no NVIDIA driver, so it is not judged)",
            )));
        }
        Ok(match &self.snapshot {
            Some(f) => Arc::new(SnapshotHost::load(f)?),
            None => {
                let cache = self.cuda_check_max_age.filter(|d| !d.is_zero()).map(|d| {
                    crate::host::cuda_cache::CudaCache::in_state_dir(&self.state_dir(None), d)
                });
                Arc::new(RealHost::new(self.root.clone()).with_cuda_cache(cache))
            }
        })
    }

    /// The inputs (`--pid`/`--job`, `--config`, `--env-file`, logs) checked against `host`.
    pub fn inputs(&self, host: &dyn Host) -> anyhow::Result<Inputs> {
        let pid = match (&self.pid, &self.job) {
            // A process that does not exist is a usage error, as `--job` matching none is:
            // never a report of unknowns about it.
            (Some(p), _) if host.is_live() && host.metadata(&format!("/proc/{p}")).is_err() => {
                anyhow::bail!(
                    "--pid {p}: no such process on {}; give the pid of the running training process, or find it with --job PATTERN",
                    host.describe()
                )
            }
            (Some(p), _) => Some(*p),
            (None, Some(pat)) => Some(find_job(host, pat)?),
            _ => None,
        };
        // Logs and traces are streamed or read in part (see their caps); a config or an env
        // file is parsed whole, so a larger one is refused before a byte of it is read.
        for (flag, p, cap) in [
            ("--config", &self.config, MAX_CONFIG_BYTES),
            ("--env-file", &self.env_file, MAX_ENV_FILE_BYTES),
            ("--trace", &self.trace, u64::MAX),
            ("--nccl-log", &self.nccl_log, u64::MAX),
            ("--kernel-log", &self.kernel_log, u64::MAX),
        ] {
            if let Some(p) = p {
                check_input_file(flag, p, cap)?;
            }
        }
        Ok(Inputs {
            pid,
            config: self.config.clone(),
            env_file: self.env_file.clone(),
            trace: self.trace.clone(),
            nccl_log: self.nccl_log.clone(),
            kernel_log: self.kernel_log.clone(),
            evidence: self.evidence.clone(),
            deep: self.deep,
        })
    }

    /// Absolute `--config` / `--env-file`: written as given, never mapped under `--root`.
    pub fn local_files(&self) -> Vec<PathBuf> {
        [&self.config, &self.env_file]
            .into_iter()
            .flatten()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect()
    }

    /// Where fixes may write: `--root` (or `/`) and the directories of the local files.
    pub fn roots(&self, local: &[PathBuf]) -> Roots {
        roots_for(self.root.as_deref(), local)
    }

    /// The state directory (lock, journal): `explicit`, else /var/lib/gpufix under --root.
    pub fn state_dir(&self, explicit: Option<&Path>) -> PathBuf {
        match explicit {
            Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf()),
            None => self.host_path(DEFAULT_STATE_DIR),
        }
    }
}

fn abs(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// The inputs a command line names that differ from the plan's (`apply PLAN --config x`):
/// one line per flag, `--config: the plan was made with …, this command line has …`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", clash.join("\n"))]
pub struct InputsClash {
    pub clash: Vec<String>,
}

impl Spec {
    /// What a plan made from this spec records (`plan -o`).
    pub fn made_from(&self, eval: &Eval) -> MadeFrom {
        let opt = |p: &Option<PathBuf>| p.as_deref().map(abs);
        MadeFrom {
            playbooks: self.playbooks.iter().map(|p| abs(p)).collect(),
            values: opt(&self.values),
            no_system: self.no_system,
            snapshot: opt(&self.snapshot),
            pid: self.pid,
            config: opt(&self.config),
            env_file: opt(&self.env_file),
            trace: opt(&self.trace),
            nccl_log: opt(&self.nccl_log),
            kernel_log: opt(&self.kernel_log),
            evidence: self.evidence.iter().map(|p| abs(p)).collect(),
            only: eval.only.clone(),
            sample_ms: eval.sample.as_millis() as u64,
        }
    }

    /// The spec and evaluation `apply PLAN` uses: the plan's own, where the command line names
    /// nothing else. Every flag the command line gives must match the plan's.
    pub fn for_plan(&self, eval: &Eval, m: &MadeFrom) -> Result<(Spec, Eval), InputsClash> {
        let mine = self.made_from(eval);
        let mut clash = Vec::new();
        let mut pick_opt = |flag: &str, given: &Option<String>, plan: &Option<String>| {
            if given.is_some() && given != plan {
                clash.push(format!(
                    "{flag}: the plan was made with {}, this command line has {}",
                    plan.as_deref().unwrap_or("none"),
                    given.as_deref().unwrap_or("none")
                ));
            }
            plan.as_ref().map(PathBuf::from)
        };
        let values = pick_opt("--values", &mine.values, &m.values);
        let snapshot = pick_opt("--snapshot", &mine.snapshot, &m.snapshot);
        let config = pick_opt("--config", &mine.config, &m.config);
        let env_file = pick_opt("--env-file", &mine.env_file, &m.env_file);
        let trace = pick_opt("--trace", &mine.trace, &m.trace);
        let nccl_log = pick_opt("--nccl-log", &mine.nccl_log, &m.nccl_log);
        let kernel_log = pick_opt("--kernel-log", &mine.kernel_log, &m.kernel_log);
        let mut pick_list = |flag: &str, given: &Vec<String>, plan: &Vec<String>| {
            if !given.is_empty() && given != plan {
                clash.push(format!(
                    "{flag}: the plan was made with [{}], this command line has [{}]",
                    plan.join(", "),
                    given.join(", ")
                ));
            }
            plan.clone()
        };
        let playbooks = pick_list("--playbooks", &mine.playbooks, &m.playbooks);
        let evidence = pick_list("--evidence", &mine.evidence, &m.evidence);
        let only = pick_list("--only", &mine.only, &m.only);
        if mine.pid.is_some() && mine.pid != m.pid {
            clash.push(format!(
                "--pid: the plan was made with {:?}, this command line has {:?}",
                m.pid, mine.pid
            ));
        }
        if mine.no_system && !m.no_system {
            clash.push("--no-system: the plan was made reading /etc/gpufix".into());
        }
        if !clash.is_empty() {
            return Err(InputsClash { clash });
        }
        let spec = Spec {
            root: self.root.clone(),
            snapshot,
            playbooks: playbooks.into_iter().map(PathBuf::from).collect(),
            values,
            no_system: m.no_system,
            pid: m.pid,
            job: None,
            config,
            env_file,
            trace,
            nccl_log,
            kernel_log,
            evidence: evidence.into_iter().map(PathBuf::from).collect(),
            // the torch check changes no fix: a plan is re-derived without it
            deep: false,
            cuda_check_max_age: self.cuda_check_max_age,
        };
        let eval = Eval {
            sample: Duration::from_millis(m.sample_ms),
            probe_deadline: eval.probe_deadline,
            only,
            timings: false,
        };
        Ok((spec, eval))
    }
}

/// Largest playbook file read (the built-in six layers together are under 200 KB).
pub const MAX_PLAYBOOK_BYTES: u64 = 16 << 20;
/// Largest values file read.
pub const MAX_VALUES_BYTES: u64 = 4 << 20;
pub use crate::vocab::io::{MAX_NESTING, nesting_depth};

/// Read a file gpufix takes instructions from: trusted (see [`crate::trust`]), a regular file,
/// at most `cap` bytes, UTF-8, nesting within [`MAX_NESTING`]. Errors are (message, help).
pub fn read_trusted(path: &Path, what: &str, cap: u64) -> Result<String, (String, String)> {
    use std::io::Read;
    // checked on the descriptor it reads: a link flipped after a check cannot swap the file
    let f = crate::trust::open_trusted(path, what).map_err(|e| {
        let help = if e.help.is_empty() {
            format!("check the {what}")
        } else {
            e.help
        };
        (e.message, help)
    })?;
    let meta = f.metadata().map_err(|e| {
        (
            format!("cannot read {what}: {e}"),
            format!("check the {what}'s path"),
        )
    })?;
    if !meta.is_file() {
        return Err((
            format!("cannot read {what}: it is not a regular file"),
            format!("give the path of a {what}"),
        ));
    }
    if meta.len() > cap {
        return Err((
            format!(
                "cannot read {what}: input too large ({} bytes, the limit is {cap})",
                meta.len()
            ),
            "split it into several files".into(),
        ));
    }
    let mut text = String::new();
    f.take(cap + 1).read_to_string(&mut text).map_err(|e| {
        (
            format!("cannot read {what}: {e}"),
            "make it UTF-8 YAML".to_string(),
        )
    })?;
    if text.len() as u64 > cap {
        return Err((
            format!("cannot read {what}: input too large (over {cap} bytes)"),
            "split it into several files".into(),
        ));
    }
    let depth = nesting_depth(&text);
    if depth > MAX_NESTING {
        return Err((
            format!("{what} nests `[`/`{{` {depth} levels deep; the limit is {MAX_NESTING}"),
            "write nested data as block YAML with fewer levels".into(),
        ));
    }
    Ok(text)
}

/// Read `*.yaml`/`*.yml` from a playbook directory (sorted by name), or a single file; the
/// directory and each file must be trusted.
pub fn read_playbooks(path: &Path, tier: Tier) -> Result<Vec<SourceFile>, Diagnostic> {
    let diag = |file: &Path, (message, help): (String, String)| {
        Diagnostic::new(
            "unreadable-playbook",
            &file.display().to_string(),
            message,
            help,
        )
    };
    let meta = std::fs::metadata(path).map_err(|e| {
        diag(
            path,
            (
                format!("cannot read playbooks: {e}"),
                "check the path given to `--playbooks` (a directory of .yaml files or one file)"
                    .into(),
            ),
        )
    })?;
    let files: Vec<PathBuf> = if meta.is_dir() {
        crate::trust::check(path, "playbook directory")
            .map_err(|e| diag(path, (e.message, e.help)))?;
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| diag(path, (format!("cannot read playbooks: {e}"), String::new())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    files
        .into_iter()
        .map(|f| {
            let text = read_trusted(&f, "playbook", MAX_PLAYBOOK_BYTES).map_err(|e| diag(&f, e))?;
            Ok(SourceFile {
                name: f.display().to_string(),
                text,
                tier,
            })
        })
        .collect()
}

pub use crate::vocab::io::{MAX_CONFIG_BYTES, MAX_ENV_FILE_BYTES};

/// Largest pasted evidence file (`--evidence`): nvidia-smi output, logs, fstab.
pub const MAX_EVIDENCE_BYTES: u64 = 64 << 20;

/// An input named on the command line must be an existing regular file (a FIFO or a device
/// would block or never end) of at most `cap` bytes. The refusal says what to give instead.
fn check_input_file(flag: &str, p: &Path, cap: u64) -> Result<(), TrustError> {
    let refuse = |what: String, help: &str| TrustError {
        message: format!("{flag} {}: {what}", p.display()),
        help: help.into(),
    };
    let m = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refuse(
                "no such file".into(),
                "give the path of an existing file",
            ));
        }
        Err(e) => return Err(refuse(e.to_string(), "give the path of a readable file")),
    };
    if !m.is_file() {
        return Err(refuse(
            "not a regular file".into(),
            "save the text to a file and give its path",
        ));
    }
    if m.len() > cap {
        return Err(refuse(
            format!("input too large ({} bytes, the limit is {cap})", m.len()),
            "give the relevant part of it",
        ));
    }
    Ok(())
}

/// Where fixes may write, given a root (None = `/`) and the files named on the command line.
pub fn roots_for(root: Option<&Path>, local: &[PathBuf]) -> Roots {
    let mut r: Vec<PathBuf> = vec![root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf)];
    r.extend(
        local
            .iter()
            .filter_map(|p| p.parent().map(|d| d.to_path_buf())),
    );
    Roots::new(r)
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

/// Why a session could not be opened: invalid playbooks (every problem, to print at once), or
/// anything else (an unreadable snapshot, a missing `--config`).
#[derive(Debug)]
pub enum OpenError {
    Invalid(Vec<Diagnostic>),
    Other(anyhow::Error),
}

impl From<anyhow::Error> for OpenError {
    fn from(e: anyhow::Error) -> Self {
        OpenError::Other(e)
    }
}

/// One run: built once, shared by every step of a subcommand.
pub struct Session {
    pub spec: Spec,
    pub host: Arc<dyn Host>,
    pub inputs: Arc<Inputs>,
    /// `--config` / `--env-file`, absolute.
    pub local_files: Vec<PathBuf>,
    /// Where fixes may write.
    pub roots: Roots,
    /// The validated rules (empty for a session opened with [`Session::without_rules`]).
    pub rules: RuleSet,
}

/// How to evaluate: the probe deadline, the sampling window and which rules.
#[derive(Debug, Clone)]
pub struct Eval {
    pub sample: Duration,
    pub probe_deadline: Duration,
    pub only: Vec<String>,
    /// Put the run's timings in the report (`plan --timings`).
    pub timings: bool,
}

impl Session {
    /// Host, inputs, roots and the validated rule set.
    pub fn open(spec: Spec) -> Result<Session, OpenError> {
        Self::open_with(spec, |h| h)
    }

    /// As [`Session::open`], with the host wrapped (snapshot records through a recording host).
    pub fn open_with(
        spec: Spec,
        wrap: impl FnOnce(Arc<dyn Host>) -> Arc<dyn Host>,
    ) -> Result<Session, OpenError> {
        let base = spec.host()?;
        // a session with rules will probe: NVML starts while the playbooks load
        base.warm_up();
        let host = wrap(base);
        let inputs = Arc::new(spec.inputs(host.as_ref())?);
        let rules = spec.rule_set().map_err(OpenError::Invalid)?;
        let local_files = spec.local_files();
        let roots = spec.roots(&local_files);
        Ok(Session {
            spec,
            host,
            inputs,
            local_files,
            roots,
            rules,
        })
    }

    /// Host, inputs and roots, no rules (rollback acts on a journal, not on playbooks).
    pub fn without_rules(spec: Spec) -> anyhow::Result<Session> {
        let host = spec.host()?;
        let inputs = Arc::new(spec.inputs(host.as_ref())?);
        let local_files = spec.local_files();
        let roots = spec.roots(&local_files);
        Ok(Session {
            spec,
            host,
            inputs,
            local_files,
            roots,
            rules: RuleSet::default(),
        })
    }

    /// The context fixes are planned, applied and undone in.
    pub fn fix_ctx(&self) -> FixCtx<'_> {
        FixCtx {
            host: self.host.as_ref(),
            inputs: &self.inputs,
            roots: &self.roots,
            local_files: self.local_files.clone(),
            overlay: Default::default(),
        }
    }

    /// Observe and evaluate the rules; `on_probe_done` is called as each probe finishes.
    pub fn evaluate(
        &self,
        eval: &Eval,
        on_probe_done: impl FnMut(&engine::observe::ProbeKey),
    ) -> Report {
        let opts = Options {
            sample: eval.sample,
            probe_deadline: eval.probe_deadline,
            only: eval.only.clone(),
            timings: eval.timings,
            ..Options::default()
        };
        crate::host::real::probing(true);
        let report = engine::evaluate(
            &self.rules,
            self.host.clone(),
            self.inputs.clone(),
            &opts,
            on_probe_done,
        );
        crate::host::real::probing(false);
        report
    }

    /// Plan every failing rule's fix into changes (read-only); returns the fixes that could
    /// not be planned.
    pub fn plan_changes(&self, report: &mut Report) -> Vec<Unplannable> {
        crate::plan::plan_changes(report, &self.fix_ctx())
    }

    /// The state directory of this run.
    pub fn state_dir(&self, explicit: Option<&Path>) -> PathBuf {
        self.spec.state_dir(explicit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input that is not taken says so in its message and what to give instead in its
    /// `help` field; the command line prints the two as `message\nhelp: …`.
    #[test]
    fn an_input_file_refused_carries_its_help_as_a_field() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.env");
        let e = check_input_file("--env-file", &missing, 10).unwrap_err();
        assert_eq!(
            e.message,
            format!("--env-file {}: no such file", missing.display())
        );
        assert_eq!(e.help, "give the path of an existing file");
        assert_eq!(
            e.to_string(),
            format!(
                "--env-file {}: no such file\nhelp: give the path of an existing file",
                missing.display()
            )
        );
        let big = dir.path().join("big.env");
        std::fs::write(&big, "A=1\nB=2\n").unwrap();
        let e = check_input_file("--env-file", &big, 4).unwrap_err();
        assert!(
            e.message
                .ends_with("input too large (8 bytes, the limit is 4)"),
            "{e}"
        );
        assert_eq!(e.help, "give the relevant part of it");
        assert!(check_input_file("--env-file", &big, 8).is_ok());
        assert_eq!(
            check_input_file("--env-file", dir.path(), 8)
                .unwrap_err()
                .help,
            "save the text to a file and give its path"
        );
    }
}
