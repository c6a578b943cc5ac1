#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace-run and a ring that is slow to become one (its thread reserving
# and clearing a big ring on a loaded machine: here tests/host/slow-ring-
# shim.c holds each new thread's posix_fallocate of its ring 3 s, past the
# 2 s ktrace-run used to wait): while its maker thread lives the ring is
# waited for, and every thread's trace is in the files.  A ring that never
# becomes one (its maker gone: killed while making it) is a loss: said, and
# never exit 0.  Ground truth: tests/user/events threads N M makes N x M
# user:mark events, one file per thread.
. "$(dirname "$0")/user-common.sh"

SHIM=$TMP/slow-ring-shim.so
cc -O2 -shared -fPIC -o "$SHIM" "$ROOT/tests/host/slow-ring-shim.c" -ldl 2>"$TMP/err.cc"
ok $? "build the slow-ring shim" "$(cat "$TMP/err.cc")"

SLOW_RING_MS=3000 LD_PRELOAD=$SHIM "$KTRACE_RUN" -o "$TMP/slow" -- "$UT/events" threads 3 1000 \
	>/dev/null 2>"$TMP/err.slow"
rc=$?
n=$(ls "$TMP"/slow/trace.pid*.tid* 2>/dev/null | wc -l)
[ $rc -eq 0 ] && [ "$n" -eq 3 ] && [ "$(count "$TMP/slow" user:mark)" -eq 3000 ] &&
	! grep -q "never became a ring" "$TMP/err.slow"
ok $? "rings made in 3 s: waited for, 3 files, 3000 of 3000 events, exit 0" \
	"exit $rc, $n files, $(count "$TMP/slow" user:mark) events; $(cat "$TMP/err.slow")"

# the maker killed while its ring is being made: the ring never becomes one
SLOW_RING_MS=60000 LD_PRELOAD=$SHIM "$KTRACE_RUN" -o "$TMP/kill" -- "$UT/events" threads 2 10 \
	>/dev/null 2>"$TMP/err.kill" &
run=$!
for i in $(seq 100); do
	pid=$(pgrep -P $run -x events)
	[ -n "$pid" ] && [ -n "$(ls /dev/shm/ktrace-run.*/ring.$pid.* 2>/dev/null | sed -n 2p)" ] &&
		break
	sleep 0.1
done
[ -n "$pid" ] && kill -9 "$pid"
wait $run 2>/dev/null
rc=$?
[ $rc -ne 0 ] && grep -q "never became a ring" "$TMP/err.kill" &&
	grep -Eq "records lost.* [1-9][0-9]* errors" "$TMP/err.kill"
ok $? "a ring whose maker was killed before it was whole: said, counted, exit non-zero" \
	"exit $rc; $(cat "$TMP/err.kill")"
done_testing
