#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Messages start with the tool's name, taken from argv[0], which is the
# caller's to choose: an argv[0] of 8000 bytes and a long message (a file
# or option name of 10000 bytes) must give a cut message and the usual
# exit status, not overrun the 4 KiB message buffer (vmsg in lib/util.c).
# DTRACE= and KTRACE_RUN= test other builds.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
DTRACE=${DTRACE:-$ROOT/$O/tools/dtrace}
KTRACE_RUN=${KTRACE_RUN:-$ROOT/$O/tools/ktrace-run}
T=$(mktemp -d /tmp/argv0.XXXXXX)
trap 'rm -rf "$T"' EXIT

# run_argv0 PROGRAM ARGS...: exit status with argv[0] 8000 x's, stderr in $T/err
run_argv0() {
	python3 -c '
import subprocess, sys
p = subprocess.run(["x" * 8000] + sys.argv[2:], executable=sys.argv[1],
                   stderr=open(sys.argv[0] if False else "'"$T"'/err", "wb"))
print(p.returncode)' "$@"
}
for prog in "$DTRACE" "$KTRACE_RUN"; do
	name=$(basename "$prog")
	if [ ! -x "$prog" ]; then
		skip "$name: long argv[0]" "not built"
		continue
	fi
	long=$(printf '%010000d' 0 | tr 0 y)
	if [ "$name" = dtrace ]; then
		rc=$(run_argv0 "$prog" "$T/$(echo "$long" | cut -c1-300)")	# "...: File name too long"
	else
		rc=$(run_argv0 "$prog" "--$long")	# "NAME: unknown option ..."
	fi
	len=$(wc -c <"$T/err")
	[ "$rc" -gt 0 ] && [ "$rc" -lt 128 ] && [ "$len" -le 4096 ] &&
		grep -q "^xxxx.*: .*\(File name too long\|unknown option\)" "$T/err"
	ok $? "$name: argv[0] of 8000 bytes: an error (exit $rc), message cut to $len bytes"
done
done_testing
