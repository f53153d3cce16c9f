//! `nvidia-smi topo -p2p <r|w|n|a|p>` and `nvidia-smi mig -lgi` / `-lgip`: two of nvidia-smi's
//! own tables, read from the tool's help text and printed output (nvidia-smi is closed source).
//!
//! `topo -p2p` (`nvidia-smi topo -h`, e.g. driver 535's: `-p2p, --p2pstatus: Displays the p2p
//! status between the GPUs of a given p2p capability`, `r - p2p read capability, w - p2p write
//! capability, n - p2p nvlink capability, a - p2p atomics capability, p - p2p pcie
//! capability`) prints a header of `GPU<n>` cells, then one row per GPU, ` GPU<n>` and one cell
//! per GPU, tab-separated (a report tool may expand the tabs), then its legend:
//!
//! ```text
//!         GPU0    GPU1
//!  GPU0   X       CNS
//!  GPU1   CNS     X
//!
//! Legend:
//!
//!   X    = Self
//!   OK   = Status Ok
//!   CNS  = Chipset not supported
//!   GNS  = GPU not supported
//!   TNS  = Topology not supported
//!   NS   = Not supported
//!   DR   = Disabled by regkey        (newer drivers)
//!   U    = Unknown
//! ```
//!
//! A row is read only where every cell is one of the legend's codes and there are as many as
//! header cells; the capability is named only where the paste holds the command line.
//!
//! `nvidia-smi mig -h`: `-lgi, --list-gpu-instances: List GPU instances` and `-lgip,
//! --list-gpu-instance-profiles: List supported GPU instance profiles`. Each prints a boxed table
//! (the MIG user guide, docs.nvidia.com/datacenter/tesla/mig-user-guide, shows both):
//! `| GPU instances: |` over `| GPU   Name   Profile  Instance   Placement |` and
//! `|   0  MIG 1g.10gb   19   9   2:1 |` rows (GPU, profile name, profile ID, instance ID,
//! placement start:size); `| GPU instance profiles: |` over `| GPU   Name   ID   Instances
//! Memory   P2P   SM   DEC   ENC |` and `|   0  MIG 1g.10gb   19   0/7   9.50   No   14   0   0 |`
//! rows (free/total instances, memory GiB, P2P, SMs, decoders, encoders), each followed by a
//! `CE JPEG OFA` continuation row. `No MIG-enabled devices found.` is what both print on a GPU
//! without MIG mode.
//!
//! No rule reads either: a P2P matrix says what the GPUs could do, not what a job did (NCCL's
//! log says that, and `comm.shm-between-local-gpus` reads it), and a MIG layout is a choice.
//! They are read so that such a paste is not "cannot tell what this is".

use serde::Serialize;

/// The codes of `topo -p2p`'s legend.
const P2P_CODES: &[(&str, &str)] = &[
    ("X", "self"),
    ("OK", "status ok"),
    ("CNS", "chipset not supported"),
    ("GNS", "GPU not supported"),
    ("TNS", "topology not supported"),
    ("NS", "not supported"),
    ("DR", "disabled by regkey"),
    ("U", "unknown"),
];

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct P2pMatrix {
    /// `read`, `write`, `nvlink`, `atomics` or `pcie`, where the paste holds `topo -p2p <c>`.
    pub capability: Option<String>,
    /// The GPUs of the header, `GPU0` …
    pub gpus: Vec<String>,
    /// Pairs (either order) whose cell is not `OK`: `GPU0-GPU1: CNS (chipset not supported)`.
    pub not_ok: Vec<String>,
    /// Pairs whose cell is `OK`.
    pub ok_pairs: usize,
    /// Rows read.
    pub rows: usize,
}

fn gpu_cell(w: &str) -> bool {
    w.strip_prefix("GPU")
        .is_some_and(|n| !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()))
}

fn p2p_code(w: &str) -> Option<&'static str> {
    P2P_CODES.iter().find(|(c, _)| *c == w).map(|(_, m)| *m)
}

/// `GPU0 GPU1 …` alone on the line.
fn p2p_header(l: &str) -> Option<Vec<String>> {
    let w: Vec<&str> = l.split_whitespace().collect();
    (!w.is_empty() && w.iter().all(|c| gpu_cell(c)))
        .then(|| w.iter().map(|c| c.to_string()).collect())
}

