//! The events `kubectl describe pod` prints under `Events:`, read from the producers' own code:
//!
//! - kubectl (kubernetes/kubectl `pkg/describe/describe.go`, `DescribeEvents`): the header
//!   `Type\tReason\tAge\tFrom\tMessage` over `----\t------\t----\t----\t-------`, then one row per
//!   event, `  %v\t%v\t%s\t%v\t%v` (type, reason, age such as `9m38s` or `3m (x4 over 10m)`,
//!   source, message), aligned by a tabwriter into columns at least two spaces apart; the
//!   source is `component, host` in kubectl before 1.14 (`kubelet, x_machine_x`) and the
//!   component alone after it. The event type is `Normal` or `Warning` (k8s.io/api
//!   `core/v1/types.go`, `EventTypeNormal`, `EventTypeWarning`).
//! - the kubelet's eviction manager (kubernetes `pkg/kubelet/eviction/helpers.go`,
//!   `emptyDirMessageFmt = "Usage of EmptyDir volume %q exceeds the limit %q. "`, sent by
//!   `eviction_manager.go`'s `emptyDirLimitEviction` with the `Evicted` reason): a pod whose
//!   emptyDir volume holds more than its `sizeLimit` is evicted. For a memory-backed emptyDir
//!   mounted at `/dev/shm` that is shared memory outgrowing the size the spec gave it
//!   (kubernetes#28272). The event names the volume, not where it is mounted nor its medium: a
//!   probe says what the events cannot show.
//! - the same message outside the Events table: the eviction manager's `evictPod` also writes it
//!   as the pod's status (`status.Reason = Reason` (`Evicted`), `status.Message = evictMsg`),
//!   which `kubectl describe pod` prints as the pod's `Reason:` and `Message:` lines
//!   (`describePod`: `w.Write(LEVEL_0, "Message:\t%s\n", pod.Status.Message)`) and `kubectl get
//!   pod -o yaml` as `status.message`, and which platforms built on Kubernetes quote in their
//!   own reports (OpenPAI's exit report, an issue's title: PaddleSeg#3640). The format string is
//!   the kubelet's own and fixed, so the line is read wherever it stands.
//! - where `kubectl describe pod` shows the volume mounted: each container's `Mounts:` list,
//!   one line per VolumeMount, `w.Write(LEVEL_3, "%s from %s (%s)\n", mount.MountPath,
//!   mount.Name, flags)` (`describeContainerVolumes`; flags `ro` or `rw`, then `path="…"` for a
//!   subPath). A line `/dev/shm from dshm (rw)` ties the evicted volume to `/dev/shm`.
//! - OpenPAI's job report, where the platform wrote the pod spec itself (microsoft/pai, read
//!   at f1e6bc4d7, 2019-08, "Set shared memory size for k8s pod jobs", and a95d9420, 2024-06):
//!   `src/rest-server/src/models/v2/job/k8s.js` `generateTaskRole` gives every task's pod the
//!   volume `{name: 'dshm', emptyDir: {medium: 'Memory', sizeLimit: `${shmMB}Mi`}}` (shmMB from
//!   the job's `extraContainerOptions.shmMB`, 512 by default) mounted at `/dev/shm` in the
//!   container `app`, and no other volume of that name; the web portal's exit diagnostics
//!   (`src/webportal/src/app/job/job-view/fabric/job-detail.jsx` `showExitDiagnostics`, from
//!   bd08823c0, 2019-05) print `[Exit Trigger Info]`, then `ExitTriggerMessage: …`, and the
//!   exit spec under `[Exit Spec]`. In a text holding that report, `dshm` is the pod's
//!   memory-backed /dev/shm by the platform's own spec (PaddleSeg#3640).

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KubeEvents {
    pub events: Vec<Event>,
    /// Volumes the kubelet evicted the pod for: an emptyDir used past its `sizeLimit`.
    pub emptydir_evictions: Vec<EmptyDirEviction>,
    /// Volumes the text shows mounted at `/dev/shm`: `kubectl describe pod`'s `Mounts:` lines
    /// (`/dev/shm from dshm (rw)`), and OpenPAI's `dshm` where the text holds OpenPAI's job
    /// report (see `openpai_report`).
    pub shm_volumes: Vec<String>,
    /// The text holds OpenPAI's exit diagnostics (`[Exit Trigger Info]` and
    /// `ExitTriggerMessage:`): the pod is OpenPAI's, whose spec mounts the memory emptyDir
    /// `dshm` at /dev/shm (module doc).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub openpai_report: bool,
}

