//! Thresholds and templates: minijinja in strict mode. A value that is not there is an error,
//! never a falsy default, so a missing metric makes a verdict `unknown` instead of firing (or
//! silencing) a rule. One environment serves validation and evaluation alike.

pub use minijinja::Value as MjValue;
use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior};
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
        // minijinja's debug info (which name was undefined) is on by default only in debug
        // builds: on in every build, so the installed binary says what the tests and docs show
        e.set_debug(true);
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

/// Why an expression or template was refused, did not compile, or did not give a value. The
/// validator reports the first three as diagnostics; the evaluator turns the rest into an
/// `unknown` verdict and, for [`ExprError::Undefined`] and a minijinja undefined error, names
/// the value that was missing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExprError {
    /// Longer than [`MAX_EXPR_BYTES`]: refused before it is parsed.
    #[error("{} too large ({len} bytes, the limit is {MAX_EXPR_BYTES}){}", if *template { "template" } else { "expression" }, if *template { "" } else { "; split it with `let:`" })]
    TooLarge { template: bool, len: usize },
    /// Nests deeper than [`MAX_EXPR_DEPTH`]: refused before it is parsed (the parser recurses).
    #[error(
        "expression nests {depth} levels deep (brackets, `not`, `if`, unary signs, `**`); the limit is {MAX_EXPR_DEPTH}"
    )]
    TooDeep { depth: usize },
    /// A template's block tags nest deeper than [`MAX_EXPR_DEPTH`].
    #[error("template nests {blocks} blocks deep; the limit is {MAX_EXPR_DEPTH}")]
    TooManyBlocks { blocks: usize },
    /// minijinja could not compile it, or failed while evaluating it (a type error, an
    /// undefined value in strict mode, fuel spent). `range` is the byte range minijinja points
    /// at, where it gives one.
    #[error("{}", match detail { Some(d) => format!("{kind}: {d}"), None => kind.to_string() })]
    Jinja {
        kind: minijinja::ErrorKind,
        detail: Option<String>,
        range: Option<std::ops::Range<usize>>,
    },
    /// It evaluated to nothing: it read something that is not there.
    #[error("undefined value: the expression read something that is not there")]
    Undefined,
    /// A threshold gave something other than `true` or `false`.
    #[error("`{src}` gave {got} where true or false was expected")]
    NotBool { src: String, got: Value },
    /// Its value could not be turned into JSON.
    #[error("{0}")]
    Encode(String),
}

impl ExprError {
    /// True when the expression read a value that is not there (strict mode's error, or an
    /// undefined result): the reason to give is which value was missing.
    pub fn is_undefined(&self) -> bool {
        matches!(self, ExprError::Undefined)
            || matches!(self, ExprError::Jinja { kind, .. } if *kind == minijinja::ErrorKind::UndefinedError)
    }
}

impl From<minijinja::Error> for ExprError {
    fn from(e: minijinja::Error) -> Self {
        ExprError::Jinja {
            kind: e.kind(),
            detail: e.detail().map(str::to_string),
            range: e.range(),
        }
    }
}

/// Deepest an expression or template may nest: brackets, `not`, unary `-`/`+`, `**` and
/// `… if … else …` each add a level. minijinja parses (and drops) these recursively, so 30,000
/// `not` overflowed the stack (an abort, exit 134) before any recursion limit applied.
pub const MAX_EXPR_DEPTH: usize = 64;
/// Longest expression or template compiled (the built-in playbooks' longest is under 1 KB).
pub const MAX_EXPR_BYTES: usize = 16 << 10;

/// Refuse an expression whose nesting could exhaust the stack, before minijinja parses it: a
/// linear scan outside string literals that bounds the parser's recursion from above.
pub fn check_depth(src: &str) -> Result<(), ExprError> {
    if src.len() > MAX_EXPR_BYTES {
        return Err(ExprError::TooLarge {
            template: false,
            len: src.len(),
        });
    }
    let (mut brackets, mut max_brackets, mut prefix) = (0usize, 0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    // whether the previous token ends an operand (then `-` is binary, not unary)
    let mut after_operand = false;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
                after_operand = true;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => {
                brackets += 1;
                max_brackets = max_brackets.max(brackets);
                after_operand = false;
            }
            ')' | ']' | '}' => {
                brackets = brackets.saturating_sub(1);
                after_operand = true;
            }
            '-' | '+' if !after_operand => prefix += 1,
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                prefix += 1;
                after_operand = false;
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut word = String::from(c);
                while let Some(&d) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' || d == '.' {
                        word.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                match word.as_str() {
                    "not" | "if" => {
                        prefix += 1;
                        after_operand = false;
                    }
                    "and" | "or" | "in" | "is" | "else" => after_operand = false,
                    _ => after_operand = true,
                }
            }
            c if c.is_whitespace() => {}
            _ => after_operand = false,
        }
    }
    let depth = max_brackets + prefix;
    if depth > MAX_EXPR_DEPTH {
        return Err(ExprError::TooDeep { depth });
    }
    Ok(())
}

