//! `gpu.topology`: how the GPUs of one host reach each other. From a pasted `nvidia-smi topo
//! -m` (`--evidence`) when one is given: the link class of every GPU pair (NV#, PIX, PXB, PHB,
//! NODE, SYS; an older driver's SOC is read as SYS). Otherwise from the host's NVML reading:
//! which GPUs have an active NVLink.
//!
//! From a pasted `nvidia-smi nvlink -s` when no `topo -m` is given: the GPUs with a link
//! `<inactive>` ([`crate::evidence::smi_nvlink`]), and those nvidia-smi says have all links
//! inActive on a board wired to its peers, as `gpus_without_nvlink`.
//!
//! A topology only says what the wiring is; which GPUs ought to have NVLink is the site's
//! knowledge (`expect_nvlink`), except where the paste itself shows a box whose GPU pairs all
//! cross the CPU interconnect (SYS): there no pair has a peer-to-peer path short of the
//! sockets' link, whatever the cards are.

use super::inputs::evidence_of;
use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::smi_nvlink::{self, NvlinkStatus};
use crate::evidence::smi_tables::{self, Topology};
use crate::host::{Field, NvmlReading};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub struct GpuTopology;

/// What a pasted `topo -m` shows.
pub fn topo_value(t: &Topology, source: &str) -> Value {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for l in &t.links {
        let k = if l.link.starts_with("NV") {
            "NV#".to_string()
        } else {
            let up = l.link.to_ascii_uppercase();
            // older nvidia-smi (the R3xx legend, before NODE existed) names the cross-socket
            // path SOC ("Connection traversing PCIe as well as the SMP link between CPU
            // sockets(e.g. QPI)", as tensorflow/contrib/gdr/README.md quotes it); later drivers
            // print the same path as SYS ("... the SMP interconnect between NUMA nodes (e.g.,
            // QPI/UPI)"): one link class, two spellings.
            if up == "SOC" { "SYS".to_string() } else { up }
        };
        *kinds.entry(k).or_default() += 1;
    }
    let sys = kinds.get("SYS").copied().unwrap_or(0);
    json!({
        "given": true,
        "source": "topo -m",
        "file": source,
        "gpu_count": t.gpus.len(),
        "pairs": t.pairs,
        "nvlink_pairs": t.nvlink_pairs,
        "links": kinds,
        // every pair read (and every pair kept) crosses the CPU interconnect
        "all_pairs_sys": t.gpus.len() > 1 && t.pairs > 0 && sys == t.pairs && t.links.len() == t.pairs,
    })
}

/// What a pasted `nvidia-smi nvlink -s` shows: the GPUs with a link `<inactive>`.
///
/// `nvlink -s` lists every link the GPU has (six on a V100, twelve on an A100, eighteen on an
/// H100), `<inactive>` for one that did not train (nvidia-smi(1): "-s, --status Display link
/// state (active/inactive)"). How many of them a board wires is the board's design: NVIDIA's
/// boards of three or more SXM GPUs use every link (the DGX-1/HGX-1 hybrid cube-mesh gives each
/// V100 all six, "NVIDIA DGX-1 With Tesla V100 System Architecture", WP-08437-002; HGX A100 and
/// H100 baseboards take every link of every GPU to the NVSwitches), while a board of two SXM
/// GPUs may bond the pair with only some of them. NVLink is point to point, so a link that fails
/// to train is lost at both of its ends. What the text can show, then:
/// - a GPU with fewer links up than another GPU of the paste: a link that did not train;
/// - a GPU past index 1 with a link down: a host of three or more GPUs, where every link is
///   wired;
/// - GPUs 0 and 1 (or one of them alone) with the same number of links up and the rest
///   `<inactive>`, and no GPU with more: the pair talks over NVLink, bonded by that many links; whether the board wires more
///   is not in the text (a two-GPU board, or two GPUs of a bigger host asked for with `-i`), so
///   they are not named.
pub fn nvlink_status_value(s: &NvlinkStatus, source: &str) -> Value {
    let mut without = Vec::new();
    let mut inactive_links = 0;
    let up = |g: &smi_nvlink::NvlinkGpu| g.links.iter().filter(|l| l.active == Some(true)).count();
    let most_up = s.gpus.iter().map(up).max().unwrap_or(0);
    for (i, g) in s.gpus.iter().enumerate() {
        let off = g.inactive();
        inactive_links += off.len();
        // A PCIe board (`… PCIe`, `H100 NVL`, a GeForce, RTX or Quadro card) reaches its peers
        // only through NVLink bridges, which need not span every link it has: its unbridged
        // links read `<inactive>` on a healthy card, so only a board with no link up is named.
        let bridged = g.name.as_deref().is_some_and(|n| {
            ["PCIe", " NVL", "GeForce", "RTX", "Quadro", "TITAN"]
                .iter()
                .any(|w| n.contains(w))
        });
        if g.all_inactive {
            // nvidia-smi's `all links are inActive` (see `smi_nvlink`): no link of the GPU is up.
            // A fault only on a board whose GPUs are wired to each other (an SXM/HGX part, not a
            // bridged PCIe card that may carry no bridge) and on a host with other GPUs (the
            // paste shows another, or the GPU's index is past 0): a lone GPU links to nothing.
            let named_board = g.name.is_some() && !bridged;
            let has_peers = s.gpus.len() > 1 || g.index.is_some_and(|i| i > 0);
            if named_board && has_peers {
                without.push(json!({
                    "index": g.index.unwrap_or(i as u32),
                    "why": "no NVLink up (nvidia-smi: all links are inActive)",
                }));
            }
            continue;
        }
        if off.is_empty() || (bridged && g.links.iter().any(|l| l.active == Some(true))) {
            continue;
        }
        let active = up(g);
        let index = g.index.unwrap_or(i as u32);
        // a bond of the same width on both GPUs of a pair (see the doc comment)
        if active > 0 && active == most_up && index < 2 && s.gpus.len() <= 2 {
            continue;
        }
        let list = off
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        without.push(json!({
            "index": index,
            "why": format!("NVLink {list} <inactive> ({active} of {} links active)", g.links.len()),
        }));
    }
    json!({
        "given": true,
        "source": "nvlink -s",
        "file": source,
        "gpu_count": s.gpus.len(),
        "inactive_links": inactive_links,
        "gpus_without_nvlink": without,
    })
}

