#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace --listen against hostile senders: crafted messages from
# ktnet-hostile.py (bad magic, version, type; lengths, record counts and
# stream ids out of range; machine names that are paths; repeated stream
# ids; zstd frames that claim 1 TiB or lie about their size; sequence
# numbers that jump; FILEs named as paths; a second HELLO on one
# connection, then its first name again (once a use after free); session
# 0; a peer flooding probes without reading the replies; half a message
# then silence; a silent connection),
# all while a good sender streams.  Checked: the good sender's records all
# arrive or are counted (ground truth: the fake device's counts, decoded by
# collect-count.py); nothing is written outside the collector's directory
# and only machine directories with allowed names inside it (ground truth:
# find); every crafted connection is closed or its part left out with a
# message naming its peer (the client's own local port) and what was wrong.
# Then resources running out: descriptors (ulimit -n) with a clear message
# and the collector serving once they are back; a full disk (a tmpfs, root
# only) with one message, the sender retrying, and every record delivered
# once the disk has room.  Then memory and descriptors a peer could hold:
# a 64 MiB header before HELLO, a 64 MiB frame dripped a byte a second,
# eight peers sending 64 MiB frames (the collector's peak RSS, VmHWM, grows
# by its 128 MiB payload budget, not 8 x 64 MiB), 32 machines of 8 streams
# one after another under 40 descriptors (each answered, a sender served
# after them), and a state file whose record count wraps when multiplied.
. "$(dirname "$0")/collect-common.sh"

HOSTILE=$ROOT/tests/host/ktnet-hostile.py

collector_start
ok $? "the collector listens" "$(cat "$T/coll.err")"
# a real trace header for the crafted HELLOs
sender seed --send "127.0.0.1:$CPORT" -e sched -d 0.2
wait $SPID
TAP_ERR=$T/seed.err check "a first sender delivers (its header seeds the crafted HELLOs)" \
	'[ $? -eq 0 ] && [ -s "$T/coll/seed/trace.cpu0" ]'
touch "$T/before"

mkdir "$T/proc"
printf 'ffffffff81000000 T _text\nffffffff81001000 t good_only_fn\n' >"$T/proc/kallsyms"
KTFAKE_PROC=$T/proc KTFAKE_RATE=20000 sender good --send "127.0.0.1:$CPORT" -e sched -d 6
pgood=$SPID
cases="magic version type huge bighello probepayload streamid manyrecords
	name:dotdot name:slash name:dot name:empty name:abs name:ctrl name:hidden
	name:long dupids bigid noids hellocount badheader beforehello seqjump
	notstream bomb liar files twohello twohello-back session0 flood bigbeforehello
	drip slowloris silent"
# shellcheck disable=SC2086
HOSTILE_HOLD=14 timeout 90 python3 "$HOSTILE" "$CPORT" "$T/coll/seed/trace.cpu0" $cases \
	>"$T/hostile.out" 2>"$T/hostile.err"
TAP_ERR=$T/hostile.err check "the hostile client ran every case" \
	'[ $? -eq 0 ] && [ "$(grep -c "^held " "$T/hostile.out")" -eq 2 ]'
wait $pgood
TAP_ERR=$T/good.err check "the good sender exits 0 beside them" '[ $? -eq 0 ]'
counts good
ok $? "the good sender: every record delivered or counted, in order, once" \
	"$(cat "$T/good.count")"
check "the good sender's kallsyms arrived beside its files (a FILE message)" \
	'grep -q good_only_fn "$T/coll/good/trace.kallsyms"'

# what the collector says about each case: "PEER: ... WHAT"
peer() { sed -n "s/^$1 \(127\.0\.0\.1:[0-9]*\)$/\1/p" "$T/hostile.out"; }
said() {	# CASE TEXT: a message naming the case's peer and TEXT
	local p what=$2
	p=$(peer "$1")
	TAP_ERR=$T/coll.err check "$1: closed or left out, the message names $p and says \"$2\"" \
		'[ -n "$p" ] && grep -F -- "$p: " "$T/coll.err" | grep -qF -- "$what"'
}
said magic "bad magic"
said version "unknown protocol version"
said type "unknown message type"
said huge "payload too large"
said bighello "HELLO too large"
said probepayload "a payload on a message that has none"
said streamid "stream id out of range"
said manyrecords "DATA frame of too many records"
for n in dotdot slash dot empty abs ctrl hidden long; do
	said name:$n "a HELLO with a bad machine name"
