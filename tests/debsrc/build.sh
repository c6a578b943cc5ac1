#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/debsrc/build.sh PACKAGE...: third-party C and C++ programs from
# Debian source packages, built with -O2 -g -finstrument-functions, for the
# call views' ground truth (tests/host/63-user-debsrc.sh, 96-user-threads-debsrc.sh);
# and uftrace's source, whose test programs and expected call trees
# tests/host/95-user-uftrace-suite.sh builds itself (printed: its tests/).
#
# Sources come from Debian's archive with `apt-get source`, through a
# sources list of our own under build/debsrc/apt (the system's apt
# configuration is not touched; the mirror is the one /etc/apt uses), and
# are kept in build/debsrc: a second run, or CI with build/ cached,
# downloads nothing.  Each program is built once into
# build/debsrc/PACKAGE/ (only what the test runs) and rebuilt only when
# this script changes.  Prints the path of each program; exit 77 when a
# source cannot be had (no network, no deb-src), 1 when a build fails.
# DEBSRC_PLAIN=1: built -O2 -g only (no call hooks), into
# build/debsrc/plain/PACKAGE/ (the probe tests, 98-probe-debsrc.sh).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$ROOT/${O:-build}/debsrc
CFLAGS_TRACE="-O2 -g -finstrument-functions"
B=$D			# where the programs are built
if [ -n "${DEBSRC_PLAIN:-}" ]; then
	CFLAGS_TRACE="-O2 -g"
	B=$D/plain
fi
mkdir -p "$D/apt/etc" "$D/apt/lists/partial" "$D/apt/cache/archives/partial"

# the mirror of the system's sources (deb822 or one-line), for deb-src
mirror() {
	local m
	m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{ print $2; exit }')
	[ -n "$m" ] || m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
		awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }')
	echo "${m:-http://deb.debian.org/debian}"
}

apt_opts() {
	echo "-o Dir::Etc::SourceList=$D/apt/etc/sources.list -o Dir::Etc::SourceParts=/dev/null" \
	     "-o Dir::State::Lists=$D/apt/lists -o Dir::Cache=$D/apt/cache" \
	     "-o APT::Sandbox::User=root -q"
}

# fetched PACKAGE: its .dsc and every file the .dsc lists are in $D
fetched() {
	local dsc
	dsc=$(ls "$D/$1"_*.dsc 2>/dev/null | tail -n 1)
	[ -n "$dsc" ] || return 1
	awk '/^Files:/ { f = 1; next } /^[^ ]/ { f = 0 } f && NF == 3 { print $3 }' "$dsc" |
		while read -r file; do [ -s "$D/$file" ] || exit 1; done
}

