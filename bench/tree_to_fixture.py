#!/usr/bin/env python3
"""Turn bench/proc_record.py output into a test fixture: the snapshot, plus its GPU samples as
NVML samples and the NVML reading of a recorded H200 host (the /proc tree is what the test is
about; the GPU reading only has to say one H200 is there).

    tree_to_fixture.py tree.json NVML_FROM.snapshot.json OUT.snapshot.json
"""
import json
import sys

tree, nvml_from, out = sys.argv[1:4]
d = json.load(open(tree))
snap = d["snapshot"]
ref = json.load(open(nvml_from))
snap["nvml"] = ref["nvml"][:1]
samples = []
for s in d["gpu_samples"]:
    samples.append({"ok": [{
        "index": g["index"],
        "utilization_gpu": {"ok": int(round(g["util"]))},
        "utilization_memory": {"ok": int(round(g["mem_util"]))},
        "clock_sm": {"ok": int(g["clock_sm"])},
        "power_usage_mw": {"ok": int((g["power_w"] or 0) * 1000)},
        "clocks_event_reasons": {"ok": []},
        "pcie_gen": {"ok": 5},
        "pcie_width": {"ok": 16},
        "temperature_c": {"ok": int(g["temp"])},
        "memory_used": {"ok": int(g["mem_used_mib"] * 1048576)},
    } for g in s["gpus"]]})
snap["nvml_samples"] = samples
# the ready/pid scratch files are not part of the job
snap["files"] = {k: v for k, v in snap["files"].items() if not k.endswith(("/ready", "/pid"))}
snap.setdefault("env", {})
json.dump(snap, open(out, "w"), indent=1)
