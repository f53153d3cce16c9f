//! `nvml`: one full NVML reading of every GPU — driver and CUDA versions, clocks and
//! clocks-event reasons, power, temperature, ECC and row remapping, PCIe link, NVLink, compute
//! and MIG modes, memory, processes.
//!
//! A field NVML could not read (not supported, or an error) is left out of the GPU's object
//! and explained in `unavailable`, never replaced by 0 or false: an expression that reads it
//! becomes unknown with that reason. When NVML cannot start at all the probe still returns a
//! value, `{available: false, error}`, so the driver rule can fail on it.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::host::{Field, GpuReading, NvmlReading};
use serde_json::{Map, Value, json};

pub struct Nvml;

const MIB: f64 = 1024.0 * 1024.0;

/// Collects a GPU's fields, sending unread ones to `unavailable` under `prefix.name`.
struct Obj<'a> {
    map: Map<String, Value>,
    prefix: String,
    unavailable: &'a mut Map<String, Value>,
    /// Fields a pasted excerpt would have shown had it not stopped early.
    cut: Vec<Value>,
}

impl Obj<'_> {
    fn put<T>(&mut self, name: &str, f: &Field<T>, conv: impl Fn(&T) -> Value) {
        match f {
            Field::Ok(v) => {
                self.map.insert(name.to_string(), conv(v));
            }
            other => {
                if let Field::Error(e) = other
                    && e.starts_with("input ends early")
                {
                    self.cut.push(json!(name));
                }
                let key = if self.prefix.is_empty() {
                    name.to_string()
                } else {
                    format!("{}.{name}", self.prefix)
                };
                self.unavailable
                    .insert(key, json!(other.reason().unwrap_or_default()));
            }
        }
    }
}

fn watts(mw: &u32) -> Value {
    json!(f64::from(*mw) / 1000.0)
}

fn mib(b: &u64) -> Value {
    json!((*b as f64 / MIB).floor() as u64)
}

