//! `cuda.stack`: the CUDA toolkit version (version.json, version.txt, then `nvcc --version`, in
//! that order) and, through `python3 -c` under a deadline, the framework's CUDA and NCCL
//! versions and a context smoke test (a tiny matmul; a hang is a finding, not a stuck gpufix).

use super::{ProbeCtx, ProbeKind, ProbeOutcome};
use crate::evidence::cuda_stack::{CudaVersion, parse_cuda_version};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

pub struct CudaStack;

/// The script `cuda.stack` runs with `python3 -c` (public so tests can record its answer).
pub const PY: &str = r#"
import json, sys, time
out = {}
try:
    import torch
    out["version"] = torch.__version__
    out["cuda"] = torch.version.cuda
    try:
        v = torch.cuda.nccl.version()
        out["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    except Exception:
        pass
    if "--smoke" in sys.argv:
        t = time.time()
        try:
            ok = torch.cuda.is_available()
            out["available"] = ok
            if ok:
                a = torch.ones(64, 64, device="cuda")
                s = float((a @ a).sum().item())
                torch.cuda.synchronize()
                out["smoke"] = {"ok": s == 64.0 * 64 * 64, "ms": round((time.time() - t) * 1000, 1)}
            else:
                out["smoke"] = {"ok": False, "error": "torch.cuda.is_available() is False"}
        except Exception as e:
            out["smoke"] = {"ok": False, "error": str(e)[:500]}
except ImportError as e:
    out["import_error"] = str(e)[:300]
print(json.dumps(out))
"#;

fn code(v: &CudaVersion) -> u32 {
    v.major * 1000 + v.minor * 10
}

fn version_json(v: &CudaVersion) -> Value {
    json!({"version": v.version, "major": v.major, "minor": v.minor, "code": code(v), "source": v.source, "full": v.full})
}

/// Parameters of the `cuda.stack` probe.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CudaStackParams {
    /// Python interpreter to ask for torch's CUDA build.
    #[serde(default = "default_python")]
    pub python: String,
    /// Also run the CUDA smoke test.
    #[serde(default)]
    pub smoke: bool,
    /// Deadline for python, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_python() -> String {
    "python3".into()
}

fn default_timeout_ms() -> u64 {
    30000
}

impl ProbeKind for CudaStack {
    fn name(&self) -> &'static str {
        "cuda.stack"
    }
    fn doc(&self) -> &'static str {
        "CUDA toolkit version, the framework's CUDA/NCCL versions, and a CUDA context smoke test"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "toolkit.version / .code",
                "toolkit version (`13.0`, code 13000) and where it was read",
            ),
            (
                "torch.version / .cuda / .cuda_code / .nccl",
                "PyTorch and the CUDA and NCCL it was built with",
            ),
            (
                "smoke.ok / .ms / .error / .timed_out",
                "the tiny-matmul context test (with `smoke: true`)",
            ),
        ]
    }
    fn params(&self) -> super::ParamsDecl {
        super::ParamsDecl::of::<CudaStackParams>()
    }
    fn run(&self, params: &Map<String, Value>, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut out = Map::new();
        // toolkit
        let mut toolkit = None;
        for f in [
            "/usr/local/cuda/version.json",
            "/usr/local/cuda/version.txt",
        ] {
            if let Ok(raw) = ctx.host.read_file(f)
                && let Some(v) = parse_cuda_version(&String::from_utf8_lossy(&raw))
            {
                toolkit = Some(v);
                break;
            }
        }
        if toolkit.is_none() {
            for nvcc in ["nvcc", "/usr/local/cuda/bin/nvcc"] {
                if let Ok(o) = ctx.host.run(
                    &[nvcc.to_string(), "--version".into()],
                    Duration::from_secs(10),
                ) && let Some(v) = parse_cuda_version(&o.stdout)
                {
                    toolkit = Some(v);
                    break;
                }
            }
        }
        if let Some(t) = &toolkit {
            out.insert("toolkit".into(), version_json(t));
        }
        // framework
        let py = params
            .get("python")
            .and_then(Value::as_str)
            .unwrap_or("python3")
            .to_string();
        let smoke = params
            .get("smoke")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let timeout = Duration::from_millis(
            params
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(30_000),
        );
        let mut argv = vec![py.clone(), "-c".into(), PY.into()];
        if smoke {
            argv.push("--smoke".into());
        }
        let started = Instant::now();
        match ctx.host.run(&argv, timeout) {
            Ok(o) if o.timed_out => {
                out.insert("torch".into(), json!({}));
                out.insert(
                    "smoke".into(),
                    json!({"ok": false, "timed_out": true, "error": format!("python did not finish within {:.0}s (a CUDA hang?)", timeout.as_secs_f64())}),
                );
            }
            Ok(o) => {
                let line = o
                    .stdout
                    .lines()
                    .rev()
                    .find(|l| l.trim_start().starts_with('{'))
                    .unwrap_or("");
                if let Ok(Value::Object(mut t)) = serde_json::from_str::<Value>(line) {
                    if let Some(s) = t.remove("smoke") {
                        out.insert("smoke".into(), s);
                    }
                    if t.contains_key("import_error") {
                        out.insert(
                            "torch_import_error".into(),
                            t.remove("import_error").unwrap_or_default(),
                        );
                    } else {
                        if let Some(c) = t
                            .get("cuda")
                            .and_then(Value::as_str)
                            .and_then(|c| parse_cuda_version(&format!("CUDA Version {c}")))
                        {
                            t.insert("cuda_code".into(), json!(code(&c)));
                        }
                        out.insert("torch".into(), Value::Object(t));
                    }
                } else if smoke {
                    out.insert("smoke".into(), json!({"ok": false, "error": format!("python exited {:?}: {}", o.status, o.stderr.lines().last().unwrap_or(""))}));
                }
            }
            Err(e) => {
                out.insert(
                    "python_error".into(),
                    json!(format!("cannot run {py}: {e}")),
                );
            }
        }
        out.insert(
            "python_ms".into(),
            json!(started.elapsed().as_millis() as u64),
        );
        ProbeOutcome::Value(Value::Object(out))
    }
}
