//! The job's own progress, read from its training log as it grows (`gpufix record --log FILE`):
//! the rate the job prints, one point per sample in which a new rate appeared.
//!
//! Written from the producers' own source:
//! - tqdm's progress bar, `tqdm/std.py` `tqdm.format_meter` (tqdm 4.x): `rate_noinv_fmt` is
//!   `'{0:5.2f}'.format(rate)` (or `format_sizeof(rate)` with `unit_scale`, which adds a
//!   `k`/`M`/`G`… suffix) followed by `unit + '/s'` (`unit` is `it` unless the caller set
//!   another); `rate_inv_fmt`, printed when a step takes more than a second, is the seconds per
//!   unit followed by `'s/' + unit`. tqdm rewrites its line with `\r`, so both `\r` and `\n` end
//!   a line here. A bar whose rate is still unknown prints `?` and is skipped.
//! - the Hugging Face Trainer's speed metrics, `transformers/trainer_utils.py` `speed_metrics`:
//!   `{split}_samples_per_second` and `{split}_steps_per_second` (rounded to 3 places), logged
//!   as a Python dict (`'train_samples_per_second': 12.3`) or JSON. Its per-step log lines
//!   (`{'loss': …, 'learning_rate': …, 'epoch': …}`) carry no rate; its tqdm bar does.
//!
//! The first unit seen is the series' unit; a rate in another unit later is not mixed in.
//! Bounded: at most `MAX_READ` new bytes a sample (a log that grew more is read from its
//! newest part), a partial line of at most `MAX_LINE` bytes kept.

use crate::vocab::record::ProgressSeries;
use regex::Regex;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::LazyLock;

const MAX_READ: u64 = 1 << 20;
const MAX_LINE: usize = 64 << 10;

/// tqdm's `rate_noinv_fmt` and `rate_inv_fmt` (`5.2f`, an optional `format_sizeof` suffix,
/// tqdm 5's space before the unit).
static TQDM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[\s,\[|])(\d+(?:\.\d+)?)(?: ?([kMGTPEZY]))? ?(s/)?([A-Za-z_]{1,16})(/s)?(?:[\],\s]|$)",
    )
    .unwrap()
});

/// The Trainer's `speed_metrics` keys.
static HF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"['"][a-z]+_(samples|steps)_per_second['"]\s*:\s*(\d+(?:\.\d+)?)"#).unwrap()
});

/// One rate read from one line: (value, unit as the job prints it, `it/s`).
pub fn rate_of(line: &str) -> Option<(f64, String)> {
    if let Some(c) = HF.captures(line) {
        let v: f64 = c[2].parse().ok()?;
        return Some((v, format!("{}/s", &c[1])));
    }
    // the last rate on the line (tqdm's postfix can carry numbers before it)
    let mut found = None;
    for c in TQDM.captures_iter(line) {
        let inv = c.get(3).is_some();
        let per_s = c.get(5).is_some();
        // `1.9it/s` or `1.01s/it`, never both or neither
        if inv == per_s {
            continue;
        }
        let Ok(mut v) = c[1].parse::<f64>() else {
            continue;
        };
        let scale = match c.get(2).map(|m| m.as_str()) {
            None => 1.0,
            Some("k") => 1e3,
            Some("M") => 1e6,
            Some("G") => 1e9,
            Some("T") => 1e12,
            Some(_) => 1e15,
        };
        v *= scale;
        if inv {
            if v <= 0.0 {
                continue;
            }
            v = 1.0 / v;
        }
        found = Some(((v * 1000.0).round() / 1000.0, format!("{}/s", &c[4])));
    }
    found
}

/// A training log followed from where it was when the recording started.
pub struct Tail {
    path: PathBuf,
    offset: Option<u64>,
    partial: String,
    unit: Option<String>,
    t: Vec<f64>,
    rate: Vec<Option<f64>>,
    /// Why the log could not be read, for the file's notes.
    pub problem: Option<String>,
}

impl Tail {
    pub fn new(path: PathBuf) -> Tail {
        Tail {
            path,
            offset: None,
            partial: String::new(),
            unit: None,
            t: Vec::new(),
            rate: Vec::new(),
            problem: None,
        }
    }

