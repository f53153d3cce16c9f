//! What gpufix keeps of a job's secrets when it records or shows anything: one filter that every
//! writer and printer goes through — `snapshot -o`, the report in every format (text, json,
//! junit, prometheus, nagios, slurm), `plan -o`, what `apply`, `rollback` and `history` print,
//! and so what the Ansible module returns.
//!
//! gpufix reads a job's environment (`/proc/PID/environ`), its env files and launch scripts, and
//! those hold tokens and cloud keys next to the settings the playbooks are about. Three rules:
//! - **An environment** (a map of variables: the job's `environ`, `env.vars`, a snapshot's own
//!   environment) keeps the values of the variables the playbooks are about — the prefixes in
//!   [`ENV_ALLOW`] and the names in [`ENV_ALLOW_NAMES`] — and shows every other value as
//!   [`REDACTED`] (a snapshot of gpufix's own environment leaves the others out).
//! - **A name that marks a secret** (`TOKEN`, `SECRET`, `PASSWORD`, `KEY`, `CREDENTIAL`, …, see
//!   [`looks_secret`]) has its value redacted wherever it is assigned: an environment entry, an
//!   env-file or shell line `NAME=value`, a YAML/TOML key `name: value`, a `--api-key V` flag —
//!   even when the prefix is allowed (`NCCL_IB_AUTH_TOKEN`).
//! - **A value shaped like a credential** is redacted wherever it appears: AWS key ids
//!   (`AKIA…`), GitHub (`ghp_…`, `github_pat_…`), Hugging Face (`hf_…`), OpenAI (`sk-…`), Slack,
//!   GitLab and Google API keys, JWTs, private-key blocks, the password of a URL
//!   (`https://user:pass@host`), and — as the value of an assignment — a long run of base64/hex.
//!
//! An env file's text shown in a diff (`before_text`, `after_text`, `diff` of an `env.*`
//! change) is an environment too: every line but the variable the change names is filtered as
//! one. What is *not* filtered, on purpose: the journal's saved prior state (rollback restores
//! those bytes exactly; it lives in the 0700 state directory, 0600 files, and is never printed
//! whole), and the files a fix writes. Files gpufix writes that can carry host data are 0600;
//! the Prometheus textfile (rule ids, verdicts and counts only) is 0644 for the collector.

use regex::Regex;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Prefixes of the environment variables whose values are kept.
pub const ENV_ALLOW: &[&str] = &[
    "CUDA_", "NCCL_", "PYTORCH_", "TORCH_", "OMP_", "MKL_", "NVIDIA_", "CUDNN_", "CUBLAS_", "NV_",
    "TF_", "XLA_", "HIP_", "GPU_", "KMP_", "MALLOC_", "SLURM_", "UCX_",
];

/// Whole names whose values are kept: where the job's Python and libraries come from and how
/// a distributed job is laid out (probes read these).
pub const ENV_ALLOW_NAMES: &[&str] = &[
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
];

/// Parts of a name that mark its value secret, anywhere in the name.
const SECRET_MARKS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE",
    "CREDENTIAL",
    "COOKIE",
    "SESSION",
];

/// Words of a name (split at `_`, `-`, `.`) that mark its value secret.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "KEYS",
    "AUTH",
    "PASS",
    "PWD_HASH",
    "DSN",
    "SIGNATURE",
];

/// Shown instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// Whether a name says its value is a secret (`HF_TOKEN`, `WANDB_API_KEY`, `db.password`, …).
pub fn looks_secret(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    // `key` alone names a config key (a fix's `key=data.num_workers`), not a secret; `A_KEY`,
    // `ssh.key` do
    if up == "KEY" || up == "KEYS" {
        return false;
    }
    SECRET_MARKS.iter().any(|m| up.contains(m))
        || up.split(['_', '-', '.']).any(|w| SECRET_WORDS.contains(&w))
}

/// Whether a variable is one the playbooks are about (its value is kept unless it looks secret).
pub fn env_allowed(name: &str) -> bool {
    ENV_ALLOW.iter().any(|p| name.starts_with(p)) || ENV_ALLOW_NAMES.contains(&name)
}

/// Credentials recognisable by their shape alone, wherever they appear.
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{20,}",
        r"|\bhf_[A-Za-z0-9]{20,}",
        r"|\bsk-[A-Za-z0-9_-]{20,}",
        r"|\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"|\bglpat-[A-Za-z0-9_-]{20,}",
        r"|\bAIza[0-9A-Za-z_-]{35}",
        r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----",
    ))
    .expect("the token patterns compile")
});

