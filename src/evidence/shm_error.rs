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
//!
//! Ray says the same of its object store, which lives in `/dev/shm` (ray-project/ray
//! `python/ray/_private/services.py`, `determine_plasma_store_config`, read at 003280cb and in
//! the index's older copies: "WARNING: The object store is using /tmp instead of /dev/shm
//! because /dev/shm has only N bytes available. This will harm performance! …"; Ray 0.x:
//! "Reducing object store memory because /dev/shm has only N bytes available"; the same
//! function's `ValueError` when the store would be large and slow storage is not allowed: "The
//! configured object store size (X GB) exceeds /dev/shm size (Y GB). This will harm
//! performance. …", GB of 10^9 bytes; the raylet's
//! `src/ray/object_manager/plasma/store_runner.cc`, read at 564a5d1a, and the plasma store
//! before it: "System memory request exceeds memory available in /dev/shm. The request is for N
//! bytes, and the amount available is M bytes.", `RAY_LOG(WARNING)` now, FATAL before, M being
//! 90% of what statvfs finds). Ray measured `/dev/shm` (statvfs) and found it smaller than the object
//! store it sizes from the node's memory: the container's `/dev/shm` is too small, whatever it
//! holds. Only the `/dev/shm` forms are read: a store_runner line naming another
//! `plasma_directory` is not about `/dev/shm`.

/// True for a line that says DataLoader workers fail for lack of shared memory.
pub(crate) fn is_shm_error_line(l: &str) -> bool {
    l.contains("insufficient shared memory")
        || l.contains("workers are out of shared memory")
        || l.contains("unable to write to file </torch_")
        || (l.contains("DataLoader worker") && l.contains("Bus error"))
        || (l.contains("/dev/shm") && l.contains("No space left on device"))
        || ray_shm_line(l)
}

/// True for Ray's line that `/dev/shm` holds less than its object store asks for (see the
/// module doc): `/dev/shm has only <digits>` (services.py) or `exceeds memory available in
/// /dev/shm` followed by its sentence's end (store_runner.cc, plasma store).
pub fn ray_shm_line(l: &str) -> bool {
    let only = l.match_indices("/dev/shm has only ").any(|(at, m)| {
        l[at + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    });
    let size = l.match_indices("exceeds /dev/shm size (").any(|(at, m)| {
        l[at + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    });
    only || size
        || l.match_indices("exceeds memory available in /dev/shm")
            .any(|(at, m)| {
                matches!(
                    l[at + m.len()..].chars().next(),
                    None | Some('.' | ' ' | '\r' | '"')
                )
            })
}

/// Ray's own figures for `/dev/shm` in its warning (see the module doc): the bytes available,
/// and the bytes the object store asked for when the raylet printed them. Read across the
/// text with any whitespace between the words, so a warning a terminal or a logger re-wrapped
/// (open-instruct#1067: `The object store is using /tmp instead\n  of /dev/shm because …`) reads
/// the same.
pub fn ray_shm_bytes(text: &str) -> Option<(u64, Option<u64>)> {
    static ONLY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"/dev/shm\s+has\s+only\s+(\d+)\s+bytes\s+available")
            .expect("static regex")
    });
    static EXCEEDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)exceeds\s+memory\s+available\s+in\s+/dev/shm\.\s+The\s+request\s+is\s+for\s+(\d+)\s+bytes,\s+and\s+the\s+amount\s+available\s+is\s+(\d+)\s+bytes")
            .expect("static regex")
    });
    static SIZE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"object\s+store\s+size\s+\((\d+(?:\.\d+)?)\s+GB\)\s+exceeds\s+/dev/shm\s+size\s+\((\d+(?:\.\d+)?)\s+GB\)")
            .expect("static regex")
    });
    if let Some(c) = EXCEEDS.captures(text) {
        return Some((c[2].parse().ok()?, c[1].parse().ok()));
    }
    if let Some(c) = SIZE.captures(text) {
        let gb = |s: &str| s.parse::<f64>().ok().map(|g| (g * 1e9).round() as u64);
        return Some((gb(&c[2])?, gb(&c[1])));
    }
    ONLY.captures(text)
        .and_then(|c| Some((c[1].parse().ok()?, None)))
}

/// Phrases one of which every line [`shm_error_line`] accepts holds (one of each conjunction
/// of its test): only lines holding one can pass it, so the text is searched for them once
/// (with the other late searches, `scan::Late`), not line by line.
pub(crate) const SHM_ANCHORS: [&str; 8] = [
    "insufficient shared memory",
    "workers are out of shared memory",
    "unable to write to file </torch_",
    "Bus error",
    "No space left on device",
    "/dev/shm has only ",
    "exceeds memory available in /dev/shm",
    "exceeds /dev/shm size (",
];

