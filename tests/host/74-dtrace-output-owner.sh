#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Where dtrace writes (-o FILE, --format=ctf -o DIR) may have been planted
# by another user in a directory all can write (/tmp): the output holds
# kernel addresses, and root truncating a file links lead to is a classic.
#  - another user's regular file, FIFO or directory: refused with a message
#    naming it, the planted thing unchanged (content, mtime), and a FIFO
#    not opened (strace: only O_PATH), so nothing blocks;
#  - a symbolic link, a hard link (a file with other links): refused;
#  - your own existing regular file: written over (as any tool does);
#    a new file: created 0600 with O_EXCL; a character device such as
#    /dev/null: written;
#  - --format=ctf -o DIR: an existing DIR must be yours, and nobody
#    else's to write; a new one is made 0700.
# Run as root (chown to nobody); skipped otherwise.
. "$(dirname "$0")/dtrace-mktrace.sh"

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
	skip_all "needs root and a user nobody to plant files as"
fi
have_strace=false
command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null && have_strace=true

$MKTRACE t.cpu0 --cpu 0 1000:$SWITCH:1:2 2000:$SWITCH:3:4
chmod 1777 "$TMP"
# same FILE SAVED: FILE unchanged (content and mtime) since SAVED was taken
same() { cmp -s "$1" "$2" && [ "$(stat -c %Y.%s "$1")" = "$(cat "$2.stamp")" ]; }
save() { cp "$1" "$2" && stat -c %Y.%s "$1" >"$2.stamp"; }

echo "planted by nobody" >planted
chown nobody planted
touch -d @1000000000 planted
save planted planted.orig
dt -o planted t.cpu0
check "-o another user's file: refused, naming it" \
	'[ $rc -ne 0 ] && grep -q "planted: .*another user" err'
check "... the file is unchanged" 'same planted planted.orig'

mkfifo fifo && chown nobody fifo
if $have_strace; then
	timeout -k 2 20 strace -f -qq -e trace=open,openat -o trace.log \
		"$DTRACE" -o fifo t.cpu0 >out 2>err
	rc=$?
	check "-o another user's FIFO: refused at once (no reader needed)" \
		'[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "fifo: " err'
	check "... and not opened (only O_PATH, or O_EXCL failing with EEXIST)" \
		'! grep "\"fifo\"" trace.log | grep -v O_PATH | grep -qv "O_EXCL.*EEXIST"'
else
	dt -o fifo t.cpu0
	check "-o another user's FIFO: refused at once (no reader needed)" \
		'[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "fifo: " err'
fi

echo "root's" >victim
save victim victim.orig
ln victim hard
dt -o hard t.cpu0
check "-o a hard link (a file with other links): refused" \
	'[ $rc -ne 0 ] && grep -q "hard: .*link" err && same victim victim.orig'
save victim victim.orig
ln -s victim soft
dt -o soft t.cpu0
check "-o a symbolic link: refused" \
	'[ $rc -ne 0 ] && grep -q "soft: .*symbolic link" err && same victim victim.orig'

echo "my old output, longer than what comes now ........................" >mine
chmod 644 mine
dt -o mine t.cpu0
check "-o your own existing file: written over, nothing of the old left" \
	'[ $rc -eq 0 ] && [ "$(grep -c sched:switch mine)" -eq 2 ] && ! grep -q "old output" mine'
umask 022
dt -o new.txt t.cpu0
check "-o a new file: created 0600" \
	'[ $rc -eq 0 ] && [ "$(stat -c %a new.txt)" = 600 ] && grep -q sched:switch new.txt'
dt -o /dev/null t.cpu0
check "-o /dev/null (a character device): written" '[ $rc -eq 0 ] && [ ! -s err ]'

# CTF into a directory
mkdir planted.ctf && chown nobody planted.ctf && chmod 755 planted.ctf
dt --format=ctf -o planted.ctf t.cpu0
check "ctf into another user's empty directory: refused, naming it" \
	'[ $rc -ne 0 ] && grep -q "planted.ctf: .*another user" err && [ -z "$(ls -A planted.ctf)" ]'
mkdir open.ctf && chmod 777 open.ctf
dt --format=ctf -o open.ctf t.cpu0
check "ctf into a directory others can write: refused" \
	'[ $rc -ne 0 ] && grep -q "open.ctf: .*others can write" err && [ -z "$(ls -A open.ctf)" ]'
mkdir real.ctf && ln -s real.ctf link.ctf
dt --format=ctf -o link.ctf t.cpu0
check "ctf into a link to a directory: refused" \
	'[ $rc -ne 0 ] && [ -z "$(ls -A real.ctf)" ]'
mkdir mine.ctf && chmod 755 mine.ctf
dt --format=ctf -o mine.ctf t.cpu0
check "ctf into your own empty directory: written" \
	'[ $rc -eq 0 ] && [ -s mine.ctf/metadata ] && [ -s mine.ctf/cpu0 ] &&
	 [ "$(stat -c %a mine.ctf/metadata mine.ctf/cpu0 | sort -u)" = 600 ]'
dt --format=ctf -o new.ctf t.cpu0
check "ctf into a new directory: made 0700" \
	'[ $rc -eq 0 ] && [ "$(stat -c %a new.ctf)" = 700 ] && [ -s new.ctf/metadata ]'
done_testing
