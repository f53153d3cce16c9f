//! Training command lines: a pasted launcher line (`torchrun --nproc_per_node=8 train.py
//! --num_workers 32`, `python -m torch.distributed.launch`, `deepspeed`, `accelerate launch`,
//! `srun`/`mpirun` in front) or a live process's argv. What it yields: processes per node, the
//! training script, the config files the command names (`--config X`, `-c X`, `--cfg X`,
//! `config=X`, Hydra's `--config-path/--config-name`), Hydra/MMEngine/Detectron2 overrides
//! (`data.num_workers=0`, `--cfg-options a.b=1`, `DATALOADER.NUM_WORKERS 2`) and plain flags
//! (`--num_workers 2`).
//!
//! Shell text is read on the bash grammar's tree ([`split_commands`], tree-sitter-bash, the
//! same tree [`super::shell`] edits on): commands and their words, prefix assignments,
//! `export`/`declare -x`, continuation lines, quoting and heredocs are the grammar's business;
//! this module interprets the words ([`parse`]), which is also how a live process's argv is read.
//!
//! A whole launch script is read top to bottom by [`read_script`]: `export`s (and `unset`) give
//! the environment the training processes inherit, `$VAR`/`${VAR}`/`${VAR:-default}` expand from
//! the assignments above the command (unknown ones stay as written, never guessed), a command
//! quoted whole for a wrapper (`bash -c "…"`, `sbatch --wrap="…"`, `bitfusion run "…"`) is read
//! with its commented-out flags dropped, and any other program that takes the trainer's flags
//! (`swift pt … --dataloader_num_workers 1`) counts when it sets a loader setting.

use super::syntax::{self, Lang};
use tree_sitter::Node;

/// The commands of shell text, each as its words, read on the bash grammar's tree
/// ([`super::syntax`], tree-sitter-bash): a command's prefix assignments (`NAME=value`), its
/// name and arguments, unquoted as the shell does (`'a b'`, `"a $X"` with its backslash
/// escapes, `a\ b`, continuation lines); `$VAR`, `${VAR:-d}` and `$(…)` kept as written (never
/// expanded); redirections dropped. `export`/`declare`/`local`/`readonly`/`unset` are commands
/// like any other. A heredoc's body is read as commands too (`srun bash <<EOF … EOF` runs
/// them), a `#` comment is no command, and a command the grammar joins across a line break
/// bash would end it at (`A=1` alone, then `python t.py`) is two. Commands inside `$(…)` are
/// part of their word, not commands of their own.
pub fn split_commands(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    read_text(text, 0, &mut out);
    out
}

/// Read `text` as commands. A part of it the grammar cannot read whole (a pasted log line with
/// an odd backtick or quote, prose around a command) is read again one logical line at a
/// time, so the damage stays on its line instead of swallowing the commands after it.
fn read_text(text: &str, depth: usize, out: &mut Vec<Vec<String>>) {
    let Ok(tree) = syntax::parse(Lang::Bash, text) else {
        return;
    };
    let root = tree.root_node();
    let mut c = root.walk();
    let mut done = 0;
    for k in root.children(&mut c) {
        if k.start_byte() < done {
            continue; // on a line already read again alone
        }
        if !k.has_error() {
            collect(k, text, depth, out);
            done = k.end_byte();
            continue;
        }
        // an error node may start or end inside a multi-byte character: widen it to whole ones
        let (mut ks, mut ke) = (k.start_byte().min(text.len()), k.end_byte().min(text.len()));
        while !text.is_char_boundary(ks) {
            ks -= 1;
        }
        while !text.is_char_boundary(ke) {
            ke += 1;
        }
        let mut start = text[..ks]
            .rfind('\n')
            .map_or(0, |i| i + 1)
            .max(done)
            .min(text.len());
        while !text.is_char_boundary(start) {
            start += 1;
        }
        let end = text[ke..].find('\n').map_or(text.len(), |i| ke + i);
        if start >= end {
            done = done.max(end);
            continue;
        }
        for line in logical_lines(&text[start..end]) {
            if let Ok(t) = syntax::parse(Lang::Bash, line) {
                collect(t.root_node(), line, depth, out);
            }
        }
        done = end;
    }
}

/// Lines, a line ending in a backslash joined with the next (a continued command).
fn logical_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        at += l.len();
        let body = l.trim_end_matches(['\n', '\r']);
        let slashes = body.len() - body.trim_end_matches('\\').len();
        if slashes % 2 == 0 {
            out.push(&text[start..at]);
            start = at;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Heredocs inside heredocs are read this deep, at most.
const MAX_HEREDOC_DEPTH: usize = 4;

fn collect(n: Node, src: &str, depth: usize, out: &mut Vec<Vec<String>>) {
    match n.kind() {
        "comment"
        | "command_substitution"
        | "process_substitution"
        | "heredoc_start"
        | "heredoc_end" => {}
        "command" | "declaration_command" | "unset_command" | "variable_assignments" => {
            let mut cur: Vec<String> = Vec::new();
            let mut last_end: Option<usize> = None;
            let mut c = n.walk();
            for k in n.children(&mut c) {
                if matches!(
                    k.kind(),
                    "file_redirect" | "herestring_redirect" | "comment"
                ) {
                    continue;
                }
                // a line break no backslash continues ends the command where bash ends it
                if let Some(e) = last_end
                    && newline_between(src, e, k.start_byte())
                    && !cur.is_empty()
                {
                    out.push(std::mem::take(&mut cur));
                }
                last_end = Some(k.end_byte());
                push_word(&mut cur, k, src);
            }
            if !cur.is_empty() {
                out.push(cur);
            }
        }
        "variable_assignment" => out.push(vec![word_value(n, src)]),
        "ERROR" => {
            // words the grammar could not place in a command: one command per run of them
            let mut cur: Vec<String> = Vec::new();
            let mut last_end: Option<usize> = None;
            let mut c = n.walk();
            let kids: Vec<Node> = n.children(&mut c).collect();
            for k in kids {
                if WORDS.contains(&k.kind()) {
                    if let Some(e) = last_end
                        && newline_between(src, e, k.start_byte())
                        && !cur.is_empty()
                    {
                        out.push(std::mem::take(&mut cur));
                    }
                    last_end = Some(k.end_byte());
                    push_word(&mut cur, k, src);
                } else {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    last_end = None;
                    collect(k, src, depth, out);
                }
            }
            if !cur.is_empty() {
                out.push(cur);
            }
        }
        "heredoc_body" => {
            if depth < MAX_HEREDOC_DEPTH {
                let body = syntax::text(n, src);
                if let Ok(tree) = syntax::parse(Lang::Bash, body) {
                    collect(tree.root_node(), body, depth + 1, out);
                }
            }
        }
        _ => {
            let mut c = n.walk();
            let kids: Vec<Node> = n.children(&mut c).collect();
            for k in kids {
                collect(k, src, depth, out);
            }
        }
    }
}

/// The kinds of node that are words of a command.
const WORDS: &[&str] = &[
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "number",
    "variable_assignment",
    "command_name",
];

/// Add a word of a command. A prompt the grammar reads as an expansion (`$ python3`, the `$`
/// of a pasted shell prompt and the command's name) gives its two words.
fn push_word(cur: &mut Vec<String>, k: Node, src: &str) {
    let k = match k.kind() {
        "command_name" => k.named_child(0).unwrap_or(k),
        _ => k,
    };
    let t = syntax::text(k, src);
    if k.kind() == "simple_expansion" && t.contains(char::is_whitespace) {
        cur.extend(t.split_whitespace().map(str::to_string));
        return;
    }
    cur.push(word_value(k, src));
}

/// Is there a line break between `a` and `b` that no backslash continues?
fn newline_between(src: &str, a: usize, b: usize) -> bool {
    src.get(a..b)
        .is_some_and(|gap| gap.replace("\\\r\n", "").replace("\\\n", "").contains('\n'))
}

/// A word's value as the shell gives it to the program, expansions kept as written.
fn word_value(n: Node, src: &str) -> String {
    let t = syntax::text(n, src);
    match n.kind() {
        "raw_string" => t
            .strip_prefix('\'')
            .and_then(|x| x.strip_suffix('\''))
            .unwrap_or(t)
            .to_string(),
        "ansi_c_string" => t
            .strip_prefix("$'")
            .and_then(|x| x.strip_suffix('\''))
            .unwrap_or(t)
            .to_string(),
        "string" | "translated_string" => {
            let inner = t
                .trim_start_matches('$')
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .unwrap_or(t);
            // inside double quotes a backslash escapes only $ ` " \ and a newline
            let mut out = String::new();
            let mut chars = inner.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    match chars.peek() {
                        Some('\n') => {
                            chars.next();
                            continue;
                        }
                        Some('$' | '`' | '"' | '\\') => {
                            out.extend(chars.next());
                            continue;
                        }
                        _ => {}
                    }
                }
                out.push(c);
            }
            out
        }
        "concatenation" => {
            let mut c = n.walk();
            let kids: Vec<Node> = n.children(&mut c).collect();
            // the bytes between parts (none in a well-formed word) are kept as written; on
            // garbled text the parser's error recovery can put a boundary inside a character,
            // and such a gap is dropped rather than sliced
            let mut out = String::new();
            let mut at = n.start_byte();
            for k in kids {
                out.push_str(src.get(at..k.start_byte()).unwrap_or_default());
                out.push_str(&word_value(k, src));
                at = k.end_byte();
            }
            out.push_str(src.get(at..n.end_byte()).unwrap_or_default());
            out
        }
        "variable_assignment" => {
            let name = n
                .child_by_field_name("name")
                .map_or("", |x| syntax::text(x, src));
            let value = n
                .child_by_field_name("value")
                .map(|v| word_value(v, src))
                .unwrap_or_default();
            let op = if t.get(name.len()..).is_some_and(|r| r.starts_with("+=")) {
                "+="
            } else {
                "="
            };
            format!("{name}{op}{value}")
        }
        "simple_expansion"
        | "expansion"
        | "command_substitution"
        | "arithmetic_expansion"
        | "process_substitution" => t.to_string(),
        _ => {
            // a bare word: a backslash quotes the next character; one before a newline
            // continues the line
            if !t.contains('\\') {
                return t.to_string();
            }
            let mut out = String::new();
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    match chars.next() {
                        Some('\n') | None => {}
                        Some(x) => out.push(x),
                    }
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

/// A command quoted whole for a wrapper (`"python t.py \\\n#--x=1 \\\n--y 2"`): a word
/// starting with `#` there is a flag commented out, dropped alone, not a comment to the end of
/// the line (which would end the continued command), so those words are taken out before the
/// text is read as commands.
fn quoted_commands(text: &str) -> Vec<Vec<String>> {
    let kept: Vec<&str> = text
        .split_inclusive(['\n', ' ', '\t'])
        .filter(|w| !w.starts_with('#'))
        .collect();
    split_commands(&kept.concat())
}

/// One setting the command line gives the training script.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// as written: `data.num_workers`, `--num_workers`, `DATALOADER.NUM_WORKERS`
    pub key: String,
    pub value: String,
    /// the words as written, for messages
    pub raw: String,
}

/// What a training command line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launch {
    /// `torchrun`, `torch.distributed.launch`, `deepspeed`, `accelerate`, or None for a plain
    /// `python train.py`
    pub launcher: Option<String>,
    pub nproc_per_node: Option<u32>,
    pub nnodes: Option<u32>,
    /// the training script (`train.py`) or module (`-m pkg.train`)
    pub script: Option<String>,
    pub module: Option<String>,
    /// config files named by the command (in order)
    pub config_files: Vec<String>,
    /// Hydra `--config-path` / `--config-name` (or `-cp` / `-cn`)
    pub hydra_config_path: Option<String>,
    pub hydra_config_name: Option<String>,
    /// `key=value` overrides and `--flag value` settings given to the script
    pub settings: Vec<Setting>,
    /// `NAME=value` environment assignments in front of the command
    pub env: Vec<(String, String)>,
    /// launcher options that only a multi-node job sets (`--node_rank`, `--master_addr`, a
    /// remote `--rdzv_endpoint`, `--hostfile`, `--machine_rank`)
    pub multi_node_hint: bool,
    /// started through `srun`, `mpirun` or `mpiexec`, which may place it on several nodes
    pub via_scheduler: bool,
}

