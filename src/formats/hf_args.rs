//! The Hugging Face Trainer's arguments as the Trainer prints them: a `TrainingArguments` dump
//! (and the same dump of its subclasses: TRL's `SFTConfig`/`DPOConfig`/`GRPOConfig`,
//! Optimum Habana's `GaudiTrainingArguments`, Sentence Transformers'
//! `SentenceTransformerTrainingArguments`, …), pasted alone or inside a training log
//! (`Training/evaluation parameters TrainingArguments(` of the `run_*.py` examples).
//!
//! Two shapes, both from the producer's source:
//!
//! - `str(args)`: transformers `src/transformers/training_args.py` (v4.x, unchanged from 4.2 to
//!   4.57 in the part read here) `TrainingArguments.__str__`: `asdict(self)`, the deprecated
//!   `per_gpu_*_batch_size` removed, every `*_token` value masked as `<KEY_TOKEN>`, then
//!   `attrs_as_str = [f"{k}={v},\n" for k, v in sorted(self_as_dict.items())]` and
//!   `f"{self.__class__.__name__}(\n{''.join(attrs_as_str)})"`: the class name and `(` on a
//!   line, one `key=value,` line per field in sorted order (`_n_gpu` first while it is a field,
//!   gone in 4.5x), values as `str()` prints them (`0`, `True`, `None`, `IntervalStrategy.STEPS`,
//!   a dict or list as Python's repr on one line), then `)` alone. `__repr__ = __str__` in the
//!   class body, so `repr()` of a `TrainingArguments` prints the same.
//! - `repr(args)` of a subclass: `@dataclass` gives a subclass its own generated `__repr__`
//!   (CPython `Lib/dataclasses.py` `_repr_fn`: `f"{self.__class__.__qualname__}(" + ", ".join(
//!   f"{name}={value!r}" …) + ")"`, fields in declaration order), so `f"{sft_config!r}"` or a
//!   container holding it prints `SFTConfig(output_dir='out', …, dataloader_num_workers=0, …)`
//!   on one line.
//!
//! Every field is printed, so a dump that lacks a field is a cut paste (or an older
//! transformers), never the field's default: nothing is assumed for a field the text does not
//! hold. What it yields: the fields as a JSON object (numbers, booleans, `None` as null, any
//! other value as its text), read only from a dump whose fields are the Trainer's
//! (`per_device_train_batch_size` or a `dataloader_*` field among them), not from another
//! dataclass printed the same way (a project's `DataArguments`).

use serde_json::{Map, Value};

/// One dump found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Dump {
    /// the printed class name: `TrainingArguments`, `SFTConfig`, …
    pub class: String,
    /// 1-based line of the class name
    pub line: usize,
    /// the fields read, in the order printed
    pub fields: Map<String, Value>,
    /// the closing `)` was found: the dump is whole
    pub complete: bool,
}

/// The Trainer's own fields, one of which a dump of its arguments always prints: a dump
/// without any of them is another dataclass's.
const TRAINER_FIELDS: &[&str] = &[
    "per_device_train_batch_size",
    "dataloader_num_workers",
    "dataloader_pin_memory",
    "dataloader_drop_last",
];

/// A class name as Python prints it (`TrainingArguments`, `UnslothSFTConfig`).
fn class_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn field_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_lowercase() || f == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A printed value as JSON: Python's `str()`/`repr()` of ints, floats, bools and None are
/// read; anything else stays its text (a quoted repr loses its quotes).
fn value_of(raw: &str) -> Value {
    let t = raw.trim();
    match t {
        "True" => return Value::Bool(true),
        "False" => return Value::Bool(false),
        "None" => return Value::Null,
        _ => {}
    }
    if let Ok(n) = t.parse::<i64>() {
        return Value::from(n);
    }
    if let Ok(f) = t.parse::<f64>()
        && f.is_finite()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    let unq = t
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
    Value::String(unq.unwrap_or(t).to_string())
}

