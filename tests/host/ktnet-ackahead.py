#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A fake collector that acknowledges frames it never received (ktrace/ktnet.h).

    ktnet-ackahead.py SECONDS STATS_OUT

Listens on 127.0.0.1 (prints "port N"), takes one sender's connections one
after the other.  On the first, it waits a second after the HELLO (the
sender spools frames meanwhile, sending none) and then acknowledges frame 3
of the first stream in its answer to HELLO: a lie that would free frames
1-3 from the sender's spool unsent.  Otherwise it is honest: it keeps what
it received in order, acknowledges each frame and, after a reconnect, says
what it holds.  When every stream has ended (END) it writes "CPU RECORDS
LOST" per stream to STATS_OUT, the DATA headers' records and lost counts
summed: with the fake device's counts, every record delivered or counted.
A frame number that jumps is printed ("gap ...") and the connection closed.
The encoding is ktnet-hostile.py's (written from ktnet.h, not ktrace's code).
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


def main():
    deadline = time.time() + float(sys.argv[1])
    ls = K.listen_local()
    have, counted, ended, conns = {}, {}, set(), 0
    while time.time() < deadline and (not have or ended != set(have)):
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        conns += 1
        c.settimeout(max(deadline - time.time(), 0.1))
        try:
            typ, _s, _q, _l, _r, payload = K.read_msg(c)
            nr = struct.unpack_from('<I', payload, 72)[0]
            ids = struct.unpack_from('<%dI' % nr, payload, 608)
            for i in ids:
                have.setdefault(i, 0)
                counted.setdefault(i, 0)
            out = b''
            if conns == 1:
                time.sleep(1)
                out += K.hdr(K.ACK, stream=ids[0], seq=3)
                print('lied: ack 3 of cpu', ids[0], flush=True)
            else:
                out += b''.join(K.hdr(K.ACK, stream=i, seq=have[i]) for i in ids if have[i])
            c.sendall(out + K.hdr(K.ACK))
            lied = conns == 1
            while ended != set(have):
                typ, stream, seq, lost, records, _p = K.read_msg(c)
                if typ == K.DATA and lied:
                    # the sender took the lie: it holds them, as far as it knows
                    have[ids[0]] = max(have[ids[0]], 3)
                    lied = False
                if typ == K.DATA:
                    if seq == have[stream] + 1:
                        have[stream] = seq
                        counted[stream] += records + lost
                    elif seq > have[stream] + 1:
                        print('gap cpu %d: frame %d after %d' % (stream, seq, have[stream]),
                              flush=True)
                        break
                    c.sendall(K.hdr(K.ACK, stream=stream, seq=have[stream]))
                elif typ == K.END:
                    ended.add(stream)
        except (EOFError, OSError) as e:
            print('connection %d ended: %s' % (conns, e), flush=True)
        c.close()
    print('connections', conns, flush=True)
    with open(sys.argv[2], 'w') as f:
        for i in sorted(counted):
            f.write('%d %d\n' % (i, counted[i]))
    sys.exit(0 if have and ended == set(have) else 1)


if __name__ == '__main__':
    main()
