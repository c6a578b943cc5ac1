#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A ring ktrace-run gives up on (its trace file cannot be written: a 1 MiB
# tmpfs as the output directory, in a private mount namespace; the ring out
# of order, broken by the program) or never takes (EMFILE): the thread must
# not hang, when its ring fills, at its exit with records lost (-D), in
# ktrace_user_flush().  Checks: every run ends (each under a timeout), the
# program's output and exit status are its own; ktrace-run names each file
# and what was wrong and exits 1 where the command exited 0; each trace
# file holds, readable, a prefix of what its thread recorded (the items
# 0, 1, 2 ... of the program, in order, none skipped).
. "$(dirname "$0")/user-common.sh"

if ! unshare -m true 2>/dev/null; then
	echo "ok 1 # SKIP no mount namespaces here (needs root)"
	echo "1..1"
	exit 0
fi
mkdir -p "$TMP/small"

# in_small CMD...: CMD with a 1 MiB tmpfs on $TMP/small (private mount namespace)
in_small() {
	timeout -k 5 60 unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs "$0" || exit 99
		"$@"' "$TMP/small" "$@"
}

# prefixes DIR: each thread file in DIR with a header reads cleanly and
# holds items 0..k-1 of one worker, in order
prefixes() {
	local f
	for f in "$1"/trace.pid*.tid*; do
		[ "$(stat -c %s "$f")" -ge 512 ] || continue
		# (the map file may be torn too: the library writes it, not ktrace-run)
		"$DTRACE" --no-pager "$f" >"$TMP/list" 2>"$TMP/list.all" &&
			grep -v '\.maps:[0-9]*: line not understood, ignored$' "$TMP/list.all" >"$TMP/list.err"
		[ $? -eq 1 ] ||
			{ echo "$f: $(head -c 200 "$TMP/list.err")"; return 1; }
		awk -v f="$f" '$4 ~ /^user:/ { sub(/,/, "", $6); if ($8 != want) {
				print f ": item " $8 " where " want " was due"; bad = 1; exit }
			want++ } END { exit bad }' want=0 "$TMP/list" || return 1
	done
}

# failures ERRFILE DIR [nocount]: every ktrace-run error names a file of
# DIR and says ENOSPC; at least one does; and (unless the command's exit
# status is ktrace-run's) how many threads failed, at the end
failures() {
	grep '^ktrace-run: ' "$1" | grep -v 'not traced to the end' >"$TMP/fail.lines"
	[ -s "$TMP/fail.lines" ] &&
		! grep -Ev "^ktrace-run: $2/trace\.pid[0-9]+\.tid[0-9]+: (cannot write the header: )?No space left on device(; the rest of this thread is dropped)?$" "$TMP/fail.lines" &&
		{ [ -n "$3" ] ||
		  grep -Eq "^ktrace-run: $(wc -l <"$TMP/fail.lines") threads? not traced to the end \(see above\)$" "$1"; }
}

# ---- the trace files do not fit: threads wait for room ----
in_small "$KTRACE_RUN" -o "$TMP/small/out" -- "$UT/events" threads 4 100000 \
	>"$TMP/full.out" 2>"$TMP/full.err"
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$TMP/full.out")" = "user:work 400000" ]
ok $? "1 MiB output directory, 4 threads x 100000: no hang, the program's output; ktrace-run exits 1" \
	"exit $rc: $(cat "$TMP/full.out" "$TMP/full.err" | head -c 600)"
failures "$TMP/full.err" "$TMP/small/out"
ok $? "... ktrace-run names each file that failed and why, and how many" "$(head -c 800 "$TMP/full.err")"
# (the tmpfs is gone with the namespace: look again, with the files kept)
in_small sh -c '"$0" -o "$1/out" -- "$2" threads 4 100000 >/dev/null 2>&1; cp -a "$1/out" "$3"' \
	"$KTRACE_RUN" "$TMP/small" "$UT/events" "$TMP/kept"
