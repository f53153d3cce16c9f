//! The public corpus (`tests/fixtures/corpus/`): real text copied from public issues, forums,
//! docs and repositories, each with a label saying what the poster's problem was.
//!
//! Every artifact is given to the built binary the way a user would give it
//! (`gpufix --no-system plan --<input> FILE --sample 0 --format json`), and the failing rules
//! are compared with the label. The table of detection and false-finding rates per kind is
//! printed always and written to `target/corpus-report.md`.
//!
//! Without `GPUFIX_CORPUS_STRICT=1` the test asserts only that the corpus itself is sound
//! (labels well-formed, every artifact present, known rule ids, no e-mail addresses); with it,
//! it also asserts at least 80 artifacts and 20 healthy ones, and the floor below
//! ([`FLOOR_DETECTED_PER_MILLE`], [`MAX_FALSE_ON_HEALTHY`], [`MAX_UNREADABLE`]): the figures the
//! corpus is read with now, so a change that reads it worse fails. `.ci/run` runs it so. Issue
//! 24's target (95% detected, no false finding on a healthy artifact, nothing unreadable) is
//! met for false findings on healthy artifacts and for unreadable ones; the detected
//! share is above the floor and not met (the misses left are texts that cannot show the poster's problem: the
//! corpus README says why for each).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// How the source of an artifact captured on a GPU machine begins: the machine and the script
/// that made it (`h200*` artifacts on the recorded H200 host, `h100*` on the H100 device machine).
const CAPTURED: &[&str] = &[
    "made on the H200 by bench/capture_h200.sh:",
    "made on the H200 by bench/capture_h200_profilers.sh:",
    "made on the H100 by bench/capture_h200_profilers.sh:",
    "made on the H100 by bench/capture_h200_data.sh:",
];

