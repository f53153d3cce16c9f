//! `lshca` output (NVIDIA/Mellanox's HCA lister, github.com/MrBr-github/lshca), read from its
//! producer: `lshca/lshca.py` at c386c89. Its human-readable view prints, per adapter, a header
//! (`Dev #1`, ` Desc: …`, ` FW: …`, …) and then one row per PCI function (a "BDF device") of the
//! adapter under a header row, the fields of the chosen view (`system` by default: `PCI_addr`,
//! `RDMA`, `Net`, `Port`, `Numa`, `LnkStat`, `IpStat`, `Link`, `Rate`, `SRIOV`, `Parent_addr`,
//! `Tempr`, `LnkCapWidth`, `LnkStaWidth`, `HCA_Type`, …):
//!
//! ```text
//!   PCI_addr   |  RDMA  | Net | Numa | LnkStat | IpStat | Link | Rate | LnkCapWidth | LnkStaWidth | HCA_Type
//! -----------------------------------------------------------------------------------------------------------
//! 000a:11:00.0 | mlx5_0 | ib0 |  2   |  down   |  down  |  IB  | 10*  |   x16 G3    |   x8 >!<    |  MT4119
//! 000a:11:00.1 | mlx5_1 | ib1 |  2   |  init   |  down  |  IB  | 100  |   x16 G3    |   x8 >!<    |  MT4119
//! ```
//!
//! - `print_bdf_devices`: each field centred in its column (`"{0:^{width}}".format(…)`), the
//!   columns joined by ` | `, the header row once, then the separator (`-` repeated);
//! - a column that says nothing is dropped from the view (`LnkStaWidth` where it matches
//!   `LnkCapWidth`, `IpStat` where every port is down, `LnkStat` where every port is `actv`), so
//!   the columns are found by the header's names, not by position;
//! - `LnkStat` (`BDFDevice.__init__`): the lower-cased word of
//!   `/sys/class/infiniband/DEV/ports/N/state` with `active` printed `actv`, and `down` printed
//!   `poll` where `phys_state` is `polling`; the tool's help names `actv` (active/linkup),
//!   `init` (initializing/linkup), `poll` (down/polling), `down` (down/disabled); `nop` is an
//!   unused function of a DPU;
//! - `Rate` is the port's rate in Gb/s, with `*` (`warning_sign`) where the port is down; an
//!   error is marked ` >!<` (`error_sign`), a warning `*`;
//! - `Link` is `IB` or `Eth`; `Port` is the CA port (absent from older versions, whose rows are
//!   port 1 of each function: one port per mlx5 function).
//!
//! Each row is one RDMA port; `LnkStat` is the port's own logical state (not an interface's
//! carrier, which is `IpStat`), judged like ibstat's by [`super::infiniband`]. `LnkCapWidth` and
//! `LnkStaWidth` (the adapter's PCIe link, `x16 G3`) are kept as printed.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Lshca {
    pub rows: Vec<Row>,
}

/// One BDF-device row, the fields the view printed (markers stripped).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Row {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_addr: Option<String>,
    pub rdma: String,
    pub port: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<String>,
    /// As printed: `actv`, `init`, `poll`, `down`, `armed`, `nop`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lnk_stat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_stat: Option<String>,
    /// `IB` or `Eth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lnk_cap_width: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lnk_sta_width: Option<String>,
    /// lshca marked a field of the row as an error (` >!<`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub error_marked: bool,
}

/// The cells of a ` | `-joined row, trimmed; `None` for a line with fewer than three.
fn cells(line: &str) -> Option<Vec<&str>> {
    let t = clean(line);
    if !t.contains(" | ") {
        return None;
    }
    let c: Vec<&str> = t.split('|').map(str::trim).collect();
    (c.len() >= 3).then_some(c)
}

/// A header row: lshca's column names, `RDMA` and `LnkStat` among them.
fn header(line: &str) -> Option<Vec<String>> {
    let c = cells(line)?;
    let known = [
        "Dev",
        "PCI_addr",
        "RDMA",
        "Net",
        "Port",
        "Numa",
        "LnkStat",
        "IpStat",
        "Link",
        "Rate",
        "SRIOV",
        "Parent_addr",
        "Tempr",
        "LnkCapWidth",
        "LnkStaWidth",
        "HCA_Type",
        "Bond",
        "BondState",
        "BondMiiStat",
        "RoCEstat",
        "PhyLinkStat",
        "PhyLnkSpd",
        "PhyAnalisys",
        "Driver",
    ];
    (c.contains(&"RDMA") && c.contains(&"LnkStat") && c.iter().all(|n| known.contains(n)))
        .then(|| c.iter().map(|s| s.to_string()).collect())
}

