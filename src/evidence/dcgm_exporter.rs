//! What NVIDIA's dcgm-exporter serves on `/metrics` (and what a Prometheus console shows of it),
//! read by its own grammar. Written from the producer's source, github.com/NVIDIA/dcgm-exporter
//! at d5e5f51 (2026), with the field names and meanings of github.com/NVIDIA/DCGM at v4.6.0
//! (commit 72fa3fe), `dcgmlib/dcgm_fields.h`:
//!
//! - `internal/pkg/rendermetrics/render_metrics.go`: per counter a `# HELP <FieldName> <help>`
//!   and a `# TYPE <FieldName> gauge|counter` line, then one series per entity,
//!   `<FieldName>{gpu="N",UUID="GPU-…",pci_bus_id="…",device="nvidiaN",modelName="…"` (then
//!   `GPU_I_PROFILE`/`GPU_I_ID` for a MIG instance, `hostname`/`Hostname`, label counters such as
//!   `DCGM_FI_DRIVER_VERSION`, the pod's `container`/`namespace`/`pod`, and the attributes)
//!   `} <value>`. A field name is a DCGM field's (`DCGM_FI_DEV_GPU_UTIL`,
//!   `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, …) or one of the exporter's own (`DCGM_EXP_…`,
//!   `internal/pkg/counters/const.go`). Older releases (`gpu-monitoring-tools`) print the same
//!   lines with fewer labels; a Prometheus console lists the series `Name{labels}` without the
//!   value.
//! - `internal/pkg/collector/gpu_collector.go` `toMetric`: a `DCGM_FI_DEV_XID_ERRORS` series
//!   carries `err_code="<value>"` and `err_msg` (the Xid catalog's text); the value is the
//!   field's (`dcgm_fields.h`, field 230: "XID errors. The value is the specific XID error"),
//!   the last Xid the GPU reported, 0 for none.
//! - `internal/pkg/collector/xid_collector.go`: `DCGM_EXP_XID_ERRORS_COUNT{…,xid="<code>"} <n>`,
//!   the number of Xid `<code>` events in the window (`window_size_in_ms`); the series exists
//!   only for an Xid seen in it.
//!
//! Only the Xids are judged (kernel.log, `driver.xid-errors`): one sample of a gauge (an idle
//! GPU's 0% utilization, a clock-event bitmask) says nothing of a job over time.
//!
//! Like every evidence reader: never panics, reads what is there, bounded output.

use serde::Serialize;
use std::collections::BTreeMap;

/// One series as printed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Series {
    /// `DCGM_FI_DEV_GPU_UTIL`, `DCGM_EXP_XID_ERRORS_COUNT`, …
    pub name: String,
    /// The `gpu` label: the GPU's DCGM index.
    pub gpu: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// None for a Prometheus console's series list, which prints no value.
    pub value: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmExporter {
    pub series: Vec<Series>,
    /// Field names, in the order first seen (series and `# HELP`/`# TYPE` lines).
    pub metrics: Vec<String>,
    /// GPUs named by a `gpu` label.
    pub gpus: Vec<String>,
    /// Xids the series report: (GPU or `?`, code).
    pub xids: Vec<(String, u32)>,
}

/// A metric name of the exporter: a DCGM field's or the exporter's own.
fn metric_name(s: &str) -> Option<&str> {
    if !(s.starts_with("DCGM_FI_") || s.starts_with("DCGM_EXP_")) {
        return None;
    }
    let end = s
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(s.len());
    (end > 8).then(|| &s[..end])
}

/// `key="value",key="value"` up to the closing `}` (values escape `"` and `\` as Prometheus
/// does): the labels and the rest of the line after the brace.
fn labels(s: &str) -> Option<(BTreeMap<String, String>, &str)> {
    let mut out = BTreeMap::new();
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i] == b',' || b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i < b.len() && b[i] == b'}' {
            return Some((out, &s[i + 1..]));
        }
        let k0 = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i == k0 || i >= b.len() || b[i] != b'=' {
            return None;
        }
        let key = &s[k0..i];
        i += 1;
        if i >= b.len() || b[i] != b'"' {
            return None;
        }
        i += 1;
        let mut val = String::new();
        loop {
            let c = *b.get(i)?;
            match c {
                b'"' => break,
                b'\\' => {
                    let n = *b.get(i + 1)?;
                    val.push(if n == b'n' { '\n' } else { n as char });
                    i += 2;
                }
                _ => {
                    // copy the whole UTF-8 character
                    let ch = s[i..].chars().next()?;
                    val.push(ch);
                    i += ch.len_utf8();
                }
            }
        }
        i += 1;
        if out.len() < 64 {
            out.insert(key.to_string(), super::clip(&val, 200));
        }
    }
}

