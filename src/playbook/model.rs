//! The playbook and values file as typed data. Deserialisation is strict (`deny_unknown_fields`)
//! and the JSON Schemas in `schemas/` are generated from these types (`gpufix schema`), so the
//! schema and the code cannot drift: a test compares them.

use crate::report::{Safety, Severity};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The six layers, bottom-up: a lower fault poisons every metric above it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    Driver,
    Cuda,
    Data,
    Launch,
    Memory,
    Comm,
}

impl Layer {
    pub const ALL: [Layer; 6] = [
        Layer::Driver,
        Layer::Cuda,
        Layer::Data,
        Layer::Launch,
        Layer::Memory,
        Layer::Comm,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Driver => "driver",
            Layer::Cuda => "cuda",
            Layer::Data => "data",
            Layer::Launch => "launch",
            Layer::Memory => "memory",
            Layer::Comm => "comm",
        }
    }
    pub fn parse(s: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.as_str() == s)
    }
    pub fn title(self) -> &'static str {
        match self {
            Layer::Driver => "driver and firmware",
            Layer::Cuda => "CUDA runtime",
            Layer::Data => "data pipeline",
            Layer::Launch => "kernel launch and scheduling",
            Layer::Memory => "GPU memory",
            Layer::Comm => "NCCL and distributed",
        }
    }
}

/// One playbook file: the rules for one bottleneck, all in one layer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gpufix playbook")]
pub struct Playbook {
    /// Name of the playbook (usually the file stem).
    pub playbook: String,
    /// The layer every rule of the file belongs to: driver, cuda, data, launch, memory, comm.
    pub layer: Layer,
    /// One line naming the bottleneck the file covers.
    pub title: String,
    /// More about the file's rules, for people reading it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Values every rule of this file gets unless it writes its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<RuleDefaults>,
    /// The rules, each a probe → threshold → fix.
    pub rules: Vec<Rule>,
}

/// Playbook-level defaults for its rules: `defaults: {depends_on: [driver.nvml-unavailable]}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleDefaults {
    /// Rules every rule of the file depends on. A rule named here does not depend on itself,
    /// and a rule that writes its own `depends_on` (even `[]`) keeps its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
}

/// A threshold or setting a site may override in its values file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub default: Value,
    /// Where the default comes from: `vendor-documented: …`, `checklist: …`, `empirical: …`.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Evaluate the rule once per element of a list (one finding per GPU, per mount, …).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForEach {
    /// Expression giving a list, e.g. `nvml.gpus`.
    #[serde(rename = "in")]
    pub in_: String,
    /// Name the element is bound to in `fail_when` and `message`.
    #[serde(rename = "as")]
    pub as_: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    /// `safe` (reversible, harmless to running work), `disruptive` (touches running state),
    /// `manual` (never executed; printed as instructions).
    pub safety: Safety,
    /// What must restart for the fix to take effect: nothing, the training job, a service, a reboot.
    pub restart: Restart,
    /// Actions, each `{kind: FIX_KIND, …parameters}`; string parameters are templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::playbook::registry::fix_actions_schema")]
    pub actions: Vec<Map<String, Value>>,
    /// What a person should do (template). Required for manual fixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    Nothing,
    Job,
    Service,
    Reboot,
}

impl Restart {
    pub fn as_str(self) -> &'static str {
        match self {
            Restart::Nothing => "nothing",
            Restart::Job => "the training job",
            Restart::Service => "a service",
            Restart::Reboot => "a reboot",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// `layer.condition`, naming the condition, not the remedy: `driver.persistence-off`.
    pub id: String,
    /// The condition in one line, as a finding's headline.
    pub title: String,
    /// Why it matters, in two or three sentences.
    pub why: String,
    /// `critical`, `warning` or `info`.
    pub severity: Severity,
    /// Rules whose evidence this rule needs: it is `blocked` while any of them fails or is unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// Rules that name a cause of the condition this rule only states (a symptom): when any of
    /// them fails in the same run, this rule stands down as `not-applicable`, naming them. A
    /// cause rule that is unknown or not applicable does not silence it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explained_by: Vec<String>,
    /// Thresholds and settings by name (`{default, source, description}`), read as
    /// `params.NAME` and overridden per site in the values file.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub params: IndexMap<String, Param>,
    /// Named probes: `{ mods: { kind: kernel.modules } }`. String parameters are templates over
    /// `params` and `inputs`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(schema_with = "crate::playbook::registry::probe_map_schema")]
    pub probes: IndexMap<String, Map<String, Value>>,
    /// Named values, each an expression written once and read by name in `applies_when`,
    /// `fail_when`, the message and the fix: `suggested: "[params.max_workers, host.cpus] | min"`.
    /// Evaluated in order (a binding may read the ones above it) after the probes, and again
    /// for each `for_each` item (so a binding may read the item). A binding that cannot be
    /// computed is left undefined, and a verdict that needs it says why.
    #[serde(default, rename = "let", skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = {"pattern": "^[a-z_][a-z0-9_]*$"}))]
    pub lets: IndexMap<String, String>,
    /// Expression; when false the rule is `not-applicable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_when: Option<String>,
    /// Judge once per element of a list: `{in: nvml.gpus, as: gpu}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<ForEach>,
    /// Expression over probe outputs and `params`; true means the condition is present.
    pub fail_when: String,
    /// Template shown when the rule fails.
    pub message: String,
    /// What to do when it fails: `{safety, restart, actions, instructions}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
    /// URLs of the documentation the rule rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// For a condition that can be one moment's state (a job still tearing down its GPU
    /// context): on a live host, when the rule fails, its probes are read again after this long
    /// (`2s`, `500ms`; more than 0, at most 30s) and the finding stands only if the second
    /// reading fails too. A pasted text or a recording holds one moment and is judged once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck_after: Option<String>,
}

/// The longest `recheck_after` a rule may ask for: a health check waits this long at most.
pub const MAX_RECHECK: std::time::Duration = std::time::Duration::from_secs(30);

impl Rule {
    /// `recheck_after` as a duration: `None` when the rule does not ask for a second reading,
    /// `Some(Err)` naming what is wrong with the value it gives.
    pub fn recheck_delay(&self) -> Option<Result<std::time::Duration, String>> {
        let s = self.recheck_after.as_deref()?;
        let parsed = s
            .trim()
            .parse::<jiff::SignedDuration>()
            .map_err(|_| format!("`{s}` is not a duration (write it as 2s or 500ms)"))
            .and_then(|d| {
                std::time::Duration::try_from(d).map_err(|_| format!("`{s}` is negative"))
            })
            .and_then(|d| {
                if d.is_zero() || d > MAX_RECHECK {
                    Err(format!(
                        "`{s}` is out of range (more than 0, at most {}s)",
                        MAX_RECHECK.as_secs()
                    ))
                } else {
                    Ok(d)
                }
            });
        Some(parsed)
    }
}

/// `values.yaml`: site settings for built-in and site rules.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gpufix values")]
pub struct Values {
    #[serde(default)]
    pub rules: IndexMap<String, RuleValues>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleValues {
    /// Parameter overrides by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub params: IndexMap<String, Value>,
    /// Leave the rule out entirely.
    #[serde(default)]
    pub disabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waive: Option<Waiver>,
}

/// Accept a rule's finding for a while, with a reason. An expired waiver stops waiving.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    pub reason: String,
    /// `YYYY-MM-DD`; the waiver ends at the start of this day (UTC).
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub expires: String,
}
