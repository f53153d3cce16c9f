//! What DCGM's `dcgmi` prints, read by its own grammar: `dcgmi diag -r 1|2|3` (the boxed
//! result table), `dcgmi health -c` (the health report tree) and `dcgmi dmon -e …` (field
//! columns per entity). Written from the producer's source, github.com/NVIDIA/DCGM at v4.6.0
//! (commit 72fa3fe), with the older layouts from its v3.3.9 and v2.1.4 tags:
//!
//! - `dcgmi/Diag.cpp`: `DIAG_HEADER`, the stage rows (`|-----  Deployment  ---…`, `+-----
//!   Hardware  ---…`, Integration, Stress, Metadata), one `| <name> | <info> |` row per test
//!   whose info column is 45 characters wide (`DATA_INFO_TAG_LEN`), longer messages wrapped
//!   over rows with an empty name. Up to v3.x a test row reads `Pass - All`, `Fail - GPU: 0`,
//!   `Pass - GPUs: 1, 2` (`HelperDisplayGpuResults`), messages are `Warning` / `Info` /
//!   `Error` rows; from v4.0 a test row reads `Pass|Fail|Warn|Skip|Not Run`
//!   (`HelperDisplayDiagResult`) followed by one `GPU0: Fail` row per entity and messages named
//!   `Warning: GPU0` / `Info: GPU0` (`HelperDisplayEntityResults`). Metadata rows: `DCGM
//!   Version`, `Driver Version Detected`, `GPU Device IDs Detected`, `EUD Test Version`, ….
//! - `dcgmi/Health.cpp` with `dcgmi/DcgmiOutput.cpp` (`DcgmiOutputTree::levelStr/rowStr`): a
//!   `Health Monitor Report` box; `Overall Health` at level 0, the entity group (`GPU`) at level
//!   0, each entity `-> 0` at level 1, `-> Errors` at level 2, each subsystem (`PCIe system`,
//!   `NVLINK system`, `PMU system`, `MCU system`, `Memory system`, `SM system`, `InfoROM
//!   system`, `Thermal system`, `Power system`, `Driver`, `ConnectX system`) at level 3 with
//!   `Healthy|Warning|Failure`, its messages on overflow rows below (54 characters wide).
//! - `dcgmi/DeviceMonitor.cpp` (`SetHeaderForOutput`, `PrintMetricsRow`): a `#Entity` header of
//!   field short names (`dcgmlib/src/dcgm_fields.cpp`: GPUTL, MCUTL, GRACT, SMACT, SMOCC,
//!   TENSO, DRAMA, FP64A, FP32A, FP16A, PCITX, PCIRX, FBUSD, FBFRE, FBTTL, POWER, TMPTR,
//!   SMCLK, MMCLK, …), an `ID` units row, then one row per entity and tick (`GPU 0`, `GPU_I 1`,
//!   `GPU 0 LINK 3`, …), `N/A` for a blank value; the header repeats every 14 ticks.
//!
//! - `dcgmi diag -j`: the same run as JSON, keys from `nvvs/include/NvvsJsonStrings.h` (v3.3.9,
//!   v4.1.1), read by [`parse_diag_json`].
//! - A diag that did not run prints no table, only why: `dcgmi/Diag.cpp`'s `Error: Unable to
//!   complete diagnostic for group N. Return: (-35) <errorString>` (also `for entities …`,
//!   `for fake GPUs …`, or without a target) and NVVS's refusal of a MIG-split GPU,
//!   `nvvs/src/NvidiaValidationSuite.cpp`: `GPU N's MIG configuration is incompatible with the
//!   diagnostic because it prevents access to the entire GPU.` Read into `not_run`: no test
//!   passed or failed.
//! - A `dcgmi health -c` that checked nothing prints no report, only why: `dcgmi/Health.cpp`
//!   `Health::CheckWatches` (v4.6.0, the same since v2.x) answers `Error: Unable to check health
//!   watches. Return: <errorString>` (`The Group is not found` for a missing group) when
//!   `dcgmHealthCheck` or `dcgmHealthGet` fails, and `Error: Health watches not enabled. Please
//!   enable watches. ` when no subsystem is watched (`dcgmi health -s` was never run). Read into
//!   `not_checked`: no overall health, no incident.
//! - The health watches' own log line, `modules/health/DcgmHealthWatch.cpp` `SetResponse`:
//!   `Detected a {WARNING|FAILURE} in health system {PCIe|NVLink|PMU|MCU|Memory|SM|Inforom|
//!   Thermal|Power|Driver|NVSwitch non-fatal errors|NVSwitch fatal errors|ConnectX…}: '<msg>'`
//!   (the same text since v2.x), as nv-hostengine.log or a monitor relays it; the message is
//!   a `dcgm_errors.h` text that names its GPU (`… in GPU 2. …`). Read into the health
//!   report's incidents, with no `Overall Health` row.
//! - The same incidents relayed by NVIDIA/NVSentinel's platform connector as a Kubernetes node
//!   condition (`platform-connectors/pkg/connectors/kubernetes/process_node_events.go`
//!   `constructHealthEventMessage`, read in the index's stored copy, 2026): `ErrorCode:<code> `
//!   per code, `<EntityType>:<EntityValue> ` per entity (`GPU:0 PCI:0000:9d:00.0 GPU_UUID:…`),
//!   the DCGM message (its `;` replaced by `.`), then `Recommended Action=<ACTION>;`. Only a
//!   `DCGM_FR_*` code is read (the gpu-health-monitor's DCGM incident), as an incident of its
//!   `GPU:N` entity, system the code, health `Not healthy` (NVSentinel writes a message only for
//!   an unhealthy event; the result it relays is not kept in it).
//! - An IMEX incident whose daemon status could not be read is no health verdict:
//!   `modules/health/DcgmHealthWatch.cpp` `MonitorImex` fails every daemon status but READY,
//!   UNAVAILABLE, NOT_INSTALLED and NOT_CONFIGURED (`DCGM_FR_IMEX_UNHEALTHY_MSG` `IMEX %s status is
//!   %s (%s)`), and `dcgmlib/src/DcgmImexManager.h` names -3 `COMMAND_ERROR` ("Command execution
//!   error": `nvidia-imex-ctl -q` did not run). `IMEX daemon status is -3 (…)` says nothing of
//!   the GPUs or their NVLink, so it is kept with health `Unknown`.
//! - A Power-system Warning that is only the GPU held at its power limit is no fault:
//!   `modules/health/DcgmHealthWatch.cpp` `MonitorPower` (v4.6.0, commit 72fa3fe) warns with
//!   `DCGM_FR_CLOCKS_EVENT_POWER` whenever `DCGM_FI_DEV_POWER_VIOLATION` (the time clocks were
//!   held to the power limit) grew at all over the last minute, which a GPU under full load at
//!   its cap does. `dcgmlib/dcgm_errors.h` describes the code as "Clock being optimized to meet
//!   the product's power limit requirements", prints `Detected clocks event due to power
//!   violation in GPU %u.` (up to v3.x `DCGM_FR_CLOCK_THROTTLE_POWER`, `Detected clock
//!   throttling due to power violation in GPU %u.`) with the next step `Monitor the power
//!   conditions. This GPU can still perform workload.` [`power_cap_event`] names such an
//!   incident (a thermal violation, `DCGM_FR_CLOCKS_EVENT_THERMAL`, is cooling and stays a
//!   fault; `DCGM_FR_POWER_UNREADABLE` from the same watch stays one too).
//! - The same run as NVIDIA/NVSentinel's Kubernetes preflight check logs it (its
//!   `preflight-dcgm-diag` init container, which runs the diagnostic through DCGM's Python
//!   bindings instead of `dcgmi`): `preflight-checks/dcgm-diag/dcgm_diag/__main__.py` (commit
//!   14e04d0, `_run_diagnostic`) logs one JSON event per line (`"event"`, `"level"`,
//!   `"timestamp"`, `"module": "preflight-dcgm-diag"`, `"version"`, then the call's extra keys;
//!   `kubectl logs … | jq` pretty-prints them, NVIDIA/NVSentinel#772): `Diagnostic summary` with
//!   `passed`, `failed`, `warned`, `skipped`, `total`; one `Test pass` / `Test warn` / `Test
//!   fail` per result with `gpu` (its UUID), `test` (DCGM's test name), `error_code` and
//!   `detail` (`Test passed`, or the result's error message); `DCGM diagnostic failed` with
//!   `error` when the run itself did not complete. Read by [`parse_preflight_log`] into the
//!   same tests (a GPU named by UUID stays in its test's messages, since the ids are indices).
//! - `dcgmi discovery -l`, `dcgmi/Query.cpp` `DisplayDiscoveredDevices`: `N GPU(s) found.`
//!   (4.x: `N GPUs found (Active).` / `(All).`), a `| GPU ID | Device Information |` box with
//!   `Name: …`, `PCI Bus ID: …`, `Device UUID: …` (and `Status: …` under `-a`) per GPU, an
//!   unset name printed as `DCGM_STR_BLANK` `<<<NULL>>>` (`dcgmlib/dcgm_structs.h`); then
//!   `N NvSwitch(es) found.`, `N ConnectX found.`, `N CPU(s) found.` Read by
//!   [`parse_discovery`]; no rule reads it (a device list shows no fault).
//!
//! Like every evidence reader: never panics, reads what is there, bounded output.

use serde::Serialize;
use std::collections::BTreeMap;

use super::smi_tables::{SmiUsage, UsageGpu};

/// One result a diag test gave, as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagResult {
    Pass,
    Fail,
    Warn,
    Skip,
    NotRun,
}

impl DiagResult {
    fn parse(s: &str) -> Option<DiagResult> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "pass" => DiagResult::Pass,
            "fail" => DiagResult::Fail,
            "warn" => DiagResult::Warn,
            "skip" => DiagResult::Skip,
            "not run" => DiagResult::NotRun,
            _ => return None,
        })
    }
    fn is_finding(self) -> bool {
        matches!(self, DiagResult::Fail | DiagResult::Warn)
    }
}

/// One test of a `dcgmi diag` run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiagTest {
    /// `GPU Memory`, `PCIe`, `Targeted Power`, `software`, `memory`, …
    pub name: String,
    /// `Metadata`, `Deployment`, `Integration`, `Hardware`, `Stress`, or empty when the paste
    /// starts below the stage header.
    pub stage: String,
    /// The worst result printed for the test: Fail over Warn over Skip over Pass.
    pub result: DiagResult,
    /// GPUs by result (`Fail - GPU: 0`, `GPU0: Fail`); `all` when the row said `- All`.
    pub gpus: BTreeMap<String, Vec<u32>>,
    pub all: bool,
    /// `Warning` / `Error` messages, unwrapped.
    pub warnings: Vec<String>,
    pub info: Vec<String>,
}

impl DiagTest {
    /// A test named `name` of `stage` that passed until a row says otherwise.
    fn passed(name: String, stage: &str) -> Self {
        DiagTest {
            name,
            stage: stage.to_string(),
            result: DiagResult::Pass,
            gpus: BTreeMap::new(),
            all: false,
            warnings: Vec::new(),
            info: Vec::new(),
        }
    }
}

/// A `dcgmi diag` run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmDiag {
    /// Why the diagnostic did not run, as dcgmi or NVVS printed it (no table then).
    pub not_run: Vec<String>,
    pub dcgm_version: Option<String>,
    pub driver_version: Option<String>,
    pub device_ids: Vec<String>,
    pub tests: Vec<DiagTest>,
    /// Tests that failed or warned: `GPU Memory (GPU 0): Fail`.
    pub failed: Vec<String>,
    /// GPUs named by a failed or warned test.
    pub failed_gpus: Vec<u32>,
    /// Messages of failed or warned tests, and `Error` rows that belong to no test.
    pub failure_messages: Vec<String>,
}

