#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/fuzz/run-calls.sh [SECONDS]: build the call reconstruction fuzz
# target (fuzz_calls.c: dtrace/calls.c and the call views and Perfetto
# export on it) with clang (libFuzzer, ASan, UBSan) and run it for SECONDS
# (default 60).  Exit 0: no crash; 77: clang or libFuzzer missing;
# otherwise the crash is in build/fuzz-calls/ (crash-* files).
set -u
secs=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/fuzz-calls
cd "$ROOT" || exit 1

command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 77; }
mkdir -p "$OUT/corpus"
srcs="tests/fuzz/fuzz_calls.c $(ls dtrace/*.c | grep -v '/main\.c$') lib/ktfile_read.c
      lib/ktfile_write.c lib/ktevents.c lib/merge.c lib/util.c lib/escape.c lib/files.c"
if ! clang -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iinclude/uapi -Ilib -Idtrace -DKTRACE_VERSION='"fuzz"' -o "$OUT/fuzz_calls" \
	$srcs -ldw -lelf -pthread 2>"$OUT/build.log"; then
	if grep -q 'libclang_rt.fuzzer\|fuzzer.*not found' "$OUT/build.log"; then
		echo "fuzz: clang has no libFuzzer here"
		exit 77
	fi
	cat "$OUT/build.log"
	exit 1
fi
cd "$OUT" || exit 1
# -close_fd_mask=2: dtrace's warnings (no map file) would drown the
# fuzzer's output (libFuzzer keeps its own copy of stderr for reports)
./fuzz_calls -max_total_time="$secs" -max_len=2048 -close_fd_mask=2 \
	-print_final_stats=1 corpus 2>&1 | tail -n 25 >"$OUT/last-run.log"
rc=${PIPESTATUS[0]}
grep -E 'stat::number_of_executed_units|Done [0-9]+ runs|ERROR|SUMMARY' "$OUT/last-run.log"
exit $rc
