#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-stock.sh (make check-stock): ktrace.ko on Debian's own kernels,
# unmodified.  For each of the newest 6.1.0-N-amd64, 6.12.N+deb12-amd64 and
# their -rt-amd64 flavours (scripts/stock-kernel.sh names; STOCK_KERNELS
# to choose): fetch the image and headers (cached in build/stock), build the
# module against those headers (make module), boot the kernel under QEMU
# with the test initramfs plus the module, load it and run the in-VM tests
# that apply.  Results: build/results/vm-stock-KREL-*.tap.  A kernel that
# cannot be fetched, or a module that does not build, is a "not ok" line in
# build/results/stock.tap, never a silent skip.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

STOCK_TESTS=${STOCK_TESTS:-"10-device-abi 20-kernel-counts 25-ftrace-switch 37-sessions 38-flight-perfmon 39-ktrace-sessions 50-ktrace-tool 51-ktrace-enospc 55-names 56-name-tasks 57-decode 70-flood 80-hotplug 85-module 86-probe 87-probe-e2e 88-probe-debsrc"}
start=$SECONDS
mkdir -p build/results build/stock
rm -f build/results/stock.tap build/results/vm-stock-*.tap

record() { echo "$1 - $2" >>build/results/stock.tap; [ "$1" = ok ] || msg "stock: $1 - $2" >&2; }

command -v pahole >/dev/null || apt-get install -y -q dwarves >/dev/null ||
	record "not ok" "pahole (dwarves) for 6.12 module builds"
make --no-print-directory tools initramfs >/dev/null

if ! kernels=${STOCK_KERNELS:-$(scripts/stock-kernel.sh names)}; then
	record "not ok" "apt-cache finds the stock kernels to test"
	exit 1
fi

# First every module (so each kernel can be shown its partner flavour's
# module, built for another kernel, which it must refuse), then the boots.
rc=0 built=()
for krel in $kernels; do
	msg "stock: $krel: fetch"
	if ! dir=$(scripts/stock-kernel.sh fetch "$krel"); then
		record "not ok" "$krel: kernel and headers fetched (apt-get download)"
		rc=1; continue
	fi
	record ok "$krel: kernel and headers fetched"
	msg "stock: $krel: make module"
	rm -f "$dir/ktrace.ko"
	if ! make --no-print-directory module KVER="$krel" KDIR="$dir/build" \
		>"$dir/module-build.log" 2>&1; then
		record "not ok" "$krel: make module against linux-headers-$krel (log: $dir/module-build.log)"
		tail -n 20 "$dir/module-build.log" >&2
		rc=1; continue
	fi
	record ok "$krel: make module against linux-headers-$krel"
	cp build/module/ktrace-*/ktrace.ko "$dir/ktrace.ko"
	built+=("$krel")
done

for krel in "${built[@]}"; do
	kstart=$SECONDS
	dir=build/stock/$krel
	# the other flavour of the same kernel: 6.1.0-57-amd64 <-> 6.1.0-57-rt-amd64
	case $krel in
	*-rt-amd64) partner=${krel%-rt-amd64}-amd64 ;;
	*) partner=${krel%-amd64}-rt-amd64 ;;
	esac
	foreign=()
	if [ -f "build/stock/$partner/ktrace.ko" ]; then
		cp "build/stock/$partner/ktrace.ko" "$dir/ktrace-foreign.ko"
		echo "$partner" >"$dir/ktrace-foreign.txt"
		foreign=("$dir/ktrace-foreign.ko" "$dir/ktrace-foreign.txt")
	fi
	# the kernel's own configfs and null_blk modules: 20-kernel-counts
	# reads /dev/nullb0 (built into the patched test kernel)
	mods=()
	for m in fs/configfs/configfs drivers/block/null_blk/null_blk; do
		f=$(ls "$dir/lib/modules/$krel/kernel/$m.ko"* 2>/dev/null | head -n 1 || true)
		case $f in
		*.xz) xz -dc "$f" >"$dir/${m##*/}.ko" ;;
		*.ko) cp "$f" "$dir/${m##*/}.ko" ;;
		*) record "not ok" "$krel: the package has $m.ko"; continue ;;
		esac
		mods+=("$dir/${m##*/}.ko")
	done
	scripts/mkextra-initramfs.sh "$dir/initramfs.cpio" stock "$dir/ktrace.ko" \
		"${foreign[@]}" "${mods[@]}" tests/stock/run.sh
	# One TCG thread for the 4 vCPUs: under multi-threaded TCG the stock 6.12
	# kernels oopsed in about 1 boot of 3 on an int3 that no text_poke
	# claimed, while tracepoint and static keys were patched with the sites
	# running on other vCPUs (QEMU's cross-modifying code); with thread=single
	# 10 boots of both 6.12 kernels ran clean.
	VM_ACCEL=${VM_ACCEL:-tcg,thread=single} \
	KCONFIG=stock-$krel VM_KERNEL=$dir/boot/vmlinuz-$krel VM_INITRD=$dir/initramfs.cpio \
		VM_TESTS=$STOCK_TESTS VM_APPEND="kt_run=/stock/run.sh ${VM_APPEND:-}" \
		scripts/vmtest.sh || rc=1
	msg "stock: $krel done in $((SECONDS - kstart))s"
done
shopt -s nullglob
read -r pass fail < <(tap_counts build/results/stock.tap build/results/vm-stock-*.tap)
msg "stock kernels: $pass passed, $fail failed in $((SECONDS - start))s"
exit $rc
