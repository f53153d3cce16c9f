//! Playbooks: where they come from, how they are read and checked, and the merged, ordered
//! rule set the engine evaluates. This module is the only user of the YAML parser.

pub mod diag;
pub mod model;
pub mod registry;
pub mod validate;

use crate::report::Safety;
pub use diag::Diagnostic;
pub use model::{Layer, Playbook, Rule, Values};
use serde_json::Value;

/// Where a playbook came from; later tiers replace earlier rules with the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Builtin,
    System,
    Cli,
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    pub tier: Tier,
}

/// The built-in playbooks, embedded in the binary.
pub static BUILTIN: &[(&str, &str)] = &[
    ("driver.yaml", include_str!("../../playbooks/driver.yaml")),
    ("cuda.yaml", include_str!("../../playbooks/cuda.yaml")),
    ("data.yaml", include_str!("../../playbooks/data.yaml")),
    ("launch.yaml", include_str!("../../playbooks/launch.yaml")),
    ("memory.yaml", include_str!("../../playbooks/memory.yaml")),
    ("comm.yaml", include_str!("../../playbooks/comm.yaml")),
];

pub fn builtin_sources() -> Vec<SourceFile> {
    BUILTIN
        .iter()
        .map(|(n, t)| SourceFile {
            name: format!("builtin:playbooks/{n}"),
            text: t.to_string(),
            tier: Tier::Builtin,
        })
        .collect()
}

/// One rule after loading: the rule, its playbook's layer, and the parameter values in force.
#[derive(Debug, Clone)]
pub struct LoadedRule {
    pub rule: Rule,
    pub layer: Layer,
    pub playbook: String,
    pub source: String,
    pub tier: Tier,
    /// Defaults overridden by the values file.
    pub params: serde_json::Map<String, Value>,
    pub waiver: Option<model::Waiver>,
    /// Effective fix safety (never looser than the loosest its action kinds allow).
    pub fix_safety: Option<Safety>,
    /// `fail_when`, compiled once when the rule was checked.
    pub fail_expr: Option<crate::expr::Compiled>,
}

/// Rules in evaluation order: bottom-up by layer, dependencies first, then by tier and position.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub rules: Vec<LoadedRule>,
    /// Rules the values file disabled (named in reports' notes).
    pub disabled: Vec<String>,
}

impl RuleSet {
    pub fn get(&self, id: &str) -> Option<&LoadedRule> {
        self.rules.iter().find(|r| r.rule.id == id)
    }
}

/// The authoring reference (`docs/playbooks.md`): the playbook's and a rule's keys, from the
/// playbook schema's descriptions, then every probe and fix kind.
pub fn reference_markdown() -> String {
    let kinds = registry::reference_markdown();
    let at = kinds.find("## Probe kinds").unwrap_or(kinds.len());
    format!("{}{}{}", &kinds[..at], keys_markdown(), &kinds[at..])
}

fn keys_markdown() -> String {
    let schema = validate::playbook_schema();
    let mut out = String::new();
    let section = |out: &mut String, title: &str, obj: &Value| {
        out.push_str(&format!("## {title}\n\n"));
        let required: Vec<&str> = obj["required"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = obj["properties"].as_object() {
            for (k, v) in props {
                let desc = v["description"]
                    .as_str()
                    .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
                    .unwrap_or_default();
                let star = if required.contains(&k.as_str()) {
                    "*"
                } else {
                    ""
                };
                if desc.is_empty() {
                    out.push_str(&format!("- `{k}`{star}\n"));
                } else {
                    out.push_str(&format!("- `{k}`{star}: {desc}\n"));
                }
            }
        }
        out.push('\n');
    };
    section(&mut out, "Playbook keys", &schema);
    section(
        &mut out,
        "`defaults` keys",
        &schema["$defs"]["RuleDefaults"],
    );
    section(&mut out, "Rule keys", &schema["$defs"]["Rule"]);
    out
}

#[cfg(test)]
mod layering {
    /// Playbooks sit below the engine: they may use the expression language
    /// ([`crate::expr`]) but never the engine that evaluates them (issue 11, item 5).
    #[test]
    fn playbook_does_not_import_the_engine() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/playbook");
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(
                !text.contains(&["crate", "::engine"].concat()),
                "{} imports the engine",
                p.display()
            );
        }
    }
}
