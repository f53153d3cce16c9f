//! The semantic checks of one rule: known probe and fix kinds and their parameters, known
//! dependencies, and expressions and templates that compile and read only what the rule declares.

use super::*;

pub(super) struct RuleDiags<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) base: &'a str,
    pub(super) out: &'a mut Vec<Diagnostic>,
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
pub(super) struct Scope<'a> {
    pub(super) aliases: BTreeSet<&'a str>,
    /// The kind of each probe alias, for checking the output fields an expression reads.
    pub(super) kinds: BTreeMap<&'a str, &'static dyn probes::ProbeKind>,
    pub(super) params: BTreeSet<&'a str>,
    pub(super) item: Option<&'a str>,
    /// `let:` bindings in scope (those above the one being checked).
    pub(super) lets: BTreeSet<&'a str>,
}

/// The top-level output fields a probe kind documents (`gpus[].name` gives `gpus`).
pub(super) fn output_fields(kind: &dyn probes::ProbeKind) -> Vec<&'static str> {
    probes::output_fields(kind)
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
pub(super) fn check_rule(
    rule: &Rule,
    ids: &BTreeSet<String>,
    inherited: bool,
    d: &mut RuleDiags,
) -> Option<expr::Compiled> {
    if let Some(Err(m)) = rule.recheck_delay() {
        d.push(
            "bad-recheck",
            "/recheck_after",
            format!("rule `{}`: recheck_after {m}", rule.id),
            "give how long to wait before the second reading, e.g. `recheck_after: 2s`".into(),
        );
    }
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
                format!(
                    "expression `{}` does not compile: {e}",
                    expr::clipped(&rule.fail_when)
                ),
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
            // `when`: an expression; the action is proposed only where it holds (a rule that
            // judges two producers' texts, each with its own fix)
            match params.remove("when") {
                None => {}
                Some(Value::String(w)) => expr_check(&w, &format!("{sub}/when"), &scope, d),
                Some(_) => d.push(
                    "bad-fix-param",
                    &format!("{sub}/when"),
                    "`when` must be an expression string".into(),
                    "write it as a fail_when expression, e.g. `x.given`".into(),
                ),
            }
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

pub(super) fn known_probes_help() -> String {
    format!(
        "known probe kinds: {}",
        probes::PROBES
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(super) fn known_fixes_help() -> String {
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
pub(super) fn callables_check(src: &str, sub: &str, template: bool, d: &mut RuleDiags) {
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

pub(super) fn expr_check(src: &str, sub: &str, scope: &Scope, d: &mut RuleDiags) {
    callables_check(src, sub, false, d);
    match expr::check_expression(src) {
        Err(e) => d.push(
            "expression-syntax",
            sub,
            format!("expression `{}` does not compile: {e}", expr::clipped(src)),
            "thresholds use minijinja's expression syntax, e.g. `gpu.power_limit_w < params.min_watts`".into(),
        ),
        Ok(vars) => {
            for (m, h) in scope.check(&vars) {
                d.push("undeclared-name", sub, format!("expression `{src}`: {m}"), h);
            }
        }
    }
}

pub(super) fn template_check(src: &str, sub: &str, scope: &Scope, d: &mut RuleDiags) {
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

pub(super) fn check_templates_in(v: &Value, sub: &str, scope: &Scope, d: &mut RuleDiags) {
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
