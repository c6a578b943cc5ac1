#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/calls.sh: the call views against the plain listing of the same
# trace.  A program built -finstrument-functions recurses DEPTH deep, over
# and over, CALLS calls in all (default 1M calls at depth 500, then 20,000
# deep: what used to be quadratic); libktrace records it once.  Then RUNS
# rounds (default 5), one after the other: dtrace (the listing), dtrace
# --calltree, dtrace --flat, dtrace --report, dtrace --folded and the flame
# graph of --folded-time (--format=svg), to /dev/null.  The median of each,
# and of the ratios round by round; target: --calltree and --report within
# 3x of the listing, whatever the depth; --folded too at depth 500 (its
# lines are whole paths: 20,000 deep they are 1 GB, depth squared, whatever
# the program); the same with the view-time filters (-N, --depth and
# --min-time, which replays twice).
#
# Then recording with a filter: a program calls 64 functions round robin,
# one call in 1024 to a 65th, kept; ktrace-run -F kept records that one
# and drops the others.  Timed inside (ns per call, loop included),
# interleaved RUNS times with the same program built without
# instrumentation, plain (base) and with two rdtsc per call (the floor,
# bench/user.sh's); target: a dropped call costs no more than the floor.
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

. "$ROOT/bench/lib.sh"	# median
secs() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo "$(( (t1 - t0) / 1000 ))"; }

for depth in 500 20000; do
	d=$W/d$depth
	KTRACE_USER_DIR=$d LD_PRELOAD=$ROOT/build/tools/libktrace.so.0 \
		"$W/deep" "$depth" $((CALLS / depth)) || exit 1
	: >"$W/list" ; : >"$W/tree"; : >"$W/flat"; : >"$W/ratio"; : >"$W/report"; : >"$W/rratio"
	: >"$W/filt"; : >"$W/fratio"
	: >"$W/folded"; : >"$W/svg"; : >"$W/folded-ratio"
	for _ in $(seq "$RUNS"); do
		l=$(secs build/tools/dtrace "$d"/trace.*)
		t=$(secs build/tools/dtrace --calltree "$d"/trace.*)
		f=$(secs build/tools/dtrace --flat "$d"/trace.*)
		r=$(secs build/tools/dtrace --report "$d"/trace.*)
		ft=$(secs build/tools/dtrace --calltree -N no_such_function --depth 400 --min-time 1ns "$d"/trace.*)
		echo "$l" >>"$W/list"; echo "$t" >>"$W/tree"; echo "$f" >>"$W/flat"
		echo "$r" >>"$W/report"; echo "$ft" >>"$W/filt"
		awk -v t="$t" -v l="$l" 'BEGIN { printf "%.3f\n", t / l }' >>"$W/ratio"
		awk -v r="$r" -v l="$l" 'BEGIN { printf "%.3f\n", r / l }' >>"$W/rratio"
		awk -v t="$ft" -v l="$l" 'BEGIN { printf "%.3f\n", t / l }' >>"$W/fratio"
		fo=$(secs build/tools/dtrace --folded "$d"/trace.*)
		sv=$(secs build/tools/dtrace --folded-time --format=svg "$d"/trace.*)
		echo "$fo" >>"$W/folded"; echo "$sv" >>"$W/svg"
		awk -v t="$fo" -v l="$l" 'BEGIN { printf "%.3f\n", t / l }' >>"$W/folded-ratio"
	done
	n=$((CALLS / depth * depth))
	echo "BENCH calls_d${depth}_listing_us $(median <"$W/list") us ($n calls at depth $depth)"
	echo "BENCH calls_d${depth}_calltree_us $(median <"$W/tree") us"
	echo "BENCH calls_d${depth}_flat_us $(median <"$W/flat") us"
	echo "BENCH calls_d${depth}_report_us $(median <"$W/report") us"
	echo "BENCH calls_d${depth}_calltree_vs_listing $(median <"$W/ratio") x (target <= 3)"
	echo "BENCH calls_d${depth}_report_vs_listing $(median <"$W/rratio") x (target <= 3)"
	echo "BENCH calls_d${depth}_filtered_calltree_us $(median <"$W/filt") us (-N, --depth 400, --min-time: 2 replays)"
	echo "BENCH calls_d${depth}_filtered_vs_listing $(median <"$W/fratio") x (target <= 3)"
	echo "BENCH calls_d${depth}_folded_us $(median <"$W/folded") us"
	echo "BENCH calls_d${depth}_svg_us $(median <"$W/svg") us (--folded-time --format=svg)"
	echo "BENCH calls_d${depth}_folded_vs_listing $(median <"$W/folded-ratio") x" \
	     "($(build/tools/dtrace --folded "$d"/trace.* | wc -c) bytes of lines)"
