# Sourced by tests/run.sh (the ASan/UBSan build) and tests/arm64.sh (the arm64 build under
# qemu): runs one build's cmocka unit tests and counts them.
#
# unit_run LOG_DIR BUILD_DIR [WRAPPER...]: runs every BUILD_DIR/tests/unit/test_* (as
# `WRAPPER... test_x`: env settings, an emulator), prints "test_x: N passed, N failed" for
# each (and how many it skipped, saying why in its output) and the last 40 lines of a failing one's output; sets unit_passed and unit_failed.
unit_run() {
	local log=$1 dir=$2 t name out rc p f s
	shift 2
	unit_passed=0
	unit_failed=0
	for t in "$dir"/tests/unit/test_*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		name=$(basename "$t")
		out=$log/$name
		timeout 300 "$@" "$t" >"$out" 2>&1
		rc=$?
		# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)..."
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		p=${p:-0}
		f=${f:-0}
		if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1 # crashed, sanitizer report or timeout: count the binary as one failure
		fi
		echo "$name: $p passed, $f failed${s:+, $s skipped}"
		[ "$f" -eq 0 ] || tail -40 "$out"
		unit_passed=$((unit_passed + p))
		unit_failed=$((unit_failed + f))
	done
}
