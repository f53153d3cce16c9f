//! `scontrol show job JOBID`: the controller's record of one Slurm job, which users paste to
//! show what their job was given. Read from SchedMD/slurm `src/scontrol/info_job.c` at
//! 284c3b95f0 (`_sprint_job_info`): `KEY=value` pairs separated by spaces, a new line
//! (indented three spaces) between groups, starting `JobId=N JobName=NAME`, and among them
//! `JobState=`, `NumNodes=`, `NumCPUs=`, `NumTasks=`, `CPUs/Task=` (`N/A` where unset),
//! `ReqTRES=` and `AllocTRES=` (`cpu=12,mem=120G,node=1,gres/gpu=1`), and where the job asked
//! for them `CpusPerTres=gpu:12`, `TresPerNode=gres:gpu:1`, `TresPerTask=`, `TresPerJob=`.
//!
//! What is read is those fields, as the record states them. No rule reads them (the kind's
//! `read_by` is empty): the record says what the job was given, not how it used it; a worker
//! count beside it would be another paste.

use serde::Serialize;

/// The fields read (see the module doc); `None` where the record does not print one.
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct ScontrolJob {
    pub job_id: String,
    pub job_name: Option<String>,
    pub job_state: Option<String>,
    pub num_nodes: Option<String>,
    pub num_cpus: Option<String>,
    pub num_tasks: Option<u32>,
    /// `CPUs/Task=`; `None` for `N/A`
    pub cpus_per_task: Option<u32>,
    pub req_tres: Option<String>,
    pub alloc_tres: Option<String>,
    pub cpus_per_tres: Option<String>,
    pub tres_per_node: Option<String>,
    pub tres_per_task: Option<String>,
    pub tres_per_job: Option<String>,
}

/// `JobId=100123 JobName=my_job` at a line's start: the record's first line.
fn first_line(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("JobId=")?;
    let (id, rest) = rest.split_once(' ')?;
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with("JobName="))
        .then_some(id)
}

/// True for the record: its `JobId=N JobName=` line and, below it, a line of `KEY=value`
/// pairs the record prints (`JobState=`, `NumNodes=`).
pub fn looks_like_scontrol_job(text: &str) -> bool {
    let mut first = false;
    for l in text.lines().take(80) {
        if first_line(l).is_some() {
            first = true;
        } else if first {
            let t = l.trim_start();
            if t.starts_with("JobState=") || t.starts_with("NumNodes=") {
                return true;
            }
        }
    }
    false
}