done

# ---- recording with -F on one function out of many --------------------------
{
	echo '#include <stdio.h>'
	echo '#include <stdlib.h>'
	echo '#include <time.h>'
	echo '#include <x86intrin.h>'
	echo '#define NT __attribute__((no_instrument_function))'
	for i in $(seq 0 63); do
		echo "__attribute__((noinline)) int f$i(int x) { __asm__ volatile(\"\"); return x + $i; }"
	done
	echo '__attribute__((noinline)) int kept(int x) { __asm__ volatile(""); return x + 1; }'
	echo "static int (*const fns[64])(int) = { $(seq -s, -f 'f%.0f' 0 63) };"
	cat <<'C'
NT static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
static volatile unsigned long long sink;
NT int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	unsigned long long t = 0;
	double t0;
	int s = 0;

	t0 = now();
	if (argc > 2) {
		for (long i = 0; i < n; i++) {
			t += __rdtsc();
			s = fns[i & 63](s);
			t += __rdtsc();
			if (!(i & 1023))
				s = kept(s);
		}
	} else {
		for (long i = 0; i < n; i++) {
			s = fns[i & 63](s);
			if (!(i & 1023))
				s = kept(s);
		}
	}
	sink = t + s;
	printf("loop %.2f\n", (now() - t0) * 1e9 / n);
	return 0;
}
C
} >"$W/many.c"
cc -O2 -finstrument-functions -o "$W/many" "$W/many.c" &&
	cc -O2 -o "$W/many-plain" "$W/many.c" || exit 1
make -s build/tools/ktrace-run >/dev/null || exit 1
N=${N:-20000000}
: >"$W/m.base"; : >"$W/m.floor"; : >"$W/m.filt"; : >"$W/m.ratio"
loop_ns() { "$@" 2>/dev/null | awk '/^loop / { print $2 }'; }
for round in $(seq 0 "$RUNS"); do
	b=$(loop_ns "$W/many-plain" "$N")
	fl=$(loop_ns "$W/many-plain" "$N" rdtsc)
	rm -rf "$W/filt.data"
	fi=$(loop_ns build/tools/ktrace-run -o "$W/filt.data" -F kept "$W/many" "$N")
	[ "$round" -gt 0 ] || continue		# a warm-up round
	echo "$b" >>"$W/m.base"; echo "$fl" >>"$W/m.floor"; echo "$fi" >>"$W/m.filt"
	awk -v a="$fi" -v b="$fl" 'BEGIN { printf "%.3f\n", a / b }' >>"$W/m.ratio"
done
kept=$(build/tools/dtrace --flat "$W/filt.data"/trace.* 2>/dev/null | awk '$4 == "kept" { print $1 }')
echo "BENCH calls_filter_base_ns $(median <"$W/m.base") ns ($N calls of 64 functions, untraced)"
echo "BENCH calls_filter_floor_ns $(median <"$W/m.floor") ns (two rdtsc a call)"
echo "BENCH calls_filter_dropped_ns $(median <"$W/m.filt") ns (ktrace-run -F kept: all but 1 in 1024 dropped)"
echo "BENCH calls_filter_dropped_vs_floor $(median <"$W/m.ratio") x (target <= 1)"
echo "BENCH calls_filter_kept_calls ${kept:-0} calls (want $(( (N + 1023) / 1024 )))"
