#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# uftrace's own test programs (its tests/s-*.c, from Debian's uftrace
# source package through tests/debsrc/build.sh, cached under build/debsrc;
# UFTRACE_SRC=DIR takes an unpacked uftrace source tree instead), each
# built at -O0, at -O2 with uftrace's test flags (no inlining) and at plain
# -O2 -g, all with -finstrument-functions, run by ktrace-run with the
# counting hook in front of libktrace (tests/debsrc/cygcount.c, the same
# run; tests/host/uftrace-suite.py builds them as their t*.py ask).
#  - every function's calls in dtrace --flat, summed over threads and
#    processes, are its entries as the hook counted them: exact;
#  - at -O0 and at uftrace's -O2, dtrace --calltree's trees are the tree
#    the test's t*.py expects (uftrace's expected output: functions and
#    nesting per task, times ignored, library calls left out as a
#    -finstrument-functions hook never sees them).  Plain -O2 inlines,
#    which legitimately changes the tree: counts only there.
# uftrace's -F, -N (names or regular expressions) and -D are applied to
# our tree as uftrace applies them.  Tests of features of uftrace alone
# (arguments and return values, events, triggers, time filters,
# replay/report/graph of a recorded session, dynamic patching, scripts,
# kernel tracing) are listed, with why, and not run.
. "$(dirname "$0")/user-common.sh"

SUITE=$ROOT/tests/host/uftrace-suite.py
if [ -n "${UFTRACE_SRC:-}" ]; then
	tests=$UFTRACE_SRC/tests
else
	tests=$(tests/debsrc/build.sh uftrace 2>"$TMP/debsrc.err")
	rc=$?
	[ $rc -ne 77 ] || skip_all "$(head -n 1 "$TMP/debsrc.err")"
	ok $rc "uftrace's source from its Debian package" "$(tail -n 20 "$TMP/debsrc.err")"
fi
[ -f "$tests/runtest.py" ] || { ok 1 "uftrace's tests/ in $tests"; done_testing; exit 1; }
cc -O2 -shared -fPIC -o "$TMP/cygcount.so" tests/debsrc/cygcount.c -ldl
ok $? "build the counting hook library"

python3 "$SUITE" plan "$tests" >"$TMP/plan" 2>"$TMP/plan.err"
ok $? "read uftrace's t*.py tests" "$(tail -n 20 "$TMP/plan.err")"

# the programs none of whose tests is a call tree we can compare, and why
awk -F'\t' '$1 == "test" { tested[$3] = 1 }
	$1 == "skip" { why[$3] = why[$3] (why[$3] == "" ? "" : "; ") $2 ": " $4 }
	END { for (p in why) if (!tested[p]) print p "\t" why[p] }' "$TMP/plan" | sort >"$TMP/untested"
while IFS=$'\t' read -r prog why; do
	skip "$prog" "uftrace alone: $why"
done <"$TMP/untested"
# and the other tests of the programs we run
awk -F'\t' '$1 == "test" { tested[$3] = 1 } $1 == "skip" && ($3 in tested) {
	print "# not compared: " $2 " (" $3 "): " $4 }' "$TMP/plan"

while IFS=$'\t' read -r kind t src _; do
	[ "$kind" = test ] || [ "$kind" = count ] || continue
	for mode in O0 O2uftrace O2g; do
		d=$TMP/$t-$mode
		name="$t ($src) at $mode"
		[ "$kind" = test ] || name="$src (built as $t builds it) at $mode"
		cmd=$(python3 "$SUITE" build "$tests" "$t" $mode "$d" \
			$([ "$kind" = test ] || echo plain) 2>"$d.build")
		rc=$?
		if [ $rc -eq 2 ]; then
			skip "$name" "$(tail -n 1 "$d.build")"
			continue
		fi
		ok $rc "$name: builds" "$(tail -n 20 "$d.build")"
		[ $rc -eq 0 ] || continue
		# ktrace-run puts KTRACE_LIB in front of LD_PRELOAD: the hook, then libktrace
		# (the libraries it dlopen()s find theirs in its directory, as in uftrace's runs)
		(cd "$d" && CYGCOUNT_OUT=$d/count.%p KTRACE_LIB=$TMP/cygcount.so \
			LD_PRELOAD=$LIBKTRACE LD_LIBRARY_PATH=$d timeout 60 "$KTRACE_RUN" -o "$d/kt" -- $cmd \
			>"$d.out" 2>"$d.err" </dev/null)
		[ $? -ne 124 ]
		ok $? "$name: runs" "$(tail -n 20 "$d.err")"
		# the processes that counted: not one that left by _exit() (daemon()'s
		# parent), nor a program it exec'd with an environment of its own (the
		# library traces it all the same, the hook is not there)
		"$DTRACE" --flat $(ls "$d"/count.* | sed 's|/count\.\([0-9]*\)$|/kt/trace.pid\1.*|') \
			>"$d.flat" 2>>"$d.err"
		# a thread exec()s: the old image never writes its counts;
		# s-malloc-tsd's free() is also called by glibc as a thread ends
		# (__libc_thread_freeres(), after the last thread-specific
		# destructor): past libktrace's end of the thread's stream (gdb)
		late=
		[ $t != t120_malloc_tsd ] || late="--late free"
		if [ $t = t130_thread_exec ]; then
			skip "$name: every function called as often as it was entered" \
				"the hook's counts of the image before exec() are not written"
		else
			(cd "$d" && python3 "$ROOT/tests/host/flat-vs-count.py" $late "$d.flat" count.*) \
				>"$d.cmp"
			ok $? "$name: every function called as often as it was entered" \
				"$(cat "$d.cmp"; tail -n 5 "$d.err")"
		fi
		[ $mode != O2g ] && [ "$kind" = test ] || continue
		if [ $t = t130_thread_exec ]; then
			skip "$name: the call tree uftrace expects" "uftrace nests the exec'd image's main() in the old image's (one tid); dtrace starts a tree (83-user-spawn)"
			continue
		fi
		"$DTRACE" --calltree "$d"/kt/trace.* >"$d.tree" 2>>"$d.err"
		python3 "$SUITE" tree "$tests" "$t" $mode "$d" "$d.tree" >"$d.treediff"
		ok $? "$name: the call tree uftrace expects" "$(head -n 40 "$d.treediff")"
	done
done <"$TMP/plan"
done_testing
