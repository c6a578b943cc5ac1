#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One bad or torn file in a merge ends only itself.  Checked against the
# model (merge-model: concatenate, stable sort): the merge of a bad file
# with good ones must hand out exactly the events of the good files and of
# the bad file's good part (the file cut where it goes bad), and say that it
# failed; dtrace's text and -S summary must be those of the cut set.
#  - a bad record (time going back, orphan, out-of-sequence or endless
#    CONT chain; also in the first record): an error naming the file, the
#    offset and what is wrong, exit 1, every other file to its end;
#  - a torn tail (a partial last record, as SIGKILL or a live file leave):
#    a warning naming the file and the bytes left out, exit 0.
#  - -S: "lost" is the sum of the lost markers in the good parts (from the
#    raw records), and it says which files end torn or bad.
. "$(dirname "$0")/dtrace-common.sh"

cd "$TMP" || exit 1
MKTRACE="python3 $ROOT/tests/host/mktrace.py"
SWITCH=$(((1 << 0) | (1 << 24)))
FAULT=$(((1 << 2) | (1 << 24)))
CONT0=$((1 << 22))
END=$((1 << 23))

# same_output DESC ARGS... -- CUT_ARGS...: dtrace's text and summary on the
# bad set equal those on the cut set (file names aside)
same_output() {
	local desc=$1 bad=() cut=()
	shift
	while [ "$1" != -- ]; do bad+=("$1"); shift; done
	shift
	cut=("$@")
	timeout -k 2 30 "$DTRACE" --raw "${bad[@]}" >bad.txt 2>/dev/null
	timeout -k 2 30 "$DTRACE" --raw "${cut[@]}" >cut.txt 2>/dev/null
	cmp -s bad.txt cut.txt
	ok $? "$desc: the text is the good part's" \
		"$(wc -l <bad.txt) lines against $(wc -l <cut.txt); $(diff bad.txt cut.txt | head -n 4)"
	timeout -k 2 30 "$DTRACE" -S "${bad[@]}" 2>/dev/null >bad.S
	timeout -k 2 30 "$DTRACE" -S "${cut[@]}" 2>/dev/null >cut.S
	# the file names and what -S says of a file's end aside
	sed -E '/^(torn|bad) /d; s/  \((torn tail|ends at a bad record).*//; s/ [^ ]*$//' bad.S >bad.sum
	sed -E 's/ [^ ]*$//' cut.S >cut.sum
	cmp -s bad.sum cut.sum
	ok $? "$desc: the summary counts every good file's events" "$(diff bad.sum cut.sum | head -n 6)"
	[ "$(awk '$1 == "lost" { print $2 }' bad.S)" = "$(lost_truth "${cut[@]}")" ]
	ok $? "$desc: -S lost is the sum of the lost markers in the good parts" \
		"-S: $(grep ^lost bad.S), the records: $(lost_truth "${cut[@]}")"
}

# lost_truth FILE...: records lost, as the lost markers in the files say
lost_truth() {
	python3 - "$@" <<'PY'
import struct, sys
n = 0
for path in sys.argv[1:]:
    d = open(path, "rb").read()
    for off in range(512, len(d) - 23, 24):
        tsc, ev, tid, a1, a2 = struct.unpack_from("<QIIII", d, off)
        if ev == 1 << 24:
            n += a1 | a2 << 32
print(n)
PY
}