/// The floor `GPUFIX_CORPUS_STRICT=1` (run by `.ci/run`) holds: the whole corpus's figures after
/// 2026-12-08's sealed batches h162-h164 (a fresh draw of 2025-26 issues from training
/// frameworks and apps no label cited, question-and-answer threads outside GitHub, GPU cluster
/// operators' pastes; c10's back trace under a CUDA error, Sana's and PixArt's step timings,
/// sd-scripts' loader settings, a `topo -m` without its legend, process rows without their
/// header, busGrind's matrices, KAI Scheduler's fit errors, the kubelet's ListAndWatch refusal,
/// dcgm-exporter's log; 2,445 artifacts): 1,012 of 1,099 detected (920.8 per mille), 0 healthy
/// with a false finding, 0 unreadable. Every artifact detected before is detected still, and
/// the misses are the same 87. Before them, after the seventh session of 2026-12-07 (sealed batches h159-h161: tool output inside Chinese-language
/// threads, a fresh draw of 2026 issues from repositories no label cited, JAX's
/// `print_environment_info()`; gpustat's lost-GPU marks, NCCL's silent socket failures and
/// OneFlow's check, the flight recorder's dump signal, a diff hunk read as its file, the jax-env
/// reader; 2,414 artifacts): 995 of 1,082 detected (919.6 per mille), 0 healthy with a false
/// finding, 0 unreadable. Every artifact detected before is detected still; the one new miss is
/// h160's compose hunk, which names no image and no GPU request. Before them, after
/// the sixth session of 2026-12-07 (sealed batches h155-h158: slow-training forum posts, 2025-26
/// distributed failures, NVIDIA's and the fabric's tools from notes and HPC docs, CUDA runtime
/// and memory errors from repositories the corpus had little of; CuPy's `show_config()` and
/// NVRTC's architecture refusal, an `nvlink -s` pair bonded by the same links, a page's table
/// rendered cell by cell; 2,385 artifacts): 981 of 1,067 detected (919.4 per mille), 0 healthy
/// with a false finding, 0 unreadable. Every artifact detected before is detected still; the one
/// new miss is h156's DeepSpeed stack into `all_reduce` (an exception from a collective, which
/// the text does not name). Before them, after
/// the fifth session of 2026-12-07 (sealed batches h151-h154: posts in Chinese and Korean, 2026
/// issue text, cluster job text, speech and vision training logs, with their readers; nine
/// duplicated texts removed; 2,348 artifacts): 968 of 1,053 detected (919.3 per mille), 0
/// healthy with a false finding, 0 unreadable. Every artifact detected before is detected still;
/// the floor went down a tenth of a percent because h152 added two NCCL segfaults that only the
/// reporters' sentences state (no reader may claim them). Before them, after
/// the fourth session of 2026-12-07 (no new batch; the old misses revisited by cluster: an
/// unknown GPU named from PyTorch's own arch sentence, the driver message in an issue title,
/// dmon and `--query-gpu` series read over time, the TPU runtime's fragmentation with its own
/// fix, `build.shm_size`, and two new rules, `cuda.container-gpus-not-requested` and
/// `driver.gpu-reset-blocked`; 2,325 artifacts): 960 of 1,043 detected (920.4 per mille), 0
/// healthy with a false finding, 0 unreadable. Every artifact detected before is detected still.
/// Before them, after
/// the third session of 2026-12-07 (sealed batches h144-h150: 2026 issues, slow training posted
/// off GitHub, perftest/iblinkinfo/show_gids, training logs with per-step timing, XLA and TPU
/// OOMs, container specs, NVIDIA's diagnostics; the `perftest`, `iblinkinfo`, `iostat` and
/// `whichllm-hardware` kinds, FAISS's and `<call> failed:` CUDA errors, PaddleDetection's and
/// maskrcnn-benchmark's windows, NCCL's own P2P refusals for `comm.shm-between-local-gpus`,
/// OpenPAI's dshm eviction; 2,325 artifacts): 951 of 1,043 detected (911.8 per mille), 0 healthy
/// with a false finding, 0 unreadable (h144's vLLM table and h146's DeepEP topology given an
/// `allow` at the merge, see the corpus README). Every artifact detected before is detected still,
/// and two earlier texts mend (h85's OpenPAI eviction found, h108's false finding gone); the share
/// fell because 8 of the batches' 22 problems stay missed (XLA/TPU fragmentation no rule reads,
/// two single progress lines at batch 0, two proposed rules not written, a failure only in a
/// reporter's sentence). Before them, after
/// the second session of 2026-12-07 (sealed batches h135-h143: 2026 issues, OOMs and CUDA errors
/// off GitHub, hung multi-GPU jobs, data-pipeline configs and logs, NVIDIA's and the fabric's
/// tools, stacks, environment reports, pages off GitHub, NCCL INFO logs; TensorFlow's
/// kernel/DSO mismatch, vLLM's and SGLang's own collectives, torch's `[rankN]: ` carrier, the
/// `dataloader-worker-death` and `lshca` kinds, `cuda.torch-extension-cuda-mismatch`; 2,263
/// artifacts): 936 of 1,021 detected (916.7 per mille), 0 healthy with a false finding, 0
/// unreadable (h142's GTX 1050 table and h12's TensorFlow mismatch given an `allow` at the merge,
/// see the corpus README). Every artifact detected before is detected still; the new misses are
/// two of the batches' own (h137's Polaris tcp fallback, h138's ms-swift command). Before them,
/// after the session of 2026-12-07 (sealed batches h127-h134: 2026 issues, the memory layer, stacks
/// and profiles, the nvidia-smi family, NCCL logs and fabric tools, container specs and
/// configs, the driver layer, the CUDA runtime layer off GitHub; NVRM's API mismatch and
/// NV_ERR_NO_MEMORY in kernel logs (`memory.driver-no-memory`), mallocMC's and Enoki's
/// allocation errors, cuda-gdb/gdb `py-bt` stacks, a torch profiler table's launches, ibstatus's
/// empty class and a pod's `netN` carrier, Jsonnet configs, the `jetson-release` kind, the
/// Fabric Manager's config rejection and NVSentinel's DCGM diag log; 2,184 artifacts): 896 of
/// 980 detected (914.3 per mille), 0 healthy with a false finding, 0 unreadable (h130's
/// tensor2tensor#17 and h131's nccl-tests#100 given an `allow` at the merge, see the corpus
/// README). Every artifact detected before is detected still; the new misses are the batches'
/// own. Before them, after the seventh session of 2026-12-06 (sealed batches h120-h126: 2026 issues, the memory and
/// CUDA runtime layers, NVIDIA's tools off GitHub, comm and data from unmined repositories,
/// pages off GitHub, training code and configs, the big repositories' 2025-26 issues; cuda-gdb exceptions, the kernel's device-assert
/// line, the CUDA SDK's cutil checks, the `ggml-abort` and `lsmod` kinds, DCGM's power-cap
/// warning, tuple-unpacked options; mixed pastes read in full; 2,104 artifacts): 856 of 939
/// detected (911.6 per mille), 0 healthy with a false finding, 0 unreadable (three h121/h125
/// labels given an `allow` at the merge, see the corpus README). Every artifact detected before
/// is detected still; the new misses are five of the batches' own. Before them, after
/// the sixth session of 2026-12-06 (sealed batches h116-h119: NCCL over IB at the
/// memory-registration and GPUDirect level, a third draw off GitHub, Kubernetes and Slurm GPU
/// scheduling text, a fourth draw from repositories not mined; the `gpu-scheduling` and
/// `slurm-jobinfo` readers, PhysX's and Caffe's CUDA checks, lspci without sudo, and the rules
/// `comm.gdr-disabled-in-log`, `driver.gpu-held-by-other-driver` and
/// `launch.gpu-request-unschedulable`; 2,022 artifacts): 820 of 899 detected (912.1 per mille),
/// 0 healthy with a false finding, 0 unreadable. Every artifact detected before is detected
/// still; one of the batches' 28 problems stays missed (h117's list of Xids in the poster's
/// words, with no kernel line).
/// Before it, after the fifth session of 2026-12-06 (sealed batches h112-h115: nvidia-smi's query CSV and monitors,
/// a fresh draw off GitHub, the diagnostics support threads ask for, DCGM output; h100d made on the
/// H100; the `dcgm-exporter`, `dcgmi-stats`, `cuda-p2p-bandwidth`, `cuda-bandwidth-test` and
/// `docker-info` readers and the rule `comm.socket-ifname-missing-in-log`; 1,974 artifacts): 793
/// of 871 detected (910.4 per mille), 0 healthy with a false finding, 0 unreadable. Every artifact
/// detected before is detected still; one of the batches' 19 problems stays missed (h112's
/// omoknuni log, whose `%` column no header names).
/// Before it, after the fourth session of 2026-12-06 (sealed batches h108-h111: a fresh draw from repositories not
/// mined, healthy text of every kind, fabric and NVIDIA's tools, hangs and stacks; the
/// `ibportstate` and `pystack-dump` readers, cuda-gdb's tables, NCCL's WARN-level `Cuda failure`
/// as ncclUnhandledCudaError; 1,908 artifacts): 775 of 852 detected (909.6 per mille), 0 healthy
/// with a false finding, 0 unreadable. Every artifact detected before is detected still, and two
/// earlier misses are found (h102's slime#1106 and h50's nccl#1283, both NCCL's `Cuda failure`
/// WARN); three of the batches' 19 problems stay missed (the corpus README says why per batch).
/// Before it, after the third session of 2026-12-06 (sealed batches h105-h107: a fresh draw from repositories not
/// mined, the DataLoader's file-descriptor failures, Slurm job scripts and reports; the
/// `tensor-sharing-log`, `seff`, `scontrol-job` and `sacct` readers and the rule
/// `data.open-files-limit`; 1,860 artifacts): 756 of 833 detected (907.6 per mille), 0 healthy
/// with a false finding, 0 unreadable. Every artifact detected before is detected still; one of
/// the batches' 16 problems stays missed (h106's speechbrain#912, the corpus README says why),
/// and h22's NeuralRecon#91, healthy until the new rule, is a problem it detects.
/// Before it, after the second session of 2026-12-06 (sealed batches h99 and h101-h104: Chinese-language threads,
/// the DataLoader's own messages, NCCL output of 2025-2026, healthy documentation text, the CUDA
/// libraries a framework cannot use; the `paddle-oom` and `jobstats` readers and the rule
/// `cuda.libraries-unusable`; 1,823 artifacts): 740 of 816 detected (906.9 per mille), 0 healthy
/// with a false finding, 0 unreadable. Every artifact detected before is detected still; the
/// share fell because 5 of the batches' 30 problems stay missed (the corpus README says why per
/// batch). Before it, after the session of 2026-12-06 (sealed batches h95-h98: the CUDA runtime and memory layers as
/// TensorFlow and JAX print them, the whole `nvidia-smi -q` report and its XML, a fresh draw of
/// 2025-H2/2026 threads, other vendors' GPU tools beside NVIDIA text; the `mlxlink` reader;
/// 1,762 artifacts): 712 of 783 detected (909.3 per mille), 0 healthy with a false finding, 0
/// unreadable. Every artifact detected before is detected still; the new batches' problems are
/// all detected, and h93's three unreadable texts are read (Intel's `xpu-smi` as another
/// vendor's tool, `mlxlink --json` by its reader). Before it, after
/// the eighth session of 2026-12-05 (sealed batches h90-h94: collect_env and the Hugging Face
/// env reports, OOM messages from the least-mined repositories, kernel logs of GPU nodes,
/// fabric and NVIDIA-tools output, gdb and py-spy dumps of hung jobs; 1,708 artifacts): 697 of
/// 768 detected (907.6 per mille), 0 healthy with a false finding, 3 unreadable. Every artifact
/// detected before is detected still; the eight new misses are h92's four `NVRM: API mismatch`
/// logs (the line names one client, not the NVML the user runs), its AER text without the GPU's
/// recovery, h93's two texts cut before the line that shows the problem and h94's two dumps
/// whose problem is only in the poster's sentences. The three unreadable texts are h93's: Intel's
/// `xpu-smi diag` (twice) and `mlxlink --json`, outputs no reader is written for yet (their
/// section says so); the floor allows them so that the batch is kept as sealed, and issue 24's
/// target (0) is not met for them. Before it, the whole corpus's figures after
/// the seventh session of 2026-12-05 (sealed batches h85-h89: container specs, NCCL timeouts and
/// errors of PyTorch 2.3-2.5, the CUDA runtime layer from Windows, conda and WSL, NVIDIA's tools
/// on recent drivers, a fresh draw of slow-training posts; 1,649 artifacts): 685 of 748 detected
/// (915.8 per mille), 0 healthy with a false finding, 0 unreadable. Every artifact detected before
/// is detected still; the six new misses are h85's PaddleSeg eviction (its volume not shown at
/// /dev/shm) and h89's five (four posters' own sentences, one BasicSR line that may be one
/// iteration), which take the share below the sixth session's 920: the floor is 915. Before it,
/// the whole corpus's figures after
/// the sixth session of 2026-12-05 (sealed batches h80-h84: a fresh draw from pages outside
/// GitHub, one from repositories not mined before, training logs that print the step's time,
/// stack dumps of hung jobs, the CUDA runtime and memory layers of 2025-2026; 1,586 artifacts):
/// 660 of 717 detected (920.5 per mille), 0 healthy with a false finding, 0 unreadable; every
/// artifact detected before is detected still (h79's VindLU#10 is found now; the two new misses
/// are h83's and h84's). Before it, the fifth session of 2026-12-05 (sealed batches h75-h79: NCCL errors and watchdog timeouts,
/// OOM and CUDA error lines, nvidia-smi from forums, fabric tools, training configs; 1,526
/// artifacts): 633 of 689 detected (918.7 per mille), 0 healthy with a false finding, 0
/// unreadable; every artifact detected before is detected still (the three new misses are
/// h79's). Before it, the fourth session of 2026-12-05 (sealed batches h69-h74: training configs and scripts, py-spy
/// and faulthandler dumps, multi-node NCCL logs, container specs and /dev/shm, mixed pastes,
/// `ds_report`; h100n: py-spy `--native` dumps made on the H100; 1,467 artifacts): 613 of 667
/// detected (919 per mille), 0 healthy with a false finding, 0 unreadable; every artifact
/// detected before is detected still (the four new misses are the batches' own). Before it,
/// the third session of 2026-12-05 (sealed batches h64-h68: query CSV and dmon loops, Hugging
/// Face training setups, `-q` sections, lspci/dcgmi/IB tools, the CUDA runtime layer of
/// 2025-2026; a py-spy thread inside a collective read as a wait on its peers; GeForce names as
/// owners write them; 1,395 artifacts): 581 of 631 detected (920 per mille), 0 healthy with a
/// false finding, 0 unreadable; every artifact detected before is detected still. The h67
/// branch had it at 902 (554 of 614, its one miss mscclpp#493, a ConnectX port Down/Disabled
/// beside an Active one, the shape of an unused second port). Before it, after the sealed batches h59-h63 (py-spy dumps of hung multi-rank jobs, OOM messages, nvidia-smi
/// tables, NCCL logs, training configs) and h200p/h200q (profiler output, py-spy and dmon made
/// on the H200) and their readers (1,342 artifacts): 550 of 609 detected (903 per mille), 0
/// healthy with a false finding, 0 unreadable; every artifact detected before is detected
/// still (and h47's STGym table is now detected). The share fell because 14 of the batches' 31
/// problems stay missed (the corpus README
/// says why per batch: most show one moment of a hang, or a figure the message does not print;
/// the fragmentation rule's cited thresholds are not lowered to catch h60's two).
/// Before them, the whole corpus's figures after
/// the sealed batches h54-h58 (NVSwitch Fabric Manager and containers, torch wheels against the
/// newest and dropped GPUs, PyTorch 2.6-2.11 and NCCL 2.23-2.28 comm errors, gpustat and nvitop,
/// a fresh measure from the least-mined frameworks) and their readers (1,265 artifacts): 532 of
/// 578 detected (920 per mille), 0 healthy with a false finding, 0 unreadable; every artifact
/// detected before is detected still. Before them, after
/// the sealed batches h45-h53 (torch wheels against the GPU, nccl-tests, profiler reports,
/// Nsight Systems and nvprof summaries, four fresh measures across the kinds from GitHub and
/// forums) and their readers (1,205 artifacts): 504 of 549 detected (918 per mille), 0 healthy
/// with a false finding, 0 unreadable. Every artifact detected before is detected still; the
/// share fell because 8 of the batches' 61 problems stay missed (the corpus README says why per
/// batch). Before them, after the sealed batches h32-h44 (NCCL, the CUDA runtime and wheels, memory, NVIDIA's tools,
/// fabric and kernel logs, containers, three fresh measures across the kinds, low-utilization
/// threads, configs, stacks and profiler reports, cluster launch specs) and their readers (1,074
/// artifacts): 451 of 488 detected (924 per mille), 0 and 0. Every artifact detected before is
/// detected still, and one earlier miss is found (h24's GTX 1070 under Windows `2.8.0+cu129`);
/// the share fell because 15 of the batches' 98 problems stay missed, each a text that cannot
/// show the poster's problem (the corpus README says why per batch). Before them, after
/// the sealed batch h31 (24 unseen texts across the pasted kinds; its one miss, PyTorch's
/// heartbeat monitor `… watchdog got stuck for 480 seconds …` pasted hard-wrapped, read by
/// `evidence::nccl_errors` since) (860 artifacts): 367 of 390 detected (941 per mille), 0 and 0;
/// every artifact detected before is detected still. Before it, after
/// the sealed batches h28 (real text as pdsh, mpirun, Hydra, Ray, torchrun, Compose and `> `
/// quotes carried it), h29 (text from outside GitHub: forums, blogs, error-reference pages,
/// docs) and h30 (an old GPU beside a wheel that dropped its architecture) and their readers
/// (836 artifacts): 354 of 377 detected (939 per mille), 0 and 0 (one h28 and one h29 label given an
/// `allow` after the first run, see the corpus README). Every artifact detected before is
/// detected still; two of h29's fifteen problems stay missed (a page's own wording of an OOM,
/// an error named only in a post's title). Before them, after the sealed batches h24-h27 (a GPU newer than the torch build, shown only by versions and
/// names; 2025-26 issue bodies of the big training and serving repositories; GPU-platform tool
/// outputs; training configs and launch scripts), their readers, and the paste unwrapping
/// (`vocab::paste`; 777 artifacts): 326 of 347 detected (939 per mille), 0 and 0 (one h25 label
/// corrected after the first run, see the corpus README). Before them, after
/// the sealed batches h19-h23 (nvidia-smi, NCCL, CUDA runtime and OOM, data pipeline and
/// containers, fabric/PCIe/kernel logs) and their readers, and the pip-list kind (698
/// artifacts): 296 of 316 detected (936 per mille), 0 and 0 (three h19 tables with an `allow`
/// added after the first run, one h6 label given the rule written after it, see the corpus
/// README). Before them, after
/// the sealed batch h18 (whole issue bodies of the thin families) and its readers (a
/// `cudaGetErrorString` text quoted alone, attachments and contractions in prose; 603
/// artifacts): 253 of 271 detected (933 per mille), 0 and 0. Before it, after the sealed batch
/// h16 (whole issue bodies) and its readers (`NCCLCHECK` lines, a post in prose
/// judged as showing nothing; 572 artifacts): 246 of 264 detected (931 per mille), 0 and 0.
/// Before it, after the sealed batch h14 and its readers (dcgmi-discovery, nvidia-smi-list, the dcgmi diag
/// refusal and health-watch log line, dmon's date/time columns, plain lspci, ibv_devices; 521
/// artifacts): 214 of 231 problems detected (926 per mille), 0 and 0. Before it, after the sealed
/// batch h13 and its readers (xla-oom, torchrun-failure; 501 artifacts): 209 of 226
/// problems detected (924 per mille), no healthy artifact with a false finding, 0 unreadable.
/// Before it, with the sealed batch h12 and its readers, and the false findings of h8 and h11
/// mended (486 artifacts): 203 of 220 (923 per mille), 0 and 0. Before that, on 458 artifacts: 189 of
/// 206, 3 and 0; before h11, 185 of 200, 1 and 0; after the h9 readers, on 428 artifacts, 887
/// per mille, 2 and 4. The detected floor stays one detection below (922), because whether the
/// 35 MB Kineto trace of h11 is judged within `plan`'s probe timeout depends on the machine's
/// load. A change that reads the corpus worse fails CI; one that reads it better raises these.
/// Issue 24's target is 95% detected, 0 and 0: the detected share is not met.
const FLOOR_DETECTED_PER_MILLE: usize = 919;
const MAX_FALSE_ON_HEALTHY: usize = 0;
const MAX_UNREADABLE: usize = 0;

