#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --format=ctf: babeltrace2 reads the CTF trace without a warning
# (but the discarded events the lost records are), and what it reads is
# what dtrace prints: the same events, in the same order, with the same
# fields (export-check.py prints babeltrace's events again through the
# event table's formats), the same times, the same lost counts.
. "$(dirname "$0")/dtrace-common.sh"
CHECK=$ROOT/tests/host/export-check.py

if ! command -v babeltrace2 >/dev/null || ! command -v python3 >/dev/null; then
	skip "CTF, read back by babeltrace2" "babeltrace2 or python3 not installed (scripts/deps.sh)"
	done_testing
	exit
fi
"$DTRACE" -l >"$TMP/list"

# ctf NAME SET dtrace-args...: TMP/NAME.ctf, and babeltrace2's view of it in
# TMP/NAME.bt (cycles) and TMP/NAME.err, dtrace's in TMP/NAME.txt
ctf() {
	local name=$1 set=$2
	shift 2
	"$DTRACE" --format=ctf -o "$TMP/$name.ctf" "$@" "$TMP/$set"/t.* &&
		"$DTRACE" --tsc --raw "$@" "$TMP/$set"/t.* >"$TMP/$name.txt" &&
		babeltrace2 --clock-cycles --no-delta "$TMP/$name.ctf" >"$TMP/$name.bt" 2>"$TMP/$name.err"
}

# same NAME ORDER [--stream S]: babeltrace2 and dtrace agree
same() {
	local name=$1
	shift
	python3 "$CHECK" ctf "$TMP/list" "$TMP/$name.txt" "$TMP/$name.bt" --order "$@" \
		>"$TMP/$name.diff" 2>&1
}

# only_discarded NAME: babeltrace2 said nothing but discarded events
only_discarded() {
	! grep -v '^WARNING: Tracer discarded [0-9]* events between' "$TMP/$1.err" >/dev/null
}

gen mixed -s 2 -c 3 -u 2 -n 30 -l 3 -U 150
gen clean -s 5 -c 2 -u 1 -n 200 -U 100
gen big -s 7 -c 2 -u 1 -n 10000 -l 5 -U 20
gen slow -s 4 -c 2 -n 15 --hz 2400000000 --step 100000
gen swapped -s 2 -c 3 -u 2 -n 30 -l 3 -U 150 --swap

# a trace without lost records: not a word on stderr
ctf clean clean
ok $? "clean: written and read by babeltrace2" "$(head -c 600 "$TMP/clean.err")"
[ ! -s "$TMP/clean.err" ]
ok $? "clean: babeltrace2 gives no warning" "$(head -c 600 "$TMP/clean.err")"
same clean exact
ok $? "clean: same events, order and fields as dtrace" "$(cat "$TMP/clean.diff")"
[ "$(cd "$TMP/clean.ctf" && echo *)" = "cpu0 cpu1 metadata tid5000" ]
ok $? "clean: metadata and one stream file per input file" "$(ls "$TMP/clean.ctf")"
head -n 1 "$TMP/clean.ctf/metadata" | grep -qF '/* CTF 1.8 */'
ok $? "clean: CTF 1.8 metadata"
grep -q 'sched:switch: { cpu_id = [0-9]* }, { tid = [0-9]*, comm = "[^"]*" }, { from_task = [0-9]*, to_task = [0-9]*, state = 0x[0-9A-F]*, prio = -*[0-9]* }' \
	"$TMP/clean.bt" &&
	grep -q 'unknown: .*{ code = 0x[0-9A-F]*, nr_args = [0-9]*, args = \[ \[0\] = ' "$TMP/clean.bt" &&
	grep -q 'user:mark: { pid = 5000, tid = 5000 }, { tid = 5000, comm = "ktgen-user" }, { mark = ' "$TMP/clean.bt"
ok $? "clean: named fields, unknown events, CPU and thread contexts" "$(head -n 5 "$TMP/clean.bt")"
# the task's name as dtrace prints it at that event (comm-tid), from the trace's names
"$DTRACE" --tsc "$TMP"/clean/t.* | awk '$4 != "meta:lost" { n = $3; sub(/-[0-9]+$/, "", n);
	sub(/.*-/, "", $3); print $2, $3, n }' | sort >"$TMP/comm.want"
sed -n 's/^\[0*\([0-9]*\)\] [^ ]* [^ ]* .*{ tid = \([0-9]*\), comm = "\([^"]\{1,\}\)" }.*/\1 \2 \3/p' \
	"$TMP/clean.bt" | sort >"$TMP/comm.got"
[ -s "$TMP/comm.want" ] && diff "$TMP/comm.want" "$TMP/comm.got" >"$TMP/comm.diff"
ok $? "clean: each event's comm is its task's name then, as dtrace's listing has it" \
	"$(head -n 5 "$TMP/comm.diff")"

