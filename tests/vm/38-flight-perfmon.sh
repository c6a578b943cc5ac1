#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A CAP_PERFMON-only opener against a root ktrace --flight: it can neither
# attach a reader nor spoil the snapshots; run as root in the test VM
# (TAP).  perfmon-attach keeps attaching readers to every CPU while ktrace
# takes a snapshot every 0.2 s.  Ground truth: the kernel's mode and mask
# (ktrace -s), the helper's own count of attaches, the snapshot files.
#   - in overwrite mode a reader attaches only through a file opened with
#     CAP_SYS_ADMIN: the helper gets none (EPERM), so it cannot take a
#     snapshot's records nor keep tracing from being turned on again;
#   - ktrace takes every snapshot, exits 0, and leaves the normal mode and
#     tracing off.
NAME=flight-perfmon
. "$(dirname "$0")/tap-common.sh"

"$KTRACE" -e 0; "$KTRACE" -b 1024
"$KTRACE" --flight -e user,sched -o "$T/f" 2>"$T/err" &
kt=$!
check "ktrace --flight starts" 'wait_for "$T/err" "flight recorder on"'
/tests/perfmon-attach 3 >"$T/helper" 2>&1 &
helper=$!
for i in 1 2 3 4 5 6 7 8 9 10; do
	kill -USR1 $kt 2>/dev/null
	sleep 0.2
done
wait $helper
kill -INT $kt 2>/dev/null
wait $kt
rc=$?
check "ktrace --flight ends with exit 0 ($rc)" '[ $rc -eq 0 ]'
check "the CAP_PERFMON opener attached no reader in overwrite mode ($(cat "$T/helper"))" \
	'grep -q "^attached 0 refused [1-9][0-9]* last-error Operation not permitted" "$T/helper"'
check "ktrace took its snapshots ($(grep -c "snapshot [0-9]*: " "$T/err") of 11 asked)" \
	'[ "$(grep -c "snapshot [0-9]*: " "$T/err")" -ge 3 ]'
"$KTRACE" -s >"$T/s"
check "afterwards the normal mode and tracing off" \
	'! grep -q "^mode" "$T/s" && grep -q "(tracing off)" "$T/s"'
"$KTRACE" -e 0; "$KTRACE" -b 65536
done_testing