/// OpenPAI's web portal's exit diagnostics: its `[Exit Trigger Info]` header and the
/// `ExitTriggerMessage: ` line `showExitDiagnostics` prints under it.
pub fn openpai_report(text: &str) -> bool {
    let mut header = false;
    for l in super::content_lines(text).take(100_000) {
        let l = l.trim();
        if l == "[Exit Trigger Info]" {
            header = true;
        } else if header && l.starts_with("ExitTriggerMessage: ") {
            return true;
        }
    }
    false
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Event {
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub kind: String,
    pub reason: String,
    pub age: String,
    pub from: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EmptyDirEviction {
    pub volume: String,
    /// The `sizeLimit` as the kubelet prints a quantity (`1Gi`).
    pub limit: String,
}

/// One event row: the columns a tabwriter set at least two spaces apart.
fn row(l: &str) -> Option<Event> {
    let cols: Vec<&str> = l
        .trim()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let [kind, reason, age, from, message @ ..] = cols.as_slice() else {
        return None;
    };
    if !matches!(*kind, "Normal" | "Warning") || message.is_empty() {
        return None;
    }
    let camel = reason.len() >= 2
        && reason.starts_with(|c: char| c.is_ascii_uppercase())
        && reason.chars().all(|c| c.is_ascii_alphanumeric());
    // `9m38s`, `12m`, `2d3h`, `<unknown>`, `3m (x4 over 10m)`
    let first = age.split_whitespace().next().unwrap_or("");
    let aged = *age == "<unknown>"
        || (first.starts_with(|c: char| c.is_ascii_digit())
            && first
                .chars()
                .all(|c| c.is_ascii_digit() || "smhdy".contains(c)));
    (camel && aged && !from.is_empty()).then(|| Event {
        kind: kind.to_string(),
        reason: reason.to_string(),
        age: age.to_string(),
        from: from.to_string(),
        message: super::clip(&message.join("  "), super::MAX_TEXT),
    })
}

/// `Usage of EmptyDir volume "dshm" exceeds the limit "1Gi".`: (volume, limit).
fn emptydir_eviction(message: &str) -> Option<EmptyDirEviction> {
    let rest = message.split_once("Usage of EmptyDir volume \"")?.1;
    let (volume, rest) = rest.split_once('"')?;
    let limit = rest
        .trim_start()
        .strip_prefix("exceeds the limit \"")?
        .split_once('"')?
        .0;
    Some(EmptyDirEviction {
        volume: volume.to_string(),
        limit: limit.to_string(),
    })
}

/// A `Mounts:` line of `kubectl describe pod`: `/dev/shm from dshm (rw)` gives
/// (`/dev/shm`, `dshm`). The flags in parentheses start with `ro` or `rw`.
fn describe_mount(l: &str) -> Option<(&str, &str)> {
    let (path, rest) = l.trim().split_once(" from ")?;
    let (name, flags) = rest.split_once(" (")?;
    let flags = flags.strip_suffix(')')?;
    let ok = path.starts_with('/')
        && !path.contains(char::is_whitespace)
        && !name.is_empty()
        && !name.contains(char::is_whitespace)
        && (flags.starts_with("ro") || flags.starts_with("rw"));
    ok.then_some((path, name))
}

pub fn looks_like_kube_events(text: &str) -> bool {
    super::content_lines(text)
        .take(4000)
        .any(|l| row(l).is_some() || emptydir_eviction(l).is_some())
}

pub fn parse_kube_events(text: &str) -> KubeEvents {
    let events: Vec<Event> = super::content_lines(text)
        .filter_map(row)
        .take(super::MAX_ITEMS)
        .collect();
    // the kubelet's message wherever it stands: an `Evicted` event's, the pod's status
    // (`Message:` of describe, `message:` of -o yaml) or a report quoting it (module doc)
    let mut emptydir_evictions: Vec<EmptyDirEviction> = Vec::new();
    for e in super::content_lines(text).filter_map(emptydir_eviction) {
        if emptydir_evictions.len() >= super::MAX_ITEMS {
            break;
        }
        if !emptydir_evictions.contains(&e) {
            emptydir_evictions.push(e);
        }
    }
    let mut shm_volumes: Vec<String> = Vec::new();
    for (path, name) in super::content_lines(text).filter_map(describe_mount) {
        if path.trim_end_matches('/') == "/dev/shm"
            && !shm_volumes.iter().any(|v| v == name)
            && shm_volumes.len() < super::MAX_ITEMS
        {
            shm_volumes.push(name.to_string());
        }
    }
    // OpenPAI's pods mount their `dshm` at /dev/shm (module doc)
    let openpai = openpai_report(text);
    if openpai && !shm_volumes.iter().any(|v| v == "dshm") {
        shm_volumes.push("dshm".to_string());
    }
    KubeEvents {
        events,
        emptydir_evictions,
        shm_volumes,
        openpai_report: openpai,
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct KubeEventsKind;

impl super::EvidenceKind for KubeEventsKind {
    fn name(&self) -> &'static str {
        "kube-events"
    }
    fn doc(&self) -> &'static str {
        "the Events table of kubectl describe pod: type, reason, age, source and message per event, and the kubelet's evictions of a pod whose emptyDir outgrew its sizeLimit (in an event, the pod's status or a report quoting it), with the volumes describe shows mounted at /dev/shm"
    }
    fn example(&self) -> &'static str {
        "kubectl describe pod train-0"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("events", "each event row: type, reason, age, from, message"),
            (
                "emptydir_evictions",
                "volume and limit of each `Usage of EmptyDir volume … exceeds the limit …` eviction, in an event, the pod's status or a report quoting it",
            ),
            (
                "shm_volumes",
                "volumes the text shows at /dev/shm: describe's `Mounts:` lines (`/dev/shm from dshm (rw)`), or OpenPAI's `dshm` beside OpenPAI's job report",
            ),
            (
                "openpai_report",
                "the text holds OpenPAI's exit diagnostics (`[Exit Trigger Info]`, `ExitTriggerMessage:`), whose pods mount the memory emptyDir `dshm` at /dev/shm",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["shm"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_kube_events(s.text)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        let v = parse_kube_events(text);
        if v.events.is_empty() && v.emptydir_evictions.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `kubectl describe` event row (Normal|Warning, Reason, Age, From, Message) nor the kubelet's emptyDir eviction message",
            ));
        }
        super::to_value(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A problem: the events a commenter pasted in kubernetes#28272 (2019-11), a pod evicted
    /// because its memory emptyDir `dshm` outgrew its 1Gi limit
    /// (https://github.com/kubernetes/kubernetes/issues/28272).
    const EVICTED: &str = "  Normal   Started  12m    kubelet, x_machine_x  Started container x_pod_x\n  Warning  Evicted  9m38s  kubelet, x_machine_x  Usage of EmptyDir volume \"dshm\" exceeds the limit \"1Gi\".\n  Normal   Killing  9m38s  kubelet, x_machine_x  Stopping container x_pod_x\n";

    #[test]
    fn event_rows_and_an_emptydir_eviction() {
        let e = parse_kube_events(EVICTED);
        assert_eq!(e.events.len(), 3);
        let ev = &e.events[1];
        assert_eq!(
            (
                ev.kind.as_str(),
                ev.reason.as_str(),
                ev.age.as_str(),
                ev.from.as_str()
            ),
            ("Warning", "Evicted", "9m38s", "kubelet, x_machine_x")
        );
        assert_eq!(
            e.emptydir_evictions,
            vec![EmptyDirEviction {
                volume: "dshm".into(),
                limit: "1Gi".into()
            }]
        );
    }

    /// Without an eviction: the Events table quoted in redhat-developer/intellij-kubernetes#778
    /// (kubectl 1.14+ form, the source without a host, a repeated event's age)
    /// (https://github.com/redhat-developer/intellij-kubernetes/issues/778).
    #[test]
    fn a_table_without_an_eviction() {
        let t = "Events:\n  Type     Reason            Age                 From               Message\n  ----     ------            ----                ----               -------\n  Warning  FailedScheduling  9h (x108 over 18h)  default-scheduler  0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..\n  Warning  FailedScheduling  35s                 default-scheduler  0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..\n";
        let e = parse_kube_events(t);
        assert_eq!(e.events.len(), 2);
        assert_eq!(e.events[0].age, "9h (x108 over 18h)");
        assert_eq!(e.events[0].from, "default-scheduler");
        assert_eq!(e.events[0].reason, "FailedScheduling");
        assert!(e.emptydir_evictions.is_empty());
    }

    /// The eviction message outside the Events table. A problem: the title of
    /// PaddlePaddle/PaddleSeg#3640 (2024-02), an OpenPAI pod evicted while training with five
    /// DataLoader workers (https://github.com/PaddlePaddle/PaddleSeg/issues/3640); and the
    /// pod's `Message:` line of `kubectl describe` as helm/charts#24458 quotes it
    /// (https://github.com/helm/charts/issues/24458).
    #[test]
    fn the_eviction_message_in_a_report_or_the_pods_status() {
        let t = "Usage of EmptyDir volume \"dshm\" exceeds the limit \"512Mi\".\n\nexport CUDA_VISIBLE_DEVICES=0\n";
        assert!(looks_like_kube_events(t));
        let e = parse_kube_events(t);
        assert!(e.events.is_empty());
        assert_eq!(
            e.emptydir_evictions,
            vec![EmptyDirEviction {
                volume: "dshm".into(),
                limit: "512Mi".into()
            }]
        );
        assert!(e.shm_volumes.is_empty());
        assert!(crate::evidence::EvidenceKind::parse(&KubeEventsKind, t).is_ok());
        let t =
            " Message:             Usage of EmptyDir volume \"dshm\" exceeds the limit \"1Gi\".\n";
        assert_eq!(parse_kube_events(t).emptydir_evictions[0].limit, "1Gi");
        // the same eviction as an event row and in the status is one eviction
        let both = format!(
            "{EVICTED} Message:             Usage of EmptyDir volume \"dshm\" exceeds the limit \"1Gi\".\n"
        );
        assert_eq!(parse_kube_events(&both).emptydir_evictions.len(), 1);
    }

    /// describe's `Mounts:` lines (`describeContainerVolumes`). Healthy: the airflow-postgresql
    /// pod's mounts and a Bitnami PostgreSQL pod's subPath mounts as kubectl prints them
    /// (bitnami/charts issues quoting `kubectl describe pod`); the problem side: kubernetes#28272's
    /// eviction events beside such a `Mounts:` list, which ties `dshm` to /dev/shm.
    #[test]
    fn describes_mount_lines_tie_a_volume_to_dev_shm() {
        assert_eq!(
            describe_mount("      /dev/shm from dshm (rw)"),
            Some(("/dev/shm", "dshm"))
        );
        assert_eq!(
            describe_mount(
                "      /opt/bitnami/postgresql/conf from empty-dir (rw,path=\"app-conf-dir\")"
            ),
            Some(("/opt/bitnami/postgresql/conf", "empty-dir"))
        );
        assert_eq!(
            describe_mount("      /db2u/license/ from db2u-lic (ro)"),
            Some(("/db2u/license/", "db2u-lic"))
        );
        assert_eq!(describe_mount("I moved from Paris (rw)"), None);
        assert_eq!(describe_mount("/data from a friend (who lent it)"), None);
        let mounts = "    Mounts:\n      /bitnami/postgresql from data (rw)\n      /dev/shm from dshm (rw)\n      /var/run/secrets/kubernetes.io/serviceaccount from default-token-l6m2s (ro)\n";
        let healthy = parse_kube_events(mounts);
        assert_eq!(healthy.shm_volumes, vec!["dshm".to_string()]);
        assert!(healthy.emptydir_evictions.is_empty());
        let evicted = parse_kube_events(&format!("{mounts}Events:\n{EVICTED}"));
        assert_eq!(evicted.shm_volumes, vec!["dshm".to_string()]);
        assert_eq!(evicted.emptydir_evictions[0].volume, "dshm");
    }

    /// OpenPAI's own report ties `dshm` to /dev/shm: PaddleSeg#3640's title (the kubelet's
    /// message) above the portal's exit diagnostics as the issue holds them. Neighbours: the
    /// same eviction alone, the report with another volume evicted, and the report's words in
    /// prose without its header.
    #[test]
    fn openpais_report_ties_dshm_to_dev_shm() {
        let report = "[Exit Trigger Info]\n\nExitTriggerMessage: FailedTaskCount 1 has reached MinFailedTaskCount 1 in the TaskRole\nExitTriggerTaskRole: taskrole\nExitTriggerTaskIndex: 0\n\n--------------------------------------------------------------------------------\n\n[Exit Spec]\n\ncode: -1000\nphrase: PodEvicted\nissuer: PAI_K8S\n";
        let evicted = "Usage of EmptyDir volume \"dshm\" exceeds the limit \"512Mi\".\n\n";
        let e = parse_kube_events(&format!("{evicted}{report}"));
        assert!(e.openpai_report);
        assert_eq!(e.shm_volumes, vec!["dshm".to_string()]);
        assert_eq!(e.emptydir_evictions[0].volume, "dshm");
        assert!(!parse_kube_events(evicted).openpai_report);
        assert!(parse_kube_events(evicted).shm_volumes.is_empty());
        let other =
            format!("Usage of EmptyDir volume \"cache\" exceeds the limit \"1Gi\".\n{report}");
        let o = parse_kube_events(&other);
        assert_eq!(o.shm_volumes, vec!["dshm".to_string()]);
        assert_eq!(o.emptydir_evictions[0].volume, "cache");
        let prose = format!("{evicted}The ExitTriggerMessage: said nothing useful.\n");
        assert!(!parse_kube_events(&prose).openpai_report);
    }

    #[test]
    fn prose_is_not_an_event() {
        assert!(!looks_like_kube_events(
            "Normal operation resumed after the Warning was cleared.\n"
        ));
        assert!(!looks_like_kube_events("Warning: the dataloader is slow\n"));
    }
}
