#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Task names from the trace's thread:name events (dtrace/tasks.c), on a
# hand-made kernel stream whose namings are the ground truth: the name a
# task had at each event, its first name before it was named, <...> for a
# task never named, <idle>-0, no task for a lost marker; -p selects the
# threads of a process; -S counts events per task; Perfetto names threads,
# processes and CPU slices; --raw prints thread ids.
. "$(dirname "$0")/dtrace-mktrace.sh"

NAME=$(((1 << 1) | (4 << 24)))			# thread:name
CONT0=$((1 << 22))				# CONT, chain index 0
CONT1=$(((1 << 22) | (1 << 23) | (1 << 24)))	# CONT|END, index 1
LOST=$((1 << 24))				# meta:lost
# name TSC TID PID COMM (at most 8 bytes here): the three records
name() {
	local hex lo hi
	hex=$(printf '%s' "$4" | od -An -tx1 | tr -d ' \n')
	hex=$(printf '%-16s' "$hex" | tr ' ' 0)
	lo=0x$(echo "$hex" | cut -c7-8)$(echo "$hex" | cut -c5-6)$(echo "$hex" | cut -c3-4)$(echo "$hex" | cut -c1-2)
	hi=0x$(echo "$hex" | cut -c15-16)$(echo "$hex" | cut -c13-14)$(echo "$hex" | cut -c11-12)$(echo "$hex" | cut -c9-10)
	echo "$1:$NAME:$2:$3:$2 $1:$CONT0:$lo:$hi:$2 $1:$CONT1:0:0:$2"
}
# sw TSC PREV NEXT: a context switch, the previous task sleeping (S), the
# next one at priority 120
sw() { echo "$1:$SWITCH:$2:$3:$2 $1:$(((1 << 22) | (1 << 23))):1:120:$2"; }
# process 100: threads 100 and 101; 101 is renamed at 5000; 200 its own
$MKTRACE k.cpu0 --cpu 0 \
	$(sw 1000 100 101) \
	$(name 2000 100 100 main) $(name 2000 101 100 worker) $(name 2000 200 200 other) \
	$(sw 3000 101 200) \
	$(name 5000 101 100 renamed) \
	$(sw 6000 101 0) \
	$(sw 7000 0 300) \
	8000:$LOST:5:0:0
dt k.cpu0
line() { sed -n "$1p" out; }
check "an event before the task's first name gets that name" \
	'[ $rc -eq 0 ] && line 1 | grep -q " main-100 .*from task main-100 to task worker-101, prev state S, next prio 120$"'
check "the name in force at the event" 'line 5 | grep -q " worker-101 .*to task other-200, prev state S, next prio 120$"'
check "a rename: the new name after it" 'line 7 | grep -q " renamed-101 .*from task renamed-101 to task <idle>-0, prev state S, next prio 120$"'
check "a task never named: <...>-300; the idle task <idle>-0" \
	'line 8 | grep -q " <idle>-0 .*to task <...>-300, prev state S, next prio 120$"'
check "a lost marker is no task's: -" 'line 9 | grep -Eq "^ +0 +[0-9.]+ +- +meta:lost"'
check "thread:name prints the name" 'line 2 | grep -q "task 100 of process 100 is named main$"'
dt -p 100 k.cpu0
check "-p 100: the events of its threads 100 and 101 (and the lost marker)" \
	'[ $rc -eq 0 ] && [ "$(grep -c "sched:switch" out)" -eq 3 ] && ! grep -q "<idle>-0 *sched" out &&
	 grep -q meta:lost out'
dt -p 200 k.cpu0
check "-p 200: its naming only" '[ $rc -eq 0 ] && [ "$(grep -c "sched:\|thread:" out)" -eq 1 ]'
dt -S k.cpu0
check "-S: events per task, named as at its last event (renamed-101: 4, main-100: 2)" \
	'[ $rc -eq 0 ] && grep -Eq "^  renamed-101 +4$" out && grep -Eq "^  main-100 +2$" out &&
	 grep -Eq "^  other-200 +1$" out && grep -Eq "^  <idle>-0 +1$" out'
dt --format=perfetto-json -o k.json k.cpu0
check "perfetto: threads and processes named by thread:name, the process of a thread" \
	'[ $rc -eq 0 ] && grep -q "\"name\":\"thread_name\",\"pid\":100,\"tid\":101,\"args\":{\"name\":\"worker\"}" k.json &&
	 grep -q "\"name\":\"process_name\",\"pid\":100,\"tid\":100,\"args\":{\"name\":\"main\"}" k.json &&
	 grep -q "\"name\":\"thread_name\",\"pid\":100,\"tid\":101,\"args\":{\"name\":\"renamed\"}" k.json'
check "perfetto: a CPU slice is named as its task was then" \
	'grep -q "\"ph\":\"B\",\"name\":\"worker-101\",\"pid\":4194304," k.json &&
	 grep -q "\"ph\":\"B\",\"name\":\"other-200\",\"pid\":4194304," k.json'
# a flight snapshot: cpu0 kept only its newest records (it starts with a
# lost marker at 5000); cpu1 kept an old naming (the fork's "sh") of a task
# whose rename on cpu0 was overwritten; the state dump at 8000 names it
$MKTRACE s.cpu0 --cpu 0 5000:$LOST:900:0:0 6000:$SWITCH:300:0:300 \
	$(name 8000 300 300 work)
$MKTRACE s.cpu1 --cpu 1 $(name 1000 300 300 sh) 1500:$SWITCH:300:0:300
dt s.cpu0 s.cpu1
check "a snapshot: a naming from before every CPU's records begin yields to a later one" \
	'[ $rc -eq 0 ] && grep -q " work-300 .*context switch from task work-300 to task <idle>-0" out'
dt --raw k.cpu0
check "--raw: thread ids" \
	'[ $rc -eq 0 ] && line 1 | grep -Eq "^ +0 +[0-9.]+ +100 sched:switch +context switch from task 100 to task 101, prev state 1, next prio 120$"'
done_testing
