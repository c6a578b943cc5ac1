#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernel/ktrace/buffer.c itself, compiled on a model of x86 memory
# (tests/host/kshim.h), through random interleavings of a writer CPU with
# nested interrupts and a reader CPU (tests/host/buffer-model.c):
#   full      no event is dropped as if the ring were full when it is not
#             (the writer loads head before tail);
#   wakeup1   a reader going to sleep is never left asleep on a published
#   wakeup4   record (the store-buffer pattern), watermark 1 and 4.
. "$(dirname "$0")/dtrace-common.sh"

. tests/host/kshim.sh
shim=$TMP/kshim
make_kshim "$shim"

model=$TMP/buffer-model
if ! ${CC:-cc} -O1 -g -w -I"$shim" -o "$model" tests/host/buffer-model.c \
	>"$TMP/cc.out" 2>&1; then
	ok 1 "buffer.c compiles on the model" "$(head -c 2000 "$TMP/cc.out")"
	done_testing
	exit
fi
ok 0 "buffer.c compiles on the model"

for scenario in full wakeup1 wakeup4 overwrite; do
	runs=${MODEL_RUNS:-40000}
	# the overwrite runs are longer: a quarter as many
	[ "$scenario" = overwrite ] && runs=$((runs / 4 + 1))
	"$model" "$scenario" "$runs" 1 >"$TMP/out" 2>&1
	ok $? "$(sed -n 's/^\(not \)\{0,1\}ok 1 - //p' "$TMP/out")" "$(grep '^#' "$TMP/out")"
done

done_testing
