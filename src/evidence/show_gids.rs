//! `show_gids` output: NVIDIA's (Mellanox OFED's) script that lists each RDMA port's GID table
//! entries with their RoCE version and network interface, the table people paste to pick
//! `NCCL_IB_GID_INDEX`. Read from the script itself, NVIDIA's `show_gids` as kept verbatim in
//! github.com/IBM/DPFS `experiments/scripts/show_gids.sh` at 63e178e ("All copyrights of this
//! script belong to Nvidia"):
//!
//! - two header lines, `echo -e "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4 \t\tVER\tDEV"` and
//!   `"---\t----\t-----\t---\t\t\t\t\t------------ \t---\t---"`;
//! - one line per non-zero GID of every port (`/sys/class/infiniband/DEV/ports/PORT/gids/N`,
//!   the all-zero and bare `fe80::` link-local ones skipped): `$d\t$p\t$g\t$gid\t$ipv4
//!   \t$_type\t$_ndev` when the GID is IPv4-mapped (it starts `0000`), else
//!   `$d\t$p\t$g\t$gid\t\t\t$_type\t$_ndev`; `$_type` is `grep -o "[Vv].*"` of
//!   `gid_attrs/types/N` (`RoCE v2` -> `v2`, `IB/RoCE v1` -> `v1`), `$_ndev` is
//!   `gid_attrs/ndevs/N` (empty on an InfiniBand port);
//! - a last line `n_gids_found=N` (a host with no GID prints the two header lines and
//!   `n_gids_found=0`, which is read as the script's empty table).
//!
//! A paste usually has its tabs turned into spaces, so a row is read by its words: device, port,
//! index, the GID (eight groups of four hex digits), then what is there of the IPv4 address,
//! version and interface. The table shows which GIDs exist, not whether a port is up (that is
//! `rdma link`'s or ibstat's), so no rule reads it; it is read so that such a paste is known.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ShowGids {
    pub gids: Vec<Gid>,
    /// The script's `n_gids_found=N`, where the paste kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<u32>,
}

/// One GID table entry.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Gid {
    pub device: String,
    pub port: u32,
    pub index: u32,
    pub gid: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<String>,
    /// `v1` or `v2` (RoCE), as the script cut it from `gid_attrs/types`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
}

fn clean(line: &str) -> &str {
    super::infiniband::clean(line).trim()
}

