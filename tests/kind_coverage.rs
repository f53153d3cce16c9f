//! Issue 24's first acceptance point: every kind `gpufix list --evidence` lists has a public
//! problem example and a public healthy example in the corpus (`tests/fixtures/corpus/`,
//! copied verbatim from public threads and labelled from them), which gpufix reads as that
//! kind; the problem one is detected (a rule its label expects fails) and the healthy one is
//! judged without a false finding.
//!
//! Running the whole corpus is `tests/corpus.rs`'s work; this test runs only one witness per
//! kind and side ([`WITNESSES`], about fifty runs), and reads which kinds read an artifact
//! from the plan it prints: the `notes` (`read lines 1-12 ibstat, line 14 cuda-runtime-log`),
//! the kinds `judged` ends with (`FILE (nvidia-smi-table)`), and the input flag for the kinds
//! that have one of their own (`--nccl-log`, `--kernel-log`, `--trace`).
//!
//! A side with no public example that gpufix can read and judge is listed in [`GAPS`]
//! with the reason, never skipped silently; a new kind fails here until it has witnesses or a
//! reason. Probes get a long deadline, so a loaded machine cannot turn a detection into an
//! `unknown`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// Per kind of `gpufix list --evidence`: a problem artifact and a healthy one (corpus names,
/// without extension); `""` where [`GAPS`] says why there is none.
const WITNESSES: &[(&str, &str, &str)] = &[
    ("nvidia-smi-xml", "", "h2_smi_x_ecc_na_frag"),
    ("kube-events", "", ""),
    (
        "faulthandler-dump",
        "h83_faulthandler_pytorch54818_timed_out_rank_in_barrier",
        "h70_faulthandler_torchtitan1066_none_dealloc_rank0",
    ),
    (
        "gdb-backtrace",
        "h83_gdb_pytorch52916_ddp_ctor_ncclgroupend_getncclcomm",
        "",
    ),
    (
        "pystack-dump",
        "",
        "h111_pystack_spark53705_threaddump_socketserver",
    ),
    (
        "chrome-trace",
        "h11_trace_kineto_resnet50_num_workers_0",
        "h11_trace_kineto_resnet50_num_workers_4",
    ),
    (
        "nvidia-smi-table",
        "h2_smi_table_4090_0pct_21gb_hang",
        "h2_smi_table_2014_titans_na",
    ),
    (
        "nvidia-smi-text",
        "h2_smi_q_temperature_max_op_57c",
        "h2_smi_q_laptop_clocks_section",
    ),
    ("nvidia-smi-csv", "", "h2_csv_query_2080ti_unknown_error"),
    (
        "dcgmi-diag",
        "h7_dcgmdiag_godcgm_gpu0_memory_fail",
        "h7_dcgmdiag_dcgm55_r3_deployment_pass",
    ),
    (
        "dcgmi-health",
        "h14_dcgm_health_log_thermal_violation_gpu2",
        "",
    ),
    (
        "dcgmi-dmon",
        "h7_dcgmdmon_dcgm263_xider_120_health_healthy",
        "h7_dcgmdmon_dcgm244_smact_na",
    ),
    (
        "dcgmi-discovery",
        "",
        "h14_dcgmi_discovery_8xh100_active_elided",
    ),
    (
        "dcgmi-stats",
        "",
        "h115_dcgmstats_dcgm305_job_verbose_perf_snip",
    ),
    (
        "dcgm-exporter",
        "h115_dcgmexp_dcgm235_xid45_console_series",
        "h115_dcgmexp_gpuoperator340_t4_dcgmproftester_excerpt",
    ),
    ("nvidia-smi-list", "", ""),
    (
        "fabric-manager",
        "h54_smiq_gpuop2511_fabric_in_progress",
        "h54_journal_brkk142_fm_active_nvlsm",
    ),
    (
        "nvidia-smi-nvlink",
        "h26_nvlink_s_azhpcdiag73_v100_two_links_inactive",
        "h26_nvlink_s_gpud_testdata_a100_8gpu_12links_25gbs",
    ),
    ("nvidia-smi-p2p", "", "h17_p2p_r_mlengineering_8xh100_ok"),
    (
        "ds-report",
        "h74_dsreport_ds1109_a100_sm80_oprep",
        "h74_dsreport_pr1906_rocm_nvcc_fail",
    ),
    (
        "torch-env",
        "h24_comfyui7126_5070ti_cu126_sysinfo_quoted",
        "h24_comfyui11186_5090_cu129_sysinfo",
    ),
    (
        "pip-list",
        "",
        "h21_post_aoneus2_5060_torch291_cu128_versions",
    ),
    ("slog-log", "", "h73_mixed_ollama7597_version_ps_journal"),
    (
        "dcgm-exporter-log",
        "",
        "h164_dcgmexp_dcgmexporter536_v423_slog_startup",
    ),
    (
        "ggml-abort",
        "",
        "h120_traceback_llamacpp24400_fattn_ggml_abort_t4",
    ),
    (
        "dataloader-worker-death",
        "",
        "h135_dataloader_weightslab111_worker_exit_code_1_wrapped",
    ),
    ("nvidia-smi-mig", "", "h17_mig_lgi_dcgm_138_a100"),
    ("nvidia-smi-dmon", "", "dmon_idle_header"),
    ("gpustat", "", "h57_gpustat_gs130_p100_idle_header"),
    ("nvitop", "", "h57_nvitop_simlab_p40_idle_no_processes"),
    (
        "jobstats",
        "h101_jobstats_gnntracking95_gpu_33pct",
        "h107_jobstats_princetonreadme_della_4gpu_68pct",
    ),
    (
        "seff",
        "h107_seff_curcdocs_l40_gpu_metrics_max41pct",
        "h107_seff_trixie105_stanage_cpu_job",
    ),
    (
        "slurm-jobinfo",
        "",
        "h117_jobreport_hsuper_jobinfo_cpu_job_accounting",
    ),
    ("lsmod", "", "h124_lsmod_nvdockerwiki_361_modules_libraries"),
    (
        "iostat",
        "h145_iostat_saucejiang_hdd_small_files_util93",
        "",
    ),
    (
        "scontrol-job",
        "",
        "h107_scontrol_jhuarchdocs_showjob_a100_12cpu",
    ),
    ("sacct", "", "h107_sacct_curcdocs_tresusageinave_gpuutil100"),
    (
        "sacct-gpu-comment",
        "",
        "h153_sacct_aalto_triton_comment_json_gpu_util_99",
    ),
    (
        "nvidia-smi-topo",
        "h2_topo_8gpu_all_sys_ring_slow",
        "h2_topo_a100_nv12_spaces_cut",
    ),
    ("nvidia-smi-error", "h11_smierr_ogkm862_5090_no_devices", ""),
    ("lspci", "", "h7_lspci_lact_9070xt_full_link"),
    (
        "nccl-log",
        "h3_nccl_areal_socket_instead_of_ib",
        "h3_nccl_single_node_p2p_direct",
    ),
    (
        "pyspy-dump",
        "h7_pyspy_accelerate3104_all_gather_stuck",
        "h7_pyspy_homeassistant_asyncio_idle",
    ),
    (
        "nsys-stats",
        "h49_nsys_ayushos_vector_add_1010_launches_stats",
        "h49_nsys_timemachine1304_kernel_statistics_pr",
    ),
    (
        "nvprof-summary",
        "h49_nvprof_cumo35_dtod_memcpy_3m_calls",
        "h49_nvprof_bml478_ellpack_multiply_blanklines",
    ),
    (
        "ibstat",
        "h7_ibstat_azhpc_down_polling_elided",
        "h7_ibstat_gpud_active_partial_ibpanic",
    ),
    (
        "ibstatus",
        "h110_ibstatus_trinity219_sys_files_not_found",
        "h7_ibstatus_nccl1412_hdr_active",
    ),
    (
        "ibv-devinfo",
        "h7_ibvdevinfo_deepep38_ib_port_down",
        "h7_ibvdevinfo_azure_hbv2_ethernet_vf_active",
    ),
    (
        "ibdev2netdev",
        "h11_ibdev2netdev_sriov382_ib_vf_down",
        "h7_ibdev2netdev_imbue_ib_ip_down_healthy",
    ),
    (
        "rdma-link",
        "h23_rdmalink_rccl1423_mlx5_7_down_polling",
        "h23_rdmalink_3fs263_rxe_active",
    ),
    ("lshca", "h139_lshca_ucx5970_arm_cx5_port_init_down_x8", ""),
    (
        "perftest",
        "h146_perftest_perftest43_send_lat_port_state_down",
        "h146_perftest_ncclt191_write_bw_bond_roce_185g",
    ),
    (
        "iblinkinfo",
        "",
        "h146_iblinkinfo_ncclt71_v100_edr_switch_active",
    ),
    ("show-gids", "", "h93_showgids_ucx9484_bond_vxlan_roce"),
    (
        "cuda-p2p-bandwidth",
        "",
        "h114_p2plat_ginkgo164_v100_sxm2_all_peers",
    ),
    (
        "cuda-bandwidth-test",
        "",
        "h114_bwtest_gearshifft82_p100_numactl_nodes",
    ),
    (
        "docker-info",
        "",
        "h114_dockerinfo_ctk653_no_nvidia_runtime",
    ),
    (
        "jetson-release",
        "",
        "h134_jetsonrelease_jetsonfpv_orin_nano_jp61_tested_env",
    ),
    (
        "whichllm-hardware",
        "",
        "h144_issue_whichllm2_no_gpu_detected_rich_box",
    ),
    (
        "gpu-scheduling",
        "h118_k8snode_k8sdp58_allocatable_0_of_capacity_16",
        "h118_k8snode_podmandesktop7778_status_gpu_1_of_1",
    ),
    (
        "ibportstate",
        "",
        "h110_ibportstate_exadata2_switch_ports_down_disabled",
    ),
    ("mlxlink", "", "h93_mlxlink_lshca11_json_edr_active_cut"),
    (
        "other-vendor-gpu",
        "",
        "h98_rocmsmi_rocmsmilib77_showall_rx6800_driver5619",
    ),
    (
        "torch-memory",
        "h2_oom_6g_2_30g_unallocated",
        "h2_oom_4090_137m_unallocated_zh",
    ),
    (
        "shm-error-log",
        "h4_log_hopsworks_shm_no_space",
        "h11_shmlog_pytorch26009_ipc_host_254g",
    ),
    (
        "tensor-sharing-log",
        "h106_dataloader_finiteelementnetworks2_dupfd_errno24",
        "h106_log_gpustack5258_worker_errno24_not_loader",
    ),
    (
        "xla-oom",
        "h148_xlaoom_trax431_tpu_largest_contiguous_region",
        "h13_tf_tf1772_gpu_bfc_creating_bins",
    ),
    (
        "paddle-oom",
        "",
        "h99_oom_paddleocr11989_resource_exhausted",
    ),
    (
        "torchrun-failure",
        "",
        "h13_torchrun_glm130b100_exitcode1_summary",
    ),
    (
        "nccl-error-log",
        "h7_ncclwd_basicsr_allreduce_seq808_pgid",
        "",
    ),
    (
        "kernel-log",
        "dmesg_fallen_off_bus_no_xid",
        "dmesg_quoted_uvm_loaded",
    ),
    (
        "container-spec",
        "h7_dockerrun_mmdet_train_no_shm",
        "h7_compose_docker6691_device_requests",
    ),
    (
        "cuda-version",
        "",
        "h11_nvcc_qixuema_10_0_driver_module_gone",
    ),
    (
        "jax-env-info",
        "h161_jaxenv_jaxlibfs285_conda_cuda_build_cpu_only_560",
        "h158_jaxenv_jax21295_8xa10g_550_env_info",
    ),
    (
        "cupy-show-config",
        "h158_cudaerr_cupy9475_gtx1080_cuda13_nvrtc_invalid_arch",
        "h158_cupyenv_cupy7967_rtx4090_cupy13b1_cuda123",
    ),
    (
        "cuda-device-query",
        "h9_devicequery_jetpack_returned35",
        "h7_cudainsuff_remode_devicequery_after_fix",
    ),
    (
        "cuda-runtime-log",
        "h7_cudaarch_aitoolkit_5060ti_sm120_windows",
        "h7_collectenv_no_driver_warning_centos",
    ),
    (
        "torch-collect-env",
        "h7_collectenv_t4_torch13_cu101_driver410",
        "h7_collectenv_rocm_sample_healthy",
    ),
    (
        "df",
        "df_container_shm_64m_tmpfs",
        "df_host_lists_container_shm",
    ),
    ("mountinfo", "", "mountinfo_btrfs_root_openrc"),
    (
        "mount-output",
        "h4_mount_replicate_shm_64m",
        "h4_mount_cog_predict_shm_8g",
    ),
    (
        "fstab",
        "fstab_azure_datadrive_defaults",
        "h11_fstab_ecs114_xfs_noatime_data",
    ),
    ("proc-mounts", "", "fstab_xfs_noatime_data"),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Problem,
    Healthy,
}

