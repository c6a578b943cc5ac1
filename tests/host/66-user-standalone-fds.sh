#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Standalone libktrace (KTRACE_USER_DIR, a writer thread holding the trace
# files open) when the program takes over the descriptor of its trace file:
# dup2() of its own file over it, close_range(3, ~0) and opening files until
# one gets that number, or the same after removing the trace file.  Checks:
# the program's file holds exactly what the program wrote (byte for byte:
# no record written into it, nothing cut); the program's exit status and
# output; where the trace file is still there, every event is in it (dtrace
# -S, against the count the program prints), none lost, and the library
# says once that it opened the file again; where it is not, the library
# names the file, says why recording stopped and how many records are not
# in it (exactly those after the takeover).  And a thread whose trace
# file's descriptor the program dup2()s over after its last write, then
# ends: the library does not close it at the thread's end (the program
# writes through it after the join: it must still be open, its file
# exactly what it wrote), the trace file has all the thread's events, and
# nothing is said.  Each run is under a timeout.
. "$(dirname "$0")/user-common.sh"

if ! cc -O2 -std=gnu11 -pthread -I"$ROOT/user" -o "$TMP/user-fds" "$ROOT/tests/host/user-fds.c" \
	-L"$ROOT/$O/tools" -lktrace -Wl,-rpath,"$ROOT/$O/tools" 2>"$TMP/cc.err"; then
	ok 1 "build user-fds" "$(cat "$TMP/cc.err")"
	done_testing
	exit 1
fi
N=300000

# fds MODE: run user-fds MODE under KTRACE_USER_DIR=$TMP/MODE
fds() {
	rm -rf "$TMP/$1" "$TMP/$1.data"
	KTRACE_USER_DIR=$TMP/$1 timeout -k 5 60 "$TMP/user-fds" "$1" "$TMP/$1.data" $N \
		>"$TMP/$1.out" 2>"$TMP/$1.err"
}

for mode in dup2 closefrom; do
	fds $mode
	rc=$?
	[ $rc -eq 0 ] && [ "$(cat "$TMP/$mode.out")" = "recorded $((N + 1))" ]
	ok $? "$mode over the trace file's descriptor: exit 0, the program's output" \
		"exit $rc: $(cat "$TMP/$mode.out" "$TMP/$mode.err" | head -c 400)"
	printf 'before\nafter\n' | cmp - "$TMP/$mode.data" >"$TMP/cmp" 2>&1
	ok $? "... the program's file holds only what it wrote" \
		"$(cat "$TMP/cmp"; od -c "$TMP/$mode.data" | head -n 4)"
	f=$(ls "$TMP"/$mode/trace.pid*.tid* 2>/dev/null)
	[ "$(count "$TMP/$mode" user:mark)" -eq $((N + 1)) ] && [ "$(lost "$TMP/$mode")" -eq 0 ] &&
		[ "$(cat "$TMP/$mode.err")" = "libktrace: $f: the program closed or replaced a trace file descriptor; the file was opened again" ]
	ok $? "... the trace file, opened again, has all $((N + 1)) events, none lost; said once" \
		"$(count "$TMP/$mode" user:mark) events, $(lost "$TMP/$mode") lost; $(head -c 400 "$TMP/$mode.err")"
done

fds unlink
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/unlink.out")" = "recorded $((N + 1))" ]
ok $? "the trace file removed, then dup2 over it: exit 0, the program's output" \
	"exit $rc: $(cat "$TMP/unlink.out" "$TMP/unlink.err" | head -c 400)"
printf 'before\nafter\n' | cmp - "$TMP/unlink.data" >"$TMP/cmp" 2>&1
ok $? "... the program's file holds only what it wrote" \
	"$(cat "$TMP/cmp"; od -c "$TMP/unlink.data" | head -n 4)"
pid=$(sed -n 's|^libktrace: .*/trace\.pid\([0-9]*\)\.tid[0-9]*: .*|\1|p' "$TMP/unlink.err" | head -n 1)
f=$TMP/unlink/trace.pid$pid.tid$pid
cat >"$TMP/unlink.want" <<EOF
libktrace: $f: the program closed or replaced this thread's trace file descriptor and the file cannot be opened again; recording of this thread stops: No such file or directory
libktrace: $f: $N records of this thread are not in it
EOF
diff -u "$TMP/unlink.want" "$TMP/unlink.err" >"$TMP/unlink.diff"
ok $? "... the library names the file, says why it stopped and that the $N records after are not in it" \
	"$(cat "$TMP/unlink.diff")"

fds thread
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/thread.out")" = "recorded $((N + 1))" ] && [ ! -s "$TMP/thread.err" ]
ok $? "a thread's trace file descriptor taken over, then the thread ends: still open after it (exit 0), nothing said" \
	"exit $rc (6: closed by the library): $(cat "$TMP/thread.out" "$TMP/thread.err" | head -c 400)"
printf 'before\nafter\n' | cmp - "$TMP/thread.data" >"$TMP/cmp" 2>&1
ok $? "... the program's file holds only what it wrote" \
	"$(cat "$TMP/cmp"; od -c "$TMP/thread.data" | head -n 4)"
[ "$(count "$TMP/thread" user:mark)" -eq $((N + 1)) ] && [ "$(lost "$TMP/thread")" -eq 0 ]
ok $? "... the thread's trace file has all $((N + 1)) events, none lost" \
	"$(count "$TMP/thread" user:mark) events, $(lost "$TMP/thread") lost"

done_testing
