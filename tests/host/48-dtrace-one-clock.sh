#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One clock per merge.  A kernel file (the kernel's TSC rate) and a user
# stream whose writer calibrated its own rate, 3 ppm higher, hold events
# at the same TSC a minute after the start.  Converted with one rate they
# print at the same time (ground truth: same TSC, same instant); each with
# its own, the user event would be 180 us early.  The user stream comes
# first on the command line: the kernel's rate wins all the same, and a
# warning says the headers disagree.
. "$(dirname "$0")/dtrace-mktrace.sh"

$MKTRACE trace.pid7.tid7 --user 7 7 --hz 1000003000 60000001000:$USER1:5:6
$MKTRACE k.cpu0 --cpu 0 --hz 1000000000 1000:$SWITCH:1:2 60000001000:$SWITCH:3:4
dt trace.pid7.tid7 k.cpu0
tu=$(awk '$4 ~ /^user:/ { print $2 }' out)
tk=$(awk '$4 == "sched:switch" && $2 != "0.000" { print $2 }' out)
check "same TSC, same time: user $tu us, kernel $tk us" \
	'[ $rc -eq 0 ] && [ -n "$tu" ] && [ "$tu" = "$tk" ] && [ "$tk" = 60000000.000 ]'
check "a warning names the file and the difference (3.0 ppm)" \
	'grep -q "trace.pid7.tid7: TSC rate 1000003000 Hz differs from k.cpu0.s 1000000000 Hz by 3.0 ppm" err'
$MKTRACE a.cpu0 --cpu 0 --hz 1000000000 1000:$SWITCH:1:2
$MKTRACE a.cpu1 --cpu 1 --hz 1000000500 2000:$SWITCH:1:2
dt a.cpu0 a.cpu1
check "0.5 ppm apart: no warning" '[ $rc -eq 0 ] && [ ! -s err ]'
done_testing
