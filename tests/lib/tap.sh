# SPDX-License-Identifier: GPL-2.0
# tests/lib/tap.sh: the TAP helpers of every shell test, sourced (host tests
# under bash or dash, the in-VM tests under busybox ash as /tests/lib/tap.sh,
# so POSIX sh only).  Results are numbered in $tap_n; $tap_failed counts
# the failures.
#
#   ok STATUS DESCRIPTION [DIAGNOSTIC]
#	"ok N - DESCRIPTION" when STATUS is 0; else "not ok N - DESCRIPTION"
#	and DIAGNOSTIC, each line as "#   LINE".  Returns 0.
#   check DESCRIPTION CONDITION
#	CONDITION is shell code, evaluated as it stands (first, so that $? in
#	it is the caller's); ok when it is true, else not ok with "exit $rc"
#	(the caller's last tool status) and the first 40 lines of the file
#	$TAP_ERR names (the tool's stderr), when it is set.  Returns CONDITION's status.
#   skip DESCRIPTION REASON
#	"ok N - DESCRIPTION # SKIP REASON"
#   skip_all REASON
#	"1..0 # SKIP REASON" and exit 0: nothing of this test can run here.
#   done_testing
#	the plan, "1..N"; false when a result was "not ok" (a test ends with
#	it, so that its exit status says so too).
#
# O is the build directory, as for make (O=build/asan): a host test runs
# the tools and programs of $ROOT/$O, never of build/ by name.

tap_n=0
tap_failed=0
O=${O:-build}

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
		[ -z "$3" ] || printf '%s\n' "$3" | sed 's/^/#   /'
	fi
	return 0
}

check() {
	eval "$2" && { ok 0 "$1"; return 0; }
	set -- "$1" $?
	ok 1 "$1" "exit ${rc:-?}${TAP_ERR:+; stderr:}"
	[ -z "$TAP_ERR" ] || sed -n '1,40s/^/#     /p' "$TAP_ERR" 2>/dev/null
	return "$2"
}

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}
