//! Where a job's settings come from, and what they are: `--config`, job text given as
//! `--evidence` (Python, configs, launcher lines, logs), and — with `--pid` — the process's
//! own command line, working directory and training script (config discovery). Each setting
//! the data rules read (`num_workers`, `pin_memory`, `persistent_workers`, `bucket_cap_mb`)
//! is found at any depth under the names frameworks use, and remembered with the file and key
//! that set it, so the fix edits that place.
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

fn read_local(path: &std::path::Path) -> Result<String, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.len() > MAX_TEXT {
        return Err(format!(
            "{} is larger than {} MiB",
            path.display(),
            MAX_TEXT >> 20
        ));
    }
    let b = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(String::from_utf8_lossy(&b).into_owned())
}

/// Read a file the job names, through the host (so `--root` and snapshots work), refusing
/// anything that is not a small regular file.
fn read_host(host: &dyn Host, path: &str) -> Result<String, String> {
    match host.metadata(path) {
        Ok(m) if m.kind != "file" => return Err(format!("{path} is a {}, not read", m.kind)),
        Ok(m) if m.len > MAX_TEXT => {
            return Err(format!(
                "{path} is larger than {} MiB, not read",
                MAX_TEXT >> 20
            ));
        }
        Ok(_) => {}
        Err(_) if host.is_live() => return Err(format!("{path}: not found")),
        Err(_) => {}
    }
    let b = host
        .read_file(path)
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if b.len() as u64 > MAX_TEXT {
        return Err(format!(
            "{path} is larger than {} MiB, not read",
            MAX_TEXT >> 20
        ));
    }
    Ok(String::from_utf8_lossy(&b).into_owned())
}

fn classify(path: &str, text: &str) -> Option<(JobText, Option<Value>)> {
    let lower = path.to_ascii_lowercase();
    // an extension that says it, then content
    if lower.ends_with(".py") {
        return Some((JobText::Python, None));
    }
    if lower.ends_with(".yaml")
        || lower.ends_with(".yml")
        || lower.ends_with(".json")
        || lower.ends_with(".toml")
    {
        if let Some((f, v)) = job_text::parse_structured(text) {
            return Some((JobText::Config(f), Some(v)));
        }
    }
    match job_text::detect(text)? {
        JobText::Config(f) => {
            job_text::parse_structured(text).map(|(_, v)| (JobText::Config(f), Some(v)))
        }
        k => Some((k, None)),
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
            Some((kind, data)) => {
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
            None => self.notes.push(format!(
                "{path} ({origin}): not a config, Python source, command line or training log"
            )),
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
            Err(e) => g.notes.push(e),
        }
    }
    for p in evidence {
        let shown = std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string();
        if let Ok(t) = read_local(p)
            && job_text::detect(&t).is_some()
        {
            g.add_doc(shown, t, "--evidence", "");
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
    // the training script itself: Python source to scan
    let mut script_path = None;
    if let Some(s) = &l.script {
        let p = join_path(&cwd, s);
        match read_host(host, &p) {
            Ok(t) => {
                script_path = Some(p.clone());
                g.add_doc(p, t, &origin, "");
            }
            Err(e) => g.notes.push(format!("training script: {e}")),
        }
    }
    if !explicit {
        for f in &l.config_files {
            let p = join_path(&cwd, f);
            match read_host(host, &p) {
                Ok(t) => g.add_doc(p, t, &origin, ""),
                Err(e) => g
                    .notes
                    .push(format!("config named on the command line: {e}")),
            }
        }
        hydra(host, &l, &cwd, script_path.as_deref(), &origin, g);
    }
}

/// Hydra: `--config-path/--config-name` on the command line, or `@hydra.main(config_path=…,
/// config_name=…)` in the script; the primary config and the group files its `defaults:` list
/// names (`- data: imagenet` -> `data/imagenet.yaml`, keys under `data.`).
fn hydra(
    host: &dyn Host,
    l: &Launch,
    cwd: &str,
    script: Option<&str>,
    origin: &str,
    g: &mut Gathered,
) {
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
                base_dir = dirname(sp).to_string();
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
    let text = match read_host(host, &primary) {
        Ok(t) => t,
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
            if let Ok(t) = read_host(host, &gp) {
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
    for d in &g.docs {
        match d.kind {
            JobText::Config(_) => {
                if let Some(data) = &d.data {
                    for o in job_text::find_settings(data) {
                        found.push(Found {
                            setting: o.setting,
                            value: Some(o.value.clone()),
                            unjudged: None,
                            file: d.path.clone(),
                            key: o.key_path.clone(),
                            source: format!(
                                "`{}` in {}",
                                if d.prefix.is_empty() {
                                    o.key_path.clone()
                                } else {
                                    format!("{}.{}", d.prefix, o.key_path)
                                },
                                d.path
                            ),
                            rank: rank_of_doc(&d.origin),
                            eval_only: o.eval_only,
                        });
                    }
                }
            }
            JobText::Python => python_settings(d, &cli, &mut found),
            JobText::Log => {
                // a profiler table or stack that shows torch's single-process loader
                // iterator: that loader runs with num_workers=0
                if let Some((line, text)) = job_text::single_process_loader(&d.text) {
                    found.push(Found {
                        setting: "num_workers",
                        value: Some(json!(0)),
                        unjudged: None,
                        file: String::new(),
                        key: String::new(),
                        source: format!(
                            "{}:{line} `{}`: torch's single-process loader iterator, which runs only with num_workers=0",
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
    g.found = found;
}

const LOADER_CALLEES: &[&str] = &[
    "DataLoader",
    "DataLoader2",
    "StatefulDataLoader",
    "MultiEpochsDataLoader",
];

fn python_settings(d: &Doc, cli: &BTreeMap<String, (String, String)>, out: &mut Vec<Found>) {
    let m = python::scan(&d.text);
    let consts = python::constants(&d.text, &m);
    let defaults = python::argparse_defaults(&m);
    let flags = python::argparse_flags(&m);
    let file = d.path.clone();
    let short = d.path.rsplit('/').next().unwrap_or(&d.path).to_string();
    // judge one expression; `at` says where it was written
    let judge = |expr: &str,
                 setting: &'static str,
                 key: String,
                 at: String,
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
                        out.push(Found {
                            setting,
                            value: Some(cli_value(&v)),
                            unjudged: None,
                            file: String::new(),
                            key: attr.clone(),
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
                } else {
                    out.push(Found { setting, value: None, unjudged: Some(format!("{at} = `{e}` cannot be judged from the source (set by a config or computed at run time)")), file: String::new(), key: String::new(), source: at, rank: 6, eval_only });
                }
            }
        }
    };
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
                    false,
                    out,
                );
            }
        } else if c.callee != "add_argument" && c.callee != "get" && c.callee != "getattr" {
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
                eval_only,
                out,
            );
        }
    }
}

/// The chosen value of each setting (lowest rank; a training loader before eval-only ones),
/// with every other place it was seen.
pub fn choose(g: &Gathered, site_keys: &Map<String, Value>) -> (Map<String, Value>, Vec<String>) {
    let mut out = Map::new();
    let mut unjudged = Vec::new();
    // site key paths first (explicit layouts a platform team wrote)
    for (name, cands) in site_keys {
        let cands: Vec<&str> = match cands {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
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
