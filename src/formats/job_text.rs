//! Text about a training job, as people paste it or as it sits on disk: Python source, a
//! training config (YAML/JSON/TOML), a launcher command line, a training log. [`detect`] says
//! which by content (the file name is never needed); the settings the data rules read are
//! found at any depth and under the names frameworks use ([`canonical_setting`]), and the
//! loader warnings frameworks print are read from logs ([`log_warnings`]). A pasted Python
//! traceback (CPython's `  File "…", line N, in f` frames, `Lib/traceback.py`) is part of the
//! job's log.

use crate::vocab::clip;
use serde_json::Value;

/// What kind of job text this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobText {
    Python,
    /// a structured config: `yaml`, `json`, `toml`, [`JSONNET`] or [`HF_ARGS`]
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
        | "num_cpu_workers"
        // kohya-ss/sd-scripts (`library/train_util.py`, `--max_data_loader_n_workers`, default
        // 8, "max num workers for DataLoader"), which its trainers pass on as
        // `DataLoader(..., num_workers=min(args.max_data_loader_n_workers, os.cpu_count()),
        // persistent_workers=args.persistent_data_loader_workers)` (`train_network.py`); the
        // same names in sd-scripts' `--config_file` TOML, kohya_ss's GUI configs,
        // LoRA_Easy_Training_Scripts' TOML and musubi-tuner
        | "max_data_loader_n_workers" => "num_workers",
        // the YOLOV3 family (Peterisfar/YOLOV3 and its descendants argusswift/YOLOv4-pytorch,
        // GGHL, ...): config/yolov*_config.py `TRAIN = {..., "NUMBER_WORKERS": 4, ...}` feeds
        // train.py `DataLoader(..., num_workers=cfg.TRAIN["NUMBER_WORKERS"], ...)`; in that
        // spelling only (a lower-case `number_workers` is a document parser's or a database
        // pool's elsewhere)
        "number_workers" if name == "NUMBER_WORKERS" => "num_workers",
        "pin_memory"
        | "dataloader_pin_memory"
        | "pin_mem"
        | "pinned_memory"
        | "pin_memory_device_copy" => "pin_memory",
        "persistent_workers"
        | "dataloader_persistent_workers"
        | "persistent_data_loader_workers" => "persistent_workers",
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

/// A data setting a framework's config file leaves to the framework, read as the framework's
/// own default: the file is a whole config of that framework (it inherits no base file, which
/// could set it) and does not write the setting.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameworkDefault {
    pub framework: &'static str,
    pub setting: &'static str,
    /// where the file would set it
    pub key_path: &'static str,
    pub value: Value,
    /// the framework's source that gives the default
    pub cite: &'static str,
}

/// The framework defaults a config file relies on ([`FrameworkDefault`]):
///
/// - Detectron2's yacs config (upper-case top-level nodes such as `MODEL`, `SOLVER`,
///   `DATASETS`, no `_BASE_`): `DATALOADER.NUM_WORKERS` is 4
///   (`detectron2/config/defaults.py`, v0.6: `_C.DATALOADER.NUM_WORKERS = 4`; the config has no
///   pin-memory node, so nothing is read for it);
/// - Ultralytics' `args.yaml` / `default.yaml` shape (`task` and `mode` of Ultralytics' names,
///   no `cfg` file overlaid): `workers` is 8 (`ultralytics/cfg/default.yaml`: `workers: 8 #
///   (int) dataloader workers (per RANK if DDP)`);
/// - LLaMA-Factory's YAML (`stage`, `model_name_or_path`, `finetuning_type`/`template`, only
///   keys its parser accepts): `dataloader_num_workers` is 0 and `dataloader_pin_memory` True,
///   transformers' defaults. axolotl's YAML is not read this way: since axolotl commit 759cefb
///   (PR 2632, 2025-07) `AxolotlConfigWCapabilities.default_dataloader_opts` sets
///   `dataloader_num_workers` to the GPU count and `dataloader_pin_memory` when none of the
///   three `dataloader_*` keys is written, before it the Trainer's 0 applied, and the file
///   does not say which axolotl ran it.
/// - AllenNLP's experiment config (`allennlp train config.jsonnet`): the keys
///   `TrainModel.from_partial_objects` requires (allennlp `allennlp/commands/train.py`:
///   `dataset_reader`, `train_data_path`, `model`, `data_loader`, `trainer`), its `data_loader`
///   of the default implementation (no `type`, or 1.x's `"default"`, 2.x's `"multiprocess"`):
///   `num_workers` is 0 (1.x `allennlp/data/dataloader.py` at 04fdb705, `DataLoader.__init__`
///   and `from_partial_objects`, `num_workers: int = 0`; 2.x
///   `allennlp/data/data_loaders/multiprocess_data_loader.py` at 18c35b61,
///   `MultiProcessDataLoader.__init__`, `num_workers: int = 0`, "everything is done in the main
///   process"). pin_memory is not read: 1.x passes `pin_memory=False` to torch, 2.x's loader has
///   no such parameter (it moves batches to `cuda_device` itself), and the file does not say
///   which AllenNLP ran it. A `"simple"` loader (no workers at all) or a `"multitask"` one
///   (`num_workers` per dataset) is not read this way.
pub fn framework_defaults(data: &Value) -> Vec<FrameworkDefault> {
    let Some(top) = data.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let upper = |k: &str| {
        k.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && k.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    let d2 = !top.is_empty()
        && top.keys().all(|k| upper(k))
        && (top.contains_key("MODEL") || top.contains_key("SOLVER"))
        && !top.contains_key("_BASE_");
    if d2
        && top
            .get("DATALOADER")
            .and_then(|d| d.get("NUM_WORKERS"))
            .is_none()
    {
        out.push(FrameworkDefault {
            framework: "Detectron2",
            setting: "num_workers",
            key_path: "DATALOADER.NUM_WORKERS",
            value: Value::from(4),
            cite: "detectron2/config/defaults.py `_C.DATALOADER.NUM_WORKERS = 4`",
        });
    }
    let ultralytics = top
        .get("task")
        .and_then(Value::as_str)
        .is_some_and(|t| ["detect", "segment", "classify", "pose", "obb"].contains(&t))
        && top.get("mode").and_then(Value::as_str).is_some_and(|m| {
            ["train", "val", "predict", "export", "track", "benchmark"].contains(&m)
        })
        && top.get("cfg").is_none_or(Value::is_null);
    // LLaMA-Factory's YAML (`llamafactory-cli train config.yaml`): src/llamafactory/hparams/
    // parser.py reads it with `HfArgumentParser(_TRAIN_ARGS)`, whose training arguments
    // subclass transformers' `Seq2SeqTrainingArguments` and leave `dataloader_num_workers`
    // (default 0) and `dataloader_pin_memory` (default True) to transformers
    // (hparams/training_args.py, v0.9.x); `preprocessing_num_workers` is the datasets.map pool,
    // not the loader. The parser refuses a key no argument class has ("Some specified arguments
    // are not used by the HfArgumentParser"), and every field is a lower-case identifier, so a
    // file with any other key (`Lora_target`, `num train epochs`) never started a run: nothing
    // is read as its default then.
    let llamafactory = top
        .get("stage")
        .and_then(Value::as_str)
        .is_some_and(|s| ["pt", "sft", "rm", "ppo", "dpo", "kto"].contains(&s))
        && top.contains_key("model_name_or_path")
        && (top.contains_key("finetuning_type") || top.contains_key("template"))
        && top.keys().all(|k| {
            k.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && k.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        });
    if llamafactory {
        for (key, setting, value) in [
            ("dataloader_num_workers", "num_workers", Value::from(0)),
            ("dataloader_pin_memory", "pin_memory", Value::from(true)),
        ] {
            if !top.contains_key(key) {
                out.push(FrameworkDefault {
                    framework: "LLaMA-Factory (transformers' TrainingArguments)",
                    setting,
                    key_path: key,
                    value,
                    cite: "LLaMA-Factory hparams/parser.py `HfArgumentParser(_TRAIN_ARGS)`; transformers training_args.py `dataloader_num_workers` default 0, `dataloader_pin_memory` default True",
                });
            }
        }
    }
    let allennlp = ["dataset_reader", "model", "trainer"]
        .iter()
        .all(|k| top.get(*k).is_some_and(Value::is_object))
        && top.contains_key("train_data_path");
    if allennlp
        && let Some(loader) = top.get("data_loader").and_then(Value::as_object)
        && loader
            .get("type")
            .is_none_or(|t| matches!(t.as_str(), Some("default" | "multiprocess")))
        && !loader.contains_key("num_workers")
    {
        out.push(FrameworkDefault {
            framework: "AllenNLP",
            setting: "num_workers",
            key_path: "data_loader.num_workers",
            value: Value::from(0),
            cite: "allennlp/data/dataloader.py (1.x) and data_loaders/multiprocess_data_loader.py (2.x) `num_workers: int = 0`",
        });
    }
    if ultralytics && !top.contains_key("workers") {
        out.push(FrameworkDefault {
            framework: "Ultralytics",
            setting: "num_workers",
            key_path: "workers",
            value: Value::from(8),
            cite: "ultralytics/cfg/default.yaml `workers: 8`",
        });
    }
    out
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
    /// Why this warning is not evidence of a loader bottleneck, where the text says so (the
    /// machine has no CPUs to spare, or the job's own worker setting shows the warning is about
    /// a side loader); None when it is evidence.
    pub discounted: Option<String>,
    /// The text sets num_workers (`--num-workers 4`) above what the framework found in the
    /// loader it warns about: the setting does not reach that loader.
    pub setting_contradicted: bool,
}

impl LogWarning {
    /// The warning says the loader holds the GPU back (it is not discounted).
    pub fn is_evidence(&self) -> bool {
        self.discounted.is_none()
    }
}

/// Lightning warns when a loader has 2 workers or fewer and the machine has more CPUs. On a
/// machine of this many CPUs or fewer (the count the warning names) 2 workers already hold
/// half of it and the training process needs the rest: the warning is not a bottleneck
/// (Lightning's own maintainers call 2 workers reasonable; on 1 CPU it still suggests 1).
const FEW_WORKERS_MIN_CPUS: u64 = 4;

/// The loader a Lightning warning names is a validation/test/predict loader.
fn names_eval_loader(low: &str) -> bool {
    [
        "val_dataloader",
        "val dataloader",
        "validation",
        "test_dataloader",
        "test dataloader",
        "predict_dataloader",
    ]
    .iter()
    .any(|k| low.contains(k))
}

/// The text without whitespace, lowercased: a warning a terminal wrapped mid-word
/// (`worker process` / `es in total`) reads whole again.
fn squash(s: &str) -> String {
    if s.is_ascii() {
        // the common case, byte by byte: the same result as the char path below (ASCII
        // whitespace as `char::is_whitespace` has it, vertical tab included)
        let mut out = String::with_capacity(s.len());
        out.extend(
            s.bytes()
                .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
                .map(|b| char::from(b.to_ascii_lowercase())),
        );
        return out;
    }
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// `squash(s).contains(needle)` for a lowercase ASCII needle, without building the squashed
/// text: a match may have whitespace between its letters.
fn contains_squashed(s: &str, needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(off) = memchr::memchr2(first, first.to_ascii_uppercase(), &b[from..]) {
        let at = from + off;
        // an ASCII byte is a char boundary: the letters after it, whitespace skipped
        let mut letters = s[at + 1..].chars().filter(|c| !c.is_whitespace());
        if rest.iter().all(|&n| {
            letters
                .next()
                .is_some_and(|c| c.to_ascii_lowercase() == char::from(n))
        }) {
            return true;
        }
        from = at + 1;
    }
    false
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
/// system is M", fairseq's "Data loading buffer is empty or nearly empty" (see
/// `FAIRSEQ_BUFFER_EMPTY`).
pub fn log_warnings(text: &str) -> Vec<LogWarning> {
    let mut out = Vec::new();
    // streamed: the lines that may continue a wrapped warning are read ahead from a copy of
    // the iterator, not from a list of every line of a long log
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        // every warning below (and every start of a wrapped one) holds a `w` ("workers",
        // "will create"), which no other character lowercases to: a line without one is
        // none of them
        // (fairseq's, wrapped before "workers", is found by its words as fairseq prints them)
        let buffer_empty = FAIRSEQ_BUFFER_EMPTY.find(line.as_bytes()).is_some();
        if !buffer_empty && memchr::memchr2(b'w', b'W', line.as_bytes()).is_none() {
            continue;
        }
        // and every one names workers (squashed: `wor kers` too), or starts with "will create"
        // or fairseq's "Data loading buffer is empty" and is wrapped before it does
        if !contains_squashed(line, b"worker")
            && !crate::vocab::contains_ignore_ascii_case(line, "will create", 0)
            && !buffer_empty
        {
            continue;
        }
        // a warning wrapped over several lines (a terminal or a quote broke it, possibly in the
        // middle of a word): read it with the lines that continue it
        let start = line.to_ascii_lowercase();
        let wrapped = (start.contains("does not have many workers")
            && !start.contains("(try ")
            && !start.contains("num_workers="))
            || (start.contains("will create") && !start.contains("suggested max number"))
            || (buffer_empty && !contains_squashed(line, b"worker"));
        let joined;
        let l: &str = if wrapped {
            let mut parts = vec![line.trim()];
            for (_, next) in lines.clone().take(4) {
                let n = next.to_ascii_lowercase();
                if n.contains("does not have many workers")
                    || n.contains("will create")
                    || FAIRSEQ_BUFFER_EMPTY.find(next.as_bytes()).is_some()
                {
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
        let sq = squash(l);
        // the squashed start line, which `l` is when nothing was joined to it
        let start_sq = |sq: &str| {
            if wrapped {
                squash(line)
            } else {
                sq.to_string()
            }
        };
        let warning = |kind, workers, suggested| LogWarning {
            kind,
            line: i + 1,
            text: l.trim().to_string(),
            workers,
            suggested,
            discounted: None,
            setting_contradicted: false,
        };
        let w = if sq.contains("doesnothavemanyworkers") {
            Some(warning(
                "few-workers",
                None,
                first_number_after(&low, "num_workers=")
                    .or_else(|| first_number_after(&low, "(try ")),
            ))
        } else if sq.contains("workerprocessesintotal")
            && sq.contains("suggestedmaxnumberofworker")
            && start_sq(&sq).contains("willcreate")
        {
            Some(warning(
                "too-many-workers",
                first_number_after(&low, "will create"),
                first_number_after(&low, "current system is"),
            ))
        } else if let Some(at) = low.find("too many dataloader workers:") {
            // Hugging Face datasets: an IterableDataset with fewer shards than workers stops the
            // extra workers ("Too many dataloader workers: 32 (max is dataset.num_shards=1).
            // Stopping 31 dataloader workers."): the loader runs with num_shards workers
            let rest = &low[at..];
            Some(warning(
                "workers-capped",
                first_number_after(rest, "workers:"),
                first_number_after(rest, "num_shards="),
            ))
        } else if low.contains("consider setting `persistent_workers=true`")
            || low.contains("consider setting persistent_workers=true")
        {
            Some(warning("persistent-workers", None, None))
        } else if low.contains("num_workers=0 may result in data loading bottlenecks") {
            Some(warning("spawn-no-workers", Some(0), None))
        } else if buffer_empty {
            // fairseq's BufferedIterator: the queue of ready batches stayed below two after the
            // first five minutes of the epoch; the trainer waited on the workers
            Some(warning("buffer-empty", None, None))
        } else {
            None
        };
        out.extend(w);
        // bounded like every evidence list: a long log repeats the same warning every epoch
        if out.len() >= crate::vocab::MAX_ITEMS {
            break;
        }
    }
    judge_warnings(text, &mut out);
    out
}

/// fairseq's own loader warning, as it prints it: `BufferedIterator.__next__` in
/// `fairseq/data/iterators.py` (facebookresearch/fairseq v0.10.2 `logger.info`, main
/// `logger.debug`; forks `logging.warning`/`print`) logs "Data loading buffer is empty or
/// nearly empty. This may indicate a data loading bottleneck, and increasing the number of
/// workers (--num-workers) may help." when fewer than `min(2, max(1, maxsize // 2))` batches
/// are ready more than five minutes into the iterator, at most once every fifteen minutes:
/// the training loop found the loader's buffer empty, the framework's own reading of a
/// bottleneck. A line of the log looks like `2021-03-20 01:11:09 | INFO |
/// fairseq.data.iterators | Data loading buffer is empty or nearly empty. …`.
static FAIRSEQ_BUFFER_EMPTY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new("Data loading buffer is empty"));

/// A training log that stops inside a loader warning (a paste cut mid-line): the start of
/// one is there (`This DataLoader will create 16 worker proc`, `does not have many wor`) but
/// no whole warning was read from it. Says why, for an `input ends early` verdict; None
/// when the text ends with a newline or its last line is not a cut warning.
pub fn cut_warning(text: &str) -> Option<String> {
    if text.is_empty() || text.ends_with('\n') {
        return None;
    }
    // the last line that starts a warning, among the last five (a wrapped one spreads): only
    // the tail of the text is read, whatever its length
    let tail_at = tail_start(text, 5);
    let tail = &text[tail_at..];
    let lines: Vec<&str> = tail.lines().collect();
    let start_line = (0..lines.len()).rev().find(|&i| {
        let sq = squash(lines[i]);
        [
            "thisdataloaderwillcreate",
            "willcreate",
            "doesnothavemany",
            "toomanydataloaderworkers",
        ]
        .iter()
        .any(|k| sq.contains(k))
    })?;
    // a whole warning was read from that line on: nothing is missing (a warning that starts
    // before the tail ends before it: it was whole)
    let whole = log_warnings(tail).iter().any(|w| w.line > start_line);
    (!whole).then(|| {
        let last = text.lines().last().unwrap_or("").trim();
        format!(
            "the log stops inside a loader warning (`…{}`)",
            last.chars()
                .rev()
                .take(60)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>()
        )
    })
}

/// The byte offset where the last `n` lines of `text` start (lines as `str::lines` splits
/// them; a text that does not end with a newline has its last line counted).
fn tail_start(text: &str, n: usize) -> usize {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut at = body.len();
    for _ in 0..n {
        match body[..at].rfind('\n') {
            Some(i) => at = i,
            None => return 0,
        }
    }
    at + 1
}

/// Which warnings are evidence of a loader bottleneck, by what the rest of the text says:
/// Lightning's few-workers warning on a machine of a few CPUs (it names the count), a
/// few-workers warning about a validation/test loader while the job's command gives the
/// training loader several workers, a shard cap that still leaves several workers.
fn judge_warnings(text: &str, warnings: &mut [LogWarning]) {
    if warnings.is_empty() {
        return;
    }
    // the worker count the job's own command lines set
    let set_workers: Option<(u64, String)> = crate::formats::launcher::find(text)
        .iter()
        .flat_map(|l| l.settings.iter())
        .filter(|s| crate::formats::launcher::setting_name(&s.key) == Some("num_workers"))
        .find_map(|s| {
            s.value
                .trim()
                .parse::<u64>()
                .ok()
                .map(|n| (n, s.raw.clone()))
        });
    for w in warnings.iter_mut() {
        let low = w.text.to_ascii_lowercase();
        match w.kind {
            "few-workers" => {
                if let Some((n, raw)) = &set_workers
                    && *n > 2
                {
                    // Lightning warns only at 2 workers or fewer
                    w.setting_contradicted = true;
                    if names_eval_loader(&low) {
                        w.discounted = Some(format!(
                            "the warning is about a validation/test loader while the command sets `{raw}` for training: the setting does not reach the loader the framework checked"
                        ));
                    }
                }
                if w.discounted.is_none()
                    && let Some(c) = w.suggested
                    && c <= FEW_WORKERS_MIN_CPUS
                {
                    w.discounted = Some(format!(
                        "the warning suggests {c} worker(s), the CPUs of its machine: with that few CPUs more workers are not where the time goes"
                    ));
                }
            }
            // a start-up hint (workers are re-created every epoch), not a throughput one:
            // data.persistent-workers-off judges it
            "persistent-workers" => {
                w.discounted = Some(
                    "a hint about worker start-up each epoch, not about feeding the GPU"
                        .to_string(),
                );
            }
            "workers-capped" if w.suggested.is_none_or(|s| s > 2) => {
                w.discounted =
                    Some("the dataset's shards still give the loader several workers".to_string());
            }
            _ => {}
        }
    }
}

/// Whether the job trains on latents kohya-ss/sd-scripts cached before training: its
/// `--cache_latents` / `--cache_latents_to_disk` flags (a bare flag on a command line,
/// `cache_latents = true` in a `--config_file` TOML or a front end's TOML/JSON/YAML). The
/// dataset's `__getitem__` (`library/train_util.py`, `BaseDataset`) then takes
/// `image_info.latents` (`# cache_latents=Trueの場合`) or loads `image_info.latents_npz`
/// (`# …cache_latents_to_disk=Trueの場合`) instead of reading, cropping and resizing the image,
/// so its DataLoader workers serve tensors the VAE already made and tokenize captions.
pub fn cached_latents(text: &str) -> bool {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?mi)(?:^|[\s"',{])cache_latents(?:_to_disk)?["']?[ \t]*[:=][ \t]*["']?(?:true|1)\b|(?:^|[\s\[,(])["']?--cache_latents(?:_to_disk)?(?:[ \t]*=[ \t]*["']?(?:true|1)\b|["']?[ \t]*(?:[,\])]|$)|[ \t])"#,
        )
        .expect("static regex")
    });
    RE.is_match(text)
}

