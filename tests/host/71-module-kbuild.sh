#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# module/Kbuild refuses a kernel that has ktrace built in (CONFIG_KTRACE=y
# in its auto.conf, which kbuild reads before module/Kbuild): the module
# would bring a second /dev/ktrace and the same symbols.  Kbuild is read
# here as kbuild reads it, with and without that variable.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"

err=$(make -s -f "$ROOT/module/Kbuild" CONFIG_KTRACE=y KERNELRELEASE=6.1.0-patched 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q "ktrace.ko: this kernel (6.1.0-patched) has ktrace built in" <<<"$err"
ok $? "a CONFIG_KTRACE=y kernel: the module build stops and says why" "exit $rc: $err"
err=$(make -s -f "$ROOT/module/Kbuild" KERNELRELEASE=6.1.0-57-amd64 2>&1)
! grep -q "has ktrace built in" <<<"$err"
ok $? "a stock kernel (no CONFIG_KTRACE): no such refusal" "$err"
done_testing
