//! What `dcgmi stats` prints: a job's (`dcgmi stats -j <job>`) or a process's
//! (`dcgmi stats -p <pid>`) accounting, read by its own grammar. Written from the producer's
//! source, github.com/NVIDIA/DCGM at v4.6.0 (commit 72fa3fe), `dcgmi/ProcessStats.cpp`:
//!
//! - the line before the boxes: `Successfully retrieved statistics for job: <job>. ` or
//!   `Successfully retrieved process info for PID: <pid>. Process ran on <n> GPUs.`;
//! - per box a header row, `| Summary |` or (verbose, and per GPU for a process) `| GPU ID: N |`
//!   (`STATS_HEADER`), then the section rows `STATS_EXECUTION` (`|-----  Execution Stats
//!   ------------+---…|`), `STATS_PERFORMANCE`, `STATS_EVENTS`, `STATS_SLOWDOWN`,
//!   `STATS_PROCESS_UTIL`, `OVERALL_HEALTH`, each followed by `| <name> | <value> |` rows
//!   (`STATS_DATA`: the name column 36 wide, marked `*` where it differs per process), values
//!   such as `Avg: 1602, Max: 2040, Min: 1440`, `Not Specified`, `Still Running`.
//!
//! No rule reads it: the summary says what a job used (energy, clocks, memory, utilization,
//! ECC and Xid counts), not why it was slow; it is read so that such a paste is recognised.
//!
//! Like every evidence reader: never panics, reads what is there, bounded output.

use serde::Serialize;
use std::collections::BTreeMap;

/// One box: a job's summary or one GPU's part of it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StatsBox {
    /// `Summary` or `GPU ID: N`; empty when the paste starts below the header.
    pub header: String,
    /// Section (`Execution Stats`, …) -> row name -> value, as printed.
    pub sections: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DcgmiStats {
    /// `job` or `pid`, from the line before the boxes.
    pub of: Option<String>,
    /// The job id or PID it names.
    pub id: Option<String>,
    pub boxes: Vec<StatsBox>,
}

/// The section rows `ProcessStats.cpp` prints (`STATS_EXECUTION`, …): their name.
const SECTIONS: &[&str] = &[
    "Execution Stats",
    "Performance Stats",
    "Event Stats",
    "Slowdown Stats",
    "Process Utilization",
    "Compute Process Utilization",
    "Graphics Process Utilization",
    "Overall Health",
];

/// `|-----  Execution Stats  ------------+---…|` -> `Execution Stats`.
fn section(line: &str) -> Option<&'static str> {
    let l = line.trim();
    let inner = l.strip_prefix('|').or_else(|| l.strip_prefix('+'))?;
    let inner = inner.trim_start_matches('-');
    if !inner.starts_with("  ") {
        return None;
    }
    let name = inner.trim_start().split("  ").next()?;
    SECTIONS.iter().copied().find(|s| *s == name)
}

/// `| name | value |` -> (name without its `*` mark, value).
fn data_row(line: &str) -> Option<(String, String)> {
    let l = line.trim();
    let inner = l.strip_prefix('|')?.strip_suffix('|')?;
    let (name, value) = inner.split_once('|')?;
    if value.contains('|') {
        return None;
    }
    let name = name.trim().trim_end_matches('*').trim();
    if name.is_empty() || name.starts_with('-') || name.starts_with('=') {
        return None;
    }
    Some((super::clip(name, 80), super::clip(value.trim(), 200)))
}

/// `| GPU ID: 2 |` / `| Summary |`: a one-cell header row.
fn header_row(line: &str) -> Option<String> {
    let l = line.trim();
    let inner = l.strip_prefix('|')?.strip_suffix('|')?;
    if inner.contains('|') {
        return None;
    }
    let h = inner.trim();
    (h == "Summary" || h.starts_with("GPU ID: ")).then(|| super::clip(h, 40))
}

fn intro(line: &str) -> Option<(&'static str, String)> {
    let l = line.trim();
    if let Some(r) = l.strip_prefix("Successfully retrieved statistics for job: ") {
        return Some(("job", super::clip(r.trim().trim_end_matches('.'), 80)));
    }
    let r = l.strip_prefix("Successfully retrieved process info for PID: ")?;
    Some(("pid", super::clip(r.split('.').next()?.trim(), 20)))
}

