#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --stack-budget: per thread, the deepest call path and the one that
# used the most stack.  Ground truth: tests/user/stacks (budget), which
# counts its own depth in every function (exact) and measures its stack
# from the address of a local of each thread's outermost function to the
# lowest byte of a 2 KiB array in the innermost frame of its largest path;
# dtrace measures from the stack pointers the hooks recorded at those two
# functions' entries.  The two differ by where the outer local lies above
# its function's stack pointer and the array above its own: the non-array
# part of each frame (saved registers, spills, a few ints), under 256
# bytes here, against some 4 to 12 KiB measured.  Paths exact.  Built as
# the tests build it (-O2 -g) and at -O0.
. "$(dirname "$0")/user-common.sh"

TOLERANCE=256

# budget_case NAME PROG: run PROG budget under ktrace-run, compare
budget_case() {
	local name=$1 prog=$2 dir=$TMP/$1
	"$KTRACE_RUN" -o "$dir" "$prog" budget >"$dir.truth" 2>"$dir.err"
	ok $? "$name: runs under ktrace-run" "$(cat "$dir.err")"
	"$DTRACE" --stack-budget "$dir"/trace.* >"$dir.out" 2>"$dir.err"
	ok $? "$name: dtrace --stack-budget exits 0" "$(cat "$dir.err")"
	# per thread: "depth TID N PATH" and "bytes TID N PATH", as the program says them
	awk '$1 ~ /^[0-9]+\/[0-9]+$/ { split($1, id, "/"); path = $0
		for (i = 0; i < 5; i++) sub(/^[^ ]+ +/, "", path); print $4, id[2], $5, path }' \
		"$dir.out" |
		sort >"$dir.got"
	awk '{ print ($1 == "budget" ? "depth" : $1), $2, $3, substr($0, index($0, $4)) }' \
		"$dir.truth" | sort >"$dir.want"
	[ "$(wc -l <"$dir.want")" -eq 8 ]
	ok $? "$name: the program reports 4 threads" "$(cat "$dir.truth")"
	diff <(grep ^depth "$dir.want") <(grep ^depth "$dir.got") >"$dir.diff"
	ok $? "$name: each thread's deepest path and depth, exactly" "$(cat "$dir.diff")"
	diff <(grep ^bytes "$dir.want" | cut -d' ' -f1,2,4-) \
		<(grep ^bytes "$dir.got" | cut -d' ' -f1,2,4-) >"$dir.diff"
	ok $? "$name: each thread's largest path, exactly" "$(cat "$dir.diff")"
	join -j 2 <(grep ^bytes "$dir.want" | cut -d' ' -f1-3) \
		<(grep ^bytes "$dir.got" | cut -d' ' -f1-3) |
		awk -v tol=$TOLERANCE '{ d = $3 - $5; if (d < 0) d = -d
			if ($3 < 4096 || d >= tol) { print "# tid " $1 ": program " $3 \
				", dtrace " $5; bad = 1 } n++ }
			END { exit bad || n != 4 }' >"$dir.diff"
	ok $? "$name: each thread's stack bytes within $TOLERANCE of the program's" \
		"$(cat "$dir.diff")"
	# the line for all threads: the largest depth and bytes of them
	read -r want_depth want_tid < <(grep ^depth "$dir.want" | sort -k3,3n | tail -1 |
		awk '{ print $3, $2 }')
	read -r got_bytes < <(grep ^bytes "$dir.got" | sort -k3,3n | tail -1 | awk '{ print $3 }')
	grep -q "^# all threads: depth $want_depth (tid $want_tid), stack $got_bytes bytes " "$dir.out"
	ok $? "$name: all threads: depth $want_depth of tid $want_tid, the largest stack" \
		"$(tail -n 1 "$dir.out")"
}

budget_case O2 "$UT/stacks"
cc -O0 -g -finstrument-functions -pthread -I"$ROOT/user" -o "$TMP/stacks-O0" \
	"$ROOT/tests/user/stacks.c" -L"$ROOT/$O/tools" -lktrace \
	-Wl,-rpath,"$ROOT/$O/tools" 2>"$TMP/cc.err"
ok $? "build tests/user/stacks.c at -O0" "$(cat "$TMP/cc.err")"
budget_case O0 "$TMP/stacks-O0"

# a trace without stack pointers' calls: nothing to say, and it says so
gen small -s 1 -c 2 -n 50
"$DTRACE" --stack-budget "$TMP/small"/t.* >"$TMP/k.out" 2>"$TMP/k.err"
grep -q "no user thread has events" "$TMP/k.err"
ok $? "kernel-only trace: dtrace --stack-budget says there are no user threads" \
	"$(cat "$TMP/k.err")"
done_testing
