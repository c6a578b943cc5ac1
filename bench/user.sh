#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/user.sh: what a traced function call costs.  A loop calls a tiny
# function N times (tests/user/loop.c, timed inside: ns per call, the loop
# and the call included), traced by:
#   ktrace   libktrace via ktrace-run (-finstrument-functions build): the
#            threads' rings are shared memory that ktrace-run drains from
#            its own process (crash-proof recording)
#   uftrace  `uftrace record` (-pg build, its fastest)
#   lttng    LTTng-UST's liblttng-ust-cyg-profile-fast.so preloaded, in a
#            session of lttng-sessiond --no-kernel (-finstrument-functions)
#   floor    no tracer: two rdtsc per call, what any timestamped trace pays
# each RUNS times, interleaved, after a warm-up round; the median of each
# is reported, and the ratios the targets are about.  Then ktrace's files
# are checked: every one of the 2N events there, none lost.  All traces go to the same directory:
# on tmpfs (/dev/shm) unless BENCH_DIR says otherwise, so that what is
# measured is the tracers and not the disk (on a virtual machine's disk
# the write-back of one run's gigabyte slows the next run by up to 3x);
# each run starts after a sync, with no dirty pages of the one before.
# ktrace_record is ktrace timed in bursts of 4096 calls with the writing in
# between, untimed: the recording path alone, without the write-out (which
# at 96 bytes a call is what bounds the sustained loop on a slow disk).
#
#   bench/user.sh            N=10000000 RUNS=5 BENCH_DIR=/dev/shm (a new dir in it)
# Prints "BENCH <name> <value> <unit>" lines; wall_ns lines are whole runs
# (start, loop, writing the trace, exit) per call.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
N=${N:-10000000}
RUNS=${RUNS:-5}
UT=$PWD/$O/tests/user
if [ -z "${BENCH_DIR:-}" ]; then
	BENCH_DIR=${TMPDIR:-/tmp}
	# tmpfs with room for the largest trace (about 100 bytes a call) twice
	[ -d /dev/shm ] && [ "$(df -k --output=avail /dev/shm | tail -1)" -gt $((N / 5)) ] &&
		BENCH_DIR=/dev/shm
