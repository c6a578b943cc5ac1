#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The merge against the model (concatenate, stable sort by time stamp) on
# random files: many CPUs, equal time stamps, CONT records, lost markers.
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

# one file, and files given in another order
rm -f "$TMP"/m.*
"$KTGEN" -s 9 -c 4 -n 3000 --step 2 "$TMP/m" >/dev/null
check "one file" '"$MODEL" "$TMP/m.cpu2" >"$TMP/check.out" 2>&1'
check "files in reverse order" \
	'"$MODEL" "$TMP/m.cpu3" "$TMP/m.cpu2" "$TMP/m.cpu1" "$TMP/m.cpu0" >"$TMP/check.out" 2>&1'
check "the same file twice" '"$MODEL" "$TMP/m.cpu1" "$TMP/m.cpu1" >"$TMP/check.out" 2>&1'

done_testing
