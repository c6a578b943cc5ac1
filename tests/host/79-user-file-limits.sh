#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Standalone libktrace (KTRACE_USER_DIR) when its files cannot grow:
# RLIMIT_FSIZE (ulimit -f) and a full file system (a small tmpfs in a
# private mount namespace).  Every run is under a timeout.
#  - RLIMIT_FSIZE under the trace files (threads, a main thread that ends
#    by return): the program is not killed by SIGXFSZ, its exit status and
#    output are those of an unlimited run; every file stays under the limit
#    and ends on a whole record (its size), all its records readable
#    (dtrace -S); what it lacks is counted: its records plus the count the
#    library gives for it are the thread's N events; the limit is said once.
#  - RLIMIT_FSIZE under the map file: no SIGXFSZ, the trace file is whole,
#    the map file stays under the limit and ends on a whole line, the loss
#    is said once, naming the file.
#  - RLIMIT_FSIZE under a header: no SIGXFSZ, the program runs on, and no
#    header-less trace file is left.
#  - stderr a file already at the limit: the library's messages are not
#    written (a write would be a SIGXFSZ); the program runs on.
#  - a 64 KiB tmpfs with 0 to 15 of its pages taken: at every level the
#    program runs on, the map file ends on a whole line (dtrace says no
#    "line not understood"), and where it has fewer lines than with room,
#    and only there, the library says once that it is cut short, naming
#    it; at least one level cuts it.
. "$(dirname "$0")/user-common.sh"

N=100000
BLOCKS=100
LIMIT=$((BLOCKS * 1024))
HDR=512
REC=24

# limited BLOCKS NAME CMD...: CMD standalone into $TMP/NAME under ulimit -f
limited() {
	local blocks=$1 name=$2
	shift 2
	rm -rf "${TMP:?}/$name"
	(ulimit -f "$blocks" && KTRACE_USER_DIR=$TMP/$name LD_PRELOAD=$LIBKTRACE \
		exec timeout -k 5 60 "$@") >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# files_ok NAME N: each thread file of $TMP/NAME is under the limit, ends
# on a whole record, all of its records readable, and holds N records
# with those the library says are not in it
files_ok() {
	local f size recs n miss
	for f in "$TMP/$1"/trace.pid*.tid*; do
		[ -e "$f" ] || { echo "no trace file"; return 1; }
		size=$(stat -c %s "$f")
		recs=$(((size - HDR) / REC))
		[ "$size" -le $LIMIT ] && [ $(((size - HDR) % REC)) -eq 0 ] ||
			{ echo "$f: $size bytes"; return 1; }
		n=$("$DTRACE" -S "$f" 2>/dev/null | awk '$1 == "user:mark" { print $2 }')
		[ "${n:-0}" -eq $recs ] || { echo "$f: $recs records, ${n:-0} read"; return 1; }
		miss=$(sed -n "s|^libktrace: $f: \([0-9]*\) records of this thread are not in it$|\1|p" \
			"$TMP/$1.err")
		[ $((recs + ${miss:-0})) -eq "$2" ] ||
			{ echo "$f: $recs records + ${miss:-0} not in it != $2"; return 1; }
	done
}

# ---- RLIMIT_FSIZE under the trace files ----
for run in "threads 4 $N" "end return $N"; do
	name=fs-${run%% *}
	rm -rf "$TMP/ref"
	KTRACE_USER_DIR=$TMP/ref LD_PRELOAD=$LIBKTRACE timeout -k 5 60 "$UT/events" $run \
		>"$TMP/ref.out" 2>&1
	ref_rc=$?
	limited $BLOCKS "$name" "$UT/events" $run
	rc=$?
	[ $rc -eq $ref_rc ] && cmp -s "$TMP/ref.out" "$TMP/$name.out"
	ok $? "ulimit -f $BLOCKS, events $run: no SIGXFSZ, exit and output as unlimited" \
		"exit $rc (unlimited $ref_rc): $(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 400)"
	files_ok "$name" $N >"$TMP/files" 2>&1
	ok $? "... each file under the limit, whole records, all read; records + those counted = $N" \
		"$(cat "$TMP/files"; ls -l "$TMP/$name")"
	[ "$(grep -c "RLIMIT_FSIZE ($LIMIT bytes) reached" "$TMP/$name.err")" -eq 1 ]
	ok $? "... the limit said once" "$(head -c 600 "$TMP/$name.err")"
done

# ---- RLIMIT_FSIZE under the map file (2 KiB; it is 4 to 8) ----
limited 2 maps "$UT/events" end return 10
rc=$?
m=$(ls "$TMP"/maps/trace.pid*.maps 2>/dev/null)
[ $rc -eq 0 ] && [ "$(count "$TMP/maps" user:mark)" -eq 10 ] && [ -n "$m" ] &&
	[ "$(stat -c %s "$m")" -le 2048 ] && [ "$(tail -c 1 "$m" | od -An -c | tr -d ' ')" = '\n' ]
ok $? "ulimit -f 2: no SIGXFSZ, exit 0, all 10 events; the map file under it, on a whole line" \
	"exit $rc: $(head -c 400 "$TMP/maps.err"); $(ls -l "$TMP/maps"); $(tail -c 40 "$m" | od -c)"
[ "$(cat "$TMP/maps.err")" = "libktrace: $m: cannot write the map, its last snapshot is cut short (dtrace may leave addresses unnamed): File too large" ]
ok $? "... said once, naming the map file" "$(head -c 600 "$TMP/maps.err")"

# ---- RLIMIT_FSIZE 0: not even a header (output through a pipe: the
# program's own write to a file would be a SIGXFSZ) ----
rm -rf "$TMP/zero"
(ulimit -f 0 && KTRACE_USER_DIR=$TMP/zero LD_PRELOAD=$LIBKTRACE \
	exec timeout -k 5 60 "$UT/events" threads 2 1000) 2>&1 | cat >"$TMP/zero.out"
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] && grep -qx "user:work 2000" "$TMP/zero.out" &&
	[ "$(grep -c "^libktrace: $TMP/zero/trace\.pid[0-9]*\.tid[0-9]*: cannot create: File too large$" "$TMP/zero.out")" -eq 2 ] &&
	! ls "$TMP"/zero/trace.pid*.tid* >/dev/null 2>&1
