#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Record-time call filters: ktrace-run -F, -N, --depth (libktrace's
# KTRACE_USER_FILTER, KTRACE_USER_NOTRACE, KTRACE_USER_DEPTH), on a
# deterministic program of this test's own (a function with a subtree
# among many calls outside it, recursion inside it) and on tests/user/dlopen
# (a function of a library loaded after the first record).  Ground truth:
#  1. the counting hook in the same run (tests/debsrc/cygcount.c, in front
#     of libktrace): -F target records every call of target and of inner
#     (called from target only) and none of noise and skip (called outside
#     it only), as often as the hook saw them entered;
#  2. the same program recorded unfiltered and filtered by dtrace at view
#     time (test 87 checks those against a model): the calls recorded with
#     each filter are the calls dtrace shows with the same filter;
#  3. the program's output and exit status are those of an unfiltered run;
#  4. a pattern that matches nothing is said on stderr, naming it; bad
#     patterns and depths are usage errors of ktrace-run (exit 2).
. "$(dirname "$0")/user-shapes-common.sh"

MODEL=$ROOT/tests/host/calltree-model.py
cat >"$TMP/filt.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static volatile int sink;
__attribute__((noinline)) void leaf(int i) { sink += i; }
__attribute__((noinline)) void shared(int i) { leaf(i); }
__attribute__((noinline)) void inner(int i) { shared(i); leaf(i); }
__attribute__((noinline)) void target(int i) { inner(i); if (i > 0) target(i - 1); shared(i); }
__attribute__((noinline)) void noise(int i) { shared(i); leaf(i); }
__attribute__((noinline)) void skip(int i) { noise(i); }
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 0; i < n; i++) {
		noise(i);
		target(i % 3);
		skip(i);
	}
	printf("sink %d\n", sink);
	return 0;
}
C
cc -O2 -g -finstrument-functions -o "$TMP/filt" "$TMP/filt.c"
ok $? "build the test program"

# 1. the counting hook and -F target in the same run (standalone libktrace)
rm -rf "$TMP/c"
KTRACE_USER_FILTER=target counted "$TMP/c" "$TMP/filt" 20 >"$TMP/c.out" 2>"$TMP/c.err"
ok $? "-F target under the counting hook runs" "$(cat "$TMP/c.err")"
nm --defined-only "$TMP/filt" >"$TMP/nm"
"$DTRACE" --flat "$TMP/c"/trace.* >"$TMP/c.flat" 2>"$TMP/c.flat.err"
hook() {	# hook FUNCTION: its entries, as the hook counted them
	perl -e 'my ($f, %name, $s) = shift;
		open my $nm, "<", shift or die; while (<$nm>) { my ($a, $t, $n) = split; $name{hex $a} = $n if $t =~ /^[tT]$/ }
		while (<>) { my ($a, $en) = split; $s += $en if ($name{hex $a} // "") eq $f }
		print $s // 0, "\n"' "$1" "$TMP/nm" "$TMP/c.count"
}
flat_calls() { awk -v f="$1" '$4 == f { c = $1 } END { print c + 0 }' "$2"; }
for f in target inner; do
	want=$(hook "$f")
	got=$(flat_calls "$f" "$TMP/c.flat")
	check "-F target: every call of $f recorded ($want entered, $got recorded)" \
		'[ "$want" -gt 0 ] && [ "$want" -eq "$got" ]'
done
for f in noise skip; do
	want=$(hook "$f")
	got=$(flat_calls "$f" "$TMP/c.flat")
	check "-F target: no call of $f recorded ($want entered, $got recorded)" \
		'[ "$want" -gt 0 ] && [ "$got" -eq 0 ]'
done

# 2. record-time filters against view-time ones of an unfiltered recording
"$KTRACE_RUN" -o "$TMP/all" "$TMP/filt" 20 >"$TMP/all.out" 2>"$TMP/all.err"
ok $? "unfiltered recording" "$(cat "$TMP/all.err")"
shape() { python3 "$MODEL" shape | sed 's/^# thread .*/# thread/'; }
n=0
# same "KTRACE-RUN OPTIONS" "DTRACE OPTIONS"
same() {
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$KTRACE_RUN" -o "$TMP/r$n" $1 "$TMP/filt" 20 >"$TMP/r$n.out" 2>"$TMP/r$n.err"
	rc=$?
	check "ktrace-run $1: the program's output and exit status unchanged" \
		'[ $rc -eq 0 ] && cmp -s "$TMP/all.out" "$TMP/r$n.out"'
	# shellcheck disable=SC2086
	"$DTRACE" --calltree "$TMP/r$n"/trace.* 2>&1 | shape >"$TMP/r$n.got"
	# shellcheck disable=SC2086
	"$DTRACE" --calltree $2 "$TMP/all"/trace.* 2>&1 | shape >"$TMP/r$n.want"
	[ "$(grep -c '^[0-9]' "$TMP/r$n.want")" -gt 0 ] &&
		diff -u "$TMP/r$n.want" "$TMP/r$n.got" >"$TMP/r$n.diff"
	ok $? "ktrace-run $1 records the calls dtrace $2 shows ($(grep -c '^[0-9]' "$TMP/r$n.want"))" \
		"$(head -c 1500 "$TMP/r$n.diff"; cat "$TMP/r$n.err")"
}
same "-F target" "-F target"
same "-F tar*" "-F target"
same "-N noise" "-N noise"
same "-N /^s/" "-N skip -N shared"
same "--depth 2" "--depth 2"
same "-F target --depth 2" "-F target --depth 2"
same "-F target -N inner" "-F target -N inner"

# 4. a pattern that matches nothing, said; the other still records
"$KTRACE_RUN" -o "$TMP/none" -F target -F no_such_function "$TMP/filt" 20 >"$TMP/none.out" 2>"$TMP/none.err"
rc=$?
check "-F no_such_function: said on stderr, naming it" \
	'[ $rc -eq 0 ] && grep -q "no_such_function.*matches no function" "$TMP/none.err" &&
	 ! grep -q "target" "$TMP/none.err"'
all_target=$(flat_calls target <("$DTRACE" --flat "$TMP/all"/trace.*))
check "-F no_such_function: target's calls recorded all the same ($all_target)" \
	'[ "$all_target" -gt 0 ] &&
	 [ "$(flat_calls target <("$DTRACE" --flat "$TMP/none"/trace.*))" -eq "$all_target" ]'

# a function of a library loaded (dlopen) after the first record
"$KTRACE_RUN" -o "$TMP/dl" -F lib_square "$UT/dlopen" "$UT/libcalls.so" >/dev/null 2>"$TMP/dl.err"
rc=$?
"$DTRACE" --flat "$TMP/dl"/trace.* >"$TMP/dl.flat" 2>&1
check "-F lib_square of a library loaded later: its one call, nothing else" \
	'[ $rc -eq 0 ] && grep -q "# 1 functions, 1 calls" "$TMP/dl.flat" &&
	 [ "$(flat_calls lib_square "$TMP/dl.flat")" -eq 1 ]' "$(cat "$TMP/dl.flat" "$TMP/dl.err")"

for bad in "-F /[/" "-F 'a;b'" "--depth 0" "--depth 2x" "-N ''"; do
	eval "set -- $bad"
	"$KTRACE_RUN" -o "$TMP/bad" "$@" true >/dev/null 2>"$TMP/bad.err"
	rc=$?
	check "ktrace-run $bad: usage error" '[ $rc -eq 2 ] && grep -q "^ktrace-run: " "$TMP/bad.err"'
done
done_testing
