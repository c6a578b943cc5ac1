#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A vfork() child's calls before its exec (uftrace's s-vforkexec: child_work
# before execl): the child runs on its parent's thread state and cannot
# record, so its records are counted lost in the parent's file (dtrace -S),
# and ktrace-run says so (exit 1), never dropped silently.  Ground truth:
# the program's child makes child_work() N times, 2 records each (entry
# and exit); the parent's own calls are all recorded.
. "$(dirname "$0")/user-common.sh"

cat >"$TMP/vf.c" <<'C'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
volatile int sink;
__attribute__((noinline)) void child_work(void) { sink++; }
__attribute__((noinline)) void parent_work(void) { sink++; }
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	pid_t pid = vfork();

	if (pid == 0) {
		for (int i = 0; i < n; i++)
			child_work();
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	parent_work();
	return 0;
}
C
cc -O1 -g -finstrument-functions -o "$TMP/vf" "$TMP/vf.c" 2>"$TMP/err.cc"
ok $? "build the vfork program" "$(cat "$TMP/err.cc")"

"$KTRACE_RUN" -o "$TMP/r" -- "$TMP/vf" 3 >/dev/null 2>"$TMP/err.r"
rc=$?
"$DTRACE" -S "$TMP"/r/trace.* >"$TMP/S" 2>&1
l=$(awk '$1 == "lost" { print $2 }' "$TMP/S")
[ "${l:-0}" -eq 6 ]
ok $? "ktrace-run: the child's 3 calls before exec are 6 records counted lost" \
	"lost ${l:-0}; $(cat "$TMP/S")"
[ $rc -eq 1 ] && grep -q "records lost" "$TMP/err.r"
ok $? "ktrace-run: said, and exit 1 (the command exited 0)" "exit $rc; $(cat "$TMP/err.r")"
"$DTRACE" --flat "$TMP"/r/trace.* >"$TMP/flat" 2>&1
grep -q "parent_work" "$TMP/flat" && grep -q "main" "$TMP/flat"
ok $? "ktrace-run: the parent's calls are all there" "$(cat "$TMP/flat")"

traced "$TMP/s" "$TMP/vf" 2
l=$(lost "$TMP/s")
[ "${l:-0}" -eq 4 ]
ok $? "without ktrace-run: 2 calls, 4 records counted lost" "lost ${l:-0}"
done_testing
