# SPDX-License-Identifier: GPL-2.0
# Sourced by the dtrace, trace file and merge host tests: builds what they
# run, gives them a scratch directory and the TAP helpers (tests/lib/tap.sh;
# a check's command writes its output to $TMP/check.out, shown on failure).

# O (tests/lib/tap.sh): the build directory, as for make (O=build/asan CFLAGS=...)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. "$ROOT/tests/lib/tap.sh"
DTRACE=$ROOT/$O/tools/dtrace
KTGEN=$ROOT/$O/tests/ktgen
MODEL=$ROOT/$O/tests/merge-model
FORMAT_TEST=$ROOT/$O/tests/dtrace-format-test
GOLDEN=$ROOT/tests/host/golden
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TZ=UTC LC_ALL=C
TAP_ERR=$TMP/check.out

# gen NAME ktgen-args...: trace files TMP/NAME/t.* from the generator
gen() {	# gen NAME ktgen-args...
	local name=$1
	shift
	mkdir -p "$TMP/$name" && "$KTGEN" "$@" "$TMP/$name/t" >/dev/null
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

if ! make -s O="$O" dtrace-test-tools >"$TMP/build.log" 2>&1; then
	ok 1 "build dtrace and its test tools" "$(tail -n 20 "$TMP/build.log")"
	done_testing
	exit 1
fi
