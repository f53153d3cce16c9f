//! Thresholds and templates: minijinja in strict mode. A value that is not there is an error,
//! never a falsy default, so a missing metric makes a verdict `unknown` instead of firing (or
//! silencing) a rule. One environment serves validation and evaluation alike.

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value as MjValue};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Names every expression may use besides probe aliases.
pub const ROOTS: &[&str] = &["params", "inputs", "host"];
/// Fields of `inputs` (the flags a rule may need).
pub const INPUTS: &[&str] = &[
    "pid",
    "config",
    "env_file",
    "trace",
    "nccl_log",
    "kernel_log",
    "evidence",
];
/// Fields of `host`.
pub const HOST_FIELDS: &[&str] = &["cpus", "live"];
/// minijinja globals that are functions, not data.
const GLOBALS: &[&str] = &[
    "range",
    "dict",
    "namespace",
    "debug",
    "true",
    "false",
    "none",
];

pub fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut e = Environment::new();
        e.set_undefined_behavior(UndefinedBehavior::Strict);
        e.set_fuel(Some(200_000));
        e.set_recursion_limit(64);
        e
    })
}

pub fn to_mj(v: &Value) -> MjValue {
    MjValue::from(Serde(v))
}

/// One-line form of a minijinja error (kind and detail, without the source dump).
pub fn err_text(e: &minijinja::Error) -> String {
    match e.detail() {
        Some(d) => format!("{}: {d}", e.kind()),
        None => e.kind().to_string(),
    }
}

/// An expression compiled once at load time and reused for every evaluation.
pub type Compiled = std::sync::Arc<minijinja::Expression<'static, 'static>>;

/// Compile an expression to keep, with the dotted variable paths it reads.
pub fn compile(src: &str) -> Result<(Compiled, BTreeSet<String>), String> {
    let expr = env()
        .compile_expression_owned(src.to_string())
        .map_err(|e| err_text(&e))?;
    let vars = expr
        .undeclared_variables(true)
        .into_iter()
        .filter(|v| !is_global(v))
        .collect();
    Ok((std::sync::Arc::new(expr), vars))
}

/// Evaluate a compiled threshold: exactly `true` or `false`.
pub fn eval_compiled_bool(expr: &Compiled, src: &str, ctx: &Value) -> Result<bool, String> {
    let v = expr.eval(to_mj(ctx)).map_err(|e| err_text(&e))?;
    if v.is_undefined() {
        return Err("undefined value: the expression read something that is not there".into());
    }
    match serde_json::to_value(&v).map_err(|e| e.to_string())? {
        Value::Bool(b) => Ok(b),
        other => Err(format!(
            "`{src}` gave {other} where true or false was expected"
        )),
    }
}

/// Compile an expression; on success return the dotted variable paths it reads.
pub fn check_expression(src: &str) -> Result<BTreeSet<String>, String> {
    let expr = env().compile_expression(src).map_err(|e| err_text(&e))?;
    Ok(expr
        .undeclared_variables(true)
        .into_iter()
        .filter(|v| !is_global(v))
        .collect())
}

/// Compile a template; on success return the dotted variable paths it reads.
pub fn check_template(src: &str) -> Result<BTreeSet<String>, String> {
    let t = env().template_from_str(src).map_err(|e| err_text(&e))?;
    Ok(t.undeclared_variables(true)
        .into_iter()
        .filter(|v| !is_global(v))
        .collect())
}

fn is_global(v: &str) -> bool {
    let root = v.split('.').next().unwrap_or(v);
    GLOBALS.contains(&root)
}

pub fn eval(src: &str, ctx: &Value) -> Result<Value, String> {
    let expr = env().compile_expression(src).map_err(|e| err_text(&e))?;
    let v = expr.eval(to_mj(ctx)).map_err(|e| err_text(&e))?;
    if v.is_undefined() {
        return Err("undefined value: the expression read something that is not there".into());
    }
    serde_json::to_value(&v).map_err(|e| e.to_string())
}

