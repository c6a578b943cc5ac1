#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A fake collector that takes a sequence jump as the protocol allows it.

    ktnet-jump.py SECONDS RECORDINGS STATS_OUT

The rule (ktrace/ktnet.h, decided for the collector): a DATA frame whose
lost is KTNET_LOST_UNKNOWN may carry any seq above the stream's last; the
frames between are lost, how many records is not known.  Any other frame
must be the next number: a jump without it is printed ("gap ...") and the
connection closed, as a frame number already held is acknowledged again.
Listens on 127.0.0.1 (prints "port N") and takes connections one after the
other until RECORDINGS recordings (HELLO sessions) have ended every stream,
or SECONDS pass; says nothing of what it holds on a new connection beyond
its ACKs (a collector that starts from nothing).  Writes one line per
recording and stream to STATS_OUT, recordings in the order first seen:
"REC CPU KNOWN UNKNOWN FRAMES LASTSEQ" (records plus known lost counts,
frames of an unknown count, DATA frames taken, the last number).  The
encoding is ktnet-hostile.py's (written from ktnet.h, not ktrace's code).
"""
import importlib.util
import os
import socket
import struct
import sys
import time

spec = importlib.util.spec_from_file_location(
    'hostile', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ktnet-hostile.py'))
K = importlib.util.module_from_spec(spec)
spec.loader.exec_module(K)
UNKNOWN = (1 << 64) - 1


def main():
    deadline = time.time() + float(sys.argv[1])
    want = int(sys.argv[2])
    ls = K.listen_local()
    recs = {}	# session -> {cpu: [known, unknown, frames, lastseq, ended]}
    order = []

    def complete():
        return sum(all(v[4] for v in r.values()) for r in recs.values())

    while time.time() < deadline and complete() < want:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        c.settimeout(max(deadline - time.time(), 0.1))
        try:
            _t, _s, _q, _l, _r, payload = K.read_msg(c)
            session, nr = struct.unpack_from('<QI', payload, 64)
            ids = struct.unpack_from('<%dI' % nr, payload, 608)
            if session not in recs:
                recs[session] = {i: [0, 0, 0, 0, False] for i in ids}
                order.append(session)
            rec = recs[session]
            c.sendall(b''.join(K.hdr(K.ACK, stream=i, seq=rec[i][3]) for i in ids
                               if rec[i][3]) + K.hdr(K.ACK))
            while not all(v[4] for v in rec.values()):
                typ, stream, seq, lost, records, _p = K.read_msg(c)
                if typ == K.DATA:
                    st = rec[stream]
                    if seq > st[3] + 1 and lost != UNKNOWN:
                        print('gap cpu %d: frame %d after %d, lost %d' %
                              (stream, seq, st[3], lost), flush=True)
                        break
                    if seq > st[3]:
                        st[3] = seq
                        st[2] += 1
                        st[0] += records + (0 if lost == UNKNOWN else lost)
                        st[1] += lost == UNKNOWN
                    c.sendall(K.hdr(K.ACK, stream=stream, seq=st[3]))
                elif typ == K.END:
                    rec[stream][4] = True
        except (EOFError, OSError) as e:
            print('connection ended: %s' % e, flush=True)
        c.close()
    with open(sys.argv[3], 'w') as f:
        for n, session in enumerate(order):
            for cpu, v in sorted(recs[session].items()):
                f.write('%d %d %d %d %d %d\n' % (n, cpu, v[0], v[1], v[2], v[3]))
    sys.exit(0 if complete() >= want else 1)


if __name__ == '__main__':
    main()
