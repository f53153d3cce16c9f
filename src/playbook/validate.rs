//! Validation before anything runs: YAML syntax, then the JSON Schema (strict: unknown keys
//! are errors), then typed reading, then semantic checks across all files (unique ids, known
//! probe and fix kinds and their parameters, known dependencies, no cycles, expressions and
//! templates that compile and read only what the rule declares). Every problem is collected;
//! the caller prints them all and stops.

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

pub fn playbook_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Playbook)).expect("schema serialises")
}

/// The playbook schema `load` checks a document's structure against: probes and fix actions
/// are plain objects here, because each is checked against its kind's own parameter schema
/// (with messages that name the kind and the parameter).
fn structural_playbook_schema() -> Value {
    let mut s = playbook_schema();
    if let Some(defs) = s.get_mut("$defs").and_then(Value::as_object_mut) {
        for name in ["ProbeSpec", "FixAction"] {
            defs.insert(name.into(), serde_json::json!({ "type": "object" }));
        }
    }
    s
}

pub fn values_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Values)).expect("schema serialises")
}

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

/// Check a document against a schema, one diagnostic per violation.
fn schema_check(
    file: &str,
    text: &str,
    doc: &Value,
    schema: &Value,
    what: &str,
) -> Vec<Diagnostic> {
    let validator = match jsonschema::draft202012::new(schema) {
        Ok(v) => v,
        Err(e) => {
            return vec![Diagnostic::new(
                "internal",
                file,
                format!("bad built-in schema: {e}"),
                "report this bug",
            )];
        }
    };
    let mut out = Vec::new();
    for top in validator.iter_errors(doc) {
        let err = most_specific(&top);
        let mut path = err.instance_path().to_string();
        let (code, message, help) = match err.kind() {
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                let key = unexpected.first().cloned().unwrap_or_default();
                path = format!("{path}/{key}");
                let known = known_keys(schema, &err.schema_path().to_string());
                let mut help =
                    did_you_mean(&key, known.iter().map(String::as_str)).unwrap_or_default();
                if !known.is_empty() {
                    if !help.is_empty() {
                        help.push(' ');
                    }
                    help.push_str(&format!("allowed keys here: {}", known.join(", ")));
                }
                (
                    "unknown-key",
                    format!("unknown key `{key}` in {what}"),
                    help,
                )
            }
            jsonschema::error::ValidationErrorKind::Required { property } => (
                "missing-key",
                format!("missing required key {property} in {what}"),
                if property.as_str() == Some("expires") {
                    "a waiver must end: add `expires: YYYY-MM-DD` (it stops waiving on that day)"
                        .to_string()
                } else {
                    format!("add {property}")
                },
            ),
            _ => (
                "schema",
                format!("{} (in {what})", err),
                format!("see schemas/{what}.schema.json or `gpufix schema {what}`"),
            ),
        };
        let line = locate(text, &path);
        out.push(
            Diagnostic::new(code, file, message, help)
                .at(if path.is_empty() { "/".into() } else { path }, line),
        );
    }
    out
}

/// For `anyOf` (how an optional field is written: the type or null), report the error inside
/// the branch that is not `null`: "missing key `expires`" rather than "not valid under anyOf".
fn most_specific<'x, 'b>(
    err: &'x jsonschema::ValidationError<'b>,
) -> &'x jsonschema::ValidationError<'b> {
    if let jsonschema::error::ValidationErrorKind::AnyOf { context } = err.kind() {
        let here = err.instance_path().to_string();
        let branch = context.iter().find(|errs| {
            !errs.iter().any(|e| {
                matches!(
                    e.kind(),
                    jsonschema::error::ValidationErrorKind::Type { .. }
                ) && e.instance_path().to_string() == here
            })
        });
        if let Some(first) = branch.and_then(|b| b.first()) {
            return most_specific(first);
        }
    }
    err
}

