//! The playbook and values schemas, and checking a document against one (one diagnostic per
//! violation, with the keys that would have been accepted).

use super::*;

pub fn playbook_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Playbook)).expect("schema serialises")
}

/// The playbook schema `load` checks a document's structure against: probes and fix actions
/// are plain objects here, because each is checked against its kind's own parameter schema
/// (with messages that name the kind and the parameter).
pub(super) fn structural_playbook_schema() -> Value {
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

/// Check a document against a schema, one diagnostic per violation.
pub(super) fn schema_check(
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
pub(super) fn most_specific<'x, 'b>(
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
pub(super) fn known_keys(schema: &Value, schema_path: &str) -> Vec<String> {
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