const LAUNCHER_PROC_FLAGS: &[&str] = &[
    "--nproc_per_node",
    "--nproc-per-node",
    "--num_gpus",
    "--num-gpus",
    "--num_processes",
    "--num-processes",
    "--gpus",
];
const CONFIG_FLAGS: &[&str] = &[
    "--config",
    "-c",
    "--cfg",
    "--config-file",
    "--config_file",
    "--config-yaml",
    "--yaml",
    "--conf",
    "--hparams",
    "--train-config",
    "--train_config",
];

/// The `srun`/`sbatch` options that take a value as the next word when written without `=`:
/// every option of Slurm's option table (SchedMD/slurm `src/common/slurm_opt.c` at 284c3b95f0,
/// the `slurm_cli_opt_t` entries with `.has_arg = required_argument` that srun sets, through
/// `.set_func_srun` or the shared `.set_func`), long and short (`-c`, `-G`, `-N`, …), so
/// `--threads-per-core 2`, `--hint nomultithread` or `--ntasks-per-core 1` do not end the
/// options at their value; plus pyxis's `--container-*` options (NVIDIA/pyxis README, v0.19).
/// An option not here (`-l`, `-u`, `--exclusive`, `-K`/`--kill-on-bad-exit`, whose argument is
/// optional and attached) takes none, so the word after it is the program.
const SRUN_VALUE_OPTIONS: &[&str] = &[
    "--accel-bind",
    "-A",
    "--account",
    "--acctg-freq",
    "--bbf",
    "--autocomplete",
    "--bcast-exclude",
    "-b",
    "--begin",
    "--bb",
    "--cluster-constraint",
    "-D",
    "--chdir",
    "-M",
    "--clusters",
    "--cluster",
    "--comment",
    "-C",
    "--constraint",
    "--container",
    "--container-id",
    "--runtime",
    "--context",
    "-S",
    "--core-spec",
    "--cores-per-socket",
    "--cpu-bind",
    "--cpu_bind",
    "--cpu-freq",
    "--cpus-per-gpu",
    "-c",
    "--cpus-per-task",
    "--deadline",
    "--delay-boot",
    "-d",
    "--dependency",
    "-m",
    "--distribution",
    "--epilog",
    "-e",
    "--error",
    "-x",
    "--exclude",
    "--export",
    "--extra",
    "-B",
    "--extra-node-info",
    "--gpu-bind",
    "--tres-bind",
    "--gpu-freq",
    "-G",
    "--gpus",
    "--gpus-per-node",
    "--gpus-per-socket",
    "--gpus-per-task",
    "--treewidth",
    "--tres-per-task",
    "--gres",
    "--gres-flags",
    "--hint",
    "--ignore-signals",
    "-i",
    "--input",
    "--jobid",
    "-J",
    "--job-name",
    "-L",
    "--licenses",
    "--mail-type",
    "--mail-user",
    "-T",
    "--threads",
    "--mcs-label",
    "--mem",
    "--mem-bind",
    "--mem-per-cpu",
    "--mem-per-gpu",
    "--mem-update",
    "--mincpus",
    "--mpi",
    "--msg-timeout",
    "--network",
    "-F",
    "--nodefile",
    "-w",
    "--nodelist",
    "-N",
    "--nodes",
    "-n",
    "--ntasks",
    "--ntasks-per-core",
    "--ntasks-per-node",
    "--ntasks-per-socket",
    "--ntasks-per-tres",
    "--ntasks-per-gpu",
    "--open-mode",
    "-o",
    "--output",
    "--pack-group",
    "--het-group",
    "-p",
    "--partition",
    "--prefer",
    "--priority",
    "--profile",
    "--prolog",
    "-q",
    "--qos",
    "-r",
    "--relative",
    "--reservation",
    "--resources",
    "--segment",
    "--signal",
    "--slurmd-debug",
    "--sockets-per-node",
    "--switches",
    "--task-epilog",
    "--task-prolog",
    "--tasks-per-node",
    "--thread-spec",
    "--threads-per-core",
    "-t",
    "--time",
    "--time-min",
    "--tmp",
    "-W",
    "--wait",
    "--wckey",
    "--container-image",
    "--container-mounts",
    "--container-workdir",
    "--container-name",
    "--container-env",
];

/// `srun --export=`'s list: `NAME=value` pairs separated by commas (`ALL`, `NIL`, `NONE` and
/// bare names, which pass the caller's own value, add nothing). A value holding a comma cannot
/// be told from the next pair; srun splits there too.
fn srun_export(list: &str) -> Vec<(String, String)> {
    let list = list.trim_matches(|c| c == '"' || c == '\'');
    list.split(',')
        .filter_map(|p| p.split_once('='))
        .filter(|(k, _)| is_var_name(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn is_python(w: &str) -> bool {
    let b = w.rsplit('/').next().unwrap_or(w);
    b == "python" || b.starts_with("python3") || b == "python2" || b == "pypy3"
}

fn looks_like_config_file(w: &str) -> bool {
    let l = w.to_ascii_lowercase();
    [
        ".yaml", ".yml", ".json", ".toml", ".cfg", ".conf", ".ini", ".jsonc",
    ]
    .iter()
    .any(|e| l.ends_with(e))
        || (l.ends_with(".py") && (l.contains("config") || l.contains("configs/")))
}

/// A flag that [`setting_name`] reads as the loader's worker count but that, on a program other
/// than Python, names that program's own processes or threads: `--workers`, `-w`, `-j`,
/// `--n_workers`, `--nthreads`, `--num_cpu_workers`.
fn is_generic_count(key: &str) -> bool {
    let n = key
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('-', "_");
    matches!(
        n.as_str(),
        "workers" | "w" | "j" | "n_workers" | "nthreads" | "num_cpu_workers"
    )
}

/// Parse one command (its words). Returns None when it does not run Python or a known
/// launcher.
pub fn parse(words: &[String]) -> Option<Launch> {
    let mut l = Launch::default();
    let mut i = 0;
    // environment assignments and wrappers in front
    while i < words.len() {
        let w = &words[i];
        if let Some((k, v)) = w.split_once('=')
            && !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
        {
            l.env.push((k.to_string(), v.to_string()));
            i += 1;
            continue;
        }
        let base = w.rsplit('/').next().unwrap_or(w);
        if matches!(
            base,
            "env" | "nohup" | "exec" | "time" | "uv" | "poetry" | "pipenv"
        ) || (matches!(base, "run") && i > 0)
        {
            i += 1;
            continue;
        }
        if matches!(base, "srun" | "mpirun" | "mpiexec" | "numactl" | "taskset") {
            l.via_scheduler |= matches!(base, "srun" | "mpirun" | "mpiexec");
            // skip its options: a word starting with `-`, and the value of `-n N`-like options
            let is_srun = base == "srun";
            i += 1;
            while i < words.len() && words[i].starts_with('-') {
                let opt = &words[i];
                i += 1;
                if is_srun {
                    // `--export=A=1,B=2` hands those variables to the step's processes
                    if let Some(list) = opt.strip_prefix("--export=") {
                        l.env.extend(srun_export(list));
                    }
                    if !opt.contains('=') && SRUN_VALUE_OPTIONS.contains(&opt.as_str()) {
                        if opt == "--export" {
                            l.env
                                .extend(words.get(i).map(|v| srun_export(v)).unwrap_or_default());
                        }
                        i += 1;
                    }
                    continue;
                }
                if !opt.contains('=')
                    && matches!(
                        opt.as_str(),
                        "-n" | "-np"
                            | "-N"
                            | "--ntasks"
                            | "-c"
                            | "--cpus-per-task"
                            | "-C"
                            | "--physcpubind"
                            | "--cpunodebind"
                            | "-H"
                            | "--host"
                            | "-x"
                    )
                {
                    i += 1;
                }
            }
            continue;
        }
        break;
    }
    // an option that takes a value, last on the line (`srun -n`): nothing after it
    let rest = words.get(i..).unwrap_or_default();
    let first = rest.first()?;
    let base = first.rsplit('/').next().unwrap_or(first).to_string();
    let mut j;
    if base == "torchrun" || base == "deepspeed" {
        l.launcher = Some(base.clone());
        j = 1;
        j = launcher_options(rest, j, &mut l);
    } else if base == "accelerate" && rest.get(1).map(String::as_str) == Some("launch") {
        l.launcher = Some("accelerate".into());
        j = launcher_options(rest, 2, &mut l);
    } else if is_python(&base) {
        j = 1;
        // interpreter options
        while j < rest.len() && rest[j].starts_with('-') && rest[j] != "-m" {
            j += 1;
        }
        // `python /venv/bin/torchrun …`: the launcher's own script run by the interpreter
        if let Some(w) = rest.get(j) {
            let b = w.rsplit('/').next().unwrap_or(w);
            if matches!(b, "torchrun" | "deepspeed" | "accelerate") {
                let mut inner = parse(&rest[j..])?;
                inner.env.splice(0..0, l.env);
                return Some(inner);
            }
        }
        if rest.get(j).map(String::as_str) == Some("-m") {
            let m = rest.get(j + 1)?.clone();
            j += 2;
            if matches!(
                m.as_str(),
                "torch.distributed.launch" | "torch.distributed.run" | "torchrun"
            ) {
                l.launcher = Some(if m == "torch.distributed.launch" {
                    "torch.distributed.launch".into()
                } else {
                    "torchrun".into()
                });
                j = launcher_options(rest, j, &mut l);
            } else if m == "deepspeed" || m == "deepspeed.launcher.runner" {
                l.launcher = Some("deepspeed".into());
                j = launcher_options(rest, j, &mut l);
            } else if m == "accelerate.commands.launch" {
                l.launcher = Some("accelerate".into());
                j = launcher_options(rest, j, &mut l);
            } else {
                l.module = Some(m);
                script_args(&rest[j..], &mut l);
                return Some(l);
            }
        }
    } else {
        // a script run directly (`./train.py`, `train.py` through a shebang)
        if base.ends_with(".py") {
            l.script = Some(first.clone());
            script_args(&rest[1..], &mut l);
            return Some(l);
        }
        // another program that takes the trainer's flags (`swift pt`, `llamafactory-cli
        // train`, a site wrapper): it counts only when it sets a loader setting by flag, by a
        // name that says data loader. A bare worker or thread count is the program's own
        // setting in a program that is not Python: uWSGI's `--workers` ("spawn the specified
        // number of workers/processes", uWSGI options reference), Gunicorn's `-w/--workers`
        // ("the number of worker processes for handling requests", Gunicorn settings), GNU
        // make's `-j`. By flag: an option word (`--dataloader_num_workers 1`, `-j 4`), the form
        // a program's own argument parser takes; a bare `name=value` word is an override only a
        // training script or a launcher in front of one reads, and in a sentence it is prose.
        // PyTorch's own worker-failure message (pytorch/pytorch `torch/csrc/DataLoader.cpp`,
        // `_error_if_any_worker_fails`, 0.4-2.x: "DataLoader worker (pid N) exited
        // unexpectedly with exit code N. Details are lost due to multiprocessing. Rerunning with
        // num_workers=0 may give better error trace.", and 0.4's "... is killed by signal: Bus
        // error. Details are lost …") names `num_workers=0` as a suggestion, and its words were
        // read as a command setting the loader to 0 workers (BasicSR#59)
        let mut other = Launch::default();
        script_args(&rest[1..], &mut other);
        if other.settings.iter().any(|s| {
            s.key.starts_with('-') && setting_name(&s.key).is_some() && !is_generic_count(&s.key)
        }) {
            l.settings = other.settings;
            l.config_files = other.config_files;
            return Some(l);
        }
        return None;
    }
    // after a launcher: [python] script | -m module
    if j < rest.len() && is_python(&rest[j]) {
        j += 1;
        while j < rest.len() && rest[j].starts_with('-') && rest[j] != "-m" {
            j += 1;
        }
    }
    if rest.get(j).map(String::as_str) == Some("-m")
        || rest.get(j).map(String::as_str) == Some("--module")
    {
        l.module = rest.get(j + 1).cloned();
        j += 2;
    } else if let Some(s) = rest.get(j) {
        l.script = Some(s.clone());
        j += 1;
    }
    if j <= rest.len() {
        script_args(&rest[j.min(rest.len())..], &mut l);
    }
    Some(l)
}

/// Read a launcher's own options from `j`; returns the index of the first word after them.
fn launcher_options(w: &[String], mut j: usize, l: &mut Launch) -> usize {
    // options whose value is a separate word
    const FLAG_ONLY: &[&str] = &[
        "--standalone",
        "--no_python",
        "--no-python",
        "--use_env",
        "--use-env",
        "--multi_gpu",
        "--multi-gpu",
        "--module",
        "-m",
        "--no_local_rank",
        "--no-local-rank",
        "--bf16",
        "--fp16",
        "--cpu",
        "--tpu",
        "--use_deepspeed",
        "--use_fsdp",
        "--debug",
        "--autoscaling",
    ];
    while j < w.len() && w[j].starts_with('-') {
        let opt = w[j].clone();
        if opt == "-m" || opt == "--module" {
            return j;
        }
        let (name, val, used) = match opt.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string()), 1),
            None if FLAG_ONLY.contains(&opt.as_str()) => (opt.clone(), None, 1),
            None => (opt.clone(), w.get(j + 1).cloned(), 2),
        };
        if LAUNCHER_PROC_FLAGS.contains(&name.as_str()) {
            l.nproc_per_node = val.as_deref().and_then(|v| v.parse().ok());
        } else if name == "--nnodes"
            || name == "--num_nodes"
            || name == "--num-nodes"
            || name == "--num_machines"
        {
            l.nnodes = val
                .as_deref()
                .and_then(|v| v.split(':').next_back()?.parse().ok());
        } else if matches!(
            name.replace('-', "_").as_str(),
            "__node_rank" | "__master_addr" | "__hostfile" | "__machine_rank" | "__main_process_ip"
        ) || (name.replace('-', "_") == "__rdzv_endpoint"
            && !val
                .as_deref()
                .is_some_and(|v| v.starts_with("localhost") || v.starts_with("127.")))
        {
            l.multi_node_hint = true;
        } else if name == "--include" {
            // deepspeed --include localhost:0,1,2,3
            if let Some(v) = &val
                && let Some((_, gpus)) = v.split_once(':')
            {
                l.nproc_per_node = Some(gpus.split(',').count() as u32);
            }
        }
        j += used;
    }
    j
}

