//! The two profiler reports users paste to show where a training step spends its time, read
//! from their producers:
//!
//! - PyTorch's `prof.key_averages().table()`: `torch/autograd/profiler_util.py`, `_build_table`
//!   (pytorch/pytorch, read at 006bb57b). Columns are right-aligned in fixed widths (the name
//!   column up to `max_name_column_width=55`, a longer name cut to 52 characters and `...`), two
//!   spaces between columns, a rule of dashes per column (`header_sep`) above and below the
//!   header row, and after the rows the rule again and `Self CPU time total: <time>` (then
//!   `Self CUDA time total: …` when the device recorded time). The header is `Name`, optionally
//!   `Overload Name`, `Self CPU %`, `Self CPU`, `CPU total %`, `CPU total`, `CPU time avg`, the
//!   device's four (`Self CUDA`, `Self CUDA %`, `CUDA total`, `CUDA time avg`), memory columns,
//!   `# of Calls` (`Number of Calls` and `Self CPU total %` before PyTorch 1.8), then `Node ID`,
//!   `Input Shapes`, `Source Location`, `Total FLOPs`. Percentages are `_format_time_share`
//!   (`12.34%`) and times `_format_time` (`791.161ms`, `78.632s`, `0.000us`).
//! - Lightning's `SimpleProfiler.summary()`: `src/lightning/pytorch/profilers/simple.py`
//!   (Lightning-AI/pytorch-lightning, read at 03f57f9c): `<STAGE> Profiler Report`, a rule of
//!   dashes, `|  Action\t|  Mean duration (s)\t|  Num calls\t|  Total time (s)\t|  Percentage %\t|`
//!   (without `extended`: no `Num calls` and no `Percentage %`), a `Total` row, then one row per
//!   action sorted by its share: `Percentage %` is `100 * sum(durations) / total_duration`, the
//!   wall time since the profiler started. Lightning 1.4 printed the same cells without the
//!   leading `|`; a poster may re-type the report as a markdown table (`--- | ---`). The batch
//!   fetch of the training loop is the action `[_TrainingEpochLoop].train_dataloader_next`
//!   (`[TrainingEpochLoop]…` in 1.6–1.9; `get_train_batch` before 1.5).
//!
//! One report is a share of time over the profiled steps, not a moment like a py-spy dump.

/// A `key_averages().table()` header: its row, 0-based.
pub fn torch_table_header(text: &str) -> Option<usize> {
    text.lines().take(20_000).position(is_torch_table_header)
}

fn is_torch_table_header(l: &str) -> bool {
    let w: Vec<&str> = cells(l);
    w.first() == Some(&"Name")
        && (w.contains(&"Self CPU %") || w.contains(&"Self CPU total %"))
        && (w.contains(&"CPU total %") || w.contains(&"CPU total"))
}

/// `_build_table`'s cells of one line: runs of text separated by two spaces or more (one space
/// stays inside a cell: `Self CPU %`, `# of Calls`).
fn cells(l: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let b = l.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' || b[i] == b'\t' {
            let gap = b[i..]
                .iter()
                .take_while(|c| **c == b' ' || **c == b'\t')
                .count();
            if (gap >= 2 || b[i] == b'\t') && start.is_some() {
                out.push(&l[start.take().unwrap_or(i)..i]);
            }
            i += gap;
            continue;
        }
        if start.is_none() {
            start = Some(i);
        }
        i += 1;
    }
    if let Some(s) = start {
        out.push(&l[s..]);
    }
    out
}

/// `_format_time_share`: `12.34%`.
fn is_share(c: &str) -> bool {
    c.strip_suffix('%')
        .is_some_and(|n| !n.is_empty() && n.trim_start_matches('-').parse::<f64>().is_ok())
}

/// `_format_time`: `791.161ms`, `78.632s`, `0.000us`, `-16028.000us`.
fn is_time(c: &str) -> bool {
    ["us", "ms", "s"].iter().any(|u| {
        c.strip_suffix(u).is_some_and(|n| {
            !n.is_empty()
                && n.trim_start_matches('-')
                    .chars()
                    .all(|ch| ch.is_ascii_digit() || ch == '.')
                && n.chars().any(|ch| ch.is_ascii_digit())
        })
    })
}

/// A row of the table without its header (a paste of the rows alone): a name, then the CPU
/// columns `Self CPU %`, `Self CPU`, `CPU total %`, `CPU total`, `CPU time avg` as
/// `_build_table` prints them, and a count of calls after them.
fn is_torch_table_row(l: &str) -> bool {
    let w = cells(l);
    if w.len() < 7 {
        return false;
    }
    // an `Overload Name` column may stand between the name and the numbers
    (1..=2).any(|k| {
        w.len() > k + 5
            && is_share(w[k])
            && is_time(w[k + 1])
            && (is_share(w[k + 2]) || w[k + 2] == "0")
            && is_time(w[k + 3])
            && is_time(w[k + 4])
            && w[k + 5..]
                .iter()
                .any(|c| c.chars().all(|ch| ch.is_ascii_digit()))
    })
}

