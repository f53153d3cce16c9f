//! Run each distinct probe once, concurrently, each under its own deadline. A probe that
//! panics, errors or runs past its deadline yields `unknown` with the reason, never a value.
//! Each probe sees the host through a [`TimedHost`], so the run knows each probe's wall time
//! and what it waited on ([`super::timing`]).

use super::timing::{SharedNvml, TimedHost};
use crate::host::Host;
use crate::probes::{self, Inputs, ProbeCtx, ProbeOutcome};
use crate::vocab::timing::{ProbeTiming, ms};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// A probe instance: its kind plus rendered parameters. Two rules asking for the same
/// instance share one run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeKey(pub String);

impl ProbeKey {
    pub fn new(kind: &str, params: &Map<String, Value>) -> Self {
        ProbeKey(format!("{kind} {}", Value::Object(params.clone())))
    }
}

#[derive(Clone)]
pub struct Request {
    pub kind: String,
    pub params: Map<String, Value>,
}

pub struct Observer {
    pub deadline: Duration,
}

/// What a probe thread sends back: the outcome, when it started and finished (from the start
/// of observe), and what it waited on.
type Answer = (
    ProbeOutcome,
    Duration,
    Duration,
    Vec<crate::vocab::timing::Wait>,
);

impl Observer {
    pub fn run(
        &self,
        host: Arc<dyn Host>,
        inputs: Arc<Inputs>,
        sample: Duration,
        requests: BTreeMap<ProbeKey, Request>,
        mut on_done: impl FnMut(&ProbeKey),
    ) -> (BTreeMap<ProbeKey, ProbeOutcome>, Vec<ProbeTiming>) {
        let started = Instant::now();
        let mut pending = Vec::new();
        let nvml: Arc<SharedNvml> = Arc::default();
        for (key, req) in requests {
            let Some(kind) = probes::find(&req.kind) else {
                continue;
            };
            let (tx, rx) = mpsc::channel::<Answer>();
            let host = host.clone();
            let inputs = inputs.clone();
            let nvml = nvml.clone();
            let deadline = self.deadline
                + if kind.sampled() {
                    sample
                } else {
                    Duration::ZERO
                };
            let params = req.params;
            let spawned = std::thread::Builder::new()
                .name(format!("probe {}", req.kind))
                .spawn(move || {
                    let begin = started.elapsed();
                    let timed = TimedHost::sharing(host.as_ref(), &nvml);
                    let ctx = ProbeCtx {
                        host: &timed,
                        inputs: &inputs,
                        sample,
                        deadline,
                    };
                    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        probes::run_checked(kind, &params, &ctx)
                    }))
                    .unwrap_or_else(|_| {
                        ProbeOutcome::Unknown(format!(
                            "probe `{}` crashed (a bug: please report it)",
                            kind.name()
                        ))
                    });
                    let _ = tx.send((out, begin, started.elapsed(), timed.waits()));
                });
            match spawned {
                Ok(_) => pending.push((key, rx, deadline)),
                Err(e) => pending.push((
                    key,
                    {
                        let (tx, rx) = mpsc::channel::<Answer>();
                        let _ = tx.send((
                            ProbeOutcome::Unknown(format!("cannot start probe thread: {e}")),
                            Duration::ZERO,
                            Duration::ZERO,
                            Vec::new(),
                        ));
                        rx
                    },
                    deadline,
                )),
            }
        }
        let mut out = BTreeMap::new();
        let mut timings = Vec::new();
        for (key, rx, deadline) in pending {
            let left = deadline.saturating_sub(started.elapsed());
            let (outcome, timing) = match rx.recv_timeout(left) {
                Ok((o, begin, end, waits)) => (
                    o,
                    ProbeTiming {
                        probe: key.0.clone(),
                        start_ms: ms(begin),
                        ms: ms(end.saturating_sub(begin)),
                        timed_out: false,
                        waits,
                    },
                ),
                Err(_) => (
                    ProbeOutcome::Unknown(format!(
                        "probe did not answer within {:.1}s",
                        deadline.as_secs_f64()
                    )),
                    ProbeTiming {
                        probe: key.0.clone(),
                        start_ms: 0.0,
                        ms: ms(started.elapsed()),
                        timed_out: true,
                        waits: Vec::new(),
                    },
                ),
            };
            on_done(&key);
            out.insert(key, outcome);
            timings.push(timing);
        }
        timings.sort_by(|a, b| b.ms.total_cmp(&a.ms).then_with(|| a.probe.cmp(&b.probe)));
        (out, timings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NvmlReading;
    use crate::host::recorded::{RecordingHost, SnapshotHost};

    #[test]
    fn the_probes_of_one_pass_share_one_nvml_reading() {
        let mut h = SnapshotHost::empty();
        h.set_nvml(Ok(NvmlReading::default()));
        let rec = Arc::new(RecordingHost::new(Arc::new(h)));
        let mut requests = BTreeMap::new();
        for kind in ["nvml", "env", "gpu.topology"] {
            requests.insert(
                ProbeKey::new(kind, &Map::new()),
                Request {
                    kind: kind.into(),
                    params: Map::new(),
                },
            );
        }
        let observer = Observer {
            deadline: Duration::from_secs(10),
        };
        let (out, timings) = observer.run(
            rec.clone(),
            Arc::new(Inputs::default()),
            Duration::ZERO,
            requests,
            |_| {},
        );
        assert_eq!(out.len(), 3);
        // each probe still shows its wait on the reading
        for t in &timings {
            assert!(
                t.waits.iter().any(|w| w.what == "NVML reading"),
                "{}: {:?}",
                t.probe,
                t.waits
            );
        }
        assert_eq!(rec.snapshot().nvml.len(), 1, "NVML read more than once");
    }
}
