//! DataLoader workers failing for lack of shared memory, as PyTorch reports it
//! (`torch/utils/data/_utils/signal_handling.py`: "ERROR: Unexpected bus error encountered in
//! worker. This might be caused by insufficient shared memory (shm)."; `THMapAllocator`'s
//! "unable to write to file </torch_...>"; `torch/csrc/DataLoader.cpp`'s SIGBUS report "DataLoader
//! worker (pid N) is killed by signal: Bus error. It is possible that dataloader's workers are
//! out of shared memory. Please try to raise your shared memory limit.", which PyTorch 0.3-0.4
//! printed as "Bus error. It is possible that dataloader's workers are out of shared memory. …"),
//! or the kernel's `No space left on device` on `/dev/shm`. A comment quoting the message in
//! code (`# It is possible that …`) is not the error. The line can sit anywhere in a long training log, so its detector scans the
//! whole text (without collecting anything).

/// True for a line that says DataLoader workers fail for lack of shared memory.
pub(crate) fn is_shm_error_line(l: &str) -> bool {
    l.contains("insufficient shared memory")
        || l.contains("workers are out of shared memory")
        || l.contains("unable to write to file </torch_")
        || (l.contains("DataLoader worker") && l.contains("Bus error"))
        || (l.contains("/dev/shm") && l.contains("No space left on device"))
}

/// The first line where DataLoader workers fail for lack of shared memory.
pub fn shm_error_line(text: &str) -> Option<&str> {
    // only lines holding one of these phrases (one of each conjunction of the test below) can
    // pass it: the text is searched for them once, not line by line
    static ANCHORS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        super::scan::phrases(&[
            "insufficient shared memory",
            "workers are out of shared memory",
            "unable to write to file </torch_",
            "Bus error",
            "No space left on device",
        ])
    });
    super::scan::lines_with(text, &ANCHORS)
        .find(|l| !l.trim_start().starts_with('#') && is_shm_error_line(l))
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
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        Ok(serde_json::json!({
            "error": shm_error_line(text).map(|l| super::clip(l.trim(), super::MAX_TEXT)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_old_and_the_new_wording_and_not_a_comment() {
        // github.com/kubeflow/pipelines/issues/6880 (PyTorch 0.x wording, in backticks)
        assert!(shm_error_line("`Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n`\n").is_some());
        // torch/csrc/DataLoader.cpp's SIGBUS report
        assert!(shm_error_line("RuntimeError: DataLoader worker (pid 13068) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n").is_some());
        // a training script quoting it in a comment above its loader
        assert!(shm_error_line("    # It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n    # num_workers=8 -> num_workers=4\n").is_none());
    }
}
