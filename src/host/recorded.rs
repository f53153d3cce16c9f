//! Snapshot replay and recording.
