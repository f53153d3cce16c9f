//! `trace`: a PyTorch profiler (Kineto) trace given with `--trace` (or as `--evidence`),
//! streamed through the analyser in bounded memory.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::EvidenceKind as _;
use crate::evidence::trace;

pub struct Trace;

/// Parameters: `optional`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalParams {
    /// without a trace, answer `{given: false}` instead of not-applicable (for rules that also judge a live --pid)
    #[serde(default)]
    pub optional: bool,
}

impl Probe for Trace {
    type Params = OptionalParams;
    fn name(&self) -> &'static str {
        "trace"
    }
    fn doc(&self) -> &'static str {
        "PyTorch profiler trace (--trace): GPU busy fraction, idle causes, DataLoader share, syncs, kernels"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "given",
                "false (and nothing else) when `optional` and no trace was given",
            ),
            ("events_seen", "events visited"),
            ("truncated", "the JSON ended early or broke"),
            ("kernel_count", "kernel launches"),
            ("gpu_memcpy_count / gpu_memcpy_ms", "memcpy count and time"),
            ("gpu_memset_count / gpu_memset_ms", "memset count and time"),
            ("sync_calls", "host syncs per name"),
            ("sync_calls_total", "all host syncs"),
            ("steps", "ProfilerStep annotations in the trace"),
            (
                "window",
                "`steps` (first step start to last step end) or `whole_trace`",
            ),
            ("duration_ms", "length of the window"),
            (
                "gpu_busy_fraction",
                "as gpu_kernel_busy_fraction, memcpy and memset counting as busy",
            ),
            (
                "gpu_idle_ms",
                "window time with no kernel, memcpy or memset running",
            ),
            (
                "dataloader_ms",
                "time inside DataLoader `__next__` in the window",
            ),
            (
                "gpu_kernel_busy_fraction",
                "union of kernel time over the step window",
            ),
            (
                "idle_waiting_on_host_ms",
                "GPU idle while the CPU waited in DataLoader or a sync",
            ),
            ("idle_other_ms", "other GPU idle time"),
            (
                "idle_short_gaps_ms",
                "GPU idle in gaps under 100 us between GPU activities: launch overhead",
            ),
            (
                "dataloader_share",
                "time in DataLoader __next__ over the window",
            ),
            ("sync_calls_per_step", "host syncs per step by name"),
            ("sync_calls_per_step_total", "all host syncs per step"),
            (
                "h2d_copy_syncs",
                "syncs that were a blocking host-to-device copy's wait (`.to(device)` without non_blocking), not counted as host syncs",
            ),
            (
                "pageable_h2d_copies.count / .per_step",
                "host-to-device copies from pageable memory",
            ),
            ("kernels_per_step", "kernel launches per step"),
            ("median_kernel_us", "median kernel duration"),
            ("nccl_kernel_share", "NCCL kernels' share of kernel time"),
            ("top_kernels", "five kernels with the most time"),
        ]
    }
    fn run(&self, params: &OptionalParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let path = match &ctx.inputs.trace {
            Some(p) => p.clone(),
            // a trace is recognised by its content; a gzipped one by its name
            None => match ctx.inputs.evidence.iter().find(|p| {
                p.to_string_lossy().ends_with(".gz") && p.to_string_lossy().contains(".json")
                    // the head says it: reading the whole paste here held it twice more
                    || crate::evidence::detect_file(p)
                        .is_some_and(|k| k.name() == crate::evidence::trace::ChromeTrace.name())
            }) {
                Some(p) => p.clone(),
                None if params.optional => {
                    return ProbeOutcome::Value(serde_json::json!({ "given": false }));
                }
                None => return ProbeOutcome::NotApplicable("needs --trace".into()),
            },
        };
        match trace::analyze_trace_file(&path) {
            // a string past the bound: the trace is not read on (bounded memory), and said so
            Ok(stats)
                if stats.truncated
                    && stats
                        .parse_error
                        .as_deref()
                        .is_some_and(|e| e.contains("input too large")) =>
            {
                ProbeOutcome::Unknown(format!(
                    "input too large: {} holds a JSON string longer than {} MiB after {} events; it was not read on",
                    path.display(),
                    trace::MAX_TRACE_STRING_BYTES >> 20,
                    stats.events_seen
                ))
            }
            // figures from the part before a cut are not the run's: no verdict from half a file
            Ok(stats) if stats.truncated => ProbeOutcome::Unknown(format!(
                "input ends early: {} stops after {} events ({}); give the whole trace",
                path.display(),
                stats.events_seen,
                stats.parse_error.as_deref().unwrap_or("the JSON is cut")
            )),
            Ok(stats) => match serde_json::to_value(&stats) {
                Ok(v) => ProbeOutcome::Value(v),
                Err(e) => ProbeOutcome::Unknown(e.to_string()),
            },
            Err(e) => ProbeOutcome::Unknown(format!("{}: {e}", path.display())),
        }
    }
}
