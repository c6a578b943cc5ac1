# SPDX-License-Identifier: GPL-2.0
# Sourced by the call-shape tests (8x-user-*): user-common.sh, the counting
# hook (tests/debsrc/cygcount.c) and a check of dtrace --flat against it.
. "$(dirname "$0")/user-common.sh"

cc -O2 -shared -fPIC -o "$TMP/cygcount.so" "$ROOT/tests/debsrc/cygcount.c" -ldl ||
	{ ok 1 "build the counting hook library"; done_testing; exit 1; }

# The flags the programs are built with: -O0; -O2 as uftrace's test suite
# builds (no inlining); plain -O2 -g, as ktrace-user.rst tells people to.
SHAPE_FLAGS=("-O0" "-O2 -fno-inline -fno-builtin -fno-ipa-cp -fno-omit-frame-pointer -D_FORTIFY_SOURCE=0"
	"-O2 -g")
# flags_name FLAGS: a word for them
flags_name() {
	case $1 in
	-O0) echo O0 ;;
	"-O2 -g") echo O2g ;;
	*) echo O2uftrace ;;
	esac
}

# counted DIR PROG [ARG...]: run PROG (60 s at most) traced by libktrace into DIR, with
# the counting hook in front of it (DIR.count: "ADDRESS ENTRIES EXITS")
counted() {
	local dir=$1
	shift
	rm -rf "$dir"
	timeout 60 env CYGCOUNT_OUT="$dir.count" KTRACE_USER_DIR="$dir" \
		LD_PRELOAD="$TMP/cygcount.so:$LIBKTRACE" "$@"
}

# flat_vs_count DIR PROG: "functions F entries E exits X repairs R wrong W"
# and a "# ..." line per function whose dtrace --flat calls are not its
# entries (names from PROG's symbol table).
flat_vs_count() {
	local dir=$1 prog=$2
	"$DTRACE" --flat "$dir"/trace.* >"$dir.flat" 2>"$dir.err"
	nm --defined-only "$prog" >"$dir.nm"
	perl - "$dir.count" "$dir.nm" "$dir.flat" <<'PERL'
use strict;
my ($countf, $nmf, $flatf) = @ARGV;
my (%name, %want, %got, $entries, $exits, $repairs);
open my $nm, '<', $nmf or die;
while (<$nm>) { my ($a, $t, $n) = split; $name{hex $a} //= $n if defined $n && $t =~ /^[tTwW]$/ }
open my $c, '<', $countf or die "$countf: $!\n";
while (<$c>) {
	my ($a, $en, $ex) = split;
	$want{$name{hex $a} // $a} += $en;
	$entries += $en;
	$exits += $ex;
}
open my $f, '<', $flatf or die;
while (<$f>) {
	$repairs = $1 if /; (\d+) repairs/;
	next if /^#/ || /CALLS/;
	my ($calls, $tot, $self, $fn) = split;
	$got{$fn} += $calls;
}
my $bad = 0;
for my $k (sort keys %{{ %want, %got }}) {
	next if ($want{$k} // 0) == ($got{$k} // 0);
	print "# $k: ", $want{$k} // 0, " entries, dtrace --flat ", $got{$k} // 0, "\n" if $bad++ < 20;
}
printf "functions %d entries %d exits %d repairs %d wrong %d\n", scalar(keys %want),
	$entries // 0, $exits // 0, $repairs // 0, $bad;
PERL
}

# check_counts NAME DIR PROG: ok lines: every function called as often as
# the hook saw it entered; repairs are the frames that never exited
check_counts() {
	local name=$1 dir=$2 prog=$3 cmp
	cmp=$(flat_vs_count "$dir" "$prog")
	read -r _ fns _ entries _ exits _ repairs _ wrong < <(grep ^functions <<<"$cmp")
	[ "${entries:-0}" -gt 0 ] && [ "${wrong:-1}" -eq 0 ]
	ok $? "$name: each of $fns functions called as often as it was entered ($entries)" \
		"$(grep '^#' <<<"$cmp"; cat "$dir.err")"
	[ "${entries:-0}" -gt 0 ] && [ "${repairs:-x}" = $((entries - exits)) ]
	ok $? "$name: $repairs repairs, the $((entries - exits)) frames that never exited" \
		"$cmp"
}
