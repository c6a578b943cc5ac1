#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The call views against a ground truth, on third-party programs: Lua's
# interpreter (errors and coroutines through longjmp, os.exit() from deep
# inside), bzip2 and gzip, from Debian's source packages, built -O2 -g
# -finstrument-functions (tests/debsrc/build.sh; sources and builds cached
# under build/debsrc).  Each runs traced by libktrace, with
# tests/debsrc/cygcount.c in front of it: a hook library that only counts
# each function's entries and exits and passes the calls on.  dtrace --flat must count every
# function's calls as its entries, and repair exactly the frames that
# never exited (entries less exits, summed), no more.
. "$(dirname "$0")/user-common.sh"

progs=$(tests/debsrc/build.sh lua5.4 bzip2 gzip 2>"$TMP/debsrc.err")
rc=$?
if [ $rc -eq 77 ]; then
	skip_all "$(head -n 1 "$TMP/debsrc.err")"
fi
ok $rc "build lua5.4, bzip2 and gzip from their Debian sources" "$(tail -n 20 "$TMP/debsrc.err")"
[ $rc -eq 0 ] || { done_testing; exit 1; }
cc -O2 -shared -fPIC -o "$TMP/cygcount.so" tests/debsrc/cygcount.c -ldl
ok $? "build the counting hook library"

# the input of the compressors: text, and the bytes of a program
{ seq 1 30000 | awk '{ print $1, $1 * $1 % 977, "lorem ipsum dolor" }'; head -c 200000 "$DTRACE"; } \
	>"$TMP/input"

# compare NAME PROG: counts of TMP/NAME.count (cygcount) against dtrace
# --flat of TMP/NAME/ (function names from PROG's symbol table)
compare() {
	local name=$1 prog=$2
	"$DTRACE" --flat "$TMP/$name"/trace.* >"$TMP/$name.flat" 2>"$TMP/$name.err"
	nm --defined-only "$prog" >"$TMP/$name.nm"
	perl - "$TMP/$name.count" "$TMP/$name.nm" "$TMP/$name.flat" >"$TMP/$name.cmp" <<'PERL'
use strict;
my ($countf, $nmf, $flatf) = @ARGV;
my (%names, %group);
open my $nm, '<', $nmf or die;
while (<$nm>) {
	my ($a, $t, $n) = split;
	next unless defined $n && $t =~ /^[tTwW]$/;
	push @{$names{hex $a}}, $n;
}
# a key per address: its names; a name at two addresses joins them
my %key_of;
for my $a (keys %names) { $key_of{$_} //= $a for @{$names{$a}} }
my (%want, $entries, $exits);
open my $c, '<', $countf or die;
while (<$c>) {
	my ($a, $en, $ex) = split;
	die "cygcount: table full\n" if $a eq 'overflow';
	my $k = $names{hex $a} ? $key_of{$names{hex $a}[0]} : $a;
	$want{$k} += $en;
	$entries += $en;
	$exits += $ex;
}
my (%got, $repairs);
open my $f, '<', $flatf or die;
while (<$f>) {
	$repairs = $1 if /; (\d+) repairs/;
	next if /^#/ || /CALLS/;
	my ($calls, $tot, $self, $fn) = split;
	my $k = exists $key_of{$fn} ? $key_of{$fn} : $fn;
	$got{$k} += $calls;
}
my $bad = 0;
for my $k (sort keys %{{ %want, %got }}) {
	my ($w, $g) = ($want{$k} // 0, $got{$k} // 0);
	next if $w == $g;
	my $n = $names{$k} ? join('|', @{$names{$k}}) : $k;
	print "# $n: $w entries, dtrace --flat $g\n" if $bad++ < 20;
}
printf "functions %d entries %d exits %d repairs %d wrong %d\n", scalar(keys %want),
	$entries, $exits, $repairs // 0, $bad;
PERL
}

# run NAME PROG ARGS... (stdin from TMP/NAME.in)
run() {
	local name=$1 prog=$2
	shift 2
	rm -rf "$TMP/$name"
	CYGCOUNT_OUT=$TMP/$name.count KTRACE_USER_DIR=$TMP/$name \
		LD_PRELOAD=$TMP/cygcount.so:$LIBKTRACE "$prog" "$@" <"$TMP/$name.in" >/dev/null 2>&1
	compare "$name" "$prog"
	read -r _ fns _ entries _ exits _ repairs _ wrong < <(grep ^functions "$TMP/$name.cmp")
	[ "${entries:-0}" -gt 1000 ] && [ "$wrong" -eq 0 ]
	ok $? "$name: each of $fns functions called as often as it was entered ($entries calls)" \
		"$(grep '^#' "$TMP/$name.cmp"; cat "$TMP/$name.err")"
	[ "${entries:-0}" -gt 0 ] && [ "$repairs" -eq $((entries - exits)) ]
	ok $? "$name: $repairs repairs, the $((entries - exits)) frames that never exited" \
		"$(cat "$TMP/$name.cmp"; grep -c 'no exit' "$TMP/$name.flat")"
	# per function: the frames --calltree repairs, against entries less exits
	"$DTRACE" --calltree "$TMP/$name"/trace.* 2>/dev/null |
		awk '/no exit recorded|still running when/ {
			if (match($0, /\} \/\* [^ ]+ \*\//)) n[substr($0, RSTART + 5, RLENGTH - 8)]++
			else if (match($0, /[^ ]+\(\);/)) n[substr($0, RSTART, RLENGTH - 3)]++
		} END { for (f in n) print f, n[f] }' >"$TMP/$name.repairs"
	perl -e '
		my ($countf, $nmf, $repf) = @ARGV;
		my (%name, %want, %got, $bad);
		open my $nm, "<", $nmf or die;
		while (<$nm>) { my ($a, $t, $n) = split; $name{hex $a} //= $n if $t =~ /^[tTwW]$/ }
		open my $c, "<", $countf or die;
		while (<$c>) { my ($a, $en, $ex) = split; $want{$name{hex $a} // $a} += $en - $ex }
		open my $r, "<", $repf or die;
		while (<$r>) { my ($f, $n) = split; $got{$f} += $n }
		for my $f (sort keys %{{ %want, %got }}) {
			next if ($want{$f} // 0) == ($got{$f} // 0);
			print "# $f: ", $want{$f} // 0, " frames without exit, ", $got{$f} // 0, " repaired\n"
				if $bad++ < 20;
		}
		exit($bad ? 1 : 0);' "$TMP/$name.count" "$TMP/$name.nm" "$TMP/$name.repairs" \
		>"$TMP/$name.repdiff"
	ok $? "$name: per function, the frames repaired are those that never exited" \
		"$(cat "$TMP/$name.repdiff")"
	[ "$(lost "$TMP/$name")" = "" ] || [ "$(lost "$TMP/$name")" = 0 ]
	ok $? "$name: no record lost"
}

set -- $progs
cp "$ROOT/tests/debsrc/work.lua" "$TMP/lua.lua"
: >"$TMP/lua.in"
run lua "$1" "$TMP/lua.lua"
cp "$TMP/input" "$TMP/bzip2.in"
run bzip2 "$2" -c
"$2" -c <"$TMP/input" >"$TMP/bunzip2.in"
run bunzip2 "$2" -dc
cp "$TMP/input" "$TMP/gzip.in"
run gzip "$3" -c
done_testing
