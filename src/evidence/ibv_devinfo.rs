//! `ibv_devinfo` output (libibverbs), read from its producer: rdma-core
//! `libibverbs/examples/devinfo.c` at v64.0-61-g691953d8d (github.com/linux-rdma/rdma-core).
//! `print_hca_cap()` prints, per device:
//!
//! ```text
//! hca_id: mlx5_0
//!         transport:                      InfiniBand (0)      InfiniBand/iWARP/usNIC/usNIC UDP/unspecified
//!         fw_ver:                         28.39.2048
//!         node_guid:                      58a2:e103:002a:09b8
//!         sys_image_guid:                 58a2:e103:002a:09b8
//!         vendor_id:                      0x02c9
//!         vendor_part_id:                 4129
//!         hw_ver:                         0x0
//!         board_id:                       MT_0000000838
//!         phys_port_cnt:                  1
//!         [-v: max_mr_size … num_comp_vectors, capability flag lists]
//!                 port:   1
//!                         state:                  PORT_DOWN (1)   PORT_DOWN/INIT/ARMED/ACTIVE
//!                         max_mtu:                4096 (5)
//!                         active_mtu:             4096 (5)
//!                         sm_lid:                 0
//!                         port_lid:               65535
//!                         port_lmc:               0x00
//!                         link_layer:             InfiniBand      InfiniBand/Ethernet/Unspecified
//!                         [-v: max_msg_sz, port_cap_flags, port_cap_flags2, max_vl_num,
//!                          bad_pkey_cntr, qkey_viol_cntr, sm_sl, pkey_tbl_len, gid_tbl_len,
//!                          subnet_timeout, init_type_reply, active_width "4X (2)",
//!                          active_speed "25.0 Gbps (32)", effective_speed, phys_state
//!                          "LINK_UP (5)" (IB transport only), GID[  i]: lines]
//! ```
//!
//! `ibv_devices` (`libibverbs/examples/device_list.c`, same tree) lists the devices alone:
//! `printf("    %-16s\t   node GUID\n", "device")`, a `------` rule, then `    <name>\t<16 hex
//! digits>` per device; both tools print `Failed to get IB devices list: <errno text>`
//! (`perror`) when the verbs library finds no provider, and `ibv_devinfo` prints `No IB devices
//! found` when the list is empty. `ibv_devinfo -l` (`--list`, devinfo.c's `case 'l'`, the same
//! in every rdma-core release) prints `printf("%d HCA%s found:\n", …)` and then
//! `printf("\t%s\n", ibv_get_device_name(…))` per device (`0 HCAs found:` alone when there is
//! none). Such a paste is read as devices without ports, or as the error alone: the RDMA ports
//! it would show are not shown.
//!
//! A paste that starts inside a device (below its `hca_id:`, as a stored or trimmed copy cuts
//! it) is one device without a name, read from its first device or port key on; on its own it
//! is recognised by a `port:` line with devinfo's `state: PORT_<STATE> (N)` under it.
//!
//! Every port field is typed; the device's `-v` attributes (thirty-odd numeric limits) are kept
//! by name in `attributes`, and the flag lists printed under them in `flags`. A paste that lost
//! its indentation (all keys at one depth) still reads: a key belongs to the port once a
//! `port:` line has been seen, as the producer prints device fields before any port.

