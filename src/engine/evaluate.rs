//! From a checked rule set and a host to a [`Report`]: render probe parameters, observe,
//! then judge each rule in order. Verdict precedence: blocked (a dependency failed or is
//! unknown) before not-applicable (an input or probe is missing) before unknown (a probe or
//! expression could not tell) before pass/fail; a live waiver turns a finding into `waived`.

use super::observe::{Observer, ProbeKey, Request};
use crate::expr;
use crate::host::Host;
use crate::playbook::{LoadedRule, RuleSet};
use crate::probes::{Inputs, ProbeOutcome};
use crate::report::{FixProposal, REPORT_VERSION, Report, RuleResult, Verdict};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

pub struct Options {
    pub sample: Duration,
    pub probe_deadline: Duration,
    pub today: jiff::civil::Date,
    /// Rule ids or layer names; empty means all. Dependencies of selected rules are included.
    pub only: Vec<String>,
    /// Put [`crate::vocab::timing::Timings`] in the report (`--timings`).
    pub timings: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sample: Duration::ZERO,
            probe_deadline: Duration::from_secs(15),
            today: jiff::tz::TimeZone::UTC
                .to_datetime(jiff::Timestamp::now())
                .date(),
            only: Vec::new(),
            timings: false,
        }
    }
}

/// The flag that provides each `inputs.X`.
pub fn input_flag(name: &str) -> String {
    format!("--{}", name.replace('_', "-"))
}

pub fn inputs_json(inputs: &Inputs) -> Value {
    let mut m = Map::new();
    if let Some(p) = inputs.pid {
        m.insert("pid".into(), json!(p));
    }
    let paths = [
        ("config", &inputs.config),
        ("env_file", &inputs.env_file),
        ("trace", &inputs.trace),
        ("nccl_log", &inputs.nccl_log),
        ("kernel_log", &inputs.kernel_log),
    ];
    for (k, v) in paths {
        if let Some(p) = v {
            m.insert(k.into(), json!(p.display().to_string()));
        }
    }
    if !inputs.evidence.is_empty() {
        m.insert(
            "evidence".into(),
            json!(
                inputs
                    .evidence
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
            ),
        );
    }
    Value::Object(m)
}

/// The rules `--only` selects, with everything they depend on.
pub fn select<'a>(set: &'a RuleSet, only: &[String]) -> Vec<&'a LoadedRule> {
    if only.is_empty() {
        return set.rules.iter().collect();
    }
    let mut want: BTreeSet<&str> = set
        .rules
        .iter()
        .filter(|r| {
            only.iter()
                .any(|o| o == &r.rule.id || o == r.layer.as_str())
        })
        .map(|r| r.rule.id.as_str())
        .collect();
    // rules are in dependency order, so walking backwards closes over dependencies
    for r in set.rules.iter().rev() {
        if want.contains(r.rule.id.as_str()) {
            want.extend(r.rule.depends_on.iter().map(String::as_str));
            want.extend(r.rule.explained_by.iter().map(String::as_str));
        }
    }
    set.rules
        .iter()
        .filter(|r| want.contains(r.rule.id.as_str()))
        .collect()
}

enum Slot {
    Key(ProbeKey),
    Fixed(ProbeOutcome),
}

