#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The build answers "how do I build X", each in a build directory of its own
# (O=$TMP/...), from nothing:
# - make dtrace, ktrace, libktrace, ktrace-run: each builds its files (they
#   run or link), nothing of the other tools, and a second run does nothing;
# - make help lists exactly the .PHONY targets of make's own database
#   (make -p), each with a description, the ones a user asks for included;
# - header dependencies: touching a header rebuilds exactly the objects whose
#   source includes it (the compiler's own `cc -MM` says which), by mtimes;
# - make clean leaves no file of the tools' and tests' build in O, and keeps
#   the kernel trees; make distclean removes O;
# - make install DESTDIR=... with the kernel source missing
#   (KTRACE_KERNEL_TARBALL, which mkpatch.sh reads, names no file): the tools
#   are installed, the patch is skipped with a message.
. "$(dirname "$0")/dtrace-common.sh"

# mk DIR ARGS...: make in build directory DIR, its output in $TMP/make.log
mk() {
	local dir=$1
	shift
	make -s -j2 O="$dir" LDCONFIG=: DKMS=0 "$@" >"$TMP/make.log" 2>&1
}

# files DIR: every file under DIR, relative to it
files() {
	[ ! -d "$1" ] || (cd "$1" && find . -type f -o -type l | sed 's|^\./||' | sort)
}

# mtimes DIR: "path mtime" of every object under DIR/obj
mtimes() {
	(cd "$1" 2>/dev/null && find obj -name '*.o' -printf '%p %T@\n' | sort)
}

# ---- each tool on its own, from nothing ----
declare -A want=(
	[dtrace]="tools/dtrace"
	[ktrace]="tools/ktrace"
	[libktrace]="tools/libktrace.so.0 tools/libktrace.so tools/libktrace.a"
	[ktrace-run]="tools/ktrace-run"
)
# the files no other of the four makes
declare -A mine=(
	[dtrace]="tools/dtrace"
	[ktrace]="tools/ktrace"
	[libktrace]="tools/libktrace.so.0"
	[ktrace-run]="tools/ktrace-run"
)
for t in dtrace ktrace libktrace ktrace-run; do
	dir=$TMP/o-$t
	mk "$dir" "$t"
	rc=$?
	missing='' extra=''
	for f in ${want[$t]}; do
		[ -e "$dir/$f" ] || missing+=" $f"
	done
	for u in "${!mine[@]}"; do
		[ "$u" = "$t" ] || [ ! -e "$dir/${mine[$u]}" ] || extra+=" ${mine[$u]}"
	done
	[ $rc -eq 0 ] && [ -z "$missing" ] && [ -z "$extra" ]
	ok $? "make $t from nothing builds ${want[$t]}, nothing of the other tools" \
		"exit $rc; missing:$missing; also built:$extra; $(tail -n 5 "$TMP/make.log")"
	before=$(cd "$dir" 2>/dev/null && find . -type f -printf '%p %T@\n' | sort)
	mk "$dir" "$t"
	after=$(cd "$dir" 2>/dev/null && find . -type f -printf '%p %T@\n' | sort)
	[ -n "$before" ] && [ "$before" = "$after" ]
	ok $? "... a second make $t changes nothing" "$(diff <(echo "$before") <(echo "$after"))"
done
for t in dtrace ktrace ktrace-run; do
	out=$("$TMP/o-$t/tools/$t" --version 2>&1)
	ok $? "... the $t built runs: $out" "$out"
done
echo 'int main(void) { return 0; }' >"$TMP/p.c"
cc -o "$TMP/p" "$TMP/p.c" -L"$TMP/o-libktrace/tools" -lktrace >"$TMP/cc.log" 2>&1 &&
	LD_LIBRARY_PATH=$TMP/o-libktrace/tools KTRACE_USER_DIR=$TMP/pt "$TMP/p"
ok $? "... a program links with the libktrace built and runs" "$(head -n 5 "$TMP/cc.log")"

# ---- make help: the model is make's database of .PHONY targets ----
make -s O="$TMP/o-help" help >"$TMP/help" 2>&1
ok $? "make help runs" "$(head -n 5 "$TMP/help")"
make -pRrq O="$TMP/o-help" -f Makefile 2>/dev/null | sed -n 's/^\.PHONY: //p' | tr ' ' '\n' |
	sed '/^$/d' | sort -u >"$TMP/phony"
awk '{ print $1 }' "$TMP/help" | sort >"$TMP/listed"
uniq "$TMP/listed" | diff -u "$TMP/phony" - >"$TMP/help.diff"
ok $? "make help lists exactly the .PHONY targets (+ a target help lacks, - one not a target)" \
	"$(cat "$TMP/help.diff")"
[ -s "$TMP/help" ] && awk 'NF < 2 { bad = 1 } END { exit bad }' "$TMP/help" && [ -z "$(uniq -d "$TMP/listed")" ]
ok $? "... each once, each with a description" "$(awk 'NF < 2' "$TMP/help")"
missing=
for t in tools dtrace ktrace libktrace ktrace-run check check-host check-stock vmtest vmshell \
	kernel patch demo install uninstall clean distclean help; do
	grep -qx "$t" "$TMP/listed" || missing+=" $t"
done
[ -z "$missing" ]
ok $? "... among them the targets a user asks for" "missing:$missing"

