//! `gpu.usage`: what the GPUs were doing and which processes ran on them, from a pasted
//! `nvidia-smi` table, `--query-gpu`/`--query-compute-apps` CSV, `dmon` or `pmon`, `gpustat` or
//! `nvitop -1` given as
//! `--evidence`. The fields are generic (`gpu_util`, `process_on_gpu`) so a live reading of a
//! `--pid` window can fill the same ones.

use super::inputs::evidence_of;
use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::smi_tables::{self, SmiUsage, UsageGpu, UsageProcess};
use crate::evidence::{EvidenceKind, nvidia_smi};
use crate::vocab::nvml::{Field, NvmlReading};
use serde_json::{Map, Value, json};

pub struct GpuUsage;

/// Parts of one kind read from a paste: a long monitoring log cut into many parts is judged
/// from its first ones.
const MAX_PARTS: usize = 16;

/// Memory a job holds on a GPU when the paste lists no processes: a CUDA context alone costs
/// about 60-600 MiB and a desktop a few hundred more, so it takes a GiB to show a training job.
const HELD_MIB: f64 = 1024.0;

/// The same on a GPU whose `Disp.A` column says it drives a display: the display server, the
/// compositor and the desktop's own GPU processes (type `G` in the process list the paste does
/// not show) hold 1-1.5 GiB on their own (gpu-operator#607: an RTX 4090 driving a desktop at
/// 1198 MiB, P8, 6%), so a job there shows as twice the plain footprint.
const HELD_MIB_DISPLAY: f64 = 2048.0;

/// Memory the paste shows held on a GPU that lists no processes, enough to say a job has it.
fn holds_job_memory(g: &smi_tables::UsageGpu) -> bool {
    let Some(m) = g.memory_used_mib else {
        return false;
    };
    // A context alone (a notebook left open, a finished job's process) holds up to a few
    // hundred MiB at 0%; a training job holds GiBs. With no process list to say what holds the
    // memory, only a training-sized footprint counts as a job, and more on a display GPU.
    if g.display_active == Some(true) {
        m >= HELD_MIB_DISPLAY
    } else {
        m >= HELD_MIB
    }
}

/// A process that looks like a training job: Python or a launcher.
pub fn is_training_process(p: &UsageProcess) -> bool {
    if p.kind.starts_with('G') {
        return false;
    }
    let n = p.name.to_ascii_lowercase();
    [
        "python",
        "torchrun",
        "deepspeed",
        "accelerate",
        "pt_main_thread",
        "train",
        "ray::",
        "jupyter",
    ]
    .iter()
    .any(|k| n.contains(k))
}

const HELD: &str = "memory held (the paste lists no processes)";
const RESUMED: &str =
    "work resumed after idle samples (the paste lists no processes and no memory)";

