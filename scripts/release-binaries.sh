#!/usr/bin/env bash
# Release binaries for x86_64 and aarch64 linked against glibc 2.28 (RHEL/Rocky 8, Debian 10),
# with cargo-zigbuild and zig from PyPI (`pip install cargo-zigbuild ziglang`, or
# `cargo install --locked cargo-zigbuild`), then a check that no symbol needs a newer glibc.
# Needs the Rust standard library for each target (`rustup target add aarch64-unknown-linux-gnu`),
# which rustup downloads from the Rust project's own server, not from a package registry.
#
#   GLIBC=2.28              the oldest glibc the binaries are for
#   ARCHS="x86_64 aarch64"  which architectures
#   PROFILE=release         or dev (CI: a debug build for the glibc check, release is too slow)
#
# Prints, per architecture, the binary's path and the newest glibc symbol version `objdump -T`
# finds in it; exits 1 when that is newer than GLIBC.
set -euo pipefail
cd "$(dirname "$0")/.."
glibc=${GLIBC:-2.28}
profile=${PROFILE:-release}
dir=$([[ $profile == dev ]] && echo debug || echo "$profile")
target=${CARGO_TARGET_DIR:-target}
if ! command -v zig >/dev/null && python3 -c 'import ziglang' 2>/dev/null; then
    # the ziglang wheel's zig, for cargo-zigbuild and the C compiles it hands to `zig cc`
    PATH=$PATH:$(python3 -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')
fi
for arch in ${ARCHS:-x86_64 aarch64}; do
    triple=$arch-unknown-linux-gnu
    start=$SECONDS
    cargo zigbuild --profile "$profile" --locked --target "$triple.$glibc"
    bin=$target/$triple/$dir/gpufix
    # binutils' objdump reads another architecture's dynamic symbols as generic ELF
    newest=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    echo "$triple: $bin built in $((SECONDS - start)) s; objdump -T: newest $newest"
    if [[ -z $newest || $(printf '%s\n%s\n' "GLIBC_$glibc" "$newest" | sort -V | tail -1) != "GLIBC_$glibc" ]]; then
        echo "error: $bin needs ${newest:-no glibc symbol at all}, not glibc $glibc at most" >&2
        exit 1
    fi
done
