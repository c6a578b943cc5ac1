#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace: /hostroot/enter in a VM (scripts/hostroot.sh): load the 9p
# modules, mount the host's / (read-only, 9p tag hostroot) on /host with
# the guest's own kernel file systems over it, and run $hostroot_run there
# (chroot), or a shell without it.
for m in $(cat /hostroot/modules); do
	insmod /hostroot/$m.ko || { echo "hostroot: insmod $m.ko failed"; exit 1; }
done
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /host ||
	{ echo "hostroot: cannot mount the host's / (9p tag hostroot)"; exit 1; }
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
ln -sf /proc/self/fd /host/dev/fd	# bash's <(...)
mount -t tracefs tracefs /host/sys/kernel/tracing
mount -t debugfs debugfs /host/sys/kernel/debug
mount -t bpf bpf /host/sys/fs/bpf
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run
if [ -n "${hostroot_run:-}" ]; then
	chroot /host /bin/sh -c "$hostroot_run"
else
	chroot /host /bin/bash -l
fi
