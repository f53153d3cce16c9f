//! `jobinfo JOBID`: the job summary many Slurm sites print for a job and append to its output
//! file, written from its source: Anders Halager's `jobinfo` (2015) as kept by the University of
//! Groningen, rug-cit-hpc/slurm-jobinfo `jobinfo` (read at 043c763b, the script of 2015, and at
//! 3cbc069c, its later form). It combines `sacct` (and `sstat` for a running job) and prints
//! one line per field as `"%-20s: %s" % (desc, value)`, the field names of its `FIELDS` list:
//! `Job ID`, `Name`, `User`, `Partition`, `Nodes`, `Number of Nodes`, `Cores`, `State`,
//! `Submit`, `Start`, `End`, `Reserved walltime`, `Used walltime`, `Used CPU time` (later forms
//! add ` (efficiency: NN.NN%)`), `% User (Computation)`, `% System (I/O)`, `Mem reserved`,
//! `Max Mem used`, `Max Disk Write`, `Max Disk Read`. Sites add lines in the same form (HSUper's
//! `GPUs`, `Waited`, `Energy (CPU+Mem)` under a `#  Job Accounting  #` banner; GenomeDK's,
//! BIRC's and Gent's copies in their documentation). For a job of its `gpu` partition the later
//! script adds one `"%-20s: %.1f%% (%s)" % ('Average GPU usage', usage, node)` line per node: the
//! mean of the node exporter's `utilization_gpu` over the job's start to end, or `No GPU metrics
//! available (node)` where it has none.
//!
//! What is read is the summary as the job's usage ([`SmiUsage`]), as for `seff`: an `Average GPU
//! usage` line is one entry for that node's GPUs, its utilization the mean over the run (a
//! figure over the job's whole run, never one moment); a node without metrics gives none. A
//! summary without such a line (a CPU job, or a site's copy that prints no GPU figure) names no
//! GPU, so no GPU rule has anything to judge.

use super::smi_tables::{SmiUsage, UsageGpu};

/// The width `jobinfo` pads every field name to (`"%-20s: %s"`).
const WIDTH: usize = 20;

/// Field names the script prints and no other kind's `KEY: value` lines put at width 20:
/// the time and memory accounting of its `FIELDS` list.
const ACCOUNTING: &[&str] = &[
    "Reserved walltime",
    "Used walltime",
    "Used CPU time",
    "% User (Computation)",
    "% System (I/O)",
    "Mem reserved",
    "Max Mem used",
    "Max Disk Write",
    "Max Disk Read",
];

/// `(field, value)` of a `"%-20s: %s"` line: the name padded with spaces to 20 columns, then
/// `: ` (a paste's shared indent taken off first).
fn field(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let head = t.get(..WIDTH)?;
    let rest = t.get(WIDTH..)?;
    let value = rest.strip_prefix(": ").or_else(|| rest.strip_prefix(':'))?;
    let name = head.trim_end();
    // the name is printed as given and padded: never empty, never spaces inside the padding
    // followed by more text (`Name   x           `)
    (!name.is_empty() && !head[name.len()..].contains(|c: char| c != ' '))
        .then_some((name, value.trim_end()))
}

/// True for `jobinfo`'s summary: two or more of its accounting fields at its width.
pub fn looks_like_jobinfo(text: &str) -> bool {
    text.lines()
        .take(80)
        .filter_map(field)
        .filter(|(name, _)| ACCOUNTING.contains(name))
        .take(2)
        .count()
        == 2
}

/// `12.3% (pg-gpu01)`: the later script's mean GPU usage of one node over the job.
fn average_gpu_usage(value: &str) -> Option<(f64, &str)> {
    let (pct, node) = value.split_once("% (")?;
    let node = node.strip_suffix(')')?;
    let pct: f64 = pct.trim().parse().ok()?;
    (pct.is_finite() && (0.0..=100.0).contains(&pct) && !node.is_empty()).then_some((pct, node))
}

/// The summary read as usage (see the module doc).
pub fn parse_jobinfo(text: &str) -> Result<SmiUsage, super::ParseError> {
    if !looks_like_jobinfo(text) {
        return Err(super::ParseError::NotThisKind(
            "no jobinfo summary (`Used CPU time       : …`-style lines padded to 20 columns)",
        ));
    }
    let mut u = SmiUsage {
        format: "jobinfo".into(),
        job_report: true,
        ..Default::default()
    };
    for (name, value) in text.lines().filter_map(field) {
        if name != "Average GPU usage" || u.gpus.len() >= super::MAX_ITEMS {
            continue;
        }
        if let Some((pct, node)) = average_gpu_usage(value) {
            u.gpus.push(UsageGpu {
                index: u.gpus.len() as u32,
                name: Some(format!("{node}'s GPUs, mean over the job")),
                util_gpu: Some(pct),
                samples: 1,
                ..Default::default()
            });
        }
    }
    u.samples = u.gpus.len();
    Ok(u)
}

