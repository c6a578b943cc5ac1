#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --calltree, --flat and --callgraph of traced programs against golden
# files (normalized: durations, pids and tids masked): threads, recursion, a
# shared library, fork; PIE, not PIE and stripped with separate debug info
# must name everything the same.  Repairs of unbalanced calls, kernel events
# in a thread's tree, call sites with inlined functions and .cold parts, C++.
# UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
. "$(dirname "$0")/user-common.sh"

# tree NAME DIR [dtrace options]: normalized call tree of DIR into TMP/NAME
tree() {
	local name=$1 dir=$2
	shift 2
	"$DTRACE" --calltree "$@" "$dir"/trace.* 2>"$TMP/$name.err" | normalize >"$TMP/$name.tree"
}

traced "$TMP/pie" "$UT/calls" 2>/dev/null
tree pie "$TMP/pie"
golden_user calltree "$TMP/pie.tree"

# the same calls, however the program was built
traced "$TMP/nopie" "$UT/calls-nopie" 2>/dev/null
tree nopie "$TMP/nopie"
sed 's/, calls-nopie)/, calls)/' "$TMP/nopie.tree" | diff -u "$TMP/pie.tree" - >"$TMP/nopie.diff"
ok $? "not PIE: the same call tree" "$(head -n 20 "$TMP/nopie.diff")"

traced "$TMP/strip" "$UT/calls-stripped" 2>/dev/null
tree strip "$TMP/strip"
sed 's/, calls-stripped)/, calls)/' "$TMP/strip.tree" | diff -u "$TMP/pie.tree" - >"$TMP/strip.diff"
ok $? "stripped, debug info by debuglink: the same call tree" "$(head -n 20 "$TMP/strip.diff")"

# stripped, its debug info only under a .build-id directory
mkdir -p "$TMP/bid" "$TMP/debug"
cp "$UT/calls-stripped" "$UT/libcalls.so" "$TMP/bid/"
id=$(readelf -n "$UT/calls-stripped" | awk '/Build ID/ { print $3 }')
mkdir -p "$TMP/debug/.build-id/${id:0:2}"
cp "$UT/calls-stripped.debug" "$TMP/debug/.build-id/${id:0:2}/${id:2}.debug"
traced "$TMP/byid" "$TMP/bid/calls-stripped" 2>/dev/null
KTRACE_DEBUGINFO_PATH=$TMP/debug tree byid "$TMP/byid"
sed 's/, calls-stripped)/, calls)/' "$TMP/byid.tree" | diff -u "$TMP/pie.tree" - >"$TMP/byid.diff"
ok $? "stripped, debug info by build id: the same call tree" "$(head -n 20 "$TMP/byid.diff")"

# no debug info anywhere: numbers, not wrong names
KTRACE_DEBUGINFO_PATH=$TMP/nowhere tree nodebug "$TMP/byid"
grep -q 'calls-stripped+0x[0-9a-f]*() {' "$TMP/nodebug.tree" && ! grep -q ' fib' "$TMP/nodebug.tree"
ok $? "no debug info: addresses as file+offset"

# the file was rebuilt after the trace: the build id says so
mkdir -p "$TMP/re"
cp "$UT/calls" "$UT/libcalls.so" "$TMP/re/"
traced "$TMP/retr" "$TMP/re/calls" 2>/dev/null
cp "$UT/calls-nopie" "$TMP/re/calls"
"$DTRACE" --flat "$TMP"/retr/trace.* >/dev/null 2>"$TMP/re.err"
grep -q "re/calls: build id differs from the traced file's" "$TMP/re.err"
ok $? "a file rebuilt since the trace: a warning" "$(cat "$TMP/re.err")"

