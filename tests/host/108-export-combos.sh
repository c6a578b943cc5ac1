#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The new inputs in the exports, and damaged machine directories.
#  1. ktrace-run -z of a program built with -finstrument-functions, read by
#     every export and call view, writes what the same files give after
#     zstd -d (an independent decoder): Parquet, Perfetto and CTF byte for
#     byte, --calltree, --report and the listing line for line; "-" reads a
#     compressed stream from a pipe as the file reads (the same listing, the
#     same Parquet bytes), is refused as -o's own input; a terminal-like
#     standard input (a character device) is an error naming "-".
#  2. machine directories whose trace.clock has lines that are no probes
#     (words, negative numbers, numbers past 2^63, a line torn short): the
#     good lines are kept (the probe count is the good lines written), one
#     warning names the file and the first bad line; a trace.clock giving a
#     200 % drift is an error naming it; a trace.clock that is a directory
#     or a FIFO is an error naming it; a .trace.cpuN.state without its trace.cpuN is a
#     warning naming the missing file, the other machine's events all shown
#     (its dtrace -S count); dtrace DIR/trace.* in a machine directory reads
#     the CPU files (ktgen's 400 events), trace.clock left to machines.
#  3. what is not a machine's in its directory: a note, a backup copy of a
#     CPU file, a subdirectory are left out, with one note naming the first,
#     and the merge has every event of the CPU files (ktgen's 1000); a
#     trace.cpuX is an error naming it; a trace.clock line with a NUL byte
#     is one bad line (named), the line after it still a probe (the probe
#     count is the good lines written); a machine directory given twice, by
#     a symbolic link and in its collector's directory, and a trace file
#     given twice are merged once (the events of each file once, a warning
#     each).
#  4. the reader: a compressed file whose header is longer than ours
#     (header_size 1024, the rest zeros, a later version's) reads as the
#     uncompressed one; with the frame after the first 512 bytes damaged
#     the error is zstd's, at that frame, naming the file (not "the file
#     ends inside the header"); a torn record at a file's end, plain and
#     compressed, is said once with its byte count; "-" when no descriptor
#     is left for it (the static dtrace, ulimit -n 4, fd 3 taken) says
#     EMFILE's "Too many open files".
#  5. -o on a full disk (a 64 KiB tmpfs in a user and mount namespace):
#     each format that writes a file (text, perfetto, perfetto-json,
#     parquet) fails naming the file, and leaves nothing there, an earlier
#     file of that name as it was; where it fits, the file is there alone,
#     the same bytes as written elsewhere, its earlier mode kept.
#  6. a machine's records 2^63 ticks and more from their header's ref_tsc
#     (mktrace.py, 1 GHz, no clock probes): each one's time on the common
#     clock is ref_mono_ns plus its ticks, exactly (Python's integers; the
#     times chosen exact in a double), 2^63 + 4096 ticks after ref_tsc as
#     well as 2^62; 3 x 2^62 ticks before it is 0, the clock's zero, not a
#     wrap to 2^62 after.
. "$(dirname "$0")/user-common.sh"

command -v zstd >/dev/null || skip_all "no zstd command (apt-get install zstd)"
cd "$TMP" || exit 1

