//! How a text was carried to gpufix, taken off before any reader sees it: the same NCCL log, Xid
//! line or OOM message arrives with Windows line endings, in terminal colours, quoted in a GitHub
//! reply, indented as a Markdown code block, or with a prefix on every line that the tool which
//! carried it added (Slurm's `srun --label`, `pdsh`, `kubectl logs --timestamps`/`--prefix`,
//! `docker compose logs`, `torchrun --tee`, Ray's worker prefix, `mpirun --tag-output`). None
//! of that is the producer's text: each reader is written from its producer's grammar, so it is
//! removed here, once, for every reader.
//!
//! The forms, each from the tool that prints it:
//! - ANSI SGR and other CSI/OSC escape sequences (ECMA-48); the same SGR codes with their ESC
//!   lost in a copy (`[31m…[0m`), taken only where the text holds several and a reset `[0m`;
//! - `\r\n` line ends;
//! - a Markdown block quote, `> ` (CommonMark 0.31 §5.1; nested `> > `), never Python's `>>>`;
//! - the indentation every line of the text shares (a Markdown indented code block, §4.4);
//! - an RFC 3339 timestamp with its `T` (`kubectl logs --timestamps`, `docker logs -t`: Go's
//!   `time.RFC3339Nano`), and with the stream and tag after it where the line is one of the
//!   kubelet's container log files (`/var/log/pods/…/N.log`, the CRI logging format:
//!   `TIMESTAMP STREAM TAG CONTENT`, the stream `stdout` or `stderr`, the tag `F` for a full
//!   line or `P` for a partial one, tags joined by `:`; kubernetes
//!   `pkg/kubelet/kuberuntime/logs/logs.go`, `parseCRILog`, and cri-api's `LogTagPartial`,
//!   `LogTagFull`, `LogTagDelimiter`);
//! - `[pod/NAME/CONTAINER] ` (`kubectl logs --prefix`, kubectl `logs.go`);
//! - `SERVICE-N  | ` / `SERVICE_N  | ` (Compose v2 / v1 `logs`, the service's container index);
//!   `NAME  | ` where the service sets `container_name` (docker/compose `cmd/formatter/logs.go`,
//!   read at 13d70b1c: `presenter.setPrefix` prints `fmt.Sprintf("%-{width}s | ", name)` with
//!   the container's name, `width` one more than the longest name), taken where most lines
//!   carry it under a few names;
//! - `[defaultN]:` (torchrun's `--tee`/`--redirects`, torch `elastic/multiprocessing/api.py`);
//! - `[rankN]: ` before each line a rank's Python prints (PyTorch 2.2+ under torchrun: every
//!   line of a rank's traceback, `[rank1]: Traceback (most recent call last):`, as the H200's
//!   torch 2.11 printed it in `h200_nccl_2ranks_one_gpu.log`); not c10's own `[rankN]:` before a
//!   C++ log line's glog head (`[rank0]:[E1203 15:06:00.795629686 ProcessGroupNCCL.cpp:689]`,
//!   `c10/util/Logging.cpp`'s `MessageLogger` with `GLOBAL_RANK` set), which has no space and
//!   which the readers of those lines read as the producer's;
//! - `(NAME pid=N, ip=A) ` / `(pid=N) ` / `(raylet) ` / `(autoscaler +5m3s) ` (Ray's driver-side
//!   worker log prefix, `ray/_private/worker.py` `print_worker_logs`: `(` + `prefix_for` (the
//!   actor or task name and `pid=`, nothing for the raylet and autoscaler) + pid + `, ip=A`
//!   from another node + `)`, in colorama colours whose ESC a copy may lose: `[2m[36m(…)[0m`),
//!   and the same `(NAME pid=N) ` that vLLM's and SGLang's worker processes print themselves
//!   (`_add_prefix`: `f"{CYAN}({worker_name} pid={pid}){RESET} "`, the name `VllmWorker
//!   rank=0` in vLLM 0.8+), and the names SkyPilot gives the Ray task that runs a job's
//!   command on each node (skypilot-org/skypilot `sky/backends/task_codegen.py`,
//!   `RayCodeGen._add_ray_task`, read at 00526108: `name_str = '{task_name},'` (`task,` when
//!   unnamed; `sky-cmd,` for a bare command) on a one-node cluster, else
//!   `f'{node_name}, rank={rank},'` with `node_name` `head` or `worker{idx}`), which Ray
//!   prints as `(head, rank=0, pid=N) ` and `(worker1, rank=1, pid=N, ip=A) `; Ray's log
//!   deduplication appends ` [repeated Nx across cluster]`
//!   (and once its ` (Ray deduplicates logs by default. …)` hint) to a line it folded
//!   (`ray/_private/ray_logging`, `python/ray/tests/test_output.py`), taken off with the prefix;
//! - `[R] ` on most lines (MPICH/Intel MPI Hydra `mpiexec -prepend-rank`/`-l`: pmodels/mpich
//!   `src/pm/hydra` `prepend_rank_fn` sets the pattern `"[%r] "`, the process rank);
//! - `[J,R]<stdout>:` (Open MPI `mpirun --tag-output`);
//! - `N: ` on most lines (Slurm `srun --label`, the task id right-aligned);
//! - `HOST: ` on most lines, from a few hosts each seen several times (`pdsh`, which DeepSpeed's
//!   multi-node launcher runs);
//! - `[PREFIX TIME] ` (Taskcluster: taskgraph's `run-task` driver prints every line of the
//!   task's output as `print_line(prefix, m)`, `b'[%s %sZ] %s' % (prefix, now, m)` with the UTC
//!   time cut to milliseconds and `prefix` the step, `task`, `vcs`, `fetches`, `cache`
//!   (taskcluster/taskgraph `src/taskgraph/run-task/run-task`, read at e18e3994; the offset may
//!   be written `+00:00` by a timezone-aware `isoformat`, RFC 3339 §5.6), and the worker's own
//!   lines come as `[taskcluster TIME] `).
//!
//! - a unified diff's hunk (GNU diffutils' unified format, `diff -u`, and `git diff`'s: git
//!   `Documentation/diff-format.txt` / `diff-generate-patch.txt`, read at v2.47: a `diff --git a/P
//!   b/P` line, extended headers such as `index H..H MODE`, `--- a/P` and `+++ b/P`, then hunks
//!   `@@ -L,S +L,S @@` whose lines start with one column, ` ` for context, `+` for an added and
//!   `-` for a removed line, `\ No newline at end of file` after a last line without one), and
//!   the same hunk as a pull request's review thread shows it, under the file's `PATH:LINE`
//!   alone on the line above (GitHub's review comment, as the index's stored threads render it,
//!   h160's synthorg#1445 and training_hub#88): the file after the change is the producer's
//!   text, so the marker column is taken off the context and added lines, and the removed lines
//!   and the headers are left empty (lines are never dropped, see below). Taken only where the
//!   text starts with such a header, or with the path line and holds two added lines, and every
//!   other line is a diff's.
//!
//! A per-line prefix is taken only where the form marks enough of the text's lines that the
//! text was carried that way (a Slurm label or pdsh host on most of them; the unambiguous forms
//! on at least two), and only from the lines that carry it. Lines are never joined or split, so
//! a line number a reader reports is the line of the file.