rm "$TMP"/pie/*.maps
tree nomaps "$TMP/pie"
grep -q 'maps: No such file' "$TMP/nomaps.err" && grep -q '^ *| 0x[0-9a-f]*() {' "$TMP/nomaps.tree"
ok $? "no map file: a warning, addresses in hex" "$(cat "$TMP/nomaps.err")"

# a library loaded with dlopen() after the first record, unloaded before exit
traced "$TMP/dl" "$UT/dlopen" "$UT/libcalls.so"
tree dl "$TMP/dl"
grep -q '^ *| main() {' "$TMP/dl.tree" && grep -q '^ *DURATION |   lib_square();' "$TMP/dl.tree"
ok $? "a library dlopen()ed and dlclose()d: its functions are named" "$(cat "$TMP/dl.tree")"

# ---- flat profile and call graph ----
traced "$TMP/calls" "$UT/calls" 2>/dev/null
"$DTRACE" --flat "$TMP"/calls/trace.* >"$TMP/flat.raw"
{ head -n 2 "$TMP/flat.raw"; tail -n +3 "$TMP/flat.raw" | sort -k 4; } | normalize |
	sed -E 's/^( +[0-9]+) +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}/\1  TOTAL  SELF/' >"$TMP/flat"
golden_user flat "$TMP/flat"

"$DTRACE" --callgraph -o "$TMP/graph.dot" "$TMP"/calls/trace.*
normalize <"$TMP/graph.dot" >"$TMP/graph"
golden_user callgraph "$TMP/graph"
dot -Tsvg "$TMP/graph.dot" >"$TMP/graph.svg" 2>"$TMP/dot.err" && grep -q '<svg' "$TMP/graph.svg"
ok $? "dot -Tsvg takes the call graph" "$(cat "$TMP/dot.err")"

# ---- repairs (and what needs none: C++ exceptions) ----
traced "$TMP/jumps" "$UT/jumps"
tree jumps "$TMP/jumps"
golden_user jumps "$TMP/jumps.tree"

if [ -x "$UT/exceptions" ]; then
	traced "$TMP/exc" "$UT/exceptions"
	tree exc "$TMP/exc"
	golden_user exceptions "$TMP/exc.tree"
else
	skip "golden user-exceptions" "C++ exceptions: no C++ compiler"
fi

KTRACE_USER_DROP=1 KTRACE_USER_BUF=1024 traced "$TMP/lossy" "$UT/sigstress" 0.3 >/dev/null
tree lossy "$TMP/lossy" -j 1
grep -q '/\* ! [0-9PT]* records lost here \*/' "$TMP/lossy.tree"
ok $? "lost records are shown where they were lost"
# notes have no function: the call graph must not look one up
"$DTRACE" --callgraph "$TMP"/lossy/trace.* >"$TMP/lossy.dot" 2>"$TMP/lossy-cg.err" &&
	grep -q '^digraph' "$TMP/lossy.dot"
ok $? "--callgraph of a trace with lost records" "$(tail -n 5 "$TMP/lossy-cg.err")"

# a name longer than a line's room, many times: where the output buffer
# ends, it goes out whole, it does not kill dtrace ("line too long")
long=$(printf 'f%.0s' $(seq 1 6000))
printf 'void %s(void) { }\nint main(void) { for (int i = 0; i < 400; i++) %s(); return 0; }\n' \
	"$long" "$long" >"$TMP/long.c"
cc -O0 -g -finstrument-functions -o "$TMP/long" "$TMP/long.c"
traced "$TMP/longt" "$TMP/long"
for view in calltree flat callgraph; do
	"$DTRACE" --$view "$TMP"/longt/trace.* >"$TMP/long.$view" 2>"$TMP/long.err"
	# (DOT labels are cut to half a line)
	[ $? -eq 0 ] && [ "$(grep -c "${long:0:1000}" "$TMP/long.$view")" -ge 1 ]
	ok $? "--$view: a 6000-character function name" "$(tail -n 3 "$TMP/long.err")"
done
[ "$(grep -c "^ *[0-9.]* us |   $long();" "$TMP/long.calltree")" -eq 400 ]
ok $? "--calltree: all 400 calls of it, whole"

