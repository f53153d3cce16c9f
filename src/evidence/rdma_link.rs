//! `rdma link` output (iproute2's `rdma` tool, `rdma link` / `rdma link show [DEV/PORT]`), read
//! from its producer: iproute2 `rdma/link.c` at v7.1.0-55-gee2a4a86 (github.com/iproute2/iproute2),
//! `link_parse_cb()`. One line per RDMA port, each field printed only when the kernel's netlink
//! reply carries its attribute:
//!
//! ```text
//! link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING
//! link mlx5_4/1 state ACTIVE physical_state LINK_UP netdev enp97s0f0
//! ```
//!
//! - `link %s/` `%u ` — the device and port (`ifname`, `port`);
//! - `subnet_prefix %s `, `lid %u `, `sm_lid %u `, `lmc %u ` — InfiniBand ports only (the
//!   kernel sends no LID for a RoCE port), so a line with a LID is an InfiniBand port and one
//!   with a `netdev` and no LID a RoCE (Ethernet) one;
//! - `state %s ` — `link_state_to_str()`: `NOP`, `DOWN`, `INIT`, `ARMED`, `ACTIVE`,
//!   `ACTIVE_DEFER` (else `UNKNOWN`);
//! - `physical_state %s ` — `phys_state_to_str()`: `NOP`, `SLEEP`, `POLLING`, `DISABLED`,
//!   `ARMED`, `LINK_UP`, `LINK_ERROR_RECOVER`, `PHY_TEST`, `OPA_OFFLINE`, `OPA_TEST`
//!   (else `UNKNOWN`);
//! - `netdev %s ` and, with `-d`, `netdev_index %u ` and a `caps: <…>` line below.
//!
//! Each field ends with a space, so pasted lines may keep a trailing one. Only the port's
//! state is judged (by [`super::infiniband`], like ibstat's): the line carries the RDMA port's
//! own logical state, not an interface's carrier.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RdmaLink {
    pub links: Vec<Link>,
}

/// One `link DEV/PORT …` line.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Link {
    pub device: String,
    pub port: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subnet_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lmc: Option<u32>,
    /// As printed: `DOWN`, `INIT`, `ARMED`, `ACTIVE`, `ACTIVE_DEFER`, `NOP`, `UNKNOWN`.
    pub state: String,
    /// As printed: `POLLING`, `DISABLED`, `LINK_UP`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
}

/// The words `link_state_to_str()` prints.
const STATES: &[&str] = &[
    "NOP",
    "DOWN",
    "INIT",
    "ARMED",
    "ACTIVE",
    "ACTIVE_DEFER",
    "UNKNOWN",
];

/// One line, or `None` when it is not `rdma link`'s: `link DEV/PORT` then only the fields
/// link.c prints, each with its value, `state` among them.
fn line(raw: &str) -> Option<Link> {
    let words: Vec<&str> = clean(raw).split_whitespace().collect();
    let ["link", devport, rest @ ..] = words.as_slice() else {
        return None;
    };
    let (dev, port) = devport.rsplit_once('/')?;
    if dev.is_empty() || dev.contains(char::is_whitespace) {
        return None;
    }
    let mut l = Link {
        device: dev.to_string(),
        port: port.parse().ok()?,
        ..Link::default()
    };
    if rest.len() % 2 != 0 {
        return None;
    }
    let num = |v: &str| v.parse::<u32>().ok();
    for kv in rest.chunks(2) {
        let (k, v) = (kv[0], kv[1]);
        match k {
            "subnet_prefix" => l.subnet_prefix = Some(super::clip(v, 40)),
            "lid" => l.lid = Some(num(v)?),
            "sm_lid" => l.sm_lid = Some(num(v)?),
            "lmc" => l.lmc = Some(num(v)?),
            "state" if STATES.contains(&v) => l.state = v.to_string(),
            "physical_state" => l.physical_state = Some(super::clip(v, 40)),
            "netdev" => l.netdev = Some(super::clip(v, 40)),
            "netdev_index" => {
                num(v)?;
            }
            _ => return None,
        }
    }
    (!l.state.is_empty()).then_some(l)
}

pub fn looks_like_rdma_link(text: &str) -> bool {
    super::content_lines(text)
        .take(4000)
        .any(|l| line(l).is_some())
}

pub fn parse_rdma_link(text: &str) -> RdmaLink {
    RdmaLink {
        links: super::content_lines(text)
            .filter_map(line)
            .take(super::MAX_ITEMS)
            .collect(),
    }
}

