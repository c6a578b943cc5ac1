#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A short fuzz run of the call reconstruction and the views and export on
# it (the long one: tests/fuzz/run-calls.sh 600).  FUZZ_SECONDS sets the
# time (default 20).
cd "$(dirname "$0")/../.." || exit 1
out=$(tests/fuzz/run-calls.sh "${FUZZ_SECONDS:-20}" 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
	echo "ok 1 - fuzz the call reconstruction # SKIP $out"
elif [ $rc -eq 0 ]; then
	echo "ok 1 - fuzz the call reconstruction: $(echo "$out" | grep -o 'Done [0-9]* runs.*')"
else
	echo "not ok 1 - fuzz the call reconstruction (crash input in build/fuzz-calls/)"
	echo "$out" | tail -n 30 | sed 's/^/#   /'
fi
echo "1..1"
[ $rc -eq 0 ] || [ $rc -eq 77 ]
