#!/bin/bash
# ktrace: build the test kernel.  Extracts Debian's linux-source-$KVER (KVER
# default the newest, see scripts/kver.sh) into build/linux-$KVER, applies
# build/patch/$KVER/ktrace.patch, configures tinyconfig plus the fragments in
# scripts/kconfig/ and builds bzImage out of tree in build/kernel-$KVER-$KCONFIG.
# Incremental: a changed patch replaces the previously
# applied copy (reverse, then apply), and files whose content did not change
# keep their old mtimes so make rebuilds only what the patch really changed.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

KCONFIG=${KCONFIG:-vm}
. scripts/kver.sh
tarball=$kver_tarball
tree=$kver_tree
# KTRACE_PATCH=/dev/null builds the plain kernel (for comparisons)
src_patch=${KTRACE_PATCH:-$kver_patch/ktrace.patch}
new=$tree.new-$KCONFIG.patch	# private copy of $src_patch
applied=$tree.applied.patch
out=$kver_objdir
image=$out/arch/x86/boot/bzImage
log=$out/build.log
rel=${out#"$top"/}

msg() { echo "ktrace: $*"; }
die() { echo "ktrace: $*" >&2; exit 1; }

# vm.config always; KCONFIG=debug (or any NAME) adds scripts/kconfig/NAME.config,
# after the fragment it names in a "# ktrace-base: NAME" line (rt: debug).
add_frag() {
	local f=$top/scripts/kconfig/$1.config base
	[ -f "$f" ] || die "KCONFIG=$KCONFIG: no config fragment ${f#"$top"/}"
	base=$(sed -n 's/^# ktrace-base: *//p' "$f")
	[ -z "$base" ] || add_frag "$base"
	frags+=("$f")
}
frags=("$top/scripts/kconfig/vm.config")
[ "$KCONFIG" = vm ] || add_frag "$KCONFIG"
[ -e "$src_patch" ] || die "no ${src_patch#"$top"/}: run 'make patch' first"

# ccache with paths relative to the checkout: another checkout (CI) hits too
cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
export CCACHE_BASEDIR=$top
kmake() { make -C "$tree" O="$out" ARCH=x86_64 CC="$cc" "$@"; }

extract() {
	[ -f "$tarball" ] || die "no $tarball (apt-get install linux-source-$KVER)"
	msg "extracting $tarball into ${tree#"$top"/}"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1
	mv "$tree.tmp" "$tree"
	: >"$applied"
}

# Paths (relative to the tree) that the given patches touch.
patched_files() {
	sed -n 's@^\(---\|+++\) [^/]*/\([^\t]*\).*@\2@p' "$@" | sort -u
}

# Bring the tree to exactly "pristine + the patch".
sync_patch() {
	[ -f "$tree/Makefile" ] && [ -f "$applied" ] && cmp -s "$new" "$applied" && return 0
	# builds of other configs read the tree: wait for them
	flock -n -x 9 || { msg "waiting for other $KVER kernel builds before patching ${tree#"$top"/}"; flock -x 9; }
	if [ ! -f "$tree/Makefile" ] || [ ! -f "$applied" ]; then extract; fi
	if cmp -s "$new" "$applied"; then flock -s 9; return 0; fi

	# snapshot what the old and new patches touch, to compare afterwards
	local snap=$tree.snap f
	rm -rf "$snap"
	mkdir -p "$snap"
	(cd "$tree" && patched_files "$applied" "$new" | while read -r f; do
		[ ! -f "$f" ] || cp -p --parents "$f" "$snap/"
	done)

	if [ -s "$applied" ]; then
		msg "reversing the previously applied patch"
		if ! patch -d "$tree" -p1 -R -s -f --dry-run <"$applied" >/dev/null ||
		   ! patch -d "$tree" -p1 -R -s -f --no-backup-if-mismatch <"$applied"; then
			msg "${tree#"$top"/} does not match ${applied#"$top"/}; re-extracting"
			extract
		fi
		: >"$applied"
	fi
	if [ -s "$new" ]; then
		msg "applying ${src_patch#"$top"/} to ${tree#"$top"/}"
		if ! patch -d "$tree" -p1 -N -s -f --dry-run <"$new" >"$top/build/patch.log" 2>&1; then
			cat "$top/build/patch.log" >&2
			die "${src_patch#"$top"/} does not apply to linux-source-$KVER"
		fi
		patch -d "$tree" -p1 -N -s -f --no-backup-if-mismatch <"$new"
	fi
	mv "$new" "$applied"

	# unchanged content keeps its old mtime: no needless rebuild
	(cd "$snap" && find . -type f) | while read -r f; do
		if cmp -s "$snap/$f" "$tree/$f"; then touch -r "$snap/$f" "$tree/$f"; fi
	done
	rm -rf "$snap"
	flock -s 9
}

# Every option a fragment asks for must be in the final .config (the last
# fragment wins).  KTRACE options are only checked once a patch is applied.
verify_config() {
	local -A want=()
	local line opt got bad=()
	while read -r line; do
		case $line in
		CONFIG_*=*) want[${line%%=*}]=${line#*=} ;;
		"# CONFIG_"*" is not set") opt=${line#\# }; want[${opt%% *}]=n ;;
		esac
	done < <(cat "${frags[@]}")
	for opt in "${!want[@]}"; do
		[[ $opt == CONFIG_KTRACE* && ! -s $applied ]] && continue
		got=$(sed -n "s/^$opt=//p" "$out/.config")
		[ "${got:-n}" = "${want[$opt]}" ] || bad+=("$opt=${want[$opt]} (got ${got:-n})")
	done
	[ ${#bad[@]} -eq 0 ] && return 0
	printf 'ktrace:   %s\n' "${bad[@]}" >&2
	die "config options that did not stick (missing dependency?); see $rel/.config"
}

configure() {
	local stamp
	stamp=$(cat "${frags[@]}" "$applied" | sha1sum)
	[ -f "$out/.config" ] && [ "$(cat "$out/.ktrace-config" 2>/dev/null)" = "$stamp" ] &&
		return 0
	msg "configuring Linux $KVER: tinyconfig + ${frags[*]#"$top"/}"
	mkdir -p "$out"
	[ ! -f "$out/.config" ] || cp -p "$out/.config" "$out/.config.ktrace-prev"
	{
		kmake tinyconfig
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}"
		kmake olddefconfig
	} >"$out/config.log" 2>&1 || { tail -n 30 "$out/config.log" >&2; die "configuration failed"; }
	verify_config
	# same config as before: keep its mtime so kbuild does not resync
	if cmp -s "$out/.config" "$out/.config.ktrace-prev" 2>/dev/null; then
		mv -f "$out/.config.ktrace-prev" "$out/.config"
	fi
	rm -f "$out/.config.ktrace-prev"
	echo "$stamp" >"$out/.ktrace-config"
}

# Objects compiled since the stamp: real progress whatever kbuild prints
# (`make -s` silences its "  CC" lines) and however make buffers its output.
objects_since() {
	find "$out" -name '*.o' -newer "$1" 2>/dev/null | wc -l
}

build() {
	local start=$SECONDS next=30 pid before=none stamp=$out/.ktrace-build-start
	[ ! -f "$image" ] || before=$(stat -c %Y "$image")
	if [ "$before" = none ]; then
		msg "building Linux $KVER ($KCONFIG config): the first build takes about 6 minutes" \
		    "on 2 idle cores, longer when they are shared; log: $rel/build.log"
	else
		msg "building Linux $KVER ($KCONFIG config)"
	fi
	touch "$stamp"
	kmake -j"$(nproc)" bzImage >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if (( SECONDS - start >= next )); then
			msg "  ... Linux $KVER $KCONFIG: $(objects_since "$stamp") files compiled," \
			    "$((SECONDS - start))s"
			next=$((next + 30))
		fi
	done
	if ! wait "$pid"; then
		tail -n 40 "$log" >&2
		die "Linux $KVER ($KCONFIG) build failed; full log: $rel/build.log"
	fi
	if [ "$(stat -c %Y "$image")" != "$before" ]; then
		msg "Linux $KVER ($KCONFIG) built in $((SECONDS - start))s," \
		    "$(objects_since "$stamp") files compiled: ${image#"$top"/}"
	fi
}

# One build per version and config at a time; builds of different configs
# share build/linux-$KVER (a shared lock, made exclusive only to patch it).
mkdir -p "$top/build"
exec 8>"$top/build/.kernel-$KVER-$KCONFIG.lock" 9>"$top/build/.linux-$KVER.lock"
flock -n 8 || { msg "waiting for another $KVER $KCONFIG kernel build"; flock 8; }
flock -s 9
cp "$src_patch" "$new"
sync_patch
rm -f "$new"
configure
build