/// ` GPU1  OK  X  CNS` with `n` code cells -> (row GPU, cells).
fn p2p_row(l: &str, n: usize) -> Option<(&str, Vec<&str>)> {
    let w: Vec<&str> = l.split_whitespace().collect();
    let (first, cells) = w.split_first()?;
    (gpu_cell(first) && cells.len() == n && cells.iter().all(|c| p2p_code(c).is_some()))
        .then(|| (*first, cells.to_vec()))
}

/// A `GPU<n>` header followed by a row of legend codes, one per header cell.
pub fn looks_like_p2p(text: &str) -> bool {
    let lines: Vec<&str> = super::content_lines(text).take(4000).collect();
    lines.windows(2).any(|w| {
        p2p_header(super::smi_tables::clean(w[0]))
            .is_some_and(|h| p2p_row(super::smi_tables::clean(w[1]), h.len()).is_some())
    })
}

pub fn parse_p2p(text: &str) -> Result<P2pMatrix, super::ParseError> {
    if !looks_like_p2p(text) {
        return Err(super::ParseError::NotThisKind(
            "no `nvidia-smi topo -p2p` matrix (a `GPU0 GPU1 …` header over rows of X/OK/CNS/GNS/TNS/NS/DR/U)",
        ));
    }
    let mut out = P2pMatrix::default();
    let mut header: Option<Vec<String>> = None;
    let mut seen = std::collections::BTreeSet::new();
    for raw in super::content_lines(text).take(20_000) {
        let l = super::smi_tables::clean(raw);
        if out.capability.is_none()
            && let Some((_, c)) = l.split_once("topo -p2p ")
        {
            out.capability = match c.split_whitespace().next() {
                Some("r") => Some("read".into()),
                Some("w") => Some("write".into()),
                Some("n") => Some("nvlink".into()),
                Some("a") => Some("atomics".into()),
                Some("p") => Some("pcie".into()),
                _ => None,
            };
        }
        if let Some(h) = p2p_header(l) {
            if out.gpus.is_empty() {
                out.gpus = h.clone();
            }
            header = Some(h);
            continue;
        }
        let Some(h) = &header else { continue };
        let Some((row, cells)) = p2p_row(l, h.len()) else {
            continue;
        };
        out.rows += 1;
        for (col, c) in h.iter().zip(cells) {
            if col == row || c == "X" {
                continue;
            }
            let pair = if col.as_str() < row {
                (col.clone(), row.to_string())
            } else {
                (row.to_string(), col.clone())
            };
            if !seen.insert((pair.clone(), c.to_string())) {
                continue;
            }
            if c == "OK" {
                out.ok_pairs += 1;
            } else if out.not_ok.len() < super::MAX_ITEMS {
                let m = p2p_code(c).unwrap_or("");
                out.not_ok.push(format!("{}-{}: {c} ({m})", pair.0, pair.1));
            }
        }
    }
    Ok(out)
}

/// The registry entry for `topo -p2p` (see [`super::EvidenceKind`]).
pub struct P2pKind;

