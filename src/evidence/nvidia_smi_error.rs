//! What `nvidia-smi` prints instead of a table when it cannot read the GPUs at all: the driver
//! is not loaded or not reachable, user space and kernel module disagree, or the driver sees no
//! GPU. The messages are nvidia-smi's and NVML's own (`nvmlErrorString`'s "Driver/library
//! version mismatch", nvidia-smi's "couldn't communicate with the NVIDIA driver"). A single
//! lost GPU is a GPU fault and reads as a kernel log, see [`super::kernel_log::is_gpu_lost`].
//!
//! The message is read where it starts a line, quoted whole inside one, written as a shell
//! comment under the command that printed it (`# Failed to initialize NVML: <reason>`, the reason
//! being `nvmlErrorString`'s text: NVML API Reference R550, "Error reporting"), or after the
//! bracketed tags a wrapper that relays nvidia-smi's stdout line by line puts before each line
//! (see `tagged_message`).

/// The line where `nvidia-smi` (or NVML) says it cannot read the GPUs: the message alone on its
/// line, or quoted whole inside one (see `quoted_message`).
pub fn nvidia_smi_error_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find_map(|l| {
        if is_message(l) {
            Some(l)
        } else {
            quoted_message(l)
                .or_else(|| commented_message(l))
                .or_else(|| tagged_message(l))
                .or_else(|| logged_message(l))
                .or_else(|| container_cli_message(l))
        }
    })
}

/// NVML's failure as the NVIDIA container runtime reports it: its OCI hook runs
/// `nvidia-container-cli`, whose commands print `initialization error: %s` through `warnx` (so
/// after `nvidia-container-cli: `) when the library cannot initialise
/// (NVIDIA/libnvidia-container `src/cli/list.c`, `info.c`, `configure.c`: `warnx("initialization
/// error: %s", nvc_error(nvc))`). The reasons that mean the driver cannot be reached through
/// NVML are the library's `nvml error: <nvmlErrorString>` (`src/driver.c`'s `call_nvml`, through
/// `error_set_nvml(…, "nvml error")` in `src/error.c`: `driver not loaded`, `unknown error`, …)
/// and `load library failed: <dlerror()>` for NVML's own library (`src/xfuncs.h`'s `xdlopen`
/// through `error_set_dl`: `libnvidia-ml.so.1: cannot open shared object file: no such file or
/// directory`). Docker and containerd relay the hook's stderr inside their own error (`… error
/// running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error:
/// nvml error: driver not loaded: unknown.`), so the message is read where it starts a line or
/// follows `stderr: `. Other initialization errors (`driver error: failed to process request`,
/// `cuda error: …`) are not NVML's and are left alone.
///
/// The same commands print `detection error: %s` when the library initialised but could not
/// list the driver or the devices (`src/cli/configure.c`, `info.c`, `list.c`:
/// `nvc_driver_info_new` or `nvc_device_info_new` failed, `warnx("detection error: %s",
/// nvc_error(nvc))`); with an `nvml error: …` reason that is NVML failing to query the GPUs
/// (one in a bad state answers `unknown error`). The hook's stderr can hold an earlier line of
/// the toolkit's before the CLI's (`Auto-detected mode as 'legacy'`, the runtime's mode
/// detection); containerd logs the error as a quoted logfmt value (`error="… stderr:
/// Auto-detected mode as 'legacy'\nnvidia-container-cli: detection error: nvml error: unknown
/// error: unknown"`, github.com/Project-HAMi/volcano-vgpu-device-plugin/issues/123), so the
/// message is also read after a `\n` escape when the stderr it sits in starts earlier on the
/// line.
fn container_cli_message(l: &str) -> Option<&str> {
    const CLI: &str = "nvidia-container-cli: ";
    const CONTEXTS: [&str; 2] = ["initialization error: ", "detection error: "];
    let (at, reason) = l.match_indices(CLI).find_map(|(at, _)| {
        let after = &l[at + CLI.len()..];
        CONTEXTS
            .iter()
            .find_map(|c| after.strip_prefix(c))
            .map(|reason| (at, reason))
    })?;
    let before = l[..at].trim_end();
    let escaped_stderr = before
        .strip_suffix("\\n")
        .is_some_and(|b| b.contains("stderr: "));
    if !(before.is_empty() || before.ends_with("stderr:") || escaped_stderr) {
        return None;
    }
    let msg = l[at..].trim_end_matches('"');
    let nvml = reason.starts_with("nvml error: ")
        || reason
            .strip_prefix("load library failed: ")
            .is_some_and(|r| r.starts_with("libnvidia-ml.so"));
    nvml.then_some(msg)
}

