//! Recognises which kind of evidence a pasted text is, and parses it into a JSON value with the
//! matching parser. Recognition looks for markers each format always prints (the NVSMI banner,
//! `NCCL INFO`, `NVRM:`, `traceEvents`, ...); mount tables are told apart by their content.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    NvidiaSmiText,
    NvidiaSmiXml,
    NcclLog,
    KernelLog,
    TorchMemory,
    Fstab,
    ProcMounts,
    ChromeTrace,
    CudaVersion,
    NvidiaSmiTable,
    NvidiaSmiCsv,
    #[serde(rename = "nvidia-smi-dmon")]
    NvidiaSmiMonitor,
    NvidiaSmiTopo,
    MountOutput,
    Mountinfo,
    Df,
    ShmErrorLog,
    /// What `nvidia-smi` prints instead of a table when it cannot read the GPUs.
    NvidiaSmiError,
    Ibstat,
    IbvDevinfo,
    Ibdev2netdev,
    PyspyDump,
    ContainerSpec,
}

impl EvidenceKind {
    pub const ALL: [EvidenceKind; 23] = [
        EvidenceKind::NvidiaSmiText,
        EvidenceKind::NvidiaSmiXml,
        EvidenceKind::NcclLog,
        EvidenceKind::KernelLog,
        EvidenceKind::TorchMemory,
        EvidenceKind::Fstab,
        EvidenceKind::ProcMounts,
        EvidenceKind::ChromeTrace,
        EvidenceKind::CudaVersion,
        EvidenceKind::NvidiaSmiTable,
        EvidenceKind::NvidiaSmiCsv,
        EvidenceKind::NvidiaSmiMonitor,
        EvidenceKind::NvidiaSmiTopo,
        EvidenceKind::MountOutput,
        EvidenceKind::Mountinfo,
        EvidenceKind::Df,
        EvidenceKind::ShmErrorLog,
        EvidenceKind::NvidiaSmiError,
        EvidenceKind::Ibstat,
        EvidenceKind::IbvDevinfo,
        EvidenceKind::Ibdev2netdev,
        EvidenceKind::PyspyDump,
        EvidenceKind::ContainerSpec,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EvidenceKind::NvidiaSmiText => "nvidia-smi-text",
            EvidenceKind::NvidiaSmiXml => "nvidia-smi-xml",
            EvidenceKind::NcclLog => "nccl-log",
            EvidenceKind::KernelLog => "kernel-log",
            EvidenceKind::TorchMemory => "torch-memory",
            EvidenceKind::Fstab => "fstab",
            EvidenceKind::ProcMounts => "proc-mounts",
            EvidenceKind::ChromeTrace => "chrome-trace",
            EvidenceKind::CudaVersion => "cuda-version",
            EvidenceKind::NvidiaSmiTable => "nvidia-smi-table",
            EvidenceKind::NvidiaSmiCsv => "nvidia-smi-csv",
            EvidenceKind::NvidiaSmiMonitor => "nvidia-smi-dmon",
            EvidenceKind::NvidiaSmiTopo => "nvidia-smi-topo",
            EvidenceKind::MountOutput => "mount-output",
            EvidenceKind::Mountinfo => "mountinfo",
            EvidenceKind::Df => "df",
            EvidenceKind::ShmErrorLog => "shm-error-log",
            EvidenceKind::NvidiaSmiError => "nvidia-smi-error",
            EvidenceKind::Ibstat => "ibstat",
            EvidenceKind::IbvDevinfo => "ibv-devinfo",
            EvidenceKind::Ibdev2netdev => "ibdev2netdev",
            EvidenceKind::PyspyDump => "pyspy-dump",
            EvidenceKind::ContainerSpec => "container-spec",
        }
    }

    pub fn from_name(name: &str) -> Option<EvidenceKind> {
        EvidenceKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Only the head is inspected: markers sit near the top, and a huge paste stays cheap.
pub const HEAD: usize = 64 * 1024;

fn head(text: &str) -> &str {
    let mut end = text.len().min(HEAD);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The kind of evidence a file holds, from its head alone ([`HEAD`] bytes, gunzipped for
/// `.gz`): asking what a 200 MB paste is must not load it. `None` when it is no known kind (or
/// cannot be read). Only the shm-error check reads past the head, so a text this calls job
/// evidence is job evidence read whole too.
pub fn detect_file(p: &std::path::Path) -> Option<EvidenceKind> {
    detect(&crate::vocab::io::read_head(p, HEAD).ok()?)
}

pub fn detect(text: &str) -> Option<EvidenceKind> {
    let h = head(text);
    let t = h.trim_start();
    // nvidia-smi -q text and XML quoted in a reply (`> ` before each line) read as pasted
    let unquoted = super::unquote(h);
    let q: &str = &unquoted;
    if super::nvidia_smi::looks_like_xml(q) {
        return Some(EvidenceKind::NvidiaSmiXml);
    }
    if (t.starts_with('{') || t.starts_with('['))
        && (h.contains("\"traceEvents\"") || (h.contains("\"ph\"") && h.contains("\"ts\"")))
    {
        return Some(EvidenceKind::ChromeTrace);
    }
    if t.starts_with('{') && h.contains("\"cuda\"") && h.contains("\"version\"") {
        return Some(EvidenceKind::CudaVersion);
    }
    // The default table before `-q` text: its header line holds `Driver Version` too.
    if super::smi_tables::looks_like_table(h) {
        return Some(EvidenceKind::NvidiaSmiTable);
    }
    if q.contains("NVSMI LOG")
        || (q.contains("Product Name") && (q.contains("Attached GPUs") || q.contains("\nGPU 0")))
        || (q.contains("Persistence Mode") && q.contains("Performance State"))
        || super::nvidia_smi::looks_like_q_fragment(q)
    {
        return Some(EvidenceKind::NvidiaSmiText);
    }
    if super::smi_tables::looks_like_query_csv(h) {
        return Some(EvidenceKind::NvidiaSmiCsv);
    }
    if super::smi_tables::looks_like_monitor(h) {
        return Some(EvidenceKind::NvidiaSmiMonitor);
    }
    if super::smi_tables::looks_like_topo(h) {
        return Some(EvidenceKind::NvidiaSmiTopo);
    }
    if nvidia_smi_error_line(h).is_some() {
        return Some(EvidenceKind::NvidiaSmiError);
    }
    if h.contains("NCCL INFO") || h.contains("NCCL WARN") || h.contains("NCCL version ") {
        return Some(EvidenceKind::NcclLog);
    }
    if super::pyspy_dump::looks_like_pyspy_dump(h) {
        return Some(EvidenceKind::PyspyDump);
    }
    if super::ibstat::looks_like_ibstat(h) {
        return Some(EvidenceKind::Ibstat);
    }
    if super::ibv_devinfo::looks_like_ibv_devinfo(h) {
        return Some(EvidenceKind::IbvDevinfo);
    }
    if super::ibdev2netdev::looks_like_ibdev2netdev(h) {
        return Some(EvidenceKind::Ibdev2netdev);
    }
    if h.contains("CUDA out of memory")
        || h.contains("OutOfMemoryError")
        || h.contains("PyTorch CUDA memory summary")
        || super::torch_memory::looks_like_memory_printout(h)
    {
        return Some(EvidenceKind::TorchMemory);
    }
    if shm_error_line(text).is_some() {
        return Some(EvidenceKind::ShmErrorLog);
    }
    if h.contains("NVRM:")
        || (h.contains("AER:") && h.contains("pcieport"))
        || h.lines().any(super::kernel_log::is_gpu_lost)
        || looks_like_kernel_log(h)
    {
        return Some(EvidenceKind::KernelLog);
    }
    if super::container_spec::looks_like_container_spec(h) {
        return Some(EvidenceKind::ContainerSpec);
    }
    if h.contains("Cuda compilation tools") || t.starts_with("CUDA Version ") {
        return Some(EvidenceKind::CudaVersion);
    }
    if super::mount_text::looks_like_df(h) {
        return Some(EvidenceKind::Df);
    }
    if super::mount_text::looks_like_mountinfo(h) {
        return Some(EvidenceKind::Mountinfo);
    }
    if super::mount_text::looks_like_mount_output(h) {
        return Some(EvidenceKind::MountOutput);
    }
    mount_table_kind(h)
}

/// The line where `nvidia-smi` (or NVML) says it cannot read the GPUs at all: the driver is
/// not loaded or not reachable, user space and kernel module disagree, or the driver sees no
/// GPU. (A single lost GPU is a GPU fault and reads as a kernel log, see
/// [`super::kernel_log::is_gpu_lost`].)
pub fn nvidia_smi_error_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| {
        l.starts_with(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        ) || l.starts_with("Failed to initialize NVML")
            || l.starts_with("NVML library version mismatch")
            || *l == "No devices were found"
    })
}

/// The first line where DataLoader workers fail for lack of shared memory.
pub fn shm_error_line(text: &str) -> Option<&str> {
    text.lines().find(|l| {
        l.contains("insufficient shared memory")
            || l.contains("unable to write to file </torch_")
            || (l.contains("DataLoader worker") && l.contains("Bus error"))
            || (l.contains("/dev/shm") && l.contains("No space left on device"))
    })
}

/// Most lines carry a dmesg timestamp or a kmsg record header.
fn looks_like_kernel_log(h: &str) -> bool {
    let lines: Vec<&str> = h
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(50)
        .collect();
    if lines.is_empty() {
        return false;
    }
    let stamped = lines
        .iter()
        .filter(|l| {
            let l = l.trim_start();
            (l.starts_with('[')
                && l.find(']')
                    .is_some_and(|i| l[1..i].trim().parse::<f64>().is_ok()))
                || l.split_once(';').is_some_and(|(head, _)| {
                    head.split(',').count() >= 3
                        && head.split(',').take(3).all(|p| p.parse::<u64>().is_ok())
                })
                || l.contains(" kernel: ")
        })
        .count();
    stamped * 2 > lines.len()
}

fn mount_table_kind(h: &str) -> Option<EvidenceKind> {
    let lines: Vec<&str> = h.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let comments = lines.iter().filter(|l| l.starts_with('#')).count();
    let rows: Vec<Vec<&str>> = lines
        .iter()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let table_rows = rows
        .iter()
        .filter(|f| {
            f.len() >= 3
                && f.len() <= 6
                && (f[1].starts_with('/') || f[1] == "none" || f[1] == "swap")
        })
        .count();
    if rows.is_empty() {
        // Only comments: an fstab with nothing configured (a fresh install's placeholder).
        return (comments > 0
            && lines
                .iter()
                .any(|l| l.to_ascii_lowercase().contains("fstab")))
        .then_some(EvidenceKind::Fstab);
    }
    if table_rows * 2 <= rows.len() {
        return None;
    }
    let fstab_markers = comments > 0
        || rows.iter().any(|f| {
            f[0].starts_with("UUID=")
                || f[0].starts_with("LABEL=")
                || f[0].starts_with("PARTUUID=")
                || f.get(3).is_some_and(|o| {
                    o.split(',')
                        .any(|x| x == "defaults" || x == "noauto" || x == "nofail")
                })
                || f.len() < 6
        });
    Some(if fstab_markers {
        EvidenceKind::Fstab
    } else {
        EvidenceKind::ProcMounts
    })
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| format!("cannot encode the parsed evidence: {e}"))
}