use std::sync::LazyLock;

use regex::Regex;

/// Lines of the text's start that decide which forms it was carried in.
const SAMPLE_LINES: usize = 2000;

static CSI: LazyLock<Regex> = LazyLock::new(|| {
    // CSI (ESC [ params intermediates final), OSC (ESC ] … BEL or ST), and two-byte escapes
    Regex::new(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
        .expect("static regex")
});
static ORPHAN_SGR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[[0-9]{1,3}(?:;[0-9]{1,3})*m").expect("static regex"));
static RFC3339: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?(?:Z|[+-][0-9]{2}:?[0-9]{2})?[ \t](?:(?:stdout|stderr) [A-Z](?::[A-Z])* )?")
        .expect("static regex")
});
static POD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[pod/[^\]\s]+\] ").expect("static regex"));
static COMPOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z0-9][A-Za-z0-9_.-]*[-_][0-9]+)[ \t]*\| ?").expect("static regex")
});
// a `container_name` of any form: padded to the longest name, then ` | ` (an empty line keeps
// only `|`, or `| ` with its trailing space)
static COMPOSE_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z0-9][A-Za-z0-9_.-]*) +\|(?: |$)").expect("static regex")
});
static RAY: LazyLock<Regex> = LazyLock::new(|| {
    // colour codes around the parentheses, their ESC lost; the name may hold `key=N` words
    // (`VllmWorker rank=0`), and SkyPilot's task names end each part in a comma (`head,
    // rank=0,`, `sky-cmd,`)
    Regex::new(
        r"^(?:\[[0-9;]{1,8}m)*\((?:raylet|autoscaler(?: \+[0-9hms]+)?|(?:[A-Za-z_][A-Za-z0-9_.:-]*,?(?:[ \t]+[A-Za-z_]+=[0-9]+,?)*[ \t]+)?pid=[0-9]+(?:,[ \t]*ip=[0-9A-Fa-f.:]+)?)\)(?:\[[0-9;]{1,8}m)*(?:[ \t]|$)",
    )
    .expect("static regex")
});
/// Ray's deduplication suffix (see the module's header), at a line's end.
static RAY_DEDUP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" \[repeated [0-9]+x across cluster\](?: \(Ray deduplicates logs by default\.[^)]*\))?[ \t]*$")
        .expect("static regex")
});
static RANK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[[0-9]{1,6}\] ").expect("static regex"));
static MPIRUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[[0-9]+,[0-9]+\]<(?:stdout|stderr|stddiag)>:").expect("static regex")
});
static RUN_TASK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[[a-z][a-z0-9_-]{0,31} [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?(?:Z|[+-][0-9]{2}:[0-9]{2})\](?: |$)")
        .expect("static regex")
});
static PDSH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z0-9][A-Za-z0-9_.-]{0,62}): ").expect("static regex"));

/// A per-line prefix form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Quote,
    Timestamp,
    Pod,
    Compose,
    ComposeNamed,
    Torchrun,
    TorchRank,
    Ray,
    Mpirun,
    Rank,
    Srun,
    Pdsh,
    RunTask,
}

const FORMS: [Form; 13] = [
    Form::Quote,
    Form::Timestamp,
    Form::Pod,
    Form::Compose,
    Form::ComposeNamed,
    Form::Torchrun,
    Form::TorchRank,
    Form::Ray,
    Form::Mpirun,
    Form::Rank,
    Form::Srun,
    Form::Pdsh,
    Form::RunTask,
];