done
said dupids "stream id repeated or not below 8192"
said bigid "stream id repeated or not below 8192"
said noids "a HELLO of 0 streams"
said hellocount "a HELLO of 2 streams in 612 bytes"
said badheader "a HELLO without a trace file header"
said beforehello "a message before HELLO"
said seqjump "frame 5 after 0"
said twohello "a second HELLO on one connection (already h5)"
said twohello-back "frame 5 after 0"
said session0 "a HELLO of session 0"
said notstream "DATA for cpu 7, not a stream of its HELLO"
said bomb "is no zstd frame of 10 records"
said liar "is no zstd frame of 10 records"
said files "a FILE of no known kind: left out"
said files ".kallsyms: not a zstd frame of at most 64 MiB"
said files ".irqs: not a zstd frame of at most 64 MiB"
said flood "does not read its acknowledgements"
said slowloris "nothing for 10 s in the middle of a message"
said silent "nothing for 10 s and no HELLO"
said bigbeforehello "a message before HELLO (type 3, 67108864 bytes)"
said drip "a 67108864-byte message at under 64 KiB/s"
check "a peer dripping a byte a second into a 64 MiB frame is closed (its memory freed)" \
	'grep -q "^drip closed$" "$T/hostile.out"'
check "every crafted connection was closed by the collector" \
	'! grep -Eq " open$" "$T/hostile.out"'
check "the collector is still running" 'kill -0 $CPID'

# nothing outside DIR; inside, machine directories of allowed names only
find "$T" -newer "$T/before" ! -path "$T/coll" ! -path "$T/coll/*" ! -name "*.err" \
	! -name "*.out" ! -name "*.count" ! -name "*.stats" ! -name "*.state" ! -name "*.dev" ! -path "$T/proc*" \
	! -path "$T" ! -name outside >"$T/outside"
TAP_ERR=$T/outside check "nothing written outside the collector's directory" '[ ! -s "$T/outside" ]'
find "$T/coll" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort >"$T/machines"
TAP_ERR=$T/machines check "the collector's directory holds the sane machine names only" \
	'! grep -Ev "^(seed|good|slow|flood|drip|h[1-5])$" "$T/machines"'
find "$T/coll" -mindepth 2 -printf '%P\n' | grep -Ev '/(trace\.(cpu[0-9]+|clock|kallsyms|irqs|probes)|\.trace\.cpu[0-9]+\.state|\.session)$' >"$T/odd"
TAP_ERR=$T/odd check "... holding trace files only (no shipped name used as a path)" \
	'[ ! -s "$T/odd" ]'
collector_stop

# descriptors running out: a clear message, then serving again
collector_start_limited 40 "$T/coll2"
python3 -c '
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(60)]
time.sleep(1)
' "$CPORT"
check "out of descriptors: the collector says so, and that new peers wait" \
	'grep -q "Too many open files with [0-9]* connections open; new ones wait" "$T/coll.err"'
sender fd --send "127.0.0.1:$CPORT" -e sched -d 0.5
wait $SPID
TAP_ERR=$T/fd.err check "... then a sender is served again" '[ $? -eq 0 ]'
python3 "$COUNT" "$T/coll2/fd" "$T/fd.stats" >"$T/fd.count" 2>&1
ok $? "... every record delivered" "$(cat "$T/fd.count")"
collector_stop

