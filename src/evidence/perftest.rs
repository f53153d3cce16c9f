//! perftest output (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`, `ib_*_lat`, …), read from its
//! producer: github.com/linux-rdma/perftest at 00b55b66 (2026-07-27), `src/perftest_parameters.c`
//! and `.h`, `src/perftest_resources.c`, `src/perftest_communication.c`, `src/write_bw.c`. Every
//! test prints, once the device is open and the port checked:
//!
//! ```text
//! ---------------------------------------------------------------------------------------   RESULT_LINE
//!                     RDMA_Write BW Test                   ctx_print_test_info: testsStr[verb],
//!  Dual-port       : OFF          Device         : mlx5_0  [atomic type], [Bidirectional ],
//!  Number of qps   : 1            Transport type : IB      [Post List ], BW|Latency, Test
//!  Connection type : RC           Using SRQ      : OFF     " %-15s : %s\t\t%-14s : %s" pairs
//!  …
//!  Mtu             : 4096[B]
//!  Link type       : Ethernet                              link_layer_str(): IB | Ethernet
//!  GID index       : 3                                     only where not the default
//!  Max inline data : 0[B]                                  (Outstand reads for READ/ATOMIC)
//!  rdma_cm QPs     : OFF
//!  Data ex. method : Ethernet                              Ethernet | rdma_cm (the exchange)
//! ---------------------------------------------------------------------------------------
//!  local address: LID 0000 QPN 0x2da6 PSN 0x38f9aa RKey 0x201200 VAddr 0x007f67c0644240
//!  #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   RESULT_FMT_G
//!  65536      1765470            185.37              184.94              0.352743    REPORT_FMT
//! ```
//!
//! The unit of the bandwidth columns is `MiB/sec` (`RESULT_FMT`; `MB/sec` in releases before
//! 4.5), or `Gb/sec` with `--report_gbits` (`RESULT_FMT_G`); latency tests print
//! `#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] …` (`RESULT_FMT_LAT`)
//! or, with a duration, `#bytes #iterations t_avg[usec] tps average` (`RESULT_FMT_LAT_DUR`).
//!
//! The header is printed only after `check_link` succeeded, and `set_link_layer` fails unless
//! the port is `IBV_PORT_ACTIVE`: a printed header says the port (`-i`, default `DEF_IB_PORT` 1,
//! of the device `-d`) was Active. When it was not, the test stops before the header with
//! `" Port number %d state is %s"` (`portStates[]`: `Nop`, `Down`, `Init`, `Armed`, `Active
//! Defer`) and then `" Couldn't set the link layer"` and `" Couldn't get context for the device"`:
//! that port is read as down, like ibstat's. The connection failures (`Couldn't connect to
//! %s:%d`, `ethernet_read_keys: Couldn't read remote address`, `Unable to read to
//! socket/rdma_cm`, `Failed to exchange data between server and clients`, `Failed to modify QP
//! to RTR/RTS`, `Unable to Connect the HCA's through the link`) are kept as printed: they say a
//! test could not connect, not which port or link is at fault. The bandwidth figures depend on
//! the message size, QPs and the link's rate, which the output does not print, so no rule
//! judges them.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Perftest {
    /// The title without ` Test`: `RDMA_Write BW`, `Send Latency`, `RDMA_Read Bidirectional BW`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// `Device` of the header, else `-d`/`--ib-dev` of a command line in the paste.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `-i`/`--ib-port` of a command line in the paste (perftest's default is 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ib_port: Option<u32>,
    /// The header's `key : value` fields as printed (`Number of qps`, `Transport type`,
    /// `Connection type`, `Mtu`, `Link type`, `GID index`, `rdma_cm QPs`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header: Vec<(String, String)>,
    /// `IB` or `Ethernet` (`Link type`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_type: Option<String>,
    /// Bandwidth rows: size, iterations, peak, average, message rate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bw: Vec<BwRow>,
    /// `MiB/sec`, `MB/sec` or `Gb/sec`, from the bandwidth columns' header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bw_unit: Option<String>,
    /// Latency rows: size, iterations and the microsecond figures in the header's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatRow>,
    /// The latency columns' names (`t_min[usec]`, …), as the header printed them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_columns: Vec<String>,
    /// `Port number N state is S`: the port the test found not Active.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub port_states: Vec<PortState>,
    /// The failure lines perftest printed, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct BwRow {
    pub bytes: u64,
    pub iterations: u64,
    pub peak: f64,
    pub average: f64,
    pub msg_rate_mpps: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LatRow {
    pub bytes: u64,
    pub iterations: u64,
    pub usec: Vec<f64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PortState {
    pub port: u32,
    /// As printed: `Down`, `Init`, `Armed`, `Nop`, `Active Defer`.
    pub state: String,
}

/// `testsStr` of perftest_parameters.c.
const VERBS: &[&str] = &[
    "Send",
    "Send_imm",
    "RDMA_Write",
    "RDMA_Write_imm",
    "RDMA_Read",
    "Atomic",
];

/// The keys `ctx_print_test_info` prints (two to a line on the first lines).
const KEYS: &[&str] = &[
    "Dual-port",
    "Device",
    "Number of qps",
    "Transport type",
    "Connection type",
    "Using SRQ",
    "PCIe relax order",
    "Lock-free",
    "ibv_wr* API",
    "Using Enhanced Reorder",
    "TX depth",
    "RX depth",
    "Post List",
    "Recv Post List",
    "CQ Moderation",
    "CQE Poll Batch",
    "Mtu",
    "Link type",
    "Buffer size",
    "GID index",
    "GID index2",
    "Max inline data",
    "Outstand reads",
    "rdma_cm QPs",
    "Data ex. method",
];

/// The failure lines perftest prints on a test that cannot start or connect (stderr).
const FAILURES: &[&str] = &[
    "Couldn't set the link layer",
    "Couldn't get context for the device",
    "No IB devices found",
    "Unable to init the socket connection",
    "Unable to set up socket connection",
    "ethernet_read_keys: Couldn't read remote address",
    "Unable to read to socket/rdma_cm",
    "Unable to read from socket/rdma_cm",
    "Unable to write to socket/rdma_cm",
    "Unable to write from socket/rdma_cm",
    "Failed to exchange data between server and clients",
    "Failed to exchange date between server and clients",
    "Unable to Connect the HCA's through the link",
    "Failed to modify QP to INIT",
    "Failed to modify QP to RTS",
];

/// The failures only perftest prints: one of them marks a paste as perftest's.
const OWN_FAILURES: &[&str] = &[
    "Couldn't set the link layer",
    "ethernet_read_keys: Couldn't read remote address",
    "Unable to read to socket/rdma_cm",
    "Failed to exchange data between server and clients",
    "Failed to exchange date between server and clients",
    "Unable to Connect the HCA's through the link",
];

fn words(line: &str) -> String {
    clean(line).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `RDMA_Write BW Test` → `RDMA_Write BW`.
fn title(line: &str) -> Option<String> {
    let w = words(line);
    let body = w.strip_suffix(" Test")?;
    let mut it = body.split(' ');
    if !VERBS.contains(&it.next()?) {
        return None;
    }
    let rest: Vec<&str> = it.collect();
    let known = [
        "CMP_AND_SWAP",
        "FETCH_AND_ADD",
        "Bidirectional",
        "Post",
        "List",
        "BW",
        "Latency",
        "forwarding",
        "Multicast",
    ];
    (rest.iter().any(|x| matches!(*x, "BW" | "Latency")) && rest.iter().all(|x| known.contains(x)))
        .then(|| body.to_string())
}

/// The `key : value` fields of one header line (` Dual-port       : OFF\t\tDevice : mlx5_0`).
fn fields(line: &str) -> Vec<(String, String)> {
    let l = clean(line).trim();
    // where each known key starts, followed by spaces and a colon
    let mut starts: Vec<(usize, &str)> = Vec::new();
    for k in KEYS {
        let mut from = 0;
        while let Some(i) = l[from..].find(k) {
            let at = from + i;
            let after = l[at + k.len()..].trim_start_matches([' ', '\t']);
            let before_ok = at == 0 || l[..at].ends_with([' ', '\t']);
            if before_ok && after.starts_with(':') {
                starts.push((at, k));
            }
            from = at + k.len();
        }
    }
    starts.sort_unstable();
    // a key found inside a longer key (`Post List` in `Recv Post List`) is the longer one's
    starts.dedup_by(|b, a| b.0 < a.0 + a.1.len());
    if starts.first().map(|s| s.0) != Some(0) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (n, (at, k)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(l.len(), |s| s.0);
        let v = l[at + k.len()..end]
            .trim_start_matches([' ', '\t'])
            .trim_start_matches(':')
            .trim();
        out.push((k.to_string(), super::clip(v, 80)));
    }
    out
}

/// ` Port number 1 state is Down`.
fn port_state(line: &str) -> Option<PortState> {
    let w = words(line);
    let rest = w.strip_prefix("Port number ")?;
    let (n, state) = rest.split_once(" state is ")?;
    let state = state.trim();
    let port = n.parse().ok()?;
    (!state.is_empty() && state.len() <= 20).then(|| PortState {
        port,
        state: state.to_string(),
    })
}

fn failure(line: &str) -> Option<String> {
    let w = words(line);
    if FAILURES.contains(&w.as_str())
        || (w.starts_with("Failed to modify QP ") && w.ends_with(" to RTR"))
        || (w.starts_with("Couldn't connect to ") && w.len() < 120)
        || (w.starts_with("IB device ") && w.ends_with(" not found"))
        || (w.starts_with("Link layer on port ") && w.ends_with(" is Unknown"))
    {
        Some(super::clip(&w, 160))
    } else {
        None
    }
}

/// The columns' header: `#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]`.
enum Columns {
    Bw(String),
    Lat(Vec<String>),
}

fn columns(line: &str) -> Option<Columns> {
    let w = words(line);
    let rest = w.strip_prefix("#bytes ")?;
    let rest = rest
        .strip_prefix("#iterations ")
        .or_else(|| rest.strip_prefix("iterations "))?;
    if let Some(p) = rest.strip_prefix("BW peak[") {
        let unit = p.split(']').next()?;
        return rest
            .contains("BW average[")
            .then(|| Columns::Bw(unit.to_string()));
    }
    if rest.starts_with("t_min[usec]") || rest.starts_with("t_avg[usec]") {
        // `99% percentile[usec]` is one column of two words
        let cols = rest
            .replace("% percentile", "%_percentile")
            .replace("tps average", "tps_average")
            .split(' ')
            .map(str::to_string)
            .collect();
        return Some(Columns::Lat(cols));
    }
    None
}

fn numbers(line: &str) -> Option<Vec<&str>> {
    let w: Vec<&str> = clean(line).split_whitespace().collect();
    (w.len() >= 3
        && w.iter().all(|x| {
            x.parse::<f64>().is_ok() && x.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        }))
    .then_some(w)
}

/// `-d mlx5_0`, `--ib-dev=mlx5_0`, `-i 1`, `--ib-port=2` on a command line that runs a test.
fn command(line: &str) -> Option<(Option<String>, Option<u32>)> {
    let w: Vec<&str> = clean(line).split_whitespace().collect();
    let at = w.iter().position(|x| {
        let base = x.rsplit('/').next().unwrap_or(x);
        base.starts_with("ib_") && (base.ends_with("_bw") || base.ends_with("_lat"))
    })?;
    let args = &w[at + 1..];
    let mut dev = None;
    let mut port = None;
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1).copied();
        match *a {
            "-d" | "--ib-dev" => dev = next.map(|n| super::clip(n, 40)),
            "-i" | "--ib-port" => port = next.and_then(|n| n.parse().ok()),
            _ => {
                if let Some(v) = a.strip_prefix("--ib-dev=") {
                    dev = Some(super::clip(v, 40));
                } else if let Some(v) = a.strip_prefix("--ib-port=") {
                    port = v.parse().ok();
                }
            }
        }
    }
    Some((dev, port))
}