/// The message as a Go program logs it after NVML's initialisation failed: the NVIDIA k8s
/// device plugin writes `Failed to initialize NVML: <error>.` through Go's `log` package
/// (v0.11-v0.13: `log.Printf("Failed to initialize NVML: %v.", err)`, each line headed by
/// `log.LstdFlags`' `2006/01/02 15:04:05 `) and later through klog (`klog.Errorf("Failed to
/// initialize NVML: %v.", ret)`, headed `Lmmdd hh:mm:ss.uuuuuu threadid file:line] `:
/// NVIDIA/k8s-device-plugin `cmd/nvidia-device-plugin/main.go`, `internal/rm/rm.go`,
/// `internal/plugin/manager/factory.go`; kubernetes/klog `klog.go`, the header's format).
/// Only a whole header, then one of the messages, counts
/// (github.com/NVIDIA/k8s-device-plugin/issues/444: `2023/10/19 03:11:54 Failed to initialize
/// NVML: could not load NVML library.`).
fn logged_message(l: &str) -> Option<&str> {
    static GO_LOG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})? |[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}[ \t]+[0-9]+ [^\s\]]+:[0-9]+\] )",
        )
        .expect("static regex")
    });
    if !l.starts_with(|c: char| c.is_ascii_digit() || matches!(c, 'I' | 'W' | 'E' | 'F')) {
        return None;
    }
    let m = GO_LOG.find(l)?;
    let rest = l[m.end()..].trim();
    (is_message(rest) || plugin_found_no_nvml(rest)).then_some(rest)
}

/// The device plugin's own words for a container in which NVML cannot be loaded, after its log
/// header (NVIDIA/k8s-device-plugin at 1b826acc, read for batch h118):
///
/// - `internal/rm/rm.go`, `AddDefaultResourcesToConfig`: under `mig-strategy=mixed`,
///   `klog.Warningf("NVML not detected: %v", reason)`, the reason being go-nvlib's
///   `HasNvml()` text, `could not load NVML library: <dlerror>` (#1371: `NVML not detected:
///   could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: …`);
/// - `internal/plugin/factory.go`, `getResourceManagers`: `klog.Errorf("Incompatible strategy
///   detected %v", strategy)` when go-nvlib's `ResolvePlatform` found neither NVML, Tegra nor
///   WSL, so the strategy stays `auto` (v0.15-0.17) or is `unknown` (later); followed by "If
///   this is a GPU node, did you configure the NVIDIA Container Toolkit?" (#1220). A strategy
///   the plugin knows but does not serve here (`wsl`) is not NVML's absence and is left alone.
fn plugin_found_no_nvml(rest: &str) -> bool {
    rest.strip_prefix("NVML not detected: ")
        .is_some_and(|r| r.starts_with("could not load NVML library"))
        || matches!(
            rest,
            "Incompatible strategy detected auto" | "Incompatible strategy detected unknown"
        )
}

/// The message after the bracketed tags that a program relaying nvidia-smi's stdout puts before
/// each line it passes on: nvidia-smi writes the message at the start of a stdout line, and a
/// task runner or a pipeline's logger that captures the child's output and logs it line by line
/// prefixes the line with its own `[…]` tags (the step, the stream, the time), one or several
/// (github.com/mozilla/translations/issues/1167: `[train] [nvidia-smi(stdout)] Failed to
/// initialize NVML: Driver/library version mismatch` under Taskcluster's run-task, whose own
/// `[task TIME] ` prefix `crate::vocab::paste` takes off). Only a whole message after whole
/// tags counts: a tag holds no bracket of its own and is at most 64 bytes, and the text after
/// the last one must itself be one of the messages.
fn tagged_message(l: &str) -> Option<&str> {
    let mut rest = l;
    let mut tags = 0;
    while let Some(after) = rest.strip_prefix('[') {
        let end = after.find(']')?;
        let tag = &after[..end];
        if tag.is_empty() || tag.len() > 64 || tag.contains('[') {
            return None;
        }
        rest = after[end + 1..].trim_start_matches([' ', '\t']);
        tags += 1;
    }
    (tags > 0 && is_message(rest)).then_some(rest)
}

