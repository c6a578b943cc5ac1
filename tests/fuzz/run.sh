#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/fuzz/run.sh [SECONDS [TARGET...]]: build libFuzzer targets with
# clang (ASan, UBSan) and run each for SECONDS (default 60) from seeds.
# Targets (default: all):
#   ktfile   the trace file reader, merge and event text (seeds from ktgen)
#   maps     dtrace's map file parser and what it prints (symbols.c)
#   escape   the escaping of trace strings for text, DOT, JSON, CTF, XML
#   calls    the call reconstruction (dtrace/calls.c) and the call views
#            and Perfetto export on it (seeds: none, it starts from nothing)
#   ring     ktrace-run's ring ingestion (user/ring_drain.c): header check,
#            draining a hostile ring, the lost marker at the end
#   kformats the formats on kernel streams: text with kallsyms, irq and task
#            names, summary, CTF, Perfetto (tests/fuzz/kstream.h: seeds
#            are written by the target itself, one per option)
#   pipeline dtrace's parallel text (-j N, pipeline.c) against -j 1 on the
#            same kernel streams: any difference is a crash (kstream.h)
#   symbols  the ELF/DWARF symbolizer (symbols.c, libdwfl) on ELF files
#            (seeds: /bin/true, a -g object and program compiled here)
#   uevent   the kernel's user-event write() (kernel/ktrace/dev.c) on the
#            kshim, against a model of its rule (seeds: its own)
# tests/fuzz/regress/TARGET/ holds inputs that crashed TARGET once: seeds too.
# Exit 0: no crash; 77: clang or libFuzzer missing; otherwise the crash is
# in $O/fuzz/TARGET/ (crash-* files; O: the build directory, default build).
set -u
secs=${1:-60}
shift
targets=${*:-ktfile maps escape calls ring kformats pipeline symbols uevent}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
OUT=$ROOT/$O/fuzz
cd "$ROOT" || exit 1

command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 77; }
FLAGS=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -Iinclude/uapi -Ilib -Idtrace -DKTRACE_VERSION='"fuzz"')
# libkt's sources as lib/lib.mk lists them, so a new lib/*.c needs no edit here
# shellcheck disable=SC2016,SC2207
LIB=($(make -s --no-print-directory -f lib/lib.mk -f - fuzz-lib-srcs \
	<<<'fuzz-lib-srcs: ; @echo $(LIB_SRCS)')) || exit 1
