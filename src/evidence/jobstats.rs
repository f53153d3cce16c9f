//! Princeton's `jobstats` report of one Slurm job (github.com/PrincetonUniversity/jobstats),
//! the summary clusters that run it mail at a job's end and print with `jobstats JOBID`; users
//! paste it when their GPUs sit idle. Read from the producer's own printing code,
//! `output_formatters.py` at dfc9aa0 (`ClassicOutput.output`, `output_metadata`,
//! `output_overall_gpu_util`, `draw_meter`):
//!
//! - a banner: a rule of `=`, `Slurm Job Statistics` centred in 80 columns, a rule;
//! - the metadata, right-aligned keys: `Job ID: N`, `User/Account: u/a` (`NetID/Account` in
//!   older releases), `Job Name`, `State`, `Nodes`, `CPU Cores`, `CPU Memory`, `GPUs: N` (only
//!   for a job with GPUs), `QOS/Partition`, `Cluster`, `Start Time`, `Run Time: H:MM:SS[ (in
//!   progress)]`, `Time Limit`;
//! - `Overall Utilization`: `  CPU utilization  [|||…   12%]`, `  CPU memory usage [...]`, and
//!   for a GPU job `  GPU utilization  [||||…   33%]` and `  GPU memory usage [...]`: a meter
//!   of 50 columns, one `|` per 2 percent, the percent printed at its end (`draw_meter`). The
//!   GPU figure is the mean over the job's GPUs of each GPU's mean utilization over the run
//!   (`gpu_utilization = overall / overall_gpu_count`), from the job's Prometheus series;
//!   a MIG job or one without data prints `GPU utilization is unknown…` in the brackets, or
//!   `(Value is unknown)`;
//! - `Detailed Utilization`: `  GPU utilization per node`, then one `    NODE (GPU I): U%`
//!   per GPU of the job (`0%` followed by `<-- GPU was not used`), and `  GPU memory usage per
//!   node - maximum used/total` with `    NODE (GPU I): 30.9GB/40.0GB (77.2%)`
//!   (`human_bytes`: powers of 1024);
//! - `Notes`, then (optionally) the batch script.
//!
//! What is read is the GPU utilization as usage ([`SmiUsage`]): one GPU per `NODE (GPU I)`
//! line of the detailed section with its utilization and maximum memory, or, where the paste
//! stops before that section, the job's overall figure as one entry standing for all its GPUs.
//! The report is the job's own GPUs (jobstats selects the series by the Slurm job id), so every
//! GPU it lists hosts the job ([`SmiUsage::job_report`]), and its figures are means over the
//! run, not one moment.

use super::smi_tables::{SmiUsage, UsageGpu};

/// The banner's title, a line of its own.
const TITLE: &str = "Slurm Job Statistics";

/// True for the report's head: the banner's title alone on a line and its overall section
/// (or the metadata's `Job ID:`), as `ClassicOutput.output` prints them.
pub fn looks_like_jobstats(text: &str) -> bool {
    let mut title = false;
    for l in text.lines().take(60) {
        let t = l.trim();
        if t == TITLE {
            title = true;
        } else if title
            && (t.starts_with("Job ID:")
                || t == "Overall Utilization"
                || t.starts_with("GPU utilization  [")
                || t.starts_with("CPU utilization  ["))
        {
            return true;
        }
    }
    false
}

/// `  GPU utilization  [||||||||||||||||                               33%]` -> 33.
fn overall_gpu_util(line: &str) -> Option<f64> {
    let rest = line.trim().strip_prefix("GPU utilization")?.trim_start();
    let inner = rest.strip_prefix('[')?.strip_suffix(']')?;
    let pct = inner.trim_end().strip_suffix('%')?;
    let num = pct.rsplit([' ', '|']).next()?;
    num.parse::<f64>().ok()
}

/// `    della-l01g2 (GPU 0): 33.0%` (or `0% <-- GPU was not used`) -> (node, gpu, percent).
/// A line naming no percent (`GPU utilization is unknown`) gives None for it.
fn per_gpu_line(line: &str) -> Option<(String, u32, Option<f64>)> {
    let t = line.trim();
    let (node, rest) = t.split_once(" (GPU ")?;
    let (idx, rest) = rest.split_once("): ")?;
    let idx = idx.parse::<u32>().ok()?;
    if node.is_empty() || node.contains(' ') {
        return None;
    }
    let first = rest.split_whitespace().next().unwrap_or("");
    let util = first.strip_suffix('%').and_then(|n| n.parse::<f64>().ok());
    Some((node.to_string(), idx, util))
}

