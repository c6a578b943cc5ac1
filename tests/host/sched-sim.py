#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""sched-sim: kernel trace files of a made-up scheduler, for the off-CPU tests.

  sched-sim.py BASE SEED [STEPS]    writes BASE.cpu0 .. BASE.cpu2 (mktrace.py)

Threads 100-107 (processes 100 and 104, named by thread:name records at the
start, one with < & " ' in its comm) run on 3 CPUs: a CPU switches its task
out (to block, or preempted) for a runnable one or idle, running tasks wake
blocked ones, enter and leave system calls; task 107 exits and its tid is
forked again.  Times only grow, one clock: the records merge in time.  The
tests compute what the trace says from dtrace --raw, not from this script.
"""
import os
import random
import runpy
import sys

base, seed = sys.argv[1], int(sys.argv[2])
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 600
rnd = random.Random(seed)


def code(group_bit, sub):
    return (1 << group_bit) | (sub << 24)


SWITCH, WAKEUP = code(0, 1), code(0, 2)
FORK, EXIT, NAME = code(1, 1), code(1, 3), code(1, 4)
SYS_ENTRY, SYS_EXIT = code(5, 1), code(5, 2)
CONT, END = 1 << 22, 1 << 23
NCPU = 3
events = [[] for _ in range(NCPU)]
comms = {t: b"worker%d" % t for t in range(100, 108)}
comms[103] = b"a<b&c\"d'"
t = 1000


def emit(cpu, c, a1, a2, tid):
    events[cpu].append("%d:%d:%d:%d:%d" % (t, c, a1, a2, tid))


def name(cpu, tid):
    comm = comms[tid].ljust(16, b"\0")
    words = [int.from_bytes(comm[i:i + 4], "little") for i in range(0, 16, 4)]
    pid = 100 if tid < 104 else 104
    emit(cpu, NAME, tid, pid, tid)
    emit(cpu, CONT | (0 << 24), words[0], words[1], tid)
    emit(cpu, CONT | END | (1 << 24), words[2], words[3], tid)


for tid in comms:
    name(0, tid)
    t += 10
running = [0] * NCPU
runnable = set(comms)
blocked = set()
in_syscall = {}
exited = forked = False
for step in range(steps):
    t += rnd.randint(1, 5000)
    cpu = rnd.randrange(NCPU)
    cur = running[cpu]
    r = rnd.random()
    if cur and r < 0.15 and cur not in in_syscall:
        in_syscall[cur] = rnd.choice([0, 1, 7, 35, 202, 299])
        emit(cpu, SYS_ENTRY, in_syscall[cur], 0, cur)
    elif cur and r < 0.25 and cur in in_syscall:
        emit(cpu, SYS_EXIT, in_syscall.pop(cur), 0, cur)
    elif r < 0.45 and blocked:
        w = rnd.choice(sorted(blocked))
        blocked.discard(w)
        runnable.add(w)
        emit(cpu, WAKEUP, w, cpu, cur)
    elif cur == 107 and not exited and step > steps // 2:
        # 107 exits and is switched out a last time; 100 forks it again later
        emit(cpu, EXIT, 107, 0, 107)
        t += 1
        emit(cpu, SWITCH, 107, 0, 107)
        running[cpu] = 0
        exited = True
        in_syscall.pop(107, None)
    elif exited and not forked and cur == 100:
        emit(cpu, FORK, 100, 107, 100)
        runnable.add(107)
        forked = True
    else:
        nxt = rnd.choice(sorted(runnable - set(running)) + [0])
        if nxt == cur:
            continue
        if cur:
            (blocked if rnd.random() < 0.5 else runnable).add(cur)
        if nxt:
            runnable.discard(nxt)
        emit(cpu, SWITCH, cur, nxt, cur)
        running[cpu] = nxt
# mktrace.py writes the files, in this interpreter (one start, not four)
mk = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mktrace.py")
for cpu in range(NCPU):
    sys.argv = [mk, "%s.cpu%d" % (base, cpu), "--cpu", str(cpu)] + events[cpu]
    runpy.run_path(mk, run_name="__main__")