use super::infiniband::{self, IbPort, clean};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct IbvDevinfo {
    pub hcas: Vec<Hca>,
    /// `No IB devices found`, `Failed to open device`, … (devinfo.c's stderr when pasted along).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Hca {
    /// Empty when the paste starts inside a device.
    pub hca_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fw_ver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_guid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_image_guid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor_part_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw_ver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phys_port_cnt: Option<u32>,
    /// The `-v` device attributes, by the name devinfo.c prints.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    /// Flag lists `-v` prints under an attribute (`device_cap_flags`, `rc_odp_caps`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub flags: BTreeMap<String, Vec<String>>,
    pub ports: Vec<DevPort>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DevPort {
    /// The port number; 0 where the paste starts below the port's `port:` line.
    pub port: u32,
    /// `PORT_ACTIVE` etc., as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_mtu: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_mtu: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_lid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_lmc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_msg_sz: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_cap_flags: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_cap_flags2: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_vl_num: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_pkey_cntr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qkey_viol_cntr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_sl: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pkey_tbl_len: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gid_tbl_len: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subnet_timeout: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_type_reply: Option<u32>,
    /// Lanes (`4X` → 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_width: Option<u32>,
    /// Gb/s per lane (`25.0 Gbps` → 25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_speed_gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_speed_gbps: Option<f64>,
    /// `LINK_UP` etc., as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phys_state: Option<String>,
    /// `GID[  0]:` values, with their type (`RoCE v2`) when printed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gids: Vec<String>,
}

/// The value before a `(N)` code: `PORT_ACTIVE (4)` → `PORT_ACTIVE`.
fn word(v: &str) -> String {
    match v.rfind(" (") {
        Some(i) if v.ends_with(')') => v[..i].trim().to_string(),
        _ => v.trim().to_string(),
    }
}

fn num(v: &str) -> Option<u32> {
    v.split_whitespace().next()?.parse().ok()
}

fn gbps(v: &str) -> Option<f64> {
    v.split_whitespace().next()?.parse().ok()
}

/// Keys that, before any `hca_id:`, mean the paste starts inside a device's block.
const STARTS_INSIDE: [&str; 10] = [
    "transport",
    "fw_ver",
    "node_guid",
    "sys_image_guid",
    "vendor_id",
    "vendor_part_id",
    "hw_ver",
    "board_id",
    "phys_port_cnt",
    "port",
];

/// `ibv_devices`' header, `device` and `node GUID` over its `------` rule.
fn devices_header(l: &str) -> bool {
    let w: Vec<&str> = l.split_whitespace().collect();
    w == ["device", "node", "GUID"]
}

/// An `ibv_devices` row: `mlx5_0          \tb8599f0300b2e1c4` -> (name, guid).
fn devices_row(l: &str) -> Option<(&str, &str)> {
    let w: Vec<&str> = l.split_whitespace().collect();
    let [name, guid] = w[..] else { return None };
    let ok = guid.len() == 16 && guid.chars().all(|c| c.is_ascii_hexdigit() || c == '*');
    (ok && name.len() <= 64 && !name.starts_with('-')).then_some((name, guid))
}

/// `ibv_devinfo -l`'s count line: `2 HCAs found:`, `1 HCA found:`, `0 HCAs found:` -> the count.
fn list_header(l: &str) -> Option<usize> {
    let (n, rest) = l.split_once(' ')?;
    let n: usize = n.parse().ok()?;
    matches!(rest.trim_end(), "HCAs found:" | "HCA found:").then_some(n)
}

/// A device name as `ibv_get_device_name` gives it: one word, no `:`.
fn list_row(l: &str) -> Option<&str> {
    let w: Vec<&str> = l.split_whitespace().collect();
    let [name] = w[..] else { return None };
    (name.len() <= 64 && !name.contains(':') && !name.starts_with(['-', '#', '$'])).then_some(name)
}

/// The lines the two tools print when there is nothing to list.
fn no_devices_line(t: &str) -> bool {
    t.starts_with("No IB devices found") || t.starts_with("Failed to get IB devices list")
}

/// `hca_id:` followed by devinfo's device or port keys; `ibv_devices`' listing; or the line
/// either tool prints when the verbs library finds no device.
pub fn looks_like_ibv_devinfo(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text)
        .map(|l| clean(l).trim())
        .take(4000)
        .collect();
    if lines.iter().enumerate().any(|(i, l)| {
        devices_header(l)
            && lines.get(i + 1).is_some_and(|n| {
                n.chars().all(|c| c == '-' || c.is_whitespace()) && n.contains("----")
            })
    }) || lines
        .iter()
        .any(|l| no_devices_line(l) || list_header(l).is_some())
    {
        return true;
    }
    lines.iter().enumerate().any(|(i, l)| {
        l.strip_prefix("hca_id:")
            .is_some_and(|v| !v.trim().is_empty())
            && lines.iter().skip(i + 1).take(3).any(|n| {
                ["transport:", "fw_ver:", "node_guid:", "port:"]
                    .iter()
                    .any(|k| n.starts_with(k))
            })
    }) || {
        // a paste that starts inside a port (below its `port:` line): devinfo's own
        // `phys_state:` or `state:` with its number, and another such line or a `GID[` line
        let port_lines = lines.iter().filter(|l| port_line_with_code(l)).count();
        let gids = lines.iter().filter(|l| l.starts_with("GID[")).count();
        port_lines >= 1 && port_lines + gids >= 2
    } || lines.iter().enumerate().any(|(i, l)| {
        // a paste that starts inside a device (below its `hca_id:`): a `port:\tN` line with
        // devinfo's own `state:\t\tPORT_<STATE> (N)` under it (print_hca_cap's
        // `port_state_str()` and code), which no other tool prints
        l.strip_prefix("port:")
            .is_some_and(|v| v.trim().parse::<u32>().is_ok())
            && lines
                .get(i + 1)
                .and_then(|n| n.strip_prefix("state:"))
                .is_some_and(port_state_with_code)
    })
}

