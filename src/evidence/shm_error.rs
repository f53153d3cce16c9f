//! DataLoader workers failing for lack of shared memory, as PyTorch reports it
//! (`torch/utils/data/_utils/signal_handling.py`: "ERROR: Unexpected bus error encountered in
//! worker. This might be caused by insufficient shared memory (shm)."; `THMapAllocator`'s
//! "unable to write to file </torch_...>"), or the kernel's `No space left on device` on
//! `/dev/shm`. The line can sit anywhere in a long training log, so its detector scans the
//! whole text (without collecting anything).

/// The first line where DataLoader workers fail for lack of shared memory.
pub fn shm_error_line(text: &str) -> Option<&str> {
    text.lines().find(|l| {
        l.contains("insufficient shared memory")
            || l.contains("unable to write to file </torch_")
            || (l.contains("DataLoader worker") && l.contains("Bus error"))
            || (l.contains("/dev/shm") && l.contains("No space left on device"))
    })
}

pub struct ShmErrorLog;

impl super::EvidenceKind for ShmErrorLog {
    fn name(&self) -> &'static str {
        "shm-error-log"
    }
    fn doc(&self) -> &'static str {
        "a training log where DataLoader workers die for lack of shared memory (/dev/shm)"
    }
    fn example(&self) -> &'static str {
        "python train.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[("error", "the first line that says so")]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        shm_error_line(s.text).is_some()
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, String> {
        Ok(serde_json::json!({
            "error": shm_error_line(text).map(|l| super::clip(l.trim(), super::MAX_TEXT)),
        }))
    }
}
