#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# vm-append: ktrace.mask=0x1
#
# Boot-time tracing with names (TAP): the kernel traces sched from boot
# (ktrace.mask=0x1: no thread group, so no thread:name at fork or exec);
# ktrace attaches without -e, and the state dump it asks for still names
# every task, so dtrace names the tasks of the boot-time trace.

NAME=bootnames
. "$(dirname "$0")/tap-common.sh"

"$KTRACE" -s >"$T/out" 2>"$T/err"
check "tracing since boot with the mask of ktrace.mask=0x1 (sched)" \
	'grep -Eq "0x00000001 +sched\$" "$T/out"'
"$KTRACE" -c all -d 0.5 -o "$T/b" >/dev/null 2>"$T/err"
rc=$?
check "ktrace attaches to it without -e" '[ $rc -eq 0 ]'
"$DTRACE" "$T"/b.cpu* >"$T/out" 2>"$T/err"
rc=$?
comm=$(cat /proc/1/comm)
check "the state dump names every task all the same (pid 1 is $comm)" \
	'[ $rc -eq 0 ] && grep -q "thread:name .*task 1 of process 1 is named $comm\$" "$T/out"'
check "no other thread event: the mask is the boot one" \
	'! grep -Eq "thread:(fork|exec|exit)" "$T/out"'
check "context switches name their tasks" \
	'grep -Eq "sched:switch +context switch from task [^ ]+-[0-9]+ to task [^ <]+-[0-9]+," "$T/out"'
done_testing