# user streams and CPUs, unknown events, lost records
ctf mixed mixed
ok $? "mixed: written and read" "$(head -c 600 "$TMP/mixed.err")"
only_discarded mixed
ok $? "mixed: babeltrace2 warns of nothing but the lost records" "$(head -c 600 "$TMP/mixed.err")"
same mixed exact
ok $? "mixed: same events, order and fields as dtrace" "$(cat "$TMP/mixed.diff")"
# each lost marker is one discarded-events report of its stream, with its count
for f in "$TMP"/mixed/t.*; do
	s=${f##*.}
	case $s in cpu*) ;; user*) s=tid$((5000 + ${s#user})) ;; esac
	"$DTRACE" --raw "$f" | awk -v s="$s" '$4 == "meta:lost" { print s, $5 }'
done | sort >"$TMP/lost.want"
sed -n 's/.*discarded \([0-9]*\) events.*within stream ".*\/\([^"/]*\)".*/\2 \1/p' \
	"$TMP/mixed.err" | sort >"$TMP/lost.got"
[ -s "$TMP/lost.want" ] && diff "$TMP/lost.want" "$TMP/lost.got" >"$TMP/lost.diff"
ok $? "mixed: babeltrace2 reports each lost marker's count in its stream" \
	"$(cat "$TMP/lost.diff")"
# stream by stream, in the file's own order
rc=0
for f in "$TMP"/mixed/t.*; do
	s=${f##*.}
	case $s in cpu*) s=cpu=${s#cpu} ;; user*) s=tid=$((5000 + ${s#user})) ;; esac
	"$DTRACE" --tsc --raw "$f" >"$TMP/mixed.txt"
	same mixed exact --stream "$s" || { rc=1; break; }
done
ok $rc "mixed: each stream the same as its file" "$s: $(cat "$TMP/mixed.diff")"

# byte-swapped input: the same trace
# a %s argument (thread:name's name) is a CTF string, not words of hex
grep -q 'thread:name: .* named = "[a-z]' "$TMP/mixed.bt" && ! grep -q 'named = 0x' "$TMP/mixed.bt"
ok $? "mixed: thread:name's name is a string field"
ctf swapped swapped && cmp -s "$TMP/swapped.bt" "$TMP/mixed.bt"
ok $? "swapped input files: the same CTF events"

# many packets per stream (events_discarded counts on across them)
ctf big big
ok $? "big: written and read" "$(head -c 600 "$TMP/big.err")"
[ "$(stat -c %s "$TMP/big.ctf/cpu0")" -gt 200000 ] && only_discarded big
ok $? "big: several packets a stream, no other warning" "$(head -c 600 "$TMP/big.err")"
same big tsc
ok $? "big: same events and times as dtrace" "$(cat "$TMP/big.diff")"
total=$(sed -n 's/.*discarded \([0-9]*\) events.*/\1/p' "$TMP/big.err" | awk '{ n += $1 } END { printf "%.0f\n", n }')
"$DTRACE" -S "$TMP"/big/t.* | grep -q "^lost  *$total records"
ok $? "big: babeltrace2's discarded events are dtrace's lost records ($total)"

# filters apply
n=0
for args in "-e sched,thread,fault" "-c 1-2" "-t 1000-1004,5001" "--from 10 --to 20.5" \
	    "-e -syscall,-irq,-user"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	ctf filter$n mixed $args && only_discarded filter$n && same filter$n tsc
	ok $? "filter $args: the events dtrace shows" "$(cat "$TMP/filter$n.diff" "$TMP/filter$n.err")"
done
# no event passes (but the lost markers): the streams are there, empty
ctf none mixed -e mm,ipc -t 1
ok $? "no event passes: a trace babeltrace2 reads" "$(head -c 600 "$TMP/none.err")"
! grep -qv ' meta:lost: ' "$TMP/none.bt" && only_discarded none && same none exact
ok $? "no event passes: nothing but the lost records" "$(head -n 5 "$TMP/none.bt")"

# absolute time: the clock's offset is the files' CLOCK_REALTIME reference
babeltrace2 --clock-date --clock-gmt --no-delta "$TMP/mixed.ctf" 2>/dev/null |
	sed 's/^\[\([^]]*\)\].*/\1/' >"$TMP/abs.bt"
"$DTRACE" --absolute "$TMP"/mixed/t.* | awk '{ sub("T", " ", $2); print $2 }' >"$TMP/abs.txt"
diff "$TMP/abs.txt" "$TMP/abs.bt" >"$TMP/abs.diff"
ok $? "1 GHz: babeltrace2's wall clock times are dtrace --absolute's" "$(head "$TMP/abs.diff")"
ctf slow slow
babeltrace2 --clock-date --clock-gmt --no-delta "$TMP/slow.ctf" 2>/dev/null |
	sed 's/^\[\([^]]*\)\].*/\1/' >"$TMP/abs.bt"
"$DTRACE" --absolute "$TMP"/slow/t.* | awk '{ sub("T", " ", $2); print $2 }' >"$TMP/abs.txt"
python3 - "$TMP/abs.txt" "$TMP/abs.bt" <<'EOF'
import sys
from datetime import datetime
def ns(s):
    d, frac = s.split(".")
    return int(datetime.fromisoformat(d).timestamp()) * 10**9 + int(frac)
a, b = (open(p).read().split("\n") for p in sys.argv[1:])
sys.exit(len(a) != len(b) or any(abs(ns(x) - ns(y)) > 2 for x, y in zip(a, b) if x))
EOF
ok $? "2.4 GHz: wall clock times within 2 ns (babeltrace2 rounds the offset apart)"

# the same files make the same trace
"$DTRACE" --format=ctf -o "$TMP/again.ctf" "$TMP"/mixed/t.* && diff -r "$TMP/mixed.ctf" "$TMP/again.ctf" >/dev/null
ok $? "the same files give the same CTF trace, byte for byte"

expect_error "ctf without -o" "give it with -o DIR" "$DTRACE" --format=ctf "$TMP"/mixed/t.*
expect_error "ctf into a directory in use" "not empty" \
	"$DTRACE" --format=ctf -o "$TMP/mixed.ctf" "$TMP"/mixed/t.*
expect_error "ctf into a file" "Not a directory" \
	"$DTRACE" --format=ctf -o "$TMP/list" "$TMP"/mixed/t.*
expect_error "unknown format" "unknown format 'xml'" "$DTRACE" --format=xml "$TMP"/mixed/t.*

done_testing
