//! `gpufix report`: the page drawn from the synthetic recordings in tests/fixtures/runs/
//! (made by tests/support/synthetic_runs.rs; none of them was recorded on a machine). What a
//! browser makes of the page is tests/report_browser.sh's part.

use assert_cmd::Command;
use gpufix::render::html;
use gpufix::vocab::record::RecordFile;
use std::path::{Path, PathBuf};

#[path = "support/synthetic_runs.rs"]
mod synthetic_runs;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn runs_dir() -> PathBuf {
    repo().join("tests/fixtures/runs")
}

fn gpufix() -> Command {
    let mut c = Command::cargo_bin("gpufix").unwrap();
    c.current_dir(repo()).env("NO_COLOR", "1");
    c
}

fn render(runs: &[(&str, &RecordFile)]) -> String {
    html::render(runs)
}

/// The text of `attr="…"` on the element whose start tag contains `marker`.
fn attr(page: &str, marker: &str, attr: &str) -> Option<String> {
    let at = page.find(marker)?;
    let tag_start = page[..at].rfind('<')?;
    let tag_end = at + page[at..].find('>')?;
    let tag = &page[tag_start..tag_end];
    let key = format!("{attr}=\"");
    let v = tag.find(&key)? + key.len();
    Some(tag[v..v + tag[v..].find('"')?].to_string())
}

