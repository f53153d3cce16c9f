//! Recognises which kind of evidence a pasted text is: the first kind of [`super::KINDS`] whose
//! detector claims it. Detectors look for markers each format always prints (the NVSMI banner,
//! `NCCL INFO`, `NVRM:`, `traceEvents`, ...) in the head of the text only.

use super::{EvidenceKind, KINDS, Sniff};

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
pub fn detect_file(p: &std::path::Path) -> Option<&'static dyn EvidenceKind> {
    detect(&crate::vocab::io::read_head(p, HEAD).ok()?)
}

/// The kind of evidence `text` is, or `None` when no kind recognises it.
pub fn detect(text: &str) -> Option<&'static dyn EvidenceKind> {
    let h = head(text);
    // nvidia-smi -q text and XML quoted in a reply (`> ` before each line) read as pasted
    let unquoted = super::unquote(h);
    let late = super::scan::Late::new(text);
    let s = Sniff {
        head: h,
        unquoted: &unquoted,
        text,
        late: &late,
    };
    KINDS.iter().copied().find(|k| k.detect(&s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testutil::fixture;
    use crate::evidence::{find, parse};
    use proptest::prelude::*;

    #[test]
    fn every_fixture_is_recognised_as_its_kind() {
        let cases = [
            ("nvidia_smi/h200-q.txt", "nvidia-smi-text"),
            ("nvidia_smi/v100_truncated.txt", "nvidia-smi-text"),
            ("nvidia_smi/h200-q-x.xml", "nvidia-smi-xml"),
            ("nvidia_smi/gtx_1080_truncated.xml", "nvidia-smi-xml"),
            ("nccl/ib_roce_2node.log", "nccl-log"),
            ("nccl/single_node_p2p.log", "nccl-log"),
            ("nccl/no_ib_device_multinode.log", "nccl-log"),
            ("kernel_log/xid79_journal.txt", "kernel-log"),
            ("kernel_log/rm_init_adapter_dmesg.txt", "kernel-log"),
            ("kernel_log/aer_corrected.txt", "kernel-log"),
            ("torch_memory/oom_expandable_segments.txt", "torch-memory"),
            ("torch_memory/oom_old_wording.txt", "torch-memory"),
            ("torch_memory/memory_summary_truncated.txt", "torch-memory"),
            ("mounts/h200_fstab", "fstab"),
            ("mounts/h200_proc_mounts", "proc-mounts"),
            ("trace/starved.pt.trace.json", "chrome-trace"),
            ("trace/truncated.pt.trace.json", "chrome-trace"),
            ("cuda/nvcc_version_h200.txt", "cuda-version"),
            ("infiniband/ibstat_roce_one_disabled.txt", "ibstat"),
            ("infiniband/ibstat_polling.txt", "ibstat"),
            ("infiniband/ibstat_active_ibpanic.txt", "ibstat"),
            ("infiniband/ibstat_linkup_state_down.txt", "ibstat"),
            ("infiniband/ibv_devinfo_port_down.txt", "ibv-devinfo"),
            ("infiniband/ibv_devinfo_roce_active.txt", "ibv-devinfo"),
            ("infiniband/ibv_devinfo_port_init.txt", "ibv-devinfo"),
            (
                "infiniband/ibdev2netdev_ib_fabric_healthy.txt",
                "ibdev2netdev",
            ),
            ("infiniband/ibdev2netdev_vfs_down.txt", "ibdev2netdev"),
            ("pyspy/worker_idle_lhotse.txt", "pyspy-dump"),
            ("pyspy/allgather_hang_accelerate.txt", "pyspy-dump"),
            // issue 24: -q -d sections, with and without the NVSMI banner
            (
                "nvidia_smi/q_d_utilization_samples_encoder.txt",
                "nvidia-smi-text",
            ),
            (
                "nvidia_smi/q_d_power_current_limit_below_default.txt",
                "nvidia-smi-text",
            ),
            (
                "nvidia_smi/q_d_power_at_default_laptop.txt",
                "nvidia-smi-text",
            ),
            ("nvidia_smi/q_d_performance_idle.txt", "nvidia-smi-text"),
            (
                "nvidia_smi/q_d_temperature_at_max_operating.txt",
                "nvidia-smi-text",
            ),
            (
                "nvidia_smi/q_d_power_clock_temp_perf_idle.txt",
                "nvidia-smi-text",
            ),
            (
                "nvidia_smi/q_power_clocks_older_wording.txt",
                "nvidia-smi-text",
            ),
            ("dcgmi/diag_r2_gpu_memory_thermal_fail.txt", "dcgmi-diag"),
            ("dcgmi/diag_deployment_row_remap_error.txt", "dcgmi-diag"),
            ("dcgmi/diag_r2_cuda_context_fail.txt", "dcgmi-diag"),
            ("dcgmi/diag_r3_deployment_pass.txt", "dcgmi-diag"),
            ("dcgmi/diag_v4_software_pass.txt", "dcgmi-diag"),
            ("dcgmi/dmon_gract_smact.txt", "dcgmi-dmon"),
            ("lspci/lnksta_gen1_riser_idle.txt", "lspci"),
            ("lspci/lnksta_x1_downgraded.txt", "lspci"),
            ("lspci/full_link_ok_wording.txt", "lspci"),
            ("lspci/a100_header_nn.txt", "lspci"),
            ("lspci/other_vendor_accelerator.txt", "lspci"),
        ];
        for (name, kind) in cases {
            let text = fixture(name);
            assert_eq!(kind_of(&text), Some(kind), "{name}");
            assert!(parse(k(kind), &text).is_ok(), "{name}");
        }
    }

    #[test]
    fn small_samples_of_each_kind() {
        assert_eq!(
            kind_of("UUID=1 / ext4 defaults 0 1\n/dev/sdb /data xfs noatime 0 2\n"),
            Some("fstab")
        );
        assert_eq!(
            kind_of("sysfs /sys sysfs rw,nosuid 0 0\n/dev/nvme0n1p1 / ext4 rw,relatime 0 0\n"),
            Some("proc-mounts")
        );
        assert_eq!(
            kind_of(r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#),
            Some("cuda-version")
        );
        assert_eq!(kind_of("CUDA Version 11.8.0\n"), Some("cuda-version"));
        assert_eq!(
            kind_of("6,1234,5678,-;nvidia: loading out-of-tree module\n"),
            Some("kernel-log")
        );
        assert_eq!(kind_of("[  1.0] x\n[  2.0] y\n"), Some("kernel-log"));
        assert_eq!(
            kind_of(
                "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
            ),
            Some("nvidia-smi-error")
        );
        assert_eq!(kind_of("No devices were found\n"), Some("nvidia-smi-error"));
        // a -q XML fragment quoted in a reply
        assert_eq!(
            kind_of(
                "> <clocks_event_reasons>\n>     <clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n>     <clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>\n> </clocks_event_reasons>\n"
            ),
            Some("nvidia-smi-xml")
        );
        assert_eq!(
            kind_of("Failed to initialize NVML: Driver/library version mismatch\n"),
            Some("nvidia-smi-error")
        );
        // the words inside prose are not the tool's output
        assert_eq!(
            kind_of("it said no devices were found, then worked\n"),
            None
        );
        assert_eq!(kind_of("hello world\nthis is not evidence\n"), None);
        assert_eq!(kind_of(""), None);
    }

    #[test]
    fn parse_reports_unusable_text() {
        assert!(parse(k("chrome-trace"), "not json").is_err());
        assert!(parse(k("cuda-version"), "nothing").is_err());
        assert!(parse(k("nvidia-smi-text"), "nothing").is_err());
        let v = parse(k("nccl-log"), &fixture("nccl/ib_roce_2node.log")).unwrap();
        assert_eq!(v["net"], "IB");
    }

    fn k(name: &str) -> &'static dyn EvidenceKind {
        find(name).unwrap_or_else(|| panic!("no evidence kind {name}"))
    }

    fn kind_of(text: &str) -> Option<&'static str> {
        detect(text).map(|k| k.name())
    }

    /// One text of every kind, from the fixtures where there is one.
    fn samples() -> Vec<(&'static str, String)> {
        let mut v: Vec<(&str, String)> = [
            ("nvidia-smi-text", "nvidia_smi/h200-q.txt"),
            ("nvidia-smi-xml", "nvidia_smi/h200-q-x.xml"),
            ("nccl-log", "nccl/ib_roce_2node.log"),
            ("kernel-log", "kernel_log/xid79_journal.txt"),
            ("kernel-log", "kernel_log/aer_corrected.txt"),
            ("torch-memory", "torch_memory/oom_expandable_segments.txt"),
            ("torch-memory", "torch_memory/memory_summary_truncated.txt"),
            ("fstab", "mounts/h200_fstab"),
            ("proc-mounts", "mounts/h200_proc_mounts"),
            ("chrome-trace", "trace/starved.pt.trace.json"),
            ("nsys-stats", "nsys/stats_vector_add_launch_bound.txt"),
            ("nsys-stats", "nsys/rule_memcpy_async_pageable.txt"),
            ("nsys-stats", "nsys/cudaapisum_2020_oneflow.txt"),
            ("nsys-stats", "nsys/stats_2019_conv_kernel.txt"),
            ("nvprof-summary", "nsys/nvprof_dtod_tiny_copies.txt"),
            ("nvprof-summary", "nsys/nvprof_blank_lines_one_kernel.txt"),
            ("cuda-version", "cuda/nvcc_version_h200.txt"),
            ("fabric-manager", "fabric/fm_version_mismatch_akash632.txt"),
            ("fabric-manager", "fabric/smiq_fabric_completed_dra626.txt"),
            (
                "fabric-manager",
                "fabric/fm_active_p4d_bottlerocket3873.txt",
            ),
            ("cuda-runtime-log", "cuda/sm_120_not_compatible.txt"),
            ("cuda-runtime-log", "cuda/torch_driver_too_old_12080.txt"),
            ("cuda-runtime-log", "cuda/illegal_memory_access.txt"),
            (
                "torch-collect-env",
                "collect_env/torch16_v100_driver_418.txt",
            ),
            (
                "torch-collect-env",
                "collect_env/torch15_quoted_titan_rtx.txt",
            ),
            (
                "nccl-error-log",
                "nccl_errors/watchdog_allreduce_llamafactory.log",
            ),
            ("nccl-error-log", "nccl_errors/watchdog_old_format_ofa.log"),
            ("ibstat", "infiniband/ibstat_polling.txt"),
            ("ibstatus", "infiniband/ibstatus_hdr_active_nccl1412.txt"),
            ("cuda-device-query", "cuda/devicequery_gtx770_remode9.txt"),
            (
                "cupy-show-config",
                "cuda/cupy_show_config_rtx4090_cupy7967.txt",
            ),
            ("jax-env-info", "cuda/jax_env_info_colab_cpu_jax12213.txt"),
            ("ibv-devinfo", "infiniband/ibv_devinfo_port_down.txt"),
            ("ibdev2netdev", "infiniband/ibdev2netdev_vfs_down.txt"),
            ("pyspy-dump", "pyspy/allgather_hang_accelerate.txt"),
            ("dcgmi-diag", "dcgmi/diag_r2_gpu_memory_thermal_fail.txt"),
            ("dcgmi-diag", "dcgmi/diag_v4_software_pass.txt"),
            ("dcgmi-dmon", "dcgmi/dmon_gract_smact.txt"),
            ("lspci", "lspci/lnksta_x1_downgraded.txt"),
            ("lspci", "lspci/a100_header_nn.txt"),
        ]
        .into_iter()
        .map(|(k, f)| (k, fixture(f)))
        .collect();
        for (k, t) in [
            (
                // github.com/open-mmlab/mmdetection/issues/1997
                "container-spec",
                "sudo docker run --rm -it -v $(pwd):/$(pwd) -w $(pwd) --name cascademask cascademask python tools/train.py configs/mask_rcnn_r50_fpn_1x.py\n",
            ),
            (
                // the rows dcgmi's own unit test asserts (NVIDIA/DCGM dcgmi/tests/HealthTests.cpp)
                "dcgmi-health",
                "| Overall Health            | Failure                                                  |\n| GPU                       |                                                          |\n| -> 1                      | Failure                                                  |\n|    -> Errors              |                                                          |\n|       -> Memory system    | Failure                                                  |\n|                           | Green can be emerald and beautiful, but there are        |\n",
            ),
            (
                // stas00/ml-engineering (afab245) network/debug/README.md: 2x L4
                "nvidia-smi-p2p",
                "$ nvidia-smi topo -p2p r\n        GPU0    GPU1\n GPU0   X       CNS\n GPU1   CNS     X\n",
            ),
            (
                // kubernetes-sigs/dra-driver-nvidia-gpu#933
                "nvidia-smi-mig",
                "+---------------------------------------------------------+\n| GPU instances:                                          |\n| GPU   Name               Profile  Instance   Placement  |\n|                            ID       ID       Start:Size |\n|=========================================================|\n|   3  MIG 1g.10gb           19        7          0:1     |\n+---------------------------------------------------------+\n",
            ),
            (
                // ROCm/rccl#1423 (iproute2 `rdma link`)
                "rdma-link",
                "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING\n",
            ),
            (
                // openucx/ucx#5970 (lshca's system view of a CI node)
                "lshca",
                "  PCI_addr   |  RDMA  | Net | Numa | LnkStat | IpStat | Link | Rate | LnkCapWidth | LnkStaWidth | HCA_Type\n-----------------------------------------------------------------------------------------------------------\n000a:11:00.1 | mlx5_1 | ib1 |  2   |  init   |  down  |  IB  | 100  |   x16 G3    |   x8 >!<    |  MT4119\n",
            ),
            (
                // NVIDIA/nccl-tests#191 (perftest's ib_write_bw over a RoCE bond)
                "perftest",
                " ib_write_bw -x 3 -q 8 -d mlx5_bond_1 {serverip} --report_gbits --run_infinitely\n                    RDMA_Write BW Test\n Dual-port       : OFF          Device         : mlx5_bond_1\n Number of qps   : 8            Transport type : IB\n Link type       : Ethernet\n GID index       : 3\n #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 65536      1765470            185.37              184.94              0.352743\n",
            ),
            (
                // linux-rdma/perftest#43 (a port not active stops the test)
                "perftest",
                " Port number 1 state is Down\n Couldn't set the link layer\n Couldn't get context for the device\n",
            ),
            (
                // NVIDIA/nccl-tests#71 (infiniband-diags' iblinkinfo, EDR behind an MQM8700)
                "iblinkinfo",
                "CA: gpu-v100-3 HCA-1:\n      0xb88303ffff7f61c4      6    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    3[  ] \"MF0;ibswitch254:MQM8700/U1\" ( )\nSwitch: 0x0c42a10300b95bfa MF0;ibswitch254:MQM8700/U1:\n           3    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       1    1[  ] \"gpu-v100-0 HCA-1\" ( )\n",
            ),
            (
                // MrBr-github/lshca#11 (`mlxlink --json`, cut inside Supported Info)
                "mlxlink",
                "#mlxlink -d /dev/mst/mt4119_pciconf0 -p 1 --json\n{\n   \"result\" : {\n      \"output\" : {\n         \"Operational Info\" : {\n            \"Physical state\" : \"LinkUp\",\n            \"Speed\" : \"IB-EDR\",\n            \"State\" : \"Active\",\n",
            ),
            (
                // openucx/ucx#9484 (NVIDIA's `show_gids`, tabs expanded)
                "show-gids",
                "DEV     PORT    INDEX   GID                                     IPv4            VER     DEV\n---     ----    -----   ---                                     ------------    ---     ---\nmlx5_bond_0     1       3       0000:0000:0000:0000:0000:ffff:1e99:0aaf 30.153.10.175   v2      bond1\n",
            ),
            (
                // ginkgo-project/ginkgo#164 (the CUDA samples' p2pBandwidthLatencyTest, 2 of 4 GPUs)
                "cuda-p2p-bandwidth",
                "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\nDevice: 0, Tesla V100-SXM2-16GB, pciBusID: 5d, pciDeviceID: 0, pciDomainID:0\nDevice: 1, Tesla V100-SXM2-16GB, pciBusID: 5e, pciDeviceID: 0, pciDomainID:0\nDevice=0 CAN Access Peer Device=1\nDevice=1 CAN Access Peer Device=0\n",
            ),
            (
                // mpicbg-scicomp/gearshifft#82 (the CUDA samples' bandwidthTest on a P100)
                "cuda-bandwidth-test",
                "[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: Tesla P100-PCIE-16GB\n Quick Mode\n\n Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     12150.7\n",
            ),
            (
                // NVIDIA/k8s-device-plugin#58 (`kubectl get node -o yaml`, allocatable 0 of 16)
                "gpu-scheduling",
                "      allocatable:\n        cpu: \"48\"\n        nvidia.com/gpu: \"0\"\n      capacity:\n        cpu: \"48\"\n        nvidia.com/gpu: \"16\"\n",
            ),
            (
                // NVIDIA/nvidia-container-toolkit#653 (`docker info|grep -i runtime`)
                "docker-info",
                "docker info|grep -i runtime\n Runtimes: io.containerd.runc.v2 runc\n Default Runtime: runc\n",
            ),
            (
                // SnapDragonfly/jetson-fpv doc/TESTENV.md (jetson-stats' `jetson_release`)
                "jetson-release",
                "Software part of jetson-stats 4.3.1 - (c) 2024, Raffaello Bonghi\nModel: NVIDIA Jetson Orin Nano Developer Kit - Jetpack 6.1 [L4T 36.4.0]\nNV Power Mode[0]: 15W\nLibraries:\n - CUDA: 12.6.68\n",
            ),
            (
                // Andyyyy64/whichllm#2 (whichllm's `Hardware Info` panel, no GPU found)
                "whichllm-hardware",
                "╭──────── Hardware Info ────────╮\n│ No GPU detected — CPU-only mode                              │\n│ CPU: AMD Ryzen 9 3900X 12-Core Processor — 6 cores (AVX2) │\n│ RAM: 15.6 GB                                                 │\n",
            ),
            (
                // tuananh0788/Exadata#2 (infiniband-diags' `ibportstate` on a switch port)
                "ibportstate",
                "# Port info: Lid 1 port 28\nLinkState:.......................Down\nPhysLinkState:...................Disabled\nLinkWidthActive:.................4X\nLinkSpeedActive:.................2.5 Gbps\n",
            ),
            (
                // Comfy-Org/ComfyUI#11186 (the error report's System Information and Devices)
                "torch-env",
                "- **PyTorch Version:** 2.8.0+cu129\n## Devices\n\n- **Name:** cuda:0 NVIDIA GeForce RTX 5090 : cudaMallocAsync\n  - **Type:** cuda\n",
            ),
            (
                // Azure/azhpc-diagnostics#73 (`nvidia-smi nvlink -s`, the poster's elisions kept)
                "nvidia-smi-nvlink",
                "nvidia-smi nvlink -s\n....\nGPU 3: Tesla V100-SXM2-32GB (UUID: ...)\n         Link 0: 25.781 GB/s\n         Link 1: 25.781 GB/s\n         Link 2: 25.781 GB/s\n         Link 3: <inactive>\n         Link 4: 25.781 GB/s\n         Link 5: <inactive>\n",
            ),
            (
                // ollama/ollama#7597 (the journal prefix kept)
                "slog-log",
                "ollama[1773]: time=2024-11-10T21:32:56.440+08:00 level=INFO source=server.go:105 msg=\"system memory\" total=\"15.4 GiB\" free=\"11.3 GiB\" free_swap=\"12.2 GiB\"\n",
            ),
            (
                // kzhang2/aoneus#2
                "pip-list",
                "torch             2.9.1+cu128\ntorchvision       0.24.1+cu128\nDriver 13.0\nCUDA toolkit 12.8\n",
            ),
            (
                // NVIDIA/DCGM#94
                "nvidia-smi-list",
                "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-a22537c7-6eaa-7bdb-0ba4-45e67e84e963)\n  MIG 3g.40gb     Device  0: (UUID: MIG-1503b9a7-3336-58e3-b589-bb25ef1e39f1)\n",
            ),
            (
                // github.com/KempnerInstitute/kempnerpulse/issues/15, as pasted
                "dcgmi-discovery",
                "  $ dcgmi discovery -l\n  8 GPUs found (Active).\n  +--------+----------------------------------------------------------------------+\n  | GPU ID | Device Information                                                   |\n  +--------+----------------------------------------------------------------------+\n  | 0      | Name: NVIDIA H100 80GB HBM3                                          |\n  |        | PCI Bus ID: 00000000:19:00.0                                         |\n  |        | Device UUID: GPU-...                                                 |\n  +--------+----------------------------------------------------------------------+\n",
            ),
            (
                // NVIDIA/DCGM#305: `dcgmi stats -v -j`, the poster's excerpt
                "dcgmi-stats",
                "...<snip>\n+-----  Performance Stats  ----------+-----------------------------------------+\n| Energy Consumed (Joules)           | 10747                                   |\n| Max GPU Memory Used (bytes)        | 543162368                               |\n| SM Utilization (%)                 | Avg: 100, Max: 100, Min: 100            |\n",
            ),
            (
                // github.com/NVIDIA/dcgm-exporter/issues/536: 4.2.3's slog start-up
                "dcgm-exporter-log",
                "time=2025-08-20T09:31:33.967Z level=INFO msg=\"Starting dcgm-exporter\" Version=4.2.3-4.1.3\ntime=2025-08-20T09:31:34.038Z level=INFO msg=\"DCGM successfully initialized!\"\ntime=2025-08-20T09:31:34.038Z level=INFO msg=\"Collecting DCP Metrics\"\n",
            ),
            (
                // NVIDIA/gpu-operator#340: dcgm-exporter's /metrics on a T4
                "dcgm-exporter",
                "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\nDCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-e1200d64-e918-4277-cad9-75da90b9f618\",device=\"nvidia0\",modelName=\"Tesla T4\",Hostname=\"nvidia-dcgm-exporter-ml2wh\",container=\"dcgmproftester11\",namespace=\"default\",pod=\"dcgmproftester\"} 0\n",
            ),
            (
                "nvidia-smi-table",
                "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n|-------------------------------+----------------------+----------------------+\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n|===============================+======================+======================|\n|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |\n| N/A   36C    P8     9W /  70W |      0MiB / 15109MiB |      0%      Default |\n+-------------------------------+----------------------+----------------------+\n",
            ),
            (
                "nvidia-smi-csv",
                "index, utilization.gpu [%], memory.used [MiB]\n0, 97 %, 30000 MiB\n",
            ),
            (
                // github.com/wookayin/gpustat/issues/130
                "gpustat",
                "gpu-a-11.extreme         Mon Aug 22 15:23:57 2022  515.65.01\n[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n",
            ),
            (
                // github.com/gnn-tracking/gnn_tracking/issues/95
                "jobstats",
                "================================================================================\n                              Slurm Job Statistics\n================================================================================\n         Job ID: 9446770\n       Job Name: tune.sh\n           GPUs: 8\n\n                              Overall Utilization\n================================================================================\n  CPU utilization  [||||||                                         12%]\n  GPU utilization  [||||||||||||||||                               33%]\n",
            ),
            (
                // jhu-arch/arch-docs (68ff16d) 1_Clusters/DSAI/3_Slurm/Job_Status.rst
                "scontrol-job",
                "JobId=100123 JobName=my_job\n   JobState=RUNNING Reason=None Dependency=(null)\n   NumNodes=1 NumCPUs=12 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n   AllocTRES=cpu=12,mem=120G,node=1,billing=180,gres/gpu=1\n",
            ),
            (
                // ResearchComputing/Documentation (06876a8) docs/compute/monitoring-resources.md
                "sacct",
                "18194943||\n18194943.batch|cpu=00:56:24,energy=0,gres/gpuutil=100,mem=10621726720|\n18194943.extern|cpu=00:00:00,energy=0,gres/gpuutil=0,mem=262144|\n",
            ),
            (
                // AaltoSciComp/scicomp-docs (44afdaa) triton/examples/monitoring/gpu.rst
                "sacct-gpu-comment",
                "   $ sacct -j JOBID -o comment -p\n   {\"gpu_util\": 99.0, \"gpu_mem_max\": 1279.0, \"gpu_power\": 204.26, \"ncpu\": 1, \"ngpu\": 1}|\n",
            ),
            (
                // github.com/ai4d-iasc/trixie/issues/105: Slurm's own seff
                "seff",
                "Job ID: 64626\nCluster: stanage.alces.network\nUser/Group: a_user/clusterusers\nState: COMPLETED (exit code 0)\nNodes: 2\nCores per node: 1\nCPU Utilized: 00:02:37\nCPU Efficiency: 35.68% of 00:07:20 core-walltime\nJob Wall-clock time: 00:03:40\nMemory Utilized: 137.64 MB (estimated maximum)\nMemory Efficiency: 1.71% of 7.84 GB (3.92 GB/core)\n",
            ),
            (
                // h145: saucejiang.ink's iostat -x (sysstat 12) of a disk saturated by small reads
                "iostat",
                "Device            r/s     rMB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wMB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dMB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\nsda            382.50      9.45    14.50   3.65   38.86    25.31    4.50      0.94   235.50  98.12   47.78   213.33    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00   15.08  93.40\n",
            ),
            (
                // h124: the nvidia-docker 1.0 wiki's `lsmod | grep nvidia` (module-init-tools'
                // layout, a space after a count with no holders)
                "lsmod",
                "$ lsmod | grep nvidia\nnvidia_uvm            711531  2 \nnvidia_modeset        742329  0 \nnvidia              10058469  80 nvidia_modeset,nvidia_uvm\n",
            ),
            (
                // rug-cit-hpc/slurm-jobinfo (043c763b) README: the 2015 script's example
                "slurm-jobinfo",
                "Name                : bash\nUser                : aeh\nPartition           : normal\nCores               : 50\nState               : FAILED\nReserved walltime   : 2-00:00:00\nUsed walltime       :   00:02:51\nUsed CPU time       :   00:00:59\n% User (Computation): 83.22%\n% System (I/O)      : 16.78%\nMem reserved        : 100M/node\n",
            ),
            (
                // github.com/HPC-Simlab/Tutorials (cf00007) ALL/F_Commands_of_a_GPU_code/Interactive_execution.md
                "nvitop",
                "╒═════════════════════════════════════════════════════════════════════════════╕\n│ NVIDIA-SMI 460.32.03    Driver Version: 460.32.03    CUDA Version: 11.2     │\n├───────────────────────────────┬──────────────────────┬──────────────────────┤\n│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ Volatile Uncorr. ECC │\n│ Fan  Temp  Perf  Pwr:Usage/Cap│         Memory-Usage │ GPU-Util  Compute M. │\n╞═══════════════════════════════╪══════════════════════╪══════════════════════╪════════════════════╕\n│   0  Tesla P40           On   │ 00000000:3B:00.0 Off │                    0 │ MEM: ▏ 0.0%        │\n│ MAX   20C    P8     9W / 250W │        0B / 22.38GiB │      0%      Default │ UTL: ▏ 0%          │\n╘═══════════════════════════════╧══════════════════════╧══════════════════════╧════════════════════╛\n",
            ),
            (
                "nvidia-smi-dmon",
                "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n# Idx      W      C      C      %      %      %      %    MHz    MHz\n    0     62     45      -      3      1      0      0   5000   1350\n",
            ),
            (
                "nvidia-smi-topo",
                "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV12\t0-31\nGPU1\tNV12\t X \t0-31\n",
            ),
            (
                "mount-output",
                "/dev/sdb1 on /data type ext4 (rw,relatime)\nshm on /dev/shm type tmpfs (rw,nosuid,nodev,size=65536k)\n",
            ),
            (
                "mountinfo",
                "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n",
            ),
            (
                "df",
                "Filesystem      Size  Used Avail Use% Mounted on\nshm              64M     0   64M   0% /dev/shm\n",
            ),
            (
                "shm-error-log",
                "RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n",
            ),
            (
                // github.com/patrickbryant1/AFProfile/issues/8
                "xla-oom",
                "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n                 total allocation:   14.44GiB\n              total fragmentation:  680.30MiB (4.60%)\n",
            ),
            (
                // github.com/PaddlePaddle/PaddleOCR/issues/11989
                "paddle-oom",
                "ResourceExhaustedError:\n\nOut of memory error on GPU 0. Cannot allocate 129.394531MB memory on GPU 0, 23.611938GB memory has been allocated and available memory is only 31.687500MB.\n\nPlease check whether there is any other process using GPU 0.\n",
            ),
            (
                // github.com/lzhxmu/CPPO/issues/6 (the host name shortened)
                "torchrun-failure",
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\nsrc/open_r1/grpo_gsm.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2025-05-21_15:43:03\n  host      : worker\n  rank      : 0 (local_rank: 0)\n  exitcode  : -9 (pid: 14750)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 14750\n============================================================\n",
            ),
            (
                // pytorch/pytorch#54818: a distributed test's timed-out rank, faulthandler's dump
                "faulthandler-dump",
                "Current thread 0x00007ff3363ff700 (most recent call first):\n  File \"threading.py\", line 870 in run\n\nThread 0x00007ff406132180 (most recent call first):\n  File \"torch/distributed/distributed_c10d.py\", line 2477 in barrier\n",
            ),
            (
                // pytorch/pytorch#52916: gdb's backtrace of a DDP constructor hung with NCCL
                "gdb-backtrace",
                "Thread 1 (Thread 0x7f012db1f740 (LWP 20271)):\n#0  0x00007f012d92bc10 in __tls_get_addr_slow (ti=0x7f01040f0858) at ../sysdeps/x86_64/dl-tls.c:43\n#1  0x00007f012d931ba8 in __tls_get_addr () at ../sysdeps/x86_64/tls_get_addr.S:55\n#2  0x00007f00ad957285 in ncclGroupEnd () at group.cc:176\n",
            ),
            (
                // GrayboxTech/weightslab#111 (h135): a worker that exited with status 1, the
                // report on its own line
                "dataloader-worker-death",
                "ch: DataLoader worker (pid 2804708) exited unexpectedly with exit code 1. Details are lost due to mul\ntiprocessing. Rerunning with num_workers=0 may give better error trace.\n",
            ),
            (
                // ggml-org/llama.cpp#24400 (h120): ggml_abort behind llama-cli's spinner, then
                // glibc's backtrace_symbols_fd frames
                "ggml-abort",
                "Loading model... |/kaggle/working/llama.cpp/ggml/src/ggml-cuda/fattn.cu:110: fatal error\n/kaggle/working/llama.cpp/build/bin/libggml-base.so.0(+0x194e5)[0x7fa00b3064e5]\n/kaggle/working/llama.cpp/build/bin/libggml-base.so.0(ggml_abort+0x11f)[0x7fa00b306a3f]\n",
            ),
            (
                // github.com/apache/spark/pull/53705: pystack's dump as PySpark's threaddump
                // prints it (bloomberg/pystack traceback_formatter.py)
                "pystack-dump",
                "Dumping threads for process 1904\nTraceback for thread 2175 (python3.12) [] (most recent call last):\n    (Python) File \"/usr/lib/python3.12/threading.py\", line 1032, in _bootstrap\n        self._bootstrap_inner()\n",
            ),
            (
                // github.com/deepspeedai/DeepSpeed/pull/1906 ("Previous:"), and an op line of
                // DeepSpeed#6972 with the shm line as env_report.py prints it
                "ds-report",
                "ninja .................. [OKAY]\nasync_io ............... [NO] ....... [NO]\nDeepSpeed general environment info:\ntorch version .................... 1.10.0a0+git539d476\ntorch cuda version ............... None\ntorch hip version ................ 5.1.20531-cacfa990\nnvcc version .....................  [FAIL] cannot find CUDA_HOME via torch.utils.cpp_extension.CUDA_HOME=None\ndeepspeed install path ........... ['/opt/conda/lib/python3.7/site-packages/deepspeed']\ndeepspeed info ................... 0.6.2+ef17c89, ef17c89, master\ndeepspeed wheel compiled w. ...... torch 1.10, cuda 0.0, hip 5.1\nshared memory (/dev/shm) size .... 64.00 MB\n [WARNING] /dev/shm size might be too small, if running in docker increase to at least --shm-size='1gb'\n",
            ),
            (
                "nvidia-smi-error",
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
            ),
            (
                // github.com/ROCm/rocm_smi_lib/issues/77: AMD's rocm-smi, another vendor's tool
                "other-vendor-gpu",
                "========================ROCm System Management Interface========================\nDriver version: 5.6.19\n================================================================================\nGPU[0]          : GPU ID: 0x731f\n",
            ),
            (
                // github.com/SCIInstitute/ShapeWorks/issues/1556: torch's DataLoader at the
                // open-files limit (dataloader.py, _try_get_data)
                "tensor-sharing-log",
                "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n",
            ),
            (
                // github.com/kubernetes/kubernetes/issues/28272
                "kube-events",
                "  Normal   Started  12m    kubelet, x_machine_x  Started container x_pod_x\n  Warning  Evicted  9m38s  kubelet, x_machine_x  Usage of EmptyDir volume \"dshm\" exceeds the limit \"1Gi\".\n",
            ),
        ] {
            v.push((k, t.to_string()));
        }
        v
    }

    #[test]
    fn every_kind_yields_the_fields_it_declares() {
        let samples = samples();
        for kind in KINDS {
            let mine: Vec<&String> = samples
                .iter()
                .filter(|(k, _)| *k == kind.name())
                .map(|(_, t)| t)
                .collect();
            assert!(!mine.is_empty(), "no sample of {}", kind.name());
            for t in mine {
                assert_eq!(kind_of(t), Some(kind.name()), "{t}");
                let v = kind
                    .parse(t)
                    .unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
                let declared: Vec<&str> = kind.fields().iter().map(|(f, _)| *f).collect();
                match &v {
                    serde_json::Value::Object(m) => {
                        for key in m.keys() {
                            assert!(
                                declared.contains(&key.as_str()),
                                "{} yields `{key}`, which its fields() does not declare",
                                kind.name()
                            );
                        }
                    }
                    serde_json::Value::Array(_) => assert_eq!(declared, ["[]"], "{}", kind.name()),
                    other => panic!("{} yields {other}", kind.name()),
                }
                // a kind that describes the host says what, from its own text
                assert_eq!(
                    kind.host(t).is_some(),
                    kind.describes_host(),
                    "{}",
                    kind.name()
                );
            }
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        let mut seen = std::collections::BTreeSet::new();
        for k in KINDS {
            assert!(seen.insert(k.name()), "two kinds called {}", k.name());
            assert_eq!(find(k.name()).map(|f| f.name()), Some(k.name()));
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
            for k in KINDS {
                let _ = parse(*k, &s);
            }
        }
    }
}
