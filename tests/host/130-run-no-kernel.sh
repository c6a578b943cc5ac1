#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace and ktrace-run -e where the kernel has no ktrace (no /dev/ktrace, as
# on a stock kernel without ktrace.ko): each says what is missing and the
# command that fixes it (modprobe ktrace), ktrace-run before it runs the
# program, and neither blames the program's build ("none of its code was
# built with -finstrument-functions").  Ground truth: the program never ran
# (its marker file is absent), the device path is one that does not exist.
. "$(dirname "$0")/user-common.sh"

KTRACE=$ROOT/$O/tools/ktrace
dev=$TMP/nodev
KTRACE_DEV=$dev "$KTRACE" -s >/dev/null 2>"$TMP/err.k"
rc=$?
[ $rc -ne 0 ] && grep -qF "ktrace: $dev missing: the ktrace module is not loaded" "$TMP/err.k" &&
	grep -qF "modprobe ktrace" "$TMP/err.k"
ok $? "ktrace without the device: names it and modprobe ktrace" "rc $rc: $(cat "$TMP/err.k")"

KTRACE_DEV=$dev "$KTRACE_RUN" -e sched -o "$TMP/r" -- touch "$TMP/ran" >/dev/null 2>"$TMP/err.r"
rc=$?
[ $rc -ne 0 ] && grep -qF "ktrace-run: -e: $dev missing" "$TMP/err.r" &&
	grep -qF "modprobe ktrace" "$TMP/err.r"
ok $? "ktrace-run -e without the device: names it and modprobe ktrace" \
	"rc $rc: $(cat "$TMP/err.r")"
! grep -q "finstrument-functions" "$TMP/err.r"
ok $? "ktrace-run -e without the device: does not blame the program's build" "$(cat "$TMP/err.r")"
[ ! -e "$TMP/ran" ] && [ "$(wc -l <"$TMP/err.r")" -eq 1 ]
ok $? "ktrace-run -e without the device: one message, before the program runs" \
	"$(cat "$TMP/err.r")"

# without -e no device is needed: the program runs and is recorded
KTRACE_DEV=$dev "$KTRACE_RUN" -o "$TMP/u" -- "$UT/events" threads 1 10 >/dev/null 2>"$TMP/err.u"
rc=$?
[ $rc -eq 0 ] && ls "$TMP"/u/trace.pid* >/dev/null 2>&1
ok $? "ktrace-run without -e needs no device" "rc $rc: $(cat "$TMP/err.u")"
done_testing
