#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libktrace: the library as built, per-thread files, every way a process
# ends, fork, full rings (waiting and dropping), signals in the middle of
# records, ktrace-run; under ktrace-run every ending keeps every event, and
# the program's descriptors, namespaces and signal handlers are its own;
# setuid programs, planted links and file modes.
. "$(dirname "$0")/user-common.sh"

# ---- the library ----
nm -D --defined-only "$LIBKTRACE" | awk '{ print $3 }' | sort >"$TMP/exports"
# in front of the C library's (user/dlwrap.c): dlclose, to write the map
# around it; spawn and exec, to pass tracing on; vfork, to keep the child's
# calls out of the parent's stream
printf '%s\n' __cyg_profile_func_enter __cyg_profile_func_exit dlclose execve execvpe \
	fexecve ktrace_user_event ktrace_user_flush ktrace_user_name ktrace_user_stack \
	ktrace_user_stack_print ktrace_user_stack_symbols posix_spawn posix_spawnp \
	vfork >"$TMP/exports.want"
diff -u "$TMP/exports.want" "$TMP/exports" >"$TMP/exports.diff"
ok $? "libktrace.so exports the API and the hooks, nothing else" "$(cat "$TMP/exports.diff")"
readelf -d "$LIBKTRACE" | grep -q 'SONAME.*\[libktrace\.so\.0\]'
ok $? "libktrace.so has soname libktrace.so.0"

# ---- threads, names, the file header ----
out=$(traced "$TMP/thr" "$UT/events" threads 4 50000)
n=$(ls "$TMP"/thr/trace.pid*.tid* 2>/dev/null | wc -l)
[ "$n" -eq 4 ] && [ "$(count "$TMP/thr" user:mark)" -eq 200000 ] && [ "$(lost "$TMP/thr")" -eq 0 ]
ok $? "4 threads x 50000 events: 4 files, every event, none lost" "$n files; $out"
f=$(ls "$TMP"/thr/trace.pid*.tid* | head -n 1)
[ "$(od -An -td4 -j24 -N4 "$f" | tr -d ' ')" = -1 ] &&
	[ "$(od -An -c -j266 -N6 "$f" | tr -d ' ')" = events ]
ok $? "stream header: cpu -1, comm of the program"
grep -q '^event 1 work worker %u, item %u$' "$TMP"/thr/trace.pid*.maps
ok $? "event names are saved with the map"
"$DTRACE" --calltree "$TMP"/thr/trace.* | grep -q '/\* user:work worker 0, item 49999 \*/'
ok $? "dtrace --calltree prints user events with the program's names"
"$DTRACE" "$TMP"/thr/trace.* | grep -Eq '^ +- +[0-9.]+ +[^ ]+-[0-9]+ +user:work +worker 0, item 49999$'
ok $? "... and so does its event listing"
for p in "$TMP"/thr/trace.pid*.maps; do
	grep -q "^object 0x[0-9a-f]* 0x[0-9a-f]* 0x[0-9a-f]* [0-9a-f]\{40\} $UT/events\$" "$p"
done
ok $? "the map names the program with its load bias and build id"

traced "$TMP/static" "$UT/events-static" threads 2 1000 >/dev/null
[ "$(count "$TMP/static" user:mark)" -eq 2000 ]
ok $? "linked with libktrace.a: every event"

# ---- the ways a process ends ----
traced "$TMP/exit" "$UT/events" exit 20000 >/dev/null
[ $? -eq 0 ] && [ "$(count "$TMP/exit" user:mark)" -eq 20000 ]
ok $? "exit() from another thread: every event on disk"

traced "$TMP/term" "$UT/events" sigterm 20000 >/dev/null
rc=$?
[ $rc -eq 143 ] && [ "$(count "$TMP/term" user:mark)" -eq 20000 ]
ok $? "killed by its own SIGTERM: still killed by it, every event on disk" "exit $rc"

