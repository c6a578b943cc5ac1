#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace output against golden files, on files from ktgen (fixed seeds).
# ktgen picks events from the event table, so a change of the table changes
# the golden files: UPDATE_GOLDEN=1 rewrites them from the current output
# (then review the diff: only the table's change should show).
. "$(dirname "$0")/dtrace-common.sh"

# golden NAME FILESET dtrace-args...: compare with golden/dtrace-NAME.out
golden() {
	local name=$1 set=$2 want=$GOLDEN/dtrace-$1.out
	shift 2
	(cd "$TMP/$set" && "$DTRACE" "$@" t.*) >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	if [ -n "$UPDATE_GOLDEN" ]; then
		cp "$TMP/$name.out" "$want"
	fi
	[ $rc -eq 0 ] && diff -u "$want" "$TMP/$name.out" >"$TMP/$name.diff" 2>&1
	ok $? "golden $name: dtrace $*" "exit $rc; $(head -c 300 "$TMP/$name.err")
$(head -n 20 "$TMP/$name.diff")
(event table changed? UPDATE_GOLDEN=1 $0, then review git diff $GOLDEN)"
}

gen basic -s 1 -c 2 -n 25 -l 2
gen mixed -s 2 -c 3 -u 2 -n 30 -l 3 -U 150
gen ties -s 3 -c 3 -n 20 --step 1
gen slow -s 4 -c 2 -n 15 --hz 2400000000 --step 100000
gen swapped -s 1 -c 2 -n 25 -l 2 --swap

golden basic basic
golden mixed mixed
golden ties ties
golden slow-tsc-hz slow
golden events mixed -e sched,thread,fault
golden events-relative mixed -e -syscall,-irq,-user
golden cpus mixed -c 1-2
golden tids mixed -t 1000-1004,5001
golden window mixed --from 10 --to 20.5
golden window-units slow --from 0.1ms --to 250us
golden tsc mixed --tsc
golden raw mixed --raw
golden absolute slow --absolute
golden summary mixed -S
golden summary-filtered mixed -S -e sched -c 0

# byte-swapped files read the same as native ones
(cd "$TMP/swapped" && "$DTRACE" t.*) >"$TMP/swapped.out" 2>&1
diff -u "$GOLDEN/dtrace-basic.out" "$TMP/swapped.out" >"$TMP/swapped.diff"
ok $? "byte-swapped files print like native ones" "$(head -n 20 "$TMP/swapped.diff")"

# a pipe reads like a file
(cd "$TMP/mixed" && cat t.cpu0 | "$DTRACE" /dev/stdin t.cpu1 t.cpu2 t.user0 t.user1) >"$TMP/pipe.out"
cmp -s "$TMP/pipe.out" "$GOLDEN/dtrace-mixed.out"
ok $? "a file read from a pipe"

# the pipeline (threads formatting batches) writes what one thread writes
"$KTGEN" -s 11 -c 4 -u 1 -n 40000 -l 30 -U 20 "$TMP/big" >/dev/null
"$DTRACE" -j 1 "$TMP"/big.* | md5sum >"$TMP/j1"
for j in 2 3 8; do
	"$DTRACE" -j $j "$TMP"/big.* | md5sum | cmp -s - "$TMP/j1"
	ok $? "-j $j writes the same as -j 1 (many batches)"
done

# -o writes what stdout gets
(cd "$TMP/mixed" && "$DTRACE" -o "$TMP/o.out" t.*)
cmp -s "$TMP/o.out" "$GOLDEN/dtrace-mixed.out"
ok $? "-o FILE writes the same as standard output"

# every lost record is shown, and every known event is decoded (no '?')
grep -q 'meta:lost' "$GOLDEN/dtrace-mixed.out" && ! grep -q '?' "$GOLDEN/dtrace-mixed.out"
ok $? "lost markers printed, no undecoded arguments"

# The pipeline itself: the files above have a user stream, which keeps
# the formatting on the main thread.  Kernel streams alone, ~100 batches:
# the worker threads format, and with one worker (-j 2) the main thread
# formats the batches it gets ahead with (pipeline.c); on one CPU
# (taskset) it does so whenever the worker is preempted mid-batch.  Each
# writes what -j 1 writes.
"$KTGEN" -s 12 -c 4 -n 100000 -l 30 "$TMP/kbig" >/dev/null
"$DTRACE" -j 1 "$TMP"/kbig.cpu* | md5sum >"$TMP/kj1"
for j in 2 3; do
	"$DTRACE" -j $j "$TMP"/kbig.cpu* | md5sum | cmp -s - "$TMP/kj1"
	ok $? "-j $j writes the same as -j 1 (kernel streams: the pipeline)"
done
if command -v taskset >/dev/null; then
	taskset -c 0 "$DTRACE" -j 2 "$TMP"/kbig.cpu* | md5sum | cmp -s - "$TMP/kj1"
	ok $? "-j 2 on one CPU writes the same as -j 1"
fi

done_testing
