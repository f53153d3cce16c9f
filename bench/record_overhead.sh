#!/usr/bin/env bash
# bench/record_overhead.sh: what `gpufix record` costs a running job (issue 26: < 1% of its
# throughput, < 50 MB RSS). One training job (bench/configs/healthy.yaml, the job bench/overhead.sh
# measures `plan` with) runs through alternating windows, A B A B … A (starting and ending
# unwatched, so every B has an A on each side): in A nothing watches it, in
# B `gpufix record --pid PID --for WINDOW` samples it at its default 200 ms (GPU, the job's
# processes, the node, py-spy once a second when py-spy is installed). The job's own progress
# file gives samples/s per window (harness.py `ab`); gpufix's peak RSS is VmHWM from
# /proc/PID/status, polled until it exits. Writes WORK/record_overhead/:
#   ab.json          unwatched_mean, watched_mean, slowdown_pct, per window; local_slowdown_pct
#                    and local_ci95_pct: each B against the A either side of it (the job's speed
#                    drifts by more than 1% over minutes; this comparison cancels a steady drift)
#   rss.json         peak RSS of each record run, kB (target < 51200), and its CPU time in
#                    clock ticks (1/100 s; up to the last poll, 0.5 s before it exits)
#   rec<N>.json      each window's recording (and .err, .rc); sizes in summary.json
#   summary.json     all of it
# With --toggle, one `gpufix record` runs through all the windows and is stopped (SIGSTOP) in
# each A and continued (SIGCONT) in each B, so that windows of a few seconds measure what
# recording costs while it samples, without a process start in every B; its start-up (NVML
# init, the first census) happens before the first window. Short windows follow the job's
# drift closely (the 36 s windows of the first runs left a ±7% interval); the recording then
# has a gap in every A, which it notes.
# Reads only; changes nothing on the GPU. Not run in CI (it needs the GPU).
#
#   bench/record_overhead.sh --gpufix target/release/gpufix --work /tmp/recbench \
#     [--python /opt/torch/.venv/bin/python3] [--ab-window 30] [--ab-pairs 3] [--interval 200ms]
#     [--pyspy-interval 1s] [--budget-s 540] [--toggle]
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
H="$BENCH/harness.py"
GPUFIX=""
WORK=""
PY=/opt/torch/.venv/bin/python3
[[ -x $PY ]] || PY=python3
AB_WINDOW_S=30
AB_PAIRS=3
INTERVAL=200ms
PYSPY_INTERVAL=1s
DECODE_PASSES=2
WARMUP_STEPS=15
BUDGET_S=540
TOGGLE=0
START=$(date +%s)
while (( $# )); do
  case $1 in
    --gpufix) GPUFIX=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --ab-window) AB_WINDOW_S=$2; shift 2 ;;
    --ab-pairs) AB_PAIRS=$2; shift 2 ;;
    --interval) INTERVAL=$2; shift 2 ;;
    --pyspy-interval) PYSPY_INTERVAL=$2; shift 2 ;;
    --budget-s) BUDGET_S=$2; shift 2 ;;
    --toggle) TOGGLE=1; shift ;;
    *) echo "error: unknown argument \`$1\`" >&2; exit 1 ;;
  esac
done
if [[ -z $GPUFIX || -z $WORK ]]; then
  echo "error: --gpufix PATH and --work DIR are required" >&2
  exit 1
fi
GPUFIX=$(readlink -f "$GPUFIX")

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
trap stop_jobs EXIT

ODIR="$WORK/record_overhead"
rm -rf "$ODIR"
mkdir -p "$ODIR"
AB_N=$(( 2 * AB_PAIRS + 1 ))
NEED=$(( AB_N * (AB_WINDOW_S + 2) + 150 ))
(( TOGGLE )) && NEED=$(( AB_N * AB_WINDOW_S + 120 ))
if ! fits "$NEED"; then
  echo "error: $AB_N windows of ${AB_WINDOW_S}s do not fit --budget-s $BUDGET_S" >&2
  exit 1
fi

adir="$ODIR/job"
"$PY" "$H" make-job --base "$BENCH/configs/healthy.yaml" --dir "$adir" --name record-overhead \
  --set "train.max_seconds=$(( AB_N * (AB_WINDOW_S + 10) + 30 ))" \
  --set "data.decode_passes=$DECODE_PASSES" --set "train.warmup_steps=$WARMUP_STEPS" >/dev/null
start_job "$adir" run $(( AB_N * (AB_WINDOW_S + 10) + 180 )) --progress-out "$adir/run/progress.txt"
wait_started "$adir/run" 120 || { echo "error: the job ended before its measured window; see $adir/run/job.log" >&2; exit 1; }
log "record overhead: job $JOB_PID started; $AB_N windows of ${AB_WINDOW_S}s"