const INPUTS: [&str; 5] = ["evidence", "config", "trace", "nccl-log", "kernel-log"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Label {
    source: String,
    kind: String,
    input: String,
    expect: Vec<String>,
    /// Rules the artifact does show but that were not the poster's problem (a table that reads
    /// `Persistence-M Off`): failing, they count neither as a detection nor as a false finding.
    #[serde(default)]
    allow: Vec<String>,
    note: String,
}

struct Artifact {
    name: String,
    file: PathBuf,
    label: Label,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// The gpufix binary the corpus is read with: the debug build cargo made for this test, or
/// `GPUFIX_CORPUS_BIN` when set. `.ci/run` sets it to the release binary it builds from the same
/// checkout for the packages (the one users get), which reads the corpus's 2,300 texts about
/// three times faster than the unoptimised build on CI's two cores.
fn bin() -> String {
    match std::env::var("GPUFIX_CORPUS_BIN") {
        Ok(b) if !b.is_empty() => {
            assert!(
                Path::new(&b).is_file(),
                "GPUFIX_CORPUS_BIN={b}: no such file (build it, or unset the variable to use \
                 the test's own debug build)"
            );
            b
        }
        _ => env!("CARGO_BIN_EXE_gpufix").to_owned(),
    }
}

/// Rule ids the binary knows, plus the proposed ones other engineers are implementing.
fn known_rules() -> BTreeSet<String> {
    let out = Command::new(bin())
        .args(["--no-system", "list", "--format", "json"])
        .output()
        .expect("run gpufix list");
    assert!(
        out.status.success(),
        "gpufix list failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("list --format json");
    let mut ids: BTreeSet<String> = v
        .as_array()
        .expect("a list of rules")
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_owned))
        .collect();
    let proposed = std::fs::read_to_string(corpus_dir().join("PROPOSED_RULES.txt"))
        .expect("tests/fixtures/corpus/PROPOSED_RULES.txt");
    for line in proposed.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(id) = line.split('|').next() {
            ids.insert(id.trim().to_owned());
        }
    }
    ids
}

