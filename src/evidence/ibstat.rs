//! `ibstat` output (infiniband-diags), read from its producer: rdma-core
//! `infiniband-diags/ibstat.c` at v64.0-61-g691953d8d (github.com/linux-rdma/rdma-core; the
//! layout has not changed since the OFED 1.x days). What it prints, per RDMA device:
//!
//! ```text
//! CA 'mlx5_0'                         ca_dump(): node type (CA/Switch/Router/iWARP RNIC) and name
//!     CA type: MT4129
//!     Number of ports: 1
//!     Firmware version: 28.39.1002
//!     Hardware version: 0
//!     Node GUID: 0x58a2e10300dae626
//!     System image GUID: 0x58a2e10300dae626
//!     Port 1:                         port_dump(), one per port
//!         State: Active               Down / Initializing / Armed / Active / ???
//!         Physical state: LinkUp      No state change / Sleep / Polling / Disabled /
//!                                     PortConfigurationTraining / LinkUp / LinkErrorRecovery / PhyTest
//!         Rate: 200                   Gb/s; "2.5" for 1x SDR; "N (FDR10)" on FDR10 links
//!         Effective speed: 200        only when ibv_query_port_speed() answers (recent rdma-core)
//!         Base lid: 0
//!         LMC: 0
//!         SM lid: 0
//!         Capability mask: 0x00010000
//!         Port GUID: 0x5aa2e1fffedae626
//!         Link layer: Ethernet        InfiniBand / Ethernet
//! ```
//!
//! `ibstat CA PORT` prints `CA: 'mlx5_0'` and one port without indentation; `ibstat -s` the
//! device block alone; `ibstat -l` and `-p` bare names and GUIDs (not read: they say nothing
//! about a port). `ibwarn:`/`ibpanic:` lines (a device that cannot be read) are kept as
//! warnings. A paste may lose the tabs, quote the text, elide values (`Node GUID: ...`) or
//! start at a `Port N:` line; each is read for what it still says.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Ibstat {
    pub cas: Vec<Ca>,
    /// `ibwarn:` / `ibpanic:` lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Ca {
    /// The device name (`mlx5_0`); empty when the paste starts inside a device's ports.
    pub name: String,
    /// CA, Switch, Router or iWARP RNIC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// `CA type` (the part number, `MT4129`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_ports: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firmware_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_guid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_image_guid: Option<String>,
    pub ports: Vec<Port>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Port {
    pub port: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    /// Gb/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// `Rate: N (FDR10)`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fdr10: bool,
    /// Gb/s, when the verb that reports it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_speed: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_lid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lmc: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability_mask: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_guid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<String>,
}

const NODE_TYPES: [&str; 5] = ["CA", "Switch", "Router", "iWARP RNIC", "???"];

/// `CA 'mlx5_0'` (ca_dump) or `CA: 'mlx5_0'` (one port asked for): (node type, name).
fn header(l: &str) -> Option<(&str, &str)> {
    let l = l.trim();
    let (ty, rest) = l.split_once(" '").or_else(|| l.split_once(": '"))?;
    let ty = ty.trim_end_matches(':');
    let name = rest.strip_suffix('\'')?;
    (NODE_TYPES.contains(&ty) && !name.is_empty() && !name.contains(char::is_whitespace))
        .then_some((ty, name))
}

/// `Port N:`
fn port_header(l: &str) -> Option<u32> {
    l.trim()
        .strip_prefix("Port ")?
        .strip_suffix(':')?
        .parse()
        .ok()
}

fn key_value(l: &str) -> Option<(&str, &str)> {
    let (k, v) = l.trim().split_once(':')?;
    Some((k.trim(), v.trim()))
}

const PORT_KEYS: [&str; 11] = [
    "State",
    "Physical state",
    "Rate",
    "Effective speed",
    "Base lid",
    "LMC",
    "SM lid",
    "Capability mask",
    "Port GUID",
    "Link layer",
    "Port",
];

/// True when the text holds ibstat's output: a device header followed by its fields, or a
/// `Port N:` block with `State:` and `Physical state:` (a paste that starts inside a device).
pub fn looks_like_ibstat(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text).map(clean).take(4000).collect();
    lines.iter().enumerate().any(|(i, l)| {
        let next = || {
            lines
                .iter()
                .skip(i + 1)
                .take(3)
                .filter_map(|l| key_value(l))
        };
        if header(l).is_some() {
            return next().any(|(k, _)| {
                k.ends_with(" type") || k == "Number of ports" || k == "Firmware version"
            }) || lines.get(i + 1).is_some_and(|n| port_header(n).is_some());
        }
        port_header(l).is_some() && {
            let keys: Vec<&str> = next().map(|(k, _)| k).collect();
            keys.contains(&"State") && keys.contains(&"Physical state")
        }
    })
}

