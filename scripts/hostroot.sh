#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hostroot.sh: the host's own programs inside a VM that boots a stock Debian
# kernel, for benches that compare ktrace with peers (perf, bpftrace, ...)
# built for the host: QEMU exports the host's / read-only over 9p
# (virtio), and the guest chroots into it, with its own /proc, /sys, /dev,
# tracefs, debugfs, bpffs and a tmpfs on /tmp and /run.  Nothing is
# copied: bpftrace alone pulls in LLVM (over 100 MiB of libraries).
#   scripts/hostroot.sh KREL KDIR OUT
# KDIR is the kernel's extracted package (scripts/stock-kernel.sh fetch):
# its 9p and virtio modules and their dependencies (modinfo's depends, decompressed)
# go into OUT, the test VM's initramfs plus /hostroot/; prints the QEMU
# arguments that export the root.  In the guest, kt_run=/hostroot/enter
# hostroot_run=PROGRAM (a path on the host, run by /bin/sh in the chroot,
# with the kernel command line's other NAME=VALUE words in its environment).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "ktrace: hostroot: $*" >&2; exit 1; }
[ $# -eq 3 ] || die "usage: $0 KREL KDIR OUT"
krel=$1 kdir=$2 out=$3
mods=$kdir/lib/modules/$krel/kernel
work=$out.d
rm -rf "$work"; mkdir -p "$work"

# modules in load order: each after what it depends on
order=()
want() {	# MODULE
	local f dep
	for m in "${order[@]}"; do [ "$m" = "$1" ] && return 0; done
	f=$(find "$mods" -name "$1.ko*" | head -n 1)
	[ -n "$f" ] || die "$krel has no module $1 (in $mods)"
	for dep in $(modinfo -F depends "$f" | tr , ' '); do want "$dep"; done
	case $f in
	*.xz) xz -dc "$f" >"$work/$1.ko" ;;
	*.zst) zstd -qdc "$f" >"$work/$1.ko" ;;
	*) cp "$f" "$work/$1.ko" ;;
	esac
	order+=("$1")
}
# virtio_pci is built in on 6.12, a module on 6.1
[ -z "$(find "$mods" -name 'virtio_pci.ko*')" ] || want virtio_pci
for m in 9pnet_virtio 9p; do want "$m"; done
echo "${order[*]}" >"$work/modules"

{
	echo "dir /hostroot 0755 0 0"
	echo "file /hostroot/enter $(pwd)/scripts/hostroot-enter.sh 0755 0 0"
	echo "file /hostroot/modules $work/modules 0644 0 0"
	for m in "${order[@]}"; do echo "file /hostroot/$m.ko $work/$m.ko 0644 0 0"; done
} >"$work/list"
build/vm/gen_init_cpio "$work/list" >"$work/extra.cpio"
cat build/vm/initramfs.cpio "$work/extra.cpio" >"$out"
rm -rf "$work"
echo "-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
