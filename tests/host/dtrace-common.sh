# SPDX-License-Identifier: GPL-2.0
# Sourced by the dtrace, trace file and merge host tests: builds what they
# run, gives them a scratch directory and TAP helpers.

# O: the build directory, as for make (O=build/asan CFLAGS=-fsanitize=...)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
O=${O:-build}
DTRACE=$ROOT/$O/tools/dtrace
KTGEN=$ROOT/$O/tests/ktgen
MODEL=$ROOT/$O/tests/merge-model
FORMAT_TEST=$ROOT/$O/tests/dtrace-format-test
GOLDEN=$ROOT/tests/host/golden
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TZ=UTC LC_ALL=C

tap_n=0
tap_failed=0

# ok STATUS DESCRIPTION [DIAGNOSTIC]: one TAP line, from an exit status.
# gen NAME ktgen-args...: trace files TMP/NAME/t.* from the generator
gen() {	# gen NAME ktgen-args...
	local name=$1
	shift
	mkdir -p "$TMP/$name" && "$KTGEN" "$@" "$TMP/$name/t" >/dev/null
}

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
		[ -n "$3" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
	return 0
}

# check DESCRIPTION COMMAND...: ok if the command succeeds.
check() {
	local desc=$1
	shift
	"$@" >"$TMP/check.out" 2>&1
	ok $? "$desc" "$(head -c 600 "$TMP/check.out")"
}

# expect_error DESCRIPTION TEXT COMMAND...: ok if the command fails and
# its standard error contains TEXT.
expect_error() {
	local desc=$1 text=$2 rc
	shift 2
	"$@" >"$TMP/err.out" 2>"$TMP/err.txt"
	rc=$?
	[ $rc -ne 0 ] && grep -qF -- "$text" "$TMP/err.txt"
	ok $? "$desc" "exit $rc, wanted '$text' in: $(head -c 400 "$TMP/err.txt")"
}

done_testing() {
	echo "1..$tap_n"
	[ $tap_failed -eq 0 ]
}

if ! make -s O="$O" dtrace-test-tools >"$TMP/build.log" 2>&1; then
	ok 1 "build dtrace and its test tools" "$(tail -n 20 "$TMP/build.log")"
	done_testing
	exit 1
fi
