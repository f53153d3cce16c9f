//! `config`: the job's training config (`--config`, YAML, JSON or TOML), with the settings
//! rules ask for found by candidate key paths (`data.num_workers`, `dataloader.num_workers`, …).

use super::{ParamSpec, ProbeCtx, ProbeKind, ProbeOutcome};
use serde_json::{Map, Value, json};

pub struct Config;

/// `a.b.c` or `a.b[0].c` in a JSON value.
pub fn get_path<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.split('.') {
        let (name, idx) = match seg.find('[') {
            Some(i) => (
                &seg[..i],
                seg[i + 1..].trim_end_matches(']').parse::<usize>().ok(),
            ),
            None => (seg, None),
        };
        if !name.is_empty() {
            cur = cur.get(name)?;
        }
        if let Some(i) = idx {
            cur = cur.get(i)?;
        }
    }
    Some(cur)
}

pub fn parse_config(path: &str, text: &str) -> Result<(&'static str, Value), String> {
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "yaml" | "yml" => serde_yaml::from_str(text)
            .map(|v| ("yaml", v))
            .map_err(|e| format!("{path}: invalid YAML: {e}")),
        "json" => serde_json::from_str(text)
            .map(|v| ("json", v))
            .map_err(|e| format!("{path}: invalid JSON: {e}")),
        "toml" => {
            let doc: toml_edit::DocumentMut = text
                .parse()
                .map_err(|e| format!("{path}: invalid TOML: {e}"))?;
            Ok(("toml", toml_to_json(doc.as_item())))
        }
        _ => Err(format!(
            "{path}: cannot tell the format (name it .yaml, .json or .toml)"
        )),
    }
}

pub fn toml_to_json(item: &toml_edit::Item) -> Value {
    use toml_edit::{Item, Value as V};
    fn val(v: &V) -> Value {
        match v {
            V::String(s) => json!(s.value()),
            V::Integer(i) => json!(i.value()),
            V::Float(f) => json!(f.value()),
            V::Boolean(b) => json!(b.value()),
            V::Datetime(d) => json!(d.value().to_string()),
            V::Array(a) => Value::Array(a.iter().map(val).collect()),
            V::InlineTable(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_string(), val(v))).collect())
            }
        }
    }
    match item {
        Item::None => Value::Null,
        Item::Value(v) => val(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_to_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| toml_to_json(&Item::Table(t.clone())))
                .collect(),
        ),
    }
}

impl ProbeKind for Config {
    fn name(&self) -> &'static str {
        "config"
    }
    fn doc(&self) -> &'static str {
        "the training config given with --config, and settings found by candidate key paths"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("path", "the config file"),
            ("format", "yaml, json or toml"),
            ("data", "the whole parsed config"),
            (
                "values.NAME",
                "the value of the first candidate key path of NAME present in the file",
            ),
            (
                "key_paths.NAME",
                "which key path that was (what config.set edits)",
            ),
            (
                "captures.NAME",
                "for a .py config: named groups of `regex`'s first match",
            ),
        ]
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[
            ParamSpec {
                name: "keys",
                required: false,
                ty: "object",
                doc: "NAME: [candidate key paths]",
            },
            ParamSpec {
                name: "regex",
                required: false,
                ty: "string",
                doc: "for Python sources: named captures of the first match",
            },
        ]
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        use super::config_sources as cs;
        let g = cs::gather(
            ctx.host,
            ctx.inputs.config.as_deref(),
            &ctx.inputs.evidence,
            ctx.inputs.pid,
        );
        if g.docs.is_empty() && g.launches.is_empty() {
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
        let site_keys = params
            .get("keys")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let (chosen, unjudged) = cs::choose(&g, &site_keys);
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
        let ranks = g.ranks.or(nproc);
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
                .map(|(w, f)| json!({"kind": w.kind, "line": w.line, "text": w.text, "file": f, "workers": w.workers, "suggested": w.suggested}))
                .collect(),
        );
        // the node the job runs on: this host when attached to a live process, else what the
        // text says, else an assumption that the message states
        let gpus = ranks.unwrap_or(1).max(1);
        let suggested_cpus = g.warnings.iter().find_map(|(w, _)| {
            (w.kind == "too-many-workers")
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
                format!("{c} CPUs (the count torch's warning names)"),
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
        if let Some(re) = params.get("regex").and_then(Value::as_str) {
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