ok $? "ulimit -f 0: no SIGXFSZ, exit 0, the output; each thread's file said, none left header-less" \
	"exit $rc: $(head -c 600 "$TMP/zero.out"); $(ls -l "$TMP/zero")"

# ---- stderr at the limit: messages not written ----
head -c $LIMIT /dev/zero >"$TMP/full.err"
rm -rf "$TMP/full"
(ulimit -f $BLOCKS && KTRACE_USER_DIR=$TMP/full LD_PRELOAD=$LIBKTRACE \
	exec timeout -k 5 60 "$UT/events" threads 2 $N) >"$TMP/full.out" 2>>"$TMP/full.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/full.out")" = "user:work $((2 * N))" ] &&
	[ "$(stat -c %s "$TMP/full.err")" -eq $LIMIT ]
ok $? "stderr a file at the limit: no SIGXFSZ from a message, exit 0, the output" \
	"exit $rc: $(cat "$TMP/full.out"); stderr $(stat -c %s "$TMP/full.err") bytes"

# ---- a full file system under the map file ----
if ! unshare -m true 2>/dev/null; then
	skip "a full file system under the map file" "no mount namespaces here (needs root)"
	done_testing
	exit
fi
# in_tmpfs PAGES NAME: events end return 10 into a 64 KiB tmpfs with PAGES
# pages taken; what it wrote is copied to $TMP/NAME
in_tmpfs() {
	rm -rf "${TMP:?}/$2"
	mkdir "$TMP/$2"
	# $0 pages, $1 where to copy, $2 the mount point, $3 libktrace, $4 the program
	timeout -k 5 60 unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$2" || exit 99
		mkdir "$2/d"
		[ "$0" -eq 0 ] || dd if=/dev/zero of="$2/fill" bs=4096 count="$0" 2>/dev/null
		KTRACE_USER_DIR=$2/d LD_PRELOAD=$3 "$4" end return 10; rc=$?
		cp -p "$2"/d/* "$1"/ 2>/dev/null; exit $rc' \
		"$1" "$TMP/$2" "$TMP/mnt" "$LIBKTRACE" "$UT/events" >"$TMP/$2.out" 2>"$TMP/$2.err"
}
mkdir -p "$TMP/mnt"
in_tmpfs 0 room
# lines, not bytes: the pid's digits differ from run to run
full=$(cat "$TMP"/room/trace.pid*.maps 2>/dev/null | wc -l)
bad= cut=0
for pages in $(seq 0 15); do
	in_tmpfs "$pages" p$pages
	rc=$?
	m=$(ls "$TMP"/p$pages/trace.pid*.maps 2>/dev/null)
	size=$(stat -c %s "$m" 2>/dev/null || echo 0)
	lines=$(cat "$m" 2>/dev/null | wc -l)
	said=$(grep -c "^libktrace: $TMP/mnt/d/trace\.pid[0-9]*\.maps: cannot write the map, its last snapshot is cut short (dtrace may leave addresses unnamed): No space left on device$" "$TMP/p$pages.err")
	"$DTRACE" "$TMP"/p$pages/trace.* >/dev/null 2>"$TMP/p$pages.dtrace"
	if [ $rc -ne 0 ]; then
		bad="$bad; $pages pages: exit $rc"
	elif [ "$size" -gt 0 ] && [ "$(tail -c 1 "$m" | od -An -c | tr -d ' ')" != '\n' ]; then
		bad="$bad; $pages pages: the map file ends in a torn line ($size bytes)"
	elif grep -q "not understood" "$TMP/p$pages.dtrace"; then
		bad="$bad; $pages pages: $(head -c 200 "$TMP/p$pages.dtrace")"
	elif [ "$lines" -lt "$full" ] && [ "$said" -ne 1 ]; then
		bad="$bad; $pages pages: cut to $lines lines of $full, said $said times: $(head -c 300 "$TMP/p$pages.err")"
	elif [ "$lines" -ge "$full" ] && [ "$said" -ne 0 ]; then
		bad="$bad; $pages pages: whole, but said cut"
	fi
	[ "$lines" -ge "$full" ] || cut=$((cut + 1))
done
[ "$full" -gt 0 ] && [ -z "$bad" ]
ok $? "a 64 KiB tmpfs, 0-15 pages taken: exit 0, the map file on whole lines, a cut said once" \
	"map file with room: $full lines$bad"
[ $cut -ge 1 ]
ok $? "... at least one level cut the map file ($cut)" "no level cut it: the test tests nothing"

done_testing
