#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace's command line: help, version, list, and every usage error.
. "$(dirname "$0")/dtrace-common.sh"

"$KTGEN" -c 2 -n 10 "$TMP/t" >/dev/null
T="$TMP/t.cpu0 $TMP/t.cpu1"

usage_error() {	# usage_error DESCRIPTION TEXT ARGS...: exit 2 and TEXT
	local desc=$1 text=$2 rc
	shift 2
	"$DTRACE" "$@" >/dev/null 2>"$TMP/usage.txt"
	rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$text" "$TMP/usage.txt" && grep -q '^dtrace: ' "$TMP/usage.txt"
	ok $? "usage error: $desc" "exit $rc: $(head -c 300 "$TMP/usage.txt")"
}

"$DTRACE" -h >"$TMP/help" 2>&1
ok $? "-h exits 0"
for o in --events --cpu --tid --from --to --summary --tsc --absolute --output --force \
	 --no-pager --jobs --list --help --version; do
	grep -q -- "$o" "$TMP/help" || break
done
ok $? "--help lists every option" "missing $o"
"$DTRACE" --version | grep -q '^dtrace (ktrace) [0-9]'
ok $? "--version"
# the old spellings still work, unlisted: the same output as the new ones
"$KTGEN" -s 2 -c 3 -n 30 "$TMP/a" >/dev/null
"$DTRACE" --cpu 1-2 --tid 1000-1004 "$TMP"/a.* >"$TMP/new" &&
	"$DTRACE" --cpus 1-2 --tids 1000-1004 "$TMP"/a.* >"$TMP/old" &&
	[ -s "$TMP/new" ] && cmp -s "$TMP/new" "$TMP/old" &&
	! "$DTRACE" --cpu 0 "$TMP"/a.* | cmp -s - "$TMP/new" &&
	! grep -q -- '--cpus\|--tids' "$TMP/help"
ok $? "--cpus and --tids: hidden aliases of --cpu and --tid"
"$DTRACE" -l >"$TMP/list"
grep -q '^sched ' "$TMP/list" && grep -q 'switch .*context switch from task %T' "$TMP/list"
ok $? "-l lists groups and events with formats"

usage_error "no files" "no trace files given"
usage_error "unknown short option" "unknown option '-Z'" -Z $T
usage_error "unknown long option" "unknown option '--bogus'" --bogus $T
usage_error "missing argument" "needs an argument" $T -e
usage_error "unknown group" "no group 'bogus'" -e sched,bogus $T
usage_error "mask above bit 21" "not a mask of bits" -e 0x400000 $T
usage_error "empty mask item" "empty" -e sched,,irq $T
usage_error "bad cpu list" "bad cpu list '1-x'" -c 1-x $T
usage_error "reversed cpu range" "bad cpu list '3-1'" -c 3-1 $T
usage_error "cpu out of range" "cpu 99999 out of range" -c 99999 $T
usage_error "bad tid list" "bad tid list" -t abc $T
usage_error "bad time" "bad time '5xs'" --from 5xs $T
usage_error "negative time" "bad time" --to -3 $T
usage_error "--to before --from" "--to is before --from" --from 10 --to 5 $T
usage_error "--tsc with --absolute" "do not go together" --tsc --absolute $T
usage_error "zero jobs" "bad number of jobs '0'" -j 0 $T
usage_error "jobs not a number" "bad number of jobs" -j two $T

expect_error "missing file is named" "$TMP/nope: No such file or directory" "$DTRACE" "$TMP/nope"
expect_error "a directory is not a trace file" "$TMP: " "$DTRACE" "$TMP"
expect_error "unwritable -o is named" "$TMP/no/dir/out: No such file" \
	"$DTRACE" -o "$TMP/no/dir/out" $T
if [ -w /dev/full ]; then
	expect_error "write error is reported" "write error" "$DTRACE" -o /dev/full $T
fi
"$DTRACE" -e 0 $T >"$TMP/none"
[ $? -eq 0 ] && [ ! -s "$TMP/none" ]
ok $? "-e 0 shows no event and succeeds"

done_testing
