#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/probe.sh: what a ktrace probe hit costs, in one boot of the vm
# kernel (bench/vm/probe-bench.c inside the VM): ns per call of a probed
# function with no probe; with a ktrace probe whose group the mask leaves
# out (the floor: the trap, uprobes' own path, a handler that returns);
# with a bare tracefs uprobe (no fetch args, recording into ftrace's ring);
# with a tracefs uprobe fetching two registers and a 3-deref chain (what
# perf probe would set up; neither perf nor bpftrace is in the busybox VM:
# bench/probe-peers.sh runs them against ktrace on stock kernels);
# and with ktrace probes recording, empty and fetching the same values.
# Interleaved rounds, medians.  Under TCG these are not real nanoseconds:
# the ratios within the boot are what count.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${BENCH_ROUNDS:-7}
calls=${BENCH_CALLS:-5000}
out=build/bench
mkdir -p "$out"

make -s kernel KCONFIG=vm
make -s initramfs >/dev/null
${CC:-cc} -static -O2 -Iinclude/uapi -o "$out/probe-bench" bench/vm/probe-bench.c
printf '#!/bin/sh\nmount -t tracefs nodev /sys/kernel/tracing 2>/dev/null\n/bench/probe-bench %s %s\n' \
	"$rounds" "$calls" >"$out/probe-run.sh"
chmod +x "$out/probe-run.sh"
scripts/mkextra-initramfs.sh "$out/probe-initramfs.cpio" bench "$out/probe-run.sh" "$out/probe-bench"

log=$out/probe.log
scripts/vmboot.sh vm "$out/probe-initramfs.cpio" /bench/probe-run.sh "$log" || true
grep -a '^BENCH ' "$log" | tr -d '\r' | tee "$out/probe.txt"
[ -s "$out/probe.txt" ] || { echo "bench: no results; see $log" >&2; exit 1; }

awk '{ b[$2] = $3 }
     END {
	none = b["probe_none"]
	floor = b["probe_ktrace_masked"] - none
	printf "ratio: ktrace probe, 2 registers + 3-deref chain / uprobe floor (probe masked out) = %.3f\n",
		(b["probe_ktrace_fetch"] - none) / floor
	printf "ratio: ktrace probe, empty program / uprobe floor = %.3f\n",
		(b["probe_ktrace_empty"] - none) / floor
	printf "ratio: bare tracefs uprobe / uprobe floor = %.3f\n",
		(b["probe_uprobe_floor"] - none) / floor
	printf "ratio: tracefs uprobe, the same fetch / uprobe floor = %.3f\n",
		(b["probe_tracefs_fetch"] - none) / floor
	printf "ratio: ktrace probe / tracefs uprobe, both fetching = %.3f\n",
		(b["probe_ktrace_fetch"] - none) / (b["probe_tracefs_fetch"] - none)
     }' "$out/probe.txt"