/// The first line where DataLoader workers fail for lack of shared memory.
pub fn shm_error_line(text: &str) -> Option<&str> {
    shm_error_line_in(&super::scan::Late::alone(text))
}

/// [`shm_error_line`] of a text whose late searches are made once ([`super::scan::Late`]).
pub(crate) fn shm_error_line_in<'t>(late: &super::scan::Late<'t>) -> Option<&'t str> {
    late.lines(super::scan::Set::Shm)
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
    fn marker_phrases(&self) -> &'static [&'static str] {
        &SHM_ANCHORS
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
            (
                "ray_shm_available",
                "Ray's object-store warning: the bytes /dev/shm had free (and `ray_shm_requested`, the bytes the object store asked for, where the raylet printed them)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        shm_error_line_in(s.late).is_some()
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let mut v = serde_json::json!({
            "error": shm_error_line(text).map(|l| super::clip(l.trim(), super::MAX_TEXT)),
            "host_shm": host_shm_shown(text),
        });
        if let Some((avail, asked)) = ray_shm_bytes(text) {
            v["ray_shm_available"] = serde_json::json!(avail);
            if let Some(a) = asked {
                v["ray_shm_requested"] = serde_json::json!(a);
            }
        }
        Ok(v)
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

    #[test]
    fn rays_object_store_warnings_name_dev_shm_too_small() {
        // github.com/InftyAI/llmaz/issues/238: services.py's warning, a pod's 64 MB /dev/shm
        let t = "2025-01-14 03:08:29,081\tWARNING services.py:2022 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance! You may be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you can increase /dev/shm size by passing '--shm-size=5.04gb' to 'docker run' (or add it to the run_options list in a Ray cluster config). Make sure to set this to more than 30% of available RAM.\n";
        assert!(shm_error_line(t).is_some_and(ray_shm_line));
        assert_eq!(ray_shm_bytes(t), Some((67108864, None)));
        // github.com/allenai/open-instruct/pull/1067: the same warning re-wrapped with an indent
        let w = "2025-10-09 20:16:32,652    WARNING services.py:2159 -- WARNING: The object store is using /tmp instead\n  of /dev/shm because /dev/shm has only 5368709120 bytes available. This will harm performance! You may\n  be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you can\n";
        assert!(shm_error_line(w).is_some_and(|l| l.starts_with("  of /dev/shm")));
        assert_eq!(ray_shm_bytes(w), Some((5368709120, None)));
        // github.com/gpustack/gpustack/issues/5014: the raylet's store_runner, both figures
        let r = "[2026-03-25 05:44:29,435 W 39 39] (raylet) store_runner.cc:83: System memory request exceeds memory available in /dev/shm. The request is for 10200547328 bytes, and the amount available is 9663676416 bytes.\nYou may be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you may need to pass an argument with the flag '--shm-size' to 'docker run'.\n";
        assert!(shm_error_line(r).is_some_and(ray_shm_line));
        assert_eq!(ray_shm_bytes(r), Some((9663676416, Some(10200547328))));
        // github.com/alumae/kiirkirjutaja/issues/5: the ValueError of a large store that would
        // not fit (GB of 10^9 bytes)
        let v = "ValueError: The configured object store size (11.81114368 GB) exceeds /dev/shm size (11.8111232 GB). This will harm performance. Consider deleting files in /dev/shm or increasing its size with --shm-size in Docker. To ignore this warning, s\n";
        assert!(shm_error_line(v).is_some_and(ray_shm_line));
        assert_eq!(ray_shm_bytes(v), Some((11811123200, Some(11811143680))));
        // healthy: Ray's source (no figure: `{} bytes`), a plasma directory other than
        // /dev/shm (ray store_runner.cc prints the directory it was given), and the
        // orchest config's comment quoting the old wording
        assert!(
            shm_error_line("\"/dev/shm because /dev/shm has only {} bytes available. \"\n")
                .is_none()
        );
        assert!(shm_error_line("\"/dev/shm size ({} GB). This will harm performance. \"\n\"The configured object store size ({} GB) exceeds \"\n").is_none());
        assert!(shm_error_line("System memory request exceeds memory available in /mnt/plasma. The request is for 1 bytes, and the amount available is 0 bytes.\n").is_none());
        assert!(
            shm_error_line("# \"System memory request exceeds memory available in /dev/shm.\"\n")
                .is_none()
        );
    }
}
