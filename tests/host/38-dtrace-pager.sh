#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace's output to a terminal goes through a pager (lib/pager.c), as
# git's and perf's: $KTRACE_PAGER, else $PAGER, else less with LESS=FRX.
# Never into a pipe or a file, with -o or --no-pager, or with the pager
# "cat" or empty.  A pager that cannot run is a warning and the output
# goes to the terminal, complete; quitting the pager early ends dtrace
# quietly with status 0; dtrace exits after its pager.
#
# script(1) gives dtrace a terminal; the pagers are scripts that say they
# ran and keep what they read.
. "$(dirname "$0")/dtrace-common.sh"

if ! script -qec true /dev/null </dev/null >/dev/null 2>&1; then
	skip_all "script(1) from util-linux is not here"
fi

gen small -s 5 -c 2 -n 200
gen big -s 11 -c 4 -n 40000 -l 5
"$DTRACE" "$TMP"/small/t.* >"$TMP/want"	# a file: no pager
[ "$(wc -l <"$TMP/want")" -ge 400 ]
ok $? "the expected output, written to a file, has every event" "$(wc -l <"$TMP/want") lines"

mkdir "$TMP/bin"
CAT=$(command -v cat)	# the real one: TMP/bin has a fake cat
# pager NAME: a pager that logs "NAME ran LESS=... args" and keeps its input
pager() {
	cat >"$TMP/bin/$1" <<EOF
#!/bin/sh
echo "$1 ran LESS=\$LESS args=\$*" >>"$TMP/pager.log"
exec $CAT >"$TMP/paged"
EOF
	chmod +x "$TMP/bin/$1"
}
pager fakepager
pager otherpager
pager cat	# first in PATH: were "cat" run as a pager, it would say so
pager less
# on_tty ENV... -- ARGS...: dtrace ARGS on a terminal, with ENV (unset: -u);
# the terminal's text (less the \r) in TMP/tty, dtrace's status in rc
on_tty() {
	local envs=() cmd
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -f "$TMP/pager.log" "$TMP/paged"
	cmd="env -u KTRACE_PAGER -u PAGER -u LESS PATH=$TMP/bin:$PATH ${envs[*]} $DTRACE $*"
	timeout -k 5 60 script -qec "$cmd" /dev/null </dev/null | tr -d '\r' >"$TMP/tty"
	rc=${PIPESTATUS[0]}
}
ran() { [ -f "$TMP/pager.log" ] && grep -q "^$1 ran" "$TMP/pager.log"; }
no_pager() { [ ! -e "$TMP/pager.log" ]; }

on_tty PAGER=fakepager -- "$TMP"/small/t.*
[ $rc -eq 0 ] && ran fakepager && cmp -s "$TMP/paged" "$TMP/want" && ! grep -q sched: "$TMP/tty"
ok $? "a terminal: the output goes through \$PAGER, all of it, and only there" \
	"exit $rc; $(cat "$TMP/pager.log" 2>&1); $(head -n 3 "$TMP/tty")"
grep -q "LESS=FRX " "$TMP/pager.log"
ok $? "LESS not set: the pager gets LESS=FRX" "$(cat "$TMP/pager.log")"
on_tty PAGER=fakepager LESS=-S -- "$TMP"/small/t.*
grep -q "LESS=-S " "$TMP/pager.log"
ok $? "LESS set: left as it is" "$(cat "$TMP/pager.log")"

on_tty KTRACE_PAGER=otherpager PAGER=fakepager -- "$TMP"/small/t.*
[ $rc -eq 0 ] && ran otherpager && ! ran fakepager && cmp -s "$TMP/paged" "$TMP/want"
ok $? "KTRACE_PAGER wins over PAGER" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty KTRACE_PAGER= PAGER=fakepager -- "$TMP"/small/t.*
[ $rc -eq 0 ] && no_pager && cmp -s "$TMP/tty" "$TMP/want"
ok $? "KTRACE_PAGER empty: no pager (PAGER is not asked)" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty PAGER=cat -- "$TMP"/small/t.*
[ $rc -eq 0 ] && no_pager && cmp -s "$TMP/tty" "$TMP/want"
ok $? "PAGER=cat: no pager, straight to the terminal" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty -- "$TMP"/small/t.*
[ $rc -eq 0 ] && ran less && cmp -s "$TMP/paged" "$TMP/want"
ok $? "neither set: less" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty "PAGER='fakepager --one \"two words\"'" -- "$TMP"/small/t.*
[ $rc -eq 0 ] && grep -q "^fakepager ran .* args=--one two words$" "$TMP/pager.log" &&
	cmp -s "$TMP/paged" "$TMP/want"
ok $? "a pager with arguments runs through the shell" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"

