#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace --send: several senders stream to one ktrace --listen on loopback;
# every record each sender's (fake) kernel produced is in the collector's
# files or counted by a lost marker there, in order and once.  Ground
# truth: the fake device's own counts of the records it produced and
# dropped, against the files decoded by collect-count.py (not ktrace's
# library); dtrace -S of the collector's directory agrees with them.
. "$(dirname "$0")/collect-common.sh"

collector_start
ok $? "the collector listens" "$(cat "$T/coll.err")"

# a: plain; b: 2 CPUs, faster; c: a small buffer at a high rate (the
# kernel loses records: its lost markers must arrive counted)
KTFAKE_RATE=20000 sender a --send "127.0.0.1:$CPORT" -e sched -d 2
pa=$SPID
KTFAKE_CPUS=2 KTFAKE_RATE=100000 sender b --send "127.0.0.1:$CPORT" -e sched -d 2
pb=$SPID
KTFAKE_RATE=400000 sender c --send "127.0.0.1:$CPORT" -e sched -b 256 -w 50 -d 2
pc=$SPID
wait $pa; ra=$?; wait $pb; rb=$?; wait $pc; rc_c=$?
check "sender a exits 0" '[ $ra -eq 0 ]' 
TAP_ERR=$T/b.err check "sender b exits 0" '[ $rb -eq 0 ]'
TAP_ERR=$T/c.err check "sender c exits 0" '[ $rc_c -eq 0 ]'

for m in a b c; do
	counts $m
	ok $? "machine $m: every record delivered or counted, in order, once" "$(cat "$T/$m.count")"
done
check "machine c's kernel lost records (the case is tested)" \
	'awk "{ l += \$3 } END { exit !(l > 0) }" "$T/c.stats"'
check "the collector wrote one directory per machine" \
	'[ -d "$T/coll/a" ] && [ -d "$T/coll/b" ] && [ -d "$T/coll/c" ]'
check "the machine's clock probes are recorded" '[ -s "$T/coll/a/trace.clock" ]'
check "the wire carries at most a quarter of the records' bytes" \
	'grep -q "sent .* bytes for .* bytes of records" "$T/a.err" &&
	 awk "/sent .* frames/ { sub(/%\\)/, \"\", \$0); split(\$0, w, \"(\"); if (w[2] + 0 > 25) exit 1 }" "$T/a.err"'

# dtrace reads the collector's directory as every machine's files
"$ROOT/$O/tools/dtrace" -S "$T/coll" >"$T/sum" 2>"$T/dterr"
ok $? "dtrace -S of the collector's directory exits 0" "$(cat "$T/dterr")"
events=$(awk '{ w += $2 } END { print w }' "$T"/[abc].stats)
lost=$(awk '{ l += $3 } END { print l }' "$T"/[abc].stats)
check "dtrace counts every event of the three machines" \
	'grep -q "^events  *$events in 10 files" "$T/sum"'
check "dtrace counts the lost records the markers say" 'grep -q "^lost  *$lost records" "$T/sum"'
"$ROOT/$O/tools/dtrace" --machine b -S "$T/coll" >"$T/sumb" 2>"$T/dterr"
check "--machine b: only b's events" \
	'grep -q "^events  *$(awk "{ w += \$2 } END { print w }" "$T/b.stats") in" "$T/sumb"'
"$ROOT/$O/tools/dtrace" "$T/coll" 2>"$T/dterr" | head -1 >"$T/line"
check "the listing names each event's machine first" 'grep -q "^[abc]  *[0-9]" "$T/line"'

collector_stop

# usage errors: exit 2, naming the option
fk --send nohostport -e sched -d 1
check "--send without a port is a usage error" '[ $rc -eq 2 ] && has_err "--send nohostport: not HOST:PORT"'
fk --spool "$T/sp" -e sched -d 1
check "--spool without --send is a usage error" '[ $rc -eq 2 ] && has_err "only with --send"'
fk --send 127.0.0.1:1 --name ../x -e sched -d 1
check "a machine name with a slash is refused" '[ $rc -eq 2 ] && has_err "--name ../x"'
fk --listen 127.0.0.1:1 -e sched
check "--listen records nothing itself" '[ $rc -eq 2 ] && has_err "--listen: the collector records nothing"'
fk --send 127.0.0.1:1 -o x -e sched -d 1
check "-o with --send is a usage error" '[ $rc -eq 2 ] && has_err "-o: not with --send"'
fk --send 127.0.0.1:1 --spool-size 1K -e sched -d 1
check "--spool-size below 64K is refused" '[ $rc -eq 2 ] && has_err "--spool-size 1K"'
done_testing
