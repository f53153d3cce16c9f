//! dcgm-exporter's own process log (what `kubectl logs <dcgm-exporter pod>` or its journal
//! shows), as opposed to the metrics it serves ([`super::dcgm_exporter`]). Written from the
//! producer's source, github.com/NVIDIA/dcgm-exporter, read through the search index (2026-12):
//!
//! - 4.x, `pkg/cmd/app.go` `runDCGMExporter`: Go's `log/slog` (text by default, `--log-format
//!   json` for JSON), `slog.Info("Starting dcgm-exporter", slog.String("Version", version))`
//!   first, so a line `time=<RFC 3339 ms> level=INFO msg="Starting dcgm-exporter"
//!   Version=4.2.3-4.1.3`; the slog `TextHandler`'s keys `time=`, `level=` (`DEBUG`, `INFO`,
//!   `WARN`, `ERROR`), `msg=`, then the attributes (see [`super::slog_log`] for the grammar).
//!   Then the start-up records: `Attempting to initialize DCGM.`, `Initialized DCGM Fields
//!   module.`, `Attempting to initialize NVML library.`, `DCGM successfully initialized!`, `NVML
//!   provider successfully initialized!`, `Collecting DCP Metrics` or `Not collecting DCP
//!   metrics: <reason>`, `Falling back to metric file '<csv>'`, `Initializing system entities of
//!   type '<GPU|NvSwitch|NvLink|CPU|CPU Core>'`, `Not collecting <X> metrics; …`, `Pipeline
//!   starting`, `Starting webserver`; its prerequisite check fails with `the libdcgm.so.4
//!   library was not found. Install Data Center GPU Manager (DCGM).` at `level=ERROR`.
//! - 2.x–3.x, the same file with logrus (`logrus.Info("Starting dcgm-exporter")`, `logrus.Info
//!   ("DCGM successfully initialized!")`, `logrus.Fatal(err)`), whose text formatter writes
//!   `time="<RFC 3339>" level=info msg="…"` (levels `debug`, `info`, `warning`, `error`,
//!   `fatal`, `panic`), or on a terminal `INFO[0000] …` (the level's first four letters upper-case,
//!   then the seconds since start). An embedded host engine that cannot load NVML prints `Error:
//!   Failed to initialize NVML` on its own line before the exporter's `level=fatal msg="Error
//!   starting nv-hostengine: DCGM initialization error"` (github.com/virtaitech/orion's and
//!   imroc's pastes of 2.x/3.x; NVIDIA/dcgm-exporter#250's 3.3.5).
//!
//! A line may carry a journal or container prefix before `time=` or the level tag (`Feb 28
//! 16:29:08 gx01 dcgm-exporter[1298060]: `, containerd's `<RFC 3339> stderr F `). A text is this
//! kind when it holds one of the exporter's own start-up records: a logrus or slog line of any
//! other Go program is not. No rule judges it yet: the log says whether the exporter could
//! reach DCGM and NVML, which the report names; a failure to load NVML is also read by
//! `nvidia-smi-error` where its words are NVML's own.
//!
//! Like every evidence reader: never panics, reads what is there, bounded output.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmExporterLog {
    /// Log records read (slog, logrus text or logrus terminal lines).
    pub lines: u64,
    /// The `Version` attribute of 4.x's start record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `DCGM successfully initialized!` was logged.
    pub dcgm_initialized: bool,
    /// `Collecting DCP Metrics` (true) or `Not collecting DCP metrics: …` (false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcp_metrics: Option<bool>,
    /// The embedded host engine's `Error: Failed to initialize NVML` line.
    pub nvml_failed: bool,
    /// Messages of records at error, fatal or panic level (bounded).
    pub errors: Vec<String>,
}

// logrus text: `time="…" level=info msg=`; slog text: `time=… level=INFO msg=`
static KV: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:^|\s)time=(?:"[^"]*"|\S+) level=(debug|info|warning|error|fatal|panic|DEBUG|INFO|WARN|ERROR)(?:[+-]\d+)? msg=("(?:[^"\\]|\\.)*"|\S+)(.*)$"#,
    )
    .expect("static regex")
});
// logrus on a terminal: `INFO[0000] Starting dcgm-exporter`
static TTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)(DEBU|INFO|WARN|ERRO|FATA|PANI)\[\d{4,}\] (.*)$").expect("static regex")
});
static VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?:^|\s)Version=("?)([\w.+-]+)"#).expect("static regex"));

/// The exporter's own start-up messages (module doc): a record with one of these is the
/// exporter's, not some other Go program's.
const OWN: &[&str] = &[
    "Starting dcgm-exporter",
    "DCGM successfully initialized!",
    "Collecting DCP Metrics",
    "Not collecting DCP metrics",
    "Attempting to initialize DCGM.",
    "Initialized DCGM Fields module.",
    "Attempting to initialize NVML library.",
    "NVML provider successfully initialized!",
    "Initializing system entities of type",
    "the libdcgm.so.4 library was not found",
    "Error starting nv-hostengine",
    "Attemping to connect to remote hostengine",
];

/// One record: its level (lower case, 4 letters at most) and message.
fn record(line: &str) -> Option<(String, String)> {
    if let Some(c) = KV.captures(line) {
        let raw = &c[2];
        let msg = if raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"') {
            raw[1..raw.len() - 1].replace("\\\"", "\"")
        } else {
            raw.to_string()
        };
        let level: String = c[1].to_ascii_lowercase().chars().take(4).collect();
        return Some((level, msg));
    }
    let c = TTY.captures(line)?;
    Some((c[1].to_ascii_lowercase(), c[2].trim_end().to_string()))
}

