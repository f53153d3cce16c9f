#!/usr/bin/env bash
# `ansible-test sanity` on the collection gpufix.gpufix (contrib/ansible/ansible_collections/
# gpufix/gpufix): every sanity test ansible-core ships (validate-modules, pylint, pep8, yamllint,
# import, shellcheck, ...) on the local Python, each in the venv ansible-test makes for it.
#
# ansible-test bootstraps pip in those venvs with a script it downloads from
# ci-files.testing.ansible.com, which this build machine cannot reach (only package registries).
# When its cache lacks the script, a stand-in is written: pip from the interpreter's own
# ensurepip, then the pinned pip from PyPI. ensurepip sets PIP_CONFIG_FILE=/dev/null for itself;
# the stand-in drops it again, or pip ignores the site's pip.conf and its CA bundle.
#
#   ANSIBLE_REQUIRED=1   fail instead of skipping when ansible-test is missing
#   SANITY_TESTS="a b"   only these tests (default: all)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
coll=$repo/contrib/ansible/ansible_collections/gpufix/gpufix
if ! command -v ansible-test >/dev/null; then
    echo "ansible-sanity: ansible-test not installed (pip install ansible-core); skipping"
    [[ ${ANSIBLE_REQUIRED:-0} == 1 ]] && exit 1
    exit 0
fi
pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pip_version=$(python3 -c '
import inspect, re
from ansible_test._internal import python_requirements as m
print(re.search(r"pip=.([0-9.]+).", inspect.getsource(m.get_venv_packages)).group(1))')
stand_in=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
if [[ ! -s $stand_in ]]; then
    mkdir -p "$(dirname "$stand_in")"
    cat >"$stand_in" <<'PY'
# Stand-in for ansible-test's pip bootstrap script (written by gpufix's tests/ansible_sanity.sh;
# its download host is not reachable here): pip from ensurepip, then what was asked from PyPI.
import ensurepip
import os
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
os.environ.pop("PIP_CONFIG_FILE", None)  # set to /dev/null by ensurepip for itself
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)
PY
fi
tests=()
for t in ${SANITY_TESTS:-}; do tests+=(--test "$t"); done
cd "$coll"
# ansible-test writes tests/output inside the collection (ignored by git)
ansible-test sanity --local --python "$pyver" "${tests[@]}"
