#!/bin/bash
# ktrace: `make check`: dependencies, tools, host tests, then for each kernel
# of CHECK_CONFIGS (VERSION:KCONFIG, default "6.1:vm 6.12:vm 6.12:rt"; a bare KCONFIG
# means the newest version): the series' checkpatch, the kernel build, the
# in-VM tests, and once per version the kernel's UAPI header test, W=1 and
# sparse on kernel/ktrace; then the summary.  Each step says which kernel
# and which step it is, and the kernel build how many files it compiled so
# far.  A step that breaks (a build) is recorded as "not ok" in
# build/results/check.tap and the rest still runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

# Cold on 2 idle cores a vm kernel builds in about 6 minutes (6.1: 359 s,
# 1115 files; 6.12: 1222 files).  6.12:rt (PREEMPT_RT on the debug config:
# lockdep, KASAN, fault injection, lockdown) is the kernel real-time users
# trace, and the only default one that runs the debug-only in-VM tests;
# 6.1:debug is the same checks on 6.1, opt-in.
CHECK_CONFIGS=${CHECK_CONFIGS:-6.1:vm 6.12:vm 6.12:rt}
start=$SECONDS
rm -rf build/results
mkdir -p build/results

# step DESCRIPTION COMMAND...: run it, record ok / not ok
step() {
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what" >>build/results/check.tap
	else
		echo "not ok - $what" >>build/results/check.tap
		msg "FAILED: $what" >&2
		return 1
	fi
}

scripts/deps.sh
step "make tools" make --no-print-directory tools || true
step "host tests ran" scripts/run-host-tests.sh || true
newest=$(top=$PWD && . scripts/kver.sh && kver_all | tail -n 1)
kernels=()
for c in $CHECK_CONFIGS; do
	[[ $c == *:* ]] || c=$newest:$c
	kernels+=("$c")
done
# progress WHAT: "check: [12m34s] Linux 6.12 rt: WHAT"
progress() {
	local t=$((SECONDS - start))
	msg "check: [$((t / 60))m$((t % 60))s] $*"
}
declare -A seen=()
for c in "${kernels[@]}"; do
	v=${c%%:*} k=${c#*:}
	if [ -z "${seen[$v]:-}" ]; then
		progress "Linux $v: the series, checkpatch --strict"
		step "Linux $v: the series applies and is checkpatch --strict clean" \
			env KVER="$v" bash scripts/mkpatch.sh --check || true
	fi
	progress "Linux $v $k: kernel build and in-VM tests"
	# test failures land in build/results/vm-$v-$k-*.tap; only a run that
	# never got to boot the VM (build failure) is a step failure here
	if ! make --no-print-directory vmtest KVER="$v" KCONFIG="$k" &&
	   [ ! -f "build/results/vm-$v-$k-kernel.tap" ]; then
		step "make vmtest KVER=$v KCONFIG=$k: patch, kernel and initramfs built" false || true
	fi
	if [ -z "${seen[$v]:-}" ]; then
		seen[$v]=1
		progress "Linux $v: UAPI header test, W=1 and sparse on kernel/ktrace"
		KVER=$v KCONFIG=$k scripts/check-kbuild.sh >"build/results/kbuild-$v.tap" || true
		tap_verdict "build/results/kbuild-$v.tap" "kbuild-$v" 0
	fi
done
progress "Debian's own kernels with ktrace.ko (make check-stock)"
scripts/check-stock.sh || true	# Debian's kernels with ktrace.ko: build/results/vm-stock-*
progress "a stock-kernel guest sending to a host collector (make check-stock-net)"
scripts/check-stock-net.sh || true	# build/results/stock-net.tap, vm-stock-net-*
msg "check finished in $((SECONDS - start))s"
scripts/summarize.sh