# the collector's disk full: said once, the sender retries, all delivered
# once there is room again
mkdir "$T/small"
trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT
if mount -t tmpfs -o size=256k tmpfs "$T/small" 2>/dev/null; then
	: >"$T/coll.err"
	"$KTRACE" --listen 127.0.0.1:0 -o "$T/small/coll" 2>>"$T/coll.err" &
	CPID=$!
	collector_wait
	KTFAKE_RATE=20000 sender full --send "127.0.0.1:$CPORT" -e sched -d 2
	pfull=$SPID
	for _ in $(seq 100); do
		grep -q "No space left on device" "$T/coll.err" && break
		sleep 0.05
	done
	sleep 1
	check "disk full: the collector names the file and the error" \
		'grep -q "small/coll/full/trace.cpu[0-9]*: No space left on device; frame [0-9]* not written" "$T/coll.err"'
	check "... once, not for every retry" \
		'[ "$(grep -c "No space left" "$T/coll.err")" -eq 1 ]'
	check "... and keeps running" 'kill -0 $CPID'
	mount -o remount,size=64m "$T/small"
	wait $pfull
	TAP_ERR=$T/full.err check "the sender exits 0 once the disk has room" '[ $? -eq 0 ]'
	python3 "$COUNT" "$T/small/coll/full" "$T/full.stats" >"$T/full.count" 2>&1
	ok $? "disk full then room: every record delivered or counted, once" \
		"$(cat "$T/full.count")"
	collector_stop
	umount "$T/small"
else
	skip "disk full: no tmpfs to fill (needs root)"
fi
# directories another user could write in: refused, as the trace files'
# own are (a spool's files are read back and sent, a collector's written)
mkdir -m 0777 "$T/ww"
fk_env timeout 20 "$KTRACE" --send 127.0.0.1:9 --spool "$T/ww" -e sched -d 0.2 >/dev/null 2>"$T/ww.err"
TAP_ERR=$T/ww.err check "--spool in a directory others may write: refused, saying so" \
	'[ $? -eq 1 ] && grep -q "^ktrace: --spool $T/ww: another user.s, or others may write in it" "$T/ww.err"'
timeout 20 "$KTRACE" --listen 127.0.0.1:0 -o "$T/ww" >/dev/null 2>"$T/ww.err"
TAP_ERR=$T/ww.err check "--listen -o a directory others may write: refused, saying so" \
	'[ $? -eq 1 ] && grep -q "^ktrace: -o $T/ww: another user.s, or others may write in it" "$T/ww.err"'

# a damaged spool of a killed sender: segment names the sender never
# writes (a number past 2^32 - 1, wrapping; a leading zero, naming a
# segment twice; a huge one), with a good HELLO: read as what they are,
# no crash, and the new recording still delivered
mkdir -p -m 0700 "$T/hs/unsent.18446744073709551615"
python3 - "$T/hs/unsent.18446744073709551615" "$T/coll/seed/trace.cpu0" <<'PY'
import os, struct, sys
d, header = sys.argv[1], open(sys.argv[2], 'rb').read(512)
with open(os.path.join(d, 'hello'), 'wb') as f:
    f.write(b'hs'.ljust(64, b'\0') + struct.pack('<QII', 0x99, 1, 0) + header + bytes(16) +
            struct.pack('<I', 0))
for name in ('spool.0', 'spool.00', 'spool.4294967295', 'spool.8589934591', 'spool.1000000000'):
    with open(os.path.join(d, name), 'wb') as f:
        f.write(os.urandom(100))
PY
: >"$T/hs/spool.0"	# and the killed recording's own: set aside beside it
collector_start
sender hs --send "127.0.0.1:$CPORT" --spool "$T/hs" -e sched -d 0.5
wait $SPID
TAP_ERR=$T/hs.err check "a damaged spool: the sender exits 0, having said what it left out" \
	'[ $? -eq 0 ] && grep -q "spool.0: no frame at byte 0: the rest left out" "$T/hs.err" &&
	 ! grep -q "spool.00\|spool.8589934591" "$T/hs.err"'
counts hs
ok $? "... and its own recording is delivered or counted, once" "$(cat "$T/hs.count")"
collector_stop

# a state file read as peer input: a record count whose product with the
# record size wraps past 2^64 (to 8) must not pass for a file of 520
# bytes.  Ground truth: the trace file's size (stat) and the ACKs.
SEEDHDR=$T/seed.hdr
head -c 512 "$T/coll/seed/trace.cpu0" >"$SEEDHDR"
collector_start
timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" hello:ov >"$T/ov.out" 2>&1
collector_stop
printf '%020d %020d\n' 1 768614336404564651 >"$T/coll/ov/.trace.cpu0.state"
printf 'xxxxxxxx' >>"$T/coll/ov/trace.cpu0"
collector_start
timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" hello:ov >>"$T/ov.out" 2>&1
collector_stop
ovsize=$(stat -c %s "$T/coll/ov/trace.cpu0")
ovrec=$(cut -d' ' -f2 "$T/coll/ov/.trace.cpu0.state")
TAP_ERR=$T/coll.err check "a state count that overflows: said, the file started over" \
	'grep -q "ov/trace.cpu0: does not hold the 768614336404564651 records" "$T/coll.err"'
