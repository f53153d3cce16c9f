//! `ibstatus` output, read from its producer: rdma-core
//! `infiniband-diags/scripts/ibstatus` (read at e8279e0b, github.com/linux-rdma/rdma-core), a
//! shell script distinct from `ibstat`: it `cat`s the port's sysfs files
//! (`/sys/class/infiniband/DEV/ports/N/…`) under fixed labels, one block per port:
//!
//! ```text
//! Infiniband device 'mlx5_0' port 1 status:
//!         default gid:     fe80:0000:0000:0000:88e9:a4ff:ff4c:2bdc     gids/0
//!         base lid:        0x22                                         lid
//!         sm lid:          0x47                                         sm_lid
//!         state:           4: ACTIVE                                    state (the kernel's "N: WORD")
//!         phys state:      5: LinkUp                                    phys_state
//!         rate:            200 Gb/sec (4X HDR)                          rate
//!         link_layer:      InfiniBand                                   link_layer ("IB" when absent)
//! ```
//!
//! When sysfs has no device (`/sys/class/infiniband` missing, no `ports` under a device) the
//! script's `fatal` prints `Fatal error:  No devices` or `Fatal error:  device 'X': sys files
//! not found (…/ports)` and exits; such a paste is read as that error, with no port. The script
//! (`cd $infiniband_base || fatal No devices; for dev in *`) prints the second for the device
//! `*` only where `/sys/class/infiniband` exists and is empty: the shell's glob matched nothing.
//! That is `empty_class`: the RDMA core is loaded and no device registered, read by `ib.ports`
//! as a host without any RDMA port ([`super::infiniband::IbPort::no_device`]).
//!
//! A file it cannot read prints `unknown`, which is kept as no value. The state words are the
//! kernel's (`DOWN`, `INIT`, `ARMED`, `ACTIVE`; `Polling`, `Disabled`, `LinkUp`, …), mapped to
//! ibstat's vocabulary by [`super::infiniband`], so `comm.ib-port-down` judges the three tools
//! and this one alike.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Ibstatus {
    pub ports: Vec<StatusPort>,
    /// The script's `fatal` lines (`Fatal error:  No devices`, `Fatal error:  device 'X': sys
    /// files not found (…)`): it found no RDMA device to show.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// `Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)`: the
    /// class directory exists and holds no device (the script's `for dev in *` matched nothing).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub empty_class: bool,
}

/// One `Infiniband device 'DEV' port N status:` block.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StatusPort {
    pub device: String,
    pub port: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_gid: Option<String>,
    /// As printed (`0x22`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_lid: Option<String>,
    /// As printed (`0x47`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<String>,
    /// ibstat's word for the logical state (`Active`), from the kernel's `4: ACTIVE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// ibstat's word for the physical state (`LinkUp`), from `5: LinkUp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phys_state: Option<String>,
    /// The rate line as printed (`200 Gb/sec (4X HDR)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// Its number in Gb/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    /// `InfiniBand` or `Ethernet` (the script prints `IB` when the file is missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<String>,
}

/// `Infiniband device 'DEV' port N status:`
fn header(line: &str) -> Option<(String, u32)> {
    let rest = line.trim().strip_prefix("Infiniband device '")?;
    let (dev, rest) = rest.split_once('\'')?;
    let n = rest
        .trim()
        .strip_prefix("port ")?
        .strip_suffix(" status:")?;
    Some((dev.to_string(), n.trim().parse().ok()?))
}

/// The value after a label, without the `N: ` the kernel puts before a state word; `unknown`
/// (the script's word for a file it could not read) is no value.
fn value(v: &str) -> Option<String> {
    let v = v.trim();
    (!v.is_empty() && v != "unknown").then(|| v.to_string())
}

fn state_word(v: &str) -> &str {
    v.split_once(':').map_or(v, |(n, w)| {
        if n.trim().chars().all(|c| c.is_ascii_digit()) {
            w.trim()
        } else {
            v
        }
    })
}

/// The script's `fatal` line about devices (`echo "Fatal error: " $*`).
fn fatal_line(l: &str) -> Option<&str> {
    let t = l.trim();
    let rest = t.strip_prefix("Fatal error:")?.trim();
    (rest == "No devices" || (rest.starts_with("device '") && rest.contains("sys files not found")))
        .then_some(t)
}

