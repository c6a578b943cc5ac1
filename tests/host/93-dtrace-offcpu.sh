#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --folded-offcpu: the time each thread spends off CPU, folded
# under comm-tid[;user calls][;sys_NAME];[blocked|preempted].
# Ground truth: a model of a few lines (below) over the raw records,
# dtrace --raw, of traces of a made-up scheduler (sched-sim.py: 3 CPUs,
# blocking, preemption, wakeups, system calls, an exit and a reused tid):
#  1. per thread and reason, the lines add up to the model's off-CPU ns
#     (from a switch out to the next switch in; blocked when a wakeup of
#     the thread came between; exact, the records are in ns);
#  2. a line's sys_NAME is the system call the raw records have the thread
#     in when switched out (the model's, by number: the names table);
#  3. -t and -p show the threads they select and the same totals for them;
#  4. a trace without context switches: no lines, a warning that says so;
#  5. a hand-made trace with a user stream (libktrace's func records on the
#     same timeline) folds each switch under the calls running then, as
#     its records say (written below), and a thread without one under its
#     task alone.
. "$(dirname "$0")/dtrace-mktrace.sh"

SIM=$ROOT/tests/host/sched-sim.py

# model RAW...: for each dtrace --raw listing RAW, RAW.model: "tid reason
# syscall ns pid" per off-CPU time; pid: of the thread:name that names it,
# or its own after a fork (a process of its own until named, as tasks.h says)
model() {
	python3 - "$@" <<'PY'
import re, sys
def ns(s):
    us, frac = s.split(".")
    return int(us) * 1000 + int(frac)
for raw in sys.argv[1:]:
    out, woken, sysc, dead, insys, pid, outpid = {}, {}, {}, set(), {}, {}, {}
    with open(raw) as f, open(raw + ".model", "w") as m:
        for line in f:
            cols = line.split()
            t, tid, ev = ns(cols[1]), int(cols[2]), cols[3]
            a = [int(x) for x in re.findall(r"\d+", " ".join(cols[4:]))]
            if ev == "sched:switch" and a[0] != a[1]:
                prev, nxt = a
                if nxt in out:
                    print(nxt, "blocked" if woken.pop(nxt) else "preempted", sysc.pop(nxt),
                          t - out.pop(nxt), outpid.pop(nxt), file=m)
                if prev and prev in dead:
                    dead.discard(prev)
                elif prev:
                    out[prev], woken[prev], sysc[prev] = t, False, insys.get(prev, "-")
                    outpid[prev] = pid.get(prev, 0)
            elif ev == "sched:wakeup" and a[0] in out:
                woken[a[0]] = True
            elif ev == "syscall:entry":
                insys[tid] = a[0]
            elif ev == "syscall:exit":
                insys.pop(tid, None)
            elif ev == "thread:exit":
                dead.add(a[0]); out.pop(a[0], None); insys.pop(a[0], None)
            elif ev == "thread:fork":
                out.pop(a[1], None); dead.discard(a[1]); insys.pop(a[1], None); pid[a[1]] = a[1]
            elif ev == "thread:name":
                pid[a[0]] = a[1]
PY
}

# sums FILE: "tid reason total" from folded lines or the model's
sum_folded() {
	sed -E 's/^[^;]*-([0-9]+);(.*;)?\[([a-z]+)\] ([0-9]+)$/\1 \3 \4/' "$1" |
		awk '{ n[$1 " " $2] += $3 } END { for (k in n) print k, n[k] }' | sort
}
sum_model() {	# sum_model FILE [PID]: of all threads, or of process PID
	awk -v pid="${2:-}" 'pid == "" || $5 == pid { n[$1 " " $2] += $4 }
		END { for (k in n) print k, n[k] }' "$1" | sort
}

python3 "$SIM" sim 1 2 3
for seed in 1 2 3; do
	"$DTRACE" --raw sim-$seed.cpu* >raw$seed
done
model raw1 raw2 raw3
for seed in 1 2 3; do
	mv raw$seed.model model$seed
	dt --folded-offcpu sim-$seed.cpu*
	cp out folded$seed
	check "seed $seed: exits 0, every line comm-tid;...;[blocked|preempted] NS" \
		'[ $rc -eq 0 ] && [ -s out ] && ! grep -vE "^[^ ;]+-[0-9]+(;[^ ;]+)*;\[(blocked|preempted)\] [0-9]+$" out'
	sum_folded folded$seed >got$seed
	sum_model model$seed >want$seed
	check "seed $seed: per thread and reason, the ns the raw records say" \
		'[ -s want$seed ] && diff want$seed got$seed'
	check "seed $seed: the model has blocked and preempted times, an exit and a fork" \
		'grep -q blocked want$seed && grep -q preempted want$seed &&
		 grep -q "exit of task 107" raw$seed && grep -q "created task 107" raw$seed'
	# the system call: by number in the model, by name in the lines
	awk '$3 != "-" { n[$1 " " $3] += $4 } END { for (k in n) print k, n[k] }' model$seed |
		sort >sys-want$seed
	sed -nE 's/^[^;]*-([0-9]+);(.*;)?sys_([a-z0-9_]+);\[[a-z]+\] ([0-9]+)$/\1 \3 \4/p' folded$seed |
		awk '{ n[$1 " " $2] += $3 } END { for (k in n) print k, n[k] }' | sort >sys-got$seed
	# names of the numbers the simulator uses (arch/x86/entry/syscalls/syscall_64.tbl)
	sed -e 's/ 0 / read /; s/ 1 / write /; s/ 7 / poll /; s/ 35 / nanosleep /' \
	    -e 's/ 202 / futex /; s/ 299 / recvmmsg /' sys-want$seed | sort >sys-named$seed
	check "seed $seed: the time in each system call, per thread" \
		'[ -s sys-named$seed ] && diff sys-named$seed sys-got$seed'
