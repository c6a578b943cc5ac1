#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkpatch.sh: assemble the ktrace kernel patch from kernel-patch/series.
#
# Each patch of the series is committed, in order, on top of the pristine
# files of linux-source-6.1 in build/patchwork (a small git tree holding
# only the files the series touches, plus what checkpatch.pl needs), so
# every hunk is known to apply.  Writes:
#   build/patch/series/NNNN-*.patch   git format-patch series
#   build/patch/ktrace.patch          the combined patch (patch -p1)
# With --check, also runs scripts/checkpatch.pl --strict on each patch.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${KTRACE_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
work=$top/build/patchwork
out=$top/build/patch
series=$top/kernel-patch/series
author="ktrace maintainers <ktrace@example.org>"
check=0
[ "${1:-}" = "--check" ] && check=1

die() { echo "mkpatch: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball: not found (apt-get install linux-source-6.1)"

# The pristine files: every file a hunk changes, and checkpatch's own.
pristine_files() {
	sed -n 's|^--- a/||p' "$top"/kernel-patch/6.1/*.diff "$top"/kernel-patch/common/*.diff
	printf '%s\n' COPYING CREDITS Kbuild Makefile README \
		scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch
}
wanted=$(pristine_files | sort -u)

if [ ! -d "$work/.git" ] || [ "$(cat "$work.files" 2>/dev/null)" != "$wanted" ]; then
	rm -rf "$work"
	mkdir -p "$work"
	# shellcheck disable=SC2086
	tar -xJf "$tarball" -C "$work" --strip-components=1 \
		$(sed 's|^|linux-source-6.1/|' <<<"$wanted")
	# checkpatch.pl looks for these to know it runs in a kernel tree.
	for dir in Documentation arch include drivers fs init ipc kernel lib scripts; do
		mkdir -p "$work/$dir"
		touch "$work/$dir/.keep"
	done
	git -C "$work" init -q
	git -C "$work" add -f -A
	git -C "$work" -c user.name=ktrace -c user.email=ktrace@example.org \
		commit -qm "Linux 6.1 (pristine files)"
	git -C "$work" tag -f pristine >/dev/null
	echo "$wanted" >"$work.files"
fi

git -C "$work" checkout -q -f --detach pristine
git -C "$work" clean -q -f -d -x

export GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=ktrace@example.org
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"

# Commit one block of the series: $subject, $files, $hunks, $body.
commit_patch() {
	local entry dest src hunk
	for entry in $files; do
		dest=${entry%%=*}
		src=${entry#*=}
		[ -f "$top/$src" ] || die "series: '$subject': $src: no such file"
		mkdir -p "$work/$(dirname "$dest")"
		cp "$top/$src" "$work/$dest"
	done
	for hunk in $hunks; do
		hunk=6.1/$hunk
		[ -f "$top/kernel-patch/$hunk" ] || hunk=common/${hunk#6.1/}
		git -C "$work" apply --index "$top/kernel-patch/$hunk" ||
			die "series: '$subject': kernel-patch/$hunk does not apply"
	done
	git -C "$work" add -f -A
	git -C "$work" commit -q -F - <<-EOF
	$subject

	$body

	Signed-off-by: $author
	EOF
}

nr=0
subject= files= hunks= body=
while IFS= read -r line || [ -n "$line" ]; do
	case "$line" in
	"#"*) [ -z "$subject" ] && continue ;;
	esac
	case "$line" in
	"Subject: "*) subject=${line#Subject: } ;;
	"Files: "*) files=${line#Files: } ;;
	"Hunks: "*) hunks=${line#Hunks: } ;;
	"%%")
		[ -n "$subject" ] || die "series: body without a Subject: line"
		commit_patch
		nr=$((nr + 1))
		subject= files= hunks= body=
		;;
	*)
		[ -z "$subject" ] && [ -z "$line" ] && continue
		body+=${body:+$'\n'}$line
		;;
	esac
done <"$series"
[ -z "$subject" ] || die "series: '$subject' is not closed by %%"

# Written aside and renamed, so a reader never sees a half-written series.
rm -rf "$out.tmp"
mkdir -p "$out.tmp/series"
git -C "$work" format-patch -q -o "$out.tmp/series" pristine
git -C "$work" diff pristine HEAD >"$out.tmp/ktrace.patch"
rm -rf "$out.old"
[ ! -d "$out" ] || mv "$out" "$out.old"
mv "$out.tmp" "$out"
rm -rf "$out.old"
echo "mkpatch: $nr patches in build/patch/series, combined in build/patch/ktrace.patch"

if [ $check = 1 ]; then
	status=0
	for p in "$out"/series/*.patch; do
		(cd "$work" && perl scripts/checkpatch.pl --strict --quiet "$p") ||
			status=1
	done
	[ $status = 0 ] && echo "mkpatch: checkpatch.pl --strict: 0 errors, 0 warnings"
	exit $status
fi
