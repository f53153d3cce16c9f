//! A Go server's `log/slog` text lines, as ollama's server log prints them (its journal under
//! systemd, `ollama serve` in a terminal, `server.log` on Windows and macOS). Written from:
//!
//! - Go's `log/slog` `TextHandler` (go/src/log/slog/text_handler.go and handler.go, Go 1.21+):
//!   one line per record, `key=value` pairs separated by single spaces, the built-in keys first
//!   and in this order: `time=<RFC 3339 with ms>`, `level=<DEBUG|INFO|WARN|ERROR>` (or
//!   `DEBUG-4`-style offsets), `source=<file>:<line>` when `AddSource` is set (ollama sets it:
//!   `source=sched.go:714`), `msg=<message>`, then the record's own attributes; a value is
//!   quoted (`strconv.Quote`) when it holds a space, `=`, a quote or a control character;
//! - ollama's GPU lines (github.com/ollama/ollama): `discover/types.go` `LogDetails` logs
//!   `msg="inference compute"` once per device with `id`, `library` (`cuda`, `rocm`, `cpu`),
//!   `compute`, `driver`, `name`, `total` and `available` (`format.HumanBytes2`); `llm/memory.go`
//!   logs `msg="offload to <library>"` with `layers.requested`, `layers.model` and
//!   `layers.offload` (how many of the model's layers go to the GPU).
//!
//! A journal or container prefix before `time=` (`ollama[1773]: `, `Nov 10 21:32:56 host
//! ollama[1773]: `) is allowed. No rule reads this kind yet: ollama's scheduling (which layers
//! it offloads) is its own, and a paste of it is recognised, so it is not "cannot tell what this
//! is", and the GPUs it found and the layers it offloaded are named in the report.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// One `msg="inference compute"` device.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct ComputeDevice {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct SlogLog {
    /// slog lines read.
    pub lines: u64,
    /// Records at `level=WARN`.
    pub warnings: u64,
    /// Records at `level=ERROR`, their messages (bounded).
    pub errors: Vec<String>,
    /// ollama's `inference compute` devices.
    pub devices: Vec<ComputeDevice>,
    /// The library of the last `offload to <library>` record (`cuda`, `rocm`, `cpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offload_library: Option<String>,
    /// Its `layers.model` and `layers.offload`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers_model: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers_offload: Option<u32>,
}

// the built-in keys in TextHandler's order; a journal/container prefix may come first
static RECORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|\s)time=\S+ level=(DEBUG|INFO|WARN|ERROR)(?:[+-]\d+)? source=\S+\.go:\d+ msg=",
    )
    .expect("static regex")
});
// `key=value` or `key="quoted value"` (strconv.Quote escapes inner quotes with a backslash)
static ATTR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:^|\s)([A-Za-z_][\w.]*)=("(?:[^"\\]|\\.)*"|\S*)"#).expect("static regex")
});

/// True for one slog record line with its source (what `marker` accepts).
pub fn is_record(line: &str) -> bool {
    line.contains(" source=") && RECORD.is_match(line)
}

fn attrs(line: &str) -> Vec<(String, String)> {
    let start = RECORD.find(line).map(|m| m.start()).unwrap_or(0);
    ATTR.captures_iter(&line[start..])
        .map(|c| {
            let v = c[2].to_string();
            let v = if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
                v[1..v.len() - 1].replace("\\\"", "\"")
            } else {
                v
            };
            (c[1].to_string(), v)
        })
        .collect()
}

/// Reads every slog record of `text`, skipping other lines.
pub fn parse_slog_log(text: &str) -> SlogLog {
    let mut out = SlogLog::default();
    for line in text.lines() {
        let line = line.trim_end();
        let Some(c) = RECORD.captures(line) else {
            continue;
        };
        if !line.contains(" source=") {
            continue;
        }
        out.lines += 1;
        let a = attrs(line);
        let get = |k: &str| a.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let msg = get("msg").unwrap_or_default();
        match &c[1] {
            "WARN" => out.warnings += 1,
            "ERROR" if out.errors.len() < super::MAX_ITEMS => {
                out.errors.push(super::clip(&msg, 200));
            }
            _ => {}
        }
        if msg == "inference compute" && out.devices.len() < super::MAX_ITEMS {
            out.devices.push(ComputeDevice {
                id: get("id").unwrap_or_default(),
                library: get("library"),
                name: get("name"),
                compute: get("compute"),
                driver: get("driver"),
                total: get("total"),
                available: get("available"),
            });
        } else if let Some(lib) = msg.strip_prefix("offload to ") {
            out.offload_library = Some(lib.to_string());
            out.layers_model = get("layers.model").and_then(|v| v.parse().ok());
            out.layers_offload = get("layers.offload").and_then(|v| v.parse().ok());
        }
    }
    out
}

pub struct SlogLogKind;

