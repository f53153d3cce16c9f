//! `seff JOBID`: Slurm's job-efficiency summary (the Perl script `contribs/seff/seff` in
//! SchedMD/slurm, read at 284c3b95f0, the script last changed in b29b556), which users paste
//! beside a slow or killed job. Its lines, as the script prints them:
//!
//! - `Job ID: N`, then `Array Job ID: N_I` for an array task, `Cluster: NAME`,
//!   `User/Group: U/G`, `State: STATE (exit code N)` (`State: RUNNING` with no exit code);
//! - `Cores: 1` for a one-core job, else `Nodes: N` and `Cores per node: N`;
//! - unless PENDING: `CPU Utilized: [D-]HH:MM:SS`,
//!   `CPU Efficiency: 12.34% of [D-]HH:MM:SS core-walltime` (`printf("CPU Efficiency: %.2f%% of
//!   %s core-walltime\n", …)`), `Job Wall-clock time: …`, `Memory Utilized: 1.23 GB` (older
//!   releases add ` (estimated maximum)`), `Memory Efficiency: 12.34% of 8.00 GB (4.00 GB/core)`
//!   (`/node` where memory was asked per node); a RUNNING job ends with a `WARNING:` line.
//!
//! Slurm's seff says nothing of GPUs. Sites extend it: CU Boulder Research Computing's seff
//! (documented in ResearchComputing/Documentation `docs/compute/monitoring-resources.md` at
//! 06876a8) prints its CPU lines under `──────── CPU Metrics ────────` and, for a GPU job,
//! `──────── GPU Metrics ────────` with `Number of GPUs: N`, `GPU Type: l40`,
//! `Max GPU Utilization: 41%` and `Max GPU Memory Utilized: 874.00 MiB`: the job's maximum of
//! Slurm's `gres/gpuutil` and `gres/gpumem` accounting (the same page's `sacct -o
//! TRESUsageInMax` example). Slurm samples `gres/gpuutil` in `src/plugins/gpu/nvml/gpu_nvml.c`
//! (`_get_gpuutil`): the job process's SM utilization from `nvmlDeviceGetProcessUtilization`,
//! added over the GPUs it uses; on a MIG device NVML gives none and the figure stays 0, and the
//! page warns that unsupported GPUs show zero or infinite values.
//!
//! What is read is the GPU section as the job's usage ([`SmiUsage`]): one entry standing for
//! the job's GPUs, whose utilization is the printed maximum. The mean over the run is at most
//! that maximum (and, the figure being a sum over the job's GPUs, each GPU's mean is at most it
//! too), so a low maximum says the GPUs were under it throughout, while a high one says nothing
//! of the mean: the entry is an upper bound, never a mean. A 0% (or infinite) maximum is the
//! figure of a GPU Slurm cannot measure (MIG, an unsupported card), not a reading, and is not
//! read. A summary with no GPU section (Slurm's own seff) yields no GPU.

use super::smi_tables::{SmiUsage, UsageGpu};

/// `Job ID: 64626` at a line's start (after the paste's indent).
fn job_id(line: &str) -> Option<&str> {
    let v = line.trim().strip_prefix("Job ID:")?.trim();
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'_')).then_some(v)
}

/// `CPU Efficiency: 35.68% of 00:07:20 core-walltime` or `Memory Efficiency: 1.71% of 7.84 GB
/// (3.92 GB/core)`: seff's two efficiency lines, a percent and `% of`.
fn efficiency(line: &str, key: &str) -> Option<f64> {
    let rest = line.trim().strip_prefix(key)?.trim();
    let (pct, _) = rest.split_once("% of ")?;
    pct.trim().parse::<f64>().ok()
}