/// The dumps in `text`, in both shapes, each read whole (at most a few thousand lines are
/// looked at per dump; a field line is bounded by the text). Dumps of other dataclasses
/// (`TRAINER_FIELDS`) are left out.
pub fn find(text: &str) -> Vec<Dump> {
    // a dump holds one of the Trainer's fields: any other text (a long log) costs one scan
    if !TRAINER_FIELDS.iter().any(|f| text.contains(f)) {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() && out.len() < 16 {
        let l = lines[i];
        // `str()`: `Name(` ends the line (a log prefix may stand before the name)
        if let Some(head) = l.trim_end().strip_suffix('(') {
            let name = head.rsplit([' ', '\t']).next().unwrap_or(head);
            if class_name(name) {
                let mut fields = Map::new();
                let mut j = i + 1;
                let mut complete = false;
                while j < lines.len() && j - i <= 4096 {
                    let f = lines[j].trim_end();
                    if f.trim() == ")" {
                        complete = true;
                        break;
                    }
                    let Some(body) = f.strip_suffix(',') else {
                        break;
                    };
                    let Some((k, v)) = body.split_once('=') else {
                        break;
                    };
                    if !field_name(k) {
                        break;
                    }
                    fields.insert(k.to_string(), value_of(v));
                    j += 1;
                }
                if TRAINER_FIELDS.iter().any(|k| fields.contains_key(*k)) {
                    out.push(Dump {
                        class: name.to_string(),
                        line: i + 1,
                        fields,
                        complete,
                    });
                    i = j;
                    continue;
                }
            }
        }
        // `repr()` of a subclass: `Name(field=value, …)` on one line
        if let Some(d) = one_line(l, i + 1) {
            out.push(d);
        }
        i += 1;
    }
    out
}

/// The dataclass `repr` of one line: the class name, `(`, then `name=value` pairs split at
/// `, ` outside brackets and quotes.
fn one_line(line: &str, n: usize) -> Option<Dump> {
    let open = TRAINER_FIELDS
        .iter()
        .filter_map(|f| line.find(&format!("{f}=")))
        .min()
        .and_then(|at| line[..at].rfind('('))?;
    let name = line[..open]
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .filter(|s| class_name(s))?;
    let body = &line[open + 1..];
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0usize);
    let mut fields = Map::new();
    let mut complete = false;
    let push = |piece: &str, fields: &mut Map<String, Value>| {
        if let Some((k, v)) = piece.trim().split_once('=')
            && field_name(k)
        {
            fields.insert(k.to_string(), value_of(v));
        }
    };
    let mut prev = '\0';
    for (at, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q && prev != '\\' => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')') if depth == 0 => {
                push(&body[start..at], &mut fields);
                complete = true;
                break;
            }
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                push(&body[start..at], &mut fields);
                start = at + 1;
            }
            _ => {}
        }
        prev = c;
    }
    TRAINER_FIELDS
        .iter()
        .any(|k| fields.contains_key(*k))
        .then(|| Dump {
            class: name.to_string(),
            line: n,
            fields,
            complete,
        })
}

