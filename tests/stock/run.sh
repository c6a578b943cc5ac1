#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace: what /init runs (kt_run=/stock/run.sh) in a VM booting a stock
# Debian kernel: load /stock/ktrace.ko, built against that kernel's headers,
# as its own TAP test (00-module-load), then the in-VM tests and the kernel
# log exactly as /init's test branch does.
. /tests/lib/tap.sh	# tests/lib/tap.sh, in the test VM's initramfs

echo "<6>ktrace-vm: test 00-module-load" >/dev/kmsg
echo "@@TAP-BEGIN 00-module-load@@"
echo "# kernel $(uname -r) $(uname -v)"
# The module built for the other flavour of this kernel (check-stock.sh):
# the kernel must refuse it and say why in its log, before ours loads.
if [ -f /stock/ktrace-foreign.ko ]; then
	other=$(cat /stock/ktrace-foreign.txt)
	if insmod /stock/ktrace-foreign.ko 2>/tmp/insmod.err; then
		ok 1 "ktrace.ko built for $other is refused on $(uname -r)"
		rmmod ktrace
	else
		ok 0 "ktrace.ko built for $other is refused on $(uname -r)"
	fi
	why=$(dmesg | grep -E 'ktrace: (version magic|disagrees|module built for)' | tail -n 1)
	if [ -n "$why" ]; then
		ok 0 "the kernel log says why: ${why#*] }"
	else
		ok 1 "the kernel log says why it refused the foreign module" "$(dmesg | tail -n 5)"
	fi
fi
insmod /stock/ktrace.ko 2>/tmp/insmod.err
ok $? "insmod ktrace.ko on $(uname -r)" "$(cat /tmp/insmod.err; dmesg | tail -n 5)"
check "/dev/ktrace exists" '[ -c /dev/ktrace ]'
# The kernel's own null_blk (/dev/nullb0, for 20-kernel-counts).
for m in configfs null_blk; do
	[ -f /stock/$m.ko ] && insmod /stock/$m.ko
done
[ ! -f /stock/null_blk.ko ] || check "null_blk loaded" '[ -b /dev/nullb0 ]'
done_testing
echo "@@TAP-END 00-module-load rc=0@@"

/tests/run-vm.sh
echo "@@DMESG-BEGIN@@"
dmesg
echo "@@DMESG-END@@"
echo "@@VM-DONE@@ uptime=$(cut -d' ' -f1 /proc/uptime)s"