/// True when the text holds an `ibstatus` port block: the header and a labelled line after it;
/// or the script's `fatal` line saying there is no device.
pub fn looks_like_ibstatus(text: &str) -> bool {
    if super::content_lines(text)
        .take(4000)
        .any(|l| fatal_line(clean(l)).is_some())
    {
        return true;
    }
    let mut lines = super::content_lines(text).map(clean).take(4000);
    while let Some(l) = lines.next() {
        if header(l).is_some() {
            return lines.take(8).any(|n| {
                let n = n.trim_start();
                n.starts_with("state:")
                    || n.starts_with("default gid:")
                    || n.starts_with("base lid:")
            });
        }
    }
    false
}

pub fn parse_ibstatus(text: &str) -> Ibstatus {
    let mut out = Ibstatus::default();
    for raw in super::content_lines(text) {
        let line = clean(raw);
        if let Some(e) = fatal_line(line) {
            if e.contains("device '*': sys files not found") {
                out.empty_class = true;
            }
            if out.errors.len() < super::MAX_ITEMS {
                out.errors.push(super::clip(e, super::MAX_TEXT));
            }
            continue;
        }
        if let Some((device, port)) = header(line) {
            if out.ports.len() >= super::MAX_ITEMS {
                break;
            }
            out.ports.push(StatusPort {
                device: super::clip(&device, 64),
                port,
                ..Default::default()
            });
            continue;
        }
        let Some(p) = out.ports.last_mut() else {
            continue;
        };
        let Some((label, v)) = line.trim_start().split_once(':') else {
            continue;
        };
        let v = super::clip(v, 200);
        match label.trim() {
            "default gid" => p.default_gid = value(&v),
            "base lid" => p.base_lid = value(&v),
            "sm lid" => p.sm_lid = value(&v),
            "state" => {
                p.state = value(&v).map(|s| {
                    let w = state_word(&s);
                    infiniband::logical_state(w).map_or_else(|| w.to_string(), str::to_string)
                })
            }
            "phys state" => {
                p.phys_state = value(&v).map(|s| {
                    let w = state_word(&s);
                    infiniband::physical_state(w).map_or_else(|| w.to_string(), str::to_string)
                })
            }
            "rate" => {
                p.rate = value(&v);
                p.rate_gbps = p
                    .rate
                    .as_deref()
                    .and_then(|r| r.split_whitespace().next()?.parse().ok());
            }
            "link_layer" => {
                p.link_layer = value(&v).map(|l| if l == "IB" { "InfiniBand".into() } else { l })
            }
            _ => {}
        }
    }
    out
}

