#!/bin/bash
# ktrace: `make check`: dependencies, tools, host tests, the in-VM tests on
# each kernel config in CHECK_CONFIGS (default "vm debug"), then the summary.  A
# step that breaks (a build) is recorded as "not ok" in
# build/results/check.tap and the rest still runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

CHECK_CONFIGS=${CHECK_CONFIGS:-vm debug}
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
for c in $CHECK_CONFIGS; do
	# test failures land in build/results/vm-$c-*.tap; only a run that
	# never got to boot the VM (build failure) is a step failure here
	if ! make --no-print-directory vmtest KCONFIG="$c" &&
	   [ ! -f "build/results/vm-$c-kernel.tap" ]; then
		step "make vmtest KCONFIG=$c: patch, kernel and initramfs built" false || true
	fi
done
scripts/check-stock.sh || true	# Debian's kernels with ktrace.ko: build/results/vm-stock-*
msg "check finished in $((SECONDS - start))s"
scripts/summarize.sh