# ---- header dependencies ----
# includers DIR HEADER: the objects under DIR/obj whose source includes
# HEADER, directly or not, as `cc -MM` with the object's flags says
includers() {
	local dir=$1 hdr=$2 o src flags
	(cd "$dir" 2>/dev/null && find obj -name '*.o' | sort) | while read -r o; do
		src=${o#obj/}
		src=${src#pic/}
		src=${src%.o}.c
		flags="-Iinclude/uapi -Ilib -I$(dirname "$src")"
		[[ $o == obj/pic/* ]] && flags+=" -Iuser"
		# shellcheck disable=SC2086,SC1003
		cc -MM $flags "$src" | tr -s ' \\' '\n' | grep -qx "$hdr" && echo "$o"
	done
}
dir=$TMP/o-hdr
mk "$dir" dtrace ktrace libktrace ktrace-run
ok $? "make the four tools in one build directory" "$(tail -n 5 "$TMP/make.log")"
for hdr in lib/pager.h dtrace/symbols.h user/libktrace.h; do
	includers "$dir" "$hdr" | sort >"$TMP/want.o"
	mtimes "$dir" >"$TMP/before"
	sleep 0.05
	touch "$hdr"
	mk "$dir" dtrace ktrace libktrace ktrace-run
	rc=$?
	mtimes "$dir" | join - "$TMP/before" | awk '$2 != $3 { print $1 }' | sort >"$TMP/got.o"
	diff -u "$TMP/want.o" "$TMP/got.o" >"$TMP/o.diff"
	[ $rc -eq 0 ] && [ -s "$TMP/want.o" ] && [ ! -s "$TMP/o.diff" ]
	ok $? "touch $hdr: exactly the $(wc -l <"$TMP/want.o") objects that include it are rebuilt" \
		"exit $rc; - not rebuilt, + rebuilt without including it: $(cat "$TMP/o.diff")"
done
# stale BIN OBJDIR...: the objects under OBJDIR... newer than BIN
stale() {
	local bin=$1
	shift
	(cd "$dir" 2>/dev/null && find "$@" -name '*.o' -newer "$bin")
}
out="$(stale tools/dtrace obj/dtrace obj/lib) $(stale tools/ktrace obj/ktrace obj/lib)
$(stale tools/ktrace-run obj/user obj/lib) $(stale tools/libktrace.so.0 obj/pic)"
[ -z "$(tr -d ' \n' <<<"$out")" ] && [ -x "$dir/tools/dtrace" ] && [ -x "$dir/tools/ktrace-run" ]
ok $? "... and each tool is linked again from its objects" "newer than the tool: $out"

# ---- make install without the kernel source (in the build directory above) ----
KTRACE_KERNEL_TARBALL=$TMP/no-such-linux-source.tar.xz mk "$dir" DESTDIR="$TMP/dest" \
	PREFIX=/usr install
rc=$?
[ $rc -eq 0 ] && [ -x "$TMP/dest/usr/bin/ktrace" ] && [ -x "$TMP/dest/usr/bin/dtrace" ] &&
	[ -x "$TMP/dest/usr/bin/ktrace-run" ] && [ -f "$TMP/dest/usr/lib/libktrace.a" ] &&
	[ ! -e "$TMP/dest/usr/share/ktrace" ] &&
	grep -q "no-such-linux-source.tar.xz: not found" "$TMP/make.log" &&
	grep -q "kernel patch (share/ktrace) is not installed" "$TMP/make.log"
ok $? "make install with the kernel source missing: the tools, no patch, a message" \
	"exit $rc; $(tail -n 5 "$TMP/make.log"); $(files "$TMP/dest" | head -n 30)"
KTRACE_KERNEL_TARBALL=$TMP/no-such-linux-source.tar.xz mk "$dir" DESTDIR="$TMP/dest" \
	PREFIX=/usr uninstall
rc=$?
left=$(files "$TMP/dest")
[ $rc -eq 0 ] && [ -z "$left" ]
ok $? "... and make uninstall removes every file of it" "exit $rc; $left"

# ---- make clean, make distclean ----
mk "$dir" dtrace-test-tools user-test-progs tools
ok $? "make tools dtrace-test-tools user-test-progs" "$(tail -n 5 "$TMP/make.log")"
mkdir -p "$dir/kernel-6.12-vm/arch" "$dir/patch/6.12" "$dir/stock"
echo kernel >"$dir/kernel-6.12-vm/arch/bzImage"
echo patch >"$dir/patch/6.12/ktrace.patch"
echo deb >"$dir/stock/x.deb"
printf '%s\n' kernel-6.12-vm/arch/bzImage patch/6.12/ktrace.patch stock/x.deb | sort >"$TMP/kept"
mk "$dir" clean
rc=$?
files "$dir" | diff -u "$TMP/kept" - >"$TMP/clean.diff"
[ $rc -eq 0 ] && [ ! -s "$TMP/clean.diff" ]
ok $? "make clean leaves no build output of the tools and tests; the kernel's is kept" \
	"exit $rc; $(head -n 20 "$TMP/clean.diff")"
mk "$dir" distclean
rc=$?
[ $rc -eq 0 ] && [ ! -e "$dir" ]
ok $? "make distclean removes O" "exit $rc; $(ls -A "$dir" 2>&1 | head)"
# on a copy of the makefiles, beside a file of someone else's: a clean that
# did remove O would remove only these
mkdir -p "$TMP/co"
git ls-files Makefile '*.mk' | tar -cf - -T - | tar -xf - -C "$TMP/co"
echo mine >"$TMP/other"
make -s -C "$TMP/co" O=.. clean >"$TMP/make.log" 2>&1
rc=$?
make -s -C "$TMP/co" O=. clean >>"$TMP/make.log" 2>&1
rc2=$?
[ $rc -ne 0 ] && [ $rc2 -ne 0 ] && [ -f "$TMP/co/Makefile" ] && [ -f "$TMP/co/lib/lib.mk" ] &&
	[ -f "$TMP/other" ] && grep -q 'holds the checkout' "$TMP/make.log"
ok $? "make clean O=. or O=.. (the checkout inside): refuses, removes nothing" \
	"exit $rc $rc2; $(cat "$TMP/make.log")"

done_testing
