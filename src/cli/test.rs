//! `gpufix test [FILE|DIR]`: run playbook tests written in YAML, so a site author can test a
//! rule without writing Rust.
//!
//! ```yaml
//! tests:
//!   - name: four workers on a 32-CPU host are too few
//!     snapshot: ../../tests/fixtures/hosts/h200-vm.snapshot.json  # relative to this file
//!     files: { /etc/site/thp.conf: "thp=never\n" }   # host files, over the snapshot
//!     config: { name: train.yaml, text: "data:\n  num_workers: 4\n" }  # or a path
//!     expect:
//!       data.workers-too-few: fail
//! ```
//!
//! Inputs besides `snapshot`/`files` (a text, or a list of successive readings)/`dirs`: `config`, `env_file`, `trace`, `nccl_log`,
//! `kernel_log` (each a path, or `{name, text}` written to a scratch file), `evidence` (a list
//! of those), `pid`, `sample` (the window for sampled probes, e.g. `5s`; default one reading),
//! `commands` (what a command prints: `{"getsebool x": {stdout: "...", exit_code: 0}}`),
//! `patch` (merged into the snapshot's JSON: objects key by key, `null` removing a key, lists
//! element by element, an element past the recorded ones starting as a copy of the last; see
//! `gpufix schema snapshot`), `values` (a values document inline) and `only` (rules to
//! evaluate; the default is the rules named in `expect`). Exit 0 when every expectation holds,
//! 1 otherwise.

use super::Global;
use crate::engine::evaluate::{Options, evaluate};
use crate::host::CommandOutput;
use crate::host::Host;
use crate::host::evidence::EvidenceHost;
use crate::host::recorded::{Snapshot, SnapshotHost};
use crate::playbook::{SourceFile, Tier, validate};
use crate::probes::Inputs;
use crate::session::ExitStatus;
use anyhow::{Context, bail};
use clap::Args;
use indexmap::IndexMap;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct TestArgs {
    /// A test file, or a directory of them (`*.yaml`, sorted) [default: playbooks/tests]
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub playbooks: super::PlaybookOpts,
    /// Probe deadline: a probe still running after this is `unknown`, and a test expecting
    /// `pass` or `fail` of its rules fails. Raise it where the tests run on a busy machine
    /// (a 35 MB trace in a debug build under load).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = super::parse_duration)]
    pub probe_timeout: std::time::Duration,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    tests: Vec<TestCase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestCase {
    name: String,
    #[serde(default)]
    snapshot: Option<PathBuf>,
    #[serde(default)]
    files: IndexMap<String, FileText>,
    #[serde(default)]
    dirs: IndexMap<String, Vec<String>>,
    #[serde(default)]
    config: Option<InputFile>,
    #[serde(default)]
    env_file: Option<InputFile>,
    #[serde(default)]
    trace: Option<InputFile>,
    #[serde(default)]
    nccl_log: Option<InputFile>,
    #[serde(default)]
    kernel_log: Option<InputFile>,
    #[serde(default)]
    evidence: Vec<InputFile>,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    sample: Option<String>,
    #[serde(default)]
    commands: IndexMap<String, CommandAnswer>,
    #[serde(default)]
    patch: Option<serde_json::Value>,
    #[serde(default)]
    values: Option<serde_yaml::Value>,
    #[serde(default)]
    only: Vec<String>,
    expect: IndexMap<String, String>,
}

/// A host file's text, or its successive readings (a sampled probe reads a file at the start
/// and at the end of its window: `/proc/diskstats: [before, after]`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum FileText {
    One(String),
    Readings(Vec<String>),
}

/// What a command prints when a probe runs it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandAnswer {
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    exit_code: i32,
}

/// An input file: a path (relative to the test file), or a name and its text.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum InputFile {
    Path(PathBuf),
    Inline { name: String, text: String },
}

const VERDICTS: &[&str] = &[
    "pass",
    "fail",
    "unknown",
    "blocked",
    "not-applicable",
    "waived",
];

