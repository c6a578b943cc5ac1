#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace --flight against another reader: it waits for it or gives up, and
# leaves the normal mode and mask behind, on the fake device
# (ktrace-cli-fakedev.c): KTFAKE_BUSY makes CPU 1 have a reader ktrace did
# not attach, which, as in the kernel, also keeps tracing from being turned
# on and the mode from changing in overwrite mode; KTFAKE_BUSY_TRIES makes
# it go after that many refusals.  Ground truth: the fake kernel's mode and
# mask (its KTFAKE_STATE file).
#   - a reader that goes within a second: ktrace waits for it, takes its
#     snapshots of both CPUs, exits 0, the normal mode and mask are back;
#   - one that stays: ktrace says which CPU and that the mode is put back
#     as it exits (the kernel's session does that), exit 1, not a crash.
. "$(dirname "$0")/fakedev-common.sh"

state() { cat "$T/state"; }

KTFAKE_BUSY=1 KTFAKE_BUSY_TRIES=30 fk --flight -b 64 -e sched -c 0,1 -o f -d 0.5
check "a reader that goes: exit 0 ($rc), snapshot 1 of both CPUs" \
	'[ $rc -eq 0 ] && has_err "snapshot 1: " && [ -s f.1.cpu0 ] && [ -s f.1.cpu1 ]'
read -r mask bufsz mode < <(state)
check "... the normal mode and tracing off again (state: $(state))" \
	'[ "$mode" = 0 ] && [ "$mask" = 0 ]'

KTFAKE_BUSY=1 fk --flight -b 64 -e sched -c 0,1 -o g -d 0.5
check "a reader that stays: exit 1, the CPU and what happens named" \
	'[ $rc -eq 1 ] && has_err "cpu 1: attaching a reader: Device or resource busy (another reader holds it)" &&
	 has_err "it is put back as ktrace exits"'
printf '0 64 0\n' >"$T/state"

done_testing
