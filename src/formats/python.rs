//! Python source as written: the DataLoader calls, DDP/FSDP constructors, config dicts
//! (`train_dataloader = dict(num_workers=2, …)`), attribute assignments
//! (`cfg.DATALOADER.NUM_WORKERS = 2`), dict literals, `def` parameter defaults and argparse
//! defaults a training script holds, and an editor that changes one keyword argument, one
//! assignment, one dict entry or one default in place.
//!
//! Reading and editing go through one tree: the Python grammar's ([`super::syntax`],
//! tree-sitter-python 0.25.0). [`scan`] walks it for `call`, `assignment`, `pair` and
//! `function_definition` nodes, so strings, comments, brackets and line continuations are the
//! grammar's business, never a scanner's; a part the grammar cannot read (a fragment pasted
//! out of context) becomes an error node and what it can read around it is still found. The
//! integer arithmetic a value is judged by ([`eval`]) is read on the same grammar's tree of the
//! expression. A value is judged only when it is a literal, a small integer expression of
//! literals, a module-level constant, an `args.NAME` whose argparse default is in the same
//! file, or a parameter of a `def` (its default, unless the command line or a caller sets it);
//! everything else is reported as "cannot judge" with the expression, never guessed.
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
use tree_sitter::Node;

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

/// The 1-based line a node starts on.
fn line(n: Node) -> usize {
    n.start_position().row + 1
}

/// A name as written without the blanks inside it (`torch . utils` -> `torch.utils`).
fn compact(n: Node, src: &str) -> String {
    syntax::text(n, src)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// `a`, `a.b.c`: a name or a chain of attributes of one.
fn is_dotted(n: Node) -> bool {
    match n.kind() {
        "identifier" => true,
        "attribute" => n.child_by_field_name("object").is_some_and(is_dotted),
        _ => false,
    }
}

/// An assignment target the settings are read from: a name, attributes and subscripts of one
/// by names, strings or numbers (`cfg.DATALOADER.NUM_WORKERS`, `cfg['data']['workers']`).
fn is_target(n: Node) -> bool {
    match n.kind() {
        "identifier" => true,
        "attribute" => n.child_by_field_name("object").is_some_and(is_target),
        "subscript" => {
            n.child_by_field_name("value").is_some_and(is_target) && {
                let mut c = n.walk();
                n.children_by_field_name("subscript", &mut c)
                    .all(|s| matches!(s.kind(), "identifier" | "string" | "integer"))
            }
        }
        _ => false,
    }
}

/// The class whose body holds a statement (through decorators), if any.
fn enclosing_class(stmt: Node, src: &str) -> Option<String> {
    let mut n = stmt.parent()?;
    if n.kind() == "decorated_definition" {
        n = n.parent()?;
    }
    if n.kind() != "block" {
        return None;
    }
    let class = n.parent().filter(|p| p.kind() == "class_definition")?;
    class
        .child_by_field_name("name")
        .map(|x| syntax::text(x, src).to_string())
}

/// The function a lazy call names: `L(f)` / `LazyCall(f)` (Detectron2's
/// `detectron2/config/lazy.py`, v0.6: `LazyCall(target)(**kwargs)` records `_target_: target`
/// and the keywords, and `instantiate` later calls `target(**kwargs)`; Cosmos and other
/// projects copy the class as `cosmos_predict1/utils/lazy_config`), so `L(DataLoader)(…)` is
/// read as the `DataLoader(…)` it becomes.
fn lazy_target<'t>(f: Node<'t>, src: &str) -> Option<Node<'t>> {
    if f.kind() != "call" {
        return None;
    }
    let wrapper = f
        .child_by_field_name("function")
        .filter(|w| is_dotted(*w))?;
    let last = compact(wrapper, src);
    let last = last.rsplit('.').next().unwrap_or(&last);
    if last != "L" && last != "LazyCall" {
        return None;
    }
    let a = f.child_by_field_name("arguments")?;
    let mut c = a.walk();
    let mut named = a.named_children(&mut c).filter(|k| k.kind() != "comment");
    let target = named.next().filter(|t| is_dotted(*t))?;
    named.next().is_none().then_some(target)
}

