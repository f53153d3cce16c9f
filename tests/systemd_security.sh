#!/usr/bin/env bash
# `systemd-analyze security --offline=yes` on every shipped unit with a [Service] section
# (contrib/systemd/*.service): the overall exposure must be at most 4.0 (issue 23, item 6), and
# a copy of the unit without its hardening must score worse, so the check is known to measure
# the unit's settings. The binary in ExecStart= is pointed at one that exists, as
# tests/package.sh does for `systemd-analyze verify`.
#
#   SYSTEMD_REQUIRED=1   fail instead of skipping when systemd-analyze is missing
#   MAX_EXPOSURE=4.0     the highest exposure accepted
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
max=${MAX_EXPOSURE:-4.0}
if ! command -v systemd-analyze >/dev/null || ! systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
    echo "systemd_security: systemd-analyze with --offline not installed (apt systemd, 250 or later); skipping"
    [[ ${SYSTEMD_REQUIRED:-0} == 1 ]] && exit 1
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }

# The exposure systemd-analyze prints for a unit file: "Overall exposure level for X: 1.7 OK".
exposure() {
    (cd "$(dirname "$1")" && systemd-analyze security --offline=yes "./$(basename "$1")" 2>&1) |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}

units=("$repo"/contrib/systemd/*.service)
for unit in "${units[@]}"; do
    name=$(basename "$unit")
    sed -e 's#^ExecStart=/usr/bin/gpufix#ExecStart=/bin/true#' "$unit" >"$work/$name"
    score=$(exposure "$work/$name")
    if [[ -n $score ]] && awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
        ok "$name: exposure $score (at most $max)"
    else
        not_ok "$name: exposure ${score:-unknown} (at most $max)"
        (cd "$work" && systemd-analyze security --offline=yes "./$name" 2>&1 | grep '✗' | head -40) || true
    fi
    # the same unit with only its [Unit] and the start line: must be worse, or the check is blind
    mkdir -p "$work/bare"
    awk '/^\[Service\]/ { print; print "Type=oneshot"; print "ExecStart=/bin/true"; skip = 1; next }
         /^\[/ { skip = 0 } !skip' "$unit" >"$work/bare/$name"
    bare=$(exposure "$work/bare/$name")
    if [[ -n $bare ]] && awk -v s="$score" -v b="$bare" 'BEGIN { exit !(b > s) }'; then
        ok "$name: unhardened it would score $bare"
    else
        not_ok "$name: unhardened it would score ${bare:-unknown}, not worse than $score"
    fi
done
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
