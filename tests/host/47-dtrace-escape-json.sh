#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# --format=perfetto-json names threads by their comm: with a `"` and bytes that
# are not UTF-8 in it, the JSON must still be valid (Python's json reads it
# as UTF-8, strictly) and name the thread with the quote in place.
. "$(dirname "$0")/dtrace-mktrace.sh"

# comm: a " b <0xff> <0x01> c
$MKTRACE trace.pid7.tid7 --user 7 7 --comm 612262ff0163 \
	1000:$ENTRY:0x401000:0 2000:$EXIT:0x401000:0
dt --format=perfetto-json trace.pid7.tid7
check "dtrace --format=perfetto-json runs" '[ $rc -eq 0 ]'
cat >check.py <<'PY'
import json, sys
doc = json.loads(open("out", "rb").read().decode("utf-8"))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
names = [e["args"]["name"] for e in events if e.get("name") == "thread_name"]
sys.exit(0 if any(n.startswith('a"b') and n.endswith("c") for n in names) else 3)
PY
python3 check.py 2>py.err
prc=$?
check "python json reads it as strict UTF-8, the thread named a\"b...c (exit $prc)" \
	'[ $prc -eq 0 ] || { sed "s/^/#   /" py.err; false; }'
done_testing
