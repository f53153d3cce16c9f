//! gpufix: rule-based remediation for GPU training hosts. See README.md and DESIGN.md for the
//! pipeline (load → validate → order → observe → evaluate → plan → apply → rollback).

pub mod evidence;
pub mod host;
pub mod probes;
pub mod report;
