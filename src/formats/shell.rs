//! Shell scripts through the bash grammar ([`super::syntax`], tree-sitter-bash 0.25.1): where a
//! script sets a variable, and the exact edits that unset or change it there.
//!
//! A variable is set by a script in these places ([`How`]): a `NAME=value` prefix of a command
//! (`NCCL_P2P_DISABLE=1 torchrun …`), an `export`/`declare -x`/`local`/`readonly` operand
//! (`export A=1 B=2`), an `env NAME=value` argument, or a plain `NAME=value` statement. An edit
//! is made only when exactly one place sets the name, the whole text names it nowhere else
//! outside comments (a `bash -c "NAME=1 …"` string, an `eval`, a heredoc someone runs later are
//! places gpufix cannot read as assignments), and [`super::syntax::check_edit`] proves that the
//! edit leaves every other token of the tree as it was. Otherwise the edit is refused with a
//! message that says where the value is set and why it is not edited ([`Refusal`]).
//!
//! The edits: drop one prefix (`A=1 torchrun …` → `torchrun …`), one operand of a multi-name
//! `export`/`declare -x`, one `env` argument; a whole `export NAME=…` (or `NAME=…`) line only
//! when the line holds nothing else; or replace the value's bytes. Comments, quoting,
//! continuation lines and heredocs are never touched, because nothing outside the one range is.
//!
//! One known misreading of the grammar is checked for: tree-sitter-bash reads `A=1 B=2` on a
//! line of its own as the prefixes of the command on the *next* line. A command whose parts are
//! separated by a newline that no backslash continues is not read as bash runs it, so no edit
//! touches it.

pub use super::syntax::Refusal;
use super::syntax::{self, Lang, line_of, text};
use std::ops::Range;
use tree_sitter::{Node, Tree};

/// How a script sets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `NAME=value cmd …`: for that command only.
    Prefix,
    /// an operand of `export`, `declare`, `typeset`, `local` or `readonly`
    Declaration,
    /// `env NAME=value cmd …`
    EnvArg,
    /// `NAME=value` as a statement of its own
    Assignment,
}

impl How {
    pub fn describe(self) -> &'static str {
        match self {
            How::Prefix => "a prefix of a command",
            How::Declaration => "an export/declare",
            How::EnvArg => "an argument of env",
            How::Assignment => "an assignment",
        }
    }
}

/// One place a script sets a variable.
#[derive(Debug, Clone)]
pub struct Site {
    pub how: How,
    /// 1-based line of the assignment
    pub line: usize,
    /// the value as written (quotes included), empty for `NAME=`
    pub value: String,
    /// the assignment's bytes (`NAME=value`)
    pub span: Range<usize>,
    /// the value's bytes (empty at the end of `NAME=` when there is none)
    pub value_span: Range<usize>,
    /// the bytes removing it drops, or why it cannot be removed alone
    pub removal: Result<Range<usize>, Refusal>,
    /// the program the assignment is given to (`torchrun`), for a prefix or `env` argument
    pub command: Option<String>,
}

impl Site {
    /// `line 3 (a prefix of torchrun)`
    pub fn place(&self) -> String {
        match &self.command {
            Some(c) => format!("line {} ({} `{c}`)", self.line, self.how.describe()),
            None => format!("line {} ({})", self.line, self.how.describe()),
        }
    }
}

/// A parsed script.
pub struct Script<'s> {
    pub src: &'s str,
    tree: Tree,
}

/// Names as the shell takes them: a letter or `_`, then letters, digits, `_`.
pub fn valid_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

