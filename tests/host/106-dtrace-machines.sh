#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two machines on one timeline: network namespaces A and B (a veth pair)
# each run a sender; A sends UDP packets to B, each stamped "sent N" just
# before it goes, B stamps "received N" just after it came (user marks,
# real TSC, tests/host/ktnet-pingpong.c).  Causality is the ground truth:
# in dtrace's merge of the collector's directories every "received N"
# comes after its "sent N", and where it would not, by less than the error
# bounds dtrace reports.  Both namespaces share this machine's clock, so
# the true offset of each is 0: the reported bound must cover the offset
# measured.
. "$(dirname "$0")/collect-common.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (ip netns)"
command -v ip >/dev/null || skip_all "needs ip (iproute2)"
PINGPONG=$ROOT/$O/tests/ktnet-pingpong
make -s -C "$ROOT" O="$O" "$O/tests/ktnet-pingpong" >"$T/err" 2>&1 ||
	{ check "build ktnet-pingpong" false; done_testing; exit 1; }
NA=ktA-$$ NB=ktB-$$
cleanup() { ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
ip netns add "$NA" && ip netns add "$NB" &&
ip link add "va$$" netns "$NA" type veth peer name "vb$$" netns "$NB" &&
ip -n "$NA" addr add 10.77.0.1/24 dev "va$$" && ip -n "$NB" addr add 10.77.0.2/24 dev "vb$$" &&
ip -n "$NA" link set "va$$" up && ip -n "$NB" link set "vb$$" up &&
ip -n "$NA" link set lo up && ip -n "$NB" link set lo up
ok $? "two network namespaces with a veth pair" "$(cat "$T/err")"

# the collector in B: B's sender over loopback, A's over the veth
ip netns exec "$NB" "$KTRACE" --listen 10.77.0.2:0 -o "$T/coll" 2>"$T/coll.err" &
CPID=$!
collector_wait
check "the collector listens in B" '[ -n "$CPORT" ]'
: >"$T/A.marks"; : >"$T/B.marks"
# a sender in namespace $1 as machine $2, the marks of $T/$2.marks as its events
netns_sender() {
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/$2.dev" KTRACE_DEV="$T/$2.dev" \
	    KTFAKE_STATE="$T/$2.state" KTFAKE_CPUS=1 KTFAKE_RATE=0 KTFAKE_MARKS="$T/$2.marks" \
	    ip netns exec "$1" timeout -k 2 60 "$KTRACE" --name "$2" --send "10.77.0.2:$CPORT" \
	    --send-wait 10 -e user -w 10 -d 5 2>"$T/$2.err" &
}
netns_sender "$NB" B
pb=$!
netns_sender "$NA" A
pa=$!
sleep 1
N=40
ip netns exec "$NB" "$PINGPONG" recv 7777 $N "$T/B.marks" &
pr=$!
sleep 0.2
ip netns exec "$NA" "$PINGPONG" send 10.77.0.2 7777 $N "$T/A.marks"
ok $? "A sent $N packets to B"
wait $pr
ok $? "B received them"
wait $pa
TAP_ERR=$T/A.err check "sender A exits 0" '[ $? -eq 0 ]'
wait $pb
TAP_ERR=$T/B.err check "sender B exits 0" '[ $? -eq 0 ]'
kill -TERM $CPID; wait $CPID 2>/dev/null

"$ROOT/$O/tools/dtrace" --machines "$T/coll" >"$T/machines" 2>"$T/err"
ok $? "dtrace --machines exits 0" "$(cat "$T/err")"
"$ROOT/$O/tools/dtrace" --no-pager --tsc -e user "$T/coll" >"$T/merged" 2>"$T/err"
ok $? "dtrace merges A and B" "$(cat "$T/err")"
check "every packet's two marks are in the merge" \
	'[ "$(grep -c "user mark" "$T/merged")" -eq $((2 * N)) ]'
# --tsc: the common clock's ns; the bound is the two machines' together
python3 - "$T/merged" "$T/machines" $N >"$T/causal" 2>&1 <<'PY'
import sys
merged, machines, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
bound, offset = {}, {}
for line in open(machines).readlines()[1:]:
    f = line.split()
    bound[f[0]], offset[f[0]] = float(f[5]), float(f[3])
sent, recv, order = {}, {}, []
for line in open(merged):
    f = line.split()
    if 'mark' not in f:
        continue
    machine, t, kind, num = f[0], int(f[2]), int(f[-2]), int(f[-1])
    (sent if kind == 1 else recv)[num] = t
    order.append((kind, num))
worst = min(recv[i] - sent[i] for i in range(1, n + 1))
late = [i for i in range(1, n + 1) if order.index((2, i)) < order.index((1, i))]
print(f'bounds {bound}, offsets {offset}; smallest send-to-receive gap {worst} ns; '
      f'received before sent: {late}')
# out of order only by less than the two machines' bounds together
ok = not late or -worst <= bound['A'] + bound['B']
# the true offsets are 0: the bounds must cover what was measured
ok = ok and all(abs(offset[m]) <= bound[m] for m in 'AB')
sys.exit(0 if ok else 1)
PY
ok $? "every receive after its send (or within the error bounds); offsets within the bounds" \
	"$(cat "$T/causal")"
echo "# $(cat "$T/causal")"
check "the listing's machine column names A and B" \
	'grep -q "^A " "$T/merged" && grep -q "^B " "$T/merged"'
"$ROOT/$O/tools/dtrace" --no-pager --machine A "$T/coll" >"$T/onlyA" 2>"$T/err"
check "--machine A: A's marks only" \
	'[ "$(grep -c "user mark" "$T/onlyA")" -eq $N ] && ! grep -q "^B " "$T/onlyA"'
# the exports carry the machine: Perfetto's machine_id, CTF's stream names
"$ROOT/$O/tools/dtrace" --format=perfetto -o "$T/t.pb" "$T/coll" 2>"$T/err"
ok $? "dtrace --format=perfetto of both machines" "$(cat "$T/err")"
if command -v protoc >/dev/null; then
	protoc --decode=perfetto.protos.Trace -I"$ROOT/dtrace" "$ROOT/dtrace/perfetto_trace.proto" \
		<"$T/t.pb" >"$T/t.txt" 2>"$T/err"
	check "the second machine's packets have machine_id 1 (the first's none)" \
		'grep -q "machine_id: 1" "$T/t.txt" && ! grep -q "machine_id: [02-9]" "$T/t.txt"'
else
	skip "the second machine's packets have machine_id 1" "no protoc"
fi
"$ROOT/$O/tools/dtrace" --format=ctf -o "$T/t.ctf" "$T/coll" 2>"$T/err"
ok $? "dtrace --format=ctf of both machines" "$(cat "$T/err")"
check "CTF: a stream per machine and CPU, named by the machine" \
	'[ -f "$T/t.ctf/A.cpu0" ] && [ -f "$T/t.ctf/B.cpu0" ]'

# Per-machine state, on hand-made machine directories whose contents are the
# ground truth: thread 500 is "alpha" on X and "beta" on Y (a tid on two
# machines is two tasks); each machine's own kallsyms names its timer's
# function and its own irqs its irq 24.
MKTRACE="python3 $ROOT/tests/host/mktrace.py"
NAMEEV=$(((1 << 1) | (4 << 24)))
TIMER=$(((1 << 10) | (1 << 24)))
IRQ=$(((1 << 3) | (1 << 24)))
CONT_END=$(((1 << 22) | (1 << 23)))
# comm HEX LE words of an 8-byte name: the thread:name records
nameev() {
	local hex lo hi
	hex=$(printf '%s' "$4" | od -An -tx1 | tr -d ' \n')
	hex=$(printf '%-16s' "$hex" | tr ' ' 0)
	lo=0x$(echo "$hex" | cut -c7-8)$(echo "$hex" | cut -c5-6)$(echo "$hex" | cut -c3-4)$(echo "$hex" | cut -c1-2)
	hi=0x$(echo "$hex" | cut -c15-16)$(echo "$hex" | cut -c13-14)$(echo "$hex" | cut -c11-12)$(echo "$hex" | cut -c9-10)
	echo "$1:$NAMEEV:$2:$3:$2 $1:$((1 << 22)):$lo:$hi:$2 $1:$(((1 << 22) | (1 << 23) | (1 << 24))):0:0:$2"
}
for m in X Y; do
	mkdir -p "$T/mm/$m"
	echo 1 >"$T/mm/$m/.session"
done
printf 'ffffffff81000000 T _text\nffffffff81001000 t x_only_fn\n' >"$T/mm/X/trace.kallsyms"
printf 'ffffffff81000000 T _text\nffffffff81001000 t y_only_fn\n' >"$T/mm/Y/trace.kallsyms"
printf '           CPU0\n 24:          1   IO-APIC   5-edge      x-dev\n' >"$T/mm/X/trace.irqs"
printf '           CPU0\n 24:          1   IO-APIC   5-edge      y-dev\n' >"$T/mm/Y/trace.irqs"
# shellcheck disable=SC2046
$MKTRACE "$T/mm/X/trace.cpu0" --cpu 0 $(nameev 1000 500 500 alpha) \
	"2000:$TIMER:0:1:500" "2000:$((CONT_END | (1 << 10))):$((0x81001010)):$((0xffffffff)):500" \
	"3000:$IRQ:24:35:500"
# shellcheck disable=SC2046
$MKTRACE "$T/mm/Y/trace.cpu0" --cpu 0 $(nameev 1500 500 500 beta) \
	"2500:$TIMER:0:1:500" "2500:$((CONT_END | (1 << 10))):$((0x81001020)):$((0xffffffff)):500" \
	"3500:$IRQ:24:35:500"
"$ROOT/$O/tools/dtrace" --no-pager "$T/mm" >"$T/mm.out" 2>"$T/err"
ok $? "dtrace of two hand-made machines" "$(cat "$T/err")"
TAP_ERR=$T/mm.out check "tid 500 is alpha on X and beta on Y" \
	'grep "^X " "$T/mm.out" | grep -q "alpha-500 .*timer:expire" &&
	 grep "^Y " "$T/mm.out" | grep -q "beta-500 .*timer:expire" &&
	 ! grep "^X " "$T/mm.out" | grep -q beta && ! grep "^Y " "$T/mm.out" | grep -q alpha'
TAP_ERR=$T/mm.out check "each machine's kallsyms names its own timer function" \
	'grep "^X " "$T/mm.out" | grep -q "function x_only_fn+0x10$" &&
	 grep "^Y " "$T/mm.out" | grep -q "function y_only_fn+0x20$"'
TAP_ERR=$T/mm.out check "each machine's irqs name its own irq 24" \
	'grep "^X " "$T/mm.out" | grep -q "irq 24 (x-dev) entry" &&
	 grep "^Y " "$T/mm.out" | grep -q "irq 24 (y-dev) entry"'
"$ROOT/$O/tools/dtrace" --no-pager -S "$T/mm" >"$T/mm.S" 2>"$T/err"
TAP_ERR=$T/mm.S check "-S counts alpha-500 and beta-500 apart (3 events each)" \
	'grep -Eq "alpha-500 +3$" "$T/mm.S" && grep -Eq "beta-500 +3$" "$T/mm.S"'

# A clock that really drifts: sender C's CLOCK_MONOTONIC runs 300 ppm fast
# and 5 s ahead (the fake device's KTFAKE_CLOCK_PPM / _OFFSET: its probes,
# its files' reference times, its TSC rate all follow it), D's is true.
# Ground truth: collector = (C's clock - 5e9) / (1 + 300e-6), so the offset
# at C's time m is that minus m and the drift -300 / 1.0003 ppm; dtrace's
# bounds must cover them, and packets C -> D and D -> C (loopback, marks
# on the real TSC) must keep their order, which an uncorrected 300 ppm
# (1.5 ms over the run) or 5 s would break.
collector_start
check "a collector on loopback for C and D" '[ -n "$CPORT" ]'
: >"$T/C.marks"; : >"$T/D.marks"
drift_sender() {	# NAME [ENV...]
	local name=$1
	shift
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/$name.dev" KTRACE_DEV="$T/$name.dev" \
	    KTFAKE_STATE="$T/$name.state" KTFAKE_CPUS=1 KTFAKE_RATE=0 \
	    KTFAKE_MARKS="$T/$name.marks" "$@" timeout -k 2 60 "$KTRACE" --name "$name" \
	    --send "127.0.0.1:$CPORT" --send-wait 10 -e user -w 10 -d 6 2>"$T/$name.err" &
}
drift_sender C KTFAKE_CLOCK_PPM=300 KTFAKE_CLOCK_OFFSET=5000000000
pc=$!
drift_sender D
pd=$!
sleep 1.5
N=40
"$PINGPONG" recv 7778 $N "$T/D.marks" &
pr=$!
sleep 0.2
"$PINGPONG" send 127.0.0.1 7778 $N "$T/C.marks"
ok $? "C sent $N packets to D"
wait $pr
"$PINGPONG" recv 7779 $N "$T/C.marks" &
pr=$!
sleep 0.2
"$PINGPONG" send 127.0.0.1 7779 $N "$T/D.marks"
ok $? "D sent $N packets to C"
wait $pr
wait $pc
TAP_ERR=$T/C.err check "sender C (its clock off) exits 0" '[ $? -eq 0 ]'
wait $pd
TAP_ERR=$T/D.err check "sender D exits 0" '[ $? -eq 0 ]'
collector_stop
rm -rf "$T/coll/A" "$T/coll/B" "$T/coll/.previous"
"$ROOT/$O/tools/dtrace" --machines "$T/coll" >"$T/machines" 2>"$T/err"
ok $? "dtrace --machines of C and D" "$(cat "$T/err")"
python3 - "$T/machines" >"$T/drift" 2>&1 <<'PY'
import sys
p, off = 300e-6, 5e9
rows = {l.split()[0]: l.split() for l in open(sys.argv[1]).readlines()[1:]}
c, d = rows['C'], rows['D']
offset, drift, bound, at, drift_bound = (float(c[i]) for i in (3, 4, 5, 7, 8))
true_offset = (at - off) / (1 + p) - at
true_drift = (1 / (1 + p) - 1) * 1e6
print(f'C: offset {offset:.0f} (true {true_offset:.0f}) +- {bound:.0f} ns at {at:.0f}; '
      f'drift {drift:.3f} ppm (true {true_drift:.3f}) +- {drift_bound:.3f}')
ok = abs(offset - true_offset) <= bound and abs(drift - true_drift) <= drift_bound
# D's clock is the collector's: offset 0 within its bound
ok = ok and abs(float(d[3])) <= float(d[5])
print(f'D: offset {d[3]} +- {d[5]} (true 0)')
sys.exit(0 if ok else 1)
PY
ok $? "C's offset and drift: the truth within dtrace's bounds; D's offset 0 within its" \
	"$(cat "$T/drift")"
echo "# $(tr '\n' ' ' <"$T/drift")"
"$ROOT/$O/tools/dtrace" --no-pager --tsc -e user "$T/coll" >"$T/merged2" 2>"$T/err"
python3 - "$T/merged2" "$T/machines" $N >"$T/causal2" 2>&1 <<'PY'
import sys
merged, machines, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
bound = {l.split()[0]: float(l.split()[5]) for l in open(machines).readlines()[1:]}
at = {}
for i, line in enumerate(open(merged)):
    f = line.split()
    if 'mark' in f:
        # packet of C -> D: sent on C; of D -> C: sent on D
        machine, kind, num = f[0], int(f[-2]), int(f[-1])
        src = machine if kind == 1 else ('D' if machine == 'C' else 'C')
        at[(src, num, kind)] = (i, int(f[2]))
gaps = [at[(s, k, 2)][1] - at[(s, k, 1)][1] for s in 'CD' for k in range(1, n + 1)]
late = [(s, k) for s in 'CD' for k in range(1, n + 1) if at[(s, k, 2)][0] < at[(s, k, 1)][0]]
print(f'{len(gaps)} packets; smallest send-to-receive gap {min(gaps)} ns; '
      f'received before sent: {late}; bounds {bound}')
sys.exit(0 if len(gaps) == 2 * n and (not late or -min(gaps) <= bound['C'] + bound['D']) else 1)
PY
ok $? "C's clock off: every receive after its send (or within the bounds)" "$(cat "$T/causal2")"
echo "# $(cat "$T/causal2")"
done_testing