/// `LINK_UP (5)`: devinfo.c's `port_phy_state_str()` word and the physical state's number
/// (rdma-core `libibverbs/examples/devinfo.c`: SLEEP, POLLING, DISABLED, `PORT_CONFIGURATION
/// TRAINNING`, LINK_UP, LINK_ERROR_RECOVERY, `PHY TEST`), printed only by `ibv_devinfo -v`.
fn phys_state_with_code(v: &str) -> bool {
    let v = v.trim();
    let Some((w, code)) = v.rsplit_once(" (") else {
        return false;
    };
    matches!(
        w,
        "SLEEP"
            | "POLLING"
            | "DISABLED"
            | "PORT_CONFIGURATION TRAINNING"
            | "LINK_UP"
            | "LINK_ERROR_RECOVERY"
            | "PHY TEST"
    ) && code
        .strip_suffix(')')
        .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// A port-level line of `ibv_devinfo -v` that no other tool prints: `state:` or `phys_state:`
/// with devinfo's word and number. A paste that starts below a port's `port:` line (a GID
/// table quoted with the port's state above it) begins with one.
fn port_line_with_code(t: &str) -> bool {
    t.strip_prefix("state:").is_some_and(port_state_with_code)
        || t.strip_prefix("phys_state:")
            .is_some_and(phys_state_with_code)
}

/// `PORT_ACTIVE (4)`: devinfo.c's `port_state_str()` word and the state's number.
fn port_state_with_code(v: &str) -> bool {
    let v = v.trim();
    let Some((w, code)) = v.split_once(" (") else {
        return false;
    };
    matches!(
        w,
        "PORT_NOP" | "PORT_DOWN" | "PORT_INIT" | "PORT_ARMED" | "PORT_ACTIVE" | "PORT_ACTIVE_DEFER"
    ) && code
        .strip_suffix(')')
        .is_some_and(|n| n.parse::<u32>().is_ok())
}

pub fn parse_ibv_devinfo(text: &str) -> IbvDevinfo {
    let mut out = IbvDevinfo::default();
    let mut flag_key: Option<String> = None;
    // inside `ibv_devices`' listing (its rows are `name guid`, not `key: value`)
    let mut listing = false;
    // inside `ibv_devinfo -l`'s listing (one device name a line)
    let mut dash_l = false;
    for raw in super::content_lines(text) {
        let t = clean(raw).trim();
        if t.is_empty() {
            continue;
        }
        if [
            "No IB devices found",
            "Failed to open device",
            "Failed to query device props",
            "Failed to query port",
            "Failed to get IB devices list",
        ]
        .iter()
        .any(|e| t.starts_with(e))
            || (t.starts_with("IB device '") && t.ends_with("wasn't found"))
        {
            if out.errors.len() < super::MAX_ITEMS {
                out.errors.push(super::clip(t, super::MAX_TEXT));
            }
            continue;
        }
        if devices_header(t) || (t.starts_with("------") && t.contains("----------------")) {
            listing = true;
            continue;
        }
        if list_header(t).is_some() {
            dash_l = true;
            continue;
        }
        if dash_l && let Some(name) = list_row(t) {
            if out.hcas.len() < super::MAX_ITEMS {
                out.hcas.push(Hca {
                    hca_id: name.to_string(),
                    ..Hca::default()
                });
            }
            continue;
        }
        if listing && let Some((name, guid)) = devices_row(t) {
            if out.hcas.len() < super::MAX_ITEMS {
                out.hcas.push(Hca {
                    hca_id: name.to_string(),
                    node_guid: Some(guid.to_string()),
                    ..Hca::default()
                });
            }
            continue;
        }
        if let Some(id) = t.strip_prefix("hca_id:") {
            if out.hcas.len() >= super::MAX_ITEMS {
                break;
            }
            out.hcas.push(Hca {
                hca_id: id.trim().to_string(),
                ..Hca::default()
            });
            flag_key = None;
            continue;
        }
        if out.hcas.is_empty() {
            // a paste that starts inside a device: its fields still belong to one
            let key = t.split(':').next().unwrap_or("").trim();
            if STARTS_INSIDE.contains(&key) {
                out.hcas.push(Hca::default());
            } else if port_line_with_code(t) {
                // one that starts inside a port: a port whose number the paste cut (0)
                out.hcas.push(Hca {
                    ports: vec![DevPort::default()],
                    ..Hca::default()
                });
            } else {
                continue;
            }
        }
        let Some(h) = out.hcas.last_mut() else {
            continue;
        };
        if let Some(g) = t.strip_prefix("GID[") {
            if let (Some(p), Some((_, v))) = (h.ports.last_mut(), g.split_once(':'))
                && p.gids.len() < super::MAX_ITEMS
            {
                p.gids.push(v.trim().to_string());
            }
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            // a flag printed under the attribute above it (`RESIZE_MAX_WR`)
            if let Some(fk) = &flag_key
                && t.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_ -".contains(c))
            {
                let f = h.flags.entry(fk.clone()).or_default();
                if f.len() < super::MAX_ITEMS {
                    f.push(t.to_string());
                }
            }
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        let known = || (!v.is_empty()).then(|| v.to_string());
        if k == "port" {
            if let Some(n) = num(v)
                && h.ports.len() < super::MAX_ITEMS
            {
                h.ports.push(DevPort {
                    port: n,
                    ..DevPort::default()
                });
            }
            flag_key = None;
            continue;
        }
        if let Some(p) = h.ports.last_mut() {
            let hit = match k {
                "state" => {
                    p.state = Some(word(v));
                    true
                }
                "max_mtu" => {
                    p.max_mtu = num(v);
                    true
                }
                "active_mtu" => {
                    p.active_mtu = num(v);
                    true
                }
                "sm_lid" => {
                    p.sm_lid = num(v);
                    true
                }
                "port_lid" => {
                    p.port_lid = num(v);
                    true
                }
                "port_lmc" => {
                    p.port_lmc = known();
                    true
                }
                "link_layer" => {
                    p.link_layer = known();
                    true
                }
                "max_msg_sz" => {
                    p.max_msg_sz = known();
                    true
                }
                "port_cap_flags" => {
                    p.port_cap_flags = known();
                    true
                }
                "port_cap_flags2" => {
                    p.port_cap_flags2 = known();
                    true
                }
                "max_vl_num" => {
                    p.max_vl_num = Some(word(v));
                    true
                }
                "bad_pkey_cntr" => {
                    p.bad_pkey_cntr = known();
                    true
                }
                "qkey_viol_cntr" => {
                    p.qkey_viol_cntr = known();
                    true
                }
                "sm_sl" => {
                    p.sm_sl = num(v);
                    true
                }
                "pkey_tbl_len" => {
                    p.pkey_tbl_len = num(v);
                    true
                }
                "gid_tbl_len" => {
                    p.gid_tbl_len = num(v);
                    true
                }
                "subnet_timeout" => {
                    p.subnet_timeout = num(v);
                    true
                }
                "init_type_reply" => {
                    p.init_type_reply = num(v);
                    true
                }
                "active_width" => {
                    p.active_width = v.split('X').next().and_then(|n| n.trim().parse().ok());
                    true
                }
                "active_speed" => {
                    p.active_speed_gbps = gbps(v);
                    true
                }
                "effective_speed" => {
                    p.effective_speed_gbps = gbps(v);
                    true
                }
                "phys_state" => {
                    p.phys_state = Some(word(v));
                    true
                }
                _ => false,
            };
            if hit {
                continue;
            }
        }
        match k {
            "transport" => h.transport = Some(word(v)),
            "fw_ver" => h.fw_ver = known(),
            "node_guid" => h.node_guid = known(),
            "sys_image_guid" => h.sys_image_guid = known(),
            "vendor_id" => h.vendor_id = known(),
            "vendor_part_id" => h.vendor_part_id = known(),
            "hw_ver" => h.hw_ver = known(),
            "board_id" => h.board_id = known(),
            "phys_port_cnt" => h.phys_port_cnt = num(v),
            _ if (h.ports.is_empty() && !k.contains(' ')) || k.starts_with("maximum ") => {
                if v.is_empty() {
                    flag_key = Some(k.to_string());
                } else if h.attributes.len() < 4 * super::MAX_ITEMS {
                    h.attributes
                        .insert(k.to_string(), super::clip(v, super::MAX_TEXT));
                }
            }
            _ => {}
        }
    }
    out
}

impl IbvDevinfo {
    pub fn ports(&self) -> Vec<IbPort> {
        self.hcas
            .iter()
            .flat_map(|h| {
                h.ports.iter().map(move |p| IbPort {
                    device: h.hca_id.clone(),
                    port: p.port,
                    state: p
                        .state
                        .as_deref()
                        .and_then(infiniband::logical_state)
                        .map(str::to_string),
                    physical_state: p
                        .phys_state
                        .as_deref()
                        .and_then(infiniband::physical_state)
                        .map(str::to_string),
                    link_layer: p.link_layer.clone(),
                    rate_gbps: match (p.active_width, p.active_speed_gbps) {
                        (Some(w), Some(s)) => Some(w as f64 * s),
                        _ => p.effective_speed_gbps,
                    },
                    netdev: None,
                    netdev_state: None,
                    sm_lid: p.sm_lid,
                    source: "ibv_devinfo",
                })
            })
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct IbvDevinfoKind;

impl super::EvidenceKind for IbvDevinfoKind {
    fn name(&self) -> &'static str {
        "ibv-devinfo"
    }
    fn doc(&self) -> &'static str {
        "`ibv_devinfo` output (libibverbs): each RDMA device's attributes and its ports' state, MTU, LIDs and link layer (`-v`: width, speed, physical state, GIDs)"
    }
    fn example(&self) -> &'static str {
        "ibv_devinfo -v"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "hcas",
                "devices: hca_id, transport, fw_ver, node_guid, sys_image_guid, vendor_id, vendor_part_id, hw_ver, board_id, phys_port_cnt, attributes, flags, ports (port, state, max_mtu, active_mtu, sm_lid, port_lid, port_lmc, link_layer, and the -v fields)",
            ),
            ("errors", "devinfo's error lines"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_ibv_devinfo(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_ibv_devinfo(text);
        if v.hcas.is_empty() && v.errors.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no ibv_devinfo device block (hca_id:) in the text",
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
    fn a_paste_that_starts_below_a_port_line_is_read() {
        // corpus h131: NVIDIA/nccl#769's `ibv_devinfo -v` fragment, phys_state and the GID table
        // of one RoCE port, tab-indented as devinfo prints it
        let t = crate::test_corpus("h131_ibvdevinfo_nccl769_roce_gid_table_fragment.txt");
        assert!(looks_like_ibv_devinfo(&t));
        let v = parse_ibv_devinfo(&t);
        assert_eq!(v.hcas.len(), 1);
        let p = &v.hcas[0].ports[0];
        assert_eq!((p.port, p.phys_state.as_deref()), (0, Some("LINK_UP")));
        assert_eq!(p.gids.len(), 4);
        assert_eq!(p.gids[3], "::ffff:200.0.209.6, RoCE v2");
        // with a question above it and a thank-you under it, as an issue body holds it
        let post = format!("Here is what I see on the node:\n{t}\nAny idea?\n");
        assert!(looks_like_ibv_devinfo(&post));
        // a port's state and physical state apart (the lines between cut), down and disabled
        let t = "\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tlink_layer:\t\tInfiniBand\n\t\t\tphys_state:\t\tDISABLED (3)\n";
        assert!(looks_like_ibv_devinfo(t));
        let p = parse_ibv_devinfo(t).hcas[0].ports[0].clone();
        assert_eq!(p.state.as_deref(), Some("PORT_DOWN"));
        assert_eq!(p.phys_state.as_deref(), Some("DISABLED"));
        // neighbours: one such line alone, a word without devinfo's number, prose, ibstat's own
        // `Physical state: LinkUp`
        for t in [
            "\t\t\tphys_state:\t\tLINK_UP (5)\n",
            "phys_state: LINK_UP\nstate: PORT_ACTIVE\nGID[0]: fe80::1\n",
            "the phys_state is LINK_UP (5) and the state PORT_ACTIVE (4)\n",
            "\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 100\n",
        ] {
            assert!(!looks_like_ibv_devinfo(t), "{t}");
        }
    }

    #[test]
    fn a_paste_that_starts_below_hca_id_is_read() {
        // github.com/deepseek-ai/DeepEP/issues/355, as the stored copy starts: inside a
        // ConnectX-7 RoCE device, after its hca_id line
        let t = "        fw_ver:                         28.42.1000\n        node_guid:                      b8e9:2403:002a:5f86\n        phys_port_cnt:                  1\n                port:   1\n                        state:                  PORT_ACTIVE (4)\n                        max_mtu:                4096 (5)\n                        link_layer:             Ethernet\n";
        assert!(looks_like_ibv_devinfo(t));
        let d = parse_ibv_devinfo(t);
        assert_eq!(d.hcas.len(), 1);
        assert_eq!(d.hcas[0].hca_id, "");
        let p = d.ports();
        assert_eq!(p[0].verdict(), Verdict::Up);
        assert_eq!(p[0].link_layer.as_deref(), Some("Ethernet"));
        // github.com/deepseek-ai/DeepEP/issues/60: a port down, pasted without its device
        let down = "                port:   1\n                        state:                  PORT_DOWN (1)\n                        link_layer:             InfiniBand\n";
        assert!(looks_like_ibv_devinfo(down));
        assert_eq!(parse_ibv_devinfo(down).ports()[0].verdict(), Verdict::Down);
        // a port line with other words under it is not devinfo's
        assert!(!looks_like_ibv_devinfo("port: 8080\nstate: running\n"));
        assert!(!looks_like_ibv_devinfo("port: 1\nstate: PORT_ACTIVE\n"));
    }

    #[test]
    fn ibv_devinfo_dash_l_listing() {
        // Heioy/Books (6e192e8) chang-yong-ming-ling/xin-xi-pian/ibv_devinfo.md: `ibv_devinfo -l`
        let t = "#ibv_devinfo -l\n2 HCAs found:\n\tmlx4_1\n\tmlx4_0\n";
        assert!(looks_like_ibv_devinfo(t));
        let d = parse_ibv_devinfo(t);
        let ids: Vec<&str> = d.hcas.iter().map(|h| h.hca_id.as_str()).collect();
        assert_eq!(ids, ["mlx4_1", "mlx4_0"]);
        assert!(d.hcas.iter().all(|h| h.ports.is_empty()));
        // a host with no RDMA device (the form an agent's transcript quotes, `0 HCAs found:`)
        let none = parse_ibv_devinfo("$ ibv_devinfo -l\n0 HCAs found:\n");
        assert!(looks_like_ibv_devinfo("0 HCAs found:\n") && none.hcas.is_empty());
        // not a count line
        assert!(!looks_like_ibv_devinfo("Number of HCAs found: 2\n"));
    }

    #[test]
    fn ibv_devices_listing_and_no_device_lines() {
        // ml-explore/mlx (91abf5c) mlx/distributed/jaccl/lib/README.md: `ibv_devices` on a Mac
        // with RDMA enabled, as published (no leading indent)
        let t = "device          \t   node GUID\n------          \t----------------\nrdma_en2        \t8096a9d9edbaac05\nrdma_en3        \t8196a9d9edbaac05\n";
        assert!(looks_like_ibv_devinfo(t));
        let v = parse_ibv_devinfo(t);
        assert_eq!(v.hcas.len(), 2);
        assert_eq!(v.hcas[0].hca_id, "rdma_en2");
        assert_eq!(v.hcas[0].node_guid.as_deref(), Some("8096a9d9edbaac05"));
        assert!(v.ports().is_empty(), "no port is shown");
        // Oneflow-Inc/oneflow#9115: the verbs stack stopped (`openibd stop`)
        let t = "ibv_devinfo\nFailed to get IB devices list: Function not implemented\n";
        assert!(looks_like_ibv_devinfo(t));
        let v = parse_ibv_devinfo(t);
        assert!(v.hcas.is_empty());
        assert_eq!(
            v.errors,
            vec!["Failed to get IB devices list: Function not implemented"]
        );
        // a `device` word elsewhere is no listing
        assert!(!looks_like_ibv_devinfo("device node GUID is unknown\n"));
    }

    #[test]
    fn ib_port_down() {
        // github.com/deepseek-ai/DeepEP/issues/60: mlx5_0 PORT_DOWN on an IB host
        let t = fixture("infiniband/ibv_devinfo_port_down.txt");
        assert!(looks_like_ibv_devinfo(&t));
        let d = parse_ibv_devinfo(&t);
        let h = &d.hcas[0];
        assert_eq!(h.hca_id, "mlx5_0");
        assert_eq!(h.transport.as_deref(), Some("InfiniBand"));
        assert_eq!(h.fw_ver.as_deref(), Some("28.39.2048"));
        assert_eq!(h.node_guid.as_deref(), Some("58a2:e103:002a:09b8"));
        assert_eq!(h.sys_image_guid.as_deref(), Some("58a2:e103:002a:09b8"));
        assert_eq!(h.vendor_id.as_deref(), Some("0x02c9"));
        assert_eq!(h.vendor_part_id.as_deref(), Some("4129"));
        assert_eq!(h.hw_ver.as_deref(), Some("0x0"));
        assert_eq!(h.board_id.as_deref(), Some("MT_0000000838"));
        assert_eq!(h.phys_port_cnt, Some(1));
        let p = &h.ports[0];
        assert_eq!(p.port, 1);
        assert_eq!(p.state.as_deref(), Some("PORT_DOWN"));
        assert_eq!(p.max_mtu, Some(4096));
        assert_eq!(p.active_mtu, Some(4096));
        assert_eq!(p.sm_lid, Some(0));
        assert_eq!(p.port_lid, Some(65535));
        assert_eq!(p.port_lmc.as_deref(), Some("0x00"));
        assert_eq!(p.link_layer.as_deref(), Some("InfiniBand"));
        let ports = d.ports();
        assert_eq!(ports[0].verdict(), Verdict::Down);
        assert_eq!(ports[0].state.as_deref(), Some("Down"));
        assert_eq!(d.hcas[1].hca_id, "mlx5_1");
    }

    #[test]
    fn roce_ports_active() {
        // github.com/deepseek-ai/DeepEP/issues/38: PORT_ACTIVE over Ethernet, a paste that
        // starts inside a device
        let t = fixture("infiniband/ibv_devinfo_roce_active.txt");
        assert!(looks_like_ibv_devinfo(&t));
        let d = parse_ibv_devinfo(&t);
        assert_eq!(d.hcas[0].hca_id, "", "the device the paste starts inside");
        assert_eq!(d.hcas[0].board_id.as_deref(), Some("MT_0000000425"));
        let p = &d.hcas[0].ports[0];
        assert_eq!(p.state.as_deref(), Some("PORT_ACTIVE"));
        assert_eq!(p.active_mtu, Some(1024));
        assert_eq!(p.link_layer.as_deref(), Some("Ethernet"));
        assert_eq!(d.hcas[1].hca_id, "mlx5_7");
        assert_eq!(d.hcas[1].ports[0].link_layer, None, "cut before it");
        assert!(d.ports().iter().all(|p| p.verdict() == Verdict::Up));
    }

    #[test]
    fn port_init_without_indentation() {
        // github.com/Mellanox/network-operator/issues/1646: PORT_INIT in a pod, keys flattened
        let t = fixture("infiniband/ibv_devinfo_port_init.txt");
        let d = parse_ibv_devinfo(&t);
        let p = &d.ports()[0];
        assert_eq!(p.name(), "mlx5_7 port 1");
        assert_eq!(p.state.as_deref(), Some("Initializing"));
        assert_eq!(p.sm_lid, Some(4));
        assert_eq!(p.verdict(), Verdict::Down);
        assert!(p.cause().contains("subnet manager"));
    }

    #[test]
    fn verbose_fields() {
        let t = "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tmax_qp:\t\t\t\t262144\n\tdevice_cap_flags:\t\t0x25e1361\n\tgeneral_odp_caps:\n\t\t\t\t\tODP_SUPPORT\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\n\t\t\tmax_vl_num:\t\t4 (3)\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t25.0 Gbps (32)\n\t\t\tphys_state:\t\tLINK_UP (5)\n\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:1070:fd03:00e8:c8b6\n";
        let d = parse_ibv_devinfo(t);
        let h = &d.hcas[0];
        assert_eq!(h.attributes["max_qp"], "262144");
        assert_eq!(h.flags["general_odp_caps"], vec!["ODP_SUPPORT"]);
        let p = &h.ports[0];
        assert_eq!(p.max_vl_num.as_deref(), Some("4"));
        assert_eq!(p.active_width, Some(4));
        assert_eq!(p.active_speed_gbps, Some(25.0));
        assert_eq!(p.phys_state.as_deref(), Some("LINK_UP"));
        assert_eq!(p.gids.len(), 1);
        assert_eq!(d.ports()[0].rate_gbps, Some(100.0));
        assert_eq!(d.ports()[0].physical_state.as_deref(), Some("LinkUp"));
        assert!(!looks_like_ibv_devinfo(
            "hca_id: is a field of ibv_devinfo\n"
        ));
        assert!(parse_ibv_devinfo("No IB devices found\n").errors.len() == 1);
    }

    #[test]
    fn truncated_pastes_never_panic() {
        let t = fixture("infiniband/ibv_devinfo_port_down.txt");
        for p in prefixes(&t, 5) {
            let _ = parse_ibv_devinfo(p).ports();
        }
    }
}