/// One `dcgmi health -c` incident group: a subsystem of an entity.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HealthIncident {
    /// `GPU 0`, `Switch 1`, …
    pub entity: String,
    /// `PCIe system`, `Memory system`, …
    pub system: String,
    /// `Healthy`, `Warning`, `Failure`.
    pub health: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmHealth {
    /// `Healthy`, `Warning`, `Failure` (or `Internal error`).
    pub overall: Option<String>,
    /// entity -> its health (`GPU 0` -> `Warning`).
    pub entities: BTreeMap<String, String>,
    pub incidents: Vec<HealthIncident>,
    /// `Health::CheckWatches`' own error lines, where the check did not run (see the header).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<String>,
}

/// `dcgmi dmon` samples.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmDmon {
    /// Field short names, in header order.
    pub fields: Vec<String>,
    /// Units row (`(us)`, `(C)`, …), where printed.
    pub units: Vec<String>,
    /// entity (`GPU 0`) -> field -> values read (N/A left out).
    pub entities: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// Rows read.
    pub rows: usize,
}

// ---------------------------------------------------------------------------------------------
// Line cleanup: a paste may come quoted (`> `) or fenced.

fn clean(line: &str) -> &str {
    let mut l = line.trim_end();
    loop {
        let t = l.trim_start();
        if let Some(r) = t.strip_prefix('>') {
            l = r;
        } else if let Some(r) = t.strip_prefix("```") {
            l = r;
        } else {
            return t;
        }
    }
}

/// `| name | info |` -> (name, info). Pipes inside a message are rare but possible: the name
/// column is the first cell, the rest (up to the closing pipe, which a cut paste may lack) is
/// the info.
fn cells(line: &str) -> Option<(&str, &str)> {
    let l = clean(line);
    let rest = l.strip_prefix('|')?;
    let (name, info) = rest.split_once('|')?;
    let info = info.strip_suffix('|').unwrap_or(info);
    // the stencil puts one space after each pipe; a wrapped message keeps its own spaces
    let info = info.strip_prefix(' ').unwrap_or(info).trim_end();
    Some((name.trim(), info))
}

/// `|-----  Deployment  --------+----|` or `+-----  Hardware  ----+----+` -> `Deployment`.
fn stage_row(line: &str) -> Option<String> {
    let l = clean(line);
    let inner = l.strip_prefix('|').or_else(|| l.strip_prefix('+'))?;
    let name = inner.trim_start_matches('-').trim_start();
    let end = name.find("  ").or_else(|| name.find(" -"))?;
    let name = name[..end].trim();
    (inner.starts_with("-----") && !name.is_empty() && name.chars().all(|c| c.is_alphabetic()))
        .then(|| name.to_string())
}

fn is_border(line: &str) -> bool {
    let l = clean(line);
    l.starts_with('+') && l.chars().all(|c| matches!(c, '+' | '-' | '='))
}

/// `Pass - All`, `Fail - GPU: 0`, `Pass - GPUs: 1, 2, 3`, `Skip - GPU 3`, `Fail` ->
/// (result, gpus, all).
fn old_result(info: &str) -> Option<(DiagResult, Vec<u32>, bool)> {
    let (head, tail) = match info.split_once(" - ") {
        Some((h, t)) => (h, Some(t.trim())),
        None => (info, None),
    };
    let result = DiagResult::parse(head)?;
    match tail {
        None => Some((result, Vec::new(), false)),
        Some("All") => Some((result, Vec::new(), true)),
        Some(t) => {
            let list = t
                .strip_prefix("GPUs")
                .or_else(|| t.strip_prefix("GPU"))?
                .trim_start_matches(':')
                .trim();
            let gpus: Vec<u32> = list
                .split(',')
                .filter_map(|x| x.split_whitespace().next()?.parse().ok())
                .take(super::MAX_ITEMS)
                .collect();
            Some((result, gpus, false))
        }
    }
}

/// `GPU0: Fail` (v4 entity row) -> (entity id, result).
fn entity_result(info: &str) -> Option<(u32, DiagResult)> {
    let (ent, res) = info.split_once(':')?;
    let id = ent.trim().strip_prefix("GPU")?.trim().parse().ok()?;
    Some((id, DiagResult::parse(res)?))
}

fn rank(r: DiagResult) -> u8 {
    match r {
        DiagResult::Fail => 4,
        DiagResult::Warn => 3,
        DiagResult::Skip => 2,
        DiagResult::NotRun => 1,
        DiagResult::Pass => 0,
    }
}

fn result_name(r: DiagResult) -> &'static str {
    match r {
        DiagResult::Pass => "pass",
        DiagResult::Fail => "fail",
        DiagResult::Warn => "warn",
        DiagResult::Skip => "skip",
        DiagResult::NotRun => "not-run",
    }
}

/// The rows of a diag table in the text: the header, a stage row, or a result row
/// (`| GPU Memory | Pass - All |`, `| software | Pass |`, `| | GPU0: Fail |`).
pub fn diag_row_count(text: &str) -> usize {
    let mut n = 0;
    for line in text.lines().take(2000) {
        if stage_row(line).is_some_and(|s| {
            matches!(
                s.as_str(),
                "Deployment" | "Hardware" | "Integration" | "Stress" | "Metadata"
            )
        }) {
            n += 1;
        } else if let Some((name, info)) = cells(line) {
            let info = info.trim();
            if (name == "Diagnostic" && info == "Result")
                || old_result(info).is_some_and(|(_, g, all)| all || !g.is_empty())
                || entity_result(info).is_some()
                || matches!(name, "DCGM Version" | "Driver Version Detected")
            {
                n += 1;
            }
        }
    }
    n
}

/// A `dcgmi diag` table is somewhere in the text: its header, a stage row, or two result rows
/// in its layout.
pub fn looks_like_diag(text: &str) -> bool {
    diag_row_count(text) >= 2 || text.lines().take(2000).any(|l| refusal(l).is_some())
}

/// A line saying the diagnostic did not run: dcgmi's `Error: Unable to complete diagnostic…`
/// or NVVS's `GPU N's MIG configuration is incompatible with the diagnostic…`.
fn refusal(line: &str) -> Option<&str> {
    let l = clean(line);
    let dcgmi = l.starts_with("Error: Unable to complete diagnostic");
    let mig = l.starts_with("GPU ")
        && l.contains("'s MIG configuration is incompatible with the diagnostic");
    (dcgmi || mig).then_some(l)
}

/// Reads a `dcgmi diag` table (either layout); tests and results as printed.
pub fn parse_diag(text: &str) -> Result<DcgmDiag, super::ParseError> {
    if !looks_like_diag(text) {
        return Err(super::ParseError::NotThisKind(
            "no `dcgmi diag` result table in the text",
        ));
    }
    let mut d = DcgmDiag::default();
    for l in text.lines().take(20_000).filter_map(refusal) {
        let l = super::clip(l, super::MAX_TEXT);
        if !d.not_run.contains(&l) && d.not_run.len() < super::MAX_ITEMS {
            d.not_run.push(l);
        }
    }
    let mut stage = String::new();
    let mut cur: Option<DiagTest> = None;
    let mut msg: Option<Msg> = None;
    // `Error`/`Warning` rows above any test (a DCGM 2.x Deployment error): (stage, text)
    let mut orphans: Vec<(String, String)> = Vec::new();

    for line in text.lines() {
        if let Some(s) = stage_row(line) {
            flush_msg(&mut msg, &mut cur, &mut orphans, &stage);
            push_test(&mut d, cur.take());
            stage = s;
            continue;
        }
        if is_border(line) {
            continue;
        }
        let Some((name, info)) = cells(line) else {
            continue;
        };
        if name == "Diagnostic" && info.trim() == "Result" {
            continue;
        }
        match name {
            "DCGM Version" => {
                d.dcgm_version = Some(super::clip(info.trim(), 64));
                continue;
            }
            "Driver Version Detected" => {
                d.driver_version = Some(super::clip(info.trim(), 64));
                continue;
            }
            n if n.ends_with("Device IDs Detected") => {
                d.device_ids = info
                    .split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .take(super::MAX_ITEMS)
                    .collect();
                continue;
            }
            // other metadata (EUD versions, CPU count)
            n if stage == "Metadata" && !n.is_empty() => continue,
            _ => {}
        }
        let kind = name.split(':').next().unwrap_or("").trim();
        if matches!(kind, "Warning" | "Error" | "Info") {
            flush_msg(&mut msg, &mut cur, &mut orphans, &stage);
            // v4 names the entity in the name column (`Warning: GPU0`)
            let who = name
                .split_once(':')
                .map(|(_, e)| format!("{}: ", e.trim()))
                .unwrap_or_default();
            msg = Some(Msg {
                warning: kind != "Info",
                text: format!("{who}{info}"),
                last_chunk: info.len(),
            });
            continue;
        }
        if name.is_empty() {
            if let Some(m) = msg.as_mut() {
                // a message is cut into 45-character chunks (Diag.cpp DATA_INFO_TAG_LEN); a
                // chunk shorter than that ended in spaces the cell padding swallowed
                if m.text.len() < 2 * super::MAX_TEXT {
                    if m.last_chunk < DATA_INFO_WIDTH && !info.starts_with(' ') {
                        m.text.push(' ');
                    }
                    m.text.push_str(info);
                    m.last_chunk = info.len();
                }
                continue;
            }
            let Some(t) = cur.as_mut() else { continue };
            if let Some((r, gpus, all)) = old_result(info.trim()) {
                merge(t, r, gpus, all);
            } else if let Some((id, r)) = entity_result(info.trim()) {
                merge(t, r, vec![id], false);
            }
            continue;
        }
        // a test row
        let Some((r, gpus, all)) = old_result(info.trim()) else {
            continue;
        };
        flush_msg(&mut msg, &mut cur, &mut orphans, &stage);
        push_test(&mut d, cur.take());
        let mut t = DiagTest {
            name: super::clip(name, 80),
            stage: stage.clone(),
            result: r,
            gpus: BTreeMap::new(),
            all,
            warnings: Vec::new(),
            info: Vec::new(),
        };
        if !gpus.is_empty() {
            t.gpus.insert(result_name(r).into(), gpus);
        }
        cur = Some(t);
    }
    flush_msg(&mut msg, &mut cur, &mut orphans, &stage);
    push_test(&mut d, cur.take());
    summarise(&mut d, orphans);
    Ok(d)
}

/// The failed and warned tests, their GPUs and messages, from the tests read; `orphans`: error
/// rows that belong to no test, (stage, text).
fn summarise(d: &mut DcgmDiag, orphans: Vec<(String, String)>) {
    for t in &d.tests {
        if !t.result.is_finding() {
            continue;
        }
        let mut bad: Vec<u32> = t
            .gpus
            .iter()
            .filter(|(r, _)| matches!(r.as_str(), "fail" | "warn"))
            .flat_map(|(_, g)| g.iter().copied())
            .collect();
        bad.sort_unstable();
        bad.dedup();
        let on = if t.all {
            " (all GPUs)".to_string()
        } else if bad.is_empty() {
            String::new()
        } else {
            let ids: Vec<String> = bad.iter().map(u32::to_string).collect();
            format!(" (GPU {})", ids.join(", "))
        };
        d.failed
            .push(format!("{}{on}: {}", t.name, result_name(t.result)));
        for g in bad {
            if !d.failed_gpus.contains(&g) {
                d.failed_gpus.push(g);
            }
        }
        for w in &t.warnings {
            if d.failure_messages.len() < super::MAX_ITEMS {
                d.failure_messages.push(w.clone());
            }
        }
    }
    // a message row above every test (`| Error | GPU 3 has uncorrectable memory errors … |`
    // under Deployment in DCGM 2.x) is a failure of the run itself
    for (st, e) in orphans {
        let at = if st.is_empty() {
            "diagnostic".into()
        } else {
            st
        };
        d.failed.push(format!("{at}: error"));
        if let Some(g) = gpu_in(&e)
            && !d.failed_gpus.contains(&g)
        {
            d.failed_gpus.push(g);
        }
        if d.failure_messages.len() < super::MAX_ITEMS {
            d.failure_messages.push(e);
        }
    }
    d.failed_gpus.sort_unstable();
}

// ---------------------------------------------------------------------------------------------
// dcgmi diag -j

