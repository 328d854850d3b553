#!/usr/bin/env bash
# Cross-builds all of dpstack for arm64 (the daemon, dpstackctl, libdpstack, the preload shim,
# the examples and the unit tests) against Debian 12's arm64 DPDK, then runs the unit tests
# under qemu-aarch64. Prints each test binary's result, then "N passed, N failed".
#
# Needs what install-deps.sh installs: gcc-aarch64-linux-gnu, qemu-user and the sysroot of
# scripts/arm64-sysroot.sh (cross/arm64-sysroot.ini names it).
#
# Usage: tests/arm64.sh [BUILD_DIR]   (default build-arm64)
set -u
cd "$(dirname "$0")/.."
. tests/unit_run.sh

dir=${1:-build-arm64}
sysroot=$(sed -n "s/^sysroot = '\(.*\)'$/\1/p" cross/arm64-sysroot.ini)
log=$(mktemp -d "${TMPDIR:-/tmp}/dps-arm64.XXXXXX")
trap 'rm -rf "$log"' EXIT

fail() {
	echo "arm64: $*"
	echo "0 passed, 1 failed"
	exit 1
}
command -v aarch64-linux-gnu-gcc >/dev/null || fail "no aarch64-linux-gnu-gcc (install-deps.sh installs it)"
command -v qemu-aarch64 >/dev/null || fail "no qemu-aarch64 (install-deps.sh installs qemu-user)"
[ -f "$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig/libdpdk.pc" ] ||
	fail "no arm64 sysroot at $sysroot (scripts/arm64-sysroot.sh makes it)"

if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" --cross-file cross/arm64-sysroot.ini --cross-file cross/arm64-debian.ini \
		>"$log/setup" 2>&1 || { cat "$log/setup"; fail "meson setup failed"; }
fi
ninja -C "$dir" >"$log/ninja" 2>&1 || { tail -50 "$log/ninja"; fail "build failed"; }
readelf -h "$dir/dpstackd" | grep -q 'Machine: *AArch64' || fail "$dir/dpstackd is not an arm64 program"

# -L: the guest's dynamic loader and libraries come from the sysroot, not the host's /lib.
# DPSTACK_TEST_QEMU: the few tests that meet qemu-user's own limits skip, saying so.
unit_run "$log" "$dir" env DPSTACK_TEST_QEMU=1 qemu-aarch64 -L "$sysroot"
echo "$unit_passed passed, $unit_failed failed"
[ "$unit_failed" -eq 0 ] && [ "$unit_passed" -gt 0 ]
