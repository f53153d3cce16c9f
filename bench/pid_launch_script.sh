#!/usr/bin/env bash
# Issue 22 on the GPU: a job started by `bash launch.sh` whose line is
# `CUDA_LAUNCH_BLOCKING=1 python3 train.py --config …`. gpufix attaches with `--pid` alone,
# plans the edit of that line in launch.sh, applies it; the job is restarted from the edited
# script and its samples/s compared with the same job started healthy.
#
#   bench/pid_launch_script.sh --out DIR [--gpufix BIN] [--python PY]
#
# Leaves in DIR: launch.sh (as edited), launch.sh.orig, plan.txt, plan.json, apply.txt,
# healthy.json, broken.json, fixed.json (train.py's result lines), rollback.txt, summary.txt.
# Only reads the GPU; writes only under DIR (gpufix's journal goes to its state directory).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=""; gpufix="$here/../target/release/gpufix"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --gpufix) gpufix=$2; shift 2;;
    --python) py=$2; shift 2;;
    *) echo "unknown argument $1" >&2; exit 1;;
  esac
done
[ -n "$out" ] || { echo "--out DIR is needed" >&2; exit 1; }
mkdir -p "$out"; out=$(readlink -f "$out"); gpufix=$(readlink -f "$gpufix"); cd "$out" || exit 1
printf 'data:\n  num_workers: 8\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: 45\n  warmup_max_s: 3\n' > config.yaml
cat > launch.sh <<EOF
#!/bin/bash
# debugging a hang
CUDA_LAUNCH_BLOCKING=1 $py $here/train.py --config config.yaml \\
    --ready-file ready --pid-file pid
EOF
cp launch.sh launch.sh.orig

# start `bash launch.sh` (never from a shell that has the variable), wait for the measured window
start() { rm -f ready pid; env -u CUDA_LAUNCH_BLOCKING bash "$1" > "$2.log" 2>&1 & shell=$!
  for _ in $(seq 1 240); do [ -f ready ] && break; kill -0 $shell 2>/dev/null || break; sleep 0.5; done; }
finish() { wait $shell; tail -n 1 "$1.log" > "$1.json"; }

# the healthy job: the same script without the prefix
sed 's/^CUDA_LAUNCH_BLOCKING=1 //' launch.sh.orig > healthy.sh
start healthy.sh healthy; finish healthy

start launch.sh broken
job=$(cat pid)
"$gpufix" --no-system plan --pid "$job" --sample 5s --only cuda.launch-blocking > plan.txt 2>&1; echo "plan exit $?" >> plan.txt
"$gpufix" --no-system plan --pid "$job" --sample 5s --only cuda.launch-blocking --format json > plan.json 2>/dev/null
"$gpufix" --no-system apply --pid "$job" --sample 5s --only cuda.launch-blocking --yes --allow env.unset > apply.txt 2>&1; echo "apply exit $?" >> apply.txt
finish broken
diff launch.sh.orig launch.sh > launch.diff

# restart the job from the edited script (`restart: job`)
start launch.sh fixed; finish fixed

rate() { "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples_per_s"])' "$1"; }
h=$(rate healthy.json); b=$(rate broken.json); f=$(rate fixed.json)
{
  echo "healthy $h samples/s; broken $b; fixed $f"
  "$py" -c 'import sys; h,f=float(sys.argv[1]),float(sys.argv[2]); print(f"fixed/healthy {f/h*100:.1f}% (issue 22 asks >= 95%)")' "$h" "$f"
  echo "launch.sh diff (only the prefix goes):"; cat launch.diff
} | tee summary.txt
# undo the edit (byte-exact), so the run leaves the script as it was
"$gpufix" rollback > rollback.txt 2>&1; echo "rollback exit $?" >> rollback.txt
cmp launch.sh launch.sh.orig && echo "rollback restored launch.sh byte for byte" | tee -a summary.txt
