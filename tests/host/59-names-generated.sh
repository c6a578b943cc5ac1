#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lib/names_gen.h is what scripts/gen-names.py makes of the kernel source:
# regenerated from the tarball (make check installs linux-source-6.12) and
# compared; skipped where the tarball is not installed.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=/usr/src/linux-source-6.12.tar.xz
if [ ! -f "$SRC" ] || ! command -v python3 >/dev/null; then
	echo "ok 1 - lib/names_gen.h regenerated # SKIP no $SRC (or no python3)"
	echo "1..1"
	exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if python3 "$ROOT/scripts/gen-names.py" --source "$SRC" -o "$TMP/names_gen.h" \
	2>"$TMP/err" && diff -u "$ROOT/lib/names_gen.h" "$TMP/names_gen.h" >"$TMP/diff"; then
	echo "ok 1 - lib/names_gen.h is what scripts/gen-names.py makes of $SRC"
else
	echo "not ok 1 - lib/names_gen.h is what scripts/gen-names.py makes of $SRC"
	head -n 30 "$TMP/err" "$TMP/diff" | sed 's/^/#   /'
fi
echo "1..1"
