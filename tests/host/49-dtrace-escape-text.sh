#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Text views go to a terminal: a comm or an event name from a map file that
# holds an escape sequence (ESC [ 2 J clears the screen) or bytes that are
# not UTF-8 must reach it escaped (\x1b, \xff), not raw.
. "$(dirname "$0")/dtrace-mktrace.sh"

# comm: ESC [ 2 J x
$MKTRACE trace.pid7.tid7 --user 7 7 --comm 1b5b324a78 \
	1000:$ENTRY:0x401000:0 2000:$USER1:5:6 3000:$EXIT:0x401000:0
printf 'event 1 clear\033[2Jme\377 value %%u\n' >trace.pid7.maps
dt trace.pid7.tid7
check "the user event's name and format from the map file: escaped" \
	'[ $rc -eq 0 ] && grep -qF "user:clear\\x1b[2Jme\\xff" out && ! grep -q "$(printf "\033")" out'
dt --calltree trace.pid7.tid7
check "--calltree: the comm in the thread's heading, escaped" \
	'[ $rc -eq 0 ] && grep -qF "(pid 7, \\x1b[2Jx)" out && ! grep -q "$(printf "\033")" out'
done_testing
