#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --report (and --flat, --format=csv, --sort, --per-thread) of a
# program built with -finstrument-functions whose calls are known: three
# threads one after the other, loops, a recursion.  Ground truth, in order:
#  1. the calls: the counting hook preloaded in front of libktrace in the
#     same run (tests/debsrc/cygcount.c: each function's entries), and the
#     counts the source says;
#  2. the times: report-model.py, which pairs each thread's enter and exit
#     lines of dtrace's plain listing with a stack (calls, total with the
#     outermost calls of a recursion only, self, avg, min, max, exactly in
#     ns), summed and per thread;
#  3. what must hold whatever the times: min <= avg <= max; the self times
#     add up to the total of the outermost functions (main, worker) and to
#     the model's durations of the threads' outermost calls; a recursive
#     function's total is its outermost calls' and less than all its calls';
#     --per-thread adds up to the summed report; each --sort key orders the
#     rows as Python's sorted() does;
#  4. the text: each row parsed back from --format=csv (python csv) is the
#     text's row (us with 3 decimals = ns); --flat is its first 3 columns.
. "$(dirname "$0")/user-shapes-common.sh"

REPORT_MODEL=$ROOT/tests/host/report-model.py

cat >"$TMP/rep.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#define F __attribute__((noinline))
static volatile int sink;
F void leaf(int i) { sink += i; }
F void spin(int n) { for (int i = 0; i < n; i++) sink++; }
F void mid(int n) { for (int i = 0; i < n; i++) leaf(i); spin(200); }
F int rec(int n) { spin(50); return n ? rec(n - 1) + 1 : 0; }
F void *worker(void *arg) { int n = (int)(long)arg; mid(n); rec(n); return NULL; }
int main(int argc, char **argv)
{
	pthread_t t;

	mid(argc > 1 ? atoi(argv[1]) : 4);
	rec(3);
	rec(5);
	/* one thread at a time: the counting hook's counts are not atomic */
	for (long i = 2; i <= 3; i++) {
		pthread_create(&t, NULL, worker, (void *)i);
		pthread_join(t, NULL);
	}
	return 0;
}
C
cc -O0 -g -finstrument-functions -pthread -o "$TMP/rep" "$TMP/rep.c" 2>"$TMP/cc.err"
ok $? "build the program" "$(cat "$TMP/cc.err")"
D=$TMP/rep.d
counted "$D" "$TMP/rep" 4 >/dev/null 2>"$TMP/run.err"
ok $? "it runs traced, the counting hook in front" "$(cat "$TMP/run.err")"

"$DTRACE" --report "$D"/trace.* >"$TMP/report" 2>"$TMP/report.err"
ok $? "--report exits 0" "$(cat "$TMP/report.err")"
check "--report warns of nothing" '[ ! -s "$TMP/report.err" ]'
check "3 threads, no repairs" 'grep -qx "# 6 functions, 52 calls in 3 threads" "$TMP/report"'

# ---- 1. the calls ----
cmp=$(flat_vs_count "$D" "$TMP/rep")
read -r _ fns _ entries _ exits _ repairs _ wrong < <(grep ^functions <<<"$cmp")
[ "${entries:-0}" -gt 0 ] && [ "${wrong:-1}" -eq 0 ] && [ "$entries" = "$exits" ]
ok $? "each of $fns functions called as often as the hook saw it entered ($entries)" "$cmp"
awk 'NR > 2 { print $7, $1 }' "$TMP/report" | sort >"$TMP/calls"
printf '%s\n' "leaf 9" "main 1" "mid 3" "rec 17" "spin 20" "worker 2" | diff -u - "$TMP/calls" >"$TMP/calls.diff"
ok $? "the calls the source makes: mid 3, leaf 9, rec 17, spin 20 ..." "$(cat "$TMP/calls.diff")"

# ---- 2. the times, against the model ----
"$DTRACE" "$D"/trace.* >"$TMP/listing"
python3 "$REPORT_MODEL" <"$TMP/listing" >"$TMP/model.csv" 2>"$TMP/model.err"
ok $? "the model pairs every enter and exit" "$(cat "$TMP/model.err")"
"$DTRACE" --report --format=csv "$D"/trace.* >"$TMP/report.csv"
"$DTRACE" --report --per-thread --format=csv "$D"/trace.* >"$TMP/thread.csv"
python3 "$REPORT_MODEL" --per-thread <"$TMP/listing" >"$TMP/model-thread.csv"
roots=$(python3 "$REPORT_MODEL" --roots <"$TMP/listing")

