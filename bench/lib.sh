# shellcheck shell=bash
# shellcheck disable=SC2034  # JOB_PID, JOB_RC are read by the scripts that source this
# bench/lib.sh: process control shared by bench/run.sh and bench/overhead.sh (sourced, not run).
# Expects: PY (python with pyyaml), BENCH (this folder), H (harness.py), START (epoch seconds).
# BENCH_TRAIN may name another training script with train.py's flags (the tests use a stand-in).

# Jobs this harness started (pids of their `timeout` wrappers), so the exit trap ends only those.
BENCH_JOBS=()

log() {
  printf '[%4ds] %s\n' "$(( $(date +%s) - START ))" "$*"
}

trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf '%s' "$s"
}

# start_job DIR RUN LIMIT_S [train.py args...]: start DIR/config.yaml with DIR/job.env in the
# background, outputs under DIR/RUN; sets JOB_TPID (the timeout wrapper, our child).
# The env file is parsed by harness.py and handed to `env` as NAME=VALUE arguments: no shell
# ever evaluates a value. CUDA_LAUNCH_BLOCKING and PYTORCH_CUDA_ALLOC_CONF are removed from the
# inherited environment so that only job.env decides them.
start_job() {
  local dir=$1 run=$2 limit=$3
  shift 3
  local rdir="$dir/$run"
  local -a envargs=()
  mkdir -p "$rdir"
  "$PY" "$H" env-args --check "$dir/job.env" >"$rdir/env.json"
  mapfile -d '' -t envargs < <("$PY" "$H" env-args "$dir/job.env")
  timeout --kill-after=10 "$limit" \
    env -u CUDA_LAUNCH_BLOCKING -u PYTORCH_CUDA_ALLOC_CONF "${envargs[@]}" \
    "$PY" "${BENCH_TRAIN:-$BENCH/train.py}" "$dir/config.yaml" --out-dir "$rdir" --pid-file "$rdir/pid" \
    --ready-file "$rdir/ready" --json-out "$rdir/job.json" "$@" >"$rdir/job.log" 2>&1 &
  JOB_TPID=$!
  BENCH_JOBS+=("$JOB_TPID")
}

# wait_started RDIR TIMEOUT_S: wait for the job's pid file, then for its ready file (the measured
# window has begun); sets JOB_PID (the training process). Returns 1 if the job ended first.
wait_started() {
  local rdir=$1 limit=$2
  "$PY" "$H" wait-ready --file "$rdir/pid" --pid "$JOB_TPID" --timeout 60 || return 1
  JOB_PID=$(<"$rdir/pid")
  "$PY" "$H" wait-ready --file "$rdir/ready" --pid "$JOB_PID" --timeout "$limit" || return 1
}

# wait_job: reap the last started job; sets JOB_RC (124: it ran past its limit).
wait_job() {
  JOB_RC=0
  wait "$JOB_TPID" || JOB_RC=$?
}

# end_window RDIR MIN_S: end the job's measured window once it has lasted MIN_S seconds (longer
# if gpufix took longer), by SIGTERM to the training process, which then prints its result.
# The window is ended here rather than by train.max_seconds so that it always outlasts the
# gpufix commands run inside it, however long they take.
end_window() {
  local rdir=$1 min_s=$2 left
  left=$("$PY" -c 'import sys, time; print(round(max(0.0, float(open(sys.argv[1]).read()) + float(sys.argv[2]) - time.time()), 3))' \
    "$rdir/ready" "$min_s")
  sleep "$left"
  kill -TERM "$JOB_PID" 2>/dev/null || true
  wait_job
}

# stop_jobs: end the jobs this harness started that still run (exit trap).
stop_jobs() {
  local p
  for p in "${BENCH_JOBS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
    fi
  done
}

# fits SECONDS: whether that much more work stays inside the time budget.
fits() {
  (( $(date +%s) - START + $1 <= BUDGET_S ))
}