/// What the job's batches are made of, where the text shows it: `text` for a language-model
/// fine-tune or pre-training (a tokenizer, a sequence length, a decoder layer to shard, LoRA),
/// `image` for vision pipelines (resize/crop/flip transforms, image loading), `cached-latents`
/// for an sd-scripts job whose VAE latents were cached before training ([`cached_latents`]),
/// whatever else it names. A tokenized text batch is cheap to collate, so a few workers feed
/// a GPU that an image pipeline would starve; a batch of cached latents needs no decoding.
/// None when the text shows neither, or both (a multimodal job counts as images).
pub fn workload(text: &str) -> Option<&'static str> {
    if cached_latents(text) {
        return Some("cached-latents");
    }
    const TEXT: &[&str] = &[
        "tokenizer",
        "model_max_length",
        "max_seq_length",
        "max_seq_len",
        "seq_length",
        "cutoff_len",
        "decoderlayer",
        "fsdp_transformer_layer_cls_to_wrap",
        "lora_r",
        "lora_alpha",
        "predict_with_generate",
        "causal_lm",
        "causallm",
    ];
    // vision and vision-language jobs (VQA, VisualBERT, LLaVA-style towers) load or
    // transform images even when a tokenizer is also configured
    const IMAGE: &[&str] = &[
        "image",
        "img",
        "visual",
        "vision",
        "video",
        "pixel",
        "vqa",
        "frames",
        "crop",
        "flip",
        "torchvision",
        "mm_projector",
    ];
    let low = text.to_ascii_lowercase();
    let is_text = TEXT.iter().any(|k| low.contains(k));
    let is_image = IMAGE.iter().any(|k| low.contains(k));
    match (is_text, is_image) {
        (true, false) => Some("text"),
        (_, true) => Some("image"),
        _ => None,
    }
}

/// The per-step data wait a training loop prints beside its step time, summed over the log.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepTimings {
    /// Which loop printed it (`metric-logger`, `lerobot`, `imagenet-example`, `mmengine`,
    /// `paddle`, `yolox`, `own-loop`, `wav2letter`, `espnet2`, `lua-trainbatch`, …).
    pub format: &'static str,
    /// Progress lines summed.
    pub lines: usize,
    /// Seconds waited for batches, and seconds of the whole steps, over those lines.
    pub data_s: f64,
    pub step_s: f64,
    /// data_s / step_s.
    pub share: f64,
    /// The line with the largest wait: 1-based number and text.
    pub worst_line: usize,
    pub worst: String,
    /// Whether that line is left out of the sums (three lines or more).
    pub worst_left_out: bool,
}

/// The loops whose progress lines print the time waited for the batch and the step's time, as
/// their own code measures them:
///
/// - LeRobot (`lerobot/scripts/train.py`): `MetricsTracker` meters `updt_s` (`update_s`, the
///   policy update) and `data_s` (`dataloading_s = time.perf_counter() - start_time` around
///   `next(dl_iter)`), measured apart: the step is their sum.
/// - PyTorch's ImageNet example (pytorch/examples `imagenet/main.py`): `Time 3.114 (3.868)`
///   (`batch_time`, end to end, the batch's load included) and `Data 0.016 (0.758)`
///   (`data_time`, the load): the current value, before the running average in parentheses.
/// - MMEngine (`mmengine/runner/log_processor.py` with `IterTimerHook`) and Detectron2
///   (`CommonMetricPrinter` with the `IterationTimer` hook): `time: 0.512  data_time: 0.012`,
///   the iteration's time including the wait.
/// - Paddle's training loops (PaddleOCR `tools/program.py`, the Paddle model zoo's benchmark
///   logs): `reader_cost: 0.02 s, batch_cost: 1.84 s`, the batch cost counting from the reader.
///   The benchmark-standard spelling (PaddleRec `tools/trainer.py`, PaddleSlim, PaddleOCR's
///   PP-Structure `train_ser.py`, read at PaddlePaddle/PaddleRec and PaddleOCR in the index)
///   prints `avg_reader_cost: {:.5f} sec, avg_batch_cost: {:.5f} sec` with
///   `train_reader_cost / print_interval` and `(train_reader_cost + train_run_cost) /
///   print_interval`: the same two timers, the batch again counting the reader.
/// - PaddleDetection's dynamic-graph trainer (PaddlePaddle/PaddleDetection
///   `ppdet/engine/callbacks.py`, `LogPrinter.on_step_end`, read at release/2.0 3903e78,
///   release/2.3 2a4c8f4 and develop 666f597): `eta: 54 days, 5:33:41 batch_cost: 2.9940
///   data_cost: 2.7134 ips: 5.3440 images/s`, `str()` of two `SmoothedValue(log_iter,
///   fmt='{avg:.4f}')` (`ppdet/utils/stats.py`): the means over the last `log_iter` iterations.
///   `Trainer.train` (`ppdet/engine/trainer.py`) sets `iter_tic` before `enumerate(self.loader)`
///   yields the batch, updates `data_time` with `time.time() - iter_tic` as the batch arrives
///   and `batch_time` with the same difference after the optimizer step, then resets
///   `iter_tic`: the batch's cost includes the wait.
/// - YOLOX's trainer (Megvii-BaseDetection/YOLOX `yolox/core/trainer.py`, `after_iter`, and its
///   forks): `iter_time: 0.666s, data_time: 0.047s`, the meters with `time` in their name printed
///   as `"{}: {:.3f}s".format(k, v.avg)`, averaged over the print interval and cleared after it;
///   `train_one_iter` measures both from `iter_start_time`, before `self.prefetcher.next()`, so
///   the iteration's time includes the wait.
/// - A training script's own print of the two timers it keeps apart, `load_data_time: 0.0001,
///   train_step_time: 0.665` (guoqincode/Open-AnimateAnyone#101, a script the index does not
///   hold): the fetch of the batch, then the step without it; the step is their sum.
/// - BasicSR's `MessageLogger` (XPixelGroup/BasicSR `basicsr/utils/logger.py`, read at
///   04d2449 and in the `AvgTimer` era's copies; Real-ESRGAN, HAT, SAFMN, SMFANet and the
///   other restoration repositories that train with it): `[eta: 8 days, 22:51:35, time (data):
///   0.776 (0.020)]`, `f'time (data): {iter_time:.3f} ({data_time:.3f})] '`. `basicsr/train.py`
///   (at 016fe09 and 3ea61c6, and with `data_timer, iter_timer = AvgTimer(), AvgTimer()` in
///   the later ones) starts both timers before `prefetcher.next()`: `data_time` is the wait
///   for the batch, `iter_time` the iteration with the wait in it. The older loop prints the
///   last iteration's two times, `AvgTimer(window=200)` an average over up to 201 iterations:
///   which one a line holds the text does not say, so one line stays one moment.
/// - timm's `train.py` (huggingface/pytorch-image-models, `train_one_epoch`, read at 004fb5f
///   and 2aabaef): `Time: 0.316s,  405.65/s  (0.344s,  371.84/s)  LR: 5.000e-07  Data: 0.006
///   (0.033)`: the current value, then the epoch's running average in parentheses, of
///   `batch_time_m` (from `end`, the previous batch's end, so the load is in it; later
///   `update_time_m`, from the previous optimizer update) and `data_time_m` (`time.time() -
///   end`, later `accum_steps * (time.time() - data_start_time)`, the wait scaled to a whole
///   update). Its `Test:` lines print `Time:` without `Data:` and are not read.
/// - hszhao/semseg's `tool/train.py` and the segmentation and point-cloud trainers that copied
///   its line (ten copies at least in the index; Pointcept and BGCA print it in the threads
///   Pointcept/Pointcept#32 and mahaoxiang822/Boundary-Guided-Context-Aggregation#2): `Data
///   0.003 (1.491) Batch 0.271 (3.309) Remain 46:51:04`, `'Data {data_time.val:.3f}
///   ({data_time.avg:.3f}) ' 'Batch {batch_time.val:.3f} ({batch_time.avg:.3f}) ' 'Remain
///   {remain_time} '`, both `AverageMeter`s measured from `end` (reset at the loop's end), so
///   the batch's time includes the wait; the current values are read. The validation loop's
///   `Test: [k/N] Data … Batch …` lines print no `Remain` and are not read.
///
/// - PIPs' training loop (aharley/pips `train.py`, read at a05a120): `…; step 000032/200000;
///   rtime 210.16; itime 212.36; loss = 76.14967`, `print('%s; step %06d/%d; rtime %.2f; itime
///   %.2f; loss = %.5f' % (model_name, global_step, max_iters, read_time, iter_time, …))`.
///   `iter_start_time` is taken before `read_start_time`, and the read loops on
///   `next(train_iterloader)` until the dataset's sample is usable (the dataset prints `warning:
///   sampling failed` and draws another), so `rtime` is the wait for the batch and `itime` the
///   whole step with it; one step each, not a mean. With `grad_acc` above 1 `rtime` is the last
///   micro-batch's read only, so the share read is a lower bound.
/// - maskrcnn-benchmark's trainer (facebookresearch/maskrcnn-benchmark
///   `maskrcnn_benchmark/engine/trainer.py`, `do_train`, and the many detection and
///   scene-graph trainers that copied it, ten copies at least in the index): `data_time =
///   time.time() - end` as the batch arrives, `batch_time = time.time() - end` after
///   `optimizer.step()`, `meters.update(time=batch_time, data=data_time)`, and every 20
///   iterations `MetricLogger(delimiter="  ")` prints each meter as `"{}: {:.4f} ({:.4f})"` of
///   `SmoothedValue(window_size=20)`'s `median` and `global_avg` (`maskrcnn_benchmark/utils/
///   metric_logger.py`): `time: 0.5088 (0.4600)  data: 0.0164 (0.0177)`, the median of the
///   last 20 iterations, the wait inside the step. The medians are read.
///
/// - wav2letter++'s `Train.cpp` (flashlight/wav2letter, read at 0133bb81; the same `logStatus`
///   in its `src/runtime/Logger.cpp` copies and in flashlight's `fl_asr_train`): every epoch, or
///   every `--reportiters` updates, `epoch: 1 | … | bch(ms): 557.78 | smp(ms): 538.41 | fwd(ms):
///   9.84 | …`, `format("%.2f", meters.timer.value() * 1000)` and the same of
///   `meters.sampletimer`. The loop resumes `sampletimer` after the optimizer step and stops it
///   (`stopAndIncUnit`) as `for (auto& sample : *trainset)` hands over the next sample, while
///   `timer` runs through and counts a unit per sample: `smp` is the mean wait for a batch,
///   `bch` the mean batch with the wait in it, both since the meters were last reset (the
///   epoch or the report interval). One line is already a mean over many batches.
/// - ESPnet2's trainer (espnet/espnet `espnet2/train/trainer.py` `train_one_epoch`, read at
///   1c344a95, and `espnet2/train/reporter.py`): `reporter.measure_iter_time(iterator,
///   "iter_time")` registers the time `next(iterator)` took, and
///   `train_time=time.perf_counter() - start_time` is registered after the optimizer step,
///   `start_time` being reset right after it, so the step's time includes the wait. `SubReporter.log_message(-log_interval)` prints
///   `{epoch}epoch:{key}:{start}-{stop}batch: iter_time=…, …, train_time=…`, each value the
///   mean of the interval (`{:.3f}`, or `{:.3e}` below 1e-3), and the epoch's end prints
///   `{epoch}epoch results: [train] iter_time=…, …, train_time=…`, the epoch's mean: one line is
///   a mean over many batches. A line a terminal wrapped (ESPnet's own `doc/espnet2_tutorial.md`
///   shows two, split inside a key) is read with `train_time` on one of the next two lines.
/// - imagenet-multiGPU.torch's `train.lua` (soumith/imagenet-multiGPU.torch, read at 89395bf,
///   and the Lua Torch trainers that copied its `trainBatch`): the donkeys' end callback takes
///   `dataLoadingTime = dataTimer:time().real` and resets `timer`, runs the step, prints
///   `Epoch: [%d][%d/%d]\tTime %.3f Err %.4f Top1-%%: %.2f LR %.0e DataLoadingTime %.3f` and
///   resets `dataTimer`: `Time` is the step after the batch arrived, `DataLoadingTime` the wait
///   before it, measured apart (the step is their sum); one batch each.
///
/// - torchvision's `MetricLogger.log_every` and its copies: see [`metric_logger_timings`],
///   read first.
///
/// `None` without two such lines (one line is one moment), except for MetricLogger's, whose
/// printed values are averages over 20 iterations, wav2letter's and ESPnet2's (means over an
/// epoch or a log interval), and PaddleDetection's: `Trainer.train`
/// (`ppdet/engine/trainer.py`) creates its two `SmoothedValue(self.cfg.log_iter)` once, before
/// the epoch loop, so the window runs across epochs, and `LogPrinter` prints only when
/// `step_id % log_iter == 0`; `log_iter` is 20 in `configs/runtime.yml` (read at 0700414), the
/// base every model config includes. One line `Epoch: [e] [s/N]` is a mean over the last 20
/// iterations once `e * N + s + 1` iterations (from epoch 0) reach 20 (`paddledetection_window`);
/// a run resumed at a later epoch starts its window again, which one line cannot tell.
///
/// With three lines or more the longest wait is left out as an iterator's start, but only
/// where its line could be the start: the line prints no batch counter (`[k/N]`, `iter: k/N`,
/// `batch: k/N`, [`batch_counter`]), or the lines are printed every n > 1 batches (the
/// smallest step between their counters; MMCV, MMEngine, YOLOX and Paddle print the mean of
/// the n, which one long wait can make), or its counter is the first batch (0 or 1). A wait
/// printed at batch 9 of 13 by a loop that prints every batch is the loader falling behind
/// mid-epoch, not a start.
pub fn step_timings(text: &str) -> Option<StepTimings> {
    if let Some(t) = metric_logger_timings(text) {
        return Some(t);
    }
    static PATTERNS: std::sync::LazyLock<Vec<(&'static str, regex::Regex, regex::Regex, bool)>> =
        std::sync::LazyLock::new(|| {
            let r = |p: &str| regex::Regex::new(p).expect("static regex");
            vec![
                // (format, data, step, step includes data)
                (
                    "lerobot",
                    r(r"\bdata_s:(\d+(?:\.\d+)?)"),
                    r(r"\bupdt_s:(\d+(?:\.\d+)?)"),
                    false,
                ),
                (
                    "imagenet-example",
                    r(r"\bData\s+(\d+(?:\.\d+)?)\s+\("),
                    r(r"\bTime\s+(\d+(?:\.\d+)?)\s+\("),
                    true,
                ),
                (
                    "mmengine",
                    r(r"\bdata_time:\s*(\d+(?:\.\d+)?)"),
                    r(r"(?:^|[\s,])time:\s*(\d+(?:\.\d+)?)"),
                    true,
                ),
                (
                    "paddle",
                    r(r"\b(?:avg_)?reader_cost:\s*(\d+(?:\.\d+)?)"),
                    r(r"\b(?:avg_)?batch_cost:\s*(\d+(?:\.\d+)?)"),
                    true,
                ),
                // PaddleDetection's LogPrinter, `batch_cost: 2.9940 data_cost: 2.7134`: the
                // window's mean iteration (the wait in it), then the mean wait
                (
                    "paddledetection",
                    r(r"\bdata_cost:\s*(\d+(?:\.\d+)?)"),
                    r(r"\bbatch_cost:\s*(\d+(?:\.\d+)?)"),
                    true,
                ),
                (
                    "yolox",
                    r(r"\bdata_time:\s*(\d+(?:\.\d+)?)s\b"),
                    r(r"\biter_time:\s*(\d+(?:\.\d+)?)s\b"),
                    true,
                ),
                // BasicSR's MessageLogger, `time (data): 0.776 (0.020)`: the iteration (the
                // wait in it), then the wait
                (
                    "basicsr",
                    r(r"\btime \(data\):\s*\d+(?:\.\d+)?\s*\((\d+(?:\.\d+)?)\)"),
                    r(r"\btime \(data\):\s*(\d+(?:\.\d+)?)"),
                    true,
                ),
                // timm's train.py, `Time: 0.316s,  405.65/s  (0.344s, ...)  Data: 0.006 (0.033)`:
                // the current values before the running averages
                (
                    "timm",
                    r(r"\bData:\s*(\d+(?:\.\d+)?)\s+\("),
                    r(r"\bTime:\s*(\d+(?:\.\d+)?)s,"),
                    true,
                ),
                // hszhao/semseg's line and its copies (Pointcept), `Data 0.003 (1.491) Batch
                // 0.271 (3.309)`: the current values
                (
                    "semseg",
                    r(r"\bData\s+(\d+(?:\.\d+)?)\s+\("),
                    r(r"\bBatch\s+(\d+(?:\.\d+)?)\s+\([^)]*\).*\bRemain\b"),
                    true,
                ),
                // a training loop's own timing print, `load_data_time: 0.0001, train_step_time:
                // 0.665` (guoqincode/Open-AnimateAnyone#101, the loop times the batch fetch and
                // the step apart): the wait for the batch, then the step without it
                // PIPs' train.py, `step 000032/200000; rtime 210.16; itime 212.36`: the read
                // of the batch, then the step with the read in it
                (
                    "pips",
                    r(r"\brtime (\d+(?:\.\d+)?);"),
                    r(r"\bitime (\d+(?:\.\d+)?);"),
                    true,
                ),
                // maskrcnn-benchmark's MetricLogger, `time: 0.5088 (0.4600)  data: 0.0164
                // (0.0177)`: the medians of the last 20 iterations before the global averages
                (
                    "maskrcnn-benchmark",
                    r(r"(?:^|\s)data: (\d+(?:\.\d+)?) \(\d"),
                    r(r"(?:^|\s)time: (\d+(?:\.\d+)?) \(\d"),
                    true,
                ),
                (
                    "own-loop",
                    r(r"\bload_data_time:\s*(\d+(?:\.\d+)?)"),
                    r(r"\btrain_step_time:\s*(\d+(?:\.\d+)?)"),
                    false,
                ),
                // wav2letter++/flashlight's `logStatus`, `bch(ms): 557.78 | smp(ms): 538.41`:
                // the mean batch, then the mean wait for the sample in it, in milliseconds
                // (`asr-bch(ms)` of the joint ASR/LM trainer is not this timer)
                (
                    "wav2letter",
                    r(r"(?:^|[\s|])smp\(ms\):\s*(\d+(?:\.\d+)?)"),
                    r(r"(?:^|[\s|])bch\(ms\):\s*(\d+(?:\.\d+)?)"),
                    true,
                ),
                // ESPnet2's trainer, `2epoch:train:1-10batch: iter_time=0.006, … train_time=0.203`
                // and `1epoch results: [train] iter_time=2.763e-04, … train_time=0.429`: the
                // wait for the batch, then the step with the wait in it (small values printed
                // `{:.3e}`)
                (
                    "espnet2",
                    r(r"(?:^|[\s,])iter_time=(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"),
                    r(r"(?:^|[\s,])train_time=(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"),
                    true,
                ),
                // imagenet-multiGPU.torch's `trainBatch` and the Lua Torch trainers that copied
                // it, `Time 3.915 Err 6.9070 … DataLoadingTime 11.843`: the step after the batch
                // arrived, then the wait for it, measured apart
                (
                    "lua-trainbatch",
                    r(r"\bDataLoadingTime\s+(\d+(?:\.\d+)?)"),
                    r(r"\bTime\s+(\d+(?:\.\d+)?)\s+(?:Err|Loss)\b"),
                    false,
                ),
                // Sana's `train_scripts/train.py` (NVlabs/Sana, read at 0bcf2bf5 and in the
                // index's other copies of it and its forks): every `log_interval` steps (and at an
                // epoch's first) `Epoch: {e} | Global Step: {g} | Local Step: {s} // {n},
                // total_eta: …, epoch_eta:…, time: all:{t:.3f}, model:{t_m:.3f}, data:{t_d:.3f},
                // lm:{t_lm:.3f}, vae:{t_vae:.3f}, lr:…`, with `t = (time.time() - last_tic) /
                // log_interval` the wall time per step since the last print (the wait in it) and
                // `t_d` the mean of `data_time_all += time.time() - data_time_start`, from the end
                // of one step (`data_time_start = time.time()`) to its next batch after
                // `accelerator.wait_for_everyone()`; its variants print other timers between
                // (`optimizer:`, `IQA:`, `Connector:`) in the same `name:value` form
                (
                    "sana",
                    r(r"(?:^|[\s,])data:(\d+(?:\.\d+)?)"),
                    r(r"\btime: all:(\d+(?:\.\d+)?)"),
                    true,
                ),
                // PixArt-α's `train_scripts/train.py` (PixArt-alpha/PixArt-alpha, read at
                // 37d7cef6; PixArt-Σ's is the same), the loop Sana's grew from: `Step/Epoch
                // [{g}/{e}][{s + 1}/{n}]:total_eta: …, epoch_eta:…, time_all:{t:.3f},
                // time_data:{t_d:.3f}, lr:…`, the same two means over `log_interval`
                (
                    "pixart",
                    r(r"\btime_data:(\d+(?:\.\d+)?)"),
                    r(r"\btime_all:(\d+(?:\.\d+)?)"),
                    true,
                ),
            ]
        });
    // formats whose every line prints means over many batches (an epoch, or the log
    // interval), so one line is already a measure and not one moment
    const WINDOWED: [&str; 2] = ["wav2letter", "espnet2"];
    // formats printed in milliseconds
    const MILLISECONDS: [&str; 1] = ["wav2letter"];
    let num = |re: &regex::Regex, l: &str| -> Option<f64> {
        re.captures(l)?
            .get(1)?
            .as_str()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    };
    for (format, data_re, step_re, inclusive) in PATTERNS.iter() {
        // (1-based line, data, step) of each progress line
        let mut rows: Vec<(usize, f64, f64)> = Vec::new();
        let all: Vec<&str> = text.lines().take(20_000).collect();
        for (i, l) in all.iter().enumerate() {
            let Some(d) = num(data_re, l) else {
                continue;
            };
            // ESPnet2's one long line, wrapped by the terminal it was copied from: the step
            // on one of the next two lines, before the next record's wait
            let s = num(step_re, l).or_else(|| {
                (*format == "espnet2")
                    .then(|| {
                        all.iter()
                            .skip(i + 1)
                            .take(2)
                            .take_while(|n| num(data_re, n).is_none())
                            .find_map(|n| num(step_re, n))
                    })
                    .flatten()
            });
            let Some(s) = s else {
                continue;
            };
            let (d, s) = if MILLISECONDS.contains(format) {
                (d / 1000.0, s / 1000.0)
            } else {
                (d, s)
            };
            let step = if *inclusive { s } else { s + d };
            if step > 0.0 && d <= step {
                rows.push((i + 1, d, step));
            }
        }
        // one PaddleDetection line is a mean over its window once the run has filled it
        let one_window = rows.len() == 1
            && (WINDOWED.contains(format)
                || (*format == "paddledetection" && paddledetection_window(all[rows[0].0 - 1])));
        if rows.len() < 2 && !one_window {
            continue;
        }
        // the longest wait is named; with three lines or more it is left out of the share: a
        // new iterator's first batch waits for its workers to start and fill their prefetch
        // (torch `dataloader.py`, `_MultiProcessingDataLoaderIter.__init__`: `num_workers`
        // processes, `prefetch_factor * num_workers` batches asked for before the first
        // `__next__` returns), once per epoch without persistent_workers; one such wait, or a
        // checkpoint's, is not the steady state
        let worst = rows
            .iter()
            .copied()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("two rows");
        // the counters the lines print, in order, and the print interval they step by
        let lines: Vec<&str> = text.lines().take(20_000).collect();
        let counters: Vec<u64> = rows
            .iter()
            .filter_map(|r| batch_counter(lines[r.0 - 1]))
            .collect();
        let interval = counters
            .windows(2)
            .filter_map(|w| w[1].checked_sub(w[0]).filter(|d| *d > 0))
            .min()
            .unwrap_or(1);
        // a line per batch (counters stepping by 1) names the batch that waited: past the
        // first it is no iterator's start; lines every n batches may print the mean of the n
        // (MMCV, MMEngine, YOLOX, Paddle), one long wait among them, so it stays left out
        let may_be_start = interval > 1 || batch_counter(lines[worst.0 - 1]).is_none_or(|k| k <= 1);
        let leave_out = rows.len() >= 3 && may_be_start;
        let kept: Vec<&(usize, f64, f64)> = rows
            .iter()
            .filter(|r| !leave_out || r.0 != worst.0)
            .collect();
        let data_s: f64 = kept.iter().map(|r| r.1).sum();
        let step_s: f64 = kept.iter().map(|r| r.2).sum();
        if step_s <= 0.0 {
            continue;
        }
        let line = text.lines().nth(worst.0 - 1).unwrap_or("");
        return Some(StepTimings {
            format,
            lines: kept.len(),
            data_s,
            step_s,
            share: data_s / step_s,
            worst_line: worst.0,
            worst: clip(line.trim(), 240),
            worst_left_out: leave_out,
        });
    }
    None
}

/// `log_iter` of PaddleDetection's `configs/runtime.yml`: the window of its `SmoothedValue`s.
const PADDLEDETECTION_LOG_ITER: u64 = 20;

/// Whether a PaddleDetection `LogPrinter` line (`Epoch: [18] [0/4] …`) comes after at least
/// [`PADDLEDETECTION_LOG_ITER`] iterations of the run, `e * N + s + 1` counted from epoch 0:
/// its `batch_cost` and `data_cost` are then means over a full window, not one iteration.
fn paddledetection_window(line: &str) -> bool {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\bEpoch: \[(\d+)\] \[\s*(\d+)/(\d+)\]").expect("static regex")
    });
    let Some(c) = RE.captures(line) else {
        return false;
    };
    let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
    let (Some(e), Some(s), Some(per)) = (n(1), n(2), n(3)) else {
        return false;
    };
    e.saturating_mul(per).saturating_add(s).saturating_add(1) >= PADDLEDETECTION_LOG_ITER
}