/// The message written as a comment under the command that printed it, the way a README, a
/// blog or a runbook shows output inside a shell code block (`$ nvidia-smi` then
/// `# Failed to initialize NVML: Driver/library version mismatch`; `kubectl exec … --
/// nvidia-smi` then `# Failed to initialize NVML: Unknown Error`). Only NVML's initialisation
/// failure with its reason counts: nvidia-smi prints it as `Failed to initialize NVML: ` and
/// `nvmlErrorString`'s text (nvml.h, NVML API reference "Error reporting"), and the reason is
/// what tells the comment from a troubleshooting heading that names the error
/// (`### Failed to initialize NVML`).
fn commented_message(l: &str) -> Option<&str> {
    let body = l.strip_prefix('#')?.trim_start_matches('#');
    if !body.starts_with([' ', '\t']) {
        return None;
    }
    let body = body.trim();
    body.strip_prefix("Failed to initialize NVML: ")
        .is_some_and(|reason| reason.chars().any(char::is_alphabetic))
        .then_some(body)
}

/// One of nvidia-smi's messages for GPUs it cannot read, from the start of `l`.
fn is_message(l: &str) -> bool {
    couldnt_communicate(l)
        || l.starts_with("Failed to initialize NVML")
        || l.starts_with("NVML library version mismatch")
        || l == "No devices were found"
}

/// The message quoted whole inside a line. nvidia-smi prints it on stdout (`No devices were
/// found` even under `--query-gpu … --format=csv,noheader`, exit status 6), so a script that
/// captures the output in a variable shows it as a value: bash's `set -x` trace prints the
/// assignment `+ NAME='No devices were found'` (github.com/pytorch/pytorch/issues/163658,
/// PyTorch CI's setup-nvidia step after a driver downgrade), and a poster may quote it in a
/// sentence. Only a quoted text that is the message itself counts, in straight, back or curly
/// quotes; a longer quoted text that merely mentions it does not.
fn quoted_message(l: &str) -> Option<&str> {
    const QUOTES: [(char, char); 5] = [
        ('\'', '\''),
        ('"', '"'),
        ('`', '`'),
        ('\u{201c}', '\u{201d}'),
        ('\u{2018}', '\u{2019}'),
    ];
    for (open, close) in QUOTES {
        let mut rest = l;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len_utf8()..];
            let Some(j) = after.find(close) else {
                break;
            };
            let inner = after[..j].trim();
            if is_message(inner) {
                return Some(inner);
            }
            rest = &after[j + close.len_utf8()..];
        }
    }
    None
}

/// nvidia-smi prints `couldn't` with an ASCII apostrophe; a message pasted through an editor or
/// a chat client that curls quotes arrives as `couldn’t` or `couldn‘t`
/// (github.com/qixuema/envs/issues/4), and is the same message.
fn couldnt_communicate(l: &str) -> bool {
    l.strip_prefix("NVIDIA-SMI has failed because it couldn")
        .and_then(|r| r.strip_prefix(['\'', '\u{2019}', '\u{2018}']))
        .is_some_and(|r| r.starts_with("t communicate with the NVIDIA driver"))
}

pub struct NvidiaSmiError;