TAP_ERR=$T/ov.out check "... no frame acknowledged from it (the sender sends them all)" \
	'[ "$(sed -n 2p "$T/ov.out")" = "hello ov -" ]'
check "... the file holds whole records, as many as its state says ($ovsize bytes, $ovrec)" \
	'[ $(((ovsize - 512) % 24)) -eq 0 ] && [ $((10#$ovrec)) -eq $(((ovsize - 512) / 24)) ]'

# payload memory: peers each sending all but the last byte of a 64 MiB
# frame as fast as the collector reads.  Ground truth: the collector's peak
# RSS (VmHWM in /proc); it may grow by its payload budget (2 x 64 MiB) and
# little more, not 64 MiB a peer.  The client's count of bytes the
# collector took shows the frames were read up to that budget.
collector_start
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$CPID/status"; }
h0=$(hwm)
timeout 60 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" mem:8 >"$T/mem.out" 2>"$T/mem.err"
h1=$(hwm)
sent=$(sed -n 's/^mem sent //p' "$T/mem.out")
echo "# 8 peers x 64 MiB frames: collector VmHWM ${h0} kB before, ${h1} kB after; ${sent:-?} bytes taken"
TAP_ERR=$T/mem.err check "8 peers sending 64 MiB frames: the peak RSS grows by < 160 MiB (not 8 x 64)" \
	'[ -n "$h1" ] && [ $((h1 - h0)) -lt $((160 << 10)) ]'
check "... while two of the frames were read whole but a byte (the budget used)" \
	'[ -n "$sent" ] && [ "$sent" -ge $((2 * ((64 << 20) - 1))) ]'
collector_stop

# descriptors: 32 machines of 8 streams, one after the other, each
# connection closed after its ACKs, into a collector of 40 descriptors.
# Their files are closed with their connections, so every HELLO is
# answered and a good sender is served after them.  Ground truth: the
# client's count of answered HELLOs; the fake's counts.
collector_start_limited 40 "$T/coll3"
timeout 60 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" names:32:8 >"$T/names.out" 2>"$T/names.err"
TAP_ERR=$T/coll.err check "32 machines x 8 streams under 40 descriptors: every HELLO answered" \
	'grep -q "^names 32$" "$T/names.out"'
sender fd3 --send "127.0.0.1:$CPORT" -e sched -d 0.5 --send-wait 10
wait $SPID
TAP_ERR=$T/fd3.err check "... then a good sender is served" '[ $? -eq 0 ]'
python3 "$COUNT" "$T/coll3/fd3" "$T/fd3.stats" >"$T/fd3.count" 2>&1
ok $? "... every record delivered" "$(cat "$T/fd3.count")"
collector_stop
# payload memory held by slow peers: two peers each announce a 64 MiB frame
# and send it at 80 KiB/s (above the 64 KiB/s floor: ~800 s a frame), the
# two together the whole PAYLOAD_BUDGET.  A good sender (small frames) and
# a peer with a 512 KiB frame (the big budget's, behind the two) must
# still be served in time.  Ground truth: the fake's counts; the crafted
# peer's ACK and the seconds it took.
collector_start
HOSTILE_HOLD=30 timeout 60 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" bigdrip:bd1 bigdrip:bd2 \
	>"$T/bd.out" 2>"$T/bd.err" &
pbd=$!
sleep 2
t0=$SECONDS
sender fair --send "127.0.0.1:$CPORT" -e sched -d 1
pfair=$SPID
timeout 60 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" bigdata:bd3:21846 >"$T/bd3.out" 2>&1
wait $pfair
rc=$? took=$((SECONDS - t0))
TAP_ERR=$T/fair.err check "two peers dripping 64 MiB frames: a 1 s sender is served beside them, in < 20 s ($took)" \
	'[ $rc -eq 0 ] && [ $took -lt 20 ]'
