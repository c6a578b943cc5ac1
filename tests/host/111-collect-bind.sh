#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace --listen PORT without --key binds the loopback only (issue 31): in
# a network namespace of its own with an address of 10.79.0.1 besides lo, a
# connect to 10.79.0.1:PORT is refused and one to 127.0.0.1:PORT is taken;
# with --key, or with an address given, PORT is reached from outside.
# Ground truth: connect() from inside the namespace, and ss's view of the
# listening socket's address.
. "$(dirname "$0")/collect-common.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (ip netns)"
command -v ip >/dev/null || skip_all "needs ip (iproute2)"
NS=kt111-$$
cleanup() { ip netns del "$NS" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
ip netns add "$NS" && ip -n "$NS" link set lo up &&
ip -n "$NS" link add "va$$" type veth peer name "vb$$" &&
ip -n "$NS" addr add 10.79.0.1/24 dev "va$$" &&
ip -n "$NS" link set "va$$" up && ip -n "$NS" link set "vb$$" up
ok $? "a network namespace with 10.79.0.1 besides lo"
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$T/key")

# reach ADDR PORT: "taken" or "refused", from inside the namespace
reach() {
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(); s.settimeout(3)
try:
    s.connect((sys.argv[1], int(sys.argv[2]))); print("taken")
except OSError:
    print("refused")' "$1" "$2"
}
# listen ARGS...: a collector in the namespace; $CPORT, $CPID
listen() {
	: >"$T/coll.err"
	ip netns exec "$NS" "$KTRACE" --listen "$@" -o "$T/coll" 2>>"$T/coll.err" &
	CPID=$!
	collector_wait
}
bound() { ip netns exec "$NS" ss -Hltn "sport = :$CPORT" | awk '{ print $4 }'; }

listen 0
check "--listen 0 listens" '[ -n "$CPORT" ]'
check "--listen 0: the socket is bound to 127.0.0.1 ($(bound))" '[ "$(bound)" = "127.0.0.1:$CPORT" ]'
check "--listen 0: a connect to 10.79.0.1 is refused" '[ "$(reach 10.79.0.1 "$CPORT")" = refused ]'
check "--listen 0: a connect to 127.0.0.1 is taken" '[ "$(reach 127.0.0.1 "$CPORT")" = taken ]'
check "--listen 0 says where it listens" 'grep -q "listening on 127.0.0.1 port" "$T/coll.err"'
collector_stop

listen 0 --key "$T/key"
check "--listen 0 --key: a connect to 10.79.0.1 is taken" '[ "$(reach 10.79.0.1 "$CPORT")" = taken ]'
collector_stop

listen 10.79.0.1:0
check "--listen 10.79.0.1:0: a connect to 10.79.0.1 is taken" \
	'[ "$(reach 10.79.0.1 "$CPORT")" = taken ]'
check "... and it warns that without a key anyone there may send as any machine" \
	'grep -q "no --key: whoever reaches 10.79.0.1 may send as any machine" "$T/coll.err"'
collector_stop

"$KTRACE" --help >"$T/out" 2>&1
check "--help says PORT alone binds the loopback unless --key" 'has_out "binds 127.0.0.1 only, unless --key"'

done_testing
