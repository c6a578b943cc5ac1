#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace -o runs as root, often in /tmp: a symbolic link planted where a
# trace file goes must not be followed (it would truncate the file it
# points to), and the trace files, which hold kernel addresses, are 0600.
. "$(dirname "$0")/fakedev-common.sh"

echo "precious" >victim
chmod 644 victim
ln -s victim t.cpu0
fk -c 0 -d 0.1 -o t
check "a planted link at BASE.cpu0: ktrace refuses, says why" \
	'[ $rc -ne 0 ] && has_err "ktrace: t.cpu0: exists and is not a regular file"'
check "... the link's target is untouched" '[ "$(cat victim)" = precious ] && [ -L t.cpu0 ]'

mkfifo f.cpu0
fk -c 0 -d 0.1 -o f
check "a FIFO at BASE.cpu0 is refused too (no hang)" \
	'[ $rc -ne 0 ] && [ $rc -lt 124 ] && has_err "exists and is not a regular file" && [ -p f.cpu0 ]'

umask 022
fk -c 0,1 -d 0.1 -o m
check "trace files are created 0600 whatever the umask" \
	'[ $rc -eq 0 ] && [ "$(stat -c %a m.cpu0)" = 600 ] && [ "$(stat -c %a m.cpu1)" = 600 ]'
ino=$(stat -c %i m.cpu0)
fk -c 0 -d 0.1 -o m
check "an old trace file is replaced (a new file, not rewritten in place)" \
	'[ $rc -eq 0 ] && [ "$(stat -c %s m.cpu0)" -ge 512 ]'
done_testing
