#!/usr/bin/env python3
"""Stand-in for the gpufix binary in the harness tests: `plan` fails the rules the benchmark
expects from the job's config and env file, `apply` edits those files the way the real fixes do.
It exercises bench/run.sh's plumbing only; it judges nothing about gpufix."""

import argparse
import json
import sys
import time

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("cmd", nargs="?")
ap.add_argument("--version", action="store_true")
for flag in ("--pid", "--config", "--env-file", "--trace", "--evidence", "--sample", "--format", "--allow"):
    ap.add_argument(flag, action="append")
ap.add_argument("--yes", action="store_true")
a = ap.parse_args()
if a.version:
    print("gpufix 0.0.0-fake")
    sys.exit(0)
one = lambda v: v[-1] if v else None
sample = one(a.sample) or "0s"
time.sleep(min(float(sample.rstrip("s") or 0), 30) / 10)
cfg_path, env_path = one(a.config), one(a.env_file)
cfg = yaml.safe_load(open(cfg_path)) if cfg_path else None
env = {}
if env_path:
    for line in open(env_path):
        if line.strip() and not line.startswith("#"):
            k, v = line.strip().split("=", 1)
            env[k] = v
fails = []
if cfg:
    d, t = cfg["data"], cfg["train"]
    if d["num_workers"] < 8:
        fails.append("data.workers-too-few")
    if not d["pin_memory"]:
        fails.append("data.pin-memory-off")
    if a.trace and t.get("sync_every_step"):
        fails.append("launch.host-sync-in-step")
    if a.trace and d.get("slow_read_ms", 0) > 0:
        fails.append("data.dataloader-wait")
    if a.evidence and "fragmented: True" in open(one(a.evidence)).read():
        fails.append("memory.allocator-fragmentation")
if env.get("CUDA_LAUNCH_BLOCKING") == "1":
    fails.append("cuda.launch-blocking")
ids = [
    "data.workers-too-few",
    "data.pin-memory-off",
    "cuda.launch-blocking",
    "launch.host-sync-in-step",
    "data.dataloader-wait",
    "memory.allocator-fragmentation",
    "driver.nvml-unavailable",
]
results = [{"id": i, "verdict": "fail" if i in fails else "pass"} for i in ids]
if a.cmd == "plan":
    print(json.dumps({"version": 1, "results": results, "summary": {"fail": len(fails)}}))
    sys.exit(2 if fails else 0)
if a.cmd == "apply":
    changes = []
    if cfg and "data.workers-too-few" in fails:
        cfg["data"]["num_workers"] = 8
        changes.append("data.num_workers")
    if cfg and "data.pin-memory-off" in fails:
        cfg["data"]["pin_memory"] = True
        changes.append("data.pin_memory")
    if "cuda.launch-blocking" in fails:
        env.pop("CUDA_LAUNCH_BLOCKING")
        changes.append("unset CUDA_LAUNCH_BLOCKING")
    if "memory.allocator-fragmentation" in fails:
        env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        changes.append("set PYTORCH_CUDA_ALLOC_CONF")
    if changes:
        yaml.safe_dump(cfg, open(cfg_path, "w"))
        open(env_path, "w").write("".join(f"{k}={v}\n" for k, v in env.items()))
    print(json.dumps({"changes": changes}))
    sys.exit(0)
sys.exit(1)
