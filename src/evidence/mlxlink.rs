//! `mlxlink` output (NVIDIA/Mellanox `mstflint` and MFT), read from its producer: mstflint
//! `mlxlink/modules/mlxlink_commander.cpp` at b9d9e84 (2026-05, github.com/Mellanox/mstflint),
//! `MlxlinkCommander::operatingInfoPage()` and `troubInfoPage()`, printed by
//! `printutil/mlxlink_cmd_print.cpp` and `mlxlink_record.cpp`.
//!
//! The text form is one section per page, its title, a rule of dashes as long as the title, and
//! one record a line, the key padded to the record width (`PDDR_LINE_LEN`, 37 today; 32 in
//! older MFT) before `: ` and the value:
//!
//! ```text
//! Operational Info
//! ----------------
//! State                              : Active
//! Physical state                     : LinkUp
//! Speed                              : IB-EDR
//! Width                              : 4x
//! FEC                                : No FEC
//! Loopback Mode                      : No Loopback
//! Auto Negotiation                   : ON
//!
//! Troubleshooting Info
//! --------------------
//! Status Opcode                      : 0
//! Group Opcode                       : N/A
//! Recommendation                     : No issue was observed
//! ```
//!
//! `--json` puts the same records under `result.output.<title>` (`toJsonFormat()`), one
//! `"Key" : "value"` a line as jsoncpp's styled writer prints them; a paste cut inside the
//! object is read up to the cut.
//!
//! - `State` is the port's PHY manager state (`_pmFsmState` in `mlxlink_maps.cpp`): `Disable`,
//!   `Port PLL Down`, `Polling`, `Active`, `Close port`, `Physical LinkUp`, `Sleep`,
//!   `Rx disable`, `Signal detect`, `Receiver detect`, `Sync peer`, `Negotiation`, `Training`,
//!   `SubFSM active`. It is the physical link, not the InfiniBand logical state (the subnet
//!   manager's Down/Init/Armed/Active), which mlxlink does not print: `Active` says the link
//!   is up, not that the port passes traffic, so an `Active` port is not judged up or down
//!   here (`ibstat` shows the logical state). Any other state means the link is not up, and an
//!   InfiniBand port whose physical link is not up is logically Down (IBTA vol. 1, 7.2).
//! - `Physical state`: the IB PHY FSM (`_ibPhyFsmState`: `LinkUp`, `Initializing`, …, `N/A`)
//!   or, on Ethernet, the auto-negotiation FSM (`_ethANFsmState`: `LinkUp`,
//!   `ETH_AN_FSM_ENABLE`, …).
//! - `Speed`: `IB-SDR` … `IB-XDR` (`_IBSpeed2Str`) on InfiniBand, `NVLink-…` on NVLink ports,
//!   else an Ethernet speed (`100G`, `25GbE`, `BaseT1000M`, …); shown only when the link is up.
//! - `Width`: lanes, `4x`. `Status Opcode` and `Recommendation`: the firmware's
//!   troubleshooting verdict (`0`, "No issue was observed").
//!
//! The output names no device: the device and port are taken from an `mlxlink` command line
//! pasted above the output (`-d DEV`, `-p N`), when there is one.

use super::infiniband::{IbPort, clean};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Mlxlink {
    pub ports: Vec<MlxPort>,
}

/// One port's output: its `Operational Info` and what follows it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MlxPort {
    /// The `-d` argument of the command line above the output (`/dev/mst/mt4119_pciconf0`,
    /// `mlx5_0`), when pasted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The `-p` argument, when pasted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// The PHY manager state as printed (`Active`, `Polling`, `Disable`, …).
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fec: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loopback: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_negotiation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_opcode: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
}

/// The PHY manager states `mlxlink_maps.cpp` names (`_pmFsmState`).
const PM_STATES: &[&str] = &[
    "Disable",
    "Port PLL Down",
    "Polling",
    "Active",
    "Close port",
    "Physical LinkUp",
    "Sleep",
    "Rx disable",
    "Signal detect",
    "Receiver detect",
    "Sync peer",
    "Negotiation",
    "Training",
    "SubFSM active",
];

