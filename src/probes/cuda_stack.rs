//! `cuda.stack`: the CUDA stack from the toolkit up, without starting Python.
//!
//! - the CUDA toolkit version (version.json, version.txt, include/cuda.h, then `nvcc --version`,
//!   in that order: files first, since starting nvcc costs tens of milliseconds);
//! - the framework's versions from installed package metadata: `torch-*.dist-info/METADATA`,
//!   `torch/version.py` (the CUDA it was built with) and the `nvidia_nccl_cu*` wheel's dist-info
//!   (the NCCL it ships), in the site-packages of the job's interpreter (`--pid`: its
//!   `VIRTUAL_ENV`/`CONDA_PREFIX` or `argv[0]`) or else the default one (`VIRTUAL_ENV`, then
//!   `python3` on `PATH`);
//! - with `smoke: true`, the native CUDA check ([`crate::host::cuda_check`]: a context, a copy
//!   and a tiny kernel on every GPU, through libcuda, under a deadline);
//! - only with `--deep` (or `deep: true`), the framework check: `python3 -c` imports torch and
//!   runs a 64x64 matmul under the deadline. Importing torch takes seconds, which is why it is
//!   opt-in; `deep.ran` says whether it ran.

use super::{Probe, ProbeCtx, ProbeOutcome};
use crate::evidence::cuda_stack::{
    CudaVersion, parse_cuda_h, parse_cuda_version, parse_dist_info_name, parse_metadata,
    parse_pyvenv_cfg, parse_torch_version_py,
};
use crate::host::Host;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

pub struct CudaStack;

/// The script the `--deep` check runs with `python3 -c` (public so tests can record its answer).
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
    /// Interpreter whose packages are read (when absent: the job's, else python3 on PATH).
    #[serde(default)]
    pub python: Option<String>,
    /// Run the native CUDA check (libcuda: context, copy, a tiny kernel on every GPU).
    #[serde(default)]
    pub smoke: bool,
    /// Also run the framework (torch) check, as `--deep` does.
    #[serde(default)]
    pub deep: bool,
    /// Deadline for each check, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    10000
}

impl Probe for CudaStack {
    type Params = CudaStackParams;
    fn name(&self) -> &'static str {
        "cuda.stack"
    }
    fn doc(&self) -> &'static str {
        "CUDA toolkit version, the framework's CUDA/NCCL versions (package metadata, no Python), and a native CUDA context check"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "smoke_unavailable",
                "with `smoke: true`: why the native CUDA check could not run",
            ),
            (
                "toolkit.version / .code",
                "toolkit version (`13.0`, code 13000) and where it was read",
            ),
            (
                "torch.version / .cuda / .cuda_code / .nccl / .site",
                "PyTorch, the CUDA and NCCL it was built with (from dist-info and torch/version.py), and the site-packages read",
            ),
            (
                "smoke.ok / .error / .error_name / .driver_api_version / .devices / .ms / .timed_out",
                "the native CUDA check (with `smoke: true`): context, copy and a tiny kernel on every GPU",
            ),
            (
                "deep.ran / .ok / .error / .ms",
                "the framework check (`--deep` or `deep: true`): torch imported, a 64x64 matmul",
            ),
        ]
    }
    fn run(&self, params: &CudaStackParams, ctx: &ProbeCtx) -> ProbeOutcome {
        let mut out = Map::new();
        if let Some(t) = toolkit(ctx.host) {
            out.insert("toolkit".into(), version_json(&t));
        }
        let py_param = params.python.as_deref();
        let smoke = params.smoke;
        let deep = ctx.inputs.deep || params.deep;
        let timeout = Duration::from_millis(params.timeout_ms);
        let found = framework_versions(ctx, py_param);
        if let Some((t, _)) = &found {
            out.insert("torch".into(), t.clone());
        }
        if smoke {
            match ctx.host.cuda_check(timeout) {
                Ok(c) => {
                    let mut v = serde_json::to_value(&c).unwrap_or(Value::Null);
                    if let Value::Object(m) = &mut v {
                        m.insert("check".into(), json!("native"));
                    }
                    out.insert("smoke".into(), v);
                }
                Err(e) => {
                    out.insert("smoke_unavailable".into(), json!(e));
                }
            }
        }
        if deep {
            // the job's own interpreter when one was found, so the check imports what it does
            let py = py_param
                .map(str::to_string)
                .or_else(|| found.as_ref().and_then(|(_, i)| i.clone()))
                .unwrap_or_else(|| "python3".to_string());
            let d = deep_check(ctx.host, ctx.inputs.pid, &py, timeout, &mut out);
            out.insert("deep".into(), d);
        } else {
            out.insert("deep".into(), json!({"ran": false}));
        }
        ProbeOutcome::Value(Value::Object(out))
    }
}