/// `dcgmi diag -j` output: the run as JSON, keys from `nvvs/include/NvvsJsonStrings.h`
/// (v3.3.9 and v4.1.1): `"DCGM GPU Diagnostic"` (3.x) or `"DCGM Diagnostic"` (4.x) holding
/// `"test_categories"`, each a `"category"` with `"tests"`, each test a `"name"` with
/// `"results"`, each result a `"status"` (`Pass`, `Fail`, `Warn`, `Skip`, `Not Run`), the
/// `"gpu_id"` it is for, `"warnings"` (`{"warning": msg, "error_id": n, …}`) and `"info"`;
/// beside them `"Driver Version Detected"`, `"GPU Device IDs"` and `"version"`.
pub fn looks_like_diag_json(text: &str) -> bool {
    ((text.contains("\"DCGM GPU Diagnostic\"") || text.contains("\"DCGM Diagnostic\""))
        && text.contains("\"test_categories\""))
        || diag_json_result_fragment(text)
}

/// A result object of `dcgmi diag -j` pasted without the document around it (a poster's
/// excerpt of one failing GPU): its `"status"` beside a `"warnings"` entry that holds all of
/// `"warning"`, `"error_id"`, `"error_category"` and `"error_severity"`, the four keys dcgmi
/// writes together for each error of a result (`dcgmi/Diag.cpp`, v3.3.9
/// `HelperJsonAddResult` and v4.6.0 `AddResultEntry`: `errorEntry[NVVS_WARNING]`,
/// `[NVVS_ERROR_ID]`, `[NVVS_ERROR_CATEGORY]`, `[NVVS_ERROR_SEVERITY]`, names from
/// `nvvs/include/NvvsJsonStrings.h`).
fn diag_json_result_fragment(text: &str) -> bool {
    [
        "\"status\"",
        "\"warnings\"",
        "\"warning\"",
        "\"error_id\"",
        "\"error_category\"",
        "\"error_severity\"",
    ]
    .iter()
    .all(|k| text.contains(k))
}

/// A diag run in either form: the table, else `-j` JSON.
pub fn parse_diag_any(text: &str) -> Result<DcgmDiag, super::ParseError> {
    if !looks_like_diag(text) && looks_like_diag_json(text) {
        return parse_diag_json(text);
    }
    if !looks_like_diag(text) && looks_like_preflight_log(text) {
        return parse_preflight_log(text);
    }
    parse_diag(text)
}

/// Any form of a diag run is in the text.
pub fn looks_like_diag_any(text: &str) -> bool {
    looks_like_diag(text) || looks_like_diag_json(text) || looks_like_preflight_log(text)
}

// ---------------------------------------------------------------------------------------------
// NVSentinel's preflight dcgm-diag log

static PREFLIGHT_MODULE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#""module"\s*:\s*"preflight-dcgm-diag""#).expect("static regex")
});

/// NVSentinel's `preflight-dcgm-diag` log (see the module's doc): a JSON event of that module.
pub fn looks_like_preflight_log(text: &str) -> bool {
    text.contains("\"event\"") && PREFLIGHT_MODULE.is_match(text)
}

/// A JSON key and its string or integer value, as `dcgmi diag -j` and NVSentinel's preflight
/// log print them (read in order, so a shortened or cut paste is read as far as it goes).
static JSON_KV: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r#""((?:[^"\\]|\\.){1,80})"\s*:\s*(?:"((?:[^"\\]|\\.){0,2000})"|(-?\d{1,12}))"#,
    )
    .expect("static regex")
});

/// The text's JSON keys and their values ([`JSON_KV`]) in the order printed, up to 100,000.
fn json_pairs(text: &str) -> impl Iterator<Item = (&str, &str)> {
    JSON_KV.captures_iter(text).take(100_000).map(|c| {
        let key = c.get(1).map_or("", |m| m.as_str());
        let val = c.get(2).or_else(|| c.get(3)).map_or("", |m| m.as_str());
        (key, val)
    })
}

/// Reads NVSentinel's preflight log event by event, keys in the order printed (one event per
/// line, or pretty-printed by `jq`): `Test <status>` events become results of their test, the
/// failed run's `error` a reason it did not run.
pub fn parse_preflight_log(text: &str) -> Result<DcgmDiag, super::ParseError> {
    if !looks_like_preflight_log(text) {
        return Err(super::ParseError::NotThisKind(
            "no NVSentinel preflight-dcgm-diag event in the text",
        ));
    }
    #[derive(Default)]
    struct Event {
        name: String,
        fields: BTreeMap<String, String>,
    }
    let mut events: Vec<Event> = Vec::new();
    for (key, val) in json_pairs(text) {
        if key == "event" {
            events.push(Event {
                name: super::clip(val, 200),
                ..Default::default()
            });
        } else if let Some(e) = events.last_mut()
            && e.fields.len() < 64
        {
            e.fields
                .entry(key.to_string())
                .or_insert_with(|| super::clip(&val.replace("\\\"", "\""), super::MAX_TEXT));
        }
    }
    let mut d = DcgmDiag::default();
    for e in events.iter().filter(|e| {
        e.fields
            .get("module")
            .is_none_or(|m| m == "preflight-dcgm-diag")
    }) {
        if let Some(st) = e.name.strip_prefix("Test ")
            && let Some(r) = DiagResult::parse(st)
        {
            let name = e
                .fields
                .get("test")
                .cloned()
                .unwrap_or_else(|| "(test not shown)".into());
            let i = match d.tests.iter().position(|t| t.name == name) {
                Some(i) => i,
                None if d.tests.len() < super::MAX_ITEMS => {
                    d.tests.push(DiagTest::passed(name, ""));
                    d.tests.len() - 1
                }
                None => continue,
            };
            let t = &mut d.tests[i];
            merge(t, r, Vec::new(), false);
            if r != DiagResult::Pass
                && let Some(detail) = e.fields.get("detail")
                && t.warnings.len() < super::MAX_ITEMS
            {
                let who = e
                    .fields
                    .get("gpu")
                    .map(|g| format!("{g}: "))
                    .unwrap_or_default();
                t.warnings.push(format!("{who}{detail}"));
            }
        } else if e.name == "DCGM diagnostic failed" && d.not_run.len() < super::MAX_ITEMS {
            d.not_run.push(
                e.fields
                    .get("error")
                    .cloned()
                    .unwrap_or_else(|| e.name.clone()),
            );
        }
    }
    summarise(&mut d, Vec::new());
    Ok(d)
}

/// Reads `dcgmi diag -j` output key by key in the order printed, so a paste the poster
/// shortened (`{"..."}` for a category left out, a cut tail) is read as far as it goes: a
/// `"category"` opens a stage, a `"name"` under it a test, each `"status"` a result of that
/// test for the `"gpu_id"` next to it.
pub fn parse_diag_json(text: &str) -> Result<DcgmDiag, super::ParseError> {
    if !looks_like_diag_json(text) {
        return Err(super::ParseError::NotThisKind(
            "no `dcgmi diag -j` output in the text",
        ));
    }
    let mut d = DcgmDiag::default();
    let mut stage = String::new();
    let mut cur: Option<DiagTest> = None;
    let fragment = !text.contains("\"test_categories\"");
    // a result's fields come in any order: status and gpu_id are joined when both are seen
    let mut status: Option<DiagResult> = None;
    let mut gpu: Option<u32> = None;
    let flush =
        |cur: &mut Option<DiagTest>, status: &mut Option<DiagResult>, gpu: &mut Option<u32>| {
            if let (Some(t), Some(r)) = (cur.as_mut(), status.take()) {
                merge(t, r, gpu.take().into_iter().collect(), false);
            }
            *gpu = None;
        };
    for (key, val) in json_pairs(text) {
        match key {
            "category" => {
                flush(&mut cur, &mut status, &mut gpu);
                push_test(&mut d, cur.take());
                stage = super::clip(val, 64);
            }
            "name" => {
                flush(&mut cur, &mut status, &mut gpu);
                push_test(&mut d, cur.take());
                cur = Some(DiagTest::passed(super::clip(val, 100), &stage));
            }
            "status" => {
                if status.is_some() {
                    flush(&mut cur, &mut status, &mut gpu);
                }
                // a result pasted without its test around it: the test is not named
                if cur.is_none() && fragment {
                    cur = Some(DiagTest::passed("(test not shown)".into(), &stage));
                }
                // 3.x also wrote `Skip - All`
                status = DiagResult::parse(val.split(" - ").next().unwrap_or(val));
            }
            "gpu_id" | "entity_id" => {
                if gpu.is_some() && status.is_some() {
                    flush(&mut cur, &mut status, &mut gpu);
                }
                gpu = val.trim().parse().ok();
            }
            "warning" => {
                if let Some(t) = cur.as_mut()
                    && t.warnings.len() < super::MAX_ITEMS
                {
                    t.warnings.push(super::clip(val, super::MAX_TEXT));
                }
            }
            "info" => {
                if let Some(t) = cur.as_mut()
                    && t.info.len() < super::MAX_ITEMS
                {
                    t.info.push(super::clip(val, super::MAX_TEXT));
                }
            }
            "Driver Version Detected" => d.driver_version = Some(super::clip(val, 64)),
            "version" if d.dcgm_version.is_none() => d.dcgm_version = Some(super::clip(val, 64)),
            _ => {}
        }
    }
    flush(&mut cur, &mut status, &mut gpu);
    push_test(&mut d, cur.take());
    // a test whose every result is Skip reads as skipped, not passed
    for t in &mut d.tests {
        if t.result == DiagResult::Pass
            && !t.gpus.contains_key(result_name(DiagResult::Pass))
            && t.gpus.contains_key(result_name(DiagResult::Skip))
        {
            t.result = DiagResult::Skip;
        }
    }
    summarise(&mut d, Vec::new());
    Ok(d)
}

/// Width of the diag table's info column (`DATA_INFO_TAG_LEN` in Diag.cpp).
const DATA_INFO_WIDTH: usize = 45;

/// A message being unwrapped from its rows.
struct Msg {
    warning: bool,
    text: String,
    /// Length of the last chunk read, to tell a chunk cut mid-word from one ending in spaces.
    last_chunk: usize,
}

fn flush_msg(
    msg: &mut Option<Msg>,
    cur: &mut Option<DiagTest>,
    orphans: &mut Vec<(String, String)>,
    stage: &str,
) {
    let Some(m) = msg.take() else { return };
    let text = super::clip(m.text.trim(), super::MAX_TEXT);
    let list = match cur.as_mut() {
        Some(t) if m.warning => &mut t.warnings,
        Some(t) => &mut t.info,
        None if m.warning => {
            if orphans.len() < super::MAX_ITEMS {
                orphans.push((stage.to_string(), text));
            }
            return;
        }
        None => return,
    };
    if list.len() < super::MAX_ITEMS {
        list.push(text);
    }
}

fn push_test(d: &mut DcgmDiag, t: Option<DiagTest>) {
    if let Some(t) = t
        && d.tests.len() < super::MAX_ITEMS
    {
        d.tests.push(t);
    }
}