/// Sides of a kind without a public example that gpufix reads as the kind and detects (a
/// problem) or clears (a healthy one): the corpus artifact that comes closest, if any (the
/// test checks it is still read as the kind and still missed, so a reader or rule that starts
/// judging it right moves it to [`WITNESSES`]), and what was searched or why no rule can judge
/// it. Keep it as short as the public record allows.
const GAPS: &[(&str, Side, &str, &str)] = &[
    (
        "lshca",
        Side::Healthy,
        "",
        "no public lshca table of healthy ports was found (h139 took the one public table that holds LnkStat, openucx/ucx#5970's two ports down and initializing; lshca drops the LnkStat column where every port is `actv`, so a healthy table shows no port state to judge)",
    ),
    (
        "iostat",
        Side::Healthy,
        "",
        "no public `iostat -x` of a healthy data disk under a training was found in the pages searched for h145 (the one public paste beside a slow training is saucejiang.ink's saturated disk); tutorials print made-up rows",
    ),
    (
        "lsmod",
        Side::Problem,
        "",
        "no public `lsmod` paste of a host whose nvidia module is loaded without nvidia_uvm was found (the one fault a rule reads from it, driver.uvm-module-missing); the public pastes beside CUDA failures show the modules loaded (h124: the nvidia-docker wiki's 361.48 host)",
    ),
    (
        "slurm-jobinfo",
        Side::Problem,
        "",
        "no public jobinfo summary with the later script's `Average GPU usage` line was found (the one GPU figure a rule reads from it); the public copies are CPU jobs (HSUper's accounting page, BIRC's README, Gent's and UC Davis's guides)",
    ),
    (
        "other-vendor-gpu",
        Side::Problem,
        "",
        "gpufix judges NVIDIA GPUs: another vendor's tool or error (rocm-smi, xpu-smi, a HIP error) is read only to say what it is (the kind's read_by is empty), never judged",
    ),
    (
        "cuda-p2p-bandwidth",
        Side::Problem,
        "",
        "no rule reads p2pBandwidthLatencyTest (the kind's read_by is empty): it measures copies, not a job, and a pair that CANNOT access its peer is by design on GeForce cards, PCIe switches without ACS forwarding and VMs; a slow peer path (NVIDIA/nccl#814) is named by no rule",
    ),
    (
        "cuda-bandwidth-test",
        Side::Problem,
        "",
        "no rule reads bandwidthTest (the kind's read_by is empty): one run's figures depend on slot, NUMA node and GPU and have no reference in the text to judge them against; a failed start is the CUDA-runtime reader's (`cudaGetDeviceCount returned N`)",
    ),
    (
        "docker-info",
        Side::Problem,
        "",
        "no rule reads `docker info` (the kind's read_by is empty): a missing `nvidia` runtime matters only to a run that asks for it with --runtime=nvidia, which the text does not show (--gpus goes through the toolkit's hook or CDI without it)",
    ),
    (
        "jetson-release",
        Side::Problem,
        "",
        "no rule reads jetson-stats' `jetson_release` (the kind's read_by is empty): it names the JetPack, L4T and CUDA a Jetson runs, not a job's failure; a torch wheel built for another CUDA shows in the job's own CUDA-init warning, which the CUDA-runtime reader reads",
    ),
    (
        "whichllm-hardware",
        Side::Problem,
        "",
        "no rule reads whichllm's `Hardware Info` panel (the kind's read_by is empty): its `No GPU detected` is the tool's own verdict from nvidia-ml-py or nvidia-smi, not why (Andyyyy64/whichllm#2 and #34 were whichllm's bugs); the driver's and CUDA's own errors are read where pasted beside it",
    ),
    (
        "show-gids",
        Side::Problem,
        "",
        "no rule reads a `show_gids` table (the kind's read_by is empty): it lists the GIDs a port has, not whether the port is up, which `rdma link`, ibstat or ibv_devinfo show",
    ),
    (
        "iblinkinfo",
        Side::Problem,
        "",
        "no public `iblinkinfo` paste with a CA port down or initializing was found (the issues, pages and code corpora searched for `==(` lines with `Down/ Polling` and `Initialize/`, 2026-12-07): users paste it to show a healthy fabric (NVIDIA/nccl-tests#71, h146); the reader's down and initializing forms are tested from iblinkinfo.c's `print_port`",
    ),
    (
        "ibportstate",
        Side::Problem,
        "",
        "no rule reads `ibportstate` (the kind's read_by is empty): it queries any fabric port by LID, a switch's unused ports are Down/Disabled by design and older releases do not say whether the node is a switch, so its states are not the host's own RDMA ports that comm.ib-port-down judges",
    ),
    (
        "mlxlink",
        Side::Problem,
        "",
        "no public `mlxlink` paste of a port whose link is down was found (the code, issues and pages corpora searched for `State : Polling`/`Disable` under `Operational Info`, 2026-12-06): users paste mlxlink when the link is up and ask about its speed or FEC; the reader's down side is tested from mstflint's format",
    ),
    (
        "gdb-backtrace",
        Side::Healthy,
        "",
        "h83's search found gdb backtraces of Python processes only where a job hung (pytorch#52916's DDP constructor in ncclGroupEnd, NCCL and driver threads of hung jobs); a backtrace of a healthy training process is not something people paste",
    ),
    (
        "pystack-dump",
        Side::Problem,
        "",
        "h111's search found one public pystack dump of a Python process (PySpark's threaddump example, a socketserver thread) and none of a training process stuck in a collective or a DataLoader; the reader hands its threads to the same activity reading as py-spy's, tested with pystack's own shapes",
    ),
    (
        "kube-events",
        Side::Problem,
        "",
        "h72_event_k8s28272_dshm_emptydir_evicted is read (an emptyDir `dshm` evicted over 1Gi) but judged unknown: the events do not show the volume is the memory emptyDir at /dev/shm",
    ),
    (
        "kube-events",
        Side::Healthy,
        "",
        "searched (issues): the kubectl describe event tables found are scheduling or image failures of other problems; none of a healthy GPU training pod in this batch",
    ),
    (
        "nvidia-smi-xml",
        Side::Problem,
        "",
        "searched (issues, pages, code): threads paste `-q -x` for monitoring tools (netdata, exporters, gpustat) on healthy GPUs; none of a GPU fault or a starved job",
    ),
    (
        "nvidia-smi-csv",
        Side::Problem,
        "",
        "searched (issues): `--query-gpu` CSVs are pasted for monitors and field questions; no thread whose problem (idle GPU, power cap, PCIe downgrade, throttling) the CSV shows",
    ),
    (
        "nvidia-smi-list",
        Side::Problem,
        "",
        "a GPU list names the GPUs, not a fault; the one fault it can show, `-L`'s `Unable to determine the device handle for gpu <bus id>: …` (h150's NordicHPC/sonar#72 paste), is the kernel-log kind's lost-GPU marker, so that paste is read as kernel-log (the list's `unreachable` field feeds `kernel.log` only where the list reader gets the text)",
    ),
    (
        "nvidia-smi-list",
        Side::Healthy,
        "",
        "added after the h14 batch was sealed: the corpus holds `-L` lines only inside other pastes (NVIDIA/DCGM#94's, read as dcgmi-diag); the next batch should carry a standalone `-L` paste (`nvlink -s` pastes are the nvidia-smi-nvlink kind's since h26)",
    ),
    (
        "nvidia-smi-p2p",
        Side::Problem,
        "",
        "no rule reads a `topo -p2p` matrix (the kind's read_by is empty): it says what the GPUs could do, not what a job did; NCCL's log shows a job falling back to SHM and `comm.shm-between-local-gpus` reads that",
    ),
    (
        "nvidia-smi-mig",
        Side::Problem,
        "",
        "no rule reads `mig -lgi`/`-lgip` (the kind's read_by is empty): a MIG layout is an operator's choice, not a fault",
    ),
    (
        "dataloader-worker-death",
        Side::Problem,
        "",
        "no rule reads a DataLoader worker's death (the kind's read_by is empty): a worker that raised and exited with status 1 (h135: weightslab#111), one the OOM killer ended (SIGKILL, `Killed`: host memory, no rule's) or one that crashed in native code is the job's own failure; a bus error, the one death a rule reads (data.shm-too-small), is shm-error-log's; the death is read so that the paste is recognised and how the worker died is in the report",
    ),
    (
        "ggml-abort",
        Side::Problem,
        "",
        "no rule reads a ggml abort (the kind's read_by is empty): a failed GGML_ASSERT or a backend dispatcher's `fatal error` is the program's own failure (h120: llama.cpp#24400's FlashAttention shape on a T4), and the CUDA error a backend's `CUDA error` abort follows is read by the cuda-runtime-log kind (cuda.error-in-log) wherever it stands; the abort is read so that the paste is recognised and where ggml stopped is in the report",
    ),
    (
        "dcgm-exporter-log",
        Side::Problem,
        "",
        "no rule reads dcgm-exporter's own log yet (the kind's read_by is empty): it says whether the exporter reached DCGM and NVML, a monitoring agent's health rather than the job's; h164 found no public problem log it could judge beyond what nvidia-smi-error already reads (`Failed to initialize NVML`); the log is read so that a pasted `kubectl logs` of the exporter is recognised and its version, DCP state and errors are in the report",
    ),
    (
        "slog-log",
        Side::Problem,
        "",
        "no rule reads a Go slog log yet (the kind's read_by is empty): ollama's scheduling (which layers it offloads, a projector on the CPU) is its own; the log is read so that a pasted journal is recognised and the GPUs and layers it names are in the report",
    ),
    (
        "pip-list",
        Side::Problem,
        "",
        "no rule reads a package list yet (the kind's read_by is empty): it is read so that a paste of versions is recognised; a torch wheel's CUDA build against the GPU's architecture is judged where a GPU name the driver prints is beside it (collect_env, PyTorch's own warnings, or the torch-env kind, which reads the torch row too)",
    ),
    (
        "dcgmi-discovery",
        Side::Problem,
        "",
        "no rule reads DCGM's device list (the kind's read_by is empty): it names the GPUs DCGM found, not a fault; a GPU missing from it is seen only against the host's count",
    ),
    (
        "dcgmi-stats",
        Side::Problem,
        "",
        "no rule reads DCGM's job statistics (the kind's read_by is empty): a job's summary says what it used (energy, clocks, memory, utilization), not why it was slow",
    ),
    (
        "dcgmi-health",
        Side::Healthy,
        "",
        "searched (issues, pages, code): no `dcgmi health -c` text of either kind is public beyond screenshots",
    ),
    (
        "gpustat",
        Side::Problem,
        "",
        "searched (issues, pages): gpustat text in a problem thread is rare (the GPU-Util-is-0 threads post screenshots); VisEdit#5 (h57_gpustat_visedit5_a100_held_no_process) is memory held by a gone process, which a line without PIDs cannot show",
    ),
    (
        "scontrol-job",
        Side::Problem,
        "",
        "no rule reads `scontrol show job` (the kind's read_by is empty): the record says what a job asked for and was given (CPUs, tasks, TRES), not how it used them",
    ),
    (
        "sacct-gpu-comment",
        Side::Problem,
        "",
        "searched (pages, code, issues) in h153: the one public sacct_gpu comment is Triton's documented 99% job (AaltoSciComp/scicomp-docs gpu.rst); no thread pastes a low one",
    ),
    (
        "sacct",
        Side::Problem,
        "",
        "no rule reads sacct's rows (the kind's read_by is empty): states and elapsed times say how a job ended, not why it was slow; TRESUsageIn*'s gres/gpuutil is a sum over the job's GPUs (Slurm's gpu_nvml.c), per GPU only with a GPU count the rows do not print",
    ),
    (
        "nvitop",
        Side::Problem,
        "",
        "searched (issues, pages, code): nvitop -1 prints are public only in tutorials on idle nodes; its issue tracker posts screenshots",
    ),
    (
        "nvidia-smi-dmon",
        Side::Problem,
        "",
        "no public dmon paste of a starved job was found; the H200 capture of one (h200_smi_dmon_starved) is not detected either: dmon names no process, so launch.gpu-underutilized cannot tell the GPU is a job's",
    ),
    (
        "nvidia-smi-error",
        Side::Healthy,
        "",
        "the kind is recognised only by nvidia-smi's failure messages (no driver, library mismatch, no devices): no healthy text of it exists",
    ),
    (
        "lspci",
        Side::Problem,
        "h7_lspci_jan_riser_gen1_downgraded",
        "LnkSta `2.5GT/s (downgraded)` without the GPU's load: an idle GPU drops to Gen1 to save power, so driver.pcie-link-degraded needs utilization to judge",
    ),
    (
        "nccl-error-log",
        Side::Healthy,
        "",
        "the kind is recognised only by failure lines (watchdog timeout, NCCL error result, shared-memory WARN): no healthy text of it exists",
    ),
    (
        "cuda-version",
        Side::Problem,
        "",
        "no rule reads a pasted toolkit version (the kind's read_by is empty): a version alone shows no fault",
    ),
    (
        "paddle-oom",
        Side::Problem,
        "",
        "no rule reads PaddlePaddle's out-of-memory error (the kind's read_by is empty): it says the program did not fit in what the card had free, and Paddle's allocator prints no split of idle cached memory from memory in use",
    ),
    (
        "torchrun-failure",
        Side::Problem,
        "",
        "no rule reads torchrun's failure summary (the kind's read_by is empty): it says how a worker ended (SIGBUS, SIGKILL, an exit code), not why; the shared-memory or kernel-log lines that would say are read by their own kinds",
    ),
    (
        "mountinfo",
        Side::Problem,
        "",
        "searched (issues): mountinfo is pasted for container-id and cgroup questions; a small /dev/shm or a data disk without noatime is pasted as `df -h` or `mount` output",
    ),
    (
        "proc-mounts",
        Side::Problem,
        "",
        "searched (issues): /proc/mounts pastes of a 64M /dev/shm are in threads about other tools; shm and atime problems are pasted as `df -h` or `mount` output",
    ),
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_gpufix")
}

