# shellcheck shell=bash
# bench/capture_lib.sh: what the capture_h200*.sh scripts share (sourced, not run). Expects
# `out` (the folder to write); sets `py` (the python that holds PyTorch), makes `out` absolute,
# starts made.tsv, and defines `cap FILE HOW CMD...`: run CMD with stdout and stderr into
# OUT/FILE under a timeout of CAP_TIMEOUT seconds (default 120), its exit status into
# OUT/FILE.exit, and HOW into made.tsv.
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
mkdir -p "$out"; out=$(readlink -f "$out")
made="$out/made.tsv"; printf 'file\thow it was made\n' > "$made"
note() { printf '%s\t%s\n' "$1" "$2" >> "$made"; }
cap() { # cap FILE "how" cmd...
  local f=$1 how=$2; shift 2
  timeout "${CAP_TIMEOUT:-120}" "$@" > "$out/$f" 2>&1; echo "exit=$?" >> "$out/$f.exit"
  note "$f" "$how"
}
