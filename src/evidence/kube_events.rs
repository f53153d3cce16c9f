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

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KubeEvents {
    pub events: Vec<Event>,
    /// Volumes the kubelet evicted the pod for: an emptyDir used past its `sizeLimit`.
    pub emptydir_evictions: Vec<EmptyDirEviction>,
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

pub fn looks_like_kube_events(text: &str) -> bool {
    super::content_lines(text)
        .take(4000)
        .any(|l| row(l).is_some())
}

pub fn parse_kube_events(text: &str) -> KubeEvents {
    let events: Vec<Event> = super::content_lines(text)
        .filter_map(row)
        .take(super::MAX_ITEMS)
        .collect();
    let emptydir_evictions = events
        .iter()
        .filter(|e| e.reason == "Evicted")
        .filter_map(|e| emptydir_eviction(&e.message))
        .collect();
    KubeEvents {
        events,
        emptydir_evictions,
    }
}

/// The registry entry (see [`super::EvidenceKind`]).
pub struct KubeEventsKind;

impl super::EvidenceKind for KubeEventsKind {
    fn name(&self) -> &'static str {
        "kube-events"
    }
    fn doc(&self) -> &'static str {
        "the Events table of kubectl describe pod: type, reason, age, source and message per event, and the kubelet's evictions of a pod whose emptyDir outgrew its sizeLimit"
    }
    fn example(&self) -> &'static str {
        "kubectl describe pod train-0"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("events", "each event row: type, reason, age, from, message"),
            (
                "emptydir_evictions",
                "volume and limit of each `Usage of EmptyDir volume … exceeds the limit …` eviction",
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
        if v.events.is_empty() {
            return Err(super::ParseError::NotThisKind(
                "no `kubectl describe` event row (Normal|Warning, Reason, Age, From, Message)",
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

    #[test]
    fn prose_is_not_an_event() {
        assert!(!looks_like_kube_events(
            "Normal operation resumed after the Warning was cleared.\n"
        ));
        assert!(!looks_like_kube_events("Warning: the dataloader is slow\n"));
    }
}
