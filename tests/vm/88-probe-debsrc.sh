#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace -P through the kernel on Debian's own programs: bzip2 (C), lzip
# (C++) and yaml-cpp's util/parse (C++) from their Debian sources, -O2 -g,
# stripped, their debug info under --debug-dir by build id
# (tests/probe/vm-debsrc.sh builds them and the truth on the host).
# Probes: a C struct two pointers away; a C++ class's member reached
# through a reference member; a class's reference member to a
# std::unique_ptr to an integer field, a reference to a class through two
# std::shared_ptr to an int (yaml-cpp); a std::string by reference; return
# values; a function inlined in main.  Ground truth: gdb on the unstripped
# program, on the host, the same run with the same input, printing the
# same fields at the same functions (NAME.expected): every hit's values
# and the number of hits must be gdb's, in order.  dtrace --latency FN,FN%return must find the
# pairs an awk pairing of the listing's entries and returns finds, its
# slowest pair the listing's longest.
NAME=probe-debsrc
. "$(dirname "$0")/tap-common.sh"
D=/tests/data/probe-debsrc

[ -f "$D/stamp" ] || skip_all "no $D (tests/probe/vm-debsrc.sh: Debian sources or gdb missing on the host)"
cp "$D/input" "$D/input.yaml" "$T/"
cd "$T" || exit 1

# listing FILE: the probe hits of dtrace's listing as gdb-truth.py prints them
listing() {
	awk '$4 ~ /^probe:/ { s = $4; for (i = 5; i <= NF; i++) s = s " " $i; print s }' "$1"
}

for p in bzip2 lzip yaml-cpp; do
	set --
	while read -r spec; do
		set -- "$@" -P "$D/$spec"
	done <"$D/$p.probes"
	# shellcheck disable=SC2046 # the program's arguments, as gdb ran it
	mkdir "$T/trace-$p"
	"$KTRACE" --debug-dir "$D/debug" "$@" -o "$T/trace-$p/t" -- "$D/$p" $(cat "$D/$p.run") \
		>/dev/null 2>"$T/$p.err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "EOPNOTSUPP\|not supported" "$T/$p.err"; then
		skip "ktrace -P on this kernel" "no uprobes: $(head -n 1 "$T/$p.err")"
		done_testing
		exit 0
	fi
	ok $rc "$p: ktrace -P ($(wc -l <"$D/$p.probes") probes, stripped, --debug-dir) runs it, exit 0" \
		"$(cat "$T/$p.err")"
	"$DTRACE" -e probe "$T/trace-$p"/t.* >"$T/$p.list" 2>"$T/$p.derr"
	ok $? "$p: dtrace lists the hits" "$(cat "$T/$p.derr")"
	listing "$T/$p.list" >"$T/$p.got"
	check "$p: the hits of each probe as many as gdb's ($(cut -d' ' -f1 "$D/$p.expected" | sort | uniq -c | tr -s ' \n' ' '))" \
		'[ "$(cut -d" " -f1 "$D/$p.expected" | sort | uniq -c)" = "$(cut -d" " -f1 "$T/$p.got" | sort | uniq -c)" ]'
	cmp -s "$D/$p.expected" "$T/$p.got"
	ok $? "$p: every hit's values are gdb's, in order ($(wc -l <"$D/$p.expected") hits)" \
		"$(diff "$D/$p.expected" "$T/$p.got" | head -n 8)"
done

check "lzip: a std::string by reference, a reference member's int, a bool returned" \
	'grep -q "^probe:extension_index name=\"input\"\$" lzip.got &&
	 grep -q "^probe:Len_prices::update_prices len_symbols=[0-9]* choice1=[0-9]" lzip.got &&
	 grep -q "^probe:LZ_encoder::encode_member%return \$retval=1\$" lzip.got'
# (from the input alone: key30 is a top-level key, its text one level in,
# x30 in its flow list two levels in; the input has 138 lines, from 0)
check "yaml-cpp: through a reference and a unique_ptr, scalars at indents 0, 2 and 4; through shared_ptrs, nodes from lines past 100" \
	'grep -q "^probe:YAML::EmitFromEvents::OnScalar indent=0 value=\"key30\"\$" yaml-cpp.got &&
	 grep -q "^probe:YAML::EmitFromEvents::OnScalar indent=2 value=\"lorem ipsum 30\"\$" yaml-cpp.got &&
	 grep -q "^probe:YAML::EmitFromEvents::OnScalar indent=4 value=\"x30\"\$" yaml-cpp.got &&
	 [ "$(grep -c "^probe:YAML::NodeEvents::Setup line=1[0-9][0-9] " yaml-cpp.got)" -gt 0 ]'

# latency FN TRACE: dtrace --latency FN,FN%return against the listing's
# pairs (each entry with the next return of its thread; no recursion
# here); the listing's columns: CPU, time, task, name, values
latency() {
	"$DTRACE" --latency "$1,$1%return" "$T/trace-$2"/t.* >"$T/$2.lat" 2>"$T/$2.lerr"
	rc=$?
	awk -v a="probe:$1" -v b="probe:$1%return" '
		$4 == a { start[$3] = $2 }
		$4 == b && ($3 in start) { d = $2 - start[$3]; n++
			if (n == 1 || d > max) { max = d; ma = start[$3]; mb = $2 }
			delete start[$3] }
		END { print n + 0, ma, mb }' "$T/$2.list" >"$T/$2.pairs"
	read -r n ma mb <"$T/$2.pairs"
	got_n=$(awk '$1 == "pairs" { print $2 }' "$T/$2.lat")
	slow=$(awk '/^slowest/ { getline; getline; print $2, $3; exit }' "$T/$2.lat")
	[ $rc -eq 0 ] && [ "$got_n" = "$n" ] && [ "$n" -gt 0 ] && [ "$slow" = "$ma $mb" ]
	ok $? "$2: dtrace --latency $1,$1%return: the $n pairs of the listing, the slowest $ma..$mb" \
		"$(cat "$T/$2.pairs"; head -n 12 "$T/$2.lat" "$T/$2.lerr"; sed -n '/^slowest/,+3p' "$T/$2.lat")"
}
latency BZ2_compressBlock bzip2
latency LZ_encoder::encode_member lzip
done_testing
