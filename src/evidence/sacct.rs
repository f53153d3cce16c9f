//! `sacct`: Slurm's accounting table of jobs and their steps, which users paste to show how a
//! job ended or what it used (`sacct -j JOBID --format JobID,State,Elapsed,…`,
//! `-o JobID,TRESUsageInAve`). Read from SchedMD/slurm at 284c3b95f0,
//! `src/common/print_fields.c` (`print_fields_header` and the field printers sacct uses):
//!
//! - by default, a header of the field names each padded to its width (`%*.*s `), a line of
//!   dashes as wide as each field separated by one space, then one row per job or step, each
//!   value padded to the same widths;
//! - with `-p`/`--parsable`, the names and values each followed by `|`, and with `-P` the same
//!   without the last `|`; `-n` drops the header.
//!
//! A row's first field is, in the default format, the job id (`123`, `123_4` for an array
//! task, `123.batch`, `123.extern`, `123.0` for its steps).
//!
//! What is read is the table as printed: its columns (where the header is pasted) and each
//! row's values. No rule reads it (the kind's `read_by` is empty): states and elapsed times say
//! how a job ended, not why it was slow; the `gres/gpuutil` of `TRESUsageIn*` is Slurm's sum of
//! the job process's SM utilization over its GPUs (`src/plugins/gpu/nvml/gpu_nvml.c`,
//! `_get_gpuutil`), a per-GPU figure only where the job's GPU count is known, which such a row
//! does not print.

use serde::Serialize;

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct SacctRow {
    /// the row's first value (the job or step id in the default format)
    pub id: String,
    pub values: Vec<String>,
}

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Sacct {
    /// `fixed` (the default output) or `parsable` (`-p`/`-P`)
    pub format: String,
    /// the header's field names, where the paste holds the header
    pub columns: Vec<String>,
    pub rows: Vec<SacctRow>,
}