#[derive(Debug, Deserialize)]
struct Label {
    source: String,
    input: String,
    expect: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
}

/// The label of corpus artifact `name` and the artifact's path.
fn artifact(name: &str) -> (Label, PathBuf) {
    let dir = corpus_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.label.yaml")))
        .unwrap_or_else(|e| panic!("{name}: no label: {e}"));
    let label: Label =
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: not a label: {e}"));
    let file = std::fs::read_dir(&dir)
        .expect("read the corpus directory")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .and_then(|f| f.strip_prefix(name))
                .is_some_and(|rest| rest.starts_with('.') && rest != ".label.yaml")
        })
        .unwrap_or_else(|| panic!("{name}: no artifact beside its label"));
    (label, file)
}

fn evidence_kinds() -> Vec<String> {
    let out = Command::new(bin())
        .args(["--no-system", "list", "--evidence", "--format", "json"])
        .output()
        .expect("run gpufix list --evidence");
    assert!(out.status.success(), "gpufix list --evidence failed");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON list");
    v.as_array()
        .expect("a list of kinds")
        .iter()
        .map(|k| k["name"].as_str().expect("a kind name").to_owned())
        .collect()
}

/// What one plan says of an artifact: the kinds that read it and the rules that failed.
#[derive(Debug)]
struct Read {
    kinds: BTreeSet<String>,
    failed: BTreeSet<String>,
    stderr: String,
}

