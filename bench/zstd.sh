#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/zstd.sh: what compressed trace files (-z) cost and save.
#
# RUNS rounds (default 5), each running every pair below back to back, so
# that a pair's ratio is taken within a round (this machine's speed drifts)
# and the median over the rounds is reported:
#  - a kernel-like trace: ktgen -c 1 -n EVENTS (scheduler, syscall, irq,
#    fault events with random arguments: a pessimistic ratio), written
#    plain and --zstd 1: the ratio, and MB of records per CPU second that
#    compressing costs (CPU time of the -z run less the plain one's);
#  - a call trace: ktrace-run (-z) of tests/user/loop CALLS: the same;
#  - dtrace -j 1 on the kernel-like file plain and compressed: events per
#    CPU second of each, and their ratio; the same ratio on the drain's
#    recording below (better compressed, faster decoded);
#  - the recorder's drain: ktrace (-z) -c 0-1 -d DURATION on the fake device
#    (tests/host/ktrace-cli-fakedev.c) at RATE records/s per CPU into
#    BUF-record buffers: its CPU time per MB recorded with -z, over the
#    plain run's, and the records each lost.
# Prints BENCH lines.  EVENTS (5000000), CALLS (2000000), RATE (400000),
# DURATION (4), BUF (65536): CPU times are read to 10 ms.
set -u
EVENTS=${EVENTS:-5000000}
CALLS=${CALLS:-2000000}
RATE=${RATE:-400000}
DURATION=${DURATION:-4}
BUF=${BUF:-65536}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/zstd
cd "$ROOT" || exit 1

command -v /usr/bin/time >/dev/null || { echo "bench/zstd: apt-get install time"; exit 1; }
make -s build/tools/dtrace build/tools/ktrace build/tools/ktrace-run build/tests/ktgen \
	build/tests/ktrace-cli-fakedev.so user-test-progs || exit 1
rm -rf "$W" && mkdir -p "$W"

# run NAME CMD...: one run; its CPU time (user + sys, s of the whole process
# tree) is added to $W/NAME.cpu
run() {
	local name=$1 u s
	shift
	/usr/bin/time -f '%U %S' -o "$W/time" "$@" >/dev/null 2>"$W/$name.err" ||
		{ echo "bench/zstd: $name failed:"; tail -n 5 "$W/$name.err"; exit 1; }
	read -r u s < <(tail -n 1 "$W/time")
	awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f\n", u + s }' >>"$W/$name.cpu"
}
. "$ROOT/bench/lib.sh"	# median
# pairs A B EXPR: per round, awk EXPR of a (A's CPU s) and b (B's); the median
pairs() { paste "$W/$1.cpu" "$W/$2.cpu" | awk "{ a = \$1; b = \$2; print $3 }" | median; }
size() { stat -c %s "$1"; }
FAKE=(env LD_PRELOAD="$ROOT/build/tests/ktrace-cli-fakedev.so" KTFAKE_PATH="$W/dev"
      KTRACE_DEV="$W/dev" KTFAKE_STATE="$W/state" KTFAKE_RATE="$RATE")
lost() { sed -n 's/.*: \([0-9]*\) records, \([0-9]*\) lost, .*/\2/p' "$W/$1.err" | tail -n 1; }

