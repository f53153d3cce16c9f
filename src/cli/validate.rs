//! `gpufix validate`: check playbooks and values without probing anything.

use super::{Global, print_diagnostics};
use crate::playbook::{self, Tier};
use crate::session::ExitStatus;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Playbook files or directories to check with the built-ins (default: the built-ins,
    /// /etc/gpufix/playbooks.d and --playbooks).
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub rules: super::RuleOpts,
}

pub fn run(g: &Global, a: &ValidateArgs) -> anyhow::Result<ExitStatus> {
    let mut sources = match g.sources() {
        Ok(s) => s,
        Err(d) => return Ok(print_diagnostics(&d)),
    };
    for p in &a.paths {
        match crate::session::read_playbooks(p, Tier::Cli) {
            Ok(s) => {
                // a path that is the built-in playbooks dir replaces the embedded copies
                let names: Vec<String> = s.iter().map(|f| f.name.clone()).collect();
                sources.retain(|b| {
                    !(b.tier == Tier::Builtin
                        && names
                            .iter()
                            .any(|n| n.ends_with(b.name.trim_start_matches("builtin:"))))
                });
                sources.extend(s)
            }
            Err(d) => return Ok(print_diagnostics(&[d])),
        }
    }
    let values = match g.values_source() {
        Ok(v) => v,
        Err(d) => return Ok(print_diagnostics(&d)),
    };
    match playbook::validate::load(&sources, values.as_ref()) {
        Ok(set) => {
            let files: std::collections::BTreeSet<&str> =
                set.rules.iter().map(|r| r.source.as_str()).collect();
            println!(
                "ok: {} rules in {} playbook files are valid",
                set.rules.len(),
                files.len()
            );
            Ok(ExitStatus::Clean)
        }
        Err(d) => Ok(print_diagnostics(&d)),
    }
}
