#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace -P on stripped third-party programs, with their debug info found
# by build id: bzip2 (C), lzip (C++, members of base classes) and yaml-cpp's
# util/parse (C++: a class's reference member to a class holding a
# std::unique_ptr, a reference to a class holding a std::shared_ptr to one
# holding another, to integer fields) from Debian's source packages, built
# -O2 -g (tests/debsrc/build.sh), stripped, the debug info split off into
# DIR/.build-id/xx/yyyy.debug.  Resolved
# through --debug-dir and through a real debuginfod serving DIR on
# loopback, the fetch programs must be the same, and run at each hit by
# tests/probe/probe-eval.c (the kernel's semantics over ptrace) on the
# stripped program they must give the values gdb prints for the same
# expressions on the unstripped one (ground truth: gdb's DWARF reading; the
# smart pointers through libstdc++'s own gdb xmethods, `->`), as many hits.
# Without the debug info, a field is refused saying where ktrace looked.
. "$(dirname "$0")/fakedev-common.sh"

command -v gdb >/dev/null || skip_all "gdb not installed"
progs=$(DEBSRC_PLAIN=1 "$ROOT/tests/debsrc/build.sh" bzip2 lzip yaml-cpp 2>"$T/debsrc.err")
rc=$?
[ $rc -eq 77 ] && skip_all "$(head -n 1 "$T/debsrc.err")"
ok $rc "build bzip2, lzip and yaml-cpp -O2 -g from their Debian sources" "$(tail -n 20 "$T/debsrc.err")"
[ $rc -eq 0 ] || { done_testing; exit 1; }
make -s -C "$ROOT" O="$O" "$O/tests/probe-eval" >"$T/err" 2>&1
ok $? "build probe-eval" "$(cat "$T/err")"
EVAL=$ROOT/$O/tests/probe-eval
{ seq 1 40000 | awk '{ print $1, $1 * $1 % 977, "lorem ipsum dolor" }'; } >input
# YAML for yaml-cpp's parse: maps, block and flow sequences, nested three
# deep (indents 0 to 8 as it writes them back), over some 100 lines
awk 'BEGIN { for (i = 1; i <= 30; i++) {
	printf "key%d:\n  n: %d\n  list: [%d, %d, x%d]\n  text: \"lorem ipsum %d\"\n", i, i * i % 977, i, i + 1, i, i
	if (i % 5 == 0) printf "  nested:\n    - a: %d\n    - b: [1, 2]\n", i } }' >input.yaml

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
ym=$(echo "$progs" | grep /yaml-cpp/)
split bzip2 "$bz" && split lzip "$lz" && split yaml-cpp "$ym"
ok $? "strip the three, their debug info under debug/.build-id"
check "the stripped programs have no DWARF" \
	'! readelf -S stripped/bzip2 stripped/lzip stripped/yaml-cpp | grep -q debug_info'

BZ_P="stripped/bzip2:BZ2_compressBlock s.nblock s.blockNo s.workFactor total=s.strm.total_in_lo32 last=s->mode"
LZ_E="stripped/lzip:LZ_encoder::encode_member member_size this.match_len_limit this.dictionary_size this.num_dis_slots"
LZ_F="stripped/lzip:Range_encoder::flush_data this.pos this.ff_count this.low:x64 this.range:x32"
# class -> reference member (Emitter &) -> std::unique_ptr<EmitterState> -> size_t
YM_S="stripped/yaml-cpp:YAML::EmitFromEvents::OnScalar indent=this.m_emitter.m_pState.m_curIndent value"
# reference to a class -> std::shared_ptr<node_ref> -> std::shared_ptr<node_data> -> int, enum
YM_N="stripped/yaml-cpp:YAML::NodeEvents::Setup line=node.m_pRef.m_pData.m_mark.line col=node.m_pRef.m_pData.m_mark.column type=node.m_pRef.m_pData.m_type"

# without the debug info: refused, saying where it looked
fk -o none -P "stripped/bzip2:BZ2_compressBlock s.nblock" -- true
check "no debug info: refused" '[ $rc -ne 0 ] && ! [ -e none.probes ]'
check "... naming binary and function, and where it looked" \
	'has_err "stripped/bzip2:BZ2_compressBlock: no such function (in its symbol tables); no debug info was found"'

