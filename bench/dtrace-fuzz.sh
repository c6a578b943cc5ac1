#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/dtrace-fuzz.sh [SECONDS]: fuzz the trace file reader for SECONDS
# (default 60) and print how many inputs ran; non-zero exit on a crash.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=$("$ROOT/tests/fuzz/run.sh" "${1:-60}")
rc=$?
echo "$out"
runs=$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p')
[ $rc -eq 0 ] && echo "BENCH dtrace_fuzz_runs ${runs:-0} inputs"
exit $rc
