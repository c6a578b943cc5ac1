#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Files named by a trace are hostile: a map file, the objects it names and
# the BASE.kallsyms / BASE.irqs / BASE.pidN.maps found beside the streams
# may be a device (/dev/ptmx, /dev/null), a FIFO, a directory or a link to
# a device.  dtrace must not open any of them for reading: opening runs a
# driver's open and release (as root: /dev/watchdog, a tape rewinding), and
# a FIFO must not block it.  Checked by the system calls made (strace):
#  - no open/openat of a special file or a link to one without O_PATH;
#  - the only regular file read among them (the good map) is reopened;
#  - the same for the debug file an ELF's .gnu_debuglink names;
#  - dtrace ends (timeout), exits 0 for files found beside the trace, with a
#    warning naming the file; a --kallsyms naming a device is an error.
. "$(dirname "$0")/dtrace-mktrace.sh"

if ! command -v strace >/dev/null || ! strace -qq -o /dev/null true 2>/dev/null; then
	skip_all "strace missing or not allowed here"
fi

# st ARGS: dtrace under strace; the opens in trace.log, out/err/rc
st() {
	timeout -k 2 30 strace -f -qq -e trace=open,openat,openat2 -o trace.log \
		"$DTRACE" "$@" >out 2>err
	rc=$?
}
# opened NAME: an open of NAME (its last path component) without O_PATH
opened() { grep -E "open(at2?)?\(.*[\"/]$1\"" trace.log | grep -v O_PATH; }
# none_opened NAME...: none of them opened without O_PATH
none_opened() {
	for f in "$@"; do
		[ -z "$(opened "$f")" ] || { echo "# opened: $(opened "$f")"; return 1; }
	done
}

mkfifo fifo
mkdir dir
ln -s /dev/ptmx ptmx.link
ln -s /dev/null null.link
specials="ptmx null fifo dir ptmx.link null.link"

{
	echo "snapshot 1"
	a=1
	for f in /dev/ptmx /dev/null "$TMP/fifo" "$TMP/dir" "$TMP/ptmx.link" "$TMP/null.link"; do
		printf 'object 0 %x01000 %x02000 - %s\n' $a $a "$f"
		a=$((a + 1))
	done
} >trace.pid7.maps
# every object is used: 0x101000 .. 0x601000 fall in one each
$MKTRACE trace.pid7.tid7 --user 7 7 \
	1000:$ENTRY:0x101000:0 1100:$EXIT:0x101000:0 2000:$ENTRY:0x201000:0 2100:$EXIT:0x201000:0 \
	3000:$ENTRY:0x301000:0 3100:$EXIT:0x301000:0 4000:$ENTRY:0x401000:0 4100:$EXIT:0x401000:0 \
	5000:$ENTRY:0x501000:0 5100:$EXIT:0x501000:0 6000:$ENTRY:0x601000:0 6100:$EXIT:0x601000:0
st trace.pid7.tid7
check "objects in the map that are special files: dtrace ends, exit 0" '[ $rc -eq 0 ]'
check "... none of them is opened (only with O_PATH, to look)" 'none_opened $specials'
check "... each is named in a warning" \
	'for f in /dev/ptmx /dev/null fifo dir ptmx.link null.link; do
		grep -q "$f: not a regular file" err || exit 1; done'
check "... the map file itself, a regular file, is read" \
	'grep -qE "open(at)?\(.*(trace.pid7.maps|/proc/self/fd/[0-9]+)\".*O_RDONLY" trace.log &&
	 grep -q "enter null.link+0x601000" out'

# the map file itself: each kind of special file in its place
for kind in ptmx.link null.link fifo dir; do
	rm -rf trace.pid7.maps
	case $kind in
	fifo) mkfifo trace.pid7.maps ;;
	dir) mkdir trace.pid7.maps ;;
	*) ln -s "$(readlink $kind)" trace.pid7.maps ;;
	esac
	st trace.pid7.tid7
	check "the map file is a $kind: dtrace ends, exit 0, the calls print" \
		'[ $rc -eq 0 ] && grep -q "enter 601000" out'
	check "... it is not opened" 'none_opened trace.pid7.maps /dev/ptmx /dev/null'
