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
//!
//! The same text may show that `/dev/shm` was not the container's 64 MB: the poster's `docker run`
//! with `--ipc=host` (docker CLI, `docs/reference/commandline/container_run.md`: "IPC mode to
//! use"; `host` shares the host's namespace and its `/dev/shm`), compose's `ipc: host`, a
//! PodSpec's `hostIPC: true`, or the host's `/dev/shm` bound in (`-v /dev/shm:/dev/shm`). Then the
//! bus error is not explained by the size of `/dev/shm` (pytorch#26009: `--ipc=host`, 254 GB), and
//! the reader says which words showed it.

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

/// The words of the text that show the job's `/dev/shm` is the host's (see the module doc), if
/// any: `--ipc=host`, `--ipc host`, `ipc: host`, `hostIPC: true` or `/dev/shm:/dev/shm`, not
/// after a "without" or "no" that negates it.
pub fn host_shm_shown(text: &str) -> Option<&'static str> {
    const SHOWN: [(&str, &str); 6] = [
        ("--ipc=host", "--ipc=host"),
        ("--ipc host", "--ipc=host"),
        ("--ipc=\"host\"", "--ipc=host"),
        ("ipc: host", "ipc: host"),
        ("hostipc: true", "hostIPC: true"),
        ("/dev/shm:/dev/shm", "the host's /dev/shm bound in"),
    ];
    let lower = text.to_ascii_lowercase();
    SHOWN.iter().find_map(|(needle, said)| {
        lower.match_indices(needle).find_map(|(at, _)| {
            let before = lower[..at].trim_end();
            let negated = ["without", "no", "not", "w/o"].iter().any(|w| {
                before.ends_with(w)
                    && !before[..before.len() - w.len()]
                        .ends_with(|c: char| c.is_ascii_alphanumeric())
            });
            (!negated).then_some(*said)
        })
    })
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
        &[
            ("error", "the first line that says so"),
            (
                "host_shm",
                "words of the text showing /dev/shm is the host's (--ipc=host, ipc: host, hostIPC: true, /dev/shm:/dev/shm)",
            ),
        ]
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
            "host_shm": host_shm_shown(text),
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

    #[test]
    fn the_host_shm_shown_beside_the_error_and_not_when_negated() {
        // github.com/pytorch/pytorch/issues/26009: the bus error in a container run with
        // --ipc=host (a 254 GB /dev/shm)
        let t = "I am using pytorch 1.1.0 in a docker container with --ipc=host, so I have /dev/shm space of 254GB. My training script ... crashed with the error \"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\"";
        assert!(shm_error_line(t).is_some());
        assert_eq!(host_shm_shown(t), Some("--ipc=host"));
        // written for this test: compose, a PodSpec and a bind mount spell it their own ways
        assert_eq!(
            host_shm_shown("services:\n  train:\n    ipc: host\n"),
            Some("ipc: host")
        );
        assert_eq!(
            host_shm_shown("spec:\n  hostIPC: true\n"),
            Some("hostIPC: true")
        );
        assert_eq!(
            host_shm_shown("docker run -v /dev/shm:/dev/shm img"),
            Some("the host's /dev/shm bound in")
        );
        // the healthy counter-example's opposite: the error alone, or a negated flag
        let plain = "RuntimeError: DataLoader worker (pid 13068) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n";
        assert_eq!(host_shm_shown(plain), None);
        assert_eq!(
            host_shm_shown("I ran the container without --ipc=host and got:\n"),
            None
        );
    }
}
