//! Jsonnet training configs (AllenNLP's `allennlp train config.jsonnet`, their `.libsonnet`
//! pieces) read as the JSON they evaluate to, for the settings a config sets: the subset of the
//! language such configs are written in, read by the language's own rules (the Jsonnet
//! specification, jsonnet.org/ref/spec.html, "Lexing", "Abstract Syntax", "Operators" and
//! "Object-level locals"; google/jsonnet `core/lexer.cpp`, `core/parser.cpp` at v0.20.0):
//!
//! - comments `//`, `#` and `/* */`; strings `"…"`, `'…'` with JSON's escapes, verbatim
//!   `@"…"` / `@'…'`; numbers as JSON's; `null`, `true`, `false`;
//! - `local x = e, f(a) = e; body` (also inside objects, `local x = e,` among the fields);
//! - objects with identifier, string or `[computed]` field names, `:`, `::` (hidden: not in
//!   the output), `:::` (forced visible) and `+:` (the field added to the one it overrides);
//!   arrays; trailing commas;
//! - `+` (numbers, string concatenation with `std.toString` of the other side, array
//!   concatenation, object inheritance with `+:` fields merged), `- * / %`, comparisons,
//!   `&& || !`, unary minus, `if c then a else b`, `e { … }` (the same as `e + { … }`),
//!   `.field` and `[index]`.
//!
//! What a file takes from outside or computes late is not known here and stays unknown (it
//! reads as `null`, never as a default): `import`/`importstr` of another file, `std.extVar`
//! and every other call, `self`, `$` and `super`, a function's result, a name not bound. An
//! object built on an unknown one (`(import "base.jsonnet") + { … }`) is unknown as a whole,
//! since the base may set any key. Array and object comprehensions, `assert`, `error` and
//! `|||` text blocks are not read: such a file is not read at all.

use serde_json::{Map, Value};

/// Deeper nesting than this is not read (a config is a few levels deep; the same 64 levels as
/// JSON, YAML and TOML, docs/safety.md).
const MAX_DEPTH: usize = 64;
/// Larger texts are not read (training configs are kilobytes; the structured-config sniffing
/// limit, [`super::config::MAX_SNIFF_BYTES`]).
const MAX_BYTES: usize = super::config::MAX_SNIFF_BYTES;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Id(String),
    Str(String),
    Num(f64),
    /// punctuation and operators: `{ } [ ] ( ) , ; . = : :: ::: +: +:: +::: + - * / % ! < > <= >= == != && || $`
    P(&'static str),
}

fn lex(text: &str) -> Option<Vec<Tok>> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    const PUNCT: [&str; 31] = [
        "+:::", ":::", "+::", "::", "+:", "<=", ">=", "==", "!=", "&&", "||", "{", "}", "[", "]",
        "(", ")", ",", ";", ".", "=", ":", "+", "-", "*", "/", "%", "!", "$", "<", ">",
    ];
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'#' || (c == b'/' && b.get(i + 1) == Some(&b'/')) {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/")?;
            i += 2 + end + 2;
        } else if c == b'|' && text[i..].starts_with("|||") {
            return None; // text blocks: not read
        } else if c == b'"' || c == b'\'' {
            let (s, n) = string(&text[i..], c, false)?;
            out.push(Tok::Str(s));
            i += n;
        } else if c == b'@' && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
            let (s, n) = string(&text[i + 1..], b[i + 1], true)?;
            out.push(Tok::Str(s));
            i += 1 + n;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if matches!(b.get(i), Some(b'e' | b'E')) {
                let mut j = i + 1;
                if matches!(b.get(j), Some(b'+' | b'-')) {
                    j += 1;
                }
                if b.get(j).is_some_and(u8::is_ascii_digit) {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            out.push(Tok::Num(text[start..i].parse().ok()?));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Id(text[start..i].to_string()));
        } else {
            let p = PUNCT.iter().find(|p| text[i..].starts_with(**p))?;
            out.push(Tok::P(p));
            i += p.len();
        }
    }
    Some(out)
}

