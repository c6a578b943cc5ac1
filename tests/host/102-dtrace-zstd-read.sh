#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compressed trace files (lib/ktfile_zstd.c) as dtrace reads them.  The
# generator writes the same streams (same seed) uncompressed and with
# --zstd: the uncompressed files are the ground truth.  Checked: zstd -d
# (an independent decoder) gives them back byte for byte; the frame layout,
# read by zstd-frames.py from the RFC's frame and block headers (not
# libzstd), is the header alone, then records frames with their content
# size, each decodable alone and starting on an event (no continuation
# record); dtrace prints the same in every view, from a file or a pipe;
# cut at every frame boundary the file reads as the uncompressed prefix
# of those frames, cut inside each frame it reads as the prefix before it
# and warns with that frame's offset and record count; a damaged frame is
# an error at its offset after the frames before it; frames without a
# content size are refused with a clear message; memory does not grow with
# the file (max RSS of a file 10 times larger).
. "$(dirname "$0")/dtrace-common.sh"
FRAMES=$ROOT/tests/host/zstd-frames.py
command -v zstd >/dev/null || skip_all "no zstd command (apt-get install zstd)"

cd "$TMP" || exit 1
ARGS=(-c 2 -u 1 -n 60000 -l 3 -U 5 -s 7)
"$KTGEN" "${ARGS[@]}" p >/dev/null && "$KTGEN" "${ARGS[@]}" --zstd 1 z >/dev/null
check "ktgen writes the same streams plain and compressed" \
	'[ -s p.cpu0 ] && [ -s z.cpu0.zst ] && [ -s z.user0.zst ] && [ ! -e z.cpu0 ]'
for s in cpu0 cpu1 user0; do
	check "zstd -d z.$s.zst gives p.$s back, byte for byte" \
		"zstd -q -d -c z.$s.zst | cmp - p.$s"
done