/// The page titles `setPrintTitle()` is given; a record belongs to the last title above it.
const TITLES: &[&str] = &[
    "Operational Info",
    "Supported Info",
    "Troubleshooting Info",
    "Tool Information",
    "Port Info",
    "Module Info",
    "Physical Counters and BER Info",
    "FEC Capability Info",
    "Serdes Tx Info",
    "Eye Opening Info",
    "Device Info",
];

/// A page title: the text form's line alone, or the JSON form's `"Title" : {`.
fn title(line: &str) -> Option<&'static str> {
    let l = clean(line).trim();
    let l = match l.strip_prefix('"') {
        Some(r) => {
            let (name, rest) = r.split_once('"')?;
            if rest.trim_start().strip_prefix(':')?.trim() != "{" {
                return None;
            }
            name
        }
        None => l,
    };
    TITLES.iter().copied().find(|t| *t == l)
}

/// A record: `Key<spaces>: value` (text) or `"Key" : "value",` (JSON).
fn record(line: &str) -> Option<(&str, &str)> {
    let l = clean(line).trim();
    if let Some(r) = l.strip_prefix('"') {
        let (key, rest) = r.split_once('"')?;
        let v = rest.trim_start().strip_prefix(':')?.trim();
        let v = v.strip_suffix(',').unwrap_or(v).trim();
        let v = v.strip_prefix('"')?.strip_suffix('"')?;
        return Some((key, v));
    }
    let (key, v) = l.split_once(" :")?;
    let key = key.trim_end();
    if key.is_empty() || key.len() > 48 {
        return None;
    }
    Some((key, v.trim()))
}

/// The `-d` and `-p` arguments of an `mlxlink` command line.
fn command(line: &str) -> Option<(Option<String>, Option<u32>)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "mlxlink" || w.ends_with("/mlxlink") || w.ends_with("#mlxlink"))?;
    let mut dev = None;
    let mut port = None;
    let mut it = words[at + 1..].iter();
    while let Some(w) = it.next() {
        match *w {
            "-d" | "--device" => dev = it.next().map(|d| super::clip(d, 80)),
            "-p" | "--port" => port = it.next().and_then(|p| p.parse().ok()),
            _ => {
                if let Some(d) = w.strip_prefix("--device=") {
                    dev = Some(super::clip(d, 80));
                } else if let Some(p) = w.strip_prefix("--port=") {
                    port = p.parse().ok();
                }
            }
        }
    }
    Some((dev, port))
}

pub fn parse_mlxlink(text: &str) -> Mlxlink {
    let mut ports: Vec<MlxPort> = Vec::new();
    let mut cmd: (Option<String>, Option<u32>) = (None, None);
    let mut page: Option<&'static str> = None;
    // the port being read, until the next `Operational Info`
    let mut cur: Option<MlxPort> = None;
    for line in super::scan::lines(text) {
        if let Some(c) = command(line) {
            cmd = c;
            continue;
        }
        if let Some(t) = title(line) {
            if t == "Operational Info" {
                if let Some(p) = cur.take().filter(|p| !p.state.is_empty()) {
                    ports.push(p);
                    if ports.len() >= super::MAX_ITEMS {
                        break;
                    }
                }
                cur = Some(MlxPort {
                    device: cmd.0.clone(),
                    port: cmd.1,
                    ..MlxPort::default()
                });
            }
            page = Some(t);
            continue;
        }
        let (Some(p), Some((k, v))) = (cur.as_mut(), record(line)) else {
            continue;
        };
        let val = || Some(super::clip(v, 80)).filter(|v| !v.is_empty());
        match (page, k) {
            (Some("Operational Info"), "State") if PM_STATES.contains(&v) => {
                p.state = v.to_string()
            }
            (Some("Operational Info"), "Physical state") => p.physical_state = val(),
            (Some("Operational Info"), "Speed") => p.speed = val().filter(|v| v != "N/A"),
            (Some("Operational Info"), "Width") => {
                p.width = v.strip_suffix('x').and_then(|n| n.parse().ok())
            }
            (Some("Operational Info"), "FEC") => p.fec = val(),
            (Some("Operational Info"), "Loopback Mode") => p.loopback = val(),
            (Some("Operational Info"), "Auto Negotiation") => p.auto_negotiation = val(),
            (Some("Troubleshooting Info"), "Status Opcode") => {
                p.status_opcode = v.split_whitespace().next().and_then(|n| n.parse().ok())
            }
            (Some("Troubleshooting Info"), "Recommendation") => p.recommendation = val(),
            _ => {}
        }
    }
    if let Some(p) = cur.filter(|p| !p.state.is_empty())
        && ports.len() < super::MAX_ITEMS
    {
        ports.push(p);
    }
    Mlxlink { ports }
}

