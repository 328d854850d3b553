#!/usr/bin/env bash
# Every benchmark, each printing dpstack's figure beside its reference in the same run.
# Figures only: a benchmark never fails on a number. Run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bench/l3fwd.sh
bench/tcp.sh
bench/app.sh
bench/preload.py
bench/loopback.py
bench/scaling.py
bench/loss.py