/// Evaluate a threshold: it must give exactly `true` or `false`.
pub fn eval_bool(src: &str, ctx: &Value) -> Result<bool, String> {
    match eval(src, ctx)? {
        Value::Bool(b) => Ok(b),
        other => Err(format!(
            "`{src}` gave {other} where true or false was expected"
        )),
    }
}

pub fn render(src: &str, ctx: &Value) -> Result<String, String> {
    env().render_str(src, to_mj(ctx)).map_err(|e| err_text(&e))
}

/// Render every string inside a JSON value as a template (fix action parameters).
/// A string that is exactly one `{{ expr }}` keeps the expression's type, so
/// `value: "{{ params.workers }}"` renders to the number 8, not the string "8".
pub fn render_value(v: &Value, ctx: &Value) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => {
            let t = s.trim();
            if let Some(inner) = t.strip_prefix("{{").and_then(|r| r.strip_suffix("}}"))
                && !inner.contains("{{")
                && !inner.contains("}}")
            {
                eval(inner.trim(), ctx)?
            } else if s.contains("{{") || s.contains("{%") {
                Value::String(render(s, ctx)?)
            } else {
                v.clone()
            }
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| render_value(x, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), render_value(x, ctx)?)))
                .collect::<Result<_, String>>()?,
        ),
        _ => v.clone(),
    })
}

/// Look up a dotted path (`gpu.persistence`) in a JSON context.
pub fn lookup<'a>(ctx: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(ctx, |cur, seg| cur.get(seg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The reason strict mode is on: in minijinja's default mode `util < 30` is true when `util`
    /// is undefined, so a metric that could not be read would fire the rule.
    #[test]
    fn missing_value_is_an_error_never_true_or_false() {
        let ctx = json!({"gpu": {"name": "H200"}});
        for src in [
            "gpu.util < 30",
            "gpu.util > 30",
            "not gpu.util",
            "gpu.util == 0",
            "gpu.util",
            "missing < 30",
            "missing.x < 30",
            "'x' in gpu.list",
            "gpu.util < 30 or false",
            "gpu.util != 5",
        ] {
            assert!(
                eval_bool(src, &ctx).is_err(),
                "`{src}` must not evaluate to a boolean"
            );
        }
        assert_eq!(eval_bool("gpu.util is defined", &ctx), Ok(false));
        assert_eq!(eval_bool("gpu.name == 'H200'", &ctx), Ok(true));
    }

    #[test]
    fn lenient_mode_would_have_fired() {
        // Documents the hazard the strict setting removes.
        let mut lenient = Environment::new();
        lenient.set_undefined_behavior(UndefinedBehavior::Lenient);
        let v = lenient
            .compile_expression("util < 30")
            .unwrap()
            .eval(to_mj(&json!({})))
            .unwrap();
        assert!(
            v.is_true(),
            "minijinja's lenient mode treats undefined < 30 as true"
        );
    }

    #[test]
    fn non_boolean_threshold_is_an_error() {
        assert!(
            eval_bool("1 + 1", &json!({}))
                .unwrap_err()
                .contains("true or false")
        );
    }

    #[test]
    fn render_value_keeps_types_of_single_expressions() {
        let ctx = json!({"params": {"workers": 8}});
        let v = render_value(
            &json!({"value": "{{ params.workers }}", "s": "n={{ params.workers }}"}),
            &ctx,
        )
        .unwrap();
        assert_eq!(v, json!({"value": 8, "s": "n=8"}));
    }

    #[test]
    fn variables_are_reported_nested() {
        let vars =
            check_expression("gpu.persistence == false and params.x > range(3)|length").unwrap();
        assert!(vars.contains("gpu.persistence"));
        assert!(vars.contains("params.x"));
        assert!(!vars.iter().any(|v| v.starts_with("range")));
    }
}
