//! Python source as written: the DataLoader calls, DDP/FSDP constructors, config dicts
//! (`train_dataloader = dict(num_workers=2, …)`), attribute assignments
//! (`cfg.DATALOADER.NUM_WORKERS = 2`) and argparse defaults a training script holds, and an
//! editor that changes one keyword argument or one assignment in place.
//!
//! This is a tokenizer, not a parser: it skips strings and comments, balances brackets and
//! reads keyword arguments, which is what finding a setting needs. A value is judged only when
//! it is a literal, a small integer expression of literals, a module-level constant, an
//! `args.NAME` whose argparse default is in the same file, or a parameter of a `def` (its
//! default, unless the command line or a caller sets it); everything else is reported as
//! "cannot judge" with the expression, never guessed.
//!
//! Key syntax (what `config.set` edits in a `.py` file): `CALLEE@LINE.KWARG` for a keyword
//! argument of the call whose name starts on LINE (inserted when absent), `def NAME@LINE.PARAM`
//! for the default of a parameter of the function defined on LINE, `=TARGET@LINE`
//! for the right-hand side of an assignment on LINE, and `{KEY}@LINE` for the value of a
//! dict-literal entry `'KEY': …` on LINE.

use super::syntax::{self, Lang, Refusal};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name,
    Num,
    Str,
    Op,
    /// end of a logical line (a newline outside brackets)
    Eol,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Tok,
    start: usize,
    end: usize,
}

fn tokenize(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth: i32 = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'\\' && b.get(i + 1) == Some(&b'\n') {
            i += 2;
            continue;
        }
        if c == b'\n' {
            if depth <= 0 {
                out.push(Token {
                    kind: Tok::Eol,
                    start: i,
                    end: i + 1,
                });
            }
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // string literal, with an optional prefix (r, b, f, rb, …)
        let mut j = i;
        while j < b.len() && j - i < 2 && b"rRbBfFuU".contains(&b[j]) {
            j += 1;
        }
        if j < b.len()
            && (b[j] == b'"' || b[j] == b'\'')
            && (j == i || i == 0 || !is_ident(b[i - 1]))
        {
            let q = b[j];
            let triple = b.len() >= j + 3 && b[j + 1] == q && b[j + 2] == q;
            let raw = b[i..j].iter().any(|c| *c == b'r' || *c == b'R');
            let mut k = j + if triple { 3 } else { 1 };
            loop {
                if k >= b.len() {
                    break;
                }
                if b[k] == b'\\' && !raw {
                    k += 2;
                    continue;
                }
                if b[k] == b'\\' && raw {
                    k += 2;
                    continue;
                }
                if triple {
                    if b[k] == q && b.get(k + 1) == Some(&q) && b.get(k + 2) == Some(&q) {
                        k += 3;
                        break;
                    }
                } else if b[k] == q {
                    k += 1;
                    break;
                } else if b[k] == b'\n' {
                    break;
                }
                k += 1;
            }
            let k = k.min(b.len());
            out.push(Token {
                kind: Tok::Str,
                start: i,
                end: k,
            });
            i = k;
            continue;
        }
        if is_ident(c) && !c.is_ascii_digit() {
            let mut k = i;
            while k < b.len() && is_ident(b[k]) {
                k += 1;
            }
            out.push(Token {
                kind: Tok::Name,
                start: i,
                end: k,
            });
            i = k;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut k = i;
            while k < b.len()
                && (b[k].is_ascii_alphanumeric()
                    || b[k] == b'.'
                    || b[k] == b'_'
                    || ((b[k] == b'+' || b[k] == b'-') && matches!(b[k - 1], b'e' | b'E')))
            {
                k += 1;
            }
            out.push(Token {
                kind: Tok::Num,
                start: i,
                end: k,
            });
            i = k;
            continue;
        }
        // operators: the two-character ones that matter are `==`, `**`, `//`, `!=`, `<=`, `>=`
        let two = if i + 1 < b.len() { &src[i..i + 2] } else { "" };
        let len = if [
            "==", "**", "//", "!=", "<=", ">=", "->", ":=", "+=", "-=", "*=",
        ]
        .contains(&two)
        {
            2
        } else {
            // a UTF-8 character outside the ASCII range: step over it whole
            src[i..].chars().next().map_or(1, char::len_utf8)
        };
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        out.push(Token {
            kind: Tok::Op,
            start: i,
            end: i + len,
        });
        i += len;
    }
    out.push(Token {
        kind: Tok::Eol,
        start: src.len(),
        end: src.len(),
    });
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// One argument of a call: `name=value` or a positional `value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: Option<String>,
    pub value: String,
    /// byte range of the value text
    pub value_span: (usize, usize),
}

/// A call `a.b.Callee(args)` in the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// the dotted name as written (`torch.utils.data.DataLoader`)
    pub name: String,
    /// its last part (`DataLoader`)
    pub callee: String,
    /// 1-based line of the callee name
    pub line: usize,
    /// byte offsets of `(` and `)`
    pub open: usize,
    pub close: usize,
    pub args: Vec<Arg>,
    /// the name this call is assigned to (`train_loader = DataLoader(...)`), or the keyword
    /// it is passed as (`train_dataloader=dict(...)`)
    pub assigned_to: Option<String>,
    /// `**kwargs` or `*args` among the arguments: a keyword not written may still be passed
    pub has_splat: bool,
}

impl Call {
    pub fn kwarg(&self, name: &str) -> Option<&Arg> {
        self.args.iter().find(|a| a.name.as_deref() == Some(name))
    }
}

/// A simple assignment `target = value` at the start of a logical line.
#[derive(Debug, Clone, PartialEq)]
pub struct Assign {
    pub target: String,
    pub value: String,
    pub value_span: (usize, usize),
    pub line: usize,
    /// `name: type = value` indented under a `class`: a field default of a config class
    /// (dataclass, pydantic model), which the run's config usually sets
    pub class_field: bool,
}

/// An entry `'key': value` of a dict literal (`CFG = {'train': {'num_workers': 2}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct DictEntry {
    pub key: String,
    /// the enclosing keys, outermost first, starting with the name the dict is assigned to
    pub path: Vec<String>,
    pub value: String,
    pub value_span: (usize, usize),
    pub line: usize,
}