/// An expression as a message quotes it: at most 200 characters (a bomb is not echoed whole).
pub fn clipped(src: &str) -> String {
    match src.char_indices().nth(200) {
        Some((i, _)) => format!("{}… ({} bytes)", &src[..i], src.len()),
        None => src.to_string(),
    }
}

/// [`check_depth`] for a template: each `{{ … }}` and `{% … %}` is an expression, and block
/// tags (`{% if %}` … `{% endif %}`) nest too; the text between them is not looked at.
pub fn check_template_depth(src: &str) -> Result<(), ExprError> {
    if src.len() > MAX_EXPR_BYTES {
        return Err(ExprError::TooLarge {
            template: true,
            len: src.len(),
        });
    }
    let (mut blocks, mut max_blocks) = (0usize, 0usize);
    let mut rest = src;
    while let Some(at) = rest.find(['{']) {
        let tail = &rest[at..];
        let close = if tail.starts_with("{{") {
            "}}"
        } else if tail.starts_with("{%") {
            "%}"
        } else {
            rest = &tail[1..];
            continue;
        };
        let Some(end) = tail[2..].find(close) else {
            break;
        };
        let inner =
            tail[2..2 + end].trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        if close == "%}" {
            let tag = inner.split_whitespace().next().unwrap_or("");
            if tag.starts_with("end") {
                blocks = blocks.saturating_sub(1);
            } else if matches!(
                tag,
                "if" | "for" | "macro" | "call" | "filter" | "with" | "block" | "autoescape"
            ) {
                blocks += 1;
                max_blocks = max_blocks.max(blocks);
            }
        }
        check_depth(inner)?;
        rest = &tail[2 + end + 2..];
    }
    if max_blocks > MAX_EXPR_DEPTH {
        return Err(ExprError::TooManyBlocks { blocks: max_blocks });
    }
    Ok(())
}

/// An expression compiled once at load time and reused for every evaluation.
pub type Compiled = std::sync::Arc<minijinja::Expression<'static, 'static>>;

/// Compile an expression to keep, with the dotted variable paths it reads.
pub fn compile(src: &str) -> Result<(Compiled, BTreeSet<String>), ExprError> {
    check_depth(src)?;
    let expr = env().compile_expression_owned(src.to_string())?;
    let vars = expr
        .undeclared_variables(true)
        .into_iter()
        .filter(|v| !is_global(v))
        .collect();
    Ok((std::sync::Arc::new(expr), vars))
}

/// Evaluate a compiled threshold: exactly `true` or `false`.
pub fn eval_compiled_bool(expr: &Compiled, src: &str, ctx: &Value) -> Result<bool, ExprError> {
    eval_compiled_bool_in(expr, src, to_mj(ctx))
}

/// [`eval_compiled_bool`] in a context already converted for the engine (a `for_each` item's:
/// the shared part converted once, not once per item).
pub fn eval_compiled_bool_in(expr: &Compiled, src: &str, ctx: MjValue) -> Result<bool, ExprError> {
    let v = expr.eval(ctx)?;
    if v.is_undefined() {
        return Err(ExprError::Undefined);
    }
    match serde_json::to_value(&v).map_err(|e| ExprError::Encode(e.to_string()))? {
        Value::Bool(b) => Ok(b),
        other => Err(ExprError::NotBool {
            src: src.to_string(),
            got: other,
        }),
    }
}

/// Compile an expression; on success return the dotted variable paths it reads.
pub fn check_expression(src: &str) -> Result<BTreeSet<String>, ExprError> {
    check_depth(src)?;
    let expr = env().compile_expression(src)?;
    Ok(expr
        .undeclared_variables(true)
        .into_iter()
        .filter(|v| !is_global(v))
        .collect())
}

/// Compile a template; on success return the dotted variable paths it reads.
pub fn check_template(src: &str) -> Result<BTreeSet<String>, ExprError> {
    check_template_depth(src)?;
    let t = env().template_from_str(src)?;
    Ok(t.undeclared_variables(true)
        .into_iter()
        .filter(|v| !is_global(v))
        .collect())
}

