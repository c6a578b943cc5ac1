#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace --flight, snapshots of the newest events without a gap, run as root
# in the test VM (TAP): a workload pinned to one CPU writes 20000 numbered
# user events into 1024-record buffers, SIGUSR1 takes snapshot 1, more
# events follow, SIGINT ends ktrace with snapshot 2.  Ground truth: the
# numbers the workload wrote and the kernel's per-CPU written count (ktrace
# -s).  Snapshot 1 must hold the newest events without a gap up to 19999,
# start with a lost marker, name every task alive then (a task that exited
# before it may have lost its name records to newer ones), and be read by
# dtrace like any trace; snapshot 2 must hold the events written after it
# (tracing went on); the markers plus the records of both snapshots must be
# exactly what the CPU wrote.

NAME=flight
EVENTS=${EVENTS:-/tests/user-events}
. "$(dirname "$0")/tap-common.sh"
# records FILE: records in a trace file (512-byte header)
records() { echo $(( ($(stat -c %s "$1") - 512) / 24 )); }

cpu=$(($(grep -c ^processor /proc/cpuinfo) - 1))

"$KTRACE" --flight -e user -b 1024 -o "$T/f" 2>"$T/err" &
kt=$!
check "ktrace --flight starts" 'wait_for "$T/err" "flight recorder on"'
check "the kernel is in overwrite mode" '"$KTRACE" -s | grep -q "^mode  *overwrite"'
# alive at the snapshot, so that its state dump names it
"$EVENTS" "$cpu" 0 20000 hold >"$T/ev" &
ev=$!
wait_for "$T/ev" done
kill -USR1 $kt
check "SIGUSR1 writes snapshot 1" 'wait_for "$T/err" "snapshot 1: "'
"$DTRACE" "$T/f.1.cpu$cpu" >"$T/out1" 2>>"$T/err"
rc=$?
check "dtrace reads snapshot 1 of cpu $cpu" '[ $rc -eq 0 ] && [ -s "$T/out1" ]'
marks "$T/out1" >"$T/m1"
first=$(head -n 1 "$T/m1")
last=$(tail -n 1 "$T/m1")
count=$(wc -l <"$T/m1")
check "it holds events $first..$last: the newest, up to 19999, without a gap" \
	'[ "$last" = 19999 ] && [ "$count" -gt 512 ] && [ $((last - first + 1)) -eq "$count" ] &&
	 [ "$(seq "$first" "$last" | cmp - "$T/m1" && echo same)" = same ]'
check "it starts with the records overwritten before it (meta:lost)" \
	'head -n 1 "$T/out1" | grep -q "meta:lost  *[0-9][0-9]* records lost"'
"$DTRACE" "$T"/f.1.cpu* >"$T/all1" 2>>"$T/err"
# unnamed: the tasks dtrace shows as <...>-TID but that exited before the
# snapshot (their exit is in it, their names may have been overwritten)
unnamed() {
	for tid in $(grep -o "<\.\.\.>-[0-9]*" "$1" | sed 's/.*-//' | sort -u); do
		grep -q "exit of task <\.\.\.>-$tid," "$1" || echo "$tid"
	done
}
check "the workload, alive at the snapshot, is named by its state dump" \
	'grep -q " user-events-$ev  *user:mark" "$T/all1"'
check "every task alive at snapshot 1 is named (unnamed: $(unnamed "$T/all1"))" \
	'[ -s "$T/all1" ] && [ -z "$(unnamed "$T/all1")" ]'
kill $ev
wait $ev 2>/dev/null

"$EVENTS" "$cpu" 20000 10
kill -INT $kt
wait $kt
rc=$?
check "SIGINT ends ktrace (exit $rc) with snapshot 2" '[ $rc -eq 0 ] && grep -q "snapshot 2: " "$T/err"'
"$DTRACE" "$T/f.2.cpu$cpu" >"$T/out2" 2>>"$T/err"
check "tracing went on: snapshot 2 holds the 10 events after snapshot 1" \
	'[ "$(marks "$T/out2" | tr "\n" " ")" = "20000 20001 20002 20003 20004 20005 20006 20007 20008 20009 " ]'
check "normal mode again after ktrace" '! "$KTRACE" -s | grep -q "^mode"'

# written = lost markers + other records of both snapshots, exactly
written=$("$KTRACE" -s | awk -v c="$cpu" '$1 == c { print $5; exit }')
lost=$("$KTRACE" -s | awk -v c="$cpu" '$1 == c { print $6; exit }')
sum=0
for s in 1 2; do
	f=$T/f.$s.cpu$cpu
	"$DTRACE" -S "$f" >"$T/sum$s" 2>>"$T/err"
	set -- $(awk -v f="$f" '$NF == f { print $3, $4 }' "$T/sum$s")
	sum=$((sum + ${1:-0} + $(records "$f") - ${2:-0}))
done
check "overwritten + kept = written on cpu $cpu exactly ($sum, $written), none lost ($lost)" \
	'[ -n "$written" ] && [ "$sum" -eq "$written" ] && [ "$lost" = 0 ]'

done_testing
