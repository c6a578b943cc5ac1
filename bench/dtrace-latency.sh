#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/dtrace-latency.sh: dtrace --latency's time and memory against the
# trace's length.
#
# tests/host/probe-model.py bench writes N pairs of probe hits (A and B,
# paired by a key value, 64 pairs in flight at any time, on two CPU files)
# for N = SIZES (default 1M, 4M, 8M: 0.8 GB); dtrace --latency A,B
# --key tid reads each, RUNS rounds (default 3), sizes interleaved.  CPU
# time per hit should not grow with N (linear time), nor the peak RSS
# (flat memory: the pending pairs, a histogram of fixed size and the N
# slowest, never the trace).  Prints BENCH lines per size (hits, CPU ns per
# hit, peak RSS; medians) and the ratios of the largest to the smallest.
set -u
SIZES=${SIZES:-1000000 4000000 8000000}
RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/dtrace-latency
cd "$ROOT" || exit 1
command -v /usr/bin/time >/dev/null || { echo "bench/dtrace-latency: apt-get install time"; exit 1; }
make -s build/tools/dtrace || exit 1
rm -rf "$W" && mkdir -p "$W"
trap '[ "${KEEP:-}" ] || rm -rf "$W"' EXIT
for n in $SIZES; do
	mkdir "$W/$n" && python3 tests/host/probe-model.py bench "$n" "$W/$n" || exit 1
done
for r in $(seq "$RUNS"); do
	for n in $SIZES; do
		/usr/bin/time -f '%U %S %M' -o "$W/time" build/tools/dtrace -j 1 \
			--latency enqueue_op,dequeue_op --key tid "$W/$n"/t.cpu0 "$W/$n"/t.cpu1 \
			>"$W/out" || { echo "bench/dtrace-latency: dtrace failed"; exit 1; }
		grep -q "^pairs  *$n\$" "$W/out" || { echo "bench/dtrace-latency: not $n pairs"; exit 1; }
		read -r u s m < <(tail -n 1 "$W/time")
		echo "$u $s $m" >>"$W/$n.runs"
	done
done
. "$ROOT/bench/lib.sh"	# median
for n in $SIZES; do
	f=$W/$n.runs
	echo "bench/dtrace-latency: $n pairs: cpu $(awk '{ printf "%.2f ", $1 + $2 }' "$f")s;" \
	     "rss $(awk '{ printf "%d ", $3 }' "$f")KiB" >&2
	cpu=$(awk '{ print $1 + $2 }' "$f" | median)
	rss=$(awk '{ print $3 }' "$f" | median)
	echo "BENCH dtrace_latency_${n}_hits $((2 * n)) hits"
	echo "BENCH dtrace_latency_${n}_cpu_ns_per_hit $(awk -v t="$cpu" -v n="$n" 'BEGIN { printf "%.1f", t * 1e9 / (2 * n) }') ns"
	echo "BENCH dtrace_latency_${n}_peak_rss $(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
	per[$n]=$(awk -v t="$cpu" -v n="$n" 'BEGIN { print t / n }')
	mem[$n]=$rss
done
set -- $SIZES
first=$1
last=${!#}
echo "BENCH dtrace_latency_cpu_per_hit_${last}_vs_${first} $(awk -v a="${per[$last]}" -v b="${per[$first]}" 'BEGIN { printf "%.2f", a / b }') x (linear: 1)"
echo "BENCH dtrace_latency_rss_${last}_vs_${first} $(awk -v a="${mem[$last]}" -v b="${mem[$first]}" 'BEGIN { printf "%.2f", a / b }') x (flat: 1)"
