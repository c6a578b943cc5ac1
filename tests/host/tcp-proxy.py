#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A TCP proxy whose death cuts its connections (105-collect-faults).

    tcp-proxy.py LISTEN_PORT TARGET_PORT [DUMP]    (both on 127.0.0.1)
Prints "ready" once it listens; forwards each connection both ways.  With
DUMP, the bytes of the Nth connection go to DUMP.N.c2s (client to target)
and DUMP.N.s2c as well (what the wire carried: 110-collect-auth).
TCP_PROXY_DUP=K: the first connection's Kth ktnet message from the client
(64-byte header, the length at byte 12) is sent twice, the second time
right after itself: a message replayed on the path.
"""
import os
import selectors
import socket
import struct
import sys

lport, tport = int(sys.argv[1]), int(sys.argv[2])
dump = sys.argv[3] if len(sys.argv) > 3 else None
files = {}
nconn = 0
dup_at = int(os.environ.get('TCP_PROXY_DUP', '0'))
dup_buf, dup_seen, dup_src = b'', 0, None
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('127.0.0.1', lport))
ls.listen(16)
sel = selectors.DefaultSelector()
sel.register(ls, selectors.EVENT_READ)
peer = {}
print('ready', flush=True)
while True:
    for key, _ in sel.select():
        s = key.fileobj
        if s is ls:
            a, _ = ls.accept()
            b = socket.create_connection(('127.0.0.1', tport))
            peer[a], peer[b] = b, a
            if dup_at and dup_src is None:
                dup_src = a
            if dump:
                nconn += 1
                files[a] = open('%s.%d.c2s' % (dump, nconn), 'wb', buffering=0)
                files[b] = open('%s.%d.s2c' % (dump, nconn), 'wb', buffering=0)
            sel.register(a, selectors.EVENT_READ)
            sel.register(b, selectors.EVENT_READ)
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b''
        if data:
            if s in files:
                files[s].write(data)
            if s is dup_src and dup_seen < dup_at:
                # whole messages only, until the one sent twice has gone
                dup_buf += data
                data = b''
                while len(dup_buf) >= 64 and dup_seen < dup_at:
                    n = 64 + struct.unpack_from('<I', dup_buf, 12)[0]
                    if len(dup_buf) < n:
                        break
                    m, dup_buf = dup_buf[:n], dup_buf[n:]
                    dup_seen += 1
                    data += m + (m if dup_seen == dup_at else b'')
                if dup_seen >= dup_at:
                    data, dup_buf = data + dup_buf, b''
            peer[s].sendall(data)
            continue
        for x in (s, peer[s]):
            sel.unregister(x)
            x.close()
        del peer[peer[s]], peer[s]