impl<'s> Script<'s> {
    /// Parse a script; `Err` when it is too large, or the grammar cannot read part of it.
    pub fn parse(src: &'s str) -> Result<Script<'s>, Refusal> {
        let tree = syntax::parse(Lang::Bash, src)?;
        if let Some(at) = syntax::first_error(&tree, src) {
            return Err(Refusal::Unproven(format!(
                "the bash grammar cannot read {at} of the script, so no edit of it can be proven exact"
            )));
        }
        Ok(Script { src, tree })
    }

    /// Every place the script sets `name`, in source order.
    pub fn sites(&self, name: &str) -> Vec<Site> {
        let mut out = Vec::new();
        for n in syntax::nodes(&self.tree) {
            match n.kind() {
                "variable_assignment" => {
                    if assigned_name(n, self.src) != Some(name) {
                        continue;
                    }
                    let Some(parent) = n.parent() else { continue };
                    let how = match parent.kind() {
                        "command" => How::Prefix,
                        "declaration_command" => How::Declaration,
                        _ => How::Assignment,
                    };
                    let value = n.child_by_field_name("value");
                    let value_span = value.map_or(n.end_byte()..n.end_byte(), |v| v.byte_range());
                    let command = (how == How::Prefix)
                        .then(|| command_name(parent, self.src))
                        .flatten();
                    out.push(Site {
                        how,
                        line: line_of(self.src, n.start_byte()),
                        value: self.src[value_span.clone()].to_string(),
                        span: n.byte_range(),
                        value_span,
                        removal: self.removal(n, parent, how),
                        command,
                    });
                }
                "command" if command_name(n, self.src).as_deref() == Some("env") => {
                    self.env_args(n, name, &mut out);
                }
                _ => {}
            }
        }
        out.sort_by_key(|s| s.span.start);
        out
    }

    /// `env [-i] [-u X] NAME=value … cmd`: its assignment arguments.
    fn env_args(&self, cmd: Node, name: &str, out: &mut Vec<Site>) {
        let args: Vec<Node> = {
            let mut c = cmd.walk();
            cmd.children_by_field_name("argument", &mut c).collect()
        };
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            let t = text(a, self.src);
            if t.starts_with('-') {
                // options of env; `-u NAME` and `-C DIR` take a word
                i += if matches!(t, "-u" | "-C" | "-S") {
                    2
                } else {
                    1
                };
                continue;
            }
            let Some((n, _)) = t.split_once('=') else {
                break;
            };
            if !valid_name(n) {
                break;
            }
            if n == name {
                let next = args.get(i + 1).map(|x| x.start_byte());
                let removal = match next {
                    Some(s) => Ok(a.start_byte()..s),
                    None => Ok(gap_before(a, self.src)..a.end_byte()),
                };
                let program = args.get(i + 1..).and_then(|rest| {
                    rest.iter()
                        .map(|x| text(*x, self.src))
                        .find(|x| !x.contains('='))
                        .map(str::to_string)
                });
                let vstart = a.start_byte() + n.len() + 1;
                out.push(Site {
                    how: How::EnvArg,
                    line: line_of(self.src, a.start_byte()),
                    value: self.src[vstart..a.end_byte()].to_string(),
                    span: a.byte_range(),
                    value_span: vstart..a.end_byte(),
                    removal: if self.misread(cmd) {
                        Err(Refusal::Unproven(self.misread_note(cmd)))
                    } else {
                        removal
                    },
                    command: Some(match program {
                        Some(p) => format!("env … {p}"),
                        None => "env".into(),
                    }),
                });
            }
            i += 1;
        }
    }

    /// The bytes that removing assignment `n` (a child of `parent`) drops.
    fn removal(&self, n: Node, parent: Node, how: How) -> Result<Range<usize>, Refusal> {
        if matches!(
            parent.kind(),
            "command" | "declaration_command" | "variable_assignments"
        ) && self.misread(parent)
        {
            return Err(Refusal::Unproven(self.misread_note(parent)));
        }
        match how {
            How::Prefix => {
                let next = n.next_sibling().ok_or_else(|| {
                    Refusal::Unproven("the assignment is the last part of its command".into())
                })?;
                Ok(n.start_byte()..next.start_byte())
            }
            How::Declaration | How::Assignment => {
                // the operands of the declaration (or of `A=1 B=2` on one line)
                let ops: Vec<Node> = {
                    let mut c = parent.walk();
                    parent
                        .named_children(&mut c)
                        .filter(|o| !text(*o, self.src).starts_with('-'))
                        .collect()
                };
                let holder = if how == How::Declaration || parent.kind() == "variable_assignments" {
                    parent
                } else {
                    n
                };
                if holder == parent && ops.len() > 1 {
                    let i = ops
                        .iter()
                        .position(|o| *o == n)
                        .ok_or_else(|| Refusal::Unproven("not an operand".into()))?;
                    return Ok(match ops.get(i + 1) {
                        Some(next) => n.start_byte()..next.start_byte(),
                        None => gap_before(n, self.src)..n.end_byte(),
                    });
                }
                self.whole_line(holder)
            }
            How::EnvArg => Err(Refusal::Unproven("not an assignment node".into())),
        }
    }

