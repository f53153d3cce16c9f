#!/usr/bin/env bash
# Wall time of `gpufix plan --evidence FILE` on every public corpus text, one process each, as a
# user runs it on a paste: prints the mean, the 99th percentile, the slowest five and the total.
#
#   bench/plan_corpus_times.sh [GPUFIX]      (default: target/release/gpufix)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/gpufix}
dir=$here/tests/fixtures/corpus
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
for f in "$dir"/*; do
  case $f in *.label.yaml|*/README.md|*/PROPOSED_RULES.txt) continue;; esac
  s=$(date +%s%N)
  "$bin" --no-system plan --evidence "$f" > /dev/null 2>&1
  e=$(date +%s%N)
  printf '%d %d %s\n' $(( (e - s) / 1000000 )) "$(stat -c %s "$f")" "$(basename "$f")" >> "$tmp"
done
sort -n "$tmp" | awk '{ms[NR]=$1; t+=$1} END {
  printf "%d texts: mean %.0f ms, p99 %d ms, total %.1f s\n", NR, t/NR, ms[int(NR*0.99)], t/1000 }'
echo "slowest (ms, bytes, file):"
sort -rn "$tmp" | head -5
