#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace-run against a hostile traced program (tests/user/hostile-ring): a
# fake ring cut to 0 bytes after it was taken, grown, with @committed
# going back, with a bad trace file header; files named as rings that
# never become one, or are removed before (as libktrace removes a ring it
# finds no room for: nothing is said of it); the control page garbled and
# cut.  Each check's ground truth: the 2000 real events (user:mark) the
# program recorded through libktrace and the 10 (20) records of the fake
# ring written before the attack, counted in the files by dtrace -S;
# ktrace-run's mappings (/proc/PID/maps) of a ring it gave up; the
# program's exit status (7); ktrace-run's ring directory
# (KTRACE_RUN_VERBOSE names it) gone after.
. "$(dirname "$0")/user-common.sh"

HR=$UT/hostile-ring

# hostile MODE: run it under ktrace-run into TMP/MODE; rc, err, rings set
hostile() {
	rm -rf "$TMP/$1"
	KTRACE_RUN_VERBOSE=1 timeout 60 "$KTRACE_RUN" -o "$TMP/$1" "$HR" "$1" 1000 \
		>"$TMP/$1.out" 2>"$TMP/$1.err"
	rc=$?
	err=$(cat "$TMP/$1.err")
	rings=$(sed -n 's/.*(rings in \(.*\))$/\1/p' "$TMP/$1.err")
	fake=$(sed -n 's/^fake \(trace\..*\)/\1/p' "$TMP/$1.out")
}

# fake_count MODE: records in the fake ring's trace file, by its size
fake_count() {
	echo $((($(stat -c %s "$TMP/$1/$fake") - 512) / 24))
}

for mode in shrink grow order badhdr; do
	hostile $mode
	want=10
	[ $mode = grow ] && want=20
	[ $rc -eq 7 ] && [ "$(count "$TMP/$mode" user:mark)" -eq 2000 ] &&
		[ "$(count "$TMP/$mode" user:2)" -eq $want ] && [ "$(fake_count $mode)" -eq $want ]
	ok $? "$mode: ktrace-run survives, exit 7 kept, 2000 real events and the $want fake ones" \
		"exit $rc, $(count "$TMP/$mode" user:mark) real; $(head -c 400 "$TMP/$mode.err")"
	[ -n "$rings" ] && [ ! -e "$rings" ]
	ok $? "$mode: the ring directory is removed" "$rings: $(ls -A "$rings" 2>&1)"
	"$DTRACE" -S "$TMP/$mode"/trace.* >/dev/null 2>"$TMP/$mode.dt"
	ok $? "$mode: dtrace reads every file of the directory" "$(head -c 300 "$TMP/$mode.dt")"
done
hostile shrink
echo "$err" | grep -q "ktrace-run: $rings/ring\.[0-9.]*: cut under ktrace-run (a fault reading it); nothing more is taken from it ($TMP/shrink/$fake has what came before)"
ok $? "shrink: the message names the ring, what happened and the file" "$err"
hostile order
echo "$err" | grep -q "ktrace-run: $rings/ring\.[0-9.]*: ring out of order"
ok $? "order: the message names the ring and what was wrong" "$err"
for mode in shrink order; do
	grep -qx "mapped 0" "$TMP/$mode.out"
	ok $? "$mode: 100 ms after, ktrace-run has no mapping of the ring it gave up" \
		"$(grep mapped "$TMP/$mode.out")"
done
hostile badhdr
h=$TMP/badhdr/$fake
[ "$(od -An -tu4 -j8 -N4 "$h" | tr -d ' ')" = 1 ] && [ "$(od -An -tx4 -j16 -N4 "$h" | tr -d ' ')" = 01020304 ] &&
	[ "$(od -An -c -j281 -N1 "$h" | tr -d ' ')" = '\0' ] && ! od -An -tx1 -j282 -N230 "$h" | grep -q '[1-9a-f]'
ok $? "badhdr: the trace file's header is ktrace-run's (version 1, byte order, strings cut, reserved 0)" \
	"$(od -An -tx1 -N64 "$h" | head -4)"

hostile fake
n=0
for f in no-magic bad-size not-pow2 short; do
	name=$(awk -v f=$f '$1 == "fake" && $2 == f { print $3 }' "$TMP/fake.out")
	c=$(grep -cF "$name:" "$TMP/fake.err")
	[ "$c" -eq 1 ] || n=$((n + 1))
done
[ $rc -eq 7 ] && [ $n -eq 0 ] && [ "$(count "$TMP/fake" user:mark)" -eq 2000 ] && [ ! -e "$rings" ]
ok $? "fake rings: each said once, by name (not every 5 ms), removed with the ring directory" \
	"exit $rc, $n not said once; $(sort "$TMP/fake.err" | uniq -c | head -c 600)"
grep -q "ring\.[0-9]*\.2000001\.1: file size does not match the ring size; ignored" "$TMP/fake.err" &&
	grep -q "ring\.[0-9]*\.2000002\.2: ring size is not a power of two" "$TMP/fake.err" &&
	grep -q "ring\.[0-9]*\.2000000\.0: never became a ring" "$TMP/fake.err"
ok $? "fake rings: the message says what is wrong with each" "$(cat "$TMP/fake.err")"

hostile vanish
name=$(awk '$1 == "vanish" { print $2 }' "$TMP/vanish.out")
[ $rc -eq 7 ] && [ -n "$name" ] && [ "$(count "$TMP/vanish" user:mark)" -eq 2000 ] &&
	! grep -qF "${name##*/}" "$TMP/vanish.err" && [ ! -e "$rings" ]
ok $? "a ring file removed by its maker before it became one: nothing said of it, exit 7, every event" \
	"exit $rc; $err"

hostile control
[ $rc -eq 7 ] && [ "$(count "$TMP/control" user:mark)" -eq 2000 ] && [ ! -e "$rings" ] &&
	echo "$err" | grep -q "ktrace-run: warning: $rings/control: cut under ktrace-run; its size is put back"
ok $? "control page garbled and cut: ktrace-run survives, says so, exit 7, every event" \
	"exit $rc; $err"

done_testing
