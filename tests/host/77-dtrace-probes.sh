#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Probe hits decoded with BASE.probes: every view says the same name and
# values of the same record, and a bad BASE.probes is an error naming its
# file and line.
# Ground truth: probe-model.py chooses each value (every type u8..s64,
# x8..x64, strN; extremes; a string with a quote, a backslash, a control
# character, DEL, a byte that is not UTF-8 and a UTF-8 one), writes the
# records as the kernel's ABI lays them out (include/uapi/linux/ktrace.h:
# arg1 the missing mask, words from arg2 on, CONT records after) and says,
# from the values it chose, what each hit must print: the listing's text,
# Perfetto's fields, CTF's fields (babeltrace2 reads them back), -S counts.
# The trace has a probe of 16 values over 8 CONT records, missing values,
# a hit whose CONT records were lost (its chain cut short, a lost marker
# after it: the values past it print as missing), probe ids BASE.probes
# lacks (probe:ID and the record's words), a return probe with spaces in
# its name, and a hit inside a user thread's call (--calltree).
. "$(dirname "$0")/dtrace-mktrace.sh"
MODEL="python3 $ROOT/tests/host/probe-model.py"

$MODEL decode "$TMP" || exit 1
CPUS="t.cpu0 t.cpu1"

# --- every view, against the model --------------------------------------------
dt --tsc $CPUS
check "listing: each hit's name and values are the model's" \
	'[ $rc -eq 0 ] && $MODEL check-listing "$TMP" out >"$TAP_ERR"'
check "BASE.probes found beside the files: no warning" '[ ! -s err ]'
cp out listing
dt --tsc -j 1 $CPUS
check "the same on one thread" 'cmp -s out listing'
dt --tsc -j 2 $CPUS
check "the same on worker threads (-j 2)" 'cmp -s out listing'
dt -S $CPUS
check "-S counts each probe by its name" \
	'[ $rc -eq 0 ] && $MODEL check-summary "$TMP" out >"$TAP_ERR"'
dt --format=perfetto-json $CPUS
check "Perfetto: each hit's name, text and fields are the model's" \
	'[ $rc -eq 0 ] && $MODEL check-perfetto "$TMP" out >"$TAP_ERR"'
dt --format=ctf -o ctf $CPUS
ok $rc "--format=ctf writes the trace" "$(cat err)"
babeltrace2 --clock-cycles --no-delta ctf >bt 2>bt.err
check "babeltrace2 reads the probes' event classes (valid metadata)" \
	'[ $? -eq 0 ] && ! grep -v "^WARNING: Tracer discarded 4 events" bt.err >"$TAP_ERR"'
check "CTF: each hit's class is the probe's name, its fields the model's values" \
	'$MODEL check-ctf "$TMP" bt >"$TAP_ERR"'
check "CTF: the hit with lost CONT records has its missing mask" \
	'grep -q "missing = 0x3FF8," bt'
dt --calltree $CPUS t.u5000
check "--calltree: the hit in a call, as the listing says it" \
	'grep -q "^ *| *\/\* probe:OSD::dequeue_op tid=0x1388 name=\"in a call\" \*\/$" out'

# --- without BASE.probes, --raw, named elsewhere ----------------------------------
mv t.probes saved.probes
dt $CPUS
check "without BASE.probes: probe:ID and the record's words" \
	'[ $rc -eq 0 ] && grep -q " probe:1  *event 0x01040000 args 0x" out &&
	 ! grep -q "probe:OSD" out'
check "one warning, naming the file it looked for" \
	'[ "$(wc -l <err)" -eq 1 ] && grep -q "^dtrace: warning: .*t\.probes: no such file" err'
dt -e sched $CPUS
check "no warning when no hit is shown" '[ $rc -eq 0 ] && [ ! -s err ]'
dt --tsc --probes saved.probes $CPUS
check "--probes FILE names them" '[ $rc -eq 0 ] && cmp -s out listing && [ ! -s err ]'
dt --tsc $CPUS saved.probes
check "a .probes file among the arguments is taken as BASE.probes" \
	'[ $rc -eq 0 ] && cmp -s out listing'
mv saved.probes t.probes
dt --raw $CPUS
check "--raw: numbers, no names, no warning" \
	'[ $rc -eq 0 ] && grep -q "probe:1  *event 0x01040000" out && ! grep -q "probe:OSD" out &&
	 [ ! -s err ]'
dt --probes nonexistent.probes $CPUS
check "--probes with a file that is not there: an error naming it" \
	'[ $rc -eq 1 ] && grep -q "^dtrace: nonexistent.probes: No such file" err'