/// The batch counter of a progress line, `k` of `k/N`: `[e][k/N]` (PyTorch's ImageNet
/// example, MMCV/MMEngine), `iter: k/N` (YOLOX), `batch: k/N`; an epoch counter (`epoch:
/// [5/500]`, `epoch: 36/300`) is not one. Of two counters side by side, `[e/E][k/N]`, the
/// second is the batch whatever precedes them: hszhao/semseg's `'Epoch: [{}/{}][{}/{}] '`
/// (`epoch+1, args.epochs, i + 1, len(train_loader)`) and Pointcept's `Train: [1/100][29/510]`.
pub fn batch_counter(line: &str) -> Option<u64> {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)(\bepochs?\W{0,3})?(?:\[\s*(\d+)\s*/\s*\d+\s*\](?:\[\s*(\d+)\s*/\s*\d+\s*\])?|\b(?:iter|iteration|batch|step)s?\s*[:=]?\s*(\d+)\s*/\s*\d+)")
            .expect("static regex")
    });
    RE.captures_iter(line)
        .filter_map(|c| match c.get(3) {
            Some(k) => Some(k),
            None if c.get(1).is_some() => None,
            None => c.get(2).or(c.get(4)),
        })
        .filter_map(|k| k.as_str().parse().ok())
        .next()
}

/// The window torchvision's `SmoothedValue` averages over (`window_size=20`, a
/// `deque(maxlen=window_size)`), the one `log_every` uses for `time` and `data`.
const METRIC_LOGGER_WINDOW: u64 = 20;

/// torchvision's `MetricLogger.log_every` (pytorch/vision `references/classification/utils.py`,
/// copied by DETR, Deformable-DETR, DeiT, DINO, MAE, BLIP, ALBEF, VindLU and their forks;
/// read at pytorch/vision 041fe3b and in DINO's and BLIP's copies): every `print_freq`
/// iterations it prints `{header}{d}[{i:>w}/{n}]{d}eta: {eta}{d}{meters}{d}time: {time}{d}data:
/// {data}{d}max mem: {memory}` with `d` its delimiter (a tab in torchvision, two spaces in the
/// copies). `data` times `next()` on the loader from `end` (the end of the previous iteration),
/// `time` the whole iteration from the same `end`, so the step includes the wait; both are
/// `SmoothedValue(fmt='{avg:.4f}')` (DINO and BLIP `{avg:.6f}`): the mean of the last 20
/// iterations, not one moment. A line at iteration `i` below 20 still averages in iteration 0,
/// the new iterator's first batch (its workers' start): only lines at 20 or later are read,
/// and one of them is already a measure of 20 iterations. An evaluation loop's lines (`Test:`,
/// `Evaluation:` headers) are not the training loop's. A record a user's paste wrapped across
/// lines (the counter on one, `time:`/`data:` on another) is read whole.
pub fn metric_logger_timings(text: &str) -> Option<StepTimings> {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"\[\s*(\d+)\s*/\s*(\d+)\]([^\[\]]*?\s)time:\s*(\d+(?:\.\d+)?)\s+data:\s*(\d+(?:\.\d+)?)",
        )
        .expect("static regex")
    });
    if !text.contains("data:") || !text.contains("eta:") {
        return None;
    }
    let end = text
        .match_indices('\n')
        .nth(20_000)
        .map_or(text.len(), |(i, _)| i);
    let text = &text[..end];
    // (1-based line of `time:`, data, step)
    let mut rows: Vec<(usize, f64, f64)> = Vec::new();
    let (mut line, mut at) = (1usize, 0usize);
    for c in RE.captures_iter(text) {
        let whole = c.get(0).expect("match");
        let between = c.get(3).expect("group").as_str();
        if !between.contains("eta:") {
            continue;
        }
        let time_at = c.get(4).expect("group").start();
        line += text[at..time_at].matches('\n').count();
        at = time_at;
        let start = text[..whole.start()].rfind('\n').map_or(0, |i| i + 1);
        let header = &text[start..whole.start()];
        if header
            .split(|ch: char| !ch.is_ascii_alphanumeric())
            .any(|w| !w.is_empty() && is_eval_segment(w))
        {
            continue;
        }
        let num = |g: usize| c.get(g).and_then(|m| m.as_str().parse::<f64>().ok());
        let (Some(i), Some(step), Some(data)) = (
            c.get(1).and_then(|m| m.as_str().parse::<u64>().ok()),
            num(4),
            num(5),
        ) else {
            continue;
        };
        if i >= METRIC_LOGGER_WINDOW && step > 0.0 && step.is_finite() && data <= step {
            rows.push((line, data, step));
        }
    }
    let worst = rows.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let data_s: f64 = rows.iter().map(|r| r.1).sum();
    let step_s: f64 = rows.iter().map(|r| r.2).sum();
    let l = text.lines().nth(worst.0 - 1).unwrap_or("");
    Some(StepTimings {
        format: "metric-logger",
        lines: rows.len(),
        data_s,
        step_s,
        share: data_s / step_s,
        worst_line: worst.0,
        worst: clip(l.trim(), 240),
        worst_left_out: false,
    })
}

/// Where a Python traceback found the training loop when the job was interrupted: waiting in
/// the DataLoader's queue.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoaderInterrupt {
    /// 1-based line of the DataLoader's frame, and the frame as printed.
    pub line: usize,
    pub frame: String,
}

/// The line that ends a traceback: the exception as CPython's `traceback.format_exception_only`
/// prints it, its qualified name alone or followed by `: ` and the message
/// (`KeyboardInterrupt`, `torch.OutOfMemoryError: CUDA out of memory`). A sentence a poster
/// wrote under a traceback cut short is none.
fn is_exception_line(line: &str) -> bool {
    static EXC: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[A-Za-z_][A-Za-z0-9_.]*(?::|$)").expect("static regex")
    });
    EXC.is_match(line.trim())
}