# fetch PACKAGE: its .dsc and files in $D (downloaded once)
fetch() {
	fetched "$1" && return 0
	if [ ! -s "$D/apt/etc/sources.list" ]; then
		. /etc/os-release
		echo "deb-src $(mirror) ${VERSION_CODENAME:-bookworm} main" >"$D/apt/etc/sources.list"
	fi
	ls "$D"/apt/lists/*Sources* >/dev/null 2>&1 ||
		apt-get $(apt_opts) update >"$D/apt/update.log" 2>&1 || return 77
	(cd "$D" && apt-get $(apt_opts) source --download-only "$1" >"$D/$1.fetch.log" 2>&1) &&
		fetched "$1" || return 77
}

# unpack PACKAGE: the source with Debian's patches applied, in $D/PACKAGE/src
unpack() {
	local dsc
	dsc=$(ls "$D/$1"_*.dsc | tail -n 1)
	rm -rf "$B/$1"
	mkdir -p "$B/$1"
	dpkg-source --no-check -x "$dsc" "$B/$1/src" >"$B/$1/unpack.log" 2>&1
}

# build PACKAGE: the program, into $B/PACKAGE/prog
build() {
	local p=$1 s=$B/$1/src
	case $p in
	lua5.4)	# the interpreter and its library in one program (Debian's
		# Makefile builds the library with libtool, which we do not need);
		# the header debian/rules writes, as it writes it
		printf '#define DEB_HOST_MULTIARCH "%s"\n' "$(gcc -print-multiarch)" \
			>"$s/src/lua5.4-deb-multiarch.h"
		gcc $CFLAGS_TRACE -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -o "$B/$p/prog" \
			$(ls "$s"/src/*.c | grep -v '/luac\.c$') -lm -ldl ;;
	bzip2)	# with its library linked in, not the system's libbz2.so
		make -C "$s" -j2 CFLAGS="$CFLAGS_TRACE -D_FILE_OFFSET_BITS=64" libbz2.a bzip2.o &&
		gcc -o "$B/$p/prog" "$s/bzip2.o" "$s/libbz2.a" ;;
	gzip)	# Debian patches configure.ac: keep the shipped configure, not autoreconf
		m="ACLOCAL=true AUTOCONF=true AUTOMAKE=true AUTOHEADER=true"
		(cd "$s" && ./configure -q CFLAGS="$CFLAGS_TRACE" $m && make -j2 -C lib $m && make -j2 $m version.h gzip) &&
		cp "$s/gzip" "$B/$p/prog" ;;
	lzip)	# C++: classes, references, a std::string or two
		(cd "$s" && ./configure CXXFLAGS="$CFLAGS_TRACE" && make -j2) &&
		cp "$s/lzip" "$B/$p/prog" ;;
	yaml-cpp) # C++: shared_ptr and unique_ptr members; the package's own
		# util/parse (reads YAML, writes it back through YAML::Emitter),
		# linked with the static library it builds (the tests and their
		# googletest not built)
		cmake -S "$s" -B "$s/build" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$CFLAGS_TRACE" \
			-DYAML_CPP_BUILD_TOOLS=ON -DYAML_CPP_BUILD_TESTS=OFF -DYAML_BUILD_SHARED_LIBS=OFF &&
		make -C "$s/build" -j2 yaml-cpp-parse &&
		cp "$s/build/util/parse" "$B/$p/prog" ;;
	pbzip2)	# C++, compressing blocks in N threads (-pN), with bzip2's libbz2.a
		# built above (instrumented too: the threads' calls are mostly its);
		# the headers of the C++ library instrumented as well (no
		# -finstrument-functions-exclude-file-list): std:: code in each thread
		[ -f "$B/bzip2/src/libbz2.a" ] || { echo "build bzip2 first: build.sh bzip2 pbzip2"; return 1; }
		g++ $CFLAGS_TRACE -pthread -D_LARGEFILE64_SOURCE -D_FILE_OFFSET_BITS=64 \
			-DUSE_STACKSIZE_CUSTOMIZATION -I"$B/bzip2/src" -o "$B/$p/prog" \
			"$s/pbzip2.cpp" "$s/BZ2StreamScanner.cpp" "$s/ErrorContext.cpp" \
			"$B/bzip2/src/libbz2.a" ;;
	uftrace) # nothing to build: its tests/ (s-*.c programs, t*.py expected trees)
		ln -s src/tests "$B/$p/prog" ;;
	*)	echo "debsrc: $p: no build recipe" >&2; return 1 ;;
	esac
}

stamp=$(cksum <"$0" | cut -d' ' -f1)
for p in "$@"; do
	if [ "$(cat "$B/$p/stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$B/$p/prog" ]; then
		fetch "$p" || { echo "debsrc: $p: cannot download its source (see $D)" >&2; exit 77; }
		unpack "$p" || { echo "debsrc: $p: dpkg-source failed: $B/$p/unpack.log" >&2; exit 1; }
		if ! build "$p" >"$B/$p/build.log" 2>&1; then
			echo "debsrc: $p: build failed: $B/$p/build.log" >&2
			tail -n 20 "$B/$p/build.log" >&2
			exit 1
		fi
		echo "$stamp" >"$B/$p/stamp"
	fi
	echo "$B/$p/prog"
done
