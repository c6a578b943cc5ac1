#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a collector's machine directory against the fake device's counts.

    collect-count.py MACHINE_DIR STATS [--prefix | --kernel]

STATS has the fake device's "CPU WRITTEN LOST" lines: the records it
produced into each CPU's buffer and those it dropped (buffer full).  The
trace files are decoded here, independently of ktrace's library: a 512-byte
header, then 24-byte records (u64 tsc, u32 event, tid, arg1, arg2).  Record
number i of a CPU has arg1 = i.  Checked per CPU: the events' arg1 strictly
increase (nothing twice, nothing out of order) and, unless --prefix (a
sender killed: what was delivered is a beginning), events plus the counts
of the lost markers equal written plus lost: every record delivered or
counted.  --kernel: a real kernel's records (scripts/check-stock-net.sh),
STATS has ktrace's own "CPU RECORDS LOST" (records read, the kernel's lost
counter): time stamps must not go back, and events plus the lost markers'
counts equal RECORDS plus LOST less the marker records among RECORDS.
Prints one line per CPU; exit 1 on any mismatch.
"""
import struct
import sys

META_LOST = 1 << 24


def decode(path, kernel=False):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'KTRACE\r\n':
        raise SystemExit(f'{path}: not a trace file')
    body = data[512:]
    events, markers, last, ok, nr_markers, last_tsc = 0, 0, -1, True, 0, 0
    for off in range(0, len(body) - len(body) % 24, 24):
        tsc, ev, _tid, a1, a2 = struct.unpack_from('<QIIII', body, off)
        if kernel:
            ok = ok and tsc >= last_tsc
            last_tsc = tsc
        if ev == META_LOST:
            markers += a1 | a2 << 32
            nr_markers += 1
            continue
        if not kernel and a1 <= last:
            ok = False
        last = a1
        events += 1
    if kernel:
        return events, markers, nr_markers, ok, len(body) % 24
    return events, markers, last, ok, len(body) % 24


def main():
    mdir, stats = sys.argv[1], sys.argv[2]
    prefix = '--prefix' in sys.argv[3:]
    kernel = '--kernel' in sys.argv[3:]
    bad = 0
    for line in open(stats):
        cpu, written, lost = map(int, line.split())
        events, markers, last, ok, torn = decode(f'{mdir}/trace.cpu{cpu}', kernel)
        # --kernel: "last" is the number of marker records, among "written"
        expect = written + lost - (last if kernel else 0)
        good = ok and not torn and (prefix or events + markers == expect)
        print(f'cpu {cpu}: written {written} lost {lost}; file: events {events} '
              f'lost-counted {markers} {"markers" if kernel else "last"} {last} '
              f'{"in time order" if kernel else "increasing"} {ok} torn {torn}'
              f'{"" if good else "  MISMATCH"}')
        bad += not good
    sys.exit(1 if bad else 0)


main()
