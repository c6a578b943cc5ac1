#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The same programs traced by libktrace and by `uftrace record`: every
# function is called as many times in dtrace --flat as in uftrace report.
# The programs are built with -finstrument-functions, which uftrace's
# libmcount takes as well; uftrace traces only their own functions here
# (--no-libcall: not the PLT calls into libraries; --no-event).
# uftrace also counts the frames a forked child inherits (main, spawn) as
# calls of the child; dtrace --flat counts the calls made (a counting hook
# agrees, 95-user-uftrace-suite), and marks those frames in --calltree
# ("entered before the trace started"): added back, they are uftrace's.
. "$(dirname "$0")/user-common.sh"

if ! command -v uftrace >/dev/null; then
	skip "the call trees against uftrace's" "uftrace is not installed"
	done_testing
	exit
fi

# counts NAME PROG [ARG...]: "function calls" lines from both tracers
counts() {
	local name=$1
	shift
	traced "$TMP/$name.kt" "$@" >/dev/null 2>&1
	{
		"$DTRACE" --flat "$TMP/$name.kt"/trace.* 2>"$TMP/$name.err" | awk 'NR > 2 { print $4, $1 }'
		"$DTRACE" --calltree "$TMP/$name.kt"/trace.* 2>>"$TMP/$name.err" |
			sed -n 's/^.*| *\([^ ]*\)() {* *\/\* ! entered before the trace started.*/\1 1/p'
	} | awk '{ n[$1] += $2 } END { for (f in n) print f, n[f] }' | sort >"$TMP/$name.ktrace"
	rm -rf "$TMP/$name.uf"
	uftrace record --no-libcall --no-event -d "$TMP/$name.uf" "$@" >/dev/null 2>&1
	uftrace report -d "$TMP/$name.uf" -f call 2>>"$TMP/$name.err" |
		awk 'NR > 2 && NF == 2 { print $2, $1 }' | sort >"$TMP/$name.uftrace"
	[ -s "$TMP/$name.ktrace" ] && [ -s "$TMP/$name.uftrace" ] &&
		diff -u "$TMP/$name.uftrace" "$TMP/$name.ktrace" >"$TMP/$name.diff"
	ok $? "$name: every function's call count as in uftrace ($(wc -l <"$TMP/$name.ktrace") functions)" \
		"$(head -n 30 "$TMP/$name.diff" "$TMP/$name.err")"
}

# threads, recursion, a shared library and a callback from it, fork, PIE
counts calls "$UT/calls"
counts calls-nopie "$UT/calls-nopie"
# a hundred thousand calls of one function
counts loop "$UT/loop" 100000

done_testing
