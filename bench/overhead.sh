#!/usr/bin/env bash
# bench/overhead.sh: what gpufix costs, measured in the same run as the faults (bench/run.sh calls
# it last; it can run alone with the same flags). Writes WORK/overhead.json:
#   - the training job's samples/s while `gpufix plan --pid PID --sample 30s` watches it (B) and
#     while nothing does (A), alternating A/B/A/B in one running job; target: B < 1% slower;
#   - median wall time of `gpufix plan --sample 0s`, `gpufix plan --sample 5s`, `nvidia-smi -q`
#     and the checklist's bench/gpu_diagnose.sh (run as written), and which commands that script
#     calls are missing here.
# Reads only; changes no GPU setting.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
H="$BENCH/harness.py"
GPUFIX=""
WORK=""
PY=python3
REPEAT=5
AB_WINDOW_S=30
AB_PAIRS=2
DECODE_PASSES=2
WARMUP_STEPS=15
BUDGET_S=540
START=$(date +%s)
while (( $# )); do
  case $1 in
    --gpufix) GPUFIX=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --ab-window) AB_WINDOW_S=$2; shift 2 ;;
    --ab-pairs) AB_PAIRS=$2; shift 2 ;;
    --decode-passes) DECODE_PASSES=$2; shift 2 ;;
    --warmup-steps) WARMUP_STEPS=$2; shift 2 ;;
    --budget-s) BUDGET_S=$2; shift 2 ;;
    --start) START=$2; shift 2 ;;
    *) echo "error: unknown argument \`$1\`" >&2; exit 1 ;;
  esac
done
if [[ -z $GPUFIX || -z $WORK ]]; then
  echo "error: --gpufix PATH and --work DIR are required" >&2
  exit 1
fi

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
trap stop_jobs EXIT

ODIR="$WORK/overhead"
rm -rf "$ODIR"
mkdir -p "$ODIR"
parts=()

# ---- A/B: one job, watched and unwatched windows ---------------------------------------------
AB_N=$(( 2 * AB_PAIRS ))
ab_need=$(( AB_N * (AB_WINDOW_S + 1) + 12 ))
if fits "$ab_need"; then
  adir="$ODIR/ab"
  "$PY" "$H" make-job --base "$BENCH/configs/healthy.yaml" --dir "$adir" --name overhead-ab \
    --set "train.max_seconds=$(( AB_N * (AB_WINDOW_S + 10) + 30 ))" \
    --set "data.decode_passes=$DECODE_PASSES" --set "train.warmup_steps=$WARMUP_STEPS" >/dev/null
  start_job "$adir" run $(( AB_N * (AB_WINDOW_S + 10) + 180 )) --progress-out "$adir/run/progress.txt"
  if wait_started "$adir/run" 120; then
    windows=()
    i=0
    labels=()
    for (( k = 0; k < AB_PAIRS; k++ )); do labels+=(A B); done
    for label in "${labels[@]}"; do
      i=$(( i + 1 ))
      t0=$(date +%s.%N)
      if [[ $label == A ]]; then
        sleep "$AB_WINDOW_S"
      else
        rc=0
        timeout $(( AB_WINDOW_S + 60 )) "$GPUFIX" plan --pid "$JOB_PID" --config "$adir/config.yaml" \
          --env-file "$adir/job.env" --sample "${AB_WINDOW_S}s" --format json \
          >"$adir/plan_window$i.json" 2>"$adir/plan_window$i.err" || rc=$?
        echo "$rc" >"$adir/plan_window$i.rc"
      fi
      t1=$(date +%s.%N)
      windows+=(--window "$label:$t0:$t1")
      log "overhead: window $i ($label) done"
    done
    kill -TERM "$JOB_PID" 2>/dev/null || true
    wait_job
    "$PY" "$H" ab --progress "$adir/run/progress.txt" "${windows[@]}" >"$ODIR/ab.json"
    log "overhead: A/B $(cat "$ODIR/ab.json" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print("unwatched", d["unwatched_mean"], "watched", d["watched_mean"], "slowdown %", d["slowdown_pct"])')"
  else
    kill -TERM "$JOB_TPID" 2>/dev/null || true
    wait_job
    echo '{"error": "the A/B job ended before its measured window; see overhead/ab/run/job.log"}' >"$ODIR/ab.json"
  fi
  parts+=("ab=$ODIR/ab.json")
else
  log "overhead: A/B skipped, it would not fit the ${BUDGET_S}s budget"
  echo '{"skipped": "time budget"}' >"$ODIR/ab.json"
  parts+=("ab=$ODIR/ab.json")
fi

# ---- wall times --------------------------------------------------------------------------------
# time_it NAME EST_SECONDS_PER_RUN CMD...: median of REPEAT runs, first run's output kept
time_it() {
  local name=$1 est=$2
  shift 2
  if fits $(( est * REPEAT )); then
    "$PY" "$H" time-cmd --repeat "$REPEAT" --timeout 120 --keep-output "$ODIR/$name.out" -- "$@" >"$ODIR/$name.json"
    log "overhead: $name median $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["median_s"])' "$ODIR/$name.json") s"
  else
    echo '{"skipped": "time budget"}' >"$ODIR/$name.json"
    log "overhead: $name skipped, it would not fit the ${BUDGET_S}s budget"
  fi
  parts+=("$name=$ODIR/$name.json")
}
time_it gpufix_plan_sample_0s 2 "$GPUFIX" plan --sample 0s --format json
time_it gpufix_plan_sample_5s 7 "$GPUFIX" plan --sample 5s --format json
time_it nvidia_smi_q 1 nvidia-smi -q
# GPUFIX_BENCH_SKIP_CHECKLIST=1: the checklist's script takes ~13 s a run; skip it when a run
# needs the time for the targets (its figure is then reported as skipped)
if [[ ${GPUFIX_BENCH_SKIP_CHECKLIST:-0} == 1 ]]; then
  echo '{"skipped": "GPUFIX_BENCH_SKIP_CHECKLIST=1"}' >"$ODIR/gpu_diagnose_sh.json"
  parts+=("gpu_diagnose_sh=$ODIR/gpu_diagnose_sh.json")
else
  time_it gpu_diagnose_sh 14 bash "$BENCH/gpu_diagnose.sh"
fi

# which binaries the checklist's script calls are missing on this host
{
  printf '{'
  sep=""
  for c in lsmod grep python3 iostat tail awk nvidia-smi; do
    path=$(command -v "$c" || true)
    printf '%s"%s": %s' "$sep" "$c" "$( [[ -n $path ]] && printf '"%s"' "$path" || printf 'null')"
    sep=", "
  done
  printf '}\n'
} >"$ODIR/gpu_diagnose_commands.json"
parts+=("gpu_diagnose_commands=$ODIR/gpu_diagnose_commands.json")
if [[ -f $ODIR/gpu_diagnose_sh.out ]]; then
  parts+=("gpu_diagnose_output=$ODIR/gpu_diagnose_sh.out")
fi

"$PY" "$H" combine --out "$WORK/overhead.json" "${parts[@]}"
log "overhead: written $WORK/overhead.json"