/// A traceback (CPython `Lib/traceback.py` frames, innermost last) whose innermost torch frame
/// is the DataLoader's wait for a batch — `_try_get_data` on `self._data_queue.get(timeout=…)`
/// (torch `utils/data/dataloader.py`, 1.2–2.x; `_try_get_batch` on
/// `self.data_queue.get(timeout=timeout)` in 1.0–1.1, `_get_batch` on `self.data_queue.get()`
/// before) — with only the standard library's waiting below it (`queue.py`, `queues.py`,
/// `connection.py`, `selectors.py`, `threading.py`, `synchronize.py`), and no exception after
/// it but `KeyboardInterrupt` (or the text ends there): the loop was waiting for a batch when
/// it was stopped, one moment of it, as one `py-spy dump` would show. A worker's death runs
/// through `_utils/signal_handling.py` and raises its own error, and torch's DataLoader
/// timeout raises from `_try_get_data` itself: neither is read as this.
pub fn interrupted_in_loader(text: &str) -> Option<LoaderInterrupt> {
    const WAITS: &[&str] = &[
        "queue.py",
        "queues.py",
        "connection.py",
        "selectors.py",
        "threading.py",
        "synchronize.py",
    ];
    let lines: Vec<&str> = text.lines().take(20_000).collect();
    // a worker's death, as torch reports it, ends the wait too (the C++ handler's `ERROR:
    // Unexpected bus error encountered in worker` of `torch/csrc/DataLoader.cpp`, the
    // `DataLoader worker (pid N) is killed by signal` / `exited unexpectedly` of
    // `_utils/signal_handling.py` and `dataloader.py`): not an interrupt of the loop
    if lines.iter().any(|l| {
        l.contains("encountered in worker")
            || l.contains("DataLoader worker (pid")
                && (l.contains("killed by signal") || l.contains("exited unexpectedly"))
    }) {
        return None;
    }
    let frames: Vec<usize> = (0..lines.len())
        .filter(|i| is_traceback_frame(lines[*i]))
        .collect();
    let last = *frames.last()?;
    // after the innermost frame: its source and caret lines (indented), then the exception
    if let Some(exc) = lines[last + 1..]
        .iter()
        .map(|l| l.trim_end())
        .find(|l| !l.is_empty() && !l.starts_with(' '))
        && is_exception_line(exc)
        && exc.trim() != "KeyboardInterrupt"
    {
        return None;
    }
    for &i in frames.iter().rev() {
        let l = lines[i].trim();
        let file = l
            .strip_prefix("File \"")
            .and_then(|r| r.split_once('"'))
            .map(|(f, _)| f)
            .unwrap_or("");
        let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
        if file.ends_with("_utils/signal_handling.py") {
            return None;
        }
        // the standard library's, not torch's own `torch/multiprocessing/queue.py`: a path
        // segment named `torch` (a conda env named `pytorch`, `envs/pytorch/lib/python3.6/…`,
        // is no such segment)
        if WAITS.contains(&base) && !file.contains("/torch/") && !file.contains("\\torch\\") {
            continue;
        }
        let source = lines.get(i + 1).map(|s| s.trim()).unwrap_or("");
        // torch 1.0-1.1 named the same wait `_try_get_batch` (`_DataLoaderIter._try_get_batch`:
        // `data = self.data_queue.get(timeout=timeout)`, called by `_get_batch`, which raises
        // the timeout itself), renamed `_try_get_data` in 1.2
        let in_wait = file.ends_with("torch/utils/data/dataloader.py")
            && ((l.ends_with(", in _try_get_data") && source.contains("_data_queue.get("))
                || (l.ends_with(", in _try_get_batch") && source.contains("data_queue.get("))
                || (l.ends_with(", in _get_batch") && source.contains("data_queue.get(")));
        return in_wait.then(|| LoaderInterrupt {
            line: i + 1,
            frame: clip(&format!("{l} | {source}"), 240),
        });
    }
    None
}

/// The wait for the training batches in a PyTorch Lightning profiler report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoaderProfile {
    /// The report it was read from: `Lightning profiler report` (SimpleProfiler's table) or
    /// `torch profiler table` (`key_averages().table()`, `formats::profiler_report`).
    pub report: &'static str,
    /// The action timed around the training DataLoader's `next`, as printed.
    pub action: String,
    /// Its calls (batches fetched), where the report has the column.
    pub calls: Option<u64>,
    /// Seconds spent in it, and seconds of the action it is measured against.
    pub loader_s: f64,
    pub whole_s: f64,
    /// `run_training_epoch` where the report has it, else the report's `Total` row.
    pub whole: String,
    /// loader_s / whole_s.
    pub share: f64,
    /// 1-based line of the loader's row.
    pub line: usize,
}

/// A PyTorch Lightning profiler report (`SimpleProfiler.summary`, `lightning/pytorch/profilers/
/// simple.py`, read at Lightning-AI/pytorch-lightning `03f57f9`; `pytorch_lightning/profiler/
/// simple.py` before 1.7): `[FIT ]Profiler Report`, then a table of `Action | Mean duration (s) |
/// [Num calls |] Total time (s) [| Percentage %]` (the extended columns by default since 1.4),
/// cells separated by `|` and padded with spaces and tabs, with or without a leading `|` (1.6 on
/// writes one), and a `Total` row first in the extended form (`_` for its calls before 1.6).
/// Users paste it as printed or as a markdown table (`--- | ---` under the header). The header
/// row is what identifies it; rows are the cells under it, as many as the header has.
///
/// Returns the number of action rows read and, where a row times the training DataLoader's
/// `next`, that row against `run_training_epoch` (or `Total`): the action Lightning 1.6 on
/// names `[{loop class}].train_dataloader_next` (`TrainingEpochLoop._on_before_fetch`,
/// `[_TrainingEpochLoop]` in 2.x, `[TrainingEpochLoop]` before), and 1.3-1.5 `get_train_batch`
/// (`profiled_iterator` in `trainer/connectors/data_connector.py` / `utilities/fetching.py`).
/// `run_training_epoch` wraps the epoch loop that does the fetching (`FitLoop`); an epoch's
/// validation runs inside it, so the share is a floor of the training steps' wait.
pub fn lightning_profiler_report(text: &str) -> Option<(usize, Option<LoaderProfile>)> {
    fn cells(l: &str) -> Vec<String> {
        let t = l.trim();
        let t = t.strip_prefix('|').unwrap_or(t);
        let t = t.strip_suffix('|').unwrap_or(t);
        t.split('|').map(|c| c.trim().to_string()).collect()
    }
    let lines: Vec<&str> = text.lines().take(20_000).collect();
    let (hi, header) = lines.iter().enumerate().find_map(|(i, l)| {
        let c = cells(l);
        (c.first().map(String::as_str) == Some("Action")
            && c.iter().any(|x| x == "Mean duration (s)")
            && c.iter().any(|x| x == "Total time (s)"))
        .then_some((i, c))
    })?;
    let col = |name: &str| header.iter().position(|x| x == name);
    let total_col = col("Total time (s)")?;
    let calls_col = col("Num calls");
    // (1-based line, action, calls, total seconds)
    let mut rows: Vec<(usize, String, Option<u64>, f64)> = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(hi + 1) {
        let c = cells(l);
        if c.len() != header.len() || c[0].is_empty() {
            continue;
        }
        let Ok(total) = c[total_col].parse::<f64>() else {
            continue;
        };
        if !total.is_finite() || total < 0.0 {
            continue;
        }
        let calls = calls_col.and_then(|k| c[k].parse::<u64>().ok());
        rows.push((i + 1, c[0].clone(), calls, total));
    }
    if rows.is_empty() {
        return None;
    }
    let n = rows.iter().filter(|r| r.1 != "Total").count();
    let loader = rows
        .iter()
        .find(|r| {
            r.1 == "get_train_batch"
                || r.1.starts_with('[') && r.1.ends_with("].train_dataloader_next")
        })
        .and_then(|r| {
            let whole = rows
                .iter()
                .find(|w| w.1 == "run_training_epoch")
                .or_else(|| rows.iter().find(|w| w.1 == "Total"))?;
            (whole.3 > 0.0 && r.3 <= whole.3).then(|| LoaderProfile {
                report: "Lightning profiler report",
                action: r.1.clone(),
                calls: r.2,
                loader_s: r.3,
                whole_s: whole.3,
                whole: whole.1.clone(),
                share: r.3 / whole.3,
                line: r.0,
            })
        });
    Some((n, loader))
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

/// Metric names training loops print next to a number (`loss: 5.18`, `Data 0.016`,
/// `reader_cost: 0.02 s`, `152.1 images/sec`), and the time of one step after its number:
/// TF-slim's `learning.train_step` logs `global step %d: loss = %.4f (%.3f sec/step)`, and
/// RETURNN's step report (`returnn/torch/engine.py`) `ep 55 train, step 1347, ce 0.324, …,
/// 0.855 sec/step, elapsed 0:16:59, …` with its epoch as `ep`; and the time per iteration
/// Detectron2's `inference_on_dataset` prints (`detectron2/evaluation/evaluator.py`,
/// `log_every_n_seconds`: `f"Inference done {idx + 1}/{total}. " f"Dataloading:
/// {data_seconds_per_iter:.4f} s/iter. " f"Inference: … s/iter. " f"Eval: … s/iter. "
/// f"Total: … s/iter. " f"ETA={eta}"`, run by Mask2Former's `--eval-only` and copied into
/// other projects' evaluators): an evaluation loop's averages since its warm-up, a log of the
/// job, whose times are not the training loop's and are not read as its batch wait.
static METRIC: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\b(?:loss|lr|acc|epoch|ep|iter|step|time|data|batch_cost|reader_cost|data_time|ips|samples|throughput|wps|ups|ppl|bsz)\b\s*[:=]?\s*[-+]?\d|\d\s*(?:images|samples|tokens|img|it)/s(?:ec)?\b|\d\s*(?:sec|s)/(?:step|iter)\b",
    )
    .expect("static regex")
});

/// A progress line of a training loop: several metrics with their numbers on one line.
fn is_progress_line(line: &str) -> bool {
    METRIC.find_iter(line).take(3).count() >= 3 || line.to_ascii_lowercase().contains("images/sec")
}

/// A line of the C++ logging that TensorFlow/XLA and PyTorch's c10 print, and the lines a
/// dying process prints:
/// - TensorFlow and XLA (`tsl/platform/default/logging.cc`, `GenerateLogMessage`):
///   `fprintf(stderr, "%s.%06d: %c%s %s:%d] %s\n", time, micros, "IWEF"[severity], tid,
///   file, line, message)` with the time `%Y-%m-%d %H:%M:%S`: `2019-07-03 09:55:22.084592: I
///   tensorflow/stream_executor/…/dso_loader.cc:42] Successfully opened …`;
/// - glog's prefix, which c10 (`c10/util/Logging.cpp`) prints the same way:
///   `[IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] ` (`I1002 15:18:48.539551 1822062
///   ProcessGroupNCCL.cpp:528] …`);
/// - glibc's failed `assert` (`assert/assert.c`, `__assert_fail_base`: `%s%s%s:%u: %s%sAssertion
///   `%s' failed.`): `python: src/psm2_nccl_net.c:756: mq_progress_loop: Assertion `r->used'
///   failed.`;
/// - CPython's fatal error (`Python/pylifecycle.c` `fatal_error`, `faulthandler`): `Fatal
///   Python error: Segmentation fault`.
fn is_native_log_line(line: &str) -> bool {
    static NATIVE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}: [IWEF](?: +[0-9]+)? |[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} +[0-9]+ )\S+:[0-9]+\] |:[0-9]+: .*Assertion `.*' failed\.$|^Fatal Python error: ",
        )
        .expect("static regex")
    });
    NATIVE.is_match(line.trim())
}

/// A line of DeepSpeed's own logger (a training log of a DeepSpeed or Trainer-with-DeepSpeed
/// job, its `DeepSpeedEngine` config print among them): deepspeed/utils/logging.py
/// `LoggerFactory.create_logger` formats every record as `[%(asctime)s] [%(levelname)s]
/// [%(filename)s:%(lineno)d:%(funcName)s] %(message)s`, asctime in logging's default
/// `YYYY-MM-DD HH:MM:SS,mmm`. What the line says is not a loader setting: the config print's
/// `data_efficiency_config … 'num_workers': 0` is DeepSpeed's data-sampling option, read by
/// nothing here.
fn is_deepspeed_log_line(line: &str) -> bool {
    static DS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}\] \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[[^\]\s:]+\.py:[0-9]+:[A-Za-z_<>][A-Za-z0-9_<>]*\] ",
        )
        .expect("static regex")
    });
    DS.is_match(line.trim_start())
}

/// A frame line of a Python traceback as CPython prints it: `  File "{filename}", line
/// {lineno}, in {name}` (CPython `Lib/traceback.py`, `StackSummary.format_frame_summary`,
/// 3.x; the caret and source lines under it are the frame's own).
fn is_traceback_frame(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("File \"") else {
        return false;
    };
    let Some((_, after)) = rest.split_once("\", line ") else {
        return false;
    };
    let (num, tail) = after.split_at(
        after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len()),
    );
    !num.is_empty() && (tail.starts_with(", in ") || tail.is_empty())
}

