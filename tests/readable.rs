//! Readable output (issue 27): what a person reads says each thing once and in their words.
//! Snapshots live in tests/snapshots/ (insta); refresh with INSTA_UPDATE=always and review.

use assert_cmd::Command;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn plan(args: &[&str]) -> (i32, String) {
    let o = Command::cargo_bin("gpufix")
        .unwrap()
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("LC_ALL", "C.UTF-8")
        .args(["--no-system", "plan"])
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// A public `nvidia-smi -q` paste cut inside its GPU's section: every rule that needs a field
/// after the cut is unknown, and the cut ("input ends early: …") is said in full once for the
/// input, then "as above" — not once per field on every line (it was 19 times, five on one line).
#[test]
fn a_cut_paste_says_where_it_ends_once() {
    let (code, out) = plan(&[
        "--evidence",
        "tests/fixtures/corpus/h4_smi_q_head_p100_persistence_off_cut.txt",
        "--sample",
        "0",
    ]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        out.matches("(input ends early: ").count(),
        1,
        "the cut is said in full once:\n{out}"
    );
    assert!(
        out.matches("(input ends early, as above)").count() >= 3,
        "{out}"
    );
    // fields missing for one reason are named together, the reason once per line
    for line in out.lines() {
        assert!(
            line.matches("input ends early").count() <= 1,
            "one line says it twice: {line}"
        );
    }
    insta::assert_snapshot!(out);
}

/// The readable-output items of the same issue done before, kept: one header naming every input,
/// "needs --pid" as not-applicable (not blocked), evidence lines without a serialised probe output.
#[test]
fn header_names_every_input_and_a_rule_needing_a_job_is_not_applicable() {
    let (_, out) = plan(&[
        "-v",
        "--snapshot",
        "tests/fixtures/pid/workers0.snapshot.json",
        "--pid",
        "647",
        "--evidence",
        "tests/fixtures/corpus/h3_log_colab_8_workers_2_cpus.txt",
        "--config",
        "docs/safety.in/train.yaml",
        "--only",
        "data",
    ]);
    let header: Vec<&str> = out.lines().take(2).collect();
    assert_eq!(
        header[0], "gpufix plan for snapshot workers0.snapshot.json",
        "{out}"
    );
    for input in [
        "--pid 647",
        "--evidence tests/fixtures/corpus/h3_log_colab_8_workers_2_cpus.txt",
        "--config docs/safety.in/train.yaml",
    ] {
        assert!(
            header[1].contains(input),
            "header lacks {input}: {header:?}"
        );
    }
    for line in out
        .lines()
        .filter(|l| l.trim_start().starts_with("evidence: "))
    {
        assert!(
            !line.contains("= {\""),
            "a serialised object in evidence: {line}"
        );
    }

    let (_, out) = plan(&[
        "-v",
        "--snapshot",
        "tests/fixtures/hosts/h200-vm.snapshot.json",
        "--sample",
        "0",
        "--only",
        "launch.cpu-bound-launch-thread",
    ]);
    let line = out
        .lines()
        .find(|l| l.contains("launch.cpu-bound-launch-thread"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.starts_with("  n/a     launch.cpu-bound-launch-thread needs --pid"),
        "{line}"
    );
    assert!(out.contains(", 0 blocked,"), "{out}");
}

/// Issue 27: the evidence a job's worker census is judged on (`plan --pid`, recorded process
/// trees) was one 533-column line of every value the threshold read. Each value is still shown,
/// named as the threshold reads it (`p.dataloader_workers`, the rule's `--format json` evidence
/// keys), on lines of at most 100 columns under the first value.
#[test]
fn a_jobs_evidence_fits_the_screen() {
    let args = [
        "--snapshot",
        "tests/fixtures/pid/workers0.snapshot.json",
        "--pid",
        "647",
        "--sample",
        "5s",
        "--only",
        "data.workers-too-few",
    ];
    let (code, out) = plan(&args);
    assert_eq!(code, 2, "{out}");
    let mut lines = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("evidence: "))
        .peekable();
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no evidence:\n{out}"));
    let evidence: Vec<&str> = std::iter::once(first)
        .chain(lines.take_while(|l| l.starts_with(&" ".repeat(22))))
        .collect();
    for l in &evidence {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
        assert!(!l.contains("= {\""), "a serialised object: {l}");
    }
    assert!((2..=9).contains(&evidence.len()), "{evidence:#?}");
    // every value the threshold read, as --format json names it
    let (_, json) = plan(&[&args[..], &["--format", "json"][..]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let read = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "data.workers-too-few")
        .unwrap()["evidence"]
        .as_object()
        .unwrap()
        .clone();
    let text = evidence.join(" ");
    assert!(read.len() >= 20, "{read:?}");
    for (k, val) in &read {
        if !(val.is_object() || val.is_array()) {
            assert!(text.contains(&format!("{k} = ")), "{k} not shown:\n{text}");
        }
    }
    // what is shown, a value a line (where the lines wrap depends on the census's means,
    // which depend on the samples the replay reached in the window: the render unit tests
    // snapshot the wrapping)
    let items: Vec<&str> = text
        .trim_start()
        .trim_start_matches("evidence: ")
        .split(", ")
        .map(str::trim)
        .collect();
    insta::with_settings!({filters => vec![
        (r"p\.gpu_util = [0-9.]+", "p.gpu_util = [mean]"),
        (r"p\.main_thread_cpu_pct = [0-9.]+", "p.main_thread_cpu_pct = [mean]"),
    ]}, {
        insta::assert_snapshot!(items.join("\n"));
    });
}
