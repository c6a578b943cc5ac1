#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Task names, user event names and lost counts: every view of a trace
# (the listing, --calltree, Perfetto, CTF read back by babeltrace2, -S)
# says the same of the same record, and the names follow the merge in one
# pass (dtrace/tasks.c), against a model.
# The trace (mktrace.py, two CPUs and a user stream) has renames, a fork
# whose child a naming names and one whose child none does, an exit, a
# reused thread id, a task that runs before its first naming, a user
# stream's header name, a user event its program named and lost records
# (a CPU's and the user stream's).  A second trace is a flight snapshot:
# a CPU's oldest records, with a task's naming at its fork and another's
# rename, were overwritten (it begins with a lost marker), another CPU
# kept an old naming, and ktrace's state dump at the end names every task.
# model.py computes, from the records alone, the line each kernel record
# must print: the task column and every %T argument named by the last
# naming before it in merge order (the user stream's header from the
# start), unnamed after an exit, a task's first name before it (the
# look-ahead of regular files; not of a pipe), a fork's child named as its
# parent until a naming names it, and in the flight snapshot a naming
# from before every CPU's records are complete yielding to the first one
# after.
# Checks:
#  - the listing (--tsc, records by time stamp) is the model's, line for
#    line, with the default threads, with -j 1, and for the kernel
#    streams alone on worker threads (-j 2: no user stream, whatever the
#    default is on this machine's CPUs); the flight snapshot's too;
#  - the same trace read from pipes: the model without the look-ahead;
#  - --calltree shows each kernel event of the user thread (and its named
#    user event) with the listing's text: the names of that time;
#  - Perfetto says of each event what the listing says (name and text):
#    the kernel's with the same task names, the program-named user event
#    as "user:work" "worker 0, item 49999", not "user mark 0 49999"; its
#    thread names (thread_name) are the model's, naming by naming and for
#    a fork's child, in both traces;
#  - CTF (babeltrace2 --clock-cycles): each CPU event's comm is the
#    listing's task name then, in both traces; the named user event is
#    of an event class "user:work";
#  - lost records: the listing, Perfetto, CTF (the meta:lost events and
#    babeltrace2's discarded events), --calltree (the user stream's) and
#    -S give each marker's count and the total, in both traces;
#  - -S names a task as at its last event, also one that exited;
#  - memory does not grow with the trace: peak RSS (/usr/bin/time) of
#    dtrace on ktgen traces of 4 CPUs (many renames and exits) of 250k and
#    2M events a CPU stays within 1.5 times (it was 3.9 times, 10.6 and
#    41.8 MiB: every naming was kept).
. "$(dirname "$0")/dtrace-common.sh"
MKTRACE="python3 $ROOT/tests/host/mktrace.py"
cd "$TMP" || exit 1

cat >model.py <<'PY'
import json, re, subprocess, sys

NAME, FORK, EXIT = (1 << 1) | (4 << 24), (1 << 1) | (1 << 24), (1 << 1) | (3 << 24)
SWITCH, LOST = (1 << 0) | (1 << 24), 1 << 24
CONT0, CONT1 = 1 << 22, (1 << 22) | (1 << 23) | (1 << 24)
ENTRY, LEAVE = (1 << 12) | (1 << 24), (1 << 12) | (2 << 24)
USER = (300, "ustream")		# the user stream's thread and header comm
CPU_PID = 1 << 22

# (tsc, kind, tid, args): one CPU's records each
cpu0 = [(800, "switch", 200, (200, 0)),		# before 200's first naming
	(1000, "name", 100, (100, 100, "main")),
	(1100, "fork", 100, (100, 101)),
	(1200, "name", 101, (101, 100, "main")),
	(1300, "name", 200, (200, 200, "late")),
	(2000, "switch", 100, (100, 101)),
	(3000, "name", 101, (101, 100, "worker")),	# a rename
	(3500, "switch", 101, (101, 300)),
	(5000, "exit", 101, (101, 0)),
	(5100, "switch", 101, (101, 0)),		# exited: unnamed
	(6000, "name", 101, (101, 600, "reuse")),	# the tid reused
	(6500, "switch", 101, (101, 100))]