/// Judges what one paste shows.
pub fn usage_value(u: &SmiUsage, source: &str) -> Value {
    let mut gpus = Vec::new();
    let mut busy_utils = Vec::new();
    // most readings of any GPU a job is on: 1 for a table or a single dmon/CSV sample
    let mut job_samples = 0usize;
    let mut evidence = None;
    for g in &u.gpus {
        let procs: Vec<&UsageProcess> = u
            .processes
            .iter()
            .filter(|p| p.gpu == Some(g.index) && is_training_process(p))
            .collect();
        // `-q` text is pasted in sections (`-q -d MEMORY,UTILIZATION`): memory without a
        // Processes section is no sign of a job there, only a listed process is
        // nor is it in a throwaway container's table, whose PID namespace holds no job
        let held = !u.processes_listed
            && !u.container_check
            && u.format != "q-text"
            && holds_job_memory(g);
        // nor memory: a time series whose work comes back after a sample of no kernel at all
        // shows something kept running on the GPU through the gap (see `work_resumed`). A
        // memory column that shows only a context's footprint says what holds the GPU, so
        // the series is read this way only where the paste prints no memory.
        let resumed = !u.processes_listed
            && !u.container_check
            && g.memory_used_mib.is_none()
            && g.work_resumed > 0;
        let hosts_job = !procs.is_empty() || held || resumed || u.job_report;
        if hosts_job {
            if let Some(x) = g.util_gpu {
                busy_utils.push(x);
                job_samples = job_samples.max(g.samples.max(1));
            }
            evidence.get_or_insert(if !procs.is_empty() {
                "a training process is listed"
            } else if u.job_report && u.format == "seff" {
                "the summary is of the job's own GPUs (seff)"
            } else if u.job_report && u.format == "jobinfo" {
                "the summary is of the job's own GPUs (jobinfo)"
            } else if u.job_report && u.format == "sacct-gpu-comment" {
                "the job comment is of the job's own GPUs (sacct_gpu)"
            } else if u.job_report {
                "the report is of the job's own GPUs (Slurm jobstats)"
            } else if held {
                HELD
            } else {
                RESUMED
            });
        }
        gpus.push(json!({
            "index": g.index,
            "name": g.name,
            "util_gpu": g.util_gpu,
            "util_gpu_max": g.util_gpu_max,
            "memory_used_mib": g.memory_used_mib,
            "memory_total_mib": g.memory_total_mib,
            "pstate": g.pstate,
            "hosts_job": hosts_job,
            "training_processes": procs.iter().map(|p| json!({"pid": p.pid, "name": p.name, "memory_mib": p.memory_mib})).collect::<Vec<_>>(),
        }));
    }
    let mut out = Map::new();
    out.insert("format".into(), json!(u.format));
    out.insert("samples".into(), json!(u.samples));
    out.insert("gpus".into(), Value::Array(gpus));
    out.insert("process_on_gpu".into(), json!(evidence.is_some()));
    if let Some(e) = evidence {
        out.insert("process_evidence".into(), json!(e));
    }
    let mut unavailable = Map::new();
    if busy_utils.is_empty() {
        if evidence.is_some() {
            unavailable.insert(
                "gpu_util".into(),
                json!("the paste shows no utilization figure for the GPUs the job is on"),
            );
        }
    } else {
        let mean = busy_utils.iter().sum::<f64>() / busy_utils.len() as f64;
        out.insert("gpu_util".into(), json!((mean * 10.0).round() / 10.0));
        out.insert("job_gpus".into(), json!(busy_utils.len()));
        // a job report's figures are means over the job's run, not one reading
        out.insert("snapshot".into(), json!(job_samples <= 1 && !u.job_report));
        out.insert(
            "job_inferred".into(),
            json!(evidence == Some(HELD) || evidence == Some(RESUMED)),
        );
    }
    if u.truncated {
        // a mean without the GPU the paste cut is a verdict from half a table
        out.remove("gpu_util");
        unavailable.insert(
            "gpu_util".into(),
            json!("input ends early: the last GPU row is cut"),
        );
    }
    out.insert("truncated".into(), json!(u.truncated));
    if !unavailable.is_empty() {
        out.insert("unavailable".into(), Value::Object(unavailable));
    }
    out.insert("file".into(), json!(source));
    Value::Object(out)
}

/// `nvidia-smi -q` text or `-x` XML as usage: each GPU's utilization and memory, and the
/// processes its Processes section names, all from the one reading the evidence parser made.
/// A GPU whose Processes section is present (even `None`) lists its processes; one without it
/// (a paste of other sections) names no job by its memory alone.
fn q_usage(r: &NvmlReading) -> SmiUsage {
    const MIB: f64 = 1024.0 * 1024.0;
    let mut u = SmiUsage {
        format: "q-text".into(),
        ..Default::default()
    };
    for g in &r.gpus {
        let util = g.utilization_gpu.ok().map(|v| f64::from(*v));
        // the driver's own samples (`-q -d UTILIZATION`) are a mean over its window: prefer
        // them to the instant reading, and count them as the samples they are
        let window = g.utilization_gpu_samples.as_ref().filter(|w| w.usable());
        u.gpus.push(UsageGpu {
            index: g.index,
            name: g.name.ok().cloned(),
            util_gpu: window.map(|w| f64::from(w.avg)).or(util),
            util_gpu_max: window
                .and_then(|w| w.max)
                .map(f64::from)
                .or(window.map(|w| f64::from(w.avg)))
                .or(util),
            memory_used_mib: g.memory_used.ok().map(|b| *b as f64 / MIB),
            memory_total_mib: g.memory_total.ok().map(|b| *b as f64 / MIB),
            pstate: g.pstate.ok().cloned(),
            samples: window
                .and_then(|w| w.samples)
                .map(|n| n.max(1) as usize)
                .unwrap_or(1),
            ..Default::default()
        });
        let listed = match &g.processes {
            Field::Ok(list) => list.as_slice(),
            Field::NotSupported => &[],
            _ => continue,
        };
        u.processes_listed = true;
        for p in listed {
            u.processes.push(UsageProcess {
                gpu: Some(g.index),
                pid: Some(p.pid),
                kind: smi_tables::process_type_letter(&p.kind).into(),
                name: p.name.clone().unwrap_or_default(),
                memory_mib: p.used_memory.map(|b| b as f64 / MIB),
                ..Default::default()
            });
        }
    }
    u.samples = u.gpus.len();
    u
}

