#!/usr/bin/env bash
# Runs contrib/slurm/gpufix-healthcheck against a real one-node Slurm cluster on localhost:
# munged, slurmctld and slurmd in a temporary directory (own munge socket and key, ports
# 16817/16818, nothing under /etc touched). A fake gpufix reads its answer from a file, so each
# step is decided by the test:
#   1. findings          -> the script drains the node with `gpufix: RULE`
#   2. clean             -> the script resumes it
#   3. admin drain + clean, then + findings -> the node keeps the admin's reason
#   4. slurmd itself runs the script as HealthCheckProgram: the node drains, then resumes.
#   5. an audit that cannot run (timeout, usage error, missing binary) fails the check (exit 1)
#      and never resumes a node drained `gpufix: driver.xid-errors`; on an undrained node it
#      drains with `gpufix: audit failed: …`, which a clean audit lifts; an admin's drain stays
#   6. a node with no NVIDIA device is not drained (findings or not), unless --require-gpu
#   7. LBNL NHC itself (its `nhc` script and node-mark-offline/-online helpers, from NHC_DIR)
#      runs contrib/slurm/gpufix.nhc: findings drain, timeout/usage error/missing binary keep
#      the node drained with `NHC: gpufix audit failed: …`, a clean audit resumes, a GPU-less
#      node passes, an admin's drain is never resumed. Debian has no NHC package and CI reaches
#      no place that has it, so upstream's release 1.4.3 (github.com/mej/nhc, bash scripts,
#      nothing to build) is vendored in tests/vendor/lbnl-nhc-1.4.3 and checked by SHA-256;
#      NHC_DIR points elsewhere. Skipped with a note when absent, unless NHC_REQUIRED=1.
# The device check looks under GPUFIX_HC_SYSROOT: $work/gpu has a dev/nvidia0, $work/nogpu
# nothing, so the steps do not depend on the machine running them.
# REAL_GPUFIX (optional): a built gpufix binary; the usage-error steps then use it with a bad flag.
# Needs root and Debian's slurm-wlm and munge (tests/ci-deps.sh installs them). Skips (exit 0 with
# a note) when they are absent; SLURM_REAL_REQUIRED=1 makes that a failure.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
script=$here/contrib/slurm/gpufix-healthcheck

for tool in munged slurmctld slurmd scontrol; do
    if ! command -v "$tool" >/dev/null; then
        echo "slurm_real: \`$tool\` not installed; skipping (tests/ci-deps.sh installs slurm-wlm and munge)"
        [[ ${SLURM_REAL_REQUIRED:-0} == 1 ]] && exit 1
        exit 0
    fi
done
if [[ $(id -u) != 0 ]]; then
    echo "slurm_real: needs root to run slurmd; skipping"
    exit 0
fi

work=$(mktemp -d /tmp/gpufix-slurm.XXXXXX)
chmod 755 "$work"
node=$(hostname -s)
export SLURM_CONF=$work/slurm.conf

cleanup() {
    for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge/munged.pid"; do
        if [[ -s $pidfile ]]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
    done
    sleep 1
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "slurm_real: FAIL: $*" >&2
    echo "--- slurmctld.log" >&2
    tail -20 "$work/log/slurmctld.log" >&2 || true
    echo "--- slurmd.log" >&2
    tail -20 "$work/log/slurmd.log" >&2 || true
    if [[ -f $work/log/nhc.out || -f $work/log/nhc.log ]]; then
        echo "--- nhc" >&2
        tail -n 20 "$work/log/nhc.out" "$work/log/nhc.log" >&2 || true
    fi
    exit 1
}

mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
chmod 700 "$work/munge"
head -c 128 /dev/urandom >"$work/munge/munge.key"
chmod 600 "$work/munge/munge.key"
munged --force --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
    --seed-file="$work/munge/seed"

