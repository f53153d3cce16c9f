//! `docker info` output, the part a GPU thread asks for (whether the NVIDIA runtime is
//! registered), read from its producer: docker/cli `cli/command/system/info.go`,
//! `prettyPrintServerInfo` (read at 28f75608, 2026; the same lines since Docker 17.x):
//!
//! ```text
//! Server:
//!  Containers: 3                           fprintln(output, " Containers:", …)
//!   Running: 1
//!  Server Version: 27.1.1                  fprintlnNonEmpty(" Server Version:", …)
//!  Cgroup Driver: systemd
//!  Discovered Devices:                     (Docker 28+) one "  %s: %s" line per CDI device
//!   cdi: nvidia.com/gpu=0
//!  Runtimes: io.containerd.runc.v2 nvidia runc      the registered names joined by spaces
//!  Default Runtime: runc                   printed right after the Runtimes line
//! ```
//!
//! People paste it whole or through `grep -i runtime`, so the reader claims the `Runtimes:` line
//! only with the `Default Runtime:` line that follows it, or the `Containers:` line with its
//! `Running:` line. Whether a container gets a GPU depends on the run's `--gpus` / `--runtime`
//! and the toolkit's hook, which this text does not show, so no rule reads it; it is read so
//! that such a paste is known, with its runtimes.

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DockerInfo {
    /// The names of the ` Runtimes:` line.
    pub runtimes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_runtime: Option<String>,
    /// An `nvidia` runtime is registered (nvidia-ctk runtime configure, nvidia-docker2).
    pub nvidia_runtime: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_driver: Option<String>,
    /// `Discovered Devices:` entries (`cdi: nvidia.com/gpu=0`).
    pub discovered_devices: Vec<String>,
}

fn value<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    line.strip_prefix(' ')?
        .strip_prefix(label)?
        .strip_prefix(':')
        .map(str::trim)
}

/// The `Runtimes:` line with its `Default Runtime:` line, or `Containers:` with `Running:`.
pub fn looks_like_docker_info(text: &str) -> bool {
    let mut prev: Option<&str> = None;
    for line in super::content_lines(text).take(4000) {
        if let Some(p) = prev {
            if value(p, "Runtimes").is_some_and(|v| !v.is_empty())
                && value(line, "Default Runtime").is_some_and(|v| !v.is_empty())
            {
                return true;
            }
            if value(p, "Containers").is_some_and(|v| v.parse::<u64>().is_ok())
                && line
                    .strip_prefix("  Running:")
                    .is_some_and(|v| v.trim().parse::<u64>().is_ok())
            {
                return true;
            }
        }
        prev = Some(line.trim_end());
    }
    false
}

pub fn parse_docker_info(text: &str) -> DockerInfo {
    let mut out = DockerInfo::default();
    let mut in_devices = false;
    for line in super::content_lines(text) {
        let line = line.trim_end();
        if in_devices {
            if let Some(d) = line.strip_prefix("  ").filter(|d| !d.starts_with(' ')) {
                if out.discovered_devices.len() < super::MAX_ITEMS {
                    out.discovered_devices.push(super::clip(d, 120));
                }
                continue;
            }
            in_devices = false;
        }
        if let Some(v) = value(line, "Runtimes") {
            out.runtimes = v
                .split_whitespace()
                .take(super::MAX_ITEMS)
                .map(str::to_string)
                .collect();
        } else if let Some(v) = value(line, "Default Runtime") {
            out.default_runtime = Some(super::clip(v, 80));
        } else if let Some(v) = value(line, "Server Version") {
            out.server_version = Some(super::clip(v, 80));
        } else if let Some(v) = value(line, "Cgroup Driver") {
            out.cgroup_driver = Some(super::clip(v, 40));
        } else if value(line, "Discovered Devices") == Some("") {
            in_devices = true;
        }
    }
    out.nvidia_runtime = out.runtimes.iter().any(|r| r == "nvidia");
    out
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct DockerInfoKind;

impl super::EvidenceKind for DockerInfoKind {
    fn name(&self) -> &'static str {
        "docker-info"
    }
    fn doc(&self) -> &'static str {
        "`docker info` output (docker/cli), whole or through `grep -i runtime`: the registered runtimes (is `nvidia` one), the default runtime, the server version, cgroup driver and CDI devices"
    }
    fn example(&self) -> &'static str {
        "docker info"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("runtimes", "the names of the ` Runtimes:` line"),
            ("default_runtime", "` Default Runtime:`"),
            ("nvidia_runtime", "an `nvidia` runtime is registered"),
            ("server_version", "` Server Version:`"),
            ("cgroup_driver", "` Cgroup Driver:`"),
            (
                "discovered_devices",
                "the ` Discovered Devices:` entries (CDI)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_docker_info(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        if !looks_like_docker_info(text) {
            return Err(super::ParseError::NotThisKind(
                "no `docker info` lines (` Runtimes:` above ` Default Runtime:`, or ` Containers:` above `  Running:`) in the text",
            ));
        }
        super::to_value(&parse_docker_info(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_runtime_lines_without_nvidia() {
        // h114: NVIDIA/nvidia-container-toolkit#653, after a docker update
        let t = "docker info|grep -i runtime\n Runtimes: io.containerd.runc.v2 runc\n Default Runtime: runc\n";
        assert!(looks_like_docker_info(t));
        let d = parse_docker_info(t);
        assert_eq!(d.runtimes, vec!["io.containerd.runc.v2", "runc"]);
        assert_eq!(d.default_runtime.as_deref(), Some("runc"));
        assert!(!d.nvidia_runtime);
    }

    #[test]
    fn the_servers_lines_with_nvidia_and_cdi_devices() {
        // prettyPrintServerInfo's order (docker/cli at 28f75608)
        let t = "Server:\n Containers: 2\n  Running: 0\n  Paused: 0\n  Stopped: 2\n Images: 5\n Server Version: 28.0.1\n Cgroup Driver: systemd\n Discovered Devices:\n  cdi: nvidia.com/gpu=0\n  cdi: nvidia.com/gpu=all\n Swarm: inactive\n Runtimes: io.containerd.runc.v2 nvidia runc\n Default Runtime: nvidia\n";
        assert!(looks_like_docker_info(t));
        let d = parse_docker_info(t);
        assert!(d.nvidia_runtime);
        assert_eq!(d.default_runtime.as_deref(), Some("nvidia"));
        assert_eq!(d.server_version.as_deref(), Some("28.0.1"));
        assert_eq!(d.cgroup_driver.as_deref(), Some("systemd"));
        assert_eq!(
            d.discovered_devices,
            vec!["cdi: nvidia.com/gpu=0", "cdi: nvidia.com/gpu=all"]
        );
    }

    #[test]
    fn a_daemon_json_or_prose_is_not_claimed() {
        assert!(!looks_like_docker_info(
            "{\n    \"default-runtime\": \"nvidia\",\n    \"runtimes\": {\n        \"nvidia\": {\n            \"path\": \"/usr/bin/nvidia-container-runtime\"\n        }\n    }\n}\n"
        ));
        assert!(!looks_like_docker_info(
            "Runtimes: nvidia is missing\nthe default runtime is runc\n"
        ));
        // a lone Runtimes line, the pair cut
        assert!(!looks_like_docker_info(
            " Runtimes: io.containerd.runc.v2 runc\n"
        ));
    }
}