# the frames of z.cpu0.zst: F_OFF[i] F_SIZE[i] F_CONTENT[i]
python3 "$FRAMES" z.cpu0.zst >frames || true
mapfile -t F_OFF < <(awk '{ print $1 }' frames)
mapfile -t F_SIZE < <(awk '{ print $2 }' frames)
mapfile -t F_CONTENT < <(awk '{ print $3 }' frames)
NF=${#F_OFF[@]}
check "frames: the header alone, then $((NF - 1)) records frames with content sizes, the whole file" \
	'[ "$NF" -ge 5 ] && [ "${F_CONTENT[0]}" = 512 ] &&
	 awk "\$3 == \"-\" || (NR > 1 && \$3 % 24) { exit 1 }
	      { end = \$1 + \$2 } END { exit end != $(stat -c %s z.cpu0.zst) }" frames'
# frame I alone: its bytes out of the file, decoded by zstd
frame() { tail -c +$((F_OFF[$1] + 1)) z.cpu0.zst | head -c "${F_SIZE[$1]}"; }
starts_ok=0
for ((i = 1; i < NF; i++)); do
	frame $i | zstd -q -d -c >f.bin 2>/dev/null &&
		[ "$(stat -c %s f.bin)" = "${F_CONTENT[$i]}" ] &&
		python3 -c 'import struct,sys; d=open("f.bin","rb").read(8+4)
sys.exit(struct.unpack_from("<I", d, 8)[0] >> 22 & 1)' && starts_ok=$((starts_ok + 1))
done
check "each records frame decodes alone to its content size and starts on an event" \
	'[ $starts_ok = $((NF - 1)) ]'

# the same output in every view (file names written the same way)
same_view() {
	local what=$1
	shift
	"$DTRACE" --no-pager "$@" p.cpu0 p.cpu1 p.user0 >v.p 2>&1
	"$DTRACE" --no-pager "$@" z.cpu0.zst z.cpu1.zst z.user0.zst 2>&1 |
		sed 's/z\.\(cpu[01]\|user0\)\.zst/p.\1/g; s/z\.probes/p.probes/g' >v.z
	check "dtrace $what: the same from the compressed files" 'cmp v.p v.z && [ -s v.p ]'
}
same_view "(events)"
same_view "--raw --tsc" --raw --tsc
same_view "-S" -S
same_view "--format=perfetto-json" --format=perfetto-json
same_view "--calltree" --calltree
same_view "--flat" --flat
"$DTRACE" --no-pager p.cpu0 >file.p 2>/dev/null
cat p.cpu0 | "$DTRACE" --no-pager /dev/stdin >pipe.p 2>/dev/null
cat z.cpu0.zst | "$DTRACE" --no-pager /dev/stdin >pipe.z 2>/dev/null
check "a pipe reads as the uncompressed pipe" 'cmp pipe.p pipe.z && [ -s pipe.p ]'

# prefix N: the uncompressed file of the header and records frames 1..N-1
prefix() {
	local bytes=0
	for ((j = 0; j < $1; j++)); do
		bytes=$((bytes + F_CONTENT[j]))
	done
	head -c $bytes p.cpu0 >pre.cpu0
}
bound_ok=0 mid_ok=0
for ((i = 1; i < NF; i++)); do
	# cut after frame i-1: a whole file of frames 0..i-1
	head -c "${F_OFF[$i]}" z.cpu0.zst >cut.cpu0.zst
	prefix $i
	"$DTRACE" --no-pager --raw --tsc pre.cpu0 >o.p 2>/dev/null
	"$DTRACE" --no-pager --raw --tsc cut.cpu0.zst >o.z 2>e.z
	[ $? = 0 ] && cmp -s o.p o.z && [ ! -s e.z ] && bound_ok=$((bound_ok + 1))
	# cut inside frame i: frames 0..i-1 and a warning for frame i
	head -c $((F_OFF[i] + F_SIZE[i] / 2)) z.cpu0.zst >cut.cpu0.zst
	"$DTRACE" --no-pager --raw --tsc cut.cpu0.zst >o.z 2>e.z
	[ $? = 0 ] && cmp -s o.p o.z &&
		grep -qF "cut.cpu0.zst: offset ${F_OFF[$i]}: torn tail (the file ends inside a compressed frame), $((F_SIZE[i] / 2)) bytes left out: ${F_CONTENT[$i]} bytes of records ($((F_CONTENT[i] / 24)) records)" e.z &&
		mid_ok=$((mid_ok + 1))
done
check "cut at each of the $((NF - 1)) frame boundaries: the uncompressed prefix, no warning" \
	'[ $bound_ok = $((NF - 1)) ]'
check "cut inside each of the $((NF - 1)) records frames: the prefix before it, a warning naming its offset and records" \
	'[ $mid_ok = $((NF - 1)) ]'
head -c 100 z.cpu0.zst >h.cpu0.zst
expect_error "cut inside the header frame: an error" \
	"h.cpu0.zst: offset 0: the file ends inside its first compressed frame" \
	"$DTRACE" --no-pager h.cpu0.zst
"$DTRACE" --no-pager -S h.cpu0.zst z.cpu1.zst >/dev/null 2>&1
check "... and dtrace does not crash on it beside a good file" '[ $? -lt 128 ]'

# a damaged frame: an error at its offset, after the frames before it
cp z.cpu0.zst bad.cpu0.zst
printf 'XXXXXXXXXXXXXXXX' | dd of=bad.cpu0.zst bs=1 seek=$((F_OFF[3] + F_SIZE[3] / 2)) \
	conv=notrunc 2>/dev/null
prefix 3
"$DTRACE" --no-pager --raw --tsc pre.cpu0 >o.p 2>/dev/null
"$DTRACE" --no-pager --raw --tsc bad.cpu0.zst >o.z 2>e.z
rc=$?
check "a damaged frame: exit 1, the error names its offset, the frames before it printed" \
	'[ $rc = 1 ] && grep -qF "bad.cpu0.zst: offset ${F_OFF[3]}: damaged zstd frame" e.z && cmp o.p o.z'

# frames dtrace does not take: without a content size, and too large
zstd -q -c <p.cpu0 >nosize.zst
expect_error "a zstd frame without its content size (zstd reading a pipe): refused, says why" \
	"nosize.zst: offset 0: zstd frame without its content size" "$DTRACE" --no-pager nosize.zst
zstd -q -c p.cpu0 >cli.zst
"$DTRACE" --no-pager cli.zst >o.z 2>/dev/null
check "zstd's own file of a trace (one frame with its size) reads as the trace" 'cmp file.p o.z'
"$KTGEN" -c 1 -n 400000 -s 7 big >/dev/null && zstd -q -f big.cpu0 -o big.zst
expect_error "a frame of more than 8 MiB: refused, says why" \
	"big.zst: offset 0: zstd frame of $(stat -c %s big.cpu0) bytes, more than the 8388608" \
	"$DTRACE" --no-pager big.zst

# memory: one frame's buffers, whatever the file's size
"$KTGEN" -c 1 -n 60000 -s 3 --zstd 1 small >/dev/null
"$KTGEN" -c 1 -n 600000 -s 3 --zstd 1 large >/dev/null
rss() { /usr/bin/time -f %M "$DTRACE" --no-pager -S "$1" 2>&1 >/dev/null | tail -1; }
rss_small=$(rss small.cpu0.zst) rss_large=$(rss large.cpu0.zst)
check "max RSS: $rss_small KiB for 60000 events, $rss_large KiB for 600000: within 2 MiB" \
	'[ -n "$rss_small" ] && [ $((rss_large - rss_small)) -lt 2048 ]'

done_testing