/// The password of a URL: `scheme://user:PASSWORD@host`.
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<pre>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)(?P<pw>[^/\s@]+)(?P<at>@)")
        .expect("the URL pattern compiles")
});

/// One assignment on a line: `NAME=value`, `export NAME=value`, `Environment=NAME=value`,
/// `name: value`, `"name": "value"`, with a diff's leading ` `/`+`/`-`.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"^(?P<pre>[ \t+\-]*(?:export[ \t]+|declare[ \t]+-x[ \t]+|Environment=)?["']?)"#,
        r#"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)"#,
        r#"(?P<mid>["']?[ \t]*(?:=|:[ \t])[ \t]*)(?P<val>.*?)(?P<end>,?[ \t]*)$"#,
    ))
    .expect("the assignment pattern compiles")
});

/// A flag that takes a secret: `--api-key V`, `--hf_token=V`.
static SECRET_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?P<flag>--?[a-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key|credential)[a-z0-9_-]*)(?P<sep>=|[ \t]+)(?P<val>[^\s'\x22]+)")
        .expect("the flag pattern compiles")
});

/// A pair inside a line: `"name": "value"` (JSON), `'name': 'value'` (a rendered Python or
/// minijinja map), `NAME=value` (a shell word, a flag).
static INLINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#""(?P<n1>[A-Za-z_][A-Za-z0-9_.-]*)"[ \t]*:[ \t]*"(?P<v1>(?:[^"\\]|\\.)*)""#,
        r#"|'(?P<n2>[A-Za-z_][A-Za-z0-9_.-]*)'[ \t]*:[ \t]*'(?P<v2>[^']*)'"#,
        r#"|\b(?P<n3>[A-Za-z_][A-Za-z0-9_]*)=(?P<v3>[^\s'",;]+)"#,
    ))
    .expect("the pair pattern compiles")
});

/// Whether a value alone looks like a credential: a known token shape, a URL with a password,
/// or one long run (32 or more) of base64/hex characters with letters and digits (GPU and MIG
/// UUIDs, which look alike, are not secrets).
pub fn secret_value(value: &str) -> bool {
    let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
    TOKENS.is_match(v) || URL_PASSWORD.is_match(v) || long_token(v)
}

/// One long run (32 or more) of base64/hex characters with letters and digits: a key or a
/// token as the value of an assignment. Not a path (`/sys/…/cpu0/…`), not an identifier of
/// words (`scaling_governor_cpu0_…`: with `_` or `-`, a token has upper and lower case and
/// digits), and not a GPU or MIG UUID, which look alike and are not secrets.
fn long_token(v: &str) -> bool {
    let has = |f: fn(&u8) -> bool| v.as_bytes().iter().any(f);
    let (upper, lower, digit) = (
        has(u8::is_ascii_uppercase),
        has(u8::is_ascii_lowercase),
        has(u8::is_ascii_digit),
    );
    v.len() >= 32
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-'))
        && !v.starts_with('/')
        && digit
        && (upper || lower)
        && (!(v.contains('_') || v.contains('-')) || (upper && lower))
        && !v.starts_with("GPU-")
        && !v.starts_with("MIG-")
        && !is_uuid(v)
}

fn is_uuid(v: &str) -> bool {
    let parts: Vec<&str> = v.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether an environment entry's value is shown as it is.
pub fn env_keeps(name: &str, value: &str) -> bool {
    env_allowed(name) && !looks_secret(name) && !secret_value(value)
}

/// An environment entry's value as shown: itself, or [`REDACTED`].
pub fn env_value<'a>(name: &str, value: &'a str) -> Cow<'a, str> {
    if value.is_empty() || value == REDACTED || env_keeps(name, value) {
        Cow::Borrowed(value)
    } else {
        Cow::Borrowed(REDACTED)
    }
}

/// Keep the allowed variables, redact secret-looking values; returns (kept, dropped, redacted).
/// For a snapshot of gpufix's own environment, where the others are left out.
pub fn filter_env(env: &mut BTreeMap<String, String>) -> (usize, usize, usize) {
    let before = env.len();
    env.retain(|k, _| env_allowed(k));
    let mut redacted = 0;
    for (k, v) in env.iter_mut() {
        if !env_keeps(k, v) {
            *v = REDACTED.to_string();
            redacted += 1;
        }
    }
    (env.len(), before - env.len(), redacted)
}

