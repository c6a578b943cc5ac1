#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-stock-net.sh (make check-stock-net): ktrace --send from a guest on a
# stock Debian kernel with ktrace.ko, over QEMU's user network, to a
# `ktrace --listen` on this host.  The guest's virtio NIC driver and the
# modules it needs are the stock kernel's own (modinfo's depends, in load
# order, into the initramfs as /stock/net-NN-NAME.ko); tests/vm/89-collect-net.sh
# brings eth0 up and records 3 s of sched and syscall events to
# 10.0.2.2:PORT (machine "guest"), then a syscall storm in a buffer of 16
# records, losing some (machine "lossy").  Checked here: every CPU's events plus the lost markers'
# counts in the collector's files equal the records ktrace read plus the
# kernel's lost count, as ktrace printed them (collect-count.py --kernel),
# and dtrace reads the machine's directory.  STOCK_KERNEL: the kernel
# (default: the first of scripts/stock-kernel.sh names).  Results:
# build/results/stock-net.tap and build/results/vm-stock-net-KREL-*.tap.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

out=build/results/stock-net.tap
mkdir -p build/results
rm -f "$out"
rc=0
record() { echo "$1 - $2" >>"$out"; [ "$1" = ok ] || { msg "stock-net: $1 - $2" >&2; rc=1; }; }

krel=${STOCK_KERNEL:-$(scripts/stock-kernel.sh names | cut -d' ' -f1)}
make --no-print-directory tools initramfs >/dev/null
dir=$(scripts/stock-kernel.sh fetch "$krel") ||
	{ record "not ok" "$krel: kernel and headers fetched"; exit 1; }
if [ ! -f "$dir/ktrace.ko" ]; then
	make --no-print-directory module KVER="$krel" KDIR="$dir/build" >"$dir/module-build.log" 2>&1 ||
		{ record "not ok" "$krel: make module (log: $dir/module-build.log)"; exit 1; }
	cp build/module/ktrace-*/ktrace.ko "$dir/ktrace.ko"
fi

# The NIC's driver and its dependencies, dependencies first.
mods=$dir/lib/modules/$krel
rm -rf "$dir/net" && mkdir -p "$dir/net"
declare -A done_mod=()
n=0
add_module() {	# NAME: it after what it depends on, unless built in or added
	local name=$1 f dep
	[ -z "${done_mod[$name]:-}" ] || return 0
	done_mod[$name]=1
	grep -qE "/${name//[-_]/[-_]}\.ko$" "$mods/modules.builtin" && return 0
	f=$(find "$mods/kernel" -regextype egrep -regex ".*/${name//[-_]/[-_]}\.ko(\.xz)?" | head -n 1)
	[ -n "$f" ] || { record "not ok" "$krel: module $name in linux-image-$krel"; return 1; }
	case $f in
	*.xz) xz -dc "$f" >"$dir/net/tmp.ko" ;;
	*) cp "$f" "$dir/net/tmp.ko" ;;
	esac
	for dep in $(modinfo -F depends "$dir/net/tmp.ko" | tr ',' ' '); do
		add_module "$dep" || return 1
	done
	case $f in
	*.xz) xz -dc "$f" ;;
	*) cat "$f" ;;
	esac >"$dir/net/net-$(printf %02d $n)-$name.ko"
	n=$((n + 1))
}
add_module virtio_pci && add_module virtio_net || exit 1
rm -f "$dir/net/tmp.ko"
record ok "$krel: virtio_net and what it needs: $(ls "$dir/net" | sed 's/^net-[0-9]*-//; s/\.ko$//' | tr '\n' ' ')"
scripts/mkextra-initramfs.sh "$dir/initramfs-net.cpio" stock "$dir/ktrace.ko" \
	"$dir"/net/net-*.ko tests/stock/run.sh

# The collector: QEMU's user network takes the guest's 10.0.2.2:PORT to
# 127.0.0.1:PORT here, so the loopback (no --key, ktrace-remote.rst) will do.
rm -rf "$dir/collect"
build/tools/ktrace --listen 127.0.0.1:0 -o "$dir/collect" 2>"$dir/collect.err" &
cpid=$!
trap 'kill $cpid 2>/dev/null' EXIT
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*listening on .* port \([0-9]*\),.*/\1/p' "$dir/collect.err")
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { record "not ok" "the collector listens ($(cat "$dir/collect.err"))"; exit 1; }

VM_NET=user VM_ACCEL=${VM_ACCEL:-tcg,thread=single} KCONFIG=stock-net-$krel \
	VM_KERNEL=$dir/boot/vmlinuz-$krel VM_INITRD=$dir/initramfs-net.cpio VM_TESTS=89-collect-net \
	VM_APPEND="kt_run=/stock/run.sh kt_collect=$port ${VM_APPEND:-}" scripts/vmtest.sh || rc=1
kill -TERM $cpid; wait $cpid 2>/dev/null || true
trap - EXIT

tap=build/results/vm-stock-net-$krel-89-collect-net.tap
for m in guest lossy; do
	tag=$m; [ $m = guest ] && tag=count
	sed -n "s/^# $tag cpu \([0-9]*\): \([0-9]*\) records, \([0-9]*\) lost\$/\1 \2 \3/p" "$tap" \
		>"$dir/$m.stats" 2>/dev/null || true
	if [ -s "$dir/$m.stats" ] &&
	   python3 tests/host/collect-count.py "$dir/collect/$m" "$dir/$m.stats" --kernel \
		>"$dir/$m.count" 2>&1; then
		record ok "$krel $m: delivered plus counted lost equals the kernel's counts, per CPU: $(tr '\n' ';' <"$dir/$m.count")"
	else
		record "not ok" "$krel $m: delivered plus counted lost equals the kernel's counts: $(cat "$dir/$m.count" "$dir/$m.stats" 2>/dev/null | tr '\n' ';')"
	fi
done
if build/tools/dtrace -S "$dir/collect" >"$dir/net.S" 2>&1; then
	record ok "dtrace -S reads the guest's directory: $(grep -m1 '^events' "$dir/net.S")"
else
	record "not ok" "dtrace -S reads the guest's directory: $(head -n 3 "$dir/net.S")"
fi
cat "$out"
read -r pass fail < <(tap_counts "$out" build/results/vm-stock-net-"$krel"-*.tap)
msg "stock-net: $pass passed, $fail failed"
exit $rc