/// `fe80:0000:0000:0000:0ac0:ebff:fe79:391a`: eight groups of four hex digits.
fn is_gid(w: &str) -> bool {
    let g: Vec<&str> = w.split(':').collect();
    g.len() == 8
        && g.iter()
            .all(|p| p.len() == 4 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_ipv4(w: &str) -> bool {
    let p: Vec<&str> = w.split('.').collect();
    p.len() == 4
        && p.iter()
            .all(|o| !o.is_empty() && o.len() <= 3 && o.parse::<u8>().is_ok())
}

/// The script's first header line, by its words.
fn is_header(line: &str) -> bool {
    clean(line).split_whitespace().collect::<Vec<_>>()
        == ["DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "DEV"]
}

fn row(line: &str) -> Option<Gid> {
    let w: Vec<&str> = clean(line).split_whitespace().collect();
    let [dev, port, index, gid, rest @ ..] = w.as_slice() else {
        return None;
    };
    if !is_gid(gid) || rest.len() > 3 {
        return None;
    }
    let mut g = Gid {
        device: super::clip(dev, 40),
        port: port.parse().ok()?,
        index: index.parse().ok()?,
        gid: gid.to_string(),
        ..Gid::default()
    };
    let mut rest = rest.iter().copied().peekable();
    if let Some(ip) = rest.next_if(|w| is_ipv4(w)) {
        g.ipv4 = Some(ip.to_string());
    }
    if let Some(v) = rest.next_if(|w| matches!(*w, "v1" | "v2" | "V1" | "V2")) {
        g.version = Some(v.to_lowercase());
    }
    if let Some(n) = rest.next() {
        g.netdev = Some(super::clip(n, 40));
    }
    rest.next().is_none().then_some(g)
}

fn found(line: &str) -> Option<u32> {
    clean(line).strip_prefix("n_gids_found=")?.parse().ok()
}

/// The script's header above its rows, or rows closed by its `n_gids_found=` line, or the
/// header closed by `n_gids_found=0` where the host has no GID at all (no RDMA port with an
/// address: the script prints its header and its count, nothing between).
pub fn looks_like_show_gids(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().take(4000).collect();
    let rows = lines.iter().filter(|l| row(l).is_some()).count();
    let header = lines.iter().any(|l| is_header(l));
    let count = lines.iter().any(|l| found(l).is_some());
    (rows > 0 && (header || count)) || (header && count)
}

pub fn parse_show_gids(text: &str) -> ShowGids {
    ShowGids {
        gids: text
            .lines()
            .filter_map(row)
            .take(super::MAX_ITEMS)
            .collect(),
        found: text.lines().take(20_000).find_map(found),
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct ShowGidsKind;

impl super::EvidenceKind for ShowGidsKind {
    fn name(&self) -> &'static str {
        "show-gids"
    }
    fn doc(&self) -> &'static str {
        "`show_gids` output (NVIDIA/Mellanox OFED): each RDMA port's GID table entries with their IPv4 address, RoCE version and network interface"
    }
    fn example(&self) -> &'static str {
        "show_gids"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "gids",
                "device, port, index, gid, ipv4, version (v1/v2), netdev",
            ),
            ("found", "the script's n_gids_found"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_show_gids(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_show_gids(text);
        if v.gids.is_empty() && !looks_like_show_gids(&super::unquote(text)) {
            return Err(super::ParseError::NotThisKind(
                "no `show_gids` row (`DEV PORT INDEX GID [IPv4] VER DEV`), nor its header over `n_gids_found=`, in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_roce_bond_table_with_tabs_expanded() {
        // github.com/openucx/ucx/pull/9484: a RoCE bond's GIDs on bond1 and a VXLAN interface
        let t = "DEV     PORT    INDEX   GID                                     IPv4            VER     DEV\n---     ----    -----   ---                                     ------------    ---     ---\nmlx5_bond_0     1       0       fe80:0000:0000:0000:0ac0:ebff:fe79:391a                 v1      bond1\nmlx5_bond_0     1       3       0000:0000:0000:0000:0000:ffff:1e99:0aaf 30.153.10.175   v2      b3.vxlan.30100\n";
        assert!(looks_like_show_gids(t));
        let g = parse_show_gids(t).gids;
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].index, g[0].ipv4.as_deref(), g[0].version.as_deref()),
            (0, None, Some("v1"))
        );
        assert_eq!(g[0].netdev.as_deref(), Some("bond1"));
        assert_eq!(g[1].ipv4.as_deref(), Some("30.153.10.175"));
        assert_eq!(g[1].netdev.as_deref(), Some("b3.vxlan.30100"));
    }

    #[test]
    fn the_scripts_own_tabs_an_ib_port_and_the_count() {
        // the script's echo lines (show_gids.sh at 63e178e), an IB port without an interface
        let t = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4 \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------ \t---\t---\nmlx5_0\t1\t0\tfe80:0000:0000:0000:b859:9f03:00d4:e6fe\t\t\tv1\t\nmlx5_2\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0002\t10.0.0.2 \tv2\tens1f0\nn_gids_found=2\n";
        let d = parse_show_gids(t);
        assert_eq!(d.found, Some(2));
        assert_eq!(d.gids[0].netdev, None);
        assert_eq!(d.gids[1].ipv4.as_deref(), Some("10.0.0.2"));
    }

    #[test]
    fn a_host_without_gids_prints_the_header_and_a_zero_count() {
        use crate::evidence::EvidenceKind;
        // Mellanox/k8s-rdma-sriov-dev-plugin#30 (h146): a pod on the calico CNI, whose eth0 is
        // a veth, sees no RDMA port with an address
        let t = "[root@rdma-test-wv8kj tmp]# show_gids \nDEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\nn_gids_found=0\n";
        assert!(looks_like_show_gids(t));
        let d = parse_show_gids(t);
        assert!(d.gids.is_empty());
        assert_eq!(d.found, Some(0));
        assert!(ShowGidsKind.parse(t).is_ok());
        // the header alone, or a count alone in prose, is not the table
        assert!(!looks_like_show_gids("DEV PORT INDEX GID IPv4 VER DEV\n"));
        assert!(!looks_like_show_gids(
            "it printed n_gids_found=0\nn_gids_found=0\n"
        ));
    }

    #[test]
    fn gid_like_lines_without_the_scripts_frame_are_not_claimed() {
        // ibv_devinfo -v prints `GID[  0]:  fe80:…`; a lone row without header or count
        assert!(!looks_like_show_gids(
            "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:fe79:391a, RoCE v1\n"
        ));
        assert!(!looks_like_show_gids(
            "mlx5_0 1 0 fe80:0000:0000:0000:0ac0:ebff:fe79:391a v1 eth0\n"
        ));
        assert!(!looks_like_show_gids("DEV PORT INDEX GID IPv4 VER DEV\n"));
    }
}