/// An `Operational Info` page with a PHY manager `State` and a `Physical state` record, in
/// either form.
pub fn looks_like_mlxlink(text: &str) -> bool {
    let mut in_page = false;
    let (mut state, mut phys) = (false, false);
    for line in super::scan::lines(text).take(4000) {
        if let Some(t) = title(line) {
            in_page = t == "Operational Info";
            continue;
        }
        if !in_page {
            continue;
        }
        match record(line) {
            Some(("State", v)) if PM_STATES.contains(&v) => state = true,
            Some(("Physical state", _)) => phys = true,
            _ => {}
        }
        if state && phys {
            return true;
        }
    }
    false
}

/// Gb/s of one lane at an InfiniBand speed (the signalling rates ibstat's `Rate` multiplies).
fn ib_lane_gbps(speed: &str) -> Option<f64> {
    Some(match speed {
        "IB-SDR" => 2.5,
        "IB-DDR" => 5.0,
        "IB-QDR" | "IB-FDR10" => 10.0,
        "IB-FDR" => 14.0,
        "IB-EDR" => 25.0,
        "IB-HDR" => 50.0,
        "IB-NDR" => 100.0,
        "IB-XDR" => 200.0,
        _ => return None,
    })
}

/// Gb/s of an Ethernet speed word (`100G`, `25GbE`, `BaseT1000M`), for the whole link.
fn eth_gbps(speed: &str) -> Option<f64> {
    let s = speed.strip_prefix("BaseT").unwrap_or(speed);
    let s = s.strip_suffix("bE").unwrap_or(s);
    if let Some(n) = s.strip_suffix('G') {
        return n.parse().ok();
    }
    s.strip_suffix('M')?.parse::<f64>().ok().map(|m| m / 1000.0)
}

impl MlxPort {
    /// `InfiniBand`, `Ethernet`, or unknown (an NVLink port, or no speed shown on a down link
    /// whose physical state does not tell).
    fn link_layer(&self) -> Option<&'static str> {
        match self.speed.as_deref() {
            Some(s) if s.starts_with("IB-") => Some("InfiniBand"),
            Some(s) if s.starts_with("NVLink") => None,
            Some(_) => Some("Ethernet"),
            None if self
                .physical_state
                .as_deref()
                .is_some_and(|p| p.starts_with("ETH_AN_FSM")) =>
            {
                Some("Ethernet")
            }
            None => None,
        }
    }

    /// The port in the vocabulary `ib.ports` judges.
    pub fn ib_port(&self) -> IbPort {
        let up = self.state == "Active";
        let physical_state = match self.state.as_str() {
            "Active" => Some("LinkUp"),
            "Polling" => Some("Polling"),
            "Disable" => Some("Disabled"),
            "Sleep" => Some("Sleep"),
            _ => None,
        };
        let rate_gbps = self.speed.as_deref().and_then(|s| {
            ib_lane_gbps(s)
                .map(|lane| lane * f64::from(self.width.unwrap_or(1)))
                .or_else(|| eth_gbps(s))
        });
        IbPort {
            device: self.device.clone().unwrap_or_default(),
            port: self.port.unwrap_or(1),
            // mlxlink prints no logical state: a link that is up is not judged; one that is
            // not up is Down (a port's logical state needs its physical link)
            state: (!up).then(|| "Down".to_string()),
            physical_state: physical_state.map(str::to_string),
            link_layer: self.link_layer().map(str::to_string),
            rate_gbps,
            netdev: None,
            netdev_state: None,
            sm_lid: None,
            source: "mlxlink",
        }
    }
}

