#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `ktrace -e sched -c 0 2>&1 | head -1`: the reader goes away while ktrace
# records with its own mask.  SIGPIPE must not kill ktrace before it puts
# the mask back (tracing would stay on for everyone); the command it runs
# still gets the SIGPIPE disposition ktrace was given.  Nor may the other
# signals whose default kills (SIGUSR1, SIGUSR2, SIGALRM; SIGQUIT too).
. "$(dirname "$0")/fakedev-common.sh"

fk -e 0
# stdout and stderr into a pipe whose read end is already closed
cat >closed.py <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=w)
print(p.returncode)
PY
krc=$(fk_env python3 closed.py "$KTRACE" -e sched -c 0 -d 0.3 -o p)
fk -s
check "stderr a closed pipe: ktrace is not killed by SIGPIPE (exit $krc)" '[ "$krc" = 0 ]'
check "... the mask is put back (0, tracing off)" 'has_out "0x00000000"'

# the command: default SIGPIPE again (dies of it, 141), as without ktrace
rc=$(fk_env python3 closed.py "$KTRACE" -q -c 0 -o c -- sh -c "sleep 0.2; echo x; echo alive >$T/cmd")
check "the command gets SIGPIPE's default back (killed by it: exit $rc)" \
	'[ "$rc" = 141 ] && [ ! -s "$T/cmd" ]'
# the other signals whose default would kill ktrace with the mask set
for sig in USR1 USR2 ALRM; do	# (QUIT: a shell starts a background job with it ignored)
	fk -e 0
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/dev" KTRACE_DEV="$T/dev" KTFAKE_STATE="$T/state" \
	    "$KTRACE" -q -e sched -c 0 -o q >/dev/null 2>&1 &
	pid=$!
	sleep 0.4
	kill -$sig $pid
	wait $pid
	krc=$?
	fk -s
	check "SIG$sig while recording: ktrace stops (exit $krc), the mask is put back" \
		'[ $krc -lt 128 ] && has_out "0x00000000"'
done
done_testing
