#!/bin/bash
# ktrace: the test VM's initramfs, build/vm/initramfs.cpio (newc, root-owned,
# built by the kernel's gen_init_cpio so no root or mknod is needed):
#   /init                 tests/vm/init
#   /bin/busybox + applet links, /bin/ktrace and /bin/dtrace (static) if built
#   /tests/               tests/vm/*.sh and the static programs of tests/vm/*.c
#   /tests/lib/tap.sh     tests/lib/tap.sh, the TAP helpers the shell tests source
#   /tests/data/          build/vm/data (tests/probe/vm-debsrc.sh's programs and truth)
set -euo pipefail
cd "$(dirname "$0")/.."

vm=build/vm
top=$PWD
. scripts/kver.sh
gen=$vm/gen_init_cpio
busybox=${BUSYBOX:-/bin/busybox}
die() { echo "ktrace: $*" >&2; exit 1; }

mkdir -p "$vm"
if [ ! -x "$gen" ]; then
	src=$kver_tree/usr/gen_init_cpio.c
	if [ ! -f "$src" ]; then
		tar -xJf "$kver_tarball" -C "$vm" --strip-components=2 \
			"linux-source-$KVER/usr/gen_init_cpio.c"
		src=$vm/gen_init_cpio.c
	fi
	gcc -O2 -o "$gen" "$src"
fi
file "$busybox" | grep -q 'statically linked' ||
	die "$busybox is not static (apt-get install busybox-static)"

printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
	'nobody:x:65534:65534:nobody:/nonexistent:/bin/sh' >"$vm/passwd"
printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$vm/group"

list=$vm/initramfs.list
{
	for d in /bin /sbin /usr /usr/bin /usr/sbin /dev /proc /sys /tmp /root \
		 /etc /tests /tests/lib /mnt; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /init tests/vm/init 0755 0 0"
	echo "file /etc/passwd $vm/passwd 0644 0 0"
	echo "file /etc/group $vm/group 0644 0 0"
	echo "file /bin/busybox $busybox 0755 0 0"
	"$busybox" --list-full | while read -r applet; do
		[ "$applet" = bin/busybox ] || echo "slink /$applet /bin/busybox 0777 0 0"
	done
	echo "file /tests/lib/tap.sh tests/lib/tap.sh 0644 0 0"
	shopt -s nullglob
	for t in tests/vm/*.sh "$vm"/tests/*; do
		echo "file /tests/${t##*/} $t 0755 0 0"
	done
	# data the tests read (tests/probe/vm-debsrc.sh: /tests/data/probe-debsrc)
	if [ -d "$vm/data" ]; then
		echo "dir /tests/data 0755 0 0"
		(cd "$vm/data" && find . -mindepth 1 -type d | sort) | while read -r d; do
			echo "dir /tests/data/${d#./} 0755 0 0"
		done
		(cd "$vm/data" && find . -type f | sort) | while read -r f; do
			mode=0644
			[ -x "$vm/data/$f" ] && mode=0755
			echo "file /tests/data/${f#./} $vm/data/${f#./} $mode 0 0"
		done
	fi
	for t in build/tools/static/*; do
		if [ -x "$t" ]; then echo "file /bin/${t##*/} $t 0755 0 0"; fi
	done
} >"$list"
"$gen" "$list" >"$vm/initramfs.cpio.tmp"
mv "$vm/initramfs.cpio.tmp" "$vm/initramfs.cpio"
