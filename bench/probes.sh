#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/probes.sh: what resolving a probe by name costs, against perf
# probe's DWARF search for the same function in the same run.  On lzip
# and bzip2 built -O2 -g from their Debian sources (tests/debsrc/build.sh,
# DEBSRC_PLAIN=1), RUNS rounds (default 5), interleaved: ktrace -L FUNCTION
# FIELD (find it, locate its parameters, compile a field path) and perf
# probe -V FUNCTION (find it, list its variables), both offline.  The
# median of each and of the ratios round by round; no target yet (a
# resolution is paid once, before tracing starts).
set -u
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/probes
cd "$ROOT" || exit 1
make -s build/tools/ktrace >/dev/null || exit 1
command -v perf >/dev/null || { echo "bench/probes.sh: no perf to compare with" >&2; exit 1; }
progs=$(DEBSRC_PLAIN=1 tests/debsrc/build.sh bzip2 lzip) || exit 1
rm -rf "$W" && mkdir -p "$W"

. "$ROOT/bench/lib.sh"	# median
usecs() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || echo "failed: $*" >&2; t1=$(date +%s%N); echo "$(( (t1 - t0) / 1000 ))"; }

bench() {	# NAME BINARY FUNCTION PERF-FUNCTION FIELD
	: >"$W/k"; : >"$W/p"; : >"$W/r"
	for _ in $(seq "$RUNS"); do
		k=$(usecs build/tools/ktrace -L "$2:$3 $5")
		p=$(usecs perf probe -x "$2" -V "$4")
		echo "$k" >>"$W/k"; echo "$p" >>"$W/p"
		awk -v k="$k" -v p="$p" 'BEGIN { printf "%.3f\n", k / p }' >>"$W/r"
	done
	echo "BENCH probes_${1}_ktrace_us $(median <"$W/k") us (ktrace -L $3 $5)"
	echo "BENCH probes_${1}_perf_us $(median <"$W/p") us (perf probe -V $4)"
	echo "BENCH probes_${1}_ktrace_vs_perf $(median <"$W/r") x"
}
bench bzip2 "$(echo "$progs" | grep /bzip2/)" BZ2_compressBlock BZ2_compressBlock s.strm.total_in_lo32
bench lzip "$(echo "$progs" | grep /lzip/)" LZ_encoder::encode_member encode_member this.dictionary_size