/// A parameter of a `def`, and its default (`num_workers: int = 0` -> `0`).
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub default: Option<Arg>,
}

/// A function definition: `def build_loader(ds, batch_size, num_workers=0):`.
#[derive(Debug, Clone, PartialEq)]
pub struct Def {
    pub name: String,
    /// the class whose body holds it (`MNISTDataModule` for its `__init__`)
    pub class: Option<String>,
    /// 1-based line of `def`, and the last line of its body
    pub line: usize,
    pub end_line: usize,
    pub params: Vec<Param>,
}

impl Def {
    pub fn param(&self, name: &str) -> Option<(usize, &Param)> {
        self.params.iter().enumerate().find(|(_, p)| p.name == name)
    }
}

/// What a Python file holds that matters for the data pipeline.
#[derive(Debug, Clone, Default)]
pub struct Module {
    pub calls: Vec<Call>,
    pub assigns: Vec<Assign>,
    pub dict_entries: Vec<DictEntry>,
    pub defs: Vec<Def>,
}

impl Module {
    /// The innermost `def` whose body holds `line`.
    pub fn def_at(&self, line: usize) -> Option<&Def> {
        self.defs
            .iter()
            .filter(|d| d.line < line && line <= d.end_line)
            .max_by_key(|d| d.line)
    }
}

