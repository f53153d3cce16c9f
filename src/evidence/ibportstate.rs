//! `ibportstate` output, read from its producer: rdma-core `infiniband-diags/ibportstate.c`
//! (read at 691953d8d, github.com/linux-rdma/rdma-core). `main` queries one port of the node
//! at a LID or directed route and prints, for a query, `Switch PortInfo:` or `CA/RT
//! PortInfo:` (older releases: `PortInfo:`), then `show_port_info`'s block:
//!
//! ```text
//! # Port info: Lid 1 port 28                      portid2str (libibmad/portid.c) and the port
//! LinkState:.......................Down           mad_dump_portstates: LinkState,
//! PhysLinkState:...................Disabled         PhysLinkState (LinkDownDefState on newer)
//! Lid:.............................38             Lid, SMLid, LMC (newer releases)
//! LinkWidthSupported:..............1X or 4X       LinkWidth{Supported,Enabled,Active},
//! LinkWidthActive:.................4X               LinkSpeed{Supported,Enabled,Active}, …
//! LinkSpeedActive:.................2.5 Gbps
//! ```
//!
//! Each field is libibmad's `_mad_dump_field` (`libibmad/fields.c`): the field's name, `:`,
//! dots up to column 32, then the value `mad_dump_portstate` (`Down`, `Initialize`, `Armed`,
//! `Active`) or `mad_dump_physportstate` (`Sleep`, `Polling`, `Disabled`, `LinkUp`, …) prints.
//! For a switch port whose link is up the tool also queries the port at the other end and
//! prints it under `Peer PortInfo:` with a directed-route id (`Lid 1 DR path slid 2; dlid
//! 65535; 0,1 port 1`).
//!
//! The reader keeps each block's target, port, node kind (when the line above says), whether
//! it is a peer, and its state, physical state, active width and active speed. No rule reads
//! it: `ibportstate` queries any port of the fabric by LID, a switch's unused ports are `Down`
//! / `Disabled` by design, and older releases do not say whether the node is a switch, so its
//! states are not the host's own RDMA ports that `comm.ib-port-down` judges (ibstat, ibstatus,
//! ibv_devinfo, `rdma link` show those).

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Ibportstate {
    pub ports: Vec<PortInfo>,
}

/// One `# Port info: TARGET port N` block.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PortInfo {
    /// `portid2str`: `Lid 1`, or `DR path slid 2; dlid 65535; 0,1`.
    pub target: String,
    pub port: u32,
    /// `Switch` or `CA/RT`, from the `… PortInfo:` line `main` prints above the block (absent
    /// on older releases, which print `PortInfo:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// True for the port at the other end of a switch port's link (`Peer PortInfo:` above).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub peer: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phys_state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width_active: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_active: Option<String>,
}

/// `# Port info: TARGET port N` (`printf("# Port info: %s port %d\n", portid2str(dest),
/// portnum)`); not the `# MLNX ext Port info:` block, which holds no state.
fn header(line: &str) -> Option<(String, u32)> {
    let rest = line.trim().strip_prefix("# Port info: ")?;
    let (target, n) = rest.rsplit_once(" port ")?;
    let target = target.trim();
    if !(target.starts_with("Lid ") || target.starts_with("DR path")) {
        return None;
    }
    Some((target.to_string(), n.trim().parse().ok()?))
}

/// A `_mad_dump_field` line: `Name:` then one or more dots (up to column 32), then the value.
/// `None` for any other line, so prose with a colon is not taken for a field.
fn field(line: &str) -> Option<(&str, &str)> {
    let t = line.trim();
    let (name, rest) = t.split_once(':')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let value = rest.strip_prefix('.')?.trim_start_matches('.');
    Some((name, value.trim()))
}

/// The node kind a `Switch PortInfo:` / `CA/RT PortInfo:` / `Initial … PortInfo:` line
/// names; `Some(None)` for the older bare `PortInfo:`; `None` for any other line.
fn node_line(line: &str) -> Option<Option<&'static str>> {
    let t = line.trim();
    let t = t.strip_prefix("Initial ").unwrap_or(t);
    match t {
        "PortInfo:" => Some(None),
        "Switch PortInfo:" => Some(Some("Switch")),
        "CA/RT PortInfo:" => Some(Some("CA/RT")),
        _ => None,
    }
}

/// True when the text holds an `ibportstate` block: a `# Port info:` line with a dumped
/// `LinkState` or `PhysLinkState` field within the lines under it.
pub fn looks_like_ibportstate(text: &str) -> bool {
    let mut lines = super::scan::lines(text).take(4000);
    while let Some(l) = lines.next() {
        if header(l).is_some() {
            return lines.take(4).any(
                |n| matches!(field(n), Some(("LinkState" | "PhysLinkState", v)) if !v.is_empty()),
            );
        }
    }
    false
}

