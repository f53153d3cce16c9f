//! What one NVML reading holds. Every field has three outcomes, as NVML itself does: a value,
//! not supported by this GPU or driver, or an error. Unsupported and failed reads never turn
//! into a default value; the nvml probe leaves them out, so an expression that uses them
//! becomes `unknown` with the reason.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Field<T> {
    Ok(T),
    #[default]
    NotSupported,
    Error(String),
}

impl<T> Field<T> {
    pub fn ok(&self) -> Option<&T> {
        match self {
            Field::Ok(v) => Some(v),
            _ => None,
        }
    }
    pub fn reason(&self) -> Option<String> {
        match self {
            Field::Ok(_) => None,
            Field::NotSupported => Some("not supported by this GPU or driver".into()),
            // pasted evidence says why itself (not in the evidence, input ends early)
            Field::Error(e)
                if e.contains("not in the evidence") || e.starts_with("input ends early") =>
            {
                Some(e.clone())
            }
            Field::Error(e) => Some(format!("NVML error: {e}")),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NvmlReading {
    pub driver_version: Field<String>,
    /// e.g. 13000 for CUDA 13.0
    pub cuda_driver_version: Field<i32>,
    pub nvml_version: Field<String>,
    /// How long nvmlInit took, ms.
    pub init_ms: f64,
    pub gpus: Vec<GpuReading>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProcessMem {
    pub pid: u32,
    /// bytes; None when the driver does not say
    pub used_memory: Option<u64>,
    /// `compute` or `graphics`
    pub kind: String,
    /// The process's name where the source says it (pasted `nvidia-smi -q`/`-x`, a table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NvLink {
    pub link: u32,
    pub active: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuReading {
    pub index: u32,
    pub name: Field<String>,
    pub uuid: Field<String>,
    pub pci_bus_id: Field<String>,
    pub vbios: Field<String>,
    pub persistence: Field<bool>,
    /// MHz
    pub clock_sm: Field<u32>,
    pub clock_sm_max: Field<u32>,
    pub clock_graphics: Field<u32>,
    pub clock_graphics_max: Field<u32>,
    pub clock_mem: Field<u32>,
    pub clock_mem_max: Field<u32>,
    pub app_clock_graphics: Field<u32>,
    pub default_app_clock_graphics: Field<u32>,
    pub app_clock_mem: Field<u32>,
    pub default_app_clock_mem: Field<u32>,
    /// Names as NVML's ClocksEventReasons flags: GPU_IDLE, SW_POWER_CAP, HW_SLOWDOWN, ...
    pub clocks_event_reasons: Field<Vec<String>>,
    /// milliwatts
    pub power_usage_mw: Field<u32>,
    pub power_limit_mw: Field<u32>,
    pub power_default_limit_mw: Field<u32>,
    pub power_enforced_limit_mw: Field<u32>,
    pub temperature_c: Field<u32>,
    /// The GPU's max operating temperature (NVML's GPU_MAX threshold, `-q`'s "GPU Max
    /// Operating Temp"): at it the driver lowers clocks, below base if it must.
    #[serde(default)]
    pub temperature_max_operating_c: Field<u32>,
    pub ecc_enabled: Field<bool>,
    pub ecc_pending: Field<bool>,
    pub ecc_uncorrected_volatile: Field<u64>,
    pub ecc_uncorrected_aggregate: Field<u64>,
    pub ecc_corrected_volatile: Field<u64>,
    pub retired_pages_pending: Field<bool>,
    pub retired_pages_count: Field<u64>,
    pub remapped_rows_correctable: Field<u32>,
    pub remapped_rows_uncorrectable: Field<u32>,
    pub remapped_rows_pending: Field<bool>,
    pub remapped_rows_failure: Field<bool>,
    pub pcie_gen: Field<u32>,
    pub pcie_width: Field<u32>,
    pub pcie_max_gen: Field<u32>,
    pub pcie_max_width: Field<u32>,
    pub nvlinks: Field<Vec<NvLink>>,
    /// Default, ExclusiveThread, Prohibited, ExclusiveProcess
    pub compute_mode: Field<String>,
    pub mig_current: Field<bool>,
    pub mig_pending: Field<bool>,
    /// percent
    pub utilization_gpu: Field<u32>,
    pub utilization_memory: Field<u32>,
    /// bytes
    pub memory_total: Field<u64>,
    pub memory_used: Field<u64>,
    pub memory_free: Field<u64>,
    pub pstate: Field<String>,
    pub processes: Field<Vec<ProcessMem>>,
    /// `nvidia-smi -q -d UTILIZATION`'s `GPU Utilization Samples` block: the driver's own
    /// samples over its last window, steadier than the instant reading. Only pasted text has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_gpu_samples: Option<UtilizationSamples>,
    /// The same block for memory (`Memory Utilization Samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_memory_samples: Option<UtilizationSamples>,
    /// `Clocks Event Reasons Counters` (`-q -d PERFORMANCE`, drivers 535+): microseconds each
    /// reason held the clocks down since the driver loaded, by NVML reason name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks_event_counters_us: Option<std::collections::BTreeMap<String, u64>>,
    /// The PCIe link as a pasted `lspci -vv` shows it, when that is where the link fields came
    /// from (lspci shows no load, so the rules judge its link apart from NVML's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_lspci: Option<LspciLink>,
}

/// The `Max`/`Min`/`Avg` of one `… Utilization Samples` block, percent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UtilizationSamples {
    pub avg: u32,
    pub min: Option<u32>,
    pub max: Option<u32>,
    /// `Number of Samples`.
    pub samples: Option<u32>,
    /// `Duration`, seconds; left out when the driver printed its overflow value (no samples
    /// yet: 18446744073709.xx sec).
    pub duration_s: Option<f64>,
}

impl UtilizationSamples {
    /// The block can stand for the window: the driver printed a real duration (not its
    /// overflow value, which comes with made-up figures such as `Min 31 %`, `Avg 0 %`) and the
    /// figures agree (Min <= Avg <= Max).
    pub fn usable(&self) -> bool {
        self.duration_s.is_some()
            && self.min.is_none_or(|m| m <= self.avg)
            && self.max.is_none_or(|m| self.avg <= m)
    }
}

/// A GPU's link as `lspci -vv` printed it: the device, and whether LnkSta is below LnkCap.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LspciLink {
    /// `17:00.0 3D controller: NVIDIA Corporation …`, or `the pasted device` when the paste
    /// starts below the device's header.
    pub device: String,
    pub speed_downgraded: bool,
    pub width_downgraded: bool,
}

/// One sample of the quickly changing values, for `nvml.sample`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuSample {
    pub index: u32,
    pub utilization_gpu: Field<u32>,
    pub utilization_memory: Field<u32>,
    pub clock_sm: Field<u32>,
    pub power_usage_mw: Field<u32>,
    pub clocks_event_reasons: Field<Vec<String>>,
    pub pcie_gen: Field<u32>,
    pub pcie_width: Field<u32>,
    pub temperature_c: Field<u32>,
    pub memory_used: Field<u64>,
    /// The driver's own utilization samples (pasted `-q -d UTILIZATION`), which `nvml.sample`
    /// prefers to the instant `utilization_gpu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_gpu_samples: Option<UtilizationSamples>,
}

impl GpuReading {
    /// The sampled fields of this full reading: the one sample a zero-length window takes.
    pub fn sample(&self) -> GpuSample {
        GpuSample {
            index: self.index,
            utilization_gpu: self.utilization_gpu.clone(),
            utilization_memory: self.utilization_memory.clone(),
            clock_sm: self.clock_sm.clone(),
            power_usage_mw: self.power_usage_mw.clone(),
            clocks_event_reasons: self.clocks_event_reasons.clone(),
            pcie_gen: self.pcie_gen.clone(),
            pcie_width: self.pcie_width.clone(),
            temperature_c: self.temperature_c.clone(),
            memory_used: self.memory_used.clone(),
            utilization_gpu_samples: self.utilization_gpu_samples.clone(),
        }
    }
}
