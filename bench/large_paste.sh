#!/usr/bin/env bash
# Time and peak memory of `gpufix plan --evidence` on two large pastes that no reader reads:
# a prose post (English words, 24 MB) and a hostile one (`torch <base64>` lines, 47 MB). Both
# are generated from a fixed seed, so every run reads the same bytes.
#
#   bash bench/large_paste.sh [--gpufix BIN] [--work DIR]
#
# Prints one line per paste: size, exit code, wall seconds and peak RSS (GNU time). A run is
# bounded when it ends without a probe timeout (exit 0 or 1, nothing "timed out" on stderr).
set -euo pipefail
BIN=target/release/gpufix
WORK=$(mktemp -d)
while [ $# -gt 0 ]; do
  case "$1" in
    --gpufix) BIN=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$WORK"
python3 - "$WORK" <<'PY'
import base64, random, sys
work = sys.argv[1]
rng = random.Random(2)
words = ("the training job runs slowly and I do not know why it is using the gpu only "
         "twenty percent of the time maybe data loading is the problem workers").split()
with open(f"{work}/prose24.txt", "w") as f:
    while f.tell() < 24_000_000:
        f.write(" ".join(rng.choice(words) for _ in range(14)) + "\n")
with open(f"{work}/hostile47.txt", "w") as f:
    while f.tell() < 47_000_000:
        f.write("torch " + base64.b64encode(rng.randbytes(60)).decode() + "\n")
PY
printf '%-14s %10s %4s %8s %10s %s\n' paste bytes rc wall_s peak_kb timeouts
for name in prose24 hostile47; do
  f="$WORK/$name.txt"
  set +e
  /usr/bin/time -f '%e %M' -o "$WORK/$name.time" "$BIN" --no-system plan --evidence "$f" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
  set -e
  read -r wall kb < <(tail -1 "$WORK/$name.time")
  printf '%-14s %10s %4s %8s %10s %s\n' "$name" "$(stat -c %s "$f")" "$rc" "$wall" "$kb" \
    "$(grep -c 'timed out' "$WORK/$name.err" || true)"
done
