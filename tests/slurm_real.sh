#!/usr/bin/env bash
# Runs contrib/slurm/gpufix-healthcheck against a real one-node Slurm cluster on localhost:
# munged, slurmctld and slurmd in a temporary directory (own munge socket and key, ports
# 16817/16818, nothing under /etc touched). A fake gpufix reads its answer from a file, so each
# step is decided by the test:
#   1. findings          -> the script drains the node with `gpufix: RULE`
#   2. clean             -> the script resumes it
#   3. admin drain + clean, then + findings -> the node keeps the admin's reason
#   4. slurmd itself runs the script as HealthCheckProgram: the node drains, then resumes.
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
    exit 1
}

mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
chmod 700 "$work/munge"
head -c 128 /dev/urandom >"$work/munge/munge.key"
chmod 600 "$work/munge/munge.key"
munged --force --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
    --seed-file="$work/munge/seed"

# The fake gpufix answers what $work/answer says: `clean`, or a reason line for findings.
cat >"$work/gpufix" <<EOF
#!/bin/sh
answer=\$(cat "$work/answer")
if [ "\$answer" = clean ]; then exit 0; fi
echo "\$answer"
exit 2
EOF
chmod 755 "$work/gpufix"
# What slurmd runs: it passes no useful environment, so the wrapper sets it.
cat >"$work/healthcheck" <<EOF
#!/bin/sh
export GPUFIX="$work/gpufix" SLURM_CONF="$work/slurm.conf"
exec bash "$script" >>"$work/log/healthcheck.log" 2>&1
EOF
chmod 755 "$work/healthcheck"
echo clean >"$work/answer"

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

# slurmd runs HealthCheckProgram at registration and every HealthCheckInterval; restarting
# slurmd with an interval set is the simplest way to make it run now and keep running.
sed -i 's/^HealthCheckInterval=0/HealthCheckInterval=2/' "$SLURM_CONF"
scontrol reconfigure
echo "gpufix: cuda.launch-blocking" >"$work/answer"
wait_for 40 is_drained_by "gpufix: cuda.launch-blocking" || fail "slurmd's health check did not drain: $(state) $(reason)"
echo clean >"$work/answer"
wait_for 40 is_idle || fail "slurmd's health check did not resume: $(state) $(reason)"
echo "ok 4 slurmd runs the health check: drain, then resume"
echo "4 passed, 0 failed"
