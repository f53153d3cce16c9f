//! Crash points for the crash-consistency test: with `GPUFIX_CRASH_AT=N` in the environment the
//! process kills itself with SIGKILL at the N-th crash point it reaches (journal appends and
//! each step of a file write). Without the variable this is one relaxed atomic increment.
//! Only with the `fault-injection` cargo feature (the crash tests turn it on); without it,
//! [`hit`] does nothing and the variable is never read.

/// Mark a point where a crash must leave a recoverable state.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn hit(_label: &str) {}

#[cfg(feature = "fault-injection")]
pub use imp::hit;

#[cfg(feature = "fault-injection")]
mod imp {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    static COUNT: AtomicU64 = AtomicU64::new(0);

    fn target() -> Option<u64> {
        static T: OnceLock<Option<u64>> = OnceLock::new();
        *T.get_or_init(|| {
            std::env::var("GPUFIX_CRASH_AT")
                .ok()
                .and_then(|v| v.parse().ok())
        })
    }

    /// Mark a point where a crash must leave a recoverable state.
    pub fn hit(label: &str) {
        let n = COUNT.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(t) = target() {
            if std::env::var_os("GPUFIX_CRASH_TRACE").is_some() {
                eprintln!("crash point {n}: {label}");
            }
            if n == t {
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::KILL,
                );
                std::process::abort();
            }
        }
    }
}