impl Mlxlink {
    pub fn ports(&self) -> Vec<IbPort> {
        self.ports
            .iter()
            .filter(|p| !p.speed.as_deref().is_some_and(|s| s.starts_with("NVLink")))
            .map(MlxPort::ib_port)
            .collect()
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct MlxlinkKind;

impl super::EvidenceKind for MlxlinkKind {
    fn name(&self) -> &'static str {
        "mlxlink"
    }
    fn doc(&self) -> &'static str {
        "`mlxlink` output, text or `--json` (NVIDIA/Mellanox mstflint, MFT): a port's physical link state, speed, width, FEC and the firmware's troubleshooting recommendation"
    }
    fn example(&self) -> &'static str {
        "mlxlink -d mlx5_0 -p 1"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "ports",
            "device and port (from the command line, when pasted), state (the PHY manager's), physical_state, speed, width, fec, loopback, auto_negotiation, status_opcode, recommendation",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["ib.ports"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_mlxlink(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_mlxlink(text);
        if v.ports.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `mlxlink` Operational Info page (`State : …`, `Physical state : …`) in the text",
            ));
        }
        super::to_value(&v)
    }
    fn host(&self, _text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        // the port of the node it ran on: read by the ib.ports probe from the paste
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
    fn json_cut_inside_supported_info_is_read_up_to_the_cut() {
        // github.com/MrBr-github/lshca/issues/11 (the maintainer's data source, as quoted)
        let t = "#mlxlink -d /dev/mst/mt4119_pciconf0 -p 1 --json\n{\n   \"result\" : {\n      \"output\" : {\n         \"Operational Info\" : {\n            \"Auto Negotiation\" : \"ON\",\n            \"FEC\" : \"No FEC\",\n            \"Loopback Mode\" : \"No Loopback\",\n            \"Physical state\" : \"LinkUp\",\n            \"Speed\" : \"IB-EDR\",\n            \"State\" : \"Active\",\n            \"Width\" : \"4x\"\n         },\n         \"Supported Info\" : {\n            \"Enabled Link Speed\" : {\n               \"mask\" : \"0x0000003f\",\n";
        assert!(looks_like_mlxlink(t));
        let d = parse_mlxlink(t);
        assert_eq!(d.ports.len(), 1);
        let p = &d.ports[0];
        assert_eq!(p.device.as_deref(), Some("/dev/mst/mt4119_pciconf0"));
        assert_eq!(p.port, Some(1));
        assert_eq!(
            (p.state.as_str(), p.physical_state.as_deref()),
            ("Active", Some("LinkUp"))
        );
        assert_eq!((p.speed.as_deref(), p.width), (Some("IB-EDR"), Some(4)));
        assert_eq!(p.auto_negotiation.as_deref(), Some("ON"));
        let ib = p.ib_port();
        assert_eq!(ib.link_layer.as_deref(), Some("InfiniBand"));
        assert_eq!(ib.rate_gbps, Some(100.0));
        // the physical link is up; the logical state is not printed, so not judged
        assert_eq!(ib.verdict(), Verdict::NotShown);
    }

    #[test]
    fn text_form_of_older_mft_on_ethernet_with_a_32_wide_key() {
        // github.com/sonic-net/SONiC/issues/265 (a Spectrum switch port, as pasted)
        let t = "root@arc-mtbc-1001:/home/admin# mlxlink -d /dev/mst/mt52100_pci_cr0 -p 1 --show_serdes_tx\n\nOperational Info\n----------------\nState                           : Active\nPhysical state                  : LinkUp\nSpeed                           : 25GbE\nWidth                           : 1x\nFEC                             : Firecode FEC\nLoopback Mode                   : No Loopback\nAuto Negotiation                : ON\n";
        assert!(looks_like_mlxlink(t));
        let p = &parse_mlxlink(t).ports[0];
        assert_eq!(p.fec.as_deref(), Some("Firecode FEC"));
        let ib = p.ib_port();
        assert_eq!(ib.link_layer.as_deref(), Some("Ethernet"));
        assert_eq!(ib.rate_gbps, Some(25.0));
        assert_eq!(ib.name(), "/dev/mst/mt52100_pci_cr0 port 1");
    }

    #[test]
    fn the_firmwares_troubleshooting_verdict_is_kept() {
        // the ConnectX-5 example of a public HPC notes page kept in a repository (the search
        // tool's code corpus), indented as a reStructuredText code block: a link at SDR with
        // the firmware's "Cable speed not enabled"
        let t = "  sudo mlxlink -d mlx5_0 -p 1\n\n    Operational Info\n    ----------------\n    State                              : Active\n    Physical state                     : LinkUp\n    Speed                              : IB-SDR\n    Width                              : 4x\n    FEC                                : No FEC\n    Loopback Mode                      : No Loopback\n    Auto Negotiation                   : ON\n\n    Supported Info\n    --------------\n    Enabled Link Speed                 : 0x00000001 (SDR)\n    Supported Cable Speed              : 0x00000001 (SDR)\n\n    Troubleshooting Info\n    --------------------\n    Status Opcode                      : 25\n    Group Opcode                       : PHY FW\n    Recommendation                     : Cable speed not enabled\n";
        let p = &parse_mlxlink(t).ports[0];
        assert_eq!(p.status_opcode, Some(25));
        assert_eq!(p.recommendation.as_deref(), Some("Cable speed not enabled"));
        assert_eq!(p.ib_port().rate_gbps, Some(10.0));
        assert_eq!(p.ib_port().device, "mlx5_0");
    }

    #[test]
    fn a_port_whose_phy_is_polling_is_down_with_its_cause() {
        // built from mlxlink's own format (operatingInfoPage(): Speed and Width are not shown
        // when the link is down; troubInfoPage()); no public paste of a down port was found
        let t = "$ sudo mlxlink -d mlx5_1\n\nOperational Info\n----------------\nState                              : Polling\nPhysical state                     : N/A\nLoopback Mode                      : No Loopback\nAuto Negotiation                   : ON\n\nTroubleshooting Info\n--------------------\nStatus Opcode                      : 1024\nGroup Opcode                       : N/A\nRecommendation                     : Cable is unplugged\n";
        assert!(looks_like_mlxlink(t));
        let p = &parse_mlxlink(t).ports[0];
        assert_eq!(p.speed, None);
        let ib = p.ib_port();
        assert_eq!(ib.verdict(), Verdict::Down);
        assert_eq!(ib.physical_state.as_deref(), Some("Polling"));
        assert!(ib.cause().contains("cable"), "{}", ib.cause());
        // a disabled port on Ethernet
        let e = "Operational Info\n----------------\nState                              : Disable\nPhysical state                     : ETH_AN_FSM_ENABLE\n";
        let ib = parse_mlxlink(e).ports[0].ib_port();
        assert_eq!(ib.verdict(), Verdict::Down);
        assert_eq!(ib.link_layer.as_deref(), Some("Ethernet"));
    }

    #[test]
    fn two_ports_in_one_paste_and_prose_that_looks_alike() {
        let one = "Operational Info\n----------------\nState                              : Active\nPhysical state                     : LinkUp\nSpeed                              : IB-NDR\nWidth                              : 4x\n";
        let two = format!(
            "mlxlink -d mlx5_0\n{one}\nmlxlink -d mlx5_1\n{}",
            one.replace("Active", "Polling")
        );
        let d = parse_mlxlink(&two);
        assert_eq!(d.ports.len(), 2);
        assert_eq!(d.ports[1].device.as_deref(), Some("mlx5_1"));
        assert_eq!(d.ports[1].state, "Polling");
        // an ibstat block is not mlxlink's (no Operational Info page)
        assert!(!looks_like_mlxlink(
            "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
        ));
        // prose under the title, and a state mlxlink does not print
        assert!(!looks_like_mlxlink(
            "Operational Info\nState : fine, I think\nPhysical state : ok\n"
        ));
    }
}