    /// The line of a statement, when the statement is all the line holds.
    fn whole_line(&self, stmt: Node) -> Result<Range<usize>, Refusal> {
        let src = self.src;
        let start = src[..stmt.start_byte()].rfind('\n').map_or(0, |i| i + 1);
        let end = src[stmt.end_byte()..]
            .find('\n')
            .map_or(src.len(), |i| stmt.end_byte() + i + 1);
        let before = &src[start..stmt.start_byte()];
        let after = &src[stmt.end_byte()..end];
        if before.trim().is_empty() && after.trim().is_empty() {
            Ok(start..end)
        } else {
            Err(Refusal::Unproven(format!(
                "line {} holds more than `{}`",
                line_of(src, stmt.start_byte()),
                text(stmt, src)
            )))
        }
    }

    /// Does the grammar read this command across a line break bash would end it at?
    fn misread(&self, n: Node) -> bool {
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        kids.windows(2).any(|w| {
            let gap = &self.src[w[0].end_byte()..w[1].start_byte()];
            gap.replace("\\\r\n", "").replace("\\\n", "").contains('\n')
        })
    }

    fn misread_note(&self, n: Node) -> String {
        format!(
            "the bash grammar reads lines {}-{} as one command, which bash does not",
            line_of(self.src, n.start_byte()),
            line_of(self.src, n.end_byte())
        )
    }

    /// Lines (outside comments) where `NAME=` or `NAME+=` is written but no site is: a string
    /// run by `bash -c`, an `eval`, a heredoc.
    fn unread_mentions(&self, name: &str, sites: &[Site]) -> Vec<usize> {
        let comments: Vec<Range<usize>> = syntax::nodes(&self.tree)
            .into_iter()
            .filter(|n| n.kind() == "comment")
            .map(|n| n.byte_range())
            .collect();
        let b = self.src.as_bytes();
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(i) = self.src[from..].find(name).map(|i| i + from) {
            from = i + name.len();
            let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
            if i > 0 && ident(b[i - 1]) {
                continue;
            }
            let rest = &self.src[from..];
            if !(rest.starts_with('=') || rest.starts_with("+=")) {
                continue;
            }
            if comments.iter().any(|c| c.contains(&i)) || sites.iter().any(|s| s.span.start == i) {
                continue;
            }
            let l = line_of(self.src, i);
            if !out.contains(&l) {
                out.push(l);
            }
        }
        out
    }

    /// The one site an edit of `name` may touch: `Ok(None)` when the script does not set it.
    fn only_site(&self, name: &str) -> Result<Option<Site>, Refusal> {
        let sites = self.sites(name);
        let unread = self.unread_mentions(name, &sites);
        if !unread.is_empty() {
            let lines: Vec<String> = unread.iter().map(|l| l.to_string()).collect();
            return Err(Refusal::Unproven(format!(
                "`{name}=` is also written on line {} in a form gpufix does not read as an assignment (a quoted command, eval or heredoc), so it cannot prove one edit removes it",
                lines.join(", ")
            )));
        }
        match sites.len() {
            0 => Ok(None),
            1 => Ok(sites.into_iter().next()),
            _ => {
                let places: Vec<String> = sites.iter().map(Site::place).collect();
                Err(Refusal::Unproven(format!(
                    "{name} is set in {} places ({}): gpufix edits a value only where exactly one place sets it",
                    places.len(),
                    places.join(", ")
                )))
            }
        }
    }
}

/// The name a `variable_assignment` assigns (`A` of `A=1`, not of `A[1]=x`).
fn assigned_name<'s>(n: Node, src: &'s str) -> Option<&'s str> {
    let name = n.child_by_field_name("name")?;
    (name.kind() == "variable_name").then(|| text(name, src))
}

/// The program a command runs, as written (`torchrun`).
fn command_name(cmd: Node, src: &str) -> Option<String> {
    cmd.child_by_field_name("name")
        .map(|n| text(n, src).to_string())
}

/// Where the blank run before `n` begins (to drop ` B=2` at the end of `export A=1 B=2`).
fn gap_before(n: Node, src: &str) -> usize {
    let s = n.start_byte();
    s - (src[..s].len() - src[..s].trim_end_matches([' ', '\t']).len())
}

/// Quote a value for the shell the way the old value was quoted where that is exact, else bare
/// when it needs no quoting, else in single quotes.
pub fn quote(value: &str, like: &str) -> String {
    let bare = !value.is_empty()
        && value
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_./:,=@%+-".contains(&c));
    if like.starts_with('"') && !value.contains(['"', '$', '`', '\\', '!']) {
        return format!("\"{value}\"");
    }
    if like.starts_with('\'') || !bare {
        return format!("'{}'", value.replace('\'', r"'\''"));
    }
    value.to_string()
}