impl RdmaLink {
    pub fn ports(&self) -> Vec<IbPort> {
        self.links
            .iter()
            .map(|l| IbPort {
                device: l.device.clone(),
                port: l.port,
                // ACTIVE_DEFER: active, with the transmitter deferred (IBTA); usable
                state: match l.state.as_str() {
                    "ACTIVE_DEFER" => Some("Active"),
                    s => infiniband::logical_state(s),
                }
                .map(str::to_string),
                physical_state: l
                    .physical_state
                    .as_deref()
                    .and_then(infiniband::physical_state)
                    .map(str::to_string),
                link_layer: if l.lid.is_some() || l.subnet_prefix.is_some() {
                    Some("InfiniBand".into())
                } else if l.netdev.is_some() {
                    Some("Ethernet".into())
                } else {
                    None
                },
                rate_gbps: None,
                netdev: l.netdev.clone(),
                netdev_state: None,
                sm_lid: l.sm_lid,
                source: "rdma link",
            })
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct RdmaLinkKind;

impl super::EvidenceKind for RdmaLinkKind {
    fn name(&self) -> &'static str {
        "rdma-link"
    }
    fn doc(&self) -> &'static str {
        "`rdma link` output (iproute2): each RDMA port's logical and physical state, LIDs (InfiniBand) and network interface"
    }
    fn example(&self) -> &'static str {
        "rdma link show"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "links",
            "device, port, subnet_prefix, lid, sm_lid, lmc (InfiniBand), state, physical_state, netdev",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_rdma_link(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_rdma_link(text);
        if v.links.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `rdma link` line (`link DEV/PORT … state STATE …`) in the text",
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
    fn an_ib_port_down_polling_is_down() {
        // github.com/ROCm/rccl/issues/1423: RCCL hangs at init on one VM; its IB port
        let t = "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING\n";
        assert!(looks_like_rdma_link(t));
        let d = parse_rdma_link(t);
        let l = &d.links[0];
        assert_eq!((l.device.as_str(), l.port), ("mlx5_7", 1));
        assert_eq!((l.lid, l.sm_lid, l.lmc), (Some(3403), Some(1), Some(0)));
        let p = &d.ports()[0];
        assert_eq!(p.verdict(), Verdict::Down);
        assert_eq!(p.state.as_deref(), Some("Down"));
        assert_eq!(p.physical_state.as_deref(), Some("Polling"));
        assert_eq!(p.link_layer.as_deref(), Some("InfiniBand"));
        assert!(p.cause().contains("cable"), "{}", p.cause());
    }

    #[test]
    fn roce_ports_active_with_trailing_spaces_and_a_prompt() {
        // github.com/deepseek-ai/3FS/pull/283 (trailing spaces as link.c prints them) and
        // deepseek-ai/3FS#263 (soft-RoCE), both healthy
        let t = "[root@node75 ~]# rdma link show\nlink mlx5_0/1 state ACTIVE physical_state LINK_UP netdev p1p1 \nlink mlx5_1/1 state ACTIVE physical_state LINK_UP netdev p1p2 \n";
        let d = parse_rdma_link(t);
        assert_eq!(d.links.len(), 2);
        let p = d.ports();
        assert!(p.iter().all(|p| p.verdict() == Verdict::Up));
        assert_eq!(p[1].netdev.as_deref(), Some("p1p2"));
        assert_eq!(p[1].link_layer.as_deref(), Some("Ethernet"));
        let rxe = parse_rdma_link("link rxe_0/1 state ACTIVE physical_state LINK_UP netdev p1p1\n");
        assert_eq!(rxe.ports()[0].verdict(), Verdict::Up);
    }

    #[test]
    fn disabled_ib_ports_beside_active_ones() {
        // github.com/openshift/sriov-network-operator/issues/635 (`rdma link`, as pasted)
        let t = "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP\nlink mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 0 lmc 0 state DOWN physical_state DISABLED\nlink mlx5_4/1 state ACTIVE physical_state LINK_UP netdev enp97s0f0\n";
        let p = parse_rdma_link(t).ports();
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].verdict(), Verdict::Down);
        assert_eq!(p[1].physical_state.as_deref(), Some("Disabled"));
        assert_eq!(p[2].link_layer.as_deref(), Some("Ethernet"));
    }

    #[test]
    fn other_lines_that_start_with_link_are_not_read() {
        // `ip link` and prose
        assert!(!looks_like_rdma_link(
            "link/ether 08:00:27:c4:7d:47 brd ff:ff:ff:ff:ff:ff\n"
        ));
        assert!(!looks_like_rdma_link(
            "link mlx5_0/1 is down, state unknown\n"
        ));
        assert!(!looks_like_rdma_link(
            "link up on eth0/1 state ACTIVE please\n"
        ));
        assert!(!looks_like_rdma_link("link mlx5_0/x state ACTIVE\n"));
    }
}
