#!/usr/bin/env bash
# Runs contrib/ansible/test/site.yml against the gpufix Ansible module on localhost:
#   1. --check --diff: reports changed=1 and prints a diff, and the fixture is untouched
#   2. a real run: changed=1, and the fixture now differs
#   3. the same run again: changed=0 (idempotent), and --check agrees
#   4. the module's own cases, always with the fake binary (MODULE_CASES=0 leaves them out):
#      --deny of the fix's kind predicts no change; --diff with before_text/after_text; a
#      failing binary fails the task with its message; apply's exit 4 (re-check failed) is
#      changed with a warning; a root that does not exist fails
#   5. (a real gpufix; SECRET_CASES=0 leaves them out) secrets in the job's env file appear
#      nowhere in -vvv output: not in the invocation, the result or the --diff
#
#   GPUFIX_BIN    gpufix binary (default: contrib/ansible/test/fake-gpufix, which needs no build)
#   FIXTURE_ROOT  a root tree with one failing rule whose fix is allowed (copied, never changed);
#                 default: a tree with CUDA_LAUNCH_BLOCKING=1 in etc/environment
#   GPUFIX_ALLOW  comma-separated fix kinds passed as `allow` (default: none, i.e. gpufix's default)
#   PENDING_ROOT  a root tree where one change is skipped and one disruptive change stays pending:
#                 check mode, apply (handler fires, recap skipped=0), check mode again (changed=0)
#
# Needs ansible-core (tests/ci-deps.sh installs it). Skips with a note when ansible-playbook is
# absent, unless ANSIBLE_REQUIRED=1.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
fake=$repo/contrib/ansible/test/fake-gpufix
bin=${GPUFIX_BIN:-$fake}

if ! command -v ansible-playbook >/dev/null; then
    echo "ansible: ansible-playbook not installed; skipping (tests/ci-deps.sh installs ansible-core)"
    [[ ${ANSIBLE_REQUIRED:-0} == 1 ]] && exit 1
    exit 0
fi

work=$(mktemp -d /tmp/gpufix-ansible.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"
if [[ -n ${FIXTURE_ROOT:-} ]]; then
    cp -a "$FIXTURE_ROOT/." "$work/root/"
else
    mkdir -p "$work/root/etc"
    printf 'PATH=/usr/local/bin:/usr/bin\nCUDA_LAUNCH_BLOCKING=1\nLANG=C.UTF-8\n' >"$work/root/etc/environment"
fi

export ANSIBLE_COLLECTIONS_PATH=$repo/contrib/ansible
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_RETRY_FILES_ENABLED=0
export ANSIBLE_LOCAL_TEMP=$work/ansible-tmp ANSIBLE_REMOTE_TEMP=$work/ansible-tmp
python=$(python3 -c 'import sys; print(sys.executable)')

allow_json="[]"
if [[ -n ${GPUFIX_ALLOW:-} ]]; then
    allow_json=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1].split(",")))' "$GPUFIX_ALLOW")
fi

passed=0
failed=0
check() { # check NAME CONDITION-COMMAND...
    local name=$1
    shift
    if "$@"; then
        echo "ok - $name"
        passed=$((passed + 1))
    else
        echo "not ok - $name"
        echo "----- output"
        cat "$work/out"
        echo "-----"
        failed=$((failed + 1))
    fi
}

playbook() { # playbook BINARY EXTRA-VARS-JSON [ansible-playbook args...]
    local binary=$1 extra=$2
    shift 2
    local vars
    vars=$(python3 -c 'import json,sys; v=dict(gpufix_binary=sys.argv[1], gpufix_root=sys.argv[2], gpufix_allow=json.loads(sys.argv[3]), ansible_python_interpreter=sys.argv[5]); v.update(json.loads(sys.argv[4])); print(json.dumps(v))' \
        "$binary" "$work/root" "$allow_json" "$extra" "$python")
    ansible-playbook -i localhost, -c local "$repo/contrib/ansible/test/site.yml" -e "$vars" "$@" >"$work/out" 2>&1
}