fn read_call(n: Node, src: &str) -> Option<Call> {
    let f = n.child_by_field_name("function")?;
    let f = if is_dotted(f) {
        f
    } else {
        lazy_target(f, src)?
    };
    let callee = match f.kind() {
        "attribute" => f.child_by_field_name("attribute")?,
        _ => f,
    };
    let a = n.child_by_field_name("arguments")?;
    let (mut args, mut has_splat) = (Vec::new(), false);
    let (open, close) = (a.start_byte(), a.end_byte().saturating_sub(1));
    if a.kind() == "argument_list" {
        let mut c = a.walk();
        for k in a.named_children(&mut c) {
            match k.kind() {
                "comment" => {}
                "list_splat" | "dictionary_splat" => has_splat = true,
                "keyword_argument" => {
                    let (Some(name), Some(v)) = (
                        k.child_by_field_name("name"),
                        k.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    args.push(Arg {
                        name: Some(syntax::text(name, src).to_string()),
                        value: syntax::text(v, src).to_string(),
                        value_span: (v.start_byte(), v.end_byte()),
                    });
                }
                _ => args.push(Arg {
                    name: None,
                    value: syntax::text(k, src).to_string(),
                    value_span: (k.start_byte(), k.end_byte()),
                }),
            }
        }
    }
    // `x = Call(…)`, `x: T = Call(…)` or a keyword `x=Call(…)`
    let assigned_to = n.parent().and_then(|p| match p.kind() {
        "assignment" if p.child_by_field_name("right") == Some(n) => p
            .child_by_field_name("left")
            .filter(|l| is_target(*l))
            .map(|l| compact(l, src)),
        "keyword_argument" if p.child_by_field_name("value") == Some(n) => p
            .child_by_field_name("name")
            .map(|x| syntax::text(x, src).to_string()),
        _ => None,
    });
    Some(Call {
        name: compact(f, src),
        callee: syntax::text(callee, src).to_string(),
        line: line(f),
        open,
        close,
        args,
        assigned_to,
        has_splat,
    })
}

/// `target = value` (or `target: T = value`) as a statement of its own. A tuple assignment
/// `a, b = x, y` (left a `pattern_list`/`tuple_pattern`, right an `expression_list`/`tuple`
/// of as many items, in tree-sitter-python's grammar) binds each name to its own item, as
/// CPython unpacks it: YOLOv5's `train()` (ultralytics/yolov5 train.py, v6.x-v7.0) reads its
/// options so, `save_dir, epochs, …, workers, freeze = Path(opt.save_dir), opt.epochs, …,
/// opt.workers, opt.freeze`, and passes `workers=workers` to `create_dataloader`. A starred
/// target or a right side of another length (`a, b = f()`) binds nothing readable.
fn read_assign(n: Node, src: &str) -> Vec<Assign> {
    let Some(stmt) = n.parent().filter(|p| p.kind() == "expression_statement") else {
        return Vec::new();
    };
    let (Some(left), Some(right)) = (
        n.child_by_field_name("left"),
        n.child_by_field_name("right"),
    ) else {
        return Vec::new();
    };
    let assign = |l: Node, r: Node, class_field: bool| Assign {
        target: compact(l, src),
        value: syntax::text(r, src).to_string(),
        value_span: (r.start_byte(), r.end_byte()),
        line: line(l),
        class_field,
    };
    if is_target(left) {
        let annotated = n.child_by_field_name("type").is_some();
        return vec![assign(
            left,
            right,
            annotated && left.kind() == "identifier" && enclosing_class(stmt, src).is_some(),
        )];
    }
    if !matches!(left.kind(), "pattern_list" | "tuple_pattern")
        || !matches!(right.kind(), "expression_list" | "tuple")
    {
        return Vec::new();
    }
    let (ls, rs) = (unpack_items(left), unpack_items(right));
    if ls.len() != rs.len() || !ls.iter().all(|l| is_target(*l)) {
        return Vec::new();
    }
    ls.into_iter()
        .zip(rs)
        .map(|(l, r)| assign(l, r, false))
        .collect()
}

/// The items of a tuple pattern or expression list; comments and the grammar's extra
/// `line_continuation` nodes (a `\` ending the line, as YOLOv5's unpacking of its options
/// spans three lines) are no items.
fn unpack_items<'t>(x: Node<'t>) -> Vec<Node<'t>> {
    let mut c = x.walk();
    x.named_children(&mut c)
        .filter(|k| !k.is_extra() && !matches!(k.kind(), "comment" | "line_continuation"))
        .collect()
}

fn read_def(n: Node, src: &str) -> Option<Def> {
    let name = n.child_by_field_name("name")?;
    let ps = n.child_by_field_name("parameters")?;
    let mut params = Vec::new();
    let mut c = ps.walk();
    for p in ps.named_children(&mut c) {
        // the name of a parameter, through `*`/`**` and a type
        let ident = |p: Node| -> Option<String> {
            let mut x = p;
            loop {
                match x.kind() {
                    "identifier" => return Some(syntax::text(x, src).to_string()),
                    "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                        x = x.named_child(0)?;
                    }
                    _ => return None,
                }
            }
        };
        let (pname, default) = match p.kind() {
            "default_parameter" | "typed_default_parameter" => {
                let Some(pn) = p.child_by_field_name("name").and_then(ident) else {
                    continue;
                };
                let d = p.child_by_field_name("value").map(|v| Arg {
                    name: Some(pn.clone()),
                    value: syntax::text(v, src).to_string(),
                    value_span: (v.start_byte(), v.end_byte()),
                });
                (pn, d)
            }
            _ => match ident(p) {
                Some(pn) => (pn, None),
                None => continue,
            },
        };
        params.push(Param {
            name: pname,
            default,
        });
    }
    let end = n.end_position();
    Some(Def {
        name: syntax::text(name, src).to_string(),
        class: enclosing_class(n, src),
        line: line(n),
        end_line: if end.column == 0 {
            end.row
        } else {
            end.row + 1
        },
        params,
    })
}

