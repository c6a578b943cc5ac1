#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ktrace command line and recording, on the host (TAP).
#
# Part 1 needs no device: option errors, group and CPU syntax, the missing
# /dev/ktrace message, -l, --help against the man page.
# Part 2 preloads ktrace-cli-fakedev.c, a stand-in for /dev/ktrace with the
# device's semantics (KTRACE_DEV points ktrace at it), and records: files,
# mask restore, -- command, signals, lost records, disk full.
# The real device is tested in the VM by tests/vm/50-ktrace-tool.sh.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
KTRACE=${KTRACE:-$ROOT/$O/tools/ktrace}
DTRACE=${DTRACE:-$ROOT/$O/tools/dtrace}
T=$(mktemp -d /tmp/ktrace-cli.XXXXXX)
TAP_ERR=$T/err	# what a failed check shows
MNT=
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

has_err() { grep -qF -- "$1" "$T/err"; }
has_out() { grep -qF -- "$1" "$T/out"; }

# kt ARGS: run ktrace; fk ARGS: run it on the fake device
kt() { "$KTRACE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
fk() {
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" \
	    KTFAKE_STATE="$T/state" "$KTRACE" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}
# fails ARGS-FUNC PATTERN DESC ...: non-zero exit and PATTERN in stderr
fails() {
	f=$1 pat=$2 d=$3; shift 3
	$f "$@"
	check "$d" '[ $rc -ne 0 ] && has_err "$pat"'
}

# whole_file FILE CPU: a trace file of CPU, header and whole records only
whole_file() {
	[ -f "$1" ] || return 1
	size=$(stat -c %s "$1")
	[ "$(head -c 8 "$1" | tr '\r\n' 'RN')" = "KTRACERN" ] &&
	[ "$(od -An -t d4 -j 24 -N 4 "$1" | tr -d ' ')" = "$2" ] &&
	[ "$size" -ge 512 ] && [ $(((size - 512) % 24)) -eq 0 ]
}
records() { echo $((($(stat -c %s "$1") - 512) / 24)); }
# field FILE OFFSET LENGTH: a NUL-padded string of the header
field() { dd if="$1" bs=1 skip="$2" count="$3" 2>/dev/null | tr -d '\0'; }
u32() { od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }

[ -x "$KTRACE" ] || skip_all "$KTRACE not built"

# ---- part 1: no device ---------------------------------------------------
kt --help
check "--help exits 0 and shows the usage" '[ $rc -eq 0 ] && has_out "Usage: ktrace"'
missing=
for opt in $(grep -o -- '--[a-z]*=\?' "$T/out" | tr -d '=' | sort -u); do
	grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$ROOT/ktrace/ktrace.1" ||
		missing="$missing $opt"
done
check "every --help option is in the man page${missing:+ (missing$missing)}" '[ -z "$missing" ]'
kt --version
check "--version" '[ $rc -eq 0 ] && has_out "ktrace "'
fails kt "ktrace: unknown option '-x'" "bad short option" -x
fails kt "ktrace: unknown option '--bogus'" "bad long option" --bogus
fails kt "ktrace: option '-e' needs an argument" "missing argument" -e
fails kt "no group 'foo'" "unknown group" -e sched,foo
fails kt "no group 'bar'" "unknown group after +" -e +bar
fails kt "ktrace: bad cpu list '3-1'" "bad CPU range" -c 3-1
fails kt "ktrace: bad cpu list '1,'" "bad CPU list" -c 1,
fails kt "ktrace: -w 0:" "bad -w" -w 0
fails kt "ktrace: -d x:" "bad -d" -d x
fails kt "ktrace: -b 8:" "-b below the minimum" -b 8
fails kt "ktrace: nothing to do" "no action" -q
export KTRACE_DEV="$T/nonexistent"
fails kt "ktrace: $T/nonexistent missing: the ktrace module is not loaded (as root: modprobe ktrace" \
	"missing device names the fix, modprobe ktrace" -s
unset KTRACE_DEV
KTRACE_DEV=/dev/null fails kt "ktrace: /dev/null: not a ktrace device" "not a ktrace device" -s
kt -l
check "-l lists groups and events" '[ $rc -eq 0 ] && has_out sched && has_out workqueue &&
	has_out "context switch from task"'

# ---- part 2: the fake device ---------------------------------------------
FAKE="$ROOT/$O/tests/ktrace-cli-fakedev.so"
if ! make -s -C "$ROOT" O="$O" "$O/tests/ktrace-cli-fakedev.so" >"$T/err" 2>&1; then
	rc=1; check "build the fake device" false
	done_testing
	exit 1
fi
cd "$T" || exit 1

KTFAKE_EACCES=1 fails fk "ktrace: $T/dev: Permission denied: ktrace needs root" "not root" -s
fk -e sched,thread -s
check "-e sets the mask, -s shows it" '[ $rc -eq 0 ] && has_out "0x00000003 sched,thread"'
fk -e +irq,-thread -s
check "-e +irq,-thread changes it" '[ $rc -eq 0 ] && has_out "0x00000009 sched,irq"'
fk -s
check "-s shows every CPU" '[ $rc -eq 0 ] && [ "$(grep -c " online " "$T/out")" -eq 4 ]'

fk -e thread -c 0-1 -d 0.3 -o t
check "record 2 CPUs for 0.3 s" '[ $rc -eq 0 ]'
check "t.cpu0 and t.cpu1 are whole trace files" 'whole_file t.cpu0 0 && whole_file t.cpu1 1'
check "header: release, host, boot id, version, mask, TSC rate, time reference" \
	'[ "$(field t.cpu0 120 65)" = "$(uname -r)" ] && [ "$(field t.cpu0 185 65)" = "$(uname -n)" ] &&
	 [ "$(field t.cpu0 80 40)" = "$(cat /proc/sys/kernel/random/boot_id)" ] &&
	 [ -n "$(field t.cpu0 250 16)" ] && [ "$(u32 t.cpu0 72)" = 2 ] &&
	 [ "$(u64 t.cpu0 40)" = 1000000000 ] &&
	 [ $(($(u64 t.cpu0 64) / 1000000000 - $(date +%s))) -le 0 ] &&
	 [ $(($(u64 t.cpu0 64) / 1000000000 - $(date +%s))) -ge -10 ]'
check "no file for CPUs not asked for" '[ ! -e t.cpu2 ]'
check "records were written" '[ "$(records t.cpu0)" -gt 50 ]'
check "summary per CPU matches the file" \
	'has_err "cpu 1: $(records t.cpu1) records, 0 lost, $(stat -c %s t.cpu1) bytes in t.cpu1"'
fk -s
check "the mask found at start is back after recording" 'has_out "0x00000009 sched,irq"'

fails fk "ktrace: cpu 9 out of range (0-3)" "CPU that does not exist" -c 9 -d 0.1
KTFAKE_OFFLINE=2 fails fk "ktrace: -c 1-3: CPU 2 is offline" "offline CPU" -c 1-3 -d 0.1
rm -f t.cpu*
KTFAKE_OFFLINE=2 fk -c all -d 0.1 -o t
check "-c all records the online CPUs" '[ $rc -eq 0 ] && [ -f t.cpu3 ] && [ ! -e t.cpu2 ]'
KTFAKE_BUSY=1 fails fk "ktrace: cpu 1: already has a reader" "CPU with a reader" -c 0,1 -d 0.1

fk -e sched -o c -- sh -c 'exit 3'
check "-- command: its exit status" '[ $rc -eq 3 ] && whole_file c.cpu3 3'
fails fk "ktrace: no-such-command-kt: No such file or directory" \
	"-- command not found" -o c -- no-such-command-kt
check "... exits 127" '[ $rc -eq 127 ]'

# SIGINT: stop, drain, complete files, exit 0
env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" KTFAKE_STATE="$T/state" \
	"$KTRACE" -c 0 -o i >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.4
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 0, file whole, summary" '[ $rc -eq 0 ] && whole_file i.cpu0 0 &&
	has_err "cpu 0: $(records i.cpu0) records"'

# SIGTERM with a command: passed on to it, exit status 128 + 15
start=$(date +%s)
env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" KTFAKE_STATE="$T/state" \
	"$KTRACE" -o s -- sleep 20 >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.4
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM reaches the command (exit 143), files whole" \
	'[ $rc -eq 143 ] && [ $(($(date +%s) - start)) -lt 10 ] && whole_file s.cpu0 0'

# 16 records fill in 0.8 ms, faster than the fake ppoll() looks (5 ms)
KTFAKE_RATE=20000 fk -b 16 -e sched -c 0 -d 0.35 -o l
check "lost records reported as they happen" '[ $rc -eq 0 ] &&
	has_err "ktrace: warning: cpu 0:" && has_err "records lost (buffer full)"'
check "summary counts them" 'has_err "cpu 0: " && ! grep -q "cpu 0: .* 0 lost" "$T/err"'
fk -b 1000 -s
check "-b rounds up to a power of two" \
	'has_err "rounded up to 1024" && has_out "1024 records per CPU"'
fk -q -c 0 -d 0.1 -o q
check "-q: no summary" '[ $rc -eq 0 ] && [ ! -s "$T/err" ]'

fails fk "ktrace: $T/nodir/t.cpu0: No such file or directory" "unwritable output" \
	-c 0 -d 0.1 -o "$T/nodir/t"
ln -s /dev/full full.cpu0
fails fk "ktrace: full.cpu0: exists and is not a regular file" \
	"a link (to a device) where a file goes: refused, not followed" -c 0 -d 0.1 -o full
check "... the link is not removed" '[ -L full.cpu0 ] && [ -c /dev/full ]'

# a full file system: every whole record written stays, the file stays readable
mkdir -p mnt
if mount -t tmpfs -o size=64k ktrace-cli mnt 2>/dev/null; then
	MNT="$T/mnt"
	dd if=/dev/zero of=mnt/fill bs=1k count=64 2>/dev/null
	fails fk "ktrace: mnt/h.cpu0: No space left on device" "disk full while writing the header" \
		-c 0 -d 0.1 -o mnt/h
	check "... no file without a whole header is left" '[ ! -e mnt/h.cpu0 ]'
	rm -f mnt/fill
	KTFAKE_RATE=50000 fails fk \
		"ktrace: mnt/t.cpu0: No space left on device; the file keeps its first" \
		"disk full while recording" -b 4096 -e sched -c 0,1 -o mnt/t -d 2
	check "... the file is cut back to the last whole record" 'whole_file mnt/t.cpu0 0 &&
		has_err "first $(records mnt/t.cpu0) records"'
	umount mnt && MNT=
else
	skip "disk full while recording" "cannot mount a tmpfs"
fi

# /proc/kallsyms and /proc/interrupts saved beside the files (KTFAKE_PROC
# stands in for /proc; without it the fake device has neither, quietly)
check "no /proc copies where there is no /proc file, nothing said" \
	'[ ! -e t.kallsyms ] && [ ! -e t.irqs ] && ! has_err kallsyms && ! has_err interrupts'
mkdir proc
printf 'ffffffff81000000 T _stext\nffffffff8142d130 t hrtimer_wakeup\nffffffffc0001000 t x_init\t[x]\n' \
	>proc/kallsyms
printf '           CPU0       CPU1\n 38:   0  6275  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n' \
	>proc/interrupts
KTFAKE_PROC=$T/proc fk -c 0 -d 0.1 -o m
check "kallsyms and interrupts saved as BASE.kallsyms and BASE.irqs, mode 0600" \
	'[ $rc -eq 0 ] && cmp -s proc/kallsyms m.kallsyms && cmp -s proc/interrupts m.irqs &&
	 [ "$(stat -c %a m.kallsyms) $(stat -c %a m.irqs)" = "600 600" ]'
sed 's/^[0-9a-f]*/0000000000000000/' proc/kallsyms >proc/k0 && mv proc/k0 proc/kallsyms
rm -f m.*
KTFAKE_PROC=$T/proc fk -c 0 -d 0.1 -o m
check "kallsyms without addresses (kptr_restrict): not saved, said once" \
	'[ $rc -eq 0 ] && [ ! -e m.kallsyms ] && [ -f m.irqs ] &&
	 [ "$(grep -c "kptr_restrict" "$T/err")" = 1 ]'
printf 'ffffffff81000000 T _stext\n' >proc/kallsyms
ln -s "$T/victim" m.kallsyms
KTFAKE_PROC=$T/proc fk -c 0 -d 0.1 -o m
check "a link planted at BASE.kallsyms is not followed (warning, recording goes on)" \
	'[ $rc -eq 0 ] && [ -L m.kallsyms ] && [ ! -e "$T/victim" ] && has_err "m.kallsyms: exists" &&
	 whole_file m.cpu0 0'

if [ -x "$DTRACE" ]; then
	"$DTRACE" t.cpu0 t.cpu1 l.cpu0 >"$T/out" 2>"$T/err"; rc=$?
	check "dtrace reads what ktrace wrote, lost markers too" \
		'[ $rc -eq 0 ] && has_out "sched:switch" && has_out "records lost"'
else
	skip "dtrace reads what ktrace wrote" "dtrace not built"
fi

done_testing
