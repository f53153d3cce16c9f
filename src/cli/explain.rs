//! `gpufix explain RULE`: what the rule checks, why, its threshold and source, its fix.

use super::{Global, print_diagnostics};
use crate::session::ExitStatus;
use crate::vocab::did_you_mean;
use clap::Args;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Rule id, e.g. driver.persistence-off
    pub rule: String,
    #[command(flatten)]
    pub rules: super::RuleOpts,
}

pub fn run(g: &Global, a: &ExplainArgs) -> anyhow::Result<ExitStatus> {
    let set = match g.rule_set() {
        Ok(s) => s,
        Err(d) => return Ok(print_diagnostics(&d)),
    };
    let Some(r) = set.get(&a.rule) else {
        let hint = did_you_mean(&a.rule, set.rules.iter().map(|r| r.rule.id.as_str()))
            .unwrap_or_else(|| "run `gpufix list` to see rule ids".into());
        anyhow::bail!("no rule `{}`\nhelp: {hint}", a.rule);
    };
    let rule = &r.rule;
    println!("{} — {}", rule.id, rule.title);
    println!(
        "layer: {} ({})   severity: {}   from: {}",
        r.layer.as_str(),
        r.layer.title(),
        rule.severity.as_str(),
        r.source
    );
    println!(
        "\nWhy it matters\n  {}",
        rule.why.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    println!("\nWhat it checks\n  fails when: {}", rule.fail_when.trim());
    if let Some(fe) = &rule.for_each {
        println!("  for each `{}` in {}", fe.as_, fe.in_);
    }
    if let Some(a) = &rule.applies_when {
        println!("  applies when: {a}");
    }
    if !rule.lets.is_empty() {
        println!("  where (let):");
        for (name, src) in &rule.lets {
            println!(
                "    {name} = {}",
                src.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }
    for (alias, p) in &rule.probes {
        println!(
            "  probe `{alias}`: {}",
            serde_json::Value::Object(p.clone())
        );
    }
    if !rule.depends_on.is_empty() {
        println!(
            "  blocked while any of these fails or is unknown: {}",
            rule.depends_on.join(", ")
        );
    }
    if !rule.explained_by.is_empty() {
        println!(
            "  stands down when any of these fails (it names the cause): {}",
            rule.explained_by.join(", ")
        );
    }
    if !rule.params.is_empty() {
        println!("\nThresholds");
        for (k, p) in &rule.params {
            let cur = r.params.get(k).unwrap_or(&p.default);
            let over = if cur != &p.default {
                format!(" (default {}, set by the values file)", p.default)
            } else {
                String::new()
            };
            println!("  {k} = {cur}{over}\n      source: {}", p.source);
            if let Some(d) = &p.description {
                println!("      {d}");
            }
        }
    }
    match &rule.fix {
        None => println!("\nFix\n  none: this rule only reports"),
        Some(f) => {
            println!(
                "\nFix ({}; takes effect after: {})",
                f.safety.as_str(),
                f.restart.as_str()
            );
            for a in &f.actions {
                println!(
                    "  - {}",
                    crate::render::text::describe_action(&serde_json::Value::Object(a.clone()))
                );
            }
            if let Some(i) = &f.instructions {
                for l in i.lines() {
                    println!("  {l}");
                }
            }
        }
    }
    if let Some(w) = &r.waiver {
        println!("\nWaived until {}: {}", w.expires, w.reason);
    }
    if !rule.references.is_empty() {
        println!("\nReferences");
        for x in &rule.references {
            println!("  - {x}");
        }
    }
    Ok(ExitStatus::Clean)
}
