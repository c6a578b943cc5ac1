#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The call filters' model, for tests 87 and 88: dtrace --calltree's
output read back as trees, and the filters applied to them by their
definition (dtrace.1), one call at a time:

  calltree-model.py shape  < CALLTREE             the calls, one line each:
                                                  "DEPTH NAME" in order, per thread
  calltree-model.py filter [-F PAT] [-N PAT] [-D N] [--min-ns NS]
                    [--lib-fn NAME] < CALLTREE    the same, of the calls the
                                                  filters keep
  calltree-model.py durations < CALLTREE          every call's duration, ns

Patterns: a name, a glob (fnmatch), /regex/ (searched).  --lib-fn: a
function of the excluded library (the caller knows which are)."""
import fnmatch
import re
import sys


def read_threads(lines):
    """[(header, [root nodes])]; a node is [name, dur_ns, children]."""
    threads, stack, roots = [], [], None
    for line in lines:
        line = line.rstrip('\n')
        if line.startswith('# thread'):
            roots, stack = [], []
            threads.append((line.split(' (')[0], roots))
            continue
        if line.startswith('#') or '|' not in line:
            continue
        dur, _, body = line.partition(' | ')
        text = body.lstrip(' ')
        depth = (len(body) - len(text)) // 2
        m = re.match(r'\[(\d+)\] (.*)', text)
        if m:
            depth, text = int(m.group(1)), m.group(2).lstrip(' ')
        ns = round(float(dur.split()[0]) * 1000) if dur.strip() else None
        m = re.match(r'(\S+)\(\)( \{|;)', text)
        if m:
            # a frame entered before the trace (a forked child's callers) is
            # no call of it (dtrace counts its time, not a call)
            node = [m.group(1), ns, [], 'entered before the trace started' in line]
            del stack[depth:]
            (stack[-1][2] if stack else roots).append(node)
            if m.group(2) == ' {':
                stack.append(node)
        elif text.startswith('} /*'):
            del stack[depth + 1:]
            if stack:
                stack.pop()[1] = ns
    return threads


def matches(pats, name):
    for p in pats:
        if len(p) >= 2 and p[0] == '/' and p[-1] == '/':
            if re.search(p[1:-1], name):
                return True
        elif fnmatch.fnmatchcase(name, p):
            return True
    return False


def keep(nodes, opt, region, hidden, depth, out):
    for name, ns, children, before in nodes:
        r = region or matches(opt['F'], name)
        h = hidden or matches(opt['N'], name)
        ok = (r or not opt['F']) and not h and (not opt['D'] or depth < opt['D']) and \
            (not opt['min'] or ns >= opt['min'])
        shown = ok and name not in opt['lib']
        if shown:
            out.append('%d %s%s' % (depth, name, ' (before the trace)' if before else ''))
        keep(children, opt, r, h, depth + 1 if shown else depth, out)


def main():
    args = sys.argv[1:]
    mode = args.pop(0)
    opt = {'F': [], 'N': [], 'D': 0, 'min': 0, 'lib': set()}
    while args:
        o, v = args.pop(0), args.pop(0)
        if o in ('-F', '-N'):
            opt[o[1]].append(v)
        elif o == '-D':
            opt['D'] = int(v)
        elif o == '--min-ns':
            opt['min'] = int(v)
        elif o == '--lib-fn':
            opt['lib'].add(v)
    for header, roots in read_threads(sys.stdin):
        if mode == 'durations':
            todo = list(roots)
            while todo:
                n = todo.pop()
                print(n[1])
                todo += n[2]
            continue
        out = []
        keep(roots, opt if mode == 'filter' else {'F': [], 'N': [], 'D': 0, 'min': 0,
                                                  'lib': set()}, False, False, 0, out)
        print(header)
        print('\n'.join(out))


main()
