# SPDX-License-Identifier: GPL-2.0
# Sourced by the in-VM shell tests that drive ktrace and dtrace: the TAP
# helpers (/tests/lib/tap.sh, from tests/lib/tap.sh; a failed check shows
# $T/err), the tools ($KTRACE, $DTRACE), a scratch directory $T removed at
# exit, and a skip when the kernel has no /dev/ktrace.  NAME names $T.
. "$(dirname "$0")/lib/tap.sh"
KTRACE=${KTRACE:-ktrace}
DTRACE=${DTRACE:-dtrace}
T=${TMPDIR:-/tmp}/ktrace-$NAME.$$
mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
TAP_ERR=$T/err

# wait_for FILE ERE: up to 20 s for a line of FILE to match
wait_for() {
	i=0
	while ! grep -qE -- "$2" "$1" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.1; i=$((i + 1))
	done
	grep -qE -- "$2" "$1"
}
# marks FILE: the user:mark numbers dtrace prints for FILE, one a line
marks() { sed -n 's/.*user mark \([0-9][0-9]*\) .*/\1/p' "$1"; }

[ -e "${KTRACE_DEV:-/dev/ktrace}" ] || skip_all "no /dev/ktrace"
