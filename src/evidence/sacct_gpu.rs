//! The GPU statistics a site's epilog writes into a Slurm job's `Comment` field, which users
//! read back with `sacct -j JOBID -o comment -p` (or `-o JobID,Comment`): the JSON of Aalto
//! University's `ansible-role-sacct_gpu` (github.com/AaltoSciComp/ansible-role-sacct_gpu,
//! author mhakala; read at 229d9a2 for `files/gpu_stat.py` and a05d5f9 for `files/jobinfo.py`,
//! and NAU HPC's fork nauhpc/ansible-role-sacct_gpu at 209cbf3, which adds `gpu_power`), as
//! Triton's documentation shows it (AaltoSciComp/scicomp-docs,
//! `triton/examples/monitoring/gpu.rst` at 44afdaa):
//!
//! ```text
//! {"gpu_util": 99.0, "gpu_mem_max": 1279.0, "gpu_power": 204.26, "ncpu": 1, "ngpu": 1}|
//! ```
//!
//! What the producer computes (`gpu_stat.py`, run by a timer every minute on each GPU node,
//! then `jobinfo.py` in the epilog prints the job's entry, its `step` counter deleted, and the
//! epilog sets it as the job's comment):
//!
//! - `ngpu`: the GPUs the job asked for, from `scontrol -o show job`'s `Gres=gpu[:type]:N`
//!   (the NAU fork reads `TRES=…gres/gpu…`); 0 when it names none;
//! - `gpu_util`: at each sample, for every GPU whose `nvidia-smi -q -x` process list holds a
//!   process of the job (its cgroup's `job_N`), that GPU's `gpu_util` divided by `ngpu`, summed
//!   (so a GPU the job asked for but never used counts as 0%); then the running mean over the
//!   samples: the job's mean GPU utilization over its run, in percent;
//! - `gpu_mem_max`: the largest `used_memory` (MiB) the job's processes held on one GPU at
//!   any sample;
//! - `gpu_power` (the NAU fork, and Triton's later role): the mean over the samples of the
//!   power drawn by the job's GPUs (W);
//! - `ncpu`: `NumCPUs` of the job. Multi-node jobs are dropped (no entry, no comment).
//!
//! What is read is each such object (alone on a line, or a `|`-separated field of a parsable
//! sacct row, after the row's job id where the paste has one) as the usage of one job's GPUs
//! ([`SmiUsage::job_report`]): one entry per job with `ngpu` above 0, its utilization the
//! mean over the run. A job whose `ngpu` is 0 asked for no GPU the role counts, and its 0% is
//! no reading: it is not read.

use super::smi_tables::{SmiUsage, UsageGpu};
use serde_json::Value;

/// One comment object: the job's id where the row gives it, and the role's fields.
#[derive(Debug, Clone, PartialEq)]
struct Comment {
    job: Option<String>,
    gpu_util: f64,
    ngpu: f64,
    gpu_mem_max: Option<f64>,
}

/// `{"gpu_util": …, "ngpu": …, …}`: an object holding the role's two numeric keys.
fn comment_object(field: &str) -> Option<(f64, f64, Option<f64>)> {
    let f = field.trim();
    if !(f.starts_with('{') && f.ends_with('}') && f.contains("\"gpu_util\"")) {
        return None;
    }
    let v: Value = serde_json::from_str(f).ok()?;
    let num = |k: &str| v.get(k).and_then(Value::as_f64).filter(|x| x.is_finite());
    Some((num("gpu_util")?, num("ngpu")?, num("gpu_mem_max")))
}

/// A line holding a comment object, alone or as a field of a parsable sacct row (`ID|…|`).
fn comment_line(line: &str) -> Option<Comment> {
    let t = line.trim();
    let fields: Vec<&str> = t.split('|').collect();
    for (i, f) in fields.iter().enumerate() {
        if let Some((gpu_util, ngpu, gpu_mem_max)) = comment_object(f) {
            let first = fields[0].trim();
            let job = (i > 0 && super::sacct::is_job_id(first)).then(|| first.to_string());
            return Some(Comment {
                job,
                gpu_util,
                ngpu,
                gpu_mem_max,
            });
        }
    }
    None
}

/// True when a line holds the role's comment object.
pub fn looks_like_sacct_gpu(text: &str) -> bool {
    text.lines().take(200).any(|l| comment_line(l).is_some())
}