/// `GPU 3 has …` -> 3.
fn gpu_in(msg: &str) -> Option<u32> {
    let rest = &msg[msg.find("GPU")? + 3..];
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

fn merge(t: &mut DiagTest, r: DiagResult, gpus: Vec<u32>, all: bool) {
    if rank(r) > rank(t.result) {
        t.result = r;
    }
    t.all |= all && r == t.result;
    let e = t.gpus.entry(result_name(r).into()).or_default();
    for g in gpus {
        if !e.contains(&g) && e.len() < super::MAX_ITEMS {
            e.push(g);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// dcgmi health -c

/// The tree rows of `dcgmi health -c`: `| Overall Health | … |`, `| -> 0 | … |`; or the
/// health watches' log line (`Detected a WARNING in health system Thermal: '…'`).
pub fn looks_like_health(text: &str) -> bool {
    text.lines()
        .take(2000)
        .any(|l| health_not_checked(l).is_some())
        || text.lines().take(2000).any(|l| {
            cells(l).is_some_and(|(n, v)| {
                n == "Overall Health" && matches!(v.trim(), "Healthy" | "Warning" | "Failure")
            })
        })
        || text
            .lines()
            .take(20_000)
            .any(|l| health_log_line(l).is_some())
        || !relayed_conditions(text).is_empty()
}

/// A line of `Health::CheckWatches` saying the health check did not run (see the header): the
/// whole line is dcgmi's, from its `Error: ` prefix.
fn health_not_checked(line: &str) -> Option<&str> {
    let l = clean(line).trim_end();
    (l.starts_with("Error: Health watches not enabled. Please enable watches.")
        || l.starts_with("Error: Unable to check health watches. Return: "))
    .then_some(l)
}

/// `IMEX daemon status is -3 (…)`: DCGM could not run `nvidia-imex-ctl` (see the header).
fn imex_status_unread(msg: &str) -> bool {
    msg.trim_start().starts_with("IMEX daemon status is -3 ")
}

/// NVSentinel's node-condition relay of DCGM incidents (see the header): each event from its
/// first `ErrorCode:DCGM_FR_` token to its `Recommended Action=<ACTION>;`, over at most eight
/// lines a paste may have wrapped it on.
fn relayed_conditions(text: &str) -> Vec<HealthIncident> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().take(20_000).collect();
    let mut i = 0;
    while i < lines.len() && out.len() < super::MAX_ITEMS {
        let Some(at) = lines[i].find("ErrorCode:DCGM_FR_") else {
            i += 1;
            continue;
        };
        let mut joined = lines[i][at..].trim().to_string();
        let mut j = i;
        while !joined.contains("Recommended Action=")
            && j + 1 < lines.len()
            && j < i + 8
            && !lines[j + 1].trim().is_empty()
        {
            j += 1;
            joined.push(' ');
            joined.push_str(lines[j].trim());
        }
        i = j + 1;
        // a paste that stops before the action (`kubectl describe node`'s condition message,
        // shortened): the one event it holds, its action not shown
        let cut = !joined.contains("Recommended Action=");
        if cut {
            joined.push_str("Recommended Action=;");
        }
        for event in joined.split_inclusive(';') {
            let Some((head, action)) = event.split_once("Recommended Action=") else {
                continue;
            };
            let action = action.trim().trim_end_matches(';');
            if (action.is_empty() && !cut)
                || !action.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            {
                continue;
            }
            let mut code = None;
            let mut entity = String::new();
            let mut rest = head.trim();
            // the `ErrorCode:` and `Type:Value` tokens before the message
            while let Some((tok, after)) = rest.split_once(' ') {
                let Some((k, v)) = tok.split_once(':') else {
                    break;
                };
                if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    break;
                }
                if k == "ErrorCode" {
                    code.get_or_insert_with(|| v.to_string());
                } else if k == "GPU" && entity.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
                    entity = format!("GPU {v}");
                }
                rest = after.trim_start();
            }
            let Some(code) = code.filter(|c| c.starts_with("DCGM_FR_")) else {
                continue;
            };
            let msg = rest.trim();
            let health = if code == "DCGM_FR_IMEX_UNHEALTHY" && imex_status_unread(msg) {
                "Unknown"
            } else {
                "Not healthy"
            };
            out.push(HealthIncident {
                entity,
                system: super::clip(&code, 80),
                health: health.to_string(),
                message: super::clip(
                    &if action.is_empty() {
                        msg.to_string()
                    } else {
                        format!("{msg} (Recommended Action={action})")
                    },
                    super::MAX_TEXT,
                ),
            });
        }
    }
    out
}

/// DCGM's power-cap clocks event as its own and only content (see the header): a `Warning` whose
/// message is `DCGM_FR_CLOCKS_EVENT_POWER_MSG` (or v3.x `DCGM_FR_CLOCK_THROTTLE_POWER_MSG`), in
/// the report tree, the watch's log line or a relayed condition naming either code.
pub fn power_cap_event(i: &HealthIncident) -> bool {
    const MSGS: [&str; 2] = [
        "Detected clocks event due to power violation in GPU ",
        "Detected clock throttling due to power violation in GPU ",
    ];
    const NEXT: &str = "Monitor the power conditions. This GPU can still perform workload.";
    let by_code = matches!(
        i.system.as_str(),
        "DCGM_FR_CLOCKS_EVENT_POWER" | "DCGM_FR_CLOCK_THROTTLE_POWER"
    );
    if !(i.health == "Warning" || (by_code && i.health == "Not healthy")) {
        return false;
    }
    let msg = i.message.trim();
    let Some(rest) = MSGS.iter().find_map(|m| msg.strip_prefix(m)) else {
        return false;
    };
    // `<gpu>.`, then at most the next step and a relay's `(Recommended Action=…)`: a second
    // message folded into the same subsystem (`Cannot get power usage for GPU 0.`) is no cap
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let Some(rest) = rest[digits..].strip_prefix('.').filter(|_| digits > 0) else {
        return false;
    };
    let rest = rest.trim_start();
    let rest = rest.strip_prefix(NEXT).unwrap_or(rest).trim();
    rest.is_empty() || (rest.starts_with("(Recommended Action=") && rest.ends_with(')'))
}

/// `… Detected a WARNING in health system Thermal: 'Detected clocks event … in GPU 2. …'`
/// (`DcgmHealthWatch::SetResponse`) -> an incident: the GPU the message names, the system,
/// `Warning`/`Failure`, the message.
fn health_log_line(line: &str) -> Option<HealthIncident> {
    let at = line.find("Detected a ")?;
    let rest = &line[at + "Detected a ".len()..];
    let (result, rest) = rest.split_once(" in health system ")?;
    let health = match result.trim() {
        "WARNING" => "Warning",
        "FAILURE" => "Failure",
        _ => return None,
    };
    let (system, msg) = rest.split_once(": ")?;
    let system = system.trim();
    if system.is_empty() || system.len() > 40 {
        return None;
    }
    let msg = msg.trim();
    let msg = msg.strip_prefix('\'').unwrap_or(msg);
    let msg = msg.strip_suffix('\'').unwrap_or(msg).trim();
    // dcgm_errors.h messages name their GPU: `… in GPU 2.`, `… for GPU 0 …`, `GPU 3 has …`
    let entity = msg
        .split("GPU ")
        .skip(1)
        .find_map(|t| {
            let n: String = t.chars().take_while(char::is_ascii_digit).collect();
            (!n.is_empty() && n.len() <= 4).then(|| format!("GPU {n}"))
        })
        .unwrap_or_default();
    let health = if imex_status_unread(msg) {
        "Unknown"
    } else {
        health
    };
    Some(HealthIncident {
        entity,
        system: format!("{system} system"),
        health: health.to_string(),
        message: super::clip(msg, super::MAX_TEXT),
    })
}

pub fn parse_health(text: &str) -> Result<DcgmHealth, super::ParseError> {
    if !looks_like_health(text) {
        return Err(super::ParseError::NotThisKind(
            "no `dcgmi health -c` report in the text (no `Overall Health` row, dcgmi error line, health-watch log line or relayed DCGM_FR_ condition)",
        ));
    }
    let mut h = DcgmHealth::default();
    for l in text.lines().take(20_000).filter_map(health_not_checked) {
        let l = super::clip(l, super::MAX_TEXT);
        if !h.not_checked.contains(&l) && h.not_checked.len() < super::MAX_ITEMS {
            h.not_checked.push(l);
        }
    }
    let mut group = String::new();
    let mut entity: Option<String> = None;
    let mut in_errors = false;
    let mut incident: Option<HealthIncident> = None;
    let mut last_was_entity = false;
    let finish = |h: &mut DcgmHealth, i: Option<HealthIncident>| {
        if let Some(mut i) = i
            && h.incidents.len() < super::MAX_ITEMS
        {
            i.message = super::clip(i.message.trim(), super::MAX_TEXT);
            h.incidents.push(i);
        }
    };
    for line in text.lines() {
        let Some((left, right)) = cells(line) else {
            continue;
        };
        let right = right.trim();
        let l = clean(line).trim_start_matches('|');
        // depth from the arrow's column: `-> 0` (1), `   -> Errors` (2), `      -> PCIe` (3)
        let arrow = l.find("-> ");
        let label = left.trim_start_matches("->").trim();
        if left == "Overall Health" {
            h.overall = Some(right.to_string());
            continue;
        }
        if left.is_empty() {
            // an overflow row: the message of the incident (or entity) above
            if let Some(i) = incident.as_mut() {
                if !i.message.is_empty() {
                    i.message.push(' ');
                }
                if i.message.len() < super::MAX_TEXT {
                    i.message.push_str(right);
                }
            } else if last_was_entity && let Some(e) = &entity {
                // an entity's message without an Errors level (older trees)
                let mut i = HealthIncident {
                    entity: e.clone(),
                    system: String::new(),
                    health: h.entities.get(e).cloned().unwrap_or_default(),
                    message: String::new(),
                };
                i.message.push_str(right);
                incident = Some(i);
            }
            continue;
        }
        match arrow.map(|a| a / 3 + 1) {
            None => {
                // a group at level 0 (`GPU`, `Switch`)
                finish(&mut h, incident.take());
                group = label.to_string();
                entity = None;
                in_errors = false;
                last_was_entity = false;
            }
            Some(1) => {
                finish(&mut h, incident.take());
                let name = format!("{group} {label}").trim().to_string();
                if h.entities.len() < super::MAX_ITEMS {
                    h.entities.insert(name.clone(), right.to_string());
                }
                entity = Some(name);
                in_errors = false;
                last_was_entity = true;
            }
            Some(2) => {
                finish(&mut h, incident.take());
                in_errors = label == "Errors";
                last_was_entity = false;
            }
            Some(_) => {
                finish(&mut h, incident.take());
                last_was_entity = false;
                if in_errors || entity.is_some() {
                    incident = Some(HealthIncident {
                        entity: entity.clone().unwrap_or_default(),
                        system: super::clip(label, 80),
                        health: right.to_string(),
                        message: String::new(),
                    });
                }
            }
        }
    }
    finish(&mut h, incident.take());
    // the watches' log lines, where nv-hostengine's log (or a monitor relaying it) was pasted
    for i in text.lines().take(20_000).filter_map(health_log_line) {
        if h.incidents.contains(&i) || h.incidents.len() >= super::MAX_ITEMS {
            continue;
        }
        if !i.entity.is_empty() {
            let e = h.entities.entry(i.entity.clone()).or_default();
            if e.is_empty() || e == "Healthy" || (e == "Warning" && i.health == "Failure") {
                *e = i.health.clone();
            }
        }
        h.incidents.push(i);
    }
    // NVSentinel's node conditions, where one was pasted
    for i in relayed_conditions(text) {
        if h.incidents.contains(&i) || h.incidents.len() >= super::MAX_ITEMS {
            continue;
        }
        if !i.entity.is_empty() && i.health != "Unknown" {
            h.entities
                .entry(i.entity.clone())
                .or_insert_with(|| i.health.clone());
        }
        h.incidents.push(i);
    }
    Ok(h)
}

// ---------------------------------------------------------------------------------------------
// dcgmi discovery -l

/// One GPU of `dcgmi discovery -l`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DiscoveredGpu {
    /// DCGM's GPU id (the box's `GPU ID` column).
    pub id: u32,
    /// `Name: …`; `None` where DCGM printed its blank marker `<<<NULL>>>` or no name row.
    pub name: Option<String>,
    /// DCGM printed `<<<NULL>>>` for the name: the attribute was not read.
    pub name_blank: bool,
    pub pci_bus_id: Option<String>,
    pub uuid: Option<String>,
    /// `Status: …` (`dcgmi discovery -l -a`, DCGM 4.x), for a GPU not in the OK state.
    pub status: Option<String>,
    /// `Error: Cannot get device attributes for GPU.` and its `Return: …`.
    pub error: Option<String>,
}

/// `dcgmi discovery -l`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmDiscovery {
    /// N of `N GPUs found.` (`N GPUs found (Active).` in DCGM 4.x).
    pub gpus_found: Option<u32>,
    /// `Active` or `All` (DCGM 4.x's `(Active)` / `(All)`).
    pub listed: Option<String>,
    pub gpus: Vec<DiscoveredGpu>,
    pub nvswitches_found: Option<u32>,
    pub connectx_found: Option<u32>,
    pub cpus_found: Option<u32>,
}

