//! One reader/editor per file format, shared by the probes, the fixes and the evidence parser.

pub mod job_text;
pub mod launcher;
pub mod python;