/// True when the text holds a `key_averages().table()`: its header, or two rows of it, or a
/// row and the `Self CPU time total:` line under it.
pub fn looks_like_torch_table(text: &str) -> bool {
    if torch_table_header(text).is_some() {
        return true;
    }
    let rows = text
        .lines()
        .take(20_000)
        .filter(|l| is_torch_table_row(l))
        .count();
    let total = text
        .lines()
        .take(20_000)
        .any(|l| total_line(l.trim()).is_some());
    rows >= 2 || rows >= 1 && total
}

/// `Self CPU time total: 195.526ms` (the device's `Self CUDA time total: …` too).
fn total_line(l: &str) -> Option<&str> {
    let rest = l.strip_prefix("Self ")?;
    let (_, t) = rest.split_once(" time total: ")?;
    is_time(t.trim()).then_some(t.trim())
}

/// One action of Lightning's `SimpleProfiler` report.
#[derive(Debug, Clone, PartialEq)]
pub struct LightningAction {
    /// 1-based line.
    pub line: usize,
    pub action: String,
    pub total_s: Option<f64>,
    /// `Percentage %` over 100: the action's share of the wall time the profiler ran.
    pub share: Option<f64>,
}

/// A `SimpleProfiler` report: the `Total` row's time and each action.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LightningReport {
    pub total_s: Option<f64>,
    pub actions: Vec<LightningAction>,
}

impl LightningReport {
    /// The training loop's batch fetch (`[_TrainingEpochLoop].train_dataloader_next`, older
    /// `[TrainingEpochLoop].train_dataloader_next`, `get_train_batch`).
    pub fn train_fetch(&self) -> Option<&LightningAction> {
        self.actions.iter().find(|a| {
            a.action == "get_train_batch"
                || a.action == "train_dataloader_next"
                || a.action.ends_with("].train_dataloader_next")
        })
    }
}

/// The cells of a report row split on `|` (Lightning's, or a markdown table's), trimmed, the
/// empty ones at the ends dropped.
fn bar_cells(l: &str) -> Vec<&str> {
    let mut w: Vec<&str> = l.split('|').map(str::trim).collect();
    while w.first() == Some(&"") {
        w.remove(0);
    }
    while w.last() == Some(&"") {
        w.pop();
    }
    w
}