/// The run data the page's script reads, parsed back.
fn run_data(page: &str, run: usize) -> serde_json::Value {
    let open = format!("class=\"run-data\" data-run=\"{run}\">");
    let start = page.find(&open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn synthetic_fixtures_are_current() {
    let regenerate = std::env::var_os("GPUFIX_REGENERATE_RUNS").is_some();
    for (name, rec) in synthetic_runs::all() {
        let path = runs_dir().join(name);
        let text = serde_json::to_string(&rec).unwrap() + "\n";
        if regenerate {
            std::fs::create_dir_all(runs_dir()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == text,
            "{} is not what tests/support/synthetic_runs.rs makes; regenerate it with \
             `GPUFIX_REGENERATE_RUNS=1 cargo test --test report synthetic_fixtures_are_current`",
            path.display()
        );
        // and it reads back through the checks `gpufix report` makes
        html::parse_record(&on_disk).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The lanes the data calls for, worked out from the recording itself (not from the renderer).
fn expected_lanes(r: &RecordFile) -> Vec<&'static str> {
    let mut l = Vec::new();
    if r.gpus.iter().any(|g| g.utilization_gpu.is_some()) {
        l.push("gpu-util");
    }
    if r.gpus.iter().any(|g| g.memory_used_mib.is_some()) {
        l.push("gpu-memory");
    }
    if r.gpus
        .iter()
        .any(|g| g.pcie_rx_mb_s.is_some() || g.pcie_tx_mb_s.is_some())
    {
        l.push("pcie");
    }
    if r.gpus.iter().any(|g| g.power_w.is_some()) {
        l.push("gpu-power");
    }
    if r.gpus.iter().any(|g| g.clock_sm_mhz.is_some()) {
        l.push("gpu-clock");
    }
    if r.gpus.iter().any(|g| g.throttle_reasons.is_some()) {
        l.push("throttle");
    }
    // a lane of readings that all failed (null throughout) is left out with a note
    if r.processes
        .iter()
        .any(|p| p.cpu_percent.iter().any(Option::is_some))
    {
        l.push("cpu");
    }
    if r.main_thread.is_some() {
        l.push("thread");
    }
    if r.progress.is_some() {
        l.push("progress");
    }
    if r.node.as_ref().is_some_and(|n| {
        n.cpu_busy_percent.is_some()
            || n.cpu_pressure_percent.is_some()
            || n.io_pressure_percent.is_some()
    }) {
        l.push("node");
    }
    l
}

#[test]
fn every_lane_is_drawn_for_the_data_present_and_absent_ones_are_noted() {
    for (name, rec) in synthetic_runs::all() {
        let page = render(&[(name, &rec)]);
        let want = expected_lanes(&rec);
        let lanes = attr(&page, "class=\"timeline\"", "data-lanes").unwrap();
        assert_eq!(lanes.split(',').collect::<Vec<_>>(), want, "{name}");
        for id in &want {
            let points: usize = attr(&page, &format!("data-lane=\"{id}\""), "data-points")
                .unwrap()
                .parse()
                .unwrap();
            assert!(points > 0, "{name}: lane {id} has no data");
        }
        // and the script gets the same lanes, each series as long as its time axis
        let data = run_data(&page, 0);
        let ids: Vec<&str> = data["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, want, "{name}");
        for l in data["lanes"].as_array().unwrap() {
            for s in l["series"].as_array().unwrap() {
                let t = &data["times"][s["t"].as_u64().unwrap() as usize];
                assert_eq!(
                    s["v"].as_array().unwrap().len(),
                    t.as_array().unwrap().len()
                );
            }
        }
    }
    // absent PCIe, no job: those lanes are left out with a note saying why, not drawn as zero
    let rec = synthetic_runs::no_pcie();
    let page = render(&[("synthetic-no-pcie.json", &rec)]);
    assert!(!page.contains("data-lane=\"pcie\""));
    assert!(page.contains(
        "PCIe throughput: not supported by any GPU of this recording (absent, not zero)"
    ));
    assert!(page.contains("Main thread: not sampled"));
    assert!(page.contains("Progress: not recorded"));
    assert!(page.contains("Not available: the main thread was not sampled."));
}

/// Every run in tests/fixtures/runs/ — the synthetic ones and those `gpufix record` wrote on the
/// H200 — reads, and its page draws a lane with data for each kind of data it holds.
#[test]
fn every_fixture_run_renders() {
    let mut n = 0;
    for entry in std::fs::read_dir(runs_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let rec = html::parse_record(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let page = render(&[("run.json", &rec)]);
        let lanes = attr(&page, "class=\"timeline\"", "data-lanes").unwrap();
        assert_eq!(
            lanes
                .split(',')
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>(),
            expected_lanes(&rec),
            "{}",
            path.display()
        );
        for id in expected_lanes(&rec) {
            let points: usize = attr(&page, &format!("data-lane=\"{id}\""), "data-points")
                .unwrap()
                .parse()
                .unwrap();
            assert!(points > 0, "{}: lane {id} has no data", path.display());
        }
        n += 1;
    }
    assert!(n >= 5, "{n} runs in tests/fixtures/runs");
}

#[test]
fn a_null_reading_is_a_gap_not_a_zero() {
    let rec = synthetic_runs::starved();
    let page = render(&[("s", &rec)]);
    let data = run_data(&page, 0);
    let util = &data["lanes"][0];
    assert_eq!(util["id"], "gpu-util");
    assert!(util["series"][0]["v"][17].is_null());
    assert!(util["series"][0]["v"][18].is_number());
    // the failed py-spy dump is counted apart from the breakdown
    assert_eq!(
        attr(&page, "class=\"breakdown\"", "data-failed").as_deref(),
        Some("1")
    );
    assert_eq!(
        attr(&page, "class=\"breakdown\"", "data-samples").as_deref(),
        Some("299")
    );
}

#[test]
fn each_findings_band_is_its_window() {
    for (name, rec) in synthetic_runs::all() {
        let page = render(&[(name, &rec)]);
        let data = run_data(&page, 0);
        let bands = data["bands"].as_array().unwrap();
        assert_eq!(bands.len(), rec.findings.len(), "{name}");
        let duration = data["duration"].as_f64().unwrap();
        for (b, f) in bands.iter().zip(&rec.findings) {
            let (from, to) = (b["from"].as_f64().unwrap(), b["to"].as_f64().unwrap());
            assert_eq!([from, to], f.window, "{name}: {}", f.rule);
            assert!(
                0.0 <= from && from <= to && to <= duration,
                "{name}: {}",
                f.rule
            );
        }
        for f in &rec.findings {
            // the findings panel shows the same window
            assert!(page.contains(&format!(
                "data-from=\"{}\" data-to=\"{}\"",
                f.window[0], f.window[1]
            )));
        }
    }
}

#[test]
fn the_step_breakdown_counts_the_main_threads_samples() {
    let rec = synthetic_runs::starved();
    let m = rec.main_thread.as_ref().unwrap();
    let ok: Vec<_> = m.state.iter().flatten().collect();
    let waits = ok
        .iter()
        .filter(|s| ***s == gpufix::vocab::record::ThreadState::DataWait)
        .count();
    let page = render(&[("s", &rec)]);
    let share: f64 = attr(&page, "data-state=\"data_wait\"", "data-share")
        .unwrap()
        .parse()
        .unwrap();
    assert!((share - waits as f64 / ok.len() as f64).abs() < 1e-4);
    assert!(
        share > 0.6,
        "the starved shape waits most of the time: {share}"
    );
}

#[test]
fn hostile_strings_stay_text() {
    let rec = synthetic_runs::hostile();
    let page = render(&[("<x>.json", &rec)]);
    // exactly our three script elements: uPlot, ours, and the data
    assert_eq!(page.matches("<script").count(), 3, "{page}");
    assert_eq!(page.matches("</script>").count(), 3);
    for bad in [
        "<script>alert",
        "<svg onload",
        "<img src=x",
        "<b>bob",
        "<!-- note",
        "</pre><script>",
        "<x>.json",
    ] {
        assert!(!page.contains(bad), "{bad} reached the page unescaped");
    }
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    // control characters are shown, not sent to the browser; U+2028/2029 never raw
    assert!(page.contains("\\x1b[2J"));
    assert!(!page.contains('\u{2028}') && !page.contains('\u{2029}'));
    // the JSON still carries the text exactly (escaped, parsed back)
    let data = run_data(&page, 0);
    assert_eq!(
        data["bands"][0]["rule"],
        "launch.gpu-underutilized</script><script>alert(5)</script>"
    );
    assert_eq!(
        data["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"] == "cpu")
            .unwrap()["series"][0]["label"],
        "7 <img src=x onerror=alert(2)> (main)"
    );
}

#[test]
fn secrets_in_a_recording_are_redacted() {
    let mut rec = synthetic_runs::no_pcie();
    rec.job = Some(gpufix::vocab::record::RecordJob {
        pid: 1,
        command: "python train.py --hf-token hf_abcdefghijklmnopqrstuvwxyz0123456789".into(),
        user: None,
        config: None,
    });
    let text = serde_json::to_string(&rec).unwrap();
    let rec = html::parse_record(&text).unwrap();
    let page = render(&[("r", &rec)]);
    assert!(!page.contains("hf_abcdefghijklmnopqrstuvwxyz0123456789"));
}

#[test]
fn compare_shows_the_figures_and_which_findings_went_away() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp.html");
    let before = runs_dir().join("synthetic-starved.json");
    let after = runs_dir().join("synthetic-healthy.json");
    let o = gpufix()
        .arg("report")
        .arg(&before)
        .arg("--compare")
        .arg(&after)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let page = std::fs::read_to_string(&out).unwrap();
    // the figures, worked out here from the files
    let read = |p: &Path| -> RecordFile {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (a, b) = (read(&before), read(&after));
    let mean_util = |r: &RecordFile| {
        let v: Vec<f64> = r
            .gpus
            .iter()
            .flat_map(|g| g.utilization_gpu.iter().flatten().flatten().copied())
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let row = |metric: &str| -> Vec<String> {
        let at = page.find(&format!("data-metric=\"{metric}\"")).unwrap();
        let end = at + page[at..].find("</tr>").unwrap();
        page[at..end]
            .split("<td>")
            .skip(1)
            .map(|c| c.split("</td>").next().unwrap().to_string())
            .collect()
    };
    let util = row("util_mean");
    assert_eq!(util[0], format!("{:.1}", mean_util(&a)));
    assert_eq!(util[1], format!("{:.1}", mean_util(&b)));
    assert!(mean_util(&b) > 80.0 && mean_util(&a) < 30.0);
    assert!(row("util_p5")[0].parse::<f64>().unwrap() < 20.0);
    let rate = row("progress_mean");
    assert!(
        rate[0].ends_with(" it/s") && rate[1].ends_with(" it/s"),
        "{rate:?}"
    );
    assert!(rate[2].starts_with('×'));
    let wait = row("data_wait_share");
    assert!(wait[0].parse::<f64>().unwrap() > 60.0 && wait[1].parse::<f64>().unwrap() < 10.0);
    let findings = |key: &str| {
        let at = page.find(&format!("data-findings=\"{key}\"")).unwrap();
        let end = at + page[at..].find("</tr>").unwrap();
        let mut rules: Vec<String> = page[at..end]
            .split("<code>")
            .skip(1)
            .map(|c| c.split("</code>").next().unwrap().to_string())
            .collect();
        rules.sort();
        rules
    };
    assert_eq!(
        findings("gone"),
        ["data.dataloader-wait", "data.workers-too-few"]
    );
    assert_eq!(findings("remain"), ["driver.persistence-off"]);
    assert_eq!(findings("new"), ["launch.host-sync-in-step"]);
    // both runs drawn side by side
    assert!(page.contains("data-runs=\"2\""));
    assert!(page.contains("id=\"run-0\"") && page.contains("id=\"run-1\""));
    // a run without the figure says so instead of a zero
    let none = render(&[("a", &synthetic_runs::no_pcie()), ("b", &b)]);
    let at = none.find("data-metric=\"progress_mean\"").unwrap();
    assert!(none[at..].starts_with(
        "data-metric=\"progress_mean\"><th>Progress rate, mean</th><td>not recorded</td>"
    ));
}

#[test]
fn the_written_page_is_private_and_holds_the_downsampling() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let o = gpufix()
        .args([
            "report",
            "tests/fixtures/runs/synthetic-downsampled.json",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with(&format!("wrote {}", out.display())));
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("yes: one point stands for 4 samples (14400 taken)"));
    // nothing is fetched: no URL a browser would load
    for bad in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "@import",
        "url(http",
    ] {
        assert!(!page.contains(bad), "{bad}");
    }
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
}

#[test]
fn a_bad_recording_exits_1_naming_the_file_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(runs_dir().join("synthetic-no-pcie.json")).unwrap(),
    )
    .unwrap();
    let mut newer = good.clone();
    newer["version"] = 2.into();
    let mut short = good.clone();
    short["gpus"][0]["utilization_gpu"]
        .as_array_mut()
        .unwrap()
        .pop();
    let mut backwards = good.clone();
    backwards["gpus"][0]["t"][5] = 0.1.into();
    let mut window = good.clone();
    window["findings"][0]["window"] = serde_json::json!([20.0, 10.0]);
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "newer.json",
            newer.to_string(),
            "it is recording version 2; this gpufix reads version 1",
        ),
        (
            "short.json",
            short.to_string(),
            "gpus[0].utilization_gpu has 149 values for 150 times",
        ),
        (
            "backwards.json",
            backwards.to_string(),
            "gpus[0].t is not increasing",
        ),
        ("window.json", window.to_string(), "has the window [20, 10]"),
        ("deep.json", deep, "levels deep; the limit is 64"),
        (
            "plan.json",
            "{\"plan_version\": 1}".into(),
            "it has no `version`",
        ),
        ("text.json", "not json".into(), "it is not JSON"),
    ];
    for (name, text, says) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let out = dir.path().join("out.html");
        let o = gpufix()
            .arg("report")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(&format!("cannot draw {}", input.display())),
            "{name}: {err}"
        );
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains("help: give a file written by `gpufix record -o FILE`"));
        assert!(!out.exists(), "{name}: a page was written");
    }
    // the second file is checked before anything is written too
    let out = dir.path().join("out.html");
    let o = gpufix()
        .args([
            "report",
            "tests/fixtures/runs/synthetic-starved.json",
            "--compare",
        ])
        .arg(dir.path().join("missing.json"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json"));
    assert!(!out.exists());
}

#[test]
fn help_teaches_with_an_example() {
    let o = gpufix().args(["report", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    assert!(help.contains("gpufix report before.json --compare after.json -o report.html"));
    assert!(help.contains("gpufix report run.json -o report.html"));
}

/// A 60 s recording at 200 ms of 8 GPUs, every metric, the main process and 8 workers, py-spy
/// and progress: the page stays under 2 MB (issue 26), and with `--compare` of two such runs.
#[test]
fn a_minute_of_eight_gpus_is_under_two_megabytes() {
    let mut rec = synthetic_runs::healthy();
    let g = rec.gpus[0].clone();
    rec.gpus = (0..8)
        .map(|i| gpufix::vocab::record::GpuSeries {
            index: i,
            ..g.clone()
        })
        .collect();
    assert_eq!(rec.gpus[7].t.len(), 300);
    let one = render(&[("a", &rec)]).len();
    let two = render(&[("a", &rec), ("b", &rec)]).len();
    eprintln!("8 GPUs, 60 s at 200 ms: {one} bytes; compared with itself: {two} bytes");
    assert!(one < 2_000_000, "{one}");
    assert!(two < 2_000_000, "{two}");
}
