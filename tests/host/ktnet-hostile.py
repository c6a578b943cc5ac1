#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A hostile ktrace sender: crafted ktnet messages (ktrace/ktnet.h) to a collector.

    ktnet-hostile.py PORT HEADER_FILE CASE...

Each CASE runs on a connection of its own and prints "CASE PEER" (PEER as
the collector names it, 127.0.0.1:LOCALPORT) so the test can find the
collector's message about it; cases of many connections (mem:, names:,
hello:) print what they did instead (see each).
HEADER_FILE: a real trace file, whose first 512 bytes are the trace header
a HELLO carries.  The wire format is written here from ktnet.h, not taken
from ktrace's code.
"""
import os
import select
import socket
import struct
import sys
import time

MAGIC = b'KTN\x01'
HELLO, ACK, DATA, BEACON, FILE, PROBE, PROBE_REPLY, CLOCK, END = range(1, 10)
NONE = 0xffffffff


def hdr(typ, stream=NONE, length=0, seq=0, first=0, last=0, lost=0, records=0,
        magic=MAGIC, version=1):
    h = magic + struct.pack('<HHIIQQQQI', version, typ, stream, length, seq, first, last,
                            lost, records)
    return h + bytes(64 - len(h))


def msg(typ, payload=b'', **kw):
    return hdr(typ, length=len(payload), **kw) + payload


def hello(header, name, ids, session=0x1234):
    if isinstance(name, str):
        name = name.encode()
    p = name[:64].ljust(64, b'\0') + struct.pack('<QII', session, len(ids), 0)
    p += header[:512] + bytes(16)
    p += b''.join(struct.pack('<I', i) for i in ids)
    return msg(HELLO, p)


def zstd_rle(content_size, blocks, byte=0):
    """A zstd frame declaring @content_size, of RLE blocks of (size, last)."""
    # frame header: magic, FHD = single segment, 8-byte content size
    f = struct.pack('<I', 0xFD2FB528) + bytes([0xE0]) + struct.pack('<Q', content_size)
    for i, size in enumerate(blocks):
        last = i == len(blocks) - 1
        bh = last | (1 << 1) | (size << 3)	# type 1: RLE
        f += struct.pack('<I', bh)[:3] + bytes([byte])
    return f


def zstd_raw(content):
    """A zstd frame of @content in raw blocks (stored, not packed)."""
    f = struct.pack('<I', 0xFD2FB528) + bytes([0xE0]) + struct.pack('<Q', len(content))
    blocks = [content[i:i + (128 << 10)] for i in range(0, len(content), 128 << 10)] or [b'']
    for i, b in enumerate(blocks):
        f += struct.pack('<I', (i == len(blocks) - 1) | (len(b) << 3))[:3] + b
    return f


def read_exact(s, n):
    """n bytes from s, or EOFError at its end"""
    buf = b''
    while len(buf) < n:
        got = s.recv(n - len(buf))
        if not got:
            raise EOFError
        buf += got
    return buf


def read_msg(s):
    """one message: (type, stream, seq, lost, records, payload)"""
    h = read_exact(s, 64)
    _ver, typ, stream, length, seq, first, last, lost, records = \
        struct.unpack_from('<HHIIQQQQI', h, 4)
    return typ, stream, seq, lost, records, read_exact(s, length) if length else b''


def listen_local():
    """a fake collector's socket on 127.0.0.1, its port printed ("port N")"""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', 0))
    ls.listen(4)
    ls.settimeout(1)
    print('port', ls.getsockname()[1], flush=True)
    return ls

def reply(s, secs=5):
    """The next message from the collector: (type, stream, seq), or None if closed."""
    s.settimeout(secs)
    buf = b''
    try:
        while len(buf) < 64:
            b = s.recv(64 - len(buf))
            if not b:
                return None
            buf += b
    except (socket.timeout, OSError):
        return None
    typ, stream, _, seq = struct.unpack_from('<HIIQ', buf, 6)
    return typ, stream, seq


