#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Libraries loaded with dlopen() (tests/user/reload.c, its libraries from
# tests/user/reload-lib.c), under ktrace-run and standalone, at -O0 and
# -O2 -g.  Ground truth: the calls the program says it made.
#  - rel: dlopen("./libfirst.so"), then chdir("/"): the library's
#    functions are named (not hex) and counted as called;
#  - swap: libfirst.so called, dlclose()d, libsecond.so loaded at the same
#    address and called: each library's calls get its own names and counts
#    (the old map named both by the library mapped last).
. "$(dirname "$0")/user-common.sh"

# same NAME DIR: the program's counts (DIR.out) against dtrace --flat, for
# the functions it counts
same() {
	"$DTRACE" --flat "$2"/trace.* 2>"$2.err" | awk 'NR > 2 { print $4, $1 }' |
		grep -E '^(first|second|0x)' | sort >"$2.got"
	sort "$2.out" >"$2.want"
	[ -s "$2.want" ] && diff -u "$2.want" "$2.got" >"$2.diff"
	ok $? "$1: each library function named and called as the program says" \
		"$(cat "$2.diff" "$2.err")"
}

for flags in "-O0" "-O2 -g"; do
	fl=${flags// /}
	b=$TMP/$fl
	mkdir -p "$b"
	for n in first second; do
		cc $flags -finstrument-functions -shared -fPIC -DNAME=$n -o "$b/lib$n.so" \
			tests/user/reload-lib.c || break
	done &&
	cc $flags -finstrument-functions -o "$b/reload" tests/user/reload.c -ldl
	ok $? "build tests/user/reload.c and its libraries at $flags"
	for how in ktrace-run standalone; do
		for shape in "rel 10" "swap 7 5"; do
			set -- $shape
			d=$TMP/$1-$how$fl
			rm -rf "$d"
			if [ $how = ktrace-run ]; then
				(cd "$b" && RELOAD_DIR=$b timeout 60 "$KTRACE_RUN" -o "$d" ./reload $shape) \
					>"$d.out" 2>"$d.run"
			else
				(cd "$b" && timeout 60 env RELOAD_DIR="$b" KTRACE_USER_DIR="$d" \
					LD_PRELOAD="$LIBKTRACE" ./reload $shape) >"$d.out" 2>"$d.run"
			fi
			rc=$?
			if [ $rc -eq 77 ]; then
				skip "$1 $how at $fl" "libsecond.so not loaded where libfirst.so was"
				continue
			fi
			ok $rc "$1 $how at $fl: runs" "$(cat "$d.run")"
			same "$1 $how at $fl" "$d"
		done
	done
done
done_testing