fn script_args(w: &[String], l: &mut Launch) {
    let mut j = 0;
    while j < w.len() {
        let a = &w[j];
        let next = w.get(j + 1);
        if let Some(opt) = a
            .strip_prefix("--")
            .filter(|_| a.len() > 2)
            .map(|_| a.as_str())
            .or_else(|| {
                (a.starts_with('-') && a.len() == 2 && !a.starts_with("--")).then_some(a.as_str())
            })
        {
            let (name, val, used) = match opt.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string()), 1),
                None => match next {
                    Some(n) if !n.starts_with('-') || n.parse::<f64>().is_ok() => {
                        (opt.to_string(), Some(n.clone()), 2)
                    }
                    _ => (opt.to_string(), None, 1),
                },
            };
            let lname = name.to_ascii_lowercase();
            if CONFIG_FLAGS.contains(&lname.as_str()) {
                if let Some(v) = &val {
                    l.config_files.push(v.clone());
                }
            } else if lname == "--config-path" || lname == "-cp" || lname == "--config_path" {
                l.hydra_config_path = val.clone();
            } else if lname == "--config-name" || lname == "-cn" || lname == "--config_name" {
                l.hydra_config_name = val.clone();
            } else if matches!(
                lname.as_str(),
                "--cfg-options" | "--cfg_options" | "--options" | "--opts" | "--override" | "--set"
            ) {
                // MMEngine `--cfg-options a.b=1 c=2`, Detectron2 `--opts A.B 1` / `opts A.B 1`
                j += 1;
                while j < w.len() && !w[j].starts_with("--") {
                    if let Some((k, v)) = w[j].split_once('=') {
                        push_setting(l, k, v, &w[j]);
                        j += 1;
                    } else if let Some(v) = w.get(j + 1) {
                        push_setting(l, &w[j], v, &format!("{} {v}", w[j]));
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                continue;
            } else if let Some(v) = &val {
                if lname.ends_with("config") && looks_like_config_file(v) {
                    l.config_files.push(v.clone());
                } else {
                    push_setting(l, &name, v, &format!("{name} {v}"));
                }
            } else {
                push_setting(l, &name, "true", &name);
            }
            j += used;
            continue;
        }
        if let Some((k, v)) = a.split_once('=') {
            let k = k.trim_start_matches('+');
            if k == "config" || k == "cfg" || k == "config_file" {
                l.config_files.push(v.to_string());
            } else if !k.is_empty() && !k.contains('/') || k.contains('.') {
                push_setting(l, k, v, a);
            }
        } else if looks_like_config_file(a) {
            l.config_files.push(a.clone());
        } else if a.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && a.contains('.')
            && a.chars()
                .all(|c| c.is_ascii_uppercase() || c == '.' || c == '_' || c.is_ascii_digit())
            && let Some(v) = next
        {
            // Detectron2/yacs trailing `DATALOADER.NUM_WORKERS 2`
            push_setting(l, a, v, &format!("{a} {v}"));
            j += 2;
            continue;
        }
        j += 1;
    }
}

fn push_setting(l: &mut Launch, key: &str, value: &str, raw: &str) {
    l.settings.push(Setting {
        key: key.to_string(),
        value: value.to_string(),
        raw: raw.to_string(),
    });
}

/// A launch script read top to bottom: the variables it exports (what the training
/// processes inherit) and its launches, with `$VAR` / `${VAR}` expanded from the assignments
/// above them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Script {
    /// `export NAME=value` (and `NAME=value` for a name exported before), in order; `unset`
    /// removes
    pub exports: Vec<(String, String)>,
    pub launches: Vec<Launch>,
    /// shell syntax seen: `export`, `#!/bin/bash`, `#SBATCH`, `if … then`, …
    pub shell_lines: usize,
    /// What the script's `#SBATCH` lines ask of the scheduler, per node.
    pub slurm: Slurm,
    /// A line that is not a comment reads a variable only a distributed job has: Slurm's node
    /// count (`$SLURM_JOB_NUM_NODES`, `$SLURM_NNODES`: sbatch(1) and srun(1), "OUTPUT
    /// ENVIRONMENT VARIABLES") or torch.distributed's `env://` rendezvous (`$MASTER_ADDR`,
    /// `$NODE_RANK`: torchrun's and torch.distributed.launch's documented variables): the
    /// script sets up a distributed job even where the excerpt stops before its launch command.
    pub distributed_vars: bool,
}

/// The variables of [`Script::distributed_vars`], as a `$NAME` or `${NAME}` reference.
const DISTRIBUTED_VARS: &[&str] = &[
    "SLURM_JOB_NUM_NODES",
    "SLURM_NNODES",
    "MASTER_ADDR",
    "NODE_RANK",
];

/// [`Script::distributed_vars`] of a text: a byte search says no first.
fn reads_distributed_vars(text: &str) -> bool {
    if !DISTRIBUTED_VARS.iter().any(|v| text.contains(v)) {
        return false;
    }
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .any(|l| {
            DISTRIBUTED_VARS.iter().any(|v| {
                l.match_indices(v).any(|(i, _)| {
                    let before = &l[..i];
                    let after = &l[i + v.len()..];
                    let word_end =
                        !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                    word_end
                        && (before.ends_with('$')
                            || (before.ends_with("${") && after.starts_with(['}', ':', '-'])))
                })
            })
        })
}

/// The resources a Slurm batch script requests (`#SBATCH` lines): what each rank may use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slurm {
    pub nodes: Option<u32>,
    pub tasks_per_node: Option<u32>,
    pub cpus_per_task: Option<u32>,
    pub cpus_per_gpu: Option<u32>,
    /// `--gpus-per-node=N`, `--gres=gpu:N` / `gpu:a100:N`
    pub gpus_per_node: Option<u32>,
}

impl Slurm {
    /// The CPUs one rank (task) gets, where the script says: `--cpus-per-task`, or
    /// `--cpus-per-gpu` for a one-GPU task.
    pub fn cpus_per_rank(&self) -> Option<u32> {
        self.cpus_per_task.or(self.cpus_per_gpu)
    }
}

/// Read `#SBATCH --opt=value` / `#SBATCH --opt value` / `#SBATCH -c 8` lines.
fn read_slurm(text: &str) -> Slurm {
    let mut s = Slurm::default();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("#SBATCH") else {
            continue;
        };
        // options up to a trailing comment
        let opts = rest.split(" #").next().unwrap_or(rest);
        let words: Vec<&str> = opts.split_whitespace().collect();
        slurm_options(&words, &mut s);
    }
    s
}

