//! `config`: the job's training config (`--config`, YAML, JSON or TOML), with the settings
//! rules ask for found by candidate key paths (`data.num_workers`, `dataloader.num_workers`, …).

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::{Map, Value, json};

pub struct Config;

/// The value at a key path (`a.b[0].c`, `\.` for a dot inside a key) in a parsed config: the
/// one key-path syntax of [`crate::formats::keypath`], which `config.set` edits by.
pub fn get_path<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    crate::formats::keypath::lookup(v, path)
}

/// Reads a training config by [`crate::formats::config::read_config`]: the format from the
/// extension, else from the content (JSON/JSONC, TOML, YAML). Returns the format's name and the
/// document; the error names the file.
pub fn parse_config(path: &str, text: &str) -> Result<(&'static str, Value), ConfigError> {
    crate::formats::config::read_config(Some(std::path::Path::new(path)), text)
        .map(|(format, v)| (format.id(), v))
        .map_err(|error| ConfigError {
            path: path.to_string(),
            error,
        })
}

/// A training config that does not read, with its path.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {error}")]
pub struct ConfigError {
    pub path: String,
    #[source]
    pub error: crate::formats::config::ReadError,
}

/// A parsed TOML item as JSON: [`crate::formats::config::toml_item_to_json`], the one
/// TOML→JSON conversion.
pub fn toml_to_json(item: &toml_edit::Item) -> Value {
    crate::formats::config::toml_item_to_json(item)
}

/// Parameters of the `config` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigParams {
    /// NAME: candidate key paths (one path or a list); the first present gives `values.NAME`.
    #[serde(default)]
    pub keys: Option<indexmap::IndexMap<String, KeyPaths>>,
    /// For Python sources: named captures of the first match.
    #[serde(default)]
    pub regex: Option<String>,
    /// With no job text given, answer `{given: false}` instead of not-applicable (for rules
    /// that also judge a trace or a dump).
    #[serde(default)]
    pub optional: bool,
}

/// One key path, or candidates tried in order.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum KeyPaths {
    One(String),
    Candidates(Vec<String>),
}

impl KeyPaths {
    /// The candidate paths, in order.
    pub fn candidates(&self) -> Vec<&str> {
        match self {
            KeyPaths::One(s) => vec![s.as_str()],
            KeyPaths::Candidates(a) => a.iter().map(String::as_str).collect(),
        }
    }
}