# The fake gpufix answers what $work/answer says: `clean`, a reason line for findings, `hang`
# (the audit never finishes; the scripts' timeout kills it) or `usage` (a usage error, exit 1).
cat >"$work/gpufix" <<EOF
#!/bin/sh
answer=\$(cat "$work/answer")
if [ "\$answer" = clean ]; then exit 0; fi
if [ "\$answer" = hang ]; then exec sleep 60; fi
if [ "\$answer" = usage ]; then echo "error: unexpected argument '--bogus' found" >&2; exit 1; fi
echo "\$answer"
exit 2
EOF
chmod 755 "$work/gpufix"
# What slurmd runs: it passes no useful environment, so the wrapper sets it.
cat >"$work/healthcheck" <<EOF
#!/bin/sh
export GPUFIX="$work/gpufix" SLURM_CONF="$work/slurm.conf" GPUFIX_HC_SYSROOT="$work/gpu"
exec bash "$script" >>"$work/log/healthcheck.log" 2>&1
EOF
chmod 755 "$work/healthcheck"
echo clean >"$work/answer"
mkdir -p "$work/gpu/dev" "$work/nogpu"
: >"$work/gpu/dev/nvidia0"
export GPUFIX_HC_SYSROOT=$work/gpu

cat >"$work/slurm.conf" <<EOF
ClusterName=gpufixtest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
HealthCheckProgram=$work/healthcheck
HealthCheckInterval=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"

state() { scontrol show node -o "$node" | grep -o 'State=[^ ]*' | cut -d= -f2; }
reason() { scontrol show node -o "$node" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }

wait_for() { # wait_for SECONDS COMMAND... : polls until the command succeeds
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 1
    done
}
is_idle() { [[ $(state 2>/dev/null) == IDLE ]]; }
# Registered: slurmd has reported in (until then the node may show IDLE from saved state).
is_registered() { is_idle && scontrol show node -o "$node" | grep -q 'SlurmdStartTime=[0-9]'; }
is_drained_by() { [[ $(state) == *DRAIN* && $(reason) == "$1" ]]; }

wait_for 30 is_registered || fail "node \`$node\` did not become idle"

run() { GPUFIX="$work/gpufix" bash "$script"; }

echo "gpufix: driver.persistence-off, +1 more" >"$work/answer"
run
is_drained_by "gpufix: driver.persistence-off, +1 more" || fail "findings did not drain: $(state) $(reason)"
echo "ok 1 findings drain the node"

echo clean >"$work/answer"
run
wait_for 10 is_idle || fail "clean audit did not resume: $(state) $(reason)"
echo "ok 2 a clean audit resumes the node gpufix drained"

scontrol update nodename="$node" state=drain reason="bad DIMM, ticket 4711"
run
is_drained_by "bad DIMM, ticket 4711" || fail "clean audit touched an admin drain: $(state) $(reason)"
echo "gpufix: data.mount" >"$work/answer"
run
is_drained_by "bad DIMM, ticket 4711" || fail "findings overwrote an admin drain: $(state) $(reason)"
scontrol update nodename="$node" state=resume
echo "ok 3 an admin's drain is left alone"

# 5. An audit that cannot run fails the check and never resumes a node drained for a fault.
run_rc() { # run_rc ENV... : runs the script with extra environment, prints its exit status
    local rc=0
    env GPUFIX="$work/gpufix" GPUFIX_TIMEOUT=2 "$@" bash "$script" 2>>"$work/log/hc-direct.log" || rc=$?
    echo "$rc"
}
xid="gpufix: driver.xid-errors"
scontrol update nodename="$node" state=drain reason="$xid"
echo hang >"$work/answer"
rc=$(run_rc)
[[ $rc == 1 ]] || fail "a timed-out audit exited $rc, not 1"
is_drained_by "$xid" || fail "a timed-out audit changed the drain: $(state) $(reason)"
echo usage >"$work/answer"
rc=$(run_rc)
[[ $rc == 1 ]] || fail "a usage error exited $rc, not 1"
is_drained_by "$xid" || fail "a usage error changed the drain: $(state) $(reason)"
if [[ -n ${REAL_GPUFIX:-} ]]; then
    rc=$(run_rc GPUFIX="$REAL_GPUFIX" GPUFIX_AUDIT_ARGS=--no-such-flag)
    [[ $rc == 1 ]] || fail "the real gpufix's usage error exited $rc, not 1"
    is_drained_by "$xid" || fail "the real gpufix's usage error changed the drain: $(state) $(reason)"
