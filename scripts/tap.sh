# ktrace: shared by the test runners (sourced, not run).

msg() { echo "ktrace: $*"; }
die() { echo "ktrace: $*" >&2; exit 1; }

# tap_verdict FILE NAME STATUS: append a "not ok" line to a test's TAP file
# when the run itself failed: a non-zero exit (77 means skipped) or a timeout;
# else no result at all, no plan, or a plan that does not match the results.
tap_verdict() {
	local f=$1 name=$2 rc=$3 count plan
	count=$(grep -cE '^(not )?ok( |$)' "$f" || true)
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$f" | tail -n 1)
	case $rc in
	0) ;;
	77) return 0 ;;
	124 | 137 | 143) echo "not ok - $name timed out (status $rc)" >>"$f"; return 0 ;;
	*) echo "not ok - $name exited with status $rc" >>"$f"; return 0 ;;
	esac
	if [ "$plan" = 0 ]; then
		:
	elif [ "$count" -eq 0 ]; then
		echo "not ok - $name printed no TAP results" >>"$f"
	elif [ -z "$plan" ]; then
		echo "not ok - $name printed no plan (1..N)" >>"$f"
	elif [ "$plan" -ne "$count" ]; then
		echo "not ok - $name planned $plan tests but ran $count" >>"$f"
	fi
}

# tap_counts FILE...: "PASSED FAILED" over the given TAP files.  A "not ok"
# marked "# TODO" is an expected failure and does not count.
tap_counts() {
	cat "$@" /dev/null | awk '
		/^ok( |$)/ { pass++ }
		/^not ok( |$)/ && !/# *TODO/ { fail++ }
		END { printf "%d %d\n", pass, fail }'
}