pub fn run(g: &Global, a: &TestArgs) -> anyhow::Result<ExitStatus> {
    let path = a
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from("playbooks/tests"));
    let files = test_files(&path)?;
    let sources = match g.sources() {
        Ok(s) => s,
        Err(d) => return Ok(super::print_diagnostics(&d)),
    };
    let scratch = Scratch::new()?;
    let (mut passed, mut failed) = (0, 0);
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        let tf: TestFile = serde_yaml::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: not a test file: {e}\nhelp: a test file holds `tests:`, each with `name`, inputs and `expect:` (see `gpufix test --help`)",
                f.display()
            )
        })?;
        let base = f.parent().unwrap_or(Path::new("."));
        for case in &tf.tests {
            match run_case(case, base, &sources, &scratch, a.probe_timeout) {
                Ok(diffs) if diffs.is_empty() => {
                    passed += 1;
                    println!("ok    {}: {}", f.display(), case.name);
                }
                Ok(diffs) => {
                    failed += 1;
                    println!("FAIL  {}: {}", f.display(), case.name);
                    for d in diffs {
                        println!("      {d}");
                    }
                }
                Err(e) => {
                    failed += 1;
                    println!("ERROR {}: {}\n      {e:#}", f.display(), case.name);
                }
            }
        }
    }
    println!("\n{passed} passed, {failed} failed ({} files)", files.len());
    Ok(if failed == 0 {
        ExitStatus::Clean
    } else {
        ExitStatus::Error
    })
}

fn test_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).with_context(|| {
        format!(
            "cannot read tests at {}\nhelp: give a test file or a directory of them",
            path.display()
        )
    })?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    v.sort();
    if v.is_empty() {
        bail!(
            "no test files (*.yaml) in {}\nhelp: a test file holds `tests:` (see `gpufix test --help`)",
            path.display()
        );
    }
    Ok(v)
}

/// A private scratch directory for inline input files, removed at the end
/// ([`crate::tempfiles::PrivateDir`]: a random 0700 directory nobody else can plant in).
struct Scratch {
    dir: crate::tempfiles::PrivateDir,
    n: std::cell::Cell<usize>,
}

impl Scratch {
    fn new() -> anyhow::Result<Scratch> {
        let dir = crate::tempfiles::PrivateDir::new("test")
            .context("cannot create a private directory for inline inputs")?;
        Ok(Scratch {
            dir,
            n: std::cell::Cell::new(0),
        })
    }

    fn path_of(&self, f: &InputFile, base: &Path) -> anyhow::Result<PathBuf> {
        match f {
            InputFile::Path(p) => Ok(base.join(p)),
            InputFile::Inline { name, text } => {
                let name = Path::new(name)
                    .file_name()
                    .context("an inline input needs a file `name`")?;
                let sub = self.dir.path().join(self.n.get().to_string());
                self.n.set(self.n.get() + 1);
                std::fs::create_dir(&sub)?;
                let p = sub.join(name);
                std::fs::write(&p, text)?;
                Ok(p)
            }
        }
    }
}

