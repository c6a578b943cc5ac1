#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --format=perfetto: Perfetto's protobuf trace, decoded by Debian's
# protoc against dtrace/perfetto_trace.proto (Perfetto's field numbers),
# holds every event of dtrace's own listing of the same trace exactly once,
# at its time: switches and wakeups in compact_sched with the task's tid and
# name, forks and exits, system calls, softirqs and migrations as Perfetto's
# own events, the rest as generic events with the fields of the JSON export;
# a lost_events bundle for each lost record; a ProcessTree entry for each
# thread:name; the user threads' events and calls on their tracks as the
# JSON export has them (perfetto-pb-check.py).  A scheduler trace costs at
# most 12 bytes an event.
. "$(dirname "$0")/dtrace-common.sh"
CHECK=$ROOT/tests/host/perfetto-pb-check.py
PROTO=$ROOT/dtrace/perfetto_trace.proto

if ! command -v protoc >/dev/null || ! command -v python3 >/dev/null; then
	skip_all "protoc or python3 not installed (scripts/deps.sh: protobuf-compiler)"
fi

# pb NAME FILES dtrace-args...: TMP/NAME.pb decoded into TMP/NAME.dec, and
# checked against the listings and the JSON export of the same events
pb() {
	local name=$1 files=$2
	shift 2
	# shellcheck disable=SC2086
	"$DTRACE" --format=perfetto -o "$TMP/$name.pb" "$@" $files 2>"$TMP/$name.err" &&
		protoc --decode=perfetto.protos.Trace -I"$ROOT/dtrace" "$PROTO" \
			<"$TMP/$name.pb" >"$TMP/$name.dec" 2>>"$TMP/$name.err" &&
		"$DTRACE" --raw "$@" $files >"$TMP/$name.raw" 2>/dev/null &&
		"$DTRACE" "$@" $files >"$TMP/$name.named" 2>/dev/null &&
		"$DTRACE" --format=perfetto-json --raw -o "$TMP/$name.json" "$@" $files 2>/dev/null &&
		python3 "$CHECK" "$TMP/$name.dec" "$TMP/$name.raw" "$TMP/$name.named" \
			"$TMP/$name.json" >"$TMP/$name.check" 2>&1
}

gen mixed -s 2 -c 3 -u 2 -n 30 -l 3 -U 150
gen medium -s 7 -c 4 -u 2 -n 5000 -l 20 -U 20
gen slow -s 4 -c 2 -u 1 -n 200 --hz 2400000000 --step 100000

pb mixed "$TMP/mixed/t.*"
ok $? "mixed: every event, lost record and name, as dtrace lists them" \
	"$(cat "$TMP/mixed.err" "$TMP/mixed.check")"
pb medium "$TMP/medium/t.*"
ok $? "medium: 30,000 events with lost records and unknown events, as dtrace lists them" \
	"$(head -c 2000 "$TMP/medium.err" "$TMP/medium.check")"
pb slow "$TMP/slow/t.*"
ok $? "2.4 GHz: times in ns as dtrace converts them" "$(head -c 2000 "$TMP/slow.check")"
pb filtered "$TMP/medium/t.*" -e sched,thread,user -c 1-2 --from 100 --to 900
ok $? "filters: -e, -c, --from and --to pass the same events" \
	"$(head -c 2000 "$TMP/filtered.err" "$TMP/filtered.check")"
# probe hits (tests/host/probe-model.py: every value type, strings to
# escape, missing values, names with spaces): generic events named as the
# listing names them, with the values of the JSON export
mkdir -p "$TMP/probes" && python3 "$ROOT/tests/host/probe-model.py" decode "$TMP/probes" >/dev/null &&
	pb probes "$TMP/probes/t.cpu0 $TMP/probes/t.cpu1 $TMP/probes/t.probes"
ok $? "probe hits: named, with their values, as dtrace lists them" \
	"$(head -c 2000 "$TMP/probes.err" "$TMP/probes.check")"
check "probe hits: some generic events are probes with fields" \
	'grep -q "event_name: \"probe:" "$TMP/probes.dec" && grep -c "str_value" "$TMP/probes.dec" >/dev/null'

# lost records one after the other, and as the last record of a CPU
L=$((1 << 24))
python3 "$ROOT/tests/host/mktrace.py" --cpu 0 "$TMP/lost.cpu0" 100:$((1 | 1 << 24)):5:6:5 \
	200:$L:7:0:0 300:$L:8:0:0 400:$((1 | 1 << 24)):6:5:6 500:$L:9:0:0 &&
	pb lost "$TMP/lost.cpu0"
ok $? "lost records in a row and at the end: a lost_events bundle each" \
	"$(head -c 2000 "$TMP/lost.err" "$TMP/lost.check")"
check "one clock snapshot tying the boot clock to the wall clock" \
	'[ "$(grep -c "clock_id: 6" "$TMP/mixed.dec")" = 1 ] && grep -q "clock_id: 1" "$TMP/mixed.dec"'
check "the kernel release in SystemInfo, from the trace files' header" 'grep -q "release: \"6.1.0-ktgen\"" "$TMP/mixed.dec"'

# A scheduler trace as a busy machine makes it: 4 CPUs, 60 tasks, a switch
# every 20-200 us (the task before sleeping, blocked or preempted), each
# woken task switched to soon after its wakeup.
MKTRACE=$ROOT/tests/host/mktrace.py python3 - "$TMP/sched" <<'EOF'
import os, random, subprocess, sys
random.seed(5)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
tasks = list(range(1200, 1260))
for cpu in range(4):
    ev, t, cur = [], 1000000, 0
    for tid in tasks[cpu::4]:
        ev.append("%d:%d:%d:%d:%d" % (t, 2 | 4 << 24, tid, tid // 4 * 4, 0))
        name = int.from_bytes(("w%03d" % (tid % 1000)).encode(), "little")
        ev.append("%d:%d:%d:0:0" % (t, 1 << 22, name))
        ev.append("%d:%d:0:0:0" % (t, 1 << 22 | 1 << 23 | 1 << 24))
    for i in range(5000):
        t += random.randint(20000, 200000)
        nxt = random.choice(tasks)
        ev.append("%d:%d:%d:%d:%d" % (t - 3000, 1 | 2 << 24, nxt, cpu, cur))
        ev.append("%d:%d:%d:%d:%d" % (t, 1 | 1 << 24, cur, nxt, cur))
        ev.append("%d:%d:%d:%d:%d" % (t, 1 << 22 | 1 << 23, random.choice((1, 1, 2, 0x100)),
                                      random.choice((120, 120, 100)), cur))
        cur = nxt
    subprocess.run([sys.executable, os.environ["MKTRACE"], "--cpu", str(cpu),
                    "%s/t.cpu%d" % (out, cpu)] + ev, check=True)
EOF
ok $? "a scheduler trace of 40,000 switches and wakeups"
pb sched "$TMP/sched/t.*"
ok $? "sched: every switch and wakeup with its task's name" "$(head -c 2000 "$TMP/sched.check")"
bytes=$(stat -c %s "$TMP/sched.pb")
events=$(grep -c 'sched:' "$TMP/sched.raw")
check "sched: $((bytes * 100 / events / 100)).$((bytes * 100 / events % 100)) bytes an event ($bytes for $events)" \
	'[ $((bytes * 100 / events)) -le 1200 ]'

# the JSON is still there, by its name
"$DTRACE" --format=perfetto-json "$TMP"/mixed/t.* 2>/dev/null | head -c 45 | grep -qF '{"displayTimeUnit"'
ok $? "--format=perfetto-json: Chrome's JSON"
done_testing