fn num(v: &str) -> Option<u32> {
    v.split_whitespace().next()?.parse().ok()
}

pub fn parse_ibstat(text: &str) -> Ibstat {
    let mut out = Ibstat::default();
    let mut ca: Option<Ca> = None;
    let mut port: Option<Port> = None;
    fn close_port(ca: &mut Option<Ca>, port: &mut Option<Port>) {
        if let Some(p) = port.take() {
            ca.get_or_insert_with(Ca::default).ports.push(p);
        }
    }
    for raw in text.lines() {
        let l = clean(raw);
        let t = l.trim();
        if t.starts_with('#') {
            continue;
        }
        if t.starts_with("ibwarn:") || t.starts_with("ibpanic:") {
            if out.warnings.len() < super::MAX_ITEMS {
                out.warnings.push(super::clip(t, super::MAX_TEXT));
            }
            continue;
        }
        if let Some((ty, name)) = header(t) {
            close_port(&mut ca, &mut port);
            if let Some(c) = ca.take() {
                out.cas.push(c);
            }
            ca = Some(Ca {
                name: name.to_string(),
                node_type: Some(ty.to_string()),
                ..Ca::default()
            });
            continue;
        }
        if let Some(n) = port_header(t) {
            close_port(&mut ca, &mut port);
            port = Some(Port {
                port: n,
                ..Port::default()
            });
            continue;
        }
        let Some((k, v)) = key_value(t) else {
            continue;
        };
        let known = |s: &str| (!s.is_empty() && s != "...").then(|| s.to_string());
        if let Some(p) = port.as_mut()
            && PORT_KEYS.contains(&k)
        {
            match k {
                "State" => {
                    p.state = infiniband::logical_state(v)
                        .map(str::to_string)
                        .or(known(v))
                }
                "Physical state" => {
                    p.physical_state = infiniband::physical_state(v)
                        .map(str::to_string)
                        .or(known(v))
                }
                "Rate" => {
                    p.fdr10 = v.contains("FDR10");
                    p.rate = v.split_whitespace().next().and_then(|r| r.parse().ok());
                }
                "Effective speed" => p.effective_speed = v.parse().ok(),
                "Base lid" => p.base_lid = num(v),
                "LMC" => p.lmc = num(v),
                "SM lid" => p.sm_lid = num(v),
                "Capability mask" => p.capability_mask = known(v),
                "Port GUID" => p.port_guid = known(v),
                "Link layer" => p.link_layer = known(v),
                _ => {}
            }
            continue;
        }
        let Some(c) = ca.as_mut() else {
            continue;
        };
        match k {
            "Number of ports" => c.number_of_ports = num(v),
            "Firmware version" => c.firmware_version = known(v),
            "Hardware version" => c.hardware_version = known(v),
            "Node GUID" => c.node_guid = known(v),
            "System image GUID" => c.system_image_guid = known(v),
            _ if k.ends_with(" type") && NODE_TYPES.contains(&k.trim_end_matches(" type")) => {
                c.ca_type = known(v)
            }
            _ => {}
        }
        if out.cas.len() >= super::MAX_ITEMS {
            break;
        }
    }
    close_port(&mut ca, &mut port);
    if let Some(c) = ca.take() {
        out.cas.push(c);
    }
    out.cas.truncate(super::MAX_ITEMS);
    out
}