/// A title, a header line with two of perftest's keys, the columns of its report, its port
/// state line or a failure only perftest prints.
pub fn looks_like_perftest(text: &str) -> bool {
    super::scan::lines(text).take(4000).any(|l| {
        title(l).is_some()
            || fields(l).len() >= 2
            || columns(l).is_some()
            || port_state(l).is_some()
            || OWN_FAILURES.contains(&words(l).as_str())
    })
}

pub fn parse_perftest(text: &str) -> Perftest {
    let mut out = Perftest::default();
    let mut cols: Option<Columns> = None;
    let mut cmd_dev = None;
    for line in super::scan::lines(text).take(20_000) {
        if let Some((d, p)) = command(line) {
            cmd_dev = d.or(cmd_dev);
            out.ib_port = p.or(out.ib_port);
            continue;
        }
        if out.test.is_none()
            && let Some(t) = title(line)
        {
            out.test = Some(t);
            continue;
        }
        if let Some(c) = columns(line) {
            match &c {
                Columns::Bw(u) => out.bw_unit = Some(u.clone()),
                Columns::Lat(names) => out.latency_columns = names.clone(),
            }
            cols = Some(c);
            continue;
        }
        if let Some(p) = port_state(line) {
            if out.port_states.len() < super::MAX_ITEMS {
                out.port_states.push(p);
            }
            continue;
        }
        if let Some(f) = failure(line) {
            if out.errors.len() < super::MAX_ITEMS {
                out.errors.push(f);
            }
            continue;
        }
        let f = fields(line);
        if !f.is_empty() {
            for (k, v) in f {
                match k.as_str() {
                    "Device" => out.device = Some(super::clip(&v, 40)),
                    "Link type" => out.link_type = Some(v.clone()),
                    _ => {}
                }
                if out.header.len() < 64 {
                    out.header.push((k, v));
                }
            }
            continue;
        }
        let Some(n) = numbers(line) else { continue };
        match &cols {
            Some(Columns::Bw(_)) if n.len() >= 5 && out.bw.len() < super::MAX_ITEMS => {
                let f = |i: usize| n[i].parse::<f64>().unwrap_or_default();
                out.bw.push(BwRow {
                    bytes: n[0].parse().unwrap_or_default(),
                    iterations: n[1].parse().unwrap_or_default(),
                    peak: f(2),
                    average: f(3),
                    msg_rate_mpps: f(4),
                });
            }
            Some(Columns::Lat(names))
                if n.len() >= 3
                    && n.len() <= names.len() + 2
                    && out.latency.len() < super::MAX_ITEMS =>
            {
                out.latency.push(LatRow {
                    bytes: n[0].parse().unwrap_or_default(),
                    iterations: n[1].parse().unwrap_or_default(),
                    usec: n[2..]
                        .iter()
                        .map(|x| x.parse().unwrap_or_default())
                        .collect(),
                });
            }
            _ => {}
        }
    }
    if out.device.is_none() {
        out.device = cmd_dev;
    }
    out
}

