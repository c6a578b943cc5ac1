#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace -P end to end on the kernel: a probe named by function and field
# paths (resolved through the program's DWARF in the VM, compiled to the
# fetch program, added through /dev/ktrace) and a return probe; dtrace
# names the hits from BASE.probes.  Ground truth: probe-target prints, for
# each of its N calls of work(), the values it passed (r->id, the type two
# pointers away, n) and what work() returned; the hits must be exactly
# those, in order; dtrace --latency pairs every entry with its return.
NAME=probe-e2e
. "$(dirname "$0")/tap-common.sh"
PROG=/tests/probe-target
N=50

[ -x "$PROG" ] || skip_all "no $PROG"
"$KTRACE" -P "$PROG:work r.id r.msg.hdr.type n" -P "$PROG:work%return \$retval" \
	-o "$T/t" -- "$PROG" $N >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "EOPNOTSUPP\|not supported" "$T/err"; then
	skip "ktrace -P on this kernel" "no uprobes: $(head -n 1 "$T/err")"
	done_testing
	exit 0
fi
check "ktrace -P work (3 fields) and work%return -- probe-target $N exits 0" '[ $rc -eq 0 ]'
check "the program ran as without probes: $N calls" '[ "$(grep -c "^call " "$T/out")" -eq $N ]'
check "BASE.probes saved, mode 0600" \
	'[ -f "$T/t.probes" ] && [ "$(stat -c %a "$T/t.probes")" = 600 ]'
"$DTRACE" -e probe "$T"/t.* >"$T/list" 2>"$T/derr"
rc=$?
check "dtrace lists the hits" '[ $rc -eq 0 ]'
# the numbers of each hit, in order, as the program printed them
# the values of each hit: the listing's fields after the name, NAME=VALUE
values() {
	awk -v name="$1" '$4 == name { s = ""
		for (i = 5; i <= NF; i++) { v = $i; sub(/^[^=]*=/, "", v); s = s (i > 5 ? " " : "") v }
		print s }' "$T/list"
}
values probe:work >"$T/entry.got"
awk '{ print $2, $3, $4 }' "$T/out" >"$T/entry.want"
cmp -s "$T/entry.want" "$T/entry.got"
ok $? "every entry hit: r.id, r.msg.hdr.type, n as passed ($N hits)" \
	"$(head -n 3 "$T/entry.want" "$T/entry.got"; grep -m 4 probe: "$T/list"; cat "$T/derr")"
values probe:work%return >"$T/ret.got"
awk '{ print $5 }' "$T/out" >"$T/ret.want"
cmp -s "$T/ret.want" "$T/ret.got"
ok $? "every return hit: the value work() returned ($N hits)" \
	"$(head -n 3 "$T/ret.want" "$T/ret.got")"
"$DTRACE" --latency work,work%return "$T"/t.* >"$T/lat" 2>"$T/lerr"
rc=$?
[ $rc -eq 0 ] && [ "$(awk '$1 == "pairs" { print $2 }' "$T/lat")" = $N ] &&
	[ "$(awk '$1 == "A" && $2 == "without" { print $4 }' "$T/lat")" = 0 ]
ok $? "dtrace --latency work,work%return pairs all $N calls" "$(head -n 12 "$T/lat" "$T/lerr")"
done_testing