/// The length of `form`'s prefix at the start of `line`, if it has one.
fn prefix(form: Form, line: &str) -> Option<usize> {
    let re = match form {
        Form::Quote => {
            if !line.starts_with('>') || line.starts_with(">>>") {
                return None;
            }
            let b = line.as_bytes();
            let mut i = 0;
            // a Python prompt inside a quoted reply (`> >>> import torch`) is the producer's
            while i < b.len() && b[i] == b'>' && !line[i..].starts_with(">>>") {
                i += 1;
                if b.get(i) == Some(&b' ') {
                    i += 1;
                }
            }
            return Some(i);
        }
        // the common line prefixes, read byte by byte (a regex call per line of a large log
        // costs more than the reader after it)
        Form::Srun => {
            let b = line.as_bytes();
            let sp = b.iter().take_while(|&&c| c == b' ').count();
            let digits = b[sp..].iter().take_while(|c| c.is_ascii_digit()).count();
            let at = sp + digits;
            return ((1..=6).contains(&digits) && b[at..].starts_with(b": ")).then_some(at + 2);
        }
        // torchrun's `--tee`/`--redirects` prefix `[default0]:`, and the `[rank0]: ` PyTorch
        // puts before a rank's traceback
        Form::Torchrun => return numbered(line, "[default", usize::MAX, "]:"),
        Form::TorchRank => return numbered(line, "[rank", 6, "]: "),
        Form::Timestamp => &RFC3339,
        Form::Pod => &POD,
        Form::Compose => &COMPOSE,
        Form::ComposeNamed => &COMPOSE_NAMED,
        Form::Ray => &RAY,
        Form::Mpirun => &MPIRUN,
        Form::Rank => &RANK,
        Form::RunTask => &RUN_TASK,
        Form::Pdsh => {
            let c = PDSH.captures(line)?;
            let host = c.get(1)?.as_str();
            // a host name or address: a digit in it (node01, gpu-3, 10.0.0.7), not a word
            // such as `Error:` or `INFO:`
            if !host.bytes().any(|b| b.is_ascii_digit()) {
                return None;
            }
            return Some(c.get(0)?.end());
        }
    };
    // cheap first-byte checks before a regex
    let first = *line.as_bytes().first()?;
    let plausible = match form {
        Form::Timestamp => first.is_ascii_digit(),
        Form::Pod | Form::Mpirun | Form::Rank | Form::RunTask => first == b'[',
        Form::Ray => first == b'(' || first == b'[',
        Form::Compose | Form::ComposeNamed => first.is_ascii_alphanumeric() && line.contains('|'),
        _ => true,
    };
    if !plausible {
        return None;
    }
    let end = re.find(line)?.end();
    // gpustat's own GPU line starts with its index in brackets: `[0] NAME | 34°C,   0 % |
    // 1234 / 81920 MB | …` (wookayin/gpustat `gpustat/core.py` `GPUStat.print_to`); that is the
    // producer's text, not Hydra's rank
    if form == Form::Rank && super::gpustat_line::gpu_line(line).is_some() {
        return None;
    }
    Some(end)
}

/// The length of `head`, 1 to `max_digits` ASCII digits and `tail` at the start of `line`.
fn numbered(line: &str, head: &str, max_digits: usize, tail: &str) -> Option<usize> {
    let rest = line.strip_prefix(head)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    ((1..=max_digits).contains(&digits) && rest[digits..].starts_with(tail))
        .then_some(head.len() + digits + tail.len())
}

/// The key a prefix is counted under: the host (pdsh) or service (Compose) it names, so that a
/// prefix seen once is not a carrier's.
fn key(form: Form, line: &str) -> Option<String> {
    match form {
        Form::Pdsh => PDSH.captures(line).map(|c| c[1].to_string()),
        Form::Compose => COMPOSE.captures(line).map(|c| c[1].to_string()),
        Form::ComposeNamed => COMPOSE_NAMED.captures(line).map(|c| c[1].to_string()),
        _ => None,
    }
}

/// Which forms the start of the text was carried in.
fn forms_of(lines: &[&str]) -> Vec<Form> {
    let n = lines.len();
    let mut out = Vec::new();
    for form in FORMS {
        let mut hits = 0usize;
        let mut keys: std::collections::HashMap<String, usize> = Default::default();
        for l in lines {
            if prefix(form, l).is_some() {
                hits += 1;
                if let Some(k) = key(form, l) {
                    *keys.entry(k).or_default() += 1;
                }
            }
        }
        let carried = match form {
            // most lines: a number or a word before `: ` is also how other text begins, a
            // number in brackets how a list does
            Form::Srun | Form::Rank => hits >= 2 && hits * 10 >= n * 6,
            Form::Pdsh => {
                // a few hosts, each on several lines, together on most of them
                let repeated: usize = keys.values().filter(|&&c| c >= 2).sum();
                keys.len() <= 64 && repeated >= 2 && repeated * 10 >= n * 6
            }
            Form::Compose => {
                let repeated: usize = keys.values().filter(|&&c| c >= 2).sum();
                repeated >= 2 && repeated * 10 >= n * 3
            }
            // a name of any form before ` | ` (a table's first column is not one name)
            Form::ComposeNamed => {
                let repeated: usize = keys.values().filter(|&&c| c >= 2).sum();
                keys.len() <= 64 && repeated >= 2 && repeated * 10 >= n * 6
            }
            _ => hits >= 2,
        } || (n > 0
            && hits == n
            && !matches!(form, Form::Pdsh | Form::ComposeNamed | Form::Rank));
        if carried {
            out.push(form);
        }
    }
    out
}

