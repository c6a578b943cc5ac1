#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One options table (lib/opts.c) for ktrace, dtrace and ktrace-run: a
# usage error (unknown short or long option, missing argument, a bad
# value) exits 2 in each, with one line that starts with the tool's name;
# --help has one layout in all three; the options the man page documents
# are the ones --help lists; and an option the tools share means the same
# thing with the same letter (ktrace -c and dtrace -c, not --cpu/--cpus).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
T=$(mktemp -d /tmp/usage.XXXXXX)
trap 'rm -rf "$T"' EXIT
bin() { echo "${TOOLS:-$ROOT/$O/tools}/$1"; }

for tool in ktrace dtrace ktrace-run; do
	man=$ROOT/$( [ $tool = ktrace-run ] && echo user || echo $tool)/$tool.1
	for args in "-Z" "--bogus-option" "-o"; do
		"$(bin $tool)" $args >/dev/null 2>"$T/err"
		rc=$?
		[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
			grep -q "^$tool: .* ($tool -h for help)$" "$T/err"
		ok $? "$tool $args: exit 2, '$(cat "$T/err")'"
	done
	# a bad value is a usage error too, before anything is opened or run
	"$(bin $tool)" -e bogus-group /dev/null >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "^$tool: .*bogus-group" "$T/err"
	ok $? "$tool -e bogus-group: exit 2, '$(cat "$T/err")'"

	"$(bin $tool)" --help >"$T/$tool.help" 2>&1
	missing=
	for opt in $(grep -o -- '--[a-z-]*' "$T/$tool.help" | sort -u); do
		grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$man" || missing="$missing $opt"
	done
	[ -z "$missing" ] && grep -q -- "-h, --help" "$T/$tool.help"
	ok $? "$tool --help: every option in $(basename "$man")" "not in the man page:$missing"

	# the layout: Usage line, what it does, a blank line, Options:, one
	# line per option (and its continuations), a blank line, the rest,
	# "See TOOL(1)." last
	awk -v tool="$tool" '
		NR == 1 { if (index($0, "Usage: " tool " ") != 1) bad = "line 1: " $0; next }
		part == 0 && /^$/ { part = 1; next }
		part == 0 { if (!/^[A-Z]/ && !about) bad = "no description"; about = 1; next }
		part == 1 { if ($0 != "Options:") bad = "no Options: after the blank line"; part = 2; next }
		part == 2 && /^$/ { part = 3; next }
		part == 2 { if (!/^  (-[a-zA-Z], |    )--[a-z]/ && !/^                          /)
				bad = "not an option line: " $0; opts++; next }
		{ last = $0 }
		END {
			if (!bad && !opts) bad = "no options"
			if (!bad && last != "See " tool "(1).") bad = "last line: " last
			if (bad) { print bad; exit 1 }
		}' "$T/$tool.help" >"$T/layout"
	ok $? "$tool --help: Usage, description, Options:, the list, See $tool(1)." \
		"$(cat "$T/layout")"
	"$(bin $tool)" --version >"$T/version" 2>&1
	grep -q "^$tool (ktrace) [0-9]" "$T/version"
	ok $? "$tool --version: '$tool (ktrace) VERSION'" "$(cat "$T/version")"
done

# Every short option of --help, as "LETTER LONG TOOL": a letter two tools
# have must name the same long option, and a long option two tools have
# the same letter (or none in both).
for tool in ktrace dtrace ktrace-run; do
	sed -n "s/^  -\([a-zA-Z]\), --\([a-z-]*\).*/\1 \2 $tool/p; s/^      --\([a-z-]*\).*/- \1 $tool/p" \
		"$T/$tool.help"
done >"$T/letters"
clash=$(awk '$1 != "-" { if (($1 in long) && long[$1] != $2) print "-" $1 ": --" long[$1] " in " who[$1] ", --" $2 " in " $3
			 long[$1] = $2; who[$1] = $3 }
	     { if (($2 in letter) && letter[$2] != $1) print "--" $2 ": " letter[$2] " in " lwho[$2] ", " $1 " in " $3
	       letter[$2] = $1; lwho[$2] = $3 }' "$T/letters")
[ -z "$clash" ] && [ "$(wc -l <"$T/letters")" -gt 20 ]
ok $? "one letter, one meaning: the short and long options the tools share agree" "$clash"
# the options the three tools share at least
for opt in "e events" "o output" "l list" "h help" "V version"; do
	[ "$(grep -c "^$opt " "$T/letters")" -eq 3 ] || { echo "$opt"; break; }
done >"$T/shared"
[ ! -s "$T/shared" ] && grep -q '^c cpu ktrace$' "$T/letters" &&
	grep -q '^c cpu dtrace$' "$T/letters" && grep -q '^t tid dtrace$' "$T/letters"
ok $? "-e, -o, -l, -h, -V in all three; -c/--cpu in ktrace and dtrace; dtrace -t/--tid" \
	"not in all three: $(cat "$T/shared")"

# the old spellings still work but are not listed: dtrace --cpus, --tids;
# ktrace-run -k, --kernel (now -e/--events as ktrace's and dtrace's)
"$(bin dtrace)" --cpus 0 --tids 1 >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "no trace files given" "$T/err"
ok $? "dtrace --cpus, --tids: accepted (then no files)" "$(cat "$T/err")"
for old in -k --kernel; do
	"$(bin ktrace-run)" $old bogus-group true >/dev/null 2>"$T/err"
	[ $? -eq 2 ] && grep -q "bogus-group" "$T/err"
	ok $? "ktrace-run $old: the old spelling of -e" "$(cat "$T/err")"
done
! grep -q -- '--cpus\|--tids' "$T/dtrace.help" && ! grep -q -- '--kernel\|-k,' "$T/ktrace-run.help"
ok $? "the old spellings are not in --help"
# dtrace -p is no longer the thread ids (perf, trace-cmd: -p is a process)
"$(bin dtrace)" -p abc /dev/null >/dev/null 2>"$T/err"
! grep -q "tid" "$T/err"
ok $? "dtrace -p does not select thread ids" "$(cat "$T/err")"
done_testing