# --debug-dir
KTFAKE_PROBES=$T/dir.log fk -v -o dir --debug-dir "$T/debug" -P "$BZ_P" -P "$LZ_E" -P "$LZ_F" \
	-P "$YM_S" -P "$YM_N" -- true
ok $rc "--debug-dir: five probes on the stripped programs" "$(cat err)"
# (NodeEvents::Setup recurses: gcc inlines a copy of it in itself, probed too)
check "the split debug files were read" \
	'[ "$(grep -c "debug info from $T/debug/.build-id/" err)" = 5 ] && [ "$(grep -c "^probe" dir.probes)" -ge 5 ]'

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
	KTFAKE_PROBES=$T/dfd.log fk -o dfd -P "$BZ_P" -P "$LZ_E" -P "$LZ_F" -P "$YM_S" -P "$YM_N" -- true
	ok $rc "debuginfod: the same five probes, no --debug-dir" "$(cat err; tail -5 debuginfod.log)"
	check "debuginfod's cache got the three debug files" \
		'[ "$(find "$T/dcache" -name debuginfo | wc -l)" = 3 ]'
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

# yaml-cpp: gdb follows the smart pointers with `->` (libstdc++'s xmethods,
# its own reading of unique_ptr's and shared_ptr's layout), ktrace by name
cat >truth.ym <<TRUTH
YAML::EmitFromEvents::OnScalar${tab}YAML::EmitFromEvents::OnScalar${tab}indent${tab}this->m_emitter.m_pState->m_curIndent${tab}u${tab}value${tab}value._M_dataplus._M_p${tab}s64
YAML::NodeEvents::Setup${tab}YAML::NodeEvents::Setup${tab}line${tab}node.m_pRef->m_pData->m_mark.line${tab}d${tab}col${tab}node.m_pRef->m_pData->m_mark.column${tab}d${tab}type${tab}node.m_pRef->m_pData->m_type${tab}u
TRUTH
PROBE_EVAL_OUT=eval.ym "$EVAL" dir.log dir.probes "$T/stripped/yaml-cpp" <input.yaml 2>eval.err >ym.out
PROBE_RUN="<input.yaml >/dev/null" PROBE_TRUTH=truth.ym \
	gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" "$ym" 2>gdb.err | grep -a '^probe:' >gdb.ym
# the input's 30 keys each hold 4 to 5 more keys, 7 to 11 scalars: well
# over 300 scalars written, at indents 0, 2, 4 and deeper; their nodes from
# lines all over the input
check "yaml-cpp: it wrote the input back (parse's job), 100 lines or more" \
	'grep -q "^key30:" ym.out && [ "$(wc -l <ym.out)" -ge 100 ]'
check "yaml-cpp: gdb saw 300 scalars or more at 4 indents or more, nodes from 100 lines or more" \
	'[ "$(grep -c "^probe:YAML::EmitFromEvents::OnScalar " gdb.ym)" -ge 300 ] &&
	 [ "$(grep -o "^probe:YAML::EmitFromEvents::OnScalar indent=[0-9]*" gdb.ym | sort -u | wc -l)" -ge 4 ] &&
	 [ "$(grep -o "^probe:YAML::NodeEvents::Setup line=[0-9]*" gdb.ym | sort -u | wc -l)" -ge 100 ]' \
	"$(head -5 gdb.ym; grep -v "^\[" gdb.err | head -5)"
check "yaml-cpp: as many hits of each probe as gdb's ($(cut -d" " -f1 gdb.ym | sort | uniq -c | tr -s " \n" " "))" \
	'[ "$(cut -d" " -f1 gdb.ym | sort | uniq -c)" = "$(cut -d" " -f1 eval.ym | sort | uniq -c)" ]'
diff gdb.ym eval.ym >diff.ym
ok $? "yaml-cpp: through a reference and unique_ptr, shared_ptr twice: gdb's values, hit by hit" \
	"$(head -5 diff.ym; cat eval.err)"
done_testing
