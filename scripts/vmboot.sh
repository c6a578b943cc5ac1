#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vmboot.sh: boot a ktrace test kernel under QEMU and run one program in it.
#   scripts/vmboot.sh KCONFIG INITRD PROGRAM LOG [KERNEL-ARGS...]
# Boots build/kernel-$KVER-KCONFIG (KVER default the newest) with INITRD (4 vCPUs, TCG), where /init runs
# PROGRAM (kt_run=) instead of the tests, and writes the console to LOG.
# scripts/mkextra-initramfs.sh adds the program's files to an initramfs.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 4 ] || { echo "usage: $0 KCONFIG INITRD PROGRAM LOG [KERNEL-ARGS...]" >&2; exit 2; }
kconfig=$1 initrd=$2 program=$3 log=$4
shift 4
top=$PWD
KCONFIG=$kconfig . scripts/kver.sh
kernel=${kver_objdir#"$top"/}/arch/x86/boot/bzImage
[ -f "$kernel" ] || { echo "ktrace: no $kernel: run make kernel KVER=$KVER KCONFIG=$kconfig" >&2; exit 1; }

timeout "${VM_TIMEOUT:-900}" qemu-system-x86_64 -accel "${VM_ACCEL:-tcg}" -smp 4 \
	-m "${VM_MEM:-512}" -nographic -no-reboot -net none -kernel "$kernel" \
	-initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=3 nokaslr kt_run=$program $*" \
	</dev/null >"$log" 2>&1
