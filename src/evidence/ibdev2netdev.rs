//! `ibdev2netdev` output (a shell script shipped with Mellanox/NVIDIA OFED), read from its
//! producer: the public copy in github.com/Mellanox/docker-sriov-plugin `ibdev2netdev` (commit
//! b0619966, "Copyright (c) 2017 Mellanox Technologies"). It prints one line per RDMA port that
//! has a network interface:
//!
//! ```text
//! mlx5_0 port 1 ==> ib0 (Up)                                      default
//! 0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 fw 20.28.1002 port 1 (ACTIVE) ==> ib0 (Up)
//!                                                                 -v: PCI address, device id, part,
//!                                                                 description, firmware, port state
//! mlx4_0 port 1 <===> ib0                                         "old style" (no dev_id in sysfs)
//! mlx5_3 (MT4124 - NA)  fw 20.28.4000 port 1 (DOWN  ) ==> net1 (Down)
//!                                                                 -v where `find_pdev` finds no
//!                                                                 PCI function for the device
//! ```
//!
//! The state in the last parentheses is the interface's carrier (`/sys/class/net/X/carrier`: `Up`,
//! `Down`, or `NA` without a carrier file), not the RDMA port's: an interface that is
//! administratively down reads `Down` whatever the port does. Only `-v` prints the port's own
//! state (`/sys/class/infiniband/D/ports/P/state`, padded to six characters). Pastes through
//! `column -t` (several spaces between words) and with `# comments` after a line read the same.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Ibdev2netdev {
    pub links: Vec<Link>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Link {
    pub device: String,
    pub port: u32,
    pub netdev: String,
    /// `Up`, `Down` or `NA` (the interface's carrier); absent in the old style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev_state: Option<String>,
    /// `-v`: PCI address of the device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci: Option<String>,
    /// `-v`: `MT4123`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// `-v`: the part number from the VPD (`MCX653105A-HDAT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_id: Option<String>,
    /// `-v`: the description from the VPD (`ConnectX-6 VPI`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `-v`: firmware version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fw: Option<String>,
    /// `-v`: the RDMA port's state (`ACTIVE`, `DOWN`, `INIT`, `ARMED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_state: Option<String>,
    /// The `<===>` layout of old drivers.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub old_style: bool,
}

fn paren(w: &str) -> Option<&str> {
    w.strip_prefix('(')?.strip_suffix(')').map(str::trim)
}

/// One line of the default or old-style layout.
fn short_line(words: &[&str]) -> Option<Link> {
    match words {
        [dev, "port", n, "==>", netdev, state, ..] => Some(Link {
            device: dev.to_string(),
            port: n.parse().ok()?,
            netdev: netdev.to_string(),
            netdev_state: Some(paren(state)?.to_string()),
            ..Link::default()
        }),
        [dev, "port", n, "<===>", netdev, ..] => Some(Link {
            device: dev.to_string(),
            port: n.parse().ok()?,
            netdev: netdev.to_string(),
            old_style: true,
            ..Link::default()
        }),
        _ => None,
    }
}

/// `find_pdev`'s word: a directory name under /sys/bus/pci/devices, `DDDD:BB:DD.F` (domain,
/// bus, device, function in hex).
fn is_pci_address(w: &str) -> bool {
    let Some((bdf, func)) = w.rsplit_once('.') else {
        return false;
    };
    let parts: Vec<&str> = bdf.split(':').collect();
    parts.len() >= 2
        && parts.len() <= 3
        && !func.is_empty()
        && func.chars().all(|c| c.is_ascii_hexdigit())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// One `-v` line: `PCI DEV (DEVID - PART) DESC fw FW port N (STATE) ==> NETDEV (LINK)`, the PCI
/// address missing where `find_pdev` found none.
fn verbose_line(l: &str) -> Option<Link> {
    let (left, right) = l.split_once(" ==> ")?;
    let right: Vec<&str> = right.split_whitespace().collect();
    let [netdev, link, ..] = right[..] else {
        return None;
    };
    let (head, port_part) = left.rsplit_once(" port ")?;
    let (n, state) = port_part.trim().split_once(' ')?;
    let (head, fw) = head.rsplit_once(" fw ")?;
    // `echo "$x $d ($devid - $partid) $devdesc fw …"`: `$x` is `find_pdev $d`, the PCI
    // function whose `infiniband/` directory holds the device, and prints nothing where no
    // such directory is found (a VF handed to a container without the host's
    // /sys/bus/pci/devices): the line then starts with the device name
    let head = head.trim();
    let (pci, head) = match head.split_once(' ') {
        Some((first, after)) if is_pci_address(first) => (Some(first), after.trim_start()),
        _ => (None, head),
    };
    let (dev, rest) = head.split_once(' ').unwrap_or((head, ""));
    if dev.is_empty() || dev.starts_with('(') {
        return None;
    }
    let (ids, desc) = match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
        Some((ids, desc)) => (Some(ids), desc.trim()),
        None => (None, rest.trim()),
    };
    let (device_id, part_id) = match ids.and_then(|i| i.split_once(" - ")) {
        Some((d, p)) => (Some(d.trim()), Some(p.trim())),
        None => (None, None),
    };
    let some = |s: Option<&str>| {
        s.filter(|s| !s.is_empty() && *s != "NA")
            .map(str::to_string)
    };
    Some(Link {
        device: dev.to_string(),
        port: n.trim().parse().ok()?,
        netdev: netdev.to_string(),
        netdev_state: Some(paren(link)?.to_string()),
        pci: pci.map(str::to_string),
        device_id: some(device_id),
        part_id: some(part_id),
        description: some(Some(desc)),
        fw: some(Some(fw.trim())),
        port_state: some(paren(state.trim())),
        old_style: false,
    })
}