/// `13000` -> `13.0`, `12040` -> `12.4` (NVML encodes major * 1000 + minor * 10).
pub fn cuda_version_str(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn gpu_json(g: &GpuReading, unavailable: &mut Map<String, Value>) -> Value {
    let mut o = Obj {
        map: Map::new(),
        prefix: format!("gpus[{}]", g.index),
        unavailable,
        cut: Vec::new(),
    };
    o.map.insert("index".into(), json!(g.index));
    let s = |v: &String| json!(v);
    let n = |v: &u32| json!(v);
    let n64 = |v: &u64| json!(v);
    let b = |v: &bool| json!(v);
    o.put("name", &g.name, s);
    o.put("uuid", &g.uuid, s);
    o.put("pci_bus_id", &g.pci_bus_id, s);
    o.put("vbios", &g.vbios, s);
    o.put("persistence", &g.persistence, b);
    o.put("pstate", &g.pstate, s);
    o.put("clock_sm", &g.clock_sm, n);
    o.put("clock_sm_max", &g.clock_sm_max, n);
    o.put("clock_graphics", &g.clock_graphics, n);
    o.put("clock_graphics_max", &g.clock_graphics_max, n);
    o.put("clock_mem", &g.clock_mem, n);
    o.put("clock_mem_max", &g.clock_mem_max, n);
    o.put("app_clock_graphics", &g.app_clock_graphics, n);
    o.put(
        "default_app_clock_graphics",
        &g.default_app_clock_graphics,
        n,
    );
    o.put("app_clock_mem", &g.app_clock_mem, n);
    o.put("default_app_clock_mem", &g.default_app_clock_mem, n);
    o.put("clocks_event_reasons", &g.clocks_event_reasons, |v| {
        json!(v)
    });
    o.put("power_usage_w", &g.power_usage_mw, watts);
    o.put("power_limit_w", &g.power_limit_mw, watts);
    o.put("power_default_limit_w", &g.power_default_limit_mw, watts);
    o.put("power_enforced_limit_w", &g.power_enforced_limit_mw, watts);
    o.put("temperature_c", &g.temperature_c, n);
    o.put(
        "temperature_max_operating_c",
        &g.temperature_max_operating_c,
        n,
    );
    o.put("ecc_enabled", &g.ecc_enabled, b);
    o.put("ecc_pending", &g.ecc_pending, b);
    o.put("ecc_uncorrected_volatile", &g.ecc_uncorrected_volatile, n64);
    o.put(
        "ecc_uncorrected_aggregate",
        &g.ecc_uncorrected_aggregate,
        n64,
    );
    o.put("ecc_corrected_volatile", &g.ecc_corrected_volatile, n64);
    o.put("retired_pages_pending", &g.retired_pages_pending, b);
    o.put("retired_pages_count", &g.retired_pages_count, n64);
    o.put("remapped_rows_correctable", &g.remapped_rows_correctable, n);
    o.put(
        "remapped_rows_uncorrectable",
        &g.remapped_rows_uncorrectable,
        n,
    );
    o.put("remapped_rows_pending", &g.remapped_rows_pending, b);
    o.put("remapped_rows_failure", &g.remapped_rows_failure, b);
    o.put("pcie_gen", &g.pcie_gen, n);
    o.put("pcie_width", &g.pcie_width, n);
    o.put("pcie_max_gen", &g.pcie_max_gen, n);
    o.put("pcie_max_width", &g.pcie_max_width, n);
    o.put("nvlinks", &g.nvlinks, |links| {
        json!(
            links
                .iter()
                .map(|l| json!({"link": l.link, "active": l.active}))
                .collect::<Vec<_>>()
        )
    });
    match &g.nvlinks {
        Field::Ok(links) => {
            o.map
                .insert("nvlink_supported".into(), json!(!links.is_empty()));
            o.map.insert(
                "nvlinks_active".into(),
                json!(links.iter().filter(|l| l.active).count()),
            );
        }
        // A PCIe card without NVLink: that is an answer, not a missing value.
        Field::NotSupported => {
            o.map.insert("nvlink_supported".into(), json!(false));
        }
        Field::Error(_) => {}
    }
    o.put("compute_mode", &g.compute_mode, s);
    o.put("mig_current", &g.mig_current, b);
    o.put("mig_pending", &g.mig_pending, b);
    o.put("utilization_gpu", &g.utilization_gpu, n);
    o.put("utilization_memory", &g.utilization_memory, n);
    o.put("memory_total_mib", &g.memory_total, mib);
    o.put("memory_used_mib", &g.memory_used, mib);
    o.put("memory_free_mib", &g.memory_free, mib);
    o.put("processes", &g.processes, |ps| {
        json!(
            ps.iter()
                .map(|p| {
                    let mut m = Map::new();
                    m.insert("pid".into(), json!(p.pid));
                    if let Some(u) = p.used_memory {
                        m.insert("used_memory_mib".into(), mib(&u));
                    }
                    m.insert("kind".into(), json!(p.kind));
                    Value::Object(m)
                })
                .collect::<Vec<_>>()
        )
    });
    if let Some(u) = &g.utilization_gpu_samples {
        o.map.insert("utilization_gpu_samples".into(), json!(u));
    }
    if let Some(u) = &g.utilization_memory_samples {
        o.map.insert("utilization_memory_samples".into(), json!(u));
    }
    if let Some(c) = &g.clocks_event_counters_us {
        o.map.insert("clocks_event_counters_us".into(), json!(c));
    }
    if let Some(l) = &g.pcie_lspci {
        o.map.insert("pcie_lspci".into(), json!(l));
    }
    let cut = std::mem::take(&mut o.cut);
    o.map.insert("fields_cut".into(), Value::Array(cut));
    Value::Object(o.map)
}

/// The probe's value for a reading (public so `explain` and tests can show it).
pub fn reading_json(r: &NvmlReading) -> Value {
    let mut unavailable = Map::new();
    let mut top = Obj {
        map: Map::new(),
        prefix: String::new(),
        unavailable: &mut unavailable,
        cut: Vec::new(),
    };
    top.map.insert("available".into(), json!(true));
    top.put("driver_version", &r.driver_version, |v| json!(v));
    top.put("cuda_driver_version", &r.cuda_driver_version, |v| json!(v));
    top.put("cuda_driver_version_str", &r.cuda_driver_version, |v| {
        json!(cuda_version_str(*v))
    });
    top.put("nvml_version", &r.nvml_version, |v| json!(v));
    let mut out = top.map;
    out.insert("init_ms".into(), json!(r.init_ms));
    if crate::evidence::lspci::is_links_only(r) {
        // a pasted `lspci -vv` alone: its GPUs' links, nothing NVML said
        out.insert("links_only".into(), json!(true));
    }
    out.insert("gpu_count".into(), json!(r.gpus.len()));
    let gpus: Vec<Value> = r
        .gpus
        .iter()
        .map(|g| gpu_json(g, &mut unavailable))
        .collect();
    out.insert("gpus".into(), Value::Array(gpus));
    out.insert("unavailable".into(), Value::Object(unavailable));
    Value::Object(out)
}

/// NVML cannot start where the kernel log given shows the loaded module refusing a library of
/// another version (`NVRM: API mismatch`, [`crate::evidence::kernel_log::ApiMismatch`]): NVML
/// sends its version string as every NVIDIA library does, the module's version check fails the
/// ioctl, and `nvmlInit` returns `NVML_ERROR_LIB_RM_VERSION_MISMATCH` (nvidia-smi's `Failed to
/// initialize NVML: Driver/library version mismatch`). Only for a host known from pasted text
/// alone: a live host's own NVML answer is the reading, whatever an old log says.
fn refused_by_module(ctx: &ProbeCtx) -> Option<Value> {
    let (file, log) = super::logs::given_kernel_log(ctx)?;
    let m = log.api_mismatch.as_ref()?;
    let client = match (&m.client, m.pid) {
        (Some(c), Some(pid)) => format!("a client ('{c}', pid {pid}) of version "),
        _ => "a client of version ".into(),
    };
    let module = m
        .module_version
        .as_deref()
        .map_or(String::new(), |v| format!(" {v}"));
    Some(json!({
        "available": false,
        "error": format!(
            "the kernel module{module} refused {client}{} (`NVRM: API mismatch`, {} time{} in {file}): the loaded module and the installed libraries are of different versions, so NVML and CUDA fail with `Driver/library version mismatch`",
            m.client_version,
            m.count,
            if m.count == 1 { "" } else { "s" },
        ),
        "api_mismatch": m,
    }))
}

/// NVML cannot start where TensorFlow's CUDA diagnostics, in the text given, found the loaded
/// kernel module and libcuda of different versions
/// ([`crate::evidence::cuda_errors::KernelDsoMismatch`]): the same condition as the module's
/// `NVRM: API mismatch`, seen from user space. Only for a host known from pasted text alone, as
/// [`refused_by_module`].
fn kernel_dso_mismatch(ctx: &ProbeCtx) -> Option<Value> {
    let kind = crate::evidence::cuda_errors::CudaRuntimeKind;
    super::inputs::evidence_of(&ctx.inputs.evidence, &kind)
        .into_iter()
        .find_map(|(p, t)| {
            let log = crate::evidence::memo::parsed(
                &t,
                crate::evidence::cuda_errors::parse_cuda_runtime_log,
            );
            let m = log.kernel_dso_mismatch.as_ref()?;
            Some(json!({
                "available": false,
                "error": format!(
                    "the loaded kernel module is {k} and the user-mode driver (libcuda) {d} (TensorFlow's CUDA diagnostics in {}: `kernel version {k} does not match DSO version {d}`): a Driver/library version mismatch, so NVML and CUDA cannot start",
                    p.display(),
                    k = m.kernel_version,
                    d = m.dso_version,
                ),
            }))
        })
}

impl Probe for Nvml {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "nvml"
    }
    fn doc(&self) -> &'static str {
        "One full NVML reading of every GPU: versions, clocks, power, temperature, ECC, PCIe, NVLink, modes, memory, processes."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "available",
                "false when NVML cannot start (then only `error` follows)",
            ),
            (
                "error",
                "why NVML cannot start (`NVML cannot be loaded: ...`)",
            ),
            (
                "api_mismatch",
                "{client_version, module_version?, client?, pid?, timestamp?, count}: only with `available` false on a host known from pasted text, whose kernel log shows the module refusing a library of another version (`NVRM: API mismatch`)",
            ),
            ("driver_version", "`580.159.04`"),
            (
                "cuda_driver_version",
                "highest CUDA version the driver supports, as NVML's integer (13000 = 13.0)",
            ),
            ("cuda_driver_version_str", "the same as `13.0`"),
            ("nvml_version", "NVML library version"),
            ("init_ms", "how long NVML took to start, ms"),
            ("gpu_count", "number of GPUs NVML sees"),
            (
                "links_only",
                "present (true) when the reading is a pasted `lspci -vv` alone: PCIe links, nothing NVML said",
            ),
            (
                "gpus[].index / name / uuid / pci_bus_id / vbios",
                "identity",
            ),
            (
                "gpus[].fields_cut",
                "fields a pasted excerpt stops before (`input ends early`): a rule that needs one is unknown, not passed",
            ),
            ("gpus[].persistence", "persistence mode on"),
            ("gpus[].pstate", "performance state `P0`..`P15`"),
            (
                "gpus[].clock_sm / clock_sm_max / clock_graphics / clock_graphics_max / clock_mem / clock_mem_max",
                "current and maximum clocks, MHz",
            ),
            (
                "gpus[].app_clock_graphics / default_app_clock_graphics / app_clock_mem / default_app_clock_mem",
                "application clocks and their defaults, MHz",
            ),
            (
                "gpus[].clocks_event_reasons",
                "active reasons: GPU_IDLE, APPLICATIONS_CLOCKS_SETTING, SW_POWER_CAP, HW_SLOWDOWN, SYNC_BOOST, SW_THERMAL_SLOWDOWN, HW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN, DISPLAY_CLOCK_SETTING",
            ),
            (
                "gpus[].power_usage_w / power_limit_w / power_default_limit_w / power_enforced_limit_w",
                "watts",
            ),
            ("gpus[].temperature_c", "GPU temperature, °C"),
            (
                "gpus[].temperature_max_operating_c",
                "max operating temperature, °C: at it the driver lowers clocks",
            ),
            (
                "gpus[].ecc_enabled / ecc_pending",
                "ECC mode now and after reboot",
            ),
            (
                "gpus[].ecc_uncorrected_volatile / ecc_uncorrected_aggregate / ecc_corrected_volatile",
                "ECC error counts",
            ),
            (
                "gpus[].retired_pages_pending / retired_pages_count",
                "page retirement (pre-Ampere)",
            ),
            (
                "gpus[].remapped_rows_correctable / remapped_rows_uncorrectable / remapped_rows_pending / remapped_rows_failure",
                "row remapping (Ampere and later)",
            ),
            (
                "gpus[].pcie_gen / pcie_width / pcie_max_gen / pcie_max_width",
                "PCIe link now and at most (an idle GPU downshifts)",
            ),
            (
                "gpus[].pcie_lspci",
                "{device, speed_downgraded, width_downgraded}: the link came from a pasted `lspci -vv` (LnkSta against LnkCap)",
            ),
            (
                "gpus[].utilization_gpu_samples / utilization_memory_samples",
                "{avg, min, max, samples, duration_s}: the driver's own samples (`-q -d UTILIZATION`), pasted text only",
            ),
            (
                "gpus[].clocks_event_counters_us",
                "microseconds each clocks event reason held the clocks down since the driver loaded (`-q -d PERFORMANCE`, drivers 535+)",
            ),
            (
                "gpus[].nvlinks",
                "[{link, active}] (absent on GPUs without NVLink)",
            ),
            ("gpus[].nvlink_supported", "false on GPUs without NVLink"),
            ("gpus[].nvlinks_active", "number of active links"),
            (
                "gpus[].compute_mode",
                "Default, ExclusiveThread, Prohibited, ExclusiveProcess",
            ),
            (
                "gpus[].mig_current / mig_pending",
                "MIG mode now and after reset",
            ),
            (
                "gpus[].utilization_gpu / utilization_memory",
                "percent over NVML's last sample period",
            ),
            (
                "gpus[].memory_total_mib / memory_used_mib / memory_free_mib",
                "framebuffer memory, MiB",
            ),
            (
                "gpus[].processes",
                "[{pid, used_memory_mib?, kind: compute|graphics}]",
            ),
            (
                "unavailable",
                "`gpus[0].temperature_c` -> why it could not be read; such fields are absent",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        match ctx.host.nvml() {
            Ok(r) => ProbeOutcome::Value(reading_json(&r)),
            // what pasted evidence does not cover is unknown, unless the kernel log given shows
            // the module refusing the installed libraries; an NVML that failed is a reading
            Err(e @ crate::host::HostError::NotInEvidence { .. }) => {
                match refused_by_module(ctx).or_else(|| kernel_dso_mismatch(ctx)) {
                    Some(v) => ProbeOutcome::Value(v),
                    None => ProbeOutcome::Unknown(e.into()),
                }
            }
            Err(e) => ProbeOutcome::Value(json!({ "available": false, "error": e })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};
    use crate::vocab::nvml::NvLink;
    use std::time::Duration;

    pub(crate) fn reading() -> NvmlReading {
        NvmlReading {
            driver_version: Field::Ok("580.159.04".into()),
            cuda_driver_version: Field::Ok(13000),
            nvml_version: Field::Ok("13.580.159.04".into()),
            init_ms: 10.5,
            gpus: vec![GpuReading {
                index: 0,
                name: Field::Ok("NVIDIA H200".into()),
                power_usage_mw: Field::Ok(78663),
                power_default_limit_mw: Field::Ok(700000),
                temperature_c: Field::Error("GPU is lost".into()),
                memory_total: Field::Ok(150754820096),
                nvlinks: Field::NotSupported,
                clocks_event_reasons: Field::Ok(vec!["GPU_IDLE".into()]),
                ..GpuReading::default()
            }],
        }
    }

    fn run(h: &SnapshotHost) -> Value {
        value_of(run_with(
            &Nvml,
            h,
            json!({}),
            &Inputs::default(),
            Duration::ZERO,
        ))
    }

    #[test]
    fn a_kernel_log_s_api_mismatch_is_nvml_failing_only_where_no_host_answers() {
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/corpus/h92_dmesg_nvidiaall394_api_mismatch_client_pid.txt");
        let inputs = Inputs {
            kernel_log: Some(log.clone()),
            ..Inputs::default()
        };
        // judged from the log alone (no NVIDIA driver here): NVML cannot start
        let alone = crate::host::evidence::EvidenceHost::inputs_only("no local driver");
        let v = value_of(run_with(&Nvml, &alone, json!({}), &inputs, Duration::ZERO));
        assert_eq!(v["available"], json!(false));
        assert_eq!(v["api_mismatch"]["client_version"], json!("595.84"));
        let e = v["error"].as_str().unwrap();
        assert!(
            e.contains("595.80") && e.contains("'kwin_wayland', pid 1005"),
            "{e}"
        );
        assert!(e.contains("Driver/library version mismatch"), "{e}");
        // a host that answers is read, whatever an old log says
        let mut h = SnapshotHost::empty();
        h.set_nvml(Ok(reading()));
        let v = value_of(run_with(&Nvml, &h, json!({}), &inputs, Duration::ZERO));
        assert_eq!(v["available"], json!(true));
        // a log without a refusal leaves the pasted-text host's NVML unknown
        let quiet = Inputs {
            kernel_log: Some(log.with_file_name("h26_dmesg_gpud_pstore_550_load_no_xid.txt")),
            ..Inputs::default()
        };
        let out = run_with(&Nvml, &alone, json!({}), &quiet, Duration::ZERO);
        assert!(matches!(out, ProbeOutcome::Unknown(_)), "{out:?}");
    }

    #[test]
    fn tensorflow_s_kernel_dso_mismatch_is_nvml_failing_only_where_no_host_answers() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let inputs = Inputs {
            evidence: vec![dir.join("h12_cudaerr_tf4768_kernel_dso_mismatch.txt")],
            ..Inputs::default()
        };
        let alone = crate::host::evidence::EvidenceHost::inputs_only("no local driver");
        let v = value_of(run_with(&Nvml, &alone, json!({}), &inputs, Duration::ZERO));
        assert_eq!(v["available"], json!(false));
        let e = v["error"].as_str().unwrap();
        assert!(
            e.contains("kernel module is 352.63.0") && e.contains("(libcuda) 361.93.2"),
            "{e}"
        );
        assert!(e.contains("mismatch"), "{e}");
        // a host that answers is read, whatever the log says
        let mut h = SnapshotHost::empty();
        h.set_nvml(Ok(reading()));
        let v = value_of(run_with(&Nvml, &h, json!({}), &inputs, Duration::ZERO));
        assert_eq!(v["available"], json!(true));
        // TF's cuInit failure without the diagnostics' verdict says nothing of NVML
        let other = Inputs {
            evidence: vec![
                dir.join("h95_tfcuinit_tf44869_compat_no_device_driver_not_running.txt"),
            ],
            ..Inputs::default()
        };
        let out = run_with(&Nvml, &alone, json!({}), &other, Duration::ZERO);
        assert!(matches!(out, ProbeOutcome::Unknown(_)), "{out:?}");
    }

    #[test]
    fn converts_units_and_versions() {
        let mut h = SnapshotHost::empty();
        h.set_nvml(Ok(reading()));
        let v = run(&h);
        assert_eq!(v["available"], json!(true));
        assert_eq!(v["cuda_driver_version"], json!(13000));
        assert_eq!(v["cuda_driver_version_str"], json!("13.0"));
        assert_eq!(v["gpu_count"], json!(1));
        let g = &v["gpus"][0];
        assert_eq!(g["power_usage_w"], json!(78.663));
        assert_eq!(g["power_default_limit_w"], json!(700.0));
        assert_eq!(g["memory_total_mib"], json!(143771));
        assert_eq!(g["clocks_event_reasons"], json!(["GPU_IDLE"]));
    }

    #[test]
    fn unread_fields_are_absent_and_explained() {
        let mut h = SnapshotHost::empty();
        h.set_nvml(Ok(reading()));
        let v = run(&h);
        let g = &v["gpus"][0];
        assert!(g.get("temperature_c").is_none());
        assert!(
            g.get("persistence").is_none(),
            "a default NotSupported must not become false"
        );
        assert_eq!(
            v["unavailable"]["gpus[0].temperature_c"],
            json!("NVML error: GPU is lost")
        );
        assert_eq!(
            v["unavailable"]["gpus[0].persistence"],
            json!("not supported by this GPU or driver")
        );
        // No NVLink on a PCIe card is an answer.
        assert_eq!(g["nvlink_supported"], json!(false));
        assert!(g.get("nvlinks").is_none());
    }

    #[test]
    fn nvlinks_when_present() {
        let mut r = reading();
        r.gpus[0].nvlinks = Field::Ok(vec![
            NvLink {
                link: 0,
                active: true,
            },
            NvLink {
                link: 1,
                active: false,
            },
        ]);
        let mut h = SnapshotHost::empty();
        h.set_nvml(Ok(r));
        let g = run(&h)["gpus"][0].clone();
        assert_eq!(g["nvlink_supported"], json!(true));
        assert_eq!(g["nvlinks_active"], json!(1));
        assert_eq!(g["nvlinks"][1], json!({"link": 1, "active": false}));
    }

    #[test]
    fn init_failure_is_a_value_a_rule_can_fail_on() {
        let mut h = SnapshotHost::empty();
        h.set_nvml(Err(
            "NVML cannot be loaded: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
                .into(),
        ));
        let v = run(&h);
        assert_eq!(v["available"], json!(false));
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .starts_with("NVML cannot be loaded")
        );
        // Not recorded at all says so.
        let v = run(&SnapshotHost::empty());
        assert_eq!(
            v,
            json!({"available": false, "error": "NVML was not recorded in this snapshot"})
        );
    }

    #[test]
    fn cuda_version_strings() {
        assert_eq!(cuda_version_str(12040), "12.4");
        assert_eq!(cuda_version_str(11080), "11.8");
    }
}