# csv_rows CSV [per-thread]: dtrace's CSV as the model writes it
csv_rows() {
	python3 - "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
pt = len(sys.argv) > 2
cols = ['calls', 'total_ns', 'self_ns', 'avg_ns', 'min_ns', 'max_ns']
print(('tid,' if pt else '') + 'function,' + ','.join(cols))
for r in sorted(rows, key=lambda r: (r['function'], r.get('tid', ''))):
    print(','.join(([r['tid']] if pt else []) + [r['function']] + [r[c] for c in cols]))
PY
}
csv_rows "$TMP/report.csv" | diff -u "$TMP/model.csv" - >"$TMP/model.diff"
ok $? "--format=csv: calls, total, self, avg, min, max of each function are the model's, in ns" \
	"$(cat "$TMP/model.diff")"
csv_rows "$TMP/thread.csv" pt | diff -u "$TMP/model-thread.csv" - >"$TMP/model-thread.diff"
ok $? "--per-thread: each thread's are the model's" "$(cat "$TMP/model-thread.diff")"

# ---- 3. what holds whatever the times ----
python3 - "$TMP/report.csv" "$TMP/thread.csv" "$TMP/listing" "$roots" >"$TMP/props" <<'PY'
import csv, sys, re
rows = {r['function']: {k: int(v) for k, v in r.items() if k.endswith('_ns') or k == 'calls'}
        for r in csv.DictReader(open(sys.argv[1], newline=''))}
threads = list(csv.DictReader(open(sys.argv[2], newline='')))
roots = int(sys.argv[4])
bad = [f for f, r in rows.items() if not r['min_ns'] <= r['avg_ns'] <= r['max_ns']]
print('minavgmax', 'ok' if rows and not bad else 'bad ' + ' '.join(bad))
self_sum = sum(r['self_ns'] for r in rows.values())
outer = rows['main']['total_ns'] + rows['worker']['total_ns']
print('selfsum', 'ok' if self_sum == outer == roots else f'bad self {self_sum} main+worker {outer} roots {roots}')
# rec: the outermost calls' durations, from the listing, against all calls'
stack, outer_rec, all_rec = {}, 0, 0
for line in open(sys.argv[3]):
    m = re.match(r'^\s*\S+\s+(\d+)\.(\d{3})\s+\S+-(\d+)\s+func:(enter|leave)\s+(?:enter|exit) (\S+)', line)
    if not m:
        continue
    ns, tid, fn = int(m[1]) * 1000 + int(m[2]), m[3], m[5]
    st = stack.setdefault(tid, [])
    if m[4] == 'enter':
        st.append((fn, ns))
        continue
    fn, t0 = st.pop()
    if fn == 'rec':
        all_rec += ns - t0
        if not any(f == 'rec' for f, _ in st):
            outer_rec += ns - t0
r = rows['rec']
print('recursion', 'ok' if r['total_ns'] == outer_rec < all_rec and r['avg_ns'] == all_rec // r['calls']
      else f"bad total {r['total_ns']} outermost {outer_rec} all {all_rec}")
sums = {}
for t in threads:
    s = sums.setdefault(t['function'], [0, 0, 0])
    for i, c in enumerate(['calls', 'total_ns', 'self_ns']):
        s[i] += int(t[c])
bad = [f for f, r in rows.items() if sums.get(f) != [r['calls'], r['total_ns'], r['self_ns']]]
print('perthread', 'ok' if len({t['tid'] for t in threads}) == 3 and not bad else 'bad ' + ' '.join(bad))
PY
for p in minavgmax selfsum recursion perthread; do
	eval "$p=\$(awk -v p=$p '\$1 == p { \$1 = \"\"; print substr(\$0, 2) }' \"\$TMP/props\")"
done
[ "$minavgmax" = ok ]
ok $? "min <= avg <= max in every row" "$minavgmax"
[ "$selfsum" = ok ]
ok $? "the self times add up to main's and worker's total, the threads' outermost calls" "$selfsum"
[ "$recursion" = ok ]
ok $? "rec's total is its outermost calls' time, less than all its calls'; avg of all" "$recursion"
[ "$perthread" = ok ]
ok $? "--per-thread: 3 threads, whose calls, total and self add up to the report's" "$perthread"

