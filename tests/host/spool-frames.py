#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A killed sender's spool, damaged here on purpose, and what the collector
made of it (ktrace/ktnet.h frames; 105-collect-faults.sh).

    spool-frames.py totals SPOOL   "CPU TOTAL 0" per stream, nothing changed
    spool-frames.py damage SPOOL   one frame's payload and another's header
    spool-frames.py flip SPOOL     bit 40 of one frame's number
    spool-frames.py renumber SPOOL the first frame's stream numbered from 2^40
    spool-frames.py count DIR EXPECT

A frame the kill cut short counts its records lost.  damage and flip print
"CPU TOTAL UNKNOWN" per stream: the frames' records
plus lost counts, as decoded before the damage, less the frame that can only
arrive as a lost marker of unknown count, and how many such markers (0/1);
what was damaged goes to stderr; renumber adds the
stream's frames and its last number, "CPU TOTAL UNKNOWN FRAMES LASTSEQ" (the
renumbered stream's numbers before 2^40 + 1 one frame of unknown count).  count checks a collector's machine
directory DIR against those lines: per CPU, events plus known lost counts
equal TOTAL, the unknown-count markers (arg1 = arg2 = 0xffffffff) UNKNOWN,
the fake device's counters (arg1) increasing; exits 1 on a mismatch.
"""
import glob
import os
import struct
import sys


def frames_of(spool):
    """(segment, offset, stream, seq, records + lost, payload length)"""
    frames = []
    for seg in sorted(glob.glob(os.path.join(spool, 'spool.*')),
                      key=lambda p: int(p.rsplit('.', 1)[1])):
        data = open(seg, 'rb').read()
        off = 0
        while off + 64 <= len(data):
            magic, _ver, typ, stream, length, seq, _first, _last, lost, records = \
                struct.unpack_from('<4sHHIIQQQQI', data, off)
            if magic != b'KTN\x01' or typ != 3:
                sys.exit(f'{seg}: no DATA frame at {off}')
            frames.append((seg, off, stream, seq, records + lost, length))
            off += 64 + length
    return frames


def expect(frames, gone):
    """per stream: its total less the frame @gone's, which is unknown"""
    total = {}
    for f in frames:
        total[f[2]] = total.get(f[2], 0) + f[4]
    for cpu in sorted(total):
        print(cpu, total[cpu] - (gone[4] if cpu == gone[2] else 0), int(cpu == gone[2]))


def totals(spool):
    total = {}
    for f in frames_of(spool):
        total[f[2]] = total.get(f[2], 0) + f[4]
    for cpu in sorted(total):
        print(cpu, total[cpu], 0)


def renumber(spool):
    frames = frames_of(spool)
    if not frames or any(f[3] < 1 for f in frames):
        sys.exit('no frames, or a frame numbered 0')
    per = {}	# cpu -> [records + lost, frames, last seq]
    for f in frames:
        p = per.setdefault(f[2], [0, 0, 0])
        p[0] += f[4]
        p[1] += 1
        p[2] = f[3]
    shift = frames[0][2]
    for f in frames:
        if f[2] == shift:
            with open(f[0], 'r+b') as fd:
                fd.seek(f[1] + 16)
                fd.write(struct.pack('<Q', f[3] + (1 << 40)))
    for cpu, (n, nr, last) in sorted(per.items()):
        if cpu == shift:
            print(cpu, n, 1, nr + 1, last + (1 << 40))
        else:
            print(cpu, n, 0, nr, last)


def damage(spool):
    frames = frames_of(spool)
    # two whole frames with records in the first segment, frames after them
    first = [f for f in frames if f[0] == frames[0][0] and f[5] > 0]
    if len(first) < 6 or len({f[2] for f in frames}) < 2:
        sys.exit('too few frames to damage: %d' % len(first))
    pay, head = first[1], first[3]
    with open(pay[0], 'r+b') as fd:	# the zstd frame's magic and size fields
        fd.seek(pay[1] + 64)
        fd.write(b'\xde\xad' * 4)
    with open(head[0], 'r+b') as fd:	# its magic, and its length field
        fd.seek(head[1])
        fd.write(b'XXXX')
        fd.seek(head[1] + 12)
        fd.write(struct.pack('<I', 0x7fffffff))
    expect(frames, head)
    print('# damaged: payload of cpu %d frame %d, header of cpu %d frame %d' %
          (pay[2], pay[3], head[2], head[3]), file=sys.stderr)


def flip(spool):
    frames = frames_of(spool)
    cpus = {f[2] for f in frames}
    # a frame with one of its stream's before it and every stream's after it
    pick = None
    for i, f in enumerate(frames):
        if (f[0] == frames[0][0] and any(g[2] == f[2] for g in frames[:i]) and
                {g[2] for g in frames[i + 1:] if g[0] == f[0]} == cpus):
            pick = f
            break
    if pick is None or len(cpus) < 2:
        sys.exit('no frame to flip among %d' % len(frames))
    with open(pick[0], 'r+b') as fd:	# bit 40 of its number
        fd.seek(pick[1] + 16)
        fd.write(struct.pack('<Q', pick[3] | 1 << 40))
    expect(frames, pick)
    print('# flipped: cpu %d frame %d -> %d' % (pick[2], pick[3], pick[3] | 1 << 40),
          file=sys.stderr)


def count(mdir, expect_file):
    bad = 0
    for line in open(expect_file):
        cpu, want, unknown = map(int, line.split())
        data = open(f'{mdir}/trace.cpu{cpu}', 'rb').read()[512:]
        events, lost, unk, last, ok = 0, 0, 0, -1, len(data) % 24 == 0
        for off in range(0, len(data) - len(data) % 24, 24):
            _tsc, ev, _tid, a1, a2 = struct.unpack_from('<QIIII', data, off)
            if ev == 1 << 24 and a1 == a2 == 0xffffffff:
                unk += 1
            elif ev == 1 << 24:
                lost += a1 | a2 << 32
            else:
                ok = ok and a1 > last
                last = a1
                events += 1
        good = ok and events + lost == want and unk == unknown
        print(f'cpu {cpu}: expect {want} unknown {unknown}; file: events {events} lost {lost} '
              f'unknown {unk} increasing {ok}{"" if good else "  MISMATCH"}')
        bad += not good
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    cmds = {'totals': totals, 'damage': damage, 'flip': flip, 'renumber': renumber}
    if len(sys.argv) == 3 and sys.argv[1] in cmds:
        cmds[sys.argv[1]](sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == 'count':
        count(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