/// A string literal starting at `s[0]` (the quote): its value and length. A verbatim string
/// (`@"…"`) has no escapes; a doubled quote stands for one.
fn string(s: &str, q: u8, verbatim: bool) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut it = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = it.next() {
        if c as u32 == q as u32 {
            if verbatim && it.peek().is_some_and(|(_, n)| *n as u32 == q as u32) {
                it.next();
                out.push(c);
                continue;
            }
            return Some((out, i + 1));
        }
        if c == '\\' && !verbatim {
            let (_, e) = it.next()?;
            out.push(match e {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'u' => {
                    let hex: String = (0..4).filter_map(|_| it.next().map(|(_, h)| h)).collect();
                    char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                }
                other => other,
            });
        } else {
            out.push(c);
        }
    }
    None
}

/// A value as evaluated: JSON's, or unknown (see the module doc).
#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<V>),
    Obj(Vec<Field>),
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    /// `:` (inherits the overridden field's), `::` hidden, `:::` forced visible
    vis: Vis,
    plus: bool,
    val: V,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Vis {
    Inherit,
    Hidden,
    Visible,
}

impl V {
    fn to_json(&self) -> Value {
        match self {
            V::Null | V::Unknown => Value::Null,
            V::Bool(b) => Value::Bool(*b),
            V::Num(n) => {
                if n.fract() == 0.0 && n.abs() < 9.0e15 {
                    Value::from(*n as i64)
                } else {
                    serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number)
                }
            }
            V::Str(s) => Value::String(s.clone()),
            V::Arr(a) => Value::Array(a.iter().map(V::to_json).collect()),
            V::Obj(fs) => {
                let mut m = Map::new();
                for f in fs.iter().filter(|f| f.vis != Vis::Hidden) {
                    m.insert(f.name.clone(), f.val.to_json());
                }
                Value::Object(m)
            }
        }
    }

    /// `std.toString`: a string as itself, anything else as its JSON.
    fn to_str(&self) -> Option<String> {
        match self {
            V::Unknown => None,
            V::Str(s) => Some(s.clone()),
            other => Some(other.to_json().to_string()),
        }
    }

    fn field(&self, name: &str) -> V {
        match self {
            V::Obj(fs) => fs
                .iter()
                .find(|f| f.name == name)
                .map_or(V::Unknown, |f| f.val.clone()),
            _ => V::Unknown,
        }
    }
}

/// `a + b` (spec, "Operators": object inheritance with `+:` fields added to the inherited
/// field; string concatenation when either side is a string).
fn plus(a: V, b: V) -> V {
    match (a, b) {
        (V::Unknown, _) | (_, V::Unknown) => V::Unknown,
        (V::Num(x), V::Num(y)) => V::Num(x + y),
        (V::Str(x), y) => y.to_str().map_or(V::Unknown, |y| V::Str(x + &y)),
        (x, V::Str(y)) => x.to_str().map_or(V::Unknown, |x| V::Str(x + &y)),
        (V::Arr(mut x), V::Arr(y)) => {
            x.extend(y);
            V::Arr(x)
        }
        (V::Obj(mut x), V::Obj(y)) => {
            for f in y {
                match x.iter_mut().find(|g| g.name == f.name) {
                    Some(g) => {
                        g.val = if f.plus {
                            plus(std::mem::replace(&mut g.val, V::Null), f.val)
                        } else {
                            f.val
                        };
                        // `::` / `:::` on the new field decide; `:` keeps the inherited one's
                        if f.vis != Vis::Inherit {
                            g.vis = f.vis;
                        }
                    }
                    None => x.push(Field { plus: false, ..f }),
                }
            }
            V::Obj(x)
        }
        _ => V::Unknown,
    }
}

