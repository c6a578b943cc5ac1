#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The trivially correct model of dtrace --report, for the report tests.

Reads dtrace's plain listing of a balanced trace (every call has its
exit: no repairs) on standard input, pairs each thread's func:enter and
func:leave lines with a stack, and writes what --report --format=csv
must say, in the same columns, one row per function (per thread with
--per-thread), sorted by name (then tid):

  calls     the entries
  total_ns  exit less entry time of the calls that have no call of the
            same function below them on the stack (uftrace's rule)
  self_ns   exit less entry less the durations of the direct callees
  avg_ns    the durations of all calls, summed, divided by calls (floor)
  min_ns, max_ns  of all calls

--roots prints instead the summed durations of the threads' outermost
calls, in ns.  Times are the listing's microseconds with three decimals:
whole nanoseconds, so every value is exact.
"""
import re
import sys

LINE = re.compile(r'^\s*\S+\s+(\d+)\.(\d{3})\s+(\S+)\s+func:(enter|leave)\s+(?:enter|exit) (\S+)')


def model(lines, per_thread):
    stacks = {}     # tid -> [[name, entry ns, callees ns], ...]
    rows = {}       # (tid or '', name) -> [calls, total, self, all, min, max]
    roots = 0
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        ns = int(m.group(1)) * 1000 + int(m.group(2))
        tid = m.group(3).rsplit('-', 1)[1]
        stack = stacks.setdefault(tid, [])
        name = m.group(5)
        if m.group(4) == 'enter':
            stack.append([name, ns, 0])
            continue
        fn, entry, callees = stack.pop()
        if fn != name:
            sys.exit(f'report-model: thread {tid}: exit of {name} in {fn}: not balanced')
        dur = ns - entry
        if stack:
            stack[-1][2] += dur
        else:
            roots += dur
        r = rows.setdefault((tid if per_thread else '', fn), [0, 0, 0, 0, None, 0])
        r[0] += 1
        if not any(f[0] == fn for f in stack):
            r[1] += dur
        r[2] += dur - callees
        r[3] += dur
        r[4] = dur if r[4] is None else min(r[4], dur)
        r[5] = max(r[5], dur)
    for tid, stack in stacks.items():
        if stack:
            sys.exit(f'report-model: thread {tid}: {stack[-1][0]} never exits')
    return rows, roots


def main():
    per_thread = '--per-thread' in sys.argv
    rows, roots = model(sys.stdin, per_thread)
    if '--roots' in sys.argv:
        print(roots)
        return
    print(('tid,' if per_thread else '') + 'function,calls,total_ns,self_ns,avg_ns,min_ns,max_ns')
    for (tid, fn), (calls, total, self_, all_, lo, hi) in sorted(rows.items(),
                                                                 key=lambda kv: (kv[0][1], kv[0][0])):
        print(','.join(map(str, ([tid] if per_thread else []) +
                           [fn, calls, total, self_, all_ // calls, lo, hi])))


main()