/// Remove the one place the script sets `name` — an assignment, or an entry of a Slurm batch
/// script's `#SBATCH --export=` list ([`Script::sbatch_exports`]). Unchanged when it sets it
/// nowhere; refused when it sets it in more than one place, or the edit cannot be proven exact.
pub fn unset(src: &str, name: &str) -> Result<String, Refusal> {
    let sc = Script::parse(src)?;
    let sbatch = sc.sbatch_exports(name);
    let site = match sc.only_site(name) {
        Err(Refusal::Unproven(why)) if !sbatch.is_empty() => {
            return Err(Refusal::Unproven(format!(
                "{why}; it is also named by `#SBATCH --export` on line {}",
                sbatch[0].line
            )));
        }
        r => r?,
    };
    match (site, sbatch.as_slice()) {
        (None, []) => Ok(src.to_string()),
        (None, [one]) => {
            let place = format!("line {} (#SBATCH --export)", one.line);
            let with = one
                .without
                .clone()
                .map_err(|why| Refusal::Unproven(format!("{name} is set on {place}: {why}")))?;
            syntax::check_edit(Lang::Bash, src, one.comment.clone(), &with)
                .map_err(|why| Refusal::Unproven(format!("{name} is set on {place}: {why}")))
        }
        (site, more) => {
            let mut places: Vec<String> = site.iter().map(Site::place).collect();
            places.extend(
                more.iter()
                    .map(|e| format!("line {} (#SBATCH --export)", e.line)),
            );
            if places.len() > 1 {
                return Err(Refusal::Unproven(format!(
                    "{name} is set in {} places ({}): gpufix edits a value only where exactly one place sets it",
                    places.len(),
                    places.join(", ")
                )));
            }
            let site = site.expect("one place, not an #SBATCH entry");
            let place = site.place();
            let range = site
                .removal
                .map_err(|why| Refusal::Unproven(format!("{name} is set on {place}: {why}")))?;
            syntax::check_edit(Lang::Bash, src, range, "")
                .map_err(|why| Refusal::Unproven(format!("{name} is set on {place}: {why}")))
        }
    }
}

/// One entry naming a variable in an `#SBATCH --export=` list of a batch script's header.
#[derive(Debug, Clone)]
pub struct SbatchExport {
    /// 1-based line of the `#SBATCH` comment
    pub line: usize,
    /// the comment token's bytes
    pub comment: Range<usize>,
    /// the comment with this entry (and one comma beside it) taken out, or why it cannot be
    pub without: Result<String, Refusal>,
}

impl Script<'_> {
    /// The entries of `#SBATCH --export=` lists that name `name` (`ALL,NAME=1` or `NAME`).
    /// sbatch(1) reads `#SBATCH` lines only before the first command of the script, so only
    /// the comments the tree holds before its first other node count; `--export`'s value is a
    /// comma-separated list of `ALL`, `NIL`, `NONE`, `NAME` and `NAME=value` (sbatch(1),
    /// "--export"). A quoted list is not taken apart: its entries are refused.
    pub fn sbatch_exports(&self, name: &str) -> Vec<SbatchExport> {
        let mut out = Vec::new();
        let root = self.tree.root_node();
        let mut c = root.walk();
        for n in root.named_children(&mut c) {
            if n.kind() != "comment" {
                break;
            }
            let t = text(n, self.src);
            let Some(opts) = t.strip_prefix("#SBATCH") else {
                continue;
            };
            // offsets in the comment's text
            let base = "#SBATCH".len();
            // the words of the options, with their offsets in the comment
            let mut words: Vec<(usize, &str)> = Vec::new();
            let mut at = 0;
            for w in opts.split([' ', '\t']) {
                if !w.is_empty() {
                    words.push((at, w));
                }
                at += w.len() + 1;
            }
            for (i, (off, w)) in words.iter().enumerate() {
                if w.starts_with('#') {
                    break; // a comment after the options
                }
                let (list_at, list) = if let Some(v) = w.strip_prefix("--export=") {
                    (off + "--export=".len(), v)
                } else if *w == "--export" {
                    match words.get(i + 1) {
                        Some((o, v)) => (*o, *v),
                        None => continue,
                    }
                } else {
                    continue;
                };
                let items: Vec<&str> = list.split(',').collect();
                let mut from = 0;
                for (k, item) in items.iter().enumerate() {
                    let start = from;
                    from += item.len() + 1;
                    if !(*item == name || item.starts_with(&format!("{name}="))) {
                        continue;
                    }
                    let without = if list.contains(['"', '\'']) {
                        Err(Refusal::Unproven(
                            "the `--export` list is quoted, which gpufix does not take apart"
                                .to_string(),
                        ))
                    } else if items.len() == 1 {
                        Err(Refusal::Unproven("it is the only entry of `--export`, and without it the option would mean something else".to_string()))
                    } else {
                        // drop the entry and the comma after it (before it, for the last one)
                        let (a, z) = if k + 1 < items.len() {
                            (start, start + item.len() + 1)
                        } else {
                            (start - 1, start + item.len())
                        };
                        let (a, z) = (base + list_at + a, base + list_at + z);
                        Ok(format!("{}{}", &t[..a], &t[z..]))
                    };
                    out.push(SbatchExport {
                        line: line_of(self.src, n.start_byte()),
                        comment: n.byte_range(),
                        without,
                    });
                }
            }
        }
        out
    }
}

