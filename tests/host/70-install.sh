#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install and make uninstall (install.mk): into a DESTDIR with a PREFIX,
# among files of other packages (exactly the expected files, binaries that
# run, the soname, man pages that render, the patch series; uninstall leaves
# the tree as it was); then into a PREFIX of its own, to build the man
# page's example against the installed library with pkg-config alone, run
# it and read its trace with the installed dtrace.
. "$(dirname "$0")/dtrace-common.sh"
# The tools' files only: the module's DKMS source (DKMS=1, the default where
# dkms is installed) is checked at the end.
export DKMS=0

VERSION=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' Makefile)
# make install installs the series for the newest kernel (KVER's default),
# where its source is installed (78-build-targets checks the case without)
kver=$(ls -d kernel-patch/[0-9]*/ | sed 's|kernel-patch/||; s|/||' | sort -V | tail -n 1)
have_source=0
KVER=$kver scripts/mkpatch.sh --have-source 2>/dev/null && have_source=1
DEST=$TMP/dest
P=/opt/kt
D=$DEST$P

# make_ DESC ARGS...: run make, ok if it succeeds (LDCONFIG=: leaves the
# system's cache alone when installing as root without DESTDIR)
make_() {
	local desc=$1
	shift
	make -s O="$O" LDCONFIG=: "$@" >"$TMP/make.log" 2>&1
	ok $? "$desc" "$(tail -n 20 "$TMP/make.log")"
}

# tree DIR: every path under DIR, and where links point
tree() {
	(cd "$1" && find . -printf '%p %y %l\n' | sort)
}

# ---- into DESTDIR, among other packages' files ----
mkdir -p "$D"/{bin,include,lib/pkgconfig,share/man/man1,share/man/man3}
for f in bin/other include/other.h lib/pkgconfig/other.pc share/man/man1/other.1; do
	echo other >"$D/$f"
done
tree "$DEST" >"$TMP/before"

make_ "make install DESTDIR=... PREFIX=$P" DESTDIR="$DEST" PREFIX="$P" install

