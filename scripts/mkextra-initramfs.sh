#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkextra-initramfs.sh: the test VM's initramfs plus some files of our own.
#   scripts/mkextra-initramfs.sh OUT DIR FILE...
# Writes OUT: build/vm/initramfs.cpio (make initramfs) followed by a second
# cpio archive holding each FILE as /DIR/NAME (executable); the kernel
# unpacks both.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 3 ] || { echo "usage: $0 OUT DIR FILE..." >&2; exit 2; }
out=$1 dir=$2
shift 2
list=$out.list
{
	path=
	IFS=/ read -ra parts <<<"$dir"
	for part in "${parts[@]}"; do
		path+=/$part
		echo "dir $path 0755 0 0"
	done
	for f in "$@"; do
		echo "file /$dir/${f##*/} $f 0755 0 0"
	done
} >"$list"
build/vm/gen_init_cpio "$list" >"$out.extra"
cat build/vm/initramfs.cpio "$out.extra" >"$out"
rm -f "$out.extra" "$list"
