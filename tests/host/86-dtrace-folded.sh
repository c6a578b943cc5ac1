#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --folded and --folded-time (folded stacks for flamegraph.pl and
# speedscope) of programs built with -finstrument-functions, traced by
# libktrace with the counting hook in front (tests/debsrc/cygcount.c, the
# same run) as the ground truth.  Checked, for a tiny program of this
# test's own (known paths, recursion) and tests/user/shapes.c's fib (GCC
# inlines it into itself at -O2) and a 2000-deep recursion, at each of
# SHAPE_FLAGS, and for tests/user/calls (threads, a shared library, fork):
#  1. per function, the counts of the lines whose last function it is add
#     up to its calls in dtrace --flat and to the hook's entries;
#  2. all counts add up to the calls (--flat's, the hook's entries);
#  3. every line is "name;name;... COUNT": ^[^ ;]+(;[^ ;]+)* [0-9]+$,
#     also where a C++ name has blanks (written as '_');
#  4. the tiny program's paths, main;a;b and main;r;r;r;r among them, come
#     with the counts its source says;
#  5. --folded-time: every weight a whole number of ns (so non-negative),
#     the same paths as --folded, and all add up to the threads' time: the
#     durations of the outermost calls in dtrace --calltree (ns precision,
#     so exactly).
. "$(dirname "$0")/user-shapes-common.sh"