/// `8 GPUs found (Active).`, `1 GPU found.`, `2 NvSwitches found.`, `0 ConnectX found.`,
/// `1 CPU found.` -> (count, entity, qualifier).
fn found_line(line: &str) -> Option<(u32, &'static str, Option<String>)> {
    let l = clean(line);
    let (n, rest) = l.split_once(' ')?;
    let n: u32 = n.parse().ok()?;
    let (what, rest) = rest.split_once(" found")?;
    let what = match what {
        "GPU" | "GPUs" => "GPU",
        "NvSwitch" | "NvSwitches" => "NvSwitch",
        "ConnectX" => "ConnectX",
        "CPU" | "CPUs" => "CPU",
        _ => return None,
    };
    let rest = rest.trim().trim_end_matches('.');
    let qual = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .filter(|q| matches!(*q, "Active" | "All"))
        .map(str::to_string);
    (rest.is_empty() || qual.is_some()).then_some((n, what, qual))
}

/// The box `dcgmi discovery -l` prints: its `| GPU ID | Device Information |` header, or a
/// `N GPUs found` line with a `PCI Bus ID:` row.
pub fn looks_like_discovery(text: &str) -> bool {
    let mut found = false;
    let mut bus = false;
    for l in text.lines().take(2000) {
        if let Some((name, info)) = cells(l) {
            if name == "GPU ID" && info.trim() == "Device Information" {
                return true;
            }
            bus |= info.trim_start().starts_with("PCI Bus ID: ");
        }
        found |= found_line(l).is_some_and(|(_, w, _)| w == "GPU");
    }
    found && bus
}

/// Reads `dcgmi discovery -l`: the counts it prints and each GPU's rows.
pub fn parse_discovery(text: &str) -> Result<DcgmDiscovery, super::ParseError> {
    if !looks_like_discovery(text) {
        return Err(super::ParseError::NotThisKind(
            "no `dcgmi discovery -l` device list in the text",
        ));
    }
    let mut d = DcgmDiscovery::default();
    let mut cur: Option<DiscoveredGpu> = None;
    let push = |d: &mut DcgmDiscovery, g: Option<DiscoveredGpu>| {
        if let Some(g) = g
            && d.gpus.len() < super::MAX_ITEMS
        {
            d.gpus.push(g);
        }
    };
    for line in text.lines().take(20_000) {
        if let Some((n, what, qual)) = found_line(line) {
            match what {
                "GPU" => {
                    d.gpus_found = Some(n);
                    d.listed = qual;
                }
                "NvSwitch" => d.nvswitches_found = Some(n),
                "ConnectX" => d.connectx_found = Some(n),
                _ => d.cpus_found = Some(n),
            }
            continue;
        }
        if is_border(line) {
            continue;
        }
        let Some((id, info)) = cells(line) else {
            continue;
        };
        let info = info.trim();
        if id == "GPU ID" {
            continue;
        }
        if let Ok(n) = id.parse::<u32>() {
            push(&mut d, cur.take());
            cur = Some(DiscoveredGpu {
                id: n,
                ..Default::default()
            });
        } else if !id.is_empty() {
            // another box (`Switch ID`, `CPU ID`): its rows are not a GPU's
            push(&mut d, cur.take());
            continue;
        }
        let Some(g) = cur.as_mut() else {
            continue;
        };
        if let Some(v) = info.strip_prefix("Name: ") {
            let v = v.trim();
            g.name_blank = v.starts_with("<<<NULL>>>");
            g.name = (!g.name_blank && !v.is_empty()).then(|| super::clip(v, 120));
        } else if let Some(v) = info.strip_prefix("PCI Bus ID: ") {
            g.pci_bus_id = Some(super::clip(v.trim(), 40));
        } else if let Some(v) = info.strip_prefix("Device UUID: ") {
            g.uuid = Some(super::clip(v.trim(), 80));
        } else if let Some(v) = info.strip_prefix("Status: ") {
            g.status = Some(super::clip(v.trim(), 40));
        } else if info.starts_with("Error: ") || info.starts_with("Return: ") {
            let e = g.error.get_or_insert_with(String::new);
            if !e.is_empty() {
                e.push(' ');
            }
            if e.len() < super::MAX_TEXT {
                e.push_str(info);
            }
        }
    }
    push(&mut d, cur.take());
    Ok(d)
}

// ---------------------------------------------------------------------------------------------
// dcgmi dmon

/// `#Entity   GRACT   SMACT …` -> the short names.
fn dmon_header(line: &str) -> Option<Vec<String>> {
    let l = clean(line).trim_start_matches('\\');
    let rest = l.strip_prefix("#Entity")?;
    let names: Vec<String> = rest
        .split_whitespace()
        .take(64)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// A row `GPU 0     0.888   N/A …` -> (entity, values).
fn dmon_row(line: &str) -> Option<(String, Vec<&str>)> {
    let l = clean(line);
    let mut it = l.split_whitespace();
    let group = it.next()?;
    if !matches!(
        group,
        "GPU" | "GPU_I" | "GPU_CI" | "vGPU" | "Switch" | "CPU" | "CPU_CORE" | "LINK" | "ConnectX"
    ) {
        return None;
    }
    let id = it.next()?;
    id.parse::<u32>().ok()?;
    let mut entity = format!("{group} {id}");
    let mut vals: Vec<&str> = it.collect();
    // `GPU 0 LINK 3` names a link of GPU 0
    if vals.first() == Some(&"LINK") && vals.len() >= 2 {
        entity = format!("{entity} LINK {}", vals[1]);
        vals.drain(..2);
    }
    Some((entity, vals))
}

pub fn looks_like_dmon(text: &str) -> bool {
    let mut header = false;
    for l in text.lines().take(2000) {
        if dmon_header(l).is_some() {
            header = true;
        } else if header && dmon_row(l).is_some() {
            return true;
        }
    }
    false
}

/// The Xid codes a dmon run shows, per entity: the `XIDER` column is
/// `DCGM_FI_DEV_XID_ERRORS` (field 230, `dcgmlib/src/dcgm_fields.cpp`: "XID errors. The value
/// is the specific XID error"), the last Xid the GPU reported, 0 for none.
pub fn dmon_xids(d: &DcgmDmon) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for (entity, fields) in &d.entities {
        for v in fields.get("XIDER").into_iter().flatten() {
            let code = *v as u32;
            if *v >= 1.0 && *v < 100_000.0 && !out.contains(&(entity.clone(), code)) {
                out.push((entity.clone(), code));
            }
        }
    }
    out
}

pub fn parse_dmon(text: &str) -> Result<DcgmDmon, super::ParseError> {
    let mut d = DcgmDmon::default();
    let mut want_units = false;
    for line in text.lines() {
        if let Some(h) = dmon_header(line) {
            if d.fields.is_empty() {
                d.fields = h;
            }
            want_units = true;
            continue;
        }
        let l = clean(line);
        if want_units && l.starts_with("ID") {
            d.units = l
                .split_whitespace()
                .skip(1)
                .take(64)
                .map(str::to_string)
                .collect();
            want_units = false;
            continue;
        }
        if d.fields.is_empty() {
            continue;
        }
        let Some((entity, vals)) = dmon_row(line) else {
            continue;
        };
        want_units = false;
        d.rows += 1;
        if !d.entities.contains_key(&entity) && d.entities.len() >= super::MAX_ITEMS {
            continue;
        }
        let e = d.entities.entry(entity).or_default();
        for (f, v) in d.fields.iter().zip(vals) {
            if let Ok(x) = v.parse::<f64>()
                && x.is_finite()
            {
                let slot = e.entry(f.clone()).or_default();
                if slot.len() < 100_000 {
                    slot.push(x);
                }
            }
        }
    }
    if d.rows == 0 {
        return Err(super::ParseError::NotThisKind(
            "no `dcgmi dmon` rows in the text (expected `#Entity` then `GPU 0 …`)",
        ));
    }
    Ok(d)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The GPUs' utilization as `nvidia-smi` tables give it, so `gpu.usage` and the NVML rules read
/// a dmon paste the same way: `GPUTL` (percent, what `nvidia-smi` calls utilization.gpu) when
/// present, else `GRACT` (graphics engine active, a ratio), else `SMACT`, as percent; `FBUSD`
/// (MiB), `POWER` (W), `TMPTR` (C), `SMCLK`/`MMCLK` (MHz), `MCUTL`.
pub fn dmon_usage(d: &DcgmDmon) -> SmiUsage {
    let mut u = SmiUsage {
        format: "dcgmi-dmon".into(),
        ..Default::default()
    };
    for (entity, fields) in &d.entities {
        let Some(id) = entity
            .strip_prefix("GPU ")
            .and_then(|i| i.parse::<u32>().ok())
        else {
            continue;
        };
        let get = |k: &str| fields.get(k).map(Vec::as_slice).unwrap_or(&[]);
        let (util, max) = if !get("GPUTL").is_empty() {
            let v = get("GPUTL");
            (mean(v), v.iter().copied().reduce(f64::max))
        } else {
            let v = if !get("GRACT").is_empty() {
                get("GRACT")
            } else {
                get("SMACT")
            };
            (
                mean(v).map(|x| x * 100.0),
                v.iter().copied().reduce(f64::max).map(|x| x * 100.0),
            )
        };
        let samples = ["GPUTL", "GRACT", "SMACT"]
            .iter()
            .map(|k| get(k).len())
            .max()
            .unwrap_or(0);
        u.gpus.push(UsageGpu {
            index: id,
            util_gpu: util.map(|x| (x * 10.0).round() / 10.0),
            util_gpu_max: max,
            util_mem: mean(get("MCUTL")),
            memory_used_mib: mean(get("FBUSD")),
            memory_total_mib: mean(get("FBTTL")),
            power_w: mean(get("POWER")),
            temperature_c: mean(get("TMPTR")),
            sm_clock_mhz: mean(get("SMCLK")),
            mem_clock_mhz: mean(get("MMCLK")),
            samples,
            ..Default::default()
        });
    }
    u.samples = d.rows;
    u
}

// ---------------------------------------------------------------------------------------------
// Registry entries.

/// `dcgmi diag -r 1|2|3`.
pub struct DcgmiDiag;

impl super::EvidenceKind for DcgmiDiag {
    fn name(&self) -> &'static str {
        "dcgmi-diag"
    }
    fn doc(&self) -> &'static str {
        "DCGM's diagnostic run: each test (deployment, PCIe, memory, stress) with its result per GPU and its warnings"
    }
    fn example(&self) -> &'static str {
        "dcgmi diag -r 2"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "not_run",
                "why the diagnostic did not run (dcgmi's `Unable to complete`, NVVS's MIG refusal)",
            ),
            ("dcgm_version", "DCGM version (Metadata rows)"),
            ("driver_version", "driver version DCGM detected"),
            ("device_ids", "PCI device ids of the GPUs tested"),
            (
                "tests",
                "per test: name, stage, result, GPUs by result, warnings, info",
            ),
            ("failed", "tests that failed or warned, with their GPUs"),
            ("failed_gpus", "GPUs a failed or warned test names"),
            (
                "failure_messages",
                "warnings of failed tests and Error rows, unwrapped",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["dcgm.diag"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_diag(s.unquoted)
            || looks_like_diag_json(s.head)
            || looks_like_preflight_log(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_diag_any(text)?)
    }
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::Shown))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `dcgmi health -c`.
pub struct DcgmiHealth;

impl super::EvidenceKind for DcgmiHealth {
    fn name(&self) -> &'static str {
        "dcgmi-health"
    }
    fn doc(&self) -> &'static str {
        "DCGM's health report: overall health, and per GPU the subsystems (PCIe, NVLink, memory, thermal, power, ...) in warning or failure"
    }
    fn example(&self) -> &'static str {
        "dcgmi health -s a && dcgmi health -c"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("overall", "Healthy, Warning or Failure"),
            ("entities", "entity (GPU 0) -> its health"),
            ("incidents", "per entity and subsystem: health and message"),
            (
                "not_checked",
                "dcgmi's own error where the check did not run (watches not enabled, group not found)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["dcgm.health"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_health(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_health(text)?)
    }
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::Shown))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