/// Does the script name `name` anywhere gpufix reads: an assignment or an `#SBATCH --export`
/// entry?
pub fn names(src: &str, name: &str) -> bool {
    Script::parse(src)
        .is_ok_and(|sc| !sc.sites(name).is_empty() || !sc.sbatch_exports(name).is_empty())
}

/// Does the script set `name` anywhere gpufix can read?
pub fn sets(src: &str, name: &str) -> Result<Vec<Site>, Refusal> {
    Ok(Script::parse(src)?.sites(name))
}

/// Change the value of the one place the script sets `name`; when no place does, add
/// `export NAME=value` before the first command the script runs (or at the end of a script
/// that runs none), so the commands below see it.
pub fn set(src: &str, name: &str, value: &str) -> Result<String, Refusal> {
    if !valid_name(name) {
        return Err(Refusal::Invalid(format!(
            "`{name}` is not valid in a shell file (letters, digits and _ only)"
        )));
    }
    if value.contains(['\n', '\r', '\0']) {
        return Err(Refusal::Invalid(format!(
            "the value of {name} contains a newline or NUL, which gpufix does not write into a script"
        )));
    }
    let sc = Script::parse(src)?;
    match sc.only_site(name)? {
        Some(site) => {
            let q = quote(value, &site.value);
            if site.value == q {
                return Ok(src.to_string());
            }
            syntax::check_edit(Lang::Bash, src, site.value_span.clone(), &q).map_err(|why| {
                Refusal::Unproven(format!("{name} is set on {}: {why}", site.place()))
            })
        }
        None => {
            let root = sc.tree.root_node();
            let mut c = root.walk();
            let first_cmd = root.named_children(&mut c).find(|n| {
                !matches!(
                    n.kind(),
                    "comment"
                        | "declaration_command"
                        | "variable_assignment"
                        | "variable_assignments"
                )
            });
            let nl = if src.contains("\r\n") { "\r\n" } else { "\n" };
            let line = format!("export {name}={}", quote(value, ""));
            let (at, with) = match first_cmd {
                Some(n) => {
                    let at = src[..n.start_byte()].rfind('\n').map_or(0, |i| i + 1);
                    (at, format!("{line}{nl}"))
                }
                None if src.is_empty() || src.ends_with('\n') => (src.len(), format!("{line}{nl}")),
                None => (src.len(), format!("{nl}{line}")),
            };
            Ok(syntax::check_edit(Lang::Bash, src, at..at, &with)?)
        }
    }
}