done

# -t and -p: the threads they pick, the model's totals for them
dt --folded-offcpu -t 103,105 sim-1.cpu*
sum_folded out >got-t
grep -E '^10[35] ' want1 >want-t
check "-t 103,105: those threads' lines, the same ns" '[ -s want-t ] && diff want-t got-t'
dt --folded-offcpu -p 104 sim-1.cpu*
sum_folded out >got-p
sum_model model1 104 >want-p
check "-p 104: its threads' times while in it (107 forked anew is not), the same ns" \
	'[ -s want-p ] && diff want-p got-p'
check "the comm with < & \" ' is the root of its lines" "grep -q \"^a<b&c\\\"d'-103;\" folded1"

# ---- a user stream: the calls running at each switch out ----
# thread 7 (user stream "app", pid 7): main (0x401000) calls work
# (0x402000), which calls io (0x403000); it is switched out in io (blocked,
# in read), in work after io returned (preempted), and after main returned
# (blocked); thread 8 has no stream.
SWITCH=$(((1 << 0) | (1 << 24)))
WAKEUP=$(((1 << 0) | (2 << 24)))
SYSIN=$(((1 << 5) | (1 << 24)))
SYSOUT=$(((1 << 5) | (2 << 24)))
$MKTRACE calls.pid7.tid7 --user 7 7 --comm 617070 \
	1000:$ENTRY:0x401000:0 1100:$ENTRY:0x402000:0 1200:$ENTRY:0x403000:0 \
	3500:$EXIT:0x403000:0 5000:$EXIT:0x402000:0 5100:$EXIT:0x401000:0
$MKTRACE calls.cpu0 --cpu 0 \
	1050:$SWITCH:8:7:8 1300:$SYSIN:0:3:7 1400:$SWITCH:7:8:7 2000:$WAKEUP:7:0:8 \
	2500:$SWITCH:8:7:8 3000:$SYSOUT:0:0:7 4000:$SWITCH:7:8:7 4300:$SWITCH:8:7:8 \
	5500:$SWITCH:7:8:7 5600:$WAKEUP:7:0:8 6200:$SWITCH:8:7:8
cat >calls.want <<'W'
<...>-8;[preempted] 3050
app-7;0x401000;0x402000;0x403000;sys_read;[blocked] 1100
app-7;0x401000;0x402000;[preempted] 300
app-7;[blocked] 700
W
dt --folded-offcpu calls.pid7.tid7 calls.cpu0
sort out | diff calls.want - >calls.diff
check "user calls: each switch out under the calls running then" 'cat calls.diff; [ ! -s calls.diff ]'
dt --folded-offcpu -e sched calls.pid7.tid7 calls.cpu0
check "-e sched: no call or system call frames" \
	'grep -qx "app-7;\[blocked\] 1800" out && ! grep -q "0x40\|sys_" out'

dt --folded-offcpu calls.pid7.tid7
check "no context switches: exit 0, no line, a warning naming sched:switch" \
	'[ $rc -eq 0 ] && [ ! -s out ] && grep -q "no context switches (sched:switch)" err'
# A kernel that records the state (sched:switch's continuation record):
# the reason is the state the thread was switched out in, whatever
# followed.  Hand-made, the spans worked out by hand: a-100 sleeps (S)
# 0.5-1.5 us, is preempted (R+) 4.5-5.5; b-101 blocks (D) 1.5-4.5, is
# switched out runnable (R) 5.5-9.0; a-100's last switch out has no end.
NAME=$(((1 << 1) | (4 << 24))) C0=$((1 << 22)) C1=$(((1 << 22) | (1 << 23) | (1 << 24)))
SE=$(((1 << 22) | (1 << 23)))
sw() { echo "$1:$SWITCH:$2:$3:$2 $1:$SE:$4:120:$2"; }
$MKTRACE st.cpu0 --cpu 0 500:$NAME:100:100:100 500:$C0:0x61:0:100 500:$C1:0:0:100 \
	500:$NAME:101:101:100 500:$C0:0x62:0:100 500:$C1:0:0:100 \
	$(sw 1000 100 101 1) $(sw 2000 101 100 2) $(sw 5000 100 101 0x100) $(sw 6000 101 100 0) \
	$(sw 9000 100 0 1) $(sw 9500 0 101 0)
dt --folded-offcpu st.cpu0
printf '%s\n' 'a-100;[preempted] 1000' 'a-100;[sleeping] 1000' 'b-101;[blocked] 3000' \
	'b-101;[preempted] 3500' >st.want
check "recorded states: sleeping (S), blocked (D), preempted (R+, R), as worked out by hand" \
	'[ $rc -eq 0 ] && sort out | diff -u st.want -'
done_testing