on_tty PAGER=fakepager -- --no-pager "$TMP"/small/t.*
[ $rc -eq 0 ] && no_pager && cmp -s "$TMP/tty" "$TMP/want"
ok $? "--no-pager: straight to the terminal" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty PAGER=fakepager -- -o "$TMP/out" "$TMP"/small/t.*
[ $rc -eq 0 ] && no_pager && cmp -s "$TMP/out" "$TMP/want" && [ ! -s "$TMP/tty" ]
ok $? "-o FILE: no pager" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty PAGER=fakepager -- "$TMP"/small/t.* "| $CAT >$TMP/piped"
[ $rc -eq 0 ] && no_pager && cmp -s "$TMP/piped" "$TMP/want"
ok $? "a pipe: no pager" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"
on_tty PAGER=fakepager -- --format=ctf -o "$TMP/ctf" "$TMP"/small/t.*
[ $rc -eq 0 ] && no_pager && [ -f "$TMP/ctf/metadata" ]
ok $? "--format=ctf -o DIR: no pager" "exit $rc; $(cat "$TMP/pager.log" 2>&1)"

on_tty PAGER="$TMP/no/such/pager" -- "$TMP"/small/t.*
[ $rc -eq 0 ] &&
	[ "$(grep -c "^dtrace: warning: cannot run pager '$TMP/no/such/pager': No such file or directory$" \
		"$TMP/tty")" -eq 1 ] &&
	grep -v "^dtrace: warning: cannot run pager" "$TMP/tty" | cmp -s - "$TMP/want"
ok $? "a missing pager: one warning, the output complete on the terminal" \
	"exit $rc; $(head -n 2 "$TMP/tty")"

# quits after one line, before dtrace is done (40000 events, more than a pipe holds)
cat >"$TMP/bin/quitter" <<EOF
#!/bin/sh
head -n 1 >"$TMP/paged"
echo "quitter ran" >>"$TMP/pager.log"
EOF
chmod +x "$TMP/bin/quitter"
on_tty PAGER=quitter -- "$TMP"/big/t.*
[ $rc -eq 0 ] && ran quitter && [ "$(wc -l <"$TMP/paged")" -eq 1 ] && [ ! -s "$TMP/tty" ]
ok $? "the pager quits early: dtrace exits 0, says nothing" "exit $rc; $(head -n 3 "$TMP/tty")"
on_tty PAGER=quitter -- -j 1 "$TMP"/big/t.*
[ $rc -eq 0 ] && ran quitter && [ ! -s "$TMP/tty" ]
ok $? "... also without the formatting threads (-j 1)" "exit $rc; $(head -n 3 "$TMP/tty")"

# slow to finish: dtrace is still there when it does
cat >"$TMP/bin/slowpager" <<EOF
#!/bin/sh
$CAT >"$TMP/paged"
sleep 1
echo "slowpager ran" >>"$TMP/pager.log"
EOF
chmod +x "$TMP/bin/slowpager"
on_tty PAGER=slowpager -- "$TMP"/small/t.* "; test -e $TMP/pager.log && echo waited"
[ $rc -eq 0 ] && grep -qx waited "$TMP/tty" && cmp -s "$TMP/paged" "$TMP/want"
ok $? "dtrace exits after its pager" "exit $rc; $(head -n 3 "$TMP/tty")"

# messages go through the pager too where they would have gone to the
# terminal, or the pager's screen would hide them: the warning for a file
# whose last record is cut, found when it is reached
mkdir "$TMP/cut" && cp "$TMP"/small/t.* "$TMP/cut/" &&
	truncate -s -5 "$TMP/cut/t.cpu1"
on_tty PAGER=fakepager -- "$TMP"/cut/t.*
[ $rc -eq 0 ] && ran fakepager && [ "$(wc -l <"$TMP/paged")" -gt 100 ] &&
	grep -q "^dtrace: warning: .*t.cpu1: .*torn tail" "$TMP/paged" && [ ! -s "$TMP/tty" ]
ok $? "messages to the terminal go to the pager too" \
	"exit $rc; $(grep dtrace: "$TMP/paged" 2>&1); $(head -n 2 "$TMP/tty")"

# set-id: the environment of whoever runs it must not choose a program to
# run (root can make a copy setgid to another group; elsewhere: skipped)
if [ "$(id -u)" = 0 ] && cp "$DTRACE" "$TMP/sgid-dtrace" && cp "$(command -v id)" "$TMP/sgid-id" &&
   chgrp 65534 "$TMP/sgid-dtrace" "$TMP/sgid-id" && chmod 2755 "$TMP/sgid-dtrace" "$TMP/sgid-id" &&
   [ "$("$TMP/sgid-id" -g)" = 65534 ]; then
	DTRACE=$TMP/sgid-dtrace on_tty PAGER=fakepager -- "$TMP"/small/t.*
	[ $rc -eq 0 ] && no_pager && cmp -s "$TMP/tty" "$TMP/want"
	ok $? "set-id: no pager" "exit $rc; $(cat "$TMP/pager.log" 2>&1); $(head -n 2 "$TMP/tty")"
else
	skip "set-id: no pager" "not root, or $TMP is nosuid"
fi

done_testing
