#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Task names from the trace itself (thread:name events), run as root in the
# test VM (TAP): a task that existed before ktrace started is named (the
# state dump of KTRACE_IOC_NAME_TASKS), a task renamed by prctl() shows its
# old name before the rename and its new one after, and ktrace records
# names whatever -e says (here only sched).  Ground truth: the pids the tasks
# print and the names /tests/name-task gives itself.

NAME=names
NAMER=${NAMER:-/tests/name-task}
. "$(dirname "$0")/tap-common.sh"
has_outE() { grep -qE -- "$1" "$T/out"; }
# first_line / last_line ERE: line number in the output, 0 if none
first_line() { grep -nE -- "$1" "$T/out" | head -n 1 | cut -d: -f1 | grep . || echo 0; }
last_line() { grep -nE -- "$1" "$T/out" | tail -n 1 | cut -d: -f1 | grep . || echo 0; }

"$NAMER" spin 4 &
pre=$!
sleep 0.5		# it has named itself before ktrace starts
"$KTRACE" -e sched -c all -o "$T/n" -- "$NAMER" rename >"$T/pid" 2>"$T/err"
rc=$?
check "ktrace -e sched -- name-task rename" '[ $rc -eq 0 ]'
read -r w <"$T/pid"
"$DTRACE" "$T"/n.cpu* >"$T/out" 2>"$T/err"
rc=$?
check "dtrace reads the trace" '[ $rc -eq 0 ] && [ -s "$T/out" ]'

check "ktrace -e sched records names too" \
	'has_outE "thread:name +task $w of process $w is named "'
check "the task that was there before ktrace is named by the state dump" \
	'has_outE "task $pre of process $pre is named kt-preexist\$"'
check "... and its context switches name it (kt-preexist-$pre)" \
	'has_outE "sched:switch +context switch (from task kt-preexist-$pre |.* to task kt-preexist-$pre,)"'
check "the traced program's switches name it after its exec (name-task-$w)" \
	'has_outE "context switch from task name-task-$w "'
check "prctl(PR_SET_NAME) is recorded (thread:name kt-renamed)" \
	'has_outE "task $w of process $w is named kt-renamed\$"'
before=$(last_line "name-task-$w ")
rename=$(first_line "task $w of process $w is named kt-renamed\$")
after=$(first_line "kt-renamed-$w +sched:")
check "its old name until the rename (line $before < $rename), its new one after (line $after > $rename)" \
	'[ "$before" -gt 0 ] && [ "$before" -lt "$rename" ] && [ "$after" -gt "$rename" ]'
check "the task column names the task too" \
	'grep -E "^ *[0-9]+ +[0-9.]+ +kt-renamed-$w +sched:switch" "$T/out" >/dev/null'
check "the idle task is <idle>-0" 'has_outE "to task <idle>-0,"'

"$DTRACE" --raw "$T"/n.cpu* >"$T/out" 2>"$T/err"
rc=$?
check "--raw: thread ids, no names" \
	'[ $rc -eq 0 ] && has_outE "context switch from task $w to task [0-9]+," &&
	 ! has_outE "kt-renamed-"'
wait $pre
done_testing