traced "$TMP/int" "$UT/events" sigint 20000 >/dev/null
rc=$?
[ $rc -eq 3 ] && [ "$(count "$TMP/int" user:mark)" -eq 20000 ] && [ "$(count "$TMP/int" user:3)" -eq 1 ]
ok $? "SIGINT with the program's handler: it runs, exits 3, every event on disk" "exit $rc"

rm -rf "$TMP/kill"
mkfifo "$TMP/ready"
KTRACE_USER_DIR=$TMP/kill LD_PRELOAD=$LIBKTRACE "$UT/events" wait 30000 >"$TMP/ready" &
pid=$!
read -r _ <"$TMP/ready"
read -r _ <"$TMP/ready"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && [ "$(count "$TMP/kill" user:mark)" -eq 30000 ]
ok $? "SIGTERM from outside while it sleeps: every event on disk" "exit $rc"

traced "$TMP/flush" "$UT/events" flush 20000 >/dev/null
[ $? -eq 0 ] && [ "$(count "$TMP/flush" user:mark)" -eq 20000 ]
ok $? "ktrace_user_flush() then _exit(): every event on disk"

out=$(traced "$TMP/join" "$UT/events" join 10000)
[ "$out" = "size $((512 + 24 * 10000))" ]
ok $? "a thread's file is complete when the thread is joined" "$out"

