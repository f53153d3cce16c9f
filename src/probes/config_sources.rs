//! Where a job's settings come from, and what they are: `--config`, job text given as
//! `--evidence` (Python, configs, launcher lines, logs), and — with `--pid` — the process's
//! own command line, working directory and training script (config discovery). Each setting
//! the data rules read (`num_workers`, `pin_memory`, `persistent_workers`, `bucket_cap_mb`)
//! is found at any depth under the names frameworks use, and remembered with the file and key
//! that set it, so the fix edits that place.
//!
//! With `--pid` the job's Python is the script (or the `-m` module) and up to 8 local modules
//! it imports; configs are the ones its command line names, the ones a path literal in its
//! Python names, and Hydra's. A job in another mount namespace is read through
//! `/proc/PID/root` with each link resolved inside that root. Nothing is executed.
//!
//! Precedence, highest first: a site's own key paths (`keys:`); the training DataLoader call
//! in Python (a literal, a module constant, or `args.X` resolved through the command line or
//! the argparse default; an absent keyword is torch's default); a command-line setting
//! (`--num_workers 2`, `data.num_workers=0`); a config file (explicit `--config` before
//! discovered files). Validation/test loaders count only when nothing else sets a value.

use super::config::get_path;
use crate::formats::job_text::{self, JobText, LogWarning};
use crate::formats::launcher::{self, Launch};
use crate::formats::python::{self, PyValue};
use crate::host::Host;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Files larger than this are not read (a config or script is far smaller).
pub const MAX_TEXT: u64 = 4 * 1024 * 1024;

/// One text the job is made of.
#[derive(Debug, Clone)]
pub struct Doc {
    /// the path as shown and as a fix would edit it
    pub path: String,
    pub kind: JobText,
    pub text: String,
    pub data: Option<Value>,
    /// how it was found: `--config`, `--evidence`, `argv of PID 123`, …
    pub origin: String,
    /// a key prefix its keys live under in the composed config (Hydra group files)
    pub prefix: String,
}

/// One value of a setting, and where it was set.
#[derive(Debug, Clone)]
pub struct Found {
    pub setting: &'static str,
    /// None when it cannot be judged (see `unjudged`)
    pub value: Option<Value>,
    pub unjudged: Option<String>,
    /// the file a fix edits ("" when the value comes from a command line)
    pub file: String,
    /// the key a fix sets in that file
    pub key: String,
    /// for messages: `train.py:57 DataLoader(…) (num_workers absent: torch's default 0)`
    pub source: String,
    pub rank: u8,
    pub eval_only: bool,
}

#[derive(Debug, Default)]
pub struct Gathered {
    pub docs: Vec<Doc>,
    pub launches: Vec<(Launch, String)>,
    pub warnings: Vec<(LogWarning, String)>,
    pub found: Vec<Found>,
    pub notes: Vec<String>,
    /// processes of this job on the node (ranks), from the launcher or the process tree
    pub ranks: Option<u64>,
}

/// Why a file given on the command line or named by the job was not read; each message names
/// the file. A caller tells a file that is not there ([`FileError::NotFound`]) from one that
/// is there and refused or unreadable.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Resolving the path inside the job's root met more symbolic links than it follows.
    #[error("{path}: more than {MAX_LINKS} symbolic links")]
    TooManyLinks { path: String },
    /// No file at the host path `at`.
    #[error("{at}: not found")]
    NotFound { at: String },
    /// Refused by the read as the job's owner ([`crate::authority`], [`Host::read_job_file`]):
    /// not the owner's to read, too large, not a regular file. Its sentence names the file.
    #[error("{0}")]
    Refused(std::io::Error),
    /// Any other failure to read `at`.
    #[error("cannot read {at}: {source}")]
    Unreadable {
        at: String,
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file (a directory, a device).
    #[error("{path} is not a regular file")]
    NotRegular { path: String },
    /// Larger than [`MAX_TEXT`].
    #[error("{path} is larger than {} MiB", MAX_TEXT >> 20)]
    TooLarge { path: String },
}

fn read_local(path: &std::path::Path) -> Result<String, FileError> {
    let unreadable = |source| FileError::Unreadable {
        at: path.display().to_string(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: path.display().to_string(),
        });
    }
    if meta.len() > MAX_TEXT {
        return Err(FileError::TooLarge {
            path: path.display().to_string(),
        });
    }
    let b = std::fs::read(path).map_err(unreadable)?;
    Ok(String::from_utf8_lossy(&b).into_owned())
}

/// How the job's own files are reached. A job in another mount namespace (a container) sees
/// its files under its own root: they are read through `/proc/PID/root`, each symbolic link
/// resolved by hand inside that root (an absolute or `..` link never leads out of it), so a
/// link the job's image holds cannot make gpufix read a file of the host. The read itself is
/// [`Host::read_job_file`]: opened with the job owner's authority, resolved again inside the
/// job's root by the kernel (a link swapped in after the walk above still stays inside), and
/// checked on the opened descriptor ([`crate::authority`]).
struct JobFs<'a> {
    host: &'a dyn Host,
    /// the process whose owner's authority the files are read with
    pid: u32,
    /// `/proc/PID/root` for a job in a container, else None (the job sees the host's files)
    root: Option<String>,
}

/// Symbolic links followed while resolving one path, at most.
const MAX_LINKS: usize = 16;

impl JobFs<'_> {
    fn new(host: &dyn Host, pid: u32) -> JobFs<'_> {
        let ns = |p: &str| host.read_link(&format!("/proc/{p}/ns/mnt")).ok();
        let (job, mine) = (ns(&pid.to_string()), ns("self"));
        let root = match (job, mine) {
            (Some(a), Some(b)) if a != b => Some(format!("/proc/{pid}/root")),
            _ => None,
        };
        JobFs { host, pid, root }
    }

    /// The host path of a path the job sees.
    fn resolve(&self, path: &str) -> Result<String, FileError> {
        let Some(root) = &self.root else {
            return Ok(path.to_string());
        };
        let mut todo: std::collections::VecDeque<String> =
            path.split('/').map(str::to_string).collect();
        let mut done: Vec<String> = Vec::new();
        let mut links = 0;
        while let Some(c) = todo.pop_front() {
            match c.as_str() {
                "" | "." => continue,
                ".." => {
                    done.pop();
                    continue;
                }
                _ => {}
            }
            let here =
                format!("{root}/{}", [done.join("/"), c.clone()].join("/")).replace("//", "/");
            match self.host.read_link(&here) {
                Ok(target) => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(FileError::TooManyLinks {
                            path: path.to_string(),
                        });
                    }
                    if target.starts_with('/') {
                        done.clear();
                    }
                    for (i, t) in target.split('/').enumerate() {
                        todo.insert(i, t.to_string());
                    }
                }
                Err(_) => done.push(c),
            }
        }
        Ok(format!("{root}/{}", done.join("/")))
    }

    /// Read a file the job names as the job's owner; returns the host path it was read at.
    fn read(&self, path: &str) -> Result<(String, String), FileError> {
        self.read_by(self.pid, path)
    }

    /// Read a file process `pid` of the job names (its launch script), as that process's owner.
    fn read_by(&self, pid: u32, path: &str) -> Result<(String, String), FileError> {
        let at = self.resolve(path)?;
        let b = self
            .host
            .read_job_file(pid, &at, MAX_TEXT)
            .map_err(|e| match e.kind() {
                // the sentences crate::authority and Host::read_job_file give name the file
                std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::FileTooLarge
                | std::io::ErrorKind::InvalidInput => FileError::Refused(e),
                std::io::ErrorKind::NotFound => FileError::NotFound { at: at.clone() },
                _ => FileError::Unreadable {
                    at: at.clone(),
                    source: e,
                },
            })?;
        Ok((at, String::from_utf8_lossy(&b).into_owned()))
    }
}

/// Why a job file is none of the kinds [`classify`] knows.
#[derive(Debug, thiserror::Error)]
enum ClassifyError {
    /// Named for a config format, and larger than a training config holds: not parsed.
    #[error("{:.1} MB is more than a training config holds ({} MiB at most): not read as {}", *bytes as f64 / 1e6, crate::formats::config::MAX_SNIFF_BYTES >> 20, format.id())]
    TooLarge {
        bytes: usize,
        format: crate::formats::config::ConfigFormat,
    },
    /// Named for a config format, with a syntax error in it.
    #[error(transparent)]
    Syntax(crate::formats::config::ReadError),
    /// Python source the grammar gives no tree of (nested past the depth limit, too large, too
    /// slow to parse): nothing in it is read, and the reading says why.
    #[error(transparent)]
    NoTree(crate::formats::syntax::ProofError),
    /// Neither its name nor its content says what it is.
    #[error("not a config, Python source, command line or training log")]
    Unknown,
}

