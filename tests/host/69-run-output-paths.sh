#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace-run -o as root where others can write: a symbolic link planted by
# another user (nobody) as DIR or on the way to it is not followed (ground
# truth: the directory it names stays empty); links of the user are; a
# trace file name already taken (a planted link or file) is never written
# through: the thread's file gets a suffix, the planted target is intact.
. "$(dirname "$0")/user-common.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip_all "needs root and setpriv (a link of another user)"
fi
PUB=$(mktemp -d /tmp/ktrace-run-paths.XXXXXX)
trap 'rm -rf "$TMP" "$PUB"' EXIT
chmod 1777 "$PUB"
mkdir -m 755 "$PUB/rootdir"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

nobody ln -s "$PUB/rootdir" "$PUB/L"
timeout 30 "$KTRACE_RUN" -o "$PUB/L" "$UT/events" threads 1 10 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "ktrace-run: $PUB/L: a symbolic link of another user (uid 65534): not followed" "$TMP/err" &&
	[ -z "$(ls -A "$PUB/rootdir")" ]
ok $? "-o a link planted by another user: refused, named, nothing written where it points" \
	"exit $rc: $(cat "$TMP/err"); $(ls -A "$PUB/rootdir")"

timeout 30 "$KTRACE_RUN" -o "$PUB/L/sub" "$UT/events" threads 1 10 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "$PUB/L: a symbolic link of another user" "$TMP/err" && [ -z "$(ls -A "$PUB/rootdir")" ]
ok $? "-o through such a link: refused, nothing made under it" "exit $rc: $(cat "$TMP/err")"

ln -s "$PUB/rootdir" "$PUB/mine"
timeout 30 "$KTRACE_RUN" -o "$PUB/mine" "$UT/events" threads 1 10 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(count "$PUB/rootdir" user:mark)" -eq 10 ]
ok $? "-o a link of the user's own: followed" "exit $rc: $(cat "$TMP/err")"
rm -f "$PUB"/rootdir/*

# a name taken before the thread's file is made: a link, and a file
printf 'precious\n' >"$TMP/victim"
mkdir -m 700 "$TMP/taken"
coproc PLANT { timeout 30 "$KTRACE_RUN" -o "$TMP/taken" "$UT/events" wait-go 10 2>"$TMP/err"; }
read -r _ pid _ <&"${PLANT[0]}"
ln -s "$TMP/victim" "$TMP/taken/trace.pid$pid.tid$pid"
ln -s "$TMP/victim" "$TMP/taken/trace.pid$pid.tid$pid.1"
echo go >&"${PLANT[1]}"
wait $PLANT_PID
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$TMP/victim")" = precious ] &&
	"$DTRACE" -S "$TMP/taken/trace.pid$pid.tid$pid.2" | grep -q '^ *user:mark  *10$' &&
	[ -f "$TMP/taken/trace.pid$pid.tid$pid.2" ] && [ -L "$TMP/taken/trace.pid$pid.tid$pid" ]
ok $? "trace file names taken by links: never written through, the events in a suffixed file" \
	"exit $rc: $(cat "$TMP/err")"
[ "$(find "$TMP/taken" -type f -name 'trace.pid*.tid*' -perm 600 | wc -l)" -eq 1 ]
ok $? "the new trace files are 0600" "$(ls -l "$TMP/taken" | grep -v ' -> ' | head)"

done_testing