fn indent_of(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The enclosing class of an indented line, and the last line of the block opened on `line`.
fn block_of(src: &str, line: usize) -> (Option<String>, usize) {
    let lines: Vec<&str> = src.lines().collect();
    let Some(l) = lines.get(line.wrapping_sub(1)) else {
        return (None, line);
    };
    let ind = indent_of(l);
    let code = |x: &&str| !x.trim().is_empty() && !x.trim_start().starts_with('#');
    let class = if ind == 0 {
        None
    } else {
        lines[..line - 1]
            .iter()
            .rev()
            .filter(|x| code(x))
            .find(|x| indent_of(x) < ind)
            .and_then(|x| x.trim_start().strip_prefix("class "))
            .map(|r| {
                r.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
    };
    // the body: every following line indented deeper (blank lines and comments included)
    let mut end = line;
    for (i, x) in lines.iter().enumerate().skip(line) {
        if !code(x) {
            continue;
        }
        // a signature's closing line `) -> X:` still belongs to the def
        if indent_of(x) <= ind && !x.trim_start().starts_with(')') {
            break;
        }
        end = i + 1;
    }
    (class, end)
}

fn read_def(src: &str, toks: &[Token], at: usize) -> Option<Def> {
    let text = |t: &Token| &src[t.start..t.end];
    let name_t = toks.get(at + 1).filter(|t| t.kind == Tok::Name)?;
    let open = at + 2;
    (toks.get(open).map(&text) == Some("(")).then_some(())?;
    let mut depth = 0;
    let mut k = open;
    let mut segs: Vec<(usize, usize)> = Vec::new();
    let mut start = open + 1;
    loop {
        let t = toks.get(k)?;
        let s = text(t);
        if t.kind == Tok::Op {
            match s {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        segs.push((start, k));
                        break;
                    }
                }
                "," if depth == 1 => {
                    segs.push((start, k));
                    start = k + 1;
                }
                _ => {}
            }
        }
        k += 1;
    }
    let mut params = Vec::new();
    for (a, z) in segs {
        let mut a = a;
        while a < z && matches!(text(&toks[a]), "*" | "**" | "/") {
            a += 1;
        }
        if a >= z || toks[a].kind != Tok::Name {
            continue;
        }
        let name = text(&toks[a]).to_string();
        // `=` at this parameter's own depth
        let mut d = 0;
        let mut eq = None;
        for (j, t) in toks.iter().enumerate().take(z).skip(a + 1) {
            match text(t) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => d -= 1,
                "=" if d == 0 => {
                    eq = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let default = eq.filter(|e| e + 1 < z).map(|e| {
            let (s, e2) = (toks[e + 1].start, toks[z - 1].end);
            Arg {
                name: Some(name.clone()),
                value: src[s..e2].to_string(),
                value_span: (s, e2),
            }
        });
        params.push(Param { name, default });
    }
    let line = line_of(src, toks[at].start);
    let (class, end_line) = block_of(src, line);
    Some(Def {
        name: text(name_t).to_string(),
        class,
        line,
        end_line,
        params,
    })
}

struct DictFrame {
    /// this dict's key in its parent (or the name it is assigned to); None for `(`/`[`
    seg: Option<String>,
    is_dict: bool,
    /// the entry being read: key and the index of its value's first token
    entry: Option<(String, usize, usize)>,
}

/// The `'key': value` entries of every dict literal, with the keys that enclose them.
fn dict_entries(src: &str, toks: &[Token]) -> Vec<DictEntry> {
    let text = |t: &Token| &src[t.start..t.end];
    let mut out = Vec::new();
    let mut stack: Vec<DictFrame> = Vec::new();
    let finish =
        |f: &mut DictFrame, end: usize, stack_segs: Vec<String>, out: &mut Vec<DictEntry>| {
            if let Some((key, first, line)) = f.entry.take()
                && end > first
            {
                let (a, z) = (toks[first].start, toks[end - 1].end);
                out.push(DictEntry {
                    key,
                    path: stack_segs,
                    value: src[a..z].to_string(),
                    value_span: (a, z),
                    line,
                });
            }
        };
    let segs = |stack: &[DictFrame]| -> Vec<String> {
        stack
            .iter()
            .filter(|f| f.is_dict)
            .filter_map(|f| f.seg.clone())
            .collect()
    };
    for (k, t) in toks.iter().enumerate() {
        let s = text(t);
        if t.kind == Tok::Op && matches!(s, "{" | "(" | "[") {
            // the key this bracket is the value of, or the name it is assigned to
            let seg = match stack.last() {
                Some(DictFrame {
                    entry: Some((key, first, _)),
                    ..
                }) if *first == k => Some(key.clone()),
                _ if k >= 2 && text(&toks[k - 1]) == "=" && toks[k - 2].kind == Tok::Name => {
                    Some(text(&toks[k - 2]).to_string())
                }
                _ => None,
            };
            stack.push(DictFrame {
                seg,
                is_dict: s == "{",
                entry: None,
            });
            continue;
        }
        if t.kind == Tok::Op && matches!(s, "}" | ")" | "]") {
            let segs_now = segs(&stack);
            if let Some(mut f) = stack.pop() {
                if f.is_dict {
                    finish(&mut f, k, segs_now, &mut out);
                }
            }
            continue;
        }
        if t.kind == Tok::Eol && stack.is_empty() {
            continue;
        }
        let Some(top) = stack.last() else { continue };
        if !top.is_dict {
            continue;
        }
        if t.kind == Tok::Op && s == "," {
            let segs_now = segs(&stack);
            if let Some(f) = stack.last_mut() {
                finish(f, k, segs_now, &mut out);
            }
            continue;
        }
        if top.entry.is_none()
            && t.kind == Tok::Str
            && toks.get(k + 1).is_some_and(|n| text(n) == ":")
            && let Some(key) = string_literal(s)
        {
            let line = line_of(src, t.start);
            if let Some(f) = stack.last_mut() {
                f.entry = Some((key, k + 2, line));
            }
        }
    }
    out
}

fn line_of(src: &str, at: usize) -> usize {
    src[..at.min(src.len())]
        .bytes()
        .filter(|c| *c == b'\n')
        .count()
        + 1
}

/// Read the calls and assignments of a Python source.
pub fn scan(src: &str) -> Module {
    let toks = tokenize(src);
    let text = |t: &Token| &src[t.start..t.end];
    let mut m = Module::default();
    let mut i = 0;
    let mut line_start = true;
    while i < toks.len() {
        let t = &toks[i];
        if t.kind == Tok::Eol {
            line_start = true;
            i += 1;
            continue;
        }
        // assignment at the start of a logical line: dotted/subscripted target, then `=`
        if line_start && t.kind == Tok::Name {
            let mut j = i;
            let mut ok = true;
            while j < toks.len() && toks[j].kind != Tok::Eol {
                let s = text(&toks[j]);
                if s == "=" || s == ":" {
                    break;
                }
                if !(toks[j].kind == Tok::Name
                    || toks[j].kind == Tok::Str
                    || toks[j].kind == Tok::Num
                    || s == "."
                    || s == "["
                    || s == "]")
                {
                    ok = false;
                    break;
                }
                j += 1;
            }
            // annotated `x: int = 3`: skip the annotation
            let annotated = ok && j < toks.len() && text(&toks[j]) == ":";
            if annotated {
                let mut k = j + 1;
                while k < toks.len() && toks[k].kind != Tok::Eol && text(&toks[k]) != "=" {
                    k += 1;
                }
                j = k;
            }
            if ok && j > i && j < toks.len() && text(&toks[j]) == "=" {
                let target: String = toks[i..j]
                    .iter()
                    .take_while(|t| text(t) != ":")
                    .map(&text)
                    .collect();
                let mut k = j + 1;
                while k < toks.len() && toks[k].kind != Tok::Eol {
                    k += 1;
                }
                if k > j + 1 {
                    let (a, z) = (toks[j + 1].start, toks[k - 1].end);
                    let line = line_of(src, t.start);
                    m.assigns.push(Assign {
                        class_field: annotated
                            && !target.contains(['.', '['])
                            && in_class_body(src, line),
                        target,
                        value: src[a..z].to_string(),
                        value_span: (a, z),
                        line,
                    });
                }
            }
        }
        line_start = false;
        if t.kind == Tok::Name
            && text(t) == "def"
            && let Some(d) = read_def(src, &toks, i)
        {
            m.defs.push(d);
        }
        // a call: NAME(.NAME)* `(` not preceded by `def`/`class`
        if t.kind == Tok::Name
            && !(i > 0 && toks[i - 1].kind == Tok::Op && text(&toks[i - 1]) == ".")
        {
            let mut j = i;
            while j + 2 < toks.len() && text(&toks[j + 1]) == "." && toks[j + 2].kind == Tok::Name {
                j += 2;
            }
            let prev = if i > 0 { text(&toks[i - 1]) } else { "" };
            if j + 1 < toks.len() && text(&toks[j + 1]) == "(" && prev != "def" && prev != "class" {
                if let Some(call) = read_call(src, &toks, i, j) {
                    m.calls.push(call);
                }
            }
        }
        i += 1;
    }
    m.dict_entries = dict_entries(src, &toks);
    m
}

/// Is the (indented) line `line` inside a `class` body: the nearest less-indented line above
/// it opens a class?
fn in_class_body(src: &str, line: usize) -> bool {
    let lines: Vec<&str> = src.lines().collect();
    let Some(l) = lines.get(line.wrapping_sub(1)) else {
        return false;
    };
    let indent = l.len() - l.trim_start().len();
    if indent == 0 {
        return false;
    }
    lines[..line - 1]
        .iter()
        .rev()
        .filter(|x| !x.trim().is_empty() && !x.trim_start().starts_with('#'))
        .find(|x| x.len() - x.trim_start().len() < indent)
        .is_some_and(|x| x.trim_start().starts_with("class "))
}

fn read_call(src: &str, toks: &[Token], first: usize, last: usize) -> Option<Call> {
    let text = |t: &Token| &src[t.start..t.end];
    let open_i = last + 1;
    let mut depth = 0;
    let mut k = open_i;
    let mut args = Vec::new();
    let mut arg_start = open_i + 1;
    let mut has_splat = false;
    let close;
    loop {
        let t = toks.get(k)?;
        let s = text(t);
        if t.kind == Tok::Op {
            match s {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        close = k;
                        break;
                    }
                }
                "," if depth == 1 => {
                    push_arg(src, toks, arg_start, k, &mut args, &mut has_splat);
                    arg_start = k + 1;
                }
                _ => {}
            }
        }
        k += 1;
    }
    push_arg(src, toks, arg_start, close, &mut args, &mut has_splat);
    let name: String = toks[first..=last].iter().map(&text).collect();
    let callee = text(&toks[last]).to_string();
    // `x = Call(` or `x=Call(` (keyword) before the call
    let assigned_to = if first >= 2 && text(&toks[first - 1]) == "=" {
        let mut s = first - 1;
        while s >= 1 && (toks[s - 1].kind == Tok::Name || text(&toks[s - 1]) == ".") {
            s -= 1;
        }
        Some(toks[s..first - 1].iter().map(&text).collect())
    } else {
        None
    };
    Some(Call {
        name,
        callee,
        line: line_of(src, toks[first].start),
        open: toks[open_i].start,
        close: toks[close].start,
        args,
        assigned_to,
        has_splat,
    })
}

fn push_arg(src: &str, toks: &[Token], a: usize, z: usize, args: &mut Vec<Arg>, splat: &mut bool) {
    if a >= z {
        return;
    }
    let text = |t: &Token| &src[t.start..t.end];
    let first = text(&toks[a]);
    if first == "*" || first == "**" {
        *splat = true;
        return;
    }
    let (name, vs) = if z - a >= 2 && toks[a].kind == Tok::Name && text(&toks[a + 1]) == "=" {
        (Some(first.to_string()), a + 2)
    } else {
        (None, a)
    };
    if vs >= z {
        return;
    }
    let (s, e) = (toks[vs].start, toks[z - 1].end);
    args.push(Arg {
        name,
        value: src[s..e].to_string(),
        value_span: (s, e),
    });
}

/// A judged Python value.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    Known(Value),
    /// the expression, and why it cannot be judged
    Unjudged(String),
}

