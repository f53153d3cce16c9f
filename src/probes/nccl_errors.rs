//! `nccl.errors`: collective failures in a log — PyTorch's ProcessGroupNCCL watchdog timeouts,
//! NCCL error results with NCCL's own reason, and NCCL's shared-memory failures — read by
//! [`crate::evidence::nccl_errors`] from `--nccl-log` and from every `--evidence` file that holds
//! one, whatever else the paste holds.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::nccl_errors;
use crate::vocab::io::read_shared;
use serde_json::{Value, json};

pub struct NcclErrors;

/// Parameters: `optional`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorsParams {
    /// without a log that holds a collective failure, answer `{given: false}` instead of not-applicable (for rules that also judge a pasted py-spy dump)
    #[serde(default)]
    pub optional: bool,
}

impl Probe for NcclErrors {
    type Params = ErrorsParams;
    fn name(&self) -> &'static str {
        "nccl.errors"
    }
    fn doc(&self) -> &'static str {
        "collective failures in a log (--nccl-log or --evidence): ProcessGroupNCCL watchdog timeouts, ncclSystemError/ncclInternalError/… with NCCL's Last error, NCCL's /dev/shm failures"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("lines", "lines that carried one of these messages"),
            (
                "timeouts",
                "watchdog timeouts: rank, pg, seq, op, numel_in, numel_out, tensor_shape, timeout_ms, ran_for_ms",
            ),
            ("timeout_count", "every watchdog timeout line"),
            ("timeout_ranks", "ranks that reported a timeout"),
            ("timeout_ops", "ops that timed out"),
            (
                "watchdog_stuck",
                "the heartbeat monitor saw the watchdog stuck (a hang): rank, pg, seconds",
            ),
            (
                "not_joined",
                "the flight recorder analyzer's collectives that some ranks never reached: seq, op, missing_ranks, state",
            ),
            (
                "dump_signals",
                "the flight recorder's dump signal a rank received: a collective failed (timed out or raised) on from_rank while this rank waited: rank, pg, from_rank, from_self, last_enqueued, last_completed",
            ),
            (
                "timeout_raised_at",
                "a back trace of the exception PyTorch's WorkNCCL::checkTimeout built (a timeout whose message line may be missing)",
            ),
            (
                "last_completed_work",
                "the lowest sequence number a rank reports completed (-1: none completed)",
            ),
            (
                "last_enqueued_work",
                "the highest sequence number a rank reports enqueued",
            ),
            (
                "errors",
                "NCCL error results: result, last_error, location, nccl_version, count",
            ),
            (
                "error_results",
                "distinct NCCL results (ncclSystemError, …)",
            ),
            (
                "shm_create_failed",
                "NCCL could not create or grow a /dev/shm segment",
            ),
            (
                "shm_attach_failed",
                "NCCL could not attach to a peer's /dev/shm segment",
            ),
            ("shm_segment_bytes", "the segment size NCCL asked for"),
            ("shm_error", "the first shared-memory WARN"),
            ("bus_error", "`Bus error` in the same text"),
            (
                "cuda_oom_in_nccl",
                "`Cuda failure 'out of memory'` inside NCCL",
            ),
            ("nccl_version", "the NCCL version the text names"),
            (
                "ras",
                "NCCL's RAS status report: groups (comms, nodes, ranks_per_comm, status, errors), dead_processes, missing_processes, init_error_ranks, async_error_ranks, mismatched_ops, status_mismatch, collection_timeouts",
            ),
            ("file", "the file read"),
            (
                "given",
                "false (and nothing else) when `optional` and no log holds a collective failure",
            ),
        ]
    }
    fn run(&self, params: &ErrorsParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let candidates = ctx.inputs.nccl_log.iter().chain(ctx.inputs.evidence.iter());
        for p in candidates {
            let Ok(t) = read_shared(p) else { continue };
            // (the text's searches for a line anywhere in it, made once for every probe)
            crate::evidence::scan::keep(&t);
            if !nccl_errors::looks_like(&t) {
                continue;
            }
            return match serde_json::to_value(nccl_errors::parse_nccl_errors(&t)) {
                Ok(Value::Object(mut m)) => {
                    m.insert("file".into(), json!(p.display().to_string()));
                    ProbeOutcome::Value(Value::Object(m))
                }
                Ok(v) => ProbeOutcome::Value(v),
                Err(e) => ProbeOutcome::Unknown(e.to_string()),
            };
        }
        if ctx.inputs.nccl_log.is_some() {
            // an NCCL log without any failure: nothing failed
            return match serde_json::to_value(nccl_errors::NcclErrors::default()) {
                Ok(v) => ProbeOutcome::Value(v),
                Err(e) => ProbeOutcome::Unknown(e.to_string()),
            };
        }
        if params.optional {
            return ProbeOutcome::Value(json!({"given": false}));
        }
        ProbeOutcome::NotApplicable(
            "needs --nccl-log or --evidence with a watchdog timeout or an NCCL error".into(),
        )
    }
}
