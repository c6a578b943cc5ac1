#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# install-dtrace-check.sh BINDIR NAME ORIGIN DESTDIR: may `make install` put
# ktrace's trace merger at BINDIR/NAME?
#
# Debian's systemtap-sdt-dev ships /usr/bin/dtrace, the USDT probe
# generator that PostgreSQL, CPython and others run while they build; a
# ktrace dtrace earlier in PATH (/usr/local/bin) would break those builds.
# So when NAME is dtrace and the user did not choose it (ORIGIN is make's
# $(origin DTRACE_NAME): "file" or "undefined" means the default), any
# other dtrace found where it could be shadowed or overwritten refuses the
# install: BINDIR/dtrace itself, and (installing into the system, no
# DESTDIR) every dtrace on PATH and in /usr/local/bin, /usr/bin, /bin.
# ktrace's own dtrace (its binary holds "dtrace (ktrace)") is no conflict.
bindir=$1 name=$2 origin=$3 destdir=$4

ours() { grep -qa 'dtrace (ktrace)' "$1" 2>/dev/null; }

[ "$name" = dtrace ] || exit 0
candidates="$bindir/dtrace"
if [ -z "$destdir" ]; then
	old_ifs=$IFS
	IFS=:
	for d in $PATH /usr/local/bin /usr/bin /bin; do
		[ -n "$d" ] && candidates="$candidates
$d/dtrace"
	done
	IFS=$old_ifs
fi
other=$(printf '%s\n' "$candidates" | while read -r f; do
	if [ -f "$f" ] && ! ours "$f"; then
		echo "$f"
		break
	fi
done)
[ -z "$other" ] && exit 0
case $origin in
command\ line|environment*|override)
	echo "make install: warning: $other is another program called dtrace" \
	     "(systemtap-sdt-dev's?); installing $bindir/dtrace as you asked (DTRACE_NAME=dtrace)" >&2
	exit 0
	;;
esac
cat >&2 <<MSG
make install: $other is another program called dtrace (systemtap-sdt-dev's
USDT probe generator?), which PostgreSQL, CPython and other builds run.
Installing ktrace's dtrace as $bindir/dtrace would shadow or replace it.
Install it under another name:   make install DTRACE_NAME=ktrace-dtrace
or replace/shadow it anyway:     make install DTRACE_NAME=dtrace
MSG
exit 1
