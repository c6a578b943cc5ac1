#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkpatch.sh: assemble the ktrace kernel patch for Linux $KVER (default the
# newest supported, see scripts/kver.sh) from kernel-patch/series.
#
# The series (subjects, new files, commit messages) is one for every
# version; a "Hunks:" name is looked up in kernel-patch/$KVER/ (changes to
# code that differs between versions) and else in kernel-patch/common/
# (hunks that apply to every version).  Each patch is committed, in order, on
# top of the pristine files of linux-source-$KVER in build/patchwork-$KVER (a
# small git tree holding only the files the series touches, plus what
# checkpatch.pl needs), so every hunk is known to apply.  Writes:
#   build/patch/$KVER/series/NNNN-*.patch   git format-patch series
#   build/patch/$KVER/ktrace.patch          the combined patch (patch -p1)
# With --check, also runs scripts/checkpatch.pl --strict on each patch.
# With --have-source, makes nothing: exits 0 if the source tarball is there,
# else says it is missing and exits 1.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/kver.sh"
tarball=${KTRACE_KERNEL_TARBALL:-$kver_tarball}
work=$top/build/patchwork-$KVER
out=$kver_patch
series=$top/kernel-patch/series
author="ktrace maintainers <ktrace@example.org>"
check=0
[ "${1:-}" = "--check" ] && check=1

die() { echo "mkpatch: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball: not found (apt-get install linux-source-$KVER)"
# --have-source: only whether the patch can be made (make install asks).
[ "${1:-}" = "--have-source" ] && exit 0

# hunk_path NAME: the hunk file for $KVER, relative to kernel-patch/
hunk_path() {
	local mine=$KVER/$1 shared=common/$1
	if [ -f "$top/kernel-patch/$mine" ] && [ -f "$top/kernel-patch/$shared" ]; then
		die "series: both kernel-patch/$mine and kernel-patch/$shared exist: keep one"
	fi
	[ -f "$top/kernel-patch/$mine" ] && { echo "$mine"; return; }
	[ -f "$top/kernel-patch/$shared" ] && { echo "$shared"; return; }
	die "series: hunk $1: neither kernel-patch/$mine nor kernel-patch/$shared exists"
}

# The pristine files: every file a hunk changes, and checkpatch's own.
pristine_files() {
	local name path
	for name in $(sed -n 's/^Hunks: //p' "$series"); do
		path=$(hunk_path "$name")
		sed -n 's|^--- a/||p' "$top/kernel-patch/$path"
	done
	printf '%s\n' COPYING CREDITS Kbuild Makefile README \
		scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch
}
wanted=$(pristine_files)
wanted=$(sort -u <<<"$wanted")

if [ ! -d "$work/.git" ] || [ "$(cat "$work.files" 2>/dev/null)" != "$wanted" ]; then
	rm -rf "$work"
	mkdir -p "$work"
	# shellcheck disable=SC2086
	tar -xJf "$tarball" -C "$work" --strip-components=1 \
		$(sed "s|^|linux-source-$KVER/|" <<<"$wanted")
	# checkpatch.pl looks for these to know it runs in a kernel tree.
	for dir in Documentation arch include drivers fs init ipc kernel lib scripts; do
		mkdir -p "$work/$dir"
		touch "$work/$dir/.keep"
	done
	git -C "$work" init -q
	git -C "$work" add -f -A
	git -C "$work" -c user.name=ktrace -c user.email=ktrace@example.org \
		commit -qm "Linux $KVER (pristine files)"
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
		hunk=$(hunk_path "$hunk")
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
		nr=$((nr + 1))
		# hunk files are numbered in the order the series applies them
		for hunk in $hunks; do
			[[ $hunk == $(printf %04d "$nr")-* ]] ||
				die "series: patch $nr ('$subject'): hunk $hunk should be numbered $(printf %04d "$nr")"
		done
		commit_patch
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
echo "mkpatch: Linux $KVER: $nr patches in ${out#"$top"/}/series, combined in ${out#"$top"/}/ktrace.patch"

if [ $check = 1 ]; then
	status=0
	for p in "$out"/series/*.patch; do
		(cd "$work" && perl scripts/checkpatch.pl --strict --quiet "$p") ||
			status=1
		# section banners ("/* --- fast path ---- */") are not kernel style
		if grep -n '^+.*/\* *[-=*]\{3,\}.*[-=*]\{3,\} *\*/' "$p"; then
			echo "mkpatch: ${p##*/}: banner comments (above)" >&2
			status=1
		fi
	done
	[ $status = 0 ] && echo "mkpatch: Linux $KVER: checkpatch.pl --strict: 0 errors, 0 warnings"
	exit $status
fi
