//! Run each distinct probe once, concurrently, each under its own deadline. A probe that
//! panics, errors or runs past its deadline yields `unknown` with the reason, never a value.

use crate::host::Host;
use crate::probes::{self, Inputs, ProbeCtx, ProbeOutcome};
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

pub struct Request {
    pub kind: String,
    pub params: Map<String, Value>,
}

pub struct Observer {
    pub deadline: Duration,
}

impl Observer {
    pub fn run(
        &self,
        host: Arc<dyn Host>,
        inputs: Arc<Inputs>,
        sample: Duration,
        requests: BTreeMap<ProbeKey, Request>,
        mut on_done: impl FnMut(&ProbeKey),
    ) -> BTreeMap<ProbeKey, ProbeOutcome> {
        let started = Instant::now();
        let mut pending = Vec::new();
        for (key, req) in requests {
            let Some(kind) = probes::find(&req.kind) else {
                continue;
            };
            let (tx, rx) = mpsc::channel();
            let host = host.clone();
            let inputs = inputs.clone();
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
                    let ctx = ProbeCtx {
                        host: host.as_ref(),
                        inputs: &inputs,
                        sample,
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
                    let _ = tx.send(out);
                });
            match spawned {
                Ok(_) => pending.push((key, rx, deadline)),
                Err(e) => pending.push((
                    key,
                    {
                        let (tx, rx) = mpsc::channel();
                        let _ = tx.send(ProbeOutcome::Unknown(format!(
                            "cannot start probe thread: {e}"
                        )));
                        rx
                    },
                    deadline,
                )),
            }
        }
        let mut out = BTreeMap::new();
        for (key, rx, deadline) in pending {
            let left = deadline.saturating_sub(started.elapsed());
            let outcome = rx.recv_timeout(left).unwrap_or_else(|_| {
                ProbeOutcome::Unknown(format!(
                    "probe did not answer within {:.1}s",
                    deadline.as_secs_f64()
                ))
            });
            on_done(&key);
            out.insert(key, outcome);
        }
        out
    }
}
