#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Nothing lost without being counted in the file, on the fake device
# (ktrace-cli-fakedev.c) and a 64 KiB tmpfs.  Ground truth: the fake kernel's
# written and lost counts of each CPU (KTFAKE_STATS) and the raw records of
# the file (python reads them, not dtrace).
#   full disk   ktrace exits 1 naming the file; the file is whole records
#               and ends with a lost marker (no room for one more
#               record: it takes the last event's place); its events plus what
#               its markers count equal what the CPU wrote plus dropped;
#               the summary's lost count is the file's.
#   buffer full ktrace goes on, exit 0; the same sum holds for each file.
. "$(dirname "$0")/fakedev-common.sh"

# count FILE: "EVENTS LOST LAST_IS_MARKER" from the raw records
count() {
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
assert (len(data) - 512) % 24 == 0, 'not whole records'
recs = [struct.unpack_from('<QIIII', data, i) for i in range(512, len(data), 24)]
META_LOST = 1 << 24
events = sum(1 for r in recs if r[1] != META_LOST)
lost = sum(r[3] | r[4] << 32 for r in recs if r[1] == META_LOST)
print(events, lost, int(bool(recs) and recs[-1][1] == META_LOST))
PY
}
# sums CPU FILE: FILE holds or counts every record the fake CPU produced:
# its written and lost counts, which the fake writes to $T/stats at exit
sums() {
	local cpu=$1 f=$2 w l ev lost last
	read -r w l < <(awk -v c="$cpu" '$1 == c { print $2, $3 }' "$T/stats")
	read -r ev lost last < <(count "$f")
	check "$f: $ev events + $lost counted lost = $w written + $l dropped" \
		'[ -n "$w" ] && [ "$w" -gt 0 ] && [ $((ev + lost)) -eq $((w + l)) ]'
}
export KTFAKE_STATS=$T/stats

mkdir -p mnt
if ! mount -t tmpfs -o size=64k ktrace-lost mnt 2>/dev/null; then
	skip_all "cannot mount a tmpfs"
fi
trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT

KTFAKE_RATE=50000 fk -b 4096 -e sched -c 0 -o mnt/t -d 1
check "disk full: exit 1, the file named" \
	'[ $rc -eq 1 ] && has_err "ktrace: mnt/t.cpu0: No space left on device"'
read -r ev lost last < <(count mnt/t.cpu0)
check "... no room for one more record: a lost marker takes the last event's place" \
	'[ "$last" = 1 ] && [ "$lost" -gt 0 ] && has_err "takes the place of its last event"'
sums 0 mnt/t.cpu0
check "... the summary's lost count is the file's ($lost)" 'has_err "cpu 0: $((ev + 1)) records, $lost lost"'
rm -f mnt/*

umount mnt

# buffer full (16 records at 20000 a second): every drop in the files
KTFAKE_RATE=20000 fk -b 16 -e sched -c 0,1 -o l -d 0.3
check "buffer full: exit 0, drops reported" '[ $rc -eq 0 ] && has_err "records lost (buffer full)"'
sums 0 l.cpu0
sums 1 l.cpu1

done_testing