struct P {
    t: Vec<Tok>,
    i: usize,
    env: Vec<(String, V)>,
    depth: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::P(x)) if *x == p)
    }
    fn is_id(&self, id: &str) -> bool {
        matches!(self.peek(), Some(Tok::Id(x)) if x == id)
    }
    fn eat(&mut self, p: &str) -> Option<()> {
        self.is(p).then(|| self.i += 1)
    }
    fn id(&mut self) -> Option<String> {
        match self.peek()? {
            Tok::Id(x) => {
                let x = x.clone();
                self.i += 1;
                Some(x)
            }
            _ => None,
        }
    }
    fn lookup(&self, name: &str) -> V {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(V::Unknown, |(_, v)| v.clone())
    }

    fn expr(&mut self) -> Option<V> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let v = self.expr_inner();
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self) -> Option<V> {
        if self.is_id("local") {
            self.i += 1;
            let mark = self.env.len();
            loop {
                self.bind()?;
                if self.eat(",").is_none() {
                    break;
                }
            }
            self.eat(";")?;
            let v = self.expr()?;
            self.env.truncate(mark);
            return Some(v);
        }
        if self.is_id("if") {
            self.i += 1;
            let c = self.expr()?;
            if !self.is_id("then") {
                return None;
            }
            self.i += 1;
            let a = self.expr()?;
            let b = if self.is_id("else") {
                self.i += 1;
                self.expr()?
            } else {
                V::Null
            };
            return Some(match c {
                V::Bool(true) => a,
                V::Bool(false) => b,
                _ => V::Unknown,
            });
        }
        if self.is_id("function") {
            self.i += 1;
            self.params_and_body()?;
            return Some(V::Unknown);
        }
        if ["assert", "error", "import", "importstr", "importbin"]
            .iter()
            .any(|k| self.is_id(k))
        {
            let k = self.id()?;
            if k.starts_with("import") {
                // another file: not read from here
                if !matches!(self.peek(), Some(Tok::Str(_))) {
                    return None;
                }
                self.i += 1;
                return Some(V::Unknown);
            }
            return None;
        }
        self.binary(0)
    }

    /// `name = expr` or `name(params) = expr` (a function: unknown).
    fn bind(&mut self) -> Option<()> {
        let name = self.id()?;
        if self.is("(") {
            self.eat("(")?;
            self.skip_params()?;
            self.eat("=")?;
            let mark = self.env.len();
            self.expr()?;
            self.env.truncate(mark);
            self.env.push((name, V::Unknown));
            return Some(());
        }
        self.eat("=")?;
        let v = self.expr()?;
        self.env.push((name, v));
        Some(())
    }

    fn skip_params(&mut self) -> Option<()> {
        // `(a, b=1, )` after the `(`: parameter names and defaults, read and dropped
        while !self.is(")") {
            self.id()?;
            if self.eat("=").is_some() {
                self.expr()?;
            }
            if self.eat(",").is_none() {
                break;
            }
        }
        self.eat(")")
    }

    fn params_and_body(&mut self) -> Option<()> {
        self.eat("(")?;
        self.skip_params()?;
        let mark = self.env.len();
        self.expr()?;
        self.env.truncate(mark);
        Some(())
    }

    /// Binary operators by the spec's precedence (weakest first).
    fn binary(&mut self, level: usize) -> Option<V> {
        const LEVELS: [&[&str]; 6] = [
            &["||"],
            &["&&"],
            &["==", "!="],
            &["<", "<=", ">", ">="],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut a = self.binary(level + 1)?;
        while let Some(Tok::P(op)) = self.peek().cloned() {
            if !LEVELS[level].contains(&op) {
                break;
            }
            self.i += 1;
            let b = self.binary(level + 1)?;
            a = op_apply(op, a, b);
        }
        Some(a)
    }

    fn unary(&mut self) -> Option<V> {
        if self.eat("-").is_some() {
            return Some(match self.unary()? {
                V::Num(n) => V::Num(-n),
                _ => V::Unknown,
            });
        }
        if self.eat("+").is_some() {
            return self.unary();
        }
        if self.eat("!").is_some() {
            return Some(match self.unary()? {
                V::Bool(b) => V::Bool(!b),
                _ => V::Unknown,
            });
        }
        let mut v = self.primary()?;
        loop {
            if self.eat(".").is_some() {
                let f = self.id()?;
                v = v.field(&f);
            } else if self.is("[") {
                self.i += 1;
                let k = self.expr()?;
                if self.is(":") {
                    return None; // slices: not read
                }
                self.eat("]")?;
                v = match (&v, k) {
                    (V::Arr(a), V::Num(n)) if n >= 0.0 && n.fract() == 0.0 => {
                        a.get(n as usize).cloned().unwrap_or(V::Unknown)
                    }
                    (V::Obj(_), V::Str(s)) => v.field(&s),
                    _ => V::Unknown,
                };
            } else if self.is("(") {
                // a call: std.* or a local function; its arguments are read, its result not known
                self.i += 1;
                while !self.is(")") {
                    if matches!(self.peek(), Some(Tok::Id(_)))
                        && matches!(self.t.get(self.i + 1), Some(Tok::P("=")))
                    {
                        self.i += 2;
                    }
                    self.expr()?;
                    if self.eat(",").is_none() {
                        break;
                    }
                }
                self.eat(")")?;
                v = V::Unknown;
            } else if self.is("{") {
                let o = self.object()?;
                v = plus(v, o);
            } else {
                return Some(v);
            }
        }
    }

    fn primary(&mut self) -> Option<V> {
        match self.peek()?.clone() {
            Tok::Num(n) => {
                self.i += 1;
                Some(V::Num(n))
            }
            Tok::Str(s) => {
                self.i += 1;
                Some(V::Str(s))
            }
            Tok::Id(id) => {
                self.i += 1;
                Some(match id.as_str() {
                    "null" => V::Null,
                    "true" => V::Bool(true),
                    "false" => V::Bool(false),
                    "self" | "super" | "std" => V::Unknown,
                    "for" | "in" | "then" | "else" | "tailstrict" => return None,
                    _ => self.lookup(&id),
                })
            }
            Tok::P("$") => {
                self.i += 1;
                Some(V::Unknown)
            }
            Tok::P("(") => {
                self.i += 1;
                let v = self.expr()?;
                self.eat(")")?;
                Some(v)
            }
            Tok::P("[") => {
                self.i += 1;
                let mut items = Vec::new();
                while !self.is("]") {
                    items.push(self.expr()?);
                    if self.is_id("for") {
                        return None; // comprehension: not read
                    }
                    if self.eat(",").is_none() {
                        break;
                    }
                }
                self.eat("]")?;
                Some(V::Arr(items))
            }
            Tok::P("{") => self.object(),
            _ => None,
        }
    }

    fn object(&mut self) -> Option<V> {
        self.eat("{")?;
        let mark = self.env.len();
        let mut fields: Vec<Field> = Vec::new();
        while !self.is("}") {
            if self.is_id("local") {
                self.i += 1;
                self.bind()?;
            } else if self.is_id("assert") {
                return None;
            } else {
                let name = match self.peek()?.clone() {
                    Tok::Id(x) => {
                        self.i += 1;
                        Some(x)
                    }
                    Tok::Str(s) => {
                        self.i += 1;
                        Some(s)
                    }
                    Tok::P("[") => {
                        self.i += 1;
                        let k = self.expr()?;
                        self.eat("]")?;
                        if self.is_id("for") {
                            return None;
                        }
                        match k {
                            V::Str(s) => Some(s),
                            V::Null => None, // a null name: no field (spec)
                            // a name computed from what is not known: any key may be it
                            _ => return None,
                        }
                    }
                    _ => return None,
                };
                // a method `f(x): …` is a function field: unknown
                let method = self.is("(");
                if method {
                    self.eat("(")?;
                    self.skip_params()?;
                }
                let (plus, vis) = match self.peek()? {
                    Tok::P(":") => (false, Vis::Inherit),
                    Tok::P("::") => (false, Vis::Hidden),
                    Tok::P(":::") => (false, Vis::Visible),
                    Tok::P("+:") => (true, Vis::Inherit),
                    Tok::P("+::") => (true, Vis::Hidden),
                    Tok::P("+:::") => (true, Vis::Visible),
                    _ => return None,
                };
                self.i += 1;
                let val = self.expr()?;
                if let Some(name) = name {
                    let val = if method { V::Unknown } else { val };
                    fields.retain(|f| f.name != name);
                    fields.push(Field {
                        name,
                        vis,
                        plus,
                        val,
                    });
                }
            }
            if self.eat(",").is_none() {
                break;
            }
        }
        self.eat("}")?;
        self.env.truncate(mark);
        Some(V::Obj(fields))
    }
}

