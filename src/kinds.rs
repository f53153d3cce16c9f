//! Typed parameters of probe and fix kinds, and what is derived from them.
//!
//! Each kind declares its parameters as a Rust struct (serde + schemars, `deny_unknown_fields`,
//! enums for allowed values). [`ParamsDecl`] erases that type so the kind lists can hold it, and
//! from it come: the kind-discriminated part of the playbook schema (so an editor completes
//! `kind:` and its parameters), validation before anything runs (types, enums, unknown and
//! missing parameters, each at its own path), the typed check after templates render,
//! `gpufix list --probes/--fixes` and the authoring reference `docs/playbooks.md`.
//!
//! This module is vocabulary (tests/layering.rs): the probes and fixes declare their parameters
//! with it, so it knows neither list. What is built from the lists (the playbook schema's kind
//! unions, the reference) is [`crate::playbook::registry`].
//!
//! A templated string (`"{{ params.x }}"`) is allowed wherever a typed value goes; it is checked
//! once it has rendered.

use crate::vocab::did_you_mean;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// A kind's parameter struct, with its type erased.
#[derive(Clone, Copy)]
pub struct ParamsDecl {
    schema: fn(&mut SchemaGenerator) -> Schema,
    reads: fn(&Map<String, Value>) -> bool,
}

fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.root_schema_for::<T>()
}

/// Read parameters as a kind's struct: the one place a kind's parameters are parsed (its
/// serde defaults fill what the playbook leaves out).
pub fn parse<T: DeserializeOwned>(params: &Map<String, Value>) -> Result<T, serde_json::Error> {
    serde_json::from_value(Value::Object(params.clone()))
}

fn reads_as<T: DeserializeOwned>(params: &Map<String, Value>) -> bool {
    parse::<T>(params).is_ok()
}

/// The parameters of a kind that takes none.
#[derive(Debug, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl ParamsDecl {
    pub const fn of<T: DeserializeOwned + JsonSchema>() -> Self {
        ParamsDecl {
            schema: schema_of::<T>,
            reads: reads_as::<T>,
        }
    }

    pub const NONE: ParamsDecl = ParamsDecl::of::<NoParams>();

    /// The parameters' JSON Schema as declared (an object schema, subschemas inlined).
    pub fn schema(&self) -> Value {
        let mut g = SchemaSettings::draft2020_12()
            .with(|s| s.inline_subschemas = true)
            .into_generator();
        let mut v = (self.schema)(&mut g).to_value();
        if let Some(o) = v.as_object_mut() {
            o.remove("$schema");
            o.remove("title");
            o.remove("description");
        }
        v
    }

    /// The schema a playbook is checked against before templates render: every parameter
    /// that is not a plain string also accepts a template string.
    pub fn template_schema(&self) -> Value {
        let mut v = self.schema();
        if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
            for p in props.values_mut() {
                if let Some(o) = p.as_object_mut()
                    && o.get("default") == Some(&Value::Null)
                {
                    o.remove("default");
                }
                if is_plain_string(p) {
                    continue;
                }
                let mut inner = p.clone();
                let mut wrapped = Map::new();
                if let Some(o) = inner.as_object_mut() {
                    for k in ["description", "default"] {
                        if let Some(x) = o.remove(k) {
                            wrapped.insert(k.into(), x);
                        }
                    }
                }
                wrapped.insert("anyOf".into(), json!([inner, template_string()]));
                *p = Value::Object(wrapped);
            }
        }
        v
    }

    /// Whether rendered parameters read as the kind's struct.
    pub fn reads(&self, params: &Map<String, Value>) -> bool {
        (self.reads)(params)
    }

    /// One row per parameter, for `list` and the reference.
    pub fn rows(&self) -> Vec<ParamRow> {
        let s = self.schema();
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        s.get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, p)| ParamRow {
                        name: name.clone(),
                        ty: type_text(p),
                        required: required.contains(&name.as_str()),
                        default: p.get("default").filter(|d| !d.is_null()).cloned(),
                        allowed: allowed_values(p),
                        doc: p
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" "),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A parameter as `list` and the reference show it.
#[derive(Debug, Clone)]
pub struct ParamRow {
    pub name: String,
    pub ty: String,
    pub required: bool,
    pub default: Option<Value>,
    pub allowed: Vec<String>,
    pub doc: String,
}