/// `30.9GB/40.0GB (77.2%)` -> (used MiB, total MiB), `human_bytes`' units being powers of 1024.
fn used_total_mib(rest: &str) -> Option<(f64, f64)> {
    let mib = |s: &str| -> Option<f64> {
        let s = s.trim();
        let at = s.find(|c: char| c.is_ascii_alphabetic())?;
        let (n, unit) = s.split_at(at);
        let n = n.parse::<f64>().ok()?;
        let f = match unit {
            "B" => 1.0 / 1048576.0,
            "KB" => 1.0 / 1024.0,
            "MB" => 1.0,
            "GB" => 1024.0,
            "TB" => 1048576.0,
            _ => return None,
        };
        Some(n * f)
    };
    let pair = rest.split_whitespace().next()?;
    let (u, t) = pair.split_once('/')?;
    Some((mib(u)?, mib(t)?))
}

/// The report read as usage (see the module doc).
pub fn parse_jobstats(text: &str) -> Result<SmiUsage, super::ParseError> {
    if !looks_like_jobstats(text) {
        return Err(super::ParseError::NotThisKind(
            "no `Slurm Job Statistics` banner",
        ));
    }
    let mut u = SmiUsage {
        format: "jobstats".into(),
        job_report: true,
        ..Default::default()
    };
    let mut overall = None;
    let mut gpus_line: Option<u32> = None;
    // the detailed section being read: utilization or memory lines
    let mut section = "";
    for l in text.lines() {
        let t = l.trim();
        if let Some(n) = t.strip_prefix("GPUs:") {
            gpus_line = n.trim().parse().ok();
        } else if t.starts_with("GPU utilization  ") || t.starts_with("GPU utilization [") {
            overall = overall.or(overall_gpu_util(t));
        } else if t == "GPU utilization per node" {
            section = "util";
        } else if t.starts_with("GPU memory usage per node") {
            section = "mem";
        } else if t.is_empty() || !l.starts_with("    ") {
            section = "";
        } else if let Some((node, idx, util)) = per_gpu_line(t) {
            let name = format!("{node} (GPU {idx})");
            match section {
                "util" => {
                    let index = u.gpus.len() as u32;
                    u.gpus.push(UsageGpu {
                        index,
                        name: Some(name),
                        util_gpu: util,
                        util_gpu_max: util,
                        samples: 1,
                        ..Default::default()
                    });
                }
                "mem" => {
                    let rest = t.split_once("): ").map(|(_, r)| r).unwrap_or("");
                    if let Some(g) = u.gpus.iter_mut().find(|g| g.name.as_deref() == Some(&name))
                        && let Some((used, total)) = used_total_mib(rest)
                    {
                        g.memory_used_mib = Some(used);
                        g.memory_total_mib = Some(total);
                    }
                }
                _ => {}
            }
        }
    }
    if u.gpus.is_empty()
        && let Some(x) = overall
    {
        u.gpus.push(UsageGpu {
            index: 0,
            name: Some(match gpus_line {
                Some(n) => format!("the job's {n} GPU(s), overall"),
                None => "the job's GPUs, overall".into(),
            }),
            util_gpu: Some(x),
            util_gpu_max: Some(x),
            samples: 1,
            ..Default::default()
        });
    }
    u.samples = u.gpus.len();
    Ok(u)
}

const FIELDS: &[(&str, &str)] = &[
    ("format", "jobstats"),
    ("driver_version", "never printed by jobstats (null)"),
    ("cuda_version", "never printed by jobstats (null)"),
    (
        "gpus",
        "per `NODE (GPU I)` line of the detailed section: its mean utilization over the run and its maximum memory used/total (MiB); where the paste stops before that section, one entry for the job's overall GPU utilization",
    ),
    (
        "job_report",
        "true: the report is the Slurm job's own GPUs, so each GPU it lists hosts the job, and its figures are means over the run",
    ),
    (
        "processes_listed",
        "false: jobstats names the job, not its processes",
    ),
    ("processes", "none (jobstats names the job, not processes)"),
    ("samples", "GPU entries read"),
    ("truncated", "false: a cut meter or GPU line is not read"),
];

/// The registry entry (see [`super::EvidenceKind`]).
pub struct JobstatsKind;