/// The files a script reads with `source FILE` or `. FILE`, where FILE is written out (a path
/// built from `$VAR` or `$(…)` is not followed): (line, path as written).
pub fn sourced(src: &str) -> Vec<(usize, String)> {
    let Ok(sc) = Script::parse(src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for cmd in syntax::nodes(&sc.tree)
        .into_iter()
        .filter(|n| n.kind() == "command")
    {
        if !matches!(command_name(cmd, src).as_deref(), Some("source" | ".")) {
            continue;
        }
        let mut c = cmd.walk();
        let args: Vec<Node> = cmd.children_by_field_name("argument", &mut c).collect();
        let [a] = args.as_slice() else { continue };
        let path = match a.kind() {
            "word" => text(*a, src).to_string(),
            "raw_string" => text(*a, src).trim_matches('\'').to_string(),
            "string"
                if a.named_child_count() <= 1
                    && a.named_child(0)
                        .is_none_or(|k| k.kind() == "string_content") =>
            {
                text(*a, src).trim_matches('"').to_string()
            }
            _ => continue,
        };
        if !path.is_empty() && !path.contains(['$', '`', '*', '?', '~']) {
            out.push((line_of(src, cmd.start_byte()), path));
        }
    }
    out
}

/// One flag with a value on a command line: `--nproc_per_node 8` or `--nproc_per_node=8`.
#[derive(Debug, Clone)]
pub struct Flag {
    pub flag: String,
    /// 1-based line the command starts on
    pub line: usize,
    /// the value as written
    pub value: String,
    /// the bytes an edit replaces: the value word, or the whole `FLAG=value` word
    pub span: Range<usize>,
    /// `FLAG=value` in one word
    pub joined: bool,
}

impl Script<'_> {
    /// Every `FLAG VALUE` / `FLAG=VALUE` argument of every command.
    pub fn flags(&self) -> Vec<Flag> {
        let mut out = Vec::new();
        for cmd in syntax::nodes(&self.tree)
            .into_iter()
            .filter(|n| n.kind() == "command")
        {
            if self.misread(cmd) {
                continue;
            }
            let args: Vec<Node> = {
                let mut c = cmd.walk();
                cmd.children_by_field_name("argument", &mut c).collect()
            };
            let line = line_of(self.src, cmd.start_byte());
            for (i, a) in args.iter().enumerate() {
                let t = text(*a, self.src);
                if !t.starts_with('-') || t == "-" || t == "--" {
                    continue;
                }
                if let Some((f, v)) = t.split_once('=') {
                    if f.contains(['"', '\'', '$', ' ']) {
                        continue;
                    }
                    out.push(Flag {
                        flag: f.to_string(),
                        line,
                        value: v.to_string(),
                        span: a.byte_range(),
                        joined: true,
                    });
                } else if let Some(v) = args.get(i + 1) {
                    let vt = text(*v, self.src);
                    if vt.starts_with('-') && vt.parse::<f64>().is_err() {
                        continue;
                    }
                    out.push(Flag {
                        flag: t.to_string(),
                        line,
                        value: vt.to_string(),
                        span: v.byte_range(),
                        joined: false,
                    });
                }
            }
        }
        out
    }

    /// The one `flag` on the command that starts on `line`.
    fn only_flag(&self, flag: &str, line: usize) -> Result<Flag, Refusal> {
        let hits: Vec<Flag> = self
            .flags()
            .into_iter()
            .filter(|f| f.flag == flag && f.line == line)
            .collect();
        match hits.len() {
            1 => Ok(hits.into_iter().next().unwrap()),
            0 if self
                .src
                .lines()
                .nth(line.saturating_sub(1))
                .is_some_and(|l| l.contains(flag)) =>
            {
                Err(Refusal::Unproven(format!(
                    "`{flag}` on line {line} is not an argument of a command the bash grammar reads there (a quoted command, a wrapper string): gpufix does not edit inside it"
                )))
            }
            0 => Err(Refusal::Invalid(format!(
                "no `{flag} VALUE` on the command starting on line {line}"
            ))),
            n => Err(Refusal::Unproven(format!(
                "`{flag}` is given {n} times on the command starting on line {line}: gpufix cannot tell which one counts"
            ))),
        }
    }
}

/// A flag's value as written on the command starting on `line`.
pub fn get_flag(src: &str, flag: &str, line: usize) -> Option<String> {
    Script::parse(src)
        .ok()?
        .only_flag(flag, line)
        .ok()
        .map(|f| f.value)
}

/// The line of the one command that gives `flag` the value `value`, when exactly one does.
pub fn flag_line(src: &str, flag: &str, value: &str) -> Option<usize> {
    let sc = Script::parse(src).ok()?;
    let hits: Vec<usize> = sc
        .flags()
        .into_iter()
        .filter(|f| f.flag == flag && f.value == value)
        .map(|f| f.line)
        .collect();
    (hits.len() == 1).then(|| hits[0])
}

