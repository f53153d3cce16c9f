#!/usr/bin/env bash
# The `--pid` alone bench (issue 13): start each case's job the way a user would, then attach
# `gpufix plan --pid PID --sample 5s` with NO --config and NO --env-file, and record what fired.
#
#   bench/pid_only.sh --out DIR [--gpufix BIN] [--pyspy BIN] [--cases healthy,workers0,...]
#
# pub_imagenet_j2 and pub_module_w0 run scripts written the way public training code is
# (bench/public: an imagenet/main.py-style `-j 2`; a `python -m pkgjob.train` job whose
# DataLoader is built in an imported module with num_workers=0 by default); both expect
# data.workers-too-few, found from the process alone.
# Per case it leaves in DIR/CASE/: config.yaml, job.log, tree.json (the job's /proc tree over
# 5 s, a gpufix snapshot: bench/proc_record.py), plan.json and plan.txt (when --gpufix is
# given). DIR/summary.tsv has one line per case. Only reads the GPU; writes only under DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=""; gpufix=""; pyspy=""; record=1; cases="healthy,workers0,workers2,pin_memory_false,launch_blocking,item_sync,other_layout,torchrun,pub_imagenet_j2,pub_module_w0"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --gpufix) gpufix=$(readlink -f "$2"); shift 2;;
    --pyspy) pyspy=$(readlink -f "$2"); shift 2;;
    --cases) cases=$2; shift 2;;
    --no-record) record=0; shift;;
    --python) py=$2; shift 2;;
    *) echo "unknown argument $1" >&2; exit 1;;
  esac
done
[ -n "$out" ] || { echo "--out DIR is needed" >&2; exit 1; }
mkdir -p "$out"; out=$(readlink -f "$out")
torchrun=$(dirname "$py")/torchrun
base='  decode_passes: 0
  batch_size: 128
  image_size: 224'
printf 'case\tpid\tlauncher_pid\tgpu_util\tplan_exit\tfails\n' > "$out/summary.tsv"

config_for() {
  case "$1" in
    healthy|launch_blocking) printf 'data:\n  num_workers: 8\n  pin_memory: true\n%s\ntrain:\n  max_seconds: 45\n  warmup_max_s: 3\n' "$base";;
    workers0) printf 'data:\n  num_workers: 0\n  pin_memory: true\n%s\ntrain:\n  max_seconds: 45\n  warmup_max_s: 3\n' "$base";;
    workers2|torchrun) printf 'data:\n  num_workers: 2\n  pin_memory: true\n%s\ntrain:\n  max_seconds: 45\n  warmup_max_s: 3\n' "$base";;
    pin_memory_false) printf 'data:\n  num_workers: 8\n  pin_memory: false\n%s\ntrain:\n  max_seconds: 45\n  warmup_max_s: 3\n' "$base";;
    item_sync) printf 'data:\n  num_workers: 8\n  pin_memory: true\n%s\ntrain:\n  max_seconds: 45\n  warmup_max_s: 3\n  sync_every_step: true\n' "$base";;
    other_layout) printf '# another layout: the loader settings under training.loader\ntraining:\n  max_seconds: 45\n  warmup_max_s: 3\n  loader:\n    workers: 2\n    pin_memory: true\n    decode_passes: 0\n    batch: 128\n';;
  esac
}

IFS=, read -r -a list <<< "$cases"
for c in "${list[@]}"; do
  d="$out/$c"; mkdir -p "$d"; cd "$d" || exit 1
  config_for "$c" > config.yaml
  rm -f ready pid
  envs=(env -u CUDA_LAUNCH_BLOCKING -u PYTORCH_CUDA_ALLOC_CONF)
  [ "$c" = launch_blocking ] && envs+=(CUDA_LAUNCH_BLOCKING=1)
  case "$c" in
    # public-style scripts (bench/public): the worker count is a `-j` flag, or the default of
    # a function in an imported module run with `python -m` from its source tree
    pub_imagenet_j2) "${envs[@]}" "$py" "$here/public/imagenet_style.py" -j 2 --ready-file ready --pid-file pid > job.log 2>&1 & ;;
    pub_module_w0) (cd "$here/public" && exec "${envs[@]}" "$py" -m pkgjob.train --ready-file "$d/ready" --pid-file "$d/pid") > job.log 2>&1 & ;;
    torchrun) "${envs[@]}" "$torchrun" --standalone --nproc_per_node=1 "$here/train.py" --config config.yaml --ready-file ready --pid-file pid > job.log 2>&1 & ;;
    workers0|item_sync) "${envs[@]}" "$py" "$here/train.py" config.yaml --ready-file ready --pid-file pid > job.log 2>&1 & ;;
    *) "${envs[@]}" "$py" "$here/train.py" --config config.yaml --ready-file ready --pid-file pid > job.log 2>&1 & ;;
  esac
  launcher=$!
  for _ in $(seq 1 120); do [ -f ready ] && break; kill -0 $launcher 2>/dev/null || break; sleep 0.5; done
  if [ ! -f ready ]; then echo "$c: job did not get ready" >&2; tail -5 job.log >&2; kill $launcher 2>/dev/null; wait $launcher 2>/dev/null
    printf '%s\t-\t-\t-\t-\tjob did not start\n' "$c" >> "$out/summary.tsv"; continue; fi
  job=$(cat pid)
  # a user attaching to a torchrun job gives the launcher's pid (`pgrep -f train.py`'s first)
  attach=$job; [ "$c" = torchrun ] && attach=$launcher
  util=-
  if [ "$record" = 1 ]; then
    "$py" "$here/proc_record.py" "$attach" --window 5 -o tree.json ${pyspy:+--pyspy "$pyspy"} --description "bench/pid_only.sh case $c" 2> record.log
    util=$(sed -n 's/.*util mean \([0-9.]*\)%.*/\1/p' record.log)
  fi
  pexit=-; fails=-
  if [ -n "$gpufix" ]; then
    # GPU utilization over the plan's window, read beside gpufix (every 200 ms)
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > util.txt 2>/dev/null & smi=$!
    PATH="$(dirname "${pyspy:-/nonexistent/x}"):$PATH" "$gpufix" --no-system plan --pid "$attach" --sample 5s --format json > plan.json 2> plan.err; pexit=$?
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    [ "$record" = 1 ] || util=$(awk -F, '{s+=$1; n++} END {if (n) printf "%.1f", s/n}' util.txt)
    fails=$("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(",".join(x["id"] for x in r.get("results",[]) if x.get("verdict")=="fail") or "none")' plan.json 2>/dev/null || echo "?")
  fi
  kill -TERM $launcher 2>/dev/null; kill -TERM "$job" 2>/dev/null
  for _ in $(seq 1 40); do kill -0 $launcher 2>/dev/null || break; sleep 0.25; done
  kill -KILL $launcher "$job" 2>/dev/null; wait $launcher 2>/dev/null
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$job" "$launcher" "$util" "$pexit" "$fails" >> "$out/summary.tsv"
  echo "$c: pid $job util ${util}% plan exit $pexit fails $fails" >&2
done
cat "$out/summary.tsv"
