//! `iostat -x` (sysstat's extended device statistics), read from its producer: sysstat's
//! `iostat.c` (github.com/sysstat/sysstat, read at c1eb661a), `write_disk_stat_header` and
//! `write_ext_stat`. People paste it beside a training whose GPU waits for data, to show the
//! disk under the dataset.
//!
//! Every report prints a header, then one row per device:
//!
//! ```text
//! printf("Device       ");                                   (not in --pretty mode)
//! printf("     r/s    %sr%s/s   rrqm/s  %%rrqm r_await rareq-sz", spc, units);   units kB, MB, sec
//! printf("     w/s    %sw%s/s   wrqm/s  %%wrqm w_await wareq-sz", spc, units);
//! printf("     d/s    %sd%s/s   drqm/s  %%drqm d_await dareq-sz", spc, units);
//! printf("     f/s f_await  aqu-sz  %%util");
//! ```
//!
//! (sysstat 12 and later), each value a `cprintf_f(…, 2)`: two decimals, in the locale's decimal
//! separator. `-s` prints the short form `tps kB/s rqm/s await areq-sz aqu-sz %util`; sysstat
//! before 12 printed `Device:  rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await r_await
//! w_await svctm %util`. The reader takes the columns by their header names, so all three read
//! the same:
//!
//! - `await_ms`: the mean time an IO spent queued and served. Old releases and `-s` print it as
//!   `await`; sysstat 12 prints it per direction (`r_await = rd_ticks / rd_ios` over the
//!   interval, likewise `w_await`), so it is their mean weighted by `r/s` and `w/s`, which is
//!   the `(rd_ticks + wr_ticks) / (rd_ios + wr_ios)` the old `await` printed and the
//!   `diskstats` probe computes from `/proc/diskstats` (0 without IO, as both do);
//! - `util_pct`: `%util`, the share of the interval the device was busy (`xds->util / 10.0`);
//! - `read_per_s`, `write_per_s`, `read_mb_s` (from `rkB/s`, `rMB/s` or `rsec/s`),
//!   `read_size_kb` (`rareq-sz`, kB since sysstat 12) and `queue` (`aqu-sz`, `avgqu-sz`).
//!
//! `iostat -x 1` prints a report per interval, the first one averaged since boot: where a
//! device is in several reports its last row is read. `--pretty` (the name after the values)
//! and `-o JSON` are not read; the basic report (`tps kB_read/s …`, no `%util`) has no latency
//! and is not this kind.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Iostat {
    /// One entry per device, its last report's row, in the order first listed.
    pub devices: Vec<Device>,
    /// Reports (headers) read.
    pub reports: usize,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Device {
    pub device: String,
    pub await_ms: f64,
    pub util_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_await_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_await_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_mb_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_size_kb: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<f64>,
}

/// The column names of an extended header (`Device` or `Device:` first, then `%util` and an
/// await column among them); `None` for any other line.
fn header(line: &str) -> Option<Vec<String>> {
    let mut w = line.split_whitespace();
    let first = w.next()?;
    if first != "Device" && first != "Device:" {
        return None;
    }
    let cols: Vec<String> = w.map(str::to_string).collect();
    let has = |n: &str| cols.iter().any(|c| c == n);
    (has("%util") && (has("await") || has("r_await"))).then_some(cols)
}

/// A value as `cprintf_f` prints it: digits, the decimal separator (`.` or a locale's `,`) and
/// two decimals.
fn value(tok: &str) -> Option<f64> {
    let (int, frac) = tok.split_once(['.', ','])?;
    if int.is_empty()
        || frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    format!("{int}.{frac}")
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
}

/// A device name as the kernel and sysstat print it (`sda`, `nvme0n1`, `dm-0`, `md127`,
/// `rbd0`, an `-N` mapper name): no value of a column.
fn is_device(tok: &str) -> bool {
    !tok.is_empty()
        && tok.len() <= 64
        && tok.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && tok
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:".contains(c))
}

