#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The first instrumented call from .preinit_array, before the C library
# has set environ (tests/user/preinit.c, as uftrace's t119-t121): the
# process records all the same, from that first call on.  Ground truth:
# the program counts its own calls and prints them; every function's
# calls in dtrace --flat must be those, under ktrace-run (preloaded, linked
# with -lktrace, static with libktrace.a) and standalone (KTRACE_USER_DIR,
# preloaded), at -O0 and -O2 -g.
. "$(dirname "$0")/user-common.sh"

# same NAME DIR: the program's counts (DIR.out) against dtrace --flat
same() {
	"$DTRACE" --flat "$2"/trace.* 2>"$2.err" | awk 'NR > 2 { print $4, $1 }' | sort >"$2.got"
	sort "$2.out" >"$2.want"
	[ -s "$2.want" ] && diff -u "$2.want" "$2.got" >"$2.diff"
	ok $? "$1: every function called as often as it counted itself" \
		"$(cat "$2.diff" "$2.err")"
}

for flags in "-O0" "-O2 -g"; do
	fl=${flags// /}
	p=$TMP/preinit$fl
	cc $flags -finstrument-functions -o "$p" tests/user/preinit.c &&
		cc $flags -finstrument-functions -o "$p-linked" tests/user/preinit.c \
			-L"$ROOT/$O/tools" -lktrace -Wl,-rpath,"$ROOT/$O/tools" &&
		cc $flags -static -finstrument-functions -o "$p-static" tests/user/preinit.c \
			"$ROOT/$O/tools/libktrace.a" -pthread
	ok $? "build tests/user/preinit.c at $flags: dynamic, -lktrace, static"
	for v in "" -linked -static; do
		d=$TMP/run$fl$v
		rm -rf "$d"
		timeout 60 "$KTRACE_RUN" -o "$d" "$p$v" 25 >"$d.out" 2>"$d.run"
		ok $? "ktrace-run preinit$v at $flags: runs" "$(cat "$d.run")"
		same "ktrace-run preinit$v at $flags" "$d"
	done
	d=$TMP/alone$fl
	rm -rf "$d"
	timeout 60 env KTRACE_USER_DIR="$d" LD_PRELOAD="$LIBKTRACE" "$p" 25 >"$d.out" 2>"$d.run"
	ok $? "standalone preinit at $flags: runs" "$(cat "$d.run")"
	same "standalone preinit at $flags" "$d"
done
done_testing