/// `dcgmi discovery -l`.
pub struct DcgmiDiscovery;

impl super::EvidenceKind for DcgmiDiscovery {
    fn name(&self) -> &'static str {
        "dcgmi-discovery"
    }
    fn doc(&self) -> &'static str {
        "DCGM's device list: the GPUs it found (name, PCI bus id, UUID), NvSwitches, ConnectX and CPUs"
    }
    fn example(&self) -> &'static str {
        "dcgmi discovery -l"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("gpus_found", "N of `N GPUs found`"),
            ("listed", "`Active` or `All` (DCGM 4.x)"),
            (
                "gpus",
                "per GPU: id, name (none where DCGM printed <<<NULL>>>), name_blank, pci_bus_id, uuid, status, error",
            ),
            ("nvswitches_found", "N of `N NvSwitches found`"),
            ("connectx_found", "N of `N ConnectX found`"),
            ("cpus_found", "N of `N CPUs found`"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_discovery(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_discovery(text)?)
    }
}

/// `dcgmi dmon -e …`.
pub struct DcgmiDmon;

impl super::EvidenceKind for DcgmiDmon {
    fn name(&self) -> &'static str {
        "dcgmi-dmon"
    }
    fn doc(&self) -> &'static str {
        "DCGM field samples per GPU over time (GRACT, SMACT, DRAMA, GPUTL, FBUSD, PCITX, ...)"
    }
    fn example(&self) -> &'static str {
        "dcgmi dmon -e 203,252,1001,1002,1005 -c 30"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("fields", "field short names, in header order"),
            ("units", "the units row, where printed"),
            (
                "entities",
                "entity (GPU 0) -> field -> values (N/A left out)",
            ),
            ("rows", "rows read"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage", "kernel.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_dmon(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_dmon(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(
            parse_dmon(text)
                .map(|d| super::HostPart::Nvml(super::smi_tables::to_reading(&dmon_usage(&d)))),
        )
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::{fixture, prefixes};
    use proptest::prelude::*;

    // NVIDIA/DCGM#94 (A100s split into 3g.40gb MIG instances): NVVS refuses, dcgmi gives up on
    // an empty group; no test ran
    const DIAG_MIG_REFUSED: &str = "sudo dcgmi diag -g 0 -r 3\nGPU 0's MIG configuration is incompatible with the diagnostic because it prevents access to the entire GPU.\nGPU 0's MIG configuration is incompatible with the diagnostic because it prevents access to the entire GPU.\nyasir@517m214:~$ sudo dcgmi diag -g 1 -r 3\nError: Unable to complete diagnostic for group 1. Return: (-35) The specified group is empty, and this operation is incompatible with an empty group.\n";

    #[test]
    fn a_health_check_that_did_not_run_is_read_as_not_checked() {
        // github.com/NVIDIA/DCGM/issues/176: `dcgmi health --check` with no watches set
        // (Health.cpp `CheckWatches`); and its other error, `Unable to check health watches`
        let t = "dcgmi health --check -g 1\nError: Health watches not enabled. Please enable watches.\n";
        assert!(looks_like_health(t));
        let h = parse_health(t).unwrap();
        assert_eq!(h.not_checked.len(), 1, "{h:?}");
        assert!(h.overall.is_none() && h.incidents.is_empty() && h.entities.is_empty());
        let g =
            parse_health("Error: Unable to check health watches. Return: The Group is not found\n")
                .unwrap();
        assert!(g.not_checked[0].ends_with("The Group is not found"));
        // a report that ran keeps `not_checked` empty; prose naming the error is not dcgmi's line
        let ok = parse_health(
            "| Overall Health            | Healthy                                        |\n",
        )
        .unwrap();
        assert!(ok.not_checked.is_empty() && ok.overall.as_deref() == Some("Healthy"));
        assert!(!looks_like_health(
            "I got Error: Health watches not enabled. Please enable watches. What now?\n"
        ));
    }

    #[test]
    fn a_refused_diag_is_read_as_not_run() {
        assert!(looks_like_diag(DIAG_MIG_REFUSED));
        let d = parse_diag(DIAG_MIG_REFUSED).unwrap();
        assert!(d.tests.is_empty() && d.failed.is_empty());
        assert_eq!(d.not_run.len(), 2, "{:?}", d.not_run);
        assert!(d.not_run[0].starts_with("GPU 0's MIG configuration"));
        assert!(d.not_run[1].contains("(-35)"));
        // a run that printed its table has no refusal (NVIDIA/DCGM#55, healthy)
        let ok = parse_diag(&fixture("dcgmi/diag_r3_deployment_pass.txt")).unwrap();
        assert!(ok.not_run.is_empty() && !ok.tests.is_empty());
        assert!(!looks_like_diag(
            "Error: Unable to open file\nGPU 0 is fine\n"
        ));
    }

    // NVIDIA/DCGM#270: the health watches' log line (DcgmHealthWatch::SetResponse)
    const HEALTH_LOG_THERMAL: &str = "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due to thermal violation in GPU 2. Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components.\n";

    #[test]
    fn the_health_watch_log_line_is_an_incident() {
        assert!(looks_like_health(HEALTH_LOG_THERMAL));
        let h = parse_health(HEALTH_LOG_THERMAL).unwrap();
        assert_eq!(h.overall, None);
        assert_eq!(h.incidents.len(), 1);
        let i = &h.incidents[0];
        assert_eq!(
            (i.entity.as_str(), i.system.as_str(), i.health.as_str()),
            ("GPU 2", "Thermal system", "Warning")
        );
        assert!(
            i.message
                .starts_with("Detected clocks event due to thermal violation")
        );
        assert_eq!(h.entities["GPU 2"], "Warning");
        // healthy: the report of a GPU whose watches found nothing has no such line
        let ok = parse_health("| Overall Health            | Healthy                                                  |\n").unwrap();
        assert!(ok.incidents.is_empty());
        assert!(!looks_like_health(
            "Detected a new GPU in health system Thermal: fine\n"
        ));
    }

    #[test]
    fn a_relayed_condition_cut_before_its_action_is_still_read() {
        // NVIDIA/aicr#2641: `kubectl describe node`'s condition on an idle GB300, indented and
        // shortened before `Recommended Action=`; the IMEX daemon was not running (-3)
        let t = "GpuNvlinkWatch = True   reason=GpuNvlinkWatchIsNotHealthy\n  ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0\n  GPU_UUID:GPU-bb3e1419-... IMEX daemon status is -3 (not READY)\n";
        assert!(looks_like_health(t));
        let h = parse_health(t).unwrap();
        assert_eq!(h.incidents.len(), 1);
        let i = &h.incidents[0];
        assert_eq!(
            (i.entity.as_str(), i.system.as_str(), i.health.as_str()),
            ("GPU 0", "DCGM_FR_IMEX_UNHEALTHY", "Unknown")
        );
        assert_eq!(i.message, "IMEX daemon status is -3 (not READY)");
        // a cut NVLink incident is the unhealthy event NVSentinel relays it as
        let n = parse_health("  ErrorCode:DCGM_FR_NVLINK_DOWN GPU:1 PCI:0000:1b:00.0\n  GPU 1's NvLink link 3 is currently down\n\nother text\n").unwrap();
        assert_eq!(n.incidents.len(), 1);
        assert_eq!(n.incidents[0].health, "Not healthy");
        assert!(!n.incidents[0].message.contains("other text"));
    }

    #[test]
    fn a_diag_json_result_pasted_alone_is_read() {
        // NVIDIA/DCGM#122: one result of `dcgmi diag -j` (the Diagnostic test on a bad GPU),
        // pasted without the document around it; its strings wrapped as pasted
        let t = "{\n    \"gpu_id\" : \"5\",\n    \"info\" : \"GPU 5 GPU 5 calculated at approximately 511.70 gigaflops during this test\",\n    \"status\" : \"Fail\",\n    \"warnings\" : \n    [\n        {\n            \"error_category\" : 2,\n            \"error_id\" : 110,\n            \"error_severity\" : 4,\n            \"warning\" : \"GPU 5 Detected 511.70 GFLOPs for GPU 5 which is below the threshold 1480.77 Please verify your user-specified variance\n tolerance is set appropriately; if so, and if errors are persistent, please run a field diagnostic.\"\n";
        assert!(looks_like_diag_json(t));
        let d = parse_diag_any(t).unwrap();
        assert_eq!(d.failed, vec!["(test not shown) (GPU 5): fail".to_string()]);
        assert_eq!(d.failed_gpus, vec![5]);
        assert!(d.failure_messages[0].contains("511.70 GFLOPs"));
        // NVIDIA/DCGM#284's case: a memory result that passed beside its allocation error
        let pass = t.replace("\"Fail\"", "\"Pass\"");
        let p = parse_diag_any(&pass).unwrap();
        assert!(p.failed.is_empty());
        // an error object without the result's status is not dcgmi's
        assert!(!looks_like_diag_json(
            "{\"warnings\": [{\"warning\": \"x\", \"error_id\": 1, \"error_category\": 2, \"error_severity\": 3}]}"
        ));
    }

    #[test]
    fn nvsentinel_relayed_conditions() {
        // NVIDIA/NVSentinel#1471: a single-node H100 box whose IMEX daemon status DCGM could
        // not read (-3, COMMAND_ERROR), the message wrapped over three lines
        let t = "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is -3 (not READY)\nCheck IMEX installation, configuration, domain and daemon status, and network\nconnectivity. Recommended Action=CONTACT_SUPPORT;\n";
        assert!(looks_like_health(t));
        let h = parse_health(t).unwrap();
        assert_eq!(h.overall, None);
        assert_eq!(h.incidents.len(), 1);
        let i = &h.incidents[0];
        assert_eq!(
            (i.entity.as_str(), i.system.as_str(), i.health.as_str()),
            ("GPU 0", "DCGM_FR_IMEX_UNHEALTHY", "Unknown")
        );
        assert!(i.message.ends_with("(Recommended Action=CONTACT_SUPPORT)"));
        assert!(h.entities.is_empty());
        // NVIDIA/NVSentinel#1481's NVLink incident of a PCIe A100, as the connector writes it:
        // a DCGM incident, not healthy, of its GPU; two events in one condition
        let t = "ErrorCode:DCGM_FR_NVLINK_DOWN GPU:0 GPU 0's NvLink link 0 is currently down Run a field diagnostic on the GPU. Recommended Action=RESTART_VM;ErrorCode:DCGM_FR_NVLINK_DOWN GPU:0 GPU 0's NvLink link 1 is currently down Run a field diagnostic on the GPU. Recommended Action=RESTART_VM;\n";
        let h = parse_health(t).unwrap();
        assert_eq!(h.incidents.len(), 2);
        assert_eq!(h.incidents[0].health, "Not healthy");
        assert_eq!(h.entities["GPU 0"], "Not healthy");
        // a domain that is DOWN is a real failure; a daemon status other than -3 too
        let t = "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is 2 (not READY) Recommended Action=CONTACT_SUPPORT;\n";
        assert_eq!(parse_health(t).unwrap().incidents[0].health, "Not healthy");
        // the health watch's own log line of the same unread status
        let t =
            "Detected a FAILURE in health system NVLink: 'IMEX daemon status is -3 (not READY)'\n";
        assert_eq!(parse_health(t).unwrap().incidents[0].health, "Unknown");
        // NVSentinel's other monitors (an Xid code, no DCGM_FR_) are not DCGM's health
        assert!(!looks_like_health(
            "ErrorCode:79 gpu:0 XID error occured Recommended Action=NODE_REBOOT;\n"
        ));
    }

    // NVIDIA/DCGM#229: H100 SXM names DCGM did not read (`<<<NULL>>>`), trailing spaces as
    // pasted, cut inside GPU 2
    const DISCOVERY_NULL: &str = ":dcgmi discovery -l --host unix:///var/run/dcgm.sock                                 \n4 GPUs found.                                                                             \n+--------+----------------------------------------------------------------------+         \n| GPU ID | Device Information                                                   |         \n+--------+----------------------------------------------------------------------+         \n| 0      | Name: <<<NULL>>>                                                     |         \n|        | PCI Bus ID: 00000000:4C:00.0                                         |         \n|        | Device UUID: GPU-d6a2c177-4cd8-8d01-0310-79f2720f37de                |         \n+--------+----------------------------------------------------------------------+         \n| 1      | Name: <<<NULL>>>                                                     |         \n|        | PCI Bus ID: 00000000:5D:00.0                                         |         \n";

    #[test]
    fn discovery_lists_gpus_with_blank_names() {
        assert!(looks_like_discovery(DISCOVERY_NULL));
        let d = parse_discovery(DISCOVERY_NULL).unwrap();
        assert_eq!(d.gpus_found, Some(4));
        assert_eq!(d.gpus.len(), 2);
        assert!(d.gpus[0].name_blank && d.gpus[0].name.is_none());
        assert_eq!(d.gpus[0].pci_bus_id.as_deref(), Some("00000000:4C:00.0"));
        assert_eq!(
            d.gpus[0].uuid.as_deref(),
            Some("GPU-d6a2c177-4cd8-8d01-0310-79f2720f37de")
        );
        assert_eq!(d.gpus[1].pci_bus_id.as_deref(), Some("00000000:5D:00.0"));
    }

    #[test]
    fn discovery_of_a_healthy_4x_host_indented_and_elided() {
        // KempnerInstitute/kempnerpulse#15: DCGM 4.x's `(Active)`, indented, `...` elisions
        let t = "  $ dcgmi discovery -l\n  8 GPUs found (Active).\n  +--------+----------------------------------------------------------------------+\n  | GPU ID | Device Information                                                   |\n  +--------+----------------------------------------------------------------------+\n  | 0      | Name: NVIDIA H100 80GB HBM3                                          |\n  |        | PCI Bus ID: 00000000:19:00.0                                         |\n  |        | Device UUID: GPU-...                                                 |\n  +--------+----------------------------------------------------------------------+\n  ...\n";
        let d = parse_discovery(t).unwrap();
        assert_eq!(
            (d.gpus_found, d.listed.as_deref()),
            (Some(8), Some("Active"))
        );
        assert_eq!(d.gpus[0].name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert!(!d.gpus[0].name_blank);
        // a diag or health box is not a device list
        assert!(!looks_like_discovery(&fixture(
            "dcgmi/diag_r3_deployment_pass.txt"
        )));
        assert!(!looks_like_discovery("4 GPUs found.\n"));
    }

    #[test]
    fn old_layout_gpu_memory_fail_with_thermal_warning() {
        let t = fixture("dcgmi/diag_r2_gpu_memory_thermal_fail.txt");
        let d = parse_diag(&t).unwrap();
        assert_eq!(d.tests.len(), 1);
        let m = &d.tests[0];
        assert_eq!(m.name, "GPU Memory");
        assert_eq!(m.result, DiagResult::Fail);
        assert_eq!(m.gpus["pass"], vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(m.gpus["fail"], vec![0]);
        // the 45-character chunks join back into the message DCGM wrote
        assert_eq!(
            m.warnings,
            vec![
                "GPU 0 Thermal violations totaling 13.3 seconds started at 9.7 seconds into the test for GPU 0 Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components."
            ]
        );
        assert_eq!(d.failed, vec!["GPU Memory (GPU 0): fail"]);
        assert_eq!(d.failed_gpus, vec![0]);
    }

    #[test]
    fn old_layout_deployment_error_row() {
        let d = parse_diag(&fixture("dcgmi/diag_deployment_row_remap_error.txt")).unwrap();
        assert!(d.tests.is_empty());
        assert_eq!(d.failed, vec!["Deployment: error"]);
        assert_eq!(d.failed_gpus, vec![3]);
        assert_eq!(
            d.failure_messages,
            vec!["GPU 3 has uncorrectable memory errors and row remappings are pending"]
        );
    }

    #[test]
    fn old_layout_failure_inside_a_longer_run() {
        let d = parse_diag(&fixture("dcgmi/diag_r2_cuda_context_fail.txt")).unwrap();
        let m = d.tests.iter().find(|t| t.name == "GPU Memory").unwrap();
        assert_eq!(m.stage, "Hardware");
        assert_eq!(m.gpus["pass"], vec![1]);
        assert_eq!(m.gpus["fail"], vec![0]);
        assert!(m.warnings[0].starts_with("GPU 0 Error using CUDA API cuCtxCreate"));
        assert!(m.warnings[0].ends_with("'CUDA-capable device(s) is/are busy or unavailable'."));
        assert_eq!(d.failed_gpus, vec![0]);
    }

    #[test]
    fn old_layout_all_pass_is_no_failure() {
        let d = parse_diag(&fixture("dcgmi/diag_r3_deployment_pass.txt")).unwrap();
        assert_eq!(d.tests.len(), 9);
        assert!(d.tests.iter().all(|t| t.result == DiagResult::Pass));
        assert_eq!(d.tests[4].name, "Persistence Mode");
        assert_eq!(d.tests[4].stage, "Deployment");
        assert!(d.failed.is_empty() && d.failed_gpus.is_empty());
    }

    #[test]
    fn v4_layout_metadata_and_entity_rows() {
        let d = parse_diag(&fixture("dcgmi/diag_v4_software_pass.txt")).unwrap();
        assert_eq!(d.dcgm_version.as_deref(), Some("4.2.3"));
        assert_eq!(d.driver_version.as_deref(), Some("570.148.08"));
        assert_eq!(d.device_ids, vec!["26b9"; 4]);
        assert_eq!(d.tests.len(), 1);
        assert_eq!(d.tests[0].name, "software");
        assert_eq!(d.tests[0].gpus["pass"], vec![0, 1, 2, 3]);
        assert!(d.failed.is_empty());
        // the same layout with a failing entity and its `Warning: GPU1` message, as
        // Diag.cpp's HelperDisplayEntityResults prints it
        let t = "|-----  Deployment  --------+------------------------------------------------|\n| software                  | Fail                                           |\n|                           | GPU0: Pass                                     |\n|                           | GPU1: Fail                                     |\n| Warning: GPU1             | Persistence mode for GPU 1 is disabled.        |\n";
        let d = parse_diag(t).unwrap();
        assert_eq!(d.tests[0].gpus["fail"], vec![1]);
        assert_eq!(d.failed, vec!["software (GPU 1): fail"]);
        assert_eq!(
            d.tests[0].warnings,
            vec!["GPU1: Persistence mode for GPU 1 is disabled."]
        );
    }

    #[test]
    fn diag_detection_needs_its_rows() {
        assert!(looks_like_diag(&fixture(
            "dcgmi/diag_r2_gpu_memory_thermal_fail.txt"
        )));
        assert!(!looks_like_diag("| a | b |\n| c | d |\n"));
        assert!(!looks_like_diag("the diagnostic said Pass - All\n"));
        // prose around the table
        let t = format!(
            "I ran the diag and got:\n\n{}\nany idea?\n",
            fixture("dcgmi/diag_r3_deployment_pass.txt")
        );
        assert_eq!(parse_diag(&t).unwrap().tests.len(), 9);
    }

    // The lines below are those dcgmi's own unit test asserts the health renderer prints
    // (github.com/NVIDIA/DCGM v4.6.0, dcgmi/tests/HealthTests.cpp,
    // "Health::GenerateOutputFromResponse"), laid out in DcgmiOutputTree's levels.
    const HEALTH_FAILURE: &str = "+---------------------------+----------------------------------------------------------+\n| Health Monitor Report                                                                |\n+===========================+==========================================================+\n| Overall Health            | Failure                                                  |\n| GPU                       |                                                          |\n| -> 0                      | Warning                                                  |\n|    -> Errors              |                                                          |\n|       -> Memory system    | Warning                                                  |\n|                           | The car is red? Are you sure because that doesn't seem   |\n|                           | like the color I ordered.                                |\n| -> 1                      | Failure                                                  |\n|    -> Errors              |                                                          |\n|       -> Memory system    | Failure                                                  |\n|                           | Green can be emerald and beautiful, but there are        |\n|                           | shades of green which are sure to disappoint.            |\n|       -> SM system        | Warning                                                  |\n|                           | The guards wear Kholin blue because otherwise they'd be  |\n|                           | lame.                                                    |\n+---------------------------+----------------------------------------------------------+\n";

    #[test]
    fn health_report_tree() {
        assert!(looks_like_health(HEALTH_FAILURE));
        let h = parse_health(HEALTH_FAILURE).unwrap();
        assert_eq!(h.overall.as_deref(), Some("Failure"));
        assert_eq!(h.entities["GPU 0"], "Warning");
        assert_eq!(h.entities["GPU 1"], "Failure");
        assert_eq!(h.incidents.len(), 3);
        assert_eq!(h.incidents[1].entity, "GPU 1");
        assert_eq!(h.incidents[1].system, "Memory system");
        assert_eq!(h.incidents[1].health, "Failure");
        assert_eq!(
            h.incidents[1].message,
            "Green can be emerald and beautiful, but there are shades of green which are sure to disappoint."
        );
        assert_eq!(h.incidents[2].system, "SM system");
        // a healthy report is its Overall Health row alone (Health.cpp adds no entity
        // without an incident)
        let ok = "| Overall Health            | Healthy                                                  |\n";
        let h = parse_health(ok).unwrap();
        assert_eq!(h.overall.as_deref(), Some("Healthy"));
        assert!(h.incidents.is_empty());
        assert!(!looks_like_health("Overall Health: fine\n"));
    }

    /// shukla-surendra/mini-llms-playground@89c413e infra/gcp-gpu-node/docs/
    /// dcgm_gpu_command_reference.md (corpus h122_dcgmihealth_minillms_l4_power_violation_benign):
    /// one L4 at its 72 W cap during training, DCGM 4.6.1.
    const HEALTH_POWER_CAP: &str = "\
+---------------------------+----------------------------------------------------------+
| Health Monitor Report                                                                |
+===========================+==========================================================+
| Overall Health            | Warning                                                  |
| GPU                       |                                                          |
| -> 0                      | Warning                                                  |
|    -> Errors              |                                                          |
|       -> Power system     | Warning                                                  |
|                           | Detected clocks event due to power violation in GPU 0.   |
|                           | Monitor the power conditions. This GPU can still         |
|                           | perform workload.                                        |
+---------------------------+----------------------------------------------------------+
";

    #[test]
    fn a_power_cap_clocks_event_is_named_and_nothing_else_is() {
        let h = parse_health(HEALTH_POWER_CAP).unwrap();
        assert_eq!(h.overall.as_deref(), Some("Warning"));
        assert_eq!(h.incidents.len(), 1);
        assert_eq!(h.incidents[0].system, "Power system");
        assert!(power_cap_event(&h.incidents[0]), "{:?}", h.incidents[0]);
        // the thermal violation of the same watch family (NVIDIA/DCGM#270, corpus h14) is not
        let t = "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due to thermal violation in GPU 2. Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components.";
        let h = parse_health(t).unwrap();
        assert!(!power_cap_event(&h.incidents[0]));
        // the power watch's log line, and v3.x's wording of the same code
        for l in [
            "Detected a WARNING in health system Power: 'Detected clocks event due to power violation in GPU 3. Monitor the power conditions. This GPU can still perform workload.'",
            "Detected a WARNING in health system Power: 'Detected clock throttling due to power violation in GPU 1.'",
        ] {
            let h = parse_health(l).unwrap();
            assert!(power_cap_event(&h.incidents[0]), "{l}");
        }
        // a Failure, or a second message folded into the subsystem, is no cap alone
        let folded = HEALTH_POWER_CAP.replace(
            "|                           | perform workload.                                        |",
            "|                           | perform workload.                                        |\n|                           | Cannot get power usage for GPU 0.                        |",
        );
        let h = parse_health(&folded).unwrap();
        assert!(!power_cap_event(&h.incidents[0]), "{:?}", h.incidents[0]);
        let failed =
            HEALTH_POWER_CAP.replace("Power system     | Warning", "Power system     | Failure");
        let h = parse_health(&failed).unwrap();
        assert!(!power_cap_event(&h.incidents[0]));
        // the other subsystems' warnings
        let h = parse_health(HEALTH_FAILURE).unwrap();
        assert!(h.incidents.iter().all(|i| !power_cap_event(i)));
        // NVSentinel's relay of the code
        let r = "ErrorCode:DCGM_FR_CLOCKS_EVENT_POWER GPU:0 PCI:0000:9d:00.0 Detected clocks event due to power violation in GPU 0. Monitor the power conditions. This GPU can still perform workload. Recommended Action=NONE;";
        let h = parse_health(r).unwrap();
        assert!(power_cap_event(&h.incidents[0]), "{:?}", h.incidents);
    }

    #[test]
    fn dmon_profiling_fields_with_na_rows() {
        let t = fixture("dcgmi/dmon_gract_smact.txt");
        assert!(looks_like_dmon(&t));
        let d = parse_dmon(&t).unwrap();
        assert_eq!(d.fields[..3], ["GRACT", "SMACT", "SMOCC"]);
        assert_eq!(d.rows, 10);
        // N/A is no value
        assert_eq!(d.entities["GPU 0"]["GRACT"], vec![0.888]);
        assert_eq!(d.entities["GPU 0"]["TENSO"], vec![0.178]);
        assert_eq!(d.entities["GPU 1"]["SMACT"], vec![0.777]);
        assert!(!d.entities["GPU 2"].contains_key("GRACT"));
        let u = dmon_usage(&d);
        let g0 = u.gpus.iter().find(|g| g.index == 0).unwrap();
        assert_eq!(g0.util_gpu, Some(88.8));
        // GPU 1 shows no GRACT: SMACT stands in
        let g1 = u.gpus.iter().find(|g| g.index == 1).unwrap();
        assert_eq!(g1.util_gpu, Some(77.7));
        let g2 = u.gpus.iter().find(|g| g.index == 2).unwrap();
        assert_eq!(g2.util_gpu, None);
    }

    #[test]
    fn dmon_units_link_entities_and_gputl() {
        // DeviceMonitor.cpp prints `GPU 0 LINK 5` for a link entity; GPUTL is a percent
        let t = "#Entity   GPUTL      FBUSD      TMPTR\nID                    (MB)       (C)\nGPU 0     12         30000      45\nGPU 0     20         30010      46\nGPU 0 LINK 5    3    4    5\n";
        let d = parse_dmon(t).unwrap();
        assert_eq!(d.units, vec!["(MB)", "(C)"]);
        assert!(d.entities.contains_key("GPU 0 LINK 5"));
        let u = dmon_usage(&d);
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, Some(16.0));
        assert_eq!(u.gpus[0].util_gpu_max, Some(20.0));
        assert_eq!(u.gpus[0].memory_used_mib, Some(30005.0));
        assert_eq!(u.gpus[0].samples, 2);
        assert!(parse_dmon("#Entity GRACT\nnothing\n").is_err());
    }

    #[test]
    fn every_cut_of_the_fixtures_reads_or_errs() {
        for f in [
            "dcgmi/diag_r2_cuda_context_fail.txt",
            "dcgmi/diag_v4_software_pass.txt",
            "dcgmi/dmon_gract_smact.txt",
        ] {
            let t = fixture(f);
            for p in prefixes(&t, 37) {
                let _ = parse_diag(p);
                let _ = parse_dmon(p);
                let _ = parse_health(p);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]
        #[test]
        fn never_panics(lines in proptest::collection::vec(prop_oneof![
            Just("| GPU Memory                | Fail - GPU: 0                                  |".to_string()),
            Just("|                           | GPU0: Fail                                     |".to_string()),
            Just("| Warning                   | GPU 0 x".to_string()),
            Just("|       -> PCIe system      | Warning |".to_string()),
            Just("| Overall Health | Warning |".to_string()),
            Just("#Entity   GRACT   SMACT".to_string()),
            "GPU [0-9]{1,3} [0-9. NA/]{0,20}",
            "\\|[ -~]{0,60}\\|?",
            "\\PC{0,40}",
        ], 0..40)) {
            let t = lines.join("\n");
            let _ = parse_diag(&t);
            let _ = parse_health(&t);
            let _ = parse_dmon(&t);
        }
    }
    #[test]
    fn diag_json_all_skipped_reads_as_skipped() {
        // NVIDIA/DCGM#139 (healthy: a T400 whose level-3 tests are all skipped), `dcgmi diag -r 3
        // -j` as the poster pasted it, one category elided as `{"..."}`
        let t = include_str!("../../tests/fixtures/corpus/h9_dcgmdiag_dcgm139_json_skipped.json");
        assert!(looks_like_diag_json(t) && !looks_like_diag(t));
        let d = parse_diag_any(t).unwrap();
        let pcie = d.tests.iter().find(|t| t.name == "PCIe").unwrap();
        assert_eq!(pcie.stage, "Integration");
        assert_eq!(pcie.result, DiagResult::Skip);
        assert_eq!(pcie.gpus["skip"], vec![0]);
        assert!(
            d.tests
                .iter()
                .any(|t| t.name == "GPU Memory" && t.stage == "Hardware")
        );
        assert!(d.failed.is_empty() && d.failed_gpus.is_empty());
    }

    #[test]
    fn diag_json_failure_per_gpu() {
        // written for this test in the shape DCGM's own test verifies (testing/python3/tests/
        // test_dcgm_diag.py v3.3.9, test_dcgm_diag_per_gpu_responses_standalone_dcgmi): a Stress
        // test failing on GPU 0 with a thermal violation and passing on GPU 1
        let t = r#"{
	"DCGM GPU Diagnostic" : {
		"test_categories" : [
			{ "category" : "Deployment", "tests" : [ { "name" : "Denylist", "results" : [ { "status" : "Pass" } ] } ] },
			{ "category" : "Stress", "tests" : [ { "name" : "Targeted Power", "results" : [
				{ "gpu_id" : "0", "status" : "Fail", "warnings" : [ { "warning" : "Clocks are being throttled for GPU 0 because of clock throttling starting 0 seconds into the test.", "error_id" : 29, "error_category" : 5, "error_severity" : 3 } ] },
				{ "gpu_id" : "1", "status" : "Pass" } ] } ] }
		],
		"version" : "3.3.9"
	},
	"Driver Version Detected" : "535.129.03"
}"#;
        let d = parse_diag_any(t).unwrap();
        assert_eq!(d.dcgm_version.as_deref(), Some("3.3.9"));
        assert_eq!(d.driver_version.as_deref(), Some("535.129.03"));
        let tp = d.tests.iter().find(|t| t.name == "Targeted Power").unwrap();
        assert_eq!(tp.result, DiagResult::Fail);
        assert_eq!(tp.gpus["fail"], vec![0]);
        assert_eq!(tp.gpus["pass"], vec![1]);
        assert_eq!(d.failed_gpus, vec![0]);
        assert!(d.failure_messages[0].starts_with("Clocks are being throttled"));
        assert_eq!(d.tests[0].result, DiagResult::Pass);
    }

    #[test]
    fn dmon_xider_column_names_the_last_xid() {
        // NVIDIA/DCGM#263 (problem: GPU 1 unusable after a GSP fault), `dcgmi dmon -c 1 -e 230`
        let t = "#Entity    XIDER        \nID                      \nGPU 0      0            \nGPU 1      120          \nGPU 2      0            \n";
        let d = parse_dmon(t).unwrap();
        assert_eq!(dmon_xids(&d), vec![("GPU 1".to_string(), 120)]);
        // healthy: every GPU at 0, and a dmon without the field (NVIDIA/DCGM#244's SMACT run)
        let d = parse_dmon("#Entity    XIDER\nID\nGPU 0      0\nGPU 1      0\n").unwrap();
        assert!(dmon_xids(&d).is_empty());
        let d = parse_dmon("#Entity   SMACT\nID\nGPU 0     N/A\n").unwrap();
        assert!(dmon_xids(&d).is_empty());
    }

    #[test]
    fn nvsentinel_preflight_log_is_a_diag_run() {
        // NVIDIA/NVSentinel#772 (corpus h133): a clean level-2 run, `kubectl logs | jq`
        let t = include_str!(
            "../../tests/fixtures/corpus/h133_preflight_nvsentinel772_dcgm_diag_pass_json.txt"
        );
        assert!(looks_like_preflight_log(t) && looks_like_diag_any(t));
        assert!(!looks_like_diag(t) && !looks_like_diag_json(t));
        let d = parse_diag_any(t).unwrap();
        assert_eq!(d.tests.len(), 1, "{d:?}");
        assert_eq!(d.tests[0].name, "software");
        assert_eq!(d.tests[0].result, DiagResult::Pass);
        assert!(d.failed.is_empty() && d.not_run.is_empty() && d.failure_messages.is_empty());
        // the same PR's failing run (its `module` key cut by the stored copy, completed here):
        // a warned test keeps its GPU's UUID in its message, the escaped quotes unescaped
        let warn = "{\n  \"event\": \"Test warn\",\n  \"level\": \"warning\",\n  \"gpu\": \"GPU-64c6592e-0317-762b-fb32-0d561ed649ae\",\n  \"test\": \"software\",\n  \"error_code\": 29,\n  \"detail\": \"Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode by running \\\"nvidia-smi -i <gpuId> -pm 1 \\\" as root.\",\n  \"timestamp\": \"2026-02-04T05:19:40.606906Z\",\n  \"module\": \"preflight-dcgm-diag\",\n  \"version\": \"dev\"\n}\n";
        let d = parse_diag_any(warn).unwrap();
        assert_eq!(d.failed, vec!["software: warn".to_string()]);
        assert!(
            d.failure_messages[0]
                .starts_with("GPU-64c6592e-0317-762b-fb32-0d561ed649ae: Persistence Mode:")
                && d.failure_messages[0]
                    .contains("running \"nvidia-smi -i <gpuId> -pm 1 \" as root"),
            "{d:?}"
        );
        // one event a line, as the container writes it (`__main__.py` `_run_diagnostic`): a
        // failed result, a pass of another test, and the worst result kept per test
        let raw = r#"{"event": "Test fail", "level": "error", "gpu": "GPU-1", "test": "memory", "error_code": 12, "detail": "GPU 1 had uncorrectable memory errors", "module": "preflight-dcgm-diag", "version": "dev"}
{"event": "Test pass", "level": "info", "gpu": "GPU-0", "test": "memory", "error_code": 0, "detail": "Test passed", "module": "preflight-dcgm-diag", "version": "dev"}
{"event": "Test pass", "level": "info", "gpu": "GPU-0", "test": "pcie", "error_code": 0, "detail": "Test passed", "module": "preflight-dcgm-diag", "version": "dev"}
{"event": "DCGM diagnostic check failed", "level": "error", "module": "preflight-dcgm-diag", "version": "dev"}
"#;
        let d = parse_diag_any(raw).unwrap();
        assert_eq!(d.tests.len(), 2);
        assert_eq!(d.failed, vec!["memory: fail".to_string()]);
        assert_eq!(
            d.failure_messages,
            vec!["GPU-1: GPU 1 had uncorrectable memory errors".to_string()]
        );
        // a run that did not complete: why, and no test
        let down = r#"{"event": "DCGM diagnostic failed", "level": "error", "error": "Host engine connection invalid/disconnected", "module": "preflight-dcgm-diag", "version": "dev"}"#;
        let d = parse_diag_any(down).unwrap();
        assert!(d.tests.is_empty() && d.failed.is_empty());
        assert_eq!(
            d.not_run,
            vec!["Host engine connection invalid/disconnected".to_string()]
        );
        // neighbours not claimed: another preflight module's events, a JSON log of the same
        // shape from another program, prose naming the module
        for other in [
            r#"{"event": "Test fail", "test": "allreduce", "module": "preflight-nccl-allreduce"}"#,
            r#"{"event": "Test fail", "level": "error", "test": "memory"}"#,
            "the preflight-dcgm-diag init container failed on the node\n",
        ] {
            assert!(
                !looks_like_preflight_log(other) && !looks_like_diag_any(other),
                "{other}"
            );
        }
    }
}
