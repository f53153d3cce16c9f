//! `nvml.sample` (sampled): GPU utilization, clocks, power, temperature and clocks-event
//! reasons read repeatedly over the `--sample` window, summarized per GPU. A single reading
//! says little about a training job whose utilization swings between steps.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::host::{Field, GpuSample};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

pub struct NvmlSample;

pub const DEFAULT_INTERVAL_MS: u64 = 200;

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn stats(vals: &[f64]) -> Option<Value> {
    if vals.is_empty() {
        return None;
    }
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(json!({ "mean": round2(mean), "min": min, "max": max }))
}

fn min_max(vals: &[f64]) -> Option<Value> {
    let min = vals.iter().copied().reduce(f64::min)?;
    let max = vals.iter().copied().reduce(f64::max)?;
    Some(json!({ "min": min, "max": max }))
}

/// Summarize one GPU's samples; fields no sample could read go to `unavailable`.
fn summarize(index: u32, samples: &[&GpuSample], unavailable: &mut Map<String, Value>) -> Value {
    let mut o = Map::new();
    o.insert("index".into(), json!(index));
    o.insert("samples".into(), json!(samples.len()));
    let pick = |f: &dyn Fn(&GpuSample) -> &Field<u32>| -> (Vec<f64>, Option<String>) {
        let vals: Vec<f64> = samples
            .iter()
            .filter_map(|s| f(s).ok())
            .map(|v| f64::from(*v))
            .collect();
        let why = samples.iter().find_map(|s| f(s).reason());
        (vals, why)
    };
    let mut put =
        |name: &str, (vals, why): (Vec<f64>, Option<String>), range_only: bool, scale: f64| {
            let vals: Vec<f64> = vals.iter().map(|v| v * scale).collect();
            let v = if range_only {
                min_max(&vals)
            } else {
                stats(&vals)
            };
            match v {
                Some(v) => {
                    o.insert(name.into(), v);
                }
                None => {
                    unavailable.insert(
                        format!("gpus[{index}].{name}"),
                        json!(why.unwrap_or_else(|| "no samples".into())),
                    );
                }
            }
        };
    // Pasted `-q -d UTILIZATION` carries the driver's own samples over its window: their
    // Avg/Min/Max are steadier than the instant reading, so they stand for the window.
    let window = samples
        .iter()
        .find_map(|s| s.utilization_gpu_samples.as_ref())
        .filter(|w| w.usable());
    if window.is_none() {
        put("utilization_gpu", pick(&|s| &s.utilization_gpu), false, 1.0);
    }
    put(
        "utilization_memory",
        pick(&|s| &s.utilization_memory),
        false,
        1.0,
    );
    put("clock_sm", pick(&|s| &s.clock_sm), false, 1.0);
    put("power_w", pick(&|s| &s.power_usage_mw), false, 0.001);
    put("temperature_c", pick(&|s| &s.temperature_c), false, 1.0);
    put("pcie_gen", pick(&|s| &s.pcie_gen), true, 1.0);
    put("pcie_width", pick(&|s| &s.pcie_width), true, 1.0);
    if let Some(w) = window {
        let mut v = Map::new();
        v.insert("mean".into(), json!(f64::from(w.avg)));
        v.insert(
            "min".into(),
            json!(f64::from(w.min.unwrap_or(w.avg).min(w.avg))),
        );
        v.insert(
            "max".into(),
            json!(f64::from(w.max.unwrap_or(w.avg).max(w.avg))),
        );
        v.insert("source".into(), json!("nvidia-smi utilization samples"));
        if let Some(n) = w.samples {
            v.insert("driver_samples".into(), json!(n));
        }
        o.insert("utilization_gpu".into(), Value::Object(v));
    }
    let mem: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.memory_used.ok())
        .map(|b| (*b as f64 / (1024.0 * 1024.0)).floor())
        .collect();
    match stats(&mem) {
        Some(v) => {
            o.insert("memory_used_mib".into(), v);
        }
        None => {
            let why = samples.iter().find_map(|s| s.memory_used.reason());
            unavailable.insert(
                format!("gpus[{index}].memory_used_mib"),
                json!(why.unwrap_or_default()),
            );
        }
    }
    let with_reasons: Vec<&Vec<String>> = samples
        .iter()
        .filter_map(|s| s.clocks_event_reasons.ok())
        .collect();
    if with_reasons.is_empty() {
        let why = samples.iter().find_map(|s| s.clocks_event_reasons.reason());
        unavailable.insert(
            format!("gpus[{index}].clocks_event_reasons_seen"),
            json!(why.unwrap_or_default()),
        );
    } else {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for rs in &with_reasons {
            for r in rs.iter() {
                *counts.entry(r.as_str()).or_default() += 1;
            }
        }
        o.insert(
            "clocks_event_reasons_seen".into(),
            json!(counts.keys().collect::<Vec<_>>()),
        );
        let n = with_reasons.len() as f64;
        let frac: Map<String, Value> = counts
            .iter()
            .map(|(k, c)| (k.to_string(), json!(round2(*c as f64 / n))))
            .collect();
        o.insert("event_reason_fraction".into(), Value::Object(frac));
    }
    Value::Object(o)
}