fn row(cols: &[String], line: &str) -> Option<Device> {
    let mut w = line.split_whitespace();
    let name = w.next()?;
    if !is_device(name) {
        return None;
    }
    let vals: Vec<f64> = w.map(value).collect::<Option<Vec<f64>>>()?;
    if vals.len() != cols.len() {
        return None;
    }
    let get = |n: &str| cols.iter().position(|c| c == n).map(|i| vals[i]);
    let util = get("%util")?;
    let (r, wr) = (get("r/s"), get("w/s"));
    let (ra, wa) = (get("r_await"), get("w_await"));
    let await_ms = match get("await") {
        Some(a) => a,
        None => {
            let (r, ra) = (r.unwrap_or(0.0), ra.unwrap_or(0.0));
            let (wr, wa) = (wr.unwrap_or(0.0), wa.unwrap_or(0.0));
            if r + wr > 0.0 {
                (r * ra + wr * wa) / (r + wr)
            } else {
                0.0
            }
        }
    };
    let read_mb_s = get("rMB/s")
        .or_else(|| get("rkB/s").map(|k| k / 1024.0))
        .or_else(|| get("rsec/s").map(|s| s * 512.0 / 1048576.0));
    // rareq-sz is in kB since sysstat 12; the old avgrq-sz counted sectors of both directions
    let read_size_kb = get("rareq-sz");
    Some(Device {
        device: name.to_string(),
        await_ms,
        util_pct: util,
        read_per_s: r,
        write_per_s: wr,
        read_await_ms: ra,
        write_await_ms: wa,
        read_mb_s,
        read_size_kb,
        queue: get("aqu-sz").or_else(|| get("avgqu-sz")),
    })
}

pub fn parse_iostat(text: &str) -> Iostat {
    let mut out = Iostat::default();
    let mut cols: Option<Vec<String>> = None;
    for line in text.lines() {
        if let Some(c) = header(line) {
            cols = Some(c);
            out.reports += 1;
            continue;
        }
        let Some(c) = cols.as_deref() else { continue };
        match row(c, line) {
            Some(d) => {
                if let Some(old) = out.devices.iter_mut().find(|o| o.device == d.device) {
                    *old = d;
                } else if out.devices.len() < super::MAX_ITEMS {
                    out.devices.push(d);
                }
            }
            // a blank line or the next `avg-cpu:` block ends the report
            None => {
                if line.trim().is_empty() || line.trim_start().starts_with("avg-cpu") {
                    cols = None;
                }
            }
        }
    }
    out
}

/// The text holds an extended header with a device row under it.
pub fn looks_like_iostat(text: &str) -> bool {
    let mut cols: Option<Vec<String>> = None;
    for line in text.lines().take(400) {
        if let Some(c) = header(line) {
            cols = Some(c);
        } else if let Some(c) = cols.as_deref()
            && row(c, line).is_some()
        {
            return true;
        }
    }
    false
}

impl Iostat {
    /// The device the paste shows busiest: the highest `%util`, then the longest await.
    pub fn busiest(&self) -> Option<&Device> {
        self.devices.iter().max_by(|a, b| {
            a.util_pct
                .total_cmp(&b.util_pct)
                .then(a.await_ms.total_cmp(&b.await_ms))
        })
    }
}

pub struct IostatKind;