const FIELDS: &[(&str, &str)] = &[
    ("format", "jobinfo"),
    ("driver_version", "never printed by jobinfo (null)"),
    ("cuda_version", "never printed by jobinfo (null)"),
    (
        "gpus",
        "per `Average GPU usage   : N% (node)` line (the later script, for a GPU partition's job): that node's GPUs, their utilization the mean over the job's run; none where the summary prints no GPU figure (a CPU job, a site's copy without it, `No GPU metrics available`)",
    ),
    (
        "job_report",
        "true: the summary is the Slurm job's own, so the GPUs it names host the job",
    ),
    (
        "processes_listed",
        "false: jobinfo names the job, not its processes",
    ),
    ("processes", "none (jobinfo names the job, not processes)"),
    ("samples", "GPU entries read"),
    ("truncated", "false"),
];

/// The registry entry (see [`super::EvidenceKind`]).
pub struct JobinfoKind;

impl super::EvidenceKind for JobinfoKind {
    fn name(&self) -> &'static str {
        "slurm-jobinfo"
    }
    fn doc(&self) -> &'static str {
        "the `jobinfo` job summary many Slurm sites print and append to a job's output (walltime, CPU time and efficiency, memory, disk), with the mean GPU usage per node where the site's script prints it"
    }
    fn example(&self) -> &'static str {
        "jobinfo 11983512"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_jobinfo(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_jobinfo(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::gpu_usage::usage_value;

    /// HSUper's accounting page: the block its jobinfo appends to every job (h117)
    const HSUPER: &str = "########################################\n#            Job Accounting            #\n########################################\nName                : my-job-name\nUser                : myuser\nAccount             : hsuper\nPartition           : small\nQOS                 : normal\nNNodes              : 1\nNodes               : node0267\nCores               : 144 (72 physical)\nGPUs                : 0\nState               : COMPLETED\nExitCode            : 0:0\nSubmit              : 2024-02-29T14:28:30\nStart               : 2024-02-29T14:28:31\nEnd                 : 2024-02-29T17:55:27\nWaited              :    00:00:01\nReserved walltime   :  1-00:00:00\nUsed walltime       :    03:26:56\nUsed CPU time       : 10-07:02:27 (Efficiency: 99.48%)\n% User (Computation): 99.91%\n% System (I/O)      :  0.09%\nMem reserved        : 245000M\nMax Mem used        : 205.48M (node0267)\nMax Disk Write      : 16.36M (node0267)\nMax Disk Read       : 1.14M (node0267)\nEnergy (CPU+Mem)    : 2.26kWh (0.95kg CO2, 1.17€)\n";

    /// the 2015 script's README example, indented four spaces as the README shows it
    const README: &str = "    [aeh@fe1 ~]$ jobinfo 11983512\n    Name                : bash\n    User                : aeh\n    Partition           : normal\n    Nodes               : s02n[45-48,51-53]\n    Cores               : 50\n    State               : FAILED\n    Reserved walltime   : 2-00:00:00\n    Used walltime       :   00:02:51\n    Used CPU time       :   00:00:59\n    % User (Computation): 83.22%\n    % System (I/O)      : 16.78%\n    Mem reserved        : 100M/node\n";

    #[test]
    fn a_cpu_job_s_summary_is_read_with_no_gpu() {
        for t in [HSUPER, README] {
            assert!(looks_like_jobinfo(t), "{t}");
            let u = parse_jobinfo(t).unwrap();
            assert!(u.job_report && u.gpus.is_empty());
            let v = usage_value(&u, "x");
            assert_eq!(v["process_on_gpu"], false, "{v}");
        }
    }

    #[test]
    fn the_later_script_s_gpu_lines_are_the_job_s_mean() {
        let t = format!(
            "{README}Average GPU usage   : 23.4% (pg-gpu01)\nAverage GPU usage   : No GPU metrics available (pg-gpu02)\n"
        );
        let u = parse_jobinfo(&t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, Some(23.4));
        assert!(u.gpus[0].name.as_deref().unwrap().starts_with("pg-gpu01"));
        let v = usage_value(&u, "x");
        assert_eq!(v["gpu_util"], 23.4, "{v}");
        assert_eq!(v["snapshot"], false, "{v}");
        // a figure outside 0-100 or without its node is not the script's
        assert!(average_gpu_usage("123.0% (n1)").is_none());
        assert!(average_gpu_usage("12.0%").is_none());
    }

    #[test]
    fn other_key_value_text_is_not_jobinfo() {
        // seff's lines are `Key: value` without the padding
        assert!(!looks_like_jobinfo(
            "Job ID: 64626\nCPU Utilized: 00:02:37\nCPU Efficiency: 35.68% of 00:07:20 core-walltime\nJob Wall-clock time: 00:03:40\n"
        ));
        // USC's job summary pads to 21 columns and words its fields otherwise
        assert!(!looks_like_jobinfo(
            "Used CPU time        : 00:35:18\nCPU efficiency       : 97.37%\n% User (computation) : 96.35%\n% System (I/O)       :  3.65%\n"
        ));
        // one accounting field alone, and prose naming the fields
        assert!(!looks_like_jobinfo("Used walltime       : 00:02:51\n"));
        assert!(!looks_like_jobinfo(
            "jobinfo prints Used CPU time and % User (Computation) for every job.\n"
        ));
        // nvidia-smi -q's `Key : value` lines pad to other widths
        assert!(!looks_like_jobinfo(
            "    Product Name                          : NVIDIA A100-SXM4-80GB\n    Persistence Mode                      : Enabled\n"
        ));
    }
}