windows=()
rss_rows=()
i=0
labels=()
for (( k = 0; k < AB_PAIRS; k++ )); do labels+=(A B); done
labels+=(A)
if (( TOGGLE )); then
  "$GPUFIX" --no-system record --pid "$JOB_PID" --for "$(( AB_N * (AB_WINDOW_S + 1) + 120 ))s" \
    --interval "$INTERVAL" --pyspy-interval "$PYSPY_INTERVAL" -o "$ODIR/rec.json" \
    >"$ODIR/rec.out" 2>"$ODIR/rec.err" &
  rp=$!
  sleep 3
  kill -STOP "$rp"
  log "record overhead (toggle): gpufix record $rp started, stopped; $AB_N windows of ${AB_WINDOW_S}s"
  for label in "${labels[@]}"; do
    t0=$(date +%s.%N)
    if [[ $label == B ]]; then
      kill -CONT "$rp"
      sleep "$AB_WINDOW_S"
      kill -STOP "$rp"
    else
      sleep "$AB_WINDOW_S"
    fi
    t1=$(date +%s.%N)
    windows+=(--window "$label:$t0:$t1")
  done
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$rp/status")
  ticks=$(awk '{print $14 + $15}' "/proc/$rp/stat")
  kill -CONT "$rp"
  kill -INT "$rp"
  rc=0; wait "$rp" || rc=$?
  echo "$rc" >"$ODIR/rec.rc"
  size=$(stat -c %s "$ODIR/rec.json" 2>/dev/null || echo null)
  rss_rows+=("{\"window\": \"all B\", \"rc\": $rc, \"peak_rss_kb\": $hwm, \"cpu_ticks\": $ticks, \"file_bytes\": $size}")
  log "record overhead (toggle): recorded (rc $rc, peak RSS ${hwm} kB, $ticks ticks, $size bytes)"
  labels=()
fi
for label in "${labels[@]}"; do
  {
    i=$(( i + 1 ))
    t0=$(date +%s.%N)
    if [[ $label == A ]]; then
      sleep "$AB_WINDOW_S"
    else
      "$GPUFIX" --no-system record --pid "$JOB_PID" --for "${AB_WINDOW_S}s" --interval "$INTERVAL" \
        --pyspy-interval "$PYSPY_INTERVAL" -o "$ODIR/rec$i.json" >"$ODIR/rec$i.out" 2>"$ODIR/rec$i.err" &
      rp=$!
      hwm=0
      ticks=0
      while kill -0 "$rp" 2>/dev/null; do
        v=$(awk '/^VmHWM:/ {print $2}' "/proc/$rp/status" 2>/dev/null || true)
        [[ -n $v ]] && (( v > hwm )) && hwm=$v
        # utime + stime of gpufix itself (its threads included), last reading before it exits
        c=$(awk '{print $14 + $15}' "/proc/$rp/stat" 2>/dev/null || true)
        [[ -n $c ]] && ticks=$c
        sleep 0.5
      done
      rc=0; wait "$rp" || rc=$?
      echo "$rc" >"$ODIR/rec$i.rc"
      size=$(stat -c %s "$ODIR/rec$i.json" 2>/dev/null || echo null)
      rss_rows+=("{\"window\": $i, \"rc\": $rc, \"peak_rss_kb\": $hwm, \"cpu_ticks\": $ticks, \"file_bytes\": $size}")
      log "record overhead: window $i recorded (rc $rc, peak RSS ${hwm} kB, $size bytes)"
    fi
    t1=$(date +%s.%N)
    windows+=(--window "$label:$t0:$t1")
  }
done
kill -TERM "$JOB_PID" 2>/dev/null || true
wait_job
"$PY" "$H" ab --progress "$adir/run/progress.txt" "${windows[@]}" >"$ODIR/ab.json"
(IFS=,; echo "[${rss_rows[*]}]") >"$ODIR/rss.json"
"$PY" - "$ODIR" <<'PYEOF'
import json, sys
d = sys.argv[1]
ab = json.load(open(f"{d}/ab.json"))
rss = json.load(open(f"{d}/rss.json"))
peak = max((r["peak_rss_kb"] for r in rss), default=None)
s = {
    "unwatched_samples_per_s": ab["unwatched_mean"],
    "recorded_samples_per_s": ab["watched_mean"],
    "slowdown_pct": ab["slowdown_pct"],
    "local_slowdown_pct": ab.get("local_slowdown_pct"),
    "local_ci95_pct": ab.get("local_ci95_pct"),
    "slowdown_target_pct": 1.0,
    "peak_rss_kb": peak,
    "peak_rss_target_kb": 50 * 1024,
    "record_runs": rss,
    "windows": ab["windows"],
}
# shown below 1% only when the 95% interval's upper end is
ci = s["local_ci95_pct"]
s["meets_targets"] = (
    ci is not None and ci[1] < 1.0 and peak is not None and peak < 50 * 1024
    and all(r["rc"] == 0 for r in rss)
)
json.dump(s, open(f"{d}/summary.json", "w"), indent=1)
print(json.dumps({k: s[k] for k in ("unwatched_samples_per_s", "recorded_samples_per_s", "slowdown_pct", "local_slowdown_pct", "local_ci95_pct", "peak_rss_kb", "meets_targets")}))
PYEOF
