"""Helpers that bench/run.sh and bench/overhead.sh call for everything that is not process control:
writing a job's config and env file, reading a dotenv file into `env` arguments, waiting for a
job's ready file, judging a gpufix plan against the expected rule ids, timing commands, and
assembling results.json. Standard library only, plus pyyaml for `make-job`.

Every subcommand prints JSON (or NUL-separated arguments for `env-args`) and exits 0 unless its
inputs are unusable; a failed judgement is data in the JSON, never an exit code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
VERSION = 1


# ---- job files ---------------------------------------------------------------------------------


def set_dotted(cfg: dict, dotted: str, value) -> None:
    keys = dotted.split(".")
    node = cfg
    for k in keys[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise SystemExit(f"error: config key `{dotted}` runs through a non-mapping at `{k}`")
    node[keys[-1]] = value


def parse_assignment(text: str, what: str) -> tuple[str, str]:
    if "=" not in text:
        raise SystemExit(f"error: {what} `{text}` is not KEY=VALUE")
    k, v = text.split("=", 1)
    return k.strip(), v.strip()


def cmd_make_job(a: argparse.Namespace) -> int:
    import yaml

    cfg = yaml.safe_load(Path(a.base).read_text(encoding="utf-8")) or {}
    for item in a.set or []:
        k, v = parse_assignment(item, "config override")
        set_dotted(cfg, k, yaml.safe_load(v) if v != "" else "")
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    header = f"# gpufix benchmark job `{a.name}`, made from {Path(a.base).name}\n"
    (d / "config.yaml").write_text(header + yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    lines = [f"# environment of the benchmark job `{a.name}` (dotenv: NAME=VALUE, one a line)"]
    for item in a.env or []:
        k, v = parse_assignment(item, "env line")
        if not ENV_NAME.match(k):
            raise SystemExit(f"error: env name `{k}` is not a valid variable name")
        lines.append(f"{k}={v}")
    (d / "job.env").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(json.dumps({"config": str(d / "config.yaml"), "env_file": str(d / "job.env")}))
    return 0


def read_dotenv(path: Path) -> list[tuple[str, str]]:
    """NAME=VALUE lines; `#` comments and blank lines skipped; `export ` and one pair of matching
    quotes around the value are removed. Values are never evaluated by a shell."""
    out = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        if "=" not in line:
            raise ValueError(f"{path}:{n}: line `{raw}` is not NAME=VALUE")
        k, v = line.split("=", 1)
        k, v = k.strip(), v.strip()
        if not ENV_NAME.match(k):
            raise ValueError(f"{path}:{n}: `{k}` is not a valid variable name")
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        out.append((k, v))
    return out


def cmd_env_args(a: argparse.Namespace) -> int:
    try:
        pairs = read_dotenv(Path(a.file))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if a.check:
        print(json.dumps(dict(pairs)))
        return 0
    sys.stdout.write("".join(f"{k}={v}\0" for k, v in pairs))
    return 0


def cmd_wait_ready(a: argparse.Namespace) -> int:
    deadline = time.monotonic() + a.timeout
    path = Path(a.file)
    while time.monotonic() < deadline:
        if path.exists():
            return 0
        if a.pid and not pid_alive(a.pid):
            print(f"error: job pid {a.pid} ended before `{path.name}` appeared", file=sys.stderr)
            return 1
        time.sleep(0.1)
    print(f"error: `{path.name}` did not appear within {a.timeout:.0f} s", file=sys.stderr)
    return 1


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (exited, not yet reaped) counts as ended
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


# ---- judging a plan ----------------------------------------------------------------------------


def split_ids(text: str | None) -> list[str]:
    if not text or text.strip() in ("", "-"):
        return []
    return [s.strip() for s in text.split(",") if s.strip()]


def load_json(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        return None, f"cannot read `{path.name}`: {e.strerror}"
    if not text.strip():
        return None, f"`{path.name}` is empty"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        return None, f"`{path.name}` is not JSON: {e.msg} at line {e.lineno}"


def judge_plan(plan: dict | None, error: str | None, expect: list[str], also_ok: list[str]) -> dict:
    """Which rules failed, whether an expected one did (any one counts), and which other fails
    are false findings. With no expected ids (healthy), detection means no fail at all."""
    if plan is None:
        return {"parsed": False, "error": error, "fails": [], "fired": [], "detected": False, "false_findings": []}
    results = plan.get("results") if isinstance(plan, dict) else None
    if not isinstance(results, list):
        return {
            "parsed": False,
            "error": "plan JSON has no `results` list",
            "fails": [],
            "fired": [],
            "detected": False,
            "false_findings": [],
        }
    verdicts = {r.get("id"): r.get("verdict") for r in results if isinstance(r, dict)}
    fails = sorted(i for i, v in verdicts.items() if v == "fail")
    fired = [i for i in expect if verdicts.get(i) == "fail"]
    detected = bool(fired) if expect else not fails
    false_findings = [i for i in fails if i not in expect and i not in also_ok]
    symptoms = [i for i in fails if i in also_ok]
    messages = {
        r.get("id"): r.get("messages") or [] for r in results if isinstance(r, dict) and r.get("verdict") == "fail"
    }
    return {
        "parsed": True,
        "fails": fails,
        "fired": fired,
        "detected": detected,
        "false_findings": false_findings,
        "symptoms": symptoms,
        "expected_verdicts": {i: verdicts.get(i, "absent") for i in expect},
        "summary": plan.get("summary"),
        "messages": messages,
        "changes": [
            {k: c.get(k) for k in ("rule", "kind", "target", "safety", "summary")}
            for c in plan.get("changes", [])
            if isinstance(c, dict)
        ],
    }


def cmd_check_plan(a: argparse.Namespace) -> int:
    plan, err = load_json(Path(a.plan))
    print(json.dumps(judge_plan(plan, err, split_ids(a.expect), split_ids(a.also_ok)), sort_keys=True))
    return 0


# ---- timing ------------------------------------------------------------------------------------


def cmd_time_cmd(a: argparse.Namespace) -> int:
    """Run a command `--repeat` times (output to files or /dev/null) and report wall times."""
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        raise SystemExit("error: no command given after --")
    runs, rcs = [], []
    for i in range(a.repeat):
        keep = bool(a.keep_output) and i == 0
        with open(a.keep_output if keep else os.devnull, "wb") as out:
            t0 = time.perf_counter()
            try:
                p = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=a.timeout, check=False)
                rcs.append(p.returncode)
            except subprocess.TimeoutExpired:
                rcs.append("timeout")
            except OSError as e:
                rcs.append(f"error: {e.strerror}")
            runs.append(round(time.perf_counter() - t0, 4))
    print(
        json.dumps(
            {"command": " ".join(cmd), "median_s": round(statistics.median(runs), 4), "runs_s": runs, "exit_codes": rcs}
        )
    )
    return 0


def window_rate(points: list[tuple[float, int]], start: float, end: float) -> dict:
    """samples/s between the first and last progress points inside [start, end]."""
    inside = [(t, s) for t, s in points if start <= t <= end]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return {"samples_per_s": None, "points": len(inside)}
    (t0, s0), (t1, s1) = inside[0], inside[-1]
    return {"samples_per_s": round((s1 - s0) / (t1 - t0), 2), "points": len(inside), "span_s": round(t1 - t0, 3)}


def read_progress(path: Path) -> list[tuple[float, int]]:
    points = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2:
            points.append((float(parts[0]), int(parts[1])))
    return points


def ab_summary(points: list[tuple[float, int]], windows: list[tuple[str, float, float]]) -> dict:
    rows = []
    for label, start, end in windows:
        rows.append({"label": label, "start": start, "end": end, **window_rate(points, start, end)})

    def mean_of(label: str):
        vals = [r["samples_per_s"] for r in rows if r["label"] == label and r["samples_per_s"] is not None]
        return round(sum(vals) / len(vals), 2) if vals else None

    a, b = mean_of("A"), mean_of("B")
    diff = round((a - b) / a * 100.0, 3) if a and b is not None else None
    others = sorted({r["label"] for r in rows} - {"A"})
    return {
        "windows": rows,
        "unwatched_mean": a,
        "watched_mean": b,
        "slowdown_pct": diff,
        **local_slowdown(rows),
        "by_label": {label: local_slowdown(rows, label) for label in others},
    }


# two-sided 95% quantiles of Student's t, by degrees of freedom (1..30; 1.96 beyond)
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
       2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
       2.052, 2.048, 2.045, 2.042]


def local_slowdown(rows: list[dict], watched: str = "B") -> dict:
    """Each watched window (label `watched`) against the nearest unwatched (A) window on each side, so that a
    job whose speed drifts over the run (the GPU warming, a neighbour's load) compares like with
    like: per B, slowdown % = (mean of its neighbouring A rates - its rate) / that mean. Returns
    their mean and a 95% confidence interval (Student's t); the slowdown is shown below a bound
    only when the interval's upper end is."""
    rates = [(r["label"], r["samples_per_s"]) for r in rows]
    per_b = []
    for i, (label, rate) in enumerate(rates):
        if label != watched or rate is None:
            continue
        near = []
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(rates) and rates[j][0] != "A":
                j += step
            if 0 <= j < len(rates) and rates[j][1] is not None:
                near.append(rates[j][1])
        if near:
            ref = sum(near) / len(near)
            per_b.append((ref - rate) / ref * 100.0)
    if not per_b:
        return {"local_slowdown_pct": None, "local_ci95_pct": None, "local_n": 0}
    n = len(per_b)
    mean = sum(per_b) / n
    if n < 2:
        return {"local_slowdown_pct": round(mean, 3), "local_ci95_pct": None, "local_n": n}
    sd = statistics.stdev(per_b)
    half = (T95[n - 2] if n - 1 <= len(T95) else 1.96) * sd / n ** 0.5
    return {
        "local_slowdown_pct": round(mean, 3),
        "local_ci95_pct": [round(mean - half, 3), round(mean + half, 3)],
        "local_n": n,
        "local_per_window_pct": [round(x, 3) for x in per_b],
    }


def cmd_ab(a: argparse.Namespace) -> int:
    windows = []
    for w in a.window:
        label, start, end = w.split(":")
        windows.append((label, float(start), float(end)))
    print(json.dumps(ab_summary(read_progress(Path(a.progress)), windows)))
    return 0


# ---- results -----------------------------------------------------------------------------------

JOB_KEYS = (
    "samples_per_s",
    "gpu_util_mean",
    "gpu_util_samples",
    "gpu_util_source",
    "steps",
    "measured_s",
    "stopped_by",
    "effective",
    "env",
    "memory",
    "timings",
    "device",
    "torch",
)


def job_summary(path: Path, rc: int | None) -> dict | None:
    data, err = load_json(path)
    if data is None:
        return {"error": err, "exit_code": rc} if rc is not None else None
    out = {k: data.get(k) for k in JOB_KEYS if k in data}
    out["exit_code"] = rc
    return out


def sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def cmd_fault_record(a: argparse.Namespace) -> int:
    """Gather one fault's files (layout made by run.sh) into fault.json."""
    d = Path(a.dir)
    expect, also_ok = split_ids(a.expect), split_ids(a.also_ok)
    plan, err = load_json(d / "plan.json")
    judged = judge_plan(plan, err, expect, also_ok)
    judged["exit_code"] = a.plan_rc
    apply_data, apply_err = load_json(d / "apply.json")
    apply = {"exit_code": a.apply_rc, "files_changed": a.changed == "yes"}
    if apply_err:
        apply["error"] = apply_err
    elif isinstance(apply_data, dict):
        for key in ("changes", "applied", "results", "status", "run_id"):
            if key in apply_data:
                apply[key] = apply_data[key]
    for name in ("config.yaml", "job.env"):
        before, after = sha(d / name.replace(".", ".degraded.", 1)), sha(d / name)
        apply.setdefault("changed_files", [])
        if before != after:
            apply["changed_files"].append(name)
    after_plan = None
    if (d / "plan_after.json").exists():
        p2, e2 = load_json(d / "plan_after.json")
        j2 = judge_plan(p2, e2, expect, also_ok)
        after_plan = {
            "exit_code": a.after_plan_rc,
            "parsed": j2["parsed"],
            "fails": j2["fails"],
            "expected_still_fails": j2["fired"],
            "error": j2.get("error"),
        }
    degraded = job_summary(d / "degraded" / "job.json", a.degraded_rc)
    after = job_summary(d / "after" / "job.json", a.after_rc) if (d / "after").exists() else None
    record = {
        "name": a.fault,
        "target": a.target,
        "overrides": split_ids(a.overrides.replace(";", ",")) if a.overrides else [],
        "env": split_ids(a.env.replace(";", ",")) if a.env else [],
        "expected": expect,
        "also_ok": also_ok,
        "inputs": split_ids(a.inputs),
        "degraded": degraded,
        "plan": judged,
        "apply": apply,
        "after": after,
        "after_plan": after_plan,
        "note": a.note or None,
    }
    (d / "fault.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({"fault": a.fault, "detected": judged["detected"], "false_findings": judged["false_findings"]}))
    return 0


def rate(job: dict | None) -> float | None:
    if not job:
        return None
    v = job.get("samples_per_s")
    return float(v) if isinstance(v, (int, float)) else None


def assemble(work: Path, meta: dict) -> dict:
    faults = []
    for name in meta.get("fault_order", []):
        f = work / "faults" / name / "fault.json"
        if f.exists():
            faults.append(json.loads(f.read_text(encoding="utf-8")))
    healthy = next((f for f in faults if f["name"] == "healthy"), None)
    base = rate(healthy["degraded"]) if healthy else None
    for f in faults:
        deg, aft = rate(f["degraded"]), rate(f["after"])
        f["healthy_samples_per_s"] = base
        f["degraded_fraction"] = round(deg / base, 4) if base and deg is not None else None
        f["recovered_fraction"] = round(aft / base, 4) if base and aft is not None else None
    overhead, _ = load_json(work / "overhead.json") if (work / "overhead.json").exists() else (None, None)
    sizing, _ = load_json(work / "sizing.json") if (work / "sizing.json").exists() else (None, None)
    return {
        "version": VERSION,
        **{k: v for k, v in meta.items() if k != "fault_order"},
        "healthy_samples_per_s": base,
        "faults": faults,
        "skipped": meta.get("skipped", []),
        "sizing": sizing,
        "overhead": overhead,
    }


def cmd_assemble(a: argparse.Namespace) -> int:
    work = Path(a.work)
    meta, err = load_json(work / "meta.json")
    if meta is None:
        print(f"error: {err}", file=sys.stderr)
        return 1
    results = assemble(work, meta)
    out = Path(a.out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return 0


def cmd_meta(a: argparse.Namespace) -> int:
    """Update meta.json: `--set key=json` pairs, `--append key=json` onto a list."""
    path = Path(a.file)
    meta = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for item in a.set or []:
        k, v = item.split("=", 1)
        meta[k] = json.loads(v)
    for item in a.append or []:
        k, v = item.split("=", 1)
        meta.setdefault(k, []).append(json.loads(v))
    path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def cmd_combine(a: argparse.Namespace) -> int:
    """Write {name: content} for `name=path` pairs: JSON files parsed, other files as text."""
    out = {}
    for item in a.parts:
        name, path = item.split("=", 1)
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            out[name] = {"error": f"cannot read `{path}`: {e.strerror}"}
            continue
        try:
            out[name] = json.loads(text)
        except json.JSONDecodeError:
            out[name] = text[:4000]
    Path(a.out).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def cmd_get(a: argparse.Namespace) -> int:
    """Print one dotted key of a JSON file (nothing, exit 0, when the file or key is missing)."""
    data, _err = load_json(Path(a.file))
    for k in a.key.split("."):
        data = data.get(k) if isinstance(data, dict) else None
    if data is not None:
        print(data if not isinstance(data, (dict, list, bool)) else json.dumps(data))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("make-job", help="write DIR/config.yaml and DIR/job.env")
    p.add_argument("--base", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--name", default="job")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="dotted config key; VALUE read as YAML")
    p.add_argument("--env", action="append", metavar="NAME=VALUE")
    p.set_defaults(fn=cmd_make_job)

    p = sub.add_parser("env-args", help="print a dotenv file as NUL-separated NAME=VALUE")
    p.add_argument("file")
    p.add_argument("--check", action="store_true", help="print the parsed pairs as JSON instead")
    p.set_defaults(fn=cmd_env_args)

    p = sub.add_parser("wait-ready", help="wait for a file while a pid lives")
    p.add_argument("--file", required=True)
    p.add_argument("--pid", type=int)
    p.add_argument("--timeout", type=float, default=180.0)
    p.set_defaults(fn=cmd_wait_ready)

    p = sub.add_parser("check-plan", help="judge a plan JSON against expected rule ids")
    p.add_argument("--plan", required=True)
    p.add_argument("--expect", default="")
    p.add_argument("--also-ok", default="")
    p.set_defaults(fn=cmd_check_plan)

    p = sub.add_parser("time-cmd", help="median wall time of a command")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--keep-output", help="write the first run's output here")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(fn=cmd_time_cmd)

    p = sub.add_parser("ab", help="samples/s per window from a progress file")
    p.add_argument("--progress", required=True)
    p.add_argument("--window", action="append", required=True, metavar="LABEL:START:END")
    p.set_defaults(fn=cmd_ab)

    p = sub.add_parser("fault-record", help="gather one fault's files into fault.json")
    for name in ("dir", "fault", "target"):
        p.add_argument(f"--{name}", required=True)
    for name in ("expect", "also-ok", "overrides", "env", "inputs", "note"):
        p.add_argument(f"--{name}", default="")
    for name in ("plan-rc", "apply-rc", "degraded-rc", "after-rc", "after-plan-rc"):
        p.add_argument(f"--{name}", type=int)
    p.add_argument("--changed", choices=["yes", "no"], default="no")
    p.set_defaults(fn=cmd_fault_record)

    p = sub.add_parser("assemble", help="write results.json from WORK/meta.json and the faults")
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_assemble)

    p = sub.add_parser("meta", help="update meta.json")
    p.add_argument("--file", required=True)
    p.add_argument("--set", action="append")
    p.add_argument("--append", action="append")
    p.set_defaults(fn=cmd_meta)

    p = sub.add_parser("get", help="print one key of a JSON file")
    p.add_argument("--file", required=True)
    p.add_argument("--key", required=True)
    p.set_defaults(fn=cmd_get)

    p = sub.add_parser("combine", help="gather files into one JSON object")
    p.add_argument("--out", required=True)
    p.add_argument("parts", nargs="+", metavar="NAME=PATH")
    p.set_defaults(fn=cmd_combine)

    a = ap.parse_args(argv)
    return a.fn(a)


if __name__ == "__main__":
    raise SystemExit(main())
