//! `mounts.data` and `shm`: mount facts that must be judged from whatever table is at hand —
//! the live `/proc/mounts`, or a pasted fstab, `/proc/mounts`, `mount` output, mountinfo or
//! `df -h` — so that an fstab pasted alone is judged, not declared not-applicable.

use super::inputs::evidence_of;
use super::mounts::parse_mounts;
use super::{Probe, ProbeCtx, ProbeOutcome, read_text};
use crate::evidence::{mount_text, mounts as ev_mounts};
use serde_json::{Value, json};

/// Filesystems whose atime updates cost a write per read.
const ATIME_FS: [&str; 4] = ["ext4", "ext3", "xfs", "btrfs"];

/// Mount points that hold the system, not training data (nor a container's bind-mounted
/// `/etc/hosts`).
fn is_data_mount_point(mp: &str) -> bool {
    const SYSTEM: [&str; 9] = [
        "/", "/boot", "/efi", "/usr", "/var", "/tmp", "/home", "/opt", "/srv",
    ];
    const UNDER: [&str; 10] = [
        "/boot/", "/etc/", "/proc/", "/sys/", "/dev/", "/run/", "/usr/", "/var/", "/snap/", "/tmp/",
    ];
    mp.starts_with('/')
        && !SYSTEM.contains(&mp.trim_end_matches('/').max("/"))
        && !UNDER.iter().any(|u| mp.starts_with(u))
}

pub struct DataMounts;

impl Probe for DataMounts {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "mounts.data"
    }
    fn doc(&self) -> &'static str {
        "data mounts (ext4, ext3, xfs, btrfs outside the system paths) from /proc/mounts and /etc/fstab, whichever is at hand, with their atime options"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "mounts",
                "[{mount_point, fstype, device, options, from: mounts|fstab, noatime}] (noatime: set in either table)",
            ),
            ("sources", "which tables were read: mounts, fstab"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        // a table that is absent is simply not at hand; one that cannot be read (not a regular
        // file, too large, unreadable) makes the verdict unknown, with the reason
        let read = |path: &str| match ctx.host.read_file(path) {
            Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.to_string().contains(crate::host::NOT_IN_EVIDENCE) =>
            {
                Ok(None)
            }
            Err(e) => Err(format!("cannot read `{path}`: {e}")),
        };
        let (mounts, fstab) = match (read("/proc/mounts"), read("/etc/fstab")) {
            (Ok(m), Ok(f)) => (
                m.map(|t| parse_mounts(&t)),
                f.map(|t| ev_mounts::parse_fstab(&t)),
            ),
            (Err(e), _) | (_, Err(e)) => return ProbeOutcome::Unknown(e),
        };
        if mounts.is_none() && fstab.is_none() {
            return ProbeOutcome::Unknown(format!(
                "no mount table: {}",
                crate::host::NOT_IN_EVIDENCE
            ));
        }
        let fstab_noatime = |mp: &str| {
            fstab.as_ref().is_some_and(|f| {
                f.entries
                    .iter()
                    .any(|e| e.mount_point == mp && e.options.iter().any(|o| o == "noatime"))
            })
        };
        let mut out: Vec<Value> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        if let Some(ms) = &mounts {
            for m in ms {
                if !ATIME_FS.contains(&m.fstype.as_str())
                    || !is_data_mount_point(&m.mount_point)
                    || seen.contains(&m.mount_point)
                {
                    continue;
                }
                seen.push(m.mount_point.clone());
                let noatime =
                    m.options.iter().any(|o| o == "noatime") || fstab_noatime(&m.mount_point);
                out.push(json!({
                    "mount_point": m.mount_point, "fstype": m.fstype, "device": m.device,
                    "options": m.options, "from": "mounts", "noatime": noatime,
                }));
            }
        }
        // fstab entries not mounted (or no mount table at hand) are judged from fstab itself
        if let Some(f) = &fstab {
            for e in &f.entries {
                if !ATIME_FS.contains(&e.fstype.as_str())
                    || !is_data_mount_point(&e.mount_point)
                    || seen.contains(&e.mount_point)
                    || mounts.is_some() && ctx.host.is_live()
                {
                    continue;
                }
                seen.push(e.mount_point.clone());
                out.push(json!({
                    "mount_point": e.mount_point, "fstype": e.fstype, "device": e.device,
                    "options": e.options, "from": "fstab",
                    "noatime": e.options.iter().any(|o| o == "noatime"),
                }));
            }
        }
        let mut sources = Vec::new();
        if mounts.is_some() {
            sources.push("mounts");
        }
        if fstab.is_some() {
            sources.push("fstab");
        }
        ProbeOutcome::Value(json!({ "mounts": out, "sources": sources }))
    }
}

