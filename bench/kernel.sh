#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/kernel.sh: what a TRACE() site costs, measured in one boot of the
# vm kernel (bench/vm/kernel.sh inside the VM):
#   - ns per TRACE() with tracing off (static-key NOP), with its group
#     filtered out, and recording, as the kernel's own TSC loop reports it
#     (CONFIG_KTRACE_BENCHMARK, /sys/kernel/debug/ktrace/benchmark), and
#     recording in overwrite mode (ktrace --flight: the ring wraps);
#   - ftrace's tracepoint benchmark (CONFIG_TRACEPOINT_BENCHMARK) as the peer;
#   - ns per getppid() with ktrace built in and off, and on, against a kernel
#     built without CONFIG_KTRACE (KCONFIG=noktrace, booted the same way).
# Under TCG these are not real nanoseconds: the ratios are what count.
# Prints BENCH lines, then the ratios against the targets of issue 3.
set -euo pipefail
cd "$(dirname "$0")/.."

boots=${BENCH_BOOTS:-3}
out=build/bench
mkdir -p "$out"

make -s tools
for k in vm noktrace; do
	make -s kernel KCONFIG=$k
done
make -s initramfs >/dev/null
${CC:-cc} -static -O2 -o "$out/syscall-bench" bench/vm/syscall-bench.c
scripts/mkextra-initramfs.sh "$out/initramfs.cpio" bench bench/vm/kernel.sh "$out/syscall-bench"

# run_vm KCONFIG: boot, run /bench/kernel.sh, print its BENCH lines
run_vm() {
	local log=$out/kernel-$1.log
	scripts/vmboot.sh "$1" "$out/initramfs.cpio" /bench/kernel.sh "$log" || true
	grep -a '^BENCH ' "$log" | tr -d '\r' ||
		{ echo "bench: no results from the $1 kernel; see $log" >&2; return 1; }
}

: >"$out/kernel.raw"
for i in $(seq "$boots"); do
	run_vm vm >>"$out/kernel.raw"
	run_vm noktrace >>"$out/kernel.raw"
done

# median of each BENCH name over the boots
for name in $(awk '{ print $2 }' "$out/kernel.raw" | sort -u); do
	awk -v n="$name" '$2 == n { print $3, $4 }' "$out/kernel.raw" | sort -n |
		awk -v n="$name" '{ v[NR] = $1; u = $2 } END { print "BENCH", n, v[int((NR + 1) / 2)], u }'
done | tee "$out/kernel.txt"

awk '{ b[$2] = $3 }
     END {
	printf "ratio: TRACE() recording / ftrace tracepoint = %.3f (target <= 0.333)\n",
		b["kernel_trace_on"] / b["ftrace_tracepoint_benchmark"]
	printf "ratio: TRACE() off / recording = %.3f\n", b["kernel_trace_off"] / b["kernel_trace_on"]
	if (b["kernel_trace_overwrite"])
		printf "ratio: TRACE() recording in overwrite mode / normal mode = %.3f\n",
			b["kernel_trace_overwrite"] / b["kernel_trace_on"]
	printf "ratio: getppid() ktrace built in, off / no ktrace = %.3f (target: within noise of 1)\n",
		b["syscall_ktrace_off"] / b["syscall_no_ktrace"]
	printf "ratio: getppid() ktrace tracing syscalls / no ktrace = %.3f\n",
		b["syscall_ktrace_on"] / b["syscall_no_ktrace"]
     }' "$out/kernel.txt"