fn line(raw: &str) -> Option<Link> {
    let l = clean(raw).trim();
    let l = l.strip_prefix("$ ").unwrap_or(l);
    let words: Vec<&str> = l.split_whitespace().collect();
    if words.len() >= 7 && words.contains(&"fw") {
        // -v: the words rejoined with single spaces (column -t pads them)
        if let Some(v) = verbose_line(&words.join(" ")) {
            return Some(v);
        }
    }
    short_line(&words)
}

pub fn looks_like_ibdev2netdev(text: &str) -> bool {
    super::content_lines(text)
        .take(4000)
        .any(|l| line(l).is_some())
}

pub fn parse_ibdev2netdev(text: &str) -> Ibdev2netdev {
    Ibdev2netdev {
        links: super::content_lines(text)
            .filter_map(line)
            .take(super::MAX_ITEMS)
            .collect(),
    }
}

impl Ibdev2netdev {
    pub fn ports(&self) -> Vec<IbPort> {
        self.links
            .iter()
            .map(|l| IbPort {
                device: l.device.clone(),
                port: l.port,
                state: l
                    .port_state
                    .as_deref()
                    .and_then(infiniband::logical_state)
                    .map(str::to_string),
                physical_state: None,
                link_layer: None,
                rate_gbps: None,
                netdev: Some(l.netdev.clone()),
                netdev_state: l.netdev_state.clone(),
                sm_lid: None,
                source: "ibdev2netdev",
            })
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct Ibdev2netdevKind;

impl super::EvidenceKind for Ibdev2netdevKind {
    fn name(&self) -> &'static str {
        "ibdev2netdev"
    }
    fn doc(&self) -> &'static str {
        "`ibdev2netdev` output (Mellanox OFED): each RDMA port's network interface and its carrier (`-v`: PCI address, part, firmware, the port's own state)"
    }
    fn example(&self) -> &'static str {
        "ibdev2netdev -v"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "links",
            "device, port, netdev, netdev_state (the carrier), and with -v: pci, device_id, part_id, description, fw, port_state; old_style",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_ibdev2netdev(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_ibdev2netdev(text);
        if v.links.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no ibdev2netdev line (`DEV port N ==> NETDEV (State)`) in the text",
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
    use crate::evidence::testutil::fixture;

    #[test]
    fn ib_fabric_without_ipoib_is_not_judged_down() {
        // github.com/imbue-ai/cluster-health/issues/4: a healthy pure-IB H100 node; the IB
        // interfaces read (Down) because IPoIB is not configured, the RoCE one is Up
        let t = fixture("infiniband/ibdev2netdev_ib_fabric_healthy.txt");
        assert!(looks_like_ibdev2netdev(&t));
        let d = parse_ibdev2netdev(&t);
        assert_eq!(d.links.len(), 12);
        let l = &d.links[0];
        assert_eq!(l.device, "mlx5_0");
        assert_eq!(l.port, 1);
        assert_eq!(l.netdev, "ibp26s0");
        assert_eq!(l.netdev_state.as_deref(), Some("Down"));
        let ports = d.ports();
        assert_eq!(ports[0].verdict(), Verdict::NotShown);
        assert_eq!(ports[1].verdict(), Verdict::Up, "enp27s0f0np0 (Up)");
        // the one Ethernet interface that is Down is the second port of a dual-port card
        let down: Vec<String> = ports
            .iter()
            .filter(|p| p.verdict() == Verdict::Down)
            .map(|p| p.name())
            .collect();
        assert_eq!(down, vec!["mlx5_2 port 1", "mlx5_8 port 1"]);
    }

    #[test]
    fn vf_interfaces_down() {
        // github.com/openshift/sriov-network-operator/issues/635 ("VF is down state")
        let t = fixture("infiniband/ibdev2netdev_vfs_down.txt");
        let d = parse_ibdev2netdev(&t);
        assert!(
            d.links
                .iter()
                .any(|l| l.netdev == "ibp75s0" && l.netdev_state.as_deref() == Some("Up"))
        );
        let p = d.ports();
        let roce_down: Vec<String> = p
            .iter()
            .filter(|p| p.verdict() == Verdict::Down)
            .map(|p| p.name())
            .collect();
        assert!(
            roce_down.is_empty(),
            "IPoIB carriers are not port states: {roce_down:?}"
        );
        assert!(
            p.iter()
                .any(|p| p.netdev.as_deref() == Some("enp97s0f0") && p.verdict() == Verdict::Up)
        );
    }

    #[test]
    fn verbose_without_pci_address() {
        // healthy, public: github.com/NVIDIA/nccl-tests/issues/36, a maintainer's Azure
        // NC24rs_v3 node (ConnectX-3 VF): no VPD, so `(MT4100 - NA)` and an empty description
        let d = parse_ibdev2netdev(
            "$ sudo ibdev2netdev -v\n0002:00:02.0 mlx4_0 (MT4100 - NA)  fw 2.43.7008 port 1 (ACTIVE) ==> ib0 (Down)\n",
        );
        let v = &d.links[0];
        assert_eq!(v.pci.as_deref(), Some("0002:00:02.0"));
        assert_eq!(v.device, "mlx4_0");
        assert_eq!(v.device_id.as_deref(), Some("MT4100"));
        assert_eq!(v.part_id, None, "NA");
        assert_eq!(v.description, None);
        assert_eq!(v.fw.as_deref(), Some("2.43.7008"));
        assert_eq!(v.port_state.as_deref(), Some("ACTIVE"));
        assert_eq!(v.netdev_state.as_deref(), Some("Down"));
        assert_eq!(
            d.ports()[0].verdict(),
            Verdict::Up,
            "the port, not ib0's carrier"
        );
        // the producer's `echo "$x $d ($devid - $partid) $devdesc fw $fwver port $port
        // ($ibstate) ==> $eth ($link_state)"` with `$x` empty (find_pdev found no PCI function:
        // an SR-IOV VF inside a pod) and `$ibstate` padded by `printf "%-6s"`; no public paste
        // of this form was found, so the line is the script's own format
        let d = parse_ibdev2netdev(
            " mlx5_3 (MT4124 - NA)  fw 20.28.4000 port 1 (DOWN  ) ==> net1 (Down)\n",
        );
        let v = &d.links[0];
        assert_eq!(v.pci, None);
        assert_eq!(v.device, "mlx5_3");
        assert_eq!(v.device_id.as_deref(), Some("MT4124"));
        assert_eq!(v.fw.as_deref(), Some("20.28.4000"));
        assert_eq!(v.port_state.as_deref(), Some("DOWN"));
        assert_eq!(v.netdev, "net1");
        assert_eq!(d.ports()[0].verdict(), Verdict::Down);
        assert!(is_pci_address("0000:3b:00.0") && is_pci_address("3b:00.0"));
        assert!(!is_pci_address("mlx5_3") && !is_pci_address("(MT4124"));
    }

    #[test]
    fn verbose_and_old_layouts() {
        let d = parse_ibdev2netdev(
            "0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI fw 20.28.1002 port 1 (DOWN  ) ==> ib0 (Down)\nmlx4_0 port 2 <===> ib1\n",
        );
        let v = &d.links[0];
        assert_eq!(v.pci.as_deref(), Some("0000:3b:00.0"));
        assert_eq!(v.device, "mlx5_0");
        assert_eq!(v.device_id.as_deref(), Some("MT4123"));
        assert_eq!(v.part_id.as_deref(), Some("MCX653105A-HDAT"));
        assert_eq!(v.description.as_deref(), Some("ConnectX-6 VPI"));
        assert_eq!(v.fw.as_deref(), Some("20.28.1002"));
        assert_eq!(v.port_state.as_deref(), Some("DOWN"));
        assert_eq!(v.netdev, "ib0");
        assert_eq!(d.ports()[0].verdict(), Verdict::Down);
        assert_eq!(d.ports()[0].state.as_deref(), Some("Down"));
        let o = &d.links[1];
        assert!(o.old_style);
        assert_eq!(
            (o.device.as_str(), o.port, o.netdev.as_str()),
            ("mlx4_0", 2, "ib1")
        );
        assert_eq!(d.ports()[1].verdict(), Verdict::NotShown);
        assert!(!looks_like_ibdev2netdev("the port ==> was down\n"));
    }
}