pub struct Shm;

impl Probe for Shm {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "shm"
    }
    fn doc(&self) -> &'static str {
        "size of /dev/shm: from `df` or `ds_report` evidence, the tmpfs `size=` option in a mount table, or half the memory for a live tmpfs without one"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the evidence file read"),
            ("size_mib", "size of /dev/shm in MiB"),
            (
                "avail_mib",
                "free space of /dev/shm in MiB when `df` ran (df's Avail column; beside a bus error, the poster's own df)",
            ),
            (
                "size_source",
                "`df` when the log of a shared-memory error also holds a df row of /dev/shm",
            ),
            ("source", "df, ds_report, mount-option or meminfo"),
            (
                "container",
                "the table looks like a container's (overlay root)",
            ),
            (
                "error_seen",
                "a log shows DataLoader workers failing on shared memory (bus error, insufficient shm), NCCL unable to create or grow a /dev/shm segment, or Ray's object store finding /dev/shm smaller than it asks for",
            ),
            ("error", "the log line that shows it"),
            (
                "host_shm",
                "the log's own words show /dev/shm is the host's (--ipc=host, ipc: host, hostIPC: true, /dev/shm:/dev/shm)",
            ),
            (
                "by",
                "`nccl` when the failing line is NCCL's, `ray` when it is Ray's object-store warning, `kubelet` when the kubelet evicted the pod for the emptyDir `kubectl describe` shows mounted at /dev/shm",
            ),
            (
                "how",
                "from a container spec: shm-size, ipc-host, host-dev-shm, tmpfs, emptydir-memory, emptydir-disk, ipc-shared, ipc-none, unnamed-mount (a /dev/shm mount naming no volume) or default",
            ),
            (
                "unknown",
                "from a container spec: what the spec cannot show (the DataLoader workers and batch size)",
            ),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        // NCCL's own WARN that it could not create or grow a segment in /dev/shm (an attach
        // failure is a peer gone or an unshared /dev/shm, not its size: not read here)
        for p in ctx.inputs.nccl_log.iter().chain(ctx.inputs.evidence.iter()) {
            let Ok(t) = crate::vocab::io::read_shared(p) else {
                continue;
            };
            if !t.contains("shared memory segment")
                && !t.contains("failed to extend")
                && !t.contains("posix_fallocate failed")
                && !t.contains("Unable to allocate shared memory")
                && crate::evidence::nccl_errors::shm_bus_error(&t).is_none()
            {
                continue;
            }
            let e = crate::evidence::nccl_errors::parse_nccl_errors(&t);
            if e.shm_create_failed {
                let line = e.shm_error.unwrap_or_default();
                return ProbeOutcome::Value(json!({
                    "error_seen": true,
                    "error": crate::evidence::clip(&line, 300),
                    "by": "nccl",
                    "source": "log",
                    "file": p.display().to_string(),
                }));
            }
        }
        if let Some((p, t)) = evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::shm_error::ShmErrorLog,
        )
        .into_iter()
        .next()
        {
            let line = crate::evidence::shm_error::shm_error_line(&t)
                .unwrap_or("")
                .trim();
            let mut v = json!({
                "error_seen": true,
                "error": crate::evidence::clip(line, 300),
                "source": "log",
                "file": p.display().to_string(),
            });
            // Ray's object store measured /dev/shm and found it smaller than it asks for
            // (shm_error's module doc): said as Ray's, not the DataLoader's
            if crate::evidence::shm_error::ray_shm_line(line) {
                v["by"] = json!("ray");
            }
            // the same text shows the container shares the host's /dev/shm: its size is not
            // why the workers failed
            if let Some(h) = crate::evidence::shm_error::host_shm_shown(&t) {
                v["host_shm"] = json!(h);
            }
            // the same text holds the poster's `df` of /dev/shm (ms-swift#7264: `df -h /dev/shm`
            // under the bus error, 492G free): its size and what was free say whether shared
            // memory could have run out
            if let Some(r) = mount_text::parse_df(&t)
                .into_iter()
                .find(|r| r.mount_point == "/dev/shm" && r.size_mib.is_some())
            {
                v["size_mib"] = json!(r.size_mib);
                if let Some(a) = r.avail_mib {
                    v["avail_mib"] = json!(a);
                }
                v["size_source"] = json!("df");
            }
            return ProbeOutcome::Value(v);
        }
        // the kubelet evicted the pod for an emptyDir outgrowing its sizeLimit (kube_events'
        // module doc): shared memory outgrowing its size when that volume is the one at
        // /dev/shm, which the events alone do not show; describe's `Mounts:` list does
        // (`/dev/shm from dshm (rw)`)
        if let Some((p, ev, at_shm)) = evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::kube_events::KubeEventsKind,
        )
        .into_iter()
        .find_map(|(p, t)| {
            let k = crate::evidence::kube_events::parse_kube_events(&t);
            let at_shm = k.shm_volumes;
            k.emptydir_evictions.into_iter().next().map(|e| {
                // OpenPAI's report may stand apart from the eviction line (another part of the
                // paste): the whole file says whether the pod is OpenPAI's, whose `dshm` is
                // its /dev/shm (kube_events' module doc)
                let here = at_shm.contains(&e.volume)
                    || e.volume == "dshm"
                        && crate::vocab::io::read_shared(&p)
                            .is_ok_and(|w| crate::evidence::kube_events::openpai_report(&w));
                (p, e, here)
            })
        }) {
            if at_shm {
                let mut v = json!({
                    "error_seen": true,
                    "error": format!("Usage of EmptyDir volume \"{}\" exceeds the limit \"{}\"", ev.volume, ev.limit),
                    "by": "kubelet",
                    "source": "kube-events",
                    "file": p.display().to_string(),
                });
                if let Some(m) = crate::evidence::container_spec::k8s_quantity_mib(&ev.limit) {
                    v["size_mib"] = json!(m);
                }
                return ProbeOutcome::Value(v);
            }
            return ProbeOutcome::Unknown(format!(
                "the kubelet evicted the pod in {} because emptyDir volume \"{}\" outgrew its sizeLimit {}; the text does not show this volume mounted at /dev/shm (add `kubectl describe pod`, whose Mounts list reads `/dev/shm from <volume> (rw)`, or the pod spec)",
                p.display(),
                ev.volume,
                ev.limit
            ));
        }
        if let Some((p, t)) = evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::container_spec::ContainerSpecKind,
        )
        .into_iter()
        .next()
        {
            return from_container_spec(&p, &t);
        }
        // DeepSpeed's ds_report measures /dev/shm itself (`deepspeed/env_report.py`,
        // `get_shm_size`: `os.statvfs('/dev/shm')`, f_frsize × f_blocks, printed in 1024-based
        // units) in the environment the job runs in, a container's own /dev/shm included
        if let Some((p, mib)) = evidence_of(
            &ctx.inputs.evidence,
            &crate::evidence::ds_report::DsReportKind,
        )
        .into_iter()
        .find_map(|(p, t)| {
            crate::evidence::ds_report::read(&t)
                .shm_size_mib
                .map(|m| (p, m))
        }) {
            return ProbeOutcome::Value(json!({
                "size_mib": mib, "source": "ds_report", "error_seen": false, "file": p.display().to_string(),
            }));
        }
        if let Some((p, t)) = evidence_of(&ctx.inputs.evidence, &crate::evidence::mount_text::Df)
            .into_iter()
            .next()
        {
            let rows = mount_text::parse_df(&t);
            let container = rows
                .iter()
                .any(|r| r.mount_point == "/" && r.filesystem == "overlay");
            return match rows.iter().find(|r| r.mount_point == "/dev/shm") {
                Some(r) => match r.size_mib {
                    Some(s) => ProbeOutcome::Value(json!({
                        "size_mib": s, "source": "df", "container": container, "error_seen": false, "file": p.display().to_string(),
                    })),
                    None => ProbeOutcome::Unknown(
                        "cannot read the size of /dev/shm in the df output".into(),
                    ),
                },
                None => ProbeOutcome::NotApplicable(format!(
                    "/dev/shm: {}",
                    crate::host::NOT_IN_EVIDENCE
                )),
            };
        }
        let text = match read_text(ctx.host, "/proc/mounts") {
            Ok(t) => t,
            Err(e) => return e.into(),
        };
        let ms = parse_mounts(&text);
        let container = ms
            .iter()
            .any(|m| m.mount_point == "/" && m.fstype == "overlay");
        let Some(m) = ms.iter().rev().find(|m| m.mount_point == "/dev/shm") else {
            return ProbeOutcome::NotApplicable(if ctx.host.is_live() {
                "/dev/shm is not mounted".to_string()
            } else {
                format!("/dev/shm: {}", crate::host::NOT_IN_EVIDENCE)
            });
        };
        if let Some(s) = mount_text::tmpfs_size_option_mib(&m.options.join(",")) {
            return ProbeOutcome::Value(json!({
                "size_mib": s, "source": "mount-option", "container": container, "error_seen": false,
            }));
        }
        // tmpfs without size= gets half of the memory
        match read_text(ctx.host, "/proc/meminfo") {
            Ok(mi) => match mi
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            {
                Some(kib) => ProbeOutcome::Value(json!({
                    "size_mib": (kib / 2048.0).round(), "source": "meminfo", "container": container, "error_seen": false,
                })),
                None => ProbeOutcome::Unknown("cannot read MemTotal in /proc/meminfo".into()),
            },
            Err(e) => ProbeOutcome::Unknown(format!("/dev/shm has no size= option and {e}")),
        }
    }
}

