#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/probe/vm-debsrc.sh: what vm test 88-probe-debsrc needs, into
# $O/vm/data/probe-debsrc (the initramfs's /tests/data/probe-debsrc):
#   bzip2, lzip,      Debian's sources built -O2 -g (tests/debsrc/build.sh,
#   yaml-cpp          DEBSRC_PLAIN=1), linked static (the VM has no libc),
#                     stripped; yaml-cpp is the package's util/parse
#   debug/.build-id/  their debug info, split off by build id
#   input             the deterministic input bzip2 and lzip compress
#   input.yaml        the deterministic YAML yaml-cpp reads and writes back
#   NAME.probes       the ktrace -P specs, one a line
#   NAME.run          the program's arguments in the VM
#   NAME.expected     gdb's values at the same probes on the unstripped
#                     program, the same run (tests/probe/gdb-truth.py):
#                     the ground truth, one line a hit, "probe:NAME F=V ..."
# Run by `make initramfs`; redone only when this script or a program
# changes.  Exit 0 without output files where the sources cannot be had
# (88-probe-debsrc then skips, saying so).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
OUT=$ROOT/$O/vm/data/probe-debsrc
progs=$(DEBSRC_PLAIN=1 "$ROOT/tests/debsrc/build.sh" bzip2 lzip yaml-cpp 2>"$ROOT/$O/vm/debsrc.err")
case $? in
0) ;;
77) echo "ktrace: vm 88-probe-debsrc: no Debian sources: $(head -n 1 "$ROOT/$O/vm/debsrc.err")" >&2
    rm -rf "$OUT"; exit 0 ;;
*) cat "$ROOT/$O/vm/debsrc.err" >&2; exit 1 ;;
esac
bz=$(dirname "$(echo "$progs" | grep /bzip2/)")/src
lz=$(dirname "$(echo "$progs" | grep /lzip/)")/src
ym=$(dirname "$(echo "$progs" | grep /yaml-cpp/)")/src/build
stamp=$(cat "$0" "$ROOT/tests/probe/gdb-truth.py" "$bz/bzip2.o" "$bz/libbz2.a" "$lz"/*.o \
	"$ym/util/CMakeFiles/yaml-cpp-parse.dir/parse.cpp.o" "$ym/libyaml-cpp.a" | cksum)
[ "$(cat "$OUT/stamp" 2>/dev/null)" = "$stamp" ] && exit 0
command -v gdb >/dev/null || { echo "ktrace: vm 88-probe-debsrc needs gdb (make deps)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT/full" || exit 1
cd "$OUT" || exit 1
set -e
gcc -static -o full/bzip2 "$bz/bzip2.o" "$bz/libbz2.a"
g++ -static -o full/lzip "$lz"/*.o
g++ -static -o full/yaml-cpp "$ym/util/CMakeFiles/yaml-cpp-parse.dir/parse.cpp.o" "$ym/libyaml-cpp.a"
for p in bzip2 lzip yaml-cpp; do
	id=$(readelf -n "full/$p" | awk '/Build ID/ { print $3 }')
	mkdir -p "debug/.build-id/${id:0:2}"
	objcopy --only-keep-debug "full/$p" "debug/.build-id/${id:0:2}/${id:2}.debug"
	strip -o "$p" "full/$p"
done
seq 1 12000 | awk '{ print $1, $1 * $1 % 977, "lorem ipsum dolor" }' >input
awk 'BEGIN { for (i = 1; i <= 30; i++) {
	printf "key%d:\n  n: %d\n  list: [%d, %d, x%d]\n  text: \"lorem ipsum %d\"\n", i, i * i % 977, i, i + 1, i, i
	if (i % 5 == 0) printf "  nested:\n    - a: %d\n    - b: [1, 2]\n", i } }' >input.yaml

# The probes, and gdb's expressions for the same values (TAB-separated,
# gdb-truth.py's format: LOCATION PROBE [NAME EXPRESSION FORMAT]...).
# bzip2 (C): a block's state through a pointer, and two pointers away;
# the return of the same function, for --latency.
echo "-1 -c input" >bzip2.run
cat >bzip2.probes <<'P'
bzip2:BZ2_compressBlock s.nblock s.blockNo total=s.strm.total_in_lo32
bzip2:BZ2_compressBlock%return
P
t=$'\t'
cat >bzip2.truth <<T
BZ2_compressBlock${t}BZ2_compressBlock${t}s.nblock${t}s->nblock${t}d${t}s.blockNo${t}s->blockNo${t}d${t}total${t}s->strm->total_in_lo32${t}u
BZ2_compressBlock${t}BZ2_compressBlock%return
T
# lzip (C++): a class's member reached through a reference member
# (Len_prices::lm, a const Len_model &), a std::string by reference, a
# class method and its return (bool).
echo "-c -b 100KiB input input" >lzip.run
cat >lzip.probes <<'P'
lzip:Len_prices::update_prices len_symbols=this.len_symbols choice1=this.lm.choice1.probability
lzip:extension_index name
lzip:extension_index%return $retval
lzip:LZ_encoder::encode_member member_size this.match_len_limit
lzip:LZ_encoder::encode_member%return $retval
P
cat >lzip.truth <<T
Len_prices::update_prices${t}Len_prices::update_prices${t}len_symbols${t}this->len_symbols${t}d${t}choice1${t}this->lm.choice1.probability${t}d
extension_index${t}extension_index${t}name${t}name._M_dataplus._M_p${t}s64
extension_index${t}extension_index%return${t}\$retval${t}\$retval${t}d
LZ_encoder::encode_member${t}LZ_encoder::encode_member${t}member_size${t}member_size${t}u${t}this.match_len_limit${t}this->match_len_limit${t}d
LZ_encoder::encode_member${t}LZ_encoder::encode_member%return${t}\$retval${t}\$retval${t}u
T
# yaml-cpp (C++): a class's reference member (EmitFromEvents::m_emitter,
# an Emitter &) to a std::unique_ptr<EmitterState> to a size_t; a reference
# to a class (detail::node) to a std::shared_ptr<node_ref> to a
# std::shared_ptr<node_data> to an int and an enum; a std::string by
# reference.  gdb follows the smart pointers with `->` (libstdc++'s
# xmethods), ktrace by name.
echo "input.yaml" >yaml-cpp.run
cat >yaml-cpp.probes <<'P'
yaml-cpp:YAML::EmitFromEvents::OnScalar indent=this.m_emitter.m_pState.m_curIndent value
yaml-cpp:YAML::NodeEvents::Setup line=node.m_pRef.m_pData.m_mark.line type=node.m_pRef.m_pData.m_type
P
cat >yaml-cpp.truth <<T
YAML::EmitFromEvents::OnScalar${t}YAML::EmitFromEvents::OnScalar${t}indent${t}this->m_emitter.m_pState->m_curIndent${t}u${t}value${t}value._M_dataplus._M_p${t}s64
YAML::NodeEvents::Setup${t}YAML::NodeEvents::Setup${t}line${t}node.m_pRef->m_pData->m_mark.line${t}d${t}type${t}node.m_pRef->m_pData->m_type${t}u
T
for p in bzip2 lzip yaml-cpp; do
	PROBE_RUN="$(cat $p.run) >/dev/null" PROBE_TRUTH=$p.truth \
		gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" "full/$p" 2>"$p.gdb.err" |
		grep -a '^probe:' >"$p.expected"
done
rm -rf full
echo "$stamp" >stamp