impl super::EvidenceKind for P2pKind {
    fn name(&self) -> &'static str {
        "nvidia-smi-p2p"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi topo -p2p matrix: per GPU pair whether peer-to-peer read/write/NVLink/atomics is supported (OK, CNS, GNS, TNS, NS, DR, U)"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi topo -p2p r"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "capability",
                "read, write, nvlink, atomics or pcie, where the command line is in the paste",
            ),
            ("gpus", "the GPUs of the header"),
            (
                "not_ok",
                "GPU pairs whose cell is not OK, with the legend's meaning",
            ),
            ("ok_pairs", "GPU pairs whose cell is OK"),
            ("rows", "rows read"),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_p2p(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_p2p(text)?)
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MigInstance {
    pub gpu: u32,
    /// `1g.10gb`
    pub profile: String,
    pub profile_id: u32,
    pub instance_id: u32,
    /// `2:1` (start:size)
    pub placement: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MigProfile {
    pub gpu: u32,
    pub profile: String,
    pub profile_id: u32,
    /// `0/7`
    pub instances_free_total: String,
    pub memory_gib: Option<f64>,
    pub sms: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MigListing {
    /// `mig -lgi` rows.
    pub gpu_instances: Vec<MigInstance>,
    /// `mig -lgip` rows.
    pub gpu_instance_profiles: Vec<MigProfile>,
    /// `No MIG-enabled devices found.` was printed.
    pub no_mig_devices: bool,
}

/// A boxed row's cells: `|   0  MIG 1g.10gb  19  9  2:1  |` -> words between the bars.
fn box_words(l: &str) -> Option<Vec<&str>> {
    let t = l.trim();
    let inner = t.strip_prefix('|')?.trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    Some(inner.split_whitespace().collect())
}

fn title(l: &str) -> Option<&'static str> {
    let w = box_words(l)?;
    match w[..] {
        ["GPU", "instances:"] => Some("lgi"),
        ["GPU", "instance", "profiles:"] => Some("lgip"),
        _ => None,
    }
}

/// `0 MIG 1g.10gb 19 9 2:1`
fn lgi_row(w: &[&str]) -> Option<MigInstance> {
    let [gpu, "MIG", profile, pid, iid, placement] = w[..] else {
        return None;
    };
    let (s, z) = placement.split_once(':')?;
    s.parse::<u32>().ok()?;
    z.parse::<u32>().ok()?;
    Some(MigInstance {
        gpu: gpu.parse().ok()?,
        profile: profile.to_string(),
        profile_id: pid.parse().ok()?,
        instance_id: iid.parse().ok()?,
        placement: placement.to_string(),
    })
}

/// `0 MIG 1g.10gb 19 0/7 9.50 No 14 0 0`
fn lgip_row(w: &[&str]) -> Option<MigProfile> {
    let [gpu, "MIG", profile, pid, inst, mem, p2p, sm, _dec, _enc] = w[..] else {
        return None;
    };
    let (f, t) = inst.split_once('/')?;
    f.parse::<u32>().ok()?;
    t.parse::<u32>().ok()?;
    if !matches!(p2p, "Yes" | "No") {
        return None;
    }
    Some(MigProfile {
        gpu: gpu.parse().ok()?,
        profile: profile.to_string(),
        profile_id: pid.parse().ok()?,
        instances_free_total: inst.to_string(),
        memory_gib: mem.parse().ok(),
        sms: sm.parse().ok(),
    })
}

/// A `| GPU instances: |` or `| GPU instance profiles: |` title, or nvidia-smi's line for a GPU
/// without MIG mode.
pub fn looks_like_mig(text: &str) -> bool {
    super::content_lines(text).take(4000).any(|l| {
        let l = super::smi_tables::clean(l);
        title(l).is_some() || l.trim() == "No MIG-enabled devices found."
    })
}

pub fn parse_mig(text: &str) -> Result<MigListing, super::ParseError> {
    if !looks_like_mig(text) {
        return Err(super::ParseError::NotThisKind(
            "no `nvidia-smi mig -lgi`/`-lgip` table (`| GPU instances: |`, `| GPU instance profiles: |`)",
        ));
    }
    let mut out = MigListing::default();
    let mut table: Option<&str> = None;
    for raw in super::content_lines(text).take(20_000) {
        let l = super::smi_tables::clean(raw);
        if l.trim() == "No MIG-enabled devices found." {
            out.no_mig_devices = true;
            continue;
        }
        if let Some(t) = title(l) {
            table = Some(t);
            continue;
        }
        let Some(w) = box_words(l) else { continue };
        match table {
            Some("lgi") => {
                if let Some(r) = lgi_row(&w)
                    && out.gpu_instances.len() < super::MAX_ITEMS
                {
                    out.gpu_instances.push(r);
                }
            }
            Some("lgip") => {
                if let Some(r) = lgip_row(&w)
                    && out.gpu_instance_profiles.len() < super::MAX_ITEMS
                {
                    out.gpu_instance_profiles.push(r);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The registry entry for `mig -lgi` / `-lgip` (see [`super::EvidenceKind`]).
pub struct MigKind;

impl super::EvidenceKind for MigKind {
    fn name(&self) -> &'static str {
        "nvidia-smi-mig"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi mig -lgi (GPU instances) or -lgip (GPU instance profiles): each GPU's MIG layout"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi mig -lgi"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "gpu_instances",
                "mig -lgi rows: gpu, profile, profile_id, instance_id, placement",
            ),
            (
                "gpu_instance_profiles",
                "mig -lgip rows: gpu, profile, profile_id, instances free/total, memory GiB, SMs",
            ),
            (
                "no_mig_devices",
                "nvidia-smi printed No MIG-enabled devices found.",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_mig(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_mig(text)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p2p_matrix_ok_and_cns() {
        // stas00/ml-engineering (afab245) network/debug/README.md: 8x H100, all OK
        let ok = "$ nvidia-smi topo -p2p r\n        GPU0    GPU1    GPU2\n GPU0   X       OK      OK\n GPU1   OK      X       OK\n GPU2   OK      OK      X\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n";
        assert!(looks_like_p2p(ok));
        let m = parse_p2p(ok).unwrap();
        assert_eq!(m.capability.as_deref(), Some("read"));
        assert_eq!(m.gpus, ["GPU0", "GPU1", "GPU2"]);
        assert_eq!((m.rows, m.ok_pairs), (3, 3));
        assert!(m.not_ok.is_empty());
        // the same guide's 2x L4: chipset not supported
        let cns = "$ nvidia-smi topo -p2p r\n        GPU0    GPU1\n GPU0   X       CNS\n GPU1   CNS     X\n";
        let m = parse_p2p(cns).unwrap();
        assert_eq!(m.not_ok, ["GPU0-GPU1: CNS (chipset not supported)"]);
        // noonghunna/club-3090#1124: two RTX 5090, tab-separated with trailing tabs, no command
        let gns = " \tGPU0\tGPU1\t\n GPU0\tX\tGNS\t\n GPU1\tGNS\tX\t\n\nLegend:\n\n  X    = Self\n";
        let m = parse_p2p(gns).unwrap();
        assert_eq!(m.capability, None);
        assert_eq!(m.not_ok, ["GPU0-GPU1: GNS (GPU not supported)"]);
        // `topo -m` is not a p2p matrix (its cells are link types, and it has affinity columns)
        let topo = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPHB\t0-63\t0\nGPU1\tPHB\t X \t0-63\t0\n";
        assert!(!looks_like_p2p(topo));
        let topo2 = "\tGPU0\tGPU1\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n";
        assert!(!looks_like_p2p(topo2));
    }

    #[test]
    fn mig_lgi_and_lgip() {
        // kubernetes-sigs/dra-driver-nvidia-gpu#933: three 1g.10gb instances on GPU 3
        let lgi = "+---------------------------------------------------------+\n| GPU instances:                                          |\n| GPU   Name               Profile  Instance   Placement  |\n|                            ID       ID       Start:Size |\n|=========================================================|\n|   3  MIG 1g.10gb           19        7          0:1     |\n+---------------------------------------------------------+\n|   3  MIG 1g.10gb           19        8          1:1     |\n+---------------------------------------------------------+\n|   3  MIG 1g.10gb           19       12          5:1     |\n+---------------------------------------------------------+\n";
        assert!(looks_like_mig(lgi));
        let m = parse_mig(lgi).unwrap();
        assert_eq!(m.gpu_instances.len(), 3);
        assert_eq!(
            m.gpu_instances[2],
            MigInstance {
                gpu: 3,
                profile: "1g.10gb".into(),
                profile_id: 19,
                instance_id: 12,
                placement: "5:1".into()
            }
        );
        // NVIDIA/mig-parted#97: an A100 80GB with no free instance of any profile
        let lgip = "+-----------------------------------------------------------------------------+\n| GPU instance profiles:                                                      |\n| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |\n|                              Free/Total   GiB              CE    JPEG  OFA  |\n|=============================================================================|\n|   0  MIG 1g.10gb       19     0/7        9.50       No     14     0     0   |\n|                                                             1     0     0   |\n+-----------------------------------------------------------------------------+\n|   0  MIG 1g.10gb+me    20     0/1        9.50       No     14     1     0   |\n|                                                             1     1     1   |\n";
        let m = parse_mig(lgip).unwrap();
        assert_eq!(m.gpu_instance_profiles.len(), 2);
        assert_eq!(m.gpu_instance_profiles[1].profile, "1g.10gb+me");
        assert_eq!(m.gpu_instance_profiles[0].instances_free_total, "0/7");
        assert_eq!(m.gpu_instance_profiles[0].memory_gib, Some(9.5));
        assert_eq!(m.gpu_instance_profiles[0].sms, Some(14));
        // the default table's MIG section is not a mig listing
        assert!(!looks_like_mig(
            "| MIG devices:                                                                |\n"
        ));
    }
}