pub fn evaluate(
    set: &RuleSet,
    host: Arc<dyn Host>,
    inputs: Arc<Inputs>,
    opts: &Options,
    on_probe_done: impl FnMut(&ProbeKey),
) -> Report {
    let rules = select(set, &opts.only);
    let inputs_v = inputs_json(&inputs);
    let host_v = json!({"cpus": host.cpu_count(), "live": host.is_live()});

    // 1. render probe parameters and collect distinct probe instances
    let mut requests: BTreeMap<ProbeKey, Request> = BTreeMap::new();
    let mut slots: Vec<Vec<(String, Slot)>> = Vec::new();
    for r in &rules {
        let base = json!({"params": r.params, "inputs": inputs_v, "host": host_v});
        let mut mine = Vec::new();
        for (alias, spec) in &r.rule.probes {
            let kind = spec
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let mut params = spec.clone();
            params.remove("kind");
            let slot = match missing_input(&Value::Object(params.clone()), &inputs_v) {
                Some(flag) => Slot::Fixed(ProbeOutcome::NotApplicable(format!("needs {flag}"))),
                None => match expr::render_value(&Value::Object(params), &base) {
                    Ok(Value::Object(p)) => {
                        let key = ProbeKey::new(&kind, &p);
                        requests
                            .entry(key.clone())
                            .or_insert(Request { kind, params: p });
                        Slot::Key(key)
                    }
                    Ok(_) => unreachable!("an object renders to an object"),
                    Err(e) => Slot::Fixed(ProbeOutcome::Unknown(format!(
                        "probe `{alias}` parameters: {e}"
                    ))),
                },
            };
            mine.push((alias.clone(), slot));
        }
        slots.push(mine);
    }

    // 2. observe
    let observer = Observer {
        deadline: opts.probe_deadline,
    };
    // the probes of rules that read a second time when they fail (`recheck_after`)
    let again: BTreeMap<ProbeKey, Request> = if host.can_read_again() {
        rules
            .iter()
            .zip(&slots)
            .filter(|(r, _)| r.rule.recheck_after.is_some())
            .flat_map(|(_, mine)| mine.iter())
            .filter_map(|(_, slot)| match slot {
                Slot::Key(k) => requests.get(k).map(|q| (k.clone(), q.clone())),
                Slot::Fixed(_) => None,
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    let observe_started = std::time::Instant::now();
    let (outcomes, probe_timings) = observer.run(
        host.clone(),
        inputs.clone(),
        opts.sample,
        requests,
        on_probe_done,
    );

    let observe_ms = crate::vocab::timing::ms(observe_started.elapsed());
    let judge_started = std::time::Instant::now();

    // 3. judge in order
    let mut results: Vec<RuleResult> = Vec::with_capacity(rules.len());
    let mut verdicts: HashMap<String, Verdict> = HashMap::new();
    let mut notes = Vec::new();
    for (r, mine) in rules.iter().zip(slots) {
        let mut res = judge(r, &mine, &outcomes, &inputs_v, &host_v, &verdicts);
        if res.verdict == Verdict::Fail
            && host.can_read_again()
            && let Some(Ok(delay)) = r.rule.recheck_delay()
        {
            let read_again = |requests: BTreeMap<ProbeKey, Request>| {
                if host.is_live() {
                    std::thread::sleep(delay);
                }
                observer
                    .run(host.clone(), inputs.clone(), opts.sample, requests, |_| {})
                    .0
            };
            res = recheck(&mine, res, delay, &again, read_again, |fresh| {
                judge(r, &mine, fresh, &inputs_v, &host_v, &verdicts)
            });
        }
        // waivers
        if let Some(w) = &r.waiver {
            let expires = jiff::civil::Date::strptime("%Y-%m-%d", &w.expires).ok();
            match expires {
                Some(d) if d > opts.today => {
                    if res.verdict.is_finding() {
                        let was = res.verdict.as_str();
                        res.verdict = Verdict::Waived;
                        res.reason = Some(format!(
                            "waived until {} ({was} otherwise): {}",
                            w.expires, w.reason
                        ));
                    }
                }
                _ => {
                    let note = format!(
                        "waiver of `{}` expired on {}: it no longer waives ({})",
                        r.rule.id, w.expires, w.reason
                    );
                    if res.verdict.is_finding() {
                        res.reason = Some(match res.reason.take() {
                            Some(x) => format!("{x}; {note}"),
                            None => note.clone(),
                        });
                    }
                    notes.push(note);
                }
            }
        }
        verdicts.insert(r.rule.id.clone(), res.verdict);
        results.push(res);
    }
    for d in &set.disabled {
        notes.push(format!("rule `{d}` is disabled by the values file"));
    }
    // a file a job named that its owner may not read is said in the report's notes (never its
    // content), whatever the rules that read it concluded
    for o in outcomes.values() {
        let ProbeOutcome::Value(v) = o else { continue };
        let said = v
            .get("notes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for n in said.filter_map(Value::as_str) {
            if n.contains(crate::authority::NOT_READABLE) && !notes.iter().any(|x| x == n) {
                notes.push(n.to_string());
            }
        }
    }
    // what each pasted file was read as, part by part
    for p in &inputs.evidence {
        if let Ok(text) = crate::vocab::io::read_shared(p) {
            let reading = crate::evidence::segment::segment_shared(&text);
            if !reading.parts.is_empty() {
                notes.push(format!(
                    "--evidence {}: read {}",
                    p.display(),
                    reading.describe()
                ));
                // another vendor's tool (rocm-smi, xpu-smi, a HIP error): say plainly what it
                // is, once per tool, rather than leave every rule's silence to explain it
                let mut said = Vec::new();
                for part in reading.of(&crate::evidence::other_vendor::OtherVendorKind) {
                    if let Some(v) = crate::evidence::other_vendor::which(&part.text)
                        && !said.contains(&v)
                    {
                        notes.push(format!(
                            "--evidence {}: {}",
                            p.display(),
                            crate::evidence::other_vendor::sentence(&v)
                        ));
                        said.push(v);
                    }
                }
                // PaddlePaddle's out-of-memory error: no rule reads it; say what it holds, once
                if let Some(said) = reading
                    .of(&crate::evidence::paddle_oom::PaddleOomKind)
                    .find_map(|part| crate::evidence::paddle_oom::read(&part.text))
                    .and_then(|v| crate::evidence::paddle_oom::sentence(&v))
                {
                    notes.push(format!("--evidence {}: {said}", p.display()));
                }
            } else if crate::evidence::segment::job_text_in_paste(&text).is_none()
                && crate::evidence::segment::is_prose(&text)
            {
                // the evidence host judged it a post that shows nothing (host/evidence.rs)
                notes.push(format!(
                    "--evidence {}: it reads as prose (a post or a question) and no line of it is output gpufix reads; give gpufix the error message or the command output the post is about, as printed (`gpufix list --evidence` lists the kinds it reads)",
                    p.display()
                ));
            }
        }
    }
    let summary = Report::summarize(&results);
    let (host_name, machine_id) = crate::host::identity(host.as_ref());
    let timings = opts.timings.then(|| {
        let waited_on = probe_timings
            .iter()
            .max_by(|a, b| (a.start_ms + a.ms).total_cmp(&(b.start_ms + b.ms)))
            .map(|p| format!("{} ({:.1} ms)", p.probe, p.ms));
        crate::vocab::timing::Timings {
            total_ms: 0.0,
            phases: vec![
                crate::vocab::timing::Phase {
                    name: format!("observe ({} probes, concurrent)", probe_timings.len()),
                    ms: observe_ms,
                },
                crate::vocab::timing::Phase {
                    name: format!("evaluate ({} rules)", results.len()),
                    ms: crate::vocab::timing::ms(judge_started.elapsed()),
                },
            ],
            probes: probe_timings,
            waited_on,
            peak_rss_kib: None,
        }
    });
    Report {
        version: REPORT_VERSION,
        gpufix_version: env!("CARGO_PKG_VERSION").to_string(),
        host: host_name,
        machine_id,
        judged: host.describe(),
        inputs: inputs.describe(),
        generated_at: jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        results,
        summary,
        changes: Vec::new(),
        notes,
        timings,
    }
}

/// A rule that failed and asks for a second reading (`recheck_after`): read its probes again
/// (after `delay` on a live host) and judge again. The finding stands only if the second
/// judgement fails too; one that passes says the first reading's finding and that it cleared,
/// and one that cannot tell keeps the first finding, saying so.
fn recheck(
    mine: &[(String, Slot)],
    first: RuleResult,
    delay: Duration,
    again: &BTreeMap<ProbeKey, Request>,
    read_again: impl FnOnce(BTreeMap<ProbeKey, Request>) -> BTreeMap<ProbeKey, ProbeOutcome>,
    judge_again: impl FnOnce(&BTreeMap<ProbeKey, ProbeOutcome>) -> RuleResult,
) -> RuleResult {
    let requests: BTreeMap<ProbeKey, Request> = mine
        .iter()
        .filter_map(|(_, slot)| match slot {
            Slot::Key(k) => again.get(k).map(|q| (k.clone(), q.clone())),
            Slot::Fixed(_) => None,
        })
        .collect();
    if requests.is_empty() {
        return first;
    }
    let fresh = read_again(requests);
    let mut second = judge_again(&fresh);
    let after = if delay.subsec_millis() == 0 {
        format!("{} s", delay.as_secs())
    } else {
        format!("{} ms", delay.as_millis())
    };
    match second.verdict {
        Verdict::Fail => {
            second.reason = Some(format!("failed again when read {after} later"));
            second
        }
        Verdict::Pass => {
            second.reason = Some(format!(
                "failed at the first reading ({}); read again {after} later it passed: one \
                 moment's state (a job tearing down), not a lasting one",
                first.messages.join("; ")
            ));
            second
        }
        other => {
            let mut first = first;
            first.reason = Some(format!(
                "read again {after} later, the rule was {} ({}): the first reading's finding stands",
                other.as_str(),
                second.reason.unwrap_or_default()
            ));
            first
        }
    }
}

/// The input a false `applies_when` waits on, when the person did not give it: a probe
/// attached to no job (`p.attached`) needs `--pid`; an `inputs.X` that is null needs `--X`.
fn needs_missing_input(applies_when: &str, ctx: &Value) -> Option<String> {
    let m = ctx.as_object()?;
    for (alias, v) in m {
        if v.get("attached") == Some(&Value::Bool(false))
            && applies_when.contains(&format!("{alias}.attached"))
        {
            return Some("needs --pid (no job attached)".into());
        }
    }
    // optional probes (`optional: true`) that found none of their evidence: where every one
    // the condition reads answered `given: false`, the evidence is what is missing
    let optional: Vec<(&String, bool)> = m
        .iter()
        .filter(|(alias, _)| applies_when.contains(&format!("{alias}.")))
        .filter_map(|(alias, v)| Some((alias, v.get("given")?.as_bool()?)))
        .collect();
    if !optional.is_empty() && optional.iter().all(|(_, given)| !given) {
        let names: Vec<String> = optional.iter().map(|(a, _)| format!("`{a}`")).collect();
        return Some(format!(
            "needs --evidence that probe {} reads (none given)",
            names.join(" or ")
        ));
    }
    for (k, v) in m.get("inputs")?.as_object()? {
        if v.is_null() && applies_when.contains(&format!("inputs.{k}")) {
            return Some(format!("needs --{}", k.replace('_', "-")));
        }
    }
    None
}

/// The flag for the first `inputs.X` a templated parameter reads that was not given.
pub(crate) fn missing_input(params: &Value, inputs: &Value) -> Option<String> {
    let mut found = None;
    walk_strings(params, &mut |s| {
        if found.is_some() || !s.contains("{{") {
            return;
        }
        if let Ok(vars) = expr::check_template(s) {
            for v in vars {
                if let Some(name) = v
                    .strip_prefix("inputs.")
                    .map(|n| n.split('.').next().unwrap_or(n))
                    && inputs.get(name).is_none()
                {
                    found = Some(input_flag(name));
                    return;
                }
            }
        }
    });
    found
}

fn walk_strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| walk_strings(x, f)),
        Value::Object(m) => m.values().for_each(|x| walk_strings(x, f)),
        _ => {}
    }
}

