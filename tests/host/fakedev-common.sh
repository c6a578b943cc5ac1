# SPDX-License-Identifier: GPL-2.0
# Sourced by the ktrace host tests that record on the fake device
# (ktrace-cli-fakedev.c, see 40-ktrace-cli.sh): builds it, gives a scratch
# directory T (the current directory), the TAP helpers (tests/lib/tap.sh; a
# failed check shows $T/err) and fk ARGS, which runs ktrace on the fake
# device with stdout in $T/out, stderr in $T/err, the exit status in $rc.
# KTRACE= tests another build of ktrace.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
KTRACE=${KTRACE:-$ROOT/$O/tools/ktrace}
T=$(mktemp -d /tmp/ktrace-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
TAP_ERR=$T/err
has_err() { grep -qF -- "$1" "$T/err"; }
has_out() { grep -qF -- "$1" "$T/out"; }
FAKE="$ROOT/$O/tests/ktrace-cli-fakedev.so"
fk_env() {
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" \
	    KTFAKE_STATE="$T/state" "$@"
}
# (under a timeout: a FIFO where a file goes would block an open for ever)
fk() { fk_env timeout -k 2 20 "$KTRACE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }

[ -x "$KTRACE" ] || skip_all "$KTRACE not built"
if ! make -s -C "$ROOT" O="$O" "$O/tests/ktrace-cli-fakedev.so" >"$T/err" 2>&1; then
	rc=1; check "build the fake device" false
	done_testing
	exit 1
fi
cd "$T" || exit 1
