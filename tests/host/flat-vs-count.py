#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""flat-vs-count.py [--late NAME]... FLAT COUNT...: dtrace --flat's calls per function
against the counting hook's entries (tests/debsrc/cygcount.c files,
"ADDRESS ENTRIES EXITS OBJECT" lines, one file per process), summed over
every process and thread.  Functions are named from each OBJECT's symbol
table (nm -C, run from the current directory, where the program ran:
a library's path may be relative); names at one address are one function.

Prints "functions F entries E exits X repairs R wrong W" and a "# ..."
line per function whose calls differ (20 at most); exit 1 if any does.
--late NAME: NAME's calls may be fewer than its entries (and are listed):
the C library calls it in a thread after the thread's last thread-specific
destructor, when libktrace has ended the thread's stream (a program's own
free(), say).
"""
import subprocess
import sys


def plain_name(name):
    """A demangled name as dtrace prints it (dtrace/symbols.c, demangle()):
    without its parameter lists and their qualifiers, an operator's name,
    "(anonymous namespace)" and what is in <>, {}, [] kept:
    "ns::f(int)::G::G() const" -> "ns::f::G::G"."""
    out, i, depth = [], 0, 0
    while i < len(name):
        if not depth and name.startswith('operator', i) and (i == 0 or name[i - 1] == ':'):
            end = i + 8 + (2 if name.startswith('()', i + 8) else 0)
            while end < len(name) and name[end] != '(':
                end += 1
            out.append(name[i:end])
            i = end
        elif not depth and name[i] == '(' and not name.startswith('(anonymous namespace)', i):
            nest = 0
            while i < len(name):
                nest += (name[i] == '(') - (name[i] == ')')
                i += 1
                if not nest:
                    break
            while i < len(name) and not name.startswith('::', i):
                i += 1
        else:
            depth += (name[i] in '<({[') - (name[i] in '>)}]')
            out.append(name[i])
            i += 1
    return ''.join(out).strip()


def symbols(path, cache={}):
    """{address: [names]} of PATH's functions."""
    if path not in cache:
        syms = {}
        for dyn in ([], ['-D']):	# a stripped library: its dynamic symbols
            p = subprocess.run(['nm', '--defined-only', '-C'] + dyn + [path],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            for line in p.stdout.decode(errors='replace').splitlines():
                parts = line.split(' ', 2)
                if len(parts) == 3 and parts[1] in 'tTwWiI':
                    syms.setdefault(int(parts[0], 16), []).append(plain_name(parts[2].split('@')[0]))
            if syms:
                break
        cache[path] = syms
    return cache[path]


def main(flat, counts, late=()):
    want, key_of, label = {}, {}, {}
    entries = exits = 0
    for cf in counts:
        for line in open(cf):
            f = line.split(None, 3)
            if f[0] == 'overflow':
                sys.exit('%s: the counting hook\'s table is full' % cf)
            addr, en, ex = int(f[0], 16), int(f[1]), int(f[2])
            obj = f[3].strip() if len(f) > 3 else '?'
            names = symbols(obj).get(addr) if obj != '?' else None
            if names:
                key = key_of.setdefault(names[0], (obj, addr))
                for n in names:
                    key_of.setdefault(n, key)
                label[key] = '|'.join(names)
            else:
                key = (obj, addr)
                label.setdefault(key, '%s+%#x' % key)
            want[key] = want.get(key, 0) + en
            entries += en
            exits += ex
    got, repairs = {}, 0
    for line in open(flat):
        if line.startswith('#'):
            if '; ' in line and ' repairs' in line:
                repairs = int(line.split('; ')[1].split()[0])
            continue
        f = line.split(None, 3)
        if len(f) < 4 or f[0] == 'CALLS':
            continue
        name = f[3].split('  ')[0].strip()
        key = key_of.get(name, name)
        label.setdefault(key, name)
        got[key] = got.get(key, 0) + int(f[0])
    bad = [k for k in set(want) | set(got) if want.get(k, 0) != got.get(k, 0)]
    for k in [k for k in bad if label[k] in late and got.get(k, 0) < want.get(k, 0)]:
        print('# %s: %d entries, dtrace --flat %d (called after its thread ended)' %
              (label[k], want.get(k, 0), got.get(k, 0)))
        bad.remove(k)
    for k in sorted(bad, key=str)[:20]:
        print('# %s: %d entries, dtrace --flat %d' % (label[k], want.get(k, 0), got.get(k, 0)))
    print('functions %d entries %d exits %d repairs %d wrong %d' %
          (len(want), entries, exits, repairs, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    args, late = sys.argv[1:], []
    while len(args) > 1 and args[0] == '--late':
        late.append(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    sys.exit(main(args[0], args[1:], late))