fn op_apply(op: &str, a: V, b: V) -> V {
    if op == "+" {
        return plus(a, b);
    }
    match (op, a, b) {
        (_, V::Unknown, _) | (_, _, V::Unknown) => V::Unknown,
        ("-", V::Num(x), V::Num(y)) => V::Num(x - y),
        ("*", V::Num(x), V::Num(y)) => V::Num(x * y),
        ("/", V::Num(x), V::Num(y)) if y != 0.0 => V::Num(x / y),
        ("%", V::Num(x), V::Num(y)) if y != 0.0 => V::Num(x % y),
        ("==", x, y) => V::Bool(x == y),
        ("!=", x, y) => V::Bool(x != y),
        ("<", V::Num(x), V::Num(y)) => V::Bool(x < y),
        ("<=", V::Num(x), V::Num(y)) => V::Bool(x <= y),
        (">", V::Num(x), V::Num(y)) => V::Bool(x > y),
        (">=", V::Num(x), V::Num(y)) => V::Bool(x >= y),
        ("&&", V::Bool(x), V::Bool(y)) => V::Bool(x && y),
        ("||", V::Bool(x), V::Bool(y)) => V::Bool(x || y),
        _ => V::Unknown,
    }
}

/// The first token of a text, past comments: a Jsonnet config opens with `local` or `{`.
fn opens_like_jsonnet(text: &str) -> bool {
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if rest.starts_with("//") || rest.starts_with('#') {
            rest = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    rest.starts_with('{')
        || rest
            .strip_prefix("local")
            .is_some_and(|r| r.starts_with(char::is_whitespace))
}

/// A Jsonnet config as the JSON it evaluates to (unknown parts `null`, see the module doc), or
/// None when the text is not one: it does not open with `local` or `{`, uses what is not read
/// here, is not an object, or the whole object is unknown.
pub fn evaluate(text: &str) -> Option<Value> {
    if text.len() > MAX_BYTES || !opens_like_jsonnet(text) {
        return None;
    }
    let t = lex(text)?;
    let mut p = P {
        t,
        i: 0,
        env: Vec::new(),
        depth: 0,
    };
    let v = p.expr()?;
    if p.i != p.t.len() {
        return None;
    }
    match v {
        V::Obj(_) => {
            let j = v.to_json();
            j.as_object().is_some_and(|m| !m.is_empty()).then_some(j)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declutr_s_allennlp_config_evaluates_with_its_locals() {
        // JohnGiorgi/DeCLUTR training_config/declutr_small.jsonnet at 7b4c146 (h132)
        let v = evaluate(&crate::test_corpus(
            "h132_jsonnet_declutr119_allennlp_loader_no_workers.jsonnet",
        ))
        .unwrap();
        assert_eq!(
            v["data_loader"],
            json!({"batch_size": 4, "drop_last": true})
        );
        assert_eq!(v["dataset_reader"]["max_span_len"], json!(512));
        assert_eq!(v["dataset_reader"]["tokenizer"]["max_length"], json!(510));
        assert_eq!(
            v["model"]["text_field_embedder"]["token_embedders"]["tokens"]["model_name"],
            json!("distilroberta-base")
        );
        assert_eq!(v["train_data_path"], json!(null));
        assert_eq!(v["trainer"]["num_epochs"], json!(1));
        // the regex string's backslashes are JSON escapes: `\\.` reads as `\.`
        assert!(
            v["trainer"]["optimizer"]["parameter_groups"][0][0][0]
                .as_str()
                .unwrap()
                .contains("\\.+")
        );
    }

    #[test]
    fn the_fursovia_allennlp_fragment_reads_its_workers() {
        // fursovia/dpeter configs/common/basic.jsonnet (the corpus' healthy AllenNLP file)
        let v = evaluate(&crate::test_corpus("allennlp_jsonnet_20_workers.jsonnet")).unwrap();
        assert_eq!(v["data_loader"]["num_workers"], json!(20));
        assert_eq!(v["data_loader"]["pin_memory"], json!(true));
        assert_eq!(v["data_loader"]["batches_per_epoch"], json!(150));
    }

    #[test]
    fn the_language_s_operators_and_fields() {
        let v = evaluate(
            "local a = 2, b = a * 3 + 1; // seven\n{ x: b, 'y z': a - 5, h:: 1, s: 'p' + a, \
             arr: [1, 2] + [3], n: if b > 6 then 'big' else 'small', o: { k: 1, m: 2 } { m+: 3 }, \
             local l = 4, uses_l: l / 2, v: @'c:\\dir', e: \"\\u0041\\n\", }",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"x": 7, "y z": -3, "s": "p2", "arr": [1, 2, 3], "n": "big",
                   "o": {"k": 1, "m": 5}, "uses_l": 2, "v": "c:\\dir", "e": "A\n"})
        );
    }

    #[test]
    fn what_comes_from_outside_stays_unknown() {
        // an extVar, a call, self and a function's result: null, never a default
        let v = evaluate(
            "local w = std.parseInt(std.extVar('WORKERS'));\n{ data_loader: { num_workers: w, \
             batch_size: self.n, f: std.length([1]) }, g(x):: x, h: $.data_loader }",
        )
        .unwrap();
        assert_eq!(v["data_loader"]["num_workers"], json!(null));
        assert_eq!(v["data_loader"]["batch_size"], json!(null));
        assert_eq!(v["h"], json!(null));
        assert!(v.get("g").is_none());
        // an object built on an imported one is unknown as a whole: not read
        assert_eq!(
            evaluate("local c = import 'common.jsonnet';\nc + { a: 1 }"),
            None
        );
        assert_eq!(
            evaluate("{ base: (import 'x.libsonnet') { a: 1 }, b: 2 }").unwrap(),
            json!({"base": null, "b": 2})
        );
    }

    #[test]
    fn nesting_past_the_limit_is_not_read() {
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(evaluate(&format!("{{ a: {deep} }}")), None);
        let ok = format!("{}1{}", "(".repeat(20), ")".repeat(20));
        assert_eq!(evaluate(&format!("{{ a: {ok} }}")), Some(json!({"a": 1})));
    }

    #[test]
    fn what_is_not_read_is_not_taken_for_a_config() {
        for t in [
            // comprehensions, assertions, text blocks
            "{ a: [x for x in [1, 2]] }",
            "{ [k]: 1 for k in ['a'] }",
            "local x = 1; assert x > 0; { a: x }",
            "{ a: |||\n  text\n||| }",
            // not Jsonnet's opening: prose, YAML, a Python dict assignment
            "the local shop opened {today}",
            "data_loader:\n  num_workers: 0\n",
            "cfg = { 'a': 1 }",
            // an unfinished object, a bare value, an empty object
            "{ a: 1",
            "local a = 1; a",
            "{}",
        ] {
            assert_eq!(evaluate(t), None, "{t}");
        }
    }
}
