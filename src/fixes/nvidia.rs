//! GPU settings through NVML: `nvidia.persistence`, `nvidia.power_limit`, `nvidia.clocks`.
//! The value read before is journaled; undo sets it back. These are disruptive: they change
//! a card other jobs may share.

use super::spec::GpuSelector;
use super::{Fix, FixCtx, Prepared, Prior, after_value, runtime_change, value_fingerprint};
use crate::fixes::FixError;
use crate::host::{GpuReading, HostError, NvmlSetting};
use crate::report::PlannedChange;
use serde_json::{Value, json};

fn gpus(sel: &GpuSelector, cx: &FixCtx) -> Result<Vec<GpuReading>, FixError> {
    let reading = cx.host.nvml()?;
    let want = match sel {
        GpuSelector::Index(i) => Some(*i),
        GpuSelector::Every(_) => None,
    };
    let list: Vec<GpuReading> = reading
        .gpus
        .into_iter()
        .filter(|g| want.is_none_or(|i| g.index == i))
        .collect();
    if list.is_empty() {
        return Err(match want {
            Some(gpu) => HostError::NoGpu { gpu }.into(),
            None => FixError::failed("no GPU \"all\""),
        });
    }
    Ok(list)
}

fn gpu_index(change: &PlannedChange) -> Result<u32, FixError> {
    change
        .before
        .as_ref()
        .and_then(|b| b.get("gpu"))
        .and_then(Value::as_u64)
        .map(|n| n as u32)
        .ok_or_else(|| "change has no GPU index".into())
}

fn reading(idx: u32, cx: &FixCtx) -> Result<GpuReading, FixError> {
    cx.host
        .nvml()?
        .gpus
        .into_iter()
        .find(|g| g.index == idx)
        .ok_or_else(|| FixError::Failed(format!("GPU {idx} is gone")))
}

/// Shared shape of the three kinds: read a JSON state of one GPU, set a state.
pub trait GpuSetting: Sync {
    type Params: serde::de::DeserializeOwned;
    const NAME: &'static str;
    /// Which GPUs the action names.
    fn gpu(params: &Self::Params) -> &GpuSelector;
    fn state(g: &GpuReading) -> Result<Value, FixError>;
    fn wanted(params: &Self::Params, g: &GpuReading) -> Result<Value, FixError>;
    fn set(idx: u32, state: &Value, cx: &FixCtx) -> Result<(), FixError>;
    fn describe(state: &Value) -> String;
}

fn field<T: Clone>(f: &crate::host::Field<T>, what: &str) -> Result<T, FixError> {
    f.ok()
        .cloned()
        .ok_or_else(|| FixError::Failed(format!("{what}: {}", f.reason().unwrap_or_default())))
}