/// Read sbatch/srun resource options (`--opt=value`, `--opt value`, `-c 8`) into `s`; the two
/// commands take the same resource options (Slurm's sbatch(1) and srun(1)).
fn slurm_options(words: &[&str], s: &mut Slurm) {
    {
        let mut i = 0;
        while i < words.len() {
            let (k, v) = match words[i].split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (words[i], words.get(i + 1).copied()),
            };
            let num = |v: Option<&str>| {
                v.and_then(|v| v.rsplit(':').next())
                    .and_then(|v| v.trim().parse::<u32>().ok())
            };
            match k {
                "--nodes" | "-N" => s.nodes = num(v),
                "--ntasks-per-node" | "--tasks-per-node" => s.tasks_per_node = num(v),
                "--cpus-per-task" | "-c" => s.cpus_per_task = num(v),
                "--cpus-per-gpu" => s.cpus_per_gpu = num(v),
                "--gpus-per-node" => s.gpus_per_node = num(v),
                "--gres" => {
                    if let Some(g) = v.filter(|g| g.starts_with("gpu")) {
                        s.gpus_per_node = num(Some(g)).or(Some(1));
                    }
                }
                _ => {}
            }
            // an option takes the next word only where Slurm's grammar gives it a value
            i += if words[i].contains('=') || !SRUN_VALUE_OPTIONS.contains(&words[i]) {
                1
            } else {
                2
            };
        }
    }
}

impl Script {
    /// The value the script's processes see for `name`: the last export (or a launch's
    /// `NAME=value` prefix).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.launches
            .iter()
            .rev()
            .find_map(|l| {
                l.env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
            })
            .or_else(|| {
                self.exports
                    .iter()
                    .rev()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
            })
    }
}

fn is_var_name(k: &str) -> bool {
    !k.is_empty()
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !k.starts_with(|c: char| c.is_ascii_digit())
}

/// `$NAME` and `${NAME}` (also `${NAME:-default}`) from `vars`; an unknown name stays as
/// written.
fn expand(word: &str, vars: &std::collections::HashMap<String, String>) -> String {
    if !word.contains('$') {
        return word.to_string();
    }
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, default, used) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => {
                    let body = &inner[..end];
                    let (n, d) = match body.split_once(":-") {
                        Some((n, d)) => (n, Some(d)),
                        None => (body, None),
                    };
                    (n, d, end + 2)
                }
                None => ("", None, 0),
            }
        } else {
            let n = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..n], None, n)
        };
        match vars.get(name).map(String::as_str).or(default) {
            Some(v) if is_var_name(name) => out.push_str(v),
            _ => out.push_str(&rest[at..at + 1 + used]),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The commands of a shell script (as [`split_commands`] gives them), each with `$VAR`,
/// `${VAR}` and `${VAR:-default}` expanded from the assignments above it, the way
/// [`read_script`] expands a launch: plain `NAME=value` commands and `export`/`declare -x`
/// assign (the last one in the text wins, as it does there), `unset` forgets, an unknown name
/// stays as written. A word that is one expansion alone (`${RUNTIME}`, `$NAME`) is split at
/// whitespace as bash splits an unquoted expansion into fields, and vanishes when it expands to
/// nothing (bash's "Word Splitting" and removal of null fields): wrappers keep flag bundles in
/// such variables (`NAME="--name $1"`, `TENSORBOARD="-p 6006:6006"`) and splice them in front of
/// the image. The assignment commands themselves are not returned.
pub fn expanded_commands(text: &str) -> Vec<Vec<String>> {
    let mut vars: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for w in split_commands(text) {
        let Some(first) = w.first() else { continue };
        let declared = if first == "export" {
            Some(&w[1..])
        } else if first == "declare" && w.get(1).is_some_and(|x| x == "-x") {
            Some(&w[2..])
        } else if w
            .iter()
            .all(|a| a.split_once('=').is_some_and(|(k, _)| is_var_name(k)))
        {
            Some(&w[..])
        } else {
            None
        };
        if let Some(assigns) = declared {
            for a in assigns {
                if let Some((k, v)) = a.split_once('=')
                    && is_var_name(k)
                {
                    let v = expand(v, &vars);
                    vars.insert(k.to_string(), v);
                }
            }
            continue;
        }
        if first == "unset" {
            for a in &w[1..] {
                vars.remove(a);
            }
            continue;
        }
        let mut words = Vec::with_capacity(w.len());
        for a in &w {
            let e = expand(a, &vars);
            if e != *a && is_lone_expansion(a) {
                words.extend(e.split_whitespace().map(str::to_string));
            } else {
                words.push(e);
            }
        }
        out.push(words);
    }
    out
}

/// `$NAME`, `${NAME}` or `${NAME:-default}` and nothing else.
fn is_lone_expansion(w: &str) -> bool {
    if let Some(inner) = w.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        let name = inner.split_once(":-").map_or(inner, |(n, _)| n);
        return is_var_name(name) && !inner.contains('}');
    }
    w.strip_prefix('$').is_some_and(is_var_name)
}

/// Strip a shell prompt in front (`$ torchrun …`, `(venv) user@host:~$ python …`) and the
/// backticks of a command quoted in prose or markdown.
fn strip_prompt(w: &[String]) -> Vec<String> {
    let start = w
        .iter()
        .position(|x| x == "$" || x == "#" || x.ends_with('$') && x.len() > 1 && x.contains(':'))
        .map_or(0, |p| p + 1);
    let mut w = w[start..].to_vec();
    if let Some(first) = w.first_mut() {
        *first = first.trim_start_matches('`').to_string();
    }
    if let Some(last) = w.last_mut() {
        *last = last.trim_end_matches('`').to_string();
    }
    w.retain(|x| !x.is_empty());
    // shell keywords in front of a command (`then export X=1`, `do python t.py`)
    while w
        .first()
        .is_some_and(|x| matches!(x.as_str(), "then" | "else" | "do" | "{" | "(" | "!"))
    {
        w.remove(0);
    }
    w
}

fn is_shell_line(l: &str) -> bool {
    let t = l.trim();
    t.starts_with("#!/bin/")
        || t.starts_with("#!/usr/bin/env bash")
        || t.starts_with("#SBATCH")
        || t.starts_with("#PBS")
        || t.starts_with("export ")
        || t.starts_with("set -")
        || t.starts_with("source ")
        || t.starts_with("module load ")
        || t.starts_with("if [")
        || t.starts_with("for ") && t.contains(" in ")
        || matches!(t, "fi" | "done" | "else" | "then" | "esac")
        || t.starts_with("echo ")
        || t.starts_with("unset ")
        || t.starts_with("srun ")
        || t.starts_with("mkdir -p ")
}

