#!/usr/bin/env bash
# What software flow rules (src/flow) cost per received frame: dps-flow-bench
# (bench/flow_walk.c) reads each frame's key and walks lists of 1 to 1,000 rules whose last
# rule alone matches, as a worker does before the stack; CPU ns per frame, medians of RUNS
# runs of FRAMES frames.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
"$BUILD/bench/dps-flow-bench" --runs "${RUNS:-7}" --frames "${FRAMES:-2000000}"
