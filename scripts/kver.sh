# SPDX-License-Identifier: GPL-2.0
# ktrace: which Linux version a kernel script works on.  Sourced (not run) by
# mkpatch.sh, kernel.sh, check-series.sh, vmtest.sh, vmboot.sh and
# mkinitramfs.sh, with $top set to the checkout.  KVER (default: the newest
# kernel-patch/<version>/ directory) names the version; every version has its
# own tree, objects, patch and results, so 6.1 and 6.12 builds never mix:
#   kver_tarball   /usr/src/linux-source-$KVER.tar.xz (Debian's linux-source-$KVER)
#   kver_patch     build/patch/$KVER            (ktrace.patch, series/)
#   kver_tree      build/linux-$KVER            (the patched source tree)
#   kver_objdir    build/kernel-$KVER-$KCONFIG  (the object tree, bzImage)

# The versions the series supports, oldest first.
kver_all() {
	local d
	for d in "$top"/kernel-patch/[0-9]*/; do
		d=${d%/}
		echo "${d##*/}"
	done | sort -V
}

KVER=${KVER:-$(kver_all | tail -n 1)}
if [ ! -d "$top/kernel-patch/$KVER" ]; then
	echo "ktrace: KVER=$KVER: no kernel-patch/$KVER/ (versions:" $(kver_all)")" >&2
	exit 1
fi
kver_tarball=${KERNEL_TARBALL:-/usr/src/linux-source-$KVER.tar.xz}
kver_patch=$top/build/patch/$KVER
kver_tree=$top/build/linux-$KVER
kver_objdir=$top/build/kernel-$KVER-${KCONFIG:-vm}