/// `Name{labels} value [timestamp]`, or `Name{labels}` alone (a console's series list).
fn series_line(line: &str) -> Option<Series> {
    let l = line.trim();
    let name = metric_name(l)?;
    let rest = l[name.len()..].strip_prefix('{')?;
    let (labels, after) = labels(rest)?;
    let after = after.trim();
    let value = match after.split_whitespace().next() {
        None => None,
        Some(v) => Some(match v {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            _ => v.parse::<f64>().ok()?,
        }),
    };
    Some(Series {
        name: name.to_string(),
        gpu: labels.get("gpu").cloned(),
        labels,
        value,
    })
}

/// `# HELP DCGM_FI_… …` / `# TYPE DCGM_FI_… gauge`: the field it announces.
fn help_line(line: &str) -> Option<&str> {
    let l = line.trim();
    let rest = l
        .strip_prefix("# HELP ")
        .or_else(|| l.strip_prefix("# TYPE "))?;
    metric_name(rest)
}

/// A series line of the exporter, or its HELP/TYPE line.
pub fn looks_like_dcgm_exporter(text: &str) -> bool {
    text.lines()
        .take(2000)
        .any(|l| series_line(l).is_some() || help_line(l).is_some())
}

fn code(s: &str) -> Option<u32> {
    let n: u32 = s.trim().parse().ok()?;
    (1..100_000).contains(&n).then_some(n)
}