/// True for a record whose message is one of the exporter's own.
pub fn is_own_record(line: &str) -> bool {
    record(line).is_some_and(|(_, m)| OWN.iter().any(|o| m.starts_with(o)))
}

pub fn parse_dcgm_exporter_log(text: &str) -> DcgmExporterLog {
    let mut out = DcgmExporterLog::default();
    let mut started = false;
    for line in text.lines().take(50_000) {
        let line = line.trim_end();
        if line
            .trim_start()
            .starts_with("Error: Failed to initialize NVML")
        {
            out.nvml_failed = true;
            continue;
        }
        let Some((level, msg)) = record(line) else {
            continue;
        };
        if !started && !OWN.iter().any(|o| msg.starts_with(o)) {
            continue;
        }
        started = true;
        out.lines += 1;
        if msg == "Starting dcgm-exporter"
            && let Some(v) = VERSION.captures(line)
        {
            out.version = Some(v[2].to_string());
        }
        if msg == "DCGM successfully initialized!" {
            out.dcgm_initialized = true;
        }
        if msg == "Collecting DCP Metrics" {
            out.dcp_metrics = Some(true);
        } else if msg.starts_with("Not collecting DCP metrics") {
            out.dcp_metrics = Some(false);
        }
        if matches!(level.as_str(), "erro" | "fata" | "pani") && out.errors.len() < super::MAX_ITEMS
        {
            out.errors.push(super::clip(&msg, 200));
        }
    }
    out
}

pub struct DcgmExporterLogKind;