/// Every `NAME.label.yaml` with its artifact `NAME.<ext>`; problems found on the way are
/// collected, not panicked on, so one run lists them all.
fn load(errors: &mut Vec<String>) -> Vec<Artifact> {
    let dir = corpus_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read the corpus directory")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for label_name in names.iter().filter(|n| n.ends_with(".label.yaml")) {
        let stem = label_name.trim_end_matches(".label.yaml");
        let text = std::fs::read_to_string(dir.join(label_name)).expect("read label");
        let label: Label = match serde_yaml::from_str(&text) {
            Ok(l) => l,
            Err(e) => {
                errors.push(format!("{label_name}: not a label: {e}"));
                continue;
            }
        };
        let files: Vec<&String> = names
            .iter()
            .filter(|n| {
                n.strip_prefix(stem)
                    .is_some_and(|rest| rest.starts_with('.'))
                    && !n.ends_with(".label.yaml")
            })
            .collect();
        match files.as_slice() {
            [one] => out.push(Artifact {
                name: stem.to_owned(),
                file: dir.join(one),
                label,
            }),
            [] => errors.push(format!("{label_name}: no artifact {stem}.<ext> beside it")),
            many => errors.push(format!("{label_name}: several artifacts: {many:?}")),
        }
    }
    // an artifact without a label is an error too
    for n in &names {
        if n.ends_with(".label.yaml") || n == "README.md" || n == "PROPOSED_RULES.txt" {
            continue;
        }
        if !out
            .iter()
            .any(|a| a.file.file_name().and_then(|f| f.to_str()) == Some(n.as_str()))
        {
            errors.push(format!("{n}: artifact without a NAME.label.yaml"));
        }
    }
    out
}