# kind, bytes before the offset ktgen names where the good part ends
# (a chain's first record is not part of it)
for kc in order:0 cont-orphan:0 cont-seq:24 cont-end:48; do
	kind=${kc%:*}
	back=${kc#*:}
	rm -f m.*
	off=$("$KTGEN" -s 5 -c 4 -u 1 -n 3000 -l 4 -U 20 --corrupt $kind m | sed -n 's/^offset //p')
	head -c $((off - back)) m.cpu0 >m.cut
	files="m.cpu0 m.cpu1 m.cpu2 m.cpu3 m.user0"
	timeout -k 2 30 "$DTRACE" $files >/dev/null 2>err
	rc=$?
	# (ktgen's unknown events include probe hits: their warning is not the error)
	[ $rc -eq 1 ] && grep -q "^dtrace: m.cpu0: offset $off: " err &&
		[ "$(grep -vc "m.probes: no such file" err)" -eq 1 ]
	ok $? "$kind: an error naming the file and offset $off, exit 1" "exit $rc: $(head -c 300 err)"
	"$DTRACE" -S $files >out 2>/dev/null
	grep -q "^bad         1 file not read past a bad record$" out &&
		grep -q " m.cpu0  (ends at a bad record, offset $off)$" out
	ok $? "$kind: -S says which file ends at a bad record, where" "$(grep -E "^bad|m.cpu0" out)"
	check "$kind: the merge ends only the bad file (model)" \
		'"$MODEL" --expect-bad m.cpu0=m.cut m.cpu1 m.cpu2 m.cpu3 m.user0 >"$TMP/check.out" 2>&1'
	same_output "$kind" $files -- m.cut m.cpu1 m.cpu2 m.cpu3 m.user0
done

# the bad file in another place on the command line, and two bad files
rm -f m.* x.*
off=$("$KTGEN" -s 6 -c 3 -n 2000 -l 4 --corrupt order m | sed -n 's/^offset //p')
head -c "$off" m.cpu0 >m.cut
off2=$("$KTGEN" -s 8 -c 1 -n 2000 -l 4 --corrupt cont-orphan x | sed -n 's/^offset //p')
head -c "$off2" x.cpu0 >x.cut
check "two bad files among good ones: each ends only itself (model)" \
	'"$MODEL" --expect-bad m.cpu2 x.cpu0=x.cut m.cpu1 m.cpu0=m.cut >"$TMP/check.out" 2>&1'
"$DTRACE" m.cpu2 x.cpu0 m.cpu1 m.cpu0 >/dev/null 2>err
rc=$?
[ $rc -eq 1 ] && grep -q "m.cpu0: offset $off: " err && grep -q "x.cpu0: offset $off2: " err
ok $? "... both are named, exit 1" "exit $rc: $(head -c 300 err)"

# the bad record is the first: the merge opens, the other files are read
rm -f x.*
$MKTRACE x.cpu0 --cpu 0 --host ktgen 1000000:$FAULT:1:2 1000000:$((CONT0 | END | 1 << 24)):3:4
$MKTRACE x.cut --cpu 0 --host ktgen
check "a bad first record: the other files are merged all the same (model)" \
	'"$MODEL" --expect-bad x.cpu0=x.cut m.cpu1 m.cpu2 >"$TMP/check.out" 2>&1'
same_output "a bad first record" x.cpu0 m.cpu1 m.cpu2 -- x.cut m.cpu1 m.cpu2

# a torn tail: a warning, exit 0
rm -f m.*
off=$("$KTGEN" -s 9 -c 4 -u 1 -n 5000 -l 4 -U 20 --corrupt truncated m | sed -n 's/^offset //p')
head -c "$off" m.cpu0 >m.cut
files="m.cpu0 m.cpu1 m.cpu2 m.cpu3 m.user0"
"$DTRACE" $files >/dev/null 2>err
rc=$?
[ $rc -eq 0 ] && grep -q "^dtrace: warning: m.cpu0: offset $off: torn tail.* 10 bytes left out" err
ok $? "a torn last record: a warning naming the file, offset and bytes, exit 0" \
	"exit $rc: $(head -c 300 err)"
"$DTRACE" -S $files >out 2>/dev/null
grep -q "^torn        1 file cut short at the end: 10 bytes left out$" out &&
	grep -q " m.cpu0  (torn tail, 10 bytes)$" out
ok $? "-S says which file has a torn tail and how many bytes" "$(grep -E "^torn|m.cpu0" out)"
check "a torn last record: every event before it, every other file (model)" \
	'"$MODEL" m.cpu0=m.cut m.cpu1 m.cpu2 m.cpu3 m.user0 >"$TMP/check.out" 2>&1'
same_output "a torn last record" $files -- m.cut m.cpu1 m.cpu2 m.cpu3 m.user0

# a torn chain: the file ends inside an event's CONT records (cut at a
# record boundary, as a writer killed between them leaves it)
rm -f m.*
"$KTGEN" -s 3 -c 2 -n 400 -l 4 m >/dev/null
$MKTRACE m.torn --cpu 0 --host ktgen 1000:$SWITCH:1:2 1000000:$FAULT:1:2 1000000:$CONT0:3:4
$MKTRACE m.cut --cpu 0 --host ktgen 1000:$SWITCH:1:2
ev=$((512 + 24))
"$DTRACE" m.torn m.cpu1 >/dev/null 2>err
rc=$?
[ $rc -eq 0 ] && grep -q "warning: m.torn: offset $ev: torn tail.* 48 bytes left out" err
ok $? "a chain cut by the end of the file: a warning naming the file and offset $ev, exit 0" \
	"exit $rc: $(head -c 300 err)"
check "... the events before it, the other file (model)" \
	'"$MODEL" m.torn=m.cut m.cpu1 >"$TMP/check.out" 2>&1'

done_testing