cpu1 = [(900, "switch", 300, (300, 100)),		# the header's name
	(2500, "switch", 100, (100, 300)),
	(2550, "lost", 0, (11,)),			# records lost midway
	(2600, "fork", 100, (100, 102)),		# a child never named ...
	(2700, "switch", 0, (0, 102)),			# ... has its parent's name
	(4000, "name", 300, (300, 300, "renamed")),
	(4500, "switch", 300, (300, 101)),
	(5200, "switch", 300, (300, 101)),
	(7000, "switch", 300, (300, 101)),
	(7100, "exit", 300, (300, 0))]
USER1 = (1 << 11) | (1 << 24)	# named "work" by the map file
user = [(950, ENTRY), (2600, LEAVE), (3000, USER1), (3100, LOST), (4100, ENTRY), (7050, LEAVE)]
USER_ARGS = {USER1: (0, 49999), LOST: (3, 0)}

# A flight snapshot: cpu0's oldest records were overwritten (it begins with
# a lost marker at 5000), with them 401's naming at its fork and 400's
# rename; cpu1 kept 400's old naming "sh".  The state dump at the end
# (ktrace names every task; tid 900 is ktrace) names both.
fcpu0 = [(5000, "lost", 0, (40,)),
	(5500, "switch", 400, (400, 401)),		# 401: the dump's name
	(6000, "switch", 401, (401, 400)),
	(8000, "name", 900, (400, 400, "work")),
	(8001, "name", 900, (401, 400, "kid"))]
fcpu1 = [(1000, "name", 400, (400, 400, "sh")),	# yields to the dump's
	(1500, "switch", 400, (400, 0)),
	(5200, "lost", 0, (2,)),
	(6500, "switch", 0, (0, 400))]
TRACES = {"k": (cpu0, cpu1), "f": (fcpu0, fcpu1)}

def records(recs):
	out = []
	for tsc, kind, tid, a in recs:
		if kind == "name":
			b = a[2].encode().ljust(16, b"\0")
			w = [int.from_bytes(b[i:i + 4], "little") for i in range(0, 16, 4)]
			out += ["%d:%d:%d:%d:%d" % (tsc, NAME, a[0], a[1], tid),
				"%d:%d:%d:%d:%d" % (tsc, CONT0, w[0], w[1], tid),
				"%d:%d:%d:%d:%d" % (tsc, CONT1, w[2], w[3], tid)]
		elif kind == "lost":
			out.append("%d:%d:%d:0:0" % (tsc, LOST, a[0]))
		else:
			code = {"switch": SWITCH, "fork": FORK, "exit": EXIT}[kind]
			out.append("%d:%d:%d:%d:%d" % (tsc, code, a[0], a[1], tid))
			if kind == "switch":	# the previous task sleeping (S), the next at 120
				out.append("%d:%d:1:120:%d" % (tsc, (1 << 22) | (1 << 23), tid))
	return out

def write():
	mk = ["python3", sys.argv[2]]
	for t, (c0, c1) in TRACES.items():
		subprocess.check_call(mk + [t + ".cpu0", "--cpu", "0"] + records(c0))
		subprocess.check_call(mk + [t + ".cpu1", "--cpu", "1"] + records(c1))
	subprocess.check_call(mk + ["u.stream", "--user", str(USER[0]), str(USER[0]),
		"--comm", USER[1].encode().hex()] +
		["%d:%d:%d:%d" % ((tsc, code) + USER_ARGS.get(code, (0x1000, 0)))
		 for tsc, code in user])
	open("trace.pid%d.maps" % USER[0], "w").write("event 1 work worker %u, item %u\n")

