//! `ib.ports`: the state of each InfiniBand/RoCE port, from pasted `ibstat`, `ibstatus`,
//! `ibv_devinfo`, `ibdev2netdev`, `rdma link`, `mlxlink`, `lshca`, `iblinkinfo` or perftest output
//! (`--evidence`), else from the host's `/sys/class/infiniband` (the
//! files those tools read: `ports/N/state`, `phys_state`, `link_layer`, `rate`).
//!
//! A port is *down* when its logical state is not Active. A down port whose physical state is
//! `Disabled` (or not shown) beside ports that are Active may be one left unused on purpose (the
//! second port of a dual-port card, no cable): the text cannot tell, so it is listed apart
//! (`maybe_unused`) rather than judged. Ports whose RDMA state the text does not carry (an
//! IPoIB interface's carrier in `ibdev2netdev`) are `not_shown`.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::infiniband::{IbPort, Verdict, logical_state, physical_state};
use crate::evidence::{
    ibdev2netdev, iblinkinfo, ibstat, ibstatus, ibv_devinfo, lshca, mlxlink, perftest, rdma_link,
};
use crate::host::Host;
use crate::vocab::io::read_shared;
use serde_json::{Value, json};

pub struct IbPorts;

/// The ports each pasted file shows, with the file's name and the tool that printed it.
fn from_evidence(paths: &[std::path::PathBuf]) -> (Vec<IbPort>, Vec<String>) {
    let mut ports = Vec::new();
    let mut sources = Vec::new();
    for p in paths {
        let Ok(text) = read_shared(p) else { continue };
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut found = |tool: &str, more: Vec<IbPort>| {
            if !more.is_empty() {
                sources.push(format!("{name} ({tool})"));
                ports.extend(more);
            }
        };
        if ibstat::looks_like_ibstat(&text) {
            found("ibstat", ibstat::parse_ibstat(&text).ports());
        }
        if ibstatus::looks_like_ibstatus(&text) {
            found("ibstatus", ibstatus::parse_ibstatus(&text).ports());
        }
        if ibv_devinfo::looks_like_ibv_devinfo(&text) {
            found("ibv_devinfo", ibv_devinfo::parse_ibv_devinfo(&text).ports());
        }
        if ibdev2netdev::looks_like_ibdev2netdev(&text) {
            found(
                "ibdev2netdev",
                ibdev2netdev::parse_ibdev2netdev(&text).ports(),
            );
        }
        if rdma_link::looks_like_rdma_link(&text) {
            found("rdma link", rdma_link::parse_rdma_link(&text).ports());
        }
        if mlxlink::looks_like_mlxlink(&text) {
            found("mlxlink", mlxlink::parse_mlxlink(&text).ports());
        }
        if lshca::looks_like_lshca(&text) {
            found("lshca", lshca::parse_lshca(&text).ports());
        }
        if iblinkinfo::looks_like_iblinkinfo(&text) {
            found("iblinkinfo", iblinkinfo::parse_iblinkinfo(&text).ports());
        }
        let unquoted = crate::evidence::unquote(&text);
        if perftest::looks_like_perftest(&unquoted) {
            found("perftest", perftest::parse_perftest(&unquoted).ports());
        }
    }
    (ports, sources)
}