# ---- fork ----
traced "$TMP/fork" "$UT/events" fork 10000 >/dev/null
parent=$(ls "$TMP"/fork/trace.pid*.tid* | head -n 1)
child=$(ls "$TMP"/fork/trace.pid*.tid* | tail -n 1)
[ "$(ls "$TMP"/fork/trace.pid*.tid* | wc -l)" -eq 2 ] && [ "$parent" != "$child" ] &&
	[ "$("$DTRACE" -S "$parent" | awk '$1 == "user:mark" { print $2 }')" -eq 20000 ] &&
	[ "$("$DTRACE" -S "$child" | awk '$1 == "user:2" { print $2 }')" -eq 10000 ] &&
	! "$DTRACE" -S "$child" | grep -q user:mark && ls "$TMP"/fork/*.maps | grep -q "${child%.tid*}.maps"
ok $? "fork: the child writes its own file and map, none of the parent's records"

# ---- full rings ----
KTRACE_USER_BUF=1024 traced "$TMP/wait" "$UT/events" threads 2 200000 >/dev/null
[ "$(count "$TMP/wait" user:mark)" -eq 400000 ] && [ "$(lost "$TMP/wait")" -eq 0 ]
ok $? "1024-record rings: the threads wait for the writer, nothing lost"

KTRACE_USER_DROP=1 KTRACE_USER_BUF=1024 traced "$TMP/drop" "$UT/events" threads 2 500000 >/dev/null
got=$(count "$TMP/drop" user:mark)
lost=$(lost "$TMP/drop")
[ $((got + lost)) -eq 1000000 ]
ok $? "KTRACE_USER_DROP: recorded + counted as lost = every event" "$got + $lost"

# ---- signal handlers that record, arriving in the middle of records ----
# main records 3 events (4 records: an entry has two) per loop, the handler 4 (5)
for mode in wait drop; do
	drop=0
	[ $mode = wait ] || drop=1
	out=$(KTRACE_USER_DROP=$drop KTRACE_USER_BUF=1024 traced "$TMP/sig" "$UT/sigstress" 1)
	main=$(echo "$out" | awk '/^main/ { print $2 }')
	handler=$(echo "$out" | awk '/^handler/ { print $2 }')
	"$DTRACE" -j 1 "$TMP"/sig/trace.* >"$TMP/sig.txt" 2>"$TMP/sig.err"
	ok $? "signals mid-record ($mode): the file reads cleanly" "$(head -c 300 "$TMP/sig.err")"
	read -r recs lost < <(awk '$4 == "meta:lost" { l += $5; next }
		$4 == "func:entry" || $4 == "func:enter" { r += 2; next } { r++ } END { print r + 0, l + 0 }' "$TMP/sig.txt")
	want=$((main / 3 * 4 + handler / 4 * 5))
	[ "$handler" -gt 100 ] && [ $((recs + lost)) -eq $want ]
	ok $? "signals mid-record ($mode): $handler handler events; records + lost = all" \
		"$recs + $lost != $want"
done

# ---- ktrace-run ----
"$KTRACE_RUN" -o "$TMP/run" -b 4096 "$UT/calls" 2>/dev/null
[ $? -eq 0 ] && "$DTRACE" --flat "$TMP"/run/trace.* | grep -q ' fib  calls.c:'
ok $? "ktrace-run -o DIR: the program's calls in DIR"
"$DTRACE" "$TMP"/run/trace.* >"$TMP/run.txt"
grep -Eq ' func:enter +enter fib from fib sp [.0-9a-f]+$' "$TMP/run.txt" &&
	grep -Eq ' func:leave +exit fib sp [.0-9a-f]+$' "$TMP/run.txt" && ! grep -q 'enter 0x' "$TMP/run.txt"
ok $? "dtrace's listing names the functions called and calling" \
	"$(grep -m3 func: "$TMP/run.txt")"
expect_error "ktrace-run: no command" "no command given" "$KTRACE_RUN" -o "$TMP/run"
expect_error "ktrace-run: bad -b" "-b 1000: not a power of two" "$KTRACE_RUN" -b 1000 true
KTRACE_LIB=/nonexistent "$KTRACE_RUN" -o "$TMP/run" true 2>"$TMP/err.txt"
[ $? -ne 0 ]
ok $? "ktrace-run with a missing library fails"

# -e: the kernel too, under ktrace (here the stand-in device of 40-ktrace-cli)
KTRACE_DEV=$TMP/nodev "$KTRACE_RUN" -e sched -o "$TMP/k0" true >/dev/null 2>"$TMP/err.txt"
[ $? -ne 0 ] && grep -q "the ktrace module is not loaded" "$TMP/err.txt"
ok $? "ktrace-run -e without a ktrace kernel: says so" "$(cat "$TMP/err.txt")"
if cc -O2 -std=gnu11 -I"$ROOT/include/uapi" -shared -fPIC -o "$TMP/fakedev.so" \
	"$ROOT/tests/host/ktrace-cli-fakedev.c" -ldl 2>"$TMP/err.txt"; then
	: >"$TMP/fakestate"
	env LD_PRELOAD="$TMP/fakedev.so" KTFAKE_PATH="$TMP/dev" KTRACE_DEV="$TMP/dev" \
		KTFAKE_STATE="$TMP/fakestate" KTFAKE_CPUS=2 \
		"$KTRACE_RUN" -e sched -o "$TMP/k" "$UT/calls" >/dev/null 2>"$TMP/err.txt"
	rc=$?
	[ $rc -eq 0 ] && [ -f "$TMP/k/trace.cpu0" ] && [ -f "$TMP/k/trace.cpu1" ] &&
		[ "$(count "$TMP/k" func:enter)" -gt 50 ] && [ "$(count "$TMP/k" sched:switch)" -gt 0 ]
	ok $? "ktrace-run -e: kernel and user files in DIR, merged by dtrace" \
		"exit $rc: $(tail -n 5 "$TMP/err.txt")"
else
	ok 1 "build the stand-in device" "$(cat "$TMP/err.txt")"
fi

# ---- under ktrace-run: every ending keeps every event ----
# (ground truth: the 10002 events the program recorded before it ended)
for how in return exit _exit exec abort segv kill; do
	rm -rf "$TMP/end"
	# (the shell's "Aborted" notes to the file too, not into the TAP)
	{ "$KTRACE_RUN" -o "$TMP/end" "$UT/events" end $how 10002 >/dev/null; } 2>"$TMP/end.err"
	rc=$?
	got=$(count "$TMP/end" user:mark)
	case $how in abort) want=134 ;; segv) want=139 ;; kill) want=137 ;; *) want=0 ;; esac
	[ "$got" -eq 10002 ] && [ $rc -eq $want ] && [ "$(lost "$TMP/end")" -eq 0 ]
	ok $? "ktrace-run, ends by $how: all 10002 events, exit status $want" \
		"exit $rc, $got events; $(head -c 300 "$TMP/end.err")"
done
rm -rf "$TMP/end"
KTRACE_RUN_VERBOSE=1 "$KTRACE_RUN" -o "$TMP/end" "$UT/events" end exit 10 >/dev/null 2>"$TMP/end.err"
rings=$(sed -n 's/.*(rings in \(.*\))$/\1/p' "$TMP/end.err")
[ -n "$rings" ] && [ ! -e "$rings" ] && grep -q "ktrace-run: 1 files, 10 records, 0 lost" "$TMP/end.err"
ok $? "ktrace-run counts what it wrote and removes its ring directory" "$(cat "$TMP/end.err")"

# ---- under ktrace-run: fork, full rings, signals mid-record ----
rm -rf "$TMP/rfork"
"$KTRACE_RUN" -o "$TMP/rfork" "$UT/events" fork 10000 >/dev/null
set -- "$TMP"/rfork/trace.pid*.tid*
[ $# -eq 2 ] && [ "$(count "$TMP/rfork" user:mark)" -eq 20000 ] &&
	[ "$(count "$TMP/rfork" user:2)" -eq 10000 ] && [ "$(ls "$TMP"/rfork/*.maps | wc -l)" -eq 2 ]
ok $? "ktrace-run, fork: parent and child each in files of their own, every event" "$(ls "$TMP/rfork")"
rm -rf "$TMP/rwait"
"$KTRACE_RUN" -b 1024 -o "$TMP/rwait" "$UT/events" threads 2 200000 >/dev/null
[ "$(count "$TMP/rwait" user:mark)" -eq 400000 ] && [ "$(lost "$TMP/rwait")" -eq 0 ]
ok $? "ktrace-run, 1024-record rings: the threads wait for ktrace-run, nothing lost"
rm -rf "$TMP/rdrop"
"$KTRACE_RUN" -D -b 1024 -o "$TMP/rdrop" "$UT/events" threads 2 500000 >/dev/null
got=$(count "$TMP/rdrop" user:mark)
lost=$(lost "$TMP/rdrop")
[ $((got + lost)) -eq 1000000 ]
ok $? "ktrace-run -D: recorded + counted as lost = every event" "$got + $lost"
for drop in 0 1; do
	rm -rf "$TMP/rsig"
	out=$(KTRACE_USER_DROP=$drop "$KTRACE_RUN" -b 1024 -o "$TMP/rsig" "$UT/sigstress" 1)
	main=$(echo "$out" | awk '/^main/ { print $2 }')
	handler=$(echo "$out" | awk '/^handler/ { print $2 }')
	"$DTRACE" -j 1 "$TMP"/rsig/trace.* >"$TMP/rsig.txt" 2>"$TMP/rsig.err"
	read -r recs lost < <(awk '$4 == "meta:lost" { l += $5; next }
		$4 == "func:entry" || $4 == "func:enter" { r += 2; next } { r++ } END { print r + 0, l + 0 }' "$TMP/rsig.txt")
	want=$((main / 3 * 4 + handler / 4 * 5))
	[ ! -s "$TMP/rsig.err" ] && [ "$handler" -gt 100 ] && [ $((recs + lost)) -eq $want ]
	ok $? "ktrace-run, signals mid-record (drop=$drop): files read cleanly, records + lost = all" \
		"$recs + $lost != $want; $(head -c 300 "$TMP/rsig.err")"
done

# ---- under ktrace-run: the program's own things stay its own ----
rm -rf "$TMP/cr" "$TMP/cr.file"
"$KTRACE_RUN" -o "$TMP/cr" "$UT/events" closerange "$TMP/cr.file" 300000 >/dev/null 2>"$TMP/cr.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/cr.file")" = data ] && [ "$(count "$TMP/cr" user:mark)" -eq 300000 ]
ok $? "close_range(3, ~0), open(): the program's file holds only its data, every event traced" \
	"exit $rc, file $(wc -c <"$TMP/cr.file") bytes, $(count "$TMP/cr" user:mark) events"

if unshare -U true 2>/dev/null; then
	rm -rf "$TMP/us"
	out=$("$KTRACE_RUN" -o "$TMP/us" "$UT/events" unshare 100000 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [ "$(count "$TMP/us" user:mark)" -eq 100000 ]
	ok $? "unshare(CLONE_NEWUSER) after the first record works, every event traced" \
		"exit $rc: $out"
else
	ok 0 "unshare(CLONE_NEWUSER) after the first record works # SKIP no user namespaces here"
fi

rm -rf "$TMP/ei"
out=$("$KTRACE_RUN" -o "$TMP/ei" "$UT/events" eintr 1000 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$(count "$TMP/ei" user:mark)" -eq 1000 ] && echo "$out" | grep -q '^handler ours$'
ok $? "ktrace-run: a SIGINT handler without SA_RESTART stays so (and stays the program's): EINTR" \
	"exit $rc: $out"
out=$(traced "$TMP/ei2" "$UT/events" eintr 1000 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$(count "$TMP/ei2" user:mark)" -eq 1000 ]
ok $? "standalone: the same (the flush handler keeps the program's flags)" "exit $rc: $out"

# ---- not asked to record: nothing written, the program runs ----
mkdir -p "$TMP/plain" && (cd "$TMP/plain" && LD_PRELOAD=$LIBKTRACE "$UT/events" threads 1 10 \
	>/dev/null 2>"$TMP/plain.err")
rc=$?
[ $rc -eq 0 ] && [ -z "$(ls -A "$TMP/plain")" ] && [ ! -s "$TMP/plain.err" ]
ok $? "neither ktrace-run nor KTRACE_USER_DIR: nothing recorded, nothing said" \
	"exit $rc: $(ls -A "$TMP/plain") $(cat "$TMP/plain.err")"

# ---- modes: trace files hold kernel and memory addresses ----
for how in run standalone; do
	rm -rf "$TMP/mode"
	if [ $how = run ]; then
		(umask 022 && "$KTRACE_RUN" -o "$TMP/mode/sub" "$UT/events" threads 2 100 >/dev/null)
	else
		(umask 022 && traced "$TMP/mode/sub" "$UT/events" threads 2 100 >/dev/null)
	fi
	modes=$(stat -c '%a %n' "$TMP/mode" "$TMP/mode/sub" "$TMP"/mode/sub/* | sed "s|$TMP/||")
	[ "$(echo "$modes" | awk '$1 != ($2 ~ /trace/ ? 600 : 700)' | wc -l)" -eq 0 ] &&
		[ "$(echo "$modes" | wc -l)" -eq 5 ]
	ok $? "$how: directories made 0700, trace and map files 0600 (umask 022)" "$modes"
done

# ---- a directory others can write: refused (they could swap or read files) ----
mkdir -p "$TMP/open" && chmod 777 "$TMP/open"
expect_error "ktrace-run -o a directory writable by others: refused" "writable by others" \
	"$KTRACE_RUN" -o "$TMP/open" "$UT/events" threads 1 10
KTRACE_USER_DIR=$TMP/open LD_PRELOAD=$LIBKTRACE "$UT/events" threads 1 10 >/dev/null 2>"$TMP/open.err"
rc=$?
[ $rc -eq 0 ] && grep -q "cannot record (a directory of another user, or writable by others)" \
	"$TMP/open.err" && [ -z "$(ls -A "$TMP/open")" ]
ok $? "standalone, KTRACE_USER_DIR writable by others: nothing written, the program runs" \
	"exit $rc: $(cat "$TMP/open.err")"

# ---- planted links: never written through ----
printf 'secret\n' >"$TMP/target"
mkdir -m 700 "$TMP/plant"
coproc PLANT { KTRACE_USER_DIR=$TMP/plant LD_PRELOAD=$LIBKTRACE "$UT/events" wait-go 1000; }
read -r _ pid _ <&"${PLANT[0]}"
ln -s "$TMP/target" "$TMP/plant/trace.pid$pid.tid$pid"
ln -s "$TMP/target" "$TMP/plant/trace.pid$pid.maps"
echo go >&"${PLANT[1]}"
wait $PLANT_PID
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/target")" = secret ] && [ "$(count "$TMP/plant" user:mark)" -eq 1000 ] &&
	[ ! -L "$TMP/plant/trace.pid$pid.maps" ]
ok $? "links planted as the trace and map files: replaced, their target untouched" \
	"exit $rc; target: $(head -c 100 "$TMP/target" | od -c | head -3)"

# a setuid-root program (libktrace.a) run by nobody, links in nobody's KTRACE_USER_DIR
SU=$(mktemp -d /tmp/ktrace-suid.XXXXXX)
chmod 755 "$SU"
cp "$UT/events-static" "$SU/events" && chmod 4755 "$SU/events"
mkdir -m 700 "$SU/secret" && printf 'root only\n' >"$SU/secret/file" && chmod 600 "$SU/secret/file"
mkdir -m 700 "$SU/u" && chown 65534:65534 "$SU/u" 2>/dev/null
if [ "$(id -u)" -ne 0 ]; then
	ok 0 "setuid-root program, links in KTRACE_USER_DIR # SKIP not root"
elif command -v setpriv >/dev/null; then
	coproc SUID { setpriv --reuid=65534 --regid=65534 --clear-groups \
		env KTRACE_USER_DIR="$SU/u" "$SU/events" wait-go 1000 2>&1; }
	read -r _ pid _ secure <&"${SUID[0]}"
	for f in trace.pid$pid.tid$pid trace.pid$pid.maps; do
		setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$SU/secret/file" "$SU/u/$f"
	done
	echo go >&"${SUID[1]}"
	cat <&"${SUID[0]}" >"$TMP/suid.out"
	wait $SUID_PID
	rc=$?
	if [ "$secure" = 1 ]; then
		[ $rc -eq 0 ] && [ "$(cat "$SU/secret/file")" = "root only" ] &&
			[ "$(ls "$SU/u" | wc -l)" -eq 2 ] && [ ! -s "$TMP/suid.out" ]
		ok $? "setuid-root program, nobody's KTRACE_USER_DIR with links: no recording, target untouched" \
			"exit $rc; $(cat "$TMP/suid.out"); $(ls -l "$SU/u"); $(head -c 60 "$SU/secret/file")"
	else
		ok 0 "setuid-root program, links in KTRACE_USER_DIR # SKIP $SU does not honour setuid"
	fi
else
	ok 0 "setuid-root program, links in KTRACE_USER_DIR # SKIP no setpriv"
fi
rm -rf "$SU"

# ---- a directory it cannot write: the program runs on ----
mkdir -p "$TMP/ro" && touch "$TMP/ro/file"
KTRACE_USER_DIR=$TMP/ro/file/x LD_PRELOAD=$LIBKTRACE "$UT/events" threads 1 10 \
	>/dev/null 2>"$TMP/ro.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^libktrace: .*cannot record' "$TMP/ro.err"
ok $? "an unusable KTRACE_USER_DIR: a message, and the program runs" "exit $rc: $(cat "$TMP/ro.err")"

done_testing