# folded_vs_count DIR PROG: flat_vs_count's line (dtrace --flat against the
# hook), then "folded D flatcalls L foldwrong W" and a "# ..." line per
# function whose paths do not add up to its calls in --flat
folded_vs_count() {
	local dir=$1 prog=$2
	flat_vs_count "$dir" "$prog"
	"$DTRACE" --folded "$dir"/trace.* >"$dir.folded" 2>>"$dir.err"
	perl - "$dir.flat" "$dir.folded" <<'PERL'
use strict;
my ($flatf, $foldf) = @ARGV;
my (%flat, %fold, $nflat, $nfold);
open my $f, '<', $flatf or die;
while (<$f>) {
	next if /^#/ || /CALLS/;
	my ($calls, $fn) = (split)[0, 3];
	$flat{$fn} += $calls;
	$nflat += $calls;
}
open my $d, '<', $foldf or die;
while (<$d>) {
	my ($path, $n) = /^(.*) (\d+)$/ or next;
	$fold{(split /;/, $path)[-1]} += $n;
	$nfold += $n;
}
my $bad = 0;
for my $k (sort keys %{{ %flat, %fold }}) {
	next if ($flat{$k} // 0) == ($fold{$k} // 0);
	print "# $k: dtrace --flat ", $flat{$k} // 0, ", --folded ", $fold{$k} // 0, "\n" if $bad++ < 20;
}
printf "folded %d flatcalls %d foldwrong %d\n", $nfold // 0, $nflat // 0, $bad;
PERL
}

# check_lines NAME FILE: every line is a folded stack and its count
check_lines() {
	local bad
	bad=$(grep -cvE '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$2")
	[ -s "$2" ] && [ "$bad" -eq 0 ]
	ok $? "$1: every line is name;name;... COUNT" "$(grep -vE '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$2" | head -n 5)"
}

# check_folded NAME DIR PROG: checks 1 to 3 against the hook and --flat
check_folded() {
	local name=$1 dir=$2 prog=$3 cmp
	cmp=$(folded_vs_count "$dir" "$prog")
	read -r _ fns _ entries _ _ _ _ _ wrong < <(grep ^functions <<<"$cmp")
	read -r _ folded _ flat _ foldwrong < <(grep ^folded <<<"$cmp")
	[ "${entries:-0}" -gt 0 ] && [ "${wrong:-1}" -eq 0 ] && [ "${foldwrong:-1}" -eq 0 ]
	ok $? "$name: each of $fns functions' paths add up to its calls" \
		"$(grep '^#' <<<"$cmp"; cat "$dir.err")"
	[ "${entries:-0}" -gt 0 ] && [ "$folded" = "$entries" ] && [ "$flat" = "$entries" ]
	ok $? "$name: all counts add up to the $entries calls" "$cmp"
	check_lines "$name" "$dir.folded"
}

# ---- a program of our own: known paths ----
cat >"$TMP/tiny.c" <<'C'
#define F __attribute__((noinline))
F void b(void) { __asm__ volatile(""); }
F void a(int n) { for (int i = 0; i < n; i++) b(); }
F int r(int n) { return n ? r(n - 1) + 1 : 0; }
int main(void) { a(3); a(2); b(); r(3); return r(1) - 1; }
C
cat >"$TMP/tiny.want" <<'W'
main 1
main;a 2
main;a;b 5
main;b 1
main;r 2
main;r;r 2
main;r;r;r 1
main;r;r;r;r 1
W
for flags in "${SHAPE_FLAGS[@]}"; do
	fl=$(flags_name "$flags")
	prog=$TMP/tiny-$fl
	cc $flags -finstrument-functions -o "$prog" "$TMP/tiny.c" 2>"$TMP/cc.err"
	ok $? "build the tiny program at $flags" "$(cat "$TMP/cc.err")"
	counted "$TMP/tiny-$fl.d" "$prog" >/dev/null 2>"$TMP/tiny-$fl.run"
	ok $? "tiny at $fl: runs" "$(cat "$TMP/tiny-$fl.run")"
	check_folded "tiny at $fl" "$TMP/tiny-$fl.d" "$prog"
	sort "$TMP/tiny-$fl.d.folded" | diff -u "$TMP/tiny.want" - >"$TMP/tiny-$fl.diff"
	ok $? "tiny at $fl: main;a;b 5, main;r;r;r;r 1 and the other paths" \
		"$(cat "$TMP/tiny-$fl.diff")"
done

# ---- names the format cannot carry: C++'s "void pair_fn<int, char>" ----
if command -v g++ >/dev/null; then
	cat >"$TMP/blank.cc" <<'C'
template <typename T, typename U> __attribute__((noinline)) void pair_fn() { __asm__ volatile(""); }
int main() { pair_fn<int, char>(); return 0; }
C
	g++ -O0 -g -finstrument-functions -o "$TMP/blank" "$TMP/blank.cc" 2>"$TMP/cc.err"
	ok $? "build a C++ program" "$(cat "$TMP/cc.err")"
	traced "$TMP/blank.d" "$TMP/blank" >/dev/null 2>&1
	"$DTRACE" --folded "$TMP"/blank.d/trace.* >"$TMP/blank.folded"
	check_lines "C++ names with blanks" "$TMP/blank.folded"
	grep -qx 'main;void_pair_fn<int,_char> 1' "$TMP/blank.folded"
	ok $? "C++: blanks in names written as _" "$(cat "$TMP/blank.folded")"
else
	skip "C++ names with blanks" "no g++"
fi

# ---- self-inlined recursion ----
for flags in "${SHAPE_FLAGS[@]}"; do
	fl=$(flags_name "$flags")
	prog=$TMP/shapes-$fl
	cc $flags -finstrument-functions -o "$prog" "$ROOT/tests/user/shapes.c" 2>"$TMP/cc.err"
	ok $? "build tests/user/shapes.c at $flags" "$(cat "$TMP/cc.err")"
	for shape in "fib 20" "deep 2000"; do
		set -- $shape
		dir=$TMP/$1-$fl
		counted "$dir" "$prog" $shape >/dev/null 2>"$dir.run"
		ok $? "$1 at $fl: runs" "$(cat "$dir.run")"
		check_folded "$1 at $fl" "$dir" "$prog"
	done
done

# ---- threads, a shared library, fork: --flat as the ground truth, and time ----
traced "$TMP/calls" "$UT/calls" >/dev/null 2>&1
"$DTRACE" --flat "$TMP"/calls/trace.* >"$TMP/calls.flat"
"$DTRACE" --folded "$TMP"/calls/trace.* >"$TMP/calls.folded"
check_lines "threads" "$TMP/calls.folded"
flat=$(awk 'NR > 2 { n += $1 } END { print n + 0 }' "$TMP/calls.flat")
folded=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/calls.folded")
[ "$flat" -gt 0 ] && [ "$flat" = "$folded" ]
ok $? "threads: the counts add up to --flat's $flat calls" "folded: $folded"

"$DTRACE" --folded-time "$TMP"/calls/trace.* >"$TMP/calls.time"
check_lines "threads, --folded-time" "$TMP/calls.time"
diff <(sed 's/ [0-9]*$//' "$TMP/calls.folded") <(sed 's/ [0-9]*$//' "$TMP/calls.time") \
	>"$TMP/time-paths.diff"
ok $? "--folded-time: the paths of --folded" "$(head -n 20 "$TMP/time-paths.diff")"
"$DTRACE" --calltree "$TMP"/calls/trace.* >"$TMP/calls.tree"
# the outermost calls: no indentation after the bar; durations in ns
want=$(awk -F' us \\| ' '/^ *[0-9]+\.[0-9][0-9][0-9] us \| [^ ]/ { split($1, t, "."); n += t[1] * 1000 + t[2] } END { print n + 0 }' "$TMP/calls.tree")
got=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/calls.time")
[ "$want" -gt 0 ] && [ "$got" = "$want" ]
ok $? "--folded-time: the weights add up to the threads' ${want} ns" "folded: $got ns"
done_testing
