//! gpufix: rule-based remediation for GPU training hosts. See README.md and DESIGN.md for the
//! pipeline (load → validate → order → observe → evaluate → plan → apply → rollback).

pub mod apply;
pub mod cli;
pub mod crashpoint;
pub mod engine;
pub mod escape;
pub mod evidence;
pub mod fixes;
pub mod formats;
pub mod host;
pub mod journal;
pub mod kinds;
pub mod plan;
pub mod playbook;
pub mod privacy;
pub mod probes;
pub mod render;
pub mod report;
pub mod safe_write;
pub mod session;
pub mod trust;