/// A `/proc/PID/environ` (NUL-separated `NAME=value`) with every value filtered as an
/// environment's; names are kept, so a replayed snapshot sees the same variables set.
pub fn redact_environ(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    for (i, entry) in raw.split(|&b| b == 0).enumerate() {
        if i > 0 {
            out.push(0);
        }
        let text = String::from_utf8_lossy(entry);
        match text.split_once('=') {
            Some((k, v)) => {
                out.extend_from_slice(k.as_bytes());
                out.push(b'=');
                out.extend_from_slice(env_value(k, v).as_bytes());
            }
            None => out.extend_from_slice(redact_text(&text).as_bytes()),
        }
    }
    out
}

/// A `/proc/PID/cmdline` (NUL-separated arguments): credential-shaped arguments and the value
/// of a secret flag (`--hf-token V`, `--api-key=V`) redacted.
pub fn redact_cmdline(raw: &[u8]) -> Vec<u8> {
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut out: Vec<String> = Vec::with_capacity(args.len());
    let mut next_secret = false;
    for a in &args {
        if next_secret && !a.starts_with('-') && !a.is_empty() {
            out.push(REDACTED.to_string());
            next_secret = false;
            continue;
        }
        next_secret = false;
        let flag_name = a.trim_start_matches('-');
        if a.starts_with('-') && !a.contains('=') && looks_secret(flag_name) {
            next_secret = true;
            out.push(a.clone());
            continue;
        }
        if a.starts_with('-')
            && let Some((f, v)) = a.split_once('=')
            && looks_secret(f.trim_start_matches('-'))
            && !v.is_empty()
        {
            out.push(format!("{f}={REDACTED}"));
            continue;
        }
        out.push(redact_text(a).into_owned());
    }
    out.join("\0").into_bytes()
}

/// Free text (a diff, a file's text, a message, a log): per line, the value of an assignment
/// whose name looks secret (or whose value does), the value of a secret flag, credential-shaped
/// tokens and URL passwords redacted. Text without any of them is returned as it is.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    redact_lines(text, None)
}

/// An env file's text (or a diff of one): every assignment but `keep` filtered as an
/// environment entry is (allow-list, secret names, secret shapes), the rest as [`redact_text`].
pub fn redact_env_text<'a>(text: &'a str, keep: &str) -> Cow<'a, str> {
    redact_lines(text, Some(keep))
}

fn redact_lines<'a>(text: &'a str, env_keep: Option<&str>) -> Cow<'a, str> {
    let mut out = String::new();
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let shown = redact_line(body, env_keep);
        if let Cow::Owned(_) = shown {
            changed = true;
        }
        out.push_str(&shown);
        out.push_str(nl);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

fn redact_line<'a>(line: &'a str, env_keep: Option<&str>) -> Cow<'a, str> {
    let mut line: Cow<'a, str> = Cow::Borrowed(line);
    let assigned = ASSIGNMENT.captures(&line).and_then(|c| {
        let (name, val) = (&c["name"], &c["val"]);
        let bare = val.trim_matches(|ch| ch == '"' || ch == '\'');
        let redact = !bare.is_empty()
            && bare != REDACTED
            && match env_keep {
                // an env file: its lines are an environment, but for the one the change names
                Some(keep) if name != keep && !name.contains('.') => !env_keeps(name, bare),
                // credential-shaped tokens inside the value are redacted in place below
                _ => looks_secret(name) || long_token(bare),
            };
        redact.then(|| {
            let quote = if val.starts_with('"') {
                "\""
            } else if val.starts_with('\'') {
                "'"
            } else {
                ""
            };
            format!(
                "{}{}{}{quote}{REDACTED}{quote}{}",
                &c["pre"], name, &c["mid"], &c["end"]
            )
        })
    });
    if let Some(t) = assigned {
        line = Cow::Owned(t);
    }
    if INLINE.is_match(&line) {
        let replaced = INLINE
            .replace_all(&line, |c: &regex::Captures| {
                let whole = c.get(0).expect("a match");
                let (name, value) = [("n1", "v1"), ("n2", "v2"), ("n3", "v3")]
                    .iter()
                    .find_map(|(n, v)| Some((c.name(n)?, c.name(v)?)))
                    .expect("one alternative matched");
                let v = value.as_str();
                if v.is_empty() || v == REDACTED || !(looks_secret(name.as_str()) || long_token(v))
                {
                    return whole.as_str().to_string();
                }
                let (s, e) = (value.start() - whole.start(), value.end() - whole.start());
                format!("{}{REDACTED}{}", &whole.as_str()[..s], &whole.as_str()[e..])
            })
            .into_owned();
        if replaced != *line {
            line = Cow::Owned(replaced);
        }
    }
    if SECRET_FLAG.is_match(&line) {
        let replaced = SECRET_FLAG
            .replace_all(&line, |c: &regex::Captures| {
                if &c["val"] == REDACTED {
                    c[0].to_string()
                } else {
                    format!("{}{}{REDACTED}", &c["flag"], &c["sep"])
                }
            })
            .into_owned();
        line = Cow::Owned(replaced);
    }
    if TOKENS.is_match(&line) {
        line = Cow::Owned(TOKENS.replace_all(&line, REDACTED).into_owned());
    }
    if URL_PASSWORD.is_match(&line) {
        line = Cow::Owned(
            URL_PASSWORD
                .replace_all(&line, |c: &regex::Captures| {
                    if &c["pw"] == REDACTED {
                        c[0].to_string()
                    } else {
                        format!("{}{REDACTED}{}", &c["pre"], &c["at"])
                    }
                })
                .into_owned(),
        );
    }
    line
}

