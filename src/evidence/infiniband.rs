//! What the three InfiniBand/RoCE tools people paste say about one RDMA port, in one shape, so
//! that one rule (`comm.ib-port-down`) judges `ibstat`, `ibv_devinfo`, `ibdev2netdev` and `rdma link` alike.
//! Each tool has its own reader ([`super::ibstat`], [`super::ibv_devinfo`],
//! [`super::ibdev2netdev`]) that keeps every field its producer prints; this module holds the
//! port they all reduce to and the judgement of a port's state, which is the producers' own
//! vocabulary mapped onto the IBTA port states:
//!
//! - logical state (rdma-core `ibstat.c` `port_state_str`, `devinfo.c` `port_state_str`):
//!   `Down`/`PORT_DOWN` (1), `Initializing`/`PORT_INIT` (2), `Armed`/`PORT_ARMED` (3),
//!   `Active`/`PORT_ACTIVE` (4);
//! - physical state (`port_phy_state_str`): `Sleep` (1), `Polling` (2), `Disabled` (3),
//!   `PortConfigurationTraining` (4), `LinkUp` (5), `LinkErrorRecovery` (6), `PhyTest` (7).
//!
//! Only a port whose logical state is read is judged; `ibdev2netdev` without `-v` prints the
//! state of the *network interface* (its carrier), which for an IPoIB interface says nothing
//! about the RDMA port (an IB fabric without IPoIB configured shows every interface `Down`), so
//! such a line only counts for a RoCE (Ethernet) interface, whose RDMA port follows the link,
//! and for an interface a container network plugin created and brought up. `ibdev2netdev`
//! (Mellanox/docker-sriov-plugin `ibdev2netdev` at b0619966) prints `Down` wherever
//! `/sys/class/net/X/carrier` is not 1, which includes an interface nobody set up (the file then
//! cannot be read). Multus names a pod's extra interfaces `net1`, `net2`, …
//! (k8snetworkplumbingwg/multus-cni `pkg/multus/multus.go` `getIfname`, read at 62abb002:
//! `fmt.Sprintf("net%d", idx)` where the network asks for no name), and the plugins it
//! delegates to bring the interface up inside the pod (k8snetworkplumbingwg/ib-sriov-cni
//! `pkg/sriov/sriov.go` `SetupVF` at 001d3f78, step 5 `LinkSetUp`; sriov-cni and macvlan
//! likewise): such an interface is administratively up, so `Down` is its port (an IB VF whose
//! link state the PF keeps down, or no subnet manager) or its link.
//!
//! `ibstatus` (rdma-core `infiniband-diags/scripts/ibstatus` at e8279e0b) run without
//! arguments does `cd /sys/class/infiniband || fatal No devices` and then `for dev in *`: where
//! the class directory exists (the RDMA core is loaded) but holds no device, the shell's
//! unmatched glob reaches `ib_status` as the literal `*` and the script stops with
//! `Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)`. That host
//! has no RDMA port at all (the HCA's driver did not register it, or the container sees none):
//! it is read as one port-less entry, judged down ([`IbPort::no_device`]). `Fatal error:  No
//! devices` (no class directory: no RDMA stack loaded, as on any host without RDMA) is not.

use serde::Serialize;

/// One RDMA port as a tool reported it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IbPort {
    /// The RDMA device (`mlx5_0`).
    pub device: String,
    pub port: u32,
    /// The logical state in ibstat's words (`Down`, `Initializing`, `Armed`, `Active`), when
    /// the tool printed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The physical state in ibstat's words (`Polling`, `Disabled`, `LinkUp`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    /// `InfiniBand` or `Ethernet` (RoCE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<String>,
    /// Link rate in Gb/s (ibstat's `Rate`, or ibv_devinfo's width × speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    /// The network interface of the port (`ibdev2netdev`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
    /// The interface's carrier as `ibdev2netdev` printed it (`Up`, `Down`, `NA`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev_state: Option<String>,
    /// The subnet manager's LID as the port knows it (0 or absent: none assigned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<u32>,
    /// `ibstat`, `ibv_devinfo`, `ibdev2netdev`, `rdma link`, `mlxlink`, `lshca`, `iblinkinfo`
    /// or `perftest`.
    pub source: &'static str,
}

/// Whether a port is up, down, or not judged from what the tool printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Up,
    Down,
    /// The text does not carry the port's RDMA state (an IPoIB interface's carrier).
    NotShown,
}

/// The device name of [`IbPort::no_device`]: the glob `ibstatus` printed.
pub const NO_DEVICE: &str = "*";

impl IbPort {
    /// The entry for a tool that found the RDMA class empty: no device, no port.
    pub fn no_device(source: &'static str) -> IbPort {
        IbPort {
            device: NO_DEVICE.to_string(),
            port: 0,
            state: Some("Down".to_string()),
            physical_state: None,
            link_layer: None,
            rate_gbps: None,
            netdev: None,
            netdev_state: None,
            sm_lid: None,
            source,
        }
    }

