#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace -L follows a stripped binary's .gnu_debuglink, a name chosen by
# whoever owns the binary, into the binary's own directory: a FIFO, a link
# to /dev/zero or a link to /etc/shadow named there must never be opened
# for reading (ground truth: strace's openat/open calls, only O_PATH ones
# on those names), nor hang -L (a 20 s timeout), and -L says it found no
# debug info.  A real debug file named there, or below a relative
# --debug-dir (by name or by build id), is still used.
. "$(dirname "$0")/fakedev-common.sh"

command -v gcc >/dev/null || skip_all "gcc not installed"
command -v strace >/dev/null || skip_all "strace not installed"
cd "$T" || exit 1
printf 'int work(int a) { return a * 2; }\nint main(int c, char **v) { return work(c); }\n' >p.c
gcc -g -O1 -o p p.c && objcopy --only-keep-debug p p.debug.real && strip -o s p &&
	cp p.debug.real p.debug && objcopy --add-gnu-debuglink=p.debug s && rm p.debug
ok $? "build a stripped program with a .gnu_debuglink p.debug"

# hostile NAME MAKE...: p.debug made by MAKE; -L under strace
hostile() {
	local what=$1
	shift
	rm -f p.debug
	"$@"
	timeout -k 2 20 strace -o trace -e trace=openat,open "$KTRACE" -L "$T/s" work \
		>"$T/out" 2>"$T/err"
	rc=$?
	check "$what: -L does not hang (rc $rc)" '[ $rc -ne 124 ] && [ $rc -ne 137 ]'
	check "$what: p.debug opened only O_PATH (strace)" \
		'! grep "p\.debug\"" trace | grep -v O_PATH | grep -q .'
	check "$what: no debug info found" 'has_out "debug info none"'
}
hostile "a FIFO" mkfifo p.debug
hostile "a link to /dev/zero" ln -s /dev/zero p.debug
hostile "a link to /etc/shadow" ln -s /etc/shadow p.debug
hostile "a directory" mkdir p.debug
rmdir p.debug 2>/dev/null

cp p.debug.real p.debug
fk -L "$T/s" work
check "a real p.debug beside it is used" 'has_out "debug info $T/p.debug"'
rm p.debug
mkdir -p sub/dbg && cp p.debug.real sub/dbg/p.debug && cd sub || exit 1
fk --debug-dir dbg -L "$T/s" work
check "a relative --debug-dir, found by the debug link's name" \
	'has_out "debug info $T/sub/dbg/p.debug"'
id=$(readelf -n "$T/p" | awk '/Build ID/ { print $3 }')
mkdir -p "bid/.build-id/${id:0:2}" && cp "$T/p.debug.real" "bid/.build-id/${id:0:2}/${id:2}.debug"
fk --debug-dir bid -L "$T/s" work
check "a relative --debug-dir, found by build id" \
	'has_out "debug info $T/sub/bid/.build-id/${id:0:2}/${id:2}.debug"'
fk --debug-dir nonexistent -L "$T/s" work
check "a --debug-dir that does not exist: an error naming it" \
	'[ $rc -ne 0 ] && has_err "--debug-dir nonexistent"'
done_testing