pub fn parse_scontrol_job(text: &str) -> Result<ScontrolJob, super::ParseError> {
    let mut lines = text.lines().skip_while(|l| first_line(l).is_none());
    let Some(head) = lines.next() else {
        return Err(super::ParseError::NotThisKind(
            "no `scontrol show job` record (`JobId=N JobName=…`)",
        ));
    };
    let mut j = ScontrolJob {
        job_id: first_line(head).unwrap_or_default().to_string(),
        ..Default::default()
    };
    // the record's own lines: its first, and the indented `KEY=value` lines below it
    let record = std::iter::once(head).chain(lines.take_while(|l| {
        let t = l.trim_start();
        l.starts_with(' ') && t.split(' ').next().is_some_and(|w| w.contains('='))
    }));
    for l in record {
        for pair in l.split_whitespace() {
            let Some((k, v)) = pair.split_once('=') else {
                continue;
            };
            let s = || Some(v.to_string());
            match k {
                "JobName" => j.job_name = s(),
                "JobState" => j.job_state = s(),
                "NumNodes" => j.num_nodes = s(),
                "NumCPUs" => j.num_cpus = s(),
                "NumTasks" => j.num_tasks = v.parse().ok(),
                "CPUs/Task" => j.cpus_per_task = v.parse().ok(),
                "ReqTRES" => j.req_tres = s(),
                "AllocTRES" => j.alloc_tres = s(),
                "CpusPerTres" => j.cpus_per_tres = s(),
                "TresPerNode" => j.tres_per_node = s(),
                "TresPerTask" => j.tres_per_task = s(),
                "TresPerJob" => j.tres_per_job = s(),
                _ => {}
            }
        }
    }
    Ok(j)
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct ScontrolJobKind;

impl super::EvidenceKind for ScontrolJobKind {
    fn name(&self) -> &'static str {
        "scontrol-job"
    }
    fn doc(&self) -> &'static str {
        "`scontrol show job`: Slurm's record of one job, what it asked for and was given (nodes, CPUs, tasks, CPUs per task, TRES)"
    }
    fn example(&self) -> &'static str {
        "scontrol show job 100123"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("job_id", "JobId"),
            ("job_name", "JobName"),
            ("job_state", "JobState"),
            ("num_nodes", "NumNodes (a count or a range)"),
            ("num_cpus", "NumCPUs (a count or a range)"),
            ("num_tasks", "NumTasks, where printed"),
            ("cpus_per_task", "CPUs/Task (null for N/A)"),
            (
                "req_tres",
                "ReqTRES as printed (cpu=1,mem=10G,node=1,gres/gpu=1)",
            ),
            ("alloc_tres", "AllocTRES as printed"),
            (
                "cpus_per_tres",
                "CpusPerTres (--cpus-per-gpu), where printed",
            ),
            (
                "tres_per_node",
                "TresPerNode (--gres, --gpus-per-node), where printed",
            ),
            (
                "tres_per_task",
                "TresPerTask (--gpus-per-task, --cpus-per-task), where printed",
            ),
            ("tres_per_job", "TresPerJob (--gpus), where printed"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_scontrol_job(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_scontrol_job(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JHU's DSAI docs (jhu-arch/arch-docs 68ff16d), a running 1-GPU job
    const JHU: &str = "$ scontrol show job 100123\nJobId=100123 JobName=my_job\n   UserId=userX(0000) GroupId=research(0000) MCS_label=N/A\n   JobState=RUNNING Reason=None Dependency=(null)\n   NumNodes=1 NumCPUs=12 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n   ReqTRES=cpu=1,mem=10G,node=1,billing=180,gres/gpu=1\n   AllocTRES=cpu=12,mem=120G,node=1,billing=180,gres/gpu=1,gres/gpu:a100=1\n   Command=bash\n   CpusPerTres=gpu:12\n   TresPerNode=gres:gpu:1\n\nThe job ran 3 days.\n";

    #[test]
    fn the_record_s_fields() {
        assert!(looks_like_scontrol_job(JHU));
        let j = parse_scontrol_job(JHU).unwrap();
        assert_eq!(j.job_id, "100123");
        assert_eq!(j.job_state.as_deref(), Some("RUNNING"));
        assert_eq!(j.num_cpus.as_deref(), Some("12"));
        assert_eq!(j.cpus_per_task, Some(1));
        assert_eq!(j.cpus_per_tres.as_deref(), Some("gpu:12"));
        assert_eq!(j.tres_per_node.as_deref(), Some("gres:gpu:1"));
        assert_eq!(
            j.alloc_tres.as_deref(),
            Some("cpu=12,mem=120G,node=1,billing=180,gres/gpu=1,gres/gpu:a100=1")
        );
        // `CPUs/Task=N/A`: unset, not a count
        let na = parse_scontrol_job(&JHU.replace("CPUs/Task=1", "CPUs/Task=N/A")).unwrap();
        assert_eq!(na.cpus_per_task, None);
    }

    #[test]
    fn other_text_is_not_a_record() {
        // a job id in a log line, with no record below it
        assert!(!looks_like_scontrol_job(
            "srun: JobId=4242 JobName=train submitted\nepoch 1 loss 0.3\n"
        ));
        // jobcomp's one-line record (`JobId=%lu UserId=…`) has no JobName right after the id
        assert!(!looks_like_scontrol_job(
            "JobId=12 UserId=u(1) GroupId=g(1) Name=x JobState=COMPLETED\n"
        ));
    }
}
