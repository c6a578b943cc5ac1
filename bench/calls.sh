#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/calls.sh: the call views against the plain listing of the same
# trace.  A program built -finstrument-functions recurses DEPTH deep, over
# and over, CALLS calls in all (default 1M calls at depth 500, then 20,000
# deep: what used to be quadratic); libktrace records it once.  Then RUNS
# rounds (default 5), one after the other: dtrace (the listing), dtrace
# --calltree, dtrace --flat, dtrace --folded and the flame graph of
# --folded-time (--format=svg), to /dev/null.  The median of each, and of
# the ratios round by round; target: --calltree within 3x of the listing,
# whatever the depth; --folded too at depth 500 (its lines are whole paths:
# 20,000 deep they are 1 GB, depth squared, whatever the program).
set -u
RUNS=${RUNS:-5}
CALLS=${CALLS:-1000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/calls
cd "$ROOT" || exit 1
make -s build/tools/dtrace build/tools/libktrace.so.0 >/dev/null || exit 1
rm -rf "$W" && mkdir -p "$W"

cat >"$W/deep.c" <<'C'
#include <stdlib.h>
static volatile int sink;
__attribute__((noinline)) void down(int n) { if (n) down(n - 1); sink++; }
int main(int argc, char **argv)
{
	int depth = atoi(argv[1]), rounds = atoi(argv[2]);

	for (int i = 0; i < rounds; i++)
		down(depth - 1);
	return 0;
}
C
cc -O2 -g -finstrument-functions -o "$W/deep" "$W/deep.c" || exit 1

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "nan" }'; }
secs() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo "$(( (t1 - t0) / 1000 ))"; }

for depth in 500 20000; do
	d=$W/d$depth
	KTRACE_USER_DIR=$d LD_PRELOAD=$ROOT/build/tools/libktrace.so.0 \
		"$W/deep" "$depth" $((CALLS / depth)) || exit 1
	: >"$W/list" ; : >"$W/tree"; : >"$W/flat"; : >"$W/ratio"
	: >"$W/folded"; : >"$W/svg"; : >"$W/folded-ratio"
	for _ in $(seq "$RUNS"); do
		l=$(secs build/tools/dtrace "$d"/trace.*)
		t=$(secs build/tools/dtrace --calltree "$d"/trace.*)
		f=$(secs build/tools/dtrace --flat "$d"/trace.*)
		fo=$(secs build/tools/dtrace --folded "$d"/trace.*)
		sv=$(secs build/tools/dtrace --folded-time --format=svg "$d"/trace.*)
		echo "$l" >>"$W/list"; echo "$t" >>"$W/tree"; echo "$f" >>"$W/flat"
		echo "$fo" >>"$W/folded"; echo "$sv" >>"$W/svg"
		awk -v t="$t" -v l="$l" 'BEGIN { printf "%.3f\n", t / l }' >>"$W/ratio"
		awk -v t="$fo" -v l="$l" 'BEGIN { printf "%.3f\n", t / l }' >>"$W/folded-ratio"
	done
	n=$((CALLS / depth * depth))
	echo "BENCH calls_d${depth}_listing_us $(median <"$W/list") us ($n calls at depth $depth)"
	echo "BENCH calls_d${depth}_calltree_us $(median <"$W/tree") us"
	echo "BENCH calls_d${depth}_flat_us $(median <"$W/flat") us"
	echo "BENCH calls_d${depth}_folded_us $(median <"$W/folded") us"
	echo "BENCH calls_d${depth}_svg_us $(median <"$W/svg") us (--folded-time --format=svg)"
	echo "BENCH calls_d${depth}_calltree_vs_listing $(median <"$W/ratio") x (target <= 3)"
	echo "BENCH calls_d${depth}_folded_vs_listing $(median <"$W/folded-ratio") x" \
	     "($(build/tools/dtrace --folded "$d"/trace.* | wc -c) bytes of lines)"
done