# ---- the stack pointer alone (no map file, no symbols): a hand-made stream ----
# main calls jumper, which calls deep, deep (recursing); a longjmp back into
# jumper, which calls leaf (a smaller frame: entered above deep's); main calls
# f, which longjmps back, and f again from the same call site (same stack
# pointer); g with h inlined into it (same stack pointer, same call site);
# exit() from main.  Exits: bit 0 set, before the epilogue; clear, tail-called
# with the function's CFA.  func:enter 0x03001000 + CONT|END 0x00c00000 (call
# site, stack pointer), func:leave 0x04001000 (function, stack pointer).
mkdir -p "$TMP/sp"
python3 "$ROOT/tests/host/export-check.py" mkfile "$TMP/sp/trace.pid900.tid900" -1 900 900 sp <<'EOF'
1000 0x03001000 900 0x401000 0
1000 0x00c00000 900 0x7ff010 0x1000
2000 0x03001000 900 0x401100 0
2000 0x00c00000 900 0x401010 0xff0
3000 0x03001000 900 0x401200 0
3000 0x00c00000 900 0x401110 0xfd0
4000 0x03001000 900 0x401200 0
4000 0x00c00000 900 0x401210 0xfb0
5000 0x03001000 900 0x401300 0
5000 0x00c00000 900 0x401120 0xfe0
6000 0x04001000 900 0x401300 0xff0
7000 0x04001000 900 0x401100 0xff1
8000 0x03001000 900 0x401400 0
8000 0x00c00000 900 0x401020 0xfe0
9000 0x03001000 900 0x401400 0
9000 0x00c00000 900 0x401020 0xfe0
10000 0x04001000 900 0x401400 0xfe1
11000 0x03001000 900 0x401500 0
11000 0x00c00000 900 0x401030 0xfe0
12000 0x03001000 900 0x401600 0
12000 0x00c00000 900 0x401030 0xfe0
13000 0x04001000 900 0x401600 0xfe1
14000 0x04001000 900 0x401500 0xff0
EOF
"$DTRACE" --flat "$TMP"/sp/trace.* >"$TMP/sp.flat" 2>/dev/null
head -n 1 "$TMP/sp.flat" | grep -q '^# 7 functions, 9 calls in 1 threads; 4 repairs' &&
	[ "$(awk '$4 == "0x401200" { print $1 }' "$TMP/sp.flat")" = 2 ] &&
	[ "$(awk '$4 == "0x401400" { print $1 }' "$TMP/sp.flat")" = 2 ]
ok $? "stack pointers alone: every call counted, the 4 frames without an exit repaired" \
	"$(cat "$TMP/sp.flat")"
"$DTRACE" --calltree "$TMP"/sp/trace.* 2>/dev/null | normalize | sed 's/^ *DURATION |/D |/; s/^  *|/  |/' >"$TMP/sp.tree"
cat >"$TMP/sp.want" <<'EOF'
# thread P1 (pid P1, sp)
#      DURATION | FUNCTION
  | 0x401000() {
  |   0x401100() {
  |     0x401200() {
D |       0x401200(); /* ! no exit recorded: a caller returned first (longjmp?) */
D |     } /* 0x401200 */ /* ! no exit recorded: a caller returned first (longjmp?) */
D |     0x401300();
D |   } /* 0x401100 */
D |   0x401400(); /* ! no exit recorded: a caller returned first (longjmp?) */
D |   0x401400();
  |   0x401500() {
D |     0x401600();
D |   } /* 0x401500 */
D | } /* 0x401000 */ /* ! still running when the trace ended */
EOF
diff -u "$TMP/sp.want" "$TMP/sp.tree" >"$TMP/sp.diff"
ok $? "stack pointers alone: longjmp, a smaller frame, a sibling at the same place, inlining" \
	"$(cat "$TMP/sp.diff")"

# ---- kernel events of the thread, in its tree ----
main=$(ls "$TMP"/calls/trace.pid*.tid* | head -n 1)
"$UT/kfake" "$main" "$TMP/calls/trace.cpu0"
"$DTRACE" --calltree -t "$(basename "$main" | sed 's/.*tid//')" "$TMP"/calls/trace.* |
	normalize >"$TMP/kernel"
golden_user kernel "$TMP/kernel"
"$DTRACE" --calltree -e fault -t "$(basename "$main" | sed 's/.*tid//')" "$TMP"/calls/trace.* |
	grep -c 'sched:switch\|fault:page' | grep -qx 3
ok $? "-e picks the kernel events shown; the calls stay"

# ---- call sites: inlined functions, .cold parts ----
src=$ROOT/tests/user/calls.c
l_twice=$(grep -n 'return add_one(x) \* 2;' "$src" | cut -d: -f1)
l_main=$(grep -n 'sink = twice(20);' "$src" | cut -d: -f1)
l_report=$(grep -n 'report("negative");' "$src" | cut -d: -f1)
"$DTRACE" --calltree --sites "$TMP"/calls/trace.* >"$TMP/sites"
grep -q "add_one()[ {;]* /\* from calls.c:$l_twice in twice inlined at calls.c:$l_main in main \*/" \
	"$TMP/sites"
ok $? "--sites: a call from an inlined function" "$(grep add_one "$TMP/sites" | head -n 2)"
grep -q "report(); /\* from calls.c:$l_report in check (check.cold) \*/" "$TMP/sites"
ok $? "--sites: a call from a .cold part" "$(grep report "$TMP/sites")"

done_testing
