#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The writers of compressed trace files: ktrace -z and its flight
# snapshots on the fake device (ktrace-cli-fakedev.c), ktrace-run -z on a
# call trace.  Ground truth: the fake numbers each CPU's records 0, 1, 2,
# ... (arg1) and counts what it drops, so a recording decoded by zstd -d
# (an independent decoder) must be those numbers without a gap, as many
# records and lost as ktrace's summary says (killed: whole
# frames, the last one gone); dtrace must print
# the same from the .zst files as from their zstd -d copies; a flight
# snapshot must be a marker of the records overwritten, then the newest
# records without a gap (as test 37 checks uncompressed); ktrace-run -z of
# a deterministic program must count the same calls as ktrace-run without;
# a recording beside a file of the other kind (what zstd -d leaves) of the
# same CPU warns, naming it (the files ls finds); ktrace-run -z on a full
# disk says as many records lost as its files' markers count (dtrace -S).
. "$(dirname "$0")/fakedev-common.sh"
FRAMES=$ROOT/tests/host/zstd-frames.py
DTRACE=$ROOT/$O/tools/dtrace
command -v zstd >/dev/null || skip_all "no zstd command (apt-get install zstd)"

# numbered FILE: "RECORDS LOST" of an uncompressed fake recording (lost:
# its markers' counts), or "bad WHY" when the numbers have a gap
numbered() {
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()[512:]
META_LOST = 1 << 24
want, n, lost = None, 0, 0
for i in range(0, len(data) - len(data) % 24, 24):
    tsc, ev, tid, a1, a2 = struct.unpack_from('<QIIII', data, i)
    n += 1
    if ev == META_LOST:          # the fake numbers the records it keeps only
        lost += a1 | a2 << 32
        continue
    if want is not None and a1 != want:
        print('bad record %d numbered %d, not %d' % (n, a1, want)); sys.exit()
    want = a1 + 1
print(n, lost)
PY
}

# ---- ktrace -z -------------------------------------------------------------
KTFAKE_RATE=100000 fk -z -e sched -c 0,1 -d 1 -o z
check "ktrace -z: exit 0, z.cpu0.zst and z.cpu1.zst, no uncompressed files" \
	'[ $rc -eq 0 ] && [ -s z.cpu0.zst ] && [ -s z.cpu1.zst ] && [ ! -e z.cpu0 ]'
for cpu in 0 1; do
	zstd -q -d z.cpu$cpu.zst -o u.cpu$cpu 2>/dev/null
	read -r n lost < <(numbered u.cpu$cpu)
	check "cpu $cpu: zstd -d gives $n records numbered without a gap, as many as ktrace says" \
		'[ "$n" != bad ] && [ "$n" -gt 50000 ] &&
		 has_err "cpu $cpu: $n records, $lost lost, $(stat -c %s z.cpu$cpu.zst) bytes in z.cpu$cpu.zst"'
done
nframes=$(python3 "$FRAMES" z.cpu0.zst | wc -l)
check "frames: $nframes, the header's and ~256 KiB of records each" \
	'[ "$nframes" -ge 3 ] && [ "$(python3 "$FRAMES" z.cpu0.zst | head -1 | cut -d" " -f3)" = 512 ]'
check "smaller: $(stat -c %s z.cpu0.zst) bytes for $(stat -c %s u.cpu0)" \
	'[ $(($(stat -c %s u.cpu0) / $(stat -c %s z.cpu0.zst))) -ge 3 ]'
views_ok=0
for view in "" -S --raw; do
	"$DTRACE" --no-pager $view z.cpu0.zst z.cpu1.zst 2>&1 | sed 's/z\.cpu\([01]\)\.zst/u.cpu\1/g' >v.z
	"$DTRACE" --no-pager $view u.cpu0 u.cpu1 >v.u 2>&1
	cmp -s v.z v.u && [ -s v.u ] && views_ok=$((views_ok + 1))
done
check "dtrace (events), -S, --raw: the same from the .zst files as from zstd -d's" '[ $views_ok = 3 ]'
# a moderate load: compressing in the drain threads loses nothing
KTFAKE_RATE=100000 fk -z -b 262144 -e sched -c 0-3 -d 1 -o m
check "100000 records/s on 4 CPUs into 256K-record buffers: nothing lost" \
	'[ $rc -eq 0 ] && has_err "0 lost" && ! grep -q "[1-9][0-9]* lost" "$T/err"'
fk --zstd-level 99 -e sched -c 0 -d 0.1 -o x
check "--zstd-level 99: a usage error naming the levels" \
	'[ $rc -eq 2 ] && has_err "ktrace: --zstd-level 99: not a zstd level (" && [ ! -e x.cpu0.zst ]'
