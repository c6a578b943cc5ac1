#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Children a traced program starts (tests/user/spawn.c, -O0 and -O2 -g),
# under ktrace-run and standalone.  Ground truth: each process prints the
# calls it made, with its pid.
#  - posix_spawn() and execve() with an environment of the program's own
#    (no LD_PRELOAD, no KTRACE_*): the child is traced all the same, its
#    calls in a file of its own pid, as it counted them (uftrace traces it
#    too); the old library left it silently untraced;
#  - an exec with the program's environment (vfork, thread-exec) passes it
#    on unchanged;
#  - vfork(): the parent's trace has the parent's calls, none of the
#    child's (they went to the parent's ring, under its tid); the child
#    records nothing until it execs (its calls before are counted lost in
#    the parent's file, and ktrace-run exits 1), and the program it execs is traced;
#  - exec from a second thread: the new image's calls (leaf) are its own
#    thread's, in a file of their own, and main's frame of the old image
#    is not the new image's main (under ktrace-run, three threads: the
#    old main and the thread that exec'd, each cut off, and the new main
#    with all the leaf calls).
. "$(dirname "$0")/user-common.sh"

# calls DIR PID FUNCTION: its calls in dtrace --flat of DIR's file of PID
calls() {
	"$DTRACE" --flat "$1"/trace.pid"$2".tid* 2>/dev/null |
		awk -v f="$3" 'NR > 2 && $4 == f { n += $1 } END { print n + 0 }'
}

for flags in "-O0" "-O2 -g"; do
	fl=${flags// /}
	p=$TMP/spawn$fl
	cc $flags -finstrument-functions -pthread -o "$p" tests/user/spawn.c
	ok $? "build tests/user/spawn.c at $flags"
	for how in ktrace-run standalone; do
		for shape in posix_spawn execve vfork thread-exec; do
			d=$TMP/$shape-$how$fl
			rm -rf "$d"
			if [ $how = ktrace-run ]; then
				timeout 60 "$KTRACE_RUN" -o "$d" "$p" $shape 7 >"$d.out" 2>"$d.err"
			else
				timeout 60 env KTRACE_USER_DIR="$d" LD_PRELOAD="$LIBKTRACE" \
					"$p" $shape 7 >"$d.out" 2>"$d.err"
			fi
			rc=$?
			# the vfork child's calls before its exec are lost: ktrace-run says so
			[ $rc -eq 0 ] || { [ $shape = vfork ] && [ $how = ktrace-run ] && [ $rc -eq 1 ] &&
				grep -q "14 records lost" "$d.err"; }
			ok $? "$shape $how at $fl: runs" "exit $rc; $(cat "$d.err")"
			read -r cpid _ cn < <(grep ' leaf ' "$d.out")
			[ "${cn:-0}" -eq 7 ] && [ "$(calls "$d" "$cpid" leaf)" -eq 7 ]
			ok $? "$shape $how at $fl: the child (pid $cpid) traced, leaf 7 calls" \
				"$(cat "$d.out"; ls "$d")"
			if [ $shape = thread-exec ]; then
				"$DTRACE" --calltree "$d"/trace.pid"$cpid".* 2>/dev/null |
					awk '/^# thread/ { t++ } /main\(\)/ { m[t]++ } /leaf\(\)/ { l[t]++ }
					END { for (i = 1; i <= t; i++) if (l[i]) { lt++; if (!m[i]) bad++ }
					      print t, lt, bad + 0 }' >"$d.threads"
				# standalone, the old image's records may be lost at exec
				read -r nt nl nbad <"$d.threads"
				[ "$nl" = 1 ] && [ "$nbad" = 0 ] &&
					{ [ $how = standalone ] || [ "$nt" = 3 ]; }
				ok $? "thread-exec $how at $fl: the new image's calls in a thread of its own" \
					"$(cat "$d.threads"; "$DTRACE" --calltree "$d"/trace.pid"$cpid".* 2>&1 | head -30)"
			fi
			if [ $shape = vfork ] || [ $shape = thread-exec ]; then
				# the program's own environment: passed on as it is
				diff <(sed -n 's/^parent-env //p' "$d.out") \
					<(sed -n 's/^child-env //p' "$d.out") >"$d.envdiff"
				ok $? "$shape $how at $fl: the child's environment is the parent's" \
					"$(cat "$d.envdiff")"
			fi
			[ $shape = vfork ] || continue
			read -r ppid _ pn < <(grep ' in_parent ' "$d.out")
			[ "$(calls "$d" "$ppid" in_parent)" -eq 7 ] &&
				[ "$(calls "$d" "$ppid" in_child)" -eq 0 ]
			ok $? "vfork $how at $fl: the parent's trace has its 7 calls, none of the child's" \
				"$("$DTRACE" --flat "$d"/trace.pid"$ppid".tid* 2>&1)"
			l=$(lost "$d")
			[ "${l:-0}" -eq 14 ]
			ok $? "vfork $how at $fl: the child's 7 calls before its exec: 14 records counted lost" \
				"lost ${l:-0}"
		done
	done
done
done_testing
