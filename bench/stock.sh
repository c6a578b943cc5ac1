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
#     between two threads on one CPU: (time traced - time untraced) /
#     events, with the number of events ktrace.ko recorded for the same
#     workload (the same tracepoints fire for every tracer);
#   - the slowdown of each workload against no tracing;
#   - ktrace_whole: ktrace.ko with a buffer that holds the whole run, read
#     after it: the share of ktrace's cost that is writing the records;
#   - events lost by a getppid() flood on every CPU with (at least) equal
#     buffer memory, twice: ktrace 16384 records = 384 KiB a CPU, ftrace
#     384 KiB, perf and LTTng 512 KiB (they need powers of two); then 96 KiB
#     (4096 records), 96 KiB, 128 KiB, where the peers lose events too.
# Rounds are interleaved (every tracer once per round, each traced run
# right after an untraced one, its baseline); medians.  Under
# TCG the nanoseconds are not real: the ratios are what count.  Two boots,
# one for the costs and one for the losses: see below.
#   STOCK_KERNEL (default: the newest 6.1.0-N-amd64), BENCH_ROUNDS (5),
#   BENCH_PARTS ("cost lost": the boots to run), BENCH_PINGPONG (5000
#   round trips a run)
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
${CC:-cc} -static -O2 -Wall -pthread -o "$out/stock-work" bench/vm/stock-work.c
command -v trace-cmd >/dev/null || apt-get install -y -q trace-cmd >/dev/null
command -v perf >/dev/null || apt-get install -y -q linux-perf >/dev/null
command -v lttng-sessiond >/dev/null || apt-get install -y -q lttng-tools >/dev/null

# LTTng-modules from Debian's lttng-modules-dkms (cached in build/stock/debs),
# built out of tree as DKMS would.  2.13.9 does not build against 6.1.0-5x's
# headers as shipped: each bench/lttng/*.patch says why and is applied only
# where its check holds.  A failed build is reported, and the bench goes on
# without LTTng.
lt=build/stock/lttng/$krel
lttng_build() {
	local deb hdr=$dir/build
	deb=$(ls build/stock/debs/lttng-modules-dkms_*.deb 2>/dev/null | tail -n 1 || true)
	if [ -z "$deb" ]; then
		(cd build/stock/debs && apt-get download -q lttng-modules-dkms >&2) || return 1
		deb=$(ls build/stock/debs/lttng-modules-dkms_*.deb | tail -n 1)
	fi
	rm -rf "$lt" "$out/lttng-deb"
	dpkg-deb -x "$deb" "$out/lttng-deb"
	mkdir -p "$(dirname "$lt")"
	mv "$out"/lttng-deb/usr/src/lttng-modules-* "$lt"
	rm -rf "$out/lttng-deb"
	# 0001: the headers' hrtimer_start has the 6.1.y was_armed argument
	if grep -qs 'bool was_armed' "$hdr"/../linux-headers-*-common*/include/trace/events/timer.h \
			"$hdr"/include/trace/events/timer.h; then
		patch -d "$lt" -p1 -s <bench/lttng/0001-hrtimer_start-was_armed.patch || return 1
		echo "bench/stock: LTTng-modules: applied bench/lttng/0001-hrtimer_start-was_armed.patch" >&2
	fi
	make -C "$lt" KERNELDIR="$(readlink -f "$hdr")" -j"$(nproc)" modules || return 1
	touch "$lt/.built"
}
if [ "${BENCH_LTTNG:-1}" = 1 ] && [ ! -f "$lt/.built" ]; then
	echo "bench/stock: building LTTng-modules against $krel's headers (log: $out/lttng-build.log)" >&2
	lttng_build >"$out/lttng-build.log" 2>&1 ||
		echo "bench/stock: LTTng-modules did not build against $krel; the bench runs without it (see $out/lttng-build.log)" >&2
