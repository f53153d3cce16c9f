#!/usr/bin/env bash
# One device call: the live-host acceptance runs of issues 2-5 on the real H200.
# Reads only the GPU: nothing here changes the card's settings, kernel modules, mounts or /etc.
# Usage (device tool): bash scripts/device_check.sh   (expects .dev/gpufix and $OUT)
set -u
G=${GPUFIX:-$PWD/.dev/gpufix}
PY=/opt/torch/.venv/bin/python3; [ -x "$PY" ] || PY=python3
export PATH=/opt/torch/.venv/bin:$PATH
W=$(mktemp -d /tmp/gpufix-check.XXXX)
R=$OUT/check; mkdir -p "$R"
log() { echo "== $*" | tee -a "$R/transcript.txt"; }
run() { echo "\$ $*" >> "$R/transcript.txt"; "$@" >> "$R/transcript.txt" 2>&1; local rc=$?; echo "[exit $rc]" >> "$R/transcript.txt"; return 0; }
t() { local s; s=$(date +%s%N); "$@" >/dev/null 2>&1; echo "$(( ($(date +%s%N) - s) / 1000000 )) ms"; }

log "host"; nvidia-smi -L | tee -a "$R/transcript.txt"
log "issue 2: plan and snapshot on the live host"
"$G" --no-system plan > "$R/plan-live.txt" 2>&1; echo "exit $?" >> "$R/plan-live.txt"
"$G" --no-system plan --sample 0 --format json > "$R/plan-live.json" 2>/dev/null
"$G" --no-system snapshot -o "$R/h200-live.snapshot.json" 2>> "$R/transcript.txt"
log "timing (seconds, 5 runs each)"
{
  echo "gpufix plan --sample 0 (whole library):"; for i in 1 2 3 4 5; do t "$G" --no-system plan --sample 0; done
  echo "gpufix plan --sample 0 --only driver:"; for i in 1 2 3 4 5; do t "$G" --no-system plan --sample 0 --only driver; done
  echo "gpufix plan (default --sample 1s):"; for i in 1 2 3; do t "$G" --no-system plan; done
  echo "nvidia-smi -q:"; for i in 1 2 3 4 5; do t nvidia-smi -q; done
} > "$R/timing.txt" 2>&1
log "audit formats"
for f in json junit prometheus nagios slurm; do "$G" --no-system audit --sample 0 --format $f > "$R/audit.$f" 2>&1; echo "exit $?" >> "$R/audit.$f"; done

log "issue 3: plan -> apply -> rollback on a scratch --root"
S=$W/root; mkdir -p "$S/etc" "$S/proc" "$W/job"
cp -a /etc/fstab /etc/environment /etc/os-release "$S/etc/" 2>/dev/null
cp -a /etc/modprobe.d "$S/etc/" 2>/dev/null; cp -a /etc/sysctl.d "$S/etc/" 2>/dev/null
cat /proc/mounts > "$S/proc/mounts"; cat /proc/modules > "$S/proc/modules" 2>/dev/null
# a data mount of the scratch host, as fstab and the mount table would show it
echo "/dev/nvme9n1 /data ext4 rw,relatime 0 0" >> "$S/proc/mounts"
printf '# data disk\nUUID=0000-scratch\t/data\text4\tdefaults\t0 2\n' >> "$S/etc/fstab"
printf '# training config\ndata:\n  num_workers: 0   # decode workers\n  pin_memory: false\n  persistent_workers: true\n  batch_size: 128\nddp:\n  bucket_cap_mb: 25\n' > "$W/job/config.yaml"
printf '# job environment\nCUDA_LAUNCH_BLOCKING=1\nOMP_NUM_THREADS=8\n' > "$W/job/job.env"
cp -a "$S" "$W/root.before"; cp -a "$W/job" "$W/job.before"
GA=("$G" --no-system --root "$S" --config "$W/job/config.yaml" --env-file "$W/job/job.env" --sample 0)
GH=("$G" --root "$S")  # history and rollback take the root only: the journal is under it
DENY=(--deny nvidia.persistence --deny nvidia.power_limit --deny nvidia.clocks --deny kmod.load --deny kmod.options --deny sysctl.set --deny sysfs.write --deny command)
run "${GA[@]}" plan -o "$W/plan.json"
run "${GA[@]}" apply --dry-run "${DENY[@]}"
run "${GA[@]}" apply "$W/plan.json" --yes "${DENY[@]}"
run cat "$W/job/config.yaml" "$W/job/job.env" "$S/etc/fstab"
run "${GA[@]}" plan --only data --only cuda.launch-blocking --only comm.ddp-bucket-default
run "${GH[@]}" history
run "${GH[@]}" rollback
run diff -r "$W/root.before" "$S" --exclude=var
run diff -r "$W/job.before" "$W/job"
run "${GH[@]}" history

log "issue 4/5: a training job, healthy then degraded, with gpufix attached"
mkdir -p "$W/h" "$W/d"
sed -e 's/max_seconds: 12/max_seconds: 25/' -e 's/profile: false/profile: true/' bench/configs/healthy.yaml > "$W/h/config.yaml"
echo "OMP_NUM_THREADS=4" > "$W/h/job.env"
sed -e 's/num_workers: 8 /num_workers: 0 /' "$W/h/config.yaml" > "$W/d/config.yaml"
printf 'CUDA_LAUNCH_BLOCKING=1\nOMP_NUM_THREADS=4\n' > "$W/d/job.env"
for c in h d; do
  cd "$W/$c"
  if [ $c = d ]; then export CUDA_LAUNCH_BLOCKING=1; fi
  "$PY" "$OLDPWD/bench/train.py" config.yaml --pid-file pid --ready-file ready --json-out result.json --out-dir . > job.log 2>&1 &
  JOB=$!
  for i in $(seq 1 120); do [ -f ready ] && break; sleep 0.5; done
  sleep 2
  "$G" --no-system plan --pid "$JOB" --config config.yaml --env-file job.env --sample 3s > "$R/plan-job-$c.txt" 2>&1; echo "exit $?" >> "$R/plan-job-$c.txt"
  wait $JOB
  ls >> "$R/transcript.txt"
  if [ -f trace.json.gz ]; then
    "$G" --no-system plan --config config.yaml --env-file job.env --trace trace.json.gz --only launch --only data --sample 0 > "$R/plan-trace-$c.txt" 2>&1; echo "exit $?" >> "$R/plan-trace-$c.txt"
    cp trace.json.gz "$R/trace-$c.json.gz"
  fi
  cp job.log "$R/job-$c.log"; cp result.json "$R/result-$c.json" 2>/dev/null
  unset CUDA_LAUNCH_BLOCKING
  cd "$OLDPWD"
done
log "NCCL log (one-process group)"
NCCL_DEBUG=INFO NCCL_NVLS_ENABLE=0 "$PY" bench/nccl_log.py > "$R/nccl-1proc.log" 2>&1
"$G" --no-system plan --nccl-log "$R/nccl-1proc.log" --only comm --sample 0 > "$R/plan-nccl.txt" 2>&1
cd "$OUT" && tar czf check.tar.gz check && rm -rf check
ls -la "$OUT"
