#!/usr/bin/env bash
# bench/record_gpu_bound.sh: what `gpufix record` costs a job whose speed is steady enough to
# resolve well under 1%: a GPU-bound loop (4096² fp32 matmuls on GPU 0, progress every 20 of
# them). Windows A R A R … A: in R, `gpufix record --pid PID --for WINDOW` (everything: NVML at
# 200 ms, the job's processes, the node, the plan beside it), wrapped in /usr/bin/time for the
# recorder's own CPU seconds. Each R against the A either side (harness.py `ab`). The training
# job of bench/record_overhead.sh varies by ±10% between 10 s windows; this one is the check on
# what recording does to the GPU and the driver. Reads only. Writes WORK/gpu_bound/.
#
#   bench/record_gpu_bound.sh --gpufix BIN --work DIR [--window 10] [--pairs 6]
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GPUFIX=""; WORK=""; WIN=10; PAIRS=6
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
while (( $# )); do
  case $1 in
    --gpufix) GPUFIX=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --window) WIN=$2; shift 2 ;;
    --pairs) PAIRS=$2; shift 2 ;;
    *) echo "error: unknown argument \`$1\`" >&2; exit 1 ;;
  esac
done
[[ -n $GPUFIX && -n $WORK ]] || { echo "error: --gpufix PATH and --work DIR are required" >&2; exit 1; }
GPUFIX=$(readlink -f "$GPUFIX")
ODIR="$WORK/gpu_bound"; rm -rf "$ODIR"; mkdir -p "$ODIR"
N=$(( 2 * PAIRS + 1 ))
"$PY" - "$ODIR/progress.txt" $(( N * (WIN + 2) + 20 )) <<'PYEOF' &
import sys, time, torch
out = open(sys.argv[1], "w", buffering=1)
x = torch.randn(4096, 4096, device="cuda")
for _ in range(50):
    y = x @ x
torch.cuda.synchronize()
end = time.time() + float(sys.argv[2]); n = 0
while time.time() < end:
    for _ in range(20):
        y = x @ x
    torch.cuda.synchronize()
    n += 20
    out.write(f"{time.time():.4f} {n}\n")
PYEOF
job=$!
trap 'kill $job 2>/dev/null || true' EXIT
sleep 8
windows=(); cpu=(); i=0
labels=(); for (( k = 0; k < PAIRS; k++ )); do labels+=(A R); done; labels+=(A)
for label in "${labels[@]}"; do
  i=$(( i + 1 )); t0=$(date +%s.%N)
  if [[ $label == A ]]; then
    sleep "$WIN"
  else
    /usr/bin/time -f "%U %S %e %M" -o "$ODIR/time$i.txt" "$GPUFIX" --no-system record --pid "$job" \
      --for "${WIN}s" -o "$ODIR/rec$i.json" >"$ODIR/rec$i.out" 2>"$ODIR/rec$i.err" || true
    cpu+=("$(cat "$ODIR/time$i.txt")")
  fi
  t1=$(date +%s.%N); windows+=(--window "$label:$t0:$t1")
done
kill "$job" 2>/dev/null || true; wait "$job" 2>/dev/null || true
"$PY" "$BENCH/harness.py" ab --progress "$ODIR/progress.txt" "${windows[@]}" >"$ODIR/ab.json"
printf '%s\n' "${cpu[@]}" >"$ODIR/record_cpu.txt"
"$PY" - "$ODIR" <<'PYEOF' | tee "$ODIR/summary.txt"
import json, sys
d = sys.argv[1]
ab = json.load(open(f"{d}/ab.json"))
rows = [list(map(float, l.split())) for l in open(f"{d}/record_cpu.txt") if l.strip()]
cpu = sum(r[0] + r[1] for r in rows) / max(1e-9, sum(r[2] for r in rows))
print(json.dumps({
    "local_slowdown_pct": ab["by_label"]["R"]["local_slowdown_pct"],
    "local_ci95_pct": ab["by_label"]["R"]["local_ci95_pct"],
    "local_per_window_pct": ab["by_label"]["R"].get("local_per_window_pct"),
    "recorder_cpu_share_of_one_core": round(cpu, 4),
    # /usr/bin/time's %M: the largest of the recorder and the children it waited for (the
    # CUDA check, in the first run only: later ones read its cached result)
    "max_rss_kb_per_run": [int(r[3]) for r in rows],
}))
PYEOF