/// What a live (or `-q`) NVML reading says about NVLink.
pub fn nvml_value(r: &NvmlReading) -> Value {
    let mut without = Vec::new();
    for g in &r.gpus {
        let why = match &g.nvlinks {
            Field::Ok(links) if links.iter().any(|l| l.active) => continue,
            Field::Ok(links) if links.is_empty() => "no active NVLink (not supported)".to_string(),
            Field::Ok(_) => "no active NVLink".to_string(),
            Field::NotSupported => "no active NVLink (not supported)".to_string(),
            other => format!(
                "no active NVLink (not readable: {})",
                other.reason().unwrap_or_default()
            ),
        };
        without.push(json!({"index": g.index, "why": why}));
    }
    json!({
        "given": true,
        "source": "nvml",
        "gpu_count": r.gpus.len(),
        "gpus_without_nvlink": without,
    })
}

impl Probe for GpuTopology {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "gpu.topology"
    }
    fn doc(&self) -> &'static str {
        "How the GPUs reach each other: a pasted nvidia-smi topo -m or nvlink -s (--evidence), else the NVML reading's NVLink state"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("given", "true when a `nvidia-smi topo -m` table was read"),
            (
                "source",
                "`topo -m` or `nvlink -s` (a paste) or `nvml` (the host's reading)",
            ),
            ("gpu_count", "GPUs in the topology"),
            ("inactive_links", "nvlink -s: links reported `<inactive>`"),
            ("pairs", "topo -m: GPU pairs read"),
            ("nvlink_pairs", "topo -m: pairs joined by NVLink (NV#)"),
            (
                "links",
                "topo -m: pairs per link class {NV#, PIX, PXB, PHB, NODE, SYS}",
            ),
            (
                "all_pairs_sys",
                "topo -m: more than one GPU and every pair crosses the CPU interconnect (SYS)",
            ),
            (
                "gpus_without_nvlink",
                "nvml: [{index, why}] GPUs without an active NVLink; nvlink -s: GPUs with a link `<inactive>` and fewer links up than another GPU, or past index 1 (a pair 0/1 bonded by the same links is not named)",
            ),
            ("file", "topo -m: the file read"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        if let Some((p, t)) = evidence_of(&ctx.inputs.evidence, &crate::evidence::smi_tables::Topo)
            .into_iter()
            .next()
        {
            return match smi_tables::parse_topo(&t) {
                Ok(topo) => ProbeOutcome::Value(topo_value(&topo, &p.display().to_string())),
                Err(e) => ProbeOutcome::Unknown(format!("{}: {e}", p.display())),
            };
        }
        if let Some((p, t)) = evidence_of(&ctx.inputs.evidence, &smi_nvlink::NvlinkStatusKind)
            .into_iter()
            .next()
        {
            let s = smi_nvlink::parse_nvlink_status(&t);
            return ProbeOutcome::Value(nvlink_status_value(&s, &p.display().to_string()));
        }
        match ctx.host.nvml() {
            Ok(r) => ProbeOutcome::Value(nvml_value(&r)),
            Err(e) => ProbeOutcome::Unknown(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(t: &str) -> Value {
        topo_value(&smi_tables::parse_topo(t).unwrap(), "x")
    }

    #[test]
    fn every_pair_across_the_sockets() {
        let v = topo(
            "\tGPU0\tGPU1\tGPU2\tCPU Affinity\nGPU0\t X \tSYS\tSYS\t0-15\nGPU1\tSYS\t X \tSYS\t16-31\nGPU2\tSYS\tSYS\t X \t32-47\n",
        );
        assert_eq!(v["all_pairs_sys"], json!(true));
        assert_eq!(v["pairs"], json!(3));
        assert_eq!(v["links"]["SYS"], json!(3));
    }

    #[test]
    fn a_closer_pair_or_nvlink_is_not_all_sys() {
        for t in [
            // PCIe cards paired on a switch, SYS otherwise
            "        GPU0    GPU1    GPU2    GPU3    CPU Affinity\nGPU0     X      PIX     SYS     SYS     0-47\nGPU1    PIX      X      SYS     SYS     0-47\nGPU2    SYS     SYS      X      PIX     48-95\nGPU3    SYS     SYS     PIX      X      48-95\n",
            // an NVL pair and an odd card on the other socket
            "        GPU0    GPU1    GPU2    CPU Affinity\nGPU0     X      NV12    SYS     0-15\nGPU1    NV12     X      SYS     0-15\nGPU2    SYS     SYS      X      16-31\n",
            // two consumer cards through the host bridge
            "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-63\nGPU1\tPHB\t X \t0-63\n",
        ] {
            assert_eq!(topo(t)["all_pairs_sys"], json!(false), "{t}");
        }
    }

    // tensorflow/tensorflow tensorflow/contrib/gdr/README.md (TF 1.x, an R3xx driver): two
    // PHB pairs on two sockets, SOC across them
    const GDR_README_SOC: &str = "\tGPU0\tGPU1\tGPU2\tGPU3\tmlx4_0\tCPU Affinity\nGPU0\t X \tPHB\tSOC\tSOC\tSOC\t0-5\nGPU1\tPHB\t X \tSOC\tSOC\tSOC\t0-5\nGPU2\tSOC\tSOC\t X \tPHB\tPHB\t6-11\nGPU3\tSOC\tSOC\tPHB\t X \tPHB\t6-11\nmlx4_0\tSOC\tSOC\tPHB\tPHB\t X\n\nLegend:\n\n  X   = Self\n  SOC  = Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe switches (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing a single PCIe switch\n  NV#  = Connection traversing a bonded set of # NVLinks\n";

    #[test]
    fn soc_is_the_older_name_of_sys() {
        let v = topo(GDR_README_SOC);
        assert_eq!(v["links"]["SYS"], json!(4));
        assert_eq!(v["links"]["PHB"], json!(2));
        assert!(v["links"].get("SOC").is_none());
        // the PHB pairs keep it from being a box of SYS pairs only
        assert_eq!(v["all_pairs_sys"], json!(false));
        // a two-GPU cut of the same matrix (GPU0 and GPU2, one per socket) is
        let two = "\tGPU0\tGPU2\tCPU Affinity\nGPU0\t X \tSOC\t0-5\nGPU2\tSOC\t X \t6-11\n";
        let v = topo(two);
        assert_eq!(v["all_pairs_sys"], json!(true));
        assert_eq!(v["links"]["SYS"], json!(1));
    }

    #[test]
    fn one_gpu_is_no_topology_finding() {
        let v = topo("\tGPU0\tCPU Affinity\nGPU0\t X \t0-15\n");
        assert_eq!(v["all_pairs_sys"], json!(false));
    }

    #[test]
    fn nvml_lists_gpus_without_an_active_link() {
        use crate::host::GpuReading;
        use crate::vocab::nvml::NvLink;
        let mut r = NvmlReading::default();
        let mut g = GpuReading {
            nvlinks: Field::Ok(vec![NvLink {
                link: 0,
                active: true,
            }]),
            ..Default::default()
        };
        r.gpus.push(g.clone());
        g.index = 1;
        g.nvlinks = Field::Ok(vec![NvLink {
            link: 0,
            active: false,
        }]);
        r.gpus.push(g.clone());
        g.index = 2;
        g.nvlinks = Field::NotSupported;
        r.gpus.push(g);
        let v = nvml_value(&r);
        assert_eq!(v["gpu_count"], json!(3));
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w[0]["index"], json!(1));
        assert_eq!(w[1]["why"], json!("no active NVLink (not supported)"));
    }

    #[test]
    fn nvlink_status_names_gpus_with_an_inactive_link() {
        // Azure/azhpc-diagnostics#73: a V100-SXM2 with links 3 and 5 <inactive>
        let t = "GPU 3: Tesla V100-SXM2-32GB (UUID: ...)\n         Link 0: 25.781 GB/s\n         Link 3: <inactive>\n         Link 5: <inactive>\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        assert_eq!(v["source"], json!("nvlink -s"));
        assert_eq!(v["inactive_links"], json!(2));
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0]["index"], json!(3));
        // leptonai/gpud's A100-SXM4 capture: every link up
        let t = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5269b708-678a-b1a8-60f0-c90406537486)\n         Link 0: 25 GB/s\n         Link 1: 25 GB/s\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        assert_eq!(v["gpus_without_nvlink"], json!([]));
        // a bridged PCIe board with unbridged links is not named; one with no link up is
        let t = "GPU 0: NVIDIA H100 NVL (UUID: x)\n Link 0: 26.562 GB/s\n Link 1: <inactive>\nGPU 1: NVIDIA H100 NVL (UUID: y)\n Link 0: <inactive>\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0]["index"], json!(1));
    }

    #[test]
    fn a_pair_bonded_by_some_of_its_links_is_not_named() {
        // RWTH Aachen's HPC documentation (help.itc.rwth-aachen.de, the CLAIX NVLink page):
        // `nvidia-smi nvlink --status -i 0` and `-i 1` of two V100-SXM2 bonded by two links each
        let t = "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-388a149d-072d-881b-469c-a3e3c7c4dc19)\nLink 0: 25.781 GB/s\nLink 1: <inactive>\nLink 2: 25.781 GB/s\nLink 3: <inactive>\nLink 4: <inactive>\nLink 5: <inactive>\nGPU 1: Tesla V100-SXM2-16GB (UUID: GPU-142d0ca2-b09d-9c28-5583-7b3b749571f9)\nLink 0: <inactive>\nLink 1: 25.781 GB/s\nLink 2: 25.781 GB/s\nLink 3: <inactive>\nLink 4: <inactive>\nLink 5: <inactive>\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        assert_eq!(v["inactive_links"], json!(8));
        assert_eq!(v["gpus_without_nvlink"], json!([]));
        // the same pair with one end down to a single link: a link that did not train
        let t = t.replacen("Link 2: 25.781 GB/s", "Link 2: <inactive>", 1);
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(&t), "x");
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0]["index"], json!(0));
        // Azure/azhpc-diagnostics' 'bad' sample: GPUs 0-2 with six links up, GPU 3 with four
        let six = "         Link 0: 25.781 GB/s\n         Link 1: 25.781 GB/s\n         Link 2: 25.781 GB/s\n         Link 3: 25.781 GB/s\n         Link 4: 25.781 GB/s\n         Link 5: 25.781 GB/s\n";
        let t = format!(
            "GPU 0: Tesla V100-SXM2-32GB (UUID: a)\n{six}GPU 1: Tesla V100-SXM2-32GB (UUID: b)\n{six}GPU 3: Tesla V100-SXM2-32GB (UUID: c)\n         Link 0: 25.781 GB/s\n         Link 1: 25.781 GB/s\n         Link 2: 25.781 GB/s\n         Link 3: <inactive>\n         Link 4: 25.781 GB/s\n         Link 5: <inactive>\n"
        );
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(&t), "x");
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0]["index"], json!(3));
        // two GPUs of a bigger host with the same partial bond: GPU 2 says the host has three
        let t = "GPU 1: Tesla V100-SXM2-16GB (UUID: a)\nLink 0: 25.781 GB/s\nLink 1: <inactive>\nGPU 2: Tesla V100-SXM2-16GB (UUID: b)\nLink 0: 25.781 GB/s\nLink 1: <inactive>\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0]["index"], json!(2));
    }

    #[test]
    fn nvlink_status_all_links_inactive() {
        // leptonai/gpud#1085: GPU 2 of a B200 system reports all its links inActive
        let t = "GPU 2: NVIDIA B200 (UUID: GPU-xxx)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        let w = v["gpus_without_nvlink"].as_array().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0]["index"], json!(2));
        // a lone GPU 0 (a single-GPU host, a GH200 superchip) links to nothing
        let t = "GPU 0: NVIDIA GH200 480GB (UUID: a)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        assert_eq!(v["gpus_without_nvlink"], json!([]));
        // a GeForce pair with no bridge fitted (both GPUs print the line): not a fault
        let t = "GPU 0: NVIDIA GeForce RTX 3090 Ti (UUID: a)\nNVML: Unable to retrieve NVLink information as all links are inActive\nGPU 1: NVIDIA GeForce RTX 3090 Ti (UUID: b)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
        let v = nvlink_status_value(&smi_nvlink::parse_nvlink_status(t), "x");
        assert_eq!(v["gpus_without_nvlink"], json!([]));
        // the line with no GPU named says nothing of the board
        let v = nvlink_status_value(
            &smi_nvlink::parse_nvlink_status(
                "NVML: Unable to retrieve NVLink information as all links are inActive\n",
            ),
            "x",
        );
        assert_eq!(v["gpus_without_nvlink"], json!([]));
    }
}
