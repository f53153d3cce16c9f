//! PyTorch's tensor sharing running out of file descriptors: the process reached its open-files
//! limit (`ulimit -n`, `RLIMIT_NOFILE`, systemd's `LimitNOFILE`), as PyTorch and the Python
//! `multiprocessing` package it builds on print it. Written from PyTorch's own source (read at
//! pytorch/pytorch `0025348e`):
//!
//! - `torch/utils/data/dataloader.py`, `_MultiProcessingDataLoaderIter._try_get_data` (since
//!   pytorch#34768, torch 1.5): when reading a batch from the workers fails, it opens ten
//!   temporary files and, on `errno.EMFILE`, raises "Too many open files. Communication with the
//!   workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or
//!   change the sharing strategy by calling
//!   `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code".
//! - The same file's NOTE [ DataLoader on Linux and open files limit ]: batches travel from the
//!   workers as shared-memory files whose descriptors cross an AF_UNIX socket (the default
//!   `file_descriptor` strategy, `torch/multiprocessing/reductions.py`'s `reduce_storage` /
//!   `rebuild_storage_fd` through `multiprocessing.resource_sharer`'s `DupFd`); at the limit
//!   the descriptor is stripped from the message and the standard `multiprocessing` raises
//!   "RuntimeError: received 0 items of ancdata" (`multiprocessing/reduction.py`, `recvfds`), or
//!   "OSError: Too many open files". Those two are read only where the text shows torch's
//!   tensor sharing or its DataLoader (a traceback frame in `torch/multiprocessing/` or
//!   `torch/utils/data/`): other programs pass descriptors over sockets too (proxy.py's
//!   socket handles), and `[Errno 24]` in a server's own log is not a DataLoader's.
//! - `aten/src/ATen/MapAllocator.cpp` (`MapAllocator::MapAllocator`, `shm_open` failing): "unable
//!   to open shared memory object \<NAME\> in read-write mode: Too many open files (24)", the
//!   errno named since torch 1.x's `TORCH_CHECK` with `c10::utils::str_error(errno)`. The older
//!   wording without the errno (`THAllocator.c`, `AT_ERROR` in 1.0) does not say why `shm_open`
//!   failed and is not read here.
//!
//! A `#` comment quoting the message in code is not the error.
//!
//! The kind [`TensorSharingKind`] (`tensor-sharing-log`) claims a text by the lines of this
//! family as their producers print them, judged or not: the above, MapAllocator's other
//! `shm_open` failures ("unable to open shared memory object \<NAME\> in read-write mode", with
//! another errno or none) and its `close()` failing ("could not unlink the shared memory file
//! NAME"), Python's own `[Errno 24] Too many open files` (`OSError.__str__`, whatever logs
//! it), multiprocessing's ancdata error, and CPython's `resource.setrlimit` refusing a soft
//! limit above the hard one ("current limit exceeds maximum limit", `Modules/resource.c`). Only
//! the lines [`fd_limit`] accepts say the open-files limit was reached.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// What the text shows of the open-files limit reached by PyTorch's tensor sharing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FdLimit {
    /// The line that says so.
    pub error: String,
    /// `dataloader` (torch's own "Too many open files. Communication with the workers …"),
    /// `shm-open` (MapAllocator's shm_open failing with EMFILE), `errno-24` (Python's OSError
    /// [Errno 24] beside torch's sharing or loader frames), `ancdata` (multiprocessing's
    /// "received 0 items of ancdata" beside them).
    pub how: &'static str,
    /// The torch frame that shows the DataLoader or its tensor sharing, for the last two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
}

/// Phrases one of which every line [`fd_limit`] takes holds.
pub const PHRASES: [&str; 3] = ["Too many open files", "items of ancdata", "Errno 24]"];

static TORCH_MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
    // the exception as Python prints it (`RuntimeError: …`), or the message alone where a
    // framework logs `str(e)`: at the line's start, past a launcher's `[rankN]:` prefix
    Regex::new(r"^\s*(?:\[rank\d+\]:\s*)?`?(?:RuntimeError: )?Too many open files\. Communication with the\s+workers is no longer possible")
        .expect("static regex")
});
static RUNTIME_ERROR_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"RuntimeError: Too many open files\. Communication with the\s+workers is no longer possible")
        .expect("static regex")
});
static SHM_OPEN_EMFILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"unable to open shared memory object <[^>\s]*> in read-write mode: Too many open files \(24\)")
        .expect("static regex")
});
static ERRNO_24: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:\[rank\d+\]:\s*)?(?:OSError|IOError): \[Errno 24\] Too many open files")
        .expect("static regex")
});
static ANCDATA: LazyLock<Regex> = LazyLock::new(|| {
    // the exception line, or the frame's source line Python echoes under `recvfds`
    Regex::new(r"^\s*(?:\[rank\d+\]:\s*)?(?:RuntimeError: received 0 items of ancdata|raise RuntimeError\('received %d items of ancdata')")
        .expect("static regex")
});