impl ParamRow {
    /// `state: present|absent = present — what it does`
    pub fn line(&self) -> String {
        let mut s = format!(
            "{}{}: {}",
            self.name,
            if self.required { "*" } else { "" },
            self.ty
        );
        if let Some(d) = &self.default {
            s.push_str(&format!(" = {d}"));
        }
        if !self.doc.is_empty() {
            s.push_str(&format!(" — {}", self.doc));
        }
        s
    }
}

/// Whether a parameter value is a template (checked once it has rendered).
pub fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

fn template_string() -> Value {
    json!({
        "type": "string",
        "pattern": "\\{\\{|\\{%",
        "description": "a template; its rendered value is checked against the parameter's type"
    })
}

/// `given` with each template string of a parameter that is not a plain string replaced by a
/// value of that parameter's type (its default, or an empty value of its JSON type); `None`
/// when there is no such template or a parameter's type has no obvious empty value.
fn template_stand_ins(
    params: &ParamsDecl,
    given: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    if !given.values().any(|v| v.as_str().is_some_and(is_template)) {
        return None;
    }
    let schema = params.schema();
    let props = schema.get("properties")?.as_object()?;
    let mut out = given.clone();
    for (k, v) in out.iter_mut() {
        if !v.as_str().is_some_and(is_template) {
            continue;
        }
        let p = props.get(k)?;
        if is_plain_string(p) {
            continue;
        }
        *v = stand_in(p)?;
    }
    Some(out)
}

/// A value a parameter's schema names (its default, const or first allowed value), or an empty
/// value of its JSON type, or one of its alternatives'.
fn stand_in(p: &Value) -> Option<Value> {
    if let Some(d) = p.get("default").filter(|d| !d.is_null()) {
        return Some(d.clone());
    }
    if let Some(c) = p.get("const") {
        return Some(c.clone());
    }
    if let Some(e) = p
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(e.clone());
    }
    let ty = match p.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    };
    match ty {
        Some("array") => return Some(json!([])),
        Some("object") => return Some(json!({})),
        Some("integer" | "number") => return Some(json!(0)),
        Some("boolean") => return Some(json!(false)),
        _ => {}
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| p.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(stand_in)
}

fn is_plain_string(p: &Value) -> bool {
    let ty = p.get("type");
    (ty.and_then(Value::as_str) == Some("string") || ty == Some(&json!(["string", "null"])))
        && p.get("enum").is_none()
        && p.get("pattern").is_none()
        && p.get("const").is_none()
}

fn allowed_values(p: &Value) -> Vec<String> {
    if let Some(e) = p.get("enum").and_then(Value::as_array) {
        return e.iter().map(scalar_text).collect();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = p.get(key).and_then(Value::as_array) {
            let mut out = Vec::new();
            for a in alts {
                if let Some(c) = a.get("const") {
                    out.push(scalar_text(c));
                }
                if let Some(e) = a.get("enum").and_then(Value::as_array) {
                    out.extend(e.iter().map(scalar_text));
                }
            }
            if !out.is_empty() {
                return out;
            }
        }
    }
    Vec::new()
}

fn scalar_text(v: &Value) -> String {
    v.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string())
}