/// Property names allowed by the object schema that an `additionalProperties` error came from.
fn known_keys(schema: &Value, schema_path: &str) -> Vec<String> {
    // schema_path ends in `/additionalProperties`; resolve the object schema it belongs to,
    // following a `$ref` if the path went through one.
    let mut node = schema;
    let segs: Vec<&str> = schema_path.trim_start_matches('/').split('/').collect();
    for seg in &segs[..segs.len().saturating_sub(1)] {
        if *seg == "$ref" {
            continue;
        }
        node = match node.get(*seg) {
            Some(n) => n,
            None => return Vec::new(),
        };
        if let Some(r) = node.get("$ref").and_then(Value::as_str)
            && let Some(name) = r.strip_prefix("#/$defs/")
            && let Some(def) = schema.get("$defs").and_then(|d| d.get(name))
        {
            node = def;
        }
    }
    node.get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

struct Parsed {
    file: String,
    text: String,
    tier: Tier,
    book: Playbook,
    /// Per rule: its `depends_on` came from the playbook's `defaults`.
    inherited: Vec<bool>,
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
            parsed.push(Parsed {
                file: s.name.clone(),
                text: s.text.clone(),
                tier: s.tier,
                book,
                inherited,
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
            continue;
        }
        match serde_json::from_value::<Playbook>(doc) {
            Ok(mut book) => {
                let inherited = apply_defaults(&mut book, &s.text);
                parsed.push(Parsed {
                    file: s.name.clone(),
                    text: s.text.clone(),
                    tier: s.tier,
                    book,
                    inherited,
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
        let base = format!("/rules/{ri}");
        let mut d = RuleDiags {
            file: &p.file,
            text: &p.text,
            base: &base,
            out: &mut diags,
        };
        let fail_expr = check_rule(rule, &ids, p.inherited[ri], &mut d);
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
                format!("/rules/{ri}/depends_on")
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

struct RuleDiags<'a> {
    file: &'a str,
    text: &'a str,
    base: &'a str,
    out: &'a mut Vec<Diagnostic>,
}

impl RuleDiags<'_> {
    fn push(&mut self, code: &'static str, sub: &str, msg: String, help: String) {
        let path = format!("{}{}", self.base, sub);
        let line = locate(self.text, &path);
        self.out
            .push(Diagnostic::new(code, self.file, msg, help).at(path, line));
    }
}

/// Variables a rule's expressions and templates may read.
struct Scope<'a> {
    aliases: BTreeSet<&'a str>,
    /// The kind of each probe alias, for checking the output fields an expression reads.
    kinds: BTreeMap<&'a str, &'static dyn probes::ProbeKind>,
    params: BTreeSet<&'a str>,
    item: Option<&'a str>,
    /// `let:` bindings in scope (those above the one being checked).
    lets: BTreeSet<&'a str>,
}

/// The top-level output fields a probe kind documents (`gpus[].name` gives `gpus`).
fn output_fields(kind: &dyn probes::ProbeKind) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    // `a / b` documents two fields at once
    for (names, _) in kind.fields() {
        for f in names.split(" / ") {
            let top = f.split(['.', '[', ' ', '/']).next().unwrap_or(f);
            if !out.contains(&top) {
                out.push(top);
            }
        }
    }
    out
}

impl Scope<'_> {
    /// Problems with the variables an expression reads, as messages.
    fn check(&self, vars: &BTreeSet<String>) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for v in vars {
            let mut segs = v.split('.');
            let root = segs.next().unwrap_or("");
            let second = segs.next();
            if let (Some(kind), Some(field)) = (self.kinds.get(root), second) {
                let fields = output_fields(*kind);
                if !fields.is_empty() && !fields.contains(&field) {
                    out.push((
                        format!("probe `{root}` ({}) has no output `{field}`", kind.name()),
                        did_you_mean(field, fields.iter().copied())
                            .unwrap_or_else(|| format!("`{root}` has: {}", fields.join(", "))),
                    ));
                }
                continue;
            }
            if self.aliases.contains(root) || self.item == Some(root) || self.lets.contains(root) {
                continue;
            }
            let (field_ok, fields): (bool, Vec<&str>) = match root {
                "params" => (
                    second.is_none_or(|s| self.params.contains(s)),
                    self.params.iter().copied().collect(),
                ),
                "inputs" => (second.is_none_or(|s| INPUTS.contains(&s)), INPUTS.to_vec()),
                "host" => (
                    second.is_none_or(|s| HOST_FIELDS.contains(&s)),
                    HOST_FIELDS.to_vec(),
                ),
                _ => {
                    let mut known: Vec<&str> = self.aliases.iter().copied().collect();
                    known.extend(ROOTS);
                    known.extend(self.item);
                    known.extend(self.lets.iter().copied());
                    out.push((
                        format!("`{root}` is not a declared probe or parameter"),
                        did_you_mean(root, known.iter().copied()).unwrap_or_else(|| {
                            format!(
                                "declare it under `probes:` or `let:`; names in scope: {}",
                                known.join(", ")
                            )
                        }),
                    ));
                    continue;
                }
            };
            if !field_ok {
                let name = second.unwrap_or("");
                out.push((
                    format!("`{root}.{name}` is not declared"),
                    did_you_mean(name, fields.iter().copied()).unwrap_or_else(|| {
                        if root == "params" {
                            if fields.is_empty() {
                                "declare it under `params:` (this rule declares no parameters)"
                                    .to_string()
                            } else {
                                format!(
                                    "declare it under `params:` (declared: {})",
                                    fields.join(", ")
                                )
                            }
                        } else {
                            format!("`{root}` has: {}", fields.join(", "))
                        }
                    }),
                ));
            }
        }
        out
    }
}

/// Check one rule; returns its `fail_when` compiled, for evaluation to reuse.
/// `inherited`: its `depends_on` came from the playbook's `defaults` (checked there).
fn check_rule(
    rule: &Rule,
    ids: &BTreeSet<String>,
    inherited: bool,
    d: &mut RuleDiags,
) -> Option<expr::Compiled> {
    // probes
    for (alias, spec) in &rule.probes {
        let sub = format!("/probes/{alias}");
        let Some(kind) = spec.get("kind").and_then(Value::as_str) else {
            d.push(
                "missing-key",
                &sub,
                format!("probe `{alias}` has no `kind`"),
                known_probes_help(),
            );
            continue;
        };
        let Some(pk) = probes::find(kind) else {
            let help = did_you_mean(kind, probes::PROBES.iter().map(|p| p.name()))
                .unwrap_or_else(known_probes_help);
            d.push(
                "unknown-probe-kind",
                &format!("{sub}/kind"),
                format!("unknown probe kind `{kind}`"),
                help,
            );
            continue;
        };
        let mut params = spec.clone();
        params.remove("kind");
        for pr in probes::param_problems(pk, &params) {
            d.push(
                "bad-probe-param",
                &format!("{sub}{}", pr.path),
                pr.message,
                pr.help,
            );
        }
        // templated parameters may read params and inputs only
        let scope = Scope {
            aliases: BTreeSet::new(),
            kinds: BTreeMap::new(),
            params: rule.params.keys().map(String::as_str).collect(),
            item: None,
            lets: BTreeSet::new(),
        };
        check_templates_in(&Value::Object(params), &sub, &scope, d);
    }
    let mut scope = Scope {
        aliases: rule.probes.keys().map(String::as_str).collect(),
        kinds: rule
            .probes
            .iter()
            .filter_map(|(a, spec)| {
                let k = probes::find(spec.get("kind")?.as_str()?)?;
                Some((a.as_str(), k))
            })
            .collect(),
        params: rule.params.keys().map(String::as_str).collect(),
        item: None,
        lets: BTreeSet::new(),
    };
    // let: each binding may read the probes, params, inputs, host, the for_each item and the
    // bindings above it
    let item_name = rule.for_each.as_ref().map(|fe| fe.as_.as_str());
    for (name, src) in &rule.lets {
        let sub = format!("/let/{name}");
        let valid_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_name {
            d.push(
                "bad-let-name",
                &sub,
                format!("`let` name `{name}` is not a plain name"),
                "use lowercase letters, digits and `_`, starting with a letter, e.g. `suggested_workers`".into(),
            );
        } else if ROOTS.contains(&name.as_str())
            || rule.probes.contains_key(name)
            || item_name == Some(name.as_str())
        {
            d.push(
                "let-shadows-name",
                &sub,
                format!("`let` name `{name}` is already a probe, the for_each item or a root (params, inputs, host)"),
                "give the binding a name of its own".into(),
            );
        }
        let with_item = Scope {
            aliases: scope.aliases.clone(),
            kinds: scope.kinds.clone(),
            params: scope.params.clone(),
            item: item_name,
            lets: scope.lets.clone(),
        };
        expr_check(src, &sub, &with_item, d);
        scope.lets.insert(name.as_str());
    }
    // depends_on
    for (i, dep) in rule.depends_on.iter().enumerate() {
        if dep == &rule.id {
            d.push(
                "self-dependency",
                &format!("/depends_on/{i}"),
                format!("rule `{dep}` depends on itself"),
                "remove it".into(),
            );
        } else if !ids.contains(dep) && !inherited {
            d.push(
                "unknown-dependency",
                &format!("/depends_on/{i}"),
                format!("rule `{}` depends on unknown rule `{dep}`", rule.id),
                did_you_mean(dep, ids.iter().map(String::as_str))
                    .unwrap_or_else(|| "run `gpufix list` to see rule ids".into()),
            );
        }
    }
    for (i, dep) in rule.explained_by.iter().enumerate() {
        if dep == &rule.id {
            d.push(
                "self-dependency",
                &format!("/explained_by/{i}"),
                format!("rule `{dep}` is explained by itself"),
                "remove it".into(),
            );
        } else if !ids.contains(dep) {
            d.push(
                "unknown-dependency",
                &format!("/explained_by/{i}"),
                format!("rule `{}` is explained by unknown rule `{dep}`", rule.id),
                did_you_mean(dep, ids.iter().map(String::as_str))
                    .unwrap_or_else(|| "run `gpufix list` to see rule ids".into()),
            );
        }
    }
    // expressions
    let mut exprs: Vec<(&str, &str)> = Vec::new();
    if let Some(a) = &rule.applies_when {
        exprs.push(("/applies_when", a));
    }
    if let Some(fe) = &rule.for_each {
        exprs.push(("/for_each/in", &fe.in_));
    }
    for (sub, src) in exprs {
        expr_check(src, sub, &scope, d);
    }
    if let Some(fe) = &rule.for_each {
        scope.item = Some(&fe.as_);
    }
    callables_check(&rule.fail_when, "/fail_when", false, d);
    let compiled = match expr::compile(&rule.fail_when) {
        Err(e) => {
            d.push(
                "expression-syntax",
                "/fail_when",
                format!("expression `{}` does not compile: {e}", rule.fail_when),
                "thresholds use minijinja's expression syntax, e.g. `gpu.power_limit_w < params.min_watts`".into(),
            );
            None
        }
        Ok((c, vars)) => {
            for (m, h) in scope.check(&vars) {
                d.push(
                    "undeclared-name",
                    "/fail_when",
                    format!("expression `{}`: {m}", rule.fail_when),
                    h,
                );
            }
            Some(c)
        }
    };
    template_check(&rule.message, "/message", &scope, d);
    // fix
    if let Some(fix) = &rule.fix {
        if fix.safety == Safety::Manual && fix.instructions.is_none() {
            d.push(
                "manual-fix-without-instructions",
                "/fix",
                "a manual fix must say what to do".into(),
                "add `instructions:` describing the steps".into(),
            );
        }
        if fix.safety != Safety::Manual && fix.actions.is_empty() {
            d.push(
                "fix-without-actions",
                "/fix",
                format!("a {} fix needs at least one action", fix.safety.as_str()),
                "add `actions:`, or make it `safety: manual` with `instructions:`".into(),
            );
        }
        if let Some(ins) = &fix.instructions {
            template_check(ins, "/fix/instructions", &scope, d);
        }
        for (i, action) in fix.actions.iter().enumerate() {
            let sub = format!("/fix/actions/{i}");
            let Some(kind) = action.get("kind").and_then(Value::as_str) else {
                d.push(
                    "missing-key",
                    &sub,
                    "fix action has no `kind`".into(),
                    known_fixes_help(),
                );
                continue;
            };
            let Some(fk) = fixes::spec(kind) else {
                let help = did_you_mean(kind, fixes::FIXES.iter().map(|k| k.name))
                    .unwrap_or_else(known_fixes_help);
                d.push(
                    "unknown-fix-kind",
                    &format!("{sub}/kind"),
                    format!("unknown fix kind `{kind}`"),
                    help,
                );
                continue;
            };
            let mut params = action.clone();
            params.remove("kind");
            for pr in fixes::param_problems(fk, &params) {
                d.push(
                    "bad-fix-param",
                    &format!("{sub}{}", pr.path),
                    pr.message,
                    pr.help,
                );
            }
            if fix.safety > fk.max_safety {
                d.push(
                    "fix-safety-too-loose",
                    "/fix/safety",
                    format!(
                        "fix kind `{kind}` is at most {}; this fix is marked {}",
                        fk.max_safety.as_str(),
                        fix.safety.as_str()
                    ),
                    format!("mark the fix `safety: {}` (a playbook may make a fix stricter, never looser)", fk.max_safety.as_str()),
                );
            }
            check_templates_in(&Value::Object(params), &sub, &scope, d);
        }
    }
    compiled
}

fn known_probes_help() -> String {
    format!(
        "known probe kinds: {}",
        probes::PROBES
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn known_fixes_help() -> String {
    format!(
        "known fix kinds: {}",
        fixes::FIXES
            .iter()
            .map(|k| k.name)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Unknown filters and tests: minijinja resolves them only at evaluation time.
fn callables_check(src: &str, sub: &str, template: bool, d: &mut RuleDiags) {
    for (what, name) in expr::unknown_callables(src, template) {
        let known = if what == "filter" {
            expr::FILTERS
        } else {
            expr::TESTS
        };
        let help = if matches!(name.as_str(), "contains" | "includes" | "has") {
            "membership is an operator: write `'x' in value` (or `'x' not in value`)".to_string()
        } else {
            did_you_mean(&name, known.iter().copied())
                .unwrap_or_else(|| format!("known {what}s: {}", known.join(", ")))
        };
        d.push(
            if what == "filter" {
                "unknown-filter"
            } else {
                "unknown-test"
            },
            sub,
            format!("`{}` uses unknown {what} `{name}`", src.trim()),
            help,
        );
    }
}

fn expr_check(src: &str, sub: &str, scope: &Scope, d: &mut RuleDiags) {
    callables_check(src, sub, false, d);
    match expr::check_expression(src) {
        Err(e) => d.push(
            "expression-syntax",
            sub,
            format!("expression `{src}` does not compile: {e}"),
            "thresholds use minijinja's expression syntax, e.g. `gpu.power_limit_w < params.min_watts`".into(),
        ),
        Ok(vars) => {
            for (m, h) in scope.check(&vars) {
                d.push("undeclared-name", sub, format!("expression `{src}`: {m}"), h);
            }
        }
    }
}

fn template_check(src: &str, sub: &str, scope: &Scope, d: &mut RuleDiags) {
    callables_check(src, sub, true, d);
    match expr::check_template(src) {
        Err(e) => d.push(
            "template-syntax",
            sub,
            format!("template does not compile: {e}"),
            "templates use minijinja syntax: `{{ value }}`, `{% if %}…{% endif %}`".into(),
        ),
        Ok(vars) => {
            for (m, h) in scope.check(&vars) {
                d.push("undeclared-name", sub, format!("template: {m}"), h);
            }
        }
    }
}

fn check_templates_in(v: &Value, sub: &str, scope: &Scope, d: &mut RuleDiags) {
    match v {
        Value::String(s) if s.contains("{{") || s.contains("{%") => {
            template_check(s, sub, scope, d)
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| check_templates_in(x, &format!("{sub}/{i}"), scope, d)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| check_templates_in(x, &format!("{sub}/{k}"), scope, d)),
        _ => {}
    }
}

/// Deterministic topological order: bottom-up by layer, then tier, then position, with each
/// rule after its dependencies. Returns the cycle (`a, b, a`) if there is one.
pub fn order(rules: &[LoadedRule]) -> Result<Vec<String>, Vec<String>> {
    let idx: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.rule.id.as_str(), i))
        .collect();
    let deps: Vec<Vec<usize>> = rules
        .iter()
        .map(|r| {
            // a rule is judged after the rules it depends on and the ones that explain it
            r.rule
                .depends_on
                .iter()
                .chain(&r.rule.explained_by)
                .filter_map(|d| idx.get(d.as_str()).copied())
                .collect()
        })
        .collect();
    // cycle detection with an explicit stack (names the cycle, as `just` does)
    let mut state = vec![0u8; rules.len()]; // 0 new, 1 on stack, 2 done
    for start in 0..rules.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if *next < deps[node].len() {
                let d = deps[node][*next];
                *next += 1;
                match state[d] {
                    0 => {
                        state[d] = 1;
                        stack.push((d, 0));
                    }
                    1 => {
                        let pos = stack.iter().position(|(n, _)| *n == d).unwrap();
                        let mut cycle: Vec<String> = stack[pos..]
                            .iter()
                            .map(|(n, _)| rules[*n].rule.id.clone())
                            .collect();
                        cycle.push(rules[d].rule.id.clone());
                        return Err(cycle);
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    // Kahn with an ordered ready set. A rule never sorts before its dependencies, even when a
    // dependency sits in a higher layer (the key only breaks ties among ready rules).
    let key = |i: usize| (rules[i].layer, i);
    let mut indeg: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); rules.len()];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            users[d].push(i);
        }
    }
    let mut ready: BTreeMap<(crate::playbook::Layer, usize), usize> = (0..rules.len())
        .filter(|&i| indeg[i] == 0)
        .map(|i| (key(i), i))
        .collect();
    let mut out = Vec::with_capacity(rules.len());
    while let Some((_, i)) = ready.pop_first() {
        out.push(rules[i].rule.id.clone());
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.insert(key(u), u);
            }
        }
    }
    Ok(out)
}