fn base_result(r: &LoadedRule, verdict: Verdict) -> RuleResult {
    RuleResult {
        id: r.rule.id.clone(),
        title: r.rule.title.clone(),
        layer: r.layer.as_str().to_string(),
        severity: r.rule.severity,
        verdict,
        reason: None,
        messages: Vec::new(),
        evidence: BTreeMap::new(),
        blocked_by: Vec::new(),
        why: r.rule.why.clone(),
        fix: None,
        source: r.source.clone(),
        gpus: Vec::new(),
    }
}

fn judge(
    r: &LoadedRule,
    mine: &[(String, Slot)],
    outcomes: &BTreeMap<ProbeKey, ProbeOutcome>,
    inputs_v: &Value,
    host_v: &Value,
    verdicts: &HashMap<String, Verdict>,
) -> RuleResult {
    // blocked
    let blockers: Vec<String> = r
        .rule
        .depends_on
        .iter()
        .filter(|d| verdicts.get(*d).is_some_and(|v| v.is_finding()))
        .cloned()
        .collect();
    // A blocked rule that could not apply here anyway (it needs `--pid` and none was given, its
    // probe has nothing to read) is not-applicable for that reason: "blocked" would send the
    // person to fix the dependency for a rule that would still not run.
    let blocked = (!blockers.is_empty()).then(|| {
        let mut res = base_result(r, Verdict::Blocked);
        res.reason = Some(format!(
            "blocked by {}",
            blockers
                .iter()
                .map(|b| format!("`{b}` ({})", verdicts[b].as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        res.blocked_by = blockers;
        res
    });
    // a symptom rule stands down when a rule that names its cause failed in this run
    let explained: Vec<&String> = r
        .rule
        .explained_by
        .iter()
        .filter(|d| verdicts.get(*d) == Some(&Verdict::Fail))
        .collect();
    if !explained.is_empty() && blocked.is_none() {
        let mut res = base_result(r, Verdict::NotApplicable);
        res.reason = Some(format!(
            "explained by {}, which failed in this run",
            explained
                .iter()
                .map(|b| format!("`{b}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return res;
    }
    // probe outcomes
    let mut ctx = Map::new();
    ctx.insert("params".into(), Value::Object(r.params.clone()));
    ctx.insert("inputs".into(), inputs_v.clone());
    ctx.insert("host".into(), host_v.clone());
    // A probe that could not answer leaves its name out of the context: the verdict is unknown
    // only if the expressions actually read it (`x is defined and …` may short-circuit).
    let mut unknown: Vec<(String, String)> = Vec::new();
    // inputs read in part (a log over its size limit): `cut` says which part
    let mut cuts: Vec<String> = Vec::new();
    let missing = ProbeOutcome::Unknown("probe was not run".into());
    for (alias, slot) in mine {
        let outcome = match slot {
            Slot::Fixed(o) => o,
            Slot::Key(k) => outcomes.get(k).unwrap_or(&missing),
        };
        match outcome {
            ProbeOutcome::Value(v) => {
                if let Some(c) = v.get("cut").and_then(Value::as_str) {
                    cuts.push(format!("probe `{alias}`: {c}"));
                }
                ctx.insert(alias.clone(), v.clone());
            }
            ProbeOutcome::NotApplicable(why) => {
                let mut res = base_result(r, Verdict::NotApplicable);
                res.reason = Some(format!("probe `{alias}`: {why}"));
                return res;
            }
            // judging a host from pasted evidence: what it does not cover is not applicable
            ProbeOutcome::Unknown(why) if why.contains(crate::host::NOT_IN_EVIDENCE) => {
                let mut res = base_result(r, Verdict::NotApplicable);
                res.reason = Some(format!("probe `{alias}`: {why}"));
                return res;
            }
            ProbeOutcome::Unknown(why) => unknown.push((alias.clone(), why.clone())),
        }
    }
    if r.rule.applies_when.is_none()
        && let Some(res) = blocked
    {
        return res;
    }
    if !unknown.is_empty() {
        ctx.insert(
            "__unknown_probes".into(),
            Value::Object(
                unknown
                    .iter()
                    .map(|(a, w)| (a.clone(), Value::String(w.clone())))
                    .collect(),
            ),
        );
    }
    // the context as the expression engine reads it, converted once for the rule's bindings,
    // its condition, its list and every item ([`Scope`])
    let mut scope = Scope::new(&ctx);
    bind_lets(r, &mut ctx, &mut scope);
    let mut ctx = Value::Object(ctx);
    if let Some(a) = &r.rule.applies_when {
        match expr::eval_bool_in(a, scope.value()) {
            Ok(true) => {}
            Ok(false) => {
                let needs = needs_missing_input(a, &ctx);
                // without an input the person did not give, "blocked" would send them to the
                // dependency; otherwise the dependency may be why the condition is false
                if let (Some(res), None) = (&blocked, &needs) {
                    return res.clone();
                }
                let mut res = base_result(r, Verdict::NotApplicable);
                res.reason = Some(match needs {
                    Some(n) => format!("{n}: applies only when `{a}`"),
                    None => format!("applies only when `{a}`"),
                });
                return res;
            }
            Err(e) => {
                return match blocked {
                    Some(res) => res,
                    None => unknown_result(r, &ctx, a, &e),
                };
            }
        }
    }
    if let Some(res) = blocked {
        return res;
    }
    // items
    // Every item is judged in the rule's one context, with the item and the bindings computed
    // for it put in and replaced by the next item's: nothing is copied per item. The expression
    // engine reads a converted context; the part every item shares is converted once
    // ([`Scope`]), so an item costs what it holds, not what the whole context holds (a copy and
    // a conversion of everything per item was quadratic in the items: 200 GPUs of a pasted
    // `lspci -vv` took 2 s, and a fleet's thousand would have taken minutes).
    let list: Vec<Option<(String, usize, Value)>> = match &r.rule.for_each {
        None => vec![None],
        Some(fe) => match expr::eval_in(&fe.in_, scope.value()) {
            Ok(Value::Array(list)) => list
                .into_iter()
                .enumerate()
                .map(|(i, item)| Some((fe.as_.clone(), i, item)))
                .collect(),
            Ok(other) => {
                let e = format!(
                    "`{}` gave {} where a list was expected",
                    fe.in_,
                    crate::kinds::json_type(&other)
                );
                return unknown_result(r, &ctx, &fe.in_, &e);
            }
            Err(e) => return unknown_result(r, &ctx, &fe.in_, &e),
        },
    };
    // the variables an expression reads are only needed to explain a fail or an unknown
    let vars_cell = std::cell::OnceCell::new();
    let vars = || vars_cell.get_or_init(|| expression_vars(r, &r.rule.fail_when));
    let mut res = base_result(r, Verdict::Pass);
    let mut unknowns = Vec::new();
    let mut actions: Vec<Value> = Vec::new();
    let mut instructions = Vec::new();
    for entry in list {
        let item = entry.map(|(name, i, value)| {
            let m = ctx
                .as_object_mut()
                .expect("the rule's context is an object");
            scope.set(&name, Some(&value));
            m.insert(name.clone(), value);
            // bindings may read the item: compute them again for it
            bind_lets(r, m, &mut scope);
            (name, i)
        });
        let (item, c) = (&item, &ctx);
        let mj = scope.value();
        let label = |v: &str| match item {
            Some((name, i)) if v.starts_with(&format!("{name}.")) || v == name => {
                format!("{name}[{i}]{}", &v[name.len()..])
            }
            _ => v.to_string(),
        };
        let verdict = match &r.fail_expr {
            Some(e) => expr::eval_compiled_bool_in(e, &r.rule.fail_when, mj.clone()),
            None => expr::eval_bool_in(&r.rule.fail_when, mj.clone()),
        };
        match verdict {
            Ok(false) => {}
            Ok(true) => {
                res.verdict = Verdict::Fail;
                if let Some(g) = item.as_ref().and_then(|(name, _)| gpu_ref(c.get(name)?)) {
                    res.gpus.push(g);
                }
                for v in vars() {
                    if let Some(val) = expr::lookup(c, v) {
                        res.evidence.insert(label(v), compact(val));
                    }
                }
                res.messages
                    .push(
                        expr::render_in(&r.rule.message, mj.clone()).unwrap_or_else(|e| {
                            format!("{} (message template failed: {e})", r.rule.title)
                        }),
                    );
                if let Some(fix) = &r.rule.fix {
                    for a in &fix.actions {
                        // `when`: the action is proposed only where its expression holds
                        // (the other keys keep their order: `remove` would swap the last in)
                        let when = a.get("when").cloned();
                        let a: Map<String, Value> = a
                            .iter()
                            .filter(|(k, _)| k.as_str() != "when")
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect();
                        if let Some(Value::String(w)) = when {
                            match expr::eval_bool_in(&w, mj.clone()) {
                                Ok(true) => {}
                                Ok(false) => continue,
                                Err(e) => {
                                    res.messages
                                        .push(format!("fix action could not be judged: {e}"));
                                    continue;
                                }
                            }
                        }
                        match expr::render_value_in(&Value::Object(a), &mj) {
                            Ok(v) if !actions.contains(&v) => actions.push(v),
                            Ok(_) => {}
                            Err(e) => res
                                .messages
                                .push(format!("fix action could not be rendered: {e}")),
                        }
                    }
                    if let Some(ins) = &fix.instructions {
                        let t = expr::render_in(ins, mj.clone())
                            .unwrap_or_else(|e| format!("(instructions template failed: {e})"));
                        if !t.trim().is_empty() && !instructions.contains(&t) {
                            instructions.push(t);
                        }
                    }
                }
            }
            Err(e) => unknowns.push(reason_for(c, &r.rule.fail_when, &e, vars(), &label)),
        }
    }
    if res.verdict == Verdict::Fail {
        if let Some(fix) = &r.rule.fix {
            // where every action's `when` left it out, only the instructions remain: a
            // person carries them out, nothing is executed
            let manual = actions.is_empty() && !fix.actions.is_empty() && !instructions.is_empty();
            res.fix = Some(FixProposal {
                safety: if manual {
                    crate::report::Safety::Manual
                } else {
                    r.fix_safety.unwrap_or(fix.safety)
                },
                restart: fix.restart.as_str().to_string(),
                actions,
                instructions: if instructions.is_empty() {
                    None
                } else {
                    Some(instructions.join("\n"))
                },
            });
        }
        if !unknowns.is_empty() {
            res.messages
                .push(format!("also could not judge: {}", unknowns.join("; ")));
        }
    } else if !unknowns.is_empty() {
        // judging pasted evidence: what the paste does not show is not applicable
        res.verdict = if unknowns
            .iter()
            .all(|u| u.contains(crate::host::NOT_IN_EVIDENCE))
        {
            Verdict::NotApplicable
        } else {
            Verdict::Unknown
        };
        res.reason = Some(unknowns.join("; "));
    }
    // A cut input never gives pass: what was left out was not judged.
    if !cuts.is_empty() {
        match res.verdict {
            Verdict::Pass => {
                res.verdict = Verdict::Unknown;
                res.reason = Some(format!(
                    "{}; the part read shows nothing this rule fails on, and the rest was not judged",
                    cuts.join("; ")
                ));
            }
            Verdict::Fail => res
                .messages
                .push(format!("judged on part of the input: {}", cuts.join("; "))),
            _ => {}
        }
    }
    res
}

/// The variables an expression reads, with those of the `let:` bindings it reads (so a
/// finding's evidence shows the values a binding was computed from too).
fn expression_vars(r: &LoadedRule, src: &str) -> BTreeSet<String> {
    let mut out = expr::check_expression(src).unwrap_or_default();
    let mut todo: Vec<String> = out.iter().cloned().collect();
    while let Some(v) = todo.pop() {
        let root = v.split('.').next().unwrap_or(&v);
        if let Some(let_src) = r.rule.lets.get(root) {
            for w in expr::check_expression(let_src).unwrap_or_default() {
                if out.insert(w.clone()) {
                    todo.push(w);
                }
            }
        }
    }
    out
}

/// A rule's context as the expression engine reads it: each top-level value converted once,
/// and the names an item sets (the item, its bindings) converted when set. [`Scope::value`]
/// is a map of the converted values (shared, not copied), so an item's context costs the
/// number of top-level names, not the size of what they hold.
struct Scope {
    values: BTreeMap<String, expr::MjValue>,
}

impl Scope {
    fn new(ctx: &Map<String, Value>) -> Self {
        let values = ctx
            .iter()
            .map(|(k, v)| (k.clone(), expr::to_mj(v)))
            .collect();
        Scope { values }
    }

    /// Set a name (or take it out, as the context's own map does for a binding that failed).
    fn set(&mut self, name: &str, v: Option<&Value>) {
        match v {
            Some(v) => {
                self.values.insert(name.to_string(), expr::to_mj(v));
            }
            None => {
                self.values.remove(name);
            }
        }
    }

    fn value(&self) -> expr::MjValue {
        expr::MjValue::from(self.values.clone())
    }
}

/// Compute the rule's `let:` bindings in order into `ctx`, each in `scope` (which follows
/// `ctx`'s names): for the rule, then again for each `for_each` item. A binding that cannot be
/// computed is left out (so `x is defined` reads false), and why is kept under `__let_errors`
/// for the reason of a verdict that needs it.
fn bind_lets(r: &LoadedRule, ctx: &mut Map<String, Value>, scope: &mut Scope) {
    if r.rule.lets.is_empty() {
        return;
    }
    ctx.remove("__let_errors");
    scope.set("__let_errors", None);
    for (name, src) in &r.rule.lets {
        ctx.remove(name);
        scope.set(name, None);
        match expr::eval_in(src, scope.value()) {
            Ok(v) => {
                scope.set(name, Some(&v));
                ctx.insert(name.clone(), v);
            }
            Err(e) => {
                let c = Value::Object(std::mem::take(ctx));
                let vars = expr::check_expression(src).unwrap_or_default();
                let why = reason_for(&c, src, &e, &vars, &|v: &str| v.to_string());
                let Value::Object(m) = c else { unreachable!() };
                *ctx = m;
                let errors = ctx
                    .entry("__let_errors")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(e) = errors {
                    e.insert(name.clone(), Value::String(why));
                }
                scope.set("__let_errors", ctx.get("__let_errors"));
            }
        }
    }
}

/// The GPU a `for_each` item is, when it is one of `nvml.gpus` (an object with a numeric
/// `index` and, where NVML gave one, a `GPU-…` `uuid`).
fn gpu_ref(item: &Value) -> Option<crate::report::GpuRef> {
    let index = u32::try_from(item.get("index")?.as_u64()?).ok()?;
    let uuid = item
        .get("uuid")
        .and_then(Value::as_str)
        .filter(|u| u.starts_with("GPU-") || u.starts_with("MIG-"))
        .map(str::to_string);
    // Other lists with an `index` field (NVLinks, NICs) have no uuid; only GPUs do, or come
    // from the nvml probe's `gpus`, whose items also carry `name`.
    (uuid.is_some() || item.get("name").is_some()).then_some(crate::report::GpuRef { index, uuid })
}

/// Keep evidence readable: long strings and big structures are cut.
fn compact(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > 200 => {
            Value::String(format!("{}…", &s[..s.floor_char_boundary(200)]))
        }
        Value::Array(a) if a.len() > 20 => Value::String(format!("[{} items]", a.len())),
        Value::Object(m) if m.len() > 20 => Value::String(format!("{{{} fields}}", m.len())),
        _ => v.clone(),
    }
}

fn unknown_result(
    r: &LoadedRule,
    ctx: &Value,
    src: &str,
    err: &dyn std::fmt::Display,
) -> RuleResult {
    let vars = expr::check_expression(src).unwrap_or_default();
    let mut res = base_result(r, Verdict::Unknown);
    res.reason = Some(reason_for(ctx, src, err, &vars, &|v: &str| v.to_string()));
    // judging pasted evidence: a field the paste does not show is not applicable, not unknown
    if res
        .reason
        .as_deref()
        .is_some_and(|w| w.contains(crate::host::NOT_IN_EVIDENCE))
    {
        res.verdict = Verdict::NotApplicable;
    }
    res
}

/// Say which value was missing and, when a probe recorded why, that reason too.
fn reason_for(
    ctx: &Value,
    src: &str,
    err: &dyn std::fmt::Display,
    vars: &BTreeSet<String>,
    label: &dyn Fn(&str) -> String,
) -> String {
    // Fields missing for the same reason are named together, so a cut paste's reason ("input
    // ends early: …") is said once per rule, not once per field.
    enum Missing {
        Said(String),
        Field(String, Option<String>),
    }
    let found: Vec<Missing> = vars
        .iter()
        .filter(|v| expr::lookup(ctx, v).is_none())
        .map(|v| {
            let root = v.split('.').next().unwrap_or(v);
            if let Some(why) = ctx
                .get("__let_errors")
                .and_then(|u| u.get(root))
                .and_then(Value::as_str)
            {
                // the binding's own reason names what it was missing
                return Missing::Said(why.to_string());
            }
            if let Some(why) = ctx
                .get("__unknown_probes")
                .and_then(|u| u.get(root))
                .and_then(Value::as_str)
            {
                return Missing::Said(format!("probe `{root}`: {why}"));
            }
            let field = v.rsplit('.').next().unwrap_or(v);
            Missing::Field(label(v), find_unavailable(ctx, field))
        })
        .collect();
    // (reason, labels) in first-seen order; the fields without a recorded reason are one group too
    let mut groups: Vec<(Option<String>, Vec<String>)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for m in found {
        match m {
            Missing::Said(s) => missing.push(s),
            Missing::Field(l, w) => match groups.iter_mut().find(|(g, _)| *g == w) {
                Some((_, ls)) => {
                    if !ls.contains(&l) {
                        ls.push(l)
                    }
                }
                None => {
                    missing.push(String::new()); // placeholder keeps the order
                    groups.push((w, vec![l]));
                }
            },
        }
    }
    let mut groups = groups.into_iter();
    let missing: Vec<String> = missing
        .into_iter()
        .map(|m| {
            if !m.is_empty() {
                return m;
            }
            let (w, ls) = groups.next().unwrap_or_default();
            let named: Vec<String> = ls.iter().map(|l| format!("`{l}`")).collect();
            let verb = if named.len() == 1 { "is" } else { "are" };
            match w {
                Some(w) => format!("{} {verb} not available ({w})", named.join(", ")),
                None => format!("{} {verb} not available", named.join(", ")),
            }
        })
        .collect();
    let mut seen = BTreeSet::new();
    let missing: Vec<String> = missing
        .into_iter()
        .filter(|m| seen.insert(m.clone()))
        .collect();
    if missing.is_empty() {
        format!("`{src}`: {err}")
    } else {
        missing.join(", ")
    }
}

/// Probes list fields they could not read under `unavailable: {"gpus[0].temperature_c": reason}`.
fn find_unavailable(ctx: &Value, field: &str) -> Option<String> {
    let obj = ctx.as_object()?;
    for v in obj.values() {
        if let Some(un) = v.get("unavailable").and_then(Value::as_object) {
            for (k, why) in un {
                if k == field || k.ends_with(&format!(".{field}")) {
                    return why.as_str().map(str::to_string);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod recheck_tests {
    use super::*;

    fn result(verdict: &str, message: &str) -> RuleResult {
        serde_json::from_value(json!({
            "id": "memory.orphaned-gpu-memory", "title": "t", "layer": "memory",
            "severity": "warning", "verdict": verdict, "messages": [message],
            "why": "w", "source": "memory.yaml"
        }))
        .unwrap()
    }

    fn mine() -> (Vec<(String, Slot)>, BTreeMap<ProbeKey, Request>) {
        let key = ProbeKey::new("nvml", &Map::new());
        let mut again = BTreeMap::new();
        again.insert(
            key.clone(),
            Request {
                kind: "nvml".into(),
                params: Map::new(),
            },
        );
        (
            vec![
                ("nvml".into(), Slot::Key(key)),
                (
                    "fixed".into(),
                    Slot::Fixed(ProbeOutcome::NotApplicable("x".into())),
                ),
            ],
            again,
        )
    }

    fn run(second: RuleResult) -> (RuleResult, Vec<String>) {
        let (mine, again) = mine();
        let asked = std::cell::RefCell::new(Vec::new());
        let out = recheck(
            &mine,
            result("fail", "GPU 0: memory held by PID 7 (zombie, 900 MiB)"),
            Duration::from_secs(3),
            &again,
            |req| {
                asked.borrow_mut().extend(req.keys().map(|k| k.0.clone()));
                req.into_keys()
                    .map(|k| (k, ProbeOutcome::Value(json!({}))))
                    .collect()
            },
            |_| second,
        );
        (out, asked.into_inner())
    }

    #[test]
    fn a_finding_the_second_reading_clears_passes_and_says_what_it_saw() {
        let (out, asked) = run(result("pass", ""));
        assert_eq!(out.verdict, Verdict::Pass);
        let why = out.reason.unwrap();
        assert!(why.contains("PID 7 (zombie, 900 MiB)"), "{why}");
        assert!(why.contains("read again 3 s later it passed"), "{why}");
        // only the rule's own probes are read again, not its fixed outcomes
        assert_eq!(asked, vec!["nvml {}".to_string()]);
    }

    #[test]
    fn a_finding_the_second_reading_repeats_stands() {
        let (out, _) = run(result(
            "fail",
            "GPU 0: memory held by PID 7 (zombie, 900 MiB)",
        ));
        assert_eq!(out.verdict, Verdict::Fail);
        assert_eq!(
            out.reason.as_deref(),
            Some("failed again when read 3 s later")
        );
    }

    #[test]
    fn a_second_reading_that_cannot_tell_keeps_the_first_finding() {
        let mut unknown = result("unknown", "");
        unknown.reason = Some("probe `nvml`: NVML could not be read".into());
        let (out, _) = run(unknown);
        assert_eq!(out.verdict, Verdict::Fail);
        assert_eq!(
            out.messages,
            vec!["GPU 0: memory held by PID 7 (zombie, 900 MiB)".to_string()]
        );
        let why = out.reason.unwrap();
        assert!(why.contains("the first reading's finding stands"), "{why}");
        assert!(why.contains("NVML could not be read"), "{why}");
    }

    #[test]
    fn a_rule_whose_probes_are_all_fixed_is_not_read_again() {
        let (mine, _) = mine();
        let out = recheck(
            &mine[1..],
            result("fail", "m"),
            Duration::from_millis(500),
            &BTreeMap::new(),
            |_| panic!("nothing to read again"),
            |_| panic!("nothing to judge again"),
        );
        assert_eq!(out.verdict, Verdict::Fail);
        assert_eq!(out.reason, None);
    }
}
