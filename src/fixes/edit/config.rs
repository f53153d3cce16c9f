//! Structured config files (YAML, JSON, TOML).
