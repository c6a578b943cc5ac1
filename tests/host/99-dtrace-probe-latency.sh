#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dtrace --latency A,B: the pairs, percentiles, histogram, unmatched hits
# and slowest pairs are exactly what a model computes from the hits.
# Ground truth: probe-model.py draws thousands of A and B hits (seeded),
# with latencies from 0 ns to seconds, A hits never ended, B hits never
# begun, an A again before its B, B hits whose key was not fetched and a
# lost marker, spread over two CPU files; it pairs them by the documented
# rule (the key, or the thread; the latest A of a key) and computes count,
# min, nearest-rank p50/p90/p99 as the upper end of their bucket (dtrace.1),
# max, mean, the log2 histogram and the 15 slowest pairs; dtrace's report,
# read back by the model's parser, must equal it line for line.  The
# slowest pairs' times, threads and keys are found in the listing.
. "$(dirname "$0")/dtrace-mktrace.sh"
MODEL="python3 $ROOT/tests/host/probe-model.py"

for seed in 1 2; do
	mkdir k$seed && $MODEL latency $seed k$seed --key || exit 1
	dt --latency enqueue_op,dequeue_op --key tid --slowest 15 k$seed/t.cpu0 k$seed/t.cpu1
	$MODEL parse <out >got
	check "seed $seed, paired by key: the report is the model's" \
		'[ $rc -eq 0 ] && diff k$seed/expect got >"$TAP_ERR"'
	cp out k$seed/report
done
dt --latency OSD::enqueue_op,probe:OSD::dequeue_op --key tid --slowest 15 k1/t.cpu0 k1/t.cpu1
check "a qualified name, and probe:NAME, name the same probes" 'cmp -s out k1/report'
dt k1/t.cpu0 k1/t.cpu1
check "each of the slowest pairs is in the listing: times, threads, key" \
	'$MODEL check-jump k1/report out >"$TAP_ERR"'
dt --latency enqueue_op,dequeue_op --key tid -j 1 k1/t.cpu0 k1/t.cpu1
check "the default lists 10 pairs" \
	'[ "$(sed -n "/^slowest/,\$p" out | grep -c " tid=")" -eq 10 ] && grep -q "^slowest 10 pairs" out'
dt --latency enqueue_op,dequeue_op --key tid --slowest 0 k1/t.cpu0 k1/t.cpu1
check "--slowest 0: the report without the list" \
	'[ $rc -eq 0 ] && ! grep -q "^slowest" out && grep -q "^pairs " out && grep -q "^\[" out'
dt --latency enqueue_op,dequeue_op --key tid --tsc --slowest 1 k1/t.cpu0 k1/t.cpu1
a_tsc=$(awk '/^slowest/ { getline; getline; print $2 }' out)
check "--tsc: the slowest pair's A time is its hit's time stamp" \
	'"$DTRACE" --tsc k1/t.cpu0 k1/t.cpu1 | grep -q "^ *[01]  *$a_tsc .*probe:OSD::enqueue_op"'

mkdir f && $MODEL latency 3 f || exit 1
dt --latency work,work%return --slowest 15 f/t.cpu0 f/t.cpu1
$MODEL parse <out >got
check "by thread, B a %return probe: the report is the model's" \
	'[ $rc -eq 0 ] && diff f/expect got >"$TAP_ERR"'

# --- what cannot be paired: errors -------------------------------------------------
dt --latency enqueue_op k1/t.cpu0
check "--latency with one name: a usage error" '[ $rc -eq 2 ] && grep -q "A,B" err'
dt --key tid k1/t.cpu0
check "--key without --latency: a usage error" '[ $rc -eq 2 ] && grep -q "with --latency" err'
dt --latency enqueue_op,nosuch k1/t.cpu0
check "a name no probe has: an error naming it" \
	'[ $rc -eq 1 ] && grep -q "no probe named .nosuch." err'
dt --latency enqueue_op,dequeue_op --key cost k1/t.cpu0
check "a key one side lacks: an error naming the probe" \
	'[ $rc -eq 1 ] && grep -q "key cost: probe:OSD::enqueue_op has no value of that name" err'
dt --latency enqueue_op,enqueue_op k1/t.cpu0
check "A and B the same probe: an error" '[ $rc -eq 1 ] && grep -q "both A and B" err'
mv k1/t.probes k1/saved
dt --latency enqueue_op,dequeue_op k1/t.cpu0
check "without BASE.probes: an error naming where it was looked for" \
	'[ $rc -eq 1 ] && grep -q "t.probes not found" err'
done_testing