fi
DIR=$(mktemp -d "$BENCH_DIR/ktrace-bench.XXXXXX") || exit 1
SESSIOND_PID=
cleanup() {
	[ -z "$SESSIOND_PID" ] || kill "$SESSIOND_PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT

make -s O="$O" user-test-progs >/dev/null || { echo "bench/user: build failed" >&2; exit 1; }

. bench/lib.sh	# median
now_ns() { date +%s%N; }

# run NAME COMMAND...: one run; its ns per call (from the loop) and
# the whole run's per call go to DIR/NAME.loop and DIR/NAME.wall
run() {
	local name=$1 t0 t1 out
	shift
	sync
	t0=$(now_ns)
	out=$("$@" 2>"$DIR/$name.err")
	t1=$(now_ns)
	[ "$round" -gt 0 ] || return 0		# the warm-up round is not kept
	echo "$out" | awk '/^loop / { print $2 }' >>"$DIR/$name.loop"
	echo "$t0 $t1" | awk -v n="$N" '{ printf "%.2f\n", ($2 - $1) / n }' >>"$DIR/$name.wall"
}

have_lttng=false
if command -v lttng-sessiond >/dev/null && [ -f /usr/lib/x86_64-linux-gnu/liblttng-ust-cyg-profile-fast.so ]; then
	if ! lttng list >/dev/null 2>&1; then
		lttng-sessiond --no-kernel --daemonize --pidfile "$DIR/sessiond.pid" >/dev/null 2>&1
		sleep 1
		SESSIOND_PID=$(cat "$DIR/sessiond.pid" 2>/dev/null)
	fi
	lttng list >/dev/null 2>&1 && have_lttng=true
fi
have_uftrace=false
command -v uftrace >/dev/null && have_uftrace=true

lttng_run() {
	rm -rf "$DIR/lttng.data"
	lttng create ktrace-bench -o "$DIR/lttng.data" >/dev/null &&
		lttng enable-event -u 'lttng_ust_cyg_profile_fast:*' >/dev/null &&
		lttng start >/dev/null || return
	run lttng env LD_PRELOAD=liblttng-ust-cyg-profile-fast.so "$UT/loop" "$N"
	lttng stop >/dev/null
	lttng destroy >/dev/null
}

# Round 0 warms up and is not kept: the first run of the machine's memory
# after a while (pages the virtual machine's host backs anew) took ktrace
# 87-127 ns a call instead of 26-29, the tracer that writes most per call.
for round in $(seq 0 "$RUNS"); do
	run floor "$UT/loop-plain" "$N" rdtsc
	rm -rf "$DIR/record.data"
	run ktrace_record "$O/tools/ktrace-run" -o "$DIR/record.data" "$UT/loop" "$N" burst
	rm -rf "$DIR/ktrace.data"
	run ktrace "$O/tools/ktrace-run" -o "$DIR/ktrace.data" "$UT/loop" "$N"
	if $have_uftrace; then
		rm -rf "$DIR/uftrace.data"
		run uftrace uftrace record -d "$DIR/uftrace.data" "$UT/loop-pg" "$N"
	fi
	$have_lttng && lttng_run
done

# the last ktrace run's files: 2N func events, none lost
events=$("$O/tools/dtrace" -S "$DIR"/ktrace.data/trace.* | awk '$1 == "func" { print $2 }')
lost=$("$O/tools/dtrace" -S "$DIR"/ktrace.data/trace.* | awk '$1 == "lost" { print $2 }')

for t in floor ktrace_record ktrace uftrace lttng; do
	[ -s "$DIR/$t.loop" ] || continue
	printf 'BENCH user_%s_ns %s ns (runs: %s)\n' "$t" "$(median <"$DIR/$t.loop")" \
		"$(tr '\n' ' ' <"$DIR/$t.loop" | sed 's/ $//')"
	[ "$t" = floor ] || [ "$t" = ktrace_record ] ||
		printf 'BENCH user_%s_wall_ns %s ns\n' "$t" "$(median <"$DIR/$t.wall")"
done
k=$(median <"$DIR/ktrace.loop")
f=$(median <"$DIR/floor.loop")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf 'BENCH user_ktrace_vs_floor %s x (target <= 1.2)\n' "$(ratio "$k" "$f")"
printf 'BENCH user_ktrace_record_vs_floor %s x\n' "$(ratio "$(median <"$DIR/ktrace_record.loop")" "$f")"
[ -s "$DIR/uftrace.loop" ] &&
	printf 'BENCH user_uftrace_vs_ktrace %s x (target >= 4)\n' "$(ratio "$(median <"$DIR/uftrace.loop")" "$k")"
[ -s "$DIR/lttng.loop" ] &&
	printf 'BENCH user_lttng_vs_ktrace %s x (target >= 6)\n' "$(ratio "$(median <"$DIR/lttng.loop")" "$k")"
# the most any tracer could be: one that cost no more than the floor
[ -s "$DIR/lttng.loop" ] &&
	printf 'BENCH user_lttng_vs_floor %s x (the bound of lttng_vs_ktrace)\n' \
		"$(ratio "$(median <"$DIR/lttng.loop")" "$f")"
printf 'BENCH user_ktrace_events %s events (want %s)\n' "${events:-0}" $((2 * N))
printf 'BENCH user_ktrace_lost %s records\n' "${lost:-?}"
echo "bench/user: N=$N RUNS=$RUNS in $DIR ($(df -T "$DIR" | awk 'NR == 2 { print $2 }'))," \
	"$(nproc) CPUs; uftrace: $have_uftrace, lttng: $have_lttng"
[ "${events:-0}" -eq $((2 * N)) ] && [ "${lost:-1}" -eq 0 ]
