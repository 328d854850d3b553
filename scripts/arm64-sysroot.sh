#!/usr/bin/env bash
# Makes the arm64 sysroot that the cross build compiles and links against
# (cross/arm64-debian.ini) and qemu-aarch64 runs the unit tests in (tests/arm64.sh):
# Debian 12's arm64 packages of DPDK, cmocka and libpcap with everything they depend on,
# unpacked, not installed. Run as root by install-deps.sh; does nothing when the sysroot is
# there with the same package list.
#
# Why not multiarch (dpkg --add-architecture arm64): libdpdk-dev:arm64 cannot be installed
# beside the host's libdpdk-dev. Its libfdt-dev is not Multi-Arch: same, and its mlx drivers
# bring an arm64 rdma-core stack that conflicts with the host's: apt would remove the amd64
# DPDK (measured with `apt-get install -s`).
#
# Usage: scripts/arm64-sysroot.sh [MIRROR]   (default http://deb.debian.org/debian)
set -euo pipefail
cd "$(dirname "$0")/.."

root=$(sed -n "s/^sysroot = '\(.*\)'$/\1/p" cross/arm64-sysroot.ini)
mirror=${1:-http://deb.debian.org/debian}
packages=libdpdk-dev,libcmocka-dev,libpcap-dev
stamp=$root/.dpstack-packages

[ "$(cat "$stamp" 2>/dev/null)" = "$packages" ] && exit 0
tmp=$root.new
rm -rf "$tmp"
# --foreign: only download and unpack, so no arm64 program runs. It unpacks the base system;
# the packages asked for wait in the apt cache for a second stage we never run.
debootstrap --foreign --arch=arm64 --variant=minbase --include="$packages" bookworm "$tmp" \
	"$mirror" >"$tmp.log" 2>&1 || { tail -20 "$tmp.log"; exit 1; }
for deb in "$tmp"/var/cache/apt/archives/*.deb; do
	# /lib, /bin and /sbin are symlinks into /usr (merged /usr): keep them.
	dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$tmp"
done
rm -f "$tmp"/var/cache/apt/archives/*.deb "$tmp.log"
echo "$packages" >"$tmp/.dpstack-packages"
rm -rf "$root"
mv "$tmp" "$root"
echo "arm64-sysroot.sh: $root ready"
