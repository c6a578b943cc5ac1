#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A forger at a collector with --key (110-collect-auth).

    ktnet-forge.py PORT HEADER_FILE CASE...

Each CASE on a connection of its own; prints "CASE PEER ANSWERS END": PEER
as the collector names it, ANSWERS the types of the messages it answered
with (comma-separated, "-" for none; REFUSE's reason after a colon), END
"closed" (the collector closed) or "open" (still open after 3 s).
  hello:NAME    a HELLO in clear as NAME, then DATA frame 1 (what would
                take NAME's files)
  auth:NAME     AUTH as NAME, then a PROOF of random bytes
  replay:FILE   FILE's bytes (a connection's, recorded by tcp-proxy.py) as
                they were: a handshake and the sealed messages after it
The wire format is written from ktnet.h (and ktnet-hostile.py's helpers).
"""
import importlib.util
import os
import socket
import struct
import sys
import time

spec = importlib.util.spec_from_file_location(
    'hostile', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ktnet-hostile.py'))
hostile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hostile)

AUTH, CHALLENGE, PROOF, REFUSE, SEALED = range(10, 15)


def answers(s):
    """The collector's answers until it closes (or 3 s pass)."""
    got, buf, end = [], b'', time.time() + 3
    s.settimeout(0.2)
    while time.time() < end:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            b = b''
        if not b:
            break
        buf += b
        while len(buf) >= 64:
            typ, length, seq = struct.unpack_from('<H', buf, 6)[0], \
                struct.unpack_from('<I', buf, 12)[0], struct.unpack_from('<Q', buf, 16)[0]
            if len(buf) < 64 + length:
                break
            got.append('%d:%d' % (typ, seq) if typ == REFUSE else str(typ))
            buf = buf[64 + length:]
    else:
        return got, 'open'
    return got, 'closed'


def main():
    port, header = int(sys.argv[1]), open(sys.argv[2], 'rb').read(512)
    for case in sys.argv[3:]:
        kind, _, arg = case.partition(':')
        s = hostile.connect(port)
        peer = '127.0.0.1:%d' % s.getsockname()[1]
        if kind == 'hello':
            s.sendall(hostile.hello(header, arg, [0]) +
                      hostile.msg(hostile.DATA, stream=0, seq=1, lost=7))
        elif kind == 'auth':
            s.sendall(hostile.msg(AUTH, arg.encode().ljust(64, b'\0') + os.urandom(32)))
            time.sleep(0.2)
            s.sendall(hostile.msg(PROOF, os.urandom(32)))
        elif kind == 'replay':
            s.sendall(open(arg, 'rb').read())
        got, end = answers(s)
        print(case, peer, ','.join(got) or '-', end, flush=True)
        s.close()


main()