fn toolkit(host: &dyn Host) -> Option<CudaVersion> {
    for f in [
        "/usr/local/cuda/version.json",
        "/usr/local/cuda/version.txt",
    ] {
        if let Ok(raw) = host.read_file(f)
            && let Some(v) = parse_cuda_version(&String::from_utf8_lossy(&raw))
        {
            return Some(v);
        }
    }
    if let Ok(raw) = host.read_file("/usr/local/cuda/include/cuda.h")
        && let Some(v) = parse_cuda_h(&String::from_utf8_lossy(&raw))
    {
        return Some(v);
    }
    for nvcc in ["nvcc", "/usr/local/cuda/bin/nvcc"] {
        if let Ok(o) = host.run(
            &[nvcc.to_string(), "--version".into()],
            Duration::from_secs(10),
        ) && let Some(v) = parse_cuda_version(&o.stdout)
        {
            return Some(v);
        }
    }
    None
}

/// A Python installation to look in: its prefix (`/opt/torch/.venv`, `/usr`), the interpreter
/// path when known, and how it was found (shown in the output).
struct Prefix {
    dir: String,
    interpreter: Option<String>,
    via: String,
}

fn parent(p: &str) -> Option<&str> {
    let p = p.trim_end_matches('/');
    let i = p.rfind('/')?;
    Some(if i == 0 { "/" } else { &p[..i] })
}

/// `/x/bin/python3` -> prefix `/x`.
fn prefix_of(interpreter: &str, via: String) -> Option<Prefix> {
    let bin = parent(interpreter)?;
    Some(Prefix {
        dir: parent(bin)?.to_string(),
        interpreter: Some(interpreter.to_string()),
        via,
    })
}

fn nul_list(raw: &[u8]) -> Vec<String> {
    raw.split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// Where to look, best first: the job's interpreter, then the default one.
fn prefixes(ctx: &ProbeCtx, python: Option<&str>) -> Vec<Prefix> {
    let mut out = Vec::new();
    if let Some(p) = python.filter(|p| p.starts_with('/')) {
        out.extend(prefix_of(p, "the `python` parameter".into()));
    }
    if let Some(pid) = ctx.inputs.pid {
        if let Ok(raw) = ctx.host.read_file(&format!("/proc/{pid}/environ")) {
            for kv in nul_list(&raw) {
                for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
                    if let Some(v) = kv.strip_prefix(var).and_then(|r| r.strip_prefix('='))
                        && v.starts_with('/')
                    {
                        out.push(Prefix {
                            dir: v.to_string(),
                            interpreter: Some(format!("{}/bin/python3", v.trim_end_matches('/'))),
                            via: format!("{var} of PID {pid}"),
                        });
                    }
                }
            }
        }
        if let Ok(raw) = ctx.host.read_file(&format!("/proc/{pid}/cmdline"))
            && let Some(argv0) = nul_list(&raw).into_iter().next()
            && argv0.starts_with('/')
            && argv0
                .rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("python"))
        {
            out.extend(prefix_of(&argv0, format!("the interpreter of PID {pid}")));
        }
    }
    if ctx.host.has_env() {
        let env = ctx.host.env();
        for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
            if let Some(v) = env.get(var).filter(|v| v.starts_with('/')) {
                out.push(Prefix {
                    dir: v.clone(),
                    interpreter: Some(format!("{}/bin/python3", v.trim_end_matches('/'))),
                    via: var.to_string(),
                });
            }
        }
        let name = python.filter(|p| !p.contains('/')).unwrap_or("python3");
        if let Some(path) = env.get("PATH") {
            for dir in path.split(':').filter(|d| d.starts_with('/')) {
                let cand = format!("{}/{name}", dir.trim_end_matches('/'));
                if ctx.host.metadata(&cand).is_ok() {
                    out.extend(prefix_of(&cand, format!("`{name}` on PATH")));
                    break;
                }
            }
        }
    }
    out
}