/// Python source is read on its tree: a text the grammar gives none of is not read, and says
/// why, rather than reading as a source that sets nothing.
fn python_tree(text: &str) -> Result<(JobText, Option<Value>), ClassifyError> {
    use crate::formats::syntax::{Lang, ProofError, parse};
    match parse(Lang::Python, text) {
        Err(
            e @ (ProofError::TooDeep { .. }
            | ProofError::TooLarge { .. }
            | ProofError::TooSlow { .. }),
        ) => Err(ClassifyError::NoTree(e)),
        _ => Ok((JobText::Python, None)),
    }
}

/// What a job file is, with its parsed data for a config; `Err` says why it is none of them.
fn classify(path: &str, text: &str) -> Result<(JobText, Option<Value>), ClassifyError> {
    let lower = path.to_ascii_lowercase();
    // an extension that says it, then content
    if lower.ends_with(".py") {
        return python_tree(text);
    }
    // a config named for its format is read as that format, and one with a syntax error says
    // so; past MAX_SNIFF_BYTES it is not parsed at all, and says its size
    let mut syntax = None;
    if let Some(format) =
        crate::formats::config::ConfigFormat::from_path(std::path::Path::new(&lower))
    {
        let max = crate::formats::config::MAX_SNIFF_BYTES;
        if text.len() > max {
            return Err(ClassifyError::TooLarge {
                bytes: text.len(),
                format,
            });
        }
        match crate::formats::config::read_as(text, format) {
            Ok(v) if v.as_object().is_some_and(|m| !m.is_empty()) => {
                return Ok((JobText::Config(format.id()), Some(v)));
            }
            Ok(_) => {}
            Err(e) => syntax = Some(e),
        }
    }
    let unknown = || match &syntax {
        Some(e) => ClassifyError::Syntax(e.clone()),
        None => ClassifyError::Unknown,
    };
    match job_text::detect(text) {
        Some(JobText::Config(f)) => job_text::parse_structured(text)
            .map(|(_, v)| (JobText::Config(f), Some(v)))
            .ok_or_else(unknown),
        Some(JobText::Python) => python_tree(text),
        Some(k) => Ok((k, None)),
        None => Err(unknown()),
    }
}

fn join_path(dir: &str, p: &str) -> String {
    if p.starts_with('/') {
        p.to_string()
    } else {
        let p = p.trim_start_matches("./");
        format!("{}/{p}", dir.trim_end_matches('/'))
    }
}

fn dirname(p: &str) -> &str {
    p.rsplit_once('/')
        .map_or(".", |(d, _)| if d.is_empty() { "/" } else { d })
}

impl Gathered {
    fn add_doc(&mut self, path: String, text: String, origin: &str, prefix: &str) {
        if self.docs.iter().any(|d| d.path == path) {
            return;
        }
        match classify(&path, &text) {
            Ok((kind, data)) => {
                if kind == JobText::Launcher || kind == JobText::Log {
                    for l in launcher::find(&text) {
                        self.launches.push((l, path.clone()));
                    }
                    for w in job_text::log_warnings(&text) {
                        self.warnings.push((w, path.clone()));
                    }
                }
                self.docs.push(Doc {
                    path,
                    kind,
                    text,
                    data,
                    origin: origin.to_string(),
                    prefix: prefix.to_string(),
                });
            }
            Err(why) => self.notes.push(format!("{path} ({origin}): {why}")),
        }
    }
}