/// Read a launch script (or a pasted command line) top to bottom.
pub fn read_script(text: &str) -> Script {
    let kept;
    let huge = text.len() > MAX_SCRIPT_BYTES;
    let long = huge || (text.len() > WHOLE_PARSE_BYTES && !shell_like(text));
    // the shell lines and `#SBATCH` directives of a text that is not parsed whole are still
    // counted on all of it (below MAX_SCRIPT_BYTES: on a huge text, on its command lines)
    let all = text;
    let text = if long {
        kept = command_lines(text);
        kept.as_str()
    } else {
        text
    };
    let counted = if huge { text } else { all };
    let mut sc = Script {
        shell_lines: counted.lines().filter(|l| is_shell_line(l)).count(),
        slurm: read_slurm(counted),
        distributed_vars: reads_distributed_vars(counted),
        ..Script::default()
    };
    let mut vars: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut exported: Vec<String> = Vec::new();
    let set_export = |sc: &mut Script, k: &str, v: &str| {
        sc.exports.retain(|(n, _)| n != k);
        sc.exports.push((k.to_string(), v.to_string()));
    };
    let commands: Box<dyn Iterator<Item = Vec<String>>> = if long {
        Box::new(pieces(text).flat_map(split_commands))
    } else {
        Box::new(split_commands(text).into_iter())
    };
    for raw in commands {
        let w = strip_prompt(&raw);
        let Some(first) = w.first() else { continue };
        if first == "export" || (first == "declare" && w.get(1).is_some_and(|x| x == "-x")) {
            for a in &w[if first == "export" { 1 } else { 2 }..] {
                match a.split_once('=') {
                    Some((k, v)) if is_var_name(k) => {
                        let v = expand(v, &vars);
                        vars.insert(k.to_string(), v.clone());
                        if !exported.iter().any(|e| e == k) {
                            exported.push(k.to_string());
                        }
                        set_export(&mut sc, k, &v);
                    }
                    None if is_var_name(a) => {
                        if !exported.iter().any(|e| e == a) {
                            exported.push(a.clone());
                        }
                        if let Some(v) = vars.get(a).cloned() {
                            set_export(&mut sc, a, &v);
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        if first == "unset" {
            for a in &w[1..] {
                vars.remove(a);
                exported.retain(|e| e != a);
                sc.exports.retain(|(n, _)| n != a);
            }
            continue;
        }
        // only assignments: shell variables (exported ones change the environment)
        if w.iter()
            .all(|a| a.split_once('=').is_some_and(|(k, _)| is_var_name(k)))
        {
            for a in &w {
                let (k, v) = a.split_once('=').unwrap_or_default();
                let v = expand(v, &vars);
                vars.insert(k.to_string(), v.clone());
                if exported.iter().any(|e| e == k) {
                    set_export(&mut sc, k, &v);
                }
            }
            continue;
        }
        let w: Vec<String> = w.iter().map(|a| expand(a, &vars)).collect();
        // a step started by srun outside a batch script asks for its resources on its own line
        // (`srun --gpus=1 --cpus-per-task=8 …`): read them as `#SBATCH` ones, where no
        // `#SBATCH` line said
        if let Some(at) = w
            .iter()
            .position(|a| !a.contains('=') || a.starts_with('-'))
            && w[at] == "srun"
            && sc.slurm == Slurm::default()
        {
            // srun's own options: up to the program (the first word that is neither an option
            // nor the value of one)
            let mut opts: Vec<&str> = Vec::new();
            let mut k = at + 1;
            while let Some(a) = w.get(k).filter(|a| a.starts_with('-')) {
                opts.push(a);
                k += 1;
                if !a.contains('=') && SRUN_VALUE_OPTIONS.contains(&a.as_str()) {
                    opts.extend(w.get(k).map(String::as_str));
                    k += 1;
                }
            }
            slurm_options(&opts, &mut sc.slurm);
        }
        let mut found: Vec<Launch> = parse(&w).into_iter().collect();
        if found.is_empty() {
            // a command quoted whole for a wrapper (`bash -c "…"`, `bitfusion run "…"`,
            // `sbatch --wrap="…"`): read the quoted command
            for a in &w {
                let a = a.strip_prefix("--wrap=").unwrap_or(a);
                if a.contains(char::is_whitespace) {
                    for inner in quoted_commands(a) {
                        let inner: Vec<String> = inner.iter().map(|x| expand(x, &vars)).collect();
                        found.extend(parse(&strip_prompt(&inner)));
                    }
                }
            }
        }
        for mut l in found {
            if l.nproc_per_node.is_none() {
                l.nproc_per_node = l
                    .env
                    .iter()
                    .chain(sc.exports.iter())
                    .find(|(k, _)| k == "NPROC_PER_NODE" || k == "GPUS_PER_NODE")
                    .and_then(|(_, v)| v.parse().ok());
            }
            sc.launches.push(l);
        }
    }
    sc
}

/// The launches in a pasted text: every command that runs Python or a launcher.
pub fn find(text: &str) -> Vec<Launch> {
    read_script(text)
        .launches
        .into_iter()
        // a launcher, a script, or any command that sets a loader setting by flag
        // (`swift pt … --dataloader_num_workers 1`)
        .filter(|l| {
            l.launcher.is_some()
                || l.script.is_some()
                || l.module.is_some()
                || l.settings.iter().any(|s| setting_name(&s.key).is_some())
        })
        .collect()
}

/// Launch scripts are kilobytes; a longer text (a training log that echoes its command) is
/// read for launch lines only (`command_lines`), so memory stays near the input's size.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// A text this long is parsed whole as shell only when it reads as a script ([`shell_like`]);
/// else only its [`command_lines`] are, as a long log's. The bash grammar's error recovery on
/// text that is not shell is slow: a 74 KB `nvidia-smi -q -x` paste took 2 s a parse (the
/// parse deadline), a 17 KB NCCL log 0.2 s, and every paste is read as a possible script.
const WHOLE_PARSE_BYTES: usize = 4 << 10;

/// True when at least half of the text's non-blank lines read as shell: [`is_shell_line`], an
/// assignment (`NAME=value`), a comment or `#SBATCH` line, or a line a `\` continues.
fn shell_like(text: &str) -> bool {
    let (mut lines, mut shell) = (0usize, 0usize);
    for l in text.lines() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        lines += 1;
        let assignment = t
            .split_once('=')
            .is_some_and(|(k, _)| is_var_name(k.strip_prefix("export ").unwrap_or(k)));
        if is_shell_line(t) || assignment || t.starts_with('#') || t.ends_with('\\') {
            shell += 1;
        }
    }
    shell * 2 >= lines
}

/// The words a line that starts a launch command holds (one of them).
const COMMAND_WORDS: [&str; 9] = [
    "python",
    "torchrun",
    "deepspeed",
    "accelerate",
    "srun",
    "mpirun",
    "export ",
    "launch",
    "NCCL_",
];

/// The command lines of a long text are parsed this much at a time. The grammar's parse of
/// log lines (text that is not a script, so error recovery all along) took 26–34 MB for a
/// megabyte of them, a third of a whole plan's memory on a 60 MB log (bench/RESULTS.md); a
/// piece takes a sixteenth of that, and only one piece's commands are held at once.
const PARSE_PIECE: usize = 64 << 10;

/// `text` (a long text's [`command_lines`]) in pieces of about [`PARSE_PIECE`] bytes, each
/// ending after a line that no `\` continues, so that no command is cut: the lines are
/// a log's, not a script whose blocks span them.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = 0;
        for line in rest.split_inclusive('\n') {
            end += line.len();
            if end >= PARSE_PIECE && !line.trim_end().ends_with('\\') {
                break;
            }
        }
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

/// The lines of a long text that can start or continue a launch command: those naming a
/// launcher, Python or an `export`, and the lines a trailing `\` continues them onto. At most
/// [`MAX_SCRIPT_BYTES`] of them.
fn command_lines(text: &str) -> String {
    // the text is searched for the words once (a multi-literal SIMD search), not each line
    // for each word: only the lines holding one, and the lines a `\` continues them onto, are
    // looked at, each as `text.lines()` gives it. A line that starts with a variable's
    // assignment (`NW=0`, `export NW=0`; a command kept below may expand it) is kept too, and
    // found apart, by its `=`: in the words' regex the line-anchored assignment left the search
    // no literal to skip by, and it ran a DFA over every byte (15% of a 60 MB log's reading)
    static WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        let alt: Vec<String> = COMMAND_WORDS.iter().map(|w| regex::escape(w)).collect();
        regex::Regex::new(&alt.join("|")).expect("escaped literals")
    });
    let b = text.as_bytes();
    let mut out = String::new();
    let mut continued = false;
    // the start of the first line not looked at yet
    let mut pos = 0;
    while pos < text.len() {
        let start = if continued {
            pos
        } else {
            let mut from = pos;
            // the leftmost of a word not in a path and an assignment line; at the same place
            // the word (the regex's leftmost-first order, words before the assignment)
            let m = loop {
                let word = WORDS.find_at(text, from);
                let before = word.map_or(text.len(), |w| w.start());
                if let Some(s) = next_assignment_line(b, from, before) {
                    break Some(s);
                }
                let Some(w) = word else {
                    break None;
                };
                if !in_a_path(b, w.start(), w.end()) {
                    break Some(w.start());
                }
                from = w.end();
            };
            let Some(m) = m else {
                break;
            };
            memchr::memrchr(b'\n', &b[pos..m]).map_or(pos, |i| pos + i + 1)
        };
        let (line, next) = match memchr::memchr(b'\n', &b[start..]) {
            Some(i) => {
                let l = &text[start..start + i];
                (l.strip_suffix('\r').unwrap_or(l), start + i + 1)
            }
            None => (&text[start..], text.len()),
        };
        continued = line.trim_end().ends_with('\\');
        if out.len() + line.len() + 1 > MAX_SCRIPT_BYTES {
            break;
        }
        out.push_str(line);
        out.push('\n');
        pos = next;
    }
    out
}

/// The start of the first line at or after `from` and before `before` that starts with a
/// variable's assignment (`[ \t]*(export[ \t]+)?NAME=`, the tests' `ASSIGNMENT_LINE`), found
/// by the lines' `=`: only a line's first `=` can end its assignment, so a line is looked at
/// once.
fn next_assignment_line(b: &[u8], from: usize, before: usize) -> Option<usize> {
    // an assignment line that starts before `before` has its `=` on that line, so no further
    // than the end of the line `before` is on: the search stops there (searching the rest of
    // the text for a `=` at every word made a long log without one quadratic)
    let before = before.min(b.len());
    let limit = memchr::memchr(b'\n', &b[before..]).map_or(b.len(), |i| before + i);
    let mut at = from;
    while at < limit {
        let eq = at + memchr::memchr(b'=', &b[at..limit])?;
        let start = memchr::memrchr(b'\n', &b[..eq]).map_or(0, |i| i + 1);
        if start >= before {
            return None;
        }
        if start >= from && is_assignment_head(&b[start..eq]) {
            return Some(start);
        }
        // the line's first `=` is not an assignment's: on to the next line
        at = eq + memchr::memchr(b'\n', &b[eq..limit])? + 1;
    }
    None
}

/// `[ \t]*(export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*`, the whole of `head` (a line up to its `=`).
fn is_assignment_head(head: &[u8]) -> bool {
    let blank = |c: &u8| matches!(c, b' ' | b'\t');
    let h = &head[head.iter().position(|c| !blank(c)).unwrap_or(head.len())..];
    let name = |n: &[u8]| {
        n.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && n.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    if name(h) {
        return true;
    }
    // `export` then blanks then the name (the regex backtracks to it when the name fails)
    match h.strip_prefix(b"export") {
        Some(r) if r.first().is_some_and(blank) => {
            name(&r[r.iter().position(|c| !blank(c)).unwrap_or(r.len())..])
        }
        _ => false,
    }
}

/// Whether the command word at `start..end` of `b` is in a path's directory or file name, not
/// a program: `/lib/python3.12/site-packages/…`, `…/deepspeed/launcher/launch.py` (a
/// traceback's, a profiler's or a warning's path names `python` on nearly every line; their
/// lines, parsed as shell, cost the bash grammar's slow error recovery and hold no command).
/// The name around the word (letters, digits, `.`, `_`, `-`) followed by a `/` is a directory;
/// after a `/` and with an extension (`.py`, a `.` then a letter) it is a file's.
/// `/usr/bin/python3.10 train.py` keeps its program.
fn in_a_path(b: &[u8], start: usize, end: usize) -> bool {
    let name = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-');
    if !b[start..end].iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    let from = b[..start]
        .iter()
        .rposition(|c| !name(c))
        .map_or(0, |i| i + 1);
    let to = b[end..]
        .iter()
        .position(|c| !name(c))
        .map_or(b.len(), |i| end + i);
    let after_slash = from > 0 && b[from - 1] == b'/';
    let extension = b[end..to]
        .windows(2)
        .any(|w| w[0] == b'.' && w[1].is_ascii_alphabetic());
    b.get(to) == Some(&b'/') || (after_slash && extension)
}

/// `FLAG@LINE` (`-j@L4`, `--num_workers@L7`): the value of a flag on a launch script's command
/// that starts on LINE (or a line a trailing `\` continues it onto), the key `config.set`
/// edits in a launch script.
pub fn flag_key(flag: &str, line: usize) -> String {
    format!("{flag}@L{line}")
}

pub fn parse_flag_key(key: &str) -> Option<(&str, usize)> {
    let (flag, line) = key.rsplit_once("@L")?;
    (flag.starts_with('-') && !flag.contains(char::is_whitespace))
        .then_some((flag, line.parse().ok()?))
}

/// Set a flag's value in a launch script (`FLAG@LINE`); every other byte stays, proven on the
/// bash grammar's tree ([`super::shell::set_flag`]). A refusal says whether it is an error in
/// the key or an edit that cannot be proven exact.
pub fn set_flag_checked(
    src: &str,
    key: &str,
    value: &str,
) -> Result<String, super::syntax::Refusal> {
    let (flag, line) = parse_flag_key(key).ok_or_else(|| {
        super::syntax::Refusal::Invalid(format!(
            "`{key}` is not a launch-script flag key (FLAG@LLINE)"
        ))
    })?;
    super::shell::set_flag(src, flag, line, value)
}

/// A flag's value as written (`FLAG@LINE`).
pub fn get_flag(src: &str, key: &str) -> Option<String> {
    let (flag, line) = parse_flag_key(key)?;
    super::shell::get_flag(src, flag, line)
}

/// Is `key` a launch-script flag key?
pub fn is_flag_key(key: &str) -> bool {
    parse_flag_key(key).is_some()
}

/// The line (1-based) of a launch script whose command sets `flag` to `value`, when exactly
/// one does.
pub fn flag_line(src: &str, flag: &str, value: &str) -> Option<usize> {
    super::shell::flag_line(src, flag, value)
}

/// The normalized setting name a command-line key sets, if it is one the data rules read:
/// `--num_workers`, `--workers`, `-j`?, `data.num_workers`, `DATALOADER.NUM_WORKERS`, ….
pub fn setting_name(key: &str) -> Option<&'static str> {
    let last = key
        .trim_start_matches('-')
        .trim_start_matches('+')
        .rsplit('.')
        .next()
        .unwrap_or(key)
        .to_ascii_lowercase()
        .replace('-', "_");
    crate::formats::job_text::canonical_setting(&last)
}

/// Flags that only the Hugging Face Trainer's `TrainingArguments` defines: transformers
/// `src/transformers/training_args.py` (v4.x) declares them as dataclass fields, and
/// `HfArgumentParser` (`src/transformers/hf_argparser.py`, `_add_dataclass_arguments`) turns
/// each field into `--{field.name}` (a bool field also into a bare flag). A script's own
/// argparse spells a batch size `--batch_size`/`--train_batch_size` (the diffusers examples);
/// `--per_device_train_batch_size` is the Trainer's.
const TRAINER_ONLY_FLAGS: &[&str] = &[
    "do_train",
    "do_eval",
    "do_predict",
    "evaluation_strategy",
    "eval_strategy",
    "save_strategy",
    "logging_strategy",
    "save_total_limit",
    "load_best_model_at_end",
    "metric_for_best_model",
    "overwrite_output_dir",
    "per_device_eval_batch_size",
    "lr_scheduler_type",
    "warmup_ratio",
    "logging_steps",
    "save_steps",
    "eval_steps",
    "report_to",
    "remove_unused_columns",
    "ddp_timeout",
    "push_to_hub",
    "hub_model_id",
    "gradient_checkpointing",
    "bf16",
    "fp16",
    "tf32",
];

/// The command runs a Python training script whose arguments the Hugging Face Trainer parses
/// (`HfArgumentParser` over `TrainingArguments`): it passes `--per_device_train_batch_size`
/// and at least two more flags only `TrainingArguments` defines (`TRAINER_ONLY_FLAGS`). Then
/// a Trainer setting the command does not give is `TrainingArguments`' default. Returns the
/// Trainer flags seen (for the message), or None.
///
/// Only a script run by Python or a Python launcher counts (`python x.py`, `torchrun`,
/// `deepspeed`, `accelerate launch`, a wrapper script such as Optimum Habana's
/// `gaudi_spawn.py`): a framework's own CLI (`swift sft`, `llamafactory-cli train`) parses the
/// same flag names into its own subclass, whose defaults may differ (ms-swift's
/// `TrainArguments` sets `dataloader_num_workers` itself when it is not given), and ms-swift's
/// `swift/cli/*.py` is that CLI.
pub fn hf_trainer_flags(l: &Launch) -> Option<Vec<String>> {
    let script = l.script.as_deref()?;
    if !script.ends_with(".py") || script.contains("swift/cli/") {
        return None;
    }
    let names: Vec<String> = l
        .settings
        .iter()
        .map(|s| {
            s.key
                .trim_start_matches('-')
                .split('=')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    if !names.iter().any(|n| n == "per_device_train_batch_size") {
        return None;
    }
    let only: Vec<String> = names
        .iter()
        .filter(|n| TRAINER_ONLY_FLAGS.contains(&n.as_str()))
        .map(|n| format!("--{n}"))
        .collect();
    (only.len() >= 2).then(|| {
        let mut v = vec!["--per_device_train_batch_size".to_string()];
        v.extend(only);
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Launch {
        let v = find(text);
        assert_eq!(v.len(), 1, "{v:#?}");
        v.into_iter().next().unwrap()
    }

    #[test]
    fn a_trainer_script_s_command_line_is_known_by_its_flags() {
        // huggingface/optimum-habana#188: the ViT command before the PR, no loader flag
        let vit = "python run_image_classification.py \\\n    --model_name_or_path google/vit-base-patch16-224-in21k \\\n    --output_dir /tmp/outputs/ \\\n    --remove_unused_columns False \\\n    --do_train \\\n    --do_eval \\\n    --per_device_train_batch_size 64 \\\n    --evaluation_strategy epoch \\\n    --gaudi_config_name Habana/vit\n";
        let flags = hf_trainer_flags(&one(vit)).expect("the Trainer's flags");
        assert!(flags.contains(&"--do_train".to_string()), "{flags:?}");
        // huggingface/blog#1118: through a wrapper script, flags as `--flag=value`
        let bt = "python ../gaudi_spawn.py --use_mpi --world_size 8 run_bridgetower.py \\\n--output_dir /tmp/bridgetower-test \\\n--do_train --do_eval --do_predict \\\n--per_device_train_batch_size=\"40\" --per_device_eval_batch_size=\"16\" \\\n--logging_steps 10\n";
        assert!(hf_trainer_flags(&one(bt)).is_some());
        // sign/WeLT#11 (healthy, workers given): still the Trainer's line; the flag given wins
        let welt = "python train.py --per_device_train_batch_size 128 --do_train --do_eval --dataloader_num_workers 4\n";
        assert!(hf_trainer_flags(&one(welt)).is_some());
        // a diffusers example's own argparse (`--train_batch_size`): not the Trainer's
        let diffusers = "accelerate launch train_unconditional.py --dataset_name huggan/flowers-102-categories --resolution 64 --output_dir ddpm --train_batch_size 16 --num_epochs 100 --gradient_accumulation_steps 1 --learning_rate 1e-4 --lr_warmup_steps 500 --mixed_precision no\n";
        assert_eq!(hf_trainer_flags(&one(diffusers)), None);
        // ms-swift's CLI sets its own loader default: not judged as the Trainer's
        let swift = "Process 175053: /usr/local/bin/python -u /usr/local/lib/python3.10/site-packages/swift/cli/sft.py --model_type qwen2-vl-7b-instruct --per_device_train_batch_size 1 --do_train --logging_steps 5\n";
        let l = find(swift);
        assert!(l.iter().all(|l| hf_trainer_flags(l).is_none()), "{l:?}");
        // one Trainer flag beside the batch size is not enough to tell
        let thin = "python finetune.py --per_device_train_batch_size 4 --bf16\n";
        assert_eq!(hf_trainer_flags(&one(thin)), None);
    }

    /// Only a text that reads as a script is parsed whole as shell: real pastes of other
    /// kinds (an `-q -x` document, an NCCL log, a Python file) have their command lines read
    /// instead, and real scripts stay whole.
    #[test]
    fn only_scripts_are_parsed_whole() {
        let c = crate::test_corpus;
        for name in [
            "h35_smix_netdata_rtx4090_535.xml",
            "h200_nccl_1rank_none.log",
            "py_torchvision_classification_train.py",
        ] {
            assert!(!shell_like(&c(name)), "{name}");
        }
        assert!(shell_like(&c(
            "h40_slurm_scottclowe11_template_ib_disabled.sh"
        )));
        // the Slurm directives of a text read by its command lines are still read
        let log = format!(
            "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n{}",
            c("h200_nccl_1rank_none.log")
        );
        assert!(!shell_like(&log));
        assert_eq!(read_script(&log).slurm.nodes, Some(2));
    }

    /// A text read by its command lines keeps the assignments a command uses: an NCCL log over
    /// the whole-parse size with a variable set above the launch line.
    #[test]
    fn a_long_pastes_assignments_reach_its_launch() {
        let log = crate::test_corpus("h200_nccl_1rank_none.log");
        let text = format!("{log}NW=0\npython train.py --num_workers $NW\n");
        assert!(text.len() > WHOLE_PARSE_BYTES && !shell_like(&text));
        let sc = read_script(&text);
        let l = sc
            .launches
            .iter()
            .find(|l| l.script.as_deref() == Some("train.py"))
            .expect("the launch is read");
        assert!(
            l.settings.iter().any(|s| s.value == "0"),
            "{:?}",
            l.settings
        );
    }

    /// Every option Slurm's option table (`slurm_opt.c`) gives a required argument takes the
    /// next word: `--threads-per-core 2` (MIC-DKFZ/nnUNet#680) does not end srun's options at
    /// its `2`, so the `--gres` and `--ntasks-per-node` after it are read.
    #[test]
    fn srun_options_after_one_with_a_spaced_value_are_read() {
        let nnunet = "export nnUNet_n_proc_DA=24\nsrun -p [partition_name]  -n1 -c 12 --threads-per-core 2  --ntasks-per-node=1 --mpi=pmi2 --gres=gpu:2 --job-name=nnUNet nnUNet_train_DP 3d_fullres nnUNetTrainerV2_DP 501 0 -gpus 2\n";
        let s = read_script(nnunet).slurm;
        assert_eq!(
            (s.cpus_per_task, s.tasks_per_node, s.gpus_per_node),
            (Some(12), Some(1), Some(2)),
            "{s:?}"
        );
        // `--hint nomultithread` and `-B 2:8:1` likewise; a flag (`--exclusive`) takes none
        let s = read_script(
            "srun --hint nomultithread -B 2:8:1 --exclusive --gpus-per-node=4 -c 8 python train.py\n",
        )
        .slurm;
        assert_eq!(
            (s.gpus_per_node, s.cpus_per_task),
            (Some(4), Some(8)),
            "{s:?}"
        );
        // the healthy neighbour: every option with `=` was read before and still is
        let s = read_script(
            "srun --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 python train.py\n",
        )
        .slurm;
        assert_eq!(
            (s.tasks_per_node, s.gpus_per_node, s.cpus_per_task),
            (Some(4), Some(4), Some(8))
        );
    }

    /// An option that takes a value, last on its line (a paste cut after `srun --gres`): the
    /// launch has nothing after it, and reading it never slices past the words (found by
    /// `evidence::mutation_tests` on a glued paste).
    #[test]
    fn an_srun_value_option_last_on_the_line() {
        for line in [
            "srun --gres",
            "srun -p",
            "srun --export",
            "srun -N 2 --container-image",
        ] {
            let words: Vec<String> = line.split(' ').map(String::from).collect();
            assert!(parse(&words).is_none(), "{line}");
        }
    }

    #[test]
    fn srun_options_with_values_and_pyxis_flags() {
        // lalasray/CrosSim Model/run_1.sh (12a0d76d): a pyxis step, tab-indented, whose program is
        // a wrapper script; its srun options are the job's resources
        let crossim = "\nN=CrosSim\"$@\"\n\n#\t --time=4-00:00 \\\nsrun -K  --job-name=$N \\\n\t --partition=A100-80GB \\\n\t  --time=3-00:00 \\\n\t --gpus=1 \\\n\t --cpus-per-task=8 \\\n\t --mem=200G \\\n\t --output output/console.%A_%a.out \\\n\t --error output/console.%A_%a.error  \\\n         --container-image=/netscratch/enroot/nvcr.io_nvidia_pytorch_23.07-py3.sqsh \\\n         --container-workdir=`pwd` \\\n         --container-mounts=/netscratch:/netscratch,/ds:/ds,`pwd`:`pwd` \\\n         --export=\"NCCL_SOCKET_IFNAME=bond,NCCL_IB_HCA=mlx5\" \\\n          install.sh python Cluster_Pretraining_11.py --cmt \"$@\" &";
        let sc = read_script(crossim);
        assert_eq!(sc.slurm.cpus_per_task, Some(8));
        // NUS-LinS-Lab/MetaFold points_trajectory_prediction/run.sh (ba8da749): `-p $PARTITION`
        // takes a value, so the program after the options is python
        let metafold = "export CUDA_LAUNCH_BLOCKING=1\nPARTITION='video5'\nGPUS=4\nGPUS_PER_NODE=4\nCPUS_PER_TASK=16\n\nsrun -p $PARTITION \\\n    --gres=gpu:${GPUS_PER_NODE} \\\n    --ntasks=${GPUS} \\\n    --ntasks-per-node=${GPUS_PER_NODE} \\\n    --cpus-per-task=${CPUS_PER_TASK} \\\n    --kill-on-bad-exit=1 \\\n    python -u train.py";
        let sc = read_script(metafold);
        assert_eq!(sc.launches.len(), 1);
        assert_eq!(sc.launches[0].script.as_deref(), Some("train.py"));
        assert_eq!(sc.slurm.cpus_per_task, Some(16));
        assert_eq!(sc.slurm.gpus_per_node, Some(4));
        // sharadkak/contrastive-learning skeleton/src/eval/slurm.sh (trimmed to its srun options):
        // `--export=` hands NCCL variables to python
        let export = "srun -K --ntasks=1 --gpus-per-task=1 --cpus-per-gpu=6 -p V100-32GB --export=\"NCCL_SOCKET_IFNAME=bond,NCCL_IB_HCA=mlx5\" python eval.py";
        let sc = read_script(export);
        assert_eq!(sc.launches.len(), 1);
        assert!(
            sc.launches[0]
                .env
                .contains(&("NCCL_IB_HCA".to_string(), "mlx5".to_string()))
        );
        assert_eq!(sc.slurm.cpus_per_gpu, Some(6));
        // a flag without a value (`-u`, `-l`) leaves the next word the program
        let sc = read_script("srun -u -l python train.py --num_workers 4");
        assert_eq!(sc.launches.len(), 1);
        assert_eq!(sc.slurm, Slurm::default());
    }

    #[test]
    fn slurm_lines_give_the_cpus_of_a_rank() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/corpus/h5_log_deepdewedge_slurm_10_workers_1_cpu.txt"
        ))
        .unwrap();
        let s = read_script(&text).slurm;
        assert_eq!(
            (s.nodes, s.tasks_per_node, s.cpus_per_task, s.gpus_per_node),
            (Some(1), Some(2), Some(20), Some(2))
        );
        assert_eq!(s.cpus_per_rank(), Some(20));
        let s = read_script(
            "#SBATCH -c 8\n#SBATCH --gres=gpu:a100:4\n#SBATCH --cpus-per-gpu=6 # soft max\n",
        )
        .slurm;
        assert_eq!(
            (s.cpus_per_task, s.gpus_per_node, s.cpus_per_gpu),
            (Some(8), Some(4), Some(6))
        );
        assert_eq!(s.cpus_per_rank(), Some(8));
        assert_eq!(read_script("python train.py\n").slurm, Slurm::default());
    }

    #[test]
    fn a_flag_value_is_set_in_place_on_its_command() {
        let src = "#!/bin/bash\n# -j 4 in a comment line is not a command\nexport X=1\npython main.py -a resnet50 \\\n    -j 2 --lr=0.1 /data\ntorchrun train.py --num_workers=2\n";
        assert_eq!(flag_line(src, "-j", "2"), Some(4));
        assert_eq!(flag_line(src, "--num_workers", "2"), Some(6));
        assert_eq!(flag_line(src, "--lr", "0.2"), None);
        let out = set_flag_checked(src, &flag_key("-j", 4), "8").unwrap();
        assert_eq!(out, src.replace("-j 2", "-j 8"));
        let out = set_flag_checked(src, "--num_workers@L6", "8").unwrap();
        assert_eq!(out, src.replace("--num_workers=2", "--num_workers=8"));
        assert_eq!(get_flag(&out, "--num_workers@L6").as_deref(), Some("8"));
        assert!(set_flag_checked(src, "-j@L6", "8").is_err());
        assert!(!is_flag_key("data.num_workers"));
        assert!(is_flag_key("-j@L4"));
    }

    #[test]
    fn torchrun_with_plain_flags() {
        let l = one("torchrun --nproc_per_node=8 --nnodes 1 main.py --num_workers 32 --lr 0.1");
        assert_eq!(l.launcher.as_deref(), Some("torchrun"));
        assert_eq!(l.nproc_per_node, Some(8));
        assert_eq!(l.nnodes, Some(1));
        assert_eq!(l.script.as_deref(), Some("main.py"));
        assert_eq!(l.settings[0].key, "--num_workers");
        assert_eq!(l.settings[0].value, "32");
        assert_eq!(setting_name(&l.settings[0].key), Some("num_workers"));
    }

    #[test]
    fn distributed_launch_deepspeed_accelerate_and_continuations() {
        let l = one(
            "NCCL_DEBUG=INFO python -m torch.distributed.launch \\\n  --nproc_per_node 4 --use_env train.py \\\n  --config configs/r50.yaml -j 2",
        );
        assert_eq!(l.launcher.as_deref(), Some("torch.distributed.launch"));
        assert_eq!(l.nproc_per_node, Some(4));
        assert_eq!(l.config_files, vec!["configs/r50.yaml"]);
        assert_eq!(l.env, vec![("NCCL_DEBUG".into(), "INFO".into())]);
        assert_eq!(l.settings[0].key, "-j");
        let l =
            one("deepspeed --num_gpus 8 train.py --deepspeed ds.json --dataloader_num_workers 4");
        assert_eq!(l.nproc_per_node, Some(8));
        assert_eq!(
            l.settings
                .iter()
                .find(|s| s.key == "--dataloader_num_workers")
                .unwrap()
                .value,
            "4"
        );
        let l = one(
            "accelerate launch --multi_gpu --num_processes=2 run.py --per_device_train_batch_size 8",
        );
        assert_eq!(l.launcher.as_deref(), Some("accelerate"));
        assert_eq!(l.nproc_per_node, Some(2));
        assert_eq!(l.script.as_deref(), Some("run.py"));
    }

    /// PyTorch's worker-failure message suggests `num_workers=0` (torch/csrc/DataLoader.cpp,
    /// `_error_if_any_worker_fails`): its words are no command setting the loader's workers.
    /// Another program's loader setting counts by flag only.
    #[test]
    fn a_sentence_naming_num_workers_is_no_command() {
        // problem: BasicSR#59, torch 0.4's bus-error line as pasted
        let basicsr = "DataLoader worker (pid 20991) is killed by signal: Bus error. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.\n";
        assert!(find(basicsr).is_empty());
        // the same message of torch 2.x for a worker that exited
        let exited = "RuntimeError: DataLoader worker (pid 109) exited unexpectedly with exit code 1. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.\n";
        assert!(find(exited).is_empty());
        // healthy neighbours: another program's loader flag, and a script's override
        let swift = find("swift pt --model_type qwen --dataloader_num_workers 1\n");
        assert_eq!(swift.len(), 1);
        assert!(
            swift[0]
                .settings
                .iter()
                .any(|s| s.key == "--dataloader_num_workers" && s.value == "1")
        );
        let hydra = find("python train.py data.num_workers=0\n");
        assert_eq!(hydra.len(), 1);
        assert_eq!(hydra[0].settings[0].key, "data.num_workers");
    }

    #[test]
    fn hydra_mmengine_detectron2_forms() {
        let l = one(
            "python train.py --config-path conf --config-name imagenet data.num_workers=0 +trainer.devices=8",
        );
        assert_eq!(l.hydra_config_path.as_deref(), Some("conf"));
        assert_eq!(l.hydra_config_name.as_deref(), Some("imagenet"));
        assert_eq!(l.settings[0].key, "data.num_workers");
        assert_eq!(l.settings[1].key, "trainer.devices");
        let l = one(
            "python tools/train.py configs/segnext.py --cfg-options train_dataloader.num_workers=0 val_dataloader.num_workers=0 --work-dir w",
        );
        assert_eq!(l.config_files, vec!["configs/segnext.py"]);
        assert_eq!(l.settings[0].key, "train_dataloader.num_workers");
        let l = one(
            "python tools/train_net.py --config-file configs/mask_rcnn.yaml --num-gpus 8 DATALOADER.NUM_WORKERS 2 SOLVER.IMS_PER_BATCH 16",
        );
        assert_eq!(l.config_files, vec!["configs/mask_rcnn.yaml"]);
        let s = l
            .settings
            .iter()
            .find(|s| s.key == "DATALOADER.NUM_WORKERS")
            .unwrap();
        assert_eq!(s.value, "2");
        let l = one("$ python3 -u train.py config=exp/a.yaml");
        assert_eq!(l.config_files, vec!["exp/a.yaml"]);
    }

    #[test]
    fn expanded_commands_split_a_lone_expansion_as_bash_does() {
        // github.com/azavea/raster-vision docker/run at f7f9a7f8, excerpt
        let t = "IMAGE=\"raster-vision-pytorch\"\nTENSORBOARD=\"-p 6006:6006\"\nNAME=\"--name $1\"\nunset AWS\n    docker run ${RUNTIME} ${NAME} --rm -it \\\n        ${TENSORBOARD} ${AWS} \\\n        ${IMAGE} \"${CMD[@]}\"\n";
        let c = expanded_commands(t);
        assert_eq!(c.len(), 1, "assignments and unset are not commands: {c:?}");
        assert_eq!(
            c[0],
            [
                "docker",
                "run",
                "${RUNTIME}",
                "--name",
                "$1",
                "--rm",
                "-it",
                "-p",
                "6006:6006",
                "${AWS}",
                "raster-vision-pytorch",
                "${CMD[@]}"
            ]
        );
        // a variable inside a word is expanded but not split; an empty one vanishes alone
        let c = expanded_commands("D=\"a b\"\nE=\nexport F=2\nrun -v ${D}:/x $E $F\n");
        assert_eq!(c, [["run", "-v", "a b:/x", "2"]]);
    }

    #[test]
    fn script_exports_variables_and_quoted_commands() {
        // exports reach the launch; `$VAR` expands from assignments above; a wrapper's quoted
        // command is read with its commented-out flags dropped
        let sc = read_script(
            "#!/bin/bash\nexport WORKERS=1\nexport NCCL_IB_DISABLE=1\nn=4\nNPROC_PER_NODE=$n CUDA_VISIBLE_DEVICES=0,1,2,3 \\\nswift pt --model m \\\n  --dataloader_num_workers $WORKERS\nwrapper run -n 1 \"python train.py \\\n#--workers=9 \\\n--num_workers ${WORKERS}\"\nunset NCCL_IB_DISABLE\nexport NCCL_P2P_DISABLE=1\n",
        );
        assert_eq!(
            sc.exports,
            vec![
                ("WORKERS".to_string(), "1".to_string()),
                ("NCCL_P2P_DISABLE".to_string(), "1".to_string())
            ]
        );
        assert_eq!(sc.launches.len(), 2, "{:#?}", sc.launches);
        let swift = &sc.launches[0];
        assert_eq!(swift.nproc_per_node, Some(4));
        assert_eq!(swift.settings[1].key, "--dataloader_num_workers");
        assert_eq!(swift.settings[1].value, "1");
        let wrapped = &sc.launches[1];
        assert_eq!(wrapped.script.as_deref(), Some("train.py"));
        assert_eq!(wrapped.settings.len(), 1, "{:#?}", wrapped.settings);
        assert_eq!(wrapped.settings[0].value, "1");
        assert_eq!(sc.var("NCCL_P2P_DISABLE"), Some("1"));
        assert_eq!(sc.var("NCCL_IB_DISABLE"), None);
        // a plain `X=1` is a shell variable, not the job's environment
        assert!(read_script("FOO=1\npython t.py\n").exports.is_empty());
        // unknown variables stay as written; `${X:-d}` takes its default
        let l = one("python t.py --workers ${W:-3} --x $UNSET");
        assert_eq!(l.settings[0].value, "3");
        assert_eq!(l.settings[1].value, "$UNSET");
    }

    #[test]
    fn commands_are_read_on_the_bash_tree() {
        let w = |t: &str| split_commands(t);
        // quoting, escapes and a continuation line; redirections and comments are no words
        assert_eq!(
            w("NCCL_DEBUG='INFO' python \"t $X.py\" a\\ b \\\n  --n 2 2>&1 # run\n"),
            [vec![
                "NCCL_DEBUG=INFO",
                "python",
                "t $X.py",
                "a b",
                "--n",
                "2"
            ]]
        );
        // bash ends `A=1 B=2` at its line, though the grammar joins it to the next command
        assert_eq!(
            w("A=1 B=2\npython t.py\n"),
            [vec!["A=1", "B=2"], vec!["python", "t.py"]]
        );
        // a heredoc's body is read as commands; `$(…)` stays inside its word
        assert_eq!(
            w("srun bash <<EOF\npython train.py --num_workers $(nproc)\nEOF\n"),
            [
                vec!["srun", "bash"],
                vec!["python", "train.py", "--num_workers", "$(nproc)"]
            ]
        );
        // an odd backtick in a pasted log line does not swallow the command after it
        let l = one(
            "warning: increase `num_workers` argument` (try 16)\nsome text\npython3 train.py --num-workers 4\n",
        );
        assert_eq!(l.settings[0].value, "4");
        // a pasted prompt
        assert_eq!(
            one("(venv) me@box:~$ python t.py --workers 3").settings[0].value,
            "3"
        );
    }

    #[test]
    fn multi_node_hints() {
        assert!(
            one("torchrun --nproc_per_node 8 --node_rank 1 --master_addr 10.0.0.1 t.py")
                .multi_node_hint
        );
        assert!(
            !one("torchrun --nproc_per_node 8 --rdzv_endpoint=localhost:29500 t.py")
                .multi_node_hint
        );
    }

    #[test]
    fn not_a_training_command() {
        assert!(find("ls -la\ncd /data\nnvidia-smi").is_empty());
    }

    #[test]
    fn a_server_s_worker_count_is_not_a_loader_s() {
        // github.com/benfred/py-spy/issues/221: a uWSGI server's `--workers=2` is its request
        // workers, not a DataLoader's
        assert!(
            find("Process 25585: uwsgi --wsgi-file app/wsgi.py --http-socket :8000 --workers=2 --master\n")
                .is_empty()
        );
        assert!(find("gunicorn -w 4 app:app\n").is_empty());
        let whole = "Process 25585: uwsgi --wsgi-file app/wsgi.py --http-socket :8000 --workers=2 --master\nPython v3.7.3 (/mnt/data/vad/cache/virtualenvs/app/bin/uwsgi)\n\nThread 25585 (idle): \"uWSGIWorker1Core0\"\n";
        assert!(
            find(whole).is_empty(),
            "{:#?} {:#?}",
            find(whole),
            split_commands(whole)
        );
        // a wrapper that names the loader still counts (ms-swift's `swift pt`)
        let l = one("swift pt --model m --dataloader_num_workers 1\n");
        assert!(
            l.settings
                .iter()
                .any(|s| s.key == "--dataloader_num_workers")
        );
        // github.com/modelscope/ms-swift/issues/1817: py-spy's `Process N:` header in front of
        // a dumped trainer's argv (benfred/py-spy v0.4.2 `src/dump.rs`), whose loader flag is
        // read as before
        let l = one(
            "Process 175053: /usr/local/bin/python -u /usr/local/lib/python3.10/site-packages/swift/cli/sft.py --model_type qwen2-vl-7b-instruct --dataloader_num_workers 1\n",
        );
        assert!(
            l.settings
                .iter()
                .any(|s| s.key == "--dataloader_num_workers" && s.value == "1")
        );
        // timm's `--workers` on a Python trainer is the loader's
        let l = one("python train.py --workers 2\n");
        assert_eq!(l.script.as_deref(), Some("train.py"));
        assert!(l.settings.iter().any(|s| s.key == "--workers"));
    }
}

#[cfg(test)]
mod prop {
    use super::*;
    use proptest::prelude::*;

    /// A line that starts with a variable's assignment (`NW=0`, `export NW=0`), as
    /// `command_lines` keeps it.
    const ASSIGNMENT_LINE: &str = r"(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*=";

    /// `command_lines` as it read every line for every word.
    fn command_lines_reference(text: &str) -> String {
        let mut out = String::new();
        let mut continued = false;
        for line in text.lines() {
            static ASSIGN: std::sync::LazyLock<regex::Regex> =
                std::sync::LazyLock::new(|| regex::Regex::new(ASSIGNMENT_LINE).unwrap());
            let keep = continued
                || COMMAND_WORDS.iter().any(|w| {
                    line.match_indices(w)
                        .any(|(i, _)| !in_a_path(line.as_bytes(), i, i + w.len()))
                })
                || ASSIGN.is_match(line);
            continued = keep && line.trim_end().ends_with('\\');
            if keep {
                if out.len() + line.len() + 1 > MAX_SCRIPT_BYTES {
                    break;
                }
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// A long log's command lines are parsed a piece at a time (bounded memory): the pieces
    /// are the text, each ends on a line no `\` continues, and they read the same commands
    /// as one parse of the whole.
    #[test]
    fn a_long_logs_command_lines_read_in_pieces_as_whole() {
        let mut log = String::new();
        let mut i = 0;
        while log.len() < 2 * MAX_SCRIPT_BYTES {
            // a line kept (it names a launch) that holds no command
            log.push_str(&format!("  File \"x{i}.py\", line {i}, in launch_step\n"));
            if i % 997 == 0 {
                log.push_str(&format!(
                    "+ torchrun --nproc_per_node=8 train.py \\\n    --num_workers {} \\\n    --batch_size 64\nstep {i} loss 0.5\n",
                    i % 7
                ));
            }
            i += 1;
        }
        let kept = command_lines(&log);
        let parts: Vec<&str> = pieces(&kept).collect();
        assert!(parts.len() > 8, "{}", parts.len());
        assert_eq!(parts.concat(), kept);
        for p in &parts[..parts.len() - 1] {
            let last = p.trim_end_matches('\n').rsplit('\n').next().unwrap();
            assert!(p.len() >= PARSE_PIECE && !last.ends_with('\\'), "{last}");
        }
        // the first nine pieces against one parse of them (a parse of the whole megabyte can
        // pass the parse's deadline in a debug build on a loaded machine)
        let by_piece: Vec<Vec<String>> =
            parts[..9].iter().flat_map(|p| split_commands(p)).collect();
        assert!(!by_piece.is_empty());
        assert_eq!(by_piece, split_commands(&parts[..9].concat()));
        let sc = read_script(&log);
        assert!(
            sc.launches
                .iter()
                .any(|l| l.settings.iter().any(|s| s.key == "--num_workers")),
            "{:?}",
            sc.launches.len()
        );
    }

    #[test]
    fn paths_that_name_python_are_no_command_lines() {
        // a profiler's or a traceback's lines name python in their paths; a program run by
        // its path, and the word after a prompt, stay
        let text = "  1  0.000  /opt/torch/.venv/lib/python3.12/site-packages/torch/utils/data/dataloader.py:733(__next__)\n  File \"/opt/conda/lib/python3.6/site-packages/deepspeed/launcher/launch.py\", line 171, in <module>\n$ /usr/bin/python3 train.py --workers 4\n+ python train.py\n";
        assert_eq!(
            command_lines(text),
            "$ /usr/bin/python3 train.py --workers 4\n+ python train.py\n"
        );
    }

    #[test]
    fn command_lines_as_reading_every_line() {
        for t in [
            "",
            "python a.py \\\n  --x 1\r\nfoo\nsrun b\\\r\n\nexport A=1",
            "x\nNCCL_A=1 torchrun \\",
            "\\\npython\n",
            "  File \"/usr/lib/python3.12/site-packages/deepspeed/launcher/launch.py\", line 9\n",
            "/opt/conda/bin/python3 train.py --workers 4\n/usr/lib/python/x\n",
            // assignment lines, found by their `=` apart from the words
            "NW=0\nfoo\npython x.py --workers $NW\n",
            "  export\tA_1=2\nfoo\n\texport  B=3 \\\n  more\n",
            "exportA=1\nexport =1\nx y=1\né=1\n1A=2\n=3\n",
            "a=b=c\nloss=0.3 python\n/usr/lib/python3/x=1\nNW=1 /usr/lib/python3/t.py\n",
        ] {
            assert_eq!(command_lines(t), command_lines_reference(t), "{t:?}");
        }
    }

    /// A long log whose lines name `python` in paths and hold no `=`: each word found costs
    /// its own line, not a search of the rest of the text (that made 2 MB take minutes).
    #[test]
    fn command_lines_is_linear_in_a_log_of_paths() {
        let log = "  File \"/usr/lib/python3.12/site-packages/x.py\", line 9\n".repeat(40_000);
        let t = std::time::Instant::now();
        assert_eq!(command_lines(&log), "");
        assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
        let mut with = log.clone();
        with.push_str("NW=4\n");
        assert_eq!(command_lines(&with), "NW=4\n");
    }

    proptest! {
        #[test]
        fn command_lines_as_every_line_read(t in "(python|srun |export |export\t|launch|x|3\\.12|/|\\\\| |\t|\r|\n|é|NW|_a1|=|9){0,40}") {
            prop_assert_eq!(command_lines(&t), command_lines_reference(&t));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(512)
        })]

        /// Any text, shell-like or not, is read without a panic; and job-text detection
        /// (which reads it as a script) never panics either.
        #[test]
        fn scripts_never_panic(s in "(export |\\$\\{?|\"|'|\\\\\n|#|torchrun |python -m |--[a-z_]+=?|[A-Z_]+=|[ -~]|\n){0,120}") {
            let sc = read_script(&s);
            for l in &sc.launches {
                let _ = l.nproc_per_node;
            }
            let _ = crate::formats::job_text::detect(&s);
            let _ = find(&s);
        }

        /// Python with dict literals, annotations and class bodies: scanning and editing a
        /// found dict entry never panic.
        #[test]
        fn python_dicts_never_panic(s in r"(class A:\n|    |x: int = |\{|\}|'k'|: |, |\[|\]|\(|\)|1|=|\n|[ -~]){0,120}") {
            let m = crate::formats::python::scan(&s);
            for e in m.dict_entries.iter().take(3) {
                let _ = crate::formats::python::set_checked(&s, &crate::formats::python::dict_key(e), &serde_json::json!(8));
            }
        }
    }
}
