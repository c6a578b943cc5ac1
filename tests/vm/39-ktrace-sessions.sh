#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Back-to-back ktrace sessions: one leaves the next neither its mask, its
# mode nor its lost records; run as root in the test VM (TAP).  A first
# ktrace records user events of one CPU into 1024-record buffers; it is
# stopped (SIGSTOP) while 3000 numbered events fill its buffer and drop,
# then SIGKILLed.  Ground truth: the kernel's mask and counters (ktrace -s)
# and the numbers the workload wrote.
#   - a session is owned by the file that started it: once the killed
#     ktrace's files are released tracing is off and the mode normal;
#   - the next ktrace starts clean: its file holds exactly the 10 events of
#     its own command, none left from the killed session and no lost
#     marker of drops that session's reader never saw; it reports 0 lost;
#   - at its end tracing is off again (no mask of the killed one restored);
#   - a --flight whose session another ktrace -e ended counts what its
#     next session emptied in that snapshot's lost marker.
NAME=sessions
EVENTS=${EVENTS:-/tests/user-events}
. "$(dirname "$0")/tap-common.sh"
# cpu_col N: column N (5 written, 6 lost) of this CPU's line in ktrace -s
cpu_col() { "$KTRACE" -s | awk -v c="$cpu" -v k="$1" '$1 == c { print $k; exit }'; }

cpu=$(($(grep -c ^processor /proc/cpuinfo) - 1))
"$KTRACE" -e 0; "$KTRACE" -b 1024

"$KTRACE" -e user -c "$cpu" -o "$T/a" 2>"$T/err" &
kt=$!
check "the first ktrace records" 'wait_for "$T/err" "recording 1 CPU"'
"$EVENTS" "$cpu" 0 10
sleep 0.3
kill -STOP $kt
lost0=$(cpu_col 6)
"$EVENTS" "$cpu" 10 3000
lost1=$(cpu_col 6)
check "with its reader stopped the buffer filled: $((lost1 - lost0)) records dropped" \
	'[ $((lost1 - lost0)) -gt 1000 ]'
kill -KILL $kt
wait $kt 2>/dev/null
"$KTRACE" -s >"$T/s1"
check "ktrace SIGKILLed: its session ended, tracing is off" \
	'grep -q "(tracing off)" "$T/s1" && ! grep -q "^mode" "$T/s1"'
lost2=$(cpu_col 6)

"$KTRACE" -e user -c "$cpu" -o "$T/b" -- "$EVENTS" "$cpu" 100000 10 2>"$T/err"
rc=$?
check "the next ktrace: exit 0" '[ $rc -eq 0 ]'
"$DTRACE" "$T/b.cpu$cpu" >"$T/out" 2>>"$T/err"
marks "$T/out" | tr '\n' ' ' >"$T/m"
check "its file holds exactly its 10 events ($(cat "$T/m"))" \
	'[ "$(cat "$T/m")" = "100000 100001 100002 100003 100004 100005 100006 100007 100008 100009 " ]'
check "... and no lost marker of the killed session's drops" '! grep -q "meta:lost" "$T/out"'
check "... it reports 0 lost" 'grep -q "0 lost" "$T/err" && ! grep -q "records lost" "$T/err"'
"$KTRACE" -s >"$T/s2"
check "after it tracing is off (the killed session's mask is not restored)" \
	'grep -q "(tracing off)" "$T/s2"'
check "no records were dropped by the second session" '[ "$(cpu_col 6)" = "$lost2" ]'

# A ktrace --flight whose session another ktrace -e ended: its next
# snapshot starts a session again, which empties the buffer; the
# snapshot's lost marker counts those records too, so markers + records
# of both snapshots = what the CPU wrote, exactly (as 36-flight-tool).
w0=$(cpu_col 5)
"$KTRACE" --flight -e user -c "$cpu" -o "$T/f" 2>"$T/err" &
kt=$!
check "a flight recorder starts" 'wait_for "$T/err" "flight recorder on"'
"$EVENTS" "$cpu" 0 100
"$KTRACE" -e user
kill -USR1 $kt
wait_for "$T/err" "snapshot 1: " >/dev/null
"$EVENTS" "$cpu" 100 10
kill -INT $kt
wait $kt
rc=$?
w1=$(cpu_col 5)
sum=0
for s in 1 2; do
	f=$T/f.$s.cpu$cpu
	"$DTRACE" -S "$f" >"$T/sum$s" 2>>"$T/err"
	set -- $(awk -v f="$f" '$NF == f { print $3, $4 }' "$T/sum$s")
	sum=$((sum + ${1:-0} + ($(stat -c %s "$f") - 512) / 24 - ${2:-0}))
done
check "its session ended by ktrace -e: exit $rc, lost markers + records = written ($sum, $((w1 - w0)))" \
	'[ $rc -eq 0 ] && [ "$sum" -eq $((w1 - w0)) ]'

"$KTRACE" -e 0; "$KTRACE" -b 65536
done_testing
