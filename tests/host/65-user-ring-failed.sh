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
	skip "a ring that cannot be made" "no mount namespaces here (needs root)"
	done_testing
	exit
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

# sum DIR: events + lost records, as dtrace -S counts them in DIR
sum() {
	"$DTRACE" -S "$1"/trace.* 2>/dev/null | awk '$1 == "user:mark" { e = $2 } $1 == "lost" { l = $2 }
		END { print e + l }'
}

# failures ERRFILE DIR: every ktrace-run error names a file of DIR and
# says ENOSPC (and that the rest of the thread is counted as lost); at
# least one does; the last line counts them ("N errors") and says records
# were lost
failures() {
	grep '^ktrace-run: ' "$1" | grep -v ' records lost (' >"$TMP/fail.lines"
	[ -s "$TMP/fail.lines" ] &&
		! grep -Ev "^ktrace-run: $2/trace\.pid[0-9]+\.tid[0-9]+: ((cannot write the header: )?No space left on device; the rest of thread [0-9]+ is counted as lost, not written|No space left on device; the records of thread [0-9]+ are not written \(counted as lost\)|the lost marker of [0-9]+ records: No space left on device)$" "$TMP/fail.lines" &&
		grep -Eq "^ktrace-run: [1-9][0-9]* records lost \([0-9]+ of them not marked in a trace file: no room, or no file\); $(grep -c 'No space left on device;' "$TMP/fail.lines") errors; " "$1"
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
# (32 KiB left on the tmpfs: with -D what ktrace-run writes depends on how
# fast it drains, and on a loaded machine it all fitted in 1 MiB)
in_small sh -c 'head -c 992k /dev/zero >"$1/fill"; exec "$0" -D -b 1024 -o "$1/out" -- "$2" threads 4 400000' \
	"$KTRACE_RUN" "$TMP/small" "$UT/events" >"$TMP/drop.out" 2>"$TMP/drop.err"
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$TMP/drop.out")" = "user:work 1600000" ] &&
	failures "$TMP/drop.err" "$TMP/small/out"
ok $? "-D -b 1024: threads end (lost records to mark), the program's output; ktrace-run says why, exits 1" \
	"exit $rc: $(cat "$TMP/drop.out" "$TMP/drop.err" | head -c 600)"

# ---- ktrace_user_flush() where the file fails ----
# (ktrace-run still drains the ring, counting what it cannot write as lost:
# the flush is done, returns 0, and the loss is ktrace-run's exit status;
# the program's own status is printed by the shell around it)
in_small sh -c '"$0" -o "$1/out" -- sh -c "\"\$0\" flush 100000; echo flush-exit \$?" "$2" \
	>"$3.out" 2>"$3.err"; rc=$?; cp -a "$1/out" "$3.kept"; exit $rc' \
	"$KTRACE_RUN" "$TMP/small" "$UT/events" "$TMP/flush"
rc=$?
got=$(sum "$TMP/flush.kept")
[ $rc -eq 1 ] && [ "$(cat "$TMP/flush.out")" = "$(printf 'user:work 100000\nflush-exit 0')" ] &&
	failures "$TMP/flush.err" "$TMP/small/out" && [ "$got" -eq 100000 ]
ok $? "ktrace_user_flush() with the file full: no hang, returns 0 (drained, the rest counted), events + lost = 100000, ktrace-run exits 1" \
	"exit $rc, events + lost $got: $(cat "$TMP/flush.out" "$TMP/flush.err" | head -c 600)"

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
		grep -q "^ktrace-run: /dev/shm/ktrace-run\.[^/]*/ring\.[0-9.]*: ring out of order (committed went back, or past the ring); nothing more is taken from it ($f has what came before)$" "$TMP/bad.err" &&
		[ "$(count "$TMP/bad" user:mark)" -eq 1 ]
	ok $? "a ring out of order: no hang, the program's output, the file says why; the flushed event kept" \
		"exit $rc: $(cat "$TMP/bad.out" "$TMP/bad.err" | head -c 600)"
else
	ok 1 "build user-ring-bad" "$(cat "$TMP/cc.err")"
fi

# emfile EXTRA: ktrace-run (alone: prlimit on its pid) with a hard
# descriptor limit EXTRA above its lowest free descriptor, the command 4 threads
emfile() {
	rm -rf "$TMP/emfile" "$TMP/emfile.go"
	mkfifo "$TMP/emfile.go"
	timeout -k 5 60 "$KTRACE_RUN" -o "$TMP/emfile" \
		sh -c "read x <'$TMP/emfile.go'; exec '$UT/events' threads 4 100000" \
		>"$TMP/emfile.out" 2>"$TMP/emfile.err" &
	tpid=$!
	sleep 0.3
	krun=$(pgrep -P $tpid)
	nfd=0			# the lowest descriptor number free: below it, none is
	while [ -e /proc/$krun/fd/$nfd ]; do nfd=$((nfd + 1)); done
	prlimit --pid $krun --nofile=$((nfd + $1)):$((nfd + $1))
	start=$SECONDS
	echo go >"$TMP/emfile.go"
	wait $tpid
	rc=$?
	got=$(sum "$TMP/emfile")
	l=$(sed -n 's/^ktrace-run: \([0-9]*\) records lost (.*/\1/p' "$TMP/emfile.err")
	want=0
	[ "${l:-0}" -eq 0 ] || want=1
}

# ---- EMFILE: one descriptor to spare, then none (the limit is what
# ktrace-run holds): every ring still found (ktrace-run's spare
# descriptor; a ring not opened is tried again each round), each thread
# written or counted as lost (said, exit 1), not left unseen ----
for extra in 1 0; do
	emfile $extra
	[ $rc -eq $want ] && [ "$(cat "$TMP/emfile.out")" = "user:work 400000" ] &&
		[ $((SECONDS - start)) -lt 30 ] && [ $((${l:-0} + $(count "$TMP/emfile" user:mark))) -eq 400000 ] &&
		[ "$(grep -c . "$TMP/emfile.err")" -lt 20 ] &&
		! grep -Ev "^(ktrace-run: (warning: /dev/shm/ktrace-run\.[^/]*/ring\.[0-9.]*: Too many open files; trying again|$TMP/emfile/trace\.pid[0-9]+\.tid[0-9]+: Too many open files; the records of thread [0-9]+ are not written \(counted as lost\)|[0-9]+ records lost .*)|libktrace: ktrace-run has not drained a full ring for 2 s; .*)$" "$TMP/emfile.err"
	ok $? "ktrace-run with $extra descriptor(s) to spare: no hang, the program's output, events + counted lost = 400000, each file named, said once" \
		"exit $rc after $((SECONDS - start)) s, lost ${l:-0} + $(count "$TMP/emfile" user:mark), nfd $nfd: $(cat "$TMP/emfile.out"; grep -c . "$TMP/emfile.err"; sort "$TMP/emfile.err" | uniq -c | sort -rn | head -n 8 | cut -c 1-200)"
done

done_testing
