#!/usr/bin/env bash
# Issue 22's closed loop on a GPU host: a job started by `bash launch.sh`, whose line sets
# CUDA_LAUNCH_BLOCKING=1 as a prefix of the python command, is attached by `--pid` alone;
# `gpufix plan --pid` must plan the edit of that line in launch.sh, `gpufix apply --pid` makes it
# (only env.unset allowed: no GPU setting can change), and the job started again by the same
# `bash launch.sh` must run within 5% of the healthy job's throughput.
#
#   bench/launch_script_fix.sh --out DIR --gpufix BIN [--seconds 30]
#
# Leaves in DIR: healthy.json, degraded.json, after.json (train.py's figures), launch.sh as it
# was (launch.sh.orig) and after apply, plan.txt, plan.json, apply.txt, apply.diff, summary.txt.
# Writes only under DIR; reads the GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=""; gpufix=""; secs=30
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --gpufix) gpufix=$(readlink -f "$2"); shift 2;;
    --seconds) secs=$2; shift 2;;
    *) echo "unknown argument $1" >&2; exit 1;;
  esac
done
[ -n "$out" ] && [ -n "$gpufix" ] || { echo "--out DIR and --gpufix BIN are needed" >&2; exit 1; }
mkdir -p "$out"; out=$(readlink -f "$out"); cd "$out" || exit 1
cp "$here/train.py" "$here/imagedata.py" .
printf 'data:\n  num_workers: 8\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: %s\n  warmup_max_s: 3\n' "$secs" > config.yaml
# The launch script as a user writes it: the variable is a prefix of the command, not exported.
cat > launch.sh <<EOF
#!/bin/bash
# start training on this node
cd "\$(dirname "\$0")"
export OMP_NUM_THREADS=8
CUDA_LAUNCH_BLOCKING=1 $py train.py --config config.yaml --ready-file ready --pid-file pid --json-out "\$RESULT"
EOF
sed 's/^CUDA_LAUNCH_BLOCKING=1 //' launch.sh > launch_healthy.sh
cp launch.sh launch.sh.orig

run_job() { # run_job SCRIPT RESULT: runs to the end
  rm -f ready pid
  env -u CUDA_LAUNCH_BLOCKING RESULT="$2" bash "$1" > "$2.log" 2>&1
}
run_job launch_healthy.sh healthy.json

# degraded: attach while it runs
rm -f ready pid
env -u CUDA_LAUNCH_BLOCKING RESULT=degraded.json bash launch.sh > degraded.json.log 2>&1 &
launcher=$!
for _ in $(seq 1 240); do [ -f ready ] && break; sleep 0.5; done
pid=$(cat pid)
"$gpufix" plan --pid "$pid" --sample 5s > plan.txt 2>&1; echo "plan exit $?" >> plan.txt
"$gpufix" plan --pid "$pid" --sample 5s --format json > plan.json 2> plan.json.err
"$gpufix" apply --pid "$pid" --sample 5s --yes --allow env.unset > apply.txt 2>&1; echo "apply exit $?" >> apply.txt
diff -u launch.sh.orig launch.sh > apply.diff
wait "$launcher"

run_job launch.sh after.json
"$py" - <<'EOF' > summary.txt
import json
h = json.load(open("healthy.json"))["samples_per_s"]
d = json.load(open("degraded.json"))["samples_per_s"]
a = json.load(open("after.json"))["samples_per_s"]
print(f"healthy {h:.1f} samples/s; degraded {d:.1f} ({d/h:.1%}); after apply and restart {a:.1f} ({a/h:.1%} of healthy)")
print("within 5%:", abs(a - h) / h <= 0.05)
EOF
cat summary.txt apply.diff