counts fair
ok $? "... every record delivered or counted" "$(cat "$T/fair.count")"
TAP_ERR=$T/bd3.out check "... a 512 KiB frame waiting behind them is acknowledged within 20 s" \
	'read -r _ _ a secs <"$T/bd3.out"; [ "$a" = acked ] && [ "${secs%.*}" -lt 20 ]'
TAP_ERR=$T/coll.err check "... the slow holders closed, saying why" \
	'grep -q "a 67108864-byte message at [0-9]* KiB/s while others wait for memory" "$T/coll.err"'
wait $pbd
collector_stop

# a damaged trace file (cut back by a record, as a power loss may): its
# whole records are kept, and the frames the sender still has go on after
# a lost marker of unknown count (the sender freed the acknowledged ones).
# Ground truth: the file's size in records, the crafted peer's ACKs.
recs() { echo $((($(stat -c %s "$1") - 512) / 24)); }
collector_start
timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" seqs:dmg:1,2 >"$T/dmg.out" 2>&1
collector_stop
truncate -s -24 "$T/coll/dmg/trace.cpu0"
collector_start
timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" seqs:dmg:3 seqs:dmg:4 >>"$T/dmg.out" 2>&1
collector_stop
TAP_ERR=$T/dmg.out check "a trace file cut back by a record: frame 3 then 4 acknowledged after it" \
	'[ "$(cat "$T/dmg.out")" = "$(printf "seqs dmg - / ack:1 ack:2\nseqs dmg - / ack:3\nseqs dmg 0:3 / ack:4")" ]'
check "... its whole record kept, a lost marker and frames 3 and 4 after it (4 records)" \
	'[ "$(recs "$T/coll/dmg/trace.cpu0")" -eq 4 ]'
TAP_ERR=$T/coll.err check "... said, naming the file" \
	'grep -q "dmg/trace.cpu0: does not hold the 2 records .* 1 whole records kept" "$T/coll.err"'
"$ROOT/$O/tools/dtrace" --no-pager "$T/coll/dmg" >"$T/dmg.txt" 2>&1
TAP_ERR=$T/dmg.txt check "... dtrace shows the records lost, how many not known" \
	'grep -q "how many is not known" "$T/dmg.txt"'
echo garbage >"$T/coll/dmg/.trace.cpu0.state"
collector_start
timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" seqs:dmg:7 >"$T/dmg2.out" 2>&1
collector_stop
TAP_ERR=$T/dmg2.out check "a state file damaged: frame 7 acknowledged after it" \
	'[ "$(cat "$T/dmg2.out")" = "seqs dmg - / ack:7" ]'
check "... the 4 records kept, a lost marker and frame 7 after them (6 records)" \
	'[ "$(recs "$T/coll/dmg/trace.cpu0")" -eq 6 ]'

# the protocol rule (ktnet.h, DATA): a frame of @lost KTNET_LOST_UNKNOWN
# may jump; one that does not, may not.  Ground truth: the ACKs, the
# file's records (1, a marker and 5, 6: 4).
collector_start
timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" seqs:jmp:1,5u,6,9 >"$T/jmp.out" 2>&1
collector_stop
TAP_ERR=$T/jmp.out check "a jump with a lost count not known: acknowledged; one without: closed" \
	'[ "$(cat "$T/jmp.out")" = "seqs jmp - / ack:1 ack:5 ack:6 closed" ]'
check "... the file holds frame 1, a lost marker, frames 5 and 6 (4 records)" \
	'[ "$(recs "$T/coll/jmp/trace.cpu0")" -eq 4 ]'
TAP_ERR=$T/coll.err check "... the jump without one said" \
	'grep -q "jmp cpu 0: frame 9 after 6: closed" "$T/coll.err"'

# descriptors a peer's streams may hold: under ulimit -n 256, a HELLO of
# 120 streams held open, then one of 100 (refused: over half of the
# descriptors), then a good one of 8 streams, which is answered.  Ground
# truth: the crafted peers' ACKs.
collector_start_limited 256 "$T/coll4"
HOSTILE_HOLD=1 timeout 60 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" streams:fa:120 streams:fb:100 \
	names:1:8 >"$T/fds.out" 2>"$T/fds.err"
TAP_ERR=$T/fds.out check "ulimit -n 256: a HELLO of 120 streams answered, one of 100 more refused" \
	'grep -q "^streams fa answered$" "$T/fds.out" && grep -q "^streams fb closed$" "$T/fds.out"'
