#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace --listen --key: only a sender holding a machine's key sends as it
# (issue 31).  A real sender ("a", through a proxy that records the wire)
# is cut off mid-recording; meanwhile forgers send as "a": a HELLO in
# clear, an AUTH with a made-up proof, a sender with another key, one
# without a key, and the recorded handshake replayed.  Ground truth: the
# fake device's counts against a's files (collect-count.py) once a is back
# (every record there, once, in order: nothing moved to .previous, its
# stream state untouched), the collector's answer to each forger (REFUSE,
# then closed), each refused sender's exit status, message and spool, and
# the recorded bytes: no trace header (its magic, "KTRACE\r\n") in them,
# while the same recording without a key shows it.  A key directory binds
# each name to its own key.
. "$(dirname "$0")/collect-common.sh"

FORGE="$ROOT/tests/host/ktnet-forge.py"
PROXY="$ROOT/tests/host/tcp-proxy.py"
newkey() { (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$1"); }
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# proxy PORT DUMP: tcp-proxy.py to the collector, recording into DUMP.N.*
proxy() {
	python3 "$PROXY" "$1" "$CPORT" "$2" >"$T/proxy.out" 2>&1 &
	PPID_=$!
	for _ in $(seq 100); do grep -q ready "$T/proxy.out" 2>/dev/null && break; sleep 0.05; done
}
# as DEV MACHINE ARGS...: ktrace --send as MACHINE on fake device DEV for
# a second (--send-wait 2); its exit status in $T/DEV.rc.  In the background
# with &: wait, then read the .rc.
as() {
	local dev=$1 name=$2
	shift 2
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/$dev.dev" KTRACE_DEV="$T/$dev.dev" \
	    KTFAKE_STATE="$T/$dev.state" KTFAKE_RATE=20000 \
	    timeout -k 2 60 "$KTRACE" --name "$name" "$@" -e sched -d 1 --send-wait 2 \
	    >/dev/null 2>"$T/$dev.err"
	echo $? >"$T/$dev.rc"
}
rc_of() { cat "$T/$1.rc"; }

newkey "$T/k1"
newkey "$T/k2"
cp "$T/k1" "$T/kopen" && chmod 644 "$T/kopen"

# --- a key others may read is refused, on both sides
timeout 10 "$KTRACE" --listen 127.0.0.1:0 --key "$T/kopen" -o "$T/x" 2>"$T/err"
check "--listen --key of mode 0644: refused, naming it and its mode" \
	'[ $? -ne 0 ] && has_err "--key $T/kopen: mode 0644"'
as open a --send 127.0.0.1:1 --key "$T/kopen"
check "--send --key of mode 0644: refused, naming it and its mode" \
	'[ "$(rc_of open)" -ne 0 ] && grep -qF -- "--key $T/kopen: mode 0644" "$T/open.err"'

# --- the collector with key k1; a sends through a proxy that records the wire
: >"$T/coll.err"
"$KTRACE" --listen 127.0.0.1:0 --key "$T/k1" -o "$T/coll" 2>>"$T/coll.err" &
CPID=$!
collector_wait
ok $? "the collector with --key listens" "$(cat "$T/coll.err")"
pport=$(free_port)
proxy "$pport" "$T/wire"
KTFAKE_RATE=20000 sender a --send "127.0.0.1:$pport" --key "$T/k1" --spool "$T/spa" \
	-e sched -d 5 --send-wait 30
pa=$SPID
sleep 1.2
# forged while the real sender is connected
python3 "$FORGE" "$CPORT" "$T/coll/a/trace.cpu0" hello:a auth:a >"$T/forge1" 2>&1
kill -KILL $PPID_; wait $PPID_ 2>/dev/null	# the outage
sleep 0.5
# ... and while it is away
python3 "$FORGE" "$CPORT" "$T/coll/a/trace.cpu0" hello:a auth:a replay:"$T/wire.1.c2s" \
	>"$T/forge2" 2>&1
as wrong a --send "127.0.0.1:$CPORT" --key "$T/k2" --spool "$T/spw" &
p1=$!
as nokey a --send "127.0.0.1:$CPORT" --spool "$T/spn" &
wait $! $p1
rc_wrong=$(rc_of wrong) rc_nokey=$(rc_of nokey)
proxy "$pport" "$T/wire2"
wait $pa
TAP_ERR=$T/a.err check "the real sender exits 0 after the outage and the forgeries" '[ $? -eq 0 ]'
kill $PPID_; wait $PPID_ 2>/dev/null
counts a
ok $? "a: every record delivered or counted, once, in order" "$(cat "$T/a.count")"
check "nothing of a moved to .previous" '[ ! -e "$T/coll/.previous" ]'
check "a's trace is one recording (no new one started)" '! grep -q "a new recording" "$T/coll.err"'
check "a came back (its second connection)" '[ -s "$T/wire2.1.c2s" ]'

check "a HELLO in clear as a (a connected): refused (key wanted), closed" \
	'grep -q "^hello:a .* 13:1 closed$" "$T/forge1"'
check "AUTH as a with a made-up proof (a connected): challenged, refused, closed" \
	'grep -q "^auth:a .* 11,13:4 closed$" "$T/forge1"'
check "a HELLO in clear as a (a away): refused, closed" \
	'grep -q "^hello:a .* 13:1 closed$" "$T/forge2"'
check "AUTH as a with a made-up proof (a away): refused, closed" \
	'grep -q "^auth:a .* 11,13:4 closed$" "$T/forge2"'
check "a's recorded handshake replayed: a new challenge, the old proof refused, closed" \
	'grep -q "^replay:[^ ]* .* 11,13:4 closed$" "$T/forge2"'
for f in forge1 forge2; do
	while read -r _ peer _; do
		grep -F "$peer" "$T/coll.err" | grep -qv "refused\|closed" &&
			echo "$peer: $(grep -F "$peer" "$T/coll.err")"
	done <"$T/$f"
done >"$T/forged.said"
check "the collector says only refusals of the forgers' connections" '[ ! -s "$T/forged.said" ]'
check "the collector says why it refused each" \
	'grep -q "a HELLO without a key" "$T/coll.err" &&
	 grep -q "the proof is not of its key" "$T/coll.err"'

check "a sender with another key: exits non-zero" '[ $rc_wrong -ne 0 ]'
TAP_ERR=$T/wrong.err check "... saying (once) the collector does not prove its key" \
	'[ "$(grep -c "does not prove our key" "$T/wrong.err")" = 1 ]'
TAP_ERR=$T/wrong.err check "... its frames kept in its spool" \
	'grep -q "stay in $T/spw" "$T/wrong.err" && [ -s "$T/spw/hello" ] &&
	 [ "$(cat "$T"/spw/spool.* | wc -c)" -gt 1000 ]'
check "a sender without a key: exits non-zero" '[ $rc_nokey -ne 0 ]'
TAP_ERR=$T/nokey.err check "... saying the collector wants a key" \
	'grep -q "the collector wants a key" "$T/nokey.err" && [ -s "$T/spn/hello" ]'

# --- sealed: a header, magic of every trace file and in every HELLO, is not on the wire
python3 - "$T/wire.1.c2s" >"$T/wire.check" <<'EOF'
import sys
b = open(sys.argv[1], 'rb').read()
print(len(b), b.count(b'KTN\x01'), b.count(b'KTRACE\r\n'), b.count(b'.kallsyms'))
EOF
read -r wbytes wmsgs wmagic wks <"$T/wire.check"
check "the wire was recorded (${wbytes:-0} bytes, ${wmsgs:-0} messages)" \
	'[ "${wbytes:-0}" -gt 10000 ] && [ "${wmsgs:-0}" -gt 10 ]'
check "sealed: no trace header nor a FILE's name in clear on the wire" \
	'[ "$wmagic" = 0 ] && [ "$wks" = 0 ]'

# --- a sealed message sent twice on the path (the 12th of the connection)
TCP_PROXY_DUP=12 proxy "$pport" "$T/dup"
KTFAKE_RATE=20000 sender r --send "127.0.0.1:$pport" --key "$T/k1" -e sched -d 2 --send-wait 30
wait $SPID
TAP_ERR=$T/r.err check "a message replayed on the path: the sender still exits 0" '[ $? -eq 0 ]'
check "... the collector closed that connection, saying why" \
	'grep -q "r: a sealed message that does not authenticate (altered, sent again or out of order): closed" "$T/coll.err"'
check "... and the sender came back on another" '[ -s "$T/dup.2.c2s" ]'
counts r
ok $? "r: every record delivered or counted, once, in order (nothing twice)" "$(cat "$T/r.count")"
kill $PPID_; wait $PPID_ 2>/dev/null
collector_stop

# the same without a key: the check above sees what travels in clear
collector_start
proxy "$pport" "$T/plain"
KTFAKE_RATE=20000 sender p --send "127.0.0.1:$pport" -e sched -d 1
wait $SPID
python3 -c 'import sys; print(open(sys.argv[1], "rb").read().count(b"KTRACE\r\n"))' \
	"$T/plain.1.c2s" >"$T/plain.check" 2>&1
check "without a key the wire carries the header in clear (the check can fail)" \
	'[ "$(cat "$T/plain.check")" -ge 1 ]'
kill $PPID_; wait $PPID_ 2>/dev/null
as keyed k --send "127.0.0.1:$CPORT" --key "$T/k1"
check "a sender with a key, to a collector without one: exits non-zero, saying so" \
	'[ "$(rc_of keyed)" -ne 0 ] && grep -q "the collector has no key" "$T/keyed.err"'
collector_stop

# --- a key directory: NAME.key a machine; a name is bound to its own key
mkdir -m 700 "$T/keys"
cp "$T/k1" "$T/keys/m1.key"
cp "$T/k2" "$T/keys/m2.key"
: >"$T/coll.err"
"$KTRACE" --listen 127.0.0.1:0 --key "$T/keys" -o "$T/dcoll" 2>>"$T/coll.err" &
CPID=$!
collector_wait
as m1 m1 --send "127.0.0.1:$CPORT" --key "$T/k1" &
p1=$!
as m2 m2 --send "127.0.0.1:$CPORT" --key "$T/k1" &
p2=$!
as m3 m3 --send "127.0.0.1:$CPORT" --key "$T/k1" &
wait $! $p1 $p2
TAP_ERR=$T/m1.err check "--key DIR: m1 with m1.key delivers" \
	'[ "$(rc_of m1)" -eq 0 ] && [ -d "$T/dcoll/m1" ]'
check "--key DIR: m1's key does not send as m2" \
	'[ "$(rc_of m2)" -ne 0 ] && grep -q "does not prove our key" "$T/m2.err" &&
	 [ ! -e "$T/dcoll/m2" ]'
check "--key DIR: a name without a key file: refused, saying so" \
	'[ "$(rc_of m3)" -ne 0 ] && grep -q "no key for this machine" "$T/m3.err" && [ ! -e "$T/dcoll/m3" ]'
collector_stop

done_testing
