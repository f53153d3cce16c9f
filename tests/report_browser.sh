#!/usr/bin/env bash
# `gpufix report` in a real browser (issue 26): renders the fixture runs in tests/fixtures/runs/
# with the gpufix that `cargo test` built, then loads each page from file:// in Debian's headless
# Chromium through playwright-core (tests/browser/report.mjs says what it checks). Screenshots go
# to target/report-browser/*.png.
#   GPUFIX_BIN               the binary [${CARGO_TARGET_DIR:-target}/debug/gpufix]
#   CHROMIUM                 the browser [/usr/bin/chromium] (apt chromium, tests/ci-deps.sh)
#   REPORT_BROWSER_REQUIRED  set: a missing browser or node fails instead of skipping
# playwright-core comes from the npm registry at the version tests/browser/package-lock.json pins
# (`npm ci`); `npx playwright install` (a browser download) is never used.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
bin=${GPUFIX_BIN:-$target/debug/gpufix}
chromium=${CHROMIUM:-/usr/bin/chromium}
out=$target/report-browser

missing() {
    if [[ -n "${REPORT_BROWSER_REQUIRED:-}" ]]; then
        echo "report_browser: $1 (tests/ci-deps.sh installs it)" >&2
        exit 1
    fi
    echo "report_browser: skipped: $1"
    exit 0
}
[[ -x "$chromium" ]] || missing "no browser at $chromium"
command -v node >/dev/null || missing "node is not installed"
[[ -x "$bin" ]] || { echo "report_browser: no gpufix at $bin: run cargo test first" >&2; exit 1; }

t0=$SECONDS
if [[ ! -f tests/browser/node_modules/playwright-core/package.json ]] ||
    ! cmp -s tests/browser/package-lock.json tests/browser/node_modules/.package-lock.json.ci; then
    (cd tests/browser && npm ci --no-audit --no-fund --silent &&
        cp package-lock.json node_modules/.package-lock.json.ci)
fi
echo "report_browser: playwright-core ready in $((SECONDS - t0)) s"

rm -rf "$out"
mkdir -p "$out"
runs=tests/fixtures/runs
entries=()
render() { # name hostile run [after]
    local name=$1 hostile=$2 run=$3 after=${4:-}
    if [[ -n "$after" ]]; then
        "$bin" report "$runs/$run" --compare "$runs/$after" -o "$out/$name.html"
        entries+=("{\"name\":\"$name\",\"page\":\"$out/$name.html\",\"runs\":[\"$runs/$run\",\"$runs/$after\"],\"hostile\":$hostile}")
    else
        "$bin" report "$runs/$run" -o "$out/$name.html"
        entries+=("{\"name\":\"$name\",\"page\":\"$out/$name.html\",\"runs\":[\"$runs/$run\"],\"hostile\":$hostile}")
    fi
}
render compare false synthetic-starved.json synthetic-healthy.json
render starved false synthetic-starved.json
render healthy false synthetic-healthy.json
render no-pcie false synthetic-no-pcie.json
render downsampled false synthetic-downsampled.json
render hostile true synthetic-hostile.json
# recorded runs, once `gpufix record` has written them (any tests/fixtures/runs/*.json not synthetic)
for f in "$runs"/*.json; do
    base=$(basename "$f" .json)
    [[ "$base" == synthetic-* ]] && continue
    render "$base" false "$base.json"
done
(IFS=,; echo "[${entries[*]}]") >"$out/manifest.json"

t1=$SECONDS
CHROMIUM=$chromium node tests/browser/report.mjs "$out/manifest.json"
echo "report_browser: pages checked in $((SECONDS - t1)) s; screenshots in $out"