/// One text copied twice from one thread is one artifact: counted twice, it weighs double in
/// every figure (and two copies were labelled opposite ways once). The same text from two
/// threads is allowed: people paste the same error line into different threads. Checked over
/// the whole corpus, also when `GPUFIX_CORPUS_ONLY` measures one batch, so a new batch cannot
/// re-add an old text.
fn same_text_same_thread(artifacts: &[Artifact], errors: &mut Vec<String>) {
    let mut seen: BTreeMap<(Vec<u8>, &str), &str> = BTreeMap::new();
    for a in artifacts {
        let Ok(bytes) = std::fs::read(&a.file) else {
            continue; // check_label reports it
        };
        if let Some(first) = seen.insert((bytes, a.label.source.as_str()), &a.name) {
            errors.push(format!(
                "{}: the same text from the same source as {first} ({}); keep one",
                a.name, a.label.source
            ));
        }
    }
}

/// A crude e-mail finder: `local@domain.tld` with a letter-only TLD.
fn has_email(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || "<>()[]\"',;`".contains(c))
        .find(|tok| {
            let Some((local, domain)) = tok.split_once('@') else {
                return false;
            };
            let domain = domain.trim_end_matches('.');
            !local.is_empty()
                && local
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._%+-".contains(c))
                && domain.contains('.')
                && domain.rsplit('.').next().is_some_and(|tld| {
                    tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic())
                })
                && domain
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c))
        })
}