/// A text that is one dump and nothing else (blank lines around it aside): its fields as the
/// config they are. None for a text that holds more than the dump (a log that prints it).
pub fn parse_whole(text: &str) -> Option<Value> {
    let dumps = find(text);
    let [d] = dumps.as_slice() else { return None };
    let nonblank: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let first = nonblank.first()?.0 + 1;
    // the dump starts the text (the class line) and every other line is one of its fields or
    // its `)`; a cut dump may end in the line the paste cut
    let dump_lines = d.fields.len() + 1 + usize::from(d.complete);
    let cut_line = usize::from(!d.complete);
    (first == d.line && nonblank.len() <= dump_lines + cut_line && !d.fields.is_empty())
        .then(|| Value::Object(d.fields.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // a Korean lecture note's `print(training_args)` output (transformers 4.5x: no `_n_gpu`,
    // `hub_token=<HUB_TOKEN>`), corpus search: healthy (the Trainer's default 0 workers, a
    // text fine-tune)
    const STR_DUMP: &str = "TrainingArguments(\n\
accelerator_config={'split_batches': False, 'dispatch_batches': None, 'even_batches': True, 'use_seedable_sampler': True, 'non_blocking': False, 'gradient_accumulation_kwargs': None, 'use_configured_state': False},\n\
adam_beta1=0.9,\n\
data_seed=None,\n\
dataloader_drop_last=False,\n\
dataloader_num_workers=0,\n\
dataloader_persistent_workers=False,\n\
dataloader_pin_memory=True,\n\
dataloader_prefetch_factor=None,\n\
eval_strategy=IntervalStrategy.EPOCH,\n\
hub_token=<HUB_TOKEN>,\n\
learning_rate=2e-05,\n\
output_dir=artifacts/ynat_finetuning/checkpoints,\n\
per_device_train_batch_size=16,\n\
report_to=[],\n\
)\n";

    #[test]
    fn the_str_dump_is_read_field_by_field() {
        let d = find(STR_DUMP);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].class, "TrainingArguments");
        assert!(d[0].complete);
        let f = &d[0].fields;
        assert_eq!(f["dataloader_num_workers"], json!(0));
        assert_eq!(f["dataloader_pin_memory"], json!(true));
        assert_eq!(f["dataloader_persistent_workers"], json!(false));
        assert_eq!(f["dataloader_prefetch_factor"], Value::Null);
        assert_eq!(f["learning_rate"], json!(2e-05));
        assert_eq!(f["eval_strategy"], json!("IntervalStrategy.EPOCH"));
        assert_eq!(
            f["output_dir"],
            json!("artifacts/ynat_finetuning/checkpoints")
        );
        let whole = parse_whole(STR_DUMP).expect("a dump alone is a config");
        assert_eq!(whole["dataloader_num_workers"], json!(0));
    }

    #[test]
    fn a_dump_with_workers_set_reads_them_and_one_in_a_log_is_found() {
        // the `run_*.py` examples log the dump after their logger prefix
        let log = "05/10/2023 10:00:01 - INFO - __main__ - Training/evaluation parameters TrainingArguments(\n\
_n_gpu=8,\n\
dataloader_num_workers=16,\n\
dataloader_pin_memory=False,\n\
per_device_train_batch_size=8,\n\
)\n\
05/10/2023 10:00:02 - INFO - __main__ - loading dataset\n";
        let d = find(log);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line, 1);
        assert_eq!(d[0].fields["dataloader_num_workers"], json!(16));
        assert_eq!(d[0].fields["dataloader_pin_memory"], json!(false));
        // a log is not a config
        assert_eq!(parse_whole(log), None);
    }

    #[test]
    fn the_dataclass_repr_of_a_subclass_is_read() {
        // unslothai/unsloth-zoo#297 (a comment's log): `training_args=UnslothSFTConfig(…)`
        let l = "training_args=UnslothSFTConfig(output_dir='.', overwrite_output_dir=None, do_train=False, per_device_train_batch_size=4, lr_scheduler_kwargs={}, eval_strategy=<IntervalStrategy.STEPS: 'steps'>, dataloader_num_workers=0, dataloader_pin_memory=True, logging_dir='./metrics, a', save_steps=0.1)";
        let d = find(l);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].class, "UnslothSFTConfig");
        assert!(d[0].complete);
        assert_eq!(d[0].fields["dataloader_num_workers"], json!(0));
        assert_eq!(d[0].fields["dataloader_pin_memory"], json!(true));
        assert_eq!(d[0].fields["logging_dir"], json!("./metrics, a"));
        assert_eq!(d[0].fields["output_dir"], json!("."));
        assert_eq!(d[0].fields["save_steps"], json!(0.1));
        // a problem value: 8 workers, pin memory off
        let p = "SFTConfig(output_dir='o', per_device_train_batch_size=2, dataloader_num_workers=8, dataloader_pin_memory=False)";
        let d = find(p);
        assert_eq!(d[0].fields["dataloader_num_workers"], json!(8));
        assert_eq!(d[0].fields["dataloader_pin_memory"], json!(false));
    }

    #[test]
    fn a_cut_dump_claims_nothing_it_does_not_print() {
        // cut before the dataloader fields: nothing about the loader is read
        let cut = "TrainingArguments(\n_n_gpu=1,\nadafactor=False,\nadam_beta1=0.9,\nper_device_train_batch_size=8,\n";
        let d = find(cut);
        assert_eq!(d.len(), 1);
        assert!(!d[0].complete);
        assert!(!d[0].fields.contains_key("dataloader_num_workers"));
        // another dataclass printed the same way (a project's data arguments) is not the
        // Trainer's: its `num_workers` is no loader setting read here
        let other = "DataArguments(\ndata_path=x,\nnum_workers=4,\n)\n";
        assert!(find(other).is_empty());
        assert_eq!(parse_whole(other), None);
        // prose and code are no dumps
        assert!(find("args = TrainingArguments(\n    output_dir='x',\n)\n").is_empty());
        assert!(find("").is_empty());
    }
}
