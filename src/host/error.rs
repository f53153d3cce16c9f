//! What a host answers when it cannot read NVML, run the CUDA check or make a change.
//!
//! The variants are the cases a caller tells apart: a probe reports `unknown` for what the
//! pasted evidence does not cover ([`HostError::NotInEvidence`]) but `available: false` for an
//! NVML that failed on the host ([`HostError::NvmlInit`]); a host that cannot make a change at
//! all ([`HostError::Unsupported`]) is not a change that was tried and failed
//! ([`HostError::Command`], [`HostError::Setting`]). Each displays as the sentence gpufix has
//! always printed for it, so reports and recorded snapshots read the same.
//!
//! A snapshot records an error as its text (`{"error": "NVML cannot be loaded: …"}`), which
//! keeps recordings readable and old ones loadable; [`HostError::from_recorded`] reads the
//! shapes that callers branch on back into their variants and keeps any other text as
//! [`HostError::Recorded`].

use super::NOT_IN_EVIDENCE;

/// Why a host could not answer an NVML, CUDA-check or change request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// This kind of host cannot do it at all (a snapshot cannot change GPU settings; pasted
    /// evidence cannot run the CUDA check): nothing was tried.
    #[error("{host}: {what}")]
    Unsupported { host: String, what: String },
    /// The pasted evidence does not cover it: whatever asked is unknown, not failing.
    #[error("{what}: {NOT_IN_EVIDENCE}")]
    NotInEvidence { what: String },
    /// A snapshot holds no answer of this kind.
    #[error("{what} was not recorded in this snapshot")]
    NotRecorded { what: String },
    /// NVML could not be initialised (no library, no driver, no permission), or nvidia-smi
    /// said so in pasted evidence: the sentence a user can act on.
    #[error("{message}")]
    NvmlInit { message: String },
    /// NVML was initialised but a call failed (`count GPUs`, `open GPU 3`).
    #[error("NVML cannot {what}: {message}")]
    NvmlCall { what: String, message: String },
    /// NVML does not support this setting on this GPU (`NVML_ERROR_NOT_SUPPORTED`).
    #[error("GPU {gpu}: {message}")]
    NotSupported { gpu: u32, message: String },
    /// NVML refused a setting on this GPU for another reason (permission, invalid value).
    #[error("GPU {gpu}: {message}")]
    Setting { gpu: u32, message: String },
    /// The host has no GPU with this index.
    #[error("no GPU {gpu}")]
    NoGpu { gpu: u32 },
    /// The mount point to remount is not mounted.
    #[error("{mount_point} is not mounted")]
    NotMounted { mount_point: String },
    /// A program a change runs (`modprobe`, `mount`) could not be started.
    #[error("cannot run {program}: {message}")]
    Spawn { program: String, message: String },
    /// A program a change ran exited with a failure.
    #[error("`{}` exited {status:?}: {stderr}", argv.join(" "))]
    Command {
        argv: Vec<String>,
        status: Option<i32>,
        stderr: String,
    },
    /// A host file a change reads first could not be read (the I/O error's text).
    #[error("{message}")]
    Io { path: String, message: String },
    /// An error a snapshot recorded, in a shape no caller branches on: its text.
    #[error("{message}")]
    Recorded { message: String },
}

impl HostError {
    /// An error as a snapshot recorded its text: the shapes callers branch on become their
    /// variants again (so a replayed host answers as the recorded one did), anything else is
    /// [`HostError::Recorded`]. `Display` gives back exactly `message`.
    pub fn from_recorded(message: &str) -> HostError {
        if let Some(what) = message.strip_suffix(&format!(": {NOT_IN_EVIDENCE}")) {
            return HostError::NotInEvidence { what: what.into() };
        }
        if let Some(what) = message.strip_suffix(" was not recorded in this snapshot") {
            return HostError::NotRecorded { what: what.into() };
        }
        HostError::Recorded {
            message: message.into(),
        }
    }

    /// A host (as [`super::Host::describe`] names it) that cannot do `what` at all.
    pub fn unsupported(host: String, what: impl Into<String>) -> HostError {
        HostError::Unsupported {
            host,
            what: what.into(),
        }
    }
}

/// Test helpers and snapshot builders write a recorded error as its text.
impl From<&str> for HostError {
    fn from(message: &str) -> HostError {
        HostError::from_recorded(message)
    }
}

impl From<String> for HostError {
    fn from(message: String) -> HostError {
        HostError::from_recorded(&message)
    }
}

/// The bridge for callers whose own errors are still text (probes, evidence): `?` turns a
/// host error into its message.
impl From<HostError> for String {
    fn from(e: HostError) -> String {
        e.to_string()
    }
}

/// A host error in a probe's JSON output (`{"available": false, "error": …}`) is its message.
impl serde::Serialize for HostError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_error_reads_back_as_the_variant_it_was_and_displays_the_same() {
        for (text, want) in [
            (
                "NVML readings: not in the evidence",
                HostError::NotInEvidence {
                    what: "NVML readings".into(),
                },
            ),
            (
                "the CUDA check was not recorded in this snapshot",
                HostError::NotRecorded {
                    what: "the CUDA check".into(),
                },
            ),
            (
                "NVML cannot be loaded: x",
                HostError::Recorded {
                    message: "NVML cannot be loaded: x".into(),
                },
            ),
        ] {
            let e = HostError::from_recorded(text);
            assert_eq!(e, want);
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn each_variant_displays_the_sentence_gpufix_printed_before() {
        let e = HostError::Command {
            argv: vec!["modprobe".into(), "--".into(), "nvidia_uvm".into()],
            status: Some(1),
            stderr: "FATAL: Module nvidia_uvm not found.".into(),
        };
        assert_eq!(
            e.to_string(),
            "`modprobe -- nvidia_uvm` exited Some(1): FATAL: Module nvidia_uvm not found."
        );
        let e = HostError::NvmlCall {
            what: "open GPU 3".into(),
            message: "Unknown Error".into(),
        };
        assert_eq!(e.to_string(), "NVML cannot open GPU 3: Unknown Error");
        assert_eq!(
            serde_json::to_value(HostError::NoGpu { gpu: 2 }).unwrap(),
            serde_json::json!("no GPU 2")
        );
    }
}
