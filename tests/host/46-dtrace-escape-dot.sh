#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A comm is whatever the program called itself (prctl PR_SET_NAME): a `"`,
# a backslash, a newline, bytes that are not UTF-8.  --callgraph puts it in
# a DOT label: Graphviz's own parser (dot) must accept the graph, and the
# label must show the name, not end at the quote.
. "$(dirname "$0")/dtrace-mktrace.sh"

if ! command -v dot >/dev/null; then
	skip_all "dot (graphviz) not installed"
fi
# comm: a " b \ <newline> <0xff> c
$MKTRACE trace.pid7.tid7 --user 7 7 --comm 6122625c0aff63 \
	1000:$ENTRY:0x401000:0 2000:$EXIT:0x401000:0
dt --callgraph trace.pid7.tid7
check "dtrace --callgraph runs" '[ $rc -eq 0 ] && grep -q "^digraph" out'
dot -Tplain out >plain 2>dot.err
drc=$?
check "dot accepts the graph (exit $drc, no warning)" '[ $drc -eq 0 ] && [ ! -s dot.err ]'
check "the thread's label holds the whole comm, escaped" \
	'grep -q "pid 7, a.*b.*xff.*c)" plain'
done_testing