fn plan(label: &Label, file: &Path, known: &[String]) -> Read {
    let out = Command::new(bin())
        .args(["--no-system", "plan"])
        .arg(format!("--{}", label.input))
        .arg(file)
        .args([
            "--sample",
            "0",
            "--probe-timeout",
            "600s",
            "--format",
            "json",
        ])
        .env("NO_COLOR", "1")
        .output()
        .expect("run gpufix plan");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut kinds = BTreeSet::new();
    let mut failed = BTreeSet::new();
    if let Ok(report) = serde_json::from_slice::<serde_json::Value>(&out.stdout) {
        // `read lines 1-2,4-19 pyspy-dump`, `read line 7 cuda-device-query, lines 9-11 …`,
        // `read lines 1,3-10,12,+2 more nsys-stats` (a part cut by blank lines, its ranges elided)
        let part = regex::Regex::new(r"\blines? [0-9][0-9,-]*(?:,\+[0-9]+ more)? ([a-z0-9-]+)")
            .expect("regex");
        for note in report["notes"].as_array().into_iter().flatten() {
            let note = note.as_str().unwrap_or_default();
            for c in part.captures_iter(note) {
                kinds.insert(c[1].to_owned());
            }
        }
        // `FILE (nvidia-smi-table, dmesg)`
        let judged = report["judged"].as_str().unwrap_or_default();
        if let Some(inner) = judged
            .trim_end()
            .strip_suffix(')')
            .and_then(|j| j.rsplit_once('('))
            .map(|(_, k)| k)
        {
            kinds.extend(inner.split(", ").map(str::to_owned));
        }
        failed = report["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["verdict"] == "fail")
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect();
    }
    match label.input.as_str() {
        "nccl-log" => kinds.insert("nccl-log".to_owned()),
        "kernel-log" => kinds.insert("kernel-log".to_owned()),
        "trace" => kinds.insert("chrome-trace".to_owned()),
        _ => false,
    };
    kinds.retain(|k| known.contains(k));
    Read {
        kinds,
        failed,
        stderr,
    }
}

#[test]
fn the_tables_name_every_kind_once_and_every_gap_has_a_reason() {
    let kinds = evidence_kinds();
    assert!(kinds.len() >= 30, "issue 24 asks for at least 30 kinds");
    let mut errors = Vec::new();
    for k in &kinds {
        match WITNESSES.iter().filter(|(w, _, _)| w == k).count() {
            1 => {}
            0 => errors.push(format!("`{k}` has no line in WITNESSES")),
            n => errors.push(format!("`{k}` has {n} lines in WITNESSES")),
        }
    }
    for (k, problem, healthy) in WITNESSES {
        if !kinds.iter().any(|x| x == k) {
            errors.push(format!(
                "WITNESSES names `{k}`, not a kind of gpufix list --evidence"
            ));
        }
        for (side, w) in [(Side::Problem, problem), (Side::Healthy, healthy)] {
            let gaps: Vec<_> = GAPS
                .iter()
                .filter(|(g, s, _, _)| g == k && *s == side)
                .collect();
            match (w.is_empty(), gaps.as_slice()) {
                (true, []) => errors.push(format!(
                    "`{k}` has no {side:?} witness and no reason in GAPS"
                )),
                (false, [_, ..]) => errors.push(format!(
                    "`{k}` has a {side:?} witness ({w}): drop its GAPS line"
                )),
                (true, [_, _, ..]) => errors.push(format!("`{k}` {side:?} is in GAPS twice")),
                (true, [(_, _, _, why)]) if why.trim().len() < 60 => {
                    errors.push(format!("`{k}` {side:?}: the reason in GAPS is too thin"))
                }
                _ => {}
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn every_evidence_kind_has_a_public_problem_it_detects_and_a_healthy_one_it_clears() {
    let kinds = evidence_kinds();
    // every witness and gap artifact once, however many kinds it stands for
    let mut names: Vec<&str> = WITNESSES
        .iter()
        .flat_map(|(_, p, h)| [*p, *h])
        .chain(GAPS.iter().map(|(_, _, a, _)| *a))
        .filter(|n| !n.is_empty())
        .collect();
    names.sort_unstable();
    names.dedup();
    let artifacts: Vec<(&str, Label, PathBuf)> = names
        .iter()
        .map(|n| {
            let (l, f) = artifact(n);
            (*n, l, f)
        })
        .collect();
    // a few plans at a time: each is its own process
    let reads: Vec<Read> = std::thread::scope(|s| {
        let workers: Vec<_> = artifacts
            .chunks(artifacts.len().div_ceil(4).max(1))
            .map(|chunk| {
                s.spawn(|| {
                    chunk
                        .iter()
                        .map(|(_, l, f)| plan(l, f, &kinds))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().expect("a plan thread"))
            .collect()
    });
    let find = |name: &str| {
        let i = artifacts
            .iter()
            .position(|(n, _, _)| *n == name)
            .expect("an artifact that was run");
        (&artifacts[i].1, &reads[i])
    };
    // what an artifact shows for `side`: `Ok(cell)` when it is a witness of it, `Err(why not)`
    let judge = |kind: &str, side: Side, name: &str| -> Result<String, String> {
        let (label, read) = find(name);
        if !label.source.starts_with("https://") {
            return Err(format!("not a public artifact ({})", label.source));
        }
        if !read.kinds.contains(kind) {
            return Err(format!(
                "not read as {kind} (read as {:?}; {})",
                read.kinds,
                read.stderr.lines().next().unwrap_or("")
            ));
        }
        match side {
            Side::Problem => {
                let hit: Vec<&str> = label
                    .expect
                    .iter()
                    .filter(|r| read.failed.contains(*r))
                    .map(String::as_str)
                    .collect();
                if label.expect.is_empty() {
                    Err("labelled healthy, not a problem".to_owned())
                } else if hit.is_empty() {
                    Err(format!(
                        "not detected: expected one of {:?}, failed {:?}",
                        label.expect, read.failed
                    ))
                } else {
                    Ok(format!("{name} ({})", hit.join(", ")))
                }
            }
            Side::Healthy => {
                let false_findings: Vec<&String> = read
                    .failed
                    .iter()
                    .filter(|r| !label.allow.contains(r))
                    .collect();
                if !label.expect.is_empty() {
                    Err("labelled a problem, not healthy".to_owned())
                } else if !false_findings.is_empty() {
                    Err(format!("false findings {false_findings:?}"))
                } else {
                    Ok(name.to_owned())
                }
            }
        }
    };

    let mut errors = Vec::new();
    let mut table = String::from("| kind | problem (detected by) | healthy |\n|---|---|---|\n");
    for (kind, problem, healthy) in WITNESSES {
        let mut cells = Vec::new();
        for (side, name) in [(Side::Problem, *problem), (Side::Healthy, *healthy)] {
            if !name.is_empty() {
                match judge(kind, side, name) {
                    Ok(cell) => cells.push(cell),
                    Err(e) => {
                        errors.push(format!("{kind} {side:?} witness {name}: {e}"));
                        cells.push(format!("{name}: {e}"));
                    }
                }
                continue;
            }
            let Some((_, _, closest, _)) = GAPS.iter().find(|(g, s, _, _)| g == kind && *s == side)
            else {
                cells.push("none (see the other test)".to_owned());
                continue;
            };
            if closest.is_empty() {
                cells.push("none public (GAPS)".to_owned());
                continue;
            }
            // the closest artifact must still be of the kind, and still missed: once it is
            // judged right it is a witness
            let (_, read) = find(closest);
            if !read.kinds.contains(*kind) {
                errors.push(format!(
                    "{kind} {side:?}: GAPS names {closest}, which is not read as {kind} (read as {:?})",
                    read.kinds
                ));
            }
            match judge(kind, side, closest) {
                Ok(_) => {
                    errors.push(format!(
                        "{kind} {side:?}: {closest} is now judged right: make it the witness and drop its GAPS line"
                    ));
                    cells.push(format!("{closest} (now judged right)"));
                }
                Err(e) => cells.push(format!("none ({closest}: {e})")),
            }
        }
        table.push_str(&format!("| {kind} | {} | {} |\n", cells[0], cells[1]));
    }
    println!("{table}");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