fi
rc=$(run_rc GPUFIX="$work/no-such-gpufix")
[[ $rc == 1 ]] || fail "a missing binary exited $rc, not 1"
is_drained_by "$xid" || fail "a missing binary changed the drain: $(state) $(reason)"
grep -q "timed out after 2s" "$work/log/hc-direct.log" || fail "the timeout's reason is not logged"
echo "ok 5a timeout, usage error and missing binary fail the check and keep the node drained"
scontrol update nodename="$node" state=resume
wait_for 10 is_idle || fail "node did not resume"
echo hang >"$work/answer"
rc=$(run_rc)
[[ $rc == 1 ]] || fail "a timed-out audit exited $rc, not 1"
is_drained_by "gpufix: audit failed: timed out after 2s" || fail "a timed-out audit did not drain an idle node: $(state) $(reason)"
echo clean >"$work/answer"
run
wait_for 10 is_idle || fail "a clean audit did not lift gpufix's audit-failed drain: $(state) $(reason)"
echo "ok 5b a failed audit drains an idle node with its reason; a clean audit lifts it"
scontrol update nodename="$node" state=drain reason="bad DIMM, ticket 4711"
for answer in hang usage; do
    echo "$answer" >"$work/answer"
    run_rc >/dev/null
    is_drained_by "bad DIMM, ticket 4711" || fail "a failed audit ($answer) touched an admin drain: $(state) $(reason)"
done
scontrol update nodename="$node" state=resume
wait_for 10 is_idle || fail "node did not resume"
echo "ok 5c a failed audit leaves an admin's drain alone"

# 6. No NVIDIA device: findings or a failed audit never drain; --require-gpu audits anyway.
echo "gpufix: driver.nvml-unavailable" >"$work/answer"
rc=$(run_rc GPUFIX_HC_SYSROOT="$work/nogpu")
[[ $rc == 0 ]] || fail "a GPU-less node's check exited $rc, not 0"
[[ $(state) == IDLE ]] || fail "a GPU-less node was drained: $(state) $(reason)"
rc=$(run_rc GPUFIX_HC_SYSROOT="$work/nogpu" GPUFIX="$work/no-such-gpufix")
[[ $rc == 0 && $(state) == IDLE ]] || fail "a GPU-less node without gpufix failed: $rc $(state) $(reason)"
grep -q "no NVIDIA device" "$work/log/hc-direct.log" || fail "the GPU-less note is not logged"
rc=$(run_rc GPUFIX_HC_SYSROOT="$work/nogpu" GPUFIX_REQUIRE_GPU=1)
is_drained_by "gpufix: driver.nvml-unavailable" || fail "--require-gpu did not audit a GPU-less node: $(state) $(reason)"
scontrol update nodename="$node" state=resume
wait_for 10 is_idle || fail "node did not resume"
echo "ok 6 a node with no NVIDIA device is not drained, unless GPUFIX_REQUIRE_GPU=1"

# 7. LBNL NHC itself runs gpufix.nhc.
nhc_dir=${NHC_DIR:-$here/tests/vendor/lbnl-nhc-1.4.3}
if [[ $nhc_dir == "$here/tests/vendor/lbnl-nhc-1.4.3" ]]; then
    # upstream's release 1.4.3, byte for byte (tests/vendor/lbnl-nhc-1.4.3/README.md)
    (cd "$nhc_dir" && sha256sum --quiet -c - <<'SUMS') || fail "the vendored NHC differs from release 1.4.3"
