#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace-run when resources run out, a normal input: a full output
# directory (a 1 MiB tmpfs in a private mount namespace), descriptors
# (ulimit -n), address space (RLIMIT_AS set on ktrace-run alone with
# prlimit), mappings (vm.max_map_count, by a shim), thousands of live
# threads.  Ground truth: the events the
# program recorded (4 x 100000 ...): every one is in the files or counted
# by their lost markers (dtrace -S); no file without a whole header; no
# hang (every run under timeout); exit status: the command's when nothing
# is lost, 1 when the command exited 0 but records were lost.
. "$(dirname "$0")/user-common.sh"

# sum DIR: events + lost records, as dtrace -S counts them in DIR
sum() {
	"$DTRACE" -S "$1"/trace.* 2>/dev/null | awk '$1 == "user:mark" { e = $2 } $1 == "lost" { l = $2 }
		END { print e + l }'
}

# ---- ENOSPC on the output directory ----
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	mkdir -p "$TMP/small"
	cat >"$TMP/small.sh" <<EOS
mount -t tmpfs -o size=1m none "$TMP/small" || exit 99
timeout 60 "$KTRACE_RUN" -o "$TMP/small/out" "$UT/events" threads 4 100000 >/dev/null 2>"$TMP/small.err"
echo "rc \$?"
"$DTRACE" -S "$TMP"/small/out/trace.* >"$TMP/small.S" 2>"$TMP/small.dt"
echo "dtrace \$?"
find "$TMP/small/out" -name 'trace.pid*.tid*' -size -512c | sed 's/^/short /'
EOS
	unshare -m sh "$TMP/small.sh" >"$TMP/small.out" 2>&1
	rc=$(awk '$1 == "rc" { print $2 }' "$TMP/small.out")
	[ "$rc" = 1 ] && grep -q "ktrace-run: $TMP/small/out/trace\.pid[0-9]*\.tid[0-9]*: No space left on device; the rest of thread [0-9]* is counted as lost" "$TMP/small.err"
	ok $? "ENOSPC: no hang, exit 1 (the command exited 0, records were lost), the file and the error named" \
		"$(cat "$TMP/small.out"; head -c 600 "$TMP/small.err")"
	grep -q "^dtrace 0$" "$TMP/small.out" && ! grep -q "^short" "$TMP/small.out"
	ok $? "ENOSPC: no file without a whole header, dtrace reads the directory" \
		"$(cat "$TMP/small.out" "$TMP/small.dt")"
	got=$(awk '$1 == "user:mark" { e = $2 } $1 == "lost" { l = $2 } END { print e + 0, l + 0 }' "$TMP/small.S")
	said=$(sed -n 's/^ktrace-run: \([0-9]*\) records lost (\([0-9]*\) of them not marked.*/\1 \2/p' "$TMP/small.err")
	set -- $got $said 0 0
	# (a thread whose file could not even get its header has no file: ktrace-run counts it)
	[ $(($1 + $3)) -eq 400000 ] && [ "$2" -gt 0 ] && [ "$2" -eq $(($3 - $4)) ]
	ok $? "ENOSPC: events + lost = the 400000 recorded; the files' markers count all but what had no file" \
		"$got; $(tail -n 1 "$TMP/small.err")"
else
	for i in 1 2 3; do ok 0 "ENOSPC # SKIP needs root and unshare -m"; done
fi

# ---- the exit status when records are lost (-D: drops in full rings) ----
rm -rf "$TMP/drop"
timeout 60 "$KTRACE_RUN" -D -b 1024 -o "$TMP/drop" "$UT/events" threads 2 500000 >/dev/null 2>"$TMP/drop.err"
rc=$?
l=$(lost "$TMP/drop")
[ $rc -eq 1 ] && [ "$l" -gt 0 ] && [ $(($(count "$TMP/drop" user:mark) + l)) -eq 1000000 ] &&
	grep -q "^ktrace-run: $l records lost (0 of them not marked" "$TMP/drop.err"
ok $? "-D with drops: the command exited 0, ktrace-run 1, and says the count dtrace -S finds" \
	"exit $rc, lost $l; $(cat "$TMP/drop.err")"
rm -rf "$TMP/drop"
timeout 60 "$KTRACE_RUN" -D -b 1024 -o "$TMP/drop" sh -c "'$UT/events' threads 2 500000 >/dev/null; exit 9" \
	2>"$TMP/drop.err"
rc=$?
[ $rc -eq 9 ] && [ "$(lost "$TMP/drop")" -gt 0 ] && grep -q "records lost" "$TMP/drop.err"
ok $? "... a command that failed keeps its own status (9), the loss said" "exit $rc; $(cat "$TMP/drop.err")"

# ---- descriptors ----
rm -rf "$TMP/fd"
(ulimit -n 14 && timeout 60 "$KTRACE_RUN" -o "$TMP/fd" "$UT/events" threads 8 10000 \
	>/dev/null 2>"$TMP/fd.err")
rc=$?
lost=$(sed -n 's/^ktrace-run: \([0-9]*\) records lost (\([0-9]*\) of them not marked.*/\1 \2/p' "$TMP/fd.err")
set -- $lost 0 0
want=0
[ "$1" -eq 0 ] || want=1
# (a ring ktrace-run cannot open yet is tried again: usually nothing is lost)
[ $rc -eq $want ] && { [ ! -s "$TMP/fd.err" ] ||
	grep -q "ktrace-run: .*/\(ring\|trace\)\.[0-9pidt.]*: Too many open files" "$TMP/fd.err"; } &&
	[ $(($(count "$TMP/fd" user:mark) + $1)) -eq 80000 ]