/// Parameters of the `nvml.sample` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NvmlSampleParams {
    /// Milliseconds between readings.
    #[serde(default = "default_interval_ms")]
    pub interval_ms: u64,
}

fn default_interval_ms() -> u64 {
    DEFAULT_INTERVAL_MS
}

impl Probe for NvmlSample {
    type Params = NvmlSampleParams;
    fn name(&self) -> &'static str {
        "nvml.sample"
    }
    fn doc(&self) -> &'static str {
        "GPU utilization, clocks, power, temperature and clocks-event reasons sampled over the --sample window."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "window_s",
                "the sample window, seconds (0: a single reading)",
            ),
            ("interval_ms", "time between readings"),
            (
                "failed_samples",
                "readings NVML failed after the first (skipped)",
            ),
            ("gpus[].index", "GPU index"),
            ("gpus[].samples", "readings summarized"),
            (
                "gpus[].utilization_gpu",
                "{mean, min, max} percent; from pasted `-q -d UTILIZATION` the driver's GPU Utilization Samples (Avg, Min, Max) with source and driver_samples",
            ),
            ("gpus[].utilization_memory", "{mean, min, max} percent"),
            ("gpus[].clock_sm", "{mean, min, max} MHz"),
            ("gpus[].power_w", "{mean, min, max} watts"),
            ("gpus[].temperature_c", "{mean, min, max} °C"),
            ("gpus[].memory_used_mib", "{mean, min, max} MiB"),
            ("gpus[].pcie_gen / pcie_width", "{min, max}"),
            (
                "gpus[].clocks_event_reasons_seen",
                "every reason active in any reading",
            ),
            (
                "gpus[].event_reason_fraction.REASON",
                "fraction of readings (0..1) with REASON active",
            ),
            (
                "unavailable",
                "`gpus[0].power_w` -> why no reading had it; such fields are absent",
            ),
        ]
    }
    fn check(&self, params: &NvmlSampleParams) -> Vec<String> {
        if params.interval_ms == 0 {
            vec!["probe parameter `interval_ms` of `nvml.sample` must be positive".into()]
        } else {
            Vec::new()
        }
    }
    fn sampled(&self) -> bool {
        true
    }
    fn run(&self, params: &NvmlSampleParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let interval = Duration::from_millis(params.interval_ms.max(1));
        let n = if ctx.sample.is_zero() {
            1
        } else {
            (ctx.sample.as_millis() / interval.as_millis()).max(1) as usize
        };
        let mut readings: Vec<GpuSample> = Vec::new();
        let mut failed = 0;
        // A zero window on a live host is one reading: take it from the pass's shared NVML
        // reading. Sampling again would queue a second set of driver calls behind that one
        // (the driver serialises them: 36 ms beside the reading's 39 ms on an H200).
        if ctx.sample.is_zero() && ctx.host.is_live() {
            return match ctx.host.nvml() {
                Ok(r) => summarize_all(
                    &r.gpus.iter().map(|g| g.sample()).collect::<Vec<_>>(),
                    ctx,
                    interval,
                    0,
                ),
                Err(e) => ProbeOutcome::Unknown(e.into()),
            };
        }
        for i in 0..n {
            if i > 0 {
                ctx.host.sleep(interval);
            }
            match ctx.host.nvml_sample() {
                Ok(s) => readings.extend(s),
                Err(e) if i == 0 => return ProbeOutcome::Unknown(e.into()),
                Err(_) => failed += 1,
            }
        }
        summarize_all(&readings, ctx, interval, failed)
    }
}