impl super::EvidenceKind for DcgmExporterLogKind {
    fn name(&self) -> &'static str {
        "dcgm-exporter-log"
    }
    fn doc(&self) -> &'static str {
        "dcgm-exporter's own process log (slog in 4.x, logrus before): whether it reached DCGM and NVML, its version, DCP metrics, errors"
    }
    fn example(&self) -> &'static str {
        "kubectl logs -n gpu-operator <nvidia-dcgm-exporter pod>"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("lines", "log records read"),
            (
                "version",
                "the Version of 4.x's Starting dcgm-exporter record",
            ),
            (
                "dcgm_initialized",
                "DCGM successfully initialized! was logged",
            ),
            (
                "dcp_metrics",
                "Collecting DCP Metrics (true) or Not collecting DCP metrics (false)",
            ),
            (
                "nvml_failed",
                "the embedded host engine's Error: Failed to initialize NVML line",
            ),
            (
                "errors",
                "messages of records at error, fatal or panic level",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        s.unquoted.lines().any(is_own_record)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_dcgm_exporter_log(text);
        if v.lines == 0 {
            return Err(super::ParseError::NotThisKind(
                "no dcgm-exporter log record (time=… level=… msg=\"Starting dcgm-exporter\" and the like)",
            ));
        }
        super::to_value(&v)
    }
    fn marker(&self, line: &str) -> bool {
        is_own_record(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[
            "dcgm-exporter",
            "DCGM",
            "DCP",
            "NVML",
            "system entities of type",
            "libdcgm",
            "hostengine",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_4x_slog_start_up() {
        // github.com/NVIDIA/dcgm-exporter/issues/536 (corpus h164_dcgmexp_dcgmexporter536_…):
        // 4.2.3-4.1.3 in the GPU Operator, healthy start-up
        let t = "Defaulted container \"nvidia-dcgm-exporter\" out of: nvidia-dcgm-exporter, toolkit-validation (init)\ntime=2025-08-20T09:31:33.965Z level=DEBUG msg=\"Debug output is enabled\"\ntime=2025-08-20T09:31:33.967Z level=INFO msg=\"Starting dcgm-exporter\" Version=4.2.3-4.1.3\ntime=2025-08-20T09:31:33.977Z level=INFO msg=\"Attempting to initialize DCGM.\"\ntime=2025-08-20T09:31:34.038Z level=INFO msg=\"DCGM successfully initialized!\"\ntime=2025-08-20T09:31:34.038Z level=INFO msg=\"Collecting DCP Metrics\"\n";
        assert!(t.lines().any(is_own_record));
        let v = parse_dcgm_exporter_log(t);
        assert_eq!(v.lines, 4);
        assert_eq!(v.version.as_deref(), Some("4.2.3-4.1.3"));
        assert!(v.dcgm_initialized && !v.nvml_failed && v.errors.is_empty());
        assert_eq!(v.dcp_metrics, Some(true));
        // problem: 4.4.2-4.7.0 on a node without DCGM's library (a Korean blog's paste of an
        // EKS Auto Mode pod, as the search index stores it)
        let t = "time=2025-12-11T06:53:46.917Z level=INFO msg=\"Starting dcgm-exporter\" Version=4.4.2-4.7.0\ntime=2025-12-11T06:53:46.918Z level=ERROR msg=\"the libdcgm.so.4 library was not found. Install Data Center GPU Manager (DCGM).\"\n";
        let v = parse_dcgm_exporter_log(t);
        assert!(!v.dcgm_initialized);
        assert_eq!(
            v.errors,
            ["the libdcgm.so.4 library was not found. Install Data Center GPU Manager (DCGM)."]
        );
    }

    #[test]
    fn the_logrus_releases_text_terminal_and_journal() {
        // github.com/NVIDIA/dcgm-exporter/issues/250 (3.3.5): logrus text, healthy
        let t = "time=\"2024-03-01T14:31:04Z\" level=info msg=\"Starting dcgm-exporter\"\ntime=\"2024-03-01T14:31:04Z\" level=info msg=\"DCGM successfully initialized!\"\ntime=\"2024-03-01T14:31:05Z\" level=info msg=\"Collecting DCP Metrics\"\n";
        let v = parse_dcgm_exporter_log(t);
        assert_eq!((v.lines, v.dcgm_initialized), (3, true));
        // github.com/NVIDIA/dcgm-exporter/issues/368: logrus on a terminal
        let t = "INFO[0000] Starting dcgm-exporter                       \nINFO[0000] DCGM successfully initialized!               \nINFO[0000] Collecting DCP Metrics                       \n";
        let v = parse_dcgm_exporter_log(t);
        assert_eq!((v.lines, v.dcp_metrics), (3, Some(true)));
        // a host's journal (the DCGM-exporter paste of a DGX with nv-hostengine beside it)
        let t = "Feb 28 16:29:08 gx01 dcgm-exporter[1298060]: time=\"2024-02-28T16:29:08+01:00\" level=info msg=\"Starting dcgm-exporter\"\nFeb 28 16:29:08 gx01 dcgm-exporter[1298060]: time=\"2024-02-28T16:29:08+01:00\" level=info msg=\"Attemping to connect to remote hostengine at localhost:5555\"\n";
        assert_eq!(parse_dcgm_exporter_log(t).lines, 2);
        // problem: an embedded host engine without NVML (github.com/virtaitech/orion's docs)
        let t = "time=\"2020-05-21T06:58:03Z\" level=info msg=\"Starting dcgm-exporter\"\nError: Failed to initialize NVML\ntime=\"2020-05-21T06:58:03Z\" level=fatal msg=\"Error starting nv-hostengine: DCGM initialization error\"\n";
        let v = parse_dcgm_exporter_log(t);
        assert!(v.nvml_failed);
        assert_eq!(
            v.errors,
            ["Error starting nv-hostengine: DCGM initialization error"]
        );
        // DCP off (github.com/NVIDIA/dcgm-exporter/issues/303, a Tesla P4)
        let t = "dcgm-exporter  | time=\"2024-04-02T20:39:31Z\" level=info msg=\"Starting dcgm-exporter\"\ndcgm-exporter  | time=\"2024-04-02T20:39:31Z\" level=info msg=\"Not collecting DCP metrics: This request is serviced by a module of DCGM that is not currently loaded\"\n";
        assert_eq!(parse_dcgm_exporter_log(t).dcp_metrics, Some(false));
    }

    #[test]
    fn other_go_logs_and_prose_are_not_the_exporters() {
        for line in [
            // another logrus program, an ollama slog record, prose
            "time=\"2024-03-01T14:31:04Z\" level=info msg=\"Starting webserver\"",
            "time=2024-11-10T21:32:56.205+08:00 level=WARN source=sched.go:137 msg=\"mllama doesn't support parallel requests yet\"",
            "we were Starting dcgm-exporter when it crashed",
            "INFO Starting dcgm-exporter",
        ] {
            assert!(!is_own_record(line), "{line}");
        }
        // a log of another program, even with the exporter's later words, is not read
        let t = "time=\"2024-03-01T14:31:04Z\" level=info msg=\"Pipeline starting\"\n";
        assert_eq!(parse_dcgm_exporter_log(t).lines, 0);
    }
}