recap() { grep -E '^localhost +: ' "$work/out"; }
recap_has() { recap | grep -q -- "$1"; }
has_diff() { grep -qE '^@@ ' "$work/out" && grep -qE '^[-+][^-+]' "$work/out"; }
tree_sum() { (cd "$work/root" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

before=$(tree_sum)
playbook "$bin" '{}' --check --diff || true
check "check mode reports a change" recap_has "changed=1"
check "check mode prints a diff" has_diff
check "check mode leaves the host untouched" test "$before" == "$(tree_sum)"

playbook "$bin" '{}' --diff || true
check "apply reports a change" recap_has "changed=1"
check "apply succeeds" recap_has "failed=0"
check "apply changes the host" test "$before" != "$(tree_sum)"

after=$(tree_sum)
playbook "$bin" '{}' || true
check "a second apply changes nothing" recap_has "changed=0"
check "the second apply succeeds" recap_has "failed=0"
check "the second apply leaves the host as it was" test "$after" == "$(tree_sum)"
playbook "$bin" '{}' --check || true
check "check mode agrees nothing is left to do" recap_has "changed=0"

if [[ ${MODULE_CASES:-1} == 1 ]]; then
    # The module's own edge cases, with the fake binary whatever GPUFIX_BIN is (they are about
    # how the module maps exits and arguments, and need answers a real host cannot be made to
    # give on demand, such as exit 4), on a fresh failing tree, with the fake's default allow.
    saved_allow=$allow_json
    allow_json="[]"
    printf 'CUDA_LAUNCH_BLOCKING=1\n' >"$work/root/etc/environment"
    playbook "$fake" '{"gpufix_deny": ["env.unset"]}' --check --diff || true
    check "a denied kind is not predicted as a change" recap_has "changed=0"

    FAKE_GPUFIX_BEFORE_AFTER=1 playbook "$fake" '{}' --check --diff || true
    # Ansible labels whole-text diffs `--- before: HEADER`; a prepared unified diff has no label.
    check "before_text/after_text become a whole-file diff" grep -qE '^--- before: /etc/environment' "$work/out"
    check "the whole-file diff removes the line" grep -qE '^-CUDA_LAUNCH_BLOCKING=1' "$work/out"

    cat >"$work/broken" <<'SH'
#!/bin/sh
echo 'error: playbook `site.yaml`: unknown key `fial_when`' >&2
exit 1
SH
    chmod +x "$work/broken"
    playbook "$work/broken" '{}' || true
    check "a gpufix error fails the task" recap_has "failed=1"
    # shellcheck disable=SC2016 # the backticks are literal text of gpufix's message
    check "the failure shows gpufix's message" grep -q 'unknown key `fial_when`' "$work/out"

    # Exit 4: the changes were made and verified, the re-check failed. The host changed, so
    # the task is changed (the handler fires) and warns with the re-check's reason.
    printf 'CUDA_LAUNCH_BLOCKING=1\n' >"$work/root/etc/environment"
    FAKE_GPUFIX_RECHECK_FAIL=1 playbook "$fake" '{}' -v || true
    check "exit 4: the task is changed" recap_has "changed=1"
    check "exit 4: the task does not fail" recap_has "failed=0"
    check "exit 4: the handler fires" grep -q "HANDLER-FIRED" "$work/out"
    check "exit 4: a warning with the re-check's reason" grep -q "\[WARNING\]: gpufix applied and verified every change, but re-checking the rules failed: .*cannot run" "$work/out"

    playbook "$fake" '{"gpufix_root": "'"$work"'/no-such-root"}' || true
    check "a root that does not exist fails the task" recap_has "failed=1"
    check "the failure names the root" grep -q "no-such-root is not a directory" "$work/out"

    log=$work/argv.log
    FAKE_GPUFIX_LOG=$log playbook "$fake" '{"gpufix_allow": ["env.unset", "config.set"]}' || true
    check "apply passes each allowed kind" grep -qF '"apply", "--yes", "--format", "json", "--root", "'"$work/root"'", "--allow", "env.unset", "--allow", "config.set"' "$log"
    FAKE_GPUFIX_LOG=$log playbook "$fake" '{"gpufix_allow": ["env.unset"], "gpufix_allow_disruptive": true}' --check || true
    check "check mode runs apply --dry-run with the same filters" grep -qF '"apply", "--dry-run", "--format", "json", "--root", "'"$work/root"'", "--allow", "env.unset", "--allow-disruptive"' "$log"
    allow_json=$saved_allow
fi

if [[ $bin != "$fake" && ${SECRET_CASES:-1} == 1 ]]; then
    # Secrets in the job's env file never reach what Ansible shows or logs: not the invocation
    # (its module_args, printed at -vvv, are what the module logs on the host; every option is
    # a path or a fix kind, so none is no_log), not `applied`, not the --diff. gpufix's privacy
    # filter (src/privacy.rs) redacts them; this runs the real binary through the module. The
    # values are made up, in the shapes the filter knows (a Hugging Face token, a URL's
    # password, a secret-named variable).
    secrets=(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 'pw-9f3Kq2' 'wandb-7c1d9e0b2a4f6835')
    printf 'CUDA_LAUNCH_BLOCKING=1\nHF_TOKEN=%s\nDATABASE_URL=postgres://trainer:%s@db.internal/runs\nWANDB_API_KEY=%s\n' \
        "${secrets[@]}" >"$work/job.env"
    env_before=$(cat "$work/job.env")
    secret_free() { ! grep -qF -e "${secrets[0]}" -e "${secrets[1]}" -e "${secrets[2]}" "$work/out"; }
    playbook "$bin" '{"gpufix_env_file": "'"$work"'/job.env", "gpufix_allow": ["env.unset"]}' --check --diff -vvv || true
    check "secrets: check mode predicts the env file's change" recap_has "changed=1"
    check "secrets: the invocation shows the env file's path" grep -qF '"env_file": "'"$work"'/job.env"' "$work/out"
    check "secrets: no secret in check mode's invocation, result or diff" secret_free
    check "secrets: the diff shows them redacted" grep -q '^ HF_TOKEN=<redacted>' "$work/out"
    playbook "$bin" '{"gpufix_env_file": "'"$work"'/job.env", "gpufix_allow": ["env.unset"]}' --diff -vvv || true
    check "secrets: apply changes the env file" recap_has "changed=1"
    check "secrets: no secret in apply's invocation, result or diff" secret_free
    check "secrets: apply removed only CUDA_LAUNCH_BLOCKING" test "$(cat "$work/job.env")" == "$(grep -v '^CUDA_LAUNCH_BLOCKING=' <<<"$env_before")"
fi

if [[ -n ${PENDING_ROOT:-} ]]; then
    # A handler notified by the module fires only when the task changed something (it did not
    # while the module returned Ansible's reserved `skipped` key).
    # The CI fixture: one change that gpufix skips (a kind not allowed) and one disruptive change
    # pending. Check mode must predict what apply does, so after the apply check mode settles at
    # changed=0 while the disruptive change stays in not_applied.
    rm -rf "$work/root" && mkdir -p "$work/root" && cp -a "$PENDING_ROOT/." "$work/root/"
    playbook "$bin" '{}' --check -v || true
    check "pending: check mode predicts a change" recap_has "changed=1"
    check "pending: a task that changed is not reported as skipped" recap_has "skipped=0"
    check "pending: check mode lists what will not be applied" grep -q "not applied:" "$work/out"
    playbook "$bin" '{}' -v || true
    check "pending: apply changes the host and fires the handler" grep -q "HANDLER-FIRED" "$work/out"
    check "pending: apply is not reported as skipped" recap_has "skipped=0"
    playbook "$bin" '{}' --check || true
    check "pending: check mode settles at changed=0 with the disruptive change pending" recap_has "changed=0"
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