# --- the longest hit: 16 values of 64-byte names, 32 words ---------------------------
{
	printf 'probe\t7\tentry\t-\t0x10\t/bin/x\t%s\n' "$(printf 'N%.0s' $(seq 256))"
	for i in $(seq 10 23); do
		printf 'value\t7\t%d\tu64\t%s%d\n' $((i - 10)) "$(printf 'v%.0s' $(seq 62))" $i
	done
	for i in 14 15; do
		printf 'value\t7\t%d\tstr8\t%s%d\n' $i "$(printf 's%.0s' $(seq 62))" $i
	done
} >big.probes
recs="100:$(((1 << 18) | (7 << 24))):0:0xffffffff"
for i in $(seq 0 15); do
	recs="$recs 100:$(((1 << 22) | (i << 24) | (i == 15 ? 1 << 23 : 0))):0xffffffff:0xffffffff"
done
$MKTRACE big.cpu0 $recs
dt --probes big.probes -j 2 big.cpu0
check "the longest hit prints whole, on worker threads too" \
	'[ $rc -eq 0 ] && [ "$(wc -l <out)" -eq 1 ] && grep -q "probe:N\{200\} .*v\{62\}23=18446744073709551615 s\{62\}14=\"\\\\xff" out'

# --- a hostile BASE.probes ---------------------------------------------------------
P=$(printf 'probe\t1\tentry\t-\t0x10\t/bin/x\tf')
bad() {
	local what=$1 line=$2 msg=$3

	printf '%s\n' "${@:4}" >h.probes
	dt --probes h.probes $CPUS
	check "bad BASE.probes, $what: line $line named, exit 1" \
		'[ $rc -eq 1 ] && grep -q "^dtrace: h.probes:$line: $msg" err && [ ! -s out ]'
}
T=$'\t'
bad "id 0" 1 "bad probe id '0'" "probe${T}0${T}entry$T-${T}0x10$T/bin/x${T}f"
bad "id 256" 1 "bad probe id '256'" "probe${T}256${T}entry$T-${T}0x10$T/bin/x${T}f"
bad "id not a number" 2 "bad probe id '1x'" "# ktrace probes 1" \
	"probe${T}1x${T}entry$T-${T}0x10$T/bin/x${T}f"
bad "an id twice" 2 "probe 1 defined twice" "$P" "$P"
bad "kind" 1 "bad probe kind 'exit'" "probe${T}1${T}exit$T-${T}0x10$T/bin/x${T}f"
bad "build id" 1 "bad build id 'XYZ'" "probe${T}1${T}entry${T}XYZ${T}0x10$T/bin/x${T}f"
bad "offset" 1 "bad offset '16'" "probe${T}1${T}entry$T-${T}16$T/bin/x${T}f"
bad "fields" 1 "a probe line has 7 fields" "probe${T}1${T}entry$T-${T}0x10$T/bin/x"
bad "type u7" 2 "bad value type 'u7'" "$P" "value${T}1${T}0${T}u7${T}v"
bad "type str0" 2 "bad string size '0'" "$P" "value${T}1${T}0${T}str0${T}v"
bad "type str65" 2 "bad string size '65'" "$P" "value${T}1${T}0${T}str65${T}v"
bad "value before its probe" 1 "value of probe 1 before its probe line" \
	"value${T}1${T}0${T}u8${T}v"
bad "index out of order" 2 "value 1 of probe 1 out of order (expected 0)" "$P" \
	"value${T}1${T}1${T}u8${T}v"
bad "index 16" 2 "bad value index '16'" "$P" "value${T}1${T}16${T}u8${T}v"
bad "two values of one name" 3 "probe 1 has two values named 'v'" "$P" \
	"value${T}1${T}0${T}u8${T}v" "value${T}1${T}1${T}u8${T}v"
bad "more than 32 words" 4 "probe 1's values take more than 32 words" "$P" \
	"value${T}1${T}0${T}str64${T}a" "value${T}1${T}1${T}str64${T}b" "value${T}1${T}2${T}u8${T}c"
bad "a name of 300 bytes" 1 "probe name of 300 bytes" \
	"probe${T}1${T}entry$T-${T}0x10$T/bin/x$T$(printf 'n%.0s' $(seq 300))"
bad "a value name with a control character" 2 "value name with a control character" \
	"$P" "value${T}1${T}0${T}u8${T}a$(printf '\033')b"
bad "a line of 5000 bytes" 1 "line of 5001 bytes" "#$(printf 'x%.0s' $(seq 4999))"
printf '%s\nvalue\t1\t0\tu8\tv\0w\n' "$P" >h.probes
dt --probes h.probes $CPUS
check "bad BASE.probes, a NUL byte: line 2 named, exit 1" \
	'[ $rc -eq 1 ] && grep -q "^dtrace: h.probes:2: a NUL byte" err'
printf '# ktrace probes 1\nlater\tkind\nprobe\t1\tentry\t-\t0x10\t/bin/x\tf\nother\tkind\n' >h.probes
dt --probes h.probes $CPUS
check "lines of an unknown kind: skipped, one warning naming the first" \
	'[ $rc -eq 0 ] && [ "$(grep -c warning err)" -eq 1 ] &&
	 grep -q "^dtrace: warning: h.probes:2: a line of an unknown kind .later." err &&
	 grep -q " probe:f  *$" out'
done_testing