/// A section row of the stats box, or the line dcgmi prints before it.
pub fn looks_like_stats(text: &str) -> bool {
    text.lines()
        .take(2000)
        .any(|l| section(l).is_some() || intro(l).is_some())
}

pub fn parse_stats(text: &str) -> Result<DcgmiStats, super::ParseError> {
    let mut d = DcgmiStats::default();
    let mut cur: Option<StatsBox> = None;
    let mut sect: Option<&'static str> = None;
    for line in text.lines().take(1_000_000) {
        if let Some((of, id)) = intro(line) {
            if d.of.is_none() {
                d.of = Some(of.to_string());
                d.id = Some(id);
            }
            continue;
        }
        if let Some(h) = header_row(line) {
            if let Some(b) = cur.take()
                && d.boxes.len() < super::MAX_ITEMS
            {
                d.boxes.push(b);
            }
            cur = Some(StatsBox {
                header: h,
                ..StatsBox::default()
            });
            sect = None;
            continue;
        }
        if let Some(s) = section(line) {
            sect = Some(s);
            cur.get_or_insert_with(StatsBox::default);
            continue;
        }
        let (Some(s), Some(b)) = (sect, cur.as_mut()) else {
            continue;
        };
        if let Some((k, v)) = data_row(line) {
            let rows = b.sections.entry(s.to_string()).or_default();
            if rows.len() < super::MAX_ITEMS {
                rows.insert(k, v);
            }
        }
    }
    if let Some(b) = cur.take()
        && d.boxes.len() < super::MAX_ITEMS
    {
        d.boxes.push(b);
    }
    if d.boxes.is_empty() && d.of.is_none() {
        return Err(super::ParseError::NotThisKind(
            "no `dcgmi stats` box in the text (expected `|-----  Execution Stats  ---…|`)",
        ));
    }
    Ok(d)
}

/// `dcgmi stats -j <job>` / `-p <pid>`.
pub struct DcgmiStatsKind;

impl super::EvidenceKind for DcgmiStatsKind {
    fn name(&self) -> &'static str {
        "dcgmi-stats"
    }
    fn doc(&self) -> &'static str {
        "DCGM's job or process statistics: execution time, energy, clocks, memory, utilization, ECC and Xid counts per job or GPU"
    }
    fn example(&self) -> &'static str {
        "dcgmi stats -v -j <job>"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("of", "`job` or `pid`"),
            ("id", "the job id or PID"),
            (
                "boxes",
                "per box (Summary, GPU ID: N): section -> row -> value, as printed",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_stats(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_stats(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // NVIDIA/DCGM#268: `dcgmi stats --pid` on an L4, the process still running
    const PID_L4: &str = "Successfully retrieved process info for PID: 71081. Process ran on 1 GPUs.\n+------------------------------------------------------------------------------+\n| GPU ID: 2                                                                    |\n+====================================+=========================================+\n|-----  Execution Stats  ------------+-----------------------------------------|\n| Start Time                     *   | Fri Dec 12 00:11:25 2025                |\n| End Time                       *   | Still Running                           |\n+-----  Performance Stats  ----------+-----------------------------------------+\n| Energy Consumed (Joules)           | 27154                                   |\n| Max GPU Memory Used (bytes)    *   | 0                                       |\n";

    #[test]
    fn a_process_box_is_read_by_section_and_row() {
        let d = parse_stats(PID_L4).unwrap();
        assert_eq!(d.of.as_deref(), Some("pid"));
        assert_eq!(d.id.as_deref(), Some("71081"));
        assert_eq!(d.boxes.len(), 1);
        assert_eq!(d.boxes[0].header, "GPU ID: 2");
        assert_eq!(
            d.boxes[0].sections["Execution Stats"]["End Time"],
            "Still Running"
        );
        assert_eq!(
            d.boxes[0].sections["Performance Stats"]["Max GPU Memory Used (bytes)"],
            "0"
        );
    }

    #[test]
    fn a_diag_table_is_not_a_stats_box() {
        // dcgmi diag's stage rows have the same shape and other names
        let diag = "|-----  Deployment  --------+------------------------------------------------|\n| Denylist                  | Pass                                           |\n+-----  Hardware  ----------+------------------------------------------------+\n";
        assert!(!looks_like_stats(diag));
        assert!(looks_like_stats(PID_L4));
        for t in [
            "",
            "|-----  ",
            "| GPU ID: |",
            "Successfully retrieved process info for PID: ",
        ] {
            let _ = parse_stats(t);
        }
    }
}