fn is_global(v: &str) -> bool {
    let root = v.split('.').next().unwrap_or(v);
    GLOBALS.contains(&root)
}

/// minijinja's built-in filters and tests, for "did you mean" on an unknown one.
pub const FILTERS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "bool",
    "capitalize",
    "chain",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "lines",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "split",
    "string",
    "sum",
    "title",
    "tojson",
    "trim",
    "unique",
    "upper",
    "zip",
];
pub const TESTS: &[&str] = &[
    "boolean",
    "defined",
    "divisibleby",
    "endingwith",
    "eq",
    "equalto",
    "escaped",
    "even",
    "false",
    "filter",
    "float",
    "ge",
    "greaterthan",
    "gt",
    "in",
    "int",
    "integer",
    "iterable",
    "le",
    "lessthan",
    "lower",
    "lt",
    "mapping",
    "ne",
    "none",
    "number",
    "odd",
    "safe",
    "sameas",
    "sequence",
    "startingwith",
    "string",
    "test",
    "true",
    "undefined",
    "upper",
];

/// Filters (`x | name`) and tests (`x is name`, `x is not name`) an expression or template uses
/// that the environment does not have: minijinja resolves them only when it evaluates, so
/// without this check a typo would make every verdict `unknown` at run time.
/// Returns `("filter" | "test", name)` pairs.
pub fn unknown_callables(src: &str, template: bool) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let code: Vec<&str> = if template {
        template_code(src)
    } else {
        vec![src]
    };
    for c in code {
        let toks = tokens(c);
        for (i, t) in toks.iter().enumerate() {
            let (what, name) = match t.as_str() {
                "|" => ("filter", toks.get(i + 1)),
                "is" => match toks.get(i + 1).map(String::as_str) {
                    Some("not") => ("test", toks.get(i + 2)),
                    _ => ("test", toks.get(i + 1)),
                },
                _ => continue,
            };
            let Some(name) = name.filter(|n| {
                n.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            }) else {
                continue;
            };
            let probe = format!("n is {what}");
            let known = env()
                .compile_expression(&probe)
                .and_then(|e| e.eval(minijinja::context! { n => name }))
                .map(|v| v.is_true())
                .unwrap_or(true);
            if !known && !out.iter().any(|(w, n)| *w == what && n == name) {
                out.push((what, name.clone()));
            }
        }
    }
    out
}