/// Each `add_argument` call of a script: its dest (from `dest=`, else the first `--long` flag,
/// else the first flag), its option strings and the call itself.
fn argparse_calls(m: &Module) -> impl Iterator<Item = (String, Vec<String>, &Call)> {
    m.calls
        .iter()
        .filter(|c| c.callee == "add_argument")
        .filter_map(|c| {
            let flags: Vec<String> = c
                .args
                .iter()
                .filter(|a| a.name.is_none())
                .filter_map(|a| string_literal(&a.value))
                .collect();
            let dest = c
                .kwarg("dest")
                .and_then(|a| string_literal(&a.value))
                .or_else(|| {
                    flags
                        .iter()
                        .find(|f| f.starts_with("--"))
                        .or_else(|| flags.first())
                        .map(|f| f.trim_start_matches('-').replace('-', "_"))
                })?;
            Some((dest, flags, c))
        })
}

/// The argparse options of a script: dest -> (default expression, line of the add_argument call).
pub fn argparse_defaults(m: &Module) -> BTreeMap<String, (Option<Arg>, usize)> {
    argparse_calls(m)
        .map(|(d, _, c)| (d, (c.kwarg("default").cloned(), c.line)))
        .collect()
}

/// The option strings of each argparse dest (`workers` -> [`-j`, `--workers`]).
pub fn argparse_flags(m: &Module) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (d, flags, _) in argparse_calls(m) {
        out.entry(d).or_default().extend(flags);
    }
    out
}

/// `'x'` or `"x"` (no prefix but r/u) -> x.
pub fn string_literal(s: &str) -> Option<String> {
    let s = s.trim();
    let s = s.strip_prefix(['r', 'u', 'R', 'U']).unwrap_or(s);
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return Some(inner.to_string());
        }
    }
    None
}

/// Judge an expression: literals, `True`/`False`/`None`, integer arithmetic of literals
/// (`+ - * //`, parentheses, `min`/`max`), module constants from `consts`.
pub fn eval(expr: &str, consts: &BTreeMap<String, Value>) -> PyValue {
    let e = expr.trim();
    let unjudged = || PyValue::Unjudged(e.to_string());
    match e {
        "True" => return PyValue::Known(json!(true)),
        "False" => return PyValue::Known(json!(false)),
        "None" => return PyValue::Known(Value::Null),
        _ => {}
    }
    if let Some(s) = string_literal(e) {
        return PyValue::Known(json!(s));
    }
    if let Some(v) = consts.get(e) {
        return PyValue::Known(v.clone());
    }
    match int_expr(e, consts) {
        Some(n) => PyValue::Known(json!(n)),
        None => match e.replace('_', "").parse::<f64>() {
            Ok(f) if e.contains('.') => PyValue::Known(json!(f)),
            _ => unjudged(),
        },
    }
}

fn int_expr(e: &str, consts: &BTreeMap<String, Value>) -> Option<i64> {
    // a tiny precedence-climbing evaluator over the tokens of `e`
    let toks: Vec<String> = tokenize(e)
        .into_iter()
        .filter(|t| t.kind != Tok::Eol)
        .map(|t| e[t.start..t.end].to_string())
        .collect();
    let mut pos = 0;
    let v = sum(&toks, &mut pos, consts)?;
    (pos == toks.len()).then_some(v)
}

fn sum(t: &[String], p: &mut usize, c: &BTreeMap<String, Value>) -> Option<i64> {
    let mut v = product(t, p, c)?;
    while let Some(op) = t.get(*p).map(String::as_str) {
        match op {
            "+" => {
                *p += 1;
                v = v.checked_add(product(t, p, c)?)?;
            }
            "-" => {
                *p += 1;
                v = v.checked_sub(product(t, p, c)?)?;
            }
            _ => break,
        }
    }
    Some(v)
}

fn product(t: &[String], p: &mut usize, c: &BTreeMap<String, Value>) -> Option<i64> {
    let mut v = atom(t, p, c)?;
    while let Some(op) = t.get(*p).map(String::as_str) {
        match op {
            "*" => {
                *p += 1;
                v = v.checked_mul(atom(t, p, c)?)?;
            }
            "//" => {
                *p += 1;
                let d = atom(t, p, c)?;
                v = v.checked_div_euclid(d)?;
            }
            _ => break,
        }
    }
    Some(v)
}