pub fn parse_dcgm_exporter(text: &str) -> Result<DcgmExporter, super::ParseError> {
    let mut d = DcgmExporter::default();
    for line in text.lines().take(1_000_000) {
        if let Some(n) = help_line(line) {
            if !d.metrics.iter().any(|m| m == n) && d.metrics.len() < super::MAX_ITEMS {
                d.metrics.push(n.to_string());
            }
            continue;
        }
        let Some(s) = series_line(line) else {
            continue;
        };
        if !d.metrics.contains(&s.name) && d.metrics.len() < super::MAX_ITEMS {
            d.metrics.push(s.name.clone());
        }
        if let Some(g) = &s.gpu
            && !d.gpus.contains(g)
            && d.gpus.len() < super::MAX_ITEMS
        {
            d.gpus.push(g.clone());
        }
        let on = s.gpu.clone().unwrap_or_else(|| "?".into());
        let xid = match s.name.as_str() {
            // the value is the last Xid; `err_code` repeats it where the value is not printed
            "DCGM_FI_DEV_XID_ERRORS" => s
                .value
                .and_then(|v| (v.is_finite() && v >= 1.0).then(|| code(&format!("{}", v as u64))))
                .flatten()
                .or_else(|| s.labels.get("err_code").and_then(|c| code(c))),
            // a count of events of the `xid` label's code; absent when none
            "DCGM_EXP_XID_ERRORS_COUNT" | "DCGM_FI_DEV_XID_ERRORS_ACTIVE" => {
                if s.value.is_none_or(|v| v > 0.0) {
                    s.labels.get("xid").and_then(|c| code(c))
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(x) = xid
            && !d.xids.contains(&(on.clone(), x))
            && d.xids.len() < super::MAX_ITEMS
        {
            d.xids.push((on, x));
        }
        if d.series.len() < super::MAX_ITEMS {
            d.series.push(s);
        }
    }
    if d.series.is_empty() && d.metrics.is_empty() {
        return Err(super::ParseError::NotThisKind(
            "no dcgm-exporter series in the text (expected `DCGM_FI_…{gpu=\"0\",…} value`)",
        ));
    }
    Ok(d)
}

/// dcgm-exporter's `/metrics`.
pub struct DcgmExporterKind;

impl super::EvidenceKind for DcgmExporterKind {
    fn name(&self) -> &'static str {
        "dcgm-exporter"
    }
    fn doc(&self) -> &'static str {
        "dcgm-exporter's Prometheus metrics: DCGM fields per GPU (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_*, DCGM_FI_DEV_XID_ERRORS, ...)"
    }
    fn example(&self) -> &'static str {
        "curl -s localhost:9400/metrics"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "series",
                "per series: metric name, gpu label, labels, value (none in a console's series list)",
            ),
            ("metrics", "metric names, in the order first seen"),
            ("gpus", "GPUs named by a gpu label"),
            (
                "xids",
                "Xids the series report: DCGM_FI_DEV_XID_ERRORS's value or err_code, DCGM_EXP_XID_ERRORS_COUNT's xid",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["kernel.log"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_dcgm_exporter(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_dcgm_exporter(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // NVIDIA/DCGM#235: the series a Prometheus console listed, no value printed
    const XID45_CONSOLE: &str = "DCGM_FI_DEV_XID_ERRORS{err_code=\"45\", err_msg=\"Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda\", job=\"dcgm-exporter\"}\n";
    // NVIDIA/gpu-operator#340: a T4 under dcgmproftester, no Xid
    const T4_NO_XID: &str = "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\nDCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-e1200d64-e918-4277-cad9-75da90b9f618\",device=\"nvidia0\",modelName=\"Tesla T4\",Hostname=\"nvidia-dcgm-exporter-ml2wh\",container=\"dcgmproftester11\",namespace=\"default\",pod=\"dcgmproftester\"} 0\n";

    #[test]
    fn an_xid_series_is_read_from_its_value_or_err_code() {
        let d = parse_dcgm_exporter(XID45_CONSOLE).unwrap();
        assert_eq!(d.xids, vec![("?".to_string(), 45)]);
        assert_eq!(d.series[0].value, None);
        let v = "DCGM_FI_DEV_XID_ERRORS{gpu=\"3\",UUID=\"GPU-a\",device=\"nvidia3\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n\",err_code=\"79\",err_msg=\"GPU has fallen off the bus\"} 79\n";
        assert_eq!(parse_dcgm_exporter(v).unwrap().xids, vec![("3".into(), 79)]);
        // the exporter's window count names its Xid in a label
        let c = "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-b\",device=\"nvidia0\",modelName=\"NVIDIA T400 4GB\",Hostname=\"w\",window_size_in_ms=\"300000\",xid=\"42\"} 1\n";
        assert_eq!(parse_dcgm_exporter(c).unwrap().xids, vec![("0".into(), 42)]);
    }

    #[test]
    fn a_zero_xid_and_other_fields_are_no_xid() {
        let d = parse_dcgm_exporter(T4_NO_XID).unwrap();
        assert!(d.xids.is_empty());
        assert_eq!(d.gpus, vec!["0".to_string()]);
        assert_eq!(d.series[0].labels["modelName"], "Tesla T4");
        assert_eq!(d.metrics, vec!["DCGM_FI_DEV_XID_ERRORS".to_string()]);
        let idle = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"0\",UUID=\"GPU-8\",device=\"nvidia0\",modelName=\"NVIDIA A30\",GPU_I_PROFILE=\"1g.6gb\",GPU_I_ID=\"3\",Hostname=\"h\"} 1\n";
        assert!(parse_dcgm_exporter(idle).unwrap().xids.is_empty());
    }

    #[test]
    fn only_the_exporters_own_lines_are_claimed() {
        assert!(looks_like_dcgm_exporter(XID45_CONSOLE));
        assert!(looks_like_dcgm_exporter(T4_NO_XID));
        // its counters CSV, a PromQL expression in prose, another exporter's series
        for t in [
            "DCGM_FI_DEV_XID_ERRORS,            gauge,   Value of the last XID error encountered.\n",
            "max(DCGM_FI_DEV_XID_ERRORS{err_code=~\"4|8\"}) by (Hostname)\n",
            "nvidia_smi_utilization_gpu_ratio{uuid=\"x\"} 0.5\n",
            "we alert on DCGM_FI_DEV_XID_ERRORS when it is not 0\n",
        ] {
            assert!(!looks_like_dcgm_exporter(t), "{t}");
        }
    }

    #[test]
    fn never_panics_on_cut_lines() {
        for t in [
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"1",
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"é\\",
            "DCGM_FI_{}",
            "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} 1e30",
            "# HELP DCGM_",
        ] {
            let _ = parse_dcgm_exporter(t);
            let _ = looks_like_dcgm_exporter(t);
        }
    }
}