/// Whether an object key names an environment (its entries are variables).
fn is_env_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    matches!(last, "environ" | "vars" | "env" | "environment")
}

/// `NAME`, `CUDA_VISIBLE_DEVICES`: how an environment variable is spelled.
fn is_env_name(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A copy of a JSON value (a report, a plan, a journal's changes) with every secret filtered:
/// environments by [`env_value`], `env.*` changes' texts by [`redact_env_text`], values under
/// secret-looking keys redacted, every other string by [`redact_text`].
pub fn redact_json(value: &Value) -> Value {
    walk(value, false)
}

fn walk(value: &Value, env_map: bool) -> Value {
    match value {
        Value::String(s) => Value::String(redact_text(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(|v| walk(v, false)).collect()),
        Value::Object(o) => {
            let env_change = o
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.starts_with("env."));
            let keep = o
                .get("action")
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut out = Map::with_capacity(o.len());
            for (k, v) in o {
                let shown = match v {
                    Value::String(s) if env_map && is_env_name(k) => {
                        Value::String(env_value(k, s).into_owned())
                    }
                    Value::String(s)
                        if env_change
                            && matches!(k.as_str(), "diff" | "before_text" | "after_text") =>
                    {
                        Value::String(redact_env_text(s, keep).into_owned())
                    }
                    Value::String(s) if !s.is_empty() && s != REDACTED && looks_secret(k) => {
                        Value::String(REDACTED.to_string())
                    }
                    // an evidence entry `env.vars.NAME`: the variable NAME of an environment
                    Value::String(s) if k.rsplit_once('.').is_some_and(|(p, _)| is_env_key(p)) => {
                        let name = k.rsplit('.').next().unwrap_or(k);
                        Value::String(env_value(name, s).into_owned())
                    }
                    Value::Object(_) if is_env_key(k) => walk(v, true),
                    _ => walk(v, false),
                };
                out.insert(k.clone(), shown);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A copy of a serializable value (a report, a plan file) with [`redact_json`] applied; the
/// value itself when it does not round-trip.
pub fn redacted<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(value: &T) -> T {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(redact_json(&v)).ok())
        .unwrap_or_else(|| value.clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fix_key_is_not_a_secret_but_a_named_key_is() {
        assert!(!super::looks_secret("key"));
        assert!(!super::looks_secret("keys"));
        assert!(super::looks_secret("A_KEY"));
        assert!(super::looks_secret("ssh.key"));
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_allow_list_and_redacts_secrets() {
        let mut env: BTreeMap<String, String> = [
            ("CUDA_VISIBLE_DEVICES", "0"),
            ("HF_TOKEN", "hf_x"),
            ("AWS_SECRET_ACCESS_KEY", "k"),
            ("NCCL_IB_AUTH_TOKEN", "t"),
            ("HOME", "/root"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(filter_env(&mut env), (2, 3, 1));
        assert_eq!(env["CUDA_VISIBLE_DEVICES"], "0");
        assert_eq!(env["NCCL_IB_AUTH_TOKEN"], REDACTED);
    }

    #[test]
    fn secret_shapes_are_found_and_uuids_are_not() {
        for s in [
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_0123456789abcdefABCDEF0123456789abcd",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "https://bob:hunter2@example.com/repo.git",
            "0123456789abcdef0123456789abcdef01234567",
        ] {
            assert!(secret_value(s), "{s}");
        }
        for s in [
            "GPU-5f3a9c1e-0b7d-4e2a-9c3f-1a2b3c4d5e6f",
            "5f3a9c1e-0b7d-4e2a-9c3f-1a2b3c4d5e6f",
            "expandable_segments:True",
            "/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "scaling_governor_cpu0_frequency_limit_max",
            "https://example.com/repo.git",
            "1",
        ] {
            assert!(!secret_value(s), "{s}");
        }
    }

    #[test]
    fn text_keeps_settings_and_redacts_secrets() {
        let text = "export NCCL_DEBUG=INFO\nHF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345\n  api_key: \"abc\"\nurl: https://u:pw@host/x\npython train.py --hf_token XYZ --lr 1\n";
        let out = redact_text(text);
        assert_eq!(
            out,
            "export NCCL_DEBUG=INFO\nHF_TOKEN=<redacted>\n  api_key: \"<redacted>\"\nurl: https://u:<redacted>@host/x\npython train.py --hf_token <redacted> --lr 1\n"
        );
        assert_eq!(
            redact_text(
                "the job runs with {'HF_TOKEN': 'x1', 'OMP_NUM_THREADS': '8'}; A_KEY=abc B=2"
            ),
            "the job runs with {'HF_TOKEN': '<redacted>', 'OMP_NUM_THREADS': '8'}; A_KEY=<redacted> B=2"
        );
        // idempotent: a redacted text stays as it is
        assert_eq!(redact_text(&out), out);
        assert!(matches!(redact_text("a: 1\nb=2\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn an_env_file_diff_keeps_only_allowed_values_and_the_named_one() {
        let diff = "--- a/job.env\n+++ b/job.env\n@@ -1,3 +1,2 @@\n-CUDA_LAUNCH_BLOCKING=1\n OMP_NUM_THREADS=4\n DATA_DIR=/home/bob/data\n WANDB_API_KEY=0123456789abcdef\n";
        let out = redact_env_text(diff, "CUDA_LAUNCH_BLOCKING");
        assert_eq!(
            out,
            "--- a/job.env\n+++ b/job.env\n@@ -1,3 +1,2 @@\n-CUDA_LAUNCH_BLOCKING=1\n OMP_NUM_THREADS=4\n DATA_DIR=<redacted>\n WANDB_API_KEY=<redacted>\n"
        );
    }

    #[test]
    fn environ_and_cmdline_keep_names_and_settings() {
        let env = redact_environ(b"CUDA_VISIBLE_DEVICES=0\0HF_TOKEN=hf_x\0HOME=/home/bob\0");
        assert_eq!(
            env,
            b"CUDA_VISIBLE_DEVICES=0\0HF_TOKEN=<redacted>\0HOME=<redacted>\0"
        );
        let cmd = redact_cmdline(b"python\0train.py\0--api-key\0s3cr3t\0--token=abc\0--lr\x000.1");
        assert_eq!(
            String::from_utf8(cmd).unwrap(),
            "python\0train.py\0--api-key\0<redacted>\0--token=<redacted>\0--lr\x000.1"
        );
    }

    #[test]
    fn a_report_is_filtered_everywhere() {
        let report = json!({
            "results": [{
                "evidence": {
                    "env.vars.CUDA_LAUNCH_BLOCKING": "1",
                    "env.vars.HOME": "/home/bob",
                    "p.environ": {"NCCL_DEBUG": "INFO", "AWS_SECRET_ACCESS_KEY": "x"}
                },
                "messages": ["token hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 seen"]
            }],
            "changes": [{
                "kind": "env.unset",
                "action": {"name": "CUDA_LAUNCH_BLOCKING"},
                "before_text": "CUDA_LAUNCH_BLOCKING=1\nSECRET_THING=v\n",
                "fingerprint": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
            }]
        });
        let out = redact_json(&report);
        let ev = &out["results"][0]["evidence"];
        assert_eq!(ev["env.vars.CUDA_LAUNCH_BLOCKING"], "1");
        assert_eq!(ev["env.vars.HOME"], REDACTED);
        assert_eq!(ev["p.environ"]["NCCL_DEBUG"], "INFO");
        assert_eq!(ev["p.environ"]["AWS_SECRET_ACCESS_KEY"], REDACTED);
        assert_eq!(out["results"][0]["messages"][0], "token <redacted> seen");
        assert_eq!(
            out["changes"][0]["before_text"],
            "CUDA_LAUNCH_BLOCKING=1\nSECRET_THING=<redacted>\n"
        );
        assert_eq!(
            out["changes"][0]["fingerprint"],
            report["changes"][0]["fingerprint"]
        );
        assert_eq!(redact_json(&out), out, "idempotent");
    }
}
