#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A map file is the traced program's, and so are the names in it: a FIFO
# where the map file goes, or an object line naming a FIFO or a device,
# must not hang dtrace or make it read the device.  Only regular files are
# read, opened without blocking; the addresses stay numbers, with a warning.
. "$(dirname "$0")/dtrace-mktrace.sh"

$MKTRACE trace.pid7.tid7 --user 7 7 1000:$ENTRY:0x401000:0 2000:$EXIT:0x401000:0
mkfifo trace.pid7.maps
dt trace.pid7.tid7
check "the map file is a FIFO: no hang, the calls still print" \
	'[ $rc -eq 0 ] && grep -q "enter 401000" out'

rm trace.pid7.maps
mkfifo obj.fifo
printf 'snapshot 1\nobject 0 401000 402000 - %s/obj.fifo\n' "$TMP" >trace.pid7.maps
dt trace.pid7.tid7
check "an object that is a FIFO: no hang, not read" \
	'[ $rc -eq 0 ] && grep -q "obj.fifo: not a regular file" err'

printf 'snapshot 1\nobject 0 401000 402000 - /dev/zero\n' >trace.pid7.maps
dt trace.pid7.tid7
check "an object that is a device (/dev/zero): not read" \
	'[ $rc -eq 0 ] && grep -q "/dev/zero: not a regular file" err'
done_testing
