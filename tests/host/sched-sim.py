#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""sched-sim: kernel trace files of a made-up scheduler, for the off-CPU tests.

  sched-sim.py BASE SEED        writes BASE.cpu0 .. BASE.cpu2 (mktrace.py)
  sched-sim.py BASE SEED...     BASE-SEED.cpu0 .. for each of several seeds

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


def code(group_bit, sub):
    return (1 << group_bit) | (sub << 24)


SWITCH, WAKEUP = code(0, 1), code(0, 2)
FORK, EXIT, NAME = code(1, 1), code(1, 3), code(1, 4)
SYS_ENTRY, SYS_EXIT = code(5, 1), code(5, 2)
CONT, END = 1 << 22, 1 << 23
NCPU = 3
MKTRACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mktrace.py")


class Trace:
    def __init__(self):
        self.t = 1000
        self.events = [[] for _ in range(NCPU)]

    def emit(self, cpu, c, a1, a2, tid):
        self.events[cpu].append("%d:%d:%d:%d:%d" % (self.t, c, a1, a2, tid))

    def name(self, cpu, tid, comm, pid):
        comm = comm.ljust(16, b"\0")
        words = [int.from_bytes(comm[i:i + 4], "little") for i in range(0, 16, 4)]
        self.emit(cpu, NAME, tid, pid, tid)
        self.emit(cpu, CONT | (0 << 24), words[0], words[1], tid)
        self.emit(cpu, CONT | END | (1 << 24), words[2], words[3], tid)

    def write(self, base):
        # mktrace.py writes the files, in this interpreter: one start, not three
        for cpu in range(NCPU):
            sys.argv = [MKTRACE, "%s.cpu%d" % (base, cpu), "--cpu", str(cpu)] + self.events[cpu]
            runpy.run_path(MKTRACE, run_name="__main__")


def simulate(base, seed, steps=600):
    rnd = random.Random(seed)
    tr = Trace()
    comms = {tid: b"worker%d" % tid for tid in range(100, 108)}
    comms[103] = b"a<b&c\"d'"
    for tid in comms:
        tr.name(0, tid, comms[tid], 100 if tid < 104 else 104)
        tr.t += 10
    running = [0] * NCPU
    runnable = set(comms)
    blocked = set()
    in_syscall = {}
    exited = forked = False
    for step in range(steps):
        tr.t += rnd.randint(1, 5000)
        cpu = rnd.randrange(NCPU)
        cur = running[cpu]
        r = rnd.random()
        if cur and r < 0.15 and cur not in in_syscall:
            in_syscall[cur] = rnd.choice([0, 1, 7, 35, 202, 299])
            tr.emit(cpu, SYS_ENTRY, in_syscall[cur], 0, cur)
        elif cur and r < 0.25 and cur in in_syscall:
            tr.emit(cpu, SYS_EXIT, in_syscall.pop(cur), 0, cur)
        elif r < 0.45 and blocked:
            w = rnd.choice(sorted(blocked))
            blocked.discard(w)
            runnable.add(w)
            tr.emit(cpu, WAKEUP, w, cpu, cur)
        elif cur == 107 and not exited and step > steps // 2:
            # 107 exits and is switched out a last time; 100 forks it again later
            tr.emit(cpu, EXIT, 107, 0, 107)
            tr.t += 1
            tr.emit(cpu, SWITCH, 107, 0, 107)
            running[cpu] = 0
            exited = True
            in_syscall.pop(107, None)
        elif exited and not forked and cur == 100:
            tr.emit(cpu, FORK, 100, 107, 100)
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
            tr.emit(cpu, SWITCH, cur, nxt, cur)
            running[cpu] = nxt
    tr.write(base)


base, seeds = sys.argv[1], sys.argv[2:]
for seed in seeds:
    simulate(base if len(seeds) == 1 else "%s-%s" % (base, seed), int(seed))
