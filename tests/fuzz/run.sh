#!/usr/bin/env bash
# Runs every fuzz target that has a seed corpus (corpus/<name>/ for fuzz_<name>: the wire
# parsers, fuzz_stack, fuzz_tcp_conn and fuzz_chan) for SECONDS each, on a temporary copy of that corpus (the
# committed corpus stays as it is). Prints "fuzz <name>: ok|FAILED" per target, then
# "N passed, N failed"; exits non-zero if any target failed. Crash inputs are kept under
# BUILD_DIR/fuzz-artifacts/<name>/.
#
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS
#   (BUILD_DIR configured with: CC=clang meson setup BUILD_DIR -Dfuzz=true)
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS" >&2
	exit 2
fi
build=$1
secs=$2
case $secs in
'' | *[!0-9]* | 0)
	echo "$0: SECONDS must be a positive integer, not '$secs'" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dps-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
for seeds in "$here"/corpus/*/; do
	name=$(basename "$seeds")
	exe=$build/tests/fuzz/fuzz_$name
	work=$tmp/$name
	mkdir -p "$work/corpus" "$work/artifacts"
	cp -R "$seeds". "$work/corpus/"

	ok=0
	if [ ! -x "$exe" ]; then
		echo "fuzz_$name: not built at $exe" >"$work/log"
	elif "$exe" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
		ok=1
	fi

	if [ $ok -eq 1 ]; then
		echo "fuzz $name: ok"
		passed=$((passed + 1))
	else
		echo "fuzz $name: FAILED"
		failed=$((failed + 1))
		# From the first report on (a failed check, a sanitizer or libFuzzer error).
		{ awk '/check failed|ERROR|runtime error|not built/ { on = 1 } on && n++ < 40' \
			"$work/log" | grep . || tail -n 20 "$work/log"; } | sed "s/^/  [$name] /" >&2
		if [ -n "$(ls -A "$work/artifacts")" ]; then
			keep=$build/fuzz-artifacts/$name
			mkdir -p "$keep" && cp "$work/artifacts/"* "$keep/" &&
				echo "  [$name] crash inputs kept in $keep" >&2
		fi
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
