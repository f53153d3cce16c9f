#!/usr/bin/env bash
# Does `memory.orphaned-gpu-memory` tell a job's teardown from a lasting orphan? On a GPU host:
# start bench/train.py with 8 DataLoader workers, end it (SIGTERM, then again with SIGKILL), and
# at once run `gpufix audit --only memory.orphaned-gpu-memory` with the binary before
# `recheck_after` (OLD) and with it (NEW), while a sampler records every 100 ms which PIDs
# NVML lists and in which state /proc has them. Then make a lasting orphan: a process that
# initialises CUDA, forks a child that keeps the context open for 40 s, and exits unreaped (a
# zombie whose parent never waits), and audit that with NEW. Only reads the GPU's settings;
# starts its own jobs; writes only under OUT.
#
#   bench/recheck_h100.sh OUT OLD_GPUFIX NEW_GPUFIX
set -u
out=${1:?usage: recheck_h100.sh OUT OLD NEW}; old=${2:?}; new=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/capture_lib.sh
. "$(dirname "$0")/capture_lib.sh"

# every 100 ms: the time, then each compute PID NVML lists with its memory and /proc state
sampler() {
  while :; do
    t=$(date +%s.%N)
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      while IFS=', ' read -r p m; do
        s=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null || echo gone)
        printf '%s pid=%s mib=%s state=%s\n' "$t" "$p" "$m" "${s:-gone}"
      done
    printf '%s tick\n' "$t"
    sleep 0.1
  done
}

run_case() { # run_case NAME SIGNAL
  local name=$1 sig=$2 d="$out/job_$1"; mkdir -p "$d"
  printf 'data:\n  num_workers: 8\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: 120\n  warmup_max_s: 3\n' > "$d/config.yaml"
  (cd "$d" && exec "$py" "$here/train.py" --config config.yaml --ready-file ready --pid-file pid --no-profile > job.log 2>&1) &
  for _ in $(seq 1 120); do [ -f "$d/ready" ] && break; sleep 0.5; done
  local pid; pid=$(cat "$d/pid"); sleep 3
  sampler > "$out/${name}_nvml_states.txt" 2>&1 & local sp=$!
  sleep 1
  echo "killed=$(date +%s.%N) pid=$pid signal=$sig" > "$out/${name}_times.txt"
  kill -"$sig" "$pid"
  sleep 0.3
  # both binaries at the same moment of the teardown
  ( "$old" audit --only memory.orphaned-gpu-memory --format json > "$out/${name}_old.json" 2>"$out/${name}_old.err"; echo "old_exit=$? done=$(date +%s.%N)" >> "$out/${name}_times.txt" ) & local a=$!
  ( "$new" audit --only memory.orphaned-gpu-memory --format json > "$out/${name}_new.json" 2>"$out/${name}_new.err"; echo "new_exit=$? done=$(date +%s.%N)" >> "$out/${name}_times.txt" ) & local b=$!
  wait "$a" "$b"; sleep 8
  kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
  echo "workers_left=$(pgrep -f "$here/train.py" | wc -l)" >> "$out/${name}_times.txt"
  pkill -9 -f "$here/train.py"; sleep 1
}
run_case term TERM
run_case kill KILL

# a lasting orphan: the parent (this python) forks C; C makes a CUDA context, forks G that holds
# it 40 s, and exits; the parent never waits for C, so C stays a zombie that NVML lists
cat > "$out/orphan.py" <<'PY'
import os, sys, time
c = os.fork()
if c == 0:
    import torch
    x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    if os.fork() == 0:
        time.sleep(40); os._exit(0)
    os._exit(0)
print(c, flush=True)
time.sleep(45)
PY
"$py" "$out/orphan.py" > "$out/orphan_pid.txt" 2>&1 & op=$!
sleep 12
sampler > "$out/orphan_nvml_states.txt" 2>&1 & sp=$!
sleep 1
{ echo "start=$(date +%s.%N)"; "$new" audit --only memory.orphaned-gpu-memory --format json > "$out/orphan_new.json" 2>"$out/orphan_new.err"; echo "new_exit=$? done=$(date +%s.%N)"; } > "$out/orphan_times.txt"
kill "$sp" 2>/dev/null; pkill -9 -f "$out/orphan.py"; wait 2>/dev/null
rm -rf "$out"/job_*/ready
