//! The CUDA samples' `p2pBandwidthLatencyTest` output, read from its producer: NVIDIA/cuda-samples
//! `Samples/5_Domain_Specific/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu` (read at
//! c94ff366, CUDA 13.0 samples; `1_Utilities/` before CUDA 11.6, the same lines). `main` prints:
//!
//! ```text
//! [P2P (Peer-to-Peer) GPU Bandwidth Latency Test]          printf("[%s]\n", sSampleName)
//! Device: 0, NVIDIA A100-SXM4-80GB, pciBusID: 7, pciDeviceID: 0, pciDomainID:0
//! Device=0 CAN Access Peer Device=1                       "Device=%d %s Access Peer Device=%d", CAN|CANNOT
//! ***NOTE: In case a device doesn't have P2P access …
//! P2P Connectivity Matrix                                 rows "%6d\t" then "%6d" (1 or 0)
//!      D\D     0     1
//! Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)     then Enabled (P2P Writes), with
//!    D\D     0      1                                     --p2p_read (P2P Reads), Bidirectional
//!      0 911.08  20.10                                    Disabled / Enabled: "%6d " row index,
//! P2P=Disabled Latency Matrix (us)                        "%6.02f " values; the latency
//!    GPU     0      1                                     matrices have a GPU table and a
//!    CPU     0      1                                     CPU one below it
//! ```
//!
//! A pair that cannot reach its peer falls back to a staged copy, which the note says. The test
//! measures copies, not a job, and a GeForce pair, a PCIe switch without ACS forwarding or a
//! virtual machine refuse peer access by design, so no rule reads it; it is read so that such a
//! paste is known, with its peer-access lines and matrices.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct P2pBandwidth {
    /// `Device: N, <name>, pciBusID: x, …` lines: (index, name, pci bus id in hex).
    pub devices: Vec<P2pDevice>,
    /// `Device=A CAN|CANNOT Access Peer Device=B`: (from, to, can).
    pub peer_access: Vec<(u32, u32, bool)>,
    /// Every matrix under one of the sample's titles.
    pub matrices: Vec<Matrix>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct P2pDevice {
    pub index: u32,
    pub name: String,
    pub pci_bus_id: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Matrix {
    /// The title as printed (`Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)`),
    /// with ` CPU` added for the CPU table below a latency matrix.
    pub title: String,
    /// One row per GPU: its index and its values, column by column.
    pub rows: Vec<(u32, Vec<f64>)>,
}

const BANNER: &str = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]";

/// The titles `main` prints before each matrix.
const TITLES: &[&str] = &[
    "P2P Connectivity Matrix",
    "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
    "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
    "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)",
    "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
    "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
    "P2P=Disabled Latency Matrix (us)",
    "P2P=Enabled Latency (P2P Writes) Matrix (us)",
    "P2P=Enabled Latency (P2P Reads) Matrix (us)",
    // The CUDA demo suite's `busGrind` (`extras/demo_suite`, shipped as a binary: no source is
    // published) prints the same `D\D` matrices under its own titles, as its public output
    // shows them (forum.level1techs.com/t/gpu-gpu-expected-bandwidth/185531, h163); P2P=Disabled
    // is the same title of its run with peer access off.
    "P2P Bandwidth Matrix (GB/s) - Unidirectional, P2P=Enabled",
    "P2P Bandwidth Matrix (GB/s) - Bidirectional, P2P=Enabled",
    "P2P Bandwidth Matrix (GB/s) - Unidirectional, P2P=Disabled",
    "P2P Bandwidth Matrix (GB/s) - Bidirectional, P2P=Disabled",
];

fn title(line: &str) -> Option<&'static str> {
    let l = line.trim();
    TITLES.iter().copied().find(|t| *t == l)
}

/// `Device=0 CAN Access Peer Device=1`.
fn peer(line: &str) -> Option<(u32, u32, bool)> {
    let rest = line.trim().strip_prefix("Device=")?;
    let (a, rest) = rest.split_once(' ')?;
    let (can, b) = if let Some(b) = rest.strip_prefix("CAN Access Peer Device=") {
        (true, b)
    } else {
        (false, rest.strip_prefix("CANNOT Access Peer Device=")?)
    };
    Some((a.parse().ok()?, b.trim().parse().ok()?, can))
}

