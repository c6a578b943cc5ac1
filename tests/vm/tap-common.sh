# SPDX-License-Identifier: GPL-2.0
# Sourced by the in-VM shell tests that drive ktrace and dtrace: TAP
# helpers, the tools ($KTRACE, $DTRACE), a scratch directory $T removed at
# exit, and a skip when the kernel has no /dev/ktrace.  NAME names $T.
KTRACE=${KTRACE:-ktrace}
DTRACE=${DTRACE:-dtrace}
T=${TMPDIR:-/tmp}/ktrace-$NAME.$$
mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT

n=0
ok()  { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); echo "not ok $n - $1"
	echo "#   exit ${rc:-?}; stderr:"; sed 's/^/#     /' "$T/err" 2>/dev/null | head -20
}
# check DESC CONDITION: CONDITION is shell code, evaluated; false on failure
check() { if eval "$2"; then ok "$1"; else nok "$1"; return 1; fi; }
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

if [ ! -e "${KTRACE_DEV:-/dev/ktrace}" ]; then
	echo "1..0 # SKIP no /dev/ktrace"
	exit 0
fi