/// The ports the host's sysfs shows (`/sys/class/infiniband/DEV/ports/N/…`).
fn from_sysfs(host: &dyn Host) -> Vec<IbPort> {
    let read = |p: &str| -> Option<String> {
        host.read_file(p)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
    };
    let mut out = Vec::new();
    let Ok(devs) = host.read_dir("/sys/class/infiniband") else {
        return out;
    };
    for dev in devs.iter().take(crate::vocab::MAX_ITEMS) {
        let base = format!("/sys/class/infiniband/{dev}/ports");
        let Ok(ports) = host.read_dir(&base) else {
            continue;
        };
        for n in ports.iter().take(crate::vocab::MAX_ITEMS) {
            let Ok(port) = n.parse::<u32>() else { continue };
            // `4: ACTIVE`, `5: LinkUp`: the kernel's words after the number
            let word = |f: &str| {
                read(&format!("{base}/{n}/{f}")).map(|s| {
                    s.split_once(':')
                        .map_or(s.clone(), |(_, w)| w.trim().to_string())
                })
            };
            let Some(state) = word("state") else { continue };
            out.push(IbPort {
                device: dev.clone(),
                port,
                state: logical_state(&state).map(str::to_string).or(Some(state)),
                physical_state: word("phys_state")
                    .map(|p| physical_state(&p).map(str::to_string).unwrap_or(p)),
                link_layer: read(&format!("{base}/{n}/link_layer")),
                // `200 Gb/sec (4X HDR)`
                rate_gbps: read(&format!("{base}/{n}/rate"))
                    .and_then(|r| r.split_whitespace().next()?.parse().ok()),
                netdev: None,
                netdev_state: None,
                sm_lid: read(&format!("{base}/{n}/sm_lid"))
                    .and_then(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok()),
                source: "sysfs",
            });
        }
    }
    out
}

/// One entry per device and port: a reading with a logical state wins over a carrier.
fn merge(ports: Vec<IbPort>) -> Vec<IbPort> {
    let mut out: Vec<IbPort> = Vec::new();
    for p in ports {
        match out
            .iter_mut()
            .find(|q| q.device == p.device && q.port == p.port && !p.device.is_empty())
        {
            Some(q) => {
                if q.state.is_none() && p.state.is_some() {
                    let (netdev, carrier) = (q.netdev.take(), q.netdev_state.take());
                    *q = p;
                    q.netdev = q.netdev.take().or(netdev);
                    q.netdev_state = q.netdev_state.take().or(carrier);
                } else {
                    q.netdev = q.netdev.take().or(p.netdev);
                    q.netdev_state = q.netdev_state.take().or(p.netdev_state);
                    q.link_layer = q.link_layer.take().or(p.link_layer);
                }
            }
            None => out.push(p),
        }
        if out.len() >= crate::vocab::MAX_ITEMS {
            break;
        }
    }
    out
}

/// How the tool put the port's state, for the message: `State Down, Physical state Polling`.
fn how(p: &IbPort) -> String {
    if p.is_no_device() {
        return format!("{}: /sys/class/infiniband holds no device", p.source);
    }
    match (&p.state, &p.physical_state) {
        (Some(s), Some(ph)) => format!("state {s}, physical state {ph}"),
        (Some(s), None) => format!("state {s}"),
        _ => format!(
            "{} {}",
            p.netdev.as_deref().unwrap_or("interface"),
            p.netdev_state.as_deref().unwrap_or("?")
        ),
    }
}

pub fn judge(ports: &[IbPort], sources: &[String]) -> Value {
    let active = ports.iter().filter(|p| p.verdict() == Verdict::Up).count();
    let mut down = Vec::new();
    let mut maybe_unused = Vec::new();
    let mut not_shown = Vec::new();
    for p in ports {
        let entry = || {
            json!({
                "name": p.name(), "device": p.device, "port": p.port, "how": how(p),
                "state": p.state, "physical_state": p.physical_state, "link_layer": p.link_layer,
                "netdev": p.netdev, "cause": p.cause(), "source": p.source,
            })
        };
        match p.verdict() {
            Verdict::Up => {}
            Verdict::NotShown => not_shown.push(p.name()),
            Verdict::Down => {
                let quiet = matches!(p.physical_state.as_deref(), None | Some("Disabled"));
                if active > 0 && quiet {
                    maybe_unused.push(entry());
                } else {
                    down.push(entry());
                }
            }
        }
    }
    let mut layers: Vec<&str> = ports
        .iter()
        .filter_map(|p| p.link_layer.as_deref())
        .collect();
    layers.sort_unstable();
    layers.dedup();
    json!({
        "sources": sources,
        "ports": ports.iter().map(|p| json!({
            "name": p.name(), "device": p.device, "port": p.port, "state": p.state,
            "physical_state": p.physical_state, "link_layer": p.link_layer, "rate_gbps": p.rate_gbps,
            "netdev": p.netdev, "netdev_state": p.netdev_state, "sm_lid": p.sm_lid,
            "verdict": p.verdict(), "source": p.source,
        })).collect::<Vec<_>>(),
        "judged": ports.len() - not_shown.len(),
        "active": active,
        "down": down,
        "maybe_unused": maybe_unused,
        "not_shown": not_shown,
        "link_layers": layers,
    })
}