/// `Device: 0, Tesla V100-SXM2-16GB, pciBusID: 5d, pciDeviceID: 0, pciDomainID:0`.
fn device(line: &str) -> Option<P2pDevice> {
    let rest = line.trim().strip_prefix("Device: ")?;
    let (index, rest) = rest.split_once(", ")?;
    let (name, rest) = rest.rsplit_once(", pciBusID: ")?;
    let (bus, rest) = rest.split_once(", ")?;
    if !rest.starts_with("pciDeviceID: ") || !bus.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(P2pDevice {
        index: index.parse().ok()?,
        name: super::clip(name.trim(), 80),
        pci_bus_id: bus.to_string(),
    })
}

/// A matrix's column header: `D\D` (or `GPU` / `CPU` of a latency matrix) then 0, 1, 2, ….
fn column_header(line: &str) -> Option<&str> {
    let mut w = line.split_whitespace();
    let head = w.next()?;
    if !matches!(head, "D\\D" | "GPU" | "CPU") {
        return None;
    }
    let cols: Vec<&str> = w.collect();
    (!cols.is_empty()
        && cols
            .iter()
            .enumerate()
            .all(|(i, c)| c.parse::<usize>().ok() == Some(i)))
    .then_some(head)
}

/// A matrix row: the GPU's index, then its values.
fn matrix_row(line: &str) -> Option<(u32, Vec<f64>)> {
    let mut w = line.split_whitespace();
    let i: u32 = w.next()?.parse().ok()?;
    let v: Vec<f64> = w.map(str::parse).collect::<Result<_, _>>().ok()?;
    (!v.is_empty()).then_some((i, v))
}

/// The sample's banner, a peer-access line or one of its matrix titles.
pub fn looks_like_p2p_bandwidth(text: &str) -> bool {
    super::content_lines(text)
        .take(4000)
        .any(|l| l.trim() == BANNER || peer(l).is_some() || title(l).is_some())
}

