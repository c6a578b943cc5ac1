#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/dtrace.sh: how fast dtrace prints, against babeltrace2 on LTTng-UST.
#
# 1. ktgen writes 4 files of 5M events; dtrace merges and prints them to
#    /dev/null; peak RSS from /usr/bin/time.  Also the CPU time of
#    dtrace -j 1 (one thread): events per CPU second is what the rate would
#    be on an idle machine, whatever else runs now.
#    And dtrace --folded-offcpu on the same files (3.6% of ktgen's records
#    are context switches), against dtrace -j 1 round by round.
# 2. An LTTng-UST trace of 2M events (two integer fields each, like a
#    ktrace record) made here with lttng-sessiond --no-kernel; babeltrace2
#    prints it to /dev/null.
# RUNS rounds (default 5) of dtrace, dtrace -j 1 and babeltrace2, one after
# the other: this machine's speed drifts by 30% within minutes, so the
# ratios are taken round by round and their median reported.
# Prints BENCH lines; targets: >= 10M events/s, >= 20x babeltrace2, RSS < 32 MiB.
# Both tools print one line per event; babeltrace2 runs on one thread.
#
# Needs: time, lttng-tools, liblttng-ust-dev, babeltrace2 (Debian packages).
# EVENTS (per file, default 5000000), LTTNG_EVENTS (2000000), KEEP=1 keeps
# the files in build/bench/dtrace.
set -u
EVENTS=${EVENTS:-5000000}
RUNS=${RUNS:-5}
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

. "$ROOT/bench/lib.sh"
BENCH=dtrace
peak() { awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$1"; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# --- dtrace ------------------------------------------------------------------
build/tests/ktgen -s 42 -c 4 -n "$EVENTS" -l 20 "$W/trace" >/dev/null || exit 1
cat "$W"/trace.cpu* >/dev/null		# page cache: time dtrace, not the disk
nr=$(build/tools/dtrace "$W"/trace.cpu* | wc -l)

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

# --- the rounds ----------------------------------------------------------------
for r in $(seq "$RUNS"); do
	run_timed dtrace build/tools/dtrace "$W"/trace.cpu0 "$W"/trace.cpu1 "$W"/trace.cpu2 "$W"/trace.cpu3
	run_timed dtrace-j1 build/tools/dtrace -j 1 "$W"/trace.cpu0 "$W"/trace.cpu1 "$W"/trace.cpu2 "$W"/trace.cpu3
	run_timed offcpu build/tools/dtrace --folded-offcpu "$W"/trace.cpu0 "$W"/trace.cpu1 "$W"/trace.cpu2 "$W"/trace.cpu3
	run_timed babeltrace2 babeltrace2 "$W/lttng-trace"
done
for t in dtrace dtrace-j1 offcpu babeltrace2; do
	echo "bench/dtrace: $t: wall $(awk '{ printf "%.3f ", $1 / 1e9 }' "$W/$t.runs")s;" \
	     "cpu $(awk '{ printf "%s ", $2 }' "$W/$t.runs")s" >&2
done
dt_time=$(median_col 1 "$W/dtrace.runs")
bt_time=$(median_col 1 "$W/babeltrace2.runs")
echo "BENCH dtrace_events $nr events"
echo "BENCH dtrace_time $(awk -v t="$dt_time" 'BEGIN { printf "%.3f", t / 1e9 }') s"
echo "BENCH dtrace_rate $(rate "$nr" "$(awk -v t="$dt_time" 'BEGIN { print t / 1e9 }')") events/s"
echo "BENCH dtrace_cpu_rate $(rate "$nr" "$(median_col 2 "$W/dtrace-j1.runs")") events/cpu-s"
echo "BENCH dtrace_peak_rss $(mib "$(peak "$W/dtrace.runs")") MiB"
paste "$W/dtrace-j1.runs" "$W/offcpu.runs" | awk '{ print $4 / $1 }' >"$W/offcpu-ratios"
echo "BENCH dtrace_offcpu_time $(awk -v t="$(median_col 1 "$W/offcpu.runs")" 'BEGIN { printf "%.3f", t / 1e9 }') s"
echo "BENCH dtrace_offcpu_peak_rss $(mib "$(peak "$W/offcpu.runs")") MiB"
echo "BENCH dtrace_offcpu_vs_listing_j1 $(median_col 1 "$W/offcpu-ratios" | xargs printf '%.2f') x" \
     "(dtrace --folded-offcpu against dtrace -j 1, round by round)"
echo "BENCH babeltrace2_events $bt_nr events"
echo "BENCH babeltrace2_time $(awk -v t="$bt_time" 'BEGIN { printf "%.3f", t / 1e9 }') s"
echo "BENCH babeltrace2_rate $(rate "$bt_nr" "$(awk -v t="$bt_time" 'BEGIN { print t / 1e9 }')") events/s"
echo "BENCH babeltrace2_cpu_rate $(rate "$bt_nr" "$(median_col 2 "$W/babeltrace2.runs")") events/cpu-s"
echo "BENCH babeltrace2_peak_rss $(mib "$(peak "$W/babeltrace2.runs")") MiB"
# events per second of each, round by round
paste "$W/dtrace.runs" "$W/dtrace-j1.runs" "$W/babeltrace2.runs" |
	awk -v n="$nr" -v b="$bt_nr" '{ print (n / $1) / (b / $7), (n / $5) / (b / $8) }' >"$W/ratios"
echo "BENCH dtrace_vs_babeltrace2 $(median_col 1 "$W/ratios" | xargs printf '%.1f') x" \
     "(rounds: $(awk '{ printf "%.1f ", $1 }' "$W/ratios"| sed 's/ $//'))"
echo "BENCH dtrace_vs_babeltrace2_cpu $(median_col 2 "$W/ratios" | xargs printf '%.1f') x"
[ "${KEEP:-}" ] || rm -rf "$W/lttng-trace" "$W"/trace.cpu*
[ "$bt_nr" -ge "$LTTNG_EVENTS" ] || echo "bench/dtrace: warning: LTTng kept $bt_nr of $LTTNG_EVENTS events"