pub fn parse_ibportstate(text: &str) -> Ibportstate {
    let mut out = Ibportstate::default();
    let mut node: Option<String> = None;
    let mut peer = false;
    let mut cur: Option<PortInfo> = None;
    for line in super::scan::lines(text) {
        if let Some((target, port)) = header(line) {
            if let Some(p) = cur.take() {
                out.ports.push(p);
            }
            if out.ports.len() >= super::MAX_ITEMS {
                break;
            }
            cur = Some(PortInfo {
                target: super::clip(&target, super::MAX_TEXT),
                port,
                node: node.clone(),
                peer,
                ..Default::default()
            });
            continue;
        }
        let t = line.trim();
        if t == "Peer PortInfo:" {
            if let Some(p) = cur.take() {
                out.ports.push(p);
            }
            // the other end's node kind is not printed
            peer = true;
            node = None;
            continue;
        }
        if let Some(n) = node_line(t) {
            if let Some(p) = cur.take() {
                out.ports.push(p);
            }
            node = n.map(str::to_string);
            peer = false;
            continue;
        }
        let Some(p) = cur.as_mut() else { continue };
        let Some((name, value)) = field(t) else {
            continue;
        };
        let v = || (!value.is_empty()).then(|| super::clip(value, 40));
        match name {
            "LinkState" => p.link_state = v(),
            "PhysLinkState" => p.phys_state = v(),
            "LinkWidthActive" => p.width_active = v(),
            "LinkSpeedActive" => p.speed_active = v(),
            _ => {}
        }
    }
    if let Some(p) = cur.take()
        && out.ports.len() < super::MAX_ITEMS
    {
        out.ports.push(p);
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct IbportstateKind;

impl super::EvidenceKind for IbportstateKind {
    fn name(&self) -> &'static str {
        "ibportstate"
    }
    fn doc(&self) -> &'static str {
        "`ibportstate` output (infiniband-diags): one fabric port's PortInfo as libibmad dumps it, its logical and physical state, active width and speed"
    }
    fn example(&self) -> &'static str {
        "ibportstate 1 28"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "ports",
            "target (Lid N or DR path), port, node (Switch or CA/RT when printed), peer, link_state, phys_state, width_active, speed_active",
        )]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_ibportstate(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_ibportstate(text);
        if v.ports.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `# Port info: … port N` block in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_ports_down_disabled_as_an_old_release_prints_them() {
        // github.com/tuananh0788/Exadata/issues/2: `ibportstate 1 N` on an Exadata switch
        // (the bare `PortInfo:` of older releases), the stored copy starting inside a block
        let t = "# Port info: Lid 1 port 28\nLinkState:.......................Down\nPhysLinkState:...................Disabled\nLinkWidthSupported:..............1X or 4X\nLinkWidthEnabled:................1X or 4X\nLinkWidthActive:.................4X\nLinkSpeedSupported:..............2.5 Gbps or 5.0 Gbps or 10.0 Gbps\nLinkSpeedEnabled:................2.5 Gbps or 5.0 Gbps or 10.0 Gbps\nLinkSpeedActive:.................2.5 Gbps\n[root@exasw-infb01 ~]# ibportstate 1 29\nPortInfo:\n# Port info: Lid 1 port 29\nLinkState:.......................Down\nPhysLinkState:...................Disabled\nLinkWidthActive:.................4X\nLinkSpeedActive:.................2.5 Gbps\n";
        assert!(looks_like_ibportstate(t));
        let p = parse_ibportstate(t).ports;
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].target, "Lid 1");
        assert_eq!(p[0].port, 28);
        assert_eq!(p[0].link_state.as_deref(), Some("Down"));
        assert_eq!(p[0].phys_state.as_deref(), Some("Disabled"));
        assert_eq!(p[0].width_active.as_deref(), Some("4X"));
        assert_eq!(p[0].speed_active.as_deref(), Some("2.5 Gbps"));
        assert_eq!(p[1].port, 29);
        assert_eq!(p[1].node, None);
        assert!(!p[1].peer);
    }

    #[test]
    fn a_switch_port_and_its_peer_as_the_current_release_prints_them() {
        // ibportstate.c `main`: `Switch PortInfo:` above the queried port, `Peer PortInfo:`
        // above the port at the other end (its DR path id); same thread, port 6 and its peer
        let t = "Switch PortInfo:\n# Port info: Lid 1 port 6\nLinkState:.......................Active\nPhysLinkState:...................LinkUp\nLid:.............................1\nLinkWidthActive:.................4X\nLinkSpeedActive:.................10.0 Gbps\nPeer PortInfo:\n# Port info: Lid 1 DR path slid 2; dlid 65535; 0,6 port 1\nLinkState:.......................Active\nPhysLinkState:...................LinkUp\nLinkWidthActive:.................4X\nLinkSpeedActive:.................10.0 Gbps\n";
        assert!(looks_like_ibportstate(t));
        let p = parse_ibportstate(t).ports;
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].node.as_deref(), Some("Switch"));
        assert!(!p[0].peer);
        assert_eq!(p[0].link_state.as_deref(), Some("Active"));
        assert_eq!(p[1].target, "Lid 1 DR path slid 2; dlid 65535; 0,6");
        assert_eq!(p[1].port, 1);
        assert!(p[1].peer);
        assert_eq!(p[1].node, None);
        assert_eq!(p[1].phys_state.as_deref(), Some("LinkUp"));
    }

    #[test]
    fn what_is_not_ibportstate_stays_out() {
        // ibstat's indented `State: Down` (no dots), a markdown heading, the MLNX extended
        // block alone (no state), prose with a colon
        for t in [
            "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n",
            "# Port info: see below\nLinkState: Down\n",
            "# MLNX ext Port info: Lid 38 port 1\nStateChangeEnable:...............0x00\nLinkSpeedSupported:..............0x01\n",
            "# Port info: Lid 1 port 2\nthe link state is: Down\n",
        ] {
            assert!(!looks_like_ibportstate(t), "{t}");
        }
        assert_eq!(
            field("LinkState:.......................Down"),
            Some(("LinkState", "Down"))
        );
        assert_eq!(field("LinkState: Down"), None);
        assert_eq!(field("Note: ...."), None);
    }
}
