#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernel/ktrace/buffer.c itself, compiled on a model of x86 memory
# (tests/host/kshim.h), through random interleavings of a writer CPU with
# nested interrupts and a reader CPU (tests/host/buffer-model.c):
#   full      no event is dropped as if the ring were full when it is not
#             (issue 10 item 1: head loaded before tail);
#   wakeup1   a reader going to sleep is never left asleep on a published
#   wakeup4   record (item 3: the store-buffer pattern), watermark 1 and 4.
. "$(dirname "$0")/dtrace-common.sh"

shim=$TMP/kshim
for h in linux/cpu.h linux/cpuhotplug.h linux/irq_work.h linux/log2.h \
	linux/mm.h linux/moduleparam.h linux/percpu.h linux/rcupdate.h \
	linux/sched.h linux/sched/signal.h linux/slab.h linux/uaccess.h \
	linux/cache.h linux/mutex.h linux/wait.h linux/compiler.h \
	linux/jump_label.h linux/kernel.h linux/types.h linux/ioctl.h \
	asm/tsc.h asm/local.h; do
	mkdir -p "$(dirname "$shim/$h")"
	echo "#include \"$ROOT/tests/host/kshim.h\"" >"$shim/$h"
done
mkdir -p "$shim/uapi/linux"
ln -s "$ROOT/include/uapi/linux/ktrace.h" "$shim/uapi/linux/ktrace.h"
ln -s "$ROOT/include/linux/ktrace.h" "$shim/linux/ktrace.h"

model=$TMP/buffer-model
if ! ${CC:-cc} -O1 -g -w -I"$shim" -o "$model" tests/host/buffer-model.c \
	>"$TMP/cc.out" 2>&1; then
	ok 1 "buffer.c compiles on the model" "$(head -c 2000 "$TMP/cc.out")"
	done_testing
	exit
fi
ok 0 "buffer.c compiles on the model"

for scenario in full wakeup1 wakeup4; do
	"$model" "$scenario" "${MODEL_RUNS:-40000}" 1 >"$TMP/out" 2>&1
	ok $? "$(sed -n 's/^\(not \)\{0,1\}ok 1 - //p' "$TMP/out")" "$(grep '^#' "$TMP/out")"
done

done_testing
