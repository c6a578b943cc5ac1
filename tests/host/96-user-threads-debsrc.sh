#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The call views on a multi-threaded C++ program from a Debian source
# package: pbzip2, with the libbz2 of Debian's bzip2 linked in, both built
# -O2 -g -finstrument-functions (tests/debsrc/build.sh; the C++ library's
# headers are instrumented too, no -finstrument-functions-exclude-file-list),
# compressing in 4 threads under ktrace-run.  Ground truth: the counting
# hook (tests/debsrc/cygcount.c: atomic counts, the same run, in front of
# libktrace).  Every function's calls in dtrace --flat, summed over the
# threads, are its entries as the hook counted them; the compressed output
# is the input's (bzip2 -d), so tracing changed nothing of what it does.
. "$(dirname "$0")/user-common.sh"

progs=$(tests/debsrc/build.sh bzip2 pbzip2 2>"$TMP/debsrc.err")
rc=$?
[ $rc -ne 77 ] || skip_all "$(head -n 1 "$TMP/debsrc.err")"
ok $rc "build bzip2 and pbzip2 from their Debian sources" "$(tail -n 20 "$TMP/debsrc.err")"
[ $rc -eq 0 ] || { done_testing; exit 1; }
pbzip2=$(tail -n 1 <<<"$progs")
cc -O2 -shared -fPIC -o "$TMP/cygcount.so" tests/debsrc/cygcount.c -ldl
ok $? "build the counting hook library"

# 7 blocks of 100 kB for 4 threads: text, and the bytes of a program
{ seq 1 20000 | awk '{ print $1, $1 * $1 % 977, "lorem ipsum dolor" }'; head -c 300000 "$DTRACE"; } \
	>"$TMP/input"
d=$TMP/pbzip2
# ktrace-run puts KTRACE_LIB in front of LD_PRELOAD: the hook, then libktrace
CYGCOUNT_OUT=$d.count.%p KTRACE_LIB=$TMP/cygcount.so LD_PRELOAD=$LIBKTRACE \
	timeout 120 "$KTRACE_RUN" -o "$d" -- "$pbzip2" -p4 -b1 -c <"$TMP/input" >"$d.bz2" 2>"$d.err"
ok $? "pbzip2 -p4 runs under ktrace-run" "$(tail -n 20 "$d.err")"
bzip2 -dc <"$d.bz2" | cmp -s - "$TMP/input"
ok $? "its output decompresses to its input"

"$DTRACE" --flat "$d"/trace.* >"$d.flat" 2>"$d.flaterr"
python3 tests/host/flat-vs-count.py "$d.flat" "$d".count.* >"$d.cmp"
rc=$?
read -r _ fns _ entries _ _ _ _ _ _ < <(grep ^functions "$d.cmp")
[ "${entries:-0}" -gt 100000 ] && [ $rc -eq 0 ]
ok $? "each of $fns functions called as often as it was entered, over all threads ($entries calls)" \
	"$(cat "$d.cmp" "$d.flaterr")"

# the threads that compressed: four with many calls each, in files of their own
for f in "$d"/trace.pid*.tid*; do
	"$DTRACE" --flat "$f" 2>/dev/null | awk 'NR == 1 { print $4 }'
done | sort -n >"$d.per-thread"
[ "$(awk '$1 > 10000' "$d.per-thread" | wc -l)" -ge 4 ]
ok $? "four threads or more made over 10000 calls each" "$(tr '\n' ' ' <"$d.per-thread")"
[ "$(lost "$d")" = "" ] || [ "$(lost "$d")" = 0 ]
ok $? "no record lost"
done_testing
