#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Children a traced program starts (tests/user/spawn.c, -O0 and -O2 -g),
# under ktrace-run and standalone.  Ground truth: each process prints the
# calls it made, with its pid.
#  - posix_spawn() and execve() with an environment of the program's own
#    (no LD_PRELOAD, no KTRACE_*): the child is traced all the same, its
#    calls in a file of its own pid, as it counted them (uftrace traces it
#    too); the old library left it silently untraced;
#  - vfork(): the parent's trace has the parent's calls, none of the
#    child's (they went to the parent's ring, under its tid); the child
#    records nothing until it execs, and the program it execs is traced.
. "$(dirname "$0")/user-common.sh"

# calls DIR PID FUNCTION: its calls in dtrace --flat of DIR's file of PID
calls() {
	"$DTRACE" --flat "$1"/trace.pid"$2".tid* 2>/dev/null |
		awk -v f="$3" 'NR > 2 && $4 == f { n += $1 } END { print n + 0 }'
}

for flags in "-O0" "-O2 -g"; do
	fl=${flags// /}
	p=$TMP/spawn$fl
	cc $flags -finstrument-functions -o "$p" tests/user/spawn.c
	ok $? "build tests/user/spawn.c at $flags"
	for how in ktrace-run standalone; do
		for shape in posix_spawn execve vfork; do
			d=$TMP/$shape-$how$fl
			rm -rf "$d"
			if [ $how = ktrace-run ]; then
				timeout 60 "$KTRACE_RUN" -o "$d" "$p" $shape 7 >"$d.out" 2>"$d.err"
			else
				timeout 60 env KTRACE_USER_DIR="$d" LD_PRELOAD="$LIBKTRACE" \
					"$p" $shape 7 >"$d.out" 2>"$d.err"
			fi
			ok $? "$shape $how at $fl: runs" "$(cat "$d.err")"
			read -r cpid _ cn < <(grep ' leaf ' "$d.out")
			[ "${cn:-0}" -eq 7 ] && [ "$(calls "$d" "$cpid" leaf)" -eq 7 ]
			ok $? "$shape $how at $fl: the child (pid $cpid) traced, leaf 7 calls" \
				"$(cat "$d.out"; ls "$d")"
			[ $shape = vfork ] || continue
			read -r ppid _ pn < <(grep ' in_parent ' "$d.out")
			[ "$(calls "$d" "$ppid" in_parent)" -eq 7 ] &&
				[ "$(calls "$d" "$ppid" in_child)" -eq 0 ]
			ok $? "vfork $how at $fl: the parent's trace has its 7 calls, none of the child's" \
				"$("$DTRACE" --flat "$d"/trace.pid"$ppid".tid* 2>&1)"
		done
	done
done
done_testing
