#!/usr/bin/env bash
# Issue 26 on the GPU: close the loop as a user would, with the plan outliving the job.
# For each case: start the healthy job and note its samples/s; start the slow job; `gpufix plan
# --pid PID -o plan.json` and `gpufix record --pid PID` on it while it runs; STOP the job; `gpufix
# apply plan.json` (the process is gone); start the same command again and record it; compare.
#
#   bench/issue26_h200.sh --out DIR [--gpufix BIN] [--python PY] [--cases yaml,script] [--seconds N]
#                         [--pairs N] [--no-overhead]
#
# --pairs N: after the fix, N-1 more healthy/fixed pairs run alternately, and the figure is the
# ratio of the means (one pair: a single healthy run against a single fixed one). A throw-away
# warm-up run of the healthy job goes first whatever N is: the first job on a freshly started
# machine runs cold (a 2026-12-03 run: 13.6 s warm-up and 65% GPU against 3.4 s and 83% after).
#
# Cases: `yaml` — bench/train.py --config config.yaml with `num_workers: 0`;
#        `script` — `bash launch.sh` whose line runs bench/public/hf_style.py --dataloader_num_workers 0.
# Leaves per case in DIR/CASE/: the config or script as edited and its .orig, plan.txt, plan.json,
# apply.txt, before.json and after.json (recordings), report.html, healthy/broken/fixed job logs,
# and a line in DIR/summary.txt. Then the recording overhead: the healthy yaml job twice in one
# run, with and without `gpufix record` attached, and record's peak RSS (DIR/overhead.txt).
# Only reads the GPU; writes only under DIR (gpufix's journal goes to DIR/state).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=""; gpufix="$here/../target/release/gpufix"; cases="yaml,script"; secs=40; pairs=1; overhead=1
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --gpufix) gpufix=$2; shift 2;;
    --python) py=$2; shift 2;;
    --cases) cases=$2; shift 2;;
    --seconds) secs=$2; shift 2;;
    --pairs) pairs=$2; shift 2;;
    --no-overhead) overhead=0; shift;;
    *) echo "unknown argument $1" >&2; exit 1;;
  esac
done
[ -n "$out" ] || { echo "--out DIR is needed" >&2; exit 1; }
mkdir -p "$out"; out=$(readlink -f "$out"); gpufix=$(readlink -f "$gpufix")
state="$out/state"; mkdir -p "$state"
g() { "$gpufix" --no-system "$@"; }

# start FILE-TO-RUN LOGNAME: run `bash FILE` in the background and wait until the job is in its
# measured window (the ready file), or gone
start() { rm -f ready pid; env -u CUDA_LAUNCH_BLOCKING -u PYTORCH_CUDA_ALLOC_CONF bash "$1" > "$2.log" 2>&1 & shell=$!
  for _ in $(seq 1 240); do [ -f ready ] && break; kill -0 $shell 2>/dev/null || break; sleep 0.5; done; }
finish() { wait $shell; }
rate() { "$py" - "$1" <<'EOF'
import json, sys
for line in reversed(open(sys.argv[1], errors="replace").read().splitlines()):
    line = line.strip()
    if line.startswith("{") and "samples_per_s" in line:
        print(json.loads(line)["samples_per_s"]); break
else:
    print("nan")
EOF
}

IFS=, read -r -a list <<< "$cases"
for c in "${list[@]}"; do
  d="$out/$c"; mkdir -p "$d"; cd "$d" || exit 1
  case "$c" in
    yaml)
      cfg=config.yaml
      mk() { printf 'data:\n  num_workers: %s\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: %s\n  warmup_max_s: 3\n' "$1" "$secs"; }
      mk 0 > config.yaml; mk 8 > healthy.yaml
      printf '#!/bin/bash\nexec %s %s/train.py --config config.yaml --ready-file ready --pid-file pid\n' "$py" "$here" > run.sh
      sed 's/config.yaml/healthy.yaml/' run.sh > healthy.sh
      allow=(--allow config.set)
      ;;
    script)
      cfg=launch.sh
      cat > launch.sh <<EOF