/// The shared leading whitespace of every non-empty line (spaces, or tabs), in bytes.
fn common_indent(text: &str) -> usize {
    let mut common: Option<&str> = None;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let ws = &l[..l.len() - l.trim_start_matches([' ', '\t']).len()];
        common = Some(match common {
            None => ws,
            Some(c) => {
                let k = c
                    .bytes()
                    .zip(ws.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &c[..k]
            }
        });
        if common == Some("") {
            return 0;
        }
    }
    common.map_or(0, str::len)
}

/// The text with `cut(line).0` bytes taken off the start of each line (without its `\n`) and
/// `cut(line).1` off its end, in place: a large log is not copied into a second buffer. Both
/// lengths fall on char boundaries of the line; together at most its length.
fn cut_lines(text: String, cut: impl Fn(&str) -> (usize, usize)) -> String {
    // the byte ranges to take out, found on the text before any byte moves
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for piece in text.split_inclusive('\n') {
        let line = piece.strip_suffix('\n').unwrap_or(piece);
        let (head, tail) = cut(line);
        let head = head.min(line.len());
        let tail = tail.min(line.len() - head);
        if head > 0 && line.is_char_boundary(head) {
            out.push((at, at + head));
        }
        if tail > 0 && line.is_char_boundary(line.len() - tail) {
            out.push((at + line.len() - tail, at + line.len()));
        }
        at += piece.len();
    }
    if out.is_empty() {
        return text;
    }
    let mut bytes = text.into_bytes();
    let len = bytes.len();
    // move each stretch between two ranges down over what was taken out before it
    let mut write = out[0].0;
    for (i, &(_, end)) in out.iter().enumerate() {
        let to = out.get(i + 1).map_or(len, |r| r.0);
        bytes.copy_within(end..to, write);
        write += to - end;
    }
    bytes.truncate(write);
    // only whole chars were taken out: still UTF-8
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The text without the indentation all its non-empty lines share (a Markdown code block).
fn dedent(mut text: String) -> String {
    let indent = common_indent(&text);
    if indent > 0 {
        // every non-empty line has the indent; a blank one may be shorter
        text = cut_lines(text, |line| {
            if line.trim().is_empty() {
                (line.len() - line.trim_start_matches([' ', '\t']).len(), 0)
            } else {
                (indent, 0)
            }
        });
    }
    text
}

/// A file path alone on its line, with an extension and an optional `:LINE` (the review thread's
/// file header, see the module's header).
static DIFF_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?::[0-9]+)?[ \t]*$")
        .expect("static regex")
});
/// A hunk's range line: `@@ -L,S +L,S @@` and the function context git adds after it.
static HUNK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^@@ -[0-9]+(?:,[0-9]+)? \+[0-9]+(?:,[0-9]+)? @@").expect("static regex")
});
static GIT_INDEX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^index [0-9a-f]{7,64}\.\.[0-9a-f]{7,64}(?: [0-7]{6})?$").expect("static regex")
});

/// How much of `line` a diff leaves of the file after the change: `Some(1)` for a context or
/// added line (its marker), `Some(len)` for a removed line or a header (all of it), `Some(0)` for
/// an empty line; `None` for a line no diff prints. `added` is set for an added line.
fn diff_cut(line: &str, added: &mut bool) -> Option<usize> {
    let all = Some(line.len());
    match line.as_bytes().first() {
        None => Some(0),
        Some(b'+') if line.starts_with("+++ ") => all,
        Some(b'+') => {
            *added = true;
            Some(1)
        }
        Some(b' ') => Some(1),
        Some(b'-') => all,
        Some(b'@') if HUNK.is_match(line) => all,
        Some(b'\\') if line.starts_with("\\ No newline at end of file") => all,
        Some(b'd') if line.starts_with("diff --git ") || line.starts_with("deleted file mode ") => {
            all
        }
        Some(b'n') if line.starts_with("new file mode ") => all,
        Some(b'i') if GIT_INDEX.is_match(line) => all,
        _ => None,
    }
}

/// The file a unified diff's hunk leaves (see the module's header), or the text unchanged.
fn undiff(text: String) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(first) = lines.next() else {
        return text;
    };
    let second = lines.next().unwrap_or("");
    let headed = first.starts_with("diff --git ")
        || HUNK.is_match(first)
        || (first.starts_with("--- ") && second.starts_with("+++ "));
    let path = !headed && DIFF_PATH.is_match(first);
    if !headed && !path {
        return text;
    }
    // every line a diff's, counted on the whole text (a hunk is short; a log that starts
    // with a path is given up at its first other line)
    let mut added = 0usize;
    let mut header = path;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if std::mem::take(&mut header) {
            continue;
        }
        let mut a = false;
        if diff_cut(line, &mut a).is_none() {
            return text;
        }
        added += usize::from(a);
    }
    if added == 0 || (path && added < 2) {
        return text;
    }
    let header = std::cell::Cell::new(path);
    cut_lines(text, |line| {
        if header.get() && !line.trim().is_empty() {
            header.set(false);
            return (line.len(), 0);
        }
        (diff_cut(line, &mut false).unwrap_or(0), 0)
    })
}

