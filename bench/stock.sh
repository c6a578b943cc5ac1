#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/stock.sh: ktrace.ko against its peers on the same stock Debian
# kernel, in the same boot (bench/vm/stock.sh inside the VM):
#   ktrace.ko, ftrace (trace-cmd record), perf record and LTTng-modules
#   (Debian's lttng-modules-dkms built against the same headers, when
#   build/stock/lttng/src holds a build of it: see LTTNG below), all tracing
#   sched_switch, sched_wakeup, sched_migrate_task and system call entry and
#   exit into files on tmpfs;
#   - ns per traced event from a getppid() loop and from a pipe ping-pong
#     between two processes on one CPU: (time traced - time untraced) /
#     events, with the number of events ktrace.ko recorded for the same
#     workload (the same tracepoints fire for every tracer);
#   - the slowdown of each workload against no tracing;
#   - events lost by a getppid() flood on every CPU with (at least) equal
#     buffer memory: ktrace 16384 records = 384 KiB a CPU, ftrace 384 KiB,
#     perf and LTTng 512 KiB (they need powers of two).
# Rounds are interleaved (every tracer once per round); medians.  Under
# TCG the nanoseconds are not real: the ratios are what count.
#   STOCK_KERNEL (default: the newest 6.1.0-N-amd64), BENCH_ROUNDS (3)
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "bench/stock: $*" >&2; exit 1; }
krel=${STOCK_KERNEL:-$(scripts/stock-kernel.sh names | cut -d' ' -f1)}
out=build/bench/stock
mkdir -p "$out"
dir=$(scripts/stock-kernel.sh fetch "$krel") || die "cannot fetch $krel"
make -s tools initramfs >/dev/null
make -s module KVER="$krel" KDIR="$dir/build" >"$out/module.log" 2>&1 ||
	die "make module against $krel failed: $out/module.log"
${CC:-cc} -static -O2 -Wall -o "$out/stock-work" bench/vm/stock-work.c
command -v trace-cmd >/dev/null || apt-get install -y -q trace-cmd >/dev/null
command -v perf >/dev/null || apt-get install -y -q linux-perf >/dev/null

# The cpio list: our files under /bench, each peer binary with the shared
# libraries ldd names at their own paths.
list=$out/extra.list
declare -A done_path=()
add_dir() {
	local p="" part
	IFS=/ read -ra parts <<<"${1#/}"
	for part in "${parts[@]}"; do
		p+=/$part
		[ -n "${done_path[$p]:-}" ] || { echo "dir $p 0755 0 0"; done_path[$p]=1; }
	done
}
add_file() {	# SRC DEST
	[ -z "${done_path[$2]:-}" ] || return 0
	add_dir "$(dirname "$2")"
	echo "file $2 $(readlink -f "$1") 0755 0 0"
	done_path[$2]=1
}
add_prog() {	# PATH [DEST]: the program and its libraries
	local lib
	add_file "$1" "${2:-$1}"
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
		add_file "$lib" "$lib"
	done
}
{
	add_file bench/vm/stock.sh /bench/stock.sh
	add_file "$out/stock-work" /bench/stock-work
	add_file build/module/ktrace-*/ktrace.ko /bench/ktrace.ko
	add_prog "$(command -v trace-cmd)" /bench/bin/trace-cmd
	add_prog "$(readlink -f "$(command -v perf)")" /bench/bin/perf
	lt=build/stock/lttng/src
	if [ -f "$lt/src/lttng-tracer.ko" ] && command -v lttng-sessiond >/dev/null; then
		mdir=$out/lttng-root/lib/modules/$krel/extra
		rm -rf "$out/lttng-root"; mkdir -p "$mdir"
		find "$lt/src" -name '*.ko' -exec cp {} "$mdir/" \;
		cp "$dir/lib/modules/$krel/modules."{order,builtin,builtin.modinfo} \
			"$out/lttng-root/lib/modules/$krel/" 2>/dev/null || true
		depmod -b "$out/lttng-root" "$krel"
		for f in "$out/lttng-root/lib/modules/$krel/"{modules.dep,modules.dep.bin,modules.alias,modules.symbols} "$mdir"/*.ko; do
			[ -f "$f" ] && add_file "$f" "${f#"$out/lttng-root"}"
		done
		for p in lttng lttng-sessiond; do add_prog "$(command -v $p)" "/usr/bin/$p"; done
		for p in /usr/lib/x86_64-linux-gnu/lttng/libexec/lttng-consumerd; do
			[ -x "$p" ] && add_prog "$p"
		done
		add_prog "$(command -v kmod)" /sbin/kmod
	fi
} >"$list"
build/vm/gen_init_cpio "$list" >"$out/extra.cpio"
cat build/vm/initramfs.cpio "$out/extra.cpio" >"$out/initramfs.cpio"

log=$out/console.log
echo "bench/stock: booting $krel (TCG, 4 vCPUs); console in $log" >&2
timeout "${VM_TIMEOUT:-1500}" qemu-system-x86_64 -accel "${VM_ACCEL:-tcg}" -smp 4 -m 2048 \
	-nographic -no-reboot -net none -kernel "$dir/boot/vmlinuz-$krel" \
	-initrd "$out/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=3 nokaslr kt_run=/bench/stock.sh bench_rounds=${BENCH_ROUNDS:-3}" \
	</dev/null >"$log" 2>&1 || true
tr -d '\r' <"$log" >"$out/console.txt"
grep -q '@@BENCH-DONE@@' "$out/console.txt" || die "the VM did not finish; see $log"
grep -E '^(bench:|# )' "$out/console.txt" >&2 || true

# Medians over the rounds, then the BENCH lines.
awk -v krel="$krel" '
	function median(key,   n, i, j, t, a) {
		n = split(vals[key], a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	/^RAW / { vals[$3 " " $4] = vals[$3 " " $4] " " $5; if ($3 == "ktrace") recs[$4] = recs[$4] " " $6; tr[$3] = 1 }
	/^LOST / { lost[$2] = $3 }
	END {
		for (w in recs) { vals["rec " w] = recs[w] }
		for (t in tr) {
			if (t == "none") continue
			for (w = 0; w < 2; w++) {
				wl = w ? "pingpong" : "syscalls"
				base = median("none " wl); tt = median(t " " wl); ev = median("rec " wl)
				pe[t, wl] = (tt - base) / ev
				printf "BENCH stock_%s_%s_ns_per_event %.1f ns\n", t, wl, pe[t, wl]
				printf "BENCH stock_%s_%s_slowdown %.3f x\n", t, wl, tt / base
			}
			printf "BENCH stock_%s_lost %d events\n", t, lost[t]
		}
		for (t in tr) {
			if (t == "none" || t == "ktrace") continue
			for (w = 0; w < 2; w++) {
				wl = w ? "pingpong" : "syscalls"
				printf "BENCH stock_ktrace_vs_%s_%s %.3f ratio\n", t, wl, pe["ktrace", wl] / pe[t, wl]
			}
		}
		printf "# kernel %s; events per workload (ktrace.ko): syscalls %s, pingpong %s\n",
			krel, median("rec syscalls"), median("rec pingpong")
	}' "$out/console.txt" | sort | tee "$out/stock.txt"