/// site-packages (and Debian's dist-packages) of one prefix.
fn site_dirs(host: &dyn Host, p: &str) -> Vec<String> {
    let p = p.trim_end_matches('/');
    let mut out = Vec::new();
    let venv = host
        .read_file(&format!("{p}/pyvenv.cfg"))
        .ok()
        .map(|raw| parse_pyvenv_cfg(&String::from_utf8_lossy(&raw)));
    let pythons = |lib: &str| -> Vec<String> {
        host.read_dir(lib)
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.starts_with("python3"))
            .map(|n| format!("{lib}/{n}"))
            .collect()
    };
    for d in pythons(&format!("{p}/lib")) {
        out.push(format!("{d}/site-packages"));
        if venv.is_none() {
            out.push(format!("{d}/dist-packages"));
        }
    }
    match venv {
        Some((Some(home), true)) => {
            if let Some(sys) = parent(&home) {
                out.extend(site_dirs(host, sys));
            }
        }
        Some(_) => {}
        None => {
            for d in pythons(&format!("{p}/local/lib")) {
                out.push(format!("{d}/dist-packages"));
            }
        }
    }
    out
}

/// The framework's versions from package metadata, and the interpreter they belong to.
fn framework_versions(ctx: &ProbeCtx, python: Option<&str>) -> Option<(Value, Option<String>)> {
    let host = ctx.host;
    let mut seen = std::collections::BTreeSet::new();
    for pre in prefixes(ctx, python) {
        if !seen.insert(pre.dir.clone()) {
            continue;
        }
        for site in site_dirs(host, &pre.dir) {
            let Ok(names) = host.read_dir(&site) else {
                continue;
            };
            let Some(info) = names
                .iter()
                .find(|n| parse_dist_info_name(n).is_some_and(|(name, _)| name == "torch"))
            else {
                continue;
            };
            let mut t = Map::new();
            let meta = host
                .read_file(&format!("{site}/{info}/METADATA"))
                .ok()
                .and_then(|raw| parse_metadata(&String::from_utf8_lossy(&raw)));
            // version.py's `__version__` is torch.__version__ (`2.11.0+cu130`); the wheel's
            // METADATA drops the local part (`2.11.0`), so it is the fallback
            let py = host
                .read_file(&format!("{site}/torch/version.py"))
                .ok()
                .map(|raw| parse_torch_version_py(&String::from_utf8_lossy(&raw)))
                .unwrap_or_default();
            let version = match (py.version, meta) {
                (Some(v), _) => v,
                (None, Some((_, v))) => v,
                (None, None) => parse_dist_info_name(info)?.1.to_string(),
            };
            t.insert("version".into(), json!(version));
            if let Some(c) = py.cuda {
                if let Some(cv) = parse_cuda_version(&format!("CUDA Version {c}")) {
                    t.insert("cuda_code".into(), json!(code(&cv)));
                }
                t.insert("cuda".into(), json!(c));
            }
            // the NCCL wheel torch depends on (nvidia-nccl-cu12, -cu13, ...)
            if let Some((_, v)) = names
                .iter()
                .filter_map(|n| parse_dist_info_name(n))
                .find(|(name, _)| name.starts_with("nvidia_nccl_cu"))
            {
                t.insert("nccl".into(), json!(v));
            }
            t.insert("site".into(), json!(site));
            t.insert("found_via".into(), json!(pre.via));
            t.insert("source".into(), json!("package metadata"));
            return Some((Value::Object(t), pre.interpreter));
        }
    }
    None
}

