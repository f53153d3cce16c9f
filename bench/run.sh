#!/usr/bin/env bash
# bench/run.sh: break a PyTorch training job in known ways, let gpufix find and fix each, and
# measure the throughput that comes back (bench/README.md). One command:
#
#   bench/run.sh [--gpufix PATH] [--out DIR] [--quick] [--faults a,b,...] [--sizing]
#                [--no-overhead | --overhead-only] [--measure-s N] [--decode-passes N]
#                [--ab-window N] [--ab-pairs N] [--repeat N] [--budget-s N] [--work DIR] [--python PATH]
#
# Leaves in --out (default bench/out): results.json, RESULTS.md, run.log, artifacts.tar.gz.
# Never changes GPU settings: no nvidia-smi -pm/-pl/-ac/-rgc/-r, no modprobe, no mount, and
# nothing written outside --out, the work folder and the jobs' own scratch files.
set -euo pipefail

# ---- the faults: change expected rule ids here ------------------------------------------------
# One line each, fields split by `|`:
#   1 name
#   2 config overrides, `key=value;key=value` (value read as YAML)
#   3 job.env lines, `NAME=VALUE;NAME=VALUE`
#   4 expected rule ids, any one of them counts (`-`: none; then any `fail` is a false finding)
#   5 symptom rules that may fail beside them without counting as false findings
#   6 inputs given to `gpufix plan` besides --pid/--config/--env-file: trace, evidence
#   7 target: clean (no fail), recover (>= 95% of healthy after apply), manual (the fix is a
#     person's), fix (detection and an applied fix; throughput is not the point)
FAULTS=(
  "healthy             |                            |                        | -                                         | -                                         | trace,evidence | clean"
  "workers0            | data.num_workers=0         |                        | data.workers-too-few                      | launch.gpu-idle-gaps,data.dataloader-wait,launch.cpu-bound-launch-thread | trace          | recover"
  "workers2            | data.num_workers=2         |                        | data.workers-too-few                      | launch.gpu-idle-gaps,data.dataloader-wait | trace          | recover"
  "pin_memory_false    | data.pin_memory=false      |                        | data.pin-memory-off                       | -                                         | -              | recover"
  "launch_blocking     |                            | CUDA_LAUNCH_BLOCKING=1 | cuda.launch-blocking                      | -                                         | -              | recover"
  "item_sync           | train.sync_every_step=true |                        | launch.host-sync-in-step                  | launch.gpu-idle-gaps                      | trace          | manual"
  "fragmentation       | train.fragment=true        |                        | memory.allocator-fragmentation            | -                                         | evidence       | fix"
  "slow_disk_simulated | data.slow_read_ms=10       |                        | launch.gpu-idle-gaps,data.dataloader-wait | -                                         | trace          | manual"
)
# The fix kinds `gpufix apply` may use: only safe edits of the job's own scratch files.
APPLY_ALLOW=(--allow config.set --allow env.set --allow env.unset)

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$BENCH")
H="$BENCH/harness.py"
START=$(date +%s)

usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

GPUFIX=${GPUFIX:-$REPO/target/release/gpufix}
OUT=$REPO/bench/out
WORK=""
QUICK=0
ONLY=""
SIZING=0
DO_FAULTS=1
DO_OVERHEAD=1
MEASURE_S=""
AB_WINDOW_S=""
AB_PAIRS=""
REPEAT=""
DECODE_PASSES=""
BUDGET_S=540
if [[ -n ${PYTHON:-} ]]; then
  PY=$PYTHON
elif [[ -x /opt/torch/.venv/bin/python3 ]]; then
  PY=/opt/torch/.venv/bin/python3
else
  PY=python3