impl Perftest {
    /// The port the test reports on: the one it found not Active, or, where it printed its
    /// header (which it does only after checking the port), the one it ran on, Active.
    pub fn ports(&self) -> Vec<IbPort> {
        let device = self.device.clone().unwrap_or_default();
        let link_layer = match self.link_type.as_deref() {
            Some("IB") => Some("InfiniBand".to_string()),
            Some("Ethernet") => Some("Ethernet".to_string()),
            _ => None,
        };
        let port = |n: u32, state: String| IbPort {
            device: device.clone(),
            port: n,
            state: Some(state),
            physical_state: None,
            link_layer: link_layer.clone(),
            rate_gbps: None,
            netdev: None,
            netdev_state: None,
            sm_lid: None,
            source: "perftest",
        };
        if !self.port_states.is_empty() {
            return self
                .port_states
                .iter()
                .map(|p| {
                    let s = infiniband::logical_state(&p.state)
                        .map_or_else(|| p.state.clone(), str::to_string);
                    port(p.port, s)
                })
                .collect();
        }
        if self.device.is_some() && self.link_type.is_some() {
            return vec![port(self.ib_port.unwrap_or(1), "Active".to_string())];
        }
        Vec::new()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct PerftestKind;

impl super::EvidenceKind for PerftestKind {
    fn name(&self) -> &'static str {
        "perftest"
    }
    fn doc(&self) -> &'static str {
        "perftest's output (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat): the test, device, link type and header fields, the bandwidth or latency rows, a port it found not Active, and its connection failures"
    }
    fn example(&self) -> &'static str {
        "ib_write_bw -d mlx5_0 --report_gbits <server>"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("test", "the title: RDMA_Write BW, Send Latency, …"),
            (
                "device",
                "the RDMA device (header, else -d of the command line)",
            ),
            ("ib_port", "-i of the command line"),
            ("header", "the header's key/value fields as printed"),
            ("link_type", "IB or Ethernet"),
            (
                "bw",
                "bandwidth rows: bytes, iterations, peak, average, msg_rate_mpps",
            ),
            ("bw_unit", "MiB/sec, MB/sec or Gb/sec"),
            (
                "latency",
                "latency rows: bytes, iterations, usec (in the header's order)",
            ),
            ("latency_columns", "the latency columns' names"),
            ("port_states", "Port number N state is S: port, state"),
            ("errors", "the failure lines perftest printed"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_perftest(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let t = super::unquote(text);
        if !looks_like_perftest(&t) {
            return Err(super::ParseError::NotThisKind(
                "no perftest output (a test title, its header fields, its report columns, a port state or one of its failures) in the text",
            ));
        }
        super::to_value(&parse_perftest(&t))
    }
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        // the RDMA port of the node it ran on: read by the ib.ports probe from the paste
        Some(Ok(super::HostPart::Shown))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::infiniband::Verdict;

    #[test]
    fn a_port_not_active_stops_the_test_and_is_down() {
        // linux-rdma/perftest#43 (h146): quoted as posted
        let t = " ./ib_send_lat --duration=30 -H\n\n  > Port number 1 state is Down\n  >     Couldn't set the link layer\n  >     Couldn't get context for the device\n  > \n";
        let u = crate::evidence::unquote(t);
        assert!(looks_like_perftest(&u));
        let d = parse_perftest(&u);
        assert_eq!(
            d.port_states,
            vec![PortState {
                port: 1,
                state: "Down".into()
            }]
        );
        assert_eq!(
            d.errors,
            vec![
                "Couldn't set the link layer",
                "Couldn't get context for the device"
            ]
        );
        let p = d.ports();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].verdict(), Verdict::Down);
        assert_eq!(p[0].name(), "port 1 of an unnamed device");
        // the device named on the command line, perftest's `Init`
        let d = parse_perftest(
            "$ ib_write_bw -d mlx5_3 -i 2 10.0.0.1\n Port number 2 state is Init\n Couldn't set the link layer\n",
        );
        let p = d.ports();
        assert_eq!((p[0].device.as_str(), p[0].port), ("mlx5_3", 2));
        assert_eq!(p[0].state.as_deref(), Some("Initializing"));
    }

    #[test]
    fn a_header_and_bandwidth_rows() {
        // NVIDIA/nccl-tests#191 (h146): a RoCE bond at 185 Gb/s
        let t = " ib_write_bw -x 3 -q 8 -d mlx5_bond_1 {serverip} --report_gbits --run_infinitely\n                    RDMA_Write BW Test\n Dual-port       : OFF          Device         : mlx5_bond_1\n Number of qps   : 8            Transport type : IB\n Connection type : RC           Using SRQ      : OFF\n PCIe relax order: ON\n ibv_wr* API: ON\n TX depth        : 128\n CQ Moderation   : 1\n Mtu             : 1024[B]\n Link type       : Ethernet\n GID index       : 3\n Max inline data : 0[B]\n rdma_cm QPs     : OFF\n Data ex. method : Ethernet\n---------------------------------------------------------------------------------------\n #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 65536      1765470            185.37              184.94              0.352743\n";
        assert!(looks_like_perftest(t));
        let d = parse_perftest(t);
        assert_eq!(d.test.as_deref(), Some("RDMA_Write BW"));
        assert_eq!(d.device.as_deref(), Some("mlx5_bond_1"));
        assert_eq!(d.link_type.as_deref(), Some("Ethernet"));
        assert_eq!(d.bw_unit.as_deref(), Some("Gb/sec"));
        let h = |k: &str| {
            d.header
                .iter()
                .find(|(a, _)| a == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(h("Number of qps"), Some("8"));
        assert_eq!(h("Transport type"), Some("IB"));
        assert_eq!(h("Connection type"), Some("RC"));
        assert_eq!(h("Using SRQ"), Some("OFF"));
        assert_eq!(h("Mtu"), Some("1024[B]"));
        assert_eq!(h("GID index"), Some("3"));
        assert_eq!(h("rdma_cm QPs"), Some("OFF"));
        assert_eq!(h("ibv_wr* API"), Some("ON"));
        assert_eq!(
            d.bw,
            vec![BwRow {
                bytes: 65536,
                iterations: 1765470,
                peak: 185.37,
                average: 184.94,
                msg_rate_mpps: 0.352743
            }]
        );
        // the header is printed only once the port is checked Active
        let p = d.ports();
        assert_eq!(p[0].verdict(), Verdict::Up);
        assert_eq!(p[0].name(), "mlx5_bond_1 port 1");
        assert_eq!(p[0].link_layer.as_deref(), Some("Ethernet"));
    }

    #[test]
    fn an_old_header_in_mb_per_second_and_no_dash_lines() {
        // openucx/ucx#8852 (h146): ib_read_bw -a, the separators lost in the paste
        let t = "[root@cn3 ~]#ib_read_bw  cn2  -a -F -d mlx5_1\n                    RDMA_Read BW Test\n Dual-port       : OFF          Device         : mlx5_1\n Link type       : IB\n Outstand reads  : 16\n #bytes     iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n 2          1000             4.86               4.67               2.450225\n 128        1000             310.13             310.05             2.539960\n";
        let d = parse_perftest(t);
        assert_eq!(d.test.as_deref(), Some("RDMA_Read BW"));
        assert_eq!(d.bw_unit.as_deref(), Some("MB/sec"));
        assert_eq!(d.bw.len(), 2);
        assert_eq!(d.bw[1].average, 310.05);
        assert_eq!(d.ports()[0].link_layer.as_deref(), Some("InfiniBand"));
    }

    #[test]
    fn latency_rows_and_the_server_banner() {
        // the latency report of perftest_parameters.h's RESULT_FMT_LAT, as a Strix Halo RDMA
        // how-to prints it (ib_write_lat between two ConnectX-3)
        let t = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n 2       1000          1.10           2.05         1.11     \t       1.12        \t0.00   \t\t1.19    \t\t2.05   \n";
        let d = parse_perftest(t);
        assert_eq!(d.latency_columns.len(), 7);
        assert_eq!(d.latency_columns[5], "99%_percentile[usec]");
        assert_eq!(
            d.latency[0].usec,
            vec![1.10, 2.05, 1.11, 1.12, 0.00, 1.19, 2.05]
        );
        assert!(d.ports().is_empty());
        // linux-rdma/perftest#240 (h146): the server's banner and header, no results
        let t = "************************************\n* Waiting for client to connect... *\n************************************\n---------------------------------------------------------------------------------------\n                    RDMA_Write BW Test\n Dual-port       : OFF          Device         : mlx5_0\n Link type       : Ethernet\n GID index       : 3\n";
        let d = parse_perftest(t);
        assert_eq!(d.ports()[0].verdict(), Verdict::Up);
    }

    #[test]
    fn connection_failures_are_kept_and_judge_no_port() {
        // linux-rdma/perftest#132 (h146): rdma_cm on an Intel X722
        let t = "server error: \nethernet_read_keys: Couldn't read remote address\nUnable to read to socket/rdma_cm\nFailed to exchange data between server and clients\nclient error:\nFailed to modify QP to RTS\n Unable to Connect the HCA's through the link\n";
        assert!(looks_like_perftest(t));
        let d = parse_perftest(t);
        assert_eq!(d.errors.len(), 5);
        assert_eq!(d.errors[3], "Failed to modify QP to RTS");
        assert!(d.ports().is_empty());
    }

    #[test]
    fn other_tables_and_prose_are_not_perftest() {
        // nccl-tests' columns, the CUDA samples' bandwidthTest, prose naming the tools
        assert!(!looks_like_perftest(
            "#       size         count      type   redop    root     time   algbw   busbw #wrong\n           8             2     float     sum      -1    19.90    0.00    0.00      0\n"
        ));
        assert!(!looks_like_perftest(
            " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     12150.7\n"
        ));
        assert!(!looks_like_perftest(
            "I ran ib_write_bw and the RDMA_Write BW test looked fine; the Device is mlx5_0.\nFailed to modify QP to RTS\n"
        ));
        // a `Key : value` listing of another tool (mlxlink's Operational Info)
        assert!(!looks_like_perftest(
            "State                           : Active\nPhysical state                  : LinkUp\nSpeed                           : 25GbE\n"
        ));
    }

    #[test]
    fn every_prefix_reads_without_panicking() {
        let t = "                    Send BW Test\n Dual-port       : OFF\t\tDevice         : mlx5_0\n #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n 65536      1000             11000.12            10999.9               0.175998\n";
        for p in crate::evidence::testutil::prefixes(t, 7) {
            let _ = parse_perftest(p).ports();
        }
    }
}