/// Lightning's `SimpleProfiler` report, read from its header row (`Action | Mean duration (s) |
/// … | Total time (s) …`) down: None without that header.
pub fn lightning_report(text: &str) -> Option<LightningReport> {
    let lines: Vec<&str> = text.lines().take(20_000).collect();
    let (h, head) = lines.iter().enumerate().find_map(|(i, l)| {
        let w = bar_cells(l);
        (w.len() >= 3
            && w[0] == "Action"
            && w[1] == "Mean duration (s)"
            && w.contains(&"Total time (s)"))
        .then_some((i, w))
    })?;
    let col = |name: &str| head.iter().position(|c| *c == name);
    let (total_col, pct_col) = (col("Total time (s)"), col("Percentage %"));
    let mut out = LightningReport::default();
    for (i, l) in lines.iter().enumerate().skip(h + 1) {
        let w = bar_cells(l);
        if w.len() < 3 {
            // a rule of dashes, a markdown `--- | ---` row or the end of the report
            if l.trim().is_empty() || l.trim().chars().all(|c| c == '-') {
                continue;
            }
            break;
        }
        if w.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            continue;
        }
        let num = |c: Option<usize>| {
            c.and_then(|c| w.get(c))
                .and_then(|v| v.trim_end_matches('%').trim().parse::<f64>().ok())
                .filter(|x| x.is_finite() && *x >= 0.0)
        };
        let total_s = num(total_col);
        if w[0] == "Total" {
            out.total_s = total_s;
            continue;
        }
        out.actions.push(LightningAction {
            line: i + 1,
            action: w[0].to_string(),
            total_s,
            share: num(pct_col).map(|p| p / 100.0),
        });
    }
    (!out.actions.is_empty() || out.total_s.is_some()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_averages_table_is_read_by_its_header_or_its_rows() {
        // github.com/pytorch/pytorch/issues/124547: a CPU-only table (no device columns)
        let cpu = "-----------------  ------------  ------------  ------------  ------------  ------------  ------------  \n             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n-----------------  ------------  ------------  ------------  ------------  ------------  ------------  \n    ProfilerStep*        50.64%       5.776ms       100.00%      11.407ms     126.744us            90  \n";
        assert_eq!(torch_table_header(cpu), Some(1));
        assert!(looks_like_torch_table(cpu));
        // github.com/pytorch/pytorch/issues/44784: PyTorch 1.6's wording of the header
        let old = "Name                           Self CPU total %  Self CPU total   CPU total %      CPU total        CPU time avg     CUDA total %     CUDA total       CUDA time avg    Number of Calls  Input Shapes                                   \n";
        assert!(looks_like_torch_table(old));
        // github.com/sgl-project/sglang/pull/11032: rows pasted without the header
        let rows = "                                  cudaDeviceSynchronize         5.30%     164.896us         5.30%     164.896us      54.965us       0.000us         0.00%       0.000us       0.000us             3  \n                                            aten::addmm         4.55%     141.430us         5.77%     179.635us      59.878us      34.848us         5.98%      34.848us      11.616us             3  \n";
        assert!(looks_like_torch_table(rows));
        // github.com/uccl-project/uccl/issues/684: the tail, one row short of two, and the total
        let tail = "                  cudaStreamSynchronize         0.02%      35.851us         0.02%      35.851us      35.851us             1\n---------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------\nSelf CPU time total: 195.526ms\n";
        assert!(looks_like_torch_table(tail));
        // composer#2647's memory table: a `--` count of FLOPs, negative times
        let mem = "                                aten::nll_loss_backward        -0.08%  -16028.000us         3.88%     741.826ms      11.591ms      24.59 Gb      10.76 Gb            64            --  \n";
        assert!(is_torch_table_row(mem));
        // not a table: a training log line with a percentage, a py-spy frame
        assert!(!looks_like_torch_table(
            "Epoch 1:  45%|████▌     | 45/100 [00:10<00:12,  4.50it/s, loss=0.512]\n"
        ));
        assert!(!looks_like_torch_table(
            "    _try_get_data (torch/utils/data/dataloader.py:1133)\n"
        ));
        assert!(!looks_like_torch_table("Self CPU time total: 2.304ms\n"));
    }

    #[test]
    fn lightnings_simple_profiler_report_gives_the_fetch_share() {
        // github.com/time-series-foundation-models/lag-llama/issues/51: re-typed as markdown
        let md = "Action |  Mean duration (s) |  Num calls |  Total time (s) |  Percentage %\n--- | --- | --- | --- | ---\nTotal |  - |  1397 |  99.734 |  100 % \nrun_training_epoch |  91.657                |  1                    |  91.657               |  91.901               |\n[_TrainingEpochLoop].train_dataloader_next |  5.2931                |  16                   |  84.689               |  84.915               |\n[_EvaluationLoop].val_next |  0.246                 |  19                   |  4.674                |  4.6865               |\n";
        let r = lightning_report(md).unwrap();
        assert_eq!(r.total_s, Some(99.734));
        let f = r.train_fetch().unwrap();
        assert_eq!(f.line, 5);
        assert_eq!(f.total_s, Some(84.689));
        assert!((f.share.unwrap() - 0.84915).abs() < 1e-9);
        // github.com/Lightning-AI/pytorch-lightning/issues/9304: Lightning 1.4, no fetch action
        let pl14 = "FIT Profiler Report\n\nAction                                  |  Mean duration (s)    |Num calls              |  Total time (s)       |  Percentage %         |\n--------------------------------------------------------------------------------------------------------------------------------------\nTotal                                   |  -                    |_                      |  65.955               |  100 %                |\n--------------------------------------------------------------------------------------------------------------------------------------\nrun_training_epoch                      |  5.9453               |10                     |  59.453               |  90.142               |\nrun_training_batch                      |  0.036441             |1320                   |  48.102               |  72.932               |\n";
        let r = lightning_report(pl14).unwrap();
        assert_eq!(r.total_s, Some(65.955));
        assert_eq!(r.actions.len(), 2);
        assert!(r.train_fetch().is_none());
        // the producer's own form (simple.py summary, extended): tabs before each bar
        let own = "FIT Profiler Report\n\n-------------------------------------------------------------\n|  Action                                     \t|  Mean duration (s)\t|  Num calls      \t|  Total time (s) \t|  Percentage %   \t|\n-------------------------------------------------------------\n|  Total                                      \t|  -              \t|  40             \t|  10.0           \t|  100 %          \t|\n-------------------------------------------------------------\n|  [_TrainingEpochLoop].train_dataloader_next \t|  0.05           \t|  20             \t|  1.0            \t|  10.0           \t|\n";
        let r = lightning_report(own).unwrap();
        assert_eq!(r.train_fetch().unwrap().share, Some(0.1));
        // not a report: a markdown table of something else
        assert!(lightning_report("Name | Value\n--- | ---\nlr | 0.1\n").is_none());
    }
}
