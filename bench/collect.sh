#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/collect.sh: SENDERS ktrace --send into one ktrace --listen on
# loopback, each on a fake /dev/ktrace (tests/host/ktrace-cli-fakedev.c)
# producing MBS MB/s of raw records (2 CPUs each) for SECONDS.
#
# Each round runs the senders twice, one after the other: into the
# collector, and writing their own files (the floor: the same drain without
# the network); RUNS rounds (default 3), medians reported.
#   collect_raw_mbs       raw records delivered per second, all senders
#   collect_lost_pct      records lost (kernel buffers full or spool full)
#   collect_wire_pct      bytes on the wire per byte of records
#   collect_cpu_s_per_mb  the collector's CPU seconds per MB of records
#   send_cpu_vs_files     the senders' CPU time with --send / writing files
# KEY=1: both sides with --key (authenticated, every message encrypted).
# Goal (issue 25): 8 senders x 25 MB/s on 2 cores, <= 25% on the wire;
# (issue 31) the key costs the collector at most 10% more CPU a MB.
# Needs python3 (the counts).  The machine may be shared: compare the ratios.
set -u
SENDERS=${SENDERS:-8}
MBS=${MBS:-25}
SECONDS_=${SECONDS_:-3}
RUNS=${RUNS:-3}
KEY=${KEY:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/collect
K=$ROOT/build/tools/ktrace
FAKE=$ROOT/build/tests/ktrace-cli-fakedev.so
cd "$ROOT" || exit 1
make -s build/tools/ktrace build/tests/ktrace-cli-fakedev.so || exit 1
rm -rf "$W" && mkdir -p "$W"
RATE=$((MBS * 1000000 / 24 / 2))	# records a second a CPU
keyargs=()
if [ "$KEY" = 1 ]; then
	(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$W/key")
	keyargs=(--key "$W/key")
fi

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
. "$ROOT/bench/lib.sh"	# median

# senders MODE DIR: run them all at once; their CPU seconds to $W/cpu
senders() {
	local mode=$1 dir=$2 pids=() i args
	for i in $(seq "$SENDERS"); do
		if [ "$mode" = send ]; then
			args=(--send "127.0.0.1:$PORT" --name "s$i" --spool "$dir/spool$i" "${keyargs[@]}")
		else
			args=(-o "$dir/s$i/trace")
			mkdir -p "$dir/s$i"
		fi
		env LD_PRELOAD="$FAKE" KTFAKE_PATH="$dir/dev$i" KTRACE_DEV="$dir/dev$i" \
		    KTFAKE_STATE="$dir/state$i" KTFAKE_STATS="$dir/stats$i" KTFAKE_CPUS=2 \
		    KTFAKE_RATE=$RATE /usr/bin/time -f '%U %S' -o "$dir/time$i" \
		    "$K" -e sched -b 262144 -w 20 -d "$SECONDS_" "${args[@]}" 2>"$dir/err$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$dir"/time* | awk '{ s += $1 + $2 } END { print s }' >"$W/cpu"
}

for r in $(seq "$RUNS"); do
	# --- into the collector
	d=$W/send$r; mkdir -p "$d"
	"$K" --listen 127.0.0.1:0 "${keyargs[@]}" -o "$d/coll" 2>"$d/coll.err" &
	cpid=$!
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*port \([0-9]*\),.*/\1/p' "$d/coll.err"); [ -n "$PORT" ] && break
		sleep 0.05
	done
	c0=$(cpu_ticks $cpid)
	senders send "$d"
	c1=$(cpu_ticks $cpid)
	kill -TERM $cpid; wait $cpid
	send_cpu=$(cat "$W/cpu")
	written=$(cat "$d"/stats* | awk '{ w += $2 } END { print w }')
	lost=$(cat "$d"/stats* | awk '{ l += $3 } END { print l }')
	dropped=$(grep -ho '[0-9]* records dropped' "$d"/err* | awk '{ s += $1 } END { print s + 0 }')
	delivered=$(find "$d/coll" -name 'trace.cpu*' -printf '%s\n' |
		    awk '{ s += ($1 - 512) / 24 } END { print s }')
	wire=$(grep -ho 'sent [0-9]* frames, [0-9]* bytes for [0-9]* bytes' "$d"/err* |
	       awk '{ w += $4; r += $7 } END { printf "%.2f", 100 * w / r }')
	mb=$(awk -v n="$delivered" 'BEGIN { print n * 24 / 1e6 }')
	echo "$(awk -v mb="$mb" -v s="$SECONDS_" 'BEGIN { printf "%.1f", mb / s }')" >>"$W/mbs"
	awk -v l="$lost" -v d="$dropped" -v w="$written" \
		'BEGIN { printf "%.3f\n", 100 * (l + d) / (w + l) }' >>"$W/lost"
	echo "$wire" >>"$W/wire"
	awk -v t="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v mb="$mb" \
		'BEGIN { printf "%.5f\n", t / hz / mb }' >>"$W/ccpu"
	# --- the floor: the same senders writing files
	d=$W/files$r; mkdir -p "$d"
	senders files "$d"
	awk -v a="$send_cpu" -v b="$(cat "$W/cpu")" 'BEGIN { printf "%.2f\n", a / b }' >>"$W/ratio"
	rm -rf "$W/send$r/coll" "$d"
done
echo "BENCH collect_raw_mbs $(median <"$W/mbs") MB/s ($SENDERS senders x $MBS MB/s asked)"
echo "BENCH collect_lost_pct $(median <"$W/lost") %"
echo "BENCH collect_wire_pct $(median <"$W/wire") %"
echo "BENCH collect_cpu_s_per_mb $(median <"$W/ccpu") s/MB"
echo "BENCH send_cpu_vs_files $(median <"$W/ratio") x"