/// Give `flag` on the command starting on `line` the value `value`: only its value changes.
pub fn set_flag(src: &str, flag: &str, line: usize, value: &str) -> Result<String, Refusal> {
    if value.contains(['\n', '\r', '\0']) {
        return Err(Refusal::Invalid(format!(
            "the value for {flag} contains a newline or NUL"
        )));
    }
    let sc = Script::parse(src)?;
    let f = sc.only_flag(flag, line)?;
    let q = quote(value, &f.value);
    let with = if f.joined { format!("{flag}={q}") } else { q };
    if src[f.span.clone()] == with {
        return Ok(src.to_string());
    }
    syntax::check_edit(Lang::Bash, src, f.span, &with)
        .map_err(|why| Refusal::Unproven(format!("`{flag}` on line {line}: {why}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN_SH: &str = "#!/bin/bash\nexport NCCL_DEBUG=INFO\nNCCL_P2P_DISABLE=1 torchrun --nproc_per_node=8 train.py --config cfg.yaml\nexport CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8\n";

    #[test]
    fn the_issue_script_loses_only_the_named_assignment() {
        let out = unset(RUN_SH, "NCCL_P2P_DISABLE").unwrap();
        assert_eq!(
            out,
            RUN_SH.replace("NCCL_P2P_DISABLE=1 torchrun", "torchrun")
        );
        let out = unset(RUN_SH, "CUDA_LAUNCH_BLOCKING").unwrap();
        assert_eq!(
            out,
            RUN_SH.replace(
                "export CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8",
                "export OMP_NUM_THREADS=8"
            )
        );
        let out = unset(RUN_SH, "NCCL_DEBUG").unwrap();
        assert_eq!(out, RUN_SH.replace("export NCCL_DEBUG=INFO\n", ""));
        // twice: nothing more to do
        assert_eq!(unset(&out, "NCCL_DEBUG").unwrap(), out);
    }

    #[test]
    fn multi_name_export_declare_and_env_arguments() {
        assert_eq!(unset("export A=1 B=1\n", "A").unwrap(), "export B=1\n");
        assert_eq!(unset("export A=1 B=1\n", "B").unwrap(), "export A=1\n");
        assert_eq!(
            unset("declare -x A=1 B=1\n", "B").unwrap(),
            "declare -x A=1\n"
        );
        // a lone operand takes its line: `declare -x` alone would print every variable
        assert_eq!(unset("declare -x A=1\nx\n", "A").unwrap(), "x\n");
        assert_eq!(
            unset("env A=1 python train.py --lr 1\n", "A").unwrap(),
            "env python train.py --lr 1\n"
        );
        assert_eq!(
            unset("env -u X A=1 B=2 python t.py\n", "A").unwrap(),
            "env -u X B=2 python t.py\n"
        );
    }

    #[test]
    fn heredocs_continuations_comments_and_quotes_survive() {
        let src = "#!/bin/bash\n# keep me\ncat > cfg.yaml <<EOF\nworkers: 2\nA: \"$HOME\"\nEOF\nCUDA_LAUNCH_BLOCKING=1 \\\n  NCCL_DEBUG='INFO' \\\n  torchrun \\\n  --nproc_per_node 8 train.py  # run\n";
        let out = unset(src, "CUDA_LAUNCH_BLOCKING").unwrap();
        assert_eq!(out, src.replace("CUDA_LAUNCH_BLOCKING=1 \\\n  ", ""));
        let out = set(src, "NCCL_DEBUG", "WARN").unwrap();
        assert_eq!(out, src.replace("'INFO'", "'WARN'"));
    }

    #[test]
    fn a_value_set_in_two_places_is_refused_with_where() {
        let src = "export A=1\nA=2 python t.py\n";
        let err = unset(src, "A").unwrap_err().to_string();
        assert!(err.contains("set in 2 places"), "{err}");
        assert!(err.contains("line 1 (an export/declare)"), "{err}");
        assert!(
            err.contains("line 2 (a prefix of a command `python`)"),
            "{err}"
        );
        let err = set(src, "A", "0").unwrap_err().to_string();
        assert!(err.contains("set in 2 places"), "{err}");
    }

    #[test]
    fn what_the_grammar_cannot_show_is_refused() {
        // inside a quoted command
        let err = unset("export A=1\nbash -c \"A=2 python t.py\"\n", "A")
            .unwrap_err()
            .to_string();
        assert!(err.contains("also written on line 2"), "{err}");
        // `A=1 B=2` alone on a line is read as prefixes of the next line's command
        let err = unset("A=1 B=2\npython t.py\n", "A")
            .unwrap_err()
            .to_string();
        assert!(err.contains("reads lines 1-2 as one command"), "{err}");
        // a line that holds more than the export
        let err = unset("export A=1; python t.py\n", "A")
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds more than"), "{err}");
        // a syntax error
        let err = unset("if then\nexport A=1\n", "A").unwrap_err().to_string();
        assert!(err.contains("cannot read line"), "{err}");
        // a comment is no place
        assert_eq!(
            unset("# A=1 for debugging\nexport A=1\n", "A").unwrap(),
            "# A=1 for debugging\n"
        );
    }

    #[test]
    fn set_changes_the_value_or_adds_an_export_before_the_first_command() {
        assert_eq!(
            set(RUN_SH, "NCCL_DEBUG", "WARN").unwrap(),
            RUN_SH.replace("NCCL_DEBUG=INFO", "NCCL_DEBUG=WARN")
        );
        assert_eq!(
            set("#!/bin/sh\n# job\nexport X=1\npython t.py\n", "Y", "a b").unwrap(),
            "#!/bin/sh\n# job\nexport X=1\nexport Y='a b'\npython t.py\n"
        );
        assert_eq!(set("A=1\n", "B", "2").unwrap(), "A=1\nexport B=2\n");
        assert_eq!(set("", "B", "2").unwrap(), "export B=2\n");
        let once = set(RUN_SH, "NCCL_DEBUG", "WARN").unwrap();
        assert_eq!(set(&once, "NCCL_DEBUG", "WARN").unwrap(), once);
    }

    #[test]
    fn sourced_files_written_out_are_listed() {
        let src = "#!/bin/bash\nsource ./env.sh\n. \"/etc/job env.sh\"\nsource $HOME/x.sh\nsource a.sh b\n";
        assert_eq!(
            sourced(src),
            [
                (2, "./env.sh".to_string()),
                (3, "/etc/job env.sh".to_string())
            ]
        );
    }

    #[test]
    fn an_sbatch_export_entry_is_removed_alone() {
        let src = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --export=ALL,A=1,B=2\nsrun python t.py\n";
        assert_eq!(
            unset(src, "A").unwrap(),
            src.replace("ALL,A=1,B=2", "ALL,B=2")
        );
        assert_eq!(unset(src, "B").unwrap(), src.replace(",B=2", ""));
        // applying twice changes nothing
        let once = unset(src, "A").unwrap();
        assert_eq!(unset(&once, "A").unwrap(), once);
        assert!(names(src, "A") && !names(&once, "A"));
        // `--export VALUE`, a bare name
        let src2 = "#SBATCH --export NONE,A,B=2\nsrun t\n";
        assert_eq!(unset(src2, "A").unwrap(), src2.replace("NONE,A,", "NONE,"));
        // the only entry: without it `--export=` would mean something else
        let err = unset("#SBATCH --export=A=1\nsrun t\n", "A").unwrap_err();
        assert!(err.to_string().contains("only entry"), "{err}");
        // quoted lists are not taken apart
        let err = unset("#SBATCH --export=\"ALL,A=1\"\nsrun t\n", "A").unwrap_err();
        assert!(err.to_string().contains("quoted"), "{err}");
        // set twice: by the header and by an export in the body
        let err = unset("#SBATCH --export=ALL,A=1\nexport A=2\nsrun t\n", "A").unwrap_err();
        assert!(err.to_string().contains("set in 2 places"), "{err}");
        assert!(
            err.to_string().contains("line 1 (#SBATCH --export)"),
            "{err}"
        );
        // sbatch stops reading #SBATCH at the first command: a later one is a plain comment
        let late = "srun t\n#SBATCH --export=ALL,A=1\n";
        assert_eq!(unset(late, "A").unwrap(), late);
    }

    #[test]
    fn a_flag_value_changes_alone() {
        let src = "torchrun --nproc_per_node=8 train.py \\
  --dataloader_num_workers 0 \\
  --lr 1e-4 # fast
";
        assert_eq!(flag_line(src, "--dataloader_num_workers", "0"), Some(1));
        assert_eq!(get_flag(src, "--nproc_per_node", 1).as_deref(), Some("8"));
        assert_eq!(
            set_flag(src, "--dataloader_num_workers", 1, "8").unwrap(),
            src.replace("workers 0", "workers 8")
        );
        assert_eq!(
            set_flag(src, "--nproc_per_node", 1, "4").unwrap(),
            src.replace("node=8", "node=4")
        );
        let err = set_flag("python t.py -j 1 -j 2\n", "-j", 1, "4").unwrap_err();
        assert!(err.to_string().contains("given 2 times"), "{err}");
        let err = set_flag("bash -c \"python t.py -j 1\"\n", "-j", 1, "4").unwrap_err();
        assert!(matches!(err, Refusal::Unproven(_)), "{err}");
    }
}
