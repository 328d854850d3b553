#!/usr/bin/env bash
# The one test command (README, .ci/run): unit tests under ASan/UBSan, the arm64 cross build
# with its unit tests under qemu (tests/arm64.sh), every fuzz target for a few seconds, then
# the integration suite against the Linux kernel in network namespaces.
# Prints each part's result and ends with one line "N passed, N failed".
#
# Environment: FUZZ_SECONDS (default 10) per fuzz target; PYTEST_ARGS passed to pytest.
set -u
cd "$(dirname "$0")/.."
. tests/unit_run.sh

fuzz_seconds=${FUZZ_SECONDS:-10}
passed=0
failed=0
log=$(mktemp -d "${TMPDIR:-/tmp}/dps-tests.XXXXXX")
trap 'rm -rf "$log"' EXIT

add() { passed=$((passed + $1)); failed=$((failed + $2)); }
add_summary() { # FILE: adds the counts of its last "N passed, N failed" line (none: 1 failure)
	local p f
	p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$1" | tail -1)
	f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$1" | tail -1)
	add "${p:-0}" "${f:-1}"
}

setup() { # DIR ARGS... : configure a build directory once, then build it
	local dir=$1
	shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >"$log/setup-$dir" 2>&1 ||
		{ cat "$log/setup-$dir"; return 1; }
	ninja -C "$dir" >"$log/ninja-$dir" 2>&1 || { tail -50 "$log/ninja-$dir"; return 1; }
}

echo "== unit tests (ASan + UBSan) =="
if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
	unit_run "$log" build-asan env ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	add "$unit_passed" "$unit_failed"
else
	echo "unit tests: build failed"
	add 0 1
fi

echo "== arm64: cross-built, unit tests under qemu-aarch64 =="
tests/arm64.sh | tee "$log/arm64"
add_summary "$log/arm64"

echo "== fuzz targets (${fuzz_seconds}s each) =="
if CC=clang setup build-fuzz -Dfuzz=true; then
	tests/fuzz/run.sh build-fuzz "$fuzz_seconds" | tee "$log/fuzz"
	add_summary "$log/fuzz"
else
	echo "fuzz targets: build failed"
	add 0 1
fi

# The integration suite runs twice: against the ASan/UBSan daemon (memory errors and leaks
# in the real packet path fail the daemon's exit status, which every test checks) and
# against the release build users run.
integ() { # LABEL BUILD_DIR
	echo "== integration tests, $1 (kernel peer in network namespaces) =="
	local out=$log/integ-$1
	# shellcheck disable=SC2086
	DPSTACK_BUILD=$2 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
		LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
		/usr/bin/python3 -m pytest tests/integ -q -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 |
		tee "$out"
	local summary p f=0 n
	summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)' "$out" | tail -1)
	p=$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
	for n in $(echo "$summary" | grep -oE '[0-9]+ (failed|errors?)' | grep -oE '[0-9]+'); do
		f=$((f + n))
	done
	if [ -z "$p" ] && [ "$f" -eq 0 ]; then
		echo "integration tests ($1): no result line"
		f=1
	fi
	add "${p:-0}" "$f"
}
if [ -x build-asan/dpstackd ]; then
	integ asan build-asan
else
	echo "integration tests (asan): no daemon built"
	add 0 1
fi
if setup build; then
	integ release build
else
	echo "integration tests (release): build failed"
	add 0 1
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
