#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One options table (lib/opts.c) for ktrace, dtrace and ktrace-run: a
# usage error (unknown short or long option, missing argument) exits 2 in
# each, with one line that starts with the tool's name and says how to get
# help; the options the man page documents are the ones --help lists.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/usage.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
for tool in ktrace dtrace ktrace-run; do
	bin=${TOOLS:-$ROOT/build/tools}/$tool
	man=$ROOT/$( [ $tool = ktrace-run ] && echo user || echo $tool)/$tool.1
	for args in "-Z" "--bogus-option" "-o"; do
		n=$((n + 1))
		"$bin" $args >/dev/null 2>"$T/err"
		rc=$?
		if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		   grep -q "^$tool: .* ($tool -h for help)$" "$T/err"; then
			echo "ok $n - $tool $args: exit 2, '$(cat "$T/err")'"
		else
			echo "not ok $n - $tool $args: exit $rc, '$(cat "$T/err")'"
		fi
	done
	n=$((n + 1))
	missing=
	"$bin" --help >"$T/out" 2>&1
	for opt in $(grep -o -- '--[a-z-]*' "$T/out" | sort -u); do
		grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$man" || missing="$missing $opt"
	done
	if [ -z "$missing" ] && grep -q -- "-h, --help" "$T/out"; then
		echo "ok $n - $tool --help: every option in $(basename "$man")"
	else
		echo "not ok $n - $tool --help: not in the man page:$missing"
	fi
done
echo "1..$n"
