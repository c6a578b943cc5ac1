#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --format=perfetto-json: well-formed Trace Event Format JSON whose slices
# nest on every track; its instants are dtrace's events (same times, same
# order, same text), its CPU slices the context switches, its call slices
# every func:entry and exit (repaired where the trace is unbalanced), its
# lost instants the lost records; names; filters; memory stays small.
. "$(dirname "$0")/dtrace-common.sh"
CHECK=$ROOT/tests/host/export-check.py

if ! command -v python3 >/dev/null; then
	skip "Perfetto JSON, read back" "python3 not installed (scripts/deps.sh)"
	done_testing
	exit
fi

# json NAME FILES dtrace-args...: TMP/NAME.json, dtrace's text in TMP/NAME.txt and
# export-check's findings in TMP/NAME.check; --raw: export-check prints the
# fields as numbers (without it, the texts name syscalls, signals and so on)
json() {
	local name=$1 files=$2
	shift 2
	# shellcheck disable=SC2086
	"$DTRACE" --format=perfetto-json --raw -o "$TMP/$name.json" "$@" $files 2>"$TMP/$name.err" &&
		"$DTRACE" --raw "$@" $files >"$TMP/$name.txt" 2>/dev/null &&
		python3 "$CHECK" perfetto "$TMP/$name.json" --text "$TMP/$name.txt" \
			--list "$TMP/list" >"$TMP/$name.check"
}

has() {	# has NAME LINE: export-check found LINE
	grep -qxF -- "$2" "$TMP/$1.check"
}

"$DTRACE" -l >"$TMP/list"
gen mixed -s 2 -c 3 -u 2 -n 30 -l 3 -U 150
gen slow -s 4 -c 2 -u 1 -n 200 --hz 2400000000 --step 100000
gen medium -s 7 -c 4 -u 2 -n 5000 -l 20 -U 20
gen big -s 8 -c 4 -u 2 -n 50000 -l 20 -U 20

json mixed "$TMP/mixed/t.*"
ok $? "mixed: well-formed, nested, the events of dtrace with their fields" "$(grep bad: "$TMP/mixed.check")"
# a %s argument (thread:name's name) is a JSON string, the name the text says
python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "thread:name"]
sys.exit(not ev or any(e["args"]["fields"]["named"] != e["args"]["text"].rsplit(" ", 1)[1]
                       for e in ev))' "$TMP/mixed.json"
ok $? "mixed: thread:name's name is a string field, as in the text"
head -c 45 "$TMP/mixed.json" | grep -qF '{"displayTimeUnit":"ns","traceEvents":[' &&
	python3 -m json.tool "$TMP/mixed.json" >/dev/null
ok $? "mixed: a JSON object with traceEvents, in ns"
# not raw: the instants' texts are dtrace's decoded ones, the fields numbers
"$DTRACE" --format=perfetto-json -o "$TMP/decoded.json" "$TMP"/mixed/t.* &&
	"$DTRACE" "$TMP"/mixed/t.* >"$TMP/decoded.txt" &&
	python3 "$CHECK" perfetto "$TMP/decoded.json" --text "$TMP/decoded.txt" >"$TMP/decoded.check" &&
	grep -q '"text":"syscall [a-z_0-9]* e[a-z]*t, [^"]*","fields":{"syscall":[0-9]*,' "$TMP/decoded.json" &&
	grep -q '"text":"[^"]* task [^" ]*-[0-9][0-9]*[ ,"]' "$TMP/decoded.json"
ok $? "mixed, decoded: the texts of dtrace with names, the fields numbers" \
	"$(grep bad: "$TMP/decoded.check")"
has mixed "thread_name_5000_5001=ktgen-user" && has mixed "process_name_5000_5000=ktgen-user" &&
	has mixed "thread_name_4194304_4194306=CPU 2" && has mixed "process_name_4194304_4194304=CPUs"
ok $? "mixed: names of the threads, the process and the CPUs"
want=$("$DTRACE" -S "$TMP"/mixed/t.* | awk '$1 == "lost" { print $2 }')
has mixed "lost=$want"
ok $? "mixed: lost records marked ($want)"
grep -q '"ph":"B","name":"task \([0-9]*\)","pid":4194304,"tid":419430[4-6],"ts":[0-9.]*,"args":{"tid":\1}}' \
	"$TMP/mixed.json"
ok $? "mixed: CPU tracks show the tasks that ran"

json slow "$TMP/slow/t.*"
ok $? "2.4 GHz: the times of dtrace, in us with ns precision" "$(grep bad: "$TMP/slow.check")"
grep -q '"ts":[0-9]*\.[0-9][0-9][0-9],' "$TMP/slow.json" && ! grep -q '"ts":[0-9]*[,}]' "$TMP/slow.json"
ok $? "2.4 GHz: every time has three decimals"