    /// Read what the log gained since the last sample; a new rate becomes a point at `t`.
    pub fn read(&mut self, t: f64) {
        match self.new_text() {
            Ok(text) => {
                self.problem = None;
                let mut last = None;
                let all = std::mem::take(&mut self.partial) + &text;
                let mut lines: Vec<&str> = all.split(['\n', '\r']).collect();
                let rest = lines.pop().unwrap_or_default().to_string();
                for l in lines {
                    if let Some((v, unit)) = rate_of(l) {
                        if self.unit.get_or_insert_with(|| unit.clone()) == &unit {
                            last = Some(v);
                        }
                    }
                }
                self.partial = if rest.len() > MAX_LINE {
                    String::new()
                } else {
                    rest
                };
                if let Some(v) = last {
                    self.t.push(t);
                    self.rate.push(Some(v));
                }
            }
            Err(e) => self.problem = Some(format!("progress not read: {e}")),
        }
    }

    /// What the log gained since the last reading. An error keeps its kind and names the file.
    fn new_text(&mut self) -> std::io::Result<String> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = self.path.display();
        let at = |e: std::io::Error| std::io::Error::new(e.kind(), format!("{p}: {e}"));
        // the last component is not followed, and a FIFO cannot block the recording
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&self.path)
            .map_err(at)?;
        let m = f.metadata().map_err(at)?;
        if !m.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{p} is not a regular file"),
            ));
        }
        let len = m.len();
        // the first reading starts at the end: what the job prints from now on
        let from = match self.offset {
            None => {
                self.offset = Some(len);
                return Ok(String::new());
            }
            // truncated or rotated: start again from its beginning
            Some(o) if o > len => 0,
            Some(o) => o.max(len.saturating_sub(MAX_READ)),
        };
        f.seek(SeekFrom::Start(from)).map_err(at)?;
        let mut buf = Vec::new();
        f.take(MAX_READ).read_to_end(&mut buf).map_err(at)?;
        self.offset = Some(from + buf.len() as u64);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    pub fn series(&self) -> Option<ProgressSeries> {
        let unit = self.unit.clone()?;
        Some(ProgressSeries {
            source: crate::privacy::redact_text(&self.path.display().to_string()).into_owned(),
            unit,
            t: self.t.clone(),
            rate: self.rate.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tqdm_and_trainer_rates_are_read_as_printed() {
        let cases: &[(&str, Option<(f64, &str)>)] = &[
            // tqdm 4 default bar
            (
                "Epoch 0:   3%|▎  | 10/300 [00:05<02:30,  1.90it/s, loss=2.3]",
                Some((1.9, "it/s")),
            ),
            // rate_inv_fmt: more than a second a step
            (
                " 70%|███████   | 70/100 [01:10<00:30,  1.25s/it]",
                Some((0.8, "it/s")),
            ),
            // unit_scale with a unit of its own
            (
                "100%|██████████| 5.00k/5.00k [00:02<00:00, 2.31kimg/s]",
                Some((2310.0, "img/s")),
            ),
            // tqdm 5: a space before the unit
            (
                "10/300 [00:05<02:30, 12.50 samples/s]",
                Some((12.5, "samples/s")),
            ),
            // the rate is not known yet
            ("  0%|          | 0/300 [00:00<?, ?it/s]", None),
            // Trainer's speed metrics
            (
                "{'train_runtime': 51.2, 'train_samples_per_second': 312.471, 'train_steps_per_second': 9.765, 'epoch': 1.0}",
                Some((312.471, "samples/s")),
            ),
            (
                "{\"eval_steps_per_second\": 4.5, \"epoch\": 2}",
                Some((4.5, "steps/s")),
            ),
            // a step log line carries no rate
            (
                "{'loss': 2.3041, 'learning_rate': 4.9e-05, 'epoch': 0.02}",
                None,
            ),
        ];
        for (line, want) in cases {
            let got = rate_of(line);
            let want = want.map(|(v, u)| (v, u.to_string()));
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn a_log_is_followed_from_its_end_and_a_partial_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("train.log");
        std::fs::write(&p, "old 9.99it/s\n").unwrap();
        let mut t = Tail::new(p.clone());
        t.read(0.2);
        assert!(t.series().is_none(), "what was there before is not read");
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        write!(
            f,
            "\r 1/9 [00:01<00:08,  2.00it/s]\r 2/9 [00:01<00:07,  3.0"
        )
        .unwrap();
        t.read(0.4);
        writeln!(f, "0it/s]").unwrap();
        t.read(0.6);
        let s = t.series().unwrap();
        assert_eq!(s.unit, "it/s");
        assert_eq!(s.t, vec![0.4, 0.6]);
        assert_eq!(s.rate, vec![Some(2.0), Some(3.0)]);
    }
}
