#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace.ko on a stock kernel (skipped where ktrace is built in): unload
# refused while a reader holds /dev/ktrace, unload clean while tracing is
# on under load, a second load refused, and a reload traces again.
# The kernel log is checked for splats by the host (scripts/vmtest.sh).
NAME=module
KO=${KTRACE_KO:-/stock/ktrace.ko}
. "$(dirname "$0")/tap-common.sh"

if [ ! -f /sys/module/ktrace/initstate ] || [ ! -f "$KO" ]; then
	skip_all "ktrace is not a loaded module here"
fi
cd "$T" || exit 1

# A reader holds the module: rmmod must refuse and leave tracing working.
"$KTRACE" -q -e sched,syscall -c all -o held &
kpid=$!
sleep 1
check "rmmod refused while /dev/ktrace is open" '! rmmod ktrace 2>/dev/null'
kill -INT $kpid; wait $kpid
check "the held recording wrote its files" '[ -s held.cpu0 ]'

# Tracing on, nobody reading, CPUs busy with traced work: rmmod succeeds.
"$KTRACE" -q -e sched,syscall,softirq,timer,irq,thread,fault
check "tracing is on" '"$KTRACE" -s | grep -q sched'
for i in 1 2 3; do (while :; do cat /proc/stat >/dev/null; done) & done
sleep 1
check "rmmod while tracing under load" 'rmmod ktrace'
check "/dev/ktrace is gone" '[ ! -e /dev/ktrace ]'
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null

check "insmod again" 'insmod "$KO"'
check "a second insmod is refused" '! insmod "$KO" 2>/dev/null'
check "reloaded module starts with tracing off" '"$KTRACE" -s | grep -q "(tracing off)"'
"$KTRACE" -q -e sched -c all -o again -- sh -c 'sleep 0.2'
check "reloaded module records" '[ -s again.cpu0 ] || [ -s again.cpu1 ]'
cd / && rm -rf "$T"
done_testing
