#!/usr/bin/env bash
# Runs contrib/kubernetes/gpufix-npd as Node Problem Detector would (exit status and first stdout
# line; NPD's custom plugin protocol: 0 OK, 1 NonOK, anything else Unknown) against a fake gpufix
# that answers what $work/answer says, under a root tree with and without an NVIDIA device:
#   findings -> 1 with gpufix's reason; then an audit that cannot run (timeout, usage error,
#   missing binary) -> 1 again (a True condition stays True) with the failure appended;
#   clean -> 0; an audit that cannot run with no earlier finding -> 2 (Unknown) with its reason;
#   no NVIDIA device -> 0 with a note (findings or not), unless GPUFIX_REQUIRE_GPU=1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
plugin=$repo/contrib/kubernetes/gpufix-npd
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gpu/dev" "$work/nogpu"
: >"$work/gpu/dev/nvidia0"
cat >"$work/gpufix" <<SH
#!/bin/sh
answer=\$(cat "$work/answer")
if [ "\$answer" = clean ]; then exit 0; fi
if [ "\$answer" = hang ]; then exec sleep 60; fi
if [ "\$answer" = usage ]; then echo "error: unexpected argument '--bogus' found" >&2; exit 1; fi
echo "\$answer"
exit 2
SH
chmod 755 "$work/gpufix"
passed=0 failed=0
npd() { # npd ROOT [ENV...]: prints "EXIT MESSAGE"
    local root=$1 rc=0 out
    shift
    out=$(env GPUFIX="$work/gpufix" GPUFIX_ROOT="$root" GPUFIX_TIMEOUT=2 GPUFIX_NPD_STATE="$work/state" "$@" bash "$plugin") || rc=$?
    echo "$rc ${out%%$'\n'*}"
}
expect() { # expect NAME GOT WANT-GLOB
    # shellcheck disable=SC2053 # the third argument is a glob
    if [[ $2 == $3 ]]; then
        echo "ok - $1"
        passed=$((passed + 1))
    else
        echo "not ok - $1: got \`$2\`, want \`$3\`"
        failed=$((failed + 1))
    fi
}

echo "gpufix: driver.xid-errors" >"$work/answer"
expect "findings: NonOK with gpufix's reason" "$(npd "$work/gpu")" "1 gpufix: driver.xid-errors"
echo hang >"$work/answer"
expect "timeout after a finding stays NonOK" "$(npd "$work/gpu")" "1 gpufix: driver.xid-errors (audit failed: timed out after 2s)"
echo usage >"$work/answer"
expect "usage error after a finding stays NonOK" "$(npd "$work/gpu")" "1 gpufix: driver.xid-errors (audit failed: exit 1: error: unexpected argument*"
expect "missing binary after a finding stays NonOK" "$(npd "$work/gpu" GPUFIX="$work/none")" "1 gpufix: driver.xid-errors (audit failed: $work/none not found)"
echo clean >"$work/answer"
expect "clean: OK" "$(npd "$work/gpu")" "0 gpufix: healthy"
echo hang >"$work/answer"
expect "timeout with no earlier finding: Unknown" "$(npd "$work/gpu")" "2 gpufix audit failed: timed out after 2s"
echo "gpufix: driver.nvml-unavailable" >"$work/answer"
expect "no NVIDIA device: OK with a note" "$(npd "$work/nogpu")" "0 gpufix: no NVIDIA device on this node"
expect "no NVIDIA device, GPUFIX_REQUIRE_GPU=1: audited" "$(npd "$work/nogpu" GPUFIX_REQUIRE_GPU=1)" "1 gpufix: driver.nvml-unavailable"
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
