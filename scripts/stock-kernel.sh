#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stock-kernel.sh: fetch one of Debian's own kernels and its headers, unmodified,
# for the module's tests and bench/stock.sh.
#   scripts/stock-kernel.sh names              the four kernels: newest 6.1.0-N and
#                                              6.12.N+deb12, each -amd64 and -rt-amd64
#   scripts/stock-kernel.sh fetch KREL         download (apt-get download, cached in
#                                              build/stock/debs) and extract into
#                                              build/stock/KREL/: vmlinuz and the
#                                              headers tree, KREL/build for make module KDIR=
# Prints the directory on success; exits non-zero naming the package that
# could not be fetched otherwise.  Never installs anything on the host.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "ktrace: stock-kernel: $*" >&2; exit 1; }

newest() {
	apt-cache search --names-only "$1" | cut -d' ' -f1 | sort -V | tail -n 1
}

case ${1:-} in
names)
	k61=$(newest '^linux-image-6\.1\.0-[0-9]+-amd64$')
	k612=$(newest '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$')
	[ -n "$k61" ] || die "apt-cache finds no linux-image-6.1.0-*-amd64"
	[ -n "$k612" ] || die "apt-cache finds no linux-image-6.12.*+deb12-amd64-unsigned"
	k61=${k61#linux-image-}; k612=${k612#linux-image-}; k612=${k612%-unsigned}
	echo "$k61 ${k61%-amd64}-rt-amd64 $k612 ${k612%-amd64}-rt-amd64"
	;;
fetch)
	krel=${2:?usage: $0 fetch KREL}
	[[ $krel =~ ^6\.(1\.0-[0-9]+|12\.[0-9]+\+deb12)-(rt-)?amd64$ ]] ||
		die "$krel: not a Debian 6.1.0-N or 6.12.N+deb12 amd64 kernel release"
	out=build/stock/$krel debs=build/stock/debs
	if [ -f "$out/.done" ]; then echo "$out"; exit 0; fi
	flavour=amd64
	[[ $krel == *-rt-amd64 ]] && flavour=rt-amd64
	abi=${krel%-"$flavour"}
	case $krel in
	6.1.0-*)  image=linux-image-$krel kbuild=linux-kbuild-6.1 ;;
	*)        image=linux-image-$krel-unsigned kbuild=linux-kbuild-$abi ;;
	esac
	common=linux-headers-$abi-common
	[ "$flavour" = rt-amd64 ] && common+=-rt
	pkgs=("$image" "linux-headers-$krel" "$common" "$kbuild")
	mkdir -p "$debs"
	for p in "${pkgs[@]}"; do
		ver=$(apt-cache policy "$p" | sed -n 's/^ *Candidate: *//p')
		[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "package $p: not in the apt archive"
		f=$(ls "$debs/${p}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n 1 || true)
		if [ -z "$f" ]; then
			echo "ktrace: stock-kernel: downloading $p $ver" >&2
			(cd "$debs" && apt-get download -q "$p=$ver" >&2) ||
				die "package $p $ver: apt-get download failed"
		fi
	done
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	for p in "${pkgs[@]}"; do
		ver=$(apt-cache policy "$p" | sed -n 's/^ *Candidate: *//p')
		dpkg-deb -x "$(ls "$debs/${p}_${ver//:/%3a}_"*.deb | head -n 1)" "$out.tmp"
	done
	[ -f "$out.tmp/boot/vmlinuz-$krel" ] || die "$image has no boot/vmlinuz-$krel"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	# The headers' Makefile includes the common part by its absolute
	# /usr/src path: make it include the copy extracted here.
	hdr=$out/usr/src/linux-headers-$krel
	sed -i "s|^include /usr/src/|include $(pwd)/$out/usr/src/|" "$hdr/Makefile"
	ln -sfn "$(pwd)/$hdr" "$out/build"
	touch "$out/.done"
	echo "$out"
	;;
*)
	die "usage: $0 names | fetch KREL"
	;;
esac
