#!/bin/bash
# ktrace: count the TAP results in build/results/*.tap (or the files given),
# list every failure, and end with exactly "N passed, N failed".  Exits 1 if
# anything failed or nothing ran.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

shopt -s nullglob
files=("$@")
[ $# -gt 0 ] || files=(build/results/*.tap)

for f in "${files[@]}"; do
	grep -E '^not ok( |$)' "$f" | grep -v '# *TODO' | sed "s|^|FAIL ${f##*/}: |" || true
done
read -r pass fail < <(tap_counts "${files[@]}")
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