impl Ibstatus {
    pub fn ports(&self) -> Vec<IbPort> {
        if self.ports.is_empty() && self.empty_class {
            return vec![IbPort::no_device("ibstatus")];
        }
        self.ports
            .iter()
            .map(|p| IbPort {
                device: p.device.clone(),
                port: p.port,
                state: p.state.clone(),
                physical_state: p.phys_state.clone(),
                link_layer: p.link_layer.clone(),
                rate_gbps: p.rate_gbps,
                netdev: None,
                netdev_state: None,
                sm_lid: p.sm_lid.as_deref().and_then(|s| {
                    let s = s.trim();
                    match s.strip_prefix("0x") {
                        Some(h) => u32::from_str_radix(h, 16).ok(),
                        None => s.parse().ok(),
                    }
                }),
                source: "ibstatus",
            })
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct IbstatusKind;

impl super::EvidenceKind for IbstatusKind {
    fn name(&self) -> &'static str {
        "ibstatus"
    }
    fn doc(&self) -> &'static str {
        "`ibstatus` output (infiniband-diags' script over sysfs): each RDMA port's gid, lids, state, physical state, rate and link layer"
    }
    fn example(&self) -> &'static str {
        "ibstatus"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "ports",
                "ports: device, port, default_gid, base_lid, sm_lid, state, phys_state, rate, rate_gbps, link_layer",
            ),
            ("errors", "the script's `Fatal error:` lines (no device)"),
            (
                "empty_class",
                "`device '*': sys files not found`: /sys/class/infiniband exists and holds no device",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_ibstatus(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_ibstatus(text);
        if v.ports.is_empty() && v.errors.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no ibstatus port block in the text",
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
    fn the_scripts_fatal_line_is_no_device() {
        // clustervision/trinity#219: a node whose HCA the driver did not bring up
        let t = "[root@node045 ~]# ibstatus\nFatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)\n";
        assert!(looks_like_ibstatus(t));
        let v = parse_ibstatus(t);
        assert!(v.ports.is_empty());
        assert_eq!(v.errors.len(), 1);
        assert!(v.empty_class);
        let ports = v.ports();
        assert_eq!(ports.len(), 1);
        assert!(ports[0].is_no_device());
        assert_eq!(ports[0].verdict(), Verdict::Down);
        // a named device that is not there (a typo, `ibstatus mlx5_9`): not the empty class
        let t = "Fatal error:  device 'mlx5_9': sys files not found (/sys/class/infiniband/mlx5_9/ports)\n";
        let v = parse_ibstatus(t);
        assert_eq!(v.errors.len(), 1);
        assert!(!v.empty_class);
        assert!(v.ports().is_empty());
        // Oneflow-Inc/oneflow#9115: openibd stopped
        let t = "ibstatus\nFatal error:  No devices\n/usr/sbin/ibstatus: 21: exit: Illegal number: -1\n";
        let v = parse_ibstatus(t);
        assert_eq!(v.errors, vec!["Fatal error:  No devices"]);
        // no class directory: no RDMA stack loaded, as on any host without RDMA: not judged
        assert!(!v.empty_class);
        assert!(v.ports().is_empty());
        // a healthy paste has no such line (NVIDIA/nccl#1412's ports stay read as before)
        assert!(!looks_like_ibstatus("Fatal error: disk full\n"));
    }

    #[test]
    fn hdr_ib_ports_active_every_field() {
        // github.com/NVIDIA/nccl/issues/1412: three HDR ports Active (the poster's ibstatus)
        let t = fixture("infiniband/ibstatus_hdr_active_nccl1412.txt");
        assert!(looks_like_ibstatus(&t));
        let s = parse_ibstatus(&t);
        let p = &s.ports[0];
        assert_eq!(p.device, "mlx5_0");
        assert_eq!(p.port, 1);
        assert_eq!(
            p.default_gid.as_deref(),
            Some("fe80:0000:0000:0000:88e9:a4ff:ff4c:2bdc")
        );
        assert_eq!(p.base_lid.as_deref(), Some("0x22"));
        assert_eq!(p.sm_lid.as_deref(), Some("0x47"));
        assert_eq!(p.state.as_deref(), Some("Active"));
        assert_eq!(p.phys_state.as_deref(), Some("LinkUp"));
        assert_eq!(p.rate.as_deref(), Some("200 Gb/sec (4X HDR)"));
        assert_eq!(p.rate_gbps, Some(200.0));
        assert_eq!(p.link_layer.as_deref(), Some("InfiniBand"));
        let ports = s.ports();
        assert!(ports.len() >= 3);
        assert!(ports.iter().all(|p| p.verdict() == Verdict::Up));
        assert_eq!(ports[0].sm_lid, Some(0x47));
    }

    #[test]
    fn roce_ports_active() {
        // github.com/NVIDIA/nccl/issues/1866: 100 Gb/s RoCE ports, link layer Ethernet
        let t = fixture("infiniband/ibstatus_roce_active_nccl1866.txt");
        assert!(looks_like_ibstatus(&t));
        let s = parse_ibstatus(&t);
        assert_eq!(s.ports[0].link_layer.as_deref(), Some("Ethernet"));
        assert_eq!(s.ports[0].rate_gbps, Some(100.0));
        assert_eq!(s.ports[0].base_lid.as_deref(), Some("0x0"));
        assert!(s.ports().iter().all(|p| p.verdict() == Verdict::Up));
    }

    #[test]
    fn a_down_port_in_the_scripts_own_words() {
        // no public paste of ibstatus with a port down was found: the block below is the
        // script's labels with the kernel's state words for a port without a link partner
        // (`1: DOWN`, `2: Polling`) and a file it could not read (`unknown`)
        let t = "Infiniband device 'mlx5_3' port 1 status:\n\tdefault gid:\t unknown\n\tbase lid:\t 0xffff\n\tsm lid:\t\t 0x0\n\tstate:\t\t 1: DOWN\n\tphys state:\t 2: Polling\n\trate:\t\t 10 Gb/sec (4X SDR)\n\tlink_layer:\t IB\n";
        let s = parse_ibstatus(t);
        let p = &s.ports[0];
        assert_eq!(p.default_gid, None);
        assert_eq!(p.state.as_deref(), Some("Down"));
        assert_eq!(p.phys_state.as_deref(), Some("Polling"));
        assert_eq!(p.link_layer.as_deref(), Some("InfiniBand"));
        let ports = s.ports();
        assert_eq!(ports[0].verdict(), Verdict::Down);
        assert!(ports[0].cause().contains("cable"));
        assert!(!looks_like_ibstatus(
            "the Infiniband device 'x' port 1 status: is odd\n"
        ));
    }

    #[test]
    fn truncated_pastes_never_panic() {
        let t = fixture("infiniband/ibstatus_hdr_active_nccl1412.txt");
        for p in prefixes(&t, 5) {
            let _ = parse_ibstatus(p).ports();
            let _ = looks_like_ibstatus(p);
        }
    }
}