# Every kernel record in merge order with its line "TSC TASK GROUP:EVENT
# TEXT", its tasks named as they were then; and the names each naming (and
# a fork's child) gives, as [(tid, name)].
def model(trace, look_ahead, with_user):
	c0, c1 = TRACES[trace]
	merged = sorted([r + (0,) for r in c0] + [r + (1,) for r in c1],
			key=lambda r: (r[0], r[4]))
	# a flight snapshot's records are complete from the latest start of a
	# CPU whose records begin with a lost marker (a regular file's)
	starts = [c[0][0] for c in (c0, c1) if c[0][1] == "lost"] if look_ahead else []
	complete_from = max(starts) if starts else 0
	first, complete = {}, {}
	if look_ahead:
		for tsc, kind, tid, a, f in merged:
			if kind == "name":
				first.setdefault(a[0], a[2])
				if complete_from and tsc >= complete_from:
					complete.setdefault(a[0], a[2])
	names = {USER[0]: (USER[1], 0)} if with_user else {}
	threads = [(USER[0], USER[1])] if with_user else []
	def comm(tid):
		if tid in names:
			nm, ts = names[tid]
			if ts and ts < complete_from and tid in complete:
				return complete[tid]	# a later naming wins
			return nm
		return first.get(tid)
	def task(tid):
		c = comm(tid)
		if c is not None:
			return "%s-%d" % (c, tid)
		return "<idle>-0" if tid == 0 else "<...>-%d" % tid
	lines = []
	for r in merged:
		tsc, kind, tid, a, f = r
		if kind == "name":
			names[a[0]] = (a[2], tsc)
			first.pop(a[0], None)
			if complete_from and tsc >= complete_from:
				complete.pop(a[0], None)
			threads.append((a[0], comm(a[0])))
			text = "thread:name task %d of process %d is named %s" % a
		elif kind == "switch":
			text = "sched:switch context switch from task %s to task %s, prev state S, next prio 120" % (task(a[0]), task(a[1]))
		elif kind == "fork":
			# fork keeps the comm: a child no naming names has its parent's
			if a[1] not in names and a[1] not in first and comm(a[0]) is not None:
				names[a[1]] = (comm(a[0]), tsc)
			if comm(a[1]) is not None:
				threads.append((a[1], comm(a[1])))
			text = "thread:fork fork: task %s created task %d" % (task(a[0]), a[1])
		elif kind == "lost":
			text = "meta:lost %d records lost" % a[0]
		else:
			text = "thread:exit exit of task %s, code %d" % (task(a[0]), a[1])
		lines.append((r, "%d %s %s" % (tsc, "-" if kind == "lost" else task(tid), text)))
		if kind == "exit":
			names.pop(a[0], None)
			complete.pop(a[0], None)
	return lines, threads

def expect(trace="k", look_ahead=True, with_user=True):
	for r, line in model(trace, look_ahead, with_user)[0]:
		print(line)

# the events besides calls the calltree shows for the user thread: its
# user event, the kernel's of its thread and the switches to it
def calltree():
	shown = [(tsc, "user:work worker 0, item 49999") for tsc, code in user if code == USER1]
	for line in sys.stdin:
		tsc, task, text = line.rstrip("\n").split(" ", 2)
		r = [r for r in cpu0 + cpu1 if r[0] == int(tsc)][0]
		if r[2] == USER[0] or (r[1] == "switch" and r[3][1] == USER[0]):
			shown.append((int(tsc), text))
	for tsc, text in sorted(shown):
		print(text)

# "TSC COUNT" of every lost marker: the kernel's and the user stream's
def lost(trace):
	c0, c1 = TRACES[trace]
	recs = [(tsc, a[0]) for tsc, kind, tid, a in c0 + c1 if kind == "lost"]
	if trace == "k":
		recs += [(tsc, USER_ARGS[LOST][0]) for tsc, code in user if code == LOST]
	for tsc, n in sorted(recs):
		print(tsc, n)

def threads(trace):
	for tid, name in model(trace, True, trace == "k")[1]:
		print(tid, name)

# Perfetto's thread names (not the CPUs') in the order it says them: "TID NAME"
def perfetto_threads():
	for e in json.load(open(sys.argv[2]))["traceEvents"]:
		if e.get("ph") == "M" and e["name"] == "thread_name" and e["tid"] < CPU_PID:
			print(e["tid"], e["args"]["name"])

# Perfetto's lost records, "TSC COUNT" (1 GHz: ts is in us after the first event, $3)
def perfetto_lost():
	t0 = int(sys.argv[3])
	for e in json.load(open(sys.argv[2]))["traceEvents"]:
		if e.get("name") == "lost records":
			print(t0 + round(float(e["ts"]) * 1000), e["args"]["count"])

# babeltrace2 --clock-cycles lines: "TSC TID COMM" of the CPUs' events
# (names), "TSC COUNT" of the lost markers (lost), "TSC NAME" of the user
# stream's user events (user)
def ctf(what):
	line = re.compile(r'^\[0*(\d+)\] \S+ (\S+): \{ (cpu_id|pid) = \d+[^}]*\}, '
			  r'\{ tid = (\d+), comm = "([^"]*)" \}, \{ (.*) \}$')
	for l in sys.stdin:
		m = line.match(l.rstrip("\n"))
		if not m:
			print("bad:", l.rstrip("\n"))
			continue
		tsc, name, kind, tid, comm, fields = m.groups()
		if what == "lost" and name == "meta:lost":
			print(tsc, fields.split("count = ")[1])
		elif what == "names" and kind == "cpu_id" and name != "meta:lost":
			print(tsc, tid, comm)
		elif what == "user" and kind == "pid" and name.startswith("user:"):
			print(tsc, name)