fn atom(t: &[String], p: &mut usize, c: &BTreeMap<String, Value>) -> Option<i64> {
    let s = t.get(*p)?.clone();
    *p += 1;
    if s == "(" {
        let v = sum(t, p, c)?;
        (t.get(*p)? == ")").then(|| *p += 1)?;
        return Some(v);
    }
    if s == "-" {
        return atom(t, p, c).map(|v| -v);
    }
    if (s == "min" || s == "max") && t.get(*p).map(String::as_str) == Some("(") {
        *p += 1;
        let mut vals = vec![sum(t, p, c)?];
        while t.get(*p).map(String::as_str) == Some(",") {
            *p += 1;
            vals.push(sum(t, p, c)?);
        }
        (t.get(*p)? == ")").then(|| *p += 1)?;
        return if s == "min" {
            vals.into_iter().min()
        } else {
            vals.into_iter().max()
        };
    }
    if let Ok(n) = s.replace('_', "").parse::<i64>() {
        return Some(n);
    }
    c.get(&s).and_then(Value::as_i64)
}

/// Module-level constants: `NAME = literal` (top level only: no indentation).
pub fn constants(src: &str, m: &Module) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for a in &m.assigns {
        let line_text = src.lines().nth(a.line - 1).unwrap_or("");
        if line_text.starts_with(char::is_whitespace) || a.target.contains(['.', '[']) {
            continue;
        }
        if let PyValue::Known(v) = eval(&a.value, &out) {
            out.insert(a.target.clone(), v);
        }
    }
    out
}

/// Python spelling of a JSON value.
pub fn py_literal(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A parsed Python edit key.
#[derive(Debug, Clone, PartialEq)]
pub enum PyKey {
    /// `CALLEE@LINE.KWARG`
    Kwarg {
        callee: String,
        line: usize,
        kwarg: String,
    },
    /// `=TARGET@LINE`
    Assign { target: String, line: usize },
    /// `{KEY}@LINE`: the value of the dict-literal entry `'KEY': …` on LINE
    DictEntry { key: String, line: usize },
    /// `def NAME@LINE.PARAM`: the default of a parameter of the function defined on LINE
    Param {
        def: String,
        line: usize,
        param: String,
    },
}

pub fn parse_key(key: &str) -> Option<PyKey> {
    if let Some(rest) = key.strip_prefix("def ") {
        let (name, rest) = rest.split_once("@L")?;
        let (line, param) = rest.split_once('.')?;
        return Some(PyKey::Param {
            def: name.to_string(),
            line: line.parse().ok()?,
            param: param.to_string(),
        });
    }
    if let Some(rest) = key.strip_prefix('{') {
        let (k, line) = rest.rsplit_once("}@L")?;
        return Some(PyKey::DictEntry {
            key: k.to_string(),
            line: line.parse().ok()?,
        });
    }
    if let Some(rest) = key.strip_prefix('=') {
        let (target, line) = rest.rsplit_once("@L")?;
        return Some(PyKey::Assign {
            target: target.to_string(),
            line: line.parse().ok()?,
        });
    }
    let (callee, rest) = key.split_once("@L")?;
    let (line, kwarg) = rest.split_once('.')?;
    Some(PyKey::Kwarg {
        callee: callee.to_string(),
        line: line.parse().ok()?,
        kwarg: kwarg.to_string(),
    })
}

pub fn kwarg_key(call: &Call, kwarg: &str) -> String {
    format!("{}@L{}.{kwarg}", call.callee, call.line)
}

pub fn param_key(d: &Def, param: &str) -> String {
    format!("def {}@L{}.{param}", d.name, d.line)
}

fn find_param<'a>(m: &'a Module, def: &str, line: usize, param: &str) -> Option<&'a Arg> {
    m.defs
        .iter()
        .find(|d| d.name == def && d.line == line)?
        .param(param)?
        .1
        .default
        .as_ref()
}

pub fn dict_key(e: &DictEntry) -> String {
    format!("{{{}}}@L{}", e.key, e.line)
}

pub fn assign_key(a: &Assign) -> String {
    format!("={}@L{}", a.target, a.line)
}

/// Set one keyword argument or assignment; every other byte stays as it was. An absent
/// keyword argument is inserted before the call's `)` (on the last argument's line, so line
/// numbers of other keys do not move). Every edit is proven on the Python grammar's tree
/// ([`super::syntax::check_edit`]): the one value changes, every other token stays.
pub fn set(src: &str, key: &str, value: &Value) -> Result<String, String> {
    set_checked(src, key, value).map_err(|e| e.to_string())
}

/// [`set`], saying whether a refusal is an error in the key ([`Refusal::Invalid`]) or an edit
/// that cannot be proven exact ([`Refusal::Unproven`], left to the person).
pub fn set_checked(src: &str, key: &str, value: &Value) -> Result<String, Refusal> {
    let (range, with) = edit_of(src, key, value)?;
    if src[range.clone()] == with {
        return Ok(src.to_string());
    }
    syntax::check_edit(Lang::Python, src, range, &with)
        .map_err(|why| Refusal::Unproven(format!("`{key}`: {why}")))
}

/// The bytes a key's edit replaces, and what goes there.
fn edit_of(src: &str, key: &str, value: &Value) -> Result<(Range<usize>, String), Refusal> {
    let k = parse_key(key).ok_or_else(|| {
        Refusal::Invalid(format!(
            "`{key}` is not a Python setting key (CALLEE@LINE.KWARG or =TARGET@LINE)"
        ))
    })?;
    let lit = py_literal(value);
    if let PyKey::Kwarg {
        callee,
        line,
        kwarg,
    } = &k
    {
        return kwarg_edit(src, callee, *line, kwarg, &lit);
    }
    let m = scan(src);
    let span = match k {
        PyKey::Kwarg { .. } => unreachable!("handled on the tree above"),
        PyKey::Assign { target, line } => {
            m.assigns
                .iter()
                .find(|a| a.target == target && a.line == line)
                .ok_or_else(|| {
                    Refusal::Invalid(format!("no assignment to `{target}` on line {line}"))
                })?
                .value_span
        }
        PyKey::DictEntry { key, line } => {
            m.dict_entries
                .iter()
                .find(|d| d.key == key && d.line == line)
                .ok_or_else(|| Refusal::Invalid(format!("no dict entry `{key}` on line {line}")))?
                .value_span
        }
        PyKey::Param { def, line, param } => {
            find_param(&m, &def, line, &param)
                .ok_or_else(|| {
                    Refusal::Invalid(format!(
                        "no `def {def}` with a default for `{param}` on line {line}"
                    ))
                })?
                .value_span
        }
    };
    Ok((span.0..span.1, lit))
}

