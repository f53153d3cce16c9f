//! DataLoader workers failing for lack of shared memory, as PyTorch reports it
//! (`torch/utils/data/_utils/signal_handling.py`: "ERROR: Unexpected bus error encountered in
//! worker. This might be caused by insufficient shared memory (shm)."; `THMapAllocator`'s
//! "unable to write to file </torch_...>"), or the kernel's `No space left on device` on
//! `/dev/shm`. The line can sit anywhere in a long training log, so its detector scans the
//! whole text (without collecting anything).

/// True for a line that says DataLoader workers fail for lack of shared memory.
pub(crate) fn is_shm_error_line(l: &str) -> bool {
    l.contains("insufficient shared memory")
        || l.contains("unable to write to file </torch_")
        || (l.contains("DataLoader worker") && l.contains("Bus error"))
        || (l.contains("/dev/shm") && l.contains("No space left on device"))
}

/// The first line where DataLoader workers fail for lack of shared memory.
pub fn shm_error_line(text: &str) -> Option<&str> {
    // only lines holding one of these phrases (one of each conjunction of the test above) can
    // pass it: the text is searched for them once, not line by line
    static ANCHORS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        super::scan::phrases(&[
            "insufficient shared memory",
            "unable to write to file </torch_",
            "Bus error",
            "No space left on device",
        ])
    });
    super::scan::lines_with(text, &ANCHORS).find(|l| is_shm_error_line(l))
}

pub struct ShmErrorLog;

impl super::EvidenceKind for ShmErrorLog {
    fn marker(&self, line: &str) -> bool {
        shm_error_line(line).is_some()
    }
    fn has_markers(&self) -> bool {
        true
    }
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
