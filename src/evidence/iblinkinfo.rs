//! `iblinkinfo` output (infiniband-diags, the fabric's links as one node sees them), read from
//! its producer: linux-rdma/rdma-core `infiniband-diags/iblinkinfo.c` at 691953d8 (2026-08-20),
//! `print_node_header` and `print_port`, with libibmad's `mad_dump_portstate` and
//! `mad_dump_physportstate` (`libibmad/dump.c`) for the state words:
//!
//! ```text
//! CA: gpu-v100-3 HCA-1:                                       "%s: %s:\n" (nodetype_str, desc)
//!       0xb88303ffff7f61c4      6    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    3[  ] "MF0;ibswitch254:MQM8700/U1" ( )
//! Switch: 0x0c42a10300b95bfa MF0;ibswitch254:MQM8700/U1:      "%s: 0x%016x %s:\n"
//!            3    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       1    1[  ] "gpu-v100-0 HCA-1" ( )
//!            3   17[  ] ==(                Down/ Polling)==>             [  ] "" ( )
//! ```
//!
//! - a CA's port line is `0x<port GUID> <base LID> <port>[<ext>] ==<link>==>  <remote>`, a
//!   switch's `<switch LID> <port>[<ext>] ==<link>==>  <remote>` (no GUID);
//! - `<link>` is `(%3s %18s %6s/%8s)`, width, speed, state and physical state, for a port that is
//!   not Down, and `(              %6s/%8s)` for a Down one (whose width and speed are invalid);
//!   with `--switch` settings ` (HOQ:%d VL_Stall:%d)` follows it;
//! - the state is `Down`, `Initialize`, `Armed` or `Active`; the physical state `Sleep`,
//!   `Polling`, `Disabled`, `PortConfigurationTraining`, `LinkUp`, `LinkErrorRecovery`,
//!   `PhyTest`;
//! - `<remote>` is `<LID> <port>[<ext>] "<its description>" (<width/speed notes>)`, or
//!   `[  ] "" ( )` for a down port, `"Port not available"` for one with no remote.
//!
//! Each CA port becomes an RDMA port judged like ibstat's (the CA's description, `host HCA-1`,
//! names it; iblinkinfo prints no `mlx5_N`). Switch ports are kept but not judged: a switch has
//! ports with no cable by design, and a port's fault shows on the CA at its other end. Line mode
//! (`-l`, every port on one line with its node's GUID and description) prints no node type, so
//! it is not read.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Iblinkinfo {
    pub nodes: Vec<Node>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Node {
    /// `CA`, `Switch` or `Router`.
    pub kind: String,
    /// The switch's GUID (a CA's header has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guid: Option<String>,
    /// The node description (`gpu-v100-3 HCA-1`, `MF0;ibswitch254:MQM8700/U1`).
    pub name: String,
    pub links: Vec<Link>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Link {
    /// The CA port's GUID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_guid: Option<String>,
    pub lid: u32,
    pub port: u32,
    /// `4X`, absent for a Down port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    /// `25.78125 Gbps`, `10.0 Gbps (FDR10)`, absent for a Down port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    /// As printed: `Down`, `Initialize`, `Armed`, `Active`.
    pub state: String,
    /// As printed: `Polling`, `LinkUp`, `Disabled`, …
    pub physical_state: String,
    /// The description of the node at the other end, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// `CA: gpu-v100-3 HCA-1:`, `Switch: 0x0c42a10300b95bfa MF0;ibswitch254:MQM8700/U1:`.
fn header(line: &str) -> Option<(String, Option<String>, String)> {
    let l = clean(line).trim();
    let (kind, rest) = l.split_once(": ")?;
    if !matches!(kind, "CA" | "Switch" | "Router") {
        return None;
    }
    let rest = rest.strip_suffix(':')?;
    let (guid, name) = match rest.split_once(' ') {
        Some((g, n)) if kind == "Switch" && g.starts_with("0x") => (Some(g.to_string()), n),
        _ => (None, rest),
    };
    let name = name.trim();
    (!name.is_empty()).then(|| (kind.to_string(), guid, super::clip(name, 80)))
}

fn state_word(w: &str) -> bool {
    matches!(w, "Down" | "Initialize" | "Armed" | "Active" | "NoChange") || w.starts_with("?(")
}

/// One port line: `[0x<guid>] <lid> <port>[<ext>] ==(<link>)==>  <remote>`.
fn link(line: &str) -> Option<Link> {
    let l = clean(line);
    let (left, right) = l.split_once("==(")?;
    // with `--switch` settings the link is `…/  LinkUp) (HOQ:1 VL_Stall:2)==>`
    let (inner, remote) = right.split_once(")==>")?;
    let inner = inner.split(')').next()?;
    // left: [guid] lid port[ext]
    let left = left.trim();
    let before_ext = left.rsplit_once('[').map_or(left, |(a, _)| a);
    let w: Vec<&str> = before_ext.split_whitespace().collect();
    let (guid, lid, port) = match w.as_slice() {
        [g, lid, port] if g.starts_with("0x") => (Some(g.to_string()), lid, port),
        [lid, port] => (None, lid, port),
        _ => return None,
    };
    let (st, phys) = inner.split_once('/')?;
    let st: Vec<&str> = st.split_whitespace().collect();
    let state = *st.last()?;
    let phys = phys.trim();
    if !state_word(state) || phys.is_empty() || phys.contains(' ') {
        return None;
    }
    let (width, speed) = match &st[..st.len() - 1] {
        [] => (None, None),
        [w, s @ ..] => (
            Some(super::clip(w, 8)),
            (!s.is_empty()).then(|| super::clip(&s.join(" "), 40)),
        ),
    };
    let remote = remote
        .split_once('"')
        .and_then(|(_, r)| r.split_once('"'))
        .map(|(d, _)| d.trim())
        .filter(|d| !d.is_empty() && *d != "Port not available")
        .map(|d| super::clip(d, 80));
    Some(Link {
        port_guid: guid,
        lid: lid.parse().ok()?,
        port: port.parse().ok()?,
        width,
        speed,
        state: state.to_string(),
        physical_state: super::clip(phys, 40),
        remote,
    })
}

/// A node header with a port line under it.
pub fn looks_like_iblinkinfo(text: &str) -> bool {
    let mut in_node = false;
    for line in super::scan::lines(text).take(4000) {
        if header(line).is_some() {
            in_node = true;
        } else if in_node && link(line).is_some() {
            return true;
        }
    }
    false
}

pub fn parse_iblinkinfo(text: &str) -> Iblinkinfo {
    let mut out = Iblinkinfo::default();
    for line in super::scan::lines(text).take(50_000) {
        if let Some((kind, guid, name)) = header(line) {
            if out.nodes.len() >= super::MAX_ITEMS {
                break;
            }
            out.nodes.push(Node {
                kind,
                guid,
                name,
                links: Vec::new(),
            });
        } else if let Some(l) = link(line)
            && let Some(n) = out.nodes.last_mut()
            && n.links.len() < super::MAX_ITEMS
        {
            n.links.push(l);
        }
    }
    out
}

impl Iblinkinfo {
    /// The CAs' ports (a switch's are not judged: see the module's notes).
    pub fn ports(&self) -> Vec<IbPort> {
        self.nodes
            .iter()
            .filter(|n| n.kind == "CA")
            .flat_map(|n| {
                n.links.iter().map(|l| IbPort {
                    device: n.name.clone(),
                    port: l.port,
                    state: match l.state.as_str() {
                        "Initialize" => Some("Initializing".to_string()),
                        s => infiniband::logical_state(s).map(str::to_string),
                    },
                    physical_state: infiniband::physical_state(&l.physical_state)
                        .map(str::to_string),
                    link_layer: Some("InfiniBand".to_string()),
                    rate_gbps: None,
                    netdev: None,
                    netdev_state: None,
                    sm_lid: None,
                    source: "iblinkinfo",
                })
            })
            .take(super::MAX_ITEMS)
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct IblinkinfoKind;

impl super::EvidenceKind for IblinkinfoKind {
    fn name(&self) -> &'static str {
        "iblinkinfo"
    }
    fn doc(&self) -> &'static str {
        "`iblinkinfo` output (infiniband-diags): every CA and switch of the fabric with each port's width, speed, state and physical state and the node at its other end"
    }
    fn example(&self) -> &'static str {
        "iblinkinfo"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "nodes",
            "kind (CA, Switch, Router), guid, name, links: port_guid, lid, port, width, speed, state, physical_state, remote",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_iblinkinfo(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_iblinkinfo(text);
        if v.nodes.iter().all(|n| n.links.is_empty()) {
            return Err(super::ParseError::NotThisKind(
                "no iblinkinfo node (`CA: <desc>:` or `Switch: 0x<guid> <desc>:`) with a `==(… State/PhysState)==>` port line in the text",
            ));
        }
        super::to_value(&v)
    }
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        // the fabric's ports as the node sees them: read by the ib.ports probe from the paste
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

    const NCCLT71: &str = "CA: gpu-v100-3 HCA-1:\n      0xb88303ffff7f61c4      6    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    3[  ] \"MF0;ibswitch254:MQM8700/U1\" ( )\nCA: Mellanox Technologies Aggregation Node:\n      0x0c42a10300b95c02      4    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       3   41[  ] \"MF0;ibswitch254:MQM8700/U1\" ( )\nSwitch: 0x0c42a10300b95bfa MF0;ibswitch254:MQM8700/U1:\n           3    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       1    1[  ] \"gpu-v100-0 HCA-1\" ( )\n           ...\n";

    #[test]
    fn cas_and_a_switch_all_active() {
        // NVIDIA/nccl-tests#71 (h146): four V100 nodes on an MQM8700, EDR
        assert!(looks_like_iblinkinfo(NCCLT71));
        let d = parse_iblinkinfo(NCCLT71);
        assert_eq!(d.nodes.len(), 3);
        let ca = &d.nodes[0];
        assert_eq!(
            (ca.kind.as_str(), ca.name.as_str()),
            ("CA", "gpu-v100-3 HCA-1")
        );
        let l = &ca.links[0];
        assert_eq!(l.port_guid.as_deref(), Some("0xb88303ffff7f61c4"));
        assert_eq!((l.lid, l.port), (6, 1));
        assert_eq!(l.width.as_deref(), Some("4X"));
        assert_eq!(l.speed.as_deref(), Some("25.78125 Gbps"));
        assert_eq!(
            (l.state.as_str(), l.physical_state.as_str()),
            ("Active", "LinkUp")
        );
        assert_eq!(l.remote.as_deref(), Some("MF0;ibswitch254:MQM8700/U1"));
        let sw = &d.nodes[2];
        assert_eq!(sw.guid.as_deref(), Some("0x0c42a10300b95bfa"));
        assert_eq!(sw.links[0].port_guid, None);
        assert_eq!(sw.links[0].lid, 3);
        let p = d.ports();
        assert_eq!(p.len(), 2);
        assert!(p.iter().all(|p| p.verdict() == Verdict::Up));
        assert_eq!(p[0].name(), "gpu-v100-3 HCA-1 port 1");
    }

    #[test]
    fn down_and_initializing_ports() {
        // print_port's two link forms: a Down port (no width/speed) and one the SM has not
        // brought up; a switch's empty port is kept but not judged
        let t = "CA: node7 HCA-1:\n      0x0002c90300002779      0    1[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n      0x0002c9030000277a     65    2[  ] ==( 4X           5.0 Gbps Initialize/  LinkUp)==>       3    9[  ] \"sw1\" ( )\nSwitch: 0x0002c90200400ff8 sw1:\n           3   17[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n";
        let d = parse_iblinkinfo(t);
        let l = &d.nodes[0].links[0];
        assert_eq!((l.width.as_deref(), l.speed.as_deref()), (None, None));
        assert_eq!(l.remote, None);
        let p = d.ports();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].verdict(), Verdict::Down);
        assert_eq!(p[0].physical_state.as_deref(), Some("Polling"));
        assert_eq!(p[1].state.as_deref(), Some("Initializing"));
        assert!(p[1].cause().contains("subnet manager"), "{}", p[1].cause());
        assert_eq!(d.nodes[1].links.len(), 1);
    }

    #[test]
    fn switch_settings_and_other_text_are_handled() {
        // `--switch`: the HOQ/VL_Stall settings after the link
        let t = "Switch: 0x0002c90200400ff8 sw1:\n           3    1[  ] ==( 4X 14.0625 Gbps Active/  LinkUp) (HOQ:19 VL_Stall:7)==>       5    1[  ] \"h1 HCA-1\" ( )\n";
        let d = parse_iblinkinfo(t);
        assert_eq!(d.nodes[0].links[0].speed.as_deref(), Some("14.0625 Gbps"));
        assert!(d.ports().is_empty());
        // ibportstate's dotted fields, an ibstat block and prose are not iblinkinfo
        assert!(!looks_like_iblinkinfo(
            "# Port info: Lid 1 port 6\nLinkState:.......................Active\nPhysLinkState:...................LinkUp\n"
        ));
        assert!(!looks_like_iblinkinfo(
            "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
        ));
        assert!(!looks_like_iblinkinfo(
            "CA: a note about the fabric:\nthe link ==(looks)==> fine to me\n"
        ));
        for p in crate::evidence::testutil::prefixes(NCCLT71, 5) {
            let _ = parse_iblinkinfo(p).ports();
        }
    }
}