impl Probe for Config {
    type Params = ConfigParams;
    fn name(&self) -> &'static str {
        "config"
    }
    fn doc(&self) -> &'static str {
        "the job's settings where they are written: --config, job text given as --evidence (Python, YAML/JSON/TOML, launcher lines, training logs), and with --pid the config files, Hydra config and training script the process's command line names"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "also",
                "NAME: the other places that set it, each `SOURCE = VALUE`",
            ),
            ("notes", "what was found but not read, and why"),
            (
                "path",
                "the first config read (`--config` first, then discovered files)",
            ),
            (
                "given",
                "false (and nothing else) when `optional` and no job text was found",
            ),
            ("format", "yaml, json, toml, python, launcher or log"),
            ("data", "the first structured config, parsed"),
            (
                "values.NAME",
                "num_workers, pin_memory, persistent_workers, bucket_cap_mb (or a `keys` NAME): the value that applies, at any depth, under framework names",
            ),
            (
                "key_paths.NAME",
                "the key config.set edits (a key path, or CALLEE@LINE.KWARG in Python)",
            ),
            (
                "files.NAME",
                "the file that set it (empty when a command line did)",
            ),
            ("sources.NAME", "where it was set, for messages"),
            (
                "unjudged[]",
                "settings written as expressions that cannot be judged, and why",
            ),
            (
                "docs[]",
                "{path, kind, origin}: every text read and how it was found",
            ),
            ("launch", "{launcher, nproc_per_node, nnodes, script, from}"),
            (
                "log_warnings[]",
                "{kind, line, text, file, workers, suggested, evidence, discounted, setting_contradicted}: loader warnings in a training log; evidence is false where the text shows the warning is not a bottleneck (discounted says why)",
            ),
            (
                "log_steps",
                "{format, lines, data_s, step_s, share, file, worst_line, worst, worst_left_out}: the time a training log's progress lines say the steps waited for their batch, against the steps' time (the longest wait named, and left out of the sums with three lines or more)",
            ),
            (
                "loader_interrupt",
                "{file, line, frame}: a traceback printed when the job was stopped shows the loop waiting in the DataLoader's queue",
            ),
            (
                "loop_host_copy",
                "{line, text, loop_line, loop_header, count, file}: a Python source whose `for` loop copies a tensor to the host (`.cpu()`, then `.numpy()`/`.tolist()`) each iteration to take the element its index names (`x.cpu().numpy()[i]`): a wait for the GPU per iteration",
            ),
            (
                "loader_profile",
                "{report, action, calls, loader_s, whole, whole_s, share, file, line}: a PyTorch Lightning profiler report's row for the training DataLoader's next (train_dataloader_next, get_train_batch) against run_training_epoch (or the report's Total), or a torch profiler table's DataLoader rows (enumerate(DataLoader)#…__next__) against ProfilerStep* (or the table's Self CPU time total), or a cProfile listing's torch/utils/data/dataloader.py __next__ row against the listing's total",
            ),
            (
                "table_pageable",
                "{calls, device_share, file, line}: a torch profiler table's `Memcpy HtoD (Pageable -> Device)` row: its copies and their share of the table's device time (Self CUDA %)",
            ),
            (
                "workload",
                "`text` (tokenized language-model batches), `image`, or `cached-latents` (an sd-scripts job training on VAE latents cached before it), where the job's text shows it; null otherwise",
            ),
            (
                "node",
                "{cpus, gpus, basis, assumed}: the node the job runs on (this host with --pid, else from the text, else assumed)",
            ),
            (
                "captures.NAME",
                "for a Python source: named groups of `regex`'s first match",
            ),
        ]
    }
    fn run(&self, params: &ConfigParams, ctx: &ProbeCtx) -> ProbeOutcome {
        use super::config_sources as cs;
        let g = cs::gather(
            ctx.host,
            ctx.inputs.config.as_deref(),
            &ctx.inputs.evidence,
            ctx.inputs.pid,
        );
        if g.docs.is_empty() && g.launches.is_empty() {
            if params.optional {
                return ProbeOutcome::Value(json!({ "given": false }));
            }
            if ctx.inputs.config.is_none() && ctx.inputs.pid.is_none() {
                return ProbeOutcome::NotApplicable(
                    "needs --config, --pid, or job text (Python, config, command line, training log) as --evidence".into(),
                );
            }
            return ProbeOutcome::Unknown(if g.notes.is_empty() {
                "no training config or script found".into()
            } else {
                g.notes.join("; ")
            });
        }
        let (chosen, unjudged) = cs::choose(&g, params.keys.as_ref());
        let mut values = Map::new();
        let mut key_paths = Map::new();
        let mut files = Map::new();
        let mut sources = Map::new();
        let mut also = Map::new();
        for (name, c) in &chosen {
            values.insert(name.clone(), c["value"].clone());
            key_paths.insert(name.clone(), c["key"].clone());
            files.insert(name.clone(), c["file"].clone());
            sources.insert(name.clone(), c["source"].clone());
            if let Some(a) = c.get("also") {
                also.insert(name.clone(), a.clone());
            }
        }
        let first = g
            .docs
            .iter()
            .find(|d| d.data.is_some())
            .or_else(|| g.docs.first());
        let mut out = json!({
            "path": first.map(|d| d.path.clone()).unwrap_or_default(),
            "format": first.map(|d| d.kind.name()).unwrap_or("launcher"),
            "data": first.and_then(|d| d.data.clone()).unwrap_or(Value::Null),
            "values": values, "key_paths": key_paths, "files": files, "sources": sources, "also": also,
            "unjudged": unjudged,
            "docs": g.docs.iter().map(|d| json!({"path": d.path, "kind": d.kind.name(), "origin": d.origin})).collect::<Vec<_>>(),
            "notes": g.notes,
        });
        // the launch: processes per node
        let nproc = g
            .launches
            .iter()
            .find_map(|(l, _)| l.nproc_per_node)
            .map(u64::from);
        // a Slurm batch script's requests: tasks (ranks) per node and the CPUs of each
        let slurm = g
            .docs
            .iter()
            .filter(|d| d.kind == crate::formats::job_text::JobText::Launcher)
            .map(|d| crate::formats::launcher::read_script(&d.text).slurm)
            .find(|s| s.cpus_per_rank().is_some() || s.tasks_per_node.is_some());
        let ranks = g.ranks.or(nproc).or_else(|| {
            slurm
                .as_ref()
                .and_then(|s| s.tasks_per_node.or(s.gpus_per_node))
                .map(u64::from)
        });
        if let Some((l, origin)) = g
            .launches
            .iter()
            .find(|(l, _)| l.launcher.is_some())
            .or(g.launches.first())
        {
            out["launch"] = json!({"launcher": l.launcher, "nproc_per_node": nproc, "nnodes": l.nnodes, "script": l.script, "from": origin});
        }
        out["log_warnings"] = Value::Array(
            g.warnings
                .iter()
                .map(|(w, f)| json!({"kind": w.kind, "line": w.line, "text": w.text, "file": f, "workers": w.workers, "suggested": w.suggested, "evidence": w.is_evidence(), "discounted": w.discounted, "setting_contradicted": w.setting_contradicted}))
                .collect(),
        );
        // a log cut inside a loader warning: with no whole warning read, whether it warned is
        // not in the evidence
        if !g.warnings.iter().any(|(w, _)| w.is_evidence())
            && let Some(why) = g
                .docs
                .iter()
                .filter(|d| d.kind == crate::formats::job_text::JobText::Log)
                .find_map(|d| crate::formats::job_text::cut_warning(&d.text))
        {
            out.as_object_mut().map(|o| o.remove("log_warnings"));
            out["unavailable"] = json!({ "log_warnings": format!("input ends early: {why}") });
        }
        // a log's per-step data wait beside its step time (job_text::step_timings)
        if let Some((t, f)) = g
            .docs
            .iter()
            .filter(|d| d.kind == crate::formats::job_text::JobText::Log)
            .find_map(|d| crate::formats::job_text::step_timings(&d.text).map(|t| (t, &d.path)))
        {
            out["log_steps"] = json!({"format": t.format, "lines": t.lines, "data_s": t.data_s, "step_s": t.step_s, "share": t.share, "file": f, "worst_line": t.worst_line, "worst": t.worst, "worst_left_out": t.worst_left_out});
        }
        // a Lightning profiler report's training-DataLoader row (job_text::lightning_profiler_report),
        // else a torch profiler table's DataLoader rows (profiler_report::torch_table_loader), else
        // a cProfile listing's `__next__` row (profiler_report::pstats_loader)
        if let Some((p, f)) = g
            .docs
            .iter()
            .filter(|d| d.kind == crate::formats::job_text::JobText::Log)
            .find_map(|d| {
                crate::formats::job_text::lightning_profiler_report(&d.text)
                    .and_then(|(_, p)| p)
                    .or_else(|| crate::formats::profiler_report::torch_table_loader(&d.text))
                    .or_else(|| crate::formats::profiler_report::pstats_loader(&d.text))
                    .map(|p| (p, &d.path))
            })
        {
            out["loader_profile"] = json!({"report": p.report, "action": p.action, "calls": p.calls, "loader_s": p.loader_s, "whole": p.whole, "whole_s": p.whole_s, "share": p.share, "file": f, "line": p.line});
        }
        // a profiler table's host-to-device copies from pageable memory and their share of the
        // device time (profiler_report::torch_table_pageable)
        if let Some((p, f)) = g
            .docs
            .iter()
            .filter(|d| d.kind == crate::formats::job_text::JobText::Log)
            .find_map(|d| {
                crate::formats::profiler_report::torch_table_pageable(&d.text).map(|p| (p, &d.path))
            })
        {
            out["table_pageable"] = json!({"calls": p.calls, "device_share": p.device_share, "line": p.line, "file": f});
        }
        // a traceback printed when the job was stopped while it waited on the DataLoader
        if let Some((t, f)) = g
            .docs
            .iter()
            .filter(|d| d.kind == crate::formats::job_text::JobText::Log)
            .find_map(|d| {
                crate::formats::job_text::interrupted_in_loader(&d.text).map(|t| (t, &d.path))
            })
        {
            out["loader_interrupt"] = json!({"line": t.line, "frame": t.frame, "file": f});
        }
        // a loop that copies a tensor to the host each iteration to take one element of it
        if let Some((h, f)) = g
            .docs
            .iter()
            .filter(|d| d.kind == crate::formats::job_text::JobText::Python)
            .find_map(|d| crate::formats::python::loop_host_copies(&d.text).map(|h| (h, &d.path)))
        {
            out["loop_host_copy"] = json!({"line": h.line, "text": h.text, "loop_line": h.loop_line, "loop_header": h.loop_header, "count": h.count, "file": f});
        }
        // what the batches are made of (text or images), where the job's text shows it
        out["workload"] = json!(
            g.docs
                .iter()
                .find_map(|d| crate::formats::job_text::workload(&d.text))
        );
        // the node the job runs on: this host when attached to a live process, else what the
        // text says, else an assumption that the message states
        let gpus = ranks.unwrap_or(1).max(1);
        // the node's CPUs as a warning names them: torch's suggested maximum, Lightning's
        // "(try N which is the number of cpus on this machine)"
        let suggested_cpus = g.warnings.iter().find_map(|(w, _)| {
            (w.kind == "too-many-workers"
                || (w.kind == "few-workers"
                    && w.text.to_ascii_lowercase().contains("number of cpus")))
            .then_some(w.suggested)
            .flatten()
        });
        let (cpus, basis, assumed) = if ctx.inputs.pid.is_some() {
            (
                ctx.host.cpu_count() as u64,
                format!("{} CPUs of the host the job runs on", ctx.host.cpu_count()),
                false,
            )
        } else if let Some(c) = suggested_cpus {
            (
                c,
                format!("{c} CPUs (the count the framework's warning names)"),
                false,
            )
        } else if let Some(per) = slurm.as_ref().and_then(|s| s.cpus_per_rank()) {
            let c = u64::from(per) * gpus;
            (
                c,
                format!(
                    "{c} CPUs: {per} per rank as the Slurm script requests, for {gpus} rank(s) per node"
                ),
                false,
            )
        } else {
            (
                16 * gpus,
                format!(
                    "node size unknown: assumed 16 CPUs per GPU for {gpus} process(es) per node (set the rule's `node_cpus` parameter)"
                ),
                true,
            )
        };
        out["node"] = json!({"cpus": cpus, "gpus": gpus, "basis": basis, "assumed": assumed});
        // regex captures over a Python source (site rules that read a keyword by pattern)
        if let Some(re) = params.regex.as_deref() {
            match regex::Regex::new(re) {
                Ok(re) => {
                    if let Some(d) = g
                        .docs
                        .iter()
                        .find(|d| d.kind == crate::formats::job_text::JobText::Python)
                        && let Some(c) = re.captures(&d.text)
                    {
                        let caps: Map<String, Value> = re
                            .capture_names()
                            .flatten()
                            .filter_map(|n| c.name(n).map(|m| (n.to_string(), json!(m.as_str()))))
                            .collect();
                        out["captures"] = Value::Object(caps);
                        out["path"] = json!(d.path);
                        out["format"] = json!("python");
                    }
                }
                Err(e) => return ProbeOutcome::Unknown(format!("regex does not compile: {e}")),
            }
        }
        ProbeOutcome::Value(out)
    }
}