fn check_label(a: &Artifact, known: &BTreeSet<String>, errors: &mut Vec<String>) {
    let l = &a.label;
    let n = &a.name;
    // The second source (issue 24): real output made on the GPU host by
    // bench/capture_h200*.sh under a condition it sets up; the source says which.
    let made_here = (n.starts_with("h200") || n.starts_with("h100"))
        && CAPTURED
            .iter()
            .any(|c| l.source.starts_with(c) && l.source.len() > c.len() + 3);
    if !made_here && (!l.source.starts_with("https://") || l.source.contains(char::is_whitespace)) {
        errors.push(format!(
            "{n}: source must be one https:// URL (or, for an h200 or h100 artifact, `{} HOW`), got `{}`",
            CAPTURED.join("` or `"),
            l.source
        ));
    }
    if !INPUTS.contains(&l.input.as_str()) {
        errors.push(format!("{n}: input `{}` is not one of {INPUTS:?}", l.input));
    }
    if l.kind.trim().is_empty() || l.kind.contains(char::is_whitespace) {
        errors.push(format!("{n}: kind must be one word like nvidia-smi-table"));
    }
    if l.note.trim().is_empty() || l.note.contains('\n') {
        errors.push(format!("{n}: note must be one non-empty line"));
    }
    for id in l.expect.iter().chain(&l.allow) {
        if !known.contains(id) {
            errors.push(format!(
                "{n}: `{id}` is neither a rule of gpufix list nor in PROPOSED_RULES.txt"
            ));
        }
    }
    if let Some(id) = l.allow.iter().find(|id| l.expect.contains(id)) {
        errors.push(format!("{n}: `{id}` is in both expect and allow"));
    }
    match std::fs::read(&a.file) {
        Ok(bytes) if bytes.is_empty() => errors.push(format!("{n}: the artifact is empty")),
        Ok(bytes) => {
            if let Some(e) = has_email(&String::from_utf8_lossy(&bytes)) {
                errors.push(format!(
                    "{n}: the artifact holds an e-mail address ({e}); pick another"
                ));
            }
        }
        Err(e) => errors.push(format!("{n}: cannot read the artifact: {e}")),
    }
}

