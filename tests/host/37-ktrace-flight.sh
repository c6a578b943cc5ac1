#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace --flight on the fake device (ktrace-cli-fakedev.c): each fake CPU
# writes records numbered 0, 1, 2, ... (arg1) at 1000 a second into
# 64-record buffers in overwrite mode.  Ground truth: that numbering and the
# fake kernel's counts.  A snapshot must be, per CPU, a lost marker of
# exactly the records overwritten, then the newest records without a gap;
# the next snapshot must go on where the last one ended (tracing went on);
# the normal mode and the mask must be back at the end.
. "$(dirname "$0")/fakedev-common.sh"

# snap FILE: "MARKER FIRST LAST COUNT" of one snapshot file: the lost
# marker's count, the first and last record numbers, how many; "bad WHY"
# if the records are not a marker and then numbers without a gap
snap() { python3 "$ROOT/tests/host/flight-snap.py" "$1"; }

fails() {
	local want=$1 what=$2
	shift 2
	fk "$@"
	check "$what: exit 1, says so" '[ $rc -eq 1 ] && has_err "$want"'
}

fails "ktrace: --flight: tracing is off: give -e" "--flight with tracing off and no -e" \
	--flight -d 0.1

# ktrace says its pid ($! is the subshell running fk_env): into $kt
kt_pid() {
	for i in $(seq 50); do
		kt=$(sed -n 's/.*kill -USR1 \([0-9]*\) .*/\1/p' "$T/err")
		[ -n "$kt" ] && break
		sleep 0.1
	done
}
fk_env "$KTRACE" --flight -b 64 -e sched -c 0,1 -o f >"$T/out" 2>"$T/err" &
job=$!
kt_pid
sleep 0.5
kill -USR1 "$kt"
for i in $(seq 50); do
	has_err "snapshot 1: " && break
	sleep 0.1
done
sleep 0.3
kill -INT "$kt"
wait $job
rc=$?
check "ktrace --flight, SIGUSR1, SIGINT: exit 0, two snapshots" \
	'[ $rc -eq 0 ] && has_err "snapshot 1: " && has_err "snapshot 2: "'
for cpu in 0 1; do
	read -r m1 first1 last1 count1 < <(snap "f.1.cpu$cpu")
	read -r m2 first2 last2 count2 < <(snap "f.2.cpu$cpu")
	check "cpu $cpu snapshot 1: $count1 newest records $first1..$last1 after a marker of $m1" \
		'[ "$m1" != bad ] && [ "$count1" = 64 ] && [ "$first1" = "$m1" ] && [ "$m1" -gt 100 ]'
	check "cpu $cpu snapshot 2 goes on: marker $m2 of exactly the records after $last1 and before $first2" \
		'[ "$m2" != bad ] && [ "$count2" = 64 ] && [ $((last1 + 1 + m2)) = "$first2" ]'
done
check "no files for a CPU not recorded" '[ ! -e f.1.cpu2 ] && [ ! -e f.2.cpu3 ]'
fk -s
check "the normal mode and the mask are back" \
	'[ $rc -eq 0 ] && ! has_out "mode" && has_out "(tracing off)"'

# a flight recorder killed outright leaves the kernel in overwrite mode
fk_env "$KTRACE" --flight -b 64 -e sched -c 0 -o k >/dev/null 2>"$T/err" &
job=$!
kt_pid
kill -KILL "$kt"
wait $job
fk -s
check "--flight killed: the overwrite mode stays" '[ $rc -eq 0 ] && has_out "mode"'
fails "the kernel is in overwrite mode" "... a normal recording then says why" -c 0 -d 0.1 -o n
fk -e 0
check "... ktrace -e 0 puts the normal mode back" '[ $rc -eq 0 ]'
fk -s
check "... ktrace -s shows no mode" '[ $rc -eq 0 ] && ! has_out "mode"'
fk -e sched -c 0 -d 0.1 -o n2
check "... and a recording works again" '[ $rc -eq 0 ] && [ -s n2.cpu0 ]'

done_testing
