#!/usr/bin/env bash
# Release binaries for x86_64 and aarch64 linked against glibc 2.28 (RHEL/Rocky 8), with
# cargo-zigbuild and zig from PyPI (`pip install cargo-zigbuild ziglang`), then a check that no
# symbol needs a newer glibc. Needs the Rust standard library for each target
# (`rustup target add aarch64-unknown-linux-gnu`), which rustup downloads from the Rust project's
# own server, not from a package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
glibc=${GLIBC:-2.28}
for triple in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
    cargo zigbuild --release --locked --target "$triple.$glibc"
    bin=target/$triple/release/gpufix
    newest=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    echo "$triple: needs $newest"
    if [[ $(printf '%s\n%s\n' "GLIBC_$glibc" "$newest" | sort -V | tail -1) != "GLIBC_$glibc" ]]; then
        echo "error: $bin needs $newest, newer than glibc $glibc" >&2
        exit 1
    fi
done