impl Probe for GpuUsage {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "gpu.usage"
    }
    fn doc(&self) -> &'static str {
        "GPU utilization and the processes on each GPU, from a pasted nvidia-smi table, --query-gpu CSV, dmon, pmon, -q text, -x XML, gpustat, nvitop -1, a Slurm jobstats report or a seff summary with a GPU section (--evidence)"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("file", "the file read"),
            ("given", "false when no GPU table was given"),
            ("gpu_util", "mean utilization (%) of the GPUs a job is on"),
            (
                "process_on_gpu",
                "a training process (python, torchrun, ...) is on a GPU, or, where no processes are listed, a GPU holds job-sized memory (1 GiB or more: a CUDA context alone holds 60-600 MiB), or a time series that prints no memory shows work coming back after a sample at 0%, or the paste is a Slurm jobstats report or seff summary of the job's own GPUs",
            ),
            ("process_evidence", "why process_on_gpu is true"),
            ("job_gpus", "how many GPUs the job is on"),
            (
                "snapshot",
                "the paste holds one reading per GPU (a table, one dmon or CSV sample): it shows a moment, not a mean",
            ),
            (
                "job_inferred",
                "no training process is listed: the job is inferred from the memory its GPUs hold, or, where the paste prints no memory, from a time series whose work comes back after a sample at 0%",
            ),
            (
                "gpus",
                "[{index, name, util_gpu, util_gpu_max, memory_used_mib, memory_total_mib, pstate, hosts_job, training_processes}]",
            ),
            (
                "format",
                "table, query-csv, dmon, pmon, dcgmi-dmon, q-text (-q text and -x XML), gpustat, nvitop, jobstats, seff or sacct-gpu-comment",
            ),
            ("samples", "rows read"),
            ("truncated", "the paste ends inside a GPU row"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        type Usage = fn(&str) -> Result<smi_tables::SmiUsage, crate::evidence::ParseError>;
        // the kinds that show what GPUs were doing, each read into the usage they show
        let kinds: [(&dyn EvidenceKind, Usage); 11] = [
            (&smi_tables::Table, smi_tables::parse_table),
            (
                &crate::evidence::nvitop::NvitopKind,
                crate::evidence::nvitop::parse_nvitop,
            ),
            (
                &crate::evidence::gpustat::GpustatKind,
                crate::evidence::gpustat::parse_gpustat,
            ),
            (&smi_tables::QueryCsv, smi_tables::parse_query_csv),
            (&smi_tables::Monitor, smi_tables::parse_monitor),
            (&crate::evidence::dcgmi::DcgmiDmon, |t| {
                crate::evidence::dcgmi::parse_dmon(t)
                    .map(|d| crate::evidence::dcgmi::dmon_usage(&d))
            }),
            (&nvidia_smi::NvidiaSmiText, |t| {
                nvidia_smi::parse_nvidia_smi_text(t).map(|r| q_usage(&r))
            }),
            (&nvidia_smi::NvidiaSmiXml, |t| {
                nvidia_smi::parse_nvidia_smi_xml(t).map(|r| q_usage(&r))
            }),
            (
                &crate::evidence::jobstats::JobstatsKind,
                crate::evidence::jobstats::parse_jobstats,
            ),
            (
                &crate::evidence::seff::SeffKind,
                crate::evidence::seff::parse_seff,
            ),
            (
                &crate::evidence::sacct_gpu::SacctGpuKind,
                crate::evidence::sacct_gpu::parse_sacct_gpu,
            ),
        ];
        // A paste can hold several views of the GPUs (a table, then `dmon` or a `--query-gpu`
        // loop; its author's output beside another machine's idle table). Each part is read;
        // the first, in the order above, that shows a job on a GPU is judged, else the first
        // read at all: a view with no job on it says nothing about the one that has one.
        let mut first: Option<Value> = None;
        let mut failed: Option<String> = None;
        for (kind, usage) in kinds {
            for (p, t) in evidence_of(&ctx.inputs.evidence, kind)
                .into_iter()
                .take(MAX_PARTS)
            {
                match usage(&t) {
                    // a table's banner alone (the driver's versions) shows no GPU at work
                    Ok(u) if u.format == "table" && u.gpus.is_empty() && u.processes.is_empty() => {
                    }
                    Ok(u) => {
                        let v = usage_value(&u, &p.display().to_string());
                        if v["process_on_gpu"] == json!(true) {
                            return ProbeOutcome::Value(v);
                        }
                        first.get_or_insert(v);
                    }
                    Err(e) => {
                        failed.get_or_insert_with(|| format!("{}: {e}", p.display()));
                    }
                }
            }
        }
        match (first, failed) {
            (Some(v), _) => ProbeOutcome::Value(v),
            (None, Some(e)) => ProbeOutcome::Unknown(e),
            // no paste of GPU usage: a value that says so, so a rule can also read a live `--pid`
            (None, None) => ProbeOutcome::Value(json!({ "given": false, "process_on_gpu": false })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_at_zero_percent_is_a_job_on_an_idle_gpu() {
        let t = "|   0  GRID K520           On   | 00000000:00:03.0 Off |                  N/A |\n\
| N/A   30C    P8    17W / 125W |     46MiB /  4037MiB |      0%      Default |\n\
| Processes:                                                       GPU Memory |\n\
|    0      8351      C   /usr/bin/python3.6                            35MiB |\n";
        let u = smi_tables::parse_table(t).unwrap();
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(0.0));
    }

    #[test]
    fn q_text_names_the_python_process_at_low_utilization() {
        let t = "GPU 00000000:01:00.0\n    Product Name                          : NVIDIA RTX A5000\n    FB Memory Usage\n        Total                             : 24564 MiB\n        Used                              : 20112 MiB\n        Free                              : 4452 MiB\n    Utilization\n        GPU                               : 4 %\n        Memory                            : 1 %\n    Processes\n        GPU instance ID                   : N/A\n        Compute instance ID               : N/A\n        Process ID                        : 4242\n            Type                          : C\n            Name                          : python3\n            Used GPU Memory               : 20100 MiB\n";
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_text(t).unwrap();
        let v = usage_value(&q_usage(&r), "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(4.0));
        assert_eq!(v["job_inferred"], json!(false));
        // the same memory with no Processes section (a `-q -d MEMORY,UTILIZATION` paste) names
        // no job
        let sections = t.split("    Processes").next().unwrap();
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_text(sections).unwrap();
        let v = usage_value(&q_usage(&r), "x");
        assert_eq!(v["process_on_gpu"], json!(false));
        // a graphics process is no training job
        let xorg = t
            .replace(
                "Type                          : C",
                "Type                          : G",
            )
            .replace("python3", "Xorg");
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_text(&xorg).unwrap();
        assert_eq!(
            usage_value(&q_usage(&r), "x")["process_on_gpu"],
            json!(false)
        );
    }

    use crate::test_corpus as corpus;

    #[test]
    fn utilization_samples_stand_for_the_window_when_usable() {
        // `-q -d UTILIZATION` on the H200 during a healthy job (bench/capture_h200.sh): the
        // instant reading says 50 %, the driver's 71 samples over 14 s average 33 %
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_text(&corpus(
            "h200_smi_q_d_utilization_healthy.txt",
        ))
        .unwrap();
        assert_eq!(r.gpus[0].utilization_gpu, Field::Ok(50));
        let u = q_usage(&r);
        assert_eq!(u.gpus[0].util_gpu, Some(33.0));
        assert_eq!(u.gpus[0].util_gpu_max, Some(90.0));
        assert_eq!(u.gpus[0].samples, 71);
        // and while a num_workers=0 job starves it: 9 % over the window
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_text(&corpus(
            "h200_smi_q_d_utilization_starved.txt",
        ))
        .unwrap();
        assert_eq!(q_usage(&r).gpus[0].util_gpu, Some(9.0));
        // the paste lists no processes: no job is inferred from a -q section
        assert_eq!(
            usage_value(&q_usage(&r), "x")["process_on_gpu"],
            json!(false)
        );
        // a driver that printed its overflowed Duration made up Avg 0 % under Min 31 %: the
        // instant reading stands (public paste, gnome-shell-system-monitor-applet#356)
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_text(&corpus(
            "smi_q_d_utilization_samples.txt",
        ))
        .unwrap();
        assert_eq!(q_usage(&r).gpus[0].util_gpu, Some(38.0));
    }

    #[test]
    fn q_xml_names_its_processes_too() {
        let x = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n\t<attached_gpus>1</attached_gpus>\n\t<gpu id=\"00000000:01:00.0\">\n\t\t<product_name>NVIDIA L4</product_name>\n\t\t<fb_memory_usage>\n\t\t\t<total>23034 MiB</total>\n\t\t\t<used>21000 MiB</used>\n\t\t\t<free>2034 MiB</free>\n\t\t</fb_memory_usage>\n\t\t<utilization>\n\t\t\t<gpu_util>2 %</gpu_util>\n\t\t\t<memory_util>0 %</memory_util>\n\t\t</utilization>\n\t\t<processes>\n\t\t\t<process_info>\n\t\t\t\t<pid>777</pid>\n\t\t\t\t<type>C</type>\n\t\t\t\t<process_name>/usr/bin/python3</process_name>\n\t\t\t\t<used_memory>20990 MiB</used_memory>\n\t\t\t</process_info>\n\t\t</processes>\n\t</gpu>\n</nvidia_smi_log>\n";
        let r = crate::evidence::nvidia_smi::parse_nvidia_smi_xml(x).unwrap();
        let u = q_usage(&r);
        assert_eq!(u.processes.len(), 1);
        assert_eq!(u.processes[0].pid, Some(777));
        assert_eq!(u.processes[0].memory_mib, Some(20990.0));
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(2.0));
        assert_eq!(u.processes[0].name, "/usr/bin/python3");
    }

    #[test]
    fn an_idle_desktop_hosts_no_job() {
        let t = "|   0  GeForce GTX 1080    Off  | 00000000:01:00.0  On |                  N/A |\n\
| 28%   35C    P8    10W / 180W |    300MiB /  8119MiB |      1%      Default |\n\
| Processes:                                                       GPU Memory |\n\
|    0      1200      G   /usr/lib/xorg/Xorg                           200MiB |\n";
        let v = usage_value(&smi_tables::parse_table(t).unwrap(), "x");
        assert_eq!(v["process_on_gpu"], json!(false));
    }

    #[test]
    fn a_context_sized_allocation_without_a_process_list_is_no_job() {
        // an idle Ada card at P8 holding 77 MiB, and a display GPU holding 600 MiB
        for t in [
            "|   0  NVIDIA RTX 4000 Ada Gene...    On  |   00000000:47:00.0 Off |                  Off |\n\
| 30%   35C    P8              5W /  130W |      77MiB /  20475MiB |      0%      Default |\n",
            "|   0  GeForce GTX 1080    Off  | 00000000:01:00.0  On |                  N/A |\n\
| 28%   35C    P0    40W / 180W |    600MiB /  8119MiB |      1%      Default |\n",
        ] {
            let v = usage_value(&smi_tables::parse_table(t).unwrap(), "x");
            assert_eq!(v["process_on_gpu"], json!(false), "{t}");
        }
        // a context at P0 (67 MiB on a K80, 593 MiB on a V100) is not a job either: an open
        // notebook or a finished job's process holds that much at 0%
        for t in [
            "|   0  Tesla K80           On   | 00000000:00:1E.0 Off |                    0 |\n\
| N/A   64C    P0    66W / 149W |     67MiB / 11441MiB |      0%      Default |\n",
            "|   0  Tesla V100-PCIE...  Off  | 00000000:00:04.0 Off |                    0 |\n\
| N/A   34C    P0    35W / 250W |    593MiB / 16160MiB |      0%      Default |\n",
        ] {
            let v = usage_value(&smi_tables::parse_table(t).unwrap(), "x");
            assert_eq!(v["process_on_gpu"], json!(false), "{t}");
        }
    }

    #[test]
    fn a_process_list_cut_in_its_header_leaves_the_held_memory_to_speak() {
        // 23 GB held at 0%, the paste cut inside the Processes header (a real 3090 paste)
        let t = "|   0  GeForce RTX 3090    Off  | 00000000:01:00.0 Off |                  N/A |\n\
| 32%   32C    P8    23W / 350W |  23081MiB / 24245MiB |      0%      Default |\n\
+-------------------------------+----------------------+----------------------+\n\
| Processes:                                                                  |\n\
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n";
        let v = usage_value(&smi_tables::parse_table(t).unwrap(), "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["snapshot"], json!(true));
        assert_eq!(v["job_inferred"], json!(true));
    }

    #[test]
    fn a_throwaway_containers_table_names_no_job() {
        // ggml-org/whisper.cpp#2764: the poster's `docker run … nvidia-smi` check, 6 GiB held
        // by something outside that container
        let rows = "+-----------------------------------------------------------------------------+\n\
| NVIDIA-SMI 450.119.04   Driver Version: 450.119.04   CUDA Version: 11.0     |\n\
|   0  Tesla V100-SXM2...  On   | 00000000:06:00.0 Off |                    0 |\n\
| N/A   32C    P0    71W / 300W |   6216MiB / 32510MiB |      0%      Default |\n";
        let t = format!("$ docker run --gpus 1 --rm whisper_gpu:latest nvidia-smi\n{rows}");
        let u = smi_tables::parse_table(&t).unwrap();
        assert!(u.container_check);
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(false));
        // manzolo/openai-whisper-docker#3: the toolkit's check without a prompt
        let t =
            format!("docker run --gpus all nvidia/cuda:12.4.0-base-ubuntu20.04 nvidia-smi\n{rows}");
        assert!(smi_tables::parse_table(&t).unwrap().container_check);
        // problem kept: the same rows under the host's own nvidia-smi (or `docker exec` into the
        // job's container, whose namespace holds the job) still infer the job from the memory
        for t in [
            rows.to_string(),
            format!("$ nvidia-smi\n{rows}"),
            format!("$ docker exec -it trainer nvidia-smi\n{rows}"),
            format!("docker run --gpus all img python train.py && nvidia-smi\n{rows}"),
        ] {
            let u = smi_tables::parse_table(&t).unwrap();
            assert!(!u.container_check, "{t}");
            assert_eq!(usage_value(&u, "x")["job_inferred"], json!(true), "{t}");
        }
    }

    #[test]
    fn a_listed_process_is_no_inference_and_samples_make_a_mean() {
        let t = "|   0  GRID K520           On   | 00000000:00:03.0 Off |                  N/A |\n\
| N/A   30C    P8    17W / 125W |     46MiB /  4037MiB |      0%      Default |\n\
| Processes:                                                       GPU Memory |\n\
|    0      8351      C   /usr/bin/python3.6                            35MiB |\n";
        let v = usage_value(&smi_tables::parse_table(t).unwrap(), "x");
        assert_eq!(v["job_inferred"], json!(false));
        let csv =
            "index, memory.used [MiB], utilization.gpu [%]\n0, 6144 MiB, 36 %\n0, 6144 MiB, 30 %\n";
        let v = usage_value(&smi_tables::parse_query_csv(csv).unwrap(), "x");
        assert_eq!(v["snapshot"], json!(false));
        assert_eq!(v["gpu_util"], json!(33.0));
    }

    /// A GPU driving a display holds its desktop's memory: gpu-operator#607's RTX 4090 (corpus
    /// `h53_smi_gpuop607_rtx4090_driver_ctr`, Disp.A On, 1198 MiB at 6%, no process list) is no
    /// job; the same table with a training-sized footprint on that GPU is.
    #[test]
    fn a_display_gpu_needs_more_than_its_desktop_to_show_a_job() {
        let t = crate::test_corpus("h53_smi_gpuop607_rtx4090_driver_ctr.txt");
        let v = usage_value(&smi_tables::parse_table(&t).unwrap(), "x");
        assert_eq!(v["process_on_gpu"], json!(false), "{v}");
        let busy = t.replace("  1198MiB / 24564MiB", " 14198MiB / 24564MiB");
        assert_ne!(busy, t);
        let v = usage_value(&smi_tables::parse_table(&busy).unwrap(), "x");
        assert_eq!(v["process_on_gpu"], json!(true), "{v}");
    }

    /// A dmon or `--query-gpu` series that prints no memory shows a job where work comes back
    /// after a sample at 0 %: our H200's num_workers=0 job (sm 0, 47, 0, 47, 0) and
    /// mini-llms-playground's L4 at batch 1 are judged over their windows (the full bar); the
    /// healthy, idle and unexplained series of the corpus show no job.
    #[test]
    fn a_series_whose_work_comes_back_after_idle_shows_a_job() {
        let judge = |t: &str| usage_value(&smi_tables::parse_monitor(t).unwrap(), "x");
        for (name, mean) in [
            ("h200_smi_dmon_starved.txt", 18.8),
            ("h122_dmon_minillms_l4_bs1_bursty_idle_gaps.txt", 43.6),
        ] {
            let v = judge(&corpus(name));
            assert_eq!(v["process_on_gpu"], json!(true), "{name}");
            assert_eq!(v["job_inferred"], json!(true), "{name}");
            assert_eq!(v["snapshot"], json!(false), "{name}");
            assert_eq!(v["gpu_util"], json!(mean), "{name}");
        }
        for name in [
            "h200_smi_dmon_healthy.txt",
            "h200_smi_dmon_idle.txt",
            "h14_dmon_su_idle_zeros_telegraf.txt",
            "h64_dmon_fullbot_s_u_jpg_ofa.txt",
            "dmon_idle_header.txt",
        ] {
            assert_eq!(
                judge(&corpus(name))["process_on_gpu"],
                json!(false),
                "{name}"
            );
        }
        // the same series with a memory column: a context's footprint says what holds the GPU
        // (no job), a training-sized one names the job as before
        let fb = |mb: u32| {
            let rows: String = [0, 47, 0, 47, 0]
                .iter()
                .map(|sm| format!("    0  {sm:>5}     23  {mb:>6}\n"))
                .collect();
            judge(&format!(
                "# gpu     sm    mem     fb\n# Idx      %      %     MB\n{rows}"
            ))
        };
        assert_eq!(fb(300)["process_on_gpu"], json!(false));
        let v = fb(9000);
        assert_eq!(v["process_evidence"], json!(HELD));
        // pmon lists its processes: the list says what runs, not the series
        let pmon = "# gpu        pid  type    sm   mem   enc   dec   command\n\
# Idx          #   C/G     %     %     %     %   name\n\
    0       1200     G    40     1     -     -   Xorg\n\
    0       1200     G     0     0     -     -   Xorg\n\
    0       1200     G    40     1     -     -   Xorg\n";
        assert_eq!(judge(pmon)["process_on_gpu"], json!(false));
    }

    #[test]
    fn memory_held_without_a_process_list_counts() {
        let t = "|   0  Tesla V100-SXM2...  Off  | 00000000:40:00.0 Off |                    0 |\n\
| N/A   34C    P0    55W / 300W |   6671MiB / 16160MiB |      0%      Default |\n";
        let v = usage_value(&smi_tables::parse_table(t).unwrap(), "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(0.0));
    }
}
