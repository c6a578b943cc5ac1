#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace --format=svg: the flame graph of --folded, --folded-time and
# --folded-offcpu, read back by flame-check.py (xml.etree: well-formed,
# every name escaped) against the folded lines of the same trace, the
# ground truth: its frames are the lines' prefixes, each frame's count the
# sum of the lines under it, its width proportional to it, as wide as its
# callees and its own weight together, callees in the order of names.
# Traces: tests/user/calls traced by libktrace (threads, a shared library,
# fork), a C++ program whose names hold < > and blanks, and a made-up
# scheduler's kernel trace (sched-sim.py) with a comm of < & " '.  The same
# trace gives the same file; no stacks gives a valid SVG that says so; and
# where flamegraph.pl is installed, it draws the same frames (name, count,
# row, place within its 0.1 px rounding) from the folded lines.
. "$(dirname "$0")/user-common.sh"

CHECK=$ROOT/tests/host/flame-check.py

# flame NAME SVG FOLDED: flame-check.py's lines as checks
flame() {
	local name=$1 line
	python3 "$CHECK" "$2" "$3" >"$TMP/check.lines" 2>&1
	ok $? "$name: the SVG parses" "$(tail -n 5 "$TMP/check.lines")"
	while read -r line; do
		case $line in
		ok\ *) ok 0 "$name: ${line#ok }" ;;
		bad\ *) ok 1 "$name: ${line#bad }" ;;
		esac
	done <"$TMP/check.lines"
}

# svg_vs_folded NAME OPTION FILES...: --format=svg against OPTION's lines
svg_vs_folded() {
	local name=$1 opt=$2
	shift 2
	"$DTRACE" "$opt" "$@" >"$TMP/$name.folded" 2>"$TMP/$name.err"
	"$DTRACE" "$opt" --format=svg -o "$TMP/$name.svg" "$@" 2>>"$TMP/$name.err"
	ok $? "$name: dtrace $opt --format=svg exits 0" "$(cat "$TMP/$name.err")"
	flame "$name" "$TMP/$name.svg" "$TMP/$name.folded"
}

traced "$TMP/calls" "$UT/calls" >/dev/null 2>&1
svg_vs_folded calls --folded "$TMP"/calls/trace.*
svg_vs_folded calls-time --folded-time "$TMP"/calls/trace.*
"$DTRACE" --format=svg "$TMP"/calls/trace.* >"$TMP/default.svg"
cmp -s "$TMP/default.svg" "$TMP/calls.svg"
ok $? "--format=svg alone draws --folded's stacks"
"$DTRACE" --format=svg --folded "$TMP"/calls/trace.* | cmp -s - "$TMP/calls.svg"
ok $? "the same trace, the same file (options in either order)"

python3 "$ROOT/tests/host/sched-sim.py" "$TMP/sim" 1
svg_vs_folded offcpu --folded-offcpu "$TMP"/sim.cpu*
grep -q "<title>a&lt;b&amp;c&quot;d&#39;-103 (" "$TMP/offcpu.svg"
ok $? "off-CPU: the comm a<b&c\"d' escaped in its frame's title" \
	"$(grep -m1 -- '-103 (' "$TMP/offcpu.svg")"

if command -v g++ >/dev/null; then
	cat >"$TMP/names.cc" <<'C'
template <typename T, typename U> __attribute__((noinline)) void pair_fn() { __asm__ volatile(""); }
__attribute__((noinline)) bool operator<(const struct S &, const struct S &) { return false; }
struct S {};
int main() { pair_fn<int, char>(); pair_fn<S, long>(); S a, b; return a < b; }
C
	g++ -O0 -finstrument-functions -o "$TMP/names" "$TMP/names.cc" 2>"$TMP/cc.err"
	ok $? "build a C++ program with templates and an operator<" "$(cat "$TMP/cc.err")"
	traced "$TMP/names.d" "$TMP/names" >/dev/null 2>&1
	svg_vs_folded names --folded "$TMP"/names.d/trace.*
	grep -q '<title>void_pair_fn&lt;int,_char&gt; (1 calls' "$TMP/names.svg"
	ok $? "C++: pair_fn<int, char> escaped in its title" "$(grep -m3 pair_fn "$TMP/names.svg")"
else
	skip "C++ names with < and >" "no g++"
fi

# no stacks: a kernel trace has no calls
"$DTRACE" --format=svg "$TMP"/sim.cpu* >"$TMP/empty.svg" 2>"$TMP/empty.err"
python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$TMP/empty.svg" &&
	grep -q "no stacks in the trace" "$TMP/empty.svg" && ! grep -q "<rect x=\"10" "$TMP/empty.svg"
ok $? "no stacks: a valid SVG that says so, no frame" "$(head -c 600 "$TMP/empty.svg")"

if command -v flamegraph.pl >/dev/null; then
	# same_frames OURS THEIRS: each frame's name, count and row, and its place
	# within the 0.1 px flamegraph.pl rounds to
	same_frames() {
		python3 - "$1" "$2" <<'PY'
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
def frames(path):
    out = []
    for g in ET.parse(path).getroot().iter(NS + "g"):
        t, r = g.find(NS + "title"), g.find(NS + "rect")
        m = t is not None and r is not None and \
            re.fullmatch(r"(.*) \(([0-9,]+) \S+, [0-9.]+%\)", t.text, re.S)
        if m:
            out.append([m[1], int(m[2].replace(",", "")), float(r.get("y")),
                        float(r.get("x")), float(r.get("width"))])
    rows = sorted({f[2] for f in out}, reverse=True)
    return sorted([n, c, rows.index(y), x, w] for n, c, y, x, w in out)
ours, theirs = frames(sys.argv[1]), frames(sys.argv[2])
bad = [(a, b) for a, b in zip(ours, theirs)
       if a[:3] != b[:3] or abs(a[3] - b[3]) > 0.15 or abs(a[4] - b[4]) > 0.15]
print("%d and %d frames" % (len(ours), len(theirs)), *bad[:5], sep="\n")
sys.exit(1 if len(ours) != len(theirs) or bad else 0)
PY
	}
	for name in calls offcpu names; do
		[ -s "$TMP/$name.folded" ] || continue
		flamegraph.pl "$TMP/$name.folded" >"$TMP/$name.pl.svg" 2>/dev/null
		same_frames "$TMP/$name.svg" "$TMP/$name.pl.svg" >"$TMP/$name.pl.diff"
		ok $? "$name: flamegraph.pl draws the same frames in the same places" \
			"$(cat "$TMP/$name.pl.diff")"
	done
else
	skip "the frames flamegraph.pl draws" "flamegraph.pl not installed"
fi
done_testing