#!/bin/bash
# fine-tune the classifier
$py $here/public/hf_style.py --output_dir out \\
    --dataloader_num_workers 0 --per_device_train_batch_size 128 \\
    --max-seconds $secs --ready-file ready --pid-file pid
EOF
      sed 's/--dataloader_num_workers 0/--dataloader_num_workers 8/' launch.sh > healthy.sh
      allow=(--allow config.set)
      ;;
  esac
  cp "$cfg" "$cfg.orig"
  runner=run.sh; [ "$c" = script ] && runner=launch.sh

  start healthy.sh warmup; finish
  start healthy.sh healthy; finish

  start "$runner" broken
  job=$(cat pid)
  g plan --pid "$job" --sample 5s -o plan.json > plan.txt 2>&1; echo "plan exit $?" >> plan.txt
  /usr/bin/time -v "$gpufix" --no-system record --pid "$job" --for 15s --log broken.log -o before.json > record-before.txt 2>&1
  echo "record exit $?" >> record-before.txt
  # stop the job, then apply the saved plan: the process is gone
  kill "$job" 2>/dev/null; finish
  g apply plan.json --yes "${allow[@]}" --state-dir "$state" > apply.txt 2>&1; echo "apply exit $?" >> apply.txt
  diff "$cfg.orig" "$cfg" > edit.diff

  start "$runner" fixed
  job=$(cat pid 2>/dev/null)
  [ -n "$job" ] && g record --pid "$job" --for 15s --log fixed.log -o after.json > record-after.txt 2>&1
  echo "record exit $?" >> record-after.txt
  finish
  "$gpufix" report before.json --compare after.json -o report.html > report.txt 2>&1; echo "report exit $?" >> report.txt
  hs=$(rate healthy.log); fs=$(rate fixed.log)
  for k in $(seq 2 "$pairs"); do
    start healthy.sh "healthy$k"; finish; hs="$hs $(rate healthy$k.log)"
    start "$runner" "fixed$k"; finish; fs="$fs $(rate fixed$k.log)"
  done

  b=$(rate broken.log)
  {
    echo "== $c: healthy $hs samples/s; broken (stopped early) $b; fixed $fs"
    "$py" -c 'import sys, statistics as s; h=[float(x) for x in sys.argv[1].split()]; f=[float(x) for x in sys.argv[2].split()]; print(f"fixed/healthy {s.mean(f)/s.mean(h)*100:.1f}% over {len(h)} alternating pair(s) (issue 26 asks >= 95%)")' "$hs" "$fs"
    echo "edit:"; cat edit.diff
    grep -E "exit" plan.txt apply.txt record-before.txt record-after.txt report.txt
    grep -E "Maximum resident" record-before.txt
    ls -l before.json after.json report.html 2>/dev/null | awk '{print $5, $9}'
  } | tee -a "$out/summary.txt"
  g rollback --state-dir "$state" > rollback.txt 2>&1; echo "rollback exit $?" >> rollback.txt
done

[ "$overhead" = 1 ] || exit 0
# recording overhead: the healthy yaml job, A (no record) / B (record attached) / A / B
d="$out/overhead"; mkdir -p "$d"; cd "$d" || exit 1
printf 'data:\n  num_workers: 8\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: 25\n  warmup_max_s: 3\n' > healthy.yaml
printf '#!/bin/bash\nexec %s %s/train.py --config healthy.yaml --ready-file ready --pid-file pid\n' "$py" "$here" > run.sh
for i in 1 2; do
  start run.sh "plain$i"; finish
  start run.sh "rec$i"; job=$(cat pid)
  /usr/bin/time -v "$gpufix" --no-system record --pid "$job" --for 20s -o "rec$i.json" > "rec$i.txt" 2>&1
  finish
done
{
  for i in 1 2; do echo "pair $i: without $(rate plain$i.log) samples/s, with record $(rate rec$i.log)"; done
  grep -h "Maximum resident" rec1.txt rec2.txt
  ls -l rec1.json rec2.json | awk '{print $5, $9}'
} | tee "$out/overhead.txt"
