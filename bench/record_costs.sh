#!/usr/bin/env bash
# bench/record_costs.sh: both of issue 26's costs of `gpufix record` in one GPU call.
#  1. Memory: bench/record_rss.sh three times against a small CUDA job (a matmul loop), keeping
#     /proc/REC/smaps at the largest reading of the first run: peak RSS and its split.
#  2. Throughput: bench/record_overhead.sh on the healthy training job, WINDOWS short windows
#     A B A B … A, each recorded (B) window against the unwatched ones either side.
# Reads only; changes nothing on the GPU. Writes DIR/rss/ and DIR/record_overhead/.
#
#   bench/record_costs.sh --gpufix BIN --out DIR [--ab-window 10] [--ab-pairs 10]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpufix=""; out=""; win=10; pairs=10
py=/opt/torch/.venv/bin/python3; [[ -x $py ]] || py=python3
while (( $# )); do
  case $1 in
    --gpufix) gpufix=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ab-window) win=$2; shift 2 ;;
    --ab-pairs) pairs=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 1 ;;
  esac
done
[[ -n $gpufix && -n $out ]] || { echo "--gpufix BIN --out DIR are needed" >&2; exit 1; }
mkdir -p "$out/rss"; out=$(readlink -f "$out"); gpufix=$(readlink -f "$gpufix")
"$py" -c 'import torch, time
x = torch.randn(4096, 4096, device="cuda")
t = time.time() + 120
while time.time() < t:
    y = x @ x
    torch.cuda.synchronize()' &
job=$!
sleep 8
for k in 1 2 3; do
  smaps=(); [[ $k == 1 ]] && smaps=(--smaps "$out/rss/smaps.txt")
  bash "$here/record_rss.sh" --gpufix "$gpufix" --pid "$job" --for 10s "${smaps[@]}" | tee -a "$out/rss/rss.jsonl"
done
kill "$job" 2>/dev/null || true; wait "$job" 2>/dev/null || true
bash "$here/record_overhead.sh" --gpufix "$gpufix" --work "$out" --ab-window "$win" --ab-pairs "$pairs" \
  --budget-s 480 2>&1 | tail -5
