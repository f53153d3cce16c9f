#!/usr/bin/env bash
# bench/perf_device.sh GPUFIX OUTDIR: issue 15's measurements on a GPU host, in one go.
#  1. the native CUDA check on this host, recorded (`gpufix snapshot`, the check's own answer);
#  2. `plan --timings` (text and JSON) and `plan --deep` for the framework check;
#  3. that the default plan starts no Python (python3/python on PATH replaced by stand-ins
#     that leave a mark);
#  4. wall times: one unmeasured warm-up each, then 5 runs each of `nvidia-smi -q`,
#     `gpufix plan --sample 0s` and `gpufix plan --sample 5s`, alternating, same run.
# Reads only: plan/snapshot never change a GPU setting.
set -uo pipefail
B=$(readlink -f "$1")
R=$2
mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
echo "== host"; date -u; uptime; nvidia-smi -L; nproc
echo "== 1. snapshot (records the native CUDA check)"
"$B" --no-system snapshot --sample 0 -o "$R/h200.snapshot.json"; echo "rc=$?"
python3 - "$R/h200.snapshot.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps(s.get("cuda_checks"), indent=1))
print("files read:", len(s["files"]), "commands:", list(s["commands"]))
PY
echo "== 2. plan --timings"
"$B" --no-system plan --sample 0s --timings >"$R/plan_timings.txt"; echo "rc=$?"
cat "$R/plan_timings.txt"
"$B" --no-system plan --sample 0s --timings --format json >"$R/plan_timings.json"; echo "rc=$?"
"$B" --no-system plan --sample 0s --deep --timings -v --only cuda >"$R/plan_deep.txt"; echo "rc=$?"
cat "$R/plan_deep.txt"
echo "== 3. no python in the default plan"
S=$(mktemp -d)
for n in python3 python python3.12; do
  printf '#!/bin/sh\necho "$0 $*" >>%s/ran\nexit 1\n' "$S" >"$S/$n"; chmod +x "$S/$n"
done
PATH="$S:$PATH" "$B" --no-system plan --sample 0s --format json >/dev/null; echo "rc=$?"
if [[ -e $S/ran ]]; then echo "PYTHON RAN:"; cat "$S/ran"; else echo "no python process was started"; fi
PATH="$S:$PATH" "$B" --no-system plan --sample 0s --deep --format json >/dev/null; echo "rc=$? (--deep)"
[[ -e $S/ran ]] && { echo "with --deep python ran:"; cut -c1-60 "$S/ran"; }
echo "== 4. wall times"
# the CUDA check cache lives in the default state directory; remove what this run created
had_state=0; [[ -e /var/lib/gpufix ]] && had_state=1
python3 - "$B" "$R/times.json" <<'PY'
import json, statistics, subprocess, sys, time
b, out = sys.argv[1], sys.argv[2]
cmds = {
    "nvidia-smi -q": ["nvidia-smi", "-q"],
    # default: a passed CUDA check younger than 10 min is reused (the warm-up run leaves one)
    "gpufix plan --sample 0s": [b, "plan", "--sample", "0s"],
    # cold: the native CUDA check (a context on every GPU) runs every time
    "gpufix plan --sample 0s --cuda-check-max-age 0": [b, "plan", "--sample", "0s", "--cuda-check-max-age", "0"],
    "gpufix plan --sample 5s": [b, "plan", "--sample", "5s"],
}
def once(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.returncode
for argv in cmds.values():
    once(argv)  # warm-up, not counted
res = {k: {"runs_s": [], "exit": []} for k in cmds}
for i in range(5):
    for k, argv in cmds.items():
        s, rc = once(argv)
        res[k]["runs_s"].append(round(s, 4)); res[k]["exit"].append(rc)
for k, v in res.items():
    v["median_s"] = round(statistics.median(v["runs_s"]), 4)
smi = res["nvidia-smi -q"]["median_s"]
for k, v in res.items():
    v["ratio_to_nvidia_smi_q"] = round(v["median_s"] / smi, 3)
    print(f"{k:48} median {v['median_s']:.4f} s  runs {v['runs_s']}  exit {v['exit']}  ratio {v['ratio_to_nvidia_smi_q']}")
json.dump(res, open(out, "w"), indent=1)
PY
date -u
ls -l /var/lib/gpufix/cache 2>/dev/null && cat /var/lib/gpufix/cache/cuda-check.json 2>/dev/null | head -c 600; echo
(( had_state )) || rm -rf /var/lib/gpufix
