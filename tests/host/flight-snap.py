#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# flight-snap.py FILE: "MARKER FIRST LAST COUNT" of one flight snapshot
# file on the fake device (whose records number themselves in arg1): the
# lost marker's count, the first and last record numbers, how many; "bad
# WHY" if the records are not a lost marker and then numbers without a gap.
# Used by 37-ktrace-flight.sh and 101-ktrace-zstd.sh (after unzstd).
import struct
import sys

data = open(sys.argv[1], 'rb').read()[512:]
recs = [struct.unpack_from('<QIIII', data, i) for i in range(0, len(data), 24)]
META_LOST = 1 << 24
if not recs or recs[0][1] != META_LOST:
    print('bad no lost marker first')
    sys.exit()
marker = recs[0][3] | recs[0][4] << 32
nums = [r[3] for r in recs[1:]]
if any(r[1] == META_LOST for r in recs[1:]) or nums != list(range(nums[0], nums[0] + len(nums))):
    print('bad numbers with a gap')
    sys.exit()
print(marker, nums[0], nums[-1], len(nums))