/// A short type description of a parameter schema: `string`, `integer`, `present|absent`,
/// `array of string`, `map of string → array of string`, `string|integer`.
pub fn type_text(p: &Value) -> String {
    if let Some(e) = p.get("enum").and_then(Value::as_array) {
        return e.iter().map(scalar_text).collect::<Vec<_>>().join("|");
    }
    if let Some(c) = p.get("const") {
        return scalar_text(c);
    }
    if let Some(alts) = p
        .get("anyOf")
        .or_else(|| p.get("oneOf"))
        .and_then(Value::as_array)
    {
        let parts: Vec<String> = alts.iter().map(type_text).filter(|t| t != "null").collect();
        return parts.join("|");
    }
    let types: Vec<&str> = match p.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => return "any".into(),
    };
    types
        .iter()
        .map(|t| match *t {
            "array" => match p.get("items") {
                Some(i) => format!("array of {}", type_text(i)),
                None => "array".into(),
            },
            "object" => match p.get("additionalProperties") {
                Some(a) if a.is_object() => format!("map of string → {}", type_text(a)),
                _ => "object".into(),
            },
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// The JSON Schema of one kind inside a playbook: `kind: NAME` plus its parameters.
pub fn kind_schema(name: &str, doc: &str, params: &ParamsDecl) -> Value {
    let mut s = params.template_schema();
    let o = s.as_object_mut().expect("a params schema is an object");
    o.insert("title".into(), json!(name));
    o.insert("description".into(), json!(doc));
    let props = o
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("properties is an object");
    let mut with_kind = Map::new();
    with_kind.insert("kind".into(), json!({ "const": name }));
    with_kind.extend(std::mem::take(props));
    *props = with_kind;
    let req = o
        .entry("required")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .expect("required is an array");
    req.insert(0, json!("kind"));
    o.insert("type".into(), json!("object"));
    o.insert("additionalProperties".into(), json!(false));
    s
}

/// `{kind: one of NAMES, …}` discriminated over the kinds, for the playbook schema.
pub fn union_schema(what: &str, kinds: &[(&str, &str, ParamsDecl)]) -> Value {
    let names: Vec<&str> = kinds.iter().map(|k| k.0).collect();
    json!({
        "description": format!("A {what}: `kind` and that kind's parameters (`gpufix list --{what}s` lists them)."),
        "type": "object",
        "required": ["kind"],
        "properties": { "kind": { "enum": names } },
        "oneOf": kinds.iter().map(|(n, d, p)| kind_schema(n, d, p)).collect::<Vec<_>>(),
    })
}

/// One problem with a kind's parameters: where (a JSON pointer relative to the probe or
/// action), what, and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub path: String,
    pub message: String,
    pub help: String,
}

/// A compiled schema, built once per process for each `key` (a kind's parameter schema, the
/// playbook schema): compiling costs far more than validating one small document, and a run
/// checks hundreds of probe and fix parameter maps against a few dozen schemas.
pub fn cached_validator(
    key: &str,
    schema: impl FnOnce() -> Value,
) -> Result<std::sync::Arc<jsonschema::Validator>, String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(key) {
        return Ok(v.clone());
    }
    let v = Arc::new(jsonschema::draft202012::new(&schema()).map_err(|e| e.to_string())?);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string(), v.clone());
    Ok(v)
}