# 1. ktrace-run -z: the exports of the .zst files and of zstd -d's files
"$KTRACE_RUN" -z -o z "$UT/calls" >/dev/null 2>"$TMP/err"
ok $? "ktrace-run -z records tests/user/calls" "$(cat "$TMP/err")"
mkdir -p p && cp z/*.maps p/ &&
	for f in z/*.zst; do zstd -q -d "$f" -o "p/$(basename "${f%.zst}")" || exit 1; done
ok $? "zstd -d decodes every stream"
check "compressed streams: several threads, two processes" \
	'[ "$(ls z/*.zst | wc -l)" -ge 4 ] && [ "$(ls z/*.maps | wc -l)" = 2 ]'
for f in parquet perfetto ctf; do
	"$DTRACE" --format=$f -o z.$f z/trace.* 2>"$TMP/err"
	ok $? "--format=$f of the .zst files" "$(cat "$TMP/err")"
	"$DTRACE" --format=$f -o p.$f p/trace.* 2>/dev/null
	check "--format=$f: the same bytes as from the decompressed files" \
		'[ -s p.$f ] || [ -s p.$f/metadata ] && diff -r z.$f p.$f'
done
for v in --calltree --report --flat ""; do
	# shellcheck disable=SC2086
	"$DTRACE" --no-pager $v z/trace.* 2>&1 | sed 's/\.zst\>//g' >v.z
	# shellcheck disable=SC2086
	"$DTRACE" --no-pager $v p/trace.* 2>&1 | sed 's|\<p/|z/|g' >v.p
	check "dtrace ${v:-(events)}: the same from the compressed files" \
		'[ "$(wc -l <v.p)" -gt 10 ] && diff v.p v.z'
done
main=$(ls z/trace.pid*.tid*.zst | head -n 1)
"$DTRACE" --no-pager "$main" >file.z 2>/dev/null
cat "$main" | (cd z && "$DTRACE" --no-pager -) >pipe.z 2>"$TMP/err"
ok $? "dtrace - reads a compressed stream from a pipe" "$(cat "$TMP/err")"
check "the same lines as the file, functions named (the map beside it)" \
	'[ -s pipe.z ] && cmp file.z pipe.z && grep -q " main" <("$DTRACE" --calltree "$main")'
cat "$main" | (cd z && "$DTRACE" --format=parquet -o ../pipe.parquet -) 2>/dev/null
"$DTRACE" --format=parquet -o file.parquet "$main" 2>/dev/null
check "dtrace --format=parquet - writes the file's table, byte for byte" \
	'[ -s file.parquet ] && cmp file.parquet pipe.parquet'
expect_error "a character device as standard input: an error naming -" \
	"-: standard input is a character device, not a trace file" \
	"$DTRACE" - </dev/null
cp "$main" own.zst
expect_error "- as -o: refused" "own.zst: is one of the input files" \
	"$DTRACE" --format=parquet -o own.zst - <own.zst
check "the input stays whole" 'cmp own.zst "$main"'

# 2. damaged machine directories: alpha (the one damaged) and beta
machines() {	# machines NAME: $TMP/NAME/{alpha,beta}, each 2 CPUs of ktgen
	rm -rf "$1" && mkdir -p "$1/alpha" "$1/beta" &&
		"$KTGEN" -s 1 -c 2 -n 200 "$1/alpha/trace" >/dev/null &&
		"$KTGEN" -s 2 -c 2 -n 300 "$1/beta/trace" >/dev/null &&
		touch "$1/alpha/.session" "$1/beta/.session" \
		      "$1/alpha/.trace.cpu0.state" "$1/alpha/.trace.cpu1.state"
}
# four good probes a second apart, 1 us offset, no drift
good_probes() {
	for i in 1 2 3 4; do
		echo "${i}000000000 ${i}000001000 ${i}000001100 ${i}000000100"
	done
}
machines bad
{ good_probes | head -n 2; echo "hello world"; echo "-5 -5 -5 -5"
  echo "18446744073709551615 0 0 18446744073709551615"; good_probes | tail -n 2
  printf '5000000000 50000'; } >bad/alpha/trace.clock
"$DTRACE" --machines bad >out 2>"$TMP/err"
ok $? "bad clock lines: dtrace --machines exits 0" "$(cat "$TMP/err")"
check "the 4 good probes are kept, offset 1000 ns" \
	'awk "\$1 == \"alpha\" && \$3 == \"1/4\" && \$4 == 1000 { f = 1 } END { exit !f }" out'
check "one warning: the file, 4 of 8 lines, the first bad one (3)" \
	'[ "$(grep -c "warning: bad/alpha" "$TMP/err")" = 1 ] &&
	 grep -qF "bad/alpha/trace.clock: 4 of 8 lines are not clock probes" "$TMP/err" &&
	 grep -qF "the first line 3: left out" "$TMP/err"'
"$DTRACE" --tsc bad >out 2>/dev/null
check "the merge: every event, no time past 2^63" \
	'[ "$(wc -l <out)" = 1000 ] && awk "length(\$3) > 19 { exit 1 }" out'

"$DTRACE" -S bad/alpha/trace.* >out 2>"$TMP/err"
ok $? "dtrace DIR/trace.* in a machine directory: trace.clock is no trace file" "$(cat "$TMP/err")"
check "its 2 CPU files' 400 events" 'grep -q "^events  *400 in 2 files" out'

machines drift
for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	t=$((i * 1000000000))
	echo "$t $((3 * t)) $((3 * t + 10)) $((t + 100))"
done >drift/alpha/trace.clock
expect_error "a 200 % drift: an error naming the file" \
	"drift/alpha/trace.clock: its clock probes give a drift of 2000000 ppm" \
	"$DTRACE" drift
machines dir
mkdir dir/alpha/trace.clock
expect_error "trace.clock a directory: an error naming it" "dir/alpha/trace.clock: not a regular file" \
	"$DTRACE" dir
machines fifo
mkfifo fifo/alpha/trace.clock
expect_error "trace.clock a FIFO: an error naming it, not a wait for ever" \
	"fifo/alpha/trace.clock: not a regular file" timeout 10 "$DTRACE" fifo

machines gone
good_probes >gone/alpha/trace.clock
rm gone/alpha/trace.cpu1
"$DTRACE" gone >out 2>"$TMP/err"
ok $? "a machine's CPU file gone: dtrace still merges" "$(cat "$TMP/err")"
check "a warning names the missing file" \
	'grep -qF "gone/alpha/trace.cpu1: No such file or directory: that CPU'"'"'s events are missing" "$TMP/err"'
check "beta's events all there, alpha's of its CPU 0" \
	'[ "$(grep -c "^beta " out)" = "$("$DTRACE" -S gone/beta/trace.* | awk "/^events/ { print \$2 }")" ] &&
	 [ "$(grep -c "^alpha " out)" = "$("$DTRACE" -S gone/alpha/trace.cpu0 | awk "/^events/ { print \$2 }")" ]'
# 3. hostile machine directories: others' files, a NUL, the same one twice
machines stray
echo "reboot db1 first" >stray/alpha/notes.txt
cp stray/alpha/trace.cpu0 stray/alpha/trace.cpu0~
mkdir stray/beta/old
"$DTRACE" -S stray >out 2>"$TMP/err"
ok $? "a note, a backup copy and a subdirectory in machine directories: dtrace exits 0" \
	"$(cat "$TMP/err")"
check "every event of the CPU files, once (ktgen's 2 x 200 + 2 x 300)" \
	'grep -q "^events  *1000 in 4 files" out'
check "one note names the first file left out and counts the others" \
	'[ "$(grep -c "note:" "$TMP/err")" = 1 ] &&
	 grep -qF "note: stray/alpha/notes.txt and 2 more files in the machine directories" "$TMP/err"'
touch stray/beta/trace.cpuX
expect_error "trace.cpuX: an error naming it" \
	"stray/beta/trace.cpuX: not a trace file's name" "$DTRACE" -S stray
rm stray/beta/trace.cpuX

machines nul
{ good_probes | head -n 2; printf '3000000000 3000001000\0003000001100 3000000100\n'
  good_probes | tail -n 2; } >nul/alpha/trace.clock
"$DTRACE" --machines nul >out 2>"$TMP/err"
ok $? "a NUL in a clock line: dtrace --machines exits 0" "$(cat "$TMP/err")"
check "the 4 good lines are probes: the line after the NUL one is kept" \
	'awk "\$1 == \"alpha\" && \$3 == \"1/4\" { f = 1 } END { exit !f }" out'
check "one warning: 1 of 5 lines, the first bad one line 3" \
	'grep -qF "nul/alpha/trace.clock: 1 of 5 lines are not clock probes" "$TMP/err" &&
	 grep -qF "the first line 3: left out" "$TMP/err"'

machines twice
ln -s twice/alpha alpha-link
"$DTRACE" -S twice/alpha twice alpha-link twice/alpha/ >out 2>"$TMP/err"
ok $? "a machine directory given again and again" "$(cat "$TMP/err")"
check "its events are merged once: alpha's 400 and beta's 600" \
	'grep -q "^events  *1000 in 4 files" out'
check "a warning for each name given again" \
	'[ "$(grep -c "given before: read once" "$TMP/err")" = 3 ] &&
	 grep -qF "alpha-link: the same directory as twice/alpha" "$TMP/err"'
"$DTRACE" -S twice/beta/trace.cpu1 twice/beta/trace.* >out 2>"$TMP/err"
ok $? "a trace file given twice" "$(cat "$TMP/err")"
check "read once: beta's 600 events in 2 files, one warning" \
	'grep -q "^events  *600 in 2 files" out &&
	 [ "$(grep -c "given before: read once" "$TMP/err")" = 1 ]'
# 4. the reader's faults
"$KTGEN" -s 3 -c 1 -n 50 rd >/dev/null
head -c 512 rd.cpu0 >hdr && printf '\000\004\000\000' | dd of=hdr bs=1 seek=12 conv=notrunc 2>/dev/null
{ head -c 512 /dev/zero; tail -c +513 rd.cpu0; } >rest
zstd -q -f hdr -o hdr.zst && zstd -q -f rest -o rest.zst && cat hdr.zst rest.zst >long.zst
"$DTRACE" --tsc long.zst >out 2>"$TMP/err"
ok $? "a compressed file with a 1024-byte header reads" "$(cat "$TMP/err")"
check "its events are the 512-byte header's file's" 'cmp out <("$DTRACE" --tsc rd.cpu0 | sed "s/rd.cpu0/long.zst/")'
size=$(stat -c %s rest.zst)
cp rest.zst bad.zst && printf '\377\377\377\377' | dd of=bad.zst bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cat hdr.zst bad.zst >long-bad.zst
expect_error "a damaged frame in the header: zstd's error at its offset, naming the file" \
	"long-bad.zst: offset $(stat -c %s hdr.zst): damaged zstd frame" "$DTRACE" -S long-bad.zst
{ cat rd.cpu0; printf 'abcde'; } >torn.cpu0 && zstd -q -f torn.cpu0 -o torn.cpu0.zst
for f in torn.cpu0 torn.cpu0.zst; do
	"$DTRACE" -S $f >out 2>"$TMP/err"
	ok $? "$f: a torn record at the end is no error" "$(cat "$TMP/err")"
	check "$f: said once, 5 bytes left out; the 50 events read" \
		'[ "$(grep -c "torn tail (the file ends inside a record), 5 bytes left out" "$TMP/err")" = 1 ] &&
		 grep -q "^events  *50 in 1 files" out'
done
if [ -x "$ROOT/$O/tools/static/dtrace" ]; then
	expect_error "- with no descriptor left for it: EMFILE named" "-: Too many open files" \
		bash -c 'exec <rd.cpu0 3</dev/null; ulimit -n 4; exec "$1" -S -' - "$ROOT/$O/tools/static/dtrace"
else
	skip "- with no descriptor left for it" "no static dtrace (make tools)"
fi
# 5. a full disk under -o
"$KTGEN" -s 4 -c 2 -n 3000 big >/dev/null
if unshare -rm true 2>/dev/null; then
	mkdir -p full
	# shellcheck disable=SC2016
	unshare -rm sh -c 'mount -t tmpfs -o size=64k tmpfs full || exit 9
		for f in text perfetto perfetto-json parquet; do
			"$1" --format=$f -o full/new.$f big.cpu0 big.cpu1 2>"full.$f.err"
			echo "new $f $?"
			echo before >full/old.$f
			"$1" --format=$f -o full/old.$f big.cpu0 big.cpu1 2>/dev/null
			echo "old $f $? $(cat full/old.$f)"
			rm full/old.$f
		done
		"$1" -o full/small.text rd.cpu0 && chmod 640 full/small.text &&
			"$1" -o full/small.text rd.cpu0 && ls -lA full >full.ls' - "$DTRACE" >full.out 2>&1
	for f in text perfetto perfetto-json parquet; do
		check "--format=$f on a full disk: an error naming the file" \
			'grep -q "^new $f 1$" full.out && grep -q "full/new.$f" full.$f.err'
		check "--format=$f: the file written over stays as it was" 'grep -q "^old $f 1 before$" full.out'
	done
	check "nothing left behind but the file that fit, its mode kept, its bytes whole" \
		'[ "$(grep -c "^-" full.ls)" = 1 ] && grep -q "^-rw-r----- .* small.text$" full.ls &&
		 "$DTRACE" rd.cpu0 | cmp - <(unshare -rm sh -c "mount -t tmpfs tmpfs full && \"$DTRACE\" -o full/x rd.cpu0 && cat full/x")'
else
	skip "-o on a full disk" "no user namespaces (unshare -rm) to mount a small tmpfs"
fi
# 6. TSCs 2^63 ticks or more from their file's ref_tsc (1 GHz, ref_mono_ns
#    2^33, no clock probes: the common clock is ref_mono_ns + the ticks)
U1=$(((1 << 11) | (1 << 24)))
mkdir -p far/alpha && echo 1 >far/alpha/.session
python3 "$ROOT/tests/host/mktrace.py" far/alpha/trace.cpu0 --cpu 0 --ref-mono $((1 << 33)) \
	1000:$U1:1:0 $((1 << 62)):$U1:2:0 "$(python3 -c 'print(2**63 + 4096)')":$U1:3:0 &&
python3 "$ROOT/tests/host/mktrace.py" far/alpha/trace.cpu1 --cpu 1 --ref-mono $((1 << 33)) \
	--ref-tsc "$(python3 -c 'print(2**64 - 4096)')" $((1 << 62)):$U1:4:0
ok $? "a machine's files with records 2^63 ticks and more from ref_tsc (mktrace.py)"
"$DTRACE" --tsc far >out 2>"$TMP/err"
ok $? "dtrace --tsc reads them" "$(cat "$TMP/err")"
# exact in a double: every time is a multiple of 2^11 above 2^63
python3 -c 'print("\n".join("%d %d" % (t, n) for t, n in
	((0, 4), (2**33 + 1000, 1), (2**33 + 2**62, 2), (2**33 + 2**63 + 4096, 3))))' >far.want
awk '{ print $3, $(NF - 1) }' out >far.got
check "the common clock: ref_mono_ns + the ticks, 2^63 + 4096 after too, 3 x 2^62 before: 0" \
	'diff far.want far.got'
done_testing