KTFAKE_RATE=20000 fk --zstd-level=-5 -e sched -c 0 -d 0.2 -o l
zstd -q -d l.cpu0.zst -o l.cpu0 2>/dev/null
read -r n lost < <(numbered l.cpu0)
check "--zstd-level=-5 implies -z: $n records numbered without a gap" \
	'[ $rc -eq 0 ] && [ "$n" != bad ] && [ "$n" -gt 1000 ]'
# zstd -d left l.cpu0 beside l.cpu0.zst: "dtrace l.cpu*" would merge both
fk -z -e sched -c 0 -d 0.1 -o l
check "-z beside an uncompressed file of the same CPU: a warning names it" \
	'[ $rc -eq 0 ] && has_err "ktrace: warning: l.cpu0: a file of an earlier recording: \"dtrace l.cpu*\" would merge it"'
fk -e sched -c 0 -d 0.1 -o l
check "uncompressed beside a .zst of the same CPU: a warning names it" \
	'[ $rc -eq 0 ] && has_err "ktrace: warning: l.cpu0.zst: a file of an earlier recording"'
rm -f l.cpu0
fk -z -e sched -c 0 -d 0.1 -o l
check "alone: no such warning" '[ $rc -eq 0 ] && ! has_err "earlier recording"'

# killed outright: the file ends after its last whole frame, and reads clean
# (env execs ktrace: $! is ktrace)
env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" KTFAKE_STATE="$T/state" \
    KTFAKE_RATE=100000 "$KTRACE" -z -e sched -c 0 -o k >/dev/null 2>&1 &
kt=$!
for i in $(seq 100); do	# two records frames out, or 10 s
	[ "$(python3 "$FRAMES" k.cpu0.zst 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.1
done
kill -KILL "$kt"
wait "$kt" 2>/dev/null
k_frames=$(python3 "$FRAMES" k.cpu0.zst 2>&1 | wc -l)
zstd -q -d k.cpu0.zst -o k.cpu0 2>/dev/null
read -r n lost < <(numbered k.cpu0)
"$DTRACE" --no-pager -S k.cpu0.zst >/dev/null 2>k.err
check "ktrace -z killed: $k_frames whole frames, $n records numbered without a gap, read without a warning" \
	'[ "$k_frames" -ge 2 ] && [ "$n" != bad ] && [ "$n" -gt 0 ] && [ ! -s k.err ]'
fk -e 0		# the mask a killed ktrace left on

# ---- ktrace --flight -z ----------------------------------------------------
snap() { python3 "$ROOT/tests/host/flight-snap.py" "$1"; }
fk_env "$KTRACE" --flight -z -b 64 -e sched -c 0,1 -o f >"$T/out" 2>"$T/err" &
job=$!
for i in $(seq 50); do
	kt=$(sed -n 's/.*kill -USR1 \([0-9]*\) .*/\1/p' "$T/err")
	[ -n "$kt" ] && break
	sleep 0.1
done
sleep 0.5
kill -USR1 "$kt"
for i in $(seq 50); do
	has_err "snapshot 1: " && break
	sleep 0.1
done
sleep 0.3
kill -INT "$kt"
wait $job
rc=$?
check "ktrace --flight -z, SIGUSR1, SIGINT: exit 0, snapshots f.1.cpuN.zst and f.2.cpuN.zst" \
	'[ $rc -eq 0 ] && [ -s f.1.cpu0.zst ] && [ -s f.2.cpu1.zst ] && [ ! -e f.1.cpu0 ]'
for cpu in 0 1; do
	zstd -q -d f.1.cpu$cpu.zst -o f1.cpu$cpu 2>/dev/null
	zstd -q -d f.2.cpu$cpu.zst -o f2.cpu$cpu 2>/dev/null
	read -r m1 first1 last1 count1 < <(snap f1.cpu$cpu)
	read -r m2 first2 last2 count2 < <(snap f2.cpu$cpu)
	check "cpu $cpu: snapshots 1 and 2, decoded, are a marker and the newest 64 records, going on" \
		'[ "$m1" != bad ] && [ "$count1" = 64 ] && [ "$first1" = "$m1" ] &&
		 [ "$m2" != bad ] && [ "$count2" = 64 ] && [ $((last1 + 1 + m2)) = "$first2" ]'
done

# ---- ktrace-run -z ---------------------------------------------------------
if ! make -s -C "$ROOT" O="$O" user-test-progs >"$T/err" 2>&1; then
	check "build tests/user" false
	done_testing
	exit 1
fi
KTRACE_RUN=$ROOT/$O/tools/ktrace-run
UT=$ROOT/$O/tests/user
"$KTRACE_RUN" -z -o rz "$UT/calls" >/dev/null 2>"$T/err"
rc=$?
"$KTRACE_RUN" -o rp "$UT/calls" >/dev/null 2>&1
check "ktrace-run -z: exit 0, every thread's file is .zst and whole (zstd -t)" \
	'[ $rc -eq 0 ] && ls rz/trace.pid*.tid* >/dev/null && ! ls rz/trace.pid*.tid* | grep -qv "\.zst$" &&
	 zstd -q -t rz/*.zst'
# flat call counts: CALLS and FUNCTION, without the times
calls() { "$DTRACE" --no-pager --flat "$1" 2>/dev/null | awk 'NR > 2 { print $1, $4 }' | sort; }
calls rz >c.z
calls rp >c.p
check "ktrace-run -z counts the same calls as ktrace-run ($(wc -l <c.p) functions)" \
	'[ -s c.p ] && cmp c.z c.p'
mkdir rd && cp rz/*.maps rd/ && for f in rz/*.zst; do
	b=${f##*/}
	zstd -q -d "$f" -o "rd/${b%.zst}"
