#!/usr/bin/env bash
# Evidence throughput of two builds of `benches/evidence_throughput.rs`, run alternately on a
# quiet machine (the device tool's, whose cores nothing else uses), each pinned to one core.
#
# Usage (device tool): bash bench/device_throughput.sh A_BIN A_SRC B_BIN B_SRC
#   X_BIN: a bench binary built here (`cargo bench --bench evidence_throughput --no-run`)
#   X_SRC: the checkout it was built in. The binary reads its fixtures from there (its
#          CARGO_MANIFEST_DIR); on the device that path is made a link to this checkout, whose
#          tests/fixtures/ the two builds share.
# Writes $OUT/throughput.txt.
set -u
[ $# -eq 4 ] || { echo "usage: $0 A_BIN A_SRC B_BIN B_SRC" >&2; exit 2; }
for src in "$2" "$4"; do
  if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
done
CORE=${CORE:-3}
MB=${GPUFIX_EVIDENCE_MB:-60}
R=$OUT/throughput.txt
{
  echo "# $(date -u +%FT%TZ), $MB MB, parsers only, taskset -c $CORE"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core)'
  uptime
  for round in 1 2 3; do
    for which in A B; do
      if [ $which = A ]; then bin=$1; else bin=$3; fi
      echo "## round $round, build $which ($bin)"
      GPUFIX_EVIDENCE_MB=$MB GPUFIX_EVIDENCE_PARSERS_ONLY=1 taskset -c "$CORE" "$bin" 2>&1 \
        | grep -E 'MB/s'
    done
  done
  uptime
} > "$R" 2>&1
cat "$R"
