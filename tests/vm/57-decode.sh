#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Decoded arguments on a real trace, run as root in the test VM (TAP):
# system call and errno names against calls whose result is known (cat of
# a missing file: openat returns -ENOENT), a timer function by the kernel
# symbol /proc/kallsyms has at that address, and the files ktrace saves for
# that (BASE.kallsyms, BASE.irqs) private to their owner.

NAME=decode
. "$(dirname "$0")/tap-common.sh"
has_outE() { grep -qE -- "$1" "$T/out"; }

"$KTRACE" -e syscall,timer -c all -o "$T/d" -- /bin/sh -c \
	'echo $$ >'"$T/pid"'; /bin/cat /nonexistent-ktrace-file 2>/dev/null; sleep 0.3' \
	>/dev/null 2>"$T/err"
rc=$?
check "ktrace -e syscall,timer -- a missing file's cat" '[ $rc -eq 1 ] || [ $rc -eq 0 ]'
check "the kernel's symbols and irqs saved beside the trace, mode 0600" \
	'[ "$(stat -c %a "$T/d.kallsyms")" = 600 ] && [ "$(stat -c %a "$T/d.irqs")" = 600 ]'
"$DTRACE" "$T"/d.cpu* >"$T/out" 2>"$T/err"
rc=$?
check "dtrace reads the trace" '[ $rc -eq 0 ] && [ -s "$T/out" ]'
check "cat's openat of the missing file returns -ENOENT" \
	'has_outE " cat-[0-9]+ +syscall:exit +syscall openat exit, return -ENOENT\$"'
check "system calls by name: execve, exit_group" \
	'has_outE "syscall execve entry" && has_outE "syscall exit_group entry"'
check "a successful return stays a number (close returns 0)" \
	'has_outE "syscall close exit, return 0\$"'

# the first timer with a kernel symbol, and its address printed raw
sym=$(sed -n 's/.*timer:expire .*function \([A-Za-z0-9_.]*\)+0x0$/\1/p' "$T/out" | head -n 1)
"$DTRACE" --raw -e timer "$T"/d.cpu* >"$T/raw" 2>"$T/err"
"$DTRACE" -e timer "$T"/d.cpu* >"$T/named" 2>>"$T/err"
line=$(grep -n "function $sym+0x0\$" "$T/named" | head -n 1 | cut -d: -f1)
addr=$(sed -n "${line:-1}s/.*function \([0-9a-f]*\)\$/\1/p" "$T/raw")
want=$(grep -i "^0*$addr [tTwW] " /proc/kallsyms | head -n 1 | cut -d' ' -f3)
check "a timer function is the kernel symbol at its address ($sym at $addr: $want)" \
	'[ -n "$sym" ] && [ -n "$addr" ] && [ "$sym" = "$want" ]'
done_testing