/// Gather every source: explicit files, evidence, and the process.
pub fn gather(
    host: &dyn Host,
    config: Option<&std::path::Path>,
    evidence: &[std::path::PathBuf],
    pid: Option<u32>,
) -> Gathered {
    let mut g = Gathered::default();
    if let Some(p) = config {
        let shown = std::path::absolute(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .display()
            .to_string();
        match read_local(p) {
            Ok(t) => g.add_doc(shown, t, "--config", ""),
            Err(e) => g.notes.push(e.to_string()),
        }
    }
    for p in evidence {
        let shown = std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string();
        // a paste, read as pasted texts are (how it was carried taken off); `--config` above is
        // read as it is, since a fix edits it
        let Ok(t) = read_local(p).map(crate::vocab::paste::unwrap) else {
            continue;
        };
        // a post around the job text (a question above a pasted log, a fenced config): the
        // text it pastes, its own line numbers kept
        if let Some((_, t)) = crate::evidence::segment::job_text_in_paste(&t) {
            g.add_doc(shown, t.into_owned(), "--evidence", "");
        } else if let Some(rest) = crate::evidence::segment::unread_lines(&t)
            && let Some((_, t)) = crate::evidence::segment::job_text_in_paste(&rest)
        {
            // job text beside output the kinds read (a traceback above an nvidia-smi table)
            g.add_doc(shown, t.into_owned(), "--evidence", "");
        }
    }
    if let Some(pid) = pid {
        discover(host, pid, config.is_some(), &mut g);
    }
    resolve(&mut g);
    g
}

fn argv_of(host: &dyn Host, pid: u32) -> Vec<String> {
    host.read_file(&format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn children_of(host: &dyn Host, pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for t in host
        .read_dir(&format!("/proc/{pid}/task"))
        .unwrap_or_default()
    {
        if let Ok(b) = host.read_file(&format!("/proc/{pid}/task/{t}/children")) {
            out.extend(
                String::from_utf8_lossy(&b)
                    .split_whitespace()
                    .filter_map(|x| x.parse::<u32>().ok()),
            );
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The training processes of a job given by PID: PID itself, or — when PID is a launcher
/// (torchrun, deepspeed, accelerate) — its children that run the training script.
pub fn training_processes(host: &dyn Host, pid: u32) -> Vec<u32> {
    let argv = argv_of(host, pid);
    let l = launcher::parse(&argv);
    if l.as_ref().is_some_and(|l| l.launcher.is_some()) {
        let kids: Vec<u32> = children_of(host, pid)
            .into_iter()
            .filter(|k| {
                let a = argv_of(host, *k);
                launcher::parse(&a).is_some_and(|l| l.script.is_some() || l.module.is_some())
            })
            .collect();
        if !kids.is_empty() {
            return kids;
        }
    }
    vec![pid]
}

fn discover(host: &dyn Host, pid: u32, explicit: bool, g: &mut Gathered) {
    let top = argv_of(host, pid);
    if top.is_empty() {
        g.notes.push(format!(
            "the command line of PID {pid} is unreadable: no config discovered"
        ));
        return;
    }
    let ranks = training_processes(host, pid);
    let mut launches = Vec::new();
    if let Some(l) = launcher::parse(&top)
        && l.launcher.is_some()
    {
        launches.push((l, pid));
    }
    if ranks != vec![pid] || launches.is_empty() {
        g.ranks = Some(ranks.len() as u64);
    }
    let rank0 = ranks[0];
    let argv = argv_of(host, rank0);
    let Some(l) = launcher::parse(&argv) else {
        g.notes.push(format!(
            "PID {rank0} (`{}`) does not run a Python training script",
            argv.join(" ")
        ));
        return;
    };
    let cwd = host
        .read_link(&format!("/proc/{rank0}/cwd"))
        .unwrap_or_else(|_| "/".into());
    let origin = format!("argv of PID {rank0}");
    if let Some((outer, _)) = launches.first()
        && let Some(n) = outer.nproc_per_node
    {
        g.ranks = Some(u64::from(n));
    }
    for (outer, p) in launches {
        g.launches.push((outer, format!("command line of PID {p}")));
    }
    g.launches
        .push((l.clone(), format!("command line of PID {rank0}")));
    let fs = JobFs::new(host, rank0);
    launch_scripts(host, &fs, pid, g);
    if let Some(r) = &fs.root {
        g.notes.push(format!(
            "PID {rank0} runs in its own mount namespace (a container): its files are read through {r}"
        ));
    }
    // the training script itself (`train.py`, or `-m pkg.train` from the working directory):
    // Python source to scan
    let mut script_path = None;
    let mut script_seen = None;
    // where `-m` modules and imports are looked up: the working directory, then PYTHONPATH
    let mut search = vec![cwd.clone()];
    if let Ok(b) = host.read_file(&format!("/proc/{rank0}/environ")) {
        for kv in b.split(|c| *c == 0) {
            if let Some(v) = kv.strip_prefix(b"PYTHONPATH=") {
                search.extend(
                    String::from_utf8_lossy(v)
                        .split(':')
                        .filter(|d| d.starts_with('/'))
                        .take(4)
                        .map(str::to_string),
                );
            }
        }
    }
    let candidates: Vec<String> = match (&l.script, &l.module) {
        (Some(s), _) => vec![join_path(&cwd, s)],
        (None, Some(m)) => search
            .iter()
            .flat_map(|dir| {
                let base = join_path(dir, &m.replace('.', "/"));
                [format!("{base}.py"), format!("{base}/__main__.py")]
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut first_err = None;
    for p in &candidates {
        match fs.read(p) {
            Ok((at, t)) => {
                script_path = Some(at.clone());
                script_seen = Some(p.clone());
                g.add_doc(at, t, &origin, "");
                break;
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if script_path.is_none()
        && let Some(e) = first_err
    {
        g.notes.push(format!("training script: {e}"));
    }
    if let (Some(at), Some(seen)) = (&script_path, &script_seen) {
        local_imports(&fs, at, seen, &search, g);
    }
    if !explicit {
        for f in &l.config_files {
            let p = join_path(&cwd, f);
            match fs.read(&p) {
                Ok((at, t)) => g.add_doc(at, t, &origin, ""),
                Err(e) => g
                    .notes
                    .push(format!("config named on the command line: {e}")),
            }
        }
        config_literals(&fs, &cwd, g);
        hydra(&fs, &l, &cwd, script_path.as_deref(), &origin, g);
    }
}

/// The shell running a script among the job's parent processes (`bash run.sh`, up to 4
/// levels): its PID, argv and working directory.
pub fn launching_shell(host: &dyn Host, pid: u32) -> Option<(u32, Vec<String>, String)> {
    let mut p = pid;
    for _ in 0..4 {
        let parent = host
            .read_file(&format!("/proc/{p}/stat"))
            .ok()
            .and_then(|b| {
                let t = String::from_utf8_lossy(&b).into_owned();
                // after `(comm)`: state, then the parent's pid
                t.rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(1)?
                    .parse::<u32>()
                    .ok()
            })
            .filter(|pp| *pp > 1)?;
        p = parent;
        let argv = argv_of(host, p);
        let shell = argv
            .first()
            .map(|a| a.rsplit('/').next().unwrap_or(a))
            .is_some_and(|b| matches!(b, "sh" | "bash" | "dash" | "zsh"));
        if !argv.get(1).is_some_and(|s| shell && !s.starts_with('-')) {
            continue;
        }
        let cwd = host
            .read_link(&format!("/proc/{p}/cwd"))
            .unwrap_or_else(|_| "/".into());
        return Some((p, argv, cwd));
    }
    None
}

/// The launch script that started the job given by PID, read as the job sees it: the host
/// path it was read at, its text, and the argv of the shell running it (`bash run.sh`).
pub fn launch_script_of(host: &dyn Host, pid: u32) -> Option<(String, String, Vec<String>)> {
    let (p, argv, cwd) = launching_shell(host, pid)?;
    let fs = JobFs::new(host, pid);
    let (at, text) = fs.read_by(p, &join_path(&cwd, &argv[1])).ok()?;
    Some((at, text, argv))
}

/// Read a file the job given by PID names (its Slurm batch script), as the job's owner and
/// inside its root: the host path it was read at, and its text.
pub fn read_job_file(host: &dyn Host, pid: u32, path: &str) -> Result<(String, String), FileError> {
    JobFs::new(host, pid).read(path)
}

/// The shell scripts that started the job (`bash run.sh` among its parent processes, up to 4
/// levels): read as launch scripts, so a flag they pass can be fixed where it is written.
fn launch_scripts(host: &dyn Host, fs: &JobFs, pid: u32, g: &mut Gathered) {
    let Some((p, argv, cwd)) = launching_shell(host, pid) else {
        return;
    };
    match fs.read_by(p, &join_path(&cwd, &argv[1])) {
        Ok((at, t)) => {
            let before = g.docs.len();
            g.add_doc(at, t, &format!("launch script of PID {p}"), "");
            // the script's own launch lines are the job's command line seen again
            if g.docs.len() > before {
                let path = g.docs[before].path.clone();
                g.launches.retain(|(_, o)| o != &path);
            }
        }
        Err(e) => g.notes.push(format!("launch script of PID {p}: {e}")),
    }
}

/// Local modules a training script imports, read too (the DataLoader often lives in one):
/// `from .data import x`, `from data import x`, `import pkg.data`, resolved beside the script,
/// under the working directory and PYTHONPATH. At most this many, one level deep.
const MAX_IMPORTS: usize = 8;

fn local_imports(fs: &JobFs, at: &str, seen: &str, search: &[String], g: &mut Gathered) {
    let Some(text) = g.docs.iter().find(|d| d.path == at).map(|d| d.text.clone()) else {
        return;
    };
    let short = seen.rsplit('/').next().unwrap_or(seen).to_string();
    let dir = dirname(seen).to_string();
    let mut read = 0;
    for m in python::local_import_candidates(&text) {
        if read >= MAX_IMPORTS {
            break;
        }
        let rel = m.trim_start_matches('.').replace('.', "/");
        if rel.is_empty() {
            continue;
        }
        let mut tries = vec![join_path(&dir, &format!("{rel}.py"))];
        if !m.starts_with('.') {
            tries.extend(search.iter().map(|s| join_path(s, &format!("{rel}.py"))));
        }
        for p in tries {
            if let Ok((host_path, t)) = fs.read(&p) {
                read += 1;
                g.add_doc(host_path, t, &format!("imported by {short}"), "");
                break;
            }
        }
    }
}

/// Config files a Python source names by a path literal: `yaml.safe_load(open("cfg.yaml"))`,
/// `OmegaConf.load("configs/x.yaml")`, `json.load(open("c.json"))`; relative to the working
/// directory, as Python opens them. At most [`MAX_IMPORTS`].
fn config_literals(fs: &JobFs, cwd: &str, g: &mut Gathered) {
    let mut names = Vec::new();
    for d in g.docs.iter().filter(|d| d.kind == JobText::Python) {
        for c in python::scan(&d.text).calls {
            // `open("metrics.json", "w")` writes; it names no config
            let writes = c.args.iter().skip(1).any(|a| {
                python::string_literal(&a.value).is_some_and(|m| m.contains(['w', 'a', 'x']))
            });
            if writes {
                continue;
            }
            for a in c.args.iter().filter(|a| a.name.is_none()) {
                if let Some(s) = python::string_literal(&a.value) {
                    let lower = s.to_ascii_lowercase();
                    if [".yaml", ".yml", ".json", ".toml"]
                        .iter()
                        .any(|e| lower.ends_with(e))
                        && !names.contains(&s)
                    {
                        names.push(s);
                    }
                }
            }
        }
    }
    for n in names.into_iter().take(MAX_IMPORTS) {
        let p = join_path(cwd, &n);
        match fs.read(&p) {
            Ok((at, t)) => g.add_doc(at, t, "a path written in the training script", ""),
            Err(e) => g.notes.push(format!("config named in the script: {e}")),
        }
    }
}

/// Hydra: `--config-path/--config-name` on the command line, or `@hydra.main(config_path=…,
/// config_name=…)` in the script; the primary config and the group files its `defaults:` list
/// names (`- data: imagenet` -> `data/imagenet.yaml`, keys under `data.`).
fn hydra(fs: &JobFs, l: &Launch, cwd: &str, script: Option<&str>, origin: &str, g: &mut Gathered) {
    let mut path = l.hydra_config_path.clone();
    let mut name = l.hydra_config_name.clone();
    let mut base_dir = cwd.to_string();
    if let Some(sp) = script
        && let Some(doc) = g.docs.iter().find(|d| d.path == sp)
    {
        let m = python::scan(&doc.text);
        if let Some(c) = m.calls.iter().find(|c| {
            c.name.ends_with("hydra.main") || c.callee == "main" && c.name.contains("hydra")
        }) {
            if path.is_none() {
                path = c
                    .kwarg("config_path")
                    .and_then(|a| python::string_literal(&a.value));
                // the directory as the job sees it (a container's files are read through its root)
                let seen = fs
                    .root
                    .as_deref()
                    .and_then(|r| sp.strip_prefix(r))
                    .unwrap_or(sp);
                base_dir = dirname(seen).to_string();
            }
            if name.is_none() {
                name = c
                    .kwarg("config_name")
                    .and_then(|a| python::string_literal(&a.value));
            }
        }
    }
    let (Some(p), Some(n)) = (path, name) else {
        return;
    };
    let dir = join_path(&base_dir, &p);
    let file = |n: &str| {
        if n.ends_with(".yaml") || n.ends_with(".yml") {
            join_path(&dir, n)
        } else {
            join_path(&dir, &format!("{n}.yaml"))
        }
    };
    let primary = file(&n);
    let (primary, text) = match fs.read(&primary) {
        Ok(x) => x,
        Err(e) => {
            g.notes.push(format!("Hydra config: {e}"));
            return;
        }
    };
    let data: Option<Value> = serde_yaml::from_str(&text).ok();
    g.add_doc(
        primary.clone(),
        text,
        &format!("Hydra config of {origin}"),
        "",
    );
    let Some(defaults) = data
        .as_ref()
        .and_then(|d| d.get("defaults"))
        .and_then(Value::as_array)
    else {
        return;
    };
    for d in defaults {
        let Some(m) = d.as_object() else { continue };
        for (group, opt) in m {
            let Some(opt) = opt.as_str() else { continue };
            let group_clean = group
                .trim_start_matches("override ")
                .trim_start_matches('/');
            let gp = join_path(&dir, &format!("{group_clean}/{opt}.yaml"));
            if let Ok((gp, t)) = fs.read(&gp) {
                // a group file's keys live under the group's name (`_group_` package)
                let prefix = if t.contains("# @package _global_") {
                    String::new()
                } else {
                    group_clean.replace('/', ".")
                };
                g.add_doc(gp, t, &format!("Hydra defaults of {primary}"), &prefix);
            }
        }
    }
}

fn rank_of_doc(origin: &str) -> u8 {
    if origin == "--config" { 3 } else { 4 }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A command-line value as JSON: `true`/`false`/numbers, else the string.
fn cli_value(s: &str) -> Value {
    match s.to_ascii_lowercase().as_str() {
        "true" => json!(true),
        "false" => json!(false),
        _ => s
            .parse::<i64>()
            .map(|n| json!(n))
            .unwrap_or_else(|_| json!(s)),
    }
}

fn resolve(g: &mut Gathered) {
    let mut found = Vec::new();
    // command-line settings, by the canonical name (and by argparse dests, below)
    let mut cli: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (l, origin) in &g.launches {
        for s in &l.settings {
            cli.insert(
                s.key
                    .trim_start_matches('-')
                    .trim_start_matches('+')
                    .replace('-', "_"),
                (s.value.clone(), format!("{} ({origin})", s.raw)),
            );
            if let Some(name) = launcher::setting_name(&s.key) {
                found.push(Found {
                    setting: name,
                    value: Some(cli_value(&s.value)),
                    unjudged: None,
                    file: String::new(),
                    key: s.key.clone(),
                    source: format!("`{}` on the {origin}", s.raw),
                    rank: 2,
                    eval_only: s.key.split('.').any(job_text::is_eval_segment),
                });
            }
        }
    }
    // a Hugging Face Trainer script's command line (HfArgumentParser over TrainingArguments,
    // launcher::hf_trainer_flags) that gives no loader flag: TrainingArguments' defaults
    // (transformers src/transformers/training_args.py, v4.x: `dataloader_num_workers: int =
    // field(default=0, …)`, `dataloader_pin_memory: bool = field(default=True, …)`); a flag
    // given on the line (rank 2) wins
    for (l, origin) in &g.launches {
        let Some(seen) = launcher::hf_trainer_flags(l) else {
            continue;
        };
        for (flag, setting, default) in [
            ("--dataloader_num_workers", "num_workers", json!(0)),
            ("--dataloader_pin_memory", "pin_memory", json!(true)),
        ] {
            // `--dataloader-num-workers` is the same option (HfArgumentParser adds the dashed
            // alias of each field)
            let name = flag.trim_start_matches('-');
            if l.settings
                .iter()
                .any(|s| s.key.trim_start_matches('-').replace('-', "_") == name)
            {
                continue;
            }
            found.push(Found {
                setting,
                value: Some(default.clone()),
                unjudged: None,
                file: String::new(),
                key: flag.to_string(),
                source: format!(
                    "{} on the {origin} takes the Trainer's flags ({}) and gives no {flag}: TrainingArguments' default {}={default}",
                    l.script.as_deref().unwrap_or("the script"),
                    seen.join(", "),
                    name,
                ),
                rank: 5,
                eval_only: false,
            });
        }
    }
    // every call in the job's Python, for what a caller passes to a function's parameter
    let callers: Vec<(String, String, python::Call)> = g
        .docs
        .iter()
        .filter(|d| d.kind == JobText::Python)
        .flat_map(|d| {
            let short = d.path.rsplit('/').next().unwrap_or(&d.path).to_string();
            python::scan(&d.text)
                .calls
                .into_iter()
                .map(move |c| (d.path.clone(), short.clone(), c))
        })
        .collect();
    for d in &g.docs {
        match d.kind {
            JobText::Config(f) => {
                // the Trainer's printed arguments (formats::hf_args): read, but no file to edit
                let printed = f == job_text::HF_ARGS;
                // a Jsonnet config (formats::jsonnet): read as it evaluates, not edited in place
                let editable = !printed && f != job_text::JSONNET;
                if let Some(data) = &d.data {
                    let settings = job_text::find_settings(data);
                    // what the file leaves to its framework: the framework's default, said so
                    for fd in job_text::framework_defaults(data) {
                        if settings.iter().any(|o| o.setting == fd.setting) {
                            continue;
                        }
                        found.push(Found {
                            setting: fd.setting,
                            value: Some(fd.value.clone()),
                            unjudged: None,
                            file: if editable {
                                d.path.clone()
                            } else {
                                String::new()
                            },
                            key: fd.key_path.to_string(),
                            source: format!(
                                "`{}` absent from {}: {}'s default {} ({})",
                                fd.key_path, d.path, fd.framework, fd.value, fd.cite
                            ),
                            rank: 5,
                            eval_only: false,
                        });
                    }
                    for o in settings {
                        found.push(Found {
                            setting: o.setting,
                            value: Some(o.value.clone()),
                            unjudged: None,
                            file: if editable {
                                d.path.clone()
                            } else {
                                String::new()
                            },
                            key: o.key_path.clone(),
                            source: if printed {
                                format!(
                                    "`{}={}` in the Trainer's printed arguments ({})",
                                    o.key_path,
                                    value_text(&o.value),
                                    d.path
                                )
                            } else {
                                format!(
                                    "`{}` in {}",
                                    if d.prefix.is_empty() {
                                        o.key_path.clone()
                                    } else {
                                        format!("{}.{}", d.prefix, o.key_path)
                                    },
                                    d.path
                                )
                            },
                            rank: rank_of_doc(&d.origin),
                            eval_only: o.eval_only,
                        });
                    }
                }
            }
            JobText::Python => python_settings(d, &cli, &callers, &mut found),
            JobText::Log => {
                // a profiler table or stack that shows torch's single-process loader
                // iterator: that loader runs with num_workers=0
                // (or a cProfile listing whose training process runs the dataset fetcher)
                let single = job_text::single_process_loader(&d.text)
                    .map(|(l, t)| (l, t, "torch's single-process loader iterator, which runs only with num_workers=0"))
                    .or_else(|| {
                        crate::formats::profiler_report::pstats_fetch_row(&d.text).map(|(l, t)| {
                            (l, t, "the dataset fetcher profiled in the training process, where it runs only with num_workers=0")
                        })
                    });
                // the Trainer's arguments printed in the log (`Training/evaluation parameters
                // TrainingArguments(` …, formats::hf_args): what the run was given
                for dump in crate::formats::hf_args::find(&d.text) {
                    for (k, v) in &dump.fields {
                        let Some(setting) = job_text::canonical_setting(k) else {
                            continue;
                        };
                        if !k.starts_with("dataloader_") {
                            continue;
                        }
                        found.push(Found {
                            setting,
                            value: Some(v.clone()),
                            unjudged: None,
                            file: String::new(),
                            key: k.clone(),
                            source: format!(
                                "`{k}={}` in {}({{…}}) printed on {}:{}",
                                value_text(v),
                                dump.class,
                                d.path.rsplit('/').next().unwrap_or(&d.path),
                                dump.line
                            ),
                            rank: 4,
                            eval_only: false,
                        });
                    }
                }
                if let Some((line, text, why)) = single {
                    found.push(Found {
                        setting: "num_workers",
                        value: Some(json!(0)),
                        unjudged: None,
                        file: String::new(),
                        key: String::new(),
                        source: format!(
                            "{}:{line} `{}`: {why}",
                            d.path.rsplit('/').next().unwrap_or(&d.path),
                            text
                        ),
                        rank: 5,
                        eval_only: false,
                    });
                }
            }
            _ => {}
        }
    }
    // torch's warning that a DataLoader starts more workers than the CPUs its process may use
    // (`torch/utils/data/dataloader.py`, `DataLoader.check_worker_number_rationality`, read at
    // pytorch/pytorch 0025348e and as 1.x printed it: `_create_warning_msg(max_num_worker_suggest,
    // self.num_workers, cpuset_checked)` prints "This DataLoader will create {num_worker_created}
    // worker processes in total. Our suggested max number of worker in current system is
    // {num_worker_suggest}", the suggestion being the CPUs the process may use,
    // `len(os.sched_getaffinity(0))` or `os.cpu_count()`): the N it names is that loader's
    // num_workers, as the M is the node's CPUs (`probes::config`). Lowest rank: a setting the
    // job's own text gives wins; nothing to edit (a log is no source).
    if let Some((w, path)) = g
        .warnings
        .iter()
        .find(|(w, _)| w.kind == "too-many-workers" && w.workers.is_some() && w.is_evidence())
        && let Some(n) = w.workers
    {
        found.push(Found {
            setting: "num_workers",
            value: Some(json!(n)),
            unjudged: None,
            file: String::new(),
            key: String::new(),
            source: format!(
                "{}:{} torch's warning \"This DataLoader will create {n} worker processes in total\": the num_workers of the loader it checked",
                path.rsplit('/').next().unwrap_or(path),
                w.line
            ),
            rank: 5,
            eval_only: false,
        });
    }
    // a value given on the command line that a launch script of the job writes: the fix
    // edits that flag in the script (`-j 2` on line 4 of run.sh -> `-j@L4`)
    for f in found
        .iter_mut()
        .filter(|f| f.file.is_empty() && f.key.starts_with('-'))
    {
        let Some(v) = &f.value else { continue };
        let v = value_text(v);
        let hit = g
            .docs
            .iter()
            .filter(|d| d.kind == JobText::Launcher)
            .find_map(|d| launcher::flag_line(&d.text, &f.key, &v).map(|n| (d, n)));
        if let Some((d, n)) = hit {
            f.source = format!(
                "{} (`{} {v}` on {}:{n})",
                f.source,
                f.key,
                d.path.rsplit('/').next().unwrap_or(&d.path)
            );
            f.file = d.path.clone();
            f.key = launcher::flag_key(&f.key, n);
        }
    }
    g.found = found;
}

const LOADER_CALLEES: &[&str] = &[
    "DataLoader",
    "DataLoader2",
    "StatefulDataLoader",
    "MultiEpochsDataLoader",
];

type Callers = [(String, String, python::Call)];

fn python_settings(
    d: &Doc,
    cli: &BTreeMap<String, (String, String)>,
    callers: &Callers,
    out: &mut Vec<Found>,
) {
    let m = python::scan(&d.text);
    let consts = python::constants(&d.text, &m);
    let defaults = python::argparse_defaults(&m);
    let flags = python::argparse_flags(&m);
    // an MMEngine/MMCV config that inherits base files (`_base_ = […]`, or the pure-Python
    // style's `with read_base():`)
    let inherits = m.assigns.iter().any(|a| a.target == "_base_")
        || m.calls.iter().any(|c| c.callee == "read_base");
    let file = d.path.clone();
    let short = d.path.rsplit('/').next().unwrap_or(&d.path).to_string();
    // judge one expression; `at` says where it was written
    let judge = |expr: &str,
                 setting: &'static str,
                 key: String,
                 at: String,
                 line: usize,
                 eval_only: bool,
                 out: &mut Vec<Found>| {
        match python::eval(expr, &consts) {
            PyValue::Known(v) => out.push(Found {
                setting,
                value: Some(v),
                unjudged: None,
                file: file.clone(),
                key,
                source: at,
                rank: 1,
                eval_only,
            }),
            PyValue::Unjudged(e) => {
                // args.X / opt.X / self.args.X: the command line, else the argparse default
                let attr = e.rsplit('.').next().unwrap_or(&e).to_string();
                let via_args = e.contains('.')
                    && e.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                    && defaults.contains_key(&attr);
                if via_args {
                    let given = flags
                        .get(&attr)
                        .into_iter()
                        .flatten()
                        .find_map(|f| {
                            cli.get(&f.trim_start_matches('-').replace('-', "_"))
                                .cloned()
                        })
                        .or_else(|| cli.get(&attr).cloned());
                    if let Some((v, raw)) = given {
                        // the flag as written (`-j` of `-j 2`), for a fix in a launch script
                        let flag = raw
                            .split([' ', '='])
                            .next()
                            .filter(|f| f.starts_with('-'))
                            .unwrap_or(&attr)
                            .to_string();
                        out.push(Found {
                            setting,
                            value: Some(cli_value(&v)),
                            unjudged: None,
                            file: String::new(),
                            key: flag,
                            source: format!("{at} = `{e}`, given as `{raw}`"),
                            rank: 1,
                            eval_only,
                        });
                        return;
                    }
                    let (def, line) = &defaults[&attr];
                    match def {
                        Some(a) => match python::eval(&a.value, &consts) {
                            PyValue::Known(v) => out.push(Found {
                                setting,
                                value: Some(v),
                                unjudged: None,
                                file: file.clone(),
                                key: format!("add_argument@L{line}.default"),
                                source: format!(
                                    "{at} = `{e}`, the argparse default on {short}:{line}"
                                ),
                                rank: 1,
                                eval_only,
                            }),
                            PyValue::Unjudged(x) => out.push(Found {
                                setting,
                                value: None,
                                unjudged: Some(format!(
                                    "{at} = `{e}`, whose argparse default `{x}` cannot be judged"
                                )),
                                file: String::new(),
                                key: String::new(),
                                source: at,
                                rank: 6,
                                eval_only,
                            }),
                        },
                        None => out.push(Found {
                            setting,
                            value: None,
                            unjudged: Some(format!(
                                "{at} = `{e}`, an argparse option without a default"
                            )),
                            file: String::new(),
                            key: String::new(),
                            source: at,
                            rank: 6,
                            eval_only,
                        }),
                    }
                } else if let Some(f) = from_parameter(
                    &m, &consts, &file, &short, cli, callers, &e, line, setting, &at, eval_only,
                ) {
                    out.push(f);
                } else {
                    out.push(Found { setting, value: None, unjudged: Some(format!("{at} = `{e}` cannot be judged from the source (set by a config or computed at run time)")), file: String::new(), key: String::new(), source: at, rank: 6, eval_only });
                }
            }
        }
    };
    // Hugging Face: HfArgumentParser over TrainingArguments, the Trainer builds the loader;
    // without `--dataloader_num_workers` on the command line TrainingArguments' default (0)
    // applies (the command line, rank 2, wins over this)
    if let Some(c) = m.calls.iter().find(|c| {
        c.callee == "HfArgumentParser"
            && c.args.iter().any(|a| a.value.contains("TrainingArguments"))
    }) {
        for (flag, setting, default) in [
            ("dataloader_num_workers", "num_workers", json!(0)),
            ("dataloader_pin_memory", "pin_memory", json!(true)),
        ] {
            out.push(Found {
                setting,
                value: Some(default.clone()),
                unjudged: None,
                file: String::new(),
                key: format!("--{flag}"),
                source: format!(
                    "{short}:{} HfArgumentParser(…TrainingArguments…): TrainingArguments' default {flag}={default}, not given on the command line",
                    c.line
                ),
                rank: 5,
                eval_only: false,
            });
        }
    }
    for c in &m.calls {
        let ctx = c.assigned_to.clone().unwrap_or_default();
        let eval_only =
            ctx.split('.').any(job_text::is_eval_segment) || job_text::is_eval_segment(&ctx);
        if LOADER_CALLEES.contains(&c.callee.as_str()) {
            let at = format!("{short}:{} {}(…)", c.line, c.callee);
            // absent keywords take torch's default; persistent_workers only when written
            // (its absence is not worth a finding on every script)
            for (kw, default) in [
                ("num_workers", Some(json!(0))),
                ("pin_memory", Some(json!(false))),
                ("persistent_workers", None),
            ] {
                let setting = job_text::canonical_setting(kw).unwrap_or("num_workers");
                match c.kwarg(kw) {
                    Some(a) => judge(
                        &a.value,
                        setting,
                        python::kwarg_key(c, kw),
                        format!("{at} {kw}"),
                        c.line,
                        eval_only,
                        out,
                    ),
                    None if c.has_splat && default.is_some() => out.push(Found {
                        setting,
                        value: None,
                        unjudged: Some(format!(
                            "{at} passes **kwargs: {kw} is not written in the call"
                        )),
                        file: String::new(),
                        key: String::new(),
                        source: at.clone(),
                        rank: 6,
                        eval_only,
                    }),
                    None => {
                        if let Some(default) = default {
                            out.push(Found {
                                setting,
                                value: Some(default),
                                unjudged: None,
                                file: file.clone(),
                                key: python::kwarg_key(c, kw),
                                source: format!("{at} without {kw} (torch's default)"),
                                rank: 1,
                                eval_only,
                            });
                        }
                    }
                }
            }
        } else if c.callee == "DistributedDataParallel" || c.callee == "DDP" {
            if let Some(a) = c.kwarg("bucket_cap_mb") {
                judge(
                    &a.value,
                    "bucket_cap_mb",
                    python::kwarg_key(c, "bucket_cap_mb"),
                    format!("{short}:{} {}(…) bucket_cap_mb", c.line, c.callee),
                    c.line,
                    false,
                    out,
                );
            }
        } else if c.callee != "add_argument" && c.callee != "get" && c.callee != "getattr" {
            // MMEngine's `train_dataloader = dict(…)` is the whole loader config of a file that
            // inherits nothing: Runner.build_dataloader pops dataset, sampler, batch_sampler,
            // collate_fn and worker_init_fn and passes the rest to `DataLoader(**cfg)`
            // (mmengine/runner/runner.py, v0.11.0rc0), so an absent keyword is torch's default,
            // as for a DataLoader call. With `_base_` (or `read_base()`) a base file may set it.
            if c.callee == "dict"
                && c.assigned_to.as_deref() == Some("train_dataloader")
                && !c.has_splat
                && !inherits
            {
                for (kw, default) in [("num_workers", json!(0)), ("pin_memory", json!(false))] {
                    if c.kwarg(kw).is_none() {
                        out.push(Found {
                            setting: job_text::canonical_setting(kw).unwrap_or("num_workers"),
                            value: Some(default),
                            unjudged: None,
                            file: file.clone(),
                            key: python::kwarg_key(c, kw),
                            source: format!(
                                "{short}:{} train_dataloader = dict(…) without {kw} (MMEngine passes it to torch's DataLoader: torch's default)",
                                c.line
                            ),
                            rank: 1,
                            eval_only: false,
                        });
                    }
                }
            }
            // config dicts and framework objects: dict(num_workers=2), TrainingArguments(dataloader_num_workers=4), …
            for a in &c.args {
                if let Some(n) = a.name.as_deref()
                    && let Some(setting) = job_text::canonical_setting(n)
                {
                    let at = if ctx.is_empty() {
                        format!("{short}:{} {}(…) {n}", c.line, c.callee)
                    } else {
                        format!("{short}:{} {ctx} = {}(…) {n}", c.line, c.callee)
                    };
                    judge(
                        &a.value,
                        setting,
                        python::kwarg_key(c, n),
                        at,
                        c.line,
                        eval_only,
                        out,
                    );
                }
            }
        }
    }
    // dict literals: CFG = {'train': {'num_workers_per_gpu': 2, 'pin_memory': True}}; in a
    // training script such a dict is usually the defaults a config file overlays, so a config
    // file or the command line that sets the same setting wins (rank 5)
    let before = out.len();
    for e in &m.dict_entries {
        if let Some(setting) = job_text::canonical_setting(&e.key) {
            let eval_only = e.path.iter().any(|p| job_text::is_eval_segment(p));
            let path: String = e.path.iter().map(|p| format!("['{p}']")).collect();
            let path = path.replacen("['", "", 1).replacen("']", "", 1);
            judge(
                &e.value,
                setting,
                python::dict_key(e),
                format!("{short}:{} {path}['{}']", e.line, e.key),
                e.line,
                eval_only,
                out,
            );
        }
    }
    for f in &mut out[before..] {
        if f.rank == 1 {
            f.rank = 5;
        }
    }
    // attribute assignments: cfg.DATALOADER.NUM_WORKERS = 2, _C.DATALOADER.NUM_WORKERS = 4, NUM_WORKERS = 8
    for a in &m.assigns {
        let last = a
            .target
            .rsplit(['.', '['])
            .next()
            .unwrap_or(&a.target)
            .trim_matches(|c| c == '\'' || c == '"' || c == ']');
        if let Some(setting) = job_text::canonical_setting(last) {
            let eval_only = a.target.split('.').any(job_text::is_eval_segment);
            if a.class_field {
                out.push(Found {
                    setting,
                    value: None,
                    unjudged: Some(format!(
                        "{short}:{} `{}: … = {}` is a field default of a config class; the run's config or command line sets the value",
                        a.line, a.target, a.value
                    )),
                    file: String::new(),
                    key: String::new(),
                    source: format!("{short}:{} {}", a.line, a.target),
                    rank: 6,
                    eval_only,
                });
                continue;
            }
            judge(
                &a.value,
                setting,
                python::assign_key(a),
                format!("{short}:{} {}", a.line, a.target),
                a.line,
                eval_only,
                out,
            );
        }
    }
}

/// An expression that is a parameter of a function: `self.num_workers` (or
/// `self.hparams.num_workers`) set from the class's `__init__` parameter, or a bare
/// `num_workers` of the function the call is in. The command line (`--data.num_workers 8`,
/// LightningCLI) wins; then what a caller in the job's Python passes; then the default.
#[allow(clippy::too_many_arguments)]
fn from_parameter(
    m: &python::Module,
    consts: &BTreeMap<String, Value>,
    file: &str,
    short: &str,
    cli: &BTreeMap<String, (String, String)>,
    callers: &Callers,
    e: &str,
    line: usize,
    setting: &'static str,
    at: &str,
    eval_only: bool,
) -> Option<Found> {
    let ident = |x: &str| {
        !x.is_empty()
            && x.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !x.starts_with(|c: char| c.is_ascii_digit())
    };
    let attr = e
        .strip_prefix("self.hparams.")
        .or_else(|| e.strip_prefix("self."));
    let (def, pname) = match attr {
        Some(x) if ident(x) => {
            // `self.x = y` in the class: the parameter is y
            let pname = m
                .assigns
                .iter()
                .find(|a| a.target == format!("self.{x}") && ident(a.value.trim()))
                .map_or(x.to_string(), |a| a.value.trim().to_string());
            let class = m.def_at(line).and_then(|d| d.class.clone());
            let def = m
                .defs
                .iter()
                .filter(|d| d.name == "__init__" && d.param(&pname).is_some())
                .min_by_key(|d| d.class != class)?;
            (def, pname)
        }
        None if ident(e) => (m.def_at(line)?, e.to_string()),
        _ => return None,
    };
    let (idx, p) = def.param(&pname)?;
    let default = p.default.as_ref()?;
    let owner = match &def.class {
        Some(c) => format!("{c}.{}", def.name),
        None => def.name.clone(),
    };
    let found = |value, file: String, key: String, source: String| Found {
        setting,
        value: Some(value),
        unjudged: None,
        file,
        key,
        source,
        rank: 1,
        eval_only,
    };
    // the command line: `--num_workers 8`, `--data.num_workers 8`
    if let Some((v, raw)) = cli.get(&pname).or_else(|| {
        cli.iter()
            .find(|(k, _)| k.rsplit('.').next() == Some(pname.as_str()) && k.contains('.'))
            .map(|(_, v)| v)
    }) {
        return Some(found(
            cli_value(v),
            String::new(),
            pname.clone(),
            format!("{at} = `{e}`, given as `{raw}`"),
        ));
    }
    // a caller that passes it (a method's `self` is not among the call's arguments)
    let skip = usize::from(def.class.is_some());
    for (cfile, cshort, c) in callers.iter().filter(|(_, _, c)| c.callee == def.name) {
        if let Some(a) = c.kwarg(&pname) {
            return Some(match python::eval(&a.value, consts) {
                PyValue::Known(v) => found(
                    v,
                    cfile.clone(),
                    python::kwarg_key(c, &pname),
                    format!(
                        "{at} = `{e}`, passed as `{pname}={}` on {cshort}:{}",
                        a.value, c.line
                    ),
                ),
                PyValue::Unjudged(x) => Found {
                    setting,
                    value: None,
                    unjudged: Some(format!(
                        "{at} = `{e}`, passed as `{pname}={x}` on {cshort}:{}, which cannot be judged",
                        c.line
                    )),
                    file: String::new(),
                    key: String::new(),
                    source: at.to_string(),
                    rank: 6,
                    eval_only,
                },
            });
        }
        let positional = c.args.iter().filter(|a| a.name.is_none()).count();
        if positional + skip > idx || c.has_splat {
            return Some(Found {
                setting,
                value: None,
                unjudged: Some(format!(
                    "{at} = `{e}`, which {cshort}:{} may pass to `{}` positionally or through *args/**kwargs",
                    c.line, def.name
                )),
                file: String::new(),
                key: String::new(),
                source: at.to_string(),
                rank: 6,
                eval_only,
            });
        }
    }
    match python::eval(&default.value, consts) {
        PyValue::Known(v) => Some(found(
            v,
            file.to_string(),
            python::param_key(def, &pname),
            format!(
                "{at} = `{e}`, the default of `{owner}` on {short}:{}",
                def.line
            ),
        )),
        PyValue::Unjudged(_) => None,
    }
}

/// The chosen value of each setting (lowest rank; a training loader before eval-only ones),
/// with every other place it was seen.
pub fn choose(
    g: &Gathered,
    site_keys: Option<&indexmap::IndexMap<String, super::config::KeyPaths>>,
) -> (Map<String, Value>, Vec<String>) {
    let mut out = Map::new();
    let mut unjudged = Vec::new();
    // site key paths first (explicit layouts a platform team wrote)
    for (name, cands) in site_keys.into_iter().flatten() {
        let cands = cands.candidates();
        for d in &g.docs {
            let Some(data) = &d.data else { continue };
            if let Some((p, v)) = cands
                .iter()
                .find_map(|c| get_path(data, c).map(|v| (*c, v)))
            {
                out.insert(name.clone(), json!({"value": v, "key": p, "file": d.path, "source": format!("`{p}` in {}", d.path)}));
                break;
            }
        }
    }
    let mut by: BTreeMap<&str, Vec<&Found>> = BTreeMap::new();
    for f in &g.found {
        by.entry(f.setting).or_default().push(f);
    }
    for (setting, list) in by {
        let known: Vec<&&Found> = list.iter().filter(|f| f.value.is_some()).collect();
        let best = known.iter().min_by_key(|f| (f.eval_only, f.rank)).copied();
        for f in list.iter().filter(|f| f.value.is_none() && !f.eval_only) {
            unjudged.push(f.unjudged.clone().unwrap_or_default());
        }
        if out.contains_key(setting) {
            continue;
        }
        if let Some(f) = best {
            out.insert(
                setting.to_string(),
                json!({"value": f.value, "key": f.key, "file": f.file, "source": f.source, "eval_only": f.eval_only,
                       "also": list.iter().filter(|o| !std::ptr::eq(**o, *f) && o.value.is_some()).map(|o| format!("{} = {}", o.source, value_text(o.value.as_ref().unwrap()))).collect::<Vec<_>>()}),
            );
        }
    }
    (out, unjudged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_named_for_its_format_past_the_limit_says_its_size() {
        let mut text = String::from("data:\n  num_workers: 0\n");
        let (kind, data) = classify("/job/train.yaml", &text).unwrap();
        assert!(matches!(kind, JobText::Config(_)));
        assert_eq!(data.unwrap()["data"]["num_workers"], 0);
        // past the limit it is refused with its size, never parsed
        while text.len() <= crate::formats::config::MAX_SNIFF_BYTES {
            text.push_str(&format!("layer_{}:\n  width: 96\n", text.len()));
        }
        let why = classify("/job/big.yaml", &text).unwrap_err();
        assert!(matches!(why, ClassifyError::TooLarge { .. }), "{why:?}");
        assert!(
            why.to_string()
                .contains("more than a training config holds"),
            "{why}"
        );
    }

    fn corpus(name: &str) -> (String, String) {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/corpus")
            .join(name);
        (
            p.display().to_string(),
            std::fs::read_to_string(&p).expect("corpus file"),
        )
    }

    /// The settings chosen from the given files, as `--config` reads them.
    fn chosen(names: &[&str]) -> Map<String, Value> {
        let mut g = Gathered::default();
        for n in names {
            let (path, text) = corpus(n);
            g.add_doc(path, text, "--config", "");
        }
        resolve(&mut g);
        choose(&g, None).0
    }

    /// The settings chosen from one text given as `--config` at `path`.
    fn chosen_text(path: &str, text: &str) -> Map<String, Value> {
        let mut g = Gathered::default();
        g.add_doc(path.to_string(), text.to_string(), "--config", "");
        resolve(&mut g);
        choose(&g, None).0
    }

    #[test]
    fn torch_s_worker_warning_names_the_loader_s_num_workers() {
        // github.com/SayaSS/vits-finetuning/issues/21: torch's warning in a Colab log, 8
        // workers where the process may use 2 CPUs; the 8 is the loader's num_workers
        let c = chosen(&["h101_log_vits21_colab_8_workers_checkpoints.txt"]);
        assert_eq!(c["num_workers"]["value"], 8, "{c:?}");
        assert_eq!(c["num_workers"]["file"], "", "a log is no file to edit");
        assert!(
            c["num_workers"]["source"]
                .as_str()
                .unwrap()
                .contains("h101_log_vits21_colab_8_workers_checkpoints.txt:1 torch's warning"),
            "{c:?}"
        );
        // the same warning wrapped by a terminal (MIC-DKFZ/ParticleSeg3D#2)
        let c = chosen(&["h3_log_particleseg_12_workers_wrapped.txt"]);
        assert_eq!(c["num_workers"]["value"], 12, "{c:?}");
        // a setting the job's own text gives wins over the warning's count
        let mut g = Gathered::default();
        let (path, text) = corpus("h101_log_vits21_colab_8_workers_checkpoints.txt");
        g.add_doc(path, text, "--config", "");
        g.add_doc(
            "/job/train.yaml".into(),
            "data:\n  num_workers: 1\n".into(),
            "--config",
            "",
        );
        resolve(&mut g);
        let c = choose(&g, None).0;
        assert_eq!(c["num_workers"]["value"], 1, "{c:?}");
        // healthy neighbour: Lightning's few-workers warning names a CPU count, not the
        // loader's workers (github.com/NVIDIA/NeMo/issues/1204)
        let c = chosen_text(
            "/job/train.log",
            "UserWarning: The dataloader, val dataloader 0, does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` (try 32 which is the number of cpus on this machine) in the `DataLoader` init to improve performance.\n",
        );
        assert!(c.get("num_workers").is_none(), "{c:?}");
    }

    #[test]
    fn a_yolov3_family_config_s_number_workers_is_the_loader_s_workers() {
        // the YOLOV3 family's config/*_config.py: train.py builds its loader with
        // `DataLoader(..., num_workers=cfg.TRAIN["NUMBER_WORKERS"], ...)`
        // problem: argusswift/YOLOv4-pytorch config/yolov4_config.py (the config of
        // https://github.com/argusswift/YOLOv4-pytorch/issues/58, 2-12% GPU utilization)
        let problem = "# train\nTRAIN = {\n         \"DATA_TYPE\": 'VOC',  #DATA_TYPE: VOC or COCO\n         \"TRAIN_IMG_SIZE\": 416,\n         \"AUGMENT\": True,\n         \"BATCH_SIZE\": 1,\n         \"NUMBER_WORKERS\": 0,\n         \"WARMUP_EPOCHS\": 2  # or None\n         }\n\n\n# val\nVAL = {\n        \"TEST_IMG_SIZE\": 416,\n        \"BATCH_SIZE\": 1,\n        \"NUMBER_WORKERS\": 0,\n        \"CONF_THRESH\": 0.005,\n        }\n";
        let c = chosen_text("/job/config/yolov4_config.py", problem);
        assert_eq!(c["num_workers"]["value"], 0, "{c:?}");
        assert!(
            c["num_workers"]["key"]
                .as_str()
                .unwrap()
                .contains("NUMBER_WORKERS"),
            "{}",
            c["num_workers"]
        );
        // healthy: Peterisfar/YOLOV3 config/yolov3_config_voc.py
        // (https://github.com/Peterisfar/YOLOV3/blob/594d87d8e3885aa38d1381be4ea32e7564115f8b/config/yolov3_config_voc.py):
        // 4 training workers; the TEST dict's 0 is the evaluation loader's
        let healthy = "# train\nTRAIN = {\n         \"TRAIN_IMG_SIZE\":448,\n         \"AUGMENT\":True,\n         \"BATCH_SIZE\":8,\n         \"NUMBER_WORKERS\":4,\n         \"WARMUP_EPOCHS\":2  # or None\n         }\n\n\n# test\nTEST = {\n        \"TEST_IMG_SIZE\":544,\n        \"BATCH_SIZE\":1,\n        \"NUMBER_WORKERS\":0,\n        \"CONF_THRESH\":0.01,\n        }\n";
        let c = chosen_text("/job/config/yolov3_config_voc.py", healthy);
        assert_eq!(c["num_workers"]["value"], 4, "{c:?}");
    }

    #[test]
    fn a_tuple_unpacked_option_reaches_the_loader_s_workers() {
        // problem: YOLOAir's train.py (iscyy/ultralyticsPro#96, GPU-Util under 10 %): `train()`
        // unpacks its options, `…, workers, freeze = …, opt.workers, opt.freeze`, and
        // `--workers` defaults to 0 (the official YOLOv5 train.py to 8)
        let c = chosen(&["h125_python_yoloair96_train_workers_default0.py"]);
        assert_eq!(c["num_workers"]["value"], 0, "{c:?}");
        let src = c["num_workers"]["source"].as_str().unwrap();
        assert!(
            src.contains("workers = `opt.workers`, the argparse default on h125_python_yoloair96_train_workers_default0.py:529"),
            "{src}"
        );
        // the same unpacking in a small script: its argparse default is what the loader gets
        let text = "import argparse\n\ndef train(opt):\n    epochs, workers = opt.epochs, opt.workers\n    loader = create_dataloader('train', 640, 16, workers=workers)\n\nif __name__ == '__main__':\n    p = argparse.ArgumentParser()\n    p.add_argument('--epochs', type=int, default=300)\n    p.add_argument('--workers', type=int, default=8)\n    train(p.parse_args())\n";
        let c = chosen_text("/job/train.py", text);
        assert_eq!(
            c.get("num_workers").map(|v| v["value"].clone()),
            Some(json!(8)),
            "{c:?}"
        );
        // neighbours that bind nothing readable: a call's result unpacked, a starred target,
        // lengths that differ
        for text in [
            "def train(opt):\n    workers, batch = get_opts(opt)\n",
            "def train(opt):\n    workers, *rest = opt.workers, opt.a, opt.b\n",
            "def train(opt):\n    workers, batch = (opt.workers, opt.batch, opt.c)\n",
        ] {
            let c = chosen_text("/job/train.py", text);
            assert!(c.get("num_workers").is_none(), "{text}: {c:?}");
        }
    }

    #[test]
    fn an_mmengine_train_dataloader_dict_leaves_torch_s_defaults() {
        // MMPretrain's ImageNet base: `train_dataloader = dict(batch_size=32, num_workers=5,
        // …)` inherits nothing, so pin_memory is torch's default (MMEngine's
        // Runner.build_dataloader passes the dict to DataLoader)
        let c = chosen(&["h27_mmengine_mmpretrain_imagenet_bs32_5_workers.py"]);
        assert_eq!(c["num_workers"]["value"], 5);
        assert_eq!(c["pin_memory"]["value"], false);
        assert!(
            c["pin_memory"]["source"]
                .as_str()
                .unwrap()
                .contains("without pin_memory (MMEngine passes it to torch's DataLoader"),
            "{}",
            c["pin_memory"]
        );
        assert_eq!(c["pin_memory"]["key"], "dict@L26.pin_memory");
        assert!(c.get("persistent_workers").is_none());
        // RTMDet-L inherits `_base_` files: only what it writes is read (10 workers, pinned)
        let c = chosen(&["h27_mmengine_rtmdet_l_10_workers_pin.py"]);
        assert_eq!(c["num_workers"]["value"], 10);
        assert_eq!(c["pin_memory"]["value"], true);
    }

    #[test]
    fn a_framework_config_that_leaves_the_workers_says_the_framework_s_default() {
        // Detectron2's Base-RCNN-FPN.yaml has no DATALOADER node: defaults.py gives 4
        let c = chosen(&["h27_d2_base_rcnn_fpn_no_workers_key.yaml"]);
        assert_eq!(c["num_workers"]["value"], 4);
        assert_eq!(c["num_workers"]["key"], "DATALOADER.NUM_WORKERS");
        assert!(
            c["num_workers"]["source"]
                .as_str()
                .unwrap()
                .contains("Detectron2's default 4"),
            "{}",
            c["num_workers"]
        );
        // Ultralytics' default.yaml writes its workers: that value, no default
        let c = chosen(&["h27_yolo_ultralytics_default_cfg_8_workers.yaml"]);
        assert_eq!(c["num_workers"]["key"], "workers");
        assert_eq!(c["num_workers"]["value"], 8);
        assert!(
            !c["num_workers"]["source"]
                .as_str()
                .unwrap()
                .contains("absent from")
        );
        // OTX's recipe (a `task:` of its own names) is no Ultralytics file: its 2 workers
        let c = chosen(&["h27_yaml_otx_classification_base_2_workers.yaml"]);
        assert_eq!(c["num_workers"]["value"], 2);
    }

    #[test]
    fn a_jsonnet_config_is_read_as_it_evaluates_and_not_edited() {
        // DeCLUTR's AllenNLP config before PR #119 (h132): the loader leaves num_workers to
        // AllenNLP (0); the value is read, but a jsonnet file is no file a fix writes into
        let c = chosen(&["h132_jsonnet_declutr119_allennlp_loader_no_workers.jsonnet"]);
        assert_eq!(c["num_workers"]["value"], 0, "{c:?}");
        assert_eq!(c["num_workers"]["key"], "data_loader.num_workers");
        assert_eq!(
            c["num_workers"]["file"], "",
            "a jsonnet file is not edited in place"
        );
        assert!(
            c["num_workers"]["source"]
                .as_str()
                .unwrap()
                .contains("AllenNLP's default 0"),
            "{}",
            c["num_workers"]
        );
        // fursovia/dpeter's AllenNLP fragment (jsonnet locals): its written 20 workers
        let c = chosen(&["allennlp_jsonnet_20_workers.jsonnet"]);
        assert_eq!(c["num_workers"]["value"], 20);
        assert_eq!(c["pin_memory"]["value"], true);
        // a jsonnet whose workers come from outside (`std.extVar`) sets no number and takes
        // no default
        let c = chosen_text(
            "x.jsonnet",
            "local w = std.parseInt(std.extVar('W'));\n{ dataset_reader: {type: 'r'}, train_data_path: 'a', model: {type: 'm'}, trainer: {}, data_loader: { batch_size: 8, num_workers: w } }",
        );
        assert!(
            c.get("num_workers").is_none_or(|n| !n["value"].is_number()),
            "{c:?}"
        );
    }

    #[test]
    fn a_config_with_a_syntax_error_says_so() {
        let why = classify(
            "/job/train.yaml",
            "data:\n  num_workers: [0\n  pin_memory: x\n",
        )
        .unwrap_err();
        assert!(matches!(why, ClassifyError::Syntax(_)), "{why:?}");
        assert!(why.to_string().contains("invalid YAML"), "{why}");
        let why = classify("/job/notes.txt", "\u{1}\u{2}").unwrap_err();
        assert!(matches!(why, ClassifyError::Unknown), "{why:?}");
        assert!(why.to_string().contains("not a config"), "{why}");
    }

    #[test]
    fn python_nested_past_the_limit_says_it_is_not_read() {
        // 2,000 nested brackets: the grammar's tree passes the depth limit, so the source is not
        // read as one that sets nothing
        let src = format!(
            "import torch\nx = {}1{}\nloader = DataLoader(ds, num_workers=n)\n",
            "(".repeat(2_000),
            ")".repeat(2_000)
        );
        for path in ["/job/train.py", "/job/train.txt"] {
            let why = classify(path, &src).unwrap_err();
            assert!(matches!(why, ClassifyError::NoTree(_)), "{why:?}");
            assert!(why.to_string().contains("levels deep"), "{why}");
        }
        let (kind, _) = classify("/job/train.py", "import torch\nx = ((1))\n").unwrap();
        assert_eq!(kind, JobText::Python);
    }
}
