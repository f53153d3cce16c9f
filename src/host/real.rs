//! The live machine (optionally with files read under `--root`).