    pub fn is_no_device(&self) -> bool {
        self.device == NO_DEVICE && self.port == 0
    }

    pub fn verdict(&self) -> Verdict {
        if let Some(s) = &self.state {
            return if s == "Active" {
                Verdict::Up
            } else {
                Verdict::Down
            };
        }
        let carrier_is_port = self.is_ethernet_netdev() || self.is_pod_netdev();
        match (&self.netdev_state, carrier_is_port) {
            (Some(s), true) if s == "Up" => Verdict::Up,
            (Some(s), true) if s == "Down" => Verdict::Down,
            _ => Verdict::NotShown,
        }
    }

    /// A pod interface Multus named (`net1`, `net2`, …), which its CNI plugin brought up.
    fn is_pod_netdev(&self) -> bool {
        self.netdev.as_deref().is_some_and(|n| {
            n.strip_prefix("net").is_some_and(|d| {
                !d.is_empty() && d.len() <= 3 && d.bytes().all(|b| b.is_ascii_digit())
            })
        })
    }

    /// The interface is an Ethernet one (RoCE): by link layer, or by the kernel's names for
    /// Ethernet devices (`eth*`, systemd's `en*`); IPoIB interfaces are `ib*`.
    fn is_ethernet_netdev(&self) -> bool {
        if let Some(l) = &self.link_layer {
            return l == "Ethernet";
        }
        self.netdev
            .as_deref()
            .is_some_and(|n| n.starts_with("eth") || n.starts_with("en"))
    }

    /// The usual cause of this state, in a sentence, and what to look at next.
    pub fn cause(&self) -> String {
        if self.is_no_device() {
            return "no RDMA device is registered (/sys/class/infiniband exists but is empty): the HCA's driver (mlx5_ib, mlx4_ib) did not load or could not initialise the card (firmware: `dmesg | grep -i mlx`), or the container was given no RDMA device".into();
        }
        if self.state.is_none() && !self.is_ethernet_netdev() && self.is_pod_netdev() {
            let n = self.netdev.as_deref().unwrap_or("net1");
            return format!(
                "the pod interface {n}, which its CNI plugin brought up, has no carrier: the VF's port is not active (its link state on the PF, e.g. the SR-IOV network's linkState, or no subnet manager that supports virtualization) or its link is down"
            );
        }
        let phys = self.physical_state.as_deref().unwrap_or("");
        let state = self.state.as_deref().unwrap_or("");
        let roce = self.link_layer.as_deref() == Some("Ethernet")
            || (self.state.is_none() && self.is_ethernet_netdev());
        if roce {
            return match &self.netdev {
                Some(n) => format!(
                    "the RoCE interface {n} has no link (cable, transceiver, switch port, or `ip link set {n} up`)"
                ),
                None => "the RoCE port has no Ethernet link (cable, transceiver, switch port, or the interface is administratively down)".into(),
            };
        }
        match (state, phys) {
            (_, "Polling") => "no link partner: the cable, transceiver or switch port (physical state Polling)".into(),
            (_, "Disabled") => "the port is disabled (administratively, or no cable is seated)".into(),
            ("Initializing" | "Down", "LinkUp") => {
                "the link is up but no subnet manager has brought the port up: is opensm/UFM running on the fabric?"
                    .into()
            }
            ("Armed", _) => "the subnet manager configured the port but did not activate it".into(),
            (_, "LinkErrorRecovery") => "the link is recovering from errors (a bad cable or transceiver)".into(),
            ("Initializing", _) => "the subnet manager has not brought the port up: is opensm/UFM running on the fabric?".into(),
            _ => "the port has no link".into(),
        }
    }

    pub fn name(&self) -> String {
        if self.is_no_device() {
            return "no RDMA device".to_string();
        }
        if self.device.is_empty() && self.port == 0 {
            // the paste started inside the port's block, below its `port:` line
            "a port whose device and number the paste cut".to_string()
        } else if self.device.is_empty() {
            // the paste started inside the device's block
            format!("port {} of an unnamed device", self.port)
        } else {
            format!("{} port {}", self.device, self.port)
        }
    }
}

/// Normalises a logical state word from either tool to ibstat's.
pub fn logical_state(word: &str) -> Option<&'static str> {
    Some(match word.trim() {
        "Down" | "PORT_DOWN" | "DOWN" => "Down",
        "Initializing" | "PORT_INIT" | "INIT" | "Init" => "Initializing",
        "Armed" | "PORT_ARMED" | "ARMED" => "Armed",
        "Active" | "PORT_ACTIVE" | "ACTIVE" => "Active",
        _ => return None,
    })
}

