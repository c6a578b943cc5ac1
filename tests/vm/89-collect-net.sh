#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace --send from the guest over QEMU user networking to a collector on
# the host (scripts/check-stock-net.sh boots it with VM_NET=user and
# kt_collect=PORT; the guest reaches the host at 10.0.2.2).  The NIC's
# driver and what it needs come from the stock kernel's own modules, put in
# /stock as net-NN-NAME.ko in load order.  This test prints ktrace's own
# counts ("cpu N: R records, L lost": the kernel's lost counters) of two
# recordings, one of them losing records in a buffer of 16; the host checks
# the collector's files against them.  Numeric address: the static
# ktrace's getaddrinfo never needs NSS for it.

NAME=collect-net
. "$(dirname "$0")/tap-common.sh"

[ -n "${kt_collect:-}" ] || skip_all "no collector (kt_collect=PORT: scripts/check-stock-net.sh)"
for m in /stock/net-*.ko; do
	[ -f "$m" ] || skip_all "no NIC driver modules in /stock"
	insmod "$m" 2>>"$T/err" || echo "# insmod $m: $(cat "$T/err")"
done
ip link set eth0 up 2>"$T/err" && ip addr add 10.0.2.15/24 dev eth0 2>>"$T/err"
ok $? "eth0 up at 10.0.2.15 (virtio_net from the stock kernel's modules)" "$(cat "$T/err"; ip addr)"
"$KTRACE" --send "10.0.2.2:$kt_collect" --name guest --send-wait 60 -e sched,syscall \
	-d 3 >"$T/out" 2>"$T/err"
rc=$?
ok $rc "ktrace --send 10.0.2.2:$kt_collect exits 0" "$(cat "$T/err")"
check "the spool never filled: nothing dropped by the sender" \
	'grep -q " 0 records dropped (spool full)" "$T/err"'
# for the host: the kernel's counts as ktrace read them
sed -n 's/^ktrace: \(cpu [0-9]*: [0-9]* records, [0-9]* lost\),.*/# count \1/p' "$T/err"
check "ktrace printed a count per CPU" '[ "$(grep -c "^ktrace: cpu [0-9]*: " "$T/err")" -ge 1 ]'
# A small buffer (-b 16) under a syscall storm: the kernel loses records,
# its lost markers must arrive counted (machine "lossy").
"$KTRACE" --send "10.0.2.2:$kt_collect" --name lossy --send-wait 60 -e sched,syscall \
	-b 16 -w 12 -- dd if=/dev/zero of=/dev/null bs=1 count=100000 >"$T/out" 2>"$T/err"
ok $? "ktrace --send -b 16 of a syscall storm exits 0" "$(cat "$T/err")"
sed -n 's/^ktrace: \(cpu [0-9]*: [0-9]* records, [0-9]* lost\),.*/# lossy \1/p' "$T/err"
check "the kernel lost records (the case is tested)" \
	'grep -Eq "^ktrace: cpu [0-9]+: [0-9]+ records, [1-9][0-9]* lost" "$T/err"'
done_testing