impl Ibstat {
    pub fn ports(&self) -> Vec<IbPort> {
        self.cas
            .iter()
            .flat_map(|c| {
                c.ports.iter().map(move |p| IbPort {
                    device: c.name.clone(),
                    port: p.port,
                    state: p.state.clone(),
                    physical_state: p.physical_state.clone(),
                    link_layer: p.link_layer.clone(),
                    rate_gbps: p.rate,
                    netdev: None,
                    netdev_state: None,
                    sm_lid: p.sm_lid,
                    source: "ibstat",
                })
            })
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct IbstatKind;

impl super::EvidenceKind for IbstatKind {
    fn name(&self) -> &'static str {
        "ibstat"
    }
    fn doc(&self) -> &'static str {
        "`ibstat` output (infiniband-diags): each RDMA device and its ports' state, physical state, rate and link layer"
    }
    fn example(&self) -> &'static str {
        "ibstat"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "cas",
                "devices: name, node_type, ca_type, number_of_ports, firmware_version, hardware_version, node_guid, system_image_guid, ports (port, state, physical_state, rate, fdr10, effective_speed, base_lid, lmc, sm_lid, capability_mask, port_guid, link_layer)",
            ),
            ("warnings", "ibwarn/ibpanic lines"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_ibstat(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_ibstat(text);
        if v.cas.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no ibstat device or port block in the text",
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
    use crate::evidence::testutil::{fixture, prefixes};

    #[test]
    fn roce_host_with_one_disabled_port() {
        // github.com/kvcache-ai/Mooncake/issues/1999: RoCE ports up, mlx5_10 Down/Disabled
        let t = fixture("infiniband/ibstat_roce_one_disabled.txt");
        assert!(looks_like_ibstat(&t));
        let s = parse_ibstat(&t);
        let c = &s.cas[0];
        assert_eq!(c.name, "mlx5_0");
        assert_eq!(c.node_type.as_deref(), Some("CA"));
        assert_eq!(c.ca_type.as_deref(), Some("MT4129"));
        assert_eq!(c.number_of_ports, Some(1));
        assert_eq!(c.firmware_version.as_deref(), Some("28.39.1002"));
        assert_eq!(c.hardware_version.as_deref(), Some("0"));
        assert_eq!(c.node_guid.as_deref(), Some("0x58a2e10300dae626"));
        assert_eq!(c.system_image_guid.as_deref(), Some("0x58a2e10300dae626"));
        let p = &c.ports[0];
        assert_eq!(p.port, 1);
        assert_eq!(p.state.as_deref(), Some("Active"));
        assert_eq!(p.physical_state.as_deref(), Some("LinkUp"));
        assert_eq!(p.rate, Some(200.0));
        assert_eq!(p.base_lid, Some(0));
        assert_eq!(p.lmc, Some(0));
        assert_eq!(p.sm_lid, Some(0));
        assert_eq!(p.capability_mask.as_deref(), Some("0x00010000"));
        assert_eq!(p.port_guid.as_deref(), Some("0x5aa2e1fffedae626"));
        assert_eq!(p.link_layer.as_deref(), Some("Ethernet"));
        let down: Vec<_> = s
            .ports()
            .into_iter()
            .filter(|p| p.verdict() == Verdict::Down)
            .collect();
        assert_eq!(down.len(), 1);
        assert_eq!(down[0].name(), "mlx5_10 port 1");
        assert_eq!(down[0].physical_state.as_deref(), Some("Disabled"));
    }

    #[test]
    fn ib_port_polling_and_a_healthy_hca() {
        // github.com/leptonai/gpud/pull/482: Down / Polling, Rate 10
        let t = fixture("infiniband/ibstat_polling.txt");
        assert!(looks_like_ibstat(&t));
        let p = &parse_ibstat(&t).ports()[0];
        assert_eq!(p.name(), "mlx5_10 port 1");
        assert_eq!(p.verdict(), Verdict::Down);
        assert_eq!(p.rate_gbps, Some(10.0));
        assert_eq!(p.sm_lid, Some(334));
        assert!(p.cause().contains("cable"));
        // github.com/leptonai/gpud/pull/752: an IB port Active at 200 and an ibpanic line
        let t = fixture("infiniband/ibstat_active_ibpanic.txt");
        let s = parse_ibstat(&t);
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("mlx5_8"));
        let p = &s.ports()[0];
        assert_eq!(p.verdict(), Verdict::Up);
        assert_eq!(p.link_layer.as_deref(), Some("InfiniBand"));
        assert_eq!(
            s.cas[0].ca_type, None,
            "an elided value (`...`) is not a value"
        );
    }

    #[test]
    fn link_up_without_subnet_manager() {
        // github.com/Mellanox/network-operator/issues/249: State Down, Physical LinkUp
        let t = fixture("infiniband/ibstat_linkup_state_down.txt");
        let p = &parse_ibstat(&t).ports()[0];
        assert_eq!(p.verdict(), Verdict::Down);
        assert!(p.cause().contains("subnet manager"), "{}", p.cause());
    }

    #[test]
    fn single_port_form_and_fragments() {
        let s = parse_ibstat(
            "CA: 'mthca0'\nPort 2:\nState: Active\nPhysical state: LinkUp\nRate: 2.5\nLink layer: InfiniBand\n",
        );
        assert_eq!(s.cas[0].name, "mthca0");
        assert_eq!(s.cas[0].ports[0].port, 2);
        assert_eq!(s.cas[0].ports[0].rate, Some(2.5));
        let s = parse_ibstat("Port 1:\n\t\tState: Active\n\t\tRate: 56 (FDR10)\n");
        assert!(s.cas[0].ports[0].fdr10);
        assert!(looks_like_ibstat(
            "...\nPort 1:\n   State: Down\n   Physical state: Polling\n"
        ));
        assert!(!looks_like_ibstat("the CA 'x' port is down\n"));
        assert!(!looks_like_ibstat("State: Down\n"));
    }

    #[test]
    fn truncated_pastes_never_panic() {
        let t = fixture("infiniband/ibstat_roce_one_disabled.txt");
        for p in prefixes(&t, 7) {
            let _ = parse_ibstat(p).ports();
            let _ = looks_like_ibstat(p);
        }
    }
}
