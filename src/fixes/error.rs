//! Why a fix could not prepare, save, apply, verify or undo a change.
//!
//! The variants are the cases callers tell apart: the host could not act
//! ([`FixError::Host`], which keeps whether it cannot at all or tried and failed), a write the
//! safe-write layer refused ([`FixError::Write`]), an edit the file's format refused
//! ([`FixError::Edit`], [`FixError::Script`]), a target that does not read back as written
//! ([`FixError::ReadBack`], which `apply` reports as a failed verification and undoes), an
//! action left to the person ([`FixError::LeftToYou`]: no single exact edit, or no file to
//! edit), an input the action needs that was not given ([`FixError::NeedsInput`]), a host
//! without files to change ([`FixError::NoFiles`]), a host read or write that failed
//! ([`FixError::Io`]) and a journal whose saved state does not fit the change
//! ([`FixError::NoPrior`]). Each displays as the sentence gpufix printed before the errors were
//! typed.

use crate::formats::EditError;
use crate::formats::syntax::Refusal;
use crate::host::HostError;
use crate::safe_write::WriteError;

/// Why a fix could not make (or undo) its change.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// The host could not read or change what the fix needs (NVML, modprobe, mount).
    #[error(transparent)]
    Host(#[from] HostError),
    /// The safe-write layer refused or failed a read or write of the target.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The file's format cannot take the edit (no such entry, a value it cannot hold).
    #[error(transparent)]
    Edit(#[from] EditError),
    /// A shell script or Python source cannot take the edit, or no exact edit of it exists.
    #[error(transparent)]
    Script(#[from] Refusal),
    /// The target does not read back as the change wrote it.
    #[error("{target}: read back {found}, expected {expected}")]
    ReadBack {
        target: String,
        expected: String,
        found: String,
    },
    /// The host has no filesystem behind it (a snapshot, pasted evidence): no file fix can run.
    #[error("{host} has no files gpufix can change (use --root DIR or run on the host)")]
    NoFiles { host: String },
    /// The action has nothing it may edit here: the note says where the value is set and why
    /// gpufix leaves it to the person.
    #[error("{note}")]
    LeftToYou { note: String },
    /// The action names no file and the flag that gives one was not used.
    #[error("needs {flag} (or `file:` in the fix action)")]
    NeedsInput { flag: &'static str },
    /// The host could not read or write what the fix acts on (`/proc/modules`, a sysctl, a
    /// sysfs file) or run its program.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The journal's saved state is not of the kind this change restores.
    #[error("journal holds no {what} for this change")]
    NoPrior { what: &'static str },
    /// The change cannot be made as asked; the message names the target and why.
    #[error("{0}")]
    Failed(String),
}

impl FixError {
    /// [`FixError::Io`] for `map_err`: `what` says what could not be done (`cannot read
    /// /proc/modules`).
    pub fn io(what: String) -> impl FnOnce(std::io::Error) -> FixError {
        move |source| FixError::Io { what, source }
    }

    /// A target refused or unreadable, in a sentence naming it.
    pub fn failed(message: impl Into<String>) -> FixError {
        FixError::Failed(message.into())
    }
}

/// Errors of the layers a fix calls that are still text (an edit of a launcher's flags, a
/// Python assignment) become [`FixError::Failed`] through `?`.
impl From<String> for FixError {
    fn from(message: String) -> FixError {
        FixError::Failed(message)
    }
}

impl From<&str> for FixError {
    fn from(message: &str) -> FixError {
        FixError::Failed(message.into())
    }
}
