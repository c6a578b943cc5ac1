#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# libktrace on the patched kernel (TAP): a program's own records (TRACE and
# -finstrument-functions, libktrace linked in statically) and the kernel's
# records of the system calls it makes, on one clock.  user-calls has two
# threads, each doing N rounds of
#     TRACE(1, i)   call_kernel(i) { getppid() }   TRACE(2, i)
# under `ktrace -e syscall -c all`; in dtrace's merged output every round of
# every thread must read, in this order and with nothing else of that
# thread's system calls in between:
#     user:before i, func:entry, syscall 110 entry, syscall 110 exit
#     (returning ktrace's pid), func:exit, user:after i
# (the program names events 1 and 2 "before" and "after": dtrace prints
# them so from the map file)
# So the user-space and kernel time stamps agree to better than the few
# instructions between the TRACE and the system call, across CPUs.

. "$(dirname "$0")/lib/tap.sh"
KTRACE=${KTRACE:-ktrace}
DTRACE=${DTRACE:-dtrace}
PROG=${PROG:-/tests/user-calls}
N=200
T=${TMPDIR:-/tmp}/user-kernel.$$
mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
TAP_ERR=$T/err

[ -e /dev/ktrace ] && [ -x "$PROG" ] || skip_all "no /dev/ktrace or no $PROG"

KTRACE_USER_DIR=$T/u "$KTRACE" -e syscall -c all -o "$T/k" -- "$PROG" $N \
	>"$T/out" 2>"$T/err"
rc=$?
check "ktrace -e syscall -- user-calls $N (libktrace linked in) exits 0" '[ $rc -eq 0 ]'
ppid=$(sed -n 's/^ppid //p' "$T/out")
tids=$(sed -n 's/^tid //p' "$T/out" | tr '\n' ' ')
check "two threads, each with a trace file of its own" \
	'[ "$(ls "$T"/u/trace.pid*.tid* 2>/dev/null | wc -l)" -eq 2 ] &&
	 [ "$(echo $tids | wc -w)" -eq 2 ] && ls "$T"/u/trace.pid*.maps >/dev/null'

"$DTRACE" --raw "$T"/k.cpu* "$T"/u/trace.pid*.tid* >"$T/merged" 2>"$T/err"
check "dtrace merges the kernel's and the threads' files" '[ $? -eq 0 ] && [ -s "$T/merged" ]'

for tid in $tids; do
	# columns (--raw): cpu time tid group:event text...
	awk -v tid="$tid" -v ppid="$ppid" -v n=$N '
	function bad(why) { if (!err) err = "round " round ", state " st ": " why ": " $0 }
	$3 != tid || $4 ~ /^thread:/ { next }	# ktrace records these always
	$4 == "user:before" && st == 0 { if ($6 != round) bad("wrong round"); st = 1; next }
	($4 == "func:entry" || $4 == "func:enter") && st == 1 { st = 2; next }
	$4 == "syscall:entry" && st == 2 && $6 == 110 { st = 3; next }
	$4 == "syscall:exit" && st == 3 && $6 == 110 {
		if ($NF != ppid) bad("getppid returned " $NF ", not " ppid)
		st = 4; next
	}
	($4 == "func:exit" || $4 == "func:leave") && st == 4 { st = 5; next }
	$4 == "user:after" && st == 5 { if ($6 != round) bad("wrong round"); round++; st = 0; next }
	# the thread'"'"'s other system calls (start-up, printf) lie outside the rounds
	$4 ~ /^syscall:/ && st == 0 { next }
	{ bad("unexpected") }
	END {
		if (!err && round != n) err = round " rounds of " n
		print err ? err : "ok"
	}' "$T/merged" >"$T/err"
	check "thread $tid: $N rounds, each with its getppid() inside it, in time order" \
		'[ "$(cat "$T/err")" = ok ]'
done

"$DTRACE" --calltree "$T"/k.cpu* "$T"/u/trace.pid*.tid* >"$T/tree" 2>"$T/err"
check "dtrace --calltree names call_kernel() and shows its system call inside it" \
	'[ $? -eq 0 ] && grep -A1 "call_kernel() {" "$T/tree" | grep -q "syscall:entry"'
done_testing