pub fn parse_p2p_bandwidth(text: &str) -> P2pBandwidth {
    let mut out = P2pBandwidth::default();
    let mut current: Option<usize> = None;
    for line in super::content_lines(text) {
        if let Some(p) = peer(line) {
            if out.peer_access.len() < super::MAX_ITEMS {
                out.peer_access.push(p);
            }
            current = None;
        } else if let Some(d) = device(line) {
            if out.devices.len() < super::MAX_ITEMS {
                out.devices.push(d);
            }
            current = None;
        } else if let Some(t) = title(line) {
            if out.matrices.len() >= super::MAX_ITEMS {
                break;
            }
            out.matrices.push(Matrix {
                title: t.to_string(),
                rows: Vec::new(),
            });
            current = Some(out.matrices.len() - 1);
        } else if let Some(head) = column_header(line) {
            // the CPU table below a latency matrix's GPU table is a matrix of its own
            if head == "CPU"
                && let Some(i) = current
            {
                let t = format!("{} CPU", out.matrices[i].title);
                out.matrices.push(Matrix {
                    title: t,
                    rows: Vec::new(),
                });
                current = Some(out.matrices.len() - 1);
            }
        } else if let Some(r) = matrix_row(line) {
            if let Some(m) = current.and_then(|i| out.matrices.get_mut(i))
                && m.rows.len() < super::MAX_ITEMS
            {
                m.rows.push(r);
            }
        } else if !line.trim().is_empty() {
            current = None;
        }
    }
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct P2pBandwidthKind;

impl super::EvidenceKind for P2pBandwidthKind {
    fn name(&self) -> &'static str {
        "cuda-p2p-bandwidth"
    }
    fn doc(&self) -> &'static str {
        "the CUDA samples' `p2pBandwidthLatencyTest` output: which GPU pairs can access each other as peers, and the copy bandwidth and latency matrices with P2P disabled and enabled (and the demo suite's `busGrind` P2P bandwidth matrices)"
    }
    fn example(&self) -> &'static str {
        "./p2pBandwidthLatencyTest"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "devices",
                "index, name, pci_bus_id of each `Device: N, …` line",
            ),
            (
                "peer_access",
                "(from, to, can) of each `Device=A CAN|CANNOT Access Peer Device=B` line",
            ),
            (
                "matrices",
                "title (as printed; ` CPU` added for a latency matrix's CPU table), rows (GPU index, values)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_p2p_bandwidth(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_p2p_bandwidth(text);
        if v.peer_access.is_empty() && v.matrices.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `Device=A CAN Access Peer Device=B` line or p2pBandwidthLatencyTest matrix in the text",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busgrind_matrices_are_read() {
        // h163: two RTX 3070 Ti, 3.3 GB/s one way between them (Level1Techs 185531)
        let t = crate::evidence::corpus_text(
            "h163_p2pbw_level1techs185531_busgrind_3070ti_phb_3gbs.txt",
        );
        assert!(looks_like_p2p_bandwidth(&t));
        let v = parse_p2p_bandwidth(&t);
        assert_eq!(v.matrices.len(), 2);
        assert_eq!(
            v.matrices[0].title,
            "P2P Bandwidth Matrix (GB/s) - Unidirectional, P2P=Enabled"
        );
        assert_eq!(
            v.matrices[0].rows,
            vec![(0, vec![257.84, 3.32]), (1, vec![3.32, 263.90])]
        );
        assert_eq!(v.matrices[1].rows[1], (1, vec![4.98, 270.33]));
        // a title alone in prose, with words after it, is not one
        assert!(!looks_like_p2p_bandwidth(
            "the P2P Bandwidth Matrix (GB/s) - Unidirectional, P2P=Enabled shows 3 GB/s\n"
        ));
    }

    #[test]
    fn peers_devices_and_the_connectivity_matrix_with_tabs() {
        // h114: ginkgo-project/ginkgo#164, 4x V100-SXM2 (rows "%6d\t" as the sample prints)
        let t = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\nDevice: 0, Tesla V100-SXM2-16GB, pciBusID: 5d, pciDeviceID: 0, pciDomainID:0\nDevice: 1, Tesla V100-SXM2-16GB, pciBusID: 5e, pciDeviceID: 0, pciDomainID:0\nDevice=0 CAN Access Peer Device=1\nDevice=1 CAN Access Peer Device=0\n\n***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.\nSo you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.\n\nP2P Connectivity Matrix\n     D\\D     0     1\n     0\t     1     1\n     1\t     1     1\n";
        assert!(looks_like_p2p_bandwidth(t));
        let p = parse_p2p_bandwidth(t);
        assert_eq!(p.devices.len(), 2);
        assert_eq!(p.devices[1].name, "Tesla V100-SXM2-16GB");
        assert_eq!(p.devices[1].pci_bus_id, "5e");
        assert_eq!(p.peer_access, vec![(0, 1, true), (1, 0, true)]);
        assert_eq!(p.matrices.len(), 1);
        assert_eq!(p.matrices[0].rows[1], (1, vec![1.0, 1.0]));
    }

    #[test]
    fn bandwidth_matrices_by_title_and_a_cannot_line() {
        // h114: NVIDIA/nccl#814 (matrices only, under a comment line) and a mixed box's CANNOT
        let t = "# Without --sm_copy\nUnidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 911.08  20.10\n     1  20.39 920.20\nUnidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1\n     0 912.68   9.90\n     1   9.90 922.37\nDevice=0 CANNOT Access Peer Device=2\n";
        assert!(looks_like_p2p_bandwidth(t));
        let p = parse_p2p_bandwidth(t);
        assert_eq!(p.matrices.len(), 2);
        assert_eq!(
            p.matrices[1].title,
            "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)"
        );
        assert_eq!(p.matrices[1].rows[0], (0, vec![912.68, 9.90]));
        assert_eq!(p.peer_access, vec![(0, 2, false)]);
    }

    #[test]
    fn a_latency_matrix_keeps_its_cpu_table_apart() {
        let t = "P2P=Disabled Latency Matrix (us)\n   GPU     0      1\n     0   2.07  13.08\n     1  11.68   2.12\n\n   CPU     0      1\n     0   3.10   8.20\n     1   8.00   3.05\n";
        let p = parse_p2p_bandwidth(t);
        assert_eq!(p.matrices.len(), 2);
        assert_eq!(p.matrices[1].title, "P2P=Disabled Latency Matrix (us) CPU");
        assert_eq!(p.matrices[1].rows[1], (1, vec![8.00, 3.05]));
    }

    #[test]
    fn other_peer_and_bandwidth_texts_are_not_claimed() {
        // deviceQuery's peer lines, nvidia-smi topo -p2p, nccl-tests rows, prose
        assert!(!looks_like_p2p_bandwidth(
            "> Peer access from NVIDIA A100 (GPU0) -> NVIDIA A100 (GPU1) : Yes\n"
        ));
        assert!(!looks_like_p2p_bandwidth(
            " \tGPU0\tGPU1\n GPU0\tX\tOK\n GPU1\tOK\tX\n"
        ));
        assert!(!looks_like_p2p_bandwidth(
            "the unidirectional P2P=Disabled Bandwidth Matrix shows 22 GB/s\n"
        ));
        assert!(!looks_like_p2p_bandwidth(
            "Device=0 can access peer Device=1\n"
        ));
        assert!(parse_p2p_bandwidth("").matrices.is_empty());
    }
}