/// The key of the dict literal `d` in what holds it: its entry's key in an enclosing dict, or
/// the name it is assigned or passed as.
fn dict_seg(d: Node, src: &str) -> Option<String> {
    let p = d.parent()?;
    match p.kind() {
        "pair" if p.child_by_field_name("value") == Some(d) => p
            .child_by_field_name("key")
            .filter(|k| k.kind() == "string")
            .and_then(|k| string_literal(syntax::text(k, src))),
        "assignment" if p.child_by_field_name("right") == Some(d) => p
            .child_by_field_name("left")
            .filter(|l| l.kind() == "identifier")
            .map(|l| syntax::text(l, src).to_string()),
        "keyword_argument" if p.child_by_field_name("value") == Some(d) => p
            .child_by_field_name("name")
            .map(|x| syntax::text(x, src).to_string()),
        _ => None,
    }
}

/// `'key': value` of a dict literal, with the keys of the dicts around it.
fn read_entry(n: Node, src: &str) -> Option<DictEntry> {
    n.parent().filter(|p| p.kind() == "dictionary")?;
    let key = n
        .child_by_field_name("key")
        .filter(|k| k.kind() == "string")?;
    let k = string_literal(syntax::text(key, src))?;
    let v = n.child_by_field_name("value")?;
    let mut path = Vec::new();
    let mut a = n.parent();
    while let Some(x) = a {
        if x.kind() == "dictionary"
            && let Some(s) = dict_seg(x, src)
        {
            path.push(s);
        }
        a = x.parent();
    }
    path.reverse();
    Some(DictEntry {
        key: k,
        path,
        value: syntax::text(v, src).to_string(),
        value_span: (v.start_byte(), v.end_byte()),
        line: line(key),
    })
}

/// Read the calls, assignments, dict entries and definitions of a Python source from the
/// Python grammar's tree. A part the grammar cannot read (a fragment pasted out of context) is
/// skipped; what it can read around it is still found.
pub fn scan(src: &str) -> Module {
    if dict_fragment(src) {
        return scan_dict_fragment(src);
    }
    scan_tree(src)
}

fn scan_tree(src: &str) -> Module {
    let mut m = Module::default();
    let Ok(tree) = syntax::parse(Lang::Python, src) else {
        return m;
    };
    for n in syntax::nodes(&tree) {
        match n.kind() {
            "call" => m.calls.extend(read_call(n, src)),
            "assignment" => m.assigns.extend(read_assign(n, src)),
            "function_definition" => m.defs.extend(read_def(n, src)),
            "pair" => m.dict_entries.extend(read_entry(n, src)),
            _ => {}
        }
    }
    // an entry is read when its dict is: the inner ones first
    m.dict_entries.sort_by_key(|e| e.value_span.1);
    m
}

/// An environment variable a Python source sets for its own process (and the children it
/// starts), as CPython's `Lib/os.py` (3.x) gives the ways: item assignment on the
/// `os.environ` mapping (`_Environ.__setitem__` calls `putenv`), `os.environ.setdefault(K, V)`,
/// `os.environ.update(K=V)` / `update({K: V})` and `os.putenv(K, V)`. Only literal names and
/// values, and only settings every run makes: one under an `if` (a debug switch), a loop or a
/// `try` is left out, except under `if __name__ == "__main__":`, which a run as a script takes.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvSet {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// `environ`, `os.environ` (any module path ending in `environ`).
fn is_environ(n: Node, src: &str) -> bool {
    is_dotted(n) && {
        let t = compact(n, src);
        t == "environ" || t.ends_with(".environ")
    }
}

/// No `if` (but the main guard), loop, `try` or conditional expression around `n`.
fn every_run(n: Node, src: &str) -> bool {
    let mut a = n.parent();
    while let Some(x) = a {
        match x.kind() {
            "if_statement" => {
                let cond = x
                    .child_by_field_name("condition")
                    .map(|c| compact(c, src))
                    .unwrap_or_default();
                let main_guard = cond.contains("__name__") && cond.contains("__main__");
                // the main guard's own body, not its else branch
                let in_body = x.child_by_field_name("consequence").is_some_and(|b| {
                    b.start_byte() <= n.start_byte() && n.end_byte() <= b.end_byte()
                });
                if !(main_guard && in_body) {
                    return false;
                }
            }
            "elif_clause"
            | "else_clause"
            | "for_statement"
            | "while_statement"
            | "try_statement"
            | "conditional_expression"
            | "lambda" => return false,
            _ => {}
        }
        a = x.parent();
    }
    true
}

