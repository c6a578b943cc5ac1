#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --diff OLD NEW: two runs of one program built with
# -finstrument-functions, whose argument changes one function's calls
# (leaf: 4 calls from main, then 7) and, with a second argument, makes
# one more function run (extra).  Ground truth:
#  1. the source: leaf's calls differ by exactly 3 and no other function's
#     do; extra is 0 in the old trace, 1 in the new;
#  2. the two traces' own reports (dtrace --report --format=csv of each, as
#     test 89 checks them against a model): every old and new value of the
#     diff is theirs, the difference is new less old, the percent is
#     100 * difference / old (3 decimals; empty where old is 0);
#  3. the order: largest difference of the first --sort key first, either
#     way, then the name: as Python's sorted() orders the CSV's rows;
#  4. the text: its rows parsed are the CSV's (python csv), in its order;
#  5. a trace given as a directory, as its files or as one file is the same.
. "$(dirname "$0")/user-common.sh"

cat >"$TMP/rep.c" <<'C'
#include <stdlib.h>
#define F __attribute__((noinline))
static volatile int sink;
F void leaf(int i) { sink += i; }
F void spin(int n) { for (int i = 0; i < n; i++) sink++; }
F void mid(int n) { for (int i = 0; i < n; i++) leaf(i); spin(200); }
F int rec(int n) { spin(50); return n ? rec(n - 1) + 1 : 0; }
F void extra(void) { sink++; }
int main(int argc, char **argv)
{
	mid(atoi(argv[1]));
	mid(2);
	rec(4);
	if (argc > 2)
		extra();
	return 0;
}
C
cc -O0 -g -finstrument-functions -o "$TMP/rep" "$TMP/rep.c" 2>"$TMP/cc.err"
ok $? "build the program" "$(cat "$TMP/cc.err")"
traced "$TMP/old" "$TMP/rep" 4 && traced "$TMP/new" "$TMP/rep" 7 && traced "$TMP/extra" "$TMP/rep" 4 x
ok $? "three runs traced: 4, 7, and 4 with extra"

"$DTRACE" --report --format=csv "$TMP/old" >"$TMP/old.csv" &&
	"$DTRACE" --report --format=csv "$TMP/new" >"$TMP/new.csv" &&
	"$DTRACE" --report --format=csv "$TMP/extra" >"$TMP/extra.csv"
ok $? "the reports of each"
"$DTRACE" --diff "$TMP/old" --format=csv "$TMP/new" >"$TMP/diff.csv" 2>"$TMP/diff.err"
ok $? "--diff --format=csv exits 0" "$(cat "$TMP/diff.err")"
"$DTRACE" --diff "$TMP/old" "$TMP/new" >"$TMP/diff.txt" 2>"$TMP/diff.err"
ok $? "--diff exits 0" "$(cat "$TMP/diff.err")"

# diff_check OLD.csv NEW.csv DIFF.csv KEYS: "calls FN=N ..." (the functions
# whose calls differ), then a line per value that is not the reports', and
# "order bad" if the rows are not in KEYS' order
diff_check() {
	python3 - "$@" <<'PY'
import csv, sys
read = lambda f: {r['function']: r for r in csv.DictReader(open(f, newline=''))}
old, new = read(sys.argv[1]), read(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[3], newline='')))
keys = sys.argv[4].split(',')
vals = ['calls', 'total_ns', 'self_ns', 'avg_ns', 'min_ns', 'max_ns']
print('calls', ' '.join(f"{r['function']}={r['diff_calls']}" for r in rows if r['diff_calls'] != '0'))
if sorted(r['function'] for r in rows) != sorted(set(old) | set(new)):
    print('functions', [r['function'] for r in rows], 'old', list(old), 'new', list(new))
for r in rows:
    fn = r['function']
    for v in vals:
        o = int(old[fn][v]) if fn in old else 0
        n = int(new[fn][v]) if fn in new else 0
        pct = f'{100 * (n - o) / o:.3f}' if o else ''
        got = [int(r['old_' + v]), int(r['new_' + v]), int(r['diff_' + v])]
        if got != [o, n, n - o] or abs(float(r['diff_' + v + '_pct'] or 'nan') - float(pct or 'nan')) > 0.0011 \
                and not (pct == r['diff_' + v + '_pct'] == ''):
            print(f"value {fn} {v}: {got} {r['diff_' + v + '_pct']!r}, reports {o} {n} {pct!r}")
col = {'calls': 'diff_calls'}
key = lambda r: [r['function'] if k == 'name' else -abs(int(r[col.get(k, 'diff_' + k + '_ns')]))
                 for k in keys] + [r['function']]
if rows != sorted(rows, key=key) or not rows:
    print('order bad', [r['function'] for r in rows])
PY
}

diff_check "$TMP/old.csv" "$TMP/new.csv" "$TMP/diff.csv" total >"$TMP/check"
check "the calls differ by leaf's 3 and no other" 'grep -qx "calls leaf=3" "$TMP/check"'
check "every old and new value is the reports', the difference new less old, the percent of old" \
	'! grep -q "^value\|^functions" "$TMP/check"'