def connect(port, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(('127.0.0.1', port))
    return s


def drain(s, secs=1.0):
    """Read until the collector closes (or @secs): True if it closed."""
    s.settimeout(secs)
    end = time.time() + secs
    try:
        while time.time() < end:
            if not s.recv(65536):
                return True
    except socket.timeout:
        return False
    except OSError:
        return True
    return False


def acks(s):
    """The ACKs after a HELLO, up to the one for NONE: 'stream:seq' each."""
    got, buf = [], b''
    s.settimeout(5)
    while True:
        while len(buf) < 64:
            b = s.recv(4096)
            if not b:
                return got + ['closed']
            buf += b
        typ, stream, _, seq = struct.unpack_from('<HIIQ', buf, 6)
        buf = buf[64:]
        if typ == ACK and stream == NONE:
            return got
        got.append('%d:%d' % (stream, seq))


def mem_case(port, header, n):
    """n connections each announcing a DATA frame of 64 MiB and sending all
    of it but its last byte, as fast as the collector takes it, until no
    connection moved for 2 s: prints "mem sent BYTES" (what the collector
    read, at most, beside the kernel's socket buffers)."""
    size = 64 << 20
    conns, left = [], []
    for i in range(n):
        s = connect(port)
        s.sendall(hello(header, 'mem%d' % i, [0], session=0x4d454d) +
                  hdr(DATA, stream=0, length=size, seq=1, records=1))
        s.setblocking(False)
        conns.append(s)
        left.append(size - 1)
    chunk, sent, last_move = bytes(1 << 16), 0, time.time()
    while time.time() - last_move < 2 and any(left):
        moved = False
        for i, s in enumerate(conns):
            if not left[i]:
                continue
            try:
                k = s.send(chunk[:min(len(chunk), left[i])])
            except BlockingIOError:
                continue
            except OSError:
                left[i] = 0
                continue
            left[i] -= k
            sent += k
            moved = True
        if moved:
            last_move = time.time()
        else:
            time.sleep(0.01)
    print('mem sent', sent, flush=True)
    return conns


def main():
    port, header = int(sys.argv[1]), open(sys.argv[2], 'rb').read(512)
    held, drip, bigdrip = [], [], []
    for case in sys.argv[3:]:
        if case.startswith('seqs:'):
            # seqs:NAME:SPEC: a HELLO (session 0x1234, stream 0), then a DATA
            # frame of one record for each number in SPEC (a comma list; "Nu":
            # frame N with @lost KTNET_LOST_UNKNOWN), each waited for;
            # prints "seqs NAME HELLO-ACKS / what came back for each"
            _, name, spec = case.split(':')
            s = connect(port)
            s.sendall(hello(header, name, [0]))
            got, res = acks(s), []
            for f in spec.split(','):
                unknown = f.endswith('u')
                s.sendall(msg(DATA, zstd_rle(24, [24]), stream=0, seq=int(f.rstrip('u')),
                              records=1, lost=(1 << 64) - 1 if unknown else 0))
                r = reply(s)
                res.append('closed' if r is None else 'ack:%d' % r[2] if r[0] == ACK else
                           'type%d' % r[0])
            print('seqs', name, ' '.join(got) or '-', '/', ' '.join(res), flush=True)
            s.close()
            continue
        if case.startswith('file:'):
            # file:NAME:SIZE:BYTE: a HELLO, then a FILE .kallsyms of SIZE bytes
            # BYTE, then a PROBE whose reply says the FILE was taken; prints
            # "file NAME done" or "file NAME closed"
            _, name, size, byte = case.split(':')
            size = int(size)
            s = connect(port)
            s.sendall(hello(header, name, [0]))
            acks(s)
            s.sendall(msg(FILE, b'.kallsyms\0' + zstd_rle(size, [128 << 10] * (size >> 17) +
                                                          [size & ((128 << 10) - 1)],
                                                          int(byte))) + hdr(PROBE))
            print('file', name, 'done' if reply(s) else 'closed', flush=True)
            s.close()
            continue
        if case.startswith('streams:'):
            # streams:NAME:N: a HELLO of N streams, kept open to the end (its
            # files held); prints "streams NAME answered" or "... closed"
            _, name, n = case.split(':')
            s = connect(port)
            s.sendall(hello(header, name, list(range(int(n)))))
            got = acks(s)
            print('streams', name, 'closed' if 'closed' in got else 'answered', flush=True)
            held.append(s)
            continue
        if case.startswith('bigdrip:'):
            # bigdrip:NAME: a HELLO, then a DATA header of 64 MiB whose payload
            # comes at 80 KiB/s, to the end (HOSTILE_HOLD)
            s = connect(port)
            s.sendall(hello(header, case[8:], [0]) +
                      hdr(DATA, stream=0, length=64 << 20, seq=1, records=1))
            s.setblocking(False)
            bigdrip.append(s)
            continue
        if case.startswith('bigdata:'):
            # bigdata:NAME:RECORDS: a HELLO, then one DATA frame of RECORDS
            # records in raw zstd blocks (RECORDS x 24 bytes of payload);
            # prints "bigdata NAME acked SECONDS" or "bigdata NAME not acked"
            _, name, nrec = case.split(':')
            t0 = time.time()
            s = connect(port)
            s.sendall(hello(header, name, [0]))
            acks(s)
            s.sendall(msg(DATA, zstd_raw(bytes(24 * int(nrec))), stream=0, seq=1,
                          records=int(nrec)))
            r = reply(s, 60)
            print('bigdata', name, 'acked %.1f' % (time.time() - t0)
                  if r and r[0] == ACK and r[2] == 1 else 'not acked', flush=True)
            s.close()
            continue
        if case.startswith('mem:'):
            # mem:N: N connections holding 64 MiB frames; kept open until
            # the end, so the test can look at the collector meanwhile
            held_mem = mem_case(port, header, int(case[4:]))
            time.sleep(float(os.environ.get('HOSTILE_MEM_HOLD', '1')))
            for s in held_mem:
                s.close()
            continue
        if case.startswith('names:'):
            # names:K:S: K machines of S streams each, one after the other
            # on a connection of its own, each closed after the ACKs;
            # prints "names ACKED" (the HELLOs answered)
            k, nstreams = map(int, case[6:].split(':'))
            answered = 0
            for i in range(k):
                try:
                    s = connect(port)
                    s.sendall(hello(header, 'fd%d' % i, list(range(nstreams))))
                    answered += 'closed' not in acks(s)
                    s.close()
                except OSError:
                    pass
            print('names', answered, flush=True)
            continue
        if case.startswith('hello:'):
            # hello:NAME: a HELLO of session 0x1234 and stream 0, a DATA
            # frame of no records after the ones acknowledged, END; prints
            # "hello NAME ACKS" (the ACKs before NONE)
            s = connect(port)
            s.sendall(hello(header, case[6:], [0]))
            got = acks(s)
            seq = int(got[0].split(':')[1]) + 1 if got and got[0] != 'closed' else 1
            s.sendall(msg(DATA, stream=0, seq=seq) + msg(END, stream=0, seq=seq))
            drain(s, 0.5)
            print('hello', case[6:], ' '.join(got) or '-', flush=True)
            s.close()
            continue
        s = connect(port, rcvbuf=4096 if case == 'flood' else None)
        print(case, '127.0.0.1:%d' % s.getsockname()[1], flush=True)
        out = b''
        if case == 'magic':
            out = hdr(PROBE, magic=b'GET ')
        elif case == 'version':
            out = hdr(PROBE, version=7)
        elif case == 'type':
            out = hdr(77)
        elif case == 'huge':
            out = hdr(DATA, length=0xffffffff)
        elif case == 'bighello':
            out = hdr(HELLO, length=608 + 4 * 9000)
        elif case == 'probepayload':
            out = msg(PROBE, b'x' * 100)
        elif case == 'streamid':
            out = hdr(BEACON, stream=1 << 20)
        elif case == 'manyrecords':
            out = hdr(DATA, stream=0, length=10, seq=1, records=(1 << 22) + 1)
        elif case.startswith('name:'):
            name = {'dotdot': '../evil', 'slash': 'a/b', 'dot': '.', 'empty': '',
                    'abs': '/tmp/evil', 'ctrl': 'a\nb\x1b[31m', 'hidden': '.previous',
                    'long': 'x' * 64}[case[5:]]
            out = hello(header, name, [0])
        elif case == 'dupids':
            out = hello(header, 'dup', [0, 0])
        elif case == 'bigid':
            out = hello(header, 'bigid', [0, 9000])
        elif case == 'noids':
            out = hello(header, 'noids', [])
        elif case == 'hellocount':
            out = hello(header, 'count', [0, 1])[:-4]	# says 2 streams, carries 1
            out = out[:12] + struct.pack('<I', 608 + 4) + out[16:]
        elif case == 'badheader':
            out = hello(b'NOTATRACE' + header[9:], 'badhdr', [0])
        elif case == 'beforehello':
            out = msg(DATA, stream=0, seq=1)
        elif case == 'seqjump':
            out = hello(header, 'h1', [0]) + msg(DATA, stream=0, seq=5)
        elif case == 'notstream':
            out = hello(header, 'h2', [0]) + msg(DATA, stream=7, seq=1)
        elif case == 'bomb':
            # 10 records (240 bytes) claimed; the frame says 1 GiB
            out = hello(header, 'h3', [0]) + msg(DATA, zstd_rle(1 << 30, [1 << 17]),
                                                stream=0, seq=1, records=10)
        elif case == 'liar':
            # says 240 bytes, its block makes 128 KiB
            out = hello(header, 'h3', [0]) + msg(DATA, zstd_rle(240, [1 << 17]),
                                                stream=0, seq=1, records=10)
        elif case == 'files':
            # left out, the connection kept: a file name that is a path, a
            # bomb, a frame of unknown size; then a bad DATA closes it
            out = hello(header, 'h4', [0])
            out += msg(FILE, b'/../../escaped\0' + zstd_rle(3, [3]))
            out += msg(FILE, b'.kallsyms\0' + zstd_rle(1 << 40, [1 << 17]))
            out += msg(FILE, b'.irqs\0' + zstd_rle(1 << 40, [1 << 17])[:5] + b'\x00')
            out += msg(FILE, b'.probes')	# no NUL, no frame
            out += msg(DATA, stream=0, seq=9)
        elif case == 'twohello':
            # a second name on one connection: refused (the first machine
            # must not keep pointing at the connection once it is closed)
            out = hello(header, 'h5', [0]) + hello(header, 'h6', [0])
        elif case == 'twohello-back':
            # the first name again, from a new connection (after twohello)
            out = hello(header, 'h5', [0]) + msg(DATA, stream=0, seq=5)
        elif case == 'session0':
            out = hello(header, 'h7', [0], session=0)
        elif case == 'flood':
            # probes, never reading the replies
            out = hello(header, 'flood', [0]) + msg(PROBE) * 400000
        elif case == 'slowloris':
            # half a message, then silence: must not hold up anyone
            s.sendall(hello(header, 'slow', [0]) + hdr(DATA, stream=0, length=1000,
                                                    seq=1, records=1)[:40])
            held.append(s)
            continue
        elif case == 'silent':
            held.append(s)	# connected, nothing sent
            continue
        elif case == 'bigbeforehello':
            # a header announcing 64 MiB before any HELLO: closed at once,
            # not read (nor its memory reserved)
            out = hdr(DATA, stream=0, length=64 << 20, seq=1, records=1)
        elif case == 'drip':
            # a 64 MiB frame announced, then a byte a second: alive, but
            # holding payload memory for ever unless a rate is asked
            s.sendall(hello(header, 'drip', [0]) + hdr(DATA, stream=0, length=64 << 20,
                                                       seq=1, records=1) + b'x' * 1000)
            drip.append(s)
            continue
        else:
            raise SystemExit('ktnet-hostile.py: no case ' + case)
        try:
            s.sendall(out)
        except OSError:
            pass	# closed by the collector mid-way: what some cases expect
        closed = drain(s, 2.0)
        print(case, 'closed' if closed else 'open', flush=True)
        s.close()
    # the held ones waited on together; a drip connection gets a byte a second
    hold = float(os.environ.get('HOSTILE_HOLD', '0'))
    end, closed = time.time() + hold, set()
    # a bigdrip one gets 8 KiB each tenth of a second
    tick = 0
    while time.time() < end and len(closed) < len(held) + len(drip) + len(bigdrip):
        for s in (drip if tick % 10 == 0 else []) + bigdrip:
            if s not in closed:
                try:
                    s.send(b'x' if s in drip else bytes(8 << 10))
                except BlockingIOError:
                    pass
                except OSError:
                    closed.add(s)
        tick += 1
        live = [s for s in held + drip + bigdrip if s not in closed]
        if not live:
            break
        for s in select.select(live, [], [], 0.1)[0]:
            try:
                if not s.recv(65536):
                    closed.add(s)
            except OSError:
                closed.add(s)
    for s in held:
        print('held', 'closed' if s in closed else 'open', flush=True)
    for s in drip:
        print('drip', 'closed' if s in closed else 'open', flush=True)
    for s in bigdrip:
        print('bigdrip', 'closed' if s in closed else 'open', flush=True)

if __name__ == '__main__':
    main()