pub fn looks_like_lshca(text: &str) -> bool {
    !parse_lshca(text).rows.is_empty()
}

pub fn parse_lshca(text: &str) -> Lshca {
    let mut out = Lshca::default();
    let mut cols: Option<Vec<String>> = None;
    for line in super::content_lines(text).take(20_000) {
        if let Some(h) = header(line) {
            cols = Some(h);
            continue;
        }
        let Some(names) = &cols else { continue };
        let Some(c) = cells(line) else {
            // the separator between rows and adapters keeps the header; another line ends it
            let t = clean(line);
            if !t.is_empty() && !t.chars().all(|ch| ch == '-' || ch == '=') {
                cols = None;
            }
            continue;
        };
        if c.len() != names.len() {
            cols = None;
            continue;
        }
        let get = |n: &str| {
            names
                .iter()
                .position(|x| x == n)
                .map(|i| c[i])
                .filter(|v| !v.is_empty())
        };
        let mut r = Row::default();
        let mut marked = false;
        let mut field = |n: &str| -> Option<String> {
            let raw = get(n)?;
            marked |= raw.contains(">!<");
            let v = raw.replace(">!<", "");
            let v = v.trim().trim_end_matches('*').trim();
            (!v.is_empty()).then(|| super::clip(v, 60))
        };
        let Some(rdma) = field("RDMA") else { continue };
        // an RDMA device name: no spaces (`mlx5_0`, `mlx5_bond_0`, `inUseByVM`)
        if rdma.contains(char::is_whitespace) {
            continue;
        }
        r.rdma = rdma;
        r.pci_addr = field("PCI_addr");
        r.port = field("Port").and_then(|p| p.parse().ok()).unwrap_or(1);
        r.net = field("Net");
        r.lnk_stat = field("LnkStat");
        r.ip_stat = field("IpStat");
        r.link = field("Link");
        r.rate_gbps = field("Rate").and_then(|v| v.parse().ok());
        r.lnk_cap_width = field("LnkCapWidth");
        r.lnk_sta_width = field("LnkStaWidth");
        r.error_marked = marked;
        if out.rows.len() < super::MAX_ITEMS {
            out.rows.push(r);
        }
    }
    out
}