impl super::EvidenceKind for JobstatsKind {
    fn name(&self) -> &'static str {
        "jobstats"
    }
    fn doc(&self) -> &'static str {
        "Princeton jobstats' report of one Slurm job: its CPU and GPU utilization over the run, overall and per GPU"
    }
    fn example(&self) -> &'static str {
        "jobstats 9446770"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_jobstats(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_jobstats(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::gpu_usage::usage_value;
    use serde_json::json;

    #[test]
    fn a_report_cut_before_its_detail_is_the_job_s_overall_figure() {
        // problem: github.com/gnn-tracking/gnn_tracking/issues/95, a 2-node 8-GPU job at 33%
        // (an older release: `NetID/Account`)
        let t = crate::test_corpus("h101_jobstats_gnntracking95_gpu_33pct.txt");
        assert!(looks_like_jobstats(&t));
        let u = parse_jobstats(&t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(u.gpus[0].util_gpu, Some(33.0));
        assert_eq!(
            u.gpus[0].name.as_deref(),
            Some("the job's 8 GPU(s), overall")
        );
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(33.0));
        assert_eq!(v["snapshot"], json!(false));
        assert_eq!(v["job_inferred"], json!(false));
    }

    #[test]
    fn the_detailed_section_gives_each_gpu() {
        // the layout `ClassicOutput.output` prints (output_formatters.py at dfc9aa0), a job
        // whose second GPU did nothing (healthy first GPU)
        let t = "\n================================================================================\n                              Slurm Job Statistics\n================================================================================\n         Job ID: 1234567\n   User/Account: aturing/cs\n       Job Name: train.sh\n          State: COMPLETED\n          Nodes: 1\n      CPU Cores: 8\n     CPU Memory: 64GB (8GB per CPU-core)\n           GPUs: 2\n  QOS/Partition: gpu-short/gpu\n        Cluster: della\n     Start Time: Mon Mar 4, 2024 at 9:01 AM\n       Run Time: 02:00:00\n     Time Limit: 04:00:00\n\n                              Overall Utilization\n================================================================================\n  CPU utilization  [|||||||||||||||||||||||||||||||||||||          74%]\n  CPU memory usage [|||||||                                        15%]\n  GPU utilization  [||||||||||||||||||||||                         45%]\n  GPU memory usage [||||||||||||||||||                             37%]\n\n                              Detailed Utilization\n================================================================================\n  CPU utilization per node (CPU time used/run time)\n      della-l01g2: 11:50:00/16:00:00 (efficiency=74.0%)\n\n  CPU memory usage per node - used/allocated\n      della-l01g2: 9.6GB/64.0GB (1.2GB/8GB per core of 8)\n\n  GPU utilization per node\n      della-l01g2 (GPU 0): 90%\n      della-l01g2 (GPU 1): 0% <-- GPU was not used\n\n  GPU memory usage per node - maximum used/total\n      della-l01g2 (GPU 0): 29.6GB/40.0GB (74.0%)\n      della-l01g2 (GPU 1): 0.0B/40.0GB (0.0%)\n";
        let u = parse_jobstats(t).unwrap();
        assert_eq!(u.gpus.len(), 2);
        assert_eq!(u.gpus[0].util_gpu, Some(90.0));
        assert_eq!(u.gpus[1].util_gpu, Some(0.0));
        assert_eq!(u.gpus[0].memory_total_mib, Some(40960.0));
        assert!((u.gpus[0].memory_used_mib.unwrap() - 29.6 * 1024.0).abs() < 1e-6);
        let v = usage_value(&u, "x");
        assert_eq!(v["gpu_util"], json!(45.0));
        // a MIG job's meter names no figure: nothing to judge
        let mig = t
            .replace(
                "  GPU utilization  [||||||||||||||||||||||                         45%]",
                "  GPU utilization  [     GPU utilization is unknown for MIG jobs      ]",
            )
            .replace(
                "della-l01g2 (GPU 0): 90%",
                "della-l01g2 (GPU 0): GPU utilization is unknown for MIG jobs",
            )
            .replace("della-l01g2 (GPU 1): 0% <-- GPU was not used", "");
        let u = parse_jobstats(&mig).unwrap();
        assert_eq!(u.gpus[0].util_gpu, None);
        let v = usage_value(&u, "x");
        assert!(v.get("gpu_util").is_none(), "{v}");
    }

    #[test]
    fn other_text_is_not_a_report() {
        // `seff` (Slurm's contrib script) prints no banner
        assert!(!looks_like_jobstats(
            "Job ID: 9446770\nCluster: tiger\nState: COMPLETED (exit code 0)\nCPU Efficiency: 12.00% of 08:00:00 core-walltime\n"
        ));
        // the title quoted in prose, with nothing of the report after it
        assert!(!looks_like_jobstats(
            "Our admins mail a Slurm Job Statistics summary after each job.\nIt said my GPU was idle.\n"
        ));
    }
}