/// A line of an SGLang server's log: its `configure_logger` (`python/sglang/srt/utils.py`,
/// later `utils/common.py`) formats every record as `[%(asctime)s{maybe_ms}{prefix}]
/// %(message)s` with datefmt `%Y-%m-%d %H:%M:%S` (`.%(msecs)03d` under `SGLANG_LOG_MS`), and
/// the scheduler's prefix names its ranks (` TP0`, ` DP1 TP4`, ` TP0 EP0`, ` PP1 TP0`): e.g.
/// `[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)`. The level is not
/// printed, so none of the words [`looks_like_log`] counts need be there.
fn is_sglang_log_line(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('[') else {
        return false;
    };
    let Some((stamp, _)) = rest.split_once(']') else {
        return false;
    };
    let mut parts = stamp.split(' ');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let d: Vec<&str> = date.split('-').collect();
    let (hms, ms) = time.split_once('.').unwrap_or((time, "000"));
    let t: Vec<&str> = hms.split(':').collect();
    d.len() == 3
        && digits(d[0], 4)
        && digits(d[1], 2)
        && digits(d[2], 2)
        && t.len() == 3
        && t.iter().all(|x| digits(x, 2))
        && digits(ms, 3)
        // the rank prefix: words of capitals then a number (TP4, DP1, EP0, PP1)
        && parts.all(|w| {
            let n = w.trim_start_matches(|c: char| c.is_ascii_uppercase());
            n.len() < w.len() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

fn looks_like_log(text: &str, has_warnings: bool) -> bool {
    // a Python traceback printed by the job (an error, or where Ctrl-C found the loop): the
    // frames are most of its lines (two per frame, three with a caret line)
    let nonempty = text
        .lines()
        .take(2000)
        .filter(|l| !l.trim().is_empty())
        .count();
    let frames = text
        .lines()
        .take(2000)
        .filter(|l| is_traceback_frame(l))
        .count();
    if frames >= 2 && frames * 4 >= nonempty {
        return true;
    }
    let mut hits = 0;
    for l in text.lines().take(2000) {
        let low = l.to_ascii_lowercase();
        if is_progress_line(l) || is_deepspeed_log_line(l) {
            hits += 2;
        } else if low.contains("warning")
            || low.contains("epoch")
            || low.contains("it/s]")
            || low.contains("s/it]")
            || low.contains("loss")
            || low.contains("traceback (most recent call last)")
            || low.contains(" info ")
            || low.starts_with("info")
            || low.contains("[rank")
            || is_sglang_log_line(l)
            || is_native_log_line(l)
        {
            hits += 1;
        }
    }
    hits >= 2
        || has_warnings
        || single_process_loader(text).is_some()
        || lightning_profiler_report(text).is_some()
        || cut_warning(text).is_some()
        // two lines of a loop's batch-wait and step timers (`step_timings`), however few
        // other metrics they print
        || step_timings(text).is_some()
        // torch's profiler table `key_averages().table()` (formats::profiler_report)
        || crate::formats::profiler_report::looks_like_torch_table(text)
        // cProfile listings: Lightning's AdvancedProfiler, torch.utils.bottleneck, pstats
        || crate::formats::profiler_report::looks_like_pstats(text)
}

/// Parse a structured config by content: JSON (also with comments), TOML, YAML; only a
/// mapping at the top counts (any text is a YAML string). This is the one content detector,
/// [`crate::formats::config::read_config`] without a file name.
pub fn parse_structured(text: &str) -> Option<(&'static str, Value)> {
    crate::formats::config::read_config(None, text)
        .ok()
        .map(|(f, v)| (f.id(), v))
        // the Trainer's printed arguments alone (`TrainingArguments(` then `key=value,` lines,
        // [`crate::formats::hf_args`]): a config no file holds, read for what it says
        .or_else(|| crate::formats::hf_args::parse_whole(text).map(|v| (HF_ARGS, v)))
        // a Jsonnet config (AllenNLP's `local …;` then an object, [`crate::formats::jsonnet`]):
        // read as the JSON it evaluates to
        .or_else(|| crate::formats::jsonnet::evaluate(text).map(|v| (JSONNET, v)))
}

/// The format name of [`JobText::Config`] for the Trainer's printed arguments: a config read,
/// not a file to edit.
pub const HF_ARGS: &str = "hf-args";

/// The format name of [`JobText::Config`] for a Jsonnet config: read as the JSON it evaluates
/// to; its settings are not edited in place (a value may be a local bound elsewhere in the
/// file, an expression or an import), so a fix names the key to change.
pub const JSONNET: &str = "jsonnet";

/// True when a text read as a log shows what a log reader reads: a loader warning (whole or
/// cut), or progress lines. Such a log stays one even inside a post
/// ([`crate::evidence::segment::job_text_in_paste`]).
pub fn log_shows_its_own(text: &str) -> bool {
    !log_warnings(text).is_empty()
        || cut_warning(text).is_some()
        || text.lines().take(2000).any(is_progress_line)
}

/// What this text is, by content: Python source, a structured config, launcher command
/// lines, or a training log. None when it is none of them.
pub fn detect(text: &str) -> Option<JobText> {
    if text.trim().is_empty() {
        return None;
    }
    // entries of a Python dict display pasted without its braces (`"NUMBER_WORKERS": 0,`),
    // which YAML would read as strings ending in a comma
    if crate::formats::python::looks_like_python(text)
        || crate::formats::python::dict_fragment(text)
    {
        return Some(JobText::Python);
    }
    let launches = crate::formats::launcher::find(text);
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    // progress lines of a training loop (a log may echo its command or argparse Namespace)
    let progress = text
        .lines()
        .take(2000)
        .filter(|l| is_progress_line(l))
        .count();
    let has_warnings = !log_warnings(text).is_empty();
    if !launches.is_empty()
        && !has_warnings
        && progress == 0
        && launches.len() * 4 >= lines.min(40) / 2
    {
        return Some(JobText::Launcher);
    }
    if has_warnings
        || cut_warning(text).is_some()
        || progress >= 2
        || (progress == 1 && launches.is_empty())
    {
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
    // (or one `srun` step whose resource options were read: what it asks of Slurm)
    if sc.shell_lines >= 2
        || (sc.shell_lines >= 1
            && (!sc.exports.is_empty() || sc.slurm != crate::formats::launcher::Slurm::default()))
    {
        return Some(JobText::Launcher);
    }
    looks_like_log(text, has_warnings).then_some(JobText::Log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_yolov3_family_s_number_workers_is_read_in_its_own_spelling() {
        // Peterisfar/YOLOV3 config/yolov3_config_voc.py `"NUMBER_WORKERS":4` (healthy) and
        // argusswift/YOLOv4-pytorch config/yolov4_config.py `"NUMBER_WORKERS": 0` (issue #58,
        // a problem) are both the training loader's num_workers
        assert_eq!(canonical_setting("NUMBER_WORKERS"), Some("num_workers"));
        // a document parser's / database pool's `number_workers` is no DataLoader's
        assert_eq!(canonical_setting("number_workers"), None);
        assert_eq!(canonical_setting("Number_Workers"), None);
    }

    #[test]
    fn a_llamafactory_yaml_leaves_the_loader_to_transformers_defaults() {
        // hiyouga/LlamaFactory#4714 (a WebUI-generated LoRA config): no dataloader_num_workers,
        // so the Trainer's 0; preprocessing_num_workers is the datasets.map pool
        let webui = "cutoff_len: 256\ndataset: identity\ndo_train: true\nfinetuning_type: lora\nmodel_name_or_path: Qwen/Qwen1.5-0.5B-Chat\nper_device_train_batch_size: 1\npreprocessing_num_workers: 16\nstage: sft\ntemplate: qwen\n";
        let (_, v) = parse_structured(webui).unwrap();
        let d = framework_defaults(&v);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].setting, &d[0].value), ("num_workers", &json!(0)));
        assert_eq!((d[1].setting, &d[1].value), ("pin_memory", &json!(true)));
        assert!(find_settings(&v).is_empty());
        // hiyouga/LlamaFactory#9590: the loader's workers written (16): no default for them
        let set = "model_name_or_path: models/Qwen2.5-VL-7B-Instruct\nstage: sft\ndo_train: true\nfinetuning_type: full\ntemplate: qwen2_vl\npreprocessing_num_workers: 16\ndataloader_num_workers: 16\n";
        let (_, v) = parse_structured(set).unwrap();
        assert!(
            framework_defaults(&v)
                .iter()
                .all(|d| d.setting != "num_workers")
        );
        // hiyouga/LlamaFactory#3914 as typed (`Lora_target`, `num train epochs`): the parser
        // refuses those keys, the run never started, nothing is read as a default
        let typo = "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nLora_target: q_proj,v_proj\nnum train epochs: 3.0\n";
        let (_, v) = parse_structured(typo).unwrap();
        assert!(framework_defaults(&v).is_empty());
        // axolotl (examples/llama-3/lora-8b.yml shape): its default depends on its version
        let axolotl = "base_model: NousResearch/Meta-Llama-3-8B\nadapter: lora\nmicro_batch_size: 2\nnum_epochs: 1\ndatasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n";
        let (_, v) = parse_structured(axolotl).unwrap();
        assert!(framework_defaults(&v).is_empty());
    }

    #[test]
    fn deepspeed_s_config_print_is_a_log_and_sets_no_loader() {
        // hiyouga/LlamaFactory#6149: DeepSpeed's config print of its data-efficiency sampler
        let l = "[2024-11-26 11:57:05,215] [INFO] [config.py:988:print]   data_efficiency_config ....... {'enabled': False, 'seed': 1234, 'data_sampling': {'enabled': False, 'num_epochs': 1000, 'num_workers': 0, 'curriculum_learning': {'enabled': False}}}";
        assert!(is_deepspeed_log_line(l));
        assert_eq!(detect(l), Some(JobText::Log));
        // a DeepSpeed warning of a real run (microsoft/DeepSpeed issues' pastes have this shape)
        assert!(is_deepspeed_log_line(
            "[2023-05-04 10:12:01,123] [WARNING] [stage3.py:1850:step] 4 pytorch allocator cache flushes since last step."
        ));
        // not DeepSpeed's format: no milliseconds, no file:line:function
        assert!(!is_deepspeed_log_line("[2024-11-26 11:57:05] [INFO] hello"));
        assert!(!is_deepspeed_log_line(
            "2024-11-26 11:57:05,215 INFO config.py:988 x"
        ));
    }

    #[test]
    fn the_trainers_printed_arguments_are_a_config() {
        // transformers' TrainingArguments.__str__ (formats::hf_args), printed alone
        let dump = "TrainingArguments(\n_n_gpu=1,\ndataloader_num_workers=0,\ndataloader_pin_memory=True,\nper_device_train_batch_size=8,\n)\n";
        assert_eq!(detect(dump), Some(JobText::Config(HF_ARGS)));
        let (f, v) = parse_structured(dump).unwrap();
        assert_eq!(f, HF_ARGS);
        let s = find_settings(&v);
        assert!(
            s.iter()
                .any(|o| o.setting == "num_workers" && o.value == json!(0))
        );
        assert!(
            s.iter()
                .any(|o| o.setting == "pin_memory" && o.value == json!(true))
        );
    }

    #[test]
    fn an_sglang_server_log_is_a_log() {
        // sgl-project/sglang#3752 (a comment's paste): the scheduler's own watchdog, then `top`
        let post = "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)\n\
[2025-03-09 00:57:15 TP6] Watchdog timeout (self.watchdog_timeout=300)\n\
[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.\n\
Killed\n\n\
top - 08:56:03 up 7:49, 3 users, load average: 20.25, 19.04, 13.06 \n\
PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND\n\
22098 root 20 0 125.2g 4.1g 1.4g R 300.7 0.2 260:17.42 sglang::schedul\n";
        assert_eq!(detect(post), Some(JobText::Log));
        // sgl-project/sglang#3424, #18785, #17941, #3784 and #3696: rank prefixes, uvicorn's lines
        for l in [
            "[2025-02-09 10:14:06 TP0] Decode batch. #running-req: 2, #token: 3778, token usage: 0.01, gen throughput (token/s): 50.47, #queue-req: 0",
            "[2026-02-12 11:38:29 TP0 EP0] Prefill batch, #new-seq: 5, #new-token: 8192",
            "[2026-01-29 13:12:37 PP1 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
            "[2025-02-22 08:19:45 TP26] Load weight begin. avail mem=78.38 GB",
            "[2025-02-19 10:36:52] INFO:     10.101.0.14:45930 - \"GET /health HTTP/1.1\" 200 OK",
        ] {
            assert!(is_sglang_log_line(l), "{l}");
        }
        // not SGLang's stamp (#3368, pytorch/torchtitan#1681, #22987): torch's c10 prefix, a
        // markdown link, a checklist item
        for l in [
            "[rank6]:[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] [Rank 6] Watchdog caught collective operation timeout",
            "[PP_hang_NCCL.log](https://github.com/user-attachments/files/22146930/PP_hang_NCCL.log)",
            "[x] I searched related issues but found no solution.",
        ] {
            assert!(!is_sglang_log_line(l), "{l}");
        }
    }

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
    fn the_squashed_search_agrees_with_squash() {
        for (s, n) in [
            ("does not have many workers", "worker"),
            ("does not have many wor kers", "worker"),
            ("WOR\tKER", "worker"),
            ("wo\u{a0}rker", "worker"),
            ("work er s", "workers"),
            ("the work is done", "worker"),
            ("w", "worker"),
            ("", "worker"),
            ("ww worker", "worker"),
            ("wörker worker", "worker"),
        ] {
            assert_eq!(
                contains_squashed(s, n.as_bytes()),
                squash(s).contains(n),
                "{s:?} / {n:?}"
            );
        }
        for s in ["Will Create 8", "it will  create", "will creat"] {
            assert_eq!(
                crate::vocab::contains_ignore_ascii_case(s, "will create", 0),
                s.to_ascii_lowercase().contains("will create"),
                "{s:?}"
            );
        }
    }

    #[test]
    fn framework_defaults_of_whole_configs() {
        // Detectron2's Base-RCNN-FPN.yaml (no DATALOADER node, no _BASE_): 4 workers
        let base = corpus("h27_d2_base_rcnn_fpn_no_workers_key.yaml");
        let (_, v) = parse_structured(&base).unwrap();
        let d = framework_defaults(&v);
        assert_eq!(
            (d.len(), d[0].framework, d[0].key_path, d[0].value.clone()),
            (1, "Detectron2", "DATALOADER.NUM_WORKERS", json!(4))
        );
        // Detectron2's faster_rcnn_R_50_FPN_3x.yaml (detectron2 v0.6, configs/COCO-Detection)
        // inherits the base: the base may set the workers, so no default is read
        let child = "_BASE_: \"../Base-RCNN-FPN.yaml\"\nMODEL:\n  WEIGHTS: \"detectron2://ImageNetPretrained/MSRA/R-50.pkl\"\n  MASK_ON: False\n  RESNETS:\n    DEPTH: 50\nSOLVER:\n  STEPS: (210000, 250000)\n  MAX_ITER: 270000\n";
        let (_, v) = parse_structured(child).unwrap();
        assert_eq!(framework_defaults(&v), []);
        // Ultralytics' default.yaml: its shape, with workers written (nothing left to default)
        let (_, mut v) =
            parse_structured(&corpus("h27_yolo_ultralytics_default_cfg_8_workers.yaml")).unwrap();
        assert_eq!(framework_defaults(&v), []);
        v.as_object_mut().unwrap().remove("workers");
        assert_eq!(framework_defaults(&v)[0].value, json!(8));
        // OTX's and geti's recipes have a `task:` of their own names: not Ultralytics
        for f in [
            "h27_yaml_otx_classification_base_2_workers.yaml",
            "h27_yaml_getitune_classification_4_workers.yaml",
        ] {
            let (_, v) = parse_structured(&corpus(f)).unwrap();
            assert_eq!(framework_defaults(&v), [], "{f}");
        }
    }

    #[test]
    fn an_allennlp_experiment_s_loader_without_workers_is_allennlp_s_default() {
        // DeCLUTR's declutr_small.jsonnet before PR #119 (h132): jsonnet locals, no num_workers
        let (_, v) = parse_structured(&corpus(
            "h132_jsonnet_declutr119_allennlp_loader_no_workers.jsonnet",
        ))
        .unwrap();
        let d = framework_defaults(&v);
        assert_eq!(
            (d.len(), d[0].framework, d[0].key_path, d[0].value.clone()),
            (1, "AllenNLP", "data_loader.num_workers", json!(0))
        );
        // the same experiment with its workers written (the corpus' allennlp file sets 20 but
        // is a fragment without dataset_reader/model): nothing left to default
        let mut w = v.clone();
        w["data_loader"]["num_workers"] = json!(1);
        assert_eq!(framework_defaults(&w), []);
        let (_, frag) = parse_structured(&corpus("allennlp_jsonnet_20_workers.jsonnet")).unwrap();
        assert_eq!(framework_defaults(&frag), []);
        // the default loader named by type, 1.x and 2.x: still 0
        for t in ["default", "multiprocess"] {
            let mut x = v.clone();
            x["data_loader"]["type"] = json!(t);
            assert_eq!(framework_defaults(&x).len(), 1, "{t}");
        }
        // loaders that are not the default implementation: not read
        for t in ["simple", "multitask", "my_loader"] {
            let mut x = v.clone();
            x["data_loader"]["type"] = json!(t);
            assert_eq!(framework_defaults(&x), [], "{t}");
        }
        // not an AllenNLP experiment: no train_data_path, or no data_loader object
        let mut x = v.clone();
        x.as_object_mut().unwrap().remove("train_data_path");
        assert_eq!(framework_defaults(&x), []);
        let mut x = v.clone();
        x["data_loader"] = json!("loader.jsonnet");
        assert_eq!(framework_defaults(&x), []);
        let plain =
            json!({"model": {"type": "x"}, "trainer": {}, "data_loader": {"batch_size": 4}});
        assert_eq!(framework_defaults(&plain), []);
    }

    #[test]
    fn the_ascii_squash_is_the_char_squash() {
        let s = "A\tB\x0bC\x0cD\rE\nF G";
        let by_char: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect();
        assert_eq!(squash(s), by_char);
        assert_eq!(squash("Ä B"), "äb");
    }

    #[test]
    fn a_cut_warning_is_found_in_the_tail_of_a_long_log() {
        let mut log = "epoch 1 loss 0.5 lr 0.1 step 3\n".repeat(10_000);
        log.push_str("UserWarning: This DataLoader will create 16 worker proc");
        assert!(cut_warning(&log).is_some());
        log.push_str("esses in total. Our suggested max number of worker in current system is 4, which is smaller than what this DataLoader is going to create.");
        assert_eq!(cut_warning(&log), None);
        assert_eq!(tail_start("a\nb\nc\n", 2), 2);
        assert_eq!(tail_start("a\nb\nc", 5), 0);
        assert_eq!(tail_start("a\nb\nc", 1), 4);
    }

    #[test]
    fn warnings_of_a_long_log_are_bounded() {
        let line = "UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current system is 2, which is smaller than what this DataLoader is going to create.\n";
        let log = line.repeat(crate::vocab::MAX_ITEMS + 500);
        let w = log_warnings(&log);
        assert_eq!(w.len(), crate::vocab::MAX_ITEMS);
        assert_eq!(
            (w[0].kind, w[0].workers, w[0].suggested),
            ("too-many-workers", Some(8), Some(2))
        );
    }

    #[test]
    fn fairseq_buffer_empty_warning() {
        // fairseq/data/iterators.py BufferedIterator (v0.10.2 logger.info): two lines of the
        // training log in facebookresearch/fairseq#3381
        let log = "2021-03-20 01:09:28 | INFO | train_inner | epoch 001:    305 / 941 loss=10.225, nll_loss=9.432, ppl=690.93, wps=61870.3, ups=0.39, wpb=157046, bsz=5531, num_updates=300, lr=7.5e-05, gnorm=1.605, loss_scale=4, train_wall=252, wall=1534\n2021-03-20 01:11:09 | INFO | fairseq.data.iterators | Data loading buffer is empty or nearly empty. This may indicate a data loading bottleneck, and increasing the number of workers (--num-workers) may help.\n";
        let w = log_warnings(log);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].kind, w[0].line), ("buffer-empty", 2));
        assert!(w[0].is_evidence());
        assert_eq!(detect(log), Some(JobText::Log));
        // the warning as it stands alone above a Slurm header (facebookresearch/fairseq#2264)
        let w = log_warnings(&corpus(
            "h69_log_fairseq2264_buffer_empty_warning_sbatch.txt",
        ));
        assert_eq!(
            w.iter().map(|w| w.kind).collect::<Vec<_>>(),
            ["buffer-empty"]
        );
        // wrapped by a terminal before "workers": read with the line that continues it
        let wrapped = "2021-03-20 01:11:09 | INFO | fairseq.data.iterators | Data loading buffer is empty or nearly empty. This may\nindicate a data loading bottleneck, and increasing the number of workers (--num-workers) may help.\n";
        let w = log_warnings(wrapped);
        assert_eq!(w.len(), 1);
        assert!(w[0].text.contains("--num-workers"));
        // healthy: fairseq's progress lines without it (the first line above)
        assert!(log_warnings(log.lines().next().unwrap()).is_empty());
    }

    #[test]
    fn own_loop_timers() {
        // guoqincode/Open-AnimateAnyone#101: load_data_time against train_step_time; the one
        // 19.6 s wait of six lines is the one left out (an iterator's start looks the same)
        let s = step_timings(&corpus("h69_log_animateanyone101_load_data_time_spike.txt")).unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("own-loop", 5, 4));
        assert!(s.share < 0.01, "{}", s.share);
        // healthy: the three lines before the wait
        let healthy = "load_data_time: 0.0001, train_step_time: 0.665. \nload_data_time: 0.0001, train_step_time: 0.652\nload_data_time: 0.0001, train_step_time: 0.640\n";
        let s = step_timings(healthy).unwrap();
        assert!(s.share < 0.001);
        assert_eq!(detect(healthy), Some(JobText::Log));
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

    use crate::test_corpus as corpus;

    #[test]
    fn a_warning_wrapped_mid_word_and_the_shard_cap_are_read() {
        let w = log_warnings(&corpus("h5_log_slideflow_4_workers_2_cpus_wrapped.txt"));
        assert_eq!(w.len(), 1, "{w:#?}");
        assert_eq!(
            (w[0].kind, w[0].workers, w[0].suggested),
            ("too-many-workers", Some(4), Some(2))
        );
        assert!(w[0].is_evidence());
        let w = log_warnings(
            "Too many dataloader workers: 32 (max is dataset.num_shards=1). Stopping 31 dataloader workers.\n",
        );
        assert_eq!(
            (w[0].kind, w[0].workers, w[0].suggested),
            ("workers-capped", Some(32), Some(1))
        );
        assert!(w[0].is_evidence());
        let w = log_warnings(
            "Too many dataloader workers: 32 (max is dataset.num_shards=16). Stopping 16 dataloader workers.\n",
        );
        assert!(!w[0].is_evidence());
    }

    #[test]
    fn warnings_the_text_itself_answers_are_not_evidence() {
        // a machine of 4 CPUs or fewer (the count the warning names)
        for text in [
            corpus("h3_log_bliss_warning_not_a_bottleneck.txt"),
            corpus("h5_log_lightning_warning_one_cpu.txt"),
        ] {
            let w = log_warnings(&text);
            assert_eq!(w.len(), 1);
            assert!(!w[0].is_evidence(), "{w:?}");
            assert!(
                w[0].discounted
                    .as_deref()
                    .unwrap()
                    .contains("CPUs of its machine")
            );
        }
        // a validation loader while the command gives training 4 workers
        let w = log_warnings(&corpus("h3_log_nnue_custom_loader_warning.txt"));
        assert!(w[0].setting_contradicted && !w[0].is_evidence(), "{w:?}");
        assert!(
            w[0].discounted
                .as_deref()
                .unwrap()
                .contains("--num-workers 4")
        );
        // the same warning about the training loader still counts, flagged as contradicted
        let train = "The dataloader, train_dataloader, does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` (try 16 which is the number of cpus on this machine) in the `DataLoader` init to improve performance.\npython3 train.py --num-workers 4\n";
        let w = log_warnings(train);
        assert!(w[0].setting_contradicted && w[0].is_evidence(), "{w:?}");
        // and a validation warning with no command: evidence
        let w = log_warnings(&corpus("h3_log_lambdalabs_val_few_workers_try32.txt"));
        assert!(w[0].is_evidence() && !w[0].setting_contradicted);
        // many CPUs: evidence
        let w = log_warnings(&corpus("h5_log_scarches_train_loader_few_workers.txt"));
        assert_eq!(w[0].suggested, Some(9));
        assert!(w[0].is_evidence());
    }

    #[test]
    fn progress_lines_make_a_log() {
        for name in [
            "h5_log_paddleocr_reader_cost_small.txt",
            "h5_log_horovod_tf_benchmark_images_per_sec.txt",
            "h5_log_imagenet_data_time_small.txt",
        ] {
            assert_eq!(detect(&corpus(name)), Some(JobText::Log), "{name}");
        }
        assert!(!is_progress_line("learning rate schedule: cosine"));
        // github.com/rwth-i6/i6_core/pull/658: RETURNN's step report (torchrun's prefix off)
        assert!(is_progress_line(
            "ep 55 train, step 1347, ce 0.324, ctc_4 1.006, ctc_10 0.776, ctc_16 0.677, grad_norm:p2 3.388, num_seqs 27, max_size:time 291200, max_size:aug_spatial 128, mem_usage:cuda:0 67.8GB, 0.855 sec/step, elapsed 0:16:59, exp. remaining 0:03:45, complete 81.92%"
        ));
        assert!(!is_progress_line(
            "the step function took 3 sec/step before"
        ));
    }

    #[test]
    fn native_log_lines_and_a_dying_process_make_a_log() {
        // github.com/horovod/horovod/issues/1191 (mpirun's tags off): TensorFlow's C++ log
        let t = "Running warm up\n2019-07-03 09:55:22.084592: I tensorflow/stream_executor/platform/default/dso_loader.cc:42] Successfully opened dynamic library libcublas.so.10.0\n2019-07-03 09:55:22.368772: I tensorflow/stream_executor/platform/default/dso_loader.cc:42] Successfully opened dynamic library libcudnn.so.7\n";
        assert_eq!(detect(t), Some(JobText::Log));
        // github.com/pytorch/pytorch/pull/46009: c10's glog-style lines
        assert!(is_native_log_line(
            "I1002 15:18:48.539551 1822062 ProcessGroupNCCL.cpp:528] [Rank 2] NCCL watchdog thread started!"
        ));
        // github.com/pytorch/pytorch/issues/75087 (torchrun's prefix off): glibc's assert, then
        // CPython's fatal error
        let t = "python: src/psm2_nccl_net.c:756: mq_progress_loop: Assertion `r->used' failed.\nFatal Python error: Segmentation fault\n";
        assert_eq!(detect(t), Some(JobText::Log));
        // a date and a colon are not a log line, nor is a word before `: `
        assert!(!is_native_log_line("2019-07-03 09:55:22: the run started"));
        assert!(!is_native_log_line("I1002 the run started: ok"));
    }

    #[test]
    fn workload_from_the_config() {
        assert_eq!(
            workload(&corpus("h3_py_shikra_training_args_4_workers.py")),
            Some("text")
        );
        // a tokenizer beside visual features is a vision-language job
        assert_eq!(
            workload(&corpus("mmf_training_num_workers6.yaml")),
            Some("image")
        );
        assert_eq!(
            workload(&corpus("h5_config_bigdet_mmdet_workers_per_gpu_0.py")),
            Some("image")
        );
        assert_eq!(workload("train:\n  num_workers: 2\n"), None);
    }

    #[test]
    fn sd_scripts_cached_latents_and_loader_names() {
        // github.com/67372a/LoRA_Easy_Training_Scripts/issues/88: the front end's TOML with
        // `max_data_loader_n_workers = 1`, persistent workers and both cache flags; its
        // `image_dir` and `vae` would make it an image job
        let t = corpus("h162_kohyatoml_loraeasy88_5070_one_worker_cached_latents.toml");
        assert!(cached_latents(&t));
        assert_eq!(workload(&t), Some("cached-latents"));
        assert_eq!(
            canonical_setting("max_data_loader_n_workers"),
            Some("num_workers")
        );
        assert_eq!(
            canonical_setting("persistent_data_loader_workers"),
            Some("persistent_workers")
        );
        // the flags as sd-scripts' argparse takes them, on a command line, in a Python list of
        // arguments, in JSON and YAML
        for t in [
            "accelerate launch train_network.py --cache_latents --max_data_loader_n_workers 2\n",
            "accelerate launch train_network.py \\\n  --cache_latents_to_disk \\\n  --seed 42\n",
            "  --gradient_checkpointing\n  --cache_latents\n",
            "cmd = [\"--sdpa\", \"--cache_latents\", \"--network_train_unet_only\"]\n",
            "{\"cache_latents\": true, \"max_data_loader_n_workers\": \"0\"}\n",
            "cache_latents_to_disk: True\n",
        ] {
            assert!(cached_latents(t), "{t}");
        }
        // not cached: the flag switched off, an attribute read in Python, a prose mention, a
        // longer flag name
        for t in [
            "cache_latents = false\n",
            "\"cache_latents\": false,\n",
            "  cache_latents = args.cache_latents\n",
            "if args.cache_latents:\n    vae.to(device)\n",
            "use cache_latents to save VRAM\n",
            "--cache_latents_to_disk_dir /tmp/x\n",
        ] {
            assert!(!cached_latents(t), "{t}");
        }
        assert_eq!(
            workload("image_dir = \"x\"\ncache_latents = false\n"),
            Some("image")
        );
    }

    /// Real warnings cut mid-line in the test (no cut copies are committed): a log that stops
    /// inside its only warning says so; the whole one is read.
    #[test]
    fn a_log_cut_inside_a_warning_says_so() {
        for name in [
            "h5_log_bliss_ci_32_workers_4_cpus.txt",
            "h5_log_cosmos_8_workers_1_cpu_stuck.txt",
            "h5_log_maze_transformer_16_workers_quoted.txt",
        ] {
            let text = corpus(name);
            assert!(
                log_warnings(&text).iter().any(LogWarning::is_evidence),
                "{name}"
            );
            assert_eq!(cut_warning(&text), None, "{name}");
            let at = text.find("worker processes").expect("warning") + 9;
            let cut = &text[..at];
            assert!(log_warnings(cut).is_empty(), "{name}");
            let why = cut_warning(cut).unwrap_or_else(|| panic!("{name}: cut not seen"));
            assert!(why.contains("stops inside a loader warning"), "{why}");
            assert_eq!(detect(cut), Some(JobText::Log), "{name}");
        }
        // a short whole log is judged, not called cut
        let short = "UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current system is 1, which is smaller than what this DataLoader is going to create.";
        assert_eq!(cut_warning(short), None);
        assert_eq!(log_warnings(short).len(), 1);
    }

    #[test]
    fn a_pasted_python_traceback_is_the_job_s_log() {
        // github.com/vskode/acodet/issues/47 (problem: the run hung before its second epoch;
        // the traceback printed when it was killed, as stored: no header, the loop waiting in
        // the validation DataLoader)
        let t = "    run_training(**kwargs)\n  File \"/gpfs2/scratch/atpope/bioacoustics/acodet/acodet/train.py\", line 300, in run_training\n    model = train(model, data_loaders)\n            ^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"[my_folder]/acodet/acodet/torch_train.py\", line 115, in train\n    for batch in val_loader:\n  File \"[my_folder]/acodet/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py\", line 741, in __next__\n    data = self._next_data()\n           ^^^^^^^^^^^^^^^^^\n  File \"[my_folder]/acodet/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py\", line 1310, in _try_get_data\n    data = self._data_queue.get(timeout=timeout)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n";
        assert_eq!(detect(t), Some(JobText::Log));
        // github.com/zju3dv/NeuralRecon/issues/91 (healthy for the loader rules: out of file
        // descriptors): a log, and no loader warning in it
        let t = "Traceback (most recent call last):\n  File \"main.py\", line 311, in <module>\n    train()\n  File \"main.py\", line 211, in train\n    for batch_idx, sample in enumerate(TrainImgLoader):\n  File \"/usr/local/lib/python3.8/site-packages/torch/utils/data/dataloader.py\", line 1186, in _next_data\n    idx, data = self._get_data()\nRuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n";
        assert_eq!(detect(t), Some(JobText::Log));
        assert!(log_warnings(t).is_empty());
        // one frame quoted in prose is not a log
        assert_eq!(
            detect(
                "The error points at File \"main.py\", line 311, in <module> of the repo, which\nI did not change. Any idea what is wrong with my setup or my data?\n"
            ),
            None
        );
        assert!(!is_traceback_frame("File \"main.py\" line 3"));
    }

    #[test]
    fn step_timings_of_speech_trainers_and_lua_torch() {
        // github.com/flashlight/wav2letter/issues/516 (problem: GPU idle most of the time):
        // two epoch lines, smp(ms) 538.41 of bch(ms) 557.78 and 501.88 of 520.89, in seconds
        let s = step_timings(&corpus("h154_log_wav2letter516_smp_538_of_557ms.txt")).unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("wav2letter", 2, 1));
        assert!((s.data_s - 1.04029).abs() < 1e-9, "{s:?}");
        assert!((s.step_s - 1.07867).abs() < 1e-9, "{s:?}");
        assert!(s.share > 0.96 && s.share < 0.97, "{s:?}");
        // github.com/flashlight/wav2letter/issues/835 (the model, not the loader): one line,
        // an epoch's mean, smp 0.56 of bch 3119.73 ms
        let s = step_timings(&corpus(
            "h154_log_wav2letter835_convglu_asg_smp_0_56_of_3119ms.txt",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines), ("wav2letter", 1));
        assert!(s.share < 0.001, "{s:?}");
        // github.com/flashlight/wav2letter/issues/555 (healthy): one report line at 1000
        // updates before the memory manager's stats, 15.52 of 239.84 ms
        let s = step_timings(&corpus(
            "h154_log_wav2letter555_streaming_convnets_smp_15_of_240ms.txt",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines), ("wav2letter", 1));
        assert!(s.share > 0.064 && s.share < 0.065, "{s:?}");
        // the joint ASR/LM trainer's `asr-bch(ms)`/`lm-bch(ms)` are not the batch timer
        assert_eq!(
            step_timings(
                "epoch: 1 | asr-bch(ms): 400.00 | lm-bch(ms): 10.00 | smp(ms): 5.00 | fwd(ms): 90.00\n"
            ),
            None
        );

        // github.com/espnet/espnet/issues/4802 (three GPUs barely faster; not the loader):
        // two `1epoch results` lines, iter_time 2.763e-04 of 0.429 s and 1.570e-04 of 0.323 s
        let s = step_timings(&corpus(
            "h154_log_espnet4802_epoch_results_1gpu_3gpu_iter_time_small.txt",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines), ("espnet2", 2));
        assert!((s.data_s - 4.333e-4).abs() < 1e-12, "{s:?}");
        assert!((s.step_s - 0.752).abs() < 1e-9, "{s:?}");
        // ESPnet's own tutorial (healthy): both records wrapped by the terminal, train_time
        // on the next line
        let s = step_timings(&corpus(
            "h154_log_espnet2tutorial_trainlog_wrapped_iter_time_small.txt",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("espnet2", 2, 2));
        assert!((s.step_s - 0.376).abs() < 1e-9, "{s:?}");
        assert!(s.share > 0.016 && s.share < 0.017, "{s:?}");
        // github.com/espnet/espnet/issues/2674 (healthy: an LM's 0.001 of 0.014 s); six
        // interval means, the longest wait left out as any line's that prints no counter
        let s = step_timings(&corpus("h69_log_espnet2674_lm_iter_time_small.log")).unwrap();
        assert_eq!((s.format, s.lines, s.worst_left_out), ("espnet2", 5, true));
        assert!(s.share > 0.07 && s.share < 0.08, "{s:?}");
        // a wrapped record does not borrow the next record's train_time: the first line's
        // wait (0.5) is left unread, the second line alone is read
        let t = "[h] 1epoch:train:1-10batch: iter_time=0.500, forward_time=0.1, los\n[h] 1epoch:train:11-20batch: iter_time=0.001, forward_time=0.1, train_time=0.200\n";
        let s = step_timings(t).unwrap();
        assert_eq!((s.lines, s.worst_line), (1, 2));
        assert!((s.share - 0.005).abs() < 1e-9, "{s:?}");
        // YOLOX's `iter_time: 1.599s` is not ESPnet's, and iter_time= without train_time= is
        // no step
        assert_eq!(
            step_timings(
                "2epoch:train:1-10batch: iter_time=0.006, forward_time=0.076\n2epoch:train:11-20batch: iter_time=0.007, forward_time=0.070\n"
            ),
            None
        );

        // github.com/soumith/imagenet-multiGPU.torch/issues/49 (problem: 4 GPUs slower than
        // one): per-batch Time (after the batch) beside DataLoadingTime (before it), summed
        let s = step_timings(&corpus(
            "h154_log_imagenetmultigpu49_dataloadingtime_4gpu_8gpu.txt",
        ))
        .unwrap();
        assert_eq!(s.format, "lua-trainbatch");
        assert_eq!((s.lines, s.worst_line, s.worst_left_out), (13, 18, false));
        assert!(s.share > 0.5, "{s:?}");
        // fbcunn's example prints `Time 0.42 ..` without the wait: not read
        assert_eq!(
            step_timings("Epoch: [1][1/10000] Time 0.42 ..\nEpoch: [1][2/10000] Time 0.42 ..\n"),
            None
        );
    }

    #[test]
    fn step_timings_of_sana_and_pixart() {
        // github.com/NVlabs/Sana/issues/206 (healthy steps before a watchdog timeout): three
        // epoch-2 lines, `time: all:1.39x` of which `data:0.003`, then validation bars; the
        // lines print no batch counter, so the longest wait is left out of three
        let s = step_timings(&corpus(
            "h162_log_sana206_time_all_model_data_before_validation.txt",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines, s.worst_left_out), ("sana", 2, true));
        assert!((s.data_s - 0.006).abs() < 1e-9, "{s:?}");
        assert!(s.share > 0.002 && s.share < 0.003, "{s:?}");
        // a loader that cannot keep up, in the f-string of Sana's train.py (the `optimizer:`
        // variant of its other trainers between `model:` and `data:`)
        let t = "2025-03-18 12:10:18 - [Sana] - INFO - Epoch: 1 | Global Step: 100 | Local Step: 100 // 1877, total_eta: 6:23:44, epoch_eta:0:19:20, time: all:2.400, model:0.500, optimizer:0.100, data:1.700, lm:0.076, lr:4.330e-05, s:(32, 32), loss:0.6753\n\
                 2025-03-18 12:10:46 - [Sana] - INFO - Epoch: 1 | Global Step: 120 | Local Step: 120 // 1877, total_eta: 6:22:56, epoch_eta:0:18:50, time: all:2.500, model:0.500, optimizer:0.100, data:1.800, lm:0.077, lr:4.330e-05, s:(32, 32), loss:0.6772\n";
        let s = step_timings(t).unwrap();
        assert_eq!(
            (s.format, s.lines, s.worst_line, s.worst_left_out),
            ("sana", 2, 2, false)
        );
        assert!((s.share - 3.5 / 4.9).abs() < 1e-9, "{s:?}");
        // PixArt-α's `Step/Epoch [g/e][s/n]:… time_all:…, time_data:…`: counters every 10
        // steps, so of three lines the longest wait (the epoch's first) is left out
        let t = "Step/Epoch [1/1][1/2000]:total_eta: 1 day, 2:00:00, epoch_eta:0:40:00, time_all:0.240, time_data:0.200, lr:2.000e-05, s:(128, 128), loss:0.1234, grad_norm:0.5000\n\
                 Step/Epoch [10/1][10/2000]:total_eta: 1 day, 1:50:00, epoch_eta:0:39:00, time_all:1.200, time_data:0.010, lr:2.000e-05, s:(128, 128), loss:0.1200, grad_norm:0.4000\n\
                 Step/Epoch [20/1][20/2000]:total_eta: 1 day, 1:40:00, epoch_eta:0:38:00, time_all:1.180, time_data:0.012, lr:2.000e-05, s:(128, 128), loss:0.1100, grad_norm:0.4000\n";
        let s = step_timings(t).unwrap();
        assert_eq!(
            (s.format, s.lines, s.worst_line, s.worst_left_out),
            ("pixart", 2, 1, true)
        );
        assert!((s.share - 0.022 / 2.38).abs() < 1e-9, "{s:?}");
        // neighbours: one line is no measure; `time: all:` without a `data:` timer, and a
        // `data:` value beside no `time: all:`, are not Sana's
        assert_eq!(
            step_timings(
                "Epoch: 1 | Global Step: 1 | Local Step: 1 // 10, total_eta: 0:01:00, epoch_eta:0:00:50, time: all:1.000, model:0.100, data:0.800, lm:0.0, vae:0.0, lr:1.0e-04\n"
            ),
            None
        );
        assert_eq!(
            step_timings(
                "time: all:1.000, model:0.900, lm:0.050\ntime: all:1.100, model:0.900, lm:0.050\n"
            ),
            None
        );
        assert_eq!(
            step_timings("split: train, data:0.500, total:4\nsplit: val, data:0.400, total:4\n"),
            None
        );
    }

    #[test]
    fn step_timings_of_the_loops_that_print_them() {
        // github.com/huggingface/lerobot/issues/1488 (problem: SmolVLA's loader 'VERY slow'):
        // data_s beside updt_s, measured apart; the 13.3 s line is named and left out
        let t = corpus("h22_log_lerobot1488_smolvla_data_s_spikes.log");
        let s = step_timings(&t).unwrap();
        assert_eq!(s.format, "lerobot");
        assert_eq!(s.lines, 8);
        assert_eq!(s.worst_line, 1);
        assert!(s.worst_left_out);
        assert!(s.worst.ends_with("data_s:13.330"));
        assert!((s.data_s - 0.601).abs() < 1e-9, "{s:?}");
        assert!(s.share > 0.2 && s.share < 0.21, "{s:?}");
        // github.com/pytorch/pytorch/pull/8371 (healthy once warm): Time includes Data; the
        // first batch of the epoch (82 s, 33 s of it the workers' start) is left out
        let s = step_timings(&corpus("h5_log_imagenet_data_time_small.txt")).unwrap();
        assert_eq!(s.format, "imagenet-example");
        assert_eq!(s.worst_line, 7);
        assert!(s.share < 0.01, "{s:?}");
        // github.com/PaddlePaddle/PaddleOCR/issues/4353: one line is one moment, not read
        assert_eq!(
            step_timings(&corpus("h5_log_paddleocr_reader_cost_small.txt")),
            None
        );
        // MMEngine's `time` (not `data_time`'s tail) and `data_time`, from a line of its
        // LogProcessor format (written for this test)
        let t = "Epoch(train) [1][ 50/500]  lr: 2.0e-02  eta: 0:10:00  time: 0.5000  data_time: 0.3000  memory: 3000  loss: 1.0\nEpoch(train) [1][100/500]  lr: 2.0e-02  eta: 0:09:00  time: 0.5000  data_time: 0.3000  memory: 3000  loss: 0.9\n";
        let s = step_timings(t).unwrap();
        assert_eq!(s.format, "mmengine");
        assert!((s.share - 0.6).abs() < 1e-9);
        assert!(!s.worst_left_out);
    }

    #[test]
    fn metric_logger_lines_are_windowed_averages() {
        // github.com/klauscc/VindLU/issues/10 (problem: 20+ days instead of 1.8, 'waiting for
        // the data loading most of the time (38s out of 40s)'): one MetricLogger record at
        // iteration 200, wrapped by the poster over four lines; the mean of 20 iterations
        let s = step_timings(&corpus("h79_log_vindlu10_metriclogger_data_38_of_40.log")).unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("metric-logger", 1, 4));
        assert!(s.share > 0.94 && s.share < 0.95, "{s:?}");
        assert!(!s.worst_left_out);
        // github.com/facebookresearch/dino/issues/69 (healthy: the author's ViT-S/16 run,
        // `Epoch: [0/100]  [2240/2502]`, data 0.00017 of 0.61 s): the epoch's `[0/100]` is not
        // the iteration counter
        let s = step_timings(&corpus(
            "h82_log_dino69_metriclogger_vits16_data_0_0002.log",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines), ("metric-logger", 6));
        assert!(s.share < 0.001, "{s:?}");
        // github.com/facebookresearch/dino/issues/96 (healthy: one line at iteration 1320)
        let s = step_timings(&corpus(
            "h82_log_dino96_metriclogger_one_line_data_0_0013.log",
        ))
        .unwrap();
        assert_eq!(s.lines, 1);
        assert!(s.share < 0.002, "{s:?}");
        // github.com/fangwei123456/Spike-Element-Wise-ResNet/issues/10 (healthy loader, slow
        // steps: torchvision's reference printing every iteration, an img/s meter among them)
        let t = corpus("h82_log_sewresnet10_torchvision_metriclogger_data_0_03.log");
        let s = step_timings(&t).unwrap();
        assert_eq!((s.format, s.lines), ("metric-logger", 7));
        assert!(s.share < 0.01, "{s:?}");
        // github.com/RERV/UniAdapter/issues/1: iteration 0 only, the first batch alone
        assert_eq!(
            step_timings(&corpus("h82_log_uniadapter1_metriclogger_iteration_0.log")),
            None
        );
        // iterations below 20 still average in iteration 0: left out, the later line kept
        // (torchvision's tab-delimited format, lines written for this test)
        let t = "Epoch: [0]\t[ 10/500]\teta: 0:10:00\tlr: 0.1\tloss: 6.9 (6.9)\ttime: 3.0000\tdata: 2.9000\tmax mem: 3000\nEpoch: [0]\t[ 20/500]\teta: 0:09:00\tlr: 0.1\tloss: 6.8 (6.9)\ttime: 0.5000\tdata: 0.0100\tmax mem: 3000\n";
        let s = step_timings(t).unwrap();
        assert_eq!((s.lines, s.worst_line), (1, 2));
        assert!((s.share - 0.02).abs() < 1e-9, "{s:?}");
        // an evaluation loop's lines are not the training loop's
        let t = "Test:  [ 20/196]  eta: 0:01:00  loss: 1.2 (1.3)  acc1: 70.0 (71.0)  time: 0.5000  data: 0.4500  max mem: 3000\n";
        assert_eq!(metric_logger_timings(t), None);
    }

    #[test]
    fn paddle_reader_and_batch_cost_in_both_spellings() {
        // github.com/PaddlePaddle/PaddleOCR/issues/2083 (problem: 'reader_cost is often high
        // and the GPU at 0%'): the iter counter is global, so the longest wait may be a start
        let s = step_timings(&corpus("h82_log_paddleocr2083_reader_cost_5_3_of_6_0.log")).unwrap();
        assert_eq!(s.format, "paddle");
        assert!(s.share > 0.8, "{s:?}");
        // github.com/PaddlePaddle/PaddleOCR/issues/6859 (problem: two lines, 35 s of 37 s)
        let s = step_timings(&corpus("h82_log_paddleocr6859_reader_cost_35_of_37.log")).unwrap();
        assert!(s.share > 0.9, "{s:?}");
        // github.com/PaddlePaddle/PaddleRec/issues/817 (healthy reader, 29 s steps): the
        // benchmark spelling `avg_reader_cost: … sec, avg_batch_cost: … sec`, records run
        // together on two physical lines (the first record of each is read)
        let s = step_timings(&corpus(
            "h82_log_paddlerec817_avg_reader_cost_0_002_of_29.log",
        ))
        .unwrap();
        assert_eq!((s.format, s.lines), ("paddle", 2));
        assert!(s.share < 0.001, "{s:?}");
        // github.com/PaddlePaddle/PaddleOCR/issues/9787: one avg_ line is not read
        assert_eq!(
            step_timings(&corpus(
                "h82_log_paddleocr9787_avg_reader_cost_one_line.log"
            )),
            None
        );
    }

    #[test]
    fn paddledetection_batch_cost_and_data_cost() {
        // github.com/yeyupiaoling/PP-YOLOE/issues/8 (problem: 5 images/s on a 1080 Ti, the
        // maintainer asks whether data reading is what slows it): four LogPrinter lines every
        // 20 iterations, data_cost 2.70-2.96 s of batch_cost 2.98-3.21 s; the lines print
        // window means, so the longest wait is left out as a possible start
        let s = step_timings(&corpus("h138_log_ppyoloe8_ppdet_data_cost_2_7_of_3_0.log")).unwrap();
        assert_eq!(
            (s.format, s.lines, s.worst_left_out),
            ("paddledetection", 3, true)
        );
        assert!(s.share > 0.89 && s.share < 0.92, "{s:?}");
        assert!(s.worst.contains("[ 360/2311]"), "{s:?}");
        // one line at [0][340/2311] is already a window: `Trainer.train` keeps its two
        // SmoothedValue(log_iter=20) across the run and this is its 341st iteration
        // (`paddledetection_window`, h147), so the line is a mean of 20, not one moment
        let one = corpus("h138_log_ppyoloe8_ppdet_data_cost_2_7_of_3_0.log");
        let s = step_timings(one.lines().next().unwrap()).unwrap();
        assert_eq!((s.format, s.lines), ("paddledetection", 1));
        assert!((s.share - 2.7134 / 2.9940).abs() < 1e-9, "{s:?}");
        // a healthy loader in the same format: the wait is a small share
        let fed = "[03/01 10:00:00] ppdet.engine INFO: Epoch: [1] [ 20/916] learning_rate: 0.010000 loss: 1.2 eta: 1:02:03 batch_cost: 0.3512 data_cost: 0.0021 ips: 22.7 images/s\n\
                   [03/01 10:00:07] ppdet.engine INFO: Epoch: [1] [ 40/916] learning_rate: 0.010000 loss: 1.1 eta: 1:01:55 batch_cost: 0.3498 data_cost: 0.0019 ips: 22.8 images/s\n";
        let s = step_timings(fed).unwrap();
        assert_eq!((s.format, s.lines), ("paddledetection", 2));
        assert!(s.share < 0.01, "{s:?}");
        // PaddleOCR's reader_cost lines stay Paddle's other spelling, and a data_cost larger
        // than its batch_cost (two numbers of different windows) is no progress line
        let s = step_timings(&corpus("h82_log_paddleocr2083_reader_cost_5_3_of_6_0.log")).unwrap();
        assert_eq!(s.format, "paddle");
        assert_eq!(
            step_timings("batch_cost: 0.1 data_cost: 0.5\nbatch_cost: 0.1 data_cost: 0.6\n"),
            None
        );
        // words that only name the two timers (prose) are not read
        assert_eq!(
            step_timings(
                "the batch_cost: grows with data_cost: see the FAQ\nbatch_cost: and data_cost: again\n"
            ),
            None
        );
    }

    #[test]
    fn a_mid_epoch_wait_is_not_left_out_as_a_start() {
        // github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/322 (problem: 'How to
        // improve the performance of the DataLoader'): a loop printing every batch, the 12.5 s
        // wait at batch 9 of 13 is kept
        let s = step_timings(&corpus("h82_log_effdet322_own_loop_data_time_12s.log")).unwrap();
        assert!(!s.worst_left_out);
        assert_eq!((s.lines, s.worst_line), (6, 4));
        assert!(s.share > 0.75, "{s:?}");
        // github.com/pytorch/pytorch/pull/8371 (healthy once warm): `[0][0/196]`, the epoch's
        // first batch, is still left out
        let s = step_timings(&corpus("h5_log_imagenet_data_time_small.txt")).unwrap();
        assert!(s.worst_left_out);
        // github.com/pytorch/examples/issues/164 (problem, --print-freq 1): the 67.5 s wait
        // at batch 16 is kept
        let s = step_timings(&corpus(
            "h39_log_examples164_imagenet_alexnet_data_spikes.log",
        ))
        .unwrap();
        assert!(!s.worst_left_out);
        // github.com/Megvii-BaseDetection/YOLOX/issues/327 (not judged: one 8.4 s mean among
        // four lines printed every 10 iterations): still left out
        let s = step_timings(&corpus("h39_log_yolox327_one_data_wait_in_four.log")).unwrap();
        assert!(s.worst_left_out);
        assert!(s.share < 0.1, "{s:?}");
        // the counters the lines print; an epoch counter is none
        assert_eq!(
            batch_counter("Epoch: [0][1760/5005]   Time 1.599 (2.648)"),
            Some(1760)
        );
        assert_eq!(
            batch_counter("epoch: 36/300, iter: 1260/1849, mem: 7420Mb"),
            Some(1260)
        );
        assert_eq!(
            batch_counter("epoch: [5/500], iter: 11550, lr: 0.001000"),
            None
        );
        assert_eq!(
            batch_counter("epoch: 5/20 - batch: 9/13 - loss_cls: 0.2108"),
            Some(9)
        );
        assert_eq!(
            batch_counter("load_data_time: 0.0001, train_step_time: 0.665"),
            None
        );
    }

    #[test]
    fn step_timings_of_basicsr_timm_and_semseg_lines() {
        // BasicSR's MessageLogger (basicsr/utils/logger.py): github.com/Zheng-MJ/SMFANet/issues/21
        // (not a loader problem: 'time (data)' 0.776 (0.020) s over four lines)
        let s = step_timings(&corpus("h89_log_smfanet21_basicsr_data_002_of_0776.log")).unwrap();
        assert_eq!((s.format, s.lines), ("basicsr", 3));
        assert!(s.worst_left_out);
        assert!(s.share > 0.02 && s.share < 0.03, "{s:?}");
        // github.com/Zheng-MJ/SMFANet/issues/14 (problem: IO, 1.018 of 1.160 s): one line,
        // which the older loop prints for one iteration: one moment, not read
        assert_eq!(
            step_timings(&corpus(
                "h89_log_smfanet14_basicsr_title_data_1018_of_1160.log"
            )),
            None
        );
        // the same format, with and without `[eta: ...,` before it (the KAIR-style copies
        // print `[time (data): ...]` alone), waiting most of each iteration (written for
        // this test)
        let t = "2025-01-22 11:30:24,940 INFO: [SAFMN..][epoch:4109, iter: 513,700, lr:(4.790e-04,)] [eta: 6 days, 5:33:08, time (data): 1.160 (1.018)] l_pix: 3.0548e-02\n\
                 2025-01-22 11:32:21,012 INFO: [SAFMN..][epoch:4109, iter: 513,800, lr:(4.790e-04,)] [time (data): 1.150 (1.010)] l_pix: 3.0211e-02\n";
        let s = step_timings(t).unwrap();
        assert_eq!((s.format, s.lines), ("basicsr", 2));
        assert!(s.share > 0.87 && s.share < 0.88, "{s:?}");

        // timm's train.py: huggingface/optimum-habana examples/pytorch-image-models/README.md
        // at 8af7c56b2ea66f2d3f4fcffa83994ed9ab97cd76 (two `Train:` lines, then `Test:` lines
        // with `Time:` and no `Data:`, which are not read)
        let t = "Train: 0 [   0/73 (  1%)]  Loss: 6.86 (6.86)  Time: 9.575s,   13.37/s  (9.575s,   13.37/s)  LR: 1.000e-05  Data: 0.844 (0.844)\n\
                 Train: 0 [  50/73 ( 70%)]  Loss: 6.77 (6.83)  Time: 0.320s,  400.32/s  (0.470s,  272.39/s)  LR: 1.000e-05  Data: 0.217 (0.047)\n\
                 Test: [   0/30]  Time: 6.593 (6.593)  Loss:   6.723 ( 6.723)  Acc@1:   0.000 (  0.000)  Acc@5:   0.000 (  0.000)\n\
                 Test: [  30/30]  Time: 3.856 (0.732)  Loss:   6.615 ( 6.691)  Acc@1:   0.000 (  0.076)  Acc@5:   1.176 (  3.287)\n";
        let s = step_timings(t).unwrap();
        assert_eq!((s.format, s.lines), ("timm", 2));
        assert!(
            (s.data_s - 1.061).abs() < 1e-9 && (s.step_s - 9.895).abs() < 1e-9,
            "{s:?}"
        );
        // a fed loop and a starved one, in train.py's format string (written for this test):
        // the current values, not the running averages in parentheses
        let fed = "Train: 0 [  50/10009 (  0%)]  Loss:  6.973588 (6.9921)  Time: 0.316s,  405.65/s  (0.344s,  371.84/s)  LR: 5.000e-07  Data: 0.006 (0.033)\n\
                   Train: 0 [ 100/10009 (  1%)]  Loss:  6.969796 (6.9847)  Time: 0.326s,  392.81/s  (0.330s,  387.68/s)  LR: 5.000e-07  Data: 0.006 (0.019)\n\
                   Train: 0 [ 150/10009 (  1%)]  Loss:  6.984760 (6.9847)  Time: 0.319s,  401.74/s  (0.325s,  393.80/s)  LR: 5.000e-07  Data: 0.006 (0.015)\n";
        assert!(step_timings(fed).unwrap().share < 0.02);
        let starved = fed.replace("Data: 0.006", "Data: 0.250");
        assert!(step_timings(&starved).unwrap().share > 0.7);

        // hszhao/semseg's line as Pointcept prints it: github.com/Pointcept/Pointcept/issues/32
        // (one line per batch; batch 30 waits 5.6 s of 6.1 s mid-epoch, so it stays in)
        let t = "[2023-11-28 11:59:00,020 INFO misc.py line 120 1066359] Train: [1/100][29/510] Data 0.003 (1.491) Batch 0.271 (3.309) Remain 46:51:04 loss: 0.9292 Lr: 0.09995\n\
                 [2023-11-28 11:59:06,123 INFO misc.py line 120 1066359] Train: [1/100][30/510] Data 5.589 (1.643) Batch 6.103 (3.412) Remain 48:18:54 loss: 0.9065 Lr: 0.09995\n\
                 [2023-11-28 11:59:06,393 INFO misc.py line 120 1066359] Train: [1/100][31/510] Data 0.005 (1.585) Batch 0.270 (3.300) Remain 46:43:31 loss: 1.0512 Lr: 0.09995\n\
                 [2023-11-28 11:59:06,631 INFO misc.py line 120 1066359] Train: [1/100][32/510] Data 0.003 (1.530) Batch 0.238 (3.195) Remain 45:13:45 loss: 0.9940 Lr: 0.09994\n";
        let s = step_timings(t).unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("semseg", 4, 2));
        assert!(!s.worst_left_out);
        assert!(s.share > 0.81 && s.share < 0.82, "{s:?}");
        // and as BGCA prints it: github.com/mahaoxiang822/Boundary-Guided-Context-Aggregation/issues/2
        // (each record twice, file and console; the current waits are 1-2 ms of 0.6-0.8 s)
        let t = "[2021-11-22 22:33:16,523 INFO train.py line 338 28028] Epoch: [1/120][180/3368] Data 0.002 (0.574) Batch 0.818 (3.887) Remain 436:08:39 Loss 11.8774 Accuracy 0.3469.\n\
                 INFO:main-logger:Epoch: [1/120][180/3368] Data 0.002 (0.574) Batch 0.818 (3.887) Remain 436:08:39 Loss 11.8774 Accuracy 0.3469.\n\
                 [2021-11-22 22:33:57,173 INFO train.py line 338 28028] Epoch: [1/120][190/3368] Data 0.001 (0.555) Batch 0.720 (3.896) Remain 437:11:12 Loss 12.8920 Accuracy 0.2397.\n\
                 INFO:main-logger:Epoch: [1/120][190/3368] Data 0.001 (0.555) Batch 0.720 (3.896) Remain 437:11:12 Loss 12.8920 Accuracy 0.2397.\n\
                 [2021-11-22 22:34:39,972 INFO train.py line 338 28028] Epoch: [1/120][200/3368] Data 0.001 (0.554) Batch 0.622 (3.915) Remain 439:19:47 Loss 10.0701 Accuracy 0.4903.\n";
        let s = step_timings(t).unwrap();
        assert_eq!(s.format, "semseg");
        assert!(s.share < 0.01, "{s:?}");
        // semseg's validation loop prints `Data`/`Batch` without `Remain`: not the training
        // loop's (tool/train.py's `validate`, written for this test)
        let t = "Test: [10/500] Data 0.900 (0.900) Batch 1.000 (1.000) Loss 0.5000 (0.5000) Accuracy 0.9000.\n\
                 Test: [20/500] Data 0.900 (0.900) Batch 1.000 (1.000) Loss 0.5000 (0.5000) Accuracy 0.9000.\n";
        assert_eq!(step_timings(t), None);
        // of two counters side by side the second is the batch
        assert_eq!(
            batch_counter("Train: [1/100][29/510] Data 0.003 (1.491)"),
            Some(29)
        );
        assert_eq!(
            batch_counter("Epoch: [1/120][180/3368] Data 0.002"),
            Some(180)
        );
    }

    #[test]
    fn step_timings_of_pips_rtime_and_itime() {
        // aharley/pips#17: PIPs' train.py prints the batch's read (rtime) and the step with it
        // (itime); step 32 waits 210.16 s of 212.36 s after the dataset's `warning: sampling
        // failed`, a step mid-run (counter 32, printed every step), so it is kept
        let s = step_timings(&corpus("h147_log_pips17_rtime_spike_210s.txt")).unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("pips", 12, 10));
        assert!(!s.worst_left_out);
        assert!(s.share > 0.85 && s.share < 0.95, "{}", s.share);
        // the steps before the spike: a read of 0.03-0.06 s of 2 s
        let healthy = "m; step 000024/200000; rtime 0.06; itime 1.95; loss = 67.71947\nm; step 000025/200000; rtime 0.05; itime 1.91; loss = 107.49207\nm; step 000026/200000; rtime 0.06; itime 1.86; loss = 106.29369\n";
        let s = step_timings(healthy).unwrap();
        assert_eq!(s.format, "pips");
        assert!(s.share < 0.05, "{}", s.share);
        // a line with the read alone, or words that merely end in `rtime`, is not one
        assert!(step_timings("step 1; rtime 3.0; loss 1\nstep 2; rtime 3.0; loss 1\n").is_none());
        assert!(
            step_timings("startime 3.0; splitime 4.0;\nstartime 3.0; splitime 4.0;\n").is_none()
        );
    }

    #[test]
    fn one_paddledetection_line_is_a_window_once_the_run_fills_it() {
        // PaddlePaddle/PaddleDetection#8765: epoch 18 of 4 batches, so the 20-iteration
        // SmoothedValue window behind batch_cost/data_cost is full: one line is read
        let s = step_timings(&corpus("h147_log_paddledet8765_data_cost_7_8_of_8_6.txt")).unwrap();
        assert_eq!((s.format, s.lines, s.worst_line), ("paddledetection", 1, 1));
        assert!((s.share - 7.8027 / 8.5667).abs() < 1e-9, "{}", s.share);
        assert!(!s.worst_left_out);
        let line = |e: u32, k: u32, n: u32| {
            format!(
                "[12/22 16:25:45] ppdet.engine INFO: Epoch: [{e}] [{k}/{n}] learning_rate: 0.000713 loss: 1.525035 eta: 0:35:24 batch_cost: 8.5667 data_cost: 7.8027 ips: 2.8015 images/s\n"
            )
        };
        // 0*7312 + 20 + 1 = 21 iterations: the window is full
        assert!(step_timings(&line(0, 20, 7312)).is_some());
        assert!(step_timings(&line(5, 0, 4)).is_some());
        // the run's first line (one iteration in the window) and its 19th are not
        assert!(step_timings(&line(0, 0, 7312)).is_none());
        assert!(step_timings(&line(4, 2, 4)).is_none());
        assert!(!paddledetection_window(
            "Epoch: [18] data_cost: 7.8 batch_cost: 8.5"
        ));
        // one line of another loop stays one moment
        assert!(
            step_timings(
                "Epoch(train) [18][0/4]  lr: 2.0e-02  time: 8.5667  data_time: 7.8027  loss: 1.0\n"
            )
            .is_none()
        );
    }

    #[test]
    fn step_timings_of_maskrcnn_benchmark_metric_logger() {
        // facebookresearch/maskrcnn-benchmark#976: `time: 0.5088 (0.4600)  data: 0.0164
        // (0.0177)`, medians of 20 iterations before the global averages; data under 4%
        let s = step_timings(&corpus(
            "h147_log_maskrcnnbench976_time_rising_data_small.txt",
        ))
        .unwrap();
        // printed every 20 iterations without a `/N` counter: the longest wait (iter 1140's
        // 0.0176) is left out as a possible start, as for the other windowed loggers
        assert_eq!(
            (s.format, s.lines, s.worst_line),
            ("maskrcnn-benchmark", 2, 2)
        );
        assert!(s.worst_left_out);
        assert!((s.data_s - (0.0164 + 0.0137)).abs() < 1e-9, "{}", s.data_s);
        assert!((s.step_s - (0.5088 + 0.4809)).abs() < 1e-9, "{}", s.step_s);
        // a loader-bound copy of the same logger
        let bound = "eta: 1:00:00  iter: 20  loss: 1.0 (1.0)  time: 2.0000 (2.1000)  data: 1.8000 (1.9000)  lr: 0.01  max mem: 3000\neta: 1:00:00  iter: 40  loss: 1.0 (1.0)  time: 2.0000 (2.0500)  data: 1.7000 (1.8000)  lr: 0.01  max mem: 3000\n";
        let s = step_timings(bound).unwrap();
        assert_eq!(s.format, "maskrcnn-benchmark");
        assert!(s.share > 0.8);
        // torchvision's MetricLogger (`time: 0.5000  data: 0.3000`, no parentheses) stays its own
        let tv = "Epoch: [0]  [ 20/500]  eta: 0:10:00  lr: 0.1  loss: 1.0 (1.0)  time: 0.5000  data: 0.3000  max mem: 3000\nEpoch: [0]  [ 40/500]  eta: 0:09:00  lr: 0.1  loss: 1.0 (1.0)  time: 0.5000  data: 0.3000  max mem: 3000\n";
        assert_eq!(step_timings(tv).unwrap().format, "metric-logger");
        // `data_time:` and `update_time:` are other loops' words
        assert!(step_timings("update_time: 2.0 (2.0) metadata: 1.0 (1.0)\nupdate_time: 2.0 (2.0) metadata: 1.0 (1.0)\n").is_none());
    }

    #[test]
    fn detectron2_s_evaluator_lines_are_a_log_without_a_batch_wait() {
        // facebookresearch/Mask2Former#225: inference_on_dataset's s/iter averages (each line
        // in the poster's backticks) are a log of the job; evaluation is not the training loop
        let t = corpus("h147_log_mask2former225_eval_dataloading_small.txt");
        assert_eq!(detect(&t), Some(JobText::Log));
        assert!(step_timings(&t).is_none());
        assert!(is_progress_line(
            "[01/14 14:27:12 d2.evaluation.evaluator]: Inference done 11/23852. Dataloading: 0.0006 s/iter. Inference: 0.0625 s/iter. Eval: 0.3715 s/iter. Total: 0.4347 s/iter. ETA=2:52:42"
        ));
        // one `s/iter` in prose is not a progress line
        assert!(!is_progress_line(
            "the old loader took 3 s/iter on this disk"
        ));
    }

    #[test]
    fn step_timings_of_yolox_s_trainer() {
        // github.com/Megvii-BaseDetection/YOLOX/issues/679 (the poster's epoch-36 lines, 14
        // days ETA): iter_time includes data_time; 0.2-1.3 s of 2.6-5.6 s iterations wait for
        // data; the lines are printed every 10 iterations (each the mean of those 10), the
        // 1.297 s line is left out
        let t = "2021-09-10 14:40:34 | INFO | yolox.core.trainer:246 - epoch: 36/300, iter: 1260/1849, mem: 7420Mb, iter_time: 2.564s, data_time: 0.195s, total_loss: 6.7, iou_loss: 2.6, l1_loss: 0.0, conf_loss: 2.8, cls_loss: 1.3, lr: 9.721e-03, size: 672, ETA: 14 days, 3:02:22

2021-09-10 14:41:12 | INFO | yolox.core.trainer:246 - epoch: 36/300, iter: 1270/1849, mem: 7420Mb, iter_time: 3.890s, data_time: 0.851s, total_loss: 6.2, iou_loss: 2.1, l1_loss: 0.0, conf_loss: 2.6, cls_loss: 1.5, lr: 9.721e-03, size: 768, ETA: 14 days, 3:03:40

2021-09-10 14:41:56 | INFO | yolox.core.trainer:246 - epoch: 36/300, iter: 1280/1849, mem: 7420Mb, iter_time: 4.339s, data_time: 0.861s, total_loss: 6.4, iou_loss: 2.4, l1_loss: 0.0, conf_loss: 2.6, cls_loss: 1.4, lr: 9.721e-03, size: 576, ETA: 14 days, 3:05:32

2021-09-10 14:42:43 | INFO | yolox.core.trainer:246 - epoch: 36/300, iter: 1290/1849, mem: 7420Mb, iter_time: 4.707s, data_time: 0.717s, total_loss: 7.0, iou_loss: 2.5, l1_loss: 0.0, conf_loss: 2.7, cls_loss: 1.7, lr: 9.721e-03, size: 512, ETA: 14 days, 3:07:50

2021-09-10 14:43:39 | INFO | yolox.core.trainer:246 - epoch: 36/300, iter: 1300/1849, mem: 7420Mb, iter_time: 5.567s, data_time: 1.297s, total_loss: 7.0, iou_loss: 2.5, l1_loss: 0.0, conf_loss: 3.0, cls_loss: 1.5, lr: 9.721e-03, size: 576, ETA: 14 days, 3:11:12
";
        let s = step_timings(t).unwrap();
        assert_eq!(s.format, "yolox");
        assert_eq!(s.lines, 4);
        assert_eq!(s.worst_line, 9);
        assert!(s.worst_left_out);
        assert!((s.data_s - 2.624).abs() < 1e-9, "{s:?}");
        assert!((s.step_s - 15.5).abs() < 1e-9, "{s:?}");
        // github.com/Megvii-BaseDetection/YOLOX/issues/32 (healthy: 8 V100, 0.03-0.05 s of
        // 0.67-0.79 s; the poster's copy numbers its lines)
        let s = step_timings(&corpus("h39_log_yolox32_8v100_data_time_small.log")).unwrap();
        assert_eq!(s.format, "yolox");
        assert_eq!(s.lines, 3);
        assert!(s.share < 0.05, "{s:?}");
        // MMEngine's lines print no `iter_time`: still read as MMEngine's
        // (github.com/open-mmlab/mmyolo/issues/789)
        let s = step_timings(&corpus("h39_log_mmyolo789_mmengine_data_time_7s.log")).unwrap();
        assert_eq!(s.format, "mmengine");
        assert!(s.share > 0.75, "{s:?}");
    }

    #[test]
    fn lightning_profiler_reports() {
        // github.com/time-series-foundation-models/lag-llama/issues/51 (problem: 'Data loader
        // bottlenecking training'): the report pasted as a markdown table, Lightning 2.x's
        // `[_TrainingEpochLoop].train_dataloader_next` against run_training_epoch
        let (n, p) = lightning_profiler_report(&corpus(
            "h39_prof_lagllama51_lightning_simple_dataloader_next.txt",
        ))
        .unwrap();
        assert_eq!(n, 4);
        let p = p.unwrap();
        assert_eq!(p.action, "[_TrainingEpochLoop].train_dataloader_next");
        assert_eq!(p.calls, Some(16));
        assert_eq!(p.whole, "run_training_epoch");
        assert_eq!(p.line, 5);
        assert!((p.share - 84.689 / 91.657).abs() < 1e-9);
        // github.com/rnwzd/FSPBT-Image-Translation/issues/2 (healthy, tab-separated, no
        // leading `|`, `_` for Total's calls) and Lightning-AI/pytorch-lightning#9304 (spaces):
        // reports of compute-bound steps that show no loader row
        let (n, p) =
            lightning_profiler_report(&corpus("h39_prof_fspbt2_simple_report_training_bound.txt"))
                .unwrap();
        assert_eq!((n, p), (7, None));
        let (n, p) =
            lightning_profiler_report(&corpus("h39_prof_lightning9304_simple_report_fit.txt"))
                .unwrap();
        assert_eq!((n, p), (4, None));
        // Lightning 1.3-1.5's name, against Total where the epoch row is not shown
        // (SimpleProfiler.summary's extended row format)
        let t = "FIT Profiler Report\n\n|  Action          \t|  Mean duration (s)\t|  Num calls      \t|  Total time (s) \t|  Percentage %   \t|\n|  Total           \t|  -              \t|  30             \t|  10.0           \t|  100 %          \t|\n|  get_train_batch \t|  0.2            \t|  10             \t|  2.0            \t|  20.0           \t|\n";
        let (_, p) = lightning_profiler_report(t).unwrap();
        let p = p.unwrap();
        assert_eq!(
            (p.action.as_str(), p.whole.as_str()),
            ("get_train_batch", "Total")
        );
        assert!((p.share - 0.2).abs() < 1e-9);
        // a log without the header is not a report
        assert_eq!(
            lightning_profiler_report(&corpus("h39_log_yolox32_8v100_data_time_small.log")),
            None
        );
    }

    #[test]
    fn a_traceback_that_stopped_the_loop_in_the_loader_s_wait() {
        // github.com/vskode/acodet/issues/47 (problem): killed while the validation loader
        // waited; the text ends in the queue get
        let t = corpus("h22_log_acodet47_val_loader_hang_keyboardinterrupt.log");
        let w = interrupted_in_loader(&t).unwrap();
        assert_eq!(w.line, 16);
        assert!(w.frame.contains("_data_queue.get(timeout=timeout)"));
        // the same with Ctrl-C's own line after it
        assert!(interrupted_in_loader(&format!("{t}KeyboardInterrupt\n")).is_some());
        // github.com/clovaai/voxceleb_trainer/issues/83 (a worker died of SIGBUS: the wait
        // was broken by signal_handling, not by the user)
        assert_eq!(
            interrupted_in_loader(&corpus("h22_shm_voxceleb83_bus_error_try_get_data.log")),
            None
        );
        // github.com/tengshaofeng/ResidualAttentionNetwork-pytorch/issues/2 (workers died of
        // SIGBUS; torch 0.3's `_get_batch`, the paste cut in the wait): the worker's death
        // ended the wait
        assert_eq!(
            interrupted_in_loader(&corpus("h10_shm_residualattention2_bus_error.log")),
            None
        );
        // github.com/dusty-nv/jetson-inference/issues/854 (problem): Ctrl-C in the
        // validation loader's `_try_get_data` (torch 1.4-1.6 frame names)
        let w = interrupted_in_loader(&corpus("h101_log_jetson854_val_loader_ctrl_c.txt")).unwrap();
        assert!(w.frame.contains(", in _try_get_data"), "{w:?}");
        // github.com/pytorch/pytorch/issues/19258 (problem): torch 1.0-1.1 named the same wait
        // `_try_get_batch`, and the standard library's frames lie in a conda env named
        // `pytorch` (`envs/pytorch/lib/python3.6/multiprocessing/queues.py`), not in torch
        let t = corpus("h101_log_pytorch19258_try_get_batch_ctrl_c.txt");
        let w = interrupted_in_loader(&t).unwrap();
        assert_eq!(w.line, 12);
        assert!(
            w.frame
                .contains("data = self.data_queue.get(timeout=timeout)"),
            "{w:?}"
        );
        // healthy neighbours: torch 1.0's own timeout, raised from `_get_batch` (not a wait
        // someone stopped), and a 2.x CI test's timeout
        // (github.com/pytorch/pytorch/issues/68643)
        let cut = t.split_inclusive('\n').take(9).collect::<String>()
            + "  File \"/home/xuzheyuan/.conda/envs/pytorch/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 526, in _get_batch\n    raise RuntimeError('DataLoader timed out after {} seconds'.format(self.timeout))\nRuntimeError: DataLoader timed out after 60 seconds\n";
        assert_eq!(interrupted_in_loader(&cut), None);
        assert_eq!(
            interrupted_in_loader(&corpus("h101_log_pytorch68643_ci_timed_out_5s.txt")),
            None
        );
        // a worker's death while torch 1.0 waited (its SIGCHLD handler raised)
        assert_eq!(
            interrupted_in_loader(&corpus("h101_dataloader_dcpdn12_killed_16g_ram.txt")),
            None
        );
        // github.com/zju3dv/NeuralRecon/issues/91 (out of file descriptors): torch raised
        assert_eq!(
            interrupted_in_loader(&corpus(
                "h22_dataloader_neuralrecon91_too_many_open_files.log"
            )),
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
