//! `diskstats` (sampled): block device latency, utilization and throughput from two readings of
//! `/proc/diskstats` over the `--sample` window, the way `iostat -x` computes them; and, from a
//! pasted `iostat -x` ([`crate::evidence::iostat`], `--evidence`), the same figures as sysstat
//! printed them for another machine's devices (`pasted`: the busiest device listed).

use super::mounts::{mount_for_path, parse_mounts};
use super::{Probe, ProbeCtx, ProbeOutcome, read_text};
use crate::host::Host;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub struct Diskstats;

/// The counters of one `/proc/diskstats` line (fields 4-14; later discard/flush fields are
/// not used).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskStat {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    pub in_flight: u64,
    pub io_ms: u64,
    pub weighted_ms: u64,
}

/// Parse `/proc/diskstats`, keyed by device name; short or malformed lines are skipped.
pub fn parse_diskstats(text: &str) -> BTreeMap<String, DiskStat> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let n: Vec<u64> = f[3..14].iter().filter_map(|v| v.parse().ok()).collect();
        if n.len() != 11 {
            continue;
        }
        let (Ok(major), Ok(minor)) = (f[0].parse(), f[1].parse()) else {
            continue;
        };
        out.insert(
            f[2].to_string(),
            DiskStat {
                major,
                minor,
                name: f[2].to_string(),
                reads: n[0],
                reads_merged: n[1],
                sectors_read: n[2],
                read_ms: n[3],
                writes: n[4],
                writes_merged: n[5],
                sectors_written: n[6],
                write_ms: n[7],
                in_flight: n[8],
                io_ms: n[9],
                weighted_ms: n[10],
            },
        );
    }
    out
}

/// Rates between two readings over `secs` seconds, as iostat -x computes them (`await` is the
/// mean time an IO spent queued and served; MB are MiB, sectors are 512 bytes).
pub fn rates(a: &DiskStat, b: &DiskStat, secs: f64) -> Map<String, Value> {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let reads = d(a.reads, b.reads);
    let writes = d(a.writes, b.writes);
    let rms = d(a.read_ms, b.read_ms);
    let wms = d(a.write_ms, b.write_ms);
    let per = |ms: f64, n: f64| if n > 0.0 { ms / n } else { 0.0 };
    let mut m = Map::new();
    m.insert("await_ms".into(), json!(per(rms + wms, reads + writes)));
    m.insert("read_await_ms".into(), json!(per(rms, reads)));
    m.insert("write_await_ms".into(), json!(per(wms, writes)));
    let util = (d(a.io_ms, b.io_ms) / (secs * 1000.0) * 100.0).min(100.0);
    m.insert("util_pct".into(), json!(util));
    let mib = 1024.0 * 1024.0;
    m.insert(
        "read_mb_s".into(),
        json!(d(a.sectors_read, b.sectors_read) * 512.0 / mib / secs),
    );
    m.insert(
        "write_mb_s".into(),
        json!(d(a.sectors_written, b.sectors_written) * 512.0 / mib / secs),
    );
    m.insert("iops".into(), json!((reads + writes) / secs));
    m
}

fn counters(s: &DiskStat) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("reads".into(), json!(s.reads));
    m.insert("writes".into(), json!(s.writes));
    m.insert("sectors_read".into(), json!(s.sectors_read));
    m.insert("sectors_written".into(), json!(s.sectors_written));
    m.insert("read_ms".into(), json!(s.read_ms));
    m.insert("write_ms".into(), json!(s.write_ms));
    m.insert("io_ms".into(), json!(s.io_ms));
    m.insert("in_flight".into(), json!(s.in_flight));
    m
}

/// The whole disk a partition belongs to: `vda1` -> `vda`, `nvme0n1p1` -> `nvme0n1`,
/// `mmcblk0p2` -> `mmcblk0`. None when `name` does not look like a partition.
pub fn parent_disk(name: &str) -> Option<String> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.len() == name.len() || base.is_empty() {
        return None;
    }
    if (name.starts_with("nvme") || name.starts_with("mmcblk") || name.starts_with("loop"))
        && base.ends_with('p')
    {
        let disk = &base[..base.len() - 1];
        return (!disk.is_empty()).then(|| disk.to_string());
    }
    if name.starts_with("nvme") || name.starts_with("mmcblk") || name.starts_with("dm-") {
        return None; // nvme0n1 and dm-0 are whole devices
    }
    Some(base.to_string())
}

