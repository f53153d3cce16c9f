//! Validation before anything runs: YAML syntax, then the JSON Schema (strict: unknown keys
//! are errors), then typed reading, then semantic checks across all files (unique ids, known
//! probe and fix kinds and their parameters, known dependencies, no cycles, expressions and
//! templates that compile and read only what the rule declares). Every problem is collected;
//! the caller prints them all and stops.
//!
//! One job per file: this one parses, merges tiers and values and drives the checks; `schema`
//! holds the schemas and the structural check; `rules` the semantic checks of one rule
//! (kinds, parameters, expressions, templates); `order` the dependency order.

mod order;
mod rules;
mod schema;

pub use order::order;
use rules::{RuleDiags, check_rule};
pub use schema::{playbook_schema, values_schema};
use schema::{schema_check, structural_playbook_schema};

use super::diag::{Diagnostic, locate};
use super::model::{Playbook, Rule, Values};
use super::{LoadedRule, RuleSet, SourceFile, Tier};
use crate::expr::{self, HOST_FIELDS, INPUTS, ROOTS};
use crate::fixes;
use crate::probes;
use crate::report::Safety;
use crate::vocab::did_you_mean;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Parse YAML text into JSON, with a located diagnostic on syntax errors.
pub fn parse_yaml(file: &str, text: &str) -> Result<Value, Diagnostic> {
    serde_yaml::from_str::<Value>(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        Diagnostic::new(
            "yaml-syntax",
            file,
            format!("invalid YAML: {}", strip_location(&e.to_string())),
            "fix the YAML syntax (indentation, a missing `:` or an unclosed quote or bracket)",
        )
        .line(line)
    })
}

fn strip_location(s: &str) -> String {
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

struct Parsed {
    file: String,
    text: String,
    tier: Tier,
    book: Playbook,
    /// Per rule: its `depends_on` came from the playbook's `defaults`.
    inherited: Vec<bool>,
    /// Per rule of `book`: its index in the document (`/rules/N`), which differs from its
    /// position when rules that could not be rebuilt were left out.
    index: Vec<usize>,
    /// Set for a document that failed the schema and was rebuilt from its valid parts, so
    /// that its rules' own mistakes are reported in the same pass: per rule, the keys that
    /// were left out or stood in for (whose cascading diagnostics are not shown).
    salvaged: Option<Vec<BTreeSet<String>>>,
}

/// A rule with placeholders for every required key: a key of a broken rule that reads into
/// it alone is valid by itself.
fn rule_template(file: &str, i: usize) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in [
        ("id", format!("invalid-rule-{i}-of-{file}")),
        ("title", "-".into()),
        ("why", "-".into()),
        ("severity", "info".into()),
        ("fail_when", "false".into()),
        ("message", "-".into()),
    ] {
        m.insert(k.into(), Value::String(v));
    }
    m
}

/// Rebuild a playbook that failed the schema from the parts that are valid on their own, so
/// the semantic checks of its rules run in the same pass as the schema's (`validate` shows
/// every mistake of a file at once, not the schema's first and then the rest). Top-level keys
/// and each rule's keys are kept when each reads into the types alone; required keys that are
/// missing or invalid get placeholders, remembered so that what follows from them is not
/// reported. Rules that cannot be rebuilt are left out. `None` when nothing can be rebuilt.
fn salvage(file: &str, doc: &Value) -> Option<(Playbook, Vec<usize>, Vec<BTreeSet<String>>)> {
    let obj = doc.as_object()?;
    let mut top = Map::new();
    top.insert("playbook".into(), Value::String("invalid".into()));
    top.insert("layer".into(), Value::String("driver".into()));
    top.insert("title".into(), Value::String("-".into()));
    top.insert("rules".into(), Value::Array(Vec::new()));
    for (k, v) in obj {
        if k == "rules" {
            continue;
        }
        let mut t = top.clone();
        t.insert(k.clone(), v.clone());
        if serde_json::from_value::<Playbook>(Value::Object(t)).is_ok() {
            top.insert(k.clone(), v.clone());
        }
    }
    let mut rules = Vec::new();
    let mut index = Vec::new();
    let mut stood_in = Vec::new();
    for (i, r) in obj
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(r) = r.as_object() else { continue };
        let template = rule_template(file, i);
        let mut rebuilt = template.clone();
        let mut placeholders: BTreeSet<String> = template.keys().cloned().collect();
        for (k, v) in r {
            let mut t = template.clone();
            t.insert(k.clone(), v.clone());
            if serde_json::from_value::<Rule>(Value::Object(t)).is_ok() {
                rebuilt.insert(k.clone(), v.clone());
                placeholders.remove(k);
            } else {
                placeholders.insert(k.clone());
            }
        }
        if let Ok(rule) = serde_json::from_value::<Rule>(Value::Object(rebuilt)) {
            rules.push(rule);
            index.push(i);
            stood_in.push(placeholders);
        }
    }
    let mut book = serde_json::from_value::<Playbook>(Value::Object(top)).ok()?;
    book.rules = rules;
    Some((book, index, stood_in))
}