/// A keyword argument of the one call to `callee` whose name is on `line`, found on the tree:
/// its value's bytes, or — when the call does not pass it — the place to add `kwarg=…`.
fn kwarg_edit(
    src: &str,
    callee: &str,
    line: usize,
    kwarg: &str,
    lit: &str,
) -> Result<(Range<usize>, String), Refusal> {
    let tree = syntax::parse(Lang::Python, src).map_err(Refusal::Unproven)?;
    if let Some(at) = syntax::first_error(&tree, src) {
        return Err(Refusal::Unproven(format!(
            "the Python grammar cannot read {at}, so no edit of this file can be proven exact"
        )));
    }
    let calls: Vec<_> = syntax::nodes(&tree)
        .into_iter()
        .filter(|n| n.kind() == "call")
        .filter(|c| {
            let Some(f) = c.child_by_field_name("function") else {
                return false;
            };
            let name = match f.kind() {
                "identifier" => Some(f),
                "attribute" => f.child_by_field_name("attribute"),
                _ => None,
            };
            name.is_some_and(|n| {
                syntax::text(n, src) == callee && n.start_position().row + 1 == line
            })
        })
        .collect();
    let call = match calls.as_slice() {
        [c] => *c,
        [] => {
            return Err(Refusal::Invalid(format!(
                "no call to `{callee}` starts on line {line}"
            )));
        }
        _ => {
            return Err(Refusal::Unproven(format!(
                "{} calls to `{callee}` start on line {line}: gpufix cannot tell which one the setting is",
                calls.len()
            )));
        }
    };
    let args = call
        .child_by_field_name("arguments")
        .filter(|a| a.kind() == "argument_list")
        .ok_or_else(|| {
            Refusal::Unproven(format!(
                "the call to `{callee}` on line {line} takes a generator, not an argument list"
            ))
        })?;
    let mut c = args.walk();
    let kids: Vec<_> = args.children(&mut c).collect();
    let given: Vec<_> = kids
        .iter()
        .filter(|k| k.kind() == "keyword_argument")
        .filter(|k| {
            k.child_by_field_name("name")
                .is_some_and(|n| syntax::text(n, src) == kwarg)
        })
        .collect();
    match given.as_slice() {
        [k] => {
            let v = k
                .child_by_field_name("value")
                .ok_or_else(|| Refusal::Unproven(format!("`{kwarg}=` has no value")))?;
            return Ok((v.byte_range(), lit.to_string()));
        }
        [] => {}
        _ => {
            return Err(Refusal::Unproven(format!(
                "`{kwarg}` is passed {} times to `{callee}` on line {line}",
                given.len()
            )));
        }
    }
    if let Some(splat) = kids.iter().find(|k| k.kind() == "dictionary_splat") {
        return Err(Refusal::Unproven(format!(
            "the call to `{callee}` on line {line} passes `{}`, which may already hold `{kwarg}`: adding it beside could pass it twice",
            syntax::text(*splat, src)
        )));
    }
    // before `)`: after a trailing comma, after the last argument, or inside `()`
    let close = kids
        .iter()
        .rev()
        .find(|k| k.kind() == ")")
        .ok_or_else(|| Refusal::Unproven(format!("the call on line {line} has no `)`")))?;
    let last = kids
        .iter()
        .rev()
        .find(|k| k.end_byte() <= close.start_byte() && k.kind() != "comment");
    Ok(match last {
        Some(l) if l.kind() == "," => (l.end_byte()..l.end_byte(), format!(" {kwarg}={lit},")),
        Some(l) if l.kind() == "(" => (l.end_byte()..l.end_byte(), format!("{kwarg}={lit}")),
        Some(l) => (l.end_byte()..l.end_byte(), format!(", {kwarg}={lit}")),
        None => (
            close.start_byte()..close.start_byte(),
            format!("{kwarg}={lit}"),
        ),
    })
}

/// Read back what a key holds (for the fix's verification and the round-trip tests).
pub fn get(src: &str, key: &str) -> Option<PyValue> {
    let m = scan(src);
    let consts = constants(src, &m);
    match parse_key(key)? {
        PyKey::Kwarg {
            callee,
            line,
            kwarg,
        } => {
            let c = m
                .calls
                .iter()
                .find(|c| c.callee == callee && c.line == line)?;
            c.kwarg(&kwarg).map(|a| eval(&a.value, &consts))
        }
        PyKey::Assign { target, line } => m
            .assigns
            .iter()
            .find(|a| a.target == target && a.line == line)
            .map(|a| eval(&a.value, &consts)),
        PyKey::DictEntry { key, line } => m
            .dict_entries
            .iter()
            .find(|d| d.key == key && d.line == line)
            .map(|d| eval(&d.value, &consts)),
        PyKey::Param { def, line, param } => {
            find_param(&m, &def, line, &param).map(|a| eval(&a.value, &consts))
        }
    }
}

/// The modules a source imports that may be local files (`from .data import x` -> `.data`,
/// `from pkg.data import x` -> `pkg.data`, `import utils, models.net` -> `utils`,
/// `models.net`), in order, at most 32; the caller tries to read each beside the script.
pub fn local_import_candidates(src: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let valid = |m: &str| {
        !m.is_empty()
            && m.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    };
    for l in src.lines() {
        let t = l.trim_start();
        let mods: Vec<String> = if let Some(r) = t.strip_prefix("from ") {
            match r.split_once(" import ") {
                Some((m, names)) if m.trim().chars().all(|c| c == '.') => names
                    .split(',')
                    .map(|n| format!("{}{}", m.trim(), n.split_whitespace().next().unwrap_or("")))
                    .collect(),
                Some((m, _)) => vec![m.trim().to_string()],
                None => Vec::new(),
            }
        } else if let Some(r) = t.strip_prefix("import ") {
            r.split(',')
                .map(|m| m.split_whitespace().next().unwrap_or("").to_string())
                .collect()
        } else {
            Vec::new()
        };
        for m in mods {
            if valid(&m) && !out.contains(&m) && out.len() < 32 {
                out.push(m);
            }
        }
    }
    out
}

