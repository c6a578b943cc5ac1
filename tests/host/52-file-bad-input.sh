#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every kind of bad trace file: the message names the file and the byte
# offset and the exit status is not 0; --force keeps what is valid where
# that is safe.  A torn tail (a last record cut short) is not bad: a
# warning naming the file, the offset and the bytes left out, exit 0.
. "$(dirname "$0")/dtrace-common.sh"

cd "$TMP" || exit 1
for kind in magic version header-size byte-order record-size cpu tsc-hz string \
	    short-header empty order cont-orphan cont-seq cont-end; do
	rm -f b.*
	off=$("$KTGEN" -s 7 -n 200 --corrupt $kind b | sed -n 's/^offset //p')
	expect_error "$kind: names file and offset $off" "dtrace: b.cpu0: offset $off: " \
		"$DTRACE" b.cpu0 b.cpu1
done

# files that do not belong together
"$KTGEN" -c 1 a >/dev/null
"$KTGEN" -c 1 --boot-id 11111111-2222-3333-4444-555555555555 boot >/dev/null
"$KTGEN" -c 1 --hostname elsewhere host >/dev/null
expect_error "files of different boots" "boot.cpu0: offset 80: boot id" "$DTRACE" a.cpu0 boot.cpu0
expect_error "files of different hosts" "host.cpu0: offset 185: hostname" "$DTRACE" a.cpu0 host.cpu0
"$DTRACE" --force a.cpu0 boot.cpu0 >out 2>err
[ $? -eq 0 ] && [ "$(wc -l <out)" -eq 200 ] && grep -q 'warning: .*different boots' err
ok $? "--force merges different boots with a warning"

# --force: a bad record ends its file, the rest is printed
force_keeps() {	# force_keeps KIND: events before the bad record survive
	local kind=$1 n
	rm -f b.*
	"$KTGEN" -s 7 -n 200 --corrupt $kind b >/dev/null
	"$DTRACE" --force b.cpu0 b.cpu1 >out 2>err
	local rc=$?
	n=$(grep -c '^  0 ' out)
	[ $rc -eq 0 ] && [ "$n" -ge 100 ] && [ "$n" -lt 210 ] && [ "$(grep -c '^  1 ' out)" -eq 200 ] &&
		grep -q "warning: b.cpu0: offset [0-9]*: .*ignoring the rest" err
	ok $? "--force with $kind: keeps what is valid, warns" "exit $rc, cpu0 lines $n: $(head -c 300 err)"
}
force_keeps order
force_keeps cont-seq

rm -f b.*
"$KTGEN" -s 7 --corrupt magic b >/dev/null
"$DTRACE" --force b.cpu0 b.cpu1 >out 2>err
[ $? -eq 0 ] && [ "$(wc -l <out)" -eq 100 ] && grep -q 'b.cpu0: left out' err
ok $? "--force leaves out a file with a bad header"

# a torn record after the first read buffer (4096 records) is caught too
rm -f b.*
off=$("$KTGEN" -c 1 -n 5000 --corrupt truncated b | sed -n 's/^offset //p')
[ "$off" -gt $((512 + 4096 * 24)) ]
ok $? "ktgen tears a record past the first buffer"
"$DTRACE" b.cpu0 >out 2>err
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <out)" -eq 5000 ] &&
	grep -q "warning: b.cpu0: offset $off: torn tail (the file ends inside a record), 10 bytes left out" err
ok $? "torn record after a full buffer: a warning, every whole record printed" \
	"exit $rc, $(wc -l <out) lines: $(head -c 300 err)"

done_testing