[ ${#LIB[@]} -gt 0 ] || { echo "fuzz: no LIB_SRCS in lib/lib.mk"; exit 1; }
LIB+=(-lzstd)	# KT_LDLIBS: compressed trace files
DTRACE=()	# dtrace's sources but its main()
for f in dtrace/*.c; do
	[ "$f" = dtrace/main.c ] || DTRACE+=("$f")
done
# build TARGET SOURCES... [LIBS...]; FIRST_INC: include directories that go first
FIRST_INC=()
build() {
	local t=$1
	shift
	mkdir -p "$OUT/$t/corpus" "$OUT/$t/seeds"
	if ! clang "${FIRST_INC[@]}" "${FLAGS[@]}" -o "$OUT/$t/fuzz_$t" "$@" 2>"$OUT/$t/build.log"; then
		if grep -q 'libclang_rt.fuzzer\|fuzzer.*not found' "$OUT/$t/build.log"; then
			echo "fuzz: clang has no libFuzzer here"
			exit 77
		fi
		cat "$OUT/$t/build.log"
		exit 1
	fi
}

seeds_ktfile() {
# seeds: small good files of each kind, and each corruption
make -s O="$O" "$O/tests/ktgen" || exit 1
gen() { "$ROOT/$O/tests/ktgen" -c 1 -n 12 "$@" "$OUT/ktfile/seeds/s" >/dev/null; }
i=0
for args in "" "-l 3" "-U 300" "--swap -l 2" "-u 1 -c 1" "--step 0" \
	    "--corrupt truncated" "--corrupt order" "--corrupt cont-seq" "--corrupt cont-end" \
	    "--corrupt cont-orphan" "--corrupt version" "--zstd 1" "--zstd 1 -l 3 -u 1 -c 1" \
	    "--zstd -5 --swap"; do
	rm -f "$OUT"/ktfile/seeds/s.*
	gen $args
	for f in "$OUT"/ktfile/seeds/s.*; do
		mv "$f" "$OUT/ktfile/seeds/seed-$i"
		i=$((i + 1))
	done
done
# a compressed file torn inside its records frame
gen --zstd 1
head -c 300 "$OUT"/ktfile/seeds/s.cpu0.zst >"$OUT/ktfile/seeds/seed-$i"
rm -f "$OUT"/ktfile/seeds/s.*

}

seeds_maps() {
	printf 'snapshot 1\nobject 0 401000 402000 - /bin/true\nevent 1 req %%u %%llx %%d\n' \
		>"$OUT/maps/seeds/good"
	printf 'snapshot 1\nobject 1000 401000 402000 abcdef /dev/zero\nevent 255 \033[2J \377\n' \
		>"$OUT/maps/seeds/hostile"
	printf 'map 1\n# c\nevent 0 x\nobject zz\n' >"$OUT/maps/seeds/bad"
}

seeds_calls() {
	:
}

seeds_ring() {
	# a whole ring of 16 records, 4 published, then 20 (wraps), ended
	{ printf '\003\003\000\000'; head -c 576 /dev/zero
	  for i in $(seq 16); do printf '\001\000\000\000\000\000\000\000\001\000\000\020\145\000\000\000\000\000\000\000\000\000\000\000'; done
	  printf '\004\000\000\000\000\000\000\000\024\000\000\000\000\000\000\001'
	} >"$OUT/ring/seeds/whole"
	# the same, the file limited to 2 records: a failed write, a lost marker
	{ printf '\003\003\002\005'; tail -c +5 "$OUT/ring/seeds/whole"; } >"$OUT/ring/seeds/full"
	# the same, as a ring ktrace-run could not map whole
	{ printf '\003\007\000\000'; tail -c +5 "$OUT/ring/seeds/whole"; } >"$OUT/ring/seeds/unmapped"
}

# a target that writes its own seeds (LLVMFuzzerInitialize, kstream.h)
seeds_self() {
	KSTREAM_SEEDS=$OUT/$1/seeds "$OUT/$1/fuzz_$1"
}

seeds_kformats() {
	seeds_self kformats
}

seeds_pipeline() {
	seeds_self pipeline
}

seeds_symbols() {
	local src=$OUT/symbols/seed.c
	cp /bin/true "$OUT/symbols/seeds/true"
	cat >"$src" <<-'EOF'
	static inline __attribute__((always_inline)) int twice(int x) { return 2 * x; }
	static int __attribute__((noinline)) fib(int n) { return n < 2 ? n : fib(n - 1) + twice(fib(n - 2)); }
	int main(int argc, char **argv) { (void)argv; return fib(argc + 20) & 1; }
	EOF
	cc -g -O2 -c -o "$OUT/symbols/seeds/object.o" "$src" &&
		cc -g -O2 -o "$OUT/symbols/seeds/program" "$src" &&
		strip -o "$OUT/symbols/seeds/stripped" "$OUT/symbols/seeds/program"
}

seeds_uevent() {
	seeds_self uevent
}

# kernel code on the kshim: its headers, and dev.c's (kshim-dev.h)
kshim_dir() {
	local dir=$OUT/kshim h
	# shellcheck source=tests/host/kshim.sh
	. tests/host/kshim.sh
	make_kshim "$dir"
	for h in linux/capability.h linux/cpumask.h linux/fs.h linux/miscdevice.h \
		 linux/poll.h linux/security.h; do
		echo "#include \"$ROOT/tests/fuzz/kshim-dev.h\"" >"$dir/$h"
	done
	FIRST_INC=(-I"$dir")
}

seeds_escape() {
	printf 'a"b\\c\377\001\033[2J' >"$OUT/escape/seeds/s1"
	printf '\xc2\x80\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf' >"$OUT/escape/seeds/s2"
}

rc=0
for t in $targets; do
	case $t in
	ktfile) build ktfile tests/fuzz/fuzz_ktfile.c "${LIB[@]}" ;;
	maps)	build maps tests/fuzz/fuzz_maps.c dtrace/symbols.c "${LIB[@]}" -ldw -lelf ;;
	escape)	build escape tests/fuzz/fuzz_escape.c lib/escape.c lib/util.c ;;
	calls)	build calls tests/fuzz/fuzz_calls.c "${DTRACE[@]}" "${LIB[@]}" -ldw -lelf -pthread ;;
	ring)	build ring -Iuser tests/fuzz/fuzz_ring.c user/ring_drain.c "${LIB[@]}" ;;
	kformats) build kformats tests/fuzz/fuzz_kformats.c "${DTRACE[@]}" "${LIB[@]}" \
			-ldw -lelf -pthread ;;
	pipeline) build pipeline tests/fuzz/fuzz_pipeline.c -DBATCH_BYTES=4096 \
			"${DTRACE[@]}" "${LIB[@]}" -ldw -lelf -pthread ;;
	symbols) build symbols tests/fuzz/fuzz_symbols.c dtrace/symbols.c "${LIB[@]}" -ldw -lelf ;;
	uevent)	kshim_dir
		build uevent tests/fuzz/fuzz_uevent.c -w
		FIRST_INC=() ;;
	*)	echo "fuzz: no target $t"; exit 2 ;;
	esac
	# the longest input: some targets' seeds are longer than 4096 bytes
	max_len=4096
	case $t in
	kformats|pipeline) max_len=8192 ;;
	symbols) max_len=65536 ;;	# /bin/true is 35 kB
	esac
	"seeds_$t" || exit 1
	# inputs that once crashed a target stay among its seeds
	[ -d "tests/fuzz/regress/$t" ] && cp tests/fuzz/regress/"$t"/* "$OUT/$t/seeds/"
	# -close_fd_mask=2: the tools' messages would drown the fuzzer's output
	# (libFuzzer keeps its own copy of stderr for reports).
	# -error_exitcode=1: libFuzzer's default, 77, is this script's "cannot
	# fuzz here", which 54-file-fuzz reports as a skip.  The log keeps a
	# crash's whole report, not the progress lines (#N NEW ...)
	rm -rf "$OUT/$t/tmp" && mkdir -p "$OUT/$t/tmp"
	(cd "$OUT/$t" && TMPDIR=$OUT/$t/tmp "./fuzz_$t" -max_total_time="$secs" -max_len="$max_len" -close_fd_mask=2 -error_exitcode=1 \
		-print_final_stats=1 corpus seeds 2>&1 | grep -v '^#[0-9]' | tail -n 200 >"$OUT/$t/last-run.log"
	 exit "${PIPESTATUS[0]}")
	trc=$?
	rm -rf "$OUT/$t/tmp"
	echo "fuzz $t: exit $trc: $(grep -E 'Done [0-9]+ runs|ERROR|SUMMARY' "$OUT/$t/last-run.log" | tr '\n' ' ')"
	[ $trc -eq 0 ] || rc=$trc
done
exit $rc
