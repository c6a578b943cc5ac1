#!/bin/bash
# ktrace: run the host tests, tests/host/NN-name.sh, from the top of the
# repository; each one's output (stdout and stderr) goes to
# build/results/host-NAME.tap, plus a "not ok" line when it exits non-zero,
# prints no plan or is killed after HOST_TEST_TIMEOUT seconds (default 600).
# HOST_TESTS="40-ktrace-cli 50-dtrace-golden" runs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

tests=()
if [ -n "${HOST_TESTS:-}" ]; then
	for n in $HOST_TESTS; do
		n=${n##*/}
		[ -f "tests/host/${n%.sh}.sh" ] || die "HOST_TESTS: no test tests/host/${n%.sh}.sh"
		tests+=("tests/host/${n%.sh}.sh")
	done
else
	for t in tests/host/[0-9]*.sh; do
		[ ! -f "$t" ] || tests+=("$t")
	done
fi

mkdir -p build/results
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	out=build/results/host-$name.tap
	start=$SECONDS
	rc=0
	cmd=("$t")
	[ -x "$t" ] || cmd=(bash "$t")
	timeout -k 10 "${HOST_TEST_TIMEOUT:-600}" "${cmd[@]}" </dev/null >"$out" 2>&1 || rc=$?
	tap_verdict "$out" "$name" "$rc"
	read -r pass fail < <(tap_counts "$out")
	msg "host: $name: $pass ok, $fail not ok ($((SECONDS - start))s)"
done