fi
while (( $# )); do
  case $1 in
    --gpufix) GPUFIX=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --faults) ONLY=$2; shift 2 ;;
    --sizing) SIZING=1; shift ;;
    --no-overhead) DO_OVERHEAD=0; shift ;;
    --overhead-only) DO_FAULTS=0; shift ;;
    --measure-s) MEASURE_S=$2; shift 2 ;;
    --ab-window) AB_WINDOW_S=$2; shift 2 ;;
    --ab-pairs) AB_PAIRS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --decode-passes) DECODE_PASSES=$2; shift 2 ;;
    --budget-s) BUDGET_S=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument \`$1\`" >&2; usage >&2; exit 1 ;;
  esac
done

if (( QUICK )); then
  MEASURE_S=${MEASURE_S:-6}; WARMUP_STEPS=8; WARMUP_MAX_S=3; PROFILE_STEPS=3
  REPEAT=${REPEAT:-1}; AB_WINDOW_S=${AB_WINDOW_S:-5}; AB_PAIRS=${AB_PAIRS:-2}
else
  # 20 profiled steps: enough that a loader whose prefetch queue was full at the start shows
  # its waits, and that the profiler's cost at step boundaries does not dominate
  MEASURE_S=${MEASURE_S:-8}; WARMUP_STEPS=15; WARMUP_MAX_S=6; PROFILE_STEPS=20
  REPEAT=${REPEAT:-5}; AB_WINDOW_S=${AB_WINDOW_S:-30}; AB_PAIRS=${AB_PAIRS:-2}
fi
PLAN_SAMPLE=3s
# A job's window is ended by end_window; max_seconds only caps a job nobody stopped.
WINDOW_CAP_S=$(( MEASURE_S + 240 ))
JOB_LIMIT=$(( WINDOW_CAP_S + 120 ))
READY_TIMEOUT=120

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"

if [[ ! -x $GPUFIX ]]; then
  echo "error: gpufix binary \`$GPUFIX\` is missing or not executable; build it (cargo build --release) or pass --gpufix PATH" >&2
  exit 1
fi
GPUFIX=$(cd "$(dirname "$GPUFIX")" && pwd)/$(basename "$GPUFIX")
"$PY" -c 'import yaml, numpy' 2>/dev/null || {
  echo "error: \`$PY\` cannot import yaml and numpy; pass --python PATH" >&2
  exit 1
}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [[ -z $WORK ]]; then
  WORK=$(mktemp -d /tmp/gpufix-bench.XXXXXX)
fi
mkdir -p "$WORK/faults"
WORK=$(cd "$WORK" && pwd)
META="$WORK/meta.json"
rm -f "$META" "$OUT/results.json" "$OUT/RESULTS.md" "$OUT/artifacts.tar.gz"
exec > >(tee "$OUT/run.log") 2>&1

finish() {
  local rc=$?
  stop_jobs
  if [[ -f $META ]]; then
    "$PY" "$H" assemble --work "$WORK" --out "$OUT/results.json" || true
    "$PY" "$BENCH/make_results.py" "$OUT/results.json" -o "$OUT/RESULTS.md" || true
    pack_artifacts || true
  fi
  log "done (exit $rc): $OUT/results.json, $OUT/RESULTS.md; work files in $WORK"
}
trap finish EXIT
trap 'exit 130' INT TERM

# artifacts.tar.gz holds every plan, apply output, job log and memory file; traces too while
# the archive stays under 15 MiB (what comes back from a device run is limited per file).
pack_artifacts() {
  tar -czf "$OUT/artifacts.tar.gz" -C "$WORK" .
  if (( $(stat -c %s "$OUT/artifacts.tar.gz") > 15 * 1024 * 1024 )); then
    tar -czf "$OUT/artifacts.tar.gz" --exclude='*.json.gz' -C "$WORK" .
  fi
}

meta_set() { "$PY" "$H" meta --file "$META" --set "$1=$2"; }
json_str() { "$PY" -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

# ---- host facts --------------------------------------------------------------------------------
log "gpufix benchmark: work folder $WORK, results to $OUT"
gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 || true)
gpufix_version=$("$GPUFIX" --version 2>/dev/null | head -n 1 || true)
meta_set generated_at "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
meta_set host "{\"gpu\": $(json_str "$gpu_line"), \"cpus\": $(nproc), \"kernel\": $(json_str "$(uname -r)")}"
meta_set gpufix "{\"path\": $(json_str "$GPUFIX"), \"version\": $(json_str "$gpufix_version")}"
meta_set fault_order '[]'
meta_set skipped '[]'

# ---- sizing: fit the data cost to this GPU -----------------------------------------------------
# The GPU's rate G on the healthy model (one batch kept on the GPU, no loader) sets the decode
# cost per item to HEADROOM_WORKERS / G seconds: 4 workers then match the GPU, so the healthy
# 8 workers have 2x headroom (the job is GPU-bound), 2 workers feed about half of G and the
# main process alone about a quarter. --decode-passes N skips this.
HEADROOM_WORKERS=4
SIZING_SETS=(--set "train.max_seconds=$(( QUICK ? 3 : 5 ))" --set "train.warmup_steps=$WARMUP_STEPS"
  --set "train.warmup_max_s=$WARMUP_MAX_S")
sdir="$WORK/sizing"
sizing_parts=()
if [[ -z $DECODE_PASSES ]]; then
  log "sizing: GPU rate of the healthy model (model_only run)"
  "$PY" "$H" make-job --base "$BENCH/configs/healthy.yaml" --dir "$sdir" --name sizing "${SIZING_SETS[@]}" >/dev/null
  start_job "$sdir" model_only "$JOB_LIMIT" --mode model_only
  wait_job
  gpu_rate=$("$PY" "$H" get --file "$sdir/model_only/job.json" --key samples_per_s)
  if [[ -n $gpu_rate ]]; then
    target_ms=$("$PY" -c 'import sys; print(round(min(20.0, max(0.5, 1000.0 * float(sys.argv[1]) / float(sys.argv[2]))), 3))' "$HEADROOM_WORKERS" "$gpu_rate")
    log "sizing: GPU alone $gpu_rate samples/s, so $target_ms ms of decode per item"
  else
    target_ms=2.0
    log "sizing: the model_only run failed (exit $JOB_RC, see $sdir/model_only/job.log); using $target_ms ms per item"
  fi
  sizing_parts+=("model_only=$sdir/model_only/job.json")
  "$PY" "$BENCH/imagedata.py" --calibrate "$target_ms" >"$WORK/calibration.json"
  sizing_parts+=("calibration=$WORK/calibration.json")
  DECODE_PASSES=$("$PY" "$H" get --file "$WORK/calibration.json" --key decode_passes)
  log "sizing: $(cat "$WORK/calibration.json")"
fi
if (( SIZING )); then
  log "sizing: data pipeline alone (data_only run)"
  "$PY" "$H" make-job --base "$BENCH/configs/healthy.yaml" --dir "$sdir" --name sizing "${SIZING_SETS[@]}" \
    --set "data.decode_passes=$DECODE_PASSES" >/dev/null
  start_job "$sdir" data_only "$JOB_LIMIT" --mode data_only
  wait_job
  log "sizing: data pipeline $("$PY" "$H" get --file "$sdir/data_only/job.json" --key samples_per_s) samples/s"
  sizing_parts+=("data_only=$sdir/data_only/job.json")
fi
if (( ${#sizing_parts[@]} )); then
  "$PY" "$H" combine --out "$WORK/sizing.json" "${sizing_parts[@]}"
fi
meta_set settings "{\"quick\": $QUICK, \"measure_s\": $MEASURE_S, \"plan_sample\": \"$PLAN_SAMPLE\", \"warmup_steps\": $WARMUP_STEPS, \"profile_steps\": $PROFILE_STEPS, \"decode_passes\": $DECODE_PASSES, \"repeat\": $REPEAT, \"ab_window_s\": $AB_WINDOW_S, \"ab_pairs\": $AB_PAIRS, \"budget_s\": $BUDGET_S}"

# Keys every job gets on top of the fault's own overrides.
COMMON_SETS=(--set "train.max_seconds=$WINDOW_CAP_S" --set "train.warmup_steps=$WARMUP_STEPS"
  --set "train.warmup_max_s=$WARMUP_MAX_S" --set "train.profile_steps=$PROFILE_STEPS"
  --set "data.decode_passes=$DECODE_PASSES")

# ---- one fault ---------------------------------------------------------------------------------
run_fault() {
  local name=$1 overrides=$2 envs=$3 expect=$4 also=$5 inputs=$6 target=$7
  local dir="$WORK/faults/$name"
  local -a sets=() envl=() ins=() note=() kvs=()
  local kv plan_rc="" apply_rc="" deg_rc="" after_rc="" after_plan_rc="" changed=no
  rm -rf "$dir"
  mkdir -p "$dir"
  IFS=';' read -r -a kvs <<<"$overrides"
  for kv in "${kvs[@]}"; do
    if [[ -n $(trim "$kv") ]]; then sets+=(--set "$(trim "$kv")"); fi
  done
  IFS=';' read -r -a kvs <<<"$envs"
  for kv in "${kvs[@]}"; do
    if [[ -n $(trim "$kv") ]]; then envl+=(--env "$(trim "$kv")"); fi
  done
  if [[ ,$inputs, == *,trace,* ]]; then
    sets+=(--set train.profile=true --set train.trace_out=trace.json.gz)
  fi
  if [[ ,$inputs, == *,evidence,* ]]; then
    sets+=(--set train.memory_summary_out=memory_summary.txt)
  fi
  "$PY" "$H" make-job --base "$BENCH/configs/healthy.yaml" --dir "$dir" --name "$name" \
    "${COMMON_SETS[@]}" "${sets[@]}" "${envl[@]}" >/dev/null
  cp "$dir/config.yaml" "$dir/config.degraded.yaml"
  cp "$dir/job.env" "$dir/job.degraded.env"

  # plan_inputs RUN: the flags that point gpufix at the job and what it wrote
  plan_inputs() {
    ins=(--pid "$JOB_PID" --config "$dir/config.yaml" --env-file "$dir/job.env")
    if [[ ,$inputs, == *,trace,* && -f $dir/$1/trace.json.gz ]]; then
      ins+=(--trace "$dir/$1/trace.json.gz")
    fi
    if [[ ,$inputs, == *,evidence,* && -f $dir/$1/memory_summary.txt ]]; then
      ins+=(--evidence "$dir/$1/memory_summary.txt")
    fi
  }

  log "$name: starting the degraded job"
  start_job "$dir" degraded "$JOB_LIMIT"
  if wait_started "$dir/degraded" "$READY_TIMEOUT"; then
    plan_inputs degraded
    echo "$GPUFIX plan ${ins[*]} --sample $PLAN_SAMPLE --format json" >"$dir/plan.cmd"
    plan_rc=0
    timeout 120 "$GPUFIX" plan "${ins[@]}" --sample "$PLAN_SAMPLE" --format json >"$dir/plan.json" 2>"$dir/plan.err" || plan_rc=$?
    log "$name: plan exit $plan_rc, $("$PY" "$H" check-plan --plan "$dir/plan.json" --expect "$expect" --also-ok "$also" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print("fails:", d["fails"] or "none", "| detected:", d["detected"], "| false findings:", d["false_findings"] or "none", "|", d.get("error") or "")')"
    echo "$GPUFIX apply --yes ${APPLY_ALLOW[*]} ${ins[*]} --format json" >"$dir/apply.cmd"
    apply_rc=0
    timeout 120 "$GPUFIX" apply --yes "${APPLY_ALLOW[@]}" "${ins[@]}" --format json >"$dir/apply.json" 2>"$dir/apply.err" || apply_rc=$?
    if ! cmp -s "$dir/config.yaml" "$dir/config.degraded.yaml" || ! cmp -s "$dir/job.env" "$dir/job.degraded.env"; then
      changed=yes
    fi
    log "$name: apply exit $apply_rc, files changed: $changed"
    diff -u "$dir/config.degraded.yaml" "$dir/config.yaml" >"$dir/apply.diff" || true
    diff -u "$dir/job.degraded.env" "$dir/job.env" >>"$dir/apply.diff" || true
    end_window "$dir/degraded" "$MEASURE_S"
  else
    kill -TERM "$JOB_TPID" 2>/dev/null || true
    wait_job
    note+=("degraded job ended before its measured window: $(tail -n 3 "$dir/degraded/job.log" 2>/dev/null | tr '\n' ' ')")
    log "$name: the degraded job failed to start, see $dir/degraded/job.log"
  fi
  deg_rc=$JOB_RC

  if [[ $changed == yes ]]; then
    log "$name: restarting with the fixed config and env"
    start_job "$dir" after "$JOB_LIMIT" --no-profile
    if wait_started "$dir/after" "$READY_TIMEOUT"; then
      plan_inputs after
      after_plan_rc=0
      timeout 120 "$GPUFIX" plan "${ins[@]}" --sample "$PLAN_SAMPLE" --format json >"$dir/plan_after.json" 2>"$dir/plan_after.err" || after_plan_rc=$?
      end_window "$dir/after" "$MEASURE_S"
    else
      kill -TERM "$JOB_TPID" 2>/dev/null || true
      wait_job
      note+=("fixed job ended before its measured window: $(tail -n 3 "$dir/after/job.log" 2>/dev/null | tr '\n' ' ')")
    fi
    after_rc=$JOB_RC
  fi

  "$PY" "$H" fault-record --dir "$dir" --fault "$name" --target "$target" --expect "$expect" \
    --also-ok "$also" --overrides "$overrides" --env "$envs" --inputs "$inputs" \
    ${plan_rc:+--plan-rc "$plan_rc"} ${apply_rc:+--apply-rc "$apply_rc"} \
    ${deg_rc:+--degraded-rc "$deg_rc"} ${after_rc:+--after-rc "$after_rc"} \
    ${after_plan_rc:+--after-plan-rc "$after_plan_rc"} --changed "$changed" \
    --note "${note[*]:-}" >/dev/null
  "$PY" "$H" meta --file "$META" --append "fault_order=$(json_str "$name")"
  "$PY" "$H" assemble --work "$WORK" --out "$OUT/results.json"
  "$PY" "$BENCH/make_results.py" "$OUT/results.json" -o "$OUT/RESULTS.md"
  log "$name: $(grep -F "| $name |" "$OUT/RESULTS.md" | head -n 1)"
}

# ---- all faults --------------------------------------------------------------------------------
if (( DO_FAULTS )); then
  # Seconds a fault needs: a degraded run (start, warm-up, trace, window) and, where apply
  # changes a file, a run after the fix. The A/B overhead run is kept room for at the end.
  degraded_need=$(( MEASURE_S + 14 ))
  after_need=$(( MEASURE_S + 8 ))
  reserve=0
  if (( DO_OVERHEAD )); then reserve=$(( 2 * AB_PAIRS * (AB_WINDOW_S + 1) + 12 )); fi
  for line in "${FAULTS[@]}"; do
    IFS='|' read -r f_name f_over f_env f_expect f_also f_inputs f_target <<<"$line"
    f_name=$(trim "$f_name")
    if [[ -n $ONLY && ,$ONLY, != *,$f_name,* ]]; then continue; fi
    need=$degraded_need
    if [[ $(trim "$f_target") == recover || $(trim "$f_target") == fix ]]; then
      need=$(( degraded_need + after_need ))
    fi
    if ! fits $(( need + reserve )); then
      log "$f_name: skipped, it would not fit the ${BUDGET_S}s budget"
      "$PY" "$H" meta --file "$META" --append "skipped=$(json_str "fault $f_name (time budget)")"
      continue
    fi
    run_fault "$f_name" "$(trim "$f_over")" "$(trim "$f_env")" "$(trim "$f_expect")" \
      "$(trim "$f_also")" "$(trim "$f_inputs")" "$(trim "$f_target")"
  done
fi

# ---- overheads ---------------------------------------------------------------------------------
if (( DO_OVERHEAD )); then
  log "overheads: bench/overhead.sh"
  bash "$BENCH/overhead.sh" --gpufix "$GPUFIX" --work "$WORK" --python "$PY" --repeat "$REPEAT" \
    --ab-window "$AB_WINDOW_S" --ab-pairs "$AB_PAIRS" --decode-passes "$DECODE_PASSES" --warmup-steps "$WARMUP_STEPS" \
    --budget-s "$BUDGET_S" --start "$START" || log "overhead.sh failed (exit $?); see run.log"
fi