# the model's "TSC TID COMM" of the CPUs' events but the lost markers
def ctf_want(trace):
	for r, l in model(trace, True, trace == "k")[0]:
		if r[1] != "lost":
			tsc, task = l.split(" ")[:2]
			comm, tid = task.rsplit("-", 1)
			print(tsc, tid, comm)

{"write": write, "expect": lambda: expect(), "expect-pipe": lambda: expect("k", False),
 "expect-kernel": lambda: expect("k", True, False),
 "expect-flight": lambda: expect("f", True, False),
 "calltree": calltree, "lost": lambda: lost(sys.argv[2]),
 "threads": lambda: threads(sys.argv[2]), "perfetto-threads": perfetto_threads,
 "perfetto-lost": perfetto_lost, "ctf": lambda: ctf(sys.argv[2]),
 "ctf-want": lambda: ctf_want(sys.argv[2]),
 }[sys.argv[1]]()
PY

python3 model.py write "$ROOT/tests/host/mktrace.py"
python3 model.py expect >want
python3 model.py expect-pipe >want-pipe
python3 model.py expect-kernel >want-kernel
python3 model.py calltree <want >want-tree
python3 model.py expect-flight >want-flight
# the listing's kernel lines as "TSC TASK GROUP:EVENT TEXT"
kernel_lines() { awk '$1 != "-" { $1 = ""; sub(/^ /, ""); print }'; }

"$DTRACE" --tsc k.cpu0 k.cpu1 u.stream 2>err | kernel_lines >got
check "the listing names every task as the model does" 'diff want got >"$TMP/check.out" 2>&1'
"$DTRACE" -j 1 --tsc k.cpu0 k.cpu1 u.stream 2>err | kernel_lines >got-j1
check "... the same with -j 1 (no worker threads)" 'diff want got-j1 >"$TMP/check.out" 2>&1'
"$DTRACE" -j 2 --tsc k.cpu0 k.cpu1 2>err | kernel_lines >got-k
check "... the kernel streams alone (named on the worker threads): no header name" \
	'diff want-kernel got-k >"$TMP/check.out" 2>&1'
"$DTRACE" --tsc <(cat k.cpu0) <(cat k.cpu1) <(cat u.stream) 2>err | kernel_lines >got-pipe
check "read from pipes: named in the one pass (no look-ahead for the task before its first naming)" \
	'diff want-pipe got-pipe >"$TMP/check.out" 2>&1'
"$DTRACE" --calltree k.cpu0 k.cpu1 u.stream 2>/dev/null | sed -n 's|.*/\* \([a-z]*:[a-z]* .*\) \*/$|\1|p' >got-tree
check "--calltree: the kernel events of the user thread say what the listing says" \
	'diff want-tree got-tree >"$TMP/check.out" 2>&1'

"$DTRACE" --format=perfetto-json -o k.json k.cpu0 k.cpu1 u.stream 2>err
python3 - k.json >got-json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
	if e.get("ph") == "i" and "text" in e.get("args", {}):
		print(e["name"], e["args"]["text"])
PY
# its instants: every event but the calls and switches (slices)
"$DTRACE" k.cpu0 k.cpu1 u.stream 2>err | grep -v "func:\|sched:switch\|meta:lost" |
	awk '{ $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' >want-json
check "Perfetto: every event's name and text as the listing's" \
	'diff want-json got-json >"$TMP/check.out" 2>&1'
check "... the listing's user event: the program's name and format" \
	'grep -qx "user:work worker 0, item 49999" got-json'

"$DTRACE" --tsc f.cpu0 f.cpu1 2>err | kernel_lines >got-flight
check "a flight snapshot: the model's names (overwritten namings, the state dump's)" \
	'diff want-flight got-flight >"$TMP/check.out" 2>&1'

# a check of CTF as babeltrace2 reads it, skipped without babeltrace2
ctf_check() {
	if command -v babeltrace2 >/dev/null; then
		check "$@"
	else
		skip "$1" "babeltrace2 not installed (scripts/deps.sh)"
	fi
}

