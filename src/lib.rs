//! gpufix: rule-based remediation for GPU training hosts. See README.md and DESIGN.md for the
//! pipeline (load → validate → order → observe → evaluate → plan → apply → rollback).

pub mod host;
pub mod probes;
pub mod report;
pub mod engine;
pub mod fixes;
pub mod playbook;
pub mod render;
pub mod cli;
pub mod crashpoint;
pub mod journal;
pub mod apply;
pub mod plan;
