#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace -P on stripped third-party programs, with their debug info found
# by build id: bzip2 (C) and lzip (C++, members of base classes) from
# Debian's source packages, built -O2 -g (tests/debsrc/build.sh), stripped,
# the debug info split off into DIR/.build-id/xx/yyyy.debug.  Resolved
# through --debug-dir and through a real debuginfod serving DIR on
# loopback, the fetch programs must be the same, and run at each hit by
# tests/probe/probe-eval.c (the kernel's semantics over ptrace) on the
# stripped program they must give the values gdb prints for the same
# expressions on the unstripped one (ground truth: gdb's DWARF reading).
# Without the debug info, a field is refused saying where ktrace looked.
. "$(dirname "$0")/fakedev-common.sh"

command -v gdb >/dev/null || skip_all "gdb not installed"
progs=$(DEBSRC_PLAIN=1 "$ROOT/tests/debsrc/build.sh" bzip2 lzip 2>"$T/debsrc.err")
rc=$?
[ $rc -eq 77 ] && skip_all "$(head -n 1 "$T/debsrc.err")"
ok $rc "build bzip2 and lzip -O2 -g from their Debian sources" "$(tail -n 20 "$T/debsrc.err")"
[ $rc -eq 0 ] || { done_testing; exit 1; }
make -s -C "$ROOT" O="$O" "$O/tests/probe-eval" >"$T/err" 2>&1
ok $? "build probe-eval" "$(cat "$T/err")"
EVAL=$ROOT/$O/tests/probe-eval
{ seq 1 40000 | awk '{ print $1, $1 * $1 % 977, "lorem ipsum dolor" }'; } >input

# split NAME PROG: stripped/NAME and debug/.build-id/xx/yyyy.debug
mkdir -p stripped debug
split() {
	local id
	id=$(readelf -n "$2" | awk '/Build ID/ { print $3 }')
	mkdir -p "debug/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$2" "debug/.build-id/${id:0:2}/${id:2}.debug" &&
	strip -o "stripped/$1" "$2" && [ -n "$id" ]
}
bz=$(echo "$progs" | grep /bzip2/)
lz=$(echo "$progs" | grep /lzip/)
split bzip2 "$bz" && split lzip "$lz"
ok $? "strip both, their debug info under debug/.build-id"
check "the stripped programs have no DWARF" \
	'! readelf -S stripped/bzip2 stripped/lzip | grep -q debug_info'

BZ_P="stripped/bzip2:BZ2_compressBlock s.nblock s.blockNo s.workFactor total=s.strm.total_in_lo32 last=s->mode"
LZ_E="stripped/lzip:LZ_encoder::encode_member member_size this.match_len_limit this.dictionary_size this.num_dis_slots"
LZ_F="stripped/lzip:Range_encoder::flush_data this.pos this.ff_count this.low:x64 this.range:x32"

# without the debug info: refused, saying where it looked
fk -o none -P "stripped/bzip2:BZ2_compressBlock s.nblock" -- true
check "no debug info: refused" '[ $rc -ne 0 ] && ! [ -e none.probes ]'
check "... naming binary and function, and where it looked" \
	'has_err "stripped/bzip2:BZ2_compressBlock: no such function (in its symbol tables); no debug info was found"'

# --debug-dir
KTFAKE_PROBES=$T/dir.log fk -v -o dir --debug-dir "$T/debug" -P "$BZ_P" -P "$LZ_E" -P "$LZ_F" -- true
ok $rc "--debug-dir: three probes on the stripped programs" "$(cat err)"
check "the split debug files were read" \
	'[ "$(grep -c "debug info from $T/debug/.build-id/" err)" = 3 ] && [ "$(grep -c "^probe" dir.probes)" = 3 ]'

