//! PyTorch's profiler table, pasted to show where a training step spends its time, read from
//! its producer:
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
//!
//! Lightning's `SimpleProfiler.summary()` report is read by
//! `formats::job_text::lightning_profiler_report`.
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
}