impl Probe for IbPorts {
    type Params = super::NoParams;
    fn name(&self) -> &'static str {
        "ib.ports"
    }
    fn doc(&self) -> &'static str {
        "InfiniBand/RoCE port states from pasted ibstat, ibstatus, ibv_devinfo, ibdev2netdev, rdma link, mlxlink, lshca, iblinkinfo or perftest output, else the host's /sys/class/infiniband"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "sources",
                "the files (and the tool each came from), or sysfs",
            ),
            (
                "ports",
                "every port: name, device, port, state, physical_state, link_layer, rate_gbps, netdev, netdev_state, sm_lid, verdict (up/down/not-shown), source",
            ),
            ("judged", "ports whose RDMA state the text carries"),
            ("active", "ports that are Active"),
            (
                "down",
                "ports not Active: name, how (the state as printed), link_layer, cause (the usual cause), source",
            ),
            (
                "maybe_unused",
                "down ports with physical state Disabled (or not shown) beside Active ones: perhaps unused on purpose, not judged",
            ),
            (
                "not_shown",
                "ports whose RDMA state the text does not carry (an IPoIB interface's carrier in ibdev2netdev)",
            ),
            ("link_layers", "InfiniBand and/or Ethernet (RoCE)"),
        ]
    }
    fn run(&self, _params: &super::NoParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let (ports, sources) = from_evidence(&ctx.inputs.evidence);
        if !ports.is_empty() {
            return ProbeOutcome::Value(judge(&merge(ports), &sources));
        }
        let ports = from_sysfs(ctx.host);
        if ports.is_empty() {
            return ProbeOutcome::NotApplicable(if ctx.host.is_live() {
                "no RDMA port readable under /sys/class/infiniband".to_string()
            } else {
                format!(
                    "RDMA ports: {} (give `ibstat` or `ibv_devinfo` output)",
                    crate::host::NOT_IN_EVIDENCE
                )
            });
        }
        ProbeOutcome::Value(judge(&ports, &["sysfs".to_string()]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_path(rel: &str) -> std::path::PathBuf {
        crate::evidence::testutil::fixture_dir().join(rel)
    }

    #[test]
    fn a_disabled_port_beside_active_ones_is_not_judged() {
        let (p, s) = from_evidence(&[fixture_path("infiniband/ibstat_roce_one_disabled.txt")]);
        let v = judge(&merge(p), &s);
        assert_eq!(v["active"], 2);
        assert_eq!(v["down"].as_array().unwrap().len(), 0);
        assert_eq!(v["maybe_unused"][0]["name"], "mlx5_10 port 1");
        assert_eq!(v["sources"][0], "ibstat_roce_one_disabled.txt (ibstat)");
    }

    #[test]
    fn a_polling_port_is_down_and_named() {
        let (p, s) = from_evidence(&[fixture_path("infiniband/ibstat_polling.txt")]);
        let v = judge(&merge(p), &s);
        assert_eq!(v["down"][0]["name"], "mlx5_10 port 1");
        assert_eq!(v["down"][0]["how"], "state Down, physical state Polling");
        assert_eq!(v["link_layers"][0], "InfiniBand");
    }

    #[test]
    fn ibstat_and_ibdev2netdev_of_one_port_merge() {
        let a = ibstat::parse_ibstat(
            "CA 'mlx5_2'\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: Ethernet\n",
        )
        .ports();
        let b = ibdev2netdev::parse_ibdev2netdev("mlx5_2 port 1 ==> enp27s0f1np1 (Down)\n").ports();
        let m = merge(b.into_iter().chain(a).collect());
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].source, "ibstat");
        assert_eq!(m[0].netdev.as_deref(), Some("enp27s0f1np1"));
        assert!(m[0].cause().contains("enp27s0f1np1"), "{}", m[0].cause());
    }

    #[test]
    fn an_empty_rdma_class_is_one_down_entry() {
        // clustervision/trinity#219: ibstatus over an empty /sys/class/infiniband
        let ports = ibstatus::parse_ibstatus(
            "[root@node045 ~]# ibstatus\nFatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)\n",
        )
        .ports();
        let v = judge(&merge(ports), &["t.txt (ibstatus)".to_string()]);
        assert_eq!(v["judged"], 1);
        assert_eq!(v["active"], 0);
        assert_eq!(v["down"][0]["name"], "no RDMA device");
        assert_eq!(
            v["down"][0]["how"],
            "ibstatus: /sys/class/infiniband holds no device"
        );
        // no class directory at all: nothing to judge
        let ports = ibstatus::parse_ibstatus("Fatal error:  No devices\n").ports();
        assert!(ports.is_empty());
    }

    #[test]
    fn a_pod_vf_without_carrier_is_down() {
        // k8snetworkplumbingwg/sriov-network-operator#382, ibdev2netdev inside the pod
        let ports = ibdev2netdev::parse_ibdev2netdev(
            "[root@sample-pod-4-5bddf8c4b4-hf49j /]# ibdev2netdev\nmlx5_3 port 1 ==> net1 (Down)\n",
        )
        .ports();
        let v = judge(&merge(ports), &[]);
        assert_eq!(v["judged"], 1);
        assert_eq!(v["down"][0]["name"], "mlx5_3 port 1");
        assert_eq!(v["down"][0]["how"], "net1 Down");
        // the host's IPoIB interfaces Down (Imbue's healthy pure-IB node) stay not shown
        let ports = ibdev2netdev::parse_ibdev2netdev(
            "mlx5_0 port 1 ==> ibp26s0 (Down)\nmlx5_1 port 1 ==> enp27s0f0np0 (Up)\n",
        )
        .ports();
        let v = judge(&merge(ports), &[]);
        assert_eq!(v["down"].as_array().unwrap().len(), 0);
        assert_eq!(v["not_shown"][0], "mlx5_0 port 1");
    }

    #[test]
    fn the_hosts_sysfs() {
        use crate::host::recorded::SnapshotHost;
        let mut h = SnapshotHost::empty();
        h.set_dir("/sys/class/infiniband", &["mlx5_0"])
            .set_dir("/sys/class/infiniband/mlx5_0/ports", &["1"])
            .set_file("/sys/class/infiniband/mlx5_0/ports/1/state", "2: INIT\n")
            .set_file(
                "/sys/class/infiniband/mlx5_0/ports/1/phys_state",
                "5: LinkUp\n",
            )
            .set_file(
                "/sys/class/infiniband/mlx5_0/ports/1/link_layer",
                "InfiniBand\n",
            )
            .set_file(
                "/sys/class/infiniband/mlx5_0/ports/1/rate",
                "200 Gb/sec (4X HDR)\n",
            );
        let p = from_sysfs(&h);
        assert_eq!(p[0].state.as_deref(), Some("Initializing"));
        assert_eq!(p[0].physical_state.as_deref(), Some("LinkUp"));
        assert_eq!(p[0].rate_gbps, Some(200.0));
        assert!(p[0].cause().contains("subnet manager"));
    }
}
