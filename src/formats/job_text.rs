//! Text about a training job, as people paste it or as it sits on disk: Python source, a
//! training config (YAML/JSON/TOML), a launcher command line, a training log. [`detect`] says
//! which by content (the file name is never needed); the settings the data rules read are
//! found at any depth and under the names frameworks use ([`canonical_setting`]), and the
//! loader warnings frameworks print are read from logs ([`log_warnings`]).

use serde_json::Value;

/// What kind of job text this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobText {
    Python,
    /// a structured config: `yaml`, `json` or `toml`
    Config(&'static str),
    /// one or more training command lines
    Launcher,
    /// a training log (warnings, progress lines)
    Log,
}

impl JobText {
    pub fn name(self) -> &'static str {
        match self {
            JobText::Python => "python",
            JobText::Config(f) => f,
            JobText::Launcher => "launcher",
            JobText::Log => "log",
        }
    }
}

/// The setting a config key / argument name stands for, under the names frameworks use:
/// PyTorch (`num_workers`), HF Trainer (`dataloader_num_workers`), Detectron2
/// (`NUM_WORKERS`), MMEngine (`workers_per_gpu`), DeiT/MAE (`pin_mem`), timm (`workers`), …
pub fn canonical_setting(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase().replace('-', "_");
    Some(match n.as_str() {
        "num_workers"
        | "workers"
        | "num_data_workers"
        | "dataloader_num_workers"
        | "data_workers"
        | "loader_workers"
        | "n_workers"
        | "num_workers_per_gpu"
        | "workers_per_gpu"
        | "num_dataloader_workers"
        | "dataloader_workers"
        | "nthreads"
        | "n_data_workers"
        | "num_loader_workers"
        | "data_loader_workers"
        | "num_cpu_workers" => "num_workers",
        "pin_memory"
        | "dataloader_pin_memory"
        | "pin_mem"
        | "pinned_memory"
        | "pin_memory_device_copy" => "pin_memory",
        "persistent_workers" | "dataloader_persistent_workers" => "persistent_workers",
        "bucket_cap_mb" | "ddp_bucket_cap_mb" => "bucket_cap_mb",
        _ => return None,
    })
}

/// A path segment that names a validation/test loader: its settings matter less than the
/// training loader's.
pub fn is_eval_segment(seg: &str) -> bool {
    let s = seg.to_ascii_lowercase();
    [
        "val",
        "valid",
        "validation",
        "test",
        "eval",
        "evaluation",
        "predict",
        "inference",
        "dev",
    ]
    .iter()
    .any(|w| {
        s == *w
            || s.starts_with(&format!("{w}_"))
            || s.ends_with(&format!("_{w}"))
            || s.contains(&format!("_{w}_"))
            || s == format!("{w}_ds")
            || s == format!("{w}_dataloader")
            || s == format!("{w}loader")
            || s == format!("{w}_loader")
    })
}

/// One occurrence of a setting in a structured config.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    pub setting: &'static str,
    /// key path in the `a.b[0].c` syntax (dots in keys escaped as `\.`)
    pub key_path: String,
    pub value: Value,
    /// under a validation/test section
    pub eval_only: bool,
}

/// Every setting the data rules read, at any depth of a parsed config, in document order.
pub fn find_settings(data: &Value) -> Vec<Occurrence> {
    let mut out = Vec::new();
    walk(data, &mut Vec::new(), false, &mut out);
    out
}

