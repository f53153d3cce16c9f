//! `pressure`: Linux pressure stall information (PSI) for CPU, IO and memory.

use super::{Probe, ProbeCtx, ProbeOutcome};
use serde_json::{Map, Value, json};

pub struct Pressure;

/// Parse one `/proc/pressure/*` file into `{some: {avg10, avg60, avg300, total}, full: ...}`.
/// Lines that do not parse are skipped; `total` is in microseconds.
pub fn parse_pressure(text: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(kind) = words.next() else { continue };
        if kind != "some" && kind != "full" {
            continue;
        }
        let mut vals = Map::new();
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                continue;
            };
            let num = if k == "total" {
                v.parse::<u64>().ok().map(Value::from)
            } else {
                v.parse::<f64>().ok().map(Value::from)
            };
            if let Some(n) = num {
                vals.insert(k.to_string(), n);
            }
        }
        out.insert(kind.to_string(), Value::Object(vals));
    }
    out
}

impl Probe for Pressure {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "pressure"
    }
    fn doc(&self) -> &'static str {
        "CPU, IO and memory pressure stall information from /proc/pressure."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "cpu.some.avg10",
                "percent of the last 10 s some task waited for CPU (also avg60, avg300)",
            ),
            ("cpu.some.total", "total stall time, microseconds"),
            (
                "cpu.full",
                "all non-idle tasks stalled at once (same fields; newer kernels)",
            ),
            ("io.some / io.full", "the same for IO"),
            ("memory.some / memory.full", "the same for memory"),
            (
                "unavailable.RESOURCE",
                "why a resource is missing (its file could not be read)",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut out = Map::new();
        let mut unavailable = Map::new();
        for res in ["cpu", "io", "memory"] {
            let path = format!("/proc/pressure/{res}");
            match ctx.host.read_file(&path) {
                Ok(b) => {
                    out.insert(
                        res.into(),
                        Value::Object(parse_pressure(&String::from_utf8_lossy(&b))),
                    );
                }
                Err(e) => {
                    unavailable.insert(res.into(), json!(format!("cannot read `{path}`: {e}")));
                }
            }
        }
        if out.is_empty()
            && !ctx.host.is_live()
            && unavailable.values().any(|v| {
                v.as_str()
                    .is_some_and(|s| s.contains(crate::host::NOT_IN_EVIDENCE))
            })
        {
            return ProbeOutcome::Unknown(format!(
                "/proc/pressure: {}",
                crate::host::NOT_IN_EVIDENCE
            ));
        }
        if out.is_empty() {
            return ProbeOutcome::Unknown("PSI not available (kernel without CONFIG_PSI)".into());
        }
        if !unavailable.is_empty() {
            out.insert("unavailable".into(), Value::Object(unavailable));
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};
    use std::time::Duration;

    #[test]
    fn parses_some_and_full() {
        let p = parse_pressure(
            "some avg10=3.15 avg60=0.79 avg300=0.17 total=590561\nfull avg10=1.00 avg60=0.50 avg300=0.10 total=586180\n",
        );
        assert_eq!(p["some"]["avg10"], json!(3.15));
        assert_eq!(p["full"]["total"], json!(586180));
    }

    #[test]
    fn a_missing_resource_is_left_out_and_all_missing_is_unknown() {
        let mut h = SnapshotHost::empty();
        h.set_file(
            "/proc/pressure/io",
            "some avg10=42.00 avg60=1 avg300=0 total=5\n",
        );
        let i = Inputs::default();
        let v = value_of(run_with(&Pressure, &h, json!({}), &i, Duration::ZERO));
        assert_eq!(v["io"]["some"]["avg10"], json!(42.0));
        assert!(v.get("cpu").is_none());
        assert!(
            v["unavailable"]["cpu"]
                .as_str()
                .unwrap()
                .contains("/proc/pressure/cpu")
        );
        let out = run_with(
            &Pressure,
            &SnapshotHost::empty(),
            json!({}),
            &i,
            Duration::ZERO,
        );
        assert_eq!(
            out,
            ProbeOutcome::Unknown("PSI not available (kernel without CONFIG_PSI)".into())
        );
    }
}