prefixes "$TMP/kept" >"$TMP/prefix"
ok $? "... each file holds, readable, what its thread recorded up to the failure, in order" \
	"$(cat "$TMP/prefix")"

# ---- the same with -D and small rings: records lost at thread exit ----
in_small "$KTRACE_RUN" -D -b 1024 -o "$TMP/small/out" -- "$UT/events" threads 4 400000 \
	>"$TMP/drop.out" 2>"$TMP/drop.err"
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$TMP/drop.out")" = "user:work 1600000" ] &&
	failures "$TMP/drop.err" "$TMP/small/out"
ok $? "-D -b 1024: threads end (lost records to mark), the program's output; ktrace-run says why, exits 1" \
	"exit $rc: $(cat "$TMP/drop.out" "$TMP/drop.err" | head -c 600)"

# ---- ktrace_user_flush() on a ring given up ----
in_small "$KTRACE_RUN" -o "$TMP/small/out" -- "$UT/events" flush 100000 \
	>"$TMP/flush.out" 2>"$TMP/flush.err"
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$TMP/flush.out")" = "user:work 100000" ] &&
	failures "$TMP/flush.err" "$TMP/small/out" nocount
ok $? "ktrace_user_flush() returns -1 (the program then exits 1, its choice), no hang" \
	"exit $rc: $(cat "$TMP/flush.out" "$TMP/flush.err" | head -c 600)"

# ---- a ring out of order (the program broke it) ----
if cc -O2 -std=gnu11 -pthread -I"$ROOT/user" -I"$ROOT/lib" -I"$ROOT/include/uapi" \
	-o "$TMP/ring-bad" "$ROOT/tests/host/user-ring-bad.c" -L"$ROOT/$O/tools" -lktrace \
	-Wl,-rpath,"$ROOT/$O/tools" 2>"$TMP/cc.err"; then
	rm -rf "$TMP/bad"
	timeout -k 5 60 "$KTRACE_RUN" -b 1024 -o "$TMP/bad" "$TMP/ring-bad" 100000 \
		>"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	f=$(ls "$TMP"/bad/trace.pid*.tid* 2>/dev/null)
	[ $rc -eq 1 ] && [ "$(cat "$TMP/bad.out")" = "recorded 100001" ] &&
		grep -q "^ktrace-run: warning: $f: ring out of order (" "$TMP/bad.err" &&
		[ "$(count "$TMP/bad" user:mark)" -eq 1 ]
	ok $? "a ring out of order: no hang, the program's output, the file says why; the flushed event kept" \
		"exit $rc: $(cat "$TMP/bad.out" "$TMP/bad.err" | head -c 600)"
else
	ok 1 "build user-ring-bad" "$(cat "$TMP/cc.err")"
fi

# ---- EMFILE: ktrace-run cannot open the rings; the threads do not wait for ever ----
# (on a /dev/shm of its own: ktrace-run leaves the rings it never took there)
rm -rf "$TMP/emfile"
start=$SECONDS
timeout -k 5 60 unshare -m sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm || exit 99
	exec prlimit --nofile=6:1024 "$@"' sh "$KTRACE_RUN" -o "$TMP/emfile" \
	sh -c 'ulimit -n 1024 && exec "$0" "$@"' "$UT/events" threads 4 100000 \
	>"$TMP/emfile.out" 2>"$TMP/emfile.err"
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ] && [ "$(cat "$TMP/emfile.out")" = "user:work 400000" ] &&
	[ $((SECONDS - start)) -lt 30 ] &&
	grep -q "^libktrace: ktrace-run has not drained a full ring for 2 s; its thread drops records (counted) until it does$" "$TMP/emfile.err"
ok $? "ktrace-run out of descriptors: the threads stop waiting after 2 s, say so; the program's output" \
	"exit $rc after $((SECONDS - start)) s: $(cat "$TMP/emfile.out" "$TMP/emfile.err" | head -c 600)"

done_testing