fn walk(v: &Value, path: &mut Vec<String>, eval: bool, out: &mut Vec<Occurrence>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let seg = k.replace('.', "\\.");
                let e = eval || is_eval_segment(k);
                if let Some(s) = canonical_setting(k)
                    && matches!(
                        child,
                        Value::Number(_) | Value::Bool(_) | Value::String(_) | Value::Null
                    )
                {
                    let mut p = path.clone();
                    p.push(seg.clone());
                    out.push(Occurrence {
                        setting: s,
                        key_path: join(&p),
                        value: child.clone(),
                        eval_only: e,
                    });
                }
                path.push(seg);
                walk(child, path, e, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                path.push(format!("[{i}]"));
                walk(child, path, eval, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn join(p: &[String]) -> String {
    let mut s = String::new();
    for seg in p {
        if seg.starts_with('[') || s.is_empty() {
            s.push_str(seg);
        } else {
            s.push('.');
            s.push_str(seg);
        }
    }
    s
}

/// A loader warning a framework printed in a training log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogWarning {
    /// `few-workers`, `too-many-workers`, `persistent-workers`, `spawn-no-workers`
    pub kind: &'static str,
    pub line: usize,
    pub text: String,
    /// the worker count the warning names, where it names one
    pub workers: Option<u64>,
    /// the CPU count or suggested maximum it names
    pub suggested: Option<u64>,
}

fn first_number_after(s: &str, marker: &str) -> Option<u64> {
    let at = s.find(marker)? + marker.len();
    let digits: String = s[at..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The loader warnings in a log: PyTorch Lightning's "does not have many workers which may be
/// a bottleneck" (and its persistent_workers and ddp_spawn hints), torch's "This DataLoader
/// will create N worker processes in total. Our suggested max number of worker in current
/// system is M".
pub fn log_warnings(text: &str) -> Vec<LogWarning> {
    let mut out = Vec::new();
    let all: Vec<&str> = text.lines().collect();
    for (i, line) in all.iter().enumerate() {
        // a warning wrapped over several lines (a terminal or a quote broke it): read it with
        // the lines that continue it
        let start = line.to_ascii_lowercase();
        let wrapped = (start.contains("does not have many workers")
            && !start.contains("(try ")
            && !start.contains("num_workers="))
            || (start.contains("will create") && !start.contains("suggested max number"));
        let joined;
        let l: &str = if wrapped {
            let mut parts = vec![line.trim()];
            for next in all.iter().skip(i + 1).take(3) {
                let n = next.to_ascii_lowercase();
                if n.contains("does not have many workers") || n.contains("will create") {
                    break;
                }
                parts.push(next.trim());
            }
            joined = parts.join(" ");
            &joined
        } else {
            line
        };
        let low = l.to_ascii_lowercase();
        let w = if low.contains("does not have many workers") {
            Some(LogWarning {
                kind: "few-workers",
                line: i + 1,
                text: l.trim().to_string(),
                workers: None,
                suggested: first_number_after(&low, "num_workers=")
                    .or_else(|| first_number_after(&low, "(try ")),
            })
        } else if low.contains("worker processes in total")
            && low.contains("suggested max number of worker")
            && start.contains("will create")
        {
            Some(LogWarning {
                kind: "too-many-workers",
                line: i + 1,
                text: l.trim().to_string(),
                workers: first_number_after(&low, "will create"),
                suggested: first_number_after(&low, "current system is"),
            })
        } else if low.contains("consider setting `persistent_workers=true`")
            || low.contains("consider setting persistent_workers=true")
        {
            Some(LogWarning {
                kind: "persistent-workers",
                line: i + 1,
                text: l.trim().to_string(),
                workers: None,
                suggested: None,
            })
        } else if low.contains("num_workers=0 may result in data loading bottlenecks") {
            Some(LogWarning {
                kind: "spawn-no-workers",
                line: i + 1,
                text: l.trim().to_string(),
                workers: Some(0),
                suggested: None,
            })
        } else {
            None
        };
        out.extend(w);
        // bounded like every evidence list: a long log repeats the same warning every epoch
        if out.len() >= crate::evidence::MAX_ITEMS {
            break;
        }
    }
    out
}

/// The first line naming torch's `_SingleProcessDataLoaderIter` (a profiler table row such as
/// `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`, or a traceback frame): the
/// loader it belongs to runs in the training process, i.e. with num_workers=0. Returns the
/// 1-based line and the name as printed.
pub fn single_process_loader(text: &str) -> Option<(usize, String)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let at = l.find("_SingleProcessDataLoaderIter")?;
        let start = l[..at].rfind(char::is_whitespace).map_or(0, |s| s + 1);
        let end = l[at..]
            .find(char::is_whitespace)
            .map_or(l.len(), |e| at + e);
        Some((i + 1, l[start..end].to_string()))
    })
}

fn looks_like_log(text: &str) -> bool {
    let mut hits = 0;
    for l in text.lines().take(2000) {
        let low = l.to_ascii_lowercase();
        if low.contains("warning")
            || low.contains("epoch")
            || low.contains("it/s]")
            || low.contains("s/it]")
            || low.contains("loss")
            || low.contains("traceback (most recent call last)")
            || low.contains(" info ")
            || low.starts_with("info")
            || low.contains("[rank")
        {
            hits += 1;
        }
    }
    hits >= 2 || !log_warnings(text).is_empty() || single_process_loader(text).is_some()
}

/// Parse a structured config by content: JSON (also with comments), TOML, YAML; only a
/// mapping at the top counts (any text is a YAML string). This is the one content detector,
/// [`crate::formats::config::read_config`] without a file name.
pub fn parse_structured(text: &str) -> Option<(&'static str, Value)> {
    crate::formats::config::read_config(None, text)
        .ok()
        .map(|(f, v)| (f.id(), v))
}

/// What this text is, by content: Python source, a structured config, launcher command
/// lines, or a training log. None when it is none of them.
pub fn detect(text: &str) -> Option<JobText> {
    if text.trim().is_empty() {
        return None;
    }
    if crate::formats::python::looks_like_python(text) {
        return Some(JobText::Python);
    }
    let launches = crate::formats::launcher::find(text);
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    if !launches.is_empty()
        && log_warnings(text).is_empty()
        && launches.len() * 4 >= lines.min(40) / 2
    {
        return Some(JobText::Launcher);
    }
    if !log_warnings(text).is_empty() {
        return Some(JobText::Log);
    }
    if let Some((f, _)) = parse_structured(text) {
        return Some(JobText::Config(f));
    }
    if !launches.is_empty() {
        return Some(JobText::Launcher);
    }
    // a launch script without a recognised launch (a Slurm/bash excerpt that exports NCCL or
    // CUDA settings): its exports are the job's environment
    let sc = crate::formats::launcher::read_script(text);
    if sc.shell_lines >= 2 || (sc.shell_lines >= 1 && !sc.exports.is_empty()) {
        return Some(JobText::Launcher);
    }
    looks_like_log(text).then_some(JobText::Log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_at_any_depth_under_framework_names() {
        let v = json!({
            "model": {"train_ds": {"num_workers": 2, "pin_memory": false}, "validation_ds": {"num_workers": 8}},
            "DATALOADER": {"NUM_WORKERS": 4},
            "training": {"loader": {"workers": 6}},
            "args": {"dataloader_num_workers": 0, "dataloader_pin_memory": true},
            "list": [{"num_workers": 1}]
        });
        let f = find_settings(&v);
        let got: Vec<(&str, &str, bool)> = f
            .iter()
            .map(|o| (o.setting, o.key_path.as_str(), o.eval_only))
            .collect();
        assert_eq!(
            got,
            vec![
                ("num_workers", "model.train_ds.num_workers", false),
                ("pin_memory", "model.train_ds.pin_memory", false),
                ("num_workers", "model.validation_ds.num_workers", true),
                ("num_workers", "DATALOADER.NUM_WORKERS", false),
                ("num_workers", "training.loader.workers", false),
                ("num_workers", "args.dataloader_num_workers", false),
                ("pin_memory", "args.dataloader_pin_memory", false),
                ("num_workers", "list[0].num_workers", false),
            ]
        );
    }

    #[test]
    fn warnings_of_a_long_log_are_bounded() {
        let line = "UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current system is 2, which is smaller than what this DataLoader is going to create.\n";
        let log = line.repeat(crate::evidence::MAX_ITEMS + 500);
        let w = log_warnings(&log);
        assert_eq!(w.len(), crate::evidence::MAX_ITEMS);
        assert_eq!(
            (w[0].kind, w[0].workers, w[0].suggested),
            ("too-many-workers", Some(8), Some(2))
        );
    }

    #[test]
    fn lightning_and_torch_warnings() {
        let log = "Epoch 0:   3%|▎  | 10/300 [00:05<02:30, 1.9it/s, loss=2.3]\n/usr/lib/python3.10/site-packages/pytorch_lightning/trainer/connectors/data_connector.py:441: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=15` in the `DataLoader` to improve performance.\n/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py:478: UserWarning: This DataLoader will create 32 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create.\n";
        let w = log_warnings(log);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].kind, "few-workers");
        assert_eq!(w[0].suggested, Some(15));
        assert_eq!(w[1].kind, "too-many-workers");
        assert_eq!((w[1].workers, w[1].suggested), (Some(32), Some(8)));
        assert_eq!(detect(log), Some(JobText::Log));
        // wrapped over lines, each warning once
        let wrapped = "dataloader.py:560: UserWarning: \nThis DataLoader will create 12 worker processes in total. \nOur suggested max number of worker in current system is 8 (`cpuset` is not taken into account), which is smaller than what this DataLoader is going to create. \nPlease be aware that excessive worker creation might get DataLoader running slow\nThe dataloader, train_dataloader, does not have many workers which may be a bottleneck. \nConsider increasing the value of the `num_workers` argument` (try 16 which is the number of cpus on this machine)\n";
        let w = log_warnings(wrapped);
        assert_eq!(w.len(), 2, "{w:#?}");
        assert_eq!(
            (w[0].kind, w[0].workers, w[0].suggested),
            ("too-many-workers", Some(12), Some(8))
        );
        assert_eq!((w[1].kind, w[1].suggested), ("few-workers", Some(16)));
        assert_eq!(detect(wrapped), Some(JobText::Log));
        let table = "Name    Self CPU %\n----  ----\nenumerate(DataLoader)#_SingleProcessDataLoaderIter._...        88.64%       78.632s\n";
        assert_eq!(
            single_process_loader(table),
            Some((
                3,
                "enumerate(DataLoader)#_SingleProcessDataLoaderIter._...".to_string()
            ))
        );
        assert_eq!(detect(table), Some(JobText::Log));
        assert_eq!(
            single_process_loader("_MultiProcessingDataLoaderIter"),
            None
        );
    }

    #[test]
    fn detects_by_content() {
        assert_eq!(
            detect("import torch\nfrom x import y\n"),
            Some(JobText::Python)
        );
        assert_eq!(
            detect("data:\n  num_workers: 2\n"),
            Some(JobText::Config("yaml"))
        );
        assert_eq!(
            detect("{\"a\": {\"num_workers\": 2}}"),
            Some(JobText::Config("json"))
        );
        assert_eq!(
            detect("// c\n{\"a\": 1, /* x */ \"b\": 2}"),
            Some(JobText::Config("json"))
        );
        assert_eq!(
            detect("[data]\nnum_workers = 2\n"),
            Some(JobText::Config("toml"))
        );
        assert_eq!(
            detect("torchrun --nproc_per_node=8 main.py --num_workers 32\n"),
            Some(JobText::Launcher)
        );
        assert_eq!(detect("hello"), None);
    }
}