/// `123`, `123_4`, `123.batch`, `123_4.0`, `123+1.extern`: a job or step id as sacct prints it.
pub(crate) fn is_job_id(s: &str) -> bool {
    let (job, step) = s.split_once('.').unwrap_or((s, ""));
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    let job_ok = {
        let (a, b) = job
            .split_once('_')
            .or_else(|| job.split_once('+'))
            .unwrap_or((job, "0"));
        digits(a) && (digits(b) || (b.starts_with('[') && b.ends_with(']')))
    };
    job_ok
        && (step.is_empty()
            || digits(step)
            || step.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// A parsable row: an id, then `|`.
fn parsable_row(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let (first, _) = t.split_once('|')?;
    if !is_job_id(first) {
        return None;
    }
    let t = t.strip_suffix('|').unwrap_or(t);
    Some(t.split('|').map(str::to_string).collect())
}

/// A parsable header: `JobID|…` (sacct's field names; `JobIDRaw` too).
fn parsable_header(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let (first, _) = t.split_once('|')?;
    if !first.eq_ignore_ascii_case("jobid") && !first.eq_ignore_ascii_case("jobidraw") {
        return None;
    }
    let t = t.strip_suffix('|').unwrap_or(t);
    Some(t.split('|').map(str::to_string).collect())
}

/// The dash line under a fixed header: the `[start, end)` of each field.
fn dash_spans(line: &str) -> Option<Vec<(usize, usize)>> {
    let t = line.trim_end();
    if t.is_empty() || !t.bytes().all(|b| b == b'-' || b == b' ') {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = None;
    for (i, b) in t.bytes().enumerate() {
        match (b, start) {
            (b'-', None) => start = Some(i),
            (b' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, t.len()));
    }
    (spans.len() >= 2).then_some(spans)
}

fn cut(line: &str, spans: &[(usize, usize)]) -> Vec<String> {
    spans
        .iter()
        .map(|&(s, e)| {
            line.get(s.min(line.len())..e.min(line.len()))
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect()
}

/// True for sacct's table: a fixed header (`JobID …` above its dash line) or parsable rows
/// (a `JobID|…` header, or two rows starting with a job id and `|`).
pub fn looks_like_sacct(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().take(200).collect();
    let mut rows = 0;
    for (i, l) in lines.iter().enumerate() {
        if parsable_header(l).is_some()
            && lines.get(i + 1).is_some_and(|n| parsable_row(n).is_some())
        {
            return true;
        }
        if parsable_row(l).is_some() {
            rows += 1;
            if rows >= 2 {
                return true;
            }
        }
        if i > 0
            && dash_spans(l).is_some()
            && lines[i - 1].split_whitespace().next().is_some_and(|w| {
                w.eq_ignore_ascii_case("jobid") || w.eq_ignore_ascii_case("jobidraw")
            })
        {
            return true;
        }
    }
    false
}

pub fn parse_sacct(text: &str) -> Result<Sacct, super::ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut s = Sacct::default();
    // the fixed table: the dash line under a `JobID` header gives every column's span
    if let Some(i) = (1..lines.len()).find(|&i| {
        dash_spans(lines[i]).is_some()
            && lines[i - 1].split_whitespace().next().is_some_and(|w| {
                w.eq_ignore_ascii_case("jobid") || w.eq_ignore_ascii_case("jobidraw")
            })
    }) {
        let spans = dash_spans(lines[i]).unwrap_or_default();
        s.format = "fixed".into();
        s.columns = cut(lines[i - 1], &spans);
        for l in &lines[i + 1..] {
            let v = cut(l, &spans);
            match v.first() {
                Some(id) if is_job_id(id) => s.rows.push(SacctRow {
                    id: id.clone(),
                    values: v,
                }),
                _ if l.trim().is_empty() => continue,
                _ => break,
            }
            if s.rows.len() >= super::MAX_ITEMS {
                break;
            }
        }
    } else {
        s.format = "parsable".into();
        for l in &lines {
            if s.columns.is_empty()
                && let Some(h) = parsable_header(l)
            {
                s.columns = h;
            } else if let Some(v) = parsable_row(l) {
                s.rows.push(SacctRow {
                    id: v[0].clone(),
                    values: v,
                });
                if s.rows.len() >= super::MAX_ITEMS {
                    break;
                }
            }
        }
    }
    if s.rows.is_empty() {
        return Err(super::ParseError::NotThisKind(
            "no sacct row (a job id, then its fields)",
        ));
    }
    Ok(s)
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct SacctKind;

impl super::EvidenceKind for SacctKind {
    fn name(&self) -> &'static str {
        "sacct"
    }
    fn doc(&self) -> &'static str {
        "`sacct`: Slurm's accounting rows of jobs and their steps (state, exit code, elapsed time, TRES usage), as a fixed-width or `--parsable` table"
    }
    fn example(&self) -> &'static str {
        "sacct -j 18194943 --format JobID,State,Elapsed,TRESUsageInAve"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("format", "fixed (the default table) or parsable (-p/-P)"),
            (
                "columns",
                "the header's field names, where the paste holds it",
            ),
            (
                "rows",
                "per job or step row: id (its first value) and its values, as printed",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_sacct(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_sacct(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CU Boulder's docs (ResearchComputing/Documentation 06876a8), `-pno`: parsable, no header
    const CURC: &str = "$ sacct -j 18194943 -pno JobID,TRESUsageInAve --noconvert\n--------------------------------------------------------\n18194943||\n18194943.batch|cpu=00:56:24,energy=0,fs/disk=350130624578,gres/gpumem=40777023488,gres/gpuutil=100,mem=10621726720,pages=3465,vmem=10439041024|\n18194943.extern|cpu=00:00:00,energy=0,fs/disk=5273,gres/gpumem=0,gres/gpuutil=0,mem=262144,pages=0,vmem=0|\n--------------------------------------------------------\n";

    /// the default table (JHU's DSAI docs, jhu-arch/arch-docs 68ff16d)
    const FIXED: &str = "  JobID           JobName    Partition    Account        AllocCPUS   State       ExitCode\n  --------------  ---------  -----------  -------------  ----------  ----------  --------\n  111111          job1.sh    a100         example_gpu          12    TIMEOUT     0:0\n  111111.batch    batch      a100         example_gpu          12    CANCELLED   0:15\n";

    #[test]
    fn parsable_rows_without_a_header() {
        assert!(looks_like_sacct(CURC));
        let s = parse_sacct(CURC).unwrap();
        assert_eq!(s.format, "parsable");
        assert!(s.columns.is_empty());
        let ids: Vec<&str> = s.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["18194943", "18194943.batch", "18194943.extern"]);
        assert!(s.rows[1].values[1].contains("gres/gpuutil=100"));
    }

    #[test]
    fn the_default_table_by_its_dash_line() {
        // as pasted, indented two spaces
        assert!(looks_like_sacct(FIXED));
        let s = parse_sacct(FIXED).unwrap();
        assert_eq!(s.format, "fixed");
        assert_eq!(s.columns[0], "JobID");
        assert_eq!(s.columns[5], "State");
        assert_eq!(s.rows[0].values[5], "TIMEOUT");
        assert_eq!(s.rows[1].id, "111111.batch");
    }

    #[test]
    fn other_text_is_not_sacct() {
        // a markdown table
        assert!(!looks_like_sacct("| run | model |\n|---|---|\n| a | b |\n"));
        // one id-and-pipe line in prose
        assert!(!looks_like_sacct("job 42|done\n"));
        // an NCCL line
        assert!(!looks_like_sacct(
            "node1:123:456 [0] NCCL INFO Channel 00/02 : 0 1\n"
        ));
    }
}
