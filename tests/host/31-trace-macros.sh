#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TRACE(), TRACE_ARGS() and TRACE64() from <linux/ktrace.h>: with tracing
# off no argument is evaluated, TRACE64's 64-bit value included; with
# CONFIG_KTRACE=n the arguments are still type-checked, so a site that would
# not build with ktrace does not build without it either.
. "$(dirname "$0")/dtrace-common.sh"
. tests/host/kshim.sh
make_kshim "$TMP/kshim"

# build NAME CFLAGS...: compile tests/host/trace-macros.c to TMP/NAME
build() {
	local name=$1
	shift
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
		-I"$TMP/kshim" "$@" -o "$TMP/$name" tests/host/trace-macros.c \
		>"$TMP/$name.cc" 2>&1
}

for config in ktrace noktrace; do
	flags=()
	[ $config = noktrace ] && flags=(-DKSHIM_NO_KTRACE)
	build $config "${flags[@]}"
	ok $? "$config: the sites build without a warning" "$(head -c 1500 "$TMP/$config.cc")"
	"$TMP/$config" >"$TMP/$config.out" 2>&1
	ok $? "$config: arguments evaluated only while traced" "$(cat "$TMP/$config.out")"
	build $config-bad "${flags[@]}" -DBAD_ARG
	[ $? -ne 0 ] && grep -q 'error: incompatible types' "$TMP/$config-bad.cc"
	ok $? "$config: a struct as an argument does not build" "$(head -c 1500 "$TMP/$config-bad.cc")"
done

done_testing
