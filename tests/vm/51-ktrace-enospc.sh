#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace on a full file system: nothing lost without being counted, run as
# root in the test VM (TAP): one CPU's 20000 user events recorded onto a
# 64 KiB tmpfs.  Ground truth: the kernel's written and lost counts of that
# CPU (ktrace -s) before and after, and the raw record count of the file.
#   - ktrace exits 1 and names the file and the error;
#   - the file is a header and whole records, readable by dtrace, and ends
#     with a lost marker;
#   - every record the CPU produced in the session is in the file or
#     counted by its lost markers: records - markers + lost = written +
#     dropped, exactly.
NAME=enospc
EVENTS=${EVENTS:-/tests/user-events}
. "$(dirname "$0")/tap-common.sh"
cpu_col() { "$KTRACE" -s | awk -v c="$cpu" -v k="$1" '$1 == c { print $k; exit }'; }
records() { echo $(( ($(stat -c %s "$1") - 512) / 24 )); }

cpu=$(($(grep -c ^processor /proc/cpuinfo) - 1))
mkdir -p "$T/small"
if ! mount -t tmpfs -o size=64k tmpfs "$T/small"; then
	skip_all "cannot mount a tmpfs"
fi
"$KTRACE" -e 0; "$KTRACE" -b 4096
w0=$(cpu_col 5)
l0=$(cpu_col 6)
"$KTRACE" -e user -c "$cpu" -o "$T/small/t" -- "$EVENTS" "$cpu" 0 20000 >"$T/out" 2>"$T/err"
rc=$?
w1=$(cpu_col 5)
l1=$(cpu_col 6)
f=$T/small/t.cpu$cpu
check "ktrace exits 1 and names the file" \
	'[ $rc -eq 1 ] && grep -q "$f: No space left on device" "$T/err"'
check "the file is a header and whole records" \
	'[ -f "$f" ] && [ $(( ($(stat -c %s "$f") - 512) % 24 )) -eq 0 ] && [ "$(records "$f")" -gt 100 ]'
"$DTRACE" "$f" >"$T/out" 2>>"$T/err"
rc=$?
check "dtrace reads it; it ends with a lost marker" \
	'[ $rc -eq 0 ] && tail -n 1 "$T/out" | grep -q "meta:lost"'
"$DTRACE" -S "$f" >"$T/sum" 2>>"$T/err"
set -- $(awk -v f="$f" '$NF == f { print $3, $4 }' "$T/sum")
lost=${1:-0} markers=${2:-0}
kept=$(( $(records "$f") - markers ))
check "kept $kept + lost $lost = written $((w1 - w0)) + dropped $((l1 - l0)) by the CPU" \
	'[ $((kept + lost)) -eq $((w1 - w0 + l1 - l0)) ]'
check "ktrace's summary counts them lost" 'grep -q "$lost lost" "$T/err"'
umount "$T/small"
"$KTRACE" -e 0; "$KTRACE" -b 65536
done_testing
