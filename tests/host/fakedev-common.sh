# SPDX-License-Identifier: GPL-2.0
# Sourced by the ktrace host tests that record on the fake device
# (ktrace-cli-fakedev.c, see 40-ktrace-cli.sh): builds it, gives a scratch
# directory T (the current directory), TAP helpers and fk ARGS, which runs
# ktrace on the fake device with stdout in $T/out, stderr in $T/err, the
# exit status in $rc.  KTRACE= tests another build of ktrace.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KTRACE=${KTRACE:-$ROOT/build/tools/ktrace}
T=$(mktemp -d /tmp/ktrace-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
ok()  { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); echo "not ok $n - $1"
	echo "#   exit $rc; stderr:"; sed 's/^/#     /' "$T/err"
}
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
has_err() { grep -qF -- "$1" "$T/err"; }
has_out() { grep -qF -- "$1" "$T/out"; }
FAKE="$ROOT/build/tests/ktrace-cli-fakedev.so"
fk_env() {
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" \
	    KTFAKE_STATE="$T/state" "$@"
}
# (under a timeout: a FIFO where a file goes would block an open for ever)
fk() { fk_env timeout -k 2 20 "$KTRACE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }

if [ ! -x "$KTRACE" ]; then
	echo "1..0 # SKIP $KTRACE not built"
	exit 0
fi
if ! make -s -C "$ROOT" build/tests/ktrace-cli-fakedev.so >"$T/err" 2>&1; then
	rc=1; nok "build the fake device"
	echo "1..$n"
	exit 1
fi
cd "$T" || exit 1