impl Lshca {
    pub fn ports(&self) -> Vec<IbPort> {
        self.rows
            .iter()
            .map(|r| {
                let (state, phys) = match r.lnk_stat.as_deref() {
                    Some("actv") => (Some("Active"), Some("LinkUp")),
                    Some("init") => (Some("Initializing"), Some("LinkUp")),
                    Some("poll") => (Some("Down"), Some("Polling")),
                    Some("down") => (Some("Down"), None),
                    Some("armed") => (Some("Armed"), None),
                    // `nop` (an unused DPU function) and anything else: not judged
                    Some(other) => (infiniband::logical_state(other), None),
                    None => (None, None),
                };
                IbPort {
                    device: r.rdma.clone(),
                    port: r.port,
                    state: state.map(str::to_string),
                    physical_state: phys.map(str::to_string),
                    link_layer: match r.link.as_deref() {
                        Some("IB") => Some("InfiniBand".to_string()),
                        Some("Eth") => Some("Ethernet".to_string()),
                        _ => None,
                    },
                    rate_gbps: r.rate_gbps,
                    netdev: r.net.clone(),
                    netdev_state: None,
                    sm_lid: None,
                    source: "lshca",
                }
            })
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct LshcaKind;

impl super::EvidenceKind for LshcaKind {
    fn name(&self) -> &'static str {
        "lshca"
    }
    fn doc(&self) -> &'static str {
        "`lshca` output (the HCA lister): per RDMA port its PCI address, network interface, port state (LnkStat), link type, rate and the adapter's PCIe width"
    }
    fn example(&self) -> &'static str {
        "lshca"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "rows",
            "pci_addr, rdma, port, net, lnk_stat, ip_stat, link, rate_gbps, lnk_cap_width, lnk_sta_width, error_marked",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_lshca(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_lshca(text);
        if v.rows.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no lshca table (a ` | `-joined header with RDMA and LnkStat, then its rows) in the text",
            ));
        }
        super::to_value(&v)
    }
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        // the RDMA ports of the node it ran on: read by the ib.ports probe from the paste
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
    fn a_port_in_init_and_one_down_are_down() {
        // openucx/ucx#5970 (h139): the CI's arm node, mlx5_1 initializing (no SM), mlx5_0 down,
        // both functions in a x8 slot of their x16 adapter
        let t = "Nodes: swx-rdmz-ucx-arm-hwi-01\n-----------------------------------------------------------------------------------------------------------\n  PCI_addr   |  RDMA  | Net | Numa | LnkStat | IpStat | Link | Rate | LnkCapWidth | LnkStaWidth | HCA_Type\n-----------------------------------------------------------------------------------------------------------\n000a:11:00.0 | mlx5_0 | ib0 |  2   |  down   |  down  |  IB  | 10*  |   x16 G3    |   x8 >!<    |  MT4119\n000a:11:00.1 | mlx5_1 | ib1 |  2   |  init   |  down  |  IB  | 100  |   x16 G3    |   x8 >!<    |  MT4119\n-----------------------------------------------------------------------------------------------------------\n";
        assert!(looks_like_lshca(t));
        let d = parse_lshca(t);
        assert_eq!(d.rows.len(), 2);
        let r = &d.rows[0];
        assert_eq!(r.pci_addr.as_deref(), Some("000a:11:00.0"));
        assert_eq!((r.rdma.as_str(), r.port), ("mlx5_0", 1));
        assert_eq!(r.net.as_deref(), Some("ib0"));
        assert_eq!(r.rate_gbps, Some(10.0));
        assert_eq!(r.lnk_cap_width.as_deref(), Some("x16 G3"));
        assert_eq!(r.lnk_sta_width.as_deref(), Some("x8"));
        assert!(r.error_marked);
        let p = d.ports();
        assert_eq!(p[0].verdict(), Verdict::Down);
        assert_eq!(p[1].verdict(), Verdict::Down);
        assert_eq!(p[1].state.as_deref(), Some("Initializing"));
        assert_eq!(p[1].link_layer.as_deref(), Some("InfiniBand"));
        assert!(p[1].cause().contains("subnet manager"), "{}", p[1].cause());
    }

    #[test]
    fn active_ports_with_a_port_column_and_an_adapter_header() {
        // the view as lshca.py prints it (`print_hca_header`, then `print_bdf_devices`): an
        // active IB port and an active Ethernet one; LnkStat shown because one is `poll`
        let t = "-------------------------------------------------------------------------\nDev #1\n Desc: Mellanox Technologies MT28908 Family [ConnectX-6]\n FW: 20.31.1014\n-------------------------------------------------------------------------\n  PCI_addr   |  RDMA  |   Net   | Port | Numa | LnkStat | IpStat | Link | Rate\n-------------------------------------------------------------------------\n0000:3b:00.0 | mlx5_0 |   ib0   |  1   |  0   |  actv   | up_ip4 |  IB  | 200\n0000:3b:00.1 | mlx5_1 | enp59s0f1 |  1   |  0   |  poll   |  down  | Eth  | 100*\n";
        let p = parse_lshca(t).ports();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].verdict(), Verdict::Up);
        assert_eq!(p[1].verdict(), Verdict::Down);
        assert_eq!(p[1].physical_state.as_deref(), Some("Polling"));
        assert_eq!(p[1].link_layer.as_deref(), Some("Ethernet"));
        assert_eq!(p[1].netdev.as_deref(), Some("enp59s0f1"));
    }

    #[test]
    fn other_pipe_tables_are_not_lshca() {
        // a markdown table, nvidia-smi's, and lshca's cable view (no LnkStat) are not read
        assert!(!looks_like_lshca(
            "| kind | artifacts |\n|---|---:|\n| dmesg | 1 |\n"
        ));
        assert!(!looks_like_lshca(
            "|   0  NVIDIA A100-SXM4-80GB   On   | 00000000:07:00.0 Off |                    0 |\n"
        ));
        assert!(!looks_like_lshca(
            " RDMA  | Net  | PhyLinkStat | PhyLnkSpd | CblPN        | CblLng | PhyAnalisys \nmlx5_2 | ib2  | LinkUp      | IB-EDR    | MCP1600-E01A |   2m   | No_issue_was_observed\n"
        ));
        // a header with a column lshca does not print is not its header
        assert!(!looks_like_lshca(
            " RDMA | LnkStat | Owner\nmlx5_0 | actv | alice\n"
        ));
    }
}
