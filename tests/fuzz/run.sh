#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/fuzz/run.sh [SECONDS]: build the trace file fuzz target with clang
# (libFuzzer, ASan, UBSan) and run it for SECONDS (default 60) from seeds
# that ktgen writes.  Exit 0: no crash; 77: clang or libFuzzer missing;
# otherwise the crash is in build/fuzz/ (crash-* files).
set -u
secs=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/fuzz
cd "$ROOT" || exit 1

command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 77; }
mkdir -p "$OUT/corpus" "$OUT/seeds"
if ! clang -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iinclude/uapi -Ilib -DKTRACE_VERSION='"fuzz"' -o "$OUT/fuzz_ktfile" \
	tests/fuzz/fuzz_ktfile.c lib/ktfile_read.c lib/ktevents.c lib/merge.c lib/util.c \
	2>"$OUT/build.log"; then
	if grep -q 'libclang_rt.fuzzer\|fuzzer.*not found' "$OUT/build.log"; then
		echo "fuzz: clang has no libFuzzer here"
		exit 77
	fi
	cat "$OUT/build.log"
	exit 1
fi

# seeds: small good files of each kind, and each corruption
make -s build/tests/ktgen || exit 1
gen() { "$ROOT/build/tests/ktgen" -c 1 -n 12 "$@" "$OUT/seeds/s" >/dev/null; }
i=0
for args in "" "-l 3" "-U 300" "--swap -l 2" "-u 1 -c 1" "--step 0" \
	    "--corrupt truncated" "--corrupt order" "--corrupt cont-seq" "--corrupt cont-end" \
	    "--corrupt cont-orphan" "--corrupt version"; do
	rm -f "$OUT"/seeds/s.*
	gen $args
	for f in "$OUT"/seeds/s.*; do
		mv "$f" "$OUT/seeds/seed-$i"
		i=$((i + 1))
	done
done

cd "$OUT" || exit 1
# -close_fd_mask=2: the reader's messages would drown the fuzzer's output
# (libFuzzer keeps its own copy of stderr for reports)
./fuzz_ktfile -max_total_time="$secs" -max_len=4096 -close_fd_mask=2 \
	-print_final_stats=1 corpus seeds 2>&1 | tail -n 25 >"$OUT/last-run.log"
rc=${PIPESTATUS[0]}
grep -E 'stat::number_of_executed_units|Done [0-9]+ runs|ERROR|SUMMARY' "$OUT/last-run.log"
exit $rc