macro_rules! gpu_fix_kind {
    ($T:ty) => {
        impl Fix for $T {
            type Params = <$T as GpuSetting>::Params;
            fn name(&self) -> &'static str {
                <$T>::NAME
            }
            fn prepare(
                &self,
                params: &Self::Params,
                cx: &FixCtx,
            ) -> Result<Vec<Prepared>, FixError> {
                let mut out = Vec::new();
                for g in gpus(<$T>::gpu(params), cx)? {
                    let mut before = <$T>::state(&g)?;
                    let mut after = <$T>::wanted(params, &g)?;
                    if before == after {
                        continue;
                    }
                    let summary = format!(
                        "GPU {}: {} → {}",
                        g.index,
                        <$T>::describe(&before),
                        <$T>::describe(&after)
                    );
                    before
                        .as_object_mut()
                        .unwrap()
                        .insert("gpu".into(), json!(g.index));
                    after
                        .as_object_mut()
                        .unwrap()
                        .insert("gpu".into(), json!(g.index));
                    out.push(runtime_change(
                        "runtime",
                        format!(
                            "gpu {} {}",
                            g.index,
                            <$T>::NAME.trim_start_matches("nvidia.")
                        ),
                        summary,
                        before,
                        after,
                    ));
                }
                Ok(out)
            }
            fn fingerprint(&self, change: &PlannedChange, cx: &FixCtx) -> Result<String, FixError> {
                let idx = gpu_index(change)?;
                let mut s = <$T>::state(&reading(idx, cx)?)?;
                s.as_object_mut().unwrap().insert("gpu".into(), json!(idx));
                Ok(value_fingerprint(&s))
            }
            fn after_fingerprint(&self, change: &PlannedChange) -> String {
                value_fingerprint(&after_value(change))
            }
            fn save(&self, change: &PlannedChange, cx: &FixCtx) -> Result<Prior, FixError> {
                let idx = gpu_index(change)?;
                let mut s = <$T>::state(&reading(idx, cx)?)?;
                s.as_object_mut().unwrap().insert("gpu".into(), json!(idx));
                Ok(Prior::Value { value: s })
            }
            fn apply(&self, change: &PlannedChange, cx: &FixCtx) -> Result<(), FixError> {
                <$T>::set(gpu_index(change)?, &after_value(change), cx)
            }
            fn undo(
                &self,
                change: &PlannedChange,
                prior: &Prior,
                cx: &FixCtx,
            ) -> Result<(), FixError> {
                let Prior::Value { value } = prior else {
                    return Err("journal holds no value for this change".into());
                };
                <$T>::set(gpu_index(change)?, value, cx)
            }
        }
    };
}

gpu_fix_kind!(Persistence);
gpu_fix_kind!(PowerLimit);
gpu_fix_kind!(Clocks);

pub struct Persistence;

impl GpuSetting for Persistence {
    type Params = PersistenceParams;
    const NAME: &'static str = "nvidia.persistence";
    fn gpu(params: &PersistenceParams) -> &GpuSelector {
        &params.gpu
    }
    fn state(g: &GpuReading) -> Result<Value, FixError> {
        Ok(json!({"enabled": field(&g.persistence, "persistence mode")?}))
    }
    fn wanted(params: &PersistenceParams, _g: &GpuReading) -> Result<Value, FixError> {
        Ok(json!({"enabled": params.enabled}))
    }
    fn set(idx: u32, s: &Value, cx: &FixCtx) -> Result<(), FixError> {
        Ok(cx.host.nvml_set(
            idx,
            &NvmlSetting::Persistence {
                enabled: s["enabled"].as_bool().unwrap_or(true),
            },
        )?)
    }
    fn describe(s: &Value) -> String {
        format!(
            "persistence {}",
            if s["enabled"].as_bool() == Some(true) {
                "on"
            } else {
                "off"
            }
        )
    }
}

pub struct PowerLimit;

impl GpuSetting for PowerLimit {
    type Params = PowerLimitParams;
    const NAME: &'static str = "nvidia.power_limit";
    fn gpu(params: &PowerLimitParams) -> &GpuSelector {
        &params.gpu
    }
    fn state(g: &GpuReading) -> Result<Value, FixError> {
        Ok(json!({"milliwatts": field(&g.power_limit_mw, "power limit")?}))
    }
    fn wanted(params: &PowerLimitParams, g: &GpuReading) -> Result<Value, FixError> {
        let mw = match params.watts {
            Watts::Default(DefaultWord::Default) => {
                field(&g.power_default_limit_mw, "default power limit")?
            }
            Watts::Number(n) => (n * 1000.0) as u32,
        };
        Ok(json!({"milliwatts": mw}))
    }
    fn set(idx: u32, s: &Value, cx: &FixCtx) -> Result<(), FixError> {
        Ok(cx.host.nvml_set(
            idx,
            &NvmlSetting::PowerLimit {
                milliwatts: s["milliwatts"].as_u64().unwrap_or(0) as u32,
            },
        )?)
    }
    fn describe(s: &Value) -> String {
        format!(
            "power limit {} W",
            s["milliwatts"].as_u64().unwrap_or(0) / 1000
        )
    }
}