/// The diskstats name of a mount source, best effort: `/dev/vda1` -> `vda1`, a symlink such as
/// `/dev/mapper/vg-data` or `/dev/disk/by-uuid/...` -> its target (`dm-0`).
fn device_name(
    host: &dyn Host,
    source: &str,
    stats: &BTreeMap<String, DiskStat>,
) -> Option<String> {
    let dev = source.strip_prefix("/dev/")?;
    if stats.contains_key(dev) {
        return Some(dev.to_string());
    }
    let target = host.read_link(source).ok()?;
    let name = target.rsplit('/').next()?.to_string();
    stats.contains_key(&name).then_some(name)
}

/// Parameters of the `diskstats` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiskstatsParams {
    /// Report the device holding this path as `for_path`.
    #[serde(default)]
    pub path: Option<String>,
}

impl Probe for Diskstats {
    type Params = DiskstatsParams;
    fn name(&self) -> &'static str {
        "diskstats"
    }
    fn doc(&self) -> &'static str {
        "Block device await, utilization and throughput from /proc/diskstats over the sample window."
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "window_s",
                "seconds between the two readings (0: counters only)",
            ),
            (
                "devices.NAME.reads / writes / sectors_read / sectors_written / read_ms / write_ms / io_ms / in_flight",
                "raw counters of the last reading",
            ),
            (
                "devices.NAME.await_ms",
                "mean ms per IO over the window (iostat `await`); also read_await_ms, write_await_ms",
            ),
            (
                "devices.NAME.util_pct",
                "percent of the window the device was busy (iostat `%util`)",
            ),
            (
                "devices.NAME.read_mb_s / write_mb_s",
                "MiB/s over the window",
            ),
            ("devices.NAME.iops", "reads plus writes per second"),
            (
                "for_path",
                "with `path`: {device, mount_point, fstype, disk?, ...the device's fields}; for a partition `disk` names the whole disk",
            ),
            (
                "pasted",
                "from a pasted `iostat -x` (--evidence): the busiest device listed (highest %util, then await) as {device, file, listed (devices in the paste), reports, await_ms, util_pct, read_per_s?, write_per_s?, read_await_ms?, write_await_ms?, read_mb_s?, read_size_kb?, queue?}; which device holds the data the paste does not say",
            ),
            (
                "unavailable",
                "why rates or for_path are missing (zero window, not a block device)",
            ),
        ]
    }
    fn sampled(&self) -> bool {
        true
    }
    fn run(&self, params: &DiskstatsParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let host = ctx.host;
        let pasted = pasted_iostat(&ctx.inputs.evidence);
        let read = || read_text(host, "/proc/diskstats").map(|t| parse_diskstats(&t));
        let t0 = host.now();
        let first = match read() {
            Ok(s) => s,
            // another machine's paste stands without this host's counters
            Err(e) => {
                return match pasted {
                    Some(p) => ProbeOutcome::Value(json!({
                        "pasted": p,
                        "unavailable": {"devices": e.to_string()},
                    })),
                    None => e.into(),
                };
            }
        };
        let mut unavailable = Map::new();
        let (last, secs) = if ctx.sample.is_zero() {
            unavailable.insert(
                "rates".into(),
                json!("the sample window is zero: only counters were read (use --sample)"),
            );
            (first.clone(), 0.0)
        } else {
            host.sleep(ctx.sample);
            let t1 = host.now();
            let second = match read() {
                Ok(s) => s,
                Err(e) => return e.into(),
            };
            // Live hosts measure the real interval; recorded ones replay the nominal window.
            let measured = t1 - t0;
            let secs = if measured > 0.0 {
                measured
            } else {
                ctx.sample.as_secs_f64()
            };
            (second, secs)
        };
        let mut devices = Map::new();
        for (name, s) in &last {
            let mut m = counters(s);
            if secs > 0.0 {
                if let Some(a) = first.get(name) {
                    m.extend(rates(a, s, secs));
                }
            }
            devices.insert(name.clone(), Value::Object(m));
        }
        let mut out = Map::new();
        out.insert("window_s".into(), json!(secs));
        if let Some(path) = params.path.as_deref() {
            match for_path(host, path, &devices, &last) {
                Ok(v) => {
                    out.insert("for_path".into(), v);
                }
                Err(why) => {
                    unavailable.insert("for_path".into(), json!(why.to_string()));
                }
            }
        }
        out.insert("devices".into(), Value::Object(devices));
        if let Some(p) = pasted {
            out.insert("pasted".into(), p);
        }
        if !unavailable.is_empty() {
            out.insert("unavailable".into(), Value::Object(unavailable));
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

/// The busiest device of the pasted `iostat -x` reports (every paste's devices together):
/// highest `%util`, then the longest await, with the file it came from and how many devices the
/// pastes list. `None` without such a paste.
fn pasted_iostat(evidence: &[std::path::PathBuf]) -> Option<Value> {
    use crate::evidence::iostat::{self, IostatKind};
    let mut best: Option<(String, usize, iostat::Device)> = None;
    let mut listed = 0;
    for (p, t) in super::inputs::evidence_of(evidence, &IostatKind) {
        let v = iostat::parse_iostat(&t);
        listed += v.devices.len();
        if let Some(d) = v.busiest()
            && best
                .as_ref()
                .is_none_or(|(_, _, b)| (d.util_pct, d.await_ms) > (b.util_pct, b.await_ms))
        {
            best = Some((p.display().to_string(), v.reports, d.clone()));
        }
    }
    let (file, reports, d) = best?;
    let mut o = match serde_json::to_value(&d) {
        Ok(Value::Object(o)) => o,
        _ => return None,
    };
    o.insert("file".into(), json!(file));
    o.insert("listed".into(), json!(listed));
    o.insert("reports".into(), json!(reports));
    Some(Value::Object(o))
}

/// Why `for_path` is unavailable: its field says so, the rest of the probe's value stands.
#[derive(Debug, thiserror::Error)]
enum ForPathError {
    #[error(transparent)]
    Read(#[from] super::HostReadError),
    #[error("no mount holds `{0}`")]
    NoMount(String),
    #[error(
        "`{device}` (mounted at `{mount_point}`, {fstype}) is not a block device in /proc/diskstats"
    )]
    NotBlock {
        device: String,
        mount_point: String,
        fstype: String,
    },
}

fn for_path(
    host: &dyn Host,
    path: &str,
    devices: &Map<String, Value>,
    stats: &BTreeMap<String, DiskStat>,
) -> Result<Value, ForPathError> {
    let mounts = parse_mounts(&read_text(host, "/proc/mounts")?);
    let m = mount_for_path(&mounts, path).ok_or_else(|| ForPathError::NoMount(path.to_string()))?;
    let name = device_name(host, &m.device, stats).ok_or_else(|| ForPathError::NotBlock {
        device: m.device.clone(),
        mount_point: m.mount_point.clone(),
        fstype: m.fstype.clone(),
    })?;
    let mut o = Map::new();
    o.insert("device".into(), json!(name));
    o.insert("mount_point".into(), json!(m.mount_point));
    o.insert("fstype".into(), json!(m.fstype));
    if let Some(disk) = parent_disk(&name).filter(|d| stats.contains_key(d)) {
        o.insert("disk".into(), json!(disk));
    }
    if let Some(Value::Object(d)) = devices.get(&name) {
        o.extend(d.clone());
    }
    Ok(Value::Object(o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::{Inputs, run_with, value_of};
    use std::time::Duration;

    const T0: &str = " 254       0 vda 2858 912 1286578 1526 34 0 480 2 0 768 1530 8 0 296 0 7 0\n\
                      254       1 vda1 100 0 800 100 0 0 0 0 0 50 100 0 0 0 0 0 0\n\
                      7 0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    // One second later: 100 reads taking 6000 ms in all, 2048 sectors (1 MiB), busy 950 ms.
    const T1: &str = " 254       0 vda 2958 912 1288626 7526 34 0 480 2 0 1718 1530 8 0 296 0 7 0\n\
                      254       1 vda1 100 0 800 100 0 0 0 0 0 50 100 0 0 0 0 0 0\n\
                      7 0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    fn host() -> SnapshotHost {
        let mut h = SnapshotHost::empty();
        h.set_file_sequence("/proc/diskstats", &[T0, T1]);
        h.set_file("/proc/mounts", "/dev/vda / ext4 rw,relatime 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n/dev/vda1 /boot ext4 rw 0 0\n");
        h.set_now(vec![100.0, 101.0]);
        h
    }

    #[test]
    fn computes_iostat_style_rates_over_the_window() {
        let v = value_of(run_with(
            &Diskstats,
            &host(),
            json!({"path": "/data"}),
            &Inputs::default(),
            Duration::from_secs(1),
        ));
        let vda = &v["devices"]["vda"];
        assert_eq!(vda["await_ms"], json!(60.0));
        assert_eq!(vda["read_await_ms"], json!(60.0));
        assert_eq!(vda["write_await_ms"], json!(0.0));
        assert_eq!(vda["util_pct"], json!(95.0));
        assert_eq!(vda["read_mb_s"], json!(1.0));
        assert_eq!(vda["iops"], json!(100.0));
        assert_eq!(v["for_path"]["device"], json!("vda"));
        assert_eq!(v["for_path"]["await_ms"], json!(60.0));
        assert!(v.get("unavailable").is_none());
    }

    #[test]
    fn zero_window_reports_counters_only() {
        let v = value_of(run_with(
            &Diskstats,
            &host(),
            json!({}),
            &Inputs::default(),
            Duration::ZERO,
        ));
        assert_eq!(v["devices"]["vda"]["reads"], json!(2858));
        assert!(v["devices"]["vda"].get("await_ms").is_none());
        assert!(v["unavailable"]["rates"].as_str().unwrap().contains("zero"));
    }

    #[test]
    fn partitions_and_non_block_mounts() {
        let h = host();
        let v = value_of(run_with(
            &Diskstats,
            &h,
            json!({"path": "/boot/grub"}),
            &Inputs::default(),
            Duration::from_secs(1),
        ));
        assert_eq!(v["for_path"]["device"], json!("vda1"));
        assert_eq!(v["for_path"]["disk"], json!("vda"));
        let v = value_of(run_with(
            &Diskstats,
            &host(),
            json!({"path": "/dev/shm/x"}),
            &Inputs::default(),
            Duration::from_secs(1),
        ));
        assert!(v.get("for_path").is_none());
        assert!(
            v["unavailable"]["for_path"]
                .as_str()
                .unwrap()
                .contains("`tmpfs`"),
            "{v}"
        );
    }

    #[test]
    fn parent_disk_names() {
        assert_eq!(parent_disk("vda1").as_deref(), Some("vda"));
        assert_eq!(parent_disk("sdb12").as_deref(), Some("sdb"));
        assert_eq!(parent_disk("nvme0n1p1").as_deref(), Some("nvme0n1"));
        assert_eq!(parent_disk("nvme0n1"), None);
        assert_eq!(parent_disk("dm-0"), None);
        assert_eq!(parent_disk("vda"), None);
    }

    #[test]
    fn device_mapper_sources_resolve_through_their_link() {
        let mut h = SnapshotHost::empty();
        h.set_file_sequence(
            "/proc/diskstats",
            &[
                "253 0 dm-0 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0\n",
                "253 0 dm-0 20 0 160 10 0 0 0 0 0 10 10 0 0 0 0\n",
            ],
        );
        h.set_file("/proc/mounts", "/dev/mapper/vg-data /data xfs rw 0 0\n");
        h.set_link("/dev/mapper/vg-data", "../dm-0");
        let v = value_of(run_with(
            &Diskstats,
            &h,
            json!({"path": "/data"}),
            &Inputs::default(),
            Duration::from_secs(1),
        ));
        assert_eq!(v["for_path"]["device"], json!("dm-0"));
        assert_eq!(v["for_path"]["await_ms"], json!(0.5));
    }

    #[test]
    fn a_pasted_iostat_stands_for_another_machine_s_disks() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
        let inputs = Inputs {
            evidence: vec![dir.join("h145_iostat_saucejiang_hdd_small_files_util93.txt")],
            ..Inputs::default()
        };
        // no host to read (--no-system): the paste alone
        let alone = crate::host::evidence::EvidenceHost::inputs_only("no local driver");
        let v = value_of(run_with(
            &Diskstats,
            &alone,
            json!({"path": "/"}),
            &inputs,
            Duration::ZERO,
        ));
        let p = &v["pasted"];
        assert_eq!(p["device"], json!("sda"));
        assert_eq!(p["util_pct"], json!(93.4));
        assert_eq!(
            (p["listed"].clone(), p["reports"].clone()),
            (json!(1), json!(1))
        );
        assert!(p["file"].as_str().unwrap().ends_with("util93.txt"));
        assert!(v["unavailable"]["devices"].is_string());
        assert!(v.get("for_path").is_none());
        // beside a host that answers, both are given
        let v = value_of(run_with(
            &Diskstats,
            &host(),
            json!({"path": "/"}),
            &inputs,
            Duration::from_secs(1),
        ));
        assert_eq!(v["for_path"]["device"], json!("vda"));
        assert_eq!(v["pasted"]["device"], json!("sda"));
        // without a paste, nothing is pasted
        let v = value_of(run_with(
            &Diskstats,
            &host(),
            json!({"path": "/"}),
            &Inputs::default(),
            Duration::from_secs(1),
        ));
        assert!(v.get("pasted").is_none());
    }
}