impl super::EvidenceKind for IostatKind {
    fn name(&self) -> &'static str {
        "iostat"
    }
    fn doc(&self) -> &'static str {
        "`iostat -x` (sysstat) extended device statistics: per device await, %util, reads and queue, the last report of each"
    }
    fn example(&self) -> &'static str {
        "iostat -x 1 3"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "devices",
                "device, await_ms (await, or r_await and w_await weighted by r/s and w/s), util_pct, read_per_s, write_per_s, read_await_ms, write_await_ms, read_mb_s, read_size_kb, queue",
            ),
            (
                "reports",
                "reports (headers) read; a device's last row is kept",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["diskstats"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_iostat(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_iostat(text);
        if v.devices.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `iostat -x` device row under a `Device … %util` header in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // h145: saucejiang.ink's "typical IO blockage" sample (sysstat 12, -m): a spinning disk
    // saturated by small reads
    const BLOG: &str = "Device            r/s     rMB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wMB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dMB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\nsda            382.50      9.45    14.50   3.65   38.86    25.31    4.50      0.94   235.50  98.12   47.78   213.33    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00   15.08  93.40\n";

    #[test]
    fn reads_the_batch_sample_by_its_column_names() {
        assert!(looks_like_iostat(BLOG));
        let v = parse_iostat(BLOG);
        assert_eq!(v.reports, 1);
        let d = &v.devices[0];
        assert_eq!(d.device, "sda");
        assert_eq!(d.util_pct, 93.40);
        assert_eq!((d.read_per_s, d.write_per_s), (Some(382.50), Some(4.50)));
        assert_eq!(
            (d.read_await_ms, d.write_await_ms),
            (Some(38.86), Some(47.78))
        );
        // (382.5 * 38.86 + 4.5 * 47.78) / 387
        assert!((d.await_ms - 38.9637).abs() < 1e-3, "{}", d.await_ms);
        assert_eq!(d.read_mb_s, Some(9.45));
        assert_eq!(d.read_size_kb, Some(25.31));
        assert_eq!(d.queue, Some(15.08));
        assert_eq!(v.busiest().unwrap().device, "sda");
    }

    #[test]
    fn old_and_short_forms_and_the_last_report() {
        // sysstat before 12 (`Device:`, await and avgqu-sz), two reports: the second is kept
        let t = "Linux 3.10.0 (node1) \t01/02/2020 \t_x86_64_\t(40 CPU)\n\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n           3.10    0.00    1.00   20.00    0.00   75.90\n\nDevice:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util\nsda               0.10     1.00    5.00    2.00   200.00    40.00    68.57     0.01    1.20    1.00    1.70   0.50   0.35\nsdb               0.00     0.00    1.00    0.00    10.00     0.00    20.00     0.00    0.50    0.50    0.00   0.40   0.04\n\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n           2.00    0.00    1.00   60.00    0.00   37.00\n\nDevice:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util\nsda               0.00     0.00    4.00    0.00    16.00     0.00     8.00     0.00    0.75    0.75    0.00   0.75   0.30\nsdb               0.00     0.00  640.00    0.00  5120.00     0.00    16.00    31.90   98.40   98.40    0.00   1.56 100.00\n";
        assert!(looks_like_iostat(t));
        let v = parse_iostat(t);
        assert_eq!(v.reports, 2);
        assert_eq!(v.devices.len(), 2);
        let b = v.busiest().unwrap();
        assert_eq!(
            (b.device.as_str(), b.util_pct, b.await_ms),
            ("sdb", 100.0, 98.40)
        );
        assert_eq!(b.read_mb_s, Some(5.0));
        assert_eq!(b.queue, Some(31.90));
        // -s, a locale's decimal comma
        let t = "Device             tps      kB/s    rqm/s   await  areq-sz  aqu-sz  %util\nnvme0n1        12,00    480,00     0,00    0,17    40,00    0,00   0,80\n";
        let v = parse_iostat(t);
        assert_eq!(v.devices[0].await_ms, 0.17);
        assert_eq!(v.devices[0].util_pct, 0.80);
    }

    #[test]
    fn a_device_without_io_waits_zero() {
        let t = "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\nloop0            0.00      0.00     0.00   0.00    0.00     0.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00    0.00   0.00\n";
        let v = parse_iostat(t);
        assert_eq!((v.devices[0].await_ms, v.devices[0].util_pct), (0.0, 0.0));
        assert_eq!(v.devices[0].read_mb_s, Some(0.0));
    }

    #[test]
    fn other_tables_are_not_iostat() {
        for t in [
            // the basic report: no %util, no await
            "Device             tps    kB_read/s    kB_wrtn/s    kB_dscd/s    kB_read    kB_wrtn    kB_dscd\nsda               5.73       141.61        45.28         0.00    1234567     456789          0\n",
            // the header alone, a description of the columns, prose
            "Device            r/s     rkB/s   r_await  %util\n",
            "Device r/s w/s r_await %util are the columns iostat -x prints\n",
            "The device was at 93.40 %util with r_await 38.86 ms\n",
            // a row whose values do not match the header
            "Device  r/s  r_await  %util\nsda  1.00  2.00\n",
            // nvidia-smi's process table
            "|    0   N/A  N/A     12345      C   python                         4514MiB |\n",
        ] {
            assert!(!looks_like_iostat(t), "{t}");
        }
        assert!(parse_iostat("nothing\n").devices.is_empty());
    }
}