TAP_ERR=$T/coll.err check "... saying why" \
	'grep -q "fb: a HELLO of 100 streams, with 120 stream files open already, over the 128" "$T/coll.err"'
TAP_ERR=$T/fds.out check "... and a good sender's HELLO of 8 streams answered beside the 120" \
	'grep -q "^names 1$" "$T/fds.out"'
collector_stop

# a FILE sent again when the disk is full: the copy there stays whole.
# Ground truth: the file's bytes.
mkdir "$T/small5"
trap 'umount "$T/small5" 2>/dev/null; rm -rf "$T"' EXIT
if mount -t tmpfs -o size=256k tmpfs "$T/small5" 2>/dev/null; then
	: >"$T/coll.err"
	"$KTRACE" --listen 127.0.0.1:0 -o "$T/small5/coll" 2>>"$T/coll.err" &
	CPID=$!
	collector_wait
	timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" file:kf:1000:65 >"$T/kf.out" 2>&1
	dd if=/dev/zero of="$T/small5/fill" bs=4k 2>/dev/null
	timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" file:kf:200000:66 >>"$T/kf.out" 2>&1
	TAP_ERR=$T/kf.out check "a FILE sent again on a full disk: left out, the connection served" \
		'[ "$(grep -c "^file kf done$" "$T/kf.out")" -eq 2 ]'
	check "... the copy there kept whole (1000 bytes of A)" \
		'[ "$(tr -d A <"$T/small5/coll/kf/trace.kallsyms" | wc -c)" -eq 0 ] &&
		 [ "$(stat -c %s "$T/small5/coll/kf/trace.kallsyms")" -eq 1000 ]'
	TAP_ERR=$T/coll.err check "... said, and no temporary file left" \
		'grep -q "kf/.trace.kallsyms.new: No space left on device; .* left as it was" "$T/coll.err" &&
		 [ ! -e "$T/small5/coll/kf/.trace.kallsyms.new" ]'
	collector_stop
	umount "$T/small5"
else
	skip "FILE on a full disk: no tmpfs to fill (needs root)"
fi
# an ACK only for what is on the disk: the trace file synced, then its
# state written and synced, then the ACK.  Ground truth: the collector's
# system calls (strace), for the state lines of frames 1 and 2.
if command -v strace >/dev/null; then
	: >"$T/coll.err"
	"$KTRACE" --listen 127.0.0.1:0 -o "$T/coll6" 2>>"$T/coll.err" &
	CPID=$!
	collector_wait
	timeout 30 strace -f -p "$CPID" -o "$T/sync.strace" -e trace=fdatasync,pwrite64,sendto \
		2>"$T/strace.err" &
	pstrace=$!
	for _ in $(seq 50); do grep -q attached "$T/strace.err" && break; sleep 0.1; done
	timeout 20 python3 "$HOSTILE" "$CPORT" "$SEEDHDR" seqs:sy:1,2 >"$T/sy.out" 2>&1
	collector_stop
	wait $pstrace
	# per state line of a frame: a trace file synced since the last send,
	# and the state's own descriptor synced before the next send
	awk '/^[0-9]+ +sendto\(/ { if (want) bad = 1; synced = 0; next }
	     /^[0-9]+ +fdatasync\(/ { fd = $2; sub(/^fdatasync\(/, "", fd); sub(/\).*/, "", fd)
		if (want && fd == sfd) want = 0; else synced = 1; next }
	     /pwrite64\([0-9]+, "0000000000000000000[12] / { sfd = $2; sub(/^pwrite64\(/, "", sfd)
		sub(/,.*/, "", sfd); if (!synced) bad = 1; want = 1; n++ }
	     END { exit !(n == 2 && !bad && !want) }' "$T/sync.strace"
	ok $? "an ACK follows the trace file synced, then its state written and synced" \
		"$(cat "$T/sy.out"; grep -E "fdatasync|pwrite64|sendto" "$T/sync.strace" | head -20)"
	TAP_ERR=$T/sy.out check "... and both frames were acknowledged" \
		'[ "$(cat "$T/sy.out")" = "seqs sy - / ack:1 ack:2" ]'
else
	skip "ACK after sync: no strace"
fi
done_testing
