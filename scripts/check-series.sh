#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-series.sh: prove that every patch of the series builds on its own.
#
# Applies build/patch/$KVER/series/*.patch (KVER default the newest) one at
# a time to a pristine tree in build/check-series/linux-$KVER and builds the
# vm kernel configuration after each, so
# a patch that only builds together with a later one is caught.  The tree
# and its object directory are kept, so each step is incremental.  Not
# part of `make check`: it takes about 20 minutes on 2 CPUs (13 for the
# first patch, which builds the whole kernel, half a minute for each one
# after it).  `make check-series` before sending the series.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/kver.sh"
tarball=${KTRACE_KERNEL_TARBALL:-$kver_tarball}
# the same names, relative to each other, as make kernel's tree and objects,
# so ccache (CCACHE_BASEDIR) finds what make kernel compiled
tree=$top/build/check-series/linux-$KVER
out=$top/build/check-series/kernel-$KVER-vm
export CCACHE_BASEDIR=$top
cc="ccache gcc"
command -v ccache >/dev/null || cc=gcc

msg() { echo "check-series: Linux $KVER: $*"; }
die() { echo "check-series: $*" >&2; exit 1; }

bash "$top/scripts/mkpatch.sh" >/dev/null
patches=("$kver_patch"/series/*.patch)
[ -e "${patches[0]}" ] || die "no patches in ${kver_patch#"$top"/}/series"

rm -rf "$tree"
mkdir -p "$tree" "$out"
msg "extracting a pristine tree"
tar -xJf "$tarball" -C "$tree" --strip-components=1
kmake() { make -C "$tree" O="$out" ARCH=x86_64 CC="$cc" "$@"; }

nr=0
for p in "${patches[@]}"; do
	nr=$((nr + 1))
	name=${p##*/}
	patch -d "$tree" -p1 -s -f <"$p" || die "$name does not apply"
	{
		kmake tinyconfig
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
			"$top/scripts/kconfig/vm.config"
		kmake olddefconfig
	} >"$out/config.log" 2>&1 || die "$name: configuration failed (see $out/config.log)"
	start=$SECONDS
	if ! kmake -j"$(nproc)" bzImage >"$out/build.log" 2>&1; then
		tail -n 30 "$out/build.log" >&2
		die "$name: the kernel does not build with the series up to here"
	fi
	if grep -E '(warning|error):' "$out/build.log" | grep -v '^scripts/' >"$out/warnings.log"; then
		cat "$out/warnings.log" >&2
		die "$name: new compiler warnings"
	fi
	msg "$nr/${#patches[@]} $name: builds ($((SECONDS - start))s)"
done
msg "every patch of the series builds on its own"