done
rm -rf trace.pid7.maps

# BASE.kallsyms and BASE.irqs found beside a CPU stream
$MKTRACE t.cpu0 --cpu 0 1000:$SWITCH:1:2
for kind in ptmx.link null.link fifo dir; do
	rm -rf t.kallsyms t.irqs
	case $kind in
	fifo) mkfifo t.kallsyms t.irqs ;;
	dir) mkdir t.kallsyms t.irqs ;;
	*) ln -s "$(readlink $kind)" t.kallsyms && ln -s "$(readlink $kind)" t.irqs ;;
	esac
	st t.cpu0
	check "BASE.kallsyms and BASE.irqs are a $kind: exit 0, a warning each" \
		'[ $rc -eq 0 ] && grep -q "t.kallsyms: not a regular file" err &&
		 grep -q "t.irqs: not a regular file" err && grep -q "sched:switch" out'
	check "... neither is opened" 'none_opened t.kallsyms t.irqs /dev/ptmx /dev/null'
done
rm -rf t.kallsyms t.irqs

st --kallsyms /dev/ptmx --irqs fifo t.cpu0
check "--kallsyms /dev/ptmx: an error naming it" \
	'[ $rc -ne 0 ] && grep -q "/dev/ptmx: not a regular file" err'
check "... not opened" 'none_opened /dev/ptmx'

# a traced ELF file's .gnu_debuglink names the debug file: hostile too.
# A FIFO or a link to /dev/ptmx there must not hang dtrace or be opened;
# a real debug file with the right CRC is still used.
if command -v cc >/dev/null && command -v objcopy >/dev/null; then
	mkdir elf && printf 'int f(int x) { return x * 2; }\nint main(void) { return f(3); }\n' >elf/p.c &&
	cc -g -O0 -o elf/full elf/p.c && objcopy --only-keep-debug elf/full elf/good.debug &&
	objcopy --strip-debug elf/full elf/obj && cp elf/obj elf/obj2 &&
	objcopy --add-gnu-debuglink=elf/good.debug elf/obj &&
	touch elf/fifo.debug && objcopy --add-gnu-debuglink=elf/fifo.debug elf/obj2 &&
	rm elf/fifo.debug && mkfifo elf/fifo.debug
	addr=$(printf '0x%x' $((0x400000 + 0x$(nm elf/full | awk '$3 == "f" { print $1 }'))))
	for obj in obj2 obj; do
		rm -rf u && mkdir u
		$MKTRACE u/trace.pid7.tid7 --user 7 7 1000:$ENTRY:$addr:0 2000:$EXIT:$addr:0
		printf 'snapshot 1\nobject 400000 400000 500000 - %s/elf/%s\n' "$TMP" $obj \
			>u/trace.pid7.maps
		st u/trace.pid7.tid7
		if [ $obj = obj2 ]; then
			check "an ELF whose debug link is a FIFO: dtrace ends, exit 0, names f" \
				'[ $rc -eq 0 ] && grep -q "enter f" out'
			check "... the FIFO is not opened" 'none_opened fifo.debug'
			rm elf/fifo.debug && ln -s /dev/ptmx elf/fifo.debug
			st u/trace.pid7.tid7
			check "an ELF whose debug link leads to /dev/ptmx: not opened" \
				'[ $rc -eq 0 ] && none_opened fifo.debug /dev/ptmx'
		else
			check "an ELF with a good debug link: its debug file is looked at, then reopened" \
				'[ $rc -eq 0 ] && grep -A1 "good.debug\", .*O_PATH) = [0-9]" trace.log |
				 grep -q "/proc/self/fd/[0-9]*\", O_RDONLY"'
		fi
	done
fi

# a trace file given that is a device: refused without opening it
st t.cpu0 ptmx.link
check "a trace file that is a link to /dev/ptmx: an error naming it" \
	'[ $rc -ne 0 ] && grep -q "ptmx.link: .*not a trace file" err'
check "... not opened" 'none_opened ptmx.link /dev/ptmx'
done_testing