static SHM_MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"unable to open shared memory object <[^>\s]*> in read-write mode|could not unlink the shared memory file \S")
        .expect("static regex")
});
static PY_EMFILE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[Errno 24\] Too many open files").expect("static regex"));
static SETRLIMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:ValueError: )?current limit exceeds maximum limit\s*$")
        .expect("static regex")
});

/// Phrases one of which every line [`is_marker_line`] accepts holds.
const MARKER_PHRASES: [&str; 5] = [
    "Too many open files",
    "items of ancdata",
    "shared memory object <",
    "the shared memory file ",
    "current limit exceeds maximum limit",
];

/// True for a line of this family as its producer prints it (see the module doc), not a `#`
/// comment.
pub fn is_marker_line(l: &str) -> bool {
    !l.trim_start().starts_with('#')
        && (TORCH_MESSAGE.is_match(l)
            || RUNTIME_ERROR_ANYWHERE.is_match(l)
            || SHM_MESSAGE.is_match(l)
            || PY_EMFILE.is_match(l)
            || ANCDATA.is_match(l)
            || SETRLIMIT.is_match(l))
}

/// The first line of the family in `text`.
pub fn first_marker_line(text: &str) -> Option<&str> {
    static ANCHORS: LazyLock<Regex> = LazyLock::new(|| super::scan::phrases(&MARKER_PHRASES));
    super::scan::lines_with(text, &ANCHORS).find(|l| is_marker_line(l))
}

pub struct TensorSharingKind;

impl super::EvidenceKind for TensorSharingKind {
    fn marker(&self, line: &str) -> bool {
        is_marker_line(line)
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        &MARKER_PHRASES
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "tensor-sharing-log"
    }
    fn doc(&self) -> &'static str {
        "a log or traceback where PyTorch's tensor sharing between processes fails (DataLoader workers, torch.multiprocessing) or a process reaches its open-files limit"
    }
    fn example(&self) -> &'static str {
        "python train.py 2>&1 | tee train.log"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "message",
                "the first line of the family (see the module doc)",
            ),
            (
                "limit_reached",
                "the text shows PyTorch's DataLoader or tensor sharing at the open-files limit",
            ),
            ("error", "the line that shows it"),
            (
                "how",
                "dataloader, shm-open, errno-24 or ancdata: which of PyTorch's or Python's messages shows it",
            ),
            (
                "frame",
                "for errno-24 and ancdata: the torch frame showing the DataLoader or its tensor sharing",
            ),
            (
                "other_cause",
                "MapAllocator's shm_open failure naming another errno than 24 (the producer's own cause)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["open_files"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        // (`first_marker_line` of the text, from the search made once for the late kinds)
        s.late
            .lines(super::scan::Set::TensorSharing)
            .any(is_marker_line)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let Some(m) = first_marker_line(text) else {
            return Err(super::ParseError::NotThisKind(
                "no line of PyTorch's tensor sharing or of the open-files limit",
            ));
        };
        let mut v = serde_json::json!({
            "message": super::clip(m.trim(), super::MAX_TEXT),
            "limit_reached": false,
        });
        if let Some(o) = other_shm_open_errno(text).filter(|_| fd_limit(text).is_none()) {
            v["other_cause"] = serde_json::json!(super::clip(o.trim(), super::MAX_TEXT));
        }
        if let Some(f) = fd_limit(text) {
            v["limit_reached"] = serde_json::json!(true);
            v["error"] = serde_json::json!(f.error);
            v["how"] = serde_json::json!(f.how);
            if let Some(fr) = f.frame {
                v["frame"] = serde_json::json!(fr);
            }
        }
        Ok(v)
    }
}

static SHM_OPEN_ERRNO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"unable to open shared memory object <[^>\s]*> in read-write mode: [^()]+ \((\d+)\)",
    )
    .expect("static regex")
});

/// MapAllocator's `shm_open` failure naming an errno other than EMFILE (24): the producer says
/// the cause, and it is not the open-files limit (a `/dev/shm` file deleted under the job is
/// `No such file or directory (2)`). The first such line.
pub fn other_shm_open_errno(text: &str) -> Option<&str> {
    if !text.contains("shared memory object <") {
        return None;
    }
    super::scan::lines(text).find(|l| {
        !l.trim_start().starts_with('#')
            && SHM_OPEN_ERRNO.captures(l).is_some_and(|c| &c[1] != "24")
    })
}