views() {	# views T FILES...: T.json, T.ctf, T.bt (babeltrace2), T.lost-* and T.S
	local t=$1
	shift
	"$DTRACE" --format=perfetto-json -o "$t.json" "$@" 2>err
	"$DTRACE" --format=ctf -o "$t.ctf" "$@" 2>err
	babeltrace2 --clock-cycles --no-delta "$t.ctf" >"$t.bt" 2>"$t.bterr"
	python3 model.py lost "$t" >"$t.lost-want"
	t0=$("$DTRACE" --tsc "$@" 2>/dev/null | awk 'NR == 1 { print $2 }')
	"$DTRACE" --tsc "$@" 2>err | awk '$4 == "meta:lost" { print $2, $5 }' >"$t.lost-text"
	python3 model.py perfetto-lost "$t.json" "$t0" >"$t.lost-json"
	python3 model.py ctf lost <"$t.bt" >"$t.lost-ctf"
	"$DTRACE" -S "$@" >"$t.S" 2>err
}
views k k.cpu0 k.cpu1 u.stream
views f f.cpu0 f.cpu1
for t in k f; do
	python3 model.py threads $t >$t.threads-want
	python3 model.py perfetto-threads $t.json >$t.threads-got
	check "Perfetto ($t): thread names as the model's, at each naming and fork" \
		'diff $t.threads-want $t.threads-got >"$TMP/check.out" 2>&1'
	python3 model.py ctf-want $t >$t.ctf-want
	python3 model.py ctf names <$t.bt >$t.ctf-got
	ctf_check "CTF ($t): each CPU event's comm is the listing's name of its task then" \
		'diff $t.ctf-want $t.ctf-got >"$TMP/check.out" 2>&1'
	total=$(awk '{ n += $2 } END { print n }' $t.lost-want)
	check "lost ($t): the listing gives each marker's count" \
		'diff $t.lost-want $t.lost-text >"$TMP/check.out" 2>&1'
	check "lost ($t): Perfetto gives each marker's count" \
		'diff $t.lost-want $t.lost-json >"$TMP/check.out" 2>&1'
	ctf_check "lost ($t): CTF gives each marker's count" \
		'diff $t.lost-want $t.lost-ctf >"$TMP/check.out" 2>&1'
	ctf_check "lost ($t): babeltrace2's discarded events are the $total records lost" \
		'[ "$(sed -n "s/.*discarded \([0-9]*\) events.*/\1/p" $t.bterr | awk "{ n += \$1 } END { print n }")" = "$total" ]'
	check "lost ($t): -S says $total records" 'grep -Eq "^lost +$total records" $t.S'
done
ctf_check "CTF: the program-named user event is of the class \"user:work\"" \
	'[ "$(python3 model.py ctf user <k.bt)" = "3000 user:work" ]'
check "--calltree: the user stream's lost records where they were (3)" \
	'"$DTRACE" --calltree k.cpu0 k.cpu1 u.stream 2>/dev/null | grep -q "/\* ! 3 records lost here \*/"'

dt_S() { "$DTRACE" -S k.cpu0 k.cpu1 u.stream 2>err; }
check "-S: a task that exited is named as at its last event (renamed-300: 11 events)" \
	'dt_S | grep -Eq "^  renamed-300 +11$"'

# peak RSS (KiB) of dtrace on ktgen traces of $1 events a CPU
rss() {
	gen "big$1" -s 7 -c 4 -n "$1" -l 0 || return 1
	/usr/bin/time -f %M -o "rss$1" "$DTRACE" "$TMP/big$1"/t.cpu* >/dev/null 2>&1 || return 1
	tail -n 1 "rss$1"
}
if [ -x /usr/bin/time ]; then
	small=$(rss 250000)
	big=$(rss 2000000)
	names=$("$DTRACE" -e thread "$TMP/big2000000"/t.cpu* 2>/dev/null | grep -c thread:name)
	rm -rf "$TMP"/big*
	check "peak RSS flat: $small KiB at 250k events a CPU, $big KiB at 2M ($names namings)" \
		'test -n "$small" -a -n "$big" -a "$names" -gt 100000 -a $((big * 2)) -le $((small * 3))'
else
	skip "peak RSS flat" "/usr/bin/time is missing: peak RSS not measured"
fi
done_testing
