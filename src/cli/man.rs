//! `gpufix man`: man pages generated from the clap definitions, one per subcommand
//! (`gpufix-plan(1)`, `gpufix-audit(1)`, ...) plus `gpufix(1)`, each with the sections a man
//! page reader expects and clap does not write: EXIT STATUS, FILES, ENVIRONMENT, SEE ALSO.

use super::Cli;
use crate::session::ExitStatus;
use clap::{Args, CommandFactory};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write gpufix.1 and gpufix-SUBCOMMAND.1 for every subcommand into DIR instead of printing
    /// gpufix.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(a: &ManArgs) -> anyhow::Result<ExitStatus> {
    match &a.dir {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&page(None)?)?;
        }
        Some(dir) => {
            for (name, bytes) in pages()? {
                let path = dir.join(format!("{name}.1"));
                write_page(&path, &bytes)?;
            }
        }
    }
    Ok(ExitStatus::Clean)
}

fn write_page(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, bytes).map_err(|e| {
        anyhow::anyhow!(
            "cannot write {}: {e}\nhelp: give --dir an existing directory you can write to",
            path.display()
        )
    })
}

/// Every page: `gpufix` and `gpufix-SUB` for each subcommand, as (name, roff).
pub fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut out = vec![("gpufix".to_string(), page(None)?)];
    let cmd = Cli::command();
    for sub in cmd.get_subcommands() {
        let name = sub.get_name().to_string();
        out.push((format!("gpufix-{name}"), page(Some(&name))?));
    }
    Ok(out)
}

/// The roff of `gpufix(1)` (`None`) or `gpufix-SUB(1)`.
pub fn page(sub: Option<&str>) -> anyhow::Result<Vec<u8>> {
    let mut root = Cli::command();
    root.build();
    let cmd = match sub {
        None => root.clone(),
        Some(s) => root
            .find_subcommand(s)
            .ok_or_else(|| anyhow::anyhow!("no subcommand `{s}`"))?
            .clone()
            // clap names are `&'static str` (no `string` feature); a few bytes per page, once.
            .name(&*Box::leak(format!("gpufix-{s}").into_boxed_str()))
            .bin_name(format!("gpufix {s}"))
            .version(env!("CARGO_PKG_VERSION")),
    };
    let man = clap_mangen::Man::new(cmd.clone())
        .section("1")
        .manual("gpufix manual");
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut buf)?;
    }
    if sub.is_none() {
        man.render_subcommands_section(&mut buf)?;
    }
    // after_help holds the examples; .nf keeps their columns as written.
    if let Some(extra) = cmd.get_after_help() {
        section(&mut buf, "EXAMPLES");
        buf.extend_from_slice(b".nf\n");
        for line in extra.to_string().lines() {
            if line.starts_with("Exit status:") {
                continue;
            }
            buf.extend_from_slice(roff_line(line).as_bytes());
            buf.push(b'\n');
        }
        buf.extend_from_slice(b".fi\n");
    }
    section(&mut buf, "EXIT STATUS");
    text(&mut buf, exit_status(sub));
    section(&mut buf, "FILES");
    text(
        &mut buf,
        "/etc/gpufix/playbooks.d/*.yaml: site playbooks, read after the built-in ones (not with --no-system). \
/etc/gpufix/values.yaml: parameters, disabled rules and waivers (--values overrides). \
/var/lib/gpufix: the apply journal (runs/RUN), the lock; --state-dir points elsewhere. \
All of /etc/gpufix and /var/lib/gpufix must be owned by root and not group- or world-writable.",
    );
    section(&mut buf, "ENVIRONMENT");
    text(
        &mut buf,
        "NO_COLOR: when set and not empty, --color auto prints no color. \
The Slurm health check (gpufix-healthcheck) reads GPUFIX, SCONTROL, GPUFIX_AUDIT_ARGS, GPUFIX_TIMEOUT, \
GPUFIX_NODENAME and GPUFIX_ON_ERROR; the NHC check reads GPUFIX_BIN, GPUFIX_NHC_TIMEOUT and GPUFIX_ON_ERROR.",
    );
    section(&mut buf, "SEE ALSO");
    let mut see: Vec<String> = Vec::new();
    if sub.is_some() {
        see.push("gpufix(1)".into());
    }
    for s in Cli::command().get_subcommands() {
        if Some(s.get_name()) != sub {
            see.push(format!("gpufix-{}(1)", s.get_name()));
        }
    }
    see.extend(["nvidia-smi(1)", "dcgmi(1)", "nhc(8)"].map(String::from));
    text(&mut buf, &see.join(", "));
    man.render_version_section(&mut buf)?;
    Ok(buf)
}

fn exit_status(sub: Option<&str>) -> &'static str {
    match sub {
        Some("audit") => {
            "0: nothing counted as failing. 2: findings that count (by default any fail, unknown or blocked rule; \
--fail-on, --fail-on-unknown and --profile choose; --format slurm counts only failed critical rules of the driver and cuda \
layers unless told otherwise). 1: an error: bad arguments, invalid playbooks or values, an unreadable input. \
With --format nagios: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (errors and bad arguments included)."
        }
        Some("plan") => {
            "0: nothing found. 2: findings (a rule failed, is unknown or blocked). 1: an error: bad arguments, \
invalid playbooks or values, an unreadable input."
        }
        Some("apply") => {
            "0: applied and verified, or nothing to do. 1: an error, a refused plan, or a change that failed and was \
rolled back. 4: every change was made and verified, but re-checking the rules afterwards failed (the changes stay)."
        }
        Some("validate") => {
            "0: the playbooks and values are valid. 1: problems were found (all are printed)."
        }
        _ => "0: success. 1: an error, including bad arguments.",
    }
}

fn section(buf: &mut Vec<u8>, name: &str) {
    buf.extend_from_slice(format!(".SH \"{name}\"\n").as_bytes());
}

fn text(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(roff_line(s).as_bytes());
    buf.push(b'\n');
}

/// One line of running text: backslashes escaped, and a leading `.` or `'` (a roff request)
/// protected with the zero-width `\&`.
fn roff_line(s: &str) -> String {
    let s = s.replace('\\', "\\e");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}
