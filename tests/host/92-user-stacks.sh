#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Call paths: ktrace_user_stack() in the program and dtrace --stacks after
# it.  Ground truth: tests/user/stacks, which keeps its own path (each
# function counts itself in) and knows its functions' addresses:
#  - signal: from signal handlers at known paths (on the thread's stack,
#    on a sigaltstack, 20 times after a siglongjmp out of the handler, in a
#    recursion, after one GCC inlines into itself (its inlined calls share
#    a stack pointer), after makecontext() switches), ktrace_user_stack()
#    gives exactly the program's depth and functions; in a recursion 2000
#    deep the depth and main and the innermost frames;
#    ktrace_user_stack_print() writes exactly the program's path;
#    untraced, both say -1 and the program runs as it does;
#  - park: 3 threads and main stop at known paths, then main calls abort()
#    or the process gets SIGKILL: dtrace --stacks gives each thread's path
#    exactly, and for a program that returned from everything, none.
. "$(dirname "$0")/user-common.sh"

# ---- in the program ----
"$KTRACE_RUN" -o "$TMP/sig" "$UT/stacks" signal >"$TMP/sig.out" 2>"$TMP/sig.err"
ok $? "signal: runs under ktrace-run, every check in it passes" \
	"$(grep -v '^print\|^want' "$TMP/sig.out" | grep -v '^ok' | head; cat "$TMP/sig.err")"
n=$(grep -c '^ok ' "$TMP/sig.out")
[ "$n" -eq 27 ] && ! grep -q '^not ok' "$TMP/sig.out"
ok $? "signal: 27 paths from handlers exactly the program's (depth, every function)" \
	"$(grep '^not ok' "$TMP/sig.out" | head)"
for shape in thread-stack sigaltstack longjmp after-longjmp recursion after-inlined after-ucontext; do
	grep "^print $shape: " "$TMP/sig.out" | cut -d' ' -f3- >"$TMP/got"
	grep "^want $shape: " "$TMP/sig.out" | cut -d' ' -f3- >"$TMP/want"
	[ -s "$TMP/want" ] && diff "$TMP/want" "$TMP/got" >"$TMP/diff"
	ok $? "signal: $shape: ktrace_user_stack_print() writes the program's path" \
		"$(cat "$TMP/diff")"
done
deep=$(grep '^print deep: ' "$TMP/sig.out" | cut -d' ' -f3-)
case $deep in
"main - run_signal -- deep --- deep ---- deep"*" [1682 frames not kept] -(1746)- deep -(1747)- deep"*" -(2001)- deep") r=0 ;;
*) r=1 ;;
esac
ok $r "signal: 2002 deep: the outermost 64 and innermost 256 frames printed, 1682 counted" \
	"${deep:0:200} ... ${deep: -200}"

KTRACE_USER_DIR= "$UT/stacks" signal >"$TMP/off.out" 2>"$TMP/off.err"
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'depth -1, counted' "$TMP/off.out")" -eq 26 ] &&
	grep -q '^not ok deep: depth -1' "$TMP/off.out"
ok $? "untraced: ktrace_user_stack() says -1 at every check, the program runs to its end" \
	"exit $rc; $(head -n 5 "$TMP/off.out")"

# ---- after the fact: dtrace --stacks ----
# stacks_match NAME DIR OUT: each "path TID PATH" of OUT is the path dtrace
# --stacks gives thread TID, with its depth
stacks_match() {
	local name=$1 dir=$2 out=$3
	"$DTRACE" --stacks "$dir"/trace.* >"$dir.stacks" 2>"$dir.err"
	ok $? "$name: dtrace --stacks exits 0" "$(cat "$dir.err")"
	awk '$1 ~ /^[0-9]+\/[0-9]+$/ { split($1, id, "/"); path = $0
		for (i = 0; i < 4; i++) sub(/^[^ ]+ +/, "", path); print id[2], $4, path }' \
		"$dir.stacks" | sort >"$dir.got"
	awk '$1 == "path" { path = substr($0, index($0, $3)); n = split(path, w, " ")
		print $2, (n + 1) / 2, path }' "$out" | sort >"$dir.want"
	[ "$(wc -l <"$dir.want")" -eq 4 ] && diff "$dir.want" "$dir.got" >"$dir.diff"
	ok $? "$name: every thread's path and depth at the end, exactly the program's" \
		"$(cat "$dir.diff" "$dir.want")"
}

{ "$KTRACE_RUN" -o "$TMP/abort" "$UT/stacks" park abort >"$TMP/abort.out"; } 2>/dev/null
rc=$?
ok $((rc != 134)) "abort: the program dies of SIGABRT under ktrace-run" "exit $rc"
stacks_match abort "$TMP/abort" "$TMP/abort.out"

rm -rf "$TMP/kill"
"$KTRACE_RUN" -o "$TMP/kill" "$UT/stacks" park kill >"$TMP/kill.out" 2>/dev/null &
run=$!
for _ in $(seq 100); do grep -q '^ready' "$TMP/kill.out" && break; sleep 0.1; done
main=$(awk '$1 == "path" && $3 == "main" { print $2 }' "$TMP/kill.out")
[ -n "$main" ] && kill -KILL "$main"
{ wait $run; } 2>/dev/null
rc=$?
ok $((rc != 137)) "kill: the program dies of SIGKILL at its known paths" "exit $rc"
stacks_match kill "$TMP/kill" "$TMP/kill.out"

# a program that returned from all its calls: nothing running in any thread
"$KTRACE_RUN" -o "$TMP/done" "$UT/stacks" budget >/dev/null 2>&1
"$DTRACE" --stacks "$TMP/done"/trace.* >"$TMP/done.stacks" 2>&1
[ "$(grep -c ' 0  (none running)$' "$TMP/done.stacks")" -eq 4 ]
ok $? "returned: dtrace --stacks shows no call running in its 4 threads" \
	"$(cat "$TMP/done.stacks")"
done_testing