/// Parses `text` as evidence of `kind` into a JSON value for rules to read.
pub fn parse(kind: EvidenceKind, text: &str) -> Result<Value, String> {
    use super::*;
    match kind {
        EvidenceKind::NvidiaSmiText => to_value(&nvidia_smi::parse_nvidia_smi_text(text)?),
        EvidenceKind::NvidiaSmiXml => to_value(&nvidia_smi::parse_nvidia_smi_xml(text)?),
        EvidenceKind::NcclLog => to_value(&nccl_log::parse_nccl_log(text)),
        EvidenceKind::KernelLog => to_value(&kernel_log::parse_kernel_log(text)),
        EvidenceKind::TorchMemory => to_value(&torch_memory::parse_torch_memory(text)),
        EvidenceKind::Fstab => to_value(&mounts::parse_fstab(text)),
        EvidenceKind::ProcMounts => to_value(&mounts::parse_proc_mounts(text)),
        EvidenceKind::ChromeTrace => {
            to_value(&trace::analyze_trace(text.as_bytes()).map_err(|e| e.to_string())?)
        }
        EvidenceKind::NvidiaSmiTable => to_value(&smi_tables::parse_table(text)?),
        EvidenceKind::Ibstat => to_value(&ibstat::parse_ibstat(text)),
        EvidenceKind::IbvDevinfo => to_value(&ibv_devinfo::parse_ibv_devinfo(text)),
        EvidenceKind::Ibdev2netdev => to_value(&ibdev2netdev::parse_ibdev2netdev(text)),
        EvidenceKind::PyspyDump => to_value(&pyspy_dump::parse_pyspy_dump(text)),
        EvidenceKind::ContainerSpec => to_value(&container_spec::parse_container_specs(text)),
        EvidenceKind::NvidiaSmiCsv => to_value(&smi_tables::parse_query_csv(text)?),
        EvidenceKind::NvidiaSmiMonitor => to_value(&smi_tables::parse_monitor(text)?),
        EvidenceKind::NvidiaSmiTopo => to_value(&smi_tables::parse_topo(text)?),
        EvidenceKind::MountOutput => to_value(&mounts::parse_proc_mounts(
            &mount_text::mount_output_to_proc_mounts(text),
        )),
        EvidenceKind::Mountinfo => to_value(&mounts::parse_proc_mounts(
            &mount_text::mountinfo_to_proc_mounts(text),
        )),
        EvidenceKind::Df => to_value(&mount_text::parse_df(text)),
        EvidenceKind::ShmErrorLog => Ok(serde_json::json!({
            "error": shm_error_line(text).map(|l| clip(l.trim(), MAX_TEXT)),
        })),
        EvidenceKind::NvidiaSmiError => Ok(serde_json::json!({
            "error": nvidia_smi_error_line(text).map(|l| clip(l, MAX_TEXT)),
        })),
        EvidenceKind::CudaVersion => match cuda_stack::parse_cuda_version(text) {
            Some(v) => to_value(&v),
            None => Err("no CUDA toolkit version in the text (expected `nvcc --version`, version.json or version.txt)".to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::fixture;
    use proptest::prelude::*;

    #[test]
    fn every_fixture_is_recognised_as_its_kind() {
        use EvidenceKind::*;
        let cases = [
            ("nvidia_smi/h200-q.txt", NvidiaSmiText),
            ("nvidia_smi/v100_truncated.txt", NvidiaSmiText),
            ("nvidia_smi/h200-q-x.xml", NvidiaSmiXml),
            ("nvidia_smi/gtx_1080_truncated.xml", NvidiaSmiXml),
            ("nccl/ib_roce_2node.log", NcclLog),
            ("nccl/single_node_p2p.log", NcclLog),
            ("nccl/no_ib_device_multinode.log", NcclLog),
            ("kernel_log/xid79_journal.txt", KernelLog),
            ("kernel_log/rm_init_adapter_dmesg.txt", KernelLog),
            ("kernel_log/aer_corrected.txt", KernelLog),
            ("torch_memory/oom_expandable_segments.txt", TorchMemory),
            ("torch_memory/oom_old_wording.txt", TorchMemory),
            ("torch_memory/memory_summary_truncated.txt", TorchMemory),
            ("mounts/h200_fstab", Fstab),
            ("mounts/h200_proc_mounts", ProcMounts),
            ("trace/starved.pt.trace.json", ChromeTrace),
            ("trace/truncated.pt.trace.json", ChromeTrace),
            ("cuda/nvcc_version_h200.txt", CudaVersion),
            ("infiniband/ibstat_roce_one_disabled.txt", Ibstat),
            ("infiniband/ibstat_polling.txt", Ibstat),
            ("infiniband/ibstat_active_ibpanic.txt", Ibstat),
            ("infiniband/ibstat_linkup_state_down.txt", Ibstat),
            ("infiniband/ibv_devinfo_port_down.txt", IbvDevinfo),
            ("infiniband/ibv_devinfo_roce_active.txt", IbvDevinfo),
            ("infiniband/ibv_devinfo_port_init.txt", IbvDevinfo),
            (
                "infiniband/ibdev2netdev_ib_fabric_healthy.txt",
                Ibdev2netdev,
            ),
            ("infiniband/ibdev2netdev_vfs_down.txt", Ibdev2netdev),
            ("pyspy/worker_idle_lhotse.txt", PyspyDump),
            ("pyspy/allgather_hang_accelerate.txt", PyspyDump),
        ];
        for (name, kind) in cases {
            let text = fixture(name);
            assert_eq!(detect(&text), Some(kind), "{name}");
            assert!(parse(kind, &text).is_ok(), "{name}");
        }
    }

    #[test]
    fn small_samples_of_each_kind() {
        use EvidenceKind::*;
        assert_eq!(
            detect("UUID=1 / ext4 defaults 0 1\n/dev/sdb /data xfs noatime 0 2\n"),
            Some(Fstab)
        );
        assert_eq!(
            detect("sysfs /sys sysfs rw,nosuid 0 0\n/dev/nvme0n1p1 / ext4 rw,relatime 0 0\n"),
            Some(ProcMounts)
        );
        assert_eq!(
            detect(r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#),
            Some(CudaVersion)
        );
        assert_eq!(detect("CUDA Version 11.8.0\n"), Some(CudaVersion));
        assert_eq!(
            detect("6,1234,5678,-;nvidia: loading out-of-tree module\n"),
            Some(KernelLog)
        );
        assert_eq!(detect("[  1.0] x\n[  2.0] y\n"), Some(KernelLog));
        assert_eq!(
            detect(
                "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
            ),
            Some(NvidiaSmiError)
        );
        assert_eq!(detect("No devices were found\n"), Some(NvidiaSmiError));
        // a -q XML fragment quoted in a reply
        assert_eq!(
            detect(
                "> <clocks_event_reasons>\n>     <clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n>     <clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>\n> </clocks_event_reasons>\n"
            ),
            Some(NvidiaSmiXml)
        );
        assert_eq!(
            detect("Failed to initialize NVML: Driver/library version mismatch\n"),
            Some(NvidiaSmiError)
        );
        // the words inside prose are not the tool's output
        assert_eq!(detect("it said no devices were found, then worked\n"), None);
        assert_eq!(detect("hello world\nthis is not evidence\n"), None);
        assert_eq!(detect(""), None);
    }

    #[test]
    fn parse_reports_unusable_text() {
        assert!(parse(EvidenceKind::ChromeTrace, "not json").is_err());
        assert!(parse(EvidenceKind::CudaVersion, "nothing").is_err());
        assert!(parse(EvidenceKind::NvidiaSmiText, "nothing").is_err());
        let v = parse(EvidenceKind::NcclLog, &fixture("nccl/ib_roce_2node.log")).unwrap();
        assert_eq!(v["net"], "IB");
    }

    #[test]
    fn names_round_trip() {
        for k in EvidenceKind::ALL {
            assert_eq!(EvidenceKind::from_name(k.name()), Some(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(512)
        })]

        #[test]
        fn detect_and_parse_never_panic(s in "\\PC{0,800}") {
            if let Some(k) = detect(&s) {
                let _ = parse(k, &s);
            }
            for k in EvidenceKind::ALL {
                let _ = parse(k, &s);
            }
        }
    }
}
