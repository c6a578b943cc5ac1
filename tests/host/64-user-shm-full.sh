#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libktrace when there is no room for a ring: a full /dev/shm (a small
# tmpfs mounted on it in a private mount namespace), RLIMIT_AS, RLIMIT_FSIZE.
# Every check: the traced program runs on (no SIGBUS, SIGXFSZ or hang: each
# run is under a timeout) with its exit status and output; the threads that
# got a ring have every event of theirs (dtrace -S, per file, against what
# the program says it recorded), none lost; those that did not are not
# recorded at all, and the library says so once, naming what ran out; no
# ring file is left behind.
. "$(dirname "$0")/user-common.sh"

if ! unshare -m true 2>/dev/null; then
	skip "a full /dev/shm" "no mount namespaces here (needs root)"
	done_testing
	exit
fi
RING_BYTES=$((4096 + 65536 * 24))

# in_shm SIZE CMD...: CMD with a SIZE tmpfs on /dev/shm (private mount
# namespace); what is left in /dev/shm after it goes to $TMP/shm.left
in_shm() {
	local size=$1
	shift
	timeout -k 5 60 unshare -m sh -c 'mount -t tmpfs -o size="$0" tmpfs /dev/shm || exit 99
		[ -z "$FILL" ] || cat /dev/zero >/dev/shm/fill 2>/dev/null
		"$@"; rc=$?; ls -A /dev/shm | grep -v "^fill$" >"$LEFT"; exit $rc' "$size" "$@"
}
export LEFT=$TMP/shm.left

# every_file DIR N: each thread file in DIR holds exactly N user:mark events
every_file() {
	local f n
	for f in "$1"/trace.pid*.tid*; do
		n=$("$DTRACE" -S "$f" 2>/dev/null | awk '$1 == "user:mark" { print $2 }')
		[ "${n:-0}" -eq "$2" ] || { echo "$f: ${n:-0} events, not $2"; return 1; }
	done
}

# ---- ktrace-run, /dev/shm with room for 2 of 8 rings ----
rm -rf "$TMP/full"
FILL= in_shm 4m "$KTRACE_RUN" -o "$TMP/full" "$UT/events" threads 8 100000 \
	>"$TMP/full.out" 2>"$TMP/full.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/full.out")" = "user:work 800000" ]
ok $? "4 MiB /dev/shm, 8 threads: the program runs on, exit 0, its output" \
	"exit $rc: $(cat "$TMP/full.out" "$TMP/full.err" | head -c 600)"
n=$(ls "$TMP"/full/trace.pid*.tid* 2>/dev/null | wc -l)
msg=$(grep -c "^libktrace: /dev/shm/ktrace-run\.[^/]*: no room for a thread's ring ($RING_BYTES bytes); threads without one are not recorded: No space left on device$" "$TMP/full.err")
[ "$msg" -eq 1 ] && [ "$(grep -c . "$TMP/full.err")" -eq 1 ]
ok $? "... the library says once that a ring did not fit, in which directory, why" \
	"$(head -c 600 "$TMP/full.err")"
[ "$n" -ge 1 ] && [ "$n" -lt 8 ] && every_file "$TMP/full" 100000 >"$TMP/every" &&
	[ "$(count "$TMP/full" user:mark)" -eq $((n * 100000)) ] && [ "$(lost "$TMP/full")" -eq 0 ]
ok $? "... $n threads recorded, each with all of its 100000 events, none lost; the others not at all" \
	"$n files; $(cat "$TMP/every")"
[ ! -s "$LEFT" ]
ok $? "... no ring file or ring directory left in /dev/shm" "$(cat "$LEFT")"

# ---- ktrace-run, /dev/shm without room for its control page ----
rm -rf "$TMP/none"
FILL=1 in_shm 1m "$KTRACE_RUN" -o "$TMP/none" "$UT/events" threads 2 10 >"$TMP/none.out" 2>"$TMP/none.err"
rc=$?
[ $rc -eq 1 ] && grep -q "^ktrace-run: /dev/shm/ktrace-run\.[^/]*/control: No space left on device$" \
	"$TMP/none.err" && [ ! -s "$LEFT" ]
ok $? "full /dev/shm: ktrace-run fails (exit 1), naming its control page and why; nothing left" \
	"exit $rc: $(head -c 400 "$TMP/none.err"); left: $(cat "$LEFT")"

# ---- ktrace-run, the program's address space limited: no ring mapped ----
# (rings of 16777216 records, 384 MiB, over a 200 MiB RLIMIT_AS: none fits)
BIG_BYTES=$((4096 + 16777216 * 24))
rm -rf "$TMP/as"
FILL= in_shm 64m "$KTRACE_RUN" -b 16777216 -o "$TMP/as" sh -c 'ulimit -v 200000 && exec "$0" "$@"' \
	"$UT/events" threads 4 10000 >"$TMP/as.out" 2>"$TMP/as.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/as.out")" = "user:work 40000" ] &&
	[ "$(grep -c "^libktrace: /dev/shm/ktrace-run\.[^/]*: no room for a thread's ring ($BIG_BYTES bytes); threads without one are not recorded: Cannot allocate memory$" "$TMP/as.err")" -eq 1 ] &&
	[ "$(grep -c . "$TMP/as.err")" -eq 1 ] && [ ! -s "$LEFT" ] &&
	! ls "$TMP"/as/trace.pid*.tid* >/dev/null 2>&1
ok $? "RLIMIT_AS: the program runs on, exit 0, its output; said once; no thread file, no ring file left" \
	"exit $rc: $(cat "$TMP/as.out" "$TMP/as.err" | head -c 600); $(ls "$TMP/as"); left: $(cat "$LEFT")"

# ---- ktrace-run, RLIMIT_FSIZE below a ring: an error, not SIGXFSZ ----
rm -rf "$TMP/fs"
FILL= in_shm 64m "$KTRACE_RUN" -o "$TMP/fs" sh -c 'ulimit -f 1000 && exec "$0" "$@"' \
	"$UT/events" threads 2 1000 >"$TMP/fs.out" 2>"$TMP/fs.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/fs.out")" = "user:work 2000" ] &&
	grep -q "no room for a thread's ring ($RING_BYTES bytes); threads without one are not recorded: File too large$" "$TMP/fs.err" &&
	[ ! -s "$LEFT" ]
ok $? "RLIMIT_FSIZE under a ring: the program runs on, exit 0, its output; said why" \
	"exit $rc: $(cat "$TMP/fs.out" "$TMP/fs.err" | head -c 600); left: $(cat "$LEFT")"

# ---- standalone: private rings, RLIMIT_AS ----
rm -rf "$TMP/sa"
(ulimit -v 200000 && KTRACE_USER_BUF=16777216 KTRACE_USER_DIR=$TMP/sa LD_PRELOAD=$LIBKTRACE \
	timeout -k 5 60 "$UT/events" threads 4 10000 >"$TMP/sa.out" 2>"$TMP/sa.err")
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/sa.out")" = "user:work 40000" ] &&
	[ "$(grep -c "^libktrace: no room for a thread's ring ($BIG_BYTES bytes); threads without one are not recorded: Cannot allocate memory$" "$TMP/sa.err")" -eq 1 ] &&
	[ "$(grep -c . "$TMP/sa.err")" -eq 1 ] && ! ls "$TMP"/sa/trace.pid*.tid* >/dev/null 2>&1
ok $? "standalone, RLIMIT_AS: the program runs on, exit 0, its output; said once; no thread file" \
	"exit $rc: $(cat "$TMP/sa.out" "$TMP/sa.err" | head -c 600); $(ls "$TMP/sa")"

done_testing
