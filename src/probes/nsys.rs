//! `nsys.stats`: pasted Nsight Systems statistics reports and nvprof summaries (`--evidence`),
//! read by [`crate::evidence::nsys_stats`]: where the host's CUDA API time went (syncs,
//! launches), how many GPU operations ran and how long each took, and host-to-device copies
//! from pageable memory where a report names the memory kind.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::nsys_stats::{self, NsysStatsKind, NvprofSummaryKind};
use crate::probes::inputs::evidence_of;
use serde_json::{Value, json};

pub struct NsysStats;

/// Parameters: `optional`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NsysParams {
    /// without a pasted report, answer `{given: false}` instead of not-applicable (for rules that also judge a trace or a live --pid)
    #[serde(default)]
    pub optional: bool,
}

impl Probe for NsysStats {
    type Params = NsysParams;
    fn name(&self) -> &'static str {
        "nsys.stats"
    }
    fn doc(&self) -> &'static str {
        "pasted Nsight Systems statistics reports (`nsys stats`, `--stats=true`) or nvprof summaries: host syncs and launches in the CUDA API time, GPU operations and their durations, pageable host-to-device copies; a PyTorch profiler table's kernel-launch rows against its device time total"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "given",
                "false (and nothing else) when `optional` and no report was given",
            ),
            ("files", "the pastes read"),
            (
                "format",
                "`nsys`, `nvprof` or `torch profiler table` (the first paste's)",
            ),
            ("reports", "reports (nsys) or sections (nvprof) read"),
            ("api_total_ns", "host time in all CUDA API calls listed"),
            ("api_calls", "CUDA API calls listed"),
            (
                "host_sync",
                "calls that block the host (cuda/cu*Synchronize, memcpy without Async): calls, total_ns, share of API time, by_name",
            ),
            (
                "enqueue",
                "kernel and graph launches, async copies and memsets: calls, total_ns (host time)",
            ),
            (
                "gpu_ops",
                "GPU operations listed (kernels and memory operations)",
            ),
            ("gpu_total_ns", "their GPU time"),
            (
                "gpu_op_median_us",
                "instance-weighted median of their durations (row medians, or means where the report has none)",
            ),
            ("kernel_instances", "kernel launches listed"),
            (
                "kernel_median_us",
                "instance-weighted median kernel duration",
            ),
            (
                "pageable_h2d",
                "where a report names memory kinds: count and bytes of Pageable-to-Device copies, rows read",
            ),
            ("top_api", "the five API calls with the most time"),
            ("top_gpu_ops", "the five GPU operations with the most time"),
        ]
    }
    fn run(&self, params: &NsysParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut files = Vec::new();
        let mut sums = Vec::new();
        for (p, t) in evidence_of(&ctx.inputs.evidence, &NsysStatsKind) {
            let s = nsys_stats::parse_nsys(&t);
            files.push(p.display().to_string());
            sums.push(s);
        }
        for (p, t) in evidence_of(&ctx.inputs.evidence, &NvprofSummaryKind) {
            let s = nsys_stats::parse_nvprof(&t);
            files.push(p.display().to_string());
            sums.push(s);
        }
        // a PyTorch profiler table with device columns: its launch calls against its device
        // time (profiler_report::torch_table_launches), where no Nsight report came from the file
        for p in &ctx.inputs.evidence {
            if files.contains(&p.display().to_string()) {
                continue;
            }
            let Ok(t) = crate::vocab::io::read_shared(p) else {
                continue;
            };
            if !crate::formats::profiler_report::looks_like_torch_table(&t) {
                continue;
            }
            if let Some(s) = crate::formats::profiler_report::torch_table_launches(&t) {
                files.push(p.display().to_string());
                sums.push(crate::evidence::nsys_stats::from_torch_table(s));
            }
        }
        if sums.is_empty() {
            return if params.optional {
                ProbeOutcome::Value(json!({"given": false}))
            } else {
                ProbeOutcome::NotApplicable(
                    "needs an Nsight Systems stats report or nvprof summary given as --evidence"
                        .into(),
                )
            };
        }
        files.dedup();
        let mut v = nsys_stats::facts(&sums);
        if let Value::Object(m) = &mut v {
            m.insert("given".into(), json!(true));
            m.insert("files".into(), json!(files));
        }
        ProbeOutcome::Value(v)
    }
}