# sort_ok KEYS: --sort KEYS orders the CSV rows as sorted() does
sort_ok() {
	"$DTRACE" --format=csv --sort "$1" "$D"/trace.* >"$TMP/sort.csv"
	python3 - "$1" "$TMP/sort.csv" <<'PY'
import csv, sys
keys = sys.argv[1].split(',')
rows = list(csv.DictReader(open(sys.argv[2], newline='')))
col = {'calls': 'calls', 'name': 'function'}
def key(r):
    return [r['function'] if k == 'name' else -int(r[col.get(k, k + '_ns')]) for k in keys] + \
        [r['function'], r['file']]
want = sorted(rows, key=key)
sys.exit(0 if len(rows) == 6 and rows == want else 1)
PY
}
for keys in total self calls avg min max name calls,name calls,self max,calls,name; do
	sort_ok "$keys"
	ok $? "--sort $keys: the rows in that order" "$(cat "$TMP/sort.csv")"
done
"$DTRACE" --report "$D"/trace.* | awk 'NR > 2 { print $2 }' >"$TMP/order"
sort -rg "$TMP/order" | cmp -s - "$TMP/order"
ok $? "--report: most total time first by default" "$(cat "$TMP/order")"

# ---- 4. the text against the CSV ----
python3 - "$TMP/report.csv" "$TMP/report" >"$TMP/text.diff" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
text = [l.split() for l in open(sys.argv[2]) if not l.startswith('#') and 'CALLS' not in l]
ns = lambda s: int(s.replace('.', ''))
bad = 0
for r, t in zip(rows, text):
    got = [int(t[0])] + [ns(v) for v in t[1:6]] + [t[6], t[7] if len(t) > 7 else '']
    want = [int(r['calls'])] + [int(r[c]) for c in ('total_ns', 'self_ns', 'avg_ns', 'min_ns', 'max_ns')] + \
        [r['function'], f"{r['file']}:{r['line']}" if r['file'] else '']
    if got != want:
        print('text', t, 'csv', want)
        bad += 1
if len(rows) != len(text) or not rows:
    print(f'{len(rows)} csv rows, {len(text)} text rows')
    bad += 1
sys.exit(bad != 0)
PY
ok $? "--format=csv read back: the text's rows, in its order, us = ns / 1000" "$(cat "$TMP/text.diff")"
check "CSV header" 'head -n 1 "$TMP/report.csv" | grep -qx "function,file,line,calls,total_ns,self_ns,avg_ns,min_ns,max_ns"'
check "--per-thread CSV header" 'head -n 1 "$TMP/thread.csv" | grep -qx "pid,tid,comm,function,file,line,calls,total_ns,self_ns,avg_ns,min_ns,max_ns"'
"$DTRACE" --report --per-thread "$D"/trace.* >"$TMP/thread.txt"
check "--per-thread text: a line per thread before its rows" \
	'[ "$(grep -c "^# thread rep-[0-9]* (pid [0-9]*)$" "$TMP/thread.txt")" = 3 ]'
check "--per-thread text: the functions counted once" \
	'grep -qx "# 6 functions, 52 calls in 3 threads" "$TMP/thread.txt"'

"$DTRACE" --flat "$D"/trace.* >"$TMP/flat"
"$DTRACE" --report --sort self,calls "$D"/trace.* | awk '{ print $1, $2, $3, $7, $8 }' >"$TMP/flat.want"
awk '{ print $1, $2, $3, $4, $5 }' "$TMP/flat" | sed 1,2d | diff -u <(sed 1,2d "$TMP/flat.want") - >"$TMP/flat.diff"
ok $? "--flat: the report's first 3 columns, most self time first" "$(cat "$TMP/flat.diff")"
"$DTRACE" --report "$D" >"$TMP/dir.report" 2>&1
"$DTRACE" --report "$D"/trace.* 2>&1 | cmp -s - "$TMP/dir.report"
ok $? "a directory is its trace files" "$(head -n 5 "$TMP/dir.report")"
"$DTRACE" --calltree "$D"/trace.* >/dev/null 2>&1
ok $? "the trace is balanced: --calltree takes it too"

# ---- usage errors ----
expect_error "--sort with an unknown key is named" "bad --sort key 'bogus'" \
	"$DTRACE" --report --sort total,bogus "$D"/trace.*
check "... a usage error: exit 2" '"$DTRACE" --report --sort bogus "$D"/trace.* 2>/dev/null; [ $? -eq 2 ]'
expect_error "--sort with an empty key" "bad --sort key ''" "$DTRACE" --sort total, "$D"/trace.*
expect_error "--per-thread without a report" "go with --report" "$DTRACE" --calltree --per-thread "$D"/trace.*
expect_error "--per-thread with --diff" "do not go together" \
	"$DTRACE" --per-thread --diff "$D" "$D"/trace.*
mkdir "$TMP/empty"
expect_error "an empty directory is named" "$TMP/empty: a directory without trace files" \
	"$DTRACE" --report "$TMP/empty"
done_testing