# debuginfod on loopback over the debug directory
if command -v debuginfod >/dev/null; then
	port=$((20000 + $$ % 20000))
	debuginfod -F "$T/debug" -p "$port" -d "$T/dfd.sqlite" -t 0 -g 0 >debuginfod.log 2>&1 &
	dfd=$!
	trap 'kill $dfd 2>/dev/null; rm -rf "$T"' EXIT
	id=$(readelf -n "$bz" | awk '/Build ID/ { print $3 }')
	for i in $(seq 1 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/debuginfo" && break
		sleep 0.2
	done
	export DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$T/dcache
	KTFAKE_PROBES=$T/dfd.log fk -o dfd -P "$BZ_P" -P "$LZ_E" -P "$LZ_F" -- true
	ok $rc "debuginfod: the same three probes, no --debug-dir" "$(cat err; tail -5 debuginfod.log)"
	check "debuginfod's cache got both debug files" \
		'[ "$(find "$T/dcache" -name debuginfo | wc -l)" = 2 ]'
	check "the same fetch programs and offsets as with --debug-dir" \
		'diff <(cut -d" " -f2,3,4,6 dir.log) <(cut -d" " -f2,3,4,6 dfd.log)'
	check "the same BASE.probes" 'diff dir.probes dfd.probes'
	unset DEBUGINFOD_URLS
	kill $dfd
else
	skip "debuginfod: not installed" "apt-get install debuginfod"
fi

# a template function is named without its return type (nm -C has it with)
tf="std::vector<char const*, std::allocator<char const*> >::_M_realloc_insert<char const* const&>"
ta=$(nm -C "$lz" | grep -F " void $tf(" | awk '{ sub(/^0+/, "", $1); print "0x" $1; exit }')
fk --debug-dir "$T/debug" -L "stripped/lzip:$tf"
check "a template function by its qualified name ($ta, nm -C)" \
	'[ $rc -eq 0 ] && [ -n "$ta" ] && grep -q "^  address $ta, " out'

# the values, against gdb on the unstripped programs
tab=$(printf '\t')
cat >truth.bz <<TRUTH
BZ2_compressBlock${tab}BZ2_compressBlock${tab}s.nblock${tab}s->nblock${tab}d${tab}s.blockNo${tab}s->blockNo${tab}d${tab}s.workFactor${tab}s->workFactor${tab}d${tab}total${tab}s->strm->total_in_lo32${tab}u${tab}last${tab}s->mode${tab}d
TRUTH
cat >truth.lz <<TRUTH
LZ_encoder::encode_member${tab}LZ_encoder::encode_member${tab}member_size${tab}member_size${tab}u${tab}this.match_len_limit${tab}this->match_len_limit${tab}d${tab}this.dictionary_size${tab}this->dictionary_size${tab}d${tab}this.num_dis_slots${tab}this->num_dis_slots${tab}d
Range_encoder::flush_data${tab}Range_encoder::flush_data${tab}this.pos${tab}this->pos${tab}d${tab}this.ff_count${tab}this->ff_count${tab}u${tab}this.low${tab}this->low${tab}x64${tab}this.range${tab}this->range${tab}x32
TRUTH
PROBE_EVAL_OUT=eval.bz "$EVAL" dir.log dir.probes "$T/stripped/bzip2" -1 -c <input 2>eval.err >/dev/null
PROBE_RUN="-1 -c <input >/dev/null" PROBE_TRUTH=truth.bz \
	gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" "$bz" 2>/dev/null | grep -a '^probe:' >gdb.bz
check "bzip2: gdb saw several blocks" '[ "$(wc -l <gdb.bz)" -ge 3 ]'
diff gdb.bz eval.bz >diff.bz
ok $? "bzip2: the stripped program's values are gdb's, hit by hit" "$(head -5 diff.bz; cat eval.err)"
PROBE_EVAL_OUT=eval.lz "$EVAL" dir.log dir.probes "$T/stripped/lzip" -c <input 2>eval.err >/dev/null
PROBE_RUN="-c <input >/dev/null" PROBE_TRUTH=truth.lz \
	gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" "$lz" 2>/dev/null | grep -a '^probe:' >gdb.lz
check "lzip: gdb saw encode_member and flush_data" \
	'grep -q "^probe:LZ_encoder::encode_member" gdb.lz && [ "$(grep -c "^probe:Range_encoder::flush_data" gdb.lz)" -ge 2 ]'
diff gdb.lz eval.lz >diff.lz
ok $? "lzip: the stripped program's values are gdb's, hit by hit" "$(head -5 diff.lz; cat eval.err)"
done_testing
