#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Call shapes where a frame's stack pointer looks like that of a frame
# left behind though the frame still runs (tests/user/shapes.c), each built
# at -O0, at -O2 with uftrace's test flags and at plain -O2 -g, traced by
# libktrace with the counting hook in front (tests/debsrc/cygcount.c, the
# same run).  Every call of these programs returns, so for each:
#  - every function's calls in dtrace --flat are its entries (the hook's);
#  - dtrace repairs nothing (entries less exits, 0).
# The shapes: a function GCC inlines into itself at -O2 (fib, and a
# recursion 20000 deep: the inlined calls share one stack pointer); a
# makecontext() function on a stack inside its caller's frame, back
# through uc_link; signal handlers on a sigaltstack, malloc'd, and mapped
# 4 GiB away from the thread's stack where the low 32 bits of the
# addresses are close (only they are recorded); a thread-specific
# destructor of the program's own that calls functions as a thread exits,
# in three rounds (libktrace's own destructor must not end the thread's
# stream before them).  Where uftrace is
# installed, fib and ucontext are also recorded by uftrace: the same
# counts per function (as uftrace's own tests expect them).
. "$(dirname "$0")/user-shapes-common.sh"

for flags in "${SHAPE_FLAGS[@]}"; do
	fl=$(flags_name "$flags")
	prog=$TMP/shapes-$fl
	cc $flags -finstrument-functions -pthread -o "$prog" "$ROOT/tests/user/shapes.c" 2>"$TMP/cc.err"
	ok $? "build tests/user/shapes.c at $flags" "$(cat "$TMP/cc.err")"
	for shape in "fib 20" "deep 20000" "ucontext 50" "altstack 300" "altstack-alias 300" "tsd 5"; do
		set -- $shape
		dir=$TMP/$1-$fl
		counted "$dir" "$prog" $shape 2>"$dir.run" >/dev/null
		rc=$?
		if [ $rc -eq 77 ]; then
			skip "$1 at $fl" "no room for the aliased stack"
			continue
		fi
		ok $rc "$1 at $fl: runs" "$(cat "$dir.run")"
		check_counts "$1 at $fl" "$dir" "$prog"
		# where uftrace is exact (no depth limit in the way): the same counts
		case $1 in fib | ucontext) ;; *) continue ;; esac
		command -v uftrace >/dev/null || continue
		rm -rf "$dir.uf"
		timeout 60 uftrace record --no-libcall --no-event -d "$dir.uf" "$prog" $shape \
			>/dev/null 2>&1
		uftrace report -d "$dir.uf" -f call 2>/dev/null |
			awk 'NR > 2 && NF == 2 { print $2, $1 }' | sort >"$dir.uftrace"
		awk 'NR > 2 { print $4, $1 }' "$dir.flat" | sort >"$dir.ktrace"
		[ -s "$dir.uftrace" ] && diff -u "$dir.uftrace" "$dir.ktrace" >"$dir.ufdiff"
		ok $? "$1 at $fl: every function's calls as uftrace counts them" "$(cat "$dir.ufdiff")"
	done
done
done_testing
