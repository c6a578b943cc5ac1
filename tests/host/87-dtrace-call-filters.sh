#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace's call view filters (-F, -N, --depth, --min-time, --exclude-lib) on a
# libktrace recording of tests/user/calls (threads, recursion, a shared
# library, fork).  Ground truth: the unfiltered --calltree of the same
# trace, filtered by a trivially correct model (tests/host/calltree-model.py:
# each call kept or not by the filters' definition, one at a time):
#  1. --calltree with each filter shows exactly the model's calls, at the
#     model's depths, thread by thread;
#  2. --flat and --folded count, per function, the calls the model keeps;
#  3. the time of calls not shown goes to the shown call they are in:
#     with -N, the sum of all self times in --flat is the unfiltered one;
#  4. bad patterns, depths and filters without a call view are usage
#     errors (exit 2) that name the option.
. "$(dirname "$0")/user-common.sh"

MODEL=$ROOT/tests/host/calltree-model.py
D=$TMP/calls
traced "$D" "$UT/calls" >/dev/null 2>&1
"$DTRACE" --calltree "$D"/trace.* >"$TMP/full" 2>"$TMP/full.err"
ok $? "unfiltered --calltree of tests/user/calls" "$(cat "$TMP/full.err")"

# the functions of libcalls.so, as --flat says (their FILE column)
"$DTRACE" --flat "$D"/trace.* >"$TMP/flat" 2>/dev/null
LIBFNS=()
for f in $(awk '$5 ~ /^libcalls\.c:/ { print $4 }' "$TMP/flat"); do LIBFNS+=(--lib-fn "$f"); done
check "libcalls.so's functions found in --flat" '[ ${#LIBFNS[@]} -ge 4 ]'

# a --min-time no call's duration is close to (the calltree rounds to ns)
MIN_NS=3000
while python3 "$MODEL" durations <"$TMP/full" |
	awk -v m="$MIN_NS" '$1 != "None" && $1 >= m - 5 && $1 <= m + 5 { f = 1 } END { exit !f }'; do
	MIN_NS=$((MIN_NS + 37))
done

n=0
# same DESCRIPTION "DTRACE OPTIONS" "MODEL OPTIONS"
same() {
	local desc=$1 dopts=$2 mopts=$3
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$DTRACE" --calltree $dopts "$D"/trace.* >"$TMP/got$n.tree" 2>"$TMP/got$n.err" &&
		python3 "$MODEL" shape <"$TMP/got$n.tree" >"$TMP/got$n" &&
		python3 "$MODEL" filter $mopts <"$TMP/full" >"$TMP/want$n" &&
		[ "$(grep -c '^[0-9]' "$TMP/want$n")" -gt 0 ] &&
		diff -u "$TMP/want$n" "$TMP/got$n" >"$TMP/diff$n"
	ok $? "--calltree $dopts: the model's calls ($(grep -c '^[0-9]' "$TMP/want$n"))" \
		"$(head -c 2000 "$TMP/diff$n" "$TMP/got$n.err")"
	# per function, the calls the model keeps: --flat and --folded
	awk 'NF == 2 && !/^#/ { c[$2]++ } END { for (f in c) print f, c[f] }' "$TMP/want$n" | sort >"$TMP/wantc$n"
	# shellcheck disable=SC2086
	"$DTRACE" --flat $dopts "$D"/trace.* | awk 'NR > 2 { print $4, $1 }' | sort >"$TMP/flatc$n"
	# shellcheck disable=SC2086
	"$DTRACE" --folded $dopts "$D"/trace.* |
		awk '{ k = $1; sub(/.*;/, "", k); c[k] += $2 } END { for (f in c) print f, c[f] }' |
		sort >"$TMP/foldc$n"
	diff -u "$TMP/wantc$n" "$TMP/flatc$n" >"$TMP/flatd$n" &&
		diff -u "$TMP/wantc$n" "$TMP/foldc$n" >"$TMP/foldd$n"
	ok $? "--flat, --folded $dopts: each function's calls as the model keeps them" \
		"$(cat "$TMP/flatd$n" "$TMP/foldd$n")"
}

same "keep" "-F fib" "-F fib"
same "keep glob" "-F worker*" "-F worker*"
same "keep regex" "-F /^lib_/" "-F /^lib_/"
same "drop" "-N fib" "-N fib"
same "drop regex, two" "-N /^(fib|spawn)$/ -N check" "-N /^(fib|spawn)$/ -N check"
same "depth" "--depth 2" "-D 2"
same "keep, depth" "-F worker --depth 2" "-F worker -D 2"
same "keep, drop inside" "-F main -N run_threads" "-F main -N run_threads"
same "library" "--exclude-lib libcalls.so" "${LIBFNS[*]}"
same "library by glob, depth" "--exclude-lib libcalls* --depth 3" "${LIBFNS[*]} -D 3"
same "min time" "--min-time ${MIN_NS}ns" "--min-ns $MIN_NS"

# 3. self times: -N hides fib; its time goes to its callers
self_sum() { awk 'NR > 2 { s += $3 } END { printf "%.3f\n", s }'; }
all=$("$DTRACE" --flat "$D"/trace.* | self_sum)
nofib=$("$DTRACE" --flat -N fib "$D"/trace.* | self_sum)
check "-N: the self times add up to the unfiltered ones ($all us, $nofib us)" \
	'awk -v a="$all" -v b="$nofib" "BEGIN { d = a - b; exit !(d < 0.05 && d > -0.05) }"'

# 4. usage errors
for bad in "-F /[/" "-N ''" "--depth 0" "--depth x" "-D 2" "--min-time 3parsecs"; do
	eval "set -- $bad"
	"$DTRACE" --calltree "$@" "$D"/trace.* >/dev/null 2>"$TMP/bad.err"
	rc=$?
	check "dtrace --calltree $bad: usage error" '[ $rc -eq 2 ] && grep -q "^dtrace: " "$TMP/bad.err"'
done
"$DTRACE" -F fib "$D"/trace.* >/dev/null 2>"$TMP/bad.err"
rc=$?
check "-F without a call view: usage error naming the views" \
	'[ $rc -eq 2 ] && grep -q "calltree" "$TMP/bad.err"'
done_testing
