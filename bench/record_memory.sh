#!/usr/bin/env bash
# bench/record_memory.sh: `gpufix record`'s peak RSS against the samples it holds (issue 26:
# < 50 MB; memory bounded for any window). A stand-in job (a Python main process and 8
# multiprocessing workers spinning on the CPU, so 9 processes to sample) is recorded at 10 ms
# for SECONDS, twice: `--for SECONDS` (every sample kept until the file: SECONDS×100/3600
# samples per kept point) and `--for 1h` stopped by SIGINT after SECONDS (100 samples per kept
# point, merged as they come). Prints one JSON line per run: window, peak RSS kB, samples.
#
#   bench/record_memory.sh --gpufix BIN [--seconds 40] [--python python3]
set -euo pipefail
GPUFIX=""; SECS=40; PY=python3
while (( $# )); do
  case $1 in
    --gpufix) GPUFIX=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    *) echo "error: unknown argument \`$1\`" >&2; exit 1 ;;
  esac
done
[[ -n $GPUFIX ]] || { echo "error: --gpufix PATH is required" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill -- -$jp 2>/dev/null || true; rm -rf "$work"' EXIT
for window in "${SECS}s" 1h; do
  setsid "$PY" -c '
import multiprocessing as mp, time
def spin(_):
    t = time.time()
    while time.time() - t < 3600: pass
if __name__ == "__main__":
    with mp.Pool(8) as p: p.map(spin, range(8))
' & jp=$!
  sleep 2
  "$GPUFIX" --no-system record --pid "$jp" --for "$window" --interval 10ms -o "$work/rec.json" >"$work/out" 2>"$work/err" &
  rp=$!
  sleep "$SECS"
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$rp/status" 2>/dev/null || echo null)
  kill -INT "$rp" 2>/dev/null || true
  wait "$rp" || true
  kill -- -"$jp" 2>/dev/null || true
  wait "$jp" 2>/dev/null || true
  "$PY" - "$work/rec.json" "$window" "$hwm" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
held = max([len(g["t"]) for g in f["gpus"]] + [len(p["t"]) for p in f["processes"]] + [0])
print(json.dumps({"window": sys.argv[2], "peak_rss_kb": int(sys.argv[3]), "processes": len(f["processes"]),
                  "gpus": len(f["gpus"]), "points_per_group": held, "downsampled": f.get("downsampled")}))
PY
done
