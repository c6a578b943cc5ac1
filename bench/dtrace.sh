#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/dtrace.sh: how fast dtrace prints, against babeltrace2 on LTTng-UST.
#
# 1. ktgen writes 4 files of 5M events; dtrace merges and prints them to
#    /dev/null, median of 3 runs; peak RSS from /usr/bin/time.  Also the
#    CPU time of dtrace -j 1 (one thread): events per CPU second is what
#    the rate would be on an idle machine, whatever else runs now.
# 2. An LTTng-UST trace of 2M events (two integer fields each, like a
#    ktrace record) made here with lttng-sessiond --no-kernel; babeltrace2
#    prints it to /dev/null, median of 3.
# Prints BENCH lines; targets: >= 10M events/s, >= 20x babeltrace2, RSS < 32 MiB.
# Both tools print one line per event; babeltrace2 runs on one thread.
#
# Needs: time, lttng-tools, liblttng-ust-dev, babeltrace2 (Debian packages).
# EVENTS (per file, default 5000000), LTTNG_EVENTS (2000000), KEEP=1 keeps
# the files in build/bench/dtrace.
set -u
EVENTS=${EVENTS:-5000000}
LTTNG_EVENTS=${LTTNG_EVENTS:-2000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/dtrace
cd "$ROOT" || exit 1

need() { command -v "$1" >/dev/null || { echo "bench/dtrace: $1 missing (apt-get install $2)"; exit 1; }; }
need /usr/bin/time time
need lttng-sessiond lttng-tools
need babeltrace2 babeltrace2
echo "#include <lttng/tracepoint.h>" | gcc -E -x c - >/dev/null 2>&1 || { echo "bench/dtrace: apt-get install liblttng-ust-dev"; exit 1; }

make -s build/tools/dtrace build/tests/ktgen || exit 1
rm -rf "$W" && mkdir -p "$W"

# run3 NAME CMD...: of 3 runs to /dev/null, the median wall time (s) into
# $median, the median CPU time (user + sys, s) into $cpu, the largest peak
# RSS (KiB) into $rss.  CPU time says what an idle machine would show.
run3() {
	local name=$1 walls=() cpus=() t0 t1 r
	shift
	rss=0
	for i in 1 2 3; do
		t0=$(date +%s%N)
		/usr/bin/time -f '%U %S %M' -o "$W/time" "$@" >/dev/null ||
			{ echo "bench/dtrace: $name failed"; exit 1; }
		t1=$(date +%s%N)
		walls+=($((t1 - t0)))
		read -r u s r < <(tail -n 1 "$W/time")
		cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 2p)
	median=$(awk -v ns="$median" 'BEGIN { printf "%.3f", ns / 1e9 }')
	cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n 2p)
	echo "bench/dtrace: $name: wall ${walls[*]} ns, median $median s;" \
	     "cpu ${cpus[*]} s; peak RSS $rss KiB; load $(cut -d' ' -f1 /proc/loadavg)" >&2
}

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# --- dtrace ------------------------------------------------------------------
build/tests/ktgen -s 42 -c 4 -n "$EVENTS" -l 20 "$W/trace" >/dev/null || exit 1
cat "$W"/trace.cpu* >/dev/null		# page cache: time dtrace, not the disk
nr=$(build/tools/dtrace "$W"/trace.cpu* | wc -l)
run3 "dtrace -j 1" build/tools/dtrace -j 1 "$W"/trace.cpu0 "$W"/trace.cpu1 "$W"/trace.cpu2 "$W"/trace.cpu3
dt_cpu_rate=$(rate "$nr" "$cpu")
run3 dtrace build/tools/dtrace "$W"/trace.cpu0 "$W"/trace.cpu1 "$W"/trace.cpu2 "$W"/trace.cpu3
dt_rate=$(rate "$nr" "$median")
echo "BENCH dtrace_events $nr events"
echo "BENCH dtrace_time $median s"
echo "BENCH dtrace_rate $dt_rate events/s"
echo "BENCH dtrace_cpu_rate $dt_cpu_rate events/cpu-s"
echo "BENCH dtrace_peak_rss $(mib "$rss") MiB"
[ "${KEEP:-}" ] || rm -f "$W"/trace.cpu*

# --- LTTng-UST and babeltrace2 ---------------------------------------------
cat >"$W/tp.h" <<'TP'
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ktbench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"
#if !defined(KTBENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define KTBENCH_TP_H
#include <lttng/tracepoint.h>
LTTNG_UST_TRACEPOINT_EVENT(ktbench, event,
	LTTNG_UST_TP_ARGS(unsigned int, arg1, unsigned int, arg2),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(unsigned int, arg1, arg1)
		lttng_ust_field_integer(unsigned int, arg2, arg2)))
#endif
#include <lttng/tracepoint-event.h>
TP
cat >"$W/app.c" <<'APP'
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include <stdlib.h>
#include "tp.h"
int main(int argc, char **argv)
{
	unsigned int n = strtoul(argv[1], NULL, 0);
	for (unsigned int i = 0; i < n; i++)
		lttng_ust_tracepoint(ktbench, event, i, i * 7);
	return 0;
}
APP
(cd "$W" && gcc -O2 -I. -o app app.c -llttng-ust -ldl) || exit 1

export LTTNG_HOME=$W/home
mkdir -p "$LTTNG_HOME"
lttng-sessiond --no-kernel >"$W/sessiond.log" 2>&1 &
sessiond=$!
stop_sessiond() { kill "$sessiond" 2>/dev/null; wait "$sessiond" 2>/dev/null; }
trap stop_sessiond EXIT
for i in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
{
	lttng create ktbench --output="$W/lttng-trace" &&
	lttng enable-channel -u --subbuf-size=4M --num-subbuf=8 --blocking-timeout=inf ch &&
	lttng enable-event -u -c ch 'ktbench:*' &&
	lttng start &&
	LTTNG_UST_ALLOW_BLOCKING=1 "$W/app" "$LTTNG_EVENTS" &&
	lttng stop && lttng destroy ktbench
} >"$W/lttng.log" 2>&1 || { echo "bench/dtrace: lttng failed:"; tail "$W/lttng.log"; exit 1; }
stop_sessiond
trap - EXIT

bt_nr=$(babeltrace2 "$W/lttng-trace" | wc -l)
run3 babeltrace2 babeltrace2 "$W/lttng-trace"
bt_rate=$(rate "$bt_nr" "$median")
bt_cpu_rate=$(rate "$bt_nr" "$cpu")
echo "BENCH babeltrace2_events $bt_nr events"
echo "BENCH babeltrace2_time $median s"
echo "BENCH babeltrace2_rate $bt_rate events/s"
echo "BENCH babeltrace2_cpu_rate $bt_cpu_rate events/cpu-s"
echo "BENCH babeltrace2_peak_rss $(mib "$rss") MiB"
echo "BENCH dtrace_vs_babeltrace2 $(awk -v a="$dt_rate" -v b="$bt_rate" 'BEGIN { printf "%.1f", a / b }') x"
echo "BENCH dtrace_vs_babeltrace2_cpu $(awk -v a="$dt_cpu_rate" -v b="$bt_cpu_rate" 'BEGIN { printf "%.1f", a / b }') x"
[ "${KEEP:-}" ] || rm -rf "$W/lttng-trace"
[ "$bt_nr" -ge "$LTTNG_EVENTS" ] || echo "bench/dtrace: warning: LTTng kept $bt_nr of $LTTNG_EVENTS events"
