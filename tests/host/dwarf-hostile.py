#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# dwarf-hostile.py IN OUT CASE: a copy of IN (tests/host/117's program,
# g++ -gdwarf-4, one CU, DW_FORM_ref4) with one DW_AT_type of its DWARF
# made to point back, making a type that contains itself:
#   pointer     the pointer to struct D points to itself
#   const       the const of struct S is a const of itself
#   inherit     struct D inherits from D
#   anonymous   struct S's anonymous member is of type S
# The DIEs are found by readelf's dump (the attribute's offset in
# .debug_info), the 4 bytes patched in place.
import re
import subprocess
import sys

src, dst, case = sys.argv[1:4]
dump = subprocess.run(['readelf', '--debug-dump=info', src], check=True,
                      capture_output=True, text=True).stdout
dies = []  # [offset, tag, name, type_attr_offset, type_target]
for line in dump.splitlines():
    m = re.match(r'\s*<\d+><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)', line)
    if m:
        dies.append([int(m[1], 16), m[2], None, None, None])
        continue
    m = re.match(r'\s*<([0-9a-f]+)>\s+DW_AT_(name|type)\s*:\s*(.*)', line)
    if m and dies:
        if m[2] == 'name':
            dies[-1][2] = m[3].split(': ')[-1].strip()
        else:
            dies[-1][3] = int(m[1], 16)
            dies[-1][4] = int(m[3].strip('<>'), 16)


def struct(name):
    return next(d for d in dies if d[1] == 'DW_TAG_structure_type' and d[2] == name)


D, S = struct('D'), struct('S')
if case == 'pointer':
    die = next(d for d in dies if d[1] == 'DW_TAG_pointer_type' and d[4] == D[0])
    target = die[0]
elif case == 'const':
    die = next(d for d in dies if d[1] == 'DW_TAG_const_type' and d[4] == S[0])
    target = die[0]
elif case == 'inherit':
    die = next(d for d in dies if d[1] == 'DW_TAG_inheritance' and D[0] < d[0] < S[0])
    target = D[0]
elif case == 'anonymous':
    die = next(d for d in dies if d[1] == 'DW_TAG_member' and d[2] is None and S[0] < d[0])
    target = S[0]
else:
    sys.exit('dwarf-hostile.py: unknown case ' + case)

hdr = subprocess.run(['readelf', '-W', '-S', src], check=True, capture_output=True,
                     text=True).stdout
sec = re.search(r'\]\s+\.debug_info\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)', hdr)
data = bytearray(open(src, 'rb').read())
at = int(sec[1], 16) + die[3]
assert int.from_bytes(data[at:at + 4], 'little') == die[4], 'not a ref4 at the attribute'
data[at:at + 4] = target.to_bytes(4, 'little')   # the CU starts at 0
open(dst, 'wb').write(data)