/// The comments read as usage (see the module doc).
pub fn parse_sacct_gpu(text: &str) -> Result<SmiUsage, super::ParseError> {
    let comments: Vec<Comment> = super::scan::lines(text)
        .take(20_000)
        .filter_map(comment_line)
        .collect();
    if comments.is_empty() {
        return Err(super::ParseError::NotThisKind(
            "no job comment of sacct_gpu's JSON (`{\"gpu_util\": …, \"ngpu\": …}`)",
        ));
    }
    let mut u = SmiUsage {
        format: "sacct-gpu-comment".into(),
        job_report: true,
        ..Default::default()
    };
    for c in comments.iter().filter(|c| c.ngpu > 0.0) {
        if u.gpus.len() >= super::MAX_ITEMS {
            break;
        }
        let n = c.ngpu.round() as u64;
        let name = match &c.job {
            Some(j) => format!("job {j}: its {n} GPU(s), mean over the run"),
            None => format!("the job's {n} GPU(s), mean over the run"),
        };
        u.gpus.push(UsageGpu {
            index: u.gpus.len() as u32,
            name: Some(name),
            util_gpu: Some(c.gpu_util),
            memory_used_mib: c.gpu_mem_max,
            samples: 1,
            ..Default::default()
        });
    }
    u.samples = u.gpus.len();
    Ok(u)
}

const FIELDS: &[(&str, &str)] = &[
    ("format", "sacct-gpu-comment"),
    ("driver_version", "never printed in the comment (null)"),
    ("cuda_version", "never printed in the comment (null)"),
    (
        "gpus",
        "one entry per job comment whose ngpu is above 0: the job's mean GPU utilization over its run (gpu_util: each sample's utilization of the job's GPUs over ngpu, averaged over the samples) and the most memory (MiB) its processes held on one GPU (gpu_mem_max); a comment with ngpu 0 is not read",
    ),
    (
        "job_report",
        "true: the comment is written per Slurm job from the GPUs its processes use, so each entry hosts the job, and its figures are means over the run",
    ),
    (
        "processes_listed",
        "false: the comment names the job, not its processes",
    ),
    (
        "processes",
        "none (the comment names the job, not processes)",
    ),
    ("samples", "GPU entries read"),
    ("truncated", "false"),
];

/// The registry entry (see [`super::EvidenceKind`]).
pub struct SacctGpuKind;

impl super::EvidenceKind for SacctGpuKind {
    fn name(&self) -> &'static str {
        "sacct-gpu-comment"
    }
    fn doc(&self) -> &'static str {
        "the GPU statistics a site's epilog (Aalto's ansible-role-sacct_gpu) writes into a Slurm job's comment, read back with sacct -o comment: the job's mean GPU utilization, most GPU memory, GPUs and CPUs"
    }
    fn example(&self) -> &'static str {
        "sacct -j 64626 -o comment -p"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_sacct_gpu(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_sacct_gpu(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::gpu_usage::usage_value;
    use serde_json::json;

    #[test]
    fn triton_s_comment_is_the_job_s_mean_over_the_run() {
        // healthy: AaltoSciComp/scicomp-docs triton/examples/monitoring/gpu.rst at 44afdaa
        // (corpus h153_sacct_aalto_…), a 1-GPU job at 99%
        let t = crate::test_corpus("h153_sacct_aalto_triton_comment_json_gpu_util_99.txt");
        assert!(looks_like_sacct_gpu(&t));
        let u = parse_sacct_gpu(&t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, Some(99.0));
        assert_eq!(u.gpus[0].memory_used_mib, Some(1279.0));
        assert_eq!(
            u.gpus[0].name.as_deref(),
            Some("the job's 1 GPU(s), mean over the run")
        );
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(99.0));
        assert_eq!(v["snapshot"], json!(false));
    }

    #[test]
    fn rows_with_job_ids_and_a_job_without_gpus() {
        // `sacct -o JobID,Comment -p` as print_fields prints it (`|` after each field), the
        // objects as jobinfo.py's json.dumps writes them: a 2-GPU job at 12%, a CPU job
        // (ngpu 0: the role counts no GPU and its 0 is no reading)
        let t = "JobID|Comment|\n4242|{\"gpu_util\": 12.5, \"gpu_mem_max\": 30517.0, \"ngpu\": 2, \"ncpu\": 8}|\n4242.batch||\n4243|{\"gpu_util\": 0, \"gpu_mem_max\": 0, \"ngpu\": 0, \"ncpu\": 4}|\n";
        let u = parse_sacct_gpu(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(
            u.gpus[0].name.as_deref(),
            Some("job 4242: its 2 GPU(s), mean over the run")
        );
        assert_eq!(u.gpus[0].util_gpu, Some(12.5));
        assert_eq!(usage_value(&u, "x")["gpu_util"], json!(12.5));
    }

    #[test]
    fn other_json_and_prose_are_not_a_comment() {
        // a comment without the role's keys (an Azure prolog's `sku=…` string, other JSON)
        assert!(!looks_like_sacct_gpu(
            "4242|sku=Standard_ND96asr_v4,region=eastus|\n"
        ));
        assert!(!looks_like_sacct_gpu(
            "{\"gpu_util\": \"high\", \"ngpu\": 1}\n"
        ));
        assert!(!looks_like_sacct_gpu(
            "The comment holds gpu_util and ngpu for each job.\n"
        ));
        assert!(parse_sacct_gpu("{\"util\": 3.0, \"mem\": 1.0, \"ngpu\": 1}\n").is_err());
    }
}
