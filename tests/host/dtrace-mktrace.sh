# SPDX-License-Identifier: GPL-2.0
# Sourced by the dtrace host tests that write their trace files with
# mktrace.py, byte by byte as the test says (a comm with any bytes, a TSC
# rate of its own).  Scratch directory TMP (the current directory), the TAP
# helpers (tests/lib/tap.sh; a failed check shows err), and the codes of
# the events they use.  DTRACE= tests another build of dtrace.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
DTRACE=${DTRACE:-$ROOT/$O/tools/dtrace}
MKTRACE="python3 $ROOT/tests/host/mktrace.py"
TMP=$(mktemp -d /tmp/dtrace-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
TAP_ERR=$TMP/err
export LC_ALL=C
SWITCH=$(((1 << 0) | (1 << 24)))	# sched:switch
ENTRY=$(((1 << 12) | (1 << 24)))	# func:entry
EXIT=$(((1 << 12) | (2 << 24)))		# func:exit
USER1=$(((1 << 11) | (1 << 24)))	# user event 1

# dt ARGS: dtrace under a timeout (a FIFO would block it), out/err/rc
dt() { timeout -k 2 20 "$DTRACE" "$@" >out 2>err; rc=$?; }

[ -x "$DTRACE" ] || skip_all "$DTRACE not built"