impl super::EvidenceKind for SlogLogKind {
    fn name(&self) -> &'static str {
        "slog-log"
    }
    fn doc(&self) -> &'static str {
        "a Go server's log/slog lines, as ollama's server log prints them: the GPUs it found and the layers it offloaded"
    }
    fn example(&self) -> &'static str {
        "journalctl -u ollama --no-pager"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("lines", "slog records read (time=, level=, source=, msg=)"),
            ("warnings", "records at level=WARN"),
            ("errors", "the messages of records at level=ERROR"),
            (
                "devices",
                "ollama's `inference compute` devices: id, library, name, compute, driver, total, available",
            ),
            (
                "offload_library",
                "the library of `offload to <library>` (cuda, rocm, cpu)",
            ),
            ("layers_model", "its layers.model"),
            ("layers_offload", "its layers.offload"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        s.unquoted.lines().any(is_record)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_slog_log(text);
        if v.lines == 0 {
            return Err(super::ParseError::NotThisKind(
                "no log/slog record (time=… level=… source=FILE.go:N msg=…)",
            ));
        }
        super::to_value(&v)
    }
    fn marker(&self, line: &str) -> bool {
        is_record(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &[" source="]
    }
    fn has_markers(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_journal_records_devices_and_offload() {
        // ollama/ollama#7597 (0.4.1): the journal prefix, a GIN line (not slog), slog records
        let t = "ollama[1773]: [GIN] 2024/11/10 - 21:32:56 | 200 |   22.078108ms |       127.0.0.1 | POST     \"/api/show\"\nollama[1773]: time=2024-11-10T21:32:56.205+08:00 level=WARN source=sched.go:137 msg=\"mllama doesn't support parallel requests yet\"\nollama[1773]: time=2024-11-10T21:32:56.440+08:00 level=INFO source=server.go:105 msg=\"system memory\" total=\"15.4 GiB\" free=\"11.3 GiB\" free_swap=\"12.2 GiB\"\n";
        assert!(t.lines().any(is_record));
        let v = parse_slog_log(t);
        assert_eq!((v.lines, v.warnings), (2, 1));
        assert!(v.errors.is_empty() && v.devices.is_empty());
        // written for this test from discover/types.go's `LogDetails` (its keys, in its order)
        // and llm/memory.go's `offload to cuda` (the keys #7597's stored copy shows)
        let t = "time=2024-11-10T21:30:01.001+08:00 level=INFO source=types.go:123 msg=\"inference compute\" id=GPU-957abb1f-e95c-db43-ee81-b345b6e60491 library=cuda variant=v12 compute=8.9 driver=12.4 name=\"NVIDIA GeForce RTX 4060 Ti\" total=\"15.7 GiB\" available=\"15.0 GiB\"\ntime=2024-11-10T21:32:56.442+08:00 level=INFO source=memory.go:343 msg=\"offload to cuda\" layers.requested=-1 layers.model=41 layers.offload=41 layers.split=\"\"\n";
        let v = parse_slog_log(t);
        assert_eq!(v.devices.len(), 1);
        let d = &v.devices[0];
        assert_eq!(d.library.as_deref(), Some("cuda"));
        assert_eq!(d.name.as_deref(), Some("NVIDIA GeForce RTX 4060 Ti"));
        assert_eq!(d.compute.as_deref(), Some("8.9"));
        assert_eq!(d.available.as_deref(), Some("15.0 GiB"));
        assert_eq!(v.offload_library.as_deref(), Some("cuda"));
        assert_eq!((v.layers_model, v.layers_offload), (Some(41), Some(41)));
        // problem: ollama/ollama#4726 (0.1.x): 220 MiB free, no layer on the GPU (its older
        // `layers.real` key, not read); then an ERROR record, written for this test
        let t = "time=2024-06-01T14:10:13.332+03:00 level=INFO source=memory.go:133 msg=\"offload to gpu\" layers.requested=-1 layers.real=0 memory.available=\"220.7 MiB\" memory.required.full=\"4.6 GiB\"\ntime=2024-06-01T14:10:14.001+03:00 level=ERROR source=sched.go:344 msg=\"error loading llama server\" error=\"llama runner process has terminated\"\n";
        let v = parse_slog_log(t);
        assert_eq!(v.offload_library.as_deref(), Some("gpu"));
        assert_eq!((v.layers_model, v.layers_offload), (None, None));
        assert_eq!(v.errors, ["error loading llama server"]);
    }

    #[test]
    fn prose_and_other_logs_are_not_records() {
        for line in [
            "the log says level=INFO and msg=offload, see source=sched.go",
            "2024-11-10 21:32:56 INFO offload to cuda",
            "time=2024-11-10T21:32:56 level=INFO msg=\"no source key\"",
            "[GIN] 2024/11/10 - 21:32:56 | 200 | 22ms | 127.0.0.1 | POST \"/api/show\"",
        ] {
            assert!(!is_record(line), "{line}");
        }
        assert_eq!(
            parse_slog_log("garbled time= level= source= msg=\n").lines,
            0
        );
    }
}