/// Whether a semantic diagnostic of a rebuilt rule may follow from a key that was stood in for
/// (and so is not the author's own mistake there).
fn follows_from_placeholder(d: &Diagnostic, base: &str, stood_in: &BTreeSet<String>) -> bool {
    let Some(path) = d.path.as_deref() else {
        return false;
    };
    let Some(rest) = path.strip_prefix(base) else {
        return false;
    };
    let key = rest.trim_start_matches('/').split('/').next().unwrap_or("");
    if key.is_empty() || stood_in.contains(key) {
        return true;
    }
    // names a left-out key declared are undeclared now
    let declares = ["probes", "let", "params", "for_each"];
    d.code == "undeclared-name" && declares.iter().any(|k| stood_in.contains(*k))
}

/// Give each rule that does not write its own `depends_on` the playbook's default (without
/// itself). Returns, per rule, whether it inherited.
fn apply_defaults(book: &mut Playbook, text: &str) -> Vec<bool> {
    let mut inherited = vec![false; book.rules.len()];
    let Some(defaults) = book.defaults.as_ref().filter(|d| !d.depends_on.is_empty()) else {
        return inherited;
    };
    // Which rules wrote `depends_on` (an empty list included) is only in the text.
    #[derive(serde::Deserialize)]
    struct RawRule {
        #[serde(default)]
        depends_on: Option<serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    struct RawBook {
        rules: Vec<RawRule>,
    }
    let Ok(raw) = serde_yaml::from_str::<RawBook>(text) else {
        return inherited;
    };
    for ((rule, raw), inh) in book.rules.iter_mut().zip(raw.rules).zip(&mut inherited) {
        if raw.depends_on.is_none() {
            rule.depends_on = defaults
                .depends_on
                .iter()
                .filter(|d| **d != rule.id)
                .cloned()
                .collect();
            *inh = true;
        }
    }
    inherited
}

/// Load and check playbooks and an optional values file into an ordered rule set.
pub fn load(
    sources: &[SourceFile],
    values: Option<&SourceFile>,
) -> Result<RuleSet, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    // made only when a document needs the schema pass (generating it costs milliseconds)
    let mut pschema: Option<Value> = None;
    let mut parsed = Vec::new();
    for s in sources {
        // Fast path: a document that reads straight into the types is valid under the schema
        // (the schema is generated from the same types). Only a document that does not gets
        // the JSON Schema pass, for its located diagnostics.
        if let Ok(mut book) = serde_yaml::from_str::<Playbook>(&s.text) {
            let inherited = apply_defaults(&mut book, &s.text);
            let index = (0..book.rules.len()).collect();
            parsed.push(Parsed {
                file: s.name.clone(),
                text: s.text.clone(),
                tier: s.tier,
                book,
                inherited,
                index,
                salvaged: None,
            });
            continue;
        }
        let doc = match parse_yaml(&s.name, &s.text) {
            Ok(d) => d,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let ps = pschema.get_or_insert_with(structural_playbook_schema);
        let errs = schema_check(&s.name, &s.text, &doc, ps, "playbook");
        if !errs.is_empty() {
            diags.extend(errs);
            if let Some((mut book, index, stood_in)) = salvage(&s.name, &doc) {
                let inherited = apply_defaults(&mut book, &s.text);
                parsed.push(Parsed {
                    file: s.name.clone(),
                    text: s.text.clone(),
                    tier: s.tier,
                    book,
                    inherited,
                    index,
                    salvaged: Some(stood_in),
                });
            }
            continue;
        }
        match serde_json::from_value::<Playbook>(doc) {
            Ok(mut book) => {
                let inherited = apply_defaults(&mut book, &s.text);
                let index = (0..book.rules.len()).collect();
                parsed.push(Parsed {
                    file: s.name.clone(),
                    text: s.text.clone(),
                    tier: s.tier,
                    book,
                    inherited,
                    index,
                    salvaged: None,
                })
            }
            Err(e) => diags.push(Diagnostic::new(
                "schema",
                &s.name,
                format!("invalid playbook: {e}"),
                "see `gpufix schema playbook`",
            )),
        }
    }

    // Merge: a later tier replaces an earlier rule with the same id; the same id twice in one
    // tier is an error.
    let mut chosen: Vec<(usize, usize)> = Vec::new(); // (parsed idx, rule idx)
    let mut by_id: HashMap<String, (usize, usize)> = HashMap::new();
    for (pi, p) in parsed.iter().enumerate() {
        for (ri, r) in p.book.rules.iter().enumerate() {
            if let Some(&(opi, ori)) = by_id.get(&r.id) {
                let other = &parsed[opi];
                if other.tier == p.tier {
                    let (ri, ori) = (p.index[ri], other.index[ori]);
                    let line = locate(&p.text, &format!("/rules/{ri}/id"));
                    let oline = locate(&other.text, &format!("/rules/{ori}/id"));
                    diags.push(
                        Diagnostic::new(
                            "duplicate-id",
                            &p.file,
                            format!(
                                "rule id `{}` is defined twice (also at {}:{})",
                                r.id,
                                other.file,
                                oline.map(|l| l.to_string()).unwrap_or_else(|| "?".into())
                            ),
                            "give each rule a unique id; to replace a built-in rule, put the new one in a site playbook",
                        )
                        .at(format!("/rules/{ri}/id"), line),
                    );
                    continue;
                }
                // replace in place, keeping the original's position
                if let Some(slot) = chosen.iter_mut().find(|c| **c == (opi, ori)) {
                    *slot = (pi, ri);
                }
                by_id.insert(r.id.clone(), (pi, ri));
            } else {
                by_id.insert(r.id.clone(), (pi, ri));
                chosen.push((pi, ri));
            }
        }
    }
    let ids: BTreeSet<String> = by_id.keys().cloned().collect();

    // Values file.
    let mut vals = Values::default();
    if let Some(v) = values {
        match parse_yaml(&v.name, &v.text) {
            Err(d) => diags.push(d),
            Ok(doc) => {
                let doc = if doc.is_null() {
                    Value::Object(Map::new())
                } else {
                    doc
                };
                let errs = schema_check(&v.name, &v.text, &doc, &values_schema(), "values");
                if errs.is_empty() {
                    match serde_json::from_value::<Values>(doc) {
                        Ok(x) => vals = x,
                        Err(e) => diags.push(Diagnostic::new(
                            "schema",
                            &v.name,
                            format!("invalid values file: {e}"),
                            "see `gpufix schema values`",
                        )),
                    }
                } else {
                    diags.extend(errs);
                }
            }
        }
        for (id, rv) in &vals.rules {
            let path = format!("/rules/{}", id.replace('~', "~0").replace('/', "~1"));
            let line = locate(&v.text, &path);
            let Some(&(pi, ri)) = by_id.get(id) else {
                diags.push(
                    Diagnostic::new(
                        "unknown-rule",
                        &v.name,
                        format!("values file names unknown rule `{id}`"),
                        did_you_mean(id, ids.iter().map(String::as_str))
                            .unwrap_or_else(|| "run `gpufix list` to see rule ids".into()),
                    )
                    .at(path, line),
                );
                continue;
            };
            let rule = &parsed[pi].book.rules[ri];
            for (name, given) in &rv.params {
                if let Some(decl) = rule.params.get(name)
                    && !same_type(&decl.default, given)
                {
                    let ty = crate::kinds::json_type(&decl.default);
                    let ty = match ty {
                        "integer" => "an integer",
                        "array" => "an array",
                        "object" => "an object",
                        "number" => "a number",
                        "boolean" => "a boolean",
                        _ => "a string",
                    };
                    diags.push(
                        Diagnostic::new(
                            "param-type",
                            &v.name,
                            format!(
                                "parameter `{name}` of rule `{id}` must be {ty} (its default is {}), found {} {given}",
                                decl.default,
                                crate::kinds::json_type(given)
                            ),
                            format!("write {ty}, e.g. `{name}: {}`", decl.default),
                        )
                        .at(
                            format!("{path}/params/{name}"),
                            locate(&v.text, &format!("{path}/params/{name}")),
                        ),
                    );
                }
                if !rule.params.contains_key(name) {
                    let known: Vec<&str> = rule.params.keys().map(String::as_str).collect();
                    diags.push(
                        Diagnostic::new(
                            "unknown-param",
                            &v.name,
                            format!("rule `{id}` has no parameter `{name}`"),
                            did_you_mean(name, known.iter().copied()).unwrap_or_else(|| {
                                if known.is_empty() {
                                    "this rule takes no parameters".into()
                                } else {
                                    format!("its parameters: {}", known.join(", "))
                                }
                            }),
                        )
                        .at(
                            format!("{path}/params/{name}"),
                            locate(&v.text, &format!("{path}/params/{name}")),
                        ),
                    );
                }
            }
            if let Some(w) = &rv.waive
                && jiff::civil::Date::strptime("%Y-%m-%d", &w.expires).is_err()
            {
                diags.push(
                    Diagnostic::new(
                        "bad-waiver",
                        &v.name,
                        format!(
                            "waiver of `{id}` has an invalid expiry date `{}`",
                            w.expires
                        ),
                        "write the date as YYYY-MM-DD, e.g. 2027-03-31",
                    )
                    .at(
                        format!("{path}/waive/expires"),
                        locate(&v.text, &format!("{path}/waive/expires")),
                    ),
                );
            }
        }
    }

    // Playbook defaults name known rules (checked once, where they are written).
    for p in &parsed {
        let Some(defaults) = &p.book.defaults else {
            continue;
        };
        for (i, dep) in defaults.depends_on.iter().enumerate() {
            if !ids.contains(dep) {
                let path = format!("/defaults/depends_on/{i}");
                let line = locate(&p.text, &path);
                diags.push(
                    Diagnostic::new(
                        "unknown-dependency",
                        &p.file,
                        format!("`defaults` names unknown rule `{dep}`"),
                        did_you_mean(dep, ids.iter().map(String::as_str))
                            .unwrap_or_else(|| "run `gpufix list` to see rule ids".into()),
                    )
                    .at(path, line),
                );
            }
        }
    }

    // Semantic checks of every chosen rule.
    let mut rules = Vec::new();
    for &(pi, ri) in &chosen {
        let p = &parsed[pi];
        let rule = &p.book.rules[ri];
        let base = format!("/rules/{}", p.index[ri]);
        let before = diags.len();
        let mut d = RuleDiags {
            file: &p.file,
            text: &p.text,
            base: &base,
            out: &mut diags,
        };
        let fail_expr = check_rule(rule, &ids, p.inherited[ri], &mut d);
        if let Some(stood_in) = &p.salvaged {
            let mut own = diags.split_off(before);
            own.retain(|d| !follows_from_placeholder(d, &base, &stood_in[ri]));
            diags.extend(own);
        }
        let rv = vals.rules.get(&rule.id);
        if rv.is_some_and(|v| v.disabled) {
            continue;
        }
        let mut params: Map<String, Value> = rule
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.default.clone()))
            .collect();
        if let Some(rv) = rv {
            for (k, v) in &rv.params {
                params.insert(k.clone(), v.clone());
            }
        }
        let fix_safety = rule.fix.as_ref().map(|f| f.safety);
        rules.push(LoadedRule {
            rule: rule.clone(),
            layer: p.book.layer,
            playbook: p.book.playbook.clone(),
            source: p.file.clone(),
            tier: p.tier,
            params,
            waiver: rv.and_then(|v| v.waive.clone()),
            fix_safety,
            fail_expr,
        });
    }
    let disabled: Vec<String> = vals
        .rules
        .iter()
        .filter(|(_, v)| v.disabled)
        .map(|(k, _)| k.clone())
        .collect();

    // Dependencies on disabled rules are simply dropped; the order must have no cycle.
    let ordered = match order(&rules) {
        Ok(o) => o,
        Err(cycle) => {
            let first = rules.iter().find(|r| r.rule.id == cycle[0]).unwrap();
            let pi = parsed
                .iter()
                .position(|p| p.file == first.source)
                .unwrap_or(0);
            let ri = parsed[pi]
                .book
                .rules
                .iter()
                .position(|r| r.id == cycle[0])
                .unwrap_or(0);
            // an inherited dependency is written in the playbook's defaults
            let dep_path = if parsed[pi].inherited.get(ri).copied().unwrap_or(false) {
                "/defaults/depends_on".to_string()
            } else {
                format!(
                    "/rules/{}/depends_on",
                    parsed[pi].index.get(ri).copied().unwrap_or(ri)
                )
            };
            diags.push(
                Diagnostic::new(
                    "dependency-cycle",
                    &first.source,
                    format!(
                        "rule `{}` has circular dependency `{}`",
                        cycle[0],
                        cycle.join(" -> ")
                    ),
                    "remove one of the `depends_on` entries in the cycle",
                )
                .at(dep_path.clone(), locate(&parsed[pi].text, &dep_path)),
            );
            Vec::new()
        }
    };
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut by: HashMap<String, LoadedRule> =
        rules.into_iter().map(|r| (r.rule.id.clone(), r)).collect();
    Ok(RuleSet {
        rules: ordered
            .into_iter()
            .filter_map(|id| by.remove(&id))
            .collect(),
        disabled,
    })
}

/// Whether a values-file override has the type of the parameter's declared default (an
/// integer is also a number; a `null` default takes anything).
fn same_type(default: &Value, given: &Value) -> bool {
    match default {
        Value::Null => true,
        Value::Number(n) if n.is_f64() => given.is_number(),
        Value::Number(_) => given.is_i64() || given.is_u64(),
        _ => crate::kinds::json_type(default) == crate::kinds::json_type(given),
    }
}
