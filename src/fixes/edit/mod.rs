//! The text editors behind the file-changing fix kinds now live in [`crate::formats`], one
//! module per format, shared with the probes that read the same files. These names stay so the
//! fix kinds keep their imports.

pub use crate::formats::{EditError, config, env, fstab, line};
pub use crate::formats::{modprobe as module_conf, sysctl as sysctl_conf};
