#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A TCP proxy whose death cuts its connections (105-collect-faults).

    tcp-proxy.py LISTEN_PORT TARGET_PORT     (both on 127.0.0.1)
Prints "ready" once it listens; forwards each connection both ways.
"""
import selectors
import socket
import sys

lport, tport = int(sys.argv[1]), int(sys.argv[2])
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
            sel.register(a, selectors.EVENT_READ)
            sel.register(b, selectors.EVENT_READ)
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b''
        if data:
            peer[s].sendall(data)
            continue
        for x in (s, peer[s]):
            sel.unregister(x)
            x.close()
        del peer[peer[s]], peer[s]