/// Does this text look like Python source (rather than YAML, a log or a command line)?
pub fn looks_like_python(text: &str) -> bool {
    let mut score = 0;
    for l in text.lines().take(400) {
        let t = l.trim_start();
        if t.starts_with("import ") || t.starts_with("from ") && t.contains(" import ") {
            score += 3;
        }
        if (t.starts_with("def ") || t.starts_with("class ")) && t.trim_end().ends_with(':') {
            score += 3;
        }
        if t.starts_with("if __name__") {
            score += 3;
        }
        if t.contains("= dict(") || t.contains("DataLoader(") || t.contains("add_argument(") {
            score += 2;
        }
        if t.starts_with("_base_ =") || t.starts_with("_C.") {
            score += 3;
        }
    }
    score >= 3
}

#[cfg(test)]
mod grammar_tests {
    use super::*;

    #[test]
    fn a_keyword_beside_a_splat_changes_only_its_literal() {
        let src = "kw = dict(pin_memory=True)\nloader = DataLoader(ds, batch_size=4,  # per GPU\n    num_workers=2, **kw)\n";
        let out = set(src, "DataLoader@L2.num_workers", &json!(8)).unwrap();
        assert_eq!(out, src.replace("num_workers=2", "num_workers=8"));
        // applying twice changes nothing
        assert_eq!(
            set(&out, "DataLoader@L2.num_workers", &json!(8)).unwrap(),
            out
        );
        // an absent keyword beside `**kw` may be in kw: adding it could pass it twice
        let err = set_checked(src, "DataLoader@L2.persistent_workers", &json!(true)).unwrap_err();
        assert!(
            matches!(&err, Refusal::Unproven(w) if w.contains("passes `**kw`")),
            "{err}"
        );
    }

    #[test]
    fn two_calls_on_one_line_or_a_broken_file_are_refused() {
        let src = "a = DataLoader(x, num_workers=1); b = DataLoader(y, num_workers=1)\n";
        let err = set_checked(src, "DataLoader@L1.num_workers", &json!(4)).unwrap_err();
        assert!(matches!(err, Refusal::Unproven(_)), "{err}");
        let src = "def f(:\n    pass\nDataLoader(x, num_workers=1)\n";
        let err = set_checked(src, "DataLoader@L3.num_workers", &json!(4)).unwrap_err();
        assert!(err.to_string().contains("cannot read line 1"), "{err}");
        let err = set_checked("f(x)\n", "DataLoader@L1.num_workers", &json!(4)).unwrap_err();
        assert!(matches!(err, Refusal::Invalid(_)), "{err}");
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_prefixed_string_at_the_very_start_does_not_panic() {
        // `r"` as the first bytes once read the byte before the start (a proptest found it)
        for src in ["r\"x\"", "rb'y'", "f\"", "u'"] {
            let _ = scan(src);
        }
    }

    #[test]
    fn annotated_class_fields_are_marked() {
        let src = "from dataclasses import dataclass\n\n@dataclass\nclass Cfg:\n    num_workers: int = 0\n\n    def f(self):\n        num_workers: int = 3\n\nworkers: int = 2\n";
        let m = scan(src);
        let f: Vec<(&str, usize, bool)> = m
            .assigns
            .iter()
            .map(|a| (a.target.as_str(), a.line, a.class_field))
            .collect();
        assert_eq!(
            f,
            vec![
                ("num_workers", 5, true),
                ("num_workers", 8, false),
                ("workers", 10, false)
            ]
        );
    }

    #[test]
    fn dict_literal_entries_read_and_set_in_place() {
        let src = "CFG = {\n    'train': {\n        'batch_size': 2, 'num_workers_per_gpu': 2, 'pin_memory': True,\n    },\n    'test': {'num_workers_per_gpu': 2, 'f': dict(a=1)},\n}\nx = {k: v for k, v in y}\n";
        let m = scan(src);
        let got: Vec<(String, String, String, usize)> = m
            .dict_entries
            .iter()
            .map(|e| (e.path.join("."), e.key.clone(), e.value.clone(), e.line))
            .collect();
        assert_eq!(
            got[..4],
            [
                ("CFG.train".into(), "batch_size".into(), "2".into(), 3),
                ("CFG.train".into(), "num_workers_per_gpu".into(), "2".into(), 3),
                ("CFG.train".into(), "pin_memory".into(), "True".into(), 3),
                ("CFG".into(), "train".into(), "{\n        'batch_size': 2, 'num_workers_per_gpu': 2, 'pin_memory': True,\n    }".into(), 2),
            ]
        );
        let w = m
            .dict_entries
            .iter()
            .find(|e| e.key == "num_workers_per_gpu" && e.line == 5)
            .unwrap();
        assert_eq!(w.path, vec!["CFG", "test"]);
        let k = dict_key(&m.dict_entries[1]);
        assert_eq!(k, "{num_workers_per_gpu}@L3");
        let out = set(src, &k, &json!(8)).unwrap();
        assert_eq!(get(&out, &k), Some(PyValue::Known(json!(8))));
        assert_eq!(
            out.replacen("'num_workers_per_gpu': 8", "'num_workers_per_gpu': 2", 1),
            src
        );
    }

    use super::*;

    const SRC: &str = r#"import torch
from torch.utils.data import DataLoader
NUM_WORKERS = 2 * 2

parser = argparse.ArgumentParser()
parser.add_argument('-j', '--workers', default=4, type=int, help="data (loading) workers")
parser.add_argument("--batch-size", default=256)

def main():
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(sampler is None),  # a comment, with (parens
        num_workers=args.workers, pin_memory=True, sampler=sampler)
    val_loader = DataLoader(val_ds, batch_size=64,
                            shuffle=False)
    s = "DataLoader(num_workers=99)"
    x = DataLoader(ds, **kw)
"#;

