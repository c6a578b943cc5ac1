#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/fuzz/run.sh [SECONDS [TARGET...]]: build libFuzzer targets with
# clang (ASan, UBSan) and run each for SECONDS (default 60) from seeds.
# Targets (default: all):
#   ktfile   the trace file reader, merge and event text (seeds from ktgen)
#   maps     dtrace's map file parser and what it prints (symbols.c)
#   escape   the escaping of trace strings for text, DOT, JSON, CTF
#   calls    the call reconstruction (dtrace/calls.c) and the call views
#            and Perfetto export on it (seeds: none, it starts from nothing)
# Exit 0: no crash; 77: clang or libFuzzer missing; otherwise the crash is
# in build/fuzz/TARGET/ (crash-* files).
set -u
secs=${1:-60}
shift
targets=${*:-ktfile maps escape calls}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/fuzz
cd "$ROOT" || exit 1

command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 77; }
FLAGS=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -Iinclude/uapi -Ilib -Idtrace -DKTRACE_VERSION='"fuzz"')
LIB=(lib/ktfile_read.c lib/ktevents.c lib/merge.c lib/util.c lib/escape.c lib/files.c lib/ksyms.c
     lib/pager.c)
# build TARGET SOURCES... [LIBS...]
build() {
	local t=$1
	shift
	mkdir -p "$OUT/$t/corpus" "$OUT/$t/seeds"
	if ! clang "${FLAGS[@]}" -o "$OUT/$t/fuzz_$t" "$@" 2>"$OUT/$t/build.log"; then
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
make -s build/tests/ktgen || exit 1
gen() { "$ROOT/build/tests/ktgen" -c 1 -n 12 "$@" "$OUT/ktfile/seeds/s" >/dev/null; }
i=0
for args in "" "-l 3" "-U 300" "--swap -l 2" "-u 1 -c 1" "--step 0" \
	    "--corrupt truncated" "--corrupt order" "--corrupt cont-seq" "--corrupt cont-end" \
	    "--corrupt cont-orphan" "--corrupt version"; do
	rm -f "$OUT"/ktfile/seeds/s.*
	gen $args
	for f in "$OUT"/ktfile/seeds/s.*; do
		mv "$f" "$OUT/ktfile/seeds/seed-$i"
		i=$((i + 1))
	done
done

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
	# shellcheck disable=SC2046
	calls)	build calls tests/fuzz/fuzz_calls.c $(ls dtrace/*.c | grep -v '/main\.c$') \
			lib/ktfile_write.c "${LIB[@]}" -ldw -lelf -pthread ;;
	*)	echo "fuzz: no target $t"; exit 2 ;;
	esac
	"seeds_$t" || exit 1
	# -close_fd_mask=2: the tools' messages would drown the fuzzer's output
	# (libFuzzer keeps its own copy of stderr for reports).
	# -error_exitcode=1: libFuzzer's default, 77, is this script's "cannot
	# fuzz here", which 54-file-fuzz reports as a skip
	rm -rf "$OUT/$t/tmp" && mkdir -p "$OUT/$t/tmp"
	(cd "$OUT/$t" && TMPDIR=$OUT/$t/tmp "./fuzz_$t" -max_total_time="$secs" -max_len=4096 -close_fd_mask=2 -error_exitcode=1 \
		-print_final_stats=1 corpus seeds 2>&1 | tail -n 25 >"$OUT/$t/last-run.log"
	 exit "${PIPESTATUS[0]}")
	trc=$?
	rm -rf "$OUT/$t/tmp"
	echo "fuzz $t: exit $trc: $(grep -E 'Done [0-9]+ runs|ERROR|SUMMARY' "$OUT/$t/last-run.log" | tr '\n' ' ')"
	[ $trc -eq 0 ] || rc=$trc
done
exit $rc