# unbalanced calls, repaired so that slices nest: written by hand
mkdir "$TMP/calls" "$TMP/fork"
python3 "$CHECK" mkfile "$TMP/calls/t.user0" -1 700 701 'my "prog"' <<'EOF'
# func:entry 0x01001000, func:exit 0x02001000, then CONT|END with the call site
1000 0x01001000 701 0xa 0
1000 0x00c00000 701 0x100 0
2000 0x01001000 701 0xb 0
2000 0x00c00000 701 0x101 0
3000 0x01001000 701 0xc 0
3000 0x00c00000 701 0x102 0
# c returns; then a returns while b had no exit (longjmp)
4000 0x02001000 701 0xc 0
4000 0x00c00000 701 0x102 0
5000 0x02001000 701 0xa 0
5000 0x00c00000 701 0x100 0
# f returns but was entered before the trace started
6000 0x02001000 701 0xf 0
6000 0x00c00000 701 0x103 0
6500 0x01000800 701 1 2
# d and e still run at the end
7000 0x01001000 701 0xd 0
7000 0x00c00000 701 0x104 0
8000 0x01001000 701 0xe 0
8000 0x00c00000 701 0x105 0
EOF
json calls "$TMP/calls/t.user0"
ok $? "unbalanced calls: slices nest, every entry and exit accounted for" \
	"$(grep bad: "$TMP/calls.check")"
python3 - "$TMP/calls.json" >"$TMP/calls.steps" <<'EOF'
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] != "M":
        a = e.get("args", {})
        print(e["ph"], e.get("name", "-"), "%.3f" % e["ts"], a.get("repaired", a.get("text", "")))
EOF
cat >"$TMP/calls.want" <<'EOF'
i user:mark 5.500 user mark 1 2
B 0xf 0.000 entered before the trace started
B 0xa 0.000 
B 0xb 1.000 
B 0xc 2.000 
E - 3.000 
E - 4.000 no exit recorded: a caller returned first (longjmp?)
E - 4.000 
E - 5.000 
B 0xd 6.000 
B 0xe 7.000 
E - 7.000 still running when the trace ended
E - 7.000 still running when the trace ended
EOF
diff -u "$TMP/calls.want" "$TMP/calls.steps" >"$TMP/calls.diff"
ok $? "unbalanced calls: the same repairs as --calltree (one replay, calls.c)" \
	"$(cat "$TMP/calls.diff")"
grep -qF '"args":{"name":"my \"prog\""}' "$TMP/calls.json"
ok $? "names are JSON-escaped"

# a task forked by a named thread has its name (tasks.c: fork keeps the comm);
# the CPU's slices name the tasks as the listing does ("parent-702")
python3 "$CHECK" mkfile "$TMP/fork/t.cpu0" 0 0 0 - <<'EOF'
# sched:switch 0x01000001, thread:fork 0x01000002
1000 0x01000001 0 0 700
2000 0x01000002 700 700 702
3000 0x01000001 700 700 702
4000 0x01000001 702 702 0
EOF
python3 "$CHECK" mkfile "$TMP/fork/t.user0" -1 700 700 parent <<'EOF'
1500 0x01000800 700 1 2
EOF
json fork "$TMP/fork/t.*"
ok $? "fork: well-formed, nested" "$(grep bad: "$TMP/fork.check")"
has fork "thread_name_702_702=parent" &&
	grep -qF '"ph":"B","name":"parent-702","pid":4194304,"tid":4194304' "$TMP/fork.json" &&
	grep -qF '"ph":"i","name":"thread:fork","pid":700,"tid":700' "$TMP/fork.json"
ok $? "fork: the child has its parent's name, on its CPU and its track"

# filters: the instants are what dtrace shows with them
n=0
for args in "-e sched,thread,fault" "-c 1-2" "-t 1000-1004,5001" "--from 10 --to 20.5" \
	    "-e -syscall,-irq,-user"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	json filter$n "$TMP/mixed/t.*" $args
	ok $? "filter $args: the events dtrace shows" "$(grep bad: "$TMP/filter$n.check")"
done
! grep -q '"pid":5000' "$TMP/filter2.json" && grep -q '"pid":4194304,"tid":4194305' "$TMP/filter2.json" &&
	! grep -q '"pid":4194304,"tid":4194304,"[^a]' "$TMP/filter2.json"
ok $? "-c 1-2: CPUs 1 and 2, no user thread"
python3 -c '
import json, sys
ts = [e["ts"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
sys.exit(not ts or min(ts) < 10 or max(ts) > 20.5)' "$TMP/filter4.json"
ok $? "--from 10 --to 20.5: every time in the window"

# big: streamed: ten times the events, about the same memory.  Without the
# calls: symbols.c keeps a name per function, and ktgen's random addresses
# are a hundred thousand functions.
if [ -x /usr/bin/time ]; then
	for set in medium big; do
		/usr/bin/time -f %M -o "$TMP/$set.rss" "$DTRACE" --format=perfetto-json -e -func \
			-o "$TMP/$set.json" "$TMP/$set"/t.* 2>/dev/null
	done
	small=$(tail -n 1 "$TMP/medium.rss") rss=$(tail -n 1 "$TMP/big.rss")
	size=$(($(stat -c %s "$TMP/big.json") / 1024))
	[ "$rss" -lt $((small + 4096)) ]
	ok $? "big: streamed: ${rss} KiB of memory (${small} KiB for a tenth) for ${size} KiB of JSON"
else
	skip "big: streamed" "no /usr/bin/time"
fi
json medium "$TMP/medium/t.*"
ok $? "medium: thousands of random calls and lost records: nested, accounted for" \
	"$(grep bad: "$TMP/medium.check")"

done_testing
