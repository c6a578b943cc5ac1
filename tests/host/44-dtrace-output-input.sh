#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `dtrace -o t.cpu* ...`: the shell makes t.cpu0 the output and t.cpu1 the
# input, or `-o` names an input by another name.  dtrace must refuse to
# write over any of its inputs (compared by device and inode), and must not
# write through a symbolic link planted where the output goes.
. "$(dirname "$0")/dtrace-mktrace.sh"

$MKTRACE t.cpu0 --cpu 0 1000:$SWITCH:1:2
$MKTRACE t.cpu1 --cpu 1 2000:$SWITCH:3:4
cp t.cpu0 orig.cpu0
dt -o t.cpu0 t.cpu1 t.cpu0
check "-o names an input: refused" '[ $rc -ne 0 ] && grep -q "t.cpu0: is one of the input files" err'
check "... the input is intact" 'cmp -s t.cpu0 orig.cpu0'
ln t.cpu0 hard
dt -o hard t.cpu0 t.cpu1
check "-o is a hard link to an input: refused, input intact" \
	'[ $rc -ne 0 ] && cmp -s t.cpu0 orig.cpu0'
mkdir d && ln -s ../t.cpu1 d/out
dt -o d/out t.cpu0
check "-o is a symbolic link: not followed" \
	'[ $rc -ne 0 ] && grep -q "symbolic link" err && [ "$(head -c 6 t.cpu1)" = KTRACE ]'
umask 022
dt -o new.txt t.cpu0 t.cpu1
check "a new -o file: written, 0600" \
	'[ $rc -eq 0 ] && grep -q "sched:switch" new.txt && [ "$(stat -c %a new.txt)" = 600 ]'
done_testing