#[derive(Debug)]
enum Outcome {
    /// gpufix exited 1 or said it cannot tell what the input is.
    Unreadable(String),
    /// The rule ids that failed.
    Judged(BTreeSet<String>),
}

fn run(a: &Artifact) -> Outcome {
    let flag = format!("--{}", a.label.input);
    let out = Command::new(bin())
        .args(["--no-system", "plan"])
        .arg(&flag)
        .arg(&a.file)
        .args(["--sample", "0", "--format", "json"])
        // what is measured is how the text is read, not how fast a loaded CI machine parses a
        // 35 MB trace in a debug build: the default 15 s deadline would make that flaky
        .args(["--probe-timeout", "300s"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run gpufix");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first_err = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_owned();
    if out.status.code() == Some(1) || stderr.contains("cannot tell what") {
        return Outcome::Unreadable(first_err);
    }
    let report: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => return Outcome::Unreadable(format!("no JSON report ({e}); {first_err}")),
    };
    let failed = report["results"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| r["verdict"] == "fail")
                .filter_map(|r| r["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Outcome::Judged(failed)
}

/// Every artifact's outcome, in the artifacts' order. Each run is its own gpufix process, so they
/// run side by side, one per CPU (`GPUFIX_CORPUS_JOBS` to choose): on CI's two cores the corpus
/// takes half the time. The report is built afterwards in order, so it does not depend on which
/// run ended first.
fn run_all(artifacts: &[Artifact]) -> Vec<Outcome> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let jobs = std::env::var("GPUFIX_CORPUS_JOBS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(artifacts.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(artifacts.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(a) = artifacts.get(i) else { break };
                    let o = run(a);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(o);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|o| o.expect("every artifact was run"))
        .collect()
}

#[derive(Default)]
struct Row {
    artifacts: usize,
    problems: usize,
    detected: usize,
    healthy: usize,
    false_on_healthy: usize,
    false_on_problems: usize,
    unreadable: usize,
}

impl Row {
    fn add(&mut self, o: &Row) {
        self.artifacts += o.artifacts;
        self.problems += o.problems;
        self.detected += o.detected;
        self.healthy += o.healthy;
        self.false_on_healthy += o.false_on_healthy;
        self.false_on_problems += o.false_on_problems;
        self.unreadable += o.unreadable;
    }
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "–".to_owned()
    } else {
        format!("{:.0}%", 100.0 * n as f64 / d as f64)
    }
}

fn table_line(kind: &str, r: &Row) -> String {
    format!(
        "| {kind} | {} | {} | {} ({}) | {} | {} | {} | {} |\n",
        r.artifacts,
        r.problems,
        r.detected,
        pct(r.detected, r.problems),
        r.healthy,
        r.false_on_healthy,
        r.false_on_problems,
        r.unreadable
    )
}

#[test]
fn corpus() {
    let mut errors = Vec::new();
    let mut artifacts = load(&mut errors);
    same_text_same_thread(&artifacts, &mut errors);
    // GPUFIX_CORPUS_ONLY=h2_ measures one batch alone (a held-out batch's honest figures).
    let only = std::env::var("GPUFIX_CORPUS_ONLY").unwrap_or_default();
    artifacts.retain(|a| a.name.starts_with(&only));
    let known = known_rules();
    for a in &artifacts {
        check_label(a, &known, &mut errors);
    }
    assert!(
        errors.is_empty(),
        "the corpus is not well-formed:\n  {}",
        errors.join("\n  ")
    );
    assert!(
        !artifacts.is_empty(),
        "no artifacts in {}",
        corpus_dir().display()
    );

    let outcomes = run_all(&artifacts);
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut details = String::new();
    for (a, outcome) in artifacts.iter().zip(outcomes) {
        let l = &a.label;
        let row = rows.entry(l.kind.clone()).or_default();
        row.artifacts += 1;
        let problem = !l.expect.is_empty();
        if problem {
            row.problems += 1
        } else {
            row.healthy += 1
        }
        match outcome {
            Outcome::Unreadable(why) => {
                row.unreadable += 1;
                let _ = writeln!(details, "- `{}` ({}) unreadable: {why}", a.name, l.kind);
            }
            Outcome::Judged(failed) => {
                let hit = l.expect.iter().any(|id| failed.contains(id));
                let extra: Vec<&String> = failed
                    .iter()
                    .filter(|id| !l.expect.contains(id) && !l.allow.contains(id))
                    .collect();
                if problem && hit {
                    row.detected += 1;
                }
                if !extra.is_empty() {
                    if problem {
                        row.false_on_problems += 1
                    } else {
                        row.false_on_healthy += 1
                    }
                }
                if (problem && !hit) || !extra.is_empty() {
                    let _ = writeln!(
                        details,
                        "- `{}` ({}): expected {:?}, failed {:?}{}",
                        a.name,
                        l.kind,
                        l.expect,
                        failed,
                        if extra.is_empty() {
                            String::new()
                        } else {
                            format!(", false findings {extra:?}")
                        }
                    );
                }
            }
        }
    }

    let mut total = Row::default();
    let mut table = String::from(
        "| kind | artifacts | problems | detected | healthy | false findings (healthy) | false findings (problems) | unreadable |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (kind, r) in &rows {
        table.push_str(&table_line(kind, r));
        total.add(r);
    }
    table.push_str(&table_line("**all**", &total));
    let report = format!(
        "# Corpus report\n\n`cargo test --test corpus` ran {} artifacts{} through `gpufix --no-system plan --<input> FILE --sample 0 --format json`.\n\n{table}\n## Misses, false findings and unreadable artifacts\n\n{}",
        total.artifacts,
        if only.is_empty() {
            String::new()
        } else {
            format!(" (only names starting `{only}`)")
        },
        if details.is_empty() {
            "none\n".to_owned()
        } else {
            details.clone()
        }
    );
    println!("{report}");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let _ = std::fs::create_dir_all(&target);
    std::fs::write(target.join("corpus-report.md"), &report)
        .expect("write target/corpus-report.md");

    if std::env::var("GPUFIX_CORPUS_STRICT").as_deref() == Ok("1") {
        let mut fails = Vec::new();
        if total.artifacts < 80 {
            fails.push(format!(
                "{} artifacts, the acceptance needs at least 80",
                total.artifacts
            ));
        }
        if total.healthy < 20 {
            fails.push(format!(
                "{} healthy artifacts, the acceptance needs at least 20",
                total.healthy
            ));
        }
        if total.detected * 1000 < total.problems * FLOOR_DETECTED_PER_MILLE {
            fails.push(format!(
                "{} of {} problem artifacts detected ({}), below the floor of {}.{}% (issue 24's target: 95%)",
                total.detected,
                total.problems,
                pct(total.detected, total.problems),
                FLOOR_DETECTED_PER_MILLE / 10,
                FLOOR_DETECTED_PER_MILLE % 10
            ));
        }
        if total.false_on_healthy > MAX_FALSE_ON_HEALTHY {
            fails.push(format!(
                "{} healthy artifacts with a false finding, more than the {MAX_FALSE_ON_HEALTHY} of the floor (issue 24's target: 0)",
                total.false_on_healthy
            ));
        }
        if total.unreadable > MAX_UNREADABLE {
            fails.push(format!(
                "{} unreadable artifacts, more than the {MAX_UNREADABLE} of the floor (issue 24's target: 0)",
                total.unreadable
            ));
        }
        assert!(
            fails.is_empty(),
            "corpus acceptance (GPUFIX_CORPUS_STRICT=1):\n  {}\n\n{details}",
            fails.join("\n  ")
        );
    }
}

#[test]
fn email_finder_finds_addresses_and_not_nccl_lines() {
    assert_eq!(
        has_email("mail me at jane.doe@example.com please"),
        Some("jane.doe@example.com")
    );
    assert_eq!(has_email("<user@host.org>"), Some("user@host.org"));
    assert_eq!(
        has_email("gpu01:124172:124452 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"),
        None
    );
    assert_eq!(has_email("pip install torch==2.1 python@3.10"), None);
    assert_eq!(has_email("remote@10.0.0.1"), None);
}
