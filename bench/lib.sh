# SPDX-License-Identifier: GPL-2.0
# Sourced by the benches: what several of them measure with.
#   median              the median of the numbers on stdin, one a line
#                       ("nan" when there are none)
#   median_col COL FILE the median of column COL of FILE
#   run_timed NAME CMD...  one run of CMD, stdout to /dev/null: its wall
#                       time (ns), CPU time (user + sys, s) and peak RSS
#                       (KiB) added as a line to $W/NAME.runs; a failure
#                       ends the bench, named by $BENCH
median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "nan" }'; }
median_col() { awk -v c="$1" '{ print $c }' "$2" | median; }

run_timed() {
	local name=$1 t0 t1 u s r
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S %M' -o "$W/time" "$@" >/dev/null ||
		{ echo "bench/$BENCH: $name failed"; exit 1; }
	t1=$(date +%s%N)
	read -r u s r < <(tail -n 1 "$W/time")
	echo "$((t1 - t0)) $(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') $r" \
		>>"$W/$name.runs"
}