pub struct Clocks;

impl GpuSetting for Clocks {
    type Params = ClocksParams;
    const NAME: &'static str = "nvidia.clocks";
    fn gpu(params: &ClocksParams) -> &GpuSelector {
        &params.gpu
    }
    fn state(g: &GpuReading) -> Result<Value, FixError> {
        Ok(json!({
            "graphics_mhz": field(&g.app_clock_graphics, "application graphics clock")?,
            "memory_mhz": field(&g.app_clock_mem, "application memory clock")?,
        }))
    }
    fn wanted(params: &ClocksParams, g: &GpuReading) -> Result<Value, FixError> {
        match params.action {
            ClocksAction::Reset => Ok(json!({
                "graphics_mhz": field(&g.default_app_clock_graphics, "default application graphics clock")?,
                "memory_mhz": field(&g.default_app_clock_mem, "default application memory clock")?,
            })),
            ClocksAction::Set => Ok(json!({
                "graphics_mhz": params.graphics_mhz.ok_or("`set` needs graphics_mhz")?,
                "memory_mhz": params.memory_mhz.ok_or("`set` needs memory_mhz")?,
            })),
        }
    }
    fn set(idx: u32, s: &Value, cx: &FixCtx) -> Result<(), FixError> {
        Ok(cx.host.nvml_set(
            idx,
            &NvmlSetting::ApplicationClocks {
                graphics_mhz: s["graphics_mhz"].as_u64().unwrap_or(0) as u32,
                memory_mhz: s["memory_mhz"].as_u64().unwrap_or(0) as u32,
            },
        )?)
    }
    fn describe(s: &Value) -> String {
        format!(
            "application clocks {}/{} MHz (graphics/memory)",
            s["graphics_mhz"], s["memory_mhz"]
        )
    }
}

/// Parameters of `nvidia.persistence`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PersistenceParams {
    /// GPU index, or `all`.
    pub gpu: super::spec::GpuSelector,
    /// On or off.
    pub enabled: bool,
}

/// Parameters of `nvidia.power_limit`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PowerLimitParams {
    /// GPU index, or `all`.
    pub gpu: super::spec::GpuSelector,
    /// Watts, or `default` for the card's default limit.
    pub watts: Watts,
}

/// Watts, or `default`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Watts {
    Number(f64),
    Default(DefaultWord),
}

/// `default`
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DefaultWord {
    Default,
}

/// Parameters of `nvidia.clocks`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClocksParams {
    /// GPU index, or `all`.
    pub gpu: super::spec::GpuSelector,
    /// Reset application clocks, or set them.
    pub action: ClocksAction,
    /// Graphics clock in MHz (with `set`).
    #[serde(default)]
    pub graphics_mhz: Option<u32>,
    /// Memory clock in MHz (with `set`).
    #[serde(default)]
    pub memory_mhz: Option<u32>,
}

/// `reset` or `set`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClocksAction {
    Reset,
    Set,
}

pub static PERSISTENCE: super::spec::FixSpec = super::spec::FixSpec {
    name: "nvidia.persistence",
    doc: "Set persistence mode through NVML.",
    params: crate::kinds::ParamsDecl::of::<PersistenceParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &Persistence,
};

pub static POWER_LIMIT: super::spec::FixSpec = super::spec::FixSpec {
    name: "nvidia.power_limit",
    doc: "Set the power limit through NVML (watts, or `default`).",
    params: crate::kinds::ParamsDecl::of::<PowerLimitParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &PowerLimit,
};

pub static CLOCKS: super::spec::FixSpec = super::spec::FixSpec {
    name: "nvidia.clocks",
    doc: "Reset or set application clocks through NVML.",
    params: crate::kinds::ParamsDecl::of::<ClocksParams>(),
    max_safety: crate::report::Safety::Disruptive,
    imp: &Clocks,
};
