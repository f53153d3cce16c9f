//! gpufix: rule-based remediation for GPU training hosts. The pipeline is load → validate →
//! order → observe → evaluate → plan → apply → rollback: [`playbook`] loads and checks the rules,
//! [`engine`] observes and evaluates them, [`plan`] and [`apply`] turn findings into changes,
//! [`session`] holds one run's host, inputs and rules; docs/authoring.md ("How gpufix evaluates
//! playbooks") tells the same for users.

pub mod apply;
pub mod authority;
pub mod cli;
pub mod crashpoint;
pub mod engine;
pub mod escape;
pub mod evidence;
pub mod expr;
pub mod fixes;
pub mod formats;
pub mod host;
pub mod journal;
pub mod kinds;
pub mod plan;
pub mod playbook;
pub mod privacy;
pub mod probes;
pub mod record;
pub mod render;
pub mod report;
pub mod safe_write;
pub mod session;
pub mod tempfiles;
pub mod trust;
pub mod vocab;

/// A public artifact of `tests/fixtures/corpus/` (see its README), for unit tests.
#[cfg(test)]
pub(crate) fn test_corpus(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