/// Normalises a physical state word from either tool to ibstat's.
pub fn physical_state(word: &str) -> Option<&'static str> {
    Some(match word.trim() {
        "No state change" | "NOP" => "No state change",
        "Sleep" | "SLEEP" => "Sleep",
        "Polling" | "POLLING" => "Polling",
        "Disabled" | "DISABLED" => "Disabled",
        "PortConfigurationTraining" | "PORT_CONFIGURATION TRAINNING" => "PortConfigurationTraining",
        "LinkUp" | "LINK_UP" => "LinkUp",
        // iproute2's `rdma link` spells it LINK_ERROR_RECOVER (rdma/link.c phys_state_to_str)
        "LinkErrorRecovery" | "LINK_ERROR_RECOVERY" | "LINK_ERROR_RECOVER" => "LinkErrorRecovery",
        "PhyTest" | "PHY TEST" | "PHY_TEST" => "PhyTest",
        _ => return None,
    })
}

/// A pasted line without markdown quoting, a leading shell prompt's `$`, or backticks.
pub(crate) fn clean(line: &str) -> &str {
    let mut l = line.trim_end_matches(['\r', '`']);
    while let Some(r) = l.trim_start().strip_prefix('>') {
        l = r;
    }
    l.trim_start_matches('`')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(state: Option<&str>, phys: Option<&str>) -> IbPort {
        IbPort {
            device: "mlx5_0".into(),
            port: 1,
            state: state.map(str::to_string),
            physical_state: phys.map(str::to_string),
            link_layer: Some("InfiniBand".into()),
            rate_gbps: None,
            netdev: None,
            netdev_state: None,
            sm_lid: None,
            source: "ibstat",
        }
    }

    #[test]
    fn states_and_causes() {
        assert_eq!(port(Some("Active"), Some("LinkUp")).verdict(), Verdict::Up);
        let p = port(Some("Down"), Some("Polling"));
        assert_eq!(p.verdict(), Verdict::Down);
        assert!(p.cause().contains("cable"), "{}", p.cause());
        let p = port(Some("Initializing"), Some("LinkUp"));
        assert!(p.cause().contains("subnet manager"), "{}", p.cause());
        let mut p = port(Some("Down"), Some("Disabled"));
        p.link_layer = Some("Ethernet".into());
        assert!(p.cause().contains("RoCE"), "{}", p.cause());
    }

    #[test]
    fn a_netdev_carrier_is_judged_only_for_roce() {
        let mut p = port(None, None);
        p.link_layer = None;
        p.netdev = Some("ibp26s0".into());
        p.netdev_state = Some("Down".into());
        assert_eq!(p.verdict(), Verdict::NotShown);
        p.netdev = Some("enp27s0f1np1".into());
        assert_eq!(p.verdict(), Verdict::Down);
        p.netdev_state = Some("Up".into());
        assert_eq!(p.verdict(), Verdict::Up);
    }

    #[test]
    fn a_pod_interface_carrier_is_judged() {
        // k8snetworkplumbingwg/sriov-network-operator#382: `mlx5_3 port 1 ==> net1 (Down)` in
        // the pod; Multus's `netN`, brought up by the CNI plugin
        let mut p = port(None, None);
        p.link_layer = None;
        p.netdev = Some("net1".into());
        p.netdev_state = Some("Down".into());
        assert_eq!(p.verdict(), Verdict::Down);
        assert!(p.cause().contains("CNI"), "{}", p.cause());
        p.netdev_state = Some("Up".into());
        assert_eq!(p.verdict(), Verdict::Up);
        // not Multus's names: a host's netdevs, words that only start like it
        for n in ["network0", "net", "netx1", "net12345", "ibp75s0v7", "ib0"] {
            p.netdev = Some(n.into());
            p.netdev_state = Some("Down".into());
            assert_eq!(p.verdict(), Verdict::NotShown, "{n}");
        }
    }

    #[test]
    fn the_empty_class_is_a_port_less_entry() {
        let p = IbPort::no_device("ibstatus");
        assert!(p.is_no_device());
        assert_eq!(p.verdict(), Verdict::Down);
        assert_eq!(p.name(), "no RDMA device");
        assert!(
            p.cause().contains("no RDMA device is registered"),
            "{}",
            p.cause()
        );
        assert!(!port(Some("Down"), None).is_no_device());
    }

    #[test]
    fn both_tools_words_map_to_one_vocabulary() {
        assert_eq!(logical_state("PORT_INIT"), Some("Initializing"));
        assert_eq!(logical_state("Active"), Some("Active"));
        assert_eq!(logical_state("nonsense"), None);
        assert_eq!(
            physical_state("PORT_CONFIGURATION TRAINNING"),
            Some("PortConfigurationTraining")
        );
        assert_eq!(physical_state("LINK_UP"), Some("LinkUp"));
    }
}
