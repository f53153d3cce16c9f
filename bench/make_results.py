"""Turn the benchmark's results.json into a Markdown report (RESULTS.md) judged against issue 6's
targets: every fault detected, no false finding on the healthy job, throughput recovered to at
least 95% of healthy where the fix is a config or env change, the host-sync and slow-disk fixes
manual, fragmentation judged on detection and the applied fix, and gpufix watching a job costing
under 1% of its throughput.

    python3 bench/make_results.py results.json [more.json ...] [-o RESULTS.md]

Several files merge in order (faults by name, later files win), so a run split in two device
calls (`--no-overhead`, then `--overhead-only`) still makes one report. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

RECOVER_TARGET = 0.95
OVERHEAD_TARGET_PCT = 1.0
OVERHEAD_ROWS = [
    ("gpufix_plan_sample_0s", "`gpufix plan --sample 0s`"),
    ("gpufix_plan_sample_5s", "`gpufix plan --sample 5s`"),
    ("nvidia_smi_q", "`nvidia-smi -q`"),
    ("gpu_diagnose_sh", "checklist `gpu_diagnose.sh` (as written)"),
]


def merge(docs: list[dict]) -> dict:
    out: dict = {"faults": []}
    names: dict[str, int] = {}
    for d in docs:
        for k, v in d.items():
            if k == "faults":
                for f in v:
                    if f["name"] in names:
                        out["faults"][names[f["name"]]] = f
                    else:
                        names[f["name"]] = len(out["faults"])
                        out["faults"].append(f)
            elif v is not None:
                out[k] = v
    base = next((f.get("degraded") or {} for f in out["faults"] if f["name"] == "healthy"), {}).get("samples_per_s")
    if base:
        out["healthy_samples_per_s"] = base
        for f in out["faults"]:
            after = (f.get("after") or {}).get("samples_per_s")
            deg = (f.get("degraded") or {}).get("samples_per_s")
            f["healthy_samples_per_s"] = base
            f["recovered_fraction"] = round(after / base, 4) if after is not None else None
            f["degraded_fraction"] = round(deg / base, 4) if deg is not None else None
    return out


def num(v, digits: int = 0) -> str:
    if v is None:
        return "—"
    return f"{v:,.{digits}f}"


def pct(v) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def rate_cell(job: dict | None) -> str:
    if not job:
        return "—"
    if job.get("samples_per_s") is None:
        return f"failed (exit {job.get('exit_code')})"
    util = job.get("gpu_util_mean")
    return f"{num(job['samples_per_s'])} ({num(util)}% util)" if util is not None else num(job["samples_per_s"])


def ids(xs: list[str]) -> str:
    return ", ".join(f"`{x}`" for x in xs) if xs else "none"


def judge(f: dict) -> tuple[bool, str]:
    """Whether this fault meets its target, and why not."""
    plan = f.get("plan") or {}
    apply = f.get("apply") or {}
    target = f.get("target")
    if not plan.get("parsed"):
        return False, f"no plan: {plan.get('error') or 'gpufix did not run'}"
    if target == "clean":
        fails = plan.get("fails") or []
        return (not fails), ("" if not fails else f"false findings: {ids(fails)}")
    if not plan.get("detected"):
        return (
            False,
            f"not detected ({', '.join(f'{k}={v}' for k, v in (plan.get('expected_verdicts') or {}).items())})",
        )
    if target == "recover":
        rec = f.get("recovered_fraction")
        if rec is None:
            why = "apply changed no file" if not apply.get("files_changed") else "the fixed job gave no number"
            return False, f"no recovery measured: {why} (apply exit {apply.get('exit_code')})"
        if rec < RECOVER_TARGET:
            return False, f"recovered {pct(rec)} < {RECOVER_TARGET:.0%}"
        return True, ""
    if target == "fix":
        if not apply.get("files_changed"):
            return False, f"no fix applied (apply exit {apply.get('exit_code')})"
        return True, ""
    return True, ""  # manual: detection is the target


def fault_rows(faults: list[dict]) -> list[str]:
    rows = [
        "| fault | target | rule fired | false findings | healthy samples/s | degraded samples/s | after apply samples/s | recovered | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {"clean": "no fail", "recover": "≥ 95% back", "manual": "detect (fix manual)", "fix": "detect + fix"}
    for f in faults:
        plan = f.get("plan") or {}
        if f.get("target") == "clean":
            fired = "—"
        elif plan.get("fired"):
            fired = "yes: " + ids(plan["fired"])
        else:
            fired = "no"
        ok, why = judge(f)
        after = f.get("after")
        after_cell = (
            rate_cell(after)
            if after
            else ("— (nothing changed)" if (f.get("apply") or {}).get("exit_code") is not None else "—")
        )
        rows.append(
            "| {name} | {target} | {fired} | {false} | {healthy} | {deg} | {after} | {rec} | {met} |".format(
                name=f["name"],
                target=labels.get(f.get("target"), f.get("target")),
                fired=fired,
                false=ids(plan.get("false_findings") or []),
                healthy=num(f.get("healthy_samples_per_s")),
                deg=rate_cell(f.get("degraded")),
                after=after_cell,
                rec=pct(f.get("recovered_fraction")),
                met="yes" if ok else f"**no**: {why}",
            )
        )
    return rows


def targets(doc: dict) -> list[str]:
    faults = doc.get("faults", [])
    by = {f["name"]: f for f in faults}
    lines = ["## Targets", ""]
    detect = [f for f in faults if f.get("target") != "clean"]
    missed = [f["name"] for f in detect if not (f.get("plan") or {}).get("detected")]
    if not detect:
        lines.append("- Every fault detected: no fault was run.")
    else:
        lines.append(
            f"- Every fault detected: {'yes' if detect and not missed else 'no'} ({len(detect) - len(missed)} of {len(detect)}{'; missed: ' + ', '.join(missed) if missed else ''})."
        )
    h = by.get("healthy")
    if h:
        ok, why = judge(h)
        lines.append(f"- No false finding on the healthy job: {'yes' if ok else 'no: ' + why}.")
    else:
        lines.append("- No false finding on the healthy job: not run.")
    rec = [f for f in faults if f.get("target") == "recover"]
    if rec:
        parts = [f"{f['name']} {pct(f.get('recovered_fraction'))}" for f in rec]
        all_ok = all(judge(f)[0] for f in rec)
        lines.append(
            f"- Recovered ≥ 95% of healthy after `gpufix apply` (config/env fixes): {'yes' if all_ok else 'no'} ({'; '.join(parts)})."
        )
    for f in faults:
        if f.get("target") == "manual":
            fired = (f.get("plan") or {}).get("fired") or []
            lines.append(
                f"- {f['name']}: the fix is manual; detected by {ids(fired)}; degraded to {pct(f.get('degraded_fraction'))} of healthy."
            )
        if f.get("target") == "fix":
            mem_b = (((f.get("degraded") or {}).get("memory") or {}).get("ready") or {}).get("unused_at_peak_fraction")
            mem_a = (((f.get("after") or {}).get("memory") or {}).get("ready") or {}).get("unused_at_peak_fraction")
            env = ((f.get("after") or {}).get("env") or {}).get("PYTORCH_CUDA_ALLOC_CONF")
            lines.append(
                f"- {f['name']}: detection and fix only; fix applied: {'yes' if (f.get('apply') or {}).get('files_changed') else 'no'}"
                f" (fixed job ran with PYTORCH_CUDA_ALLOC_CONF={env or 'unset'}); reserved memory unused at peak {pct(mem_b)} before, {pct(mem_a)} after."
            )
    ab = (doc.get("overhead") or {}).get("ab") or {}
    if ab.get("slowdown_pct") is not None:
        ok = ab["slowdown_pct"] < OVERHEAD_TARGET_PCT
        lines.append(
            f"- gpufix watching a job costs < 1% of its throughput: {'yes' if ok else 'no'} ({ab['slowdown_pct']:+.2f}%)."
        )
    else:
        lines.append("- gpufix watching a job costs < 1% of its throughput: not measured.")
    return lines


def overhead(doc: dict) -> list[str]:
    o = doc.get("overhead")
    if not o:
        return []
    lines = ["## Overheads", "", "| command | median wall s | runs (s) | exit codes |", "|---|---|---|---|"]
    for key, label in OVERHEAD_ROWS:
        r = o.get(key) or {}
        if "median_s" in r:
            lines.append(
                f"| {label} | {r['median_s']:.3f} | {', '.join(f'{x:.2f}' for x in r.get('runs_s', []))} | {', '.join(str(x) for x in r.get('exit_codes', []))} |"
            )
        else:
            lines.append(f"| {label} | — | {r.get('skipped') or r.get('error') or 'not run'} | |")
    ab = o.get("ab") or {}
    if ab.get("windows"):
        lines += [
            "",
            "Training job watched by `gpufix plan --pid PID --sample 30s` (B) and not watched (A), one job, alternating:",
            "",
            "| window | samples/s | span s |",
            "|---|---|---|",
        ]
        for i, w in enumerate(ab["windows"], 1):
            lines.append(f"| {i} {w['label']} | {num(w.get('samples_per_s'), 1)} | {num(w.get('span_s'), 1)} |")
        lines.append(f"| mean A (unwatched) | {num(ab.get('unwatched_mean'), 1)} | |")
        lines.append(f"| mean B (watched) | {num(ab.get('watched_mean'), 1)} | |")
        lines.append(
            f"| difference | {'—' if ab.get('slowdown_pct') is None else format(ab['slowdown_pct'], '+.2f') + '%'} | target < 1% |"
        )
    elif ab:
        lines += ["", f"A/B: {ab.get('error') or ab.get('skipped')}"]
    cmds = o.get("gpu_diagnose_commands")
    if isinstance(cmds, dict):
        missing = [c for c, p in cmds.items() if p is None]
        lines += [
            "",
            f"Commands the checklist's `gpu_diagnose.sh` calls that are missing on this host: {ids(missing)}.",
        ]
    out = o.get("gpu_diagnose_output")
    if isinstance(out, str) and out.strip():
        lines += ["", "Its output (first run):", "", "```", out.strip()[:1500], "```"]
    return lines


def details(doc: dict) -> list[str]:
    lines = ["## Per fault", ""]
    for f in doc.get("faults", []):
        plan, apply = f.get("plan") or {}, f.get("apply") or {}
        bits = [
            f"config {', '.join(f['overrides']) or 'as healthy'}",
            f"env {', '.join(f['env']) or 'as healthy'}",
            f"plan inputs {', '.join(f.get('inputs') or []) or 'pid, config, env file'}",
            f"plan exit {plan.get('exit_code')}",
            f"all fails {ids(plan.get('fails') or [])}",
            f"apply exit {apply.get('exit_code')}",
            f"files changed {', '.join(apply.get('changed_files') or []) or 'none'}",
        ]
        ap = f.get("after_plan")
        if ap:
            bits.append(f"after restart the expected rule still fails: {ids(ap.get('expected_still_fails') or [])}")
        if f.get("note"):
            bits.append(f"note: {f['note']}")
        lines.append(f"- **{f['name']}**: " + "; ".join(bits) + ".")
    return lines


def render(doc: dict) -> str:
    host = doc.get("host") or {}
    settings = doc.get("settings") or {}
    gf = doc.get("gpufix") or {}
    lines = [
        "# gpufix benchmark results",
        "",
        (
            f"Host: {host.get('gpu') or 'unknown GPU'}; {host.get('cpus', '?')} CPUs; generated {doc.get('generated_at', '?')}; "
            f"gpufix {gf.get('version') or '?'}; measured window {settings.get('measure_s', '?')} s per run"
            f"{' (quick)' if settings.get('quick') else ''}; decode passes {settings.get('decode_passes', '?')}."
        ),
        "",
        (
            "samples/s are measured after warm-up, (GPU util) is the mean of NVML readings every 200 ms in the same window; "
            "recovered = after apply / healthy. The slow disk is SIMULATED (a sleep per item)."
        ),
        "",
    ]
    lines += fault_rows(doc.get("faults", []))
    lines += [""] + targets(doc)
    if doc.get("skipped"):
        lines += ["", "Skipped: " + "; ".join(doc["skipped"]) + "."]
    sizing = doc.get("sizing")
    if sizing:
        d, m, c = sizing.get("data_only") or {}, sizing.get("model_only") or {}, sizing.get("calibration") or {}
        lines += ["", "## Sizing", ""]
        if m:
            lines.append(
                f"- GPU alone (one batch kept on the GPU, no loader): {num(m.get('samples_per_s'))} samples/s ({num(m.get('gpu_util_mean'))}% util)."
            )
        if c:
            lines.append(
                f"- Decode cost set to {c.get('target_ms')} ms per item (4 workers match the GPU): {c.get('decode_passes')} blur passes, "
                f"{c.get('expected_ms')} ms measured in one process ({c.get('base_ms')} ms base + {c.get('per_pass_ms')} ms per pass)."
            )
        if d:
            lines.append(f"- Data pipeline alone (8 workers, no GPU work): {num(d.get('samples_per_s'))} samples/s.")
        lines.append("- The healthy job is GPU-bound when the data pipeline's rate is well above the GPU's.")
    lines += [""] + overhead(doc)
    lines += [""] + details(doc)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("-o", "--output", type=Path)
    a = ap.parse_args(argv)
    docs = []
    for p in a.results:
        try:
            docs.append(json.loads(p.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as e:
            print(f"error: cannot read `{p}`: {e}", file=sys.stderr)
            return 1
    text = render(merge(docs))
    if a.output:
        a.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
