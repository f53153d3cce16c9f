#!/usr/bin/env bash
# bench/record_cost_split.sh: which part of `gpufix record` costs the job its throughput. One
# healthy training job (as bench/record_overhead.sh runs it) goes through windows
#   A R A P A N A R A P A N … A
# A: nothing watches it; R: `gpufix record --pid PID` (everything); P: only NVML's PCIe
# throughput, rx and tx, every 200 ms (as record reads it); N: only record's other NVML reads
# (utilization, memory, SM clock, power, throttle reasons) every 200 ms. P and N call
# libnvidia-ml through ctypes. Each watched window is compared with the A windows either side
# (harness.py `ab`, by_label). Reads only. Writes WORK/cost_split/{ab.json,summary.txt}.
#
#   bench/record_cost_split.sh --gpufix BIN --work DIR [--window 10] [--rounds 4]
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
H="$BENCH/harness.py"
GPUFIX=""; WORK=""; WIN=10; ROUNDS=4; BUDGET_S=560; START=$(date +%s)
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
while (( $# )); do
  case $1 in
    --gpufix) GPUFIX=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --window) WIN=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "error: unknown argument \`$1\`" >&2; exit 1 ;;
  esac
done
[[ -n $GPUFIX && -n $WORK ]] || { echo "error: --gpufix PATH and --work DIR are required" >&2; exit 1; }
GPUFIX=$(readlink -f "$GPUFIX")
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
trap stop_jobs EXIT
ODIR="$WORK/cost_split"; rm -rf "$ODIR"; mkdir -p "$ODIR"
N=$(( 6 * ROUNDS + 1 ))
adir="$ODIR/job"
"$PY" "$H" make-job --base "$BENCH/configs/healthy.yaml" --dir "$adir" --name cost-split \
  --set "train.max_seconds=$(( N * (WIN + 3) + 30 ))" --set "data.decode_passes=2" \
  --set "train.warmup_steps=15" >/dev/null
start_job "$adir" run $(( N * (WIN + 3) + 180 )) --progress-out "$adir/run/progress.txt"
wait_started "$adir/run" 120 || { echo "error: the job ended early; see $adir/run/job.log" >&2; exit 1; }
nvml_loop() { # $1: pcie | other; runs for $2 seconds
  "$PY" - "$1" "$2" <<'PYEOF'
import ctypes as C, sys, time
L = C.CDLL("libnvidia-ml.so.1"); L.nvmlInit_v2()
h = C.c_void_p(); L.nvmlDeviceGetHandleByIndex_v2(0, C.byref(h))
u = C.c_uint(); b = C.create_string_buffer(64); ull = C.c_ulonglong()
end = time.time() + float(sys.argv[2]); n = 0
while time.time() < end:
    t = time.time()
    if sys.argv[1] == "pcie":
        L.nvmlDeviceGetPcieThroughput(h, 0, C.byref(u)); L.nvmlDeviceGetPcieThroughput(h, 1, C.byref(u))
    else:
        L.nvmlDeviceGetUtilizationRates(h, b); L.nvmlDeviceGetMemoryInfo(h, b)
        L.nvmlDeviceGetClockInfo(h, 1, C.byref(u)); L.nvmlDeviceGetPowerUsage(h, C.byref(u))
        L.nvmlDeviceGetCurrentClocksEventReasons(h, C.byref(ull))
    n += 1
    time.sleep(max(0.0, 0.2 - (time.time() - t)))
print(n)
PYEOF
}
labels=()
for (( k = 0; k < ROUNDS; k++ )); do labels+=(A R A P A N); done
labels+=(A)
windows=(); i=0
for label in "${labels[@]}"; do
  i=$(( i + 1 )); t0=$(date +%s.%N)
  case $label in
    A) sleep "$WIN" ;;
    R) "$GPUFIX" --no-system record --pid "$JOB_PID" --for "${WIN}s" -o "$ODIR/rec$i.json" >/dev/null 2>"$ODIR/rec$i.err" || true ;;
    P) nvml_loop pcie "$WIN" >"$ODIR/p$i.txt" ;;
    N) nvml_loop other "$WIN" >"$ODIR/n$i.txt" ;;
  esac
  t1=$(date +%s.%N); windows+=(--window "$label:$t0:$t1")
done
kill -TERM "$JOB_PID" 2>/dev/null || true
wait_job
"$PY" "$H" ab --progress "$adir/run/progress.txt" "${windows[@]}" >"$ODIR/ab.json"
"$PY" - "$ODIR/ab.json" <<'PYEOF' | tee "$ODIR/summary.txt"
import json, sys
ab = json.load(open(sys.argv[1]))
for label, s in ab["by_label"].items():
    print(label, "slowdown %", s["local_slowdown_pct"], "95% CI", s["local_ci95_pct"], "n", s["local_n"])
PYEOF