d98ae8433d2c68032a90681dcd0f11088ce4f97764482625591d16b2f8f858a9  nhc
8d0522e54574dbc5a3f7f11c23607d9ba0e7b328bf36441d73c084c3781555e6  helpers/node-mark-offline
993c93b6cdc251a2c8ca6a7adfb0ead7dcaa574f04c7133a5ae3a2494ab02996  helpers/node-mark-online
5a4867c2613648f65e4ca210b7e1965c0d3f1f00a0cc673580ecc263f0a5a535  scripts/common.nhc
SUMS
fi
if [[ -f $nhc_dir/nhc && -f $nhc_dir/helpers/node-mark-offline ]]; then
    mkdir -p "$work/nhc/scripts" "$work/nhc/helpers"
    # As `make install` does: the helpers NHC evals must be executable.
    install -m 755 "$nhc_dir/helpers/node-mark-offline" "$nhc_dir/helpers/node-mark-online" "$work/nhc/helpers/"
    cp "$nhc_dir/scripts/common.nhc" "$here/contrib/slurm/gpufix.nhc" "$work/nhc/scripts/"
    echo "* || check_gpufix" >"$work/nhc/nhc.conf"
    nhc() { # nhc ENV... : LBNL NHC's own script in Slurm mode; prints its exit status
        local rc=0
        env GPUFIX_BIN="$work/gpufix" GPUFIX_NHC_TIMEOUT=2 "$@" bash "$nhc_dir/nhc" -D "$work/nhc" \
            -c "$work/nhc/nhc.conf" -l "$work/log/nhc.log" -t 20 NHC_RM=slurm HOSTNAME="$node" \
            HELPERDIR="$work/nhc/helpers" >>"$work/log/nhc.out" 2>&1 || rc=$?
        echo "$rc"
    }
    echo "gpufix: driver.xid-errors" >"$work/answer"
    rc=$(nhc)
    [[ $rc != 0 ]] || fail "NHC passed with a failing rule"
    wait_for 10 is_drained_by "NHC: gpufix: driver.xid-errors" || fail "NHC did not drain with gpufix's reason: $(state) $(reason)"
    for answer in hang usage missing; do
        gpufix_bin=$work/gpufix
        if [[ $answer == missing ]]; then gpufix_bin=$work/no-such-gpufix; else echo "$answer" >"$work/answer"; fi
        rc=$(nhc GPUFIX_BIN="$gpufix_bin")
        [[ $rc != 0 ]] || fail "NHC passed when the audit could not run ($answer)"
        [[ $(state) == *DRAIN* && $(reason) == "NHC: gpufix audit failed: "* ]] ||
            fail "NHC resumed or lost the drain when the audit could not run ($answer): $(state) $(reason)"
    done
    grep -q "gpufix audit failed: timed out after 2s" "$work/log/nhc.log" || fail "NHC's log lacks the timeout's reason"
    echo "ok 7a NHC: timeout, usage error and missing binary fail the check and keep the node drained"
    echo clean >"$work/answer"
    rc=$(nhc)
    [[ $rc == 0 ]] || fail "NHC failed a clean audit ($rc)"
    wait_for 10 is_idle || fail "NHC did not resume its own drain after a clean audit: $(state) $(reason)"
    echo "gpufix: driver.nvml-unavailable" >"$work/answer"
    rc=$(nhc GPUFIX_HC_SYSROOT="$work/nogpu")
    [[ $rc == 0 && $(state) == IDLE ]] || fail "NHC drained a GPU-less node: $rc $(state) $(reason)"
    echo "ok 7b NHC: a clean audit resumes; a GPU-less node passes"
    scontrol update nodename="$node" state=drain reason="bad DIMM, ticket 4711"
    echo clean >"$work/answer"
    nhc >/dev/null
    echo hang >"$work/answer"
    nhc >/dev/null
    is_drained_by "bad DIMM, ticket 4711" || fail "NHC changed an admin's drain: $(state) $(reason)"
    scontrol update nodename="$node" state=resume
    wait_for 10 is_idle || fail "node did not resume"
    echo "ok 7c NHC: an admin's drain is never resumed or overwritten"
else
    echo "slurm_real: LBNL NHC not found in $nhc_dir; NHC steps skipped (tests/ci-deps.sh installs it)"
    [[ ${NHC_REQUIRED:-0} == 1 ]] && fail "NHC_REQUIRED=1 and no NHC in $nhc_dir"
fi

# slurmd runs HealthCheckProgram at registration and every HealthCheckInterval; restarting
# slurmd with an interval set is the simplest way to make it run now and keep running.
sed -i 's/^HealthCheckInterval=0/HealthCheckInterval=2/' "$SLURM_CONF"
scontrol reconfigure
echo "gpufix: cuda.launch-blocking" >"$work/answer"
wait_for 40 is_drained_by "gpufix: cuda.launch-blocking" || fail "slurmd's health check did not drain: $(state) $(reason)"
echo clean >"$work/answer"
wait_for 40 is_idle || fail "slurmd's health check did not resume: $(state) $(reason)"
echo "ok 4 slurmd runs the health check: drain, then resume"
echo "slurm_real: all steps passed"