/// Check parameters (before templates render) against a kind's declared types.
pub fn check(
    what: &str,
    kind: &str,
    params: &ParamsDecl,
    given: &Map<String, Value>,
) -> Vec<Problem> {
    // Fast path: parameters that read straight into the kind's struct are valid under its
    // schema (generated from the same struct, with no constraints serde does not enforce);
    // only the others pay for a compiled schema, for their located messages.
    if params.reads(given) {
        return Vec::new();
    }
    // Second fast path, for templates in parameters of another type (`keys: "{{ params.keys }}"`
    // in a built-in playbook): such a value is valid under the template schema's `anyOf`, so the
    // map is valid if it reads with each one replaced by a value of the parameter's own type. A
    // stand-in that does not read only sends the map on to the schema pass below, so this never
    // accepts what the schema would refuse. (Compiling that schema costs milliseconds and maps
    // ~2 MB of the validator's code into every run: bench/RESULTS.md, record's memory.)
    if let Some(stood_in) = template_stand_ins(params, given)
        && params.reads(&stood_in)
    {
        return Vec::new();
    }
    let rows = params.rows();
    let takes = || {
        if rows.is_empty() {
            "it takes no parameters".to_string()
        } else {
            format!(
                "`{kind}` takes: {}",
                rows.iter()
                    .map(|r| format!("{}{} ({})", r.name, if r.required { "*" } else { "" }, r.ty))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    let validator =
        match cached_validator(&format!("{what} kind {kind}"), || params.template_schema()) {
            Ok(v) => v,
            Err(e) => {
                return vec![Problem {
                    path: String::new(),
                    message: format!("bad built-in schema of {what} kind `{kind}`: {e}"),
                    help: "report this bug".into(),
                }];
            }
        };
    let doc = Value::Object(given.clone());
    let mut out = Vec::new();
    for top in validator.iter_errors(&doc) {
        let err = first_branch(&top);
        let path = err.instance_path().to_string();
        let pname = path
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("")
            .to_string();
        let row = rows.iter().find(|r| r.name == pname);
        let row_help = || {
            row.map(|r| {
                format!(
                    "{}: {}",
                    r.name,
                    r.line().split_once(": ").map(|x| x.1).unwrap_or("")
                )
            })
            .unwrap_or_else(takes)
        };
        use jsonschema::error::ValidationErrorKind as K;
        match err.kind() {
            K::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    let mut help = did_you_mean(key, rows.iter().map(|r| r.name.as_str()))
                        .map(|h| format!("{h} "))
                        .unwrap_or_default();
                    help.push_str(&takes());
                    out.push(Problem {
                        path: format!("/{key}"),
                        message: format!("{what} kind `{kind}` has no parameter `{key}`"),
                        help,
                    });
                }
            }
            K::Required { property } => {
                let p = property.as_str().unwrap_or_default();
                let r = rows.iter().find(|r| r.name == p);
                out.push(Problem {
                    path: String::new(),
                    message: format!("{what} kind `{kind}` needs parameter `{p}`"),
                    help: match r {
                        Some(r) => format!("add `{}:` ({}: {})", r.name, r.ty, r.doc),
                        None => takes(),
                    },
                });
            }
            K::Enum { options } => {
                let allowed: Vec<String> = options
                    .as_array()
                    .map(|a| a.iter().map(scalar_text).collect())
                    .unwrap_or_default();
                let found = scalar_text(err.instance());
                let help = did_you_mean(&found, allowed.iter().map(String::as_str))
                    .unwrap_or_else(|| format!("write one of: {}", allowed.join(", ")));
                out.push(Problem {
                    path,
                    message: format!(
                        "{what} parameter `{pname}` of `{kind}` must be one of {}, found `{found}`",
                        allowed.join(", ")
                    ),
                    help,
                });
            }
            K::Type { .. } => {
                let want = row
                    .map(|r| r.ty.clone())
                    .unwrap_or_else(|| "another type".into());
                out.push(Problem {
                    message: format!(
                        "{what} parameter `{}` of `{kind}` must be {want}, found {}",
                        path.trim_start_matches('/').replace('/', "."),
                        json_type(err.instance())
                    ),
                    path,
                    help: row_help(),
                });
            }
            _ => out.push(Problem {
                message: format!("{what} parameter `{pname}` of `{kind}`: {err}"),
                path,
                help: row_help(),
            }),
        }
    }
    out
}

/// The JSON Schema name of a value's type (`integer`, `number`, `string`, ...), for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// For the `anyOf` a template allowance adds (`[declared type, template string]`), report the
/// error of the declared type: "must be one of present, absent", not "not valid under anyOf".
fn first_branch<'x, 'b>(
    err: &'x jsonschema::ValidationError<'b>,
) -> &'x jsonschema::ValidationError<'b> {
    if let jsonschema::error::ValidationErrorKind::AnyOf { context } = err.kind()
        && let Some(first) = context.first().and_then(|b| b.first())
    {
        return first_branch(first);
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_playbooks_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/playbooks.md");
        let want = crate::playbook::reference_markdown();
        if std::env::var_os("GPUFIX_UPDATE_DOCS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/playbooks.md is stale: run `cargo run -- list --probes --fixes --format markdown > docs/playbooks.md`"
        );
    }

    #[test]
    fn each_fix_spec_names_its_implementation() {
        for f in crate::fixes::FIXES {
            assert_eq!(f.name, f.imp.name());
        }
        let mut names: Vec<&str> = crate::fixes::FIXES.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(
            names.len(),
            crate::fixes::FIXES.len(),
            "a fix kind is listed twice"
        );
    }

    #[test]
    fn every_kind_schema_compiles_and_checks() {
        for p in crate::probes::PROBES {
            let s = kind_schema(p.name(), p.doc(), &p.params());
            jsonschema::draft202012::new(&s).unwrap();
        }
        for f in crate::fixes::FIXES {
            let s = kind_schema(f.name, f.doc, &f.params);
            jsonschema::draft202012::new(&s).unwrap();
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    /// The schema pass alone, as `check` ran before its second fast path.
    fn schema_accepts(kind: &str, params: &ParamsDecl, given: &Map<String, Value>) -> bool {
        let v =
            cached_validator(&format!("test kind {kind}"), || params.template_schema()).unwrap();
        v.is_valid(&Value::Object(given.clone()))
    }

    #[test]
    fn a_template_in_a_typed_parameter_is_accepted_without_the_schema_pass() {
        let config = crate::probes::find("config").unwrap().params();
        let given = obj(json!({"keys": "{{ params.keys }}"}));
        assert!(
            !config.reads(&given),
            "the first fast path does not read a template"
        );
        let stood_in = template_stand_ins(&config, &given).expect("a stand-in for keys");
        assert!(config.reads(&stood_in));
        assert!(schema_accepts("config", &config, &given));
        assert!(check("probe", "config", &config, &given).is_empty());
        // an unknown parameter beside the template still fails, at its own path
        let bad = obj(json!({"keys": "{{ params.keys }}", "kyes": 1}));
        assert!(!config.reads(&template_stand_ins(&config, &bad).unwrap()));
        let p = check("probe", "config", &config, &bad);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, "/kyes");
        // a template in an enum parameter has no stand-in: the schema pass judges it
        let line = crate::fixes::spec("file.line").unwrap();
        let templ = obj(json!({"path": "/etc/x", "line": "a", "state": "{{ params.state }}"}));
        assert!(check("fix", "file.line", &line.params, &templ).is_empty());
    }

    /// Wherever the second fast path accepts a built-in playbook's parameters, the schema pass
    /// accepts them too (it can only be stricter than the schema, never looser); and every
    /// built-in map is accepted by one of the fast paths, so no run compiles a schema for them.
    #[test]
    fn template_stand_ins_never_accept_what_the_schema_refuses() {
        let mut seen = 0;
        for (name, text) in crate::playbook::BUILTIN {
            let doc: Value = serde_yaml::from_str(text).unwrap();
            for rule in doc["rules"].as_array().unwrap() {
                let mut maps: Vec<(String, &ParamsDecl, Map<String, Value>)> = Vec::new();
                let probe_params: Vec<(String, ParamsDecl, Map<String, Value>)> = rule["probes"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(_, spec)| {
                        let mut m = spec.as_object()?.clone();
                        let kind = m.remove("kind")?.as_str()?.to_string();
                        let decl = crate::probes::find(&kind)?.params();
                        Some((kind, decl, m))
                    })
                    .collect();
                let fix_params: Vec<(String, ParamsDecl, Map<String, Value>)> =
                    rule["fix"]["actions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|a| {
                            let mut m = a.as_object()?.clone();
                            let kind = m.remove("kind")?.as_str()?.to_string();
                            // `when` is the action's condition, not a parameter of its kind
                            m.remove("when");
                            Some((kind.clone(), crate::fixes::spec(&kind)?.params, m))
                        })
                        .collect();
                for (k, d, m) in &probe_params {
                    maps.push((k.clone(), d, m.clone()));
                }
                for (k, d, m) in &fix_params {
                    maps.push((k.clone(), d, m.clone()));
                }
                for (kind, decl, given) in maps {
                    // no built-in parameter map needs the compiled schema at load
                    let stood_in = template_stand_ins(decl, &given);
                    assert!(
                        decl.reads(&given) || stood_in.as_ref().is_some_and(|s| decl.reads(s)),
                        "{name}: {kind} {given:?} takes the schema pass at every load"
                    );
                    if let Some(stood_in) = stood_in
                        && decl.reads(&stood_in)
                    {
                        seen += 1;
                        assert!(
                            schema_accepts(&kind, decl, &given),
                            "{name}: {kind} {given:?} passes the stand-in path but not the schema"
                        );
                    }
                }
            }
        }
        assert!(
            seen >= 1,
            "no built-in parameter took the template fast path"
        );
    }

    #[test]
    fn enum_type_unknown_and_missing_parameters_are_problems() {
        let line = crate::fixes::spec("file.line").unwrap();
        let p = check(
            "fix",
            "file.line",
            &line.params,
            &obj(json!({"path": "/etc/x", "line": "a", "state": "presentt"})),
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, "/state");
        assert!(p[0].message.contains("present, absent"), "{p:?}");
        assert!(p[0].help.contains("did you mean `present`"), "{p:?}");
        // a template is allowed where the enum goes, and checked after rendering
        let ok = obj(json!({"path": "/etc/x", "line": "a", "state": "{{ params.s }}"}));
        assert!(check("fix", "file.line", &line.params, &ok).is_empty());
        assert!(!line.params.reads(&ok));
        assert!(line.params.reads(&obj(
            json!({"path": "/etc/x", "line": "a", "state": "absent"})
        )));
        // wrong type, unknown name, missing name
        let p = check(
            "fix",
            "file.line",
            &line.params,
            &obj(json!({"path": 3, "lines": "a"})),
        );
        let msgs: Vec<&str> = p.iter().map(|x| x.message.as_str()).collect();
        assert!(
            msgs.iter()
                .any(|m| m.contains("`path` of `file.line` must be string, found integer")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("has no parameter `lines`")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("needs parameter `line`")),
            "{msgs:?}"
        );
        let gpu = crate::fixes::spec("nvidia.persistence").unwrap();
        assert!(
            check(
                "fix",
                "nvidia.persistence",
                &gpu.params,
                &obj(json!({"gpu": "all", "enabled": true}))
            )
            .is_empty()
        );
        assert!(
            check(
                "fix",
                "nvidia.persistence",
                &gpu.params,
                &obj(json!({"gpu": 0, "enabled": true}))
            )
            .is_empty()
        );
        assert!(
            !check(
                "fix",
                "nvidia.persistence",
                &gpu.params,
                &obj(json!({"gpu": "every", "enabled": true}))
            )
            .is_empty()
        );
    }

    #[test]
    fn rows_show_types_defaults_and_allowed_values() {
        let line = crate::fixes::spec("file.line").unwrap();
        let rows = line.params.rows();
        let state = rows.iter().find(|r| r.name == "state").unwrap();
        assert_eq!(state.ty, "present|absent");
        assert_eq!(state.default, Some(json!("present")));
        assert!(rows.iter().find(|r| r.name == "path").unwrap().required);
        let gpu = crate::fixes::spec("nvidia.power_limit")
            .unwrap()
            .params
            .rows();
        assert_eq!(gpu[0].ty, "integer|all");
        assert_eq!(gpu[1].ty, "number|default");
    }
}
