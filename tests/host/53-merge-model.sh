#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The merge against the model (concatenate, stable sort by time stamp) on
# random files: many CPUs, equal time stamps, CONT records, lost markers;
# up to 8 files the merge scans their time stamps, more go through a heap
# (lib/merge.c): both are checked.
. "$(dirname "$0")/dtrace-common.sh"

for seed in 1 2 3 4 5 6 7 8; do
	cpus=$((seed % 5 + 1))
	users=$((seed % 3))
	step=$(((seed * 7) % 4))	# 0..3: many equal time stamps
	rm -f "$TMP"/m.*
	"$KTGEN" -s $seed -c $cpus -u $users -n $((1000 * seed)) --step $step \
		--skew $((seed * 50)) -l 4 -U 20 "$TMP/m" >/dev/null
	check "seed $seed: $cpus cpus, $users user streams, step $step" \
		'"$MODEL" "$TMP"/m.* >"$TMP/check.out" 2>&1'
done

# more files than the scan takes: the heap, equal time stamps included
for seed in 10 11; do
	rm -f "$TMP"/m.*
	"$KTGEN" -s $seed -c $((seed + 2)) -u 2 -n 2000 --step $((seed - 9)) \
		--skew 300 -l 4 -U 20 "$TMP/m" >/dev/null
	check "seed $seed: $((seed + 2)) cpus, 2 user streams: the heap" \
		'"$MODEL" "$TMP"/m.* >"$TMP/check.out" 2>&1'
done

# one file, and files given in another order
rm -f "$TMP"/m.*
"$KTGEN" -s 9 -c 4 -n 3000 --step 2 "$TMP/m" >/dev/null
check "one file" '"$MODEL" "$TMP/m.cpu2" >"$TMP/check.out" 2>&1'
check "files in reverse order" \
	'"$MODEL" "$TMP/m.cpu3" "$TMP/m.cpu2" "$TMP/m.cpu1" "$TMP/m.cpu0" >"$TMP/check.out" 2>&1'
check "the same file twice" '"$MODEL" "$TMP/m.cpu1" "$TMP/m.cpu1" >"$TMP/check.out" 2>&1'

done_testing