/// Run one case; returns one line per expectation that does not hold.
fn run_case(
    case: &TestCase,
    base: &Path,
    sources: &[SourceFile],
    scratch: &Scratch,
    probe_deadline: std::time::Duration,
) -> anyhow::Result<Vec<String>> {
    for (rule, v) in &case.expect {
        if !VERDICTS.contains(&v.as_str()) {
            bail!(
                "`expect: {rule}: {v}` is not a verdict\nhelp: write one of {}",
                VERDICTS.join(", ")
            );
        }
    }
    let values = match &case.values {
        None => None,
        Some(v) => Some(SourceFile {
            name: format!("values of test `{}`", case.name),
            text: serde_yaml::to_string(v)?,
            tier: Tier::Cli,
        }),
    };
    let set = match validate::load(sources, values.as_ref()) {
        Ok(s) => s,
        Err(diags) => bail!(
            "playbooks or values do not validate:\n{}",
            diags
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    for rule in case.expect.keys() {
        if set.get(rule).is_none() {
            let hint =
                crate::vocab::did_you_mean(rule, set.rules.iter().map(|r| r.rule.id.as_str()))
                    .unwrap_or_else(|| "run `gpufix list` to see rule ids".into());
            bail!("`expect` names unknown rule `{rule}`\nhelp: {hint}");
        }
    }
    let mut snap = match &case.snapshot {
        Some(p) => Snapshot::load(&base.join(p))?,
        None => Snapshot::new("empty host of a playbook test"),
    };
    if let Some(patch) = &case.patch {
        let mut v = serde_json::to_value(&snap)?;
        merge(&mut v, patch);
        snap = serde_json::from_value(v).map_err(|e| {
            anyhow::anyhow!(
                "`patch` does not make a snapshot: {e}\nhelp: write it in the snapshot's JSON form (`gpufix schema snapshot`), e.g. `nvml: [{{ok: {{gpus: [{{persistence: {{ok: false}}}}]}}}}]`"
            )
        })?;
    }
    let mut host = SnapshotHost::from_snapshot(snap);
    for (cmd, a) in &case.commands {
        let argv: Vec<&str> = cmd.split_whitespace().collect();
        host.set_command(
            &argv,
            CommandOutput {
                status: Some(a.exit_code),
                stdout: a.stdout.clone(),
                stderr: a.stderr.clone(),
                timed_out: false,
            },
        );
    }
    for (p, text) in &case.files {
        match text {
            FileText::One(t) => host.set_file(p, t),
            FileText::Readings(ts) => host.set_file_sequence(p, ts),
        };
    }
    for (p, names) in &case.dirs {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        host.set_dir(p, &names);
    }
    let one = |f: &Option<InputFile>| -> anyhow::Result<Option<PathBuf>> {
        f.as_ref().map(|f| scratch.path_of(f, base)).transpose()
    };
    let inputs = Inputs {
        pid: case.pid,
        config: one(&case.config)?,
        env_file: one(&case.env_file)?,
        trace: one(&case.trace)?,
        nccl_log: one(&case.nccl_log)?,
        kernel_log: one(&case.kernel_log)?,
        evidence: case
            .evidence
            .iter()
            .map(|f| scratch.path_of(f, base))
            .collect::<anyhow::Result<_>>()?,
        deep: false,
    };
    let sample = match &case.sample {
        None => std::time::Duration::ZERO,
        Some(s) => super::parse_duration(s).map_err(|e| {
            anyhow::anyhow!("`sample: {s}`: {e}\nhelp: write a duration such as 5s")
        })?,
    };
    let opts = Options {
        sample,
        only: if case.only.is_empty() {
            case.expect.keys().cloned().collect()
        } else {
            case.only.clone()
        },
        probe_deadline,
        ..Options::default()
    };
    // Pasted nvidia-smi output, fstab or mount tables describe a host of their own: judge it,
    // as `gpufix plan --evidence` does.
    let host: Arc<dyn Host> = match EvidenceHost::from_files(&inputs.evidence)? {
        Some(h) => {
            if case.snapshot.is_some()
                || case.patch.is_some()
                || !case.files.is_empty()
                || !case.dirs.is_empty()
                || !case.commands.is_empty()
            {
                bail!(
                    "`evidence` with nvidia-smi output, fstab or mounts judges the host it describes; it cannot be combined with `snapshot`, `patch`, `files`, `dirs` or `commands`\nhelp: give the host either as evidence or as a snapshot"
                );
            }
            Arc::new(h)
        }
        None => Arc::new(host),
    };
    let report = evaluate(&set, host, Arc::new(inputs), &opts, |_| {});
    let mut diffs = Vec::new();
    for (rule, want) in &case.expect {
        let Some(r) = report.results.iter().find(|r| &r.id == rule) else {
            diffs.push(format!("{rule}: expected {want}, but it was not evaluated"));
            continue;
        };
        let got = r.verdict.as_str();
        if got != want {
            let why = r
                .reason
                .clone()
                .or_else(|| r.messages.first().cloned())
                .unwrap_or_default();
            diffs.push(format!(
                "{rule}: expected {want}, got {got}{}",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            ));
        }
    }
    Ok(diffs)
}

/// Merge `patch` into `base`: objects key by key (a `null` removes the key, as in a JSON merge
/// patch), lists element by element (an element past the end of `base`'s list starts as a
/// copy of its last element), anything else replaced.
fn merge(base: &mut serde_json::Value, patch: &serde_json::Value) {
    use serde_json::Value;
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    b.remove(k);
                    continue;
                }
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(p)) => {
            for (i, v) in p.iter().enumerate() {
                if i >= b.len() {
                    let start = b.last().cloned().unwrap_or(Value::Null);
                    b.push(start);
                }
                merge(&mut b[i], v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::merge;
    use serde_json::json;

    #[test]
    fn merge_keys_lists_and_new_elements() {
        let mut b = json!({"a": {"x": 1, "y": 2}, "l": [{"i": 0, "k": "v"}], "s": 1});
        merge(
            &mut b,
            &json!({"a": {"y": 3, "x": null}, "l": [{}, {"i": 1}], "s": "t"}),
        );
        assert_eq!(
            b,
            json!({"a": {"y": 3}, "l": [{"i": 0, "k": "v"}, {"i": 1, "k": "v"}], "s": "t"})
        );
    }
}