done
"$DTRACE" --no-pager --calltree rz/trace.pid*.tid* 2>&1 | sed 's|rz/\([^ ]*\)\.zst|rd/\1|g' >t.z
"$DTRACE" --no-pager --calltree rd/trace.pid*.tid* >t.d 2>&1
check "dtrace --calltree: the same from the .zst files as from zstd -d's" '[ -s t.d ] && cmp t.z t.d'
# a call trace of many frames, and a ring that drops (its lost marker)
"$KTRACE_RUN" -z -o rl "$UT/loop" 300000 >/dev/null 2>"$T/err"
rc=$?
f=$(ls rl/trace.pid*.tid*.zst | head -1)
n=$(zstd -q -d -c "$f" | wc -c)
check "ktrace-run -z loop 300000: $(python3 "$FRAMES" "$f" | wc -l) frames, $n bytes decoded from $(stat -c %s "$f")" \
	'[ $rc -eq 0 ] && [ $(( (n - 512) / 24 )) -ge 600000 ] && [ $((n / $(stat -c %s "$f"))) -ge 3 ]'
"$KTRACE_RUN" -z -D -b 1024 -o rD "$UT/loop" 300000 >/dev/null 2>"$T/err"
f=$(ls rD/trace.pid*.tid*.zst | head -1)
zstd -q -d "$f" -o dropped.u 2>/dev/null
lost_file=$(python3 - dropped.u <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()[512:]
print(sum(a1 | a2 << 32 for i in range(0, len(data), 24)
          for _, ev, _, a1, a2 in [struct.unpack_from('<QIIII', data, i)] if ev == 1 << 24))
PY
)
lost_said=$(sed -n 's/.* \([0-9][0-9]*\) records lost.*/\1/p' "$T/err" | head -1)
check "ktrace-run -z -D: the lost markers in the file count what ktrace-run says it lost ($lost_file, $lost_said)" \
	'[ -n "$lost_said" ] && [ "$lost_file" = "$lost_said" ]'
# a full file system (a 64 KiB tmpfs in a private mount namespace): the
# frame that fails takes earlier records with it; what ktrace-run says it
# lost is what the files' markers count (dtrace -S)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	mkdir -p full mnt
	timeout -k 5 60 unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
		"$2" -z -o "$1/d" "$3" 300000 >/dev/null; rc=$?; cp -r "$1/d/." "$4"; exit $rc' \
		sh "$T/mnt" "$KTRACE_RUN" "$UT/loop" "$T/full" 2>"$T/err"
	rc=$?
	lost_said=$(sed -n 's/.*: \([0-9][0-9]*\) records lost.*/\1/p' "$T/err" | head -1)
	lost_file=$("$DTRACE" -S full/trace.* 2>/dev/null | awk '$1 == "lost" { print $2 }')
	check "ktrace-run -z on a full disk: exit 1, the file named, $lost_said lost said, $lost_file marked" \
		'[ $rc -eq 1 ] && has_err "full/" || has_err "/d/trace.pid" &&
		 has_err "No space left on device" && ! has_err "lost marker" &&
		 [ -n "$lost_said" ] && [ "$lost_said" = "$lost_file" ] && [ "$lost_said" -gt 0 ]'
else
	skip "ktrace-run -z on a full disk" "no mount namespaces here (needs root)"
fi

done_testing