/// The code inside a template's `{{ … }}` and `{% … %}` blocks.
fn template_code(src: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        let close = match after.chars().next() {
            Some('{') => "}}",
            Some('%') => "%}",
            _ => {
                rest = after;
                continue;
            }
        };
        let body = &after[1..];
        match body.find(close) {
            Some(j) => {
                out.push(&body[..j]);
                rest = &body[j + 2..];
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

/// Identifiers, `|` and other single characters, with string literals skipped.
fn tokens(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '"' {
            while let Some(d) = chars.next() {
                if d == '\\' {
                    chars.next();
                } else if d == c {
                    break;
                }
            }
            out.push("\"\"".into());
        } else if c.is_alphabetic() || c == '_' {
            let mut id = c.to_string();
            while let Some(&d) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    id.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(id);
        } else if c.is_numeric() {
            while chars
                .peek()
                .is_some_and(|d| d.is_alphanumeric() || *d == '.')
            {
                chars.next();
            }
            out.push("0".into());
        } else if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    out
}

pub fn eval(src: &str, ctx: &Value) -> Result<Value, ExprError> {
    eval_in(src, to_mj(ctx))
}

/// [`eval`] in a context already converted for the engine.
pub fn eval_in(src: &str, ctx: MjValue) -> Result<Value, ExprError> {
    check_depth(src)?;
    let expr = env().compile_expression(src)?;
    let v = expr.eval(ctx)?;
    if v.is_undefined() {
        return Err(ExprError::Undefined);
    }
    serde_json::to_value(&v).map_err(|e| ExprError::Encode(e.to_string()))
}

/// Evaluate a threshold: it must give exactly `true` or `false`.
pub fn eval_bool(src: &str, ctx: &Value) -> Result<bool, ExprError> {
    eval_bool_in(src, to_mj(ctx))
}

/// [`eval_bool`] in a context already converted for the engine.
pub fn eval_bool_in(src: &str, ctx: MjValue) -> Result<bool, ExprError> {
    match eval_in(src, ctx)? {
        Value::Bool(b) => Ok(b),
        other => Err(ExprError::NotBool {
            src: src.to_string(),
            got: other,
        }),
    }
}

pub fn render(src: &str, ctx: &Value) -> Result<String, ExprError> {
    render_in(src, to_mj(ctx))
}

/// [`render`] in a context already converted for the engine.
pub fn render_in(src: &str, ctx: MjValue) -> Result<String, ExprError> {
    check_template_depth(src)?;
    Ok(env().render_str(src, ctx)?)
}

/// Render every string inside a JSON value as a template (fix action parameters).
/// A string that is exactly one `{{ expr }}` keeps the expression's type, so
/// `value: "{{ params.workers }}"` renders to the number 8, not the string "8".
pub fn render_value(v: &Value, ctx: &Value) -> Result<Value, ExprError> {
    render_value_in(v, &to_mj(ctx))
}

/// [`render_value`] in a context already converted for the engine.
pub fn render_value_in(v: &Value, ctx: &MjValue) -> Result<Value, ExprError> {
    Ok(match v {
        Value::String(s) => {
            let t = s.trim();
            if let Some(inner) = t.strip_prefix("{{").and_then(|r| r.strip_suffix("}}"))
                && !inner.contains("{{")
                && !inner.contains("}}")
            {
                eval_in(inner.trim(), ctx.clone())?
            } else if s.contains("{{") || s.contains("{%") {
                Value::String(render_in(s, ctx.clone())?)
            } else {
                v.clone()
            }
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| render_value_in(x, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), render_value_in(x, ctx)?)))
                .collect::<Result<_, ExprError>>()?,
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
        let e = eval_bool("1 + 1", &json!({})).unwrap_err();
        assert!(
            matches!(&e, ExprError::NotBool { got, .. } if *got == json!(2)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "`1 + 1` gave 2 where true or false was expected"
        );
        assert!(!e.is_undefined());
    }

    /// The evaluator names the missing value for an undefined read, and quotes the error for
    /// anything else: the two are told apart by variant, not by the message's words.
    #[test]
    fn an_undefined_read_names_what_was_undefined_in_every_build() {
        // minijinja says which name was undefined only in debug mode, on by default in debug
        // builds alone; a release binary printed less than the README shows (found by running
        // the docs blocks against `cargo install`'s binary)
        assert!(env().debug());
        let e = ExprError::from(
            env()
                .compile_expression("gpu.utilization_gpu < 30")
                .unwrap()
                .eval(minijinja::context! { gpu => minijinja::context! {} })
                .unwrap_err(),
        );
        assert!(e.is_undefined());
        assert!(e.to_string().contains("is undefined"), "{e}");
    }

    #[test]
    fn undefined_reads_are_told_from_other_failures() {
        let ctx = json!({"gpu": {"util": "x"}});
        let missing = eval_bool("gpu.temp > 3", &ctx).unwrap_err();
        assert!(missing.is_undefined(), "{missing:?}");
        assert_eq!(eval("gpu.nope", &ctx).unwrap_err(), ExprError::Undefined);
        let typed = eval_bool("gpu.util - 3 > 0", &ctx).unwrap_err();
        assert!(
            matches!(typed, ExprError::Jinja { .. }) && !typed.is_undefined(),
            "{typed:?}"
        );
        let syntax = check_expression("gpu.util >").unwrap_err();
        assert!(
            matches!(
                &syntax,
                ExprError::Jinja {
                    kind: minijinja::ErrorKind::SyntaxError,
                    ..
                }
            ),
            "{syntax:?}"
        );
        assert_eq!(
            syntax.to_string(),
            err_text(&env().compile_expression("gpu.util >").unwrap_err())
        );
        let deep = format!("{}1{}", "(".repeat(70), ")".repeat(70));
        assert_eq!(check_depth(&deep), Err(ExprError::TooDeep { depth: 70 }));
        assert_eq!(
            check_depth(&"x".repeat(MAX_EXPR_BYTES + 1))
                .unwrap_err()
                .to_string(),
            format!(
                "expression too large ({} bytes, the limit is {MAX_EXPR_BYTES}); split it with `let:`",
                MAX_EXPR_BYTES + 1
            )
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
    fn unknown_filters_and_tests_are_found() {
        assert_eq!(
            unknown_callables("f.text | contains('x')", false),
            vec![("filter", "contains".to_string())]
        );
        assert_eq!(
            unknown_callables("x is not definedd and y | length > 0 and 'a|b' in z", false),
            vec![("test", "definedd".to_string())]
        );
        assert!(unknown_callables("x | join(', ') is string", false).is_empty());
        assert_eq!(
            unknown_callables("a | b {{ x | lenght }} {% if y is odd %}{% endif %}", true),
            vec![("filter", "lenght".to_string())]
        );
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