/// `/dev/shm` as a pasted container spec (docker run, compose, Kubernetes) sizes it, for the
/// containers whose `/dev/shm` serves a training job: one that runs PyTorch, or asks for GPUs
/// and runs a shell or its image's default (not a named tool such as `nvidia-smi`), or a quoted
/// PodSpec fragment that mounts `/dev/shm`. The workers count and batch size are not in a
/// spec: the runtime's 64 MiB default is judged when the container has several GPUs (NCCL keeps
/// its intra-node buffers there) or an unknown number; with exactly one GPU only DataLoader
/// workers would need it, which the spec cannot show, so the rule is not applicable and says
/// what to add.
fn from_container_spec(p: &std::path::Path, text: &str) -> ProbeOutcome {
    use crate::evidence::container_spec::{K8S_FRAGMENT, gpu_count, parse_container_specs};
    let specs = parse_container_specs(text);
    let file = p.display().to_string();
    let jobs: Vec<(&str, &crate::evidence::container_spec::Container)> = specs
        .iter()
        .flat_map(|s| s.containers.iter().map(move |c| (s.source, c)))
        .filter(|(source, c)| {
            c.pytorch_hint.is_some()
                || (c.gpus.is_some() && !c.runs_other_program())
                || *source == K8S_FRAGMENT
                // shared memory sized for the build alone (`build.shm_size`): the author
                // meant the job to have it
                || (c.build_shm_size.is_some() && c.shm.how == "default")
        })
        .collect();
    let Some((source, c)) = jobs
        .iter()
        .filter(|(_, c)| c.shm.size_mib.is_some())
        .min_by(|a, b| {
            a.1.shm
                .size_mib
                .partial_cmp(&b.1.shm.size_mib)
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .or(jobs.first())
    else {
        return ProbeOutcome::NotApplicable(format!(
            "the container spec in {file} runs no PyTorch job (no torch, python or train in an image or command) and no GPU container whose command is a shell or its image's default"
        ));
    };
    // a service of an override file that sets no /dev/shm: the base file it completes does
    // (see `SHM_FROM_BASE_FILE`), and that file is not in the evidence
    if c.shm.how == crate::evidence::container_spec::SHM_FROM_BASE_FILE {
        return ProbeOutcome::Unknown(format!(
            "{source} `{}` is in a file that completes a base compose file (a service in it names neither image nor build) and sets no shm_size, ipc or /dev/shm mount itself: the base file's setting decides; add that file or `df -h /dev/shm` from inside the container",
            c.name
        ));
    }
    let gpus = c.gpus.as_deref().map(|g| (g, gpu_count(g)));
    if c.shm.how == "default"
        && let Some((g, Some(n @ 0..=1))) = gpus
    {
        return ProbeOutcome::NotApplicable(format!(
            "{source} `{}` keeps the runtime's 64 MiB /dev/shm but sees {n} GPU (`{g}`): NCCL has no local peer to share it with, and how many DataLoader workers the job runs is not in the spec; add the training script or config, or `df -h /dev/shm` from inside the container",
            c.name
        ));
    }
    let setting = match (c.shm.how, &c.shm.written) {
        ("default", _) if c.build_shm_size.is_some() => format!(
            "{source} `{}` sets shm_size {} under `build:`, which sizes only the image build's RUN steps; the running container has no shm size, --ipc=host or /dev/shm mount: the runtime's 64 MiB default",
            c.name,
            c.build_shm_size.as_deref().unwrap_or_default()
        ),
        ("default", _) => format!(
            "{source} `{}` sets no shm size, --ipc=host or /dev/shm mount: the runtime's 64 MiB default",
            c.name
        ),
        (how, Some(w)) => format!("{source} `{}`: {w} ({how})", c.name),
        (how, None) => format!("{source} `{}`: {how}", c.name),
    };
    let unknown = match gpus {
        Some((g, n)) if n != Some(0) && n != Some(1) => format!(
            "the container sees {}, whose NCCL ranks share /dev/shm on the node; the number of DataLoader workers and the batch size are not in the spec",
            match n {
                Some(n) => format!("{n} GPUs (`{g}`)"),
                // a parameter the workflow fills in when it is submitted
                None if crate::evidence::container_spec::is_templated(g) => {
                    format!("as many GPUs as `{g}` sets")
                }
                None => format!("all the host's GPUs (`{g}`)"),
            }
        ),
        _ => "the number of DataLoader workers and the batch size are not in the spec".to_string(),
    };
    let mut v = json!({
        "source": setting,
        "container": true,
        "error_seen": false,
        "file": file,
        "how": c.shm.how,
        "unknown": unknown,
    });
    if let Some(s) = c.shm.size_mib {
        v["size_mib"] = json!(s);
    }
    ProbeOutcome::Value(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_size_under_build_only_leaves_the_service_on_64_mib() {
        // ECMWFCode4Earth/wildfire-forecasting docker/docker-compose.yml at 915529e (h132):
        // shm_size under build: only; the same file after PR #24 sizes the service too (h132's
        // next artifact)
        let before = "services:\n  esowc-wildfire:\n    build:\n      context: ../\n      shm_size: '10gb'\n      dockerfile: docker/Dockerfile\n    init: true\n";
        let ProbeOutcome::Value(v) = from_container_spec(std::path::Path::new("c.yml"), before)
        else {
            panic!("judged")
        };
        assert_eq!(v["size_mib"], json!(64.0));
        assert!(v["source"].as_str().unwrap().contains("under `build:`"));
        let after = "services:\n  esowc-wildfire:\n    build:\n      context: ../\n      shm_size: '10gb'\n      dockerfile: docker/Dockerfile\n    shm_size: '10gb'\n";
        // (the service's own size is written: nothing else in the file shows a job, so it is
        // not judged, and not failed)
        assert!(matches!(
            from_container_spec(std::path::Path::new("c.yml"), after),
            ProbeOutcome::NotApplicable(_)
        ));
        // a web service built without any shm size is still no job
        let web = "services:\n  web:\n    build: .\n    ports: ['80:80']\n";
        assert!(matches!(
            from_container_spec(std::path::Path::new("c.yml"), web),
            ProbeOutcome::NotApplicable(_)
        ));
    }

    #[test]
    fn a_gpu_service_of_an_override_compose_file_is_not_judged_on_64_mib() {
        // mozilla-ai/lumigator docker-compose.gpu.override.yaml at 12f2f80b (h105): `ray` with
        // all GPUs and no shm setting, `backend` with environment variables only; the base
        // docker-compose.yaml it completes gives `ray` its 2g shm_size
        let t = "name: lumigator\n\nservices:\n  ray:\n    image: rayproject/ray:2.30.0-py311${COMPUTE_TYPE}${RAY_ARCH_SUFFIX}\n    runtime: nvidia\n    privileged: true\n    gpus: all\n\n  backend:\n    environment:\n      - RAY_WORKER_GPUS\n";
        let ProbeOutcome::Unknown(why) = from_container_spec(std::path::Path::new("c.yml"), t)
        else {
            panic!("judged");
        };
        assert!(why.contains("base compose file"), "{why}");
        // the file with `backend`'s image runs alone: the runtime's 64 MiB, as before
        let full = t.replace(
            "  backend:\n",
            "  backend:\n    image: mzdotai/lumigator:latest\n",
        );
        let ProbeOutcome::Value(v) = from_container_spec(std::path::Path::new("c.yml"), &full)
        else {
            panic!("not judged");
        };
        assert_eq!(v["size_mib"], json!(64.0));
    }

    #[test]
    fn a_vllm_serving_container_is_a_pytorch_job() {
        // local-inference-lab/blackwell-llm-docker examples/docker-compose-glm52-v19.yml at
        // 4704b6de (healthy), cut to the keys read: a vLLM image started by a shell script,
        // `gpus: all`, host IPC and a 32 GB shm_size
        let t = "services:\n  glm52:\n    image: ${IMAGE:-voipmonitor/vllm:gilded-gnosis-v19-vllm2152d08-b12xbc85ef3-fi801d57a-cu132-20260718}\n    entrypoint: [\"/usr/local/bin/serve-gilded-gnosis.sh\"]\n    network_mode: host\n    ipc: host\n    privileged: true\n    init: true\n    shm_size: 32gb\n    gpus: all\n";
        let ProbeOutcome::Value(v) = from_container_spec(std::path::Path::new("c.yml"), t) else {
            panic!("not judged");
        };
        assert_eq!(v["how"], json!("ipc-host"));
        // the same service without either setting keeps the runtime's 64 MiB for its TP ranks
        let bare = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    command: --model Qwen/Qwen3-8B --tensor-parallel-size 2\n    gpus: all\n";
        let ProbeOutcome::Value(v) = from_container_spec(std::path::Path::new("c.yml"), bare)
        else {
            panic!("not judged");
        };
        assert_eq!(v["size_mib"], json!(64.0));
        // a web server beside the GPUs is still no PyTorch job
        let web = "services:\n  web:\n    image: nginx:1.27\n    command: nginx -g 'daemon off;'\n    gpus: all\n";
        assert!(matches!(
            from_container_spec(std::path::Path::new("c.yml"), web),
            ProbeOutcome::NotApplicable(_)
        ));
    }

    #[test]
    fn a_gpu_count_left_to_a_parameter_is_judged_and_named() {
        // the finetuner template of github.com/coreweave/kubernetes-cloud (66bebd46), cut: the
        // GPU count is `{{workflow.parameters.trainer_gpus}}` and nothing mounts /dev/shm
        let t = "  - name: model-finetuner\n    podSpecPatch: |\n      containers:\n        - name: main\n          resources:\n            limits:\n              nvidia.com/gpu: \"{{workflow.parameters.trainer_gpus}}\"\n    container:\n      image: \"{{workflow.parameters.finetuner_image}}\"\n      command: [\"/usr/bin/bash\", \"-c\"]\n      args: [\"/usr/bin/python3 -m deepspeed.launcher.runner /app/finetuner.py\"]\n";
        let ProbeOutcome::Value(v) = from_container_spec(std::path::Path::new("wf.yaml"), t) else {
            panic!("not judged");
        };
        assert_eq!(v["size_mib"], json!(64.0));
        assert!(
            v["unknown"]
                .as_str()
                .unwrap()
                .contains("as many GPUs as `{{workflow.parameters.trainer_gpus}}` sets")
        );
    }

    #[test]
    fn data_mount_points() {
        assert!(is_data_mount_point("/data"));
        assert!(is_data_mount_point("/mnt/nvme"));
        assert!(is_data_mount_point("/workspace"));
        assert!(!is_data_mount_point("/"));
        assert!(!is_data_mount_point("/boot/efi"));
        assert!(!is_data_mount_point("/etc/hosts"));
        assert!(!is_data_mount_point("/home"));
        assert!(!is_data_mount_point("/var/lib/docker"));
    }
}
