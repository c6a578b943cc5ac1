#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/probe/vm-debsrc.sh: what vm test 88-probe-debsrc needs, into
# $O/vm/data/probe-debsrc (the initramfs's /tests/data/probe-debsrc):
#   bzip2, lzip       Debian's sources built -O2 -g (tests/debsrc/build.sh,
#                     DEBSRC_PLAIN=1), linked static (the VM has no libc),
#                     stripped
#   debug/.build-id/  their debug info, split off by build id
#   input             the deterministic input both compress
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
progs=$(DEBSRC_PLAIN=1 "$ROOT/tests/debsrc/build.sh" bzip2 lzip 2>"$ROOT/$O/vm/debsrc.err")
case $? in
0) ;;
77) echo "ktrace: vm 88-probe-debsrc: no Debian sources: $(head -n 1 "$ROOT/$O/vm/debsrc.err")" >&2
    rm -rf "$OUT"; exit 0 ;;
*) cat "$ROOT/$O/vm/debsrc.err" >&2; exit 1 ;;
esac
bz=$(dirname "$(echo "$progs" | grep /bzip2/)")/src
lz=$(dirname "$(echo "$progs" | grep /lzip/)")/src
stamp=$(cat "$0" "$ROOT/tests/probe/gdb-truth.py" "$bz/bzip2.o" "$bz/libbz2.a" "$lz"/*.o | cksum)
[ "$(cat "$OUT/stamp" 2>/dev/null)" = "$stamp" ] && exit 0
command -v gdb >/dev/null || { echo "ktrace: vm 88-probe-debsrc needs gdb (make deps)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT/full" || exit 1
cd "$OUT" || exit 1
set -e
gcc -static -o full/bzip2 "$bz/bzip2.o" "$bz/libbz2.a"
g++ -static -o full/lzip "$lz"/*.o
for p in bzip2 lzip; do
	id=$(readelf -n "full/$p" | awk '/Build ID/ { print $3 }')
	mkdir -p "debug/.build-id/${id:0:2}"
	objcopy --only-keep-debug "full/$p" "debug/.build-id/${id:0:2}/${id:2}.debug"
	strip -o "$p" "full/$p"
done
seq 1 12000 | awk '{ print $1, $1 * $1 % 977, "lorem ipsum dolor" }' >input

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
# (Len_prices::lm, a const Len_model &; lzip has no smart pointer), a
# std::string by reference, a class method and its return (bool).
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
for p in bzip2 lzip; do
	PROBE_RUN="$(cat $p.run) >/dev/null" PROBE_TRUTH=$p.truth \
		gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" "full/$p" 2>"$p.gdb.err" |
		grep -a '^probe:' >"$p.expected"
done
rm -rf full
echo "$stamp" >stamp
