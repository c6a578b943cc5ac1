#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/probe-peers.sh: a ktrace probe hit against its peers' on a stock
# Debian kernel (default: the newest 6.12; STOCK_KERNEL=6.1.0-N-amd64 for
# 6.1), in one boot.  The guest chroots into the host's / (scripts/hostroot.sh),
# so Debian's own perf and bpftrace run there; bench/vm/probe-peers.sh does
# the work.  probe-bench (bench/vm/probe-bench.c, static, -g) calls
# bench_probed(a, b, n) in a loop; each way of probing it records or reads
# a (rdi), b (rsi) and n->next->next->val (three loads from rdx):
#   floor            a ktrace probe whose group the mask leaves out: the
#                    trap, uprobes' own path and a handler that returns
#   tracefs_bare     a tracefs uprobe with no fetch args, enabled (ftrace's ring)
#   ktrace_regs      ktrace -P 'BIN:bench_probed a b'
#   ktrace_chain     ktrace -P 'BIN:bench_probed a b n.next.next.val'
#   tracefs_chain    the uprobe_events line perf probe wrote, in a group of
#                    its own, read by cat trace_pipe
#   perf_chain       perf probe -x BIN 'bench_probed a b n->next->next->val'
#                    + perf record
#   bpftrace_map     @hits[arg1, chain] = count(); @a = sum(arg0)
#   bpftrace_printf  printf of the three values to a file
# Per hit = (ns a call probed - ns a call unprobed, the run just before),
# median of BENCH_ROUNDS interleaved rounds, the rounds' spread with it;
# BENCH lines are ratios to the floor's median.  Then a burst (every CPU
# calls it BENCH_BURST times at once) with 384 KiB a CPU: ktrace -b 16384,
# ftrace buffer_size_kb=384, perf -m 512K and bpftrace 128 pages (512 KiB:
# they take powers of two): the hits each recorded and the loss it reported,
# against the calls made.  QEMU without KVM (TCG, the vCPUs on one thread
# as check-stock runs them): a trap costs tens of microseconds, the
# consumers' threads take time from the traced one, only ratios count.
#   STOCK_KERNEL, BENCH_CLOCK, BENCH_ROUNDS (5), BENCH_CALLS (10000), BENCH_BURST (20000)
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "bench/probe-peers: $*" >&2; exit 1; }
krel=${STOCK_KERNEL:-$(scripts/stock-kernel.sh names | cut -d' ' -f3)}
out=build/bench/probe-peers/$krel
mkdir -p "$out"
command -v perf >/dev/null || apt-get install -y -q linux-perf >/dev/null
command -v bpftrace >/dev/null || apt-get install -y -q bpftrace >/dev/null
dir=$(scripts/stock-kernel.sh fetch "$krel") || die "cannot fetch $krel"
make -s tools initramfs >/dev/null
make -s module KVER="$krel" KDIR="$dir/build" >"$out/module.log" 2>&1 ||
	die "make module against $krel failed: $out/module.log"
cp build/module/ktrace-*/ktrace.ko "$out/ktrace.ko"
${CC:-cc} -static -O2 -g -Wall -Iinclude/uapi -o "$out/probe-bench" bench/vm/probe-bench.c
qemu_args=$(scripts/hostroot.sh "$krel" "$dir" "$out/initramfs.cpio")

case ${BENCH_CLOCK:=icount} in
icount)	clock=(-icount shift=0,sleep=off) ;;
wall)	clock=() ;;
*)	die "BENCH_CLOCK=$BENCH_CLOCK: icount or wall" ;;
esac
log=$out/console-$BENCH_CLOCK.log
echo "bench/probe-peers: booting $krel; console in $log" >&2
# shellcheck disable=SC2086 # the -virtfs arguments
timeout "${VM_TIMEOUT:-1500}" qemu-system-x86_64 -accel "${VM_ACCEL:-tcg,thread=single}" -smp 4 \
	-m 2048 -nographic -no-reboot -net none -kernel "$dir/boot/vmlinuz-$krel" \
	-initrd "$out/initramfs.cpio" $qemu_args "${clock[@]}" \
	-append "console=ttyS0 panic=-1 loglevel=3 nokaslr kt_run=/hostroot/enter hostroot_run=$PWD/bench/vm/probe-peers.sh bench_dir=$PWD/$out bench_tools=$PWD/build/tools bench_rounds=${BENCH_ROUNDS:-5} bench_calls=${BENCH_CALLS:-10000} bench_burst=${BENCH_BURST:-20000}" \
	</dev/null >"$log" 2>&1 || true
txt=${log%.log}.txt
tr -d '\r' <"$log" >"$txt"
grep '^bench:' "$txt" >&2 || true
grep -q '@@BENCH-DONE@@' "$txt" || die "the VM did not finish; see $log"

awk -v krel="$krel" -v clock="$BENCH_CLOCK" '
	function median(list,   n, i, j, t, a) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	/^RAW / { d[$3] = d[$3] " " ($4 - $5); if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
	/^LOST / { printf "BENCH probe_peers_lost_%s %d hits (recorded %d of %d, %d with wrong values; the tool reports %s %s lost)\n",
			$2, $6 - $3, $3, $6, $7, $4, $5 }
	function spread(list, floor,   n, i, a, lo, hi) {
		n = split(list, a, " "); lo = hi = a[1]
		for (i = 2; i <= n; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
		return sprintf("rounds %.2f-%.2f", lo / floor, hi / floor)
	}
	END {
		floor = median(d["floor"])
		printf "# kernel %s, %s clock; ns a hit, median (rounds):\n", krel,
			clock == "icount" ? "icount (1 ns an instruction)" : "wall (TCG)"
		for (i = 1; i <= n; i++)
			printf "#   %-16s %8.0f (%s )\n", order[i], median(d[order[i]]), d[order[i]]
		for (i = 1; i <= n; i++)
			if (order[i] != "floor")
				printf "BENCH probe_peers_%s_vs_floor %.3f ratio (%s)\n", order[i],
					median(d[order[i]]) / floor, spread(d[order[i]], floor)
		for (i = 1; i <= n; i++)
			if (order[i] != "floor" && order[i] !~ /^ktrace/)
				printf "BENCH probe_peers_ktrace_chain_vs_%s %.3f ratio\n", order[i],
					median(d["ktrace_chain"]) / median(d[order[i]])
	}' "$txt" | tee "$out/probe-peers-$BENCH_CLOCK.txt"
