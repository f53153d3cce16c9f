"""Stand-in for bench/train.py in the harness tests (no torch): same flags and files, a
throughput made up from the config so that each fault and each fix moves it, and a memory file.
It lets bench/run.sh be exercised end to end on a machine without a GPU; it measures nothing."""

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("config")
ap.add_argument("--pid-file", type=Path)
ap.add_argument("--ready-file", type=Path)
ap.add_argument("--json-out", type=Path)
ap.add_argument("--progress-out", type=Path)
ap.add_argument("--out-dir", type=Path)
ap.add_argument("--mode", default="train")
ap.add_argument("--no-profile", action="store_true")
a = ap.parse_args()
a.pid_file.write_text(f"{os.getpid()}\n")
cfg = yaml.safe_load(open(a.config))
d, t = cfg["data"], cfg["train"]
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

rate = 1000.0
rate *= min(1.0, d["num_workers"] / 8) if d["num_workers"] else 0.25
rate *= 1.0 if d["pin_memory"] else 0.8
rate *= 0.7 if os.environ.get("CUDA_LAUNCH_BLOCKING") == "1" else 1.0
rate *= 0.95 if t.get("sync_every_step") else 1.0
rate *= 0.5 if d.get("slow_read_ms", 0) > 0 else 1.0
out = a.out_dir
if t.get("profile") and not a.no_profile:
    (out / t["trace_out"]).write_bytes(b"fake trace")
frag = t.get("fragment") and "expandable_segments" not in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
if t.get("memory_summary_out"):
    (out / t["memory_summary_out"]).write_text(f"fragmented: {bool(frag)}\n")
a.ready_file.write_text(f"{time.time():.3f}\n")
t0 = time.time()
samples = 0
progress = open(a.progress_out, "a", buffering=1) if a.progress_out else None
while time.time() - t0 < float(t["max_seconds"]) and not stop:
    time.sleep(0.05)
    samples += int(rate * 0.05)
    if progress:
        progress.write(f"{time.time():.4f} {samples}\n")
result = {
    "samples_per_s": rate,
    "gpu_util_mean": 50.0,
    "steps": 1,
    "config": cfg,
    "pid": os.getpid(),
    "env": {
        "CUDA_LAUNCH_BLOCKING": os.environ.get("CUDA_LAUNCH_BLOCKING"),
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
    },
    "memory": {"ready": {"unused_at_peak_fraction": 0.6 if frag else 0.05}},
}
a.json_out.write_text(json.dumps(result) + "\n")
print(json.dumps(result))
sys.exit(0)
