#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A short fuzz run of the trace file reader (the long one: tests/fuzz/run.sh
# 600, or bench/dtrace-fuzz.sh).  FUZZ_SECONDS sets the time (default 20).
cd "$(dirname "$0")/../.." || exit 1
out=$(tests/fuzz/run.sh "${FUZZ_SECONDS:-20}" 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
	echo "ok 1 - fuzz the trace file reader # SKIP $out"
elif [ $rc -eq 0 ]; then
	echo "ok 1 - fuzz the trace file reader: $(echo "$out" | grep -o 'Done [0-9]* runs.*')"
else
	echo "not ok 1 - fuzz the trace file reader (crash input in build/fuzz/)"
	echo "$out" | tail -n 30 | sed 's/^/#   /'
fi
echo "1..1"
[ $rc -eq 0 ] || [ $rc -eq 77 ]