/// True for seff's summary: its `Job ID:` line and, below it, its `CPU Efficiency: N% of …
/// core-walltime` or `Memory Efficiency: N% of …` line (the script's printf formats).
pub fn looks_like_seff(text: &str) -> bool {
    let mut id = false;
    for l in text.lines().take(60) {
        if job_id(l).is_some() {
            id = true;
        } else if id
            && ((efficiency(l, "CPU Efficiency:").is_some()
                && l.trim_end().ends_with("core-walltime"))
                || efficiency(l, "Memory Efficiency:").is_some())
        {
            return true;
        }
    }
    false
}

/// `874.00 MiB` / `1.2 GiB` / `30.5GB` -> MiB (powers of 1024, as the page's units are).
fn mib(v: &str) -> Option<f64> {
    let v = v.trim();
    let at = v.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = v.split_at(at);
    let n = n.trim().parse::<f64>().ok()?;
    let f = match unit.trim() {
        "KiB" | "KB" | "K" => 1.0 / 1024.0,
        "MiB" | "MB" | "M" => 1.0,
        "GiB" | "GB" | "G" => 1024.0,
        "TiB" | "TB" | "T" => 1048576.0,
        _ => return None,
    };
    Some(n * f)
}

/// The summary read as usage (see the module doc).
pub fn parse_seff(text: &str) -> Result<SmiUsage, super::ParseError> {
    if !looks_like_seff(text) {
        return Err(super::ParseError::NotThisKind(
            "no seff summary (`Job ID: N` then `CPU Efficiency: N% of … core-walltime`)",
        ));
    }
    let mut u = SmiUsage {
        format: "seff".into(),
        job_report: true,
        ..Default::default()
    };
    let (mut gpus, mut util, mut mem) = (None::<u32>, None::<f64>, None::<f64>);
    for l in text.lines() {
        let t = l.trim();
        if let Some(v) = t.strip_prefix("Number of GPUs:") {
            gpus = v.trim().parse().ok();
        } else if let Some(v) = t.strip_prefix("Max GPU Utilization:") {
            util = v
                .trim()
                .strip_suffix('%')
                .and_then(|n| n.trim().parse().ok());
        } else if let Some(v) = t.strip_prefix("Max GPU Memory Utilized:") {
            mem = mib(v);
        }
    }
    // 0 (or inf, NaN) is what Slurm keeps for a GPU it cannot measure, not an idle GPU
    let util = util.filter(|x| x.is_finite() && *x > 0.0);
    if gpus.is_some_and(|n| n > 0) || util.is_some() {
        u.gpus.push(UsageGpu {
            index: 0,
            name: Some(match gpus {
                Some(n) => format!("the job's {n} GPU(s), maximum over the run"),
                None => "the job's GPUs, maximum over the run".into(),
            }),
            util_gpu: util,
            util_gpu_max: util,
            memory_used_mib: mem.filter(|m| m.is_finite()),
            samples: 1,
            ..Default::default()
        });
    }
    u.samples = u.gpus.len();
    Ok(u)
}

const FIELDS: &[(&str, &str)] = &[
    ("format", "seff"),
    ("driver_version", "never printed by seff (null)"),
    ("cuda_version", "never printed by seff (null)"),
    (
        "gpus",
        "where a site's seff prints a GPU section (`Number of GPUs`, `Max GPU Utilization`, `Max GPU Memory Utilized`): one entry for the job's GPUs, its utilization the printed maximum over the run (an upper bound of the mean; a 0% or infinite figure, which Slurm keeps for a GPU it cannot measure, is not read); none for Slurm's own seff, which names no GPU",
    ),
    (
        "job_report",
        "true: the summary is the Slurm job's own, so the GPUs it counts host the job",
    ),
    (
        "processes_listed",
        "false: seff names the job, not its processes",
    ),
    ("processes", "none (seff names the job, not processes)"),
    ("samples", "GPU entries read"),
    ("truncated", "false"),
];

/// The registry entry (see [`super::EvidenceKind`]).
pub struct SeffKind;

