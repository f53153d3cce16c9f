#!/usr/bin/env bash
# bench/record_rss.sh: where `gpufix record`'s memory goes (issue 26: < 50 MB RSS). Attaches
# `gpufix record --pid PID --for SECS` to a running process and polls /proc/REC/smaps_rollup and
# /proc/REC/status every 0.2 s while it runs: peak RSS (VmHWM), and at the largest reading the
# split into anonymous memory (heap, stacks), file-backed pages (the binary, libnvidia-ml) and
# the thread count. Prints one JSON line per run. Reads only.
#
#   bench/record_rss.sh --gpufix BIN --pid PID [--for 15s] [--env NAME=VALUE ...] [--smaps FILE]
# --smaps FILE keeps /proc/REC/smaps as it was at the largest reading (which mapping holds what).
set -euo pipefail
gpufix=""; pid=""; secs=15s; envs=(); smaps=""
while (( $# )); do
  case $1 in
    --gpufix) gpufix=$2; shift 2 ;;
    --pid) pid=$2; shift 2 ;;
    --for) secs=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --smaps) smaps=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 1 ;;
  esac
done
[[ -n $gpufix && -n $pid ]] || { echo "--gpufix BIN --pid PID are needed" >&2; exit 1; }
out=$(mktemp -d)
env ${envs[@]+"${envs[@]}"} "$gpufix" --no-system record --pid "$pid" --for "$secs" -o "$out/rec.json" >"$out/rec.txt" 2>&1 &
rec=$!
best_rss=0; best=""
while kill -0 "$rec" 2>/dev/null; do
  if r=$(awk '/^Rss:/{r=$2} /^Anonymous:/{a=$2} END{print r, a}' "/proc/$rec/smaps_rollup" 2>/dev/null); then
    set -- $r
    if [[ -n ${1:-} && $1 -gt $best_rss ]]; then
      best_rss=$1
      th=$(awk '/^Threads:/{print $2}' "/proc/$rec/status" 2>/dev/null || echo 0)
      hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$rec/status" 2>/dev/null || echo 0)
      [[ -n $smaps ]] && cp "/proc/$rec/smaps" "$smaps" 2>/dev/null || true
      best="\"rss_kb\": $1, \"anon_kb\": $2, \"file_kb\": $(( $1 - $2 )), \"threads\": $th, \"hwm_kb\": $hwm"
    fi
  fi
  sleep 0.2
done
wait "$rec"; rc=$?
echo "{\"env\": \"${envs[*]:-}\", \"rc\": $rc, $best}"
rm -rf "$out"
