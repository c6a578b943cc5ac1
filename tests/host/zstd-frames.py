#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# zstd-frames.py FILE: the zstd frames of a compressed trace file, one line
# each: "OFFSET SIZE CONTENT" (file offset, compressed bytes, content size
# from the frame header, - if absent), from the frame and block headers as
# RFC 8878 lays them out.  Written from the RFC, not from libzstd, so that
# the tests check the frame layout ktrace writes with a reader of its own.
import struct
import sys

MAGIC = 0xFD2FB528


def frames(data):
    off = 0
    while off < len(data):
        start = off
        magic, = struct.unpack_from('<I', data, off)
        if magic & ~0xF == 0x184D2A50:          # skippable frame
            size, = struct.unpack_from('<I', data, off + 4)
            off += 8 + size
            yield start, off - start, 0
            continue
        if magic != MAGIC:
            raise ValueError('offset %d: not a zstd frame' % start)
        fhd = data[off + 4]
        off += 5
        fcs_flag, single, checksum, did_flag = fhd >> 6, fhd >> 5 & 1, fhd >> 2 & 1, fhd & 3
        if not single:
            off += 1                             # window descriptor
        off += (0, 1, 2, 4)[did_flag]
        fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
        content = None
        if fcs_size:
            content = int.from_bytes(data[off:off + fcs_size], 'little')
            if fcs_size == 2:
                content += 256
        off += fcs_size
        while True:
            hdr = int.from_bytes(data[off:off + 3], 'little')
            if off + 3 > len(data):
                raise ValueError('offset %d: frame cut short' % start)
            last, btype, bsize = hdr & 1, hdr >> 1 & 3, hdr >> 3
            off += 3 + (1 if btype == 1 else bsize)
            if last:
                break
        off += 4 if checksum else 0
        if off > len(data):
            raise ValueError('offset %d: frame cut short' % start)
        yield start, off - start, content


for start, size, content in frames(open(sys.argv[1], 'rb').read()):
    print(start, size, '-' if content is None else content)