    #[test]
    fn finds_calls_kwargs_and_what_they_are_assigned_to() {
        let m = scan(SRC);
        let dl: Vec<&Call> = m
            .calls
            .iter()
            .filter(|c| c.callee == "DataLoader")
            .collect();
        assert_eq!(dl.len(), 3, "{dl:#?}");
        assert_eq!(dl[0].name, "torch.utils.data.DataLoader");
        assert_eq!(dl[0].line, 10);
        assert_eq!(dl[0].assigned_to.as_deref(), Some("train_loader"));
        assert_eq!(dl[0].kwarg("num_workers").unwrap().value, "args.workers");
        assert_eq!(dl[0].kwarg("shuffle").unwrap().value, "(sampler is None)");
        assert_eq!(dl[1].assigned_to.as_deref(), Some("val_loader"));
        assert!(dl[1].kwarg("num_workers").is_none());
        assert!(dl[2].has_splat);
    }

    #[test]
    fn argparse_defaults_and_constants() {
        let m = scan(SRC);
        let d = argparse_defaults(&m);
        assert_eq!(d["workers"].0.as_ref().unwrap().value, "4");
        assert_eq!(d["workers"].1, 6);
        assert_eq!(d["batch_size"].0.as_ref().unwrap().value, "256");
        let c = constants(SRC, &m);
        assert_eq!(c["NUM_WORKERS"], json!(4));
        assert_eq!(
            eval("min(8, NUM_WORKERS * 4)", &c),
            PyValue::Known(json!(8))
        );
        assert_eq!(
            eval("os.cpu_count() // 2", &c),
            PyValue::Unjudged("os.cpu_count() // 2".into())
        );
    }

    #[test]
    fn sets_a_present_kwarg_and_inserts_an_absent_one_in_place() {
        let out = set(SRC, "DataLoader@L10.pin_memory", &json!(false)).unwrap();
        assert!(out.contains("num_workers=args.workers, pin_memory=False, sampler=sampler)"));
        let out = set(&out, "DataLoader@L13.num_workers", &json!(8)).unwrap();
        assert!(out.contains("                            shuffle=False, num_workers=8)"));
        assert_eq!(out.lines().count(), SRC.lines().count());
        // every other byte unchanged: undo both by hand
        let back = out
            .replace("pin_memory=False, sampler", "pin_memory=True, sampler")
            .replace("shuffle=False, num_workers=8)", "shuffle=False)");
        assert_eq!(back, SRC);
        assert_eq!(
            get(&out, "DataLoader@L13.num_workers"),
            Some(PyValue::Known(json!(8)))
        );
        let out = set(SRC, "add_argument@L6.default", &json!(8)).unwrap();
        assert!(out.contains("'--workers', default=8, type=int"));
        let out = set(SRC, "=NUM_WORKERS@L3", &json!(8)).unwrap();
        assert!(out.contains("NUM_WORKERS = 8\n"));
        assert!(set(SRC, "DataLoader@L99.num_workers", &json!(1)).is_err());
    }

    #[test]
    fn attribute_assignments_and_dict_configs() {
        let src = "_base_ = ['a.py']\ntrain_dataloader = dict(\n    batch_size=2,\n    num_workers=2,\n    persistent_workers=True)\ncfg.DATALOADER.NUM_WORKERS = 0\n";
        let m = scan(src);
        let d = m.calls.iter().find(|c| c.callee == "dict").unwrap();
        assert_eq!(d.assigned_to.as_deref(), Some("train_dataloader"));
        assert_eq!(d.kwarg("num_workers").unwrap().value, "2");
        let a = m
            .assigns
            .iter()
            .find(|a| a.target == "cfg.DATALOADER.NUM_WORKERS")
            .unwrap();
        assert_eq!(a.value, "0");
        assert_eq!(a.line, 6);
        assert!(looks_like_python(src));
        assert!(!looks_like_python("data:\n  num_workers: 2\n"));
    }

    #[test]
    fn def_parameter_defaults_are_read_and_set_in_place() {
        let src = "class DM(Base):\n    def __init__(self, data_dir: str = \"./\", batch_size: int = 64,\n                 num_workers: int = 0, *args, **kw):\n        self.num_workers = num_workers\n\n    def loader(self):\n        return DataLoader(self.ds, num_workers=self.num_workers)\n\n\ndef build(ds, n=(1, 2), num_workers=0):\n    return DataLoader(ds, num_workers=num_workers)\n";
        let m = scan(src);
        let init = &m.defs[0];
        assert_eq!(init.class.as_deref(), Some("DM"));
        assert_eq!((init.line, init.end_line), (2, 4));
        let names: Vec<&str> = init.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "self",
                "data_dir",
                "batch_size",
                "num_workers",
                "args",
                "kw"
            ]
        );
        assert_eq!(
            init.param("num_workers")
                .unwrap()
                .1
                .default
                .as_ref()
                .unwrap()
                .value,
            "0"
        );
        assert_eq!(m.def_at(7).unwrap().name, "loader");
        let b = m.def_at(11).unwrap();
        assert_eq!((b.name.as_str(), b.class.as_deref()), ("build", None));
        assert_eq!(
            b.param("n").unwrap().1.default.as_ref().unwrap().value,
            "(1, 2)"
        );
        let k = param_key(init, "num_workers");
        assert_eq!(k, "def __init__@L2.num_workers");
        let out = set(src, &k, &json!(8)).unwrap();
        assert_eq!(get(&out, &k), Some(PyValue::Known(json!(8))));
        assert_eq!(
            out.replacen("num_workers: int = 8", "num_workers: int = 0", 1),
            src
        );
        assert!(set(src, "def __init__@L2.missing", &json!(1)).is_err());
    }

    #[test]
    fn local_import_candidates_in_order() {
        let src = "import os, utils.io as uio\nfrom . import data, models\nfrom .loaders import build\nfrom pkg.data import x\n    import torch\n";
        assert_eq!(
            local_import_candidates(src),
            [
                "os", "utils.io", ".data", ".models", ".loaders", "pkg.data", "torch"
            ]
        );
    }

    #[test]
    fn empty_call_and_trailing_comma() {
        let src = "dl = DataLoader()\ndl2 = DataLoader(\n    ds,\n    batch_size=4,\n)\n";
        let out = set(src, "DataLoader@L1.num_workers", &json!(8)).unwrap();
        assert!(out.starts_with("dl = DataLoader(num_workers=8)\n"));
        let out = set(src, "DataLoader@L2.num_workers", &json!(8)).unwrap();
        assert!(out.contains("    batch_size=4, num_workers=8,\n)"), "{out}");
    }
}