fi

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
	if [ -f "$lt/.built" ] && command -v lttng-sessiond >/dev/null; then
		mdir=$out/lttng-root/lib/modules/$krel/extra
		rm -rf "$out/lttng-root"; mkdir -p "$mdir"
		find "$lt/src" -name '*.ko' -exec cp {} "$mdir/" \;
		cp "$dir/lib/modules/$krel/modules."{order,builtin,builtin.modinfo} \
			"$out/lttng-root/lib/modules/$krel/" 2>/dev/null || true
		depmod -b "$out/lttng-root" "$krel"
		# every index depmod wrote: lttng-sessiond loads the modules
		# through libkmod, which needs them all ("Failed to load kmod
		# library resources" without the .bin ones)
		for f in "$out/lttng-root/lib/modules/$krel/"modules.* "$mdir"/*.ko; do
			[ -f "$f" ] && add_file "$f" "${f#"$out/lttng-root"}"
		done
		for p in lttng lttng-sessiond; do add_prog "$(command -v $p)" "/usr/bin/$p"; done
		# lttng-sessiond stops if it cannot validate its session schema
		add_file /usr/share/xml/lttng/session.xsd /usr/share/xml/lttng/session.xsd
		for p in /usr/lib/x86_64-linux-gnu/lttng/libexec/lttng-consumerd; do
			[ -x "$p" ] && add_prog "$p"
		done
		add_prog "$(command -v kmod)" /sbin/kmod
	fi
} >"$list"
build/vm/gen_init_cpio "$list" >"$out/extra.cpio"
cat build/vm/initramfs.cpio "$out/extra.cpio" >"$out/initramfs.cpio"

# Two boots of the same kernel and initramfs, every tracer in each:
#   cost  QEMU runs the 4 vCPUs on one thread (tcg,thread=single, as
#         check-stock does): the tracers' daemons take their CPU time from
#         the thread the workload runs on, as on a loaded machine, and the
#         host's other load does not move one vCPU against another;
#   lost  a thread per vCPU (QEMU's default): single-threaded QEMU runs one
#         vCPU for up to 100 ms while the others wait, which no real machine
#         does, and a reader woken on another CPU waits that long.
: >"$out/console.txt"
for part in ${BENCH_PARTS:-cost lost}; do
	accel=tcg,thread=single
	[ $part = lost ] && accel=tcg
	log=$out/console-$part.log
	echo "bench/stock: booting $krel ($accel, 4 vCPUs) for the $part part; console in $log" >&2
	timeout "${VM_TIMEOUT:-1500}" qemu-system-x86_64 -accel "${VM_ACCEL:-$accel}" -smp 4 -m 2048 \
		-nographic -no-reboot -net none -kernel "$dir/boot/vmlinuz-$krel" \
		-initrd "$out/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 loglevel=3 nokaslr kt_run=/bench/stock.sh bench_part=$part bench_rounds=${BENCH_ROUNDS:-5} bench_pingpong=${BENCH_PINGPONG:-5000}" \
		</dev/null >"$log" 2>&1 || true
	tr -d '\r' <"$log" >"$out/console-$part.txt"
	grep -q '@@BENCH-DONE@@' "$out/console-$part.txt" || die "the VM did not finish; see $log"
	cat "$out/console-$part.txt" >>"$out/console.txt"
done
grep -E '^(bench:|# )' "$out/console.txt" >&2 || true

# Each traced run against the untraced run just before it (the host's speed
# drifts within seconds by more than ktrace costs); medians over the
# rounds, then the BENCH lines.
awk -v krel="$krel" '
	function median(list,   n, i, j, t, a) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	/^RAW / { ns[$2, $3, $4] = $5; base[$2, $3, $4] = $6; rounds[$2] = 1; tr[$3] = 1
		  if ($3 == "ktrace") recs[$4] = recs[$4] " " $7 }
	/^LOST / { lost[$2, $4] = $3; tr[$2] = 1; kib[$4] = 1 }
	END {
		for (t in tr) {
			if (t == "none") continue
			for (w = 0; w < 2; w++) {
				wl = w ? "pingpong" : "syscalls"
				d = ""; q = ""
				for (r in rounds) {
					if (!((r, t, wl) in ns) || !(base[r, t, wl] > 0)) continue
					d = d " " (ns[r, t, wl] - base[r, t, wl])
					q = q " " (ns[r, t, wl] / base[r, t, wl])
				}
				if (median(recs[wl]) + 0 == 0) continue	# no cost boot
				pe[t, wl] = median(d) / median(recs[wl])
				n = split(d, a, " "); each = ""
				for (i = 1; i <= n; i++) each = each sprintf(" %.0f", a[i] / median(recs[wl]))
				printf "BENCH stock_%s_%s_ns_per_event %.1f ns (rounds:%s)\n", t, wl, pe[t, wl], each
				printf "BENCH stock_%s_%s_slowdown %.3f x\n", t, wl, median(q)
			}
			for (k in kib)
				if ((t, k) in lost)
					printf "BENCH stock_%s_lost_%sk %d events\n", t, k, lost[t, k]
		}
		for (t in tr) {
			if (t == "none" || t == "ktrace" || t == "ktrace_whole") continue
			for (w = 0; w < 2; w++) {
				wl = w ? "pingpong" : "syscalls"
				if (pe[t, wl])
					printf "BENCH stock_ktrace_vs_%s_%s %.3f ratio\n", t, wl, pe["ktrace", wl] / pe[t, wl]
			}
		}
		# the part of the ktrace cost that is writing records, the rest reading them
		for (w = 0; w < 2; w++) {
			wl = w ? "pingpong" : "syscalls"
			if (pe["ktrace", wl] && ("ktrace_whole", wl) in pe)
				printf "BENCH stock_ktrace_writing_share_%s %.3f ratio\n", wl,
					pe["ktrace_whole", wl] / pe["ktrace", wl]
		}
		printf "# kernel %s; events per workload (ktrace.ko): syscalls %s, pingpong %s\n",
			krel, median(recs["syscalls"]), median(recs["pingpong"])
	}' "$out/console.txt" | sort | tee "$out/stock.txt"
