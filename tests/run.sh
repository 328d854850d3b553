#!/usr/bin/env bash
# The one test command (README, .ci/run): unit tests under ASan/UBSan, every fuzz target for a
# few seconds, then the integration suite against the Linux kernel in network namespaces.
# Prints each part's result and ends with one line "N passed, N failed".
#
# Environment: FUZZ_SECONDS (default 10) per fuzz target; PYTEST_ARGS passed to pytest.
set -u
cd "$(dirname "$0")/.."

fuzz_seconds=${FUZZ_SECONDS:-10}
passed=0
failed=0
log=$(mktemp -d "${TMPDIR:-/tmp}/dps-tests.XXXXXX")
trap 'rm -rf "$log"' EXIT

add() { passed=$((passed + $1)); failed=$((failed + $2)); }

setup() { # DIR ARGS... : configure a build directory once, then build it
	local dir=$1
	shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >"$log/setup-$dir" 2>&1 ||
		{ cat "$log/setup-$dir"; return 1; }
	ninja -C "$dir" >"$log/ninja-$dir" 2>&1 || { tail -50 "$log/ninja-$dir"; return 1; }
}

echo "== unit tests (ASan + UBSan) =="
if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
	for t in build-asan/tests/unit/test_*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		name=$(basename "$t")
		out=$log/$name
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			timeout 300 "$t" >"$out" 2>&1
		rc=$?
		# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)..."
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		p=${p:-0}
		f=${f:-0}
		if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1 # crashed, sanitizer report or timeout: count the binary as one failure
		fi
		echo "$name: $p passed, $f failed"
		[ "$f" -eq 0 ] || tail -40 "$out"
		add "$p" "$f"
	done
else
	echo "unit tests: build failed"
	add 0 1
fi

echo "== fuzz targets (${fuzz_seconds}s each) =="
if CC=clang setup build-fuzz -Dfuzz=true; then
	tests/fuzz/run.sh build-fuzz "$fuzz_seconds" | tee "$log/fuzz"
	p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log/fuzz" | tail -1)
	f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log/fuzz" | tail -1)
	add "${p:-0}" "${f:-1}"
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