/// The framework check: `python -c PY --smoke`, under the deadline. With `--pid` the
/// interpreter is the job's (its `VIRTUAL_ENV`, `CONDA_PREFIX` or `argv[0]`): it runs only as
/// the job's owner ([`Host::run_as_job`]: its uid, gid and groups, no capabilities,
/// `no_new_privs`, a minimal environment), never as root.
fn deep_check(
    host: &dyn Host,
    pid: Option<u32>,
    py: &str,
    timeout: Duration,
    out: &mut Map<String, Value>,
) -> Value {
    let argv = vec![py.to_string(), "-c".into(), PY.into(), "--smoke".into()];
    let started = Instant::now();
    let mut deep = Map::new();
    deep.insert("ran".into(), json!(true));
    deep.insert("python".into(), json!(py));
    let ran = match pid {
        Some(pid) => host.run_as_job(pid, &argv, timeout),
        None => host.run(&argv, timeout),
    };
    match ran {
        Ok(o) if o.timed_out => {
            deep.insert("ok".into(), json!(false));
            deep.insert("timed_out".into(), json!(true));
            deep.insert(
                "error".into(),
                json!(format!(
                    "python did not finish within {:.0}s (a CUDA hang?)",
                    timeout.as_secs_f64()
                )),
            );
        }
        Ok(o) => {
            let line = o
                .stdout
                .lines()
                .rev()
                .find(|l| l.trim_start().starts_with('{'))
                .unwrap_or("");
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(mut t)) => {
                    if let Some(e) = t.remove("import_error") {
                        deep.insert("ok".into(), json!(false));
                        deep.insert(
                            "error".into(),
                            json!(format!("cannot import torch: {}", e.as_str().unwrap_or(""))),
                        );
                    } else {
                        let smoke = t.remove("smoke").unwrap_or_else(
                            || json!({"ok": false, "error": "torch gave no result"}),
                        );
                        deep.insert(
                            "ok".into(),
                            smoke.get("ok").cloned().unwrap_or(json!(false)),
                        );
                        if let Some(e) = smoke.get("error") {
                            deep.insert("error".into(), e.clone());
                        }
                        // what the running framework says, where metadata said nothing
                        if !out.contains_key("torch") {
                            if let Some(c) = t
                                .get("cuda")
                                .and_then(Value::as_str)
                                .and_then(|c| parse_cuda_version(&format!("CUDA Version {c}")))
                            {
                                t.insert("cuda_code".into(), json!(code(&c)));
                            }
                            t.insert("source".into(), json!("python"));
                            out.insert("torch".into(), Value::Object(t));
                        }
                    }
                }
                _ => {
                    deep.insert("ok".into(), json!(false));
                    deep.insert(
                        "error".into(),
                        json!(format!(
                            "python exited {:?}: {}",
                            o.status,
                            o.stderr.lines().last().unwrap_or("")
                        )),
                    );
                }
            }
        }
        Err(e) => {
            deep.insert("ok".into(), json!(false));
            deep.insert("error".into(), json!(format!("cannot run {py}: {e}")));
        }
    }
    deep.insert("ms".into(), json!(started.elapsed().as_millis() as u64));
    Value::Object(deep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::probes::Inputs;

    fn live() -> SnapshotHost {
        SnapshotHost::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/hosts/h200-live.snapshot.json"),
        )
        .unwrap()
    }

    fn run(host: &SnapshotHost, params: Value, inputs: &Inputs) -> Map<String, Value> {
        let ctx = ProbeCtx {
            host,
            inputs,
            sample: Duration::ZERO,
            deadline: Duration::MAX,
        };
        match crate::probes::ProbeKind::run(&CudaStack, params.as_object().unwrap(), &ctx) {
            ProbeOutcome::Value(Value::Object(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    /// The recorded H200: versions from package metadata (what `torch` itself reported in
    /// the Python-based recording: 2.11.0+cu130, CUDA 13.0, NCCL 2.28.9) and the native check.
    #[test]
    fn h200_versions_from_metadata_and_the_native_check() {
        let h = live();
        let v = run(&h, json!({"smoke": true}), &Inputs::default());
        let t = &v["torch"];
        assert_eq!(t["version"], "2.11.0+cu130");
        assert_eq!(t["cuda"], "13.0");
        assert_eq!(t["cuda_code"], 13000);
        assert_eq!(t["nccl"], "2.28.9");
        assert_eq!(t["site"], "/opt/torch/.venv/lib/python3.12/site-packages");
        assert_eq!(v["toolkit"]["version"], "13.0");
        assert_eq!(v["smoke"]["ok"], true);
        assert_eq!(v["smoke"]["driver_api_version"], 13000);
        assert_eq!(v["smoke"]["devices"][0]["name"], "NVIDIA H200");
        assert_eq!(v["deep"]["ran"], false);
    }

    #[test]
    fn without_smoke_no_check_is_asked_for() {
        let mut h = live();
        h.set_cuda_check(Err("must not be asked".into()));
        let v = run(&h, json!({}), &Inputs::default());
        assert!(!v.contains_key("smoke") && !v.contains_key("smoke_unavailable"));
    }

    #[test]
    fn deep_runs_the_framework_check_in_the_found_interpreter() {
        let mut h = live();
        h.set_command(
            &["/opt/torch/.venv/bin/python3", "-c", PY, "--smoke"],
            crate::host::CommandOutput {
                status: Some(0),
                stdout: "{\"version\": \"2.11.0+cu130\", \"cuda\": \"13.0\", \"smoke\": {\"ok\": false, \"error\": \"CUDA error: no kernel image is available for execution on the device\"}}\n".into(),
                stderr: String::new(),
                timed_out: false,
            },
        );
        let inputs = Inputs {
            deep: true,
            ..Default::default()
        };
        let v = run(&h, json!({"smoke": true}), &inputs);
        assert_eq!(v["deep"]["ran"], true);
        assert_eq!(v["deep"]["ok"], false);
        assert_eq!(v["deep"]["python"], "/opt/torch/.venv/bin/python3");
        assert!(
            v["deep"]["error"]
                .as_str()
                .unwrap()
                .contains("no kernel image")
        );
    }
}
