#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace-run on a program that records nothing (built without
# -finstrument-functions; static without libktrace.a): it says so on
# stderr, naming the program and the directory, and the program's exit
# status, its signal and its output are still its own.  A program that
# records gets no such message, nor does a command that cannot be run
# (it has its own).
. "$(dirname "$0")/user-common.sh"

cat >"$TMP/plain.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	puts("plain output");
	fflush(stdout);
	if (argc > 1 && argv[1][0] == 'k')
		raise(SIGTERM);
	return argc > 1 ? atoi(argv[1]) : 0;
}
C
cc -O2 -o "$TMP/plain" "$TMP/plain.c" && cc -O2 -static -o "$TMP/plain-static" "$TMP/plain.c" 2>/dev/null
ok $? "build a program without -finstrument-functions, dynamic and static"

# silent NAME WANT_STATUS PROG [ARG...]
silent() {
	local name=$1 want=$2 out=$TMP/out-$1 rc
	shift 2
	rm -rf "$out"
	timeout 60 "$KTRACE_RUN" -o "$out" "$@" >"$out.stdout" 2>"$out.err"
	rc=$?
	[ $rc -eq "$want" ]
	ok $? "$name: exit status $want, the program's (got $rc)" "$(cat "$out.err")"
	grep -qF -- "ktrace-run: warning: $1 recorded nothing" "$out.err" &&
		grep -qF -- "$out" "$out.err"
	ok $? "$name: says on stderr that it recorded nothing, and where" "$(cat "$out.err")"
	[ "$(cat "$out.stdout")" = "plain output" ] && ! ls "$out"/trace.* >/dev/null 2>&1
	ok $? "$name: the program's output only, no trace file" "$(cat "$out.stdout"; ls "$out")"
}

silent plain 0 "$TMP/plain"
silent plain-status 3 "$TMP/plain" 3
silent plain-signal 143 "$TMP/plain" kill
silent plain-static 5 "$TMP/plain-static" 5

# a program that records: no message
rm -rf "$TMP/calls"
timeout 60 "$KTRACE_RUN" -o "$TMP/calls" "$UT/loop" 10 >/dev/null 2>"$TMP/calls.err"
[ $? -eq 0 ] && ! grep -q "recorded nothing" "$TMP/calls.err" && ls "$TMP/calls"/trace.*tid* >/dev/null 2>&1
ok $? "a program that records: trace files, no message" "$(cat "$TMP/calls.err")"
# a command that cannot be run: its own message only
timeout 60 "$KTRACE_RUN" -o "$TMP/none" "$TMP/no-such-program" >/dev/null 2>"$TMP/none.err"
[ $? -eq 127 ] && ! grep -q "recorded nothing" "$TMP/none.err" && grep -q "no-such-program" "$TMP/none.err"
ok $? "a command that cannot be run: 127 and its own message" "$(cat "$TMP/none.err")"
done_testing
