#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/dtrace-scale.sh: dtrace's time and memory against the trace's length.
#
# ktgen writes 4 files of 25M events (100M in all, 2.4 GB in
# build/bench/dtrace-scale, removed after unless KEEP=1); dtrace prints the
# first 10M, 50M and all 100M of them (--to cuts the merge: it stops
# reading there) to /dev/null, names on (the default), RUNS rounds
# (default 3), sizes interleaved.  Time per event should not grow with the
# length (linear time) and neither should the peak RSS (flat memory): the
# names table holds one naming per live thread, whatever the length.
# Prints BENCH lines: per size its events, wall time, ns per event, CPU ns
# per event and peak RSS (medians of the rounds; the spread goes to
# stderr), then the ratios of 100M to 10M.
#
# EVENTS (per file, default 25000000) scales it all down for a quick look.
set -u
EVENTS=${EVENTS:-25000000}
RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/dtrace-scale
DTRACE=$ROOT/build/tools/dtrace
cd "$ROOT" || exit 1
command -v /usr/bin/time >/dev/null || { echo "bench/dtrace-scale: apt-get install time"; exit 1; }
make -s build/tools/dtrace build/tests/ktgen || exit 1

# 24 bytes a record, and some continuation records: 32 bytes an event
need=$((EVENTS * 4 * 32 / 1024))
avail=$(df -Pk "$ROOT/build" | awk 'NR == 2 { print $4 }')
[ "$avail" -gt $((need + 1048576)) ] ||
	{ echo "bench/dtrace-scale: needs $((need / 1024)) MiB in build/, $((avail / 1024)) free"; exit 1; }
rm -rf "$W" && mkdir -p "$W"
trap '[ "${KEEP:-}" ] || rm -rf "$W"' EXIT
build/tests/ktgen -s 42 -c 4 -n "$EVENTS" -l 20 "$W/trace" >/dev/null || exit 1
files=("$W"/trace.cpu0 "$W"/trace.cpu1 "$W"/trace.cpu2 "$W"/trace.cpu3)

# ktgen's time stamps step by 500 ns on average: 2M events a second a file,
# so the first 10% of the events are the first 10% of the time.
span_us=$((EVENTS / 2))
sizes="10 50 100"
for pct in $sizes; do
	to[$pct]=$((span_us * pct / 100))us
	[ "$pct" = 100 ] && to[$pct]=$((span_us * 2))us	# all of it
	n[$pct]=$("$DTRACE" --raw -j 1 --to "${to[$pct]}" "${files[@]}" | wc -l)
done
for r in $(seq "$RUNS"); do
	for pct in $sizes; do
		t0=$(date +%s%N)
		/usr/bin/time -f '%U %S %M' -o "$W/time" "$DTRACE" --to "${to[$pct]}" "${files[@]}" \
			>/dev/null || { echo "bench/dtrace-scale: dtrace failed"; exit 1; }
		t1=$(date +%s%N)
		read -r u s m < <(tail -n 1 "$W/time")
		echo "$((t1 - t0)) $u $s $m" >>"$W/$pct.runs"
	done
done
. "$ROOT/bench/lib.sh"	# median
for pct in $sizes; do
	f=$W/$pct.runs
	echo "bench/dtrace-scale: ${n[$pct]} events: wall $(awk '{ printf "%.2f ", $1 / 1e9 }' "$f")s;" \
	     "cpu $(awk '{ printf "%.2f ", $2 + $3 }' "$f")s; rss $(awk '{ printf "%d ", $4 }' "$f")KiB" >&2
	wall=$(awk '{ print $1 }' "$f" | median)
	cpu=$(awk '{ print $2 + $3 }' "$f" | median)
	rss=$(awk '{ print $4 }' "$f" | median)
	label=${pct}M
	[ "$EVENTS" = 25000000 ] || label=${pct}pct
	echo "BENCH dtrace_scale_${label}_events ${n[$pct]} events"
	echo "BENCH dtrace_scale_${label}_time $(awk -v t="$wall" 'BEGIN { printf "%.2f", t / 1e9 }') s"
	echo "BENCH dtrace_scale_${label}_ns_per_event $(awk -v t="$wall" -v n="${n[$pct]}" 'BEGIN { printf "%.1f", t / n }') ns"
	echo "BENCH dtrace_scale_${label}_cpu_ns_per_event $(awk -v t="$cpu" -v n="${n[$pct]}" 'BEGIN { printf "%.1f", t * 1e9 / n }') ns"
	echo "BENCH dtrace_scale_${label}_peak_rss $(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
	per[$pct]=$(awk -v t="$cpu" -v n="${n[$pct]}" 'BEGIN { print t / n }')
	mem[$pct]=$rss
done
echo "BENCH dtrace_scale_cpu_per_event_100_vs_10 $(awk -v a="${per[100]}" -v b="${per[10]}" 'BEGIN { printf "%.2f", a / b }') x (linear: 1)"
echo "BENCH dtrace_scale_rss_100_vs_10 $(awk -v a="${mem[100]}" -v b="${mem[10]}" 'BEGIN { printf "%.2f", a / b }') x (flat: 1)"