/// A Python traceback frame in torch's tensor sharing or its DataLoader:
/// `File ".../torch/multiprocessing/reductions.py", line N, in rebuild_storage_fd`,
/// `File ".../torch/utils/data/dataloader.py", …` (`\` on Windows).
fn torch_sharing_frame(text: &str) -> Option<&str> {
    const PATHS: [&str; 4] = [
        "torch/multiprocessing/",
        "torch\\multiprocessing\\",
        "torch/utils/data/",
        "torch\\utils\\data\\",
    ];
    if !PATHS.iter().any(|p| text.contains(p)) {
        return None;
    }
    super::scan::lines(text).find(|l| {
        let t = l.trim_start();
        let t = t
            .strip_prefix('[')
            .and_then(|r| r.split_once("]:"))
            .map_or(t, |(_, r)| r.trim_start());
        t.starts_with("File \"") && PATHS.iter().any(|p| t.contains(p))
    })
}

/// The first line of `text` that shows PyTorch's tensor sharing reached the open-files limit
/// (see the module doc), if any.
pub fn fd_limit(text: &str) -> Option<FdLimit> {
    static ANCHORS: LazyLock<Regex> = LazyLock::new(|| super::scan::phrases(&PHRASES));
    if !ANCHORS.is_match(text) {
        return None;
    }
    let mut frame: Option<Option<&str>> = None;
    for l in super::scan::lines_with(text, &ANCHORS) {
        if l.trim_start().starts_with('#') {
            continue;
        }
        let found = |how| {
            Some(FdLimit {
                error: super::clip(l.trim(), super::MAX_TEXT),
                how,
                frame: None,
            })
        };
        if TORCH_MESSAGE.is_match(l) || RUNTIME_ERROR_ANYWHERE.is_match(l) {
            return found("dataloader");
        }
        if SHM_OPEN_EMFILE.is_match(l) {
            return found("shm-open");
        }
        let how = if ERRNO_24.is_match(l) {
            "errno-24"
        } else if ANCDATA.is_match(l) {
            "ancdata"
        } else {
            continue;
        };
        if let Some(f) = *frame.get_or_insert_with(|| torch_sharing_frame(text)) {
            return Some(FdLimit {
                frame: Some(super::clip(f.trim(), super::MAX_TEXT)),
                ..found(how)?
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::evidence::corpus_text as corpus;

    #[test]
    fn torchs_own_message_and_its_terminal_wrapped_form() {
        // github.com/SCIInstitute/ShapeWorks/issues/1556: dataloader.py's _try_get_data
        let t = corpus("h106_dataloader_shapeworks1556_too_many_open_files_runtimeerror.txt");
        let f = fd_limit(&t).unwrap();
        assert_eq!(f.how, "dataloader");
        assert!(f.error.starts_with("RuntimeError: Too many open files."));
        // github.com/NKI-AI/ahcore/issues/96: the same wrapped at the terminal's width
        let t = corpus("h106_log_ahcore96_too_many_open_files_wrapped_after_many_epochs.log");
        assert_eq!(fd_limit(&t).unwrap().how, "dataloader");
        // github.com/zju3dv/NeuralRecon/issues/91 (h22): under the loader's frames
        let t = corpus("h22_dataloader_neuralrecon91_too_many_open_files.log");
        assert_eq!(fd_limit(&t).unwrap().how, "dataloader");
        // a script quoting it in a comment above its set_sharing_strategy call is not the error
        let c = "# RuntimeError: Too many open files. Communication with the workers is no longer possible.\ntorch.multiprocessing.set_sharing_strategy('file_system')\n";
        assert_eq!(fd_limit(c), None);
    }

    #[test]
    fn errno_24_and_ancdata_only_beside_torchs_sharing_frames() {
        // github.com/martenlienen/finite-element-networks/issues/2: reduce_storage's DupFd
        let t = corpus("h106_dataloader_finiteelementnetworks2_dupfd_errno24.txt");
        let f = fd_limit(&t).unwrap();
        assert_eq!(f.how, "errno-24");
        assert!(
            f.frame
                .unwrap()
                .contains("torch/multiprocessing/reductions.py")
        );
        // github.com/kuleshov-group/caduceus/issues/58: the loader starting its workers
        let t = corpus("h106_dataloader_caduceus58_worker_start_os_pipe_errno24.txt");
        assert!(
            fd_limit(&t)
                .unwrap()
                .frame
                .unwrap()
                .contains("torch/utils/data/dataloader.py")
        );
        // github.com/facebookresearch/maskrcnn-benchmark/issues/158: torch 1.0's shm_open error
        // (no errno) above resource_sharer's Errno 24
        let t = corpus("h106_dataloader_maskrcnn158_shm_open_dup_errno24.txt");
        assert_eq!(fd_limit(&t).unwrap().how, "errno-24");
        // written from multiprocessing/reduction.py's recvfds under torch's rebuild_storage_fd
        let a = "  File \"/usr/lib/python3.10/site-packages/torch/multiprocessing/reductions.py\", line 305, in rebuild_storage_fd\n    fd = df.detach()\n  File \"/usr/lib/python3.10/multiprocessing/reduction.py\", line 164, in recvfds\n    raise RuntimeError('received %d items of ancdata' %\nRuntimeError: received 0 items of ancdata\n";
        assert_eq!(fd_limit(a).unwrap().how, "ancdata");
        // healthy: gpustack#5258's own [Errno 24] in a server's log (no torch), proxy.py#68's
        // ancdata passing sockets (no torch), and speechbrain#912's recvfds echo cut above any
        // torch frame: the text does not show torch's tensor sharing
        let g = corpus("h106_log_gpustack5258_worker_errno24_not_loader.log");
        assert_eq!(fd_limit(&g), None);
        let p = "  File \"/usr/pkg/lib/python3.6/multiprocessing/reduction.py\", line 161, in recvfds\n    len(ancdata))\nRuntimeError: received 0 items of ancdata\n";
        assert_eq!(fd_limit(p), None);
        let s = corpus("h106_dataloader_speechbrain912_recvfds_ancdata_32_workers.txt");
        assert_eq!(fd_limit(&s), None);
        // prose naming the path is no frame
        let q = "OSError: [Errno 24] Too many open files\nIt fails somewhere in torch/utils/data/dataloader.py I think\n";
        assert_eq!(fd_limit(q), None);
    }

    #[test]
    fn the_kind_claims_the_family_and_judges_only_the_limit() {
        use crate::evidence::EvidenceKind;
        // each of the batch's neighbours is this kind's text, none of them the limit judged
        for (name, limit) in [
            (
                "h106_dataloader_pytorch30225_file_system_could_not_unlink.txt",
                false,
            ),
            (
                "h106_dataloader_pytorchautodrive114_setrlimit_exceeds_maximum.txt",
                false,
            ),
            (
                "h106_dataloader_speechbrain912_recvfds_ancdata_32_workers.txt",
                false,
            ),
            ("h106_log_gpustack5258_worker_errno24_not_loader.log", false),
            (
                "h106_dataloader_nowcasting158_file_system_shm_open_ulimit_512000.txt",
                false,
            ),
            (
                "h106_dataloader_finiteelementnetworks2_dupfd_errno24.txt",
                true,
            ),
        ] {
            let t = corpus(name);
            assert!(first_marker_line(&t).is_some(), "{name}");
            let v = TensorSharingKind.parse(&t).unwrap();
            assert_eq!(v["limit_reached"], serde_json::json!(limit), "{name}");
        }
        // not the family: prose about file limits, a ulimit table, Ray's own wording
        for t in [
            "I raised the open files limit and it still fails\n",
            "open files                      (-n) 32768\n",
            "# could not unlink the shared memory file /torch_1 (a comment)\n",
        ] {
            assert!(first_marker_line(t).is_none(), "{t}");
        }
    }

    #[test]
    fn map_allocators_errno_and_not_the_older_wording() {
        // MapAllocator.cpp's TORCH_CHECK with str_error(errno) and errno
        let t = "RuntimeError: unable to open shared memory object </torch_4094450_3914785142> in read-write mode: Too many open files (24)\n";
        assert_eq!(fd_limit(t).unwrap().how, "shm-open");
        assert_eq!(other_shm_open_errno(t), None);
        // another errno is another cause: a /dev/shm file deleted under the job
        let n = "RuntimeError: unable to open shared memory object </torch_1_2> in read-write mode: No such file or directory (2)\n";
        assert_eq!(fd_limit(n), None);
        assert!(other_shm_open_errno(n).is_some());
        // github.com/openclimatefix-archives/nowcasting_dataset/issues/158: the wording without
        // the errno (file_system strategy, the limit already 512,000) does not say why
        let w = corpus("h106_dataloader_nowcasting158_file_system_shm_open_ulimit_512000.txt");
        assert_eq!(fd_limit(&w), None);
    }
}