/// The text as its producer printed it: see the module's header for what is taken off. A
/// text carried in none of these forms is returned as it is, without a copy.
pub fn unwrap(text: String) -> String {
    let mut text = text;
    if memchr::memchr(0x1b, text.as_bytes()).is_some() {
        text = CSI.replace_all(&text, "").into_owned();
    }
    // SGR codes whose ESC a copy lost: several of them and a reset among them
    if text.contains("[0m") && ORPHAN_SGR.find_iter(&text).take(3).count() >= 3 {
        text = ORPHAN_SGR.replace_all(&text, "").into_owned();
    }
    if memchr::memmem::find(text.as_bytes(), b"\r\n").is_some() {
        text = text.replace("\r\n", "\n");
    }
    text = dedent(text);
    // prefixes nest (a Slurm label before a timestamp before torchrun's): one layer a round,
    // each round judged on what the last one left
    for _ in 0..4 {
        let sample: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(SAMPLE_LINES)
            .collect();
        let forms = forms_of(&sample);
        drop(sample);
        if forms.is_empty() {
            break;
        }
        let ray = forms.contains(&Form::Ray);
        text = cut_lines(text, |line| {
            let k = forms.iter().find_map(|&f| prefix(f, line)).unwrap_or(0);
            // Ray's dedup note after the message (` [repeated 7x across cluster]`)
            let tail = if ray {
                RAY_DEDUP
                    .find(&line[k..])
                    .map_or(0, |m| line.len() - k - m.start())
            } else {
                0
            };
            (k, tail)
        });
    }
    // a diff's hunk, under a carrier or not; then a code block's indent, under a carrier or
    // over one (the hunk's own, once its marker column is off)
    dedent(undiff(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> String {
        unwrap(s.to_string())
    }

    #[test]
    fn a_diff_hunk_is_read_as_the_file_after_the_change() {
        // a review thread's hunk under its `PATH:LINE` (h160, github.com/Aureliolo/synthorg/pull/1445)
        let t = "docker/compose.fine-tuning-gpu.yml:50\n+    group_add:\n+      - \"65532\"\n+    read_only: true\n+    deploy:\n+      resources:\n+        limits:\n+          memory: 8G\n";
        assert_eq!(
            u(t),
            "\ngroup_add:\n  - \"65532\"\nread_only: true\ndeploy:\n  resources:\n    limits:\n      memory: 8G\n"
        );
        // `git diff`: headers and removed lines left empty, context and added lines kept, one
        // line of the output for each of the input (a reader's line numbers stay the file's)
        let t = "diff --git a/train.py b/train.py\nindex 3b18e51..a0c3f12 100644\n--- a/train.py\n+++ b/train.py\n@@ -10,3 +10,3 @@ def main():\n     loader = DataLoader(ds,\n-        num_workers=0)\n+        num_workers=8)\n\\ No newline at end of file\n";
        let out = u(t);
        assert_eq!(out.lines().count(), t.lines().count());
        assert_eq!(
            out.lines().filter(|l| !l.is_empty()).collect::<Vec<_>>(),
            ["loader = DataLoader(ds,", "    num_workers=8)"]
        );
        // a hunk alone, from its range line
        assert_eq!(
            u("@@ -1,2 +1,2 @@\n-a: 1\n+a: 2\n b: 3\n"),
            "\n\na: 2\nb: 3\n"
        );
        // not a diff: a YAML list, a markdown list of `+` and `-` bullets, nvidia-smi's table
        // borders, an IP address over a log, a path over lines of another kind, a path over a
        // single added line, a `--- ` line without `+++ ` after it
        for t in [
            "- name: a\n  image: b\n- name: c\n",
            "+ one\n+ two\n- three\n",
            "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 450.57       Driver Version: 450.57       CUDA Version: 11.0     |\n+-----------------------------------------------------------------------------+\n",
            "10.25.117.28\n+ a\n+ b\n",
            "config.yaml\nbatch_size: 8\nnum_workers: 4\n",
            "train.py:12\n+    num_workers=0,\n",
            "--- a/x.py\n+ a\n+ b\n",
        ] {
            assert_eq!(u(t), t, "{t}");
        }
    }

    // nccl#1026 (an NCCL INFO line as NCCL prints it, `node:pid:tid [dev] NCCL INFO`)
    const NCCL: &str = "gpu-node-1:2873:2873 [0] NCCL INFO NET/IB : No device found.\ngpu-node-1:2873:2873 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n";

    #[test]
    fn text_carried_plainly_is_untouched() {
        for t in [
            NCCL,
            "[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
            "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n",
            "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2 |\n",
            ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n",
            "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-2)\n",
            "2024-05-01 10:00:00,123 - INFO - epoch 1 loss 0.5\n",
            "Error: one\nError: two\nError: three\n",
        ] {
            assert_eq!(u(t), t, "{t:?}");
        }
    }

    #[test]
    fn taskcluster_run_task_prefix_is_taken_off() {
        // github.com/mozilla/translations/issues/1167: a Taskcluster task log, every line under
        // run-task's `[task TIME] ` (an offset written `+00:00`)
        let log = "[task 2025-07-01T05:06:30.004+00:00] [train] nvidia-smi failed with return code 18\n[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library version mismatch\n[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] NVML library version: 550.144\n";
        assert_eq!(
            u(log),
            "[train] nvidia-smi failed with return code 18\n[train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library version mismatch\n[train] [nvidia-smi(stdout)] NVML library version: 550.144\n"
        );
        // run-task's own `Z` form (taskgraph run-task `print_line`), another step's prefix
        let z = "[vcs 2024-01-02T03:04:05.678Z] executing ['hg', 'clone']\n[task 2024-01-02T03:04:06.001Z] NCCL INFO Using network Socket\n";
        assert_eq!(
            u(z),
            "executing ['hg', 'clone']\nNCCL INFO Using network Socket\n"
        );
        // torch's rank prefix with its bracketed glog time is not run-task's
        // (github.com/ecmwf/WeatherGenerator/pull/1533)
        let torch = "[rank2]:[E112 15:47:18.728729935 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective operation timeout\n[rank3]:[E112 15:47:18.763162126 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught collective operation timeout\n";
        assert_eq!(u(torch), torch);
    }

    #[test]
    fn a_rank_s_python_lines_lose_torch_s_rank_prefix_its_cpp_lines_keep_c10_s() {
        // the H200's torch 2.11 under torchrun (corpus h200_nccl_2ranks_one_gpu.log): a rank's
        // traceback, each line behind `[rank1]: `, beside c10's glog line
        let t = "[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/tmp/cap/nccl1.py\", line 3, in <module>\n[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:94, invalid usage\n[rank1]:[W1203 13:51:11.402093616 ProcessGroupNCCL.cpp:1553] Warning: WARNING: destroy_process_group() was not called\n";
        assert_eq!(
            u(t),
            "Traceback (most recent call last):\n  File \"/tmp/cap/nccl1.py\", line 3, in <module>\ntorch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:94, invalid usage\n[rank1]:[W1203 13:51:11.402093616 ProcessGroupNCCL.cpp:1553] Warning: WARNING: destroy_process_group() was not called\n"
        );
        // one such line is a quotation, not a carrier
        let one = "as the log says, [rank0]: RuntimeError: boom\nno more\n";
        assert_eq!(u(one), one);
    }

    #[test]
    fn each_carrier_is_taken_off() {
        let cases: [(&str, String); 11] = [
            ("crlf", NCCL.replace('\n', "\r\n")),
            ("quote", NCCL.lines().map(|l| format!("> {l}\n")).collect()),
            (
                "nested quote",
                NCCL.lines().map(|l| format!("> > {l}\n")).collect(),
            ),
            (
                "indent",
                NCCL.lines().map(|l| format!("    {l}\n")).collect(),
            ),
            ("srun", NCCL.lines().map(|l| format!("0: {l}\n")).collect()),
            (
                "kubectl",
                NCCL.lines()
                    .map(|l| format!("2025-03-14T09:26:53.589793238Z {l}\n"))
                    .collect(),
            ),
            (
                "compose",
                NCCL.lines()
                    .map(|l| format!("trainer-1  | {l}\n"))
                    .collect(),
            ),
            (
                "ansi",
                NCCL.lines()
                    .map(|l| format!("\x1b[31m{l}\x1b[0m\n"))
                    .collect(),
            ),
            (
                "torchrun",
                NCCL.lines().map(|l| format!("[default0]:{l}\n")).collect(),
            ),
            (
                "torch rank",
                NCCL.lines().map(|l| format!("[rank0]: {l}\n")).collect(),
            ),
            (
                "ray",
                NCCL.lines()
                    .map(|l| format!("(RayTrainWorker pid=4012, ip=10.0.0.7) {l}\n"))
                    .collect(),
            ),
        ];
        for (name, t) in cases {
            assert_eq!(u(&t), NCCL, "{name}");
        }
        // nested carriers: a Slurm label, then a timestamp, then torchrun's
        let nested: String = NCCL
            .lines()
            .map(|l| format!("1: 2025-03-14T09:26:53Z [default1]:{l}\n"))
            .collect();
        assert_eq!(u(&nested), NCCL);
        // pdsh, as DeepSpeed's launcher prints it
        let pdsh: String = NCCL
            .lines()
            .chain(NCCL.lines())
            .map(|l| format!("worker-1: {l}\n"))
            .collect();
        assert_eq!(u(&pdsh), NCCL.repeat(2));
        // mpirun --tag-output
        let mpi: String = NCCL
            .lines()
            .map(|l| format!("[1,0]<stdout>:{l}\n"))
            .collect();
        assert_eq!(u(&mpi), NCCL);
        // colour codes whose ESC was lost in a copy
        let orphan: String = NCCL.lines().map(|l| format!("[32m{l}[0m\n")).collect();
        assert_eq!(u(&orphan), NCCL);
    }

    #[test]
    fn real_carried_texts_lose_their_carrier() {
        // github.com/vllm-project/vllm/issues/6042: Ray's worker prefix, the first line with
        // the colour code whose ESC the copy lost
        let t = "[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=158046, OpType=GATHER, NumelIn=2867200, NumelOut=0, Timeout(ms)=600000) ran for 600027 milliseconds before timing out.\n(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:583] [Rank 1] To avoid data inconsistency, we are taking the entire process down.\n";
        let u1 = u(t);
        assert!(
            u1.starts_with("[rank1]:[E ProcessGroupNCCL.cpp:563]"),
            "{u1}"
        );
        assert!(
            u1.contains("\n[rank1]:[E ProcessGroupNCCL.cpp:583]"),
            "{u1}"
        );
        // github.com/OpenRLHF/OpenRLHF/issues/624: an actor with its node's address and Ray's
        // deduplication suffix
        let t = "(ReferenceModelRayActor pid=5823, ip=10.164.227.153) [rank0]:[E1225 12:58:32.713134032 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 17284, last enqueued NCCL work: 17290, last completed NCCL work: 17283. [repeated 14x across cluster]\n(ReferenceModelRayActor pid=5823, ip=10.164.227.153) [rank0]:[E1225 12:58:32.712922209 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=17284, OpType=_ALLGATHER_BASE, NumelIn=415236096, NumelOut=1245708288, Timeout(ms)=7200000) ran for 7200031 milliseconds before timing out. [repeated 14x across cluster]\n";
        let u2 = u(t);
        assert!(u2.starts_with("[rank0]:"), "{u2}");
        assert!(u2.contains("last completed NCCL work: 17283.\n"), "{u2}");
        assert!(u2.ends_with("before timing out.\n"), "{u2}");
        // github.com/OpenRLHF/OpenRLHF/issues/621: the raylet's own line
        let t = "(raylet) A worker died or was killed while executing a task by an unexpected system error.\n(RayWorkerWrapper pid=92234, ip=172.19.24.110) mlx5: host_unknown: got completion with error: [repeated 2x across cluster]\n";
        assert_eq!(
            u(t),
            "A worker died or was killed while executing a task by an unexpected system error.\nmlx5: host_unknown: got completion with error:\n"
        );
        // github.com/vllm-project/vllm/issues/15182: vLLM's own worker prefix, a rank in the name
        let t = "(VllmWorker rank=5 pid=3073)     self.run()\n(VllmWorker rank=5 pid=3073)   File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/executor/multiproc_executor.py\", line 311, in worker_main\n";
        // (the two spaces every line then shares go too, as a shared indent does)
        assert!(u(t).starts_with("  self.run()\nFile \""), "{}", u(t));
        // github.com/NVIDIA/k8s-device-plugin/issues/444: the plugin's log as the kubelet's
        // container log file holds it (CRI: time, stream, tag), the plugin's own Go log time kept
        let t = "2023-10-19T11:11:54.957587844+08:00 stderr F 2023/10/19 03:11:54 Loading NVML\n2023-10-19T11:11:54.957723331+08:00 stderr F 2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.\n";
        assert_eq!(
            u(t),
            "2023/10/19 03:11:54 Loading NVML\n2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.\n"
        );
        // a partial line (`P`) loses its carrier too; a word after the time that is not a
        // stream stays
        let t = "2024-01-02T03:04:05.000000001Z stdout P first half\n2024-01-02T03:04:05.000000002Z stdout F second\n2024-01-02T03:04:06Z stderr is full\n";
        assert_eq!(u(t), "first half\nsecond\nstderr is full\n");
        // github.com/skypilot-org/skypilot/pull/3217 and /pull/4099: SkyPilot's task names
        // behind Ray's prefix, an nccl-tests head across two nodes and a one-node table
        let t = "(worker1, rank=1, pid=20075, ip=10.164.15.193) 10.164.15.192,10.164.15.193\n(head, rank=0, pid=21170) 10.164.15.192,10.164.15.193\n(head, rank=0, pid=21170) # nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n(head, rank=0, pid=21170) #\n";
        assert_eq!(
            u(t),
            "10.164.15.192,10.164.15.193\n10.164.15.192,10.164.15.193\n# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n"
        );
        let t = "(sky-cmd, pid=13008) +---------------------------------------------------------------------------------------+\n(sky-cmd, pid=13008) | NVIDIA-SMI 535.183.06             Driver Version: 535.183.06   CUDA Version: 12.2     |\n";
        assert!(u(t).starts_with("+---"), "{}", u(t));
        assert!(u(t).contains("\n| NVIDIA-SMI 535.183.06"), "{}", u(t));
        // a parenthesised remark is not a Ray prefix: no `pid=`
        let t = "(head, rank=0) starting\n(head, rank=0) done\n";
        assert_eq!(u(t), t);
        // github.com/fumiama/Retrieval-based-Voice-Conversion-WebUI/issues/65: compose with a
        // `container_name`
        let t = "voice-clone  | INFO:Micy:loaded pretrained assets/pretrained_v2/f0G40k.pth\nvoice-clone  | INFO:Micy:<All keys matched successfully>\nvoice-clone  | INFO:faiss.loader:Loading faiss with AVX2 support.\n";
        assert_eq!(
            u(t),
            "INFO:Micy:loaded pretrained assets/pretrained_v2/f0G40k.pth\nINFO:Micy:<All keys matched successfully>\nINFO:faiss.loader:Loading faiss with AVX2 support.\n"
        );
        // github.com/NVIDIA/nccl/issues/1232: Hydra's `-prepend-rank`
        let t = "[0] node0:13571:13571 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n[1] node2:22555:22555 [0] NCCL INFO Connected all rings\n[2] node0:13572:13572 [1] NCCL INFO Channel 00 : 2[1] -> 0[0] via SHM/direct/direct\n";
        assert_eq!(
            u(t),
            "node0:13571:13571 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\nnode2:22555:22555 [0] NCCL INFO Connected all rings\nnode0:13572:13572 [1] NCCL INFO Channel 00 : 2[1] -> 0[0] via SHM/direct/direct\n"
        );
        // github.com/wookayin/gpustat/issues/130: gpustat's `[N]` is its GPU index, not a rank
        let t = "gpu-a-11.extreme         Mon Aug 22 15:23:57 2022  515.65.01\n[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n[1] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n[2] Tesla P100-PCIE-16GB | 28'C,   0 % |   103 / 16384 MB |\n";
        assert_eq!(u(t), t);
    }

    #[test]
    fn the_new_forms_leave_producer_text_alone() {
        for t in [
            // a Markdown table's first column, a list of references, a one-line table row
            "kind | artifacts\nnccl-log | 4\ntorch-oom | 2\n",
            "[1] https://example.org/a\n[2] https://example.org/b\nsee above\nand more\n",
            "[1] only one\n",
            "Driver | 535.54\n",
            // dmesg's uptime, NCCL's own line, Python's repr of a tuple
            "[  12.345678] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n[  12.400000] nvidia-uvm: Loaded\n",
            NCCL,
            "(1, 2) (3, 4)\n(5, 6)\n",
        ] {
            assert_eq!(u(t), t, "{t:?}");
        }
    }

    /// Every public text of the fixtures (three lines or more), carried in each form, reads as
    /// the text itself does: the forms are taken off the producers' whole range of text, not
    /// only off the NCCL lines above. A text whose own lines already begin the way a carrier's
    /// do (a shell prompt `> cmd`, gpustat's `[0]`, a Ray prefix kept in the paste) is
    /// ambiguous under that carrier and skipped for it.
    #[test]
    fn every_fixture_text_survives_every_carrier() {
        type Wrap = fn(&str) -> String;
        let carriers: [(&str, Option<Form>, Wrap); 13] = [
            ("crlf", None, |l| format!("{l}\r")),
            ("quote", Some(Form::Quote), |l| {
                if l.is_empty() {
                    ">".into()
                } else {
                    format!("> {l}")
                }
            }),
            ("indent", None, |l| {
                if l.is_empty() {
                    String::new()
                } else {
                    format!("    {l}")
                }
            }),
            ("srun", Some(Form::Srun), |l| format!("0: {l}")),
            ("kubectl", Some(Form::Timestamp), |l| {
                format!("2025-03-14T09:26:53.589793238Z {l}")
            }),
            ("compose", Some(Form::Compose), |l| {
                format!("trainer-1  | {l}")
            }),
            ("ansi", None, |l| format!("\x1b[31m{l}\x1b[0m")),
            ("torchrun", Some(Form::Torchrun), |l| {
                format!("[default0]:{l}")
            }),
            ("torch rank", Some(Form::TorchRank), |l| {
                format!("[rank3]: {l}")
            }),
            ("ray", Some(Form::Ray), |l| {
                format!("(RayTrainWorker pid=4012, ip=10.0.0.7) {l}")
            }),
            ("mpirun", Some(Form::Mpirun), |l| {
                format!("[1,0]<stdout>:{l}")
            }),
            ("pdsh", Some(Form::Pdsh), |l| format!("worker-1: {l}")),
            ("hydra", Some(Form::Rank), |l| format!("[0] {l}")),
        ];
        // trailing blanks and blank lines at the end are a copy's, not the producer's
        let norm = |s: &str| -> String {
            let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
            lines.join("\n").trim_end().to_string()
        };
        let (mut texts, mut fails) = (0, Vec::new());
        for (path, t) in crate::evidence::testutil::every_fixture_text() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".label.yaml")
                || name.ends_with(".md")
                || t.contains('\r')
                || t.lines().filter(|l| !l.trim().is_empty()).count() < 3
            {
                continue;
            }
            texts += 1;
            let base = norm(&u(&t));
            for (carrier, form, wrap) in carriers {
                let ambiguous = form.is_some_and(|f| {
                    t.lines().any(|l| {
                        let l = l.trim_start();
                        prefix(f, l).is_some()
                            || (f == Form::Quote && l.starts_with('>') && !l.starts_with(">>>"))
                            || (f == Form::Rank && RANK.is_match(l))
                            || (f == Form::Ray && l.contains(" pid="))
                    })
                });
                if ambiguous {
                    continue;
                }
                let carried: String = t.lines().map(|l| wrap(l) + "\n").collect();
                let got = norm(&u(&carried));
                if got != base {
                    let at = got.lines().zip(base.lines()).position(|(a, b)| a != b);
                    fails.push(format!(
                        "{name} under {carrier}: line {at:?}: {:?}",
                        at.and_then(|i| got.lines().nth(i))
                    ));
                }
            }
        }
        assert!(texts > 1000, "{texts}");
        assert!(fails.is_empty(), "{}", fails.join("\n"));
    }

    #[test]
    fn a_prefix_is_taken_only_where_the_text_was_carried_so() {
        // one `N: ` line among others is not a Slurm label
        let t = "GPU 0: NVIDIA A100\n0: not a label\nsomething else\nand more\n";
        assert_eq!(u(t), t);
        // a quoted reply in a post: the quoted lines lose their marker, the rest stays
        let t = "I get this:\n> gpu-node-1:2873:2873 [0] NCCL INFO NET/IB : No device found.\n> gpu-node-1:2873:2873 [0] NCCL INFO Using network Socket\nany idea?\n";
        assert_eq!(
            u(t),
            "I get this:\ngpu-node-1:2873:2873 [0] NCCL INFO NET/IB : No device found.\ngpu-node-1:2873:2873 [0] NCCL INFO Using network Socket\nany idea?\n"
        );
        // a timestamp takes one space with it, not the indentation after it (`-q` nesting)
        let q = "2025-03-14T09:26:53Z GPU 00000000:3B:00.0\n2025-03-14T09:26:53Z     Product Name : NVIDIA H100\n";
        assert_eq!(
            u(q),
            "GPU 00000000:3B:00.0\n    Product Name : NVIDIA H100\n"
        );
        // an indented block of carried lines: the indent, then the carrier
        let t = "    0: NCCL INFO a\n    0: NCCL INFO b\n";
        assert_eq!(u(t), "NCCL INFO a\nNCCL INFO b\n");
        // a text of one line carried so (a quoted `docker run`) loses it too
        assert_eq!(
            u("> docker run --gpus all img\n"),
            "docker run --gpus all img\n"
        );
        // the same word before `: ` on every line is no host
        let t = "INFO: a\nINFO: b\nINFO: c\n";
        assert_eq!(u(t), t);
        // lines stay lines: a file's line numbers hold after the unwrap
        let t: String = (0..50).map(|i| format!("0: line {i}\n")).collect();
        assert_eq!(u(&t).lines().count(), 50);
    }
}