/// The environment variables a Python source sets on every run, in source order.
pub fn environ_sets(src: &str) -> Vec<EnvSet> {
    let Ok(tree) = syntax::parse(Lang::Python, src) else {
        return Vec::new();
    };
    let lit = |n: Node| string_literal(syntax::text(n, src));
    let mut out = Vec::new();
    for n in syntax::nodes(&tree) {
        if !every_run(n, src) {
            continue;
        }
        match n.kind() {
            // os.environ["K"] = "V"
            "assignment" => {
                let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) else {
                    continue;
                };
                if l.kind() != "subscript"
                    || !l
                        .child_by_field_name("value")
                        .is_some_and(|v| is_environ(v, src))
                {
                    continue;
                }
                let mut c = l.walk();
                let keys: Vec<Node> = l.children_by_field_name("subscript", &mut c).collect();
                if let ([k], Some(v)) = (keys.as_slice(), lit(r))
                    && let Some(k) = lit(*k)
                {
                    out.push(EnvSet {
                        name: k,
                        value: v,
                        line: line(n),
                    });
                }
            }
            // os.environ.setdefault("K", "V"), os.putenv("K", "V"), os.environ.update(K="V")
            "call" => {
                let Some(f) = n
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "attribute")
                else {
                    continue;
                };
                let (Some(obj), Some(attr)) = (
                    f.child_by_field_name("object"),
                    f.child_by_field_name("attribute"),
                ) else {
                    continue;
                };
                let method = syntax::text(attr, src);
                let Some(args) = n.child_by_field_name("arguments") else {
                    continue;
                };
                let mut c = args.walk();
                let a: Vec<Node> = args
                    .named_children(&mut c)
                    .filter(|k| k.kind() != "comment")
                    .collect();
                let on_environ = is_environ(obj, src);
                let on_os = is_dotted(obj) && compact(obj, src) == "os";
                match (method, a.as_slice()) {
                    ("setdefault", [k, v]) if on_environ => {
                        if let (Some(k), Some(v)) = (lit(*k), lit(*v)) {
                            out.push(EnvSet {
                                name: k,
                                value: v,
                                line: line(n),
                            });
                        }
                    }
                    ("putenv", [k, v]) if on_os => {
                        if let (Some(k), Some(v)) = (lit(*k), lit(*v)) {
                            out.push(EnvSet {
                                name: k,
                                value: v,
                                line: line(n),
                            });
                        }
                    }
                    ("update", items) if on_environ => {
                        for it in items {
                            match it.kind() {
                                "keyword_argument" => {
                                    if let (Some(k), Some(v)) = (
                                        it.child_by_field_name("name"),
                                        it.child_by_field_name("value").and_then(lit),
                                    ) {
                                        out.push(EnvSet {
                                            name: syntax::text(k, src).to_string(),
                                            value: v,
                                            line: line(n),
                                        });
                                    }
                                }
                                "dictionary" => {
                                    let mut dc = it.walk();
                                    for p in
                                        it.named_children(&mut dc).filter(|p| p.kind() == "pair")
                                    {
                                        if let (Some(k), Some(v)) = (
                                            p.child_by_field_name("key").and_then(lit),
                                            p.child_by_field_name("value").and_then(lit),
                                        ) {
                                            out.push(EnvSet {
                                                name: k,
                                                value: v,
                                                line: line(n),
                                            });
                                        }
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    out.sort_by_key(|e| e.line);
    out
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

/// Integer arithmetic of literals and constants, read on the Python grammar's tree of `e`.
fn int_expr(e: &str, consts: &BTreeMap<String, Value>) -> Option<i64> {
    let tree = syntax::parse(Lang::Python, e).ok()?;
    let root = tree.root_node();
    if root.has_error() || root.named_child_count() != 1 {
        return None;
    }
    let stmt = root
        .named_child(0)
        .filter(|s| s.kind() == "expression_statement")?;
    if stmt.named_child_count() != 1 {
        return None;
    }
    int_of(stmt.named_child(0)?, e, consts)
}

fn int_of(n: Node, src: &str, c: &BTreeMap<String, Value>) -> Option<i64> {
    let op = |n: Node| {
        n.child_by_field_name("operator")
            .map(|o| syntax::text(o, src))
    };
    match n.kind() {
        "integer" => syntax::text(n, src).replace('_', "").parse().ok(),
        "identifier" => c.get(syntax::text(n, src)).and_then(Value::as_i64),
        "parenthesized_expression" if n.named_child_count() == 1 => {
            int_of(n.named_child(0)?, src, c)
        }
        "unary_operator" if op(n) == Some("-") => {
            int_of(n.child_by_field_name("argument")?, src, c)?.checked_neg()
        }
        "binary_operator" => {
            let l = int_of(n.child_by_field_name("left")?, src, c)?;
            let r = int_of(n.child_by_field_name("right")?, src, c)?;
            match op(n)? {
                "+" => l.checked_add(r),
                "-" => l.checked_sub(r),
                "*" => l.checked_mul(r),
                "//" => l.checked_div_euclid(r),
                _ => None,
            }
        }
        "call" => {
            let f = syntax::text(n.child_by_field_name("function")?, src);
            let a = n.child_by_field_name("arguments")?;
            if !matches!(f, "min" | "max") || a.kind() != "argument_list" {
                return None;
            }
            let mut cur = a.walk();
            let vals: Option<Vec<i64>> = a
                .named_children(&mut cur)
                .map(|x| int_of(x, src, c))
                .collect();
            let vals = vals?;
            if f == "min" {
                vals.into_iter().min()
            } else {
                vals.into_iter().max()
            }
        }
        _ => None,
    }
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
/// ([`super::syntax::check_edit`]): the one value changes, every other token stays. A refusal
/// says whether it is an error in the key ([`Refusal::Invalid`]) or an edit that cannot be
/// proven exact ([`Refusal::Unproven`], left to the person).
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
    let tree = syntax::parse(Lang::Python, src)?;
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
            // `L(DataLoader)(…)` is the DataLoader call (see `lazy_target`)
            let f = lazy_target(f, src).unwrap_or(f);
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
    let Ok(tree) = syntax::parse(Lang::Python, src) else {
        return out;
    };
    let valid = |m: &str| {
        !m.is_empty()
            && m.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    };
    // the module an import names (`utils.io` of `utils.io as uio`)
    let module = |n: Node| -> Option<String> {
        let n = match n.kind() {
            "aliased_import" => n.child_by_field_name("name")?,
            _ => n,
        };
        Some(compact(n, src))
    };
    for n in syntax::nodes(&tree) {
        let mut c = n.walk();
        let names: Vec<Node> = match n.kind() {
            "import_statement" | "import_from_statement" => {
                n.children_by_field_name("name", &mut c).collect()
            }
            _ => continue,
        };
        let mods: Vec<String> = match n.child_by_field_name("module_name") {
            // `from . import data`: each name is a module beside the script
            Some(m) if compact(m, src).chars().all(|c| c == '.') => {
                let dots = compact(m, src);
                names
                    .into_iter()
                    .filter_map(module)
                    .map(|x| format!("{dots}{x}"))
                    .collect()
            }
            Some(m) => vec![compact(m, src)],
            None => names.into_iter().filter_map(module).collect(),
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
/// The entries of a dict display pasted without its braces: every line (blank lines and
/// comments aside) a `'KEY': value,` pair of the Python grammar's `dictionary`, one of them
/// ending in the comma a display puts between entries. A config module's dict
/// (argusswift/YOLOv4-pytorch config/yolov4_config.py, `TRAIN = {…, "NUMBER_WORKERS": 4, …}`,
/// read by train.py as `num_workers=cfg.TRAIN["NUMBER_WORKERS"]`) is pasted a line or two at a
/// time; YAML reads such a line as the string `0,` (a plain scalar runs to the end of its
/// line), Python's grammar reads the entry once the braces are given back, and only then: the
/// text with `{` and `}` around it must be one dictionary and nothing else, without an error
/// node.
pub fn dict_fragment(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if lines.is_empty()
        || lines.len() > 400
        || !lines
            .iter()
            .all(|l| l.starts_with('"') || l.starts_with('\''))
        || !lines.iter().any(|l| l.ends_with(','))
    {
        return false;
    }
    // JSON's members have the same shape, and its `true`, `false` and `null` are no Python
    // literals: those are left to the JSON and YAML readers
    let json_literal = |l: &&str| {
        l.rsplit_once(':').is_some_and(|(_, v)| {
            matches!(
                v.trim().trim_end_matches(',').trim(),
                "true" | "false" | "null"
            )
        })
    };
    if lines.iter().any(json_literal) {
        return false;
    }
    let wrapped = format!("{{\n{text}\n}}");
    let Ok(tree) = syntax::parse(Lang::Python, &wrapped) else {
        return false;
    };
    let root = tree.root_node();
    if root.has_error() || root.named_child_count() != 1 {
        return false;
    }
    root.named_child(0)
        .filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)
        .and_then(|s| s.named_child(0))
        .is_some_and(|d| d.kind() == "dictionary")
}

/// [`scan`] of a [`dict_fragment`]: the entries of the display with its braces given back,
/// their lines and value spans those of the text as pasted.
fn scan_dict_fragment(src: &str) -> Module {
    let wrapped = format!("{{\n{src}\n}}");
    let mut m = scan_tree(&wrapped);
    for e in &mut m.dict_entries {
        e.line -= 1;
        e.value_span = (e.value_span.0 - 2, e.value_span.1 - 2);
    }
    m.calls.clear();
    m.assigns.clear();
    m.defs.clear();
    m
}

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
    score >= 3 || loader_snippet(text)
}

/// The poster's loader lines cut from inside a function, indented as in their file
/// (openclimatefix/skillful_nowcasting#26: `tran_loader = DataLoader(traindataset, …,
/// num_workers=9, pin_memory=True, …)`): once dedented, the whole text is Python (it parses
/// without an error) and calls torch's `DataLoader`. Prose or a log naming the loader
/// (PyTorch's own "DataLoader worker (pid N) exited unexpectedly …") is no Python statement and
/// does not parse; a traceback's source lines come among lines that are not Python.
fn loader_snippet(text: &str) -> bool {
    if text.len() > 8 << 10 || !text.contains("DataLoader(") {
        return false;
    }
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let dedented: String = text
        .lines()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let Ok(tree) = syntax::parse(Lang::Python, &dedented) else {
        return false;
    };
    !tree.root_node().has_error()
        && scan(&dedented)
            .calls
            .iter()
            .any(|c| c.callee == "DataLoader")
}

/// A host copy a loop repeats to take one element: inside the body of `for VAR in …:`, a
/// subscript whose value is `EXPR.cpu()` (then `.numpy()`, `.tolist()` or `.detach()`) and whose
/// index names the loop's variable while `EXPR` does not (`index_keep.cpu().numpy()[i]`).
/// PyTorch's `Tensor.cpu()` is `to("cpu")` with `non_blocking=False`: the copy of a CUDA tensor
/// returns only once the device has finished the work queued before it and the copy itself
/// (CUDA Runtime API, "API synchronization behavior": a device-to-pageable-host `cudaMemcpy` is
/// synchronous), so the loop waits for the GPU once per iteration to read the same tensor again.
/// A copy the loop does not index by its variable (a whole batch moved once per step, a value
/// logged) is not this: how often such a line runs, the source alone does not say.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopHostCopy {
    /// 1-based line of the copy and its text, and of the loop header.
    pub line: usize,
    pub text: String,
    pub loop_line: usize,
    pub loop_header: String,
    /// Such copies in the source.
    pub count: usize,
}

pub fn loop_host_copies(src: &str) -> Option<LoopHostCopy> {
    static HOST_COPY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(.+?)\.cpu\(\s*\)(?:\s*\.\s*(?:numpy|tolist|detach)\(\s*\))*$")
            .expect("static regex")
    });
    let tree = syntax::parse(Lang::Python, src).ok()?;
    let mentions = |hay: &str, var: &str| {
        hay.match_indices(var).any(|(i, _)| {
            let before = hay[..i].chars().next_back();
            let after = hay[i + var.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    let line_text = |n: usize| src.lines().nth(n - 1).unwrap_or("").trim().to_string();
    let mut first: Option<LoopHostCopy> = None;
    let mut count = 0;
    for f in syntax::nodes(&tree) {
        if f.kind() != "for_statement" {
            continue;
        }
        let (Some(left), Some(body)) =
            (f.child_by_field_name("left"), f.child_by_field_name("body"))
        else {
            continue;
        };
        let vars: Vec<&str> = {
            let mut v = Vec::new();
            let mut stack = vec![left];
            while let Some(n) = stack.pop() {
                if n.kind() == "identifier" {
                    v.push(syntax::text(n, src));
                }
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
            }
            v
        };
        if vars.is_empty() {
            continue;
        }
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
            if n.kind() != "subscript" {
                continue;
            }
            let (Some(value), Some(index)) = (
                n.child_by_field_name("value"),
                n.child_by_field_name("subscript"),
            ) else {
                continue;
            };
            let Some(cap) = HOST_COPY.captures(syntax::text(value, src)) else {
                continue;
            };
            let receiver = cap.get(1).map_or("", |m| m.as_str());
            let index = syntax::text(index, src);
            if vars.iter().any(|v| mentions(index, v))
                && !vars.iter().any(|v| mentions(receiver, v))
            {
                count += 1;
                let line = n.start_position().row + 1;
                let loop_line = f.start_position().row + 1;
                if first.as_ref().is_none_or(|h| line < h.line) {
                    first = Some(LoopHostCopy {
                        line,
                        text: line_text(line),
                        loop_line,
                        loop_header: line_text(loop_line),
                        count: 0,
                    });
                }
            }
        }
    }
    first.map(|mut h| {
        h.count = count;
        h
    })
}

#[cfg(test)]
mod grammar_tests {
    use super::*;

    #[test]
    fn a_tuple_assignment_binds_each_name_to_its_item() {
        let m = scan(
            "a, b.c = 1, opt.workers\n(d, e) = (2, 'x')\nf, g = h()\ni, *j = 1, 2, 3\nk = 4\nl, m = \\\n    5, \\\n    opt.m\n",
        );
        let got: Vec<(&str, &str)> = m
            .assigns
            .iter()
            .map(|a| (a.target.as_str(), a.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "1"),
                ("b.c", "opt.workers"),
                ("d", "2"),
                ("e", "'x'"),
                ("k", "4"),
                ("l", "5"),
                ("m", "opt.m")
            ]
        );
        // each item keeps its own span, so an edit changes that item alone
        let src = "epochs, workers = 300, 0\n";
        let m = scan(src);
        let w = m.assigns.iter().find(|a| a.target == "workers").unwrap();
        assert_eq!(&src[w.value_span.0..w.value_span.1], "0");
    }

    /// A loader's lines pasted from inside a function (indented) are Python; PyTorch's
    /// message naming the loader, and a traceback quoting the line, are not.
    #[test]
    fn an_indented_loader_snippet_is_python() {
        // healthy: openclimatefix/skillful_nowcasting#26, the poster's two lines as pasted
        let snippet = "    traindataset = MyDataset(datapath=opt.datapath,dataname= \"./train/TestAname.npy\",presize=opt.prenum)        \n    tran_loader = DataLoader(traindataset, batch_size=opt.batchsize, num_workers=9,pin_memory=True,shuffle=True,prefetch_factor=8,persistent_workers=True)\n";
        assert!(looks_like_python(snippet));
        let m = scan(snippet);
        let dl = m.calls.iter().find(|c| c.callee == "DataLoader").unwrap();
        assert!(
            dl.args
                .iter()
                .any(|a| a.name.as_deref() == Some("num_workers") && a.value == "9")
        );
        // not Python: PyTorch's worker-failure message, and a traceback quoting the call
        assert!(!looks_like_python(
            "RuntimeError: DataLoader worker (pid 109) exited unexpectedly with exit code 1. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.\n"
        ));
        assert!(!looks_like_python(
            "Traceback (most recent call last):\n  File \"train.py\", line 50, in <module>\n    train_loader = DataLoader(ds, num_workers=0)\nRuntimeError: boom\n"
        ));
    }

    #[test]
    fn dict_entries_pasted_without_their_braces_are_read_as_the_display_s() {
        // problem: argusswift/YOLOv4-pytorch#58 (2-12% GPU utilization), the poster's line of
        // config/yolov4_config.py's TRAIN dict
        // (https://github.com/argusswift/YOLOv4-pytorch/issues/58)
        let problem = "\"NUMBER_WORKERS\": 0,\n";
        assert!(dict_fragment(problem));
        let m = scan(problem);
        assert_eq!(m.dict_entries.len(), 1);
        let e = &m.dict_entries[0];
        assert_eq!(
            (e.key.as_str(), e.value.as_str(), e.line),
            ("NUMBER_WORKERS", "0", 1)
        );
        assert_eq!(&problem[e.value_span.0..e.value_span.1], "0");
        // healthy: Peterisfar/YOLOV3 config/yolov3_config_voc.py's TRAIN entries
        // (https://github.com/Peterisfar/YOLOV3/blob/594d87d8e3885aa38d1381be4ea32e7564115f8b/config/yolov3_config_voc.py),
        // their indentation and comment kept
        let healthy = "         \"BATCH_SIZE\":8,\n         \"NUMBER_WORKERS\":4,\n         \"WARMUP_EPOCHS\":2  # or None\n";
        assert!(dict_fragment(healthy));
        let m = scan(healthy);
        let e = m
            .dict_entries
            .iter()
            .find(|e| e.key == "NUMBER_WORKERS")
            .unwrap();
        assert_eq!((e.value.as_str(), e.line), ("4", 2));
        assert_eq!(&healthy[e.value_span.0..e.value_span.1], "4");
        // not a fragment: a JSON member list (its `true` is no Python literal), a YAML
        // mapping, a whole display, an entry without the comma between entries
        assert!(!dict_fragment(
            "\"dataloader_num_workers\": 4,\n\"dataloader_pin_memory\": true,\n"
        ));
        assert!(!dict_fragment("num_workers: 4\npin_memory: true\n"));
        assert!(!dict_fragment("{\"num_workers\": 4,}\n"));
        assert!(!dict_fragment("\"num_workers\": 4\n"));
        assert!(!dict_fragment("\"a\": 1,\nprint(x)\n"));
    }

    use crate::test_corpus as corpus;

    #[test]
    fn a_lazy_call_is_read_as_the_call_it_builds() {
        // problem: cosmos-predict1's Text2World config (pinned before its PR #31), whose
        // `L(DataLoader)(…)` writes neither num_workers nor pin_memory
        let m = scan(&corpus(
            "h27_py_cosmospredict1_31_lazy_dataloader_defaults.py",
        ));
        let loaders: Vec<&Call> = m
            .calls
            .iter()
            .filter(|c| c.callee == "DataLoader")
            .collect();
        assert_eq!(loaders.len(), 4);
        assert_eq!(
            loaders[0].assigned_to.as_deref(),
            Some("dataloader_train_hdvila")
        );
        assert_eq!(loaders[0].kwarg("batch_size").unwrap().value, "1");
        assert!(
            loaders
                .iter()
                .all(|c| c.kwarg("num_workers").is_none() && !c.has_splat)
        );
        // the key an edit uses finds the call inside the lazy wrapper
        let src = "dl = L(DataLoader)(\n    dataset=ds,\n    batch_size=1,\n)\n";
        let out = set_checked(src, "DataLoader@L1.num_workers", &json!(8)).unwrap();
        assert!(out.contains("num_workers=8"), "{out}");
        // healthy: Detectron2's LazyConfig COCO data, `L(build_detection_train_loader)(…,
        // num_workers=4)`
        let m = scan(&corpus("h27_d2_lazyconfig_coco_4_workers.py"));
        let train = m
            .calls
            .iter()
            .find(|c| c.callee == "build_detection_train_loader")
            .unwrap();
        assert_eq!(train.assigned_to.as_deref(), Some("dataloader.train"));
        assert_eq!(train.kwarg("num_workers").unwrap().value, "4");
        // a call of a call that is not a lazy wrapper is not read as one
        assert!(
            scan("x = make(DataLoader)(ds)\n")
                .calls
                .iter()
                .all(|c| c.callee != "DataLoader")
        );
    }

    #[test]
    fn environment_a_script_sets_for_itself() {
        let sets = |src: &str| -> Vec<(String, String)> {
            environ_sets(src)
                .into_iter()
                .map(|e| (e.name, e.value))
                .collect()
        };
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        // problems: WavTokenizer's train.py (issue #17), icefall's WenetSpeech train.py (PR #554)
        assert_eq!(
            sets(&corpus("h27_py_wavtokenizer17_train_launch_blocking.py")),
            [kv("CUDA_LAUNCH_BLOCKING", "1")]
        );
        let e = environ_sets(&corpus(
            "h27_py_icefall554_wenetspeech_train_launch_blocking.py",
        ));
        assert_eq!((e.len(), e[0].line), (1, 88), "{e:?}");
        // healthy: LRD's training script pins its GPU and sets nothing else (the
        // `export CUDA_VISIBLE_DEVICES` in icefall's usage docstring is text, not code)
        assert_eq!(
            sets(&corpus("h6_py_lrd_train_num_workers_zero.py")),
            [kv("CUDA_VISIBLE_DEVICES", "1")]
        );
        // the other ways CPython's os module gives, under the main guard
        let src = "import os\nif __name__ == '__main__':\n    os.environ.setdefault('NCCL_DEBUG', 'INFO')\n    os.putenv('OMP_NUM_THREADS', '8')\n    os.environ.update({'A': '1'}, B='2')\n";
        assert_eq!(
            sets(src),
            [
                kv("NCCL_DEBUG", "INFO"),
                kv("OMP_NUM_THREADS", "8"),
                kv("A", "1"),
                kv("B", "2")
            ]
        );
        // a debug switch, a branch, a comment or a computed value is not every run's setting
        for src in [
            "if args.debug:\n    os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n",
            "if __name__ == '__main__':\n    pass\nelse:\n    os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n",
            "try:\n    os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\nexcept Exception:\n    pass\n",
            "# os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n",
            "os.environ['CUDA_LAUNCH_BLOCKING'] = str(args.blocking)\n",
            "env['CUDA_LAUNCH_BLOCKING'] = '1'\n",
        ] {
            assert_eq!(sets(src), [], "{src}");
        }
    }

    #[test]
    fn a_keyword_beside_a_splat_changes_only_its_literal() {
        let src = "kw = dict(pin_memory=True)\nloader = DataLoader(ds, batch_size=4,  # per GPU\n    num_workers=2, **kw)\n";
        let out = set_checked(src, "DataLoader@L2.num_workers", &json!(8)).unwrap();
        assert_eq!(out, src.replace("num_workers=2", "num_workers=8"));
        // applying twice changes nothing
        assert_eq!(
            set_checked(&out, "DataLoader@L2.num_workers", &json!(8)).unwrap(),
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
    fn a_loop_that_copies_a_tensor_to_the_host_to_take_its_element() {
        // h145: Swin-MAE's window_masking as Ingero's dev.to write-up quotes it
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/corpus/h145_python_ingero_swinmae_window_masking_cpu_numpy.py"
        ))
        .unwrap();
        let h = super::loop_host_copies(&src).expect("found");
        assert_eq!((h.line, h.loop_line, h.count), (3, 2, 2));
        assert!(h.text.contains("index_keep.cpu().numpy()[i]"), "{}", h.text);
        assert_eq!(h.loop_header, "for i in range(B):");
        // a tuple target, .tolist(), nested in a def
        let t = "def f(x, idx):\n    out = []\n    for b, (a, c) in enumerate(pairs):\n        out.append(idx.cpu().tolist()[b])\n    return out\n";
        assert_eq!(super::loop_host_copies(t).unwrap().line, 4);
        // not this: the copy is of the loop's own element, taken once per step, or not indexed
        for t in [
            "for i in range(B):\n    v = x[i].cpu().numpy()\n",
            "for batch in loader:\n    loss = model(batch.cuda())\n    losses.append(loss.item())\n",
            "for i, (img, lbl) in enumerate(loader):\n    preds = out.cpu().numpy()\n    print(preds[0])\n",
            "ids = idx.cpu().numpy()\nfor i in range(B):\n    y[i] = ids[i]\n",
            "for i in range(B):\n    y = table.cpu()[0]\n",
            "for i in range(B):\n    y = rows[i].cpu()[i]\n",
        ] {
            assert_eq!(super::loop_host_copies(t), None, "{t}");
        }
    }

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
        let out = set_checked(src, &k, &json!(8)).unwrap();
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
        let out = set_checked(SRC, "DataLoader@L10.pin_memory", &json!(false)).unwrap();
        assert!(out.contains("num_workers=args.workers, pin_memory=False, sampler=sampler)"));
        let out = set_checked(&out, "DataLoader@L13.num_workers", &json!(8)).unwrap();
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
        let out = set_checked(SRC, "add_argument@L6.default", &json!(8)).unwrap();
        assert!(out.contains("'--workers', default=8, type=int"));
        let out = set_checked(SRC, "=NUM_WORKERS@L3", &json!(8)).unwrap();
        assert!(out.contains("NUM_WORKERS = 8\n"));
        assert!(set_checked(SRC, "DataLoader@L99.num_workers", &json!(1)).is_err());
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
        let out = set_checked(src, &k, &json!(8)).unwrap();
        assert_eq!(get(&out, &k), Some(PyValue::Known(json!(8))));
        assert_eq!(
            out.replacen("num_workers: int = 8", "num_workers: int = 0", 1),
            src
        );
        assert!(set_checked(src, "def __init__@L2.missing", &json!(1)).is_err());
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
        let out = set_checked(src, "DataLoader@L1.num_workers", &json!(8)).unwrap();
        assert!(out.starts_with("dl = DataLoader(num_workers=8)\n"));
        let out = set_checked(src, "DataLoader@L2.num_workers", &json!(8)).unwrap();
        assert!(out.contains("    batch_size=4, num_workers=8,\n)"), "{out}");
    }
}