{
	printf '%s\n' bin/ktrace bin/dtrace bin/ktrace-run \
		lib/libktrace.so."$VERSION" lib/libktrace.so.0 lib/libktrace.so lib/libktrace.a \
		lib/pkgconfig/libktrace.pc include/ktrace_user.h include/ktrace/linux/ktrace.h \
		include/ktrace/linux/ktrace_events.h share/man/man1/ktrace.1 share/man/man1/dtrace.1 \
		share/man/man1/ktrace-run.1 share/man/man3/libktrace.3
	[ $have_source = 0 ] || (cd "$O/patch/$kver" && ls ktrace.patch series/*.patch) |
		sed 's|^|share/ktrace/|'
} | sed "s|^|.$P/|" | sort >"$TMP/want"
(cd "$DEST" && find . ! -type d | sort) | comm -23 - <(awk '$2 != "d" { print $1 }' "$TMP/before") \
	>"$TMP/got"
diff -u "$TMP/want" "$TMP/got" >"$TMP/files.diff"
ok $? "install puts exactly the expected files under DESTDIR/PREFIX" "$(cat "$TMP/files.diff")"

for t in ktrace dtrace ktrace-run; do
	out=$("$D/bin/$t" --version 2>&1)
	[[ "$out" == *" $VERSION" ]]
	ok $? "installed $t --version says $VERSION" "$out"
done

readelf -d "$D/lib/libktrace.so.$VERSION" | grep -q 'SONAME.*\[libktrace\.so\.0\]' &&
	[ "$(readlink "$D/lib/libktrace.so.0")" = "libktrace.so.$VERSION" ] &&
	[ "$(readlink "$D/lib/libktrace.so")" = libktrace.so.0 ]
ok $? "libktrace.so.$VERSION has soname libktrace.so.0; .so.0 and .so link to it"
nm --defined-only "$D/lib/libktrace.a" 2>/dev/null | grep -q ' T ktrace_user_event$'
ok $? "libktrace.a defines ktrace_user_event"

# render PAGE: as text, with groff's warnings, else as man shows it
render() {
	if command -v groff >/dev/null; then
		groff -man -Tutf8 -P-cbou -ww "$1"
	else
		MANWIDTH=80 man -l "$1"
	fi
}
for m in man1/ktrace.1 man1/dtrace.1 man1/ktrace-run.1 man3/libktrace.3; do
	render "$D/share/man/$m" >"$TMP/man.out" 2>"$TMP/man.err" && [ ! -s "$TMP/man.err" ] &&
		grep -q '^NAME$' "$TMP/man.out"
	ok $? "man page $m renders without warnings" "$(head -n 5 "$TMP/man.err")"
done
grep -q -- '-callgraph$' "$D/share/man/man1/dtrace.1" &&
	grep -q KTRACE_DEBUGINFO_PATH "$D/share/man/man1/dtrace.1"
ok $? "dtrace(1) documents --callgraph and KTRACE_DEBUGINFO_PATH"

if [ $have_source = 1 ]; then
	diff -r "$O/patch/$kver/series" "$D/share/ktrace/series" >/dev/null &&
		cmp -s "$O/patch/$kver/ktrace.patch" "$D/share/ktrace/ktrace.patch"
	ok $? "the kernel patch and its series are in share/ktrace"
else
	[ ! -e "$D/share/ktrace" ] && grep -q 'kernel patch (share/ktrace) is not installed' \
		"$TMP/make.log"
	ok $? "no linux-source-$kver: no share/ktrace, and make install says so"
fi

# pkg-config with DESTDIR: the .pc names the PREFIX, the sysroot the stage
PKG_STAGED=(env PKG_CONFIG_LIBDIR="$D/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DEST" pkg-config)
flags=$("${PKG_STAGED[@]}" --cflags --libs libktrace 2>&1 | sed 's/ *$//')
[ "$flags" = "-I$D/include -I$D/include/ktrace -L$D/lib -lktrace" ]
ok $? "pkg-config libktrace with PKG_CONFIG_SYSROOT_DIR finds the staged tree" "$flags"
cat >"$TMP/headers.c" <<'EOF'
#include <ktrace_user.h>
#include <linux/ktrace.h>

static const struct { unsigned int code; const char *name; } events[] = {
#define KTRACE_GROUP(g)
#define KTRACE_EVENT(g, n, c, f) { KTRACE_##g##_##n, #g ":" #n },
#include <linux/ktrace_events.h>
#undef KTRACE_GROUP
#undef KTRACE_EVENT
};
unsigned int nr_events = sizeof(events) / sizeof(events[0]);
EOF
# shellcheck disable=SC2046
cc -Wall -Werror -c -o "$TMP/headers.o" "$TMP/headers.c" \
	$("${PKG_STAGED[@]}" --cflags libktrace) >"$TMP/cc.log" 2>&1
ok $? "the installed headers compile with pkg-config's flags alone" "$(head -n 10 "$TMP/cc.log")"

make_ "make uninstall DESTDIR=... PREFIX=$P" DESTDIR="$DEST" PREFIX="$P" uninstall
tree "$DEST" | diff -u "$TMP/before" - >"$TMP/tree.diff"
ok $? "uninstall leaves the tree as it was: others' files kept, ktrace's dirs gone" \
	"$(cat "$TMP/tree.diff")"

# ---- another dtrace (systemtap-sdt-dev's /usr/bin/dtrace) is not shadowed ----
DEST2=$TMP/dest2
D2=$DEST2$P
mkdir -p "$D2/bin" "$TMP/otherbin"
printf '#!/bin/sh\n# dtrace: USDT probe generator (systemtap-sdt-dev)\necho sdt\n' \
	| tee "$D2/bin/dtrace" "$TMP/otherbin/dtrace" >/dev/null
chmod +x "$D2/bin/dtrace" "$TMP/otherbin/dtrace"
make -s O="$O" LDCONFIG=: DESTDIR="$DEST2" PREFIX="$P" install >"$TMP/make.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "is another program called dtrace" "$TMP/make.log" &&
	grep -q "DTRACE_NAME=ktrace-dtrace" "$TMP/make.log" &&
	[ "$("$D2/bin/dtrace")" = sdt ] && [ ! -e "$D2/bin/ktrace" ]
ok $? "another bin/dtrace in DESTDIR/PREFIX: install refuses, says how, installs nothing" \
	"$(tail -n 8 "$TMP/make.log")"
make -s O="$O" LDCONFIG=: PREFIX="$TMP/p2" PATH="$TMP/otherbin:$PATH" install \
	>"$TMP/make.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "$TMP/otherbin/dtrace is another program called dtrace" "$TMP/make.log" &&
	[ ! -e "$TMP/p2/bin/dtrace" ]
ok $? "another dtrace on PATH: install refuses" "$(tail -n 8 "$TMP/make.log")"
make_ "make install DTRACE_NAME=ktrace-dtrace beside it" DESTDIR="$DEST2" PREFIX="$P" \
	DTRACE_NAME=ktrace-dtrace install
"$D2/bin/ktrace-dtrace" --version 2>&1 | grep -q "dtrace (ktrace)" &&
	[ "$("$D2/bin/dtrace")" = sdt ] && [ -f "$D2/share/man/man1/ktrace-dtrace.1" ]
ok $? "... ktrace's dtrace is bin/ktrace-dtrace, the other dtrace untouched"
make_ "make uninstall DTRACE_NAME=ktrace-dtrace" DESTDIR="$DEST2" PREFIX="$P" \
	DTRACE_NAME=ktrace-dtrace uninstall
[ "$("$D2/bin/dtrace")" = sdt ] && [ ! -e "$D2/bin/ktrace-dtrace" ] && [ ! -e "$D2/bin/ktrace" ]
ok $? "... uninstall removes ktrace-dtrace and leaves the other dtrace"
make_ "make uninstall (default name) leaves another program's dtrace" DESTDIR="$DEST2" \
	PREFIX="$P" uninstall
[ "$("$D2/bin/dtrace")" = sdt ]
ok $? "... it is still there"

# ---- into a PREFIX of its own: build against it, run, read the trace ----
PFX=$TMP/prefix
make_ "make install PREFIX=\$TMP/prefix" PREFIX="$PFX" install
export PKG_CONFIG_LIBDIR=$PFX/lib/pkgconfig
# the example of libktrace(3)
cat >"$TMP/prog.c" <<'EOF'
#include <ktrace_user.h>

enum { REQ_START = 1 };

int main(void)
{
	KTRACE_USER_NAME(REQ_START, "req_start", "request %u, %u bytes");
	for (unsigned int id = 0; id < 10; id++)
		TRACE(REQ_START, id, 512);
	return 0;
}
EOF
# shellcheck disable=SC2046
cc -g -finstrument-functions -o "$TMP/prog" "$TMP/prog.c" $(pkg-config --cflags --libs libktrace) \
	>"$TMP/cc.log" 2>&1 && readelf -d "$TMP/prog" | grep -q 'NEEDED.*\[libktrace\.so\.0\]'
ok $? "a program builds with pkg-config --cflags --libs libktrace alone" "$(head -n 10 "$TMP/cc.log")"

LD_LIBRARY_PATH=$PFX/lib KTRACE_USER_DIR=$TMP/out "$TMP/prog" &&
	"$PFX/bin/dtrace" --calltree "$TMP"/out/trace.* >"$TMP/tree.out" 2>&1 &&
	grep -q '^ *| main() {$' "$TMP/tree.out" &&
	[ "$(grep -c '/\* user:req_start request [0-9], 512 bytes \*/' "$TMP/tree.out")" -eq 10 ]
ok $? "it runs, and the installed dtrace shows its calls and named events" "$(head -n 20 "$TMP/tree.out")"

# shellcheck disable=SC2046
cc -static -o "$TMP/prog-static" "$TMP/prog.c" $(pkg-config --static --cflags --libs libktrace) \
	>"$TMP/cc.log" 2>&1 && KTRACE_USER_DIR=$TMP/out-static "$TMP/prog-static" &&
	"$PFX/bin/dtrace" -S "$TMP"/out-static/trace.* >>"$TMP/cc.log" 2>&1 &&
	grep -q '^ *user  *10$' "$TMP/cc.log"
ok $? "linked -static with pkg-config --static: libktrace.a records" "$(head -n 20 "$TMP/cc.log")"

# ktrace-run finds the library in ../lib
echo 'int main(void) { return 0; }' >"$TMP/hello.c"
cc -g -finstrument-functions -o "$TMP/hello" "$TMP/hello.c" &&
	"$PFX/bin/ktrace-run" -o "$TMP/run" "$TMP/hello" >"$TMP/run.log" 2>&1 &&
	"$PFX/bin/dtrace" --calltree "$TMP"/run/trace.* 2>&1 | grep -q '| main();$'
ok $? "the installed ktrace-run preloads the installed libktrace" "$(head -n 10 "$TMP/run.log")"

make_ "make uninstall PREFIX=\$TMP/prefix" PREFIX="$PFX" uninstall
left=$(cd "$PFX" && find . ! -type d; find . -path '*ktrace*')
[ -z "$left" ]
ok $? "uninstall leaves no file and no ktrace directory in the prefix" "$left"

# DKMS=1: the module's source, as dkms add wants it, and gone again on uninstall
DEST3=$TMP/dest3
make_ "make install DKMS=1" DKMS=1 DESTDIR="$DEST3" PREFIX="$P" install
src=$DEST3/usr/src/ktrace-$(sed -n 's/^VERSION[[:space:]]*:= *//p' Makefile)
[ -f "$src/dkms.conf" ] && [ -f "$src/module.c" ] && [ -f "$src/buffer.c" ] &&
	grep -q '^PACKAGE_NAME="\{0,1\}ktrace' "$src/dkms.conf"
ok $? "DKMS=1 installs the module's source with its dkms.conf" "$(ls -R "$DEST3/usr/src" 2>&1 | head)"
make_ "make uninstall DKMS=1" DKMS=1 DESTDIR="$DEST3" PREFIX="$P" uninstall
[ ! -e "$src" ]
ok $? "DKMS=1 uninstall removes the module's source"

done_testing