/// The probe's value: the readings summarized per GPU.
fn summarize_all(
    readings: &[GpuSample],
    ctx: &ProbeCtx,
    interval: Duration,
    failed: usize,
) -> ProbeOutcome {
    let mut by_gpu: BTreeMap<u32, Vec<&GpuSample>> = BTreeMap::new();
    for s in readings {
        by_gpu.entry(s.index).or_default().push(s);
    }
    let mut unavailable = Map::new();
    let gpus: Vec<Value> = by_gpu
        .iter()
        .map(|(i, ss)| summarize(*i, ss, &mut unavailable))
        .collect();
    ProbeOutcome::Value(json!({
        "window_s": ctx.sample.as_secs_f64(),
        "interval_ms": interval.as_millis() as u64,
        "failed_samples": failed,
        "gpus": gpus,
        "unavailable": unavailable,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};

    fn s(util: u32, clock: u32, reasons: &[&str]) -> GpuSample {
        GpuSample {
            index: 0,
            utilization_gpu: Field::Ok(util),
            utilization_memory: Field::Ok(util / 2),
            clock_sm: Field::Ok(clock),
            power_usage_mw: Field::Ok(350_000),
            clocks_event_reasons: Field::Ok(reasons.iter().map(|r| r.to_string()).collect()),
            pcie_gen: Field::Ok(5),
            pcie_width: Field::Ok(16),
            temperature_c: Field::NotSupported,
            memory_used: Field::Ok(1024 * 1024 * 1024),
            utilization_gpu_samples: None,
        }
    }

    #[test]
    fn summarizes_readings_over_the_window() {
        let mut h = SnapshotHost::empty();
        h.set_samples(vec![
            Ok(vec![s(20, 1980, &[])]),
            Ok(vec![s(100, 1500, &["SW_POWER_CAP"])]),
            Ok(vec![s(60, 1200, &["SW_POWER_CAP", "HW_SLOWDOWN"])]),
            Ok(vec![s(80, 1980, &[])]),
        ]);
        let v = value_of(run_with(
            &NvmlSample,
            &h,
            json!({"interval_ms": 250}),
            &Inputs::default(),
            Duration::from_secs(1),
        ));
        let g = &v["gpus"][0];
        assert_eq!(g["samples"], json!(4));
        assert_eq!(
            g["utilization_gpu"],
            json!({"mean": 65.0, "min": 20.0, "max": 100.0})
        );
        assert_eq!(g["clock_sm"]["min"], json!(1200.0));
        assert_eq!(g["power_w"]["mean"], json!(350.0));
        assert_eq!(g["memory_used_mib"]["max"], json!(1024.0));
        assert_eq!(
            g["clocks_event_reasons_seen"],
            json!(["HW_SLOWDOWN", "SW_POWER_CAP"])
        );
        assert_eq!(g["event_reason_fraction"]["SW_POWER_CAP"], json!(0.5));
        assert_eq!(g["event_reason_fraction"]["HW_SLOWDOWN"], json!(0.25));
        assert!(g.get("temperature_c").is_none());
        assert_eq!(
            v["unavailable"]["gpus[0].temperature_c"],
            json!("not supported by this GPU or driver")
        );
    }

    #[test]
    fn zero_window_takes_one_reading() {
        let mut h = SnapshotHost::empty();
        h.set_samples(vec![
            Ok(vec![s(10, 345, &["GPU_IDLE"])]),
            Ok(vec![s(90, 1980, &[])]),
        ]);
        let v = value_of(run_with(
            &NvmlSample,
            &h,
            json!({}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v["gpus"][0]["samples"], json!(1));
        assert_eq!(v["gpus"][0]["utilization_gpu"]["max"], json!(10.0));
    }

    #[test]
    fn nvml_unavailable_is_unknown() {
        let out = run_with(
            &NvmlSample,
            &SnapshotHost::empty(),
            json!({}),
            &Inputs::default(),
            Duration::ZERO,
        );
        assert_eq!(
            out,
            ProbeOutcome::Unknown("NVML was not recorded in this snapshot".into())
        );
    }
}

#[cfg(test)]
mod zero_window {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::host::{CommandOutput, FileMeta, Host, HostError, NvmlReading};
    use crate::probes::{Inputs, ProbeCtx};
    use std::io;

    /// A live host whose NVML reading says 37% and whose sampling would say 99%.
    struct Live(SnapshotHost);

    impl Host for Live {
        fn describe(&self) -> String {
            "live".into()
        }
        fn is_live(&self) -> bool {
            true
        }
        fn read_file(&self, p: &str) -> io::Result<Vec<u8>> {
            self.0.read_file(p)
        }
        fn read_dir(&self, p: &str) -> io::Result<Vec<String>> {
            self.0.read_dir(p)
        }
        fn metadata(&self, p: &str) -> io::Result<FileMeta> {
            self.0.metadata(p)
        }
        fn read_link(&self, p: &str) -> io::Result<String> {
            self.0.read_link(p)
        }
        fn run(&self, a: &[String], t: Duration) -> io::Result<CommandOutput> {
            self.0.run(a, t)
        }
        fn nvml(&self) -> Result<NvmlReading, HostError> {
            self.0.nvml()
        }
        fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
            self.0.nvml_sample()
        }
        fn env(&self) -> std::collections::BTreeMap<String, String> {
            self.0.env()
        }
        fn now(&self) -> f64 {
            0.0
        }
        fn sleep(&self, _d: Duration) {}
        fn cpu_count(&self) -> usize {
            1
        }
    }

    fn host() -> Live {
        let mut gpu = crate::host::GpuReading {
            index: 0,
            ..Default::default()
        };
        gpu.utilization_gpu = Field::Ok(37);
        let mut snap = SnapshotHost::empty();
        snap.set_nvml(Ok(NvmlReading {
            gpus: vec![gpu.clone()],
            ..Default::default()
        }));
        let mut busy = gpu.sample();
        busy.utilization_gpu = Field::Ok(99);
        snap.set_samples(vec![Ok(vec![busy])]);
        Live(snap)
    }

    fn util_mean(sample: Duration) -> Value {
        let h = host();
        let inputs = Inputs::default();
        let ctx = ProbeCtx {
            host: &h,
            inputs: &inputs,
            sample,
            deadline: Duration::MAX,
        };
        match crate::probes::ProbeKind::run(&NvmlSample, &Map::new(), &ctx) {
            ProbeOutcome::Value(v) => v["gpus"][0]["utilization_gpu"]["mean"].clone(),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn a_zero_window_on_a_live_host_is_the_shared_reading_and_a_window_samples() {
        // --sample 0s: the reading every NVML probe of the pass shares, no second set of calls
        assert_eq!(util_mean(Duration::ZERO), json!(37.0));
        // a real window samples
        assert_eq!(util_mean(Duration::from_millis(200)), json!(99.0));
    }
}