check "largest difference of total time first, either way" '! grep -q "^order" "$TMP/check"'
for keys in calls self avg min max name self,calls; do
	"$DTRACE" --diff "$TMP/old" --format=csv --sort "$keys" "$TMP/new" >"$TMP/sorted.csv"
	diff_check "$TMP/old.csv" "$TMP/new.csv" "$TMP/sorted.csv" "$keys" >"$TMP/check"
	check "--sort $keys: the rows in its order" '! grep -q "^order\|^value" "$TMP/check"'
done
"$DTRACE" --diff "$TMP/old" --sort calls "$TMP/new" | sed -n 6p >"$TMP/first"
check "--sort calls: leaf first, 3 calls more" \
	'grep -qE "^ +[0-9]+ +[0-9]+ +\+3 +\+[0-9.]+% .*  leaf  rep\.c:4$" "$TMP/first"'

# a function of the new trace only
"$DTRACE" --diff "$TMP/old" --format=csv "$TMP/extra" >"$TMP/extra-diff.csv"
diff_check "$TMP/old.csv" "$TMP/extra.csv" "$TMP/extra-diff.csv" total >"$TMP/check"
check "a function of the new trace only: 0 calls before, 1 after, and no other change of calls" \
	'grep -qx "calls extra=1" "$TMP/check" && ! grep -q "^value\|^functions\|^order" "$TMP/check"'
grep '^extra,' "$TMP/extra-diff.csv" | cut -d, -f4-7 >"$TMP/extra.row"
check "... its percent is empty: there is no old value" 'grep -qx "0,1,1," "$TMP/extra.row"'
"$DTRACE" --diff "$TMP/extra" --format=csv "$TMP/old" | grep '^extra,' | cut -d, -f4-7 >"$TMP/gone.row"
check "a function of the old trace only: 1 call before, 0 after, -100%" \
	'grep -qx "1,0,-1,-100.000" "$TMP/gone.row"'

# ---- the text against the CSV ----
python3 - "$TMP/diff.csv" "$TMP/diff.txt" >"$TMP/text.diff" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
lines = open(sys.argv[2]).read().splitlines()
text = [l.split() for l in lines[5:]]
ns = lambda s: int(s.replace('.', '').replace('+', ''))
pct = lambda s: '' if s == '-' else float(s.rstrip('%'))
bad = 0
if not lines[3].split() == ['TOTAL(us)', 'SELF(us)', 'CALLS']:
    print('groups', lines[3]); bad += 1
for r, t in zip(rows, text):
    got = [ns(t[0]), ns(t[1]), ns(t[2]), pct(t[3]), ns(t[4]), ns(t[5]), ns(t[6]), pct(t[7]),
           int(t[8]), int(t[9]), int(t[10]), pct(t[11]), t[12]]
    want = []
    for v in ('total_ns', 'self_ns', 'calls'):
        p = r[f'diff_{v}_pct']
        want += [int(r['old_' + v]), int(r['new_' + v]), int(r['diff_' + v]),
                 float(p) if p else '']
    want.append(r['function'])
    # the text rounds the percent to 1 decimal, the CSV to 3: the text's
    # within half its last digit of the CSV's (a .x5 may round either way)
    same = len(got) == len(want) and all(
        abs(g - w) <= 0.0501 if isinstance(g, float) and isinstance(w, float) else g == w
        for g, w in zip(got, want))
    if not same:
        print('text', t, 'csv', want); bad += 1
if len(rows) != len(text) or not rows:
    print(f'{len(rows)} csv rows, {len(text)} text rows'); bad += 1
sys.exit(bad != 0)
PY
ok $? "the text's rows are the CSV's, in its order: total, self, calls (old, new, diff, %)" \
	"$(cat "$TMP/text.diff")"
check "the header names both traces" \
	'grep -qx "# old: $TMP/old: 5 functions, 21 calls in 1 threads" "$TMP/diff.txt" &&
	 grep -qx "# new: $TMP/new: 5 functions, 24 calls in 1 threads" "$TMP/diff.txt"'

# ---- directories, files ----
"$DTRACE" --diff "$TMP/old" --format=csv "$TMP"/new/trace.* >"$TMP/files.csv"
cmp -s "$TMP/diff.csv" "$TMP/files.csv"
ok $? "NEW as files is NEW as a directory"
"$DTRACE" --diff "$(ls "$TMP"/old/trace.pid*.tid*)" --format=csv "$TMP/new" >"$TMP/file.csv"
cmp -s "$TMP/diff.csv" "$TMP/file.csv"
ok $? "OLD as its one stream file is OLD as a directory"
"$DTRACE" --diff "$TMP/old" --format=csv "$TMP/old" >"$TMP/same.csv"
diff_check "$TMP/old.csv" "$TMP/old.csv" "$TMP/same.csv" total >"$TMP/check"
check "a trace against itself: no difference" \
	'grep -qx "calls " "$TMP/check" && ! grep -q "^value\|^order" "$TMP/check" &&
	 [ "$(cut -d, -f6 "$TMP/same.csv" | sort -u | tr "\n" " ")" = "0 diff_calls " ]'

expect_error "--diff of a missing trace names it" "$TMP/nothing" \
	"$DTRACE" --diff "$TMP/nothing" "$TMP/new"
expect_error "--diff with --calltree" "go with --report" \
	"$DTRACE" --calltree --diff "$TMP/old" "$TMP/new"
done_testing