impl super::EvidenceKind for NvidiaSmiError {
    fn marker(&self, line: &str) -> bool {
        nvidia_smi_error_line(line).is_some()
    }
    fn marker_phrases(&self) -> &'static [&'static str] {
        // each form of the line holds one of the messages (`is_message`), the container
        // CLI's prefix or the device plugin's words
        &[
            "NVIDIA-SMI has failed because it couldn",
            "Failed to initialize NVML",
            "NVML library version mismatch",
            "No devices were found",
            "nvidia-container-cli: initialization error: ",
            "nvidia-container-cli: detection error: ",
            // the device plugin's klog words for a container without NVML
            // (`plugin_found_no_nvml`)
            "NVML not detected: could not load NVML library",
            "Incompatible strategy detected ",
        ]
    }
    fn has_markers(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "nvidia-smi-error"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi (or the NVIDIA container runtime's nvidia-container-cli) failing to reach the GPUs through NVML (driver not loaded, library mismatch, libnvidia-ml.so.1 missing, no devices)"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[("error", "the line nvidia-smi printed")]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        nvidia_smi_error_line(s.head).is_some()
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        Ok(serde_json::json!({
            "error": nvidia_smi_error_line(text).map(|l| super::clip(l, super::MAX_TEXT)),
        }))
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        Some(Ok(super::HostPart::NvmlError(super::clip(
            nvidia_smi_error_line(text).unwrap_or_default(),
            super::MAX_TEXT,
        ))))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_quoted_whole_in_a_shell_trace() {
        // github.com/pytorch/pytorch/issues/163658: bash's xtrace of the captured query
        let trace = "+ INSTALLED_DRIVER_VERSION='No devices were found'\n+ NVIDIA_SMI_STATUS=6\n";
        assert_eq!(nvidia_smi_error_line(trace), Some("No devices were found"));
        // the same step where the driver answered (the value it captures is a version)
        assert_eq!(
            nvidia_smi_error_line("+ INSTALLED_DRIVER_VERSION=580.82.07\n"),
            None
        );
        // a quoted text that only mentions the message is not the message
        assert_eq!(
            nvidia_smi_error_line("it said 'No devices were found, try again'\n"),
            None
        );
        // github.com/bottlerocket-os/bottlerocket-core-kit/pull/834: a healthy table has none
        let table = "| NVIDIA-SMI 580.126.09             Driver Version: 580.126.09     CUDA Version: 13.0     |\n|   0  NVIDIA A100-SXM4-40GB          On  |   00000000:10:1C.0 Off |                    0 |\n";
        assert_eq!(nvidia_smi_error_line(table), None);
    }

    #[test]
    fn the_message_written_as_a_comment_under_its_command() {
        // https://www.wanpihou.xyz/archives/nvidiaqu-dong-ban-ben-bu-pi-pei-dao-zhi-nvidia-smishi-xiao
        // (corpus h29_blog_wanpihou_nvml_driver_library_mismatch): the output under the command
        let blog = "# 主要错误信息\nnvidia-smi\n# Failed to initialize NVML: Driver/library version mismatch\n";
        assert_eq!(
            nvidia_smi_error_line(blog),
            Some("Failed to initialize NVML: Driver/library version mismatch")
        );
        // written for this test in a Kubernetes runbook's layout: NVML's "Unknown Error" reason
        let runbook =
            "kubectl exec -it <pod> -- nvidia-smi\n# Failed to initialize NVML: Unknown Error\n";
        assert!(nvidia_smi_error_line(runbook).is_some());
        // written for this test as a README's troubleshooting heading, which names the error
        // without a reason: not the output
        assert_eq!(
            nvidia_smi_error_line("### Failed to initialize NVML\nIn LXC: check cgroups.\n"),
            None
        );
        // a shell comment about something else holds none, nor does a healthy table
        // (https://www.cnblogs.com/asandstar/p/19391726, corpus h29_blog_cnblogs_smi_550_4090x8_collapsed)
        assert_eq!(
            nvidia_smi_error_line("# check the driver first\nnvidia-smi\n"),
            None
        );
        let table = "| NVIDIA-SMI 550.144.03 Driver Version: 550.144.03 CUDA Version: 12.4 |\n| 0 NVIDIA GeForce RTX 4090 Off | 00000000:1B:00.0 Off | Off |\n";
        assert_eq!(nvidia_smi_error_line(table), None);
    }

    #[test]
    fn the_message_after_a_relaying_program_s_tags() {
        // github.com/mozilla/translations/issues/1167: the pipeline relays nvidia-smi's stdout
        // under its own tags (run-task's `[task TIME] ` already taken off by the paste layer)
        let relayed = "[train] nvidia-smi failed with return code 18\n[train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library version mismatch\n[train] [nvidia-smi(stdout)] NVML library version: 550.144\n";
        assert_eq!(
            nvidia_smi_error_line(relayed),
            Some("Failed to initialize NVML: Driver/library version mismatch")
        );
        // and with run-task's prefix still on, as the issue shows it
        let task = "[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library version mismatch\n";
        assert!(nvidia_smi_error_line(task).is_some());
        // the same runner relaying a healthy run: the tags lead to no message
        // (github.com/mozilla/translations/issues/1167's first line, and a table row relayed)
        assert_eq!(
            nvidia_smi_error_line("[train] nvidia-smi failed with return code 18\n"),
            None
        );
        assert_eq!(
            nvidia_smi_error_line(
                "[train] [nvidia-smi(stdout)] |   0  NVIDIA A100-SXM4-40GB          On  |   00000000:10:1C.0 Off |                    0 |\n"
            ),
            None
        );
        // a tag that never closes, or text that names the message after a tag, is not it
        assert_eq!(
            nvidia_smi_error_line("[train Failed to initialize NVML: Unknown Error\n"),
            None
        );
        assert_eq!(
            nvidia_smi_error_line("[docs] the FAQ covers Failed to initialize NVML\n"),
            None
        );
    }

    #[test]
    fn the_message_as_the_k8s_device_plugin_logs_it() {
        // github.com/NVIDIA/k8s-device-plugin/issues/444 (v0.11, Go's log), its CRI carrier
        // taken off by the paste unwrapper
        let t = "2023/10/19 03:11:54 Loading NVML\n2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.\n2023/10/19 03:11:54 If this is a GPU node, did you set the docker default runtime to `nvidia`?\n";
        assert_eq!(
            nvidia_smi_error_line(t),
            Some("Failed to initialize NVML: could not load NVML library.")
        );
        // klog, as a public deployment guide of the plugin's Helm chart on openSUSE Rancher
        // quotes the plugin's error (the index's file 63267371186)
        let t = "E0615 11:44:17.967419       1 factory.go:93] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n";
        assert_eq!(
            nvidia_smi_error_line(t),
            Some("Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.")
        );
        // healthy: the plugin loading NVML and going on (k8s-device-plugin#302's Go log;
        // github.com/Project-HAMi/HAMi/issues/452's klog line of v0.14.5)
        let t = "2022/06/16 07:21:18 Starting FS watcher.\n2022/06/16 07:21:18 Starting OS watcher.\n2022/06/16 07:21:18 Starting Plugins.\n2022/06/16 07:21:18 Loading configuration.\n2022/06/16 07:21:18 Initializing NVML.\nI0822 08:51:42.921955       1 factory.go:107] Detected NVML platform: found NVML library\n";
        assert_eq!(nvidia_smi_error_line(t), None);
    }

    #[test]
    fn the_plugins_own_words_for_a_container_without_nvml() {
        // github.com/NVIDIA/k8s-device-plugin/issues/1371 (chart 0.17.3, rm.go's warning)
        let t = "I0819 07:02:54.757465       1 main.go:342] Updating config with default resource matching patterns.\nW0819 07:02:54.757542       1 rm.go:108] mig-strategy=\"mixed\" is only supported with NVML\nW0819 07:02:54.757556       1 rm.go:109] NVML not detected: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n";
        assert!(
            nvidia_smi_error_line(t)
                .is_some_and(|l| l.starts_with("NVML not detected: could not load"))
        );
        // github.com/NVIDIA/k8s-device-plugin/issues/1220 (0.17.1, factory.go's error)
        let t = "I0506 17:45:45.421854       1 main.go:356] Retrieving plugins.\nE0506 17:45:45.421956       1 factory.go:112] Incompatible strategy detected auto\nE0506 17:45:45.421965       1 factory.go:113] If this is a GPU node, did you configure the NVIDIA Container Toolkit?\n";
        assert_eq!(
            nvidia_smi_error_line(t),
            Some("Incompatible strategy detected auto")
        );
        let t = "E0506 17:45:45.421956       1 factory.go:118] Incompatible strategy detected unknown\n";
        assert!(nvidia_smi_error_line(t).is_some());
        // not NVML's absence: a platform the plugin knows (WSL), the message without its
        // header, a found library, a warning naming NVML without the reason
        for t in [
            "E0506 17:45:45.421956       1 factory.go:112] Incompatible strategy detected wsl\n",
            "Incompatible strategy detected auto\n",
            "NVML not detected: could not load NVML library: libnvidia-ml.so.1\n",
            "I0822 08:51:42.921955       1 factory.go:107] Detected NVML platform: found NVML library\n",
            "W0819 07:02:54.757542       1 rm.go:108] mig-strategy=\"mixed\" is only supported with NVML\n",
        ] {
            assert_eq!(nvidia_smi_error_line(t), None, "{t}");
        }
    }

    #[test]
    fn the_message_with_a_plain_or_a_typographic_apostrophe() {
        // github.com/lyulyul/shine-cluster/issues/50, as nvidia-smi prints it
        let plain = "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n";
        assert!(nvidia_smi_error_line(plain).is_some_and(|l| l.starts_with("NVIDIA-SMI")));
        // github.com/qixuema/envs/issues/4, pasted with a curled quote
        let curled = "NVIDIA-SMI has failed because it couldn\u{2018}t communicate with the NVIDIA driver.\nMake sure that the latest NVIDIA driver is installed and running.\n";
        assert!(nvidia_smi_error_line(curled).is_some());
        assert!(nvidia_smi_error_line(&curled.replace('\u{2018}', "\u{2019}")).is_some());
        // prose that names the message is not it
        assert!(
            nvidia_smi_error_line("NVIDIA-SMI has failed because it couldnt be found\n").is_none()
        );
    }

    #[test]
    fn the_container_runtimes_nvml_failure() {
        // github.com/NVIDIA/nvidia-container-toolkit/issues/260: docker relays the hook's stderr
        let docker = "docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.\n";
        assert_eq!(
            nvidia_smi_error_line(docker),
            Some(
                "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown."
            )
        );
        // github.com/NVIDIA/libnvidia-container/issues/231: NVML's library is not there at all
        let list = "nvidia-container-cli list\nnvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory\n";
        assert!(
            nvidia_smi_error_line(list)
                .is_some_and(|l| l.contains("load library failed: libnvidia-ml.so.1"))
        );
        // github.com/NVIDIA/libnvidia-container/issues/135: an initialization error that is not
        // NVML's (the driver RPC service on a Jetson) is left alone
        let jetson =
            "nvidia-container-cli: initialization error: driver error: failed to process request\n";
        assert_eq!(nvidia_smi_error_line(jetson), None);
        // github.com/NVIDIA/nvidia-docker/issues/1629: the same tool's debug log of a start is
        // not a failure
        let debug = "I0418 18:12:58.648174 217303 nvc.c:376] initializing library context (version=1.9.0, build=5e135c17d6dbae861ec343e9a8d3a0d2af758a4f)\n";
        assert_eq!(nvidia_smi_error_line(debug), None);
    }

    #[test]
    fn the_container_clis_detection_error_inside_containerds_quoted_error() {
        // github.com/Project-HAMi/volcano-vgpu-device-plugin/issues/123 (corpus
        // h164_journal_volcanovgpu123_…): a node with a faulty GPU, containerd's journal line
        // for StartContainer, the hook's two stderr lines joined by a `\n` escape
        let journal = "4月 28 15:08:10 master-02 containerd[3862899]: time=\"2026-04-28T15:08:10.867655874+08:00\" level=error msg=\"StartContainer for \\\"8c9ea3e0970fab7df3893a1fca87318bf892d3a8cc85eaf33807f335533b8bb6\\\" failed\" error=\"failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\\nnvidia-container-cli: detection error: nvml error: unknown error: unknown\"\n";
        assert_eq!(
            nvidia_smi_error_line(journal),
            Some("nvidia-container-cli: detection error: nvml error: unknown error: unknown")
        );
        // libnvidia-container's `warnx("detection error: %s", …)` alone on its line
        let bare = "nvidia-container-cli: detection error: nvml error: driver not loaded\n";
        assert!(nvidia_smi_error_line(bare).is_some());
        // not NVML's: a detection error of another reason, a `\n` escape with no stderr before
        // it, the CLI's other contexts, prose naming the phrase
        for t in [
            "nvidia-container-cli: detection error: open failed: /proc/driver/nvidia/version: no such file or directory\n",
            "msg=\"hook said\\nnvidia-container-cli: detection error: nvml error: unknown error\"\n",
            "stderr: nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/x/merged/run/nvidia-persistenced/socket: no such device or address\n",
            "we saw a nvidia-container-cli: detection error: nvml error: unknown error once\n",
        ] {
            assert_eq!(nvidia_smi_error_line(t), None, "{t}");
        }
    }
}
