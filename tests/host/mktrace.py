#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mktrace: write one ktrace trace file exactly as a test describes it.

  mktrace.py FILE [--cpu N | --user PID TID] [--hz HZ] [--comm HEX]
             [--host NAME] [--ref-tsc TSC] [--ref-mono NS] EVENT...

An EVENT is TSC:CODE[:ARG1[:ARG2[:TID]]] (numbers in any Python base); CODE
is a full event code (group bit | sub << 24); TID defaults to the user
stream's thread, or 1.  --ref-tsc and --ref-mono are the header's
reference pair (TSC, CLOCK_MONOTONIC ns; default 0), for the common clock
of machine directories.  --comm is hex so that a test can put any bytes
there (a quote, bytes that are not UTF-8).  The header follows
lib/ktfile.h (struct ktfile_header), little-endian, 512 bytes.
"""
import argparse
import struct
import sys

p = argparse.ArgumentParser()
p.add_argument("file")
p.add_argument("--cpu", type=int, default=0)
p.add_argument("--user", nargs=2, type=int, metavar=("PID", "TID"))
p.add_argument("--hz", type=int, default=1000000000)
p.add_argument("--comm", default="")
p.add_argument("--host", default="mktrace")
p.add_argument("--ref-tsc", type=lambda x: int(x, 0), default=0)
p.add_argument("--ref-mono", type=lambda x: int(x, 0), default=0)
p.add_argument("events", nargs="*")
a = p.parse_intermixed_args()

cpu, flags, pid, tid = a.cpu, 1, 0, 0
if a.user:
    cpu, flags, (pid, tid) = -1, 1 | 2, a.user
comm = bytes.fromhex(a.comm)[:15]
hdr = b"KTRACE\r\n" + struct.pack("<IIIIiIIIQQQQII", 1, 512, 0x01020304, 24, cpu, flags,
                                   pid, tid, a.hz, a.ref_tsc, a.ref_mono, 1700000000000000000, 0xffffffff, 0)
hdr += b"6c0e3f8a-1d2b-4c5d-9e8f-0a1b2c3d4e5f".ljust(40, b"\0")
hdr += b"6.1.0".ljust(65, b"\0") + a.host.encode().ljust(65, b"\0")
hdr += b"mktrace".ljust(16, b"\0") + comm.ljust(16, b"\0")
hdr = hdr.ljust(512, b"\0")
assert len(hdr) == 512
recs = b""
for ev in a.events:
    f = [int(x, 0) for x in ev.split(":")] + [0, 0, tid or 1][len(ev.split(":")) - 2:]
    recs += struct.pack("<QIIII", f[0], f[1], f[4], f[2], f[3])
with open(a.file, "wb") as out:
    out.write(hdr + recs)