impl super::EvidenceKind for SeffKind {
    fn name(&self) -> &'static str {
        "seff"
    }
    fn doc(&self) -> &'static str {
        "Slurm's `seff` job-efficiency summary (CPU and memory efficiency of one job), with a site's GPU section where it prints one (the job's maximum GPU utilization)"
    }
    fn example(&self) -> &'static str {
        "seff 64626"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_seff(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_seff(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::gpu_usage::usage_value;

    /// Slurm's own seff (the script's lines; a sample quoted in ai4d-iasc/trixie#105)
    const PLAIN: &str = "$ seff 64626\nJob ID: 64626\nCluster: stanage.alces.network\nUser/Group: a_user/clusterusers\nState: COMPLETED (exit code 0)\nNodes: 2\nCores per node: 1\nCPU Utilized: 00:02:37\nCPU Efficiency: 35.68% of 00:07:20 core-walltime\nJob Wall-clock time: 00:03:40\nMemory Utilized: 137.64 MB (estimated maximum)\nMemory Efficiency: 1.71% of 7.84 GB (3.92 GB/core)\n";

    /// CU Boulder's seff with its GPU section (their monitoring-resources page)
    const CURC: &str = "Job ID: 20522520\nCluster: alpine\nUser/Group: ralphie/ralphiegrp\nState: COMPLETED (exit code 0)\nNodes: 1\nCores per node: 21\n\n──────── CPU Metrics ────────\nCPU Utilized: 7-14:11:13\nCPU Efficiency: 75.77% of 10-00:27:21 core-walltime\nJob Wall-clock time: 11:27:01\nMemory Utilized: 21.25 GiB\nMemory Efficiency: 27.96% of 76.00 GiB (76.00 GiB/node)\n\n──────── GPU Metrics ────────\nNumber of GPUs: 1\nGPU Type: l40\nMax GPU Utilization: 41%\nMax GPU Memory Utilized: 874.00 MiB\n";

    #[test]
    fn slurm_s_own_summary_is_seff_with_no_gpu() {
        assert!(looks_like_seff(PLAIN));
        let u = parse_seff(PLAIN).unwrap();
        assert!(u.gpus.is_empty());
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], false, "{v}");
    }

    #[test]
    fn a_site_s_gpu_section_is_the_job_s_maximum() {
        let u = parse_seff(CURC).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, Some(41.0));
        assert_eq!(u.gpus[0].memory_used_mib, Some(874.0));
        let v = usage_value(&u, "x");
        assert_eq!(v["gpu_util"], 41.0, "{v}");
        // a figure over the whole run, not one moment
        assert_eq!(v["snapshot"], false, "{v}");
        // a busy job's maximum is read as it stands: high, no verdict of idleness
        let busy =
            parse_seff(&CURC.replace("Max GPU Utilization: 41%", "Max GPU Utilization: 100%"))
                .unwrap();
        assert_eq!(busy.gpus[0].util_gpu, Some(100.0));
    }

    #[test]
    fn a_zero_maximum_is_a_gpu_slurm_cannot_measure() {
        // MIG and unsupported cards keep gres/gpuutil at 0 (gpu_nvml.c, the CURC page's FAQ)
        let u = parse_seff(&CURC.replace("Max GPU Utilization: 41%", "Max GPU Utilization: 0%"))
            .unwrap();
        assert_eq!(u.gpus[0].util_gpu, None);
        let v = usage_value(&u, "x");
        assert!(v.get("gpu_util").is_none(), "{v}");
    }

    #[test]
    fn other_text_is_not_seff() {
        // jobstats' metadata has a Job ID but no efficiency line of seff's form
        assert!(!looks_like_seff(
            "         Job ID: 9446770\n  NetID/Account: kl5675/physics\n  CPU utilization  [||||||        12%]\n"
        ));
        // prose naming the fields
        assert!(!looks_like_seff(
            "seff shows CPU Efficiency: the share of core-walltime used.\nMy Job ID: is 12\n"
        ));
        // an efficiency line without the job's id above it
        assert!(!looks_like_seff(
            "CPU Efficiency: 35.68% of 00:07:20 core-walltime\n"
        ));
    }
}
