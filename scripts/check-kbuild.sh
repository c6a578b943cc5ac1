#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-kbuild.sh: the kernel's own checks of the ktrace files, on the Linux
# $KVER tree that `make kernel KVER=$KVER KCONFIG=$KCONFIG` built
# (build/kernel-$KVER-$KCONFIG, default vm):
#   - the UAPI header test (what CONFIG_UAPI_HEADER_TEST runs: each exported
#     header compiled alone with -std=c90, twice, and headers_check.pl);
#   - kernel/ktrace/ built with W=1 and checked by sparse (C=2), no warnings.
# Prints TAP; build/results/kbuild-$KVER.tap when run by `make check`.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
KCONFIG=${KCONFIG:-vm}
. "$top/scripts/kver.sh"
tree=$kver_tree
out=$kver_objdir
cc="gcc"
command -v ccache >/dev/null && cc="ccache gcc"
log=$out/check-kbuild.log

kmake() { make -C "$tree" O="$out" ARCH=x86_64 CC="$cc" "$@"; }
n=0
# result OK WHAT [DETAIL]: one TAP line; DETAIL (the warnings) as comments
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || sed 's/^/# /' <<<"$3"
	fi
}

if [ ! -f "$out/.config" ] || [ ! -f "$tree/Makefile" ]; then
	echo "1..0 # SKIP no configured Linux $KVER tree: make kernel KVER=$KVER KCONFIG=$KCONFIG first"
	exit 0
fi
echo "1..3"

# The header test of usr/include, for every exported header (about 1000):
# what CONFIG_UAPI_HEADER_TEST builds, turned on for this one make (usr/
# descends into include/ only with it) rather than in the test kernels'
# config.  Each header that passes gets a .hdrtest stamp.
status=0
{
	kmake headers &&
	kmake -j"$(nproc)" CONFIG_UAPI_HEADER_TEST=y usr/include/
} >"$log" 2>&1 || status=1
for h in ktrace ktrace_events; do
	[ -f "$out/usr/include/linux/$h.hdrtest" ] || status=1
done
result $status "Linux $KVER: the UAPI header test passes (ktrace.h, ktrace_events.h)" \
	"$(grep -E 'error|warning' "$log" | head -n 20)"

# W=1 and sparse on kernel/ktrace: rebuilt with the extra warnings, then
# once more without them, so the next `make kernel` finds them as it left them.
kmake -j"$(nproc)" W=1 kernel/ktrace/ >"$log" 2>&1 || true
warn=$(grep -E 'warning:|error:' "$log" || true)
[ -z "$warn" ] && [ -f "$out/kernel/ktrace/buffer.o" ]
result $? "Linux $KVER: kernel/ktrace builds with W=1 without warnings" "$warn"

if command -v sparse >/dev/null; then
	kmake C=2 kernel/ktrace/ >"$log" 2>&1 || true
	warn=$(grep -E '^[^ ]*kernel/ktrace/.*(warning|error):' "$log" || true)
	grep -q 'CHECK.*kernel/ktrace/buffer.c' "$log" && [ -z "$warn" ]
	result $? "Linux $KVER: sparse (C=2) finds nothing in kernel/ktrace" \
		"${warn:-$(tail -n 5 "$log")}"
else
	echo "ok 3 # SKIP sparse is not installed (apt-get install sparse)"
fi
kmake -j"$(nproc)" kernel/ktrace/ >/dev/null 2>&1 || true
