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
//!   `time.RFC3339Nano`);
//! - `[pod/NAME/CONTAINER] ` (`kubectl logs --prefix`, kubectl `logs.go`);
//! - `SERVICE-N  | ` / `SERVICE_N  | ` (Compose v2 / v1 `logs`, the service's container index);
//! - `[defaultN]:` (torchrun's `--tee`/`--redirects`, torch `elastic/multiprocessing/api.py`);
//! - `(NAME pid=N, ip=A) ` / `(pid=N) ` (Ray's driver-side worker log prefix,
//!   `ray/_private/log_monitor.py`);
//! - `[J,R]<stdout>:` (Open MPI `mpirun --tag-output`);
//! - `N: ` on most lines (Slurm `srun --label`, the task id right-aligned);
//! - `HOST: ` on most lines, from a few hosts each seen several times (`pdsh`, which DeepSpeed's
//!   multi-node launcher runs).
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
    Regex::new(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?(?:Z|[+-][0-9]{2}:?[0-9]{2})?[ \t]+")
        .expect("static regex")
});
static POD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[pod/[^\]\s]+\] ").expect("static regex"));
static COMPOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z0-9][A-Za-z0-9_.-]*[-_][0-9]+)[ \t]*\| ?").expect("static regex")
});
static RAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\((?:[A-Za-z_][A-Za-z0-9_.:]*[ \t]+)?pid=[0-9]+(?:,[ \t]*ip=[0-9A-Fa-f.:]+)?\)[ \t]",
    )
    .expect("static regex")
});
static MPIRUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[[0-9]+,[0-9]+\]<(?:stdout|stderr|stddiag)>:").expect("static regex")
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
    Torchrun,
    Ray,
    Mpirun,
    Srun,
    Pdsh,
}

const FORMS: [Form; 9] = [
    Form::Quote,
    Form::Timestamp,
    Form::Pod,
    Form::Compose,
    Form::Torchrun,
    Form::Ray,
    Form::Mpirun,
    Form::Srun,
    Form::Pdsh,
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
            while i < b.len() && b[i] == b'>' {
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
        Form::Torchrun => {
            let rest = line.strip_prefix("[default")?;
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            return (digits > 0 && rest[digits..].starts_with("]:"))
                .then_some("[default".len() + digits + 2);
        }
        Form::Timestamp => &RFC3339,
        Form::Pod => &POD,
        Form::Compose => &COMPOSE,
        Form::Ray => &RAY,
        Form::Mpirun => &MPIRUN,
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
        Form::Pod | Form::Mpirun => first == b'[',
        Form::Ray => first == b'(',
        Form::Compose => first.is_ascii_alphanumeric() && line.contains('|'),
        _ => true,
    };
    if !plausible {
        return None;
    }
    re.find(line).map(|m| m.end())
}

/// The key a prefix is counted under: the host (pdsh) or service (Compose) it names, so that a
/// prefix seen once is not a carrier's.
fn key(form: Form, line: &str) -> Option<String> {
    match form {
        Form::Pdsh => PDSH.captures(line).map(|c| c[1].to_string()),
        Form::Compose => COMPOSE.captures(line).map(|c| c[1].to_string()),
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
            // most lines: a number or a word before `: ` is also how other text begins
            Form::Srun => hits >= 2 && hits * 10 >= n * 6,
            Form::Pdsh => {
                // a few hosts, each on several lines, together on most of them
                let repeated: usize = keys.values().filter(|&&c| c >= 2).sum();
                keys.len() <= 64 && repeated >= 2 && repeated * 10 >= n * 6
            }
            Form::Compose => {
                let repeated: usize = keys.values().filter(|&&c| c >= 2).sum();
                repeated >= 2 && repeated * 10 >= n * 3
            }
            _ => hits >= 2,
        } || (n > 0 && hits == n && form != Form::Pdsh);
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

/// The text with the first `cut(line)` bytes of each line (without its `\n`) taken off, in
/// place: a large log is not copied into a second buffer. `cut` returns a length at a char
/// boundary of the line, at most its length.
fn cut_starts(text: String, cut: impl Fn(&str) -> usize) -> String {
    // where each cut is, found on the text before any byte moves
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for piece in text.split_inclusive('\n') {
        let line = piece.strip_suffix('\n').unwrap_or(piece);
        let k = cut(line).min(line.len());
        if k > 0 && line.is_char_boundary(k) {
            cuts.push((at, k));
        }
        at += piece.len();
    }
    if cuts.is_empty() {
        return text;
    }
    let mut bytes = text.into_bytes();
    let len = bytes.len();
    // move each stretch between two cuts down over the bytes cut before it
    let mut write = cuts[0].0;
    for (i, &(start, k)) in cuts.iter().enumerate() {
        let from = start + k;
        let to = cuts.get(i + 1).map_or(len, |c| c.0);
        bytes.copy_within(from..to, write);
        write += to - from;
    }
    bytes.truncate(write);
    // only whole leading chars were taken off each line: still UTF-8
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
        text = cut_starts(text, |line| {
            forms.iter().find_map(|&f| prefix(f, line)).unwrap_or(0)
        });
    }
    let indent = common_indent(&text);
    if indent > 0 {
        // every non-empty line has the indent; a blank one may be shorter
        text = cut_starts(text, |line| {
            if line.trim().is_empty() {
                line.len() - line.trim_start_matches([' ', '\t']).len()
            } else {
                indent
            }
        });
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> String {
        unwrap(s.to_string())
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
    fn each_carrier_is_taken_off() {
        let cases: [(&str, String); 10] = [
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