for r in $(seq "$RUNS"); do
	rm -rf "$W"/k* "$W"/c*
	run gen-plain build/tests/ktgen -s 42 -c 1 -n "$EVENTS" "$W/kp"
	run gen-zstd build/tests/ktgen -s 42 -c 1 -n "$EVENTS" --zstd 1 "$W/kz"
	run run-plain build/tools/ktrace-run -o "$W/cp" build/tests/user/loop "$CALLS"
	run run-zstd build/tools/ktrace-run -z -o "$W/cz" build/tests/user/loop "$CALLS"
	run dtrace-plain build/tools/dtrace -j 1 "$W/kp.cpu0"
	run dtrace-zstd build/tools/dtrace -j 1 "$W/kz.cpu0.zst"
	run drain-plain "${FAKE[@]}" build/tools/ktrace -e sched -c 0-1 -b "$BUF" -d "$DURATION" -o "$W/dp"
	echo "$(lost drain-plain)" >>"$W/lost-plain"
	run drain-zstd "${FAKE[@]}" build/tools/ktrace -z -e sched -c 0-1 -b "$BUF" -d "$DURATION" -o "$W/dz"
	echo "$(lost drain-zstd)" >>"$W/lost-zstd"
	run dtrace-rec-plain build/tools/dtrace -j 1 "$W/dp.cpu0" "$W/dp.cpu1"
	run dtrace-rec-zstd build/tools/dtrace -j 1 "$W/dz.cpu0.zst" "$W/dz.cpu1.zst"
	[ "$r" = 1 ] || continue
	k_mb=$(awk -v b="$(size "$W/kp.cpu0")" 'BEGIN { print b / 1e6 }')
	k_ratio=$(awk -v a="$(size "$W/kp.cpu0")" -v b="$(size "$W/kz.cpu0.zst")" 'BEGIN { print a / b }')
	cp_file=$(ls "$W"/cp/trace.pid*.tid* | head -n 1)
	cz_file=$(ls "$W"/cz/trace.pid*.tid*.zst | head -n 1)
	c_mb=$(awk -v b="$(size "$cp_file")" 'BEGIN { print b / 1e6 }')
	c_ratio=$(awk -v a="$(size "$cp_file")" -v b="$(size "$cz_file")" 'BEGIN { print a / b }')
	d_mb=$(awk -v b="$(($(size "$W/dp.cpu0") + $(size "$W/dp.cpu1")))" 'BEGIN { print b / 1e6 }')
	d_ratio=$(awk -v a="$(($(size "$W/dp.cpu0") + $(size "$W/dp.cpu1")))" \
		      -v b="$(($(size "$W/dz.cpu0.zst") + $(size "$W/dz.cpu1.zst")))" 'BEGIN { print a / b }')
	events=$(build/tools/dtrace -S "$W/kp.cpu0" 2>/dev/null | awk '$1 == "events" { print $2 }')
done
for t in gen-plain gen-zstd run-plain run-zstd dtrace-plain dtrace-zstd drain-plain drain-zstd \
	 dtrace-rec-plain dtrace-rec-zstd; do
	echo "bench/zstd: $t: cpu $(tr '\n' ' ' <"$W/$t.cpu")s" >&2
done
echo "bench/zstd: lost plain $(tr '\n' ' ' <"$W/lost-plain"), -z $(tr '\n' ' ' <"$W/lost-zstd")" >&2

f2() { xargs printf '%.2f'; }
f0() { xargs printf '%.0f'; }
echo "BENCH zstd_sched_ratio $(echo "$k_ratio" | f2) x ($k_mb MB of ktgen records, level 1)"
echo "BENCH zstd_sched_mb_per_cpu_s $(pairs gen-plain gen-zstd "(b > a ? $k_mb / (b - a) : 0)" | f0) MB/s" \
     "(records compressed per CPU second: ktgen --zstd's CPU time over ktgen's)"
echo "BENCH zstd_calls_ratio $(echo "$c_ratio" | f2) x ($c_mb MB of loop's call records)"
echo "BENCH zstd_calls_mb_per_cpu_s $(pairs run-plain run-zstd "(b > a ? $c_mb / (b - a) : 0)" | f0) MB/s" \
     "(ktrace-run -z's CPU time over ktrace-run's, the traced program included in both)"
echo "BENCH zstd_dtrace_plain_cpu_rate $(median <"$W/dtrace-plain.cpu" | awk -v n="$events" '{ printf "%.0f", n / $1 }') events/cpu-s"
echo "BENCH zstd_dtrace_zstd_cpu_rate $(median <"$W/dtrace-zstd.cpu" | awk -v n="$events" '{ printf "%.0f", n / $1 }') events/cpu-s"
echo "BENCH zstd_dtrace_zstd_vs_plain $(pairs dtrace-plain dtrace-zstd "a / b" | f2) x" \
     "(dtrace -j 1 events per CPU second, compressed over plain, round by round)"
echo "BENCH zstd_dtrace_recorded_zstd_vs_plain $(pairs dtrace-rec-plain dtrace-rec-zstd "a / b" | f2) x" \
     "(the same on the drain's recording, ratio $(echo "$d_ratio" | f2))"
echo "BENCH zstd_drain_ratio $(echo "$d_ratio" | f2) x (the fake device's records)"
echo "BENCH zstd_drain_cpu_per_mb $(pairs drain-plain drain-zstd "(b - a) * 1000 / $d_mb" | f2) ms/MB" \
     "(ktrace -z's CPU time over ktrace's, per MB recorded: $d_mb MB at $RATE records/s on 2 CPUs)"
echo "BENCH zstd_drain_lost_plain $(median <"$W/lost-plain") records"
echo "BENCH zstd_drain_lost_zstd $(median <"$W/lost-zstd") records"