ok $? "EMFILE (ulimit -n 14): no hang, the file named, written + counted lost = 80000, exit 0 only if none lost" \
	"exit $rc; $(count "$TMP/fd" user:mark) + $lost; $(head -c 600 "$TMP/fd.err")"
rm -rf "$TMP/fd2"
(ulimit -S -n 14 && timeout 60 "$KTRACE_RUN" -o "$TMP/fd2" "$UT/events" threads 8 10000 \
	>/dev/null 2>"$TMP/fd2.err")
rc=$?
[ $rc -eq 0 ] && [ "$(count "$TMP/fd2" user:mark)" -eq 80000 ] && [ ! -s "$TMP/fd2.err" ]
ok $? "a soft descriptor limit: ktrace-run takes the hard one for itself, every event" \
	"exit $rc; $(head -c 300 "$TMP/fd2.err")"
# (sh records nothing: ktrace-run says so, and nothing else)
out=$(ulimit -S -n 14 && timeout 60 "$KTRACE_RUN" -o "$TMP/fd3" sh -c 'ulimit -S -n' 2>"$TMP/fd3.err")
[ "$out" = 14 ] && [ "$(wc -l <"$TMP/fd3.err")" -eq 1 ] &&
	grep -q "^ktrace-run: warning: sh recorded nothing, no trace file in $TMP/fd3: " "$TMP/fd3.err"
ok $? "... and the command still gets the soft limit it was given" "$out; $(cat "$TMP/fd3.err")"

# ---- address space: ktrace-run cannot map the rings ----
if command -v prlimit >/dev/null; then
	rm -rf "$TMP/as"
	mkfifo "$TMP/go"
	timeout 60 "$KTRACE_RUN" -o "$TMP/as" sh -c "read x <'$TMP/go'; exec '$UT/events' threads 4 100000" \
		>/dev/null 2>"$TMP/as.err" &
	tpid=$!
	sleep 0.3
	krun=$(pgrep -P $tpid)
	vsz=$(awk '/^VmSize/ { print $2 }' /proc/$krun/status)
	prlimit --pid $krun --as=$(((vsz + 1024) * 1024))
	echo go >"$TMP/go"
	wait $tpid
	rc=$?
	[ $rc -eq 0 ] && [ "$(count "$TMP/as" user:mark)" -eq 400000 ] &&
		grep -q "ktrace-run: warning: .*/ring\.[0-9.]*: mmap: Cannot allocate memory; its records are read through its file instead" "$TMP/as.err"
	ok $? "RLIMIT_AS: rings ktrace-run cannot map are drained through their files, every event" \
		"exit $rc, $(count "$TMP/as" user:mark) events; $(head -c 600 "$TMP/as.err")"
else
	ok 0 "RLIMIT_AS # SKIP no prlimit"
fi
# ---- mappings: vm.max_map_count ----
# The sysctl is the whole machine's: not changed here.  What ktrace-run
# sees when it is reached, mmap failing with ENOMEM whatever the size, is
# made by a preloaded shim, in ktrace-run only (the command gets
# LD_PRELOAD too): every shared file mapping after the first 3 (the control
# page and two rings) fails, the one page of a ring's header too.
cat >"$TMP/maps-shim.c" <<'EOC'
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static int maps;

	if (!strcmp(program_invocation_short_name, "ktrace-run") && (flags & MAP_SHARED) &&
	    fd >= 0 && __atomic_add_fetch(&maps, 1, __ATOMIC_RELAXED) > 3) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
EOC
if cc -shared -fPIC -o "$TMP/maps-shim.so" "$TMP/maps-shim.c" 2>"$TMP/maps-shim.log"; then
	rm -rf "$TMP/maps"
	LD_PRELOAD=$TMP/maps-shim.so timeout 60 "$KTRACE_RUN" -o "$TMP/maps" "$UT/events" threads 4 100000 \
		>"$TMP/maps.out" 2>"$TMP/maps.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(cat "$TMP/maps.out")" = "user:work 400000" ] &&
		[ "$(count "$TMP/maps" user:mark)" -eq 400000 ] && [ "$(lost "$TMP/maps")" -eq 0 ] &&
		grep -q "ktrace-run: warning: .*/ring\.[0-9.]*: mmap: Cannot allocate memory; its records are read through its file instead" "$TMP/maps.err"
	ok $? "no mapping left (max_map_count): rings drained through their files, every event, the ring named, exit 0" \
		"exit $rc, $(count "$TMP/maps" user:mark) events; $(cat "$TMP/maps.out"; head -c 600 "$TMP/maps.err")"
else
	ok 1 "no mapping left (max_map_count): build the mmap shim" "$(cat "$TMP/maps-shim.log")"
fi

# ---- thousands of live threads ----
rm -rf "$TMP/live"
out=$(timeout 120 "$KTRACE_RUN" -b 1024 -o "$TMP/live" "$UT/hostile-ring" live 3000 2>"$TMP/live.err")
rc=$?
[ $rc -eq 0 ] && [ "$out" = "live 3000" ] && [ "$(ls "$TMP"/live/trace.pid*.tid* | wc -l)" -eq 3000 ] &&
	[ "$(count "$TMP/live" user:mark)" -eq 3000 ] && [ ! -s "$TMP/live.err" ]
ok $? "3000 live threads: 3000 files, every event, nothing said" "exit $rc: $out; $(head -c 300 "$TMP/live.err")"

done_testing
