# SPDX-License-Identifier: GPL-2.0
# Sourced by the --send/--listen host tests: fakedev-common.sh (ktrace on a
# fake /dev/ktrace, $T, the TAP helpers), plus
#   collector_start [PORT]   ktrace --listen on 127.0.0.1 into $T/coll;
#                            $CPORT its port, $CPID its pid
#   collector_start_limited NOFILE DIR
#                            the same under ulimit -n NOFILE, into DIR
#   collector_wait           $CPORT from the port a collector started by
#                            hand (stderr into $T/coll.err) says it has
#   collector_stop           SIGTERM, waited for
#   sender NAME ARGS...      ktrace --send on a fake device of its own
#                            (NAME.dev, .state; the fake's counts in
#                            $T/NAME.stats at its exit), in the background,
#                            stderr in $T/NAME.err; its pid in $SPID
#   counts NAME [--prefix]   collect-count.py: the machine's files against
#                            the fake's counts (output in $T/NAME.count)
. "$(dirname "$0")/fakedev-common.sh"

COUNT="$ROOT/tests/host/collect-count.py"
# a sender killed on purpose leaves its default spool (TMPDIR/ktrace-spool.*)
export TMPDIR=$T

collector_wait() {
	for _ in $(seq 100); do
		CPORT=$(sed -n 's/.*listening on .* port \([0-9]*\),.*/\1/p' "$T/coll.err")
		[ -n "$CPORT" ] && return 0
		sleep 0.05
	done
	return 1
}

collector_start() {
	: >"$T/coll.err"
	"$KTRACE" --listen "127.0.0.1:${1:-0}" -o "$T/coll" 2>>"$T/coll.err" &
	CPID=$!
	collector_wait
}

collector_start_limited() {
	: >"$T/coll.err"
	(ulimit -n "$1"; exec "$KTRACE" --listen 127.0.0.1:0 -o "$2" 2>>"$T/coll.err") &
	CPID=$!
	collector_wait
}

collector_stop() {
	kill -TERM "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
}

sender() {
	local name=$1
	shift
	env LD_PRELOAD="$FAKE" KTFAKE_PATH="$T/$name.dev" KTRACE_DEV="$T/$name.dev" \
	    KTFAKE_STATE="$T/$name.state" KTFAKE_STATS="$T/$name.stats" \
	    timeout -k 2 60 "$KTRACE" --name "$name" "$@" 2>"$T/$name.err" &
	SPID=$!
}

counts() {
	python3 "$COUNT" "$T/coll/$1" "$T/$1.stats" $2 >"$T/$1.count" 2>&1
}
